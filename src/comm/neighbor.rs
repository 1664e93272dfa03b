//! Neighbourhood collectives (MPI-4.0 §8.6): on a communicator with a virtual topology, each
//! process exchanges data with its neighbours only, the whole exchange in one call that MPI can
//! schedule at once. [`TopologyCommunicator`] holds what every topology shares (its in- and
//! out-degree) and the calls:
//!
//! | call | blocking | nonblocking | persistent |
//! |---|---|---|---|
//! | one block to every out-neighbour, one from every in-neighbour | [`neighbor_allgather`](TopologyCommunicator::neighbor_allgather) | [`ineighbor_allgather`](TopologyCommunicator::ineighbor_allgather) | [`neighbor_allgather_init`](TopologyCommunicator::neighbor_allgather_init) |
//! | the same, a block of its own length from each | [`neighbor_allgatherv`](TopologyCommunicator::neighbor_allgatherv) | [`ineighbor_allgatherv`](TopologyCommunicator::ineighbor_allgatherv) | [`neighbor_allgatherv_init`](TopologyCommunicator::neighbor_allgatherv_init) |
//! | a block of its own to each out-neighbour | [`neighbor_alltoall`](TopologyCommunicator::neighbor_alltoall) | [`ineighbor_alltoall`](TopologyCommunicator::ineighbor_alltoall) | [`neighbor_alltoall_init`](TopologyCommunicator::neighbor_alltoall_init) |
//! | the same, blocks of their own lengths | [`neighbor_alltoallv`](TopologyCommunicator::neighbor_alltoallv) | [`ineighbor_alltoallv`](TopologyCommunicator::ineighbor_alltoallv) | [`neighbor_alltoallv_init`](TopologyCommunicator::neighbor_alltoallv_init) |
//! | the same, each block a layout of its own (derived datatypes) | [`neighbor_alltoallw`](TopologyCommunicator::neighbor_alltoallw) | [`ineighbor_alltoallw`](TopologyCommunicator::ineighbor_alltoallw) | [`neighbor_alltoallw_init`](TopologyCommunicator::neighbor_alltoallw_init) |
//!
//! The neighbours come in the order MPI defines (§8.6): on a Cartesian grid, for each dimension
//! the process one step back then the one a step ahead (a [`PROC_NULL`](crate::PROC_NULL) past
//! a non-periodic edge still has its block, which MPI neither sends nor fills); on a graph, the
//! neighbours as [`GraphCommunicator::neighbors`](super::graph::GraphCommunicator::neighbors)
//! lists them; on a distributed graph, receiving from
//! [`sources`](super::graph::DistGraphCommunicator::sources) and sending to
//! [`destinations`](super::graph::DistGraphCommunicator::destinations).
//!
//! Every buffer is checked against the degrees before MPI is called
//! ([`ErrorKind::BufferSize`], [`ErrorKind::InvalidArgument`]); blocks over `int` are an
//! [`ErrorKind::CountOverflow`] (the calls with MPI-4's `_c` counts are not used). That the
//! neighbours pass matching lengths only they know: a mismatch is an erroneous program, which
//! MPI usually reports as [`ErrorKind::Mpi`] of class `Truncate`. Checked mode
//! ([`InitOptions::check_collectives`](crate::InitOptions::check_collectives)) verifies that
//! every process makes the same neighbourhood call, not the lengths.
//!
//! ```
//! # let mpi = ferrompi::Mpi::init()?;
//! # let world = mpi.world();
//! // A periodic ring: every process gets its two neighbours' ranks (back, then ahead).
//! let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
//! let mut around = [0i32; 2];
//! ring.neighbor_allgather(&[ring.rank()], &mut around)?;
//! let n = ring.size();
//! assert_eq!(around, [(ring.rank() + n - 1) % n, (ring.rank() + 1) % n]);
//! # Ok::<(), ferrompi::Error>(())
//! ```

use super::Communicator;
use super::agreement::Signature;
use super::call::Req;
use super::collective::{same_product, uneven};
use crate::comm::partition::Partition;
use crate::datatype::{Equivalence, LayoutBlocks, LayoutBlocksMut, count_of, recv_ptr, send_ptr};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::request::{Repair, Request, Scope};
use std::ffi::{c_int, c_void};
use std::ops::Deref;

