/*
 * test_stats.c -- statistics of repeated timings, bandwidth and the
 * stopping rule.
 *
 *   make build/tests/test_stats && build/tests/test_stats
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Relative closeness for values computed in a different order than ours. */
static void assert_close(double got, double want, const char *what)
{
    double tol = 1e-12 * (fabs(want) > 1 ? fabs(want) : 1);
    ck_assert_msg(fabs(got - want) <= tol, "%s: got %.17g, want %.17g", what, got, want);
}

// ----------------------------------------------------------------------------
// stats_compute

START_TEST(compute_odd_count)
{
    /* sorted: 1 2 3 -> median 2; mean 2; deviations -1 0 1 -> sample var 2/2 = 1 */
    const double ms[] = {3, 1, 2};
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    ck_assert_int_eq(s.reps, 3);
    assert_close(s.median_ms, 2, "median");
    assert_close(s.min_ms, 1, "min");
    assert_close(s.max_ms, 3, "max");
    assert_close(s.mean_ms, 2, "mean");
    assert_close(s.stddev_ms, 1, "stddev");
    assert_close(s.noise, 0.5, "noise");
    ck_assert(s.gbps == 0 && s.pct_peak == 0);
}
END_TEST

START_TEST(compute_even_count)
{
    /* sorted: 1 2 3 4 -> median (2+3)/2; mean 2.5; squares 2.25 .25 .25 2.25 = 5; var 5/3 */
    const double ms[] = {4, 1, 3, 2};
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    ck_assert_int_eq(s.reps, 4);
    assert_close(s.median_ms, 2.5, "median");
    assert_close(s.min_ms, 1, "min");
    assert_close(s.max_ms, 4, "max");
    assert_close(s.mean_ms, 2.5, "mean");
    assert_close(s.stddev_ms, sqrt(5.0 / 3.0), "stddev");
    assert_close(s.noise, sqrt(5.0 / 3.0) / 2.5, "noise");
}
END_TEST

START_TEST(compute_textbook_example)
{
    /* The classic 2 4 4 4 5 5 7 9: mean 5, squared deviations sum to 32,
     * sample variance 32/7 (the population one would be 4). */
    const double ms[] = {9, 4, 5, 2, 7, 4, 5, 4};
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    ck_assert_int_eq(s.reps, 8);
    assert_close(s.median_ms, 4.5, "median");
    assert_close(s.min_ms, 2, "min");
    assert_close(s.max_ms, 9, "max");
    assert_close(s.mean_ms, 5, "mean");
    assert_close(s.stddev_ms, sqrt(32.0 / 7.0), "stddev (sample, n-1)");
    assert_close(s.noise, sqrt(32.0 / 7.0) / 5, "noise");
}
END_TEST

START_TEST(compute_median_with_duplicates_and_outlier)
{
    const double a[] = {5, 5, 1, 5};            /* 1 5 5 5 -> (5+5)/2 */
    const double b[] = {1, 1000, 2, 3, 2};      /* 1 2 2 3 1000 -> 2 */
    const double c[] = {7, 7};
    kf_stats s;
    stats_compute(a, N_OF(a), &s);
    assert_close(s.median_ms, 5, "median a");
    stats_compute(b, N_OF(b), &s);
    assert_close(s.median_ms, 2, "median b (robust to the outlier)");
    assert_close(s.mean_ms, 1008.0 / 5, "mean b");
    assert_close(s.max_ms, 1000, "max b");
    stats_compute(c, N_OF(c), &s);
    assert_close(s.median_ms, 7, "median c");
    ck_assert(s.stddev_ms == 0 && s.noise == 0);
}
END_TEST

START_TEST(compute_single_value)
{
    const double ms[] = {0.25};
    kf_stats s;
    stats_compute(ms, 1, &s);
    ck_assert_int_eq(s.reps, 1);
    ck_assert(s.median_ms == 0.25 && s.min_ms == 0.25 && s.max_ms == 0.25 && s.mean_ms == 0.25);
    ck_assert_msg(s.stddev_ms == 0, "sample stddev of one value must be 0, not NaN");
    ck_assert(s.noise == 0);
}
END_TEST

START_TEST(compute_empty_and_null)
{
    kf_stats s;
    memset(&s, 0x5a, sizeof s);
    stats_compute(NULL, 5, &s);
    ck_assert_int_eq(s.reps, 0);
    ck_assert(s.median_ms == 0 && s.mean_ms == 0 && s.min_ms == 0 && s.max_ms == 0);
    ck_assert(s.stddev_ms == 0 && s.noise == 0 && s.gbps == 0 && s.pct_peak == 0);

    const double ms[] = {1, 2};
    memset(&s, 0x5a, sizeof s);
    stats_compute(ms, 0, &s);
    ck_assert_int_eq(s.reps, 0);
    ck_assert(s.median_ms == 0 && s.noise == 0 && s.gbps == 0);
    memset(&s, 0x5a, sizeof s);
    stats_compute(ms, -3, &s);
    ck_assert_int_eq(s.reps, 0);
    ck_assert(s.mean_ms == 0);
}
END_TEST

