//! General RMA windows (MPI-4.0 §12.2–§12.5): [`Window`], and the epochs in which its
//! one-sided calls run ([`WindowEpoch`]).
//!
//! ```no_run
//! # use ferrompi::{Mpi, window::{Assert, Window}};
//! let mpi = Mpi::init()?;
//! let world = mpi.world();
//! let (rank, size) = (world.rank(), world.size());
//! // Every rank exposes 4 values; rank r writes its rank into slot r % 4 of its right neighbour.
//! let win = Window::<i64>::allocate(&world, 4)?;
//! let mine = [i64::from(rank)];
//! win.fence(Assert::empty(), |epoch| epoch.put(&mine, (rank + 1) % size, (rank % 4) as usize))??;
//! let mut seen = [0i64; 4];
//! win.fence(Assert::empty(), |epoch| epoch.get(&mut seen, rank, 0))??;
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! Each epoch is a closure: [`fence`](Window::fence), [`access`](Window::access)
//! (`MPI_Win_start`/`complete`), [`lock`](Window::lock), [`lock_all`](Window::lock_all). The
//! buffers its calls read or write are borrowed from outside the closure, and the epoch is
//! complete (the closing fence, `MPI_Win_complete`, `MPI_Win_unlock`) before the call returns,
//! so a buffer comes back only once MPI is done with it. Results of `get` are in the buffer
//! once the epoch method returns (or after a `flush` in passive epochs). The target side of
//! post/start/complete/wait is [`expose`](Window::expose).

use super::target::{Calls, Layout, RequestCall, operand, single_element};
use super::{Assert, LockType, RawWindow, disp_unit, window_bytes};
use crate::comm::Communicator;
use crate::comm::group::Group;
use crate::datatype::{Equivalence, recv_ptr};
use crate::env::enter;
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::info::Info;
use crate::op::{AccumulateOp, Bitwise};
use crate::request::{Request, Scope};
use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

/// No access epoch is open.
const IDLE: u8 = 0;
/// An access epoch (fence, start, lock, lock_all) is open.
const ACCESS: u8 = 1;
/// Bit: an exposure epoch (post) is open.
const EXPOSED: u8 = 2;
/// Bit: the last fence left a fence epoch open for the next one.
const FENCE_OPEN: u8 = 4;

/// Where the window's local memory came from, and who frees it.
enum Storage<T> {
    /// `MPI_Win_allocate`: MPI frees it with the window.
    Mpi,
    /// `MPI_Win_create` over a vector the window owns.
    Owned(Vec<T>),
    /// `MPI_Win_create` over a slice borrowed for [`Window::with_buffer`].
    Borrowed,
}

/// An RMA window of `T` values on every process of a communicator (MPI-4.0 §12.2).
///
/// The local memory is never referenced by Rust while the window exists (see the
/// [module docs](super)); read and write it with RMA calls to your own rank, or take it back
/// with [`into_vec`](Window::into_vec). Freed (collectively) on drop.
pub struct Window<'c, T: Equivalence> {
    win: RawWindow<'c>,
    layout: Layout,
    storage: Storage<T>,
    rank: c_int,
    state: AtomicU8,
    _comm: PhantomData<&'c Communicator<'c>>,
}

impl<T: Equivalence> std::fmt::Debug for Window<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Window")
            .field("type", &std::any::type_name::<T>())
            .field("lens", &self.layout.lens)
            .finish()
    }
}

impl<'c, T: Equivalence> Window<'c, T> {
    /// Every bit pattern MPI may write must be a valid `T`: no `bool` windows.
    const VALID_FOR_ANY_BYTES: () = assert!(
        !T::NEEDS_REPAIR,
        "a Window's element type must be valid for every bit pattern"
    );

    /// `MPI_Win_allocate` (MPI-4.0 §12.2.2): `len` zeroed values of memory MPI allocates, on
    /// each process. Collective; lengths may differ between ranks (zero too).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero-sized `T`; [`Error::CountOverflow`];
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn allocate(comm: &'c Communicator<'_>, len: usize) -> Result<Self> {
        Self::allocate_with_info(comm, len, None)
    }

    /// [`allocate`](Window::allocate) with hints (e.g. `accumulate_ops`, `same_size`).
    ///
    /// # Errors
    /// As [`Window::allocate`].
    pub fn allocate_with_info(
        comm: &'c Communicator<'_>,
        len: usize,
        info: Option<&Info<'_>>,
    ) -> Result<Self> {
        Self::allocate_init(comm, len, info, None)
    }

