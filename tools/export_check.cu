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
 * Times the kforge way (src/exec/bench.c, src/core/stats.c): 3 warm-up
 * calls; then repetitions in batches of up to 32 on one stream, each
 * preceded by an untimed cuMemsetD32Async over 2 x L2 with the value rep
 * (kforge's flush, reached through cudaGetDriverEntryPointByVersion, so no
 * -lcuda) and timed by a pair of events around the call; stop after 1000,
 * or after 10 once the relative standard deviation is <= 0.5% or 0.5 s of
 * timed repetitions are spent; the median.  Making the input (a second per
 * GiB) leaves the GPU idle, which kforge's worker does not before its
 * cases: the first timed size is preceded by 0.2 s of flushes, untimed, so
 * that the GPU's clocks are where kforge finds them.
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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <time.h>
#include <type_traits>
#include <vector>

#define KF_CAT2(a, b) a##b
#define KF_CAT(a, b) KF_CAT2(a, b)
#define API KFORGE_FN
#define API_WORKSPACE KF_CAT(KFORGE_FN, _workspace)
#define API_INIT KF_CAT(KFORGE_FN, _workspace_init)
#define API_VARIANT KF_CAT(KFORGE_FN, _variant)

typedef KFORGE_T T;
typedef typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type U;
enum { SUM, MIN, MAX, PROD, AND, OR, XOR };
#define OP_sum SUM
#define OP_min MIN
#define OP_max MAX
#define OP_prod PROD
#define OP_and AND
#define OP_or OR
#define OP_xor XOR
static const int op = KF_CAT(OP_, KFORGE_OP);
static const char *const op_name = KF_STR(KFORGE_OP);

#define CK(call)                                                                                              \
    do {                                                                                                      \
        cudaError_t e_ = (call);                                                                              \
        if (e_ != cudaSuccess) {                                                                              \
            fprintf(stderr, "export_check: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                                          \
        }                                                                                                     \
    } while (0)

// ----------------------------------------------------------------------------
// data and reference

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static T make_value(uint64_t r)
{
    if (op == SUM || op == PROD) // +-1: every partial sum and product is exact
        return r & 1 ? T(1) : T(-1);
    if (op == MIN || op == MAX) {
        if (std::is_floating_point<T>::value)
            return T((double)(int64_t)(r >> 40) / 1024.0 - 4096.0); // exact in float
        return (T)r;
    }
    if (op == AND) // mostly set bits, so that ranges do not all reduce to 0
        return (T)~((U)1 << (r % (8 * sizeof(T))));
    return (T)r;
}

static T identity()
{
    switch (op) {
    case SUM: case OR: case XOR: return T(0);
    case PROD: return T(1);
    case AND: return (T)~(U)0;
    case MIN: return std::is_floating_point<T>::value ? T(INFINITY) : std::numeric_limits<T>::max();
    default: return std::is_floating_point<T>::value ? T(-INFINITY) : std::numeric_limits<T>::lowest();
    }
}

static T combine(T a, T b)
{
    switch (op) {
    case SUM:
        if (std::is_floating_point<T>::value) return a + b;
        return (T)((U)a + (U)b); // wraps, as the GPU does
    case PROD:
        if (std::is_floating_point<T>::value) return a * b;
        return (T)((U)a * (U)b);
    case MIN: return b < a ? b : a;
    case MAX: return b > a ? b : a;
    case AND: return (T)((U)a & (U)b);
    case OR: return (T)((U)a | (U)b);
    default: return (T)((U)a ^ (U)b);
    }
}

static T reference(const T *x, size_t n)
{
    T r = identity();
    for (size_t i = 0; i < n; i++)
        r = combine(r, x[i]);
    return r;
}

static bool same(T a, T b) { return memcmp(&a, &b, sizeof a) == 0; }

static std::string text(T x)
{
    char buf[64];
    if (std::is_floating_point<T>::value)
        snprintf(buf, sizeof buf, "%.17g", (double)x);
    else if (std::is_signed<T>::value)
        snprintf(buf, sizeof buf, "%lld", (long long)x);
    else
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)x);
    return buf;
}

// ----------------------------------------------------------------------------
// options

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    if (s[0] == '2' && s[1] == '^') {
        long k = strtol(s + 2, &end, 10);
        if (*end || k < 0 || k > 40) return false;
        *out = (size_t)1 << k;
        return true;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || end == s) return false;
    *out = (size_t)v;
    return true;
}

static bool parse_list(const char *s, std::vector<size_t> *out)
{
    out->clear();
    std::string all(s);
    size_t p = 0;
    while (p <= all.size()) {
        size_t q = all.find(',', p);
        if (q == std::string::npos) q = all.size();
        size_t v;
        if (!parse_size(all.substr(p, q - p).c_str(), &v)) return false;
        out->push_back(v);
        p = q + 1;
    }
    return true;
}

// kforge's L2 flush: cuMemsetD32Async(flush, value, words, stream).
typedef int (*memset_d32_fn)(unsigned long long, unsigned int, size_t, cudaStream_t);

static memset_d32_fn memset_d32()
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn) {
        fprintf(stderr, "export_check: no cuMemsetD32Async in the driver\n");
        exit(3);
    }
    return (memset_d32_fn)fn;
}

