//! The thread gate, and the process-wide state of MPI it reads: whether MPI runs, the thread
//! level it provided, which thread initialised it, and which thread is inside a callback MPI
//! is making. Every MPI call the crate makes passes [`enter`] first (see
//! [`env`](crate::env#threads) for the rules per level). Also the process-wide counters and
//! switches the environment sets and other layers read: operations leaked in flight (for the
//! warning at finalize) and checked collectives.
//!
//! The lowest layer above [`ffi`](crate::ffi): it refuses with a [`Refusal`], which
//! [`Error`](crate::Error) converts from, so that errors, the environment and every handle can
//! use it without importing each other in a circle.

use crate::{fault, ffi};
use std::cell::Cell;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The level of thread support (MPI-4.0, "MPI and Threads"), ordered from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum ThreadLevel {
    /// `MPI_THREAD_SINGLE`: only one thread will execute.
    Single,
    /// `MPI_THREAD_FUNNELED`: only the initialising thread makes MPI calls.
    Funneled,
    /// `MPI_THREAD_SERIALIZED`: any thread may call MPI, but never two at once.
    Serialized,
    /// `MPI_THREAD_MULTIPLE`: any thread may call MPI at any time.
    Multiple,
}

impl ThreadLevel {
    pub(crate) const ALL: [ThreadLevel; 4] = [
        ThreadLevel::Single,
        ThreadLevel::Funneled,
        ThreadLevel::Serialized,
        ThreadLevel::Multiple,
    ];

    /// The `MPI_THREAD_*` constant of the installed MPI.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::ThreadLevel;
    /// let funneled = ThreadLevel::Funneled.raw(); // MPI_THREAD_FUNNELED of this MPI
    /// assert_eq!(ThreadLevel::from_raw(funneled), Some(ThreadLevel::Funneled));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn raw(self) -> c_int {
        match self {
            ThreadLevel::Single => crate::c_int_const!(ffi::MPI_THREAD_SINGLE),
            ThreadLevel::Funneled => crate::c_int_const!(ffi::MPI_THREAD_FUNNELED),
            ThreadLevel::Serialized => crate::c_int_const!(ffi::MPI_THREAD_SERIALIZED),
            ThreadLevel::Multiple => crate::c_int_const!(ffi::MPI_THREAD_MULTIPLE),
        }
    }

    /// The level for an `MPI_THREAD_*` value, if it is one.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::ThreadLevel;
    /// assert_eq!(ThreadLevel::from_raw(ThreadLevel::Multiple.raw()), Some(ThreadLevel::Multiple));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn from_raw(raw: c_int) -> Option<ThreadLevel> {
        ThreadLevel::ALL
            .into_iter()
            .find(|level| level.raw() == raw)
    }

    fn index(self) -> u8 {
        self as u8
    }
}

/// The level as MPI names it: `MPI_THREAD_FUNNELED`.
///
/// ```
/// assert_eq!(ferrompi::ThreadLevel::Funneled.to_string(), "MPI_THREAD_FUNNELED");
/// ```
impl std::fmt::Display for ThreadLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ThreadLevel::Single => "MPI_THREAD_SINGLE",
            ThreadLevel::Funneled => "MPI_THREAD_FUNNELED",
            ThreadLevel::Serialized => "MPI_THREAD_SERIALIZED",
            ThreadLevel::Multiple => "MPI_THREAD_MULTIPLE",
        })
    }
}

const STATE_UNINIT: u8 = 0;
const STATE_BUSY: u8 = 1;
const STATE_ACTIVE: u8 = 2;
const STATE_FINALIZED: u8 = 3;
/// No thread level: MPI is not active.
const LEVEL_NONE: u8 = u8::MAX;

