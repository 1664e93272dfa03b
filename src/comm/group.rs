//! Process groups (MPI-4.0 §7.3): ordered sets of processes, built from a communicator's group
//! and combined locally, then turned into communicators with
//! [`Communicator::create`](super::Communicator::create) or
//! [`Communicator::create_from_group`](super::Communicator::create_from_group).

use super::p2p::ProcNull;
use super::{Communicator, Comparison};
use crate::datatype::count_of;
use crate::env::{Mpi, enter};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

/// An MPI group, freed on drop (`MPI_Group_free`).
///
/// `Send + Sync` for the same reasons as [`Communicator`]: every call passes
/// the thread gate.
#[derive(Debug)]
pub struct Group<'env> {
    raw: ffi::MPI_Group,
    _env: PhantomData<&'env Mpi>,
}

// SAFETY: the handle is an identifier MPI resolves internally; every use passes the thread gate
// (`env::enter`), and `Drop` leaks rather than frees when the gate refuses.
unsafe impl Send for Group<'_> {}
// SAFETY: as for `Send`: `&Group` only allows gated MPI calls.
unsafe impl Sync for Group<'_> {}

impl<'env> Group<'env> {
    /// Takes ownership of a group handle MPI just created.
    ///
    /// # Safety
    /// `raw` must be a valid group handle (or `MPI_GROUP_EMPTY`) that nothing else frees.
    pub(crate) unsafe fn adopt(raw: ffi::MPI_Group) -> Group<'env> {
        if raw != ffi::MPI_GROUP_NULL && raw != ffi::MPI_GROUP_EMPTY {
            crate::live::made(crate::live::Kind::Group);
        }
        Group {
            raw,
            _env: PhantomData,
        }
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let group = world.group()?;
    /// let _raw: ferrompi::ffi::MPI_Group = group.as_raw();
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn as_raw(&self) -> ffi::MPI_Group {
        self.raw
    }

    fn query(
        &self,
        operation: &'static str,
        call: impl FnOnce(&mut c_int) -> c_int,
    ) -> Result<c_int> {
        let _gate = enter(operation)?;
        let mut value = 0;
        check(call(&mut value), operation)?;
        Ok(value)
    }

