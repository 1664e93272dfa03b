//! The typed one-sided calls both window kinds make (MPI-4.0 §12.3), and the bounds check
//! that keeps every one of them inside the target's window.

use crate::datatype::{DerivedType, Equivalence, count_of, count_overflow, recv_ptr, send_ptr};
use crate::env::enter_with;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::gate::Pass;
use crate::op::{AccumulateOp, Operand};
use crate::request::{Kind, RawRequest};
use std::ffi::{c_int, c_void};

/// Where each target's elements are: their number, and how an element index becomes a
/// displacement. Read-only after creation.
#[derive(Debug)]
pub(crate) struct Layout {
    /// Elements of `T` in each rank's window.
    lens: Box<[usize]>,
    /// Each rank's [`Reach`], made from `lens` with them (see [`Layout::set_lens`]).
    reach: Box<[Reach]>,
    /// Displacement units per element: 1 when the window's `disp_unit` is `size_of::<T>()`,
    /// `size_of::<T>()` when it is one byte.
    scale: ffi::MPI_Aint,
}

/// What the fast path of the target check needs of one rank's window, in one place
/// ([`Layout::locate`], and an [`EpochTarget`](super::EpochTarget) holds its rank's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reach {
    /// One past the elements a call may reach without a further check: the window's length,
    /// or `c_int::MAX` where that is less (a call over more would not fit MPI's `int` count),
    /// plus one. 0 lets no call through.
    pub(crate) stop: usize,
    /// Where the rank's elements start, in displacement units.
    pub(crate) base: ffi::MPI_Aint,
}

impl Reach {
    /// The fast path of the target check: whether `len` values of `T` from element `index`
    /// end before `stop`, which also bounds the MPI count where `T` is one MPI element (a `T`
    /// of more elements tests its count too; for one element the compiler leaves that test
    /// out). `Some(base)` if so, for [`Target::inside`]; `None` sends the call to the full
    /// check.
    #[inline(always)]
    pub(crate) fn admits<T: Equivalence>(self, index: usize, len: usize) -> Option<ffi::MPI_Aint> {
        let most_values = usize::try_from(c_int::MAX).unwrap_or(usize::MAX) / T::ELEMENTS.max(1);
        let end = index.checked_add(len)?;
        let fits = T::ELEMENTS <= 1 || len <= most_values;
        (end < self.stop && fits).then_some(self.base)
    }
}

/// The fast path of [`Layout::locate`] over each rank's [`Reach`] (a layout's, or a copy an
/// epoch holds): one test of the rank (a negative one becomes a large `u32`), then the rank's
/// [`Reach`]. `Some(base)` for [`Target::inside`] if it admits the call; `None` sends it to
/// the full check.
#[inline(always)]
pub(crate) fn admits<T: Equivalence>(
    reach: &[Reach],
    rank: i32,
    index: usize,
    len: usize,
) -> Option<ffi::MPI_Aint> {
    (reach.get(rank as u32 as usize)).and_then(|reach| reach.admits::<T>(index, len))
}

impl Target {
    /// The target of a call a [`Reach`] of `rank` admitted, with its `base`.
    ///
    /// # Safety
    /// `base` is what `reach.admits::<T>(index, len)` returned for `rank`'s [`Reach`] in a
    /// window with `scale` displacement units per element: the one-sided calls trust a
    /// `Target` to lie inside the target's window.
    #[inline(always)]
    pub(crate) unsafe fn inside<T: Equivalence>(
        rank: c_int,
        index: usize,
        len: usize,
        scale: ffi::MPI_Aint,
        base: ffi::MPI_Aint,
    ) -> Target {
        // Admitted: `len` ≤ `c_int::MAX / ELEMENTS`, so the count fits an `int`; in bounds of
        // a window that exists, so the displacement fits an `MPI_Aint`.
        Target {
            rank,
            disp: (index as ffi::MPI_Aint) * scale + base,
            count: (len * T::ELEMENTS) as c_int,
        }
    }
}

/// A checked target: rank, displacement and MPI count of one call. Only this module makes
/// one, from a call that passed the check ([`Layout::locate`], or [`Reach::admits`] then
/// [`Target::inside`]), so [`Calls`] can trust it to lie inside the target's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    rank: c_int,
    disp: ffi::MPI_Aint,
    count: c_int,
}