START_TEST(compute_all_zero_is_not_nan)
{
    const double ms[] = {0, 0, 0, 0, 0};
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    ck_assert_int_eq(s.reps, 5);
    ck_assert(s.median_ms == 0 && s.mean_ms == 0 && s.stddev_ms == 0);
    ck_assert_msg(s.noise == 0, "noise of all-zero times is %g", s.noise);
}
END_TEST

START_TEST(compute_input_not_modified)
{
    double ms[] = {5, 3, 9, 1, 7, 2};
    double copy[N_OF(ms)];
    memcpy(copy, ms, sizeof ms);
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    ck_assert(memcmp(ms, copy, sizeof ms) == 0);
    assert_close(s.median_ms, 4, "median"); /* 1 2 3 5 7 9 -> (3+5)/2 */
}
END_TEST

START_TEST(compute_large_offset_no_cancellation)
{
    /* A naive sum-of-squares formula loses everything here. */
    const double ms[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    kf_stats s;
    stats_compute(ms, N_OF(ms), &s);
    assert_close(s.mean_ms, 1e9 + 2, "mean");
    assert_close(s.median_ms, 1e9 + 2, "median");
    ck_assert_msg(fabs(s.stddev_ms - 1) < 1e-9, "stddev %.17g, want 1", s.stddev_ms);
}
END_TEST

/* Against a straightforward reference on many pseudo-random inputs. */
START_TEST(compute_matches_reference)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int n = 1; n <= 64; n++) {
        double ms[64], sorted[64];
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ms[i] = 0.5 + (double)(x % 100000) / 1000.0;
        }
        /* insertion sort, independent of the code under test */
        memcpy(sorted, ms, (size_t)n * sizeof *ms);
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                double t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += ms[i];
        double mean = sum / n, ss = 0;
        for (int i = 0; i < n; i++)
            ss += (ms[i] - mean) * (ms[i] - mean);
        double sd = n > 1 ? sqrt(ss / (n - 1)) : 0;

        kf_stats s;
        stats_compute(ms, n, &s);
        ck_assert_int_eq(s.reps, n);
        ck_assert_msg(s.median_ms == med, "n=%d median %g want %g", n, s.median_ms, med);
        ck_assert(s.min_ms == sorted[0] && s.max_ms == sorted[n - 1]);
        assert_close(s.mean_ms, mean, "mean");
        assert_close(s.stddev_ms, sd, "stddev");
        assert_close(s.noise, sd / mean, "noise");
        ck_assert(s.min_ms <= s.median_ms && s.median_ms <= s.max_ms);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// stats_bandwidth

START_TEST(bandwidth_formula)
{
    /* 1e6 floats in 2 ms: 4e6 bytes / 2e-3 s = 2e9 B/s = 2 GB/s */
    kf_stats s = {.reps = 3, .median_ms = 2.0, .mean_ms = 7, .noise = 0.25};
    stats_bandwidth(&s, 1000000.0 * 4, 100.0);
    assert_close(s.gbps, 2.0, "gbps");
    assert_close(s.pct_peak, 2.0, "pct_peak");
    /* nothing else touched */
    ck_assert(s.reps == 3 && s.median_ms == 2.0 && s.mean_ms == 7 && s.noise == 0.25);

    /* the documented form GB/s = bytes / median_ms / 1e6 (bytes = n * elem for a reduction)
     * for several shapes */
    const int64_t ns[] = {1, 1000, 1 << 20, 123456789, (int64_t)1 << 32};
    const size_t es[] = {4, 8};
    const double meds[] = {0.001, 0.0375, 1.0, 12.5};
    for (int i = 0; i < N_OF(ns); i++)
        for (int j = 0; j < N_OF(es); j++)
            for (int k = 0; k < N_OF(meds); k++) {
                kf_stats t = {.median_ms = meds[k]};
                stats_bandwidth(&t, (double)ns[i] * (double)es[j], 3350.0);
                double want = (double)ns[i] * (double)es[j] / meds[k] / 1e6;
                assert_close(t.gbps, want, "gbps");
                assert_close(t.pct_peak, want / 3350.0 * 100.0, "pct_peak");
            }
}
END_TEST

START_TEST(bandwidth_no_peak)
{
    kf_stats s = {.median_ms = 1.0, .pct_peak = 55};
    stats_bandwidth(&s, (double)(1 << 20) * 8, 0);
    assert_close(s.gbps, (double)(1 << 20) * 8 / 1.0 / 1e6, "gbps");
    ck_assert_msg(s.pct_peak == 0, "peak 0 must give pct_peak 0, got %g", s.pct_peak);
    s.pct_peak = 55;
    stats_bandwidth(&s, (double)(1 << 20) * 8, -10);
    ck_assert(s.pct_peak == 0);
    ck_assert(s.gbps > 0);
}
END_TEST

START_TEST(bandwidth_degenerate)
{
    /* no median (nothing measured) or no elements: 0 bandwidth, never inf/NaN */
    kf_stats s = {.median_ms = 0, .gbps = 9, .pct_peak = 9};
    stats_bandwidth(&s, 1000.0 * 4, 100);
    ck_assert(s.gbps == 0 && s.pct_peak == 0);
    s = (kf_stats){.median_ms = 1.5, .gbps = 9, .pct_peak = 9};
    stats_bandwidth(&s, 0.0 * 4, 100);
    ck_assert(s.gbps == 0 && s.pct_peak == 0);
    s = (kf_stats){.median_ms = -1, .gbps = 9};
    stats_bandwidth(&s, 1000.0 * 4, 100);
    ck_assert(s.gbps == 0 && isfinite(s.pct_peak));
}
END_TEST

