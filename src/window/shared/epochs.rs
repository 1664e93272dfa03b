//! How a [`SharedWindow`] enters its epochs, and the access each gives: [`ReadEpoch`] (every
//! segment as `&[T]`) and [`WriteEpoch`] (one's own segment as `&mut [T]`), separated by
//! `MPI_Win_sync` and a barrier (MPI-4.0 §12.7), and [`AtomicEpoch`] (element-wise atomics,
//! §12.3.4, under `MPI_Win_lock_all`, §12.5.3). Why this is sound: the parent module's docs.

use super::{ATOMIC, READ, Segment, SharedWindow, WRITE};
use crate::datatype::Equivalence;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::op::{AccumulateOp, Bitwise, NoOp, Replace};
use crate::window::target::{Calls, operand};
use bytemuck::Pod;
use std::marker::PhantomData;

impl<T: Pod> SharedWindow<'_, T> {
    /// Enters a read epoch with every other process (collective): shared references to every
    /// segment until the next epoch.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u32>::allocate(&node, 2)?;
    /// w.write()?.local().fill(node.rank() as u32);
    /// let read = w.read()?; // collective: everyone's writes are visible now
    /// for r in 0..node.size() {
    ///     assert_eq!(read.segment(r), Some(&[r as u32; 2][..]));
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::EpochMismatch`] if the processes did not all call `read` as their next epoch
    /// (or an earlier epoch went out of step); [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn read(&mut self) -> Result<ReadEpoch<'_, T>> {
        self.enter(READ, "shared_read")?;
        Ok(ReadEpoch { window: self })
    }

    /// Enters a write epoch with every other process (collective): this process's segment,
    /// mutably, until the next epoch.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<i64>::allocate(&node, 3)?;
    /// {
    ///     let mut write = w.write()?; // collective; `&mut` of this rank's segment only
    ///     write.local().copy_from_slice(&[1, 2, 3]);
    /// } // the epoch ends when it drops
    /// assert_eq!(w.read()?.local(), &[1, 2, 3]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`SharedWindow::read`].
    pub fn write(&mut self) -> Result<WriteEpoch<'_, T>> {
        self.enter(WRITE, "shared_write")?;
        let own = self.segments[self.rank];
        Ok(WriteEpoch {
            own,
            _window: PhantomData,
        })
    }

    /// Enters an atomic epoch with every other process (collective): element-wise atomic
    /// operations on any segment, no references.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// use ferrompi::op::Sum;
    /// let mut counter = SharedWindow::<u64>::allocate(&node, if node.rank() == 0 { 1 } else { 0 })?;
    /// {
    ///     let atomic = counter.atomic()?; // collective
    ///     atomic.fetch_and_op(1, 0, 0, Sum)?; // every rank adds 1 to the leader's counter
    /// }
    /// assert_eq!(counter.read()?.segment(0), Some(&[node.size() as u64][..]));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`SharedWindow::read`].
    pub fn atomic(&mut self) -> Result<AtomicEpoch<'_, T>>
    where
        T: Equivalence,
    {
        self.enter(ATOMIC, "shared_atomic")?;
        Ok(AtomicEpoch { window: self })
    }
}

/// A read epoch of a [`SharedWindow`]: every process reads, no process writes. References
/// it gives out keep the window borrowed, so they end before the next epoch begins:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::SharedWindow};
/// # let mpi = Mpi::init().unwrap();
/// # let node = mpi.world().split_shared(0).unwrap();
/// let mut win = SharedWindow::<u64>::allocate(&node, 8).unwrap();
/// let seen = win.read().unwrap().local();
/// let mut w = win.write().unwrap(); // error[E0499]: cannot borrow `win` as mutable twice
/// w.local()[0] = seen[0] + 1;
/// ```
#[derive(Debug)]
pub struct ReadEpoch<'w, T: Pod> {
    window: &'w SharedWindow<'w, T>,
}

