//! The nonblocking in-place collectives (`MPI_IN_PLACE` with `MPI_Ireduce`, `MPI_Iscan`,
//! `MPI_Igather`, `MPI_Igatherv`, `MPI_Ialltoallw`, …, MPI-4.0 §6.12), and the one body each
//! shares with its blocking form (`reduce_in_place`, `gather_in_place`, …, in
//! [`collective`](super)). Only the blocking v-forms have a large-count path; the
//! nonblocking ones return [`ErrorKind::CountOverflow`] for a block or
//! offset over `i32::MAX`.
//!
//! A body takes an `Issue`: blocking, or started in a [`scope`](crate::scope). Both forms
//! check the same arguments on the calling rank; the nonblocking one also runs checked mode's
//! agreement (see [`agreement`](crate::comm::agreement)) and returns the [`Request`].

use super::{Issue, Issued, move_signature, reduction, started};
use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::{MoveFn, ReduceFn, Req};
use crate::comm::large::{VMove, large_count};
use crate::comm::partition::{Partition, TypedPartition};
use crate::datatype::{Equivalence, recv_ptr, repair, send_ptr};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::ffi;
use crate::op::Op;
use crate::request::{Repair, Request, Scope};
use std::ffi::c_int;

/// Collectives: the nonblocking in-place forms, `ireduce_in_place`, `igatherv_in_place`, …
/// (MPI-4.0 §6.12).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::op::Max;
/// let world = mpi.world();
/// let mut best = [world.rank()];
/// ferrompi::scope(|s| {
///     let request = world.iallreduce_in_place(s, &mut best, Max)?;
///     // … work that does not touch `best` …
///     request.wait()?;
///     Ok::<_, ferrompi::Error>(())
/// })?;
/// assert_eq!(best[0], world.size() - 1);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Issues `call` (its `Some` request variant when nonblocking) writing `out`; a nonblocking
    /// issue first runs checked mode's agreement on `signature`.
    #[inline(always)]
    fn issue<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        operation: &'static str,
        out: &'s mut [T],
        signature: impl FnOnce() -> Result<Signature>,
        call: impl FnOnce(Req<'_>) -> c_int,
    ) -> Issued<'s> {
        match how {
            Issue::Blocking => self.blocking(operation, out, call).map(|()| None),
            Issue::In(scope) => {
                self.agree(operation, signature)?;
                let repair = Repair::for_slice(out);
                self.nonblocking(scope, operation, repair, call).map(Some)
            }
        }
    }

    /// A data-movement collective with separate buffers, issued as `how` says.
    #[inline(always)]
    fn move_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        f: MoveFn,
        send: &'s [T],
        recv: &'s mut [T],
        root: i32,
    ) -> Issued<'s> {
        match how {
            Issue::Blocking => self.move_blocking(f, send, recv, root).map(|()| None),
            Issue::In(scope) => self.move_nonblocking(scope, f, send, recv, root).map(Some),
        }
    }

    /// `allreduce`, `scan`, `exscan` and `reduce_scatter_block` in place.
    #[inline(always)]
    pub(in crate::comm) fn reduce_like_in_place_on<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        how: Issue<'s, '_>,
        f: ReduceFn,
        buf: &'s mut [T],
        op: O,
    ) -> Issued<'s> {
        let operation = f.name(how.nonblocking());
        if f == ReduceFn::ScatterBlock {
            self.share(buf.len(), operation)?;
        }
        let result_len = buf.len() / f.input_factor(self.size_usize());
        let (count, operand) = reduction(result_len, op.operand(), operation)?;
        let d = recv_ptr(buf);
        let signature = || {
            Ok(Signature::Same {
                root: -1,
                key: count,
            })
        };
        // SAFETY: `buf` holds the input and room for the result, borrowed for the call (or for
        // 's; the scope completes the operation first).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                self.raw_allreduce(f, ffi::MPI_IN_PLACE.cast_const(), d, count, operand, r)
            },
        )
    }

    /// `reduce` in place: at the root `buf` is input and result, elsewhere only input.
    #[inline(always)]
    pub(in crate::comm) fn reduce_in_place_on<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        op: O,
        root: i32,
    ) -> Issued<'s> {
        let operation = if how.nonblocking() {
            "ireduce"
        } else {
            "reduce"
        };
        let at_root = self.is_root(root, operation)?;
        let (count, operand) = reduction(buf.len(), op.operand(), operation)?;
        let mpich = crate::env::running(crate::Implementation::Mpich);
        if at_root && root != 0 && mpich && !how.nonblocking() {
            // MPICH 4.0-4.1's blocking reduce reads from the MPI_IN_PLACE sentinel itself when
            // the root is not 0 and crashes (pmodels/mpich#6540); reduce from a copy instead, as
            // a C program must. Its nonblocking reduce takes another path.
            let input = buf.to_vec();
            return self.reduce(&input, buf, op, root).map(|()| None);
        }
        let ptr = recv_ptr(buf);
        let (s, d) = if at_root {
            (ffi::MPI_IN_PLACE.cast_const(), ptr)
        } else {
            (ptr.cast_const(), std::ptr::null_mut())
        };
        let signature = || Ok(Signature::Same { root, key: count });
        // SAFETY: `buf` holds `count` elements, exclusively borrowed for the call (or for 's;
        // the scope completes the operation first).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe { self.raw_reduce(s, d, count, operand, root, r) },
        )
    }

    /// `allgather` and `alltoall` in place: `buf` holds one block per rank.
    #[inline(always)]
    pub(in crate::comm) fn move_all_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        f: MoveFn,
        buf: &'s mut [T],
    ) -> Issued<'s> {
        let operation = f.name(how.nonblocking());
        let dn = large_count::<T>(self.share(buf.len(), operation)?, operation)?;
        let (d, dt) = (recv_ptr(buf), T::datatype().as_raw());
        let signature = || Ok(move_signature(f, dn, dn, -1));
        // SAFETY: `buf` holds `size` blocks of `dn` elements, borrowed for the call (or for 's).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe { self.raw_move(f, ffi::MPI_IN_PLACE.cast_const(), 0, d, dn, dt, 0, r) },
        )
    }

    /// `gather` in place: at the root `buf` is the whole result, elsewhere what is sent.
    #[inline(always)]
    pub(in crate::comm) fn gather_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Issued<'s> {
        let f = MoveFn::Gather;
        let operation = f.name(how.nonblocking());
        if !self.is_root(root, operation)? {
            return self.move_on(how, f, buf, &mut [], root);
        }
        let dn = large_count::<T>(self.share(buf.len(), operation)?, operation)?;
        let (d, dt) = (recv_ptr(buf), T::datatype().as_raw());
        let signature = || Ok(move_signature(f, dn, 0, root));
        // SAFETY: `buf` holds `size` blocks of `dn` elements, borrowed for the call (or for 's).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe { self.raw_move(f, ffi::MPI_IN_PLACE.cast_const(), 0, d, dn, dt, root, r) },
        )
    }

    /// `scatter` in place: at the root `buf` is the whole input, elsewhere it receives.
    #[inline(always)]
    pub(in crate::comm) fn scatter_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Issued<'s> {
        let f = MoveFn::Scatter;
        let operation = f.name(how.nonblocking());
        if !self.is_root(root, operation)? {
            return self.move_on(how, f, &[], buf, root);
        }
        let sn = large_count::<T>(self.share(buf.len(), operation)?, operation)?;
        let (s, dt) = (send_ptr(buf), T::datatype().as_raw());
        let signature = || Ok(move_signature(f, 0, sn, root));
        // SAFETY: `buf` holds `size` blocks of `sn` elements, borrowed for the call (or for 's);
        // MPI only reads it.
        self.issue::<T>(
            how,
            operation,
            &mut [],
            signature,
            #[inline(always)]
            |r| unsafe { self.raw_move(f, s, sn, ffi::MPI_IN_PLACE, 0, dt, root, r) },
        )
    }

    /// `allgatherv` in place: this rank's block of `buf` is filled.
    #[inline(always)]
    pub(in crate::comm) fn allgatherv_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
    ) -> Issued<'s> {
        let operation = how.name("allgatherv", "iallgatherv");
        blocks.check(self.size, buf.len(), operation)?;
        if blocks.is_large() && !how.nonblocking() {
            let own = blocks.block(self.rank_usize());
            let (f, s) = (VMove::Allgatherv, send_ptr(buf));
            let recv = |i| blocks.block(i);
            // SAFETY: the blocks were checked against `buf` above; MPI reads this rank's
            // block in place.
            return unsafe { self.vmove_big(f, true, s, |_| own, buf, recv, operation) }
                .map(|()| None);
        }
        let (counts, displs) = blocks.int_arrays(operation)?;
        let (d, dt, ip) = (
            recv_ptr(buf),
            T::datatype().as_raw(),
            ffi::MPI_IN_PLACE.cast_const(),
        );
        let signature = || Ok(blocks.signature(-1));
        // SAFETY: the partition fits `buf`, borrowed for the call (or for 's; the scope
        // completes the operation first); the partition's arrays are borrowed as long.
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                match r {
                    None => ffi::MPI_Allgatherv(ip, 0, dt, d, counts, displs, dt, self.raw),
                    Some(r) => ffi::MPI_Iallgatherv(ip, 0, dt, d, counts, displs, dt, self.raw, r),
                }
            },
        )
    }

    /// `gatherv` in place: at the root `buf` is the whole result (laid out by `blocks`) with
    /// its own block in place; elsewhere it is this rank's block.
    #[inline(always)]
    pub(in crate::comm) fn gatherv_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Issued<'s> {
        let operation = how.name("gatherv", "igatherv");
        if !self.is_root(root, operation)? {
            return match how {
                Issue::Blocking => self.gatherv(buf, &mut [], blocks, root).map(|()| None),
                Issue::In(scope) => self.igatherv(scope, buf, &mut [], blocks, root).map(Some),
            };
        }
        blocks.check(self.size, buf.len(), operation)?;
        if blocks.is_large() && !how.nonblocking() {
            let (f, s) = (VMove::Gatherv { root }, send_ptr(buf));
            let (own, recv) = (blocks.block(self.rank_usize()), |i| blocks.block(i));
            // SAFETY: the blocks were checked against `buf` above; MPI reads this rank's
            // block in place.
            return unsafe { self.vmove_big(f, true, s, |_| own, buf, recv, operation) }
                .map(|()| None);
        }
        let (counts, displs) = blocks.int_arrays(operation)?;
        let (d, dt, ip) = (
            recv_ptr(buf),
            T::datatype().as_raw(),
            ffi::MPI_IN_PLACE.cast_const(),
        );
        let signature = || Ok(blocks.signature(root));
        // SAFETY: the partition fits `buf`, borrowed for the call (or for 's).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                match r {
                    None => ffi::MPI_Gatherv(ip, 0, dt, d, counts, displs, dt, root, self.raw),
                    Some(r) => {
                        ffi::MPI_Igatherv(ip, 0, dt, d, counts, displs, dt, root, self.raw, r)
                    }
                }
            },
        )
    }

    /// `scatterv` in place: at the root `buf` is the whole input and its own block stays;
    /// elsewhere `buf` receives this rank's block.
    #[inline(always)]
    pub(in crate::comm) fn scatterv_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Issued<'s> {
        let operation = how.name("scatterv", "iscatterv");
        if !self.is_root(root, operation)? {
            return match how {
                Issue::Blocking => self.scatterv(&[], buf, blocks, root).map(|()| None),
                Issue::In(scope) => self.iscatterv(scope, &[], buf, blocks, root).map(Some),
            };
        }
        blocks.check(self.size, buf.len(), operation)?;
        if blocks.is_large() && !how.nonblocking() {
            let (f, s) = (VMove::Scatterv { root }, send_ptr(buf));
            let (own, send) = (blocks.block(self.rank_usize()), |j| blocks.block(j));
            // SAFETY: the blocks were checked against `buf` above; MPI reads this rank's
            // block in place.
            return unsafe { self.vmove_big(f, true, s, send, buf, |_| own, operation) }
                .map(|()| None);
        }
        let (counts, displs) = blocks.int_arrays(operation)?;
        let (s, dt, ip) = (send_ptr(buf), T::datatype().as_raw(), ffi::MPI_IN_PLACE);
        let signature = || Ok(blocks.signature(root));
        // SAFETY: the partition fits `buf`, borrowed for the call (or for 's); MPI only reads it.
        self.issue::<T>(how, operation, &mut [], signature, |r| unsafe {
            match r {
                None => ffi::MPI_Scatterv(s, counts, displs, dt, ip, 0, dt, root, self.raw),
                Some(r) => ffi::MPI_Iscatterv(s, counts, displs, dt, ip, 0, dt, root, self.raw, r),
            }
        })
    }

    /// `alltoallv` in place: `buf`, laid out by `blocks`, holds block `j` for rank `j` and
    /// receives block `i` from rank `i` in its place.
    #[inline(always)]
    pub(in crate::comm) fn alltoallv_in_place_on<'s, T: Equivalence>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
    ) -> Issued<'s> {
        let operation = how.name("alltoallv", "ialltoallv");
        blocks.check(self.size, buf.len(), operation)?;
        if blocks.is_large() && !how.nonblocking() {
            let d = recv_ptr(buf);
            // SAFETY: the partition fits `buf`, borrowed for the call.
            let result = self.enter(operation).and_then(
                #[inline(always)]
                |_gate| unsafe {
                    self.alltoallv_large(ffi::MPI_IN_PLACE.cast_const(), None, d, blocks, None)
                },
            );
            repair(buf);
            return result.map(|()| None);
        }
        let (counts, displs) = blocks.int_arrays(operation)?;
        let (d, dt, ip, null) = (
            recv_ptr(buf),
            T::datatype().as_raw(),
            ffi::MPI_IN_PLACE.cast_const(),
            std::ptr::null(),
        );
        let signature = || {
            let lengths = blocks.lengths_i64();
            Ok(Signature::Pairwise {
                send: lengths.clone(),
                recv: lengths,
            })
        };
        // SAFETY: the partition fits `buf`, borrowed for the call (or for 's); MPI ignores the
        // send arguments.
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                match r {
                    None => ffi::MPI_Alltoallv(ip, null, null, dt, d, counts, displs, dt, self.raw),
                    Some(r) => {
                        ffi::MPI_Ialltoallv(ip, null, null, dt, d, counts, displs, dt, self.raw, r)
                    }
                }
            },
        )
    }

    /// `reduce_scatter` in place: `buf` holds the whole input, laid out by `blocks`; this
    /// rank's block of the result is left at its start.
    #[inline(always)]
    pub(in crate::comm) fn reduce_scatter_in_place_on<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        op: O,
    ) -> Issued<'s> {
        let operation = how.name("reduce_scatter", "ireduce_scatter");
        // A partition of the wrong size (even empty) is reported by `reduce_scatter_args`.
        let own = blocks.get(self.rank_usize()).unwrap_or(0);
        let operand = self.reduce_scatter_args(buf.len(), own, blocks, op.operand(), operation)?;
        let (d, ip) = (recv_ptr(buf), ffi::MPI_IN_PLACE.cast_const());
        if blocks.is_large() && !how.nonblocking() {
            // SAFETY: `buf` holds the packed input (checked), borrowed for the call.
            return self
                .blocking(
                    operation,
                    buf,
                    #[inline(always)]
                    |_| unsafe { self.reduce_scatter_large(ip, d, blocks, operand) },
                )
                .map(|()| None);
        }
        let (counts, _) = blocks.int_arrays(operation)?;
        let (dt, o) = (operand.datatype, operand.op);
        let signature = || Ok(blocks.signature(-1));
        // SAFETY: `buf` holds the packed input (checked), borrowed for the call (or for 's).
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                match r {
                    None => ffi::MPI_Reduce_scatter(ip, d, counts, dt, o, self.raw),
                    Some(r) => ffi::MPI_Ireduce_scatter(ip, d, counts, dt, o, self.raw, r),
                }
            },
        )
    }

    /// `alltoallw` in place: `buf`, laid out by `blocks`, holds what goes to each rank and
    /// receives what comes from it in the same place.
    #[inline(always)]
    pub(in crate::comm) fn alltoallw_in_place_on<'s>(
        &'s self,
        how: Issue<'s, '_>,
        buf: &'s mut [u8],
        blocks: &'s TypedPartition,
    ) -> Issued<'s> {
        let operation = how.name("alltoallw", "ialltoallw");
        blocks.check(self.size, buf.len(), operation)?;
        if blocks.is_large() && !how.nonblocking() {
            let (block, s) = (|r| blocks.block(r), ffi::MPI_IN_PLACE.cast_const());
            let f = VMove::Alltoallw;
            // SAFETY: the blocks were checked against `buf` above, and for overlap; with
            // `MPI_IN_PLACE` each is sent from and received into the same place.
            return unsafe { self.vmove_big(f, false, s, block, buf, block, operation) }
                .map(|()| None);
        }
        let (rc, rd, rt) = blocks.raw(operation)?;
        let (d, ip, null) = (
            recv_ptr(buf),
            ffi::MPI_IN_PLACE.cast_const(),
            std::ptr::null(),
        );
        let no_types = std::ptr::null();
        let signature = || {
            let sizes = blocks.sizes_i64();
            Ok(Signature::Pairwise {
                send: sizes.clone(),
                recv: sizes,
            })
        };
        // SAFETY: the partition fits `buf`, borrowed for the call (or for 's); MPI ignores the
        // send arguments.
        self.issue(
            how,
            operation,
            buf,
            signature,
            #[inline(always)]
            |r| unsafe {
                match r {
                    None => ffi::MPI_Alltoallw(ip, null, null, no_types, d, rc, rd, rt, self.raw),
                    Some(r) => {
                        ffi::MPI_Ialltoallw(ip, null, null, no_types, d, rc, rd, rt, self.raw, r)
                    }
                }
            },
        )
    }

    /// Starts an in-place allgatherv (`MPI_Iallgatherv` with `MPI_IN_PLACE`, §6.12.5), laid
    /// out as [`allgatherv_in_place`](Communicator::allgatherv_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut all = vec![0u32; total];
    /// let at = rank * (rank + 1) / 2;
    /// all[at..at + rank + 1].fill(rank as u32);
    /// ferrompi::scope(|s| world.iallgatherv_in_place(s, &mut all, &blocks)?.wait().map(drop))?;
    /// assert_eq!(all[total - 1], size as u32 - 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gatherv`]; [`ErrorKind::CountOverflow`] for a
    /// block or offset over `i32::MAX` (only the blocking form has a large-count path).
    #[inline]
    pub fn iallgatherv_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        self.allgatherv_in_place_on(Issue::In(scope), buf, blocks)
            .map(started)
    }

    /// Starts an in-place gatherv (`MPI_Igatherv` with `MPI_IN_PLACE` at the root, §6.12.3),
    /// laid out as [`gatherv_in_place`](Communicator::gatherv_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut buf = if rank == 0 { vec![0u32; total] } else { vec![rank as u32; rank + 1] };
    /// ferrompi::scope(|s| world.igatherv_in_place(s, &mut buf, &blocks, 0)?.wait().map(drop))?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::iallgatherv_in_place`].
    #[inline]
    pub fn igatherv_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.gatherv_in_place_on(Issue::In(scope), buf, blocks, root)
            .map(started)
    }

    /// Starts an in-place scatterv (`MPI_Iscatterv` with `MPI_IN_PLACE` at the root,
    /// §6.12.4), laid out as [`scatterv_in_place`](Communicator::scatterv_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let (rank, size) = (world.rank() as usize, world.size() as usize);
    /// // Rank r owns r + 1 values; every rank passes the same partition.
    /// let blocks = Partition::<u32>::from_counts(&(1..=size).collect::<Vec<_>>())?;
    /// let total = size * (size + 1) / 2;
    /// let mut buf = if rank == 0 { vec![9u32; total] } else { vec![0u32; rank + 1] };
    /// ferrompi::scope(|s| world.iscatterv_in_place(s, &mut buf, &blocks, 0)?.wait().map(drop))?;
    /// assert_eq!(buf[0], 9);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::iallgatherv_in_place`].
    #[inline]
    pub fn iscatterv_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        root: i32,
    ) -> Result<Request<'s>> {
        self.scatterv_in_place_on(Issue::In(scope), buf, blocks, root)
            .map(started)
    }

    /// Starts an in-place alltoallv (`MPI_Ialltoallv` with `MPI_IN_PLACE`, §6.12.6), laid out
    /// as [`alltoallv_in_place`](Communicator::alltoallv_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Partition;
    /// let size = world.size() as usize;
    /// let blocks = Partition::<i32>::uniform(size, 1)?;
    /// let mut buf = vec![world.rank(); size];
    /// ferrompi::scope(|s| world.ialltoallv_in_place(s, &mut buf, &blocks)?.wait().map(drop))?;
    /// assert_eq!(buf, (0..size as i32).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallv`]; [`ErrorKind::CountOverflow`]
    /// for a block or offset over `i32::MAX`.
    #[inline]
    pub fn ialltoallv_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
    ) -> Result<Request<'s>> {
        self.alltoallv_in_place_on(Issue::In(scope), buf, blocks)
            .map(started)
    }

    /// Starts an in-place reduce-scatter (`MPI_Ireduce_scatter` with `MPI_IN_PLACE`,
    /// §6.12.10), laid out as [`reduce_scatter_in_place`](Communicator::reduce_scatter_in_place)
    /// says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{Partition, op::Sum};
    /// let size = world.size() as usize;
    /// let blocks = Partition::<u32>::uniform(size, 1)?;
    /// let mut buf = vec![2u32; size];
    /// ferrompi::scope(|s| world.ireduce_scatter_in_place(s, &mut buf, &blocks, Sum)?.wait().map(drop))?;
    /// assert_eq!(buf[0], 2 * size as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter`]; [`ErrorKind::CountOverflow`]
    /// for a block over `i32::MAX`.
    #[inline]
    pub fn ireduce_scatter_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        blocks: &'s Partition<T>,
        op: O,
    ) -> Result<Request<'s>> {
        self.reduce_scatter_in_place_on(Issue::In(scope), buf, blocks, op)
            .map(started)
    }

    /// Starts an in-place alltoallw (`MPI_Ialltoallw` with `MPI_IN_PLACE`, §6.12.6), laid out
    /// as [`alltoallw_in_place`](Communicator::alltoallw_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::{TypedBlock, TypedPartition};
    /// let size = world.size() as usize;
    /// let blocks = TypedPartition::new(&(0..size).map(|r| TypedBlock::of::<u8>(1, r)).collect::<Vec<_>>())?;
    /// let mut buf = vec![world.rank() as u8; size];
    /// ferrompi::scope(|s| world.ialltoallw_in_place(s, &mut buf, &blocks)?.wait().map(drop))?;
    /// assert_eq!(buf[0], 0);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoallw`]; [`ErrorKind::CountOverflow`]
    /// for a block or offset over `i32::MAX`.
    #[inline]
    pub fn ialltoallw_in_place<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [u8],
        blocks: &'s TypedPartition,
    ) -> Result<Request<'s>> {
        self.alltoallw_in_place_on(Issue::In(scope), buf, blocks)
            .map(started)
    }

    /// Starts an in-place reduction (`MPI_Ireduce` with `MPI_IN_PLACE` at the root, MPI-4.0
    /// §6.12.7): at the root `buf` is input and result, elsewhere only input.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut total = [1u64];
    /// ferrompi::scope(|s| world.ireduce_in_place(s, &mut total, Sum, 0)?.wait().map(drop))?;
    /// if world.rank() == 0 {
    ///     assert_eq!(total[0], world.size() as u64);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce`].
    #[inline]
    pub fn ireduce_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        op: O,
        root: i32,
    ) -> Result<Request<'s>> {
        self.reduce_in_place_on(Issue::In(scope), buf, op, root)
            .map(started)
    }

    /// Starts an in-place inclusive prefix reduction (`MPI_Iscan` with `MPI_IN_PLACE`,
    /// §6.12.11).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut upto = [1u32];
    /// ferrompi::scope(|s| world.iscan_in_place(s, &mut upto, Sum)?.wait().map(drop))?;
    /// assert_eq!(upto[0], world.rank() as u32 + 1);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline]
    pub fn iscan_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like_in_place(scope, ReduceFn::Scan, buf, op)
    }

    /// Starts an in-place exclusive prefix reduction (`MPI_Iexscan` with `MPI_IN_PLACE`,
    /// §6.12.12); rank 0's `buf` is left as it was.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut before = [1u32];
    /// ferrompi::scope(|s| world.iexscan_in_place(s, &mut before, Sum)?.wait().map(drop))?;
    /// if world.rank() > 0 {
    ///     assert_eq!(before[0], world.rank() as u32);
    /// }
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allreduce`].
    #[inline]
    pub fn iexscan_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like_in_place(scope, ReduceFn::Exscan, buf, op)
    }

    /// Starts an in-place reduce-scatter with equal blocks (`MPI_Ireduce_scatter_block` with
    /// `MPI_IN_PLACE`, §6.12.9): `buf` holds one block per rank; this rank's result is left in
    /// its first block.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let size = world.size() as usize;
    /// let mut buf = vec![1u32; size];
    /// ferrompi::scope(|s| world.ireduce_scatter_block_in_place(s, &mut buf, Sum)?.wait().map(drop))?;
    /// assert_eq!(buf[0], size as u32);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::reduce_scatter_block_in_place`].
    #[inline]
    pub fn ireduce_scatter_block_in_place<'s, T: Equivalence, O: Op<T> + 's>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        op: O,
    ) -> Result<Request<'s>> {
        self.ireduce_like_in_place(scope, ReduceFn::ScatterBlock, buf, op)
    }

    /// Starts an in-place gather (`MPI_Igather` with `MPI_IN_PLACE` at the root, §6.12.3), laid
    /// out as [`gather_in_place`](Communicator::gather_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let size = world.size() as usize;
    /// let mut buf = if world.rank() == 0 { vec![0i32; size] } else { vec![world.rank()] };
    /// ferrompi::scope(|s| world.igather_in_place(s, &mut buf, 0)?.wait().map(drop))?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gather_in_place`].
    #[inline]
    pub fn igather_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        self.gather_in_place_on(Issue::In(scope), buf, root)
            .map(started)
    }

    /// Starts an in-place scatter (`MPI_Iscatter` with `MPI_IN_PLACE` at the root, §6.12.4),
    /// laid out as [`scatter_in_place`](Communicator::scatter_in_place) says.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let size = world.size() as usize;
    /// let mut buf = if world.rank() == 0 { (0..size as i32).collect() } else { vec![0i32] };
    /// ferrompi::scope(|s| world.iscatter_in_place(s, &mut buf, 0)?.wait().map(drop))?;
    /// assert_eq!(buf[0], world.rank());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::gather_in_place`].
    #[inline]
    pub fn iscatter_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
        root: i32,
    ) -> Result<Request<'s>> {
        self.scatter_in_place_on(Issue::In(scope), buf, root)
            .map(started)
    }

    /// Starts an in-place allgather (`MPI_Iallgather` with `MPI_IN_PLACE`, §6.12.5): `buf`
    /// holds one block per rank, this rank's already filled.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut ranks = vec![0i32; world.size() as usize];
    /// ranks[world.rank() as usize] = world.rank();
    /// ferrompi::scope(|s| world.iallgather_in_place(s, &mut ranks)?.wait().map(drop))?;
    /// assert_eq!(ranks, (0..world.size()).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::allgather_in_place`].
    #[inline]
    pub fn iallgather_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
    ) -> Result<Request<'s>> {
        self.move_all_in_place_on(Issue::In(scope), MoveFn::Allgather, buf)
            .map(started)
    }

    /// Starts an in-place all-to-all (`MPI_Ialltoall` with `MPI_IN_PLACE`, §6.12.6): `buf`
    /// holds block `j` for rank `j` and receives block `i` from rank `i` in its place.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let size = world.size() as usize;
    /// let mut buf = vec![world.rank(); size];
    /// ferrompi::scope(|s| world.ialltoall_in_place(s, &mut buf)?.wait().map(drop))?;
    /// assert_eq!(buf, (0..size as i32).collect::<Vec<_>>());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::alltoall`].
    #[inline]
    pub fn ialltoall_in_place<'s, T: Equivalence>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        buf: &'s mut [T],
    ) -> Result<Request<'s>> {
        self.move_all_in_place_on(Issue::In(scope), MoveFn::Alltoall, buf)
            .map(started)
    }
}
