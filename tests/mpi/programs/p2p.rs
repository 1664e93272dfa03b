//! Blocking send/recv: every type, several sizes, status, ANY_SOURCE, and bad input.

use crate::checks::Checks;
use crate::for_each_type;
use crate::values::{TestValue, values};
use ferrompi::ErrorKind;
use ferrompi::{
    ANY_SOURCE, ANY_TAG, Communicator, Error, ErrorClass, Mpi, Partition, Source, TypedBlock,
    TypedPartition, scope,
};

/// Ring exchange with `send` and `recv`: rank r sends `len` values seeded by r to r+1 and checks
/// what r-1 sent. Rank 0 sends first and everyone else receives first, so blocking sends of any
/// size cannot deadlock. Needs two ranks: a blocking send to oneself may wait for the receive
/// (MPICH's always does), so one rank uses `ring_sendrecv` only.
fn ring<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks, len: usize) {
    let (rank, size) = (comm.rank(), comm.size());
    if size == 1 {
        return;
    }
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let tag = (len % 1000) as i32;
    let out: Vec<T> = values(rank as u64, len);
    let mut inbox = vec![T::default(); len];
    let status = if rank == 0 {
        t.okay(comm.send(&out, next, tag), "send");
        t.okay(comm.recv(&mut inbox, prev, tag), "recv")
    } else {
        let status = t.okay(comm.recv(&mut inbox, prev, tag), "recv");
        t.okay(comm.send(&out, next, tag), "send");
        status
    };
    let name = std::any::type_name::<T>();
    t.eq(
        inbox,
        values(prev as u64, len),
        format!("{name} x {len} from {prev}"),
    );
    t.eq(status.source(), prev, "status source");
    t.eq(status.tag(), tag, "status tag");
    t.eq_ok(status.count::<T>(), len, format!("status count of {name}"));
}

