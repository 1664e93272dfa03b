use ferrompi::op::Sum;
#[derive(ferrompi::Equivalence, Clone, Copy)]
struct Sample {
    value: f64,
    count: u32,
}
fn main() -> ferrompi::Result<()> {
    let mpi = ferrompi::Mpi::init()?;
    let world = mpi.world();
    let mine = [Sample { value: 1.0, count: 1 }];
    let mut total = [Sample { value: 0.0, count: 0 }];
    // A predefined reduction is not defined on a struct of mixed fields: use a UserOp.
    world.allreduce(&mine, &mut total, Sum)
}
