//! Parallel I/O (MPI-4.0 chapter 14): a [`File`] opened by every process of a communicator,
//! read and written at explicit offsets, through individual or shared file pointers, each
//! blocking or nonblocking, independent or collective, through a view that shows each process
//! only its part of the file.
//!
//! ```no_run
//! use ferrompi::io::{AccessMode, File};
//! let mpi = ferrompi::Mpi::init()?;
//! let world = mpi.world();
//! let (rank, size) = (world.rank() as u64, world.size() as u64);
//! // Every process writes its block of a global array, collectively, then reads its
//! // right neighbour's block back.
//! let mine = vec![rank as f64; 1024];
//! let file = File::open(&world, "state.bin", AccessMode::CREATE | AccessMode::RDWR, None)?;
//! file.write_at_all(rank * 1024 * 8, &mine)?; // offsets in bytes: the default view
//! file.sync()?; // what one process wrote, the others see after sync, barrier, sync
//! world.barrier()?;
//! file.sync()?;
//! let mut theirs = vec![0.0f64; 1024];
//! let read = file.read_at_all((rank + 1) % size * 1024 * 8, &mut theirs)?;
//! assert_eq!((read, theirs[0]), (1024, ((rank + 1) % size) as f64));
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! | module | MPI-4.0 | what |
//! |---|---|---|
//! | this one | §14.2 | [`File`]: `open`, `close`, `delete`, `set_size`, `preallocate`, `get_size`, `get_amode`, `get_group`, `get_info`, `set_info`, `sync`, `set_atomicity` |
//! | [`view`] | §14.3, §14.5 | `set_view` and `get_view`: etype, filetype (subarray, darray, any [`DerivedType`](crate::DerivedType)), [`DataRep`] |
//! | [`access`] | §14.4.2–§14.4.4 | blocking reads and writes: explicit offsets (`read_at`, `write_at_all`, …), the individual pointer (`read`, `seek`, …), the shared pointer (`read_shared`, `write_ordered`, `seek_shared`, …) |
//! | [`nonblocking`] | §14.4.2–§14.4.4 | `iread_at`, `iwrite_at_all`, … on buffers borrowed for a [`scope`](crate::scope) |
//! | [`split`] | §14.4.5 | the split collectives (`read_at_all_begin`, …) behind a guard |
//!
//! # Errors
//!
//! A file has `MPI_ERRORS_RETURN` (MPI's default for files, installed again on every file the
//! crate opens), and every failure is [`ErrorKind::File`]: MPI's error class
//! ([`ErrorClass::NoSuchFile`], [`ErrorClass::FileExists`], [`ErrorClass::Access`],
//! [`ErrorClass::NoSpace`], [`ErrorClass::ReadOnly`], [`ErrorClass::Amode`], …) with the file's
//! path in the message. Four cases MPI does not report alike are made alike:
//!
//! - **Access modes that differ between processes** are erroneous; MPICH reports
//!   `MPI_ERR_NOT_SAME`, Open MPI 4.1 opens the file. [`File::open`] compares the modes of every
//!   process (one allreduce) before MPI is called: [`ErrorClass::NotSame`] on every process.
//! - **A read past the end of the file** is no error (MPI-4.0 §14.4.1): the reads return how
//!   many values they read, which may be fewer than the buffer holds.
//! - **A collective read past the end** is counted as reading the whole buffer by ROMIO
//!   (MPICH 4.0, at two or more processes) and Open MPI 4.1's OMPIO (at three or more). A
//!   blocking collective read at an explicit offset or the individual pointer (`read_at_all`,
//!   `read_all`, and their split forms) that MPI reports as complete is checked against the
//!   file's size (`MPI_File_get_size` and `MPI_File_get_byte_offset`, both local calls), and
//!   counts the values that lie in the file. The nonblocking collective reads' statuses and
//!   `read_ordered` report what MPI says.
//! - **A write that moves fewer bytes than asked** (a full disk: Open MPI 4.1 reports success
//!   with nothing written, MPICH `MPI_ERR_IO`) is [`ErrorKind::File`] of class
//!   [`ErrorClass::Io`] (MPICH's) on every blocking write: the count MPI reports is compared
//!   with the buffer's. A nonblocking write's count is in its [`Status`](crate::Status).
//!
//! # Soundness
//!
//! A file borrows the communicator it was opened on, so it cannot outlive it or
//! [`Mpi`], and is closed (collectively) on drop. Nonblocking operations follow the
//! crate's request rules (see [`request`](crate::request)): a borrowed buffer belongs to a
//! [`scope`](crate::scope), and a request borrows the file, which cannot close under it. (No
//! request on a file owns its buffer: a leaked owned request would outlive nothing that could
//! keep the file open, and MPI-4.0 §14.2.2 forbids closing a file with requests pending.) Reading into a value of a type with invalid bit
//! patterns (`bool`) repairs it, as a receive does. A split collective's guard owns its buffer;
//! a guard leaked with `mem::forget` leaks the buffer, and the file ends the operation before
//! it closes.

