//! One-sided communication (MPI-4.0 chapter 12): shared-memory windows ([`SharedWindow`]) and
//! general RMA windows ([`Window`]).
//!
//! | type | MPI | what safe code may do |
//! |---|---|---|
//! | [`SharedWindow`] | `MPI_Win_allocate_shared`, §12.2.3 | load and store the node's memory directly, in collective read and write epochs; element-wise atomics |
//! | [`Window`] | `MPI_Win_allocate`, `MPI_Win_create`, §12.2 | put, get, accumulate, … in fence, post/start/complete/wait and lock epochs |
//!
//! Both are freed (`MPI_Win_free`, collective) when dropped, borrow the [`Mpi`] environment so
//! they cannot outlive finalize, and have `MPI_ERRORS_RETURN` installed, so MPI reports errors
//! as [`ErrorKind::Mpi`] instead of aborting.
//!
//! # Why neither can race
//!
//! *Shared windows* hand out references into memory other processes can reach. The access
//! model and its proof are in [`shared`].
//!
//! *RMA windows* never hand out a reference to window memory while the window exists: the
//! memory is MPI's ([`Window::allocate`]), moved in ([`Window::from_vec`]) or exclusively
//! borrowed for a closure the window cannot outlive ([`Window::with_buffer`]). Remote
//! processes may write it at any moment MPI allows; no Rust reference observes it meanwhile.
//! What an RMA call reads or writes on the calling side (the *origin buffer*) is borrowed for
//! the whole epoch, which is a closure: the epoch is completed (fence, complete, unlock) before
//! the closure's caller gets its buffers back, and a panic inside it ends the job rather than
//! return buffers MPI may still use. So `mem::forget` has nothing to leak but request-based
//! operations, which follow the crate's [`scope`](crate::scope) discipline, and an
//! [`Exposure`], whose epoch is then ended (`MPI_Win_wait`) when the window is freed. A vector
//! moved in is dropped only after `MPI_Win_free` has succeeded; where it cannot (a drop on a
//! thread the thread level refuses, or MPI failing), the vector is leaked, since other
//! processes may still write it. The calls that borrow their buffer only until they return
//! (`put_now`, `get_now`, the atomics) complete it with a flush before returning; should that
//! flush fail after the call itself succeeded, the job ends, as when an epoch fails to close,
//! rather than hand back a buffer MPI may still use.
//!
//! Targets, displacements and counts are checked against the target's window size (known from
//! creation) before each call: [`ErrorKind::OutOfBounds`], never an access outside the window.

pub mod epoch;
pub mod epoch_target;
pub mod exposure;
pub mod rma;
pub mod shared;
mod target;

pub use epoch::WindowEpoch;
pub use epoch_target::EpochTarget;
pub use exposure::Exposure;
pub use rma::Window;
pub use shared::{AtomicEpoch, ReadEpoch, SharedWindow, WriteEpoch};

use crate::env::{Mpi, enter};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::info::Info;
use std::ffi::c_int;
use std::marker::PhantomData;

bitflags::bitflags! {
    /// Assertions about an epoch that let MPI skip work (`MPI_MODE_*`, MPI-4.0 §12.5.5).
    /// Wrong assertions make the program erroneous in MPI's eyes, but never reach Rust's memory
    /// model: window memory is not referenced while RMA can touch it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Assert: c_int {
        /// `MPI_MODE_NOCHECK`: the matching calls on other processes are already done.
        const NOCHECK = ffi::MPI_MODE_NOCHECK as c_int;
        /// `MPI_MODE_NOSTORE`: the local window was not stored to since the last sync.
        const NOSTORE = ffi::MPI_MODE_NOSTORE as c_int;
        /// `MPI_MODE_NOPUT`: the local window will not be the target of puts or accumulates.
        const NOPUT = ffi::MPI_MODE_NOPUT as c_int;
        /// `MPI_MODE_NOPRECEDE`: the fence completes no RMA call of this process.
        const NOPRECEDE = ffi::MPI_MODE_NOPRECEDE as c_int;
        /// `MPI_MODE_NOSUCCEED`: no RMA call of this process follows the fence.
        const NOSUCCEED = ffi::MPI_MODE_NOSUCCEED as c_int;
    }
}

/// The kind of a passive-target lock (`MPI_LOCK_EXCLUSIVE`, `MPI_LOCK_SHARED`, MPI-4.0 §12.5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockType {
    /// No other process holds a lock on the target meanwhile.
    Exclusive,
    /// Other shared locks may be held meanwhile.
    Shared,
}

impl LockType {
    fn raw(self) -> c_int {
        match self {
            LockType::Exclusive => crate::c_int_const!(ffi::MPI_LOCK_EXCLUSIVE),
            LockType::Shared => crate::c_int_const!(ffi::MPI_LOCK_SHARED),
        }
    }
}

/// An owned window handle, freed (collectively) on drop. Shared by both window kinds.
#[derive(Debug)]
pub(crate) struct RawWindow<'env> {
    pub(crate) raw: ffi::MPI_Win,
    _env: PhantomData<&'env Mpi>,
}

// SAFETY: the handle is an identifier MPI resolves internally; every call passes the thread gate.
unsafe impl Send for RawWindow<'_> {}
// SAFETY: as for `Send`; the handle is immutable after creation.
unsafe impl Sync for RawWindow<'_> {}

/// The signature `MPI_Win_allocate` and `MPI_Win_allocate_shared` share.
pub(crate) type AllocateCall = unsafe extern "C" fn(
    ffi::MPI_Aint,
    c_int,
    ffi::MPI_Info,
    ffi::MPI_Comm,
    *mut std::ffi::c_void,
    *mut ffi::MPI_Win,
) -> c_int;