impl Target {
    /// The target's rank.
    #[inline(always)]
    pub(crate) fn rank(self) -> c_int {
        self.rank
    }
}

impl Layout {
    /// A layout of windows with no elements yet ([`Layout::set_lens`] gives them).
    pub(crate) fn new(scale: ffi::MPI_Aint) -> Self {
        Layout {
            lens: Box::default(),
            reach: Box::default(),
            scale,
        }
    }

    /// Records each rank's number of elements, and where rank 0's start, in displacement units
    /// (after a shared window's control block; 0 elsewhere).
    pub(crate) fn set_lens(&mut self, lens: Box<[usize]>, rank0_offset: ffi::MPI_Aint) {
        let most = usize::try_from(c_int::MAX).unwrap_or(usize::MAX);
        self.reach = (lens.iter().enumerate())
            .map(|(rank, &len)| Reach {
                stop: len.min(most) + 1,
                base: if rank == 0 { rank0_offset } else { 0 },
            })
            .collect();
        self.lens = lens;
    }

    /// Elements of `T` in each rank's window.
    pub(crate) fn lens(&self) -> &[usize] {
        &self.lens
    }

    /// `rank`'s [`Reach`]; `None` for a rank the window does not have.
    pub(crate) fn reach_of(&self, rank: c_int) -> Option<Reach> {
        self.reach.get(usize::try_from(rank).ok()?).copied()
    }

    /// Displacement units per element.
    pub(crate) fn scale(&self) -> ffi::MPI_Aint {
        self.scale
    }

    /// Each rank's [`Reach`], for [`admits`].
    pub(crate) fn reach(&self) -> &[Reach] {
        &self.reach
    }

    /// Checks that `len` values of `T` from element `index` lie inside `rank`'s window.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::OutOfBounds`], [`ErrorKind::CountOverflow`].
    #[inline(always)]
    pub(crate) fn locate<T: Equivalence>(
        &self,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Target> {
        let Some(base) = admits::<T>(&self.reach, rank, index, len) else {
            return self.locate_slow::<T>(rank, index, len, operation);
        };
        // SAFETY: `base` is what `rank`'s `Reach` admitted for `index` and `len`, and
        // `self.scale` is this window's.
        Ok(unsafe { Target::inside::<T>(rank, index, len, self.scale, base) })
    }

    /// [`Layout::locate`] in full: a call its fast path did not pass (an error, or a call
    /// ending past its `Reach` in a window of more elements than an `int` counts).
    #[cold]
    #[inline(never)]
    pub(crate) fn locate_slow<T: Equivalence>(
        &self,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Target> {
        let Some(r) = usize::try_from(rank).ok().filter(|&r| r < self.lens.len()) else {
            return Err(self.bad_rank(rank, operation));
        };
        let target_len = self.lens[r];
        match index.checked_add(len) {
            Some(end) if end <= target_len => {}
            _ => return Err(out_of_bounds(operation, rank, index, len, target_len)),
        }
        let count = count_of::<T>(len, operation)?;
        // In bounds of a window that exists, so the product fits an MPI_Aint.
        let disp = (index as ffi::MPI_Aint) * self.scale + self.reach[r].base;
        Ok(Target { rank, disp, count })
    }
}

/// A checked target of a call that lays a derived type over the target's window: rank,
/// displacement, and what MPI is given on the target side. Made only by
/// [`Layout::locate_layout`], so [`Calls`] can trust it to lie inside the target's window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayoutTarget {
    rank: c_int,
    disp: ffi::MPI_Aint,
    count: c_int,
    datatype: ffi::MPI_Datatype,
}

impl Layout {
    /// Checks that `count` copies of `layout`, laid from element `index` of `target`'s window
    /// (which the caller checked with [`Layout::locate`] for `len` 0: the rank, the epoch, the
    /// index), reach only bytes of that window, negative lower bounds and resized types
    /// included.
    ///
    /// # Errors
    /// [`ErrorKind::OutOfBounds`] (with the bytes the layout reaches, in elements rounded out);
    /// [`ErrorKind::CountOverflow`].
    pub(crate) fn locate_layout<T: Equivalence>(
        &self,
        target: Target,
        index: usize,
        layout: &DerivedType<'_>,
        count: usize,
        operation: &'static str,
    ) -> Result<LayoutTarget> {
        let r = target.rank as usize; // checked by `locate`
        let size = std::mem::size_of::<T>() as i128;
        let window = self.lens[r] as i128 * size;
        let reach = layout.bounds().reach(count);
        let (start, end) = (
            index as i128 * size + reach.start,
            index as i128 * size + reach.end,
        );
        if start < 0 || end > window {
            // In elements: the first the layout touches and how many, rounded out.
            let first = start.div_euclid(size.max(1));
            let last = (end + size - 1).div_euclid(size.max(1));
            return Err(out_of_bounds(
                operation,
                target.rank,
                usize::try_from(first).unwrap_or(0),
                usize::try_from(last - first).unwrap_or(usize::MAX),
                self.lens[r],
            ));
        }
        let count = c_int::try_from(count).map_err(|_| count_overflow(count, 1, operation))?;
        Ok(LayoutTarget {
            rank: target.rank,
            disp: target.disp,
            count,
            datatype: layout.as_raw(),
        })
    }
}

impl Calls {
    /// `MPI_Put` of what `origin` selects into `t`'s layout, then `then`.
    ///
    /// # Safety
    /// See [`Calls`]; the origin's slice stays unmodified until completion.
    pub(crate) unsafe fn put_layout(
        &self,
        (ptr, count, dt): (*const c_void, c_int, ffi::MPI_Datatype),
        t: LayoutTarget,
        then: Completion,
    ) -> Result<()> {
        const OP: &str = "put";
        let (rc, then_rc) = {
            let _gate = enter_with(self.pass, OP)?;
            // SAFETY: `t` was checked against the target's window (`locate_layout`); the origin
            // view reaches only its slice; per the caller, it stays unmodified until completion.
            let rc = unsafe {
                ffi::MPI_Put(
                    ptr, count, dt, t.rank, t.disp, t.count, t.datatype, self.win,
                )
            };
            (rc, self.then_complete(rc, then, t.rank))
        };
        check(rc, OP)?;
        completed(then_rc, then);
        Ok(())
    }

