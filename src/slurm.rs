//! Slurm: the allocation and the step this process runs in, from the `SLURM_*` variables that
//! `sbatch`, `salloc` and `srun` set (Slurm's manual pages, "OUTPUT ENVIRONMENT VARIABLES").
//! Not part of the MPI standard; the launcher side of MPI-4.0 §11.5 ("Portable MPI Process
//! Startup").
//!
//! Parsing is separate from reading the environment: [`expand_hostlist`], [`expand_counts`] and
//! [`parse_memory_mib`] take a string and never panic, whatever it holds;
//! [`SlurmJob::from_vars`] builds the whole picture from any lookup function, and
//! [`SlurmJob::from_env`] from this process's environment. A malformed value is
//! [`ErrorKind::Environment`] naming the variable.
//!
//! ```
//! use ferrompi::slurm::{expand_counts, expand_hostlist, SlurmJob};
//!
//! assert_eq!(expand_hostlist("cn[08-10],gpu1")?, ["cn08", "cn09", "cn10", "gpu1"]);
//! assert_eq!(expand_counts("2(x3),1")?, [2, 2, 2, 1]);
//!
//! // What a rank of `sbatch -N 2 -n 4 -c 2 --mem=8G` + `srun` sees:
//! let env = [
//!     ("SLURM_JOB_ID", "42"), ("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "3"),
//!     ("SLURM_LOCALID", "1"), ("SLURM_NODEID", "1"), ("SLURM_NTASKS", "4"),
//!     ("SLURM_JOB_NUM_NODES", "2"), ("SLURM_CPUS_PER_TASK", "2"),
//!     ("SLURM_TASKS_PER_NODE", "2(x2)"), ("SLURM_JOB_NODELIST", "cn[01-02]"),
//!     ("SLURM_MEM_PER_NODE", "8192"),
//! ];
//! let job = SlurmJob::from_vars(|name| {
//!     env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
//! })?.expect("a Slurm job");
//! assert_eq!(job.proc_id, Some(3));
//! assert_eq!(job.job_nodes, ["cn01", "cn02"]);
//! assert_eq!(job.threads_per_rank(), Some(2));
//! assert_eq!(job.memory_per_rank(), Some(4096 << 20)); // 8 GiB over 2 tasks on this node
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{ErrorKind, ParseError, Result};
use std::fmt;

/// The most names or counts one expression may expand to. A larger expansion is an error,
/// not an allocation of gigabytes (`n[0-999999999]`).
pub const MAX_EXPANSION: usize = 1 << 20;

/// The most bytes of names one hostlist may expand to: 32 MiB, thirty times what a million
/// nodes named like `nid001234` take. Long names or wide zero padding in a few kilobytes of
/// hostlist (`n[0000…0000-99999]`) are an error, not gigabytes.
pub const MAX_EXPANSION_BYTES: usize = 32 << 20;

fn fail<T>(reason: impl Into<String>) -> std::result::Result<T, ParseError> {
    Err(ParseError::new(reason))
}

/// What is left of an expansion's bounds ([`MAX_EXPANSION`] names, [`MAX_EXPANSION_BYTES`]
/// bytes), checked before anything that would exceed them is built.
#[derive(Debug, Clone, Copy)]
struct Budget {
    names: usize,
    bytes: usize,
}

impl Budget {
    const FULL: Budget = Budget {
        names: MAX_EXPANSION,
        bytes: MAX_EXPANSION_BYTES,
    };

    /// Whether `names` names of `bytes` bytes in all (`None`: past `usize`) fit what is left.
    fn admits(
        self,
        names: Option<usize>,
        bytes: Option<usize>,
    ) -> std::result::Result<(), ParseError> {
        if names.is_none_or(|n| n > self.names) {
            return fail(format!("more than {MAX_EXPANSION} names"));
        }
        if bytes.is_none_or(|b| b > self.bytes) {
            return fail(format!("more than {MAX_EXPANSION_BYTES} bytes of names"));
        }
        Ok(())
    }

    /// Takes `names` names of `bytes` bytes from what is left, if they fit.
    fn take(&mut self, names: usize, bytes: usize) -> std::result::Result<(), ParseError> {
        self.admits(Some(names), Some(bytes))?;
        self.names -= names;
        self.bytes -= bytes;
        Ok(())
    }
}

