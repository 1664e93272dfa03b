//! A stopped rank (SIGSTOP: a wedged or swapped-out node) with the watchdog on through
//! `FERROMPI_WATCHDOG`: the last rank stops itself after a first barrier, and the others' next
//! barrier, on a communicator named "solver", never returns. Their watchdogs must end the
//! whole job, the stopped rank included, within the limit and a few seconds, naming the
//! operation and the communicator.

use ferrompi::Mpi;

/// The limit the program sets, which the registration's time bound allows for.
pub const LIMIT: &str = "2s";

pub fn main() -> Result<(), ferrompi::Error> {
    // SAFETY: no other thread runs yet in this process (the harness starts none before a
    // program's main), so nothing reads the environment meanwhile.
    unsafe { std::env::set_var("FERROMPI_WATCHDOG", LIMIT) };
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let solver = world.dup()?;
    solver.set_name("solver")?;
    world.barrier()?;
    if world.rank() == world.size() - 1 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // SAFETY: raise(2) with a valid signal; the process stops until continued or killed.
        unsafe { libc::raise(libc::SIGSTOP) };
    }
    solver.barrier()?;
    Ok(())
}
