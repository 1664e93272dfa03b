//! Communicator management: dup, split, split_type (opting out too), compare, names, create, free.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Comparison, Mpi, SplitType};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let mut raw_rank = -1;
    // SAFETY: valid communicator; writes one int.
    unsafe { ferrompi::ffi::MPI_Comm_rank(world.as_raw(), &mut raw_rank) };
    t.eq(rank, raw_rank, "cached rank matches MPI_Comm_rank");

    // dup: same group, new context.
    let dup = t.okay(world.dup(), "dup");
    t.eq((dup.rank(), dup.size()), (rank, size), "dup rank/size");
    t.eq_ok(world.compare(&dup), Comparison::Congruent, "world vs dup");
    t.eq_ok(
        world.compare(&world),
        Comparison::Identical,
        "world vs world",
    );
    let self_cmp = t.okay(world.compare(&mpi.self_comm()), "compare");
    let want = if size == 1 {
        Comparison::Congruent
    } else {
        Comparison::Unequal
    };
    t.eq(self_cmp, want, "world vs self");

    // split by parity, in reverse rank order.
    let parity = t
        .okay(world.split(Some(rank % 2), -rank), "split")
        .expect("member");
    let same: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).collect();
    t.eq(parity.size(), same.len() as i32, "parity size");
    let higher = same.iter().filter(|&&r| r > rank).count() as i32;
    t.eq(parity.rank(), higher, "reverse key order");
    if size > 2 {
        t.eq_ok(
            parity.compare(&world),
            Comparison::Unequal,
            "parity vs world",
        );
    }

    // split leaving rank 0 out.
    let color = if rank == 0 { None } else { Some(7) };
    let rest = t.okay(world.split(color, rank), "split with undefined color");
    t.eq(rest.is_none(), rank == 0, "rank 0 gets no communicator");
    if let Some(rest) = &rest {
        t.eq(
            (rest.rank(), rest.size()),
            (rank - 1, size - 1),
            "rest rank/size",
        );
    }
    t.err(
        world.split(Some(-3), 0),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "negative color",
    );
    // Rank 0 alone passes a negative color: it gets the error, and the others their part
    // (rank 0 left out of it), none left waiting in the split.
    let split = world.split(Some(if rank == 0 { -1 } else { 5 }), rank);
    if rank == 0 {
        t.err(
            split,
            |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
            "one rank's negative color",
        );
    } else {
        let part = t
            .okay(split, "split beside a negative color")
            .expect("a part");
        t.eq(part.size(), size - 1, "the part without rank 0");
    }

    // Shared-memory split: every rank of this test is on one node.
    let node = t.okay(world.split_shared(rank), "split_shared");
    t.eq(
        (node.rank(), node.size()),
        (rank, size),
        "node communicator of a one-node job",
    );
    let mut buf = [rank];
    t.okay(node.bcast(&mut buf, 0), "bcast on the node communicator");
    t.eq(buf[0], 0, "bcast on node communicator");

    // split_type with MPI_UNDEFINED: the last rank opts out, the others split by node.
    let opt_in = (rank != size - 1 || size == 1).then_some(SplitType::Shared);
    let part = t.okay(world.split_type(opt_in, rank), "split_type opting out");
    match part {
        Some(part) => t.eq(
            (opt_in.is_some(), part.size()),
            (true, size.max(2) - 1),
            "the ranks that opted in",
        ),
        None => t.ok(opt_in.is_none(), "only the rank that opted out gets None"),
    }

    // Names.
    t.okay(dup.set_name("solver-comm"), "set_name");
    t.eq_ok(dup.name(), "solver-comm".to_string(), "name round trip");
    t.err(
        dup.set_name(&"x".repeat(1000)),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "long name",
    );
    t.err(
        dup.set_name("a\0b"),
        |e| matches!(e.kind(), ErrorKind::InvalidArgument { .. }),
        "NUL in name",
    );

    // create / create_from_group: the even ranks.
    let evens: Vec<i32> = (0..size).step_by(2).collect();
    let odds: Vec<i32> = (1..size).step_by(2).collect();
    let group = t.okay(world.group(), "group");
    let even_group = t.okay(group.incl(&evens), "incl evens");
    let created = t.okay(world.create(&even_group), "create");
    t.eq(
        created.is_some(),
        rank % 2 == 0,
        "create gives members a communicator",
    );
    if let Some(c) = &created {
        t.eq(
            (c.rank(), c.size()),
            (rank / 2, evens.len() as i32),
            "created rank/size",
        );
    }
    let odd_group = t.okay(group.incl(&odds), "incl odds");
    let (mine, other) = if rank % 2 == 0 {
        (&even_group, &odd_group)
    } else {
        (&odd_group, &even_group)
    };
    let from_group = t.okay(world.create_from_group(mine, 11), "create_from_group");
    t.eq(from_group.rank(), rank / 2, "create_from_group rank");
    t.err(
        world.create_from_group(other, 11),
        |e| matches!(e.kind(), ErrorKind::NotInGroup { .. }),
        "non-member",
    );
    t.err(
        world.create_from_group(mine, -1),
        |e| matches!(e.kind(), ErrorKind::InvalidTag { .. }),
        "bad tag",
    );

    // Explicit frees report success; predefined communicators are never freed.
    t.okay(from_group.free(), "free created communicator");
    t.okay(dup.free(), "free dup");
    t.okay(
        mpi.world().free(),
        "free of the predefined world is a no-op",
    );
    t.okay(world.barrier(), "world still works");
}
