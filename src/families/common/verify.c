/*
 * verify.c -- input data, the CPU reference and the comparison.
 *
 * Data comes from a counter-based generator (splitmix64 of a per-(seed,
 * dtype, op) key plus i times the golden ratio), so element i depends only
 * on (seed, dtype, op, i): a larger n extends the same data, and a GPU-side
 * or multi-threaded filler could reproduce it element by element.
 *
 * Floating-point bounds follow Higham: a result whose every input went
 * through at most d roundings has |error| <= gamma_d * sum|x_i| (sum) or
 * |ref| * gamma_(n-1) (prod).  For large d the worst-case bound loses all
 * meaning (d u >= 1 makes it infinite), so the bound used is the smaller of
 * gamma_d and the probabilistic bound of Higham & Mary (2019),
 * exp(lambda sqrt(d) u + d u^2 / (1 - u)) - 1, which holds for independent
 * mean-zero rounding errors with probability >= 1 - 2 d exp(-lambda^2 / 2)
 * (lambda = 10: about 4e-13 at d = 2^30).
 */
#include "verify.h"

#include "reduction.h"
#include "util.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ----------------------------------------------------------------------------
// Generator

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* Large inputs are filled (and reduced) in pieces of this many elements on
 * every CPU the process may use: 1 GiB takes ~0.1 s instead of ~2 s, which
 * is what each GPU worker pays before its first case of a new input. */
#define PIECE ((int64_t)1 << 20)

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t fill_key(kf_dtype t, kf_op op, uint64_t seed)
{
    uint64_t salt = UINT64_C(0x6b666f7267650000) | ((uint64_t)t << 8) | (uint64_t)op;
    return mix64(seed ^ mix64(salt));
}

/* The random word of element i: mix64(key + (i + 1) * GOLDEN). */
static inline uint64_t elem_bits(uint64_t key, int64_t i)
{
    return mix64(key + (uint64_t)(i + 1) * GOLDEN);
}

/* How the random word becomes a value.  Floats with bitwise ops (not a
 * meaningful case, but not worth crashing over) use raw bit patterns. */
typedef enum {
    D_BITS32, D_BITS64,     /* full-range integers / raw bits */
    D_ODD32, D_ODD64,       /* random odd integers (prod) */
    D_AND32, D_AND64,       /* all ones, ~1/64 with one bit clear */
    D_OR32, D_OR64,         /* all zeros, ~1/64 with one bit set */
    D_UNI32, D_UNI64,       /* uniform floats in [-1, 1) */
    D_NEAR32, D_NEAR64,     /* floats in [1 - 2^-12, 1 + 2^-12] (prod) */
    D_UNIBF, D_UNIF16,      /* bfloat16, float16: uniform floats in [-1, 1) rounded to nearest */
    D_NEARBF, D_NEARF16,    /* bfloat16, float16: 1, and 1 + 2^-7 or 1 - 2^-8 (1/128, 1/64) (prod) */
    D_BITS16                /* bfloat16, float16 with bitwise ops: raw bits */
} dist;

static dist pick_dist(kf_dtype t, kf_op op)
{
    bool wide = kf_dtype_size(t) == 8;
    bool fl = kf_dtype_is_float(t);
    if (kf_dtype_is_half(t)) {
        bool bf = t == KF_BFLOAT16;
        if (kf_op_is_bitwise(op))
            return D_BITS16;
        if (op == KF_OP_PROD)
            return bf ? D_NEARBF : D_NEARF16;
        return bf ? D_UNIBF : D_UNIF16;
    }
    switch (op) {
    case KF_OP_PROD:
        if (fl)
            return wide ? D_NEAR64 : D_NEAR32;
        return wide ? D_ODD64 : D_ODD32;
    case KF_OP_AND: return wide ? D_AND64 : D_AND32;
    case KF_OP_OR: return wide ? D_OR64 : D_OR32;
    case KF_OP_XOR: return wide ? D_BITS64 : D_BITS32;
    default:
        if (fl)
            return wide ? D_UNI64 : D_UNI32;
        return wide ? D_BITS64 : D_BITS32;
    }
}

/* 24 random bits k: k * 2^-23 - 1 is exact in float. */
static inline float uni32(uint64_t r) { return (float)((int32_t)(r >> 40) - 0x800000) * 0x1p-23f; }
/* 53 random bits. */
static inline double uni64(uint64_t r)
{
    return (double)((int64_t)(r >> 11) - (INT64_C(1) << 52)) * 0x1p-52;
}
/* 1 + k 2^-23 with k in [-2^11, 2^11): exact in float. */
static inline float near32(uint64_t r) { return 1.0f + (float)((int32_t)(r >> 52) - 2048) * 0x1p-23f; }
/* Products of the 2-byte floats: mostly 1, else one step up (1 + 2^-7)
 * or down (1 - 2^-8), both exact in bfloat16 and float16; the expected
 * log of a factor is about 0, so products of 2^30 stay far from float32's
 * overflow. */
static inline float nearh(uint64_t r)
{
    unsigned k = (unsigned)(r >> 57); /* 0..127 */
    return k == 0 ? 1.0f + 0x1p-7f : k <= 2 ? 1.0f - 0x1p-8f : 1.0f;
}
/* 1 + k 2^-52 with k in [-2^40, 2^40). */
static inline double near64(uint64_t r)
{
    return 1.0 + (double)((int64_t)(r >> 23) - (INT64_C(1) << 40)) * 0x1p-52;
}

#define FILL_LOOP(T, EXPR)                                          \
    do {                                                            \
        T *p_ = (T *)buf;                                           \
        uint64_t z_ = key + (uint64_t)lo * GOLDEN;                  \
        for (int64_t i_ = lo; i_ < hi; i_++) {                      \
            z_ += GOLDEN;                                           \
            uint64_t r = mix64(z_);                                 \
            p_[i_] = (EXPR);                                        \
        }                                                           \
    } while (0)

