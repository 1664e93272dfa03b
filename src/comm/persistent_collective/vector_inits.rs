//! The persistent collectives with per-rank blocks from a [`Partition`]
//! (MPI-4.0 §6.13): `gatherv_init`, `scatterv_init`, `allgatherv_init`, `alltoallv_init`,
//! `alltoallw_init`, `reduce_scatter_init`, and their in-place forms. The others are in
//! [`inits`](super::inits).

use super::{Call, dst, src};
use crate::comm::Communicator;
use crate::comm::partition::{Partition, TypedPartition};
use crate::datatype::Equivalence;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::op::OwnedOp;
use crate::request::{Buffers, OwnedBuffer, Pair, PersistentRequest};
use std::ffi::{c_int, c_void};

/// Persistent collectives with per-rank blocks (MPI-4.0 §6.13): set up once, started many
/// times.
impl<'env> Communicator<'env> {
    /// The request of a v-collective, which keeps a copy of `blocks` (MPI reads the counts at
    /// every start) and gets pointers to its arrays.
    ///
    /// # Safety
    /// The `Call` that `call` makes names the arrays it is given and buffers as
    /// [`persistent`](Self::persistent) requires, checked against `blocks`.
    pub(super) unsafe fn v_init<'a, T: Equivalence, B: Buffers>(
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
        // SAFETY: per this function's contract, `call` names the buffers' storage (and the
        // kept arrays); both move into the request.
        unsafe { self.persistent(call, buffers, Some(kept), operation) }
    }

    /// Sets up a persistent [`gatherv`](Communicator::gatherv) (`MPI_Gatherv_init`, MPI-4.0
    /// §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let mut gather = world.gatherv_init(vec![rank as u32; 2], vec![0u32; if rank == 0 { 2 * size } else { 0 }], &blocks, 0)?;
    /// gather.start()?.wait()?;
    /// if rank == 0 {
    ///     assert_eq!(gather.recv()[2 * size - 1], size as u32 - 1);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`gatherv`](Communicator::gatherv); [`ErrorKind::CountOverflow`] for blocks beyond `int`.
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe { self.v_init(&[blocks], buffers, OP, gatherv((s, sn), d, dt, Some(root))) }
    }

    /// The in-place form of [`gatherv_init`](Communicator::gatherv_init), with `buf` as
    /// [`gatherv_in_place`](Communicator::gatherv_in_place) takes it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let buf = if rank == 0 { vec![0u32; 2 * size] } else { vec![rank as u32; 2] };
    /// let mut gather = world.gatherv_init_in_place(buf, &blocks, 0)?;
    /// gather.start()?.wait()?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
            (ffi::MPI_IN_PLACE.cast_const(), 0, ptr)
        } else {
            let sn = self.own_block(blocks, len, OP)?;
            (ptr.cast_const(), sn, std::ptr::null_mut())
        };
        let dt = B::Item::datatype().as_raw();
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe { self.v_init(&[blocks], buf, OP, gatherv((s, sn), d, dt, Some(root))) }
    }

    /// Sets up a persistent [`scatterv`](Communicator::scatterv) (`MPI_Scatterv_init`, MPI-4.0
    /// §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let all: Vec<u32> = if rank == 0 { (0..2 * size as u32).collect() } else { Vec::new() };
    /// let mut scatter = world.scatterv_init(all, vec![0u32; 2], &blocks, 0)?;
    /// scatter.start()?.wait()?;
    /// assert_eq!(scatter.recv(), &[2 * rank as u32, 2 * rank as u32 + 1]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe { self.v_init(&[blocks], buffers, OP, scatterv(s, (d, dn), dt, root)) }
    }

    /// The in-place form of [`scatterv_init`](Communicator::scatterv_init), with `buf` as
    /// [`scatterv_in_place`](Communicator::scatterv_in_place) takes it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let buf = if rank == 0 { (0..2 * size as u32).collect() } else { vec![0u32; 2] };
    /// let mut scatter = world.scatterv_init_in_place(buf, &blocks, 0)?;
    /// scatter.start()?.wait()?;
    /// assert_eq!(scatter.buffer()[0], 2 * rank as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
            (ptr.cast_const(), ffi::MPI_IN_PLACE, 0)
        } else {
            let dn = self.own_block(blocks, len, OP)?;
            (std::ptr::null(), ptr, dn)
        };
        let dt = B::Item::datatype().as_raw();
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe { self.v_init(&[blocks], buf, OP, scatterv(s, (d, dn), dt, root)) }
    }

    /// Sets up a persistent [`allgatherv`](Communicator::allgatherv) (`MPI_Allgatherv_init`,
    /// MPI-4.0 §6.13). The request owns both buffers and a copy of `blocks`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let mut gather = world.allgatherv_init(vec![rank as u32; 2], vec![0u32; 2 * size], &blocks)?;
    /// for _ in 0..2 {
    ///     gather.start()?.wait()?;
    /// }
    /// assert_eq!(gather.recv()[2 * size - 1], size as u32 - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe { self.v_init(&[blocks], buffers, OP, gatherv((s, sn), d, dt, None)) }
    }

    /// The in-place form of [`allgatherv_init`](Communicator::allgatherv_init): this rank's
    /// block of `buf` is sent.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let mut all = vec![0u32; 2 * size];
    /// all[2 * rank..2 * rank + 2].fill(rank as u32);
    /// let mut gather = world.allgatherv_init_in_place(all, &blocks)?;
    /// gather.start()?.wait()?;
    /// assert_eq!(gather.buffer()[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe {
            self.v_init(
                &[blocks],
                buf,
                OP,
                gatherv((ffi::MPI_IN_PLACE.cast_const(), 0), d, dt, None),
            )
        }
    }

    /// Sets up a persistent [`alltoallv`](Communicator::alltoallv) (`MPI_Alltoallv_init`,
    /// MPI-4.0 §6.13). The request owns both buffers and copies of the partitions.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let mut exchange = world.alltoallv_init(vec![rank as u32; 2 * size], &blocks, vec![0u32; 2 * size], &blocks)?;
    /// exchange.start()?.wait()?;
    /// assert_eq!(exchange.recv()[0], 0); // from rank 0
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe {
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
    }

    /// The in-place form of [`alltoallv_init`](Communicator::alltoallv_init), with `buf` as
    /// [`alltoallv_in_place`](Communicator::alltoallv_in_place) takes it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// let mut exchange = world.alltoallv_init_in_place(vec![rank as u32; 2 * size], &blocks)?;
    /// exchange.start()?.wait()?;
    /// assert_eq!(exchange.buffer()[2 * size - 1], size as u32 - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: the `Call` it makes points into the buffers, which were checked against
        // `blocks` above and move into the request.
        unsafe {
            self.v_init(&[blocks], buf, OP, |a| Call::Alltoallv {
                s: ffi::MPI_IN_PLACE.cast_const(),
                sc: a[0].0,
                sd: a[0].1,
                d,
                rc: a[0].0,
                rd: a[0].1,
                dt,
            })
        }
    }

    /// Sets up a persistent [`alltoallw`](Communicator::alltoallw) (`MPI_Alltoallw_init`,
    /// MPI-4.0 §6.13) on byte buffers. The request owns both and copies of the partitions.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<u32>(1, 4 * r)).collect::<Vec<_>>())?;
    /// let send: Vec<u8> = (0..size).flat_map(|_| (world.rank() as u32).to_ne_bytes()).collect();
    /// let mut exchange = world.alltoallw_init(send, &blocks, vec![0u8; 4 * size], &blocks)?;
    /// exchange.start()?.wait()?;
    /// assert_eq!(&exchange.recv()[..4], &0u32.to_ne_bytes());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: `call` names the storage of the buffers passed with it, checked above, and
        // what the kept part holds; both move into the request.
        unsafe { self.persistent(call, Pair { send, recv }, Some(kept), OP) }
    }

    /// The in-place form of [`alltoallw_init`](Communicator::alltoallw_init).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<u8>(1, r)).collect::<Vec<_>>())?;
    /// let mut exchange = world.alltoallw_init_in_place(vec![world.rank() as u8; size], &blocks)?;
    /// exchange.start()?.wait()?;
    /// assert_eq!(exchange.buffer()[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
            s: ffi::MPI_IN_PLACE.cast_const(),
            sc: rc,
            sd: rd,
            st: rt,
            d,
            rc,
            rd,
            rt,
        };
        // SAFETY: `call` names the storage of the buffers passed with it, checked above, and
        // what the kept part holds; both move into the request.
        unsafe { self.persistent(call, buf, Some(kept), OP) }
    }

    /// Sets up a persistent [`reduce_scatter`](Communicator::reduce_scatter)
    /// (`MPI_Reduce_scatter_init`, MPI-4.0 §6.13). The request owns both buffers, a copy of
    /// `blocks` and `op`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// use ferrompi::op::Sum;
    /// let mut sums = world.reduce_scatter_init(vec![1u32; 2 * size], vec![0u32; 2], &blocks, Sum)?;
    /// sums.start()?.wait()?;
    /// assert_eq!(sums.recv(), &[size as u32; 2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        // SAFETY: `s` and `d` point into the buffers, which were checked above and move into
        // the request.
        unsafe { self.reduce_scatter_init_with(s, d, blocks, operand, op, Pair { send, recv }) }
    }

    /// The in-place form of [`reduce_scatter_init`](Communicator::reduce_scatter_init), with
    /// `buf` as [`reduce_scatter_in_place`](Communicator::reduce_scatter_in_place) takes it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// let blocks = Partition::<u32>::uniform(size, 2)?; // two values per rank
    /// use ferrompi::op::Sum;
    /// let mut sums = world.reduce_scatter_init_in_place(vec![1u32; 2 * size], &blocks, Sum)?;
    /// sums.start()?.wait()?;
    /// assert_eq!(&sums.buffer()[..2], &[size as u32; 2]); // this rank's block, at the start
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        let s = ffi::MPI_IN_PLACE.cast_const();
        // SAFETY: `s` and `d` point into the buffers, which were checked above and move into
        // the request.
        unsafe { self.reduce_scatter_init_with(s, d, blocks, operand, op, buf) }
    }

    /// The request of `reduce_scatter` from `s` (or `MPI_IN_PLACE`) into `d`.
    ///
    /// # Safety
    /// `s` and `d` lie in the heap storage of `buffers`, checked against `blocks` and
    /// `operand` as [`persistent`](Self::persistent) requires.
    unsafe fn reduce_scatter_init_with<'a, T: Equivalence, B: Buffers, O: OwnedOp<T> + 'a>(
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
        // SAFETY: per this function's contract, `call` names the buffers' storage (and the
        // kept arrays); both move into the request.
        unsafe { self.persistent(call, buffers, Some(kept), OP) }
    }
}

/// The arrays [`Communicator::v_init`] gives a one-partition call: counts and displacements.
type Arrays<'a> = &'a [(*const c_int, *const c_int)];

/// The `Call` of a gatherv (`root: None`: an allgatherv) sending `sn` elements from `s`, with
/// the receive counts and displacements `v_init` gives.
fn gatherv(
    (s, sn): (*const c_void, c_int),
    d: *mut c_void,
    dt: ffi::MPI_Datatype,
    root: Option<c_int>,
) -> impl FnOnce(Arrays<'_>) -> Call {
    move |a| Call::Gatherv {
        s,
        sn,
        d,
        rc: a[0].0,
        rd: a[0].1,
        dt,
        root,
    }
}

/// The `Call` of a scatterv receiving `dn` elements into `d`, with the send counts and
/// displacements `v_init` gives.
fn scatterv(
    s: *const c_void,
    (d, dn): (*mut c_void, c_int),
    dt: ffi::MPI_Datatype,
    root: c_int,
) -> impl FnOnce(Arrays<'_>) -> Call {
    move |a| Call::Scatterv {
        s,
        sc: a[0].0,
        sd: a[0].1,
        d,
        dn,
        dt,
        root,
    }
}
