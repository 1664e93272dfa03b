//! Persistent requests (MPI-4.0 §3.9): set up once, then started and completed many times.
//!
//! The request owns its buffer. Between operations the program reads and writes it through
//! [`PersistentRequest::buffer`] and [`PersistentRequest::buffer_mut`]; while an operation is
//! active, [`PersistentRequest::start`] has returned an [`Active`] that borrows the request
//! exclusively, so the buffer is unreachable. If an `Active` is leaked, the request still knows
//! it is active: it waits for the operation before it hands the buffer out again or starts the
//! next one, and on drop it cancels a receive and waits, like every request.

use super::{Kind, OwnedBuffer, RawRequest, progress};
use crate::Status;
use crate::datatype::repair;
use crate::env::enter;
use crate::error::{Error, Result, check};
use crate::ffi;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A persistent point-to-point request that owns its buffer (`MPI_Send_init`, `MPI_Recv_init`).
#[derive(Debug)]
pub struct PersistentRequest<'comm, B: OwnedBuffer> {
    raw: RawRequest,
    active: bool,
    buffer: Option<B>,
    _comm: PhantomData<&'comm ()>,
}

impl<'comm, B: OwnedBuffer> PersistentRequest<'comm, B> {
    pub(crate) fn created(raw: RawRequest, buffer: B) -> Self {
        PersistentRequest {
            raw,
            active: false,
            buffer: Some(buffer),
            _comm: PhantomData,
        }
    }

    /// Starts the operation (`MPI_Start`, MPI-4.0 §3.9). The returned [`Active`] completes it.
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn start(&mut self) -> Result<Active<'_, 'comm, B>> {
        self.wait_leaked();
        let _gate = enter("start")?;
        // SAFETY: an inactive persistent request we own; its buffer is owned by `self` and
        // unreachable until the operation completes (see the module docs).
        check(unsafe { ffi::MPI_Start(&mut self.raw.raw) }, "start")?;
        self.active = true;
        Ok(Active { request: self })
    }

    /// Starts every request of `requests` (as `MPI_Startall`, MPI-4.0 §3.9); the returned guard
    /// completes them all.
    ///
    /// # Errors
    /// As [`PersistentRequest::start`]; requests started before an error are completed by the
    /// guard's drop.
    pub fn start_all<'a>(
        requests: &'a mut [PersistentRequest<'comm, B>],
    ) -> Result<ActiveAll<'a, 'comm, B>> {
        for request in requests.iter_mut() {
            request.wait_leaked();
        }
        let all = ActiveAll { requests };
        {
            let _gate = enter("start_all")?;
            for request in all.requests.iter_mut() {
                // SAFETY: as in `start`, for each request.
                check(unsafe { ffi::MPI_Start(&mut request.raw.raw) }, "start_all")?;
                request.active = true;
            }
        }
        Ok(all)
    }

    /// The buffer, between operations.
    pub fn buffer(&mut self) -> &[B::Item] {
        self.wait_leaked();
        self.buffer
            .as_ref()
            .expect("present until dropped")
            .as_slice()
    }

    /// The buffer, mutably, between operations: change what the next send sends.
    pub fn buffer_mut(&mut self) -> &mut [B::Item] {
        self.wait_leaked();
        self.buffer
            .as_mut()
            .expect("present until dropped")
            .as_mut_slice()
    }

    /// Frees the request (`MPI_Request_free`) and hands back the buffer.
    ///
    /// # Errors
    /// [`Error::WrongThread`] or [`Error::Mpi`] from freeing; the buffer is then dropped.
    pub fn into_buffer(mut self) -> Result<B> {
        self.wait_leaked();
        self.free_raw()?;
        Ok(self.buffer.take().expect("present until dropped"))
    }

    /// Waits for an operation whose [`Active`] was leaked, so the buffer is MPI's no more and
    /// holds what the operation did (its status is lost with the `Active`).
    fn wait_leaked(&mut self) {
        if self.active {
            let _ = self.complete(Some("wait"));
        }
    }

    /// Completes an active operation the way a destructor must: cancels a receive, then waits.
    fn settle_leaked(&mut self) {
        if self.active {
            let _ = self.complete(None);
        }
    }

    /// Completes the active operation; `wait` or `finish` semantics.
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
        self.after_wait(&result);
        result
    }

    fn after_wait(&mut self, result: &Result<Status>) {
        // The gate refusing means MPI was not called and the operation is still active.
        if !matches!(result, Err(Error::WrongThread { .. })) {
            self.active = false;
            if self.raw.kind == Kind::Recv
                && let Some(buffer) = self.buffer.as_mut()
            {
                repair(buffer.as_mut_slice());
            }
        }
    }

    fn free_raw(&mut self) -> Result<()> {
        if self.raw.is_null() {
            return Ok(());
        }
        let _gate = enter("request_free")?;
        // SAFETY: an inactive persistent request we own; MPI sets the handle to null.
        check(
            unsafe { ffi::MPI_Request_free(&mut self.raw.raw) },
            "request_free",
        )
    }
}

