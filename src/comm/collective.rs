//! Collective operations (MPI-4.0 chapter 6), blocking and nonblocking.
//!
//! Every buffer length is checked on the calling rank before MPI is called: receive buffers must
//! hold what the operation delivers (`Error::BufferSize`), counts must fit MPI's `int`
//! (`Error::CountOverflow`), roots must be ranks (`Error::InvalidRank`). What only the other
//! ranks know (that they pass matching lengths and the same root) MPI does *not* promise to
//! check: a mismatch is an erroneous program (MPI-4.0 §6.1). Blocking collectives usually report
//! it as `Error::Mpi` of class `Truncate`; nonblocking ones crashed Open MPI 4.1 and delivered
//! wrong data then hung MPICH 4.0 here. Turn on checked mode
//! ([`InitOptions::check_collectives`](crate::InitOptions::check_collectives)) to have every
//! nonblocking and persistent collective verify agreement first ([`agreement`](super::agreement)).
//!
//! In-place forms (`*_in_place`) use `MPI_IN_PLACE`: one buffer is both input and output.
//! Nonblocking forms (`i*`) borrow their buffers for a [`scope`](crate::scope) and return a
//! [`Request`]; see [`request`](crate::request) for why leaking one stays sound. A dropped
//! pending collective request waits for completion (collectives cannot be cancelled).
//!
//! The v-variants take a [`Partition`]: every rank passes the same one, and each checks its own
//! block against its buffer.

use super::Communicator;
use super::agreement::Signature;
use super::in_place::{Issue, started};
use super::large::{Block, Reduction, VMove, large_count};
use super::partition::{Partition, TypedPartition};
use crate::datatype::{Equivalence, count_of, recv_ptr, repair, send_ptr};
use crate::env::enter;
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::op::{Op, Operand};
use crate::request::{Kind, RawRequest, Repair, Request, Scope, request_null};
use std::ffi::{c_int, c_void};

/// `MPI_IN_PLACE`.
pub(crate) fn in_place() -> *mut c_void {
    // SAFETY: an immutable constant defined by the shim.
    unsafe { ffi::ferrompi_MPI_IN_PLACE }
}

/// `Some(request)` selects the nonblocking variant of a collective.
pub(super) type Req<'a> = Option<&'a mut ffi::MPI_Request>;

pub(super) fn same_len(expected: usize, actual: usize, operation: &'static str) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BufferSize {
            operation,
            expected,
            actual,
        })
    }
}

/// What the ranks of a data-movement collective must agree on (checked mode): the count per
/// rank each sends (gather, allgather, alltoall) or receives (scatter), and the root.
pub(super) fn move_signature(f: MoveFn, sn: i64, dn: i64, root: c_int) -> Signature {
    match f {
        MoveFn::Gather => Signature::Same { root, key: sn },
        MoveFn::Scatter => Signature::Same { root, key: dn },
        MoveFn::Allgather | MoveFn::Alltoall => Signature::Same { root: -1, key: sn },
    }
}

/// Checks that `actual == len * factor`, exactly: a product that overflows `usize` (possible
/// with zero-sized values, which need no memory) never matches.
pub(super) fn same_product(
    len: usize,
    factor: usize,
    actual: usize,
    operation: &'static str,
) -> Result<()> {
    match len.checked_mul(factor) {
        Some(expected) => same_len(expected, actual, operation),
        None => Err(Error::BufferSize {
            operation,
            expected: usize::MAX,
            actual,
        }),
    }
}

/// Reduction arguments: the count in the operand's elements. Counts above `i32::MAX` take the
/// large-count path (see `comm::large`).
#[inline(always)]
pub(super) fn reduction(
    len: usize,
    operand: Operand,
    operation: &'static str,
) -> Result<(ffi::MPI_Count, Operand)> {
    let count = len
        .checked_mul(operand.per_value)
        .and_then(|n| ffi::MPI_Count::try_from(n).ok());
    match count {
        Some(count) => Ok((count, operand)),
        None => Err(crate::datatype::count_overflow(
            len,
            operand.per_value,
            operation,
        )),
    }
}

impl<'env> Communicator<'env> {
    pub(super) fn size_usize(&self) -> usize {
        usize::try_from(self.size).unwrap_or(0)
    }

    pub(super) fn is_root(&self, root: i32, operation: &'static str) -> Result<bool> {
        self.check_rank(root, "root", operation)?;
        Ok(self.rank == root)
    }

    /// Length of one rank's share of a buffer divided evenly among the ranks.
    pub(super) fn share(&self, len: usize, operation: &'static str) -> Result<usize> {
        let size = self.size_usize();
        if len % size == 0 {
            Ok(len / size)
        } else {
            Err(Error::InvalidArgument {
                operation,
                reason: format!("buffer of {len} values does not divide among {size} ranks"),
            })
        }
    }

    /// Runs a blocking collective (the `None` variant of `call`), then repairs `out`.
    #[inline(always)]
    pub(super) fn blocking<T: Equivalence>(
        &self,
        operation: &'static str,
        out: &mut [T],
        call: impl FnOnce(Req<'_>) -> c_int,
    ) -> Result<()> {
        let rc = {
            let _gate = enter(operation)?;
            call(None)
        };
        repair(out);
        check(rc, operation)
    }

    /// Starts a nonblocking collective (the `Some` variant of `call`) in `scope`.
    #[inline(always)]
    pub(super) fn nonblocking<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        operation: &'static str,
        repair: Option<Repair>,
        call: impl FnOnce(Req<'_>) -> c_int,
    ) -> Result<Request<'s>> {
        let mut raw = request_null();
        {
            let _gate = enter(operation)?;
            check(call(Some(&mut raw)), operation)?;
        }
        Ok(Request::started(
            RawRequest {
                raw,
                kind: Kind::Collective,
            },
            repair,
            &scope.in_flight,
        ))
    }

    // ----- barrier, bcast ---------------------------------------------------------------------

    /// Blocks until every process of the communicator has called it (`MPI_Barrier`, §6.3).
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    #[inline]
    pub fn barrier(&self) -> Result<()> {
        self.blocking::<u8>("barrier", &mut [], |_| {
            // SAFETY: a valid communicator.
            unsafe { ffi::MPI_Barrier(self.raw) }
        })
    }

    /// Starts a barrier (`MPI_Ibarrier`, §6.12.1).
    ///
    /// # Errors
    /// As [`Communicator::barrier`].
    pub fn ibarrier<'s>(&'s self, scope: &'s Scope<'s, '_>) -> Result<Request<'s>> {
        self.agree("ibarrier", || Ok(Signature::Same { root: -1, key: 0 }))?;
        self.nonblocking(scope, "ibarrier", None, |r| {
            // SAFETY: a valid communicator; MPI writes the request.
            unsafe { ffi::MPI_Ibarrier(self.raw, r.expect("nonblocking")) }
        })
    }

