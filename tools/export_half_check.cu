// export_half_check.cu -- runs an exported bfloat16 sum header on the GPU
// (kforge export --dtype bfloat16 --op sum -o kforge_reduce_bfloat16_sum.cuh)
// and checks every result against the exact sum: small integers 1..4 with
// random signs, at sizes that reach every entry of its dispatch and odd
// sizes and offsets (vector prefix and tail).  Exit 1 on a wrong result.
// With -DKF_ACC_INPUT: the header of --acc-dtype input
// (kforge_reduce_bfloat16_sum_acc_input.cuh), whose result is a bfloat16:
// the exact sum rounded once to nearest even.
//
//   nvcc -std=c++17 -arch=sm_90 -I DIR tools/export_half_check.cu -o export_half_check
#ifdef KF_ACC_INPUT
#include "kforge_reduce_bfloat16_sum_acc_input.cuh"
#define KF_API(x) kforge_reduce_bfloat16_sum_acc_input##x
typedef __nv_bfloat16 out_t;
static float as_float(out_t x) { return __bfloat162float(x); }
static float rounded(long long x) { return __bfloat162float(__float2bfloat16_rn((float)x)); }
#else
#include "kforge_reduce_bfloat16_sum.cuh"
#define KF_API(x) kforge_reduce_bfloat16_sum##x
typedef float out_t;
static float as_float(out_t x) { return x; }
static float rounded(long long x) { return (float)x; }
#endif

#include <cstdio>
#include <vector>

int main()
{
    const size_t sizes[] = {1, 7, 1000, 4097, (1u << 20) + 3, (1u << 24) + 1, 1u << 28};
    const size_t nmax = (1u << 28) + 8;
    std::vector<__nv_bfloat16> h(nmax);
    std::vector<signed char> v(nmax);
    unsigned long long z = 42;
    for (size_t i = 0; i < nmax; i++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (signed char)((1 + (z >> 62)) * ((z >> 40) & 1 ? -1 : 1));
        h[i] = __float2bfloat16((float)v[i]);
    }
    __nv_bfloat16 *d;
    out_t *out;
    size_t bytes = KF_API(_workspace)(nmax);
    void *ws;
    if (cudaMalloc(&d, nmax * sizeof *d) || cudaMalloc(&out, sizeof *out) || cudaMalloc(&ws, bytes) ||
        cudaMemcpy(d, h.data(), nmax * sizeof *d, cudaMemcpyHostToDevice) ||
        KF_API(_workspace_init)(ws, bytes, 0))
        return 2;
    int bad = 0;
    for (size_t n : sizes)
        for (size_t off = 0; off < 4; off += 3) {
            long long want = 0;
            for (size_t i = 0; i < n; i++) want += v[off + i];
            out_t g;
            if (KF_API()(d + off, n, out, ws, bytes, 0) || cudaMemcpy(&g, out, sizeof g, cudaMemcpyDeviceToHost))
                return 2;
            float got = as_float(g);
            bool ok = got == rounded(want);
            bad += !ok;
            printf("EXPORT n=%zu offset=%zu variant=%s got=%.1f want=%lld %s\n", n, off,
                   KF_API(_variant)(n), got, want, ok ? "PASS" : "FAIL");
        }
    return bad ? 1 : 0;
}
