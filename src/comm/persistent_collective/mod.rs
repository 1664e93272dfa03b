//! Persistent collectives (MPI-4.0 §6.13): `barrier_init`, `bcast_init`, `allreduce_init`, …,
//! set up once and then started and completed many times through a [`PersistentRequest`].
//!
//! # Which path
//! | MPI | path | [`persistent_collectives`] |
//! |---|---|---|
//! | MPI-4 (MPICH 4 and 5, Open MPI 5) | `MPI_Allreduce_init`, … | [`PersistentCollectives::Native`] |
//! | Open MPI 4.1 with its `pcollreq` extension (`mpi-ext.h`) | `MPIX_Allreduce_init`, … | [`PersistentCollectives::OpenMpiExtension`] |
//! | neither | each `start` issues the matching nonblocking collective (`MPI_Iallreduce`, …) on a private duplicate of the communicator | [`PersistentCollectives::Emulated`] |
//!
//! `build.rs` picks the path from the declarations in `mpi.h` / `mpi-ext.h` and prints it
//! (`FERROMPI_BUILD_PROBE`); [`persistent_collectives`] reports it at run time, and
//! [`PersistentRequest::is_emulated`] per request. [`set_persistent_emulation`] forces the
//! emulated path, to compare the two or to test it.
//!
//! # Ownership
//! The request owns its buffers (see [`Buffers`]), a copy of the
//! partitions of v-collectives (MPI reads the counts at every start) and the op, which must be
//! an [`OwnedOp`]: a predefined op, or a [`UserOp`](crate::UserOp) moved in. So a leaked request
//! leaks them and MPI never reads freed memory.
//!
//! # Large counts
//! `bcast_init`, the reductions and `gather`/`scatter`/`allgather`/`alltoall_init` take buffers
//! of more than `i32::MAX` elements on every MPI: the request keeps a derived datatype spanning
//! each block (a spanning element and a *span op* for reductions, see `comm::large`), so the
//! call is the same on every path. MPI-4's `_init_c` forms are not used. On MPICH before 4.2 a
//! `bcast_init` of 2 GiB or more is an `MPI_Alltoallw_init` (MPICH's broadcast schedule fails
//! there). The v-collectives, `alltoallw_init` and `reduce_scatter_init` with blocks or offsets
//! over `int` are an [`ErrorKind::CountOverflow`].
//!
//! Every call here is collective: all ranks create the same requests in the same order. They
//! may start them in any order (MPI-4.0 §6.13), on every path: an emulated request runs on a
//! private duplicate of the communicator, made by its `*_init`, so its operations match only
//! each other.
//!
//! ```no_run
//! use ferrompi::{Max, Mpi};
//! let mpi = Mpi::init()?;
//! let world = mpi.world();
//! let mut bound = world.allreduce_init_in_place(vec![0.0f64; 2], Max)?;
//! for iteration in 0..100 {
//!     bound.buffer_mut().copy_from_slice(&[iteration as f64, world.rank() as f64]);
//!     bound.start()?.wait()?;
//!     assert_eq!(bound.buffer()[1], (world.size() - 1) as f64);
//! }
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! While an operation is active its buffers cannot be reached, and a request cannot be started
//! twice; both are compile errors:
//!
//! ```compile_fail
//! # use ferrompi::{Mpi, Sum};
//! # let mpi = Mpi::init().unwrap();
//! # let world = mpi.world();
//! let mut sum = world.allreduce_init_in_place(vec![1.0f64; 4], Sum).unwrap();
//! let active = sum.start().unwrap();
//! sum.buffer_mut()[0] = 2.0; // error: `sum` is borrowed by `active`
//! active.wait().unwrap();
//! ```
//!
//! ```compile_fail
//! # use ferrompi::{Mpi, Sum};
//! # let mpi = Mpi::init().unwrap();
//! # let world = mpi.world();
//! let mut sum = world.allreduce_init_in_place(vec![1.0f64; 4], Sum).unwrap();
//! let active = sum.start().unwrap();
//! let again = sum.start(); // error: `sum` is borrowed by `active`
//! active.wait().unwrap();
//! ```
//!
//! A freed request cannot be used: freeing consumes it.
//!
//! ```compile_fail
//! # use ferrompi::{Mpi, Sum};
//! # let mpi = Mpi::init().unwrap();
//! # let world = mpi.world();
//! let mut sum = world.allreduce_init_in_place(vec![1.0f64; 4], Sum).unwrap();
//! let buffer = sum.into_buffer().unwrap(); // MPI_Request_free
//! sum.start(); // error: use of moved value
//! ```

