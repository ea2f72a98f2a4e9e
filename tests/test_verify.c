/*
 * test_verify.c -- input data, CPU reference, tolerance and comparison.
 *
 *   make build/tests/test_verify && build/tests/test_verify
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_quiet.h"
#include "util.h"
#include "verify.h"

static void *fill_new(kf_dtype t, kf_op op, uint64_t seed, int64_t n)
{
    void *p = malloc((size_t)(n ? n : 1) * kf_dtype_size(t));
    ck_assert_ptr_nonnull(p);
    verify_fill(t, op, seed, p, n);
    return p;
}

static bool all_zero(const void *p, size_t bytes)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++)
        if (c[i])
            return false;
    return true;
}

// ----------------------------------------------------------------------------
// Data

/* The exact data (issue: a wrong kernel must never pass): no element is the
 * identity, neighbours differ, and a dropped, doubled or replaced element
 * changes the exact result, which the accumulator's arithmetic (the type's
 * own; float32 for bfloat16 and float16) reaches in any order (here:
 * forward and in a strided order, as a grid-stride loop). */
START_TEST(exact_data_detects_single_element_changes)
{
    const kf_op ops[] = {KF_OP_SUM, KF_OP_PROD, KF_OP_XOR};
    const int64_t ns[] = {1, 2, 31, 4097, 100003};
    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            kf_op op = ops[o];
            if (op == KF_OP_XOR && kf_dtype_is_float(t))
                continue;
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                int64_t n = ns[k];
                void *x = malloc((size_t)n * kf_dtype_size(t));
                verify_fill_exact(t, op, 7, x, n);
                kf_dtype acc = kf_acc_dtype(t, KF_ACCT_AUTO);
                kf_value id = verify_identity(t, op), ref = verify_reference_acc(t, acc, op, x, n, NULL);
                kf_value fwd = verify_identity(acc, op), strided = fwd;
                for (int64_t i = 0; i < n; i++) {
                    kf_value xi = verify_load(t, x, i);
                    ck_assert_msg(memcmp(&xi, &id, kf_dtype_size(t)) != 0, "element %lld is the identity",
                                  (long long)i);
                    if (i + 1 < n && !(kf_dtype_is_float(t) && op == KF_OP_PROD)) {
                        kf_value nx = verify_load(t, x, i + 1);
                        ck_assert_msg(memcmp(&xi, &nx, kf_dtype_size(t)) != 0, "neighbours %lld equal",
                                      (long long)i);
                    }
                    fwd = verify_combine(acc, op, fwd, verify_load_acc(t, acc, x, i));
                }
                for (int64_t s = 0; s < 64; s++)
                    for (int64_t i = s; i < n; i += 64)
                        strided = verify_combine(acc, op, strided, verify_load_acc(t, acc, x, i));
                ck_assert_msg(fwd.bits == ref.bits && strided.bits == ref.bits,
                              "dtype %d op %d n %lld: not exact in every order", t, op, (long long)n);
                /* drop the last element, double the first: the answer changes */
                kf_value drop = verify_reference_acc(t, acc, op, x, n - 1, NULL);
                kf_value twice = verify_combine(acc, op, ref, verify_load_acc(t, acc, x, 0));
                ck_assert_msg(drop.bits != ref.bits && twice.bits != ref.bits,
                              "dtype %d op %d n %lld: a dropped or doubled element is invisible", t, op, (long long)n);
                free(x);
            }
        }
    }
}
END_TEST

/* Results rounded once to the 2-byte input type (acc_dtype input): each
 * segment's exact result is small and exact in that type, and a dropped or
 * doubled element, a neighbour read in its place, or a segment's result
 * given to the next segment changes the rounded answer.  (With the plain
 * exact data the bfloat16 sum of 4097 elements rounds to a multiple of 16,
 * and one element less is invisible.) */
START_TEST(exact_rounded_data_detects_single_element_changes)
{
    const kf_dtype ts[] = {KF_BFLOAT16, KF_FLOAT16};
    const kf_op ops[] = {KF_OP_SUM, KF_OP_PROD};
    /* segments, length, stride */
    const int64_t shapes[][3] = {{1, 1, 1},  {1, 2, 2},   {1, 3, 3},   {1, 4, 4},     {1, 31, 31},
                                 {1, 4097, 4097}, {1, 100003, 100003}, {7, 1, 1}, {5, 2, 5}, {6, 3, 3},
                                 {4, 37, 40}, {3, 1000, 1000}, {200, 5, 7}, {9, 64, 64}};
    for (size_t a = 0; a < 2; a++)
        for (size_t o = 0; o < 2; o++)
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                kf_dtype t = ts[a];
                kf_op op = ops[o];
                int64_t segs = shapes[k][0], len = shapes[k][1], stride = shapes[k][2];
                int64_t n = (segs - 1) * stride + len;
                uint16_t *x = malloc((size_t)n * 2);
                verify_fill_exact_rounded(t, op, 7, x, n, segs, len, stride);
                kf_value prev = {.bits = 0};
                for (int64_t g = 0; g < segs; g++) {
                    uint16_t *s = x + g * stride;
                    kf_value ref = verify_reference_acc(t, t, op, s, len, NULL);
                    double exact = op == KF_OP_SUM ? 0 : 1;
                    for (int64_t i = 0; i < len; i++) {
                        float xi = kf_half_to_float(t, s[i]);
                        ck_assert_msg(xi != (op == KF_OP_SUM ? 0.0f : 1.0f), "element %lld is the identity",
                                      (long long)i);
                        if (i + 1 < len && op == KF_OP_SUM)
                            ck_assert_msg(s[i] != s[i + 1], "neighbours %lld equal", (long long)i);
                        exact = op == KF_OP_SUM ? exact + xi : exact * xi;
                    }
                    if (op == KF_OP_SUM) {
                        double want = 20 + (97 * (g % 181)) % 181;
                        ck_assert_msg(exact == ((g / 181) % 2 ? -want : want), "dtype %d segment %lld of %lld sums to %g",
                                      t, (long long)g, (long long)len, exact);
                    }
                    else
                        ck_assert_msg(fabs(exact) <= (t == KF_FLOAT16 ? 16384 : 0x1p120), "product %g", exact);
                    ck_assert_msg(kf_half_to_float(t, ref.h16) == exact, "dtype %d op %d len %lld: %g rounds",
                                  t, op, (long long)len, exact);
                    /* every other segment here (all within 180 rows) has another result */
                    for (int64_t e = 0; e < g && op == KF_OP_SUM; e++)
                        ck_assert_msg(verify_reference_acc(t, t, op, x + e * stride, len, NULL).h16 != ref.h16,
                                      "segments %lld and %lld give one result", (long long)e, (long long)g);
                    (void)prev;
                    /* drop element i, count it twice, read its neighbour instead */
                    int64_t step = len > 5000 ? 97 : 1;
                    for (int64_t i = 0; i < len; i += step) {
                        float xi = kf_half_to_float(t, s[i]);
                        double less = op == KF_OP_SUM ? exact - xi : exact / xi;
                        double more = op == KF_OP_SUM ? exact + xi : exact * xi;
                        uint16_t rl = kf_float_to_half(t, (float)less), rm = kf_float_to_half(t, (float)more);
                        if (op == KF_OP_SUM) { /* a product's -1 factors cancel in pairs: shown by the suites */
                            ck_assert_msg(rl != ref.h16 && rm != ref.h16, "dtype %d len %lld: element %lld invisible",
                                          t, (long long)len, (long long)i);
                            if (i + 1 < len) {
                                float nb = kf_half_to_float(t, s[i + 1]);
                                ck_assert(kf_float_to_half(t, (float)(exact - xi + nb)) != ref.h16);
                            }
                        }
                    }
                }
                free(x);
            }
}
END_TEST

