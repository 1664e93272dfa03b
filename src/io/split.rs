//! Split collectives (MPI-4.0 §14.4.5): a collective read or write in two halves,
//! `…_begin` and `…_end`, with work between them, behind a [`SplitCollective`] guard.
//!
//! ```no_run
//! use ferrompi::io::{AccessMode, File};
//! let mpi = ferrompi::Mpi::init()?;
//! let world = mpi.world();
//! let file = File::open(&world, "in.bin", AccessMode::RDONLY, None)?;
//! let at = world.rank() as u64 * 8 * 1000;
//! let reading = file.read_at_all_begin(at, vec![0.0f64; 1000])?;
//! // … work that does not touch the buffer (the guard owns it) …
//! let (values, read) = reading.end();
//! let read = read?;
//! assert!(read <= values.len());
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! At most one split collective is active per file (MPI-4.0 §14.4.5): a second `…_begin`
//! before the first one's end is [`ErrorKind::InvalidArgument`], before MPI is called. The
//! guard owns the buffer, so nothing reads or frees it while MPI may use it; dropping the
//! guard ends the operation; a guard leaked with `mem::forget` leaks its buffer, and the file
//! ends the operation (on that leaked, still valid memory) before it closes. Between begin
//! and end, no other collective call on the file is allowed (MPI's rule; an MPI may report it
//! or not).

use super::File;
use super::access::{ReadStart, transferred};
use crate::datatype::{recv_ptr, repair, send_ptr};
use crate::env::enter_on;
use crate::error::{ErrorKind, Result};
use crate::ffi;
use crate::request::OwnedBuffer;
use crate::status::Status;
use std::ffi::c_void;

/// Which `…_end` completes a split collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    ReadAtAll,
    WriteAtAll,
    ReadAll,
    WriteAll,
    ReadOrdered,
    WriteOrdered,
}

impl End {
    fn reads(self) -> bool {
        matches!(self, End::ReadAtAll | End::ReadAll | End::ReadOrdered)
    }

    /// The `…_end` call.
    ///
    /// # Safety
    /// `ptr` is the buffer the matching `…_begin` on `fh` was given, still valid; the caller
    /// holds the thread gate.
    unsafe fn call(self, fh: ffi::MPI_File, ptr: *mut c_void, status: *mut ffi::MPI_Status) -> i32 {
        let read = ptr;
        let write = ptr.cast_const();
        // SAFETY: per the caller's contract.
        unsafe {
            match self {
                End::ReadAtAll => ffi::MPI_File_read_at_all_end(fh, read, status),
                End::WriteAtAll => ffi::MPI_File_write_at_all_end(fh, write, status),
                End::ReadAll => ffi::MPI_File_read_all_end(fh, read, status),
                End::WriteAll => ffi::MPI_File_write_all_end(fh, write, status),
                End::ReadOrdered => ffi::MPI_File_read_ordered_end(fh, read, status),
                End::WriteOrdered => ffi::MPI_File_write_ordered_end(fh, write, status),
            }
        }
    }
}

/// The split collective active on a file: which end it needs, on which buffer.
#[derive(Debug)]
pub(crate) struct Pending {
    end: End,
    ptr: *mut c_void,
}

// SAFETY: the address of a buffer MPI uses, only passed back to MPI (by the file, behind the
// thread gate); never dereferenced by Rust.
unsafe impl Send for Pending {}

/// A split collective in progress (MPI-4.0 §14.4.5): owns the buffer until
/// [`end`](SplitCollective::end) hands it back. Dropping it ends the operation.
#[must_use = "dropping the guard ends the split collective at once"]
pub struct SplitCollective<'f, 'c, B: OwnedBuffer> {
    file: &'f File<'c>,
    /// `None` once handed back.
    buffer: Option<B>,
    end: End,
    /// Where a read started, to check its count at the end.
    start: ReadStart,
    operation: &'static str,
}

