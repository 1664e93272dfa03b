//! How a job ends when one of its ranks cannot go on: the line that says why, naming the rank
//! and its host, then `MPI_Abort` (MPI-4.0 §11.3), with a backstop should the abort itself
//! hang; and the watchdog, which ends a job whose rank has been inside one MPI call longer than
//! a limit (see [`InitOptions::watchdog`](crate::InitOptions::watchdog)).
//!
//! # The watchdog's marks
//! While the watchdog runs, every call the thread gate lets through marks a slot of the calling
//! thread with the operation's name (one store) and clears it when the call returns
//! (another); the gate's fast path is closed meanwhile, so that calls take the slow path, which
//! marks. With no watchdog the gate is as it is without this module: the marks cost nothing.
//! The watchdog thread looks at the slots every twentieth of the limit: a slot it finds marked
//! it flags, and a flagged slot still holding the same mark a limit later is a call that has
//! not returned. Callers store only unflagged values, so a call that returned and a new call of
//! the same operation are never taken for one long call. A call on a communicator also writes
//! the communicator's handle beside its mark (one more store), so that the watchdog's line can
//! say on which communicator the call waits: `MPI_COMM_WORLD`, the name given with
//! [`Communicator::set_name`](crate::Communicator::set_name), or its size. While the watchdog
//! runs, the communicators the crate makes are recorded with their sizes ([`COMMS`]) when made
//! and forgotten when freed, for that line; the calls on them pass only the handle, which they
//! hold anyway for the MPI call.

use crate::ffi;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// "rank R on HOST", recorded when MPI starts.
static WHO: OnceLock<String> = OnceLock::new();
/// The size of `MPI_COMM_WORLD`, recorded when MPI starts.
static WORLD_SIZE: AtomicI32 = AtomicI32::new(0);

/// Records who this process is, for the lines that end a job, and the size of the world.
pub(crate) fn identify(rank: c_int, world_size: c_int, host: &str) {
    WORLD_SIZE.store(world_size, Ordering::Relaxed);
    let _ = WHO.set(if host.is_empty() {
        format!("rank {rank}")
    } else {
        format!("rank {rank} on {host}")
    });
}

/// "rank R on HOST", or "a rank" before MPI started.
fn who() -> &'static str {
    WHO.get().map_or("a rank", String::as_str)
}

/// Prints `ferrompi: rank R on HOST: <why>; aborting the MPI job (MPI_Abort)` and aborts the
/// job with `code` ([`abort_world`]). The backstop starts first: a line to a standard error
/// that nobody drains (a launcher stuck on a dead link stops reading its ranks' output) would
/// otherwise block this process before it could abort.
#[cold]
pub(crate) fn abort_job(code: i32, why: std::fmt::Arguments<'_>) -> ! {
    start_backstop(code);
    eprintln!(
        "ferrompi: {}: {why}; aborting the MPI job (MPI_Abort)",
        who()
    );
    abort_world(code)
}

/// How long after an abort begins this process ends itself should it still run: an abort
/// that must reach a launcher over a dead link can wait forever, and so can a write to a
/// standard error nobody reads.
const ABORT_BACKSTOP: Duration = Duration::from_secs(5);

/// The backstop, once per process.
static BACKSTOP: std::sync::Once = std::sync::Once::new();

/// Starts the backstop: a thread that, [`ABORT_BACKSTOP`] from now, says so on standard error
/// without waiting for it (non-blocking) and exits the process with `code` (`_exit`: nothing
/// of the process runs, not MPI's exit handlers, which could wait for an unreachable launcher).
fn start_backstop(code: i32) {
    BACKSTOP.call_once(|| {
        let line = format!(
            "ferrompi: {}: the job did not end within {} s of the abort; exiting\n",
            who(),
            ABORT_BACKSTOP.as_secs()
        );
        let _ = std::thread::Builder::new()
            .name("ferrompi-abort".into())
            .spawn(move || {
                std::thread::sleep(ABORT_BACKSTOP);
                // SAFETY: fcntl and write on descriptor 2 with a valid buffer of `line.len()`
                // bytes; `_exit` then ends the process at once. Making standard error
                // non-blocking affects only writes that would wait, and the process ends next.
                unsafe {
                    let flags = libc::fcntl(2, libc::F_GETFL);
                    if flags >= 0 {
                        libc::fcntl(2, libc::F_SETFL, flags | libc::O_NONBLOCK);
                    }
                    libc::write(2, line.as_ptr().cast(), line.len());
                    libc::_exit(if code == 0 { 1 } else { code })
                }
            });
    });
}