    /// `MPI_Win_allocate` of `len` values, zeroed or copied from `init` (of that length).
    fn allocate_init(
        comm: &'c Communicator<'_>,
        len: usize,
        info: Option<&Info<'_>>,
        init: Option<&[T]>,
    ) -> Result<Self> {
        const OP: &str = "win_allocate";
        let () = Self::VALID_FOR_ANY_BYTES;
        let unit = disp_unit::<T>(OP)?;
        let mut bytes = window_bytes::<T>(len, OP)?;
        if crate::env::mpich_before((5, 0)) {
            // MPICH 4.0.2 puts into the wrong process's memory when a window's size is not a
            // multiple of 16 bytes (reproduced in C; MPICH 5.0 is right). The padding is never
            // reachable: accesses are checked against `len`.
            bytes = bytes.saturating_add(15) & !15;
        }
        let (win, base) =
            RawWindow::allocate(ffi::MPI_Win_allocate, bytes, unit, info, comm, OP, |_| {
                Ok(())
            })?;
        let base = base.cast::<T>();
        if len > 0 {
            // SAFETY: MPI allocated `len` values here; nothing else can reach them yet
            // (remote RMA needs an epoch, which needs this call to return); any byte pattern
            // is a valid `T`, so zero is; `init` has `len` values.
            unsafe {
                match init {
                    Some(values) => std::ptr::copy_nonoverlapping(values.as_ptr(), base, len),
                    None => std::ptr::write_bytes(base, 0, len),
                }
            }
        }
        Self::finish(comm, win, len, Storage::Mpi, OP)
    }

    /// `MPI_Win_create` (MPI-4.0 §12.2.1) over a vector the window owns, handed back by
    /// [`into_vec`](Window::into_vec). Collective.
    ///
    /// # Errors
    /// As [`Window::allocate`].
    pub fn from_vec(comm: &'c Communicator<'_>, mut data: Vec<T>) -> Result<Self> {
        let () = Self::VALID_FOR_ANY_BYTES;
        // SAFETY: the vector moves into the window, which never reads or writes it through
        // Rust while the window exists and frees the window before giving it back; a leaked
        // window leaks the vector.
        match unsafe { Self::create(comm, &mut data)? } {
            Some(win) => Self::finish(comm, win, data.len(), Storage::Owned(data), "win_create"),
            None => Self::allocate_init(comm, data.len(), None, Some(&data)),
        }
    }

    /// `MPI_Win_create` over `buf`, exclusively borrowed while `body` runs with the window;
    /// the window is freed (collectively) before this returns, and `buf` then holds what the
    /// epochs left in it. A panic in `body` ends the job, since remote processes may still
    /// write `buf`.
    ///
    /// # Errors
    /// As [`Window::allocate`], and errors freeing the window; `body`'s own result is inside.
    pub fn with_buffer<R>(
        comm: &Communicator<'_>,
        buf: &mut [T],
        body: impl FnOnce(&Window<'_, T>) -> R,
    ) -> Result<R> {
        let () = Self::VALID_FOR_ANY_BYTES;
        let len = buf.len();
        // SAFETY: `buf` stays exclusively borrowed until the window is freed below; if it
        // cannot be, the job is aborted before `buf` is given back.
        let window = match unsafe { Window::<T>::create(comm, buf)? } {
            Some(win) => Window::finish(comm, win, len, Storage::Borrowed, "win_create")?,
            None => Window::allocate_init(comm, len, None, Some(buf))?,
        };
        let abort_guard = super::AbortOnUnwind("a window over a borrowed buffer");
        let result = body(&window);
        let freed = match window.storage {
            Storage::Borrowed => window.free(),
            // The stand-in window: once every process is done with its epochs, copy back.
            _ => comm
                .barrier()
                .and_then(|()| window.into_vec())
                .map(|values| buf.copy_from_slice(&values)),
        };
        if let Err(e) = freed {
            eprintln!("ferrompi: freeing a window over a borrowed buffer failed ({e})");
            crate::env::abort_world(103);
        }
        std::mem::forget(abort_guard);
        Ok(result)
    }

    /// `MPI_Win_create` over `buf`; `None` where Open MPI 4.1 cannot create windows over
    /// user memory with its single-copy mechanism off (which ferrompi does, see
    /// [`env`](mod@crate::env)): its `osc/ucx` component fails with `MPI_ERR_WIN` on every
    /// rank alike. The caller then allocates a window and copies instead.
    ///
    /// # Safety
    /// `buf` must not be read or written through Rust, nor freed, until the window is freed.
    unsafe fn create(comm: &Communicator<'_>, buf: &mut [T]) -> Result<Option<RawWindow<'c>>> {
        const OP: &str = "win_create";
        let unit = disp_unit::<T>(OP)?;
        let bytes = window_bytes::<T>(buf.len(), OP)?;
        let _gate = enter(OP)?;
        let mut raw = super::win_null();
        // SAFETY: `buf` holds `bytes` bytes, reserved for MPI per the caller.
        let rc = unsafe {
            ffi::MPI_Win_create(
                recv_ptr(buf),
                bytes,
                unit,
                crate::info::info_null(),
                comm.as_raw(),
                &mut raw,
            )
        };
        match check(rc, OP) {
            Err(e)
                if e.class() == Some(crate::ErrorClass::Win)
                    && crate::env::running(crate::Implementation::OpenMpi) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
            Ok(()) => RawWindow::adopt(raw, OP).map(Some),
        }
    }

    /// Learns every rank's length (one allgather), for the bounds checks.
    fn finish(
        comm: &Communicator<'_>,
        win: RawWindow<'c>,
        len: usize,
        storage: Storage<T>,
        operation: &'static str,
    ) -> Result<Self> {
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let mut lens = vec![0u64; size];
        comm.allgather(&[len as u64], &mut lens)
            .map_err(|e| rename(e, operation))?;
        Ok(Window {
            win,
            layout: Layout {
                lens: lens.into_iter().map(|n| n as usize).collect(),
                scale: 1,
                rank0_offset: 0,
            },
            storage,
            rank: comm.rank(),
            state: AtomicU8::new(IDLE),
            _comm: PhantomData,
        })
    }

    /// The number of values in `rank`'s window; `None` for a rank outside the communicator.
    pub fn len_of(&self, rank: i32) -> Option<usize> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.layout.lens.get(r).copied())
    }

