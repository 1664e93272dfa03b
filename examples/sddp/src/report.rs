//! What the user sees: progress lines (or CSV rows), the summary, the JSON line and the plot.

use crate::cli::Stop;
use crate::model::SolveTimes;
use plotters::prelude::*;
use std::path::Path;

/// Iterations whose paths the upper bound pools, and over which the lower bound must stall.
pub const WINDOW: usize = 5;

/// Mean and 95 % confidence half-width of path costs.
pub fn mean_ci(costs: &[f64]) -> (f64, f64) {
    let count = costs.len() as f64;
    let mean = costs.iter().sum::<f64>() / count;
    let var = if costs.len() > 1 {
        costs.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (count - 1.0)
    } else {
        0.0
    };
    (mean, 1.96 * (var / count).sqrt())
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The stopping rule held.
    Rule(Stop),
    IterationLimit,
    TimeLimit,
}

impl Ended {
    /// Its name in the JSON line.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Rule(stop) => stop.name(),
            Ended::IterationLimit => "iteration-limit",
            Ended::TimeLimit => "time-limit",
        }
    }

    /// What it proves.
    pub fn meaning(self, tol: f64) -> String {
        let pct = 100.0 * tol;
        match self {
            Ended::Rule(Stop::Statistical) => format!(
                "the lower bound gained less than {pct} % over {WINDOW} iterations and lies in the \
                 upper bound's 95 % interval: the policy's cost cannot be told from the bound at \
                 this sample size"
            ),
            Ended::Rule(Stop::Stall) => format!(
                "the lower bound gained less than {pct} % over {WINDOW} iterations (nothing is \
                 proved about the gap)"
            ),
            Ended::Rule(Stop::Gap) => format!(
                "the upper bound's 95 % confidence limit is within {pct} % of the lower bound: the \
                 policy's expected cost is at most {pct} % above the optimum (about 97.5 % \
                 confidence)"
            ),
            Ended::Rule(Stop::Limit) | Ended::IterationLimit => {
                "stopped at the iteration limit (nothing is proved about the gap)".into()
            }
            Ended::TimeLimit => {
                "stopped at the time limit (nothing is proved about the gap)".into()
            }
        }
    }
}

/// Whether `stop` holds after `row`, given the earlier iterations: the same on every rank.
pub fn rule_holds(stop: Stop, tol: f64, history: &[Iteration], row: &Iteration) -> bool {
    // The lower bound WINDOW iterations ago: rules wait for a full window of pooled paths.
    let Some(before) = history
        .len()
        .checked_sub(WINDOW)
        .map(|k| history[k].lower_bound)
    else {
        return false;
    };
    let lower = row.lower_bound;
    let stalled = lower - before <= tol * lower.abs();
    // Inside the interval up to the LP solutions' rounding (an interval of width 0 when every
    // path costs the same).
    let inside = lower >= row.upper_mean - row.upper_ci - 1e-9 * lower.abs();
    match stop {
        Stop::Statistical => stalled && inside,
        Stop::Stall => stalled,
        Stop::Gap => row.upper_mean + row.upper_ci - lower <= tol * lower.abs(),
        Stop::Limit => false,
    }
}

/// One iteration's bounds.
#[derive(Debug, Clone)]
pub struct Iteration {
    pub iteration: usize,
    pub lower_bound: f64,
    /// Mean cost of the sampled paths of the last few iterations (the statistical upper bound).
    pub upper_mean: f64,
    /// Half-width of its 95 % confidence interval.
    pub upper_ci: f64,
    /// How many paths the upper bound averages.
    pub paths: usize,
    /// (upper mean − lower bound) / upper mean.
    pub gap: f64,
    pub seconds: f64,
    pub cuts: usize,
}

impl Iteration {
    /// Bounds from the lower bound and the paths' costs, summed in pass order (so every rank
    /// count gives the same numbers).
    pub fn new(
        iteration: usize,
        lower_bound: f64,
        costs: &[f64],
        seconds: f64,
        cuts: usize,
    ) -> Iteration {
        let (mean, ci) = mean_ci(costs);
        Iteration {
            iteration,
            lower_bound,
            upper_mean: mean,
            upper_ci: ci,
            paths: costs.len(),
            gap: (mean - lower_bound) / mean.abs().max(f64::MIN_POSITIVE),
            seconds,
            cuts,
        }
    }

