//! Shared-memory windows (`MPI_Win_allocate_shared`, MPI-4.0 §12.2.3): one copy of the data
//! per node, read and written by every process of the node with plain loads and stores.
//!
//! ```no_run
//! # use ferrompi::{Mpi, window::SharedWindow};
//! let mpi = Mpi::init()?;
//! let node = mpi.world().split_shared(0)?;
//! // The node's rank 0 stores a million values; everyone else stores nothing.
//! let len = if node.rank() == 0 { 1 << 20 } else { 0 };
//! let mut table = SharedWindow::<f64>::allocate(&node, len)?;
//! {
//!     let mut write = table.write()?;      // collective
//!     for (i, x) in write.local().iter_mut().enumerate() {
//!         *x = i as f64;
//!     }
//! }
//! let read = table.read()?;                // collective
//! let sum: f64 = read.segment(0).unwrap().iter().sum();
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! # The access model
//!
//! Safe code reaches the window's memory only inside an *epoch*, entered collectively by every
//! process of the window's communicator:
//!
//! | epoch | entered by | gives |
//! |---|---|---|
//! | [`ReadEpoch`] | [`SharedWindow::read`] | `&[T]` of every process's segment (and of the whole window when contiguous) |
//! | [`WriteEpoch`] | [`SharedWindow::write`] | `&mut [T]` of this process's own segment |
//! | [`AtomicEpoch`] | [`SharedWindow::atomic`] | element-wise atomics on any segment (MPI's `fetch_and_op`, `compare_and_swap`) |
//!
//! The epoch borrows the window mutably (`&mut self`), and so do the references it gives out:
//! a process is in at most one epoch at a time, and cannot keep a reference into the window
//! past the start of its next epoch. Leaving an epoch is dropping it (and its references);
//! it costs nothing. Entering one is `MPI_Win_sync` (under a `lock_all` the window holds for
//! its life, MPI-4.0 §12.7), an announcement, a wait until every process has announced the
//! same epoch number, `MPI_Win_sync`, and the check below. The wait is the barrier, done in
//! the window's own memory rather than by `MPI_Barrier`: a store, and a load of each
//! process's word until all have arrived (spinning briefly, then yielding the core and driving
//! MPI's progress with `MPI_Iprobe`, as MPI's own barrier would).
//!
//! # Why it cannot race
//!
//! A *control block* in the window (before rank 0's segment, never handed out) holds, for
//! each process, two announcement words, one per epoch parity. To enter its `s`-th epoch of
//! kind `k`, a process stores `(s, k)` in its word of parity `s % 2` (release), waits until
//! every process's word of parity `s % 2` holds epoch `s`, then loads them all (acquire) and
//! enters only if **all** of them are exactly `(s, k)`; otherwise it returns
//! [`ErrorKind::EpochMismatch`] and refuses every later epoch.
//!
//! Claim: two processes are never inside epochs at the same time unless the epochs have the
//! same number and kind. Suppose process A is inside epoch `(s, k)` and B inside `(s', k')`.
//! A entered after reading B's word as `(s, k)`, and B after reading A's as `(s', k')`. A
//! process's announcements only grow, one per epoch, made before entering it and never while
//! inside one. If `s < s'`, B's announcement `(s', k')` came after it left `s`, but B read
//! A's word as `(s', k')`: A announced `s'` — after leaving `s`, yet A is inside `s`. The
//! symmetric case is the same, so `s = s'`, and then A's only announcement of `s` is `(s, k)`,
//! read by B as `(s', k')`: `k = k'`. So at any moment every process inside an epoch is in
//! the same one: all reading (shared references only), all writing their own disjoint
//! segment, or all using MPI atomics (no references). No reference ever observes memory
//! being written. The release/acquire pair (and the syncs around the barrier) also make every
//! store of epoch `s - 1` visible to every load of epoch `s`.
//!
//! The wait is what makes correct programs pass the check (everybody has announced by the
//! time anybody loads); it is not needed for soundness. Processes whose `s`-th epochs are of
//! different kinds (one calls `write` where the others call `read`) all get
//! [`ErrorKind::EpochMismatch`], instead of a race. A process that stops entering epochs leaves
//! the others waiting for it, as any collective would.
//!
//! The element type is [`bytemuck::Pod`]: another process may have stored any bytes, and
//! every bit pattern is a valid `Pod` value. The memory is zeroed at allocation (each process
//! its own segment) because MPI leaves it undefined.