/* Float sums stay integers far below 2^24 at large n; float products are
 * +-2^k with |k| <= the marks; min/max/and/or use the realistic data. */
START_TEST(exact_data_magnitudes)
{
    int64_t n = ((int64_t)1 << 22) + 1;
    float *f = malloc((size_t)n * sizeof *f);
    /* positive up to 2^22 (no part sums to 0), signed beyond */
    verify_fill_exact(KF_FLOAT32, KF_OP_SUM, 3, f, n - 1);
    double s = 0;
    for (int64_t i = 0; i < n - 1; i++) {
        ck_assert(f[i] == rintf(f[i]) && f[i] >= 1 && f[i] <= 4);
        s += f[i];
    }
    ck_assert_msg(s <= 1 << 24, "the sum reaches %g", s);
    verify_fill_exact(KF_FLOAT32, KF_OP_SUM, 3, f, n);
    double worst = 0;
    int neg = 0;
    s = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert(f[i] == rintf(f[i]) && fabsf(f[i]) >= 1 && fabsf(f[i]) <= 4);
        neg += f[i] < 0;
        s += f[i];
        worst = fabs(s) > worst ? fabs(s) : worst;
    }
    ck_assert_msg(neg > n / 3 && worst < 1 << 20, "%d negative; partial sums reach %g", neg, worst);
    verify_fill_exact(KF_FLOAT32, KF_OP_PROD, 3, f, n);
    int marks = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert(f[i] == -1.0f || f[i] == -2.0f || f[i] == -4.0f);
        marks += f[i] != -1.0f;
    }
    ck_assert_msg(marks == 60, "%d marks", marks);
    float *g = malloc((size_t)n * sizeof *g);
    verify_fill_exact(KF_FLOAT32, KF_OP_MAX, 3, f, 1000);
    verify_fill(KF_FLOAT32, KF_OP_MAX, 3, g, 1000);
    ck_assert(memcmp(f, g, 1000 * sizeof *f) == 0);
    ck_assert(!verify_exact_differs(KF_INT32, KF_OP_MIN) && verify_exact_differs(KF_FLOAT32, KF_OP_SUM));
    ck_assert(verify_has_accuracy(KF_FLOAT64, KF_OP_PROD) && !verify_has_accuracy(KF_INT32, KF_OP_SUM));
    free(f);
    free(g);
}
END_TEST

/* The host's 2-byte floats, written by hand (kforge.c): float16 against the
 * compiler's _Float16 (every one of the 65536 bit patterns widened, and
 * every value halfway between two neighbours, and 10^6 random floats,
 * narrowed); bfloat16 round trips and ties to even. */
START_TEST(half_conversions)
{
    for (uint32_t h = 0; h < 65536; h++) {
        _Float16 x;
        uint16_t b = (uint16_t)h;
        memcpy(&x, &b, 2);
        float want = (float)x, got = kf_fp16_to_float(b);
        ck_assert_msg(memcmp(&want, &got, 4) == 0 || (isnan(want) && isnan(got)), "fp16 %04x", h);
        if (!isnan(got))
            ck_assert_msg(kf_float_to_fp16(got) == b, "fp16 round trip %04x", h);
        /* halfway to the next one up (finite, same sign) */
        if ((h & 0x7fff) < 0x7bff) {
            float next = kf_fp16_to_float((uint16_t)(h + 1)), mid = (float)(((double)got + (double)next) / 2);
            _Float16 r = (_Float16)mid;
            uint16_t rb;
            memcpy(&rb, &r, 2);
            ck_assert_msg(kf_float_to_fp16(mid) == rb, "fp16 tie above %04x: %04x, want %04x", h,
                          kf_float_to_fp16(mid), rb);
        }
        float bf = kf_bf16_to_float(b);
        if (!isnan(bf))
            ck_assert_msg(kf_float_to_bf16(bf) == b, "bf16 round trip %04x", h);
        else
            ck_assert(isnan(kf_bf16_to_float(kf_float_to_bf16(bf))));
    }
    uint64_t z = 1;
    for (int i = 0; i < 1000000; i++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t u = (uint32_t)(z >> 32);
        float f;
        memcpy(&f, &u, 4);
        if (isnan(f))
            continue;
        _Float16 r = (_Float16)f;
        uint16_t rb;
        memcpy(&rb, &r, 2);
        ck_assert_msg(kf_float_to_fp16(f) == rb, "fp16 of %a: %04x, want %04x", (double)f, kf_float_to_fp16(f), rb);
        /* bfloat16: the nearest of the two neighbours, ties to the even one */
        uint16_t lo = (uint16_t)(u >> 16), got = kf_float_to_bf16(f);
        double d = f, a = kf_bf16_to_float(lo), b2 = kf_bf16_to_float((uint16_t)(lo + 1));
        if (isinf(b2)) /* above the largest finite one: infinity from a half step on (IEEE) */
            b2 = a + (a - kf_bf16_to_float((uint16_t)(lo - 1)));
        uint16_t want = fabs(d - a) < fabs(b2 - d) ? lo : fabs(d - a) > fabs(b2 - d) ? (uint16_t)(lo + 1)
                                                    : (lo & 1) ? (uint16_t)(lo + 1) : lo;
        ck_assert_msg(got == want, "bf16 of %a: %04x, want %04x", (double)f, got, want);
    }
    ck_assert_int_eq(kf_float_to_bf16(1.0f + 0x1p-8f), 0x3f80);  /* a tie: to even (down) */
    ck_assert_int_eq(kf_float_to_bf16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82); /* a tie: to even (up) */
    ck_assert_int_eq(kf_float_to_fp16(65520.0f), 0x7c00);         /* rounds to infinity */
    ck_assert_int_eq(kf_float_to_fp16(0x1p-25f), 0x0000);         /* half the smallest subnormal: to even */
    ck_assert_int_eq(kf_float_to_fp16(0x1.8p-25f), 0x0001);
}
END_TEST

