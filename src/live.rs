//! The MPI objects the crate made and has not freed, counted by kind, so that finalize can say
//! what a program leaked (`mem::forget`, or a drop on a thread the thread level refuses) and
//! free the windows among them.
//!
//! Every owning handle counts itself here when it adopts a handle MPI made and uncounts itself
//! when MPI has freed it: creating and freeing are not on any hot path, and the counts are
//! relaxed atomics. Handles borrow [`Mpi`](crate::Mpi), so at finalize none can still be in
//! use: whatever is counted then was leaked.
//!
//! Windows are also kept by handle, in the order they were made: a window MPI still holds at
//! `MPI_Finalize` makes some MPIs abort there (MPICH over UCX asserts that its registration
//! cache is empty), so finalize frees them first ([`free_leaked_windows`]). `MPI_Win_free` is
//! collective; the members of a leaked window's group all reach finalize, and free their
//! leaked windows in the same order, the order of the collective calls that made them.

use crate::ffi;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

/// The kinds of MPI object a user can leak, counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Communicator,
    Group,
    Info,
    Op,
    /// A derived datatype ([`DerivedType`](crate::DerivedType)).
    Datatype,
    Window,
    /// A persistent request (point-to-point or collective), counted from its init to its
    /// free: one leaked while active has an operation MPI may wait for at finalize.
    PersistentRequest,
    /// An open file ([`File`](crate::io::File)).
    File,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::File,
        Kind::Window,
        Kind::PersistentRequest,
        Kind::Communicator,
        Kind::Group,
        Kind::Info,
        Kind::Op,
        Kind::Datatype,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Communicator => "communicator",
            Kind::Group => "group",
            Kind::Info => "info object",
            Kind::Op => "user-defined reduction",
            Kind::Datatype => "derived datatype",
            Kind::Window => "window",
            Kind::PersistentRequest => "persistent request",
            Kind::File => "file",
        }
    }
}

static COUNTS: [AtomicIsize; Kind::ALL.len()] = [const { AtomicIsize::new(0) }; Kind::ALL.len()];

/// Counts an object of `kind` that MPI made for the crate.
#[inline]
pub(crate) fn made(kind: Kind) {
    COUNTS[kind as usize].fetch_add(1, Ordering::Relaxed);
}

/// Uncounts an object of `kind` that MPI has freed.
#[inline]
pub(crate) fn freed(kind: Kind) {
    COUNTS[kind as usize].fetch_sub(1, Ordering::Relaxed);
}

/// A window MPI made for the crate and has not freed.
struct LiveWindow {
    raw: ffi::MPI_Win,
    /// A shared window, inside the `lock_all` it holds for its whole life.
    locked_all: bool,
}

// SAFETY: a window handle is an identifier MPI resolves internally (a pointer in Open MPI, an
// integer in MPICH); it is only compared here, and passed to MPI at finalize on the thread
// that initialised MPI.
unsafe impl Send for LiveWindow {}

/// Every window MPI made for the crate and has not freed, oldest first.
static WINDOWS: Mutex<Vec<LiveWindow>> = Mutex::new(Vec::new());

/// Counts a window MPI just made.
pub(crate) fn window_made(raw: ffi::MPI_Win) {
    made(Kind::Window);
    let mut windows = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    windows.push(LiveWindow {
        raw,
        locked_all: false,
    });
}

/// Notes that a shared window took (`true`) or left (`false`) its life-long `lock_all`.
pub(crate) fn window_locked_all(raw: ffi::MPI_Win, locked_all: bool) {
    let mut windows = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = windows.iter_mut().rev().find(|w| w.raw == raw) {
        w.locked_all = locked_all;
    }
}

/// Uncounts a window MPI has freed (`raw` is its handle before `MPI_Win_free` reset it).
pub(crate) fn window_freed(raw: ffi::MPI_Win) {
    freed(Kind::Window);
    let mut windows = WINDOWS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = windows.iter().rposition(|w| w.raw == raw) {
        windows.remove(i);
    }
}

/// A datatype kept for the life of MPI (made by `datatype::struct_datatype`).
struct KeptDatatype(ffi::MPI_Datatype);

// SAFETY: a datatype handle is an identifier MPI resolves internally (a pointer in Open MPI,
// an integer in MPICH); it is only passed to MPI at finalize, on the initialising thread.
unsafe impl Send for KeptDatatype {}

/// The datatypes the caches keep, in the order they were made.
static KEPT_DATATYPES: Mutex<Vec<KeptDatatype>> = Mutex::new(Vec::new());

/// Records a datatype kept for the life of MPI, for [`free_kept_datatypes`].
pub(crate) fn datatype_kept(raw: ffi::MPI_Datatype) {
    let mut kept = KEPT_DATATYPES.lock().unwrap_or_else(|e| e.into_inner());
    kept.push(KeptDatatype(raw));
}

/// Frees the datatypes the caches keep, newest first (a struct's before its fields'), just
/// before `MPI_Finalize` (MPICH reports datatypes still alive there). Called by finalize, on
/// the initialising thread; every handle that could use one borrowed `Mpi` and is gone, and the
/// thread gate refuses every call from here on, so the caches' stale copies never reach MPI.
pub(crate) fn free_kept_datatypes() {
    let kept = std::mem::take(&mut *KEPT_DATATYPES.lock().unwrap_or_else(|e| e.into_inner()));
    for KeptDatatype(mut raw) in kept.into_iter().rev() {
        // SAFETY: a committed datatype a cache made; nothing uses it from here on (above).
        let _ = unsafe { ffi::MPI_Type_free(&mut raw) };
    }
}

/// What is still counted, as `"2 windows, 1 communicator"`; `None` when nothing is.
pub(crate) fn leaked() -> Option<String> {
    let parts: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|&kind| {
            let n = COUNTS[kind as usize].load(Ordering::Relaxed);
            (n > 0).then(|| format!("{n} {}(s)", kind.name()))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Frees every window still held (`MPI_Win_unlock_all` first for a shared one), oldest first;
/// returns how many MPI freed. Called by finalize, on the initialising thread, just before
/// `MPI_Finalize`; errors are ignored, as in a drop.
pub(crate) fn free_leaked_windows() -> usize {
    let windows = std::mem::take(&mut *WINDOWS.lock().unwrap_or_else(|e| e.into_inner()));
    let mut count = 0;
    for mut window in windows {
        if window.locked_all {
            // SAFETY: a shared window that took `lock_all` when it was made; an error (it was
            // unlocked already) is harmless.
            let _ = unsafe { ffi::MPI_Win_unlock_all(window.raw) };
        }
        // SAFETY: a window MPI made and nothing freed (it is still registered); its owner was
        // leaked, so nothing else will use the handle.
        if unsafe { ffi::MPI_Win_free(&mut window.raw) } == ffi::MPI_SUCCESS {
            freed(Kind::Window);
            count += 1;
        }
    }
    count
}
