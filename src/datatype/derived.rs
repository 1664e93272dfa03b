//! Derived datatypes made at run time (MPI-4.0 §5.1): [`DerivedType`] and its constructors.

use super::{Datatype, count_overflow};
use crate::env::{Mpi, enter};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::OnceLock;

/// A datatype as an argument of a constructor: a [`Datatype`] (predefined, or a derived
/// [`Equivalence`](super::Equivalence) type's, which live as long as MPI) or a borrowed
/// [`DerivedType`]. Made with `From`; `T::datatype()` is *one element* of `T` (`MPI_DOUBLE`
/// for `[f64; 3]`).
#[derive(Debug, Clone, Copy)]
pub struct TypeRef<'a> {
    raw: ffi::MPI_Datatype,
    _borrow: PhantomData<&'a ()>,
}

impl From<Datatype> for TypeRef<'static> {
    fn from(datatype: Datatype) -> TypeRef<'static> {
        TypeRef {
            raw: datatype.as_raw(),
            _borrow: PhantomData,
        }
    }
}

impl TypeRef<'_> {
    /// The raw handle.
    pub(crate) fn raw(&self) -> ffi::MPI_Datatype {
        self.raw
    }

    /// Borrows a raw handle.
    ///
    /// # Safety
    /// `raw` is a valid datatype for as long as the caller uses the result.
    pub(crate) unsafe fn from_raw(raw: ffi::MPI_Datatype) -> TypeRef<'static> {
        TypeRef {
            raw,
            _borrow: PhantomData,
        }
    }
}

impl<'a> From<&'a DerivedType<'_>> for TypeRef<'a> {
    fn from(derived: &'a DerivedType<'_>) -> TypeRef<'a> {
        TypeRef {
            raw: derived.raw,
            _borrow: PhantomData,
        }
    }
}

/// The bounds of a datatype, in bytes (MPI-4.0 §5.1.6–§5.1.8): where its values start and
/// repeat (`lb`, `extent`), which bytes its type map reaches (`true_lb`, `true_extent`) and
/// how many bytes it moves (`size`). Copy `i` of a datatype in a buffer starts at byte
/// `i * extent`, and reaches the bytes `i * extent + true_lb ..` `+ true_extent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The lower bound (`MPI_Type_get_extent_x`).
    pub lb: i64,
    /// The extent: the stride between consecutive copies.
    pub extent: i64,
    /// The true lower bound: the first byte the type map reaches
    /// (`MPI_Type_get_true_extent_x`).
    pub true_lb: i64,
    /// The true extent: from the first byte reached to one past the last.
    pub true_extent: i64,
    /// The bytes of data one copy holds (`MPI_Type_size_x`).
    pub size: i64,
}

impl Bounds {
    /// The bounds of a committed datatype.
    pub(crate) fn of(raw: ffi::MPI_Datatype, operation: &'static str) -> Result<Bounds> {
        let (mut lb, mut extent, mut true_lb, mut true_extent, mut size) = (0, 0, 0, 0, 0);
        let _gate = enter(operation)?;
        // SAFETY: a committed datatype; each call writes two or one MPI_Count.
        unsafe {
            check(
                ffi::MPI_Type_get_extent_x(raw, &mut lb, &mut extent),
                operation,
            )?;
            check(
                ffi::MPI_Type_get_true_extent_x(raw, &mut true_lb, &mut true_extent),
                operation,
            )?;
            check(ffi::MPI_Type_size_x(raw, &mut size), operation)?;
        }
        #[allow(clippy::useless_conversion)] // MPI_Count is i64 on every MPI measured
        Ok(Bounds {
            lb: i64::from(lb),
            extent: i64::from(extent),
            true_lb: i64::from(true_lb),
            true_extent: i64::from(true_extent),
            size: i64::from(size),
        })
    }

    /// The bytes `count` copies reach from the start of a buffer, as `lo..hi` (empty when
    /// they move no data).
    pub(crate) fn reach(&self, count: usize) -> std::ops::Range<i128> {
        if count == 0 || self.size == 0 {
            return 0..0;
        }
        let last = (count as i128 - 1) * i128::from(self.extent);
        let lo = i128::from(self.true_lb) + last.min(0);
        let hi = i128::from(self.true_lb) + i128::from(self.true_extent) + last.max(0);
        lo..hi
    }
}

