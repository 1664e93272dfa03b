//! The CUDA driver, loaded at run time, or its emulation in host memory; device buffers.

use crate::comm::collective::same_len;
use crate::datatype::Equivalence;
use crate::error::{Error, ErrorKind, Result};
use std::alloc::Layout;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::marker::PhantomData;

/// `CUresult`, `CUdevice`, `CUcontext` and `CUdeviceptr` of `cuda.h`.
type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuDevicePtr = u64;

/// The driver functions the crate uses: each field, the ABI name it is loaded from (`cuda.h`
/// maps the plain names to the `_v2` entry points) and its `cuda.h` parameters.
macro_rules! driver_api {
    ($($field:ident = $name:literal ($($arg:ty),*);)*) => {
        struct Api {
            $($field: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Api {
            fn resolve(library: *mut c_void) -> std::result::Result<Api, String> {
                let find = |name: &CStr| -> std::result::Result<*mut c_void, String> {
                    // SAFETY: a handle from dlopen and a NUL-terminated name.
                    let f = unsafe { libc::dlsym(library, name.as_ptr()) };
                    if f.is_null() {
                        Err(format!("the CUDA driver has no {}", name.to_string_lossy()))
                    } else {
                        Ok(f)
                    }
                };
                Ok(Api {
                    $(
                        // SAFETY: the symbol is the driver function of that name, whose
                        // `cuda.h` prototype is the field's type.
                        $field: unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(
                                find($name)?,
                            )
                        },
                    )*
                })
            }
        }
    };
}

driver_api! {
    init = c"cuInit" (c_uint);
    device_get = c"cuDeviceGet" (*mut CuDevice, c_int);
    primary_ctx_retain = c"cuDevicePrimaryCtxRetain" (*mut CuContext, CuDevice);
    primary_ctx_release = c"cuDevicePrimaryCtxRelease_v2" (CuDevice);
    ctx_set_current = c"cuCtxSetCurrent" (CuContext);
    mem_alloc = c"cuMemAlloc_v2" (*mut CuDevicePtr, usize);
    mem_free = c"cuMemFree_v2" (CuDevicePtr);
    memset_d8 = c"cuMemsetD8_v2" (CuDevicePtr, u8, usize);
    memcpy_htod = c"cuMemcpyHtoD_v2" (CuDevicePtr, *const c_void, usize);
    memcpy_dtoh = c"cuMemcpyDtoH_v2" (*mut c_void, CuDevicePtr, usize);
    mem_host_alloc = c"cuMemHostAlloc" (*mut *mut c_void, usize, c_uint);
    mem_free_host = c"cuMemFreeHost" (*mut c_void);
    get_error_string = c"cuGetErrorString" (CuResult, *mut *const c_char);
}

/// A loaded driver with the primary context of one device retained.
struct Driver {
    library: *mut c_void,
    api: Api,
    device: CuDevice,
    context: CuContext,
}

enum Backend {
    Driver(Driver),
    Emulated,
}

/// The CUDA driver of one device, or its emulation: allocates [`DeviceVec`]s and copies between
/// host and device (for [`DeviceComm`](crate::gpu::DeviceComm)'s staging).
///
/// [`Cuda::load`] opens `libcuda.so.1` with `dlopen` and retains the device's primary context
/// (the one the CUDA runtime and the frameworks use); it is released on drop, after every
/// [`DeviceVec`] of it (they borrow it). [`Cuda::emulated`] needs no GPU: its "device" memory
/// is host memory, which an MPI can also read directly.
pub struct Cuda {
    backend: Backend,
}

// SAFETY: the driver API is thread-safe (CUDA Programming Guide, "Driver API"); every call that
// needs a context makes the primary context current on the calling thread first. The library
// handle and the context are only read after `load`.
unsafe impl Send for Cuda {}
// SAFETY: as above; `&Cuda` makes only driver calls, which may run on several threads at once.
unsafe impl Sync for Cuda {}

/// Alignment of emulated device memory and of staging memory: what `cudaMalloc` guarantees.
const ALIGN: usize = 256;

impl Cuda {
    /// Loads the CUDA driver (`libcuda.so.1`, `dlopen`), initialises it and retains the primary
    /// context of device `ordinal`.
    ///
    /// ```no_run
    /// let cuda = ferrompi::gpu::Cuda::load(0)?;
    /// let gradients = cuda.alloc::<f32>(1 << 20)?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Device`] when there is no driver (the library cannot be loaded, or lacks a
    /// function), no such device, or the driver fails.
    pub fn load(ordinal: i32) -> Result<Cuda> {
        const OP: &str = "cuda_load";
        // SAFETY: a NUL-terminated name; dlopen runs the library's constructors, which is what
        // loading the CUDA driver is.
        let library = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW) };
        if library.is_null() {
            return Err(device_error(OP, format!("no CUDA driver: {}", dl_error())));
        }
        let api = match Api::resolve(library) {
            Ok(api) => api,
            Err(reason) => {
                // SAFETY: the handle dlopen returned, closed once.
                unsafe { libc::dlclose(library) };
                return Err(device_error(OP, reason));
            }
        };
        let mut driver = Driver {
            library,
            api,
            device: 0,
            context: std::ptr::null_mut(),
        };
        // SAFETY: driver functions with their `cuda.h` signatures; each writes one value.
        let started = unsafe {
            driver.check((driver.api.init)(0), "cuInit").and_then(|()| {
                let mut device: CuDevice = 0;
                driver.check((driver.api.device_get)(&mut device, ordinal), "cuDeviceGet")?;
                let mut context: CuContext = std::ptr::null_mut();
                let rc = (driver.api.primary_ctx_retain)(&mut context, device);
                driver.check(rc, "cuDevicePrimaryCtxRetain")?;
                Ok((device, context))
            })
        };
        match started {
            Ok((device, context)) => (driver.device, driver.context) = (device, context),
            Err(e) => {
                // SAFETY: the handle dlopen returned, closed once; no context was retained.
                unsafe { libc::dlclose(library) };
                return Err(e);
            }
        }
        Ok(Cuda {
            backend: Backend::Driver(driver),
        })
    }

    /// A stand-in for a GPU in host memory: [`alloc`](Cuda::alloc) takes host memory (256-byte
    /// aligned), copies are `memcpy`. For running and testing the device paths, staged and
    /// direct, on machines without a GPU.
    ///
    /// ```
    /// let cuda = ferrompi::gpu::Cuda::emulated();
    /// let on_device = cuda.upload(&[1.0f64, 2.0])?;
    /// assert_eq!(on_device.to_vec()?, [1.0, 2.0]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn emulated() -> Cuda {
        Cuda {
            backend: Backend::Emulated,
        }
    }

    /// Whether this is [`Cuda::emulated`].
    pub fn is_emulated(&self) -> bool {
        matches!(self.backend, Backend::Emulated)
    }

    /// The device ordinal's `CUdevice` (0 when emulated).
    pub fn device(&self) -> i32 {
        match &self.backend {
            Backend::Driver(driver) => driver.device,
            Backend::Emulated => 0,
        }
    }

    /// `len` zeroed values of `T` in device memory.
    ///
    /// # Errors
    /// [`ErrorKind::Device`] when the device cannot allocate it (or its size overflows).
    pub fn alloc<T: Equivalence>(&self, len: usize) -> Result<DeviceVec<'_, T>> {
        const OP: &str = "cuda_alloc";
        const {
            assert!(
                !T::NEEDS_REPAIR,
                "device buffers hold types valid for any bytes"
            )
        };
        let bytes = bytes_of::<T>(len, OP)?;
        let ptr = self.raw_alloc(bytes, OP)?;
        let vec = DeviceVec {
            cuda: self,
            ptr,
            len,
            _type: PhantomData,
        };
        self.zero(ptr, bytes)?;
        Ok(vec)
    }

    /// A copy of `values` in device memory.
    ///
    /// # Errors
    /// As [`Cuda::alloc`].
    pub fn upload<T: Equivalence>(&self, values: &[T]) -> Result<DeviceVec<'_, T>> {
        let mut vec = self.alloc::<T>(values.len())?;
        vec.copy_from_host(values)?;
        Ok(vec)
    }

    fn raw_alloc(&self, bytes: usize, operation: &'static str) -> Result<CuDevicePtr> {
        match &self.backend {
            Backend::Driver(driver) => {
                let mut ptr: CuDevicePtr = 0;
                if bytes > 0 {
                    driver.current()?;
                    // SAFETY: writes one device pointer.
                    let rc = unsafe { (driver.api.mem_alloc)(&mut ptr, bytes) };
                    driver.check(rc, "cuMemAlloc")?;
                }
                Ok(ptr)
            }
            Backend::Emulated => Ok(host_alloc(bytes, operation)? as CuDevicePtr),
        }
    }

    /// Frees what `raw_alloc` returned for `bytes`.
    fn raw_free(&self, ptr: CuDevicePtr, bytes: usize) {
        match &self.backend {
            Backend::Driver(driver) => {
                if ptr != 0 && driver.current().is_ok() {
                    // SAFETY: a pointer cuMemAlloc returned, freed once. A failure (the
                    // context already torn down at exit) leaves nothing to do.
                    unsafe { (driver.api.mem_free)(ptr) };
                }
            }
            // SAFETY: what `host_alloc` returned for `bytes`.
            Backend::Emulated => unsafe { host_free(ptr as *mut u8, bytes) },
        }
    }

    fn zero(&self, ptr: CuDevicePtr, bytes: usize) -> Result<()> {
        match &self.backend {
            // cuMemAlloc's memory is uninitialised.
            Backend::Driver(driver) if bytes > 0 => {
                driver.current()?;
                // SAFETY: `ptr` is an allocation of `bytes` bytes of this context.
                let rc = unsafe { (driver.api.memset_d8)(ptr, 0, bytes) };
                driver.check(rc, "cuMemsetD8")
            }
            Backend::Driver(_) => Ok(()),
            // Emulated memory is allocated zeroed.
            Backend::Emulated => Ok(()),
        }
    }

    /// Copies `bytes` from host memory to device memory.
    ///
    /// # Safety
    /// `src` is readable for `bytes`, `dst` a device allocation of this context with room for
    /// them; neither is written by anything else during the copy.
    pub(crate) unsafe fn htod(&self, dst: CuDevicePtr, src: *const u8, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        match &self.backend {
            Backend::Driver(driver) => {
                driver.current()?;
                // SAFETY: per the contract.
                let rc = unsafe { (driver.api.memcpy_htod)(dst, src.cast(), bytes) };
                driver.check(rc, "cuMemcpyHtoD")
            }
            Backend::Emulated => {
                // SAFETY: per the contract; emulated device memory is host memory.
                unsafe { std::ptr::copy(src, dst as *mut u8, bytes) };
                Ok(())
            }
        }
    }

    /// Copies `bytes` from device memory to host memory.
    ///
    /// # Safety
    /// As [`htod`](Cuda::htod), the other way.
    pub(crate) unsafe fn dtoh(&self, dst: *mut u8, src: CuDevicePtr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        match &self.backend {
            Backend::Driver(driver) => {
                driver.current()?;
                // SAFETY: per the contract.
                let rc = unsafe { (driver.api.memcpy_dtoh)(dst.cast(), src, bytes) };
                driver.check(rc, "cuMemcpyDtoH")
            }
            Backend::Emulated => {
                // SAFETY: per the contract; emulated device memory is host memory.
                unsafe { std::ptr::copy(src as *const u8, dst, bytes) };
                Ok(())
            }
        }
    }
}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda")
            .field("device", &self.device())
            .field("emulated", &self.is_emulated())
            .finish()
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        if let Backend::Driver(driver) = &self.backend {
            // SAFETY: the context retained in `load`, released once; then the library, whose
            // functions nothing calls any more (every DeviceVec and PinnedHost borrowed `self`).
            unsafe {
                (driver.api.primary_ctx_release)(driver.device);
                libc::dlclose(driver.library);
            }
        }
    }
}

