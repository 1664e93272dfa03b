//! The access epochs of an RMA [`Window`] (MPI-4.0 §12.5): the methods that open them (fence,
//! start/complete, lock, lock_all), and [`WindowEpoch`], through which the one-sided calls are
//! made while one is open: its type and target checks here, the calls themselves in `calls`.
//! The target side of post/wait ([`Exposure`](super::Exposure)) is in `exposure`.

use super::rma::{ACCESS, EXPOSED, FENCE_OPEN, Window};
use super::target::{Calls, Layout, LayoutTarget, Reach, Target, admits};
use super::{Assert, LockType};
use crate::comm::group::Group;
use crate::datatype::{DerivedType, Equivalence};
use crate::env::enter;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;

mod calls;

impl<'c, T: Equivalence> Window<'c, T> {
    /// Opens an access epoch of `kind` after checking none is open on this process, and that
    /// no fence epoch is either, unless `kind` is the next fence.
    fn begin(&self, kind: EpochKind, operation: &'static str) -> Result<()> {
        let state = self.state.load(Ordering::Acquire);
        if state & FENCE_OPEN != 0 && kind != EpochKind::Fence {
            return Err(fence_still_open(operation));
        }
        let exposed = state & EXPOSED != 0;
        let busy = state & ACCESS != 0 || (exposed && kind == EpochKind::Fence);
        if busy
            || self
                .state
                .compare_exchange(state, state | ACCESS, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return Err(ErrorKind::EpochMisuse {
                operation,
                reason: "another epoch is open on this window in this process".into(),
            }
            .into());
        }
        Ok(())
    }