// SAFETY: as for `OwnedRequest`: the handle is used only through gated calls, the buffer is
// `Send`, and a drop the gate refuses leaks the buffer rather than freeing it under MPI.
unsafe impl<B: OwnedBuffer> Send for PersistentRequest<'_, B> {}
// SAFETY: every method that touches the handle or the buffer takes `&mut self`.
unsafe impl<B: OwnedBuffer> Sync for PersistentRequest<'_, B> {}

impl<B: OwnedBuffer> Drop for PersistentRequest<'_, B> {
    fn drop(&mut self) {
        self.settle_leaked();
        if self.active {
            // MPI still holds the buffer (completion failed): never free it.
            std::mem::forget(self.buffer.take());
            return;
        }
        let _ = self.free_raw();
    }
}

/// An active persistent operation. Complete it with [`wait`](Active::wait), `.await`, or drop
/// (which cancels a receive first). Its request, and so the buffer, is borrowed until then.
#[must_use = "dropping an active operation waits for it (and cancels a receive)"]
#[derive(Debug)]
pub struct Active<'a, 'comm, B: OwnedBuffer> {
    request: &'a mut PersistentRequest<'comm, B>,
}

impl<B: OwnedBuffer> Active<'_, '_, B> {
    /// Blocks until the operation completes (`MPI_Wait`).
    ///
    /// # Errors
    /// [`Error::Mpi`]; [`Error::WrongThread`].
    pub fn wait(self) -> Result<Status> {
        self.request.complete(Some("wait"))
    }

    /// Whether the operation has completed, without blocking (`MPI_Test`).
    ///
    /// # Errors
    /// As [`Active::wait`].
    pub fn test(&mut self) -> Result<Option<Status>> {
        if !self.request.active {
            return Ok(Some(Status::empty()));
        }
        let result = self.request.raw.test("test");
        if let Ok(Some(status)) = result {
            self.request.after_wait(&Ok(status));
        }
        result
    }
}

impl<B: OwnedBuffer> Drop for Active<'_, '_, B> {
    fn drop(&mut self) {
        self.request.settle_leaked();
    }
}

impl<B: OwnedBuffer> std::future::Future for Active<'_, '_, B> {
    type Output = Result<Status>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        progress::poll_tested(self.get_mut().test(), cx)
    }
}

/// Several active persistent operations, from [`PersistentRequest::start_all`].
#[must_use = "dropping active operations waits for them (and cancels receives)"]
#[derive(Debug)]
pub struct ActiveAll<'a, 'comm, B: OwnedBuffer> {
    requests: &'a mut [PersistentRequest<'comm, B>],
}

impl<B: OwnedBuffer> ActiveAll<'_, '_, B> {
    /// Waits for every operation; reports the first error after completing them all.
    ///
    /// # Errors
    /// [`Error::Mpi`]; [`Error::WrongThread`].
    pub fn wait_all(self) -> Result<()> {
        let mut first = Ok(());
        for request in self.requests.iter_mut().filter(|r| r.active) {
            if let Err(e) = request.complete(Some("wait_all")) {
                first = first.and(Err(e));
            }
        }
        first
    }
}

impl<B: OwnedBuffer> Drop for ActiveAll<'_, '_, B> {
    fn drop(&mut self) {
        for request in self.requests.iter_mut() {
            request.settle_leaked();
        }
    }
}