use super::target::Layout;
use super::{Assert, RawWindow};
use crate::comm::Communicator;
use crate::env::enter;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::info::Info;
use bytemuck::Pod;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

mod epochs;
mod memory;
pub use epochs::{AtomicEpoch, ReadEpoch, WriteEpoch};

/// Epoch kinds in the announcement words (the low two bits).
const READ: u64 = 1;
const WRITE: u64 = 2;
const ATOMIC: u64 = 3;

/// One process's segment, as mapped in this process.
#[derive(Debug)]
struct Segment<T> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T> Clone for Segment<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Segment<T> {}

/// A window of `T` values in memory shared by the processes of one node (MPI-4.0 §12.2.3).
/// See the [module docs](self) for the access model and why it is sound.
pub struct SharedWindow<'c, T: Pod> {
    win: RawWindow<'c>,
    comm: ffi::MPI_Comm,
    rank: usize,
    segments: Box<[Segment<T>]>,
    /// Every segment back to back, when MPI laid them out contiguously.
    whole: Option<Segment<T>>,
    /// `2 × size` announcement words (a cache line apart), in rank 0's segment before its data.
    control: NonNull<AtomicU64>,
    seq: u64,
    poisoned: bool,
    layout: Layout,
    _comm: PhantomData<&'c Communicator<'c>>,
}

impl<T: Pod> std::fmt::Debug for SharedWindow<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedWindow")
            .field("type", &std::any::type_name::<T>())
            .field("lens", &self.layout.lens())
            .field("contiguous", &self.whole.is_some())
            .field("epochs", &self.seq)
            .finish()
    }
}

// SAFETY: the pointers reach memory this window owns (mapped for its life); references into it
// come only from epochs, which need `&mut self`; every MPI call passes the thread gate. `T` is
// plain data; `Send + Sync` bounds pass references between threads only where `T` allows.
unsafe impl<T: Pod + Send + Sync> Send for SharedWindow<'_, T> {}
// SAFETY: `&SharedWindow` gives no access to the memory, only sizes and gated queries.
unsafe impl<T: Pod + Send + Sync> Sync for SharedWindow<'_, T> {}

/// Words between two processes' announcement words: one cache line each, so announcing does
/// not steal the line other processes are announcing in.
const STRIDE: usize = 64 / std::mem::size_of::<AtomicU64>();

/// Bytes of the control block: `2 × size` announcement words a cache line apart, rounded up
/// to `T`'s alignment so rank 0's data is aligned.
fn control_bytes<T>(size: usize) -> usize {
    let align = std::mem::align_of::<T>().max(64);
    (2 * size * STRIDE * std::mem::size_of::<AtomicU64>()).div_ceil(align) * align
}

