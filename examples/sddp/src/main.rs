//! ferrompi's flagship: stochastic dual dynamic programming (SDDP) for a hydrothermal dispatch
//! problem, run under `mpirun`/`srun`.
//!
//! - **Model** (`model.rs`): 1–3 reservoirs with turbines and spillage, three thermal plants,
//!   a deficit, a seasonal demand over T stages, S independent inflow scenarios per stage from a
//!   seeded generator (or a file). Each stage is an LP solved by Clarabel; the future cost is
//!   bounded by Benders cuts built from the duals of the water-balance rows.
//! - **Parallel scheme**: the forward passes of an iteration are split across ranks in blocks;
//!   their costs meet in a persistent `allreduce` (the upper-bound statistics); a barrier
//!   separates forward from backward; in the backward pass every rank makes the cuts of its own
//!   trial states, stage by stage, and a persistent `allgatherv` gives every rank every cut, in
//!   pass order; a persistent `allreduce` agrees on convergence. The scenario table and the cut
//!   pool live once per node in `SharedWindow`s, written by the node leader in write epochs and
//!   read by every rank of the node in read epochs.
//! - **Determinism**: sampled paths depend on (seed, iteration, pass) only and cuts are stored in
//!   pass order, so every rank count gives the same cuts and the same bounds, bit for bit.
//! - **Checkpoints** (`checkpoint.rs`): `--checkpoint FILE --checkpoint-every K` writes the cut
//!   pool and the bounds' history collectively into one file through MPI-IO; `--resume FILE`
//!   goes on from it on any rank count, with the same cuts and bounds as a run never stopped.
//!
//! ```sh
//! cargo build --release -p ferrompi-sddp && mpirun -n 4 target/release/sddp
//! mpirun -n 4 target/release/sddp --stages 24 --scenarios 20 --reservoirs 3 --json --plot bounds.svg
//! mpirun -n 4 target/release/sddp --iterations 20 --checkpoint run.ckpt --checkpoint-every 5
//! mpirun -n 2 target/release/sddp --iterations 40 --resume run.ckpt
//! ```

mod checkpoint;
mod model;
mod report;

use ferrompi::{Communicator, Max, Mpi, Partition, SharedWindow, Sum};
use model::{Instance, Rng, Shape, solve_stage, table_values};
use report::{Iteration, Summary, WINDOW};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: sddp [--stages T] [--scenarios S] [--reservoirs 1-3] [--passes F] \
[--iterations K] [--seed N] [--tol GAIN] [--storage-max V] [--thermal-max G] \
[--scenario-file PATH] [--checkpoint PATH [--checkpoint-every K]] [--resume PATH] [--csv] [--json] \
[--plot PATH.svg] [--quiet]";

/// The most forward passes per iteration.
const MAX_PASSES: usize = 100_000;

/// Command-line options.
#[derive(Debug, Clone)]
struct Options {
    shape: Shape,
    passes: usize,
    iterations: usize,
    seed: u64,
    tol: f64,
    scenario_file: Option<PathBuf>,
    checkpoint: Option<PathBuf>,
    checkpoint_every: usize,
    resume: Option<PathBuf>,
    csv: bool,
    json: bool,
    plot: Option<PathBuf>,
    quiet: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        shape: Shape {
            stages: 12,
            scenarios: 10,
            reservoirs: 2,
            storage_max: 200.0,
            thermal_max: 60.0,
        },
        passes: 8,
        iterations: 40,
        seed: 7,
        tol: 0.001,
        scenario_file: None,
        checkpoint: None,
        checkpoint_every: 1,
        resume: None,
        csv: false,
        json: false,
        plot: None,
        quiet: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))
        };
        fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{flag}: '{v}' is not a number"))
        }
        match flag.as_str() {
            "--stages" => o.shape.stages = num(flag, value()?)?,
            "--scenarios" => o.shape.scenarios = num(flag, value()?)?,
            "--reservoirs" => o.shape.reservoirs = num(flag, value()?)?,
            "--storage-max" => o.shape.storage_max = num(flag, value()?)?,
            "--thermal-max" => o.shape.thermal_max = num(flag, value()?)?,
            "--passes" => o.passes = num(flag, value()?)?,
            "--iterations" => o.iterations = num(flag, value()?)?,
            "--seed" => o.seed = num(flag, value()?)?,
            "--tol" => o.tol = num(flag, value()?)?,
            "--scenario-file" => o.scenario_file = Some(PathBuf::from(value()?)),
            "--plot" => o.plot = Some(PathBuf::from(value()?)),
            "--checkpoint" => o.checkpoint = Some(PathBuf::from(value()?)),
            "--checkpoint-every" => o.checkpoint_every = num(flag, value()?)?,
            "--resume" => o.resume = Some(PathBuf::from(value()?)),
            "--csv" => o.csv = true,
            "--json" => o.json = true,
            "--quiet" => o.quiet = true,
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown option '{other}'; {USAGE}")),
        }
    }
    if o.passes < 1 || o.iterations < 1 || o.checkpoint_every < 1 {
        return Err("--passes, --iterations and --checkpoint-every must be at least 1".into());
    }
    // Every rank keeps each pass's trial states and bounds: bounded so they cannot exhaust
    // memory (the cut pool's size is checked against all of these).
    if o.passes > MAX_PASSES {
        return Err(format!("--passes must be at most {MAX_PASSES}"));
    }
    Ok(o)
}

