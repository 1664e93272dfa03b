//! Checked collectives: verifying, before a nonblocking or persistent collective starts, that
//! every rank passes arguments that match.
//!
//! MPI does not promise to detect a collective whose ranks disagree on lengths, roots or
//! partitions (MPI-4.0 §6.1: "the amount of data sent must exactly match the amount of data
//! specified by the receiver"; a mismatch is erroneous, not an error class). Blocking
//! collectives usually fail with `MPI_ERR_TRUNCATE`, but nonblocking ones measured here do
//! worse: Open MPI 4.1's `NBC_Progress` frees message data it does not own (the job crashes),
//! MPICH 4.0 delivers wrong data and then hangs. Each rank checks its own buffers against its
//! own arguments; only the other ranks know theirs.
//!
//! In *checked mode* ([`InitOptions::check_collectives`](crate::InitOptions::check_collectives),
//! [`Mpi::set_collective_checks`](crate::Mpi::set_collective_checks), or the environment variable
//! `FERROMPI_CHECK_COLLECTIVES=1` at initialisation), every nonblocking collective, and every
//! persistent collective when it is set up, first runs one `MPI_Allreduce` (plus one
//! `MPI_Alltoall` for `alltoallv`/`alltoallw`) comparing what must agree:
//!
//! | collective | must agree on every rank |
//! |---|---|
//! | `bcast`, `reduce`, `allreduce`, `scan`, `exscan`, `reduce_scatter_block` | the count (and root) |
//! | `gather`, `allgather`, `alltoall` / `scatter` | the count sent / received per rank (and root) |
//! | `gatherv`, `allgatherv`, `scatterv`, `reduce_scatter` | the partition (a fingerprint of it), and root |
//! | `alltoallv`, `alltoallw` | what rank *i* sends to *j* is what *j* expects from *i*, in bytes |
//!
//! and which collective it is. If anything differs, *every* rank returns
//! [`ErrorKind::CollectiveMismatch`] and nothing was started, so no rank hangs. Checked mode costs
//! one small collective per call (a few microseconds); when it is off, one relaxed atomic load.
//! It is off by default; every rank must make the same choice.

use super::Communicator;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;

/// What a collective's ranks must agree on.
#[derive(Debug, Clone)]
pub(crate) enum Signature {
    /// The same on every rank: the `root` (`-1` for collectives without one) and a `key`: the
    /// count in elements (per rank, for the data-movement collectives), or a partition's
    /// [`fingerprint`].
    Same { root: c_int, key: i64 },
    /// What this rank sends to each rank, and expects from each (in bytes, or in elements of
    /// one datatype).
    Pairwise { send: Vec<i64>, recv: Vec<i64> },
}

impl Signature {
    /// `(root, key)`: what must be equal on every rank.
    fn key(&self) -> (c_int, i64) {
        match *self {
            Signature::Same { root, key } => (root, key),
            Signature::Pairwise { .. } => (-1, 0),
        }
    }
}

/// FNV-1a over the values, as an `i64`: a partition's key.
pub(crate) fn fingerprint(values: impl Iterator<Item = i64>) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for value in values {
        for byte in value.to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    i64::from_le_bytes(hash.to_le_bytes())
}

impl Communicator<'_> {
    /// In checked mode, verifies that every rank calls the same collective (`operation`) with
    /// arguments that match (`signature`); see the module docs. Collective over `self`.
    ///
    /// # Errors
    /// [`ErrorKind::CollectiveMismatch`] on every rank if any rank's arguments differ; as
    /// `MPI_Allreduce` otherwise.
    #[inline(always)]
    pub(crate) fn agree(
        &self,
        operation: &'static str,
        signature: impl FnOnce() -> Result<Signature>,
    ) -> Result<()> {
        if crate::gate::is_checked() {
            self.agree_checked(operation, signature)
        } else {
            Ok(())
        }
    }

    /// [`agree`](Self::agree) in checked mode, out of line with the signature's making.
    #[cold]
    #[inline(never)]
    fn agree_checked(
        &self,
        operation: &'static str,
        signature: impl FnOnce() -> Result<Signature>,
    ) -> Result<()> {
        self.agree_now(operation, signature()?)
    }

    #[cold]
    #[inline(never)]
    fn agree_now(&self, operation: &'static str, signature: Signature) -> Result<()> {
        let pairs_ok = match &signature {
            Signature::Pairwise { send, recv } => self.pairs_match(operation, send, recv)?,
            _ => true,
        };
        let (root, key) = signature.key();
        let id = fingerprint(operation.bytes().map(i64::from));
        // Each value and its bitwise complement under MPI_MAX: the maximum and (the complement
        // of) the minimum of each in one call, equal exactly when every rank passed the same.
        let values = [id, i64::from(root), key, i64::from(!pairs_ok)];
        let mut both = [0i64; 8];
        for (i, v) in values.iter().enumerate() {
            both[2 * i] = *v;
            both[2 * i + 1] = !*v;
        }
        let mut out = [0i64; 8];
        {
            let _gate = self.enter(operation)?;
            // SAFETY: two arrays of 8 `int64_t`s, a predefined type and op, a valid communicator.
            let rc = unsafe {
                ffi::MPI_Allreduce(
                    both.as_ptr().cast(),
                    out.as_mut_ptr().cast(),
                    8,
                    ffi::MPI_INT64_T,
                    ffi::MPI_MAX,
                    self.raw,
                )
            };
            check(rc, operation)?;
        }
        let differs = |i: usize| out[2 * i] != !out[2 * i + 1];
        let what = if differs(0) {
            "ranks called different collectives"
        } else if differs(1) {
            "ranks passed different roots"
        } else if differs(2) {
            "ranks passed different counts or partitions"
        } else if out[6] != 0 {
            "what some rank sends does not match what its peer expects"
        } else {
            return Ok(());
        };
        Err(ErrorKind::CollectiveMismatch {
            operation,
            reason: what.into(),
        }
        .into())
    }

    /// Whether what each rank sends this rank (learned by one `MPI_Alltoall`) is what this rank
    /// expects from it; also `false` when the arrays are not one entry per rank.
    fn pairs_match(&self, operation: &'static str, send: &[i64], recv: &[i64]) -> Result<bool> {
        let size = self.size_usize();
        let mut sent_to_me = vec![0i64; size];
        let mut mine = vec![-1i64; size];
        let ok_shape = send.len() == size && recv.len() == size;
        if ok_shape {
            mine.copy_from_slice(send);
        }
        let _gate = self.enter(operation)?;
        // SAFETY: two arrays of `size` `int64_t`s, one to and from each rank; a valid
        // communicator of `size` ranks.
        let rc = unsafe {
            ffi::MPI_Alltoall(
                mine.as_ptr().cast(),
                1,
                ffi::MPI_INT64_T,
                sent_to_me.as_mut_ptr().cast(),
                1,
                ffi::MPI_INT64_T,
                self.raw,
            )
        };
        check(rc, operation)?;
        Ok(ok_shape && sent_to_me == recv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_tell_partitions_apart() {
        let key = |v: &[i64]| fingerprint(v.iter().copied());
        assert_eq!(key(&[1, 2, 0, 1]), key(&[1, 2, 0, 1]));
        assert_ne!(key(&[1, 2, 0, 1]), key(&[2, 1, 0, 2]));
        assert_ne!(key(&[1, 2, 0, 1]), key(&[1, 2, 0, 2]));
        assert_ne!(key(&[]), key(&[0]));
    }
}
