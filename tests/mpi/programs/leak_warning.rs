//! An owned send leaked with `mem::forget` while in flight: its operation is never completed
//! through ferrompi, so finalize must warn that MPI may wait for it (MPICH's `MPI_Finalize`
//! hangs on a leaked send that never completes). Here the message is received, so the job ends.

use crate::checks::Checks;
use ferrompi::Mpi;

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let rank = world.rank();
    let send = t.okay(world.isend_owned(vec![5u8; 16], rank, 40), "isend_owned");
    std::mem::forget(send);
    let mut got = [0u8; 16];
    t.okay(
        world.recv(&mut got, rank, 40),
        "receive the leaked send's message",
    );
    t.eq(got, [5u8; 16], "message of the leaked send");
}
