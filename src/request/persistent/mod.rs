//! Persistent requests (MPI-4.0 §3.9 point-to-point, §6.13 collectives): set up once, then
//! started and completed many times.
//!
//! The request owns its buffers ([`Buffers`]: one buffer, a send/receive [`Pair`], or
//! [`NoBuffer`]) and whatever else MPI reads while it exists (a partition, an owned op). Between
//! operations the program reads and writes the buffers through the request
//! ([`buffer_mut`](PersistentRequest::buffer_mut), [`recv`](PersistentRequest::recv), …); while
//! an operation is active, [`PersistentRequest::start`] has returned an [`Active`] that borrows
//! the request exclusively, so the buffers are unreachable. If an `Active` is leaked, the request
//! still knows it is active: it waits for the operation before it hands the buffers out again or
//! starts the next one, and on drop it cancels a receive and waits, like every request. A leaked
//! request leaks what it owns, so MPI never uses freed memory.

use super::{Kind, OwnedBuffer, RawRequest, progress};
use crate::Status;
use crate::datatype::repair;
use crate::env::{enter, gated};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

mod mixed;
pub use mixed::{ActiveSet, Internal, Persistent, start_all};

mod sealed {
    pub trait Sealed {}
}

/// What a [`PersistentRequest`] owns for MPI to read and write: one [`OwnedBuffer`], a send
/// and a receive buffer ([`Pair`]), or [`NoBuffer`]. Sealed.
pub trait Buffers: Send + sealed::Sealed {
    /// Makes received values valid for their type (see [`Equivalence`](crate::Equivalence)).
    #[doc(hidden)]
    fn repair_received(&mut self);
}

impl<B: OwnedBuffer> sealed::Sealed for B {}
impl<B: OwnedBuffer> Buffers for B {
    fn repair_received(&mut self) {
        repair(self.as_mut_slice());
    }
}

/// The send and the receive buffer of a persistent collective, owned by its request.
#[derive(Debug)]
pub struct Pair<S, R> {
    pub(crate) send: S,
    pub(crate) recv: R,
}

impl<S: OwnedBuffer, R: OwnedBuffer> sealed::Sealed for Pair<S, R> {}
impl<S: OwnedBuffer, R: OwnedBuffer> Buffers for Pair<S, R> {
    fn repair_received(&mut self) {
        repair(self.recv.as_mut_slice());
    }
}

/// The buffers of an operation that has none (`barrier_init`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBuffer;

impl sealed::Sealed for NoBuffer {}
impl Buffers for NoBuffer {
    fn repair_received(&mut self) {}
}

/// What a persistent request keeps besides its buffers for as long as it exists.
pub(crate) type Keep<'comm> = Option<Box<dyn Send + Sync + 'comm>>;

/// The nonblocking call each start of an emulated persistent collective makes instead of
/// `MPI_Start` (the persistent collectives, a layer above, implement it). Boxed once at init.
pub(crate) trait Restart: Send + Sync {
    /// Starts the call into `request`.
    ///
    /// # Safety
    /// The caller holds the thread gate; `request` is null (no operation in flight); the call's
    /// buffers and arrays are owned by the persistent request and unreachable until the
    /// operation completes.
    unsafe fn start(&self, request: &mut ffi::MPI_Request) -> std::ffi::c_int;
}

/// See [`Restart`].
pub(crate) type Emulated<'comm> = Option<Box<dyn Restart + 'comm>>;

/// [`PersistentRequest`]'s state: an operation is active.
const ACTIVE: u8 = 1;
/// [`PersistentRequest`]'s state: each start makes the nonblocking call of an emulated
/// collective.
const EMULATED: u8 = 2;

/// A persistent request that owns its buffers: point-to-point (`MPI_Send_init`,
/// `MPI_Recv_init`, …) or collective (`MPI_Allreduce_init`, …).
pub struct PersistentRequest<'comm, B: Buffers> {
    raw: RawRequest,
    /// [`ACTIVE`] while an operation runs, [`EMULATED`] for an emulated collective: one byte,
    /// so that a `start` tests one value for both before the common case (native, inactive).
    state: u8,
    buffer: Option<B>,
    /// Partitions or an op MPI reads while the request exists; dropped after it is freed.
    keep: Keep<'comm>,
    /// Without persistent collectives in the MPI: the nonblocking call each start makes.
    emulated: Emulated<'comm>,
    /// The status `get_status` saw for the active operation: MPICH 5.0 completes a persistent
    /// request there and its `MPI_Wait` then reports the empty status (reproduced in C).
    peeked: Option<Status>,
    _comm: PhantomData<&'comm ()>,
}

