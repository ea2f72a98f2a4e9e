/*
 * stats.h -- statistics of repeated timings and the rule that decides when
 * enough repetitions have been taken.
 */
#ifndef KF_STATS_H
#define KF_STATS_H

#include "kforge.h"

/* Fills reps, median, min, max, mean, stddev (sample) and noise
 * (stddev / mean) from ms[0..n).  ms is not modified.  gbps and pct_peak are
 * left 0. */
void stats_compute(const double *ms, int n, kf_stats *out);

/* Sets gbps = bytes / median and pct_peak (0 if peak <= 0).  bytes: what
 * the run must move (the family's bytes()). */
void stats_bandwidth(kf_stats *s, double bytes, double peak_gbps);

/* Sets gflops = flops / median and pct_peak_flops (0 if peak <= 0): flops,
 * what one run computes (the family's flops()), over its FP32 peak. */
void stats_flops(kf_stats *s, double flops, double peak_gflops);

/* The half-width of the distribution-free 95% confidence interval of the
 * median of ms[0..n), relative to the median.  The interval runs from the
 * l-th smallest repetition to the l-th largest, l the largest rank with
 * P(Binomial(n, 1/2) < l) <= 2.5% (exact, for every n: 40th..61st of 100).
 * It needs no assumption about the distribution, so quantised timer
 * readings and the odd slow repetition do not inflate it as they inflate
 * the stddev.  INFINITY for n <= 5 (no interval reaches 95% there); 0 when
 * the interval is a single value. */
double stats_median_ci(const double *ms, int n);

/* That interval itself: its ends and the median of ms[0..n) (false for
 * n < 1 or out of memory); -INFINITY..INFINITY for n <= 5. */
bool stats_median_interval(const double *ms, int n, double *lo, double *median, double *hi);

/* The stopping rule: stop once reps >= max_reps; or reps >= min_reps and
 * (noise <= max_noise, or elapsed_s >= max_time_s, or max_median_ci > 0 and
 * stats_median_ci <= max_median_ci).  elapsed_s is the time spent in timed
 * repetitions so far. */
bool stats_should_stop(const double *ms, int reps, double elapsed_s, const kf_bench *b);

// ----------------------------------------------------------------------------
// Is a difference real?  Welch's t-test on two summaries (issue 14)

/* The regularized incomplete beta function I_x(a, b) for a, b > 0 and
 * 0 <= x <= 1 (NaN otherwise), by its continued fraction: relative error
 * about 1e-12 or better for the parameters the t distribution needs (b = 1/2,
 * a up to millions). */
double stats_incbeta(double a, double b, double x);

/* P(T <= t) for Student's t distribution with df > 0 degrees of freedom (not
 * necessarily an integer; infinite gives the normal distribution).  NaN for
 * df <= 0 or a NaN argument. */
double stats_t_cdf(double t, double df);

/* Welch's unequal-variances t-test of the means of a and b: the two-sided
 * p-value, with t = (mean_a - mean_b) / sqrt(sd_a^2/n_a + sd_b^2/n_b) and the
 * Welch-Satterthwaite degrees of freedom in *t_out and *df_out (either may
 * be NULL).  With no spread at all (both stddevs 0) the p-value is 0 when
 * the means differ and 1 when they are equal.  NaN when no test is possible:
 * fewer than 2 reps on a side, or a mean or stddev that is negative or not
 * finite. */
double stats_welch(const kf_stats *a, const kf_stats *b, double *t_out, double *df_out);

/* Whether a and b really differ.  All of:
 *   - Welch's two-sided p-value (stats_welch) is below alpha (0 < alpha < 1);
 *   - the minimum effect: the medians (the figures kforge reports) differ by
 *     more than the larger of the two standard deviations.  A difference
 *     within one measurement's own spread is never significant, however
 *     many repetitions make the t-test sure of it;
 *   - the medians and the means differ in the same direction.
 * *p_out (may be NULL) gets the p-value, NaN when no test is possible.
 * Identical summaries are never significant. */
bool stats_significant(const kf_stats *a, const kf_stats *b, double alpha, double *p_out);

#endif
