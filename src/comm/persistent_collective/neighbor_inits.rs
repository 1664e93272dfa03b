//! Persistent neighbourhood collectives (MPI-4.0 §8.8): `neighbor_allgather_init`,
//! `neighbor_alltoall_init` and their `v` and `w` forms, on the path every persistent
//! collective takes (MPI-4's `MPI_Neighbor_*_init`, Open MPI's `MPIX_Neighbor_*_init`, or a
//! nonblocking neighbourhood collective per start; see the [parent module](super)).

use super::Call;
use crate::comm::neighbor::{Neighbor, TopologyCommunicator, per_neighbor};
use crate::comm::partition::Partition;
use crate::datatype::blocks::addresses;
use crate::datatype::{recv_ptr, send_ptr};
use crate::error::Result;
use crate::ffi;
use crate::request::{OwnedBuffer, OwnedLayoutBlocks, Pair, PersistentRequest};
use std::ffi::c_int;

/// The arrays of a persistent `neighbor_alltoallw`, kept with its request: counts, byte
/// displacements and the layouts' datatype handles (borrowed by the request, never freed here),
/// the send side's then the receive side's.
struct KeptW {
    counts: [Vec<c_int>; 2],
    addresses: [Vec<ffi::MPI_Aint>; 2],
    types: [Vec<ffi::MPI_Datatype>; 2],
}

// SAFETY: plain integers and handles of committed datatypes, which only MPI reads, while the
// request that keeps them lives.
unsafe impl Send for KeptW {}
// SAFETY: as for `Send`: nothing writes them after they are made.
unsafe impl Sync for KeptW {}

/// What makes an equal-block neighbourhood call's arguments from its buffers, checked.
type Args<'env, T> =
    fn(&TopologyCommunicator<'env>, &[T], &mut [T], &'static str) -> Result<Neighbor>;

impl<'env> TopologyCommunicator<'env> {
    /// The request of an equal-block neighbourhood collective on two buffers it takes, its
    /// arguments checked and made by `args`.
    fn pair_init<S, R>(
        &self,
        send: S,
        mut recv: R,
        operation: &'static str,
        args: Args<'env, S::Item>,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        let call = args(self, send.as_slice(), recv.as_mut_slice(), operation)?;
        // SAFETY: `call` points into the buffers' storage, checked against the degrees; the
        // buffers move into the request and their storage does not move with them.
        unsafe { self.persistent(Call::Neighbor(call), Pair { send, recv }, None, operation) }
    }

    /// Sets up a persistent [`neighbor_allgather`](Self::neighbor_allgather)
    /// (`MPI_Neighbor_allgather_init`, MPI-4.0 §8.8). The request owns both buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let mut around = ring.neighbor_allgather_init(vec![ring.rank()], vec![0i32; 2])?;
    /// for _ in 0..3 {
    ///     around.start()?.wait()?;
    /// }
    /// assert_eq!(around.recv()[1], (ring.rank() + 1) % ring.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`neighbor_allgather`](Self::neighbor_allgather).
    pub fn neighbor_allgather_init<S, R>(
        &self,
        send: S,
        recv: R,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        self.pair_init(send, recv, "neighbor_allgather_init", Self::allgather_args)
    }

    /// Sets up a persistent [`neighbor_allgatherv`](Self::neighbor_allgatherv)
    /// (`MPI_Neighbor_allgatherv_init`, MPI-4.0 §8.8). The request owns both buffers and a
    /// copy of `recv_blocks`.
    ///
    /// # Errors
    /// As [`neighbor_allgatherv`](Self::neighbor_allgatherv).
    pub fn neighbor_allgatherv_init<S, R>(
        &self,
        send: S,
        mut recv: R,
        recv_blocks: &Partition<S::Item>,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        const OP: &str = "neighbor_allgatherv_init";
        let call = self.allgatherv_args(send.as_slice(), recv.as_mut_slice(), recv_blocks, OP)?;
        let buffers = Pair { send, recv };
        // SAFETY: `call` points into the buffers' storage, checked against the degrees and
        // the partition, whose copy the request keeps and `call` then points into.
        unsafe {
            self.v_init(&[recv_blocks], buffers, OP, |a| {
                Call::Neighbor(call.with_arrays(a))
            })
        }
    }

