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
//! over `int` are an [`Error::CountOverflow`].
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

use super::Communicator;
use super::agreement::{Signature, fingerprint};
use super::collective::{MoveFn, ReduceFn, in_place, move_signature, reduction, same_len};
use super::large::{Block, Spanning, VMove, large_count, spanned};
use super::partition::{Partition, TypedPartition};
use crate::datatype::{Equivalence, recv_ptr, send_ptr};
use crate::env::enter;
#[cfg(doc)]
use crate::error::Error;
use crate::error::{Result, check};
use crate::ffi;
use crate::op::{Operand, OwnedOp};
use crate::request::persistent::Keep;
use crate::request::{
    Buffers, Kind, NoBuffer, OwnedBuffer, Pair, PersistentRequest, RawRequest, request_null,
};
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
pub fn set_persistent_emulation(on: bool) {
    FORCE_EMULATION.store(on, Ordering::Relaxed);
}

/// One collective's arguments, as MPI takes them. The pointers point into buffers and arrays
/// the request owns.
#[derive(Debug, Clone, Copy)]
pub(super) enum Call {
    Barrier,
    Bcast {
        buf: *mut c_void,
        n: c_int,
        dt: ffi::MPI_Datatype,
        root: c_int,
    },
    Reduce {
        s: *const c_void,
        d: *mut c_void,
        n: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
        root: c_int,
    },
    Reduction {
        f: ReduceFn,
        s: *const c_void,
        d: *mut c_void,
        n: c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
    Move {
        f: MoveFn,
        s: *const c_void,
        sn: c_int,
        d: *mut c_void,
        dn: c_int,
        dt: ffi::MPI_Datatype,
        root: c_int,
    },
    /// `gatherv` (`root: Some`) or `allgatherv` (`None`).
    Gatherv {
        s: *const c_void,
        sn: c_int,
        d: *mut c_void,
        rc: *const c_int,
        rd: *const c_int,
        dt: ffi::MPI_Datatype,
        root: Option<c_int>,
    },
    Scatterv {
        s: *const c_void,
        sc: *const c_int,
        sd: *const c_int,
        d: *mut c_void,
        dn: c_int,
        dt: ffi::MPI_Datatype,
        root: c_int,
    },
    Alltoallv {
        s: *const c_void,
        sc: *const c_int,
        sd: *const c_int,
        d: *mut c_void,
        rc: *const c_int,
        rd: *const c_int,
        dt: ffi::MPI_Datatype,
    },
    Alltoallw {
        s: *const c_void,
        sc: *const c_int,
        sd: *const c_int,
        st: *const ffi::MPI_Datatype,
        d: *mut c_void,
        rc: *const c_int,
        rd: *const c_int,
        rt: *const ffi::MPI_Datatype,
    },
    ReduceScatter {
        s: *const c_void,
        d: *mut c_void,
        rc: *const c_int,
        dt: ffi::MPI_Datatype,
        op: ffi::MPI_Op,
    },
}

/// The persistent form of a collective: MPI-4's name, or Open MPI's extension's.
#[cfg(ferrompi_persistent_coll)]
macro_rules! init {
    ($native:ident / $mpix:ident ($($arg:expr),* $(,)?)) => { ffi::$native($($arg),*) };
}
#[cfg(all(not(ferrompi_persistent_coll), ferrompi_mpix_persistent_coll))]
macro_rules! init {
    ($native:ident / $mpix:ident ($($arg:expr),* $(,)?)) => { ffi::$mpix($($arg),*) };
}
#[cfg(not(any(ferrompi_persistent_coll, ferrompi_mpix_persistent_coll)))]
macro_rules! init {
    ($native:ident / $mpix:ident ($($arg:expr),* $(,)?)) => {{
        let _ = ($($arg,)*);
        ffi::MPI_ERR_UNSUPPORTED_OPERATION
    }};
}

impl Call {
    /// What the ranks must agree on for this call (checked mode, `comm::agreement`), on a
    /// communicator of `size` ranks.
    ///
    /// # Safety
    /// The call's arrays must each hold `size` entries (every constructor checks its partitions
    /// against the communicator).
    unsafe fn signature(self, size: usize, operation: &'static str) -> Result<Signature> {
        // SAFETY: per the contract, `size` entries each.
        let ints = |p: *const c_int| unsafe { std::slice::from_raw_parts(p, size) };
        let wide = |p: *const c_int| ints(p).iter().map(|&v| i64::from(v)).collect::<Vec<_>>();
        let partition = |root: c_int, arrays: &[*const c_int]| Signature::Same {
            root,
            key: fingerprint(arrays.iter().flat_map(|&p| ints(p)).map(|&v| i64::from(v))),
        };
        Ok(match self {
            Call::Barrier => Signature::Same { root: -1, key: 0 },
            Call::Bcast { n, root, .. } | Call::Reduce { n, root, .. } => Signature::Same {
                root,
                key: i64::from(n),
            },
            Call::Reduction { n, .. } => Signature::Same {
                root: -1,
                key: i64::from(n),
            },
            Call::Move {
                f, sn, dn, root, ..
            } => move_signature(f, i64::from(sn), i64::from(dn), root),
            Call::Gatherv { rc, rd, root, .. } => partition(root.unwrap_or(-1), &[rc, rd]),
            Call::Scatterv { sc, sd, root, .. } => partition(root, &[sc, sd]),
            Call::ReduceScatter { rc, .. } => partition(-1, &[rc]),
            Call::Alltoallv { sc, rc, .. } => Signature::Pairwise {
                send: wide(sc),
                recv: wide(rc),
            },
            Call::Alltoallw { sc, st, rc, rt, .. } => {
                // SAFETY: as above, for the datatype arrays.
                let (st, rt) = unsafe {
                    (
                        std::slice::from_raw_parts(st, size),
                        std::slice::from_raw_parts(rt, size),
                    )
                };
                Signature::Pairwise {
                    send: bytes_of(ints(sc), st, operation)?,
                    recv: bytes_of(ints(rc), rt, operation)?,
                }
            }
        })
    }