// MPICH names its topology kinds in an enum (`MPIR_Topo_type`), the others as plain constants.
#[cfg(not(ferrompi_family = "mpich"))]
pub(super) use crate::ffi::{MPI_CART as CART, MPI_DIST_GRAPH as DIST_GRAPH, MPI_GRAPH as GRAPH};
#[cfg(ferrompi_family = "mpich")]
pub(super) use crate::ffi::{
    MPIR_Topo_type_MPI_CART as CART, MPIR_Topo_type_MPI_DIST_GRAPH as DIST_GRAPH,
    MPIR_Topo_type_MPI_GRAPH as GRAPH,
};

/// A communicator with a virtual topology: what [`CartCommunicator`](super::cart::CartCommunicator),
/// [`GraphCommunicator`](super::graph::GraphCommunicator) and
/// [`DistGraphCommunicator`](super::graph::DistGraphCommunicator) share, through `Deref`: the
/// number of neighbours data comes from and goes to, and the neighbourhood collectives
/// (see the [module docs](self)). It is a [`Communicator`] (through `Deref`) too.
#[derive(Debug)]
pub struct TopologyCommunicator<'env> {
    comm: Communicator<'env>,
    /// The in-degree: how many neighbours send to this process.
    sources: c_int,
    /// The out-degree: how many neighbours this process sends to.
    destinations: c_int,
}

impl<'env> Deref for TopologyCommunicator<'env> {
    type Target = Communicator<'env>;

    fn deref(&self) -> &Communicator<'env> {
        &self.comm
    }
}

/// One neighbourhood collective's arguments, as MPI takes them.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Neighbor {
    /// `MPI_Neighbor_allgather` (`v: None`) or `MPI_Neighbor_allgatherv` (the receive
    /// partition's counts and displacements).
    Allgather {
        s: *const c_void,
        sn: c_int,
        d: *mut c_void,
        dn: c_int,
        v: Option<(*const c_int, *const c_int)>,
        dt: ffi::MPI_Datatype,
    },
    /// `MPI_Neighbor_alltoall`.
    Alltoall {
        s: *const c_void,
        sn: c_int,
        d: *mut c_void,
        dn: c_int,
        dt: ffi::MPI_Datatype,
    },
    /// `MPI_Neighbor_alltoallv`.
    Alltoallv {
        s: *const c_void,
        sc: *const c_int,
        sd: *const c_int,
        d: *mut c_void,
        rc: *const c_int,
        rd: *const c_int,
        dt: ffi::MPI_Datatype,
    },
    /// `MPI_Neighbor_alltoallw`: byte displacements of MPI's address type.
    Alltoallw {
        s: *const c_void,
        sc: *const c_int,
        sd: *const ffi::MPI_Aint,
        st: *const ffi::MPI_Datatype,
        d: *mut c_void,
        rc: *const c_int,
        rd: *const ffi::MPI_Aint,
        rt: *const ffi::MPI_Datatype,
    },
}

impl Neighbor {
    /// The same call with its counts and displacements in `arrays`, copies a persistent
    /// request keeps: the receive side's for `allgatherv`, the send then the receive side's
    /// for `alltoallv`.
    pub(crate) fn with_arrays(self, arrays: &[(*const c_int, *const c_int)]) -> Neighbor {
        match (self, arrays) {
            (
                Neighbor::Allgather {
                    s,
                    sn,
                    d,
                    dn,
                    dt,
                    v: Some(_),
                },
                &[recv],
            ) => Neighbor::Allgather {
                s,
                sn,
                d,
                dn,
                dt,
                v: Some(recv),
            },
            (Neighbor::Alltoallv { s, d, dt, .. }, &[(sc, sd), (rc, rd)]) => Neighbor::Alltoallv {
                s,
                sc,
                sd,
                d,
                rc,
                rd,
                dt,
            },
            _ => unreachable!("a neighbourhood call's arrays, one pair per partition"),
        }
    }

