//! The multi-rank test harness.
//!
//! One binary, two roles. Run by `cargo test` with no `--program` argument it is the **driver**:
//! it runs every registered program under the MPI launcher of the implementation the crate was
//! built against, with 1, 2, 3 and 4 ranks (and once as a singleton, with no launcher), each run
//! with a timeout, and reports per program, implementation and rank count. Started with
//! `--program NAME` (by the driver, under the launcher) it is one **rank** of that program.
//!
//! The driver fails when a program fails, times out, reports no checks from some rank, or when a
//! file under `tests/mpi/programs/` is not registered (a program that would silently not run).
//! After each run it removes the shared-memory segments the run left in `/dev/shm` and no process
//! maps (see `shm`).
//!
//! Environment: `FERROMPI_MPIEXEC` overrides the launcher, `FERROMPI_TEST_TIMEOUT` the per-run
//! timeout in seconds (default 120; four times that for the programs marked `slow`),
//! `FERROMPI_RANKS` (e.g. `2,3`; empty: all) keeps only those rank counts (and drops singleton
//! runs), `FERROMPI_WRAPPER` runs every rank under a tool (e.g. `valgrind -q --error-exitcode=99`),
//! `FERROMPI_SKIP` (e.g. `large_count,reductions`) leaves out the programs whose names contain
//! one of its words, and `FERROMPI_EXPECT_GPU=1` makes the `device` program load the CUDA driver
//! (a GPU's, or tests/fake_cuda's stand-in) and run its calls on that memory too. Positional
//! arguments filter programs by name.
//!
//! It also answers libtest's listing and selection (`--list --format terse`, `--exact`,
//! `--skip`), each run a test named `PROGRAM::nN` or `PROGRAM::singleton`, so that
//! `cargo nextest run --test mpi` lists, runs and retries single runs.

mod checks;
mod programs;
mod shm;
mod values;

use checks::Checks;
use ferrompi::{Implementation, Mpi, ThreadLevel};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Counts heap allocations made through Rust's allocator, so programs can show that a hot path
/// allocates nothing (MPI's own C allocations are not counted: only the binding's would be).
struct CountingAllocator;

static ALLOCATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { std::alloc::System.alloc(layout) }
    }
    /// Passed on, so a zeroed allocation stays a lazily mapped `calloc` (programs rely on
    /// untouched multi-GiB zeroed buffers costing no memory).
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Heap allocations so far in this process.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the ranks run under a tool (`FERROMPI_WRAPPER`, e.g. valgrind, which inherits the
/// driver's environment): programs then shrink work whose size only costs time there, such as
/// computing the expected result of a 1 Mi-element reduction one element at a time. An
/// AddressSanitizer build ([`asan_active`]) is not one: it runs the full sizes.
pub fn under_tool() -> bool {
    std::env::var_os("FERROMPI_WRAPPER").is_some_and(|w| !w.is_empty())
}

/// Whether this binary was built with AddressSanitizer (`tools/asan.sh`): ASan's runtime,
/// linked into the executable, defines `memcpy` there to intercept every call of it, MPI's
/// libraries' included, so the `memcpy` the dynamic linker resolves lies in the executable
/// itself instead of the C library.
pub fn asan_active() -> bool {
    static ACTIVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ACTIVE.get_or_init(|| {
        let object_of = |address: *const libc::c_void| {
            let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
            // SAFETY: dladdr only reads the loader's tables and fills `info`.
            let found = unsafe { libc::dladdr(address, info.as_mut_ptr()) } != 0;
            // SAFETY: zeroed, then filled by dladdr where it found the address.
            found.then(|| unsafe { info.assume_init() }.dli_fbase)
        };
        // SAFETY: dlsym with a NUL-terminated name only looks the symbol up.
        let memcpy = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"memcpy".as_ptr()) };
        let own = asan_active as fn() -> bool as *const libc::c_void;
        !memcpy.is_null() && object_of(memcpy).is_some_and(|base| Some(base) == object_of(own))
    })
}

