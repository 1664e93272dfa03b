//! Reductions of more than `i32::MAX` elements that must be one MPI call: nonblocking ones on
//! an MPI without MPI-4's `_c` calls, and persistent ones on every MPI.
//!
//! Such a reduction is one request, so it cannot be chunked. Instead the whole buffer
//! becomes one element of a [`Spanning`] datatype, and the reduction uses a *span op*: a
//! user-defined operation (MPI-4.0 §6.9.5) that applies the caller's operation to the
//! predefined elements inside, with `MPI_Reduce_local` (§6.9.7) over chunks that fit an `int`.
//!
//! MPI hands a user function no user data, only the datatype, so the spanning type carries the
//! caller's op and element datatype as two attributes (§7.7.4). The values are the handles
//! themselves, so there is nothing to free. Two span ops exist per process, one commutative and
//! one not, chosen with `MPI_Op_commutative`; they are created on first use and never freed.

use super::{CHUNK, Spanning};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::op::Operand;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// The process-wide span ops and the keyvals their datatypes carry.
struct SpanOps {
    commutative: ffi::MPI_Op,
    non_commutative: ffi::MPI_Op,
    op_key: c_int,
    datatype_key: c_int,
}

// SAFETY: MPI handles, created once and never mutated; MPI may be called with them from any
// thread that passes the thread gate.
unsafe impl Send for SpanOps {}
// SAFETY: as above.
unsafe impl Sync for SpanOps {}

static SPAN_OPS: OnceLock<SpanOps> = OnceLock::new();

/// A handle stored as an attribute value: its bytes in a pointer-sized word. MPI handles are
/// pointers (Open MPI) or integers (MPICH), never larger than a pointer.
fn to_attribute<H: Copy>(handle: H) -> *mut c_void {
    const { assert!(size_of::<H>() <= size_of::<usize>()) };
    let mut word = 0usize;
    // SAFETY: copies the handle's bytes into a word at least as large.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&raw const handle).cast::<u8>(),
            (&raw mut word).cast::<u8>(),
            size_of::<H>(),
        );
    }
    std::ptr::without_provenance_mut(word)
}

/// The handle [`to_attribute`] stored.
///
/// # Safety
/// `value` is what `to_attribute::<H>` made of a valid `H`.
unsafe fn from_attribute<H: Copy>(value: *mut c_void) -> H {
    const { assert!(size_of::<H>() <= size_of::<usize>()) };
    let word = value.addr();
    // SAFETY: per the contract, the word holds the bytes of a valid `H`.
    unsafe { (&raw const word).cast::<H>().read_unaligned() }
}

