/*
 * stats.c -- statistics of repeated timings and the stopping rule.
 *
 * The median is the headline number (robust to the odd slow repetition);
 * noise = sample stddev / mean decides when enough repetitions were taken,
 * or (bench.max_median_ci) the width of the median's confidence interval.
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

void stats_flops(kf_stats *s, double flops, double peak_gflops)
{
    s->gflops = 0;
    s->pct_peak_flops = 0;
    if (s->median_ms > 0 && flops > 0 && isfinite(flops))
        s->gflops = flops / (s->median_ms * 1e-3) / 1e9;
    if (peak_gflops > 0)
        s->pct_peak_flops = s->gflops / peak_gflops * 100.0;
}

/* The k-th smallest of a[0..n) (0-based), reordering a: Hoare's selection,
 * O(n) on average. */
static double select_kth(double *a, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* The 1-based rank l of the lower end of the median's 95% interval: the
 * largest l with P(B <= l - 1) <= 2.5% for B ~ Binomial(n, 1/2), so that
 * P(median < x_(l)) <= 2.5%; 0 when even x_(1) is not enough (n <= 5). */
static int median_rank_low(int n)
{
    double cum = 0, lc = lgamma(n + 1.0) - n * log(2.0);
    for (int k = 0; k <= n / 2; k++) {
        cum += exp(lc - lgamma(k + 1.0) - lgamma(n - k + 1.0));
        if (cum > 0.025)
            return k; /* P(B <= k - 1) <= 2.5% < P(B <= k) */
    }
    return n / 2;
}

bool stats_median_interval(const double *ms, int n, double *lo, double *median, double *hi)
{
    if (n < 1 || !ms)
        return false;
    int l = median_rank_low(n);
    double *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return false;
    memcpy(a, ms, (size_t)n * sizeof *a);
    /* x_(l) and, by symmetry, x_(n + 1 - l), as 0-based indices */
    *lo = l > 0 ? select_kth(a, n, l - 1) : -INFINITY;
    *hi = l > 0 ? select_kth(a, n, n - l) : INFINITY;
    double med = select_kth(a, n, n / 2);
    if (n % 2 == 0) /* the lower middle one: the largest below index n/2 */
        med = 0.5 * (med + select_kth(a, n / 2, n / 2 - 1));
    *median = med;
    free(a);
    return true;
}

double stats_median_ci(const double *ms, int n)
{
    double lo, med, hi;
    if (!stats_median_interval(ms, n, &lo, &med, &hi) || !isfinite(lo) || !isfinite(hi))
        return INFINITY;
    if (!(med > 0))
        return hi > lo ? INFINITY : 0;
    return (hi - lo) / (2 * med);
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
    if (noise <= b->max_noise)
        return true;
    return b->max_median_ci > 0 && stats_median_ci(ms, reps) <= b->max_median_ci;
}

// ----------------------------------------------------------------------------
// Welch's t-test

/* The continued fraction of I_x(a, b) (modified Lentz), which converges fast
 * for x < (a + 1) / (a + b + 2); stats_incbeta uses the symmetry
 * I_x(a, b) = 1 - I_(1-x)(b, a) for the other side. */
static double incbeta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        /* even step */
        double num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        d = 1 + num * d;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = 1 + num / c;
        if (fabs(c) < tiny)
            c = tiny;
        h *= d * c;
        /* odd step */
        num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
        d = 1 + num * d;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = 1 + num / c;
        if (fabs(c) < tiny)
            c = tiny;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < eps)
            break;
    }
    return h;
}

/* lgamma(x) - Stirling's approximation (x - 1/2) log x - x + log(2 pi) / 2,
 * by its asymptotic series: for x >= 100 the first omitted term is below
 * 1e-21. */
static double stirling_rest(double x)
{
    double r = 1 / (x * x);
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r / 1680))) / x;
}

/* log(Gamma(a + b) / (Gamma(a) Gamma(b))).  For large a or b the plain
 * difference of lgammas loses digits (lgamma(5e5) is 6e6); there the
 * Stirling form of lgamma(a + b) - lgamma(max) is taken in pieces that do not
 * cancel. */
