//! What the user sees: progress lines (or CSV rows), the summary, the JSON line and the plot.

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
}

/// The run's totals.
#[derive(Debug, Clone)]
pub struct Summary {
    pub iterations: usize,
    pub converged: bool,
    pub tol: f64,
    pub cuts: usize,
    pub seconds: f64,
    /// Slowest rank's time in LP solves.
    pub solve_seconds: f64,
    /// Slowest rank's time in collectives, window epochs and the barrier.
    pub comm_seconds: f64,
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
        "{} after {} iteration(s): lower bound {lb:.3}, upper bound {ub:.3} ± {:.3} (gap {:.2} %), {} cuts, cut digest {:016x}",
        if s.converged {
            format!(
                "converged (lower bound gained < {} % over {WINDOW} iterations and lies in the upper bound's 95 % interval)",
                100.0 * s.tol
            )
        } else {
            "stopped at the iteration limit".into()
        },
        s.iterations,
        last.map_or(f64::NAN, |r| r.upper_ci),
        last.map_or(f64::NAN, |r| 100.0 * r.gap),
        s.cuts,
        s.digest
    );
    let total = s.solve_seconds + s.comm_seconds;
    println!(
        "time: {:.2} s on {} rank(s); slowest rank: {:.2} s solving LPs, {:.2} s communicating ({:.1} % in MPI)",
        s.seconds,
        s.ranks,
        s.solve_seconds,
        s.comm_seconds,
        100.0 * s.comm_seconds / total.max(f64::MIN_POSITIVE)
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

pub fn json(s: &Summary, last: Option<&Iteration>) -> String {
    let (lb, ub, ci, gap) = last.map_or((f64::NAN, f64::NAN, f64::NAN, f64::NAN), |r| {
        (r.lower_bound, r.upper_mean, r.upper_ci, r.gap)
    });
    format!(
        "{{\"iterations\":{},\"lower_bound\":{lb},\"upper_bound_mean\":{ub},\"upper_bound_ci\":{ci},\"gap\":{gap},\"cuts\":{},\"seconds\":{:.6},\"converged\":{},\"ranks\":{},\"nodes\":{},\"solve_seconds\":{:.6},\"comm_seconds\":{:.6},\"checkpoints\":{},\"checkpoint_seconds\":{:.6},\"cut_digest\":\"{:016x}\"}}",
        s.iterations,
        s.cuts,
        s.seconds,
        s.converged,
        s.ranks,
        s.nodes,
        s.solve_seconds,
        s.comm_seconds,
        s.checkpoints,
        s.checkpoint_seconds,
        s.digest
    )
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
