//! The watchdog with two threads calling MPI at once (`ThreadLevel::Multiple`): each thread has
//! a slot of its own, so neither hides the other's calls, and a healthy job passes with a limit
//! of 3 s while both threads run collectives and then compute longer than the limit.

use crate::checks::Checks;
use ferrompi::{Mpi, Sum, ThreadLevel};
use std::time::Duration;

pub fn main() -> Result<(), ferrompi::Error> {
    let mpi = Mpi::builder()
        .thread_level(ThreadLevel::Multiple)
        .watchdog(Duration::from_secs(3))
        .init()?;
    let world = mpi.world();
    let mut t = Checks::new("watchdog_threads", world.rank(), world.size());
    // Open MPI and MPICH provide it (built with thread support, as every MPI of the suite is).
    t.eq(
        mpi.thread_level(),
        ThreadLevel::Multiple,
        "MPI_THREAD_MULTIPLE provided",
    );
    if mpi.thread_level() < ThreadLevel::Multiple {
        t.report();
        return Ok(());
    }
    let comms = [world.dup()?, world.dup()?];
    let size = world.size() as u64;
    let totals = std::thread::scope(|s| {
        let workers: Vec<_> = comms
            .iter()
            .enumerate()
            .map(|(k, comm)| {
                s.spawn(move || -> Result<u64, ferrompi::Error> {
                    let mut total = [0u64];
                    for i in 0..300u64 {
                        comm.allreduce(&[i + k as u64], &mut total, Sum)?;
                    }
                    // Longer than the limit, outside MPI, on every rank.
                    std::thread::sleep(Duration::from_millis(3200));
                    comm.barrier()?;
                    Ok(total[0])
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect::<Result<Vec<_>, _>>()
    })?;
    t.eq(
        totals,
        vec![299 * size, 300 * size],
        "each thread's last allreduce",
    );
    drop(comms);
    world.barrier()?;
    t.report();
    Ok(())
}
