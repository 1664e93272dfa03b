//! Packing (MPI-4.0 §5.2): copying typed data into a byte buffer and back, in the MPI's own
//! representation ([`Communicator::pack`](crate::Communicator::pack), `unpack`, `pack_size`)
//! or in the portable `external32` one ([`pack_external`], [`unpack_external`],
//! [`pack_external_size`]).
//!
//! `external32` takes any datatype on Open MPI; elsewhere only the basic predefined ones
//! (numbers, `bool`, bytes and arrays of them), because MPICH aborts the process on a struct
//! datatype of mixed types there: a derived type is an [`ErrorKind::Unsupported`] instead.
//!
//! What is packed is a slice of [`Equivalence`] values or a [`View`]; what is unpacked into,
//! a slice or a [`ViewMut`]. Every call checks, before MPI runs, that the position is inside
//! the byte buffer and that the buffer has room from there for the bound `MPI_Pack_size`
//! (or `MPI_Pack_external_size`) gives, so MPI never reads or writes past either buffer.
//!
//! ```
//! # let mpi = ferrompi::Mpi::init()?;
//! # let world = mpi.world();
//! use ferrompi::datatype::pack::{pack_external, pack_external_size, unpack_external};
//! let values = [1.5f64, -2.0];
//! let mut bytes = vec![0u8; pack_external_size(&values[..])?];
//! let mut position = 0;
//! pack_external(&values[..], &mut bytes, &mut position)?;
//! assert_eq!(&bytes[..8], &1.5f64.to_be_bytes()); // external32 is big-endian
//! let (mut back, mut at) = ([0.0f64; 2], 0);
//! unpack_external(&bytes, &mut at, &mut back[..])?;
//! assert_eq!((back, at), (values, 16));
//! # Ok::<(), ferrompi::Error>(())
//! ```

use super::view::{View, ViewMut};
use super::{Equivalence, count_of, recv_ptr, repair, send_ptr};
use crate::env::enter;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::{c_int, c_void};

mod sealed {
    pub trait Sealed {}
}

/// What can be packed: a slice of [`Equivalence`] values, or a [`View`]. Sealed.
pub trait Packable: sealed::Sealed {
    /// The address, count and datatype MPI reads.
    #[doc(hidden)]
    fn pack_args(
        &self,
        operation: &'static str,
    ) -> Result<(*const c_void, c_int, ffi::MPI_Datatype)>;
}

/// What can be unpacked into: a slice of [`Equivalence`] values, or a [`ViewMut`]. Sealed.
pub trait Unpackable: sealed::Sealed {
    /// The address, count and datatype MPI writes.
    #[doc(hidden)]
    fn unpack_args(
        &mut self,
        operation: &'static str,
    ) -> Result<(*mut c_void, c_int, ffi::MPI_Datatype)>;
    /// Makes the values valid again after MPI wrote into them.
    #[doc(hidden)]
    fn repair(&mut self);
}

impl<T: Equivalence> sealed::Sealed for [T] {}
impl sealed::Sealed for View<'_> {}
impl<T: Equivalence> sealed::Sealed for ViewMut<'_, T> {}

impl<T: Equivalence> Packable for [T] {
    fn pack_args(
        &self,
        operation: &'static str,
    ) -> Result<(*const c_void, c_int, ffi::MPI_Datatype)> {
        Ok((
            send_ptr(self),
            count_of::<T>(self.len(), operation)?,
            T::datatype().as_raw(),
        ))
    }
}

impl Packable for View<'_> {
    fn pack_args(&self, _: &'static str) -> Result<(*const c_void, c_int, ffi::MPI_Datatype)> {
        Ok(self.raw())
    }
}

impl<T: Equivalence> Unpackable for [T] {
    fn unpack_args(
        &mut self,
        operation: &'static str,
    ) -> Result<(*mut c_void, c_int, ffi::MPI_Datatype)> {
        let count = count_of::<T>(self.len(), operation)?;
        Ok((recv_ptr(self), count, T::datatype().as_raw()))
    }
    fn repair(&mut self) {
        repair(self);
    }
}

impl<T: Equivalence> Unpackable for ViewMut<'_, T> {
    fn unpack_args(&mut self, _: &'static str) -> Result<(*mut c_void, c_int, ffi::MPI_Datatype)> {
        Ok(self.raw())
    }
    fn repair(&mut self) {
        ViewMut::repair(self);
    }
}

/// Refuses a position outside a byte buffer of `len`, or too little room from it for `need`.
pub(crate) fn check_room(
    len: usize,
    position: usize,
    need: usize,
    operation: &'static str,
) -> Result<()> {
    if position > len || len - position < need {
        return Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "{need} bytes from position {position} do not fit a byte buffer of {len}"
            ),
        }
        .into());
    }
    Ok(())
}

const EXTERNAL32: &std::ffi::CStr = c"external32";

