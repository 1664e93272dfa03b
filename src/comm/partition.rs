//! How a buffer is divided among the ranks of a v-collective (`gatherv`, `scatterv`,
//! `allgatherv`, `alltoallv`): one block of values per rank.

use crate::datatype::Equivalence;
use crate::error::{Error, ErrorKind, Result};
use std::ffi::c_int;
use std::marker::PhantomData;

/// Per-rank blocks of a buffer of `T`, as MPI counts and displacements.
///
/// Made [`from_counts`](Partition::from_counts) (blocks packed in rank order — cannot be wrong
/// by construction) or [`from_counts_and_displacements`](Partition::from_counts_and_displacements)
/// (checked: no negative or overflowing blocks). Converted to MPI's element counts once, when
/// made, so collectives pass them straight through.
///
/// Blocks may overlap where MPI reads them (the send side of `scatterv` and `alltoallv`: one
/// block sent to every peer), never where MPI writes them: a receive-side partition whose
/// blocks overlap is an [`ErrorKind::InvalidArgument`] of the call (MPI forbids writing a location
/// twice, MPI-4.0 §6.1).
///
/// A block or offset may exceed `i32::MAX` elements: blocking `gatherv`, `scatterv` and
/// `allgatherv` then move the blocks with one `MPI_Alltoallw` of placed datatypes, and blocking
/// `alltoallv` uses MPI-4's `MPI_Alltoallv_c` where the MPI has it. The other calls return
/// [`ErrorKind::CountOverflow`] for such a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition<T> {
    /// MPI's counts and displacements; empty when one does not fit an `int` (`large`).
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    /// Where each block starts, in values of `T`.
    offsets: Vec<usize>,
    /// Some count or displacement does not fit an `int`.
    large: bool,
    /// Values of `T` a buffer needs to hold every block.
    extent: usize,
    /// Values of `T` in each block, for local checks.
    lengths: Vec<usize>,
    /// Blocks follow each other in rank order from 0 (what `reduce_scatter` needs).
    packed: bool,
    /// Two blocks that overlap, as `(start, end)` in values, if any do.
    overlap: Option<Overlap>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Equivalence> Partition<T> {
    /// Blocks of `lengths[r]` values for rank `r`, one after the other in rank order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let blocks = Partition::<f64>::from_counts(&[1, 2, 3])?; // packed: offsets 0, 1, 3
    /// assert_eq!((blocks.len_of(2), blocks.extent()), (3, 6));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`] if the blocks do not fit the address space.
    pub fn from_counts(lengths: &[usize]) -> Result<Self> {
        let mut displs = Vec::with_capacity(lengths.len());
        let mut offset = 0usize;
        for &len in lengths {
            displs.push(offset);
            offset = offset
                .checked_add(len)
                .ok_or_else(|| overflow("partition"))?;
        }
        Partition::from_counts_and_displacements(lengths, &displs)
    }

    /// The same `len` values for each of `ranks` ranks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let blocks = Partition::<u8>::uniform(4, 16)?; // 4 ranks, 16 values each
    /// assert_eq!(blocks.extent(), 64);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Partition::from_counts`].
    pub fn uniform(ranks: usize, len: usize) -> Result<Self> {
        Partition::from_counts(&vec![len; ranks])
    }

    /// Blocks of `lengths[r]` values starting at value `displacements[r]`, in any order.
    ///
    /// Blocks may overlap; a call that would write overlapping blocks refuses the partition.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// // Rank 0's two values at offset 4, rank 1's three at offset 0: any order, no overlap needed
    /// // for sending (receiving refuses overlaps).
    /// let blocks = Partition::<i32>::from_counts_and_displacements(&[2, 3], &[4, 0])?;
    /// assert_eq!((blocks.extent(), blocks.is_packed()), (6, false));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the slices differ in length; [`ErrorKind::CountOverflow`]
    /// if a block does not fit the address space.
    pub fn from_counts_and_displacements(
        lengths: &[usize],
        displacements: &[usize],
    ) -> Result<Self> {
        const OP: &str = "partition";
        if lengths.len() != displacements.len() {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!(
                    "{} counts but {} displacements",
                    lengths.len(),
                    displacements.len()
                ),
            }
            .into());
        }
        let scale = |n: usize| crate::datatype::count_of::<T>(n, OP).ok();
        let bytes = |n: usize| {
            n.checked_mul(std::mem::size_of::<T>())
                .filter(|&b| isize::try_from(b).is_ok())
                .ok_or_else(|| overflow(OP))
        };
        let mut blocks: Vec<(usize, usize)> = Vec::with_capacity(lengths.len());
        let (mut counts, mut displs) = (
            Vec::with_capacity(lengths.len()),
            Vec::with_capacity(lengths.len()),
        );
        let mut extent = 0usize;
        for (&len, &displ) in lengths.iter().zip(displacements) {
            let end = displ.checked_add(len).ok_or_else(|| overflow(OP))?;
            bytes(end)?; // the block's end must be addressable
            len.checked_mul(T::ELEMENTS).ok_or_else(|| overflow(OP))?;
            counts.extend(scale(len));
            displs.extend(scale(displ));
            extent = extent.max(end);
            if len > 0 {
                blocks.push((displ, end));
            }
        }
        let overlap = first_overlap(blocks);
        let mut next = 0usize;
        let packed = lengths.iter().zip(displacements).all(|(&len, &displ)| {
            let ok = displ == next;
            next += len;
            ok
        });
        let large = counts.len() < lengths.len() || displs.len() < lengths.len();
        if large {
            counts.clear();
            displs.clear();
        }
        Ok(Partition {
            counts,
            displs,
            offsets: displacements.to_vec(),
            large,
            extent,
            lengths: lengths.to_vec(),
            packed,
            overlap,
            _type: PhantomData,
        })
    }

    /// Number of ranks (blocks).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let blocks = ferrompi::Partition::<u8>::from_counts(&[1, 1, 1])?;
    /// assert_eq!(blocks.ranks(), 3);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.lengths.len()
    }

    /// Values in rank `r`'s block.
    ///
    /// # Panics
    /// If `r` is not below [`ranks`](Partition::ranks); [`get`](Partition::get) does not.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let blocks = ferrompi::Partition::<u8>::from_counts(&[1, 2, 3])?;
    /// assert_eq!(blocks.len_of(1), 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn len_of(&self, r: usize) -> usize {
        self.lengths[r]
    }

    /// Values in rank `r`'s block, or `None` for a rank the partition has no block for.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let blocks = ferrompi::Partition::<u8>::from_counts(&[1, 2, 3])?;
    /// assert_eq!(blocks.get(1), Some(2)); // rank 1's length
    /// assert_eq!(blocks.get(3), None); // past the last rank
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn get(&self, r: usize) -> Option<usize> {
        self.lengths.get(r).copied()
    }

    /// Where rank `r`'s block starts, in values.
    pub(crate) fn offset_of(&self, r: usize) -> usize {
        self.offsets[r]
    }

    /// What every rank must pass with this partition (checked collectives, `comm::agreement`):
    /// the same blocks, by fingerprint, and the same `root` (`-1` for none).
    pub(crate) fn signature(&self, root: c_int) -> crate::comm::agreement::Signature {
        let values = self.lengths.iter().chain(&self.offsets);
        let key =
            crate::comm::agreement::fingerprint(values.map(|&v| i64::try_from(v).unwrap_or(-1)));
        crate::comm::agreement::Signature::Same { root, key }
    }

    /// Each block's length, for checked collectives (`comm::agreement`).
    pub(crate) fn lengths_i64(&self) -> Vec<i64> {
        let lengths = self.lengths.iter();
        lengths.map(|&v| i64::try_from(v).unwrap_or(-1)).collect()
    }

    /// Values a buffer must hold to contain every block.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let blocks = ferrompi::Partition::<u8>::from_counts(&[1, 2, 3])?;
    /// assert_eq!(blocks.extent(), 6); // the buffer length it needs
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn extent(&self) -> usize {
        self.extent
    }

    /// Whether the blocks follow each other in rank order from 0.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let blocks = ferrompi::Partition::<u8>::from_counts(&[2, 2])?;
    /// assert!(blocks.is_packed());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn is_packed(&self) -> bool {
        self.packed
    }

    /// Whether a count or displacement does not fit MPI's `int` (see `comm::large`).
    #[inline]
    pub(crate) fn is_large(&self) -> bool {
        self.large
    }

    /// Rank `r`'s block, in bytes and elements.
    pub(crate) fn block(&self, r: usize) -> Block {
        Block {
            bytes: self.offsets[r] * std::mem::size_of::<T>(),
            count: self.lengths[r] * T::ELEMENTS,
            datatype: T::datatype().as_raw(),
        }
    }

    /// The `int` arrays, or the error of a call that has no large-count path.
    pub(crate) fn int_arrays(
        &self,
        operation: &'static str,
    ) -> Result<(*const c_int, *const c_int)> {
        if self.large {
            let count = self
                .lengths
                .iter()
                .chain(&self.offsets)
                .max()
                .copied()
                .unwrap_or(0);
            return Err(crate::datatype::count_overflow(
                count,
                T::ELEMENTS,
                operation,
            ));
        }
        Ok((self.counts.as_ptr(), self.displs.as_ptr()))
    }

    /// Counts and displacements for MPI-4's `_c` calls.
    #[cfg(ferrompi_large_count)]
    pub(crate) fn large_arrays(&self) -> (Vec<crate::ffi::MPI_Count>, Vec<crate::ffi::MPI_Aint>) {
        let e = T::ELEMENTS;
        let count =
            |n: usize| crate::ffi::MPI_Count::try_from(n * e).unwrap_or(crate::ffi::MPI_Count::MAX);
        let displ =
            |n: usize| crate::ffi::MPI_Aint::try_from(n * e).unwrap_or(crate::ffi::MPI_Aint::MAX);
        (
            self.lengths.iter().map(|&n| count(n)).collect(),
            self.offsets.iter().map(|&n| displ(n)).collect(),
        )
    }

    pub(crate) fn counts(&self) -> *const c_int {
        self.counts.as_ptr()
    }

    pub(crate) fn displs(&self) -> *const c_int {
        self.displs.as_ptr()
    }

    /// Checks the partition against a communicator of `size` ranks and a buffer of `buffer_len`
    /// values that MPI writes (or reads and writes): no two blocks may overlap.
    #[inline(always)]
    pub(crate) fn check(
        &self,
        size: i32,
        buffer_len: usize,
        operation: &'static str,
    ) -> Result<()> {
        refuse_overlap(self.overlap, operation)?;
        self.check_send(size, buffer_len, operation)
    }

    /// As [`check`](Partition::check), for a buffer MPI only reads: blocks may overlap.
    #[inline(always)]
    pub(crate) fn check_send(
        &self,
        size: i32,
        buffer_len: usize,
        operation: &'static str,
    ) -> Result<()> {
        check_fits(self.ranks(), self.extent, size, buffer_len, operation)
    }
}

