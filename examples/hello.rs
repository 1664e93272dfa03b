//! A first program: every rank says hello, rank 0 broadcasts a parameter vector, and the
//! ranks pass a token around a ring.
//!
//! ```sh
//! cargo build --example hello && mpirun -n 4 target/debug/examples/hello
//! cargo run --example hello          # also works without a launcher, as a singleton
//! ```

use ferrompi::{Mpi, Result};

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());

    println!(
        "hello from rank {rank} of {size} on {} (started by {}, {}, {})",
        mpi.processor_name()?,
        mpi.launcher(),
        mpi.thread_level(),
        mpi.library_version()?.lines().next().unwrap_or_default(),
    );

    // Rank 0 decides the parameters; everyone gets them.
    let mut params = [0.0f64; 3];
    if rank == 0 {
        params = [0.5, 1e-6, 42.0];
    }
    world.bcast(&mut params, 0)?;

    // A token goes around the ring, each rank adding its rank.
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let mut token = [0i64];
    world.sendrecv(&[i64::from(rank)], next, 0, &mut token, prev, 0)?;
    let sum = {
        let mut total = [token[0]];
        // Rank 0 gathers what everyone received, one message each.
        if rank == 0 {
            for source in 1..size {
                let mut v = [0i64];
                world.recv(&mut v, source, 1)?;
                total[0] += v[0];
            }
        } else {
            world.send(&total, 0, 1)?;
        }
        total[0]
    };

    world.barrier()?;
    if rank == 0 {
        let expected: i64 = (0..i64::from(size)).sum();
        println!("rank 0: params {params:?}; ring tokens sum to {sum} (expected {expected})");
        assert_eq!(sum, expected);
    }
    assert_eq!(params, [0.5, 1e-6, 42.0]);
    Ok(())
}
