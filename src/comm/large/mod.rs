//! Counts above `i32::MAX` elements (MPI-4.0 §2.5.8, "large counts").
//!
//! The ordinary calls take a C `int` count. When a buffer holds more elements than that, the
//! operations below take a separate, `#[cold]` path, so the common path only gains a compare:
//!
//! | operations | with MPI-4 `_c` calls (MPICH 4) | without (Open MPI 4.1) |
//! |---|---|---|
//! | point-to-point, every mode, blocking, nonblocking and persistent; `sendrecv` | `MPI_Send_c`, `MPI_Isend_c`, `MPI_Send_init_c`, … | one element of a derived datatype spanning the buffer |
//! | `bcast`, `gather`, `scatter`, `allgather`, `alltoall` (blocks over `int`), blocking and nonblocking | `MPI_Bcast_c`, `MPI_Igather_c`, … (`ibcast` of 2 GiB or more: see below) | one spanning element per block |
//! | `reduce`, `allreduce`, `scan`, `exscan`, blocking | `MPI_Reduce_c`, … | chunks of 2³⁰ elements, in the same order on every rank |
//! | `reduce_scatter`, `reduce_scatter_block`, blocking | one chunked `MPI_Reduce` per block, to its rank (MPICH 4.0.2's `MPI_Reduce_scatter_c` and `MPI_Ireduce_scatter_c` return wrong results for such blocks: reproduced in C) | the same |
//! | `ireduce`, `iallreduce`, `iscan`, `iexscan`, `ireduce_scatter_block` | `MPI_Ireduce_c`, … | one spanning element, reduced by a user-defined *span op* that applies the operation to the elements inside (`span_op`) |
//! | `gatherv`, `scatterv`, `allgatherv` (a block or offset over `int`), blocking and nonblocking | `MPI_Alltoallw` / `MPI_Ialltoallw` with a placed datatype per block (`blocks`) | the same |
//! | `alltoallw`, `ialltoallw` (a count or offset over `int`) | `MPI_Alltoallw` / `MPI_Ialltoallw` with placed datatypes, chosen by each rank alone | the same |
//! | `alltoallv`, `ialltoallv` | `MPI_Alltoallv_c`, `MPI_Ialltoallv_c` |
//! [`ErrorKind::CountOverflow`] |
//! | `ireduce_scatter` | an in-place `iallreduce` of a copy of the input that the scope keeps; this rank's block is copied out on completion | the same |
//! | `bcast_init`, `reduce_init`, `allreduce_init`, `scan_init`, `exscan_init`, `reduce_scatter_block_init`, `gather`/`scatter`/`allgather`/`alltoall_init` | a spanning datatype (and span op) the request keeps | the same |
//! | the other persistent collectives (v-forms, `alltoallw_init`, `reduce_scatter_init`) |
//! [`ErrorKind::CountOverflow`] | [`ErrorKind::CountOverflow`] |
//!
//! Reductions are chunked because predefined operations apply only to predefined datatypes.
//! Both sides of a message may take either path: MPI matches type signatures, which a derived
//! datatype built from the same basic type preserves. Every rank of a collective takes the
//! same path, because each decides from values all of them share (the count, or the common
//! partition), or because the substitute is the same call (`alltoallw`). A temporary datatype
//! is freed as soon as the call that uses it returns, also for nonblocking and persistent
//! calls: freeing a datatype lets the operations using it complete normally (MPI-4.0
//! §5.1.9). Arrays MPI reads until a nonblocking call completes are kept in its scope.
//!
//! What is left is an error before any communication, for these reasons:
//! - `alltoallv` without `_c` calls: its partitions differ per rank, and a rank whose blocks
//!   fit `int` cannot know that another's do not, so there is no substitute all ranks would
//!   agree on without an extra collective on every call. `alltoallw` with the same blocks works
//!   on every MPI.
//! - the persistent v-collectives, `alltoallw_init` and `reduce_scatter_init`: their requests
//!   would have to own a placed-datatype substitute each; not done yet.
//!
//! MPICH before 4.2 keeps an `MPI_Ibcast`'s byte count in an `int` and fails on the receivers
//! from 2 GiB on, with any count (reproduced on 4.0.2, for `MPI_Ibcast_c` and
//! `MPI_Bcast_init` too). There, such an `ibcast` is an `MPI_Ialltoallw`, and such a
//! `bcast_init` an `MPI_Alltoallw_init`, in which the root sends its buffer to every other
//! rank.