impl<'w, T: Pod> ReadEpoch<'w, T> {
    /// Process `rank`'s segment; `None` for a rank outside the communicator.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u16>::allocate(&node, 1)?;
    /// w.write()?.local()[0] = node.rank() as u16;
    /// let read = w.read()?;
    /// assert_eq!(read.segment(0), Some(&[0u16][..]));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn segment(&self, rank: i32) -> Option<&'w [T]> {
        let window: &'w SharedWindow<'w, T> = self.window;
        let s = usize::try_from(rank)
            .ok()
            .and_then(|r| window.segments.get(r))?;
        // SAFETY: a mapped segment of `len` initialised values (zeroed at allocation, then
        // written only in write epochs); in a read epoch no process writes (module docs), and
        // the reference keeps the window borrowed, so it ends before this process's next epoch.
        Some(unsafe { std::slice::from_raw_parts(s.ptr.as_ptr(), s.len) })
    }

    /// This process's own segment.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u16>::allocate(&node, 2)?;
    /// w.write()?.local().fill(7);
    /// assert_eq!(w.read()?.local(), &[7, 7]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn local(&self) -> &'w [T] {
        let rank = i32::try_from(self.window.rank).unwrap_or(0);
        self.segment(rank).unwrap_or(&[])
    }

    /// Every segment in rank order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u16>::allocate(&node, 1)?;
    /// w.write()?.local()[0] = 1;
    /// let read = w.read()?;
    /// let total: u16 = read.segments().map(|s| s.iter().sum::<u16>()).sum();
    /// assert_eq!(total, node.size() as u16);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn segments(&self) -> impl Iterator<Item = &'w [T]> + '_ {
        (0..self.window.segments.len()).filter_map(|r| self.segment(r as i32))
    }

    /// The whole window as one slice, when the segments are contiguous
    /// ([`SharedWindow::is_contiguous`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u16>::allocate(&node, 1)?;
    /// w.write()?.local()[0] = 1;
    /// let read = w.read()?;
    /// if let Some(all) = read.as_slice() { // when the segments are contiguous
    ///     assert_eq!(all.len(), node.size() as usize);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn as_slice(&self) -> Option<&'w [T]> {
        let window: &'w SharedWindow<'w, T> = self.window;
        let s = window.whole?;
        // SAFETY: as in `segment`: `whole` spans the segments, which MPI mapped back to back.
        Some(unsafe { std::slice::from_raw_parts(s.ptr.as_ptr(), s.len) })
    }
}

/// A write epoch of a [`SharedWindow`]: each process writes its own segment, none reads.
/// `&mut` of one's own segment only; other segments are not reachable:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, window::SharedWindow};
/// # let mpi = Mpi::init().unwrap();
/// # let node = mpi.world().split_shared(0).unwrap();
/// let mut win = SharedWindow::<u64>::allocate(&node, 8).unwrap();
/// let mut w = win.write().unwrap();
/// let other = w.segment(1); // error[E0599]: no method named `segment`
/// ```
#[derive(Debug)]
pub struct WriteEpoch<'w, T: Pod> {
    own: Segment<T>,
    _window: PhantomData<&'w mut [T]>,
}

impl<'w, T: Pod> WriteEpoch<'w, T> {
    /// This process's segment.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<f32>::allocate(&node, 3)?;
    /// let mut write = w.write()?;
    /// write.local()[2] = 0.5; // only this rank's segment is writable
    /// drop(write);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn local(&mut self) -> &mut [T] {
        // SAFETY: this process's segment; in a write epoch no other process reads or writes it
        // (module docs), and the reference borrows the epoch, which borrows the window.
        unsafe { std::slice::from_raw_parts_mut(self.own.ptr.as_ptr(), self.own.len) }
    }

    /// This process's segment, for the rest of the epoch.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<f32>::allocate(&node, 3)?;
    /// let mine: &mut [f32] = w.write()?.into_local(); // keeps the epoch's borrow
    /// mine.fill(2.0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn into_local(self) -> &'w mut [T] {
        // SAFETY: as in `local`; the epoch is consumed, so this is the only reference, and it
        // keeps the window borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.own.ptr.as_ptr(), self.own.len) }
    }
}