pub mod access;
mod diagnose;
pub mod nonblocking;
pub mod split;
pub mod view;

pub use split::SplitCollective;
pub use view::{DataRep, FileView};

use crate::comm::Communicator;
use crate::comm::group::Group;
use crate::env::{Mpi, enter, enter_on};
use crate::error::{Error, ErrorClass, ErrorKind, Result, check};
use crate::ffi;
use crate::info::{Info, raw_or_null};
use std::ffi::{CString, c_int};
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Mutex;

bitflags::bitflags! {
    /// How a file is opened (`MPI_MODE_*`, MPI-4.0 §14.2.1). Exactly one of [`RDONLY`],
    /// [`WRONLY`] and [`RDWR`]; every process of the communicator passes the same modes.
    ///
    /// [`RDONLY`]: AccessMode::RDONLY
    /// [`WRONLY`]: AccessMode::WRONLY
    /// [`RDWR`]: AccessMode::RDWR
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct AccessMode: c_int {
        /// `MPI_MODE_CREATE`: create the file if it does not exist.
        const CREATE = ffi::MPI_MODE_CREATE as c_int;
        /// `MPI_MODE_EXCL`: with `CREATE`, fail if the file exists.
        const EXCL = ffi::MPI_MODE_EXCL as c_int;
        /// `MPI_MODE_RDONLY`: read only.
        const RDONLY = ffi::MPI_MODE_RDONLY as c_int;
        /// `MPI_MODE_WRONLY`: write only.
        const WRONLY = ffi::MPI_MODE_WRONLY as c_int;
        /// `MPI_MODE_RDWR`: read and write.
        const RDWR = ffi::MPI_MODE_RDWR as c_int;
        /// `MPI_MODE_APPEND`: the file pointers start at the end of the file.
        const APPEND = ffi::MPI_MODE_APPEND as c_int;
        /// `MPI_MODE_DELETE_ON_CLOSE`: delete the file when it is closed.
        const DELETE_ON_CLOSE = ffi::MPI_MODE_DELETE_ON_CLOSE as c_int;
        /// `MPI_MODE_UNIQUE_OPEN`: no one else opens the file meanwhile.
        const UNIQUE_OPEN = ffi::MPI_MODE_UNIQUE_OPEN as c_int;
        /// `MPI_MODE_SEQUENTIAL`: accessed only sequentially (shared file pointers only).
        const SEQUENTIAL = ffi::MPI_MODE_SEQUENTIAL as c_int;
    }
}

/// A file opened collectively by the processes of a communicator (`MPI_File`, MPI-4.0
/// chapter 14); closed on drop (collectively). See the [module docs](self).
pub struct File<'c> {
    raw: ffi::MPI_File,
    /// The path as opened, for error messages.
    path: Box<str>,
    /// The communicator it was opened on (MPI keeps a duplicate), for the watchdog's messages.
    comm: ffi::MPI_Comm,
    /// The etype of the current view, and its size in bytes: what offsets count.
    etype: ffi::MPI_Datatype,
    etype_size: usize,
    /// A split collective whose guard was leaked: ended before the file is closed.
    split: Mutex<Option<split::Pending>>,
    _comm: PhantomData<&'c Communicator<'c>>,
}