/// Two of the non-empty `spans` (`(start, end)`) that overlap, if any do.
fn first_overlap(mut spans: Vec<(usize, usize)>) -> Option<Overlap> {
    spans.sort_unstable();
    spans
        .windows(2)
        .find(|w| w[0].1 > w[1].0)
        .map(|w| (w[0], w[1]))
}

/// Two overlapping blocks, as `(start, end)`.
type Overlap = ((usize, usize), (usize, usize));

/// The error of a call that would write overlapping blocks (MPI-4.0 §6.1).
#[inline(always)]
fn refuse_overlap(overlap: Option<Overlap>, operation: &'static str) -> Result<()> {
    match overlap {
        None => Ok(()),
        Some(pair) => Err(overlapping(pair, operation)),
    }
}

/// The error of [`refuse_overlap`], built out of line.
#[cold]
fn overlapping((a, b): Overlap, operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!(
            "blocks {a:?} and {b:?} overlap in a buffer MPI writes (only send blocks may)"
        ),
    }
    .into()
}

/// Checks a partition of `blocks` blocks needing `extent` values against a communicator of
/// `size` ranks and a buffer of `buffer_len` values.
///
/// Inlined, its errors out of line: two compares on the hot path.
#[inline(always)]
fn check_fits(
    blocks: usize,
    extent: usize,
    size: i32,
    buffer_len: usize,
    operation: &'static str,
) -> Result<()> {
    if usize::try_from(size).ok() != Some(blocks) || buffer_len < extent {
        return Err(misfit(blocks, extent, size, buffer_len, operation));
    }
    Ok(())
}