    /// The number of values in this process's window.
    pub fn local_len(&self) -> usize {
        self.len_of(self.rank).unwrap_or(0)
    }

    /// The hints MPI uses for the window (`MPI_Win_get_info`, MPI-4.0 §12.2.7).
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn info(&self) -> Result<Info<'c>> {
        self.win.info()
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    pub fn as_raw(&self) -> ffi::MPI_Win {
        self.win.raw
    }

    /// Frees the window (`MPI_Win_free`, collective), reporting errors; dropping it does the
    /// same silently.
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`] (e.g. an exposure epoch still open).
    pub fn free(mut self) -> Result<()> {
        self.win.free()
    }

    /// Frees the window and gives back this process's values: the vector of
    /// [`from_vec`](Window::from_vec), or a copy of MPI's memory for
    /// [`allocate`](Window::allocate) (read with a `get` under a lock on itself first).
    /// Collective.
    ///
    /// # Errors
    /// As [`Window::free`]; [`Error::InvalidArgument`] for a window over a borrowed buffer.
    pub fn into_vec(mut self) -> Result<Vec<T>> {
        let rank = self.rank;
        let len = self.local_len();
        match std::mem::replace(&mut self.storage, Storage::Borrowed) {
            Storage::Owned(data) => {
                self.win.free()?;
                Ok(data)
            }
            Storage::Mpi => {
                let mut out = vec![zeroed::<T>(); len];
                self.lock(LockType::Shared, rank, Assert::empty(), |e| {
                    e.get(&mut out, rank, 0)
                })??;
                self.win.free()?;
                Ok(out)
            }
            Storage::Borrowed => Err(Error::InvalidArgument {
                operation: "into_vec",
                reason: "the window is over a borrowed buffer, which with_buffer gives back".into(),
            }),
        }
    }

    /// Opens an access epoch of `kind` after checking none is open on this process.
    fn begin(&self, kind: EpochKind, operation: &'static str) -> Result<()> {
        let state = self.state.load(Ordering::Acquire);
        let exposed = state & EXPOSED != 0;
        let busy = state & ACCESS != 0 || (exposed && kind == EpochKind::Fence);
        if busy
            || self
                .state
                .compare_exchange(state, state | ACCESS, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return Err(Error::EpochMisuse {
                operation,
                reason: "another epoch is open on this window in this process".into(),
            });
        }
        Ok(())
    }

    /// Runs `body` in the epoch `kind`, then closes it with `close`, whatever `body` returns.
    fn epoch<'buf, R>(
        &self,
        kind: EpochKind,
        open: impl FnOnce() -> c_int,
        close: impl FnOnce() -> c_int,
        names: (&'static str, &'static str),
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        self.begin(kind, names.0)?;
        let opened = {
            let gate = enter(names.0);
            // SAFETY (of the call in `open`): a valid window; the caller's open call.
            gate.and_then(|_gate| check(open(), names.0))
        };
        if let Err(e) = opened {
            self.state.fetch_and(!ACCESS, Ordering::AcqRel);
            return Err(e);
        }
        let epoch = WindowEpoch {
            calls: Calls { win: self.win.raw },
            layout: &self.layout,
            kind,
            _buf: PhantomData,
        };
        let abort_guard = super::AbortOnUnwind("an RMA epoch");
        let result = body(&epoch);
        let closed = enter(names.1).and_then(|_gate| check(close(), names.1));
        std::mem::forget(abort_guard);
        self.state.fetch_and(!ACCESS, Ordering::AcqRel);
        match closed {
            Ok(()) => Ok(result),
            Err(e) => {
                // The epoch may still be open and MPI may still use the buffers, which the
                // caller would get back: end the job instead (MPI failing to close an epoch
                // whose calls all passed the checks is not an input error).
                eprintln!("ferrompi: closing an RMA epoch failed ({e}); aborting");
                crate::env::abort_world(103)
            }
        }
    }

    /// A fence epoch (`MPI_Win_fence`, MPI-4.0 §12.5.1): every process calls it; `body`'s RMA
    /// calls are complete everywhere when it returns. One fence per epoch, as in C: the fence
    /// closing an epoch opens the next, and the first one opens with `MPI_MODE_NOPRECEDE`.
    /// `assert` goes to the closing fence.
    ///
    /// # Errors
    /// [`Error::EpochMisuse`] if another epoch is open on this process; [`Error::WrongThread`];
    /// [`Error::Mpi`] from opening the epoch. The calls inside return their own errors to
    /// `body`. If MPI fails to *close* the epoch the job is aborted with the error's message,
    /// since MPI may still be using the buffers.
    pub fn fence<'buf, R>(
        &self,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        let was_open = self.state.load(Ordering::Acquire) & FENCE_OPEN != 0;
        let result = self.epoch(
            EpochKind::Fence,
            || {
                if was_open {
                    ffi::MPI_SUCCESS
                } else {
                    // SAFETY: a valid window; opens the fence epoch.
                    unsafe { ffi::MPI_Win_fence(Assert::NOPRECEDE.bits(), win) }
                }
            },
            // SAFETY: a valid window in a fence epoch.
            || unsafe { ffi::MPI_Win_fence(assert.bits(), win) },
            ("win_fence", "win_fence"),
            body,
        );
        if result.is_ok() && !assert.contains(Assert::NOSUCCEED) {
            self.state.fetch_or(FENCE_OPEN, Ordering::AcqRel);
        } else {
            self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
        }
        result
    }

    /// An access epoch to the processes of `group` (`MPI_Win_start` … `MPI_Win_complete`,
    /// MPI-4.0 §12.5.2); they expose their windows with [`expose`](Window::expose).
    ///
    /// # Errors
    /// As [`Window::fence`].
    pub fn access<'buf, R>(
        &self,
        group: &Group<'_>,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
        self.epoch(
            EpochKind::Access,
            // SAFETY: a valid window and group.
            || unsafe { ffi::MPI_Win_start(group.as_raw(), assert.bits(), win) },
            // SAFETY: a valid window in an access epoch.
            || unsafe { ffi::MPI_Win_complete(win) },
            ("win_start", "win_complete"),
            body,
        )
    }

    /// Exposes this window to the processes of `group` (`MPI_Win_post`, MPI-4.0 §12.5.2) until
    /// the returned epoch is waited for or dropped (`MPI_Win_wait`).
    ///
    /// # Errors
    /// [`Error::EpochMisuse`] if an exposure epoch is open already; [`Error::WrongThread`];
    /// [`Error::Mpi`].
    pub fn expose(&self, group: &Group<'_>, assert: Assert) -> Result<Exposure<'_, 'c, T>> {
        const OP: &str = "win_post";
        if self.state.fetch_or(EXPOSED, Ordering::AcqRel) & EXPOSED != 0 {
            return Err(Error::EpochMisuse {
                operation: OP,
                reason: "the window is exposed already".into(),
            });
        }
        self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
        let posted = enter(OP).and_then(|_gate| {
            // SAFETY: a valid window and group.
            check(
                unsafe { ffi::MPI_Win_post(group.as_raw(), assert.bits(), self.win.raw) },
                OP,
            )
        });
        match posted {
            Ok(()) => Ok(Exposure {
                window: self,
                open: true,
            }),
            Err(e) => {
                self.state.fetch_and(!EXPOSED, Ordering::AcqRel);
                Err(e)
            }
        }
    }

    /// A passive-target epoch on `target` (`MPI_Win_lock` … `MPI_Win_unlock`, MPI-4.0
    /// §12.5.3): the target takes no part.
    ///
    /// # Errors
    /// [`Error::InvalidRank`]; as [`Window::fence`].
    pub fn lock<'buf, R>(
        &self,
        lock: LockType,
        target: i32,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        if self.len_of(target).is_none() {
            return Err(Error::InvalidRank {
                operation: "win_lock",
                role: "target",
                rank: target,
                size: c_int::try_from(self.layout.lens.len()).unwrap_or(c_int::MAX),
            });
        }
        let win = self.win.raw;
        self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
        self.epoch(
            EpochKind::Lock(target),
            // SAFETY: a valid window and rank.
            || unsafe { ffi::MPI_Win_lock(lock.raw(), target, assert.bits(), win) },
            // SAFETY: a valid window locked on `target`.
            || unsafe { ffi::MPI_Win_unlock(target, win) },
            ("win_lock", "win_unlock"),
            body,
        )
    }

    /// A passive-target epoch on every process (`MPI_Win_lock_all` … `MPI_Win_unlock_all`,
    /// MPI-4.0 §12.5.3), shared locks.
    ///
    /// # Errors
    /// As [`Window::fence`].
    pub fn lock_all<'buf, R>(
        &self,
        assert: Assert,
        body: impl for<'e> FnOnce(&'e WindowEpoch<'e, 'buf, T>) -> R,
    ) -> Result<R> {
        let win = self.win.raw;
        self.state.fetch_and(!FENCE_OPEN, Ordering::AcqRel);
        self.epoch(
            EpochKind::LockAll,
            // SAFETY: a valid window.
            || unsafe { ffi::MPI_Win_lock_all(assert.bits(), win) },
            // SAFETY: a valid window under lock_all.
            || unsafe { ffi::MPI_Win_unlock_all(win) },
            ("win_lock_all", "win_unlock_all"),
            body,
        )
    }
}

/// A zero `T` (valid: windows hold only types valid for every bit pattern).
fn zeroed<T: Equivalence>() -> T {
    // SAFETY: `Window` requires `!T::NEEDS_REPAIR`, i.e. every bit pattern (zero too) is a
    // valid `T`.
    unsafe { std::mem::zeroed() }
}

/// Reports an error of a helper collective under the window operation's name.
fn rename(e: Error, operation: &'static str) -> Error {
    match e {
        Error::Mpi {
            class,
            code,
            message,
            ..
        } => Error::Mpi {
            operation,
            class,
            code,
            message,
        },
        other => other,
    }
}

/// [`Error::EpochMisuse`], built out of line so the checks on the hot path stay small.
#[cold]
#[inline(never)]
fn misuse(operation: &'static str, reason: std::fmt::Arguments<'_>) -> Error {
    Error::EpochMisuse {
        operation,
        reason: reason.to_string(),
    }
}

/// Which synchronisation opened an epoch, and so which calls it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EpochKind {
    Fence,
    Access,
    Lock(i32),
    LockAll,
}

/// An open access epoch of a [`Window`]: the one-sided calls. Made only by the window's
/// epoch methods, for the duration of their closure.
///
/// Buffers are borrowed for `'buf`, which outlives the epoch: MPI may read (put, accumulate)
/// or write (get) them until the epoch is complete, and they come back only then. They cannot
/// be made inside the closure:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::{Assert, Window}};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let win = Window::<f64>::allocate(&world, 4).unwrap();
/// win.fence(Assert::empty(), |e| {
///     let mut local = [0.0f64; 4];
///     e.get(&mut local, 0, 0) // error[E0597]: `local` does not live long enough
/// }).unwrap().unwrap();
/// ```
///
/// nor used again before the epoch ends:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::{Assert, Window}};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let win = Window::<f64>::allocate(&world, 4).unwrap();
/// let mut buf = [0.0f64; 4];
/// win.fence(Assert::empty(), |e| {
///     e.get(&mut buf, 0, 0).unwrap();
///     buf[0] // error[E0503]: cannot use `buf[_]` because it was mutably borrowed
/// }).unwrap();
/// ```
pub struct WindowEpoch<'e, 'buf, T: Equivalence> {
    calls: Calls,
    layout: &'e Layout,
    kind: EpochKind,
    /// Invariant in `'buf`, so the closure cannot shorten it to its own lifetime.
    _buf: PhantomData<&'buf mut &'buf [T]>,
}

impl<T: Equivalence> std::fmt::Debug for WindowEpoch<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowEpoch")
            .field("kind", &self.kind)
            .finish()
    }
}

