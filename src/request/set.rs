//! A set of scoped requests completed together (`MPI_Waitall`, `MPI_Waitany`, `MPI_Waitsome` and
//! the `MPI_Test*` forms, MPI-4.0 §3.7.5), for the post-N-then-wait-all pattern.
//!
//! The handles live in one contiguous array, exactly what a C program passes to `MPI_Waitall`.
//! Pushing a request copies its handle in; [`Communicator::isend_into`] and
//! [`Communicator::irecv_into`] have MPI write it there directly, as C passes `&requests[i]`.
//! Either way, once the set has capacity for a batch, posting and completing a batch allocates
//! nothing. A set made by [`RequestSet::with_storage`] works in the memory of a
//! [`RequestStorage`] kept outside the scope, in place, so a loop of batches moves nothing.
//!
//! [`Communicator::isend_into`]: crate::Communicator::isend_into
//! [`Communicator::irecv_into`]: crate::Communicator::irecv_into

use super::{InFlight, Kind, RawRequest, Repair, Request, Scope};
use crate::Status;
use crate::env::enter_with;
use crate::error::{Result, check};
use crate::ffi;
use crate::gate::Pass;
use std::ffi::c_int;
use std::mem::ManuallyDrop;

/// Requests of one [`scope`](super::scope), completed together.
///
/// Requests join it by [`push`](RequestSet::push), or are started straight into it by
/// [`Communicator::isend_into`](crate::Communicator::isend_into) and
/// [`Communicator::irecv_into`](crate::Communicator::irecv_into), the form for loops that post
/// many small messages per batch (no [`Request`] in between).
///
/// Indices are positions in push order and stay valid until [`clear`](RequestSet::clear).
/// Dropping a set with pending requests completes them (receives are cancelled first).
///
/// A set is made in its scope (`RequestSet::new(s)` and the other constructors take it) and
/// takes only that scope's requests, whose operations it counts there. A request of an inner
/// scope does not compile:
///
/// ```compile_fail,E0521
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// let mut got = [0u8; 1];
/// ferrompi::scope(|outer| {
///     let mut set = ferrompi::RequestSet::new(outer);
///     ferrompi::scope(|inner| {
///         set.push(world.irecv(inner, &mut got, 0, 0).unwrap()); // another scope's request
///     });
/// });
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// nor does an operation of an inner scope started into it:
///
/// ```compile_fail,E0521
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// let mut got = [0u8; 1];
/// ferrompi::scope(|outer| {
///     let mut set = ferrompi::RequestSet::new(outer);
///     ferrompi::scope(|inner| {
///         world.irecv_into(&mut set, inner, &mut got, 0, 0).unwrap(); // another scope
///     });
/// });
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[derive(Debug)]
pub struct RequestSet<'scope> {
    /// The handles, the receives' indices and the scratch (see [`RequestStorage`]); dropped by
    /// hand in `Drop`, which leaves them to `home` when there is one.
    memory: ManuallyDrop<RequestStorage>,
    /// Repairs of receive buffers that need one (only `bool`-like types), by index.
    repairs: Vec<(usize, Repair)>,
    /// How many of the requests are complete and accounted for; the rest are pending. A push
    /// of a request in flight (every freshly started one) leaves it as it is.
    completed: usize,
    /// The operations in flight of the scope the set was made in (`None` only for the sets
    /// inside an [`OwnedSet`](crate::OwnedSet), which hold no scoped request). Known from the
    /// start, so adding a request stores nothing but its handle.
    in_flight: Option<&'scope InFlight<'scope>>,
    /// The storage lent by [`with_storage`](RequestSet::with_storage). The set then works in
    /// its memory in place: `memory.raw` and `memory.receives` are second headers (see
    /// `alias`) for the vectors `home` holds, which keep length 0 and the current memory
    /// (`grow` updates them), and the set uses `home.scratch` (its own stays `None`). The set
    /// never frees that memory; `home` owns it, also when the set is leaked.
    home: Option<&'scope mut RequestStorage>,
}