/// What a run of a program must show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Expect {
    /// Exit 0 and every rank reports its checks.
    Pass,
    /// As `Pass`, and this text appears in the output (a warning the program must print).
    PassWith(&'static str),
    /// The job ends promptly, unsuccessfully, with this text in its output.
    AbortWith(&'static str),
    /// As `AbortWith`, within this many seconds of its launch.
    AbortWithin(&'static str, u64),
    /// As `AbortWith`, run only in an AddressSanitizer build (see [`asan_active`]) and skipped
    /// elsewhere: a deliberate memory error ASan must report.
    CaughtByAsan(&'static str),
}

/// A registered multi-rank test program.
pub struct Program {
    /// Name used on the command line and in reports.
    pub name: &'static str,
    /// The file under `tests/mpi/programs/` it lives in (without `.rs`).
    pub file: &'static str,
    /// Thread level to request.
    pub level: ThreadLevel,
    /// Rank counts to run with.
    pub ranks: &'static [u32],
    /// Also run it once as a singleton (no launcher).
    pub singleton: bool,
    /// What a run must show.
    pub expect: Expect,
    /// Moves gigabytes: gets four times the timeout.
    pub slow: bool,
    /// The program itself.
    pub run: fn(&Mpi, &mut Checks),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--program") {
        let name = args.get(i + 1).expect("--program needs a name");
        run_rank(name);
    } else {
        std::process::exit(drive(&Selection::parse(&args)));
    }
}

/// Which runs the driver makes, from its arguments, read as libtest reads its own so that test
/// runners that drive libtest binaries (`cargo nextest`) can list and run single runs. Each run
/// is a test named `PROGRAM::nN` (N ranks) or `PROGRAM::singleton`.
#[derive(Debug, Default)]
struct Selection {
    /// Names (substrings of a program's or a run's name; whole names with `--exact`).
    filters: Vec<String>,
    exact: bool,
    /// `--skip`: runs whose name contains one of these are left out.
    skip: Vec<String>,
    /// `--list`: print the selected runs as `NAME: test`, run nothing.
    list: bool,
    /// `--ignored`: only ignored tests, of which the harness has none.
    ignored: bool,
}

impl Selection {
    fn parse(args: &[String]) -> Selection {
        let mut selection = Selection::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--list" => selection.list = true,
                "--exact" => selection.exact = true,
                "--ignored" => selection.ignored = true,
                "--skip" => selection.skip.extend(args.next().cloned()),
                // libtest's options that take a value, which the harness has no use for.
                "--format" | "--test-threads" | "--color" | "--logfile" | "-Z" => {
                    args.next();
                }
                // --nocapture, --quiet, --include-ignored, --format=terse, ...
                other if other.starts_with('-') => {}
                name => selection.filters.push(name.to_string()),
            }
        }
        selection
    }

    /// Whether the run `name` of `program` is selected.
    fn selects(&self, program: &str, name: &str) -> bool {
        if self.ignored || self.skip.iter().any(|w| name.contains(w.as_str())) {
            return false;
        }
        self.filters.is_empty()
            || self.filters.iter().any(|f| {
                if self.exact {
                    name == f
                } else {
                    program.contains(f.as_str()) || name.contains(f.as_str())
                }
            })
    }
}

/// The test name of a run of `program`: `PROGRAM::nN`, or `PROGRAM::singleton`.
fn run_name(program: &str, ranks: Option<u32>) -> String {
    match ranks {
        Some(n) => format!("{program}::n{n}"),
        None => format!("{program}::singleton"),
    }
}

/// One rank of program `name`.
fn run_rank(name: &str) {
    if let Some((_, main)) = programs::MAINS.iter().find(|(n, _)| *n == name) {
        if let Err(e) = main() {
            eprintln!("Error: {e:?}");
            std::process::exit(1);
        }
        return;
    }
    let program = programs::ALL
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no program named {name}"));
    let mpi = Mpi::builder()
        .thread_level(program.level)
        .init()
        .expect("MPI init");
    let mut checks = Checks::new(program.name, mpi.world().rank(), mpi.world().size());
    (program.run)(&mpi, &mut checks);
    let kept = {
        let world = mpi.world();
        let kept = world.sendrecv(&[1u8], world.rank(), 0, &mut [0u8], world.rank(), 0);
        world.barrier().expect("final barrier");
        checks.okay(kept, "a status to keep past finalize")
    };
    mpi.finalize().expect("finalize");
    // Every program also checks that MPI cannot be restarted, and that what outlives it (plain
    // data, the public `check`) says so instead of calling MPI (Open MPI aborts on that).
    let finalized = |e: &ferrompi::Error| matches!(e.kind(), ferrompi::ErrorKind::AlreadyFinalized);
    checks.err(Mpi::init(), finalized, "init after finalize");
    checks.err(kept.count::<u8>(), finalized, "status count after finalize");
    let code = ferrompi::ErrorClass::Truncate.raw();
    checks.err(
        ferrompi::check(code, "after finalize"),
        |e| {
            e.class() == Some(ferrompi::ErrorClass::Truncate) && e.to_string().contains("finalized")
        },
        "error lookup after finalize",
    );
    checks.report();
}

