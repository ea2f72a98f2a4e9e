/*
 * cub_bench.cu -- the CUB baseline for kforge ("Beat CUB"): times
 * cub::DeviceReduce::Sum / Min / Max with exactly kforge's method
 * (src/bench.c, src/stats.c) on exactly kforge's data (src/verify.c):
 *
 *   - input: the counter-based splitmix64 generator of verify_fill, same
 *     key per (seed, dtype, op), so element i equals kforge's element i;
 *   - the result is checked against a CPU reference before timing (exact for
 *     integers and min/max, a Higham bound for float sums) and again after
 *     the last timed repetition; a wrong result ends the program (exit 1);
 *   - warm-up runs (default 3), then timed repetitions in batches of up to 32
 *     on one non-blocking stream; each repetition is preceded, when flushing
 *     (default), by an untimed cuMemsetD32Async over 2 x L2 bytes with the
 *     value rep (as kforge does), then timed by its own pair of events around
 *     the whole reduction (every CUB launch);
 *   - stop once reps >= max_reps, or reps >= min_reps and (noise <= max_noise
 *     or wall time in the timed loop >= max_time);
 *   - median, min, max, mean, sample stddev, noise = stddev / mean,
 *     GB/s = n * sizeof(T) / median, % of 2 * memclock * buswidth / 8.
 *
 * Temporary storage is sized and allocated once per (dtype, op, n), outside
 * timing.  num_items is passed as uint32_t when n fits (CUB then uses 32-bit
 * offsets, its fastest path), else as int64_t.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 tools/cub_bench.cu -o build/cub_bench
 *   build/cub_bench --dtype float32 --op sum --n 2^20,2^30
 *
 * One JSON line per (dtype, op, n) on stdout; messages on stderr.
 * Exit: 0 ok, 1 a wrong result, 2 usage, 3 CUDA error.
 */
#include <cub/cub.cuh>
#include <cub/version.cuh>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <time.h>
#include <vector>

// ----------------------------------------------------------------------------
// Options

enum Dtype { INT32, UINT32, INT64, FLOAT32, FLOAT64, DTYPE_COUNT };    // kforge's kf_dtype order
enum Op { OP_SUM, OP_MIN, OP_MAX };                                     // kforge's kf_op order
static const char *const dtype_names[] = {"int32", "uint32", "int64", "float32", "float64"};
static const char *const op_names[] = {"sum", "min", "max"};

struct Opts {
    std::vector<int> dtypes, ops;
    std::vector<int64_t> ns;
    bool flush = true;
    uint64_t seed = 42;
    int warmup = 3, min_reps = 10, max_reps = 1000;
    double max_time_s = 0.5, max_noise = 0.005;
    double peak_gbps = 0;   // 0: from the device attributes
    int device = 0;
};

#define KF_BATCH 32
#define KF_MAX_REPS_CAP 100000

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cub_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess)                                                            \
            die(3, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorString(e_), \
                cudaGetErrorName(e_));                                                    \
    } while (0)

static void usage(FILE *f)
{
    fputs("usage: cub_bench [OPTIONS]\n"
          "  --dtype LIST      int32 uint32 int64 float32 float64 (comma list; default float32)\n"
          "  --op LIST         sum min max (comma list; default sum)\n"
          "  --n LIST          element counts, decimal or 2^k, comma list, repeatable (default 2^20)\n"
          "  --no-flush        do not evict L2 before each repetition\n"
          "  --seed S          input seed (default 42, as kforge)\n"
          "  --warmup N        untimed runs before timing (default 3)\n"
          "  --min-reps N      (default 10)\n"
          "  --max-reps N      (default 1000)\n"
          "  --max-time S      seconds of timed loop after which to stop once min-reps (default 0.5)\n"
          "  --max-noise X     stop once stddev/mean <= X (default 0.005)\n"
          "  --peak-gbps X     theoretical bandwidth for pct_peak (default: from the device)\n"
          "  --device N        GPU index (default 0)\n",
          f);
}

static int lookup(const char *const *names, int count, const std::string &s)
{
    for (int i = 0; i < count; i++)
        if (s == names[i])
            return i;
    return -1;
}

