//! Persistent collectives on layouts (MPI-4.0 §6.13, §5.1): the request owns each buffer
//! through an [`OwnedView`], which checked its layout against it once, and borrows the
//! layouts for as long as it lives; the `v` forms take per-rank blocks through an
//! [`OwnedBlocks`] and keep their counts and displacements.

use super::call::Call;
use crate::comm::Communicator;
use crate::comm::call::{MoveFn, Side, VFn};
use crate::datatype::{recv_ptr, send_ptr};
use crate::error::Result;
use crate::ffi;
use crate::request::{
    OwnedBlocks, OwnedBuffer, OwnedLayoutBlocks, OwnedView, Pair, PersistentRequest,
};
use std::ffi::c_int;

/// The arrays of a persistent `alltoallw` on layouts, kept with its request: counts and byte
/// displacements, and the layouts' datatype handles (borrowed by the request, never freed here).
struct KeptArrays {
    ints: [Vec<c_int>; 4],
    types: [Vec<ffi::MPI_Datatype>; 2],
}

// SAFETY: plain integers and handles of committed datatypes, which only MPI reads, while the
// request that keeps them lives.
unsafe impl Send for KeptArrays {}
// SAFETY: as for `Send`: nothing writes them after they are made.
unsafe impl Sync for KeptArrays {}

