// half_cub.cu -- CUB baselines for bfloat16 and float16 reductions with a
// float32 accumulator (issue 23), measured as kforge measures: L2 flushed
// before every repetition (a memset over 2 x L2), CUDA events around the
// reduction only, warm-up 3, median of 31.
//
//   full:  cub::DeviceReduce::TransformReduce(in -> float, plus, 0.0f)
//   rows:  cub::DeviceSegmentedReduce::Reduce over rows (offsets r * cols,
//          int32 or int64 by the matrix's size), plus on float, 0.0f:
//          the accumulator and the output are float
//
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/half_cub.cu -o half_cub
//   ./half_cub --dtype bfloat16 --n 2^20 --n 2^30 --shape 2^21,32 --shape 64,2^20
//
// Data: small integers 1..4 with random signs, exact in both types; the
// result is checked against the exact sum (float32 holds it exactly while
// the sum stays below 2^24, which these data do).  One line per case:
//   CASE kind=full|rows shape=N|RxC dtype=T impl=cubVVVVVV status=PASS us=... gbps=...
// GB/s counts the input bytes.  Exit 1 on a wrong result.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                        \
    do {                                                                                             \
        cudaError_t e_ = (x);                                                                        \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "half_cub: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                                 \
        }                                                                                            \
    } while (0)

struct to_f {
    __device__ float operator()(__nv_bfloat16 x) const { return __bfloat162float(x); }
    __device__ float operator()(__half x) const { return __half2float(x); }
};
struct add_f {
    __device__ float operator()(float a, float b) const { return a + b; }
};
template <typename O> struct row_off {
    O cols;
    __host__ __device__ O operator()(O r) const { return r * cols; }
};

#include "half_time.h"

template <typename T> static int run_all(const char *dtype, const std::vector<long long> &ns,
                                         const std::vector<std::pair<long long, long long>> &shapes)
{
    int bad = 0;
    char impl[32];
    snprintf(impl, sizeof impl, "cub%d", CUB_VERSION);
    for (long long n : ns) {
        std::vector<T> h(n);
        std::vector<float> v(n);
        fill(h, v, 42 + n);
        double want = 0;
        for (long long i = 0; i < n; i++) want += v[i];
        T *d;
        float *out;
        CK(cudaMalloc(&d, n * sizeof(T)));
        CK(cudaMalloc(&out, sizeof(float)));
        CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        size_t tb = 0;
        CK(cub::DeviceReduce::TransformReduce(nullptr, tb, d, out, n, add_f(), to_f(), 0.0f));
        void *tmp;
        CK(cudaMalloc(&tmp, tb + 1));
        auto run = [&] { CK(cub::DeviceReduce::TransformReduce(tmp, tb, d, out, n, add_f(), to_f(), 0.0f)); };
        CK(cudaMemset(out, 0xff, sizeof(float)));
        run();
        float got;
        CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        bool ok = (double)got == want;
        double ms = ok ? time_median(run) : 0;
        bad += !ok;
        printf("CASE kind=full shape=%lld dtype=%s impl=%s status=%s us=%.2f gbps=%.1f\n", n, dtype, impl,
               ok ? "PASS" : "FAIL", ms * 1e3, ok ? n * sizeof(T) / (ms * 1e6) : 0.0);
        fflush(stdout);
        CK(cudaFree(tmp));
        CK(cudaFree(out));
        CK(cudaFree(d));
    }
    for (auto s : shapes) {
        long long R = s.first, C = s.second, n = R * C;
        std::vector<T> h(n);
        std::vector<float> v(n);
        fill(h, v, 7 + n);
        T *d;
        float *out;
        CK(cudaMalloc(&d, n * sizeof(T)));
        CK(cudaMalloc(&out, R * sizeof(float)));
        CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        auto c = thrust::make_counting_iterator<long long>(0);
        auto b = thrust::make_transform_iterator(c, row_off<long long>{C});
        auto e = thrust::make_transform_iterator(thrust::make_counting_iterator<long long>(1), row_off<long long>{C});
        size_t tb = 0;
        CK(cub::DeviceSegmentedReduce::Reduce(nullptr, tb, d, out, R, b, e, add_f(), 0.0f));
        void *tmp;
        CK(cudaMalloc(&tmp, tb + 1));
        auto run = [&] { CK(cub::DeviceSegmentedReduce::Reduce(tmp, tb, d, out, R, b, e, add_f(), 0.0f)); };
        CK(cudaMemset(out, 0xff, R * sizeof(float)));
        run();
        std::vector<float> got(R);
        CK(cudaMemcpy(got.data(), out, R * sizeof(float), cudaMemcpyDeviceToHost));
        long long wrong = 0;
        for (long long r = 0; r < R; r++) {
            double w = 0;
            for (long long k = 0; k < C; k++) w += v[r * C + k];
            wrong += (double)got[r] != w;
        }
        double ms = wrong ? 0 : time_median(run);
        bad += wrong != 0;
        printf("CASE kind=rows shape=%lldx%lld dtype=%s impl=%s status=%s us=%.2f gbps=%.1f\n", R, C, dtype, impl,
               wrong ? "FAIL" : "PASS", ms * 1e3, wrong ? 0.0 : n * sizeof(T) / (ms * 1e6));
        fflush(stdout);
        CK(cudaFree(tmp));
        CK(cudaFree(out));
        CK(cudaFree(d));
    }
    return bad;
}

int main(int argc, char **argv)
{
    std::string dtype = "bfloat16";
    std::vector<long long> ns;
    std::vector<std::pair<long long, long long>> shapes;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dtype")) dtype = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) ns.push_back(num(argv[i + 1]));
        else if (!strcmp(argv[i], "--shape")) {
            std::string s = argv[i + 1];
            size_t k = s.find(',');
            shapes.push_back({num(s.substr(0, k).c_str()), num(s.substr(k + 1).c_str())});
        } else {
            fprintf(stderr, "usage: half_cub --dtype bfloat16|float16 [--n N]... [--shape R,C]...\n");
            return 2;
        }
    }
    flush_init();
    int bad = dtype == "float16" ? run_all<__half>("float16", ns, shapes) : run_all<__nv_bfloat16>("bfloat16", ns, shapes);
    return bad ? 1 : 0;
}