static std::vector<std::string> split(const char *s)
{
    std::vector<std::string> out;
    std::string cur;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == 0) {
            if (!cur.empty())
                out.push_back(cur);
            cur.clear();
            if (*p == 0)
                break;
        } else if (*p != ' ') {
            cur += *p;
        }
    }
    return out;
}

static int64_t parse_n(const std::string &s)
{
    const char *p = s.c_str();
    char *end;
    errno = 0;
    if (strncmp(p, "2^", 2) == 0) {
        long k = strtol(p + 2, &end, 10);
        if (*end || end == p + 2 || k < 0 || k > 40)
            die(2, "bad --n '%s' (2^k needs 0 <= k <= 40)", p);
        return (int64_t)1 << k;
    }
    long long v = strtoll(p, &end, 10);
    if (*end || end == p || errno || v < 1)
        die(2, "bad --n '%s' (a positive integer or 2^k)", p);
    return v;
}

static long parse_int(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || end == s || errno || v < lo || v > hi)
        die(2, "bad %s '%s' (an integer in [%ld, %ld])", opt, s, lo, hi);
    return v;
}

static double parse_double(const char *opt, const char *s, double lo)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || errno || !(v >= lo) || !std::isfinite(v))
        die(2, "bad %s '%s' (a number >= %g)", opt, s, lo);
    return v;
}

static Opts parse_args(int argc, char **argv)
{
    Opts o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *val = NULL;
        size_t eq = a.find('=');
        std::string name = a;
        if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
            name = a.substr(0, eq);
            val = argv[i] + eq + 1;
        }
        auto need = [&]() -> const char * {
            if (val)
                return val;
            if (i + 1 >= argc)
                die(2, "%s needs a value", name.c_str());
            return argv[++i];
        };
        if (name == "--help" || name == "-h") {
            usage(stdout);
            exit(0);
        } else if (name == "--dtype") {
            for (auto &s : split(need())) {
                int d = lookup(dtype_names, DTYPE_COUNT, s);
                if (d < 0)
                    die(2, "unknown dtype '%s'", s.c_str());
                o.dtypes.push_back(d);
            }
        } else if (name == "--op") {
            for (auto &s : split(need())) {
                int k = lookup(op_names, 3, s);
                if (k < 0)
                    die(2, "unknown op '%s' (sum, min, max)", s.c_str());
                o.ops.push_back(k);
            }
        } else if (name == "--n") {
            for (auto &s : split(need()))
                o.ns.push_back(parse_n(s));
        } else if (name == "--no-flush") {
            o.flush = false;
        } else if (name == "--flush") {
            o.flush = true;
        } else if (name == "--seed") {
            const char *s = need();
            char *end;
            errno = 0;
            unsigned long long v = strtoull(s, &end, 0);
            if (*end || end == s || errno)
                die(2, "bad --seed '%s'", s);
            o.seed = v;
        } else if (name == "--warmup") {
            o.warmup = (int)parse_int("--warmup", need(), 0, 1000000);
        } else if (name == "--min-reps") {
            o.min_reps = (int)parse_int("--min-reps", need(), 1, KF_MAX_REPS_CAP);
        } else if (name == "--max-reps") {
            o.max_reps = (int)parse_int("--max-reps", need(), 1, KF_MAX_REPS_CAP);
        } else if (name == "--max-time") {
            o.max_time_s = parse_double("--max-time", need(), 0);
        } else if (name == "--max-noise") {
            o.max_noise = parse_double("--max-noise", need(), 0);
        } else if (name == "--peak-gbps") {
            o.peak_gbps = parse_double("--peak-gbps", need(), 0);
        } else if (name == "--device") {
            o.device = (int)parse_int("--device", need(), 0, 1024);
        } else {
            usage(stderr);
            die(2, "unknown option '%s'", a.c_str());
        }
    }
    if (o.min_reps > o.max_reps)
        die(2, "--min-reps (%d) is above --max-reps (%d)", o.min_reps, o.max_reps);
    if (o.dtypes.empty())
        o.dtypes.push_back(FLOAT32);
    if (o.ops.empty())
        o.ops.push_back(OP_SUM);
    if (o.ns.empty())
        o.ns.push_back((int64_t)1 << 20);
    return o;
}

