#[derive(ferrompi::Equivalence, Clone, Copy)]
enum Phase {
    Solid,
    Liquid,
}
fn main() {}