impl<'c, T: Pod> SharedWindow<'c, T> {
    /// Allocates `len` zeroed values on this process, in memory every process of `comm` can
    /// load and store (`MPI_Win_allocate_shared`, MPI-4.0 §12.2.3). Collective; lengths may
    /// differ, and be zero on all but one process ("the leader stores, everyone reads").
    /// Segments are contiguous (rank order), so a read epoch can give the whole window as one
    /// slice.
    ///
    /// `comm` must be a node's communicator: one from
    /// [`split_shared`](Communicator::split_shared) is known to be; any other is checked with a
    /// `split_shared` of it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// // The node's first rank stores 4 values, the others none ("leader stores, all read").
    /// let len = if node.rank() == 0 { 4 } else { 0 };
    /// let mut table = SharedWindow::<f64>::allocate(&node, len)?; // collective
    /// table.write()?.local().fill(1.0); // each rank writes its own segment (the leader's 4)
    /// assert_eq!(table.read()?.segment(0), Some(&[1.0; 4][..]));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// Every check is made alike on every process, so that all return the same error rather
    /// than some wait in the collective allocation: the lengths and the room of the memory
    /// file system are learnt in one allgather before MPI is called, and whether the kernel
    /// could back each segment with memory (so that no store can raise `SIGBUS`) in one after.
    ///
    /// # Errors
    /// On every process alike: [`ErrorKind::NotSharedMemory`] if `comm`'s processes span nodes;
    /// [`ErrorKind::InvalidArgument`] for a zero-sized `T` or a window larger than an `MPI_Aint`;
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::NoMemory`] if the node's memory cannot hold the
    /// window; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn allocate(comm: &'c Communicator<'_>, len: usize) -> Result<Self> {
        Self::allocate_with_info(comm, len, None)
    }

    /// [`allocate`](SharedWindow::allocate) with hints, e.g. `alloc_shared_noncontig` =
    /// `true` (each segment placed for its own process's NUMA domain; the whole window is
    /// then not one slice).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let hints = ferrompi::Info::with(&mpi, &[("alloc_shared_noncontig", "true")])?;
    /// let window = SharedWindow::<u64>::allocate_with_info(&node, 8, Some(&hints))?;
    /// assert_eq!(window.local_len(), 8);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`SharedWindow::allocate`].
    pub fn allocate_with_info(
        comm: &'c Communicator<'_>,
        len: usize,
        info: Option<&Info<'_>>,
    ) -> Result<Self> {
        const OP: &str = "win_allocate_shared";
        super::disp_unit::<T>(OP)?;
        if !comm.is_known_node_local() {
            let node = comm.node_process_count()?;
            if node != comm.size() {
                return Err(ErrorKind::NotSharedMemory {
                    operation: OP,
                    size: comm.size(),
                    node,
                }
                .into());
            }
        }
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let rank = usize::try_from(comm.rank()).unwrap_or(0);
        let control = control_bytes::<T>(size);
        // Every process's length, and the free room rank 0 sees, before MPI is called.
        let room = if rank == 0 { memory::free_room() } else { 0 };
        let mut agreed = vec![[0u64; 2]; size];
        comm.allgather(
            &[[u64::try_from(len).unwrap_or(u64::MAX), room]],
            &mut agreed,
        )?;
        let lens: Vec<u64> = agreed.iter().map(|entry| entry[0]).collect();
        let own_bytes = plan::<T>(&lens, control, agreed[0][1], OP)?[rank];
        let (win, _base) = RawWindow::allocate(
            ffi::MPI_Win_allocate_shared,
            own_bytes,
            1,
            info,
            comm,
            OP,
            |win| {
                // One passive epoch for the window's whole life: what MPI_Win_sync and the
                // atomics need (MPI-4.0 §12.5.4, §12.7).
                // SAFETY: a valid window; NOCHECK is true, no process locks it exclusively.
                let rc = unsafe { ffi::MPI_Win_lock_all(Assert::NOCHECK.bits(), win) };
                check(rc, OP)?;
                crate::live::window_locked_all(win, true);
                Ok(())
            },
        )?;
        let mut window = SharedWindow {
            win,
            comm: comm.as_raw(),
            rank,
            segments: Box::new([]),
            whole: None,
            control: NonNull::dangling(),
            seq: 0,
            poisoned: false,
            layout: Layout::new(std::mem::size_of::<T>() as ffi::MPI_Aint),
            _comm: PhantomData,
        };
        // MPI may round segment sizes up (Open MPI does, to pages, without the contiguity
        // hint), so the lengths come from the processes themselves. Whether each process
        // could map, zero and back its own segment is agreed before any process returns the
        // window: on failure every process drops (frees) it and returns the same error.
        let mapped = window.map_segments(&lens, control);
        let backed = match &mapped {
            Ok(()) => window.zero_own(control),
            Err(_) => Ok(()),
        };
        let mine = u8::from(mapped.is_err()) | u8::from(backed.is_err()) << 1;
        let mut outcomes = vec![0u8; size];
        comm.allgather(&[mine], &mut outcomes)?;
        if outcomes.iter().any(|&o| o != 0) {
            return Err(agreed_failure(&outcomes, mapped, OP));
        }
        Ok(window)
    }

    /// Zeroes this process's segment (on rank 0 with the control block before it, whose
    /// announcement words start at zero), backing its pages with memory so that no store into
    /// it can raise `SIGBUS` ([`memory::zero_backed`]); before any epoch can read them.
    fn zero_own(&mut self, control: usize) -> std::result::Result<(), String> {
        let own = self.segments[self.rank];
        let bytes = own.len * std::mem::size_of::<T>();
        let (start, bytes) = if self.rank == 0 {
            (self.control.as_ptr().cast::<u8>(), control + bytes)
        } else {
            (own.ptr.as_ptr().cast::<u8>(), bytes)
        };
        // SAFETY: this process's segment (on rank 0 preceded by the control block, `control`
        // bytes, the two contiguous): memory MPI mapped for the window, which no other process
        // accesses before the agreement that follows; all-zero bytes are valid `Pod` values
        // and announcement words.
        unsafe { memory::zero_backed(start, bytes) }
    }

    /// Finds every process's segment (`MPI_Win_shared_query`) and the control block, and
    /// whether the segments are contiguous.
    fn map_segments(&mut self, lens: &[u64], control: usize) -> Result<()> {
        const OP: &str = "win_shared_query";
        let mut segments = Vec::with_capacity(lens.len());
        let _gate = enter(OP)?;
        for (r, &len) in lens.iter().enumerate() {
            let mut bytes: ffi::MPI_Aint = 0;
            let mut unit: c_int = 0;
            let mut base: *mut u8 = std::ptr::null_mut();
            // SAFETY: a valid window and rank; MPI writes the size, unit and address.
            let rc = unsafe {
                ffi::MPI_Win_shared_query(
                    self.win.raw,
                    c_int::try_from(r).unwrap_or(c_int::MAX),
                    &mut bytes,
                    &mut unit,
                    (&raw mut base).cast(),
                )
            };
            check(rc, OP)?;
            let mut bytes = usize::try_from(bytes).unwrap_or(0);
            if r == 0 {
                if base.is_null() || bytes < control || base.align_offset(8) != 0 {
                    return Err(bad_segment(
                        OP,
                        "rank 0's segment has no room for the control block",
                    ));
                }
                self.control = NonNull::new(base.cast()).unwrap_or(NonNull::dangling());
                // SAFETY: `control` bytes of rank 0's segment are the control block.
                base = unsafe { base.add(control) };
                bytes -= control;
            }
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            if bytes / std::mem::size_of::<T>() < len {
                return Err(bad_segment(
                    OP,
                    "a segment is smaller than its process asked for",
                ));
            }
            let ptr = match NonNull::new(base.cast::<T>()) {
                Some(p) if len > 0 => {
                    if p.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
                        return Err(bad_segment(
                            OP,
                            "a segment is not aligned for the element type",
                        ));
                    }
                    p
                }
                _ => NonNull::dangling(),
            };
            segments.push(Segment { ptr, len });
        }
        self.whole = contiguous(&segments);
        // Rank 0's elements start after the control block: `control` bytes, and this window's
        // displacement unit is one byte.
        self.layout.set_lens(
            segments.iter().map(|s| s.len).collect(),
            control as ffi::MPI_Aint,
        );
        self.segments = segments.into_boxed_slice();
        Ok(())
    }

    /// Process `rank`'s announcement word of `parity`.
    #[inline(always)]
    fn slot(&self, parity: usize, rank: usize) -> &AtomicU64 {
        let size = self.segments.len();
        debug_assert!(parity < 2 && rank < size);
        // SAFETY: the control block holds `2 × size × STRIDE` aligned words, alive with the
        // window and only ever accessed atomically.
        unsafe { &*self.control.as_ptr().add((parity * size + rank) * STRIDE) }
    }

    /// Enters an epoch of `kind` with every other process; see the module docs.
    fn enter(&mut self, kind: u64, operation: &'static str) -> Result<()> {
        if self.poisoned {
            return Err(ErrorKind::EpochMismatch {
                operation,
                reason: "an earlier epoch went out of step, so the window refuses new ones".into(),
            }
            .into());
        }
        // A thread the thread level refuses changes nothing: the epoch number stays, and the
        // window stays usable from the right thread.
        drop(enter(operation)?);
        self.seq += 1;
        let word = self.seq << 2 | kind;
        let parity = (self.seq & 1) as usize;
        let arrived = self
            .win_sync(operation)
            .map(|()| self.slot(parity, self.rank).store(word, Ordering::Release))
            .and_then(|()| self.await_arrivals(parity, operation))
            .and_then(|()| self.win_sync(operation));
        if let Err(e) = arrived {
            self.poisoned = true;
            return Err(e);
        }
        let size = self.segments.len();
        if let Some(other) =
            (0..size).find(|&r| self.slot(parity, r).load(Ordering::Acquire) != word)
        {
            self.poisoned = true;
            let theirs = self.slot(parity, other).load(Ordering::Acquire);
            return Err(ErrorKind::EpochMismatch {
                operation,
                reason: format!(
                    "rank {} entered {}, rank {other} announced {}",
                    self.rank,
                    describe(word),
                    describe(theirs)
                ),
            }
            .into());
        }
        Ok(())
    }

    /// Waits until every process has announced this process's current epoch number in the
    /// words of `parity`: the barrier, in the window's own memory. Spins briefly, then yields
    /// the core and drives MPI's progress engine (`MPI_Iprobe`) while it waits, so a process
    /// that needs this one's progress to get here (a rendezvous send) still does.
    #[inline]
    fn await_arrivals(&self, parity: usize, operation: &'static str) -> Result<()> {
        const SPINS: u32 = 4;
        let size = self.segments.len();
        let mut waiting_for = 0;
        let mut turns = 0u32;
        loop {
            while waiting_for < size
                && self.slot(parity, waiting_for).load(Ordering::Acquire) >> 2 >= self.seq
            {
                waiting_for += 1;
            }
            if waiting_for == size {
                return Ok(());
            }
            turns = turns.wrapping_add(1);
            if turns <= SPINS {
                std::hint::spin_loop();
            } else {
                // Give the core to a process that has not arrived (ranks may outnumber
                // cores), and now and then let MPI progress.
                std::thread::yield_now();
                if turns.is_multiple_of(SPINS) {
                    self.progress(operation)?;
                }
            }
        }
    }

    /// One turn of MPI's progress engine, by probing the window's communicator.
    #[cold]
    fn progress(&self, operation: &'static str) -> Result<()> {
        let _gate = enter(operation)?;
        let mut flag: c_int = 0;
        // SAFETY: the valid communicator the window was made on (borrowed for 'c); the
        // status is ignored. A probe receives nothing.
        let rc = unsafe {
            ffi::MPI_Iprobe(
                ffi::MPI_ANY_SOURCE,
                ffi::MPI_ANY_TAG,
                self.comm,
                &mut flag,
                ffi::MPI_STATUS_IGNORE,
            )
        };
        check(rc, operation)
    }

    /// `MPI_Win_sync`: this process's stores and the window agree (MPI-4.0 §12.5.4; the memory model, §12.7).
    #[inline]
    fn win_sync(&self, operation: &'static str) -> Result<()> {
        let _gate = enter(operation)?;
        // SAFETY: a valid window inside the passive epoch it holds.
        check(unsafe { ffi::MPI_Win_sync(self.win.raw) }, operation)
    }

    /// The number of values in `rank`'s segment; `None` for a rank outside the communicator.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 5)?;
    /// assert_eq!(w.len_of(0), Some(5));
    /// assert_eq!(w.len_of(node.size()), None); // no such rank
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len_of(&self, rank: i32) -> Option<usize> {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.segments.get(r))
            .map(|s| s.len)
    }

    /// The number of values in this process's segment.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 5)?;
    /// assert_eq!(w.local_len(), 5);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn local_len(&self) -> usize {
        self.segments[self.rank].len
    }

    /// The number of values in the whole window, all segments together.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 5)?;
    /// assert_eq!(w.len(), 5 * node.size() as usize); // every segment together
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.segments.iter().map(|s| s.len).sum()
    }

    /// Whether the whole window holds no values.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 0)?;
    /// assert!(w.is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the segments lie back to back in rank order, so a read epoch gives the whole
    /// window as one slice ([`ReadEpoch::as_slice`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 5)?;
    /// println!("one slice of the whole window: {}", w.is_contiguous());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.whole.is_some()
    }

    /// How many epochs this process has entered (or tried to).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let mut w = SharedWindow::<u8>::allocate(&node, 1)?;
    /// let before = w.epochs();
    /// drop(w.read()?);
    /// assert_eq!(w.epochs(), before + 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn epochs(&self) -> u64 {
        self.seq
    }

    /// The hints MPI uses for the window (`MPI_Win_get_info`, MPI-4.0 §12.2.7).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 1)?;
    /// let hints = w.info()?; // MPI_Win_get_info: what the MPI applied
    /// let _ = hints.entries()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn info(&self) -> Result<Info<'c>> {
        self.win.info()
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`, and is inside a
    /// `lock_all` epoch for its whole life.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 1)?;
    /// let _raw: ferrompi::ffi::MPI_Win = w.as_raw();
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn as_raw(&self) -> ffi::MPI_Win {
        self.win.raw
    }

