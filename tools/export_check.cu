/*
 * export_check.cu -- checks and times a header written by `kforge export`
 * through its host API only, as a user's program would (issue 13).
 *
 *   kforge export --dtype float32 --op sum -o build/kforge_reduce_float32_sum.cuh
 *   nvcc -std=c++17 -O3 -arch=sm_90 -I build tools/export_check.cu -o build/export_check
 *   build/export_check                       # the 30 default sizes, checked
 *   build/export_check --check 1000,2^20 --time 2^20,2^24,2^28
 *
 * Another dtype or op: -DKFORGE_T=int -DKFORGE_OP=max -DKFORGE_FN=kforge_reduce_int32_max
 * (KFORGE_HEADER defaults to "<KFORGE_FN>.cuh").
 *
 * Checks: at each size (and at a few odd pointer offsets), the result
 * against a CPU reference, exactly: sums and products of +-1 are exact in
 * any order, min, max and the bitwise ops are exact anyway.  Each size is
 * run twice (the second run shows the workspace was left ready), with the
 * output poisoned before each.  Also: n == 0 gives the identity, a null
 * output, a null input or workspace and a workspace too small are refused.
 *
 * Times the kforge way (tools/export_check.h: L2 flushed before every
 * repetition, events around each call, kforge's stopping rule, the median),
 * each size's input, output and workspace in allocations of their own as in
 * kforge's worker (--buffer shared: the checks' one big input and their
 * workspace); --repeat K times each size K times, each in new memory.
 *
 * One JSON line per check and per timing on stdout.  Exit: 0 all right,
 * 1 a wrong result, 2 usage, 3 a CUDA error.
 */
#define KF_STR2(x) #x
#define KF_STR(x) KF_STR2(x)
#ifndef KFORGE_FN
#define KFORGE_FN kforge_reduce_float32_sum
#endif
#ifndef KFORGE_T
#define KFORGE_T float
#endif
#ifndef KFORGE_OP
#define KFORGE_OP sum
#endif
#ifndef KFORGE_HEADER
#define KFORGE_HEADER KF_STR(KFORGE_FN.cuh)
#endif
#include KFORGE_HEADER

#include "export_check.h"

#define API KFORGE_FN
#define API_WORKSPACE KF_CAT(KFORGE_FN, _workspace)
#define API_INIT KF_CAT(KFORGE_FN, _workspace_init)
#define API_VARIANT KF_CAT(KFORGE_FN, _variant)

static bool parse_n(const char *s, size_t *n) { return parse_size(s, n); }

