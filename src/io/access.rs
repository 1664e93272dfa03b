//! Blocking reads and writes (MPI-4.0 §14.4): at explicit offsets, through the individual
//! file pointer and through the shared file pointer, each independent or collective.
//!
//! | positioning | independent | collective |
//! |---|---|---|
//! | explicit offset (§14.4.2) | [`read_at`](File::read_at), [`write_at`](File::write_at) | [`read_at_all`](File::read_at_all), [`write_at_all`](File::write_at_all) |
//! | individual pointer (§14.4.3) | [`read`](File::read), [`write`](File::write) | [`read_all`](File::read_all), [`write_all`](File::write_all) |
//! | shared pointer (§14.4.4) | [`read_shared`](File::read_shared), [`write_shared`](File::write_shared) | [`read_ordered`](File::read_ordered), [`write_ordered`](File::write_ordered) (rank order) |
//!
//! Offsets count etypes of the view (bytes in the default view). A read returns how many
//! values it read: fewer than the buffer holds at the end of the file. A write that moved
//! fewer values than it was given is an error ([`ErrorClass::Io`]),
//! whatever the MPI reported. Buffers of more than `i32::MAX` elements travel as one element
//! of a derived datatype spanning them.
//!
//! ```no_run
//! use ferrompi::io::{AccessMode, File};
//! use std::io::SeekFrom;
//! let mpi = ferrompi::Mpi::init()?;
//! let world = mpi.world();
//! let file = File::open(&world, "log.bin", AccessMode::CREATE | AccessMode::RDWR, None)?;
//! file.write_ordered(&[world.rank() as u32; 2])?; // rank 0's, then rank 1's, …
//! file.seek_shared(SeekFrom::Start(0))?;
//! let mut all = vec![0u32; 2 * world.size() as usize];
//! if world.rank() == 0 {
//!     file.seek(SeekFrom::Start(0))?;
//!     assert_eq!(file.read(&mut all)?, all.len());
//! }
//! # Ok::<(), ferrompi::Error>(())
//! ```

use super::{File, file_error, offset};
use crate::comm::large::{Spanning, large_count};
use crate::datatype::{Equivalence, int_count, recv_ptr, repair, send_ptr};
use crate::env::{enter_on, gated_on};
use crate::error::{ErrorClass, ErrorKind, Result};
use crate::ffi;
use crate::status::Status;
use std::ffi::{c_int, c_void};
use std::io::SeekFrom;

/// How many values of `T` a completed transfer moved: whole values, also at the end of a
/// file that ends inside one (the part is in the buffer, not counted).
pub(crate) fn transferred<T: Equivalence>(status: &Status) -> Result<usize> {
    match status.count::<T>() {
        Ok(n) => Ok(n),
        Err(e) if matches!(e.kind(), ErrorKind::InvalidArgument { .. }) => {
            whole_values::<T>(status)
        }
        Err(e) => Err(e),
    }
}

/// [`transferred`] when the transfer ended inside a value, for which MPI counts no elements
/// (`MPI_UNDEFINED`): the bytes moved, over the bytes of a value. The byte count is
/// `MPI_Get_count` in `MPI_BYTE`, which Open MPI and MPICH both keep in the status (a
/// status holds bytes in both).
#[cold]
#[inline(never)]
fn whole_values<T: Equivalence>(status: &Status) -> Result<usize> {
    const OP: &str = "status_count";
    let mut bytes: c_int = 0;
    {
        let _gate = crate::env::enter(OP)?;
        // SAFETY: a status MPI filled in; MPI writes one int.
        let rc = unsafe { ffi::MPI_Get_count(status.as_raw(), ffi::MPI_BYTE, &mut bytes) };
        crate::error::check(rc, OP)?;
    }
    let per_value = value_bytes::<T>(OP)?;
    match (usize::try_from(bytes), per_value) {
        (Ok(bytes), 1..) => Ok(bytes / per_value),
        _ => Err(ErrorKind::InvalidArgument {
            operation: OP,
            reason: "MPI reported no count for the transfer".into(),
        }
        .into()),
    }
}