impl Driver {
    /// Makes the primary context current on the calling thread.
    fn current(&self) -> Result<()> {
        // SAFETY: a context retained by `load`.
        let rc = unsafe { (self.api.ctx_set_current)(self.context) };
        self.check(rc, "cuCtxSetCurrent")
    }

    fn check(&self, rc: CuResult, function: &'static str) -> Result<()> {
        if rc == 0 {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: writes a pointer to a static string, or leaves it null for an unknown code.
        unsafe { (self.api.get_error_string)(rc, &mut text) };
        let message = if text.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: the driver's static, NUL-terminated message.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Err(device_error(
            function,
            format!("CUDA error {rc}: {message}"),
        ))
    }
}

fn device_error(operation: &'static str, reason: String) -> Error {
    ErrorKind::Device { operation, reason }.into()
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message valid until the next dl call.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        "dlopen failed".to_string()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}

/// `len` values of `T` in bytes.
pub(crate) fn bytes_of<T>(len: usize, operation: &'static str) -> Result<usize> {
    len.checked_mul(size_of::<T>())
        .filter(|&bytes| bytes <= isize::MAX as usize - ALIGN)
        .ok_or_else(|| device_error(operation, format!("{len} values do not fit in memory")))
}

fn host_alloc(bytes: usize, operation: &'static str) -> Result<*mut u8> {
    let layout = Layout::from_size_align(bytes.max(1), ALIGN)
        .map_err(|e| device_error(operation, e.to_string()))?;
    // SAFETY: a layout of non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(device_error(
            operation,
            format!("{bytes} bytes of host memory refused"),
        ));
    }
    Ok(ptr)
}

