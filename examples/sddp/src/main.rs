//! ferrompi's flagship: stochastic dual dynamic programming (SDDP) for a hydrothermal dispatch
//! problem, run under `mpirun`/`srun`.
//!
//! - **Model** (`model.rs`): 1–3 reservoirs with turbines and spillage, three thermal plants,
//!   a deficit, a seasonal demand over T stages, S independent inflow scenarios per stage from a
//!   seeded generator (or a file). Each stage is an LP kept in HiGHS (`lp.rs`) on every rank:
//!   cuts are added as rows, the incoming storage and inflows change the water-balance rows in
//!   place, and the dual simplex re-solves from a basis; the future cost is bounded by Benders
//!   cuts built from the duals of the water-balance rows. `--exact` also solves the whole
//!   scenario tree as one LP (small trees), an answer independent of SDDP.
//! - **Parallel scheme**: the forward passes of an iteration are split across ranks in blocks;
//!   their costs meet in a persistent `allreduce` (the upper-bound statistics); a barrier
//!   separates forward from backward; in the backward pass every rank makes the cuts of its own
//!   trial states, stage by stage, and a persistent `allgatherv` gives every rank every cut, in
//!   pass order; a persistent `allreduce` agrees on convergence. The scenario table and the cut
//!   pool live once per node in `SharedWindow`s, written by the node leader in write epochs and
//!   read by every rank of the node in read epochs.
//! - **Determinism**: sampled paths depend on (seed, iteration, pass) only, cuts are stored in
//!   pass order, and every sequence of warm-started solves belongs to one pass (or to the lower
//!   bound) within one iteration, so every rank count gives the same cuts and the same bounds,
//!   bit for bit.
//! - **Stopping** (`cli.rs`, `report.rs`): `--stop statistical` (the default), `stall`, `gap`
//!   or `limit`, besides `--iterations` and `--time-limit`; the summary names the rule that
//!   fired and what it proves.
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
mod cli;
mod lp;
mod model;
mod report;