use super::Communicator;
use super::call::{MoveFn, ReduceFn, Req, SendMode};
use super::partition::Partition;
use crate::datatype::Equivalence;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::op::Operand;
use crate::request::{Repair, Scope};
use std::ffi::{c_int, c_void};

mod blocks;
mod span_op;

pub(crate) use blocks::VMove;
pub(crate) use span_op::spanned;

/// Elements per chunk of the fallback paths.
const CHUNK: usize = 1 << 30;

/// The element count of `len` values of `T`, in MPI's large count type.
pub(crate) fn large_count<T: Equivalence>(
    len: usize,
    operation: &'static str,
) -> Result<ffi::MPI_Count> {
    len.checked_mul(T::ELEMENTS)
        .and_then(|n| ffi::MPI_Count::try_from(n).ok())
        .ok_or_else(|| crate::datatype::count_overflow(len, T::ELEMENTS, operation))
}

/// A committed derived datatype spanning `elements` of a predefined one; freed on drop.
pub(crate) struct Spanning {
    raw: ffi::MPI_Datatype,
}

/// Datatypes made for one call, freed when it returns: after a blocking call, or once a
/// nonblocking one has started (MPI-4.0 §5.1.9 lets it complete normally). The caller holds
/// the thread gate, or takes the types over with [`Made::into_types`].
pub(crate) struct Made(Vec<ffi::MPI_Datatype>);

impl Made {
    /// Runs a datatype constructor that writes its new type through the pointer it gets, and
    /// keeps the type to free.
    ///
    /// # Safety
    /// The caller holds the thread gate; `construct` is such a constructor on valid arguments.
    pub(crate) unsafe fn make(
        &mut self,
        operation: &'static str,
        construct: impl FnOnce(*mut ffi::MPI_Datatype) -> c_int,
    ) -> Result<ffi::MPI_Datatype> {
        let mut made = ffi::MPI_DATATYPE_NULL;
        check(construct(&mut made), operation)?;
        self.0.push(made);
        Ok(made)
    }

    /// The types, for the caller to free.
    pub(crate) fn into_types(mut self) -> Vec<ffi::MPI_Datatype> {
        std::mem::take(&mut self.0)
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        for t in &mut self.0 {
            // SAFETY: types this call made, no longer needed by the caller, with the gate held.
            unsafe { ffi::MPI_Type_free(t) };
        }
    }
}

impl Spanning {
    /// The datatype handle, still owned (freed on drop).
    pub(crate) fn raw(&self) -> ffi::MPI_Datatype {
        self.raw
    }

    /// The datatype handle, for the caller to free.
    pub(crate) fn into_raw(self) -> ffi::MPI_Datatype {
        std::mem::ManuallyDrop::new(self).raw
    }

