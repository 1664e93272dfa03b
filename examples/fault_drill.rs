//! The program `tools/drills.sh faults` runs: every rank allreduces every 50 ms for a while, and
//! one rank may be told to fail part way, as a real job's rank fails.
//!
//! `FERROMPI_DRILL=KIND@RANK:SECONDS` makes rank RANK fail SECONDS after the start, where KIND
//! is `err` (returns an `Error` from `main` with `?`), `panic`, `stop` (SIGSTOP: a wedged node)
//! or `exit` (ends without finalizing, as a crash does). Faults from outside (a killed process,
//! a link down) need no variable. `FERROMPI_DRILL_SECONDS` is how long the loop runs (20).
//! Turn the watchdog on with `FERROMPI_WATCHDOG`. Each rank prints its rank and host first.
//!
//! ```sh
//! FERROMPI_WATCHDOG=5s FERROMPI_DRILL=stop@1:3 mpirun -n 2 target/debug/examples/fault_drill
//! ```

// (Its failures come from outside or from the crate, not from a check of its own.)
#[allow(dead_code)]
mod drill;

use ferrompi::{Mpi, Sum};
use std::time::{Duration, Instant};

/// What the failing rank does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Err,
    Panic,
    Stop,
    Exit,
}

/// `KIND@RANK:SECONDS`, or an explanation of what is wrong with it.
fn parse(drill: &str) -> Result<(Kind, i32, f64), String> {
    let (kind, rest) = drill.split_once('@').ok_or("expected KIND@RANK:SECONDS")?;
    let (rank, seconds) = rest.split_once(':').ok_or("expected KIND@RANK:SECONDS")?;
    let kind = match kind {
        "err" => Kind::Err,
        "panic" => Kind::Panic,
        "stop" => Kind::Stop,
        "exit" => Kind::Exit,
        other => return Err(format!("unknown kind {other:?} (err, panic, stop, exit)")),
    };
    let rank = rank.parse().map_err(|_| format!("bad rank {rank:?}"))?;
    let seconds = seconds
        .parse()
        .map_err(|_| format!("bad seconds {seconds:?}"))?;
    Ok((kind, rank, seconds))
}

fn main() -> Result<(), ferrompi::Error> {
    let drill = match std::env::var("FERROMPI_DRILL") {
        Ok(text) => Some(parse(&text).unwrap_or_else(|e| panic!("FERROMPI_DRILL={text}: {e}"))),
        Err(_) => None,
    };
    let seconds: f64 = drill::setting("FERROMPI_DRILL_SECONDS", 20.0);
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let host = mpi.processor_name()?;
    println!("rank {} of {} on {host}", world.rank(), world.size());
    let start = Instant::now();
    let mut total = [0.0f64];
    let mut rounds = 0u64;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        if let Some((kind, rank, at)) = drill
            && rank == world.rank()
            && start.elapsed() >= Duration::from_secs_f64(at)
        {
            eprintln!("rank {rank}: failing now ({kind:?})");
            match kind {
                Kind::Err => {
                    // Two elements into a buffer of one: the argument check's error.
                    let mut short = [0.0f64; 1];
                    world.allreduce(&[1.0, 2.0], &mut short, Sum)?;
                }
                Kind::Panic => panic!("rank {rank}: the drill's panic"),
                // SAFETY: raise(2) with a valid signal; the process stops until killed.
                Kind::Stop => unsafe {
                    libc::raise(libc::SIGSTOP);
                },
                Kind::Exit => std::process::exit(3),
            }
        }
        world.allreduce(&[1.0], &mut total, Sum)?;
        assert_eq!(total[0], f64::from(world.size()), "allreduce result");
        rounds += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("rank {}: {rounds} rounds, no fault", world.rank());
    Ok(())
}
