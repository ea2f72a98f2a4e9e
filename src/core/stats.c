/*
 * stats.c -- statistics of repeated timings and the stopping rule.
 *
 * The median is the headline number (robust to the odd slow repetition);
 * noise = sample stddev / mean decides when enough repetitions were taken.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean and sample standard deviation, two passes (no cancellation). */
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

void stats_compute(const double *ms, int n, kf_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0 || !ms)
        return;
    out->reps = n;

    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (sorted) {
        memcpy(sorted, ms, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
        out->min_ms = sorted[0];
        out->max_ms = sorted[n - 1];
        out->median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        free(sorted);
    }
    mean_stddev(ms, n, &out->mean_ms, &out->stddev_ms);
    if (!sorted) {
        /* out of memory: min/max still exact, the mean stands in for the median */
        out->min_ms = out->max_ms = ms[0];
        for (int i = 1; i < n; i++) {
            out->min_ms = ms[i] < out->min_ms ? ms[i] : out->min_ms;
            out->max_ms = ms[i] > out->max_ms ? ms[i] : out->max_ms;
        }
        out->median_ms = out->mean_ms;
    }
    /* all-zero times have no spread: call that noise 0 rather than NaN */
    out->noise = out->mean_ms > 0 ? out->stddev_ms / out->mean_ms : 0;
}

void stats_bandwidth(kf_stats *s, double bytes, double peak_gbps)
{
    s->gbps = 0;
    s->pct_peak = 0;
    if (s->median_ms > 0 && bytes > 0)
        s->gbps = bytes / (s->median_ms * 1e-3) / 1e9;
    if (peak_gbps > 0)
        s->pct_peak = s->gbps / peak_gbps * 100.0;
}

bool stats_should_stop(const double *ms, int reps, double elapsed_s, const kf_bench *b)
{
    if (reps <= 0)
        return false;   /* never stop without a single measurement */
    if (reps >= b->max_reps)
        return true;
    if (reps < b->min_reps)
        return false;
    if (elapsed_s >= b->max_time_s)
        return true;
    double mean, sd;
    mean_stddev(ms, reps, &mean, &sd);
    double noise = mean > 0 ? sd / mean : 0;
    return noise <= b->max_noise;
}