struct Launch {
    program: &'static str,
    args: Vec<String>,
    label: String,
}

fn launcher() -> Launch {
    let found = |names: &[&'static str]| -> &'static str {
        names
            .iter()
            .copied()
            .find(|n| which(n))
            .unwrap_or(names[names.len() - 1])
    };
    let mut launch = match ferrompi::IMPLEMENTATION {
        Implementation::OpenMpi => Launch {
            program: found(&["mpirun.openmpi", "mpirun"]),
            args: vec!["--oversubscribe".into()],
            label: "Open MPI".into(),
        },
        Implementation::Mpich => Launch {
            program: found(&["mpiexec.mpich", "mpiexec"]),
            args: vec![],
            label: "MPICH".into(),
        },
        Implementation::StandardAbi => Launch {
            program: found(&["mpiexec"]),
            args: vec![],
            label: "MPI-5 ABI".into(),
        },
        Implementation::Other => Launch {
            program: found(&["mpiexec"]),
            args: vec![],
            label: "MPI".into(),
        },
    };
    if let Ok(cmd) = std::env::var("FERROMPI_MPIEXEC") {
        let mut words = cmd.split_whitespace().map(String::from);
        let program = words.next().expect("FERROMPI_MPIEXEC is empty");
        launch.program = Box::leak(program.into_boxed_str());
        launch.args = words.collect();
    }
    launch
}

fn which(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
        .unwrap_or(false)
}

struct Outcome {
    ok: bool,
    summary: String,
    detail: String,
}

fn drive(selection: &Selection) -> i32 {
    let launch = launcher();
    let exe = std::env::current_exe().expect("current_exe");
    let timeout = std::env::var("FERROMPI_TEST_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(120), Duration::from_secs);
    let (mut passed, mut failed) = (0u32, 0u32);
    // Shared-memory segments runs left behind, removed after each run (see `shm`).
    let mut swept = 0;
    let mut failures = Vec::new();
    let only_ranks: Option<Vec<u32>> = std::env::var("FERROMPI_RANKS")
        .ok()
        .filter(|list| !list.trim().is_empty())
        .map(|list| {
            list.split(',')
                .map(|n| {
                    n.trim()
                        .parse()
                        .expect("FERROMPI_RANKS: a comma list of rank counts")
                })
                .collect()
        });
    let wrapper: Vec<String> = std::env::var("FERROMPI_WRAPPER")
        .map(|w| w.split_whitespace().map(String::from).collect())
        .unwrap_or_default();

    if !selection.list {
        for problem in registration_problems() {
            failed += 1;
            println!("FAIL  registry: {problem}");
            failures.push(problem);
        }
        println!(
            "ferrompi multi-rank harness: {} ({} {}), launcher `{} {}`",
            launch.label,
            ferrompi::BUILD_PROBE,
            ferrompi::MPI_VERSION,
            launch.program,
            launch.args.join(" ")
        );
    }
    let skip = std::env::var("FERROMPI_SKIP").unwrap_or_default();
    let skip: Vec<&str> = skip
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .collect();
    for program in programs::ALL {
        if skip.iter().any(|w| program.name.contains(w)) {
            continue;
        }
        let mut runs: Vec<Option<u32>> = program.ranks.iter().map(|&n| Some(n)).collect();
        if program.singleton {
            runs.push(None);
        }
        if let Some(only) = &only_ranks {
            runs.retain(|n| n.is_some_and(|n| only.contains(&n)));
        }
        runs.retain(|&n| selection.selects(program.name, &run_name(program.name, n)));
        if runs.is_empty() {
            continue;
        }
        if matches!(program.expect, Expect::CaughtByAsan(_)) && !asan_active() {
            if !selection.list {
                println!(
                    "SKIP  {}: runs only in an AddressSanitizer build (tools/asan.sh)",
                    program.name
                );
            }
            continue;
        }
        if selection.list {
            for ranks in runs {
                println!("{}: test", run_name(program.name, ranks));
            }
            continue;
        }
        let small_tmpfs = programs::IN_SMALL_TMPFS
            .iter()
            .find(|(name, _, _)| *name == program.name)
            .map(|&(_, at, mib)| (at, mib));
        if let Some((at, _)) = small_tmpfs
            && let Some(why) = small_tmpfs_unavailable()
        {
            println!(
                "SKIP  {}: needs a tmpfs of its own on {at}: {why}",
                program.name
            );
            continue;
        }
        for ranks in runs {
            let mut argv: Vec<std::ffi::OsString> = Vec::new();
            match ranks {
                Some(n) => {
                    argv.push(launch.program.into());
                    argv.extend(launch.args.iter().map(Into::into));
                    argv.extend(["-n".into(), n.to_string().into()]);
                    argv.extend(wrapper.iter().map(Into::into));
                }
                None => argv.extend(wrapper.iter().map(Into::into)),
            }
            argv.push(exe.clone().into());
            let mut cmd = match small_tmpfs {
                // The launcher and every rank in a mount namespace of their own, with a tmpfs
                // of `mib` MiB at `at`.
                Some((at, mib)) => {
                    let mut cmd = Command::new("unshare");
                    cmd.args(["--mount", "--propagation", "private", "--", "sh", "-c"])
                        .arg(format!(
                            "mount -t tmpfs -o size={mib}m ferrompi-small-tmpfs {at} && exec \"$@\""
                        ))
                        .arg("sh")
                        .args(&argv)
                        .env("FERROMPI_SMALL_TMPFS", at);
                    cmd
                }
                None => {
                    let mut cmd = Command::new(&argv[0]);
                    cmd.args(&argv[1..]);
                    cmd
                }
            };
            cmd.env(
                "FERROMPI_EXPECT_LAUNCHER",
                if ranks.is_some() {
                    "launcher"
                } else {
                    "singleton"
                },
            );
            cmd.arg("--program").arg(program.name);
            cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            let label = match ranks {
                Some(n) => format!("{} n={n} {}", launch.label, program.name),
                None => format!("{} singleton {}", launch.label, program.name),
            };
            // More ranks than CPUs share them: the limit grows with the ranks per CPU.
            let limit = if program.slow { 4 * timeout } else { timeout }
                * ranks.unwrap_or(1).div_ceil(cpus()).max(1);
            let segments = shm::segments();
            let outcome = run_one(cmd, program, ranks.unwrap_or(1), limit);
            swept += shm::remove_new(&segments);
            if outcome.ok {
                passed += 1;
                println!("PASS  {label}: {}", outcome.summary);
            } else {
                failed += 1;
                println!(
                    "FAIL  {label}: {}\n{}",
                    outcome.summary,
                    indent(&outcome.detail)
                );
                failures.push(format!("{label}: {}", outcome.summary));
            }
        }
    }
    if selection.list {
        return 0;
    }
    if passed + failed == 0 {
        println!(
            "FAIL  no program ran (filters {:?} matched nothing)",
            selection.filters
        );
        failed += 1;
    }
    if !failures.is_empty() {
        println!("\nfailures:");
        for f in &failures {
            println!("  {f}");
        }
    }
    if swept > 0 {
        println!("\nremoved {swept} shared-memory segment(s) that runs left in /dev/shm");
    }
    println!("\nmpi-harness: {passed} passed, {failed} failed");
    i32::from(failed > 0)
}

/// The CPUs this process may run on.
fn cpus() -> u32 {
    std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
        .unwrap_or(1)
}

/// The machine's load, for a timeout's message: a run that timed out on a loaded machine says
/// so, rather than look like a hang.
fn load() -> String {
    let average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "unknown".into());
    let state = match average.parse::<f64>() {
        Ok(l) if l > f64::from(cpus()) => "the machine was loaded: ",
        _ => "",
    };
    format!("{state}load average {average} on {} CPU(s)", cpus())
}

/// Why the programs of [`programs::IN_SMALL_TMPFS`] cannot run here, if they cannot: they
/// need to mount a tmpfs in a mount namespace of their own (root, and util-linux's `unshare`).
fn small_tmpfs_unavailable() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        Some("not root")
    } else if !which("unshare") {
        Some("no unshare (util-linux) on PATH")
    } else {
        None
    }
}