/// The bytes of one value of `T` as MPI counts them (`MPI_Type_size` of its element datatype,
/// times its elements): padding excluded.
pub(crate) fn value_bytes<T: Equivalence>(operation: &'static str) -> Result<usize> {
    let mut size: c_int = 0;
    let _gate = crate::env::enter(operation)?;
    // SAFETY: a predefined or committed datatype; MPI writes one int.
    let rc = unsafe { ffi::MPI_Type_size(T::datatype().as_raw(), &mut size) };
    crate::error::check(rc, operation)?;
    Ok(usize::try_from(size)
        .unwrap_or(0)
        .saturating_mul(T::ELEMENTS))
}

/// Where a collective read started, so that the count MPI reports can be checked against
/// the end of the file: ROMIO (MPICH's, at two or more processes) and Open MPI 4.1's OMPIO
/// (at three or more) report a collective read that reaches past the end as reading the
/// whole buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadStart {
    /// An independent read, or one whose start is not known: MPI's count stands.
    Reported,
    /// At this offset, in etypes of the view.
    Offset(ffi::MPI_Offset),
    /// At this process's file pointer, which the read moved past the values it counted.
    Pointer,
}

impl File<'_> {
    /// How many values a read that started at `start` moved, MPI having reported `n` of the
    /// `len` asked for: `n`, unless a collective read reported the whole buffer, when the
    /// values that lie in the file are counted (one `MPI_File_get_size` and one
    /// `MPI_File_get_byte_offset`, both local; more only at the end of the file).
    #[inline(always)]
    pub(crate) fn counted<T: Equivalence>(
        &self,
        start: ReadStart,
        n: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<usize> {
        if n == 0 || n < len || start == ReadStart::Reported {
            Ok(n)
        } else {
            self.within_file::<T>(start, n, operation)
        }
    }

    /// [`counted`](Self::counted) for a collective read that reported all `n` values: the
    /// largest `k <= n` whose `k`-th value ends inside the file.
    #[inline(never)]
    fn within_file<T: Equivalence>(
        &self,
        start: ReadStart,
        n: usize,
        operation: &'static str,
    ) -> Result<usize> {
        let per_value = (value_bytes::<T>(operation)? / self.etype_size.max(1)) as u64;
        let n64 = n as u64;
        let first = match start {
            ReadStart::Offset(at) => u64::try_from(at).unwrap_or(0),
            _ => self.get_position()?.saturating_sub(n64 * per_value),
        };
        let size = self.get_size()?;
        // The byte just past value `k` (1-based) of the read.
        let end = |k: u64| -> Result<u64> {
            let last = first + k * per_value - 1;
            Ok(self.get_byte_offset(last)? + self.etype_size as u64)
        };
        if per_value == 0 || end(n64)? <= size {
            return Ok(n);
        }
        // Value `lo` ends in the file (0: trivially), value `hi` does not.
        let (mut lo, mut hi) = (0u64, n64);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if end(mid)? <= size {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(lo as usize)
    }

    /// Runs `call(buffer, count, datatype)` for `len` values of `T` under the thread gate:
    /// `count` of `T::datatype()`, or one spanning datatype when the count is over `int`.
    #[inline(always)]
    pub(crate) fn with_count<T: Equivalence, R>(
        &self,
        len: usize,
        operation: &'static str,
        call: impl FnOnce(c_int, ffi::MPI_Datatype) -> R,
    ) -> Result<R> {
        match int_count::<T>(len) {
            Some(count) => gated_on(operation, self.comm, || call(count, T::datatype().as_raw())),
            None => self.with_span::<T, R>(len, operation, call),
        }
    }

    /// [`with_count`](Self::with_count) past `int`: one element of a datatype spanning the
    /// buffer, freed when the call returns (a started operation completes normally, MPI-4.0
    /// §5.1.9).
    #[cold]
    #[inline(never)]
    fn with_span<T: Equivalence, R>(
        &self,
        len: usize,
        operation: &'static str,
        call: impl FnOnce(c_int, ffi::MPI_Datatype) -> R,
    ) -> Result<R> {
        let count = large_count::<T>(len, operation)?;
        let _gate = enter_on(operation, self.comm)?;
        // SAFETY: the gate is held until the type is freed, at the end of this function.
        let span = unsafe { Spanning::new(T::datatype().as_raw(), count, operation)? };
        Ok(call(1, span.raw()))
    }

    /// A blocking read into `buf` from `start`: `call(buffer, count, datatype, status)` is
    /// the MPI call.
    #[inline(always)]
    fn read_with<T: Equivalence>(
        &self,
        buf: &mut [T],
        start: ReadStart,
        operation: &'static str,
        call: impl FnOnce(*mut c_void, c_int, ffi::MPI_Datatype, *mut ffi::MPI_Status) -> c_int,
    ) -> Result<usize> {
        self.check_etype::<T>(operation)?;
        let mut status = Status::empty();
        let ptr = recv_ptr(buf);
        let rc = self.with_count::<T, _>(buf.len(), operation, |count, datatype| {
            call(ptr, count, datatype, status.as_raw_mut())
        })?;
        repair(buf);
        self.check(rc, operation)?;
        let n = transferred::<T>(&status)?;
        self.counted::<T>(start, n, buf.len(), operation)
    }

    /// A blocking write of `buf`: `call(buffer, count, datatype, status)` is the MPI call.
    #[inline(always)]
    fn write_with<T: Equivalence>(
        &self,
        buf: &[T],
        operation: &'static str,
        call: impl FnOnce(*const c_void, c_int, ffi::MPI_Datatype, *mut ffi::MPI_Status) -> c_int,
    ) -> Result<()> {
        self.check_etype::<T>(operation)?;
        let mut status = Status::empty();
        let rc = self.with_count::<T, _>(buf.len(), operation, |count, datatype| {
            call(send_ptr(buf), count, datatype, status.as_raw_mut())
        })?;
        self.check_write(rc, operation)?;
        self.check_written::<T>(&status, buf.len(), operation)
    }

    /// Checks that a completed write moved all `len` values.
    #[inline(always)]
    pub(crate) fn check_written<T: Equivalence>(
        &self,
        status: &Status,
        len: usize,
        operation: &'static str,
    ) -> Result<()> {
        let written = transferred::<T>(status)?;
        if written == len {
            Ok(())
        } else {
            Err(self.short_write(written, len, operation))
        }
    }

    #[cold]
    #[inline(never)]
    fn short_write(&self, written: usize, len: usize, operation: &'static str) -> crate::Error {
        self.write_failed(file_error(
            operation,
            &self.path,
            ErrorClass::Io,
            format!(
                "MPI wrote {written} of {len} values (is the file system full, or over quota?)"
            ),
        ))
    }
}

/// The blocking calls at an explicit offset: `(read, write, MPI read, MPI write, docs)`.
macro_rules! at_offset {
    ($( $read:ident, $write:ident, $mpi_read:ident, $mpi_write:ident, $start:ident, $section:literal, $what:literal; )*) => {
        impl File<'_> {
            $(
                #[doc = concat!("Reads `buf.len()` values at `offset` (in etypes of the view) ",
                    "(`", stringify!($mpi_read), "`, MPI-4.0 ", $section, "); ", $what, ".")]
                /// Returns how many values were read: fewer than `buf.len()` at the end of the
                /// file (the rest of `buf` is as it was, or holds part of a value).
                ///
                /// # Errors
                /// [`ErrorKind::File`]; [`ErrorKind::InvalidArgument`] for an offset over
                /// `i64::MAX` or a `T` that is not whole etypes of the view;
                /// [`ErrorKind::WrongThread`].
                #[inline(always)]
                pub fn $read<T: Equivalence>(&self, offset: u64, buf: &mut [T]) -> Result<usize> {
                    const OP: &str = stringify!($mpi_read);
                    let at = super::offset(offset, OP)?;
                    let start = at_offset!(@start $start at);
                    self.read_with(buf, start, OP, |ptr, count, datatype, status| {
                        // SAFETY: `read_with` passes a buffer with room for `count` of
                        // `datatype`, exclusively borrowed for the call, and a status.
                        unsafe { ffi::$mpi_read(self.raw, at, ptr, count, datatype, status) }
                    })
                }

                #[doc = concat!("Writes `buf` at `offset` (in etypes of the view) ",
                    "(`", stringify!($mpi_write), "`, MPI-4.0 ", $section, "); ", $what, ".")]
                ///
                /// # Errors
                /// [`ErrorKind::File`], also of class [`ErrorClass::Io`] when MPI wrote fewer
                /// values than `buf` holds; as the read for the arguments.
                #[inline(always)]
                pub fn $write<T: Equivalence>(&self, offset: u64, buf: &[T]) -> Result<()> {
                    const OP: &str = stringify!($mpi_write);
                    let at = super::offset(offset, OP)?;
                    self.write_with(buf, OP, |ptr, count, datatype, status| {
                        // SAFETY: `write_with` passes a buffer of `count` of `datatype`,
                        // borrowed for the call, and a status.
                        unsafe { ffi::$mpi_write(self.raw, at, ptr, count, datatype, status) }
                    })
                }
            )*
        }
    };
    (@start Offset $at:ident) => { ReadStart::Offset($at) };
    (@start Reported $at:ident) => { ReadStart::Reported };
}

