//! [`EpochTarget`]: one target process of an open [`WindowEpoch`], its rank and the epoch's
//! kind checked once, for loops of small calls to the same process (as rsmpi's
//! `process_at_rank`, or a C program that checks its target before the loop).

use super::epoch::{EpochKind, WindowEpoch, not_locked, not_passive};
use super::target::{Calls, Completion, Layout, Reach, Target};
use crate::datatype::Equivalence;
use crate::error::Result;
use crate::ffi;
use std::ffi::c_int;
use std::marker::PhantomData;

impl<'e, 'buf, T: Equivalence> WindowEpoch<'e, 'buf, T> {
    /// One target process of this epoch: its rank is checked here, once, and each call made
    /// through it then checks only where in that process's window it reads or writes.
    ///
    /// For loops of small calls to one process: what the binding adds to an 8-byte `put_now`
    /// through it is about half of what it adds through [`WindowEpoch::put_now`] (17 against
    /// 29 instructions; README, "Performance"). It borrows the epoch, so it cannot outlive
    /// it, and is neither `Send` nor `Sync`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let next = (me + 1) % size;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let to = epoch.target(next)?;
    ///     for slot in 0..4 {
    ///         to.put_now(&[i64::from(me)], slot)?; // complete on return
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidRank`](crate::Error::InvalidRank) for a rank outside the window's group;
    /// [`Error::EpochMisuse`](crate::Error::EpochMisuse) in a `lock` epoch of another rank.
    pub fn target(&self, rank: i32) -> Result<EpochTarget<'_, 'buf, T>> {
        const OP: &str = "target";
        if let EpochKind::Lock(locked) = self.kind {
            if locked != rank {
                return Err(not_locked(OP, locked, rank));
            }
        }
        let Some(reach) = self.layout.reach_of(rank) else {
            return Err(self.layout.bad_rank(rank, OP));
        };
        Ok(EpochTarget {
            calls: Calls {
                win: self.calls.win,
                pass: self.calls.pass,
            },
            layout: self.layout,
            rank,
            scale: self.layout.scale(),
            reach,
            now_stop: if self.kind.is_passive() {
                reach.stop
            } else {
                0
            },
            _buf: PhantomData,
        })
    }
}

/// One target process of an open [`WindowEpoch`], made by [`WindowEpoch::target`]: the calls
/// of the epoch to that process, each checking only its index and length against the
/// process's window (the rank and the epoch's kind were checked when this was made).
///
/// Borrows the epoch and, like it, is neither `Send` nor `Sync`.
pub struct EpochTarget<'a, 'buf, T: Equivalence> {
    calls: Calls,
    /// For the errors, out of line.
    layout: &'a Layout,
    rank: c_int,
    /// The layout's, copied so that a call reads all it needs from here.
    scale: ffi::MPI_Aint,
    /// The window's bounds for the calls any epoch allows.
    reach: Reach,
    /// `reach.stop` for the calls only passive epochs allow (`put_now`, `get_now`, `flush`);
    /// 0 in an active epoch, so that every one of them leaves the fast path for its error.
    now_stop: usize,
    /// Invariant in `'buf`, as [`WindowEpoch`]'s.
    _buf: PhantomData<&'buf mut &'buf [T]>,
}

impl<T: Equivalence> std::fmt::Debug for EpochTarget<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpochTarget")
            .field("rank", &self.rank)
            .field("passive", &self.passive())
            .finish()
    }
}

