#[derive(ferrompi::Equivalence, Clone, Copy)]
union Either {
    int: i32,
    float: f32,
}
fn main() {}