static STATE: AtomicU8 = AtomicU8::new(STATE_UNINIT);
static PROVIDED: AtomicU8 = AtomicU8::new(LEVEL_NONE);
/// The gate's fast path as one table: bit `f` is set when a thread whose flags are `f` (whose
/// [`THREAD`] bit is `1 << f`) may call MPI at the provided level without further checks.
/// Written with [`PROVIDED`] (see [`set_provided`]); zero when MPI is not active and at
/// `Serialized` (always the slow path).
static OPEN_FOR: AtomicU8 = AtomicU8::new(0);
/// [`OPEN_FOR`]'s table while the watchdog runs, when [`OPEN_FOR`] is zero (every call then
/// takes the slow path, which marks it); zero otherwise.
static WATCHED_OPEN_FOR: AtomicU8 = AtomicU8::new(0);
/// Serializes MPI calls when MPI provided `MPI_THREAD_SERIALIZED`: whether a thread holds the
/// lock (see [`lock_serial`]). Uncontended, taking and releasing it are one atomic operation
/// each, with no system call.
static SERIAL: AtomicBool = AtomicBool::new(false);
/// Threads waiting for [`SERIAL`], counted under [`SERIAL_WAIT`]: a release wakes one only
/// when there is one (a condition variable's notify is a system call even with no waiter,
/// which cost about 250 ns per call when every release made it).
static SERIAL_WAITERS: AtomicUsize = AtomicUsize::new(0);
/// Held by a waiter from counting itself in [`SERIAL_WAITERS`] until it sleeps on
/// [`SERIAL_FREE`], and by a release to wake one, so that no wake-up falls between the two.
static SERIAL_WAIT: Mutex<()> = Mutex::new(());
/// Where threads wait for [`SERIAL`] to come free.
static SERIAL_FREE: Condvar = Condvar::new();

/// What the gate knows about the calling thread, one bit each.
const INIT_THREAD: u8 = 1;
/// The thread is inside a callback MPI made (a user-defined reduction), where MPI forbids MPI
/// calls: every gated call is refused with [`ErrorKind::InCallback`](crate::ErrorKind::InCallback).
const IN_CALLBACK: u8 = 2;
/// The thread holds the `Serialized` lock; a nested gate (an error lookup) must not take it again.
const HOLDS_SERIAL: u8 = 4;

thread_local! {
    /// The calling thread's flags `f` ([`INIT_THREAD`], [`IN_CALLBACK`], [`HOLDS_SERIAL`]) as
    /// the one bit `1 << f`: the bit [`OPEN_FOR`] has for a thread in that state, so that the
    /// gate's fast path is one AND of the two (see [`flags`] for the flags themselves).
    static THREAD: Cell<u8> = const { Cell::new(1) };
}

/// The calling thread's flags, from [`THREAD`]'s one bit.
#[inline]
fn flags() -> u8 {
    flags_of(THREAD.with(Cell::get))
}

/// The flags a [`THREAD`] bit stands for.
#[inline]
fn flags_of(bit: u8) -> u8 {
    bit.trailing_zeros() as u8
}

fn set_thread_flag(flag: u8, on: bool) {
    let flags = if on { flags() | flag } else { flags() & !flag };
    THREAD.with(|t| t.set(1 << flags));
}

/// Permission to make an MPI call from this thread, held for the call's duration.
///
/// One flag: whether dropping the gate has something to undo: the `Serialized` lock this gate
/// took, or the watchdog's mark of the calling thread's slot ([`fault::mark`]), or both (see
/// [`release`]). The lock is an atomic flag of its own ([`SERIAL`]), so the gate needs no
/// `MutexGuard` to release it. On the fast path a gate is a `false` the compiler keeps in a
/// register across the MPI call, and its drop is one test; a gate holding a `MutexGuard` (an
/// enum) was kept in memory across the call and tested there, about five more instructions per
/// call, and one holding a byte of what to undo, 2 to 4 more in the nonblocking paths (as did
/// one holding the watchdog's slot, for its drop to clear without looking the slot up).
///
/// Neither `Send` nor `Sync`: it must drop on the thread whose [`HOLDS_SERIAL`] mark it clears.
#[must_use]
pub(crate) struct ThreadGate {
    held: bool,
    on_this_thread: PhantomData<*const ()>,
}

impl ThreadGate {
    /// The provided level allows this call as is.
    pub(crate) const OPEN: ThreadGate = ThreadGate::new(false);
    /// Holds what [`release`] undoes.
    const HELD: ThreadGate = ThreadGate::new(true);

