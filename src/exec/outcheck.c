/*
 * outcheck.c -- see outcheck.h.
 */
#include "outcheck.h"

#include <string.h>

#include "codegen.h"

const char *outcheck_source(void)
{
    return codegen_template("outcheck");
}

CUresult outcheck_open(kf_outcheck *o, kf_cu *cu, CUstream stream, int sms, const void *cubin)
{
    memset(o, 0, sizeof *o);
    o->cu = cu;
    o->stream = stream;
    o->blocks = 8 * (sms > 0 ? sms : 1);
    CUresult e = cu->cuModuleLoadData(&o->mod, cubin);
    if (e == CUDA_SUCCESS)
        e = cu->cuModuleGetFunction(&o->differ, o->mod, "kf_differ");
    static const struct {
        kf_dtype t;
        const char *name;
    } w[] = {{KF_FLOAT32, "kf_within_float32"}, {KF_FLOAT64, "kf_within_float64"},
             {KF_BFLOAT16, "kf_within_bfloat16"}, {KF_FLOAT16, "kf_within_float16"}};
    for (size_t i = 0; e == CUDA_SUCCESS && i < sizeof w / sizeof w[0]; i++)
        e = cu->cuModuleGetFunction(&o->within[w[i].t], o->mod, w[i].name);
    if (e == CUDA_SUCCESS)
        e = cu->cuMemAlloc(&o->res, 2 * sizeof(unsigned long long));
    if (e != CUDA_SUCCESS)
        outcheck_close(o);
    return e;
}

void outcheck_close(kf_outcheck *o)
{
    if (o->res)
        o->cu->cuMemFree(o->res);
    if (o->mod)
        o->cu->cuModuleUnload(o->mod);
    kf_cu *cu = o->cu;
    memset(o, 0, sizeof *o);
    o->cu = cu;
}

/* Launches fn over n items with res zeroed first; reads res back. */
static CUresult launch(kf_outcheck *o, CUfunction fn, int64_t n, void **args, unsigned long long res[2])
{
    kf_cu *cu = o->cu;
    int64_t want = (n + 255) / 256;
    unsigned grid = (unsigned)(want < 1 ? 1 : want > o->blocks ? o->blocks : want);
    CUresult e = cu->cuMemsetD8Async(o->res, 0, 2 * sizeof(unsigned long long), o->stream);
    if (e == CUDA_SUCCESS)
        e = cu->cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, o->stream, args, NULL);
    if (e == CUDA_SUCCESS)
        e = cu->cuStreamSynchronize(o->stream);
    if (e == CUDA_SUCCESS)
        e = cu->cuMemcpyDtoH(res, o->res, 2 * sizeof(unsigned long long));
    return e;
}

CUresult outcheck_differ(kf_outcheck *o, CUdeviceptr a, CUdeviceptr b, size_t bytes, bool *differ)
{
    *differ = true;
    if (bytes == 0) {
        *differ = false;
        return CUDA_SUCCESS;
    }
    unsigned long long n = bytes, res[2];
    void *args[] = {&a, &b, &n, &o->res};
    CUresult e = launch(o, o->differ, (int64_t)(bytes / 16 + 1), args, res);
    if (e == CUDA_SUCCESS)
        *differ = res[0] != 0;
    return e;
}

bool outcheck_can_within(const kf_outcheck *o, kf_dtype t, int64_t n)
{
    /* the packed index of the largest error holds 32 bits */
    return o->mod && (int)t >= 0 && t < KF_DTYPE_COUNT && o->within[t] && n >= 0 && n <= 0xFFFFFFFFLL;
}

CUresult outcheck_within(kf_outcheck *o, kf_dtype t, CUdeviceptr got, CUdeviceptr ref, int64_t n, double rtol,
                         double atol, int64_t *bad, int64_t *worst_at)
{
    *bad = n;
    *worst_at = 0;
    if (n == 0) {
        *bad = 0;
        return CUDA_SUCCESS;
    }
    unsigned long long nn = (unsigned long long)n, res[2];
    void *args[] = {&got, &ref, &nn, &rtol, &atol, &o->res};
    CUresult e = launch(o, o->within[t], n, args, res);
    if (e == CUDA_SUCCESS) {
        *bad = (int64_t)res[0];
        *worst_at = (int64_t)(0xFFFFFFFFull - (res[1] & 0xFFFFFFFFull));
    }
    return e;
}
