/*
 * gpu.c -- see gpu.h.
 */
#include "gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define KF_STR_(x) #x
#define KF_STR(x) KF_STR_(x)

int gpu_driver_open(kf_cu *cu, char *err, size_t errlen)
{
    memset(cu, 0, sizeof *cu);
    cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        const char *why = dlerror();
        kf_err(err, errlen, "no NVIDIA driver: cannot load libcuda.so.1 (%s)", why ? why : "unknown error");
        return -1;
    }
#define KF_CU_LOAD(f)                                                                         \
    cu->f = (__typeof__(&f))dlsym(cu->lib, KF_STR(f));                                         \
    if (!cu->f) {                                                                              \
        kf_err(err, errlen, "NVIDIA driver too old: libcuda.so.1 lacks %s", KF_STR(f));        \
        dlclose(cu->lib);                                                                      \
        cu->lib = NULL;                                                                        \
        return -1;                                                                             \
    }
    KF_CU_FUNCS(KF_CU_LOAD)
#undef KF_CU_LOAD
    return 0;
}

void gpu_driver_close(kf_cu *cu)
{
    if (cu->lib)
        dlclose(cu->lib);
    cu->lib = NULL;
}

void gpu_error_text(const kf_cu *cu, CUresult r, char *buf, size_t len)
{
    const char *name = NULL, *desc = NULL;
    if (cu && cu->cuGetErrorName)
        cu->cuGetErrorName(r, &name);
    if (cu && cu->cuGetErrorString)
        cu->cuGetErrorString(r, &desc);
    if (name)
        snprintf(buf, len, "%s (%s)", name, desc ? desc : "");
    else
        snprintf(buf, len, "CUDA error %d", (int)r);
}

bool gpu_error_is_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return true;
    default:
        return false;
    }
}

CUresult gpu_check(const kf_gpu *g, CUresult r, const char *what, const char *file, int line,
                   char *err, size_t errlen)
{
    if (r != CUDA_SUCCESS) {
        char text[160];
        gpu_error_text(g ? &g->cu : NULL, r, text, sizeof text);
        kf_err(err, errlen, "%s failed: %s [%s:%d]", what, text, file, line);
    }
    return r;
}

static int attr(kf_gpu *g, CUdevice_attribute a)
{
    int v = 0;
    g->cu.cuDeviceGetAttribute(&v, a, g->dev);
    return v;
}

int gpu_open(kf_gpu *g, int ordinal, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (gpu_driver_open(&g->cu, err, errlen) != 0)
        return -1;
    kf_cu *cu = &g->cu;
    int count = 0;
    kf_trace("gpu %d: cuInit", ordinal);
    CUresult r = CU_CALL(g, err, errlen, cu->cuInit(0));
    if (r != CUDA_SUCCESS) {
        g->missing = r == CUDA_ERROR_NO_DEVICE;
        goto fail;
    }
    if (CU_CALL(g, err, errlen, cu->cuDeviceGetCount(&count)) != CUDA_SUCCESS)
        goto fail;
    if (ordinal < 0 || ordinal >= count) {
        kf_err(err, errlen, "no GPU with index %d (the driver sees %d)", ordinal, count);
        g->missing = true;
        goto fail;
    }
    if (CU_CALL(g, err, errlen, cu->cuDeviceGet(&g->dev, ordinal)) != CUDA_SUCCESS)
        goto fail;
    kf_trace("gpu %d: cuInit done", ordinal);
    if (CU_CALL(g, err, errlen, cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev)) != CUDA_SUCCESS)
        goto fail;
    kf_trace("gpu %d: context made", ordinal);
    g->have_ctx = true;
    if (CU_CALL(g, err, errlen, cu->cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        goto fail;

    kf_device *d = &g->info;
    cu->cuDeviceGetName(d->name, sizeof d->name, g->dev);
    d->index = ordinal;
    CUuuid uuid;
    if (cu->cuDeviceGetUuid(&uuid, g->dev) == CUDA_SUCCESS)
        gpu_uuid_text((const unsigned char *)uuid.bytes, d->uuid, sizeof d->uuid);
    d->cc_major = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d->cc_minor = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->sms = attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->l2_bytes = attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    size_t total = 0;
    cu->cuDeviceTotalMem(&total, g->dev);
    d->mem_bytes = (int64_t)total;
    d->mem_clock_khz = attr(g, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d->bus_width_bits = attr(g, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    /* DDR: two transfers per clock. */
    d->peak_gbps = 2.0 * d->mem_clock_khz * 1e3 * (d->bus_width_bits / 8.0) / 1e9;
    d->sm_clock_khz = attr(g, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    d->peak_gflops = kf_peak_fp32_gflops(d->cc_major, d->cc_minor, d->sms, d->sm_clock_khz);
    d->max_threads_per_block = attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d->max_smem_per_block = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->max_smem_per_sm = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    cu->cuDriverGetVersion(&d->driver_version);
    return 0;
fail:
    gpu_close(g);
    return -1;
}

bool gpu_open_missing(const kf_gpu *g) { return g->missing; }

int gpu_count(int *count, char *err, size_t errlen)
{
    kf_gpu g;
    memset(&g, 0, sizeof g);
    *count = 0;
    if (gpu_driver_open(&g.cu, err, errlen) != 0)
        return -1;
    int rc = -1;
    if (CU_CALL(&g, err, errlen, g.cu.cuInit(0)) == CUDA_SUCCESS &&
        CU_CALL(&g, err, errlen, g.cu.cuDeviceGetCount(count)) == CUDA_SUCCESS)
        rc = 0;
    gpu_driver_close(&g.cu);
    return rc;
}

void gpu_uuid_text(const unsigned char b[16], char *buf, size_t len)
{
    snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

void gpu_close(kf_gpu *g)
{
    if (g->have_ctx && g->cu.cuDevicePrimaryCtxRelease)
        g->cu.cuDevicePrimaryCtxRelease(g->dev);
    g->have_ctx = false;
    gpu_driver_close(&g->cu);
}