    /// `MPI_Get` from `t`'s layout into what `origin` selects, then `then`.
    ///
    /// # Safety
    /// See [`Calls`]; the origin's slice stays valid, and unread by Rust, until completion.
    pub(crate) unsafe fn get_layout(
        &self,
        (ptr, count, dt): (*mut c_void, c_int, ffi::MPI_Datatype),
        t: LayoutTarget,
        then: Completion,
    ) -> Result<()> {
        const OP: &str = "get";
        let (rc, then_rc) = {
            let _gate = enter_with(self.pass, OP)?;
            // SAFETY: as in `put_layout`; MPI writes only what the origin view selects.
            let rc = unsafe {
                ffi::MPI_Get(
                    ptr, count, dt, t.rank, t.disp, t.count, t.datatype, self.win,
                )
            };
            (rc, self.then_complete(rc, then, t.rank))
        };
        check(rc, OP)?;
        completed(then_rc, then);
        Ok(())
    }
}

impl Layout {
    #[cold]
    #[inline(never)]
    pub(crate) fn bad_rank(&self, rank: i32, operation: &'static str) -> Error {
        ErrorKind::InvalidRank {
            operation,
            role: "target",
            rank,
            size: c_int::try_from(self.lens.len()).unwrap_or(c_int::MAX),
        }
        .into()
    }
}

#[cold]
#[inline(never)]
fn out_of_bounds(
    operation: &'static str,
    target: i32,
    index: usize,
    len: usize,
    window_len: usize,
) -> Error {
    ErrorKind::OutOfBounds {
        operation,
        target,
        index,
        len,
        window_len,
    }
    .into()
}

/// One value of a type with a single MPI element: what `MPI_Fetch_and_op` and
/// `MPI_Compare_and_swap` take.
#[inline(always)]
fn single_element<T: Equivalence>(operation: &'static str) -> Result<()> {
    if T::ELEMENTS == 1 {
        Ok(())
    } else {
        Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "{} is {} MPI elements; atomic operations take one",
                std::any::type_name::<T>(),
                T::ELEMENTS
            ),
        }
        .into())
    }
}

