//! Cartesian virtual topologies (MPI-4.0 §8.5): processes laid out on a grid of any number of
//! dimensions, each periodic or not, so that a stencil or mesh code names its neighbours by
//! direction rather than by rank.
//!
//! [`Mpi::dims_create`] balances a process count over the dimensions,
//! [`Communicator::cart_create`] makes a [`CartCommunicator`] (every method of
//! [`Communicator`] works on it too), whose [`coords`](CartCommunicator::coords),
//! [`rank_of`](CartCommunicator::rank_of), [`shift`](CartCommunicator::shift) and
//! [`cart_sub`](CartCommunicator::cart_sub) answer as MPI does;
//! [`Communicator::topo_test`] says which topology any communicator carries.
//!
//! ```
//! # let mpi = ferrompi::Mpi::init()?;
//! # let world = mpi.world();
//! // Every process on a 2-D grid, periodic in x only.
//! let dims = mpi.dims_create(world.size(), &[0, 0])?;
//! let grid = world.cart_create(&dims, &[true, false], false)?.expect("the grid holds every process");
//! let (x, y) = (grid.coords()[0], grid.coords()[1]);
//! let east = grid.shift(0, 1)?; // periodic: a neighbour on both sides, always
//! let north = grid.shift(1, 1)?; // not periodic: none past the edge
//! assert_eq!(north.destination == ferrompi::PROC_NULL.into(), y == dims[1] - 1);
//! let mut from_west = [0i32];
//! grid.sendrecv(&[x], east.destination, 0, &mut from_west, east.source, 0)?;
//! assert_eq!(from_west[0], (x + dims[0] - 1) % dims[0]);
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! Every argument is checked before MPI is called, alike on every process when the arguments
//! are the same (as MPI requires of a collective's): lengths that disagree, a dimension that is
//! not positive, a grid larger than the communicator, a coordinate outside a non-periodic
//! dimension, a dimension the grid does not have: [`ErrorKind::InvalidArgument`].

use super::p2p::{Destination, Source};
use super::{Communicator, invalid_argument as invalid, unexpected_null};
use crate::datatype::count_of;
use crate::env::{self, Mpi};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;
use std::ops::Deref;

use super::neighbor::{CART, DIST_GRAPH, GRAPH, TopologyCommunicator};

/// The virtual topology a communicator carries (`MPI_Topo_test`, MPI-4.0 §8.5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VirtualTopology {
    /// A Cartesian grid (`MPI_CART`).
    Cartesian,
    /// A graph (`MPI_GRAPH`).
    Graph,
    /// A distributed graph (`MPI_DIST_GRAPH`).
    DistGraph,
}

/// A communicator whose processes form a Cartesian grid (MPI-4.0 §8.5.1), made by
/// [`Communicator::cart_create`] or [`CartCommunicator::cart_sub`]. It is a
/// [`TopologyCommunicator`] (through `Deref`: the neighbourhood collectives, each process's
/// neighbours the two along each dimension) and so a [`Communicator`], that also knows the
/// grid's shape and this process's place in it, read from MPI once when made.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// let ring = world.cart_create(&[world.size()], &[true], false)?.expect("every process");
/// assert_eq!(ring.coords(), &[ring.rank()]); // a 1-D grid in rank order (no reordering)
/// assert_eq!(ring.dims(), &[world.size()]);
/// assert_eq!(ring.topo_test()?, Some(ferrompi::VirtualTopology::Cartesian));
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[derive(Debug)]
pub struct CartCommunicator<'env> {
    topo: TopologyCommunicator<'env>,
    shape: Shape,
}

/// A grid's shape and this process's place in it.
#[derive(Debug)]
struct Shape {
    dims: Box<[i32]>,
    periods: Box<[bool]>,
    coords: Box<[i32]>,
}

impl<'env> Deref for CartCommunicator<'env> {
    type Target = TopologyCommunicator<'env>;

    fn deref(&self) -> &TopologyCommunicator<'env> {
        &self.topo
    }
}

/// The two neighbours of a process along one dimension (`MPI_Cart_shift`, MPI-4.0 §8.5.6): the
/// process to receive from and the one to send to for a shift by the displacement.
/// [`PROC_NULL`](crate::PROC_NULL) past the edge of a dimension that is not periodic, so that a
/// send or receive with it completes at once and the edge needs no code of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shift {
    /// Where the shift's data comes from: the process `disp` steps back.
    pub source: Source,
    /// Where this process's data goes: the process `disp` steps ahead.
    pub destination: Destination,
}

