//! Nonblocking operations that own their buffer and hand it back on completion.

use super::{Kind, RawRequest, progress};
use crate::Status;
use crate::datatype::blocks::{check_receive_blocks, lay_typed};
use crate::datatype::{DerivedType, Equivalence, LayoutBlock, repair};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

/// `count` copies of a [`DerivedType`] laid over a buffer a persistent request will own (a
/// halo face sent from the same place at every start): made by [`DerivedType::owned_view`],
/// which checked that every byte the copies reach lies inside the buffer. The buffer's length
/// cannot change while the view or the request has it, so the check holds for the request's
/// whole life. Taken by `send_init_view`, `recv_init_view` and the persistent collectives on
/// layouts ([`Communicator`](crate::Communicator)'s `*_init_view`).
#[derive(Debug)]
pub struct OwnedView<'t, B: OwnedBuffer> {
    buf: B,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    _type: PhantomData<&'t DerivedType<'t>>,
}

impl DerivedType<'_> {
    /// `count` copies of this type over `buf`, which the view takes, to hand to a persistent
    /// request: checked as [`view`](DerivedType::view) checks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
    /// assert!(column.owned_view(vec![0.0f64; 12], 1).is_ok());
    /// assert!(column.owned_view(vec![0.0f64; 8], 1).is_err()); // would reach element 8
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`view`](DerivedType::view).
    pub fn owned_view<B: OwnedBuffer>(&self, buf: B, count: usize) -> Result<OwnedView<'_, B>> {
        let bytes = std::mem::size_of_val(buf.as_slice());
        let count = self.count_over(bytes, count, "owned_view")?;
        Ok(OwnedView {
            buf,
            count,
            datatype: self.as_raw(),
            _type: PhantomData,
        })
    }
}

impl<B: OwnedBuffer> OwnedView<'_, B> {
    /// How many copies of its type the view holds.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// Gives the buffer back.
    pub fn into_buffer(self) -> B {
        self.buf
    }

    /// The buffer, and what MPI is given besides its address: the count and the datatype.
    pub(crate) fn into_parts(self) -> (B, c_int, ffi::MPI_Datatype) {
        (self.buf, self.count, self.datatype)
    }
}

/// Per-rank blocks of a [`DerivedType`] laid over a buffer a persistent request will own, for
/// the persistent `v` collectives on layouts (`gatherv_init_view`, `scatterv_init_view`,
/// `allgatherv_init_view`, `alltoallv_init_view`): block `r` is `counts[r]` copies from
/// `displs[r]` times the type's extent. Made by [`DerivedType::owned_blocks`], which checked
/// that every block lies inside the buffer; where the blocks are a receive side, the request
/// checks that no two share a byte when it is made, as
/// [`blocks_mut`](DerivedType::blocks_mut) does. The buffer's length cannot change while the
/// blocks or the request have it.
#[derive(Debug)]
pub struct OwnedBlocks<'t, B: OwnedBuffer> {
    buf: B,
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    layout: &'t DerivedType<'t>,
}

impl DerivedType<'_> {
    /// Blocks of this type over `buf`, which they take, to hand to a persistent request:
    /// checked as [`blocks`](DerivedType::blocks) checks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// let column = DerivedType::vector(&mpi, 2, 1, 3, f64::datatype())?; // of a 2 x 3 matrix
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?;
    /// assert!(columns.owned_blocks(vec![0.0f64; 6], &[1, 2], &[0, 1]).is_ok());
    /// assert!(columns.owned_blocks(vec![0.0f64; 6], &[1], &[3]).is_err()); // no column 3
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`blocks`](DerivedType::blocks).
    pub fn owned_blocks<B: OwnedBuffer>(
        &self,
        buf: B,
        counts: &[usize],
        displs: &[usize],
    ) -> Result<OwnedBlocks<'_, B>> {
        let bytes = std::mem::size_of_val(buf.as_slice());
        let (counts, displs, _) = self.lay(bytes, counts, displs, "owned_blocks")?;
        Ok(OwnedBlocks {
            buf,
            counts,
            displs,
            layout: self,
        })
    }
}

