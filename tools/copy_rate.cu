// copy_rate.cu -- the memory rates that bound the output-bound row shapes
// (docs/results.md, "Rows of 1 to 16 columns"): on the GPU at hand, in
// kforge's timing loop (tools/half_time.h: L2 flushed before each repetition
// by a memset over 2 x L2, CUDA events around the operation, each repetition
// waited for; median of 51), for a buffer of --bytes (default 2^28: 2^26 floats):
//   memcpy   cudaMemcpyAsync device to device (GB/s counting read + write)
//   copy16   a grid-stride copy kernel with 16-byte loads and stores, at
//            1..8 blocks per SM x 1024, 512 or 256 threads (the best; read + write)
//   read16   a grid-stride sum of 16-byte loads (read only)
//   write16  a grid-stride store of 16-byte zeros (write only)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/copy_rate.cu -o copy_rate && ./copy_rate [--bytes N]
// (half_time.h is found beside it)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "copy_rate: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

__global__ void copy16(const float4 *in, float4 *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

__global__ void read16(const float4 *in, size_t n, float *sink)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.678f) *sink = s; // never, but the loads stay
}

__global__ void write16(float4 *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = make_float4(0, 0, 0, 0);
}

#include "half_time.h"

int main(int argc, char **argv)
{
    size_t bytes = (size_t)1 << 28;
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--bytes")) bytes = strtoull(argv[i + 1], 0, 0);
    bytes &= ~(size_t)15;
    int dev = 0, sms = 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    flush_init();
    void *in, *out;
    float *sink;
    CK(cudaMalloc(&in, bytes));
    CK(cudaMalloc(&out, bytes));
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaMemset(in, 0, bytes));
    size_t n = bytes / 16;
    printf("# %s, %zu bytes, kforge's timing loop (L2 flushed, each repetition waited for, median of 51)\n", p.name, bytes);
    double t = time_median([&] { CK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }, 51);
    printf("memcpy   %8.2f us  %7.1f GB/s (read + write)\n", t * 1e3, 2.0 * bytes / (t * 1e6));
    const int threads[] = {1024, 512, 256};
    double best = 1e30, bestr = 1e30, bestw = 1e30;
    int bt = 0, bb = 0;
    for (int th : threads)
        for (int per = 1; per * th <= 2048; per *= 2) {
            int blocks = sms * per;
            double c = time_median([&] { copy16<<<blocks, th>>>((const float4 *)in, (float4 *)out, n); }, 51);
            double r = time_median([&] { read16<<<blocks, th>>>((const float4 *)in, n, sink); }, 51);
            double w = time_median([&] { write16<<<blocks, th>>>((float4 *)out, n); }, 51);
            if (c < best) best = c, bt = th, bb = per;
            bestr = std::min(bestr, r);
            bestw = std::min(bestw, w);
        }
    printf("copy16   %8.2f us  %7.1f GB/s (read + write; %d threads x %d blocks per SM)\n", best * 1e3,
           2.0 * bytes / (best * 1e6), bt, bb);
    printf("read16   %8.2f us  %7.1f GB/s (read)\n", bestr * 1e3, bytes / (bestr * 1e6));
    printf("write16  %8.2f us  %7.1f GB/s (write)\n", bestw * 1e3, bytes / (bestw * 1e6));
    return 0;
}
