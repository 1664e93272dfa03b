//! Blocking collective operations (MPI-4.0 chapter 6). This first use: `barrier` and
//! `bcast`; the rest arrive with the collectives issue.

use super::Communicator;
use crate::datatype::{Equivalence, count_of, recv_ptr, repair};
use crate::env::enter;
use crate::error::{Result, check};
use crate::ffi;

impl Communicator<'_> {
    /// Blocks until every process of the communicator has called it (`MPI_Barrier`,
    /// MPI-4.0 §6.3).
    ///
    /// # Errors
    /// [`Error::WrongThread`](crate::Error::WrongThread); [`Error::Mpi`](crate::Error::Mpi).
    #[inline]
    pub fn barrier(&self) -> Result<()> {
        const OP: &str = "barrier";
        let _gate = enter(OP)?;
        // SAFETY: a valid communicator.
        check(unsafe { ffi::MPI_Barrier(self.raw) }, OP)
    }

    /// Broadcasts `buf` from `root` to every process (`MPI_Bcast`, MPI-4.0 §6.4). Every process
    /// passes a buffer of the same length; non-roots receive into theirs.
    ///
    /// # Errors
    /// [`Error::InvalidRank`](crate::Error::InvalidRank) for a root outside the communicator and
    /// [`Error::CountOverflow`](crate::Error::CountOverflow), both before any communication;
    /// [`Error::WrongThread`](crate::Error::WrongThread); [`Error::Mpi`](crate::Error::Mpi)
    /// (for instance [`ErrorClass::Truncate`](crate::ErrorClass::Truncate) when the root sends
    /// more than a receiver's buffer holds).
    #[inline]
    pub fn bcast<T: Equivalence>(&self, buf: &mut [T], root: i32) -> Result<()> {
        const OP: &str = "bcast";
        let count = count_of::<T>(buf.len(), OP)?;
        self.check_rank(root, "root", OP)?;
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: `buf` holds `count` elements of `T::datatype()`, exclusively borrowed for
            // the blocking call; MPI reads it at the root and writes at most `count` elsewhere.
            unsafe { ffi::MPI_Bcast(recv_ptr(buf), count, T::datatype().as_raw(), root, self.raw) }
        };
        if self.rank != root {
            repair(buf);
        }
        check(rc, OP)
    }
}
