//! The MPI environment: initialisation with a thread level, finalisation on drop, and what the
//! process can ask of it (time, names, versions, how it was launched). MPI-4.0 chapter 11 (The
//! World Model: `MPI_INIT_THREAD`, `MPI_FINALIZE`, `MPI_ABORT`) and chapter 9 (inquiries, timers).
//!
//! # Lifetimes
//! [`Mpi`] is the environment token. Every handle the crate gives out (communicators, groups,
//! and later requests and windows) borrows it, so the borrow checker rejects any program that
//! could use or free a handle after `MPI_Finalize`. `Mpi` is `!Send`, so it is dropped — and MPI
//! finalized — on the thread that initialised it, as MPI requires.
//!
//! # Threads
//! Handles are `Send + Sync` at every thread level. Each MPI call made through them first passes
//! the thread gate of the level MPI *provided*:
//!
//! | provided level | calls from the initialising thread | calls from other threads |
//! |---|---|---|
//! | `Single`, `Funneled` | go straight to MPI | return [`ErrorKind::WrongThread`] |
//! | `Serialized` | serialized by a process-wide lock | serialized by the same lock |
//! | `Multiple` | go straight to MPI | go straight to MPI |
//!
//! The gate costs one relaxed atomic load and one thread-local read: no allocation and no
//! lookup. At `Serialized` the lock is what a C program must hold anyway. A
//! [`scope`](crate::scope) and an RMA epoch ([`WindowEpoch`](crate::window::WindowEpoch)) make
//! that test once, when they begin, for the starts of the scope's operations, the waits and
//! tests of its requests and request sets, and the calls in the epoch: none of them can leave
//! its thread, outlive `Mpi` or be reached from a reduction
//! callback, so what the test saw holds until it ends (at `Serialized` each call still takes
//! the lock). Whatever the level, the gate refuses calls made before `MPI_Init_thread`
//! returned or after `MPI_Finalize` ([`ErrorKind::NotInitialized`],
//! [`ErrorKind::AlreadyFinalized`]), and calls made from inside a user-defined reduction
//! ([`ErrorKind::InCallback`]: MPI forbids them there, and at `Serialized` the collective's caller
//! already holds the lock). Refused calls never reach MPI.
//!
//! # Choosing a thread level
//! [`Mpi::init`] requests `Funneled`. The MPI standard (MPI-4.0 §11.6, "MPI and Threads", and
//! `MPI_INIT_THREAD`) defines `MPI_THREAD_SINGLE` as "Only one thread will execute", and
//! `MPI_THREAD_FUNNELED` as "The process may be multi-threaded, but the application must ensure
//! that only the main thread makes MPI calls". By that wording a process with *any* other thread
//! (a `cargo test` harness, a rayon or tokio pool, a logging thread, ferrompi's own futures
//! ticker) needs at least `Funneled`, even if those threads never call MPI; so the default is
//! `Funneled`, correct for every program. The gate enforces the same rule at both levels (only
//! the initialising thread reaches MPI), so choosing `Single` changes only what MPI is told.
//!
//! What a level costs a plain C program, against one that calls `MPI_Init`
//! (`tools/thread-levels.sh`: separate C programs, 2 ranks, medians of paired per-round
//! differences; ranges over four runs, one run for the 5.0 releases; per small blocking call,
//! and per batch of 8 `isend` + 8 `irecv` + `MPI_Waitall`):
//!
//! | MPI | `Funneled` or `Serialized` | `Multiple` |
//! |---|---|---|
//! | Open MPI 4.1.4 | +50 to +340 ns per call, +490 to +1140 ns per batch | +60 to +240 ns per call, up to +890 ns per batch |
//! | Open MPI 5.0.11 | nothing measurable | +60 to +250 ns per call, +890 ns per batch |
//! | MPICH 4.0.2 | nothing measurable | up to +70 ns per call, +260 to +370 ns per batch |
//! | MPICH 5.0.2 | nothing measurable | +1.6 to +2.6 µs per collective |
//!
//! Open MPI 4.1 turns its internal locking on (`opal_set_using_threads(true)` in `ompi_mpi_init`)
//! for every level above `SINGLE`: `pthread_mutex_lock`/`unlock` are then about 5% of the samples
//! of an 8-byte exchange. Open MPI 5 and MPICH charge only at `MULTIPLE`. So:
//!
//! - **The default, `Funneled`**, is free on Open MPI 5 and MPICH, and correct for any program.
//! - **`Mpi::init_thread(ThreadLevel::Single)`** saves `Funneled`'s 65–340 ns per call on
//!   Open MPI 4.x for a program that runs one thread. By the standard's wording no other thread
//!   may exist. In these implementations the level decides whether MPI locks its own state, so
//!   threads that never call MPI (which the gate guarantees) are harmless in practice; that is
//!   what the implementations do, not what the standard promises. At `Single` ferrompi starts
//!   no thread of its own: futures re-poll at once instead of waiting for the ticker
//!   ([`progress`](mod@crate::request::progress)).
//! - **`Serialized`** costs what `Funneled` costs, plus ferrompi's process-wide lock per call:
//!   one atomic operation to take it and one to release it when no other thread waits (in
//!   `tools/thread-levels.sh`, within ±60 ns of C at the same level per blocking call, and
//!   +22 to +45 ns per request of an exchange of 16).
//! - **`Multiple`** only when threads really call MPI at once: it costs on every MPI above.
//!
//! # Open MPI: long messages into short buffers
//! Open MPI's shared-memory single-copy path (CMA, `process_vm_readv`) copies a message that
//! is longer than the receive buffer it matched *past the end of that buffer* before reporting
//! `MPI_ERR_TRUNCATE`: heap corruption in the receiver (`malloc(): corrupted top size`),
//! reproduced in C on Open MPI 4.1.4 and 5.0.11 between two ranks of one node. ferrompi
//! promises that MPI never writes outside a buffer, so on Open MPI [`InitOptions::init`] turns
//! the single-copy mechanism off before `MPI_Init_thread` (`OMPI_MCA_btl_vader_single_copy_mechanism=none`
//! for 4.x, `OMPI_MCA_smsc=^cma,knem,xpmem` for 5.x), unless one of these variables is already
//! set (`mpirun --mca …` sets them too). Truncated receives then return [`ErrorClass::Truncate`](crate::ErrorClass::Truncate)
//! and write nothing past the buffer. Large messages between ranks of a node then go through
//! the shared-memory FIFO in two copies (the guide's errors chapter has what that costs);
//! [`InitOptions::allow_open_mpi_single_copy`] (`unsafe`) keeps the single copy for programs
//! that never receive into a buffer shorter than the message.

