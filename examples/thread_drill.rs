//! The program `tools/drills.sh threads` runs: threads calling MPI for a while at one thread
//! level (`FERROMPI_DRILL_LEVEL`: `single`, `funneled`, `serialized` or `multiple`), every result
//! checked.
//!
//! - At `serialized` and `multiple`, each of 4 threads has a communicator of its own (a `dup` of
//!   the world) and loops: an `iallreduce` and a ring exchange (`isend` + `irecv`), each tested
//!   until complete (`MPI_Test` never blocks, so at `serialized` the gate's lock is held for one
//!   test at a time and no thread waits inside MPI for another's turn).
//! - At `single` and `funneled`, the main thread loops the same on the world while 4 other
//!   threads try calls of every kind (a barrier, an allreduce, a send, a `dup`, a nonblocking
//!   start): each must be refused with `WrongThread`, and none may succeed.
//!
//! `FERROMPI_DRILL_SECONDS` is how long (10); run with the watchdog on (`FERROMPI_WATCHDOG`) so
//! that a hang ends the job. Rank 0 prints the rounds, the refusals and the wrong results; a
//! wrong result or a call that should have been refused is an `Err` from `main`.
//!
//! ```sh
//! FERROMPI_WATCHDOG=20s FERROMPI_DRILL_LEVEL=multiple mpirun -n 2 target/debug/examples/thread_drill
//! ```

mod drill;

use ferrompi::{Communicator, Error, ErrorKind, Mpi, Sum, ThreadLevel};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const THREADS: usize = 4;

/// One round on `comm`: an iallreduce and a ring exchange, tested until complete; returns
/// whether both results were right.
fn round(comm: &Communicator<'_>, i: u64) -> Result<bool, Error> {
    let (rank, size) = (comm.rank(), comm.size());
    let mut total = [0u64];
    let mine = [i + rank as u64];
    let mut got = [0u64];
    let prev = (rank + size - 1) % size;
    ferrompi::scope(|s| -> Result<(), Error> {
        let mut sum = comm.iallreduce(s, &mine, &mut total, Sum)?;
        let mut recv = comm.irecv(s, &mut got, prev, 7)?;
        let mut send = comm.isend(s, &mine, (rank + 1) % size, 7)?;
        while sum.test()?.is_none() {}
        while recv.test()?.is_none() {}
        while send.test()?.is_none() {}
        Ok(())
    })?;
    let n = size as u64;
    let expected = i * n + n * (n - 1) / 2;
    Ok(total[0] == expected && got[0] == i + prev as u64)
}

/// Whether every rank of `comm` wants another round (an `iallreduce` of `more`, tested until
/// complete: at `serialized` a blocking collective could wait inside MPI, holding the gate's
/// lock, for a rank whose thread waits for that lock).
fn all_want_more(comm: &Communicator<'_>, more: bool) -> Result<bool, Error> {
    let (mine, mut all) = ([u8::from(more)], [0u8]);
    ferrompi::scope(|s| -> Result<(), Error> {
        let mut min = comm.iallreduce(s, &mine, &mut all, ferrompi::Min)?;
        while min.test()?.is_none() {}
        Ok(())
    })?;
    Ok(all[0] == 1)
}

fn main() -> Result<(), Error> {
    let level = match std::env::var("FERROMPI_DRILL_LEVEL").as_deref() {
        Ok("single") => ThreadLevel::Single,
        Ok("funneled") => ThreadLevel::Funneled,
        Ok("serialized") => ThreadLevel::Serialized,
        Ok("multiple") | Err(_) => ThreadLevel::Multiple,
        Ok(other) => {
            panic!("FERROMPI_DRILL_LEVEL={other}: single, funneled, serialized or multiple")
        }
    };
    let seconds: f64 = drill::setting("FERROMPI_DRILL_SECONDS", 10.0);
    let mpi = Mpi::builder().thread_level(level).init()?;
    let world = mpi.world();
    let provided = mpi.thread_level();
    if provided < level {
        // A drill that drilled nothing must not pass.
        return Err(drill::failed(
            "thread_drill",
            format!("{level:?} asked, MPI provides only {provided:?}: nothing to drill"),
        ));
    }
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let rounds = AtomicU64::new(0);
    let bad = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    let allowed = AtomicU64::new(0);
    if provided >= ThreadLevel::Serialized {
        let comms = (0..THREADS)
            .map(|_| world.dup())
            .collect::<Result<Vec<_>, _>>()?;
        // Every rank runs the same number of rounds on each communicator: they agree after each
        // round whether all want another.
        std::thread::scope(|threads| -> Result<(), Error> {
            let runs: Vec<_> = comms
                .iter()
                .map(|comm| {
                    let (rounds, bad) = (&rounds, &bad);
                    threads.spawn(move || -> Result<(), Error> {
                        let mut i = 0u64;
                        loop {
                            if !all_want_more(comm, Instant::now() < until)? {
                                return Ok(());
                            }
                            if !round(comm, i)? {
                                bad.fetch_add(1, Ordering::Relaxed);
                            }
                            rounds.fetch_add(1, Ordering::Relaxed);
                            i += 1;
                        }
                    })
                })
                .collect();
            for run in runs {
                run.join().expect("a drill thread panicked")?;
            }
            Ok(())
        })?;
    } else {
        let done = AtomicBool::new(false);
        std::thread::scope(|threads| -> Result<(), Error> {
            for _ in 0..THREADS {
                threads.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        let mut total = [0u64];
                        let tries = [
                            world.barrier().err(),
                            world.allreduce(&[1u64], &mut total, Sum).err(),
                            world.send(&[1u8], world.rank(), 3).err(),
                            world.dup().err(),
                            ferrompi::scope(|s| world.ibarrier(s).map(drop)).err(),
                        ];
                        for outcome in tries {
                            match outcome {
                                Some(e) if matches!(e.kind(), ErrorKind::WrongThread { .. }) => {
                                    refused.fetch_add(1, Ordering::Relaxed)
                                }
                                _ => allowed.fetch_add(1, Ordering::Relaxed),
                            };
                        }
                    }
                });
            }
            let mut i = 0u64;
            let result = loop {
                match all_want_more(&world, Instant::now() < until) {
                    Ok(true) => {}
                    Ok(false) => break Ok(()),
                    Err(e) => break Err(e),
                }
                match round(&world, i) {
                    Ok(true) => {}
                    Ok(false) => {
                        bad.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => break Err(e),
                }
                rounds.fetch_add(1, Ordering::Relaxed);
                i += 1;
            };
            done.store(true, Ordering::Relaxed);
            result
        })?;
    }
    let counts = [
        rounds.load(Ordering::Relaxed),
        bad.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
        allowed.load(Ordering::Relaxed),
    ];
    let mut sums = [0u64; 4];
    world.allreduce(&counts, &mut sums, Sum)?;
    if world.rank() == 0 {
        println!(
            "{level:?} ({} ranks, {THREADS} threads, {seconds} s): {} rounds, {} wrong; {} calls from other threads refused, {} let through",
            world.size(),
            sums[0],
            sums[1],
            sums[2],
            sums[3]
        );
    }
    if sums[1] != 0 || sums[3] != 0 {
        return Err(drill::failed(
            "thread_drill",
            format!(
                "{} wrong results, {} calls let through that should have been refused",
                sums[1], sums[3]
            ),
        ));
    }
    Ok(())
}
