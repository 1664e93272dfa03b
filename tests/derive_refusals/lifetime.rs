#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Window<'a> {
    data: [f64; 2],
    _marker: std::marker::PhantomData<&'a ()>,
}
fn main() {}