    const fn new(held: bool) -> ThreadGate {
        ThreadGate {
            held,
            on_this_thread: PhantomData,
        }
    }
}

impl Drop for ThreadGate {
    #[inline(always)]
    fn drop(&mut self) {
        if self.held {
            release();
        }
    }
}

/// What a [`ThreadGate`] that holds something undoes: the watchdog's mark (a thread's slot is
/// marked only while the watchdog runs, and clearing it otherwise changes nothing), and the
/// `Serialized` lock if this thread holds it. Only the gate that took the lock holds it: a
/// nested gate (an error lookup inside a gated call, at `Serialized`) passes without taking it
/// and without a mark, so it holds nothing, and the lock is released by the gate that took it.
#[cold]
#[inline(never)]
fn release() {
    fault::unmark();
    if flags() & HOLDS_SERIAL != 0 {
        release_serial();
    }
}

/// Tries to take the `Serialized` lock once.
fn try_lock_serial() -> bool {
    SERIAL
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// Takes the `Serialized` lock for this thread: waits until no thread holds it.
///
/// A waiter counts itself in [`SERIAL_WAITERS`] and tries again, both under [`SERIAL_WAIT`],
/// before it sleeps; a release clears [`SERIAL`] and then reads the count (all `SeqCst`,
/// failed tries included). So either the release sees the waiter and wakes it (taking
/// [`SERIAL_WAIT`] first, which the waiter holds until it sleeps), or the waiter's try comes
/// after the release and succeeds or loses to a thread whose own release will see the
/// waiter. No wake-up is lost.
fn lock_serial() {
    if !try_lock_serial() {
        let mut wait = SERIAL_WAIT.lock().unwrap_or_else(|e| e.into_inner());
        SERIAL_WAITERS.fetch_add(1, Ordering::SeqCst);
        while !try_lock_serial() {
            wait = SERIAL_FREE.wait(wait).unwrap_or_else(|e| e.into_inner());
        }
        SERIAL_WAITERS.fetch_sub(1, Ordering::SeqCst);
    }
    set_thread_flag(HOLDS_SERIAL, true);
}

/// Releases the `Serialized` lock this thread's [`ThreadGate`] took (clearing the thread's
/// [`HOLDS_SERIAL`] mark first), and wakes a waiting thread if there is one. Not inlined into
/// [`release`], which then saves no registers when, as while the watchdog runs at the other
/// levels, it only clears the mark.
#[inline(never)]
fn release_serial() {
    set_thread_flag(HOLDS_SERIAL, false);
    SERIAL.store(false, Ordering::SeqCst);
    if SERIAL_WAITERS.load(Ordering::SeqCst) != 0 {
        let _wait = SERIAL_WAIT.lock().unwrap_or_else(|e| e.into_inner());
        SERIAL_FREE.notify_one();
    }
}

/// Passes the thread gate of the provided thread level (see the module docs).
///
/// Refuses, without calling MPI: before `MPI_Init_thread` returned and from `MPI_Finalize` on
/// ([`ErrorKind::NotInitialized`](crate::ErrorKind::NotInitialized),
/// [`ErrorKind::AlreadyFinalized`](crate::ErrorKind::AlreadyFinalized)); from a thread the level
/// does not allow ([`ErrorKind::WrongThread`](crate::ErrorKind::WrongThread)); and inside a
/// callback MPI is making ([`ErrorKind::InCallback`](crate::ErrorKind::InCallback)). At
/// `Serialized`, a thread that already holds the lock (an error lookup inside a gated call) passes
/// without taking it again.
#[inline(always)]
pub(crate) fn enter(operation: &'static str) -> Result<ThreadGate, Refusal> {
    if open_to(THREAD.with(Cell::get)) {
        return Ok(ThreadGate::OPEN);
    }
    enter_this_thread_slow(operation)
}

/// [`enter`] for a call on the communicator `comm`, which the watchdog's line names
/// ([`fault::On`]). The fast path is [`enter`]'s: `comm`, which the caller holds for its MPI
/// call anyway, goes only to the slow path.
#[inline(always)]
pub(crate) fn enter_on(
    operation: &'static str,
    comm: ffi::MPI_Comm,
) -> Result<ThreadGate, Refusal> {
    if open_to(THREAD.with(Cell::get)) {
        return Ok(ThreadGate::OPEN);
    }
    enter_this_thread_slow_on(operation, comm)
}

/// Makes `call` behind the thread gate, under [`enter`]'s rules, and returns what it returned.
/// The fast path holds no [`ThreadGate`], so no test of its lock flag follows the call; the
/// slow path makes its own copy of the call while it holds one.
#[inline(always)]
pub(crate) fn gated<R>(operation: &'static str, call: impl FnOnce() -> R) -> Result<R, Refusal> {
    if open_to(THREAD.with(Cell::get)) {
        return Ok(call());
    }
    let _gate = enter_slow(operation, PROVIDED.load(Ordering::Relaxed), flags_slow())?;
    Ok(call())
}

/// [`gated`] for a call on the communicator `comm` (as [`enter_on`]).
#[inline(always)]
pub(crate) fn gated_on<R>(
    operation: &'static str,
    comm: ffi::MPI_Comm,
    call: impl FnOnce() -> R,
) -> Result<R, Refusal> {
    if open_to(THREAD.with(Cell::get)) {
        return Ok(call());
    }
    let level = PROVIDED.load(Ordering::Relaxed);
    let _gate = enter_slow_on(operation, comm, level, flags_slow())?;
    Ok(call())
}

/// [`flags`] out of line, for [`gated`]'s slow path: the fast path's load of the thread's bit
/// then has one use, which the compiler folds into its test, and the slow path stays small
/// enough that the call it makes is laid out as the fast path's (a slow path of its own that
/// reads the flags itself, as [`enter_this_thread_slow`] does, cost 3 more instructions per
/// blocking send and receive).
#[cold]
#[inline(never)]
fn flags_slow() -> u8 {
    flags()
}

/// While the watchdog runs (it closes the fast paths), the fast paths' test, against
/// [`WATCHED_OPEN_FOR`]: whether the call would have passed them; if so, it marks the
/// thread's slot (two loads and a test, then the slot and two stores), which the gate's
/// [`release`] clears. The slow paths ask it first ([`enter_slow`],
/// [`enter_this_thread_slow`]), so that a watched call pays for no more of them.
///
/// A thread's first watched call, which has no slot yet, is left to the rest of the slow path,
/// which gives it one (`fault::mark`): so this makes no call.
#[inline(always)]
fn watched(operation: &'static str, on: fault::On) -> bool {
    if WATCHED_OPEN_FOR.load(Ordering::Relaxed) & THREAD.with(Cell::get) == 0 {
        return false;
    }
    let Some(slot) = fault::slot_if_any() else {
        return false;
    };
    slot.mark(operation, on);
    true
}

/// [`enter_slow`] for the calling thread, reading what it needs itself: the fast paths'
/// load of the thread's bit then has one use, which the compiler folds into their test.
#[cold]
#[inline(never)]
fn enter_this_thread_slow(operation: &'static str) -> Result<ThreadGate, Refusal> {
    enter_this_thread_slow_with(operation, fault::On::NOTHING)
}

/// [`enter_this_thread_slow`] for a call on a communicator ([`enter_on`]).
#[cold]
#[inline(never)]
fn enter_this_thread_slow_on(
    operation: &'static str,
    comm: ffi::MPI_Comm,
) -> Result<ThreadGate, Refusal> {
    enter_this_thread_slow_with(operation, fault::On::comm(comm))
}

/// What [`enter_this_thread_slow`] and [`enter_this_thread_slow_on`] do, for a call on `on`.
#[inline(always)]
fn enter_this_thread_slow_with(
    operation: &'static str,
    on: fault::On,
) -> Result<ThreadGate, Refusal> {
    if watched(operation, on) {
        return Ok(ThreadGate::HELD);
    }
    enter_slow_with(operation, on, PROVIDED.load(Ordering::Relaxed), flags())
}

/// The fast path, two loads and one test: whether [`OPEN_FOR`] opens to a thread with this
/// [`THREAD`] bit.
#[inline(always)]
fn open_to(bit: u8) -> bool {
    OPEN_FOR.load(Ordering::Relaxed) & bit != 0
}

/// Proof that the thread holding it passed the gate's fast path when it was made: MPI was
/// active and the provided level let this thread call MPI without a lock, outside callbacks.
/// `!Send` and `!Sync`, so it stays on that thread.
///
/// A holder passes it to [`enter_with`](crate::env::enter_with) to skip the per-call test.
/// That is sound only while nothing can change what the test saw: the holder must not outlive
/// a handle borrowing [`Mpi`](crate::Mpi) (so MPI cannot be finalized meanwhile), and must be
/// unreachable from the callbacks MPI makes (user reductions are `'static`, so a holder
/// borrowed for less than `'static` is). A [`Scope`](crate::Scope) is such a holder: every
/// operation it completes borrows a communicator or window for the scope's whole lifetime, and
/// `&Scope` cannot leave its thread. Its [`Request`](crate::Request)s and
/// [`RequestSet`](crate::RequestSet)s use its pass too (for their waits and tests), through
/// their reference to the scope's in-flight count: they are neither `Send` nor `Sync` and
/// cannot outlive the scope. So is a [`WindowEpoch`](crate::window::WindowEpoch): it borrows
/// its window, and is neither `Send` nor `Sync`; and an
/// [`EpochTarget`](crate::window::EpochTarget), which borrows an epoch, copies its pass, and
/// is neither `Send` nor `Sync` either.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pass(PhantomData<*const ()>);

/// A [`Pass`] for the calling thread if the gate's fast path is open to it now (see [`enter`]).
#[inline(always)]
pub(crate) fn pass_here() -> Option<Pass> {
    open_to(THREAD.with(Cell::get)).then_some(Pass(PhantomData))
}

/// The [`OPEN_FOR`] table of a provided level (`LEVEL_NONE`: MPI not active).
const fn open_for(level: u8) -> u8 {
    const FUNNELED: u8 = ThreadLevel::Funneled as u8;
    const MULTIPLE: u8 = ThreadLevel::Multiple as u8;
    let mut table = 0;
    let mut thread: u8 = 0;
    // Every combination of the thread bits.
    while thread < 8 {
        let open = match level {
            // Any thread outside callbacks.
            MULTIPLE => thread & IN_CALLBACK == 0,
            // The initialising thread only, outside callbacks (and holding no lock).
            level if level <= FUNNELED => thread == INIT_THREAD,
            // `Serialized` takes its lock in the slow path; no level: refused there.
            _ => false,
        };
        if open {
            table |= 1 << thread;
        }
        thread += 1;
    }
    table
}

/// Records the provided level (an index, or `LEVEL_NONE`) for the gate. While the watchdog
/// runs, the fast paths stay closed: every call takes the slow path, which marks it.
fn set_provided(level: u8) {
    let (open, watched) = if fault::watching() {
        (0, open_for(level))
    } else {
        (open_for(level), 0)
    };
    WATCHED_OPEN_FOR.store(watched, Ordering::Release);
    OPEN_FOR.store(open, Ordering::Release);
    PROVIDED.store(level, Ordering::Release);
}

/// Everything but the fast paths of [`enter`] (and, while the watchdog runs, of [`watched`]):
/// `Serialized`, refusals; while the watchdog runs, the mark of each call it lets through
/// that [`watched`] did not mark (at `Serialized`, and a thread's first call).
#[cold]
#[inline(never)]
fn enter_slow(operation: &'static str, level: u8, thread: u8) -> Result<ThreadGate, Refusal> {
    enter_slow_with(operation, fault::On::NOTHING, level, thread)
}

/// [`enter_slow`] for a call on a communicator ([`gated_on`]). A function of its own, not
/// [`enter_slow`] given "no communicator" by every other caller: those keep their slow path's
/// arguments, and so the code laid out around their fast paths, as they were.
#[cold]
#[inline(never)]
fn enter_slow_on(
    operation: &'static str,
    comm: ffi::MPI_Comm,
    level: u8,
    thread: u8,
) -> Result<ThreadGate, Refusal> {
    enter_slow_with(operation, fault::On::comm(comm), level, thread)
}

/// What [`enter_slow`] and [`enter_slow_on`] do, for a call on `on`.
#[inline(always)]
fn enter_slow_with(
    operation: &'static str,
    on: fault::On,
    level: u8,
    thread: u8,
) -> Result<ThreadGate, Refusal> {
    if watched(operation, on) {
        return Ok(ThreadGate::HELD);
    }
    const SERIALIZED: u8 = ThreadLevel::Serialized as u8;
    let mut gate = admit(operation, level, thread)?;
    // Not a nested gate at `Serialized`: its outer gate marked, and undoes the mark.
    if fault::watching() && !(level == SERIALIZED && thread & HOLDS_SERIAL != 0) {
        fault::mark(operation, on);
        // Not `gate = ThreadGate::HELD`: that would drop the gate `admit` returned, releasing
        // the `Serialized` lock it just took.
        gate.held = true;
    }
    Ok(gate)
}

/// Whether the provided level lets this call through, and on what terms (see [`enter`]).
fn admit(operation: &'static str, level: u8, thread: u8) -> Result<ThreadGate, Refusal> {
    const MULTIPLE: u8 = ThreadLevel::Multiple as u8;
    const SERIALIZED: u8 = ThreadLevel::Serialized as u8;
    match level {
        _ if thread & IN_CALLBACK != 0 => Err(Refusal::InCallback { operation }),
        MULTIPLE => Ok(ThreadGate::OPEN),
        SERIALIZED if thread & HOLDS_SERIAL != 0 => Ok(ThreadGate::OPEN),
        SERIALIZED => {
            lock_serial();
            Ok(ThreadGate::HELD)
        }
        LEVEL_NONE => Err(not_active()),
        _ if thread & INIT_THREAD != 0 => Ok(ThreadGate::OPEN),
        level => Err(Refusal::WrongThread {
            operation,
            provided: ThreadLevel::ALL
                .get(usize::from(level))
                .copied()
                .unwrap_or(ThreadLevel::Single),
        }),
    }
}

/// Why MPI may not be called although no thread rule forbids it: it is not running.
#[cold]
fn not_active() -> Refusal {
    if STATE.load(Ordering::Acquire) == STATE_FINALIZED {
        Refusal::AlreadyFinalized
    } else {
        Refusal::NotInitialized
    }
}

/// Marks the calling thread as inside an MPI callback (a user-defined reduction) until the
/// returned guard drops: every gated call made meanwhile returns
/// [`ErrorKind::InCallback`](crate::ErrorKind::InCallback), since MPI forbids MPI calls from a
/// reduction function (MPI-4.0 §6.9.5) and at `Serialized` the caller of the collective already
/// holds the lock. Nests.
pub(crate) fn in_callback() -> CallbackGuard {
    let was = flags() & IN_CALLBACK != 0;
    set_thread_flag(IN_CALLBACK, true);
    CallbackGuard { was }
}

/// See [`in_callback`].
pub(crate) struct CallbackGuard {
    was: bool,
}

impl Drop for CallbackGuard {
    fn drop(&mut self) {
        set_thread_flag(IN_CALLBACK, self.was);
    }
}

/// Why the gate refused a call; MPI was not called. Becomes the [`Error`](crate::Error)
/// variant of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// MPI is not initialised yet.
    NotInitialized,
    /// MPI was finalized.
    AlreadyFinalized,
    /// A thread the provided level does not allow.
    WrongThread {
        operation: &'static str,
        provided: ThreadLevel,
    },
    /// Inside a callback MPI is making.
    InCallback { operation: &'static str },
}

/// Whether [`claim_init`] found MPI initialised or finalized already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Initialized,
    Finalized,
}

