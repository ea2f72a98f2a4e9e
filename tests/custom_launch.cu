// custom_launch.cu -- calls the launchers of exported custom kernels and
// checks what they compute against the host: the headers that
// tests/custom/export_launchers.sh writes (vector_add, transpose: a 2-D
// launch whose shared memory opts in above 48 KiB at one set, convolution:
// a __constant__ filter, scale_f32: a C++ template entry), each tuned at
// shapes that got different parameter sets, so that the launchers pick
// between namespaces.  Every tuned shape of each table is run, then shapes
// between and beside them; arguments the launchers refuse come back as
// cudaErrorInvalidValue.  One line per check, PASS or FAIL; exit 1 on a
// failure.
//
//   sh tests/custom/export_launchers.sh build/kforge DIR     (the headers)
//   nvcc -std=c++17 -O2 -arch=native -I DIR tests/custom_launch.cu -o custom_launch && ./custom_launch
//
// tests/custom_suite.sh compiles it (no GPU there); tests/custom_gpu.sh runs it.
#include "convolution_tuned.h"
#include "scale_f32_tuned.h"
#include "transpose_tuned.h"
#include "vector_add_tuned.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int npass, nfail;

// Every CUDA call of the harness itself: a failure ends the program.
#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudaError_t e_ = (call);                                                                                 \
        if (e_ != cudaSuccess) {                                                                                 \
            printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                   \
            return false;                                                                                        \
        }                                                                                                        \
    } while (0)

static void verdict(bool ok, const char *what)
{
    printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    ok ? npass++ : nfail++;
}

static unsigned long long seed = 0x9E3779B97F4A7C15ULL;
static float frand(float lo, float hi)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (float)((seed >> 40) * 0x1.0p-24);
}

// Device copies of host vectors, freed at the end of a check.
struct dev {
    float *p = nullptr;
    ~dev() { cudaFree(p); }
};
static cudaError_t upload(dev &d, const std::vector<float> &h)
{
    cudaError_t e = cudaMalloc(&d.p, h.size() * sizeof(float));
    return e != cudaSuccess ? e : cudaMemcpy(d.p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
}

// The first element that differs by more than tol (relative and absolute), or -1.
static long long first_wrong(const std::vector<float> &got, const std::vector<float> &want, float tol)
{
    for (size_t i = 0; i < want.size(); i++)
        if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]))))
            return (long long)i;
    return -1;
}

static void report(const char *name, const char *shape, const char *set, long long bad, const std::vector<float> &got,
                   const std::vector<float> &want)
{
    char what[512];
    if (bad < 0)
        snprintf(what, sizeof what, "%s %s (%s): every output as the host computes it", name, shape, set);
    else
        snprintf(what, sizeof what, "%s %s (%s): output[%lld] = %.9g, the host gives %.9g", name, shape, set, bad,
                 got[bad], want[bad]);
    verdict(bad < 0, what);
}

// ---------------------------------------------------------------------------
// vector_add: c = a + b

static bool vector_add(long long n)
{
    std::vector<float> a(n), b(n), c(n, -1), want(n);
    for (long long i = 0; i < n; i++)
        a[i] = frand(-1, 1), b[i] = frand(-1, 1), want[i] = a[i] + b[i];
    dev da, db, dc;
    CHECK(upload(da, a));
    CHECK(upload(db, b));
    CHECK(upload(dc, c));
    CHECK(kforge_vector_add_launch(n, dc.p, da.p, db.p, 0));
    CHECK(cudaMemcpy(c.data(), dc.p, n * sizeof(float), cudaMemcpyDeviceToHost));
    const kforge_vector_add_params *t = kforge_vector_add_lookup(n);
    char shape[64], set[128];
    snprintf(shape, sizeof shape, "n=%lld", n);
    snprintf(set, sizeof set, "block_size_x=%lld per_thread=%lld", t->block_size_x, t->per_thread);
    report("vector_add", shape, set, first_wrong(c, want, 0), c, want);
    return true;
}

// ---------------------------------------------------------------------------
// transpose: out (width x height) = in (height x width) transposed

