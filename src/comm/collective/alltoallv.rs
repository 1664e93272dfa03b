//! The all-to-all collectives with per-rank blocks, `alltoallv` and `alltoallw`, and
//! `reduce_scatter` with per-rank blocks: blocking, in place and nonblocking (MPI-4.0 §6.8,
//! §6.10.1). The gathers and scatters with per-rank blocks are in [`vector`](super::vector).

use super::{Issue, reduction};
use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::ReduceFn;
use crate::comm::large::VMove;
use crate::comm::partition::{Partition, TypedPartition};
use crate::datatype::{Equivalence, recv_ptr, repair, send_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::op::{Op, Operand};
use crate::request::{Repair, Request, Scope};

/// Collectives: `alltoallv`, `alltoallw` and `reduce_scatter` with per-rank blocks, blocking,
/// in place and nonblocking (MPI-4.0 §6.8, §6.10.1).
impl<'env> Communicator<'env> {
    /// [`alltoallv`](Communicator::alltoallv) in place: `buf`, laid out by `blocks`, holds
    /// block `j` for rank `j` and receives block `i` from rank `i` in the same place; block
    /// lengths must match pairwise across ranks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let size = world.size() as usize;
    /// let blocks = Partition::<i32>::uniform(size, 2)?; // two values to and from every rank
    /// let mut buf = vec![world.rank(); 2 * size];
    /// world.alltoallv_in_place(&mut buf, &blocks)?;
    /// assert_eq!(buf[0], 0); // what rank 0 sent here
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallv`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Partition, op::Sum};
    /// let size = world.size() as usize;
    /// let blocks = Partition::<u64>::uniform(size, 1)?;
    /// let mut buf = vec![1u64; size]; // the result for this rank is left at its start
    /// world.reduce_scatter_in_place(&mut buf, &blocks, Sum)?;
    /// assert_eq!(buf[0], size as u64);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter`].
    #[inline(always)]
    pub fn reduce_scatter_in_place<T: Equivalence, O: Op<T>>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
        op: O,
    ) -> Result<()> {
        self.reduce_scatter_in_place_on(Issue::Blocking, buf, blocks, op)
            .map(drop)
    }

    /// Rank `i` sends block `j` of `send` (per `send_blocks`) to rank `j`, which stores it as
    /// block `i` of `recv` (per `recv_blocks`) (`MPI_Alltoallv`, §6.8).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank(), world.size() as usize);
    /// // One value to and one from every rank.
    /// let send_blocks = Partition::<i32>::uniform(size, 1)?;
    /// let recv_blocks = Partition::<i32>::uniform(size, 1)?;
    /// let mut recv = vec![0i32; size];
    /// world.alltoallv(&vec![rank; size], &send_blocks, &mut recv, &recv_blocks)?;
    /// assert_eq!(recv, (0..size as i32).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] (partition size), [`ErrorKind::BufferSize`] before any
    /// communication; [`ErrorKind::CountOverflow`] for a block or offset over `i32::MAX` on an MPI
    /// without MPI-4's `_c` calls ([`LARGE_COUNT_CALLS`](crate::LARGE_COUNT_CALLS); use
    /// [`alltoallw`](Communicator::alltoallw) there); [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`] (e.g. class `Truncate` when a peer sends more than a block holds).
    #[inline(always)]
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
            let result = self.enter(OP).and_then(
                #[inline(always)]
                |_gate| {
                    // SAFETY: both partitions fit their buffers, borrowed for the call.
                    unsafe { self.alltoallv_large(s, Some(send_blocks), d, recv_blocks, None) }
                },
            );
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
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
                // SAFETY: both partitions fit their buffers, borrowed for the call.
                unsafe { ffi::MPI_Alltoallv(s, sc, sd, dt, d, rc, rd, dt, self.raw) }
            },
        )
    }

    /// Starts an alltoallv (`MPI_Ialltoallv`, §6.12.6).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let size = world.size() as usize;
    /// let blocks = Partition::<u8>::uniform(size, 3)?;
    /// let send = vec![world.rank() as u8; 3 * size];
    /// let mut recv = vec![0u8; 3 * size];
    /// ferrompi::scope(|s| world.ialltoallv(s, &send, &blocks, &mut recv, &blocks)?.wait().map(drop))?;
    /// assert_eq!(recv[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallv`].
    #[inline]
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
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| {
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
            },
        )
    }

    /// All-to-all with a datatype per block (`MPI_Alltoallw`, §6.8): block `j` of `send`, as
    /// `send_blocks` describes it, goes to rank `j`, which stores it as block `i` of `recv`.
    /// Buffers are bytes (use `bytemuck` to view typed data); offsets are in bytes.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// // To every rank one i32 and back one i32, each block its own type and byte offset.
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<i32>(1, 4 * r)).collect::<Vec<_>>())?;
    /// let send: Vec<u8> = (0..size).flat_map(|_| world.rank().to_ne_bytes()).collect();
    /// let mut recv = vec![0u8; 4 * size];
    /// world.alltoallw(&send, &blocks, &mut recv, &blocks)?;
    /// assert_eq!(i32::from_ne_bytes(recv[..4].try_into().unwrap()), 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] (partition size), [`ErrorKind::BufferSize`] before any
    /// communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.vmove_big(f, false, s, send_block, recv, recv_block, OP) };
        }
        let ((sc, sd, st), (rc, rd, rt)) = (send_blocks.raw(OP)?, recv_blocks.raw(OP)?);
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
                // SAFETY: both partitions fit their buffers (checked), borrowed for the call.
                unsafe { ffi::MPI_Alltoallw(s, sc, sd, st, d, rc, rd, rt, self.raw) }
            },
        )
    }

    /// [`alltoallw`](Communicator::alltoallw) in place: `buf`, laid out by `blocks`, holds what
    /// goes to each rank and receives what comes from it in the same place.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<f64>(1, 8 * r)).collect::<Vec<_>>())?;
    /// let mut buf: Vec<u8> = (0..size).flat_map(|_| f64::from(world.rank()).to_ne_bytes()).collect();
    /// world.alltoallw_in_place(&mut buf, &blocks)?;
    /// assert_eq!(f64::from_ne_bytes(buf[..8].try_into().unwrap()), 0.0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallw`].
    pub fn alltoallw_in_place(&self, buf: &mut [u8], blocks: &TypedPartition) -> Result<()> {
        self.alltoallw_in_place_on(Issue::Blocking, buf, blocks)
            .map(drop)
    }

    /// Starts an all-to-all with a datatype per block (`MPI_Ialltoallw`, §6.12.6).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<u16>(1, 2 * r)).collect::<Vec<_>>())?;
    /// let send = vec![1u8; 2 * size];
    /// let mut recv = vec![0u8; 2 * size];
    /// ferrompi::scope(|s| world.ialltoallw(s, &send, &blocks, &mut recv, &blocks)?.wait().map(drop))?;
    /// assert_eq!(recv, send);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallw`].
    #[inline]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.ivmove_big(scope, VMove::Alltoallw, to, from, None, OP) };
        }
        let ((sc, sd, st), (rc, rd, rt)) = (send_blocks.raw(OP)?, recv_blocks.raw(OP)?);
        self.nonblocking(
            scope,
            OP,
            None,
            #[inline(always)]
            |r| {
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
            },
        )
    }

    /// Starts a reduce-scatter (`MPI_Ireduce_scatter`, §6.12.10).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Partition, op::Sum};
    /// let size = world.size() as usize;
    /// let blocks = Partition::<u32>::uniform(size, 2)?;
    /// let send = vec![1u32; 2 * size];
    /// let mut mine = [0u32; 2];
    /// ferrompi::scope(|s| world.ireduce_scatter(s, &send, &mut mine, &blocks, Sum)?.wait().map(drop))?;
    /// assert_eq!(mine, [size as u32; 2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter`]. A block over `i32::MAX` elements takes a path that
    /// needs a temporary as large as `send` (see `comm::large`).
    #[inline]
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
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| {
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
            },
        )
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
        let (d, repair) = crate::comm::large::copy_out_on_completion(scope, send, from, recv)?;
        let s = ffi::MPI_IN_PLACE.cast_const();
        self.start_large(scope, Some(repair), OP, |(r, _)| {
            // SAFETY: the temporary the scope keeps holds `count` elements (a copy of `send`);
            // the scope completes the operation before it is freed.
            let code = unsafe { self.raw_allreduce(ReduceFn::All, s, d, count, operand, Some(r)) };
            check(code, OP)
        })
    }
}