    /// (upper mean + 95 % half-width − lower bound) / |lower bound|: how far above the bound
    /// the policy's expected cost may be.
    pub fn gap_limit(&self) -> f64 {
        (self.upper_mean + self.upper_ci - self.lower_bound)
            / self.lower_bound.abs().max(f64::MIN_POSITIVE)
    }
}

/// The run's totals.
#[derive(Debug, Clone)]
pub struct Summary {
    pub iterations: usize,
    pub ended: Ended,
    pub tol: f64,
    pub cuts: usize,
    pub seconds: f64,
    /// Slowest rank's time in LP solves.
    pub solve_seconds: f64,
    /// Slowest rank's time in collectives, window epochs and the barrier.
    pub comm_seconds: f64,
    /// The same by phase (each the slowest rank's): the forward passes' allreduce and barrier,
    /// the backward pass's cut exchanges and pool epochs, the bounds' allreduce.
    pub comm_split: [f64; 3],
    /// Checkpoints written, the slowest rank's time writing them, the last one's size.
    pub checkpoints: usize,
    pub checkpoint_seconds: f64,
    pub checkpoint_bytes: u64,
    /// Iterations this run made (not counting those a resumed checkpoint held).
    pub iterations_run: usize,
    pub ranks: usize,
    pub nodes: usize,
    pub busiest_node: usize,
    pub scenario_bytes: usize,
    pub pool_bytes: usize,
    /// FNV-1a of every cut's bits, in stage and pass order.
    pub digest: u64,
    /// The deterministic equivalent's optimum and node count, when asked for.
    pub exact: Option<(f64, usize)>,
}

pub fn header(line: &str, csv: bool) {
    println!("{line}");
    if csv {
        println!("iteration,lower_bound,upper_mean,upper_ci95,paths,gap,seconds,cuts");
    } else {
        println!(
            "{:>4}  {:>12}  {:>12}  {:>9}  {:>5}  {:>8}  {:>7}  {:>6}",
            "iter", "lower bound", "upper mean", "± 95% CI", "paths", "gap", "time s", "cuts"
        );
    }
}

pub fn progress(r: &Iteration, csv: bool) {
    if csv {
        println!(
            "{},{:.9},{:.9},{:.9},{},{:.9},{:.6},{}",
            r.iteration, r.lower_bound, r.upper_mean, r.upper_ci, r.paths, r.gap, r.seconds, r.cuts
        );
    } else {
        println!(
            "{:>4}  {:>12.3}  {:>12.3}  {:>9.3}  {:>5}  {:>7.2}%  {:>7.3}  {:>6}",
            r.iteration,
            r.lower_bound,
            r.upper_mean,
            r.upper_ci,
            r.paths,
            100.0 * r.gap,
            r.seconds,
            r.cuts
        );
    }
}

