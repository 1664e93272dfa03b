//! Collective operations (MPI-4.0 chapter 6), blocking and nonblocking.
//!
//! Every buffer length is checked on the calling rank before MPI is called: receive buffers must
//! hold what the operation delivers (`ErrorKind::BufferSize`), counts must fit MPI's `int`
//! (`ErrorKind::CountOverflow`), roots must be ranks (`ErrorKind::InvalidRank`). What only the
//! other ranks know (that they pass matching lengths and the same root) MPI does *not* promise to
//! check: a mismatch is an erroneous program (MPI-4.0 §6.1). Blocking collectives usually report
//! it as `ErrorKind::Mpi` of class `Truncate`; nonblocking ones crashed Open MPI 4.1 and delivered
//! wrong data then hung MPICH 4.0 here. Turn on checked mode
//! ([`InitOptions::check_collectives`](crate::InitOptions::check_collectives)) to have every
//! nonblocking and persistent collective verify agreement first ([`agreement`](crate::comm::agreement)).
//!
//! In-place forms (`*_in_place`) use `MPI_IN_PLACE`: one buffer is both input and output.
//! Nonblocking forms (`i*`) borrow their buffers for a [`scope`](crate::scope) and return a
//! [`Request`]; see [`request`](crate::request) for why leaking one stays sound. A dropped
//! pending collective request waits for completion (collectives cannot be cancelled).
//!
//! The v-variants take a [`Partition`](crate::Partition): every rank passes the same one, and each checks its own
//! block against its buffer.

//!
//! | module | what |
//! |---|---|
//! | [`barrier_bcast`] | `barrier`, `bcast` |
//! | [`reduce`] | `reduce`, `allreduce`, `scan`, `exscan`, `reduce_scatter_block` |
//! | [`gather_scatter`] | `gather`, `scatter`, `allgather`, `alltoall` |
//! | [`vector`] | `gatherv`, `scatterv`, `allgatherv` |
//! | [`alltoallv`] | `alltoallv`, `alltoallw`, `reduce_scatter` |
//! | [`in_place`] | the nonblocking in-place forms, and the body each shares with its blocking form |
//!
//! This module holds what they share: how a call is issued (blocking or in a scope), the
//! argument checks, and the agreement signatures of checked mode.

pub mod alltoallv;
pub mod barrier_bcast;
pub mod gather_scatter;
pub mod in_place;
pub mod reduce;
pub mod vector;

use crate::comm::Communicator;
use crate::comm::agreement::Signature;
use crate::comm::call::{MoveFn, Req};
use crate::datatype::{Equivalence, repair};
use crate::env::enter_with;
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use crate::op::Operand;
use crate::request::{Kind, RawRequest, Repair, Request, Scope};
use std::ffi::c_int;
/// How a collective is issued: run to completion, or started in a scope.
#[derive(Clone, Copy)]
pub(super) enum Issue<'s, 'env> {
    /// The blocking call.
    Blocking,
    /// The nonblocking call, its request living in the scope.
    In(&'s Scope<'s, 'env>),
}

/// What issuing returns: `None` from a blocking call, the request of a nonblocking one.
pub(super) type Issued<'s> = Result<Option<Request<'s>>>;

/// The request of a nonblocking issue.
pub(super) fn started(request: Option<Request<'_>>) -> Request<'_> {
    request.expect("a nonblocking issue returns its request")
}

impl Issue<'_, '_> {
    fn nonblocking(self) -> bool {
        matches!(self, Issue::In(_))
    }

    /// The operation's name in errors: the blocking or the nonblocking call's.
    fn name(self, blocking: &'static str, nonblocking: &'static str) -> &'static str {
        if self.nonblocking() {
            nonblocking
        } else {
            blocking
        }
    }
}

#[inline(always)]
pub(crate) fn same_len(expected: usize, actual: usize, operation: &'static str) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(ErrorKind::BufferSize {
            operation,
            expected,
            actual,
        }
        .into())
    }
}

