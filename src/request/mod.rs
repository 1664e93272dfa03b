//! Requests: nonblocking and persistent operations and their completion (MPI-4.0 §3.7–§3.9).
//!
//! # Why leaking a request is never undefined behaviour
//!
//! MPI reads or writes a nonblocking operation's buffer until the operation completes. Rust
//! cannot rely on a destructor to complete it, because `std::mem::forget` skips destructors. So
//! every buffer handed to a nonblocking operation is either
//!
//! - **owned** by the request ([`OwnedRequest`], [`PersistentRequest`]): the buffer is handed back
//!   on completion, and a leaked request leaks its buffer too, so the memory MPI uses is never
//!   freed or reused; or
//! - **borrowed for a [`scope`]** ([`Request`], [`RequestSet`]): like `std::thread::scope`, the
//!   buffers are borrowed until the scope ends. The scope counts operations in flight; dropping a
//!   request completes it (a receive is cancelled first, so drop does not wait for a message that
//!   may never come; a send waits). If a request was leaked and its operation is still in
//!   flight when the scope ends, the scope **aborts the job** instead of returning, because
//!   returning would let the buffers be freed while MPI may still write into them.
//!
//! A received buffer is repaired (see [`Equivalence`]) before any safe code can read it: an
//! owned or persistent request's when its operation completes, a scope's when the scope ends
//! (its buffers stay borrowed until then), so that a scoped request carries nothing for it. A
//! scope keeps its first few repairs in place: a scope with a `bool` receive allocates nothing.
//!
//! A leaked owned or persistent request is sound but not free: its operation is never completed
//! through ferrompi, and MPI may wait for it at `MPI_Finalize` (MPICH waits for a leaked pending
//! send forever). `Mpi`'s finalize warns of both: the operations of owned requests started and
//! not completed (counted per thread, without atomics, so threads still running at finalize
//! are not counted), and the persistent requests never freed (counted from their init to their
//! free, so their starts and waits count nothing).
//!
//! # Threads
//! Scoped requests stay on the thread of their scope (`!Send`); owned and persistent requests are
//! `Send` when their buffers are. Every MPI call passes the thread gate, as everywhere; the
//! operations of a [`scope`] (the starts of its point-to-point and collective operations, the
//! waits and tests of its [`Request`]s and [`RequestSet`]s) use the test the scope made on its
//! thread when it began.

mod owned;
mod owned_set;
pub(crate) mod persistent;
pub mod progress;
mod set;

pub use owned::{OwnedBlocks, OwnedBuffer, OwnedLayoutBlocks, OwnedRequest, OwnedView};
pub use owned_set::OwnedSet;
pub use persistent::{
    Active, ActiveAll, ActiveSet, Buffers, Internal, NoBuffer, Pair, Persistent, PersistentRequest,
    start_all,
};
pub use set::{RequestSet, RequestStorage};

use crate::Status;
use crate::datatype::Equivalence;
use crate::env::{enter, gated_with};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::gate::Pass;
use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What a request does with its buffer, which decides how it is completed on drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// MPI reads the buffer: drop waits for the send to complete.
    Send,
    /// MPI writes the buffer: drop cancels, then waits.
    Recv,
    /// A nonblocking collective: cannot be cancelled, drop waits.
    Collective,
    /// A file read: MPI writes the buffer, but the read cannot be cancelled; drop waits.
    Read,
}

/// A request handle with the calls every request kind needs.
#[derive(Debug)]
pub(crate) struct RawRequest {
    pub(crate) raw: ffi::MPI_Request,
    pub(crate) kind: Kind,
}

impl RawRequest {
    #[inline]
    pub(crate) fn is_null(&self) -> bool {
        self.raw == ffi::MPI_REQUEST_NULL
    }

    /// `MPI_Wait`. A nonblocking request becomes `MPI_REQUEST_NULL`; a persistent one inactive.
    #[inline(always)]
    pub(crate) fn wait(&mut self, operation: &'static str) -> Result<Status> {
        wait_handle(&mut self.raw, self.kind, None, operation)
    }