    /// Runs `body` in the epoch `kind`, then closes it with `close`, whatever `body` returns.
    fn epoch<'buf, R>(
        &self,
        kind: EpochKind,
        open: impl FnOnce() -> c_int,
        close: impl FnOnce() -> c_int,
        names: (&'static str, &'static str),
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        self.begin(kind, names.0)?;
        let opened = {
            let gate = enter(names.0);
            // SAFETY (of the call in `open`): a valid window; the caller's open call.
            gate.and_then(|_gate| check(open(), names.0))
        };
        if let Err(e) = opened {
            self.state.fetch_and(!ACCESS, Ordering::AcqRel);
            return Err(e);
        }
        // This thread just opened the epoch through the gate; the epoch stays on it.
        let pass = crate::gate::pass_here();
        let epoch = WindowEpoch {
            calls: Calls {
                win: self.win.raw,
                pass,
            },
            layout: &self.layout,
            kind,
            any: FastRanks::of(kind, pass.is_some(), false, self.layout.reach()),
            now: FastRanks::of(kind, pass.is_some(), true, self.layout.reach()),
            scale: self.layout.scale(),
            _buf: PhantomData,
        };
        let abort_guard = super::AbortOnUnwind("an RMA epoch");
        let result = body(&epoch);
        let closed = enter(names.1).and_then(|_gate| check(close(), names.1));
        std::mem::forget(abort_guard);
        self.state.fetch_and(!ACCESS, Ordering::AcqRel);
        match closed {
            Ok(()) => Ok(result),
            Err(e) => {
                // The epoch may still be open and MPI may still use the buffers, which the
                // caller would get back: end the job instead (MPI failing to close an epoch
                // whose calls all passed the checks is not an input error).
                eprintln!("ferrompi: closing an RMA epoch failed ({e}); aborting");
                crate::fault::abort_world(103)
            }
        }
    }

    /// A fence epoch (`MPI_Win_fence`, MPI-4.0 §12.5.1): every process calls it; `body`'s RMA
    /// calls are complete everywhere when it returns. One fence per epoch, as in C: the fence
    /// closing an epoch opens the next, and the first one opens with `MPI_MODE_NOPRECEDE`.
    /// `assert` goes to the closing fence.
    ///
    /// A fence that does not assert [`Assert::NOSUCCEED`] leaves the next fence epoch open
    /// (MPI-4.0 §12.5.1), and the MPI calls of the next `fence` depend on it. So that they are
    /// the same on every process whatever a process did in between, nothing else changes it:
    /// until a fence asserts `NOSUCCEED`, [`lock`](Window::lock),
    /// [`lock_all`](Window::lock_all), [`access`](Window::access) and
    /// [`expose`](Window::expose) are refused with [`ErrorKind::EpochMisuse`] (MPI forbids them
    /// inside a fence epoch), and a fence refused before reaching MPI (another epoch open on
    /// this process, a thread the thread level refuses) leaves the sequence as it was.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let mine = [i64::from(me)];
    /// // Every rank puts its rank into slot 0 of its right neighbour; the closing fence completes it.
    /// win.fence(Assert::empty(), |epoch| epoch.put(&mine, (me + 1) % size, 0))??;
    /// let mut seen = [0i64];
    /// win.fence(Assert::empty(), |epoch| epoch.get(&mut seen, me, 0))??;
    /// assert_eq!(seen[0], i64::from((me + size - 1) % size));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMisuse`] if another epoch is open on this process (or, for the other
    /// epochs, a fence epoch); [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`] from opening the
    /// epoch. The calls inside return their own errors to `body`. If MPI fails to *close* the epoch
    /// the job is aborted with the error's message, since MPI may still be using the buffers.
    pub fn fence<'buf, R>(
        &self,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        let was_open = self.state.load(Ordering::Acquire) & FENCE_OPEN != 0;
        let result = self.epoch(
            EpochKind::Fence,
            || {
                if was_open {
                    ffi::MPI_SUCCESS
                } else {
                    // SAFETY: a valid window; opens the fence epoch.
                    unsafe { ffi::MPI_Win_fence(Assert::NOPRECEDE.bits(), win) }
                }
            },
            // SAFETY: a valid window in a fence epoch.
            || unsafe { ffi::MPI_Win_fence(assert.bits(), win) },
            ("win_fence", "win_fence"),
            body,
        );
        // Only a fence that was made changes the sequence (a refused one made no MPI call;
        // one whose closing call failed has aborted the job).
        if result.is_ok() {
            if assert.contains(Assert::NOSUCCEED) {
                self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
            } else {
                self.state.fetch_or(FENCE_OPEN, Ordering::AcqRel);
            }
        }
        result
    }

    /// An access epoch to the processes of `group` (`MPI_Win_start` … `MPI_Win_complete`,
    /// MPI-4.0 §12.5.2); they expose their windows with [`expose`](Window::expose).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let everyone = world.group()?;
    /// let exposure = win.expose(&everyone, Assert::empty())?; // MPI_Win_post
    /// win.access(&everyone, Assert::empty(), |epoch| epoch.put(&[1i64], me, 1))??; // start/complete
    /// exposure.wait()?; // MPI_Win_wait
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::fence`].
    pub fn access<'buf, R>(
        &self,
        group: &Group<'_>,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        self.epoch(
            EpochKind::Access,
            // SAFETY: a valid window and group.
            || unsafe { ffi::MPI_Win_start(group.as_raw(), assert.bits(), win) },
            // SAFETY: a valid window in an access epoch.
            || unsafe { ffi::MPI_Win_complete(win) },
            ("win_start", "win_complete"),
            body,
        )
    }

    /// A passive-target epoch on `target` (`MPI_Win_lock` … `MPI_Win_unlock`, MPI-4.0
    /// §12.5.3): the target takes no part.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{LockType, Window, window::Assert};
    /// let win = Window::<u64>::allocate(&world, 1)?;
    /// // Passive target: rank 0's memory, no action from rank 0.
    /// win.lock(LockType::Exclusive, 0, Assert::empty(), |epoch| {
    ///     epoch.accumulate(&[1u64], 0, 0, ferrompi::op::Sum)
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`]; as [`Window::fence`].
    pub fn lock<'buf, R>(
        &self,
        lock: LockType,
        target: i32,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        if self.len_of(target).is_none() {
            return Err(ErrorKind::InvalidRank {
                operation: "win_lock",
                role: "target",
                rank: target,
                size: c_int::try_from(self.layout.lens().len()).unwrap_or(c_int::MAX),
            }
            .into());
        }
        let win = self.win.raw;
        self.epoch(
            EpochKind::Lock(target),
            // SAFETY: a valid window and rank.
            || unsafe { ffi::MPI_Win_lock(lock.raw(), target, assert.bits(), win) },
            // SAFETY: a valid window locked on `target`.
            || unsafe { ffi::MPI_Win_unlock(target, win) },
            ("win_lock", "win_unlock"),
            body,
        )
    }

    /// A passive-target epoch on every process (`MPI_Win_lock_all` … `MPI_Win_unlock_all`,
    /// MPI-4.0 §12.5.3), shared locks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let last = win.lock_all(Assert::empty(), |epoch| {
    ///     epoch.fetch_and_op(1, 0, 3, ferrompi::op::Sum) // a shared counter in rank 0's slot 3
    /// })??;
    /// assert!(last >= 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::fence`].
    pub fn lock_all<'buf, R>(
        &self,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        self.epoch(
            EpochKind::LockAll,
            // SAFETY: a valid window.
            || unsafe { ffi::MPI_Win_lock_all(assert.bits(), win) },
            // SAFETY: a valid window under lock_all.
            || unsafe { ffi::MPI_Win_unlock_all(win) },
            ("win_lock_all", "win_unlock_all"),
            body,
        )
    }
}