impl<'buf, T: Equivalence> WindowEpoch<'_, 'buf, T> {
    /// Checks the target for this epoch and the window.
    #[inline]
    fn target(
        &self,
        rank: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<super::target::Target> {
        if let EpochKind::Lock(locked) = self.kind
            && locked != rank
        {
            return Err(misuse(
                operation,
                format_args!("the epoch locks rank {locked}, not {rank}"),
            ));
        }
        self.layout.locate::<T>(rank, index, len, operation)
    }

    #[inline]
    fn passive(&self, operation: &'static str) -> Result<()> {
        match self.kind {
            EpochKind::Lock(_) | EpochKind::LockAll => Ok(()),
            _ => Err(misuse(
                operation,
                format_args!("only passive-target (lock, lock_all) epochs allow this"),
            )),
        }
    }

    /// Writes `buf` into `target`'s window from element `index` (`MPI_Put`, MPI-4.0 §12.3.1).
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::OutOfBounds`], [`Error::EpochMisuse`] (another rank
    /// than a `lock` epoch's); [`Error::CountOverflow`]; [`Error::WrongThread`]; [`Error::Mpi`].
    #[inline]
    pub fn put(&self, buf: &'buf [T], target: i32, index: usize) -> Result<()> {
        let t = self.target(target, index, buf.len(), "put")?;
        // SAFETY: `buf` is borrowed for 'buf, beyond the epoch's completion.
        unsafe { self.calls.put(buf, t) }
    }

    /// Reads `buf.len()` values of `target`'s window from element `index` into `buf`
    /// (`MPI_Get`, MPI-4.0 §12.3.2); they are there once the epoch is complete.
    ///
    /// # Errors
    /// As [`WindowEpoch::put`].
    #[inline]
    pub fn get(&self, buf: &'buf mut [T], target: i32, index: usize) -> Result<()> {
        let t = self.target(target, index, buf.len(), "get")?;
        // SAFETY: `buf` is exclusively borrowed for 'buf, beyond the epoch's completion.
        unsafe { self.calls.get(buf, t) }
    }

    /// Writes `buf` into `target`'s window and waits until it is there (`MPI_Put`, then
    /// `MPI_Win_flush`): `buf` is borrowed for this call only, so one buffer can be reused
    /// in a loop. Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::put`]; [`Error::EpochMisuse`] outside `lock`/`lock_all`.
    #[inline]
    pub fn put_now(&self, buf: &[T], target: i32, index: usize) -> Result<()> {
        const OP: &str = "put";
        self.passive(OP)?;
        let t = self.target(target, index, buf.len(), OP)?;
        // SAFETY: `buf` is borrowed until the flush below has completed the put.
        unsafe { self.calls.put(buf, t)? };
        self.calls.flush(t.rank)
    }

    /// Reads from `target`'s window into `buf` and waits for the values (`MPI_Get`, then
    /// `MPI_Win_flush_local`): `buf` is borrowed for this call only. Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::put_now`].
    #[inline]
    pub fn get_now(&self, buf: &mut [T], target: i32, index: usize) -> Result<()> {
        const OP: &str = "get";
        self.passive(OP)?;
        let t = self.target(target, index, buf.len(), OP)?;
        // SAFETY: `buf` is exclusively borrowed until the local flush below has completed
        // the get.
        unsafe { self.calls.get(buf, t)? };
        let _gate = enter("win_flush_local")?;
        // SAFETY: a valid window in a passive epoch; a checked rank.
        check(
            unsafe { ffi::MPI_Win_flush_local(t.rank, self.calls.win) },
            "win_flush_local",
        )
    }

    /// Combines `buf` into `target`'s window with `op` (`MPI_Accumulate`, MPI-4.0 §12.3.4),
    /// element-wise atomic with other accumulates.
    ///
    /// # Errors
    /// As [`WindowEpoch::put`].
    #[inline]
    pub fn accumulate<O: AccumulateOp<T>>(
        &self,
        buf: &'buf [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<()> {
        let t = self.target(target, index, buf.len(), "accumulate")?;
        // SAFETY: as in `put`.
        unsafe { self.calls.accumulate(buf, t, operand(&op)) }
    }

    /// Fetches `target`'s values into `result`, then combines `origin` into them with `op`
    /// (`MPI_Get_accumulate`, MPI-4.0 §12.3.5); with [`NoOp`](crate::NoOp) an atomic read.
    ///
    /// # Errors
    /// [`Error::BufferSize`] if the lengths differ; as [`WindowEpoch::put`].
    pub fn get_accumulate<O: AccumulateOp<T>>(
        &self,
        origin: &'buf [T],
        result: &'buf mut [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<()> {
        const OP: &str = "get_accumulate";
        if origin.len() != result.len() {
            return Err(Error::BufferSize {
                operation: OP,
                expected: origin.len(),
                actual: result.len(),
            });
        }
        let t = self.target(target, index, origin.len(), OP)?;
        // SAFETY: both borrowed for 'buf, beyond the epoch's completion.
        unsafe { self.calls.get_accumulate(origin, result, t, operand(&op)) }
    }

    /// Atomically combines `value` into element `index` of `target` and returns the element's
    /// previous value (`MPI_Fetch_and_op` then `MPI_Win_flush`, MPI-4.0 §12.3.5). Passive
    /// epochs only, where the flush makes the result available at once.
    ///
    /// # Errors
    /// [`Error::EpochMisuse`] outside `lock`/`lock_all`; [`Error::InvalidArgument`] if `T` is
    /// several MPI elements; as [`WindowEpoch::put`].
    pub fn fetch_and_op<O: AccumulateOp<T>>(
        &self,
        value: T,
        target: i32,
        index: usize,
        op: O,
    ) -> Result<T> {
        const OP: &str = "fetch_and_op";
        self.passive(OP)?;
        single_element::<T>(OP)?;
        let t = self.target(target, index, 1, OP)?;
        let mut result = zeroed::<T>();
        // SAFETY: `value` and `result` live until the flush below completes the call.
        unsafe {
            self.calls
                .fetch_and_op(&value, &mut result, t, operand(&op))?
        };
        self.calls.flush(t.rank)?;
        Ok(result)
    }

    /// Atomically replaces element `index` of `target` with `value` if it equals `compare`,
    /// and returns the previous value (`MPI_Compare_and_swap` then `MPI_Win_flush`, MPI-4.0
    /// §12.3.5). Integer types; passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    pub fn compare_and_swap(&self, value: T, compare: T, target: i32, index: usize) -> Result<T>
    where
        T: Bitwise,
    {
        const OP: &str = "compare_and_swap";
        self.passive(OP)?;
        single_element::<T>(OP)?;
        let t = self.target(target, index, 1, OP)?;
        let mut result = zeroed::<T>();
        // SAFETY: the three values live until the flush below completes the call.
        unsafe {
            self.calls
                .compare_and_swap(&value, &compare, &mut result, t)?
        };
        self.calls.flush(t.rank)?;
        Ok(result)
    }

    /// Completes every call to `target` at origin and target (`MPI_Win_flush`, MPI-4.0
    /// §12.5.4): `get` results from it are in their buffers. Passive epochs only.
    ///
    /// # Errors
    /// [`Error::EpochMisuse`]; [`Error::InvalidRank`]; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn flush(&self, target: i32) -> Result<()> {
        self.passive("win_flush")?;
        let t = self.target(target, 0, 0, "win_flush")?;
        self.calls.flush(t.rank)
    }

    /// Completes every call of the epoch (`MPI_Win_flush_all`). Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_all(&self) -> Result<()> {
        self.sync_call("win_flush_all", |win| {
            // SAFETY: a valid window in a passive epoch.
            unsafe { ffi::MPI_Win_flush_all(win) }
        })
    }

    /// Completes every call to `target` at the origin only (`MPI_Win_flush_local`). Passive
    /// epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_local(&self, target: i32) -> Result<()> {
        let t = self.target(target, 0, 0, "win_flush_local")?;
        self.sync_call("win_flush_local", |win| {
            // SAFETY: a valid window in a passive epoch; a checked rank.
            unsafe { ffi::MPI_Win_flush_local(t.rank, win) }
        })
    }

    /// Completes every call of the epoch at the origin (`MPI_Win_flush_local_all`).
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn flush_local_all(&self) -> Result<()> {
        self.sync_call("win_flush_local_all", |win| {
            // SAFETY: a valid window in a passive epoch.
            unsafe { ffi::MPI_Win_flush_local_all(win) }
        })
    }

    /// Synchronises the private and public copies of the local window (`MPI_Win_sync`,
    /// MPI-4.0 §12.5.4). Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::flush`].
    pub fn sync(&self) -> Result<()> {
        self.sync_call("win_sync", |win| {
            // SAFETY: a valid window in a passive epoch.
            unsafe { ffi::MPI_Win_sync(win) }
        })
    }

    fn sync_call(
        &self,
        operation: &'static str,
        call: impl FnOnce(ffi::MPI_Win) -> c_int,
    ) -> Result<()> {
        self.passive(operation)?;
        let _gate = enter(operation)?;
        check(call(self.calls.win), operation)
    }

    /// Request-based put (`MPI_Rput`, MPI-4.0 §12.3.1): the request completes when `buf` may
    /// be reused, and follows the [`scope`](crate::scope) discipline. Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    pub fn rput<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        target: i32,
        index: usize,
    ) -> Result<Request<'s>> {
        self.request(
            scope,
            RequestCall::Put(buf),
            target,
            index,
            buf.len(),
            "rput",
        )
    }

    /// Request-based get (`MPI_Rget`): the values are in `buf` once the request completes.
    /// Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    pub fn rget<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        target: i32,
        index: usize,
    ) -> Result<Request<'s>> {
        let len = buf.len();
        self.request(scope, RequestCall::Get(buf), target, index, len, "rget")
    }

    /// Request-based accumulate (`MPI_Raccumulate`). Passive epochs only.
    ///
    /// # Errors
    /// As [`WindowEpoch::fetch_and_op`].
    pub fn raccumulate<'s, O: AccumulateOp<T>>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s [T],
        target: i32,
        index: usize,
        op: O,
    ) -> Result<Request<'s>> {
        let call = RequestCall::Accumulate(buf, operand(&op));
        self.request(scope, call, target, index, buf.len(), "raccumulate")
    }

    fn request<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        call: RequestCall<'s, T>,
        target: i32,
        index: usize,
        len: usize,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.passive(operation)?;
        let t = self.target(target, index, len, operation)?;
        // SAFETY: the buffer is borrowed for 's; the scope completes or aborts before 's ends.
        let raw = unsafe { self.calls.request(call, t)? };
        Ok(Request::started(raw, None, &scope.in_flight))
    }
}

