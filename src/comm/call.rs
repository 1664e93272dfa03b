//! Which MPI call a communicator method makes, named once for every layer that makes it: the
//! send modes, the families of collectives that share an argument list, the choice between a
//! blocking and a nonblocking call, and `MPI_IN_PLACE`. Point-to-point, the collectives, the
//! persistent collectives and the large-count layer below them all use these.

use crate::ffi;
use std::ffi::{c_int, c_void};

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

/// Which `v` collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VFn {
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
}

impl VFn {
    pub(crate) fn name(self, nonblocking: bool) -> &'static str {
        match (self, nonblocking) {
            (VFn::Gatherv, false) => "gatherv_view",
            (VFn::Gatherv, true) => "igatherv_view",
            (VFn::Scatterv, false) => "scatterv_view",
            (VFn::Scatterv, true) => "iscatterv_view",
            (VFn::Allgatherv, false) => "allgatherv_view",
            (VFn::Allgatherv, true) => "iallgatherv_view",
            (VFn::Alltoallv, false) => "alltoallv_view",
            (VFn::Alltoallv, true) => "ialltoallv_view",
        }
    }

    /// The name of the persistent form.
    pub(crate) fn init_name(self) -> &'static str {
        match self {
            VFn::Gatherv => "gatherv_init_view",
            VFn::Scatterv => "scatterv_init_view",
            VFn::Allgatherv => "allgatherv_init_view",
            VFn::Alltoallv => "alltoallv_init_view",
        }
    }
}

/// One side of a `v` call as MPI takes it: the buffer, the count (a single block's side) or
/// the counts and displacements (a blocked side; null where MPI ignores them), the datatype.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<P> {
    pub(crate) ptr: P,
    pub(crate) count: c_int,
    pub(crate) counts: *const c_int,
    pub(crate) displs: *const c_int,
    pub(crate) datatype: ffi::MPI_Datatype,
}

impl<P> Side<P> {
    /// A single block: `count` copies of `datatype`.
    pub(crate) fn single(ptr: P, count: c_int, datatype: ffi::MPI_Datatype) -> Side<P> {
        Side {
            ptr,
            count,
            counts: std::ptr::null(),
            displs: std::ptr::null(),
            datatype,
        }
    }

    /// Per-rank blocks.
    pub(crate) fn blocked(
        ptr: P,
        counts: &[c_int],
        displs: &[c_int],
        datatype: ffi::MPI_Datatype,
    ) -> Self {
        Side {
            ptr,
            count: 0,
            counts: counts.as_ptr(),
            displs: displs.as_ptr(),
            datatype,
        }
    }
}

/// A send side.
pub(crate) type SendSide = Side<*const c_void>;
/// A receive side.
pub(crate) type RecvSide = Side<*mut c_void>;

/// Makes the blocking (`r: None`) or nonblocking `v` call `f` on `c`.
///
/// # Safety
/// Each side's buffer holds what its counts, displacements and datatype reach, and stays
/// valid (and, if nonblocking, untouched, the arrays too) until the operation completes.
pub(crate) unsafe fn vmove(
    c: ffi::MPI_Comm,
    f: VFn,
    s: SendSide,
    d: RecvSide,
    root: c_int,
    r: Req<'_>,
) -> c_int {
    // SAFETY: per the contract.
    unsafe {
        match (f, r) {
            (VFn::Gatherv, None) => ffi::MPI_Gatherv(
                s.ptr, s.count, s.datatype, d.ptr, d.counts, d.displs, d.datatype, root, c,
            ),
            (VFn::Gatherv, Some(r)) => ffi::MPI_Igatherv(
                s.ptr, s.count, s.datatype, d.ptr, d.counts, d.displs, d.datatype, root, c, r,
            ),
            (VFn::Scatterv, None) => ffi::MPI_Scatterv(
                s.ptr, s.counts, s.displs, s.datatype, d.ptr, d.count, d.datatype, root, c,
            ),
            (VFn::Scatterv, Some(r)) => ffi::MPI_Iscatterv(
                s.ptr, s.counts, s.displs, s.datatype, d.ptr, d.count, d.datatype, root, c, r,
            ),
            (VFn::Allgatherv, None) => ffi::MPI_Allgatherv(
                s.ptr, s.count, s.datatype, d.ptr, d.counts, d.displs, d.datatype, c,
            ),
            (VFn::Allgatherv, Some(r)) => ffi::MPI_Iallgatherv(
                s.ptr, s.count, s.datatype, d.ptr, d.counts, d.displs, d.datatype, c, r,
            ),
            (VFn::Alltoallv, None) => ffi::MPI_Alltoallv(
                s.ptr, s.counts, s.displs, s.datatype, d.ptr, d.counts, d.displs, d.datatype, c,
            ),
            (VFn::Alltoallv, Some(r)) => ffi::MPI_Ialltoallv(
                s.ptr, s.counts, s.displs, s.datatype, d.ptr, d.counts, d.displs, d.datatype, c, r,
            ),
        }
    }
}

/// One side of an `MPI_Alltoallw` as MPI takes it: the buffer, and per rank a count, a byte
/// displacement and a datatype.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WSide<P> {
    pub(crate) ptr: P,
    pub(crate) counts: *const c_int,
    pub(crate) displs: *const c_int,
    pub(crate) types: *const ffi::MPI_Datatype,
}

/// Makes the blocking (`r: None`) or nonblocking `MPI_Alltoallw` on `c`.
///
/// # Safety
/// Each side's arrays hold one entry per rank of `c`, and its buffer what they reach; all stay
/// valid (and, if nonblocking, untouched) until the operation completes.
pub(crate) unsafe fn alltoallw(
    c: ffi::MPI_Comm,
    s: WSide<*const c_void>,
    d: WSide<*mut c_void>,
    r: Req<'_>,
) -> c_int {
    // SAFETY: per the contract.
    unsafe {
        match r {
            None => ffi::MPI_Alltoallw(
                s.ptr, s.counts, s.displs, s.types, d.ptr, d.counts, d.displs, d.types, c,
            ),
            Some(r) => ffi::MPI_Ialltoallw(
                s.ptr, s.counts, s.displs, s.types, d.ptr, d.counts, d.displs, d.types, c, r,
            ),
        }
    }
}
