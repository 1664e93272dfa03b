//! Per-rank blocks of a [`DerivedType`] laid over one buffer: what the `v` collectives on
//! layouts take (`gatherv_view`, `scatterv_view`, `allgatherv_view`, `alltoallv_view`), made
//! only when every block reaches bytes of the slice alone and, on the receive side, no two
//! blocks reach the same byte.

use super::derived::DerivedType;
use super::{Equivalence, count_overflow, empty_recv, empty_send};
use crate::error::{ErrorKind, Result};
use crate::ffi;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

/// Block `r` of a buffer for rank `r`: `counts[r]` copies of a [`DerivedType`] from
/// `displs[r]` times its extent, laid over a slice to read from (the send side of
/// [`scatterv_view`](crate::Communicator::scatterv_view) and
/// [`alltoallv_view`](crate::Communicator::alltoallv_view)). Made by
/// [`DerivedType::blocks`], which checked that every block reaches only bytes of the slice;
/// blocks may overlap (MPI reads them).
#[derive(Debug)]
pub struct Blocks<'a> {
    ptr: *const c_void,
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    datatype: ffi::MPI_Datatype,
    _borrow: PhantomData<(&'a [u8], &'a DerivedType<'a>)>,
}

/// [`Blocks`] over a slice to write to (the receive side of
/// [`gatherv_view`](crate::Communicator::gatherv_view),
/// [`allgatherv_view`](crate::Communicator::allgatherv_view) and
/// [`alltoallv_view`](crate::Communicator::alltoallv_view)). Made by
/// [`DerivedType::blocks_mut`], which checked that every block reaches only bytes of the
/// slice and that no byte is reached by two blocks, interleaved blocks included (the tiles of
/// a grid, its columns), from the bytes the type's map reaches. Values of a type with invalid
/// bit patterns (`bool`) are repaired after every receive.
#[derive(Debug)]
pub struct BlocksMut<'a, T> {
    buf: &'a mut [T],
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    datatype: ffi::MPI_Datatype,
    /// Borrows the type; neither `Send` nor `Sync`, as [`ViewMut`](super::ViewMut) on every MPI.
    _type: PhantomData<(&'a DerivedType<'a>, *const ())>,
}

impl<'mpi> DerivedType<'mpi> {
    /// Blocks of this type over `buf`, to read from: block `r` is `counts[r]` copies from
    /// `displs[r]` times the type's extent (MPI's displacements), checked before any MPI call
    /// to reach only bytes of `buf`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Two blocks of a 2 x 4 row-major matrix, its columns 0..1 and 2..4:
    /// //   [ A B B . ]
    /// //   [ A B B . ]  (a column type, resized so that the next one starts one value on)
    /// let column = DerivedType::vector(&mpi, 2, 1, 4, f64::datatype())?;
    /// let columns = DerivedType::resized(&mpi, &column, 0, 8)?;
    /// let matrix = [0.0f64; 8];
    /// let blocks = columns.blocks(&matrix, &[1, 2], &[0, 1])?;
    /// assert_eq!(blocks.counts(), [1, 2]);
    /// assert!(columns.blocks(&matrix, &[1], &[4]).is_err()); // column 4 is past the end
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if `counts` and `displs` differ in length or a block
    /// reaches outside `buf`; [`ErrorKind::CountOverflow`] if a count or displacement is over
    /// `int`.
    pub fn blocks<'a, T: Equivalence>(
        &'a self,
        buf: &'a [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<Blocks<'a>> {
        let (counts, displs, _) = self.lay(std::mem::size_of_val(buf), counts, displs, "blocks")?;
        let ptr = if buf.is_empty() {
            empty_send()
        } else {
            buf.as_ptr().cast()
        };
        Ok(Blocks {
            ptr,
            counts,
            displs,
            datatype: self.as_raw(),
            _borrow: PhantomData,
        })
    }