static double log_inv_beta(double a, double b)
{
    double big = a > b ? a : b, small = a > b ? b : a;
    if (big < 100)
        return lgamma(a + b) - lgamma(a) - lgamma(b);
    double ratio = (big - 0.5) * log1p(small / big) + small * log(big + small) - small +
                   stirling_rest(big + small) - stirling_rest(big);
    return ratio - lgamma(small);
}

/* I_x(a, b) with y = 1 - x given separately, so that callers who know both
 * precisely (stats_t_cdf) lose nothing when x is close to 1. */
static double incbeta_xy(double a, double b, double x, double y)
{
    if (x == 0 || y == 0)
        return x == 0 ? 0 : 1;
    double lx = x < 0.5 ? log(x) : log1p(-y), ly = y < 0.5 ? log(y) : log1p(-x);
    /* x^a y^b / (a B(a, b)), in logarithms */
    double lfront = log_inv_beta(a, b) + a * lx + b * ly;
    if (x < (a + 1) / (a + b + 2))
        return exp(lfront) * incbeta_cf(a, b, x) / a;
    return 1 - exp(lfront) * incbeta_cf(b, a, y) / b;
}

double stats_incbeta(double a, double b, double x)
{
    if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1) || isinf(a) || isinf(b))
        return NAN;
    return incbeta_xy(a, b, x, 1 - x);
}

/* P(|T| > |t|) for t with df degrees of freedom: I_x(df/2, 1/2) at
 * x = df / (df + t^2), 1 - x = t^2 / (df + t^2). */
static double t_two_sided(double t, double df)
{
    double t2 = t * t;
    return incbeta_xy(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double stats_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    if (isinf(df))
        return 0.5 * erfc(-t / sqrt(2.0));
    double tail = 0.5 * t_two_sided(t, df);
    return t > 0 ? 1 - tail : tail;
}

static bool summary_usable(const kf_stats *s)
{
    return s && s->reps >= 2 && isfinite(s->mean_ms) && isfinite(s->stddev_ms) && s->stddev_ms >= 0 &&
           s->mean_ms >= 0;
}

double stats_welch(const kf_stats *a, const kf_stats *b, double *t_out, double *df_out)
{
    if (t_out)
        *t_out = NAN;
    if (df_out)
        *df_out = NAN;
    if (!summary_usable(a) || !summary_usable(b))
        return NAN;
    double va = a->stddev_ms * a->stddev_ms / a->reps;
    double vb = b->stddev_ms * b->stddev_ms / b->reps;
    double diff = a->mean_ms - b->mean_ms;
    double se2 = va + vb;
    if (se2 == 0) {
        /* no spread: any difference of the means is certain */
        if (t_out)
            *t_out = diff == 0 ? 0 : diff > 0 ? INFINITY : -INFINITY;
        if (df_out)
            *df_out = a->reps + b->reps - 2;
        return diff == 0 ? 1 : 0;
    }
    double t = diff / sqrt(se2);
    double df = se2 * se2 / (va * va / (a->reps - 1) + vb * vb / (b->reps - 1));
    if (t_out)
        *t_out = t;
    if (df_out)
        *df_out = df;
    return t_two_sided(t, df);
}

bool stats_significant(const kf_stats *a, const kf_stats *b, double alpha, double *p_out)
{
    double p = stats_welch(a, b, NULL, NULL);
    if (p_out)
        *p_out = p;
    if (isnan(p) || !(alpha > 0 && alpha < 1) || !(p < alpha))
        return false;
    double dmed = a->median_ms - b->median_ms, dmean = a->mean_ms - b->mean_ms;
    double spread = a->stddev_ms > b->stddev_ms ? a->stddev_ms : b->stddev_ms;
    if (!(fabs(dmed) > spread))
        return false;
    return (dmed > 0) == (dmean > 0) && dmean != 0;
}
