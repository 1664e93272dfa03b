//! The buffer for buffered sends (`MPI_Buffer_attach`, `MPI_Buffer_detach`, MPI-4.0 §3.6).

use crate::env::{Mpi, enter};
use crate::error::{Error, ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

/// Per-message overhead a buffered send adds in the attached buffer (`MPI_BSEND_OVERHEAD`).
pub const BSEND_OVERHEAD: usize = {
    assert!(ffi::MPI_BSEND_OVERHEAD >= 0);
    ffi::MPI_BSEND_OVERHEAD as usize
};

/// MPI allows one attached buffer per process.
static ATTACHED: AtomicBool = AtomicBool::new(false);

/// Whether a buffer is attached through [`Mpi::attach_buffer`]. Checked by `bsend`, because
/// implementations disagree on a buffered send without one: MPICH fails with `MPI_ERR_BUFFER`,
/// Open MPI 4.1 sends anyway.
#[inline]
pub(crate) fn is_attached() -> bool {
    ATTACHED.load(Ordering::Relaxed)
}

/// The error of a buffered send with no buffer attached: Open MPI 4.1 would send anyway (MPICH
/// fails), so ferrompi checks on both.
#[inline]
pub(crate) fn require_attached(operation: &'static str) -> Result<()> {
    if is_attached() {
        Ok(())
    } else {
        Err(not_attached(operation))
    }
}

#[cold]
fn not_attached(operation: &'static str) -> Error {
    ErrorKind::InvalidArgument {
        operation,
        reason: "no buffer is attached; call Mpi::attach_buffer first".into(),
    }
    .into()
}

/// The buffer attached for [`Communicator::bsend`](crate::Communicator::bsend); detached on drop.
///
/// Detaching waits until every buffered message has been sent, so the memory is never freed
/// while MPI still copies out of it; leaking this value leaks the memory instead.
pub struct AttachedBuffer<'env> {
    memory: Option<Vec<u8>>,
    _env: PhantomData<&'env Mpi>,
}

/// Shows the size, never the bytes: MPI packs buffered messages into them at any time.
impl std::fmt::Debug for AttachedBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttachedBuffer")
            .field("size", &self.memory.as_ref().map_or(0, Vec::len))
            .finish()
    }
}

impl Mpi {
    /// Attaches a buffer of `size` bytes for buffered sends (`MPI_Buffer_attach`). Each pending
    /// buffered message takes its packed size plus [`BSEND_OVERHEAD`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let attached = mpi.attach_buffer(1024)?; // MPI_Buffer_attach
    /// world.bsend(&[1u8; 16], world.rank(), 0)?;
    /// world.recv(&mut [0u8; 16], world.rank(), 0)?;
    /// let memory = attached.detach()?; // waits for buffered messages, hands the memory back
    /// assert_eq!(memory.len(), 1024);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if a buffer is already attached; [`ErrorKind::CountOverflow`]
    /// if `size` exceeds a C `int`; [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn attach_buffer(&self, size: usize) -> Result<AttachedBuffer<'_>> {
        const OP: &str = "attach_buffer";
        let bytes = crate::datatype::count_of::<u8>(size, OP)?;
        if ATTACHED.swap(true, Ordering::AcqRel) {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: "a buffer is already attached".into(),
            }
            .into());
        }
        let mut memory = vec![0u8; size.max(1)];
        let rc = match enter(OP) {
            // SAFETY: `memory` is `size` bytes that stay allocated, unmoved, until detached
            // (the Vec's heap block is owned by the returned value, or leaked with it).
            Ok(_gate) => unsafe { ffi::MPI_Buffer_attach(memory.as_mut_ptr().cast(), bytes) },
            Err(e) => {
                ATTACHED.store(false, Ordering::Release);
                return Err(e);
            }
        };
        if let Err(e) = check(rc, OP) {
            ATTACHED.store(false, Ordering::Release);
            return Err(e);
        }
        Ok(AttachedBuffer {
            memory: Some(memory),
            _env: PhantomData,
        })
    }
}

impl AttachedBuffer<'_> {
    /// Detaches the buffer, waiting until all buffered messages are sent, and hands it back.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let attached = mpi.attach_buffer(256)?;
    /// let memory = attached.detach()?; // MPI_Buffer_detach
    /// assert_eq!(memory.len(), 256);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`] (the buffer then stays attached and is leaked);
    /// [`ErrorKind::Mpi`].
    pub fn detach(mut self) -> Result<Vec<u8>> {
        self.detach_raw()?;
        Ok(self.memory.take().unwrap_or_default())
    }

    fn detach_raw(&mut self) -> Result<()> {
        if self.memory.is_none() {
            return Ok(());
        }
        let mut address: *mut c_void = std::ptr::null_mut();
        let mut size = 0;
        let gate = enter("detach_buffer");
        if gate.is_err() {
            // MPI still owns the memory: never free it.
            std::mem::forget(self.memory.take());
        }
        let _gate = gate?;
        // SAFETY: our buffer is attached; MPI blocks until it is no longer used and writes its
        // address and size (through a `void *` that really points to a pointer).
        let rc = unsafe { ffi::MPI_Buffer_detach((&raw mut address).cast(), &mut size) };
        if rc != ffi::MPI_SUCCESS {
            std::mem::forget(self.memory.take());
        }
        check(rc, "detach_buffer")?;
        ATTACHED.store(false, Ordering::Release);
        Ok(())
    }
}

impl Drop for AttachedBuffer<'_> {
    fn drop(&mut self) {
        let _ = self.detach_raw();
    }
}
