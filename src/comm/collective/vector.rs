//! The gathers and scatters with per-rank blocks from a [`Partition`]: `gatherv`, `scatterv`,
//! `allgatherv`, blocking, in place and nonblocking (MPI-4.0 §6.5–§6.7), with the large-count
//! paths the blocking v-collectives share; the all-to-all ones and `reduce_scatter` are in
//! [`alltoallv`](super::alltoallv).

use super::{Issue, same_len};
use crate::comm::Communicator;
use crate::comm::large::VMove;
use crate::comm::partition::{Block, Partition};
use crate::datatype::{Equivalence, count_of, recv_ptr, repair, send_ptr};
use crate::env::enter_with;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::request::{Kind, RawRequest, Repair, Request, Scope};
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
    #[inline(always)]
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
    ///
    /// # Safety
    /// The send blocks lie within the buffer at `s` (unless this rank sends nothing, or `s` is
    /// `MPI_IN_PLACE`, or `in_place` says this rank's block of `out` is what it sends), which is
    /// valid for the call; the receive blocks lie within `out` (where this rank receives) and
    /// overlap neither each other nor a send block.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::comm) unsafe fn vmove_big<T: Equivalence>(
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
            let _gate = self.enter(operation)?;
            // SAFETY: per the caller's contract; `out` is borrowed for the call.
            unsafe { self.vmove_blocks(f, in_place, s, send, d, recv, None, operation) }
        };
        repair(out);
        result
    }

    /// A nonblocking v-collective (or a broadcast, see `ibcast`) whose blocks or offsets do
    /// not fit `int`: `MPI_Ialltoallw`, its arrays kept in `scope` (see `comm::large`).
    ///
    /// `repair` is the received buffer's.
    ///
    /// # Safety
    /// The blocks lie within the buffers at `s` and `d` (where this rank sends or receives),
    /// which stay valid and unaliased for 's; the receive blocks overlap neither each other nor
    /// a send block.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::comm) unsafe fn ivmove_big<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: VMove,
        (s, send): (*const c_void, impl Fn(usize) -> Block),
        (d, recv): (*mut c_void, impl Fn(usize) -> Block),
        repair: Option<Repair>,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.start_large(scope, repair, operation, |start| {
            // SAFETY: per the caller's contract; the scope completes the operation before 's
            // ends.
            unsafe { self.vmove_blocks(f, false, s, send, d, recv, Some(start), operation) }
        })
    }

    /// Starts a nonblocking large-count collective in `scope`: `start` gets the request handle
    /// and the scope (which keeps what MPI reads until completion), under the thread gate.
    #[cold]
    pub(in crate::comm) fn start_large<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        repair: Option<Repair>,
        operation: &'static str,
        start: impl FnOnce((&mut ffi::MPI_Request, &Scope<'_, '_>)) -> Result<()>,
    ) -> Result<Request<'s>> {
        let mut raw = ffi::MPI_REQUEST_NULL;
        {
            let _gate = enter_with(scope.in_flight.pass, operation)?;
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
    /// [`ErrorKind::InvalidArgument`] (partition size), [`ErrorKind::BufferSize`],
    /// [`ErrorKind::InvalidRank`] before any communication; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    #[inline(always)]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.vmove_big(f, false, s, |_| own, recv, |i| blocks.block(i), OP) };
        }
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
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
            },
        )
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
    #[inline(always)]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.vmove_big(f, false, s, |j| blocks.block(j), recv, |_| own, OP) };
        }
        let dn = self.own_block(blocks, recv.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
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
            },
        )
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
    #[inline(always)]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.vmove_big(f, false, s, |_| own, recv, |i| blocks.block(i), OP) };
        }
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.blocking(
            OP,
            recv,
            #[inline(always)]
            |_| {
                // SAFETY: this rank's block fits `send`, the partition fits `recv`.
                unsafe {
                    ffi::MPI_Allgatherv(
                        s,
                        sn,
                        dt,
                        d,
                        blocks.counts(),
                        blocks.displs(),
                        dt,
                        self.raw,
                    )
                }
            },
        )
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
    #[inline(always)]
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
    #[inline(always)]
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
    #[inline(always)]
    pub fn scatterv_in_place<T: Equivalence>(
        &self,
        buf: &mut [T],
        blocks: &Partition<T>,
        root: i32,
    ) -> Result<()> {
        self.scatterv_in_place_on(Issue::Blocking, buf, blocks, root)
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
    #[inline]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP) };
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| {
                // SAFETY: buffers and partition borrowed for 's; the scope completes the operation.
                unsafe {
                    ffi::MPI_Iallgatherv(
                        s,
                        sn,
                        dt,
                        d,
                        bc,
                        bd,
                        dt,
                        self.raw,
                        r.expect("nonblocking"),
                    )
                }
            },
        )
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
    #[inline]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP) };
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let sn = self.own_block(blocks, send.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| {
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
            },
        )
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
    #[inline]
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
            // SAFETY: the blocks were checked against the buffers above.
            return unsafe { self.ivmove_big(scope, f, to, from, Repair::for_slice(recv), OP) };
        }
        let (bc, bd) = blocks.int_arrays(OP)?;
        let dn = self.own_block(blocks, recv.len(), OP)?;
        let (s, d, dt) = (send_ptr(send), recv_ptr(recv), T::datatype().as_raw());
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| {
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
            },
        )
    }
}
