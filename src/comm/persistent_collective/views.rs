//! Persistent collectives on layouts (MPI-4.0 §6.13, §5.1): the request owns each buffer
//! through an [`OwnedView`], which checked its layout against it once, and borrows the
//! layouts for as long as it lives.

use super::call::Call;
use crate::comm::Communicator;
use crate::comm::call::MoveFn;
use crate::datatype::{recv_ptr, send_ptr};
use crate::error::Result;
use crate::request::{OwnedBuffer, OwnedView, Pair, PersistentRequest};

impl Communicator<'_> {
    /// Sets up a persistent broadcast into what `view` selects in the buffer it holds
    /// (`MPI_Bcast_init` with a derived type, MPI-4.0 §6.13, §5.1); the request owns the
    /// buffer and borrows the layout.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// let diagonal = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?; // of a 3 x 3
    /// let mut request = world.bcast_init_view(diagonal.owned_view(vec![0.0f64; 9], 1)?, 0)?;
    /// for step in 1..3 {
    ///     if world.rank() == 0 {
    ///         request.buffer_mut().fill(f64::from(step));
    ///     }
    ///     request.start()?.wait()?;
    ///     assert_eq!(request.buffer()[4], f64::from(step)); // on the diagonal
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`bcast_init`](Self::bcast_init).
    pub fn bcast_init_view<'c, B: OwnedBuffer>(
        &'c self,
        view: OwnedView<'c, B>,
        root: i32,
    ) -> Result<PersistentRequest<'c, B>> {
        const OP: &str = "bcast_init";
        self.is_root(root, OP)?;
        let (mut buf, n, dt) = view.into_parts();
        let buf_ptr = recv_ptr(buf.as_mut_slice());
        let call = Call::Bcast {
            buf: buf_ptr,
            n,
            dt,
            root,
        };
        // SAFETY: `call` names the buffer's storage, which the view checked against the
        // layout and which moves into the request; the layout is borrowed for as long.
        unsafe { self.persistent(call, buf, None, OP) }
    }

    /// An equal-block data movement on owned views, set up once (see
    /// [`gather_view`](Self::gather_view) for how the views divide among the ranks).
    fn move_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        f: MoveFn,
        send: OwnedView<'c, S>,
        recv: OwnedView<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let operation = f.init_name();
        let (send, sc, st) = send.into_parts();
        let (mut recv, rc, dt) = recv.into_parts();
        let (sn, dn) = self.move_counts(f, (sc, rc), root, operation)?;
        let call = Call::Move {
            f,
            s: send_ptr(send.as_slice()),
            sn,
            st,
            d: recv_ptr(recv.as_mut_slice()),
            dn,
            dt,
            root,
        };
        // SAFETY: `call` names the buffers' storage, which the views checked against their
        // layouts (MPI reaches at most `size` blocks of the per-rank counts, the views' counts
        // divided among the ranks); both move into the request, which borrows the layouts.
        unsafe { self.persistent(call, Pair { send, recv }, None, operation) }
    }

    /// Sets up a persistent [`gather_view`](Self::gather_view) (`MPI_Gather_init`, MPI-4.0
    /// §6.13); the request owns both buffers.
    ///
    /// # Errors
    /// As [`gather_view`](Self::gather_view) and [`gather_init`](Self::gather_init).
    pub fn gather_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedView<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        self.move_init_view(MoveFn::Gather, send, recv, root)
    }

    /// Sets up a persistent [`scatter_view`](Self::scatter_view) (`MPI_Scatter_init`, MPI-4.0
    /// §6.13).
    ///
    /// # Errors
    /// As [`scatter_view`](Self::scatter_view) and [`scatter_init`](Self::scatter_init).
    pub fn scatter_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedView<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        self.move_init_view(MoveFn::Scatter, send, recv, root)
    }

    /// Sets up a persistent [`allgather_view`](Self::allgather_view) (`MPI_Allgather_init`,
    /// MPI-4.0 §6.13).
    ///
    /// # Errors
    /// As [`allgather_view`](Self::allgather_view) and [`allgather_init`](Self::allgather_init).
    pub fn allgather_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedView<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        self.move_init_view(MoveFn::Allgather, send, recv, 0)
    }

    /// Sets up a persistent [`alltoall_view`](Self::alltoall_view) (`MPI_Alltoall_init`,
    /// MPI-4.0 §6.13): a distributed transpose started at every step.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// let n = world.size() as usize;
    /// let column = DerivedType::vector(&mpi, n, 1, n as isize, f64::datatype())?;
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?;
    /// let row = DerivedType::contiguous(&mpi, n, f64::datatype())?;
    /// let me = world.rank() as usize;
    /// let matrix: Vec<f64> = (0..n * n).map(|k| (me * 1000 + k) as f64).collect();
    /// let mut transpose = world.alltoall_init_view(
    ///     columns.owned_view(matrix, n)?,
    ///     row.owned_view(vec![0.0; n * n], n)?,
    /// )?;
    /// transpose.start()?.wait()?;
    /// let rows = transpose.recv();
    /// assert!((0..n).all(|q| (0..n).all(|i| rows[q * n + i] == (q * 1000 + i * n + me) as f64)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`alltoall_view`](Self::alltoall_view) and [`alltoall_init`](Self::alltoall_init).
    pub fn alltoall_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedView<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        self.move_init_view(MoveFn::Alltoall, send, recv, 0)
    }
}