    /// Creates the persistent request (`MPI_*_init`, or `MPIX_*_init`).
    ///
    /// # Safety
    /// The pointers are valid for the request's whole life; the caller holds the gate.
    unsafe fn init(self, c: ffi::MPI_Comm, r: &mut ffi::MPI_Request) -> c_int {
        // SAFETY: an immutable constant defined by the shim.
        let i = unsafe { ffi::ferrompi_MPI_INFO_NULL };
        // SAFETY: per the contract.
        unsafe {
            match self {
                Call::Barrier => init!(MPI_Barrier_init / MPIX_Barrier_init(c, i, r)),
                Call::Bcast { buf, n, dt, root } => {
                    init!(MPI_Bcast_init / MPIX_Bcast_init(buf, n, dt, root, c, i, r))
                }
                Call::Reduce {
                    s,
                    d,
                    n,
                    dt,
                    op,
                    root,
                } => init!(MPI_Reduce_init / MPIX_Reduce_init(s, d, n, dt, op, root, c, i, r)),
                Call::Reduction { f, s, d, n, dt, op } => match f {
                    ReduceFn::All => {
                        init!(MPI_Allreduce_init / MPIX_Allreduce_init(s, d, n, dt, op, c, i, r))
                    }
                    ReduceFn::Scan => {
                        init!(MPI_Scan_init / MPIX_Scan_init(s, d, n, dt, op, c, i, r))
                    }
                    ReduceFn::Exscan => {
                        init!(MPI_Exscan_init / MPIX_Exscan_init(s, d, n, dt, op, c, i, r))
                    }
                    ReduceFn::ScatterBlock => init!(
                        MPI_Reduce_scatter_block_init
                            / MPIX_Reduce_scatter_block_init(s, d, n, dt, op, c, i, r)
                    ),
                },
                Call::Move {
                    f,
                    s,
                    sn,
                    d,
                    dn,
                    dt,
                    root,
                } => match f {
                    MoveFn::Gather => init!(
                        MPI_Gather_init / MPIX_Gather_init(s, sn, dt, d, dn, dt, root, c, i, r)
                    ),
                    MoveFn::Scatter => init!(
                        MPI_Scatter_init / MPIX_Scatter_init(s, sn, dt, d, dn, dt, root, c, i, r)
                    ),
                    MoveFn::Allgather => init!(
                        MPI_Allgather_init / MPIX_Allgather_init(s, sn, dt, d, dn, dt, c, i, r)
                    ),
                    MoveFn::Alltoall => {
                        init!(MPI_Alltoall_init / MPIX_Alltoall_init(s, sn, dt, d, dn, dt, c, i, r))
                    }
                },
                Call::Gatherv {
                    s,
                    sn,
                    d,
                    rc,
                    rd,
                    dt,
                    root: Some(root),
                } => init!(
                    MPI_Gatherv_init / MPIX_Gatherv_init(s, sn, dt, d, rc, rd, dt, root, c, i, r)
                ),
                Call::Gatherv {
                    s,
                    sn,
                    d,
                    rc,
                    rd,
                    dt,
                    root: None,
                } => init!(
                    MPI_Allgatherv_init / MPIX_Allgatherv_init(s, sn, dt, d, rc, rd, dt, c, i, r)
                ),
                Call::Scatterv {
                    s,
                    sc,
                    sd,
                    d,
                    dn,
                    dt,
                    root,
                } => init!(
                    MPI_Scatterv_init / MPIX_Scatterv_init(s, sc, sd, dt, d, dn, dt, root, c, i, r)
                ),
                Call::Alltoallv {
                    s,
                    sc,
                    sd,
                    d,
                    rc,
                    rd,
                    dt,
                } => init!(
                    MPI_Alltoallv_init / MPIX_Alltoallv_init(s, sc, sd, dt, d, rc, rd, dt, c, i, r)
                ),
                Call::Alltoallw {
                    s,
                    sc,
                    sd,
                    st,
                    d,
                    rc,
                    rd,
                    rt,
                } => init!(
                    MPI_Alltoallw_init / MPIX_Alltoallw_init(s, sc, sd, st, d, rc, rd, rt, c, i, r)
                ),
                Call::ReduceScatter { s, d, rc, dt, op } => init!(
                    MPI_Reduce_scatter_init / MPIX_Reduce_scatter_init(s, d, rc, dt, op, c, i, r)
                ),
            }
        }
    }

