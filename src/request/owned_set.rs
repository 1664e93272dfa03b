//! Owned requests completed together: `MPI_Waitany`, `MPI_Waitsome`, `MPI_Waitall` and the
//! `MPI_Test*` forms (MPI-4.0 §3.7.5) over requests that own their buffers, e.g. a master
//! receiving from whichever worker answers first.
//!
//! An [`OwnedSet`] keeps the handles in one contiguous array (a [`RequestSet`] without a scope)
//! and the buffers beside them; a completed request's buffer comes back with its index and
//! status. Once the set has room for a batch, completing it allocates nothing.

use super::owned::{OwnedBuffer, OwnedRequest};
use super::{RequestSet, RequestStorage};
use crate::Status;
use crate::datatype::repair;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;

/// Owned requests completed together (`MPI_Waitany`, `MPI_Waitsome`, `MPI_Waitall` and the
/// `MPI_Test*` forms, MPI-4.0 §3.7.5): a completed request's buffer comes back with its index
/// and status, e.g. to a master receiving from whichever worker answers first. The handles
/// live in one contiguous array; once the set has room for a batch, completing it allocates
/// nothing.
///
/// Indices are positions in push order. Dropping the set completes what is pending (receives
/// are cancelled first) and drops the buffers; a buffer MPI could not be made to release is
/// leaked, never freed.
pub struct OwnedSet<'comm, B: OwnedBuffer> {
    requests: RequestSet<'comm>,
    /// By index; `None` once handed back.
    buffers: Vec<Option<B>>,
    /// Requests that had completed (a `test` saw it) before they were pushed, to report first.
    ready: Vec<(usize, Status)>,
    /// Scratch for `wait_some`/`test_some`.
    completed: Vec<(usize, Status)>,
}

/// Shows the counts, never the buffers: MPI may be writing those still pending (a derived
/// `Debug` would read them while a receive is in flight).
impl<B: OwnedBuffer> std::fmt::Debug for OwnedSet<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedSet")
            .field("len", &self.len())
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

// SAFETY: as for `OwnedRequest`: handles are identifiers used only through calls that pass the
// thread gate, and the buffers are `Send`; no buffer is read while MPI may write it.
unsafe impl<B: OwnedBuffer> Send for OwnedSet<'_, B> {}

impl<B: OwnedBuffer> Default for OwnedSet<'_, B> {
    fn default() -> Self {
        OwnedSet::with_capacity(0)
    }
}