pub use crate::gate::ThreadLevel;
pub use crate::launcher::{Launcher, Pmi};

use crate::error::{Error, ErrorKind, Result, check, string_from_buffer};
use crate::gate::{self, ThreadGate};
use crate::{fault, ffi};
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Once, OnceLock};
use std::time::Duration;

static ABORT_ON_PANIC: AtomicBool = AtomicBool::new(false);
static ABORT_ON_ERROR: AtomicBool = AtomicBool::new(true);
static TAG_UB: AtomicI32 = AtomicI32::new(0);
static PANIC_HOOK: Once = Once::new();

/// Passes the thread gate ([`gate::enter`]), turning a refusal into its [`Error`]: how every
/// MPI call of the crate starts.
#[inline(always)]
pub(crate) fn enter(operation: &'static str) -> Result<ThreadGate> {
    gate::enter(operation).map_err(Error::from)
}

/// [`enter`] for a call on the communicator `comm`, which the watchdog names should the call
/// not return ([`gate::enter_on`]).
#[inline(always)]
pub(crate) fn enter_on(operation: &'static str, comm: ffi::MPI_Comm) -> Result<ThreadGate> {
    gate::enter_on(operation, comm).map_err(Error::from)
}

/// [`gated`] for a call on the communicator `comm` ([`gate::gated_on`]).
#[inline(always)]
pub(crate) fn gated_on<R>(
    operation: &'static str,
    comm: ffi::MPI_Comm,
    call: impl FnOnce() -> R,
) -> Result<R> {
    gate::gated_on(operation, comm, call).map_err(Error::from)
}

/// Makes `call` behind the thread gate ([`gate::gated`]), turning a refusal into its
/// [`Error`]: [`enter`] for a single call, with no lock flag to test after it on the fast path.
#[inline(always)]
pub(crate) fn gated<R>(operation: &'static str, call: impl FnOnce() -> R) -> Result<R> {
    gate::gated(operation, call).map_err(Error::from)
}

/// [`enter`], without the gate's test for a caller holding a [`Pass`](gate::Pass) made on
/// this thread (see there for when holding one is sound).
#[inline(always)]
pub(crate) fn enter_with(pass: Option<gate::Pass>, operation: &'static str) -> Result<ThreadGate> {
    match pass {
        Some(_) => Ok(ThreadGate::OPEN),
        None => enter(operation),
    }
}

/// [`gated`], without the gate's test for a caller holding a [`Pass`](gate::Pass) made on
/// this thread (as [`enter_with`]).
#[inline(always)]
pub(crate) fn gated_with<R>(
    pass: Option<gate::Pass>,
    operation: &'static str,
    call: impl FnOnce() -> R,
) -> Result<R> {
    match pass {
        Some(_) => Ok(call()),
        None => gated(operation, call),
    }
}

/// Options for [`Mpi::builder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "call .init() to initialise MPI"]
pub struct InitOptions {
    thread_level: ThreadLevel,
    abort_on_panic: bool,
    check_collectives: bool,
    allow_single_copy: bool,
    abort_on_error: bool,
    watchdog: Option<Duration>,
}

