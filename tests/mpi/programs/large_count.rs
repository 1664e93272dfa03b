//! Counts above i32::MAX, through MPI-4's `_c` calls on MPICH and derived datatypes, chunks,
//! span ops and `MPI_Alltoallw` on Open MPI, with the same API: send/recv, ssend, sendrecv,
//! bcast, ibcast, allreduce, isend/irecv, gather (a block per rank of i32::MAX + 9 bytes),
//! gatherv and iscatterv (a partition with such a block), iallreduce, scan, reduce_scatter,
//! ireduce_scatter, and persistent allreduce and bcast. Run with two ranks only: it needs up
//! to about 8.6 GB on rank 0 and 6.5 GB on rank 1 (the ireduce_scatter), and some minutes.

use crate::checks::Checks;
use ferrompi::{BitXor, Mpi, Partition, Sum};

const N: usize = i32::MAX as usize + 9;

/// Positions to check: every MiB, both ends, and around the chunk boundaries of the fallback.
fn samples() -> impl Iterator<Item = usize> {
    (0..N).step_by(1 << 20).chain([
        1,
        (1 << 30) - 1,
        1 << 30,
        (1 << 31) - 1,
        1 << 31,
        N - 2,
        N - 1,
    ])
}

/// Values below 128, so the doubling allreduce below never overflows: integer overflow in
/// MPI_SUM wraps in MPICH but saturates in Open MPI 4.1's AVX kernels (open-mpi/ompi#8045).
fn pattern(i: usize) -> u8 {
    (i % 101) as u8
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let rank = world.rank();
    if world.size() != 2 {
        t.ok(false, "large_count runs with exactly 2 ranks");
        return;
    }
    let motif: Vec<u8> = (0..101).map(|i| i as u8).collect();
    let mut buf = vec![0u8; N];

    // send/recv: rank 0 sends the pattern, rank 1 receives it.
    if rank == 0 {
        for chunk in buf.chunks_mut(101) {
            chunk.copy_from_slice(&motif[..chunk.len()]);
        }
        t.okay(world.send(&buf, 1, 1), "send of i32::MAX + 9 bytes");
    } else {
        let status = t.okay(world.recv(&mut buf, 0, 1), "recv of i32::MAX + 9 bytes");
        t.eq_ok(status.count::<u8>(), N, "status count above i32::MAX");
        t.ok(samples().all(|i| buf[i] == pattern(i)), "received content");
    }

    // ssend back, and a sendrecv swap into a second buffer (both ranks hold the pattern now).
    let peer = 1 - rank;
    if rank == 1 {
        t.okay(world.ssend(&buf, 0, 2), "ssend of i32::MAX + 9 bytes");
    } else {
        buf[N - 1] = 0;
        t.okay(world.recv(&mut buf, 1, 2), "recv of the ssend");
        t.eq(buf[N - 1], pattern(N - 1), "ssend content at the end");
    }
    let mut other = vec![0u8; N];
    let status = t.okay(
        world.sendrecv(&buf, peer, 3, &mut other, peer, 3),
        "sendrecv of i32::MAX + 9 bytes",
    );
    t.eq_ok(status.count::<u8>(), N, "sendrecv status count");
    t.ok(
        samples().all(|i| other[i] == pattern(i)),
        "sendrecv content",
    );
    drop(other);

    // bcast from rank 1, which marks a few positions first.
    if rank == 1 {
        for i in [0, 1 << 30, N - 1] {
            buf[i] = 120;
        }
    }
    t.okay(world.bcast(&mut buf, 1), "bcast of i32::MAX + 9 bytes");
    t.ok(
        buf[0] == 120 && buf[1 << 30] == 120 && buf[N - 1] == 120,
        "bcast marks arrived",
    );
    t.ok(
        samples()
            .filter(|&i| i != 0 && i != 1 << 30 && i != N - 1)
            .all(|i| buf[i] == pattern(i)),
        "bcast content",
    );

    // ibcast from rank 0, which marks its first and last bytes back; rank 1 zeroes them.
    buf[0] = if rank == 0 { 0 } else { 9 };
    buf[N - 1] = if rank == 0 { pattern(N - 1) } else { 9 };
    let done = ferrompi::scope(|s| world.ibcast(s, &mut buf, 0)?.wait());
    t.okay(done, "ibcast of i32::MAX + 9 bytes");
    t.ok(
        buf[0] == 0 && buf[N - 1] == pattern(N - 1) && buf[1 << 30] == 120,
        "ibcast content",
    );

    // allreduce in place: both ranks hold the same data, so the sum doubles it (mod 256).
    let before: Vec<(usize, u8)> = samples().map(|i| (i, buf[i])).collect();
    t.okay(
        world.allreduce_in_place(&mut buf, Sum),
        "allreduce of i32::MAX + 9 bytes",
    );
    let wrong: Vec<(usize, u8, u8)> = before
        .iter()
        .filter(|&&(i, v)| buf[i] != v.wrapping_add(v))
        .map(|&(i, v)| (i, v, buf[i]))
        .take(5)
        .collect();
    t.ok(
        wrong.is_empty(),
        format!("allreduce content; first wrong (index, before, after): {wrong:?}"),
    );

    // isend/irecv: rank 1 marks its last byte and sends everything to rank 0.
    if rank == 1 {
        buf[N - 1] = 7;
    }
    let sent: Vec<(usize, u8)> = samples().map(|i| (i, buf[i])).collect();
    let done = ferrompi::scope(|s| -> ferrompi::Result<ferrompi::Status> {
        if rank == 1 {
            world.isend(s, &buf, 0, 4)?.wait()
        } else {
            buf[N - 1] = 0;
            world.irecv(s, &mut buf, 1, 4)?.wait()
        }
    });
    let status = t.okay(done, "isend/irecv of i32::MAX + 9 bytes");
    if rank == 0 {
        t.eq_ok(status.count::<u8>(), N, "irecv status count");
        let same = sent.iter().all(|&(i, v)| buf[i] == v || i == N - 1);
        t.ok(same, "irecv content (equal data but the marker)");
        t.eq(buf[N - 1], 7, "irecv got the marked last byte");
    }

    // gather: one block of N bytes per rank, so 2N at the root. Both ranks now hold the same.
    let mut all = if rank == 0 {
        vec![0u8; 2 * N]
    } else {
        Vec::new()
    };
    t.okay(
        world.gather(&buf, &mut all, 0),
        "gather of blocks of i32::MAX + 9 bytes",
    );
    if rank == 0 {
        let ok = samples().all(|i| all[i] == buf[i] && all[N + i] == buf[i]);
        t.ok(ok, "gather content of both blocks");
    }
    drop(all);

    // gatherv with a partition [1, N]: an offset and a block beyond i32::MAX.
    let blocks = t.okay(Partition::<u8>::from_counts(&[1, N]), "large partition");
    let mut all = if rank == 0 {
        vec![0u8; N + 1]
    } else {
        Vec::new()
    };
    let mine: &[u8] = if rank == 0 { &buf[..1] } else { &buf };
    t.okay(
        world.gatherv(mine, &mut all, &blocks, 0),
        "gatherv of a large partition",
    );
    if rank == 0 {
        let ok = all[0] == buf[0] && samples().all(|i| all[1 + i] == buf[i]);
        t.ok(ok, "gatherv content");
    }

    // iscatterv back with the same partition: rank 1 gets its block again over marked bytes.
    let (first, last) = (buf[0], buf[N - 1]);
    if rank == 1 {
        buf[0] = first.wrapping_add(1);
        buf[N - 1] = last.wrapping_add(1);
    }
    let mut one = [0u8; 1];
    let done = ferrompi::scope(|s| {
        let mine: &mut [u8] = if rank == 0 { &mut one } else { &mut buf };
        world.iscatterv(s, &all, mine, &blocks, 0)?.wait()
    });
    t.okay(done, "iscatterv of a large partition");
    if rank == 0 {
        t.eq(one[0], first, "iscatterv content at the root");
    } else {
        t.ok(buf[0] == first && buf[N - 1] == last, "iscatterv content");
    }
    drop(all);

    // iallreduce with XOR over equal data: zeros everywhere; rank 1 marks two bytes first.
    if rank == 1 {
        buf[1 << 30] ^= 3;
        buf[N - 1] ^= 5;
    }
    let done = ferrompi::scope(|s| world.iallreduce_in_place(s, &mut buf, BitXor)?.wait());
    t.okay(done, "iallreduce of i32::MAX + 9 bytes");
    t.ok(
        buf[1 << 30] == 3 && buf[N - 1] == 5,
        "iallreduce content at the marks",
    );
    t.ok(
        samples().all(|i| buf[i] == 0 || i == 1 << 30 || i == N - 1),
        "iallreduce content (XOR of equal data)",
    );
    // Both ranks hold the same data again: the sampled values, and rank 1's marker at the end.
    for &(i, v) in &sent {
        buf[i] = v;
    }
    buf[N - 1] = 7;

    // scan with XOR over equal data: rank 0 keeps its data, rank 1 gets zeros.
    t.okay(
        world.scan_in_place(&mut buf, BitXor),
        "scan of i32::MAX + 9 bytes",
    );
    if rank == 1 {
        t.ok(
            samples().all(|i| buf[i] == 0),
            "scan content (XOR of equal data)",
        );
    } else {
        t.ok(
            sent.iter().all(|&(i, v)| buf[i] == v || i == N - 1),
            "scan keeps rank 0's data",
        );
    }

    // reduce_scatter in place with blocks [N - 1, 1] and XOR against rank 1's zeros: rank 0
    // keeps its first N - 1 bytes, rank 1 gets rank 0's last byte (the marker 7) at its start.
    let blocks = t.okay(
        Partition::<u8>::from_counts(&[N - 1, 1]),
        "partition [N - 1, 1]",
    );
    t.okay(
        world.reduce_scatter_in_place(&mut buf, &blocks, BitXor),
        "reduce_scatter with a block of i32::MAX + 8 bytes",
    );
    if rank == 0 {
        t.ok(
            sent.iter().all(|&(i, v)| buf[i] == v || i == N - 1),
            "reduce_scatter content at rank 0",
        );
    } else {
        t.eq(buf[0], 7, "reduce_scatter content at rank 1");
    }

    // ireduce_scatter of the same blocks from `buf` (a temporary as large as the input, copied
    // out on completion). Rank 1 makes its buffer [7, 0, 0, …, 0] (its last byte held its own
    // block's result): rank 0 gets its bytes with the first one XORed with 7, rank 1 gets rank
    // 0's last byte (7) XOR 0.
    if rank == 1 {
        buf[N - 1] = 0;
    }
    let expected: Vec<(usize, u8)> = samples()
        .filter(|&i| i < N - 1)
        .map(|i| (i, if i == 0 { buf[i] ^ 7 } else { buf[i] }))
        .collect();
    let mut mine = vec![0u8; blocks.len_of(rank as usize)];
    let done = ferrompi::scope(|s| {
        world
            .ireduce_scatter(s, &buf, &mut mine, &blocks, BitXor)?
            .wait()
    });
    t.okay(done, "ireduce_scatter with a block of i32::MAX + 8 bytes");
    if rank == 0 {
        let ok = expected.iter().all(|&(i, v)| mine[i] == v);
        t.ok(ok, "ireduce_scatter content at rank 0");
    } else {
        t.eq(mine[0], 7, "ireduce_scatter content at rank 1");
    }
    drop(mine);

    // Persistent allreduce (XOR, in place) and bcast owning `buf`, each started twice; the
    // sampled positions are set on one rank and zero on the other, so XOR gives them to both.
    let mine_first = if rank == 0 { pattern } else { |_| 0 };
    for i in samples() {
        buf[i] = mine_first(i);
    }
    let mut xor = t.okay(
        world.allreduce_init_in_place(buf, BitXor),
        "allreduce_init of i32::MAX + 9 bytes",
    );
    for round in 0..2u8 {
        let to_share = (rank == 0) == (round == 0);
        for i in samples() {
            xor.buffer_mut()[i] = if to_share {
                pattern(i).wrapping_add(round)
            } else {
                0
            };
        }
        t.okay(
            xor.start().and_then(|a| a.wait()),
            "persistent allreduce of i32::MAX + 9 bytes",
        );
        t.ok(
            samples().all(|i| xor.buffer()[i] == pattern(i).wrapping_add(round)),
            format!("persistent allreduce content, round {round}"),
        );
    }
    let buf = t.okay(xor.into_buffer(), "the persistent allreduce's buffer back");
    let mut cast = t.okay(world.bcast_init(buf, 0), "bcast_init of i32::MAX + 9 bytes");
    for round in 0..2u8 {
        if rank == 0 {
            cast.buffer_mut()[0] = round;
            cast.buffer_mut()[N - 1] = 99 + round;
        }
        t.okay(
            cast.start().and_then(|a| a.wait()),
            "persistent bcast of i32::MAX + 9 bytes",
        );
        let got = (cast.buffer()[0], cast.buffer()[N - 1]);
        t.eq(got, (round, 99 + round), "persistent bcast content");
    }
}