    /// `MPI_Test`: `Some(status)` once complete.
    pub(crate) fn test(&mut self, operation: &'static str) -> Result<Option<Status>> {
        let mut status = Status::empty();
        let done = test_handle(&mut self.raw, &mut status, None, operation)?;
        Ok(done.then_some(status))
    }

    /// `MPI_Request_get_status`: `Some(status)` once complete, leaving the request as it is
    /// (still to be completed).
    pub(crate) fn get_status(&self, operation: &'static str) -> Result<Option<Status>> {
        let mut status = Status::empty();
        let mut flag: c_int = 0;
        let _gate = enter(operation)?;
        // SAFETY: a request handle we own (or MPI_REQUEST_NULL, which reports complete with the
        // empty status); MPI writes the flag and the status and does not touch the request.
        let rc = unsafe { ffi::MPI_Request_get_status(self.raw, &mut flag, status.as_raw_mut()) };
        check(rc, operation)?;
        Ok((flag != 0).then_some(status))
    }

    /// `MPI_Cancel` of a receive. Cancelling sends is deprecated in MPI-4.0 and not offered.
    pub(crate) fn cancel(&mut self, operation: &'static str) -> Result<()> {
        if self.kind != Kind::Recv {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason:
                    "only receives can be cancelled (cancelling sends is deprecated in MPI-4.0)"
                        .into(),
            }
            .into());
        }
        if self.is_null() {
            return Ok(());
        }
        let _gate = enter(operation)?;
        // SAFETY: an active receive request we own; the request still has to be completed.
        let rc = unsafe { ffi::MPI_Cancel(&mut self.raw) };
        check(rc, operation)
    }

    /// Completes the operation for a destructor: cancels a receive, then waits. Errors cannot be
    /// reported from a destructor; if the wait itself fails the handle stays non-null and the
    /// caller must treat the operation as still in flight.
    pub(crate) fn finish(&mut self) {
        if self.kind == Kind::Recv {
            let _ = self.cancel("drop");
        }
        let _ = self.wait("drop");
    }
}

/// `MPI_Wait` on the handle at `raw` (a request's, or a copy of it: see [`Request::wait`]),
/// of an operation of `kind`. `pass` skips the thread gate's test for a caller holding one
/// (a scope's request, see [`Pass`]).
#[inline(always)]
fn wait_handle(
    raw: &mut ffi::MPI_Request,
    kind: Kind,
    pass: Option<Pass>,
    operation: &'static str,
) -> Result<Status> {
    // Each call is made behind the gate (`gated_with`: no lock flag to test after it on the
    // fast path), and its result is built after.
    // A collective's status says nothing (MPI-4.0 §6.12): MPI skips filling it in, and the
    // empty status is a constant, never a copy of memory MPI could have written.
    if kind == Kind::Collective {
        let rc = gated_with(
            pass,
            operation,
            #[inline(always)]
            || {
                // SAFETY: `raw` is a request handle the caller owns (or MPI_REQUEST_NULL,
                // which returns at once); MPI_STATUS_IGNORE is a constant.
                unsafe { ffi::MPI_Wait(raw, ffi::MPI_STATUS_IGNORE) }
            },
        )?;
        return check(rc, operation).map(|()| Status::empty());
    }
    let mut status = Status::empty();
    let rc = gated_with(
        pass,
        operation,
        #[inline(always)]
        || {
            // SAFETY: as above; MPI fills in `status`.
            unsafe { ffi::MPI_Wait(raw, status.as_raw_mut()) }
        },
    )?;
    check(rc, operation)?;
    Ok(status)
}