START_TEST(fill_deterministic_and_prefix_stable)
{
    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        for (int op = 0; op < KF_OP_COUNT; op++) {
            size_t es = kf_dtype_size(t);
            void *a = fill_new(t, op, 42, 1000);
            void *b = fill_new(t, op, 42, 1000);
            void *small = fill_new(t, op, 42, 37);
            void *other = fill_new(t, op, 43, 1000);
            ck_assert_msg(memcmp(a, b, 1000 * es) == 0, "%s/%s not deterministic",
                          kf_dtype_names[t], kf_op_names[op]);
            ck_assert_msg(memcmp(a, small, 37 * es) == 0, "%s/%s: element i depends on n",
                          kf_dtype_names[t], kf_op_names[op]);
            ck_assert_msg(memcmp(a, other, 1000 * es) != 0, "%s/%s ignores the seed",
                          kf_dtype_names[t], kf_op_names[op]);
            free(a);
            free(b);
            free(small);
            free(other);
        }
    }
}
END_TEST

START_TEST(fill_differs_between_ops_and_dtypes)
{
    float *a = fill_new(KF_FLOAT32, KF_OP_SUM, 1, 64);
    float *b = fill_new(KF_FLOAT32, KF_OP_MIN, 1, 64);
    ck_assert(memcmp(a, b, 64 * sizeof *a) != 0);
    free(a);
    free(b);
}
END_TEST

START_TEST(fill_never_all_zeros)
{
    static const int64_t sizes[] = {1, 2, 3, 63, 64, 1000};
    for (int t = 0; t < KF_REDUCE_DTYPES; t++)
        for (int op = 0; op < KF_OP_COUNT; op++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
                for (uint64_t seed = 0; seed < 200; seed++) {
                    void *p = fill_new(t, op, seed, sizes[k]);
                    ck_assert_msg(!all_zero(p, (size_t)sizes[k] * kf_dtype_size(t)),
                                  "%s/%s n=%lld seed=%llu all zeros", kf_dtype_names[t],
                                  kf_op_names[op], (long long)sizes[k], (unsigned long long)seed);
                    free(p);
                }
}
END_TEST

START_TEST(fill_distributions)
{
    const int64_t n = 1 << 16;
    float *f = fill_new(KF_FLOAT32, KF_OP_SUM, 7, n);
    double *d = fill_new(KF_FLOAT64, KF_OP_SUM, 7, n);
    int neg = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert(f[i] >= -1.0f && f[i] < 1.0f);
        ck_assert(d[i] >= -1.0 && d[i] < 1.0);
        neg += f[i] < 0;
    }
    ck_assert_int_gt(neg, n / 2 - n / 20);
    ck_assert_int_lt(neg, n / 2 + n / 20);
    free(f);
    free(d);

    f = fill_new(KF_FLOAT32, KF_OP_PROD, 7, n);
    d = fill_new(KF_FLOAT64, KF_OP_PROD, 7, n);
    for (int64_t i = 0; i < n; i++) {
        ck_assert(f[i] >= 1.0f - 0x1p-12f && f[i] <= 1.0f + 0x1p-12f && f[i] != 0);
        ck_assert(d[i] >= 1.0 - 0x1p-12 && d[i] <= 1.0 + 0x1p-12);
    }
    free(f);
    free(d);

    /* int32 sum data covers the full range, both signs, large magnitudes */
    int32_t *x = fill_new(KF_INT32, KF_OP_SUM, 7, n);
    int big = 0, negi = 0;
    for (int64_t i = 0; i < n; i++) {
        big += x[i] > (1 << 30) || x[i] < -(1 << 30);
        negi += x[i] < 0;
    }
    ck_assert_int_gt(big, n / 3);
    ck_assert_int_gt(negi, n / 3);
    free(x);

    /* and: all ones except ~1/64 with exactly one bit clear */
    uint32_t *u = fill_new(KF_UINT32, KF_OP_AND, 7, n);
    int sparse = 0;
    for (int64_t i = 0; i < n; i++)
        if (u[i] != UINT32_MAX) {
            ck_assert_int_eq(__builtin_popcount(~u[i]), 1);
            sparse++;
        }
    ck_assert_int_gt(sparse, n / 64 / 2);
    ck_assert_int_lt(sparse, n / 64 * 2);
    free(u);

    /* or: zeros except ~1/64 with one bit set; element 0 never zero */
    for (uint64_t seed = 0; seed < 100; seed++) {
        int64_t *w = fill_new(KF_INT64, KF_OP_OR, seed, n);
        ck_assert(w[0] != 0);
        int set = 0;
        for (int64_t i = 0; i < n; i++)
            if (w[i]) {
                ck_assert_int_eq(__builtin_popcountll((unsigned long long)w[i]), 1);
                set++;
            }
        ck_assert_int_gt(set, n / 64 / 2);
        ck_assert_int_lt(set, n / 64 * 2);
        free(w);
    }
}
END_TEST