// SAFETY: the handle is an identifier MPI resolves internally; every call passes the thread
// gate, and what changes the view needs `&mut self`.
unsafe impl Send for File<'_> {}
// SAFETY: as for `Send`; `&File` calls are MPI calls behind the gate, which MPI allows from
// several threads at `MPI_THREAD_MULTIPLE` (MPI-4.0 §14.6.1 leaves their order to the program).
unsafe impl Sync for File<'_> {}

impl std::fmt::Debug for File<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The error for `e`, a failed call on the file at `path`: [`ErrorKind::File`] with MPI's class.
#[cold]
#[inline(never)]
pub(crate) fn on_file(e: Error, path: &str) -> Error {
    match e.into_kind() {
        ErrorKind::Mpi {
            operation,
            class,
            code,
            message,
        } => ErrorKind::File {
            operation,
            path: path.to_owned(),
            class,
            code,
            message,
        }
        .into(),
        other => other.into(),
    }
}

/// [`ErrorKind::File`] for something the crate found on the file at `path`.
#[cold]
#[inline(never)]
pub(crate) fn file_error(
    operation: &'static str,
    path: &str,
    class: ErrorClass,
    message: String,
) -> Error {
    ErrorKind::File {
        operation,
        path: path.to_owned(),
        class,
        code: class.raw(),
        message,
    }
    .into()
}

/// `path` as the C string MPI takes.
fn c_path(path: &Path, operation: &'static str) -> Result<CString> {
    let text = path.to_str().ok_or_else(|| {
        Error::from(ErrorKind::InvalidArgument {
            operation,
            reason: format!("the path {path:?} is not UTF-8"),
        })
    })?;
    CString::new(text).map_err(|_| {
        ErrorKind::InvalidArgument {
            operation,
            reason: format!("the path {text:?} contains a NUL byte"),
        }
        .into()
    })
}

/// Whether `amode` is one MPI accepts (MPI-4.0 §14.2.1): the reason if not.
fn amode_problem(amode: AccessMode) -> Option<&'static str> {
    let access = amode & (AccessMode::RDONLY | AccessMode::WRONLY | AccessMode::RDWR);
    if access.bits().count_ones() != 1 {
        Some("exactly one of RDONLY, WRONLY and RDWR is needed")
    } else if amode.contains(AccessMode::RDONLY)
        && amode.intersects(AccessMode::CREATE | AccessMode::EXCL)
    {
        Some("RDONLY cannot be combined with CREATE or EXCL")
    } else if amode.contains(AccessMode::RDWR | AccessMode::SEQUENTIAL) {
        Some("RDWR cannot be combined with SEQUENTIAL")
    } else {
        None
    }
}