/// One side of a persistent `v` collective on layouts: a single view, or per-rank blocks.
enum Owned<'c, B: OwnedBuffer> {
    View(OwnedView<'c, B>),
    Blocks(OwnedBlocks<'c, B>),
}

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

    /// A `v` collective on owned layouts, set up once: each side a view or blocks (the blocks
    /// significant only at the root of a rooted one), a receive side's blocks checked to
    /// share no byte, the blocks' arrays kept with the request.
    fn vmove_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        f: VFn,
        send: Owned<'c, S>,
        recv: Owned<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let operation = f.init_name();
        let at_root = match f {
            VFn::Gatherv | VFn::Scatterv => self.is_root(root, operation)?,
            VFn::Allgatherv | VFn::Alltoallv => true,
        };
        let mut kept: Box<[Vec<c_int>; 4]> = Box::default();
        let (send, s) = match send {
            Owned::View(view) => {
                let (buf, n, dt) = view.into_parts();
                let s = Side::single(send_ptr(buf.as_slice()), n, dt);
                (buf, s)
            }
            Owned::Blocks(blocks) => {
                if at_root {
                    self.per_rank(blocks.counts(), "send blocks", operation)?;
                }
                let (buf, counts, displs, dt) = blocks.into_parts();
                [kept[0], kept[1]] = [counts, displs];
                let ptr = send_ptr(buf.as_slice());
                let s = if at_root {
                    Side::blocked(ptr, &kept[0], &kept[1], dt)
                } else {
                    Side::single(std::ptr::null(), 0, dt) // not significant here
                };
                (buf, s)
            }
        };
        let (recv, d) = match recv {
            Owned::View(view) => {
                let (mut buf, n, dt) = view.into_parts();
                let d = Side::single(recv_ptr(buf.as_mut_slice()), n, dt);
                (buf, d)
            }
            Owned::Blocks(blocks) => {
                if at_root {
                    self.per_rank(blocks.counts(), "receive blocks", operation)?;
                    blocks.check_receive(operation)?;
                }
                let (mut buf, counts, displs, dt) = blocks.into_parts();
                [kept[2], kept[3]] = [counts, displs];
                let ptr = recv_ptr(buf.as_mut_slice());
                let d = if at_root {
                    Side::blocked(ptr, &kept[2], &kept[3], dt)
                } else {
                    Side::single(std::ptr::null_mut(), 0, dt) // not significant here
                };
                (buf, d)
            }
        };
        let call = Call::Layout { f, s, d, root };
        // SAFETY: `call` names the buffers' storage, which the views and blocks checked
        // against their layouts (a receive side's blocks sharing no byte), and the arrays in
        // `kept`, whose heap storage does not move with the box; the buffers and `kept` move
        // into the request, which borrows the layouts.
        unsafe { self.persistent(call, Pair { send, recv }, Some(kept), operation) }
    }

    /// Sets up a persistent [`gatherv_view`](Self::gatherv_view) (`MPI_Gatherv_init`, MPI-4.0
    /// §6.13): the request owns both buffers and keeps the blocks' arrays. `recv` is
    /// significant only at the root; elsewhere any blocks do, such as none over an empty
    /// buffer.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Rank r's two values go to column r of rank 0's 2 x size grid, at every start.
    /// let size = world.size() as usize;
    /// let column = DerivedType::vector(&mpi, 2, 1, size as isize, f64::datatype())?;
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?;
    /// let two = DerivedType::contiguous(&mpi, 2, f64::datatype())?;
    /// let grid = if world.rank() == 0 {
    ///     columns.owned_blocks(vec![0.0; 2 * size], &vec![1; size], &(0..size).collect::<Vec<_>>())?
    /// } else {
    ///     columns.owned_blocks(Vec::new(), &[], &[])?
    /// };
    /// let mut gather = world.gatherv_init_view(two.owned_view(vec![world.rank() as f64; 2], 1)?, grid, 0)?;
    /// gather.start()?.wait()?;
    /// if world.rank() == 0 {
    ///     assert_eq!(gather.recv()[size - 1], (size - 1) as f64); // row 0, column size - 1
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`gatherv_view`](Self::gatherv_view) and [`gatherv_init`](Self::gatherv_init).
    pub fn gatherv_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedBlocks<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let (send, recv) = (Owned::View(send), Owned::Blocks(recv));
        self.vmove_init_view(VFn::Gatherv, send, recv, root)
    }

    /// Sets up a persistent [`scatterv_view`](Self::scatterv_view) (`MPI_Scatterv_init`,
    /// MPI-4.0 §6.13); `send` is significant only at the root.
    ///
    /// # Errors
    /// As [`scatterv_view`](Self::scatterv_view) and [`scatterv_init`](Self::scatterv_init).
    pub fn scatterv_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedBlocks<'c, S>,
        recv: OwnedView<'c, R>,
        root: i32,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let (send, recv) = (Owned::Blocks(send), Owned::View(recv));
        self.vmove_init_view(VFn::Scatterv, send, recv, root)
    }

    /// Sets up a persistent [`allgatherv_view`](Self::allgatherv_view)
    /// (`MPI_Allgatherv_init`, MPI-4.0 §6.13).
    ///
    /// # Errors
    /// As [`allgatherv_view`](Self::allgatherv_view) and
    /// [`allgatherv_init`](Self::allgatherv_init).
    pub fn allgatherv_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedView<'c, S>,
        recv: OwnedBlocks<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let (send, recv) = (Owned::View(send), Owned::Blocks(recv));
        self.vmove_init_view(VFn::Allgatherv, send, recv, 0)
    }

    /// Sets up a persistent [`alltoallv_view`](Self::alltoallv_view) (`MPI_Alltoallv_init`,
    /// MPI-4.0 §6.13): a redistribution between two decompositions, started at every step.
    ///
    /// # Errors
    /// As [`alltoallv_view`](Self::alltoallv_view) and [`alltoallv_init`](Self::alltoallv_init).
    pub fn alltoallv_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedBlocks<'c, S>,
        recv: OwnedBlocks<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        let (send, recv) = (Owned::Blocks(send), Owned::Blocks(recv));
        self.vmove_init_view(VFn::Alltoallv, send, recv, 0)
    }

    /// Sets up a persistent [`alltoallw_view`](Self::alltoallw_view) (`MPI_Alltoallw_init`,
    /// MPI-4.0 §6.13): each block its own layout at its own byte offset, the request owning
    /// both buffers and keeping the blocks' arrays; the receive blocks checked to share no
    /// byte.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, OwnedLayoutBlocks};
    /// // Column j of my n x n matrix to rank j, arriving as row `me` of its matrix.
    /// let n = world.size() as usize;
    /// let column = DerivedType::vector(&mpi, n, 1, n as isize, i32::datatype())?;
    /// let row = DerivedType::contiguous(&mpi, n, i32::datatype())?;
    /// let me = world.rank() as usize;
    /// let matrix: Vec<i32> = (0..n * n).map(|k| (me * 100 + k) as i32).collect();
    /// let send: Vec<_> = (0..n).map(|j| (&column, 1, 4 * j)).collect();
    /// let recv: Vec<_> = (0..n).map(|i| (&row, 1, 4 * n * i)).collect();
    /// let mut transpose = world.alltoallw_init_view(
    ///     OwnedLayoutBlocks::new(matrix, &send)?,
    ///     OwnedLayoutBlocks::new(vec![0i32; n * n], &recv)?,
    /// )?;
    /// transpose.start()?.wait()?;
    /// assert_eq!(transpose.recv()[0], me as i32); // row 0 from rank 0: its column `me`
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`alltoallw_view`](Self::alltoallw_view) and [`alltoallw_init`](Self::alltoallw_init).
    pub fn alltoallw_init_view<'c, S: OwnedBuffer, R: OwnedBuffer>(
        &'c self,
        send: OwnedLayoutBlocks<'c, S>,
        recv: OwnedLayoutBlocks<'c, R>,
    ) -> Result<PersistentRequest<'c, Pair<S, R>>> {
        const OP: &str = "alltoallw_init_view";
        self.per_rank(send.counts(), "send blocks", OP)?;
        self.per_rank(recv.counts(), "receive blocks", OP)?;
        recv.check_receive(OP)?;
        let (send, sc, sd, st) = send.into_parts();
        let (mut recv, rc, rd, rt) = recv.into_parts();
        let kept = Box::new(KeptArrays {
            ints: [sc, sd, rc, rd],
            types: [st, rt],
        });
        let call = Call::Alltoallw {
            s: send_ptr(send.as_slice()),
            sc: kept.ints[0].as_ptr(),
            sd: kept.ints[1].as_ptr(),
            st: kept.types[0].as_ptr(),
            d: recv_ptr(recv.as_mut_slice()),
            rc: kept.ints[2].as_ptr(),
            rd: kept.ints[3].as_ptr(),
            rt: kept.types[1].as_ptr(),
        };
        // SAFETY: `call` names the buffers' storage, which the blocks checked against their
        // layouts (the receive blocks sharing no byte), and the arrays in `kept`, whose heap
        // storage does not move with the box; the buffers and `kept` move into the request,
        // which borrows the layouts.
        unsafe { self.persistent(call, Pair { send, recv }, Some(kept), OP) }
    }
}
