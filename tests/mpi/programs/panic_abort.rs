//! The last rank panics while the others wait in a barrier: the panic hook must end the whole
//! job promptly, with the panic's message, instead of leaving the others blocked.

use crate::checks::Checks;
use ferrompi::Mpi;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(true, "started");
    if world.rank() == world.size() - 1 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        panic!("deliberate panic from the last rank");
    }
    // The others block here until MPI_Abort ends them.
    world.barrier().expect("barrier");
    world.barrier().expect("second barrier");
}