impl<B: OwnedBuffer> std::fmt::Debug for SplitCollective<'_, '_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitCollective")
            .field("file", &self.file.path)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl<'c> File<'c> {
    /// Starts a split collective on `buf`: `call(buffer, count, datatype)` is the `…_begin`.
    fn begin<B: OwnedBuffer>(
        &self,
        mut buf: B,
        end: End,
        start: ReadStart,
        operation: &'static str,
        call: impl FnOnce(*mut c_void, i32, ffi::MPI_Datatype) -> i32,
    ) -> Result<SplitCollective<'_, 'c, B>> {
        self.check_etype::<B::Item>(operation)?;
        let ptr = if end.reads() {
            recv_ptr(buf.as_mut_slice())
        } else {
            send_ptr(buf.as_slice()).cast_mut()
        };
        let len = buf.as_slice().len();
        let mut split = self.split.lock().unwrap_or_else(|e| e.into_inner());
        if split.is_some() {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: "a split collective is already active on this file (MPI allows one)".into(),
            }
            .into());
        }
        let rc = self.with_count::<B::Item, _>(len, operation, |count, datatype| {
            call(ptr, count, datatype)
        })?;
        self.check(rc, operation)?;
        *split = Some(Pending { end, ptr });
        Ok(SplitCollective {
            file: self,
            buffer: Some(buf),
            end,
            start,
            operation,
        })
    }
}

/// The split collectives' begins at an explicit offset: `(name, MPI begin, end, read|write)`.
macro_rules! begins {
    (@buf read) => { "into `buf`" };
    (@buf write) => { "of `buf`" };
    (@start Offset $at:ident) => { ReadStart::Offset($at.0) };
    (@start Pointer $at:ident) => { ReadStart::Pointer };
    (@start Reported $at:ident) => { ReadStart::Reported };
    ($( $name:ident, $mpi:ident, $end:ident, $dir:ident, [$($offset:ident)?], $start:ident, $section:literal; )*) => {
        impl<'c> File<'c> {
            $(
                #[doc = concat!("Begins a split collective ", begins!(@buf $dir), " (`",
                    stringify!($mpi), "`, MPI-4.0 ", $section, "), ended by the guard's ",
                    "[`end`](SplitCollective::end).")]
                ///
                /// # Errors
                /// [`ErrorKind::File`]; [`ErrorKind::InvalidArgument`] while another split
                /// collective is active on the file, for an offset over `i64::MAX`, or a `T`
                /// that is not whole etypes of the view; [`ErrorKind::WrongThread`]. On an
                /// error nothing was started, and the buffer is dropped.
                pub fn $name<B: OwnedBuffer>(
                    &self,
                    $($offset: u64,)?
                    buf: B,
                ) -> Result<SplitCollective<'_, 'c, B>> {
                    const OP: &str = stringify!($mpi);
                    let at = ($(super::offset($offset, OP)?,)?);
                    let fh = self.raw;
                    let start = begins!(@start $start at);
                    self.begin(buf, End::$end, start, OP, |ptr, count, datatype| {
                        let _ = &at;
                        // SAFETY: `begin` passes the owned buffer (which the guard keeps, or
                        // leaks, until the end), its count and datatype, under the gate.
                        unsafe {
                            begins!(@call $dir $mpi fh, at, [$($offset)?], ptr, count, datatype)
                        }
                    })
                }
            )*
        }
    };
    (@call read $mpi:ident $fh:ident, $at:ident, [$($offset:ident)?], $ptr:ident, $count:ident, $dt:ident) => {
        ffi::$mpi($fh, $({ let _ = stringify!($offset); $at.0 },)? $ptr, $count, $dt)
    };
    (@call write $mpi:ident $fh:ident, $at:ident, [$($offset:ident)?], $ptr:ident, $count:ident, $dt:ident) => {
        ffi::$mpi($fh, $({ let _ = stringify!($offset); $at.0 },)? $ptr.cast_const(), $count, $dt)
    };
}