pub fn summary(s: &Summary, last: Option<&Iteration>) {
    let kib = |b: usize| b as f64 / 1024.0;
    let (lb, ub) = last.map_or((f64::NAN, f64::NAN), |r| (r.lower_bound, r.upper_mean));
    println!(
        "after {} iteration(s): lower bound {lb:.3}, upper bound {ub:.3} ± {:.3} (gap {:.2} %), {} cuts, cut digest {:016x}",
        s.iterations,
        last.map_or(f64::NAN, |r| r.upper_ci),
        last.map_or(f64::NAN, |r| 100.0 * r.gap),
        s.cuts,
        s.digest
    );
    println!(
        "stopped by {}: {}; the policy's cost is at most {:.3} % above the lower bound (95 % upper limit)",
        s.ended.name(),
        s.ended.meaning(s.tol),
        last.map_or(f64::NAN, |r| 100.0 * r.gap_limit())
    );
    if let Some((optimum, nodes)) = s.exact {
        println!(
            "deterministic equivalent ({nodes} nodes, one LP): optimum {optimum:.9}; lower bound {:+.3e} relative to it",
            (lb - optimum) / optimum.abs().max(f64::MIN_POSITIVE)
        );
    }
    let total = s.solve_seconds + s.comm_seconds;
    println!(
        "time: {:.2} s on {} rank(s); slowest rank: {:.2} s solving LPs, {:.2} s communicating ({:.1} % in MPI: forward {:.3} s, backward {:.3} s, bounds {:.3} s, waiting included)",
        s.seconds,
        s.ranks,
        s.solve_seconds,
        s.comm_seconds,
        100.0 * s.comm_seconds / total.max(f64::MIN_POSITIVE),
        s.comm_split[0],
        s.comm_split[1],
        s.comm_split[2]
    );
    println!(
        "memory per node: scenarios {:.1} KiB + cut pool {:.1} KiB held once, against {:.1} KiB if each of the busiest node's {} rank(s) held a copy",
        kib(s.scenario_bytes),
        kib(s.pool_bytes),
        kib((s.scenario_bytes + s.pool_bytes) * s.busiest_node),
        s.busiest_node
    );
    if s.checkpoints > 0 {
        println!(
            "checkpoints: {} written ({:.1} KiB the last) in {:.3} s: {:.4} s per iteration, {:.2} % of the run (slowest rank)",
            s.checkpoints,
            kib(s.checkpoint_bytes as usize),
            s.checkpoint_seconds,
            s.checkpoint_seconds / s.iterations_run.max(1) as f64,
            100.0 * s.checkpoint_seconds / s.seconds.max(f64::MIN_POSITIVE)
        );
    }
}

/// The LP solve times by the number of cuts in the LP (`times[c]`: from a basis, from the
/// slack basis), at the cut counts nearest 0, 100, 200 and 400 that were solved, and how many
/// solves were retried.
pub fn lp_times(times: &[[SolveTimes; 2]], retries: u64) {
    println!(
        "LP solves by cuts in the LP (this rank): warm = from a basis, cold = from the slack basis"
    );
    println!(
        "{:>6}  {:>7}  {:>9}  {:>7}  {:>7}  {:>9}  {:>7}",
        "cuts", "warm", "µs/solve", "iter", "cold", "µs/solve", "iter"
    );
    let mut shown = Vec::new();
    for target in [0usize, 100, 200, 400] {
        let Some(cuts) = (0..times.len())
            .filter(|&c| times[c][0].solves + times[c][1].solves > 0)
            .min_by_key(|&c| c.abs_diff(target))
        else {
            break;
        };
        if shown.contains(&cuts) {
            continue;
        }
        shown.push(cuts);
        let cell = |k: &SolveTimes| {
            let per = k.solves.max(1) as f64;
            format!(
                "{:>7}  {:>9.1}  {:>7.1}",
                k.solves,
                1e6 * k.seconds / per,
                k.iterations as f64 / per
            )
        };
        println!(
            "{cuts:>6}  {}  {}",
            cell(&times[cuts][0]),
            cell(&times[cuts][1])
        );
    }
    println!("retried (no optimum from their start): {retries} solve(s)");
}

/// The JSON summary line (serde_json: a bound that is not a number is `null`).
pub fn json(s: &Summary, last: Option<&Iteration>) -> String {
    let of = |f: fn(&Iteration) -> f64| last.map_or(f64::NAN, f);
    serde_json::json!({
        "iterations": s.iterations,
        "lower_bound": of(|r| r.lower_bound),
        "upper_bound_mean": of(|r| r.upper_mean),
        "upper_bound_ci": of(|r| r.upper_ci),
        "gap": of(|r| r.gap),
        "gap_limit": of(Iteration::gap_limit),
        "cuts": s.cuts,
        "seconds": s.seconds,
        "converged": matches!(s.ended, Ended::Rule(_)),
        "stopped_by": s.ended.name(),
        "ranks": s.ranks,
        "nodes": s.nodes,
        "solve_seconds": s.solve_seconds,
        "comm_seconds": s.comm_seconds,
        "comm_forward_seconds": s.comm_split[0],
        "comm_backward_seconds": s.comm_split[1],
        "comm_bounds_seconds": s.comm_split[2],
        "checkpoints": s.checkpoints,
        "checkpoint_seconds": s.checkpoint_seconds,
        "cut_digest": format!("{:016x}", s.digest),
        "exact_optimum": s.exact.map(|(optimum, _)| optimum),
    })
    .to_string()
}

