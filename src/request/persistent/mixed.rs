//! A mixed set of persistent requests started together ([`start_all`], as `MPI_Startall`,
//! MPI-4.0 §3.9) and completed together or one by one ([`ActiveSet`]: `MPI_Waitany`,
//! `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`, `MPI_Testall`, MPI-4.0 §3.7.5), whatever each
//! request owns: the sealed [`Persistent`] trait erases the buffers' type.

use super::{Buffers, PersistentRequest, sealed};
use crate::Status;
use crate::env::enter;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use std::ffi::c_int;

impl<B: Buffers> sealed::Sealed for PersistentRequest<'_, B> {}

/// Proof that a call comes from inside the crate: only the crate can make one, so the methods
/// of [`Persistent`] that take it cannot be called from outside (sealing by documentation is
/// not sealing: these methods skip the thread gate and the "already active" check).
#[derive(Debug, Clone, Copy)]
pub struct Internal(());

/// Any persistent request, whatever it owns, so that [`start_all`] can start a mixed set (say,
/// an allreduce of bounds and an allgatherv of cuts) together. Sealed; every
/// [`PersistentRequest`] is one.
///
/// Its methods are the crate's own: each takes an [`Internal`] token that only the crate can
/// make, so this does not compile:
///
/// ```compile_fail,E0423
/// # use ferrompi::{Mpi, Persistent};
/// # let mpi = Mpi::init().unwrap();
/// let mut barrier = mpi.world().barrier_init().unwrap();
/// barrier.start_held(ferrompi::request::Internal(()), "start").unwrap(); // MPI_Start, ungated
/// ```
pub trait Persistent: sealed::Sealed {
    /// Completes an operation whose `Active` was leaked; `Err` if it stays active.
    #[doc(hidden)]
    fn complete_leaked_operation(&mut self, _: Internal) -> Result<()>;
    /// Starts the operation; the caller holds the gate and has completed any leaked operation.
    #[doc(hidden)]
    fn start_held(&mut self, _: Internal, operation: &'static str) -> Result<()>;
    #[doc(hidden)]
    fn wait_active(&mut self, _: Internal, operation: &'static str) -> Result<()>;
    #[doc(hidden)]
    fn settle_active(&mut self, _: Internal);
    /// The handle MPI completes, for `MPI_Waitany` over a set: an inactive request's is
    /// inactive or null, which MPI skips.
    #[doc(hidden)]
    fn handle(&mut self, _: Internal) -> &mut ffi::MPI_Request;
    /// Whether an operation is active.
    #[doc(hidden)]
    fn is_active(&self, _: Internal) -> bool;
    /// Records that MPI completed the active operation.
    #[doc(hidden)]
    fn completed(&mut self, _: Internal);
}

impl<B: Buffers> Persistent for PersistentRequest<'_, B> {
    fn complete_leaked_operation(&mut self, _: Internal) -> Result<()> {
        self.complete_leaked()
    }
    fn start_held(&mut self, _: Internal, operation: &'static str) -> Result<()> {
        self.start_raw(operation)
    }
    fn wait_active(&mut self, _: Internal, operation: &'static str) -> Result<()> {
        if self.active() {
            self.complete(Some(operation))?;
        }
        Ok(())
    }
    fn settle_active(&mut self, _: Internal) {
        self.settle_leaked();
    }
    fn handle(&mut self, _: Internal) -> &mut ffi::MPI_Request {
        &mut self.raw.raw
    }
    fn is_active(&self, _: Internal) -> bool {
        self.active()
    }
    fn completed(&mut self, _: Internal) {
        // No `peeked` status to report: `start_held` cleared it, and while the set borrows the
        // request there is no `Active` whose `get_status` could set it.
        self.finished();
    }
}

/// Starts every request of a mixed set (as `MPI_Startall`, MPI-4.0 §3.9); the returned guard
/// borrows them all until it completes them, on [`wait_all`](ActiveSet::wait_all) or drop.
///
/// ```no_run
/// # use ferrompi::{Mpi, Partition, Sum};
/// # let mpi = Mpi::init()?;
/// # let world = mpi.world();
/// let blocks = Partition::<f64>::uniform(world.size() as usize, 4)?;
/// let mut cuts = world.allgatherv_init(vec![1.0; 4], vec![0.0; blocks.extent()], &blocks)?;
/// let mut gap = world.allreduce_init_in_place(vec![0.5f64], Sum)?;
/// ferrompi::start_all(&mut [&mut cuts, &mut gap])?.wait_all()?;
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// # Errors
/// As [`PersistentRequest::start`]; requests started before an error are completed by the
/// guard's drop.
pub fn start_all<'a, 'b>(requests: &'a mut [&'b mut dyn Persistent]) -> Result<ActiveSet<'a, 'b>> {
    for request in requests.iter_mut() {
        request.complete_leaked_operation(Internal(()))?;
    }
    let set = ActiveSet { requests };
    {
        let _gate = enter("start_all")?;
        for request in set.requests.iter_mut() {
            request.start_held(Internal(()), "start_all")?;
        }
    }
    Ok(set)
}