/// An exposure epoch (`MPI_Win_post`): the window is the target of the group's access epochs
/// until [`wait`](Exposure::wait) or drop (`MPI_Win_wait`, MPI-4.0 §12.5.2).
#[must_use = "dropping the exposure waits for the access epochs to complete"]
pub struct Exposure<'w, 'c, T: Equivalence> {
    window: &'w Window<'c, T>,
    open: bool,
}

impl<T: Equivalence> std::fmt::Debug for Exposure<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposure")
            .field("open", &self.open)
            .finish()
    }
}

impl<T: Equivalence> Exposure<'_, '_, T> {
    /// Waits until every process of the group has completed its access epoch (`MPI_Win_wait`).
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn wait(mut self) -> Result<()> {
        self.close()
    }

    /// Whether every access epoch has completed, without blocking (`MPI_Win_test`); once
    /// `true`, the exposure is over.
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn test(&mut self) -> Result<bool> {
        const OP: &str = "win_test";
        if !self.open {
            return Ok(true);
        }
        let _gate = enter(OP)?;
        let mut flag: c_int = 0;
        // SAFETY: a valid window with an exposure epoch open; writes one int.
        let rc = unsafe { ffi::MPI_Win_test(self.window.win.raw, &mut flag) };
        check(rc, OP)?;
        if flag != 0 {
            self.open = false;
            self.window.state.fetch_and(!EXPOSED, Ordering::AcqRel);
        }
        Ok(flag != 0)
    }

    fn close(&mut self) -> Result<()> {
        const OP: &str = "win_wait";
        if !self.open {
            return Ok(());
        }
        let _gate = enter(OP)?;
        self.open = false;
        // SAFETY: a valid window with an exposure epoch open.
        let rc = unsafe { ffi::MPI_Win_wait(self.window.win.raw) };
        self.window.state.fetch_and(!EXPOSED, Ordering::AcqRel);
        check(rc, OP)
    }
}

impl<T: Equivalence> Drop for Exposure<'_, '_, T> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

// SAFETY: the handle and layout are read-only; epochs are serialised per process by `state`
// (atomic), every call passes the thread gate, and local memory is never referenced by Rust.
unsafe impl<T: Equivalence + Send> Send for Window<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Equivalence + Sync> Sync for Window<'_, T> {}