START_TEST(prod_data_never_zero)
{
    const int64_t n = 1 << 20;
    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        void *p = fill_new(t, KF_OP_PROD, 99, n);
        kf_value r = verify_reference(t, KF_OP_PROD, p, n, NULL);
        switch (t) {
        case KF_INT32: ck_assert(r.i32 != 0 && (r.i32 & 1)); break;
        case KF_UINT32: ck_assert(r.u32 != 0 && (r.u32 & 1)); break;
        case KF_INT64: ck_assert(r.i64 != 0 && (r.i64 & 1)); break;
        case KF_FLOAT32: ck_assert(isfinite(r.f32) && r.f32 > 1e-6f && r.f32 < 1e6f); break;
        case KF_FLOAT64: ck_assert(isfinite(r.f64) && r.f64 > 1e-6 && r.f64 < 1e6); break;
        }
        /* and every prefix product is nonzero too (integers: odd) */
        if (!kf_dtype_is_float(t))
            for (int64_t k = 1; k < 50; k++) {
                kf_value q = verify_reference(t, KF_OP_PROD, p, k, NULL);
                ck_assert(q.bits & 1);
            }
        free(p);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// Reference

START_TEST(reference_int32_wraps)
{
    int32_t a[] = {INT32_MAX, 1};
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_SUM, a, 2, NULL).i32, INT32_MIN);
    int32_t b[] = {INT32_MIN, -1};
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_SUM, b, 2, NULL).i32, INT32_MAX);
    int32_t c[] = {65536, 65537};   /* 2^32 + 65536 */
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_PROD, c, 2, NULL).i32, 65536);
    int32_t d[] = {3, -5, 7};
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_PROD, d, 3, NULL).i32, -105);
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_SUM, d, 3, NULL).i32, 5);
    int32_t e[] = {-5, 3, INT32_MIN, 7};
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_MIN, e, 4, NULL).i32, INT32_MIN);
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_MAX, e, 4, NULL).i32, 7);
}
END_TEST

START_TEST(reference_uint32)
{
    uint32_t a[] = {UINT32_MAX, 2};
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_SUM, a, 2, NULL).u32, 1);
    uint32_t b[] = {0x80000000u, 1};   /* unsigned order: the high bit is large */
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_MIN, b, 2, NULL).u32, 1);
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_MAX, b, 2, NULL).u32, 0x80000000u);
    uint32_t c[] = {0x10000u, 0x10000u, 3};
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_PROD, c, 3, NULL).u32, 0);
}
END_TEST

START_TEST(reference_int64)
{
    int64_t a[] = {INT64_MAX, 1};
    ck_assert(verify_reference(KF_INT64, KF_OP_SUM, a, 2, NULL).i64 == INT64_MIN);
    int64_t b[] = {INT64_C(1) << 32, (INT64_C(1) << 32) + 1};
    ck_assert(verify_reference(KF_INT64, KF_OP_PROD, b, 2, NULL).i64 == INT64_C(1) << 32);
    int64_t c[] = {-9, INT64_MIN, INT64_MAX, 0};
    ck_assert(verify_reference(KF_INT64, KF_OP_MIN, c, 4, NULL).i64 == INT64_MIN);
    ck_assert(verify_reference(KF_INT64, KF_OP_MAX, c, 4, NULL).i64 == INT64_MAX);
    int64_t d[] = {1000000000000LL, -999999999999LL, 5};
    double as;
    ck_assert(verify_reference(KF_INT64, KF_OP_SUM, d, 3, &as).i64 == 6);
    ck_assert_double_eq(as, 2000000000004.0); /* |10^12| + |-(10^12 - 1)| + 5 */
}
END_TEST

START_TEST(reference_float_min_max)
{
    float a[] = {0.5f, -2.25f, 3.0f, -0.0f, 1e-30f};
    ck_assert_float_eq(verify_reference(KF_FLOAT32, KF_OP_MIN, a, 5, NULL).f32, -2.25f);
    ck_assert_float_eq(verify_reference(KF_FLOAT32, KF_OP_MAX, a, 5, NULL).f32, 3.0f);
    double b[] = {-1e300, 1e-300, 7.5, -7.5};
    ck_assert_double_eq(verify_reference(KF_FLOAT64, KF_OP_MIN, b, 4, NULL).f64, -1e300);
    ck_assert_double_eq(verify_reference(KF_FLOAT64, KF_OP_MAX, b, 4, NULL).f64, 7.5);
    /* n = 0 gives the identity */
    ck_assert(isinf(verify_reference(KF_FLOAT32, KF_OP_MIN, a, 0, NULL).f32));
}
END_TEST

START_TEST(reference_bitwise)
{
    int32_t a[] = {0xFFF0, 0xFF0F, 0xF0FF};
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_AND, a, 3, NULL).i32, 0xF000);
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_OR, a, 3, NULL).i32, 0xFFFF);
    ck_assert_int_eq(verify_reference(KF_INT32, KF_OP_XOR, a, 3, NULL).i32, 0xF000);
    uint64_t b[] = {UINT64_MAX, UINT64_MAX ^ (UINT64_C(1) << 63), UINT64_MAX ^ 1};
    ck_assert(verify_reference(KF_INT64, KF_OP_AND, b, 3, NULL).bits == (UINT64_MAX ^ (UINT64_C(1) << 63) ^ 1));
    uint64_t c[] = {0, UINT64_C(1) << 40, 0, UINT64_C(1) << 2};
    ck_assert(verify_reference(KF_INT64, KF_OP_OR, c, 4, NULL).bits == ((UINT64_C(1) << 40) | 4));
    ck_assert(verify_reference(KF_INT64, KF_OP_XOR, c, 4, NULL).bits == ((UINT64_C(1) << 40) | 4));
    uint32_t d[] = {0x80000001u, 0x80000001u};
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_XOR, d, 2, NULL).u32, 0);
    /* empty and = all ones */
    ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_AND, d, 0, NULL).u32, UINT32_MAX);
}
END_TEST

