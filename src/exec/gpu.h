/*
 * gpu.h -- the CUDA Driver API, opened at run time with dlopen("libcuda.so.1")
 * so that everything except running kernels works on a machine without an
 * NVIDIA driver, and a missing driver is a clear error instead of a loader
 * failure.
 *
 * The function pointers carry the driver's own names (cuda.h's versioned
 * names, e.g. cuMemAlloc -> cuMemAlloc_v2, are resolved by the same macros
 * cuda.h uses), so calls read like ordinary Driver API code:
 *     CU_TRY(g, g->cu.cuMemAlloc(&p, bytes));
 */
#ifndef KF_GPU_H
#define KF_GPU_H

#include <cuda.h>

#include "kforge.h"

#define KF_CU_FUNCS(X) \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetUuid) \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) \
    X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData) \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuFuncGetAttribute) X(cuFuncSetAttribute) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) \
    X(cuMemcpyHtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemsetD8Async) X(cuMemsetD32Async) X(cuMemGetInfo) \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) \
    X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) \
    X(cuGetErrorName) X(cuGetErrorString)

#define KF_CU_FIELD(f) __typeof__(&f) f;
typedef struct {
    void *lib;
    KF_CU_FUNCS(KF_CU_FIELD)
} kf_cu;
#undef KF_CU_FIELD

/* Opens libcuda.so.1 and resolves every function.  -1 with a message
 * ("no NVIDIA driver: libcuda.so.1 not found (...)") on failure. */
int gpu_driver_open(kf_cu *cu, char *err, size_t errlen);
void gpu_driver_close(kf_cu *cu);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)". */
void gpu_error_text(const kf_cu *cu, CUresult r, char *buf, size_t len);

/* True for errors after which the context is unusable (faults in a kernel). */
bool gpu_error_is_sticky(CUresult r);

/* A device and its primary context, made current on this thread. */
typedef struct {
    kf_cu cu;
    CUdevice dev;
    CUcontext ctx;
    bool have_ctx;
    bool missing;   /* gpu_open failed: no such device (gpu_open_missing) */
    kf_device info;
} kf_gpu;

/* cuInit, device ordinal, primary context, device facts (info.nvrtc_* left 0;
 * info.index is the ordinal, info.uuid "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
 * as nvidia-smi prints it). */
int gpu_open(kf_gpu *g, int ordinal, char *err, size_t errlen);
/* After a failed gpu_open: true when the device does not exist (no device
 * visible, or none with that ordinal), rather than failing to open. */
bool gpu_open_missing(const kf_gpu *g);

/* The number of devices the driver shows this process (CUDA_VISIBLE_DEVICES
 * applies): 0 and *count set, or -1 with a message.  Initialises CUDA: call
 * it only in a process that never forks afterwards (a GPU worker). */
int gpu_count(int *count, char *err, size_t errlen);

/* "GPU-" and the 16 bytes as 8-4-4-4-12 hex digits. */
void gpu_uuid_text(const unsigned char bytes[16], char *buf, size_t len);
void gpu_close(kf_gpu *g);

/* Records the failing call, file and line in err and evaluates to the
 * CUresult; use as: if ((r = CU_CALL(g, err, errlen, cuX(...))) != CUDA_SUCCESS) goto fail; */
#define CU_CALL(g, err, errlen, call) gpu_check((g), (call), #call, __FILE__, __LINE__, (err), (errlen))
CUresult gpu_check(const kf_gpu *g, CUresult r, const char *what, const char *file, int line,
                   char *err, size_t errlen);

#endif