/// Aborts the job through `MPI_COMM_WORLD`.
///
/// Flushes stdout and stderr and waits briefly first: launchers (MPICH's Hydra in particular)
/// kill every process as soon as `MPI_Abort` is called, and drop output they have not yet
/// forwarded, which would lose the message explaining the abort. Should the process still run
/// [`ABORT_BACKSTOP`] after the abort began (a launcher `MPI_Abort` cannot reach, an output
/// nobody drains), it exits with `code` by itself ([`start_backstop`]).
pub(crate) fn abort_world(code: i32) -> ! {
    use std::io::Write as _;
    start_backstop(code);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: MPI_Abort may be called from any thread as a last resort; it does not return.
    unsafe {
        ffi::MPI_Abort(ffi::MPI_COMM_WORLD, code);
    }
    std::process::abort()
}

/// The exit code of a job the watchdog ends: `timeout(1)`'s.
pub(crate) const WATCHDOG_EXIT: i32 = 124;

/// Threads with a slot of their own; later ones share the last.
const SLOTS: usize = 64;

/// One thread's slot, a cache line of its own (threads marking their slots do not take each
/// other's lines).
#[repr(align(64))]
pub(crate) struct Slot {
    /// The operation's name, its address in the low 48 bits and its length in the next 15;
    /// zero when no call is in progress. Bit 63 is the watchdog's flag.
    mark: AtomicU64,
    /// The communicator of the call: its handle's bits, zero for a call on none; written
    /// before the mark.
    comm: AtomicU64,
}

impl Slot {
    /// A slot no call has marked.
    const fn empty() -> Slot {
        Slot {
            mark: AtomicU64::new(0),
            comm: AtomicU64::new(0),
        }
    }

    /// Marks the slot as inside `operation` on `on`, until [`Slot::clear`]: two stores.
    #[inline(always)]
    pub(crate) fn mark(&self, operation: &'static str, on: On) {
        self.comm.store(on.0, Ordering::Relaxed);
        // Release: the watchdog that reads this mark (Acquire) reads the communicator stored above.
        self.mark.store(encode(operation), Ordering::Release);
    }

    /// The call marked returned: one store.
    #[inline(always)]
    fn clear(&self) {
        self.mark.store(0, Ordering::Relaxed);
    }
}

/// The slots, each thread's from its first marked call on.
static SLOT: [Slot; SLOTS] = [const { Slot::empty() }; SLOTS];
/// Slots handed out so far.
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
/// Whether the watchdog runs (the gate then takes its slow path, which marks).
static WATCHING: AtomicBool = AtomicBool::new(false);
/// The watchdog's flag on a mark it has seen.
const FLAGGED: u64 = 1 << 63;
const ADDRESS_BITS: u32 = 48;
/// The mark of an operation whose name does not fit one: "an MPI call" (as is a mark of an
/// empty name, whose length is zero).
const UNNAMED: u64 = 1;

thread_local! {
    /// The calling thread's slot; `None` until it first makes a call.
    static MY_SLOT: Cell<Option<&'static Slot>> = const { Cell::new(None) };
}

/// Whether the watchdog runs: calls must [`mark`] their slots.
#[inline]
pub(crate) fn watching() -> bool {
    WATCHING.load(Ordering::Relaxed)
}

/// Turns the marks on or off without a watchdog thread, for the gate's unit tests.
#[cfg(test)]
pub(crate) fn set_watching(on: bool) {
    WATCHING.store(on, Ordering::Relaxed);
}

/// The communicator a call is on, for the watchdog's line: its handle's bits, zero for none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct On(u64);

