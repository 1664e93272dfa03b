//! The watchdog must not end a healthy job: with a limit of 3 s, a thousand short calls, and
//! every rank computing longer than the limit outside MPI, the job passes. Then the watchdog's
//! thread is gone after finalize (it must not outlive MPI or fire later). The limit leaves
//! room for a loaded machine's first collectives and finalize (Open MPI 5 takes over a second
//! to start 4 ranks here).

use crate::checks::Checks;
use ferrompi::{Mpi, Sum};
use std::time::{Duration, Instant};

/// The watchdog's limit, and the time every rank spends outside MPI, longer than it.
const LIMIT: Duration = Duration::from_secs(3);
const OUTSIDE: Duration = Duration::from_millis(3200);

pub fn main() -> Result<(), ferrompi::Error> {
    let mpi = Mpi::builder().watchdog(LIMIT).init()?;
    let world = mpi.world();
    let mut t = Checks::new("watchdog_quiet", world.rank(), world.size());
    let mut total = [0u64];
    for round in 0..2u64 {
        let start = Instant::now();
        for i in 0..500u64 {
            world.allreduce(&[i + round], &mut total, Sum)?;
        }
        t.eq(
            total[0],
            (499 + round) * world.size() as u64,
            "allreduce results",
        );
        if round == 0 {
            // Longer than the limit, outside MPI, on every rank at once.
            std::thread::sleep(OUTSIDE);
        }
        world.barrier()?;
        t.ok(
            round == 1 || start.elapsed() >= OUTSIDE,
            "the round took its time",
        );
    }
    let kept = world.sendrecv(&[1u8], world.rank(), 0, &mut [0u8], world.rank(), 0);
    t.okay(kept, "a last call");
    drop(world);
    mpi.finalize()?;
    t.ok(
        !watchdog_thread_alive(),
        "no watchdog thread after finalize",
    );
    t.report();
    Ok(())
}

/// Whether a thread named `ferrompi-watch` runs in this process (Linux: /proc).
fn watchdog_thread_alive() -> bool {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .any(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim() == "ferrompi-watch")
        })
}