    /// Starts the matching nonblocking collective (the emulated path).
    ///
    /// # Safety
    /// As [`Call::init`], for the operation's duration.
    unsafe fn start(self, c: ffi::MPI_Comm, r: &mut ffi::MPI_Request) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match self {
                Call::Barrier => ffi::MPI_Ibarrier(c, r),
                Call::Bcast { buf, n, dt, root } => ffi::MPI_Ibcast(buf, n, dt, root, c, r),
                Call::Reduce {
                    s,
                    d,
                    n,
                    dt,
                    op,
                    root,
                } => ffi::MPI_Ireduce(s, d, n, dt, op, root, c, r),
                Call::Reduction { f, s, d, n, dt, op } => match f {
                    ReduceFn::All => ffi::MPI_Iallreduce(s, d, n, dt, op, c, r),
                    ReduceFn::Scan => ffi::MPI_Iscan(s, d, n, dt, op, c, r),
                    ReduceFn::Exscan => ffi::MPI_Iexscan(s, d, n, dt, op, c, r),
                    ReduceFn::ScatterBlock => ffi::MPI_Ireduce_scatter_block(s, d, n, dt, op, c, r),
                },
                Call::Move {
                    f,
                    s,
                    sn,
                    d,
                    dn,
                    dt,
                    root,
                } => match f {
                    MoveFn::Gather => ffi::MPI_Igather(s, sn, dt, d, dn, dt, root, c, r),
                    MoveFn::Scatter => ffi::MPI_Iscatter(s, sn, dt, d, dn, dt, root, c, r),
                    MoveFn::Allgather => ffi::MPI_Iallgather(s, sn, dt, d, dn, dt, c, r),
                    MoveFn::Alltoall => ffi::MPI_Ialltoall(s, sn, dt, d, dn, dt, c, r),
                },
                Call::Gatherv {
                    s,
                    sn,
                    d,
                    rc,
                    rd,
                    dt,
                    root,
                } => match root {
                    Some(root) => ffi::MPI_Igatherv(s, sn, dt, d, rc, rd, dt, root, c, r),
                    None => ffi::MPI_Iallgatherv(s, sn, dt, d, rc, rd, dt, c, r),
                },
                Call::Scatterv {
                    s,
                    sc,
                    sd,
                    d,
                    dn,
                    dt,
                    root,
                } => ffi::MPI_Iscatterv(s, sc, sd, dt, d, dn, dt, root, c, r),
                Call::Alltoallv {
                    s,
                    sc,
                    sd,
                    d,
                    rc,
                    rd,
                    dt,
                } => ffi::MPI_Ialltoallv(s, sc, sd, dt, d, rc, rd, dt, c, r),
                Call::Alltoallw {
                    s,
                    sc,
                    sd,
                    st,
                    d,
                    rc,
                    rd,
                    rt,
                } => ffi::MPI_Ialltoallw(s, sc, sd, st, d, rc, rd, rt, c, r),
                Call::ReduceScatter { s, d, rc, dt, op } => {
                    ffi::MPI_Ireduce_scatter(s, d, rc, dt, op, c, r)
                }
            }
        }
    }
}

/// An emulated persistent collective: the call each start makes, on a communicator of its own.
///
/// MPI-4.0 §6.13 requires only the `*_init` calls to be made in the same order on every rank;
/// starts may come in any order. Nonblocking collectives on one communicator match in the
/// order they are issued, so each emulated request gets a private duplicate, made at init
/// (when all ranks are in step) and freed with it: its starts can only match each other.
/// MPI lets a communicator be freed while operations on it are pending (§7.4.3).
#[derive(Debug)]
pub(crate) struct Emulated<'comm> {
    call: Call,
    comm: Communicator<'comm>,
}

// SAFETY: the pointers point into buffers and arrays the request owns, and are used only by
// `start`, through `&mut PersistentRequest` under the thread gate; the communicator is `Send`.
unsafe impl Send for Emulated<'_> {}
// SAFETY: as for `Send`; `&Emulated` is never used to start.
unsafe impl Sync for Emulated<'_> {}

impl Emulated<'_> {
    /// # Safety
    /// As [`Call::start`]; `r` is null (no operation in flight).
    pub(crate) unsafe fn start(&self, r: &mut ffi::MPI_Request) -> c_int {
        // SAFETY: per the contract.
        unsafe { self.call.start(self.comm.raw, r) }
    }
}

/// Whether this MPI's own persistent form of `f` gives wrong results, so ferrompi emulates it:
/// MPICH before 4.3 gathers stale or no data with `MPI_Gather_init`, and fails or corrupts data
/// on the second start of `MPI_Scatter_init` and `MPI_Allgather_init` (pmodels/mpich#7078,
/// #6423; reproduced in C with MPICH 4.0.2). Decided once, from `MPI_Get_library_version`.
fn natively_broken(f: MoveFn) -> bool {
    f != MoveFn::Alltoall && crate::env::mpich_before((4, 3))
}