impl InitOptions {
    /// The thread level to request (default [`ThreadLevel::Funneled`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Mpi, ThreadLevel};
    /// let options = Mpi::builder().thread_level(ThreadLevel::Multiple); // requested, not promised
    /// let _ = options;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn thread_level(mut self, level: ThreadLevel) -> Self {
        self.thread_level = level;
        self
    }

    /// Whether a panic in any thread of this process aborts the whole MPI job (default `true`).
    ///
    /// Without it, a rank that panics leaves the others blocked in their next collective until
    /// something kills the job. With it, the panic message is printed first, then
    /// `MPI_Abort(MPI_COMM_WORLD, 101)` ends every rank. A panic that the program catches with
    /// `catch_unwind` aborts too; turn this off if the program relies on catching panics.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let options = ferrompi::Mpi::builder().abort_on_panic(false); // a panic no longer ends the job
    /// let _ = options;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn abort_on_panic(mut self, on: bool) -> Self {
        self.abort_on_panic = on;
        self
    }

    /// Whether an error still alive when [`Mpi`] drops ends the whole job (default `true`).
    ///
    /// `main` returning `Err` with `?` drops `Mpi` before Rust prints the error, and
    /// `MPI_Finalize` then waits for ranks that may be waiting for this one: the job would hang
    /// and the error never be seen. With this on, `Mpi`'s drop first looks for a
    /// [`Error`] that is still alive (one being returned); if there is one, it prints
    /// `ferrompi: rank R on HOST: <error>; aborting the MPI job (MPI_Abort)` and ends every
    /// rank with `MPI_Abort` (code 1, as `main`'s `Err` would exit). An error a program handled
    /// and dropped before `Mpi` drops changes nothing. Keeping an `Error` alive past `Mpi`'s drop
    /// on purpose (stored in a value declared before `Mpi`, or `mem::forget`) counts as one
    /// being returned; [`Mpi::finalize`], called explicitly, never aborts.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let options = ferrompi::Mpi::builder().abort_on_error(false); // drop only finalizes
    /// let _ = options;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn abort_on_error(mut self, on: bool) -> Self {
        self.abort_on_error = on;
        self
    }

    /// Ends the whole job when a call of this rank into MPI has not returned within `limit`:
    /// a blocking call, a wait, a collective or finalisation (default: no watchdog; not
    /// initialisation, whose time grows with the job's size). The environment variable
    /// `FERROMPI_WATCHDOG` (`30s`, `500ms`, `2m`, or a number of seconds; `0` or `off` for
    /// none) sets the limit too, and wins over this, so that an operator can turn the watchdog
    /// on, change it or turn it off without rebuilding.
    ///
    /// When a call has not returned after `limit` (to within a twentieth of it), the rank
    /// prints `ferrompi: rank R on HOST: watchdog: <operation> on <communicator> has not
    /// returned after T s (limit L s); aborting the MPI job (MPI_Abort)` and ends every rank
    /// with `MPI_Abort`, exit code 124 (`timeout`'s). The communicator is `MPI_COMM_WORLD`, the
    /// name given with [`Communicator::set_name`](crate::Communicator::set_name), or "a
    /// communicator of N ranks"; a call on none (a wait, an epoch of a window) names none. A
    /// stopped or wedged rank, a dead link or a rank that never comes to a collective leave
    /// the others waiting in MPI: their watchdogs end the job. Should `MPI_Abort` not end the
    /// process within 5 s (a launcher it cannot reach), the process exits by itself.
    ///
    /// Choose a limit above the longest wait the program means to make: a rank that waits in
    /// `recv` while its peer computes for an hour is, to the watchdog, a rank that has not
    /// returned. The watchdog is a thread that looks at every call a twentieth of the limit
    /// apart (at most every second); it starts one thread even at [`ThreadLevel::Single`]. While
    /// it runs every call takes the gate's slow path, which marks the calling thread's slot
    /// before the call and clears it after it (a few relaxed stores, with the slow path's call:
    /// about 100 instructions per call on Open MPI 4.1, `docs/reliability.md`); with no
    /// watchdog, calls cost what they cost without one. A limit below 100 ms is refused at
    /// `init`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use std::time::Duration;
    /// let options = ferrompi::Mpi::builder().watchdog(Duration::from_secs(60));
    /// let _ = options;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn watchdog(mut self, limit: Duration) -> Self {
        self.watchdog = Some(limit);
        self
    }

    /// Whether nonblocking and persistent collectives first verify that every rank passes
    /// matching arguments (default `false`, or `true` when `FERROMPI_CHECK_COLLECTIVES=1` is
    /// set). Costs one small collective per call; turns a mismatch that would crash or hang
    /// the job inside MPI into [`ErrorKind::CollectiveMismatch`] on every rank. See
    /// [`comm::agreement`](crate::comm::agreement). Every rank must make the same choice.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let options = ferrompi::Mpi::builder().check_collectives(true); // or FERROMPI_CHECK_COLLECTIVES=1
    /// let _ = options;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn check_collectives(mut self, on: bool) -> Self {
        self.check_collectives = on;
        self
    }

    /// Keeps Open MPI's single-copy (CMA) path for large shared-memory messages, which ferrompi
    /// otherwise turns off on Open MPI (see [Open MPI: long messages into short buffers](crate::env#open-mpi-long-messages-into-short-buffers)).
    ///
    /// # Safety
    /// On Open MPI 4.1 and 5.0 with the single-copy path, a message longer than the receive buffer it
    /// matches, between two ranks of one node, overwrites memory past that buffer (a C program
    /// does the same). The caller promises that no receive in the program is ever matched by a
    /// longer message, or accepts that it is undefined behaviour.
    ///
    /// ```
    /// // SAFETY: every receive of this program is sized from a probe (recv_vec), never shorter
    /// // than its message.
    /// let options = unsafe { ferrompi::Mpi::builder().allow_open_mpi_single_copy() };
    /// let _ = options;
    /// ```
    pub unsafe fn allow_open_mpi_single_copy(mut self) -> Self {
        self.allow_single_copy = true;
        self
    }

    /// Initialises MPI, runs `body`, and finalizes; if initialisation fails or `body` returns an
    /// error, the error's message is printed and the whole job ends at once (`MPI_Abort` with
    /// code 1), instead of leaving the other ranks waiting in their next collective.
    ///
    /// ```no_run
    /// use ferrompi::{Mpi, Sum};
    /// Mpi::builder().run(|mpi| {
    ///     let world = mpi.world();
    ///     let mut total = [0.0f64];
    ///     world.allreduce(&[1.0], &mut total, Sum)?; // an Err here ends every rank
    ///     Ok::<(), ferrompi::Error>(())
    /// });
    /// ```
    pub fn run<E: std::fmt::Display>(self, body: impl FnOnce(&Mpi) -> std::result::Result<(), E>) {
        let mpi = match self.init() {
            Ok(mpi) => mpi,
            Err(e) => {
                eprintln!("ferrompi: MPI could not be initialised: {e}");
                std::process::exit(1);
            }
        };
        let outcome = body(&mpi);
        mpi.or_abort(outcome);
    }

    /// Initialises MPI (`MPI_Init_thread`, MPI-4.0 chapter 11, The World Model).
    ///
    /// The provided level may be lower than the requested one; see [`Mpi::thread_level`]. Installs
    /// `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` and `MPI_COMM_SELF`. On Open MPI, first turns off
    /// the shared-memory single-copy path unless the environment chooses one (see
    /// [Open MPI: long messages into short buffers](crate::env#open-mpi-long-messages-into-short-buffers)).
    ///
    /// ```
    /// use ferrompi::{Mpi, ThreadLevel};
    /// let mpi = Mpi::builder().thread_level(ThreadLevel::Serialized).init()?;
    /// assert!(mpi.thread_level() >= ThreadLevel::Single);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::AlreadyInitialized`] if MPI is initialised in this process (by ferrompi or
    /// anyone else), [`ErrorKind::AlreadyFinalized`] if it was finalized, [`ErrorKind::Mpi`] if
    /// initialisation fails, [`ErrorKind::Environment`] if `FERROMPI_WATCHDOG` is not a limit
    /// (see [`InitOptions::watchdog`]), [`ErrorKind::InvalidArgument`] for a watchdog limit below
    /// 100 ms, and [`ErrorKind::Environment`] if the watchdog's thread cannot be started.
    pub fn init(self) -> Result<Mpi> {
        Mpi::init_with(self)
    }
}