impl Mpi {
    /// `MPI_Dims_create` (MPI-4.0 §8.5.2): `nnodes` processes spread over `dims.len()`
    /// dimensions as evenly as MPI can, in non-increasing order. A non-zero entry of `dims`
    /// stays as given; a zero is chosen.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// assert_eq!(mpi.dims_create(12, &[0, 0])?, [4, 3]);
    /// assert_eq!(mpi.dims_create(12, &[0, 2])?, [6, 2]);
    /// assert_eq!(mpi.dims_create(8, &[0, 0, 0])?, [2, 2, 2]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for `nnodes` below 1, a negative entry, or entries whose
    /// product does not divide `nnodes` (or, with none left to choose, is not `nnodes`);
    /// [`ErrorKind::CountOverflow`] for more dimensions than an `int` counts;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn dims_create(&self, nnodes: i32, dims: &[i32]) -> Result<Vec<i32>> {
        dims_create(nnodes, dims)
    }
}

/// [`Mpi::dims_create`], for the layers that hold no [`Mpi`] (the node-aware grid of
/// [`Hierarchy`](crate::topology::Hierarchy)).
pub(crate) fn dims_create(nnodes: i32, dims: &[i32]) -> Result<Vec<i32>> {
    const OP: &str = "dims_create";
    let ndims = count_of::<i32>(dims.len(), OP)?;
    let invalid = |reason: String| -> Result<Vec<i32>> {
        Err(ErrorKind::InvalidArgument {
            operation: OP,
            reason,
        }
        .into())
    };
    if nnodes < 1 {
        return invalid(format!("{nnodes} processes: at least 1 is needed"));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return invalid(format!("dimension {d} is negative (0 lets MPI choose it)"));
    }
    let fixed = dims
        .iter()
        .filter(|&&d| d > 0)
        .try_fold(1i32, |product, &d| product.checked_mul(d));
    let free = dims.contains(&0);
    match fixed {
        Some(fixed) if nnodes % fixed == 0 && (free || fixed == nnodes) => {}
        _ => {
            return invalid(format!(
                "the dimensions given ({dims:?}) do not divide {nnodes} processes"
            ));
        }
    }
    let mut out = dims.to_vec();
    // SAFETY: `out` holds `ndims` ints, which MPI reads and overwrites.
    let rc = env::gated(OP, || unsafe {
        ffi::MPI_Dims_create(nnodes, ndims, out.as_mut_ptr())
    })?;
    check(rc, OP)?;
    Ok(out)
}

/// Checks a grid's shape for a communicator of `size` processes: as many periods as
/// dimensions, every dimension positive, at most `size` processes in all. Returns the number
/// of dimensions as an MPI count and the periods as MPI's ints.
fn grid(
    dims: &[i32],
    periods: &[bool],
    size: i32,
    operation: &'static str,
) -> Result<(c_int, Vec<c_int>)> {
    let ndims = count_of::<i32>(dims.len(), operation)?;
    if periods.len() != dims.len() {
        return Err(invalid(
            operation,
            format!(
                "{} dimensions but {} periods (one per dimension)",
                dims.len(),
                periods.len()
            ),
        ));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 1) {
        return Err(invalid(
            operation,
            format!("dimension {d}: every dimension holds at least 1 process"),
        ));
    }
    match dims
        .iter()
        .try_fold(1i32, |product, &d| product.checked_mul(d))
    {
        Some(product) if product <= size => {}
        _ => {
            return Err(invalid(
                operation,
                format!("a grid of {dims:?} needs more processes than the communicator's {size}"),
            ));
        }
    }
    Ok((ndims, periods.iter().map(|&p| c_int::from(p)).collect()))
}

/// A Cartesian communicator's shape and this process's coordinates (`MPI_Cartdim_get`,
/// `MPI_Cart_get`).
///
/// # Safety
/// `comm` is a valid communicator with a Cartesian topology, and the calling thread holds the
/// thread gate.
unsafe fn shape(comm: ffi::MPI_Comm, operation: &'static str) -> Result<Shape> {
    let mut ndims: c_int = 0;
    // SAFETY: a valid communicator (the caller's promise); MPI writes one int.
    check(unsafe { ffi::MPI_Cartdim_get(comm, &mut ndims) }, operation)?;
    let n = usize::try_from(ndims).unwrap_or(0);
    let (mut dims, mut periods, mut coords) = (vec![0; n], vec![0 as c_int; n], vec![0; n]);
    // SAFETY: three arrays of `ndims` ints, which MPI fills.
    let rc = unsafe {
        ffi::MPI_Cart_get(
            comm,
            ndims,
            dims.as_mut_ptr(),
            periods.as_mut_ptr(),
            coords.as_mut_ptr(),
        )
    };
    check(rc, operation)?;
    Ok(Shape {
        dims: dims.into(),
        periods: periods.iter().map(|&p| p != 0).collect(),
        coords: coords.into(),
    })
}