/// Splits at the commas and white space that are not inside brackets (`scontrol show
/// hostnames` takes both as separators).
fn top_level_items(expr: &str) -> std::result::Result<Vec<&str>, ParseError> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in expr.char_indices() {
        match c {
            '[' if depth > 0 => return fail("nested '['"),
            '[' => depth = 1,
            ']' if depth == 0 => return fail("']' without '['"),
            ']' => depth = 0,
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                items.push(&expr[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if depth > 0 {
        return fail("'[' without ']'");
    }
    items.push(&expr[start..]);
    Ok(items)
}

/// One bracket group `[1-3,07,10-12]` as the strings it stands for and their bytes in all,
/// zero padding kept: a range is as wide as its lower bound (`08-10` gives `08 09 10`).
/// Never more than `budget` allows.
fn expand_brackets(
    inner: &str,
    budget: Budget,
) -> std::result::Result<(Vec<String>, usize), ParseError> {
    let (mut out, mut bytes) = (Vec::new(), 0usize);
    for part in inner.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !digits(hi) {
            return fail(format!("'{part}' is not a number or a range a-b"));
        }
        let (Ok(first), Ok(last)) = (lo.parse::<u64>(), hi.parse::<u64>()) else {
            return fail(format!("'{part}' has a number too large"));
        };
        if last < first {
            return fail(format!("range '{part}' ends before it starts"));
        }
        // Each name is as wide as `lo`, or as its own digits, which are at most `hi`'s.
        let count = usize::try_from(last - first)
            .ok()
            .and_then(|n| n.checked_add(1));
        let widest = lo.len().max(hi.len());
        let names = count.and_then(|n| n.checked_add(out.len()));
        let total = count
            .and_then(|n| n.checked_mul(widest))
            .and_then(|b| b.checked_add(bytes));
        budget.admits(names, total)?;
        let width = lo.len();
        for n in first..=last {
            let name = format!("{n:0width$}");
            bytes += name.len();
            out.push(name);
        }
    }
    Ok((out, bytes))
}

/// Expands a Slurm hostlist expression (`SLURM_JOB_NODELIST`, `SLURM_STEP_NODELIST`) to host
/// names, in Slurm's order: comma (or white space) separated lists, ranges with zero padding,
/// and several bracket groups in one name (`r[1-2]n[01-02]` is `r1n01 r1n02 r2n01 r2n02`), as
/// `scontrol show hostnames` prints them (checked against Slurm 22.05's). One extension: text
/// after the last bracket group (`gpu[1-2]-ib`) is kept, where that `scontrol` calls the list
/// invalid.
///
/// ```
/// use ferrompi::slurm::expand_hostlist;
/// assert_eq!(expand_hostlist("node[1-3,7],gpu01")?, ["node1", "node2", "node3", "node7", "gpu01"]);
/// assert_eq!(expand_hostlist("n[1-2] n9")?, ["n1", "n2", "n9"]); // white space separates too
/// # Ok::<(), ferrompi::ParseError>(())
/// ```
///
/// # Errors
/// [`ParseError`] for unbalanced or nested brackets, a bound that is not a number, a range that
/// ends before it starts, or more than [`MAX_EXPANSION`] names or [`MAX_EXPANSION_BYTES`]
/// bytes of names (checked before they are made: the time and memory an expression takes are
/// bounded whatever it holds).
pub fn expand_hostlist(expr: &str) -> std::result::Result<Vec<String>, ParseError> {
    let mut hosts = Vec::new();
    let mut budget = Budget::FULL;
    // Empty items (`a,,b`) are skipped, as Slurm's own parser does.
    for item in top_level_items(expr.trim())? {
        if item.is_empty() {
            continue;
        }
        // The names so far, each to be extended by the next literal or bracket group, and
        // their bytes in all.
        let (mut names, mut bytes) = (vec![String::new()], 0usize);
        let mut rest = item;
        while !rest.is_empty() {
            let literal_end = rest.find('[').unwrap_or(rest.len());
            let literal = &rest[..literal_end];
            let grown = names
                .len()
                .checked_mul(literal.len())
                .and_then(|b| b.checked_add(bytes));
            budget.admits(Some(names.len()), grown)?;
            names.iter_mut().for_each(|n| n.push_str(literal));
            bytes = grown.unwrap_or(bytes);
            rest = &rest[literal_end..];
            if let Some(group) = rest.strip_prefix('[') {
                // top_level_items checked that every '[' has its ']'.
                let close = group.find(']').unwrap_or(group.len());
                let (values, value_bytes) = expand_brackets(&group[..close], budget)?;
                // Every name so far once per value: check the product before making it.
                let count = names.len().checked_mul(values.len());
                let total = bytes.checked_mul(values.len()).and_then(|b| {
                    value_bytes
                        .checked_mul(names.len())
                        .and_then(|v| b.checked_add(v))
                });
                budget.admits(count, total)?;
                names = names
                    .iter()
                    .flat_map(|n| values.iter().map(move |v| format!("{n}{v}")))
                    .collect();
                bytes = total.unwrap_or(bytes);
                rest = group.get(close + 1..).unwrap_or("");
            }
        }
        budget.take(names.len(), bytes)?;
        hosts.extend(names);
    }
    Ok(hosts)
}

/// Expands Slurm's compressed per-node counts (`SLURM_TASKS_PER_NODE`,
/// `SLURM_JOB_CPUS_PER_NODE`): `2(x3),1` is `[2, 2, 2, 1]`.
///
/// ```
/// use ferrompi::slurm::expand_counts;
/// assert_eq!(expand_counts("2(x3),1")?, [2, 2, 2, 1]); // SLURM_TASKS_PER_NODE's form
/// # Ok::<(), ferrompi::ParseError>(())
/// ```
///
/// # Errors
/// [`ParseError`] for an empty item, a count or repetition that is not a number, a repetition
/// of zero, or more than [`MAX_EXPANSION`] counts.
pub fn expand_counts(expr: &str) -> std::result::Result<Vec<u32>, ParseError> {
    let mut out = Vec::new();
    for item in expr.trim().split(',') {
        let (count, times) = match item.split_once("(x") {
            Some((count, rest)) => match rest.strip_suffix(')') {
                Some(times) => (count, times),
                None => return fail(format!("'{item}' lacks its ')'")),
            },
            None => (item, "1"),
        };
        let number = |s: &str| match s.parse::<u32>() {
            Ok(n) if s.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => fail(format!("'{s}' in '{item}' is not a count")),
        };
        let (count, times) = (number(count)?, number(times)?);
        if times == 0 {
            return fail(format!("'{item}' repeats zero times"));
        }
        if times as usize > MAX_EXPANSION - out.len() {
            return fail(format!("more than {MAX_EXPANSION} counts"));
        }
        out.extend(std::iter::repeat_n(count, times as usize));
    }
    Ok(out)
}

/// Parses a Slurm memory size (`SLURM_MEM_PER_NODE`, `SLURM_MEM_PER_CPU`) to MiB: a plain
/// number is MiB, as Slurm exports them; a `K`, `M`, `G` or `T` suffix (as `--mem` accepts) is
/// honoured.
///
/// ```
/// use ferrompi::slurm::parse_memory_mib;
/// assert_eq!(parse_memory_mib("4G")?, 4096);
/// assert_eq!(parse_memory_mib("512")?, 512); // MiB when no unit
/// # Ok::<(), ferrompi::ParseError>(())
/// ```
///
/// # Errors
/// [`ParseError`] for anything else, or a size past `u64` MiB.
pub fn parse_memory_mib(value: &str) -> std::result::Result<u64, ParseError> {
    let value = value.trim();
    let (digits, unit) = match value.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&value[..i], c.to_ascii_uppercase()),
        _ => (value, 'M'),
    };
    let Ok(n) = digits.parse::<u64>() else {
        return fail(format!(
            "'{value}' is not a size (a number of MiB, or with K/M/G/T)"
        ));
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return fail(format!("'{value}' is not a size"));
    }
    let mib = match unit {
        'K' => Some(n.div_ceil(1024)),
        'M' => Some(n),
        'G' => n.checked_mul(1024),
        'T' => n.checked_mul(1024 * 1024),
        other => return fail(format!("unknown unit '{other}' in '{value}'")),
    };
    mib.map_or_else(|| fail(format!("'{value}' is too large")), Ok)
}