    /// # Safety
    /// `buf` must hold `count` elements and stay valid (and, if nonblocking, untouched) until
    /// the operation completes.
    #[inline(always)]
    unsafe fn raw_bcast(
        &self,
        buf: *mut c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        let Ok(count) = c_int::try_from(count) else {
            // SAFETY: per the contract.
            return unsafe { self.bcast_large(buf, count, dt, root, r) };
        };
        // SAFETY: per the contract.
        unsafe {
            match r {
                None => ffi::MPI_Bcast(buf, count, dt, root, self.raw),
                Some(r) => ffi::MPI_Ibcast(buf, count, dt, root, self.raw, r),
            }
        }
    }

    /// Broadcasts `buf` from `root` to every process (`MPI_Bcast`, §6.4). Every process passes
    /// a buffer of the same length; non-roots receive into theirs.
    ///
    /// # Errors
    /// [`Error::InvalidRank`] for a bad root and [`Error::CountOverflow`], before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`] (e.g. class `Truncate` when the
    /// root sends more than a receiver's buffer holds).
    #[inline]
    pub fn bcast<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        const OP: &str = "bcast";
        self.check_rank(root, "root", OP)?;
        let count = large_count::<T>(buf.len(), OP)?;
        let ptr = recv_ptr(buf);
        // SAFETY: `buf` holds `count` elements, exclusively borrowed for the blocking call.
        self.blocking(OP, buf, |r| unsafe {
            self.raw_bcast(ptr, count, T::datatype().as_raw(), root, r)
        })
    }

    /// Starts a broadcast (`MPI_Ibcast`, §6.12.2).
    ///
    /// # Errors
    /// As [`Communicator::bcast`].
    pub fn ibcast<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "ibcast";
        let count = large_count::<T>(buf.len(), OP)?;
        self.check_rank(root, "root", OP)?;
        self.agree(OP, || Ok(Signature::Same { root, key: count }))?;
        if super::large::bcast_schedule_broken(size_of_val(buf)) {
            return self.ibcast_big(scope, buf, root);
        }
        let ptr = recv_ptr(buf);
        // SAFETY: `buf` is borrowed for 's; the scope completes the operation first.
        self.nonblocking(scope, OP, Repair::for_slice(buf), |r| unsafe {
            self.raw_bcast(ptr, count, T::datatype().as_raw(), root, r)
        })
    }

    /// [`Communicator::ibcast`] of 2 GiB or more on MPICH before 4.2, whose `MPI_Ibcast` keeps
    /// the byte count in an `int` and fails on the receivers (reproduced on 4.0.2, with
    /// `MPI_Ibcast_c` too, for every `MPIR_CVAR_IBCAST_INTRA_ALGORITHM` but one). Every rank
    /// sees the same length, so all of them take this path: an `MPI_Ialltoallw` in which the
    /// root sends its buffer to every other rank (see `comm::large`).
    #[cold]
    fn ibcast_big<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "ibcast";
        let whole = Block::whole::<T>(buf.len());
        let (s, d) = self.bcast_sides(recv_ptr(buf), root);
        let (to, from) = ((s, |_| whole), (d, |_| whole));
        let f = VMove::Bcast { root };
        self.ivmove_big(scope, f, to, from, Repair::for_slice(buf), OP)
    }

    // ----- reduce, allreduce, scan, exscan ----------------------------------------------------

    /// # Safety
    /// Buffers as MPI requires for `count` elements, valid until completion.
    #[inline(always)]
    pub(super) unsafe fn raw_reduce(
        &self,
        s: *const c_void,
        d: *mut c_void,
        n: ffi::MPI_Count,
        o: Operand,
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        let Ok(n) = c_int::try_from(n) else {
            // SAFETY: per the contract.
            return unsafe { self.reduce_large(Reduction::Reduce(root), s, d, n, o, r) };
        };
        // SAFETY: per the contract.
        unsafe {
            match r {
                None => ffi::MPI_Reduce(s, d, n, o.datatype, o.op, root, self.raw),
                Some(r) => ffi::MPI_Ireduce(s, d, n, o.datatype, o.op, root, self.raw, r),
            }
        }
    }

    /// Combines `send` from every process with `op` into `recv` at `root` (`MPI_Reduce`,
    /// §6.9.1). `recv` must be as long as `send` at the root and is not used elsewhere (pass
    /// `&mut []`).
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::BufferSize`], [`Error::CountOverflow`] before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn reduce<T: Equivalence, O: Op<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
        root: i32,
    ) -> Result<()> {
        const OP: &str = "reduce";
        if self.is_root(root, OP)? {
            same_len(send.len(), recv.len(), OP)?;
        }
        let (count, operand) = reduction(send.len(), op.operand(), OP)?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        // SAFETY: `send` holds `count` elements; at the root `recv` has room for as many; both
        // borrowed for the blocking call.
        self.blocking(OP, recv, |r| unsafe {
            self.raw_reduce(s, d, count, operand, root, r)
        })
    }

    /// [`reduce`](Communicator::reduce) with `MPI_IN_PLACE`: at the root `buf` is input and
    /// result, elsewhere it is only input.
    ///
    /// # Errors
    /// As [`Communicator::reduce`].
    pub fn reduce_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        op: O,
        root: i32,
    ) -> Result<()> {
        self.reduce_in_place_on(Issue::Blocking, buf, op, root)
            .map(drop)
    }

    /// Starts a reduction (`MPI_Ireduce`, §6.12.4).
    ///
    /// # Errors
    /// As [`Communicator::reduce`].
    pub fn ireduce<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "ireduce";
        let (count, operand) = reduction(send.len(), op.operand(), OP)?;
        if self.is_root(root, OP)? {
            same_len(send.len(), recv.len(), OP)?;
        }
        self.agree(OP, || Ok(Signature::Same { root, key: count }))?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        // SAFETY: buffers and op borrowed for 's; the scope completes the operation first.
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| unsafe {
            self.raw_reduce(s, d, count, operand, root, r)
        })
    }

    /// # Safety
    /// Buffers as MPI requires for `count` elements, valid until completion.
    #[inline(always)]
    pub(super) unsafe fn raw_allreduce(
        &self,
        f: ReduceFn,
        s: *const c_void,
        d: *mut c_void,
        n: ffi::MPI_Count,
        o: Operand,
        r: Req<'_>,
    ) -> c_int {
        let Ok(n) = c_int::try_from(n) else {
            // SAFETY: per the contract.
            return unsafe { self.reduce_large(Reduction::Like(f), s, d, n, o, r) };
        };
        // SAFETY: per the contract.
        unsafe {
            match (f, r) {
                (ReduceFn::All, None) => ffi::MPI_Allreduce(s, d, n, o.datatype, o.op, self.raw),
                (ReduceFn::All, Some(r)) => {
                    ffi::MPI_Iallreduce(s, d, n, o.datatype, o.op, self.raw, r)
                }
                (ReduceFn::Scan, None) => ffi::MPI_Scan(s, d, n, o.datatype, o.op, self.raw),
                (ReduceFn::Scan, Some(r)) => ffi::MPI_Iscan(s, d, n, o.datatype, o.op, self.raw, r),
                (ReduceFn::Exscan, None) => ffi::MPI_Exscan(s, d, n, o.datatype, o.op, self.raw),
                (ReduceFn::Exscan, Some(r)) => {
                    ffi::MPI_Iexscan(s, d, n, o.datatype, o.op, self.raw, r)
                }
                (ReduceFn::ScatterBlock, None) => {
                    ffi::MPI_Reduce_scatter_block(s, d, n, o.datatype, o.op, self.raw)
                }
                (ReduceFn::ScatterBlock, Some(r)) => {
                    ffi::MPI_Ireduce_scatter_block(s, d, n, o.datatype, o.op, self.raw, r)
                }
            }
        }
    }

    fn reduce_like<T: Equivalence, O: Op<T>>(
        &self,
        f: ReduceFn,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<()> {
        let operation = f.name(false);
        let factor = f.input_factor(self.size_usize());
        same_product(recv.len(), factor, send.len(), operation)?;
        let (count, operand) = reduction(recv.len(), op.operand(), operation)?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        // SAFETY: `send` and `recv` hold what the operation reads and writes (checked above),
        // borrowed for the blocking call.
        self.blocking(operation, recv, |r| unsafe {
            self.raw_allreduce(f, s, d, count, operand, r)
        })
    }

    fn reduce_like_in_place<T: Equivalence, O: Op<T>>(
        &self,
        f: ReduceFn,
        buf: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like_in_place_on(Issue::Blocking, f, buf, op)
            .map(drop)
    }

    fn ireduce_like<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: ReduceFn,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        let operation = f.name(true);
        let (count, operand) = reduction(recv.len(), op.operand(), operation)?;
        let factor = f.input_factor(self.size_usize());
        same_product(recv.len(), factor, send.len(), operation)?;
        self.agree(operation, || {
            Ok(Signature::Same {
                root: -1,
                key: count,
            })
        })?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        // SAFETY: buffers and op borrowed for 's; the scope completes the operation first.
        self.nonblocking(scope, operation, Repair::for_slice(recv), |r| unsafe {
            self.raw_allreduce(f, s, d, count, operand, r)
        })
    }

    pub(super) fn ireduce_like_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: ReduceFn,
        buf: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.reduce_like_in_place_on(Issue::In(scope), f, buf, op)
            .map(started)
    }

    /// Combines `send` from every process with `op`; every process gets the result in `recv`
    /// (`MPI_Allreduce`, §6.9.6). `send` and `recv` have the same length.
    ///
    /// # Errors
    /// [`Error::BufferSize`], [`Error::CountOverflow`] before any communication;
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    #[inline]
    pub fn allreduce<T: Equivalence, O: Op<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like(ReduceFn::All, send, recv, op)
    }

    /// [`allreduce`](Communicator::allreduce) with `MPI_IN_PLACE`: `buf` is input and result.
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline]
    pub fn allreduce_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::All, buf, op)
    }

    /// Starts an allreduce (`MPI_Iallreduce`, §6.12.5).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn iallreduce<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like(scope, ReduceFn::All, send, recv, op)
    }

    /// Starts an in-place allreduce (`MPI_Iallreduce` with `MPI_IN_PLACE`).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn iallreduce_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like_in_place(scope, ReduceFn::All, buf, op)
    }

    /// Inclusive prefix reduction: rank `i` gets `send₀ ∘ … ∘ sendᵢ` (`MPI_Scan`, §6.11.1).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn scan<T: Equivalence, O: Op<T>>(&self, send: &[T], recv: &mut [T], op: O) -> Result<()> {
        self.reduce_like(ReduceFn::Scan, send, recv, op)
    }

    /// [`scan`](Communicator::scan) with `MPI_IN_PLACE`.
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn scan_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::Scan, buf, op)
    }

    /// Starts an inclusive scan (`MPI_Iscan`, §6.12.11).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn iscan<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like(scope, ReduceFn::Scan, send, recv, op)
    }

    /// Exclusive prefix reduction: rank `i > 0` gets `send₀ ∘ … ∘ sendᵢ₋₁`; rank 0's `recv` is
    /// left as MPI leaves it (undefined by the standard) (`MPI_Exscan`, §6.11.2).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn exscan<T: Equivalence, O: Op<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like(ReduceFn::Exscan, send, recv, op)
    }

    /// [`exscan`](Communicator::exscan) with `MPI_IN_PLACE`.
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn exscan_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::Exscan, buf, op)
    }

    /// Starts an exclusive scan (`MPI_Iexscan`, §6.12.12).
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn iexscan<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like(scope, ReduceFn::Exscan, send, recv, op)
    }

    /// Reduces `send` (one block of `recv.len()` values per rank) and scatters the blocks: rank
    /// `i` gets block `i` of the result (`MPI_Reduce_scatter_block`, §6.10.1).
    ///
    /// # Errors
    /// [`Error::BufferSize`] unless `send.len() == recv.len() * size`; as
    /// [`Communicator::allreduce`].
    pub fn reduce_scatter_block<T: Equivalence, O: Op<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like(ReduceFn::ScatterBlock, send, recv, op)
    }

    /// [`reduce_scatter_block`](Communicator::reduce_scatter_block) in place: `buf` holds one
    /// block per rank; this rank's result is left in its first block.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `buf` does not divide among the ranks; as
    /// [`Communicator::allreduce`].
    pub fn reduce_scatter_block_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::ScatterBlock, buf, op)
    }

    /// Starts a reduce-scatter with equal blocks (`MPI_Ireduce_scatter_block`, §6.12.9).
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter_block`].
    pub fn ireduce_scatter_block<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like(scope, ReduceFn::ScatterBlock, send, recv, op)
    }

    /// Reduces `send` (laid out as `blocks`, packed in rank order) and scatters the blocks:
    /// rank `i` gets block `i` of the result in `recv` (`MPI_Reduce_scatter`, §6.10.2).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a partition that is not packed or not of this size;
    /// [`Error::BufferSize`]; as [`Communicator::allreduce`].
    pub fn reduce_scatter<T: Equivalence, O: Op<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: &Partition<T>,
        op: O,
    ) -> Result<()> {
        const OP: &str = "reduce_scatter";
        let operand = self.reduce_scatter_args(send.len(), recv.len(), blocks, op.operand(), OP)?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        if blocks.is_large() {
            // SAFETY: buffers checked against the packed partition, borrowed for the call.
            return self.blocking(OP, recv, |_| unsafe {
                self.reduce_scatter_large(s, d, blocks, operand)
            });
        }
        let (counts, _) = blocks.int_arrays(OP)?;
        self.blocking(OP, recv, |_| {
            // SAFETY: buffers checked against the packed partition, borrowed for the call.
            unsafe { ffi::MPI_Reduce_scatter(s, d, counts, operand.datatype, operand.op, self.raw) }
        })
    }

    pub(super) fn reduce_scatter_args<T: Equivalence>(
        &self,
        send_len: usize,
        recv_len: usize,
        blocks: &Partition<T>,
        operand: Operand,
        operation: &'static str,
    ) -> Result<Operand> {
        blocks.check(self.size, send_len, operation)?;
        if !blocks.is_packed() {
            return Err(Error::InvalidArgument {
                operation,
                reason: "reduce_scatter needs a packed partition".into(),
            });
        }
        same_len(blocks.extent(), send_len, operation)?;
        same_len(blocks.len_of(self.rank_usize()), recv_len, operation)?;
        if operand.per_value != T::ELEMENTS {
            return Err(Error::InvalidArgument {
                operation,
                reason: "reduce_scatter takes predefined operations (use reduce_scatter_block with user ops)".into(),
            });
        }
        Ok(operand)
    }

    pub(super) fn rank_usize(&self) -> usize {
        usize::try_from(self.rank).unwrap_or(0)
    }

    // ----- gather, scatter, allgather, alltoall -------------------------------------------------

    /// # Safety
    /// Buffers as MPI requires, valid until completion.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) unsafe fn raw_move(
        &self,
        f: MoveFn,
        s: *const c_void,
        sn: ffi::MPI_Count,
        d: *mut c_void,
        dn: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        let (Ok(sn), Ok(dn)) = (c_int::try_from(sn), c_int::try_from(dn)) else {
            // SAFETY: per the contract.
            return unsafe { self.move_large(f, (s, sn), (d, dn), dt, root, r) };
        };
        let c = self.raw;
        // SAFETY: per the contract.
        unsafe {
            match (f, r) {
                (MoveFn::Gather, None) => ffi::MPI_Gather(s, sn, dt, d, dn, dt, root, c),
                (MoveFn::Gather, Some(r)) => ffi::MPI_Igather(s, sn, dt, d, dn, dt, root, c, r),
                (MoveFn::Scatter, None) => ffi::MPI_Scatter(s, sn, dt, d, dn, dt, root, c),
                (MoveFn::Scatter, Some(r)) => ffi::MPI_Iscatter(s, sn, dt, d, dn, dt, root, c, r),
                (MoveFn::Allgather, None) => ffi::MPI_Allgather(s, sn, dt, d, dn, dt, c),
                (MoveFn::Allgather, Some(r)) => ffi::MPI_Iallgather(s, sn, dt, d, dn, dt, c, r),
                (MoveFn::Alltoall, None) => ffi::MPI_Alltoall(s, sn, dt, d, dn, dt, c),
                (MoveFn::Alltoall, Some(r)) => ffi::MPI_Ialltoall(s, sn, dt, d, dn, dt, c, r),
            }
        }
    }

    /// Checks a gather/scatter/allgather/alltoall call; returns the per-rank counts.
    pub(super) fn move_args<T: Equivalence>(
        &self,
        f: MoveFn,
        send_len: usize,
        recv_len: usize,
        root: i32,
        operation: &'static str,
    ) -> Result<(ffi::MPI_Count, ffi::MPI_Count)> {
        let size = self.size_usize();
        let at_root = match f {
            MoveFn::Gather | MoveFn::Scatter => self.is_root(root, operation)?,
            MoveFn::Allgather | MoveFn::Alltoall => true,
        };
        // (send per rank, recv per rank) in values.
        let (per_send, per_recv) = match f {
            MoveFn::Gather | MoveFn::Allgather => {
                if at_root {
                    same_product(send_len, size, recv_len, operation)?;
                }
                (send_len, send_len)
            }
            MoveFn::Scatter => {
                if at_root {
                    same_product(recv_len, size, send_len, operation)?;
                }
                (recv_len, recv_len)
            }
            MoveFn::Alltoall => {
                same_len(send_len, recv_len, operation)?;
                let share = self.share(send_len, operation)?;
                (share, share)
            }
        };
        Ok((
            large_count::<T>(per_send, operation)?,
            large_count::<T>(per_recv, operation)?,
        ))
    }

    pub(super) fn move_blocking<T: Equivalence>(
        &self,
        f: MoveFn,
        send: &[T],
        recv: &mut [T],
        root: i32,
    ) -> Result<()> {
        let operation = f.name(false);
        let (sn, dn) = self.move_args::<T>(f, send.len(), recv.len(), root, operation)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        // SAFETY: buffer lengths checked above; both borrowed for the blocking call.
        self.blocking(operation, recv, |r| unsafe {
            self.raw_move(f, s, sn, d, dn, dt, root, r)
        })
    }

    pub(super) fn move_nonblocking<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: MoveFn,
        send: &'s [T],
        recv: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        let operation = f.name(true);
        let (sn, dn) = self.move_args::<T>(f, send.len(), recv.len(), root, operation)?;
        self.agree(operation, || Ok(move_signature(f, sn, dn, root)))?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        // SAFETY: buffers borrowed for 's; the scope completes the operation first.
        self.nonblocking(scope, operation, Repair::for_slice(recv), |r| unsafe {
            self.raw_move(f, s, sn, d, dn, dt, root, r)
        })
    }

    /// The in-place form of allgather and alltoall: `buf` holds one block per rank.
    fn move_all_in_place<T: Equivalence>(&self, f: MoveFn, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place_on(Issue::Blocking, f, buf).map(drop)
    }

    /// Collects `send` from every process at `root`, in rank order (`MPI_Gather`, §6.5). At the
    /// root `recv.len()` is `send.len() * size`; elsewhere `recv` is unused (pass `&mut []`).
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::BufferSize`], [`Error::CountOverflow`] before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn gather<T: Equivalence>(&self, send: &[T], recv: &mut [T], root: i32) -> Result<()> {
        self.move_blocking(MoveFn::Gather, send, recv, root)
    }

    /// [`gather`](Communicator::gather) in place: at the root `buf` is the whole result, with the
    /// root's own contribution already at its block; elsewhere `buf` is what is sent.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the root's `buf` does not divide among the ranks; as
    /// [`Communicator::gather`].
    pub fn gather_in_place<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.gather_in_place_on(Issue::Blocking, buf, root)
            .map(drop)
    }

    /// Starts a gather (`MPI_Igather`, §6.12.3).
    ///
    /// # Errors
    /// As [`Communicator::gather`].
    pub fn igather<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        self.move_nonblocking(scope, MoveFn::Gather, send, recv, root)
    }

    /// Sends block `i` of `send` from `root` to rank `i` (`MPI_Scatter`, §6.6). At the root
    /// `send.len()` is `recv.len() * size`; elsewhere `send` is unused (pass `&[]`).
    ///
    /// # Errors
    /// As [`Communicator::gather`].
    pub fn scatter<T: Equivalence>(&self, send: &[T], recv: &mut [T], root: i32) -> Result<()> {
        self.move_blocking(MoveFn::Scatter, send, recv, root)
    }

    /// [`scatter`](Communicator::scatter) in place: at the root `buf` is the whole input and its
    /// own block stays where it is; elsewhere `buf` receives.
    ///
    /// # Errors
    /// As [`Communicator::gather_in_place`].
    pub fn scatter_in_place<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.scatter_in_place_on(Issue::Blocking, buf, root)
            .map(drop)
    }

    /// Starts a scatter (`MPI_Iscatter`, §6.12.4).
    ///
    /// # Errors
    /// As [`Communicator::scatter`].
    pub fn iscatter<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        self.move_nonblocking(scope, MoveFn::Scatter, send, recv, root)
    }

    /// Every process gets every process's `send`, in rank order (`MPI_Allgather`, §6.7).
    /// `recv.len()` is `send.len() * size`.
    ///
    /// # Errors
    /// [`Error::BufferSize`], [`Error::CountOverflow`] before any communication;
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn allgather<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.move_blocking(MoveFn::Allgather, send, recv, 0)
    }

    /// [`allgather`](Communicator::allgather) in place: `buf` holds one block per rank, this
    /// rank's already filled.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `buf` does not divide among the ranks; as
    /// [`Communicator::allgather`].
    pub fn allgather_in_place<T: Equivalence>(&self, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place(MoveFn::Allgather, buf)
    }

    /// Starts an allgather (`MPI_Iallgather`, §6.12.5).
    ///
    /// # Errors
    /// As [`Communicator::allgather`].
    pub fn iallgather<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        self.move_nonblocking(scope, MoveFn::Allgather, send, recv, 0)
    }

    /// Rank `i` sends block `j` of `send` to rank `j`, which stores it as block `i` of `recv`
    /// (`MPI_Alltoall`, §6.8). Both buffers hold `size` equal blocks.
    ///
    /// # Errors
    /// [`Error::BufferSize`], [`Error::InvalidArgument`] (not divisible), [`Error::CountOverflow`]
    /// before any communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn alltoall<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.move_blocking(MoveFn::Alltoall, send, recv, 0)
    }

    /// [`alltoall`](Communicator::alltoall) in place.
    ///
    /// # Errors
    /// As [`Communicator::alltoall`].
    pub fn alltoall_in_place<T: Equivalence>(&self, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place(MoveFn::Alltoall, buf)
    }

    /// Starts an all-to-all (`MPI_Ialltoall`, §6.12.6).
    ///
    /// # Errors
    /// As [`Communicator::alltoall`].
    pub fn ialltoall<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        self.move_nonblocking(scope, MoveFn::Alltoall, send, recv, 0)
    }

    // ----- v-variants ----------------------------------------------------------------------------

    /// Checks `own` (this rank's block length) and the partition, returning `own`'s count.
    pub(super) fn own_block<T: Equivalence>(
        &self,
        blocks: &Partition<T>,
        own: usize,
        operation: &'static str,
    ) -> Result<c_int> {
        // Sizes only: where blocks are written, the caller checks them for overlap too.
        blocks.check_send(self.size, blocks.extent(), operation)?;
        same_len(blocks.len_of(self.rank_usize()), own, operation)?;
        count_of::<T>(own, operation)
    }

    /// A blocking v-collective whose blocks or offsets do not fit `int` (see `comm::large`).
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn vmove_big<T: Equivalence>(
        &self,
        f: VMove,
        in_place: bool,
        s: *const c_void,
        send: impl Fn(usize) -> Block,
        out: &mut [T],
        recv: impl Fn(usize) -> Block,
        operation: &'static str,
    ) -> Result<()> {
        let d = recv_ptr(out);
        let result = {
            let _gate = enter(operation)?;
            // SAFETY: the caller checked the blocks against the buffers, which are borrowed for
            // the call.
            unsafe { self.vmove_blocks(f, in_place, s, send, d, recv, None, operation) }
        };
        repair(out);
        result
    }

    /// A nonblocking v-collective (or a broadcast, see `ibcast`) whose blocks or offsets do
    /// not fit `int`: `MPI_Ialltoallw`, its arrays kept in `scope` (see `comm::large`).
    ///
    /// The caller checked the blocks against the buffers at `s` and `d`, which are borrowed for
    /// 's; `repair` is the received buffer's.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn ivmove_big<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: VMove,
        (s, send): (*const c_void, impl Fn(usize) -> Block),
        (d, recv): (*mut c_void, impl Fn(usize) -> Block),
        repair: Option<Repair>,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.start_large(scope, repair, operation, |start| {
            // SAFETY: the caller checked the blocks against the buffers, which are borrowed for
            // 's; the scope completes the operation before they are released.
            unsafe { self.vmove_blocks(f, false, s, send, d, recv, Some(start), operation) }
        })
    }

    /// Starts a nonblocking large-count collective in `scope`: `start` gets the request handle
    /// and the scope (which keeps what MPI reads until completion), under the thread gate.
    #[cold]
    fn start_large<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        repair: Option<Repair>,
        operation: &'static str,
        start: impl FnOnce((&mut ffi::MPI_Request, &Scope<'_, '_>)) -> Result<()>,
    ) -> Result<Request<'s>> {
        let mut raw = request_null();
        {
            let _gate = enter(operation)?;
            start((&mut raw, scope))?;
        }
        let raw = RawRequest {
            raw,
            kind: Kind::Collective,
        };
        Ok(Request::started(raw, repair, &scope.in_flight))
    }

    /// Collects blocks of different lengths at `root` (`MPI_Gatherv`, §6.5). Every rank passes
    /// the same `blocks`; rank `i` sends `blocks.len_of(i)` values; at the root they land in
    /// `recv` as `blocks` says. `recv` is unused elsewhere.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (partition size), [`Error::BufferSize`], [`Error::InvalidRank`]
    /// before any communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn gatherv<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: &Partition<T>,
        root: i32,
    ) -> Result<()> {
        const OP: &str = "gatherv";
        if self.is_root(root, OP)? {
            blocks.check(self.size, recv.len(), OP)?;
        }
        if blocks.is_large() {
            blocks.check(self.size, blocks.extent(), OP)?;
            same_len(blocks.len_of(self.rank_usize()), send.len(), OP)?;
            let own = Block::whole::<T>(send.len());
            let f = VMove::Gatherv { root };
            let s = send_ptr(send);
            return self.vmove_big(f, false, s, |_| own, recv, |i| blocks.block(i), OP);
        }
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(OP, recv, |_| {
            // SAFETY: this rank's block and, at the root, the whole partition fit the buffers.
            unsafe {
                ffi::MPI_Gatherv(
                    s,
                    sn,
                    dt,
                    d,
                    blocks.counts(),
                    blocks.displs(),
                    dt,
                    root,
                    self.raw,
                )
            }
        })
    }

    /// Sends rank `i` the block `blocks` gives it of the root's `send` (`MPI_Scatterv`, §6.6).
    /// Every rank passes the same `blocks`; `recv.len()` is this rank's block length. Arguments
    /// in the order of [`gatherv`](Communicator::gatherv)'s: buffers, partition, root.
    ///
    /// # Errors
    /// As [`Communicator::gatherv`].
    pub fn scatterv<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: &Partition<T>,
        root: i32,
    ) -> Result<()> {
        const OP: &str = "scatterv";
        if self.is_root(root, OP)? {
            blocks.check_send(self.size, send.len(), OP)?;
        }
        if blocks.is_large() {
            blocks.check_send(self.size, blocks.extent(), OP)?;
            same_len(blocks.len_of(self.rank_usize()), recv.len(), OP)?;
            let own = Block::whole::<T>(recv.len());
            let f = VMove::Scatterv { root };
            let s = send_ptr(send);
            return self.vmove_big(f, false, s, |j| blocks.block(j), recv, |_| own, OP);
        }
        let dn = self.own_block(blocks, recv.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(OP, recv, |_| {
            // SAFETY: at the root the partition fits `send`; this rank's block fits `recv`.
            unsafe {
                ffi::MPI_Scatterv(
                    s,
                    blocks.counts(),
                    blocks.displs(),
                    dt,
                    d,
                    dn,
                    dt,
                    root,
                    self.raw,
                )
            }
        })
    }

    /// Every process gets every process's block, placed as `blocks` says (`MPI_Allgatherv`,
    /// §6.7). Rank `i` sends `blocks.len_of(i)` values.
    ///
    /// # Errors
    /// As [`Communicator::gatherv`].
    pub fn allgatherv<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        blocks: &Partition<T>,
    ) -> Result<()> {
        const OP: &str = "allgatherv";
        blocks.check(self.size, recv.len(), OP)?;
        if blocks.is_large() {
            same_len(blocks.len_of(self.rank_usize()), send.len(), OP)?;
            let own = Block::whole::<T>(send.len());
            let (f, s) = (VMove::Allgatherv, send_ptr(send));
            return self.vmove_big(f, false, s, |_| own, recv, |i| blocks.block(i), OP);
        }
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(OP, recv, |_| {
            // SAFETY: this rank's block fits `send`, the partition fits `recv`.
            unsafe {
                ffi::MPI_Allgatherv(s, sn, dt, d, blocks.counts(), blocks.displs(), dt, self.raw)
            }
        })
    }

    /// [`allgatherv`](Communicator::allgatherv) in place: this rank's block of `buf` is filled.
    ///
    /// # Errors
    /// As [`Communicator::gatherv`].
    pub fn allgatherv_in_place<T: Equivalence>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
    ) -> Result<()> {
        self.allgatherv_in_place_on(Issue::Blocking, buf, blocks)
            .map(drop)
    }

    /// [`gatherv`](Communicator::gatherv) in place: at the root `buf` is the whole result
    /// (laid out by `blocks`), with the root's own block already in place; elsewhere `buf` is
    /// this rank's block.
    ///
    /// # Errors
    /// As [`Communicator::gatherv`].
    pub fn gatherv_in_place<T: Equivalence>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
        root: i32,
    ) -> Result<()> {
        self.gatherv_in_place_on(Issue::Blocking, buf, blocks, root)
            .map(drop)
    }

    /// [`scatterv`](Communicator::scatterv) in place: at the root `buf` is the whole input and
    /// its own block stays where it is; elsewhere `buf` receives this rank's block.
    ///
    /// # Errors
    /// As [`Communicator::scatterv`].
    pub fn scatterv_in_place<T: Equivalence>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
        root: i32,
    ) -> Result<()> {
        self.scatterv_in_place_on(Issue::Blocking, buf, blocks, root)
            .map(drop)
    }

    /// [`alltoallv`](Communicator::alltoallv) in place: `buf`, laid out by `blocks`, holds
    /// block `j` for rank `j` and receives block `i` from rank `i` in the same place; block
    /// lengths must match pairwise across ranks.
    ///
    /// # Errors
    /// As [`Communicator::alltoallv`].
    pub fn alltoallv_in_place<T: Equivalence>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
    ) -> Result<()> {
        self.alltoallv_in_place_on(Issue::Blocking, buf, blocks)
            .map(drop)
    }

    /// [`reduce_scatter`](Communicator::reduce_scatter) in place: `buf` holds the whole input,
    /// laid out by `blocks`; this rank's block of the result is left at its start.
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter`].
    pub fn reduce_scatter_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
        op: O,
    ) -> Result<()> {
        self.reduce_scatter_in_place_on(Issue::Blocking, buf, blocks, op)
            .map(drop)
    }

    /// Starts an allgatherv (`MPI_Iallgatherv`, §6.12.5).
    ///
    /// # Errors
    /// As [`Communicator::allgatherv`].
    pub fn iallgatherv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "iallgatherv";
        blocks.check(self.size, recv.len(), OP)?;
        self.agree(OP, || Ok(blocks.signature(-1)))?;
        if blocks.is_large() {
            same_len(blocks.len_of(self.rank_usize()), send.len(), OP)?;
            let own = Block::whole::<T>(send.len());
            let (f, s, d) = (VMove::Allgatherv, send_ptr(send), recv_ptr(recv));
            let (to, from) = ((s, |_| own), (d, |i| blocks.block(i)));
            return self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP);
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| {
            // SAFETY: buffers and partition borrowed for 's; the scope completes the operation.
            unsafe {
                ffi::MPI_Iallgatherv(s, sn, dt, d, bc, bd, dt, self.raw, r.expect("nonblocking"))
            }
        })
    }

    /// Rank `i` sends block `j` of `send` (per `send_blocks`) to rank `j`, which stores it as
    /// block `i` of `recv` (per `recv_blocks`) (`MPI_Alltoallv`, §6.8).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (partition size), [`Error::BufferSize`] before any
    /// communication; [`Error::CountOverflow`] for a block or offset over `i32::MAX` on an MPI
    /// without MPI-4's `_c` calls ([`LARGE_COUNT_CALLS`](crate::LARGE_COUNT_CALLS); use
    /// [`alltoallw`](Communicator::alltoallw) there); [`Error::WrongThread`]; [`Error::Mpi`]
    /// (e.g. class `Truncate` when a peer sends more than a block holds).
    pub fn alltoallv<T: Equivalence>(
        &self,
        send: &[T],
        send_blocks: &Partition<T>,
        recv: &mut [T],
        recv_blocks: &Partition<T>,
    ) -> Result<()> {
        const OP: &str = "alltoallv";
        send_blocks.check_send(self.size, send.len(), OP)?;
        recv_blocks.check(self.size, recv.len(), OP)?;
        if send_blocks.is_large() || recv_blocks.is_large() {
            let (s, d) = (send_ptr(send), recv_ptr(recv));
            let result = enter(OP).and_then(|_gate| {
                // SAFETY: both partitions fit their buffers, borrowed for the call.
                unsafe { self.alltoallv_large(s, Some(send_blocks), d, recv_blocks, None) }
            });
            repair(recv);
            return result;
        }
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        let (sc, sd, rc, rd) = (
            send_blocks.counts(),
            send_blocks.displs(),
            recv_blocks.counts(),
            recv_blocks.displs(),
        );
        self.blocking(OP, recv, |_| {
            // SAFETY: both partitions fit their buffers, borrowed for the call.
            unsafe { ffi::MPI_Alltoallv(s, sc, sd, dt, d, rc, rd, dt, self.raw) }
        })
    }

    /// Starts an alltoallv (`MPI_Ialltoallv`, §6.12.6).
    ///
    /// # Errors
    /// As [`Communicator::alltoallv`].
    pub fn ialltoallv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        send_blocks: &'s Partition<T>,
        recv: &'s mut [T],
        recv_blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "ialltoallv";
        send_blocks.check_send(self.size, send.len(), OP)?;
        recv_blocks.check(self.size, recv.len(), OP)?;
        self.agree(OP, || {
            let (send, recv) = (send_blocks.lengths_i64(), recv_blocks.lengths_i64());
            Ok(Signature::Pairwise { send, recv })
        })?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        if send_blocks.is_large() || recv_blocks.is_large() {
            return self.start_large(scope, Repair::for_slice(recv), OP, |r| {
                // SAFETY: buffers and partitions borrowed for 's; the scope keeps the arrays
                // and completes the operation first.
                unsafe { self.alltoallv_large(s, Some(send_blocks), d, recv_blocks, Some(r)) }
            });
        }
        let ((sc, sd), (rc, rd)) = (send_blocks.int_arrays(OP)?, recv_blocks.int_arrays(OP)?);
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| {
            // SAFETY: buffers and partitions borrowed for 's; the scope completes the operation.
            unsafe {
                ffi::MPI_Ialltoallv(
                    s,
                    sc,
                    sd,
                    dt,
                    d,
                    rc,
                    rd,
                    dt,
                    self.raw,
                    r.expect("nonblocking"),
                )
            }
        })
    }

    /// All-to-all with a datatype per block (`MPI_Alltoallw`, §6.8): block `j` of `send`, as
    /// `send_blocks` describes it, goes to rank `j`, which stores it as block `i` of `recv`.
    /// Buffers are bytes (use `bytemuck` to view typed data); offsets are in bytes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (partition size), [`Error::BufferSize`] before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn alltoallw(
        &self,
        send: &[u8],
        send_blocks: &TypedPartition,
        recv: &mut [u8],
        recv_blocks: &TypedPartition,
    ) -> Result<()> {
        const OP: &str = "alltoallw";
        send_blocks.check_send(self.size, send.len(), OP)?;
        recv_blocks.check(self.size, recv.len(), OP)?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        if send_blocks.is_large() || recv_blocks.is_large() {
            let (send_block, recv_block) = (|j| send_blocks.block(j), |i| recv_blocks.block(i));
            let f = VMove::Alltoallw;
            return self.vmove_big(f, false, s, send_block, recv, recv_block, OP);
        }
        let ((sc, sd, st), (rc, rd, rt)) = (send_blocks.raw(OP)?, recv_blocks.raw(OP)?);
        self.blocking(OP, recv, |_| {
            // SAFETY: both partitions fit their buffers (checked), borrowed for the call.
            unsafe { ffi::MPI_Alltoallw(s, sc, sd, st, d, rc, rd, rt, self.raw) }
        })
    }

    /// [`alltoallw`](Communicator::alltoallw) in place: `buf`, laid out by `blocks`, holds what
    /// goes to each rank and receives what comes from it in the same place.
    ///
    /// # Errors
    /// As [`Communicator::alltoallw`].
    pub fn alltoallw_in_place(&self, buf: &mut [u8], blocks: &TypedPartition) -> Result<()> {
        self.alltoallw_in_place_on(Issue::Blocking, buf, blocks)
            .map(drop)
    }

    /// Starts an all-to-all with a datatype per block (`MPI_Ialltoallw`, §6.12.6).
    ///
    /// # Errors
    /// As [`Communicator::alltoallw`].
    pub fn ialltoallw<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [u8],
        send_blocks: &'s TypedPartition,
        recv: &'s mut [u8],
        recv_blocks: &'s TypedPartition,
    ) -> Result<Request<'s>> {
        const OP: &str = "ialltoallw";
        send_blocks.check_send(self.size, send.len(), OP)?;
        recv_blocks.check(self.size, recv.len(), OP)?;
        self.agree(OP, || {
            let (send, recv) = (send_blocks.sizes_i64(), recv_blocks.sizes_i64());
            Ok(Signature::Pairwise { send, recv })
        })?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        if send_blocks.is_large() || recv_blocks.is_large() {
            let (to, from) = ((s, |j| send_blocks.block(j)), (d, |i| recv_blocks.block(i)));
            return self.ivmove_big(scope, VMove::Alltoallw, to, from, None, OP);
        }
        let ((sc, sd, st), (rc, rd, rt)) = (send_blocks.raw(OP)?, recv_blocks.raw(OP)?);
        self.nonblocking(scope, OP, None, |r| {
            // SAFETY: buffers and partitions (whose arrays MPI reads until completion) are
            // borrowed for 's; the scope completes the operation first.
            unsafe {
                ffi::MPI_Ialltoallw(
                    s,
                    sc,
                    sd,
                    st,
                    d,
                    rc,
                    rd,
                    rt,
                    self.raw,
                    r.expect("nonblocking"),
                )
            }
        })
    }

    /// Starts a gatherv (`MPI_Igatherv`, §6.12.3).
    ///
    /// # Errors
    /// As [`Communicator::gatherv`].
    pub fn igatherv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "igatherv";
        if self.is_root(root, OP)? {
            blocks.check(self.size, recv.len(), OP)?;
        }
        self.agree(OP, || Ok(blocks.signature(root)))?;
        if blocks.is_large() {
            blocks.check(self.size, blocks.extent(), OP)?;
            same_len(blocks.len_of(self.rank_usize()), send.len(), OP)?;
            let own = Block::whole::<T>(send.len());
            let (f, s, d) = (VMove::Gatherv { root }, send_ptr(send), recv_ptr(recv));
            let (to, from) = ((s, |_| own), (d, |i| blocks.block(i)));
            return self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP);
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| {
            // SAFETY: buffers and partition borrowed for 's; the scope completes the operation.
            unsafe {
                ffi::MPI_Igatherv(
                    s,
                    sn,
                    dt,
                    d,
                    bc,
                    bd,
                    dt,
                    root,
                    self.raw,
                    r.expect("nonblocking"),
                )
            }
        })
    }

    /// Starts a scatterv (`MPI_Iscatterv`, §6.12.4).
    ///
    /// # Errors
    /// As [`Communicator::scatterv`].
    pub fn iscatterv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "iscatterv";
        if self.is_root(root, OP)? {
            blocks.check_send(self.size, send.len(), OP)?;
        }
        self.agree(OP, || Ok(blocks.signature(root)))?;
        if blocks.is_large() {
            blocks.check_send(self.size, blocks.extent(), OP)?;
            same_len(blocks.len_of(self.rank_usize()), recv.len(), OP)?;
            let own = Block::whole::<T>(recv.len());
            let (f, s, d) = (VMove::Scatterv { root }, send_ptr(send), recv_ptr(recv));
            let (to, from) = ((s, |j| blocks.block(j)), (d, |_| own));
            return self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP);
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let dn = self.own_block(blocks, recv.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| {
            // SAFETY: buffers and partition borrowed for 's; the scope completes the operation.
            unsafe {
                ffi::MPI_Iscatterv(
                    s,
                    bc,
                    bd,
                    dt,
                    d,
                    dn,
                    dt,
                    root,
                    self.raw,
                    r.expect("nonblocking"),
                )
            }
        })
    }

    /// Starts a reduce-scatter (`MPI_Ireduce_scatter`, §6.12.10).
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter`]. A block over `i32::MAX` elements takes a path that
    /// needs a temporary as large as `send` (see `comm::large`).
    pub fn ireduce_scatter<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        blocks: &'s Partition<T>,
        op: O,
    ) -> Result<Request<'s>> {
        const OP: &str = "ireduce_scatter";
        let operand = self.reduce_scatter_args(send.len(), recv.len(), blocks, op.operand(), OP)?;
        self.agree(OP, || Ok(blocks.signature(-1)))?;
        if blocks.is_large() {
            return self.ireduce_scatter_big(scope, send, recv, blocks, operand);
        }
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        let (counts, _) = blocks.int_arrays(OP)?;
        self.nonblocking(scope, OP, Repair::for_slice(recv), |r| {
            // SAFETY: buffers, partition and op borrowed for 's; the scope completes it first.
            unsafe {
                ffi::MPI_Ireduce_scatter(
                    s,
                    d,
                    counts,
                    operand.datatype,
                    operand.op,
                    self.raw,
                    r.expect("nonblocking"),
                )
            }
        })
    }

    /// [`Communicator::ireduce_scatter`] with a block over `int`: an in-place `iallreduce` of a
    /// copy of the input that the scope keeps; this rank's block is copied into `recv` when the
    /// operation completes. No MPI has a usable nonblocking form (see `comm::large`); this
    /// costs a temporary as large as the input until the scope ends.
    #[cold]
    fn ireduce_scatter_big<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        blocks: &Partition<T>,
        operand: Operand,
    ) -> Result<Request<'s>> {
        const OP: &str = "ireduce_scatter";
        let (count, operand) = reduction(send.len(), operand, OP)?;
        let from = blocks.offset_of(self.rank_usize());
        // In place on a copy: MPICH 4.0.2's large iallreduce is three times faster in place.
        let (d, repair) = super::large::copy_out_on_completion(scope, send, from, recv)?;
        let s = in_place().cast_const();
        self.start_large(scope, Some(repair), OP, |(r, _)| {
            // SAFETY: the temporary the scope keeps holds `count` elements (a copy of `send`);
            // the scope completes the operation before it is freed.
            let code = unsafe { self.raw_allreduce(ReduceFn::All, s, d, count, operand, Some(r)) };
            check(code, OP)
        })
    }
}

/// The reductions that share `MPI_Allreduce`'s argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReduceFn {
    All,
    Scan,
    Exscan,
    ScatterBlock,
}

impl ReduceFn {
    pub(super) fn name(self, nonblocking: bool) -> &'static str {
        match (self, nonblocking) {
            (ReduceFn::All, false) => "allreduce",
            (ReduceFn::All, true) => "iallreduce",
            (ReduceFn::Scan, false) => "scan",
            (ReduceFn::Scan, true) => "iscan",
            (ReduceFn::Exscan, false) => "exscan",
            (ReduceFn::Exscan, true) => "iexscan",
            (ReduceFn::ScatterBlock, false) => "reduce_scatter_block",
            (ReduceFn::ScatterBlock, true) => "ireduce_scatter_block",
        }
    }

    /// How many result-sized blocks the input has.
    pub(super) fn input_factor(self, size: usize) -> usize {
        if self == ReduceFn::ScatterBlock {
            size
        } else {
            1
        }
    }
}

/// The data-movement collectives that share `MPI_Gather`'s argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MoveFn {
    Gather,
    Scatter,
    Allgather,
    Alltoall,
}

impl MoveFn {
    pub(super) fn name(self, nonblocking: bool) -> &'static str {
        match (self, nonblocking) {
            (MoveFn::Gather, false) => "gather",
            (MoveFn::Gather, true) => "igather",
            (MoveFn::Scatter, false) => "scatter",
            (MoveFn::Scatter, true) => "iscatter",
            (MoveFn::Allgather, false) => "allgather",
            (MoveFn::Allgather, true) => "iallgather",
            (MoveFn::Alltoall, false) => "alltoall",
            (MoveFn::Alltoall, true) => "ialltoall",
        }
    }
}