// ----------------------------------------------------------------------------
// Data: kforge's verify_fill (src/verify.c) for sum/min/max

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t fill_key(int t, int op, uint64_t seed)
{
    uint64_t salt = UINT64_C(0x6b666f7267650000) | ((uint64_t)t << 8) | (uint64_t)op;
    return mix64(seed ^ mix64(salt));
}

/* 24 random bits k: k * 2^-23 - 1 is exact in float. */
static inline float uni32(uint64_t r) { return (float)((int32_t)(r >> 40) - 0x800000) * 0x1p-23f; }
/* 53 random bits. */
static inline double uni64(uint64_t r) { return (double)((int64_t)(r >> 11) - (INT64_C(1) << 52)) * 0x1p-52; }

template <typename T> static inline T from_bits(uint64_t r);
template <> inline int32_t from_bits<int32_t>(uint64_t r) { return (int32_t)(uint32_t)(r >> 32); }
template <> inline uint32_t from_bits<uint32_t>(uint64_t r) { return (uint32_t)(r >> 32); }
template <> inline int64_t from_bits<int64_t>(uint64_t r) { return (int64_t)r; }
template <> inline float from_bits<float>(uint64_t r) { return uni32(r); }
template <> inline double from_bits<double>(uint64_t r) { return uni64(r); }

static int nthreads(int64_t n)
{
    unsigned hc = std::thread::hardware_concurrency();
    int64_t t = hc ? hc : 4;
    int64_t by_size = n / (1 << 20) + 1;    // no threads for small inputs
    return (int)std::max<int64_t>(1, std::min<int64_t>({t, by_size, 64}));
}

/* Runs f(lo, hi, thread_index) over [0, n) split into contiguous chunks. */
template <typename F> static void parallel_for(int64_t n, int nt, F f)
{
    std::vector<std::thread> th;
    int64_t chunk = (n + nt - 1) / nt;
    for (int k = 0; k < nt; k++) {
        int64_t lo = std::min<int64_t>(n, k * chunk), hi = std::min<int64_t>(n, lo + chunk);
        if (nt == 1)
            f(lo, hi, k);
        else
            th.emplace_back(f, lo, hi, k);
    }
    for (auto &t : th)
        t.join();
}

/* Element i = mix64(key + (i + 1) * GOLDEN), as kforge's sequential loop. */
template <typename T> static void fill(int dt, int op, uint64_t seed, T *p, int64_t n)
{
    uint64_t key = fill_key(dt, op, seed);
    parallel_for(n, nthreads(n), [=](int64_t lo, int64_t hi, int) {
        uint64_t z = key + (uint64_t)lo * GOLDEN;
        for (int64_t i = lo; i < hi; i++) {
            z += GOLDEN;
            p[i] = from_bits<T>(mix64(z));
        }
    });
    /* Never all zeros: element 0 is made nonzero (depends on element 0 alone). */
    uint64_t r0 = mix64(key + GOLDEN);
    if constexpr (std::is_floating_point<T>::value) {
        if (p[0] == (T)0)
            p[0] = (T)0.5;
    } else {
        if (p[0] == (T)0)
            p[0] = (T)((uint64_t)1 << ((r0 >> 6) & (sizeof(T) * 8 - 1)));
    }
}

// ----------------------------------------------------------------------------
// Reference (as src/verify.c: wrapping integer sums, exact min/max, floats in
// long double with Neumaier compensation; here per-thread chunks, combined
// with the same compensation)

template <typename T> struct Ref {
    T value;
    double abs_sum;
};