START_TEST(bandwidth_after_compute)
{
    const double ms[] = {0.5, 0.25, 1.0};
    kf_stats s;
    stats_compute(ms, 3, &s);
    ck_assert(s.gbps == 0 && s.pct_peak == 0);
    stats_bandwidth(&s, (double)(1 << 24) * 4, 1000);
    /* median 0.5 ms; 64 MiB / 0.5 ms */
    assert_close(s.gbps, (double)(1 << 24) * 4 / 0.5 / 1e6, "gbps");
    assert_close(s.pct_peak, (double)(1 << 24) * 4 / 0.5 / 1e6 / 1000 * 100, "pct");
}
END_TEST

START_TEST(bandwidth_bytes_any_double)
{
    /* bytes is a double (a family's bytes(): rows x cols x elem, padding, ...):
     * not limited to whole numbers or to int64 */
    kf_stats s = {.median_ms = 2.0};
    stats_bandwidth(&s, 1000.5, 10);
    assert_close(s.gbps, 1000.5 / 2.0 / 1e6, "fractional bytes");
    assert_close(s.pct_peak, 1000.5 / 2.0 / 1e6 / 10 * 100, "fractional bytes pct");
    s = (kf_stats){.median_ms = 1.0};
    stats_bandwidth(&s, 1e20, 0);
    assert_close(s.gbps, 1e20 / 1.0 / 1e6, "bytes past int64");
    ck_assert(s.pct_peak == 0);
    /* negative or NaN bytes: 0, never negative or NaN bandwidth */
    s = (kf_stats){.median_ms = 1.0, .gbps = 9, .pct_peak = 9};
    stats_bandwidth(&s, -4096, 100);
    ck_assert(s.gbps == 0 && s.pct_peak == 0);
    s = (kf_stats){.median_ms = 1.0, .gbps = 9, .pct_peak = 9};
    stats_bandwidth(&s, NAN, 100);
    ck_assert_msg(s.gbps == 0 && s.pct_peak == 0, "NaN bytes gave %g GB/s, %g%%", s.gbps, s.pct_peak);
}
END_TEST

// ----------------------------------------------------------------------------
// stats_flops and the FP32 peak

START_TEST(flops_formula)
{
    /* 2e6 flops in 0.004 ms: 500 GFLOP/s; of an H100 SXM's FP32 peak
     * (132 SMs x 1980 MHz x 128 lanes x 2 = 66908.16 GFLOP/s) 0.747% */
    kf_stats s = {.median_ms = 0.004};
    double peak = kf_peak_fp32_gflops(9, 0, 132, 1980000);
    assert_close(peak, 66908.16, "H100 FP32 peak");
    stats_flops(&s, 2e6, peak);
    assert_close(s.gflops, 500.0, "gflops");
    assert_close(s.pct_peak_flops, 500.0 / 66908.16 * 100, "pct of FP32 peak");
    /* an A100 (sm_80: 64 lanes): 108 x 1410 MHz x 64 x 2 */
    assert_close(kf_peak_fp32_gflops(8, 0, 108, 1410000), 19491.84, "A100 FP32 peak");
    ck_assert_int_eq(kf_fp32_lanes(8, 6), 128);
    ck_assert_int_eq(kf_fp32_lanes(7, 0), 64);
    /* an architecture kforge does not know: no peak, no percentage */
    ck_assert(kf_peak_fp32_gflops(13, 0, 200, 2000000) == 0);
    ck_assert(kf_peak_fp32_gflops(5, 2, 24, 1000000) == 0);
    s = (kf_stats){.median_ms = 0.004};
    stats_flops(&s, 2e6, 0);
    assert_close(s.gflops, 500.0, "gflops without a peak");
    ck_assert(s.pct_peak_flops == 0);
    /* no flops, negative, NaN or no time: 0, never negative or NaN */
    double bad[] = {0, -5, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        s = (kf_stats){.median_ms = 1.0, .gflops = 9, .pct_peak_flops = 9};
        stats_flops(&s, bad[i], 100);
        ck_assert_msg(s.gflops == 0 && s.pct_peak_flops == 0, "flops %g gave %g GFLOP/s", bad[i], s.gflops);
    }
    s = (kf_stats){.median_ms = 0};
    stats_flops(&s, 1e6, 100);
    ck_assert(s.gflops == 0 && s.pct_peak_flops == 0);
}
END_TEST

// ----------------------------------------------------------------------------
// stats_should_stop

static kf_bench bench(int min_reps, int max_reps, double max_time_s, double max_noise)
{
    kf_bench b;
    kf_bench_defaults(&b);
    b.min_reps = min_reps;
    b.max_reps = max_reps;
    b.max_time_s = max_time_s;
    b.max_noise = max_noise;
    return b;
}

START_TEST(stop_never_without_reps)
{
    kf_bench b = bench(0, 0, 0, 1);
    ck_assert(!stats_should_stop(NULL, 0, 100.0, &b));
    double ms[1] = {1};
    ck_assert(!stats_should_stop(ms, 0, 1e9, &b));
}
END_TEST