/// Claims initialisation for this thread: fails if MPI was initialised or finalized, or another
/// thread is initialising it.
pub(crate) fn claim_init() -> Result<(), Stage> {
    match STATE.compare_exchange(
        STATE_UNINIT,
        STATE_BUSY,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => Ok(()),
        Err(STATE_FINALIZED) => Err(Stage::Finalized),
        Err(_) => Err(Stage::Initialized),
    }
}

/// `MPI_Init_thread` returned `provided` on this thread: gated calls may reach MPI from now on
/// (an error lookup of a failing call made while initialisation finishes).
pub(crate) fn mpi_started(provided: ThreadLevel) {
    set_thread_flag(INIT_THREAD, true);
    set_provided(provided.index());
}

/// Initialisation completed.
pub(crate) fn init_completed() {
    STATE.store(STATE_ACTIVE, Ordering::Release);
}

/// Initialisation failed; `mpi_initialized` says whether MPI is half-initialised anyway (it
/// can then only be finalized, never initialised again).
pub(crate) fn init_failed(mpi_initialized: bool) {
    set_provided(LEVEL_NONE);
    set_thread_flag(INIT_THREAD, false);
    let state = if mpi_initialized {
        STATE_FINALIZED
    } else {
        STATE_UNINIT
    };
    STATE.store(state, Ordering::Release);
}

