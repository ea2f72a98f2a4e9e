// half_kforge.cu -- kforge's exported bfloat16 and float16 sum headers
// (kforge export --dtype bfloat16|float16 --op sum, float32 results) timed
// by the loop that times CUB in tools/half_cub.cu (tools/half_time.h), on
// the same data, each result checked against the exact sum.  Beside
// half_cub's lines, it takes the harness out of the comparison: at 2^10 ..
// 2^14 a reduction is a few microseconds, and two timing loops can differ
// by more than two kernels do.  One line per case:
//   CASE kind=full shape=N dtype=T impl=kforge-header status=PASS us=... gbps=... variant="..."
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I DIR tools/half_kforge.cu -o half_kforge
//   ./half_kforge --dtype bfloat16 --n 2^10 --n 2^12 [--batched 1]
// --batched 1: the repetitions enqueued at once and waited for once, as
// kforge's worker does (impl=kforge-header-batched), instead of a wait
// after each.
// DIR holds kforge_reduce_bfloat16_sum.cuh and/or kforge_reduce_float16_sum.cuh.
#if __has_include("kforge_reduce_bfloat16_sum.cuh")
#include "kforge_reduce_bfloat16_sum.cuh"
#define KF_HAVE_BF16 1
#endif
#if __has_include("kforge_reduce_float16_sum.cuh")
#include "kforge_reduce_float16_sum.cuh"
#define KF_HAVE_F16 1
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "half_kforge: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                                   \
        }                                                                                              \
    } while (0)

#include "half_time.h"

template <typename T, typename API, typename WS, typename INIT, typename NAME>
static int run_all(const char *dtype, const std::vector<long long> &ns, API api, WS ws_bytes, INIT ws_init,
                   NAME variant, bool batched)
{
    int bad = 0;
    for (long long n : ns) {
        std::vector<T> h(n);
        std::vector<float> v(n);
        fill(h, v, 42 + n);
        double want = 0;
        for (long long i = 0; i < n; i++) want += v[i];
        T *d;
        float *out;
        void *ws;
        size_t wb = ws_bytes((size_t)n);
        CK(cudaMalloc(&d, n * sizeof(T)));
        CK(cudaMalloc(&out, sizeof(float)));
        CK(cudaMalloc(&ws, wb));
        CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        CK(ws_init(ws, wb, 0));
        auto run = [&] { CK(api(d, (size_t)n, out, ws, wb, 0)); };
        CK(cudaMemset(out, 0xff, sizeof(float)));
        run();
        float got;
        CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        bool ok = (double)got == want;
        double ms = ok ? (batched ? time_median_batched(run) : time_median(run)) : 0;
        bad += !ok;
        printf("CASE kind=full shape=%lld dtype=%s impl=kforge-header%s status=%s us=%.2f gbps=%.1f variant=\"%s\"\n", n,
               dtype, batched ? "-batched" : "", ok ? "PASS" : "FAIL", ms * 1e3, ok ? n * sizeof(T) / (ms * 1e6) : 0.0, variant((size_t)n));
        fflush(stdout);
        CK(cudaFree(ws));
        CK(cudaFree(out));
        CK(cudaFree(d));
    }
    return bad;
}

int main(int argc, char **argv)
{
    std::string dtype = "bfloat16";
    std::vector<long long> ns;
    bool batched = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dtype")) dtype = argv[i + 1];
        else if (!strcmp(argv[i], "--batched")) batched = atoi(argv[i + 1]) != 0;
        else if (!strcmp(argv[i], "--n")) ns.push_back(num(argv[i + 1]));
        else {
            fprintf(stderr, "usage: half_kforge --dtype bfloat16|float16 [--n N]... [--batched 0|1]\n");
            return 2;
        }
    }
    flush_init();
#ifdef KF_HAVE_BF16
    if (dtype == "bfloat16")
        return run_all<__nv_bfloat16>("bfloat16", ns, kforge_reduce_bfloat16_sum, kforge_reduce_bfloat16_sum_workspace,
                                      kforge_reduce_bfloat16_sum_workspace_init, kforge_reduce_bfloat16_sum_variant, batched)
                   ? 1 : 0;
#endif
#ifdef KF_HAVE_F16
    if (dtype == "float16")
        return run_all<__half>("float16", ns, kforge_reduce_float16_sum, kforge_reduce_float16_sum_workspace,
                               kforge_reduce_float16_sum_workspace_init, kforge_reduce_float16_sum_variant, batched)
                   ? 1 : 0;
#endif
    fprintf(stderr, "half_kforge: no header for %s was included\n", dtype.c_str());
    return 2;
}
