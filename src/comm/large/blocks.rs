//! V-collectives with a block or an offset beyond `int`.
//!
//! `gatherv`, `scatterv` and `allgatherv` take the same partition on every rank, so every rank
//! sees that it is large and all of them take this path, on every MPI: one `MPI_Alltoallw`
//! (MPI-4.0 §6.8) with a datatype per block that places it at its byte offset, so counts are 0
//! or 1 and displacements 0. Ranks that exchange nothing pass count 0, which makes a gather,
//! scatter or allgather an all-to-all in which only some pairs move data.
//!
//! `alltoallv`'s partitions differ from rank to rank, so ranks could disagree on the path. It
//! uses `MPI_Alltoallv_c`, which matches `MPI_Alltoallv` on the other ranks; without MPI-4's
//! `_c` calls such a partition is an [`Error::CountOverflow`].

use super::Spanning;
use crate::comm::Communicator;
use crate::comm::partition::Partition;
use crate::error::{Error, Result, check};
use crate::ffi;
use std::ffi::{c_int, c_void};

/// `count` elements of the predefined `datatype`, starting `bytes` into a buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub(crate) bytes: usize,
    pub(crate) count: usize,
    pub(crate) datatype: ffi::MPI_Datatype,
}

impl Block {
    /// `len` values of `T` at the start of a buffer.
    pub(crate) fn whole<T: crate::datatype::Equivalence>(len: usize) -> Block {
        Block {
            bytes: 0,
            count: len * T::ELEMENTS,
            datatype: T::datatype().as_raw(),
        }
    }

    fn nothing(self) -> Block {
        Block { count: 0, ..self }
    }
}

/// The v-collective an `MPI_Alltoallw` stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VMove {
    Gatherv { root: c_int },
    Scatterv { root: c_int },
    Allgatherv,
}

/// Datatypes made for one call, freed when it returns (the call is blocking).
struct Made(Vec<ffi::MPI_Datatype>);

impl Drop for Made {
    fn drop(&mut self) {
        for t in &mut self.0 {
            // SAFETY: committed types this call made; the blocking call using them returned.
            unsafe { ffi::MPI_Type_free(t) };
        }
    }
}

impl Made {
    /// The (count, datatype) that moves `block` with displacement 0. The caller holds the gate.
    fn place(
        &mut self,
        block: Block,
        operation: &'static str,
    ) -> Result<(c_int, ffi::MPI_Datatype)> {
        if block.count == 0 {
            return Ok((0, block.datatype));
        }
        let overflow = |n: usize| Error::CountOverflow {
            operation,
            count: u128::try_from(n).unwrap_or(u128::MAX),
            max: i64::MAX,
        };
        let at = ffi::MPI_Aint::try_from(block.bytes).map_err(|_| overflow(block.bytes))?;
        let (n, inner, _span) = match c_int::try_from(block.count) {
            Ok(n) => (n, block.datatype, None),
            Err(_) => {
                let count =
                    ffi::MPI_Count::try_from(block.count).map_err(|_| overflow(block.count))?;
                let span = Spanning::new(block.datatype, count, operation)?;
                (1, span.raw, Some(span))
            }
        };
        // SAFETY: an immutable constant defined by the shim.
        let mut placed = unsafe { ffi::ferrompi_MPI_DATATYPE_NULL };
        // SAFETY: one block of a valid committed type at a byte displacement; MPI keeps what the
        // new type uses, so `_span` may be freed after this.
        let code = unsafe { ffi::MPI_Type_create_struct(1, &n, &at, &inner, &mut placed) };
        check(code, operation)?;
        self.0.push(placed);
        let placed = self.0.last_mut().expect("just pushed");
        // SAFETY: a type we just made.
        check(unsafe { ffi::MPI_Type_commit(placed) }, operation)?;
        Ok((1, *placed))
    }
}

