#[derive(ferrompi::Equivalence, Clone, Copy)]
#[equivalence(packed)]
struct Point {
    x: f64,
}
fn main() {}