/// Finalization starts: every gated call is refused from now on.
pub(crate) fn finalize_started() {
    STATE.store(STATE_BUSY, Ordering::Release);
    set_provided(LEVEL_NONE);
}

/// `MPI_Finalize` returned.
pub(crate) fn finalize_completed() {
    set_thread_flag(INIT_THREAD, false);
    STATE.store(STATE_FINALIZED, Ordering::Release);
}

/// Whether MPI runs at `MPI_THREAD_SINGLE`, where the process promised MPI that only one thread
/// executes, so the crate starts no thread of its own.
pub(crate) fn is_single() -> bool {
    PROVIDED.load(Ordering::Relaxed) == ThreadLevel::Single as u8
}

/// Whether MPI is initialised and not being finalized.
pub(crate) fn is_active() -> bool {
    STATE.load(Ordering::Acquire) == STATE_ACTIVE
}

/// Operations of owned and persistent requests started and not yet completed, for the warning
/// at finalize (a leaked request's operation may never complete; MPICH's `MPI_Finalize` then
/// waits forever for a leaked pending send). Counted per thread without atomics (a request may
/// complete on another thread than the one that started it, so one thread's count can go
/// negative); a thread's count joins [`EXITED`] when the thread ends.
struct Outstanding(Cell<isize>);

