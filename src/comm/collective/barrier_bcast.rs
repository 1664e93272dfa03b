//! `barrier` and `bcast`, blocking and nonblocking (MPI-4.0 §6.3, §6.4, §6.12.1–§6.12.2).

use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::Req;
use crate::comm::large::{VMove, large_count};
use crate::comm::partition::Block;
use crate::datatype::{Equivalence, recv_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::request::{Repair, Request, Scope};
use std::ffi::{c_int, c_void};

/// Collectives: `barrier` and `bcast`, blocking and nonblocking (MPI-4.0 §6.3, §6.4, §6.12).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// world.barrier()?;
/// let mut table = [0u32; 3];
/// if world.rank() == 0 {
///     table = [1, 2, 3];
/// }
/// world.bcast(&mut table, 0)?;
/// assert_eq!(table, [1, 2, 3]);
/// ferrompi::scope(|s| {
///     let request = world.ibcast(s, &mut table, 0)?;
///     request.wait()?;
///     Ok::<_, ferrompi::Error>(())
/// })?;
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Blocks until every process of the communicator has called it (`MPI_Barrier`, §6.3).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// world.barrier()?; // every rank is here before any goes on
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline]
    pub fn barrier(&self) -> Result<()> {
        self.blocking::<u8>("barrier", &mut [], |_| {
            // SAFETY: a valid communicator.
            unsafe { ffi::MPI_Barrier(self.raw) }
        })
    }

    /// Starts a barrier (`MPI_Ibarrier`, §6.12.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let arrived = world.ibarrier(s)?;
    ///     // … work while the others arrive …
    ///     arrived.wait().map(drop)
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::barrier`].
    #[inline(always)]
    pub fn ibarrier<'s>(&'s self, scope: &'s Scope<'s, '_>) -> Result<Request<'s>> {
        self.agree("ibarrier", || Ok(Signature::Same { root: -1, key: 0 }))?;
        self.nonblocking(
            scope,
            "ibarrier",
            None,
            #[inline(always)]
            |r| {
                // SAFETY: a valid communicator; MPI writes the request.
                unsafe { ffi::MPI_Ibarrier(self.raw, r.expect("nonblocking")) }
            },
        )
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut settings = [0u32; 2];
    /// if world.rank() == 0 {
    ///     settings = [16, 1000];
    /// }
    /// world.bcast(&mut settings, 0)?;
    /// assert_eq!(settings, [16, 1000]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for a bad root and [`ErrorKind::CountOverflow`], before any
    /// communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`] (e.g. class `Truncate` when
    /// the root sends more than a receiver's buffer holds).
    #[inline(always)]
    pub fn bcast<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        const OP: &str = "bcast";
        self.check_rank(root, "root", OP)?;
        let count = large_count::<T>(buf.len(), OP)?;
        // The datatype before the gate: a derived type's first use builds it (a call out of
        // line), which inside the gated call would keep the gate's lock flag alive across it.
        let (ptr, dt) = (recv_ptr(buf), T::datatype().as_raw());
        // SAFETY: `buf` holds `count` elements, exclusively borrowed for the blocking call.
        self.blocking(
            OP,
            buf,
            #[inline(always)]
            |r| unsafe { self.raw_bcast(ptr, count, dt, root, r) },
        )
    }

    /// Starts a broadcast (`MPI_Ibcast`, §6.12.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut table = vec![0.0f64; 4];
    /// if world.rank() == 0 {
    ///     table.fill(2.5);
    /// }
    /// ferrompi::scope(|s| world.ibcast(s, &mut table, 0)?.wait().map(drop))?;
    /// assert_eq!(table, [2.5; 4]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::bcast`].
    #[inline(always)]
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
        if crate::comm::large::bcast_schedule_broken(size_of_val(buf)) {
            return self.ibcast_big(scope, buf, root);
        }
        let ptr = recv_ptr(buf);
        // SAFETY: `buf` is borrowed for 's; the scope completes the operation first.
        self.nonblocking(
            scope,
            OP,
            Repair::for_slice(buf),
            #[inline(always)]
            |r| unsafe { self.raw_bcast(ptr, count, T::datatype().as_raw(), root, r) },
        )
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
        // SAFETY: every block is the whole of `buf`, borrowed for 's; the root sends it, the
        // others receive into it.
        unsafe { self.ivmove_big(scope, f, to, from, Repair::for_slice(buf), OP) }
    }
}