START_TEST(reference_compensated_sum)
{
    /* 2^70 + 1 needs 71 bits: a plain long double sum loses both ones */
    double a[] = {0x1p70, 1.0, -0x1p70, 1.0};
    double as;
    ck_assert_double_eq(verify_reference(KF_FLOAT64, KF_OP_SUM, a, 4, &as).f64, 2.0);
    ck_assert_double_eq(as, 0x1p71 + 2);
    float b[] = {0x1p40f, 1.0f, 0x1p-40f, -0x1p40f};
    ck_assert_float_eq(verify_reference(KF_FLOAT32, KF_OP_SUM, b, 4, NULL).f32, 1.0f + 0x1p-40f);
}
END_TEST

/* The generator's float data are multiples of 2^-23 (float32) or 2^-52
 * (float64), so an integer sum of the scaled values is exact. */
START_TEST(reference_sum_matches_exact)
{
    const int64_t n = 1 << 20;
    float *f = fill_new(KF_FLOAT32, KF_OP_SUM, 5, n);
    int64_t exact32 = 0;
    for (int64_t i = 0; i < n; i++)
        exact32 += (int64_t)(f[i] * 0x1p23f);
    float want32 = (float)((double)exact32 * 0x1p-23);
    kf_value r = verify_reference(KF_FLOAT32, KF_OP_SUM, f, n, NULL);
    ck_assert_msg(r.f32 == want32, "float32 sum %.9g, exact %.9g", r.f32, want32);
    free(f);

    double *d = fill_new(KF_FLOAT64, KF_OP_SUM, 5, n);
    __int128 exact64 = 0;
    for (int64_t i = 0; i < n; i++)
        exact64 += (__int128)(d[i] * 0x1p52);
    double want64 = (double)exact64 * 0x1p-52;
    r = verify_reference(KF_FLOAT64, KF_OP_SUM, d, n, NULL);
    ck_assert_msg(fabs(r.f64 - want64) <= 0.5 * (nextafter(fabs(want64), INFINITY) - fabs(want64)),
                  "float64 sum %.17g, exact %.17g", r.f64, want64);
    free(d);
}
END_TEST

// ----------------------------------------------------------------------------
// Tolerance and comparison

START_TEST(tolerance_grows_with_depth)
{
    kf_value ref = {.f32 = 3.0f};
    double prev = 0;
    for (int64_t d = 1; d <= (1 << 20); d *= 4) {
        double t = verify_tolerance(KF_FLOAT32, KF_OP_SUM, 1 << 20, d, 1000.0, ref);
        ck_assert_msg(t > prev, "depth %lld: %g <= %g", (long long)d, t, prev);
        prev = t;
    }
    /* depth is clamped to [1, n] */
    ck_assert_double_eq(verify_tolerance(KF_FLOAT32, KF_OP_SUM, 100, 0, 10.0, ref),
                        verify_tolerance(KF_FLOAT32, KF_OP_SUM, 100, 1, 10.0, ref));
    ck_assert_double_eq(verify_tolerance(KF_FLOAT32, KF_OP_SUM, 100, 100000, 10.0, ref),
                        verify_tolerance(KF_FLOAT32, KF_OP_SUM, 100, 100, 10.0, ref));
    /* small depth: gamma_d * abs_sum + half an ulp of ref */
    double g = 10 * 0x1p-24 / (1 - 10 * 0x1p-24);
    double t10 = verify_tolerance(KF_FLOAT32, KF_OP_SUM, 1000, 10, 1000.0, ref);
    ck_assert_double_eq_tol(t10, g * 1000 + 0x1p-23, 1e-9);
    /* float64 is much tighter */
    kf_value r64 = {.f64 = 3.0};
    ck_assert(verify_tolerance(KF_FLOAT64, KF_OP_SUM, 1000, 10, 1000.0, r64) < t10 * 1e-8);
    /* even depth n = 2^30 in float32 stays finite and below abs_sum */
    double big = verify_tolerance(KF_FLOAT32, KF_OP_SUM, INT64_C(1) << 30, INT64_C(1) << 30, 1e9, ref);
    ck_assert(isfinite(big) && big < 1e9);
}
END_TEST

START_TEST(tolerance_exact_cases)
{
    kf_value v = {.bits = 12345};
    for (int op = 0; op < KF_OP_COUNT; op++) {
        ck_assert_double_eq(verify_tolerance(KF_INT32, op, 1000, 10, 1e6, v), 0);
        ck_assert_double_eq(verify_tolerance(KF_UINT32, op, 1000, 10, 1e6, v), 0);
        ck_assert_double_eq(verify_tolerance(KF_INT64, op, 1000, 10, 1e6, v), 0);
    }
    kf_value f = {.f32 = 1.0f};
    ck_assert_double_eq(verify_tolerance(KF_FLOAT32, KF_OP_MIN, 1000, 10, 1e6, f), 0);
    ck_assert_double_eq(verify_tolerance(KF_FLOAT32, KF_OP_MAX, 1000, 10, 1e6, f), 0);
    /* prod: |ref| gamma_(n-1); one element is exact up to the ref's rounding */
    kf_value p = {.f32 = 2.0f};
    double t1 = verify_tolerance(KF_FLOAT32, KF_OP_PROD, 1, 1, 2.0, p);
    ck_assert(t1 <= 0x1p-22 * 1.0001);
    double t100 = verify_tolerance(KF_FLOAT32, KF_OP_PROD, 100, 7, 200.0, p);
    ck_assert_double_eq_tol(t100, 2.0 * 99 * 0x1p-24 / (1 - 99 * 0x1p-24) + 0x1p-23, 1e-9);
}
END_TEST

START_TEST(compare_float_tolerance_edge)
{
    kf_result r;
    memset(&r, 0, sizeof r);
    kf_value ref = {.f32 = 1.0f}, gpu = {.f32 = 1.0f + 8 * 0x1p-23f};
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, 8 * 0x1p-23, &r));
    ck_assert_double_eq(r.abs_err, 8 * 0x1p-23);
    ck_assert_double_eq(r.tolerance, 8 * 0x1p-23);
    ck_assert_str_eq(r.ref_value, "1");
    ck_assert_str_eq(r.gpu_value, "1.00000095");
    ck_assert(!verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, 7.99 * 0x1p-23, &r));
    /* below: symmetric */
    gpu.f32 = 1.0f - 8 * 0x1p-24f;
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, 4 * 0x1p-23, &r));
    ck_assert(!verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, 3.9 * 0x1p-23, &r));

    kf_value d_ref = {.f64 = -2.5}, d_gpu = {.f64 = -2.5 + 1e-12};
    ck_assert(verify_compare(KF_FLOAT64, KF_OP_PROD, d_gpu, d_ref, 1.01e-12, NULL));
    ck_assert(!verify_compare(KF_FLOAT64, KF_OP_PROD, d_gpu, d_ref, 0.99e-12, NULL));
}
END_TEST

