//! Blocking point-to-point communication (MPI-4.0 chapter 3): the four send modes, `recv`,
//! `sendrecv`, `sendrecv_replace`, typed peers and tags, and [`Status`].
//!
//! Every call checks, before MPI sees it, that the peer rank is in the communicator, that the tag
//! is in `0..=MPI_TAG_UB`, and that the element count fits MPI's `int`. A receive buffer smaller
//! than the message gives [`ErrorClass::Truncate`](crate::ErrorClass::Truncate): MPI never writes
//! past the buffer, and the job goes on.

pub use crate::status::Status;

use super::Communicator;
use super::call::SendMode;
use crate::datatype::{Equivalence, count_overflow, int_count, recv_ptr, repair, send_ptr};
use crate::env::tag_ub;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;

/// Which sender a receive matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The process with this rank in the communicator.
    Rank(i32),
    /// Any sender (`MPI_ANY_SOURCE`).
    Any,
    /// No process (`MPI_PROC_NULL`): the receive completes at once with no data.
    ProcNull,
}

impl From<i32> for Source {
    fn from(rank: i32) -> Source {
        Source::Rank(rank)
    }
}

/// Where a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Destination {
    /// The process with this rank in the communicator.
    Rank(i32),
    /// No process (`MPI_PROC_NULL`): the send completes at once and sends nothing.
    ProcNull,
}

impl From<i32> for Destination {
    fn from(rank: i32) -> Destination {
        Destination::Rank(rank)
    }
}

/// The null process (`MPI_PROC_NULL`), usable as a [`Destination`] or a [`Source`]: operations
/// with it complete at once and move no data, which removes edge cases at the ends of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcNull;

/// The null process; see [`ProcNull`].
pub const PROC_NULL: ProcNull = ProcNull;

impl ProcNull {
    /// `MPI_PROC_NULL`'s value where a rank is an `i32`: a [`Status::source`] after a receive
    /// from it, and an entry of [`Group::translate_ranks`](crate::Group::translate_ranks).
    pub const RANK: i32 = crate::c_int_const!(ffi::MPI_PROC_NULL);
}

impl From<ProcNull> for Destination {
    fn from(_: ProcNull) -> Destination {
        Destination::ProcNull
    }
}

impl From<ProcNull> for Source {
    fn from(_: ProcNull) -> Source {
        Source::ProcNull
    }
}

/// Which tags a receive matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagMatch {
    /// Exactly this tag.
    Tag(i32),
    /// Any tag (`MPI_ANY_TAG`).
    Any,
}

impl From<i32> for TagMatch {
    fn from(tag: i32) -> TagMatch {
        TagMatch::Tag(tag)
    }
}

/// Receive from any sender: `comm.recv(&mut buf, ANY_SOURCE, 7)`.
pub const ANY_SOURCE: Source = Source::Any;
/// Receive any tag: `comm.recv(&mut buf, 0, ANY_TAG)`.
pub const ANY_TAG: TagMatch = TagMatch::Any;

/// The smallest `MPI_TAG_UB` an MPI may have (MPI-4.0 §9.1.2: at least 32767): every MPI
/// accepts the tags up to it.
const TAG_UB_AT_LEAST: i32 = 32767;

/// Checks that `tag` is a valid message tag: `0..=MPI_TAG_UB`. A tag up to 32767 passes without
/// reading this MPI's bound (a test LLVM folds away for tags known to be small).
#[inline]
pub(crate) fn check_tag(tag: i32, operation: &'static str) -> Result<()> {
    if (0..=TAG_UB_AT_LEAST).contains(&tag) {
        return Ok(());
    }
    let max = tag_ub();
    if (0..=max).contains(&tag) {
        Ok(())
    } else {
        Err(invalid_tag(tag, max, operation))
    }
}

/// Whether `e` is a count over `int`, which the large-count paths take.
fn overflow(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::CountOverflow { .. })
}

/// The error of a tag outside `0..=max`, built out of line (as `invalid_rank`).
#[cold]
fn invalid_tag(tag: i32, max: i32, operation: &'static str) -> Error {
    ErrorKind::InvalidTag {
        operation,
        tag,
        max,
    }
    .into()
}