START_TEST(stop_min_reps)
{
    double flat[20];
    for (int i = 0; i < 20; i++)
        flat[i] = 1.0;                  /* noise 0 */
    kf_bench b = bench(10, 1000, 0.5, 0.01);
    for (int r = 1; r < 10; r++) {
        ck_assert_msg(!stats_should_stop(flat, r, 0.0, &b), "stopped at %d < min_reps", r);
        /* the time budget does not override min_reps either */
        ck_assert_msg(!stats_should_stop(flat, r, 1e6, &b), "time budget beat min_reps at %d", r);
    }
    ck_assert(stats_should_stop(flat, 10, 0.0, &b));
    ck_assert(stats_should_stop(flat, 11, 0.0, &b));
}
END_TEST

START_TEST(stop_max_reps)
{
    /* very noisy, no time spent: only max_reps stops it */
    double ms[64];
    for (int i = 0; i < 64; i++)
        ms[i] = i % 2 ? 1.0 : 10.0;
    kf_bench b = bench(4, 32, 1e9, 0.001);
    for (int r = 1; r < 32; r++)
        ck_assert_msg(!stats_should_stop(ms, r, 0.0, &b), "stopped early at %d", r);
    ck_assert(stats_should_stop(ms, 32, 0.0, &b));
    ck_assert(stats_should_stop(ms, 40, 0.0, &b));

    /* max_reps wins even over a larger min_reps */
    kf_bench c = bench(50, 5, 1e9, 0.001);
    ck_assert(!stats_should_stop(ms, 4, 0.0, &c));
    ck_assert(stats_should_stop(ms, 5, 0.0, &c));
}
END_TEST

START_TEST(stop_noise_threshold)
{
    const double ms[] = {1.0, 1.1, 0.9, 1.05, 0.95, 1.0};
    const int n = N_OF(ms);
    kf_stats s;
    stats_compute(ms, n, &s);
    ck_assert(s.noise > 0);

    /* noise <= max_noise stops, exactly at the threshold too */
    kf_bench b = bench(2, 1000, 1e9, s.noise);
    ck_assert_msg(stats_should_stop(ms, n, 0.0, &b), "noise == max_noise must stop");
    b.max_noise = s.noise * 2;
    ck_assert(stats_should_stop(ms, n, 0.0, &b));
    b.max_noise = nextafter(s.noise, 0);
    ck_assert_msg(!stats_should_stop(ms, n, 0.0, &b), "noise just above max_noise must not stop");
    b.max_noise = s.noise / 2;
    ck_assert(!stats_should_stop(ms, n, 0.0, &b));

    /* zero spread stops even with max_noise 0 */
    const double flat[] = {2, 2, 2};
    kf_bench z = bench(3, 1000, 1e9, 0);
    ck_assert(stats_should_stop(flat, 3, 0.0, &z));
    const double spread[] = {2, 2, 2.000001};
    ck_assert(!stats_should_stop(spread, 3, 0.0, &z));
}
END_TEST

START_TEST(stop_uses_only_first_reps)
{
    /* the noise is that of ms[0..reps): a wild value beyond it is ignored */
    double ms[] = {1, 1, 1, 1, 500};
    kf_bench b = bench(2, 1000, 1e9, 0.001);
    ck_assert(stats_should_stop(ms, 4, 0.0, &b));
    ck_assert(!stats_should_stop(ms, 5, 0.0, &b));
}
END_TEST

START_TEST(stop_time_budget)
{
    double ms[32];
    for (int i = 0; i < 32; i++)
        ms[i] = i % 2 ? 1.0 : 3.0;      /* noise 0.5 */
    kf_bench b = bench(5, 1000, 0.5, 0.01);
    ck_assert(!stats_should_stop(ms, 8, 0.0, &b));
    ck_assert(!stats_should_stop(ms, 8, 0.4999, &b));
    ck_assert_msg(stats_should_stop(ms, 8, 0.5, &b), "elapsed == max_time_s must stop");
    ck_assert(stats_should_stop(ms, 8, 2.0, &b));
    /* ... but only after min_reps */
    ck_assert(!stats_should_stop(ms, 4, 2.0, &b));
    ck_assert(stats_should_stop(ms, 5, 2.0, &b));

    /* a zero budget stops as soon as min_reps is reached */
    kf_bench z = bench(3, 1000, 0, 0.0001);
    ck_assert(!stats_should_stop(ms, 2, 0.0, &z));
    ck_assert(stats_should_stop(ms, 3, 0.0, &z));
}
END_TEST

/* The median's confidence interval against the order statistics worked out
 * by hand, and against a brute-force sort for many shuffled samples. */
