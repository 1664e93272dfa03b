//! A user-defined reduction that panics on one rank: the job must end promptly with the
//! panic's message, not hang in the collective and not unwind into C.

use crate::checks::Checks;
use ferrompi::{Mpi, UserOp};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(true, "started");
    let op = UserOp::<i32>::commutative(mpi, |_, _| panic!("deliberate panic in a user op"))
        .expect("op");
    let mut out = [0i32; 4];
    world.allreduce(&[1; 4], &mut out, &op).expect("allreduce");
    t.ok(false, "the allreduce returned although the op panics");
}
