//! The one-sided calls made through an open [`WindowEpoch`] (MPI-4.0 §12.3, §12.5.4):
//! put, get and the accumulates, their request-based forms, and the flushes and sync.

use super::WindowEpoch;
use crate::datatype::{DerivedType, Equivalence, View, ViewMut, recv_ptr};
use crate::env::enter_with;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::op::{AccumulateOp, Bitwise};
use crate::request::{Request, Scope};
use crate::window::target::{Completion, RequestCall, operand};
use std::ffi::c_int;

impl<'buf, T: Equivalence> WindowEpoch<'_, 'buf, T> {
    /// Writes `buf` into `target`'s window from element `index` (`MPI_Put`, MPI-4.0 §12.3.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.fence(Assert::empty(), |epoch| epoch.put(&[5i64, 6], me, 2))??; // into slots 2 and 3
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`],
    /// [`ErrorKind::OutOfBounds`],
    /// [`ErrorKind::EpochMisuse`] (another rank than a `lock` epoch's);
    /// [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn put(&self, buf: &'buf [T], target: i32, index: usize) -> Result<()> {
        self.with_target(
            false,
            target,
            index,
            buf.len(),
            "put",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is borrowed for 'buf, beyond the epoch's completion.
                unsafe { calls.put(buf, t, Completion::AtEpochEnd) }
            },
        )
    }

    /// Reads `buf.len()` values of `target`'s window from element `index` into `buf`
    /// (`MPI_Get`, MPI-4.0 §12.3.2); they are there once the epoch is complete.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let mut slots = [1i64; 4];
    /// win.fence(Assert::empty(), |epoch| epoch.get(&mut slots, me, 0))??;
    /// assert_eq!(slots, [0; 4]); // zeroed at allocation
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::put`].
    #[inline(always)]
    pub fn get(&self, buf: &'buf mut [T], target: i32, index: usize) -> Result<()> {
        self.with_target(
            false,
            target,
            index,
            buf.len(),
            "get",
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is exclusively borrowed for 'buf, beyond the epoch's completion.
                unsafe { calls.get(buf, t, Completion::AtEpochEnd) }
            },
        )
    }

    /// Writes `buf` into `target`'s window and waits until it is there (`MPI_Put`, then
    /// `MPI_Win_flush`): `buf` is borrowed for this call only, so one buffer can be reused
    /// in a loop. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     let local = [3i64]; // a buffer local to the closure: put_now completes before returning
    ///     epoch.put_now(&local, me, 0)
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::put`]; [`ErrorKind::EpochMisuse`] outside
    /// `lock`/`lock_all`. If the put succeeds but MPI fails to complete it (the flush), the job is
    /// aborted with the error's message, since MPI may still use `buf`.
    #[inline(always)]
    pub fn put_now(&self, buf: &[T], target: i32, index: usize) -> Result<()> {
        const OP: &str = "put";
        self.with_target(
            true,
            target,
            index,
            buf.len(),
            OP,
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is borrowed until the flush, in a passive epoch, has completed the put.
                unsafe { calls.put(buf, t, Completion::Flush) }
            },
        )
    }

    /// Reads from `target`'s window into `buf` and waits for the values (`MPI_Get`, then
    /// `MPI_Win_flush_local`): `buf` is borrowed for this call only. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let value = win.lock_all(Assert::empty(), |epoch| {
    ///     let mut one = [0i64];
    ///     epoch.get_now(&mut one, me, 0)?; // complete on return
    ///     Ok::<_, ferrompi::Error>(one[0])
    /// })??;
    /// assert_eq!(value, 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::put_now`].
    #[inline(always)]
    pub fn get_now(&self, buf: &mut [T], target: i32, index: usize) -> Result<()> {
        const OP: &str = "get";
        self.with_target(
            true,
            target,
            index,
            buf.len(),
            OP,
            #[inline(always)]
            |t, calls| {
                // SAFETY: `buf` is exclusively borrowed until the local flush, in a passive epoch, has
                // completed the get.
                unsafe { calls.get(buf, t, Completion::FlushLocal) }
            },
        )
    }

    /// Writes what `origin` selects into `count` copies of `layout` laid over `target`'s
    /// window from element `index` (`MPI_Put` with derived types on both sides, MPI-4.0
    /// §12.3.1): a strided column, a halo face, scattered slots, in one call. Checked before
    /// MPI runs: every byte the copies reach lies inside the target's window (the origin view
    /// was checked against its slice when it was made). Complete at the epoch's end, as
    /// [`put`](Self::put).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, Window, window::Assert};
    /// let me = world.rank();
    /// let win = Window::<f64>::allocate(&world, 9)?; // a 3 x 3 matrix per rank
    /// let column = DerivedType::vector(&mpi, 3, 1, 3, f64::datatype())?;
    /// let three = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let values = [1.0, 2.0, 3.0];
    /// // The three values into column 1 of my own matrix.
    /// win.fence(Assert::empty(), |epoch| epoch.put_view(three.view(&values, 1)?, me, 1, &column, 1))??;
    /// let mut matrix = [0.0f64; 9];
    /// win.fence(Assert::empty(), |epoch| epoch.get(&mut matrix, me, 0))??;
    /// assert_eq!(matrix, [0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] if the copies reach outside the
    /// target's window; otherwise as [`WindowEpoch::put`].
    pub fn put_view(
        &self,
        origin: View<'buf>,
        target: i32,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        self.with_layout_target(false, target, index, (layout, count), "put", |t, calls| {
            // SAFETY: the origin's slice is borrowed for 'buf, beyond the epoch's completion.
            unsafe { calls.put_layout(origin.raw(), t, Completion::AtEpochEnd) }
        })
    }

    /// Reads `count` copies of `layout` laid over `target`'s window from element `index` into
    /// what `origin` selects (`MPI_Get` with derived types on both sides, MPI-4.0 §12.3.2);
    /// checked as [`put_view`](Self::put_view), there once the epoch is complete.
    ///
    /// # Errors
    /// As [`put_view`](Self::put_view).
    pub fn get_view(
        &self,
        origin: ViewMut<'buf, T>,
        target: i32,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        let (buf, n, datatype) = origin.into_parts();
        let ptr = recv_ptr(buf);
        self.with_layout_target(false, target, index, (layout, count), "get", |t, calls| {
            // SAFETY: the origin's slice is exclusively borrowed for 'buf, beyond the epoch's
            // completion; `T` has no invalid bit patterns (a window's type), so nothing needs
            // repair.
            unsafe { calls.get_layout((ptr, n, datatype), t, Completion::AtEpochEnd) }
        })
    }

    /// [`put_view`](Self::put_view), complete on return (`MPI_Put`, then `MPI_Win_flush`), as
    /// [`put_now`](Self::put_now): `origin` is borrowed for this call only. Passive epochs only.
    ///
    /// # Errors
    /// As [`put_view`](Self::put_view) and [`put_now`](Self::put_now).
    pub fn put_view_now(
        &self,
        origin: View<'_>,
        target: i32,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        self.with_layout_target(true, target, index, (layout, count), "put", |t, calls| {
            // SAFETY: the origin's slice is borrowed until the flush has completed the put.
            unsafe { calls.put_layout(origin.raw(), t, Completion::Flush) }
        })
    }

    /// [`get_view`](Self::get_view), complete on return (`MPI_Get`, then
    /// `MPI_Win_flush_local`), as [`get_now`](Self::get_now). Passive epochs only.
    ///
    /// # Errors
    /// As [`get_view`](Self::get_view) and [`get_now`](Self::get_now).
    pub fn get_view_now(
        &self,
        mut origin: ViewMut<'_, T>,
        target: i32,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
    ) -> Result<()> {
        let args = origin.raw();
        self.with_layout_target(true, target, index, (layout, count), "get", |t, calls| {
            // SAFETY: the origin's slice is exclusively borrowed until the local flush has
            // completed the get.
            unsafe { calls.get_layout(args, t, Completion::FlushLocal) }
        })
    }

    /// Combines `buf` into `target`'s window with `op` (`MPI_Accumulate`, MPI-4.0 §12.3.4),
    /// element-wise atomic with other accumulates.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// use ferrompi::op::Sum;
    /// win.fence(Assert::empty(), |epoch| epoch.accumulate(&[1i64], 0, 0, Sum))??;
    /// let mut total = [0i64];
    /// win.fence(Assert::empty(), |epoch| epoch.get(&mut total, 0, 0))??;
    /// assert_eq!(total[0], i64::from(size)); // every rank added 1 at rank 0
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::put`].
    #[inline]
    pub fn accumulate<O: AccumulateOp<T>>(
        &self,
        buf: &'buf [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<()> {
        self.with_target(
            false,
            target,
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

    /// Fetches `target`'s values into `result`, then combines `origin` into them with `op`
    /// (`MPI_Get_accumulate`, MPI-4.0 §12.3.4); with [`NoOp`](crate::NoOp) an atomic read.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// use ferrompi::op::Sum;
    /// let mut before = [0i64];
    /// win.fence(Assert::empty(), |epoch| epoch.get_accumulate(&[2i64], &mut before, me, 1, Sum))??;
    /// assert_eq!(before, [0]); // the value before this rank's addition
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`] if the lengths differ; as
    /// [`WindowEpoch::put`].
    pub fn get_accumulate<O: AccumulateOp<T>>(
        &self,
        origin: &'buf [T],
        result: &'buf mut [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<()> {
        self.with_target(
            false,
            target,
            index,
            origin.len(),
            "get_accumulate",
            #[inline(always)]
            |t, calls| {
                // SAFETY: both borrowed for 'buf, beyond the epoch's completion; `t` was checked
                // for `origin`.
                unsafe { calls.get_accumulate(origin, result, t, operand(&op)) }
            },
        )
    }

    /// Atomically combines `value` into element `index` of `target` and returns the element's
    /// previous value (`MPI_Fetch_and_op` then `MPI_Win_flush`, MPI-4.0 §12.3.4). Passive
    /// epochs only, where the flush makes the result available at once.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// use ferrompi::op::Sum;
    /// let ticket = win.lock_all(Assert::empty(), |epoch| epoch.fetch_and_op(1, 0, 0, Sum))??;
    /// assert!((0..i64::from(size)).contains(&ticket)); // each rank a different ticket
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMisuse`] outside `lock`/`lock_all`;
    /// [`ErrorKind::InvalidArgument`] if `T` is several MPI elements; as
    /// [`WindowEpoch::put`]. A failed flush after the call succeeded aborts the job, as in
    /// [`WindowEpoch::put_now`].
    #[inline(always)]
    pub fn fetch_and_op<O: AccumulateOp<T>>(
        &self,
        value: T,
        target: i32,
        index: usize,
        op: O,
    ) -> Result<T> {
        self.with_target(
            true,
            target,
            index,
            1,
            "fetch_and_op",
            #[inline(always)]
            |t, calls| {
                // SAFETY: a passive epoch (checked); a window's `T` is valid for every bit pattern.
                unsafe { calls.fetch_and_op(value, t, operand(&op)) }
            },
        )
    }

    /// Atomically replaces element `index` of `target` with `value` if it equals `compare`,
    /// and returns the previous value (`MPI_Compare_and_swap` then `MPI_Win_flush`, MPI-4.0
    /// §12.3.4). Integer types; passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// // Claim slot 0 of rank 0: exactly one rank finds 0 there.
    /// let found = win.lock_all(Assert::empty(), |epoch| epoch.compare_and_swap(i64::from(me) + 1, 0, 0, 0))??;
    /// let _claimed = found == 0;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    #[inline(always)]
    pub fn compare_and_swap(&self, value: T, compare: T, target: i32, index: usize) -> Result<T>
    where
        T: Bitwise,
    {
        self.with_target(
            true,
            target,
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

    /// Completes every call to `target` at origin and target (`MPI_Win_flush`, MPI-4.0
    /// §12.5.4): `get` results from it are in their buffers. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     epoch.accumulate(&[1i64], 0, 0, ferrompi::op::Sum)?;
    ///     epoch.flush(0) // complete at rank 0 now, not at unlock
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMisuse`];
    /// [`ErrorKind::InvalidRank`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn flush(&self, target: i32) -> Result<()> {
        let t = self.check_target(true, target, 0, 0, "win_flush")?;
        self.calls.flush(t.rank(), Completion::Flush)
    }

    /// Completes every call of the epoch (`MPI_Win_flush_all`). Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     epoch.accumulate(&[1i64], me, 0, ferrompi::op::Sum)?;
    ///     epoch.flush_all()
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_all(&self) -> Result<()> {
        self.sync_call(
            "win_flush_all",
            #[inline(always)]
            |win| {
                // SAFETY: a valid window in a passive epoch.
                unsafe { ffi::MPI_Win_flush_all(win) }
            },
        )
    }

    /// Completes every call to `target` at the origin only (`MPI_Win_flush_local`). Passive
    /// epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     epoch.put(&[4i64], me, 0)?;
    ///     epoch.flush_local(me) // the origin buffer may be reused
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_local(&self, target: i32) -> Result<()> {
        let t = self.check_target(true, target, 0, 0, "win_flush_local")?;
        self.calls.flush(t.rank(), Completion::FlushLocal)
    }

    /// Completes every call of the epoch at the origin (`MPI_Win_flush_local_all`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     epoch.put(&[4i64], me, 0)?;
    ///     epoch.flush_local_all()
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_local_all(&self) -> Result<()> {
        self.sync_call(
            "win_flush_local_all",
            #[inline(always)]
            |win| {
                // SAFETY: a valid window in a passive epoch.
                unsafe { ffi::MPI_Win_flush_local_all(win) }
            },
        )
    }

    /// Synchronises the private and public copies of the local window (`MPI_Win_sync`,
    /// MPI-4.0 §12.5.4). Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// win.lock_all(Assert::empty(), |epoch| epoch.sync())??; // MPI_Win_sync: memory views agree
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn sync(&self) -> Result<()> {
        self.sync_call(
            "win_sync",
            #[inline(always)]
            |win| {
                // SAFETY: a valid window in a passive epoch.
                unsafe { ffi::MPI_Win_sync(win) }
            },
        )
    }

    fn sync_call(
        &self,
        operation: &'static str,
        call: impl FnOnce(ffi::MPI_Win) -> c_int,
    ) -> Result<()> {
        self.passive(operation)?;
        let _gate = enter_with(self.calls.pass, operation)?;
        check(call(self.calls.win), operation)
    }

    /// Request-based put (`MPI_Rput`, MPI-4.0 §12.3.5): the request completes when `buf` may
    /// be reused, and follows the [`scope`](crate::scope) discipline. Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let data = [8i64, 9];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     ferrompi::scope(|s| -> ferrompi::Result<()> {
    ///         let put = epoch.rput(s, &data, me, 0)?; // MPI_Rput
    ///         put.wait()?; // the origin buffer is free again
    ///         Ok(())
    ///     })
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    #[inline(always)]
    pub fn rput<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        target: i32,
        index: usize,
    ) -> Result<Request<'s>> {
        self.request(
            scope,
            RequestCall::Put(buf),
            target,
            index,
            buf.len(),
            "rput",
        )
    }

    /// Request-based get (`MPI_Rget`): the values are in `buf` once the request completes.
    /// Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let mut got = [1i64; 2];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     ferrompi::scope(|s| epoch.rget(s, &mut got, me, 0)?.wait().map(drop)) // MPI_Rget
    /// })??;
    /// assert_eq!(got, [0, 0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    #[inline(always)]
    pub fn rget<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        target: i32,
        index: usize,
    ) -> Result<Request<'s>> {
        let len = buf.len();
        self.request(scope, RequestCall::Get(buf), target, index, len, "rget")
    }

    /// Request-based accumulate (`MPI_Raccumulate`). Passive epochs only.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// use ferrompi::op::Sum;
    /// let one = [1i64];
    /// win.lock_all(Assert::empty(), |epoch| {
    ///     ferrompi::scope(|s| epoch.raccumulate(s, &one, 0, 0, Sum)?.wait().map(drop))
    /// })??;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    #[inline(always)]
    pub fn raccumulate<'s, O: AccumulateOp<T>>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<Request<'s>> {
        let call = RequestCall::Accumulate(buf, operand(&op));
        self.request(scope, call, target, index, buf.len(), "raccumulate")
    }

    fn request<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        call: RequestCall<'s, T>,
        target: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.with_target(
            true,
            target,
            index,
            len,
            operation,
            #[inline(always)]
            |t, calls| {
                // SAFETY: the buffer is borrowed for 's; the scope completes or aborts before 's
                // ends.
                let raw = unsafe { calls.request(call, t)? };
                Ok(Request::started(raw, None, &scope.in_flight))
            },
        )
    }
}
