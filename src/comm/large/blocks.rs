//! Collectives with a block or an offset beyond `int`, as one `MPI_Alltoallw` (MPI-4.0 §6.8)
//! or `MPI_Ialltoallw` (§6.12.6) with a datatype per block that places it at its byte offset,
//! so counts are 0 or 1 and displacements 0.
//!
//! - `gatherv`, `scatterv` and `allgatherv` take the same partition on every rank, so every
//!   rank sees that it is large and all of them take this path, on every MPI. Ranks that
//!   exchange nothing pass count 0, which makes a gather, scatter or allgather an all-to-all in
//!   which only some pairs move data.
//! - `alltoallw` is already an `MPI_Alltoallw`: each rank substitutes placed types for its own
//!   blocks without the others having to know.
//! - An `ibcast` of 2 GiB or more on MPICH before 4.2 (see the parent module).
//!
//! `alltoallv`'s partitions differ from rank to rank, so ranks could disagree on the path. It
//! uses `MPI_Alltoallv_c`, which matches `MPI_Alltoallv` on the other ranks; without MPI-4's
//! `_c` calls such a partition is an [`ErrorKind::CountOverflow`].

use super::{Made, Spanning};
use crate::comm::Communicator;
use crate::comm::partition::Block;
use crate::comm::partition::Partition;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::request::Scope;
use std::ffi::{c_int, c_void};

/// The collective an `MPI_Alltoallw` stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VMove {
    Gatherv {
        root: c_int,
    },
    Scatterv {
        root: c_int,
    },
    Allgatherv,
    /// `alltoallw` itself, with blocks beyond `int`: every pair exchanges.
    Alltoallw,
    /// A broadcast: the root sends its whole buffer to every other rank (see `ibcast_big`).
    Bcast {
        root: c_int,
    },
}

/// The arrays of one `MPI_Alltoallw`: counts, zero displacements and datatypes per peer. A
/// nonblocking call's arrays are kept in its scope until it completes (MPI-4.0 §6.12), a
/// persistent one's by its request.
pub(crate) struct WArgs {
    pub(crate) send_counts: Vec<c_int>,
    pub(crate) send_types: Vec<ffi::MPI_Datatype>,
    pub(crate) recv_counts: Vec<c_int>,
    pub(crate) recv_types: Vec<ffi::MPI_Datatype>,
    pub(crate) zeros: Vec<c_int>,
}

// SAFETY: integers and datatype handles, which any thread passing the gate may use.
unsafe impl Send for WArgs {}
// SAFETY: as for `Send`; shared access only reads them.
unsafe impl Sync for WArgs {}

impl Made {
    /// The (count, datatype) that moves `block` with displacement 0.
    ///
    /// # Safety
    /// The caller holds the thread gate.
    unsafe fn place(
        &mut self,
        block: Block,
        operation: &'static str,
    ) -> Result<(c_int, ffi::MPI_Datatype)> {
        if block.count == 0 {
            return Ok((0, block.datatype));
        }
        let overflow = |n: usize| ErrorKind::CountOverflow {
            operation,
            count: u64::try_from(n).unwrap_or(u64::MAX),
            max: i64::MAX,
        };
        let at = ffi::MPI_Aint::try_from(block.bytes).map_err(|_| overflow(block.bytes))?;
        let (n, inner, _span) = match c_int::try_from(block.count) {
            Ok(n) => (n, block.datatype, None),
            Err(_) => {
                let count =
                    ffi::MPI_Count::try_from(block.count).map_err(|_| overflow(block.count))?;
                // SAFETY: the caller holds the gate.
                let span = unsafe { Spanning::new(block.datatype, count, operation)? };
                (1, span.raw, Some(span))
            }
        };
        // SAFETY: the caller holds the gate; one block of a valid committed type at a byte
        // displacement. MPI keeps what the new type uses, so `_span` may be freed after this.
        unsafe {
            self.make(operation, |t| {
                ffi::MPI_Type_create_struct(1, &n, &at, &inner, t)
            })?
        };
        let placed = self.0.last_mut().expect("just made");
        // SAFETY: a type we just made.
        check(unsafe { ffi::MPI_Type_commit(placed) }, operation)?;
        Ok((1, *placed))
    }
}

