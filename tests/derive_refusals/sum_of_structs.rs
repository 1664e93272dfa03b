use ferrompi::op::Sum;
#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Point {
    x: f64,
    y: f64,
}
fn main() -> ferrompi::Result<()> {
    let mpi = ferrompi::Mpi::init()?;
    let world = mpi.world();
    let mine = [Point { x: 1.0, y: 2.0 }];
    let mut total = [Point { x: 0.0, y: 0.0 }];
    // A predefined reduction is not defined on a struct: use a UserOp.
    world.allreduce(&mine, &mut total, Sum)
}
