//! Counts above `i32::MAX` elements (MPI-4.0 §2.5.8, "large counts").
//!
//! The ordinary calls take a C `int` count. When a buffer holds more elements than that, the
//! operations below take a separate, `#[cold]` path, so the common path is unchanged:
//!
//! | MPI | point-to-point, `bcast` | `reduce`, `allreduce` |
//! |---|---|---|
//! | with MPI-4 `_c` calls (MPICH 4) | `MPI_Send_c` (all modes), `MPI_Recv_c`, `MPI_Sendrecv_c`, `MPI_Bcast_c` | `MPI_Reduce_c`, `MPI_Allreduce_c` |
//! | without (Open MPI 4.1) | one element of a derived datatype spanning the buffer | chunks of 2³⁰ elements |
//!
//! Point-to-point here means the blocking calls: `send`, `ssend`, `bsend`, `rsend`, `recv`,
//! `sendrecv`. Reductions are chunked because predefined operations apply only to predefined
//! datatypes. Both sides of a message may use either path: MPI matches type signatures, which a
//! derived datatype built from the same basic type preserves. The other operations (nonblocking
//! calls, per-rank blocks of the other collectives) return
//! [`Error::CountOverflow`](crate::Error::CountOverflow) for such buffers.

use super::Communicator;
use super::p2p::SendMode;
use crate::datatype::Equivalence;
#[cfg(not(ferrompi_large_count))]
use crate::error::Error;
use crate::error::{Result, check};
use crate::ffi;
use std::ffi::{c_int, c_void};

/// Elements per chunk of the fallback paths.
#[cfg(not(ferrompi_large_count))]
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
#[cfg(not(ferrompi_large_count))]
pub(crate) struct Spanning {
    raw: ffi::MPI_Datatype,
}

