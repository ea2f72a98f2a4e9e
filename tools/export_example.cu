// export_example.cu -- a program that uses a reduction exported by kforge
// (the README's "Use it in your code"):
//
//   kforge tune configs/tune-reduce.json --set 'n=["2^10","2^16","2^20","2^24","2^28"]'
//   kforge export --dtype float32 --op sum -o kforge_reduce_float32_sum.cuh
//   nvcc -O3 -arch=sm_90 -I . tools/export_example.cu -o sum && ./sum 1000000
#include "kforge_reduce_float32_sum.cuh"

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t e = (call);                                                              \
        if (e != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    std::vector<float> x(n, 0.5f);

    float *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    // The workspace: sized for the largest n, prepared once, used by every call.
    size_t bytes = kforge_reduce_float32_sum_workspace(n);
    void *ws;
    CHECK(cudaMalloc(&ws, bytes));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    CHECK(kforge_reduce_float32_sum_workspace_init(ws, bytes, stream));

    CHECK(kforge_reduce_float32_sum(in, n, out, ws, bytes, stream));
    float sum;
    CHECK(cudaMemcpyAsync(&sum, out, sizeof sum, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    printf("sum of %zu halves: %.1f (expected %.1f) with %s\n", n, sum, 0.5 * n,
           kforge_reduce_float32_sum_variant(n));

    cudaFree(ws);
    cudaFree(out);
    cudaFree(in);
    cudaStreamDestroy(stream);
    return sum == 0.5f * n ? 0 : 1;
}