use cli::Options;
use ferrompi::{Communicator, Max, Mpi, Partition, SharedWindow, Sum};
use lp::{Basis, Start};
use model::{Instance, Rng, SolveTimes, StageLp, table_values};
use report::{Ended, Iteration, Summary, WINDOW};
use std::process::ExitCode;
use std::time::Instant;

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
    // Every rank parses the same arguments, so every rank fails alike: no collective needed.
    let opts = match Options::parse(std::env::args_os()) {
        Ok(opts) => opts,
        Err(e) => {
            // --help, --version, or a bad option with the usage: printed once, and every rank
            // exits alike.
            let status = if rank == 0 {
                Options::report(&e)
            } else if e.use_stderr() {
                2
            } else {
                0
            };
            return ExitCode::from(status);
        }
    };
    match run(&mpi, &opts) {
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

fn run(mpi: &Mpi, opts: &Options) -> Result<(), Fail> {
    let start = Instant::now();
    let world = mpi.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let inst = Instance::build(&opts.shape()).map_err(Fail::Everywhere)?;
    if opts.exact {
        model::tree_nodes(&inst).map_err(|e| Fail::Everywhere(format!("--exact: {e}")))?;
    }
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
    let mut convergence = world.allreduce_init(vec![0.0f64; 3], vec![0.0f64; 3], Max)?;

    let mut history: Vec<Iteration> = Vec::new();
    let mut path_costs: Vec<Vec<f64>> = Vec::new();
    let (mut solve_s, mut checkpoint_s) = (0.0, 0.0);
    // Time in MPI: the forward passes' allreduce and the barrier, the backward pass's cut
    // exchanges and pool epochs, the bounds' allreduce.
    let mut comm_s = [0.0f64; 3];
    let (mut checkpoints, mut checkpoint_bytes) = (0usize, 0u64);
    let mut trial = vec![vec![vec![0.0; n]; stages]; my_passes.len()];
    let initial: Vec<f64> = inst.reservoirs.iter().map(|r| r.storage_initial).collect();
    // One LP per stage on every rank, kept between solves, and the bases of the forward
    // passes. A forward solve starts from the slack basis; the backward pass of a pass at a
    // stage starts its first scenario from that pass's forward basis there (the same incoming
    // storage) and goes on from each scenario to the next; the lower bound starts from the
    // slack basis and goes on likewise. Every sequence of solves is thus one pass's (or the
    // lower bound's, which every rank computes alike) within one iteration: the cuts are the
    // same at every rank count and after a resume.
    let mut lps = (0..stages)
        .map(|t| StageLp::new(&inst, t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Fail::Everywhere)?;
    let mut forward_basis = vec![vec![Basis::default(); stages]; my_passes.len()];
    if rank == 0 && !opts.quiet {
        report::header(&opts_line(opts, &inst, size, &hierarchy), opts.csv);
    }
    let mut ended = Ended::IterationLimit;
    // What a checkpoint must match: the instance, the sampling and the scenario table.
    let instance = checkpoint::Instance::new(
        [stages, inst.scenarios, n, passes],
        opts.seed,
        [opts.storage_max, opts.thermal_max],
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
        let converged = state.converged;
        if converged {
            ended = Ended::Rule(opts.stop);
        }
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
                    let lp = &mut lps[t];
                    match lp
                        .sync(stage_cuts(cuts, t, per_stage, cut_counts[t], cut_len))
                        .and_then(|()| lp.solve(&inflow, &v, Start::Slack))
                        .and_then(|sol| lp.basis(&mut forward_basis[k][t]).map(|()| sol))
                    {
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
        comm_s[0] += clock.elapsed().as_secs_f64();

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
                    let lp = &mut lps[t];
                    for s in 0..inst.scenarios {
                        let inflow: Vec<f64> =
                            (0..n).map(|i| inst.inflow(table, t, s, i)).collect();
                        match lp
                            .sync(stage_cuts(cuts, t, per_stage, cut_counts[t], cut_len))
                            .and_then(|()| {
                                let start = if s == 0 {
                                    Start::Basis(&forward_basis[k][t])
                                } else {
                                    Start::Continue
                                };
                                lp.solve(&inflow, state, start)
                            }) {
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
            comm_s[1] += clock.elapsed().as_secs_f64();
        }

        // Lower bound: the first stage's expected cost under every cut (same on every rank).
        let clock = Instant::now();
        let mut lower = 0.0;
        let mut failure = None;
        {
            let epoch = pool.read()?;
            let cuts = epoch.segment(0).unwrap_or_default();
            let lp = &mut lps[0];
            for s in 0..inst.scenarios {
                let inflow: Vec<f64> = (0..n).map(|i| inst.inflow(table, 0, s, i)).collect();
                match lp
                    .sync(stage_cuts(cuts, 0, per_stage, cut_counts[0], cut_len))
                    .and_then(|()| {
                        let start = if s == 0 {
                            Start::Slack
                        } else {
                            Start::Continue
                        };
                        lp.solve(&inflow, &initial, start)
                    }) {
                    Ok(sol) => lower += sol.objective / inst.scenarios as f64,
                    Err(e) => {
                        failure.get_or_insert(format!("lower bound: {e}"));
                    }
                }
            }
        }
        solve_s += clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        // The upper bound pools the paths of the last WINDOW iterations; the stopping rule
        // compares it with the lower bound (the same numbers on every rank).
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
        let holds = report::rule_holds(opts.stop, opts.tol, &history, &row);
        convergence.send_mut().copy_from_slice(&[
            if failure.is_some() {
                2.0
            } else if holds {
                0.0
            } else {
                1.0
            },
            solve_s,
            start.elapsed().as_secs_f64(),
        ]);
        convergence.start()?.wait()?;
        let [verdict, _, elapsed] = [0, 1, 2].map(|i| convergence.recv()[i]);
        comm_s[2] += clock.elapsed().as_secs_f64();
        if verdict >= 2.0 {
            agree(&world, failure)?;
        }
        if rank == 0 && !opts.quiet {
            report::progress(&row, opts.csv);
        }
        history.push(row);
        let done = verdict == 0.0;
        if done {
            ended = Ended::Rule(opts.stop);
        } else if opts.time_limit.is_some_and(|limit| elapsed >= limit) {
            ended = Ended::TimeLimit;
        }
        if let Some(path) = &opts.checkpoint
            && ((iteration + 1) % opts.checkpoint_every == 0
                || done
                || ended == Ended::TimeLimit
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
        if ended != Ended::IterationLimit {
            break;
        }
    }

    // Summary: phases, memory, the JSON line, the plot.
    let cuts_total: usize = cut_counts.iter().sum();
    let mut times = [
        solve_s,
        comm_s.iter().sum(),
        checkpoint_s,
        comm_s[0],
        comm_s[1],
        comm_s[2],
    ];
    let mut slowest = [0.0f64; 6];
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
        let exact = if opts.exact {
            let found = model::deterministic_equivalent(&inst, table, &initial);
            Some(found.map_err(|e| Fail::Everywhere(format!("--exact: {e}")))?)
        } else {
            None
        };
        let node_ranks = hierarchy.ranks_per_node();
        let summary = Summary {
            iterations: history.len(),
            ended,
            tol: opts.tol,
            cuts: cuts_total,
            seconds: start.elapsed().as_secs_f64(),
            solve_seconds: times[0],
            comm_seconds: times[1],
            comm_split: [times[3], times[4], times[5]],
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
            exact,
        };
        if !opts.quiet {
            report::summary(&summary, history.last());
        }
        if opts.lp_times {
            let mut times = Vec::new();
            for lp in &lps {
                let mine = lp.times();
                times.resize(times.len().max(mine.len()), [SolveTimes::default(); 2]);
                for (all, kinds) in times.iter_mut().zip(mine) {
                    all[0].add(&kinds[0]);
                    all[1].add(&kinds[1]);
                }
            }
            report::lp_times(&times, lps.iter().map(StageLp::retries).sum());
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
fn stage_cuts(pool: &[f64], t: usize, per_stage: usize, count: usize, cut_len: usize) -> &[f64] {
    &pool[t * per_stage..t * per_stage + count * cut_len]
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
