//! Ping-pong latency between ranks 0 and 1 with blocking send/recv, from 8 B to 1 MiB.
//!
//! ```sh
//! tools/run-example.sh ping_pong 2
//! ```

use ferrompi::{Mpi, Result};

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    if world.size() < 2 {
        println!("ping_pong needs at least 2 ranks (mpirun -n 2)");
        return Ok(());
    }
    let rank = world.rank();
    for size in [8usize, 64, 512, 4096, 32768, 262_144, 1 << 20] {
        let mut buf = vec![rank as u8; size];
        let iterations = if size < 65536 { 1000 } else { 100 };
        world.barrier()?;
        let start = mpi.wtime();
        for _ in 0..iterations {
            if rank == 0 {
                world.send(&buf, 1, 0)?;
                world.recv(&mut buf, 1, 0)?;
            } else if rank == 1 {
                world.recv(&mut buf, 0, 0)?;
                world.send(&buf, 0, 0)?;
            }
        }
        let one_way = (mpi.wtime() - start) / f64::from(iterations) / 2.0;
        if rank == 0 {
            println!(
                "{size:>8} B  {:>9.2} us  {:>8.1} MB/s",
                one_way * 1e6,
                size as f64 / one_way / 1e6
            );
        }
    }
    Ok(())
}