    /// Blocks of this type over `buf`, to write to: checked as [`blocks`](Self::blocks), and
    /// that no byte of `buf` is reached by two blocks (MPI writes each byte of a receive
    /// buffer once). Where blocks interleave, the check walks the type's byte runs, decoded
    /// once per type; a type it cannot decode (`darray`) counts as its whole true extent.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence, Order};
    /// // The four 2 x 2 tiles of a 4 x 4 grid, as a 2 x 2 subarray resized to one value, so
    /// // that tile (i, j) starts `4 * 2 * i + 2 * j` values in:
    /// //   [ 0 0 1 1 ]
    /// //   [ 0 0 1 1 ]
    /// //   [ 2 2 3 3 ]
    /// //   [ 2 2 3 3 ]
    /// let tile = DerivedType::subarray(&mpi, &[4, 4], &[2, 2], &[0, 0], Order::C, i32::datatype())?;
    /// let tiles = DerivedType::resized(&mpi, &tile, 0, 4)?;
    /// let mut grid = [0i32; 16];
    /// assert!(tiles.blocks_mut(&mut grid, &[1; 4], &[0, 2, 8, 10]).is_ok()); // interleaved, disjoint
    /// assert!(tiles.blocks_mut(&mut grid, &[1; 2], &[0, 1]).is_err()); // tiles 0 and 1 share a column
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`blocks`](Self::blocks); [`ErrorKind::InvalidArgument`] naming two blocks that reach
    /// the same byte.
    pub fn blocks_mut<'a, T: Equivalence>(
        &'a self,
        buf: &'a mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<BlocksMut<'a, T>> {
        const OP: &str = "blocks_mut";
        let (counts, displs, origins) = self.lay(std::mem::size_of_val(buf), counts, displs, OP)?;
        self.check_disjoint(&origins, OP)?;
        Ok(BlocksMut {
            buf,
            counts,
            displs,
            datatype: self.as_raw(),
            _type: PhantomData,
        })
    }

    /// MPI's counts and displacements of blocks, checked to reach only bytes `0..bytes`, and
    /// each block's origin in bytes with its count.
    #[allow(clippy::type_complexity)]
    pub(crate) fn lay(
        &self,
        bytes: usize,
        counts: &[usize],
        displs: &[usize],
        operation: &'static str,
    ) -> Result<(Vec<c_int>, Vec<c_int>, Vec<(i128, usize)>)> {
        if counts.len() != displs.len() {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: format!(
                    "{} counts and {} displacements: one of each per block",
                    counts.len(),
                    displs.len()
                ),
            }
            .into());
        }
        let bounds = self.bounds();
        let mut origins = Vec::with_capacity(counts.len());
        for (block, (&count, &displ)) in counts.iter().zip(displs).enumerate() {
            let origin = displ as i128 * i128::from(bounds.extent);
            inside(self, (block, origin, count), bytes, operation)?;
            origins.push((origin, count));
        }
        let ints = |values: &[usize]| -> Result<Vec<c_int>> {
            values
                .iter()
                .map(|&v| c_int::try_from(v).map_err(|_| count_overflow(v, 1, operation)))
                .collect()
        };
        Ok((ints(counts)?, ints(displs)?, origins))
    }
}

impl Blocks<'_> {
    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// What MPI is given: the address, counts, displacements and the datatype.
    pub(crate) fn raw(&self) -> (*const c_void, &[c_int], &[c_int], ffi::MPI_Datatype) {
        (self.ptr, &self.counts, &self.displs, self.datatype)
    }
}

impl<'a, T: Equivalence> BlocksMut<'a, T> {
    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// What MPI is given: the address, counts, displacements and the datatype.
    pub(crate) fn raw(&mut self) -> (*mut c_void, &[c_int], &[c_int], ffi::MPI_Datatype) {
        let ptr = if self.buf.is_empty() {
            empty_recv()
        } else {
            self.buf.as_mut_ptr().cast()
        };
        (ptr, &self.counts, &self.displs, self.datatype)
    }

    /// Makes every value of the slice valid again after MPI wrote into it.
    pub(crate) fn repair(&mut self) {
        super::repair(self.buf);
    }

    /// The slice the blocks lie over, for a repair once a nonblocking call completes.
    pub(crate) fn slice_mut(&mut self) -> &mut [T] {
        self.buf
    }

    /// The blocks' datatype.
    pub(crate) fn datatype(&self) -> ffi::MPI_Datatype {
        self.datatype
    }
}

/// Checks that block `block`, `count` copies of `ty` from byte `origin`, reaches only bytes
/// `0..bytes` of its buffer.
fn inside(
    ty: &DerivedType<'_>,
    (block, origin, count): (usize, i128, usize),
    bytes: usize,
    operation: &'static str,
) -> Result<()> {
    let reach = ty.bounds().reach(count);
    let (lo, hi) = (origin + reach.start, origin + reach.end);
    if lo < hi && (lo < 0 || hi > bytes as i128) {
        return Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "block {block} ({count} copies from byte {origin}) reaches bytes {lo}..{hi}, \
                 outside a buffer of {bytes} bytes"
            ),
        }
        .into());
    }
    Ok(())
}

