//! An MPI-aware criterion harness. Rank 0 runs criterion; for every sample criterion takes, it
//! broadcasts which benchmark to run and how many iterations, every rank runs them, and the
//! slowest rank's time (a max-reduction) is the sample. The other ranks follow rank 0's commands
//! until it says stop, so every collective is entered by every rank the same number of times.
//!
//! Benchmarks must be added in the same order on every rank (their set-up may be collective).
//!
//! Criterion's medians give absolute times. Ratios between two benchmarks (ferrompi against C,
//! persistent against blocking) come from [`Session::ratio`]: blocks of the two alternate
//! (A B B A …) many times and the median over the A B B A quartets is reported, so drift and
//! noise on this 2-core machine, which move whole benchmarks, cancel out of the ratio.
//!
//! The quartet, not the pair, is the unit. A block can be slower for its place alone: with a
//! buffer for each side, the block after a switch of sides ran on colder memory (MPICH's 4 MiB
//! ping-pong at 2 ranks, one round trip per block: A/B was about 0.67 in the pairs where A ran
//! first and 1.4 in those where B did). Pair ratios then fall into two clusters of equal size,
//! and their median is an edge of one of them, not the operation's ratio. A quartet holds each
//! benchmark once in each place, so what a place costs cancels.

#![allow(dead_code)] // each benchmark binary uses part of it

use criterion::{BenchmarkId, Criterion};
use ferrompi::{Communicator, Max};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// A global allocator that counts allocations, so the report can show that no measured hot
/// path allocates. Install it with `#[global_allocator]` in the benchmark binary.
pub struct Counting;

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

/// Runs `iters` iterations of one benchmark on this rank and returns the time they took.
type Run<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

struct Entry<'a> {
    group: String,
    function: String,
    parameter: usize,
    run: Run<'a>,
    /// Heap allocations during the last sample, on the rank that made the most.
    allocations: u64,
}

/// The benchmarks of one binary, run under `mpirun`.
pub struct MpiBench<'a> {
    world: &'a Communicator<'a>,
    entries: Vec<Entry<'a>>,
}

/// Median time per iteration of each benchmark, from criterion's measurement samples (rank 0).
pub struct Summary {
    /// (group, function, parameter, median seconds, allocations in the last sample).
    medians: Vec<(String, String, usize, f64, u64)>,
}

const STOP: u64 = u64::MAX;

impl<'a> MpiBench<'a> {
    pub fn new(world: &'a Communicator<'a>) -> Self {
        MpiBench {
            world,
            entries: Vec::new(),
        }
    }

    /// Adds `group/function/parameter`, run by `run(iters)` on every rank.
    pub fn add(
        &mut self,
        group: &str,
        function: &str,
        parameter: usize,
        run: impl FnMut(u64) -> Duration + 'a,
    ) {
        self.entries.push(Entry {
            group: group.into(),
            function: function.into(),
            parameter,
            run: Box::new(run),
            allocations: 0,
        });
    }

    /// Keeps only the benchmarks `keep(group, function, parameter)` accepts (the same on every
    /// rank, since dropping one may free what its set-up made collectively).
    pub fn retain(&mut self, keep: impl Fn(&str, &str, usize) -> bool) {
        self.entries
            .retain(|e| keep(&e.group, &e.function, e.parameter));
    }

    /// One sample: every rank runs benchmark `id` for `iters` iterations; the slowest time.
    fn sample(world: &Communicator<'_>, entry: &mut Entry<'_>, iters: u64) -> Duration {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let elapsed = (entry.run)(iters).as_secs_f64();
        let allocated = ALLOCATIONS.load(Ordering::Relaxed) - before;
        let mut most = [0.0f64; 2];
        world
            .allreduce(&[elapsed, allocated as f64], &mut most, Max)
            .expect("max-reduce of a sample");
        entry.allocations = most[1] as u64;
        Duration::from_secs_f64(most[0])
    }

    /// Runs criterion on rank 0 (configured by `criterion` and the command line), which then
    /// holds a [`Session`] for paired ratios; the other ranks follow it until the session ends
    /// and get `None`.
    pub fn run(self, criterion: Criterion) -> Option<Session<'a>> {
        let world = self.world;
        let mut entries = self.entries;
        if world.rank() != 0 {
            loop {
                let mut command = [0u64; 2];
                world.bcast(&mut command, 0).expect("command");
                if command[0] == STOP {
                    return None;
                }
                let id = usize::try_from(command[0]).expect("benchmark id");
                Self::sample(world, &mut entries[id], command[1]);
            }
        }
        let samples: RefCell<Vec<Vec<f64>>> = RefCell::new(vec![Vec::new(); entries.len()]);
        let entries = RefCell::new(entries);
        let mut criterion = criterion.configure_from_args();
        let groups: Vec<String> = {
            let mut seen: Vec<String> = Vec::new();
            for e in entries.borrow().iter() {
                if !seen.contains(&e.group) {
                    seen.push(e.group.clone());
                }
            }
            seen
        };
        for name in &groups {
            let mut group = criterion.benchmark_group(name);
            let ids: Vec<usize> = (0..entries.borrow().len())
                .filter(|&i| &entries.borrow()[i].group == name)
                .collect();
            for id in ids {
                let (function, parameter) = {
                    let e = &entries.borrow()[id];
                    (e.function.clone(), e.parameter)
                };
                group.bench_function(BenchmarkId::new(function, parameter), |b| {
                    b.iter_custom(|iters| {
                        let mut command = [id as u64, iters];
                        world.bcast(&mut command, 0).expect("command");
                        let time = Self::sample(world, &mut entries.borrow_mut()[id], iters);
                        samples.borrow_mut()[id].push(time.as_secs_f64() / iters as f64);
                        time
                    })
                });
            }
            group.finish();
        }
        let samples = samples.into_inner();
        let entries = entries.into_inner();
        let medians = entries
            .iter()
            .zip(samples)
            .map(|(e, s)| {
                let m = median(s);
                (
                    e.group.clone(),
                    e.function.clone(),
                    e.parameter,
                    m,
                    e.allocations,
                )
            })
            .collect();
        Some(Session {
            world,
            entries,
            summary: Summary { medians },
        })
    }
}