impl<'env> CartCommunicator<'env> {
    /// Wraps `comm`, a Cartesian communicator MPI just made, with its shape. Called with the
    /// thread gate held; the caller drops the returned communicator, on error, only after
    /// leaving the gate.
    ///
    /// # Safety
    /// `comm` has a Cartesian topology, and the calling thread holds the thread gate.
    unsafe fn of(
        comm: Communicator<'env>,
        operation: &'static str,
    ) -> std::result::Result<Self, (Communicator<'env>, Error)> {
        // SAFETY: the caller's promises.
        match unsafe { shape(comm.raw, operation) } {
            Ok(shape) => {
                // Two neighbours along each dimension (MPI-4.0 §8.6).
                let neighbors = c_int::try_from(2 * shape.dims.len()).unwrap_or(c_int::MAX);
                let topo = TopologyCommunicator::with_degrees(comm, neighbors, neighbors);
                Ok(CartCommunicator { topo, shape })
            }
            Err(e) => Err((comm, e)),
        }
    }

    /// Checks that `len` values (`what`) were given, one per dimension.
    fn one_per_dimension(&self, len: usize, what: &str, operation: &'static str) -> Result<()> {
        let ndims = self.shape.dims.len();
        if len == ndims {
            return Ok(());
        }
        Err(invalid(
            operation,
            format!("{len} {what} for a grid of {ndims} dimensions"),
        ))
    }