#[cfg(not(ferrompi_large_count))]
impl Spanning {
    /// Builds it; the caller holds the thread gate.
    pub(crate) fn new(
        base: ffi::MPI_Datatype,
        elements: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<Self> {
        let elements = u64::try_from(elements).unwrap_or(0);
        let chunk = CHUNK as u64;
        let (chunks, rest) = (elements / chunk, elements % chunk);
        let int = |n: u64| {
            c_int::try_from(n).map_err(|_| Error::CountOverflow {
                operation,
                count: u128::from(n),
                max: i64::from(c_int::MAX),
            })
        };
        let mut parts: Vec<ffi::MPI_Datatype> = Vec::new();
        let free_all = |parts: &mut Vec<ffi::MPI_Datatype>| {
            for t in parts.iter_mut() {
                // SAFETY: types we created and no longer need (MPI keeps what derived ones use).
                unsafe { ffi::MPI_Type_free(t) };
            }
        };
        // SAFETY: (whole block) standard datatype constructors on a predefined base type;
        // every handle created is freed below, on success or error.
        unsafe {
            let (mut lb, mut extent) = (0, 0);
            check(
                ffi::MPI_Type_get_extent(base, &mut lb, &mut extent),
                operation,
            )?;
            let mut one_chunk = ffi::ferrompi_MPI_DATATYPE_NULL;
            check(
                ffi::MPI_Type_contiguous(int(chunk)?, base, &mut one_chunk),
                operation,
            )?;
            parts.push(one_chunk);
            let mut body = ffi::ferrompi_MPI_DATATYPE_NULL;
            if let Err(e) = check(
                ffi::MPI_Type_contiguous(int(chunks)?, one_chunk, &mut body),
                operation,
            ) {
                free_all(&mut parts);
                return Err(e);
            }
            parts.push(body);
            let mut whole = body;
            if rest > 0 {
                let mut tail = ffi::ferrompi_MPI_DATATYPE_NULL;
                if let Err(e) = check(
                    ffi::MPI_Type_contiguous(int(rest)?, base, &mut tail),
                    operation,
                ) {
                    free_all(&mut parts);
                    return Err(e);
                }
                parts.push(tail);
                let tail_at = ffi::MPI_Aint::try_from(chunks * chunk).unwrap_or(0) * extent;
                let (lengths, displs, types) = ([1, 1], [0, tail_at], [body, tail]);
                let rc = ffi::MPI_Type_create_struct(
                    2,
                    lengths.as_ptr(),
                    displs.as_ptr(),
                    types.as_ptr(),
                    &mut whole,
                );
                if let Err(e) = check(rc, operation) {
                    free_all(&mut parts);
                    return Err(e);
                }
            } else {
                parts.pop(); // `body` is the whole type: kept, not freed
            }
            let rc = ffi::MPI_Type_commit(&mut whole);
            free_all(&mut parts);
            if let Err(e) = check(rc, operation) {
                ffi::MPI_Type_free(&mut whole);
                return Err(e);
            }
            Ok(Spanning { raw: whole })
        }
    }
}

#[cfg(not(ferrompi_large_count))]
impl Drop for Spanning {
    fn drop(&mut self) {
        // SAFETY: a committed type we own; the operation using it has completed (blocking).
        unsafe { ffi::MPI_Type_free(&mut self.raw) };
    }
}

impl Communicator<'_> {
    /// A blocking send in `mode` of more than `i32::MAX` elements. The caller checked rank and
    /// tag and holds the thread gate; `ptr` holds `count` elements of `dt`.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_large(
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
        // SAFETY: per the caller's contract; one element of `span` is `count` elements of `dt`.
        let rc = unsafe {
            let span = Spanning::new(dt, count, operation)?;
            mode.call(ptr, 1, span.raw, dest, tag, self.raw)
        };
        check(rc, operation)
    }

    /// `MPI_Sendrecv` where either side has more than `i32::MAX` elements; as
    /// [`Communicator::send_large`], for both buffers.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sendrecv_large(
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
        {
            let spans = Spanning::new(send_dt, send_count, "sendrecv")
                .and_then(|s| Ok((s, Spanning::new(recv_dt, recv_count, "sendrecv")?)));
            let (s, r) = match spans {
                Ok(spans) => spans,
                Err(Error::Mpi { code, .. }) => return code,
                Err(_) => return ffi::MPI_ERR_COUNT,
            };
            // SAFETY: per the caller's contract; each span is one element covering its buffer.
            unsafe {
                ffi::MPI_Sendrecv(
                    send, 1, s.raw, dest, send_tag, recv, 1, r.raw, source, recv_tag, self.raw,
                    status,
                )
            }
        }
    }

    /// `MPI_Recv` of more than `i32::MAX` elements; as [`Communicator::send_large`].
    #[cold]
    pub(crate) fn recv_large(
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
        {
            let span = match Spanning::new(dt, count, "recv") {
                Ok(span) => span,
                Err(Error::Mpi { code, .. }) => return code,
                Err(_) => return ffi::MPI_ERR_COUNT,
            };
            // SAFETY: per the caller's contract; one element of `span` is `count` of `dt`.
            unsafe { ffi::MPI_Recv(ptr, 1, span.raw, source, tag, self.raw, status) }
        }
    }

    /// `MPI_Bcast` of more than `i32::MAX` elements; as [`Communicator::send_large`].
    #[cold]
    pub(crate) fn bcast_large(
        &self,
        ptr: *mut c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        root: c_int,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the caller's contract.
        return unsafe { ffi::MPI_Bcast_c(ptr, count, dt, root, self.raw) };
        #[cfg(not(ferrompi_large_count))]
        {
            let span = match Spanning::new(dt, count, "bcast") {
                Ok(span) => span,
                Err(Error::Mpi { code, .. }) => return code,
                Err(_) => return ffi::MPI_ERR_COUNT,
            };
            // SAFETY: per the caller's contract.
            unsafe { ffi::MPI_Bcast(ptr, 1, span.raw, root, self.raw) }
        }
    }

    /// `MPI_Reduce` (`root: Some`) or `MPI_Allreduce` (`None`) of more than `i32::MAX`
    /// elements, chunked where there are no `_c` calls. `send` may be `MPI_IN_PLACE`.
    ///
    /// # Safety
    /// As the caller's contract for the ordinary call: `send`/`recv` hold `count` elements of
    /// `dt` (each where MPI uses it) and the caller holds the thread gate.
    #[cold]
    pub(crate) unsafe fn reduce_large(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        root: Option<c_int>,
    ) -> c_int {
        #[cfg(ferrompi_large_count)]
        // SAFETY: per the contract.
        unsafe {
            match root {
                Some(root) => ffi::MPI_Reduce_c(send, recv, count, dt, op, root, self.raw),
                None => ffi::MPI_Allreduce_c(send, recv, count, dt, op, self.raw),
            }
        }
        #[cfg(not(ferrompi_large_count))]
        {
            let (mut lb, mut extent) = (0, 0);
            // SAFETY: a valid datatype; writes two integers.
            let rc = unsafe { ffi::MPI_Type_get_extent(dt, &mut lb, &mut extent) };
            if rc != ffi::MPI_SUCCESS {
                return rc;
            }
            let extent = usize::try_from(extent).unwrap_or(0);
            let total = usize::try_from(count).unwrap_or(0);
            let in_place = send == crate::comm::collective::in_place().cast_const();
            let mut done = 0usize;
            while done < total {
                let n = (total - done).min(CHUNK);
                let offset = done * extent;
                // Every rank chunks the same way, so the calls match.
                let s = if in_place {
                    send
                } else {
                    send.wrapping_byte_add(offset)
                };
                let d = if recv.is_null() {
                    recv
                } else {
                    recv.wrapping_byte_add(offset)
                };
                let n = c_int::try_from(n).unwrap_or(c_int::MAX);
                // SAFETY: chunk `done..done + n` of buffers holding `total` elements.
                let rc = unsafe {
                    match root {
                        Some(root) => ffi::MPI_Reduce(s, d, n, dt, op, root, self.raw),
                        None => ffi::MPI_Allreduce(s, d, n, dt, op, self.raw),
                    }
                };
                if rc != ffi::MPI_SUCCESS {
                    return rc;
                }
                done += CHUNK;
            }
            ffi::MPI_SUCCESS
        }
    }
}