static bool transpose(long long width, long long height)
{
    std::vector<float> in(width * height), out(width * height, -1), want(width * height);
    for (long long y = 0; y < height; y++)
        for (long long x = 0; x < width; x++)
            in[y * width + x] = want[x * height + y] = frand(-1000, 1000);
    dev din, dout;
    CHECK(upload(din, in));
    CHECK(upload(dout, out));
    CHECK(kforge_transpose_launch(width, height, dout.p, din.p, 0));
    CHECK(cudaMemcpy(out.data(), dout.p, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const kforge_transpose_params *t = kforge_transpose_lookup(width, height);
    char shape[64], set[160];
    snprintf(shape, sizeof shape, "%lld x %lld", width, height);
    snprintf(set, sizeof set, "tile_dim=%lld block_rows=%lld pad=%lld vec=%lld, %lld bytes of shared memory",
             t->tile_dim, t->block_rows, t->pad, t->vec, 4 * t->tile_dim * (t->tile_dim + t->pad));
    report("transpose", shape, set, first_wrong(out, want, 0), out, want);
    return true;
}

// ---------------------------------------------------------------------------
// convolution: output[y][x] = sum of input[y + fy][x + fx] * filter[fy][fx]
// over a 17 x 17 filter (a __constant__ the launcher fills), taps in the
// kernel's order (filter rows top to bottom, each left to right, fmaf)

static bool convolution(long long width, long long height)
{
    const long long in_w = width + 16, in_h = height + 16;
    std::vector<float> in(in_w * in_h), filter(17 * 17), out(width * height, -1), want(width * height);
    for (float &v : in)
        v = frand(0, 1);
    for (float &v : filter)
        v = frand(0, 1);
    for (long long y = 0; y < height; y++)
        for (long long x = 0; x < width; x++) {
            float s = 0;
            for (int fy = 0; fy < 17; fy++)
                for (int fx = 0; fx < 17; fx++)
                    s = std::fmaf(in[(y + fy) * in_w + x + fx], filter[fy * 17 + fx], s);
            want[y * width + x] = s;
        }
    dev din, dout;
    CHECK(upload(din, in));
    CHECK(upload(dout, out));
    CHECK(kforge_convolution_launch(width, height, dout.p, din.p, filter.data(), 0));
    CHECK(cudaMemcpy(out.data(), dout.p, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const kforge_convolution_params *t = kforge_convolution_lookup(width, height);
    char shape[64], set[200];
    snprintf(shape, sizeof shape, "%lld x %lld", width, height);
    snprintf(set, sizeof set, "block %lld x %lld, tile %lld x %lld, use_padding=%lld read_only=%lld contiguous_x=%lld",
             t->block_size_x, t->block_size_y, t->tile_size_x, t->tile_size_y, t->use_padding, t->read_only,
             t->contiguous_x);
    report("convolution", shape, set, first_wrong(out, want, 1e-5f), out, want);
    return true;
}

// ---------------------------------------------------------------------------
// scale_f32 (the C++ template entry scale<float>): y = 3 x

static bool scale(long long n)
{
    std::vector<float> x(n), y(n, -1), want(n);
    for (long long i = 0; i < n; i++)
        x[i] = frand(-4, 4), want[i] = 3.0f * x[i];
    dev dx, dy;
    CHECK(upload(dx, x));
    CHECK(upload(dy, y));
    CHECK(kforge_scale_f32_launch(n, dy.p, dx.p, 0));
    CHECK(cudaMemcpy(y.data(), dy.p, n * sizeof(float), cudaMemcpyDeviceToHost));
    char shape[64], set[64];
    snprintf(shape, sizeof shape, "n=%lld", n);
    snprintf(set, sizeof set, "block_size_x=%lld", kforge_scale_f32_lookup(n)->block_size_x);
    report("scale_f32", shape, set, first_wrong(y, want, 0), y, want);
    return true;
}

// ---------------------------------------------------------------------------
// what the launchers refuse

static bool refused()
{
    dev d;
    std::vector<float> one(1, 0);
    CHECK(upload(d, one));
    float filter[17 * 17] = {0};
    const struct {
        const char *what;
        cudaError_t got;
    } cases[] = {
        {"vector_add n=0", kforge_vector_add_launch(0, d.p, d.p, d.p, 0)},
        {"vector_add with a null input", kforge_vector_add_launch(1, d.p, nullptr, d.p, 0)},
        {"transpose 0 x 5", kforge_transpose_launch(0, 5, d.p, d.p, 0)},
        {"convolution with a null filter", kforge_convolution_launch(1, 1, d.p, d.p, nullptr, 0)},
        {"convolution -1 x 1", kforge_convolution_launch(-1, 1, d.p, d.p, filter, 0)},
        {"scale_f32 with a null output", kforge_scale_f32_launch(1, nullptr, d.p, 0)},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        char what[160];
        snprintf(what, sizeof what, "%s: %s", cases[i].what, cudaGetErrorName(cases[i].got));
        verdict(cases[i].got == cudaErrorInvalidValue, what);
    }
    return true;
}

int main()
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        printf("SKIP custom_launch: no GPU\n");
        return 0;
    }
    bool ok = true;
    for (int i = 0; i < N_OF(kforge_vector_add_tuned) && ok; i++)
        ok = vector_add(kforge_vector_add_tuned[i].n);
    for (long long n : {1LL, 999LL, 12345LL, 1000003LL})
        ok = ok && vector_add(n);
    for (int i = 0; i < N_OF(kforge_transpose_tuned) && ok; i++)
        ok = transpose(kforge_transpose_tuned[i].width, kforge_transpose_tuned[i].height);
    static const long long tr[][2] = {{1, 1}, {33, 17}, {5000, 70}, {640, 2049}};
    for (const auto &wh : tr)
        ok = ok && transpose(wh[0], wh[1]);
    for (int i = 0; i < N_OF(kforge_convolution_tuned) && ok; i++)
        ok = convolution(kforge_convolution_tuned[i].width, kforge_convolution_tuned[i].height);
    static const long long cv[][2] = {{1, 1}, {17, 300}, {1000, 3}};
    for (const auto &wh : cv)
        ok = ok && convolution(wh[0], wh[1]);
    for (int i = 0; i < N_OF(kforge_scale_f32_tuned) && ok; i++)
        ok = scale(kforge_scale_f32_tuned[i].n);
    for (long long n : {1LL, 77777LL})
        ok = ok && scale(n);
    ok = ok && refused();
    if (!ok)
        nfail++;
    printf("%s custom_launch: %d passed, %d failed\n", nfail ? "FAIL" : "PASS", npass, nfail);
    return nfail ? 1 : 0;
}