/// When a put or get made by [`Calls`] completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Completion {
    /// When the epoch ends (or at a flush the user makes).
    AtEpochEnd,
    /// Before the call returns, at origin and target (`MPI_Win_flush`; passive epochs only).
    Flush,
    /// Before the call returns, at the origin (`MPI_Win_flush_local`; passive epochs only).
    FlushLocal,
}

impl Completion {
    /// The MPI call that makes this completion (where there is one).
    #[inline(always)]
    const fn operation(self) -> &'static str {
        match self {
            Completion::AtEpochEnd => "",
            Completion::Flush => "win_flush",
            Completion::FlushLocal => "win_flush_local",
        }
    }
}

/// After a call that succeeded, checks the completion that ends its use of a buffer borrowed
/// for the call only. A failed completion ends the job, as a failed epoch close does:
/// MPI may still read or write that buffer, and the caller would get it back (with its checked
/// rank in a passive epoch, a flush that fails is MPI's failure, not an input error).
#[inline(always)]
fn completed(rc: c_int, how: Completion) {
    if rc != ffi::MPI_SUCCESS {
        incomplete(rc, how);
    }
}

/// [`completed`]'s end of the job, out of line.
#[cold]
#[inline(never)]
fn incomplete(rc: c_int, how: Completion) -> ! {
    let error = check(rc, how.operation()).err();
    let error = error.map_or_else(String::new, |e| e.to_string());
    eprintln!(
        "ferrompi: {} failed after its call succeeded ({error}); MPI may still use the call's \
         buffer, so the job ends",
        how.operation()
    );
    crate::fault::abort_world(103)
}

/// The typed calls. Each is `unsafe`: the caller guarantees the window is valid, an epoch
/// that allows the call is open (a passive one for a flushing [`Completion`] and for the
/// atomics, which flush), the buffers stay untouched (send side) or unobserved (receive side)
/// until MPI completes the call, and `T` is valid for every bit pattern (as every window's
/// element type is: another process may have written any bytes).
#[derive(Clone, Copy)]
pub(crate) struct Calls {
    pub(crate) win: ffi::MPI_Win,
    /// The epoch's pass of the thread gate, for an epoch tied to the thread that opened it
    /// ([`WindowEpoch`](super::WindowEpoch)); `None` where calls may come from any thread.
    pub(crate) pass: Option<Pass>,
}

impl Calls {
    /// `MPI_Put`, then `then`, under one pass of the thread gate.
    ///
    /// # Safety
    /// See [`Calls`].
    #[inline(always)]
    pub(crate) unsafe fn put<T: Equivalence>(
        &self,
        buf: &[T],
        t: Target,
        then: Completion,
    ) -> Result<()> {
        const OP: &str = "put";
        let (ptr, dt) = (send_ptr(buf), T::datatype().as_raw());
        let (rc, then_rc) = {
            // Released before the result is built, which then need not wait in memory.
            let _gate = enter_with(self.pass, OP)?;
            // SAFETY: `t` was checked against the target's window; `buf` holds `t.count`
            // elements of `dt`; per the caller, it stays unmodified until completion.
            let rc =
                unsafe { ffi::MPI_Put(ptr, t.count, dt, t.rank, t.disp, t.count, dt, self.win) };
            (rc, self.then_complete(rc, then, t.rank))
        };
        check(rc, OP)?;
        completed(then_rc, then);
        Ok(())
    }

    /// `MPI_Get`, then `then`, under one pass of the thread gate.
    ///
    /// # Safety
    /// See [`Calls`].
    #[inline(always)]
    pub(crate) unsafe fn get<T: Equivalence>(
        &self,
        buf: &mut [T],
        t: Target,
        then: Completion,
    ) -> Result<()> {
        const OP: &str = "get";
        let (ptr, dt) = (recv_ptr(buf), T::datatype().as_raw());
        let (rc, then_rc) = {
            // As in `put`.
            let _gate = enter_with(self.pass, OP)?;
            // SAFETY: as in `put`; MPI writes `t.count` elements into `buf`, which holds them.
            let rc =
                unsafe { ffi::MPI_Get(ptr, t.count, dt, t.rank, t.disp, t.count, dt, self.win) };
            (rc, self.then_complete(rc, then, t.rank))
        };
        check(rc, OP)?;
        completed(then_rc, then);
        Ok(())
    }