impl On {
    /// A call on no communicator (a wait, a window's epoch, finalize).
    pub(crate) const NOTHING: On = On(0);

    /// A call on the communicator `comm`.
    #[inline]
    pub(crate) fn comm(comm: ffi::MPI_Comm) -> On {
        On(ffi::handle_bits(comm))
    }
}

/// The calling thread's slot.
#[inline(always)]
fn slot() -> &'static Slot {
    match MY_SLOT.with(Cell::get) {
        Some(slot) => slot,
        None => claim_slot(),
    }
}

/// The calling thread's slot, if it has one yet.
#[inline(always)]
pub(crate) fn slot_if_any() -> Option<&'static Slot> {
    MY_SLOT.with(Cell::get)
}

/// Gives the calling thread a slot (the last one, shared, once all are taken).
#[cold]
#[inline(never)]
fn claim_slot() -> &'static Slot {
    let claimed = CLAIMED.fetch_add(1, Ordering::Relaxed).min(SLOTS - 1);
    let slot = &SLOT[claimed];
    MY_SLOT.with(|s| s.set(Some(slot)));
    slot
}

/// Marks the calling thread's slot as inside `operation` on `on`, until [`unmark`].
#[inline]
pub(crate) fn mark(operation: &'static str, on: On) {
    slot().mark(operation, on);
}

/// The call [`mark`] marked on this thread returned.
#[inline]
pub(crate) fn unmark() {
    if let Some(slot) = slot_if_any() {
        slot.clear();
    }
}

/// Makes `call` with the calling thread's slot marked as inside `operation` while the watchdog
/// runs: for a call that passes no gate (finalisation).
pub(crate) fn watched<R>(operation: &'static str, call: impl FnOnce() -> R) -> R {
    let watched = watching();
    if watched {
        mark(operation, On::NOTHING);
    }
    let result = call();
    if watched {
        unmark();
    }
    result
}

/// `operation` as a mark: its address and length, when they fit ([`UNNAMED`] otherwise).
#[inline]
fn encode(operation: &'static str) -> u64 {
    let address = operation.as_ptr().expose_provenance() as u64;
    let length = operation.len() as u64;
    if address >> ADDRESS_BITS | length >> 15 != 0 {
        return UNNAMED;
    }
    address | length << ADDRESS_BITS
}

/// The operation a mark (flagged or not) names.
fn decode(mark: u64) -> &'static str {
    let mark = mark & !FLAGGED;
    let length = (mark >> ADDRESS_BITS) as usize;
    if length == 0 {
        return "an MPI call";
    }
    let address = (mark & ((1 << ADDRESS_BITS) - 1)) as usize;
    let bytes = std::ptr::with_exposed_provenance::<u8>(address);
    // SAFETY: only `encode` makes marks with a length, from a `&'static str` whose address and
    // length fit in the mark unchanged: the bytes are that string's, valid UTF-8 for ever.
    unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(bytes, length)) }
}

/// A communicator the crate made (or one given a name) while the watchdog runs.
struct Known {
    comm: u64,
    size: c_int,
    name: Option<String>,
}

/// The communicators made, or named, while the watchdog runs, until freed: what the
/// watchdog's line says of a call's communicator. Kept only while the watchdog runs (it starts
/// before MPI, so it sees every communicator made).
static COMMS: Mutex<Vec<Known>> = Mutex::new(Vec::new());

fn known() -> std::sync::MutexGuard<'static, Vec<Known>> {
    COMMS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the communicator `comm` of `size` processes, just made.
pub(crate) fn comm_made(comm: ffi::MPI_Comm, size: c_int) {
    if watching() {
        let comm = ffi::handle_bits(comm);
        known().push(Known {
            comm,
            size,
            name: None,
        });
    }
}

/// Records `name` for the communicator `comm` of `size` processes.
pub(crate) fn comm_named(comm: ffi::MPI_Comm, size: c_int, name: &str) {
    if watching() {
        let comm = ffi::handle_bits(comm);
        let mut known = known();
        let name = Some(name.to_owned());
        match known.iter_mut().find(|k| k.comm == comm) {
            Some(k) => k.name = name,
            None => known.push(Known { comm, size, name }),
        }
    }
}