/// Whether the library running is of `family`, for working around its bugs: known when the
/// crate is built, except against the MPI-5 standard ABI, where the library's version string
/// says (read once).
pub(crate) fn running(family: crate::Implementation) -> bool {
    use crate::Implementation::StandardAbi;
    if crate::IMPLEMENTATION != StandardAbi {
        return crate::IMPLEMENTATION == family;
    }
    static LIBRARY: OnceLock<String> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| library_version_string().unwrap_or_default());
    match family {
        crate::Implementation::OpenMpi => library.starts_with("Open MPI"),
        crate::Implementation::Mpich => library.starts_with("MPICH"),
        StandardAbi => true,
        crate::Implementation::Other => false,
    }
}

/// Whether the library is MPICH older than `(major, minor)`, or an MPICH whose version string
/// cannot be read; for working around bugs of old versions. Read once.
pub(crate) fn mpich_before(version: (u32, u32)) -> bool {
    static MPICH: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    running(crate::Implementation::Mpich)
        && MPICH.get_or_init(mpich_version).is_none_or(|v| v < version)
}

/// `(major, minor)` from MPICH's library version string ("MPICH Version:      4.0.2 …").
fn mpich_version() -> Option<(u32, u32)> {
    library_version_number("Version:")
}

/// `MPI_TAG_UB` of `MPI_COMM_WORLD`, read once at initialisation.
#[inline]
pub(crate) fn tag_ub() -> i32 {
    TAG_UB.load(Ordering::Relaxed)
}

/// Calls an MPI function that fills a string buffer of `capacity` bytes and its length.
pub(crate) fn mpi_string(
    capacity: c_int,
    operation: &'static str,
    fill: impl FnOnce(*mut std::ffi::c_char, *mut c_int) -> c_int,
) -> Result<String> {
    let size = usize::try_from(capacity).unwrap_or(0).max(1);
    let mut buf = vec![0u8; size];
    let mut len: c_int = 0;
    check(fill(buf.as_mut_ptr().cast(), &mut len), operation)?;
    Ok(string_from_buffer(&buf, len))
}