    /// Frees the window (`MPI_Win_unlock_all`, `MPI_Win_free`; collective), reporting errors;
    /// dropping it does the same silently.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::SharedWindow;
    /// let node = world.split_shared(0)?; // the processes sharing this one's memory
    /// let w = SharedWindow::<u8>::allocate(&node, 1)?;
    /// w.free()?; // collective; dropping does the same
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn free(mut self) -> Result<()> {
        let unlocked = self.unlock();
        let freed = self.win.free();
        unlocked.and(freed)
    }

    fn unlock(&mut self) -> Result<()> {
        const OP: &str = "win_unlock_all";
        if self.win.raw == ffi::MPI_WIN_NULL {
            return Ok(());
        }
        let _gate = enter(OP)?;
        // SAFETY: a valid window inside the lock_all taken at allocation.
        check(unsafe { ffi::MPI_Win_unlock_all(self.win.raw) }, OP)?;
        crate::live::window_locked_all(self.win.raw, false);
        Ok(())
    }
}

impl<T: Pod> Drop for SharedWindow<'_, T> {
    fn drop(&mut self) {
        let _ = self.unlock();
        // `self.win` frees the window when it drops, after this.
    }
}

/// The segments as one run, if each starts where the previous non-empty one ends.
fn contiguous<T>(segments: &[Segment<T>]) -> Option<Segment<T>> {
    let mut run: Option<Segment<T>> = None;
    for s in segments.iter().filter(|s| s.len > 0) {
        run = Some(match run {
            None => *s,
            Some(r) => {
                // SAFETY: one past the end of a segment MPI mapped, an in-bounds address.
                let end = unsafe { r.ptr.as_ptr().add(r.len) };
                if end != s.ptr.as_ptr() {
                    return None;
                }
                Segment {
                    ptr: r.ptr,
                    len: r.len + s.len,
                }
            }
        });
    }
    Some(run.unwrap_or(Segment {
        ptr: NonNull::dangling(),
        len: 0,
    }))
}