static void fill_range(dist d, uint64_t key, void *buf, int64_t lo, int64_t hi)
{
    switch (d) {
    case D_BITS32: FILL_LOOP(uint32_t, (uint32_t)(r >> 32)); break;
    case D_BITS64: FILL_LOOP(uint64_t, r); break;
    case D_ODD32: FILL_LOOP(uint32_t, (uint32_t)(r >> 32) | 1u); break;
    case D_ODD64: FILL_LOOP(uint64_t, r | 1u); break;
    case D_AND32: FILL_LOOP(uint32_t, (r & 63) ? UINT32_MAX : ~(UINT32_C(1) << ((r >> 6) & 31))); break;
    case D_AND64: FILL_LOOP(uint64_t, (r & 63) ? UINT64_MAX : ~(UINT64_C(1) << ((r >> 6) & 63))); break;
    case D_OR32: FILL_LOOP(uint32_t, (r & 63) ? 0u : UINT32_C(1) << ((r >> 6) & 31)); break;
    case D_OR64: FILL_LOOP(uint64_t, (r & 63) ? 0u : UINT64_C(1) << ((r >> 6) & 63)); break;
    case D_UNI32: FILL_LOOP(float, uni32(r)); break;
    case D_UNI64: FILL_LOOP(double, uni64(r)); break;
    case D_NEAR32: FILL_LOOP(float, near32(r)); break;
    case D_NEAR64: FILL_LOOP(double, near64(r)); break;
    case D_UNIBF: FILL_LOOP(uint16_t, kf_float_to_bf16(uni32(r))); break;
    case D_UNIF16: FILL_LOOP(uint16_t, kf_float_to_fp16(uni32(r))); break;
    case D_NEARBF: FILL_LOOP(uint16_t, kf_float_to_bf16(nearh(r))); break;
    case D_NEARF16: FILL_LOOP(uint16_t, kf_float_to_fp16(nearh(r))); break;
    case D_BITS16: FILL_LOOP(uint16_t, (uint16_t)(r >> 48)); break;
    }
}

// ----------------------------------------------------------------------------
// Exact data (verify_fill_exact)

/* Small nonzero integers whose parity follows the index: 1 or 3 at even i,
 * 2 or 4 at odd i; positive while n * 4 fits the significand (float32: n <=
 * 2^22; float64: always), so that no partial sum of any part of the input
 * is 0; beyond that with random signs, every partial sum a random walk
 * (about 2.7 sqrt(n), ~1.3e5 at n = 2^31) far below 2^24.  Every partial
 * sum is an integer: float32 and float64 sums are exact in any order. */
static inline int small_int(uint64_t r, int64_t i, bool signs)
{
    int mag = (int)((r >> 62) & 1) * 2 + 1 + (int)(i & 1); /* 1, 3 / 2, 4 */
    return signs && (r >> 61) & 1 ? -mag : mag;
}

/* Integer sum, xor: full-range words with the lowest bit the opposite of
 * the index's (never 0: an odd-index 0 becomes 2). */
static inline uint64_t parity_word(uint64_t v, int64_t i)
{
    v = (v & ~UINT64_C(1)) | (uint64_t)(~i & 1);
    return v ? v : 2;
}

/* Integer prod: odd words, 1 mod 4 at even i and 3 mod 4 at odd i (never 1:
 * an even-index 1 becomes 5).  Odd numbers are invertible modulo 2^w, so the
 * wrapped product changes with any factor dropped, doubled or replaced. */
static inline uint64_t odd_word(uint64_t v, int64_t i)
{
    v = (v | 1) & ~UINT64_C(2);
    v |= (uint64_t)(i & 1) << 1;
    return v == 1 ? 5 : v;
}

/* Float prod: every factor negative (a dropped or doubled one flips the
 * sign), -1 but for `marks` factors spread evenly over the input (the last
 * element of each of `marks` equal parts; all of them when n <= marks): -2
 * at even i, -4 at odd i.  Every partial product is -+2^k with 0 <= k <=
 * 2 marks: exact in any order, and never +-1 when it holds a mark. */
static inline double prod_factor(int64_t i, int64_t n, int64_t marks)
{
    bool mark = n <= marks || (i * marks) / n != ((i + 1) * marks) / n;
    return !mark ? -1.0 : i & 1 ? -4.0 : -2.0;
}

typedef struct {
    kf_dtype t;
    kf_op op;
    uint64_t key;
    void *buf;
    int64_t n, marks;
    bool signs;
} exact_job;

#define EXACT_LOOP(T, EXPR)                                         \
    do {                                                            \
        T *p_ = (T *)j->buf;                                        \
        uint64_t z_ = j->key + (uint64_t)lo * GOLDEN;               \
        for (int64_t i = lo; i < hi; i++) {                         \
            z_ += GOLDEN;                                           \
            uint64_t r = mix64(z_);                                 \
            (void)r;                                                \
            p_[i] = (EXPR);                                         \
        }                                                           \
    } while (0)

static void exact_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    const exact_job *j = ctx;
    bool wide = kf_dtype_size(j->t) == 8;
    if (kf_dtype_is_half(j->t) && j->op == KF_OP_SUM) {
        EXACT_LOOP(uint16_t, kf_float_to_half(j->t, (float)small_int(r, i, j->signs)));
    } else if (kf_dtype_is_half(j->t) && j->op == KF_OP_PROD) {
        EXACT_LOOP(uint16_t, kf_float_to_half(j->t, (float)prod_factor(i, j->n, j->marks)));
    } else if (kf_dtype_is_float(j->t) && j->op == KF_OP_SUM) {
        if (wide)
            EXACT_LOOP(double, (double)small_int(r, i, j->signs));
        else
            EXACT_LOOP(float, (float)small_int(r, i, j->signs));
    } else if (kf_dtype_is_float(j->t) && j->op == KF_OP_PROD) {
        if (wide)
            EXACT_LOOP(double, prod_factor(i, j->n, j->marks));
        else
            EXACT_LOOP(float, (float)prod_factor(i, j->n, j->marks));
    } else if (j->op == KF_OP_PROD) {
        if (wide)
            EXACT_LOOP(uint64_t, odd_word(r, i));
        else
            EXACT_LOOP(uint32_t, (uint32_t)odd_word(r >> 32, i));
    } else { /* integer sum, xor */
        if (wide)
            EXACT_LOOP(uint64_t, parity_word(r, i));
        else
            EXACT_LOOP(uint32_t, (uint32_t)parity_word(r >> 32, i));
    }
}

