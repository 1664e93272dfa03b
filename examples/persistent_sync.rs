//! The per-iteration synchronisation of an SDDP solver with persistent collectives, set up once
//! and restarted every iteration:
//!
//! 1. **forward pass**: an in-place `allreduce` (`Max`) of `[lower bound, -upper bound]`, so every
//!    rank gets the best lower and the best upper bound;
//! 2. **backward pass**: an `allgatherv` of the Benders cuts each rank generated (ranks generate
//!    different numbers of cuts, so the partition is uneven);
//! 3. **convergence**: an `allreduce` (`Sum`) of `[local gap, scenarios solved]`, started together
//!    with the cut exchange (`ferrompi::start_all`) and completed with it.
//!
//! Every iteration changes the buffers through the requests and checks every result. Run with
//! `tools/run-example.sh persistent_sync 4`.

use ferrompi::{Max, Mpi, Partition, Result, Sum};

const ITERATIONS: usize = 200;
/// Coefficients per cut (a real cut has one per state variable, plus the intercept).
const CUT_LEN: usize = 4;

fn cuts_of(rank: usize) -> usize {
    rank % 3 + 1
}

/// Cut `j` of `rank` at `iteration`: distinct values, exact in `f64`.
fn cut(rank: usize, j: usize, iteration: usize) -> [f64; CUT_LEN] {
    let base = (rank * 100 + j * 10) as f64 + iteration as f64 * 1000.0;
    [base, base + 1.0, base + 2.0, base + 3.0]
}

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);

    // Set up once.
    let mut bounds = world.allreduce_init_in_place(vec![0.0f64; 2], Max)?;
    let lengths: Vec<usize> = (0..size).map(|r| cuts_of(r) * CUT_LEN).collect();
    let blocks = Partition::<f64>::from_counts(&lengths)?;
    let mut cuts = world.allgatherv_init(
        vec![0.0f64; lengths[rank]],
        vec![0.0f64; blocks.extent()],
        &blocks,
    )?;
    let mut convergence = world.allreduce_init(vec![0.0f64; 2], vec![0.0f64; 2], Sum)?;

    for it in 0..ITERATIONS {
        // Forward pass: local bounds improve with the iteration.
        let (lower, upper) = (it as f64 + rank as f64 * 0.5, 10_000.0 - (it + rank) as f64);
        bounds.buffer_mut().copy_from_slice(&[lower, -upper]);
        bounds.start()?.wait()?;
        let (best_lower, best_upper) = (bounds.buffer()[0], -bounds.buffer()[1]);
        assert_eq!(best_lower, it as f64 + (size - 1) as f64 * 0.5);
        assert_eq!(best_upper, 10_000.0 - (it + size - 1) as f64);

        // Backward pass: new cuts, exchanged while the convergence sums run.
        for (j, chunk) in cuts.send_mut().chunks_mut(CUT_LEN).enumerate() {
            chunk.copy_from_slice(&cut(rank, j, it));
        }
        convergence
            .send_mut()
            .copy_from_slice(&[best_upper - best_lower, 1.0]);
        ferrompi::start_all(&mut [&mut cuts, &mut convergence])?.wait_all()?;

        let all = cuts.recv();
        let mut at = 0;
        for r in 0..size {
            for j in 0..cuts_of(r) {
                assert_eq!(all[at..at + CUT_LEN], cut(r, j, it), "cut {j} of rank {r}");
                at += CUT_LEN;
            }
        }
        let gap = best_upper - best_lower;
        assert_eq!(convergence.recv(), [gap * size as f64, size as f64]);
    }

    if rank == 0 {
        println!(
            "persistent_sync: {ITERATIONS} iterations checked on {size} ranks (path: {:?}{})",
            ferrompi::persistent_collectives(),
            if cuts.is_emulated() {
                ", allgatherv emulated"
            } else {
                ""
            }
        );
    }
    Ok(())
}