/// The error of [`check_fits`], built out of line.
#[cold]
fn misfit(
    blocks: usize,
    extent: usize,
    size: i32,
    buffer_len: usize,
    operation: &'static str,
) -> Error {
    if usize::try_from(size).ok() != Some(blocks) {
        ErrorKind::InvalidArgument {
            operation,
            reason: format!("partition has {blocks} blocks for {size} ranks"),
        }
        .into()
    } else {
        ErrorKind::BufferSize {
            operation,
            expected: extent,
            actual: buffer_len,
        }
        .into()
    }
}

fn overflow(operation: &'static str) -> Error {
    ErrorKind::CountOverflow {
        operation,
        count: u64::MAX,
        max: i64::from(c_int::MAX),
    }
    .into()
}

/// `count` elements of the predefined `datatype`, starting `bytes` into a buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Block {
    pub(crate) bytes: usize,
    pub(crate) count: usize,
    pub(crate) datatype: crate::ffi::MPI_Datatype,
}

impl Block {
    /// `len` values of `T` at the start of a buffer.
    pub(crate) fn whole<T: crate::datatype::Equivalence>(len: usize) -> Block {
        Block {
            bytes: 0,
            count: len * T::ELEMENTS,
            datatype: T::datatype().as_raw(),
        }
    }