bool verify_exact_differs(kf_dtype t, kf_op op)
{
    return op == KF_OP_SUM || op == KF_OP_PROD || (op == KF_OP_XOR && !kf_dtype_is_float(t));
}

bool verify_has_accuracy(kf_dtype t, kf_op op)
{
    return kf_dtype_is_float(t) && (op == KF_OP_SUM || op == KF_OP_PROD);
}

static void fill_exact_marks(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n, int64_t marks)
{
    if (n <= 0)
        return;
    if (!verify_exact_differs(t, op)) {
        verify_fill(t, op, seed, buf, n);
        return;
    }
    /* its own key: the exact data are not the realistic data */
    bool wide = kf_dtype_size(t) == 8;
    exact_job j = {t, op, fill_key(t, op, seed ^ UINT64_C(0x65786163742d2d31)), buf, n,
                   marks > 0 ? marks : wide ? 500 : 60, !wide && n > ((int64_t)1 << 22)};
    kf_parallel_for(n, PIECE, exact_piece, &j);
}

void verify_fill_exact(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n)
{
    fill_exact_marks(t, op, seed, buf, n, 0);
}

/* The exact data for results rounded to a 2-byte float (verify.h). */
typedef struct {
    uint16_t *p;
    int64_t len, stride, segs, pair;
} pair_job;

/* The pairing offset of a segment of len elements: the largest odd p with
 * 2p < len (0 for len <= 2), so that at least one element is left over. */
static int64_t pair_offset(int64_t len)
{
    int64_t p = (len - 1) / 2;
    if (p > 0 && p % 2 == 0)
        p--;
    return p;
}

static void pair_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    const pair_job *j = ctx;
    for (int64_t f = lo; f < hi; f++) {
        int64_t k = f / j->stride, i = f % j->stride;
        if (k < j->segs && i >= j->pair && i < 2 * j->pair) /* element i - p, negated */
            j->p[f] = j->p[f - j->pair] ^ 0x8000u;
    }
}

/* Segment k's sum: +-(20 + (97 k mod 181)), so that segments up to 180
 * apart differ, and c +- 30 is an integer bfloat16 holds exactly. */
static float segment_sum(int64_t k)
{
    float c = (float)(20 + (97 * (k % 181)) % 181);
    return (k / 181) % 2 ? -c : c;
}

void verify_fill_exact_rounded(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n, int64_t segs, int64_t len,
                               int64_t stride)
{
    if (!kf_dtype_is_half(t) || (op != KF_OP_SUM && op != KF_OP_PROD)) {
        verify_fill_exact(t, op, seed, buf, n);
        return;
    }
    /* float16 products: 7 marks, |partial products| <= 2^14 < 65504 */
    fill_exact_marks(t, op, seed, buf, n, op == KF_OP_PROD && t == KF_FLOAT16 ? 7 : 0);
    if (op != KF_OP_SUM || n <= 0 || segs <= 0 || len <= 0)
        return;
    if (stride < len)
        stride = len;
    if (segs > n / stride + (n % stride >= len))
        segs = n / stride + (n % stride >= len);
    pair_job j = {buf, len, stride, segs, pair_offset(len)};
    if (j.pair > 0)
        kf_parallel_for(segs * stride < n ? segs * stride : n, PIECE, pair_piece, &j);
    /* the elements from 2p on are left as they were, but the segment's
     * last, which makes its sum segment_sum(k) */
    uint16_t *p = buf;
    int64_t q = j.pair;
    for (int64_t k = 0; k < segs; k++) {
        uint16_t *s = p + k * stride;
        /* neighbours differ at the pairs' edges too (with random signs a
         * pair's element could equal its neighbour): a pair changes sign */
        if (q > 0 && 2 * q < len - 1 && s[2 * q - 1] == s[2 * q]) {
            s[q - 1] ^= 0x8000u;
            s[2 * q - 1] ^= 0x8000u;
        }
        if (q > 0 && s[q - 1] == s[q]) {
            s[0] ^= 0x8000u;
            s[q] ^= 0x8000u;
        }
        float rest = 0;
        for (int64_t i = 2 * q; i < len - 1; i++)
            rest += kf_half_to_float(t, s[i]);
        s[len - 1] = kf_float_to_half(t, segment_sum(k) - rest);
    }
}

kf_value verify_narrow(kf_dtype from, kf_dtype to, kf_value v)
{
    if (from == to || !kf_dtype_is_half(to))
        return v;
    kf_value o = {.bits = 0};
    o.h16 = kf_float_to_half(to, from == KF_FLOAT64 ? (float)v.f64 : v.f32);
    return o;
}


typedef struct {
    dist d;
    uint64_t key;
    void *buf;
} fill_job;

static void fill_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    fill_job *j = ctx;
    fill_range(j->d, j->key, j->buf, lo, hi);
}

void verify_fill(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n)
{
    if (n <= 0)
        return;
    uint64_t key = fill_key(t, op, seed);
    dist d = pick_dist(t, op);
    fill_job j = {d, key, buf};
    kf_parallel_for(n, PIECE, fill_piece, &j);

    /* Never all zeros: element 0 is made nonzero.  This depends on element
     * 0 alone, so the data stays independent of n. */
    uint64_t r0 = elem_bits(key, 0);
    switch (d) {
    case D_OR32: case D_BITS32: {
        uint32_t *p = buf;
        if (p[0] == 0)
            p[0] = UINT32_C(1) << ((r0 >> 6) & 31);
        break;
    }
    case D_OR64: case D_BITS64: {
        uint64_t *p = buf;
        if (p[0] == 0)
            p[0] = UINT64_C(1) << ((r0 >> 6) & 63);
        break;
    }
    case D_UNI32: {
        float *p = buf;
        if (p[0] == 0.0f)
            p[0] = 0.5f;
        break;
    }
    case D_UNI64: {
        double *p = buf;
        if (p[0] == 0.0)
            p[0] = 0.5;
        break;
    }
    case D_BITS16:
    case D_UNIBF: case D_UNIF16: {
        uint16_t *p = buf;
        if ((p[0] & 0x7fffu) == 0)
            p[0] = kf_float_to_half(t, 0.5f);
        break;
    }
    default: break;     /* odd, near-1 and all-ones data are never zero */
    }
}

