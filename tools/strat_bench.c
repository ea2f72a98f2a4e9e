/*
 * strat_bench.c -- kforge's search strategies replayed on recorded spaces
 * (Kernel Tuner cache files, T4 files: src/tune/recorded.h), no GPU.
 *
 *   strat_bench [--seeds N] [--budgets 1,2,5,10,20] [--strategies LIST] [--exact] [--found E] [--csv FILE] FILE...
 *
 * The space of a file is every configuration it holds (those a restriction
 * refused left out), each axis one parameter that varies (ordered when its
 * values are numbers).  A configuration that failed there (compile, run
 * time) fails here.  Every strategy searches each file at each budget (a
 * percentage of the space, at least 1 evaluation) with seeds 1..N; the
 * table gives the mean of optimum/best (1.000: the optimum was found; 0
 * when nothing that ran was found), and the score against random sampling
 * of Willemsen et al. (the Kernel Tuner authors' methodology): per budget,
 * (random - strategy) / (random - optimum) of the mean best time, random's
 * expectation computed exactly (sampling without replacement), averaged
 * over the budgets.  1 is the optimum at every budget, 0 is random, below
 * 0 worse than random.  A strategy whose search does not depend on its
 * budget (all but anneal) runs once per seed at the largest budget, and its
 * best within the first b evaluations is its best at budget b; --exact runs
 * every budget apart (the same figures, slower).  --found E adds, per
 * strategy, in how many seeds its run at the largest budget had found the
 * optimum within E evaluations (E at most the largest budget).  --csv writes
 * one line per file, strategy and budget for the curves
 * (tools/bench_strategies.sh draws them).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorded.h"
#include "strategy.h"
#include "util.h"

#define MAX_BUDGETS 16

typedef struct {
    const char *path;
    rec_space r;
    int n;                  /* candidates: configurations not refused by a restriction */
    int *conf;              /* candidate -> configuration */
    int dims;
    int *coords, levels[64];
    bool ordered[64];
    double *cost;           /* per candidate: time, +inf if it failed */
    double opt, worst;
    double *sorted;         /* finite costs, ascending */
    int nfinite;
} space;

typedef struct {
    space *sp;
    int nstrat, nbudget, seeds;
    const strat_kind *strat;
    const int *budget;      /* evaluations */
    double *best;           /* [strat][budget][seed] best time found (+inf: none) */
    int *fail;              /* strat_new failed */
    bool exact;             /* a run per budget for every strategy */
    int *found;             /* [strat][seed]: the evaluation that found the optimum at the largest budget, 0: none */
} job_ctx;

/* A strategy whose first b evaluations are the same whatever its budget
 * beyond b: one run at the largest budget gives every smaller one (its
 * best within the first b evaluations).  Annealing's temperature follows
 * its budget: a run per budget.  (tests/tune_suite.sh checks that both
 * ways give the same table.) */
