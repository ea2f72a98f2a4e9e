// outcheck.cuh -- kforge's own kernels that check a candidate's outputs on
// the GPU against the reference outputs kept there (src/exec/outcheck.c), so
// that a right answer costs no copy to the host and no pass over it there.
// They only ever say "the same" or "within tolerance"; anything else goes to
// the family's compare on the host, which counts and names what is wrong.
//
// res[0]: blocks that found a difference (kf_differ) or wrong elements
// (kf_within_*); res[1]: the largest error and where, packed so that
// atomicMax keeps the largest and, among equal ones, the first:
// (float bits of the error) << 32 | (0xFFFFFFFF - index).

typedef unsigned long long kf_u64;

// Whether the bytes at a and b differ (16 at a time; both start 16-byte
// aligned, as device allocations do); the tail of bytes % 16 by the first
// threads.
extern "C" __global__ void kf_differ(const unsigned char *a, const unsigned char *b, kf_u64 bytes, kf_u64 *res)
{
    const uint4 *a4 = (const uint4 *)a, *b4 = (const uint4 *)b;
    kf_u64 n16 = bytes / 16, gid = (kf_u64)blockIdx.x * blockDim.x + threadIdx.x;
    kf_u64 stride = (kf_u64)gridDim.x * blockDim.x;
    unsigned d = 0;
    for (kf_u64 i = gid; i < n16; i += stride) {
        uint4 x = a4[i], y = b4[i];
        d |= (x.x ^ y.x) | (x.y ^ y.y) | (x.z ^ y.z) | (x.w ^ y.w);
    }
    kf_u64 t = n16 * 16 + gid;
    if (gid < 16 && t < bytes)
        d |= a[t] ^ b[t];
    if (__syncthreads_or(d != 0) && threadIdx.x == 0)
        atomicAdd(res, 1ull);
}

__device__ __forceinline__ double kf_elem(const float *p, kf_u64 i) { return p[i]; }
__device__ __forceinline__ double kf_elem(const double *p, kf_u64 i) { return p[i]; }

// bfloat16 is float32's upper half; float16 widened exactly, subnormals
// and all.
struct kf_bf16_bits { unsigned short b; };
struct kf_f16_bits { unsigned short b; };
__device__ __forceinline__ double kf_elem(const kf_bf16_bits *p, kf_u64 i)
{
    return __uint_as_float((unsigned)p[i].b << 16);
}
__device__ __forceinline__ double kf_elem(const kf_f16_bits *p, kf_u64 i)
{
    unsigned h = p[i].b, s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? __longlong_as_double(0x7FF8000000000000LL) : __longlong_as_double(0x7FF0000000000000LL))
             : e == 0  ? m * 5.9604644775390625e-08   /* m * 2^-24 */
                       : (1024 + m) * (double)(1u << e) * 2.98023223876953125e-08; /* 2^(e-25) */
    return s ? -v : v;
}

// Elements of got within atol + rtol |ref| of ref (a NaN only where ref
// has one): the rule of the family's compare, in double as there.
template <typename T>
__device__ void kf_within(const T *got, const T *ref, kf_u64 n, double rtol, double atol, kf_u64 *res)
{
    kf_u64 gid = (kf_u64)blockIdx.x * blockDim.x + threadIdx.x, stride = (kf_u64)gridDim.x * blockDim.x;
    kf_u64 bad = 0, worst = 0;
    for (kf_u64 i = gid; i < n; i += stride) {
        double g = kf_elem(got, i), f = kf_elem(ref, i), e;
        bool ok;
        if (isnan(f) || isnan(g)) {
            ok = isnan(f) && isnan(g);
            e = ok ? 0.0 : __longlong_as_double(0x7FF0000000000000LL);
        } else {
            e = fabs(g - f);
            ok = e <= atol + rtol * fabs(f);
        }
        bad += !ok;
        kf_u64 key = ((kf_u64)__float_as_uint((float)e) << 32) | (0xFFFFFFFFull - i);
        worst = key > worst ? key : worst;
    }
    for (int o = 16; o > 0; o >>= 1) {
        bad += __shfl_down_sync(0xFFFFFFFFu, bad, o);
        kf_u64 w = __shfl_down_sync(0xFFFFFFFFu, worst, o);
        worst = w > worst ? w : worst;
    }
    if ((threadIdx.x & 31) == 0) {
        if (bad)
            atomicAdd(&res[0], bad);
        atomicMax(&res[1], worst);
    }
}

extern "C" __global__ void kf_within_float32(const float *g, const float *r, kf_u64 n, double rt, double at, kf_u64 *res)
{
    kf_within(g, r, n, rt, at, res);
}
extern "C" __global__ void kf_within_float64(const double *g, const double *r, kf_u64 n, double rt, double at,
                                             kf_u64 *res)
{
    kf_within(g, r, n, rt, at, res);
}
extern "C" __global__ void kf_within_bfloat16(const kf_bf16_bits *g, const kf_bf16_bits *r, kf_u64 n, double rt,
                                              double at, kf_u64 *res)
{
    kf_within(g, r, n, rt, at, res);
}
extern "C" __global__ void kf_within_float16(const kf_f16_bits *g, const kf_f16_bits *r, kf_u64 n, double rt,
                                             double at, kf_u64 *res)
{
    kf_within(g, r, n, rt, at, res);
}
