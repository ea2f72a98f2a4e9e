// export_rows_example.cu -- a program that uses a row-wise reduction exported
// by kforge (the README's "Use it in your code"): the sum of every row of a
// rows x cols matrix stored with padded rows.
//
//   kforge tune configs/tune-rows.json --set rows=16384 --set cols=4096
//   kforge tune configs/tune-rows.json --set rows=2^21 --set cols=32
//   kforge tune configs/tune-rows.json --set rows=64 --set cols=2^20
//   kforge export --kernel reduce_rows --dtype float32 --op sum -o kforge_reduce_rows_float32_sum.cuh
//   nvcc -O3 -arch=sm_90 -I . tools/export_rows_example.cu -o rowsum && ./rowsum 1000 300
#include "kforge_reduce_rows_float32_sum.cuh"

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
    size_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
    size_t cols = argc > 2 ? strtoull(argv[2], NULL, 10) : 300;
    size_t stride = cols + 3; // padded rows: any stride >= cols, any alignment
    std::vector<float> x(rows * stride, 0.5f);

    float *in, *out;
    CHECK(cudaMalloc(&in, (x.size() ? x.size() : 1) * sizeof(float)));
    CHECK(cudaMalloc(&out, (rows ? rows : 1) * sizeof(float)));
    CHECK(cudaMemcpy(in, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));

    // The workspace: sized for the most rows, prepared once, used by every
    // call (only split variants need one; 0 bytes if none is here).
    size_t bytes = kforge_reduce_rows_float32_sum_workspace(rows);
    void *ws = nullptr;
    if (bytes)
        CHECK(cudaMalloc(&ws, bytes));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    CHECK(kforge_reduce_rows_float32_sum_workspace_init(ws, bytes, stream));

    CHECK(kforge_reduce_rows_float32_sum(in, rows, cols, stride, out, ws, bytes, stream));
    std::vector<float> sums(rows);
    CHECK(cudaMemcpyAsync(sums.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    size_t wrong = 0;
    for (size_t r = 0; r < rows; r++)
        wrong += sums[r] != 0.5f * cols;
    printf("%zu row sums of %zu halves: %zu wrong, with %s\n", rows, cols, wrong,
           kforge_reduce_rows_float32_sum_variant(rows, cols, stride));
    if (ws)
        CHECK(cudaFree(ws));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaStreamDestroy(stream));
    return wrong ? 1 : 0;
}