static bool budget_free(strat_kind k) { return k != STRAT_ANNEAL; }

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int build_space(space *s, char *err, size_t errlen)
{
    rec_space *r = &s->r;
    s->conf = malloc(sizeof *s->conf * (size_t)r->nconf);
    s->cost = malloc(sizeof *s->cost * (size_t)r->nconf);
    s->sorted = malloc(sizeof *s->sorted * (size_t)r->nconf);
    if (!s->conf || !s->cost || !s->sorted) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    s->n = 0;
    for (int i = 0; i < r->nconf; i++)
        if (r->status[i] != REC_INVALID)
            s->conf[s->n++] = i;
    if (s->n == 0) {
        kf_err(err, errlen, "%s: every configuration was refused by a restriction", s->path);
        return -1;
    }
    int axis[64];
    double *vals[64] = {0};
    s->dims = 0;
    for (int p = 0; p < r->nparams && s->dims < 64; p++) {
        double *v = malloc(sizeof *v * (size_t)s->n);
        if (!v) {
            kf_err(err, errlen, "out of memory");
            return -1;
        }
        for (int c = 0; c < s->n; c++)
            v[c] = r->values[(size_t)s->conf[c] * (size_t)r->nparams + (size_t)p];
        qsort(v, (size_t)s->n, sizeof *v, cmp_d);
        int m = 0;
        for (int c = 0; c < s->n; c++)
            if (m == 0 || v[c] != v[m - 1])
                v[m++] = v[c];
        if (m < 2) {
            free(v);
            continue;
        }
        vals[s->dims] = v;
        s->levels[s->dims] = m;
        s->ordered[s->dims] = !r->is_string[p];
        axis[s->dims++] = p;
    }
    s->coords = malloc(sizeof *s->coords * (size_t)s->n * (size_t)(s->dims ? s->dims : 1));
    if (!s->coords) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    for (int c = 0; c < s->n; c++)
        for (int d = 0; d < s->dims; d++) {
            double x = r->values[(size_t)s->conf[c] * (size_t)r->nparams + (size_t)axis[d]];
            const double *p = bsearch(&x, vals[d], (size_t)s->levels[d], sizeof x, cmp_d);
            s->coords[(size_t)c * (size_t)s->dims + (size_t)d] = (int)(p - vals[d]);
        }
    for (int d = 0; d < s->dims; d++)
        free(vals[d]);
    s->nfinite = 0;
    for (int c = 0; c < s->n; c++) {
        double t = r->time_ms[s->conf[c]];
        s->cost[c] = r->status[s->conf[c]] == REC_OK && isfinite(t) ? t : INFINITY;
        if (isfinite(s->cost[c]))
            s->sorted[s->nfinite++] = s->cost[c];
    }
    if (s->nfinite == 0) {
        kf_err(err, errlen, "%s: no configuration ran", s->path);
        return -1;
    }
    qsort(s->sorted, (size_t)s->nfinite, sizeof *s->sorted, cmp_d);
    s->opt = s->sorted[0];
    s->worst = s->sorted[s->nfinite - 1];
    return 0;
}