/// The blocking calls through a file pointer: `(read, write, MPI read, MPI write, docs)`.
macro_rules! at_pointer {
    ($( $read:ident, $write:ident, $mpi_read:ident, $mpi_write:ident, $start:ident, $section:literal, $what:literal; )*) => {
        impl File<'_> {
            $(
                #[doc = concat!("Reads `buf.len()` values (`", stringify!($mpi_read),
                    "`, MPI-4.0 ", $section, "); ", $what, ".")]
                /// Returns how many values were read: fewer than `buf.len()` at the end of the
                /// file.
                ///
                /// # Errors
                /// [`ErrorKind::File`]; [`ErrorKind::InvalidArgument`] for a `T` that is not
                /// whole etypes of the view; [`ErrorKind::WrongThread`].
                #[inline(always)]
                pub fn $read<T: Equivalence>(&self, buf: &mut [T]) -> Result<usize> {
                    const OP: &str = stringify!($mpi_read);
                    self.read_with(buf, ReadStart::$start, OP, |ptr, count, datatype, status| {
                        // SAFETY: as in `read_at`.
                        unsafe { ffi::$mpi_read(self.raw, ptr, count, datatype, status) }
                    })
                }

                #[doc = concat!("Writes `buf` (`", stringify!($mpi_write), "`, MPI-4.0 ",
                    $section, "); ", $what, ".")]
                ///
                /// # Errors
                /// [`ErrorKind::File`], also of class [`ErrorClass::Io`] when MPI wrote fewer
                /// values than `buf` holds; as the read for the arguments.
                #[inline(always)]
                pub fn $write<T: Equivalence>(&self, buf: &[T]) -> Result<()> {
                    const OP: &str = stringify!($mpi_write);
                    self.write_with(buf, OP, |ptr, count, datatype, status| {
                        // SAFETY: as in `write_at`.
                        unsafe { ffi::$mpi_write(self.raw, ptr, count, datatype, status) }
                    })
                }
            )*
        }
    };
}