/// Why a run ended early.
enum Fail {
    /// A problem every rank knows about (bad input, an LP that failed somewhere): every rank
    /// prints it and exits with status 2.
    Everywhere(String),
    /// An MPI call failed: the job is aborted.
    Mpi(ferrompi::Error),
}

impl From<ferrompi::Error> for Fail {
    fn from(e: ferrompi::Error) -> Fail {
        Fail::Mpi(e)
    }
}

fn main() -> ExitCode {
    let mpi = match Mpi::init() {
        Ok(mpi) => mpi,
        Err(e) => {
            eprintln!("sddp: MPI could not be initialised: {e}");
            return ExitCode::from(1);
        }
    };
    let rank = mpi.world().rank();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&mpi, &args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Everywhere(message)) => {
            // One write, so the launcher does not interleave it with other ranks' lines.
            let line = format!("sddp: rank {rank}: {message}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            ExitCode::from(2)
        }
        Err(Fail::Mpi(e)) => mpi.or_abort(Err(e)),
    }
}

/// Makes a problem seen by some ranks known to all: the message of the lowest failing rank.
/// Collective over `comm`; `Ok` when no rank failed.
fn agree(comm: &Communicator<'_>, mine: Option<String>) -> Result<(), Fail> {
    let mut first = [0i32];
    let candidate = if mine.is_some() {
        comm.rank()
    } else {
        comm.size()
    };
    comm.allreduce(&[-candidate], &mut first, Max)?;
    let first = -first[0];
    if first == comm.size() {
        return Ok(());
    }
    let mut text = mine.unwrap_or_default().into_bytes();
    let mut len = [text.len() as u64];
    comm.bcast(&mut len, first)?;
    text.resize(len[0] as usize, 0);
    comm.bcast(&mut text, first)?;
    Err(Fail::Everywhere(format!(
        "rank {first} reported: {}",
        String::from_utf8_lossy(&text)
    )))
}

/// A table shared by the processes of the node. The window's own checks (sizes, the room of
/// the node's shared memory) give every rank the same error, so those end the run like bad
/// input; an MPI failure aborts.
fn shared_table<'c>(
    node: &'c Communicator<'_>,
    len: usize,
    what: &str,
) -> Result<SharedWindow<'c, f64>, Fail> {
    SharedWindow::allocate(node, len).map_err(|e| match e.kind() {
        ferrompi::ErrorKind::NoMemory { .. }
        | ferrompi::ErrorKind::CountOverflow { .. }
        | ferrompi::ErrorKind::InvalidArgument { .. } => Fail::Everywhere(format!("{what}: {e}")),
        _ => Fail::Mpi(e),
    })
}

