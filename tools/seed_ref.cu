// seed_ref.cu -- the seeds' reduce0/reduce1/reduce2 exactly as written (seed
// 002, float, 256 threads), compiled ahead of time with nvcc and timed with
// kforge's method (L2 flushed before every repetition, one event pair around
// all passes, median).  A check that kforge's run-time generated kernels are
// as fast as the same kernels compiled ahead of time (issue 2).
//   nvcc -O3 -arch=sm_90 tools/seed_ref.cu -o build/seed_ref && build/seed_ref
#include <algorithm>
#include <cstdio>
#include <vector>
#define THREAD_PER_BLOCK 256

__global__ void reduce0(float *d_in, float *d_out)
{
    __shared__ float sdata[THREAD_PER_BLOCK];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int tid = threadIdx.x;
    sdata[tid] = d_in[i];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) d_out[blockIdx.x] = sdata[0];
}

__global__ void reduce1(float *d_in, float *d_out)
{
    __shared__ float sdata[THREAD_PER_BLOCK];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int tid = threadIdx.x;
    sdata[tid] = d_in[i];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) d_out[blockIdx.x] = sdata[0];
}

__global__ void reduce2(float *d_in, float *d_out)
{
    __shared__ float sdata[THREAD_PER_BLOCK];
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int tid = threadIdx.x;
    sdata[tid] = d_in[i];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) d_out[blockIdx.x] = sdata[0];
}

typedef void (*kern)(float *, float *);

static void passes(kern k, float *in, float *a, float *b, unsigned n)
{
    float *src = in, *dst = a;
    while (n > 1) {
        unsigned threads = n < THREAD_PER_BLOCK ? n : THREAD_PER_BLOCK;
        unsigned blocks = n / threads;
        k<<<blocks, threads>>>(src, dst);
        n = blocks;
        src = dst;
        dst = dst == a ? b : a;
    }
}

int main()
{
    const unsigned n = 1u << 25;
    std::vector<float> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    float *in, *a, *b;
    char *flush;
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    cudaMalloc(&in, n * 4);
    cudaMalloc(&a, n / 256 * 4 + 64);
    cudaMalloc(&b, n / 256 * 4 + 64);
    cudaMalloc(&flush, 2 * (size_t)l2);
    cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const char *names[] = {"reduce0", "reduce1", "reduce2"};
    kern ks[] = {reduce0, reduce1, reduce2};
    for (int k = 0; k < 3; k++) {
        for (int w = 0; w < 3; w++) passes(ks[k], in, a, b, n);
        std::vector<float> ms;
        for (int r = 0; r < 100; r++) {
            cudaMemsetAsync(flush, r & 0xFF, 2 * (size_t)l2);
            cudaEventRecord(e0);
            passes(ks[k], in, a, b, n);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float t;
            cudaEventElapsedTime(&t, e0, e1);
            ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        double med = ms[ms.size() / 2];
        printf("%s (nvcc, seed 002 code) n=2^25 float32: median %.1f us  %.1f GB/s\n", names[k], med * 1e3,
               n * 4.0 / med / 1e6);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        printf("CUDA error: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}