/// This process's Slurm job and step, as the `SLURM_*` variables describe them. Fields are
/// `None` (or empty) where Slurm did not set the variable: `SLURM_CPUS_PER_TASK` only exists
/// with `-c`, `SLURM_MEM_PER_NODE` only inside an allocation made with `--mem`, the step
/// fields only under `srun`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SlurmJob {
    /// `SLURM_JOB_ID` (or the older `SLURM_JOBID`).
    pub job_id: u64,
    /// `SLURM_STEP_ID`: set under `srun`, absent in a batch script.
    pub step_id: Option<u64>,
    /// `SLURM_PROCID`: this task's rank in the step (the MPI rank in `MPI_COMM_WORLD`).
    pub proc_id: Option<u32>,
    /// `SLURM_LOCALID`: this task's index among the step's tasks on its node.
    pub local_id: Option<u32>,
    /// `SLURM_NODEID`: this node's index among the step's nodes.
    pub node_id: Option<u32>,
    /// `SLURM_NTASKS` (or `SLURM_NPROCS`).
    pub ntasks: Option<u32>,
    /// `SLURM_JOB_NUM_NODES` (or `SLURM_NNODES`): nodes in the job.
    pub num_nodes: Option<u32>,
    /// `SLURM_CPUS_PER_TASK`: the `-c` asked for.
    pub cpus_per_task: Option<u32>,
    /// `SLURM_CPUS_ON_NODE`: CPUs the job has on this node.
    pub cpus_on_node: Option<u32>,
    /// `SLURM_JOB_CPUS_PER_NODE`, expanded: CPUs of the job on each of its nodes.
    pub job_cpus_per_node: Vec<u32>,
    /// `SLURM_STEP_TASKS_PER_NODE` under `srun`, else `SLURM_TASKS_PER_NODE`, expanded: tasks
    /// on each node, in node order.
    pub tasks_per_node: Vec<u32>,
    /// `SLURM_MEM_PER_NODE` in MiB (`--mem`).
    pub mem_per_node_mib: Option<u64>,
    /// `SLURM_MEM_PER_CPU` in MiB (`--mem-per-cpu`).
    pub mem_per_cpu_mib: Option<u64>,
    /// `SLURM_JOB_NODELIST` (or `SLURM_NODELIST`), expanded.
    pub job_nodes: Vec<String>,
    /// `SLURM_STEP_NODELIST`, expanded: the nodes of this step.
    pub step_nodes: Vec<String>,
    /// `SLURMD_NODENAME`: Slurm's name of this node.
    pub node_name: Option<String>,
}