/// `MPI_Test` on the handle at `raw`, as [`wait_handle`]: `Some(status)` once complete.
#[inline(always)]
fn test_handle(
    raw: &mut ffi::MPI_Request,
    status: &mut Status,
    pass: Option<Pass>,
    operation: &'static str,
) -> Result<bool> {
    let mut flag: c_int = 0;
    // As in `wait_handle`.
    let rc = gated_with(
        pass,
        operation,
        #[inline(always)]
        || {
            // SAFETY: as for `wait_handle`; writes the handle, the flag and the status (plain
            // integers: whatever MPI leaves there when the flag is 0 is still a valid `Status`).
            unsafe { ffi::MPI_Test(raw, &mut flag, status.as_raw_mut()) }
        },
    )?;
    check(rc, operation)?;
    Ok(flag != 0)
}

/// Runs once after an operation completes (type-erased): repairs a received buffer (for
/// `bool`), or copies a large-count result out of a temporary (see `comm::large`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Repair {
    apply: unsafe fn(*mut u8, usize),
    ptr: *mut u8,
    len: usize,
}

unsafe fn repair_erased<T: Equivalence>(ptr: *mut u8, len: usize) {
    // SAFETY: `Repair::for_slice` built `ptr`/`len` from a `&mut [T]` that is still exclusively
    // borrowed (scope) or owned (request) when this runs.
    unsafe { T::repair_received(ptr.cast(), len) }
}

impl Repair {
    /// `None` for the types that need no repair, so they pay nothing.
    pub(crate) fn for_slice<T: Equivalence>(buf: &mut [T]) -> Option<Repair> {
        T::NEEDS_REPAIR.then(|| Repair {
            apply: repair_erased::<T>,
            ptr: buf.as_mut_ptr().cast(),
            len: buf.len(),
        })
    }

    /// Any completion action: `apply(ptr, len)`.
    ///
    /// # Safety
    /// Calling `apply(ptr, len)` once the operation has completed must be sound for as long as
    /// the request's scope lasts.
    pub(crate) unsafe fn on_completion(apply: unsafe fn(*mut u8, usize), ptr: *mut u8) -> Repair {
        Repair { apply, ptr, len: 0 }
    }

    /// # Safety
    /// The buffer this was made from must still be valid and not otherwise borrowed.
    pub(crate) unsafe fn apply(self) {
        // SAFETY: per the contract.
        unsafe { (self.apply)(self.ptr, self.len) }
    }
}

/// The count of operations in flight in a scope, the scope's pass of the thread gate, and
/// what the scope does when it ends. Invariant in `'scope`, so a request can only ever be
/// accounted in the scope that created it.
#[derive(Debug)]
pub(crate) struct InFlight<'scope> {
    /// Dropped first when the scope ends: aborts if an operation is still in flight.
    count: Count,
    /// Whether this thread passed the thread gate's fast path when the scope began. Every call
    /// made through the scope then skips the per-call test: the starts of its operations and
    /// the completions of its [`Request`]s and [`RequestSet`]s, which reach this through their
    /// `&InFlight` (see [`Pass`] for why that holds for the whole scope, and for each of them:
    /// none can leave the scope's thread or outlive the scope).
    pub(crate) pass: Option<Pass>,
    /// Dropped after `count`, once every operation has completed: the repairs, then what the
    /// scope keeps.
    at_end: AtEnd,
    _invariant: PhantomData<fn(&'scope ()) -> &'scope ()>,
}

impl InFlight<'_> {
    #[inline]
    pub(crate) fn started(&self) {
        self.count.0.set(self.count.0.get() + 1);
    }

    #[inline]
    pub(crate) fn completed(&self, n: usize) {
        self.count.0.set(self.count.0.get() - n);
    }

    /// Applies `repair` when the scope ends, after every operation has completed and before
    /// its buffers can be read again (they are borrowed for the scope); see [`Repair`].
    #[cold]
    #[inline(never)]
    pub(crate) fn repair_at_end(&self, repair: Repair) {
        self.at_end.repair(repair);
    }
}

/// Repairs a scope keeps in place: a scope with no more `bool`-like receives than this
/// allocates nothing for them.
const REPAIRS_IN_PLACE: usize = 4;

