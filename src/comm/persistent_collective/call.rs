//! One persistent collective's arguments as MPI takes them ([`Call`]), and the two ways of
//! issuing it: the MPI's own `MPI_*_init` (or Open MPI's `MPIX_*_init`), or the matching
//! nonblocking call at each start (the emulated path).

use crate::comm::agreement::{Signature, fingerprint};
use crate::comm::call::{MoveFn, RecvSide, ReduceFn, SendSide, VFn, vmove};
use crate::comm::collective::move_signature;
use crate::comm::neighbor::Neighbor;
use crate::env::enter;
use crate::error::{Result, check};
use crate::ffi;
use std::ffi::{c_int, c_void};

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
    /// `st` the send side's datatype, `dt` the receive side's (the same but for layouts).
    Move {
        f: MoveFn,
        s: *const c_void,
        sn: c_int,
        st: ffi::MPI_Datatype,
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
    /// A `v` collective on layouts: per-rank blocks of a derived type on one side or both,
    /// each side of its own type (the blocks significant only at a root where there is one).
    Layout {
        f: VFn,
        s: SendSide,
        d: RecvSide,
        root: c_int,
    },
    /// A neighbourhood collective, on a communicator with a virtual topology.
    Neighbor(Neighbor),
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
    pub(super) unsafe fn signature(
        self,
        size: usize,
        operation: &'static str,
    ) -> Result<Signature> {
        // SAFETY: per the contract, `size` entries each.
        let ints = |p: *const c_int| unsafe { std::slice::from_raw_parts(p, size) };
        let wide = |p: *const c_int| ints(p).iter().map(|&v| i64::from(v)).collect::<Vec<_>>();
        let partition = |root: c_int, arrays: &[*const c_int]| Signature::Same {
            root,
            key: fingerprint(arrays.iter().flat_map(|&p| ints(p)).map(|&v| i64::from(v))),
        };
        Ok(match self {
            // Each process's neighbours are its own: the processes agree on the operation.
            Call::Barrier | Call::Neighbor(_) => Signature::Same { root: -1, key: 0 },
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
            // Only a root knows its blocks, and each rank lays out its own: the ranks agree
            // on the operation and its root.
            Call::Layout { f, root, .. } => Signature::Same {
                root: if matches!(f, VFn::Gatherv | VFn::Scatterv) {
                    root
                } else {
                    -1
                },
                key: 0,
            },
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
    pub(super) unsafe fn init(self, c: ffi::MPI_Comm, r: &mut ffi::MPI_Request) -> c_int {
        let i = ffi::MPI_INFO_NULL;
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
                    st,
                    d,
                    dn,
                    dt,
                    root,
                } => match f {
                    MoveFn::Gather => init!(
                        MPI_Gather_init / MPIX_Gather_init(s, sn, st, d, dn, dt, root, c, i, r)
                    ),
                    MoveFn::Scatter => init!(
                        MPI_Scatter_init / MPIX_Scatter_init(s, sn, st, d, dn, dt, root, c, i, r)
                    ),
                    MoveFn::Allgather => init!(
                        MPI_Allgather_init / MPIX_Allgather_init(s, sn, st, d, dn, dt, c, i, r)
                    ),
                    MoveFn::Alltoall => {
                        init!(MPI_Alltoall_init / MPIX_Alltoall_init(s, sn, st, d, dn, dt, c, i, r))
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
                Call::Neighbor(n) => neighbor_init(n, c, i, r),
                Call::Layout { f, s, d, root } => {
                    let (st, dt) = (s.datatype, d.datatype);
                    match f {
                        VFn::Gatherv => init!(
                            MPI_Gatherv_init
                                / MPIX_Gatherv_init(
                                    s.ptr, s.count, st, d.ptr, d.counts, d.displs, dt, root, c, i,
                                    r
                                )
                        ),
                        VFn::Scatterv => init!(
                            MPI_Scatterv_init
                                / MPIX_Scatterv_init(
                                    s.ptr, s.counts, s.displs, st, d.ptr, d.count, dt, root, c, i,
                                    r
                                )
                        ),
                        VFn::Allgatherv => init!(
                            MPI_Allgatherv_init
                                / MPIX_Allgatherv_init(
                                    s.ptr, s.count, st, d.ptr, d.counts, d.displs, dt, c, i, r
                                )
                        ),
                        VFn::Alltoallv => init!(
                            MPI_Alltoallv_init
                                / MPIX_Alltoallv_init(
                                    s.ptr, s.counts, s.displs, st, d.ptr, d.counts, d.displs, dt,
                                    c, i, r
                                )
                        ),
                    }
                }
            }
        }
    }

    /// Starts the matching nonblocking collective (the emulated path).
    ///
    /// # Safety
    /// As [`Call::init`], for the operation's duration.
    pub(super) unsafe fn start(self, c: ffi::MPI_Comm, r: &mut ffi::MPI_Request) -> c_int {
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
                    st,
                    d,
                    dn,
                    dt,
                    root,
                } => match f {
                    MoveFn::Gather => ffi::MPI_Igather(s, sn, st, d, dn, dt, root, c, r),
                    MoveFn::Scatter => ffi::MPI_Iscatter(s, sn, st, d, dn, dt, root, c, r),
                    MoveFn::Allgather => ffi::MPI_Iallgather(s, sn, st, d, dn, dt, c, r),
                    MoveFn::Alltoall => ffi::MPI_Ialltoall(s, sn, st, d, dn, dt, c, r),
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
                Call::Layout { f, s, d, root } => vmove(c, f, s, d, root, Some(r)),
                Call::Neighbor(n) => n.issue(c, Some(r)),
            }
        }
    }
}

/// Creates a persistent neighbourhood collective (`MPI_Neighbor_*_init`, or Open MPI's
/// `MPIX_Neighbor_*_init`).
///
/// # Safety
/// As [`Call::init`].
unsafe fn neighbor_init(
    n: Neighbor,
    c: ffi::MPI_Comm,
    i: ffi::MPI_Info,
    r: &mut ffi::MPI_Request,
) -> c_int {
    // SAFETY: per the contract.
    unsafe {
        match n {
            Neighbor::Allgather {
                s,
                sn,
                d,
                dn,
                v: None,
                dt,
            } => init!(
                MPI_Neighbor_allgather_init
                    / MPIX_Neighbor_allgather_init(s, sn, dt, d, dn, dt, c, i, r)
            ),
            Neighbor::Allgather {
                s,
                sn,
                d,
                v: Some((rc, rd)),
                dt,
                ..
            } => init!(
                MPI_Neighbor_allgatherv_init
                    / MPIX_Neighbor_allgatherv_init(s, sn, dt, d, rc, rd, dt, c, i, r)
            ),
            Neighbor::Alltoall { s, sn, d, dn, dt } => init!(
                MPI_Neighbor_alltoall_init
                    / MPIX_Neighbor_alltoall_init(s, sn, dt, d, dn, dt, c, i, r)
            ),
            Neighbor::Alltoallv {
                s,
                sc,
                sd,
                d,
                rc,
                rd,
                dt,
            } => init!(
                MPI_Neighbor_alltoallv_init
                    / MPIX_Neighbor_alltoallv_init(s, sc, sd, dt, d, rc, rd, dt, c, i, r)
            ),
            Neighbor::Alltoallw {
                s,
                sc,
                sd,
                st,
                d,
                rc,
                rd,
                rt,
            } => init!(
                MPI_Neighbor_alltoallw_init
                    / MPIX_Neighbor_alltoallw_init(s, sc, sd, st, d, rc, rd, rt, c, i, r)
            ),
        }
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