/// Every file under `programs/` must be registered, and every registration must name a file.
fn registration_problems() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mpi/programs");
    let mut problems = Vec::new();
    let files: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|name| name.strip_suffix(".rs").map(String::from))
                .filter(|stem| stem != "mod")
                .collect()
        })
        .unwrap_or_default();
    if files.is_empty() {
        problems.push(format!("no program files in {}", dir.display()));
    }
    for file in &files {
        if let Some((_, why)) = programs::UNAVAILABLE.iter().find(|(f, _)| f == file) {
            println!("SKIP  program file {file}.rs: {why}");
            continue;
        }
        if !programs::ALL.iter().any(|p| p.file == file) {
            problems.push(format!(
                "program file {file}.rs is not registered in programs::ALL"
            ));
        }
    }
    for program in programs::ALL {
        if !files.iter().any(|f| f == program.file) {
            problems.push(format!(
                "program {} names missing file {}.rs",
                program.name, program.file
            ));
        }
    }
    problems
}

fn run_one(mut cmd: Command, program: &Program, ranks: u32, timeout: Duration) -> Outcome {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    // Its own process group, so a timeout kills the launcher and every rank.
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Outcome {
                ok: false,
                summary: format!("cannot start {cmd:?}: {e}"),
                detail: String::new(),
            };
        }
    };
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut timed_out = false;
    let mut load_at_timeout = String::new();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                timed_out = true;
                load_at_timeout = load();
                let pgid = i32::try_from(child.id()).expect("pid fits i32");
                // SAFETY: plain kill(2) of the process group we created; no memory involved.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for {cmd:?}: {e}"),
        }
    };
    let elapsed = start.elapsed();
    let out = out_thread.join().unwrap_or_default();
    let err = err_thread.join().unwrap_or_default();
    let detail = format!(
        "--- stdout\n{}\n--- stderr\n{}",
        tail(&out, 40),
        tail(&err, 40)
    );
    if timed_out {
        return Outcome {
            ok: false,
            summary: format!(
                "timed out after {timeout:?} ({load_at_timeout}; FERROMPI_TEST_TIMEOUT sets the \
                 limit in seconds)"
            ),
            detail,
        };
    }
    let success = status.is_some_and(|s| s.success());
    let required = match program.expect {
        Expect::PassWith(text) => Some(text),
        _ => None,
    };
    match program.expect {
        Expect::Pass | Expect::PassWith(_) => {
            let reports = checks::parse_reports(&out, program.name);
            let mut missing: Vec<u32> = (0..ranks)
                .filter(|r| !reports.iter().any(|(rank, _)| rank == r))
                .collect();
            missing.dedup();
            let empty = reports.iter().any(|&(_, n)| n == 0);
            let total: u64 = reports.iter().map(|&(_, n)| u64::from(n)).sum();
            let shown = required.is_none_or(|text| out.contains(text) || err.contains(text));
            let ok =
                success && missing.is_empty() && !empty && reports.len() == ranks as usize && shown;
            let summary = if ok {
                format!(
                    "{total} checks over {ranks} rank(s) in {:.1}s",
                    elapsed.as_secs_f64()
                )
            } else if !success {
                format!("exited with {status:?}")
            } else if !missing.is_empty() {
                format!("no check report from rank(s) {missing:?}")
            } else if !shown {
                format!("the output lacks {:?}", required.unwrap_or_default())
            } else {
                format!("a rank reported no checks or too many reports ({reports:?})")
            };
            Outcome {
                ok,
                summary,
                detail,
            }
        }
        Expect::AbortWith(text) | Expect::CaughtByAsan(text) | Expect::AbortWithin(text, _) => {
            let all = format!("{out}{err}");
            let within = match program.expect {
                Expect::AbortWithin(_, seconds) => Duration::from_secs(seconds),
                _ => timeout,
            };
            let ok = !success && all.contains(text) && elapsed <= within;
            let summary = if ok {
                format!(
                    "aborted as expected in {:.1}s, with {text:?}",
                    elapsed.as_secs_f64()
                )
            } else if success {
                "exited successfully, but should have aborted".into()
            } else if !all.contains(text) {
                format!("aborted without {text:?} in its output")
            } else {
                format!(
                    "aborted in {:.1}s, later than {within:?}",
                    elapsed.as_secs_f64()
                )
            };
            Outcome {
                ok,
                summary,
                detail,
            }
        }
    }
}

fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
