//! Which MPI call a communicator method makes, named once for every layer that makes it: the
//! send modes, the families of collectives that share an argument list, the choice between a
//! blocking and a nonblocking call, and `MPI_IN_PLACE`. Point-to-point, the collectives, the
//! persistent collectives and the large-count layer below them all use these.

use crate::ffi;
use std::ffi::c_int;

/// The four blocking send modes (MPI-4.0 §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendMode {
    Standard,
    Synchronous,
    Buffered,
    Ready,
}

impl SendMode {
    /// Calls the mode's send function (`MPI_Send`, `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`).
    ///
    /// # Safety
    /// As the MPI function: `buf` holds `count` elements of `dt`, valid for the call.
    #[inline(always)]
    pub(crate) unsafe fn call(
        self,
        buf: *const std::ffi::c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: ffi::MPI_Comm,
    ) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match self {
                SendMode::Standard => ffi::MPI_Send(buf, count, dt, dest, tag, comm),
                SendMode::Synchronous => ffi::MPI_Ssend(buf, count, dt, dest, tag, comm),
                SendMode::Buffered => ffi::MPI_Bsend(buf, count, dt, dest, tag, comm),
                SendMode::Ready => ffi::MPI_Rsend(buf, count, dt, dest, tag, comm),
            }
        }
    }
}

/// `Some(request)` selects the nonblocking variant of a collective.
pub(crate) type Req<'a> = Option<&'a mut ffi::MPI_Request>;

/// The reductions that share `MPI_Allreduce`'s argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduceFn {
    All,
    Scan,
    Exscan,
    ScatterBlock,
}

impl ReduceFn {
    pub(crate) fn name(self, nonblocking: bool) -> &'static str {
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
    pub(crate) fn input_factor(self, size: usize) -> usize {
        if self == ReduceFn::ScatterBlock {
            size
        } else {
            1
        }
    }
}

/// The data-movement collectives that share `MPI_Gather`'s argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MoveFn {
    Gather,
    Scatter,
    Allgather,
    Alltoall,
}

impl MoveFn {
    pub(crate) fn name(self, nonblocking: bool) -> &'static str {
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
