//! Blocking point-to-point communication (MPI-4.0 chapter 3): `send`, `recv`, `sendrecv` and
//! [`Status`].
//!
//! Every call checks, before MPI sees it, that the peer rank is in the communicator, that the tag
//! is in `0..=MPI_TAG_UB`, and that the element count fits MPI's `int`. A receive buffer smaller
//! than the message gives [`ErrorClass::Truncate`](crate::ErrorClass::Truncate): MPI never writes
//! past the buffer, and the job goes on.

use super::Communicator;
use crate::datatype::{Equivalence, count_of, recv_ptr, repair, send_ptr};
use crate::env::{enter, tag_ub};
use crate::error::{Error, Result, check};
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

/// Checks that `tag` is a valid message tag: `0..=MPI_TAG_UB`.
#[inline]
pub(crate) fn check_tag(tag: i32, operation: &'static str) -> Result<()> {
    let max = tag_ub();
    if (0..=max).contains(&tag) {
        Ok(())
    } else {
        Err(Error::InvalidTag {
            operation,
            tag,
            max,
        })
    }
}

impl Communicator<'_> {
    #[inline]
    fn raw_source(&self, source: Source, operation: &'static str) -> Result<c_int> {
        match source {
            Source::Rank(rank) => self.check_rank(rank, "source", operation).map(|()| rank),
            Source::Any => Ok(ffi::MPI_ANY_SOURCE),
            Source::ProcNull => Ok(ffi::MPI_PROC_NULL),
        }
    }

    /// Sends `buf` to rank `dest` with `tag`, blocking until the buffer can be reused
    /// (`MPI_Send`, MPI-4.0 §3.2.1).
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::InvalidTag`], [`Error::CountOverflow`] before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`].
    #[inline]
    pub fn send<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        const OP: &str = "send";
        let count = count_of::<T>(buf.len(), OP)?;
        self.check_rank(dest, "destination", OP)?;
        check_tag(tag, OP)?;
        let _gate = enter(OP)?;
        // SAFETY: `buf` holds `count` elements of `T::datatype()` (Equivalence contract) that
        // MPI only reads, and stays borrowed until the blocking call returns.
        let rc = unsafe {
            ffi::MPI_Send(
                send_ptr(buf),
                count,
                T::datatype().as_raw(),
                dest,
                tag,
                self.raw,
            )
        };
        check(rc, OP)
    }

    /// Receives a message into `buf` (`MPI_Recv`, MPI-4.0 §3.2.4). The message may be shorter
    /// than `buf`; [`Status::count`] says how many values arrived.
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::InvalidTag`], [`Error::CountOverflow`] before any
    /// communication; [`Error::Mpi`] with [`ErrorClass::Truncate`](crate::ErrorClass::Truncate)
    /// if the message is longer than `buf` (the message is consumed; `buf` may hold part of it);
    /// [`Error::WrongThread`].
    #[inline]
    pub fn recv<T: Equivalence>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "recv";
        let count = count_of::<T>(buf.len(), OP)?;
        let source = self.raw_source(source.into(), OP)?;
        let tag = raw_tag(tag.into(), OP)?;
        let mut status = Status::empty();
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: `buf` has room for `count` elements of `T::datatype()` and is exclusively
            // borrowed until the blocking call returns; MPI writes at most `count` elements.
            unsafe {
                ffi::MPI_Recv(
                    recv_ptr(buf),
                    count,
                    T::datatype().as_raw(),
                    source,
                    tag,
                    self.raw,
                    &mut status.raw,
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
    /// # Errors
    /// As [`Communicator::send`] and [`Communicator::recv`], checked before any communication.
    #[inline]
    pub fn sendrecv<S: Equivalence, R: Equivalence>(
        &self,
        send: &[S],
        dest: i32,
        send_tag: i32,
        recv: &mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "sendrecv";
        let send_count = count_of::<S>(send.len(), OP)?;
        let recv_count = count_of::<R>(recv.len(), OP)?;
        self.check_rank(dest, "destination", OP)?;
        check_tag(send_tag, OP)?;
        let source = self.raw_source(source.into(), OP)?;
        let recv_tag = raw_tag(recv_tag.into(), OP)?;
        let mut status = Status::empty();
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: `send` holds `send_count` elements that MPI only reads; `recv` has room for
            // `recv_count` elements and is exclusively borrowed; they cannot overlap (shared vs
            // exclusive borrow). Both stay borrowed until the blocking call returns.
            unsafe {
                ffi::MPI_Sendrecv(
                    send_ptr(send),
                    send_count,
                    S::datatype().as_raw(),
                    dest,
                    send_tag,
                    recv_ptr(recv),
                    recv_count,
                    R::datatype().as_raw(),
                    source,
                    recv_tag,
                    self.raw,
                    &mut status.raw,
                )
            }
        };
        repair(recv);
        check(rc, OP)?;
        Ok(status)
    }
}

/// The raw tag of a receive, checked.
#[inline]
fn raw_tag(tag: TagMatch, operation: &'static str) -> Result<c_int> {
    match tag {
        TagMatch::Tag(tag) => check_tag(tag, operation).map(|()| tag),
        TagMatch::Any => Ok(ffi::MPI_ANY_TAG),
    }
}

/// What a receive learned about its message (`MPI_Status`, MPI-4.0 §3.2.5).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Status {
    raw: ffi::MPI_Status,
}

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Status")
            .field("source", &self.source())
            .field("tag", &self.tag())
            .finish()
    }
}

impl Status {
    pub(crate) fn empty() -> Status {
        Status {
            raw: ffi::MPI_Status::default(),
        }
    }

    /// The rank of the sender (`MPI_SOURCE`); `MPI_PROC_NULL`'s value for a receive from
    /// [`Source::ProcNull`].
    pub fn source(&self) -> i32 {
        self.raw.MPI_SOURCE
    }

    /// The tag of the message (`MPI_TAG`).
    pub fn tag(&self) -> i32 {
        self.raw.MPI_TAG
    }

    /// The number of values of `T` received (`MPI_Get_count`, MPI-4.0 §3.2.5).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the message is not a whole number of values of `T`;
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn count<T: Equivalence>(&self) -> Result<usize> {
        const OP: &str = "status_count";
        let mut count: c_int = 0;
        let _gate = enter(OP)?;
        // SAFETY: a status filled by MPI and a predefined datatype; writes one int.
        let rc = unsafe { ffi::MPI_Get_count(&self.raw, T::datatype().as_raw(), &mut count) };
        check(rc, OP)?;
        let elements = usize::try_from(count).ok();
        match elements.filter(|n| T::ELEMENTS != 0 && n % T::ELEMENTS == 0) {
            Some(n) => Ok(n / T::ELEMENTS),
            None if T::ELEMENTS == 0 && count == 0 => Ok(0),
            None => Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the message is not a whole number of values of {}",
                    std::any::type_name::<T>()
                ),
            }),
        }
    }

    /// Whether the operation was cancelled (`MPI_Test_cancelled`, MPI-4.0 §3.8.4).
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn cancelled(&self) -> Result<bool> {
        let mut flag = 0;
        let _gate = enter("status_cancelled")?;
        // SAFETY: a status filled by MPI; writes one int.
        let rc = unsafe { ffi::MPI_Test_cancelled(&self.raw, &mut flag) };
        check(rc, "status_cancelled")?;
        Ok(flag != 0)
    }

    /// The raw status.
    pub fn as_raw(&self) -> &ffi::MPI_Status {
        &self.raw
    }
}