impl<B: Buffers> std::fmt::Debug for PersistentRequest<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentRequest")
            .field("raw", &self.raw)
            .field("active", &self.active())
            .field("emulated", &self.emulated.is_some())
            .finish_non_exhaustive()
    }
}

impl<'comm, B: Buffers> PersistentRequest<'comm, B> {
    pub(crate) fn created(raw: RawRequest, buffer: B) -> Self {
        Self::with(raw, buffer, None, None)
    }

    pub(crate) fn with(
        raw: RawRequest,
        buffer: B,
        keep: Keep<'comm>,
        emulated: Emulated<'comm>,
    ) -> Self {
        // Counted while it lives, not per operation: a request leaked while active is what
        // finalize warns of, and its starts and waits then count nothing.
        crate::live::made(crate::live::Kind::PersistentRequest);
        PersistentRequest {
            raw,
            state: if emulated.is_some() { EMULATED } else { 0 },
            buffer: Some(buffer),
            keep,
            emulated,
            peeked: None,
            _comm: PhantomData,
        }
    }

    /// Whether each start issues a nonblocking collective because the MPI has no persistent
    /// collectives (see [`persistent_collectives`](crate::persistent_collectives)).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let total = world.allreduce_init_in_place(vec![1u64], Sum)?;
    /// // true where the MPI has no persistent collectives of its own (see `persistent_collectives`)
    /// println!("emulated: {}", total.is_emulated());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_emulated(&self) -> bool {
        self.emulated.is_some()
    }

    /// Whether an operation is active.
    #[inline(always)]
    fn active(&self) -> bool {
        self.state & ACTIVE != 0
    }

    /// `MPI_Start`, or the nonblocking call of an emulated collective. The caller holds the gate.
    #[inline(always)]
    fn start_raw(&mut self, operation: &'static str) -> Result<()> {
        if self.active() {
            return Err(already_active(operation));
        }
        // A set's completion reports no `peeked` status (see `mixed`): none may be left over.
        self.peeked = None;
        self.start_inactive(operation)
    }

    /// [`start_raw`](Self::start_raw) of a request known to be inactive.
    #[inline(always)]
    fn start_inactive(&mut self, operation: &'static str) -> Result<()> {
        // The state's bit, not the `Option`: a caller that tested the state knows it. The bit
        // is set with the `Option` (`with`), and neither changes after.
        debug_assert_eq!(self.state & EMULATED != 0, self.emulated.is_some());
        let rc = match &self.emulated {
            // SAFETY: the call's buffers and arrays are owned by `self` and unreachable until
            // the operation completes; the handle is null (inactive).
            Some(call) if self.state & EMULATED != 0 => unsafe { call.start(&mut self.raw.raw) },
            // SAFETY: an inactive persistent request we own; its buffers are owned by `self` and
            // unreachable until the operation completes (see the module docs).
            _ => unsafe { ffi::MPI_Start(&mut self.raw.raw) },
        };
        check(rc, operation)?;
        // `peeked` is `None`: every completion took or cleared it (`reported`, `failed`).
        self.state |= ACTIVE;
        Ok(())
    }

    /// Starts the operation (`MPI_Start`, MPI-4.0 §3.9). The returned [`Active`] completes it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0u32; 2], me, 0)?;
    /// let mut outgoing = world.send_init(vec![7u32; 2], me, 0)?;
    /// let receiving = incoming.start()?; // MPI_Start; `incoming`'s buffer is unreachable meanwhile
    /// outgoing.start()?.wait()?;
    /// receiving.wait()?;
    /// assert_eq!(incoming.buffer(), &[7, 7]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn start(&mut self) -> Result<Active<'_, 'comm, B>> {
        if self.state == 0 {
            // Native and inactive, which the gate changes nothing of.
            gated(
                "start",
                #[inline(always)]
                || self.start_inactive("start"),
            )??;
        } else {
            // Active (its `Active` was leaked), or emulated.
            self.start_slow()?;
        }
        Ok(Active { request: self })
    }

    /// [`start`](Self::start) of a request that may be active or is emulated, out of line.
    #[inline(never)]
    fn start_slow(&mut self) -> Result<()> {
        self.complete_leaked()?;
        // Inactive: `complete_leaked` saw to it, and the gate changes nothing.
        gated("start", || self.start_inactive("start"))?
    }

    /// Starts every request of `requests` (as `MPI_Startall`, MPI-4.0 §3.9); the returned guard
    /// completes them all.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut outgoing = [world.send_init(vec![1u8], me, 0)?, world.send_init(vec![2u8], me, 1)?];
    /// let mut receiving = [world.irecv_owned(vec![0u8], me, 0)?, world.irecv_owned(vec![0u8], me, 1)?];
    /// ferrompi::PersistentRequest::start_all(&mut outgoing)?.wait_all()?; // requests of one type
    /// for r in receiving.iter_mut() {
    ///     while !r.test()? {}
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`PersistentRequest::start`]; requests started before an error are completed by the
    /// guard's drop.
    pub fn start_all<'a>(
        requests: &'a mut [PersistentRequest<'comm, B>],
    ) -> Result<ActiveAll<'a, 'comm, B>> {
        for request in requests.iter_mut() {
            request.complete_leaked()?;
        }
        let all = ActiveAll { requests };
        {
            let _gate = enter("start_all")?;
            for request in all.requests.iter_mut() {
                request.start_raw("start_all")?;
            }
        }
        Ok(all)
    }

    /// The buffers, between operations (waits for an operation whose `Active` was leaked).
    fn buffers(&mut self) -> &mut B {
        self.wait_leaked();
        self.buffer.as_mut().expect("present until dropped")
    }

    /// Frees the request (`MPI_Request_free`) and hands back what it owned.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut request = world.send_init(vec![1.0f64; 4], world.rank(), 0)?;
    /// let sending = request.start()?;
    /// world.recv(&mut [0.0f64; 4], world.rank(), 0)?;
    /// sending.wait()?;
    /// let buffer: Vec<f64> = request.into_buffers()?; // MPI_Request_free, the vector back
    /// assert_eq!(buffer.len(), 4);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (or another refusal of the thread gate) if an operation whose
    /// [`Active`] was leaked cannot be completed, or from freeing; [`ErrorKind::Mpi`]. The buffers
    /// are then dropped, or leaked if MPI may still use them.
    pub fn into_buffers(mut self) -> Result<B> {
        self.complete_leaked()?;
        self.free_raw()?;
        Ok(self.buffer.take().expect("present until dropped"))
    }

    /// Waits for an operation whose [`Active`] was leaked, so the buffer is MPI's no more and
    /// holds what the operation did (its status is lost with the `Active`).
    ///
    /// # Panics
    /// If the operation is still active afterwards because the thread gate refused the wait
    /// (MPI was not called): MPI may still write the buffers, so they must not be handed out.
    fn wait_leaked(&mut self) {
        if let Err(e) = self.complete_leaked() {
            still_active(&e)
        }
    }

    /// As [`wait_leaked`](Self::wait_leaked), but reports an operation that stays active.
    #[inline(always)]
    fn complete_leaked(&mut self) -> Result<()> {
        if self.active()
            && let Err(e) = self.complete(Some("wait"))
            && self.active()
        {
            return Err(e);
        }
        Ok(())
    }

    /// Completes an active operation the way a destructor must: cancels a receive, then waits.
    /// Inlined as a test of `active` (false after `wait`), the completion out of line.
    #[inline(always)]
    fn settle_leaked(&mut self) {
        if self.active() {
            self.settle_active();
        }
    }

    /// The completion of [`settle_leaked`](Self::settle_leaked), out of line.
    #[inline(never)]
    fn settle_active(&mut self) {
        let _ = self.complete(None);
    }

    /// Completes the active operation; `wait` or `finish` semantics.
    #[inline(always)]
    fn complete(&mut self, operation: Option<&'static str>) -> Result<Status> {
        let result = match operation {
            Some(op) => self.raw.wait(op),
            None => {
                if self.raw.kind == Kind::Recv {
                    let _ = self.raw.cancel("drop");
                }
                self.raw.wait("drop")
            }
        };
        match result {
            Ok(status) => {
                self.finished();
                Ok(self.reported(status))
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    /// A failed completion: finished unless the gate refused it (then MPI was not called and
    /// the operation is still active). Out of line, so the status alone travels on success.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, e: Error) -> Error {
        if !e.mpi_not_called() {
            self.finished();
            self.peeked = None;
        }
        e
    }

    /// The status to report for a completion MPI reported as `status`: what `get_status` saw,
    /// if it saw the operation complete. That is the same status where MPI reports it again,
    /// and the one to report where MPI then says nothing (see `peeked`). Reads nothing of
    /// `status`, which is then copied whole rather than taken apart field by field.
    #[inline(always)]
    fn reported(&mut self, status: Status) -> Status {
        // Tests the tag before clearing the whole `Option`: `peeked` is rare.
        if self.peeked.is_some()
            && let Some(seen) = self.peeked.take()
        {
            return seen;
        }
        status
    }

    /// The operation has completed: inactive, its received buffer repaired.
    #[inline(always)]
    fn finished(&mut self) {
        self.state &= !ACTIVE;
        if self.raw.kind != Kind::Send
            && let Some(buffer) = self.buffer.as_mut()
        {
            buffer.repair_received();
        }
    }

    fn free_raw(&mut self) -> Result<()> {
        if self.raw.is_null() {
            return Ok(()); // also an emulated collective between operations
        }
        let _gate = enter("request_free")?;
        // SAFETY: an inactive persistent request we own; MPI sets the handle to null.
        check(
            unsafe { ffi::MPI_Request_free(&mut self.raw.raw) },
            "request_free",
        )
    }
}

/// A persistent request whose [`Active`] was leaked cannot be completed on this thread, so its
/// buffers cannot be handed out: MPI may still be writing them.
#[cold]
#[track_caller]
fn still_active(why: &Error) -> ! {
    panic!(
        "ferrompi: this persistent request's operation is still active (its Active was leaked) \
         and could not be completed here ({why}); its buffers stay unreachable until it is \
         completed on a thread the thread level allows"
    )
}

impl<'comm, B: OwnedBuffer> PersistentRequest<'comm, B> {
    /// The buffer, between operations.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0u32; 2], me, 0)?;
    /// let mut outgoing = world.send_init(vec![7u32; 2], me, 0)?;
    /// let receiving = incoming.start()?;
    /// outgoing.start()?.wait()?;
    /// receiving.wait()?;
    /// assert_eq!(incoming.buffer(), &[7, 7]); // readable between operations
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn buffer(&mut self) -> &[B::Item] {
        self.wait_leaked();
        self.buffer
            .as_ref()
            .expect("present until dropped")
            .as_slice()
    }

    /// The buffer, mutably, between operations: change what the next send sends.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut outgoing = world.send_init(vec![0i32; 2], me, 0)?;
    /// outgoing.buffer_mut().copy_from_slice(&[3, 4]); // writable between operations
    /// let sending = outgoing.start()?;
    /// let mut got = [0i32; 2];
    /// world.recv(&mut got, me, 0)?;
    /// sending.wait()?;
    /// assert_eq!(got, [3, 4]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn buffer_mut(&mut self) -> &mut [B::Item] {
        self.wait_leaked();
        self.buffer
            .as_mut()
            .expect("present until dropped")
            .as_mut_slice()
    }

    /// Frees the request (`MPI_Request_free`) and hands back the buffer.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let request = world.recv_init(vec![0u16; 3], world.rank(), 0)?;
    /// let buffer: Vec<u16> = request.into_buffer()?; // never started: the vector as it was
    /// assert_eq!(buffer, [0, 0, 0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] or [`ErrorKind::Mpi`] from freeing; the buffer is then dropped.
    pub fn into_buffer(self) -> Result<B> {
        self.into_buffers()
    }
}