impl Drop for Outstanding {
    fn drop(&mut self) {
        EXITED.fetch_add(self.0.get(), Ordering::Relaxed);
    }
}

thread_local! {
    static OUTSTANDING: Outstanding = const { Outstanding(Cell::new(0)) };
}

/// The counts of threads that have ended.
static EXITED: AtomicIsize = AtomicIsize::new(0);

/// Counts an owned or persistent operation started (`+1`) or completed (`-1`).
#[inline]
pub(crate) fn count_outstanding(change: isize) {
    // A thread being torn down has no counter left: its operations are then not counted.
    let _ = OUTSTANDING.try_with(|n| n.0.set(n.0.get() + change));
}

/// Operations started by owned or persistent requests and not completed, as far as this thread
/// and the threads that have ended know (threads still running keep their counts).
pub(crate) fn outstanding() -> isize {
    let here = OUTSTANDING.try_with(|n| n.0.get()).unwrap_or(0);
    here + EXITED.load(Ordering::Relaxed)
}

static CHECKED: AtomicBool = AtomicBool::new(false);

/// Turns checked mode on or off for collectives started from now on (see [`comm::agreement`](crate::comm::agreement)).
pub(crate) fn set_checked(on: bool) {
    CHECKED.store(on, Ordering::Relaxed);
}

