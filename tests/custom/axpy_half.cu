// axpy_half.cu -- y = a * x + y over n 2-byte floats, for tests/custom_suite.sh
// and tests/custom_gpu.sh: float16 (axpy_f16) and bfloat16 (axpy_bf16)
// buffers and scalars, one fused multiply-add in the 2-byte type (one
// rounding).  block_size_x and per_thread are tunable; bug = 1 forgets the
// "+ y" of element 0 (a kernel that is wrong in one place).  The reference
// (axpy_ref.cu) computes in float and rounds once more: the two may differ
// in the last bit, which the per-buffer tolerance of y allows.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef bug
#define bug 0
#endif

extern "C" __global__ void axpy_f16(__half *y, const __half *x, __half a, int n)
{
    int i = blockIdx.x * (block_size_x * per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < per_thread; k++, i += block_size_x)
        if (i < n)
            y[i] = (bug && i == 0) ? __hmul(a, x[i]) : __hfma(a, x[i], y[i]);
}

extern "C" __global__ void axpy_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *x, __nv_bfloat16 a, int n)
{
    int i = blockIdx.x * (block_size_x * per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < per_thread; k++, i += block_size_x)
        if (i < n)
            y[i] = (bug && i == 0) ? __hmul(a, x[i]) : __hfma(a, x[i], y[i]);
}