impl<'c> File<'c> {
    /// Opens `path` on every process of `comm` (`MPI_File_open`, MPI-4.0 §14.2.1); collective.
    /// Hints go in `info` (`cb_nodes`, `cb_buffer_size`, `romio_cb_write`, `striping_factor`,
    /// `striping_unit`, …; an MPI ignores those it does not know).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{ErrorClass, io::{AccessMode, File}};
    /// let dir = std::env::temp_dir();
    /// let missing = File::open(&world, dir.join("no/such/dir/file"), AccessMode::RDONLY, None);
    /// assert_eq!(missing.unwrap_err().class(), Some(ErrorClass::NoSuchFile));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// The processes' modes are compared first (one `MPI_Allreduce` on `comm`): modes that
    /// differ are [`ErrorClass::NotSame`] on every process, and a mode MPI refuses (not exactly
    /// one of `RDONLY`, `WRONLY`, `RDWR`; `RDONLY` with `CREATE` or `EXCL`; `RDWR` with
    /// `SEQUENTIAL`) [`ErrorClass::Amode`], before MPI sees them.
    ///
    /// # Errors
    /// [`ErrorKind::File`] with MPI's class (`NoSuchFile`, `FileExists`, `Access`, `ReadOnly`,
    /// `NotSame`, `Amode`, …) and the path; [`ErrorKind::InvalidArgument`] for a path that is not
    /// UTF-8 or holds a NUL; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`] if the comparison
    /// fails.
    pub fn open(
        comm: &'c Communicator<'_>,
        path: impl AsRef<Path>,
        amode: AccessMode,
        info: Option<&Info<'_>>,
    ) -> Result<File<'c>> {
        const OP: &str = "file_open";
        let path = path.as_ref();
        let c_path = c_path(path, OP)?;
        let shown = c_path.to_string_lossy().into_owned();
        // The largest and smallest mode of any process, in one reduction.
        let mine = i64::from(amode.bits());
        let mut extremes = [0i64; 2];
        comm.allreduce(&[mine, -mine], &mut extremes, crate::op::Max)?;
        if extremes[0] != -extremes[1] {
            return Err(file_error(
                OP,
                &shown,
                ErrorClass::NotSame,
                format!(
                    "the processes opened the file with different access modes (this one {amode:?})"
                ),
            ));
        }
        if let Some(reason) = amode_problem(amode) {
            return Err(file_error(
                OP,
                &shown,
                ErrorClass::Amode,
                format!("{reason} (got {amode:?})"),
            ));
        }
        let mut raw = ffi::MPI_FILE_NULL;
        {
            let _gate = enter_on(OP, comm.as_raw())?;
            // SAFETY: a valid communicator, a NUL-terminated path and an info handle (or
            // MPI_INFO_NULL); MPI writes the new file handle.
            let rc = unsafe {
                ffi::MPI_File_open(
                    comm.as_raw(),
                    c_path.as_ptr(),
                    amode.bits(),
                    raw_or_null(info),
                    &mut raw,
                )
            };
            check(rc, OP).map_err(|e| diagnose::open_failed(on_file(e, &shown), path, amode))?;
            crate::live::made(crate::live::Kind::File);
        }
        let file = File {
            raw,
            path: shown.into_boxed_str(),
            comm: comm.as_raw(),
            etype: ffi::MPI_BYTE,
            etype_size: 1,
            split: Mutex::new(None),
            _comm: PhantomData,
        };
        // Files return errors by default; a program may have changed the default
        // (`MPI_File_set_errhandler` on `MPI_FILE_NULL`), so it is set on each file again.
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: a file just opened, and a predefined error handler.
            unsafe { ffi::MPI_File_set_errhandler(file.raw, ffi::MPI_ERRORS_RETURN) }
        };
        file.check(rc, OP)?;
        Ok(file)
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    #[must_use]
    pub fn as_raw(&self) -> ffi::MPI_File {
        self.raw
    }

    /// The path the file was opened with.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A return code of a call on this file, as [`ErrorKind::File`].
    #[inline(always)]
    pub(crate) fn check(&self, rc: c_int, operation: &'static str) -> Result<()> {
        check(rc, operation).map_err(|e| on_file(e, &self.path))
    }

    /// [`check`](Self::check) for a write: a failure the MPI gives no cause for is refined
    /// from the file system (a full disk is [`ErrorClass::NoSpace`]).
    #[inline(always)]
    pub(crate) fn check_write(&self, rc: c_int, operation: &'static str) -> Result<()> {
        self.check(rc, operation).map_err(|e| self.write_failed(e))
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn write_failed(&self, e: Error) -> Error {
        diagnose::write_failed(e, Path::new(&*self.path))
    }

    /// Makes `call` on the handle behind the thread gate, as [`ErrorKind::File`] on failure.
    fn call(
        &self,
        operation: &'static str,
        call: impl FnOnce(ffi::MPI_File) -> c_int,
    ) -> Result<()> {
        let rc = crate::env::gated_on(operation, self.comm, || call(self.raw))?;
        self.check(rc, operation)
    }

    /// Closes the file (`MPI_File_close`, MPI-4.0 §14.2.2); collective. Dropping it does the
    /// same, without the error.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn close(mut self) -> Result<()> {
        self.close_raw()
    }

    fn close_raw(&mut self) -> Result<()> {
        const OP: &str = "file_close";
        if self.raw == ffi::MPI_FILE_NULL {
            return Ok(());
        }
        split::end_leaked(self);
        let _gate = enter_on(OP, self.comm)?;
        // SAFETY: ours; MPI sets the handle to MPI_FILE_NULL, so it is closed once. No request
        // on it is pending: requests borrow the file.
        let rc = unsafe { ffi::MPI_File_close(&mut self.raw) };
        self.raw = ffi::MPI_FILE_NULL;
        crate::live::freed(crate::live::Kind::File);
        check(rc, OP).map_err(|e| on_file(e, &self.path))
    }

    /// Deletes the file at `path` (`MPI_File_delete`, MPI-4.0 §14.2.3); not collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{ErrorClass, io::File};
    /// let gone = std::env::temp_dir().join("ferrompi-never-made");
    /// let err = File::delete(&mpi, &gone, None).unwrap_err();
    /// assert_eq!(err.class(), Some(ErrorClass::NoSuchFile));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::File`] (`NoSuchFile`, `Access`, `FileInUse`, …); as [`File::open`] for the
    /// path.
    pub fn delete(mpi: &Mpi, path: impl AsRef<Path>, info: Option<&Info<'_>>) -> Result<()> {
        const OP: &str = "file_delete";
        let _ = mpi;
        let c_path = c_path(path.as_ref(), OP)?;
        let _gate = enter(OP)?;
        // SAFETY: a NUL-terminated path and an info handle (or MPI_INFO_NULL).
        let rc = unsafe { ffi::MPI_File_delete(c_path.as_ptr(), raw_or_null(info)) };
        check(rc, OP).map_err(|e| on_file(e, &c_path.to_string_lossy()))
    }

    /// Truncates or extends the file to `bytes` (`MPI_File_set_size`, MPI-4.0 §14.2.4);
    /// collective, every process passing the same size.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::InvalidArgument`] for a size over `i64::MAX`.
    pub fn set_size(&self, bytes: u64) -> Result<()> {
        const OP: &str = "file_set_size";
        let size = offset(bytes, OP)?;
        // SAFETY: a valid file.
        self.call(OP, |fh| unsafe { ffi::MPI_File_set_size(fh, size) })
    }

    /// Makes sure the first `bytes` of the file have storage (`MPI_File_preallocate`, MPI-4.0
    /// §14.2.5); collective, every process passing the same size.
    ///
    /// # Errors
    /// As [`set_size`](File::set_size).
    pub fn preallocate(&self, bytes: u64) -> Result<()> {
        const OP: &str = "file_preallocate";
        let size = offset(bytes, OP)?;
        // SAFETY: a valid file.
        self.call(OP, |fh| unsafe { ffi::MPI_File_preallocate(fh, size) })
    }

    /// The file's size in bytes (`MPI_File_get_size`, MPI-4.0 §14.2.6).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_size(&self) -> Result<u64> {
        const OP: &str = "file_get_size";
        let mut size: ffi::MPI_Offset = 0;
        // SAFETY: a valid file; MPI writes one offset.
        self.call(OP, |fh| unsafe { ffi::MPI_File_get_size(fh, &mut size) })?;
        Ok(u64::try_from(size).unwrap_or(0))
    }

    /// The access modes the file was opened with (`MPI_File_get_amode`, MPI-4.0 §14.2.7).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_amode(&self) -> Result<AccessMode> {
        const OP: &str = "file_get_amode";
        let mut amode: c_int = 0;
        // SAFETY: a valid file; MPI writes one int.
        self.call(OP, |fh| unsafe { ffi::MPI_File_get_amode(fh, &mut amode) })?;
        Ok(AccessMode::from_bits_retain(amode))
    }

    /// The group of the processes that opened the file (`MPI_File_get_group`, MPI-4.0
    /// §14.2.7).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_group(&self) -> Result<Group<'c>> {
        const OP: &str = "file_get_group";
        let mut raw = ffi::MPI_GROUP_NULL;
        // SAFETY: a valid file; MPI writes a new group handle, which the caller owns.
        self.call(OP, |fh| unsafe { ffi::MPI_File_get_group(fh, &mut raw) })?;
        // SAFETY: just made for us.
        Ok(unsafe { Group::adopt(raw) })
    }

    /// The hints MPI uses for the file (`MPI_File_get_info`, MPI-4.0 §14.2.8): those it
    /// accepted and its defaults (`cb_buffer_size`, `cb_nodes`, `romio_*`, …).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_info(&self) -> Result<Info<'c>> {
        const OP: &str = "file_get_info";
        let mut raw = ffi::MPI_INFO_NULL;
        // SAFETY: a valid file; MPI writes a new info handle, which the caller owns.
        self.call(OP, |fh| unsafe { ffi::MPI_File_get_info(fh, &mut raw) })?;
        // SAFETY: just made for us.
        Ok(unsafe { Info::adopt(raw) })
    }

    /// Gives MPI new hints for the file (`MPI_File_set_info`, MPI-4.0 §14.2.8); collective.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn set_info(&self, info: &Info<'_>) -> Result<()> {
        // SAFETY: a valid file and info.
        self.call("file_set_info", |fh| unsafe {
            ffi::MPI_File_set_info(fh, info.as_raw())
        })
    }

    /// Transfers what this process wrote to the storage device, and makes what others wrote
    /// and synced visible to this process (`MPI_File_sync`, MPI-4.0 §14.6.1); collective. In
    /// the default (non-atomic) mode, a write by one process is seen by another after
    /// *sync, barrier, sync*.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn sync(&self) -> Result<()> {
        // SAFETY: a valid file.
        self.call("file_sync", |fh| unsafe { ffi::MPI_File_sync(fh) })
    }

    /// Atomic mode on or off (`MPI_File_set_atomicity`, MPI-4.0 §14.6.1); collective. In atomic
    /// mode a write is seen by the other processes' reads as soon as it completes.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn set_atomicity(&self, atomic: bool) -> Result<()> {
        // SAFETY: a valid file.
        self.call("file_set_atomicity", |fh| unsafe {
            ffi::MPI_File_set_atomicity(fh, c_int::from(atomic))
        })
    }

    /// Whether atomic mode is on (`MPI_File_get_atomicity`, MPI-4.0 §14.6.1).
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_atomicity(&self) -> Result<bool> {
        let mut flag: c_int = 0;
        // SAFETY: a valid file; MPI writes one int.
        self.call("file_get_atomicity", |fh| unsafe {
            ffi::MPI_File_get_atomicity(fh, &mut flag)
        })?;
        Ok(flag != 0)
    }
}

