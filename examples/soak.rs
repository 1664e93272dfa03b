//! The program `tools/drills.sh soak` runs: long loops of the operations a long job repeats,
//! watching the process's memory. Each workload runs a tenth of its rounds to warm up (MPI's
//! pools and caches fill there), then the rest; the resident memory (`VmRSS`) it gained after
//! the warm-up must stay under a bound, and every round's result is checked.
//!
//! | workload | rounds (scale 1) |
//! |---|---|
//! | a persistent `allreduce` started and waited | 1 000 000 |
//! | `dup` and free of the world | 1 000 000 |
//! | a batch of 16 `isend` + 16 `irecv` to and from neighbours, waited as a set | 1 000 000 |
//! | a user operation made, used in an `allreduce`, freed | 1 000 000 |
//! | a shared window of 1 KiB per rank allocated, written, read by a neighbour, freed | 100 000 |
//!
//! `FERROMPI_SOAK_SCALE` scales every count (`0.01` for a short soak); `FERROMPI_SOAK_BOUND_KIB`
//! is the bound (256). Rank 0 prints one line per workload; a growth over the bound is an
//! `Err` from `main`, which ends the job with a non-zero code.
//!
//! ```sh
//! FERROMPI_SOAK_SCALE=0.01 mpirun -n 2 target/debug/examples/soak
//! ```

mod drill;

use ferrompi::{Communicator, Error, Mpi, RequestSet, RequestStorage, SharedWindow, Sum, UserOp};
use std::time::Instant;

/// The resident memory of this process, in KiB (`VmRSS` of `/proc/self/status`).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// A workload's failed check, as an error that ends the job.
fn wrong(workload: &str, what: String) -> Error {
    drill::failed("soak", format!("{workload}: {what}"))
}

/// Runs `round` `rounds` times (a tenth first, to warm up) and returns the growth of the
/// largest resident memory over the ranks after the warm-up, in KiB, and the seconds the rest
/// took.
fn soak(
    world: &Communicator<'_>,
    rounds: u64,
    mut round: impl FnMut(u64) -> Result<(), Error>,
) -> Result<(i64, f64), Error> {
    let warm = (rounds / 10).max(1);
    for i in 0..warm {
        round(i)?;
    }
    world.barrier()?;
    let before = resident_kib();
    let start = Instant::now();
    for i in warm..rounds.max(warm) {
        round(i)?;
    }
    world.barrier()?;
    let seconds = start.elapsed().as_secs_f64();
    let growth = resident_kib() as i64 - before as i64;
    let mut largest = [0i64];
    world.allreduce(&[growth], &mut largest, ferrompi::Max)?;
    Ok((largest[0], seconds))
}

fn main() -> Result<(), Error> {
    let scale: f64 = drill::setting("FERROMPI_SOAK_SCALE", 1.0);
    let bound: i64 = drill::setting("FERROMPI_SOAK_BOUND_KIB", 256);
    let rounds = |full: f64| ((full * scale) as u64).max(10);
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let n = f64::from(size);
    let mut failed = Vec::new();
    let mut report = |name: &str, rounds: u64, (growth, seconds): (i64, f64)| {
        if rank == 0 {
            let measured = rounds - (rounds / 10).max(1);
            println!(
                "{name:<44} {rounds:>9} rounds {seconds:>7.2} s  {:>7.2} us/round  resident {growth:+} KiB",
                seconds * 1e6 / measured.max(1) as f64
            );
        }
        if growth > bound {
            failed.push(format!("{name}: {growth} KiB > {bound} KiB"));
        }
    };

    let count = rounds(1e6);
    let mut persistent = world.allreduce_init(vec![0.0f64; 1], vec![0.0f64; 1], Sum)?;
    let result = soak(&world, count, |i| {
        persistent.send_mut()[0] = (i % 7) as f64;
        persistent.start()?.wait()?;
        let expected = (i % 7) as f64 * n;
        match persistent.recv()[0] {
            got if got == expected => Ok(()),
            got => Err(wrong(
                "persistent allreduce",
                format!("{got} != {expected}"),
            )),
        }
    })?;
    report("persistent allreduce (start + wait)", count, result);
    drop(persistent);

    let count = rounds(1e6);
    let result = soak(&world, count, |_| {
        let dup = world.dup()?;
        match dup.size() {
            s if s == size => dup.free(),
            s => Err(wrong("dup", format!("size {s} != {size}"))),
        }
    })?;
    report("dup + free", count, result);

    let count = rounds(1e6);
    let mut storage = RequestStorage::with_capacity(32);
    let mut got = vec![0u64; 16];
    let mut sent = vec![0u64; 16];
    let result = soak(&world, count, |i| {
        for (k, value) in sent.iter_mut().enumerate() {
            *value = i * 16 + k as u64;
        }
        ferrompi::scope(|s| -> Result<(), Error> {
            let mut set = RequestSet::with_storage(s, &mut storage);
            for (k, slot) in got.chunks_mut(1).enumerate() {
                set.push(world.irecv(s, slot, prev, k as i32)?);
            }
            for (k, value) in sent.chunks(1).enumerate() {
                set.push(world.isend(s, value, next, k as i32)?);
            }
            set.wait_all()
        })?;
        match got == sent {
            true => Ok(()),
            false => Err(wrong("isend/irecv", format!("round {i}: {got:?}"))),
        }
    })?;
    report("16 isend + 16 irecv, waited as a set", count, result);

    let count = rounds(1e6);
    let result = soak(&world, count, |_| {
        let largest = UserOp::<i64>::commutative(&mpi, |input, inout| {
            for (a, b) in input.iter().zip(inout.iter_mut()) {
                *b = (*b).max(*a);
            }
        })?;
        let mut top = [0i64];
        world.allreduce(&[i64::from(rank)], &mut top, &largest)?;
        match top[0] {
            t if t == i64::from(size - 1) => Ok(()),
            t => Err(wrong("user operation", format!("{t}"))),
        }
    })?;
    report("user operation made, used, freed", count, result);

    let count = rounds(1e5);
    let node = world.split_shared(rank)?;
    let (node_rank, node_size) = (node.rank(), node.size());
    let result = soak(&world, count, |i| {
        let mut window = SharedWindow::<u64>::allocate(&node, 128)?;
        window.write()?.local().fill(i * 1000 + node_rank as u64);
        let peer = (node_rank + 1) % node_size;
        let seen = window.read()?.segment(peer).map_or(u64::MAX, |s| s[127]);
        window.free()?;
        match seen == i * 1000 + peer as u64 {
            true => Ok(()),
            false => Err(wrong("shared window", format!("round {i}: {seen}"))),
        }
    })?;
    report(
        "shared window (1 KiB) allocated, used, freed",
        count,
        result,
    );

    if failed.is_empty() {
        Ok(())
    } else {
        Err(wrong("memory grew", failed.join("; ")))
    }
}