/// What a scope does when it ends (see [`InFlight`]): its first repairs, in place, then an
/// [`Ending`] on the heap (`Box::into_raw`, owned here) for more repairs and what it keeps.
pub(crate) struct AtEnd {
    /// The first `len` are initialised.
    repairs: UnsafeCell<[MaybeUninit<Repair>; REPAIRS_IN_PLACE]>,
    len: Cell<usize>,
    /// Null until the scope needs it.
    more: Cell<*mut Ending>,
}

impl AtEnd {
    /// Nothing to do yet. Made at run time, not a `const`: a constant's uninitialised array
    /// would be stored as zeros at every scope's start.
    #[inline(always)]
    fn new() -> AtEnd {
        AtEnd {
            repairs: UnsafeCell::new([const { MaybeUninit::uninit() }; REPAIRS_IN_PLACE]),
            len: Cell::new(0),
            more: Cell::new(std::ptr::null_mut()),
        }
    }

    /// Applies `repair` when the scope ends (see [`InFlight::repair_at_end`]).
    fn repair(&self, repair: Repair) {
        let len = self.len.get();
        if len < REPAIRS_IN_PLACE {
            // SAFETY: `len` is in bounds; no reference into the array exists (none is ever
            // made but here and in the drop, and a scope is used by one thread: `!Sync`).
            unsafe { (*self.repairs.get())[len].write(repair) };
            self.len.set(len + 1);
        } else {
            self.with(|ending| ending.repairs.push(repair));
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Ending) -> R) -> R {
        if self.more.get().is_null() {
            self.more.set(Box::into_raw(Box::default()));
        }
        // SAFETY: made by `Box::into_raw` above, owned by `self`, freed only by its drop;
        // `f` cannot reach `self` (a private field), so this is the only reference.
        f(unsafe { &mut *self.more.get() })
    }
}

impl Drop for AtEnd {
    /// Inlined as a test of the count and the pointer (zero and null unless the scope needed
    /// them); the work out of line, on copies, so that no pointer into the scope leaves it.
    #[inline(always)]
    fn drop(&mut self) {
        let (len, more) = (self.len.get(), self.more.get());
        // One test of both.
        if len | more.addr() != 0 {
            // SAFETY: the first `len` repairs are initialised (`repair`), and `Repair` is `Copy`.
            let first = unsafe { *self.repairs.get() };
            end(first, len, more);
        }
    }
}

/// What [`AtEnd`] does when the scope ends: the repairs kept in place, in the order their
/// operations started, then what is on the heap (its repairs, then what it keeps).
#[cold]
#[inline(never)]
fn end(first: [MaybeUninit<Repair>; REPAIRS_IN_PLACE], len: usize, more: *mut Ending) {
    for repair in &first[..len] {
        // SAFETY: the first `len` are initialised; every operation of the scope has completed
        // (the count was zero) and the buffers are still borrowed for the scope, which is
        // ending.
        unsafe { repair.assume_init().apply() };
    }
    if !more.is_null() {
        // SAFETY: made by `Box::into_raw` in `AtEnd::with`, dropped once, here.
        drop(unsafe { Box::from_raw(more) });
    }
}

impl std::fmt::Debug for AtEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AtEnd")
    }
}

/// The repairs a scope makes when it ends, and what it keeps until then.
#[derive(Default)]
struct Ending {
    /// Repairs of received buffers and copies out of temporaries (see [`Repair`]), in the
    /// order their operations started.
    repairs: Vec<Repair>,
    /// What MPI reads until an operation completes but no buffer holds (see [`Scope::keep`]).
    kept: KeptList,
}

impl Drop for Ending {
    /// Applies the repairs; what is kept drops after, as copies out of it are among them.
    fn drop(&mut self) {
        for repair in self.repairs.drain(..) {
            // SAFETY: every operation of the scope has completed (the count was zero), and
            // the buffers are still borrowed for the scope, which is ending.
            unsafe { repair.apply() };
        }
    }
}