/// [`ErrorKind::EpochMisuse`], built out of line so the checks on the hot path stay small.
#[cold]
#[inline(never)]
pub(super) fn misuse(operation: &'static str, reason: std::fmt::Arguments<'_>) -> Error {
    ErrorKind::EpochMisuse {
        operation,
        reason: reason.to_string(),
    }
    .into()
}

/// The misuse of an epoch other than a fence while a fence epoch is open.
#[cold]
#[inline(never)]
pub(super) fn fence_still_open(operation: &'static str) -> Error {
    misuse(
        operation,
        format_args!(
            "a fence epoch is open: the last fence did not assert NOSUCCEED, so MPI allows no \
             other epoch until a fence does (MPI-4.0 §12.5.1)"
        ),
    )
}

/// The misuse of a call only passive-target epochs allow.
#[cold]
#[inline(never)]
pub(super) fn not_passive(operation: &'static str) -> Error {
    misuse(
        operation,
        format_args!("only passive-target (lock, lock_all) epochs allow this"),
    )
}

/// The misuse of a call to another rank than the one a `lock` epoch locks.
#[cold]
#[inline(never)]
pub(super) fn not_locked(operation: &'static str, locked: i32, rank: i32) -> Error {
    misuse(
        operation,
        format_args!("the epoch locks rank {locked}, not {rank}"),
    )
}

/// Which synchronisation opened an epoch, and so which calls it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EpochKind {
    Fence,
    Access,
    Lock(i32),
    LockAll,
}

/// The ranks whose windows a kind of call of a [`WindowEpoch`] may reach by its fast path
/// ([`WindowEpoch::with_target`]), with their [`Reach`]: those of `reach`, from rank `first`
/// on. The epoch's kind and whether it holds a pass of the thread gate decide which, so that
/// a call tests them with the rank's bounds, in one test.
#[derive(Debug, Clone, Copy)]
struct FastRanks<'e> {
    first: i32,
    reach: &'e [Reach],
}

impl<'e> FastRanks<'e> {
    /// None: every call takes the full check.
    const NONE: FastRanks<'static> = FastRanks {
        first: 0,
        reach: &[],
    };

    /// The fast ranks of an epoch of `kind` over a window whose ranks have `reach`, for the
    /// calls only passive epochs allow if `passive_only`, and none unless the epoch holds a
    /// pass of the gate (`pass`).
    fn of(kind: EpochKind, pass: bool, passive_only: bool, reach: &'e [Reach]) -> Self {
        let all = FastRanks { first: 0, reach };
        match kind {
            _ if !pass => FastRanks::NONE,
            EpochKind::Fence | EpochKind::Access if passive_only => FastRanks::NONE,
            EpochKind::Fence | EpochKind::Access | EpochKind::LockAll => all,
            EpochKind::Lock(rank) => usize::try_from(rank)
                .ok()
                .and_then(|r| reach.get(r..=r))
                .map_or(FastRanks::NONE, |reach| FastRanks { first: rank, reach }),
        }
    }

    /// [`admits`] for these ranks: `rank - first` becomes a large `u32` for a rank before
    /// `first`, past the end of any slice of ranks.
    #[inline(always)]
    fn admits<T: Equivalence>(self, rank: i32, index: usize, len: usize) -> Option<ffi::MPI_Aint> {
        admits::<T>(self.reach, rank.wrapping_sub(self.first), index, len)
    }
}

