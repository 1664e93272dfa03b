//! Completing a [`RequestSet`]: waits and tests for all, any or some of its requests
//! (`MPI_Waitall`, `MPI_Waitany`, `MPI_Waitsome` and the `MPI_Test*` forms, MPI-4.0 §3.7.5),
//! the accounting of what completed, and the completion of what a dropped set leaves pending.

use super::RequestSet;
use crate::Status;
use crate::env::enter_with;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::gate::Pass;
use crate::request::{Kind, RawRequest, Repair};
use std::ffi::c_int;

impl RequestSet<'_> {
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
    /// [`ErrorKind::Mpi`] (class `InStatus` when some operations failed; use
    /// [`wait_all_statuses`](RequestSet::wait_all_statuses) to see which);
    /// [`ErrorKind::WrongThread`].
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
    #[inline(always)]
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
    #[inline(always)]
    pub fn test_any(&mut self) -> Result<Option<(usize, Status)>> {
        self.any("test_any", false)
    }

    /// [`wait_any`](RequestSet::wait_any) (`block`) or [`test_any`](RequestSet::test_any).
    #[inline(always)]
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
    #[inline]
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
    #[inline(always)]
    pub fn clear(&mut self) -> Result<()> {
        if self.pending() > 0 {
            self.clear_slow()?;
        }
        self.memory.raw.clear();
        self.memory.receives.clear();
        self.repairs.clear();
        self.completed = 0;
        Ok(())
    }

    /// The wait of [`clear`](Self::clear) for requests still pending, out of line: a set
    /// cleared after its `wait_all` inlines only the test.
    #[inline(never)]
    fn clear_slow(&mut self) -> Result<()> {
        self.wait_all()
    }

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
