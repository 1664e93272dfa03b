//! Persistent point-to-point requests (MPI-4.0 §3.9): `send_init`, `ssend_init`, `bsend_init`,
//! `rsend_init` (`unsafe`), `recv_init`.
//! The request owns its buffer; see [`PersistentRequest`].

use super::Communicator;
use super::bsend::require_attached;
use super::nonblocking::StartSend;
use super::p2p::{Destination, Source, TagMatch};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::request::{OwnedBuffer, PersistentRequest};

/// Point-to-point, persistent: `send_init` in the four modes and `recv_init` (MPI-4.0 §3.9).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let me = world.rank();
/// // Set up once, start many times: the requests own their buffers.
/// let mut outgoing = world.send_init(vec![0.0f64; 3], me, 4)?;
/// let mut incoming = world.recv_init(vec![0.0f64; 3], me, 4)?;
/// for step in 0..3 {
///     outgoing.buffer_mut().fill(step as f64);
///     let receiving = incoming.start()?;
///     outgoing.start()?.wait()?;
///     receiving.wait()?;
///     assert_eq!(incoming.buffer(), &[step as f64; 3]);
/// }
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl Communicator<'_> {
    /// Sets up a persistent standard-mode send of `buf` (`MPI_Send_init`, MPI-4.0 §3.9).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut out = world.send_init(vec![0u32; 4], me, 0)?; // set up once
    /// let mut got = [0u32; 4];
    /// for round in 0..3u32 {
    ///     out.buffer_mut().fill(round);
    ///     let sending = out.start()?; // `out`'s buffer is out of reach until this completes
    ///     world.recv(&mut got, me, 0)?;
    ///     sending.wait()?;
    ///     assert_eq!(got, [round; 4]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::InvalidTag`],
    /// [`ErrorKind::CountOverflow`] before any MPI call;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn send_init<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        // SAFETY: the buffer's heap storage moves into the request, which keeps it until the
        // request is freed and never while an operation is active (see `PersistentRequest`).
        let raw = unsafe { self.start_send(StartSend::SendInit, buf.as_slice(), dest, tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// Sets up a persistent synchronous-mode send (`MPI_Ssend_init`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut out = world.ssend_init(vec![1u8], me, 0)?;
    /// let sending = out.start()?;
    /// let (got, _) = world.recv_vec::<u8>(me, 0)?;
    /// sending.wait()?;
    /// assert_eq!(got, [1]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_init`].
    pub fn ssend_init<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        // SAFETY: as in `send_init`.
        let raw =
            unsafe { self.start_send(StartSend::SsendInit, buf.as_slice(), dest, tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// Sets up a persistent buffered-mode send (`MPI_Bsend_init`): each start copies the
    /// message into the buffer attached with [`Mpi::attach_buffer`](crate::Mpi::attach_buffer).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let attached = mpi.attach_buffer(8 + ferrompi::BSEND_OVERHEAD)?;
    /// let me = world.rank();
    /// let mut out = world.bsend_init(vec![3u64], me, 0)?;
    /// out.start()?.wait()?; // copied into the attached buffer
    /// let (got, _) = world.recv_vec::<u64>(me, 0)?;
    /// assert_eq!(got, [3]);
    /// drop(out);
    /// drop(attached);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_init`]; [`ErrorKind::InvalidArgument`]
    /// when no buffer is attached.
    pub fn bsend_init<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "bsend_init";
        require_attached(OP)?;
        // SAFETY: as in `send_init`.
        let raw =
            unsafe { self.start_send(StartSend::BsendInit, buf.as_slice(), dest, tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// Sets up a persistent ready-mode send (`MPI_Rsend_init`).
    ///
    /// # Safety
    /// As [`Communicator::rsend`], at every start: the matching receive must already be posted
    /// at `dest` when the request is started.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// // SAFETY: every start of `out` below follows a start of the matching receive.
    /// let mut out = unsafe { world.rsend_init(vec![4i16], me, 0)? };
    /// let mut incoming = world.recv_init(vec![0i16], me, 0)?;
    /// let receiving = incoming.start()?; // ready mode: the receive is posted first
    /// out.start()?.wait()?;
    /// receiving.wait()?;
    /// assert_eq!(incoming.buffer(), &[4]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_init`].
    pub unsafe fn rsend_init<B: OwnedBuffer>(
        &self,
        buf: B,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        // SAFETY: as in `send_init`; the posted receives are the caller's promise.
        let raw =
            unsafe { self.start_send(StartSend::RsendInit, buf.as_slice(), dest, tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// Sets up a persistent receive into `buf` (`MPI_Recv_init`, MPI-4.0 §3.9).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0.0f64; 2], me, 1)?;
    /// for step in 0..3 {
    ///     let receiving = incoming.start()?;
    ///     world.send(&[f64::from(step); 2], me, 1)?;
    ///     receiving.wait()?;
    ///     assert_eq!(incoming.buffer(), &[f64::from(step); 2]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_init`].
    pub fn recv_init<B: OwnedBuffer>(
        &self,
        mut buf: B,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<PersistentRequest<'_, B>> {
        // SAFETY: as in `send_init`.
        let raw = unsafe { self.start_recv(true, buf.as_mut_slice(), source, tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }
}
