/* A stand-in for the CUDA driver (libcuda.so.1) with "device" memory in host memory: the
 * functions ferrompi's `gpu` module loads, with their cuda.h signatures and error codes, so that
 * the driver path (dlopen, contexts, pinned staging, error messages) runs on machines without
 * a GPU. tools/test.sh builds it and runs the `device` program against it:
 *
 *   cc -shared -fPIC -o DIR/libcuda.so.1 tests/fake_cuda/libcuda.c
 *   LD_LIBRARY_PATH=DIR FERROMPI_EXPECT_GPU=1 cargo test --all-features --test mpi -- device
 *
 * One device; an allocation the host refuses is CUDA_ERROR_OUT_OF_MEMORY; a call before cuInit
 * is CUDA_ERROR_NOT_INITIALIZED; a copy with no current context is CUDA_ERROR_INVALID_CONTEXT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
       INVALID_CONTEXT = 201 };

static int initialised;
static int primary; /* the one context's address */
static __thread CUcontext current;

CUresult cuInit(unsigned flags) { initialised = flags == 0; return flags == 0 ? OK : INVALID_VALUE; }

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!initialised) return NOT_INITIALIZED;
  if (ordinal != 0) return INVALID_DEVICE;
  *device = 0;
  return OK;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (device != 0) return INVALID_DEVICE;
  *context = &primary;
  return OK;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { return device == 0 ? OK : INVALID_DEVICE; }

CUresult cuCtxSetCurrent(CUcontext context) { current = context; return OK; }

static CUresult in_context(void) { return current == &primary ? OK : INVALID_CONTEXT; }

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (in_context()) return INVALID_CONTEXT;
  void *p = bytes ? malloc(bytes) : NULL;
  if (bytes && !p) return OUT_OF_MEMORY;
  if (p) memset(p, 0xA5, bytes); /* cuMemAlloc's memory is not zeroed */
  *ptr = (CUdeviceptr)(uintptr_t)p;
  return OK;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) { free((void *)(uintptr_t)ptr); return in_context(); }

CUresult cuMemsetD8_v2(CUdeviceptr ptr, unsigned char value, size_t bytes) {
  if (in_context()) return INVALID_CONTEXT;
  memset((void *)(uintptr_t)ptr, value, bytes);
  return OK;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (in_context()) return INVALID_CONTEXT;
  memmove((void *)(uintptr_t)dst, src, bytes);
  return OK;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (in_context()) return INVALID_CONTEXT;
  memmove(dst, (const void *)(uintptr_t)src, bytes);
  return OK;
}

CUresult cuMemHostAlloc(void **ptr, size_t bytes, unsigned flags) {
  if (in_context()) return INVALID_CONTEXT;
  (void)flags;
  if (posix_memalign(ptr, 4096, bytes)) return OUT_OF_MEMORY;
  memset(*ptr, 0xA5, bytes); /* nor is cuMemHostAlloc's */
  return OK;
}

CUresult cuMemFreeHost(void *ptr) { free(ptr); return OK; }

CUresult cuGetErrorString(CUresult error, const char **text) {
  switch (error) {
    case OK: *text = "no error"; return OK;
    case INVALID_VALUE: *text = "invalid argument"; return OK;
    case OUT_OF_MEMORY: *text = "out of memory"; return OK;
    case NOT_INITIALIZED: *text = "initialization error"; return OK;
    case INVALID_DEVICE: *text = "invalid device ordinal"; return OK;
    case INVALID_CONTEXT: *text = "invalid device context"; return OK;
    default: *text = NULL; return INVALID_VALUE;
  }
}