at_offset! {
    read_at, write_at, MPI_File_read_at, MPI_File_write_at, Reported, "§14.4.2",
        "independent: this process alone";
    read_at_all, write_at_all, MPI_File_read_at_all, MPI_File_write_at_all, Offset, "§14.4.2",
        "collective: every process of the file calls it, with its own offset and length, and \
         the MPI may merge their accesses into few large ones (two-phase I/O)";
}

at_pointer! {
    read, write, MPI_File_read, MPI_File_write, Reported, "§14.4.3",
        "independent, at this process's file pointer, which moves past what was accessed";
    read_all, write_all, MPI_File_read_all, MPI_File_write_all, Pointer, "§14.4.3",
        "collective, at each process's own file pointer";
    read_shared, write_shared, MPI_File_read_shared, MPI_File_write_shared, Reported, "§14.4.4",
        "independent, at the file pointer all processes share, in whatever order they come";
    read_ordered, write_ordered, MPI_File_read_ordered, MPI_File_write_ordered, Reported,
        "§14.4.4",
        "collective, at the shared file pointer, in rank order: rank 0's values first, then \
         rank 1's, …";
}

/// `whence` as MPI's `(offset, MPI_SEEK_*)`.
fn seek_args(whence: SeekFrom, operation: &'static str) -> Result<(ffi::MPI_Offset, c_int)> {
    Ok(match whence {
        SeekFrom::Start(at) => (
            offset(at, operation)?,
            crate::c_int_const!(ffi::MPI_SEEK_SET),
        ),
        SeekFrom::Current(by) => (by, crate::c_int_const!(ffi::MPI_SEEK_CUR)),
        SeekFrom::End(by) => (by, crate::c_int_const!(ffi::MPI_SEEK_END)),
    })
}

