//! MPI objects leaked with `mem::forget`: windows (one a shared window, inside the `lock_all`
//! it holds for its life), a persistent request (inactive: MPI does not wait for it at
//! finalize), a communicator, a group and an info object. Finalize must say what
//! was leaked and free the windows first (MPICH over UCX used to abort in `MPI_Finalize` over
//! a window still registered); the job must end normally.

use crate::checks::Checks;
use ferrompi::window::{Assert, SharedWindow, Window};
use ferrompi::{Info, LockType, Mpi};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let rank = world.rank();
    let owned = t.okay(Window::from_vec(&world, vec![1u64; 64]), "from_vec");
    t.okay(
        owned.lock(LockType::Exclusive, rank, Assert::empty(), |e| {
            e.put_now(&[2u64], rank, 0)
        }),
        "a lock epoch before the leak",
    )
    .unwrap();
    std::mem::forget(owned);
    let allocated = t.okay(Window::<f64>::allocate(&world, 8), "allocate");
    std::mem::forget(allocated);
    let node = t.okay(world.split_shared(0), "split_shared");
    let shared = t.okay(SharedWindow::<u32>::allocate(&node, 16), "allocate shared");
    std::mem::forget(shared);
    let mut sending = t.okay(world.send_init(vec![7u8; 4], rank, 5), "send_init");
    let mut got = [0u8; 4];
    t.okay(
        sending.start().and_then(|s| {
            world.recv(&mut got, rank, 5)?;
            s.wait()
        }),
        "a start and a wait before the leak",
    );
    t.eq(got, [7; 4], "what the persistent send carried");
    std::mem::forget(sending);
    std::mem::forget(t.okay(world.dup(), "dup"));
    std::mem::forget(t.okay(world.group(), "group"));
    std::mem::forget(t.okay(Info::with(mpi, &[("a", "1")]), "info"));
    // Objects freed as usual are not reported.
    let dup = t.okay(world.dup(), "dup");
    t.okay(dup.free(), "free a communicator");
    let window = t.okay(Window::<u8>::allocate(&world, 1), "allocate");
    t.okay(window.free(), "free a window");
    let receiving = t.okay(world.recv_init(vec![0u8], rank, 6), "recv_init");
    t.okay(receiving.into_buffers(), "free a persistent request");
    drop(t.okay(world.send_init(vec![0u8], rank, 6), "send_init")); // freed by its drop
    t.okay(world.barrier(), "barrier");
}