/// A scope for nonblocking operations on borrowed buffers; see [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    /// The operations in flight, the scope's pass of the thread gate, and what is kept until
    /// the scope ends: the count arrays and datatypes of the large-count paths
    /// (`comm::large`), dropped after every operation has completed.
    pub(crate) in_flight: InFlight<'scope>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl Scope<'_, '_> {
    /// Keeps `value` alive, at the address returned, until the scope ends, when every
    /// operation started in it has completed. Its heap storage does not move either, so
    /// pointers into it stay valid until then.
    pub(crate) fn keep<T: 'static>(&self, value: T) -> *mut T {
        let at = Box::into_raw(Box::new(value));
        self.in_flight
            .at_end
            .with(|ending| ending.kept.push(Box::new(Kept(at))));
        at
    }
}

/// What a scope keeps (see [`Scope::keep`]).
type KeptList = Vec<Box<dyn Any>>;

/// Owns a value [`Scope::keep`] placed on the heap; only raw pointers reach it meanwhile.
struct Kept<T>(*mut T);

impl<T> Drop for Kept<T> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `Scope::keep`, dropped once, when the scope ends.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

/// Runs `f` with a [`Scope`] in which nonblocking operations may borrow buffers from outside it.
///
/// Every operation started in the scope is complete when `scope` returns: requests complete on
/// `wait`, on drop, or in a [`RequestSet`]. If one was leaked with `mem::forget` and is still in
/// flight, the job is aborted (`MPI_Abort`) rather than letting its buffer be freed under MPI.
///
/// ```no_run
/// # use ferrompi::Mpi;
/// # let mpi = Mpi::init()?;
/// let world = mpi.world();
/// let (next, prev) = ((world.rank() + 1) % world.size(), (world.rank() + world.size() - 1) % world.size());
/// let send = vec![1.0f64; 1024];
/// let mut recv = vec![0.0f64; 1024];
/// ferrompi::scope(|s| -> ferrompi::Result<()> {
///     let r = world.irecv(s, &mut recv, prev, 0)?;
///     let w = world.isend(s, &send, next, 0)?;
///     w.wait()?;
///     r.wait()?;
///     Ok(())
/// })?;
/// assert_eq!(recv[0], 1.0);
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[inline(always)]
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let scope = Scope {
        in_flight: InFlight {
            count: Count(Cell::new(0)),
            pass: crate::gate::pass_here(),
            at_end: AtEnd::new(),
            _invariant: PhantomData,
        },
        _env: PhantomData,
    };
    // The closure's result is the scope's, written where the caller wants it; `scope` drops
    // after, and its drop aborts if an operation is still in flight (also while unwinding).
    f(&scope)
}

/// The count of a scope's operations in flight. Its drop, when the scope ends (before what
/// the scope keeps drops, also while unwinding), aborts if an operation is still in flight.
#[derive(Debug)]
pub(crate) struct Count(Cell<usize>);

impl Drop for Count {
    /// Inlined as a test of the count (zero unless a request was leaked); the abort out of
    /// line.
    #[inline]
    fn drop(&mut self) {
        let n = self.0.get();
        if n != 0 {
            leaked_in_flight(n);
        }
    }
}

/// A scope ends with `n` leaked operations still in flight: abort, before their buffers are
/// freed while MPI uses them.
#[cold]
fn leaked_in_flight(n: usize) -> ! {
    eprintln!(
        "ferrompi: {n} nonblocking operation(s) leaked (mem::forget) and still in flight at \
         the end of their scope; aborting so their buffers are not freed while MPI uses them"
    );
    crate::fault::abort_world(102)
}

