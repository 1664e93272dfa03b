//! One-sided communication through an RMA `Window` (MPI-4.0 chapter 12), each result checked:
//! puts and gets between fences, a shared counter with `fetch_and_op` under a passive lock,
//! accumulates, and a window over a vector taken back at the end.
//!
//! ```sh
//! tools/run-example.sh rma_window 4
//! ```

use ferrompi::window::{Assert, Window};
use ferrompi::{LockType, Mpi, Result, Sum};

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    // Fence epochs: every rank puts its rank into slot 0 of its right neighbour, then reads
    // its own window. The last fence asserts NOSUCCEED, ending the fence sequence.
    // Origin buffers live outside the epoch: MPI may use them until it ends.
    let me = [i64::from(rank)];
    let win = Window::<i64>::allocate(&world, 4)?;
    win.fence(Assert::empty(), |epoch| epoch.put(&me, next, 0))??;
    let mut mine = [0i64; 4];
    win.fence(Assert::NOSUCCEED, |epoch| epoch.get(&mut mine, rank, 0))??;
    assert_eq!(mine[0], i64::from(prev));

    // A counter in rank 0's slot 1: each rank takes a ticket with an atomic fetch-and-add under
    // a passive-target lock, with no action from rank 0.
    let ticket = win.lock(LockType::Shared, 0, Assert::empty(), |epoch| {
        epoch.fetch_and_op(1, 0, 1, Sum)
    })??;
    assert!((0..i64::from(size)).contains(&ticket));
    world.barrier()?;
    let mut count = [0i64];
    win.lock(LockType::Shared, 0, Assert::empty(), |epoch| {
        epoch.get_now(&mut count, 0, 1)
    })??;
    assert_eq!(count, [i64::from(size)]);

    // Accumulate everyone's rank into slot 2 of every rank, under one lock_all.
    win.lock_all(Assert::empty(), |epoch| -> ferrompi::Result<()> {
        for target in 0..size {
            epoch.accumulate(&me, target, 2, Sum)?;
        }
        Ok(())
    })??;
    world.barrier()?;
    let values = win.into_vec()?;
    assert_eq!(values[2], i64::from(size * (size - 1) / 2));

    // A window over a vector the window owns, taken back once every rank is done.
    let data = Window::from_vec(&world, vec![0.0f64; 2])?;
    let half = [0.5];
    data.fence(Assert::NOSUCCEED, |epoch| epoch.put(&half, next, 1))??;
    let data = data.into_vec()?;
    assert_eq!(data, [0.0, 0.5]);

    if rank == 0 {
        println!("rma_window: every result checked on {size} rank(s)");
    }
    Ok(())
}