    /// After a call returned `rc`, completes the calls to `rank` as `then` says, if that call
    /// succeeded; the caller holds the thread gate. Returns the completion's return code
    /// (success where there was none to make).
    #[inline(always)]
    fn then_complete(&self, rc: c_int, then: Completion, rank: c_int) -> c_int {
        match then {
            _ if rc != ffi::MPI_SUCCESS => ffi::MPI_SUCCESS,
            Completion::AtEpochEnd => ffi::MPI_SUCCESS,
            // SAFETY: `self.win` is a valid window (a `Calls` is made from a live window and
            // lives no longer than its epoch); the call takes no buffer, so outside a passive
            // epoch, or for a rank outside the group, MPI returns an error and nothing more.
            // This is why the safe `flush` may reach it.
            Completion::Flush => unsafe { ffi::MPI_Win_flush(rank, self.win) },
            // SAFETY: as above.
            Completion::FlushLocal => unsafe { ffi::MPI_Win_flush_local(rank, self.win) },
        }
    }

    /// `MPI_Accumulate` (not of a derived type: see [`derived_refused`]).
    ///
    /// # Safety
    /// See [`Calls`].
    #[inline]
    pub(crate) unsafe fn accumulate<T: Equivalence>(
        &self,
        buf: &[T],
        t: Target,
        op: Operand,
    ) -> Result<()> {
        const OP: &str = "accumulate";
        derived_refused::<T>(OP)?;
        let _gate = enter_with(self.pass, OP)?;
        // SAFETY: as in `put`; the op is predefined, REPLACE or NO_OP.
        let rc = unsafe {
            ffi::MPI_Accumulate(
                send_ptr(buf),
                t.count,
                op.datatype,
                t.rank,
                t.disp,
                t.count,
                op.datatype,
                op.op,
                self.win,
            )
        };
        check(rc, OP)
    }

    /// `MPI_Get_accumulate`: `result` gets the target's values before `op` combined `origin`.
    ///
    /// # Safety
    /// See [`Calls`]; `t` was checked for `origin.len()` values.
    #[inline]
    pub(crate) unsafe fn get_accumulate<T: Equivalence>(
        &self,
        origin: &[T],
        result: &mut [T],
        t: Target,
        op: Operand,
    ) -> Result<()> {
        const OP: &str = "get_accumulate";
        derived_refused::<T>(OP)?;
        if origin.len() != result.len() {
            return Err(ErrorKind::BufferSize {
                operation: OP,
                expected: origin.len(),
                actual: result.len(),
            }
            .into());
        }
        let _gate = enter_with(self.pass, OP)?;
        // SAFETY: both buffers hold `t.count` elements (equal lengths, tested above).
        let rc = unsafe {
            ffi::MPI_Get_accumulate(
                send_ptr(origin),
                t.count,
                op.datatype,
                recv_ptr(result),
                t.count,
                op.datatype,
                t.rank,
                t.disp,
                t.count,
                op.datatype,
                op.op,
                self.win,
            )
        };
        check(rc, OP)
    }

    /// `MPI_Fetch_and_op` of one value, then `MPI_Win_flush` of its target: the element's
    /// value before `op` combined `value` into it.
    ///
    /// # Safety
    /// See [`Calls`].
    #[inline(always)]
    pub(crate) unsafe fn fetch_and_op<T: Equivalence>(
        &self,
        value: T,
        t: Target,
        op: Operand,
    ) -> Result<T> {
        derived_refused::<T>("fetch_and_op")?;
        // SAFETY: per the caller, as `fetching` requires; the call writes one `T` at `result`:
        // one element each side, alive until the flush, at a checked target.
        unsafe {
            self.fetching(
                t,
                "fetch_and_op",
                #[inline(always)]
                |result| {
                    ffi::MPI_Fetch_and_op(
                        (&raw const value).cast(),
                        result,
                        op.datatype,
                        t.rank,
                        t.disp,
                        op.op,
                        self.win,
                    )
                },
            )
        }
    }

