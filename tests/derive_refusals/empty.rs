#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Nothing;
fn main() {}