/// Derived datatypes a persistent request uses for counts over `int` (see `comm::large`),
/// kept with it and freed after it, under the thread gate (if it cannot be passed, leaked).
#[derive(Default)]
struct KeptTypes(Vec<ffi::MPI_Datatype>);

// SAFETY: datatype handles, freed once under the thread gate, from whichever thread drops.
unsafe impl Send for KeptTypes {}
// SAFETY: as for `Send`; shared access only reads handles.
unsafe impl Sync for KeptTypes {}

impl Drop for KeptTypes {
    fn drop(&mut self) {
        let Ok(_gate) = enter("type_free") else {
            return;
        };
        for t in &mut self.0 {
            // SAFETY: committed types made for this request, freed once, here; the request is
            // freed, or leaked (and with it `keep`, and this).
            unsafe { ffi::MPI_Type_free(t) };
        }
    }
}

impl KeptTypes {
    /// `(count, datatype)` for `n` elements of `dt`: as they are when `n` fits an `int`, else
    /// one element of a spanning type kept here.
    fn fit(
        &mut self,
        dt: ffi::MPI_Datatype,
        n: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<(c_int, ffi::MPI_Datatype)> {
        if let Ok(n) = c_int::try_from(n) {
            return Ok((n, dt));
        }
        let _gate = enter(operation)?;
        // SAFETY: the gate is held.
        let raw = unsafe { Spanning::new(dt, n, operation)? }.into_raw();
        self.0.push(raw);
        Ok((1, raw))
    }

    /// The operand reducing `n` elements with `o` in one call: `o` when `n` fits an `int`, else
    /// one spanning element and a span op (see `comm::large`).
    fn fit_reduction(
        &mut self,
        o: Operand,
        n: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<(c_int, Operand)> {
        if let Ok(n) = c_int::try_from(n) {
            return Ok((n, o));
        }
        let _gate = enter(operation)?;
        // SAFETY: the gate is held; the span goes into `self` (freed under the gate).
        let (span, operand) = unsafe { spanned(o, n)? };
        self.0.push(span.into_raw());
        Ok((1, operand))
    }

    /// What the request keeps of these: nothing when there are none.
    fn keep<'a>(self) -> Keep<'a> {
        (!self.0.is_empty()).then(|| Box::new(self) as Box<dyn Send + Sync + 'a>)
    }
}

/// Bytes of `counts[i]` elements of `types[i]`, for each `i` (`MPI_Type_size`).
pub(super) fn bytes_of(
    counts: &[c_int],
    types: &[ffi::MPI_Datatype],
    operation: &'static str,
) -> Result<Vec<i64>> {
    let _gate = enter(operation)?;
    counts
        .iter()
        .zip(types)
        .map(|(&n, &t)| {
            let mut size: ffi::MPI_Count = 0;
            // SAFETY: a committed datatype of a typed partition; writes one MPI_Count.
            check(unsafe { ffi::MPI_Type_size_x(t, &mut size) }, operation)?;
            Ok(i64::from(n).saturating_mul(size))
        })
        .collect()
}

impl<'env> Communicator<'env> {
    /// Makes the persistent request for `call`, which points into `buffers` and `keep`.
    fn persistent<'a, B: Buffers>(
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
        let mut raw = request_null();
        let emulate = persistent_collectives() == PersistentCollectives::Emulated
            || matches!(call, Call::Move { f, .. } if natively_broken(f));
        let emulated = if emulate {
            Some(Emulated {
                call,
                comm: self.dup()?,
            })
        } else {
            let _gate = enter(operation)?;
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

    /// Sets up a persistent barrier (`MPI_Barrier_init`, MPI-4.0 §6.13).
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn barrier_init(&self) -> Result<PersistentRequest<'_, NoBuffer>> {
        self.persistent(Call::Barrier, NoBuffer, None, "barrier_init")
    }

    /// Sets up a persistent broadcast of `buf` from `root` (`MPI_Bcast_init`, §6.13).
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::CountOverflow`] before any communication;
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn bcast_init<B: OwnedBuffer>(
        &self,
        mut buf: B,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "bcast_init";
        self.is_root(root, OP)?;
        if super::large::bcast_schedule_broken(size_of_val(buf.as_slice())) {
            return self.bcast_init_placed(buf, root);
        }
        let mut kept = KeptTypes::default();
        let n = large_count::<B::Item>(buf.as_slice().len(), OP)?;
        let (n, dt) = kept.fit(B::Item::datatype().as_raw(), n, OP)?;
        let call = Call::Bcast {
            buf: recv_ptr(buf.as_mut_slice()),
            n,
            dt,
            root,
        };
        self.persistent(call, buf, kept.keep(), OP)
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
            let _gate = enter(OP)?;
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
        self.persistent(call, buf, Some(Box::new((w, types))), OP)
    }

    /// The request of a reduction of `input` values (`send: None`: in place, from `recv`) into
    /// `recv`; `what` is the reduction, or `Err(root)` for `reduce`.
    fn reduction_init<'a, T, B, O>(
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
            (None, true) => (in_place().cast_const(), recv),
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
        self.persistent(call, buffers, keep, operation)
    }

    /// The request of `gather`, `scatter`, `allgather` or `alltoall`; `send: None` is in place
    /// (`recv` then holds what the in-place form uses).
    fn move_init<'a, T: Equivalence, B: Buffers>(
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
                (recv.cast_const(), share, in_place(), 0)
            }
            (None, ..) => {
                let share = large_count::<T>(self.share(recv_len, operation)?, operation)?;
                (in_place().cast_const(), 0, recv, share)
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
            d,
            dn,
            dt,
            root,
        };
        self.persistent(call, buffers, kept.keep(), operation)
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
        self.move_init::<S::Item, _>(f, Some(s), d, root, Pair { send, recv })
    }

    /// [`Communicator::move_init`] in place.
    fn move_init_one<B: OwnedBuffer>(
        &self,
        f: MoveFn,
        mut buf: B,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        let d = dst(&mut buf);
        self.move_init::<B::Item, _>(f, None, d, root, buf)
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

/// The persistent forms of the reductions with `MPI_Allreduce`'s arguments.
macro_rules! reduction_inits {
    ($($f:expr => $name:ident, $in_place:ident, $mpi:literal, $what:literal;)*) => {$(
        #[doc = concat!("Sets up a persistent ", $what, " (`", $mpi, "`, MPI-4.0 §6.13); the")]
        /// request owns `send`, `recv` and `op`.
        ///
        /// # Errors
        /// [`Error::BufferSize`], [`Error::InvalidArgument`], [`Error::CountOverflow`] before
        /// any communication; [`Error::WrongThread`]; [`Error::Mpi`].
        pub fn $name<'a, S, R, O>(
            &'a self,
            send: S,
            mut recv: R,
            op: O,
        ) -> Result<PersistentRequest<'a, Pair<S, R>>>
        where
            S: OwnedBuffer,
            R: OwnedBuffer<Item = S::Item>,
            O: OwnedOp<S::Item> + 'a,
        {
            let (s, d) = (src(&send), dst(&mut recv));
            self.reduction_init::<S::Item, _, _>(Ok($f), Some(s), d, Pair { send, recv }, op)
        }

        #[doc = concat!("The in-place form of [`", stringify!($name), "`](Communicator::", stringify!($name), "): `buf` is input and result.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($name), "`](Communicator::", stringify!($name), ").")]
        pub fn $in_place<'a, B, O>(&'a self, mut buf: B, op: O) -> Result<PersistentRequest<'a, B>>
        where
            B: OwnedBuffer,
            O: OwnedOp<B::Item> + 'a,
        {
            let d = dst(&mut buf);
            self.reduction_init::<B::Item, _, _>(Ok($f), None, d, buf, op)
        }
    )*};
}