START_TEST(median_ci_order_statistics)
{
    ck_assert(isinf(stats_median_ci(NULL, 5)));
    const double one[] = {1};
    ck_assert(isinf(stats_median_ci(one, 1)));
    /* n = 100: 1-based ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61,
     * the textbook interval: values 40 and 61 of 1..100, median 50.5 */
    double a[100];
    for (int i = 0; i < 100; i++)
        a[i] = (double)((i * 37) % 100 + 1); /* 1..100, shuffled */
    ck_assert_double_eq_tol(stats_median_ci(a, 100), 21.0 / 101.0, 1e-12);
    /* the input is not modified */
    for (int i = 0; i < 100; i++)
        ck_assert(a[i] == (double)((i * 37) % 100 + 1));
    /* n = 10: P(B <= 1) = 1.1%, P(B <= 2) = 5.5%: the 2nd and 9th */
    const double ten[] = {10, 3, 7, 1, 9, 5, 2, 8, 4, 6};
    ck_assert_double_eq_tol(stats_median_ci(ten, 10), (9.0 - 2.0) / (2 * 5.5), 1e-12);
    /* n = 6: 2 x 2^-6 = 3.1%, so the whole sample; n = 5: 2 x 2^-5 = 6.3%: none */
    ck_assert_double_eq_tol(stats_median_ci(ten, 6), (10.0 - 1.0) / (2 * 6.0), 1e-12);
    ck_assert(isinf(stats_median_ci(ten, 5)));
    double lo, med, hi;
    ck_assert(stats_median_interval(ten, 5, &lo, &med, &hi));
    ck_assert(isinf(lo) && lo < 0 && isinf(hi) && med == 7);
    /* odd n = 25: P(B <= 7) = 2.2%, P(B <= 8) = 5.4%: the 8th and 18th; median the 13th */
    double odd[25];
    for (int i = 0; i < 25; i++)
        odd[i] = (double)((i * 7) % 25 + 1);
    ck_assert_double_eq_tol(stats_median_ci(odd, 25), (18.0 - 8.0) / (2 * 13.0), 1e-12);
    /* one value everywhere: no width */
    const double flat[] = {4, 4, 4, 4, 4, 4};
    ck_assert(stats_median_ci(flat, 6) == 0);
}
END_TEST

/* What the rule is for: a short kernel read by a coarse timer (values on a
 * grid, a few slow outliers) never reaches a small relative stddev, but its
 * median is pinned down after a few dozen repetitions. */
START_TEST(stop_median_ci)
{
    double ms[400];
    for (int i = 0; i < 400; i++) /* 4.0 us or 4.5 us (one in four), one in ten at 9 us */
        ms[i] = i % 10 == 3 ? 9e-3 : (i % 4 ? 4.0e-3 : 4.5e-3);
    kf_stats s;
    stats_compute(ms, 400, &s);
    ck_assert(s.noise > 0.2);
    kf_bench b = bench(10, 1000, 1e9, 0.02);
    ck_assert_msg(!stats_should_stop(ms, 400, 0.0, &b), "the stddev rule alone never stops here");
    b.max_median_ci = 0.02;
    int r = 1;
    while (!stats_should_stop(ms, r, 0.0, &b))
        r++;
    ck_assert_int_ge(r, b.min_reps);
    ck_assert_msg(r <= 80, "stopped only after %d repetitions", r);
    ck_assert(stats_median_ci(ms, r) <= 0.02);
    ck_assert(stats_median_ci(ms, r - 1) > 0.02 || r == b.min_reps);
    /* a spread that leaves the median uncertain does not stop */
    double wide[64];
    for (int i = 0; i < 64; i++)
        wide[i] = 1.0 + (double)((i * 29) % 64) / 16.0; /* uniform over 1..5 */
    ck_assert(!stats_should_stop(wide, 64, 0.0, &b));
    /* 0 turns the rule off */
    b.max_median_ci = 0;
    ck_assert(!stats_should_stop(ms, 100, 0.0, &b));
}
END_TEST

START_TEST(stop_defaults_are_sane)
{
    kf_bench b;
    kf_bench_defaults(&b);
    ck_assert_int_ge(b.min_reps, 1);
    ck_assert_int_ge(b.max_reps, b.min_reps);
    double flat[2048];
    for (int i = 0; i < 2048; i++)
        flat[i] = 0.1;
    /* a perfectly quiet kernel stops exactly at min_reps */
    int r = 1;
    while (!stats_should_stop(flat, r, 0.0, &b))
        r++;
    ck_assert_int_eq(r, b.min_reps);
    /* a hopelessly noisy one stops exactly at max_reps when time is free */
    double noisy[2048];
    for (int i = 0; i < 2048; i++)
        noisy[i] = i % 3 ? 0.1 : 0.5;
    ck_assert_int_le(b.max_reps, 2048);
    r = 1;
    while (!stats_should_stop(noisy, r, 0.0, &b))
        r++;
    ck_assert_int_eq(r, b.max_reps);
}
END_TEST

// ----------------------------------------------------------------------------
// Welch's t-test and the significance rule.  Reference values from SciPy 1.10
// (scipy.special.betainc, scipy.stats.t.cdf, scipy.stats.ttest_ind_from_stats
// with equal_var=False) and closed forms.

static void assert_rel(double got, double want, double rel, const char *what)
{
    double tol = rel * fabs(want);
    ck_assert_msg(fabs(got - want) <= tol, "%s: got %.17g, want %.17g", what, got, want);
}

static kf_stats summary(int reps, double median, double mean, double sd)
{
    kf_stats s;
    memset(&s, 0, sizeof s);
    s.reps = reps;
    s.median_ms = median;
    s.mean_ms = mean;
    s.stddev_ms = sd;
    s.min_ms = mean - 2 * sd;
    s.max_ms = mean + 2 * sd;
    s.noise = mean > 0 ? sd / mean : 0;
    return s;
}

