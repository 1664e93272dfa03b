#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Letter {
    code: char,
}
fn main() {}
