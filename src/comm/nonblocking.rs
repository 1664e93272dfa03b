//! Nonblocking point-to-point (MPI-4.0 §3.7): `isend`, `issend`, `irecv`, on buffers borrowed for
//! a [`scope`](crate::scope) or owned by the request. See [`request`](crate::request) for why
//! both are sound when a request is leaked.

use super::Communicator;
use super::large::large_count;
#[cfg(not(ferrompi_large_count))]
use super::large::spanning;
use super::p2p::{Destination, RecvArgs, SendArgs, Source, TagMatch, check_tag, raw_tag};
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
use crate::env::{enter, enter_with};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::gate::Pass;
use crate::request::{
    Kind, OwnedBuffer, OwnedRequest, RawRequest, Repair, Request, RequestSet, Scope,
};
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

/// The ways to start a send that completes later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StartSend {
    /// `MPI_Isend`.
    Isend,
    /// `MPI_Issend`.
    Issend,
    /// `MPI_Send_init`.
    SendInit,
    /// `MPI_Ssend_init`.
    SsendInit,
    /// `MPI_Ibsend`.
    Ibsend,
    /// `MPI_Bsend_init`.
    BsendInit,
    /// `MPI_Irsend`.
    Irsend,
    /// `MPI_Rsend_init`.
    RsendInit,
}

impl StartSend {
    /// The operation's name in errors.
    #[inline(always)]
    pub(crate) fn name(self) -> &'static str {
        match self {
            StartSend::Isend => "isend",
            StartSend::Issend => "issend",
            StartSend::SendInit => "send_init",
            StartSend::SsendInit => "ssend_init",
            StartSend::Ibsend => "ibsend",
            StartSend::BsendInit => "bsend_init",
            StartSend::Irsend => "irsend",
            StartSend::RsendInit => "rsend_init",
        }
    }

    /// # Safety
    /// As the MPI function: `buf` holds `count` elements of `dt` and outlives the operation.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn call(
        self,
        buf: *const c_void,
        count: c_int,
        dt: ffi::MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: ffi::MPI_Comm,
        request: *mut ffi::MPI_Request,
    ) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match self {
                StartSend::Isend => ffi::MPI_Isend(buf, count, dt, dest, tag, comm, request),
                StartSend::Issend => ffi::MPI_Issend(buf, count, dt, dest, tag, comm, request),
                StartSend::SendInit => ffi::MPI_Send_init(buf, count, dt, dest, tag, comm, request),
                StartSend::SsendInit => {
                    ffi::MPI_Ssend_init(buf, count, dt, dest, tag, comm, request)
                }
                StartSend::Ibsend => ffi::MPI_Ibsend(buf, count, dt, dest, tag, comm, request),
                StartSend::BsendInit => {
                    ffi::MPI_Bsend_init(buf, count, dt, dest, tag, comm, request)
                }
                StartSend::Irsend => ffi::MPI_Irsend(buf, count, dt, dest, tag, comm, request),
                StartSend::RsendInit => {
                    ffi::MPI_Rsend_init(buf, count, dt, dest, tag, comm, request)
                }
            }
        }
    }

    /// The MPI-4 large-count (`_c`) form of [`StartSend::call`].
    ///
    /// # Safety
    /// As [`StartSend::call`].
    #[cfg(ferrompi_large_count)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn call_c(
        self,
        buf: *const c_void,
        count: ffi::MPI_Count,
        dt: ffi::MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: ffi::MPI_Comm,
        request: &mut ffi::MPI_Request,
    ) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match self {
                StartSend::Isend => ffi::MPI_Isend_c(buf, count, dt, dest, tag, comm, request),
                StartSend::Issend => ffi::MPI_Issend_c(buf, count, dt, dest, tag, comm, request),
                StartSend::SendInit => {
                    ffi::MPI_Send_init_c(buf, count, dt, dest, tag, comm, request)
                }
                StartSend::SsendInit => {
                    ffi::MPI_Ssend_init_c(buf, count, dt, dest, tag, comm, request)
                }
                StartSend::Ibsend => ffi::MPI_Ibsend_c(buf, count, dt, dest, tag, comm, request),
                StartSend::BsendInit => {
                    ffi::MPI_Bsend_init_c(buf, count, dt, dest, tag, comm, request)
                }
                StartSend::Irsend => ffi::MPI_Irsend_c(buf, count, dt, dest, tag, comm, request),
                StartSend::RsendInit => {
                    ffi::MPI_Rsend_init_c(buf, count, dt, dest, tag, comm, request)
                }
            }
        }
    }
}