/// Array order for [`DerivedType::subarray`] and [`DerivedType::darray`]: `C` (row-major,
/// the last index varies fastest) or `Fortran` (column-major).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `MPI_ORDER_C`: row-major.
    C,
    /// `MPI_ORDER_FORTRAN`: column-major.
    Fortran,
}

impl Order {
    fn raw(self) -> c_int {
        match self {
            Order::C => ffi::MPI_ORDER_C as c_int,
            Order::Fortran => ffi::MPI_ORDER_FORTRAN as c_int,
        }
    }
}

/// How [`DerivedType::darray`] distributes one dimension over the process grid (MPI-4.0
/// §5.1.4): in blocks or cyclically, with a block size (`None`: MPI's default,
/// `MPI_DISTRIBUTE_DFLT_DARG`), or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// `MPI_DISTRIBUTE_BLOCK`.
    Block(Option<usize>),
    /// `MPI_DISTRIBUTE_CYCLIC`.
    Cyclic(Option<usize>),
    /// `MPI_DISTRIBUTE_NONE`: the dimension is not distributed.
    None,
}

/// A derived datatype made at run time, committed and owned: freed (`MPI_Type_free`) when
/// dropped, and borrowing [`Mpi`] so that it cannot outlive it (MPI-4.0 §5.1).
///
/// Its constructors are MPI's, with counts as `usize` and displacements as `isize` (in
/// elements of the old type, or in bytes for the `h` forms). A count beyond `int` uses the
/// MPI-4 large-count (`_c`) constructor where the MPI has it, and is an
/// [`ErrorKind::CountOverflow`] elsewhere. A type describes memory relative to a buffer's start;
/// [`view`](Self::view) and [`view_mut`](Self::view_mut) check that it stays inside a slice
/// before anything is moved.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::{DerivedType, Equivalence};
/// // Column 1 of a 3 x 4 row-major matrix of f64:
/// //   [ . X . . ]
/// //   [ . X . . ]   3 blocks of 1 element, 4 elements apart
/// //   [ . X . . ]
/// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
/// let bounds = column.bounds();
/// assert_eq!((bounds.size, bounds.true_extent), (24, 72)); // 3 values; 9 doubles reached
/// let matrix: Vec<f64> = (0..12).map(f64::from).collect();
/// let view = column.view(&matrix[1..], 1)?; // starts at element 1
/// # let _ = view;
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[derive(Debug)]
pub struct DerivedType<'mpi> {
    raw: ffi::MPI_Datatype,
    bounds: Bounds,
    mpi: &'mpi Mpi,
    /// The bytes one copy reaches, decoded on first use (see `footprint`).
    footprint: OnceLock<Vec<(i64, i64)>>,
}

// SAFETY: a committed datatype is immutable; MPI lets any thread the thread level allows pass
// it to an operation, and every use of it by the crate is behind the thread gate, including
// the free in `drop`.
unsafe impl Send for DerivedType<'_> {}
// SAFETY: as for `Send`: `&DerivedType` only reads the handle and the bounds.
unsafe impl Sync for DerivedType<'_> {}

/// The block lengths of an indexed type: one per block, or one for every block.
#[derive(Clone, Copy)]
enum Blocks<'a> {
    Each(&'a [usize]),
    All(usize),
}

/// What an indexed type's displacements count: copies of the old type, or bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Copies,
    Bytes,
}

/// A constructor's counts as `int`s, or `None` if one does not fit.
fn ints<I: Copy + TryInto<c_int>>(values: &[I]) -> Option<Vec<c_int>> {
    values.iter().map(|&v| v.try_into().ok()).collect()
}

/// The same, for the large-count (`_c`) constructors.
#[cfg(ferrompi_large_count)]
fn counts<I: Copy + TryInto<ffi::MPI_Count>>(
    values: &[I],
    operation: &'static str,
) -> Result<Vec<ffi::MPI_Count>> {
    values
        .iter()
        .map(|&v| v.try_into().ok())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| count_overflow(values.len(), 1, operation))
}

