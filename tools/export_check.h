/*
 * export_check.h -- what the GPU checks of exported headers share
 * (tools/export_check.cu: reduce, tools/export_rows_check.cu: reduce_rows):
 * the element type and op they were built for, data whose reduction is exact
 * in any order, the CPU operator, sizes on the command line, and timing the
 * kforge way.  Include it after the exported header (it needs the CUDA
 * runtime) with KFORGE_T and KFORGE_OP defined.
 */
#ifndef KF_EXPORT_CHECK_H
#define KF_EXPORT_CHECK_H

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

#ifndef KF_STR
#define KF_STR2(x) #x
#define KF_STR(x) KF_STR2(x)
#endif
#define KF_CAT2(a, b) a##b
#define KF_CAT(a, b) KF_CAT2(a, b)

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

static inline uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline T make_value(uint64_t r)
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

static inline T identity()
{
    switch (op) {
    case SUM: case OR: case XOR: return T(0);
    case PROD: return T(1);
    case AND: return (T)~(U)0;
    case MIN: return std::is_floating_point<T>::value ? T(INFINITY) : std::numeric_limits<T>::max();
    default: return std::is_floating_point<T>::value ? T(-INFINITY) : std::numeric_limits<T>::lowest();
    }
}

static inline T combine(T a, T b)
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

static inline T reference(const T *x, size_t n)
{
    T r = identity();
    for (size_t i = 0; i < n; i++)
        r = combine(r, x[i]);
    return r;
}

static inline bool same(T a, T b) { return memcmp(&a, &b, sizeof a) == 0; }

static inline std::string text(T x)
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

// The seeded data: element i of every check (independent of the sizes).
static inline std::vector<T> make_data(size_t n)
{
    std::vector<T> host(n);
    uint64_t seed = 42;
    for (size_t i = 0; i < n; i++)
        host[i] = make_value(splitmix(&seed));
    return host;
}

// ----------------------------------------------------------------------------
// sizes: an integer or 2^K

static inline bool parse_size(const char *s, size_t *out, char **rest = nullptr)
{
    char *end;
    if (s[0] == '2' && s[1] == '^') {
        long k = strtol(s + 2, &end, 10);
        if (end == s + 2 || k < 0 || k > 40) return false;
        *out = (size_t)1 << k;
    } else {
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s) return false;
        *out = (size_t)v;
    }
    if (rest)
        *rest = end;
    return rest || *end == '\0';
}

// A comma-separated list, each item parsed by item(text, &value).
template <typename V, typename F>
static inline bool parse_list(const char *s, std::vector<V> *out, F item)
{
    out->clear();
    std::string all(s);
    size_t p = 0;
    while (p <= all.size()) {
        size_t q = all.find(',', p);
        if (q == std::string::npos) q = all.size();
        V v;
        if (!item(all.substr(p, q - p).c_str(), &v)) return false;
        out->push_back(v);
        p = q + 1;
    }
    return true;
}

// ----------------------------------------------------------------------------
// timing the kforge way (src/exec/timing.c, src/core/stats.c): 3 warm-up
// calls; then repetitions in batches of up to 32 on one stream, each preceded
// by an untimed cuMemsetD32Async over 2 x L2 with the value rep (kforge's
// flush, reached through cudaGetDriverEntryPointByVersion, so no -lcuda) and
// timed by a pair of events around the call; stop after 1000, or after 10
// once the relative standard deviation is <= 0.5% or 0.5 s of timed
// repetitions are spent.  Making the input (a second per GiB) leaves the GPU
// idle, which kforge's worker does not before its cases: the first timing is
// preceded by 0.2 s of flushes, untimed, so that the GPU's clocks are where
// kforge finds them.

typedef int (*memset_d32_fn)(unsigned long long, unsigned int, size_t, cudaStream_t);

static inline memset_d32_fn memset_d32()
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

static inline double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timing {
    double median_ms, min_ms;
    size_t reps;
};

class kforge_timer {
public:
    explicit kforge_timer(cudaStream_t s) : s_(s)
    {
        cudaDeviceProp prop;
        int dev = 0;
        CK(cudaGetDevice(&dev));
        CK(cudaGetDeviceProperties(&prop, dev));
        bytes_ = (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : 64 << 20) * 2;
        CK(cudaMalloc(&flush_, bytes_));
        d32_ = memset_d32();
        for (auto &e : ev_) CK(cudaEventCreate(&e));
        for (double t1 = now_s(); now_s() - t1 < 0.2;) {
            flush(0);
            CK(cudaStreamSynchronize(s_));
        }
    }
    ~kforge_timer()
    {
        for (auto &e : ev_) cudaEventDestroy(e);
        cudaFree(flush_);
    }

    // call() enqueues one call on the stream and returns its status.
    template <typename F> timing time(F call)
    {
        const int min_reps = 10, max_reps = 1000;
        const double max_time = 0.5, max_noise = 0.005;
        for (int i = 0; i < 3; i++) CK(call());
        CK(cudaStreamSynchronize(s_));
        std::vector<double> ms;
        double t0 = now_s();
        int batch = min_reps < batch_max ? min_reps : batch_max;
        for (;;) {
            batch = std::max(1, std::min(batch, max_reps - (int)ms.size()));
            for (int i = 0; i < batch; i++) {
                flush((unsigned)(ms.size() + i));
                CK(cudaEventRecord(ev_[2 * i], s_));
                CK(call());
                CK(cudaEventRecord(ev_[2 * i + 1], s_));
                CK(cudaEventSynchronize(ev_[2 * i + 1])); // each repetition waited for, as kforge does
            }
            CK(cudaEventSynchronize(ev_[2 * batch - 1]));
            for (int i = 0; i < batch; i++) {
                float t;
                CK(cudaEventElapsedTime(&t, ev_[2 * i], ev_[2 * i + 1]));
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
        std::sort(ms.begin(), ms.end());
        size_t m = ms.size();
        timing t = {m % 2 ? ms[m / 2] : (ms[m / 2 - 1] + ms[m / 2]) / 2, ms[0], m};
        return t;
    }

private:
    static const int batch_max = 32;
    void flush(unsigned value)
    {
        int r = d32_((unsigned long long)flush_, value, bytes_ / 4, s_);
        if (r != 0) {
            fprintf(stderr, "export_check: cuMemsetD32Async (L2 flush): CUresult %d\n", r);
            exit(3);
        }
    }
    cudaStream_t s_;
    void *flush_ = nullptr;
    size_t bytes_ = 0;
    memset_d32_fn d32_ = nullptr;
    cudaEvent_t ev_[2 * batch_max];
};

#endif
