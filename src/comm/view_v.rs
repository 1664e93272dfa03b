//! The `v` collectives on layouts (`MPI_Gatherv`, `MPI_Scatterv`, `MPI_Allgatherv`,
//! `MPI_Alltoallv` and their `i` forms, MPI-4.0 §6.5–§6.8, §6.12): per-rank blocks of a
//! [`DerivedType`](crate::DerivedType) laid over one buffer ([`Blocks`], [`BlocksMut`]), such
//! as the tiles of a global grid gathered at one rank, each rank's block of its own type.

use super::Communicator;
use super::call::{RecvSide, SendSide, Side, VFn, WSide, alltoallw, vmove};
use crate::datatype::{
    Blocks, BlocksMut, Equivalence, LayoutBlocks, LayoutBlocksMut, View, ViewMut,
};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::request::{Repair, Request, Scope};
use std::ffi::{c_int, c_void};

/// The error for a blocked side without one block per rank.
#[cold]
fn not_per_rank(operation: &'static str, what: &str, blocks: usize, size: i32) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("the {what} has {blocks} blocks: one per rank ({size}) is needed"),
    }
    .into()
}

/// The error for a root without its blocked side.
#[cold]
fn root_without(operation: &'static str, what: &str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("the root must pass its {what} (`Some`)"),
    }
    .into()
}

impl<'env> Communicator<'env> {
    /// Checks that `counts` has one block per rank.
    pub(in crate::comm) fn per_rank(
        &self,
        counts: &[c_int],
        what: &str,
        operation: &'static str,
    ) -> Result<()> {
        if counts.len() == self.size_usize() {
            Ok(())
        } else {
            Err(not_per_rank(operation, what, counts.len(), self.size))
        }
    }

    /// The two sides of a `v` call, checked: blocked sides with one block per rank where they
    /// count (at the root, or everywhere).
    fn v_sides<T: Equivalence>(
        &self,
        f: VFn,
        send: (Option<View<'_>>, Option<&Blocks<'_>>),
        recv: (Option<&mut ViewMut<'_, T>>, Option<&mut BlocksMut<'_, T>>),
        root: i32,
        operation: &'static str,
    ) -> Result<(SendSide, RecvSide)> {
        let at_root = match f {
            VFn::Gatherv | VFn::Scatterv => self.is_root(root, operation)?,
            VFn::Allgatherv | VFn::Alltoallv => true,
        };
        let send_side = match (send.0, send.1) {
            (Some(view), _) => {
                let (s, n, t) = view.raw();
                Side::single(s, n, t)
            }
            (None, Some(blocks)) if at_root => {
                let (s, counts, displs, t) = blocks.raw();
                self.per_rank(counts, "send blocks", operation)?;
                Side::blocked(s, counts, displs, t)
            }
            (None, None) if at_root => return Err(root_without(operation, "send blocks")),
            // Not significant away from the root (MPI-4.0 §6.6): nothing sent from here.
            (None, _) => Side::single(std::ptr::null(), 0, recv_type(&recv)),
        };
        let recv_side = match recv {
            (Some(view), _) => {
                let (d, n, t) = view.raw();
                Side::single(d, n, t)
            }
            (None, Some(blocks)) if at_root => {
                let (d, counts, displs, t) = blocks.raw();
                self.per_rank(counts, "receive blocks", operation)?;
                Side::blocked(d, counts, displs, t)
            }
            (None, None) if at_root => return Err(root_without(operation, "receive blocks")),
            (None, _) => Side::single(std::ptr::null_mut(), 0, send_side.datatype),
        };
        Ok((send_side, recv_side))
    }