/// The error for arrays of a constructor whose lengths differ.
#[cold]
fn lengths_differ(operation: &'static str, what: &str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("{what} must have the same length"),
    }
    .into()
}

/// Displacements and strides as `MPI_Aint` (`isize` is as wide on every platform MPI runs on).
fn aints(values: &[isize]) -> Vec<ffi::MPI_Aint> {
    values.iter().map(|&v| v as ffi::MPI_Aint).collect()
}

/// Calls a constructor's large-count form where the MPI has one; a count overflow elsewhere.
macro_rules! large {
    ($mpi:expr, $operation:expr, $len:expr, { $($prep:tt)* }, |$t:ident| $call:expr) => {{
        #[cfg(ferrompi_large_count)]
        {
            (|| {
                $($prep)*
                DerivedType::make($mpi, $operation, |$t| $call)
            })()
        }
        #[cfg(not(ferrompi_large_count))]
        {
            Err::<DerivedType<'_>, Error>(count_overflow($len, 1, $operation))
        }
    }};
}

impl<'mpi> DerivedType<'mpi> {
    /// Makes, commits and adopts a type: `create` writes the new handle.
    fn make(
        mpi: &'mpi Mpi,
        operation: &'static str,
        create: impl FnOnce(*mut ffi::MPI_Datatype) -> c_int,
    ) -> Result<DerivedType<'mpi>> {
        let mut raw = ffi::MPI_DATATYPE_NULL;
        {
            let _gate = enter(operation)?;
            check(create(&mut raw), operation)?;
            // SAFETY: the type just made.
            if let Err(e) = check(unsafe { ffi::MPI_Type_commit(&mut raw) }, operation) {
                // SAFETY: ours, never handed out.
                unsafe { ffi::MPI_Type_free(&mut raw) };
                return Err(e);
            }
        }
        Self::adopt_committed(mpi, raw, operation)
    }

    /// Owns a committed handle made for this process: counts it, reads its bounds.
    fn adopt_committed(
        mpi: &'mpi Mpi,
        raw: ffi::MPI_Datatype,
        operation: &'static str,
    ) -> Result<DerivedType<'mpi>> {
        crate::live::made(crate::live::Kind::Datatype);
        // Owned from here: a failure below frees it in the drop.
        let mut made = DerivedType {
            raw,
            bounds: Bounds {
                lb: 0,
                extent: 0,
                true_lb: 0,
                true_extent: 0,
                size: 0,
            },
            mpi,
            footprint: OnceLock::new(),
        };
        made.bounds = Bounds::of(raw, operation)?;
        Ok(made)
    }

    /// Owns a derived handle MPI made for this process (a decoded type's argument): commits
    /// it, so that it can be used like any other, or frees it on failure.
    pub(crate) fn adopt(
        mpi: &'mpi Mpi,
        mut raw: ffi::MPI_Datatype,
        operation: &'static str,
    ) -> Result<DerivedType<'mpi>> {
        {
            let _gate = enter(operation)?;
            // SAFETY: a derived datatype MPI made for this process.
            if let Err(e) = check(unsafe { ffi::MPI_Type_commit(&mut raw) }, operation) {
                // SAFETY: ours, never handed out.
                unsafe { ffi::MPI_Type_free(&mut raw) };
                return Err(e);
            }
        }
        Self::adopt_committed(mpi, raw, operation)
    }

    /// The environment the type borrows.
    pub(crate) fn mpi(&self) -> &'mpi Mpi {
        self.mpi
    }

    /// Where [`footprint`](Self::footprint) keeps what it decoded.
    pub(crate) fn footprint_cell(&self) -> &OnceLock<Vec<(i64, i64)>> {
        &self.footprint
    }

    /// `count` copies of `old`, one after another (`MPI_Type_contiguous`, MPI-4.0 §5.1.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // [ X X X ]: three doubles
    /// let triple = DerivedType::contiguous(&mpi, 3, f64::datatype())?;
    /// assert_eq!(triple.bounds().extent, 24);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn contiguous<'a>(
        mpi: &'mpi Mpi,
        count: usize,
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_contiguous";
        let old = old.into().raw;
        match c_int::try_from(count) {
            // SAFETY: MPI writes one handle at `t`.
            Ok(n) => Self::make(mpi, OP, |t| unsafe { ffi::MPI_Type_contiguous(n, old, t) }),
            Err(_) => large!(
                mpi,
                OP,
                count,
                {
                    let n = counts(&[count], OP)?[0];
                },
                |t| {
                    // SAFETY: as above.
                    unsafe { ffi::MPI_Type_contiguous_c(n, old, t) }
                }
            ),
        }
    }

    /// `count` blocks of `blocklength` copies of `old`, block `i` starting `i * stride` copies
    /// of `old` from the first (`MPI_Type_vector`, MPI-4.0 §5.1.2): a matrix's column, a
    /// strided slice.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // [ X X . . . X X . . . X X ]: 3 blocks of 2, 5 apart
    /// let pairs = DerivedType::vector(&mpi, 3, 2, 5, i32::datatype())?;
    /// assert_eq!((pairs.bounds().size, pairs.bounds().extent), (24, 48));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn vector<'a>(
        mpi: &'mpi Mpi,
        count: usize,
        blocklength: usize,
        stride: isize,
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_vector";
        let old = old.into().raw;
        match (
            c_int::try_from(count),
            c_int::try_from(blocklength),
            c_int::try_from(stride),
        ) {
            (Ok(n), Ok(b), Ok(s)) => Self::make(mpi, OP, |t| {
                // SAFETY: MPI writes one handle at `t`.
                unsafe { ffi::MPI_Type_vector(n, b, s, old, t) }
            }),
            _ => large!(
                mpi,
                OP,
                count,
                {
                    let (n, b) = (counts(&[count, blocklength], OP)?, stride as ffi::MPI_Count);
                },
                |t| {
                    // SAFETY: as above.
                    unsafe { ffi::MPI_Type_vector_c(n[0], n[1], b, old, t) }
                }
            ),
        }
    }

    /// [`vector`](Self::vector) with the stride in bytes (`MPI_Type_create_hvector`, MPI-4.0
    /// §5.1.2): a field of every struct in an array.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // The first f32 of each of four 12-byte records: [ X . . | X . . | X . . | X . . ]
    /// let firsts = DerivedType::hvector(&mpi, 4, 1, 12, f32::datatype())?;
    /// assert_eq!(firsts.bounds().size, 16);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn hvector<'a>(
        mpi: &'mpi Mpi,
        count: usize,
        blocklength: usize,
        stride_bytes: isize,
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_create_hvector";
        let old = old.into().raw;
        let stride = stride_bytes as ffi::MPI_Aint;
        match (c_int::try_from(count), c_int::try_from(blocklength)) {
            (Ok(n), Ok(b)) => Self::make(mpi, OP, |t| {
                // SAFETY: MPI writes one handle at `t`.
                unsafe { ffi::MPI_Type_create_hvector(n, b, stride, old, t) }
            }),
            _ => large!(
                mpi,
                OP,
                count,
                {
                    let n = counts(&[count, blocklength], OP)?;
                },
                |t| {
                    // SAFETY: as above.
                    unsafe {
                        ffi::MPI_Type_create_hvector_c(n[0], n[1], stride as ffi::MPI_Count, old, t)
                    }
                }
            ),
        }
    }

    /// Blocks of `lengths[i]` copies of `old` at `displacements[i]` copies from the start
    /// (`MPI_Type_indexed`, MPI-4.0 §5.1.2): an irregular selection, such as a sparse row.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // [ . X X . . . X . ]: 2 at 1, 1 at 6
    /// let picked = DerivedType::indexed(&mpi, &[2, 1], &[1, 6], u64::datatype())?;
    /// assert_eq!((picked.bounds().true_lb, picked.bounds().size), (8, 24));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the slices' lengths differ; [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn indexed<'a>(
        mpi: &'mpi Mpi,
        lengths: &[usize],
        displacements: &[isize],
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        let blocks = Blocks::Each(lengths);
        Self::irregular(
            mpi,
            "type_indexed",
            blocks,
            displacements,
            Unit::Copies,
            old.into(),
        )
    }

    /// [`indexed`](Self::indexed) with the displacements in bytes
    /// (`MPI_Type_create_hindexed`, MPI-4.0 §5.1.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Bytes 0..8 and 16..20 of a record: one f64, then one f32 after a gap.
    /// let two = DerivedType::hindexed(&mpi, &[2, 1], &[0, 16], f32::datatype())?;
    /// assert_eq!(two.bounds().size, 12);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`indexed`](Self::indexed).
    pub fn hindexed<'a>(
        mpi: &'mpi Mpi,
        lengths: &[usize],
        displacements_bytes: &[isize],
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        let (blocks, unit) = (Blocks::Each(lengths), Unit::Bytes);
        Self::irregular(
            mpi,
            "type_create_hindexed",
            blocks,
            displacements_bytes,
            unit,
            old.into(),
        )
    }

    /// Blocks of `blocklength` copies of `old` at each of `displacements` (in copies of
    /// `old`; `MPI_Type_create_indexed_block`, MPI-4.0 §5.1.2): a gather list.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // [ X . . X . . . X ]: one at 0, 3 and 7
    /// let list = DerivedType::indexed_block(&mpi, 1, &[0, 3, 7], f64::datatype())?;
    /// assert_eq!(list.bounds().true_extent, 64);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn indexed_block<'a>(
        mpi: &'mpi Mpi,
        blocklength: usize,
        displacements: &[isize],
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        let (blocks, unit) = (Blocks::All(blocklength), Unit::Copies);
        Self::irregular(
            mpi,
            "type_create_indexed_block",
            blocks,
            displacements,
            unit,
            old.into(),
        )
    }

    /// [`indexed_block`](Self::indexed_block) with the displacements in bytes
    /// (`MPI_Type_create_hindexed_block`, MPI-4.0 §5.1.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// let list = DerivedType::hindexed_block(&mpi, 2, &[0, 32], u8::datatype())?;
    /// assert_eq!((list.bounds().size, list.bounds().true_extent), (4, 34));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`indexed_block`](Self::indexed_block).
    pub fn hindexed_block<'a>(
        mpi: &'mpi Mpi,
        blocklength: usize,
        displacements_bytes: &[isize],
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        let (blocks, unit) = (Blocks::All(blocklength), Unit::Bytes);
        let op = "type_create_hindexed_block";
        Self::irregular(mpi, op, blocks, displacements_bytes, unit, old.into())
    }

    /// The four indexed constructors: blocks of one length each or all of one length, at
    /// displacements in copies of `old` or in bytes.
    fn irregular(
        mpi: &'mpi Mpi,
        operation: &'static str,
        blocks: Blocks<'_>,
        displacements: &[isize],
        unit: Unit,
        old: TypeRef<'_>,
    ) -> Result<DerivedType<'mpi>> {
        if let Blocks::Each(lengths) = blocks
            && lengths.len() != displacements.len()
        {
            return Err(lengths_differ(operation, "lengths and displacements"));
        }
        let old = old.raw;
        let lengths = match blocks {
            Blocks::Each(lengths) => ints(lengths),
            Blocks::All(length) => ints(&[length]),
        };
        let elements = ints(displacements).filter(|_| unit == Unit::Copies);
        match (ints(&[displacements.len()]), lengths) {
            (Some(n), Some(l)) if unit == Unit::Bytes || elements.is_some() => {
                let (d, bytes) = (elements.unwrap_or_default(), aints(displacements));
                let (l, d, bytes) = (l.as_ptr(), d.as_ptr(), bytes.as_ptr());
                Self::make(mpi, operation, |t| {
                    // SAFETY: arrays of `n[0]` entries (one length for the block forms); MPI
                    // writes one handle at `t`.
                    unsafe {
                        match (blocks, unit) {
                            (Blocks::Each(_), Unit::Copies) => {
                                ffi::MPI_Type_indexed(n[0], l, d, old, t)
                            }
                            (Blocks::Each(_), Unit::Bytes) => {
                                ffi::MPI_Type_create_hindexed(n[0], l, bytes, old, t)
                            }
                            (Blocks::All(_), Unit::Copies) => {
                                ffi::MPI_Type_create_indexed_block(n[0], *l, d, old, t)
                            }
                            (Blocks::All(_), Unit::Bytes) => {
                                ffi::MPI_Type_create_hindexed_block(n[0], *l, bytes, old, t)
                            }
                        }
                    }
                })
            }
            _ => large!(
                mpi,
                operation,
                displacements.len(),
                {
                    let l = match blocks {
                        Blocks::Each(lengths) => counts(lengths, operation)?,
                        Blocks::All(length) => counts(&[length], operation)?,
                    };
                    let d = counts(displacements, operation)?;
                    let n = d.len() as ffi::MPI_Count;
                    let (l, d) = (l.as_ptr(), d.as_ptr());
                },
                |t| {
                    // SAFETY: as above, in MPI_Count.
                    unsafe {
                        match (blocks, unit) {
                            (Blocks::Each(_), Unit::Copies) => {
                                ffi::MPI_Type_indexed_c(n, l, d, old, t)
                            }
                            (Blocks::Each(_), Unit::Bytes) => {
                                ffi::MPI_Type_create_hindexed_c(n, l, d, old, t)
                            }
                            (Blocks::All(_), Unit::Copies) => {
                                ffi::MPI_Type_create_indexed_block_c(n, *l, d, old, t)
                            }
                            (Blocks::All(_), Unit::Bytes) => {
                                ffi::MPI_Type_create_hindexed_block_c(n, *l, d, old, t)
                            }
                        }
                    }
                }
            ),
        }
    }

    /// Blocks of `lengths[i]` copies of `types[i]` at `displacements_bytes[i]`
    /// (`MPI_Type_create_struct`, MPI-4.0 §5.1.2). For a Rust struct, prefer
    /// `#[derive(Equivalence)]`, which takes the offsets from the compiler.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // [ f64 | i32 . ]: an f64 at 0, an i32 at 8 (then 4 bytes of padding in a struct)
    /// let pair = DerivedType::create_struct(
    ///     &mpi,
    ///     &[1, 1],
    ///     &[0, 8],
    ///     &[f64::datatype().into(), i32::datatype().into()],
    /// )?;
    /// assert_eq!((pair.bounds().size, pair.bounds().true_extent), (12, 12));
    /// let record = DerivedType::resized(&mpi, &pair, 0, 16)?; // one every 16 bytes
    /// assert_eq!(record.bounds().extent, 16);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the slices' lengths differ; [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn create_struct(
        mpi: &'mpi Mpi,
        lengths: &[usize],
        displacements_bytes: &[isize],
        types: &[TypeRef<'_>],
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_create_struct";
        if lengths.len() != displacements_bytes.len() || lengths.len() != types.len() {
            return Err(lengths_differ(OP, "lengths, displacements and types"));
        }
        let d = aints(displacements_bytes);
        let raw: Vec<ffi::MPI_Datatype> = types.iter().map(|t| t.raw).collect();
        match (ints(&[lengths.len()]), ints(lengths)) {
            (Some(n), Some(l)) => Self::make(mpi, OP, |t| {
                // SAFETY: three arrays of `n` entries; MPI writes one handle at `t`.
                unsafe {
                    ffi::MPI_Type_create_struct(n[0], l.as_ptr(), d.as_ptr(), raw.as_ptr(), t)
                }
            }),
            _ => large!(
                mpi,
                OP,
                lengths.len(),
                {
                    let (l, dc) = (counts(lengths, OP)?, counts(displacements_bytes, OP)?);
                },
                |t| {
                    // SAFETY: as above, in MPI_Count.
                    unsafe {
                        ffi::MPI_Type_create_struct_c(
                            l.len() as ffi::MPI_Count,
                            l.as_ptr(),
                            dc.as_ptr(),
                            raw.as_ptr(),
                            t,
                        )
                    }
                }
            ),
        }
    }

    /// The block `starts .. starts + subsizes` of an array of `sizes` copies of `old`, in
    /// `order` (`MPI_Type_create_subarray`, MPI-4.0 §5.1.3): a halo face, a tile. Its extent
    /// is the whole array's, so consecutive copies are consecutive arrays.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence, Order};
    /// // The 2 x 2 block at (1, 1) of a 3 x 4 array, row-major:
    /// //   [ . . . . ]
    /// //   [ . X X . ]
    /// //   [ . X X . ]
    /// let tile = DerivedType::subarray(&mpi, &[3, 4], &[2, 2], &[1, 1], Order::C, f32::datatype())?;
    /// assert_eq!((tile.bounds().size, tile.bounds().extent), (16, 48));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the slices' lengths differ or a block reaches past its
    /// array (checked here: MPI would abort on it); [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn subarray<'a>(
        mpi: &'mpi Mpi,
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        order: Order,
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_create_subarray";
        if sizes.len() != subsizes.len() || sizes.len() != starts.len() {
            return Err(lengths_differ(OP, "sizes, subsizes and starts"));
        }
        let outside = sizes
            .iter()
            .zip(subsizes)
            .zip(starts)
            .any(|((&size, &sub), &start)| {
                sub == 0 || size == 0 || start.checked_add(sub).is_none_or(|end| end > size)
            });
        if sizes.is_empty() || outside {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!(
                    "subarray {subsizes:?} at {starts:?} is not a non-empty block of an array of {sizes:?}"
                ),
            }.into());
        }
        let old = old.into().raw;
        match (
            ints(&[sizes.len()]),
            ints(sizes),
            ints(subsizes),
            ints(starts),
        ) {
            (Some(n), Some(s), Some(u), Some(b)) => Self::make(mpi, OP, |t| {
                // SAFETY: three arrays of `n` ints; MPI writes one handle at `t`.
                unsafe {
                    ffi::MPI_Type_create_subarray(
                        n[0],
                        s.as_ptr(),
                        u.as_ptr(),
                        b.as_ptr(),
                        order.raw(),
                        old,
                        t,
                    )
                }
            }),
            _ => large!(
                mpi,
                OP,
                sizes.len(),
                {
                    let (s, u, b) = (
                        counts(sizes, OP)?,
                        counts(subsizes, OP)?,
                        counts(starts, OP)?,
                    );
                },
                |t| {
                    // SAFETY: as above, in MPI_Count.
                    unsafe {
                        ffi::MPI_Type_create_subarray_c(
                            s.len() as c_int,
                            s.as_ptr(),
                            u.as_ptr(),
                            b.as_ptr(),
                            order.raw(),
                            old,
                            t,
                        )
                    }
                }
            ),
        }
    }

    /// The part of a global array of `gsizes` copies of `old` that process `rank` of a grid of
    /// `psizes` processes (`size` in all) holds, distributed as `distribs`
    /// (`MPI_Type_create_darray`, MPI-4.0 §5.1.4), as HPF and MPI-IO views describe it.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Distribution, Equivalence, Order};
    /// // 8 values in blocks over 2 processes: process 1 holds [ . . . . X X X X ]
    /// let mine = DerivedType::darray(&mpi, 2, 1, &[8], &[Distribution::Block(None)], &[2], Order::C, f64::datatype())?;
    /// assert_eq!((mine.bounds().true_lb, mine.bounds().size), (32, 32));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the slices' lengths differ or the grid is not `size`
    /// processes with `rank` among them; [`ErrorKind::CountOverflow`]; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    #[allow(clippy::too_many_arguments)]
    pub fn darray<'a>(
        mpi: &'mpi Mpi,
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distribution],
        psizes: &[usize],
        order: Order,
        old: impl Into<TypeRef<'a>>,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_create_darray";
        if gsizes.len() != distribs.len() || gsizes.len() != psizes.len() {
            return Err(lengths_differ(OP, "gsizes, distribs and psizes"));
        }
        let grid = psizes.iter().try_fold(1usize, |n, &p| n.checked_mul(p));
        if gsizes.is_empty() || grid != Some(size) || rank >= size {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!(
                    "a grid of {psizes:?} processes must be `size` = {size}, with rank {rank} in it"
                ),
            }
            .into());
        }
        let (mut kinds, mut args) = (Vec::new(), Vec::new());
        for d in distribs {
            let default = ffi::MPI_DISTRIBUTE_DFLT_DARG as c_int;
            let (kind, arg) = match *d {
                Distribution::Block(a) => (ffi::MPI_DISTRIBUTE_BLOCK as c_int, a),
                Distribution::Cyclic(a) => (ffi::MPI_DISTRIBUTE_CYCLIC as c_int, a),
                Distribution::None => (ffi::MPI_DISTRIBUTE_NONE as c_int, None),
            };
            kinds.push(kind);
            args.push(match arg {
                None => default,
                Some(a) => c_int::try_from(a).map_err(|_| count_overflow(a, 1, OP))?,
            });
        }
        let old = old.into().raw;
        match (
            ints(&[size, rank, gsizes.len()]),
            ints(gsizes),
            ints(psizes),
        ) {
            (Some(n), Some(g), Some(p)) => Self::make(mpi, OP, |t| {
                // SAFETY: four arrays of `n[2]` ints; MPI writes one handle at `t`.
                unsafe {
                    ffi::MPI_Type_create_darray(
                        n[0],
                        n[1],
                        n[2],
                        g.as_ptr(),
                        kinds.as_ptr(),
                        args.as_ptr(),
                        p.as_ptr(),
                        order.raw(),
                        old,
                        t,
                    )
                }
            }),
            _ => large!(
                mpi,
                OP,
                size,
                {
                    let (n, g) = (
                        ints(&[size, rank, gsizes.len()])
                            .ok_or_else(|| count_overflow(size, 1, OP))?,
                        counts(gsizes, OP)?,
                    );
                    let p = ints(psizes).ok_or_else(|| count_overflow(psizes.len(), 1, OP))?;
                },
                |t| {
                    // SAFETY: as above, the global sizes in MPI_Count.
                    unsafe {
                        ffi::MPI_Type_create_darray_c(
                            n[0],
                            n[1],
                            n[2],
                            g.as_ptr(),
                            kinds.as_ptr(),
                            args.as_ptr(),
                            p.as_ptr(),
                            order.raw(),
                            old,
                            t,
                        )
                    }
                }
            ),
        }
    }

    /// `old` with its lower bound and extent set (`MPI_Type_create_resized`, MPI-4.0 §5.1.7):
    /// where consecutive copies start. The bytes it reaches are `old`'s.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// // Every third f64: [ X . . X . . X ] as 3 copies of one f64 with an extent of 24.
    /// let spaced = DerivedType::resized(&mpi, f64::datatype(), 0, 24)?;
    /// assert_eq!(spaced.bounds().extent, 24);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn resized<'a>(
        mpi: &'mpi Mpi,
        old: impl Into<TypeRef<'a>>,
        lb: isize,
        extent: isize,
    ) -> Result<DerivedType<'mpi>> {
        const OP: &str = "type_create_resized";
        let old = old.into().raw;
        Self::make(mpi, OP, |t| {
            // SAFETY: MPI writes one handle at `t`.
            unsafe {
                ffi::MPI_Type_create_resized(old, lb as ffi::MPI_Aint, extent as ffi::MPI_Aint, t)
            }
        })
    }

    /// A copy of this type (`MPI_Type_dup`, MPI-4.0 §5.1.10), owned on its own.
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn dup(&self) -> Result<DerivedType<'mpi>> {
        let old = self.raw;
        // SAFETY: MPI writes one handle at `t`.
        Self::make(self.mpi, "type_dup", |t| unsafe {
            ffi::MPI_Type_dup(old, t)
        })
    }

    /// The type's bounds, read once when it was made.
    #[inline]
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The raw handle, for calling `ffi` directly; valid while `self` lives.
    #[inline]
    pub fn as_raw(&self) -> ffi::MPI_Datatype {
        self.raw
    }

    /// Frees the type now, reporting errors (`MPI_Type_free`, MPI-4.0 §5.1.9).
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (the handle is then leaked, and reported at finalize);
    /// [`ErrorKind::Mpi`].
    pub fn free(self) -> Result<()> {
        let mut this = ManuallyDrop::new(self);
        this.free_raw()
    }

    fn free_raw(&mut self) -> Result<()> {
        let _gate = enter("type_free")?;
        // SAFETY: we own the handle; MPI sets it to MPI_DATATYPE_NULL. Operations already
        // started with it complete normally (MPI-4.0 §5.1.9).
        check(unsafe { ffi::MPI_Type_free(&mut self.raw) }, "type_free")?;
        crate::live::freed(crate::live::Kind::Datatype);
        Ok(())
    }
}

impl Drop for DerivedType<'_> {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `free` reports them.
        let _ = self.free_raw();
    }
}
