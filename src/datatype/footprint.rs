//! Which bytes a datatype's type map reaches (its footprint), decoded from how the type was
//! made (MPI-4.0 §5.1.13): what the receive side of a `v` collective on a layout checks, so
//! that no byte of the buffer is written by two blocks ("no location is written more than
//! once", MPI-4.0 §6.5), also where blocks interleave (the tiles of a 2-D grid, columns).
//!
//! A type is decoded down to its predefined types; each constructor places copies of its
//! argument's runs. Where the exact runs would be too many to keep (over [`MOST_RUNS`] per
//! copy), or the type cannot be decoded (`darray`, a large-count type on an MPI without
//! `MPI_Type_get_envelope_c`), its footprint is taken as its whole true extent: more bytes
//! than it reaches, so the check may refuse an arrangement that was fine, and never accepts
//! one that was not.

use super::decode::{Combiner, ContentType};
use super::derived::{Bounds, DerivedType, TypeRef};
use crate::env::Mpi;
use crate::error::{ErrorKind, Result};

/// The most byte runs kept for one copy of a type; beyond them, its true extent stands in.
pub(crate) const MOST_RUNS: usize = 1 << 20;
/// The most byte runs the overlap check of a set of blocks walks.
pub(crate) const MOST_PIECES: usize = 1 << 22;

/// Sorted, disjoint byte runs `start..end` relative to a copy's origin.
pub(crate) type Runs = Vec<(i64, i64)>;

impl DerivedType<'_> {
    /// The bytes one copy of this type reaches, as sorted, disjoint runs from its origin:
    /// decoded on first use and kept with the type.
    pub(crate) fn footprint(&self) -> &[(i64, i64)] {
        self.footprint_cell()
            .get_or_init(|| runs_of(self.mpi(), TypeRef::from(self), "footprint"))
    }

    /// Checks that no byte is reached by two of `blocks`, each `(origin in bytes, count)`
    /// copies of this type: the receive side of a `v` collective.
    ///
    /// # Errors
    /// As [`check_disjoint`].
    pub(crate) fn check_disjoint(
        &self,
        blocks: &[(i128, usize)],
        operation: &'static str,
    ) -> Result<()> {
        let typed: Vec<_> = blocks.iter().map(|&(o, c)| (self, o, c)).collect();
        check_disjoint(&typed, operation)
    }
}

/// Checks that no byte is reached by two of `blocks`, each `count` copies of its own type from
/// an origin in bytes: the receive side of a `v` or `w` collective.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] naming two blocks that share a byte, or when the blocks are too
/// many pieces to check ([`MOST_PIECES`]).
pub(crate) fn check_disjoint(
    blocks: &[(&DerivedType<'_>, i128, usize)],
    operation: &'static str,
) -> Result<()> {
    // Cheap first: blocks whose reaches do not meet cannot share a byte.
    let mut reaches: Vec<(i128, i128)> = blocks
        .iter()
        .map(|&(ty, origin, count)| {
            let r = ty.bounds().reach(count);
            (origin + r.start, origin + r.end)
        })
        .filter(|(lo, hi)| lo < hi)
        .collect();
    reaches.sort_unstable();
    if reaches.windows(2).all(|w| w[0].1 <= w[1].0) {
        return Ok(());
    }
    let pieces: usize = blocks
        .iter()
        .map(|&(ty, _, count)| count.saturating_mul(ty.footprint().len()))
        .fold(0, usize::saturating_add);
    if pieces > MOST_PIECES {
        return Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "the blocks' reaches interleave, and checking that no two write the same \
                 byte would walk {pieces} pieces (at most {MOST_PIECES}): give the blocks \
                 byte ranges that do not interleave"
            ),
        }
        .into());
    }
    let mut all: Vec<(i128, i128, usize)> = Vec::with_capacity(pieces);
    for (block, &(ty, origin, count)) in blocks.iter().enumerate() {
        let (runs, extent) = (ty.footprint(), i128::from(ty.bounds().extent));
        let first = all.len();
        for copy in 0..count {
            let at = origin + copy as i128 * extent;
            all.extend(
                runs.iter()
                    .map(|&(s, e)| (at + i128::from(s), at + i128::from(e), block)),
            );
        }
        // A block's own copies may meet (its type's business, as for any view): merged, so
        // that only bytes shared by two blocks are found below.
        let own = &mut all[first..];
        own.sort_unstable();
        let merged = merge(own.iter().map(|&(s, e, _)| (s, e)));
        all.truncate(first);
        all.extend(merged.into_iter().map(|(s, e)| (s, e, block)));
    }
    all.sort_unstable();
    let mut furthest: Option<(i128, usize)> = None;
    for &(start, end, block) in &all {
        if let Some((reach, other)) = furthest
            && start < reach
        {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: format!(
                    "blocks {other} and {block} both write byte {start} of the receive buffer \
                     (MPI writes no byte of it twice)"
                ),
            }
            .into());
        }
        if furthest.is_none_or(|(reach, _)| end > reach) {
            furthest = Some((end, block));
        }
    }
    Ok(())
}