impl<B: OwnedBuffer> OwnedBlocks<'_, B> {
    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// Gives the buffer back.
    pub fn into_buffer(self) -> B {
        self.buf
    }

    /// Checks, for a receive side, that no two blocks share a byte.
    pub(crate) fn check_receive(&self, operation: &'static str) -> Result<()> {
        let extent = i128::from(self.layout.bounds().extent);
        let origins: Vec<(i128, usize)> = (self.counts.iter().zip(&self.displs))
            .map(|(&c, &d)| (i128::from(d) * extent, c as usize))
            .collect();
        self.layout.check_disjoint(&origins, operation)
    }

    /// The buffer, the counts and displacements, and the datatype.
    pub(crate) fn into_parts(self) -> (B, Vec<c_int>, Vec<c_int>, ffi::MPI_Datatype) {
        (self.buf, self.counts, self.displs, self.layout.as_raw())
    }
}

/// Blocks each of its own [`DerivedType`] at its own byte offset, laid over a buffer a
/// persistent request will own, for
/// [`alltoallw_init_view`](crate::Communicator::alltoallw_init_view): made by
/// [`OwnedLayoutBlocks::new`], which checked that every block lies inside the buffer; where
/// they are a receive side, the request checks that no two share a byte when it is made.
#[derive(Debug)]
pub struct OwnedLayoutBlocks<'t, B: OwnedBuffer> {
    buf: B,
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    layouts: Vec<&'t DerivedType<'t>>,
}

impl<'t, B: OwnedBuffer> OwnedLayoutBlocks<'t, B> {
    /// Blocks over `buf`, which they take: block `r` is `count` copies of its type from byte
    /// `offset`, one `(type, count, offset)` per rank, checked as
    /// [`LayoutBlocks::new`](crate::LayoutBlocks::new) checks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence, OwnedLayoutBlocks};
    /// let column = DerivedType::vector(&mpi, 2, 1, 3, f64::datatype())?; // of a 2 x 3 matrix
    /// assert!(OwnedLayoutBlocks::new(vec![0.0f64; 6], &[(&column, 1, 16)]).is_ok());
    /// assert!(OwnedLayoutBlocks::new(vec![0.0f64; 6], &[(&column, 1, 24)]).is_err());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`LayoutBlocks::new`](crate::LayoutBlocks::new).
    pub fn new(buf: B, blocks: &[LayoutBlock<'t, 't>]) -> Result<Self> {
        let bytes = std::mem::size_of_val(buf.as_slice());
        let (counts, displs, _, _) = lay_typed(bytes, blocks, "owned_layout_blocks")?;
        Ok(OwnedLayoutBlocks {
            buf,
            counts,
            displs,
            layouts: blocks.iter().map(|&(ty, _, _)| ty).collect(),
        })
    }

    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// Gives the buffer back.
    pub fn into_buffer(self) -> B {
        self.buf
    }

    /// Checks, for a receive side, that no two blocks share a byte.
    pub(crate) fn check_receive(&self, operation: &'static str) -> Result<()> {
        let placed: Vec<_> = (self.layouts.iter().zip(&self.counts).zip(&self.displs))
            .map(|((&ty, &c), &d)| (ty, i128::from(d), c as usize))
            .collect();
        check_receive_blocks(&placed, operation)
    }

    /// The buffer, the counts, byte displacements and datatypes.
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_parts(self) -> (B, Vec<c_int>, Vec<c_int>, Vec<ffi::MPI_Datatype>) {
        let types = self.layouts.iter().map(|ty| ty.as_raw()).collect();
        (self.buf, self.counts, self.displs, types)
    }
}

