//! `main` returning `Err` with plain `?`: the last rank gets an error from a collective's own
//! argument checks and returns it while the others wait in a barrier. `Mpi`'s drop must print
//! the error (rank and host) and end the whole job; without that, `MPI_Finalize` waits for the
//! others, which wait for this rank, and the message is never printed.

use ferrompi::{Mpi, Sum};

pub fn main() -> Result<(), ferrompi::Error> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    if world.rank() == world.size() - 1 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut short = [0.0f64; 1];
        world.allreduce(&[1.0, 2.0], &mut short, Sum)?;
    }
    // The others block here until the abort ends them.
    world.barrier()?;
    world.barrier()?;
    Ok(())
}
