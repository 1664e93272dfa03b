//! The data movements with equal blocks: `gather`, `scatter`, `allgather` and `alltoall`,
//! blocking, in place and nonblocking (MPI-4.0 §6.5–§6.8).

use super::{Issue, move_signature, same_len, same_product};
use crate::comm::Communicator;
use crate::comm::call::{MoveFn, Req};
use crate::comm::large::large_count;
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::request::{Repair, Request, Scope};
use std::ffi::{c_int, c_void};

/// Collectives: `gather`, `scatter`, `allgather`, `alltoall` with equal blocks, blocking, in
/// place and nonblocking (MPI-4.0 §6.5–§6.8, §6.12).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let (rank, size) = (world.rank(), world.size() as usize);
/// let mut all = vec![0i32; size];
/// world.allgather(&[rank], &mut all)?; // every rank's rank, in rank order
/// assert_eq!(all, (0..size as i32).collect::<Vec<_>>());
/// let mut at_root = vec![0i32; if rank == 0 { size } else { 0 }];
/// world.gather(&[rank * 10], &mut at_root, 0)?;
/// let mut mine = [0i32];
/// world.scatter(&at_root, &mut mine, 0)?; // the root hands each rank its block back
/// assert_eq!(mine[0], rank * 10);
/// let mut swapped = vec![0i32; size];
/// world.alltoall(&vec![rank; size], &mut swapped)?; // block r goes to rank r
/// assert_eq!(swapped, (0..size as i32).collect::<Vec<_>>());
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// # Safety
    /// Buffers as MPI requires, valid until completion.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::comm) unsafe fn raw_move(
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
        // SAFETY: per the contract.
        unsafe { self.raw_move_typed(f, (s, sn, dt), (d, dn, dt), root, r) }
    }

    /// `MPI_Gather`, `MPI_Igather`, ... (per `f` and `r`) with a datatype on each side.
    ///
    /// # Safety
    /// Each side's address holds what its count and datatype reach, `size` blocks of it for
    /// the side that holds every rank's, valid for the operation.
    #[inline(always)]
    pub(in crate::comm) unsafe fn raw_move_typed(
        &self,
        f: MoveFn,
        (s, sn, st): (*const c_void, c_int, ffi::MPI_Datatype),
        (d, dn, dt): (*mut c_void, c_int, ffi::MPI_Datatype),
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        let c = self.raw;
        // SAFETY: per the contract.
        unsafe {
            match (f, r) {
                (MoveFn::Gather, None) => ffi::MPI_Gather(s, sn, st, d, dn, dt, root, c),
                (MoveFn::Gather, Some(r)) => ffi::MPI_Igather(s, sn, st, d, dn, dt, root, c, r),
                (MoveFn::Scatter, None) => ffi::MPI_Scatter(s, sn, st, d, dn, dt, root, c),
                (MoveFn::Scatter, Some(r)) => ffi::MPI_Iscatter(s, sn, st, d, dn, dt, root, c, r),
                (MoveFn::Allgather, None) => ffi::MPI_Allgather(s, sn, st, d, dn, dt, c),
                (MoveFn::Allgather, Some(r)) => ffi::MPI_Iallgather(s, sn, st, d, dn, dt, c, r),
                (MoveFn::Alltoall, None) => ffi::MPI_Alltoall(s, sn, st, d, dn, dt, c),
                (MoveFn::Alltoall, Some(r)) => ffi::MPI_Ialltoall(s, sn, st, d, dn, dt, c, r),
            }
        }
    }

    /// Checks a gather/scatter/allgather/alltoall call; returns the per-rank counts.
    #[inline(always)]
    pub(crate) fn move_args<T: Equivalence>(
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

    #[inline(always)]
    pub(in crate::comm) fn move_blocking<T: Equivalence>(
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
        self.blocking(
            operation,
            recv,
            #[inline(always)]
            |r| unsafe { self.raw_move(f, s, sn, d, dn, dt, root, r) },
        )
    }

    #[inline(always)]
    pub(in crate::comm) fn move_nonblocking<'s, T: Equivalence>(
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
        self.nonblocking(
            scope,
            operation,
            Repair::for_slice(recv),
            #[inline(always)]
            |r| unsafe { self.raw_move(f, s, sn, d, dn, dt, root, r) },
        )
    }

    /// The in-place form of allgather and alltoall: `buf` holds one block per rank.
    #[inline(always)]
    fn move_all_in_place<T: Equivalence>(&self, f: MoveFn, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place_on(Issue::Blocking, f, buf).map(drop)
    }

    /// Collects `send` from every process at `root`, in rank order (`MPI_Gather`, §6.5). At the
    /// root `recv.len()` is `send.len() * size`; elsewhere `recv` is unused (pass `&mut []`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let mut all = vec![0i32; if world.rank() == 0 { n } else { 0 }]; // only the root receives
    /// world.gather(&[world.rank()], &mut all, 0)?;
    /// if world.rank() == 0 {
    ///     assert_eq!(all, (0..n as i32).collect::<Vec<_>>());
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before
    /// any communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn gather<T: Equivalence>(&self, send: &[T], recv: &mut [T], root: i32) -> Result<()> {
        self.move_blocking(MoveFn::Gather, send, recv, root)
    }

    /// [`gather`](Communicator::gather) in place: at the root `buf` is the whole result, with the
    /// root's own contribution already at its block; elsewhere `buf` is what is sent.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// // At the root the buffer holds every block, its own already in place; elsewhere one block.
    /// let mut buf = if world.rank() == 0 { vec![0i32; n] } else { vec![world.rank()] };
    /// world.gather_in_place(&mut buf, 0)?;
    /// if world.rank() == 0 {
    ///     assert_eq!(buf, (0..n as i32).collect::<Vec<_>>());
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the root's `buf` does not divide among the ranks; as
    /// [`Communicator::gather`].
    #[inline(always)]
    pub fn gather_in_place<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.gather_in_place_on(Issue::Blocking, buf, root)
            .map(drop)
    }

    /// Starts a gather (`MPI_Igather`, §6.12.3).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let mine = [world.rank()];
    /// let mut all = vec![0i32; if world.rank() == 0 { n } else { 0 }];
    /// ferrompi::scope(|s| world.igather(s, &mine, &mut all, 0)?.wait().map(drop))?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gather`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let work: Vec<u32> = if world.rank() == 0 { (0..n as u32).collect() } else { Vec::new() };
    /// let mut mine = [0u32];
    /// world.scatter(&work, &mut mine, 0)?; // block r to rank r
    /// assert_eq!(mine[0], world.rank() as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gather`].
    pub fn scatter<T: Equivalence>(&self, send: &[T], recv: &mut [T], root: i32) -> Result<()> {
        self.move_blocking(MoveFn::Scatter, send, recv, root)
    }

    /// [`scatter`](Communicator::scatter) in place: at the root `buf` is the whole input and its
    /// own block stays where it is; elsewhere `buf` receives.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// // The root keeps its own block where it is; the others receive theirs.
    /// let mut buf = if world.rank() == 0 { (0..n as u32).collect() } else { vec![0u32] };
    /// world.scatter_in_place(&mut buf, 0)?;
    /// assert_eq!(buf[0], world.rank() as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gather_in_place`].
    #[inline(always)]
    pub fn scatter_in_place<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.scatter_in_place_on(Issue::Blocking, buf, root)
            .map(drop)
    }

    /// Starts a scatter (`MPI_Iscatter`, §6.12.4).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let work = vec![7u8; if world.rank() == 0 { n } else { 0 }];
    /// let mut mine = [0u8];
    /// ferrompi::scope(|s| world.iscatter(s, &work, &mut mine, 0)?.wait().map(drop))?;
    /// assert_eq!(mine[0], 7);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::scatter`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut ranks = vec![0i32; world.size() as usize];
    /// world.allgather(&[world.rank()], &mut ranks)?;
    /// assert_eq!(ranks[world.rank() as usize], world.rank());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn allgather<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.move_blocking(MoveFn::Allgather, send, recv, 0)
    }

    /// [`allgather`](Communicator::allgather) in place: `buf` holds one block per rank, this
    /// rank's already filled.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut ranks = vec![0i32; world.size() as usize];
    /// ranks[world.rank() as usize] = world.rank(); // each rank fills its own slot
    /// world.allgather_in_place(&mut ranks)?;
    /// assert_eq!(ranks, (0..world.size()).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `buf` does not divide among the ranks; as
    /// [`Communicator::allgather`].
    #[inline(always)]
    pub fn allgather_in_place<T: Equivalence>(&self, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place(MoveFn::Allgather, buf)
    }

    /// Starts an allgather (`MPI_Iallgather`, §6.12.5).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mine = [world.rank()];
    /// let mut ranks = vec![0i32; world.size() as usize];
    /// ferrompi::scope(|s| world.iallgather(s, &mine, &mut ranks)?.wait().map(drop))?;
    /// assert_eq!(ranks, (0..world.size()).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allgather`].
    #[inline(always)]
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let to_each: Vec<i32> = (0..n as i32).map(|r| 100 * world.rank() + r).collect();
    /// let mut from_each = vec![0i32; n];
    /// world.alltoall(&to_each, &mut from_each)?; // block r goes to rank r
    /// assert_eq!(from_each[0], world.rank()); // what rank 0 sent here
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`], [`ErrorKind::InvalidArgument`] (not divisible),
    /// [`ErrorKind::CountOverflow`] before any communication; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn alltoall<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.move_blocking(MoveFn::Alltoall, send, recv, 0)
    }

    /// [`alltoall`](Communicator::alltoall) in place.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let mut buf: Vec<i32> = (0..n as i32).map(|r| 100 * world.rank() + r).collect();
    /// world.alltoall_in_place(&mut buf)?;
    /// assert_eq!(buf[0], world.rank());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoall`].
    #[inline(always)]
    pub fn alltoall_in_place<T: Equivalence>(&self, buf: &mut [T]) -> Result<()> {
        self.move_all_in_place(MoveFn::Alltoall, buf)
    }

    /// Starts an all-to-all (`MPI_Ialltoall`, §6.12.6).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size() as usize;
    /// let send = vec![world.rank(); n];
    /// let mut recv = vec![0i32; n];
    /// ferrompi::scope(|s| world.ialltoall(s, &send, &mut recv)?.wait().map(drop))?;
    /// assert_eq!(recv, (0..n as i32).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoall`].
    #[inline(always)]
    pub fn ialltoall<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        self.move_nonblocking(scope, MoveFn::Alltoall, send, recv, 0)
    }
}