/// # Safety
/// `ptr` came from `host_alloc(bytes)`, freed once.
unsafe fn host_free(ptr: *mut u8, bytes: usize) {
    // SAFETY: the layout `host_alloc` used.
    unsafe { std::alloc::dealloc(ptr, Layout::from_size_align_unchecked(bytes.max(1), ALIGN)) };
}

/// Zeroed, page-locked host memory (`cuMemHostAlloc`; host memory when emulated), which the
/// driver copies to and from at full speed and the MPI reads as any host memory. Zeroed, so
/// that it always holds valid values of the `Equivalence` types (every bit pattern valid) the
/// staging puts there.
pub(crate) struct PinnedHost<'c> {
    cuda: &'c Cuda,
    pub(crate) ptr: *mut u8,
    pub(crate) bytes: usize,
}

impl<'c> PinnedHost<'c> {
    pub(crate) fn new(cuda: &'c Cuda, bytes: usize, operation: &'static str) -> Result<Self> {
        let ptr = match &cuda.backend {
            Backend::Driver(driver) => {
                driver.current()?;
                let mut ptr: *mut c_void = std::ptr::null_mut();
                // SAFETY: writes one pointer; flags 0 (portable to this context only).
                let rc = unsafe { (driver.api.mem_host_alloc)(&mut ptr, bytes.max(1), 0) };
                driver.check(rc, "cuMemHostAlloc")?;
                // SAFETY: `bytes` writable bytes just allocated.
                unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
                ptr.cast()
            }
            Backend::Emulated => host_alloc(bytes, operation)?,
        };
        Ok(PinnedHost { cuda, ptr, bytes })
    }
}