static double lchoose(int n, int k)
{
    if (k < 0 || k > n)
        return -INFINITY;
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* Random sampling of b of the space without replacement: the expected best
 * time (nothing that ran: the worst time) and the expected optimum/best. */
static void random_expect(const space *s, int b, double *time, double *ratio)
{
    double lt = lchoose(s->n, b), et = 0, er = 0;
    for (int i = 1; i <= s->nfinite; i++) {
        /* P(best rank >= i) - P(best rank >= i + 1); ranks past the finite ones failed */
        double p = exp(lchoose(s->n - i + 1, b) - lt) - exp(lchoose(s->n - i, b) - lt);
        et += p * s->sorted[i - 1];
        er += p * s->opt / s->sorted[i - 1];
    }
    double none = exp(lchoose(s->n - s->nfinite, b) - lt);
    *time = et + none * s->worst;
    *ratio = er;
}

static void run_job(void *vctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    job_ctx *j = vctx;
    space *s = j->sp;
    for (int64_t q = lo; q < hi; q++) {
        int seed = (int)(q % j->seeds), bi = (int)(q / j->seeds % j->nbudget), si = (int)(q / j->seeds / j->nbudget);
        bool prefix = !j->exact && budget_free(j->strat[si]);
        int top = 0; /* the largest budget: its run gives the others */
        for (int b = 1; b < j->nbudget; b++)
            if (j->budget[b] > j->budget[top])
                top = b;
        if (prefix && bi != top)
            continue;
        strat_space ss = {s->n, s->dims, s->coords, s->levels, s->ordered};
        strat_opts o;
        strat_opts_defaults(&o);
        o.seed = (uint64_t)seed + 1;
        o.budget = j->budget[bi];
        char err[256];
        strategy *st = strat_new(j->strat[si], &ss, &o, err, sizeof err);
        if (!st) {
            j->fail[si] = 1;
            continue;
        }
        int batch[32], k;
        while ((k = strat_ask(st, batch, 32)) > 0)
            for (int i = 0; i < k; i++)
                strat_tell(st, batch[i], s->cost[batch[i]]);
        int nt;
        const strat_improvement *tr = strat_trace(st, &nt);
        if (bi == top) {
            int at = 0;
            for (int i = 0; i < nt && !at; i++)
                if (tr[i].cost <= s->opt)
                    at = tr[i].evaluation;
            j->found[(size_t)si * (size_t)j->seeds + (size_t)seed] = at;
        }
        for (int b = 0; b < j->nbudget; b++) {
            if (!prefix && b != bi)
                continue;
            double c = INFINITY;
            for (int i = 0; i < nt && tr[i].evaluation <= j->budget[b]; i++)
                c = tr[i].cost;
            j->best[((size_t)si * (size_t)j->nbudget + (size_t)b) * (size_t)j->seeds + (size_t)seed] = c;
        }
        strat_free(st);
    }
}

static int parse_list(const char *arg, int *out, int max)
{
    int n = 0;
    char *dup = strdup(arg), *save = NULL;
    for (char *t = strtok_r(dup, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        out[n++] = atoi(t);
    free(dup);
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: strat_bench [--seeds N] [--budgets 1,2,5,10,20] [--strategies random,local,...] "
                    "[--exact] [--found E] [--csv FILE] FILE...\n");
}

int main(int argc, char **argv)
{
    int seeds = 20, pct[MAX_BUDGETS] = {1, 2, 5, 10, 20}, npct = 5;
    strat_kind strat[STRAT_COUNT];
    int nstrat = 0;
    const char *csv = NULL;
    int first = 1, found = 0;
    bool exact = false;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        const char *a = argv[first];
        if (strcmp(a, "--exact") == 0) {
            exact = true;
            continue;
        }
        if (first + 1 >= argc) {
            usage();
            return 2;
        }
        const char *v = argv[++first];
        if (strcmp(a, "--seeds") == 0) {
            seeds = atoi(v);
        } else if (strcmp(a, "--budgets") == 0) {
            npct = parse_list(v, pct, MAX_BUDGETS);
        } else if (strcmp(a, "--csv") == 0) {
            csv = v;
        } else if (strcmp(a, "--found") == 0) {
            found = atoi(v);
            if (found < 1) {
                fprintf(stderr, "strat_bench: --found %s: expected a number of evaluations >= 1\n", v);
                return 2;
            }
        } else if (strcmp(a, "--strategies") == 0) {
            char *dup = strdup(v), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int k = -1;
                for (int i = 0; i < STRAT_COUNT; i++)
                    if (strcmp(strat_names[i], t) == 0)
                        k = i;
                if (k < 0) {
                    fprintf(stderr, "strat_bench: unknown strategy %s\n", t);
                    return 2;
                }
                strat[nstrat++] = (strat_kind)k;
            }
            free(dup);
        } else {
            usage();
            return 2;
        }
    }
    if (first >= argc || seeds < 1 || npct < 1) {
        usage();
        return 2;
    }
    if (nstrat == 0)
        for (int i = 0; i < STRAT_COUNT; i++)
            if (i != STRAT_EXHAUSTIVE)
                strat[nstrat++] = (strat_kind)i;
    FILE *cf = NULL;
    if (csv) {
        cf = fopen(csv, "w");
        if (!cf) {
            perror(csv);
            return 4;
        }
        fprintf(cf, "space,strategy,budget_pct,evaluations,mean_opt_over_best,mean_best_ms,random_opt_over_best,score\n");
    }
    int rc = 0;
    double tot_score[STRAT_COUNT + 1] = {0};
    int nspaces = 0;
    for (int f = first; f < argc; f++) {
        space s;
        memset(&s, 0, sizeof s);
        s.path = argv[f];
        char err[1024];
        int lr = rec_load(s.path, &s.r, err, sizeof err);
        if (lr != 1 || build_space(&s, err, sizeof err) != 0) {
            fprintf(stderr, "strat_bench: %s\n", lr == 0 ? "not a Kernel Tuner cache or T4 file" : err);
            rc = 2;
            rec_free(&s.r);
            continue;
        }
        int budget[MAX_BUDGETS];
        for (int b = 0; b < npct; b++) {
            budget[b] = (int)lround(s.n * pct[b] / 100.0);
            if (budget[b] < 1)
                budget[b] = 1;
        }
        size_t njobs = (size_t)nstrat * (size_t)npct * (size_t)seeds;
        job_ctx j = {&s, nstrat, npct, seeds, strat, budget, malloc(sizeof(double) * njobs),
                     calloc((size_t)nstrat, sizeof(int)), exact, calloc((size_t)nstrat * (size_t)seeds, sizeof(int))};
        int top = 0;
        for (int b = 1; b < npct; b++)
            if (budget[b] > budget[top])
                top = b;
        if (found > budget[top]) {
            fprintf(stderr, "strat_bench: %s: --found %d is beyond the largest budget (%d evaluations)\n", s.path,
                    found, budget[top]);
            rc = 2;
        }
        double t0 = kf_now();
        kf_parallel_for((int64_t)njobs, 1, run_job, &j);
        const char *base = strrchr(s.path, '/') ? strrchr(s.path, '/') + 1 : s.path;
        printf("\n%s: %s, %s, %d configurations (%d ran), %d axes; optimum %.4g ms; %d seeds; %.1f s\n", base,
               s.r.format, s.r.device[0] ? s.r.device : "?", s.n, s.nfinite, s.dims, s.opt, seeds, kf_now() - t0);
        printf("  %-12s", "budget");
        for (int b = 0; b < npct; b++)
            printf("  %5d%% (%4d)", pct[b], budget[b]);
        printf("   score\n");
        double rt[MAX_BUDGETS], rr[MAX_BUDGETS];
        printf("  %-12s", "random (exp)");
        for (int b = 0; b < npct; b++) {
            random_expect(&s, budget[b], &rt[b], &rr[b]);
            printf("  %12.3f", rr[b]);
        }
        printf("   %6.3f\n", 0.0);
        for (int si = 0; si < nstrat; si++) {
            printf("  %-12s", strat_names[strat[si]]);
            if (j.fail[si]) {
                printf("  (could not start)\n");
                continue;
            }
            double score = 0;
            for (int b = 0; b < npct; b++) {
                double mr = 0, mt = 0;
                for (int k = 0; k < seeds; k++) {
                    double c = j.best[((size_t)si * (size_t)npct + (size_t)b) * (size_t)seeds + (size_t)k];
                    mr += isfinite(c) ? s.opt / c : 0;
                    mt += isfinite(c) ? c : s.worst;
                }
                mr /= seeds;
                mt /= seeds;
                double sb = rt[b] > s.opt ? (rt[b] - mt) / (rt[b] - s.opt) : 0;
                score += sb;
                printf("  %12.3f", mr);
                if (cf)
                    fprintf(cf, "%s,%s,%d,%d,%.5f,%.6g,%.5f,%.4f\n", base, strat_names[strat[si]], pct[b], budget[b],
                            mr, mt, rr[b], sb);
            }
            score /= npct;
            tot_score[strat[si]] += score;
            printf("   %6.3f\n", score);
        }
        if (found > 0 && found <= budget[top]) {
            printf("  the optimum within %d evaluations, seeds of %d:", found, seeds);
            for (int si = 0; si < nstrat; si++) {
                int k = 0;
                for (int q = 0; q < seeds; q++) {
                    int at = j.found[(size_t)si * (size_t)seeds + (size_t)q];
                    k += at > 0 && at <= found;
                }
                printf("  %s %d", strat_names[strat[si]], k);
            }
            printf("\n");
        }
        fflush(stdout);
        nspaces++;
        free(j.best);
        free(j.fail);
        free(j.found);
        free(s.conf);
        free(s.cost);
        free(s.sorted);
        free(s.coords);
        rec_free(&s.r);
    }
    if (nspaces > 1) {
        printf("\nmean score over %d spaces:", nspaces);
        for (int si = 0; si < nstrat; si++)
            printf("  %s %.3f", strat_names[strat[si]], tot_score[strat[si]] / nspaces);
        printf("\n");
    }
    if (cf && fclose(cf) != 0) {
        perror(csv);
        rc = 4;
    }
    return rc;
}