impl<'buf, T: Equivalence> EpochTarget<'_, 'buf, T> {
    /// The target's rank in the window's group.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// let rank = win.lock_all(Assert::empty(), |e| e.target(0).map(|to| to.rank()))??;
    /// assert_eq!(rank, 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Whether the epoch is a passive one (`lock`, `lock_all`).
    fn passive(&self) -> bool {
        self.now_stop != 0
    }

    /// Checks that `len` values from element `index` lie inside the target's window (and,
    /// with `now`, that the epoch is passive): one test of the end, then the full check out of
    /// line for anything else.
    #[inline(always)]
    fn locate(&self, now: bool, index: usize, len: usize, op: &'static str) -> Result<Target> {
        let reach = Reach {
            stop: if now { self.now_stop } else { self.reach.stop },
            ..self.reach
        };
        let Some(base) = reach.admits::<T>(index, len) else {
            return self.locate_slow(now, index, len, op);
        };
        // SAFETY: `base` is what this rank's `Reach` (with `stop` lowered to 0, which admits
        // less) admitted for `index` and `len`; `scale` is the window's.
        Ok(unsafe { Target::inside::<T>(self.rank, index, len, self.scale, base) })
    }

    /// [`EpochTarget::locate`] for a call its fast path did not pass.
    #[cold]
    #[inline(never)]
    fn locate_slow(&self, now: bool, index: usize, len: usize, op: &'static str) -> Result<Target> {
        if now && !self.passive() {
            return Err(not_passive(op));
        }
        self.layout.locate_slow::<T>(self.rank, index, len, op)
    }

    /// [`WindowEpoch::put`] to this target: writes `buf` into its window from element `index`
    /// (`MPI_Put`, MPI-4.0 §12.3.1), complete when the epoch is.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let halo = [i64::from(me); 2];
    /// win.fence(Assert::empty(), |epoch| {
    ///     let next = epoch.target((me + 1) % size)?;
    ///     next.put(&halo, 0)?;
    ///     next.put(&halo, 2)
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds),
    /// [`Error::CountOverflow`](crate::Error::CountOverflow),
    /// [`Error::WrongThread`](crate::Error::WrongThread), [`Error::Mpi`](crate::Error::Mpi).
    #[inline(always)]
    pub fn put(&self, buf: &'buf [T], index: usize) -> Result<()> {
        let t = self.locate(false, index, buf.len(), "put")?;
        // SAFETY: `buf` is borrowed for 'buf, beyond the epoch's completion; `t` was checked
        // against the target's window.
        unsafe { self.calls.put(buf, t, Completion::AtEpochEnd) }
    }

    /// [`WindowEpoch::get`] from this target: reads `buf.len()` values of its window from
    /// element `index` into `buf` (`MPI_Get`, MPI-4.0 §12.3.2), there once the epoch is
    /// complete.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let mut slots = [1i64; 4];
    /// win.fence(Assert::empty(), |epoch| epoch.target(world.rank())?.get(&mut slots, 0))??;
    /// assert_eq!(slots, [0; 4]); // zeroed at allocation
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put`].
    #[inline(always)]
    pub fn get(&self, buf: &'buf mut [T], index: usize) -> Result<()> {
        let t = self.locate(false, index, buf.len(), "get")?;
        // SAFETY: `buf` is exclusively borrowed for 'buf, beyond the epoch's completion; `t`
        // was checked against the target's window.
        unsafe { self.calls.get(buf, t, Completion::AtEpochEnd) }
    }

    /// [`WindowEpoch::put_now`] to this target: `MPI_Put`, then `MPI_Win_flush`, so `buf` is
    /// borrowed for this call only. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let me = epoch.target(world.rank())?;
    ///     let mut one = [0i64];
    ///     for k in 1..=3 {
    ///         one[0] = k;
    ///         me.put_now(&one, 0)?; // the buffer is free again on return
    ///     }
    ///     me.get_now(&mut one, 0)?;
    ///     assert_eq!(one[0], 3);
    ///     Ok::<_, ferrompi::Error>(())
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::EpochMisuse`](crate::Error::EpochMisuse) in an active epoch (fence,
    /// start/complete); otherwise as [`EpochTarget::put`].
    #[inline(always)]
    pub fn put_now(&self, buf: &[T], index: usize) -> Result<()> {
        let t = self.locate(true, index, buf.len(), "put")?;
        // SAFETY: `buf` is borrowed until the flush, in a passive epoch, has completed the put.
        unsafe { self.calls.put(buf, t, Completion::Flush) }
    }

    /// [`WindowEpoch::get_now`] from this target: `MPI_Get`, then `MPI_Win_flush_local`, so
    /// `buf` is borrowed for this call only. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let mut sum = 0;
    /// win.lock(ferrompi::LockType::Shared, 0, Assert::empty(), |epoch| {
    ///     let rank0 = epoch.target(0)?; // the locked rank
    ///     let mut one = [0i64];
    ///     for slot in 0..4 {
    ///         rank0.get_now(&mut one, slot)?; // in `one` on return
    ///         sum += one[0];
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })??;
    /// assert_eq!(sum, 0); // zeroed at allocation, and nobody wrote
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put_now`].
    #[inline(always)]
    pub fn get_now(&self, buf: &mut [T], index: usize) -> Result<()> {
        let t = self.locate(true, index, buf.len(), "get")?;
        // SAFETY: `buf` is exclusively borrowed until the local flush, in a passive epoch, has
        // completed the get.
        unsafe { self.calls.get(buf, t, Completion::FlushLocal) }
    }

    /// [`WindowEpoch::flush`] of this target: completes every call to it at origin and target
    /// (`MPI_Win_flush`, MPI-4.0 §12.5.4). Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 2)?;
    /// let values = [1i64, 2];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let me = epoch.target(world.rank())?;
    ///     me.put(&values, 0)?;
    ///     me.flush() // complete at the target now, not at unlock
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::EpochMisuse`](crate::Error::EpochMisuse) in an active epoch;
    /// [`Error::WrongThread`](crate::Error::WrongThread); [`Error::Mpi`](crate::Error::Mpi).
    pub fn flush(&self) -> Result<()> {
        if !self.passive() {
            return Err(not_passive("win_flush"));
        }
        self.calls.flush(self.rank)
    }
}
