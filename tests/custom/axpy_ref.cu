// axpy_ref.cu -- the reference of axpy_half.cu, a kernel of its own
// ("reference": {"source": "axpy_ref.cu", "entry": ...}): one element per
// thread, computed in float and rounded to the 2-byte type.  Its launch is
// its own (block ref_block, #defined from the reference's params).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void axpy_ref_f16(__half *y, const __half *x, __half a, int n)
{
    int i = blockIdx.x * ref_block + threadIdx.x;
    if (i < n)
        y[i] = __float2half_rn(__half2float(a) * __half2float(x[i]) + __half2float(y[i]));
}

extern "C" __global__ void axpy_ref_bf16(__nv_bfloat16 *y, const __nv_bfloat16 *x, __nv_bfloat16 a, int n)
{
    int i = blockIdx.x * ref_block + threadIdx.x;
    if (i < n)
        y[i] = __float2bfloat16_rn(__bfloat162float(a) * __bfloat162float(x[i]) + __bfloat162float(y[i]));
}
