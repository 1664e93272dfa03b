#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Pointing {
    next: *const u8,
}
fn main() {}
