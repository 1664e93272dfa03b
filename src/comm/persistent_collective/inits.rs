//! The public `*_init` methods of the persistent collectives with equal blocks (MPI-4.0 §6.13):
//! barrier, broadcast, the reductions, and gather, scatter, allgather, alltoall. Those with
//! per-rank blocks are in [`vector_inits`](super::vector_inits).

use super::{Call, KeptTypes, dst, src};
use crate::comm::Communicator;
use crate::comm::call::{MoveFn, ReduceFn};
use crate::comm::large::large_count;
use crate::datatype::{Equivalence, recv_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::op::OwnedOp;
use crate::request::{NoBuffer, OwnedBuffer, Pair, PersistentRequest};

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
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn barrier_init(&self) -> Result<PersistentRequest<'_, NoBuffer>> {
        // SAFETY: a barrier names no buffer.
        unsafe { self.persistent(Call::Barrier, NoBuffer, None, "barrier_init") }
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
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::CountOverflow`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
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
        // SAFETY: `call` names the storage of the buffers passed with it, checked above, and
        // what the kept part holds; both move into the request.
        unsafe { self.persistent(call, buf, kept.keep(), OP) }
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
        /// [`ErrorKind::BufferSize`], [`ErrorKind::InvalidArgument`], [`ErrorKind::CountOverflow`]
        /// before any communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
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
            // SAFETY: the pointers are those of the buffers, which move into the request.
            unsafe { self.reduction_init::<S::Item, _, _>(Ok($f), Some(s), d, Pair { send, recv }, op) }
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
            // SAFETY: the pointers are those of the buffers, which move into the request.
            unsafe { self.reduction_init::<B::Item, _, _>(Ok($f), None, d, buf, op) }
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

/// Persistent collectives: the reductions and the data movements with equal blocks (MPI-4.0
/// §6.13).
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
    /// [`ErrorKind::InvalidRank`], [`ErrorKind::BufferSize`], [`ErrorKind::CountOverflow`] before
    /// any communication; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
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
        // SAFETY: the pointers are those of the buffers, which move into the request.
        unsafe {
            self.reduction_init::<S::Item, _, _>(Err(root), Some(s), d, Pair { send, recv }, op)
        }
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
        // SAFETY: the pointers are those of the buffers, which move into the request.
        unsafe { self.reduction_init::<B::Item, _, _>(Err(root), None, d, buf, op) }
    }
}