/// Whether checked mode is on (one relaxed load, inlined into every nonblocking collective).
#[inline]
pub(crate) fn is_checked() -> bool {
    CHECKED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table opens exactly the two fast paths, for every level and thread state: any
    /// thread outside callbacks at `Multiple`, and the initialising thread, outside callbacks,
    /// at `Single` and `Funneled`. Everything else goes to `enter_slow`.
    #[test]
    fn open_for_is_the_two_fast_paths() {
        const FUNNELED: u8 = ThreadLevel::Funneled as u8;
        const MULTIPLE: u8 = ThreadLevel::Multiple as u8;
        let levels = ThreadLevel::ALL.map(ThreadLevel::index);
        for level in levels.into_iter().chain([LEVEL_NONE]) {
            for thread in 0..8u8 {
                let table = (open_for(level) >> thread) & 1 != 0;
                let rules = (level == MULTIPLE && thread & IN_CALLBACK == 0)
                    || (level <= FUNNELED && thread == INIT_THREAD);
                assert_eq!(table, rules, "level {level}, thread bits {thread:03b}");
            }
        }
    }

    /// [`THREAD`] keeps a thread's flags as the one bit `1 << flags` (the bit of [`OPEN_FOR`]
    /// the fast path tests), and [`flags`] reads them back.
    #[test]
    fn thread_bit_keeps_the_flags() {
        std::thread::spawn(|| {
            assert_eq!((flags(), THREAD.with(Cell::get)), (0, 1), "a new thread");
            set_thread_flag(INIT_THREAD, true);
            set_thread_flag(IN_CALLBACK, true);
            let both = INIT_THREAD | IN_CALLBACK;
            assert_eq!((flags(), THREAD.with(Cell::get)), (both, 1 << both));
            set_thread_flag(IN_CALLBACK, false);
            assert_eq!(
                (flags(), THREAD.with(Cell::get)),
                (INIT_THREAD, 1 << INIT_THREAD)
            );
        })
        .join()
        .expect("the flags' thread");
    }

    /// Keeps the tests of the one process-wide `Serialized` lock from running at once.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The `Serialized` lock excludes: threads that take it and release it many times are
    /// never inside at once, each sees its own `HOLDS_SERIAL` mark only while it holds the
    /// lock, and waiters wake when it comes free (a lost wake-up would hang this test).
    #[test]
    fn serial_lock_excludes_and_wakes() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let inside = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        lock_serial();
                        assert!(flags() & HOLDS_SERIAL != 0, "marked");
                        assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                        std::hint::spin_loop();
                        inside.store(false, Ordering::SeqCst);
                        release_serial();
                        assert!(flags() & HOLDS_SERIAL == 0, "unmarked");
                    }
                });
            }
        });
        assert!(!SERIAL.load(Ordering::SeqCst), "free at the end");
        assert_eq!(SERIAL_WAITERS.load(Ordering::SeqCst), 0, "no waiter left");
    }

    /// At `Serialized`, the gate the slow path returns holds the lock until it drops, with the
    /// watchdog's marks or without (a gate replaced by a marked one, rather than marked in
    /// place, released the lock it had just taken as the old one dropped).
    #[test]
    fn serialized_gate_holds_the_lock_until_dropped() {
        const SERIALIZED: u8 = ThreadLevel::Serialized as u8;
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        for watching in [false, true] {
            fault::set_watching(watching);
            std::thread::spawn(move || {
                let gate = enter_slow("test", SERIALIZED, flags()).expect("admitted");
                assert!(SERIAL.load(Ordering::SeqCst), "held (watching: {watching})");
                assert!(flags() & HOLDS_SERIAL != 0, "marked (watching: {watching})");
                drop(gate);
                assert!(
                    !SERIAL.load(Ordering::SeqCst),
                    "released (watching: {watching})"
                );
            })
            .join()
            .expect("the gate's thread");
        }
        fault::set_watching(false);
    }

    /// A thread that finds the `Serialized` lock held sleeps until the holder releases it, and
    /// the release wakes it (the path a release without waiters skips).
    #[test]
    fn serial_lock_waiter_wakes() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let entered = AtomicBool::new(false);
        lock_serial();
        std::thread::scope(|s| {
            s.spawn(|| {
                lock_serial();
                entered.store(true, Ordering::SeqCst);
                release_serial();
            });
            while SERIAL_WAITERS.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(
                !entered.load(Ordering::SeqCst),
                "entered while the lock was held"
            );
            release_serial();
        });
        assert!(entered.load(Ordering::SeqCst), "woken and entered");
        assert!(!SERIAL.load(Ordering::SeqCst), "free at the end");
    }
}