template <typename T> static T identity(int op)
{
    if (op == OP_SUM)
        return (T)0;
    if constexpr (std::is_floating_point<T>::value)
        return op == OP_MIN ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    else
        return op == OP_MIN ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

static inline void neumaier(long double &s, long double &c, long double x)
{
    long double t = s + x;
    if (fabsl(s) >= fabsl(x))
        c += (s - t) + x;
    else
        c += (x - t) + s;
    s = t;
}

template <typename T> static Ref<T> reference(int op, const T *p, int64_t n)
{
    int nt = nthreads(n);
    std::vector<long double> ps(nt, 0), pc(nt, 0);
    std::vector<uint64_t> pu(nt, 0);
    std::vector<T> pm(nt, identity<T>(op));
    std::vector<double> pa(nt, 0);
    parallel_for(n, nt, [&](int64_t lo, int64_t hi, int k) {
        double as = 0;
        if (op == OP_SUM && std::is_floating_point<T>::value) {
            long double s = 0, c = 0;
            for (int64_t i = lo; i < hi; i++)
                neumaier(s, c, (long double)p[i]);
            ps[k] = s;
            pc[k] = c;
        } else if (op == OP_SUM) {
            uint64_t acc = 0;   // wraps like the GPU's two's complement
            for (int64_t i = lo; i < hi; i++)
                acc += (uint64_t)p[i];
            pu[k] = acc;
        } else if (op == OP_MIN) {
            T m = identity<T>(op);
            for (int64_t i = lo; i < hi; i++)
                m = p[i] < m ? p[i] : m;
            pm[k] = m;
        } else {
            T m = identity<T>(op);
            for (int64_t i = lo; i < hi; i++)
                m = p[i] > m ? p[i] : m;
            pm[k] = m;
        }
        for (int64_t i = lo; i < hi; i++)
            as += fabs((double)p[i]);
        pa[k] = as;
    });
    Ref<T> r;
    r.abs_sum = 0;
    for (int k = 0; k < nt; k++)
        r.abs_sum += pa[k];
    if (op == OP_SUM && std::is_floating_point<T>::value) {
        long double s = 0, c = 0;
        for (int k = 0; k < nt; k++) {
            neumaier(s, c, ps[k]);
            c += pc[k];
        }
        r.value = (T)(s + c);
    } else if (op == OP_SUM) {
        uint64_t acc = 0;
        for (int k = 0; k < nt; k++)
            acc += pu[k];
        r.value = (T)acc;   // modular conversion: the low bits, as the GPU
    } else {
        T m = identity<T>(op);
        for (int k = 0; k < nt; k++)
            m = op == OP_MIN ? (pm[k] < m ? pm[k] : m) : (pm[k] > m ? pm[k] : m);
        r.value = m;
    }
    return r;
}

/* kforge's rel_bound: min(gamma_d, the probabilistic bound, lambda = 10). */
static double rel_bound(double d, double u)
{
    if (d <= 0)
        return 0;
    double det = d * u < 1 ? d * u / (1 - d * u) : INFINITY;
    double prob = expm1(10.0 * sqrt(d) * u + d * u * u / (1 - u));
    return det < prob ? det : prob;
}

/* Float sum tolerance with depth = n (CUB's summation order is unknown to
 * us; n bounds the depth of any order). */
template <typename T> static double tolerance(int op, int64_t n, double abs_sum, T ref)
{
    if (!std::is_floating_point<T>::value || op != OP_SUM)
        return 0;
    double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
    double a = fabs((double)ref);
    double half_ulp = 0;
    if (std::isfinite(a)) {
        if (sizeof(T) == 4) {
            float fa = (float)a, up = nextafterf(fa, INFINITY);
            half_ulp = std::isfinite(up) ? 0.5 * ((double)up - fa) : 0.5 * (fa - (double)nextafterf(fa, 0));
        } else {
            double up = nextafter(a, INFINITY);
            half_ulp = std::isfinite(up) ? 0.5 * (up - a) : 0.5 * (a - nextafter(a, 0));
        }
    }
    return rel_bound((double)(n > 1 ? n : 1), u) * abs_sum + half_ulp + 4 * (double)LDBL_EPSILON * abs_sum;
}

template <typename T> static bool correct(int op, T got, T ref, double tol, double *err)
{
    if (!std::is_floating_point<T>::value) {
        *err = got == ref ? 0 : fabs((double)got - (double)ref);
        return got == ref;
    }
    double g = (double)got, r = (double)ref;
    if (std::isnan(g) || std::isnan(r)) {
        *err = NAN;
        return false;
    }
    if (!std::isfinite(r) || !std::isfinite(g)) {
        *err = g == r ? 0 : INFINITY;
        return g == r;
    }
    *err = fabs(g - r);
    return op == OP_SUM ? *err <= tol : g == r;
}

template <typename T> static std::string fmt_value(T v)
{
    char b[64];
    if (std::is_same<T, float>::value)
        snprintf(b, sizeof b, "%.9g", (double)v);
    else if (std::is_same<T, double>::value)
        snprintf(b, sizeof b, "%.17g", (double)v);
    else if (std::is_signed<T>::value)
        snprintf(b, sizeof b, "%lld", (long long)v);
    else
        snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    return b;
}

// ----------------------------------------------------------------------------
// Statistics: src/stats.c

struct Stats {
    int reps = 0;
    double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, stddev_ms = 0, noise = 0, gbps = 0, pct_peak = 0;
};

static void mean_stddev(const double *ms, int n, double *mean, double *sd)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += ms[i];
    double m = s / n, ss = 0;
    for (int i = 0; i < n; i++)
        ss += (ms[i] - m) * (ms[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

static Stats stats_compute(const std::vector<double> &ms, int n)
{
    Stats s;
    if (n <= 0)
        return s;
    s.reps = n;
    std::vector<double> sorted(ms.begin(), ms.begin() + n);
    std::sort(sorted.begin(), sorted.end());
    s.min_ms = sorted[0];
    s.max_ms = sorted[n - 1];
    s.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    mean_stddev(ms.data(), n, &s.mean_ms, &s.stddev_ms);
    s.noise = s.mean_ms > 0 ? s.stddev_ms / s.mean_ms : 0;
    return s;
}

static bool should_stop(const std::vector<double> &ms, int reps, double elapsed_s, const Opts &o)
{
    if (reps <= 0)
        return false;
    if (reps >= o.max_reps)
        return true;
    if (reps < o.min_reps)
        return false;
    if (elapsed_s >= o.max_time_s)
        return true;
    double mean, sd;
    mean_stddev(ms.data(), reps, &mean, &sd);
    double noise = mean > 0 ? sd / mean : 0;
    return noise <= o.max_noise;
}

static double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// ----------------------------------------------------------------------------
// Device

typedef CUresult (*memsetD32_fn)(CUdeviceptr, unsigned int, size_t, CUstream);

struct Dev {
    cudaDeviceProp prop;
    int l2_bytes = 0, mem_clock_khz = 0, bus_width_bits = 0;
    double peak_gbps = 0;
    cudaStream_t stream;
    cudaEvent_t ev[2 * KF_BATCH];
    void *flush = nullptr;
    size_t flush_words = 0;
    memsetD32_fn memsetD32 = nullptr;   // the driver's cuMemsetD32Async, as kforge
};

static void dev_open(Dev &d, const Opts &o)
{
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (o.device >= count)
        die(3, "no GPU with index %d (the runtime sees %d)", o.device, count);
    CUDA_CHECK(cudaSetDevice(o.device));
    CUDA_CHECK(cudaGetDeviceProperties(&d.prop, o.device));
    CUDA_CHECK(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, o.device));
    /* Not fatal: kforge computes the same from the driver's attributes, and
     * --peak-gbps can stand in. */
    if (cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, o.device) != cudaSuccess ||
        cudaDeviceGetAttribute(&d.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, o.device) != cudaSuccess) {
        cudaGetLastError();
        d.mem_clock_khz = d.bus_width_bits = 0;
    }
    d.peak_gbps = o.peak_gbps > 0 ? o.peak_gbps : 2.0 * d.mem_clock_khz * 1e3 * (d.bus_width_bits / 8.0) / 1e9;
    if (d.peak_gbps <= 0)
        fprintf(stderr, "cub_bench: memory clock / bus width unknown: pct_peak is 0 (use --peak-gbps)\n");

    CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2 * KF_BATCH; i++)
        CUDA_CHECK(cudaEventCreateWithFlags(&d.ev[i], cudaEventDefault));
    size_t flush_bytes = (size_t)(d.l2_bytes > 0 ? d.l2_bytes : (64 << 20)) * 2;
    d.flush_words = flush_bytes / 4;
    CUDA_CHECK(cudaMalloc(&d.flush, flush_bytes));

    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuMemsetD32Async", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess && fn)
        d.memsetD32 = (memsetD32_fn)fn;
    else
        cudaGetLastError();     // fall back to cudaMemsetAsync (a byte memset)
}