/// The MPI environment. Create it once, at the start of `main`; MPI is finalized when it drops.
///
/// ```no_run
/// use ferrompi::Mpi;
/// let mpi = Mpi::init()?;
/// let world = mpi.world();
/// println!("rank {} of {}", world.rank(), world.size());
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// `Mpi` is `Sync` (threads may share `&Mpi`) but not `Send`: it stays on the thread that
/// initialised MPI, which is where MPI must be finalized.
///
/// No handle can be used after finalize — this does not compile:
/// ```compile_fail
/// # use ferrompi::Mpi;
/// let mpi = Mpi::init().unwrap();
/// let world = mpi.world();
/// drop(mpi); // error[E0505]: cannot move out of `mpi` because it is borrowed
/// world.barrier().unwrap();
/// ```
///
/// nor does moving the environment to another thread:
/// ```compile_fail
/// # use ferrompi::Mpi;
/// let mpi = Mpi::init().unwrap();
/// std::thread::spawn(move || drop(mpi)); // error[E0277]: `*const ()` cannot be sent between threads
/// ```
#[derive(Debug)]
pub struct Mpi {
    provided: ThreadLevel,
    world_rank: c_int,
    world_size: c_int,
    launcher: Launcher,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: `Mpi` holds only plain values. Its methods either pass the thread gate, or call
// functions that touch no shared MPI state: MPI_Get_version and MPI_Get_library_version, which
// the standard allows at any time from any thread, and MPI_Wtime/MPI_Wtick, which in Open MPI and
// MPICH only read a clock. Handles it creates gate their own calls. `_not_send` keeps it `!Send`.
unsafe impl Sync for Mpi {}

impl Mpi {
    /// Initialises MPI with [`ThreadLevel::Funneled`] and the panic hook on.
    ///
    /// `Funneled` is correct for every program, threads or not, and costs nothing on Open MPI 5
    /// and MPICH; on Open MPI 4.x it costs 110–340 ns per call against `MPI_Init`, which a
    /// single-threaded program saves with [`Mpi::init_thread`]`(ThreadLevel::Single)`. The
    /// module docs, "Choosing a thread level", have the measurements and the standard's rules.
    ///
    /// ```
    /// let mpi = ferrompi::Mpi::init()?; // MPI_Init_thread(MPI_THREAD_FUNNELED)
    /// let world = mpi.world();
    /// assert!(world.rank() < world.size());
    /// // MPI is finalized when `mpi` drops: every handle borrows it, so none can outlive it.
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`InitOptions::init`].
    pub fn init() -> Result<Mpi> {
        Mpi::builder().init()
    }

