//! General RMA windows (MPI-4.0 §12.2–§12.5): [`Window`], and the epochs in which its
//! one-sided calls run ([`WindowEpoch`](super::WindowEpoch)).
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
//!
//! This module makes, describes and frees windows; [`epoch`](super::epoch) opens their epochs
//! and holds the calls made in them.

use super::target::Layout;
use super::{Assert, LockType, RawWindow, disp_unit, window_bytes};
use crate::comm::Communicator;
use crate::datatype::{Equivalence, recv_ptr};
use crate::env::enter;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::info::Info;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

/// The epoch state of a window, in [`Window::state`](Window).
/// No access epoch is open.
pub(super) const IDLE: u8 = 0;
/// An access epoch (fence, start, lock, lock_all) is open.
pub(super) const ACCESS: u8 = 1;
/// Bit: an exposure epoch (post) is open.
pub(super) const EXPOSED: u8 = 2;
/// Bit: the last fence left a fence epoch open for the next one.
pub(super) const FENCE_OPEN: u8 = 4;
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
    pub(super) win: RawWindow<'c>,
    pub(super) layout: Layout,
    storage: Storage<T>,
    pub(super) rank: c_int,
    pub(super) state: AtomicU8,
    _comm: PhantomData<&'c Communicator<'c>>,
}