    /// Sets up a persistent [`neighbor_alltoall`](Self::neighbor_alltoall)
    /// (`MPI_Neighbor_alltoall_init`, MPI-4.0 §8.8). The request owns both buffers.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let me = ring.rank();
    /// let mut swap = ring.neighbor_alltoall_init(vec![-me, me], vec![0i32; 2])?;
    /// swap.start()?.wait()?;
    /// let n = ring.size();
    /// assert_eq!(swap.recv(), &[(me + n - 1) % n, -((me + 1) % n)]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`neighbor_alltoall`](Self::neighbor_alltoall).
    pub fn neighbor_alltoall_init<S, R>(
        &self,
        send: S,
        recv: R,
    ) -> Result<PersistentRequest<'_, Pair<S, R>>>
    where
        S: OwnedBuffer,
        R: OwnedBuffer<Item = S::Item>,
    {
        self.pair_init(send, recv, "neighbor_alltoall_init", Self::alltoall_args)
    }

    /// Sets up a persistent [`neighbor_alltoallv`](Self::neighbor_alltoallv)
    /// (`MPI_Neighbor_alltoallv_init`, MPI-4.0 §8.8). The request owns both buffers and
    /// copies of the partitions.
    ///
    /// # Errors
    /// As [`neighbor_alltoallv`](Self::neighbor_alltoallv).
    pub fn neighbor_alltoallv_init<S, R>(
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
        const OP: &str = "neighbor_alltoallv_init";
        let call = self.alltoallv_args(
            (send.as_slice(), send_blocks),
            (recv.as_mut_slice(), recv_blocks),
            OP,
        )?;
        let buffers = Pair { send, recv };
        // SAFETY: as in `neighbor_allgatherv_init`, for both partitions.
        unsafe {
            self.v_init(&[send_blocks, recv_blocks], buffers, OP, |a| {
                Call::Neighbor(call.with_arrays(a))
            })
        }
    }

    /// Sets up a persistent [`neighbor_alltoallw`](Self::neighbor_alltoallw)
    /// (`MPI_Neighbor_alltoallw_init`, MPI-4.0 §8.8): each block its own layout at its own
    /// byte offset, the request owning both buffers and keeping the blocks' arrays, and
    /// borrowing the layouts; the receive blocks checked to share no byte. A stencil's whole
    /// halo exchange, set up once.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, OwnedLayoutBlocks};
    /// // A ring; each process's row of 4 values with a ghost cell at each end, in one buffer.
    /// let ring = world.cart_create(&[world.size()], &[true], false)?.unwrap();
    /// let one = DerivedType::contiguous(&mpi, 1, f64::datatype())?;
    /// let faces = vec![f64::from(ring.rank()); 2];
    /// let mut halo = ring.neighbor_alltoallw_init(
    ///     OwnedLayoutBlocks::new(faces, &[(&one, 1, 0), (&one, 1, 8)])?,
    ///     OwnedLayoutBlocks::new(vec![0.0f64; 6], &[(&one, 1, 0), (&one, 1, 40)])?,
    /// )?;
    /// halo.start()?.wait()?;
    /// let n = ring.size();
    /// assert_eq!(halo.recv()[5], f64::from((ring.rank() + 1) % n));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`neighbor_alltoallw`](Self::neighbor_alltoallw); [`ErrorKind`](crate::ErrorKind)
    /// `InvalidArgument` naming two receive blocks that share a byte.
    pub fn neighbor_alltoallw_init<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedLayoutBlocks<'c, S>,
        recv: OwnedLayoutBlocks<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        const OP: &str = "neighbor_alltoallw_init";
        let (sources, destinations) = self.degrees();
        per_neighbor(send.counts().len(), destinations, "send blocks", OP)?;
        per_neighbor(recv.counts().len(), sources, "receive blocks", OP)?;
        recv.check_receive(OP)?;
        let (send, sc, sd, st) = send.into_parts();
        let (mut recv, rc, rd, rt) = recv.into_parts();
        let kept = Box::new(KeptW {
            addresses: [addresses(&sd), addresses(&rd)],
            counts: [sc, rc],
            types: [st, rt],
        });
        let call = Neighbor::Alltoallw {
            s: send_ptr(send.as_slice()),
            sc: kept.counts[0].as_ptr(),
            sd: kept.addresses[0].as_ptr(),
            st: kept.types[0].as_ptr(),
            d: recv_ptr(recv.as_mut_slice()),
            rc: kept.counts[1].as_ptr(),
            rd: kept.addresses[1].as_ptr(),
            rt: kept.types[1].as_ptr(),
        };
        // SAFETY: `call` names the buffers' storage, which the blocks checked against their
        // layouts (the receive blocks sharing no byte), and the arrays in `kept`, whose heap
        // storage does not move with the box; the buffers and `kept` move into the request,
        // which borrows the layouts.
        unsafe { self.persistent(Call::Neighbor(call), Pair { send, recv }, Some(kept), OP) }
    }
}