//!
//! | module | what |
//! |---|---|
//! | [`inits`] | the public `*_init` methods with equal blocks (and `reduce_init`) |
//! | [`vector_inits`] | the public `*_init` methods with per-rank blocks |
//! | [`neighbor_inits`] | the public `neighbor_*_init` methods (MPI-4.0 §8.8) |
//! | `call` | one collective's arguments, and its native init or nonblocking start |
//! | `emulated` | the emulated path and the datatypes a request keeps |
//!
//! This module holds the choice of path and what the `*_init` methods share.

mod call;
mod emulated;
pub mod inits;
pub mod neighbor_inits;
pub mod vector_inits;
mod views;

use crate::comm::Communicator;
use crate::comm::call::{MoveFn, ReduceFn};
use crate::comm::collective::{reduction, same_len};
use crate::comm::large::{VMove, large_count};
use crate::comm::partition::Block;
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::op::OwnedOp;
use crate::request::persistent::Keep;
use crate::request::{Buffers, Kind, OwnedBuffer, Pair, PersistentRequest, RawRequest};
use call::Call;
use emulated::{Emulated, KeptTypes, natively_broken};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// How this build of ferrompi runs persistent collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PersistentCollectives {
    /// MPI-4's `MPI_*_init` calls.
    Native,
    /// Open MPI's `MPIX_*_init` calls from its `pcollreq` extension.
    OpenMpiExtension,
    /// No persistent collectives in this MPI (or forced with [`set_persistent_emulation`]):
    /// each start issues the matching nonblocking collective.
    Emulated,
}

/// The path the MPI this crate was built against offers.
const BUILT: PersistentCollectives = if cfg!(ferrompi_persistent_coll) {
    PersistentCollectives::Native
} else if cfg!(ferrompi_mpix_persistent_coll) {
    PersistentCollectives::OpenMpiExtension
} else {
    PersistentCollectives::Emulated
};

static FORCE_EMULATION: AtomicBool = AtomicBool::new(false);

/// The path persistent collectives created now take (see the [module docs](self)).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use ferrompi::PersistentCollectives;
/// match ferrompi::persistent_collectives() {
///     PersistentCollectives::Native => println!("MPI-4's MPI_*_init"),
///     PersistentCollectives::OpenMpiExtension => println!("Open MPI's MPIX_*_init"),
///     PersistentCollectives::Emulated => println!("a nonblocking collective per start"),
/// }
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub fn persistent_collectives() -> PersistentCollectives {
    if FORCE_EMULATION.load(Ordering::Relaxed) {
        PersistentCollectives::Emulated
    } else {
        BUILT
    }
}

/// Makes persistent collectives created from now on use the emulated path (`true`) or the
/// MPI's own (`false`, the default). Requests already created keep their path. Every rank must
/// make the same choice, since a native and an emulated collective do not match.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// ferrompi::set_persistent_emulation(true); // on every rank: the paths do not match
/// let mut sum = world.allreduce_init_in_place(vec![1u32], ferrompi::op::Sum)?;
/// assert!(sum.is_emulated());
/// sum.start()?.wait()?;
/// ferrompi::set_persistent_emulation(false);
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub fn set_persistent_emulation(on: bool) {
    FORCE_EMULATION.store(on, Ordering::Relaxed);
}