/// The memory of a [`RequestSet`], kept across scopes so a loop of post-N-then-wait-all batches
/// allocates nothing after the first: lend it to each scope's set with
/// [`RequestSet::with_storage`], which works in it in place (or move it in with
/// [`RequestSet::from_storage`] and back out with [`RequestSet::into_storage`]). Holds no live
/// request between scopes.
#[derive(Debug, Default)]
pub struct RequestStorage {
    /// The handles, in push order: the array `MPI_Waitall` and the others take.
    raw: Vec<ffi::MPI_Request>,
    /// The indices of the receives, ascending: what a set's drop cancels. A send or collective
    /// pushes nothing here.
    receives: Vec<usize>,
    /// Scratch for `MPI_Waitsome`/`MPI_Testsome`, kept to avoid allocating per call; boxed, so
    /// the storage (moved in and out of a set every batch) stays small.
    scratch: Option<Box<Scratch>>,
}

/// The index and status arrays `MPI_Waitsome`/`MPI_Testsome` fill.
#[derive(Debug, Default)]
struct Scratch {
    indices: Vec<c_int>,
    statuses: Vec<Status>,
}

// SAFETY: the storage holds no live request (its vectors are empty; only their capacity is kept).
unsafe impl Send for RequestStorage {}
// SAFETY: as for `Send`.
unsafe impl Sync for RequestStorage {}

impl RequestStorage {
    /// Storage with room for `n` requests.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{RequestSet, RequestStorage};
    /// let mut storage = RequestStorage::with_capacity(16);
    /// for _ in 0..3 {
    ///     // Each batch reuses the same memory: no allocation after the first.
    ///     ferrompi::scope(|s| {
    ///         let mut set = RequestSet::with_storage(s, &mut storage);
    ///         set.push(world.ibarrier(s)?);
    ///         set.wait_all()
    ///     })?;
    /// }
    /// assert!(storage.capacity() >= 16);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        RequestStorage {
            raw: Vec::with_capacity(n),
            receives: Vec::with_capacity(n),
            ..Default::default()
        }
    }

    /// How many requests fit without allocating.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let storage = ferrompi::RequestStorage::with_capacity(8);
    /// assert!(storage.capacity() >= 8);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.raw.capacity().min(self.receives.capacity())
    }

    /// The storage with no handle in it (every handle is `Copy`: nothing to drop).
    #[inline(always)]
    fn emptied(mut self) -> Self {
        self.raw.clear();
        self.receives.clear();
        self
    }
}