    /// The number of processes along each dimension.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[1, world.size()], &[false, false], false)?.unwrap();
    /// assert_eq!(grid.dims(), &[1, world.size()]);
    /// assert_eq!(grid.ndims(), 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn dims(&self) -> &[i32] {
        &self.shape.dims
    }

    /// The number of dimensions (`MPI_Cartdim_get`).
    pub fn ndims(&self) -> usize {
        self.shape.dims.len()
    }

    /// Whether each dimension is periodic (wraps around).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[world.size(), 1], &[true, false], false)?.unwrap();
    /// assert_eq!(grid.periods(), &[true, false]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn periods(&self) -> &[bool] {
        &self.shape.periods
    }

    /// This process's coordinates in the grid (`MPI_Cart_get`, read once when the
    /// communicator was made).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[world.size(), 1], &[false, false], false)?.unwrap();
    /// assert_eq!(grid.coords(), &[grid.rank(), 0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn coords(&self) -> &[i32] {
        &self.shape.coords
    }

    /// `MPI_Cart_coords` (MPI-4.0 §8.5.5): the coordinates of the process `rank`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[world.size()], &[false], false)?.unwrap();
    /// assert_eq!(grid.coords_of(grid.size() - 1)?, [grid.size() - 1]);
    /// assert!(grid.coords_of(grid.size()).is_err());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for a rank outside the communicator;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn coords_of(&self, rank: i32) -> Result<Vec<i32>> {
        const OP: &str = "cart_coords";
        self.check_rank(rank, "rank", OP)?;
        let mut coords = vec![0; self.shape.dims.len()];
        let ndims = count_of::<i32>(coords.len(), OP)?;
        // SAFETY: a Cartesian communicator, a rank of it, and `ndims` ints for MPI to fill.
        let rc = self.gated(OP, || unsafe {
            ffi::MPI_Cart_coords(self.raw, rank, ndims, coords.as_mut_ptr())
        })?;
        check(rc, OP)?;
        Ok(coords)
    }

    /// `MPI_Cart_rank` (MPI-4.0 §8.5.5): the rank of the process at `coords`. Along a periodic
    /// dimension any coordinate is taken (modulo the dimension); along one that is not, it must
    /// lie inside it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size();
    /// let grid = world.cart_create(&[n, 1], &[true, false], false)?.unwrap();
    /// assert_eq!(grid.rank_of(&[n, 0])?, 0); // periodic in x: n wraps to 0
    /// assert!(grid.rank_of(&[0, 1]).is_err()); // not periodic in y
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for coordinates of another number of dimensions, or one
    /// outside a dimension that is not periodic; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn rank_of(&self, coords: &[i32]) -> Result<i32> {
        const OP: &str = "cart_rank";
        self.one_per_dimension(coords.len(), "coordinates", OP)?;
        let outside = (coords
            .iter()
            .zip(self.shape.dims.iter().zip(self.shape.periods.iter())))
        .position(|(&c, (&d, &periodic))| !periodic && !(0..d).contains(&c));
        if let Some(dim) = outside {
            return Err(invalid(
                OP,
                format!(
                    "coordinate {} lies outside dimension {dim} (0..{}), which is not periodic",
                    coords[dim], self.shape.dims[dim]
                ),
            ));
        }
        let mut rank: c_int = 0;
        // SAFETY: a Cartesian communicator and `ndims` coordinates, checked above.
        let rc = self.gated(OP, || unsafe {
            ffi::MPI_Cart_rank(self.raw, coords.as_ptr(), &mut rank)
        })?;
        check(rc, OP)?;
        Ok(rank)
    }

    /// `MPI_Cart_shift` (MPI-4.0 §8.5.6): this process's neighbours `disp` steps back and
    /// ahead along dimension `dim` (see [`Shift`]).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Destination, PROC_NULL, Source};
    /// let chain = world.cart_create(&[world.size()], &[false], false)?.unwrap();
    /// let next = chain.shift(0, 1)?;
    /// let last = chain.rank() == chain.size() - 1;
    /// assert_eq!(next.destination, if last { PROC_NULL.into() } else { Destination::Rank(chain.rank() + 1) });
    /// assert_eq!(next.source, if chain.rank() == 0 { PROC_NULL.into() } else { Source::Rank(chain.rank() - 1) });
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a dimension the grid does not have;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn shift(&self, dim: usize, disp: i32) -> Result<Shift> {
        const OP: &str = "cart_shift";
        if dim >= self.shape.dims.len() {
            return Err(invalid(
                OP,
                format!("dimension {dim} of a grid of {}", self.shape.dims.len()),
            ));
        }
        let direction = count_of::<i32>(dim, OP)?;
        let (mut source, mut destination): (c_int, c_int) = (0, 0);
        // SAFETY: a Cartesian communicator and one of its dimensions; MPI writes two ints.
        let rc = self.gated(OP, || unsafe {
            ffi::MPI_Cart_shift(self.raw, direction, disp, &mut source, &mut destination)
        })?;
        check(rc, OP)?;
        let null = crate::ProcNull::RANK;
        Ok(Shift {
            source: if source == null {
                Source::ProcNull
            } else {
                Source::Rank(source)
            },
            destination: if destination == null {
                Destination::ProcNull
            } else {
                Destination::Rank(destination)
            },
        })
    }

    /// `MPI_Cart_sub` (MPI-4.0 §8.5.7): the sub-grids that keep the dimensions `remain` marks
    /// `true`, one communicator per sub-grid; this process gets its own. Collective. Keeping
    /// no dimension gives each process a grid of its own, of no dimension, on every MPI (made
    /// from `MPI_COMM_SELF`: MPICH 4.0's `MPI_Cart_sub` gives it to one process only).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let grid = world.cart_create(&[world.size(), 1], &[false, true], false)?.unwrap();
    /// let row = grid.cart_sub(&[true, false])?; // the processes sharing this one's y
    /// assert_eq!(row.dims(), &[world.size()]);
    /// assert_eq!(row.coords(), &[grid.coords()[0]]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for `remain` of another length than the grid's
    /// dimensions; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn cart_sub(&self, remain: &[bool]) -> Result<CartCommunicator<'env>> {
        const OP: &str = "cart_sub";
        self.one_per_dimension(remain.len(), "flags", OP)?;
        let keeps_none = !remain.contains(&true);
        let remain: Vec<c_int> = remain.iter().map(|&r| c_int::from(r)).collect();
        let made = {
            let _gate = self.enter(OP)?;
            let mut raw = ffi::MPI_COMM_NULL;
            let rc = if keeps_none {
                // Each process alone, in a grid of no dimension (MPI-4.0 §8.5.7), made here:
                // MPICH 4.0's MPI_Cart_sub gives it to the first process only.
                // SAFETY: MPI_COMM_SELF, no dimension; MPI writes the handle.
                unsafe {
                    ffi::MPI_Cart_create(
                        ffi::MPI_COMM_SELF,
                        0,
                        std::ptr::null(),
                        std::ptr::null(),
                        0,
                        &mut raw,
                    )
                }
            } else {
                // SAFETY: a Cartesian communicator and one flag per dimension; MPI writes the
                // handle.
                unsafe { ffi::MPI_Cart_sub(self.raw, remain.as_ptr(), &mut raw) }
            };
            check(rc, OP)?;
            // SAFETY: MPI just made `raw` for us, under the gate we hold.
            let sub =
                unsafe { Communicator::adopt(raw, OP) }?.ok_or_else(|| unexpected_null(OP))?;
            // SAFETY: a sub-grid of a Cartesian communicator is Cartesian; the gate is held.
            unsafe { CartCommunicator::of(sub, OP) }
        };
        // On error the sub-grid drops here, outside the gate.
        made.map_err(|(_, e)| e)
    }
}