static void flush_l2(Dev &d, unsigned value)
{
    if (d.memsetD32) {
        CUresult r = d.memsetD32((CUdeviceptr)d.flush, value, d.flush_words, (CUstream)d.stream);
        if (r != CUDA_SUCCESS)
            die(3, "cuMemsetD32Async(L2 flush) failed: CUresult %d", (int)r);
    } else {
        CUDA_CHECK(cudaMemsetAsync(d.flush, (int)(value & 0xFF), d.flush_words * 4, d.stream));
    }
}

// ----------------------------------------------------------------------------
// One case

template <typename T, typename NumT>
static cudaError_t cub_reduce(int op, void *tmp, size_t &tmp_bytes, const T *in, T *out, NumT n, cudaStream_t s)
{
    switch (op) {
    case OP_SUM: return cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, n, s);
    case OP_MIN: return cub::DeviceReduce::Min(tmp, tmp_bytes, in, out, n, s);
    default: return cub::DeviceReduce::Max(tmp, tmp_bytes, in, out, n, s);
    }
}

static void json_str(std::string &j, const char *key, const std::string &v)
{
    j += '"';
    j += key;
    j += "\":\"";
    for (char c : v) {
        if (c == '"' || c == '\\') {
            j += '\\';
            j += c;
        } else if ((unsigned char)c < 0x20) {
            char b[8];
            snprintf(b, sizeof b, "\\u%04x", c);
            j += b;
        } else {
            j += c;
        }
    }
    j += "\",";
}