/// FNV-1a over the bits of every stored cut.
pub fn digest(pool: &[f64], counts: &[usize], per_stage: usize, cut_len: usize) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for (t, &count) in counts.iter().enumerate() {
        for x in &pool[t * per_stage..t * per_stage + count * cut_len] {
            for b in x.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

/// The bounds per iteration as an SVG: the lower bound, the upper mean and its 95 % interval.
pub fn plot(path: &Path, rows: &[Iteration]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let lo = rows
        .iter()
        .map(|r| r.lower_bound.min(r.upper_mean - r.upper_ci))
        .fold(f64::INFINITY, f64::min);
    let hi = rows
        .iter()
        .map(|r| r.upper_mean + r.upper_ci)
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = 0.05 * (hi - lo).abs().max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption("SDDP bounds per iteration", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.5f64..rows.len() as f64 + 0.5, (lo - pad)..(hi + pad))?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("expected cost")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    chart.draw_series(rows.iter().map(|r| {
        let x = r.iteration as f64;
        PathElement::new(
            vec![
                (x, r.upper_mean - r.upper_ci),
                (x, r.upper_mean + r.upper_ci),
            ],
            RED.mix(0.4).stroke_width(2),
        )
    }))?;
    chart
        .draw_series(LineSeries::new(
            rows.iter().map(|r| (r.iteration as f64, r.upper_mean)),
            RED.stroke_width(2),
        ))?
        .label("upper bound: mean of the last iterations' paths (bars: 95 % CI)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            rows.iter().map(|r| (r.iteration as f64, r.lower_bound)),
            BLUE.stroke_width(2),
        ))?
        .label("lower bound")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An iteration with this lower bound and upper bound `mean ± ci`.
    fn row(lower: f64, mean: f64, ci: f64) -> Iteration {
        Iteration {
            iteration: 0,
            lower_bound: lower,
            upper_mean: mean,
            upper_ci: ci,
            paths: 40,
            gap: 0.0,
            seconds: 0.0,
            cuts: 0,
        }
    }

    /// Each rule fires exactly where it says, and none before a full window.
    #[test]
    fn stopping_rules_say_what_they_check() {
        let tol = 0.001;
        let flat: Vec<Iteration> = (0..WINDOW).map(|_| row(100.0, 130.0, 40.0)).collect();
        let rising: Vec<Iteration> = (0..WINDOW).map(|_| row(90.0, 130.0, 40.0)).collect();
        let holds = |stop, history: &[Iteration], r: &Iteration| rule_holds(stop, tol, history, r);
        // Stalled and inside the interval (130 ± 40 holds 100).
        let inside = row(100.05, 130.0, 40.0);
        assert!(holds(Stop::Statistical, &flat, &inside));
        assert!(holds(Stop::Stall, &flat, &inside));
        assert!(
            !holds(Stop::Gap, &flat, &inside),
            "a 70 % gap limit is no proof"
        );
        assert!(!holds(Stop::Limit, &flat, &inside));
        // Stalled but below the interval: only the stall rule.
        let below = row(100.05, 150.0, 40.0);
        assert!(!holds(Stop::Statistical, &flat, &below));
        assert!(holds(Stop::Stall, &flat, &below));
        // Still rising: neither.
        assert!(!holds(Stop::Statistical, &rising, &inside));
        assert!(!holds(Stop::Stall, &rising, &inside));
        // The 95 % upper limit within tol of the lower bound: the gap rule, rising or not.
        let proven = row(100.0, 100.05, 0.04);
        assert!(holds(Stop::Gap, &rising, &proven));
        assert!(!holds(Stop::Gap, &rising, &row(100.0, 100.05, 0.06)));
        // No rule before WINDOW earlier iterations.
        assert!(!holds(Stop::Stall, &flat[1..], &inside));
        assert!(!holds(Stop::Gap, &flat[1..], &proven));
        // Every path costing the same: an interval of width 0 still holds the bound.
        assert!(holds(
            Stop::Statistical,
            &flat,
            &row(100.0, 100.0 + 1e-12, 0.0)
        ));
        assert!((proven.gap_limit() - 0.0009).abs() < 1e-12);
    }
}
