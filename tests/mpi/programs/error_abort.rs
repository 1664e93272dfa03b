//! The last rank gets an error from a collective's own argument checks and returns early while
//! the others wait in a barrier: `Mpi::or_abort` must end the whole job promptly with the
//! error's message (without it the job hangs until killed).

use crate::checks::Checks;
use ferrompi::{Mpi, Sum};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(true, "started");
    if world.rank() == world.size() - 1 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut short = [0.0f64; 1];
        let failed = world.allreduce(&[1.0, 2.0], &mut short, Sum);
        mpi.or_abort(failed);
        t.ok(false, "or_abort returned from an error");
    }
    // The others block here until MPI_Abort ends them.
    world.barrier().expect("barrier");
    world.barrier().expect("second barrier");
}
