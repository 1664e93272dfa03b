//! The collectives with per-rank blocks from a [`Partition`]: `gatherv`, `scatterv`,
//! `allgatherv`, `alltoallv`, `alltoallw` and `reduce_scatter`, blocking, in place and
//! nonblocking (MPI-4.0 §6.5–§6.8, §6.10.1), with the large-count paths of the blocking forms.

use super::{Issue, reduction, same_len};
use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::{ReduceFn, in_place};
use crate::comm::large::VMove;
use crate::comm::partition::{Block, Partition, TypedPartition};
use crate::datatype::{Equivalence, count_of, recv_ptr, repair, send_ptr};
use crate::env::enter;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check};
use crate::ffi;
use crate::op::{Op, Operand};
use crate::request::{Kind, RawRequest, Repair, Request, Scope, request_null};
use std::ffi::{c_int, c_void};

/// Collectives with per-rank blocks from a [`Partition`]: `gatherv`,
/// `scatterv`, `allgatherv`, `alltoallv`, `alltoallw`, `reduce_scatter` (MPI-4.0 §6.5–§6.8,
/// §6.10).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::Partition;
/// let world = mpi.world();
/// let (rank, size) = (world.rank() as usize, world.size() as usize);
/// // Rank r contributes r + 1 values; every rank passes the same partition.
/// let blocks = Partition::<u64>::from_counts(&(1..=size).collect::<Vec<_>>())?;
/// let mine = vec![rank as u64; rank + 1];
/// let mut all = vec![0u64; size * (size + 1) / 2];
/// world.allgatherv(&mine, &mut all, &blocks)?;
/// assert_eq!(all[0], 0);
/// assert_eq!(*all.last().unwrap(), size as u64 - 1);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Checks `own` (this rank's block length) and the partition, returning `own`'s count.
    pub(in crate::comm) fn own_block<T: Equivalence>(
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
    pub(in crate::comm) fn vmove_big<T: Equivalence>(
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
    pub(in crate::comm) fn ivmove_big<'s>(
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mine = vec![rank as u32; rank + 1];
    /// let mut all = vec![0u32; if rank == 0 { total } else { 0 }];
    /// world.gatherv(&mine, &mut all, &blocks, 0)?;
    /// if rank == 0 {
    ///     assert_eq!(all.last(), Some(&(size as u32 - 1)));
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let all: Vec<u32> = if rank == 0 { (0..total as u32).collect() } else { Vec::new() };
    /// let mut mine = vec![0u32; rank + 1];
    /// world.scatterv(&all, &mut mine, &blocks, 0)?;
    /// assert_eq!(mine[0] as usize, rank * (rank + 1) / 2); // where block `rank` starts
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut all = vec![0u32; total];
    /// world.allgatherv(&vec![rank as u32; rank + 1], &mut all, &blocks)?;
    /// assert_eq!(all[total - 1], size as u32 - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut all = vec![0u32; total];
    /// let (at, len) = (rank * (rank + 1) / 2, rank + 1);
    /// all[at..at + len].fill(rank as u32); // each rank fills its own block
    /// world.allgatherv_in_place(&mut all, &blocks)?;
    /// assert_eq!(all[total - 1], size as u32 - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// // The root's buffer holds every block (its own already placed); elsewhere the rank's block.
    /// let mut buf = if rank == 0 { vec![0u32; total] } else { vec![rank as u32; rank + 1] };
    /// world.gatherv_in_place(&mut buf, &blocks, 0)?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut buf = if rank == 0 { (0..total as u32).collect() } else { vec![0u32; rank + 1] };
    /// world.scatterv_in_place(&mut buf, &blocks, 0)?; // the root's own block stays where it is
    /// assert_eq!(buf[0] as usize, if rank == 0 { 0 } else { rank * (rank + 1) / 2 });
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mine = vec![rank as u32; rank + 1];
    /// let mut all = vec![0u32; total];
    /// ferrompi::scope(|s| world.iallgatherv(s, &mine, &mut all, &blocks)?.wait().map(drop))?;
    /// assert_eq!(all[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mine = vec![1u32; rank + 1];
    /// let mut all = vec![0u32; if rank == 0 { total } else { 0 }];
    /// ferrompi::scope(|s| world.igatherv(s, &mine, &mut all, &blocks, 0)?.wait().map(drop))?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let all = vec![5u32; if rank == 0 { total } else { 0 }];
    /// let mut mine = vec![0u32; rank + 1];
    /// ferrompi::scope(|s| world.iscatterv(s, &all, &mut mine, &blocks, 0)?.wait().map(drop))?;
    /// assert!(mine.iter().all(|&v| v == 5));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        let (d, repair) = crate::comm::large::copy_out_on_completion(scope, send, from, recv)?;
        let s = in_place().cast_const();
        self.start_large(scope, Some(repair), OP, |(r, _)| {
            // SAFETY: the temporary the scope keeps holds `count` elements (a copy of `send`);
            // the scope completes the operation before it is freed.
            let code = unsafe { self.raw_allreduce(ReduceFn::All, s, d, count, operand, Some(r)) };
            check(code, OP)
        })
    }
}