    /// Issues the call on `c`: the blocking call for `r: None`, the nonblocking one otherwise.
    ///
    /// # Safety
    /// Every pointer holds what its counts and datatypes reach for the degrees of `c`, valid
    /// until the operation completes; the calling thread holds the thread gate.
    #[inline(always)]
    pub(crate) unsafe fn issue(self, c: ffi::MPI_Comm, r: Req<'_>) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match (self, r) {
                (
                    Neighbor::Allgather {
                        s,
                        sn,
                        d,
                        dn,
                        v: None,
                        dt,
                    },
                    None,
                ) => ffi::MPI_Neighbor_allgather(s, sn, dt, d, dn, dt, c),
                (
                    Neighbor::Allgather {
                        s,
                        sn,
                        d,
                        dn,
                        v: None,
                        dt,
                    },
                    Some(r),
                ) => ffi::MPI_Ineighbor_allgather(s, sn, dt, d, dn, dt, c, r),
                (
                    Neighbor::Allgather {
                        s,
                        sn,
                        d,
                        v: Some((rc, rd)),
                        dt,
                        ..
                    },
                    None,
                ) => ffi::MPI_Neighbor_allgatherv(s, sn, dt, d, rc, rd, dt, c),
                (
                    Neighbor::Allgather {
                        s,
                        sn,
                        d,
                        v: Some((rc, rd)),
                        dt,
                        ..
                    },
                    Some(r),
                ) => ffi::MPI_Ineighbor_allgatherv(s, sn, dt, d, rc, rd, dt, c, r),
                (Neighbor::Alltoall { s, sn, d, dn, dt }, None) => {
                    ffi::MPI_Neighbor_alltoall(s, sn, dt, d, dn, dt, c)
                }
                (Neighbor::Alltoall { s, sn, d, dn, dt }, Some(r)) => {
                    ffi::MPI_Ineighbor_alltoall(s, sn, dt, d, dn, dt, c, r)
                }
                (
                    Neighbor::Alltoallv {
                        s,
                        sc,
                        sd,
                        d,
                        rc,
                        rd,
                        dt,
                    },
                    None,
                ) => ffi::MPI_Neighbor_alltoallv(s, sc, sd, dt, d, rc, rd, dt, c),
                (
                    Neighbor::Alltoallv {
                        s,
                        sc,
                        sd,
                        d,
                        rc,
                        rd,
                        dt,
                    },
                    Some(r),
                ) => ffi::MPI_Ineighbor_alltoallv(s, sc, sd, dt, d, rc, rd, dt, c, r),
                (
                    Neighbor::Alltoallw {
                        s,
                        sc,
                        sd,
                        st,
                        d,
                        rc,
                        rd,
                        rt,
                    },
                    None,
                ) => ffi::MPI_Neighbor_alltoallw(s, sc, sd, st, d, rc, rd, rt, c),
                (
                    Neighbor::Alltoallw {
                        s,
                        sc,
                        sd,
                        st,
                        d,
                        rc,
                        rd,
                        rt,
                    },
                    Some(r),
                ) => ffi::MPI_Ineighbor_alltoallw(s, sc, sd, st, d, rc, rd, rt, c, r),
            }
        }
    }
}

/// The error of a side with another number of blocks than neighbours.
#[cold]
fn not_per_neighbor(operation: &'static str, what: &str, blocks: usize, degree: c_int) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("the {what} have {blocks} blocks for {degree} neighbours"),
    }
    .into()
}

/// Checks that a side has one block per neighbour.
#[inline(always)]
pub(crate) fn per_neighbor(
    blocks: usize,
    degree: c_int,
    what: &str,
    operation: &'static str,
) -> Result<()> {
    if usize::try_from(degree).ok() == Some(blocks) {
        Ok(())
    } else {
        Err(not_per_neighbor(operation, what, blocks, degree))
    }
}

/// A degree as a length. MPI's degrees are never negative.
#[inline(always)]
fn degree(d: c_int) -> usize {
    d as usize
}

impl<'env> TopologyCommunicator<'env> {
    /// Wraps `comm`, which carries a virtual topology, with its degrees.
    pub(super) fn with_degrees(
        comm: Communicator<'env>,
        sources: c_int,
        destinations: c_int,
    ) -> Self {
        TopologyCommunicator {
            comm,
            sources,
            destinations,
        }
    }

    /// How many neighbours send to this process (the in-degree): the blocks every
    /// neighbourhood collective receives.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[world.size(), 1], &[false, true], false)?.unwrap();
    /// assert_eq!((grid.in_degree(), grid.out_degree()), (4, 4)); // two per dimension
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn in_degree(&self) -> usize {
        degree(self.sources)
    }