/// A buffer a request can own: its elements stay at the same address when the buffer value is
/// moved, and it holds no borrow, so leaking it leaks the memory rather than freeing it.
///
/// # Safety
/// `as_slice` and `as_mut_slice` must return the same address and length for the lifetime of the
/// value, however the value is moved, as long as no other method is called on it.
pub unsafe trait OwnedBuffer: Send + 'static {
    /// The element type.
    type Item: Equivalence;
    /// The elements, for a send.
    fn as_slice(&self) -> &[Self::Item];
    /// The elements, for a receive.
    fn as_mut_slice(&mut self) -> &mut [Self::Item];
}

// SAFETY: a `Vec`'s elements live on the heap; moving the `Vec` moves only its pointer.
unsafe impl<T: Equivalence + Send> OwnedBuffer for Vec<T> {
    type Item = T;
    fn as_slice(&self) -> &[T] {
        self
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        self
    }
}

// SAFETY: as for `Vec`.
unsafe impl<T: Equivalence + Send> OwnedBuffer for Box<[T]> {
    type Item = T;
    fn as_slice(&self) -> &[T] {
        self
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        self
    }
}

/// A nonblocking operation that owns its buffer; [`wait`](OwnedRequest::wait) hands it back.
///
/// Dropping a pending request completes it (a receive is cancelled first) and drops the buffer.
/// Leaking it with `mem::forget` leaks the buffer too, so MPI never writes freed memory.
#[must_use = "dropping a request waits for it (and cancels a receive)"]
pub struct OwnedRequest<'comm, B: OwnedBuffer> {
    raw: RawRequest,
    /// `None` only after the buffer was handed back.
    buffer: Option<B>,
    /// Whether a `test` saw the operation complete, and `status` is what it saw.
    tested: bool,
    /// The status a successful `test` saw, for a later `wait`: written by that `test`, read
    /// only when `tested` ([`seen`](OwnedRequest::seen)). Left unwritten until then, so that
    /// starting a request stores nothing for it (a request that may be dropped while unwinding
    /// lives in memory, where an empty status would cost four stores per start).
    status: MaybeUninit<Status>,
    _comm: PhantomData<&'comm ()>,
}

/// Shows the request, never the buffer: MPI may be writing it (a derived `Debug` would read it
/// while another thread's receive is in flight, breaking the `Sync` argument below).
impl<B: OwnedBuffer> std::fmt::Debug for OwnedRequest<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedRequest")
            .field("raw", &self.raw)
            .field("done", &self.seen())
            .finish_non_exhaustive()
    }
}

impl<'comm, B: OwnedBuffer> OwnedRequest<'comm, B> {
    #[inline(always)]
    pub(crate) fn started(raw: RawRequest, buffer: B) -> Self {
        crate::gate::count_outstanding(1);
        OwnedRequest {
            raw,
            buffer: Some(buffer),
            tested: false,
            status: MaybeUninit::uninit(),
            _comm: PhantomData,
        }
    }

    /// Hands the handle, the buffer and a status a `test` saw to an
    /// [`OwnedSet`](super::OwnedSet), which takes over completing the request and accounting for
    /// it.
    pub(crate) fn into_parts(self) -> (RawRequest, B, Option<Status>) {
        let mut this = std::mem::ManuallyDrop::new(self);
        let buffer = this
            .buffer
            .take()
            .expect("buffer is present until handed back");
        (
            RawRequest {
                raw: this.raw.raw,
                kind: this.raw.kind,
            },
            buffer,
            this.seen(),
        )
    }

    /// Repairs a completed receive's buffer and takes it out.
    #[inline(always)]
    fn take_buffer(&mut self) -> B {
        crate::gate::count_outstanding(-1);
        let mut buffer = self
            .buffer
            .take()
            .expect("buffer is present until handed back");
        if matches!(self.raw.kind, Kind::Recv | Kind::Read) {
            repair(buffer.as_mut_slice());
        }
        buffer
    }