impl<'comm, B: OwnedBuffer> OwnedSet<'comm, B> {
    /// An empty set.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let buffers = set.wait_all()?; // (index, buffer) of each
    /// assert_eq!(buffers.len(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn new() -> Self {
        OwnedSet::default()
    }

    /// An empty set with room for `n` requests.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut set = ferrompi::OwnedSet::with_capacity(8);
    /// set.push(world.isend_owned(vec![1u8], world.rank(), 0)?);
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// set.wait_all()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        OwnedSet {
            requests: RequestSet::unscoped(RequestStorage::with_capacity(n)),
            buffers: Vec::with_capacity(n),
            ready: Vec::new(),
            completed: Vec::new(),
        }
    }

    /// Adds a request; returns its index.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut set = ferrompi::OwnedSet::new();
    /// let index = set.push(world.isend_owned(vec![1u8], world.rank(), 0)?);
    /// assert_eq!(index, 0);
    /// world.recv(&mut [0u8], world.rank(), 0)?;
    /// set.wait_all()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn push(&mut self, request: OwnedRequest<'comm, B>) -> usize {
        let (raw, buffer, done) = request.into_parts();
        let index = self.requests.push_raw(raw);
        self.buffers.push(Some(buffer));
        if let Some(status) = done {
            self.ready.push((index, status));
        }
        index
    }

    /// Number of requests pushed, complete or not.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// assert_eq!(set.len(), 3);
    /// set.wait_all()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Whether no request was pushed.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let set = ferrompi::OwnedSet::<Vec<u8>>::new();
    /// assert!(set.is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// Number of requests whose buffers have not been handed back.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// set.wait_all()?;
    /// assert_eq!(set.pending(), 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn pending(&self) -> usize {
        self.buffers.iter().filter(|b| b.is_some()).count()
    }

    /// The buffer of completed request `index`, repaired if it received.
    fn hand_back(&mut self, index: usize) -> B {
        debug_assert!(self.requests.is_complete(index));
        crate::gate::count_outstanding(-1);
        let mut buffer = self.buffers[index].take().expect("handed back once");
        if self.requests.is_receive(index) {
            repair(buffer.as_mut_slice());
        }
        buffer
    }

    /// Waits until one pending request completes (`MPI_Waitany`) and hands back its index,
    /// buffer and status; `None` when none is pending.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// while let Some((index, buffer, status)) = set.wait_any()? {
    ///     assert_eq!(buffer, [status.tag() as u8]); // each buffer comes back once its receive is done
    ///     let _ = index;
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Mpi`] (the failed request's buffer stays in the set and is
    /// dropped with it); [`ErrorKind::WrongThread`].
    pub fn wait_any(&mut self) -> Result<Option<(usize, B, Status)>> {
        self.any(true)
    }

    /// Like [`wait_any`](OwnedSet::wait_any) but returns at once (`MPI_Testany`): `None` when no
    /// pending request has completed yet.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let mut done = 0;
    /// while set.pending() > 0 {
    ///     if let Some((_, buffer, _)) = set.test_any()? {
    ///         assert_eq!(buffer.len(), 1);
    ///         done += 1;
    ///     }
    /// }
    /// assert_eq!(done, 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`OwnedSet::wait_any`].
    pub fn test_any(&mut self) -> Result<Option<(usize, B, Status)>> {
        self.any(false)
    }

    fn any(&mut self, block: bool) -> Result<Option<(usize, B, Status)>> {
        if let Some((index, status)) = self.ready.pop() {
            return Ok(Some((index, self.hand_back(index), status)));
        }
        let done = if block {
            self.requests.wait_any()?
        } else {
            self.requests.test_any()?
        };
        Ok(done.map(|(index, status)| (index, self.hand_back(index), status)))
    }

    /// Waits until at least one pending request completes (`MPI_Waitsome`), appending each
    /// completed one's index, buffer and status to `out`; returns how many.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let mut done = Vec::new();
    /// while set.pending() > 0 {
    ///     set.wait_some(&mut done)?;
    /// }
    /// assert_eq!(done.len(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`OwnedSet::wait_any`].
    pub fn wait_some(&mut self, out: &mut Vec<(usize, B, Status)>) -> Result<usize> {
        self.some(true, out)
    }

    /// Like [`wait_some`](OwnedSet::wait_some) but returns at once (`MPI_Testsome`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let mut done = Vec::new();
    /// while set.pending() > 0 {
    ///     set.test_some(&mut done)?;
    /// }
    /// assert_eq!(done.len(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`OwnedSet::wait_any`].
    pub fn test_some(&mut self, out: &mut Vec<(usize, B, Status)>) -> Result<usize> {
        self.some(false, out)
    }

    fn some(&mut self, block: bool, out: &mut Vec<(usize, B, Status)>) -> Result<usize> {
        let mut completed = std::mem::take(&mut self.completed);
        completed.clear();
        completed.append(&mut self.ready);
        let result = if !completed.is_empty() && self.requests.pending() == 0 {
            Ok(0)
        } else if !completed.is_empty() || !block {
            self.requests.test_some(&mut completed)
        } else {
            self.requests.wait_some(&mut completed)
        };
        for &(index, status) in &completed {
            out.push((index, self.hand_back(index), status));
        }
        let n = completed.len();
        self.completed = completed;
        result.map(|_| n)
    }

    /// Waits for every pending request (`MPI_Waitall`) and hands back the buffers not handed
    /// back yet, with their indices, in index order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let mut buffers = set.wait_all()?;
    /// buffers.sort_by_key(|(index, _)| *index);
    /// assert_eq!(buffers[2].1, [2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`RequestSet::wait_all`]; the buffers stay in the set then.
    pub fn wait_all(&mut self) -> Result<Vec<(usize, B)>> {
        self.requests.wait_all()?;
        Ok(self.hand_back_all())
    }

    /// Like [`wait_all`](OwnedSet::wait_all) but returns at once (`MPI_Testall`): the buffers
    /// once every request has completed, `None` (and nothing handed back) before.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::OwnedSet;
    /// let me = world.rank();
    /// let mut set = OwnedSet::new();
    /// for tag in 0..3 {
    ///     set.push(world.irecv_owned(vec![0u8; 1], me, tag)?);
    /// }
    /// for tag in 0..3 {
    ///     world.send(&[tag as u8], me, tag)?;
    /// }
    /// let buffers = loop {
    ///     if let Some(buffers) = set.test_all()? {
    ///         break buffers;
    ///     }
    /// };
    /// assert_eq!(buffers.len(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`OwnedSet::wait_all`].
    pub fn test_all(&mut self) -> Result<Option<Vec<(usize, B)>>> {
        Ok(self.requests.test_all()?.then(|| self.hand_back_all()))
    }

    /// Every buffer not handed back yet, with its index, in index order; all are complete.
    fn hand_back_all(&mut self) -> Vec<(usize, B)> {
        self.ready.clear();
        let indices: Vec<usize> = (0..self.buffers.len())
            .filter(|&i| self.buffers[i].is_some())
            .collect();
        indices
            .into_iter()
            .map(|i| (i, self.hand_back(i)))
            .collect()
    }
}

impl<B: OwnedBuffer> Drop for OwnedSet<'_, B> {
    fn drop(&mut self) {
        self.requests.complete_on_drop();
        for (index, buffer) in self.buffers.iter_mut().enumerate() {
            if buffer.is_some() {
                if self.requests.is_complete(index) {
                    crate::gate::count_outstanding(-1);
                } else {
                    // Still held by MPI: leak the buffer rather than free it.
                    std::mem::forget(buffer.take());
                }
            }
        }
    }
}
