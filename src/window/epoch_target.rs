//! [`EpochTarget`]: one target process of an open [`WindowEpoch`], its rank and the epoch's
//! kind checked once, for loops of small calls to the same process (as rsmpi's
//! `process_at_rank`, or a C program that checks its target before the loop).

use super::epoch::{EpochKind, WindowEpoch, not_locked, not_passive};
use super::target::{Calls, Completion, Layout, LayoutTarget, Reach, RequestCall, Target, operand};
use crate::datatype::{DerivedType, Equivalence, View, ViewMut, recv_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::op::{AccumulateOp, Bitwise};
use crate::request::{Request, Scope};
use std::ffi::c_int;
use std::marker::PhantomData;

impl<'e, 'buf, T: Equivalence> WindowEpoch<'e, 'buf, T> {
    /// One target process of this epoch: its rank is checked here, once, and each call made
    /// through it then checks only where in that process's window it reads or writes.
    ///
    /// For loops of small calls to one process: what the binding adds to an 8-byte `put_now`
    /// through it is a fraction of what it adds through [`WindowEpoch::put_now`] (4 against
    /// 18 instructions on Open MPI in a loop over one slot, whose bounds test the compiler
    /// moves out of the loop, as it can the handle's own copy: what is left is the two return
    /// codes' tests; docs/performance.md). It borrows the epoch, so it cannot outlive it,
    /// and is neither `Send` nor `Sync`.
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
    /// [`ErrorKind::InvalidRank`] for a rank outside the window's group;
    /// [`ErrorKind::EpochMisuse`] in a `lock` epoch of another rank.
    pub fn target(&self, rank: i32) -> Result<EpochTarget<'_, 'buf, T>> {
        const OP: &str = "target";
        if let EpochKind::Lock(locked) = self.kind
            && locked != rank
        {
            return Err(not_locked(OP, locked, rank));
        }
        let Some(reach) = self.layout.reach_of(rank) else {
            return Err(self.layout.bad_rank(rank, OP));
        };
        // Without the epoch's pass of the thread gate, every call takes the full check, which
        // enters the gate: the fast path of `with_target` may then take the pass as held.
        let (open, passive) = (self.calls.pass.is_some(), self.kind.is_passive());
        Ok(EpochTarget {
            calls: Calls {
                win: self.calls.win,
                pass: self.calls.pass,
            },
            layout: self.layout,
            rank,
            scale: self.layout.scale(),
            reach: Reach {
                stop: if open { reach.stop } else { 0 },
                ..reach
            },
            now_stop: if open && passive { reach.stop } else { 0 },
            passive,
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
    /// The window's bounds for the calls any epoch allows; `stop` is 0 (nothing passes the fast
    /// path) where the epoch holds no pass of the thread gate.
    reach: Reach,
    /// `reach.stop` for the calls only passive epochs allow (`put_now`, `get_now`, the
    /// atomics, the request calls); 0 in an active epoch, so that every one of them leaves the
    /// fast path for its error, and, as `reach.stop`, where the epoch holds no pass.
    now_stop: usize,
    /// Whether the epoch is a passive one (`lock`, `lock_all`).
    passive: bool,
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
        self.passive
    }

    /// Makes `call` to the target of `len` values from element `index`, once they are
    /// checked to lie inside the target's window (and, with `now`, the epoch to be passive):
    /// one test of the end, then the full check out of line for anything else.
    ///
    /// A call that passes the one test also holds the epoch's pass of the thread gate (the
    /// test admits nothing in an epoch without one), so `call` gets calls that carry the pass
    /// as a constant and make no test of the gate. Every other call is made out of line, with
    /// the epoch's calls, which enter the gate.
    #[inline(always)]
    fn with_target<R>(
        &self,
        now: bool,
        index: usize,
        len: usize,
        op: &'static str,
        call: impl FnOnce(Target, Calls) -> Result<R>,
    ) -> Result<R> {
        let reach = Reach {
            stop: if now { self.now_stop } else { self.reach.stop },
            ..self.reach
        };
        let Some(base) = reach.admits::<T>(index, len) else {
            return self.with_target_slow(now, index, len, op, call);
        };
        // SAFETY: both stops are 0, so that `admits` admitted nothing, where the epoch holds no
        // pass (`WindowEpoch::target`, the only maker of an `EpochTarget`).
        let pass = unsafe { self.calls.pass.unwrap_unchecked() };
        let calls = Calls {
            win: self.calls.win,
            pass: Some(pass),
        };
        // SAFETY: `base` is what this rank's `Reach` (with `stop` lowered to 0, which admits
        // less) admitted for `index` and `len`; `scale` is the window's.
        let target = unsafe { Target::inside::<T>(self.rank, index, len, self.scale, base) };
        call(target, calls)
    }

    /// [`EpochTarget::with_target`] for a call its fast path did not pass.
    #[cold]
    #[inline(never)]
    fn with_target_slow<R>(
        &self,
        now: bool,
        index: usize,
        len: usize,
        op: &'static str,
        call: impl FnOnce(Target, Calls) -> Result<R>,
    ) -> Result<R> {
        call(self.locate_slow(now, index, len, op)?, self.calls)
    }

    /// Makes `call` with `count` copies of `layout` laid from element `index` of this
    /// target's window, once checked: the epoch's kind for the complete-on-return forms, and
    /// every byte the copies reach inside the window ([`Layout::locate_layout`]).
    fn with_layout<R>(
        &self,
        now: bool,
        index: usize,
        (layout, count): (&DerivedType<'_>, usize),
        op: &'static str,
        call: impl FnOnce(LayoutTarget, Calls) -> Result<R>,
    ) -> Result<R> {
        let at = self.locate_slow(now, index, 0, op)?;
        let target = self
            .layout
            .locate_layout::<T>(at, index, layout, count, op)?;
        call(target, self.calls)
    }

    /// The full check of [`EpochTarget::with_target`].
    #[inline(always)]
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
    /// [`ErrorKind::OutOfBounds`],
    /// [`ErrorKind::CountOverflow`],
    /// [`ErrorKind::WrongThread`], [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn put(&self, buf: &'buf [T], index: usize) -> Result<()> {
        self.with_target(
            false,
            index,
            buf.len(),
            "put",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is borrowed for 'buf, beyond the epoch's completion; `t` was checked
                // against the target's window.
                unsafe { calls.put(buf, t, Completion::AtEpochEnd) }
            },
        )
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
        self.with_target(
            false,
            index,
            buf.len(),
            "get",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is exclusively borrowed for 'buf, beyond the epoch's completion; `t`
                // was checked against the target's window.
                unsafe { calls.get(buf, t, Completion::AtEpochEnd) }
            },
        )
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
    /// [`ErrorKind::EpochMisuse`] in an active epoch (fence,
    /// start/complete); otherwise as [`EpochTarget::put`]. A failed flush after the put
    /// succeeded aborts the job, as in [`WindowEpoch::put_now`].
    #[inline(always)]
    pub fn put_now(&self, buf: &[T], index: usize) -> Result<()> {
        self.with_target(
            true,
            index,
            buf.len(),
            "put",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is borrowed until the flush, in a passive epoch, has completed the put.
                unsafe { calls.put(buf, t, Completion::Flush) }
            },
        )
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
        self.with_target(
            true,
            index,
            buf.len(),
            "get",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is exclusively borrowed until the local flush, in a passive epoch, has
                // completed the get.
                unsafe { calls.get(buf, t, Completion::FlushLocal) }
            },
        )
    }

    /// [`WindowEpoch::put_view`] to this target: what `origin` selects into `count` copies of
    /// `layout` laid over its window from element `index` (`MPI_Put` with derived types on
    /// both sides, MPI-4.0 §12.3.1), checked before MPI runs so that every byte the copies
    /// reach lies inside the window; complete when the epoch is.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, Window, window::Assert};
    /// let me = world.rank();
    /// let win = Window::<f64>::allocate(&world, 9)?; // a 3 x 3 matrix per rank
    /// let column = DerivedType::vector(&mpi, 3, 1, 3, f64::datatype())?;
    /// let three = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let (first, last) = ([1.0, 2.0, 3.0], [7.0, 8.0, 9.0]);
    /// win.fence(Assert::empty(), |epoch| {
    ///     let mine = epoch.target(me)?;
    ///     mine.put_view(three.view(&first, 1)?, 0, &column, 1)?; // column 0
    ///     mine.put_view(three.view(&last, 1)?, 2, &column, 1) // column 2
    /// })??;
    /// let mut matrix = [0.0f64; 9];
    /// win.fence(Assert::empty(), |epoch| epoch.get(&mut matrix, me, 0))??;
    /// assert_eq!(matrix, [1.0, 0.0, 7.0, 2.0, 0.0, 8.0, 3.0, 0.0, 9.0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] if the copies reach outside the
    /// window; otherwise as [`EpochTarget::put`].
    pub fn put_view(
        &self,
        origin: View<'buf>,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        self.with_layout(false, index, (layout, count), "put", |t, calls| {
            // SAFETY: the origin's slice is borrowed for 'buf, beyond the epoch's completion;
            // `t` was checked against the target's window.
            unsafe { calls.put_layout(origin.raw(), t, Completion::AtEpochEnd) }
        })
    }

    /// [`WindowEpoch::get_view`] from this target: `count` copies of `layout` laid over its
    /// window from element `index`, read into what `origin` selects (`MPI_Get`, MPI-4.0
    /// §12.3.2); checked as [`put_view`](Self::put_view), there once the epoch is complete.
    ///
    /// # Errors
    /// As [`EpochTarget::put_view`].
    pub fn get_view(
        &self,
        origin: ViewMut<'buf, T>,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        let (buf, n, datatype) = origin.into_parts();
        let ptr = recv_ptr(buf);
        self.with_layout(false, index, (layout, count), "get", |t, calls| {
            // SAFETY: the origin's slice is exclusively borrowed for 'buf, beyond the epoch's
            // completion; `T` has no invalid bit patterns (a window's type), so nothing needs
            // repair.
            unsafe { calls.get_layout((ptr, n, datatype), t, Completion::AtEpochEnd) }
        })
    }

    /// [`put_view`](Self::put_view), complete on return (`MPI_Put`, then `MPI_Win_flush`):
    /// `origin` is borrowed for this call only. Passive epochs only.
    ///
    /// # Errors
    /// As [`EpochTarget::put_view`] and [`EpochTarget::put_now`].
    pub fn put_view_now(
        &self,
        origin: View<'_>,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        self.with_layout(true, index, (layout, count), "put", |t, calls| {
            // SAFETY: the origin's slice is borrowed until the flush has completed the put.
            unsafe { calls.put_layout(origin.raw(), t, Completion::Flush) }
        })
    }

    /// [`get_view`](Self::get_view), complete on return (`MPI_Get`, then
    /// `MPI_Win_flush_local`). Passive epochs only.
    ///
    /// # Errors
    /// As [`EpochTarget::put_view_now`].
    pub fn get_view_now(
        &self,
        mut origin: ViewMut<'_, T>,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        let args = origin.raw();
        self.with_layout(true, index, (layout, count), "get", |t, calls| {
            // SAFETY: the origin's slice is exclusively borrowed until the local flush has
            // completed the get.
            unsafe { calls.get_layout(args, t, Completion::FlushLocal) }
        })
    }

    /// [`WindowEpoch::accumulate`] into this target: combines `buf` into its window from
    /// element `index` with `op` (`MPI_Accumulate`, MPI-4.0 §12.3.4), element-wise atomic
    /// with other accumulates, complete when the epoch is.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, op::Sum, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 2)?;
    /// let one = [1i64, 1];
    /// win.fence(Assert::empty(), |epoch| {
    ///     let root = epoch.target(0)?;
    ///     root.accumulate(&one, 0, Sum)
    /// })??;
    /// let mut total = [0i64; 2];
    /// win.fence(Assert::empty(), |epoch| epoch.target(0)?.get(&mut total, 0))??;
    /// assert_eq!(total, [i64::from(world.size()); 2]); // every rank added 1 at rank 0
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put`].
    #[inline]
    pub fn accumulate<O: AccumulateOp<T>>(
        &self,
        buf: &'buf [T],
        index: usize,
        op: O,
    ) -> Result<()> {
        self.with_target(
            false,
            index,
            buf.len(),
            "accumulate",
            #[inline(always)]
            |t, calls| {
                // SAFETY: as in `put`.
                unsafe { calls.accumulate(buf, t, operand(&op)) }
            },
        )
    }

    /// [`WindowEpoch::get_accumulate`] at this target: fetches its values from element `index`
    /// into `result`, then combines `origin` into them with `op` (`MPI_Get_accumulate`,
    /// MPI-4.0 §12.3.4); `result` holds them once the epoch is complete.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, op::Sum, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// let mut before = [-1i64];
    /// win.fence(Assert::empty(), |epoch| {
    ///     epoch.target(world.rank())?.get_accumulate(&[2i64], &mut before, 0, Sum)
    /// })??;
    /// assert_eq!(before, [0]); // the value before this rank's addition
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`] if the lengths differ; as
    /// [`EpochTarget::put`].
    #[inline]
    pub fn get_accumulate<O: AccumulateOp<T>>(
        &self,
        origin: &'buf [T],
        result: &'buf mut [T],
        index: usize,
        op: O,
    ) -> Result<()> {
        self.with_target(
            false,
            index,
            origin.len(),
            "get_accumulate",
            #[inline(always)]
            |t, calls| {
                // SAFETY: both borrowed for 'buf, beyond the epoch's completion; `t` was checked for
                // `origin`.
                unsafe { calls.get_accumulate(origin, result, t, operand(&op)) }
            },
        )
    }

    /// [`WindowEpoch::fetch_and_op`] at this target: atomically combines `value` into its
    /// element `index` and returns the element's previous value (`MPI_Fetch_and_op`, then
    /// `MPI_Win_flush`). Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, op::Sum, window::Assert};
    /// let win = Window::<u64>::allocate(&world, 1)?;
    /// let tickets = win.lock_all(Assert::empty(), |epoch| {
    ///     let counter = epoch.target(0)?;
    ///     (0..3).map(|_| counter.fetch_and_op(1, 0, Sum)).collect::<ferrompi::Result<Vec<_>>>()
    /// })??;
    /// assert!(tickets.windows(2).all(|w| w[0] < w[1])); // each ticket once, in order
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMisuse`] in an active epoch;
    /// [`ErrorKind::InvalidArgument`] if `T` is several MPI
    /// elements; as [`EpochTarget::put`]. A failed flush after the call succeeded aborts the
    /// job, as in [`WindowEpoch::put_now`].
    #[inline(always)]
    pub fn fetch_and_op<O: AccumulateOp<T>>(&self, value: T, index: usize, op: O) -> Result<T> {
        self.with_target(
            true,
            index,
            1,
            "fetch_and_op",
            #[inline(always)]
            |t, calls| {
                // SAFETY: a passive epoch (the bound of an active one admits nothing); a window's `T`
                // is valid for every bit pattern.
                unsafe { calls.fetch_and_op(value, t, operand(&op)) }
            },
        )
    }

    /// [`WindowEpoch::compare_and_swap`] at this target: atomically replaces its element
    /// `index` with `value` if it equals `compare`, and returns the previous value
    /// (`MPI_Compare_and_swap`, then `MPI_Win_flush`). Integer types; passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// let me = i64::from(world.rank()) + 1;
    /// let owner = win.lock_all(Assert::empty(), |epoch| {
    ///     let slot = epoch.target(0)?;
    ///     let found = slot.compare_and_swap(me, 0, 0)?; // claim it if free
    ///     Ok::<_, ferrompi::Error>(if found == 0 { me } else { found })
    /// })??;
    /// assert!(owner >= 1); // one rank claimed the slot; every rank knows which
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::fetch_and_op`].
    #[inline(always)]
    pub fn compare_and_swap(&self, value: T, compare: T, index: usize) -> Result<T>
    where
        T: Bitwise,
    {
        self.with_target(
            true,
            index,
            1,
            "compare_and_swap",
            #[inline(always)]
            |t, calls| {
                // SAFETY: as in `fetch_and_op`; `T: Bitwise`, an integer type.
                unsafe { calls.compare_and_swap(value, compare, t) }
            },
        )
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
    /// [`ErrorKind::EpochMisuse`] in an active epoch;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn flush(&self) -> Result<()> {
        if !self.passive() {
            return Err(not_passive("win_flush"));
        }
        self.calls.flush(self.rank, Completion::Flush)
    }

    /// [`WindowEpoch::flush_local`] of this target: completes every call to it at the origin
    /// (`MPI_Win_flush_local`, MPI-4.0 §12.5.4), so their buffers may be reused. Passive
    /// epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let me = epoch.target(world.rank())?;
    ///     me.put(&[4i64], 0)?;
    ///     me.flush_local() // the origin buffer may be reused
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::flush`].
    pub fn flush_local(&self) -> Result<()> {
        if !self.passive() {
            return Err(not_passive("win_flush_local"));
        }
        self.calls.flush(self.rank, Completion::FlushLocal)
    }

    /// [`WindowEpoch::rput`] to this target: `MPI_Rput` (MPI-4.0 §12.3.5), a request that
    /// completes when `buf` may be reused, in the [`scope`](crate::scope) discipline. Passive
    /// epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let (a, b) = ([1i64, 2], [3i64, 4]);
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let me = epoch.target(world.rank())?;
    ///     ferrompi::scope(|s| {
    ///         let first = me.rput(s, &a, 0)?;
    ///         let second = me.rput(s, &b, 2)?;
    ///         first.wait()?;
    ///         second.wait().map(drop)
    ///     })
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put_now`].
    #[inline(always)]
    pub fn rput<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        index: usize,
    ) -> Result<Request<'s>> {
        self.request(scope, RequestCall::Put(buf), index, buf.len(), "rput")
    }

    /// [`WindowEpoch::rget`] from this target: `MPI_Rget`, a request after which the values
    /// are in `buf`. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 2)?;
    /// let mut got = [1i64; 2];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let me = epoch.target(world.rank())?;
    ///     ferrompi::scope(|s| me.rget(s, &mut got, 0)?.wait().map(drop))
    /// })??;
    /// assert_eq!(got, [0, 0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put_now`].
    #[inline(always)]
    pub fn rget<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        index: usize,
    ) -> Result<Request<'s>> {
        let len = buf.len();
        self.request(scope, RequestCall::Get(buf), index, len, "rget")
    }

    /// [`WindowEpoch::raccumulate`] into this target: `MPI_Raccumulate`. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, op::Max, window::Assert};
    /// let win = Window::<i64>::allocate(&world, 1)?;
    /// let mine = [i64::from(world.rank())];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let root = epoch.target(0)?;
    ///     ferrompi::scope(|s| root.raccumulate(s, &mine, 0, Max)?.wait().map(drop))
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`EpochTarget::put_now`].
    #[inline(always)]
    pub fn raccumulate<'s, O: AccumulateOp<T>>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        index: usize,
        op: O,
    ) -> Result<Request<'s>> {
        let call = RequestCall::Accumulate(buf, operand(&op));
        self.request(scope, call, index, buf.len(), "raccumulate")
    }

    fn request<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        call: RequestCall<'s, T>,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.with_target(
            true,
            index,
            len,
            operation,
            #[inline(always)]
            |t, calls| {
                // SAFETY: a passive epoch; the buffer is borrowed for 's, and the scope completes
                // or aborts its requests before 's ends.
                let raw = unsafe { calls.request(call, t)? };
                Ok(Request::started(raw, None, &scope.in_flight))
            },
        )
    }
}