fn run(mpi: &Mpi, args: &[String]) -> Result<(), Fail> {
    let start = Instant::now();
    let world = mpi.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    // Every rank parses the same arguments, so every rank fails alike: no collective needed.
    let opts = parse_args(args).map_err(Fail::Everywhere)?;
    let inst = Instance::build(&opts.shape).map_err(Fail::Everywhere)?;
    let (n, stages, passes) = (inst.n(), inst.stages, opts.passes);
    // The cut pool: stage t holds up to iterations × passes cuts of n + 1 values.
    let cut_len = n + 1;
    let pool_len = table_values(
        "the cut pool",
        &[
            ("stages", stages),
            ("iterations", opts.iterations),
            ("passes", passes),
            ("values per cut", cut_len),
        ],
    )
    .map_err(Fail::Everywhere)?;
    let hierarchy = world.hierarchy()?;
    let node = &hierarchy.node;
    let leader = node.rank() == 0;

    // The scenario table, once per node: the leader generates or loads it.
    let mut scenario_window = shared_table(
        node,
        if leader { inst.table_len() } else { 0 },
        "the scenario table",
    )?;
    let mut load_error = None;
    {
        let mut epoch = scenario_window.write()?;
        if leader {
            let table = epoch.local();
            match &opts.scenario_file {
                None => inst.generate_scenarios(opts.seed, table),
                Some(path) => {
                    if let Err(e) = std::fs::read_to_string(path)
                        .map_err(|e| format!("{}: {e}", path.display()))
                        .and_then(|text| inst.parse_scenarios(&text, table))
                    {
                        load_error = Some(e);
                    }
                }
            }
        }
    }
    agree(&world, load_error)?;
    let scenario_epoch = scenario_window.read()?;
    let table = scenario_epoch.segment(0).unwrap_or_default();

    // The cut pool, once per node.
    let per_stage = pool_len / stages;
    let mut pool = shared_table(node, if leader { pool_len } else { 0 }, "the cut pool")?;
    let mut cut_counts = vec![0usize; stages];

    // The three persistent collectives, set up once.
    let my_passes: Vec<usize> = (passes * rank / size..passes * (rank + 1) / size).collect();
    let mut upper = world.allreduce_init(vec![0.0f64; passes], vec![0.0f64; passes], Sum)?;
    let lengths: Vec<usize> = (0..size)
        .map(|r| (passes * (r + 1) / size - passes * r / size) * cut_len)
        .collect();
    let blocks = Partition::<f64>::from_counts(&lengths)?;
    let mut exchange = world.allgatherv_init(
        vec![0.0f64; lengths[rank]],
        vec![0.0f64; passes * cut_len],
        &blocks,
    )?;
    let mut convergence = world.allreduce_init(vec![0.0f64; 2], vec![0.0f64; 2], Max)?;

    let mut history: Vec<Iteration> = Vec::new();
    let mut path_costs: Vec<Vec<f64>> = Vec::new();
    let (mut solve_s, mut comm_s, mut checkpoint_s) = (0.0, 0.0, 0.0);
    let (mut checkpoints, mut checkpoint_bytes) = (0usize, 0u64);
    let mut trial = vec![vec![vec![0.0; n]; stages]; my_passes.len()];
    let initial: Vec<f64> = inst.reservoirs.iter().map(|r| r.storage_initial).collect();
    if rank == 0 && !opts.quiet {
        report::header(&opts_line(&opts, &inst, size, &hierarchy), opts.csv);
    }
    let mut converged = false;
    // What a checkpoint must match: the instance, the sampling and the scenario table.
    let instance = checkpoint::Instance::new(
        [stages, inst.scenarios, n, passes],
        opts.seed,
        [opts.shape.storage_max, opts.shape.thermal_max],
        table,
    );
    let (mut first, mut resumed) = (0, 0);
    if let Some(path) = &opts.resume {
        let mut cuts = checkpoint::Pool {
            window: &mut pool,
            leader,
            per_stage,
            cut_len,
        };
        let state = checkpoint::read(&world, path, instance, opts.iterations, &mut cuts)?;
        cut_counts.clone_from(&state.counts);
        for i in 0..state.iterations {
            let pooled: Vec<f64> = state.costs[(i + 1).saturating_sub(WINDOW)..=i].concat();
            let cuts_then = (i + 1) * passes * (stages - 1);
            let row = Iteration::new(i + 1, state.lower[i], &pooled, state.seconds[i], cuts_then);
            history.push(row);
        }
        path_costs = state.costs;
        converged = state.converged;
        resumed = state.iterations;
        first = if converged {
            opts.iterations
        } else {
            state.iterations
        };
        if rank == 0 && !opts.quiet && !opts.csv {
            println!(
                "resumed from {} after {} iteration(s){}",
                path.display(),
                state.iterations,
                if converged { ", converged" } else { "" }
            );
        }
    }
    for iteration in first..opts.iterations {
        let t_iter = Instant::now();
        // Forward pass: this rank's sampled paths, under the cuts so far.
        let clock = Instant::now();
        let mut failure = None;
        {
            let epoch = pool.read()?;
            let cuts = epoch.segment(0).unwrap_or_default();
            let costs = upper.send_mut();
            costs.fill(0.0);
            for (k, &p) in my_passes.iter().enumerate() {
                let mut rng =
                    Rng::new(opts.seed ^ ((iteration as u64) << 32) ^ ((p as u64 + 1) * 0x9E37));
                let mut v = initial.clone();
                let mut total = 0.0;
                for t in 0..stages {
                    let s = (rng.next_u64() % inst.scenarios as u64) as usize;
                    let inflow: Vec<f64> = (0..n).map(|i| inst.inflow(table, t, s, i)).collect();
                    match solve_stage(
                        &inst,
                        t,
                        &inflow,
                        &v,
                        stage_cuts(cuts, t, per_stage, cut_counts[t], cut_len),
                    ) {
                        Ok(sol) => {
                            total += sol.immediate;
                            v = sol.storage;
                            trial[k][t] = v.clone();
                        }
                        Err(e) => {
                            failure.get_or_insert(format!("forward pass {p}: {e}"));
                            total = f64::NAN;
                            break;
                        }
                    }
                }
                costs[p] = total;
            }
        }
        solve_s += clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        upper.start()?.wait()?;
        let costs = upper.recv().to_vec();
        if costs.iter().any(|c| c.is_nan()) {
            agree(&world, failure.clone())?;
        }
        world.barrier()?; // forward to backward
        comm_s += clock.elapsed().as_secs_f64();

        // Backward pass: stage by stage, each rank cuts at its own trial states.
        for t in (1..stages).rev() {
            let clock = Instant::now();
            let mut failure = None;
            {
                let epoch = pool.read()?;
                let cuts = epoch.segment(0).unwrap_or_default();
                let send = exchange.send_mut();
                for (k, _) in my_passes.iter().enumerate() {
                    let state = &trial[k][t - 1];
                    let mut cut = vec![0.0; cut_len];
                    for s in 0..inst.scenarios {
                        let inflow: Vec<f64> =
                            (0..n).map(|i| inst.inflow(table, t, s, i)).collect();
                        match solve_stage(
                            &inst,
                            t,
                            &inflow,
                            state,
                            stage_cuts(cuts, t, per_stage, cut_counts[t], cut_len),
                        ) {
                            Ok(sol) => {
                                cut[0] += sol.objective;
                                for i in 0..n {
                                    cut[1 + i] += sol.slope[i];
                                }
                            }
                            Err(e) => {
                                failure.get_or_insert(format!("backward pass at stage {t}: {e}"));
                                cut.fill(f64::NAN);
                                break;
                            }
                        }
                    }
                    // Average over scenarios, then α = Q̄ − β·v̂.
                    let scale = inst.scenarios as f64;
                    cut.iter_mut().for_each(|c| *c /= scale);
                    cut[0] -= (0..n).map(|i| cut[1 + i] * state[i]).sum::<f64>();
                    send[k * cut_len..(k + 1) * cut_len].copy_from_slice(&cut);
                }
            }
            solve_s += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            exchange.start()?.wait()?;
            let new_cuts = exchange.recv();
            if new_cuts.iter().any(|c| c.is_nan()) {
                agree(&world, failure.clone())?;
            }
            {
                // The node leader appends the cuts of stage t − 1, in pass order.
                let mut epoch = pool.write()?;
                if leader {
                    let at = (t - 1) * per_stage + cut_counts[t - 1] * cut_len;
                    epoch.local()[at..at + new_cuts.len()].copy_from_slice(new_cuts);
                }
            }
            cut_counts[t - 1] += passes;
            comm_s += clock.elapsed().as_secs_f64();
        }

        // Lower bound: the first stage's expected cost under every cut (same on every rank).
        let clock = Instant::now();
        let mut lower = 0.0;
        let mut failure = None;
        {
            let epoch = pool.read()?;
            let cuts = epoch.segment(0).unwrap_or_default();
            for s in 0..inst.scenarios {
                let inflow: Vec<f64> = (0..n).map(|i| inst.inflow(table, 0, s, i)).collect();
                match solve_stage(
                    &inst,
                    0,
                    &inflow,
                    &initial,
                    stage_cuts(cuts, 0, per_stage, cut_counts[0], cut_len),
                ) {
                    Ok(sol) => lower += sol.objective / inst.scenarios as f64,
                    Err(e) => {
                        failure.get_or_insert(format!("lower bound: {e}"));
                    }
                }
            }
        }
        solve_s += clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        // The upper bound pools the paths of the last WINDOW iterations; converged when the lower
        // bound gained less than `tol` over them and lies in the upper bound's interval.
        path_costs.push(costs);
        let pooled: Vec<f64> = path_costs
            .iter()
            .rev()
            .take(WINDOW)
            .rev()
            .flatten()
            .copied()
            .collect();
        let row = Iteration::new(
            iteration + 1,
            lower,
            &pooled,
            t_iter.elapsed().as_secs_f64(),
            cut_counts.iter().sum(),
        );
        let stalled = history
            .len()
            .checked_sub(WINDOW)
            .map(|k| history[k].lower_bound)
            .is_some_and(|before| (lower - before) <= opts.tol * lower.abs());
        let done = stalled && row.lower_bound >= row.upper_mean - row.upper_ci;
        convergence.send_mut().copy_from_slice(&[
            if failure.is_some() {
                2.0
            } else if done {
                0.0
            } else {
                1.0
            },
            solve_s,
        ]);
        convergence.start()?.wait()?;
        let [verdict, _] = [convergence.recv()[0], convergence.recv()[1]];
        comm_s += clock.elapsed().as_secs_f64();
        if verdict >= 2.0 {
            agree(&world, failure)?;
        }
        if rank == 0 && !opts.quiet {
            report::progress(&row, opts.csv);
        }
        history.push(row);
        let done = verdict == 0.0;
        if let Some(path) = &opts.checkpoint
            && ((iteration + 1) % opts.checkpoint_every == 0
                || done
                || iteration + 1 == opts.iterations)
        {
            let clock = Instant::now();
            let state = checkpoint::State {
                iterations: iteration + 1,
                converged: done,
                counts: cut_counts.clone(),
                lower: history.iter().map(|r| r.lower_bound).collect(),
                seconds: history.iter().map(|r| r.seconds).collect(),
                costs: path_costs.clone(),
            };
            let mut cuts = checkpoint::Pool {
                window: &mut pool,
                leader,
                per_stage,
                cut_len,
            };
            checkpoint_bytes = checkpoint::write(&world, path, instance, &state, &mut cuts)?;
            checkpoints += 1;
            checkpoint_s += clock.elapsed().as_secs_f64();
        }
        if done {
            converged = true;
            break;
        }
    }

    // Summary: phases, memory, the JSON line, the plot.
    let cuts_total: usize = cut_counts.iter().sum();
    let mut times = [solve_s, comm_s, checkpoint_s];
    let mut slowest = [0.0f64; 3];
    world.allreduce(&times, &mut slowest, Max)?;
    times = slowest;
    let digest = {
        let epoch = pool.read()?;
        report::digest(
            epoch.segment(0).unwrap_or_default(),
            &cut_counts,
            per_stage,
            cut_len,
        )
    };
    if rank == 0 {
        let node_ranks = hierarchy.ranks_per_node();
        let summary = Summary {
            iterations: history.len(),
            converged,
            tol: opts.tol,
            cuts: cuts_total,
            seconds: start.elapsed().as_secs_f64(),
            solve_seconds: times[0],
            comm_seconds: times[1],
            checkpoints,
            checkpoint_seconds: times[2],
            checkpoint_bytes,
            iterations_run: history.len() - resumed,
            ranks: size,
            nodes: hierarchy.node_count(),
            busiest_node: node_ranks.iter().copied().max().unwrap_or(1),
            scenario_bytes: inst.table_len() * 8,
            pool_bytes: stages * per_stage * 8,
            digest,
        };
        if !opts.quiet {
            report::summary(&summary, history.last());
        }
        if let Some(path) = &opts.plot {
            report::plot(path, &history)
                .map_err(|e| Fail::Everywhere(format!("plot {}: {e}", path.display())))?;
            if !opts.quiet {
                println!("plot: {}", path.display());
            }
        }
        if opts.json {
            println!("{}", report::json(&summary, history.last()));
        }
    }
    Ok(())
}

/// The cuts of stage `t` in a pool segment.
fn stage_cuts(
    pool: &[f64],
    t: usize,
    per_stage: usize,
    count: usize,
    cut_len: usize,
) -> impl Iterator<Item = &[f64]> {
    pool[t * per_stage..t * per_stage + count * cut_len].chunks(cut_len)
}

fn opts_line(
    opts: &Options,
    inst: &Instance,
    size: usize,
    h: &ferrompi::topology::Hierarchy<'_>,
) -> String {
    format!(
        "SDDP hydrothermal dispatch: {} stages, {} scenarios/stage, {} reservoir(s), {} thermal plants, \
         {} forward passes/iteration, seed {}; {size} rank(s) on {} node(s) ({})",
        inst.stages,
        inst.scenarios,
        inst.n(),
        inst.thermals.len(),
        opts.passes,
        opts.seed,
        h.node_count(),
        ferrompi::BUILD_PROBE
    )
}