/// The same ring with `sendrecv`, which works with any number of ranks, including one.
fn ring_sendrecv<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks, len: usize) {
    let (rank, size) = (comm.rank(), comm.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let out: Vec<T> = values(rank as u64 + 50, len);
    let mut inbox = vec![T::default(); len];
    let status = t.okay(
        comm.sendrecv(&out, next, 5, &mut inbox, prev, 5),
        "sendrecv",
    );
    let name = std::any::type_name::<T>();
    t.eq(
        inbox,
        values(prev as u64 + 50, len),
        format!("sendrecv {name} x {len} from {prev}"),
    );
    t.eq(
        (status.source(), status.tag()),
        (prev, 5),
        "sendrecv status",
    );
    t.eq_ok(status.count::<T>(), len, "sendrecv count");
}

fn all_sizes<T: TestValue>(comm: &Communicator<'_>, t: &mut Checks) {
    for len in [0, 1, 1000] {
        ring::<T>(comm, t, len);
        ring_sendrecv::<T>(comm, t, len);
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    for_each_type!(all_sizes(&world, t));
    ring::<u8>(&world, t, 1 << 20);
    ring::<f64>(&world, t, 1 << 17);
    ring_sendrecv::<u8>(&world, t, 1 << 20);

    // Fan-in with ANY_SOURCE / ANY_TAG: every other rank sends its rank, tagged with it. On its
    // own communicator, so that the wildcards cannot match later stages' messages.
    let fan_in = t.okay(world.dup(), "dup");
    if rank == 0 {
        let mut seen = Vec::new();
        for _ in 1..size {
            let mut v = [0i32];
            let status = t.okay(fan_in.recv(&mut v, ANY_SOURCE, ANY_TAG), "recv any");
            t.eq(status.source(), v[0], "source matches payload");
            t.eq(status.tag(), v[0], "tag matches payload");
            seen.push(v[0]);
        }
        seen.sort();
        t.eq(
            seen,
            (1..size).collect::<Vec<_>>(),
            "one message from every other rank",
        );
    } else {
        t.okay(fan_in.send(&[rank], 0, rank), "send to 0");
    }

    // PROC_NULL: completes at once with nothing.
    let mut nothing = [0u8; 4];
    let status = t.okay(
        world.recv(&mut nothing, Source::ProcNull, 0),
        "recv from PROC_NULL",
    );
    t.eq_ok(status.count::<u8>(), 0, "PROC_NULL count");
    t.ok(status.is_proc_null(), "PROC_NULL status");

    // Bad input: each returns a specific error and the job continues.
    let one = [1u8];
    let mut buf = [0u8; 1];
    let bad_rank =
        |e: &Error, r: i32| matches!(e.kind(), ErrorKind::InvalidRank { rank, .. } if *rank == r);
    t.err(
        world.send(&one, size, 0),
        |e| bad_rank(e, size),
        "send to rank == size",
    );
    t.err(
        world.send(&one, -1, 0),
        |e| bad_rank(e, -1),
        "send to rank -1",
    );
    t.err(
        world.recv(&mut buf, size + 5, 0),
        |e| bad_rank(e, size + 5),
        "recv from bad rank",
    );
    t.err(
        world.send(&one, 0, -1),
        |e| matches!(e.kind(), ErrorKind::InvalidTag { tag: -1, .. }),
        "negative tag",
    );
    // sendrecv: each argument's error, the send's before the receive's (checked out of line).
    let role = |e: &Error, r: i32, want: &str| {
        matches!(e.kind(), ErrorKind::InvalidRank { rank, role, operation: "sendrecv", .. }
            if *rank == r && *role == want)
    };
    t.err(
        world.sendrecv(&one, size, 0, &mut buf, 0, 0),
        |e| role(e, size, "destination"),
        "sendrecv to a bad rank",
    );
    t.err(
        world.sendrecv(&one, 0, 0, &mut buf, -2, 0),
        |e| role(e, -2, "source"),
        "sendrecv from a bad rank",
    );
    t.err(
        world.sendrecv(&one, -3, 0, &mut buf, -4, 0),
        |e| role(e, -3, "destination"),
        "sendrecv, both ranks bad: the send's error",
    );
    t.err(
        world.sendrecv(&one, 0, -1, &mut buf, 0, -6),
        |e| matches!(e.kind(), ErrorKind::InvalidTag { tag: -1, .. }),
        "sendrecv, both tags bad: the send's",
    );
    t.err(
        world.sendrecv(&one, 0, 0, &mut buf, 0, -6),
        |e| matches!(e.kind(), ErrorKind::InvalidTag { tag: -6, .. }),
        "sendrecv, a bad receive tag",
    );
    // Tags above 32767 (the least MPI_TAG_UB an MPI may have) up to this MPI's are valid.
    for tag in [32768, mpi.tag_ub()].into_iter().filter(|&t| t > 32767) {
        let mut got = [0u8];
        t.okay(
            world.sendrecv(&[7u8], world.rank(), tag, &mut got, world.rank(), tag),
            format!("sendrecv to self, tag {tag}"),
        );
        t.eq(got, [7], "a large valid tag delivers");
    }
    if let Some(over) = mpi.tag_ub().checked_add(1) {
        t.err(
            world.send(&one, 0, over),
            |e| matches!(e.kind(), ErrorKind::InvalidTag { .. }),
            "tag over MPI_TAG_UB",
        );
        t.err(
            world.recv(&mut buf, 0, over),
            |e| matches!(e.kind(), ErrorKind::InvalidTag { .. }),
            "recv tag over UB",
        );
    }
    // Persistent collectives of more than i32::MAX elements: set up (one spanning datatype,
    // and a span op for the reduction, kept by the request) and freed, never started here
    // (the large_count program starts them). Calloc'd and never touched, so no memory is used.
    let overflow = |e: &Error| matches!(e.kind(), ErrorKind::CountOverflow { .. });
    let per_rank = i32::MAX as usize + 1;
    t.okay(
        world
            .allreduce_init_in_place(vec![0u8; per_rank], ferrompi::Sum)
            .map(drop),
        "allreduce_init of more than i32::MAX elements",
    );
    t.okay(
        world.bcast_init(vec![0u8; per_rank], 0).map(drop),
        "bcast_init of more than i32::MAX elements",
    );
    // One-byte blocks placed beyond i32::MAX: a displacement MPI's int cannot hold, so the
    // nonblocking large-count path (MPI_Ialltoallw with placed datatypes). Only the last pages
    // of the buffer are touched.
    let far: Vec<usize> = (0..size as usize).map(|r| per_rank + r).collect();
    let far_blocks = Partition::<u8>::from_counts_and_displacements(&vec![1; size as usize], &far)
        .expect("partition");
    let mut far_recv = vec![0u8; far_blocks.extent()];
    let mine = [rank as u8 + 1];
    t.okay(
        scope(|s| {
            world
                .iallgatherv(s, &mine, &mut far_recv, &far_blocks)?
                .wait()
        }),
        "nonblocking v-collective with a displacement over i32::MAX",
    );
    let expected: Vec<u8> = (1..=size as u8).collect();
    t.eq(
        &far_recv[per_rank..],
        &expected[..],
        "blocks placed beyond i32::MAX",
    );
    drop(far_recv);
    // What has no large-count path yet: persistent v-collectives with such a partition.
    t.err(
        world
            .allgatherv_init(vec![1u8], vec![0u8; far_blocks.extent()], &far_blocks)
            .map(drop),
        overflow,
        "allgatherv_init with a displacement over i32::MAX",
    );

    // alltoallw with one-byte blocks beyond i32::MAX: each rank substitutes placed datatypes
    // on its own (the call stays MPI_Alltoallw). Rank i sends 16 i + j to rank j.
    let n = size as usize;
    let me = rank as usize;
    let far_typed = TypedPartition::new(
        &(0..n)
            .map(|r| TypedBlock::of::<u8>(1, per_rank + r))
            .collect::<Vec<_>>(),
    )
    .expect("typed partition");
    let mut out = vec![0u8; far_typed.extent()];
    for j in 0..n {
        out[per_rank + j] = (16 * me + j) as u8;
    }
    let expected: Vec<u8> = (0..n).map(|i| (16 * i + me) as u8).collect();
    let mut back = vec![0u8; far_typed.extent()];
    t.okay(
        world.alltoallw(&out, &far_typed, &mut back, &far_typed),
        "alltoallw with offsets over i32::MAX",
    );
    t.eq(&back[per_rank..], &expected[..], "alltoallw content");
    back[per_rank..].fill(0);
    t.okay(
        scope(|s| {
            world
                .ialltoallw(s, &out, &far_typed, &mut back, &far_typed)?
                .wait()
        }),
        "ialltoallw with offsets over i32::MAX",
    );
    t.eq(&back[per_rank..], &expected[..], "ialltoallw content");
    drop(back);
    t.okay(
        world.alltoallw_in_place(&mut out, &far_typed),
        "alltoallw in place with offsets over i32::MAX",
    );
    t.eq(
        &out[per_rank..],
        &expected[..],
        "alltoallw in place content",
    );
    drop(out);

    // ialltoallv with one-byte blocks beyond i32::MAX: MPI_Ialltoallv_c where the MPI has it;
    // without, partitions that differ per rank leave no common substitute (see `comm::large`).
    let mut back = vec![0u8; far_blocks.extent()];
    let out: Vec<u8> = (0..n).map(|j| (16 * me + j) as u8).collect();
    let packed = Partition::<u8>::uniform(n, 1).expect("partition");
    let result = scope(|s| {
        world
            .ialltoallv(s, &out, &packed, &mut back, &far_blocks)?
            .wait()
    });
    if ferrompi::LARGE_COUNT_CALLS {
        t.okay(result, "ialltoallv with offsets over i32::MAX");
        t.eq(&back[per_rank..], &expected[..], "ialltoallv content");
    } else {
        t.err(
            result,
            overflow,
            "ialltoallv with offsets over i32::MAX (no _c calls)",
        );
    }
    drop(back);

    // A receive buffer too small: the truncation class, then the job goes on.
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    const CANARY: u64 = 0xDEAD_BEEF;
    let mut backing = [CANARY; 6];
    let result = world.sendrecv(&[rank as u64; 8], next, 9, &mut backing[..3], prev, 9);
    t.truncated(result, size == 1, "short receive buffer");
    t.eq(
        &backing[3..],
        &[CANARY; 3][..],
        "nothing written past the buffer",
    );
    if size > 1 {
        t.okay(world.send(&[rank as u64; 8], next, 9), "send 8");
        let mut backing = [CANARY; 6];
        let e = world
            .recv(&mut backing[..3], prev, 9)
            .expect_err("short buffer");
        t.eq(
            e.class(),
            Some(ErrorClass::Truncate),
            "short receive buffer, recv",
        );
        t.eq(
            &backing[3..],
            &[CANARY; 3][..],
            "nothing written past the buffer, recv",
        );
    }
    ring::<i64>(&world, t, 16);
    ring_sendrecv::<i64>(&world, t, 16);

    // bool values sent as arbitrary bytes arrive as valid bools.
    let bytes = [0u8, 1, 2, 255];
    let mut bools = [false; 4];
    // The type mismatch is erroneous MPI, but must not be UB in Rust.
    let _ = world.sendrecv(&bytes, next, 10, &mut bools, prev, 10);
    t.eq(
        bools.map(u8::from),
        [0, 1, 1, 1],
        "bytes received as bool are valid bools",
    );
}