/// Creates the span ops and keyvals on first use.
///
/// # Safety
/// The caller holds the thread gate.
unsafe fn span_ops(operation: &'static str) -> Result<&'static SpanOps> {
    if let Some(ops) = SPAN_OPS.get() {
        return Ok(ops);
    }
    // SAFETY: (whole block) standard constructors with valid callbacks; each writes a handle.
    // Creating them twice (two threads racing) would only leak one set.
    let ops = unsafe {
        let (mut op_key, mut datatype_key) = (0, 0);
        for key in [&mut op_key, &mut datatype_key] {
            check(
                ffi::MPI_Type_create_keyval(
                    Some(crate::op::no_copy),
                    Some(crate::op::no_delete),
                    key,
                    std::ptr::null_mut(),
                ),
                operation,
            )?;
        }
        let mut commutative = ffi::MPI_OP_NULL;
        let mut non_commutative = ffi::MPI_OP_NULL;
        check(
            ffi::MPI_Op_create(Some(span_reduce), 1, &mut commutative),
            operation,
        )?;
        check(
            ffi::MPI_Op_create(Some(span_reduce), 0, &mut non_commutative),
            operation,
        )?;
        SpanOps {
            commutative,
            non_commutative,
            op_key,
            datatype_key,
        }
    };
    Ok(SPAN_OPS.get_or_init(|| ops))
}

/// One element of a spanning datatype covering `count` elements of `o`'s datatype, and the span
/// op that reduces it with `o`'s op: the operand for one reduction call with count 1. The
/// caller frees the type (on drop) once the call has started.
///
/// # Safety
/// The caller holds the thread gate (also when the type is dropped).
pub(crate) unsafe fn spanned(o: Operand, count: ffi::MPI_Count) -> Result<(Spanning, Operand)> {
    const OP: &str = "reduce";
    // SAFETY: the caller holds the gate.
    let (ops, span) = unsafe { (span_ops(OP)?, Spanning::new(o.datatype, count, OP)?) };
    let mut commute: c_int = 0;
    // SAFETY: valid handles: an op, the new type and the keyvals; the values are handle bytes.
    unsafe {
        check(ffi::MPI_Op_commutative(o.op, &mut commute), OP)?;
        check(
            ffi::MPI_Type_set_attr(span.raw, ops.op_key, to_attribute(o.op)),
            OP,
        )?;
        check(
            ffi::MPI_Type_set_attr(span.raw, ops.datatype_key, to_attribute(o.datatype)),
            OP,
        )?;
    }
    let op = if commute != 0 {
        ops.commutative
    } else {
        ops.non_commutative
    };
    let operand = Operand {
        op,
        datatype: span.raw,
        per_value: 1,
    };
    Ok((span, operand))
}

/// The span ops' function: `len` spanning elements of `datatype`, each reduced with the op and
/// element type it carries. It cannot return an error, so a failure aborts the job.
///
/// A callback MPI calls, not a prototype of MPI: `MPI_Op_create` checks its signature against
/// the `MPI_User_function` type the generated bindings declare.
unsafe extern "C" fn span_reduce(
    input: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    datatype: *mut ffi::MPI_Datatype,
) {
    // SAFETY: MPI passes valid `len` and `datatype` pointers, and buffers of `len` elements of
    // the datatype, which is a spanning type made by `spanned` (the only one these ops see).
    let outcome = unsafe { reduce_spans(input, inout, *len, *datatype) };
    if let Err(e) = outcome {
        eprintln!(
            "ferrompi: a large-count reduction failed inside MPI ({e}); aborting the MPI job"
        );
        crate::fault::abort_world(105);
    }
}

/// # Safety
/// As [`span_reduce`]'s arguments.
unsafe fn reduce_spans(
    input: *mut c_void,
    inout: *mut c_void,
    len: c_int,
    span: ffi::MPI_Datatype,
) -> Result<()> {
    const OP: &str = "reduce";
    let ops = SPAN_OPS.get().ok_or_else(|| ErrorKind::InvalidArgument {
        operation: OP,
        reason: "span op called before it was created".into(),
    })?;
    let attribute = |key: c_int| -> Result<*mut c_void> {
        let (mut value, mut flag): (*mut c_void, c_int) = (std::ptr::null_mut(), 0);
        // SAFETY: a valid datatype and keyval; writes the value and the flag.
        let rc = unsafe { ffi::MPI_Type_get_attr(span, key, (&raw mut value).cast(), &mut flag) };
        check(rc, OP)?;
        if flag == 0 {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: "span op called on a datatype without its attributes".into(),
            }
            .into());
        }
        Ok(value)
    };
    // SAFETY: the span's type (see `Spanning`) got these attributes from `to_attribute` of an
    // op and a datatype handle, under these keys only.
    let op: ffi::MPI_Op = unsafe { from_attribute(attribute(ops.op_key)?) };
    // SAFETY: as above.
    let element: ffi::MPI_Datatype = unsafe { from_attribute(attribute(ops.datatype_key)?) };
    let (mut span_size, mut element_size, mut lb, mut extent) = (0, 0, 0, 0);
    // SAFETY: valid datatypes; each call writes its outputs.
    unsafe {
        check(ffi::MPI_Type_size_x(span, &mut span_size), OP)?;
        check(ffi::MPI_Type_size_x(element, &mut element_size), OP)?;
        check(ffi::MPI_Type_get_extent(element, &mut lb, &mut extent), OP)?;
    }
    let per_span = usize::try_from(span_size / element_size.max(1)).unwrap_or(0);
    let total = per_span * usize::try_from(len).unwrap_or(0);
    let extent = usize::try_from(extent).unwrap_or(0);
    let mut done = 0;
    while done < total {
        let n = (total - done).min(CHUNK);
        let at = done * extent;
        // SAFETY: elements `done..done + n` of both buffers, which hold `total` elements; the
        // op is the caller's, valid on `element` (it was given for that type).
        let rc = unsafe {
            ffi::MPI_Reduce_local(
                input.byte_add(at),
                inout.byte_add(at),
                c_int::try_from(n).unwrap_or(c_int::MAX),
                element,
                op,
            )
        };
        check(rc, OP)?;
        done += n;
    }
    Ok(())
}