impl<'env> Communicator<'env> {
    /// `MPI_Cart_create` (MPI-4.0 §8.5.1): a communicator whose processes form a grid of
    /// `dims` processes along each dimension, periodic where `periods` says. With `reorder`,
    /// MPI may number the processes anew to fit the machine; without, rank `r` keeps rank `r`
    /// and the grid is filled in row-major order (the last dimension fastest). A process left
    /// out of a grid smaller than the communicator gets `None`. Collective.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let dims = mpi.dims_create(world.size(), &[0, 0])?;
    /// let grid = world.cart_create(&dims, &[false, false], false)?.expect("every process");
    /// assert_eq!(grid.rank_of(grid.coords())?, grid.rank());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for `periods` of another length than `dims`, a dimension
    /// below 1, or a grid of more processes than the communicator has;
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn cart_create(
        &self,
        dims: &[i32],
        periods: &[bool],
        reorder: bool,
    ) -> Result<Option<CartCommunicator<'env>>> {
        const OP: &str = "cart_create";
        let (ndims, periods) = grid(dims, periods, self.size, OP)?;
        let made = {
            let _gate = self.enter(OP)?;
            let mut raw = ffi::MPI_COMM_NULL;
            // SAFETY: a valid communicator, `ndims` dims and periods; MPI writes the handle.
            let rc = unsafe {
                ffi::MPI_Cart_create(
                    self.raw,
                    ndims,
                    dims.as_ptr(),
                    periods.as_ptr(),
                    c_int::from(reorder),
                    &mut raw,
                )
            };
            check(rc, OP)?;
            // SAFETY: MPI just made `raw` (or `MPI_COMM_NULL`) for us, under the gate we hold.
            let Some(comm) = (unsafe { Communicator::adopt(raw, OP) })? else {
                return Ok(None);
            };
            // SAFETY: made by MPI_Cart_create; the gate is held.
            unsafe { CartCommunicator::of(comm, OP) }
        };
        // On error the new communicator drops here, outside the gate.
        made.map(Some).map_err(|(_, e)| e)
    }

    /// `MPI_Cart_map` (MPI-4.0 §8.5.8): the rank this process would have in a grid of `dims`
    /// made with reordering, or `None` if it would be left out. Collective; makes nothing.
    /// What MPI answers, passed on: Open MPI 4.1 gives every process its own rank, even one a
    /// smaller grid would leave out.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let rank = world.cart_map(&[world.size()], &[false])?; // a grid of every process
    /// assert!(rank.is_some_and(|r| (0..world.size()).contains(&r)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`cart_create`](Self::cart_create).
    pub fn cart_map(&self, dims: &[i32], periods: &[bool]) -> Result<Option<i32>> {
        const OP: &str = "cart_map";
        let (ndims, periods) = grid(dims, periods, self.size, OP)?;
        let mut rank: c_int = 0;
        // SAFETY: a valid communicator, `ndims` dims and periods; MPI writes one int.
        let rc = self.gated(OP, || unsafe {
            ffi::MPI_Cart_map(self.raw, ndims, dims.as_ptr(), periods.as_ptr(), &mut rank)
        })?;
        check(rc, OP)?;
        Ok((rank != crate::c_int_const!(ffi::MPI_UNDEFINED)).then_some(rank))
    }

    /// `MPI_Topo_test` (MPI-4.0 §8.5.5): the virtual topology this communicator carries, if
    /// any.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert_eq!(world.topo_test()?, None);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn topo_test(&self) -> Result<Option<VirtualTopology>> {
        const OP: &str = "topo_test";
        let mut kind: c_int = 0;
        // SAFETY: a valid communicator; MPI writes one int.
        let rc = self.gated(OP, || unsafe { ffi::MPI_Topo_test(self.raw, &mut kind) })?;
        check(rc, OP)?;
        Ok(match kind {
            k if k == crate::c_int_const!(CART) => Some(VirtualTopology::Cartesian),
            k if k == crate::c_int_const!(GRAPH) => Some(VirtualTopology::Graph),
            k if k == crate::c_int_const!(DIST_GRAPH) => Some(VirtualTopology::DistGraph),
            _ => None,
        })
    }
}