    /// `MPI_Compare_and_swap` of one value, then `MPI_Win_flush` of its target: the element's
    /// value before the call.
    ///
    /// # Safety
    /// See [`Calls`]; `T` is an integer type (or another that `MPI_Compare_and_swap` takes).
    #[inline(always)]
    pub(crate) unsafe fn compare_and_swap<T: Equivalence>(
        &self,
        value: T,
        compare: T,
        t: Target,
    ) -> Result<T> {
        // SAFETY: as in `fetch_and_op`.
        unsafe {
            self.fetching(
                t,
                "compare_and_swap",
                #[inline(always)]
                |result| {
                    ffi::MPI_Compare_and_swap(
                        (&raw const value).cast(),
                        (&raw const compare).cast(),
                        result,
                        T::datatype().as_raw(),
                        t.rank,
                        t.disp,
                        self.win,
                    )
                },
            )
        }
    }

    /// An atomic call that writes one `T` to the address it is given, then `MPI_Win_flush` of
    /// `t`'s rank so that the value is there, both under one pass of the thread gate: the
    /// value, or the first failing call's error.
    ///
    /// # Safety
    /// See [`Calls`]; `call` writes at most one `T` there.
    #[inline(always)]
    unsafe fn fetching<T: Equivalence>(
        &self,
        t: Target,
        operation: &'static str,
        call: impl FnOnce(*mut c_void) -> c_int,
    ) -> Result<T> {
        single_element::<T>(operation)?;
        // SAFETY: every bit pattern is a valid `T` (see `Calls`), zero too.
        let mut result: T = unsafe { std::mem::zeroed() };
        let (rc, flush_rc) = {
            let _gate = enter_with(self.pass, operation)?;
            let rc = call((&raw mut result).cast());
            (rc, self.then_complete(rc, Completion::Flush, t.rank))
        };
        check(rc, operation)?;
        completed(flush_rc, Completion::Flush);
        Ok(result)
    }

    /// Completes every call to `rank` as `how` says: `MPI_Win_flush` (at origin and target)
    /// or `MPI_Win_flush_local` (at the origin); nothing for `AtEpochEnd`. The callers check
    /// that the epoch is a passive one first, for a clear error; MPI would return one too.
    #[inline]
    pub(crate) fn flush(&self, rank: c_int, how: Completion) -> Result<()> {
        let _gate = enter_with(self.pass, how.operation())?;
        check(
            self.then_complete(ffi::MPI_SUCCESS, how, rank),
            how.operation(),
        )
    }

    /// `MPI_Rput`, `MPI_Rget`, `MPI_Raccumulate`: the request, to be completed in a scope.
    ///
    /// # Safety
    /// See [`Calls`]; the buffer stays borrowed until the request completes.
    #[inline]
    pub(crate) unsafe fn request<T: Equivalence>(
        &self,
        call: RequestCall<'_, T>,
        t: Target,
    ) -> Result<RawRequest> {
        let dt = T::datatype().as_raw();
        let mut raw = ffi::MPI_REQUEST_NULL;
        let (rc, operation) = match call {
            RequestCall::Put(buf) => {
                let _gate = enter_with(self.pass, "rput")?;
                // SAFETY: as in `put`; MPI writes the request handle.
                let rc = unsafe {
                    ffi::MPI_Rput(
                        send_ptr(buf),
                        t.count,
                        dt,
                        t.rank,
                        t.disp,
                        t.count,
                        dt,
                        self.win,
                        &mut raw,
                    )
                };
                (rc, "rput")
            }
            RequestCall::Get(buf) => {
                let _gate = enter_with(self.pass, "rget")?;
                // SAFETY: as in `get`; MPI writes the request handle.
                let rc = unsafe {
                    ffi::MPI_Rget(
                        recv_ptr(buf),
                        t.count,
                        dt,
                        t.rank,
                        t.disp,
                        t.count,
                        dt,
                        self.win,
                        &mut raw,
                    )
                };
                (rc, "rget")
            }
            RequestCall::Accumulate(buf, op) => {
                let _gate = enter_with(self.pass, "raccumulate")?;
                // SAFETY: as in `accumulate`; MPI writes the request handle.
                let rc = unsafe {
                    ffi::MPI_Raccumulate(
                        send_ptr(buf),
                        t.count,
                        op.datatype,
                        t.rank,
                        t.disp,
                        t.count,
                        op.datatype,
                        op.op,
                        self.win,
                        &mut raw,
                    )
                };
                (rc, "raccumulate")
            }
        };
        check(rc, operation)?;
        // RMA requests cannot be cancelled: dropping one waits for it.
        Ok(RawRequest {
            raw,
            kind: Kind::Collective,
        })
    }
}