impl<'env> Communicator<'env> {
    /// Makes the persistent request for `call`, which points into `buffers` and `keep`.
    ///
    /// # Safety
    /// Every buffer `call` names lies in the heap storage of `buffers` (which does not move with
    /// them, per [`Buffers`]) or of `keep`, in the sizes its counts say, checked against this
    /// communicator; a buffer MPI writes is not aliased by another `call` names for writing.
    unsafe fn persistent<'a, B: Buffers>(
        &'a self,
        call: Call,
        buffers: B,
        keep: Keep<'a>,
        operation: &'static str,
    ) -> Result<PersistentRequest<'a, B>> {
        // SAFETY: every constructor checked its partitions against this communicator, and
        // `keep` (which holds the arrays) lives until this returns.
        self.agree(operation, || unsafe {
            call.signature(self.size_usize(), operation)
        })?;
        let mut raw = ffi::MPI_REQUEST_NULL;
        let emulate = persistent_collectives() == PersistentCollectives::Emulated
            || matches!(call, Call::Move { f, .. } if natively_broken(f));
        let emulated: crate::request::persistent::Emulated<'_> = if emulate {
            Some(Box::new(Emulated {
                call,
                comm: self.dup()?,
            }))
        } else {
            let _gate = self.enter(operation)?;
            // SAFETY: `call` points into `buffers` and `keep`, which move into the request;
            // their heap storage does not move (`OwnedBuffer`'s contract, boxed partitions).
            check(unsafe { call.init(self.raw, &mut raw) }, operation)?;
            None
        };
        let raw = RawRequest {
            raw,
            kind: Kind::Collective,
        };
        Ok(PersistentRequest::with(raw, buffers, keep, emulated))
    }

    /// [`Communicator::bcast_init`] of 2 GiB or more on MPICH before 4.2, whose broadcast
    /// schedule fails there (as `ibcast`'s, see `comm::large`): an `MPI_Alltoallw_init` in
    /// which the root sends its buffer to every other rank, with placed datatypes the request
    /// keeps.
    #[cold]
    fn bcast_init_placed<B: OwnedBuffer>(
        &self,
        mut buf: B,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "bcast_init";
        let whole = Block::whole::<B::Item>(buf.as_slice().len());
        let (w, made) = {
            let _gate = self.enter(OP)?;
            // SAFETY: the gate is held; the types leave `Made` before it is dropped.
            unsafe { self.placed(VMove::Bcast { root }, false, |_| whole, |_| whole, OP)? }
        };
        let types = KeptTypes(made.into_types());
        let (s, d) = self.bcast_sides(recv_ptr(buf.as_mut_slice()), root);
        let call = Call::Alltoallw {
            s,
            sc: w.send_counts.as_ptr(),
            sd: w.zeros.as_ptr(),
            st: w.send_types.as_ptr(),
            d,
            rc: w.recv_counts.as_ptr(),
            rd: w.zeros.as_ptr(),
            rt: w.recv_types.as_ptr(),
        };
        // SAFETY: `call` names the storage of the buffers passed with it, checked above, and
        // what the kept part holds; both move into the request.
        unsafe { self.persistent(call, buf, Some(Box::new((w, types))), OP) }
    }

    /// The request of a reduction of `input` values (`send: None`: in place, from `recv`) into
    /// `recv`; `what` is the reduction, or `Err(root)` for `reduce`.
    ///
    /// # Safety
    /// `send` and `recv` are the address and length (in `T`) of buffers in the heap storage of
    /// `buffers`, `recv` not aliased by `send`.
    unsafe fn reduction_init<'a, T, B, O>(
        &'a self,
        what: std::result::Result<ReduceFn, c_int>,
        send: Option<(*const c_void, usize)>,
        (recv, recv_len): (*mut c_void, usize),
        buffers: B,
        op: O,
    ) -> Result<PersistentRequest<'a, B>>
    where
        T: Equivalence,
        B: Buffers,
        O: OwnedOp<T> + 'a,
    {
        let operation = match what {
            Ok(ReduceFn::All) => "allreduce_init",
            Ok(ReduceFn::Scan) => "scan_init",
            Ok(ReduceFn::Exscan) => "exscan_init",
            Ok(ReduceFn::ScatterBlock) => "reduce_scatter_block_init",
            Err(_) => "reduce_init",
        };
        let at_root = match what {
            Err(root) => self.is_root(root, operation)?,
            Ok(_) => true,
        };
        let input = send.map_or(recv_len, |(_, len)| len);
        let result = if what == Ok(ReduceFn::ScatterBlock) {
            let share = self.share(input, operation)?;
            if send.is_some() {
                same_len(share, recv_len, operation)?;
            }
            share
        } else {
            if send.is_some() && at_root {
                same_len(input, recv_len, operation)?;
            }
            input
        };
        let (n, operand) = reduction(result, op.owned_operand(), operation)?;
        let mut kept = KeptTypes::default();
        let (n, operand) = kept.fit_reduction(operand, n, operation)?;
        let (dt, mpi_op) = (operand.datatype, operand.op);
        let (s, d) = match (send, at_root) {
            (Some((s, _)), true) => (s, recv),
            (Some((s, _)), false) => (s, std::ptr::null_mut()),
            (None, true) => (ffi::MPI_IN_PLACE.cast_const(), recv),
            (None, false) => (recv.cast_const(), std::ptr::null_mut()),
        };
        let call = match what {
            Err(root) => Call::Reduce {
                s,
                d,
                n,
                dt,
                op: mpi_op,
                root,
            },
            Ok(f) => Call::Reduction {
                f,
                s,
                d,
                n,
                dt,
                op: mpi_op,
            },
        };
        let keep: Keep<'a> = Some(Box::new((op, kept)));
        // SAFETY: per this function's contract, `call` names the buffers' storage (and the
        // kept arrays); both move into the request.
        unsafe { self.persistent(call, buffers, keep, operation) }
    }

    /// The request of `gather`, `scatter`, `allgather` or `alltoall`; `send: None` is in place
    /// (`recv` then holds what the in-place form uses).
    ///
    /// # Safety
    /// As [`reduction_init`](Self::reduction_init).
    unsafe fn move_init<'a, T: Equivalence, B: Buffers>(
        &'a self,
        f: MoveFn,
        send: Option<(*const c_void, usize)>,
        (recv, recv_len): (*mut c_void, usize),
        root: i32,
        buffers: B,
    ) -> Result<PersistentRequest<'a, B>> {
        let operation = f.init_name();
        let at_root = match f {
            MoveFn::Gather | MoveFn::Scatter => self.is_root(root, operation)?,
            MoveFn::Allgather | MoveFn::Alltoall => true,
        };
        let nothing = std::ptr::null_mut();
        let (s, sn, d, dn) = match (send, f, at_root) {
            (Some((s, send_len)), ..) => {
                let (sn, dn) = self.move_args::<T>(f, send_len, recv_len, root, operation)?;
                (s, sn, recv, dn)
            }
            (None, MoveFn::Gather, false) => {
                let (sn, _) = self.move_args::<T>(f, recv_len, 0, root, operation)?;
                (recv.cast_const(), sn, nothing, 0)
            }
            (None, MoveFn::Scatter, false) => {
                let (_, dn) = self.move_args::<T>(f, 0, recv_len, root, operation)?;
                (nothing.cast_const(), 0, recv, dn)
            }
            (None, MoveFn::Scatter, true) => {
                let share = large_count::<T>(self.share(recv_len, operation)?, operation)?;
                (recv.cast_const(), share, ffi::MPI_IN_PLACE, 0)
            }
            (None, ..) => {
                let share = large_count::<T>(self.share(recv_len, operation)?, operation)?;
                (ffi::MPI_IN_PLACE.cast_const(), 0, recv, share)
            }
        };
        // Every rank's block has the same size: one spanning element each when it is over
        // `int` (as `comm::large` does for the nonblocking forms).
        let mut kept = KeptTypes::default();
        let base = T::datatype().as_raw();
        let (_, dt) = kept.fit(base, sn.max(dn), operation)?;
        let blocks = |n: ffi::MPI_Count| match c_int::try_from(n) {
            Ok(n) if dt == base => n,
            _ => c_int::from(n > 0), // a block is one spanning element
        };
        let (sn, dn) = (blocks(sn), blocks(dn));
        let root = if at_root || matches!(f, MoveFn::Gather | MoveFn::Scatter) {
            root
        } else {
            0
        };
        let call = Call::Move {
            f,
            s,
            sn,
            st: dt,
            d,
            dn,
            dt,
            root,
        };
        // SAFETY: per this function's contract, `call` names the buffers' storage (and the
        // kept arrays); both move into the request.
        unsafe { self.persistent(call, buffers, kept.keep(), operation) }
    }
}

