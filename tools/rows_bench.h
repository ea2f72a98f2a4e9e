// rows_bench.h -- the measuring and checking method shared by the row-wise
// reduction harnesses (tools/rows_proto.cu, tools/rows_cub.cu); the PyTorch
// baseline (tools/rows_torch.py) repeats it in Python.
//
//   data    element (r, c) of a matrix sits at base[off + r * stride + c];
//           its value is a counter-based hash (splitmix64) of that index, so
//           the GPU fills the matrix and the CPU recomputes every element for
//           the reference without a copy.  Never zero: float in [-1, 1)
//           without 0, int32 over the whole 32-bit range (sums wrap).
//           Elements between rows (stride > cols) and before `off` hold a
//           poison (1e30 / 0x3fffffff) that breaks any sum or max reading them.
//   check   every row: integers exact (wrap-around), min/max exact, float
//           sums within cols * u * sum|x| (u = 2^-24 float, 2^-53 double),
//           the reference accumulated in double (float) or long double.
//   timing  warm-up 3; then >= 30 repetitions (default 50), each preceded by
//           an untimed poisoning of the output, then an untimed
//           cudaMemsetAsync over 2 x L2 bytes (L2 flush); one pair of events around the
//           launch(es) of the reduction, waited for before the next
//           repetition (as kforge times); the median of the per-repetition
//           times.  GB/s = rows * cols * sizeof(T) / median (input bytes);
//           io_gbps also counts writing rows * sizeof(T).
//   lines   one line of key=value pairs per (shape, implementation, setting).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#define RB_CHECK(call)                                                                          \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(3);                                                                            \
        }                                                                                       \
    } while (0)

enum { RB_SUM = 0, RB_MIN = 1, RB_MAX = 2 };
static const char *const rb_op_names[] = {"sum", "min", "max"};

template <typename T> static const char *rb_dtype_name();
template <> const char *rb_dtype_name<float>() { return "float32"; }
template <> const char *rb_dtype_name<double>() { return "float64"; }
template <> const char *rb_dtype_name<int32_t>() { return "int32"; }
template <> const char *rb_dtype_name<uint32_t>() { return "uint32"; }

struct rb_shape {
    long long rows, cols, stride, off;
};

static std::string rb_shape_name(const rb_shape &s)
{
    char b[96];
    snprintf(b, sizeof b, "%lldx%lld", s.rows, s.cols);
    std::string r = b;
    if (s.stride != s.cols) { snprintf(b, sizeof b, "/s%lld", s.stride); r += b; }
    if (s.off) { snprintf(b, sizeof b, "+%lld", s.off); r += b; }
    return r;
}

// "R,C[,S[,OFF]]" with R, C, S given as decimal, 2^k or 2^k+d
static long long rb_num(const char *p, const char **end)
{
    long long v;
    if (p[0] == '2' && p[1] == '^') {
        char *e;
        long k = strtol(p + 2, &e, 10);
        v = 1LL << k;
        p = e;
        if (*p == '+' || *p == '-') {
            long long d = strtoll(p, &e, 10);
            v += d;
            p = e;
        }
        *end = p;
        return v;
    }
    char *e;
    v = strtoll(p, &e, 10);
    *end = e;
    return v;
}

static rb_shape rb_parse_shape(const char *s)
{
    rb_shape sh = {0, 0, -1, 0};
    const char *p = s, *e;
    sh.rows = rb_num(p, &e);
    if (*e != ',') goto bad;
    sh.cols = rb_num(e + 1, &e);
    if (*e == ',') {
        sh.stride = rb_num(e + 1, &e);
        if (*e == ',') sh.off = rb_num(e + 1, &e);
    }
    if (*e) goto bad;
    if (sh.stride < 0) sh.stride = sh.cols;
    if (sh.rows < 1 || sh.cols < 1 || sh.stride < sh.cols || sh.off < 0) goto bad;
    return sh;
bad:
    fprintf(stderr, "bad shape '%s' (want ROWS,COLS[,STRIDE[,OFF]])\n", s);
    exit(2);
}

// ---------------------------------------------------------------------------
// Data

__host__ __device__ inline uint64_t rb_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

