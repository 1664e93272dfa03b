#[derive(ferrompi::Equivalence, Clone, Copy)]
#[repr(C, packed)]
struct Record {
    tag: u8,
    value: f64,
}
fn main() {}