START_TEST(compare_rejects_nan_and_inf)
{
    kf_result r;
    memset(&r, 0, sizeof r);
    kf_value ref = {.f32 = 1.0f}, gpu = {.f32 = NAN};
    ck_assert(!verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, INFINITY, &r));
    ck_assert(isnan(r.abs_err));
    gpu.f32 = INFINITY;
    ck_assert(!verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, INFINITY, &r));
    ck_assert(!verify_compare(KF_FLOAT32, KF_OP_MAX, gpu, ref, 0, &r));
    kf_value dn = {.f64 = NAN}, d1 = {.f64 = 1.0};
    ck_assert(!verify_compare(KF_FLOAT64, KF_OP_MIN, dn, d1, 0, &r));
    ck_assert(!verify_compare(KF_FLOAT64, KF_OP_SUM, d1, dn, INFINITY, &r));
    ck_assert(!verify_compare(KF_FLOAT64, KF_OP_SUM, dn, dn, INFINITY, &r));
}
END_TEST

START_TEST(compare_exact)
{
    kf_result r;
    memset(&r, 0, sizeof r);
    kf_value a, b;
    a.bits = b.bits = 0;
    a.i32 = INT32_MIN;
    b.i32 = INT32_MIN;
    ck_assert(verify_compare(KF_INT32, KF_OP_SUM, a, b, 0, &r));
    ck_assert_str_eq(r.gpu_value, "-2147483648");
    ck_assert_double_eq(r.abs_err, 0);
    ck_assert_double_eq(r.tolerance, 0);
    b.i32 = INT32_MIN + 1;
    ck_assert(!verify_compare(KF_INT32, KF_OP_SUM, a, b, 1e9, &r));   /* tol ignored */
    ck_assert_double_eq(r.abs_err, 1);
    /* garbage in the unused upper half of a 32-bit value does not matter */
    a.bits = UINT64_C(0xdeadbeef00000000) | 7;
    b.bits = 7;
    ck_assert(verify_compare(KF_UINT32, KF_OP_XOR, a, b, 0, &r));
    ck_assert_str_eq(r.gpu_value, "7");
    a.i64 = INT64_MAX;
    b.i64 = INT64_MAX - 1;
    ck_assert(!verify_compare(KF_INT64, KF_OP_MAX, a, b, 0, &r));
    ck_assert_str_eq(r.gpu_value, "9223372036854775807");
    /* float min/max: exact values, -0.0 == 0.0 */
    kf_value z = {.f32 = -0.0f}, pz = {.f32 = 0.0f};
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_MIN, z, pz, 0, &r));
    kf_value m1 = {.f64 = 0.5}, m2 = {.f64 = nextafter(0.5, 1)};
    ck_assert(!verify_compare(KF_FLOAT64, KF_OP_MAX, m1, m2, 1.0, &r));
    ck_assert_double_eq(r.tolerance, 0);
}
END_TEST


/* Inputs of several 2^20-element pieces are filled and reduced on several
 * threads: the data must equal the one-piece data element by element, and
 * the reference must equal a plain serial loop (exact for integers and
 * bitwise ops, within 1 ulp of the compensated sum for floats). */
START_TEST(large_inputs_in_pieces)
{
    const int64_t n = 3 * ((int64_t)1 << 20) + 12345;
    const int64_t m = ((int64_t)1 << 20) - 7;      /* one piece */
    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        for (int op = 0; op < KF_OP_COUNT; op++) {
            size_t es = kf_dtype_size(t);
            unsigned char *big = fill_new(t, op, 7, n);
            unsigned char *small = fill_new(t, op, 7, m);
            ck_assert_int_eq(memcmp(big, small, (size_t)m * es), 0);
            free(small);
            /* the piece boundaries: element i as a one-element tail */
            for (int64_t i = ((int64_t)1 << 20) - 2; i < ((int64_t)1 << 20) + 2; i++) {
                unsigned char *pre = fill_new(t, op, 7, i + 1);
                ck_assert_int_eq(memcmp(pre + (size_t)i * es, big + (size_t)i * es, es), 0);
                free(pre);
            }
            /* the reference against a serial loop over the same data */
            double as = -1, as_serial = 0;
            kf_dtype acc = kf_op_is_bitwise(op) ? (kf_dtype)t : kf_acc_dtype(t, KF_ACCT_AUTO);
            kf_value got = verify_reference_acc(t, acc, op, big, n, &as);
            kf_value want = verify_identity(acc, op);
            long double s = 0;
            for (int64_t i = 0; i < n; i++) {
                kf_value x = {.bits = 0};
                memcpy(&x, big + (size_t)i * es, es);
                if (kf_op_is_bitwise(op)) {
                    want.bits = op == KF_OP_AND ? want.bits & x.bits : op == KF_OP_OR ? want.bits | x.bits
                                                                                       : want.bits ^ x.bits;
                    if (!kf_dtype_is_float(t))
                        as_serial += t == KF_INT32 ? fabs((double)x.i32) : t == KF_UINT32 ? (double)x.u32
                                                                         : fabs((double)x.i64);
                    continue;
                }
                if (kf_dtype_is_half(t)) { /* widened to the float32 accumulator */
                    x.bits = 0;
                    x.f32 = kf_half_to_float(t, verify_load(t, big, i).h16);
                }
                switch (t) {
                case KF_INT32:
                    as_serial += fabs((double)x.i32);
                    if (op == KF_OP_SUM) want.u32 += x.u32;
                    else if (op == KF_OP_PROD) want.u32 *= x.u32;
                    else if (op == KF_OP_MIN) want.i32 = x.i32 < want.i32 ? x.i32 : want.i32;
                    else want.i32 = x.i32 > want.i32 ? x.i32 : want.i32;
                    break;
                case KF_UINT32:
                    as_serial += (double)x.u32;
                    if (op == KF_OP_SUM) want.u32 += x.u32;
                    else if (op == KF_OP_PROD) want.u32 *= x.u32;
                    else if (op == KF_OP_MIN) want.u32 = x.u32 < want.u32 ? x.u32 : want.u32;
                    else want.u32 = x.u32 > want.u32 ? x.u32 : want.u32;
                    break;
                case KF_INT64:
                    as_serial += fabs((double)x.i64);
                    if (op == KF_OP_SUM) want.bits += x.bits;
                    else if (op == KF_OP_PROD) want.bits *= x.bits;
                    else if (op == KF_OP_MIN) want.i64 = x.i64 < want.i64 ? x.i64 : want.i64;
                    else want.i64 = x.i64 > want.i64 ? x.i64 : want.i64;
                    break;
                default: {
                    double d = acc == KF_FLOAT32 ? x.f32 : x.f64;
                    as_serial += fabs(d);
                    if (op == KF_OP_SUM) s += d;
                    else if (op == KF_OP_PROD) s = (i ? s : 1) * d;
                    else if (op == KF_OP_MIN) { if (acc == KF_FLOAT32) want.f32 = fminf(want.f32, x.f32); else want.f64 = fmin(want.f64, x.f64); }
                    else { if (acc == KF_FLOAT32) want.f32 = fmaxf(want.f32, x.f32); else want.f64 = fmax(want.f64, x.f64); }
                    break;
                }
                }
            }
            ck_assert_double_eq_tol(as, as_serial, 1e-9 * (as_serial + 1));
            bool fl = kf_dtype_is_float(t) && !kf_op_is_bitwise(op);
            if (fl && (op == KF_OP_SUM || op == KF_OP_PROD)) {
                double g = acc == KF_FLOAT32 ? got.f32 : got.f64;
                double tol = acc == KF_FLOAT32 ? 1.2e-7 * fabs(g) + 1e-6 : 1e-13 * fabs(g) + 1e-9;
                ck_assert_msg(fabs(g - (double)s) <= tol, "%s %s: %.17g vs %.17g", kf_dtype_names[t],
                              kf_op_names[op], g, (double)s);
            } else {
                ck_assert_msg(got.bits == want.bits, "%s %s: %llx vs %llx", kf_dtype_names[t], kf_op_names[op],
                              (unsigned long long)got.bits, (unsigned long long)want.bits);
            }
            free(big);
        }
    }
}
END_TEST