// ----------------------------------------------------------------------------
// Identity and reference

kf_value verify_identity(kf_dtype t, kf_op op)
{
    kf_value v;
    v.bits = 0;
    if (kf_dtype_is_half(t)) {
        float x = op == KF_OP_PROD ? 1.0f : op == KF_OP_MIN ? INFINITY : op == KF_OP_MAX ? -INFINITY : 0.0f;
        v.h16 = kf_float_to_half(t, x);
        return v;
    }
    bool wide = kf_dtype_size(t) == 8;
    switch (op) {
    case KF_OP_SUM: case KF_OP_OR: case KF_OP_XOR:
        break;
    case KF_OP_AND:
        if (wide)
            v.bits = UINT64_MAX;
        else
            v.u32 = UINT32_MAX;
        break;
    case KF_OP_PROD:
        switch (t) {
        case KF_INT32: v.i32 = 1; break;
        case KF_UINT32: v.u32 = 1; break;
        case KF_INT64: v.i64 = 1; break;
        case KF_FLOAT32: v.f32 = 1.0f; break;
        case KF_FLOAT64: v.f64 = 1.0; break;
        default: break;
        }
        break;
    case KF_OP_MIN:
        switch (t) {
        case KF_INT32: v.i32 = INT32_MAX; break;
        case KF_UINT32: v.u32 = UINT32_MAX; break;
        case KF_INT64: v.i64 = INT64_MAX; break;
        case KF_FLOAT32: v.f32 = INFINITY; break;
        case KF_FLOAT64: v.f64 = INFINITY; break;
        default: break;
        }
        break;
    case KF_OP_MAX:
        switch (t) {
        case KF_INT32: v.i32 = INT32_MIN; break;
        case KF_UINT32: v.u32 = 0; break;
        case KF_INT64: v.i64 = INT64_MIN; break;
        case KF_FLOAT32: v.f32 = -INFINITY; break;
        case KF_FLOAT64: v.f64 = -INFINITY; break;
        default: break;
        }
        break;
    default: break;
    }
    return v;
}

/* The reference is computed per piece of PIECE elements (partials below)
 * and the pieces are combined in order, so it does not depend on the number
 * of threads.  Integers and bitwise operators are exact whatever the order;
 * float sums carry a long double Neumaier pair per piece, combined with the
 * same compensation. */
typedef struct {
    uint64_t bits;          /* integers, bitwise, float min/max: the value's bits */
    long double s, c;       /* float sum: sum and compensation; float prod: s */
    double as;              /* sum |x_i| (integers and floats; 0 for bitwise) */
} part;

/* Neumaier: adds x to the pair (s, c). */
static inline void neumaier(long double *s, long double *c, long double x)
{
    long double t = *s + x;
    if (fabsl(*s) >= fabsl(x))
        *c += (*s - t) + x;
    else
        *c += (x - t) + *s;
    *s = t;
}

#define BITWISE_PART(T)                                                       \
    do {                                                                      \
        const T *p = buf;                                                     \
        T a = op == KF_OP_AND ? (T)~(T)0 : 0;                                 \
        if (op == KF_OP_AND)                                                  \
            for (int64_t i = lo; i < hi; i++)                                 \
                a &= p[i];                                                    \
        else if (op == KF_OP_OR)                                              \
            for (int64_t i = lo; i < hi; i++)                                 \
                a |= p[i];                                                    \
        else                                                                  \
            for (int64_t i = lo; i < hi; i++)                                 \
                a ^= p[i];                                                    \
        out->bits = a;                                                        \
    } while (0)

/* Integer sum/prod/min/max: unsigned arithmetic wraps exactly like the GPU's
 * two's complement; min and max compare with the type's own signedness.
 * One loop per operation keeps the inner loops free of branches. */
#define INT_PART(T, UT)                                                       \
    do {                                                                      \
        const T *p = buf;                                                     \
        T res;                                                                \
        if (op == KF_OP_SUM) {                                                \
            UT acc = 0;                                                       \
            for (int64_t i = lo; i < hi; i++)                                 \
                acc += (UT)p[i];                                              \
            memcpy(&res, &acc, sizeof res);                                   \
        } else if (op == KF_OP_PROD) {                                        \
            UT acc = 1;                                                       \
            for (int64_t i = lo; i < hi; i++)                                 \
                acc *= (UT)p[i];                                              \
            memcpy(&res, &acc, sizeof res);                                   \
        } else if (op == KF_OP_MIN) {                                         \
            memcpy(&res, &ident, sizeof res);                                 \
            for (int64_t i = lo; i < hi; i++)                                 \
                res = p[i] < res ? p[i] : res;                                \
        } else {                                                              \
            memcpy(&res, &ident, sizeof res);                                 \
            for (int64_t i = lo; i < hi; i++)                                 \
                res = p[i] > res ? p[i] : res;                                \
        }                                                                     \
        kf_value v_ = {.bits = 0};                                            \
        memcpy(&v_, &res, sizeof res);                                        \
        out->bits = v_.bits;                                                  \
        double as = 0;                                                        \
        for (int64_t i = lo; i < hi; i++)                                     \
            as += fabs((double)p[i]);                                         \
        out->as = as;                                                         \
    } while (0)

/* Floats: sum in long double with Neumaier compensation, prod in long
 * double, min/max exact. */
#define FLOAT_PART(T)                                                         \
    do {                                                                      \
        const T *p = buf;                                                     \
        if (op == KF_OP_SUM) {                                                \
            long double s_ = 0, c_ = 0;                                       \
            for (int64_t i = lo; i < hi; i++)                                 \
                neumaier(&s_, &c_, p[i]);                                     \
            out->s = s_;                                                      \
            out->c = c_;                                                      \
        } else if (op == KF_OP_PROD) {                                        \
            long double pr = 1;                                               \
            for (int64_t i = lo; i < hi; i++)                                 \
                pr *= p[i];                                                   \
            out->s = pr;                                                      \
        } else {                                                              \
            T res;                                                            \
            memcpy(&res, &ident, sizeof res);                                 \
            if (op == KF_OP_MIN)                                              \
                for (int64_t i = lo; i < hi; i++)                             \
                    res = p[i] < res ? p[i] : res;                            \
            else                                                              \
                for (int64_t i = lo; i < hi; i++)                             \
                    res = p[i] > res ? p[i] : res;                            \
            kf_value v_ = {.bits = 0};                                        \
            memcpy(&v_, &res, sizeof res);                                    \
            out->bits = v_.bits;                                              \
        }                                                                     \
        double as = 0;                                                        \
        for (int64_t i = lo; i < hi; i++)                                     \
            as += fabs((double)p[i]);                                         \
        out->as = as;                                                         \
    } while (0)

