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
//! Here: the set, its storage and how requests join it. In `completion`: the waits and tests,
//! and what a dropped set completes.
//!
//! [`Communicator::isend_into`]: crate::Communicator::isend_into
//! [`Communicator::irecv_into`]: crate::Communicator::irecv_into

use super::{InFlight, Kind, RawRequest, Repair, Request, Scope};
use crate::Status;
use crate::ffi;
use crate::gate::Pass;
use std::ffi::c_int;
use std::mem::ManuallyDrop;

mod completion;

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
    #[inline]
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
        // Its repair, if any, is the scope's (see `Request::started`).
        let (raw, pending) = request.into_parts();
        let index = self.push_handle(raw);
        if !pending {
            self.completed += 1;
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
    #[inline]
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
    #[inline]
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
    #[inline]
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