    /// Builds it.
    ///
    /// # Safety
    /// The caller holds the thread gate.
    pub(crate) unsafe fn new(
        base: ffi::MPI_Datatype,
        elements: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<Self> {
        let elements = u64::try_from(elements).unwrap_or(0);
        let chunk = CHUNK as u64;
        let (chunks, rest) = (elements / chunk, elements % chunk);
        let int = |n: u64| {
            c_int::try_from(n).map_err(|_| ErrorKind::CountOverflow {
                operation,
                count: n,
                max: i64::from(c_int::MAX),
            })
        };
        let (n_chunk, n_chunks, n_rest) = (int(chunk)?, int(chunks)?, int(rest)?);
        // The types made on the way, freed on return, on success or error (MPI keeps what the
        // final type uses).
        let mut parts = Made(Vec::new());
        // SAFETY: (whole block) the caller holds the gate; standard datatype constructors on a
        // predefined base type and the types made from it.
        unsafe {
            let (mut lb, mut extent) = (0, 0);
            check(
                ffi::MPI_Type_get_extent(base, &mut lb, &mut extent),
                operation,
            )?;
            let one_chunk =
                parts.make(operation, |t| ffi::MPI_Type_contiguous(n_chunk, base, t))?;
            let body = parts.make(operation, |t| {
                ffi::MPI_Type_contiguous(n_chunks, one_chunk, t)
            })?;
            let mut whole = if rest == 0 {
                parts.0.pop(); // `body` is the whole type: kept, not freed
                body
            } else {
                let tail = parts.make(operation, |t| ffi::MPI_Type_contiguous(n_rest, base, t))?;
                let tail_at = ffi::MPI_Aint::try_from(chunks * chunk).unwrap_or(0) * extent;
                let (lengths, displs, types) = ([1, 1], [0, tail_at], [body, tail]);
                let joined = parts.make(operation, |t| {
                    ffi::MPI_Type_create_struct(
                        2,
                        lengths.as_ptr(),
                        displs.as_ptr(),
                        types.as_ptr(),
                        t,
                    )
                })?;
                // Exactly the buffer's extent, without the alignment padding an MPI may add to
                // a struct type, so consecutive blocks of a collective land where they belong.
                let size = ffi::MPI_Aint::try_from(elements).unwrap_or(0) * extent;
                let mut whole = ffi::MPI_DATATYPE_NULL;
                check(
                    ffi::MPI_Type_create_resized(joined, 0, size, &mut whole),
                    operation,
                )?;
                whole
            };
            if let Err(e) = check(ffi::MPI_Type_commit(&mut whole), operation) {
                ffi::MPI_Type_free(&mut whole);
                return Err(e);
            }
            Ok(Spanning { raw: whole })
        }
    }
}

/// Which reduction a large-count call makes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reduction {
    /// `MPI_Reduce` to this root.
    Reduce(c_int),
    /// One of the reductions with `MPI_Allreduce`'s arguments.
    Like(ReduceFn),
}

/// Calls `call((byte offset, n))` for consecutive chunks of at most [`CHUNK`] of `count`
/// elements of `extent` bytes, stopping at the first error code.
fn in_chunks(count: usize, extent: usize, mut call: impl FnMut((usize, c_int)) -> c_int) -> c_int {
    let mut done = 0;
    while done < count {
        let n = (count - done).min(CHUNK);
        let rc = call((done * extent, c_int::try_from(n).unwrap_or(c_int::MAX)));
        if rc != ffi::MPI_SUCCESS {
            return rc;
        }
        done += n;
    }
    ffi::MPI_SUCCESS
}

/// Calls `call(count, datatype)` so that it moves `count` elements of the predefined type `dt`,
/// although `count` does not fit an `int`: with one element of a [`Spanning`] type, or none when
/// `count` is 0. Returns MPI's return code (the type's construction's on failure). The caller
/// holds the thread gate.
///
/// The type is freed as soon as `call` returns, also when `call` only started a nonblocking or
/// persistent operation: freeing a datatype lets an operation that uses it complete normally
/// (MPI-4.0 §5.1.9, "Commit and Free").
///
/// # Safety
/// The caller holds the thread gate.
#[cfg(not(ferrompi_large_count))]
pub(crate) unsafe fn spanning(
    dt: ffi::MPI_Datatype,
    count: ffi::MPI_Count,
    operation: &'static str,
    call: impl FnOnce(c_int, ffi::MPI_Datatype) -> c_int,
) -> c_int {
    if let Ok(small) = c_int::try_from(count) {
        return call(small, dt);
    }
    // SAFETY: the caller holds the gate.
    match unsafe { Spanning::new(dt, count, operation) } {
        Ok(span) => call(1, span.raw),
        Err(e) => error_code(e),
    }
}

/// Whether a nonblocking or persistent broadcast of `bytes` must avoid the MPI's broadcast
/// schedule: MPICH before 4.2 keeps its byte count in an `int` (see the module docs). Only a
/// compare on every other path.
#[inline(always)]
pub(crate) fn bcast_schedule_broken(bytes: usize) -> bool {
    bytes > c_int::MAX as usize && crate::env::mpich_before((4, 2))
}

