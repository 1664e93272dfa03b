//! The target side of general active-target synchronization (MPI-4.0 §12.5.2): a window
//! exposed to a group with `MPI_Win_post` stays exposed until [`Exposure::wait`],
//! [`Exposure::test`] or drop (`MPI_Win_wait`, `MPI_Win_test`). The origin side
//! ([`Window::access`]) is in `epoch`.

use super::Assert;
use super::epoch::fence_still_open;
use super::rma::{EXPOSED, FENCE_OPEN, Window};
use crate::comm::group::Group;
use crate::datatype::Equivalence;
use crate::env::enter;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;
use std::sync::atomic::Ordering;

impl<'c, T: Equivalence> Window<'c, T> {
    /// Exposes this window to the processes of `group` (`MPI_Win_post`, MPI-4.0 §12.5.2) until
    /// the returned epoch is waited for or dropped (`MPI_Win_wait`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let everyone = world.group()?;
    /// let exposure = win.expose(&everyone, Assert::empty())?; // others may now access this rank
    /// win.access(&everyone, Assert::empty(), |_epoch| ())?;
    /// exposure.wait()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMisuse`] if an exposure epoch is open already, or a fence epoch (see
    /// [`fence`](Window::fence)); [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn expose(&self, group: &Group<'_>, assert: Assert) -> Result<Exposure<'_, 'c, T>> {
        const OP: &str = "win_post";
        let exposed = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (state & (EXPOSED | FENCE_OPEN) == 0).then_some(state | EXPOSED)
            });
        match exposed {
            Ok(_) => {}
            Err(state) if state & FENCE_OPEN != 0 => return Err(fence_still_open(OP)),
            Err(_) => {
                return Err(ErrorKind::EpochMisuse {
                    operation: OP,
                    reason: "the window is exposed already".into(),
                }
                .into());
            }
        }
        let posted = enter(OP).and_then(|_gate| {
            // SAFETY: a valid window and group.
            check(
                unsafe { ffi::MPI_Win_post(group.as_raw(), assert.bits(), self.win.raw) },
                OP,
            )
        });
        match posted {
            Ok(()) => Ok(Exposure { window: self }),
            Err(e) => {
                self.state.fetch_and(!EXPOSED, Ordering::AcqRel);
                Err(e)
            }
        }
    }
}

/// An exposure epoch (`MPI_Win_post`): the window is the target of the group's access epochs
/// until [`wait`](Exposure::wait) or drop (`MPI_Win_wait`, MPI-4.0 §12.5.2). Whether it is
/// still open is the window's state, so a leaked `Exposure` is ended when the window is freed.
#[must_use = "dropping the exposure waits for the access epochs to complete"]
pub struct Exposure<'w, 'c, T: Equivalence> {
    window: &'w Window<'c, T>,
}

impl<T: Equivalence> std::fmt::Debug for Exposure<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exposure")
            .field("open", &self.window.exposed())
            .finish()
    }
}

impl<T: Equivalence> Exposure<'_, '_, T> {
    /// Waits until every process of the group has completed its access epoch (`MPI_Win_wait`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let everyone = world.group()?;
    /// let exposure = win.expose(&everyone, Assert::empty())?;
    /// win.access(&everyone, Assert::empty(), |_| ())?;
    /// exposure.wait()?; // MPI_Win_wait: every origin has completed
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn wait(mut self) -> Result<()> {
        self.close()
    }

    /// Whether every access epoch has completed, without blocking (`MPI_Win_test`); once
    /// `true`, the exposure is over.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Window, window::Assert};
    /// let (me, size) = (world.rank(), world.size());
    /// let win = Window::<i64>::allocate(&world, 4)?;
    /// let everyone = world.group()?;
    /// let mut exposure = win.expose(&everyone, Assert::empty())?;
    /// win.access(&everyone, Assert::empty(), |_| ())?;
    /// while !exposure.test()? {} // MPI_Win_test
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn test(&mut self) -> Result<bool> {
        const OP: &str = "win_test";
        if !self.window.exposed() {
            return Ok(true);
        }
        let _gate = enter(OP)?;
        let mut flag: c_int = 0;
        // SAFETY: a valid window with an exposure epoch open; writes one int.
        let rc = unsafe { ffi::MPI_Win_test(self.window.win.raw, &mut flag) };
        check(rc, OP)?;
        if flag != 0 {
            self.window.state.fetch_and(!EXPOSED, Ordering::AcqRel);
        }
        Ok(flag != 0)
    }

    fn close(&mut self) -> Result<()> {
        if self.window.exposed() {
            self.window.end_exposure()
        } else {
            Ok(())
        }
    }
}

impl<T: Equivalence> Drop for Exposure<'_, '_, T> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