impl Drop for File<'_> {
    fn drop(&mut self) {
        // Where the thread gate refused (MPI was not called), the file stays counted as open:
        // finalize says so.
        let _ = self.close_raw();
    }
}

/// A non-negative file offset or size as MPI's `MPI_Offset`.
#[inline(always)]
pub(crate) fn offset(value: u64, operation: &'static str) -> Result<ffi::MPI_Offset> {
    match ffi::MPI_Offset::try_from(value) {
        Ok(offset) => Ok(offset),
        Err(_) => Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!("offset {value} is over MPI_Offset's largest, {}", i64::MAX),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amodes_mpi_refuses_are_found_before_mpi() {
        assert!(amode_problem(AccessMode::RDONLY).is_none());
        assert!(amode_problem(AccessMode::RDWR | AccessMode::CREATE).is_none());
        assert!(amode_problem(AccessMode::WRONLY | AccessMode::SEQUENTIAL).is_none());
        assert!(amode_problem(AccessMode::CREATE).is_some());
        assert!(amode_problem(AccessMode::RDONLY | AccessMode::WRONLY).is_some());
        assert!(amode_problem(AccessMode::RDONLY | AccessMode::CREATE).is_some());
        assert!(amode_problem(AccessMode::RDONLY | AccessMode::EXCL).is_some());
        assert!(amode_problem(AccessMode::RDWR | AccessMode::SEQUENTIAL).is_some());
    }

    #[test]
    fn offsets_over_mpi_offset_are_refused() {
        assert_eq!(offset(7, "t").ok(), Some(7));
        assert!(offset(u64::MAX, "t").is_err());
    }
}