/// Block `r` for rank `r`, each `count` copies of its own [`DerivedType`] from a byte offset,
/// laid over a slice to read from: the send side of
/// [`alltoallw_view`](crate::Communicator::alltoallw_view). Made by [`LayoutBlocks::new`],
/// which checked that every block reaches only bytes of the slice; blocks may overlap.
#[derive(Debug)]
pub struct LayoutBlocks<'a> {
    ptr: *const c_void,
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    /// The displacements as MPI's address type, for the neighbourhood all-to-all.
    addresses: Vec<ffi::MPI_Aint>,
    types: Vec<ffi::MPI_Datatype>,
    _borrow: PhantomData<(&'a [u8], &'a DerivedType<'a>)>,
}

/// [`LayoutBlocks`] over a slice to write to: the receive side of
/// [`alltoallw_view`](crate::Communicator::alltoallw_view). Made by
/// [`LayoutBlocksMut::new`], which checked that every block reaches only bytes of the slice
/// and that no byte is reached by two blocks, from the bytes each type's map reaches (as
/// [`DerivedType::blocks_mut`]). Values of a type with invalid bit patterns are repaired after
/// every receive.
#[derive(Debug)]
pub struct LayoutBlocksMut<'a, T> {
    buf: &'a mut [T],
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    /// The displacements as MPI's address type, for the neighbourhood all-to-all.
    addresses: Vec<ffi::MPI_Aint>,
    types: Vec<ffi::MPI_Datatype>,
    _type: PhantomData<(&'a DerivedType<'a>, *const ())>,
}

/// Byte displacements as MPI's address type (`isize` or `i64`, as wide as a pointer: an `int`
/// always fits it on the targets MPI runs on).
pub(crate) fn addresses(displs: &[c_int]) -> Vec<ffi::MPI_Aint> {
    displs.iter().map(|&d| d as ffi::MPI_Aint).collect()
}

/// One block of [`LayoutBlocks`]: `count` copies of a type from a byte offset.
pub type LayoutBlock<'a, 'mpi> = (&'a DerivedType<'mpi>, usize, usize);

/// MPI's counts, byte displacements and types of `blocks`, checked to reach only bytes
/// `0..bytes`, and each block's type, origin and count.
#[allow(clippy::type_complexity)]
pub(crate) fn lay_typed<'a, 'mpi>(
    bytes: usize,
    blocks: &[LayoutBlock<'a, 'mpi>],
    operation: &'static str,
) -> Result<(
    Vec<c_int>,
    Vec<c_int>,
    Vec<ffi::MPI_Datatype>,
    Vec<(&'a DerivedType<'mpi>, i128, usize)>,
)> {
    let (mut counts, mut displs, mut types) = (Vec::new(), Vec::new(), Vec::new());
    let mut placed = Vec::with_capacity(blocks.len());
    for (block, &(ty, count, offset)) in blocks.iter().enumerate() {
        inside(ty, (block, offset as i128, count), bytes, operation)?;
        let int = |v: usize| c_int::try_from(v).map_err(|_| count_overflow(v, 1, operation));
        counts.push(int(count)?);
        displs.push(int(offset)?);
        types.push(ty.as_raw());
        placed.push((ty, offset as i128, count));
    }
    Ok((counts, displs, types, placed))
}

impl<'a> LayoutBlocks<'a> {
    /// Blocks over `buf`, to read from: block `r` is `count` copies of its type from byte
    /// `offset`, one `(type, count, offset)` per rank, checked to reach only bytes of `buf`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence, LayoutBlocks};
    /// // Of a 2 x 3 row-major matrix: column 0 to rank 0, row 1 to rank 1.
    /// let column = DerivedType::vector(&mpi, 2, 1, 3, f64::datatype())?;
    /// let row = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let matrix = [0.0f64; 6];
    /// let blocks = LayoutBlocks::new(&matrix, &[(&column, 1, 0), (&row, 1, 24)])?;
    /// assert_eq!(blocks.counts(), [1, 1]);
    /// assert!(LayoutBlocks::new(&matrix, &[(&row, 2, 24)]).is_err()); // no row 2
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if a block reaches outside `buf`;
    /// [`ErrorKind::CountOverflow`] if a count or offset is over `int`.
    pub fn new<T: Equivalence>(
        buf: &'a [T],
        blocks: &[LayoutBlock<'a, '_>],
    ) -> Result<LayoutBlocks<'a>> {
        let (counts, displs, types, _) =
            lay_typed(std::mem::size_of_val(buf), blocks, "layout_blocks")?;
        let ptr = if buf.is_empty() {
            empty_send()
        } else {
            buf.as_ptr().cast()
        };
        Ok(LayoutBlocks {
            ptr,
            counts,
            addresses: addresses(&displs),
            displs,
            types,
            _borrow: PhantomData,
        })
    }

    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// What MPI is given: the address, counts, byte displacements and datatypes.
    #[allow(clippy::type_complexity)]
    pub(crate) fn raw(&self) -> (*const c_void, &[c_int], &[c_int], &[ffi::MPI_Datatype]) {
        (self.ptr, &self.counts, &self.displs, &self.types)
    }

    /// As [`raw`](Self::raw), the displacements of MPI's address type.
    #[allow(clippy::type_complexity)]
    pub(crate) fn raw_addressed(
        &self,
    ) -> (
        *const c_void,
        &[c_int],
        &[ffi::MPI_Aint],
        &[ffi::MPI_Datatype],
    ) {
        (self.ptr, &self.counts, &self.addresses, &self.types)
    }
}

