//! GPU memory: whether the installed MPI takes device pointers ([`Mpi::gpu_support`], in every
//! build), and, with the feature `cuda`, buffers in CUDA device memory that point-to-point and
//! the main collectives accept through a [`DeviceComm`].
//!
//! A CUDA-aware MPI (Open MPI or MPICH built with CUDA) reads and writes device memory itself;
//! any other MPI gets the data staged through pinned host memory, one copy each way. Which of
//! the two a [`DeviceComm`] does is decided once, when it is made ([`Transfer`]), from what
//! [`Mpi::gpu_support`] found.
//!
//! The CUDA driver (`libcuda.so.1`) is loaded when the program asks for it ([`Cuda::load`]):
//! building needs no CUDA toolkit, and a machine without a driver gets [`ErrorKind::Device`] from
//! `Cuda::load`, not a failed start. [`Cuda::emulated`] keeps "device" memory in host memory,
//! so that the device paths run, and are tested, on machines without a GPU.
//!
//! ```
//! # let mpi = ferrompi::Mpi::init()?;
//! let support = mpi.gpu_support()?;
//! println!("CUDA-aware: {} ({})", support.cuda, support.how);
//! # Ok::<(), ferrompi::Error>(())
//! ```
//!
//! [`ErrorKind::Device`]: crate::ErrorKind::Device

#[cfg(feature = "cuda")]
mod comm;
#[cfg(feature = "cuda")]
mod cuda;

#[cfg(feature = "cuda")]
pub use comm::{DeviceComm, Transfer};
#[cfg(feature = "cuda")]
pub use cuda::{Cuda, DeviceMemory, DeviceMemoryMut, DeviceVec};

use crate::env::{Mpi, enter};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use crate::info::Info;
use std::ffi::{CStr, c_int, c_void};

/// What the installed MPI says about device memory (see [`Mpi::gpu_support`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSupport {
    /// Whether the MPI takes pointers to CUDA device memory in its calls.
    pub cuda: bool,
    /// How that was found, or why it is `false`: the query that answered and its answer, or
    /// that the MPI offers none of them.
    pub how: String,
}

/// MPICH's `MPIX_GPU_SUPPORT_CUDA` (`mpi.h`, MPICH 4.1 and later).
const MPIX_GPU_SUPPORT_CUDA: c_int = 0;

/// The MPI-4.1 info key listing the memory kinds a communicator's buffers may be in.
const MEMORY_KINDS_KEY: &str = "mpi_memory_alloc_kinds";

/// A function of the MPI library looked up by name in the running process, `None` where the
/// library has no such symbol: the MPIX queries are extensions that some MPIs lack, so they
/// cannot be linked by name.
fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `RTLD_DEFAULT` searches the objects loaded in the process; `name` is a
    // NUL-terminated string. dlsym only reads it.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found)
}

impl Mpi {
    /// Whether the installed MPI can take pointers to GPU (CUDA) memory, and how that was found:
    /// MPICH's `MPIX_GPU_query_support` (MPICH 4.1 and later), then `MPIX_Query_cuda_support`
    /// (Open MPI's `mpi-ext.h`, and MPICH), then the MPI-4.1 info key
    /// `mpi_memory_alloc_kinds` of `MPI_COMM_WORLD` (MPI-4.1 §11.4.3), asked for in that order;
    /// the first that exists answers. `cuda` is `false`, with the reason, where the MPI has
    /// none of them. The queries are looked up by name at run time, so one binary answers for
    /// whichever MPI it runs on.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// let support = mpi.gpu_support()?;
    /// assert!(!support.how.is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`]
    /// if a query fails.
    pub fn gpu_support(&self) -> Result<GpuSupport> {
        support()
    }
}

/// [`Mpi::gpu_support`], for callers that hold a communicator (MPI is initialised).
pub(crate) fn support() -> Result<GpuSupport> {
    const OP: &str = "gpu_support";
    if let Some(query) = symbol(c"MPIX_GPU_query_support") {
        // SAFETY: MPICH's prototype, `int MPIX_GPU_query_support(int gpu_type, int
        // *is_supported)`.
        let query: unsafe extern "C" fn(c_int, *mut c_int) -> c_int =
            unsafe { std::mem::transmute(query) };
        let mut supported: c_int = 0;
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: MPI is initialised (the caller holds an `Mpi` or a communicator);
            // writes one int.
            unsafe { query(MPIX_GPU_SUPPORT_CUDA, &mut supported) }
        };
        check(rc, OP)?;
        return Ok(GpuSupport {
            cuda: supported != 0,
            how: format!("MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) gave {supported}"),
        });
    }
    if let Some(query) = symbol(c"MPIX_Query_cuda_support") {
        // SAFETY: the prototype in Open MPI's `mpi-ext.h` (and MPICH's `mpi.h`),
        // `int MPIX_Query_cuda_support(void)`.
        let query: unsafe extern "C" fn() -> c_int = unsafe { std::mem::transmute(query) };
        let supported = {
            let _gate = enter(OP)?;
            // SAFETY: MPI is initialised (as above); the query takes nothing.
            unsafe { query() }
        };
        return Ok(GpuSupport {
            cuda: supported == 1,
            how: format!("MPIX_Query_cuda_support() gave {supported}"),
        });
    }
    let mut raw = ffi::MPI_INFO_NULL;
    let rc = {
        let _gate = enter(OP)?;
        // SAFETY: MPI is initialised; a predefined communicator; writes one handle.
        unsafe { ffi::MPI_Comm_get_info(ffi::MPI_COMM_WORLD, &mut raw) }
    };
    check(rc, OP)?;
    // SAFETY: a new info object MPI_Comm_get_info returned, freed once by its drop.
    let info = unsafe { Info::adopt(raw) };
    Ok(match info.get(MEMORY_KINDS_KEY)? {
        Some(kinds) => GpuSupport {
            cuda: memory_kinds_have_cuda(&kinds),
            how: format!("{MEMORY_KINDS_KEY} of MPI_COMM_WORLD is \"{kinds}\""),
        },
        None => GpuSupport {
            cuda: false,
            how: format!(
                "the MPI has neither MPIX_GPU_query_support nor MPIX_Query_cuda_support, \
                     and MPI_COMM_WORLD has no {MEMORY_KINDS_KEY} key"
            ),
        },
    })
}

/// Whether a `mpi_memory_alloc_kinds` value (comma-separated `kind[:restrictor...]`, MPI-4.1
/// §11.4.3) names CUDA memory that may live on the device.
fn memory_kinds_have_cuda(kinds: &str) -> bool {
    kinds.split(',').any(|entry| {
        let mut parts = entry.trim().split(':');
        parts.next() == Some("cuda") && parts.map(str::trim).all(|restrictor| restrictor != "host")
    })
}

#[cfg(test)]
mod tests {
    use super::memory_kinds_have_cuda;

    #[test]
    fn memory_kinds() {
        assert!(memory_kinds_have_cuda("system,mpi,cuda"));
        assert!(memory_kinds_have_cuda("system, cuda:device"));
        assert!(!memory_kinds_have_cuda("cuda:host"));
        assert!(!memory_kinds_have_cuda("system,mpi"));
        assert!(!memory_kinds_have_cuda(""));
        assert!(!memory_kinds_have_cuda("rocm,cudax"));
    }
}
