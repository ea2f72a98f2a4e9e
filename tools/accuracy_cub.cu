/*
 * accuracy_cub.cu -- the error and the time of an exported float32 sum
 * header next to CUB's DeviceReduce::Sum, on the data of issue 35: n values
 * uniform in [0, 1), against their exact sum (long double, compensated).
 *
 *   kforge export --dtype float32 --op sum -o build/acc/kforge_reduce_float32_sum.cuh   # the default
 *   nvcc -std=c++17 -O3 -arch=sm_90 -I build/acc tools/accuracy_cub.cu -o build/accuracy_cub
 *   build/accuracy_cub 2^20 2^24 2^28 2^30
 *
 * Built with -DKFORGE_OP=max -DKFORGE_FN=kforge_reduce_float32_max it times a
 * max header next to cub::DeviceReduce::Max (its error is 0 either way).
 *
 * For each n: one JSON line with both relative errors |got - exact| / exact,
 * averaged over SEEDS data sets (default 5: one sum's error is one draw of a
 * random variable, and either side can be lucky), their ratio, and both
 * median times (on the first data set) (tools/export_check.h: L2 flushed before
 * every repetition, the kforge stopping rule), kforge and CUB taking turns
 * ROUNDS times (default 3; the medians' median).  Exit 0, 2 usage, 3 CUDA.
 */
#ifndef KFORGE_FN
#define KFORGE_FN kforge_reduce_float32_sum
#endif
#define KFORGE_T float
#ifndef KFORGE_OP
#define KFORGE_OP sum /* or max (-DKFORGE_OP=max -DKFORGE_FN=kforge_reduce_float32_max): times only */
#endif
#ifndef KFORGE_HEADER
#define KFORGE_HEADER KF_STR(KFORGE_FN.cuh)
#endif
#define KF_STR2(x) #x
#define KF_STR(x) KF_STR2(x)
#include KFORGE_HEADER
#include "export_check.h"

#include <cub/cub.cuh>

#define KF_WS KF_CAT(KFORGE_FN, _workspace)
#define KF_WS_INIT KF_CAT(KFORGE_FN, _workspace_init)

int main(int argc, char **argv)
{
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; i++) {
        size_t n;
        if (!parse_size(argv[i], &n) || n == 0) {
            fprintf(stderr, "usage: accuracy_cub N... (N: an integer or 2^K)\n");
            return 2;
        }
        sizes.push_back(n);
    }
    if (sizes.empty())
        sizes = {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28, (size_t)1 << 30};
    int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 3;
    if (rounds < 1)
        rounds = 1;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    kforge_timer timer(s);
    int seeds = getenv("SEEDS") ? atoi(getenv("SEEDS")) : 5;
    if (seeds < 1)
        seeds = 1;
    for (size_t n : sizes) {
        std::vector<float> x(n);
        double ek = 0, ec = 0, wk = 0, wc = 0;
        std::vector<double> tk, tc;
        for (int sd = 0; sd < seeds; sd++) {
            uint64_t seed = 0x35u + n + 0x9e37ull * sd;
            long double sum = 0, c = 0, mx = 0;
            for (size_t i = 0; i < n; i++) {
                x[i] = (float)((splitmix(&seed) >> 40) * 0x1p-24); /* uniform in [0, 1), 24 bits */
                long double y = (long double)x[i] - c, t = sum + y;
                c = (t - sum) - y;
                sum = t;
                mx = x[i] > mx ? x[i] : mx;
            }
            if (op != SUM)
                sum = mx; /* exact */
            float *in, *out;
            CK(cudaMalloc(&in, n * sizeof(float)));
            CK(cudaMalloc(&out, 2 * sizeof(float)));
            CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
            size_t wsb = KF_WS(n), cub_b = 0;
            void *ws, *cub_ws;
            CK(cudaMalloc(&ws, wsb ? wsb : 1));
            CK(KF_WS_INIT(ws, wsb, s));
            auto cub_call = [&](void *w, size_t &b) {
                return op == SUM ? cub::DeviceReduce::Sum(w, b, in, out + 1, (int64_t)n, s)
                                 : cub::DeviceReduce::Max(w, b, in, out + 1, (int64_t)n, s);
            };
            CK(cub_call(nullptr, cub_b));
            CK(cudaMalloc(&cub_ws, cub_b ? cub_b : 1));
            auto kf = [&]() { return KFORGE_FN(in, n, out, ws, wsb, s); };
            auto cb = [&]() { return cub_call(cub_ws, cub_b); };
            CK(kf());
            CK(cb());
            float got[2];
            CK(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            double e1 = fabsl((long double)got[0] - sum) / sum, e2 = fabsl((long double)got[1] - sum) / sum;
            ek += e1 / seeds, ec += e2 / seeds;
            wk = std::max(wk, e1), wc = std::max(wc, e2);
            for (int r = 0; r < (sd == 0 ? rounds : 0); r++) {
                tk.push_back(timer.time(kf).median_ms);
                tc.push_back(timer.time(cb).median_ms);
            }
            CK(cudaFree(in));
            CK(cudaFree(out));
            CK(cudaFree(ws));
            CK(cudaFree(cub_ws));
        }
        std::sort(tk.begin(), tk.end());
        std::sort(tc.begin(), tc.end());
        printf("{\"op\": \"%s\", \"n\": %zu, \"seeds\": %d, \"kforge_rel_err\": %.3g, \"cub_rel_err\": %.3g, "
               "\"kforge_worst\": %.3g, \"cub_worst\": %.3g, \"err_ratio\": %.3g, "
               "\"kforge_us\": %.3f, \"cub_us\": %.3f, \"speedup_vs_cub\": %.3f, \"rounds\": %d}\n",
               op_name, n, seeds, ek, ec, wk, wc, ec > 0 ? ek / ec : (ek > 0 ? INFINITY : 1.0), 1e3 * tk[rounds / 2], 1e3 * tc[rounds / 2],
               tc[rounds / 2] / tk[rounds / 2], rounds);
        fflush(stdout);
    }
    return 0;
}