/// Rank 0's side after criterion: medians, and paired ratios measured with the followers.
/// Dropping it releases the followers.
pub struct Session<'a> {
    world: &'a Communicator<'a>,
    entries: Vec<Entry<'a>>,
    summary: Summary,
}

impl Session<'_> {
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Whether `group/function/parameter` was measured (not filtered out).
    pub fn has(&self, group: &str, function: &str, parameter: usize) -> bool {
        self.entries
            .iter()
            .any(|e| e.group == group && e.function == function && e.parameter == parameter)
    }

    fn id(&self, group: &str, function: &str, parameter: usize) -> usize {
        self.entries
            .iter()
            .position(|e| e.group == group && e.function == function && e.parameter == parameter)
            .unwrap_or_else(|| panic!("no benchmark {group}/{function}/{parameter}"))
    }

    fn command(&mut self, id: usize, iters: u64) -> f64 {
        let mut command = [id as u64, iters];
        self.world.bcast(&mut command, 0).expect("command");
        MpiBench::sample(self.world, &mut self.entries[id], iters).as_secs_f64()
    }

    /// The median over `rounds / 2` quartets of time(`a`) / time(`b`), for benchmarks
    /// `(group, function)` at `parameter`, each a block of iterations lasting about a
    /// millisecond, run in A B B A order; a quartet's ratio is its two A blocks' time over its
    /// two B blocks'.
    pub fn ratio(
        &mut self,
        a: (&str, &str),
        b: (&str, &str),
        parameter: usize,
        rounds: usize,
    ) -> f64 {
        self.compare(a, b, parameter, rounds).ratio
    }

    /// [`Session::ratio`], and from the same quartets the median of the paired differences
    /// per operation.
    pub fn compare(
        &mut self,
        (group_a, a): (&str, &str),
        (group_b, b): (&str, &str),
        parameter: usize,
        rounds: usize,
    ) -> Paired {
        let (ia, ib) = (
            self.id(group_a, a, parameter),
            self.id(group_b, b, parameter),
        );
        let per = self
            .summary
            .get(group_a, a, parameter)
            .max(self.summary.get(group_b, b, parameter));
        let iters = if per.is_finite() && per > 0.0 {
            (1e-3 / per).clamp(1.0, 1e6) as u64
        } else {
            1
        };
        let quartets = (rounds / 2).max(1);
        let mut ratios = Vec::with_capacity(quartets);
        let mut differences = Vec::with_capacity(quartets);
        for _ in 0..quartets {
            // A B, then B A: each benchmark once in each place.
            let ta = self.command(ia, iters);
            let tb = self.command(ib, iters) + self.command(ib, iters);
            let ta = ta + self.command(ia, iters);
            ratios.push(ta / tb);
            differences.push((ta - tb) / (2 * iters) as f64);
        }
        Paired {
            ratio: middle(ratios),
            difference: middle(differences),
        }
    }
}

/// The median of `values` (the mean of the two middle ones when their number is even).
fn middle(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// What [`Session::compare`] measured: medians over the quartets of the ratio, and of the
/// difference in seconds per operation (A − B).
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    pub ratio: f64,
    pub difference: f64,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.world.bcast(&mut [STOP, 0], 0).expect("stop");
    }
}

/// The median of the last `SAMPLES` values (criterion's measurement phase; earlier ones are its
/// warm-up), or of all of them when there are fewer.
pub const SAMPLES: usize = 15;

fn median(mut values: Vec<f64>) -> f64 {
    let tail = values.len().saturating_sub(SAMPLES);
    middle(values.split_off(tail))
}

impl Summary {
    /// Median seconds per iteration of `group/function/parameter`.
    pub fn get(&self, group: &str, function: &str, parameter: usize) -> f64 {
        self.find(group, function, parameter)
            .map_or(f64::NAN, |m| m.3)
    }

    /// Heap allocations during the last measured sample of `group/function/parameter`.
    pub fn allocations(&self, group: &str, function: &str, parameter: usize) -> u64 {
        self.find(group, function, parameter).map_or(0, |m| m.4)
    }

    fn find(
        &self,
        group: &str,
        function: &str,
        parameter: usize,
    ) -> Option<&(String, String, usize, f64, u64)> {
        self.medians
            .iter()
            .find(|m| m.0 == group && m.1 == function && m.2 == parameter)
    }
}

/// Criterion settings for MPI benchmarks: few, short samples (each is a collective on every rank).
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

/// Prints `markdown`, and writes it and `csv` to `$FERROMPI_BENCH_OUT.md` and `.csv` if set.
pub fn report(markdown: &str, csv: &str) {
    println!("{markdown}");
    if let Ok(path) = std::env::var("FERROMPI_BENCH_OUT") {
        for (ext, text) in [("md", markdown), ("csv", csv)] {
            let file = format!("{path}.{ext}");
            std::fs::write(&file, text).unwrap_or_else(|e| panic!("writing {file}: {e}"));
        }
    }
}
