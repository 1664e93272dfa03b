//! Probes and matched receives (MPI-4.0 §3.8): look at a message before receiving it, and
//! receive messages whose size is not known in advance.
//!
//! A plain [`probe`](Communicator::probe) followed by a receive is racy when several threads
//! receive on one communicator: another thread may receive the probed message first. The matched
//! forms ([`mprobe`](Communicator::mprobe), [`recv_vec`](Communicator::recv_vec)) take the message
//! out of the matching queue, so the following receive gets exactly it.

use super::Communicator;
use super::p2p::{Source, Status, TagMatch};
use crate::datatype::{Equivalence, count_of, recv_ptr, repair};
use crate::env::enter;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::request::{Kind, OwnedBuffer, OwnedRequest, RawRequest};
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};

/// Probes and matched receives: `probe`, `iprobe`, `mprobe`, `improbe`, and receives of
/// unknown length (MPI-4.0 §3.8).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::{ANY_SOURCE, ANY_TAG};
/// let world = mpi.world();
/// let me = world.rank();
/// ferrompi::scope(|s| {
///     let sent = world.isend(s, &[1u8, 2, 3], me, 5)?; // to ourselves
///     let status = world.probe(ANY_SOURCE, ANY_TAG)?; // how long is it?
///     assert_eq!(status.count::<u8>()?, 3);
///     let (bytes, _) = world.recv_vec::<u8>(me, 5)?; // sized from a matched probe
///     assert_eq!(bytes, [1, 2, 3]);
///     sent.wait()?;
///     Ok::<_, ferrompi::Error>(())
/// })?;
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Blocks until a matching message can be received, and describes it without receiving it
    /// (`MPI_Probe`, MPI-4.0 §3.8.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{ANY_SOURCE, ANY_TAG};
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![0u8; 5], me, 2)?;
    /// let status = world.probe(ANY_SOURCE, ANY_TAG)?; // waits for a message, receives nothing
    /// let mut buf = vec![0u8; status.count::<u8>()?];
    /// world.recv(&mut buf, status.source(), status.tag())?;
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`],
    /// [`ErrorKind::InvalidTag`]; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn probe(&self, source: impl Into<Source>, tag: impl Into<TagMatch>) -> Result<Status> {
        const OP: &str = "probe";
        let args = self.recv_args::<u8>(0, source, tag, OP)?;
        let mut status = Status::empty();
        let _gate = self.enter(OP)?;
        // SAFETY: a valid communicator; MPI writes the status.
        let rc = unsafe { ffi::MPI_Probe(args.source, args.tag, self.raw, status.as_raw_mut()) };
        check(rc, OP)?;
        Ok(status)
    }

    /// Like [`probe`](Communicator::probe) without blocking (`MPI_Iprobe`): `None` when no
    /// matching message is there yet.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// assert!(world.iprobe(me, 77)?.is_none()); // nothing sent with tag 77 yet
    /// let sending = world.isend_owned(vec![1u8], me, 77)?;
    /// let status = loop {
    ///     if let Some(status) = world.iprobe(me, 77)? {
    ///         break status;
    ///     }
    /// };
    /// assert_eq!(status.count::<u8>()?, 1);
    /// world.recv(&mut [0u8], me, 77)?;
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::probe`].
    #[inline(always)]
    pub fn iprobe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Status>> {
        const OP: &str = "iprobe";
        let args = self.recv_args::<u8>(0, source, tag, OP)?;
        let mut status = Status::empty();
        let mut flag: c_int = 0;
        let _gate = self.enter(OP)?;
        // SAFETY: a valid communicator; MPI writes the flag and the status.
        let rc = unsafe {
            ffi::MPI_Iprobe(
                args.source,
                args.tag,
                self.raw,
                &mut flag,
                status.as_raw_mut(),
            )
        };
        check(rc, OP)?;
        Ok((flag != 0).then_some(status))
    }

    /// Blocks until a matching message arrives and takes it out of the matching queue
    /// (`MPI_Mprobe`, MPI-4.0 §3.8.2): only the returned [`Message`] can receive it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::ANY_SOURCE;
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1.0f32; 3], me, 0)?;
    /// // Matched: no other receive in this process can take the message meanwhile.
    /// let message = world.mprobe(ANY_SOURCE, 0)?;
    /// let (values, _) = message.recv_vec::<f32>()?;
    /// assert_eq!(values, [1.0; 3]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::probe`].
    pub fn mprobe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Message<'_>> {
        const OP: &str = "mprobe";
        let args = self.recv_args::<u8>(0, source, tag, OP)?;
        let mut message = Message::null();
        let _gate = self.enter(OP)?;
        // SAFETY: a valid communicator; MPI writes the message handle and the status.
        let rc = unsafe {
            ffi::MPI_Mprobe(
                args.source,
                args.tag,
                self.raw,
                &mut message.raw,
                message.status.as_raw_mut(),
            )
        };
        check(rc, OP)?;
        Ok(message)
    }

    /// Like [`mprobe`](Communicator::mprobe) without blocking (`MPI_Improbe`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![2u32], me, 4)?;
    /// let message = loop {
    ///     if let Some(message) = world.improbe(me, 4)? {
    ///         break message;
    ///     }
    /// };
    /// let (values, _) = message.recv_vec::<u32>()?;
    /// assert_eq!(values, [2]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::probe`].
    pub fn improbe(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Option<Message<'_>>> {
        const OP: &str = "improbe";
        let args = self.recv_args::<u8>(0, source, tag, OP)?;
        let mut message = Message::null();
        let mut flag: c_int = 0;
        let _gate = self.enter(OP)?;
        // SAFETY: a valid communicator; MPI writes the flag, message handle and status.
        let rc = unsafe {
            ffi::MPI_Improbe(
                args.source,
                args.tag,
                self.raw,
                &mut flag,
                &mut message.raw,
                message.status.as_raw_mut(),
            )
        };
        check(rc, OP)?;
        Ok((flag != 0).then_some(message))
    }

    /// Receives a message of any length into a new `Vec` sized to fit it, using a matched probe
    /// so it is correct with several threads receiving on the communicator.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1i32, 2, 3], me, 0)?;
    /// let (values, status) = world.recv_vec::<i32>(me, 0)?; // sized by the message itself
    /// assert_eq!((values, status.source()), (vec![1, 2, 3], me));
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::probe`]; [`ErrorKind::InvalidArgument`] if
    /// the message is not a whole number of values of `T`.
    pub fn recv_vec<T: Equivalence>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Vec<T>, Status)> {
        self.mprobe(source, tag)?.recv_vec()
    }

    /// Receives into storage that need not be initialised, returning the part the message
    /// filled, now initialised (`MPI_Recv`). Saves zeroing a large buffer before every receive.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use std::mem::MaybeUninit;
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![8u64; 2], me, 0)?;
    /// let mut storage = [MaybeUninit::<u64>::uninit(); 4]; // no zeroing
    /// let (received, _) = world.recv_uninit(&mut storage, me, 0)?; // the initialised prefix
    /// assert_eq!(received, [8, 8]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::recv`]; [`ErrorKind::InvalidArgument`] if
    /// the message is not a whole number of values of `T` (the storage then stays uninitialised).
    pub fn recv_uninit<'b, T: Equivalence>(
        &self,
        buf: &'b mut [MaybeUninit<T>],
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(&'b mut [T], Status)> {
        const OP: &str = "recv_uninit";
        let args = self.recv_args::<T>(buf.len(), source, tag, OP)?;
        let mut status = Status::empty();
        {
            let _gate = self.enter(OP)?;
            // SAFETY: `buf` has room for `args.count` elements and is exclusively borrowed for
            // the blocking call; MPI writes at most that many and nothing is read yet.
            let rc =
                unsafe { self.raw_recv(recv_ptr(buf), T::datatype().as_raw(), args, &mut status) };
            check(rc, OP)?;
        }
        let n = status.count::<T>()?.min(buf.len());
        let filled = &mut buf[..n];
        // SAFETY: MPI wrote `n` whole values (status count) into the first `n` slots. They are
        // viewed as `T` only after `repair` below, which works on their bytes; for types with
        // no repair every bit pattern is a valid `T`.
        let filled = unsafe { &mut *(std::ptr::from_mut::<[MaybeUninit<T>]>(filled) as *mut [T]) };
        repair(filled);
        Ok((filled, status))
    }
}

