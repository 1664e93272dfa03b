//! Counts above i32::MAX: send/recv, ssend, sendrecv, bcast and allreduce of i32::MAX + 9 bytes,
//! through MPI-4's
//! `_c` calls on MPICH and derived datatypes / chunks on Open MPI, with the same API. Run with
//! two ranks only: it needs about 2 GiB per rank and some seconds.

use crate::checks::Checks;
use ferrompi::{Mpi, Sum};

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
}