START_TEST(incbeta_reference_values)
{
    static const struct {
        double a, b, x, want;
    } v[] = {
        {0.5, 0.5, 0.3, 0.3690101195655454},
        {2, 3, 0.4, 0.5248},
        {5, 0.5, 0.9, 0.316642915020012},
        {100, 0.5, 0.99, 0.15677586542443941},
        {1000, 0.5, 0.999, 0.15724727426683946},
        {10, 10, 0.5, 0.5},
        {2.5, 0.5, 1e-6, 3.395306665236898e-16},
        {1500.5, 0.5, 0.996, 0.0005246160046133629},
    };
    for (int i = 0; i < N_OF(v); i++) {
        char what[64];
        snprintf(what, sizeof what, "I_%g(%g, %g)", v[i].x, v[i].a, v[i].b);
        assert_rel(stats_incbeta(v[i].a, v[i].b, v[i].x), v[i].want, 1e-11, what);
    }
}
END_TEST

START_TEST(incbeta_closed_forms_and_edges)
{
    for (double x = 0.05; x < 1; x += 0.1) {
        assert_rel(stats_incbeta(1, 1, x), x, 1e-13, "I_x(1,1) = x");
        assert_rel(stats_incbeta(3, 1, x), x * x * x, 1e-13, "I_x(a,1) = x^a");
        assert_rel(stats_incbeta(1, 4, x), 1 - pow(1 - x, 4), 1e-13, "I_x(1,b) = 1-(1-x)^b");
        /* I_x(a, b) = 1 - I_(1-x)(b, a) */
        ck_assert(fabs(stats_incbeta(7.5, 2.25, x) + stats_incbeta(2.25, 7.5, 1 - x) - 1) < 1e-14);
        /* I_x(1/2, 1/2) = (2/pi) asin(sqrt(x)) */
        assert_rel(stats_incbeta(0.5, 0.5, x), 2 / M_PI * asin(sqrt(x)), 1e-13, "arcsine");
    }
    ck_assert(stats_incbeta(2, 3, 0) == 0);
    ck_assert(stats_incbeta(2, 3, 1) == 1);
    ck_assert(isnan(stats_incbeta(0, 3, 0.5)));
    ck_assert(isnan(stats_incbeta(2, -1, 0.5)));
    ck_assert(isnan(stats_incbeta(2, 3, -0.1)));
    ck_assert(isnan(stats_incbeta(2, 3, 1.1)));
    ck_assert(isnan(stats_incbeta(2, 3, NAN)));
    ck_assert(isnan(stats_incbeta(INFINITY, 3, 0.5)));
}
END_TEST

START_TEST(t_cdf_values)
{
    /* df = 1 is the Cauchy distribution, df = 2 has a closed form too */
    for (double t = -20; t <= 20; t += 0.75) {
        assert_rel(stats_t_cdf(t, 1), 0.5 + atan(t) / M_PI, 1e-12, "Cauchy");
        assert_rel(stats_t_cdf(t, 2), 0.5 + t / (2 * sqrt(2 + t * t)), 1e-12, "df 2");
    }
    assert_close(stats_t_cdf(0, 5), 0.5, "t = 0");
    assert_rel(stats_t_cdf(2.0, 3), 0.9303370157205785, 1e-12, "t(3) at 2");
    assert_rel(stats_t_cdf(-2.5, 7.5), 0.019410129136812757, 1e-11, "t(7.5) at -2.5");
    assert_rel(stats_t_cdf(3.3, 1000), 0.9994995016374989, 1e-12, "t(1000) at 3.3");
    assert_rel(stats_t_cdf(1.96, 1e6), 0.9750019662073651, 1e-12, "t(1e6) at 1.96");
    assert_rel(stats_t_cdf(-5, 2e5), 2.8689324583921453e-07, 1e-10, "t(2e5) at -5");
    assert_rel(stats_t_cdf(0.5, 5e4), 0.6914613610732707, 1e-12, "t(5e4) at 0.5");
    /* a far tail, computed without cancellation */
    assert_rel(stats_t_cdf(-40, 30), 6.863022597203181e-28, 1e-10, "t(30) at -40");
    /* symmetry */
    assert_rel(stats_t_cdf(1.7, 4.2) + stats_t_cdf(-1.7, 4.2), 1, 1e-14, "symmetry");
    /* infinite df: the normal distribution */
    assert_rel(stats_t_cdf(1.96, INFINITY), 0.9750021048517795, 1e-14, "normal");
    ck_assert(stats_t_cdf(INFINITY, 3) == 1 && stats_t_cdf(-INFINITY, 3) == 0);
    ck_assert(isnan(stats_t_cdf(1, 0)) && isnan(stats_t_cdf(1, -2)) && isnan(stats_t_cdf(NAN, 3)));
}
END_TEST