impl EpochKind {
    /// Whether this is a passive-target epoch (`lock`, `lock_all`), which allows the calls
    /// that complete before returning (`put_now`, `get_now`, `flush`, the atomics).
    pub(super) const fn is_passive(self) -> bool {
        matches!(self, EpochKind::Lock(_) | EpochKind::LockAll)
    }
}

/// An open access epoch of a [`Window`]: the one-sided calls. Made only by the window's
/// epoch methods, for the duration of their closure, and neither `Send` nor `Sync`: its calls
/// are made on the thread that opened the epoch, which passed the thread gate then, so they
/// skip the gate's per-call test (at `Serialized` they still take the lock each time).
///
/// Buffers are borrowed for `'buf`, which outlives the epoch: MPI may read (put, accumulate)
/// or write (get) them until the epoch is complete, and they come back only then. They cannot
/// be made inside the closure:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::{Assert, Window}};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let win = Window::<f64>::allocate(&world, 4).unwrap();
/// win.fence(Assert::empty(), |e| {
///     let mut local = [0.0f64; 4];
///     e.get(&mut local, 0, 0) // error[E0597]: `local` does not live long enough
/// }).unwrap().unwrap();
/// ```
///
/// nor used again before the epoch ends:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::{Assert, Window}};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let win = Window::<f64>::allocate(&world, 4).unwrap();
/// let mut buf = [0.0f64; 4];
/// win.fence(Assert::empty(), |e| {
///     e.get(&mut buf, 0, 0).unwrap();
///     buf[0] // error[E0503]: cannot use `buf[_]` because it was mutably borrowed
/// }).unwrap();
/// ```
///
/// The epoch stays on the thread that opened it:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::{Assert, Window}};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let win = Window::<f64>::allocate(&world, 4).unwrap();
/// let buf = [1.0f64; 4];
/// win.lock_all(Assert::empty(), |e| {
///     std::thread::scope(|s| {
///         // error[E0277]: `*const ()` cannot be shared between threads safely
///         s.spawn(|| e.put_now(&buf, 0, 0)).join().unwrap()
///     })
/// }).unwrap().unwrap();
/// ```
pub struct WindowEpoch<'e, 'buf, T: Equivalence> {
    pub(super) calls: Calls,
    pub(super) layout: &'e Layout,
    pub(super) kind: EpochKind,
    /// The ranks the calls any epoch allows may reach by the fast path, and those of the
    /// calls only passive epochs allow (`now`): both from the layout, `kind` and whether
    /// `calls` holds a pass ([`FastRanks::of`]), so that a call reads all it needs from here.
    any: FastRanks<'e>,
    now: FastRanks<'e>,
    /// The layout's scale, copied for the same reason.
    scale: ffi::MPI_Aint,
    /// Invariant in `'buf`, so the closure cannot shorten it to its own lifetime.
    _buf: PhantomData<&'buf mut &'buf [T]>,
}

impl<T: Equivalence> std::fmt::Debug for WindowEpoch<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowEpoch")
            .field("kind", &self.kind)
            .finish()
    }
}