template <typename T> __host__ __device__ inline T rb_value(uint64_t seed, uint64_t i)
{
    uint64_t h = rb_mix(seed * 0x100000001b3ull ^ i);
    if constexpr (std::is_floating_point<T>::value) {
        // 24 random bits, symmetric around 0, never 0: (k + 0.5) / 2^23 - 1
        double u = ((double)(h >> 40) + 0.5) * (1.0 / 8388608.0) - 1.0;
        return (T)u;
    } else {
        return (T)(uint32_t)(h >> 32);
    }
}

template <typename T> __host__ __device__ inline T rb_gap()
{
    if constexpr (std::is_floating_point<T>::value) return (T)1e30;
    else return (T)0x3fffffff;
}

template <typename T>
__global__ void rb_fill(T *base, uint64_t n, long long rows, long long cols, long long stride, long long off,
                        uint64_t seed)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        bool in_row = false;
        if (i >= (uint64_t)off) {
            uint64_t e = i - off, r = e / stride, c = e - r * stride;
            in_row = r < (uint64_t)rows && c < (uint64_t)cols;
        }
        base[i] = in_row ? rb_value<T>(seed, i) : rb_gap<T>();
    }
}

// Elements the matrix occupies from base, the offset and the gaps included.
static uint64_t rb_span(const rb_shape &s) { return (uint64_t)s.off + (uint64_t)(s.rows - 1) * s.stride + s.cols; }

template <typename T> struct rb_data {
    rb_shape s;
    uint64_t seed;
    T *d_base = nullptr;  // allocation
    const T *d_in = nullptr; // d_base + off
    std::vector<double> ref, mag; // reference, and sum |x| (float sums)
    std::vector<uint64_t> iref; // integer reference (wrapped), as bits
};

template <typename T> static void rb_reference(rb_data<T> &D, int op)
{
    const rb_shape s = D.s;
    D.ref.assign(s.rows, 0);
    D.mag.assign(s.rows, 0);
    D.iref.assign(s.rows, 0);
    unsigned nt = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&, t]() {
            for (long long r = t; r < s.rows; r += nt) {
                const uint64_t b = (uint64_t)s.off + (uint64_t)r * s.stride;
                if constexpr (std::is_floating_point<T>::value) {
                    long double acc = op == RB_SUM ? 0.0L : (long double)rb_value<T>(D.seed, b);
                    long double mag = 0;
                    for (long long c = 0; c < s.cols; c++) {
                        long double x = (long double)rb_value<T>(D.seed, b + c);
                        if (op == RB_SUM) acc += x, mag += fabsl(x);
                        else if (op == RB_MIN) acc = std::min(acc, x);
                        else acc = std::max(acc, x);
                    }
                    D.ref[r] = (double)acc;
                    D.mag[r] = (double)mag;
                } else {
                    T acc = op == RB_SUM ? (T)0 : rb_value<T>(D.seed, b);
                    for (long long c = 0; c < s.cols; c++) {
                        T x = rb_value<T>(D.seed, b + c);
                        if (op == RB_SUM) acc = (T)((uint32_t)acc + (uint32_t)x);
                        else if (op == RB_MIN) acc = std::min(acc, x);
                        else acc = std::max(acc, x);
                    }
                    D.iref[r] = (uint64_t)(uint32_t)acc;
                }
            }
        });
    for (auto &x : th) x.join();
}

template <typename T> static void rb_setup(rb_data<T> &D, const rb_shape &s, int op, uint64_t seed)
{
    D.s = s;
    D.seed = seed;
    const uint64_t n = rb_span(s);
    RB_CHECK(cudaMalloc(&D.d_base, n * sizeof(T)));
    rb_fill<T><<<2048, 256>>>(D.d_base, n, s.rows, s.cols, s.stride, s.off, seed);
    RB_CHECK(cudaGetLastError());
    D.d_in = D.d_base + s.off;
    rb_reference(D, op);
    RB_CHECK(cudaDeviceSynchronize());
}

template <typename T> static void rb_free(rb_data<T> &D)
{
    if (D.d_base) RB_CHECK(cudaFree(D.d_base));
    D.d_base = nullptr;
}