impl<'comm, S: OwnedBuffer, R: OwnedBuffer> PersistentRequest<'comm, Pair<S, R>> {
    /// The send buffer, between operations.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![2u32], vec![0u32], Sum)?;
    /// assert_eq!(total.send(), &[2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn send(&mut self) -> &[S::Item] {
        self.buffers().send.as_slice()
    }

    /// The send buffer, mutably, between operations: change what the next start sends.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![0u32], vec![0u32], Sum)?;
    /// total.send_mut()[0] = 5;
    /// total.start()?.wait()?;
    /// assert_eq!(total.recv(), &[5 * world.size() as u32]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn send_mut(&mut self) -> &mut [S::Item] {
        self.buffers().send.as_mut_slice()
    }

    /// The receive buffer, between operations: what the last operation received.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Max;
    /// let mut best = world.allreduce_init(vec![world.rank()], vec![0i32], Max)?;
    /// best.start()?.wait()?;
    /// assert_eq!(best.recv(), &[world.size() - 1]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn recv(&mut self) -> &[R::Item] {
        self.buffers().recv.as_slice()
    }

    /// The receive buffer, mutably, between operations.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![1u32], vec![0u32], Sum)?;
    /// total.start()?.wait()?;
    /// total.recv_mut()[0] = 0; // the receive buffer is ours between operations
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn recv_mut(&mut self) -> &mut [R::Item] {
        self.buffers().recv.as_mut_slice()
    }

    /// Both buffers at once, between operations: `(send, recv)`.
    ///
    /// # Panics
    /// If an operation whose [`Active`] was leaked is still running and this thread may not
    /// complete it (see the thread gate): MPI may still write the buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![1u32], vec![0u32], Sum)?;
    /// total.start()?.wait()?;
    /// let (send, recv) = total.send_recv_mut(); // both at once
    /// send[0] = recv[0];
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn send_recv_mut(&mut self) -> (&mut [S::Item], &mut [R::Item]) {
        let pair = self.buffers();
        (pair.send.as_mut_slice(), pair.recv.as_mut_slice())
    }

    /// Frees the request (`MPI_Request_free`) and hands back `(send, recv)`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![1u32], vec![0u32], Sum)?;
    /// total.start()?.wait()?;
    /// let (send, recv) = total.into_send_recv()?;
    /// assert_eq!((send, recv), (vec![1], vec![world.size() as u32]));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] or [`ErrorKind::Mpi`] from freeing; the buffers are then dropped.
    pub fn into_send_recv(self) -> Result<(S, R)> {
        self.into_buffers().map(|pair| (pair.send, pair.recv))
    }
}