START_TEST(welch_reference_values)
{
    /* mean_a, sd_a, n_a, mean_b, sd_b, n_b -> t, df, two-sided p */
    static const struct {
        double ma, sa;
        int na;
        double mb, sb;
        int nb;
        double t, df, p;
    } v[] = {
        {1.0, 0.1, 10, 1.1, 0.1, 10, -2.236067977499791, 18.0, 0.03824961451611377},
        {0.0561, 0.0009, 50, 0.0570, 0.0012, 40, -3.9391929857916987, 70.61606397469134, 0.00018977123435783005},
        {20.0, 2.0, 3, 25.0, 8.0, 5, -1.3299879414973288, 4.773152081563297, 0.24352661247910667},
        {1.0, 0.02, 1000, 1.001, 0.02, 1000, -1.1180339887497717, 1998.0, 0.2636868869107871},
        {5, 1, 2, 6, 1, 2, -1.0, 2.0, 0.42264973081037427},
        {10.0, 0.0, 10, 10.5, 1.0, 10, -1.5811388300841895, 9.0, 0.14830470736655946},
        {0.0123, 0.0001, 200, 0.0119, 0.0004, 15, 3.8639378297404687, 14.131535772447354, 0.0016923461486939534},
    };
    for (int i = 0; i < N_OF(v); i++) {
        kf_stats a = summary(v[i].na, v[i].ma, v[i].ma, v[i].sa);
        kf_stats b = summary(v[i].nb, v[i].mb, v[i].mb, v[i].sb);
        double t, df;
        double p = stats_welch(&a, &b, &t, &df);
        char what[64];
        snprintf(what, sizeof what, "case %d t", i);
        assert_rel(t, v[i].t, 1e-12, what);
        snprintf(what, sizeof what, "case %d df", i);
        assert_rel(df, v[i].df, 1e-12, what);
        snprintf(what, sizeof what, "case %d p", i);
        assert_rel(p, v[i].p, 1e-10, what);
        /* the test is symmetric */
        double p2 = stats_welch(&b, &a, &t, &df);
        assert_rel(t, -v[i].t, 1e-12, "swapped t");
        assert_rel(p2, p, 1e-14, "swapped p");
    }
}
END_TEST

START_TEST(significant_identical_never)
{
    const kf_stats cases[] = {
        summary(10, 1.0, 1.0, 0.1), summary(1000, 0.0561, 0.0562, 1e-5), summary(2, 3, 3, 0),
        summary(5, 0, 0, 0),
    };
    for (int i = 0; i < N_OF(cases); i++) {
        double p = -1;
        ck_assert(!stats_significant(&cases[i], &cases[i], 0.05, &p));
        ck_assert(!stats_significant(&cases[i], &cases[i], 0.999, &p));
        ck_assert_msg(p == 1, "case %d: p = %g", i, p);
    }
    /* and from the same timings */
    const double ms[] = {0.52, 0.50, 0.51, 0.55, 0.49, 0.50, 0.53};
    kf_stats a, b;
    stats_compute(ms, N_OF(ms), &a);
    stats_compute(ms, N_OF(ms), &b);
    ck_assert(!stats_significant(&a, &b, 0.05, NULL));
}
END_TEST

START_TEST(significant_clear_difference)
{
    /* 10% apart, 1% noise, 50 reps each */
    kf_stats a = summary(50, 1.00, 1.001, 0.01), b = summary(50, 1.10, 1.101, 0.011);
    double p = -1;
    ck_assert(stats_significant(&a, &b, 0.05, &p));
    ck_assert(p >= 0 && p < 1e-20);
    ck_assert(stats_significant(&b, &a, 0.05, NULL));
    /* 1.0 against 1.1 with stddev 0.09 and 10 reps: p = 0.023, significant at
     * 5%, not at 1% (SciPy) */
    a = summary(10, 1.0, 1.0, 0.09);
    b = summary(10, 1.1, 1.1, 0.09);
    ck_assert(stats_significant(&a, &b, 0.05, &p));
    assert_rel(p, 0.023036813642647293, 1e-10, "p");
    ck_assert(!stats_significant(&a, &b, 0.01, &p));
    /* the first reference case, p = 0.038, but medians only half a stddev apart */
    a = summary(10, 1.0, 1.0, 0.1);
    b = summary(10, 1.05, 1.1, 0.1);
    ck_assert(!stats_significant(&a, &b, 0.05, &p));
    assert_rel(p, 0.03824961451611377, 1e-10, "p");
}
END_TEST

START_TEST(significant_minimum_effect)
{
    /* 0.5% apart with 2% noise: 5000 reps make the t-test certain (p ~ 1e-35),
     * but the difference is inside either run's spread */
    kf_stats a = summary(5000, 1.000, 1.000, 0.020), b = summary(5000, 1.005, 1.005, 0.020);
    double t, df, p = stats_welch(&a, &b, &t, &df);
    ck_assert_msg(p < 1e-30, "p = %g", p);
    ck_assert(!stats_significant(&a, &b, 0.05, &p));
    ck_assert(p < 1e-30); /* p_out is the test's p-value all the same */
    /* just beyond the larger stddev: significant */
    b = summary(5000, 1.0201, 1.0201, 0.020);
    ck_assert(stats_significant(&a, &b, 0.05, NULL));
}
END_TEST

