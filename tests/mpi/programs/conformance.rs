//! Semantics the established MPI test suites (mpi4py's, MPICH's) check, where the review found
//! ferrompi wrong (issue "Correctness against the established MPI test suites…").

use crate::checks::Checks;
use ferrompi::{Mpi, Partition, TypedBlock, TypedPartition};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    zero_length_exchanges_are_not_aliased(&world, t);
}

/// Empty send and receive buffers of `alltoallv`/`ialltoallv`/`alltoallw`: MPICH refused them
/// ("Buffers must not be aliased") because every empty slice mapped to one static address.
fn zero_length_exchanges_are_not_aliased(world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let size = usize::try_from(world.size()).unwrap();
    let empty = t.okay(Partition::<f64>::uniform(size, 0), "empty partition");
    let (send, mut recv): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    t.okay(
        world.alltoallv(&send, &empty, &mut recv, &empty),
        "alltoallv of nothing",
    );
    let done = ferrompi::scope(|s| {
        world
            .ialltoallv(s, &send, &empty, &mut recv, &empty)?
            .wait()
    });
    t.okay(done, "ialltoallv of nothing");
    let none = t.okay(
        TypedPartition::new(&vec![TypedBlock::of::<f64>(0, 0); size]),
        "empty typed partition",
    );
    let (bytes, mut into): (Vec<u8>, Vec<u8>) = (Vec::new(), Vec::new());
    t.okay(
        world.alltoallw(&bytes, &none, &mut into, &none),
        "alltoallw of nothing",
    );
}