/// Active operations of a mixed set of persistent requests, from [`start_all`].
#[must_use = "dropping active operations waits for them (and cancels receives)"]
pub struct ActiveSet<'a, 'b> {
    requests: &'a mut [&'b mut dyn Persistent],
}

impl std::fmt::Debug for ActiveSet<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveSet")
            .field("requests", &self.requests.len())
            .finish()
    }
}

impl ActiveSet<'_, '_> {
    /// Waits for every operation; reports the first error after completing them all.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut sync = world.barrier_init()?;
    /// let mut total = world.allreduce_init_in_place(vec![1u32], Sum)?;
    /// ferrompi::start_all(&mut [&mut sync, &mut total])?.wait_all()?; // requests of any types
    /// assert_eq!(total.buffer(), &[world.size() as u32]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`]; [`ErrorKind::WrongThread`].
    pub fn wait_all(self) -> Result<()> {
        let mut first = Ok(());
        for request in self.requests.iter_mut() {
            if let Err(e) = request.wait_active(Internal(()), "wait_all") {
                first = first.and(Err(e));
            }
        }
        first
    }
}

impl ActiveSet<'_, '_> {
    /// Waits until one active operation completes (`MPI_Waitany`, MPI-4.0 §3.7.5): its index in
    /// the slice given to [`start_all`] and its status; `None` when none is active. The others
    /// stay active, for the next call or [`wait_all`](ActiveSet::wait_all).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut sync = world.barrier_init()?;
    /// let mut total = world.allreduce_init_in_place(vec![1u32], Sum)?;
    /// let mut requests: [&mut dyn ferrompi::Persistent; 2] = [&mut sync, &mut total];
    /// let mut active = ferrompi::start_all(&mut requests)?;
    /// let mut done = 0;
    /// while let Some((index, _status)) = active.wait_any()? {
    ///     assert!(index < 2);
    ///     done += 1;
    /// }
    /// assert_eq!(done, 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`]; [`ErrorKind::WrongThread`].
    pub fn wait_any(&mut self) -> Result<Option<(usize, Status)>> {
        self.any("wait_any", true)
    }