/// A nonblocking operation on a buffer borrowed for a [`scope`].
///
/// Complete it with [`wait`](Request::wait), [`test`](Request::test), `.await`, or by pushing it
/// into a [`RequestSet`]. Dropping a pending request completes it: a receive is cancelled first.
#[must_use = "dropping a request waits for it (and cancels a receive)"]
#[derive(Debug)]
pub struct Request<'scope> {
    raw: RawRequest,
    in_flight: &'scope InFlight<'scope>,
    pending: bool,
    /// Whether a `test` saw the operation complete, and `status` is what it saw.
    tested: bool,
    /// The status a successful `test` saw, for a later `wait`; the empty status until then
    /// (a plain value, not an `Option`: moving a request then copies no undefined bytes).
    status: Status,
}

impl<'scope> Request<'scope> {
    /// A request MPI just started, counted in its scope; `repair` (if any) is applied when
    /// the scope ends, after the operation has completed and before its buffer can be read.
    #[inline(always)]
    pub(crate) fn started(
        raw: RawRequest,
        repair: Option<Repair>,
        in_flight: &'scope InFlight<'scope>,
    ) -> Self {
        in_flight.started();
        if let Some(repair) = repair {
            in_flight.repair_at_end(repair);
        }
        Request {
            // Field by field: a copy of the whole `RawRequest` would copy its padding too.
            raw: RawRequest {
                raw: raw.raw,
                kind: raw.kind,
            },
            in_flight,
            pending: true,
            tested: false,
            status: Status::empty(),
        }
    }

    /// After a failed wait or test: accounts for the operation if MPI completed it (nulled the
    /// handle); a later `wait` then reports the empty status, as `MPI_Wait` on a null handle.
    #[inline(always)]
    fn settle(&mut self) {
        if self.pending && self.raw.is_null() {
            self.completed();
            self.tested = true;
        }
    }

    /// Accounts for an operation that completed: a successful `MPI_Wait`, or an `MPI_Test`
    /// that said so, completes it (MPI-4.0 §3.7.3), whatever the handle then holds. Only for
    /// a pending request: one that no `test` has seen complete (`!tested` implies `pending`).
    #[inline(always)]
    fn completed(&mut self) {
        self.pending = false;
        self.in_flight.completed(1);
    }

