//! Semantics the established MPI test suites (mpi4py's, MPICH's) check, where the review found
//! ferrompi wrong (issue "Correctness against the established MPI test suites…").

use crate::checks::Checks;
use ferrompi::{Mpi, Partition, TypedBlock, TypedPartition};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    zero_length_exchanges_are_not_aliased(&world, t);
    overlapping_send_blocks(&world, t);
    overlapping_typed_send_blocks(&world, t);
}

/// The same for `alltoallw`'s typed partitions: one block of two `f64` sent to every peer,
/// blocking, nonblocking and persistent; overlapping receive blocks are refused on every rank.
fn overlapping_typed_send_blocks(world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let size = usize::try_from(world.size()).unwrap();
    let rank = f64::from(world.rank());
    let same = t.okay(
        TypedPartition::new(&vec![TypedBlock::of::<f64>(2, 0); size]),
        "a typed partition of one shared block",
    );
    let recv_blocks: Vec<TypedBlock> = (0..size)
        .map(|i| TypedBlock::of::<f64>(2, 16 * i))
        .collect();
    let recv_blocks = t.okay(TypedPartition::new(&recv_blocks), "receive blocks");
    let send: Vec<u8> = [rank, rank + 0.5]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let want: Vec<f64> = (0..world.size())
        .flat_map(|r| [f64::from(r), f64::from(r) + 0.5])
        .collect();
    let as_f64 = |bytes: &[u8]| -> Vec<f64> {
        bytes
            .chunks(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    };
    let mut recv = vec![0u8; 16 * size];
    t.okay(
        world.alltoallw(&send, &same, &mut recv, &recv_blocks),
        "alltoallw of one block to all",
    );
    t.eq(as_f64(&recv), want.clone(), "alltoallw result");
    let mut recv = vec![0u8; 16 * size];
    let done = ferrompi::scope(|s| {
        world
            .ialltoallw(s, &send, &same, &mut recv, &recv_blocks)?
            .wait()
    });
    t.okay(done, "ialltoallw of one block to all");
    t.eq(as_f64(&recv), want.clone(), "ialltoallw result");
    let mut persistent = t.okay(
        world.alltoallw_init(send.clone(), &same, vec![0u8; 16 * size], &recv_blocks),
        "alltoallw_init of one block to all",
    );
    t.okay(
        persistent.start().and_then(|a| a.wait()),
        "persistent alltoallw",
    );
    t.eq(as_f64(persistent.recv()), want, "alltoallw_init result");
    if size > 1 {
        let mut recv = vec![0u8; 16];
        t.err(
            world.alltoallw(&send.repeat(size), &recv_blocks, &mut recv, &same),
            |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidArgument { .. }),
            "alltoallw into overlapping blocks",
        );
        t.err(
            world.alltoallw_in_place(&mut [0u8; 16], &same),
            |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidArgument { .. }),
            "alltoallw in place over overlapping blocks",
        );
    }
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
        world.scatterv(&[7, 8], &mut got, &same, root),
        "scatterv of one block to all",
    );
    t.eq(got, [7, 8], "scatterv result");
    // Receiving into overlapping blocks would write values twice: refused, on every rank.
    if size > 1 {
        let mut recv = vec![0; 2];
        t.err(
            world.alltoallv(&send.repeat(size), &recv_blocks, &mut recv, &same),
            |e| matches!(e.kind(), ferrompi::ErrorKind::InvalidArgument { .. }),
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
