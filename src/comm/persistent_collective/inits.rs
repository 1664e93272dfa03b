//! The public `*_init` methods of every persistent collective (MPI-4.0 §6.13): barrier,
//! broadcast, the reductions, the data movements with equal and with per-rank blocks.

use super::{Call, KeptTypes, dst, src};
use crate::comm::Communicator;
use crate::comm::call::{MoveFn, ReduceFn, in_place};
use crate::comm::large::large_count;
use crate::comm::partition::{Partition, TypedPartition};
use crate::datatype::{Equivalence, recv_ptr};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::op::OwnedOp;
use crate::request::{Buffers, NoBuffer, OwnedBuffer, Pair, PersistentRequest};
use std::ffi::{c_int, c_void};

/// Persistent collectives: `barrier_init` and `bcast_init`; the reductions and data movements
/// follow (MPI-4.0 §6.13). Set up once, then `start` and `wait` many times.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::op::Max;
/// let world = mpi.world();
/// let sync = world.barrier_init()?;
/// let mut bound = world.allreduce_init_in_place(vec![0.0f64], Max)?;
/// for iteration in 0..3 {
///     bound.buffer_mut()[0] = f64::from(world.rank() + iteration);
///     bound.start()?.wait()?;
///     assert_eq!(bound.buffer()[0], f64::from(world.size() - 1 + iteration));
/// }
/// drop(sync);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Sets up a persistent barrier (`MPI_Barrier_init`, MPI-4.0 §6.13).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut sync = world.barrier_init()?;
    /// for _ in 0..3 {
    ///     sync.start()?.wait()?;
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::WrongThread`]; [`Error::Mpi`].
    pub fn barrier_init(&self) -> Result<PersistentRequest<'_, NoBuffer>> {
        self.persistent(Call::Barrier, NoBuffer, None, "barrier_init")
    }

    /// Sets up a persistent broadcast of `buf` from `root` (`MPI_Bcast_init`, §6.13).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut params = world.bcast_init(vec![0.0f64; 3], 0)?;
    /// for step in 0..2 {
    ///     if world.rank() == 0 {
    ///         params.buffer_mut().fill(f64::from(step));
    ///     }
    ///     params.start()?.wait()?;
    ///     assert_eq!(params.buffer(), &[f64::from(step); 3]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        if crate::comm::large::bcast_schedule_broken(size_of_val(buf.as_slice())) {
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
}

/// The persistent forms of the reductions with `MPI_Allreduce`'s arguments.
macro_rules! reduction_inits {
    ($($f:expr => $name:ident, $in_place:ident, $mpi:literal, $what:literal, $send:literal;)*) => {$(
        #[doc = concat!("Sets up a persistent ", $what, " (`", $mpi, "`, MPI-4.0 §6.13); the")]
        /// request owns `send`, `recv` and `op`.
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($name), "(vec![1u32; ", $send, "], vec![0u32; 1], ferrompi::op::Sum)", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
        ///
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
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($in_place), "(vec![1u32; ", $send, "], ferrompi::op::Sum)", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
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
    (no root: $($f:expr => $name:ident, $in_place:ident, $mpi:literal, $blocking:ident, $send:literal, $recv:literal, $buf:literal;)*) => {$(
        #[doc = concat!("Sets up a persistent [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") (`", $mpi, "`, MPI-4.0 §6.13); the request owns both buffers.")]
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($name), "(vec![1u32; ", $send, "], vec![0u32; ", $recv, "])", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
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

        #[doc = concat!("The in-place form of [`", stringify!($name), "`](Communicator::", stringify!($name), "), with `buf` as [`", stringify!($blocking), "_in_place`](Communicator::", stringify!($blocking), "_in_place) takes it.")]
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($in_place), "(vec![1u32; ", $buf, "])", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
        ///
        /// # Errors
        #[doc = concat!("As [`", stringify!($name), "`](Communicator::", stringify!($name), ").")]
        pub fn $in_place<B: OwnedBuffer>(&self, buf: B) -> Result<PersistentRequest<'_, B>> {
            self.move_init_one($f, buf, 0)
        }
    )*};
    ($($f:expr => $name:ident, $in_place:ident, $mpi:literal, $blocking:ident, $send:literal, $recv:literal, $buf:literal;)*) => {$(
        #[doc = concat!("Sets up a persistent [`", stringify!($blocking), "`](Communicator::", stringify!($blocking), ") (`", $mpi, "`, MPI-4.0 §6.13); the request owns both buffers.")]
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($name), "(vec![1u32; ", $send, "], vec![0u32; ", $recv, "], 0)", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
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

        #[doc = concat!("The in-place form of [`", stringify!($name), "`](Communicator::", stringify!($name), "), with `buf` as [`", stringify!($blocking), "_in_place`](Communicator::", stringify!($blocking), "_in_place) takes it.")]
        #[doc = ""]
        #[doc = " ```"]
        #[doc = " # let mpi = ferrompi::Mpi::init()?;"]
        #[doc = " # let world = mpi.world();"]
        #[doc = " let n = world.size() as usize;"]
        #[doc = " let root = world.rank() == 0;"]
        #[doc = concat!(" let mut request = world.", stringify!($in_place), "(vec![1u32; ", $buf, "], 0)", "?;")]
        #[doc = " for _ in 0..2 {"]
        #[doc = "     request.start()?.wait()?; // set up once, started many times"]
        #[doc = " }"]
        #[doc = " # let _ = (n, root);"]
        #[doc = " # Ok::<(), ferrompi::Error>(())"]
        #[doc = " ```"]
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