/// An atomic epoch of a [`SharedWindow`]: element-wise atomic operations (MPI-4.0 §12.3.4,
/// each followed by `MPI_Win_flush`) on any process's segment, and no references.
#[derive(Debug)]
pub struct AtomicEpoch<'w, T: Pod + Equivalence> {
    window: &'w SharedWindow<'w, T>,
}

impl<T: Pod + Equivalence> AtomicEpoch<'_, T> {
    fn calls(&self) -> Calls {
        // `AtomicEpoch` is `Sync`: its calls pass the thread gate each time.
        Calls {
            win: self.window.win.raw,
            pass: None,
        }
    }

    /// Atomically combines `value` into element `index` of `rank`'s segment and returns its
    /// previous value (`MPI_Fetch_and_op`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// use ferrompi::op::Sum;
    /// let mut w = SharedWindow::<u32>::allocate(&node, 1)?;
    /// let atomic = w.atomic()?;
    /// let before = atomic.fetch_and_op(5, node.rank(), 0, Sum)?; // on this rank's own element
    /// assert_eq!(before, 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::OutOfBounds`]; [`ErrorKind::InvalidArgument`] if
    /// `T` is several MPI elements; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`]. A failed flush
    /// after the call succeeded aborts the job (MPI may still write the result's place; see
    /// [`WindowEpoch::put_now`](crate::window::WindowEpoch::put_now)).
    #[inline]
    pub fn fetch_and_op<O: AccumulateOp<T>>(
        &self,
        value: T,
        rank: i32,
        index: usize,
        op: O,
    ) -> Result<T> {
        let t = (self.window.layout).locate::<T>(rank, index, 1, "fetch_and_op")?;
        // SAFETY: a valid window in its lifelong passive epoch; no reference observes the
        // target element; `T: Pod`, valid for every bit pattern.
        unsafe { self.calls().fetch_and_op(value, t, operand(&op)) }
    }

    /// Atomically reads element `index` of `rank`'s segment (`MPI_Fetch_and_op` with
    /// `MPI_NO_OP`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u32>::allocate(&node, 1)?;
    /// let atomic = w.atomic()?;
    /// assert_eq!(atomic.load(node.rank(), 0)?, 0); // an atomic read
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`AtomicEpoch::fetch_and_op`].
    pub fn load(&self, rank: i32, index: usize) -> Result<T> {
        self.fetch_and_op(T::zeroed(), rank, index, NoOp)
    }

    /// Atomically writes element `index` of `rank`'s segment (`MPI_Fetch_and_op` with
    /// `MPI_REPLACE`), returning the previous value.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u32>::allocate(&node, 1)?;
    /// let atomic = w.atomic()?;
    /// assert_eq!(atomic.swap(9, node.rank(), 0)?, 0); // the old value
    /// assert_eq!(atomic.load(node.rank(), 0)?, 9);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`AtomicEpoch::fetch_and_op`].
    pub fn swap(&self, value: T, rank: i32, index: usize) -> Result<T> {
        self.fetch_and_op(value, rank, index, Replace)
    }

    /// Atomically replaces element `index` of `rank`'s segment with `value` if it equals
    /// `compare`; returns the previous value (`MPI_Compare_and_swap`). Integer types.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u64>::allocate(&node, if node.rank() == 0 { 1 } else { 0 })?;
    /// let atomic = w.atomic()?;
    /// // One rank wins the slot: it finds 0 there and writes its rank + 1.
    /// let found = atomic.compare_and_swap(node.rank() as u64 + 1, 0, 0, 0)?;
    /// let won = found == 0;
    /// let _ = won;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`AtomicEpoch::fetch_and_op`].
    #[inline]
    pub fn compare_and_swap(&self, value: T, compare: T, rank: i32, index: usize) -> Result<T>
    where
        T: Bitwise,
    {
        let t = (self.window.layout).locate::<T>(rank, index, 1, "compare_and_swap")?;
        // SAFETY: as in `fetch_and_op`; `T: Bitwise`, an integer type.
        unsafe { self.calls().compare_and_swap(value, compare, t) }
    }
}