impl SlurmJob {
    /// Reads this process's environment: `Ok(None)` outside Slurm (no `SLURM_JOB_ID`).
    ///
    /// ```
    /// match ferrompi::slurm::SlurmJob::from_env()? {
    ///     Some(job) => println!("Slurm job {}", job.job_id),
    ///     None => println!("not under Slurm"),
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Environment`] naming the first malformed variable.
    pub fn from_env() -> Result<Option<SlurmJob>> {
        SlurmJob::from_vars(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Builds the job from `lookup`, which gives a variable's value or `None`: the
    /// environment, a saved dump, a test's table.
    ///
    /// ```
    /// use ferrompi::slurm::SlurmJob;
    /// let vars = [("SLURM_JOB_ID", "42"), ("SLURM_CPUS_PER_TASK", "8"), ("SLURM_NODEID", "0"),
    ///             ("SLURM_STEP_TASKS_PER_NODE", "2(x2)")];
    /// let lookup = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    /// let job = SlurmJob::from_vars(lookup)?.expect("SLURM_JOB_ID is set");
    /// assert_eq!((job.job_id, job.cpus_per_task), (42, Some(8)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Environment`] naming the first malformed variable.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<SlurmJob>> {
        let vars = Vars(&lookup);
        let Some(job_id) = vars.first(&["SLURM_JOB_ID", "SLURM_JOBID"], parse_number)? else {
            return Ok(None);
        };
        let step = |name| vars.first(&[name], parse_number);
        let count = |names: &[&'static str]| vars.first(names, parse_number);
        let tasks_per_node = vars
            .first(
                &["SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"],
                expand_counts,
            )?
            .unwrap_or_default();
        Ok(Some(SlurmJob {
            job_id,
            step_id: step("SLURM_STEP_ID")?,
            proc_id: count(&["SLURM_PROCID"])?,
            local_id: count(&["SLURM_LOCALID"])?,
            node_id: count(&["SLURM_NODEID"])?,
            ntasks: count(&["SLURM_NTASKS", "SLURM_NPROCS"])?,
            num_nodes: count(&["SLURM_JOB_NUM_NODES", "SLURM_NNODES"])?,
            cpus_per_task: count(&["SLURM_CPUS_PER_TASK"])?,
            cpus_on_node: count(&["SLURM_CPUS_ON_NODE"])?,
            job_cpus_per_node: vars
                .first(&["SLURM_JOB_CPUS_PER_NODE"], expand_counts)?
                .unwrap_or_default(),
            tasks_per_node,
            mem_per_node_mib: vars.first(&["SLURM_MEM_PER_NODE"], parse_memory_mib)?,
            mem_per_cpu_mib: vars.first(&["SLURM_MEM_PER_CPU"], parse_memory_mib)?,
            job_nodes: vars
                .first(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"], expand_hostlist)?
                .unwrap_or_default(),
            step_nodes: vars
                .first(&["SLURM_STEP_NODELIST"], expand_hostlist)?
                .unwrap_or_default(),
            node_name: lookup("SLURMD_NODENAME"),
        }))
    }

    /// Tasks of this step on this node: `tasks_per_node[node_id]`.
    ///
    /// ```
    /// use ferrompi::slurm::SlurmJob;
    /// let vars = [("SLURM_JOB_ID", "7"), ("SLURM_NODEID", "1"), ("SLURM_STEP_TASKS_PER_NODE", "4,2")];
    /// let lookup = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    /// let job = SlurmJob::from_vars(lookup)?.expect("in a job");
    /// assert_eq!(job.tasks_on_node(), Some(2));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn tasks_on_node(&self) -> Option<u32> {
        let node = usize::try_from(self.node_id?).ok()?;
        self.tasks_per_node.get(node).copied()
    }