typedef struct {
    kf_dtype t, acc;        /* the input's type, the accumulator's */
    kf_op op;
    const void *buf;
    kf_value ident;
    part *parts;
} ref_job;

/* bfloat16 and float16: as FLOAT_PART, each element widened to float
 * (exact); min and max give the accumulator's value bits. */
static void half_part(const ref_job *j, int64_t lo, int64_t hi, part *out)
{
    const uint16_t *p = j->buf;
    kf_op op = j->op;
    long double s = op == KF_OP_PROD ? 1 : 0, c = 0;
    float m = op == KF_OP_MIN ? INFINITY : -INFINITY;
    double as = 0;
    for (int64_t i = lo; i < hi; i++) {
        float x = kf_half_to_float(j->t, p[i]);
        as += fabs((double)x);
        if (op == KF_OP_SUM)
            neumaier(&s, &c, x);
        else if (op == KF_OP_PROD)
            s *= x;
        else if (op == KF_OP_MIN)
            m = x < m ? x : m;
        else
            m = x > m ? x : m;
    }
    out->s = s;
    out->c = c;
    out->as = as;
    kf_value v = {.bits = 0};
    if (j->acc == KF_FLOAT64)
        v.f64 = m;
    else if (j->acc == KF_FLOAT32)
        v.f32 = m;
    else
        v.h16 = kf_float_to_half(j->acc, m);
    out->bits = v.bits;
}

static void ref_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    ref_job *j = ctx;
    kf_op op = j->op;
    const void *buf = j->buf;
    kf_value ident = j->ident;
    part *out = &j->parts[piece];
    memset(out, 0, sizeof *out);
    if (kf_dtype_is_half(j->t) && !kf_op_is_bitwise(op)) {
        half_part(j, lo, hi, out);
        return;
    }
    if (kf_op_is_bitwise(op)) {
        /* on raw words (for floats too: not a meaningful case, but a
         * defined one); sum |x| only for integers, 0 for float bit patterns */
        if (kf_dtype_size(j->t) == 8)
            BITWISE_PART(uint64_t);
        else if (kf_dtype_size(j->t) == 2)
            BITWISE_PART(uint16_t);
        else
            BITWISE_PART(uint32_t);
        if (!kf_dtype_is_float(j->t)) {
            part tmp;
            ref_job k = *j;
            k.op = KF_OP_MIN;
            k.ident = verify_identity(j->t, KF_OP_MIN);
            k.parts = &tmp;
            ref_piece(&k, 0, lo, hi);
            out->as = tmp.as;
        }
        return;
    }
    switch (j->t) {
    case KF_INT32: INT_PART(int32_t, uint32_t); break;
    case KF_UINT32: INT_PART(uint32_t, uint32_t); break;
    case KF_INT64: INT_PART(int64_t, uint64_t); break;
    case KF_FLOAT32: FLOAT_PART(float); break;
    case KF_FLOAT64: FLOAT_PART(double); break;
    default: break;
    }
}

/* a op b on the value bits of type t (integers, bitwise, float min/max). */
#define COMBINE_AS(T, UT)                                                     \
    do {                                                                      \
        T x, y, r;                                                            \
        memcpy(&x, &a.bits, sizeof x);                                        \
        memcpy(&y, &b.bits, sizeof y);                                        \
        switch (op) {                                                         \
        case KF_OP_SUM: r = (T)((UT)x + (UT)y); break;                        \
        case KF_OP_PROD: r = (T)((UT)x * (UT)y); break;                       \
        case KF_OP_MIN: r = y < x ? y : x; break;                             \
        default: r = y > x ? y : x; break;                                    \
        }                                                                     \
        kf_value o = {.bits = 0};                                             \
        memcpy(&o, &r, sizeof r);                                             \
        return o;                                                             \
    } while (0)

static kf_value combine(kf_dtype t, kf_op op, kf_value a, kf_value b)
{
    if (kf_op_is_bitwise(op)) {
        kf_value o = {.bits = op == KF_OP_AND ? a.bits & b.bits : op == KF_OP_OR ? a.bits | b.bits : a.bits ^ b.bits};
        return o;
    }
    switch (t) {
    case KF_INT32: COMBINE_AS(int32_t, uint32_t);
    case KF_UINT32: COMBINE_AS(uint32_t, uint32_t);
    case KF_INT64: COMBINE_AS(int64_t, uint64_t);
    case KF_FLOAT32: COMBINE_AS(float, float);      /* min and max only */
    case KF_FLOAT64: COMBINE_AS(double, double);
    case KF_BFLOAT16: case KF_FLOAT16: {   /* min and max (sums and products: verify_combine) */
        float x = kf_half_to_float(t, a.h16), y = kf_half_to_float(t, b.h16);
        return op == KF_OP_MIN ? (y < x ? b : a) : (y > x ? b : a);
    }
    default: return a;
    }
}

kf_value verify_reference(kf_dtype t, kf_op op, const void *buf, int64_t n, double *abs_sum)
{
    return verify_reference_acc(t, t, op, buf, n, abs_sum);
}

/* Pieces already reduced.  A planted fault's model (verify_plant_model)
 * reduces an input that differs from one reduced before in one element, so
 * all of its pieces but one have been reduced already.  The last MEMO_MAX
 * inputs of more than one piece keep each piece's part under a hash of the
 * piece's bytes; a piece whose hash (with the types, the operator, n and
 * its place) is there takes that part instead of reducing it again.  The
 * hash changes with any change to one 8-byte word of a piece (every step
 * of it is a bijection), so a changed element is never taken for the one
 * before it; other changes collide with probability about 2^-64.  Hashing
 * a piece costs a fraction of reducing it (a tenth for integers, less for
 * floats). */