    /// The number of processes in the group (`MPI_Group_size`, MPI-4.0 §7.3.1).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert_eq!(world.group()?.size()?, world.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn size(&self) -> Result<i32> {
        // SAFETY: valid group; writes one int.
        self.query("group_size", |v| unsafe {
            ffi::MPI_Group_size(self.raw, v)
        })
    }

    /// This process's rank in the group, or `None` if it is not a member (`MPI_Group_rank`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let first = world.group()?.incl(&[0])?;
    /// assert_eq!(first.rank()?, (world.rank() == 0).then_some(0)); // None outside the group
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn rank(&self) -> Result<Option<i32>> {
        // SAFETY: valid group; writes one int.
        let rank = self.query("group_rank", |v| unsafe {
            ffi::MPI_Group_rank(self.raw, v)
        })?;
        Ok((rank != ffi::MPI_UNDEFINED).then_some(rank))
    }

    /// Checks that `ranks` are distinct ranks of this group, as `incl`/`excl` require.
    fn check_ranks(&self, ranks: &[i32], operation: &'static str) -> Result<c_int> {
        let size = self.size()?;
        let mut seen = vec![false; usize::try_from(size).unwrap_or(0)];
        for &rank in ranks {
            let index = usize::try_from(rank).ok().filter(|&i| i < seen.len());
            let Some(index) = index else {
                return Err(ErrorKind::InvalidRank {
                    operation,
                    role: "group",
                    rank,
                    size,
                }
                .into());
            };
            if std::mem::replace(&mut seen[index], true) {
                return Err(ErrorKind::InvalidArgument {
                    operation,
                    reason: format!("rank {rank} appears more than once"),
                }
                .into());
            }
        }
        count_of::<i32>(ranks.len(), operation)
    }

    fn derive(
        &self,
        operation: &'static str,
        call: impl FnOnce(&mut ffi::MPI_Group) -> c_int,
    ) -> Result<Group<'env>> {
        let _gate = enter(operation)?;
        let mut raw = ffi::MPI_GROUP_NULL;
        check(call(&mut raw), operation)?;
        // SAFETY: MPI just created the group for us.
        Ok(unsafe { Group::adopt(raw) })
    }

    /// The processes at `ranks` of this group, in that order (`MPI_Group_incl`, MPI-4.0 §7.3.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let first = world.group()?.incl(&[0])?;
    /// assert_eq!(first.size()?, 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for a rank outside the group, [`ErrorKind::InvalidArgument`] for
    /// a repeated rank; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn incl(&self, ranks: &[i32]) -> Result<Group<'env>> {
        const OP: &str = "group_incl";
        let n = self.check_ranks(ranks, OP)?;
        // SAFETY: `ranks` holds `n` distinct valid ranks; MPI writes the new handle.
        self.derive(OP, |out| unsafe {
            ffi::MPI_Group_incl(self.raw, n, ranks.as_ptr(), out)
        })
    }

    /// This group without the processes at `ranks` (`MPI_Group_excl`, MPI-4.0 §7.3.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let others = world.group()?.excl(&[0])?; // everyone but rank 0
    /// assert_eq!(others.size()?, world.size() - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Group::incl`].
    pub fn excl(&self, ranks: &[i32]) -> Result<Group<'env>> {
        const OP: &str = "group_excl";
        let n = self.check_ranks(ranks, OP)?;
        // SAFETY: `ranks` holds `n` distinct valid ranks; MPI writes the new handle.
        self.derive(OP, |out| unsafe {
            ffi::MPI_Group_excl(self.raw, n, ranks.as_ptr(), out)
        })
    }

    /// The processes at the ranks of `ranges`, in order (`MPI_Group_range_incl`, MPI-4.0
    /// §7.3.2). Each range `(first, last, stride)` names `first, first + stride, …` up to `last`
    /// (inclusive); the stride may be negative, not zero. `[(0, n - 1, 2)]` is the even ranks.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size();
    /// let evens = world.group()?.range_incl(&[(0, n - 1, 2)])?; // first, last, stride
    /// assert_eq!(evens.size()?, (n + 1) / 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a zero stride, a range that runs away from its `last`, or
    /// a rank named twice; [`ErrorKind::InvalidRank`] for a rank outside the group;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn range_incl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group<'env>> {
        const OP: &str = "group_range_incl";
        let (n, mut triplets) = self.check_ranges(ranges, OP)?;
        // SAFETY: `triplets` holds `n` ranges naming distinct valid ranks; MPI writes the handle.
        self.derive(OP, |out| unsafe {
            ffi::MPI_Group_range_incl(self.raw, n, triplets.as_mut_ptr(), out)
        })
    }

    /// This group without the processes at the ranks of `ranges` (`MPI_Group_range_excl`,
    /// MPI-4.0 §7.3.2); ranges as in [`Group::range_incl`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let n = world.size();
    /// let odds = world.group()?.range_excl(&[(0, n - 1, 2)])?;
    /// assert_eq!(odds.size()?, n / 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Group::range_incl`].
    pub fn range_excl(&self, ranges: &[(i32, i32, i32)]) -> Result<Group<'env>> {
        const OP: &str = "group_range_excl";
        let (n, mut triplets) = self.check_ranges(ranges, OP)?;
        // SAFETY: `triplets` holds `n` ranges naming distinct valid ranks; MPI writes the handle.
        self.derive(OP, |out| unsafe {
            ffi::MPI_Group_range_excl(self.raw, n, triplets.as_mut_ptr(), out)
        })
    }

    /// Checks what MPI leaves erroneous in rank ranges (every rank valid and named once, no zero
    /// stride) and returns them as MPI takes them.
    fn check_ranges(
        &self,
        ranges: &[(i32, i32, i32)],
        operation: &'static str,
    ) -> Result<(c_int, Vec<[c_int; 3]>)> {
        let size = self.size()?;
        let mut ranks = Vec::new();
        for &(first, last, stride) in ranges {
            let steps = match stride {
                0 => None,
                _ if (i64::from(last) - i64::from(first)).signum() * i64::from(stride.signum())
                    < 0 =>
                {
                    None
                }
                _ => Some((i64::from(last) - i64::from(first)) / i64::from(stride)),
            };
            let Some(steps) = steps else {
                return Err(ErrorKind::InvalidArgument {
                    operation,
                    reason: format!("range ({first}, {last}, {stride}) names no rank"),
                }
                .into());
            };
            // More ranks than the group has would repeat one: stop expanding there.
            for k in 0..=steps.min(i64::from(size)) {
                let rank = i64::from(first) + k * i64::from(stride);
                ranks.push(i32::try_from(rank).unwrap_or(i32::MAX));
            }
        }
        self.check_ranks(&ranks, operation)?;
        // One count per triplet (as many as ranks already checked, so it fits).
        let n = count_of::<i32>(ranges.len(), operation)?;
        Ok((n, ranges.iter().map(|&(f, l, s)| [f, l, s]).collect()))
    }

    /// All processes of `self`, then those of `other` not in `self` (`MPI_Group_union`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let all = world.group()?;
    /// let first = all.incl(&[0])?;
    /// assert_eq!(first.union(&all)?.size()?, world.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn union(&self, other: &Group<'_>) -> Result<Group<'env>> {
        // SAFETY: two valid groups; MPI writes the new handle.
        self.derive("group_union", |out| unsafe {
            ffi::MPI_Group_union(self.raw, other.raw, out)
        })
    }

    /// The processes of `self` that are also in `other` (`MPI_Group_intersection`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let all = world.group()?;
    /// let first = all.incl(&[0])?;
    /// assert_eq!(all.intersection(&first)?.size()?, 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn intersection(&self, other: &Group<'_>) -> Result<Group<'env>> {
        // SAFETY: two valid groups; MPI writes the new handle.
        self.derive("group_intersection", |out| unsafe {
            ffi::MPI_Group_intersection(self.raw, other.raw, out)
        })
    }

    /// The processes of `self` that are not in `other` (`MPI_Group_difference`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let all = world.group()?;
    /// let first = all.incl(&[0])?;
    /// assert_eq!(all.difference(&first)?.size()?, world.size() - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn difference(&self, other: &Group<'_>) -> Result<Group<'env>> {
        // SAFETY: two valid groups; MPI writes the new handle.
        self.derive("group_difference", |out| unsafe {
            ffi::MPI_Group_difference(self.raw, other.raw, out)
        })
    }

    /// The ranks in `other` of the processes at `ranks` in `self`; `None` where a process is not
    /// in `other` (`MPI_Group_translate_ranks`, MPI-4.0 §7.3.1). [`ProcNull::RANK`]
    /// (`MPI_PROC_NULL`) translates to itself, as MPI defines.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let all = world.group()?;
    /// let last = all.incl(&[world.size() - 1])?;
    /// // Rank 0 of `last` is world rank size - 1; world rank 0 is in `last` only on one rank.
    /// assert_eq!(last.translate_ranks(&[0], &all)?, [Some(world.size() - 1)]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`] for a rank outside `self`; [`ErrorKind::WrongThread`];
    /// [`ErrorKind::Mpi`].
    pub fn translate_ranks(&self, ranks: &[i32], other: &Group<'_>) -> Result<Vec<Option<i32>>> {
        const OP: &str = "group_translate_ranks";
        let size = self.size()?;
        if let Some(&rank) = ranks
            .iter()
            .find(|&&r| !(0..size).contains(&r) && r != ProcNull::RANK)
        {
            return Err(ErrorKind::InvalidRank {
                operation: OP,
                role: "group",
                rank,
                size,
            }
            .into());
        }
        let n = count_of::<i32>(ranks.len(), OP)?;
        let mut out = vec![0; ranks.len()];
        let _gate = enter(OP)?;
        // SAFETY: `ranks` and `out` hold `n` ints each; all ranks are valid in `self`.
        let rc = unsafe {
            ffi::MPI_Group_translate_ranks(self.raw, n, ranks.as_ptr(), other.raw, out.as_mut_ptr())
        };
        check(rc, OP)?;
        Ok(out
            .into_iter()
            .map(|r| (r != ffi::MPI_UNDEFINED).then_some(r))
            .collect())
    }

    /// `MPI_Group_compare` (MPI-4.0 §7.3.1): [`Comparison::Identical`] for the same members in the
    /// same order, [`Comparison::Similar`] for the same members, else [`Comparison::Unequal`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Comparison;
    /// let all = world.group()?;
    /// assert_eq!(all.compare(&world.group()?)?, Comparison::Identical);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn compare(&self, other: &Group<'_>) -> Result<Comparison> {
        const OP: &str = "group_compare";
        // SAFETY: two valid groups; writes one int.
        let raw = self.query(OP, |v| unsafe {
            ffi::MPI_Group_compare(self.raw, other.raw, v)
        })?;
        Comparison::from_raw(raw, OP)
    }

    /// Frees the group now, reporting errors (`MPI_Group_free`, MPI-4.0 §7.3.3).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let group = world.group()?;
    /// group.free()?; // or let it drop
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (the handle is then leaked); [`ErrorKind::Mpi`].
    pub fn free(self) -> Result<()> {
        let mut this = ManuallyDrop::new(self);
        this.free_raw()
    }

    fn free_raw(&mut self) -> Result<()> {
        if self.raw == ffi::MPI_GROUP_NULL || self.raw == ffi::MPI_GROUP_EMPTY {
            return Ok(());
        }
        let _gate = enter("group_free")?;
        // SAFETY: we own the handle; MPI sets it to MPI_GROUP_NULL so it is never freed twice.
        check(unsafe { ffi::MPI_Group_free(&mut self.raw) }, "group_free")?;
        crate::live::freed(crate::live::Kind::Group);
        Ok(())
    }
}