    /// How many neighbours this process sends to (the out-degree): the blocks every
    /// neighbourhood all-to-all sends.
    pub fn out_degree(&self) -> usize {
        degree(self.destinations)
    }

    /// The in- and out-degree as MPI's ints.
    pub(crate) fn degrees(&self) -> (c_int, c_int) {
        (self.sources, self.destinations)
    }

    /// The per-neighbour count of an all-to-all with equal blocks: `send` holds one block per
    /// out-neighbour, `recv` one per in-neighbour, all of one length. One division on the
    /// common path; anything else (no out-neighbour, lengths that do not fit) out of line.
    #[inline(always)]
    pub(crate) fn alltoall_share<T: Equivalence>(
        &self,
        send_len: usize,
        recv_len: usize,
        operation: &'static str,
    ) -> Result<c_int> {
        let (sources, destinations) = (self.in_degree(), self.out_degree());
        if let Some(block) = send_len.checked_div(destinations) {
            // `block * destinations` cannot overflow: it is at most `send_len`.
            if block * destinations == send_len && block.checked_mul(sources) == Some(recv_len) {
                return count_of::<T>(block, operation);
            }
        }
        self.alltoall_share_slow::<T>(send_len, recv_len, operation)
    }

    /// [`alltoall_share`](Self::alltoall_share) off its common path: no out-neighbour, or an
    /// error.
    #[cold]
    #[inline(never)]
    fn alltoall_share_slow<T: Equivalence>(
        &self,
        send_len: usize,
        recv_len: usize,
        operation: &'static str,
    ) -> Result<c_int> {
        let (sources, destinations) = (self.in_degree(), self.out_degree());
        let block = match (destinations, sources) {
            (0, 0) => 0,
            (0, i) if recv_len.is_multiple_of(i) => recv_len / i,
            (0, i) => return Err(uneven(recv_len, i, "neighbours", operation)),
            (o, _) if send_len.is_multiple_of(o) => send_len / o,
            (o, _) => return Err(uneven(send_len, o, "neighbours", operation)),
        };
        same_product(block, destinations, send_len, operation)?;
        same_product(block, sources, recv_len, operation)?;
        count_of::<T>(block, operation)
    }