impl Communicator<'_> {
    /// Runs `f` as an `MPI_Alltoallw`, or starts it as an `MPI_Ialltoallw` when `start` gives a
    /// request handle and the scope that keeps the arrays (see [`Communicator::placed`]).
    ///
    /// # Safety
    /// The blocks lie within the buffers at `s` and `d`, which stay valid for the call (until
    /// completion, if nonblocking); the receive blocks do not overlap each other or a send
    /// block. The caller holds the gate.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn vmove_blocks(
        &self,
        f: VMove,
        in_place: bool,
        s: *const c_void,
        send: impl Fn(usize) -> Block,
        d: *mut c_void,
        recv: impl Fn(usize) -> Block,
        start: Option<(&mut ffi::MPI_Request, &Scope<'_, '_>)>,
        operation: &'static str,
    ) -> Result<()> {
        // SAFETY: the caller holds the gate.
        let (w, made) = unsafe { self.placed(f, in_place, send, recv, operation)? };
        let (sc, st, z) = (
            w.send_counts.as_ptr(),
            w.send_types.as_ptr(),
            w.zeros.as_ptr(),
        );
        let (rc, rt) = (w.recv_counts.as_ptr(), w.recv_types.as_ptr());
        // SAFETY: per the contract; each type places its block within its buffer; the arrays
        // hold one entry per rank and live until completion (kept in the scope if nonblocking).
        let code = unsafe {
            match start {
                None => ffi::MPI_Alltoallw(s, sc, z, st, d, rc, z, rt, self.raw),
                Some((r, scope)) => {
                    let code = ffi::MPI_Ialltoallw(s, sc, z, st, d, rc, z, rt, self.raw, r);
                    scope.keep(w);
                    code
                }
            }
        };
        drop(made);
        check(code, operation)
    }

    /// The send and receive buffers of a broadcast as an `MPI_Alltoallw` (`VMove::Bcast`): the
    /// root sends from `buf`, the others receive into it; the side a rank does not use gets a
    /// dangling pointer, which MPI never reads with counts 0.
    pub(crate) fn bcast_sides(
        &self,
        buf: *mut c_void,
        root: c_int,
    ) -> (*const c_void, *mut c_void) {
        // Not a dangling pointer: address 1 is Open MPI's MPI_IN_PLACE.
        if self.rank == root {
            (buf.cast_const(), crate::datatype::empty_recv())
        } else {
            (crate::datatype::empty_send(), buf)
        }
    }

    /// The `MPI_Alltoallw` arguments standing in for `f`, and the datatypes made for them,
    /// which the caller frees (on drop) once the call using them has returned or started.
    /// `send(j)` and `recv(i)` give the natural blocks: what goes to rank `j`, and where rank
    /// `i`'s data lands. In place, a rank moves nothing to or from itself (its block is already
    /// where it belongs); nor does a broadcast's root.
    ///
    /// # Safety
    /// The caller holds the thread gate (also when the returned [`Made`] is dropped).
    pub(crate) unsafe fn placed(
        &self,
        f: VMove,
        in_place: bool,
        send: impl Fn(usize) -> Block,
        recv: impl Fn(usize) -> Block,
        operation: &'static str,
    ) -> Result<(WArgs, Made)> {
        let size = usize::try_from(self.size).unwrap_or(0);
        let me = usize::try_from(self.rank).unwrap_or(0);
        let rank = |r: c_int| usize::try_from(r).unwrap_or(usize::MAX);
        let to_self = in_place || matches!(f, VMove::Bcast { .. });
        let sends = |j: usize| match f {
            VMove::Gatherv { root } => rank(root) == j && !(to_self && j == me),
            VMove::Scatterv { root } | VMove::Bcast { root } => {
                rank(root) == me && !(to_self && j == me)
            }
            VMove::Allgatherv | VMove::Alltoallw => !(to_self && j == me),
        };
        let receives = |i: usize| match f {
            VMove::Gatherv { root } => rank(root) == me && !(to_self && i == me),
            VMove::Scatterv { root } | VMove::Bcast { root } => {
                rank(root) == i && !(to_self && i == me)
            }
            VMove::Allgatherv | VMove::Alltoallw => !(to_self && i == me),
        };
        let mut made = Made(Vec::with_capacity(2 * size));
        let mut w = WArgs {
            send_counts: Vec::with_capacity(size),
            send_types: Vec::with_capacity(size),
            recv_counts: Vec::with_capacity(size),
            recv_types: Vec::with_capacity(size),
            zeros: vec![0; size],
        };
        for peer in 0..size {
            let out = if sends(peer) {
                send(peer)
            } else {
                send(peer).nothing()
            };
            // SAFETY: the caller holds the gate.
            let (n, t) = unsafe { made.place(out, operation)? };
            w.send_counts.push(n);
            w.send_types.push(t);
            let inc = if receives(peer) {
                recv(peer)
            } else {
                recv(peer).nothing()
            };
            // SAFETY: as above.
            let (n, t) = unsafe { made.place(inc, operation)? };
            w.recv_counts.push(n);
            w.recv_types.push(t);
        }
        Ok((w, made))
    }

    /// `alltoallv` (in place when `send` is `None` and `s` is `MPI_IN_PLACE`; nonblocking when
    /// `start` gives a request handle and the scope that keeps the arrays) with a partition
    /// beyond `int`: `MPI_Alltoallv_c` / `MPI_Ialltoallv_c`, or an error without them. The
    /// caller holds the gate.
    ///
    /// # Safety
    /// The partitions fit the buffers at `s` and `d`, which stay valid until completion.
    #[cold]
    pub(crate) unsafe fn alltoallv_large<T: crate::datatype::Equivalence>(
        &self,
        s: *const c_void,
        send: Option<&Partition<T>>,
        d: *mut c_void,
        recv: &Partition<T>,
        start: Option<(&mut ffi::MPI_Request, &Scope<'_, '_>)>,
    ) -> Result<()> {
        const OP: &str = "alltoallv";
        #[cfg(ferrompi_large_count)]
        {
            let (rc, rd) = recv.large_arrays();
            let (sc, sd) = send.map_or_else(|| (rc.clone(), rd.clone()), Partition::large_arrays);
            let dt = T::datatype().as_raw();
            let arrays = (sc, sd, rc, rd);
            let (sc, sd) = (arrays.0.as_ptr(), arrays.1.as_ptr());
            let (rc, rd) = (arrays.2.as_ptr(), arrays.3.as_ptr());
            // SAFETY: per the contract; the arrays hold one entry per rank and, for the
            // nonblocking form, live in the scope until completion.
            let code = unsafe {
                match start {
                    None => ffi::MPI_Alltoallv_c(s, sc, sd, dt, d, rc, rd, dt, self.raw),
                    Some((r, scope)) => {
                        let code = ffi::MPI_Ialltoallv_c(s, sc, sd, dt, d, rc, rd, dt, self.raw, r);
                        scope.keep(arrays);
                        code
                    }
                }
            };
            check(code, OP)
        }
        #[cfg(not(ferrompi_large_count))]
        {
            let _ = (s, d, start);
            let large = send.filter(|p| p.is_large()).unwrap_or(recv);
            large.int_arrays(OP).map(drop)
        }
    }
}