/* A reference of several pieces keeps each piece's part (what a planted
 * fault's model, which changes one element, takes again): an input that
 * differs from one reduced before in one element, in any piece, and one
 * of other data of the same type, operator and length, each get the
 * reference of their own elements (a serial loop: exact here). */
START_TEST(reference_of_a_changed_input)
{
    const int64_t n = 3 * ((int64_t)1 << 20) + 5;
    const int64_t at[] = {0, ((int64_t)1 << 20) - 1, (int64_t)1 << 20, 2 * ((int64_t)1 << 20) + 17, n - 1};
    uint32_t *u = malloc(sizeof *u * (size_t)n);
    uint64_t *w = malloc(sizeof *w * (size_t)n);
    float *f = malloc(sizeof *f * (size_t)n);
    ck_assert(u && w && f);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        verify_fill_exact(KF_UINT32, KF_OP_SUM, seed, u, n);
        verify_fill(KF_INT64, KF_OP_XOR, seed, w, n);
        verify_fill_exact(KF_FLOAT32, KF_OP_SUM, seed, f, n); /* small integers: every sum exact */
        for (int k = -1; k < (int)(sizeof at / sizeof at[0]); k++) {
            int64_t e = k < 0 ? 0 : at[k];
            uint32_t u0 = u[e];
            uint64_t w0 = w[e];
            float f0 = f[e];
            if (k >= 0) { /* k = -1: the input itself */
                u[e] += 12345u;
                w[e] ^= UINT64_C(1) << 40;
                f[e] += 2.0f;
            }
            uint32_t us = 0;
            uint64_t wx = 0;
            double fs = 0, fa = 0, as;
            for (int64_t i = 0; i < n; i++) {
                us += u[i];
                wx ^= w[i];
                fs += f[i];
                fa += fabs((double)f[i]);
            }
            ck_assert_uint_eq(verify_reference(KF_UINT32, KF_OP_SUM, u, n, NULL).u32, us);
            ck_assert_uint_eq(verify_reference(KF_INT64, KF_OP_XOR, w, n, NULL).bits, wx);
            ck_assert_double_eq(verify_reference(KF_FLOAT32, KF_OP_SUM, f, n, &as).f32, (float)fs);
            ck_assert_double_eq(as, fa);
            u[e] = u0;
            w[e] = w0;
            f[e] = f0;
        }
    }
    free(u);
    free(w);
    free(f);
}
END_TEST

static void count_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    unsigned char *seen = ctx;
    ck_assert_int_eq(lo, piece * 1000);
    for (int64_t i = lo; i < hi; i++)
        __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
}

/* kf_parallel_for: every index once, pieces of exactly `grain`. */
START_TEST(parallel_for_covers_each_index_once)
{
    const int64_t n = 123457;
    unsigned char *seen = calloc((size_t)n, 1);
    ck_assert_ptr_nonnull(seen);
    ck_assert_int_eq(kf_parallel_for(n, 1000, count_piece, seen), 124);
    for (int64_t i = 0; i < n; i++)
        ck_assert_int_eq(seen[i], 1);
    ck_assert_int_eq(kf_parallel_for(0, 1000, count_piece, seen), 0);
    free(seen);
}
END_TEST