impl Communicator<'_> {
    /// Runs `f` as an `MPI_Alltoallw`. `send(j)` and `recv(i)` give the natural blocks: what
    /// goes to rank `j` from `s`, and where rank `i`'s data lands in `d`. In place, a rank moves
    /// nothing to or from itself (its block is already where it belongs).
    ///
    /// # Safety
    /// The blocks lie within the buffers at `s` and `d`, which stay valid for the call; the
    /// receive blocks do not overlap each other or a send block. The caller holds the gate.
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
        operation: &'static str,
    ) -> Result<()> {
        let size = usize::try_from(self.size).unwrap_or(0);
        let me = usize::try_from(self.rank).unwrap_or(0);
        let rank = |r: c_int| usize::try_from(r).unwrap_or(usize::MAX);
        let sends = |j: usize| match f {
            VMove::Gatherv { root } => rank(root) == j && !(in_place && j == me),
            VMove::Scatterv { root } => rank(root) == me && !(in_place && j == me),
            VMove::Allgatherv => !(in_place && j == me),
        };
        let receives = |i: usize| match f {
            VMove::Gatherv { root } => rank(root) == me && !(in_place && i == me),
            VMove::Scatterv { root } => rank(root) == i && !(in_place && i == me),
            VMove::Allgatherv => !(in_place && i == me),
        };
        let mut made = Made(Vec::with_capacity(2 * size));
        let (mut sc, mut st, mut rc, mut rt) = (
            Vec::with_capacity(size),
            Vec::with_capacity(size),
            Vec::with_capacity(size),
            Vec::with_capacity(size),
        );
        for peer in 0..size {
            let out = if sends(peer) {
                send(peer)
            } else {
                send(peer).nothing()
            };
            let (n, t) = made.place(out, operation)?;
            sc.push(n);
            st.push(t);
            let inc = if receives(peer) {
                recv(peer)
            } else {
                recv(peer).nothing()
            };
            let (n, t) = made.place(inc, operation)?;
            rc.push(n);
            rt.push(t);
        }
        let zeros = vec![0; size];
        // SAFETY: per the contract; each type places its block within its buffer.
        let code = unsafe {
            ffi::MPI_Alltoallw(
                s,
                sc.as_ptr(),
                zeros.as_ptr(),
                st.as_ptr(),
                d,
                rc.as_ptr(),
                zeros.as_ptr(),
                rt.as_ptr(),
                self.raw,
            )
        };
        check(code, operation)
    }

    /// `alltoallv` (blocking; in place when `send` is `None` and `s` is `MPI_IN_PLACE`) with a
    /// partition beyond `int`: `MPI_Alltoallv_c`, or an error without it.
    ///
    /// # Safety
    /// The partitions fit the buffers at `s` and `d`, which stay valid for the call.
    #[cold]
    pub(crate) unsafe fn alltoallv_large<T: crate::datatype::Equivalence>(
        &self,
        s: *const c_void,
        send: Option<&Partition<T>>,
        d: *mut c_void,
        recv: &Partition<T>,
    ) -> Result<()> {
        const OP: &str = "alltoallv";
        #[cfg(ferrompi_large_count)]
        {
            let (rc, rd) = recv.large_arrays();
            let (sc, sd) = send.map_or_else(|| (rc.clone(), rd.clone()), Partition::large_arrays);
            let dt = T::datatype().as_raw();
            let _gate = crate::env::enter(OP)?;
            // SAFETY: per the contract; the arrays hold one entry per rank.
            let code = unsafe {
                ffi::MPI_Alltoallv_c(
                    s,
                    sc.as_ptr(),
                    sd.as_ptr(),
                    dt,
                    d,
                    rc.as_ptr(),
                    rd.as_ptr(),
                    dt,
                    self.raw,
                )
            };
            check(code, OP)
        }
        #[cfg(not(ferrompi_large_count))]
        {
            let _ = (s, d);
            let large = send.filter(|p| p.is_large()).unwrap_or(recv);
            large.int_arrays(OP).map(drop)
        }
    }
}