/// The MPI error code for an error building a large-count substitute: MPI's own, or
/// `MPI_ERR_COUNT`.
#[cfg(not(ferrompi_large_count))]
fn error_code(e: crate::Error) -> c_int {
    match e.kind() {
        ErrorKind::Mpi { code, .. } => *code,
        _ => ffi::MPI_ERR_COUNT,
    }
}

/// The extent in bytes of a datatype, or MPI's error code.
///
/// # Safety
/// The caller holds the thread gate.
unsafe fn extent_of(datatype: ffi::MPI_Datatype) -> std::result::Result<usize, c_int> {
    let (mut lb, mut extent) = (0, 0);
    // SAFETY: a valid datatype, the gate held; writes two integers.
    let rc = unsafe { ffi::MPI_Type_get_extent(datatype, &mut lb, &mut extent) };
    if rc != ffi::MPI_SUCCESS {
        return Err(rc);
    }
    Ok(usize::try_from(extent).unwrap_or(0))
}

/// A nonblocking result computed into a temporary: `temp[from..from + len]` goes to `to` when
/// the operation completes.
struct CopyOut<T> {
    temp: Vec<std::mem::MaybeUninit<T>>,
    from: usize,
    to: *mut T,
    len: usize,
}

/// The completion action of a [`CopyOut`]: copies the result, then repairs it.
///
/// # Safety
/// `state` is a `CopyOut<T>` kept by the scope of a completed operation that wrote its
/// temporary; `to` is that operation's receive buffer, still borrowed for the scope.
unsafe fn copy_out<T: Equivalence>(state: *mut u8, _: usize) {
    // SAFETY: per the contract.
    unsafe {
        let c = &*state.cast::<CopyOut<T>>();
        let from = c.temp.as_ptr().add(c.from).cast::<T>();
        std::ptr::copy_nonoverlapping(from, c.to, c.len);
        T::repair_received(c.to, c.len);
    }
}

/// A copy of `input` kept in `scope`, for a nonblocking call to compute its result in place,
/// and the completion action that copies values `from..from + to.len()` of it to `to`, which
/// stays borrowed until the scope ends.
///
/// # Errors
/// [`ErrorKind::BufferSize`] if that range is not within `input`.
pub(crate) fn copy_out_on_completion<'s, T: Equivalence>(
    scope: &'s Scope<'s, '_>,
    input: &[T],
    from: usize,
    to: &'s mut [T],
) -> Result<(*mut c_void, Repair)> {
    if from
        .checked_add(to.len())
        .is_none_or(|end| end > input.len())
    {
        return Err(ErrorKind::BufferSize {
            operation: "ireduce_scatter",
            expected: from.saturating_add(to.len()),
            actual: input.len(),
        }
        .into());
    }
    let mut temp = Vec::<std::mem::MaybeUninit<T>>::with_capacity(input.len());
    // SAFETY: the capacity holds `input.len()` values; `T: Copy`, and the source and the new
    // allocation do not overlap; every value is then initialised.
    unsafe {
        std::ptr::copy_nonoverlapping(input.as_ptr(), temp.as_mut_ptr().cast(), input.len());
        temp.set_len(input.len());
    }
    let at = temp.as_mut_ptr().cast::<c_void>();
    let state = scope.keep(CopyOut {
        temp,
        from,
        to: to.as_mut_ptr(),
        len: to.len(),
    });
    // SAFETY: `copy_out::<T>` on a `CopyOut<T>` the scope keeps, whose range lies within its
    // temporary and whose receive buffer is borrowed for the scope; it runs once the operation
    // writing the temporary completed.
    let repair = unsafe { Repair::on_completion(copy_out::<T>, state.cast()) };
    Ok((at, repair))
}

impl Drop for Spanning {
    fn drop(&mut self) {
        // SAFETY: a committed type we own; operations still using it complete normally (§5.1.9).
        unsafe { ffi::MPI_Type_free(&mut self.raw) };
    }
}