    /// Blocks until the operation completes (`MPI_Wait`), handing back the buffer and the
    /// outcome. The buffer comes back even on error (a truncated receive may hold part of the
    /// message). In the one case where no buffer can be handed back safely — MPI reports an error
    /// *and* keeps the operation — the job is aborted rather than let MPI write freed memory.
    ///
    /// # Errors
    /// In the returned `Result`: [`ErrorKind::Mpi`], for instance
    /// `MPI_ERR_TRUNCATE` when a message was longer than the buffer.
    ///
    /// # Panics
    /// If the thread gate refuses the wait (a thread the thread level does not allow, inside a
    /// reduction callback, after finalize): MPI was not called, the operation is still in flight
    /// and its buffer cannot be handed back. The request is then leaked with its buffer when the
    /// panic unwinds. [`test`](OwnedRequest::test) reports the same refusal as an `Error`
    /// without giving up the request.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let receiving = world.irecv_owned(vec![0u32; 2], me, 0)?;
    /// world.send(&[1u32, 2], me, 0)?;
    /// let (values, status) = receiving.wait(); // the buffer comes back either way
    /// assert_eq!((values, status?.tag()), (vec![1, 2], 0));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline(always)]
    pub fn wait(self) -> (B, Result<Status>) {
        // No drop glue on the way out: the buffer is taken, and nothing else needs dropping.
        let mut this = std::mem::ManuallyDrop::new(self);
        let result = if let Some(status) = this.seen() {
            Ok(status)
        } else {
            // MPI writes the handle through a copy, stored back after: nothing takes the
            // request's address, so it need not be kept in memory from its start to here.
            let mut handle = this.raw.raw;
            let result = super::wait_handle(&mut handle, this.raw.kind, None, "wait");
            this.raw.raw = handle;
            result
        };
        if let Err(e) = &result
            && e.mpi_not_called()
        {
            // The request unwinds with `this`: leaked with its buffer, which MPI may still use.
            refused(e)
        }
        let buffer = if result.is_ok() {
            // Completed: a successful `MPI_Wait` (or the `test` that saw it) completes the
            // operation and frees the request (MPI-4.0 §3.7.3), so MPI holds the buffer no more.
            this.take_buffer()
        } else {
            this.take_or_leak()
        };
        (buffer, result)
    }

    /// Whether the operation has completed, without blocking (`MPI_Test`); after `Ok(true)`,
    /// [`wait`](OwnedRequest::wait) returns at once with the same status.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut receiving = world.irecv_owned(vec![0u8], me, 0)?;
    /// world.send(&[1u8], me, 0)?;
    /// while !receiving.test()? {} // true once complete; the buffer is still held
    /// assert_eq!(receiving.wait().0, [1]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`], [`ErrorKind::WrongThread`].
    pub fn test(&mut self) -> Result<bool> {
        if !self.tested
            && let Some(status) = self.raw.test("test")?
        {
            (self.tested, self.status) = (true, MaybeUninit::new(status));
        }
        Ok(self.tested)
    }

    /// Requests cancellation of a pending receive (`MPI_Cancel`, MPI-4.0 §3.8.4).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut receiving = world.irecv_owned(vec![0u8], world.rank(), 98)?; // nothing is sent
    /// receiving.cancel()?;
    /// let (_buffer, status) = receiving.wait();
    /// assert!(status?.cancelled()?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a send; others as `test`.
    pub fn cancel(&mut self) -> Result<()> {
        self.raw.cancel("cancel")
    }

    /// Whether the operation has completed, and its status, without completing the request
    /// (`MPI_Request_get_status`, MPI-4.0 §3.7.3); the buffer comes back only from
    /// [`wait`](OwnedRequest::wait).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut receiving = world.irecv_owned(vec![0u8], me, 0)?;
    /// world.send(&[1u8], me, 0)?;
    /// let status = loop {
    ///     if let Some(status) = receiving.get_status()? {
    ///         break status;
    ///     }
    /// };
    /// assert_eq!(status.source(), me);
    /// receiving.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`], [`ErrorKind::WrongThread`].
    pub fn get_status(&mut self) -> Result<Option<Status>> {
        if let Some(status) = self.seen() {
            return Ok(Some(status));
        }
        self.raw.get_status("request_get_status")
    }