/// Whether `external32` may be asked of `datatype` here. MPICH (4.0.2 and 5.0.2 measured, and
/// the MPI-5 ABI over it) aborts the process in `MPI_Pack_external_size` on a struct datatype
/// of more than one basic type, so outside Open MPI only the crate's basic predefined types
/// (numbers, `bool`, bytes, and arrays of them) are packed in `external32`; `pack` packs the
/// rest.
fn external32_allowed(datatype: ffi::MPI_Datatype, operation: &'static str) -> Result<()> {
    if cfg!(ferrompi_family = "openmpi") {
        return Ok(());
    }
    #[cfg(ferrompi_c_bool)]
    let boolean = [ffi::MPI_C_BOOL];
    #[cfg(not(ferrompi_c_bool))]
    let boolean: [ffi::MPI_Datatype; 0] = [];
    let basic = [
        ffi::MPI_INT8_T,
        ffi::MPI_INT16_T,
        ffi::MPI_INT32_T,
        ffi::MPI_INT64_T,
        ffi::MPI_UINT8_T,
        ffi::MPI_UINT16_T,
        ffi::MPI_UINT32_T,
        ffi::MPI_UINT64_T,
        ffi::MPI_FLOAT,
        ffi::MPI_DOUBLE,
        ffi::MPI_BYTE,
    ];
    if basic.contains(&datatype) || boolean.contains(&datatype) {
        Ok(())
    } else {
        Err(ErrorKind::Unsupported {
            operation,
            reason: "external32 of derived datatypes is only offered on Open MPI (MPICH aborts \
                     on structs of mixed types); use Communicator::pack"
                .into(),
        }
        .into())
    }
}

/// The bytes `input` takes packed in `external32` (`MPI_Pack_external_size`, MPI-4.0 §5.2.3):
/// an upper bound, exact for the predefined types.
///
/// # Errors
/// [`ErrorKind::Unsupported`] for a derived datatype outside Open MPI (see the module docs);
/// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`], [`ErrorKind::NotInitialized`],
/// [`ErrorKind::AlreadyFinalized`]; [`ErrorKind::Mpi`].
pub fn pack_external_size(input: &(impl Packable + ?Sized)) -> Result<usize> {
    const OP: &str = "pack_external_size";
    let (_, count, datatype) = input.pack_args(OP)?;
    external32_allowed(datatype, OP)?;
    let mut size: ffi::MPI_Aint = 0;
    let _gate = enter(OP)?;
    // SAFETY: a committed datatype and a NUL-terminated representation name; writes one Aint.
    let rc =
        unsafe { ffi::MPI_Pack_external_size(EXTERNAL32.as_ptr(), count, datatype, &mut size) };
    check(rc, OP)?;
    Ok(usize::try_from(size).unwrap_or(usize::MAX))
}

/// Packs `input` into `out` from byte `*position` in the portable `external32` representation
/// (big-endian, fixed sizes; `MPI_Pack_external`, MPI-4.0 §5.2.3), and moves `*position` past
/// it.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] if `out` has no room from `*position` for
/// [`pack_external_size`]; as [`pack_external_size`].
pub fn pack_external(
    input: &(impl Packable + ?Sized),
    out: &mut [u8],
    position: &mut usize,
) -> Result<()> {
    const OP: &str = "pack_external";
    check_room(out.len(), *position, pack_external_size(input)?, OP)?;
    let (ptr, count, datatype) = input.pack_args(OP)?;
    let mut at = *position as ffi::MPI_Aint;
    let _gate = enter(OP)?;
    // SAFETY: `input` reaches only its own memory (a slice, or a checked view); MPI writes at
    // most the size bound from `at`, which fits in `out` (checked above).
    let rc = unsafe {
        ffi::MPI_Pack_external(
            EXTERNAL32.as_ptr(),
            ptr,
            count,
            datatype,
            recv_ptr(out),
            out.len() as ffi::MPI_Aint,
            &mut at,
        )
    };
    check(rc, OP)?;
    *position = usize::try_from(at).unwrap_or(*position);
    Ok(())
}

/// Unpacks `external32` data from `input` at byte `*position` into `output`
/// (`MPI_Unpack_external`, MPI-4.0 §5.2.3), and moves `*position` past it.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] if `input` does not hold, from `*position`, the bytes
/// [`pack_external_size`] gives for `output`; as [`pack_external_size`].
pub fn unpack_external(
    input: &[u8],
    position: &mut usize,
    output: &mut (impl Unpackable + ?Sized),
) -> Result<()> {
    const OP: &str = "unpack_external";
    let (ptr, count, datatype) = output.unpack_args(OP)?;
    external32_allowed(datatype, OP)?;
    let mut need: ffi::MPI_Aint = 0;
    let rc = {
        let _gate = enter(OP)?;
        // SAFETY: as in `pack_external_size`.
        let rc =
            unsafe { ffi::MPI_Pack_external_size(EXTERNAL32.as_ptr(), count, datatype, &mut need) };
        check(rc, OP)?;
        check_room(
            input.len(),
            *position,
            usize::try_from(need).unwrap_or(usize::MAX),
            OP,
        )?;
        let mut at = *position as ffi::MPI_Aint;
        // SAFETY: MPI reads at most the size bound from `at`, inside `input` (checked above),
        // and writes only the memory `output` reaches (a slice, or a checked view).
        let rc = unsafe {
            ffi::MPI_Unpack_external(
                EXTERNAL32.as_ptr(),
                send_ptr(input),
                input.len() as ffi::MPI_Aint,
                &mut at,
                ptr,
                count,
                datatype,
            )
        };
        *position = usize::try_from(at).unwrap_or(*position);
        rc
    };
    output.repair();
    check(rc, OP)
}