    /// Threads each rank should run: `-c` (`SLURM_CPUS_PER_TASK`) when given, else this node's
    /// CPUs shared by its tasks (`SLURM_CPUS_ON_NODE / tasks on node`, at least 1).
    ///
    /// ```
    /// use ferrompi::slurm::SlurmJob;
    /// let vars = [("SLURM_JOB_ID", "7"), ("SLURM_CPUS_PER_TASK", "16")];
    /// let lookup = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    /// let job = SlurmJob::from_vars(lookup)?.expect("in a job");
    /// assert_eq!(job.threads_per_rank(), Some(16));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn threads_per_rank(&self) -> Option<u32> {
        if let Some(c) = self.cpus_per_task {
            return Some(c.max(1));
        }
        Some((self.cpus_on_node? / self.tasks_on_node()?.max(1)).max(1))
    }

    /// Memory each rank may use, in bytes: `--mem-per-cpu` times this rank's CPUs, else
    /// `--mem` shared by the tasks on this node. `None` when the job set neither (a plain
    /// `srun --mem` exports no variable).
    ///
    /// ```
    /// use ferrompi::slurm::SlurmJob;
    /// let vars = [("SLURM_JOB_ID", "7"), ("SLURM_MEM_PER_CPU", "2048"), ("SLURM_CPUS_PER_TASK", "4")];
    /// let lookup = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    /// let job = SlurmJob::from_vars(lookup)?.expect("in a job");
    /// assert_eq!(job.memory_per_rank(), Some(8192 << 20)); // bytes
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn memory_per_rank(&self) -> Option<u64> {
        let mib = match (self.mem_per_cpu_mib, self.mem_per_node_mib) {
            (Some(per_cpu), _) => per_cpu.checked_mul(u64::from(self.threads_per_rank()?))?,
            (None, Some(per_node)) => per_node / u64::from(self.tasks_on_node()?.max(1)),
            (None, None) => return None,
        };
        mib.checked_mul(1 << 20)
    }
}