/// Forgets `comm`, which is being freed (MPI may hand its handle out again).
pub(crate) fn comm_freed(comm: ffi::MPI_Comm) {
    if watching() {
        let comm = ffi::handle_bits(comm);
        known().retain(|k| k.comm != comm);
    }
}

/// How the watchdog's line names the communicator of a call: ` on "solver" (4 ranks)`,
/// ` on MPI_COMM_WORLD (4 ranks)`, ` on a communicator of 2 ranks`; nothing for a call on none.
fn describe(on: On) -> String {
    let ranks = |size: c_int| format!("{size} rank{}", if size == 1 { "" } else { "s" });
    let comm = on.0;
    if comm == 0 {
        return String::new();
    }
    let world = comm == ffi::handle_bits(ffi::MPI_COMM_WORLD);
    let known = known();
    match known.iter().find(|k| k.comm == comm) {
        Some(Known {
            name: Some(name),
            size,
            ..
        }) => format!(" on {name:?} ({})", ranks(*size)),
        _ if world => format!(
            " on MPI_COMM_WORLD ({})",
            ranks(WORLD_SIZE.load(Ordering::Relaxed))
        ),
        _ if comm == ffi::handle_bits(ffi::MPI_COMM_SELF) => " on MPI_COMM_SELF".to_string(),
        Some(Known { size, .. }) => format!(" on a communicator of {}", ranks(*size)),
        None => " on a communicator".to_string(),
    }
}

/// Set to stop the watchdog thread, which waits on the condition variable between looks.
static STOP: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
/// The watchdog thread, while it runs.
static THREAD: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);

/// Starts the watchdog thread with `limit`; from then on gated calls are marked. Called before
/// MPI starts (the gate reads [`watching`] when it records MPI's thread level), once: MPI
/// starts once per process.
pub(crate) fn start(limit: Duration) -> std::io::Result<()> {
    WATCHING.store(true, Ordering::Relaxed);
    let thread = std::thread::Builder::new()
        .name("ferrompi-watch".into())
        .spawn(move || watch(limit, &STOP))
        .inspect_err(|_| WATCHING.store(false, Ordering::Relaxed))?;
    *THREAD.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
    Ok(())
}

/// Stops the watchdog, if it runs, and waits for its thread: MPI has finalized, or failed to
/// start.
pub(crate) fn stop() {
    let Some(thread) = THREAD.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    *STOP.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
    STOP.1.notify_all();
    let _ = thread.join();
    WATCHING.store(false, Ordering::Relaxed);
}

/// The watchdog thread: looks at the slots every twentieth of `limit` until stopped, and ends
/// the job when a call has been in progress for `limit`.
fn watch(limit: Duration, stop: &(Mutex<bool>, Condvar)) {
    let tick = (limit / 20).clamp(Duration::from_millis(5), Duration::from_secs(1));
    // When each slot's flagged mark was flagged (or first seen flagged).
    let mut since: [Option<Instant>; SLOTS] = [None; SLOTS];
    let mut stopped = stop.0.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        stopped = stop
            .1
            .wait_timeout(stopped, tick)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        if *stopped {
            return;
        }
        let now = Instant::now();
        let claimed = CLAIMED.load(Ordering::Relaxed).min(SLOTS);
        for (slot, since) in SLOT[..claimed].iter().zip(&mut since) {
            let mark = slot.mark.load(Ordering::Acquire);
            if mark == 0 {
                *since = None;
            } else if mark & FLAGGED == 0 {
                // A call in progress: flag it. A failed flag is a call that has just returned.
                *since = (slot.mark)
                    .compare_exchange(mark, mark | FLAGGED, Ordering::Relaxed, Ordering::Relaxed)
                    .ok()
                    .map(|_| now);
            } else {
                let began = *since.get_or_insert(now);
                let waited = now - began;
                if waited >= limit {
                    let on = On(slot.comm.load(Ordering::Relaxed));
                    if slot.mark.load(Ordering::Acquire) != mark {
                        continue; // it returned just now
                    }
                    abort_job(
                        WATCHDOG_EXIT,
                        format_args!(
                            "watchdog: {}{} has not returned after {:.1} s (limit {:.1} s)",
                            decode(mark),
                            describe(on),
                            waited.as_secs_f64(),
                            limit.as_secs_f64()
                        ),
                    );
                }
            }
        }
    }
}