START_TEST(significant_zero_variance)
{
    /* both without spread: any difference is certain */
    kf_stats a = summary(10, 2.0, 2.0, 0), b = summary(10, 2.5, 2.5, 0);
    double t, df, p = stats_welch(&a, &b, &t, &df);
    ck_assert(p == 0 && isinf(t) && t < 0 && df == 18);
    ck_assert(stats_significant(&a, &b, 0.05, &p));
    ck_assert(p == 0);
    /* equal means without spread */
    b = summary(10, 2.0, 2.0, 0);
    ck_assert(stats_welch(&a, &b, &t, &df) == 1 && t == 0);
    ck_assert(!stats_significant(&a, &b, 0.05, NULL));
    /* one side without spread: the other side's n - 1 degrees of freedom */
    b = summary(7, 2.6, 2.6, 0.1);
    p = stats_welch(&a, &b, &t, &df);
    assert_rel(df, 6, 1e-14, "df");
    assert_rel(t, -0.6 / (0.1 / sqrt(7)), 1e-12, "t");
    ck_assert(p > 0 && p < 1e-5);
    ck_assert(stats_significant(&a, &b, 0.05, NULL));
}
END_TEST

START_TEST(significant_no_test_possible)
{
    kf_stats good = summary(10, 1.0, 1.0, 0.1);
    kf_stats bad[] = {summary(1, 2.0, 2.0, 0), summary(0, 0, 0, 0), summary(10, 2.0, NAN, 0.1),
                      summary(10, 2.0, 2.0, -0.1), summary(10, 2.0, 2.0, INFINITY), summary(10, 2.0, -2.0, 0.1)};
    for (int i = 0; i < N_OF(bad); i++) {
        double p = 0, t = 0, df = 0;
        ck_assert(isnan(stats_welch(&good, &bad[i], &t, &df)));
        ck_assert(isnan(t) && isnan(df));
        ck_assert(!stats_significant(&good, &bad[i], 0.05, &p));
        ck_assert_msg(isnan(p), "case %d: p = %g", i, p);
        ck_assert(!stats_significant(&bad[i], &good, 0.05, NULL));
    }
    ck_assert(isnan(stats_welch(NULL, &good, NULL, NULL)));
    /* alpha outside (0, 1) */
    kf_stats far = summary(10, 5.0, 5.0, 0.1);
    ck_assert(stats_significant(&good, &far, 0.05, NULL));
    ck_assert(!stats_significant(&good, &far, 0, NULL));
    ck_assert(!stats_significant(&good, &far, 1, NULL));
    ck_assert(!stats_significant(&good, &far, NAN, NULL));
}
END_TEST

START_TEST(significant_direction_must_agree)
{
    /* the medians say a is slower, the means (pulled by outliers) say faster */
    kf_stats a = summary(100, 1.30, 1.00, 0.05), b = summary(100, 1.00, 1.20, 0.05);
    double p;
    ck_assert(stats_welch(&a, &b, NULL, NULL) < 1e-10);
    ck_assert(!stats_significant(&a, &b, 0.05, &p));
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *comp = tcase_create("compute");
    tcase_add_test(comp, compute_odd_count);
    tcase_add_test(comp, compute_even_count);
    tcase_add_test(comp, compute_textbook_example);
    tcase_add_test(comp, compute_median_with_duplicates_and_outlier);
    tcase_add_test(comp, compute_single_value);
    tcase_add_test(comp, compute_empty_and_null);
    tcase_add_test(comp, compute_all_zero_is_not_nan);
    tcase_add_test(comp, compute_input_not_modified);
    tcase_add_test(comp, compute_large_offset_no_cancellation);
    tcase_add_test(comp, compute_matches_reference);
    suite_add_tcase(s, comp);

    TCase *bw = tcase_create("bandwidth");
    tcase_add_test(bw, bandwidth_formula);
    tcase_add_test(bw, bandwidth_no_peak);
    tcase_add_test(bw, bandwidth_degenerate);
    tcase_add_test(bw, bandwidth_after_compute);
    tcase_add_test(bw, bandwidth_bytes_any_double);
    tcase_add_test(bw, flops_formula);
    suite_add_tcase(s, bw);

    TCase *stop = tcase_create("stop");
    tcase_add_test(stop, stop_never_without_reps);
    tcase_add_test(stop, stop_min_reps);
    tcase_add_test(stop, stop_max_reps);
    tcase_add_test(stop, stop_noise_threshold);
    tcase_add_test(stop, stop_uses_only_first_reps);
    tcase_add_test(stop, stop_time_budget);
    tcase_add_test(stop, stop_defaults_are_sane);
    tcase_add_test(stop, median_ci_order_statistics);
    tcase_add_test(stop, stop_median_ci);
    suite_add_tcase(s, stop);

    TCase *sig = tcase_create("significance");
    tcase_add_test(sig, incbeta_reference_values);
    tcase_add_test(sig, incbeta_closed_forms_and_edges);
    tcase_add_test(sig, t_cdf_values);
    tcase_add_test(sig, welch_reference_values);
    tcase_add_test(sig, significant_identical_never);
    tcase_add_test(sig, significant_clear_difference);
    tcase_add_test(sig, significant_minimum_effect);
    tcase_add_test(sig, significant_zero_variance);
    tcase_add_test(sig, significant_no_test_possible);
    tcase_add_test(sig, significant_direction_must_agree);
    suite_add_tcase(s, sig);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(stats_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