impl Drop for PinnedHost<'_> {
    fn drop(&mut self) {
        match &self.cuda.backend {
            Backend::Driver(driver) => {
                if driver.current().is_ok() {
                    // SAFETY: what cuMemHostAlloc returned, freed once.
                    unsafe { (driver.api.mem_free_host)(self.ptr.cast()) };
                }
            }
            // SAFETY: what `host_alloc(self.bytes)` returned, freed once.
            Backend::Emulated => unsafe { host_free(self.ptr, self.bytes) },
        }
    }
}

/// Memory on a GPU that ferrompi may read: `len` values of [`Item`](DeviceMemory::Item) at
/// [`device_ptr`](DeviceMemory::device_ptr). Implemented by [`DeviceVec`]; implement it for the
/// buffers of another CUDA library (a tensor's storage) to pass them to a
/// [`DeviceComm`](crate::gpu::DeviceComm).
///
/// # Safety
/// Implementors promise that, for as long as the value is borrowed, `device_ptr` is the
/// address of `len * size_of::<Item>()` bytes of device memory allocated by the CUDA driver
/// (or runtime) in the primary context of the [`Cuda`] the buffer is used with (or host memory,
/// with [`Cuda::emulated`]), which stays allocated and is not written by anything else: no
/// kernel or copy on any stream may write it until the borrow ends (synchronize the streams
/// that produce it before the call, as a CUDA-aware MPI also requires).
pub unsafe trait DeviceMemory {
    /// The element type.
    type Item: Equivalence;
    /// The device address of the first value.
    fn device_ptr(&self) -> u64;
    /// How many values.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The [`Cuda`] that allocated the memory, where the type knows it ([`DeviceVec`]): a
    /// [`DeviceComm`](crate::gpu::DeviceComm) refuses a buffer of another. `None` (the
    /// default) for memory of another library, which the contract above ties to the `Cuda` it
    /// is used with.
    fn allocated_by(&self) -> Option<&Cuda> {
        None
    }
}