/// The bytes each process asks MPI for (rank 0's with the control block before its values),
/// from every process's length: made alike on every process, so that all refuse alike a
/// window that does not fit an `MPI_Aint` or the free `room` of the memory file system.
fn plan<T>(
    lens: &[u64],
    control: usize,
    room: u64,
    operation: &'static str,
) -> Result<Vec<ffi::MPI_Aint>> {
    let mut total: ffi::MPI_Aint = 0;
    let mut own = Vec::with_capacity(lens.len());
    for (r, &len) in lens.iter().enumerate() {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let data = super::window_bytes::<T>(len, operation)?;
        let bytes = if r == 0 {
            ffi::MPI_Aint::try_from(control)
                .ok()
                .and_then(|control| data.checked_add(control))
        } else {
            Some(data)
        };
        total = match bytes.and_then(|bytes| total.checked_add(bytes)) {
            Some(total) => total,
            None => {
                return Err(ErrorKind::InvalidArgument {
                    operation,
                    reason: "the whole window does not fit an MPI_Aint".into(),
                }
                .into());
            }
        };
        own.push(bytes.unwrap_or(0));
    }
    memory::check_room(
        u64::try_from(total).unwrap_or(u64::MAX),
        lens.len(),
        room,
        operation,
    )?;
    Ok(own)
}