// SAFETY: as for `OwnedRequest`: the handle is used only through gated calls, the buffers and
// what is kept are `Send`, an emulated call only points into them, and a drop the gate refuses
// leaks them rather than freeing them under MPI.
unsafe impl<B: Buffers> Send for PersistentRequest<'_, B> {}
// SAFETY: every method that touches the handle or the buffers takes `&mut self`.
unsafe impl<B: Buffers> Sync for PersistentRequest<'_, B> {}

impl<B: Buffers> Drop for PersistentRequest<'_, B> {
    fn drop(&mut self) {
        self.settle_leaked();
        if self.active() || self.free_raw().is_err() {
            // MPI may still use the buffers and what is kept: never free them.
            std::mem::forget(self.buffer.take());
            std::mem::forget(self.keep.take());
        } else {
            crate::live::freed(crate::live::Kind::PersistentRequest);
        }
    }
}

/// An active persistent operation. Complete it with [`wait`](Active::wait), `.await`, or drop
/// (which cancels a receive first). Its request, and so the buffer, is borrowed until then.
#[must_use = "dropping an active operation waits for it (and cancels a receive)"]
#[derive(Debug)]
pub struct Active<'a, 'comm, B: Buffers> {
    request: &'a mut PersistentRequest<'comm, B>,
}

