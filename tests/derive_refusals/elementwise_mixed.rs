// Elementwise needs every field of one element type.
#[derive(ferrompi::Equivalence, Clone, Copy)]
#[equivalence(elementwise)]
struct Sample {
    value: f64,
    count: u32,
}
fn main() {}