/// What a request-based call does with its buffer.
pub(crate) enum RequestCall<'a, T> {
    Put(&'a [T]),
    Get(&'a mut [T]),
    Accumulate(&'a [T], Operand),
}

/// The operand of an accumulate op for `T`.
#[inline(always)]
pub(crate) fn operand<T: Equivalence, O: AccumulateOp<T>>(op: &O) -> Operand {
    op.accumulate_operand()
}

/// Refuses an accumulate of a derived type (a `#[derive(Equivalence)]` struct): MPI defines
/// accumulates on one predefined type only (MPI-4.0 §12.3.4), and MPICH aborts the process
/// on a struct of mixed types. Known at compile time: nothing is left of it for other types.
#[inline(always)]
fn derived_refused<T: Equivalence>(operation: &'static str) -> Result<()> {
    if T::PREDEFINED {
        Ok(())
    } else {
        Err(derived_accumulate(operation))
    }
}

#[cold]
fn derived_accumulate(operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: "accumulates take numbers, not derived structs (MPI defines them on one \
                 predefined type); put and get move structs, or accumulate into a window of \
                 the field's type"
            .into(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = c_int::MAX as usize;

    fn target(rank: c_int, disp: usize, count: usize) -> Target {
        Target {
            rank,
            disp: disp as ffi::MPI_Aint,
            count: count as c_int,
        }
    }

    /// Rank 0 of more elements than an `int` counts (behind a control block of 16 units, as a
    /// shared window's), rank 1 of four.
    fn layout(scale: ffi::MPI_Aint) -> Layout {
        let mut layout = Layout::new(scale);
        layout.set_lens(Box::new([MAX + 1000, 4]), 16);
        layout
    }

    #[test]
    fn locates_inside_the_window() {
        let l = layout(1);
        let at = |rank, index, len| l.locate::<u8>(rank, index, len, "put");
        assert_eq!(at(1, 1, 3), Ok(target(1, 1, 3)));
        assert_eq!(at(1, 4, 0), Ok(target(1, 4, 0)));
        // Rank 0's elements start after its offset; the other ranks' at 0.
        assert_eq!(at(0, 2, 8), Ok(target(0, 18, 8)));
        // Past `int`'s reach in a larger window: the slow path, which allows it.
        let far = MAX + 10;
        assert_eq!(at(0, far, 8), Ok(target(0, far + 16, 8)));
        // Displacements in bytes of a window whose `disp_unit` is one byte.
        let bytes = layout(8);
        assert_eq!(bytes.locate::<f64>(1, 3, 1, "get"), Ok(target(1, 24, 1)));
    }

    #[test]
    fn refuses_what_lies_outside() {
        let l = layout(1);
        let at = |rank, index, len| l.locate::<u8>(rank, index, len, "put");
        for rank in [-1, 2, i32::MIN, i32::MAX] {
            assert!(
                matches!(
                    at(rank, 0, 1).as_ref().map_err(crate::error::Error::kind),
                    Err(ErrorKind::InvalidRank { .. })
                ),
                "{rank}"
            );
        }
        for (index, len) in [(0, 5), (4, 1), (5, 0), (usize::MAX, 2), (1, usize::MAX)] {
            assert!(
                matches!(
                    at(1, index, len)
                        .as_ref()
                        .map_err(crate::error::Error::kind),
                    Err(ErrorKind::OutOfBounds { .. })
                ),
                "{index} + {len}"
            );
        }
        assert!(matches!(
            at(0, MAX, 1001).as_ref().map_err(crate::error::Error::kind),
            Err(ErrorKind::OutOfBounds { .. })
        ));
        // In bounds, but more elements than one call's `int` count.
        assert!(matches!(
            at(0, 0, MAX + 1)
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
        // A value of two MPI elements: half as many values fit a count.
        let pairs = l.locate::<[u8; 2]>(0, 0, MAX / 2 + 1, "put");
        assert!(matches!(
            pairs.as_ref().map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
        assert_eq!(
            l.locate::<[u8; 2]>(0, 0, MAX / 2, "put"),
            Ok(target(0, 16, MAX / 2 * 2))
        );
    }
}