/// Sorted runs merged where they meet or overlap.
fn merge<I: Ord + Copy>(sorted: impl Iterator<Item = (I, I)>) -> Vec<(I, I)> {
    let mut out: Vec<(I, I)> = Vec::new();
    for (s, e) in sorted {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The runs of a datatype, or its whole true extent where they cannot be had.
fn runs_of(mpi: &Mpi, ty: TypeRef<'_>, operation: &'static str) -> Runs {
    let bounds = Bounds::of(ty.raw(), operation).ok();
    let whole = || match bounds {
        Some(b) if b.size > 0 => vec![(b.true_lb, b.true_lb.saturating_add(b.true_extent))],
        _ => Vec::new(),
    };
    decode(mpi, ty, operation).unwrap_or_else(whole)
}

/// The runs of a derived type from how it was made; `None` where a predefined type's true
/// extent is what there is to know, or the type cannot be decoded or has too many runs.
fn decode(mpi: &Mpi, ty: TypeRef<'_>, operation: &'static str) -> Option<Runs> {
    let envelope = ty.envelope().ok()?;
    let combiner = envelope.combiner;
    if !matches!(
        combiner,
        Combiner::Dup
            | Combiner::Resized
            | Combiner::Contiguous
            | Combiner::Vector
            | Combiner::Hvector
            | Combiner::Indexed
            | Combiner::Hindexed
            | Combiner::IndexedBlock
            | Combiner::HindexedBlock
            | Combiner::Struct
            | Combiner::Subarray
    ) {
        return None; // predefined, darray, Fortran, an MPI's own: their true extent
    }
    let contents = ty.contents(mpi).ok()?;
    // Each argument type's runs and extent.
    let children: Vec<(Runs, i64)> = contents
        .datatypes
        .iter()
        .map(|t| {
            let t = match t {
                ContentType::Named(d) => TypeRef::from(*d),
                ContentType::Derived(d) => TypeRef::from(d),
            };
            let extent = Bounds::of(t.raw(), operation).map_or(0, |b| b.extent);
            (runs_of(mpi, t, operation), extent)
        })
        .collect();
    let (ints, addrs) = (&contents.integers, &contents.addresses);
    let int = |i: usize| ints.get(i).map(|&v| i64::from(v));
    let addr = |i: usize| addrs.get(i).map(|&v| v as i64);
    // Copies of child `c` placed at byte offsets.
    let mut placed: Vec<(i64, usize)> = Vec::new();
    let mut place = |offset: i64, child: usize| -> Option<()> {
        let runs = children.get(child)?.0.len().max(1);
        if (placed.len() + 1).saturating_mul(runs) > MOST_RUNS {
            return None;
        }
        placed.push((offset, child));
        Some(())
    };
    let ext = |c: usize| children.get(c).map(|x| x.1);
    match combiner {
        Combiner::Dup | Combiner::Resized => place(0, 0)?,
        Combiner::Contiguous => {
            for k in 0..int(0)? {
                place(k.checked_mul(ext(0)?)?, 0)?;
            }
        }
        Combiner::Vector | Combiner::Hvector => {
            let (count, length) = (int(0)?, int(1)?);
            let stride = if combiner == Combiner::Vector {
                int(2)?.checked_mul(ext(0)?)?
            } else {
                addr(0)?
            };
            for i in 0..count {
                for j in 0..length {
                    place(
                        i.checked_mul(stride)?
                            .checked_add(j.checked_mul(ext(0)?)?)?,
                        0,
                    )?;
                }
            }
        }
        Combiner::Indexed | Combiner::Hindexed => {
            let count = usize::try_from(int(0)?).ok()?;
            for b in 0..count {
                let start = if combiner == Combiner::Indexed {
                    int(1 + count + b)?.checked_mul(ext(0)?)?
                } else {
                    addr(b)?
                };
                for j in 0..int(1 + b)? {
                    place(start.checked_add(j.checked_mul(ext(0)?)?)?, 0)?;
                }
            }
        }
        Combiner::IndexedBlock | Combiner::HindexedBlock => {
            let (count, length) = (usize::try_from(int(0)?).ok()?, int(1)?);
            for b in 0..count {
                let start = if combiner == Combiner::IndexedBlock {
                    int(2 + b)?.checked_mul(ext(0)?)?
                } else {
                    addr(b)?
                };
                for j in 0..length {
                    place(start.checked_add(j.checked_mul(ext(0)?)?)?, 0)?;
                }
            }
        }
        Combiner::Struct => {
            let count = usize::try_from(int(0)?).ok()?;
            for b in 0..count {
                for j in 0..int(1 + b)? {
                    place(addr(b)?.checked_add(j.checked_mul(ext(b)?)?)?, b)?;
                }
            }
        }
        Combiner::Subarray => {
            let n = usize::try_from(int(0)?).ok()?;
            let dims =
                |from: usize| -> Option<Vec<i64>> { (0..n).map(|d| int(1 + from + d)).collect() };
            let (sizes, subsizes, starts) = (dims(0)?, dims(n)?, dims(2 * n)?);
            let c_order = int(1 + 3 * n)? == crate::ffi::MPI_ORDER_C as i64;
            // Dimensions from the slowest-varying to the fastest.
            let order: Vec<usize> = if c_order {
                (0..n).collect()
            } else {
                (0..n).rev().collect()
            };
            // Elements between consecutive indices of each dimension.
            let mut step = vec![1i64; n];
            for w in (0..n.saturating_sub(1)).rev() {
                step[order[w]] = step[order[w + 1]].checked_mul(sizes[order[w + 1]])?;
            }
            let total: i64 = subsizes.iter().try_fold(1i64, |a, &s| a.checked_mul(s))?;
            let mut index = vec![0i64; n];
            for _ in 0..total {
                let element = (0..n).try_fold(0i64, |a, d| {
                    a.checked_add(starts[d].checked_add(index[d])?.checked_mul(step[d])?)
                })?;
                place(element.checked_mul(ext(0)?)?, 0)?;
                // The next index, fastest dimension first.
                for &d in order.iter().rev() {
                    index[d] += 1;
                    if index[d] < subsizes[d] {
                        break;
                    }
                    index[d] = 0;
                }
            }
        }
        _ => return None,
    }
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &(offset, child) in &placed {
        for &(s, e) in &children[child].0 {
            runs.push((offset.checked_add(s)?, offset.checked_add(e)?));
        }
        if runs.len() > MOST_RUNS {
            return None;
        }
    }
    runs.sort_unstable();
    Some(merge(runs.into_iter()))
}
