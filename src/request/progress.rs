//! Progress for futures.
//!
//! MPI has no completion callbacks, so a pending request future must be polled again later. A
//! single ticker thread per process keeps the wakers of pending futures and wakes them every
//! [`interval`]; each woken task re-tests its request with `MPI_Test` on its own thread. The
//! ticker makes **no MPI calls**, so futures are sound at every thread level: the MPI calls happen
//! where the executor polls, through the thread gate (at `Funneled`, poll on the initialising
//! thread, e.g. with a single-threaded executor; at `Multiple`, anywhere).
//!
//! Cost: one thread for the whole process, asleep when nothing is pending; per tick, one
//! `MPI_Test` per pending future. Completion is noticed within about one interval.
//!
//! At [`ThreadLevel::Single`](crate::ThreadLevel::Single) the process has promised MPI that only
//! one thread executes (MPI-4.0 §11.6), so there is no ticker: a pending future wakes its task
//! at once and the executor polls it again straight away. That is a busy test loop on the one
//! thread, which costs a core while a future waits; use `Funneled` for long waits.
//!
//! If the ticker cannot be started (the process is at its thread limit, as a cgroup's
//! `pids.max` or `ulimit -u` can make it on a shared node), futures fall back to that same
//! wake-at-once loop, for the rest of the process, instead of panicking in `poll`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::task::Waker;
use std::time::Duration;

static WAKERS: Mutex<Vec<Waker>> = Mutex::new(Vec::new());
static PENDING: Condvar = Condvar::new();
/// Whether the ticker runs: decided on the first pending future (false if it could not start).
static TICKER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
static INTERVAL_NANOS: AtomicU64 = AtomicU64::new(50_000);

/// How often pending futures are polled again (default 50 µs).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// let every = ferrompi::request::progress::interval(); // how often pending futures test
/// assert!(every > std::time::Duration::ZERO);
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub fn interval() -> Duration {
    Duration::from_nanos(INTERVAL_NANOS.load(Ordering::Relaxed))
}

/// Sets how often pending futures are polled again: shorter notices completion sooner, longer
/// costs less CPU when many futures wait a long time.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use std::time::Duration;
/// ferrompi::request::progress::set_interval(Duration::from_micros(50));
/// assert_eq!(ferrompi::request::progress::interval(), Duration::from_micros(50));
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub fn set_interval(interval: Duration) {
    let nanos = u64::try_from(interval.as_nanos())
        .unwrap_or(u64::MAX)
        .max(1);
    INTERVAL_NANOS.store(nanos, Ordering::Relaxed);
}

/// The `poll` of every request future: ready with the outcome of a test that completed or
/// failed, else pending with a wake-up scheduled.
pub(crate) fn poll_tested(
    tested: crate::Result<Option<crate::Status>>,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<crate::Result<crate::Status>> {
    match tested {
        Ok(Some(status)) => std::task::Poll::Ready(Ok(status)),
        Ok(None) => {
            wake_soon(cx.waker());
            std::task::Poll::Pending
        }
        Err(e) => std::task::Poll::Ready(Err(e)),
    }
}

/// Asks the ticker to wake `waker` after about one interval. At `Single` there is no ticker: the
/// task is woken at once, so the executor polls again straight away (a test loop on the one
/// thread, as a C program at `MPI_THREAD_SINGLE` would write it); so it is where the ticker
/// could not be started.
pub(crate) fn wake_soon(waker: &Waker) {
    if crate::gate::is_single() || !ticker_runs() {
        waker.wake_by_ref();
        return;
    }
    let was_empty = {
        let mut wakers = WAKERS.lock().unwrap_or_else(|e| e.into_inner());
        let was_empty = wakers.is_empty();
        wakers.push(waker.clone());
        was_empty
    };
    // The ticker waits only while the list is empty: a notify is a system call even with no
    // thread waiting, so only the push that ends an empty list makes one.
    if was_empty {
        PENDING.notify_one();
    }
}

/// Starts the ticker on the first call; whether it runs.
fn ticker_runs() -> bool {
    *TICKER.get_or_init(|| {
        std::thread::Builder::new()
            .name("ferrompi-progress".into())
            .spawn(ticker)
            .is_ok()
    })
}

fn ticker() {
    let mut batch = Vec::new();
    loop {
        {
            let mut wakers = WAKERS.lock().unwrap_or_else(|e| e.into_inner());
            while wakers.is_empty() {
                wakers = PENDING.wait(wakers).unwrap_or_else(|e| e.into_inner());
            }
            std::mem::swap(&mut *wakers, &mut batch);
        }
        std::thread::sleep(interval());
        for waker in batch.drain(..) {
            waker.wake();
        }
    }
}