    /// Initialises MPI requesting `level`.
    ///
    /// ```
    /// use ferrompi::{Mpi, ThreadLevel};
    /// let mpi = Mpi::init_thread(ThreadLevel::Multiple)?;
    /// println!("MPI provides {:?}", mpi.thread_level()); // may be lower than asked
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`InitOptions::init`].
    pub fn init_thread(level: ThreadLevel) -> Result<Mpi> {
        Mpi::builder().thread_level(level).init()
    }

    /// Options for initialisation: thread level and the abort-on-panic hook.
    ///
    /// ```
    /// let mpi = ferrompi::Mpi::builder().check_collectives(true).init()?;
    /// let _ = mpi;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn builder() -> InitOptions {
        InitOptions {
            thread_level: ThreadLevel::Funneled,
            abort_on_panic: true,
            check_collectives: std::env::var_os("FERROMPI_CHECK_COLLECTIVES")
                .is_some_and(|v| v == "1"),
            allow_single_copy: false,
            abort_on_error: true,
            watchdog: None,
        }
    }

    fn init_with(options: InitOptions) -> Result<Mpi> {
        match gate::claim_init() {
            Ok(()) => {}
            Err(gate::Stage::Finalized) => return Err(ErrorKind::AlreadyFinalized.into()),
            Err(gate::Stage::Initialized) => return Err(ErrorKind::AlreadyInitialized.into()),
        }
        let started = Mpi::start(options);
        match &started {
            Ok(_) => gate::init_completed(),
            // MPI may be half-initialised; it can only be told apart by asking it.
            Err(_) => {
                fault::stop();
                gate::init_failed(is_initialized());
            }
        }
        started
    }

    fn start(options: InitOptions) -> Result<Mpi> {
        let limit = watchdog_limit(options.watchdog)?;
        let (mut initialized, mut finalized) = (0, 0);
        // SAFETY: both functions may be called at any time and write one int each.
        check(unsafe { ffi::MPI_Finalized(&mut finalized) }, "init")?;
        // SAFETY: as above.
        check(unsafe { ffi::MPI_Initialized(&mut initialized) }, "init")?;
        if finalized != 0 {
            return Err(ErrorKind::AlreadyFinalized.into());
        }
        if initialized != 0 {
            return Err(ErrorKind::AlreadyInitialized.into());
        }
        let launcher = Launcher::detect();
        if !options.allow_single_copy {
            contain_single_copy_truncation();
        }
        if let Some(limit) = limit {
            fault::start(limit).map_err(|e| ErrorKind::Environment {
                variable: "FERROMPI_WATCHDOG".into(),
                value: format!("{limit:?}"),
                reason: format!("the watchdog thread could not be started: {e}"),
            })?;
        }
        let mut provided: c_int = 0;
        // SAFETY: MPI is not initialised (checked above, and STATE_BUSY excludes other threads);
        // null argc/argv are allowed (MPI-4.0, MPI_INIT_THREAD).
        let rc = unsafe {
            ffi::MPI_Init_thread(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                options.thread_level.raw(),
                &mut provided,
            )
        };
        check(rc, "init")?;
        let provided = ThreadLevel::from_raw(provided).unwrap_or(ThreadLevel::Single);
        // From here on MPI is running: gated calls (an error lookup of a failing call below)
        // may reach it.
        gate::mpi_started(provided);
        for comm in [ffi::MPI_COMM_WORLD, ffi::MPI_COMM_SELF] {
            // SAFETY: predefined communicators and error handler, MPI is initialised.
            let rc = unsafe { ffi::MPI_Comm_set_errhandler(comm, ffi::MPI_ERRORS_RETURN) };
            check(rc, "init")?;
        }
        let (mut rank, mut size): (c_int, c_int) = (0, 0);
        // SAFETY: MPI is initialised; writes one int.
        let rc = unsafe { ffi::MPI_Comm_rank(ffi::MPI_COMM_WORLD, &mut rank) };
        check(rc, "init")?;
        // SAFETY: as above.
        let rc = unsafe { ffi::MPI_Comm_size(ffi::MPI_COMM_WORLD, &mut size) };
        check(rc, "init")?;
        fault::identify(rank, size, &processor_name().unwrap_or_default());
        TAG_UB.store(read_tag_ub()?, Ordering::Relaxed);
        ABORT_ON_PANIC.store(options.abort_on_panic, Ordering::Relaxed);
        ABORT_ON_ERROR.store(options.abort_on_error, Ordering::Relaxed);
        gate::set_checked(options.check_collectives);
        if options.abort_on_panic {
            PANIC_HOOK.call_once(install_panic_hook);
        }
        Ok(Mpi {
            provided,
            world_rank: rank,
            world_size: size,
            launcher,
            _not_send: PhantomData,
        })
    }

    /// The thread level MPI provided, which may be below the one requested.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::ThreadLevel;
    /// if mpi.thread_level() < ThreadLevel::Multiple {
    ///     // only one thread may call MPI at a time (or only the main thread)
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn thread_level(&self) -> ThreadLevel {
        self.provided
    }

    /// Rank and size of `MPI_COMM_WORLD`, read at initialisation.
    pub(crate) fn world_rank_size(&self) -> (c_int, c_int) {
        (self.world_rank, self.world_size)
    }

    /// How this process was launched.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// println!("launched by {:?}", mpi.launcher());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn launcher(&self) -> Launcher {
        self.launcher
    }

    /// Turns the abort-on-panic hook on or off (see [`InitOptions::abort_on_panic`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// mpi.set_abort_on_panic(false); // a panic from here on only unwinds this rank
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn set_abort_on_panic(&self, on: bool) {
        if on {
            PANIC_HOOK.call_once(install_panic_hook);
        }
        ABORT_ON_PANIC.store(on, Ordering::Relaxed);
    }

    /// Turns checked collectives on or off from now on (see
    /// [`InitOptions::check_collectives`]). Collective in effect: every rank must switch at the
    /// same point of its sequence of collectives.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// mpi.set_collective_checks(true); // on every rank, at the same point
    /// world.barrier()?;
    /// mpi.set_collective_checks(false);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn set_collective_checks(&self, on: bool) {
        gate::set_checked(on);
    }

    /// `MPI_Wtime`: seconds since some time in the past (MPI-4.0 §9.6). Callable from any thread.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let start = mpi.wtime();
    /// world.barrier()?;
    /// let seconds = mpi.wtime() - start;
    /// assert!(seconds >= 0.0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn wtime(&self) -> f64 {
        // SAFETY: no arguments; only reads a clock (see the `Sync` argument above).
        unsafe { ffi::MPI_Wtime() }
    }

    /// `MPI_Wtick`: the resolution of [`Mpi::wtime`] in seconds.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert!(mpi.wtick() > 0.0); // the clock's resolution, in seconds
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn wtick(&self) -> f64 {
        // SAFETY: no arguments; only reads the clock's resolution.
        unsafe { ffi::MPI_Wtick() }
    }

    /// `MPI_Get_processor_name` (MPI-4.0 §9.1.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// println!("rank {} runs on {}", world.rank(), mpi.processor_name()?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] from a thread the thread level does not allow;
    /// [`ErrorKind::Mpi`].
    pub fn processor_name(&self) -> Result<String> {
        processor_name()
    }

    /// The MPI standard version the library implements, `(MPI_VERSION, MPI_SUBVERSION)` at run
    /// time (`MPI_Get_version`, MPI-4.0 §9.1.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (major, minor) = mpi.version()?; // the standard the library implements
    /// assert!(major >= 3);
    /// let _ = minor;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`] if the call fails.
    pub fn version(&self) -> Result<(i32, i32)> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: callable at any time from any thread; writes two ints.
        let rc = unsafe { ffi::MPI_Get_version(&mut major, &mut minor) };
        check(rc, "version")?;
        Ok((major, minor))
    }

    /// `MPI_Get_library_version`: the implementation's name and version.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let text = mpi.library_version()?; // e.g. "Open MPI v4.1.4, …" or "MPICH Version: 4.0.2 …"
    /// assert!(!text.is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`] if the call fails.
    pub fn library_version(&self) -> Result<String> {
        mpi_string(
            ffi::MPI_MAX_LIBRARY_VERSION_STRING,
            "library_version",
            |buf, len| {
                // SAFETY: `buf` has MPI_MAX_LIBRARY_VERSION_STRING bytes; thread safe at every level.
                unsafe { ffi::MPI_Get_library_version(buf, len) }
            },
        )
    }

    /// The largest tag this MPI accepts (the `MPI_TAG_UB` attribute, at least 32767).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert!(mpi.tag_ub() >= 32767); // the largest tag this MPI accepts
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn tag_ub(&self) -> i32 {
        tag_ub()
    }

    /// The value of `result`, or, if it is an error, the end of the whole job: prints
    /// `ferrompi: rank R: <error>; aborting the MPI job` and calls `MPI_Abort` with code 1.
    ///
    /// A rank that returns an error early, say from a collective whose arguments it alone got
    /// wrong, leaves the other ranks blocked in their next collective, and `Mpi`'s drop blocks
    /// in `MPI_Finalize`: the job hangs until something kills it. Use this (or
    /// [`InitOptions::run`]) wherever an error means the job cannot go on.
    ///
    /// ```no_run
    /// # use ferrompi::Mpi;
    /// let mpi = Mpi::init()?;
    /// let world = mpi.world();
    /// mpi.or_abort(world.barrier());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn or_abort<T, E: std::fmt::Display>(&self, result: std::result::Result<T, E>) -> T {
        match result {
            Ok(value) => value,
            Err(e) => fault::abort_job(1, format_args!("{e}")),
        }
    }

    /// Aborts every process of `MPI_COMM_WORLD` with `code` (`MPI_Abort`, MPI-4.0 chapter 11).
    ///
    /// ```no_run
    /// # let mpi = ferrompi::Mpi::init()?;
    /// if mpi.world().rank() == 0 && std::path::Path::new("stop").exists() {
    ///     mpi.abort(3); // every rank ends, the launcher reports code 3
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn abort(&self, code: i32) -> ! {
        fault::abort_world(code)
    }

    /// Finalizes MPI now, reporting any error (dropping [`Mpi`] does the same, ignoring errors).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// world.barrier()?;
    /// drop(world);
    /// mpi.finalize()?; // like dropping `mpi`, but reports an error
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`] if `MPI_Finalize` fails.
    pub fn finalize(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        this.finalize_now()
    }

    fn finalize_now(&self) -> Result<()> {
        let leaked = gate::outstanding();
        if leaked > 0 {
            eprintln!(
                "ferrompi: rank {}: {leaked} nonblocking operation(s) on owned buffers were \
                 leaked (mem::forget) while in flight and never completed; MPI_Finalize may \
                 wait for them forever (MPICH waits for pending sends)",
                self.world_rank
            );
        }
        if let Some(objects) = crate::live::leaked() {
            eprintln!(
                "ferrompi: rank {}: {objects} never freed: leaked (mem::forget), or dropped on \
                 a thread the thread level refuses (drop them on the initialising thread below \
                 ThreadLevel::Serialized). Leaked windows are freed now, collectively, oldest \
                 first (MPICH over UCX aborts in MPI_Finalize over a window still registered)",
                self.world_rank
            );
            crate::live::free_leaked_windows();
        }
        crate::live::free_kept_datatypes();
        gate::finalize_started();
        // SAFETY: MPI is initialised and this is the initialising thread (`Mpi` is !Send). Every
        // handle borrowed `self`, so none is left to be used afterwards.
        let rc = fault::watched("finalize", || unsafe { ffi::MPI_Finalize() });
        gate::finalize_completed();
        fault::stop();
        check(rc, "finalize")
    }
}

impl Drop for Mpi {
    /// Finalizes MPI; first, unless [`InitOptions::abort_on_error`] is off, ends the job if an
    /// [`Error`] is alive (see there).
    fn drop(&mut self) {
        if ABORT_ON_ERROR.load(Ordering::Relaxed)
            && let Some(error) = crate::error::alive()
        {
            fault::abort_job(1, format_args!("{error} (an error alive as Mpi drops)"));
        }
        // Drop cannot report errors; `Mpi::finalize` does.
        let _ = self.finalize_now();
    }
}

/// The watchdog's limit: `FERROMPI_WATCHDOG`'s if it is set, `chosen` otherwise.
fn watchdog_limit(chosen: Option<Duration>) -> Result<Option<Duration>> {
    const VARIABLE: &str = "FERROMPI_WATCHDOG";
    let limit = match std::env::var(VARIABLE) {
        Ok(value) => fault::parse_limit(&value).map_err(|reason| ErrorKind::Environment {
            variable: VARIABLE.into(),
            value,
            reason,
        })?,
        Err(_) => chosen,
    };
    if let Some(limit) = limit
        && limit < fault::SHORTEST_LIMIT
    {
        return Err(ErrorKind::InvalidArgument {
            operation: "init",
            reason: format!(
                "a watchdog limit of {limit:?} is below the shortest, {:?}",
                fault::SHORTEST_LIMIT
            ),
        }
        .into());
    }
    Ok(limit)
}

/// Open MPI's MCA parameters that choose the shared-memory single-copy mechanism, and the
/// value that turns it off: 4.x's `btl_vader_single_copy_mechanism` (`vader` is 5.x's `sm`),
/// and 5.x's `smsc` framework, whose components are `cma`, `knem` and `xpmem`. Each version
/// ignores the other's parameter.
const SINGLE_COPY_OFF: [(&str, &str); 3] = [
    ("OMPI_MCA_btl_vader_single_copy_mechanism", "none"),
    ("OMPI_MCA_smsc", "^cma,knem,xpmem"),
    ("OMPI_MCA_btl_sm_single_copy_mechanism", "none"),
];

/// On Open MPI (see the module docs), turns the shared-memory single-copy mechanism off before
/// `MPI_Init_thread` reads its parameters, unless the user chose one (through the environment,
/// which is also where `mpirun --mca` puts it).
fn contain_single_copy_truncation() {
    if !running(crate::Implementation::OpenMpi)
        || SINGLE_COPY_OFF
            .iter()
            .any(|(name, _)| std::env::var_os(name).is_some())
    {
        return;
    }
    for (name, off) in &SINGLE_COPY_OFF[..2] {
        // SAFETY: this runs on the thread initialising MPI, just before `MPI_Init_thread`, which
        // itself sets environment variables (Open MPI's `opal_init` and PMIx do): a program
        // whose other threads read the environment through C during `Mpi::init` races with MPI
        // already. Rust code reading it meanwhile is serialized by std's environment lock.
        unsafe { std::env::set_var(name, off) };
    }
}

/// `(major, minor)` after `prefix` in the library version string, e.g. "Open MPI v4.1.4".
fn library_version_number(prefix: &str) -> Option<(u32, u32)> {
    let text = library_version_string()?;
    let version = text.split(prefix).nth(1)?.split_whitespace().next()?;
    let mut parts = version
        .split(['.', ','])
        .map(|p| p.trim_end_matches(|c: char| !c.is_ascii_digit()));
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// `MPI_Get_library_version`, callable at any time from any thread.
fn library_version_string() -> Option<String> {
    let mut buf = vec![0u8; usize::try_from(ffi::MPI_MAX_LIBRARY_VERSION_STRING).ok()? + 1];
    let mut len: c_int = 0;
    // SAFETY: `buf` has room for MPI_MAX_LIBRARY_VERSION_STRING bytes; callable at any time.
    let rc = unsafe { ffi::MPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) };
    (rc == ffi::MPI_SUCCESS).then(|| string_from_buffer(&buf, len))
}

fn is_initialized() -> bool {
    let mut flag = 0;
    // SAFETY: callable at any time.
    let rc = unsafe { ffi::MPI_Initialized(&mut flag) };
    rc == ffi::MPI_SUCCESS && flag != 0
}

fn read_tag_ub() -> Result<i32> {
    let mut value: *mut c_int = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: MPI_TAG_UB is a predefined attribute of MPI_COMM_WORLD whose value is a pointer
    // to an int (MPI-4.0 §9.1.2); the call writes the pointer and the flag.
    let rc = unsafe {
        ffi::MPI_Comm_get_attr(
            ffi::MPI_COMM_WORLD,
            crate::c_int_const!(ffi::MPI_TAG_UB),
            (&mut value as *mut *mut c_int).cast::<c_void>(),
            &mut flag,
        )
    };
    check(rc, "init")?;
    if flag == 0 || value.is_null() {
        return Ok(32767); // The standard's guaranteed minimum.
    }
    // SAFETY: MPI keeps the attribute value alive until MPI_Finalize.
    Ok(unsafe { *value })
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if ABORT_ON_PANIC.load(Ordering::Relaxed) && gate::is_active() {
            fault::abort_job(101, format_args!("panicked"));
        }
    }));
}

/// `MPI_Get_processor_name`, for whoever holds a handle rather than the [`Mpi`] token.
pub(crate) fn processor_name() -> Result<String> {
    let _gate = enter("processor_name")?;
    mpi_string(ffi::MPI_MAX_PROCESSOR_NAME, "processor_name", |buf, len| {
        // SAFETY: `buf` has MPI_MAX_PROCESSOR_NAME bytes, as the call requires.
        unsafe { ffi::MPI_Get_processor_name(buf, len) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_levels_round_trip_and_are_ordered() {
        for level in ThreadLevel::ALL {
            assert_eq!(ThreadLevel::from_raw(level.raw()), Some(level));
        }
        assert!(ThreadLevel::Single.raw() < ThreadLevel::Multiple.raw());
        assert_eq!(ThreadLevel::from_raw(-7), None);
    }

    #[test]
    fn strings_stop_at_length_and_nul() {
        assert_eq!(string_from_buffer(b"abc\0def", 7), "abc");
        assert_eq!(string_from_buffer(b"abcdef", 3), "abc");
        assert_eq!(string_from_buffer(b"abc", -1), "");
        assert_eq!(string_from_buffer(b"abc", 99), "abc");
    }
}
