//! One copy of a scenario table per node: each node's leader loads it into a `SharedWindow`,
//! every rank of the node reads it in place, and rank 0 prints the node's memory (PSS, from
//! `/proc/self/smaps_rollup`) against what a copy per rank would take.
//!
//! ```text
//! mpirun -n 4 target/debug/examples/shared_scenarios
//! ```

use ferrompi::window::SharedWindow;
use ferrompi::{Communicator, Mpi, Sum};

/// Scenarios × stages × inflows: 64 MiB of `f64`.
const SCENARIOS: usize = 512;
const STAGES: usize = 128;
const PLANTS: usize = 128;

/// This process's proportional set size (shared pages split among their users), in MiB.
fn pss_mib() -> f64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let kib: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn node_total(node: &Communicator<'_>, x: f64) -> ferrompi::Result<f64> {
    let mut out = [0.0];
    node.allreduce(&[x], &mut out, Sum)?;
    Ok(out[0])
}

fn main() {
    ferrompi::run(|mpi: &Mpi| -> ferrompi::Result<()> {
        let world = mpi.world();
        let node = world.split_shared(0)?;
        let len = SCENARIOS * STAGES * PLANTS;
        let before = pss_mib();

        // The leader holds the whole table; the others hold nothing.
        let mine = if node.rank() == 0 { len } else { 0 };
        let mut table = SharedWindow::<f64>::allocate(&node, mine)?;
        {
            let mut load = table.write()?;
            for (i, inflow) in load.local().iter_mut().enumerate() {
                *inflow = (i % 1000) as f64 * 0.1; // stands in for reading the file
            }
        }

        // Every rank reads every scenario in place: no copy.
        let read = table.read()?;
        let scenarios = read.as_slice().expect("one contiguous table");
        let (first, stride) = (node.rank() as usize, node.size() as usize);
        let my_share: f64 = scenarios
            .chunks(STAGES * PLANTS)
            .skip(first)
            .step_by(stride)
            .map(|s| s.iter().sum::<f64>())
            .sum();
        let total = node_total(&node, my_share)?;
        let used = node_total(&node, pss_mib() - before)?;
        if world.rank() == 0 {
            let mib = (len * 8) as f64 / (1 << 20) as f64;
            println!(
                "{} ranks on this node share a {mib:.0} MiB scenario table: {used:.1} MiB of \
                 memory (a copy per rank: {:.0} MiB). Sum of inflows: {total:.1}",
                node.size(),
                mib * f64::from(node.size()),
            );
            // One copy per node, not one per rank (allowing for the control block and pages
            // of the MPI library itself).
            assert!(
                used < mib * 1.25,
                "the node uses {used:.1} MiB for a {mib:.0} MiB table"
            );
        }
        Ok(())
    });
}