/// The error every process returns when some could not map or back their segment
/// (`outcomes`: bit 0 mapping, bit 1 backing, per rank): a process that failed returns its own
/// mapping error; a failure to back a segment is the same [`ErrorKind::NoMemory`] everywhere.
#[cold]
fn agreed_failure(outcomes: &[u8], mapped: Result<()>, operation: &'static str) -> Error {
    let ranks = |bit: u8| {
        let failed: Vec<String> = (outcomes.iter().enumerate())
            .filter(|(_, o)| *o & bit != 0)
            .map(|(r, _)| r.to_string())
            .collect();
        failed.join(", ")
    };
    let unbacked = ranks(2);
    if !unbacked.is_empty() {
        return ErrorKind::NoMemory {
            operation,
            reason: format!(
                "the node's memory could not back the shared segment of rank(s) {unbacked}; \
                 storing into it would have raised SIGBUS"
            ),
        }
        .into();
    }
    mapped.err().unwrap_or_else(|| {
        bad_segment(
            operation,
            &format!("rank(s) {} could not map the window", ranks(1)),
        )
    })
}

#[cold]
fn bad_segment(operation: &'static str, reason: &str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("MPI returned an unusable shared segment: {reason}"),
    }
    .into()
}

/// An announcement word, for error messages.
fn describe(word: u64) -> String {
    let kind = match word & 3 {
        READ => "read",
        WRITE => "write",
        ATOMIC => "atomic",
        _ => "no",
    };
    format!("{kind} epoch #{}", word >> 2)
}