    /// Like [`wait_any`](ActiveSet::wait_any) but returns at once (`MPI_Testany`): `None` when
    /// no active operation has completed yet.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut sync = world.barrier_init()?;
    /// let mut requests: [&mut dyn ferrompi::Persistent; 1] = [&mut sync];
    /// let mut active = ferrompi::start_all(&mut requests)?;
    /// while active.test_any()?.is_none() {}
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ActiveSet::wait_any`].
    pub fn test_any(&mut self) -> Result<Option<(usize, Status)>> {
        self.any("test_any", false)
    }

    fn any(&mut self, operation: &'static str, block: bool) -> Result<Option<(usize, Status)>> {
        let mut handles = Scratch::new();
        let (count, raw) = self.handles(&mut handles, operation)?;
        let (mut index, mut flag, mut status) = (0, 1, Status::empty());
        let rc = {
            let _gate = enter(operation)?;
            // SAFETY: `raw` holds `count` handles of requests this set borrows (null for the
            // inactive ones); MPI writes index, flag and status.
            unsafe {
                if block {
                    ffi::MPI_Waitany(count, raw.as_mut_ptr(), &mut index, status.as_raw_mut())
                } else {
                    let (r, i, f, st) = (raw.as_mut_ptr(), &mut index, &mut flag, &mut status);
                    ffi::MPI_Testany(count, r, i, f, st.as_raw_mut())
                }
            }
        };
        // MPI changes only the completed handle (a persistent one stays, inactive; an emulated
        // collective's becomes null), also when it reports an error for that operation.
        let completed = usize::try_from(index)
            .ok()
            .filter(|_| flag != 0 && index != ffi::MPI_UNDEFINED);
        if let Some(i) = completed {
            self.complete_one(i, raw[i]);
        }
        check(rc, operation)?;
        Ok(completed.map(|i| (i, status)))
    }

    /// Waits until at least one active operation completes (`MPI_Waitsome`), appending each
    /// completed one's index and status to `completed`; returns how many (0 when none is
    /// active).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut a = world.barrier_init()?;
    /// let mut b = world.barrier_init()?;
    /// let mut requests: [&mut dyn ferrompi::Persistent; 2] = [&mut a, &mut b];
    /// let mut active = ferrompi::start_all(&mut requests)?;
    /// let mut done = Vec::new();
    /// while done.len() < 2 {
    ///     active.wait_some(&mut done)?;
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ActiveSet::wait_any`].
    pub fn wait_some(&mut self, completed: &mut Vec<(usize, Status)>) -> Result<usize> {
        self.some("wait_some", true, completed)
    }

    /// Like [`wait_some`](ActiveSet::wait_some) but returns at once (`MPI_Testsome`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut a = world.barrier_init()?;
    /// let mut requests: [&mut dyn ferrompi::Persistent; 1] = [&mut a];
    /// let mut active = ferrompi::start_all(&mut requests)?;
    /// let mut done = Vec::new();
    /// while done.is_empty() {
    ///     active.test_some(&mut done)?;
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ActiveSet::wait_any`].
    pub fn test_some(&mut self, completed: &mut Vec<(usize, Status)>) -> Result<usize> {
        self.some("test_some", false, completed)
    }

    fn some(
        &mut self,
        operation: &'static str,
        block: bool,
        out: &mut Vec<(usize, Status)>,
    ) -> Result<usize> {
        let (mut handles, mut indices, mut statuses) =
            (Scratch::new(), Scratch::new(), Scratch::new());
        let (count, raw) = self.handles(&mut handles, operation)?;
        let n = raw.len();
        let (indices, statuses) = (indices.slice(n, 0), statuses.slice(n, Status::empty()));
        let mut outcount: c_int = 0;
        let rc = {
            let _gate = enter(operation)?;
            let (r, idx, st) = (
                raw.as_mut_ptr(),
                indices.as_mut_ptr(),
                statuses.as_mut_ptr().cast::<ffi::MPI_Status>(),
            );
            // SAFETY: `raw`, `indices` and `statuses` hold `count` entries each (`Status` is a
            // transparent `MPI_Status`); the handles are of requests this set borrows.
            unsafe {
                if block {
                    ffi::MPI_Waitsome(count, r, &mut outcount, idx, st)
                } else {
                    ffi::MPI_Testsome(count, r, &mut outcount, idx, st)
                }
            }
        };
        let done = usize::try_from(outcount).unwrap_or(0); // MPI_UNDEFINED: none was active
        for k in 0..done {
            let i = usize::try_from(indices[k]).expect("MPI returns valid indices");
            self.complete_one(i, raw[i]);
            out.push((i, statuses[k]));
        }
        check(rc, operation)?;
        Ok(done)
    }

    /// Whether every active operation has completed (`MPI_Testall`); if so they are all
    /// completed, otherwise none is.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut a = world.barrier_init()?;
    /// let mut requests: [&mut dyn ferrompi::Persistent; 1] = [&mut a];
    /// let mut active = ferrompi::start_all(&mut requests)?;
    /// while !active.test_all()? {}
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ActiveSet::wait_any`].
    pub fn test_all(&mut self) -> Result<bool> {
        const OP: &str = "test_all";
        let (mut handles, mut statuses) = (Scratch::new(), Scratch::new());
        let (count, raw) = self.handles(&mut handles, OP)?;
        let statuses = statuses.slice(raw.len(), Status::empty());
        let mut flag: c_int = 0;
        let rc = {
            let _gate = enter(OP)?;
            let st = statuses.as_mut_ptr().cast::<ffi::MPI_Status>();
            // SAFETY: `raw` and `statuses` hold `count` entries each (`Status` is a transparent
            // `MPI_Status`); the handles are of requests this set borrows.
            unsafe { ffi::MPI_Testall(count, raw.as_mut_ptr(), &mut flag, st) }
        };
        if flag != 0 {
            for (i, &handle) in raw.iter().enumerate() {
                if self.requests[i].is_active(Internal(())) {
                    self.complete_one(i, handle);
                }
            }
        }
        let benign = |s: &Status| {
            let code = s.as_raw().MPI_ERROR;
            code == ffi::MPI_SUCCESS || code == ffi::MPI_ERR_PENDING
        };
        match check(rc, OP) {
            // MPICH 4.0-5.0 return MPI_ERR_IN_STATUS from MPI_Testall over persistent collectives
            // whose statuses all say MPI_SUCCESS (done) or MPI_ERR_PENDING (not yet): no error
            // happened (reproduced in C).
            Err(e)
                if e.class() == Some(crate::ErrorClass::InStatus)
                    && statuses.iter().all(benign) => {}
            other => other?,
        }
        Ok(flag != 0)
    }

    /// The handles of the set, in order, with null for the inactive requests (MPI skips null
    /// handles), in `scratch`.
    fn handles<'h>(
        &mut self,
        scratch: &'h mut Scratch<ffi::MPI_Request>,
        operation: &'static str,
    ) -> Result<(c_int, &'h mut [ffi::MPI_Request])> {
        let count = crate::datatype::count_of::<i32>(self.requests.len(), operation)?;
        let handles = scratch.slice(self.requests.len(), ffi::MPI_REQUEST_NULL);
        for (handle, request) in handles.iter_mut().zip(self.requests.iter_mut()) {
            if request.is_active(Internal(())) {
                *handle = *request.handle(Internal(()));
            }
        }
        Ok((count, handles))
    }

    /// Records that MPI completed request `i`, leaving `handle` (a persistent request's stays,
    /// inactive; an emulated collective's is now null).
    fn complete_one(&mut self, i: usize, handle: ffi::MPI_Request) {
        let request = &mut self.requests[i];
        *request.handle(Internal(())) = handle;
        request.completed(Internal(()));
    }
}

/// Room for one call's arrays: on the stack for sets of up to [`INLINE`] requests, as a C
/// program would pass them, on the heap beyond.
struct Scratch<T> {
    inline: Option<[T; INLINE]>,
    heap: Vec<T>,
}

/// Sets up to this size complete without allocating.
const INLINE: usize = 32;

impl<T: Copy> Scratch<T> {
    fn new() -> Self {
        Scratch {
            inline: None,
            heap: Vec::new(),
        }
    }

    /// `n` entries, each `fill`.
    fn slice(&mut self, n: usize, fill: T) -> &mut [T] {
        if n <= INLINE {
            &mut self.inline.insert([fill; INLINE])[..n]
        } else {
            self.heap.clear();
            self.heap.resize(n, fill);
            &mut self.heap
        }
    }
}

impl Drop for ActiveSet<'_, '_> {
    fn drop(&mut self) {
        for request in self.requests.iter_mut() {
            request.settle_active(Internal(()));
        }
    }
}
