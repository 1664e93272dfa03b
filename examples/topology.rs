//! Where the ranks run: the hierarchy report (nodes, host names, node leaders, NUMA groups and
//! binding, Slurm's allocation) and what a solver derives from it: one thread pool per rank
//! sized from Slurm's `-c`, a memory budget per rank, one copy of shared data per node, and
//! whether the job is deployed one rank per NUMA domain.
//!
//! ```sh
//! cargo build --example topology && mpirun -n 4 target/debug/examples/topology
//! mpirun -n 2 --map-by numa --bind-to numa target/debug/examples/topology   # one rank per NUMA domain
//! srun --mpi=pmix -N 2 -n 4 -c 2 target/debug/examples/topology             # under Slurm
//! ```

use ferrompi::{Mpi, Result, SharedWindow, Sum};

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let h = world.hierarchy()?;
    if world.rank() == 0 {
        println!("{h}");
        if let Some(warning) = h
            .launcher
            .warning(world.size(), h.slurm.as_ref().and_then(|job| job.ntasks))
        {
            println!("warning: {warning}");
        }
    }

    // What a solver sizes from it.
    let threads = h.threads_per_rank();
    let memory = h.slurm.as_ref().and_then(|job| job.memory_per_rank());
    let one_per_numa = h.check_one_rank_per_numa();

    // One copy of a table per node: the node leader fills it, every rank of the node reads it.
    let table_len = 1 << 16;
    let mine = if h.node.rank() == 0 { table_len } else { 0 };
    let mut table = SharedWindow::<f64>::allocate(&h.node, mine)?;
    {
        let mut epoch = table.write()?;
        for (i, x) in epoch.local().iter_mut().enumerate() {
            *x = i as f64;
        }
    }
    let read = table.read()?;
    let local_sum: f64 = read.segment(0).unwrap_or_default().iter().sum();
    let expected = (table_len * (table_len - 1) / 2) as f64;
    assert_eq!(local_sum, expected, "every rank reads the node's one copy");

    // Node leaders compare notes across nodes; everyone learns the node count.
    let mut nodes = [0i32];
    world.allreduce(&[i32::from(h.node_leaders.is_some())], &mut nodes, Sum)?;
    assert_eq!(nodes[0] as usize, h.node_count(), "one leader per node");

    for rank in 0..world.size() {
        if rank == world.rank() {
            println!(
                "rank {rank}: node {} ({}), {} thread(s), memory budget {}, one rank per NUMA \
                 domain: {}",
                h.node_index(),
                h.ranks[rank as usize].host,
                threads,
                memory.map_or_else(|| "not set".into(), |b| format!("{} MiB", b >> 20)),
                if one_per_numa.is_ok() { "yes" } else { "no" },
            );
        }
        world.barrier()?;
    }
    if world.rank() == 0 {
        if let Err(e) = one_per_numa {
            println!("{e}");
        }
        println!(
            "{} node(s): the table is held once per node ({} KiB), not once per rank ({} KiB on \
             the busiest node)",
            h.node_count(),
            (table_len * 8) >> 10,
            (table_len * 8 * h.ranks_per_node().into_iter().max().unwrap_or(1)) >> 10,
        );
    }
    Ok(())
}