START_TEST(identity_values)
{
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_SUM).i32, 0);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_PROD).i32, 1);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_MIN).i32, INT32_MAX);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_MAX).i32, INT32_MIN);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_AND).i32, -1);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_OR).i32, 0);
    ck_assert_int_eq(verify_identity(KF_INT32, KF_OP_XOR).i32, 0);
    ck_assert_uint_eq(verify_identity(KF_UINT32, KF_OP_MIN).u32, UINT32_MAX);
    ck_assert_uint_eq(verify_identity(KF_UINT32, KF_OP_MAX).u32, 0);
    ck_assert_uint_eq(verify_identity(KF_UINT32, KF_OP_AND).u32, UINT32_MAX);
    ck_assert(verify_identity(KF_INT64, KF_OP_MIN).i64 == INT64_MAX);
    ck_assert(verify_identity(KF_INT64, KF_OP_MAX).i64 == INT64_MIN);
    ck_assert(verify_identity(KF_INT64, KF_OP_AND).bits == UINT64_MAX);
    ck_assert(verify_identity(KF_INT64, KF_OP_PROD).i64 == 1);
    ck_assert(verify_identity(KF_FLOAT32, KF_OP_MIN).f32 == INFINITY);
    ck_assert(verify_identity(KF_FLOAT32, KF_OP_MAX).f32 == -INFINITY);
    ck_assert(verify_identity(KF_FLOAT64, KF_OP_MIN).f64 == INFINITY);
    ck_assert(verify_identity(KF_FLOAT64, KF_OP_MAX).f64 == -INFINITY);
    ck_assert(verify_identity(KF_FLOAT64, KF_OP_PROD).f64 == 1.0);
    ck_assert(verify_identity(KF_FLOAT32, KF_OP_SUM).f32 == 0.0f);
}
END_TEST

/* A simulated GPU: pairwise float32 sum and a plain sequential one, both
 * must pass with the depth of their shape; a result off by one element must
 * not. */
static float pairwise(const float *x, int64_t n)
{
    if (n == 1)
        return x[0];
    return pairwise(x, n / 2) + pairwise(x + n / 2, n - n / 2);
}

START_TEST(end_to_end_float_sum)
{
    const int64_t n = 1 << 18;
    float *x = fill_new(KF_FLOAT32, KF_OP_SUM, 11, n);
    double as;
    kf_value ref = verify_reference(KF_FLOAT32, KF_OP_SUM, x, n, &as);
    ck_assert(as > n / 3 && as < n * 2 / 3);

    kf_value gpu = {.f32 = pairwise(x, n)};
    double tol = verify_tolerance(KF_FLOAT32, KF_OP_SUM, n, 18, as, ref);
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, tol, NULL));

    float seq = 0;
    for (int64_t i = 0; i < n; i++)
        seq += x[i];
    gpu.f32 = seq;
    tol = verify_tolerance(KF_FLOAT32, KF_OP_SUM, n, n, as, ref);
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, tol, NULL));

    /* a kernel that drops the last element is caught */
    gpu.f32 = pairwise(x, n - 1);
    tol = verify_tolerance(KF_FLOAT32, KF_OP_SUM, n, 18, as, ref);
    ck_assert_msg(fabs((double)x[n - 1]) <= tol ||
                  !verify_compare(KF_FLOAT32, KF_OP_SUM, gpu, ref, tol, NULL),
                  "dropped element %g passed with tol %g", x[n - 1], tol);
    free(x);

    /* product: sequential float32 over 2^16 elements */
    const int64_t m = 1 << 16;
    float *p = fill_new(KF_FLOAT32, KF_OP_PROD, 11, m);
    ref = verify_reference(KF_FLOAT32, KF_OP_PROD, p, m, &as);
    float pr = 1;
    for (int64_t i = 0; i < m; i++)
        pr *= p[i];
    gpu.f32 = pr;
    tol = verify_tolerance(KF_FLOAT32, KF_OP_PROD, m, m, as, ref);
    ck_assert(verify_compare(KF_FLOAT32, KF_OP_PROD, gpu, ref, tol, NULL));
    free(p);
}
END_TEST

START_TEST(format_values)
{
    char buf[48];
    kf_value v;
    v.bits = 0;
    v.u32 = UINT32_MAX;
    verify_format(KF_UINT32, v, buf, sizeof buf);
    ck_assert_str_eq(buf, "4294967295");
    v.f32 = 0.1f;
    verify_format(KF_FLOAT32, v, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.100000001");
    v.f64 = 0.1;
    verify_format(KF_FLOAT64, v, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.10000000000000001");
    v.i64 = INT64_MIN;
    verify_format(KF_INT64, v, buf, sizeof buf);
    ck_assert_str_eq(buf, "-9223372036854775808");
}
END_TEST

static Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *data = tcase_create("data");
    tcase_set_timeout(data, 60);
    tcase_add_test(data, half_conversions);
    tcase_add_test(data, fill_deterministic_and_prefix_stable);
    tcase_add_test(data, fill_differs_between_ops_and_dtypes);
    tcase_add_test(data, fill_never_all_zeros);
    tcase_add_test(data, fill_distributions);
    tcase_add_test(data, prod_data_never_zero);
    tcase_add_test(data, exact_data_detects_single_element_changes);
    tcase_add_test(data, exact_rounded_data_detects_single_element_changes);
    tcase_add_test(data, exact_data_magnitudes);
    suite_add_tcase(s, data);

    TCase *ref = tcase_create("reference");
    tcase_set_timeout(ref, 60);
    tcase_add_test(ref, reference_int32_wraps);
    tcase_add_test(ref, reference_uint32);
    tcase_add_test(ref, reference_int64);
    tcase_add_test(ref, reference_float_min_max);
    tcase_add_test(ref, reference_bitwise);
    tcase_add_test(ref, reference_compensated_sum);
    tcase_add_test(ref, reference_sum_matches_exact);
    tcase_add_test(ref, identity_values);
    tcase_add_test(ref, large_inputs_in_pieces);
    tcase_add_test(ref, reference_of_a_changed_input);
    tcase_add_test(ref, parallel_for_covers_each_index_once);
    suite_add_tcase(s, ref);

    TCase *cmp = tcase_create("compare");
    tcase_set_timeout(cmp, 60);
    tcase_add_test(cmp, tolerance_grows_with_depth);
    tcase_add_test(cmp, tolerance_exact_cases);
    tcase_add_test(cmp, compare_float_tolerance_edge);
    tcase_add_test(cmp, compare_rejects_nan_and_inf);
    tcase_add_test(cmp, compare_exact);
    tcase_add_test(cmp, end_to_end_float_sum);
    tcase_add_test(cmp, format_values);
    suite_add_tcase(s, cmp);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(verify_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