    /// The status a `test` saw complete the operation, if one did.
    #[inline(always)]
    fn seen(&self) -> Option<Status> {
        // SAFETY: `status` is written whenever `tested` is set (`test`), and never unwritten.
        self.tested.then(|| unsafe { self.status.assume_init() })
    }

    #[inline(always)]
    fn take_or_leak(&mut self) -> B {
        if self.raw.is_null() {
            self.take_buffer()
        } else {
            still_held()
        }
    }
}

/// MPI failed to complete an operation and may still use its buffer, which must then never be
/// freed: abort rather than hand back a buffer MPI may still write.
#[cold]
#[inline(never)]
fn still_held() -> ! {
    eprintln!("ferrompi: MPI could not complete an operation whose buffer it still holds");
    crate::fault::abort_world(103)
}

/// The thread gate refused to complete an owned request: say so, instead of the generic abort
/// for an operation MPI failed to complete.
#[cold]
#[track_caller]
fn refused(why: &crate::Error) -> ! {
    panic!(
        "ferrompi: an owned request cannot be completed here ({why}); it is still in flight, so \
         its buffer cannot be handed back. Complete it on a thread the thread level allows (the \
         initialising thread below ThreadLevel::Serialized)"
    )
}

impl<B: OwnedBuffer> Drop for OwnedRequest<'_, B> {
    /// Inlined as a test of the buffer (absent once handed back) and of the handle; the
    /// completion out of line, on the handle and kind as scalars.
    #[inline]
    fn drop(&mut self) {
        if self.buffer.is_some() {
            if self.raw.is_null() || finish_owned(self.raw.raw, self.raw.kind) {
                crate::gate::count_outstanding(-1);
            } else {
                // Still held by MPI: leak the buffer rather than free it.
                std::mem::forget(self.buffer.take());
            }
        }
    }
}

/// Completes the operation of an owned request dropped while pending (cancels a receive,
/// then waits); whether MPI completed it (the handle null).
#[inline(never)]
fn finish_owned(raw: crate::ffi::MPI_Request, kind: Kind) -> bool {
    let mut request = RawRequest { raw, kind };
    request.finish();
    request.is_null()
}

impl<B: OwnedBuffer> Unpin for OwnedRequest<'_, B> {}

// SAFETY: the request handle is an identifier MPI resolves internally (a pointer in Open MPI, an
// int in MPICH), used only through calls that pass the thread gate; a drop on a thread the gate
// refuses leaks the buffer instead of freeing it. The buffer is `Send` (`OwnedBuffer: Send`).
unsafe impl<B: OwnedBuffer> Send for OwnedRequest<'_, B> {}
// SAFETY: `&OwnedRequest` exposes no method that calls MPI or touches the buffer: its `Debug`
// reads only the handle's value and the stored status, never the buffer MPI may be writing.
unsafe impl<B: OwnedBuffer> Sync for OwnedRequest<'_, B> {}

impl<B: OwnedBuffer> std::future::Future for OwnedRequest<'_, B> {
    type Output = (B, Result<Status>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(status) = this.seen() {
            return Poll::Ready((this.take_buffer(), Ok(status)));
        }
        match this.raw.test("poll") {
            Ok(Some(status)) => Poll::Ready((this.take_buffer(), Ok(status))),
            Ok(None) => {
                progress::wake_soon(cx.waker());
                Poll::Pending
            }
            Err(e) if e.mpi_not_called() => refused(&e),
            Err(e) => Poll::Ready((this.take_or_leak(), Err(e))),
        }
    }
}