/// A message taken out of the matching queue by [`Communicator::mprobe`]; receive it with
/// [`recv`](Message::recv) or [`recv_vec`](Message::recv_vec). Dropping it unreceived discards it.
#[derive(Debug)]
pub struct Message<'comm> {
    raw: ffi::MPI_Message,
    status: Status,
    _comm: PhantomData<&'comm ()>,
}

// SAFETY: the handle identifies a matched message; receiving it (the only use) passes the thread
// gate. The status is plain data.
unsafe impl Send for Message<'_> {}
// SAFETY: `&Message` only reads the status, plain data; receiving takes the message by value.
unsafe impl Sync for Message<'_> {}

impl<'comm> Message<'comm> {
    fn null() -> Self {
        let raw = ffi::MPI_MESSAGE_NULL;
        Message {
            raw,
            status: Status::empty(),
            _comm: PhantomData,
        }
    }

    /// What the probe saw: source, tag and [`Status::count`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![0u8; 4], me, 6)?;
    /// let message = world.mprobe(me, 6)?;
    /// assert_eq!(message.status().count::<u8>()?, 4); // known before receiving
    /// message.recv_vec::<u8>()?;
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Receives the message into `buf` (`MPI_Mrecv`, MPI-4.0 §3.8.3).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![5i32; 2], me, 0)?;
    /// let message = world.mprobe(me, 0)?;
    /// let mut got = vec![0i32; message.status().count::<i32>()?];
    /// message.recv(&mut got)?; // MPI_Mrecv: exactly the probed message
    /// assert_eq!(got, [5, 5]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::Mpi`]
    /// (class `Truncate` if `buf` is too small); [`ErrorKind::WrongThread`]
    /// (the message is then discarded when dropped).
    pub fn recv<T: Equivalence>(self, buf: &mut [T]) -> Result<Status> {
        let count = count_of::<T>(buf.len(), "mrecv")?;
        // SAFETY: `buf` has room for `count` elements and is exclusively borrowed for the call.
        let result = unsafe { self.recv_raw::<T>(recv_ptr(buf), count) };
        repair(buf);
        result
    }

    /// Receives the message into a new `Vec` of exactly its size.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1u16, 2], me, 0)?;
    /// let (values, _) = world.mprobe(me, 0)?.recv_vec::<u16>()?; // sized by the message
    /// assert_eq!(values, [1, 2]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Message::recv`]; [`ErrorKind::InvalidArgument`] if the
    /// message is not a whole number of values of `T` (it is then discarded).
    pub fn recv_vec<T: Equivalence>(self) -> Result<(Vec<T>, Status)> {
        let n = self.status.count::<T>()?;
        let count = count_of::<T>(n, "mrecv")?;
        let mut values: Vec<T> = Vec::with_capacity(n);
        // SAFETY: the Vec has capacity for `n` values, i.e. `count` elements, and is ours.
        let status = unsafe { self.recv_raw::<T>(values.as_mut_ptr().cast(), count)? };
        // SAFETY: MPI received the probed message, exactly `n` values, into the first `n` slots;
        // `repair_received` makes their bytes valid values before `set_len` exposes them.
        unsafe {
            T::repair_received(values.as_mut_ptr(), n);
            values.set_len(n);
        }
        Ok((values, status))
    }

    /// Starts receiving the message into a buffer the request owns (`MPI_Imrecv`, MPI-4.0
    /// §3.8.3); the buffer comes back on completion.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![3u8; 2], me, 0)?;
    /// let message = world.mprobe(me, 0)?;
    /// let receiving = message.irecv_owned(vec![0u8; 2])?; // MPI_Imrecv
    /// let (got, status) = receiving.wait();
    /// status?;
    /// assert_eq!(got, [3, 3]);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]
    /// (the message is then discarded); [`ErrorKind::Mpi`].
    pub fn irecv_owned<B: OwnedBuffer>(self, mut buf: B) -> Result<OwnedRequest<'comm, B>> {
        const OP: &str = "imrecv";
        let slice = buf.as_mut_slice();
        let count = count_of::<B::Item>(slice.len(), OP)?;
        let ptr = recv_ptr(slice);
        let mut this = ManuallyDrop::new(self);
        let mut raw = ffi::MPI_REQUEST_NULL;
        let _gate = match enter(OP) {
            Ok(gate) => gate,
            Err(e) => {
                drop(ManuallyDrop::into_inner(this)); // its drop discards the message
                return Err(e);
            }
        };
        // SAFETY: a matched message we own (MPI nulls it); the buffer's heap storage moves into
        // the returned request, which keeps it until the operation completes.
        let rc = unsafe {
            ffi::MPI_Imrecv(
                ptr,
                count,
                <B::Item as Equivalence>::datatype().as_raw(),
                &mut this.raw,
                &mut raw,
            )
        };
        check(rc, OP)?;
        Ok(OwnedRequest::started(
            RawRequest {
                raw,
                kind: Kind::Recv,
            },
            buf,
        ))
    }

    /// `MPI_Mrecv` into raw storage.
    ///
    /// # Safety
    /// `ptr` must have room for `count` elements of `T::datatype()` and be writable, with nothing
    /// else accessing it during the call.
    unsafe fn recv_raw<T: Equivalence>(
        self,
        ptr: *mut std::ffi::c_void,
        count: c_int,
    ) -> Result<Status> {
        const OP: &str = "mrecv";
        let mut this = ManuallyDrop::new(self);
        let mut status = Status::empty();
        let _gate = match enter(OP) {
            Ok(gate) => gate,
            Err(e) => {
                drop(ManuallyDrop::into_inner(this)); // its drop discards the message
                return Err(e);
            }
        };
        // SAFETY: a matched message we own (MPI sets it to MPI_MESSAGE_NULL); the storage is as
        // the caller guarantees.
        let rc = unsafe {
            ffi::MPI_Mrecv(
                ptr,
                count,
                T::datatype().as_raw(),
                &mut this.raw,
                status.as_raw_mut(),
            )
        };
        check(rc, OP)?;
        Ok(status)
    }
}

impl Drop for Message<'_> {
    fn drop(&mut self) {
        let null = ffi::MPI_MESSAGE_NULL;
        if self.raw == null {
            return;
        }
        if let Ok(_gate) = enter("drop") {
            let mut status = Status::empty();
            // Receiving zero elements consumes the message (with a truncation error, ignored):
            // MPI has no other way to discard a matched message.
            // SAFETY: a matched message we own; a zero count writes nothing.
            let _ = unsafe {
                ffi::MPI_Mrecv(
                    crate::datatype::recv_ptr::<u8>(&mut []),
                    0,
                    <u8 as Equivalence>::datatype().as_raw(),
                    &mut self.raw,
                    status.as_raw_mut(),
                )
            };
        }
    }
}
