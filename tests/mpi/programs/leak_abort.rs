//! A scoped receive leaked with mem::forget and still in flight when its scope ends: the scope
//! must abort the job rather than return and let the buffer be freed under MPI. `run_set`: the
//! same for a receive started straight into a request set (`irecv_into`) and the set leaked.

use crate::checks::Checks;
use ferrompi::{ANY_SOURCE, Mpi, RequestSet, scope};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(true, "started");
    let mut buf = vec![0u8; 64];
    scope(|s| {
        let request = world.irecv(s, &mut buf, ANY_SOURCE, 12345).expect("irecv");
        std::mem::forget(request);
    });
    // Not reached: the scope aborts.
    t.ok(false, "the scope returned with a leaked receive in flight");
}

pub fn run_set(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    t.ok(true, "started");
    let mut buf = vec![0u8; 64];
    scope(|s| {
        let mut set = RequestSet::new(s);
        world
            .irecv_into(&mut set, s, &mut buf, ANY_SOURCE, 12346)
            .expect("irecv_into");
        std::mem::forget(set);
    });
    // Not reached: the scope aborts.
    t.ok(
        false,
        "the scope returned with a leaked set's receive in flight",
    );
}