static double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    // 30 sizes: tiny, odd, around powers of two and tile boundaries, up to 2^30
    std::vector<size_t> checks = {1, 2, 3, 31, 32, 33, 255, 1000, 1023, 1025, 4097, 65535, 65537, 100003,
                                  262147, 999999, 1 << 20, (1 << 20) + 1, 3000017, (1 << 22) - 1, 1 << 24,
                                  (1 << 24) + 7, 50000017, (1 << 26) - 5, (1 << 27) + 1, 1 << 28, (1 << 28) + 3,
                                  500000009, (1u << 30) - 1, 1u << 30};
    std::vector<size_t> times;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check") && i + 1 < argc) {
            if (!parse_list(argv[++i], &checks)) { fprintf(stderr, "export_check: bad --check list\n"); return 2; }
        } else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            if (!parse_list(argv[++i], &times)) { fprintf(stderr, "export_check: bad --time list\n"); return 2; }
        } else if (!strcmp(argv[i], "--no-check")) {
            checks.clear();
        } else {
            fprintf(stderr, "usage: export_check [--check N,N,...|--no-check] [--time N,N,...]\n");
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

    std::vector<T> host(nmax + slack);
    uint64_t seed = 42;
    for (size_t i = 0; i < host.size(); i++) host[i] = make_value(splitmix(&seed));
    T *d_in, *d_out;
    CK(cudaMalloc(&d_in, host.size() * sizeof(T)));
    CK(cudaMalloc(&d_out, 2 * sizeof(T)));
    CK(cudaMemcpy(d_in, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
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
        size_t flush_bytes = (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : 64 << 20) * 2;
        void *flush;
        CK(cudaMalloc(&flush, flush_bytes));
        memset_d32_fn d32 = memset_d32();
#define FLUSH(value)                                                                             \
    do {                                                                                         \
        int r_ = d32((unsigned long long)flush, (unsigned)(value), flush_bytes / 4, s);          \
        if (r_ != 0) {                                                                           \
            fprintf(stderr, "export_check: cuMemsetD32Async (L2 flush): CUresult %d\n", r_);     \
            exit(3);                                                                             \
        }                                                                                        \
    } while (0)
        for (double t1 = now_s(); now_s() - t1 < 0.2;) {
            FLUSH(0);
            CK(cudaStreamSynchronize(s));
        }
        const int batch_max = 32, min_reps = 10, max_reps = 1000;
        const double max_time = 0.5, max_noise = 0.005;
        cudaEvent_t ev[2 * batch_max];
        for (auto &e : ev) CK(cudaEventCreate(&e));
        for (size_t n : times) {
            for (int i = 0; i < 3; i++) CK(API(d_in, n, d_out, ws, ws_bytes, s));
            CK(cudaStreamSynchronize(s));
            std::vector<double> ms;
            double t0 = now_s();
            int batch = min_reps < batch_max ? min_reps : batch_max;
            for (;;) {
                batch = std::max(1, std::min(batch, max_reps - (int)ms.size()));
                for (int i = 0; i < batch; i++) {
                    FLUSH(ms.size() + i);
                    CK(cudaEventRecord(ev[2 * i], s));
                    CK(API(d_in, n, d_out, ws, ws_bytes, s));
                    CK(cudaEventRecord(ev[2 * i + 1], s));
                }
                CK(cudaEventSynchronize(ev[2 * batch - 1]));
                for (int i = 0; i < batch; i++) {
                    float t;
                    CK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
                    ms.push_back(t);
                }
                double elapsed = now_s() - t0, mean = 0, var = 0;
                for (double t : ms) mean += t;
                mean /= ms.size();
                for (double t : ms) var += (t - mean) * (t - mean);
                double sd = ms.size() > 1 ? std::sqrt(var / (ms.size() - 1)) : 0;
                int reps = (int)ms.size();
                if (reps >= max_reps || (reps >= min_reps && (elapsed >= max_time || sd / mean <= max_noise)))
                    break;
                double per = elapsed / reps;
                int fit = per > 0 ? (int)((max_time - elapsed) / per) : batch_max;
                batch = fit < 1 ? 1 : (fit > batch_max ? batch_max : fit);
            }
            std::vector<double> sorted = ms;
            std::sort(sorted.begin(), sorted.end());
            size_t m = sorted.size();
            double median = m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
            // the last timed call's result must still be right
            T ref = reference(host.data(), n);
            CK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
            bool ok = same(got, ref);
            wrong += !ok;
            printf("{\"time\": %zu, \"median_ms\": %.6f, \"min_ms\": %.6f, \"reps\": %zu, \"gbps\": %.1f, \"ok\": %s, "
                   "\"variant\": \"%s\"}\n",
                   n, median, sorted[0], m, n * sizeof(T) / (median * 1e6), ok ? "true" : "false", API_VARIANT(n));
            fflush(stdout);
        }
        for (auto &e : ev) CK(cudaEventDestroy(e));
        CK(cudaFree(flush));
    }
    CK(cudaFree(ws));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "export_check: %s %s: %d wrong\n", KF_STR(KFORGE_T), op_name, wrong);
    return wrong ? 1 : 0;
}