impl Communicator<'_> {
    /// A blocking send in `mode` of more than `i32::MAX` elements.
    ///
    /// # Safety
    /// The caller checked rank and tag and holds the thread gate; `ptr` holds `count` elements
    /// of `dt`.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn send_large(
        &self,
        mode: SendMode,
        ptr: *const c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        dest: c_int,
        tag: c_int,
        operation: &'static str,
    ) -> Result<()> {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            match mode {
                SendMode::Standard => ffi::MPI_Send_c(ptr, count, dt, dest, tag, self.raw),
                SendMode::Synchronous => ffi::MPI_Ssend_c(ptr, count, dt, dest, tag, self.raw),
                SendMode::Buffered => ffi::MPI_Bsend_c(ptr, count, dt, dest, tag, self.raw),
                SendMode::Ready => ffi::MPI_Rsend_c(ptr, count, dt, dest, tag, self.raw),
            }
        };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: per the caller's contract; `n` of `span` are `count` elements of `dt`.
        let rc = unsafe {
            spanning(dt, count, operation, |n, span| {
                mode.call(ptr, n, span, dest, tag, self.raw)
            })
        };
        check(rc, operation)
    }

    /// `MPI_Sendrecv` where either side has more than `i32::MAX` elements.
    ///
    /// # Safety
    /// As [`Communicator::send_large`], for both buffers; `status` is writable.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn sendrecv_large(
        &self,
        (send, send_count, send_dt, dest, send_tag): (
            *const c_void,
            ffi::MPI_Count,
            ffi::MPI_Datatype,
            c_int,
            c_int,
        ),
        (recv, recv_count, recv_dt, source, recv_tag): (
            *mut c_void,
            ffi::MPI_Count,
            ffi::MPI_Datatype,
            c_int,
            c_int,
        ),
        status: *mut ffi::MPI_Status,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the caller's contract.
        return unsafe {
            ffi::MPI_Sendrecv_c(
                send, send_count, send_dt, dest, send_tag, recv, recv_count, recv_dt, source,
                recv_tag, self.raw, status,
            )
        };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: per the caller's contract; each span covers its buffer.
        unsafe {
            spanning(send_dt, send_count, "sendrecv", |sn, s| {
                spanning(recv_dt, recv_count, "sendrecv", |rn, r| {
                    ffi::MPI_Sendrecv(
                        send, sn, s, dest, send_tag, recv, rn, r, source, recv_tag, self.raw,
                        status,
                    )
                })
            })
        }
    }

    /// `MPI_Recv` of more than `i32::MAX` elements.
    ///
    /// # Safety
    /// As [`Communicator::send_large`]; `ptr` has room for `count` elements and `status` is
    /// writable.
    #[cold]
    pub(crate) unsafe fn recv_large(
        &self,
        ptr: *mut c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        source: c_int,
        tag: c_int,
        status: *mut ffi::MPI_Status,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the caller's contract.
        return unsafe { ffi::MPI_Recv_c(ptr, count, dt, source, tag, self.raw, status) };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: per the caller's contract; `n` of `span` are `count` of `dt`.
        unsafe {
            spanning(dt, count, "recv", |n, span| {
                ffi::MPI_Recv(ptr, n, span, source, tag, self.raw, status)
            })
        }
    }

    /// `MPI_Bcast` (`r: Some` for `MPI_Ibcast`) of more than `i32::MAX` elements.
    ///
    /// # Safety
    /// As the ordinary call: `ptr` holds `count` elements of `dt`, valid until completion, and
    /// the caller holds the thread gate.
    #[cold]
    pub(super) unsafe fn bcast_large(
        &self,
        ptr: *mut c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the contract.
        return unsafe {
            match r {
                None => ffi::MPI_Bcast_c(ptr, count, dt, root, self.raw),
                Some(r) => ffi::MPI_Ibcast_c(ptr, count, dt, root, self.raw, r),
            }
        };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: per the contract; `n` of `span` are `count` elements of `dt`.
        unsafe {
            spanning(dt, count, "bcast", |n, span| match r {
                None => ffi::MPI_Bcast(ptr, n, span, root, self.raw),
                Some(r) => ffi::MPI_Ibcast(ptr, n, span, root, self.raw, r),
            })
        }
    }

    /// A reduction of more than `i32::MAX` elements (`r: Some` for the nonblocking form, which
    /// needs the `_c` calls). `s` may be `MPI_IN_PLACE`; `count` is the result's length (one
    /// block, for `reduce_scatter_block`).
    ///
    /// Without `_c` calls, every rank reduces chunks of 2³⁰ elements in the same order, so the
    /// calls match. A blocking `reduce_scatter_block` becomes one chunked reduction per block,
    /// to its rank, on every MPI (see [`Communicator::reduce_scatter_large`]); a nonblocking
    /// one without `_c` calls is reduced by a span op (see [`Communicator::reduce_spanned`]).
    ///
    /// # Safety
    /// As the ordinary call: the buffers hold what MPI reads and writes, and the caller holds
    /// the thread gate.
    #[cold]
    pub(super) unsafe fn reduce_large(
        &self,
        what: Reduction,
        s: *const c_void,
        d: *mut c_void,
        count: ffi::MPI_Count,
        o: Operand,
        r: Req<'_>,
    ) -> c_int {
        if let (Reduction::Like(ReduceFn::ScatterBlock), None) = (what, &r) {
            // SAFETY: the caller holds the gate.
            let extent = match unsafe { extent_of(o.datatype) } {
                Ok(extent) => extent,
                Err(code) => return code,
            };
            let count = usize::try_from(count).unwrap_or(0);
            let block = |owner: usize| (owner * count * extent, count);
            // SAFETY: per the contract: `size` blocks of `count` elements.
            return unsafe { self.reduce_per_owner(s, d, block, o, extent) };
        }
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the contract.
        unsafe {
            let (c, dt, op) = (self.raw, o.datatype, o.op);
            match (what, r) {
                (Reduction::Reduce(root), None) => ffi::MPI_Reduce_c(s, d, count, dt, op, root, c),
                (Reduction::Reduce(root), Some(r)) => {
                    ffi::MPI_Ireduce_c(s, d, count, dt, op, root, c, r)
                }
                (Reduction::Like(f), None) => match f {
                    ReduceFn::Scan => ffi::MPI_Scan_c(s, d, count, dt, op, c),
                    ReduceFn::Exscan => ffi::MPI_Exscan_c(s, d, count, dt, op, c),
                    ReduceFn::All => ffi::MPI_Allreduce_c(s, d, count, dt, op, c),
                    ReduceFn::ScatterBlock => ffi::MPI_ERR_INTERN, // per owner, above
                },
                (Reduction::Like(f), Some(r)) => match f {
                    ReduceFn::All => ffi::MPI_Iallreduce_c(s, d, count, dt, op, c, r),
                    ReduceFn::Scan => ffi::MPI_Iscan_c(s, d, count, dt, op, c, r),
                    ReduceFn::Exscan => ffi::MPI_Iexscan_c(s, d, count, dt, op, c, r),
                    ReduceFn::ScatterBlock => {
                        ffi::MPI_Ireduce_scatter_block_c(s, d, count, dt, op, c, r)
                    }
                },
            }
        }
        #[cfg(not(ferrompi_large_count))]
        {
            if let Some(r) = r {
                // SAFETY: per the contract.
                return unsafe { self.reduce_spanned(what, s, d, count, o, r) };
            }
            // SAFETY: the caller holds the gate.
            let extent = match unsafe { extent_of(o.datatype) } {
                Ok(extent) => extent,
                Err(code) => return code,
            };
            let count = usize::try_from(count).unwrap_or(0);
            let in_place = s == ffi::MPI_IN_PLACE.cast_const();
            let at = |p: *const c_void, offset: usize| {
                if in_place && p == s {
                    p
                } else {
                    p.wrapping_byte_add(offset)
                }
            };
            let (c, dt, op) = (self.raw, o.datatype, o.op);
            match what {
                Reduction::Reduce(root) => in_chunks(count, extent, |(offset, n)| {
                    let (s, d) = (at(s, offset), d.wrapping_byte_add(offset));
                    // SAFETY: chunk `offset..offset + n` of buffers holding `count` elements.
                    unsafe { ffi::MPI_Reduce(s, d, n, dt, op, root, c) }
                }),
                Reduction::Like(f) => in_chunks(count, extent, |(offset, n)| {
                    let (s, d) = (at(s, offset), d.wrapping_byte_add(offset));
                    // SAFETY: chunk `offset..offset + n` of buffers holding `count` elements.
                    unsafe {
                        match f {
                            ReduceFn::Scan => ffi::MPI_Scan(s, d, n, dt, op, c),
                            ReduceFn::Exscan => ffi::MPI_Exscan(s, d, n, dt, op, c),
                            ReduceFn::All => ffi::MPI_Allreduce(s, d, n, dt, op, c),
                            ReduceFn::ScatterBlock => ffi::MPI_ERR_INTERN, // per owner, above
                        }
                    }
                }),
            }
        }
    }

    /// Blocking `reduce_scatter` where a block does not fit `int`: one chunked reduction per
    /// block, to its rank ([`Communicator::reduce_per_owner`]), on every MPI. MPICH 4.0.2's
    /// `MPI_Reduce_scatter_c` and `MPI_Ireduce_scatter_c` return wrong results with such
    /// blocks (reproduced in C), and MPI 3.1 has no large-count form. Returns MPI's code.
    ///
    /// # Safety
    /// `s` (or `d`, in place) holds the packed input `blocks` describes and `d` this rank's
    /// block, valid for the call; the caller holds the thread gate.
    #[cold]
    pub(super) unsafe fn reduce_scatter_large<T: Equivalence>(
        &self,
        s: *const c_void,
        d: *mut c_void,
        blocks: &Partition<T>,
        o: Operand,
    ) -> c_int {
        let block = |owner: usize| {
            let b = blocks.block(owner);
            (b.bytes, b.count)
        };
        let extent = size_of::<T>() / T::ELEMENTS.max(1);
        // SAFETY: per the contract.
        unsafe { self.reduce_per_owner(s, d, block, o, extent) }
    }

    /// A reduce-scatter as, for each rank in turn, a chunked `MPI_Reduce` of
    /// its block to it. `block(owner)` is the block's byte offset in the input and its count
    /// in elements of `o`'s datatype, of `extent` bytes. In place (`s` is `MPI_IN_PLACE`), `d`
    /// holds the input and the result moves to its start at the end.
    ///
    /// # Safety
    /// The blocks lie within the input (`s`, or `d` in place); `d` has room for this rank's
    /// block; the caller holds the thread gate.
    unsafe fn reduce_per_owner(
        &self,
        s: *const c_void,
        d: *mut c_void,
        block: impl Fn(usize) -> (usize, usize),
        o: Operand,
        extent: usize,
    ) -> c_int {
        let in_place = s == ffi::MPI_IN_PLACE.cast_const();
        let (c, dt, op) = (self.raw, o.datatype, o.op);
        for owner in 0..self.size {
            let (first, count) = block(usize::try_from(owner).unwrap_or(0));
            let mine = owner == self.rank;
            let rc = in_chunks(count, extent, |(offset, n)| {
                let input = d.wrapping_byte_add(first + offset);
                // SAFETY: chunk `offset..offset + n` of block `owner` of the input and of this
                // rank's result.
                unsafe {
                    match (in_place, mine) {
                        (true, true) => ffi::MPI_Reduce(s, input, n, dt, op, owner, c),
                        (true, false) => ffi::MPI_Reduce(input, d, n, dt, op, owner, c),
                        (false, _) => ffi::MPI_Reduce(
                            s.wrapping_byte_add(first + offset),
                            d.wrapping_byte_add(offset),
                            n,
                            dt,
                            op,
                            owner,
                            c,
                        ),
                    }
                }
            });
            if rc != ffi::MPI_SUCCESS {
                return rc;
            }
        }
        let (first, count) = block(usize::try_from(self.rank).unwrap_or(0));
        if in_place && first > 0 {
            // SAFETY: this rank's block of `d` holds the result, which belongs at its start;
            // `copy` allows the overlap.
            unsafe {
                std::ptr::copy(d.cast::<u8>().add(first), d.cast::<u8>(), count * extent);
            }
        }
        ffi::MPI_SUCCESS
    }

    /// A nonblocking reduction of more than `i32::MAX` elements without `_c` calls: one element
    /// of a spanning type, reduced by a span op (see `span_op`). The type is freed once the
    /// operation has started (MPI-4.0 §5.1.9).
    ///
    /// # Safety
    /// As [`Communicator::reduce_large`].
    #[cfg(not(ferrompi_large_count))]
    unsafe fn reduce_spanned(
        &self,
        what: Reduction,
        s: *const c_void,
        d: *mut c_void,
        count: ffi::MPI_Count,
        o: Operand,
        r: &mut ffi::MPI_Request,
    ) -> c_int {
        // SAFETY: the caller holds the gate.
        let (span, o) = match unsafe { span_op::spanned(o, count) } {
            Ok(spanned) => spanned,
            Err(e) => return error_code(e),
        };
        let (c, dt, op) = (self.raw, o.datatype, o.op);
        // SAFETY: per the contract; one element of `dt` is the `count` elements of the buffers.
        let rc = unsafe {
            match what {
                Reduction::Reduce(root) => ffi::MPI_Ireduce(s, d, 1, dt, op, root, c, r),
                Reduction::Like(ReduceFn::All) => ffi::MPI_Iallreduce(s, d, 1, dt, op, c, r),
                Reduction::Like(ReduceFn::Scan) => ffi::MPI_Iscan(s, d, 1, dt, op, c, r),
                Reduction::Like(ReduceFn::Exscan) => ffi::MPI_Iexscan(s, d, 1, dt, op, c, r),
                Reduction::Like(ReduceFn::ScatterBlock) => {
                    ffi::MPI_Ireduce_scatter_block(s, d, 1, dt, op, c, r)
                }
            }
        };
        drop(span);
        rc
    }

    /// `gather`, `scatter`, `allgather`, `alltoall` (`r: Some` for the nonblocking form) where
    /// a rank's block has more than `i32::MAX` elements. Every rank's block has the same size,
    /// so one spanning type describes each block on the path without `_c` calls.
    ///
    /// # Safety
    /// As [`Communicator::raw_move`].
    #[cold]
    pub(super) unsafe fn move_large(
        &self,
        f: MoveFn,
        (s, sn): (*const c_void, ffi::MPI_Count),
        (d, dn): (*mut c_void, ffi::MPI_Count),
        dt: ffi::MPI_Datatype,
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the contract.
        unsafe {
            let c = self.raw;
            match (f, r) {
                (MoveFn::Gather, None) => ffi::MPI_Gather_c(s, sn, dt, d, dn, dt, root, c),
                (MoveFn::Gather, Some(r)) => ffi::MPI_Igather_c(s, sn, dt, d, dn, dt, root, c, r),
                (MoveFn::Scatter, None) => ffi::MPI_Scatter_c(s, sn, dt, d, dn, dt, root, c),
                (MoveFn::Scatter, Some(r)) => ffi::MPI_Iscatter_c(s, sn, dt, d, dn, dt, root, c, r),
                (MoveFn::Allgather, None) => ffi::MPI_Allgather_c(s, sn, dt, d, dn, dt, c),
                (MoveFn::Allgather, Some(r)) => ffi::MPI_Iallgather_c(s, sn, dt, d, dn, dt, c, r),
                (MoveFn::Alltoall, None) => ffi::MPI_Alltoall_c(s, sn, dt, d, dn, dt, c),
                (MoveFn::Alltoall, Some(r)) => ffi::MPI_Ialltoall_c(s, sn, dt, d, dn, dt, c, r),
            }
        }
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: per the contract; each rank's block is one element of `block`.
        unsafe {
            spanning(dt, sn.max(dn), f.name(r.is_some()), |one, block| {
                let blocks = |n: ffi::MPI_Count| if n == 0 { 0 } else { ffi::MPI_Count::from(one) };
                self.raw_move(f, s, blocks(sn), d, blocks(dn), block, root, r)
            })
        }
    }
}
