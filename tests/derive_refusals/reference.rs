#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Borrowing {
    value: &'static f64,
}
fn main() {}