impl<T: Equivalence> std::fmt::Debug for Window<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Window")
            .field("type", &std::any::type_name::<T>())
            .field("lens", &self.layout.lens())
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<i64>::allocate(&world, 4)?; // collective; zeroed, MPI's memory
    /// assert_eq!(win.local_len(), 4);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// The ranks' lengths are exchanged (one allgather) before MPI is called, so a length one
    /// rank's window cannot hold is the same error on every rank, not a rank waiting alone in
    /// `MPI_Win_allocate`. `T` may be more aligned than MPI's memory: Rust never refers to it.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a zero-sized `T`; [`ErrorKind::CountOverflow`] on every
    /// rank if any rank's length does not fit an `MPI_Aint` in bytes; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn allocate(comm: &'c Communicator<'_>, len: usize) -> Result<Self> {
        Self::allocate_with_info(comm, len, None)
    }

    /// [`allocate`](Window::allocate) with hints (e.g. `accumulate_ops`, `same_size`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let hints = ferrompi::Info::with(&mpi, &[("no_locks", "true")])?; // fence and PSCW only
    /// let win = Window::<f64>::allocate_with_info(&world, 8, Some(&hints))?;
    /// let _ = win;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::allocate`].
    pub fn allocate_with_info(
        comm: &'c Communicator<'_>,
        len: usize,
        info: Option<&Info<'_>>,
    ) -> Result<Self> {
        Self::allocate_init(comm, len, info)
    }

    /// `MPI_Win_allocate` of `len` values, zeroed.
    fn allocate_init(
        comm: &'c Communicator<'_>,
        len: usize,
        info: Option<&Info<'_>>,
    ) -> Result<Self> {
        let lens = Self::agreed_lens(comm, len, "win_allocate")?;
        Self::allocate_agreed(comm, lens, info, None)
    }

    /// Every process's length, learnt with one allgather before any window is made, and the
    /// checks that depend on them, made alike on every process: a length that one process
    /// alone refused would leave the others waiting in the collective call that makes the
    /// window. Every process gets the same error for the first length that does not fit.
    fn agreed_lens(
        comm: &Communicator<'_>,
        len: usize,
        operation: &'static str,
    ) -> Result<Box<[usize]>> {
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let mut lens = vec![0u64; size];
        comm.allgather(&[u64::try_from(len).unwrap_or(u64::MAX)], &mut lens)
            .map_err(|e| rename(e, operation))?;
        let lens: Box<[usize]> = lens
            .into_iter()
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .collect();
        for &n in &lens {
            window_bytes::<T>(n, operation)?;
        }
        Ok(lens)
    }

    /// `MPI_Win_allocate` of this process's length in `lens` (agreed by [`agreed_lens`]),
    /// zeroed or copied from `init` (of that length).
    ///
    /// [`agreed_lens`]: Window::agreed_lens
    fn allocate_agreed(
        comm: &'c Communicator<'_>,
        lens: Box<[usize]>,
        info: Option<&Info<'_>>,
        init: Option<&[T]>,
    ) -> Result<Self> {
        const OP: &str = "win_allocate";
        let () = Self::VALID_FOR_ANY_BYTES;
        let unit = disp_unit::<T>(OP)?;
        let len = usize::try_from(comm.rank())
            .ok()
            .and_then(|r| lens.get(r).copied())
            .unwrap_or(0);
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
        // MPI promises no alignment for the memory it allocates, and `T` may ask for more
        // than MPI gives (a `#[repr(align(128))]` type). Rust never refers to this memory as
        // `T` (see the module docs): it is written here byte by byte, and read and written
        // afterwards only by MPI, so any address serves, on every process alike.
        let init_bytes = len * std::mem::size_of::<T>(); // `window_bytes` checked it
        if init_bytes > 0 {
            // SAFETY: MPI allocated at least `init_bytes` bytes at `base` (alignment 1);
            // nothing else can reach them yet (remote RMA needs an epoch, which needs this
            // call to return); `init` holds `len` values, `init_bytes` bytes, copied untyped.
            unsafe {
                match init {
                    Some(values) => std::ptr::copy_nonoverlapping(
                        values.as_ptr().cast::<u8>(),
                        base,
                        init_bytes,
                    ),
                    None => std::ptr::write_bytes(base, 0, init_bytes),
                }
            }
        }
        let window = Self::finish(comm, win, lens, Storage::Mpi);
        // No process may reach this memory before its owner has initialised it: a passive
        // epoch of another process could otherwise be overwritten by the zeroing (MPI's
        // allocation is collective, but does not wait for what follows it).
        comm.barrier().map_err(|e| rename(e, OP))?;
        Ok(window)
    }

    /// `MPI_Win_create` (MPI-4.0 §12.2.1) over a vector the window owns, handed back by
    /// [`into_vec`](Window::into_vec). Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::from_vec(&world, vec![1u32, 2, 3])?; // MPI_Win_create over the vector
    /// let back = win.into_vec()?; // collective: frees the window, returns the vector
    /// assert_eq!(back, [1, 2, 3]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::allocate`].
    pub fn from_vec(comm: &'c Communicator<'_>, mut data: Vec<T>) -> Result<Self> {
        let () = Self::VALID_FOR_ANY_BYTES;
        // SAFETY: the vector moves into the window, which never reads or writes it through
        // Rust while the window exists and frees the window before giving it back; a leaked
        // window leaks the vector.
        match unsafe { Self::create(comm, &mut data)? } {
            (Some(win), lens) => Ok(Self::finish(comm, win, lens, Storage::Owned(data))),
            (None, lens) => Self::allocate_agreed(comm, lens, None, Some(&data)),
        }
    }

    /// `MPI_Win_create` over `buf`, exclusively borrowed while `body` runs with the window;
    /// the window is freed (collectively) before this returns, and `buf` then holds what the
    /// epochs left in it. A panic in `body` ends the job, since remote processes may still
    /// write `buf`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let mut data = vec![0u64; 4];
    /// Window::with_buffer(&world, &mut data, |win| {
    ///     let me = world.rank();
    ///     win.fence(Assert::empty(), |epoch| epoch.put(&[7u64; 4], me, 0))?
    /// })??;
    /// assert_eq!(data, [7; 4]); // the window is freed: `data` is ours again
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::allocate`], and errors freeing the window; `body`'s own result is inside.
    pub fn with_buffer<R>(
        comm: &Communicator<'_>,
        buf: &mut [T],
        body: impl FnOnce(&Window<'_, T>) -> R,
    ) -> Result<R> {
        let () = Self::VALID_FOR_ANY_BYTES;
        // SAFETY: `buf` stays exclusively borrowed until the window is freed below; if it
        // cannot be, the job is aborted before `buf` is given back.
        let window = match unsafe { Window::<T>::create(comm, buf)? } {
            (Some(win), lens) => Window::finish(comm, win, lens, Storage::Borrowed),
            (None, lens) => Window::allocate_agreed(comm, lens, None, Some(buf))?,
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
            crate::fault::abort_world(103);
        }
        std::mem::forget(abort_guard);
        Ok(result)
    }

    /// `MPI_Win_create` over `buf`, with every process's length ([`agreed_lens`]); no window
    /// where Open MPI 4.1 cannot create windows over
    /// user memory with its single-copy mechanism off (which ferrompi does, see
    /// [`env`](mod@crate::env)): its `osc/ucx` component fails with `MPI_ERR_WIN` on every
    /// rank alike; and on MPICH before 5.0 when any rank's buffer is not a multiple of 16
    /// bytes. The caller then allocates a window and copies instead.
    ///
    /// [`agreed_lens`]: Window::agreed_lens
    ///
    /// # Safety
    /// `buf` must not be read or written through Rust, nor freed, until the window is freed.
    unsafe fn create(
        comm: &Communicator<'_>,
        buf: &mut [T],
    ) -> Result<(Option<RawWindow<'c>>, Box<[usize]>)> {
        const OP: &str = "win_create";
        let unit = disp_unit::<T>(OP)?;
        let lens = Self::agreed_lens(comm, buf.len(), OP)?;
        let bytes = window_bytes::<T>(buf.len(), OP)?;
        // MPICH 4.0.2 misplaces puts into windows whose size is not a multiple of 16 bytes (see
        // `allocate_agreed`), and a user's buffer cannot be padded: if any rank's is such,
        // every rank takes the stand-in (a padded window and a copy), so that all make the
        // same call. (`agreed_lens` checked that every size fits.)
        if crate::env::mpich_before((5, 0))
            && lens
                .iter()
                .any(|&n| !(n * std::mem::size_of::<T>()).is_multiple_of(16))
        {
            return Ok((None, lens));
        }
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_WIN_NULL;
        // SAFETY: `buf` holds `bytes` bytes, reserved for MPI per the caller.
        let rc = unsafe {
            ffi::MPI_Win_create(
                recv_ptr(buf),
                bytes,
                unit,
                ffi::MPI_INFO_NULL,
                comm.as_raw(),
                &mut raw,
            )
        };
        match check(rc, OP) {
            Err(e)
                if e.class() == Some(crate::ErrorClass::Win)
                    && crate::env::running(crate::Implementation::OpenMpi) =>
            {
                Ok((None, lens))
            }
            Err(e) => Err(e),
            // SAFETY: MPI just made `raw` for us, under the gate we hold.
            Ok(()) => unsafe { RawWindow::adopt(raw, OP) }.map(|win| (Some(win), lens)),
        }
    }

    /// The window over `win`, with every rank's length (from [`agreed_lens`]) for the bounds
    /// checks.
    ///
    /// [`agreed_lens`]: Window::agreed_lens
    fn finish(
        comm: &Communicator<'_>,
        win: RawWindow<'c>,
        lens: Box<[usize]>,
        storage: Storage<T>,
    ) -> Self {
        let mut window = Window {
            win,
            layout: Layout::new(1),
            storage,
            rank: comm.rank(),
            state: AtomicU8::new(IDLE),
            _comm: PhantomData,
        };
        window.layout.set_lens(lens, 0);
        window
    }

    /// The number of values in `rank`'s window; `None` for a rank outside the communicator.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<u8>::allocate(&world, 3)?;
    /// assert_eq!(win.len_of(0), Some(3)); // checked before every remote access
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len_of(&self, rank: i32) -> Option<usize> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.layout.lens().get(r).copied())
    }

    /// The number of values in this process's window.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<u8>::allocate(&world, 3)?;
    /// assert_eq!(win.local_len(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn local_len(&self) -> usize {
        self.len_of(self.rank).unwrap_or(0)
    }

    /// The hints MPI uses for the window (`MPI_Win_get_info`, MPI-4.0 §12.2.7).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<u8>::allocate(&world, 3)?;
    /// let _ = win.info()?.entries()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn info(&self) -> Result<Info<'c>> {
        self.win.info()
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<u8>::allocate(&world, 3)?;
    /// let _raw: ferrompi::ffi::MPI_Win = win.as_raw();
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn as_raw(&self) -> ffi::MPI_Win {
        self.win.raw
    }

    /// Frees the window (`MPI_Win_free`, collective), reporting errors; dropping it does the
    /// same silently. An exposure epoch whose [`Exposure`](super::Exposure) was leaked is ended
    /// first (`MPI_Win_wait`), as dropping the `Exposure` would have. If MPI does not free the
    /// window, the vector of [`from_vec`](Window::from_vec) is leaked rather than freed, since
    /// other processes may still write it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::<u8>::allocate(&world, 3)?;
    /// win.free()?; // collective; dropping does the same
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (the window is then leaked); [`ErrorKind::Mpi`].
    pub fn free(mut self) -> Result<()> {
        self.release().map(drop)
    }

    /// Frees the window and gives back this process's values: the vector of
    /// [`from_vec`](Window::from_vec), or a copy of MPI's memory for
    /// [`allocate`](Window::allocate) (read with a `get` under a lock on itself first, or in a
    /// last fence epoch, asserting `NOSUCCEED`, if the fence sequence is open). Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Window;
    /// let win = Window::from_vec(&world, vec![0.5f64; 2])?;
    /// assert_eq!(win.into_vec()?, [0.5, 0.5]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Window::free`] (a vector the window could not free stays leaked);
    /// [`ErrorKind::InvalidArgument`] for a window over a borrowed buffer.
    pub fn into_vec(mut self) -> Result<Vec<T>> {
        let rank = self.rank;
        let len = self.local_len();
        if self.exposed() {
            // A leaked `Exposure`: what its origins put is here only once it has ended.
            self.end_exposure()?;
        }
        match self.storage {
            Storage::Owned(_) => self.release().map(Option::unwrap_or_default),
            Storage::Mpi => {
                let mut out = vec![zeroed::<T>(); len];
                if self.state.load(Ordering::Acquire) & FENCE_OPEN != 0 {
                    // The fence sequence is open on every process alike (only fences change
                    // it): close it, reading this process's values in its last epoch.
                    self.fence(Assert::NOSUCCEED, |e| e.get(&mut out, rank, 0))??;
                } else {
                    self.lock(LockType::Shared, rank, Assert::empty(), |e| {
                        e.get(&mut out, rank, 0)
                    })??;
                }
                self.release()?;
                Ok(out)
            }
            Storage::Borrowed => Err(ErrorKind::InvalidArgument {
                operation: "into_vec",
                reason: "the window is over a borrowed buffer, which with_buffer gives back".into(),
            }
            .into()),
        }
    }

    /// Ends this window's exposure epoch (`MPI_Win_wait`, MPI-4.0 §12.5.2): for
    /// [`Exposure`](super::Exposure), and when the window is freed after one was leaked.
    /// Clears [`EXPOSED`] once MPI was called.
    pub(super) fn end_exposure(&self) -> Result<()> {
        const OP: &str = "win_wait";
        let _gate = enter(OP)?;
        // SAFETY: a valid window whose exposure epoch is open (`EXPOSED` is set).
        let rc = unsafe { ffi::MPI_Win_wait(self.win.raw) };
        self.state.fetch_and(!EXPOSED, Ordering::AcqRel);
        check(rc, OP)
    }

    /// Whether an exposure epoch is open on this window.
    pub(super) fn exposed(&self) -> bool {
        self.state.load(Ordering::Acquire) & EXPOSED != 0
    }

    /// Frees the window (collectively) after ending a leaked exposure epoch, and hands back the
    /// vector it owned, if any. Where MPI did not free the window (the thread gate refused, or
    /// MPI failed), that vector is leaked instead: other processes may still write it.
    fn release(&mut self) -> Result<Option<Vec<T>>> {
        let exposure = if self.exposed() {
            self.end_exposure()
        } else {
            Ok(())
        };
        let freed = self.win.free();
        let data = match std::mem::replace(&mut self.storage, Storage::Borrowed) {
            Storage::Owned(data) if freed.is_err() => {
                std::mem::forget(data);
                None
            }
            Storage::Owned(data) => Some(data),
            Storage::Mpi | Storage::Borrowed => None,
        };
        exposure.and(freed).map(|()| data)
    }
}

impl<T: Equivalence> Drop for Window<'_, T> {
    fn drop(&mut self) {
        // The vector, if any, is dropped after the window is freed (or leaked if it was not).
        let _ = self.release();
    }
}

/// A zero `T` (valid: windows hold only types valid for every bit pattern).
pub(super) fn zeroed<T: Equivalence>() -> T {
    // SAFETY: `Window` requires `!T::NEEDS_REPAIR`, i.e. every bit pattern (zero too) is a
    // valid `T`.
    unsafe { std::mem::zeroed() }
}

/// Reports an error of a helper collective under the window operation's name.
pub(super) fn rename(e: Error, operation: &'static str) -> Error {
    match e.into_kind() {
        ErrorKind::Mpi {
            class,
            code,
            message,
            ..
        } => ErrorKind::Mpi {
            operation,
            class,
            code,
            message,
        }
        .into(),
        other => other.into(),
    }
}