enum { MEMO_MAX = 64 };

typedef struct {
    kf_dtype t, acc;
    kf_op op;
    int64_t n, pieces;
    uint64_t *hash;
    part *parts;
} memo_entry;

static memo_entry memo[MEMO_MAX];
static int memo_next;           /* the slot the next input replaces */
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t hash_step(uint64_t h, uint64_t w)
{
    h = (h ^ w) * UINT64_C(0x9FB21C651E98DF25);
    return h ^ (h >> 32);
}

/* The bytes [p, p + len) as one word: four lanes of 8-byte words (each
 * step a bijection of the lane), the last partial word zero-padded, the
 * lanes and the length mixed in a chain of bijections. */
static uint64_t piece_hash(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4, w[4];
    size_t i = 0;
    for (; i + sizeof w <= len; i += sizeof w) {
        memcpy(w, b + i, sizeof w);
        h0 = hash_step(h0, w[0]);
        h1 = hash_step(h1, w[1]);
        h2 = hash_step(h2, w[2]);
        h3 = hash_step(h3, w[3]);
    }
    for (; i < len; i += 8) {
        uint64_t x = 0;
        memcpy(&x, b + i, len - i < 8 ? len - i : 8);
        h0 = hash_step(h0, x);
    }
    return mix64(h0 ^ mix64(h1 ^ mix64(h2 ^ mix64(h3 ^ mix64((uint64_t)len)))));
}

typedef struct {
    ref_job r;
    int64_t n;
    uint64_t *hash;
    int64_t found;              /* pieces taken from the memo (atomic) */
} memo_job;

static void memo_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    memo_job *m = ctx;
    const ref_job *j = &m->r;
    size_t es = kf_dtype_size(j->t);
    uint64_t h = piece_hash((const char *)j->buf + (size_t)lo * es, (size_t)(hi - lo) * es);
    m->hash[piece] = h;
    bool found = false;
    pthread_mutex_lock(&memo_lock);
    for (int e = 0; e < MEMO_MAX && !found; e++) {
        const memo_entry *x = &memo[e];
        if (x->hash && x->t == j->t && x->acc == j->acc && x->op == j->op && x->n == m->n && x->hash[piece] == h) {
            j->parts[piece] = x->parts[piece];
            found = true;
        }
    }
    pthread_mutex_unlock(&memo_lock);
    if (found)
        __atomic_fetch_add(&m->found, 1, __ATOMIC_RELAXED);
    else
        ref_piece(&m->r, piece, lo, hi);
}

/* The parts of buf's pieces, from the memo where it has them; an input
 * mostly new to it is kept there (one that differs from a kept one in a
 * few pieces is not: it is a planted fault's, used once).  false when out
 * of memory (parts untouched). */
static bool memo_parts(const ref_job *j, int64_t n, int64_t pieces)
{
    memo_job m = {.r = *j, .n = n, .hash = malloc((size_t)pieces * sizeof *m.hash), .found = 0};
    if (!m.hash)
        return false;
    kf_parallel_for(n, PIECE, memo_piece, &m);
    part *keep = m.found * 2 < pieces ? malloc((size_t)pieces * sizeof *keep) : NULL;
    if (!keep) {
        free(m.hash);
        return true;
    }
    memcpy(keep, j->parts, (size_t)pieces * sizeof *keep);
    pthread_mutex_lock(&memo_lock);
    memo_entry *x = &memo[memo_next];
    memo_next = (memo_next + 1) % MEMO_MAX;
    free(x->hash);
    free(x->parts);
    *x = (memo_entry){j->t, j->acc, j->op, n, pieces, m.hash, keep};
    pthread_mutex_unlock(&memo_lock);
    return true;
}

kf_value verify_reference_acc(kf_dtype t, kf_dtype acc, kf_op op, const void *buf, int64_t n, double *abs_sum)
{
    kf_value out = {.bits = 0};
    if (abs_sum)
        *abs_sum = 0;
    if ((int)t >= KF_REDUCE_DTYPES || (int)acc >= KF_REDUCE_DTYPES)
        return out;
    if (n <= 0)
        return verify_identity(acc, op);
    part one, *parts = &one;
    int64_t pieces = (n - 1) / PIECE + 1;
    if (pieces > 1 && !(parts = malloc((size_t)pieces * sizeof *parts))) {
        parts = &one;
        pieces = 1;
    }
    ref_job j = {t, acc, op, buf, verify_identity(t, op), parts};
    if (pieces == 1)
        ref_piece(&j, 0, 0, n);
    else if (!memo_parts(&j, n, pieces))
        kf_parallel_for(n, PIECE, ref_piece, &j);
    bool fl = kf_dtype_is_float(t) && !kf_op_is_bitwise(op);
    long double s = op == KF_OP_PROD ? 1 : 0, c = 0;
    double as = 0;
    kf_value v = {.bits = parts[0].bits};
    for (int64_t k = 0; k < pieces; k++) {
        as += parts[k].as;
        if (fl && op == KF_OP_SUM) {
            neumaier(&s, &c, parts[k].s);
            c += parts[k].c;
        } else if (fl && op == KF_OP_PROD) {
            s *= parts[k].s;
        } else if (k > 0) {
            kf_value b = {.bits = parts[k].bits};
            v = combine(acc, op, v, b);
        }
    }
    if (parts != &one)
        free(parts);
    if (abs_sum)
        *abs_sum = as;
    if (fl && (op == KF_OP_SUM || op == KF_OP_PROD)) {
        long double r = op == KF_OP_SUM ? s + c : s;
        if (acc == KF_FLOAT32)
            out.f32 = (float)r;
        else if (acc == KF_FLOAT64)
            out.f64 = (double)r;
        else /* a 2-byte accumulator: not offered (kf_acc_check), rounded once here */
            out.h16 = kf_float_to_half(acc, (float)r);
        return out;
    }
    out.bits = v.bits;
    if (kf_dtype_size(acc) == 4)
        out.bits &= UINT32_C(0xFFFFFFFF);
    else if (kf_dtype_size(acc) == 2)
        out.bits &= UINT32_C(0xFFFF);
    return out;
}