    /// A blocking `v` call on layouts.
    fn vmove_view<T: Equivalence>(
        &self,
        f: VFn,
        send: (Option<View<'_>>, Option<&Blocks<'_>>),
        mut recv: (Option<&mut ViewMut<'_, T>>, Option<&mut BlocksMut<'_, T>>),
        root: i32,
    ) -> Result<()> {
        let operation = f.name(false);
        let (s, d) = self.v_sides(
            f,
            send,
            (recv.0.as_deref_mut(), recv.1.as_deref_mut()),
            root,
            operation,
        )?;
        let code = {
            let _gate = self.enter(operation)?;
            // SAFETY: every view and block set reaches only its own slice (checked when it
            // was made), a receive's blocks no byte twice; all are borrowed for the call.
            unsafe { vmove(self.raw, f, s, d, root, None) }
        };
        match recv {
            (Some(view), _) => view.repair(),
            (None, Some(blocks)) => blocks.repair(),
            (None, None) => {}
        }
        check(code, operation)
    }

    /// A `v` call on layouts, started in `scope`.
    fn ivmove_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: VFn,
        send: (Option<View<'s>>, Option<&'s Blocks<'_>>),
        recv: (Option<ViewMut<'s, T>>, Option<&'s mut BlocksMut<'_, T>>),
        root: i32,
    ) -> Result<Request<'s>> {
        let operation = f.name(true);
        let (mut view, mut blocks) = recv;
        let (s, d) = self.v_sides(
            f,
            send,
            (view.as_mut(), blocks.as_deref_mut()),
            root,
            operation,
        )?;
        let repair = match (view, blocks) {
            (Some(view), _) => Repair::for_slice(view.into_parts().0),
            (None, Some(blocks)) => Repair::for_slice(blocks.slice_mut()),
            (None, None) => None,
        };
        // SAFETY: as in `vmove_view`; the views, the blocks and their arrays are borrowed for
        // 's, which the scope outlasts by completing the operation.
        self.nonblocking(scope, operation, repair, |r| unsafe {
            vmove(self.raw, f, s, d, root, r)
        })
    }