/// The shortest watchdog limit taken, from the environment or from the program: below it the
/// watchdog's looks (a twentieth of the limit, at least 5 ms) would be too coarse.
pub(crate) const SHORTEST_LIMIT: Duration = Duration::from_millis(100);

/// The limit a `FERROMPI_WATCHDOG` value sets: a number of seconds, or a number with a unit
/// (`ms`, `s`, `m`, `h`): `30`, `30s`, `500ms`, `1.5m`. `0` and `off` mean no watchdog.
pub(crate) fn parse_limit(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown unit {other:?} (a number of seconds, or with ms, s, m or h)"
            ));
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| "not a duration (a number of seconds, or with ms, s, m or h)".to_string())?;
    match Duration::try_from_secs_f64(value * scale) {
        Ok(limit) if limit.is_zero() => Ok(None),
        Ok(limit) if limit < SHORTEST_LIMIT => Err(format!(
            "below the shortest limit, {} ms",
            SHORTEST_LIMIT.as_millis()
        )),
        Ok(limit) => Ok(Some(limit)),
        Err(_) => Err("out of range".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_with_and_without_units() {
        let secs = |s: f64| Ok(Some(Duration::from_secs_f64(s)));
        assert_eq!(parse_limit("30"), secs(30.0));
        assert_eq!(parse_limit("30s"), secs(30.0));
        assert_eq!(parse_limit(" 2.5 s "), secs(2.5));
        assert_eq!(parse_limit("500ms"), secs(0.5));
        assert_eq!(parse_limit("1.5m"), secs(90.0));
        assert_eq!(parse_limit("2h"), secs(7200.0));
        assert_eq!(parse_limit("0"), Ok(None));
        assert_eq!(parse_limit("OFF"), Ok(None));
        for bad in [
            "",
            "s",
            "ten",
            "3 days",
            "-1",
            "1e3",
            "5ms",
            "1.2.3",
            "99999999999999999999h",
        ] {
            assert!(parse_limit(bad).is_err(), "{bad:?} was taken");
        }
    }

    #[test]
    fn marks_name_their_operation() {
        for name in ["allreduce", "wait", "x"] {
            assert_eq!(decode(encode(name)), name);
            assert_eq!(decode(encode(name) | FLAGGED), name);
        }
        assert_eq!(decode(encode("")), "an MPI call");
        assert_eq!(decode(UNNAMED | FLAGGED), "an MPI call");
    }

    #[test]
    fn lines_name_the_communicator() {
        WORLD_SIZE.store(4, Ordering::Relaxed);
        assert_eq!(describe(On::NOTHING), "");
        assert_eq!(
            describe(On::comm(ffi::MPI_COMM_WORLD)),
            " on MPI_COMM_WORLD (4 ranks)"
        );
        assert_eq!(describe(On::comm(ffi::MPI_COMM_SELF)), " on MPI_COMM_SELF");
        // Handles no MPI hands out here (the registry is this test's alone).
        let (made, named, unknown) = (u64::MAX - 1, u64::MAX - 2, u64::MAX - 3);
        known().push(Known {
            comm: made,
            size: 2,
            name: None,
        });
        known().push(Known {
            comm: named,
            size: 1,
            name: Some("solver".into()),
        });
        assert_eq!(describe(On(made)), " on a communicator of 2 ranks");
        assert_eq!(describe(On(named)), " on \"solver\" (1 rank)");
        assert_eq!(describe(On(unknown)), " on a communicator");
        known().retain(|k| k.comm != made && k.comm != named);
    }

    proptest::proptest! {
        #[test]
        fn no_text_panics_the_parser(text in "\\PC{0,12}") {
            let _ = parse_limit(&text);
        }
    }
}