int main(int argc, char **argv)
{
    // 30 sizes: tiny, odd, around powers of two and tile boundaries, up to 2^30
    std::vector<size_t> checks = {1, 2, 3, 31, 32, 33, 255, 1000, 1023, 1025, 4097, 65535, 65537, 100003,
                                  262147, 999999, 1 << 20, (1 << 20) + 1, 3000017, (1 << 22) - 1, 1 << 24,
                                  (1 << 24) + 7, 50000017, (1 << 26) - 5, (1 << 27) + 1, 1 << 28, (1 << 28) + 3,
                                  500000009, (1u << 30) - 1, 1u << 30};
    std::vector<size_t> times;
    bool own_buffer = true;
    int repeat = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check") && i + 1 < argc) {
            if (!parse_list(argv[++i], &checks, parse_n)) { fprintf(stderr, "export_check: bad --check list\n"); return 2; }
        } else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            if (!parse_list(argv[++i], &times, parse_n)) { fprintf(stderr, "export_check: bad --time list\n"); return 2; }
        } else if (!strcmp(argv[i], "--no-check")) {
            checks.clear();
        } else if (!strcmp(argv[i], "--buffer") && i + 1 < argc && (!strcmp(argv[i + 1], "own") || !strcmp(argv[i + 1], "shared"))) {
            own_buffer = !strcmp(argv[++i], "own");
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc && atoi(argv[i + 1]) >= 1) {
            repeat = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: export_check [--check N,N,...|--no-check] [--time N,N,...] [--buffer own|shared] [--repeat K]\n");
            return 2;
        }
    }
    size_t nmax = 1;
    for (size_t n : checks) nmax = std::max(nmax, n);
    for (size_t n : times) nmax = std::max(nmax, n);
    const size_t slack = 4; // room for the pointer offsets

    cudaDeviceProp prop;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    fprintf(stderr, "export_check: %s on %s (%d SMs)\n", KF_STR(KFORGE_FN), prop.name, prop.multiProcessorCount);

    std::vector<T> host = make_data(nmax + slack);
    T *d_in, *d_out;
    // Only timing in buffers of their own: no big input on the device.
    // Where a buffer lands matters at small sizes: on the H100, 2^20 timed
    // in memory allocated after 1 GiB took 4-5% longer, in kforge's worker
    // as here, with the same machine code.
    size_t nbig = checks.empty() && own_buffer ? 64 : host.size();
    CK(cudaMalloc(&d_in, nbig * sizeof(T)));
    CK(cudaMalloc(&d_out, 2 * sizeof(T)));
    CK(cudaMemcpy(d_in, host.data(), nbig * sizeof(T), cudaMemcpyHostToDevice));
    size_t ws_bytes = API_WORKSPACE(nmax + slack);
    void *ws;
    CK(cudaMalloc(&ws, ws_bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(API_INIT(ws, ws_bytes, s));

    int wrong = 0;
    // refusals and the empty input
    if (API(d_in, 10, nullptr, ws, ws_bytes, s) != cudaErrorInvalidValue ||
        API(nullptr, 10, d_out, ws, ws_bytes, s) != cudaErrorInvalidValue ||
        API(d_in, 10, d_out, nullptr, ws_bytes, s) != cudaErrorInvalidValue ||
        API(d_in, nmax, d_out, ws, 511, s) != cudaErrorInvalidValue) {
        fprintf(stderr, "export_check: a bad argument was not refused with cudaErrorInvalidValue\n");
        wrong++;
    }
    T got;
    CK(cudaMemsetAsync(d_out, 0x5A, sizeof(T), s));
    CK(API(nullptr, 0, d_out, ws, ws_bytes, s));
    CK(cudaMemcpyAsync(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    printf("{\"check\": 0, \"offset\": 0, \"ok\": %s, \"got\": \"%s\", \"ref\": \"%s\"}\n",
           same(got, identity()) ? "true" : "false", text(got).c_str(), text(identity()).c_str());
    wrong += !same(got, identity());

    for (size_t k = 0; k < checks.size(); k++) {
        size_t n = checks[k], off = k % 4 == 3 ? k % 3 + 1 : 0; // every fourth size misaligned
        T ref = reference(host.data() + off, n), g[2];
        for (int run = 0; run < 2; run++) {
            CK(cudaMemsetAsync(d_out, run ? 0x00 : 0xFF, sizeof(T), s));
            CK(API(d_in + off, n, d_out, ws, ws_bytes, s));
            CK(cudaMemcpyAsync(&g[run], d_out, sizeof(T), cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
        }
        bool ok = same(g[0], ref) && same(g[1], ref);
        wrong += !ok;
        printf("{\"check\": %zu, \"offset\": %zu, \"ok\": %s, \"got\": \"%s\", \"got2\": \"%s\", \"ref\": \"%s\", "
               "\"variant\": \"%s\"}\n",
               n, off, ok ? "true" : "false", text(g[0]).c_str(), text(g[1]).c_str(), text(ref).c_str(),
               API_VARIANT(n));
        fflush(stdout);
    }

    if (!times.empty()) {
        kforge_timer timer(s);
        std::vector<void *> kept; // --repeat: earlier buffers stay, so that each timing gets new memory
        for (size_t n : times)
            for (int k = 0; k < repeat; k++) {
                // As kforge's worker does: the input of each size in its own
                // allocation of n elements and 64 bytes, then the output and
                // a workspace of its own (--buffer shared: the start of the
                // one allocation the checks used, and their workspace)
                T *src = d_in, *out = d_out;
                void *w = ws;
                size_t wb = ws_bytes;
                if (own_buffer) {
                    wb = API_WORKSPACE(n);
                    CK(cudaMalloc(&src, n * sizeof(T) + 64));
                    CK(cudaMalloc(&out, 64));
                    CK(cudaMalloc(&w, wb));
                    CK(cudaMemcpy(src, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
                    CK(API_INIT(w, wb, s));
                }
                timing t = timer.time([&] { return API(src, n, out, w, wb, s); });
                // the last timed call's result must still be right
                T ref = reference(host.data(), n);
                CK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
                bool ok = same(got, ref);
                wrong += !ok;
                printf("{\"time\": %zu, \"median_ms\": %.6f, \"min_ms\": %.6f, \"reps\": %zu, \"gbps\": %.1f, "
                       "\"ok\": %s, \"variant\": \"%s\", \"buffer\": \"%s\", \"repeat\": %d}\n",
                       n, t.median_ms, t.min_ms, t.reps, n * sizeof(T) / (t.median_ms * 1e6), ok ? "true" : "false",
                       API_VARIANT(n), own_buffer ? "own" : "shared", k + 1);
                if (own_buffer) {
                    kept.push_back(src);
                    kept.push_back(out);
                    kept.push_back(w);
                }
                fflush(stdout);
            }
        for (void *p : kept)
            CK(cudaFree(p));
    }
    CK(cudaFree(ws));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "export_check: %s %s: %d wrong\n", KF_STR(KFORGE_T), op_name, wrong);
    return wrong ? 1 : 0;
}
