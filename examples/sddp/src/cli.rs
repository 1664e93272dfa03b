//! The command line, parsed alike on every rank (clap): `--help` and `--version` print on rank
//! 0 and every rank exits 0; a bad option prints once, with the usage, and every rank exits 2.

use crate::model::Shape;
use clap::{CommandFactory, Parser, ValueEnum, error::ErrorKind};
use std::path::PathBuf;

/// The most forward passes per iteration: every rank keeps each pass's trial states.
pub const MAX_PASSES: usize = 100_000;

/// When the solver stops, besides `--iterations` and `--time-limit` (which always apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stop {
    /// The lower bound gained less than --tol (relative) over the last 5 iterations and lies
    /// inside the upper bound's 95 % confidence interval (Pereira and Pinto's test with a
    /// stall guard): the policy's cost cannot be told from the bound at this sample size.
    Statistical,
    /// The lower bound gained less than --tol (relative) over the last 5 iterations. Proves
    /// nothing about the gap: the bound may stall below the optimum.
    Stall,
    /// The 95 % upper confidence limit of the policy's cost is within --tol (relative) of the
    /// lower bound: with about 97.5 % confidence the policy's expected cost is at most
    /// (1 + tol) × the optimum. Needs enough paths (--passes) for a narrow interval.
    Gap,
    /// Only --iterations or --time-limit: every run does the same number of iterations.
    Limit,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Statistical => "statistical",
            Stop::Stall => "stall",
            Stop::Gap => "gap",
            Stop::Limit => "limit",
        }
    }
}

/// Stochastic dual dynamic programming (SDDP) for a hydrothermal dispatch problem, under
/// mpirun or srun.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sddp",
    version,
    max_term_width = 100,
    allow_negative_numbers = true,
    // Plain text: under mpirun the output is a pseudo-terminal even when it goes to a log.
    color = clap::ColorChoice::Never
)]
pub struct Options {
    /// Stages of the horizon.
    #[arg(long, default_value_t = 12)]
    pub stages: i64,
    /// Inflow scenarios (openings) per stage.
    #[arg(long, default_value_t = 10)]
    pub scenarios: i64,
    /// Reservoirs (1-3).
    #[arg(long, default_value_t = 2)]
    pub reservoirs: i64,
    /// Storage capacity of each reservoir.
    #[arg(long, default_value_t = 200.0)]
    pub storage_max: f64,
    /// Capacity of each thermal plant.
    #[arg(long, default_value_t = 60.0)]
    pub thermal_max: f64,
    /// Forward passes (sampled paths) per iteration, split across ranks.
    #[arg(long, default_value_t = 8)]
    pub passes: usize,
    /// The most iterations.
    #[arg(long, default_value_t = 40)]
    pub iterations: usize,
    /// Stop after this many seconds (checked once per iteration, the slowest rank's clock).
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// The stopping rule (besides --iterations and --time-limit).
    #[arg(long, value_enum, default_value_t = Stop::Statistical)]
    pub stop: Stop,
    /// Relative tolerance of the stopping rule.
    #[arg(long, default_value_t = 0.001)]
    pub tol: f64,
    /// Seed of the scenario generator and of the sampled paths.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Inflows from a file: one row per (stage, scenario), one value per reservoir.
    #[arg(long, value_name = "PATH")]
    pub scenario_file: Option<PathBuf>,
    /// Write a checkpoint (MPI-IO, collective) to PATH.
    #[arg(long, value_name = "PATH")]
    pub checkpoint: Option<PathBuf>,
    /// Write the checkpoint every K iterations (and at the last).
    #[arg(long, value_name = "K", default_value_t = 1, requires = "checkpoint")]
    pub checkpoint_every: usize,
    /// Go on from a checkpoint, on any rank count.
    #[arg(long, value_name = "PATH")]
    pub resume: Option<PathBuf>,
    /// Progress as CSV rows.
    #[arg(long)]
    pub csv: bool,
    /// A JSON summary line at the end.
    #[arg(long)]
    pub json: bool,
    /// Plot the bounds to PATH (SVG).
    #[arg(long, value_name = "PATH")]
    pub plot: Option<PathBuf>,
    /// Time the LP solves by the number of cuts in the LP, and print the table.
    #[arg(long)]
    pub lp_times: bool,
    /// Also solve the whole scenario tree as one LP (the deterministic equivalent; small
    /// trees only) and print its optimum beside the bounds.
    #[arg(long)]
    pub exact: bool,
    /// No progress lines or summary (the JSON line still prints).
    #[arg(long)]
    pub quiet: bool,
}

impl Options {
    /// The options from `args` (the program name first), checked.
    pub fn parse(
        args: impl IntoIterator<Item = std::ffi::OsString>,
    ) -> Result<Options, clap::Error> {
        let o = Options::try_parse_from(args)?;
        let bad = |message: String| Options::command().error(ErrorKind::ValueValidation, message);
        if o.passes < 1 || o.iterations < 1 || o.checkpoint_every < 1 {
            return Err(bad(
                "--passes, --iterations and --checkpoint-every must be at least 1".into(),
            ));
        }
        if o.passes > MAX_PASSES {
            return Err(bad(format!("--passes must be at most {MAX_PASSES}")));
        }
        let positive = |t: f64| t > 0.0; // false for NaN too
        if !(positive(o.tol) || o.tol == 0.0) || o.time_limit.is_some_and(|t| !positive(t)) {
            return Err(bad(
                "--tol must be at least 0 and --time-limit above 0".into()
            ));
        }
        Ok(o)
    }

    /// Prints what parsing said: help and version to stdout, an error to stderr with the
    /// usage (clap adds it to some errors only). Returns the exit status: 0 or 2.
    pub fn report(e: &clap::Error) -> u8 {
        if !e.use_stderr() {
            let _ = e.print();
            return 0;
        }
        let mut text = e.render().to_string();
        if !text.contains("Usage:") {
            text = format!(
                "{}\n{}\n",
                text.trim_end(),
                Options::command().render_usage()
            );
        }
        // One write, so the launcher does not interleave it with other output.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
        2
    }

    pub fn shape(&self) -> Shape {
        Shape {
            stages: self.stages,
            scenarios: self.scenarios,
            reservoirs: self.reservoirs,
            storage_max: self.storage_max,
            thermal_max: self.thermal_max,
        }
    }
}