// ----------------------------------------------------------------------------
// Tolerance and comparison

/* Relative bound for d roundings of unit roundoff u: min(gamma_d, the
 * probabilistic bound with lambda = 10); see the comment at the top. */
static double rel_bound(double d, double u)
{
    if (d <= 0)
        return 0;
    double det = d * u < 1 ? d * u / (1 - d * u) : INFINITY;
    double prob = expm1(10.0 * sqrt(d) * u + d * u * u / (1 - u));
    return det < prob ? det : prob;
}

static double value_as_double(kf_dtype t, kf_value v);

static double half_ulp(kf_dtype t, kf_value ref)
{
    if (kf_dtype_is_half(t)) {
        float a = fabsf(kf_half_to_float(t, ref.h16));
        if (!isfinite(a))
            return 0;
        uint16_t b = kf_float_to_half(t, a);
        return 0.5 * ((double)kf_half_to_float(t, (uint16_t)(b + 1)) - (double)a);
    }
    if (t == KF_FLOAT32) {
        float a = fabsf(ref.f32);
        if (!isfinite(a))
            return 0;
        float up = nextafterf(a, INFINITY);
        return isfinite(up) ? 0.5 * ((double)up - (double)a) : 0.5 * ((double)a - nextafterf(a, 0));
    }
    double a = fabs(ref.f64);
    if (!isfinite(a))
        return 0;
    double up = nextafter(a, INFINITY);
    return isfinite(up) ? 0.5 * (up - a) : 0.5 * (a - nextafter(a, 0));
}

double verify_tolerance(kf_dtype t, kf_op op, int64_t n, int64_t depth, double abs_sum, kf_value ref)
{
    if (!kf_dtype_is_float(t) || (op != KF_OP_SUM && op != KF_OP_PROD))
        return 0;
    double u = t == KF_FLOAT32 ? 0x1p-24 : t == KF_FLOAT64 ? 0x1p-53 : t == KF_BFLOAT16 ? 0x1p-8 : 0x1p-11;
    /* the long double reference's own error (64-bit significand) */
    double uref = LDBL_EPSILON;
    double r = fabs(value_as_double(t, ref));
    if (op == KF_OP_SUM) {
        int64_t hi = n > 1 ? n : 1;
        int64_t d = depth < 1 ? 1 : depth > hi ? hi : depth;
        return rel_bound((double)d, u) * abs_sum + half_ulp(t, ref) + 4 * uref * abs_sum;
    }
    /* A product carries the rounding of every one of its n - 1
     * multiplications, whatever the tree, and for factors near 1 those
     * roundings are biased, not independent (measured on the H100: 18
     * "sigmas" at n = 10^6).  So the deterministic bound gamma_(n-1). */
    double d = n > 1 ? (double)(n - 1) : 0;
    double det = d * u < 1 ? d * u / (1 - d * u) : INFINITY;
    return r * det + half_ulp(t, ref) + r * (double)(n > 0 ? n : 0) * uref;
}

double verify_err_scale(kf_dtype t, kf_op op, double abs_sum, kf_value ref)
{
    if (!kf_dtype_is_float(t))
        return 0;
    return op == KF_OP_SUM ? abs_sum : op == KF_OP_PROD ? fabs(value_as_double(t, ref)) : 0;
}

double verify_tolerance_out(kf_dtype acc, kf_dtype out, kf_op op, int64_t n, int64_t depth, double abs_sum,
                            kf_value ref)
{
    if (acc == out || !kf_dtype_is_half(out))
        return verify_tolerance(acc, op, n, depth, abs_sum, ref);
    /* the accumulator's bound at the reference widened (exact), then the
     * one rounding to `out`: |round(x') - round(x)| <= |x' - x| + one ulp of
     * out at the larger magnitude */
    kf_value ra = {.bits = 0};
    double r = (double)kf_half_to_float(out, ref.h16);
    if (acc == KF_FLOAT64)
        ra.f64 = r;
    else
        ra.f32 = (float)r;
    double t = verify_tolerance(acc, op, n, depth, abs_sum, ra);
    kf_value big = {.bits = 0};
    big.h16 = kf_float_to_half(out, (float)(fabs(r) + t));
    return t + 2 * half_ulp(out, big);
}

static double value_as_double(kf_dtype t, kf_value v)
{
    switch (t) {
    case KF_INT32: return v.i32;
    case KF_UINT32: return v.u32;
    case KF_INT64: return (double)v.i64;
    case KF_FLOAT32: return v.f32;
    case KF_FLOAT64: return v.f64;
    case KF_BFLOAT16: case KF_FLOAT16: return kf_half_to_float(t, v.h16);
    default: return 0;
    }
}

bool verify_check(kf_dtype t, kf_op op, kf_value gpu, kf_value ref, double tol, double *abs_err, double *used)
{
    bool ok;
    double err = 0, used_tol = 0;
    bool wide = kf_dtype_size(t) == 8;

    if (!kf_dtype_is_float(t) || kf_op_is_bitwise(op)) {
        ok = wide ? gpu.bits == ref.bits : kf_dtype_size(t) == 2 ? gpu.h16 == ref.h16 : gpu.u32 == ref.u32;
        if (!ok)
            err = kf_dtype_is_float(t) ? NAN
                                       : fabs(value_as_double(t, gpu) - value_as_double(t, ref));
    } else {
        double g = value_as_double(t, gpu), rf = value_as_double(t, ref);
        if (isnan(g) || isnan(rf)) {
            ok = false;
            err = NAN;
        } else if (!isfinite(rf)) {
            ok = g == rf;
            err = ok ? 0 : INFINITY;
        } else if (!isfinite(g)) {
            ok = false;
            err = INFINITY;
        } else if (op == KF_OP_MIN || op == KF_OP_MAX) {
            ok = g == rf;       /* -0.0 == 0.0 is fine */
            err = fabs(g - rf);
        } else {
            used_tol = tol;
            err = fabs(g - rf);
            ok = err <= tol;
        }
    }
    if (abs_err)
        *abs_err = err;
    if (used)
        *used = used_tol;
    return ok;
}