/// The persistent forms of `gather`, `scatter`, `allgather` and `alltoall`.
macro_rules! move_inits {
    (no root: $($f:expr => $name:ident, $in_place:ident, $mpi:literal, $blocking:ident;)*) => {$(
        #[doc = concat!("Sets up a persistent [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") (`", $mpi, "`, MPI-4.0 §6.13); the request owns both buffers.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ").")]
        pub fn $name<S, R>(&self, send: S, recv: R) -> Result<PersistentRequest<'_, Pair<S, R>>>
        where
            S: OwnedBuffer,
            R: OwnedBuffer<Item = S::Item>,
        {
            self.move_init_pair($f, send, recv, 0)
        }

        #[doc = concat!("The in-place form of [`", stringify!($name), "`](Communicator::", stringify!($name), "), with `buf` as [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") takes it.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($name), "`](Communicator::", stringify!($name), ").")]
        pub fn $in_place<B: OwnedBuffer>(&self, buf: B) -> Result<PersistentRequest<'_, B>> {
            self.move_init_one($f, buf, 0)
        }
    )*};
    ($($f:expr => $name:ident, $in_place:ident, $mpi:literal, $blocking:ident;)*) => {$(
        #[doc = concat!("Sets up a persistent [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") (`", $mpi, "`, MPI-4.0 §6.13); the request owns both buffers.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ").")]
        pub fn $name<S, R>(
            &self,
            send: S,
            recv: R,
            root: i32,
        ) -> Result<PersistentRequest<'_, Pair<S, R>>>
        where
            S: OwnedBuffer,
            R: OwnedBuffer<Item = S::Item>,
        {
            self.move_init_pair($f, send, recv, root)
        }

        #[doc = concat!("The in-place form of [`", stringify!($name), "`](Communicator::", stringify!($name), "), with `buf` as the in-place [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") takes it.")]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($name), "`](Communicator::", stringify!($name), ").")]
        pub fn $in_place<B: OwnedBuffer>(
            &self,
            buf: B,
            root: i32,
        ) -> Result<PersistentRequest<'_, B>> {
            self.move_init_one($f, buf, root)
        }
    )*};
}