impl Communicator<'_> {
    /// [`Communicator::move_init`] with a send and a receive buffer.
    fn move_init_pair<S, R>(
        &self,
        f: MoveFn,
        send: S,
        mut recv: R,
        root: i32,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        let (s, d) = (src(&send), dst(&mut recv));
        // SAFETY: the pointers are those of the buffers, which move into the request.
        unsafe { self.move_init::<S::Item, _>(f, Some(s), d, root, Pair { send, recv }) }
    }

    /// [`Communicator::move_init`] in place.
    fn move_init_one<B: OwnedBuffer>(
        &self,
        f: MoveFn,
        mut buf: B,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        let d = dst(&mut buf);
        // SAFETY: the pointers are those of the buffers, which move into the request.
        unsafe { self.move_init::<B::Item, _>(f, None, d, root, buf) }
    }
}

/// `(pointer, length)` of a buffer MPI reads.
fn src<B: OwnedBuffer>(buf: &B) -> (*const c_void, usize) {
    (send_ptr(buf.as_slice()), buf.as_slice().len())
}

/// `(pointer, length)` of a buffer MPI writes.
fn dst<B: OwnedBuffer>(buf: &mut B) -> (*mut c_void, usize) {
    let len = buf.as_slice().len();
    (recv_ptr(buf.as_mut_slice()), len)
}

impl MoveFn {
    fn init_name(self) -> &'static str {
        match self {
            MoveFn::Gather => "gather_init",
            MoveFn::Scatter => "scatter_init",
            MoveFn::Allgather => "allgather_init",
            MoveFn::Alltoall => "alltoall_init",
        }
    }
}