impl<'a, T: Equivalence> LayoutBlocksMut<'a, T> {
    /// Blocks over `buf`, to write to: checked as [`LayoutBlocks::new`], and that no byte of
    /// `buf` is reached by two blocks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence, LayoutBlocksMut};
    /// let column = DerivedType::vector(&mpi, 2, 1, 3, f64::datatype())?;
    /// let row = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// let mut matrix = [0.0f64; 6];
    /// // Column 0 and row 1 share element 3: refused.
    /// assert!(LayoutBlocksMut::new(&mut matrix, &[(&column, 1, 0), (&row, 1, 24)]).is_err());
    /// // Column 1 and row 0 share element 1; column 0 and columns 1..3 of row 1 do not.
    /// let tail = DerivedType::contiguous(&mpi, 2, f64::datatype())?;
    /// assert!(LayoutBlocksMut::new(&mut matrix, &[(&column, 1, 0), (&tail, 1, 32)]).is_ok());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`LayoutBlocks::new`]; [`ErrorKind::InvalidArgument`] naming two blocks that reach the
    /// same byte.
    pub fn new(buf: &'a mut [T], blocks: &[LayoutBlock<'a, '_>]) -> Result<Self> {
        const OP: &str = "layout_blocks_mut";
        let (counts, displs, types, placed) = lay_typed(std::mem::size_of_val(buf), blocks, OP)?;
        super::footprint::check_disjoint(&placed, OP)?;
        Ok(LayoutBlocksMut {
            buf,
            counts,
            addresses: addresses(&displs),
            displs,
            types,
            _type: PhantomData,
        })
    }

    /// Each block's count of copies, in rank order.
    pub fn counts(&self) -> &[c_int] {
        &self.counts
    }

    /// What MPI is given: the address, counts, byte displacements and datatypes.
    #[allow(clippy::type_complexity)]
    pub(crate) fn raw(&mut self) -> (*mut c_void, &[c_int], &[c_int], &[ffi::MPI_Datatype]) {
        (self.ptr(), &self.counts, &self.displs, &self.types)
    }

    /// The address MPI writes to.
    fn ptr(&mut self) -> *mut c_void {
        if self.buf.is_empty() {
            empty_recv()
        } else {
            self.buf.as_mut_ptr().cast()
        }
    }

    /// As [`raw`](Self::raw), the displacements of MPI's address type.
    #[allow(clippy::type_complexity)]
    pub(crate) fn raw_addressed(
        &mut self,
    ) -> (
        *mut c_void,
        &[c_int],
        &[ffi::MPI_Aint],
        &[ffi::MPI_Datatype],
    ) {
        (self.ptr(), &self.counts, &self.addresses, &self.types)
    }

    /// Makes every value of the slice valid again after MPI wrote into it.
    pub(crate) fn repair(&mut self) {
        super::repair(self.buf);
    }

    /// The slice the blocks lie over, for a repair once a nonblocking call completes.
    pub(crate) fn slice_mut(&mut self) -> &mut [T] {
        self.buf
    }
}

/// Checks that no byte is reached by two of `blocks`, each `count` copies of its own type from
/// an origin in bytes (what [`LayoutBlocksMut::new`] checks).
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming two blocks that reach the same byte.
pub(crate) fn check_receive_blocks(
    blocks: &[(&DerivedType<'_>, i128, usize)],
    operation: &'static str,
) -> Result<()> {
    super::footprint::check_disjoint(blocks, operation)
}
