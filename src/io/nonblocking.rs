//! Nonblocking reads and writes (MPI-4.0 §14.4.2–§14.4.4).
//!
//! A nonblocking call's buffer is borrowed for a [`scope`](crate::scope), as for the
//! point-to-point ones (see [`request`](crate::request)): the scope completes every request
//! before the buffers come back, and a request leaked with `mem::forget` aborts the job at the
//! scope's end rather than let MPI use memory that is gone. The scope also borrows the file,
//! so the file closes only after every request on it has completed (MPI-4.0 §14.2.2 requires
//! it; an MPI with asynchronous I/O may otherwise write into freed memory of its own). The
//! request's [`Status`](crate::Status) tells how many values moved: `status.count::<T>()`
//! (compare it with the length after a write: a full disk may show there only).
//!
//! ```no_run
//! use ferrompi::io::{AccessMode, File};
//! let mpi = ferrompi::Mpi::init()?;
//! let world = mpi.world();
//! let file = File::open(&world, "out.bin", AccessMode::CREATE | AccessMode::WRONLY, None)?;
//! let at = world.rank() as u64 * 8 * 1000;
//! let state = vec![1.0f64; 1000];
//! let written = ferrompi::scope(|s| {
//!     let writing = file.iwrite_at_all(s, at, &state)?;
//!     // … compute while the file system works …
//!     writing.wait()?.count::<f64>()
//! })?;
//! assert_eq!(written, state.len());
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! Requests on files are not offered with owned buffers: a leaked owned request would leave
//! the file unable to close safely.
//!
//! The split collectives (`read_at_all_begin`, …) are in [`split`](super::split).

use super::File;
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
use crate::error::Result;
use crate::ffi;
use crate::request::{Kind, RawRequest, Repair, Request, Scope};
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

impl File<'_> {
    /// Starts a nonblocking operation on `len` values at `ptr`: `call(buffer, count, datatype,
    /// request)` is the MPI call.
    ///
    /// # Safety
    /// `ptr` is `len` values of `T` that stay valid (and, for a read, writable and otherwise
    /// unreferenced) until the request completes.
    #[inline(always)]
    unsafe fn start<T: Equivalence>(
        &self,
        ptr: *mut c_void,
        len: usize,
        kind: Kind,
        operation: &'static str,
        call: impl FnOnce(*mut c_void, c_int, ffi::MPI_Datatype, *mut ffi::MPI_Request) -> c_int,
    ) -> Result<RawRequest> {
        self.check_etype::<T>(operation)?;
        let mut raw = MaybeUninit::<ffi::MPI_Request>::uninit();
        let rc = self.with_count::<T, _>(len, operation, |count, datatype| {
            call(ptr, count, datatype, raw.as_mut_ptr())
        })?;
        self.check(rc, operation)?;
        Ok(RawRequest {
            // SAFETY: the call succeeded, so MPI wrote the handle.
            raw: unsafe { raw.assume_init() },
            kind,
        })
    }
}