/// Persistent collectives: the reductions and the data movements, with equal and with per-rank
/// blocks (MPI-4.0 §6.13).
impl<'env> Communicator<'env> {
    reduction_inits! {
        ReduceFn::All => allreduce_init, allreduce_init_in_place, "MPI_Allreduce_init", "allreduce", "1";
        ReduceFn::Scan => scan_init, scan_init_in_place, "MPI_Scan_init", "inclusive prefix reduction", "1";
        ReduceFn::Exscan => exscan_init, exscan_init_in_place, "MPI_Exscan_init", "exclusive prefix reduction", "1";
        ReduceFn::ScatterBlock => reduce_scatter_block_init, reduce_scatter_block_init_in_place,
            "MPI_Reduce_scatter_block_init", "reduce-scatter of equal blocks", "n";
    }

    move_inits! {
        MoveFn::Gather => gather_init, gather_init_in_place, "MPI_Gather_init", gather,
            "1", "if root { n } else { 0 }", "if root { n } else { 1 }";
        MoveFn::Scatter => scatter_init, scatter_init_in_place, "MPI_Scatter_init", scatter,
            "if root { n } else { 0 }", "1", "if root { n } else { 1 }";
    }

    move_inits! {
        no root:
        MoveFn::Allgather => allgather_init, allgather_init_in_place, "MPI_Allgather_init", allgather,
            "1", "n", "n";
        MoveFn::Alltoall => alltoall_init, alltoall_init_in_place, "MPI_Alltoall_init", alltoall,
            "n", "n", "n";
    }

    /// Sets up a persistent reduction of `send` with `op` into `recv` at `root`
    /// (`MPI_Reduce_init`, MPI-4.0 §6.13). `recv` is as long as `send` at the root and unused
    /// elsewhere; the request owns both and `op`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let at_root = if world.rank() == 0 { 1 } else { 0 };
    /// let mut total = world.reduce_init(vec![1u64], vec![0u64; at_root], Sum, 0)?;
    /// total.start()?.wait()?;
    /// if world.rank() == 0 {
    ///     assert_eq!(total.recv(), &[world.size() as u64]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Max;
    /// let mut best = world.reduce_init_in_place(vec![0i32], Max, 0)?;
    /// best.buffer_mut()[0] = world.rank();
    /// best.start()?.wait()?;
    /// if world.rank() == 0 {
    ///     assert_eq!(best.buffer(), &[world.size() - 1]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
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
        self.persistent(call, Pair { send, recv }, Some(kept), OP)
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
        self.reduce_scatter_init_with(s, d, blocks, operand, op, Pair { send, recv })
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