/// What the ranks of a data-movement collective must agree on (checked mode): the count per
/// rank each sends (gather, allgather, alltoall) or receives (scatter), and the root.
pub(in crate::comm) fn move_signature(f: MoveFn, sn: i64, dn: i64, root: c_int) -> Signature {
    match f {
        MoveFn::Gather => Signature::Same { root, key: sn },
        MoveFn::Scatter => Signature::Same { root, key: dn },
        MoveFn::Allgather | MoveFn::Alltoall => Signature::Same { root: -1, key: sn },
    }
}

/// The error of a buffer that does not divide among `parts` ranks or neighbours (`among`).
#[cold]
pub(crate) fn uneven(len: usize, parts: usize, among: &str, operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: format!("buffer of {len} values does not divide among {parts} {among}"),
    }
    .into()
}

/// Checks that `actual == len * factor`, exactly: a product that overflows `usize` (possible
/// with zero-sized values, which need no memory) never matches.
#[inline(always)]
pub(crate) fn same_product(
    len: usize,
    factor: usize,
    actual: usize,
    operation: &'static str,
) -> Result<()> {
    match len.checked_mul(factor) {
        Some(expected) => same_len(expected, actual, operation),
        None => Err(ErrorKind::BufferSize {
            operation,
            expected: usize::MAX,
            actual,
        }
        .into()),
    }
}

/// Reduction arguments: the count in the operand's elements. Counts above `i32::MAX` take the
/// large-count path (see `comm::large`).
#[inline(always)]
pub(crate) fn reduction(
    len: usize,
    operand: Operand,
    operation: &'static str,
) -> Result<(ffi::MPI_Count, Operand)> {
    let count = len
        .checked_mul(operand.per_value)
        .and_then(|n| ffi::MPI_Count::try_from(n).ok());
    match count {
        Some(count) => Ok((count, operand)),
        None => Err(crate::datatype::count_overflow(
            len,
            operand.per_value,
            operation,
        )),
    }
}

impl<'env> Communicator<'env> {
    pub(in crate::comm) fn size_usize(&self) -> usize {
        usize::try_from(self.size).unwrap_or(0)
    }

    #[inline(always)]
    pub(in crate::comm) fn is_root(&self, root: i32, operation: &'static str) -> Result<bool> {
        self.check_rank(root, "root", operation)?;
        Ok(self.rank == root)
    }

    /// Length of one rank's share of a buffer divided evenly among the ranks (inlined, its
    /// error out of line: one division on the hot path).
    #[inline(always)]
    pub(in crate::comm) fn share(&self, len: usize, operation: &'static str) -> Result<usize> {
        let size = self.size_usize();
        if len.is_multiple_of(size) {
            Ok(len / size)
        } else {
            Err(uneven(len, size, "ranks", operation))
        }
    }

    /// Runs a blocking collective (the `None` variant of `call`), then repairs `out`.
    #[inline(always)]
    pub(in crate::comm) fn blocking<T: Equivalence>(
        &self,
        operation: &'static str,
        out: &mut [T],
        call: impl FnOnce(Req<'_>) -> c_int,
    ) -> Result<()> {
        let rc = self.gated(
            operation,
            #[inline(always)]
            || call(None),
        )?;
        repair(out);
        check(rc, operation)
    }

    /// Starts a nonblocking collective (the `Some` variant of `call`) in `scope`.
    #[inline(always)]
    pub(in crate::comm) fn nonblocking<'s>(
        &'s self,
        scope: &'s Scope<'s, '_>,
        operation: &'static str,
        repair: Option<Repair>,
        call: impl FnOnce(Req<'_>) -> c_int,
    ) -> Result<Request<'s>> {
        let mut raw = ffi::MPI_REQUEST_NULL;
        {
            // The scope's pass, as the point-to-point starts use it (see `InFlight`).
            let _gate = enter_with(scope.in_flight.pass, operation)?;
            check(call(Some(&mut raw)), operation)?;
        }
        Ok(Request::started(
            RawRequest {
                raw,
                kind: Kind::Collective,
            },
            repair,
            &scope.in_flight,
        ))
    }
}