/// The nonblocking calls: `read|write name, MPI call, [offset] if at an explicit offset,
/// section, docs`.
macro_rules! nonblocking {
    (@call $mpi:ident $fh:expr, $at:ident, [$($offset:ident)?], $ptr:ident, $count:ident, $dt:ident, $req:ident) => {
        ffi::$mpi($fh, $({ let _ = stringify!($offset); $at.0 },)? $ptr, $count, $dt, $req)
    };
    (@one read $name:ident $mpi:ident [$($offset:ident)?] $section:literal $what:literal) => {
        #[doc = concat!("Starts reading `buf.len()` values (`", stringify!($mpi), "`, MPI-4.0 ",
            $section, "); ", $what, ". The buffer is borrowed for the scope; the request's ",
            "status counts the values read (as MPI reports them: a collective read past the end of ",
            "the file may count the whole buffer, see the [module docs](super#errors)).")]
        ///
        /// # Errors
        /// [`ErrorKind::File`](crate::ErrorKind::File); [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for an offset over `i64::MAX`
        /// or a `T` that is not whole etypes of the view; [`ErrorKind::WrongThread`](crate::ErrorKind::WrongThread). On an
        /// error nothing was started.
        pub fn $name<'s, T: Equivalence>(
            &'s self,
            scope: &'s Scope<'s, '_>,
            $($offset: u64,)?
            buf: &'s mut [T],
        ) -> Result<Request<'s>> {
            const OP: &str = stringify!($mpi);
            let at = ($(super::offset($offset, OP)?,)?);
            let _ = &at;
            let repair = Repair::for_slice(buf);
            let (ptr, len) = (recv_ptr(buf), buf.len());
            let call = |ptr: *mut c_void, count, dt, req| {
                // SAFETY: `start` passes the buffer, its count and datatype, and a place
                // for the request.
                unsafe { nonblocking!(@call $mpi self.raw, at, [$($offset)?], ptr, count, dt, req) }
            };
            // SAFETY: `buf` is exclusively borrowed for 's; the scope completes or aborts
            // before it ends.
            let raw = unsafe { self.start::<T>(ptr, len, Kind::Read, OP, call)? };
            Ok(Request::started(raw, repair, &scope.in_flight))
        }

    };
    (@one write $name:ident $mpi:ident [$($offset:ident)?] $section:literal $what:literal) => {
        #[doc = concat!("Starts writing `buf` (`", stringify!($mpi), "`, MPI-4.0 ", $section,
            "); ", $what, ". The buffer is borrowed for the scope; compare the request's count ",
            "with its length.")]
        ///
        /// # Errors
        /// [`ErrorKind::File`](crate::ErrorKind::File); [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for an offset over `i64::MAX`
        /// or a `T` that is not whole etypes of the view; [`ErrorKind::WrongThread`](crate::ErrorKind::WrongThread). On an
        /// error nothing was started.
        pub fn $name<'s, T: Equivalence>(
            &'s self,
            scope: &'s Scope<'s, '_>,
            $($offset: u64,)?
            buf: &'s [T],
        ) -> Result<Request<'s>> {
            const OP: &str = stringify!($mpi);
            let at = ($(super::offset($offset, OP)?,)?);
            let _ = &at;
            let (ptr, len) = (send_ptr(buf).cast_mut(), buf.len());
            let call = |ptr: *mut c_void, count, dt, req| {
                let ptr = ptr.cast_const();
                // SAFETY: `start` passes the buffer, its count and datatype, and a place
                // for the request.
                unsafe { nonblocking!(@call $mpi self.raw, at, [$($offset)?], ptr, count, dt, req) }
            };
            // SAFETY: `buf` is borrowed for 's; the scope completes or aborts before it ends.
            // MPI only reads through the pointer.
            let raw = unsafe { self.start::<T>(ptr, len, Kind::Send, OP, call)? };
            Ok(Request::started(raw, None, &scope.in_flight))
        }

    };
    ($( $dir:ident $name:ident, $mpi:ident, [$($offset:ident)?], $section:literal, $what:literal; )*) => {
        impl File<'_> {
            $( nonblocking!(@one $dir $name $mpi [$($offset)?] $section $what); )*
        }
    };
}

nonblocking! {
    read iread_at, MPI_File_iread_at, [offset], "§14.4.2",
        "independent, at `offset` in etypes of the view";
    write iwrite_at, MPI_File_iwrite_at, [offset], "§14.4.2",
        "independent, at `offset` in etypes of the view";
    read iread_at_all, MPI_File_iread_at_all, [offset], "§14.4.2",
        "collective (every process of the file starts it), at `offset` in etypes of the view";
    write iwrite_at_all, MPI_File_iwrite_at_all, [offset], "§14.4.2",
        "collective (every process of the file starts it), at `offset` in etypes of the view";
    read iread, MPI_File_iread, [], "§14.4.3",
        "independent, at this process's file pointer, which moves at the start";
    write iwrite, MPI_File_iwrite, [], "§14.4.3",
        "independent, at this process's file pointer, which moves at the start";
    read iread_all, MPI_File_iread_all, [], "§14.4.3",
        "collective, at each process's file pointer";
    write iwrite_all, MPI_File_iwrite_all, [], "§14.4.3",
        "collective, at each process's file pointer";
    read iread_shared, MPI_File_iread_shared, [], "§14.4.4",
        "independent, at the shared file pointer";
    write iwrite_shared, MPI_File_iwrite_shared, [], "§14.4.4",
        "independent, at the shared file pointer";
}