impl<'buf, T: Equivalence> WindowEpoch<'_, 'buf, T> {
    /// Checks the target for this epoch and the window; with `passive_only`, also that the
    /// epoch is a passive one (the calls that complete before returning: `put_now`, `get_now`,
    /// `flush`), in the same test of the epoch's kind.
    #[inline(always)]
    fn check_target(
        &self,
        passive_only: bool,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Target> {
        match self.kind {
            EpochKind::Lock(locked) if locked != rank => {
                return Err(not_locked(operation, locked, rank));
            }
            EpochKind::Fence | EpochKind::Access if passive_only => {
                return Err(not_passive(operation));
            }
            _ => {}
        }
        self.layout.locate::<T>(rank, index, len, operation)
    }

    /// Makes `call` to `rank`'s window, `len` values from element `index`, once checked as
    /// [`WindowEpoch::check_target`] does: in one test of the rank against the epoch's
    /// [`FastRanks`] for the kind of call and one of the rank's bounds, then the full check out
    /// of line for anything else.
    ///
    /// A call that passes the fast path holds the epoch's pass of the thread gate, so `call`
    /// gets calls that carry the pass as a constant and make no test of the gate. Keeping
    /// every other call out of line keeps the paths apart, so that nothing of the slow one
    /// (its target, its gate) is tested again after the fast one.
    #[inline(always)]
    fn with_target<R>(
        &self,
        passive_only: bool,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
        call: impl FnOnce(Target, Calls) -> Result<R>,
    ) -> Result<R> {
        let fast = if passive_only { self.now } else { self.any };
        let Some(base) = fast.admits::<T>(rank, index, len) else {
            return self.with_target_slow(passive_only, rank, index, len, operation, call);
        };
        // SAFETY: both `FastRanks` are empty, so that they admit nothing, where the epoch
        // holds no pass (`FastRanks::of`, where the only maker of a `WindowEpoch` sets them).
        let pass = unsafe { self.calls.pass.unwrap_unchecked() };
        let calls = Calls {
            win: self.calls.win,
            pass: Some(pass),
        };
        // SAFETY: `base` is what `rank`'s `Reach` admitted for `index` and `len`: `fast`'s slice
        // of the layout's entries starts at rank `first`, so entry `rank - first` is `rank`'s
        // (and it holds only ranks this epoch's kind allows the call to); the scale is the
        // window's.
        let target = unsafe { Target::inside::<T>(rank, index, len, self.scale, base) };
        call(target, calls)
    }

    /// Makes `call` with `count` copies of `layout` laid from element `index` of `rank`'s
    /// window, once checked: the rank and the epoch as [`WindowEpoch::check_target`] does,
    /// and every byte the copies reach inside the window ([`Layout::locate_layout`]).
    fn with_layout_target<R>(
        &self,
        passive_only: bool,
        rank: i32,
        index: usize,
        (layout, count): (&DerivedType<'_>, usize),
        operation: &'static str,
        call: impl FnOnce(LayoutTarget, Calls) -> Result<R>,
    ) -> Result<R> {
        let at = self.check_target(passive_only, rank, index, 0, operation)?;
        let target = self
            .layout
            .locate_layout::<T>(at, index, layout, count, operation)?;
        call(target, self.calls)
    }

    /// [`WindowEpoch::with_target`] for a call its fast path did not pass.
    #[cold]
    #[inline(never)]
    fn with_target_slow<R>(
        &self,
        passive_only: bool,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
        call: impl FnOnce(Target, Calls) -> Result<R>,
    ) -> Result<R> {
        call(
            self.check_target(passive_only, rank, index, len, operation)?,
            self.calls,
        )
    }

    #[inline]
    fn passive(&self, operation: &'static str) -> Result<()> {
        if self.kind.is_passive() {
            Ok(())
        } else {
            Err(not_passive(operation))
        }
    }
}

// SAFETY: the handle and layout are read-only; epochs are serialised per process by `state`
// (atomic), every call passes the thread gate, and local memory is never referenced by Rust.
unsafe impl<T: Equivalence + Send> Send for Window<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Equivalence + Sync> Sync for Window<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path admits a call exactly where the epoch holds a pass and its kind allows
    /// the call to that rank, and the rank is the window's; every other call takes the full
    /// check (which returns its error, or enters the gate).
    #[test]
    fn fast_ranks_admit_what_the_epoch_allows() {
        let mut layout = Layout::new(1);
        layout.set_lens(Box::new([4, 4, 4]), 0);
        let kinds = [
            EpochKind::Fence,
            EpochKind::Access,
            EpochKind::LockAll,
            EpochKind::Lock(0),
            EpochKind::Lock(2),
            EpochKind::Lock(3),
            EpochKind::Lock(-1),
        ];
        for kind in kinds {
            for (pass, passive_only) in [(true, true), (true, false), (false, true), (false, false)]
            {
                let fast = FastRanks::of(kind, pass, passive_only, layout.reach());
                for rank in [i32::MIN, -2, -1, 0, 1, 2, 3, 4, i32::MAX] {
                    let allowed = match kind {
                        EpochKind::Fence | EpochKind::Access => !passive_only,
                        EpochKind::Lock(locked) => locked == rank,
                        EpochKind::LockAll => true,
                    };
                    let expected = pass && allowed && (0..3).contains(&rank);
                    let admitted = fast.admits::<u8>(rank, 0, 1).is_some();
                    assert_eq!(admitted, expected, "{kind:?} {pass} {passive_only} {rank}");
                }
            }
        }
    }
}