static void json_num(std::string &j, const char *key, double v)
{
    char b[64];
    if (!std::isfinite(v)) {
        snprintf(b, sizeof b, "\"%s\":null,", key);
    } else {
        int prec = 15;
        for (; prec <= 17; prec++) {
            snprintf(b, sizeof b, "%.*g", prec, v);
            if (strtod(b, NULL) == v)
                break;
        }
        std::string num = b;
        snprintf(b, sizeof b, "\"%s\":%s,", key, num.c_str());
    }
    j += b;
}

static void json_int(std::string &j, const char *key, long long v)
{
    char b[64];
    snprintf(b, sizeof b, "\"%s\":%lld,", key, v);
    j += b;
}

template <typename T, typename NumT>
static int run_case(Dev &d, const Opts &o, int dt, int op, int64_t n, T *d_in, T *d_out, const T *host)
{
    const NumT num = (NumT)n;
    size_t tmp_bytes = 0;
    void *d_tmp = nullptr;
    CUDA_CHECK((cub_reduce<T, NumT>(op, nullptr, tmp_bytes, d_in, d_out, num, d.stream)));
    CUDA_CHECK(cudaMalloc(&d_tmp, tmp_bytes > 0 ? tmp_bytes : 1));

    /* --- verify (output poisoned first) --------------------------------- */
    Ref<T> ref = reference<T>(op, host, n);
    double tol = tolerance<T>(op, n, ref.abs_sum, ref.value);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0xFF, 16, d.stream));
    CUDA_CHECK((cub_reduce<T, NumT>(op, d_tmp, tmp_bytes, d_in, d_out, num, d.stream)));
    CUDA_CHECK(cudaStreamSynchronize(d.stream));
    T got;
    CUDA_CHECK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
    double err = 0;
    if (!correct<T>(op, got, ref.value, tol, &err)) {
        fprintf(stderr,
                "cub_bench: %s %s n=%lld: wrong result: GPU %s, reference %s (|error| %.3g, tolerance %.3g)\n",
                dtype_names[dt], op_names[op], (long long)n, fmt_value(got).c_str(), fmt_value(ref.value).c_str(),
                err, tol);
        cudaFree(d_tmp);
        return 1;
    }

    /* --- time: src/bench.c's loop ---------------------------------------- */
    for (int i = 0; i < o.warmup; i++)
        CUDA_CHECK((cub_reduce<T, NumT>(op, d_tmp, tmp_bytes, d_in, d_out, num, d.stream)));
    CUDA_CHECK(cudaStreamSynchronize(d.stream));

    std::vector<double> times(KF_MAX_REPS_CAP);
    int reps = 0, max_reps = o.max_reps < KF_MAX_REPS_CAP ? o.max_reps : KF_MAX_REPS_CAP;
    double t0 = now_s();
    int batch = o.min_reps < KF_BATCH ? o.min_reps : KF_BATCH;
    for (;;) {
        if (batch > max_reps - reps)
            batch = max_reps - reps;
        if (batch < 1)
            batch = 1;
        for (int i = 0; i < batch; i++) {
            if (o.flush)
                flush_l2(d, (unsigned)(reps + i));
            CUDA_CHECK(cudaEventRecord(d.ev[2 * i], d.stream));
            CUDA_CHECK((cub_reduce<T, NumT>(op, d_tmp, tmp_bytes, d_in, d_out, num, d.stream)));
            CUDA_CHECK(cudaEventRecord(d.ev[2 * i + 1], d.stream));
            CUDA_CHECK(cudaEventSynchronize(d.ev[2 * i + 1])); // each repetition waited for, as kforge does
        }
        CUDA_CHECK(cudaEventSynchronize(d.ev[2 * batch - 1]));
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, d.ev[2 * i], d.ev[2 * i + 1]));
            times[reps++] = ms;
        }
        double elapsed = now_s() - t0;
        if (should_stop(times, reps, elapsed, o))
            break;
        double per = elapsed / reps;
        double left = o.max_time_s - elapsed;
        int fit = per > 0 ? (int)(left / per) : KF_BATCH;
        batch = fit < 1 ? 1 : (fit > KF_BATCH ? KF_BATCH : fit);
    }
    Stats s = stats_compute(times, reps);
    if (s.median_ms > 0)
        s.gbps = (double)n * (double)sizeof(T) / (s.median_ms * 1e-3) / 1e9;
    if (d.peak_gbps > 0)
        s.pct_peak = s.gbps / d.peak_gbps * 100.0;

    /* the last timed run's output must still be right */
    T last;
    CUDA_CHECK(cudaMemcpy(&last, d_out, sizeof(T), cudaMemcpyDeviceToHost));
    double err2 = 0;
    if (!correct<T>(op, last, ref.value, tol, &err2)) {
        fprintf(stderr, "cub_bench: %s %s n=%lld: result changed during timing: %s, first %s (reference %s)\n",
                dtype_names[dt], op_names[op], (long long)n, fmt_value(last).c_str(), fmt_value(got).c_str(),
                fmt_value(ref.value).c_str());
        cudaFree(d_tmp);
        return 1;
    }
    CUDA_CHECK(cudaFree(d_tmp));

    char buf[32];
    std::string j = "{";
    json_str(j, "tool", "cub");
    snprintf(buf, sizeof buf, "%d.%d.%d", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
    json_str(j, "cub_version", buf);
    json_int(j, "cub_version_num", CUB_VERSION);
    snprintf(buf, sizeof buf, "%d.%d", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    json_str(j, "cudart", buf);
    json_str(j, "device", d.prop.name);
    snprintf(buf, sizeof buf, "%d.%d", d.prop.major, d.prop.minor);
    json_str(j, "cc", buf);
    json_int(j, "sms", d.prop.multiProcessorCount);
    json_int(j, "l2_bytes", d.l2_bytes);
    json_num(j, "peak_gbps", d.peak_gbps);
    json_str(j, "name", "cub");
    json_str(j, "dtype", dtype_names[dt]);
    json_str(j, "op", op_names[op]);
    json_int(j, "n", (long long)n);
    json_str(j, "status", "ok");
    json_int(j, "offset_bits", (long long)(8 * sizeof(NumT)));
    json_int(j, "temp_bytes", (long long)tmp_bytes);
    json_str(j, "value", fmt_value(got));
    json_str(j, "ref_value", fmt_value(ref.value));
    json_num(j, "abs_err", err);
    json_num(j, "tolerance", tol);
    json_int(j, "reps", s.reps);
    json_num(j, "median_ms", s.median_ms);
    json_num(j, "min_ms", s.min_ms);
    json_num(j, "max_ms", s.max_ms);
    json_num(j, "mean_ms", s.mean_ms);
    json_num(j, "stddev_ms", s.stddev_ms);
    json_num(j, "noise", s.noise);
    json_num(j, "gbps", s.gbps);
    json_num(j, "pct_peak", s.pct_peak);
    /* the settings, spelled as kforge's "bench" object */
    j += "\"bench\":{";
    json_int(j, "warmup", o.warmup);
    json_int(j, "min_reps", o.min_reps);
    json_int(j, "max_reps", o.max_reps);
    json_num(j, "max_time_s", o.max_time_s);
    json_num(j, "max_noise", o.max_noise);
    j += o.flush ? "\"flush_l2\":true," : "\"flush_l2\":false,";
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)o.seed);
    j += "\"seed\":";
    j += buf;
    j += "}}";
    puts(j.c_str());
    fflush(stdout);
    return 0;
}