impl File<'_> {
    /// Moves this process's file pointer (`MPI_File_seek`, MPI-4.0 §14.4.3), in etypes of the
    /// view.
    ///
    /// # Errors
    /// [`ErrorKind::File`] (a position before the start); [`ErrorKind::InvalidArgument`] for a
    /// start over `i64::MAX`; [`ErrorKind::WrongThread`].
    pub fn seek(&self, whence: SeekFrom) -> Result<()> {
        const OP: &str = "file_seek";
        let (at, how) = seek_args(whence, OP)?;
        // SAFETY: a valid file.
        self.call(OP, |fh| unsafe { ffi::MPI_File_seek(fh, at, how) })
    }

    /// This process's file pointer, in etypes of the view (`MPI_File_get_position`, MPI-4.0
    /// §14.4.3).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_position(&self) -> Result<u64> {
        let mut at: ffi::MPI_Offset = 0;
        // SAFETY: a valid file; MPI writes one offset.
        self.call("file_get_position", |fh| unsafe {
            ffi::MPI_File_get_position(fh, &mut at)
        })?;
        Ok(u64::try_from(at).unwrap_or(0))
    }

    /// Where `offset` (in etypes of the view) is, in bytes from the start of the file
    /// (`MPI_File_get_byte_offset`, MPI-4.0 §14.4.3).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::InvalidArgument`] for an offset over `i64::MAX`;
    /// [`ErrorKind::WrongThread`].
    pub fn get_byte_offset(&self, offset: u64) -> Result<u64> {
        const OP: &str = "file_get_byte_offset";
        let at = super::offset(offset, OP)?;
        let mut bytes: ffi::MPI_Offset = 0;
        // SAFETY: a valid file; MPI writes one offset.
        self.call(OP, |fh| unsafe {
            ffi::MPI_File_get_byte_offset(fh, at, &mut bytes)
        })?;
        Ok(u64::try_from(bytes).unwrap_or(0))
    }

    /// Moves the shared file pointer (`MPI_File_seek_shared`, MPI-4.0 §14.4.4); collective,
    /// every process passing the same position.
    ///
    /// # Errors
    /// As [`seek`](File::seek).
    pub fn seek_shared(&self, whence: SeekFrom) -> Result<()> {
        const OP: &str = "file_seek_shared";
        let (at, how) = seek_args(whence, OP)?;
        // SAFETY: a valid file.
        self.call(OP, |fh| unsafe { ffi::MPI_File_seek_shared(fh, at, how) })
    }

    /// The shared file pointer, in etypes of the view (`MPI_File_get_position_shared`, MPI-4.0
    /// §14.4.4).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_position_shared(&self) -> Result<u64> {
        let mut at: ffi::MPI_Offset = 0;
        // SAFETY: a valid file; MPI writes one offset.
        self.call("file_get_position_shared", |fh| unsafe {
            ffi::MPI_File_get_position_shared(fh, &mut at)
        })?;
        Ok(u64::try_from(at).unwrap_or(0))
    }
}