impl<'scope> RequestSet<'scope> {
    /// An empty set for requests of `scope`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 0)?);
    ///     set.push(world.isend(s, &out, right, 0)?);
    ///     set.wait_all()
    /// })?;
    /// assert_eq!(got, [left; 4]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn new(scope: &'scope Scope<'scope, '_>) -> Self {
        RequestSet::with_capacity(scope, 0)
    }

    /// An empty set for requests of `scope`, with room for `n` of them.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::with_capacity(s, 2); // no allocation up to 2
    ///     set.push(world.ibarrier(s)?);
    ///     set.wait_all()
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn with_capacity(scope: &'scope Scope<'scope, '_>, n: usize) -> Self {
        RequestSet::from_storage(scope, RequestStorage::with_capacity(n))
    }

    /// A set for requests of `scope`, using memory kept from an earlier one (see
    /// [`RequestStorage`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{RequestSet, RequestStorage};
    /// let storage = RequestStorage::with_capacity(4);
    /// let storage = ferrompi::scope(|s| {
    ///     let mut set = RequestSet::from_storage(s, storage);
    ///     set.push(world.ibarrier(s)?);
    ///     set.wait_all()?;
    ///     Ok::<_, ferrompi::Error>(set.into_storage())
    /// })?;
    /// assert!(storage.capacity() >= 4);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn from_storage(scope: &'scope Scope<'scope, '_>, storage: RequestStorage) -> Self {
        let mut set = RequestSet::unscoped(storage);
        set.in_flight = Some(&scope.in_flight);
        set
    }

    /// A set of no scope, for the handles of owned requests (see `OwnedSet`): its completions
    /// take the thread gate's test and count in no scope.
    #[inline]
    pub(crate) fn unscoped(storage: RequestStorage) -> Self {
        RequestSet {
            memory: ManuallyDrop::new(storage),
            repairs: Vec::new(),
            completed: 0,
            in_flight: None,
            home: None,
        }
    }

    /// A set for requests of `scope`, working in the memory of `storage`, lent for the scope:
    /// nothing moves in or out, and the memory stays in `storage` for the next batch, so a loop
    /// of post-N-then-wait-all batches allocates nothing after the first and needs no
    /// [`into_storage`](RequestSet::into_storage).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{RequestSet, RequestStorage};
    /// let me = world.rank();
    /// let mut storage = RequestStorage::with_capacity(8);
    /// let mut got = [0u32; 4];
    /// for round in 0..3 {
    ///     let out = [round; 4];
    ///     ferrompi::scope(|s| {
    ///         let mut set = RequestSet::with_storage(s, &mut storage); // no allocation
    ///         world.irecv_into(&mut set, s, &mut got, me, 0)?;
    ///         world.isend_into(&mut set, s, &out, me, 0)?;
    ///         set.wait_all()
    ///     })?;
    ///     assert_eq!(got, [round; 4]);
    /// }
    /// assert!(storage.capacity() >= 8); // and no request in it
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline(always)]
    pub fn with_storage(
        scope: &'scope Scope<'scope, '_>,
        storage: &'scope mut RequestStorage,
    ) -> Self {
        // SAFETY: the set's headers sit in a `ManuallyDrop` that is dropped only when the set
        // has no home, and `home` borrows `storage` for the set's life; only the set grows the
        // memory meanwhile (`grow`, which hands the new memory back to `storage`).
        let memory = unsafe {
            RequestStorage {
                raw: alias(&mut storage.raw),
                receives: alias(&mut storage.receives),
                scratch: None, // the set uses `storage.scratch` in place
            }
        };
        RequestSet {
            memory: ManuallyDrop::new(memory),
            repairs: Vec::new(),
            completed: 0,
            in_flight: Some(&scope.in_flight),
            home: Some(storage),
        }
    }

    /// Completes any pending request (as dropping the set would: receives are cancelled) and
    /// gives back the set's memory for the next batch. Call [`wait_all`](RequestSet::wait_all)
    /// first to see errors. A set in lent storage ([`with_storage`](RequestSet::with_storage))
    /// moves the memory out of it, leaving that storage empty.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let storage = ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::with_capacity(s, 4);
    ///     set.push(world.ibarrier(s)?);
    ///     set.wait_all()?;
    ///     Ok::<_, ferrompi::Error>(set.into_storage()) // only the memory, no request
    /// })?;
    /// assert!(storage.capacity() >= 4);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline(always)]
    pub fn into_storage(mut self) -> RequestStorage {
        self.complete_on_drop();
        if let Some(home) = self.home.take() {
            // The memory is the lent storage's (see `home`): hand it over, leaving the storage
            // empty, and the set (which drops next, with no home) without its second headers.
            self.memory = ManuallyDrop::new(RequestStorage::default());
            self.completed = 0;
            return std::mem::take(home).emptied();
        }
        if self.pending() > 0 {
            // MPI still holds some handle: the memory cannot be reused; give fresh storage.
            return RequestStorage::default();
        }
        // Nothing is pending: the set, left with empty memory, then drops as a no-op.
        self.completed = 0;
        std::mem::take(&mut *self.memory).emptied()
    }

    /// Adds a request; returns its index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     let index = set.push(world.ibarrier(s)?); // its place in the set
    ///     assert_eq!(index, 0);
    ///     set.wait_all()
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, request: Request<'scope>) -> usize {
        // `InFlight` is invariant in 'scope, and each scope has a 'scope of its own: a request
        // of this set's lifetime is of the set's scope, already counted in its operations.
        debug_assert!(
            self.in_flight
                .is_some_and(|s| std::ptr::eq(s, request.in_flight))
        );
        let (raw, repair, pending) = request.into_parts();
        let index = self.push_handle(raw);
        if !pending {
            self.completed += 1;
        } else if let Some(repair) = repair {
            self.repairs.push((index, repair));
        }
        index
    }

    /// Room for the handle of an operation about to start straight into the set (see
    /// `Communicator::isend_into`): notes a receive and its repair, and returns where MPI is to
    /// write the handle, in the set's array where `MPI_Waitall` will read it (as a C program
    /// passes `&requests[i]`). Whatever could panic (growing the vectors) happens here, before
    /// the start, so a started operation is always in the set.
    ///
    /// The caller then calls exactly one of [`commit_slot`](Self::commit_slot), once MPI has
    /// written the handle, or [`release_slot`](Self::release_slot), when nothing started, before
    /// any other use of the set. (These are plain calls, not a closure, so that the start is
    /// inlined into the caller's loop in every codegen unit.)
    #[inline(always)]
    pub(crate) fn reserve_slot(
        &mut self,
        kind: Kind,
        repair: Option<Repair>,
    ) -> *mut ffi::MPI_Request {
        let index = self.make_room();
        if kind == Kind::Recv {
            self.note_receive(index);
        }
        if let Some(repair) = repair {
            self.repairs.push((index, repair));
        }
        // SAFETY: `make_room` made room for one more handle at `index`.
        unsafe { self.memory.raw.as_mut_ptr().add(index) }
    }

    /// Makes room for one more handle; returns where it goes (`raw.len()`).
    #[inline(always)]
    fn make_room(&mut self) -> usize {
        let index = self.memory.raw.len();
        if index == self.memory.raw.capacity() {
            self.grow(|memory| memory.raw.reserve(1));
        }
        index
    }

    /// Notes that the handle at `index` (about to go there) is a receive's.
    #[inline(always)]
    fn note_receive(&mut self, index: usize) {
        let at = self.memory.receives.len();
        if at == self.memory.receives.capacity() {
            self.grow(|memory| memory.receives.reserve(1));
        }
        // SAFETY: `at` is within the capacity (just checked, or made so), and `usize` needs
        // nothing dropped; the length then counts the index written.
        unsafe {
            self.memory.receives.as_mut_ptr().add(at).write(index);
            self.memory.receives.set_len(at + 1);
        }
    }

    /// Grows the set's memory with `reserve`; a set working in lent storage updates it to the
    /// new memory (see `home`). Out of line: a batch in warm memory never comes here.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, reserve: impl FnOnce(&mut RequestStorage)) {
        let memory = &mut *self.memory;
        // A vector that cannot grow panics unchanged, so `home` still names its memory then.
        reserve(memory);
        if let Some(home) = self.home.as_deref_mut() {
            // The old headers there may name memory `reserve` freed: forget them, not drop.
            // SAFETY: the set's headers are never dropped while it has a home (see
            // `with_storage`), and `home` is borrowed by the set, so the storage's new headers
            // are neither dropped nor grown before the set ends.
            unsafe {
                std::mem::forget(std::mem::replace(&mut home.raw, alias(&mut memory.raw)));
                std::mem::forget(std::mem::replace(
                    &mut home.receives,
                    alias(&mut memory.receives),
                ));
            }
        }
    }

    /// Takes the operation whose handle MPI wrote at [`reserve_slot`](Self::reserve_slot)'s
    /// place into the set, counted in `in_flight`, its scope's operations in flight (the set's
    /// own: see `push`; passed in, as the caller has it at hand); returns its index.
    ///
    /// # Safety
    /// MPI has written a request handle at the place `reserve_slot` returned, for an operation
    /// whose buffer is borrowed for `'scope`; no other call on the set came in between.
    #[inline(always)]
    pub(crate) unsafe fn commit_slot(&mut self, in_flight: &'scope InFlight<'scope>) -> usize {
        debug_assert!(self.in_flight.is_some_and(|s| std::ptr::eq(s, in_flight)));
        let index = self.memory.raw.len();
        // SAFETY: per the contract, an initialised handle lies at `index`, within capacity.
        unsafe { self.memory.raw.set_len(index + 1) };
        in_flight.started();
        index
    }

    /// Takes back what [`reserve_slot`](Self::reserve_slot) noted for an operation that did not
    /// start; the set is as it was.
    #[inline(always)]
    pub(crate) fn release_slot(&mut self, kind: Kind, repaired: bool) {
        if kind == Kind::Recv {
            self.memory.receives.pop();
        }
        if repaired {
            self.repairs.pop();
        }
    }

    /// Adds a started request that is not tied to a scope (an owned request's handle); the
    /// caller keeps its buffer until MPI has nulled the handle.
    pub(crate) fn push_raw(&mut self, raw: RawRequest) -> usize {
        self.completed += usize::from(raw.is_null());
        self.push_handle(raw)
    }

    /// Appends the handle, noting a receive; returns its index.
    #[inline(always)]
    fn push_handle(&mut self, raw: RawRequest) -> usize {
        let index = self.make_room();
        if raw.kind == Kind::Recv {
            self.note_receive(index);
        }
        // SAFETY: `make_room` made room for the handle at `index`, which is `raw.len()`.
        unsafe {
            self.memory.raw.as_mut_ptr().add(index).write(raw.raw);
            self.memory.raw.set_len(index + 1);
        }
        index
    }

    /// Whether MPI has completed request `index` (its handle is null).
    pub(crate) fn is_complete(&self, index: usize) -> bool {
        self.memory.raw[index] == ffi::MPI_REQUEST_NULL
    }

    /// Whether request `index` is a receive.
    pub(crate) fn is_receive(&self, index: usize) -> bool {
        self.memory.receives.binary_search(&index).is_ok()
    }

    /// Number of requests in the set, complete or not.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.ibarrier(s)?);
    ///     assert_eq!(set.len(), 1);
    ///     set.wait_all()?;
    ///     assert_eq!(set.len(), 1); // completed requests keep their places
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.memory.raw.len()
    }

    /// Whether the set holds no requests.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let set = ferrompi::RequestSet::new(s);
    ///     assert!(set.is_empty());
    /// });
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.memory.raw.is_empty()
    }

    /// Number of requests still in flight.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.ibarrier(s)?);
    ///     set.wait_all()?;
    ///     assert_eq!(set.pending(), 0);
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn pending(&self) -> usize {
        self.memory.raw.len() - self.completed
    }

    /// The pass of the thread gate of the scope whose requests the set holds (see
    /// [`InFlight`]): a set cannot leave that scope's thread or outlive it. `None` for a set of
    /// no scope, whose every call takes the gate's test.
    #[inline(always)]
    fn pass(&self) -> Option<Pass> {
        self.in_flight.and_then(|in_flight| in_flight.pass)
    }

    /// Accounts for requests MPI has completed (nulled), repairing their receive buffers.
    #[inline(always)]
    fn settle(&mut self, newly_completed: usize) {
        if newly_completed == 0 {
            return;
        }
        self.completed += newly_completed;
        if let Some(in_flight) = self.in_flight {
            in_flight.completed(newly_completed);
        }
        if !self.repairs.is_empty() {
            // Out of line, like `complete_pending`: what every batch inlines is the tests.
            self.repairs = repair_completed(std::mem::take(&mut self.repairs), &self.memory.raw);
        }
    }

    /// After an error, MPI may have completed some requests: count what is still pending.
    #[inline]
    fn recount(&mut self) {
        let done = self.pending() - still_pending(&self.memory.raw);
        self.settle(done);
    }

    #[inline]
    fn count(&self, operation: &'static str) -> Result<c_int> {
        crate::datatype::count_of::<c_int>(self.memory.raw.len(), operation)
    }

    /// Waits for every request (`MPI_Waitall`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 0)?);
    ///     set.push(world.isend(s, &out, right, 0)?);
    ///     set.wait_all() // MPI_Waitall
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Mpi`](crate::Error::Mpi) (class `InStatus` when some operations failed; use
    /// [`wait_all_statuses`](RequestSet::wait_all_statuses) to see which);
    /// [`Error::WrongThread`](crate::Error::WrongThread).
    #[inline(always)]
    pub fn wait_all(&mut self) -> Result<()> {
        const OP: &str = "wait_all";
        let pass = self.pass();
        let rc = wait_all_handles(&mut self.memory.raw, pass, OP)?;
        self.finish_all(rc, OP)
    }

    /// Waits for every request, writing each one's status into `statuses` (resized to
    /// [`len`](RequestSet::len)), index for index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// let mut statuses = Vec::new();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 5)?);
    ///     set.push(world.isend(s, &out, right, 5)?);
    ///     set.wait_all_statuses(&mut statuses)
    /// })?;
    /// assert_eq!(statuses[0].source(), left); // in the order pushed
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`]; on `InStatus`, each status's error field tells.
    pub fn wait_all_statuses(&mut self, statuses: &mut Vec<Status>) -> Result<()> {
        const OP: &str = "wait_all";
        let n = self.count(OP)?;
        statuses.clear();
        statuses.resize(self.memory.raw.len(), Status::empty());
        let rc = {
            let _gate = enter_with(self.pass(), OP)?;
            // SAFETY: `raw` and `statuses` hold `n` entries each (`Status` is a transparent
            // `MPI_Status`).
            unsafe {
                ffi::MPI_Waitall(
                    n,
                    self.memory.raw.as_mut_ptr(),
                    statuses.as_mut_ptr().cast(),
                )
            }
        };
        self.finish_all(rc, OP)
    }

    #[inline(always)]
    fn finish_all(&mut self, rc: c_int, operation: &'static str) -> Result<()> {
        if rc == ffi::MPI_SUCCESS {
            self.settle(self.pending());
        } else {
            self.recount();
        }
        check(rc, operation)
    }

    /// Tests whether every request has completed (`MPI_Testall`); completes them all if so.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 0)?);
    ///     set.push(world.isend(s, &out, right, 0)?);
    ///     while !set.test_all()? {} // MPI_Testall: never blocks
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn test_all(&mut self) -> Result<bool> {
        const OP: &str = "test_all";
        let n = self.count(OP)?;
        let mut flag: c_int = 0;
        let rc = {
            let _gate = enter_with(self.pass(), OP)?;
            // SAFETY: `raw` holds `n` handles we own; writes the flag.
            unsafe {
                ffi::MPI_Testall(
                    n,
                    self.memory.raw.as_mut_ptr(),
                    &mut flag,
                    ffi::MPI_STATUSES_IGNORE,
                )
            }
        };
        if rc == ffi::MPI_SUCCESS && flag != 0 {
            self.settle(self.pending());
        } else if rc != ffi::MPI_SUCCESS {
            self.recount();
        }
        check(rc, OP)?;
        Ok(flag != 0)
    }

    /// Waits for any one pending request (`MPI_Waitany`): its index and status, or `None` when
    /// none is pending.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 0)?);
    ///     set.push(world.isend(s, &out, right, 0)?);
    ///     while let Some((index, _status)) = set.wait_any()? {
    ///         assert!(index < 2); // each completes once; None when none is left
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn wait_any(&mut self) -> Result<Option<(usize, Status)>> {
        self.any("wait_any", true)
    }

    /// Like [`wait_any`](RequestSet::wait_any) but returns at once (`MPI_Testany`): `None` when
    /// no pending request has completed yet.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.ibarrier(s)?);
    ///     while set.pending() > 0 {
    ///         if let Some((index, _)) = set.test_any()? {
    ///             assert_eq!(index, 0);
    ///         }
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn test_any(&mut self) -> Result<Option<(usize, Status)>> {
        self.any("test_any", false)
    }

    fn any(&mut self, operation: &'static str, block: bool) -> Result<Option<(usize, Status)>> {
        if self.pending() == 0 {
            return Ok(None);
        }
        let n = self.count(operation)?;
        let mut index: c_int = 0;
        let mut flag: c_int = 1;
        let mut status = Status::empty();
        let rc = {
            let _gate = enter_with(self.pass(), operation)?;
            // SAFETY: `raw` holds `n` handles we own; MPI writes index, flag and status.
            unsafe {
                if block {
                    ffi::MPI_Waitany(
                        n,
                        self.memory.raw.as_mut_ptr(),
                        &mut index,
                        status.as_raw_mut(),
                    )
                } else {
                    ffi::MPI_Testany(
                        n,
                        self.memory.raw.as_mut_ptr(),
                        &mut index,
                        &mut flag,
                        status.as_raw_mut(),
                    )
                }
            }
        };
        if rc != ffi::MPI_SUCCESS {
            self.recount();
            check(rc, operation)?;
        }
        match usize::try_from(index) {
            Ok(i) if flag != 0 && index != ffi::MPI_UNDEFINED => {
                self.settle(1);
                Ok(Some((i, status)))
            }
            _ => Ok(None),
        }
    }

    /// Waits until at least one pending request completes (`MPI_Waitsome`), appending each
    /// completed one's `(index, status)` to `completed`; returns how many.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let (right, left) = ((rank + 1) % size, (rank + size - 1) % size);
    /// let out = [rank; 4];
    /// let mut got = [0i32; 4];
    /// let mut done = Vec::new();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.irecv(s, &mut got, left, 0)?);
    ///     set.push(world.isend(s, &out, right, 0)?);
    ///     while set.pending() > 0 {
    ///         set.wait_some(&mut done)?; // at least one more
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// assert_eq!(done.len(), 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn wait_some(&mut self, completed: &mut Vec<(usize, Status)>) -> Result<usize> {
        self.some("wait_some", true, completed)
    }

    /// Like [`wait_some`](RequestSet::wait_some) but returns at once (`MPI_Testsome`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut done = Vec::new();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.ibarrier(s)?);
    ///     while set.pending() > 0 {
    ///         set.test_some(&mut done)?; // possibly none
    ///     }
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// assert_eq!(done.len(), 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn test_some(&mut self, completed: &mut Vec<(usize, Status)>) -> Result<usize> {
        self.some("test_some", false, completed)
    }

    fn some(
        &mut self,
        operation: &'static str,
        block: bool,
        out: &mut Vec<(usize, Status)>,
    ) -> Result<usize> {
        if self.pending() == 0 {
            return Ok(0);
        }
        let n = self.count(operation)?;
        let pass = self.pass();
        let memory = &mut *self.memory;
        // A set in lent storage uses the scratch there (see `home`).
        let scratch = match self.home.as_deref_mut() {
            Some(home) => &mut home.scratch,
            None => &mut memory.scratch,
        };
        let scratch = scratch.get_or_insert_with(Box::default);
        scratch.indices.resize(memory.raw.len(), 0);
        scratch.statuses.resize(memory.raw.len(), Status::empty());
        let mut outcount: c_int = 0;
        let rc = {
            let _gate = enter_with(pass, operation)?;
            let (raw, idx, st) = (
                memory.raw.as_mut_ptr(),
                scratch.indices.as_mut_ptr(),
                scratch.statuses.as_mut_ptr().cast(),
            );
            // SAFETY: `raw`, `indices` and `statuses` hold `n` entries each.
            unsafe {
                if block {
                    ffi::MPI_Waitsome(n, raw, &mut outcount, idx, st)
                } else {
                    ffi::MPI_Testsome(n, raw, &mut outcount, idx, st)
                }
            }
        };
        let mut done = 0;
        if rc == ffi::MPI_SUCCESS {
            done = usize::try_from(outcount).unwrap_or(0); // MPI_UNDEFINED: nothing was pending
            for k in 0..done {
                let index = usize::try_from(scratch.indices[k]).expect("MPI returns valid indices");
                out.push((index, scratch.statuses[k]));
            }
        } else {
            self.recount();
            check(rc, operation)?;
        }
        self.settle(done);
        Ok(done)
    }

    /// Empties the set for reuse, keeping its capacity; completes pending requests first.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut set = ferrompi::RequestSet::new(s);
    ///     set.push(world.ibarrier(s)?);
    ///     set.clear()?; // completes what is pending, then forgets every request
    ///     assert!(set.is_empty());
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`].
    pub fn clear(&mut self) -> Result<()> {
        if self.pending() > 0 {
            self.wait_all()?;
        }
        self.memory.raw.clear();
        self.memory.receives.clear();
        self.repairs.clear();
        self.completed = 0;
        Ok(())
    }
}

impl Drop for RequestSet<'_> {
    /// Inlined, so a set dropped at the end of its batch costs the test of what is pending.
    #[inline(always)]
    fn drop(&mut self) {
        self.complete_on_drop();
        if self.home.is_none() {
            // SAFETY: the set is being dropped: `memory` is not used after this.
            unsafe { ManuallyDrop::drop(&mut self.memory) };
        }
        // Else the memory is the lent storage's (see `home`), which keeps it.
    }
}

impl RequestSet<'_> {
    /// Completes pending requests for a destructor: cancels receives, then waits for all.
    #[inline(always)]
    pub(crate) fn complete_on_drop(&mut self) {
        if self.pending() != 0 {
            self.complete_pending();
        }
    }

    /// The slow part of [`complete_on_drop`](Self::complete_on_drop), out of line so that the
    /// drop every batch inlines is the test.
    #[cold]
    #[inline(never)]
    fn complete_pending(&mut self) {
        let pass = self.pass();
        let memory = &mut *self.memory;
        complete_pending(&mut memory.raw, &memory.receives, pass);
        self.recount();
    }
}

/// A second header for the memory of `vec`, empty, with its capacity: the set's view of lent
/// storage (see `RequestSet::home`).
///
/// # Safety
/// The two headers name one allocation. From this call until one of them is forgotten (or
/// replaced and forgotten), at most one of them may be dropped, grown or shrunk, and `vec`'s
/// elements are read only through the header that wrote them.
#[inline(always)]
unsafe fn alias<T: Copy>(vec: &mut Vec<T>) -> Vec<T> {
    // SAFETY: the pointer and capacity are those of a live vector (or a dangling pointer with
    // capacity 0), and a length of 0 claims no element; the caller keeps the two headers from
    // both freeing or moving the memory.
    unsafe { Vec::from_raw_parts(vec.as_mut_ptr(), 0, vec.capacity()) }
}

/// Repairs the buffers of the completed requests among `repairs` (those whose handle in `raw`
/// is null); returns the rest.
#[inline(never)]
fn repair_completed(
    mut repairs: Vec<(usize, Repair)>,
    raw: &[ffi::MPI_Request],
) -> Vec<(usize, Repair)> {
    repairs.retain(|&(index, repair)| {
        if raw[index] == ffi::MPI_REQUEST_NULL {
            // SAFETY: the buffer is borrowed for 'scope, which has not ended.
            unsafe { repair.apply() };
            false
        } else {
            true
        }
    });
    repairs
}

/// How many handles in `raw` are not null.
#[cold]
#[inline(never)]
fn still_pending(raw: &[ffi::MPI_Request]) -> usize {
    raw.iter().filter(|&&r| r != ffi::MPI_REQUEST_NULL).count()
}

/// Completes the requests `raw` for a destructor: cancels the pending receives (at `receives`),
/// then waits for all. Errors cannot be reported from a destructor; a request whose completion
/// failed keeps its handle, and the caller counts it as still pending.
#[cold]
#[inline(never)]
fn complete_pending(raw: &mut [ffi::MPI_Request], receives: &[usize], pass: Option<Pass>) {
    for &index in receives {
        if raw[index] != ffi::MPI_REQUEST_NULL {
            let mut request = RawRequest {
                raw: raw[index],
                kind: Kind::Recv,
            };
            let _ = request.cancel("drop");
        }
    }
    let _ = wait_all_handles(raw, pass, "drop");
}

/// `MPI_Waitall` on the handles `raw`, statuses ignored: its return code, or the error of a
/// count over `int` or of the thread gate (then nothing was called). The gate is released
/// before the caller builds its result.
#[inline(always)]
fn wait_all_handles(
    raw: &mut [ffi::MPI_Request],
    pass: Option<Pass>,
    operation: &'static str,
) -> Result<c_int> {
    let n = crate::datatype::count_of::<c_int>(raw.len(), operation)?;
    let _gate = enter_with(pass, operation)?;
    // SAFETY: `raw` holds `n` handles we own (or MPI_REQUEST_NULL); statuses ignored.
    Ok(unsafe { ffi::MPI_Waitall(n, raw.as_mut_ptr(), ffi::MPI_STATUSES_IGNORE) })
}
