// Elementwise needs a struct with no padding: 8 bytes of fields in 16.
#[derive(ferrompi::Equivalence, Clone, Copy)]
#[equivalence(elementwise)]
#[repr(C, align(16))]
struct Aligned {
    value: f64,
}
fn main() {}