/// Device memory that ferrompi may also write.
///
/// # Safety
/// As [`DeviceMemory`], and nothing else reads the memory while it is mutably borrowed.
pub unsafe trait DeviceMemoryMut: DeviceMemory {}

/// `len` values of `T` in the device memory of a [`Cuda`], freed on drop (`cuMemAlloc`,
/// `cuMemFree`). Borrowed by the [`DeviceComm`](crate::gpu::DeviceComm) calls that use it, so
/// it cannot be freed or reused while MPI or a staging copy works on it.
pub struct DeviceVec<'c, T: Equivalence> {
    cuda: &'c Cuda,
    ptr: CuDevicePtr,
    len: usize,
    _type: PhantomData<T>,
}

// SAFETY: device memory is not tied to a thread; the `Cuda` it borrows is `Sync`.
unsafe impl<T: Equivalence + Send> Send for DeviceVec<'_, T> {}
// SAFETY: `&DeviceVec` only reads the device memory (copies to the host).
unsafe impl<T: Equivalence + Sync> Sync for DeviceVec<'_, T> {}

impl<T: Equivalence> DeviceVec<'_, T> {
    /// Copies `values` (as many as the vector holds) from host memory into the vector.
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`] when the lengths differ; [`ErrorKind::Device`].
    pub fn copy_from_host(&mut self, values: &[T]) -> Result<()> {
        same_len(self.len, values.len(), "copy_from_host")?;
        // SAFETY: `values` is readable for the vector's bytes; the vector is borrowed mutably.
        unsafe {
            self.cuda
                .htod(self.ptr, values.as_ptr().cast(), size_of_val(values))
        }
    }

    /// Copies the vector into `values` (as many as the vector holds).
    ///
    /// # Errors
    /// As [`copy_from_host`](DeviceVec::copy_from_host).
    pub fn copy_to_host(&self, values: &mut [T]) -> Result<()> {
        same_len(self.len, values.len(), "copy_to_host")?;
        // SAFETY: `values` is writable for the vector's bytes, and any bytes are a valid `T`
        // (`alloc` refuses types that need repair).
        unsafe {
            self.cuda
                .dtoh(values.as_mut_ptr().cast(), self.ptr, size_of_val(values))
        }
    }

    /// The vector's values, copied to the host.
    ///
    /// # Errors
    /// [`ErrorKind::Device`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut values = Vec::<T>::with_capacity(self.len);
        // SAFETY: the capacity is `len`; the copy below writes all of it before `set_len`
        // makes it readable, and any bytes are a valid `T` (`alloc` refuses types that need
        // repair). On error the vector is dropped with length 0.
        unsafe {
            self.cuda.dtoh(
                values.as_mut_ptr().cast(),
                self.ptr,
                self.len * size_of::<T>(),
            )?;
            values.set_len(self.len);
        }
        Ok(values)
    }
}

impl<T: Equivalence> std::fmt::Debug for DeviceVec<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVec")
            .field("device_ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: Equivalence> Drop for DeviceVec<'_, T> {
    fn drop(&mut self) {
        self.cuda.raw_free(self.ptr, self.len * size_of::<T>());
    }
}

// SAFETY: the vector's own allocation of `len` values, freed only by its drop, which cannot
// run while it is borrowed.
unsafe impl<T: Equivalence> DeviceMemory for DeviceVec<'_, T> {
    type Item = T;
    fn device_ptr(&self) -> u64 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn allocated_by(&self) -> Option<&Cuda> {
        Some(self.cuda)
    }
}

// SAFETY: as above; `&mut` excludes every other borrow.
unsafe impl<T: Equivalence> DeviceMemoryMut for DeviceVec<'_, T> {}