impl<B: Buffers> Active<'_, '_, B> {
    /// Blocks until the operation completes (`MPI_Wait`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0u32; 2], me, 0)?;
    /// let mut outgoing = world.send_init(vec![7u32; 2], me, 0)?;
    /// let receiving = incoming.start()?;
    /// outgoing.start()?.wait()?;
    /// let status = receiving.wait()?; // MPI_Wait; the request stays, inactive, for the next start
    /// assert_eq!(status.count::<u32>()?, 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`]; [`ErrorKind::WrongThread`].
    #[inline(always)]
    pub fn wait(self) -> Result<Status> {
        self.request.complete(Some("wait"))
    }

    /// Whether the operation has completed, without blocking (`MPI_Test`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0u32; 2], me, 0)?;
    /// let mut outgoing = world.send_init(vec![7u32; 2], me, 0)?;
    /// let mut receiving = incoming.start()?;
    /// outgoing.start()?.wait()?;
    /// let status = loop {
    ///     if let Some(status) = receiving.test()? { // MPI_Test
    ///         break status;
    ///     }
    /// };
    /// assert_eq!(status.tag(), 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Active::wait`].
    pub fn test(&mut self) -> Result<Option<Status>> {
        if !self.request.active() {
            return Ok(Some(Status::empty()));
        }
        let result = self.request.raw.test("test");
        if let Ok(Some(status)) = result {
            self.request.finished();
            return Ok(Some(self.request.reported(status)));
        }
        result
    }