// Compares every row; returns the number of wrong rows (prints the first few).
template <typename T> static long long rb_check(const rb_data<T> &D, const std::vector<T> &got, int op, const char *what)
{
    long long bad = 0;
    const double u = sizeof(T) == 4 ? ldexp(1.0, -24) : ldexp(1.0, -53);
    for (long long r = 0; r < D.s.rows; r++) {
        bool ok;
        if constexpr (std::is_floating_point<T>::value) {
            double g = (double)got[r];
            if (op == RB_SUM) {
                double tol = (double)D.s.cols * u * D.mag[r] + 1e-300;
                ok = std::isfinite(g) && fabs(g - D.ref[r]) <= tol;
            } else {
                ok = g == D.ref[r];
            }
            if (!ok && bad < 3)
                fprintf(stderr, "  %s: row %lld: got %.9g want %.9g\n", what, r, g, D.ref[r]);
        } else {
            ok = (uint64_t)(uint32_t)got[r] == D.iref[r];
            if (!ok && bad < 3)
                fprintf(stderr, "  %s: row %lld: got %u want %u\n", what, r, (unsigned)(uint32_t)got[r],
                        (unsigned)D.iref[r]);
        }
        bad += !ok;
    }
    return bad;
}

// ---------------------------------------------------------------------------
// Timing

struct rb_timer {
    void *flush = nullptr;
    size_t flush_bytes = 0;
    cudaStream_t stream;
    int sms = 0;
    char device[256];

    void init()
    {
        int dev;
        RB_CHECK(cudaGetDevice(&dev));
        cudaDeviceProp p;
        RB_CHECK(cudaGetDeviceProperties(&p, dev));
        snprintf(device, sizeof device, "%s", p.name);
        sms = p.multiProcessorCount;
        flush_bytes = (size_t)(p.l2CacheSize > 0 ? p.l2CacheSize : (64 << 20)) * 2;
        RB_CHECK(cudaMalloc(&flush, flush_bytes));
        RB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }

    // before(stream): untimed work before each repetition (poison the
    // output); launch(stream): the timed reduction.  Returns the median in ms
    // and fills min_ms.
    double time(const std::function<void(cudaStream_t)> &before, const std::function<void(cudaStream_t)> &launch,
                int reps, double *min_ms)
    {
        if (reps < 30) reps = 30;
        for (int i = 0; i < 3; i++) {
            before(stream);
            launch(stream);
        }
        std::vector<cudaEvent_t> ev(2 * reps);
        for (auto &e : ev) RB_CHECK(cudaEventCreate(&e));
        for (int i = 0; i < reps; i++) {
            before(stream);
            RB_CHECK(cudaMemsetAsync(flush, i & 0xff, flush_bytes, stream));
            RB_CHECK(cudaEventRecord(ev[2 * i], stream));
            launch(stream);
            RB_CHECK(cudaEventRecord(ev[2 * i + 1], stream));
            RB_CHECK(cudaEventSynchronize(ev[2 * i + 1])); // each repetition waited for, as kforge does
        }
        RB_CHECK(cudaStreamSynchronize(stream));
        RB_CHECK(cudaGetLastError());
        std::vector<double> ms(reps);
        for (int i = 0; i < reps; i++) {
            float m;
            RB_CHECK(cudaEventElapsedTime(&m, ev[2 * i], ev[2 * i + 1]));
            ms[i] = m;
        }
        for (auto &e : ev) RB_CHECK(cudaEventDestroy(e));
        std::sort(ms.begin(), ms.end());
        *min_ms = ms[0];
        return reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    }
};

static void rb_line(const rb_shape &s, const char *dtype, const char *op, const char *impl, const char *setting,
                    const char *status, double med_ms, double min_ms, size_t elem, const char *det)
{
    const double in_bytes = (double)s.rows * s.cols * elem, out_bytes = (double)s.rows * elem;
    const double l2 = log2((double)s.rows * s.cols);
    char total[32];
    if (l2 == floor(l2)) snprintf(total, sizeof total, "2^%d", (int)l2);
    else snprintf(total, sizeof total, "%lld", s.rows * s.cols);
    if (med_ms > 0)
        printf("ROW shape=%s total=%s dtype=%s op=%s impl=%s %s status=%s us=%.2f min_us=%.2f gbps=%.1f io_gbps=%.1f det=%s\n",
               rb_shape_name(s).c_str(), total, dtype, op, impl, setting, status, med_ms * 1e3, min_ms * 1e3,
               in_bytes / (med_ms * 1e6), (in_bytes + out_bytes) / (med_ms * 1e6), det);
    else
        printf("ROW shape=%s total=%s dtype=%s op=%s impl=%s %s status=%s det=%s\n", rb_shape_name(s).c_str(), total,
               dtype, op, impl, setting, status, det);
    fflush(stdout);
}