impl<'env> Communicator<'env> {
    reduction_inits! {
        ReduceFn::All => allreduce_init, allreduce_init_in_place, "MPI_Allreduce_init", "allreduce";
        ReduceFn::Scan => scan_init, scan_init_in_place, "MPI_Scan_init", "inclusive prefix reduction";
        ReduceFn::Exscan => exscan_init, exscan_init_in_place, "MPI_Exscan_init", "exclusive prefix reduction";
        ReduceFn::ScatterBlock => reduce_scatter_block_init, reduce_scatter_block_init_in_place,
            "MPI_Reduce_scatter_block_init", "reduce-scatter of equal blocks";
    }

    move_inits! {
        MoveFn::Gather => gather_init, gather_init_in_place, "MPI_Gather_init", gather_in_place;
        MoveFn::Scatter => scatter_init, scatter_init_in_place, "MPI_Scatter_init", scatter_in_place;
    }

    move_inits! {
        no root:
        MoveFn::Allgather => allgather_init, allgather_init_in_place, "MPI_Allgather_init", allgather_in_place;
        MoveFn::Alltoall => alltoall_init, alltoall_init_in_place, "MPI_Alltoall_init", alltoall_in_place;
    }

    /// Sets up a persistent reduction of `send` with `op` into `recv` at `root`
    /// (`MPI_Reduce_init`, MPI-4.0 §6.13). `recv` is as long as `send` at the root and unused
    /// elsewhere; the request owns both and `op`.
    ///
    /// # Errors
    /// [`Error::InvalidRank`], [`Error::BufferSize`], [`Error::CountOverflow`] before any
    /// communication; [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn reduce_init<'a, S, R, O>(
        &'a self,
        send: S,
        mut recv: R,
        op: O,
        root: i32,
    ) -> Result<PersistentRequest<'a, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
        O: OwnedOp<S::Item> + 'a,
    {
        let (s, d) = (src(&send), dst(&mut recv));
        self.reduction_init::<S::Item, _, _>(Err(root), Some(s), d, Pair { send, recv }, op)
    }

    /// The in-place form of [`reduce_init`](Communicator::reduce_init): at the root `buf` is
    /// input and result, elsewhere only input.
    ///
    /// # Errors
    /// As [`reduce_init`](Communicator::reduce_init).
    pub fn reduce_init_in_place<'a, B, O>(
        &'a self,
        mut buf: B,
        op: O,
        root: i32,
    ) -> Result<PersistentRequest<'a, B>>
    where
        B: OwnedBuffer,
        O: OwnedOp<B::Item> + 'a,
    {
        let d = dst(&mut buf);
        self.reduction_init::<B::Item, _, _>(Err(root), None, d, buf, op)
    }

    /// The request of a v-collective, which keeps a copy of `blocks` (MPI reads the counts at
    /// every start) and gets pointers to its arrays.
    fn v_init<'a, T: Equivalence, B: Buffers>(
        &'a self,
        blocks: &[&Partition<T>],
        buffers: B,
        operation: &'static str,
        call: impl FnOnce(&[(*const c_int, *const c_int)]) -> Call,
    ) -> Result<PersistentRequest<'a, B>> {
        let kept: Box<Vec<Partition<T>>> = Box::new(blocks.iter().map(|&b| b.clone()).collect());
        let arrays = kept
            .iter()
            .map(|b| b.int_arrays(operation))
            .collect::<Result<Vec<_>>>()?;
        let call = call(&arrays);
        self.persistent(call, buffers, Some(kept), operation)
    }

    /// Sets up a persistent [`gatherv`](Communicator::gatherv) (`MPI_Gatherv_init`, MPI-4.0
    /// §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// # Errors
    /// As [`gatherv`](Communicator::gatherv); [`Error::CountOverflow`] for blocks beyond `int`.
    pub fn gatherv_init<S, R>(
        &self,
        send: S,
        mut recv: R,
        blocks: &Partition<S::Item>,
        root: i32,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        const OP: &str = "gatherv_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        if self.is_root(root, OP)? {
            blocks.check(self.size, recv_len, OP)?;
        }
        let sn = self.own_block(blocks, send_len, OP)?;
        let dt = S::Item::datatype().as_raw();
        let buffers = Pair { send, recv };
        self.v_init(&[blocks], buffers, OP, |a| Call::Gatherv {
            s,
            sn,
            d,
            rc: a[0].0,
            rd: a[0].1,
            dt,
            root: Some(root),
        })
    }

    /// The in-place form of [`gatherv_init`](Communicator::gatherv_init), with `buf` as
    /// [`gatherv_in_place`](Communicator::gatherv_in_place) takes it.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn gatherv_init_in_place<B: OwnedBuffer>(
        &self,
        mut buf: B,
        blocks: &Partition<B::Item>,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "gatherv_init";
        let (ptr, len) = dst(&mut buf);
        let (s, sn, d) = if self.is_root(root, OP)? {
            blocks.check(self.size, len, OP)?;
            (in_place().cast_const(), 0, ptr)
        } else {
            let sn = self.own_block(blocks, len, OP)?;
            (ptr.cast_const(), sn, std::ptr::null_mut())
        };
        let dt = B::Item::datatype().as_raw();
        self.v_init(&[blocks], buf, OP, |a| Call::Gatherv {
            s,
            sn,
            d,
            rc: a[0].0,
            rd: a[0].1,
            dt,
            root: Some(root),
        })
    }

    /// Sets up a persistent [`scatterv`](Communicator::scatterv) (`MPI_Scatterv_init`, MPI-4.0
    /// §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn scatterv_init<S, R>(
        &self,
        send: S,
        mut recv: R,
        blocks: &Partition<S::Item>,
        root: i32,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        const OP: &str = "scatterv_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        if self.is_root(root, OP)? {
            blocks.check_send(self.size, send_len, OP)?;
        }
        let dn = self.own_block(blocks, recv_len, OP)?;
        let dt = S::Item::datatype().as_raw();
        let buffers = Pair { send, recv };
        self.v_init(&[blocks], buffers, OP, |a| Call::Scatterv {
            s,
            sc: a[0].0,
            sd: a[0].1,
            d,
            dn,
            dt,
            root,
        })
    }

    /// The in-place form of [`scatterv_init`](Communicator::scatterv_init), with `buf` as
    /// [`scatterv_in_place`](Communicator::scatterv_in_place) takes it.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn scatterv_init_in_place<B: OwnedBuffer>(
        &self,
        mut buf: B,
        blocks: &Partition<B::Item>,
        root: i32,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "scatterv_init";
        let (ptr, len) = dst(&mut buf);
        let (s, d, dn) = if self.is_root(root, OP)? {
            blocks.check(self.size, len, OP)?;
            (ptr.cast_const(), in_place(), 0)
        } else {
            let dn = self.own_block(blocks, len, OP)?;
            (std::ptr::null(), ptr, dn)
        };
        let dt = B::Item::datatype().as_raw();
        self.v_init(&[blocks], buf, OP, |a| Call::Scatterv {
            s,
            sc: a[0].0,
            sd: a[0].1,
            d,
            dn,
            dt,
            root,
        })
    }

    /// Sets up a persistent [`allgatherv`](Communicator::allgatherv) (`MPI_Allgatherv_init`,
    /// MPI-4.0 §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn allgatherv_init<S, R>(
        &self,
        send: S,
        mut recv: R,
        blocks: &Partition<S::Item>,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        const OP: &str = "allgatherv_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        blocks.check(self.size, recv_len, OP)?;
        let sn = self.own_block(blocks, send_len, OP)?;
        let dt = S::Item::datatype().as_raw();
        let buffers = Pair { send, recv };
        self.v_init(&[blocks], buffers, OP, |a| Call::Gatherv {
            s,
            sn,
            d,
            rc: a[0].0,
            rd: a[0].1,
            dt,
            root: None,
        })
    }

    /// The in-place form of [`allgatherv_init`](Communicator::allgatherv_init): this rank's
    /// block of `buf` is sent.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn allgatherv_init_in_place<B: OwnedBuffer>(
        &self,
        mut buf: B,
        blocks: &Partition<B::Item>,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "allgatherv_init";
        let (d, len) = dst(&mut buf);
        blocks.check(self.size, len, OP)?;
        let dt = B::Item::datatype().as_raw();
        self.v_init(&[blocks], buf, OP, |a| Call::Gatherv {
            s: in_place().cast_const(),
            sn: 0,
            d,
            rc: a[0].0,
            rd: a[0].1,
            dt,
            root: None,
        })
    }

    /// Sets up a persistent [`alltoallv`](Communicator::alltoallv) (`MPI_Alltoallv_init`,
    /// MPI-4.0 §6.13). The request owns both buffers and copies of the partitions.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn alltoallv_init<S, R>(
        &self,
        send: S,
        send_blocks: &Partition<S::Item>,
        mut recv: R,
        recv_blocks: &Partition<S::Item>,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        const OP: &str = "alltoallv_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        send_blocks.check_send(self.size, send_len, OP)?;
        recv_blocks.check(self.size, recv_len, OP)?;
        let dt = S::Item::datatype().as_raw();
        let buffers = Pair { send, recv };
        self.v_init(&[send_blocks, recv_blocks], buffers, OP, |a| {
            Call::Alltoallv {
                s,
                sc: a[0].0,
                sd: a[0].1,
                d,
                rc: a[1].0,
                rd: a[1].1,
                dt,
            }
        })
    }

    /// The in-place form of [`alltoallv_init`](Communicator::alltoallv_init), with `buf` as
    /// [`alltoallv_in_place`](Communicator::alltoallv_in_place) takes it.
    ///
    /// # Errors
    /// As [`gatherv_init`](Communicator::gatherv_init).
    pub fn alltoallv_init_in_place<B: OwnedBuffer>(
        &self,
        mut buf: B,
        blocks: &Partition<B::Item>,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "alltoallv_init";
        let (d, len) = dst(&mut buf);
        blocks.check(self.size, len, OP)?;
        let dt = B::Item::datatype().as_raw();
        self.v_init(&[blocks], buf, OP, |a| Call::Alltoallv {
            s: in_place().cast_const(),
            sc: a[0].0,
            sd: a[0].1,
            d,
            rc: a[0].0,
            rd: a[0].1,
            dt,
        })
    }

    /// Sets up a persistent [`alltoallw`](Communicator::alltoallw) (`MPI_Alltoallw_init`,
    /// MPI-4.0 §6.13) on byte buffers. The request owns both and copies of the partitions.
    ///
    /// # Errors
    /// As [`alltoallw`](Communicator::alltoallw).
    pub fn alltoallw_init<S, R>(
        &self,
        send: S,
        send_blocks: &TypedPartition,
        mut recv: R,
        recv_blocks: &TypedPartition,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer<Item = u8>,
        R: OwnedBuffer<Item = u8>,
    {
        const OP: &str = "alltoallw_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        send_blocks.check_send(self.size, send_len, OP)?;
        recv_blocks.check(self.size, recv_len, OP)?;
        let kept = Box::new((send_blocks.clone(), recv_blocks.clone()));
        let ((sc, sd, st), (rc, rd, rt)) = (kept.0.raw(OP)?, kept.1.raw(OP)?);
        let call = Call::Alltoallw {
            s,
            sc,
            sd,
            st,
            d,
            rc,
            rd,
            rt,
        };
        self.persistent(call, Pair { send, recv }, Some(kept), OP)
    }

    /// The in-place form of [`alltoallw_init`](Communicator::alltoallw_init).
    ///
    /// # Errors
    /// As [`alltoallw`](Communicator::alltoallw).
    pub fn alltoallw_init_in_place<B: OwnedBuffer<Item = u8>>(
        &self,
        mut buf: B,
        blocks: &TypedPartition,
    ) -> Result<PersistentRequest<'_, B>> {
        const OP: &str = "alltoallw_init";
        let (d, len) = dst(&mut buf);
        blocks.check(self.size, len, OP)?;
        let kept = Box::new(blocks.clone());
        let (rc, rd, rt) = kept.raw(OP)?;
        let call = Call::Alltoallw {
            s: in_place().cast_const(),
            sc: rc,
            sd: rd,
            st: rt,
            d,
            rc,
            rd,
            rt,
        };
        self.persistent(call, buf, Some(kept), OP)
    }

    /// Sets up a persistent [`reduce_scatter`](Communicator::reduce_scatter)
    /// (`MPI_Reduce_scatter_init`, MPI-4.0 §6.13). The request owns both buffers, a copy of
    /// `blocks` and `op`.
    ///
    /// # Errors
    /// As [`reduce_scatter`](Communicator::reduce_scatter).
    pub fn reduce_scatter_init<'a, S, R, O>(
        &'a self,
        send: S,
        mut recv: R,
        blocks: &Partition<S::Item>,
        op: O,
    ) -> Result<PersistentRequest<'a, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
        O: OwnedOp<S::Item> + 'a,
    {
        const OP: &str = "reduce_scatter_init";
        let ((s, send_len), (d, recv_len)) = (src(&send), dst(&mut recv));
        let operand =
            self.reduce_scatter_args(send_len, recv_len, blocks, op.owned_operand(), OP)?;
        self.reduce_scatter_init_with(s, d, blocks, operand, op, Pair { send, recv })
    }

    /// The in-place form of [`reduce_scatter_init`](Communicator::reduce_scatter_init), with
    /// `buf` as [`reduce_scatter_in_place`](Communicator::reduce_scatter_in_place) takes it.
    ///
    /// # Errors
    /// As [`reduce_scatter`](Communicator::reduce_scatter).
    pub fn reduce_scatter_init_in_place<'a, B, O>(
        &'a self,
        mut buf: B,
        blocks: &Partition<B::Item>,
        op: O,
    ) -> Result<PersistentRequest<'a, B>>
    where
        B: OwnedBuffer,
        O: OwnedOp<B::Item> + 'a,
    {
        const OP: &str = "reduce_scatter_init";
        let (d, len) = dst(&mut buf);
        // A partition of the wrong size (even empty) is reported by `reduce_scatter_args`.
        let own = blocks.get(self.rank_usize()).unwrap_or(0);
        let operand = self.reduce_scatter_args(len, own, blocks, op.owned_operand(), OP)?;
        let s = in_place().cast_const();
        self.reduce_scatter_init_with(s, d, blocks, operand, op, buf)
    }

    fn reduce_scatter_init_with<'a, T: Equivalence, B: Buffers, O: OwnedOp<T> + 'a>(
        &'a self,
        s: *const c_void,
        d: *mut c_void,
        blocks: &Partition<T>,
        operand: crate::op::Operand,
        op: O,
        buffers: B,
    ) -> Result<PersistentRequest<'a, B>> {
        const OP: &str = "reduce_scatter_init";
        let kept = Box::new((blocks.clone(), op));
        let (rc, _) = kept.0.int_arrays(OP)?;
        let (dt, op) = (operand.datatype, operand.op);
        let call = Call::ReduceScatter { s, d, rc, dt, op };
        self.persistent(call, buffers, Some(kept), OP)
    }
}