/// The request of an `MPI_Isendrecv(_replace)`: completed, never cancelled, when dropped (its
/// send half cannot be cancelled), and its status is the receive's.
fn sendrecv(raw: ffi::MPI_Request) -> RawRequest {
    RawRequest {
        raw,
        kind: Kind::Send,
    }
}

/// Point-to-point, nonblocking: `isend` in the four modes, `irecv`, `isendrecv`, scoped or
/// owning their buffers (MPI-4.0 §3.7, §3.10).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let (rank, size) = (world.rank(), world.size());
/// let mut left = [0u64; 4];
/// let mine = [rank as u64; 4];
/// ferrompi::scope(|s| {
///     // Borrowed buffers: the scope completes every operation before they come back.
///     let recv = world.irecv(s, &mut left, (rank + size - 1) % size, 1)?;
///     let send = world.isend(s, &mine, (rank + 1) % size, 1)?;
///     send.wait()?;
///     recv.wait()?;
///     Ok::<_, ferrompi::Error>(())
/// })?;
/// assert_eq!(left, [((rank + size - 1) % size) as u64; 4]);
/// // Owned buffers: the request holds the vector until it completes.
/// let request = world.irecv_owned(vec![0u8; 2], rank, 2)?;
/// world.send(&[4u8, 2], rank, 2)?;
/// let (bytes, status) = request.wait();
/// assert_eq!((bytes, status?.count::<u8>()?), (vec![4, 2], 2));
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Starts a send or a send-like `*_init`; the buffer must stay valid until it completes.
    /// `pass` skips the thread gate's test for a caller holding one (a scope, see [`Pass`]).
    ///
    /// # Safety
    /// `buf` must stay allocated, unmoved and unmodified until the returned request completes.
    #[inline(always)]
    pub(crate) unsafe fn start_send<T: Equivalence>(
        &self,
        start: StartSend,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
        pass: Option<Pass>,
    ) -> Result<RawRequest> {
        let mut raw = MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: per the caller's contract; `raw` is a place for one handle.
        unsafe { self.start_send_to(start, buf, dest, tag, pass, raw.as_mut_ptr())? };
        Ok(RawRequest {
            // SAFETY: the start succeeded, so MPI wrote the request handle (an OUT argument);
            // nothing reads it otherwise.
            raw: unsafe { raw.assume_init() },
            kind: Kind::Send,
        })
    }

    /// [`Communicator::start_send`], with MPI writing the request handle at `out` (a
    /// [`RequestSet`]'s slot, or a place on the stack); `Ok` once it has.
    ///
    /// # Safety
    /// As [`Communicator::start_send`]; `out` is valid for writing one handle.
    #[inline(always)]
    unsafe fn start_send_to<T: Equivalence>(
        &self,
        start: StartSend,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let dest = dest.into();
        match self.send_args_fast::<T>(buf.len(), dest, tag) {
            // SAFETY: per the caller's contract.
            Some(args) => unsafe { self.start_send_checked(start, buf, args, pass, out) },
            // SAFETY: per the caller's contract.
            None => unsafe { self.start_send_slow(start, buf, dest, tag, pass, out) },
        }
    }

    /// [`Communicator::start_send_to`] when some argument is not on the fast path: the checks
    /// that tell its error, `PROC_NULL`, a tag above 32767, a count over `int`.
    ///
    /// # Safety
    /// As [`Communicator::start_send_to`].
    #[inline(never)]
    unsafe fn start_send_slow<T: Equivalence>(
        &self,
        start: StartSend,
        buf: &[T],
        dest: Destination,
        tag: i32,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let operation = start.name();
        match self.send_args_or_big::<T>(buf.len(), dest, tag, operation)? {
            // SAFETY: per the caller's contract.
            None => unsafe {
                let big = self.start_send_big(start, buf, dest, tag, operation)?;
                out.write(big.raw);
                Ok(())
            },
            // SAFETY: per the caller's contract.
            Some(args) => unsafe { self.start_send_checked(start, buf, args, pass, out) },
        }
    }

    /// The start itself, on checked arguments: the thread gate, the MPI call writing the
    /// handle at `out`, its return code.
    ///
    /// # Safety
    /// As [`Communicator::start_send_to`].
    #[inline(always)]
    unsafe fn start_send_checked<T: Equivalence>(
        &self,
        start: StartSend,
        buf: &[T],
        args: SendArgs,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let operation = start.name();
        let (ptr, datatype) = (send_ptr(buf), T::datatype().as_raw());
        let rc = {
            // Released before the result is built, which then need not wait in memory.
            let _gate = enter_with(pass, operation)?;
            // SAFETY: `buf` holds `args.count` elements of `T::datatype()` and, per the
            // caller, outlives the operation; MPI writes the request handle at `out`.
            unsafe {
                start.call(
                    ptr, args.count, datatype, args.dest, args.tag, self.raw, out,
                )
            }
        };
        check(rc, operation)
    }

    /// Starts a receive (`MPI_Irecv`) or a `MPI_Recv_init`; `pass` as in
    /// [`Communicator::start_send`].
    ///
    /// # Safety
    /// `buf` must stay allocated, unmoved and otherwise unaccessed until the request completes.
    #[inline(always)]
    pub(crate) unsafe fn start_recv<T: Equivalence>(
        &self,
        persistent: bool,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
        pass: Option<Pass>,
    ) -> Result<RawRequest> {
        let mut raw = MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: per the caller's contract; `raw` is a place for one handle.
        unsafe { self.start_recv_to(persistent, buf, source, tag, pass, raw.as_mut_ptr())? };
        Ok(RawRequest {
            // SAFETY: as in `start_send`.
            raw: unsafe { raw.assume_init() },
            kind: Kind::Recv,
        })
    }

    /// [`Communicator::start_recv`], with MPI writing the request handle at `out`, as in
    /// [`Communicator::start_send_to`].
    ///
    /// # Safety
    /// As [`Communicator::start_recv`]; `out` is valid for writing one handle.
    #[inline(always)]
    unsafe fn start_recv_to<T: Equivalence>(
        &self,
        persistent: bool,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let (source, tag) = (source.into(), tag.into());
        match self.recv_args_fast::<T>(buf.len(), source, tag) {
            // SAFETY: per the caller's contract.
            Some(args) => unsafe { self.start_recv_checked(persistent, buf, args, pass, out) },
            // SAFETY: per the caller's contract.
            None => unsafe { self.start_recv_slow(persistent, buf, source, tag, pass, out) },
        }
    }

    /// [`Communicator::start_recv_to`] when some argument is not on the fast path, as
    /// [`Communicator::start_send_slow`].
    ///
    /// # Safety
    /// As [`Communicator::start_recv_to`].
    #[inline(never)]
    unsafe fn start_recv_slow<T: Equivalence>(
        &self,
        persistent: bool,
        buf: &mut [T],
        source: Source,
        tag: TagMatch,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let operation = if persistent { "recv_init" } else { "irecv" };
        match self.recv_args_or_big::<T>(buf.len(), source, tag, operation)? {
            // SAFETY: per the caller's contract.
            None => unsafe {
                let big = self.start_recv_big(persistent, buf, source, tag, operation)?;
                out.write(big.raw);
                Ok(())
            },
            // SAFETY: per the caller's contract.
            Some(args) => unsafe { self.start_recv_checked(persistent, buf, args, pass, out) },
        }
    }

    /// The start itself, on checked arguments, as [`Communicator::start_send_checked`].
    ///
    /// # Safety
    /// As [`Communicator::start_recv_to`].
    #[inline(always)]
    unsafe fn start_recv_checked<T: Equivalence>(
        &self,
        persistent: bool,
        buf: &mut [T],
        args: RecvArgs,
        pass: Option<Pass>,
        out: *mut ffi::MPI_Request,
    ) -> Result<()> {
        let operation = if persistent { "recv_init" } else { "irecv" };
        let (ptr, datatype) = (recv_ptr(buf), T::datatype().as_raw());
        let rc = {
            // As in `start_send_checked`.
            let _gate = enter_with(pass, operation)?;
            // SAFETY: `buf` has room for `args.count` elements and, per the caller, stays ours
            // until the operation completes; MPI writes the request handle at `out`.
            unsafe {
                let start = if persistent {
                    ffi::MPI_Recv_init
                } else {
                    ffi::MPI_Irecv
                };
                let (source, tag) = (args.source, args.tag);
                start(ptr, args.count, datatype, source, tag, self.raw, out)
            }
        };
        check(rc, operation)
    }

    /// [`Communicator::start_send`] of more than `i32::MAX` elements (see `comm::large`).
    ///
    /// # Safety
    /// As [`Communicator::start_send`].
    #[cold]
    unsafe fn start_send_big<T: Equivalence>(
        &self,
        start: StartSend,
        buf: &[T],
        dest: Destination,
        tag: i32,
        operation: &'static str,
    ) -> Result<RawRequest> {
        let count = large_count::<T>(buf.len(), operation)?;
        let dest = self.raw_dest(dest, operation)?;
        check_tag(tag, operation)?;
        let (ptr, dt, comm) = (send_ptr(buf), T::datatype().as_raw(), self.raw);
        let mut raw = ffi::MPI_REQUEST_NULL;
        let _gate = enter(operation)?;
        #[cfg(ferrompi_large_count)]
        // SAFETY: `buf` holds `count` elements of `dt` and, per the caller, outlives the operation.
        let rc = unsafe { start.call_c(ptr, count, dt, dest, tag, comm, &mut raw) };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: as above, with the gate held; `n` of `span` are `count` elements of `dt`.
        let rc = unsafe {
            spanning(dt, count, operation, |n, span| {
                start.call(ptr, n, span, dest, tag, comm, &mut raw)
            })
        };
        check(rc, operation)?;
        Ok(RawRequest {
            raw,
            kind: Kind::Send,
        })
    }

    /// [`Communicator::start_recv`] of more than `i32::MAX` elements (see `comm::large`).
    ///
    /// # Safety
    /// As [`Communicator::start_recv`].
    #[cold]
    unsafe fn start_recv_big<T: Equivalence>(
        &self,
        persistent: bool,
        buf: &mut [T],
        source: Source,
        tag: TagMatch,
        operation: &'static str,
    ) -> Result<RawRequest> {
        let count = large_count::<T>(buf.len(), operation)?;
        let (source, tag) = (
            self.raw_source(source, operation)?,
            raw_tag(tag, operation)?,
        );
        let (ptr, dt, comm) = (recv_ptr(buf), T::datatype().as_raw(), self.raw);
        let mut raw = ffi::MPI_REQUEST_NULL;
        let _gate = enter(operation)?;
        #[cfg(ferrompi_large_count)]
        // SAFETY: `buf` has room for `count` elements and, per the caller, stays ours until the
        // operation completes.
        let rc = unsafe {
            if persistent {
                ffi::MPI_Recv_init_c(ptr, count, dt, source, tag, comm, &mut raw)
            } else {
                ffi::MPI_Irecv_c(ptr, count, dt, source, tag, comm, &mut raw)
            }
        };
        #[cfg(not(ferrompi_large_count))]
        // SAFETY: as above, with the gate held; `n` of `span` are `count` elements of `dt`.
        let rc = unsafe {
            spanning(dt, count, operation, |n, span| {
                if persistent {
                    ffi::MPI_Recv_init(ptr, n, span, source, tag, comm, &mut raw)
                } else {
                    ffi::MPI_Irecv(ptr, n, span, source, tag, comm, &mut raw)
                }
            })
        };
        check(rc, operation)?;
        Ok(RawRequest {
            raw,
            kind: Kind::Recv,
        })
    }

    /// Starts a standard-mode send of `buf`, borrowed for `scope` (`MPI_Isend`, MPI-4.0 §3.7.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let out = [1u64, 2];
    /// let mut got = [0u64; 2];
    /// ferrompi::scope(|s| {
    ///     let sending = world.isend(s, &out, me, 0)?; // `out` stays borrowed until the scope ends
    ///     let receiving = world.irecv(s, &mut got, me, 0)?;
    ///     sending.wait()?;
    ///     receiving.wait().map(drop)
    /// })?;
    /// assert_eq!(got, [1, 2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::InvalidTag`],
    /// [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn isend<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: `buf` is borrowed for 's; the scope completes or aborts before 's ends.
        let raw =
            unsafe { self.start_send(StartSend::Isend, buf, dest, tag, scope.in_flight.pass)? };
        Ok(Request::started(raw, None, &scope.in_flight))
    }

    /// Starts a synchronous-mode send (`MPI_Issend`): completes once the receive has started.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let out = [7u8];
    /// let mut got = [0u8];
    /// ferrompi::scope(|s| {
    ///     let sending = world.issend(s, &out, me, 0)?; // completes once the receive has matched
    ///     world.recv(&mut got, me, 0)?;
    ///     sending.wait().map(drop)
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`].
    #[inline(always)]
    pub fn issend<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: as in `isend`.
        let raw =
            unsafe { self.start_send(StartSend::Issend, buf, dest, tag, scope.in_flight.pass)? };
        Ok(Request::started(raw, None, &scope.in_flight))
    }

    /// Starts a buffered-mode send (`MPI_Ibsend`, MPI-4.0 §3.7.2): the message is copied into
    /// the buffer attached with [`Mpi::attach_buffer`](crate::Mpi::attach_buffer), so it
    /// completes without the receiver.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let attached = mpi.attach_buffer(64 + ferrompi::BSEND_OVERHEAD)?;
    /// let me = world.rank();
    /// let out = [1.0f64; 8];
    /// let mut got = [0.0f64; 8];
    /// ferrompi::scope(|s| {
    ///     world.ibsend(s, &out, me, 0)?.wait()?; // copied into the attached buffer
    ///     world.recv(&mut got, me, 0).map(drop)
    /// })?;
    /// drop(attached);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::bsend`].
    #[inline]
    pub fn ibsend<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<Request<'s>> {
        super::bsend::require_attached("ibsend")?;
        // SAFETY: as in `isend`.
        let raw =
            unsafe { self.start_send(StartSend::Ibsend, buf, dest, tag, scope.in_flight.pass)? };
        Ok(Request::started(raw, None, &scope.in_flight))
    }

    /// Starts a ready-mode send (`MPI_Irsend`, MPI-4.0 §3.7.2).
    ///
    /// # Safety
    /// As [`Communicator::rsend`]: the matching receive must already be posted at `dest`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let out = [2i32];
    /// let mut got = [0i32];
    /// ferrompi::scope(|s| {
    ///     let posted = world.irecv(s, &mut got, me, 3)?; // ready mode: the receive comes first
    ///     // SAFETY: the matching receive is posted above.
    ///     unsafe { world.irsend(s, &out, me, 3)? }.wait()?;
    ///     posted.wait().map(drop)
    /// })?;
    /// assert_eq!(got, [2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`].
    #[inline]
    pub unsafe fn irsend<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: as in `isend`; the posted receive is the caller's promise.
        let raw =
            unsafe { self.start_send(StartSend::Irsend, buf, dest, tag, scope.in_flight.pass)? };
        Ok(Request::started(raw, None, &scope.in_flight))
    }

    /// Starts a send to `dest` and a receive from `source` as one operation (`MPI_Isendrecv`,
    /// MPI-4.0 §3.10), both buffers borrowed for `scope`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let out = [rank];
    /// let mut from_left = [0i32];
    /// ferrompi::scope(|s| {
    ///     let left = (rank + size - 1) % size;
    ///     match world.isendrecv(s, &out, (rank + 1) % size, 0, &mut from_left, left, 0) {
    ///         Ok(shift) => shift.wait().map(drop),
    ///         // Open MPI 4.1 has no MPI_Isendrecv (MPI-4): post an irecv and an isend there.
    ///         Err(e) if e.class() == Some(ferrompi::ErrorClass::UnsupportedOperation) => Ok(()),
    ///         Err(e) => Err(e),
    ///     }
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::sendrecv`], but a count over `i32::MAX` is an
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::Mpi`] of class `UnsupportedOperation` on an MPI
    /// without MPI-4's `MPI_Isendrecv` (Open MPI 4.1: post an `irecv` and an `isend` there).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn isendrecv<'s, S: Equivalence, R: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [S],
        dest: impl Into<Destination>,
        send_tag: i32,
        recv: &'s mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Request<'s>> {
        const OP: &str = "isendrecv";
        let out = self.send_args::<S>(send.len(), dest, send_tag, OP)?;
        let inc = self.recv_args::<R>(recv.len(), source, recv_tag, OP)?;
        let (s, d) = (send_ptr(send), recv_ptr(recv));
        let (st, rt) = (S::datatype().as_raw(), R::datatype().as_raw());
        let mut raw = ffi::MPI_REQUEST_NULL;
        {
            let _gate = enter_with(scope.in_flight.pass, OP)?;
            #[cfg(ferrompi_isendrecv)]
            // SAFETY: `send` holds `out.count` elements MPI only reads, `recv` room for
            // `inc.count`; both borrowed for 's (they cannot overlap: shared vs exclusive), and
            // the scope completes the operation first.
            let rc = unsafe {
                ffi::MPI_Isendrecv(
                    s, out.count, st, out.dest, out.tag, d, inc.count, rt, inc.source, inc.tag,
                    self.raw, &mut raw,
                )
            };
            #[cfg(not(ferrompi_isendrecv))]
            let rc = {
                let _ = (s, d, st, rt, out, inc, &mut raw);
                crate::c_int_const!(ffi::MPI_ERR_UNSUPPORTED_OPERATION)
            };
            check(rc, OP)?;
        }
        Ok(Request::started(
            sendrecv(raw),
            Repair::for_slice(recv),
            &scope.in_flight,
        ))
    }

    /// Starts sending `buf` to `dest` and receiving into it from `source`
    /// (`MPI_Isendrecv_replace`, MPI-4.0 §3.10).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let mut token = [rank];
    /// ferrompi::scope(|s| {
    ///     let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    ///     match world.isendrecv_replace(s, &mut token, right, 0, left, 0) {
    ///         Ok(shift) => shift.wait().map(drop),
    ///         // Open MPI 4.1 has no MPI_Isendrecv_replace (MPI-4).
    ///         Err(e) if e.class() == Some(ferrompi::ErrorClass::UnsupportedOperation) => Ok(()),
    ///         Err(e) => Err(e),
    ///     }
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isendrecv`].
    #[inline]
    pub fn isendrecv_replace<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        dest: impl Into<Destination>,
        send_tag: i32,
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Request<'s>> {
        const OP: &str = "isendrecv_replace";
        let out = self.send_args::<T>(buf.len(), dest, send_tag, OP)?;
        let inc = self.recv_args::<T>(buf.len(), source, recv_tag, OP)?;
        let (ptr, dt) = (recv_ptr(buf), T::datatype().as_raw());
        let mut raw = ffi::MPI_REQUEST_NULL;
        {
            let _gate = enter_with(scope.in_flight.pass, OP)?;
            #[cfg(ferrompi_isendrecv)]
            // SAFETY: `buf` holds `out.count` elements, exclusively borrowed for 's; MPI reads
            // them, then writes at most as many; the scope completes the operation first.
            let rc = unsafe {
                ffi::MPI_Isendrecv_replace(
                    ptr, out.count, dt, out.dest, out.tag, inc.source, inc.tag, self.raw, &mut raw,
                )
            };
            #[cfg(not(ferrompi_isendrecv))]
            let rc = {
                let _ = (ptr, dt, out, inc, &mut raw);
                crate::c_int_const!(ffi::MPI_ERR_UNSUPPORTED_OPERATION)
            };
            check(rc, OP)?;
        }
        Ok(Request::started(
            sendrecv(raw),
            Repair::for_slice(buf),
            &scope.in_flight,
        ))
    }

    /// Starts a receive into `buf`, borrowed for `scope` (`MPI_Irecv`, MPI-4.0 §3.7.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{ANY_SOURCE, ANY_TAG};
    /// let me = world.rank();
    /// let mut got = [0.0f32; 3];
    /// ferrompi::scope(|s| {
    ///     let receiving = world.irecv(s, &mut got, ANY_SOURCE, ANY_TAG)?;
    ///     world.send(&[1.0f32, 2.0, 3.0], me, 4)?;
    ///     let status = receiving.wait()?;
    ///     assert_eq!(status.tag(), 4);
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`].
    #[inline(always)]
    pub fn irecv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<'s>> {
        let repair = Repair::for_slice(buf);
        // SAFETY: `buf` is exclusively borrowed for 's; the scope completes or aborts first.
        let raw = unsafe { self.start_recv(false, buf, source, tag, scope.in_flight.pass)? };
        Ok(Request::started(raw, repair, &scope.in_flight))
    }

    /// [`isend`](Communicator::isend) straight into `set`: MPI writes the request handle into
    /// the set's array, where [`RequestSet::wait_all`] reads it, as a C program passes
    /// `&requests[i]` to `MPI_Isend` (MPI-4.0 §3.7.2). Returns the request's index in the set.
    ///
    /// The same operation as `set.push(world.isend(s, buf, dest, tag)?)`, without a
    /// [`Request`] in between: the form for loops that post many small messages per batch.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{RequestSet, RequestStorage};
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank as u64; 2];
    /// let mut got = [[0u64; 2]; 4];
    /// let mut storage = RequestStorage::with_capacity(8); // no allocation per batch
    /// ferrompi::scope(|s| {
    ///     let mut set = RequestSet::with_storage(s, &mut storage);
    ///     for (tag, into) in got.iter_mut().enumerate() {
    ///         world.irecv_into(&mut set, s, into, left, tag as i32)?;
    ///     }
    ///     for tag in 0..4 {
    ///         let index = world.isend_into(&mut set, s, &out, right, tag)?;
    ///         assert_eq!(index, 4 + tag as usize); // in the order posted
    ///     }
    ///     set.wait_all()
    /// })?;
    /// assert_eq!(got, [[left as u64; 2]; 4]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`]; on an error nothing was started and `set` is as it was.
    #[inline(always)]
    pub fn isend_into<'s, T: Equivalence>(
        &'s self,
        set: &mut RequestSet<'s>,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<usize> {
        let slot = set.reserve_slot(Kind::Send, None);
        let pass = scope.in_flight.pass;
        // SAFETY: `buf` is borrowed for 's, and the scope completes or aborts before 's ends;
        // the slot has room for the handle.
        match unsafe { self.start_send_to(StartSend::Isend, buf, dest, tag, pass, slot) } {
            // SAFETY: the start succeeded, so MPI wrote the handle into the slot.
            Ok(()) => Ok(unsafe { set.commit_slot(&scope.in_flight) }),
            Err(error) => {
                set.release_slot(Kind::Send, false);
                Err(error)
            }
        }
    }

    /// [`irecv`](Communicator::irecv) straight into `set`, as
    /// [`isend_into`](Communicator::isend_into) (`MPI_Irecv`, MPI-4.0 §3.7.2). Returns the
    /// request's index in the set.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut got = [false; 3];
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::with_capacity(s, 2);
    ///     let index = world.irecv_into(&mut set, s, &mut got, me, 0)?;
    ///     world.isend_into(&mut set, s, &[true, false, true], me, 0)?;
    ///     set.wait_all()?;
    ///     assert_eq!(index, 0);
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// assert_eq!(got, [true, false, true]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`]; on an error nothing was started and `set` is as it was.
    #[inline(always)]
    pub fn irecv_into<'s, T: Equivalence>(
        &'s self,
        set: &mut RequestSet<'s>,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<usize> {
        let repair = Repair::for_slice(buf);
        let slot = set.reserve_slot(Kind::Recv, repair);
        let pass = scope.in_flight.pass;
        // SAFETY: `buf` is exclusively borrowed for 's, and the scope completes or aborts
        // before 's ends; the slot has room for the handle.
        match unsafe { self.start_recv_to(false, buf, source, tag, pass, slot) } {
            // SAFETY: as in `isend_into`.
            Ok(()) => Ok(unsafe { set.commit_slot(&scope.in_flight) }),
            Err(error) => {
                set.release_slot(Kind::Recv, repair.is_some());
                Err(error)
            }
        }
    }

    /// Starts a send of a buffer the request owns and hands back on completion.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// // The request owns the vector: no scope needed, and it can move to another thread.
    /// let sending = world.isend_owned(vec![1u32, 2, 3], me, 0)?;
    /// let mut got = [0u32; 3];
    /// world.recv(&mut got, me, 0)?;
    /// let (buffer, status) = sending.wait(); // the vector comes back with the result
    /// status?;
    /// assert_eq!(buffer, got);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`]; the buffer is dropped.
    #[inline(always)]
    pub fn isend_owned<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<OwnedRequest<'_, B>> {
        // SAFETY: the heap storage of `buf` moves into the request, which never frees it while
        // the operation may be in flight (see `OwnedRequest`).
        let raw = unsafe { self.start_send(StartSend::Isend, buf.as_slice(), dest, tag, None)? };
        Ok(OwnedRequest::started(raw, buf))
    }

    /// Starts a synchronous-mode send of an owned buffer (`MPI_Issend`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.issend_owned(vec![9u8], me, 0)?;
    /// let (got, _) = world.recv_vec::<u8>(me, 0)?;
    /// sending.wait().1?;
    /// assert_eq!(got, [9]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`].
    #[inline(always)]
    pub fn issend_owned<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<OwnedRequest<'_, B>> {
        // SAFETY: as in `isend_owned`.
        let raw = unsafe { self.start_send(StartSend::Issend, buf.as_slice(), dest, tag, None)? };
        Ok(OwnedRequest::started(raw, buf))
    }

    /// Starts a receive into a buffer the request owns and hands back on completion.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let receiving = world.irecv_owned(vec![0i64; 2], me, 5)?;
    /// world.send(&[-1i64, 1], me, 5)?;
    /// let (values, status) = receiving.wait();
    /// assert_eq!((values, status?.count::<i64>()?), (vec![-1, 1], 2));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend`].
    #[inline(always)]
    pub fn irecv_owned<B: OwnedBuffer>(
        &self,
        mut buf: B,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<OwnedRequest<'_, B>> {
        // SAFETY: as in `isend_owned`; nothing else can reach the storage.
        let raw = unsafe { self.start_recv(false, buf.as_mut_slice(), source, tag, None)? };
        Ok(OwnedRequest::started(raw, buf))
    }
}