bool verify_compare(kf_dtype t, kf_op op, kf_value gpu, kf_value ref, double tol, kf_result *r)
{
    double err, used_tol;
    bool ok = verify_check(t, op, gpu, ref, tol, &err, &used_tol);
    if (r) {
        verify_format(t, gpu, r->gpu_value, sizeof r->gpu_value);
        verify_format(t, ref, r->ref_value, sizeof r->ref_value);
        r->abs_err = err;
        r->tolerance = used_tol;
    }
    return ok;
}

void verify_format(kf_dtype t, kf_value v, char *buf, size_t len)
{
    switch (t) {
    case KF_INT32: snprintf(buf, len, "%" PRId32, v.i32); break;
    case KF_UINT32: snprintf(buf, len, "%" PRIu32, v.u32); break;
    case KF_INT64: snprintf(buf, len, "%" PRId64, v.i64); break;
    case KF_FLOAT32: snprintf(buf, len, "%.9g", (double)v.f32); break;
    case KF_FLOAT64: snprintf(buf, len, "%.17g", v.f64); break;
    case KF_BFLOAT16: case KF_FLOAT16: snprintf(buf, len, "%.5g", (double)kf_half_to_float(t, v.h16)); break;
    default: snprintf(buf, len, "?"); break;
    }
}

// ----------------------------------------------------------------------------
// Element arithmetic and the planted-fault model

kf_value verify_load(kf_dtype t, const void *buf, int64_t i)
{
    kf_value v = {.bits = 0};
    size_t es = kf_dtype_size(t);
    memcpy(&v, (const char *)buf + (size_t)i * es, es);
    return v;
}

kf_value verify_load_acc(kf_dtype tin, kf_dtype tacc, const void *buf, int64_t i)
{
    kf_value v = verify_load(tin, buf, i);
    if (tin == tacc || !kf_dtype_is_half(tin))
        return v;
    float x = kf_half_to_float(tin, v.h16);
    kf_value o = {.bits = 0};
    if (tacc == KF_FLOAT64)
        o.f64 = x;
    else
        o.f32 = x;
    return o;
}

kf_value verify_combine(kf_dtype t, kf_op op, kf_value a, kf_value b)
{
    if (kf_dtype_is_half(t) && (op == KF_OP_SUM || op == KF_OP_PROD)) {
        float x = kf_half_to_float(t, a.h16), y = kf_half_to_float(t, b.h16);
        kf_value o = {.bits = 0};
        o.h16 = kf_float_to_half(t, op == KF_OP_SUM ? x + y : x * y);
        return o;
    }
    if (kf_dtype_is_float(t) && (op == KF_OP_SUM || op == KF_OP_PROD)) {
        kf_value o = {.bits = 0};
        if (t == KF_FLOAT32)
            o.f32 = op == KF_OP_SUM ? a.f32 + b.f32 : a.f32 * b.f32;
        else
            o.f64 = op == KF_OP_SUM ? a.f64 + b.f64 : a.f64 * b.f64;
        return o;
    }
    return combine(t, op, a, b);
}

void verify_plant_model(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                        const kf_plant *spec, void *in, const void *ref, const double *ref_aux, unsigned char poison,
                        void *out, double *aux)
{
    const kf_family *f = family_of(v);
    const reduction_ops *o = reduction_of(v);
    kf_dtype t = variant_dtype(v);
    size_t es = kf_dtype_size(t), es_out = kf_dtype_size(variant_out_dtype(v));
    int64_t nout = o->outputs(s);
    /* the input as the fault sees it differs from `in` at spec->elem at
     * most: the reference of `in`, with what that element feeds recomputed */
    memcpy(out, ref, (size_t)nout * es_out);
    memcpy(aux, ref_aux, (size_t)nout * sizeof *aux);
    char *x = (char *)in + (size_t)(spec->elem > 0 ? spec->elem : 0) * es;
    kf_value saved = {.bits = 0};
    if (spec->elem >= 0) {
        memcpy(&saved, x, es);
        kf_value put = spec->shift ? verify_load(t, in, spec->elem + 1) : verify_identity(t, variant_op(v));
        memcpy(x, &put, es);
        if (o->reference_at)
            o->reference_at(v, s, in, spec->elem, out, aux);
        else
            o->reference(v, s, in, out, aux);
    }
    if (spec->unit >= 0 && f->plant_outputs)
        f->plant_outputs(v, s, p, offset, spec, in, out);
    if (spec->elem >= 0)
        memcpy(x, &saved, es);
    if (spec->unwritten >= 0)
        memset((char *)out + (size_t)spec->unwritten * es_out, poison, es_out);
}

int64_t verify_plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                           const kf_plant *spec, void *in, const void *ref, const double *aux, bool exact,
                           kf_result *r)
{
    const reduction_ops *o = reduction_of(v);
    int64_t nout = o->outputs(s);
    size_t es = kf_dtype_size(variant_out_dtype(v));
    void *out = malloc((size_t)nout * es + 1);
    double *oaux = malloc((size_t)nout * sizeof *oaux + 1);
    int64_t bad = out && oaux ? 0 : -1;
    /* the poison matters only where an output is left unwritten */
    for (int k = 0; k < (spec->unwritten >= 0 ? 2 : 1) && bad == 0; k++) {
        verify_plant_model(v, s, p, offset, spec, in, ref, aux, k ? 0x00 : 0xFF, out, oaux);
        bad = o->compare(v, s, p, out, ref, aux, exact, r);
    }
    free(out);
    free(oaux);
    return bad;
}

void verify_vector_split(int64_t offset, size_t es, int vw, int64_t count, int64_t *prefix, int64_t *nv,
                         int64_t *tail)
{
    int64_t e = (int64_t)es;
    *prefix = 0;
    if (vw > 1) {
        int64_t align = e * vw < 16 ? e * vw : 16;
        int64_t mis = offset * e % align / e;
        *prefix = mis ? align / e - mis : 0;
        if (*prefix > count)
            *prefix = count;
    }
    *nv = (count - *prefix) / vw;
    *tail = count - *prefix - *nv * vw;
}
