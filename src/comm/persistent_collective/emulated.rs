//! The emulated path ([`Emulated`]: each start issues the nonblocking collective on a private
//! duplicate communicator), when it is taken, and the derived datatypes a request keeps for
//! counts over `int`.

use super::call::Call;
use crate::comm::Communicator;
use crate::comm::call::MoveFn;
use crate::comm::large::{Spanning, spanned};
use crate::env::enter;
use crate::error::Result;
use crate::ffi;
use crate::op::Operand;
use crate::request::persistent::{Keep, Restart};
use std::ffi::c_int;

/// An emulated persistent collective: the call each start makes, on a communicator of its own.
///
/// MPI-4.0 §6.13 requires only the `*_init` calls to be made in the same order on every rank;
/// starts may come in any order. Nonblocking collectives on one communicator match in the
/// order they are issued, so each emulated request gets a private duplicate, made at init
/// (when all ranks are in step) and freed with it: its starts can only match each other.
/// MPI lets a communicator be freed while operations on it are pending (§7.4.3).
#[derive(Debug)]
pub(super) struct Emulated<'comm> {
    pub(super) call: Call,
    pub(super) comm: Communicator<'comm>,
}

// SAFETY: the pointers point into buffers and arrays the request owns, and are used only by
// `start`, through `&mut PersistentRequest` under the thread gate; the communicator is `Send`.
unsafe impl Send for Emulated<'_> {}
// SAFETY: as for `Send`; `&Emulated` is never used to start.
unsafe impl Sync for Emulated<'_> {}

impl Restart for Emulated<'_> {
    /// # Safety
    /// As [`Call::start`]; `r` is null (no operation in flight).
    unsafe fn start(&self, r: &mut ffi::MPI_Request) -> c_int {
        // SAFETY: per the contract.
        unsafe { self.call.start(self.comm.raw, r) }
    }
}

/// Whether this MPI's own persistent form of `f` gives wrong results, so ferrompi emulates it:
/// MPICH before 4.3 gathers stale or no data with `MPI_Gather_init`, and fails or corrupts data
/// on the second start of `MPI_Scatter_init` and `MPI_Allgather_init` (pmodels/mpich#7078,
/// #6423; reproduced in C with MPICH 4.0.2). Decided once, from `MPI_Get_library_version`.
pub(super) fn natively_broken(f: MoveFn) -> bool {
    f != MoveFn::Alltoall && crate::env::mpich_before((4, 3))
}

/// Derived datatypes a persistent request uses for counts over `int` (see `comm::large`),
/// kept with it and freed after it, under the thread gate (if it cannot be passed, leaked).
#[derive(Default)]
pub(super) struct KeptTypes(pub(super) Vec<ffi::MPI_Datatype>);

// SAFETY: datatype handles, freed once under the thread gate, from whichever thread drops.
unsafe impl Send for KeptTypes {}
// SAFETY: as for `Send`; shared access only reads handles.
unsafe impl Sync for KeptTypes {}

impl Drop for KeptTypes {
    fn drop(&mut self) {
        let Ok(_gate) = enter("type_free") else {
            return;
        };
        for t in &mut self.0 {
            // SAFETY: committed types made for this request, freed once, here; the request is
            // freed, or leaked (and with it `keep`, and this).
            unsafe { ffi::MPI_Type_free(t) };
        }
    }
}

impl KeptTypes {
    /// `(count, datatype)` for `n` elements of `dt`: as they are when `n` fits an `int`, else
    /// one element of a spanning type kept here.
    pub(super) fn fit(
        &mut self,
        dt: ffi::MPI_Datatype,
        n: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<(c_int, ffi::MPI_Datatype)> {
        if let Ok(n) = c_int::try_from(n) {
            return Ok((n, dt));
        }
        let _gate = enter(operation)?;
        // SAFETY: the gate is held.
        let raw = unsafe { Spanning::new(dt, n, operation)? }.into_raw();
        self.0.push(raw);
        Ok((1, raw))
    }

    /// The operand reducing `n` elements with `o` in one call: `o` when `n` fits an `int`, else
    /// one spanning element and a span op (see `comm::large`).
    pub(super) fn fit_reduction(
        &mut self,
        o: Operand,
        n: ffi::MPI_Count,
        operation: &'static str,
    ) -> Result<(c_int, Operand)> {
        if let Ok(n) = c_int::try_from(n) {
            return Ok((n, o));
        }
        let _gate = enter(operation)?;
        // SAFETY: the gate is held; the span goes into `self` (freed under the gate).
        let (span, operand) = unsafe { spanned(o, n)? };
        self.0.push(span.into_raw());
        Ok((1, operand))
    }

    /// What the request keeps of these: nothing when there are none.
    pub(super) fn keep<'a>(self) -> Keep<'a> {
        (!self.0.is_empty()).then(|| Box::new(self) as Box<dyn Send + Sync + 'a>)
    }
}
