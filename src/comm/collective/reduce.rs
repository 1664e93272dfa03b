//! The reductions with one block per rank: `reduce`, `allreduce`, `scan`, `exscan` and
//! `reduce_scatter_block`, blocking, in place and nonblocking (MPI-4.0 §6.9–§6.11).

use super::{Issue, reduction, same_len, same_product, started};
use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::{ReduceFn, Req};
use crate::comm::large::Reduction;
use crate::comm::partition::Partition;
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
use crate::error::{ErrorKind, Result};
use crate::ffi;
use crate::op::{Op, Operand};
use crate::request::{Repair, Request, Scope};
use std::ffi::{c_int, c_void};

/// Collectives: the reductions, `reduce`, `allreduce`, `scan`, `exscan`,
/// `reduce_scatter_block`, blocking, in place and nonblocking (MPI-4.0 §6.9–§6.12).
///
/// ```
/// use ferrompi::op::Sum;
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let n = f64::from(world.size());
/// let mut total = [0.0; 2];
/// world.allreduce(&[1.0, 2.0], &mut total, Sum)?;
/// assert_eq!(total, [n, 2.0 * n]);
/// let mut prefix = [1u64];
/// world.scan_in_place(&mut prefix, Sum)?; // rank r holds r + 1
/// assert_eq!(prefix[0], world.rank() as u64 + 1);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// # Safety
    /// Buffers as MPI requires for `count` elements, valid until completion.
    #[inline(always)]
    pub(in crate::comm) unsafe fn raw_reduce(
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = [0u64; 2];
    /// world.reduce(&[1, 2], &mut total, Sum, 0)?; // `total` is written at rank 0 only
    /// if world.rank() == 0 {
    ///     let n = world.size() as u64;
    ///     assert_eq!(total, [n, 2 * n]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before
    /// any communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
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
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |r| unsafe { self.raw_reduce(s, d, count, operand, root, r) },
        )
    }

    /// [`reduce`](Communicator::reduce) with `MPI_IN_PLACE`: at the root `buf` is input and
    /// result, elsewhere it is only input.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Max;
    /// let mut best = [world.rank()];
    /// world.reduce_in_place(&mut best, Max, 0)?; // the root's buffer is input and result
    /// if world.rank() == 0 {
    ///     assert_eq!(best[0], world.size() - 1);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce`].
    #[inline(always)]
    pub fn reduce_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        op: O,
        root: i32,
    ) -> Result<()> {
        self.reduce_in_place_on(Issue::Blocking, buf, op, root)
            .map(drop)
    }

    /// Starts a reduction (`MPI_Ireduce`, §6.12.7).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = [0i64];
    /// ferrompi::scope(|s| {
    ///     let request = world.ireduce(s, &[1i64], &mut total, Sum, 0)?;
    ///     request.wait()?;
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce`].
    #[inline(always)]
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
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| unsafe { self.raw_reduce(s, d, count, operand, root, r) },
        )
    }

    /// # Safety
    /// Buffers as MPI requires for `count` elements, valid until completion.
    #[inline(always)]
    pub(in crate::comm) unsafe fn raw_allreduce(
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

    #[inline(always)]
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
        self.blocking(
            operation,
            recv,
            #[inline(always)]
            |r| unsafe { self.raw_allreduce(f, s, d, count, operand, r) },
        )
    }

    #[inline(always)]
    fn reduce_like_in_place<T: Equivalence, O: Op<T>>(
        &self,
        f: ReduceFn,
        buf: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like_in_place_on(Issue::Blocking, f, buf, op)
            .map(drop)
    }

    #[inline(always)]
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
        self.nonblocking(
            scope,
            operation,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| unsafe { self.raw_allreduce(f, s, d, count, operand, r) },
        )
    }

    pub(in crate::comm) fn ireduce_like_in_place<'s, T: Equivalence, O: Op<T> + 's>(
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = [0.0f64];
    /// world.allreduce(&[0.5], &mut total, Sum)?;
    /// assert_eq!(total[0], 0.5 * f64::from(world.size()));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Min;
    /// let mut lowest = [world.rank()];
    /// world.allreduce_in_place(&mut lowest, Min)?;
    /// assert_eq!(lowest[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline]
    pub fn allreduce_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::All, buf, op)
    }

    /// Starts an allreduce (`MPI_Iallreduce`, §6.12.8).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = [0u32];
    /// ferrompi::scope(|s| {
    ///     let request = world.iallreduce(s, &[1u32], &mut total, Sum)?;
    ///     // … overlap work that does not touch the buffers …
    ///     request.wait()?;
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// assert_eq!(total[0], world.size() as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut counts = [1u32, 2];
    /// ferrompi::scope(|s| world.iallreduce_in_place(s, &mut counts, Sum)?.wait().map(drop))?;
    /// assert_eq!(counts, [world.size() as u32, 2 * world.size() as u32]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut upto = [0u32];
    /// world.scan(&[1], &mut upto, Sum)?; // rank r gets r + 1
    /// assert_eq!(upto[0], world.rank() as u32 + 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    pub fn scan<T: Equivalence, O: Op<T>>(&self, send: &[T], recv: &mut [T], op: O) -> Result<()> {
        self.reduce_like(ReduceFn::Scan, send, recv, op)
    }

    /// [`scan`](Communicator::scan) with `MPI_IN_PLACE`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut offset = [10u64];
    /// world.scan_in_place(&mut offset, Sum)?;
    /// assert_eq!(offset[0], 10 * (world.rank() as u64 + 1));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
    pub fn scan_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::Scan, buf, op)
    }

    /// Starts an inclusive scan (`MPI_Iscan`, §6.12.11).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut upto = [0u32];
    /// ferrompi::scope(|s| world.iscan(s, &[1], &mut upto, Sum)?.wait().map(drop))?;
    /// assert_eq!(upto[0], world.rank() as u32 + 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// // Where each rank's 3 values start in a global array: the sum over the ranks before it.
    /// let mut start = [0usize];
    /// world.exscan(&[3usize], &mut start, Sum)?; // rank 0's result is undefined: not written
    /// let start = if world.rank() == 0 { 0 } else { start[0] };
    /// assert_eq!(start, 3 * world.rank() as usize);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut start = [3usize];
    /// world.exscan_in_place(&mut start, Sum)?; // rank 0 keeps its input
    /// if world.rank() > 0 {
    ///     assert_eq!(start[0], 3 * world.rank() as usize);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
    pub fn exscan_in_place<T: Equivalence, O: Op<T>>(&self, buf: &mut [T], op: O) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::Exscan, buf, op)
    }

    /// Starts an exclusive scan (`MPI_Iexscan`, §6.12.12).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut before = [0u32];
    /// ferrompi::scope(|s| world.iexscan(s, &[1], &mut before, Sum)?.wait().map(drop))?;
    /// if world.rank() > 0 {
    ///     assert_eq!(before[0], world.rank() as u32);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let n = world.size() as usize;
    /// let mut mine = [0u32; 2];
    /// world.reduce_scatter_block(&vec![1u32; 2 * n], &mut mine, Sum)?; // block r of the sum to rank r
    /// assert_eq!(mine, [n as u32; 2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`] unless `send.len() == recv.len() * size`; as
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let n = world.size() as usize;
    /// let mut buf = vec![1u32; n]; // one value per rank; rank r's result lands in buf[0]
    /// world.reduce_scatter_block_in_place(&mut buf, Sum)?;
    /// assert_eq!(buf[0], n as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `buf` does not divide among the ranks; as
    /// [`Communicator::allreduce`].
    #[inline(always)]
    pub fn reduce_scatter_block_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        op: O,
    ) -> Result<()> {
        self.reduce_like_in_place(ReduceFn::ScatterBlock, buf, op)
    }

    /// Starts a reduce-scatter with equal blocks (`MPI_Ireduce_scatter_block`, §6.12.9).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let n = world.size() as usize;
    /// let send = vec![2u32; n];
    /// let mut mine = [0u32];
    /// ferrompi::scope(|s| world.ireduce_scatter_block(s, &send, &mut mine, Sum)?.wait().map(drop))?;
    /// assert_eq!(mine[0], 2 * n as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter_block`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Partition, op::Sum};
    /// let n = world.size() as usize;
    /// let blocks = Partition::<u32>::uniform(n, 1)?; // one value to each rank
    /// let mut mine = [0u32];
    /// world.reduce_scatter(&vec![1u32; n], &mut mine, &blocks, Sum)?;
    /// assert_eq!(mine[0], n as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a partition that is not packed or not of this size;
    /// [`ErrorKind::BufferSize`]; as [`Communicator::allreduce`].
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
            return self.blocking(
                OP,
                recv,
                #[inline(always)]
                |_| unsafe { self.reduce_scatter_large(s, d, blocks, operand) },
            );
        }
        let (counts, _) = blocks.int_arrays(OP)?;
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
                // SAFETY: buffers checked against the packed partition, borrowed for the call.
                unsafe {
                    ffi::MPI_Reduce_scatter(s, d, counts, operand.datatype, operand.op, self.raw)
                }
            },
        )
    }

    #[inline(always)]
    pub(in crate::comm) fn reduce_scatter_args<T: Equivalence>(
        &self,
        send_len: usize,
        recv_len: usize,
        blocks: &Partition<T>,
        operand: Operand,
        operation: &'static str,
    ) -> Result<Operand> {
        blocks.check(self.size, send_len, operation)?;
        if !blocks.is_packed() {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: "reduce_scatter needs a packed partition".into(),
            }
            .into());
        }
        same_len(blocks.extent(), send_len, operation)?;
        same_len(blocks.len_of(self.rank_usize()), recv_len, operation)?;
        if operand.per_value != T::ELEMENTS {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: "reduce_scatter takes predefined operations (use reduce_scatter_block with user ops)".into(),
            }.into());
        }
        Ok(operand)
    }

    pub(in crate::comm) fn rank_usize(&self) -> usize {
        usize::try_from(self.rank).unwrap_or(0)
    }
}