    /// Whether the operation has completed, and its status, without completing it
    /// (`MPI_Request_get_status`, MPI-4.0 §3.7.3): the request stays active until
    /// [`wait`](Active::wait) or [`test`](Active::test).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut incoming = world.recv_init(vec![0u32; 2], me, 0)?;
    /// let mut outgoing = world.send_init(vec![7u32; 2], me, 0)?;
    /// let mut receiving = incoming.start()?;
    /// outgoing.start()?.wait()?;
    /// while receiving.get_status()?.is_none() {} // peeks without completing
    /// receiving.wait()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Active::wait`].
    pub fn get_status(&mut self) -> Result<Option<Status>> {
        if !self.request.active() {
            return Ok(Some(Status::empty()));
        }
        let seen = self.request.raw.get_status("request_get_status")?;
        if seen.is_some() {
            self.request.peeked = seen;
        }
        Ok(seen)
    }
}

impl<S: OwnedBuffer, R: OwnedBuffer> Active<'_, '_, Pair<S, R>> {
    /// The send buffer, while the operation runs. A collective's send buffer is only read by
    /// MPI, so it may be read here too: a stencil updates its interior from the field it is
    /// sending while the halo arrives (the receive buffer stays out of reach until the
    /// operation completes).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = world.allreduce_init(vec![3u32], vec![0u32], Sum)?;
    /// let running = total.start()?;
    /// assert_eq!(running.send(), &[3]); // readable while MPI reads it
    /// running.wait()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn send(&self) -> &[S::Item] {
        let buffers = self.request.buffer.as_ref();
        buffers.expect("present until dropped").send.as_slice()
    }
}

impl<B: Buffers> Drop for Active<'_, '_, B> {
    fn drop(&mut self) {
        self.request.settle_leaked();
    }
}

impl<B: Buffers> std::future::Future for Active<'_, '_, B> {
    type Output = Result<Status>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        progress::poll_tested(self.get_mut().test(), cx)
    }
}

/// Several active persistent operations, from [`PersistentRequest::start_all`].
#[must_use = "dropping active operations waits for them (and cancels receives)"]
#[derive(Debug)]
pub struct ActiveAll<'a, 'comm, B: Buffers> {
    requests: &'a mut [PersistentRequest<'comm, B>],
}

impl<B: Buffers> ActiveAll<'_, '_, B> {
    /// Waits for every operation; reports the first error after completing them all.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut outgoing = [world.send_init(vec![1u8], me, 0)?, world.send_init(vec![2u8], me, 1)?];
    /// let mut incoming = [world.recv_init(vec![0u8], me, 0)?, world.recv_init(vec![0u8], me, 1)?];
    /// let receiving = ferrompi::PersistentRequest::start_all(&mut incoming)?;
    /// ferrompi::PersistentRequest::start_all(&mut outgoing)?.wait_all()?;
    /// receiving.wait_all()?; // MPI_Waitall
    /// assert_eq!(incoming[1].buffer(), &[2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`]; [`ErrorKind::WrongThread`].
    pub fn wait_all(self) -> Result<()> {
        let mut first = Ok(());
        for request in self.requests.iter_mut().filter(|r| r.active()) {
            if let Err(e) = request.complete(Some("wait_all")) {
                first = first.and(Err(e));
            }
        }
        first
    }
}

impl<B: Buffers> Drop for ActiveAll<'_, '_, B> {
    fn drop(&mut self) {
        for request in self.requests.iter_mut() {
            request.settle_leaked();
        }
    }
}

/// The error of starting a persistent request that is active, built out of line.
#[cold]
fn already_active(operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: "the persistent request is already active".into(),
    }
    .into()
}