    /// Collects what each rank's `send` selects into block `i` of the root's `recv` for rank
    /// `i` (`MPI_Gatherv`, MPI-4.0 §6.5): the blocks may be of any size, at any place, and
    /// interleave, such as the tiles of a global grid. `recv` is significant only at the root
    /// (`None` elsewhere); its blocks were checked to reach only its slice, and no byte
    /// twice, when they were made ([`DerivedType::blocks_mut`](crate::DerivedType::blocks_mut)).
    /// Each rank's `send` must hold what its block holds (the same type signature): a
    /// longer one is MPI's truncation error.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Rank r's column goes to column r of the root's row-major 3 x size matrix.
    /// let size = world.size() as usize;
    /// let column = DerivedType::vector(&mpi, 3, 1, size as isize, f64::datatype())?;
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?; // column r is r values in
    /// let three = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let mine = [world.rank() as f64; 3];
    /// let mut matrix = vec![-1.0; 3 * size];
    /// let displs: Vec<usize> = (0..size).collect();
    /// let mut blocks = columns.blocks_mut(&mut matrix, &vec![1; size], &displs)?;
    /// let at_root = (world.rank() == 0).then_some(&mut blocks);
    /// world.gatherv_view(three.view(&mine, 1)?, at_root, 0)?;
    /// drop(blocks);
    /// if world.rank() == 0 {
    ///     assert!(matrix.chunks(size).all(|row| row.iter().enumerate().all(|(r, &x)| x == r as f64)));
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for `root`; [`ErrorKind::InvalidArgument`] at the root for `recv`
    /// missing or without one block per rank; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`] (class
    /// `Truncate` where a rank sends more than its block holds).
    pub fn gatherv_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: Option<&mut BlocksMut<'_, T>>,
        root: i32,
    ) -> Result<()> {
        self.vmove_view(VFn::Gatherv, (Some(send), None), (None, recv), root)
    }

    /// Hands rank `i` block `i` of the root's `send` into its `recv` (`MPI_Scatterv`, MPI-4.0
    /// §6.6): the inverse of [`gatherv_view`](Self::gatherv_view). `send` is significant only
    /// at the root (`None` elsewhere); its blocks may overlap.
    ///
    /// # Errors
    /// As [`gatherv_view`](Self::gatherv_view), for the root's `send`.
    pub fn scatterv_view<T: Equivalence>(
        &self,
        send: Option<&Blocks<'_>>,
        mut recv: ViewMut<'_, T>,
        root: i32,
    ) -> Result<()> {
        self.vmove_view(VFn::Scatterv, (None, send), (Some(&mut recv), None), root)
    }

    /// Every rank gets what every rank's `send` selects, block `i` of `recv` from rank `i`
    /// (`MPI_Allgatherv`, MPI-4.0 §6.7).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] without one block per rank; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn allgatherv_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: &mut BlocksMut<'_, T>,
    ) -> Result<()> {
        self.vmove_view(VFn::Allgatherv, (Some(send), None), (None, Some(recv)), 0)
    }

    /// Block `j` of `send` goes to rank `j`, and arrives as block `i` of its `recv`, for
    /// sender `i` (`MPI_Alltoallv`, MPI-4.0 §6.8): a redistribution of a global array between
    /// two decompositions, each side's blocks in its own type.
    ///
    /// # Errors
    /// As [`allgatherv_view`](Self::allgatherv_view), for either side.
    pub fn alltoallv_view<T: Equivalence>(
        &self,
        send: &Blocks<'_>,
        recv: &mut BlocksMut<'_, T>,
    ) -> Result<()> {
        self.vmove_view(VFn::Alltoallv, (None, Some(send)), (None, Some(recv)), 0)
    }

    /// Starts a [`gatherv_view`](Self::gatherv_view) (`MPI_Igatherv`, MPI-4.0 §6.12.3): the
    /// blocks, their arrays included, stay borrowed until the scope completes it.
    ///
    /// # Errors
    /// As [`gatherv_view`](Self::gatherv_view).
    pub fn igatherv_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: Option<&'s mut BlocksMut<'_, T>>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.ivmove_view(scope, VFn::Gatherv, (Some(send), None), (None, recv), root)
    }

    /// Starts a [`scatterv_view`](Self::scatterv_view) (`MPI_Iscatterv`, MPI-4.0 §6.12.4).
    ///
    /// # Errors
    /// As [`scatterv_view`](Self::scatterv_view).
    pub fn iscatterv_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: Option<&'s Blocks<'_>>,
        recv: ViewMut<'s, T>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.ivmove_view(scope, VFn::Scatterv, (None, send), (Some(recv), None), root)
    }

    /// Starts an [`allgatherv_view`](Self::allgatherv_view) (`MPI_Iallgatherv`, MPI-4.0
    /// §6.12.5).
    ///
    /// # Errors
    /// As [`allgatherv_view`](Self::allgatherv_view).
    pub fn iallgatherv_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: &'s mut BlocksMut<'_, T>,
    ) -> Result<Request<'s>> {
        self.ivmove_view(
            scope,
            VFn::Allgatherv,
            (Some(send), None),
            (None, Some(recv)),
            0,
        )
    }

    /// Starts an [`alltoallv_view`](Self::alltoallv_view) (`MPI_Ialltoallv`, MPI-4.0
    /// §6.12.6).
    ///
    /// # Errors
    /// As [`alltoallv_view`](Self::alltoallv_view).
    pub fn ialltoallv_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s Blocks<'_>,
        recv: &'s mut BlocksMut<'_, T>,
    ) -> Result<Request<'s>> {
        self.ivmove_view(
            scope,
            VFn::Alltoallv,
            (None, Some(send)),
            (None, Some(recv)),
            0,
        )
    }

    /// Block `j` of `send` goes to rank `j` and arrives as block `i` of its `recv`, for
    /// sender `i`, each block in its own layout at its own byte offset (`MPI_Alltoallw`,
    /// MPI-4.0 §6.8): the general redistribution, such as the faces of a block to its
    /// neighbours, each face a subarray type.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, LayoutBlocks, LayoutBlocksMut};
    /// // Column j of my n x n matrix to rank j, arriving as row `me` of its matrix.
    /// let n = world.size() as usize;
    /// let column = DerivedType::vector(&mpi, n, 1, n as isize, i32::datatype())?;
    /// let row = DerivedType::contiguous(&mpi, n, i32::datatype())?;
    /// let me = world.rank() as usize;
    /// let matrix: Vec<i32> = (0..n * n).map(|k| (me * 100 + k) as i32).collect();
    /// let mut rows = vec![0i32; n * n];
    /// let send: Vec<_> = (0..n).map(|j| (&column, 1, 4 * j)).collect();
    /// let recv: Vec<_> = (0..n).map(|i| (&row, 1, 4 * n * i)).collect();
    /// let send = LayoutBlocks::new(&matrix, &send)?;
    /// let mut recv = LayoutBlocksMut::new(&mut rows, &recv)?;
    /// world.alltoallw_view(&send, &mut recv)?;
    /// drop(recv);
    /// assert!((0..n).all(|i| (0..n).all(|k| rows[i * n + k] == (i * 100 + k * n + me) as i32)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] without one block per rank on either side;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn alltoallw_view<T: Equivalence>(
        &self,
        send: &LayoutBlocks<'_>,
        recv: &mut LayoutBlocksMut<'_, T>,
    ) -> Result<()> {
        const OP: &str = "alltoallw_view";
        let (s, d) = self.w_sides(send, recv, OP)?;
        let code = {
            let _gate = self.enter(OP)?;
            // SAFETY: every block reaches only its own slice (checked when the blocks were
            // made), no receive block a byte of another; one block per rank on each side; all
            // borrowed for the call.
            unsafe { alltoallw(self.raw, s, d, None) }
        };
        recv.repair();
        check(code, OP)
    }

    /// Starts an [`alltoallw_view`](Self::alltoallw_view) (`MPI_Ialltoallw`, MPI-4.0
    /// §6.12.6): the blocks, their arrays included, stay borrowed until the scope completes it.
    ///
    /// # Errors
    /// As [`alltoallw_view`](Self::alltoallw_view).
    pub fn ialltoallw_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: &'s LayoutBlocks<'_>,
        recv: &'s mut LayoutBlocksMut<'_, T>,
    ) -> Result<Request<'s>> {
        const OP: &str = "ialltoallw_view";
        let (s, d) = self.w_sides(send, recv, OP)?;
        let repair = Repair::for_slice(recv.slice_mut());
        // SAFETY: as in `alltoallw_view`; the blocks and their arrays are borrowed for 's,
        // which the scope outlasts by completing the operation.
        self.nonblocking(scope, OP, repair, |r| unsafe {
            alltoallw(self.raw, s, d, r)
        })
    }

    /// The two sides of an `alltoallw` on layouts, checked to have one block per rank.
    fn w_sides<T: Equivalence>(
        &self,
        send: &LayoutBlocks<'_>,
        recv: &mut LayoutBlocksMut<'_, T>,
        operation: &'static str,
    ) -> Result<(WSide<*const c_void>, WSide<*mut c_void>)> {
        let (s, sc, sd, st) = send.raw();
        let (d, rc, rd, rt) = recv.raw();
        self.per_rank(sc, "send blocks", operation)?;
        self.per_rank(rc, "receive blocks", operation)?;
        let send = WSide {
            ptr: s,
            counts: sc.as_ptr(),
            displs: sd.as_ptr(),
            types: st.as_ptr(),
        };
        let recv = WSide {
            ptr: d,
            counts: rc.as_ptr(),
            displs: rd.as_ptr(),
            types: rt.as_ptr(),
        };
        Ok((send, recv))
    }
}

/// The receive side's datatype, for a send side MPI ignores.
fn recv_type<T: Equivalence>(
    recv: &(Option<&mut ViewMut<'_, T>>, Option<&mut BlocksMut<'_, T>>),
) -> ffi::MPI_Datatype {
    match recv {
        (Some(view), _) => view.datatype(),
        (None, Some(blocks)) => blocks.datatype(),
        (None, None) => T::datatype().as_raw(),
    }
}
