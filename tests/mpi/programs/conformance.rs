//! Semantics the established MPI test suites (mpi4py's, MPICH's) check, where the review found
//! ferrompi wrong (issue "Correctness against the established MPI test suites…").

use crate::checks::Checks;
use ferrompi::{Mpi, Partition, TypedBlock, TypedPartition};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    zero_length_exchanges_are_not_aliased(&world, t);
    overlapping_send_blocks(&world, t);
}

/// One block sent to every peer (all send displacements 0), as MPICH's and mpi4py's suites do:
/// MPI forbids only locations *written* twice, so only receive partitions may not overlap.
fn overlapping_send_blocks(world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let (rank, size) = (world.rank(), usize::try_from(world.size()).unwrap());
    let same = t.okay(
        Partition::<i32>::from_counts_and_displacements(&vec![2; size], &vec![0; size]),
        "a partition of one shared block",
    );
    let recv_blocks = t.okay(Partition::<i32>::uniform(size, 2), "receive blocks");
    let send = [rank, rank * 10];
    let want: Vec<i32> = (0..world.size()).flat_map(|r| [r, r * 10]).collect();
    let mut recv = vec![0; 2 * size];
    t.okay(
        world.alltoallv(&send, &same, &mut recv, &recv_blocks),
        "alltoallv of one block to all",
    );
    t.eq(&recv, &want, "alltoallv result");
    let mut recv = vec![0; 2 * size];
    let done = ferrompi::scope(|s| {
        world
            .ialltoallv(s, &send, &same, &mut recv, &recv_blocks)?
            .wait()
    });
    t.okay(done, "ialltoallv of one block to all");
    t.eq(&recv, &want, "ialltoallv result");
    let mut persistent = t.okay(
        world.alltoallv_init(send.to_vec(), &same, vec![0; 2 * size], &recv_blocks),
        "alltoallv_init of one block to all",
    );
    t.okay(
        persistent.start().and_then(|a| a.wait()),
        "persistent alltoallv",
    );
    t.eq(persistent.recv(), &want[..], "alltoallv_init result");
    // scatterv: the root sends the same block to every rank.
    let root = world.size() - 1;
    let mut got = [0i32; 2];
    t.okay(
        world.scatterv(&[7, 8], &same, &mut got, root),
        "scatterv of one block to all",
    );
    t.eq(got, [7, 8], "scatterv result");
    // Receiving into overlapping blocks would write values twice: refused, on every rank.
    if size > 1 {
        let mut recv = vec![0; 2];
        t.err(
            world.alltoallv(&send.repeat(size), &recv_blocks, &mut recv, &same),
            |e| matches!(e, ferrompi::Error::InvalidArgument { .. }),
            "alltoallv into overlapping blocks",
        );
    }
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