impl fmt::Display for SlurmJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn opt<T: fmt::Display>(v: Option<T>) -> String {
            v.map_or_else(|| "-".to_string(), |v| v.to_string())
        }
        write!(f, "job {}", self.job_id)?;
        if let Some(step) = self.step_id {
            write!(f, ".{step}")?;
        }
        write!(
            f,
            ": task {} of {} (local {}), node {} of {} ({}), {} task(s) here, cpus/task {}, \
             threads/rank {}, memory/rank {}",
            opt(self.proc_id),
            opt(self.ntasks),
            opt(self.local_id),
            opt(self.node_id),
            opt(self.num_nodes),
            self.node_name.as_deref().unwrap_or("-"),
            opt(self.tasks_on_node()),
            opt(self.cpus_per_task),
            opt(self.threads_per_rank()),
            opt(self.memory_per_rank().map(|b| format!("{} MiB", b >> 20))),
        )
    }
}

fn parse_number<T: std::str::FromStr>(value: &str) -> std::result::Result<T, ParseError> {
    match value.trim().parse() {
        Ok(n) if !value.trim().starts_with('+') => Ok(n),
        _ => fail(format!("'{value}' is not a non-negative number")),
    }
}

/// A lookup, with the first of several names read and parsed.
struct Vars<'a, F>(&'a F);

