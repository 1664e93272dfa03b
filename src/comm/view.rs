//! Operations on layouts: point-to-point (blocking, nonblocking, persistent) and the
//! equal-block collectives, blocking and nonblocking (`bcast`, `gather`, `scatter`,
//! `allgather`, `alltoall`, and their `i` forms) of a
//! [`View`] or into a [`ViewMut`] (a buffer seen through a
//! [`DerivedType`](crate::DerivedType), MPI-4.0 §5.1), and packing (`MPI_Pack`, `MPI_Unpack`,
//! `MPI_Pack_size`, §5.2).

use super::Communicator;
use super::call::{MoveFn, Req, SendMode};
use super::nonblocking::StartSend;
use super::p2p::{Destination, Source, TagMatch, check_tag, raw_tag};
use crate::datatype::pack::{Packable, Unpackable, check_room};
use crate::datatype::{Equivalence, View, ViewMut, count_of, recv_ptr, send_ptr};
use crate::env::{enter, enter_with};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::gate::Pass;
use crate::request::{
    Kind, OwnedBuffer, OwnedView, PersistentRequest, RawRequest, Repair, Request, Scope,
};
use crate::status::Status;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;

/// Layouts: a matrix's column, a block's face, any [`DerivedType`](crate::DerivedType) over a
/// slice, sent and received as MPI sees it, with no copy.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use ferrompi::{DerivedType, Equivalence};
/// // Send column 0 of a 3 x 4 row-major matrix into row 2 of another.
/// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
/// let matrix: Vec<f64> = (0..12).map(f64::from).collect();
/// let mut rows = [0.0f64; 12];
/// let me = world.rank();
/// world.sendrecv_view(column.view(&matrix, 1)?, me, 0, &mut rows[8..], me, 0)?;
/// assert_eq!(rows[8..11], [0.0, 4.0, 8.0]);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl Communicator<'_> {
    /// Sends what `view` selects to `dest` with `tag` (`MPI_Send` with its derived type,
    /// MPI-4.0 §3.2.1, §5.1).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`],
    /// [`ErrorKind::InvalidTag`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn send_view(&self, view: View<'_>, dest: impl Into<Destination>, tag: i32) -> Result<()> {
        self.send_view_with(SendMode::Standard, view, dest.into(), tag, "send")
    }

    /// [`send_view`](Self::send_view) in synchronous mode (`MPI_Ssend`, MPI-4.0 §3.4).
    ///
    /// # Errors
    /// As [`send_view`](Self::send_view).
    pub fn ssend_view(&self, view: View<'_>, dest: impl Into<Destination>, tag: i32) -> Result<()> {
        self.send_view_with(SendMode::Synchronous, view, dest.into(), tag, "ssend")
    }

    /// A blocking send of a view in one of the send modes.
    fn send_view_with(
        &self,
        mode: SendMode,
        view: View<'_>,
        dest: Destination,
        tag: i32,
        operation: &'static str,
    ) -> Result<()> {
        let dest = self.raw_dest(dest, operation)?;
        check_tag(tag, operation)?;
        let (ptr, count, datatype) = view.raw();
        // SAFETY: the view reaches only its slice (checked when it was made), borrowed for
        // the blocking call, and MPI only reads it.
        let rc = self.gated(
            operation,
            #[inline(always)]
            || unsafe { mode.call(ptr, count, datatype, dest, tag, self.raw) },
        )?;
        check(rc, operation)
    }

    /// Receives into what `view` selects, from `source` with `tag` (`MPI_Recv` with its
    /// derived type, MPI-4.0 §3.2.4). The message must fit the view (or it is
    /// `MPI_ERR_TRUNCATE`); MPI writes no byte the view does not select.
    ///
    /// # Errors
    /// As [`recv`](Self::recv).
    pub fn recv_view<T: Equivalence>(
        &self,
        mut view: ViewMut<'_, T>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "recv";
        let source = self.raw_source(source.into(), OP)?;
        let tag = raw_tag(tag.into(), OP)?;
        let (ptr, count, datatype) = view.raw();
        let mut status = Status::empty();
        // SAFETY: the view reaches only its slice (checked when it was made), exclusively
        // borrowed for the blocking call.
        let rc = self.gated(
            OP,
            #[inline(always)]
            || unsafe {
                ffi::MPI_Recv(
                    ptr,
                    count,
                    datatype,
                    source,
                    tag,
                    self.raw,
                    status.as_raw_mut(),
                )
            },
        )?;
        view.repair();
        check(rc, OP)?;
        Ok(status)
    }

    /// Sends what `view` selects and receives into `recv`, a slice, in one call
    /// (`MPI_Sendrecv`, MPI-4.0 §3.10): the exchange of a halo packed on one side only.
    ///
    /// # Errors
    /// As [`sendrecv`](Self::sendrecv).
    pub fn sendrecv_view<R: Equivalence>(
        &self,
        view: View<'_>,
        dest: impl Into<Destination>,
        send_tag: i32,
        recv: &mut [R],
        source: impl Into<Source>,
        recv_tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "sendrecv";
        let dest = self.raw_dest(dest.into(), OP)?;
        check_tag(send_tag, OP)?;
        let args = self.recv_args::<R>(recv.len(), source, recv_tag, OP)?;
        let (ptr, count, datatype) = view.raw();
        let mut status = Status::empty();
        // SAFETY: the view reaches only its slice; `recv` has room for `args.count` elements of
        // its type; both are borrowed for the blocking call.
        let rc = self.gated(
            OP,
            #[inline(always)]
            || unsafe {
                ffi::MPI_Sendrecv(
                    ptr,
                    count,
                    datatype,
                    dest,
                    send_tag,
                    recv_ptr(recv),
                    args.count,
                    R::datatype().as_raw(),
                    args.source,
                    args.tag,
                    self.raw,
                    status.as_raw_mut(),
                )
            },
        )?;
        crate::datatype::repair(recv);
        check(rc, OP)?;
        Ok(status)
    }

    /// Broadcasts what `view` selects from `root` into the same selection on every other rank
    /// (`MPI_Bcast`, MPI-4.0 §6.4). Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence, Order};
    /// // The interior 2 x 2 of a 4 x 4 grid, from rank 0 to all.
    /// let interior = DerivedType::subarray(&mpi, &[4, 4], &[2, 2], &[1, 1], Order::C, i32::datatype())?;
    /// let mut grid = [0i32; 16];
    /// if world.rank() == 0 {
    ///     grid = std::array::from_fn(|i| i as i32);
    /// }
    /// world.bcast_view(interior.view_mut(&mut grid, 1)?, 0)?;
    /// assert_eq!([grid[5], grid[6], grid[9], grid[10]], [5, 6, 9, 10]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for `root`;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn bcast_view<T: Equivalence>(&self, mut view: ViewMut<'_, T>, root: i32) -> Result<()> {
        const OP: &str = "bcast";
        self.check_rank(root, "root", OP)?;
        let (ptr, count, datatype) = view.raw();
        let rc = {
            let _gate = self.enter(OP)?;
            // SAFETY: the view reaches only its slice, exclusively borrowed for the call.
            unsafe { self.raw_bcast_typed((ptr, count, datatype), root, None) }
        };
        view.repair();
        check(rc, OP)
    }

    /// `MPI_Bcast`, or `MPI_Ibcast` with `r`.
    ///
    /// # Safety
    /// The address holds what the count and datatype reach, valid for the operation.
    unsafe fn raw_bcast_typed(
        &self,
        (ptr, count, datatype): (*mut c_void, c_int, ffi::MPI_Datatype),
        root: c_int,
        r: Req<'_>,
    ) -> c_int {
        // SAFETY: per the contract.
        unsafe {
            match r {
                None => ffi::MPI_Bcast(ptr, count, datatype, root, self.raw),
                Some(r) => ffi::MPI_Ibcast(ptr, count, datatype, root, self.raw, r),
            }
        }
    }

    /// The per-rank counts of an equal-block data movement on views: `send` and `recv` may be
    /// of different types whose type signatures match block by block (a column sent, a row
    /// received). A view holding blocks for every rank (`recv` of gather and allgather,
    /// `send` of scatter, both of alltoall) holds `size` blocks of `count / size` copies,
    /// block `i` starting `i * count / size` extents in.
    pub(in crate::comm) fn move_counts(
        &self,
        f: MoveFn,
        (sc, rc): (c_int, c_int),
        root: i32,
        operation: &'static str,
    ) -> Result<(c_int, c_int)> {
        let share = |n: c_int| -> Result<c_int> { Ok(self.share(n as usize, operation)? as c_int) };
        Ok(match f {
            MoveFn::Gather => (
                sc,
                if self.is_root(root, operation)? {
                    share(rc)?
                } else {
                    0
                },
            ),
            MoveFn::Scatter => (
                if self.is_root(root, operation)? {
                    share(sc)?
                } else {
                    0
                },
                rc,
            ),
            MoveFn::Allgather => (sc, share(rc)?),
            MoveFn::Alltoall => (share(sc)?, share(rc)?),
        })
    }

    /// An equal-block data movement on views, blocking (see [`move_counts`](Self::move_counts)).
    fn move_view<T: Equivalence>(
        &self,
        f: MoveFn,
        send: View<'_>,
        mut recv: ViewMut<'_, T>,
        root: i32,
    ) -> Result<()> {
        let operation = f.name(false);
        let (s, sc, st) = send.raw();
        let (d, dc, dt) = recv.raw();
        let (sn, dn) = self.move_counts(f, (sc, dc), root, operation)?;
        let code = {
            let _gate = self.enter(operation)?;
            // SAFETY: each view reaches only its own slice (checked when it was made), and
            // MPI reaches at most `size` blocks of the per-rank counts, which are the views'
            // counts divided among the ranks; both are borrowed for the blocking call.
            unsafe { self.raw_move_typed(f, (s, sn, st), (d, dn, dt), root, None) }
        };
        recv.repair();
        check(code, operation)
    }

    /// An equal-block data movement on views, started in `scope`.
    fn imove_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        f: MoveFn,
        send: View<'s>,
        recv: ViewMut<'s, T>,
        root: i32,
    ) -> Result<Request<'s>> {
        let operation = f.name(true);
        let (s, sc, st) = send.raw();
        let (buf, dc, dt) = recv.into_parts();
        let (sn, dn) = self.move_counts(f, (sc, dc), root, operation)?;
        let d = recv_ptr(buf);
        // SAFETY: as in `move_view`; both views' slices are borrowed for 's, which the scope
        // outlasts by completing the operation.
        self.nonblocking(scope, operation, Repair::for_slice(buf), |r| unsafe {
            self.raw_move_typed(f, (s, sn, st), (d, dn, dt), root, r)
        })
    }

    /// Collects what each process's `send` selects into `recv` at `root`, in rank order
    /// (`MPI_Gather`, MPI-4.0 §6.5): `recv` holds `size` blocks (its count divided evenly
    /// among the ranks), read only at the root.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Column 0 of each rank's 3 x 2 matrix, one after another at rank 0.
    /// let column = DerivedType::vector(&mpi, 3, 1, 2, f64::datatype())?;
    /// let three = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let matrix = [world.rank() as f64; 6];
    /// let mut columns = vec![-1.0; 3 * world.size() as usize];
    /// world.gather_view(column.view(&matrix, 1)?, three.view_mut(&mut columns, world.size() as usize)?, 0)?;
    /// if world.rank() == 0 {
    ///     assert!(columns.chunks(3).enumerate().all(|(r, c)| c == [r as f64; 3]));
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for `root`;
    /// [`ErrorKind::InvalidArgument`] if the root's `recv` count
    /// does not divide among the ranks; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn gather_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: ViewMut<'_, T>,
        root: i32,
    ) -> Result<()> {
        self.move_view(MoveFn::Gather, send, recv, root)
    }

    /// Hands block `i` of what `send` selects at `root` to rank `i`'s `recv` (`MPI_Scatter`,
    /// MPI-4.0 §6.6): `send` holds `size` blocks, read only at the root.
    ///
    /// # Errors
    /// As [`gather_view`](Self::gather_view), for the root's `send`.
    pub fn scatter_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: ViewMut<'_, T>,
        root: i32,
    ) -> Result<()> {
        self.move_view(MoveFn::Scatter, send, recv, root)
    }

    /// Every process gets what every process's `send` selects, in rank order, in `recv`'s
    /// `size` blocks (`MPI_Allgather`, MPI-4.0 §6.7).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `recv`'s count does not
    /// divide among the ranks; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn allgather_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: ViewMut<'_, T>,
    ) -> Result<()> {
        self.move_view(MoveFn::Allgather, send, recv, 0)
    }

    /// Block `j` of `send` goes to rank `j`, and arrives as block `i` of its `recv`, for
    /// sender `i` (`MPI_Alltoall`, MPI-4.0 §6.8): with a column type on one side and a row on
    /// the other, a distributed transpose.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// let n = world.size() as usize;
    /// // Each rank holds an n x n row-major matrix; column j goes to rank j as a row.
    /// let column = DerivedType::vector(&mpi, n, 1, n as isize, f64::datatype())?;
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?; // the next column is 8 bytes on
    /// let row = DerivedType::contiguous(&mpi, n, f64::datatype())?;
    /// let me = world.rank() as usize;
    /// let matrix: Vec<f64> = (0..n * n).map(|k| (me * 1000 + k) as f64).collect();
    /// let mut rows = vec![0.0; n * n];
    /// world.alltoall_view(columns.view(&matrix, n)?, row.view_mut(&mut rows, n)?)?;
    /// // Row q of mine is column `me` of rank q's matrix.
    /// assert!((0..n).all(|q| (0..n).all(|i| rows[q * n + i] == (q * 1000 + i * n + me) as f64)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`allgather_view`](Self::allgather_view), for both views.
    pub fn alltoall_view<T: Equivalence>(
        &self,
        send: View<'_>,
        recv: ViewMut<'_, T>,
    ) -> Result<()> {
        self.move_view(MoveFn::Alltoall, send, recv, 0)
    }

    /// Starts a broadcast into what `view` selects (`MPI_Ibcast` with its derived type,
    /// MPI-4.0 §6.12.2), its slice borrowed for the scope.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// let diagonal = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?; // of a 3 x 3
    /// let mut matrix = [0.0f64; 9];
    /// if world.rank() == 0 {
    ///     matrix = [1.0, 9.0, 9.0, 9.0, 2.0, 9.0, 9.0, 9.0, 3.0];
    /// }
    /// ferrompi::scope(|s| world.ibcast_view(s, diagonal.view_mut(&mut matrix, 1)?, 0)?.wait().map(drop))?;
    /// assert_eq!([matrix[0], matrix[4], matrix[8]], [1.0, 2.0, 3.0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`bcast_view`](Self::bcast_view).
    pub fn ibcast_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        view: ViewMut<'s, T>,
        root: i32,
    ) -> Result<Request<'s>> {
        const OP: &str = "ibcast";
        self.check_rank(root, "root", OP)?;
        let (buf, count, datatype) = view.into_parts();
        let ptr = recv_ptr(buf);
        // SAFETY: the view reaches only its slice, exclusively borrowed for 's, which the scope
        // outlasts by completing the operation.
        self.nonblocking(scope, OP, Repair::for_slice(buf), |r| unsafe {
            self.raw_bcast_typed((ptr, count, datatype), root, r)
        })
    }

    /// Starts a [`gather_view`](Self::gather_view) (`MPI_Igather`, MPI-4.0 §6.12.3).
    ///
    /// # Errors
    /// As [`gather_view`](Self::gather_view).
    pub fn igather_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: ViewMut<'s, T>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.imove_view(scope, MoveFn::Gather, send, recv, root)
    }

    /// Starts a [`scatter_view`](Self::scatter_view) (`MPI_Iscatter`, MPI-4.0 §6.12.4).
    ///
    /// # Errors
    /// As [`scatter_view`](Self::scatter_view).
    pub fn iscatter_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: ViewMut<'s, T>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.imove_view(scope, MoveFn::Scatter, send, recv, root)
    }

    /// Starts an [`allgather_view`](Self::allgather_view) (`MPI_Iallgather`, MPI-4.0
    /// §6.12.5).
    ///
    /// # Errors
    /// As [`allgather_view`](Self::allgather_view).
    pub fn iallgather_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: ViewMut<'s, T>,
    ) -> Result<Request<'s>> {
        self.imove_view(scope, MoveFn::Allgather, send, recv, 0)
    }

    /// Starts an [`alltoall_view`](Self::alltoall_view) (`MPI_Ialltoall`, MPI-4.0 §6.12.6): a
    /// distributed transpose overlapped with other work.
    ///
    /// # Errors
    /// As [`alltoall_view`](Self::alltoall_view).
    pub fn ialltoall_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        send: View<'s>,
        recv: ViewMut<'s, T>,
    ) -> Result<Request<'s>> {
        self.imove_view(scope, MoveFn::Alltoall, send, recv, 0)
    }

    /// Starts sending what `view` selects (`MPI_Isend`, MPI-4.0 §3.7.2), its slice borrowed
    /// for the scope.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// let every_other = DerivedType::vector(&mpi, 4, 1, 2, u32::datatype())?;
    /// let (out, mut got, me) = ([0u32, 1, 2, 3, 4, 5, 6, 7], [9u32; 8], world.rank());
    /// ferrompi::scope(|s| {
    ///     let receiving = world.irecv_view(s, every_other.view_mut(&mut got, 1)?, me, 0)?;
    ///     let sending = world.isend_view(s, every_other.view(&out[1..], 1)?, me, 0)?;
    ///     sending.wait()?;
    ///     receiving.wait().map(drop)
    /// })?;
    /// assert_eq!(got, [1, 9, 3, 9, 5, 9, 7, 9]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`send_view`](Self::send_view).
    pub fn isend_view<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        view: View<'s>,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: the view reaches only its slice, borrowed for 's, which the scope outlasts
        // by completing or aborting.
        let raw = unsafe {
            self.start_send_view(
                StartSend::Isend,
                view.raw(),
                dest.into(),
                tag,
                scope.in_flight.pass,
            )?
        };
        Ok(Request::started(raw, None, &scope.in_flight))
    }

    /// Starts receiving into what `view` selects (`MPI_Irecv`, MPI-4.0 §3.7.2), its slice
    /// borrowed for the scope.
    ///
    /// # Errors
    /// As [`recv_view`](Self::recv_view).
    pub fn irecv_view<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        view: ViewMut<'s, T>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<'s>> {
        let (buf, count, datatype) = view.into_parts();
        let repair = Repair::for_slice(buf);
        let ptr = recv_ptr(buf);
        // SAFETY: the view reaches only its slice, exclusively borrowed for 's, which the scope
        // outlasts by completing or aborting.
        let raw = unsafe {
            self.start_recv_view(
                false,
                (ptr, count, datatype),
                source.into(),
                tag.into(),
                scope.in_flight.pass,
            )?
        };
        Ok(Request::started(raw, repair, &scope.in_flight))
    }

    /// A persistent send of what `view` selects in the buffer it holds (`MPI_Send_init` with
    /// a derived type, MPI-4.0 §3.9, §5.1): a halo face sent from the same place at every
    /// start. The request owns the buffer, as [`send_init`](Self::send_init)'s does, and
    /// borrows the layout; [`DerivedType::owned_view`](crate::DerivedType::owned_view)
    /// checked the copies against the buffer, whose length cannot change while the request
    /// has it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Column 0 of a 3 x 3 row-major matrix, sent to this rank at every start.
    /// let column = DerivedType::vector(&mpi, 3, 1, 3, f64::datatype())?;
    /// let me = world.rank();
    /// let mut send = world.send_init_view(column.owned_view(vec![0.0f64; 9], 1)?, me, 0)?;
    /// let mut recv = world.recv_init_view(column.owned_view(vec![0.0f64; 9], 1)?, me, 0)?;
    /// for step in 0..3 {
    ///     send.buffer_mut().iter_mut().step_by(3).for_each(|x| *x = step as f64);
    ///     let receiving = recv.start()?;
    ///     send.start()?.wait()?;
    ///     receiving.wait()?;
    ///     let got: Vec<f64> = recv.buffer().iter().step_by(3).copied().collect();
    ///     assert_eq!(got, [step as f64; 3]);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`send_init`](Self::send_init).
    pub fn send_init_view<'c, B: OwnedBuffer>(
        &'c self,
        view: OwnedView<'c, B>,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<PersistentRequest<'c, B>> {
        let (buf, count, datatype) = view.into_parts();
        let args = (send_ptr(buf.as_slice()), count, datatype);
        // SAFETY: the view reaches only the buffer's heap storage, which moves into the request
        // with the buffer and stays there until the request is freed (see `send_init`); the
        // request borrows the layout for as long.
        let raw =
            unsafe { self.start_send_view(StartSend::SendInit, args, dest.into(), tag, None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// A persistent receive into what `view` selects in the buffer it holds (`MPI_Recv_init`
    /// with a derived type, MPI-4.0 §3.9, §5.1); see [`send_init_view`](Self::send_init_view).
    ///
    /// # Errors
    /// As [`recv_init`](Self::recv_init).
    pub fn recv_init_view<'c, B: OwnedBuffer>(
        &'c self,
        view: OwnedView<'c, B>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<PersistentRequest<'c, B>> {
        let (mut buf, count, datatype) = view.into_parts();
        let args = (recv_ptr(buf.as_mut_slice()), count, datatype);
        // SAFETY: as in `send_init_view`; MPI writes only what the view selects.
        let raw = unsafe { self.start_recv_view(true, args, source.into(), tag.into(), None)? };
        Ok(PersistentRequest::created(raw, buf))
    }

    /// Starts a send of a view's `(address, count, datatype)` in one of the modes
    /// (`MPI_Isend`, `MPI_Send_init`, ...).
    ///
    /// # Safety
    /// The view's slice stays valid and unwritten until the operation completes (for a
    /// persistent one, until its request is freed).
    unsafe fn start_send_view(
        &self,
        start: StartSend,
        (ptr, count, datatype): (*const c_void, c_int, ffi::MPI_Datatype),
        dest: Destination,
        tag: i32,
        pass: Option<Pass>,
    ) -> Result<RawRequest> {
        let operation = start.name();
        let dest = self.raw_dest(dest, operation)?;
        check_tag(tag, operation)?;
        let mut raw = MaybeUninit::<ffi::MPI_Request>::uninit();
        let rc = {
            let _gate = enter_with(pass, operation)?;
            // SAFETY: the view reaches only its slice, valid for the operation per the
            // caller; MPI writes the handle.
            unsafe { start.call(ptr, count, datatype, dest, tag, self.raw, raw.as_mut_ptr()) }
        };
        check(rc, operation)?;
        Ok(RawRequest {
            // SAFETY: the start succeeded, so MPI wrote the handle.
            raw: unsafe { raw.assume_init() },
            kind: Kind::Send,
        })
    }

    /// Starts a receive into a view's `(address, count, datatype)` (`MPI_Irecv`, or
    /// `MPI_Recv_init` when `persistent`).
    ///
    /// # Safety
    /// The view's slice stays valid, and no reference reads it, until the operation completes
    /// (for a persistent one, until its request is freed).
    unsafe fn start_recv_view(
        &self,
        persistent: bool,
        (ptr, count, datatype): (*mut c_void, c_int, ffi::MPI_Datatype),
        source: Source,
        tag: TagMatch,
        pass: Option<Pass>,
    ) -> Result<RawRequest> {
        let operation = if persistent { "recv_init" } else { "irecv" };
        let source = self.raw_source(source, operation)?;
        let tag = raw_tag(tag, operation)?;
        let mut raw = MaybeUninit::<ffi::MPI_Request>::uninit();
        let rc = {
            let _gate = enter_with(pass, operation)?;
            let start = if persistent {
                ffi::MPI_Recv_init
            } else {
                ffi::MPI_Irecv
            };
            // SAFETY: the view reaches only its slice, valid for the operation per the
            // caller; MPI writes the handle.
            unsafe {
                start(
                    ptr,
                    count,
                    datatype,
                    source,
                    tag,
                    self.raw,
                    raw.as_mut_ptr(),
                )
            }
        };
        check(rc, operation)?;
        Ok(RawRequest {
            // SAFETY: the start succeeded, so MPI wrote the handle.
            raw: unsafe { raw.assume_init() },
            kind: Kind::Recv,
        })
    }

    /// The bytes `input` takes packed for this communicator (`MPI_Pack_size`, MPI-4.0
    /// §5.2.2): an upper bound.
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn pack_size(&self, input: &(impl Packable + ?Sized)) -> Result<usize> {
        const OP: &str = "pack_size";
        let (_, count, datatype) = input.pack_args(OP)?;
        self.pack_bound(count, datatype, OP)
    }

    fn pack_bound(
        &self,
        count: c_int,
        datatype: ffi::MPI_Datatype,
        operation: &'static str,
    ) -> Result<usize> {
        let mut size: c_int = 0;
        let _gate = enter(operation)?;
        // SAFETY: a committed datatype; writes one int.
        let rc = unsafe { ffi::MPI_Pack_size(count, datatype, self.raw, &mut size) };
        check(rc, operation)?;
        Ok(usize::try_from(size).unwrap_or(usize::MAX))
    }

    /// Packs `input` (a slice, or a [`View`]) into `out` from byte `*position`, and moves
    /// `*position` past it (`MPI_Pack`, MPI-4.0 §5.2.1): several packs make one message of
    /// `MPI_PACKED` bytes, sent as `u8`s and unpacked in the same order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let (ids, weights) = ([3u32, 5], [0.25f64]);
    /// let mut bytes = vec![0u8; world.pack_size(&ids[..])? + world.pack_size(&weights[..])?];
    /// let mut position = 0;
    /// world.pack(&ids[..], &mut bytes, &mut position)?;
    /// world.pack(&weights[..], &mut bytes, &mut position)?;
    /// let (mut ids_back, mut weights_back, mut at) = ([0u32; 2], [0.0f64], 0);
    /// world.unpack(&bytes[..position], &mut at, &mut ids_back[..])?;
    /// world.unpack(&bytes[..position], &mut at, &mut weights_back[..])?;
    /// assert_eq!((ids_back, weights_back, at), (ids, weights, position));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `out` has no room from
    /// `*position` for [`pack_size`](Self::pack_size); as `pack_size`.
    pub fn pack(
        &self,
        input: &(impl Packable + ?Sized),
        out: &mut [u8],
        position: &mut usize,
    ) -> Result<()> {
        const OP: &str = "pack";
        let (ptr, count, datatype) = input.pack_args(OP)?;
        check_room(
            out.len(),
            *position,
            self.pack_bound(count, datatype, OP)?,
            OP,
        )?;
        let (size, mut at) = (
            count_of::<u8>(out.len(), OP)?,
            count_of::<u8>(*position, OP)?,
        );
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: `input` reaches only its own memory; MPI writes at most the bound from
            // `at`, which fits in `out` (checked above).
            unsafe { ffi::MPI_Pack(ptr, count, datatype, recv_ptr(out), size, &mut at, self.raw) }
        };
        check(rc, OP)?;
        *position = usize::try_from(at).unwrap_or(*position);
        Ok(())
    }

    /// Unpacks from `input` at byte `*position` into `output` (a slice, or a [`ViewMut`]),
    /// and moves `*position` past what it read (`MPI_Unpack`, MPI-4.0 §5.2.1).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `input` does not hold,
    /// from `*position`, the bytes [`pack_size`](Self::pack_size) gives for `output`; as
    /// `pack_size`.
    pub fn unpack(
        &self,
        input: &[u8],
        position: &mut usize,
        output: &mut (impl Unpackable + ?Sized),
    ) -> Result<()> {
        const OP: &str = "unpack";
        let (ptr, count, datatype) = output.unpack_args(OP)?;
        check_room(
            input.len(),
            *position,
            self.pack_bound(count, datatype, OP)?,
            OP,
        )?;
        let (size, mut at) = (
            count_of::<u8>(input.len(), OP)?,
            count_of::<u8>(*position, OP)?,
        );
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: MPI reads at most the bound from `at`, inside `input` (checked above),
            // and writes only the memory `output` reaches (a slice, or a checked view).
            unsafe {
                ffi::MPI_Unpack(
                    crate::datatype::send_ptr(input),
                    size,
                    &mut at,
                    ptr,
                    count,
                    datatype,
                    self.raw,
                )
            }
        };
        *position = usize::try_from(at).unwrap_or(*position);
        output.repair();
        check(rc, OP)
    }
}