impl<'env> RawWindow<'env> {
    /// Allocates a window of `bytes` on this process with `call` (`MPI_Win_allocate` or
    /// `MPI_Win_allocate_shared`), runs `then` on it under the same thread gate, and returns
    /// it with the address of this process's memory.
    pub(crate) fn allocate(
        call: AllocateCall,
        bytes: ffi::MPI_Aint,
        unit: c_int,
        info: Option<&Info<'_>>,
        comm: &crate::Communicator<'_>,
        operation: &'static str,
        then: impl FnOnce(ffi::MPI_Win) -> Result<()>,
    ) -> Result<(Self, *mut u8)> {
        let _gate = enter(operation)?;
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut raw = ffi::MPI_WIN_NULL;
        // SAFETY: `call` is one of the two allocation calls: MPI allocates `bytes` bytes,
        // writes their address to `base` and the new handle to `raw`.
        let rc = unsafe {
            call(
                bytes,
                unit,
                crate::info::raw_or_null(info),
                comm.as_raw(),
                (&raw mut base).cast(),
                &mut raw,
            )
        };
        check(rc, operation)?;
        // SAFETY: MPI just made `raw` for us, under the gate we hold.
        let win = unsafe { RawWindow::adopt(raw, operation) }?;
        then(win.raw)?;
        Ok((win, base))
    }
}

impl RawWindow<'_> {
    /// Takes ownership of a window MPI just created and installs `MPI_ERRORS_RETURN`. Called
    /// with the thread gate held; on error it frees the window itself.
    ///
    /// # Safety
    /// `raw` is a window MPI just created that nothing else owns or frees, and the calling
    /// thread holds the thread gate.
    pub(crate) unsafe fn adopt(raw: ffi::MPI_Win, operation: &'static str) -> Result<Self> {
        let mut win = RawWindow {
            raw,
            _env: PhantomData,
        };
        // SAFETY: a valid window MPI just created, and a predefined error handler.
        let rc = unsafe { ffi::MPI_Win_set_errhandler(raw, ffi::MPI_ERRORS_RETURN) };
        if let Err(e) = check(rc, operation) {
            // SAFETY: ours, freed once; the caller holds the gate.
            let _ = unsafe { ffi::MPI_Win_free(&mut win.raw) };
            std::mem::forget(win);
            return Err(e);
        }
        crate::live::window_made(raw);
        Ok(win)
    }

    /// `MPI_Win_free`, reporting errors; `Drop` does the same silently.
    pub(crate) fn free(&mut self) -> Result<()> {
        if self.raw == ffi::MPI_WIN_NULL {
            return Ok(());
        }
        let _gate = enter("win_free")?;
        let raw = self.raw;
        // SAFETY: we own the handle; MPI sets it to MPI_WIN_NULL, so it is freed once.
        let rc = unsafe { ffi::MPI_Win_free(&mut self.raw) };
        self.raw = ffi::MPI_WIN_NULL;
        check(rc, "win_free")?;
        crate::live::window_freed(raw);
        Ok(())
    }

    /// The hints MPI actually uses (`MPI_Win_get_info`, MPI-4.0 §12.2.7).
    pub(crate) fn info<'env>(&self) -> Result<Info<'env>> {
        const OP: &str = "win_get_info";
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_INFO_NULL;
        // SAFETY: a valid window; MPI writes a new info handle, which the caller owns.
        check(unsafe { ffi::MPI_Win_get_info(self.raw, &mut raw) }, OP)?;
        // SAFETY: MPI just created it for us.
        Ok(unsafe { Info::adopt(raw) })
    }
}

impl Drop for RawWindow<'_> {
    fn drop(&mut self) {
        // Where the thread gate refused (MPI was not called), the window stays counted as
        // alive: finalize warns about it and frees it (see `live`).
        let _ = self.free();
    }
}

/// `size_of::<T>()` as MPI's displacement unit, refusing zero-sized types.
pub(crate) fn disp_unit<T>(operation: &'static str) -> Result<c_int> {
    match c_int::try_from(std::mem::size_of::<T>()) {
        Ok(0) => Err(ErrorKind::InvalidArgument {
            operation,
            reason: "a window of a zero-sized type has no addressable elements".into(),
        }
        .into()),
        Ok(unit) => Ok(unit),
        Err(_) => Err(ErrorKind::InvalidArgument {
            operation,
            reason: "the element type is larger than an MPI displacement unit (int)".into(),
        }
        .into()),
    }
}

/// `len` elements of `T` as a window size in bytes (`MPI_Aint`).
pub(crate) fn window_bytes<T>(len: usize, operation: &'static str) -> Result<ffi::MPI_Aint> {
    len.checked_mul(std::mem::size_of::<T>())
        .and_then(|bytes| ffi::MPI_Aint::try_from(bytes).ok())
        .ok_or_else(|| {
            ErrorKind::CountOverflow {
                operation,
                count: u64::try_from(len).unwrap_or(u64::MAX),
                // MPI_Aint is pointer-sized: `isize` in Open MPI, `long` in MPICH.
                max: (isize::MAX as i64)
                    / i64::try_from(std::mem::size_of::<T>().max(1)).unwrap_or(1),
            }
            .into()
        })
}

/// Ends the job if dropped while unwinding out of a closure that MPI may still be using
/// buffers for (an epoch, a window over a borrowed buffer): returning them would be unsound,
/// and completing a collective epoch from one panicking rank could hang. Forgotten on the
/// normal path.
pub(crate) struct AbortOnUnwind(pub(crate) &'static str);

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        eprintln!(
            "ferrompi: panic inside {}; aborting so MPI cannot use its buffers after they are freed",
            self.0
        );
        crate::fault::abort_world(104);
    }
}