impl<F: Fn(&str) -> Option<String>> Vars<'_, F> {
    fn first<T>(
        &self,
        names: &[&'static str],
        parse: impl Fn(&str) -> std::result::Result<T, ParseError>,
    ) -> Result<Option<T>> {
        for name in names {
            if let Some(value) = (self.0)(name) {
                return parse(&value).map(Some).map_err(|e| {
                    ErrorKind::Environment {
                        variable: (*name).to_string(),
                        value,
                        reason: e.to_string(),
                    }
                    .into()
                });
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(vars: &[(&str, &str)]) -> Result<Option<SlurmJob>> {
        SlurmJob::from_vars(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_string())
        })
    }

    #[test]
    fn hostlists() {
        let cases: &[(&str, &[&str])] = &[
            ("n1", &["n1"]),
            ("n[1-3]", &["n1", "n2", "n3"]),
            ("n[1-3,5]", &["n1", "n2", "n3", "n5"]),
            ("cn[008-011]", &["cn008", "cn009", "cn010", "cn011"]),
            ("a[9-10]", &["a9", "a10"]),
            ("a,b,c", &["a", "b", "c"]),
            (
                "n[1-2],gpu[01-02]-ib",
                &["n1", "n2", "gpu01-ib", "gpu02-ib"],
            ),
            ("r[1-2]n[01-02]", &["r1n01", "r1n02", "r2n01", "r2n02"]),
            ("node-1.cluster", &["node-1.cluster"]),
            ("[1-2]", &["1", "2"]),
            ("x[0]", &["x0"]),
            ("a,,b", &["a", "b"]),
            ("", &[]),
        ];
        for (expr, want) in cases {
            assert_eq!(expand_hostlist(expr).unwrap(), *want, "{expr}");
        }
        for bad in [
            "n[",
            "n]",
            "n[1-",
            "n[3-1]",
            "n[a-b]",
            "n[[1]]",
            "n[]",
            "n[1-2-3]",
            "n[99999999999999999999]",
            "n[0-99999999]",
            "n[1 -2]",
        ] {
            assert!(expand_hostlist(bad).is_err(), "{bad:?} should fail");
        }
    }

    /// `scontrol show hostnames` separates at white space as at commas.
    #[test]
    fn white_space_separates_names() {
        assert_eq!(expand_hostlist("n1 n2").unwrap(), ["n1", "n2"]);
        assert_eq!(
            expand_hostlist("n[1-2] n[3-4]").unwrap(),
            ["n1", "n2", "n3", "n4"]
        );
        assert_eq!(
            expand_hostlist(" a\tb\n c , d ").unwrap(),
            ["a", "b", "c", "d"]
        );
    }

    /// The expansions that used to exhaust memory (or, in a debug build, underflow): each is
    /// an error, found before anything large is built.
    #[test]
    fn expansions_are_bounded_in_names_and_bytes() {
        let plain = |n: usize| vec!["n"; n].join(",");
        assert_eq!(
            expand_hostlist(&plain(MAX_EXPANSION)).unwrap().len(),
            MAX_EXPANSION
        );
        assert!(expand_hostlist(&plain(MAX_EXPANSION + 1)).is_err());
        assert!(expand_hostlist(&format!("{},n[1-2]", plain(MAX_EXPANSION - 1))).is_err());
        let too_much = |expr: &str, what: &str| {
            let start = std::time::Instant::now();
            let err = match expand_hostlist(expr) {
                Ok(hosts) => panic!("{what}: {} names accepted", hosts.len()),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("more than"), "{what}: {err}");
            assert!(
                start.elapsed().as_secs() < 5,
                "{what} took {:?}",
                start.elapsed()
            );
        };
        too_much(&format!("{}[0-999999]", "x".repeat(4000)), "long names");
        too_much(
            &format!("n[{}-999999]", "0".repeat(4000)),
            "wide zero padding",
        );
        assert!(expand_hostlist(&format!("n[0-{}]", "9".repeat(4000))).is_err());
        too_much("a[0-999]b[0-999]c[0-9]", "a product of groups");
        too_much(
            &format!("{}[0-99999]{}[0-9]", "y".repeat(500), "z".repeat(500)),
            "a 1 KB nodelist of long names",
        );
        let names = (0..MAX_EXPANSION)
            .map(|_| "x".repeat(40))
            .collect::<Vec<_>>()
            .join(",");
        too_much(&names, "many long plain names");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any short string over the grammar's characters: never a panic, and what parses
        /// stays within the bounds.
        #[test]
        fn hostlists_of_any_text_are_bounded(expr in "[a-c0-9\\[\\],\\- \t]{0,48}") {
            if let Ok(hosts) = expand_hostlist(&expr) {
                proptest::prop_assert!(hosts.len() <= MAX_EXPANSION);
                let bytes: usize = hosts.iter().map(String::len).sum();
                proptest::prop_assert!(bytes <= MAX_EXPANSION_BYTES);
                proptest::prop_assert!(hosts.iter().all(|h| !h.contains(char::is_whitespace)));
            }
        }

        /// A prefix, a zero-padded range and a suffix: the names are exactly the range's,
        /// written as `scontrol` writes them.
        #[test]
        fn hostlists_expand_ranges_exactly(
            prefix in "[a-z]{0,6}",
            first in 0u32..2000,
            span in 0u32..300,
            width in 1usize..6,
            suffix in "(-[a-z]{1,3})?",
        ) {
            let last = first + span;
            let expr = format!("{prefix}[{first:0width$}-{last}]{suffix}");
            let want: Vec<String> =
                (first..=last).map(|n| format!("{prefix}{n:0width$}{suffix}")).collect();
            proptest::prop_assert_eq!(expand_hostlist(&expr).unwrap(), want);
        }
    }

    /// The processor time the calling thread has used, in milliseconds.
    fn thread_cpu_ms() -> f64 {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes one timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux and macOS.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 / 1e6
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Long prefixes, wide padding and long ranges: within the bounds the names are
        /// there, beyond them an error, decided before building (each case is quick).
        #[test]
        fn adversarial_hostlists_stay_within_the_byte_bound(
            prefix in 0usize..6000,
            width in 1usize..6000,
            count in 1u64..2_000_000,
        ) {
            let expr = format!("{}[{:0width$}-{}]", "p".repeat(prefix), 0, count - 1);
            let digits = (count - 1).to_string().len();
            let name = prefix + width.max(digits);
            let fits = count as usize <= MAX_EXPANSION
                && (count as usize).saturating_mul(name) <= MAX_EXPANSION_BYTES;
            let start = thread_cpu_ms();
            match expand_hostlist(&expr) {
                Ok(hosts) => {
                    proptest::prop_assert!(fits, "{} names of {name} bytes accepted", hosts.len());
                    proptest::prop_assert_eq!(hosts.len() as u64, count);
                }
                Err(_) => {
                    // Refused exactly where the widest name times the count is over.
                    proptest::prop_assert!(!fits);
                    // The processor time this thread spent, not the wall clock: the suite
                    // runs many tests at once on few cores.
                    proptest::prop_assert!(thread_cpu_ms() - start < 1000.0);
                }
            }
        }
    }

    #[test]
    fn counts_and_memory() {
        assert_eq!(expand_counts("2(x3),1").unwrap(), [2, 2, 2, 1]);
        assert_eq!(expand_counts("4").unwrap(), [4]);
        assert_eq!(expand_counts("1(x2)").unwrap(), [1, 1]);
        for bad in [
            "",
            "2(x",
            "2(x0)",
            "x",
            "2(x3",
            "-1",
            "1,,2",
            "+1",
            "2(x9999999)",
        ] {
            assert!(expand_counts(bad).is_err(), "{bad:?} should fail");
        }
        assert_eq!(parse_memory_mib("1000").unwrap(), 1000);
        assert_eq!(parse_memory_mib("4G").unwrap(), 4096);
        assert_eq!(parse_memory_mib("2048K").unwrap(), 2);
        assert_eq!(parse_memory_mib("1t").unwrap(), 1 << 20);
        for bad in ["", "G", "1.5G", "-1", "1X", "99999999999999999999T", "+5"] {
            assert!(parse_memory_mib(bad).is_err(), "{bad:?} should fail");
        }
    }

    /// Random strings over the characters the grammars use: never a panic, and what parses
    /// is bounded.
    #[test]
    fn parsers_never_panic() {
        let alphabet = b"n0123456789[]-,(x)KMGT ab";
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let len = (next() % 16) as usize;
            let s: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char)
                .collect();
            if let Ok(hosts) = expand_hostlist(&s) {
                assert!(hosts.len() <= MAX_EXPANSION);
            }
            if let Ok(counts) = expand_counts(&s) {
                assert!(counts.len() <= MAX_EXPANSION);
            }
            let _ = parse_memory_mib(&s);
            let _ = job(&[("SLURM_JOB_ID", "1"), ("SLURM_TASKS_PER_NODE", &s)]);
        }
    }

    #[test]
    fn jobs() {
        assert_eq!(job(&[("SLURM_NTASKS", "4")]).unwrap(), None);
        // A rank of `srun` inside `sbatch -N 2 -n 3 --mem=1000` (envlab's sample).
        let j = job(&[
            ("SLURM_JOBID", "1"),
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "2"),
            ("SLURM_LOCALID", "0"),
            ("SLURM_NODEID", "1"),
            ("SLURM_NPROCS", "3"),
            ("SLURM_NNODES", "2"),
            ("SLURM_CPUS_ON_NODE", "1"),
            ("SLURM_JOB_CPUS_PER_NODE", "2,1"),
            ("SLURM_TASKS_PER_NODE", "2,1"),
            ("SLURM_STEP_TASKS_PER_NODE", "2,1"),
            ("SLURM_MEM_PER_NODE", "1000"),
            ("SLURM_NODELIST", "n[1-2]"),
            ("SLURM_STEP_NODELIST", "n[1-2]"),
            ("SLURMD_NODENAME", "n2"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (j.job_id, j.step_id, j.proc_id, j.ntasks, j.num_nodes),
            (1, Some(0), Some(2), Some(3), Some(2))
        );
        assert_eq!(j.job_cpus_per_node, [2, 1]);
        assert_eq!(j.tasks_on_node(), Some(1));
        assert_eq!(j.threads_per_rank(), Some(1));
        assert_eq!(j.memory_per_rank(), Some(1000 << 20));
        assert_eq!(j.job_nodes, ["n1", "n2"]);
        assert!(j.to_string().contains("task 2 of 3"), "{j}");
        // --mem-per-cpu with -c 4.
        let j = job(&[
            ("SLURM_JOB_ID", "7"),
            ("SLURM_CPUS_PER_TASK", "4"),
            ("SLURM_MEM_PER_CPU", "2G"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(j.threads_per_rank(), Some(4));
        assert_eq!(j.memory_per_rank(), Some(8 << 30));
        assert_eq!(j.step_id, None);
        // A malformed value names its variable.
        let e = job(&[("SLURM_JOB_ID", "1"), ("SLURM_TASKS_PER_NODE", "2(x")]).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Environment { variable, .. } if variable == "SLURM_TASKS_PER_NODE"),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("SLURM_TASKS_PER_NODE=\"2(x\""),
            "{e}"
        );
        assert!(job(&[("SLURM_JOB_ID", "x")]).is_err());
    }
}