begins! {
    read_at_all_begin, MPI_File_read_at_all_begin, ReadAtAll, read, [offset], Offset, "§14.4.5";
    write_at_all_begin, MPI_File_write_at_all_begin, WriteAtAll, write, [offset], Reported, "§14.4.5";
    read_all_begin, MPI_File_read_all_begin, ReadAll, read, [], Pointer, "§14.4.5";
    write_all_begin, MPI_File_write_all_begin, WriteAll, write, [], Reported, "§14.4.5";
    read_ordered_begin, MPI_File_read_ordered_begin, ReadOrdered, read, [], Reported, "§14.4.5";
    write_ordered_begin, MPI_File_write_ordered_begin, WriteOrdered, write, [], Reported, "§14.4.5";
}

impl<B: OwnedBuffer> SplitCollective<'_, '_, B> {
    /// Ends the split collective (the matching `…_end`, MPI-4.0 §14.4.5) and hands back the
    /// buffer with how many values moved (fewer than its length: a read at the end of the
    /// file).
    ///
    /// # Errors
    /// In the returned `Result`: [`ErrorKind::File`], also of class
    /// [`ErrorClass::Io`](crate::ErrorClass::Io) for a write that moved fewer values than the
    /// buffer holds. Where the thread gate refuses the end (a thread the level does not
    /// allow), this panics with the reason and leaks the buffer, which MPI may still use.
    pub fn end(mut self) -> (B, Result<usize>) {
        let result = self.finish();
        let buffer = self
            .buffer
            .take()
            .expect("the buffer is kept until the end");
        (buffer, result)
    }

    /// The `…_end` call; the buffer stays in `self`, repaired after a read.
    fn finish(&mut self) -> Result<usize> {
        let Some(buffer) = self.buffer.as_mut() else {
            return Ok(0);
        };
        let mut status = Status::empty();
        let rc = {
            let gate = enter_on(self.operation, self.file.comm);
            let _gate = match gate {
                Ok(gate) => gate,
                Err(refused) => {
                    // MPI may still use the buffer: leak it, and leave the end to the file.
                    std::mem::forget(self.buffer.take());
                    panic!("{}", refused);
                }
            };
            let ptr = if self.end.reads() {
                recv_ptr(buffer.as_mut_slice())
            } else {
                send_ptr(buffer.as_slice()).cast_mut()
            };
            // SAFETY: the buffer the begin was given, owned by the guard; the gate is held.
            let rc = unsafe { self.end.call(self.file.raw, ptr, status.as_raw_mut()) };
            *self.file.split.lock().unwrap_or_else(|e| e.into_inner()) = None;
            rc
        };
        if self.end.reads() {
            repair(buffer.as_mut_slice());
        }
        if self.end.reads() {
            self.file.check(rc, self.operation)?;
        } else {
            self.file.check_write(rc, self.operation)?;
        }
        let len = buffer.as_slice().len();
        if self.end.reads() {
            let n = transferred::<B::Item>(&status)?;
            self.file
                .counted::<B::Item>(self.start, n, len, self.operation)
        } else {
            self.file
                .check_written::<B::Item>(&status, len, self.operation)
                .map(|()| len)
        }
    }
}

impl<B: OwnedBuffer> Drop for SplitCollective<'_, '_, B> {
    fn drop(&mut self) {
        if self.buffer.is_some() && !std::thread::panicking() {
            let _ = self.finish();
        } else if self.buffer.is_some() {
            // Unwinding: a second panic would abort; leak the buffer and leave the end to
            // the file, as for a leaked guard.
            std::mem::forget(self.buffer.take());
        }
    }
}

/// Ends a split collective whose guard was leaked, on its (leaked, still valid) buffer,
/// before the file closes. Errors are not reported: the file is closing.
pub(crate) fn end_leaked(file: &File<'_>) {
    let pending = file.split.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(Pending { end, ptr }) = pending {
        let mut status = Status::empty();
        if let Ok(_gate) = enter_on("file_close", file.comm) {
            // SAFETY: the buffer of a leaked guard is leaked with it, so still valid; the
            // gate is held.
            let _ = unsafe { end.call(file.raw, ptr, status.as_raw_mut()) };
        }
    }
}