/* Every n of one (dtype, op): the host and device buffers are sized for the
 * largest n and filled once (element i does not depend on n). */
template <typename T> static int run_dtype_op(Dev &d, const Opts &o, int dt, int op)
{
    int64_t nmax = *std::max_element(o.ns.begin(), o.ns.end());
    std::vector<T> host((size_t)nmax);
    fill<T>(dt, op, o.seed, host.data(), nmax);
    T *d_in = nullptr, *d_out = nullptr;
    size_t bytes = (size_t)nmax * sizeof(T);
    cudaError_t e = cudaMalloc(&d_in, bytes + 64);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        cudaGetLastError();
        cudaMemGetInfo(&fr, &tot);
        die(3, "out of device memory: input needs %.2f GiB, %.2f GiB free of %.2f GiB", bytes / 1073741824.0,
            fr / 1073741824.0, tot / 1073741824.0);
    }
    CUDA_CHECK(cudaMalloc(&d_out, 256));
    int rc = 0;
    for (int64_t n : o.ns) {
        /* as kforge's prepare_input: poison the whole buffer, then copy n
         * elements, so a read past n gives a wrong answer */
        CUDA_CHECK(cudaMemset(d_in, 0x5A, bytes + 64));
        CUDA_CHECK(cudaMemcpy(d_in, host.data(), (size_t)n * sizeof(T), cudaMemcpyHostToDevice));
        if (n > (int64_t)UINT32_MAX)
            rc = run_case<T, int64_t>(d, o, dt, op, n, d_in, d_out, host.data());
        else
            rc = run_case<T, uint32_t>(d, o, dt, op, n, d_in, d_out, host.data());
        if (rc)
            break;
    }
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return rc;
}

int main(int argc, char **argv)
{
    Opts o = parse_args(argc, argv);
    Dev d;
    dev_open(d, o);
    for (int dt : o.dtypes)
        for (int op : o.ops) {
            int rc;
            switch (dt) {
            case INT32: rc = run_dtype_op<int32_t>(d, o, dt, op); break;
            case UINT32: rc = run_dtype_op<uint32_t>(d, o, dt, op); break;
            case INT64: rc = run_dtype_op<int64_t>(d, o, dt, op); break;
            case FLOAT32: rc = run_dtype_op<float>(d, o, dt, op); break;
            default: rc = run_dtype_op<double>(d, o, dt, op); break;
            }
            if (rc)
                return rc;
        }
    CUDA_CHECK(cudaFree(d.flush));
    for (int i = 0; i < 2 * KF_BATCH; i++)
        cudaEventDestroy(d.ev[i]);
    cudaStreamDestroy(d.stream);
    return 0;
}