impl Drop for Group<'_> {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; `free` reports them.
        let _ = self.free_raw();
    }
}

/// Communicators made from groups (MPI-4.0 §7.3.2, §7.4.2).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let group = world.group()?;
/// let first = group.incl(&[0])?; // a group of rank 0 alone
/// let solo = world.create(&first)?; // collective: `Some` on rank 0 only
/// assert_eq!(solo.is_some(), world.rank() == 0);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// The group of the communicator (`MPI_Comm_group`, MPI-4.0 §7.3.2).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let group = world.group()?; // MPI_Comm_group
    /// assert_eq!(group.size()?, world.size());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn group(&self) -> Result<Group<'env>> {
        const OP: &str = "group";
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_GROUP_NULL;
        // SAFETY: valid communicator; MPI writes a new group handle that we then own.
        check(unsafe { ffi::MPI_Comm_group(self.raw, &mut raw) }, OP)?;
        // SAFETY: MPI just created the group for us.
        Ok(unsafe { Group::adopt(raw) })
    }

    /// `MPI_Comm_create` (MPI-4.0 §7.4.2): a communicator of the processes in `group`, a subgroup
    /// of this communicator's. Collective over all of this communicator; members get `Some`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let first = world.group()?.incl(&[0])?;
    /// let leader = world.create(&first)?; // collective over `world`
    /// assert_eq!(leader.is_some(), world.rank() == 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`] (for instance if `group` is not a subgroup).
    pub fn create(&self, group: &Group<'_>) -> Result<Option<Communicator<'env>>> {
        const OP: &str = "create";
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_COMM_NULL;
        // SAFETY: valid communicator and group; MPI writes the new handle.
        let rc = unsafe { ffi::MPI_Comm_create(self.raw, group.as_raw(), &mut raw) };
        check(rc, OP)?;
        // SAFETY: MPI just made `raw` (or `MPI_COMM_NULL`) for us, under the gate we hold.
        unsafe { Communicator::adopt(raw, OP) }
    }

    /// `MPI_Comm_create_group` (MPI-4.0 §7.4.2): a communicator of the processes in `group`,
    /// collective over the group's members only — the others do not take part. `tag`
    /// distinguishes concurrent creations.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.group()?.incl(&[world.rank()])?;
    /// // Collective over the group only: here each rank makes a communicator of itself.
    /// let alone = world.create_from_group(&me, 0)?;
    /// assert_eq!(alone.size(), 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::NotInGroup`] if this process is not in `group` (calling would be erroneous);
    /// [`ErrorKind::InvalidTag`]; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn create_from_group(&self, group: &Group<'_>, tag: i32) -> Result<Communicator<'env>> {
        const OP: &str = "create_from_group";
        super::p2p::check_tag(tag, OP)?;
        if group.rank()?.is_none() {
            return Err(ErrorKind::NotInGroup { operation: OP }.into());
        }
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_COMM_NULL;
        // SAFETY: valid communicator and group containing this process; MPI writes the handle.
        let rc = unsafe { ffi::MPI_Comm_create_group(self.raw, group.as_raw(), tag, &mut raw) };
        check(rc, OP)?;
        // SAFETY: MPI just made `raw` for us, under the gate we hold.
        unsafe { Communicator::adopt(raw, OP) }?.ok_or_else(|| super::unexpected_null(OP))
    }
}