    /// The arguments of `neighbor_allgather`: `recv` holds one block of `send`'s length per
    /// in-neighbour.
    #[inline(always)]
    pub(crate) fn allgather_args<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        operation: &'static str,
    ) -> Result<Neighbor> {
        same_product(send.len(), self.in_degree(), recv.len(), operation)?;
        let n = count_of::<T>(send.len(), operation)?;
        Ok(Neighbor::Allgather {
            s: send_ptr(send),
            sn: n,
            d: recv_ptr(recv),
            dn: n,
            v: None,
            dt: T::datatype().as_raw(),
        })
    }

    #[inline(always)]
    pub(crate) fn allgatherv_args<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        recv_blocks: &Partition<T>,
        operation: &'static str,
    ) -> Result<Neighbor> {
        per_neighbor(
            recv_blocks.ranks(),
            self.sources,
            "receive blocks",
            operation,
        )?;
        recv_blocks.check(self.sources, recv.len(), operation)?;
        let (rc, rd) = recv_blocks.int_arrays(operation)?;
        Ok(Neighbor::Allgather {
            s: send_ptr(send),
            sn: count_of::<T>(send.len(), operation)?,
            d: recv_ptr(recv),
            dn: 0,
            v: Some((rc, rd)),
            dt: T::datatype().as_raw(),
        })
    }

    #[inline(always)]
    pub(crate) fn alltoall_args<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        operation: &'static str,
    ) -> Result<Neighbor> {
        let n = self.alltoall_share::<T>(send.len(), recv.len(), operation)?;
        Ok(Neighbor::Alltoall {
            s: send_ptr(send),
            sn: n,
            d: recv_ptr(recv),
            dn: n,
            dt: T::datatype().as_raw(),
        })
    }

    #[inline(always)]
    pub(crate) fn alltoallv_args<T: Equivalence>(
        &self,
        (send, send_blocks): (&[T], &Partition<T>),
        (recv, recv_blocks): (&mut [T], &Partition<T>),
        operation: &'static str,
    ) -> Result<Neighbor> {
        per_neighbor(
            send_blocks.ranks(),
            self.destinations,
            "send blocks",
            operation,
        )?;
        per_neighbor(
            recv_blocks.ranks(),
            self.sources,
            "receive blocks",
            operation,
        )?;
        send_blocks.check_send(self.destinations, send.len(), operation)?;
        recv_blocks.check(self.sources, recv.len(), operation)?;
        let ((sc, sd), (rc, rd)) = (
            send_blocks.int_arrays(operation)?,
            recv_blocks.int_arrays(operation)?,
        );
        Ok(Neighbor::Alltoallv {
            s: send_ptr(send),
            sc,
            sd,
            d: recv_ptr(recv),
            rc,
            rd,
            dt: T::datatype().as_raw(),
        })
    }

    #[inline(always)]
    fn alltoallw_args<T: Equivalence>(
        &self,
        send: &LayoutBlocks<'_>,
        recv: &mut LayoutBlocksMut<'_, T>,
        operation: &'static str,
    ) -> Result<Neighbor> {
        let (s, sc, sd, st) = send.raw_addressed();
        let (d, rc, rd, rt) = recv.raw_addressed();
        per_neighbor(sc.len(), self.destinations, "send blocks", operation)?;
        per_neighbor(rc.len(), self.sources, "receive blocks", operation)?;
        Ok(Neighbor::Alltoallw {
            s,
            sc: sc.as_ptr(),
            sd: sd.as_ptr(),
            st: st.as_ptr(),
            d,
            rc: rc.as_ptr(),
            rd: rd.as_ptr(),
            rt: rt.as_ptr(),
        })
    }

    /// Runs a blocking neighbourhood collective, then repairs `out`.
    ///
    /// # Safety
    /// `call` was made from buffers checked against this communicator's degrees, borrowed for
    /// the call.
    #[inline(always)]
    unsafe fn run<T: Equivalence>(
        &self,
        call: Neighbor,
        out: &mut [T],
        operation: &'static str,
    ) -> Result<()> {
        self.blocking(
            operation,
            out,
            #[inline(always)]
            |_| {
                // SAFETY: per the contract; the gate is held.
                unsafe { call.issue(self.raw, None) }
            },
        )
    }

    /// Starts a nonblocking neighbourhood collective in `scope`.
    ///
    /// # Safety
    /// `call` was made from buffers checked against this communicator's degrees, borrowed for
    /// `'s` (which the scope outlasts by completing the operation).
    #[inline(always)]
    unsafe fn start<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        call: Neighbor,
        repair: Option<Repair>,
        operation: &'static str,
    ) -> Result<Request<'s>> {
        self.agree(operation, || Ok(Signature::Same { root: -1, key: 0 }))?;
        self.nonblocking(
            scope,
            operation,
            repair,
            #[inline(always)]
            |r| {
                // SAFETY: per the contract; the gate is held.
                unsafe { call.issue(self.raw, r) }
            },
        )
    }

    /// `MPI_Neighbor_allgather` (MPI-4.0 §8.6.1): `send` goes to every out-neighbour; block
    /// `i` of `recv` (of `send`'s length) comes from in-neighbour `i`. `recv.len()` is
    /// `send.len() * in_degree()`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let chain = world.cart_create(&[world.size()], &[false], false)?.unwrap();
    /// let mut around = [-1i32; 2]; // from the process back, then the one ahead
    /// chain.neighbor_allgather(&[chain.rank()], &mut around)?;
    /// let back = if chain.rank() == 0 { -1 } else { chain.rank() - 1 }; // none: left untouched
    /// assert_eq!(around[0], back);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn neighbor_allgather<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        const OP: &str = "neighbor_allgather";
        let call = self.allgather_args(send, recv, OP)?;
        // SAFETY: made from the two buffers, checked, borrowed for the call.
        unsafe { self.run(call, recv, OP) }
    }

    /// Starts a [`neighbor_allgather`](Self::neighbor_allgather) (`MPI_Ineighbor_allgather`,
    /// MPI-4.0 §8.7.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mine = [ring.rank()];
    /// let mut around = [0i32; 2];
    /// ferrompi::scope(|s| ring.ineighbor_allgather(s, &mine, &mut around)?.wait().map(drop))?;
    /// assert_eq!(around[1], (ring.rank() + 1) % ring.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`neighbor_allgather`](Self::neighbor_allgather).
    #[inline(always)]
    pub fn ineighbor_allgather<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        const OP: &str = "ineighbor_allgather";
        let call = self.allgather_args(send, recv, OP)?;
        // SAFETY: made from the two buffers, checked, borrowed for 's.
        unsafe { self.start(scope, call, Repair::for_slice(recv), OP) }
    }

    /// `MPI_Neighbor_allgatherv` (MPI-4.0 §8.6.1): as
    /// [`neighbor_allgather`](Self::neighbor_allgather), block `i` of `recv_blocks` receiving
    /// from in-neighbour `i` (which sends that many values).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let blocks = Partition::<i32>::from_counts(&[1, 1])?;
    /// let mut around = [0i32; 2];
    /// ring.neighbor_allgatherv(&[ring.rank()], &mut around, &blocks)?;
    /// assert_eq!(around[1], (ring.rank() + 1) % ring.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a partition without one block per in-neighbour;
    /// as [`neighbor_allgather`](Self::neighbor_allgather).
    #[inline(always)]
    pub fn neighbor_allgatherv<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        recv_blocks: &Partition<T>,
    ) -> Result<()> {
        const OP: &str = "neighbor_allgatherv";
        let call = self.allgatherv_args(send, recv, recv_blocks, OP)?;
        // SAFETY: made from the buffers and the partition, checked, borrowed for the call.
        unsafe { self.run(call, recv, OP) }
    }

    /// Starts a [`neighbor_allgatherv`](Self::neighbor_allgatherv)
    /// (`MPI_Ineighbor_allgatherv`, MPI-4.0 §8.7.1).
    ///
    /// # Errors
    /// As [`neighbor_allgatherv`](Self::neighbor_allgatherv).
    #[inline(always)]
    pub fn ineighbor_allgatherv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        recv_blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "ineighbor_allgatherv";
        let call = self.allgatherv_args(send, recv, recv_blocks, OP)?;
        // SAFETY: made from the buffers and the partition, checked, borrowed for 's.
        unsafe { self.start(scope, call, Repair::for_slice(recv), OP) }
    }

    /// `MPI_Neighbor_alltoall` (MPI-4.0 §8.6.2): block `j` of `send` goes to out-neighbour `j`;
    /// block `i` of `recv` comes from in-neighbour `i`; all blocks of one length. With no
    /// out-neighbour `send` is empty and the length comes from `recv`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let me = ring.rank();
    /// let mut got = [0i32; 2];
    /// ring.neighbor_alltoall(&[-me, me], &mut got)?; // -me goes back, me ahead
    /// let n = ring.size();
    /// assert_eq!(got, [(me + n - 1) % n, -((me + 1) % n)]); // from back: its `ahead` block
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] (a buffer that does not divide among the neighbours),
    /// [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn neighbor_alltoall<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        const OP: &str = "neighbor_alltoall";
        let call = self.alltoall_args(send, recv, OP)?;
        // SAFETY: made from the two buffers, checked, borrowed for the call.
        unsafe { self.run(call, recv, OP) }
    }

    /// Starts a [`neighbor_alltoall`](Self::neighbor_alltoall) (`MPI_Ineighbor_alltoall`,
    /// MPI-4.0 §8.7.2).
    ///
    /// # Errors
    /// As [`neighbor_alltoall`](Self::neighbor_alltoall).
    #[inline(always)]
    pub fn ineighbor_alltoall<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        const OP: &str = "ineighbor_alltoall";
        let call = self.alltoall_args(send, recv, OP)?;
        // SAFETY: made from the two buffers, checked, borrowed for 's.
        unsafe { self.start(scope, call, Repair::for_slice(recv), OP) }
    }

    /// `MPI_Neighbor_alltoallv` (MPI-4.0 §8.6.2): as
    /// [`neighbor_alltoall`](Self::neighbor_alltoall), block `j` of `send_blocks` going to
    /// out-neighbour `j` and block `i` of `recv_blocks` coming from in-neighbour `i`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let blocks = Partition::<i32>::from_counts(&[1, 1])?;
    /// let mut got = [0i32; 2];
    /// ring.neighbor_alltoallv(&[ring.rank(); 2], &blocks, &mut got, &blocks)?;
    /// assert_eq!(got[1], (ring.rank() + 1) % ring.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a partition without one block per neighbour on its
    /// side, or receive blocks that overlap; [`ErrorKind::BufferSize`];
    /// [`ErrorKind::CountOverflow`] for blocks over `int`; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn neighbor_alltoallv<T: Equivalence>(
        &self,
        send: &[T],
        send_blocks: &Partition<T>,
        recv: &mut [T],
        recv_blocks: &Partition<T>,
    ) -> Result<()> {
        const OP: &str = "neighbor_alltoallv";
        let call = self.alltoallv_args((send, send_blocks), (recv, recv_blocks), OP)?;
        // SAFETY: made from the buffers and partitions, checked, borrowed for the call.
        unsafe { self.run(call, recv, OP) }
    }

    /// Starts a [`neighbor_alltoallv`](Self::neighbor_alltoallv)
    /// (`MPI_Ineighbor_alltoallv`, MPI-4.0 §8.7.2).
    ///
    /// # Errors
    /// As [`neighbor_alltoallv`](Self::neighbor_alltoallv).
    #[inline(always)]
    pub fn ineighbor_alltoallv<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        send_blocks: &'s Partition<T>,
        recv: &'s mut [T],
        recv_blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "ineighbor_alltoallv";
        let call = self.alltoallv_args((send, send_blocks), (recv, recv_blocks), OP)?;
        // SAFETY: made from the buffers and partitions, checked, borrowed for 's.
        unsafe { self.start(scope, call, Repair::for_slice(recv), OP) }
    }

    /// `MPI_Neighbor_alltoallw` (MPI-4.0 §8.6.2): block `j` of `send`, a layout of its own
    /// ([`LayoutBlocks`]), goes to out-neighbour `j`; block `i` of `recv` comes from
    /// in-neighbour `i`. The neighbourhood form of
    /// [`alltoallw_view`](Communicator::alltoallw_view): a stencil's halo exchange, each face
    /// a subarray of the field, in one call.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, LayoutBlocks, LayoutBlocksMut};
    /// // A ring; each process's row of 4 values, with a ghost cell at each end.
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let one = DerivedType::contiguous(&mpi, 1, f64::datatype())?;
    /// let mut row = [f64::from(ring.rank()); 6];
    /// let faces = [row[1], row[4]]; // the first and last interior values go back and ahead
    /// let send = LayoutBlocks::new(&faces, &[(&one, 1, 0), (&one, 1, 8)])?;
    /// let mut ghosts = LayoutBlocksMut::new(&mut row, &[(&one, 1, 0), (&one, 1, 40)])?;
    /// ring.neighbor_alltoallw(&send, &mut ghosts)?;
    /// drop(ghosts);
    /// let n = ring.size();
    /// assert_eq!(row[0], f64::from((ring.rank() + n - 1) % n));
    /// assert_eq!(row[5], f64::from((ring.rank() + 1) % n));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] without one block per neighbour on either side;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn neighbor_alltoallw<T: Equivalence>(
        &self,
        send: &LayoutBlocks<'_>,
        recv: &mut LayoutBlocksMut<'_, T>,
    ) -> Result<()> {
        const OP: &str = "neighbor_alltoallw";
        let call = self.alltoallw_args(send, recv, OP)?;
        let code = {
            let _gate = self.enter(OP)?;
            // SAFETY: every block reaches only its own slice (checked when the blocks were
            // made), no receive block a byte of another; one block per neighbour on each
            // side; all borrowed for the call; the gate is held.
            unsafe { call.issue(self.raw, None) }
        };
        recv.repair();
        check(code, OP)
    }

    /// Starts a [`neighbor_alltoallw`](Self::neighbor_alltoallw)
    /// (`MPI_Ineighbor_alltoallw`, MPI-4.0 §8.7.2): the blocks, their arrays included, stay
    /// borrowed until the scope completes it.
    ///
    /// # Errors
    /// As [`neighbor_alltoallw`](Self::neighbor_alltoallw).
    #[inline(always)]
    pub fn ineighbor_alltoallw<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s LayoutBlocks<'_>,
        recv: &'s mut LayoutBlocksMut<'_, T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "ineighbor_alltoallw";
        let call = self.alltoallw_args(send, recv, OP)?;
        let repair = Repair::for_slice(recv.slice_mut());
        // SAFETY: as in `neighbor_alltoallw`; the blocks and their arrays are borrowed for 's.
        unsafe { self.start(scope, call, repair, OP) }
    }
}