/// Checked arguments of a send: count, destination and tag.
#[derive(Clone, Copy)]
pub(crate) struct SendArgs {
    pub(crate) count: c_int,
    pub(crate) dest: c_int,
    pub(crate) tag: c_int,
}

/// Checked arguments of a receive: count, source and tag.
#[derive(Clone, Copy)]
pub(crate) struct RecvArgs {
    pub(crate) count: c_int,
    pub(crate) source: c_int,
    pub(crate) tag: c_int,
}

/// Point-to-point, blocking: `send` in the four modes, `recv`, `sendrecv` (MPI-4.0 §3.2–§3.4,
/// §3.10).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let (rank, size) = (world.rank(), world.size());
/// // A ring: send to the right, receive from the left, in one call that cannot deadlock.
/// let mut from_left = [0i32];
/// world.sendrecv(&[rank], (rank + 1) % size, 7, &mut from_left, (rank + size - 1) % size, 7)?;
/// assert_eq!(from_left[0], (rank + size - 1) % size);
/// if size > 1 {
///     if rank == 0 {
///         world.send(&[1.5f64, 2.5], 1, 0)?;
///     } else if rank == 1 {
///         let mut got = [0.0f64; 2];
///         let status = world.recv(&mut got, 0, 0)?;
///         assert_eq!((got, status.source()), ([1.5, 2.5], 0));
///     }
/// }
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl Communicator<'_> {
    /// Checks a send's arguments before any MPI call.
    #[inline]
    pub(crate) fn send_args<T: Equivalence>(
        &self,
        len: usize,
        dest: impl Into<Destination>,
        tag: i32,
        operation: &'static str,
    ) -> Result<SendArgs> {
        // The count last, so that a count overflow means the rest is valid (see the
        // large-count paths).
        self.send_args_or_big::<T>(len, dest.into(), tag, operation)?
            .ok_or_else(|| count_overflow(len, T::ELEMENTS, operation))
    }

    /// [`send_args`](Self::send_args), with a count over `int` told apart from an error:
    /// `Ok(None)` when only the count does not fit (the large-count path takes the call). The
    /// caller then chooses its path without looking into an error, and the compiler sees that a
    /// bad rank or tag leaves by `?`: a loop that sends to the same rank tests it once.
    #[inline]
    pub(crate) fn send_args_or_big<T: Equivalence>(
        &self,
        len: usize,
        dest: Destination,
        tag: i32,
        operation: &'static str,
    ) -> Result<Option<SendArgs>> {
        let dest = self.raw_dest(dest, operation)?;
        check_tag(tag, operation)?;
        Ok(int_count::<T>(len).map(|count| SendArgs { count, dest, tag }))
    }

    /// [`recv_args`](Self::recv_args) as [`send_args_or_big`](Self::send_args_or_big).
    #[inline]
    pub(crate) fn recv_args_or_big<T: Equivalence>(
        &self,
        len: usize,
        source: Source,
        tag: TagMatch,
        operation: &'static str,
    ) -> Result<Option<RecvArgs>> {
        let source = self.raw_source(source, operation)?;
        let tag = raw_tag(tag, operation)?;
        Ok(int_count::<T>(len).map(|count| RecvArgs { count, source, tag }))
    }

    /// A send's arguments when each passes at once: a rank of the communicator, a tag up to
    /// the least `MPI_TAG_UB` and a count within `int`; `None` otherwise, when
    /// [`send_args`](Self::send_args) tells the error or the large-count path. The nonblocking
    /// starts test this first, so that no `Result` of the arguments (which LLVM may lay out in
    /// memory with the error's fields) sits on their path.
    #[inline(always)]
    pub(crate) fn send_args_fast<T: Equivalence>(
        &self,
        len: usize,
        dest: Destination,
        tag: i32,
    ) -> Option<SendArgs> {
        let Destination::Rank(dest) = dest else {
            return None;
        };
        let count = int_count::<T>(len)?;
        ((dest as u32) < (self.size as u32) && (0..=TAG_UB_AT_LEAST).contains(&tag))
            .then_some(SendArgs { count, dest, tag })
    }

    /// A receive's arguments when each passes at once, as [`send_args_fast`](Self::send_args_fast)
    /// (the source may also be `ANY_SOURCE`, the tag `ANY_TAG`).
    #[inline(always)]
    pub(crate) fn recv_args_fast<T: Equivalence>(
        &self,
        len: usize,
        source: Source,
        tag: TagMatch,
    ) -> Option<RecvArgs> {
        let source = match source {
            Source::Rank(rank) if (rank as u32) < (self.size as u32) => rank,
            Source::Any => ffi::MPI_ANY_SOURCE,
            _ => return None,
        };
        let tag = match tag {
            TagMatch::Tag(tag) if (0..=TAG_UB_AT_LEAST).contains(&tag) => tag,
            TagMatch::Any => ffi::MPI_ANY_TAG,
            TagMatch::Tag(_) => return None,
        };
        let count = int_count::<T>(len)?;
        Some(RecvArgs { count, source, tag })
    }

    /// `MPI_Recv` with checked arguments; MPI writes at most `args.count` elements.
    ///
    /// # Safety
    /// `ptr` must have room for `args.count` elements of `datatype`, written by nothing else
    /// during the call, and the caller must hold the thread gate.
    #[inline(always)]
    pub(crate) unsafe fn raw_recv(
        &self,
        ptr: *mut std::ffi::c_void,
        datatype: ffi::MPI_Datatype,
        args: RecvArgs,
        status: &mut Status,
    ) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            ffi::MPI_Recv(
                ptr,
                args.count,
                datatype,
                args.source,
                args.tag,
                self.raw,
                status.as_raw_mut(),
            )
        }
    }

    /// Checks a receive's arguments before any MPI call.
    #[inline]
    pub(crate) fn recv_args<T: Equivalence>(
        &self,
        len: usize,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
        operation: &'static str,
    ) -> Result<RecvArgs> {
        // As in `send_args`.
        self.recv_args_or_big::<T>(len, source.into(), tag.into(), operation)?
            .ok_or_else(|| count_overflow(len, T::ELEMENTS, operation))
    }

    #[inline]
    pub(crate) fn raw_dest(&self, dest: Destination, operation: &'static str) -> Result<c_int> {
        match dest {
            Destination::Rank(rank) => self
                .check_rank(rank, "destination", operation)
                .map(|()| rank),
            Destination::ProcNull => Ok(ffi::MPI_PROC_NULL),
        }
    }

    #[inline]
    pub(crate) fn raw_source(&self, source: Source, operation: &'static str) -> Result<c_int> {
        match source {
            Source::Rank(rank) => self.check_rank(rank, "source", operation).map(|()| rank),
            Source::Any => Ok(ffi::MPI_ANY_SOURCE),
            Source::ProcNull => Ok(ffi::MPI_PROC_NULL),
        }
    }

    /// Sends in one of the four blocking modes.
    #[inline(always)]
    fn send_with<T: Equivalence>(
        &self,
        mode: SendMode,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
        operation: &'static str,
    ) -> Result<()> {
        let dest = dest.into();
        let Some(args) = self.send_args_or_big::<T>(buf.len(), dest, tag, operation)? else {
            return self.send_big(mode, buf, dest, tag, operation);
        };
        // The datatype before the gate, as everywhere: a derived type's first use builds it.
        let dt = T::datatype().as_raw();
        // SAFETY: `buf` holds `args.count` elements of `T::datatype()` (Equivalence contract)
        // that MPI only reads, and stays borrowed until the blocking call returns.
        let rc = self.gated(
            operation,
            #[inline(always)]
            || unsafe { mode.call(send_ptr(buf), args.count, dt, args.dest, args.tag, self.raw) },
        )?;
        check(rc, operation)
    }

    /// Sends `buf` to `dest` with `tag`, blocking until the buffer can be reused (`MPI_Send`,
    /// MPI-4.0 §3.2.1). `dest` is a rank or [`PROC_NULL`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// if size > 1 && rank == 0 {
    ///     world.send(&[1.0f64, 2.0, 3.0], 1, 0)?; // to rank 1, tag 0
    /// } else if size > 1 && rank == 1 {
    ///     let mut got = [0.0f64; 3];
    ///     world.recv(&mut got, 0, 0)?;
    ///     assert_eq!(got, [1.0, 2.0, 3.0]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::InvalidTag`], [`ErrorKind::CountOverflow`] before
    /// any communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline]
    pub fn send<T: Equivalence>(
        &self,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        self.send_with(SendMode::Standard, buf, dest, tag, "send")
    }

    /// A blocking send of more than `i32::MAX` elements (see `comm::large`).
    #[cold]
    fn send_big<T: Equivalence>(
        &self,
        mode: SendMode,
        buf: &[T],
        dest: Destination,
        tag: i32,
        operation: &'static str,
    ) -> Result<()> {
        let count = super::large::large_count::<T>(buf.len(), operation)?;
        let dest = self.raw_dest(dest, operation)?;
        check_tag(tag, operation)?;
        let _gate = self.enter(operation)?;
        // SAFETY: rank and tag checked, the gate held; `buf` holds `count` elements, borrowed
        // for the call.
        unsafe {
            self.send_large(
                mode,
                send_ptr(buf),
                count,
                T::datatype().as_raw(),
                dest,
                tag,
                operation,
            )
        }
    }

    /// Synchronous send (`MPI_Ssend`, MPI-4.0 §3.4): returns only once the receiver has started
    /// receiving, so it never relies on buffering.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// if world.size() > 1 && world.rank() == 0 {
    ///     world.ssend(&[42u8], 1, 0)?; // returns once rank 1 has started receiving
    /// } else if world.size() > 1 && world.rank() == 1 {
    ///     let mut got = [0u8];
    ///     world.recv(&mut got, 0, 0)?;
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`].
    #[inline]
    pub fn ssend<T: Equivalence>(
        &self,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        self.send_with(SendMode::Synchronous, buf, dest, tag, "ssend")
    }

    /// Buffered send (`MPI_Bsend`, MPI-4.0 §3.4, §3.6): copies the message into the buffer
    /// attached with [`Mpi::attach_buffer`](crate::Mpi::attach_buffer) and returns at once.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// // Room for one message of 8 values and the per-message overhead.
    /// let attached = mpi.attach_buffer(8 * 8 + ferrompi::BSEND_OVERHEAD)?;
    /// let me = world.rank();
    /// world.bsend(&[1.0f64; 8], me, 0)?; // copied out: returns at once, even to ourselves
    /// let mut got = [0.0f64; 8];
    /// world.recv(&mut got, me, 0)?;
    /// drop(attached); // detaches, waiting for buffered messages to leave
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`]; [`ErrorKind::InvalidArgument`] when no buffer is attached
    /// (checked by ferrompi, since Open MPI 4.1 would send anyway); [`ErrorKind::Mpi`] with class
    /// `Buffer` when the attached buffer is too small.
    #[inline(always)]
    pub fn bsend<T: Equivalence>(
        &self,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        super::bsend::require_attached("bsend")?;
        self.send_with(SendMode::Buffered, buf, dest, tag, "bsend")
    }

    /// Ready send (`MPI_Rsend`, MPI-4.0 §3.4): may skip the handshake a standard send needs.
    ///
    /// # Safety
    /// The matching receive must already be posted at `dest`. The standard makes a ready send
    /// without one erroneous with an undefined outcome, and neither ferrompi nor MPI can check it
    /// (it is a property of the other process's progress), so this is `unsafe` rather than
    /// guarded. A receive posted before a barrier or a message that both ranks order on is
    /// the usual way to establish it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut got = [0i32];
    /// ferrompi::scope(|s| {
    ///     let posted = world.irecv(s, &mut got, me, 9)?; // the receive must be posted first
    ///     // SAFETY: the matching receive is posted above.
    ///     unsafe { world.rsend(&[5], me, 9)? };
    ///     posted.wait().map(drop)
    /// })?;
    /// assert_eq!(got, [5]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`].
    #[inline]
    pub unsafe fn rsend<T: Equivalence>(
        &self,
        buf: &[T],
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        self.send_with(SendMode::Ready, buf, dest, tag, "rsend")
    }

    /// Receives a message into `buf` (`MPI_Recv`, MPI-4.0 §3.2.4). The message may be shorter
    /// than `buf`; [`Status::count`] says how many values arrived.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{ANY_SOURCE, ANY_TAG};
    /// let me = world.rank();
    /// let out = [3u16, 4];
    /// let mut got = [0u16; 2];
    /// ferrompi::scope(|s| {
    ///     let sending = world.isend(s, &out, me, 1)?;
    ///     let status = world.recv(&mut got, ANY_SOURCE, ANY_TAG)?; // from anyone, any tag
    ///     assert_eq!((status.source(), status.tag(), status.count::<u16>()?), (me, 1, 2));
    ///     sending.wait().map(drop)
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::InvalidTag`], [`ErrorKind::CountOverflow`] before
    /// any communication; [`ErrorKind::Mpi`] with
    /// [`ErrorClass::Truncate`](crate::ErrorClass::Truncate) if the message is longer than `buf`
    /// (the message is consumed; `buf` may hold part of it);
    /// [`ErrorKind::WrongThread`].
    #[inline(always)]
    pub fn recv<T: Equivalence>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "recv";
        let (source, tag) = (source.into(), tag.into());
        let Some(args) = self.recv_args_or_big::<T>(buf.len(), source, tag, OP)? else {
            return self.recv_big(buf, source, tag);
        };
        let dt = T::datatype().as_raw();
        let mut status = Status::empty();
        // SAFETY: `buf` has room for `args.count` elements of `T::datatype()` and is
        // exclusively borrowed until the blocking call returns.
        let rc = self.gated(
            OP,
            #[inline(always)]
            || unsafe { self.raw_recv(recv_ptr(buf), dt, args, &mut status) },
        )?;
        repair(buf);
        check(rc, OP)?;
        Ok(status)
    }

    /// [`Communicator::recv`] of more than `i32::MAX` elements (see `comm::large`).
    #[cold]
    fn recv_big<T: Equivalence>(
        &self,
        buf: &mut [T],
        source: Source,
        tag: TagMatch,
    ) -> Result<Status> {
        const OP: &str = "recv";
        let count = super::large::large_count::<T>(buf.len(), OP)?;
        let source = self.raw_source(source, OP)?;
        let tag = raw_tag(tag, OP)?;
        let mut status = Status::empty();
        let rc = {
            let _gate = self.enter(OP)?;
            // SAFETY: source and tag checked, the gate held; `buf` has room for `count`
            // elements, exclusively borrowed for the call; `status` is ours.
            unsafe {
                self.recv_large(
                    recv_ptr(buf),
                    count,
                    T::datatype().as_raw(),
                    source,
                    tag,
                    status.as_raw_mut(),
                )
            }
        };
        repair(buf);
        check(rc, OP)?;
        Ok(status)
    }

    /// Sends `send` to `dest` and receives into `recv` in one call (`MPI_Sendrecv`,
    /// MPI-4.0 §3.10): the safe way to exchange in a ring, or with oneself, without deadlock.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let mut from_left = [0i32];
    /// world.sendrecv(&[rank], right, 0, &mut from_left, left, 0)?; // a ring shift, deadlock-free
    /// assert_eq!(from_left[0], left);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`] and [`Communicator::recv`], checked before any communication.
    #[inline(always)]
    pub fn sendrecv<S: Equivalence, R: Equivalence>(
        &self,
        send: &[S],
        dest: impl Into<Destination>,
        send_tag: i32,
        recv: &mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "sendrecv";
        let (dest, source, recv_tag) = (dest.into(), source.into(), recv_tag.into());
        // Both checks pass on the hot path, which then only compares and branches; anything
        // else (an error, `PROC_NULL`, a tag over the least `MPI_TAG_UB`, a count over `int`)
        // is sorted out of line.
        let (Some(out), Some(inc)) = (
            self.send_args_fast::<S>(send.len(), dest, send_tag),
            self.recv_args_fast::<R>(recv.len(), source, recv_tag),
        ) else {
            return self.sendrecv_slow(send, dest, send_tag, recv, source, recv_tag);
        };
        let mut status = Status::empty();
        // SAFETY: `send` holds `out.count` elements that MPI only reads; `recv` has room for
        // `inc.count` elements and is exclusively borrowed; they cannot overlap (shared vs
        // exclusive borrow). Both stay borrowed until the blocking call returns.
        let rc = self.gated(
            OP,
            #[inline(always)]
            || unsafe {
                ffi::MPI_Sendrecv(
                    send_ptr(send),
                    out.count,
                    S::datatype().as_raw(),
                    out.dest,
                    out.tag,
                    recv_ptr(recv),
                    inc.count,
                    R::datatype().as_raw(),
                    inc.source,
                    inc.tag,
                    self.raw,
                    status.as_raw_mut(),
                )
            },
        )?;
        repair(recv);
        check(rc, OP)?;
        Ok(status)
    }

    /// [`Communicator::sendrecv`] where a fast check did not pass: the first error (the
    /// send's before the receive's), or any valid call (`PROC_NULL`, a tag over the least
    /// `MPI_TAG_UB`, a buffer of more than `i32::MAX` elements) through the large-count path.
    #[cold]
    fn sendrecv_slow<S: Equivalence, R: Equivalence>(
        &self,
        send: &[S],
        dest: Destination,
        send_tag: i32,
        recv: &mut [R],
        source: Source,
        recv_tag: TagMatch,
    ) -> Result<Status> {
        const OP: &str = "sendrecv";
        match (
            self.send_args::<S>(send.len(), dest, send_tag, OP),
            self.recv_args::<R>(recv.len(), source, recv_tag, OP),
        ) {
            (Err(e), _) if !overflow(&e) => return Err(e),
            (Err(e), Err(other)) if !overflow(&other) => return Err(e),
            (Ok(_), Err(e)) if !overflow(&e) => return Err(e),
            _ => {} // counts over `int` only (or none: this path takes any valid call)
        }
        let large = super::large::large_count::<S>(send.len(), OP)?;
        let recv_large = super::large::large_count::<R>(recv.len(), OP)?;
        let dest = self.raw_dest(dest, OP)?;
        let source = self.raw_source(source, OP)?;
        let recv_tag = raw_tag(recv_tag, OP)?;
        let mut status = Status::empty();
        let rc = {
            let _gate = self.enter(OP)?;
            // SAFETY: ranks and tags checked, the gate held; both buffers hold their counts,
            // borrowed for the call; `status` is ours.
            unsafe {
                self.sendrecv_large(
                    (
                        send_ptr(send),
                        large,
                        S::datatype().as_raw(),
                        dest,
                        send_tag,
                    ),
                    (
                        recv_ptr(recv),
                        recv_large,
                        R::datatype().as_raw(),
                        source,
                        recv_tag,
                    ),
                    status.as_raw_mut(),
                )
            }
        };
        repair(recv);
        check(rc, OP)?;
        Ok(status)
    }

    /// Sends `buf` to `dest`, then replaces its contents with a message from `source`
    /// (`MPI_Sendrecv_replace`, MPI-4.0 §3.10). The message received must fit `buf`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let mut token = [rank];
    /// world.sendrecv_replace(&mut token, (rank + 1) % size, 0, (rank + size - 1) % size, 0)?;
    /// assert_eq!(token[0], (rank + size - 1) % size);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::sendrecv`].
    #[inline(always)]
    pub fn sendrecv_replace<T: Equivalence>(
        &self,
        buf: &mut [T],
        dest: impl Into<Destination>,
        send_tag: i32,
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "sendrecv_replace";
        let out = self.send_args::<T>(buf.len(), dest, send_tag, OP)?;
        let inc = self.recv_args::<T>(buf.len(), source, recv_tag, OP)?;
        let mut status = Status::empty();
        let rc = {
            let _gate = self.enter(OP)?;
            // SAFETY: `buf` holds `out.count` elements, exclusively borrowed for the blocking
            // call; MPI reads them, then writes at most as many.
            unsafe {
                ffi::MPI_Sendrecv_replace(
                    recv_ptr(buf),
                    out.count,
                    T::datatype().as_raw(),
                    out.dest,
                    out.tag,
                    inc.source,
                    inc.tag,
                    self.raw,
                    status.as_raw_mut(),
                )
            }
        };
        repair(buf);
        check(rc, OP)?;
        Ok(status)
    }
}

/// The raw tag of a receive, checked.
#[inline]
pub(crate) fn raw_tag(tag: TagMatch, operation: &'static str) -> Result<c_int> {
    match tag {
        TagMatch::Tag(tag) => check_tag(tag, operation).map(|()| tag),
        TagMatch::Any => Ok(ffi::MPI_ANY_TAG),
    }
}