    /// Blocks until the operation completes (`MPI_Wait`, MPI-4.0 §3.7.3).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let mut got = [0u8];
    /// ferrompi::scope(|s| {
    ///     let receiving = world.irecv(s, &mut got, me, 0)?;
    ///     world.send(&[1u8], me, 0)?;
    ///     let status = receiving.wait()?; // MPI_Wait
    ///     assert_eq!(status.count::<u8>()?, 1);
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`] (e.g. [`ErrorClass::Truncate`](crate::ErrorClass::Truncate) for a receive
    /// buffer too small); [`ErrorKind::WrongThread`].
    #[inline(always)]
    pub fn wait(self) -> Result<Status> {
        // No drop glue on the way out: a completed request has nothing left to do, and a
        // failed one is completed here, as a drop would. Nothing takes the request's address
        // on the way, so the compiler can keep it in registers from its start to its wait.
        let mut this = std::mem::ManuallyDrop::new(self);
        if this.tested {
            // A `test` saw it complete: nothing is pending.
            return Ok(this.status);
        }
        // MPI writes the handle through a copy, stored back after: nothing takes the request's
        // address, so the compiler can keep it in registers from its start to its wait.
        let mut handle = this.raw.raw;
        let result = wait_handle(&mut handle, this.raw.kind, this.in_flight.pass, "wait");
        this.raw.raw = handle;
        match result {
            Ok(status) => {
                this.completed();
                Ok(status)
            }
            Err(e) => {
                // Accounted for if MPI completed it; otherwise completed as a drop does.
                this.settle();
                if this.pending {
                    this.finish_pending();
                }
                Err(e)
            }
        }
    }

    /// Whether the operation has completed, without blocking (`MPI_Test`, MPI-4.0 §3.7.3).
    /// Once it returns `Some`, the request is done and `wait` returns the same status.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut arrived = world.ibarrier(s)?;
    ///     while arrived.test()?.is_none() {} // MPI_Test: never blocks
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Request::wait`].
    #[inline(always)]
    pub fn test(&mut self) -> Result<Option<Status>> {
        if self.tested {
            return Ok(Some(self.status));
        }
        // Through a copy of the handle, as in `wait`.
        let mut handle = self.raw.raw;
        let mut status = Status::empty();
        let result = test_handle(&mut handle, &mut status, self.in_flight.pass, "test");
        self.raw.raw = handle;
        match result {
            Ok(true) => {
                self.completed();
                (self.tested, self.status) = (true, status);
                Ok(Some(status))
            }
            Ok(false) => Ok(None),
            Err(e) => {
                self.settle();
                Err(e)
            }
        }
    }

    /// Requests cancellation of a pending receive (`MPI_Cancel`, MPI-4.0 §3.8.4); it still has to
    /// be completed, and [`Status::cancelled`] says whether it was cancelled.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut never = [0u8];
    /// ferrompi::scope(|s| {
    ///     let mut receiving = world.irecv(s, &mut never, world.rank(), 99)?; // nothing is sent
    ///     receiving.cancel()?;
    ///     let status = receiving.wait()?; // completes, cancelled
    ///     assert!(status.cancelled()?);
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a send; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn cancel(&mut self) -> Result<()> {
        self.raw.cancel("cancel")
    }

    /// Whether the operation has completed, and its status, without completing the request
    /// (`MPI_Request_get_status`, MPI-4.0 §3.7.3): unlike [`test`](Request::test) it leaves the
    /// request to be completed later, e.g. by a [`RequestSet`] it is in afterwards. The buffer
    /// stays borrowed until then. `&mut`, like `test`: one thread at a time asks MPI about a
    /// request.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut arrived = world.ibarrier(s)?;
    ///     while arrived.get_status()?.is_none() {} // MPI_Request_get_status: peeks, frees nothing
    ///     arrived.wait()?;
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn get_status(&mut self) -> Result<Option<Status>> {
        if self.tested {
            return Ok(Some(self.status));
        }
        self.raw.get_status("request_get_status")
    }

    /// Whether the operation is still in flight.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let mut arrived = world.ibarrier(s)?;
    ///     while arrived.test()?.is_none() {}
    ///     assert!(!arrived.is_pending());
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn is_pending(&self) -> bool {
        self.pending
    }

    /// Hands the handle to a [`RequestSet`], which takes over completing it: the handle and
    /// whether the operation is still pending.
    #[inline]
    pub(crate) fn into_parts(self) -> (RawRequest, bool) {
        let this = std::mem::ManuallyDrop::new(self);
        (
            RawRequest {
                raw: this.raw.raw,
                kind: this.raw.kind,
            },
            this.pending,
        )
    }
}

impl Drop for Request<'_> {
    /// Inlined as a test of `pending` (false after `wait`), the completion out of line.
    #[inline]
    fn drop(&mut self) {
        if self.pending {
            self.finish_pending();
        }
    }
}

impl Request<'_> {
    /// Completes a pending request that is dropped (see `RawRequest::finish`). The call out
    /// of line takes the request's parts as scalars, never its address, and is small enough
    /// to inline where a request drops while unwinding: a request the compiler keeps in
    /// registers stays there on every path.
    #[inline(always)]
    fn finish_pending(&self) {
        finish_pending(self.raw.raw, self.raw.kind, self.in_flight);
    }
}

/// See [`Request::finish_pending`].
#[inline(never)]
fn finish_pending(raw: ffi::MPI_Request, kind: Kind, in_flight: &InFlight) {
    let mut request = RawRequest { raw, kind };
    request.finish();
    if request.is_null() {
        in_flight.completed(1);
    }
}

impl std::future::Future for Request<'_> {
    type Output = Result<Status>;

    /// Tests the request; while it is pending, the progress ticker wakes the task again shortly
    /// (see [`progress`](mod@crate::request::progress)).
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        progress::poll_tested(self.get_mut().test(), cx)
    }
}