    /// The same place, with nothing in it.
    pub(crate) fn nothing(self) -> Block {
        Block { count: 0, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_blocks() {
        let p = Partition::<f64>::from_counts(&[2, 0, 3]).unwrap();
        assert_eq!((p.extent(), p.ranks(), p.len_of(2)), (5, 3, 3));
        assert_eq!(p.displs, vec![0, 2, 2]);
    }

    #[test]
    fn arrays_scale_to_elements() {
        let p = Partition::<[f32; 3]>::from_counts(&[1, 2]).unwrap();
        assert_eq!(
            (p.counts.clone(), p.displs.clone(), p.extent()),
            (vec![3, 6], vec![0, 3], 3)
        );
    }

    #[test]
    fn raw_form_is_checked() {
        let p = Partition::<u8>::from_counts_and_displacements(&[2, 2], &[4, 0]).unwrap();
        assert_eq!(p.extent(), 6);
        let overlapping = Partition::<u8>::from_counts_and_displacements(&[3, 2], &[0, 2]).unwrap();
        assert!(
            overlapping.check_send(2, 4, "t").is_ok(),
            "sending may overlap"
        );
        assert!(matches!(
            overlapping
                .check(2, 4, "t")
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::InvalidArgument { .. })
        ));
        assert!(
            Partition::<u8>::from_counts_and_displacements(&[0, 2], &[1, 0]).is_ok(),
            "empty blocks never overlap"
        );
        assert!(matches!(
            Partition::<u8>::from_counts_and_displacements(&[1], &[])
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::InvalidArgument { .. })
        ));
        assert!(matches!(
            Partition::<u8>::from_counts(&[usize::MAX, 1])
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
        let large = Partition::<u8>::from_counts(&[1 << 31, 1]).unwrap();
        assert!(large.is_large() && large.counts.is_empty());
        assert_eq!(large.block(1).bytes, 1 << 31);
        assert!(matches!(
            large
                .int_arrays("t")
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
        assert!(p.check(3, 6, "t").is_err(), "wrong rank count");
        assert!(matches!(
            p.check(2, 5, "t")
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::BufferSize {
                expected: 6,
                actual: 5,
                ..
            })
        ));
    }
}

/// One block of a [`TypedPartition`]: `len` values of some [`Equivalence`] type at a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypedBlock {
    len: usize,
    offset: usize,
    element_bytes: usize,
    per_value: usize,
    datatype: crate::Datatype,
}

impl TypedBlock {
    /// `len` values of `T` starting `byte_offset` bytes into the buffer.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::TypedBlock;
    /// let block = TypedBlock::of::<f64>(3, 16); // three f64 at byte 16
    /// let _ = block;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn of<T: Equivalence>(len: usize, byte_offset: usize) -> TypedBlock {
        TypedBlock {
            len,
            offset: byte_offset,
            element_bytes: std::mem::size_of::<T>(),
            per_value: T::ELEMENTS,
            datatype: T::datatype(),
        }
    }
}

/// Per-rank blocks of a byte buffer, each of its own type, for
/// [`alltoallw`](crate::Communicator::alltoallw). As with [`Partition`], blocks may overlap on
/// the send side only: a receive-side partition whose blocks overlap is an
/// [`ErrorKind::InvalidArgument`] of the call. Counts and offsets beyond MPI's `int` take the
/// large-count path (see `comm::large`).
#[derive(Debug, Clone)]
pub struct TypedPartition {
    /// MPI's arrays; empty when a count or offset does not fit an `int` (`large`).
    counts: Vec<c_int>,
    displs: Vec<c_int>,
    types: Vec<crate::ffi::MPI_Datatype>,
    blocks: Vec<Block>,
    /// Each block's size in bytes.
    sizes: Vec<usize>,
    large: bool,
    extent: usize,
    /// Two blocks that overlap, in bytes, if any do.
    overlap: Option<Overlap>,
}

// SAFETY: the datatypes are predefined handles (immutable, process-wide identifiers).
unsafe impl Send for TypedPartition {}
// SAFETY: as for `Send`.
unsafe impl Sync for TypedPartition {}

impl TypedPartition {
    /// One block per rank, in rank order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let blocks = TypedPartition::new(&[TypedBlock::of::<i32>(2, 0), TypedBlock::of::<f64>(1, 8)])?;
    /// assert_eq!(blocks.extent(), 16); // bytes
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`] if a block's size overflows `usize`.
    pub fn new(blocks: &[TypedBlock]) -> Result<Self> {
        const OP: &str = "typed_partition";
        let mut spans = Vec::with_capacity(blocks.len());
        let (mut counts, mut displs, mut types) = (Vec::new(), Vec::new(), Vec::new());
        let mut placed = Vec::with_capacity(blocks.len());
        let mut sizes = Vec::with_capacity(blocks.len());
        let mut extent = 0usize;
        for b in blocks {
            let bytes = b
                .len
                .checked_mul(b.element_bytes)
                .ok_or_else(|| overflow(OP))?;
            let end = b.offset.checked_add(bytes).ok_or_else(|| overflow(OP))?;
            let count = b.len.checked_mul(b.per_value).ok_or_else(|| overflow(OP))?;
            if let (Ok(count), Ok(offset)) = (c_int::try_from(count), c_int::try_from(b.offset)) {
                counts.push(count);
                displs.push(offset);
                types.push(b.datatype.as_raw());
            }
            placed.push(Block {
                bytes: b.offset,
                count,
                datatype: b.datatype.as_raw(),
            });
            sizes.push(bytes);
            extent = extent.max(end);
            if bytes > 0 {
                spans.push((b.offset, end));
            }
        }
        let overlap = first_overlap(spans);
        let large = counts.len() < blocks.len();
        if large {
            (counts, displs, types) = (Vec::new(), Vec::new(), Vec::new());
        }
        Ok(TypedPartition {
            counts,
            displs,
            types,
            blocks: placed,
            sizes,
            large,
            extent,
            overlap,
        })
    }

    /// Bytes a buffer must hold to contain every block.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let blocks = TypedPartition::new(&[TypedBlock::of::<u16>(4, 0)])?;
    /// assert_eq!(blocks.extent(), 8);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn extent(&self) -> usize {
        self.extent
    }

    /// Checks the partition against a communicator of `size` ranks and a buffer of
    /// `buffer_len` bytes that MPI writes (or reads and writes): no two blocks may overlap.
    #[inline(always)]
    pub(crate) fn check(
        &self,
        size: i32,
        buffer_len: usize,
        operation: &'static str,
    ) -> Result<()> {
        refuse_overlap(self.overlap, operation)?;
        self.check_send(size, buffer_len, operation)
    }

    /// As [`check`](TypedPartition::check), for a buffer MPI only reads: blocks may overlap.
    #[inline(always)]
    pub(crate) fn check_send(
        &self,
        size: i32,
        buffer_len: usize,
        operation: &'static str,
    ) -> Result<()> {
        check_fits(self.blocks.len(), self.extent, size, buffer_len, operation)
    }

    /// Whether a count or offset does not fit MPI's `int` (see `comm::large`).
    pub(crate) fn is_large(&self) -> bool {
        self.large
    }

    /// Each block's size in bytes, for checked collectives (`comm::agreement`).
    pub(crate) fn sizes_i64(&self) -> Vec<i64> {
        let sizes = self.sizes.iter();
        sizes.map(|&v| i64::try_from(v).unwrap_or(-1)).collect()
    }

    /// Rank `r`'s block.
    pub(crate) fn block(&self, r: usize) -> Block {
        self.blocks[r]
    }

    /// MPI's arrays, or the error of a call that has no large-count path.
    #[allow(clippy::type_complexity)]
    pub(crate) fn raw(
        &self,
        operation: &'static str,
    ) -> Result<(*const c_int, *const c_int, *const crate::ffi::MPI_Datatype)> {
        if self.large {
            let count = self.blocks.iter().map(|b| b.count.max(b.bytes)).max();
            return Err(ErrorKind::CountOverflow {
                operation,
                count: u64::try_from(count.unwrap_or(0)).unwrap_or(u64::MAX),
                max: i64::from(c_int::MAX),
            }
            .into());
        }
        Ok((
            self.counts.as_ptr(),
            self.displs.as_ptr(),
            self.types.as_ptr(),
        ))
    }
}
