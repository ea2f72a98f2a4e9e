/*
 * tune.c -- the tuner behind `kforge tune` (src/cmd/tune.c parses its
 * options): search a space of variants for the fastest with a strategy
 * (strategy.h), measuring through the run session (run.h), and record the
 * best per size in the tuning database (tunedb.h).
 *
 * The strategy sees candidates only as coordinate vectors.  This file maps
 * them to variants, measures each batch the strategy asks for with one
 * run_session_measure() call (so the compiler pool compiles the batch while
 * the GPU measures its first cases, and with --devices every GPU measures
 * cases of the batch at once), turns the per-size results into one
 * objective per candidate, appends every case to the results file as it
 * finishes, and records the best per size in the tuning database at the
 * end -- also when interrupted.
 *
 * Several GPUs evaluate one search: the strategy's batches do not depend on
 * the number of GPUs, and the candidates of a batch are told to the
 * strategy in batch order whatever GPU finished first, so a seed gives the
 * same search on one GPU or eight.  GPUs of different models are never
 * ranked together (refused).  --shard K/N takes the K-th of N balanced
 * slices of the order in which an exhaustive or random search evaluates the
 * candidates; the other slices count as evaluated elsewhere, so N shards'
 * results files merged (kforge merge) hold the candidates of the unsharded
 * search.
 */
#include "tuner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "line.h"
#include "ranges.h"
#include "report.h"
#include "resume.h"
#include "results.h"
#include "family.h"
#include "param.h"
#include "pick.h"
#include "run.h"
#include "space.h"
#include "strategy.h"
#include "tunedb.h"
#include "util.h"
#include "worker.h"

/* Candidates per batch.  Fixed (not derived from the number of CPUs) because
 * the batch size is part of what makes a seeded search reproducible. */
#define BATCH_MAX 32
/* exhaustive and random search propose in an order fixed by the seed alone,
 * so they can hand the compiler pool far more at once without changing the
 * search: the pool then works ahead of the GPU across the whole sweep, not
 * batch by batch.  (--time is still checked after every case.) */
#define ORDER_BATCH_MAX 4096
/* Up to this many candidates, with no --budget or --time, the default is to
 * measure everything: on one GPU that is minutes, and it is the only answer
 * that is certainly the optimum. */
#define AUTO_EXHAUSTIVE_MAX 2000
/* The guided default: the model strategy.  make bench-strategies
 * (tools/bench_strategies.sh: benchmark_hub's recorded convolution and
 * dedispersion spaces on six GPUs, budgets of 1 to 20% of the space, 20
 * seeds; README, "Which strategy when") puts it first in score against
 * random sampling on the six NVIDIA spaces it was designed on and on five
 * of the six AMD spaces kept for evaluation (on the W7800 convolution
 * genetic leads, and on the W6600 convolution it trails random between 2
 * and 10% of the space).  Earlier, on an
 * exhaustive H100 sweep of configs/tune-reduce.json at n = 2^24, genetic
 * had the smallest worst case of the others (tools/tune_bench.sh). */
#define DEFAULT_GUIDED STRAT_MODEL

// ---------------------------------------------------------------------------
// the tuner

/* A cell's share of the objective: ms, J or J x ms; 0 when it has none. */
/* Whether cell x is outside --max-error (an OK case whose error was not measured is too). */
bool tuner_over_error(const tuner *t, const cell *x)
{
    return t->o.max_error > 0 && x->st == KF_ST_OK && !(x->has_acc && x->acc_rel <= t->o.max_error);
}

double tuner_cell_cost(const tuner *t, const cell *x)
{
    if (x->st != KF_ST_OK || tuner_over_error(t, x))
        return 0;
    switch (t->o.objective) {
    case TUNE_OBJ_ENERGY: return x->energy_j;
    case TUNE_OBJ_EDP: return x->energy_j * x->median_ms;
    default: return x->median_ms;
    }
}

/* +inf unless the candidate is OK (and has the objective's figures) at every size. */
double tuner_objective(const tuner *t, int c)
{
    double sum = 0;
    for (int k = 0; k < t->nsizes; k++) {
        double x = tuner_cell_cost(t, cell_at(t, c, k));
        if (!(x > 0) || !isfinite(x))
            return INFINITY;
        sum += t->weights[k] * x;
    }
    return sum;
}

bool tuner_failed(const tuner *t, int c)
{
    for (int k = 0; k < t->nsizes; k++) {
        kf_status st = cell_at(t, c, k)->st;
        if (st != KF_ST_OK && st != KF_ST_ABANDONED && st != KF_ST_COUNT)
            return true;
    }
    return false;
}

pick_cand tuner_pick_cand(const tuner *t, int c, int k)
{
    const cell *x = cell_at(t, c, k);
    return (pick_cand){.v = &t->sp.variants[t->var[c]], .shape = t->sizes[k], .status = x->st,
                       .median_ms = x->median_ms, .gbps = x->gbps, .pct_peak = x->pct_peak, .gflops = x->gflops,
                       .blocks = x->blocks,
                       .launches = x->launches, .deterministic = x->deterministic,
                       .has_acc = x->has_acc, .acc_rel = x->acc_rel, .over_error = tuner_over_error(t, x),
                       .failed_elsewhere = tuner_failed(t, c)};
}

static int size_index(const tuner *t, const kf_shape *s)
{
    for (int k = 0; k < t->nsizes; k++)
        if (shape_eq(&t->sizes[k], s))
            return k;
    return -1;
}

static int64_t axis_value(const kf_variant *v, int a) { return v->p[a]; }

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

/* Sorted distinct values of the candidates along an axis; returns how many. */
static int axis_levels(const tuner *t, int a, int64_t *vals)
{
    /* an axis has few values: kept sorted as they come (a million
     * candidates in milliseconds); with many, sorting them all */
    enum { FEW = 256 };
    int m = 0;
    for (int c = 0; c < t->ncand; c++) {
        int64_t x = axis_value(&t->sp.variants[t->var[c]], a);
        int lo = 0, hi = m;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (vals[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < m && vals[lo] == x)
            continue;
        if (m == FEW || m == t->ncand)
            goto many;
        memmove(vals + lo + 1, vals + lo, sizeof *vals * (size_t)(m - lo));
        vals[lo] = x;
        m++;
    }
    return m;
many:
    for (int c = 0; c < t->ncand; c++)
        vals[c] = axis_value(&t->sp.variants[t->var[c]], a);
    qsort(vals, (size_t)t->ncand, sizeof *vals, cmp_i64);
    m = 0;
    for (int c = 0; c < t->ncand; c++)
        if (m == 0 || vals[c] != vals[m - 1])
            vals[m++] = vals[c];
    return m;
}

/* The strategy's view: one coordinate per axis that varies.  Numeric axes
 * are ordered (a neighbour of block_size 256 is 128 or 512); so is grid when
 * every value is of one counted kind ({"waves": 1}, {"waves": 2}, ...);
 * everything else is enumerated. */
strategy *tuner_make_strategy(tuner *t, char *err, size_t errlen)
{
    int levels[KF_MAX_PARAMS], axis[KF_MAX_PARAMS], dims = 0;
    bool ordered[KF_MAX_PARAMS];
    int64_t *vals[KF_MAX_PARAMS] = {0};
    int *coords = NULL;
    strategy *st = NULL;
    const kf_family *fam = kf_families[t->cfg.family];
    for (int a = 0; a < fam->nparams; a++) {
        if (kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            goto out;
        }
        int64_t *v = malloc(sizeof *v * (size_t)t->ncand);
        if (!v)
            goto oom;
        int m = axis_levels(t, a, v);
        if (m < 2) {
            free(v);
            continue;
        }
        bool ord = fam->params[a].kind == KF_PK_INT;
        if (fam->params[a].kind == KF_PK_GRID) {
            kf_grid_kind k0 = kf_grid_decode(v[0]).kind;
            ord = k0 != KF_GRID_AUTO;
            for (int i = 1; i < m; i++)
                ord = ord && kf_grid_decode(v[i]).kind == k0;
        }
        vals[dims] = v;
        levels[dims] = m;
        ordered[dims] = ord;
        axis[dims] = a;
        dims++;
    }
    coords = malloc(sizeof *coords * (size_t)t->ncand * (size_t)(dims ? dims : 1));
    if (!coords)
        goto oom;
    for (int c = 0; c < t->ncand; c++) {
        if ((c & 65535) == 0 && kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            goto out;
        }
        for (int d = 0; d < dims; d++) {
            int64_t x = axis_value(&t->sp.variants[t->var[c]], axis[d]);
            const int64_t *p = bsearch(&x, vals[d], (size_t)levels[d], sizeof x, cmp_i64);
            coords[(size_t)c * (size_t)dims + (size_t)d] = (int)(p - vals[d]);
        }
    }
    strat_space ss = {t->ncand, dims, coords, levels, ordered};
    strat_opts so;
    strat_opts_defaults(&so);
    so.seed = t->o.seed;
    so.budget = t->budget;
    so.first_improvement = t->o.first_improvement;
    st = strat_new(t->kind, &ss, &so, err, errlen);
    goto out;
oom:
    kf_err(err, errlen, "out of memory");
out:
    for (int d = 0; d < KF_MAX_PARAMS; d++)
        free(vals[d]);
    free(coords);
    return st;
}

// ---------------------------------------------------------------------------
// progress and time

/* Failed cases named on stderr, each on a line of its own; the rest are counted. */
#define TUNE_FAILS_SAID 10

static void show_progress(tuner *t, bool force)
{
    if (!t->progress)
        return;
    double now = kf_now();
    if (!force && now - t->last_progress < 0.2)
        return;
    t->last_progress = now;
    double best;
    int b = strat_best(t->st, &best);
    char bb[32] = "-";
    if (b >= 0)
        tune_fmt_objective(t, bb, sizeof bb, best);
    /* time left: at the pace of the candidates measured so far, to the
     * budget (or to --time, if that comes first) */
    char left[48] = "", failed[32] = "";
    int evals = strat_evaluations(t->st);
    double el = now - t->t0, l = -1;
    if (t->told > 0 && evals < t->budget)
        l = el / t->told * (t->budget - evals);
    if (t->o.time_s > 0 && (l < 0 || t->o.time_s - el < l))
        l = t->o.time_s - el > 0 ? t->o.time_s - el : 0;
    if (l >= 0)
        snprintf(left, sizeof left, ", ~%.0fs left", l);
    if (t->failed_cases)
        snprintf(failed, sizeof failed, " | %d failed", t->failed_cases);
    fprintf(stderr, "\r\033[K[tune %s: %d/%d evaluated%s | best %s | %.0fs%s]", strat_names[t->kind], evals,
            t->budget, failed, bb, el, left);
    fflush(stderr);
}

static void clear_progress(const tuner *t)
{
    if (t->progress) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}

static bool out_of_time(tuner *t)
{
    /* --simulate: the simulated clock (what the evaluations took where they were recorded) */
    double el = t->o.simulate ? t->sim_clock_ms / 1e3 : kf_now() - t->t0;
    if (t->o.time_s > 0 && el >= t->o.time_s)
        t->out_of_time = true;
    return t->out_of_time;
}

// ---------------------------------------------------------------------------
// measuring

/* A candidate of another shard, not measured here nor found in the results file. */
bool tuner_other_shard(const tuner *t, int c) { return t->mine && !t->mine[c] && !complete(t, c); }

/* Candidate c's objective with its abandoned cases' partial medians in
 * place of full ones (they stopped once slower than the best there): an
 * estimate that steers a guided search, +inf if c failed at some size. */
double tuner_cell_estimate(const tuner *t, const cell *x)
{
    if (x->st == KF_ST_ABANDONED && t->o.objective == TUNE_OBJ_TIME)
        return x->median_ms;
    return tuner_cell_cost(t, x);
}

static double tuner_estimate(const tuner *t, int c)
{
    double sum = 0;
    for (int k = 0; k < t->nsizes; k++) {
        double v = tuner_cell_estimate(t, cell_at(t, c, k));
        if (!(v > 0) || !isfinite(v))
            return INFINITY;
        sum += t->weights[k] * v;
    }
    return sum;
}

/* Tells the strategy (strat_tell) or gives it as known (resume, replay)
 * candidate c's objective; a candidate abandoned at some size gives its
 * estimate, which steers the search but is never the best. */
void tuner_tell_strategy(tuner *t, int c, bool known)
{
    bool est = tuner_abandoned(t, c);
    double x = est ? tuner_estimate(t, c) : tuner_objective(t, c);
    if (known)
        (est ? strat_known_estimate : strat_known)(t->st, c, x);
    else
        (est ? strat_tell_estimate : strat_tell)(t->st, c, x);
}

static void tell(tuner *t, int c)
{
    t->told++;
    tuner_tell_strategy(t, c, false);
}

/* Whether candidate c was abandoned at some size (--abandon-above). */
bool tuner_abandoned(const tuner *t, int c)
{
    for (int k = 0; k < t->nsizes; k++)
        if (cell_at(t, c, k)->st == KF_ST_ABANDONED)
            return true;
    return false;
}

/* Evaluated candidates that failed (measured now or taken from the file);
 * abandoned ones are counted apart. */
int tuner_failed_candidates(const tuner *t)
{
    int f = 0;
    for (int c = 0; c < t->ncand; c++)
        f += isinf(strat_cost(t->st, c)) && !tuner_other_shard(t, c) && !tuner_abandoned(t, c) &&
             (!(t->o.max_error > 0) || tuner_failed(t, c));
    return f;
}

/* Evaluated candidates (not failed) above --max-error at some size. */
int tuner_over_error_candidates(const tuner *t)
{
    int n = 0;
    for (int c = 0; c < t->ncand; c++) {
        if (isnan(strat_cost(t->st, c)) || tuner_other_shard(t, c) || tuner_failed(t, c))
            continue;
        for (int k = 0; k < t->nsizes; k++)
            if (tuner_over_error(t, cell_at(t, c, k))) {
                n++;
                break;
            }
    }
    return n;
}

int tuner_abandoned_candidates(const tuner *t)
{
    int a = 0;
    for (int c = 0; c < t->ncand; c++)
        a += !isnan(strat_cost(t->st, c)) && !tuner_other_shard(t, c) && tuner_abandoned(t, c);
    return a;
}

/* Evaluated candidates left to the other shards (none when not sharded). */
int tuner_other_shard_evaluated(const tuner *t)
{
    int n = 0;
    for (int c = 0; c < t->ncand; c++)
        n += tuner_other_shard(t, c) && !isnan(strat_cost(t->st, c));
    return n;
}

typedef struct {
    tuner *t;
    kf_variant *vars;
    int *cand;              /* candidate of each variant of the batch */
    int nvars;
    kf_case *cases;         /* the cases measured (variant: index into vars) */
    int told;               /* vars[0 .. told) are told to the strategy */
    /* a stream (measure_stream): candidates are told as they complete, in
     * any order (said[i]: vars[i]'s is told); ask: room for strat_ask_more */
    unsigned char *said;
    int *ask;
} batch_ctx;

/* Tells the strategy the candidates of the batch that are complete, in
 * batch order: stop at the first one still waiting for a case (several GPUs
 * finish in any order; the strategy must see the same sequence).  In a
 * stream, every complete one, as it completes. */
static void tell_in_order(batch_ctx *b)
{
    if (b->said) {
        for (int i = b->told; i < b->nvars; i++)
            if (!b->said[i] && complete(b->t, b->cand[i])) {
                b->said[i] = 1;
                tell(b->t, b->cand[i]);
            }
        while (b->told < b->nvars && b->said[b->told])
            b->told++;
        return;
    }
    while (b->told < b->nvars && complete(b->t, b->cand[b->told]))
        tell(b->t, b->cand[b->told++]);
}

static int on_case(const kf_result *r, int index, void *vctx)
{
    batch_ctx *b = vctx;
    tuner *t = b->t;
    if (t->write_error[0])
        return 1;   /* stopped: a case that was in flight on another GPU */
    t->measured_cases++;
    if (!t->rs_borrowed) /* else the search's compiles, counted there */
        t->compile_ms += r->compile_ms;
    t->setup_ms += r->setup_ms;
    t->verify_ms += r->verify_ms;
    t->bench_ms += r->bench_ms;
    if (r->status == KF_ST_ABANDONED)
        t->abandoned_cases++;
    else if (r->status != KF_ST_OK)
        t->failed_cases++;
    else if (t->o.objective != TUNE_OBJ_TIME && !(r->energy_j > 0) && !t->energy_note[0])
        snprintf(t->energy_note, sizeof t->energy_note, "%s", r->nvml_note[0] ? r->nvml_note : "no energy figure");
    const kf_run_info *info = &t->info;
    for (int i = 0; i < t->ndev; i++)
        if (t->dev_info[i].dev.index == r->device) {
            info = &t->dev_info[i];
            t->per_device[i]++;
        }
    if (t->rf) {
        char *line = report_json(r, info);
        char e2[1024];
        if (!line || results_append(t->rf, line, e2, sizeof e2) != 0) {
            /* a result that cannot be written stops the search */
            free(line);
            clear_progress(t);
            snprintf(t->write_error, sizeof t->write_error, "%s", line ? e2 : "out of memory");
            return 1;
        }
        free(line);
    }
    int k = size_index(t, &r->shape);
    int vi = b->cases[index].variant;
    if (k >= 0 && vi >= 0 && vi < b->nvars && variant_eq(&b->vars[vi], &r->v)) {
        tuner_fill_cell(cell_at(t, b->cand[vi], k), r);
        tell_in_order(b);
    }
    /* warnings and failures as run gives them, each on a cleared line */
    clear_progress(t);
    report_warn(&t->warn, r, stderr);
    if (r->status != KF_ST_OK && r->status != KF_ST_ABANDONED && t->failures_said++ < TUNE_FAILS_SAID) {
        char label[256], st[128];
        family_of(&r->v)->label(&r->v, label, sizeof label);
        shape_text(family_of(&r->v), &r->shape, st, sizeof st);
        const char *sn = kf_status_names[r->status]; /* "skipped: ..." says it once */
        bool said = strncmp(r->message, sn, strlen(sn)) == 0 && r->message[strlen(sn)] == ':';
        fprintf(stderr, "kforge tune: %s %s: %s%s%s\n", label, st, said ? "" : sn, said ? "" : ": ", r->message);
    }
    show_progress(t, true);
    return out_of_time(t) ? 1 : 0;
}

/* Measures the cases of a batch not measured yet.  As run_session_measure. */
/* --abandon-above K: a case at size s whose first timed repetitions are
 * slower than K x the fastest verified median there so far stops (0: none
 * yet, or K 0, or an objective other than time). */
static double abandon_above(const tuner *t, int s)
{
    if (!(t->o.abandon_k > 0) || t->o.objective != TUNE_OBJ_TIME)
        return 0;
    double best = 0;
    for (int c = 0; c < t->ncand; c++) {
        const cell *x = cell_at(t, c, s);
        if (x->st == KF_ST_OK && x->median_ms > 0 && (best == 0 || x->median_ms < best))
            best = x->median_ms;
    }
    return best * t->o.abandon_k;
}

/* Appends candidate c to b's variants, and its cases not measured yet. */
static void add_candidate(tuner *t, batch_ctx *b, int c, int *nc)
{
    b->vars[b->nvars] = t->sp.variants[t->var[c]];
    b->cand[b->nvars] = c;
    for (int s = 0; s < t->nsizes; s++)
        if (cell_at(t, c, s)->st == KF_ST_COUNT)
            b->cases[(*nc)++] = (kf_case){b->nvars, t->sizes[s], abandon_above(t, s),
                                          t->o.objective == TUNE_OBJ_TIME ? t->o.abandon_k : 0};
    b->nvars++;
}

/* Every case reports through on_case; should one not have, the candidate
 * counts as failed rather than leaving the strategy waiting for it. */
static void fail_silent(tuner *t, batch_ctx *b)
{
    for (int i = 0; i < b->nvars; i++)
        if (!complete(t, b->cand[i])) {
            char label[256];
            variant_label(&b->vars[i], label, sizeof label);
            fprintf(stderr, "kforge tune: warning: no result for %s at every size; counted as failed\n", label);
            for (int s = 0; s < t->nsizes; s++)
                if (cell_at(t, b->cand[i], s)->st == KF_ST_COUNT)
                    cell_at(t, b->cand[i], s)->st = KF_ST_LAUNCH;
            tell_in_order(b);
        }
}

/* run_more_fn of a stream: up to room more candidates from the strategy. */
static int more_candidates(int room, int *nvariants, int *ncases, void *vctx)
{
    batch_ctx *b = vctx;
    tuner *t = b->t;
    if (kf_interrupted || t->write_error[0] || out_of_time(t))
        return -1;
    int k = strat_ask_more(t->st, b->ask, room);
    if (k <= 0)
        return -1; /* nothing left within the budget, pending or not */
    int nc = *ncases, before = b->nvars;
    for (int i = 0; i < k; i++)
        add_candidate(t, b, b->ask[i], &nc);
    *nvariants = b->nvars;
    *ncases = nc;
    tell_in_order(b); /* candidates complete already (resume) */
    return b->nvars - before;
}

/* The model strategy under --time, asynchronously: candidates are asked for
 * as compiler processes free (run_session_stream) and told as their results
 * come, so that no compile waits for a batch's slowest.  The sequence then
 * depends on the order results come in, as a search under --time depends on
 * time anyway.  As measure_batch: 0, 1 (stopped: out of time), -1. */
static int measure_stream(tuner *t, char *err, size_t errlen)
{
    size_t vcap = (size_t)t->ncand, ccap = vcap * (size_t)(t->nsizes > 0 ? t->nsizes : 1);
    batch_ctx b = {.t = t};
    b.vars = malloc(sizeof *b.vars * vcap);
    b.cand = malloc(sizeof *b.cand * vcap);
    b.cases = malloc(sizeof *b.cases * ccap);
    b.said = calloc(vcap, 1);
    b.ask = malloc(sizeof *b.ask * vcap);
    int rc = -1;
    if (!b.vars || !b.cand || !b.cases || !b.said || !b.ask) {
        kf_err(err, errlen, "out of memory");
    } else {
        kf_trace("the model asks as compiler processes free (a stream)");
        rc = run_session_stream(t->rs, b.vars, 0, (int)vcap, b.cases, 0, (int)ccap, &t->cfg.bench, on_case,
                                more_candidates, &b, err, errlen);
        if (rc == 0)
            fail_silent(t, &b);
    }
    free(b.vars);
    free(b.cand);
    free(b.cases);
    free(b.said);
    free(b.ask);
    return rc;
}

static int measure_batch(tuner *t, const int *batch, int k, char *err, size_t errlen)
{
    kf_variant *vars = malloc(sizeof *vars * (size_t)k);
    int *cand = malloc(sizeof *cand * (size_t)k);
    kf_case *cases = malloc(sizeof *cases * (size_t)k * (size_t)t->nsizes);
    if (!cases || !vars || !cand) {
        free(vars);
        free(cand);
        free(cases);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    batch_ctx b = {t, vars, cand, 0, cases, 0, NULL, NULL};
    int nc = 0;
    for (int i = 0; i < k; i++)
        add_candidate(t, &b, batch[i], &nc);
    /* candidates complete already (cannot happen with resume on; harmless) */
    tell_in_order(&b);
    int rc = nc ? run_session_measure(t->rs, vars, b.nvars, cases, nc, &t->cfg.bench, on_case, &b, err, errlen) : 0;
    free(cases);
    if (rc == 0)
        fail_silent(t, &b);
    free(vars);
    free(cand);
    return rc;
}

// ---------------------------------------------------------------------------
// results files

// ---------------------------------------------------------------------------
// setup

static void make_info(tuner *t)
{
    kf_run_info *info = &t->info;
    kf_iso_time(info->time, sizeof info->time);
    snprintf(info->run_id, sizeof info->run_id, "%s-%ld", info->time, (long)getpid());
    gethostname(info->host, sizeof info->host - 1);
    strbuf b = {0};
    sb_printf(&b, "%s", t->o.space);
    for (int i = 0; i < t->o.nsets; i++)
        sb_printf(&b, " --set %s", t->o.sets[i]);
    char *s = sb_take(&b);
    snprintf(info->config, sizeof info->config, "%s", s);
    free(s);
}

static void choose_strategy(tuner *t)
{
    bool limited = (t->o.budget > 0 && t->o.budget < t->ncand) || t->o.time_s > 0;
    if (t->o.strategy >= 0)
        t->kind = (strat_kind)t->o.strategy;
    else
        t->kind = !limited && t->ncand <= AUTO_EXHAUSTIVE_MAX ? STRAT_EXHAUSTIVE : DEFAULT_GUIDED;
    long long b = t->o.budget;
    if (b <= 0) {
        if (t->kind == STRAT_EXHAUSTIVE || t->kind == STRAT_RANDOM || t->o.time_s > 0)
            b = t->ncand;
        else
            b = t->ncand / 5 > 100 ? t->ncand / 5 : 100;
    }
    t->budget = (int)(b < t->ncand ? b : t->ncand);
}

// ---------------------------------------------------------------------------
// summary and database

static const char *stop_reason(const tuner *t, bool interrupted)
{
    if (interrupted)
        return "interrupted";
    if (t->write_error[0])
        return "a result could not be written";
    if (t->out_of_time)
        return "time limit";
    int e = strat_evaluations(t->st);
    if (e >= t->ncand)
        return "space exhausted";
    if (e >= t->budget)
        return "budget spent";
    return "search finished";
}

// ---------------------------------------------------------------------------

/* The session's devices: one model only; a run info per device.  KF_EXIT_* */
static int setup_devices(tuner *t)
{
    int n;
    const kf_device *d = run_session_devices(t->rs, &n);
    for (int i = 1; i < n; i++)
        if (strcmp(d[i].name, d[0].name) != 0) {
            fprintf(stderr, "kforge tune: --devices %s: GPU %d is %s and GPU %d is %s.  Tuning ranks candidates by "
                            "their times, and times of different GPU models do not compare (nor does the best "
                            "variant carry over): tune once per model, with --devices naming GPUs of that model; "
                            "each model gets its own entry in the tuning database\n",
                    t->o.ro.devices_spec, d[0].index, d[0].name, d[i].index, d[i].name);
            return KF_EXIT_USAGE;
        }
    t->dev_info = calloc((size_t)n, sizeof *t->dev_info);
    t->per_device = calloc((size_t)n, sizeof *t->per_device);
    if (!t->dev_info || !t->per_device) {
        fprintf(stderr, "kforge tune: out of memory\n");
        return KF_EXIT_USAGE;
    }
    t->ndev = n;
    for (int i = 0; i < n; i++) {
        t->dev_info[i] = t->info;
        t->dev_info[i].dev = d[i];
    }
    if (n > 1 && !t->o.quiet) {
        fprintf(stderr, "kforge tune: evaluating on %d GPUs (%s):", n, d[0].name);
        for (int i = 0; i < n; i++)
            fprintf(stderr, " %d", d[i].index);
        fprintf(stderr, "\n");
    }
    return KF_EXIT_OK;
}

/* --shard K/N: the order in which the search evaluates candidates (for
 * exhaustive and random it depends on the seed alone) is dealt out to the N
 * shards like cards; candidates of the other shards are known to this
 * search as evaluated elsewhere (failed here), unless the results file has
 * them.  KF_EXIT_* */
static int setup_shard(tuner *t, char *err, size_t errlen)
{
    int *order = malloc(sizeof *order * (size_t)t->ncand);
    t->mine = calloc((size_t)t->ncand, sizeof *t->mine);
    strategy *dry = tuner_make_strategy(t, err, errlen);
    if (!order || !t->mine || !dry) {
        if (dry || !order || !t->mine)
            kf_err(err, errlen, "out of memory");
        fprintf(stderr, "kforge tune: %s\n", err);
        free(order);
        strat_free(dry);
        return KF_EXIT_USAGE;
    }
    int n = 0, k;
    while ((k = strat_ask(dry, order + n, t->ncand - n > 0 ? t->ncand - n : 1)) > 0) {
        for (int i = 0; i < k; i++)
            strat_tell(dry, order[n + i], 0);
        n += k;
        if (n >= t->ncand)
            break;
    }
    strat_free(dry);
    for (int p = 0; p < n; p++)
        if (shard_has(&t->o.shard, p)) {
            t->mine[order[p]] = true;
            t->nmine++;
        } else {
            t->nothers++;
            if (isnan(strat_cost(t->st, order[p])) && !complete(t, order[p]))
                strat_known(t->st, order[p], INFINITY);
        }
    free(order);
    if (!t->o.quiet)
        fprintf(stderr, "kforge tune: %s: %d of the search's %d candidates are this shard's\n", t->o.shard.how,
                t->nmine, n);
    return KF_EXIT_OK;
}

const char *const tune_objective_names[TUNE_OBJ_COUNT] = {"time", "energy", "edp"};

// ---------------------------------------------------------------------------
// tune_run, step by step: the space and its candidates, the device (or the
// recorded sweep to simulate from), the strategy, what is already measured,
// the search, and how it ended.  Each step returns KF_EXIT_* and says why.

/* The space, validated before a GPU is touched, and its candidates. */
static int load_space(tuner *t, char *err, size_t errlen)
{
    int rc = tuner_load_space(t, err, errlen);
    if (rc != KF_EXIT_OK) {
        fprintf(stderr, "kforge: %s\n", err);
        return rc;
    }
    if (space_expand_counting(&t->cfg, NULL, &t->sp, err, errlen) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        return KF_EXIT_USAGE;
    }
    return tuner_build_candidates(t);
}

/* --simulate: the recorded sweep (a Kernel Tuner cache or T4 file is read
 * here, once) and its one GPU. */
static int simulated_device(tuner *t, char *err, size_t errlen)
{
    int lr = rec_load(t->o.simulate, &t->rec, err, errlen);
    if (lr < 0) {
        fprintf(stderr, "kforge tune: --simulate %s\n", err);
        return KF_EXIT_USAGE;
    }
    if (lr == 1) {
        snprintf(t->device, sizeof t->device, "%s", t->rec.device[0] ? t->rec.device : "the recorded GPU");
        return KF_EXIT_OK;
    }
    char names[4][128];
    int nd = tuner_file_devices(t->o.simulate, names, 4, err, errlen);
    if (nd < 0) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_USAGE;
    }
    if (nd > 1) {
        fprintf(stderr, "kforge tune: --simulate %s: the file holds results of several GPUs (%s, %s%s); "
                        "simulate from one GPU's sweep\n",
                t->o.simulate, names[0], names[1], nd > 2 ? ", ..." : "");
        return KF_EXIT_USAGE;
    }
    snprintf(t->device, sizeof t->device, "%s", nd ? names[0] : "unknown GPU");
    return KF_EXIT_OK;
}

/* The session open (t->rs), its first device dev: the run info, and the
 * space again with the devices' limits where they differ from those it was
 * expanded with (space_same_for_device). */
static int devices_opened(tuner *t, const kf_device *dev, char *err, size_t errlen)
{
    t->info.dev = *dev;
    t->info.have_dev = true;
    snprintf(t->device, sizeof t->device, "%s", dev->name);
    int rc = setup_devices(t);
    if (rc != KF_EXIT_OK)
        return rc;
    if (space_same_for_device(dev) && t->sp.ncases > 0)
        return KF_EXIT_OK; /* load_space's expansion and candidates stand */
    space_free(&t->sp);
    if (space_expand_counting(&t->cfg, dev, &t->sp, err, errlen) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        return KF_EXIT_USAGE;
    }
    return tuner_build_candidates(t);
}

/* The session's devices (t->info.dev), and the space again with their limits.
 * A session given already (t->rs, borrowed: the pass between sizes measures
 * on the search's workers, whose devices are open, cubins known and output
 * checks loaded) is used as it is. */
static bool want_between(const tuner *t, const char **why);

static int open_devices(tuner *t, char *err, size_t errlen)
{
    make_info(t);
    bool nodev = false;
    t->o.ro.progress = false; /* ours replaces the session's */
    if (t->rs) {
        int n;
        const kf_device *d = run_session_devices(t->rs, &n);
        if (n < 1) {
            fprintf(stderr, "kforge: no GPU left in the session\n");
            return KF_EXIT_NODEV;
        }
        run_session_counts(t->rs, &t->rs_compiled0, &t->rs_cached0);
        kf_trace("the search's GPU workers reused");
        return devices_opened(t, &d[0], err, errlen);
    }
    if (t->ncand > 0 && t->nsizes > 0) { /* every candidate's input: made while the devices open */
        t->o.ro.ahead_v = &t->sp.variants[t->var[0]];
        t->o.ro.ahead_shape = t->sizes[0];
        t->o.ro.ahead_b = &t->cfg.bench;
        t->o.ro.ahead_shapes = t->sizes;
        t->o.ro.nahead_shapes = t->nsizes;
        /* and after them the sizes the pass between them will measure:
         * with shared data, made during the search (on 4 H200s the pass's
         * 2^29 input took 0.6 s to make after the search) */
        const char *why;
        int64_t *bp = NULL;
        int nb = want_between(t, &why) ? tune_between_sizes(t, t->o.between, &bp) : 0;
        free(t->ahead_shapes);
        t->ahead_shapes = nb > 0 ? malloc(sizeof *t->ahead_shapes * (size_t)(t->nsizes + nb)) : NULL;
        if (t->ahead_shapes) {
            memcpy(t->ahead_shapes, t->sizes, sizeof *t->sizes * (size_t)t->nsizes);
            for (int i = 0; i < nb; i++) {
                t->ahead_shapes[t->nsizes + i] = t->sizes[0];
                t->ahead_shapes[t->nsizes + i].d[0] = bp[i];
            }
            t->o.ro.ahead_shapes = t->ahead_shapes;
            t->o.ro.nahead_shapes = t->nsizes + nb;
        }
        free(bp);
    }
    /* an exhaustive search measures the candidates in order: the first
     * ones compile while the devices open (the space before the devices'
     * limits: a candidate they rule out is a compile wasted, no more) */
    kf_variant *early = NULL;
    choose_strategy(t); /* again once the space has the devices' limits */
    if (t->kind == STRAT_EXHAUSTIVE && t->o.shard.n <= 1 && t->ncand > 0) {
        int k = 4 * (t->o.ro.jobs > 0 ? t->o.ro.jobs : kf_usable_cpus());
        k = k < t->ncand ? k : t->ncand;
        early = malloc(sizeof *early * (size_t)k);
        for (int c = 0; early && c < k; c++)
            early[c] = t->sp.variants[t->var[c]];
        t->o.ro.early_v = early;
        t->o.ro.nearly_v = early ? k : 0;
    }
    kf_device dev;
    memset(&dev, 0, sizeof dev);
    t->rs = run_session_new(&t->o.ro, &dev, &nodev, err, errlen);
    t->o.ro.ahead_v = NULL;
    t->o.ro.ahead_shapes = NULL;
    t->o.ro.early_v = NULL;
    t->o.ro.nearly_v = 0;
    free(early);
    if (!t->rs) {
        fprintf(stderr, "kforge: %s\n", err);
        if (nodev)
            run_nodev_hint();
        return nodev ? KF_EXIT_NODEV : KF_EXIT_USAGE;
    }
    return devices_opened(t, &dev, err, errlen);
}

static int make_strategy(tuner *t, char *err, size_t errlen)
{
    choose_strategy(t);
    if (t->o.shard.n > 1 && t->kind != STRAT_EXHAUSTIVE && t->kind != STRAT_RANDOM) {
        fprintf(stderr, "kforge tune: %s: --shard splits exhaustive and random searches only: a %s search chooses "
                        "what to measure next from what it measured, so it cannot be cut into independent "
                        "slices; evaluate it on several GPUs with --devices, or give --strategy exhaustive or "
                        "random%s\n",
                t->o.shard.how, strat_names[t->kind], t->o.shard.from_env ? " (or --shard 1/1 to run the whole "
                                                                            "search in this job)" : "");
        return KF_EXIT_USAGE;
    }
    t->st = tuner_make_strategy(t, err, errlen);
    if (!t->st) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_USAGE;
    }
    return KF_EXIT_OK;
}

/* --simulate: every candidate's results from the recorded sweep. */
static int load_simulated(tuner *t, char *err, size_t errlen)
{
    t->sim_ms = calloc((size_t)t->ncand, sizeof *t->sim_ms);
    if (!t->sim_ms) {
        fprintf(stderr, "kforge tune: out of memory\n");
        return KF_EXIT_USAGE;
    }
    int found = t->rec.nconf > 0 ? tuner_load_rec(t, t->o.simulate, err, errlen)
                                 : tuner_load_recorded(t, t->o.simulate, err, errlen);
    if (found < 0) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_USAGE;
    }
    int missing = 0;
    for (int c = 0; c < t->ncand; c++)
        missing += !complete(t, c);
    if (missing == t->ncand) {
        fprintf(stderr, "kforge tune: --simulate %s: no result for any candidate of %s (a sweep of another "
                        "space, or other --set overrides?)\n",
                t->o.simulate, t->o.space);
        return KF_EXIT_USAGE;
    }
    if (missing && !t->o.quiet)
        fprintf(stderr, "kforge tune: --simulate %s: %d of %d candidates have no result there; they count as "
                        "failed\n",
                t->o.simulate, missing, t->ncand);
    return KF_EXIT_OK;
}

/* --resume: the candidates the results file already has, measured on this
 * GPU model; the strategy knows them. */
static int resume_recorded(tuner *t, char *err, size_t errlen)
{
    /* a device or a pipe (/dev/full, /dev/null): nothing to resume from */
    struct stat rst;
    if (!t->o.resume || (stat(t->o.results, &rst) == 0 && !S_ISREG(rst.st_mode)))
        return KF_EXIT_OK;
    const char *gpu = t->info.dev.name;
    char names[4][128];
    int nd = tuner_file_devices(t->o.results, names, 4, err, errlen);
    if (nd < 0) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_USAGE;
    }
    for (int i = 0; i < nd; i++)
        if (strcmp(names[i], gpu) != 0) {
            fprintf(stderr, "kforge tune: %s holds results measured on %s, not on this GPU (%s): give "
                            "another --results file, or --no-resume to measure again\n",
                    t->o.results, names[i], gpu);
            return KF_EXIT_USAGE;
        }
    if (tuner_load_recorded(t, t->o.results, err, errlen) < 0) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_USAGE;
    }
    for (int c = 0; c < t->ncand; c++)
        if (complete(t, c)) {
            tuner_tell_strategy(t, c, true);
            t->reused_cands++;
        }
    if (t->reused_cands && !t->o.quiet)
        fprintf(stderr, "kforge tune: resuming: %d candidate%s of this space already measured in %s; they are "
                        "taken from there when the search reaches them\n",
                t->reused_cands, t->reused_cands == 1 ? "" : "s", t->o.results);
    return KF_EXIT_OK;
}

static int open_results(tuner *t, char *err, size_t errlen)
{
    t->rf = results_open(t->o.results, err, errlen);
    if (!t->rf) {
        fprintf(stderr, "kforge tune: %s\n", err);
        return KF_EXIT_IO;
    }
    return KF_EXIT_OK;
}

/* The candidates the strategy will likely ask for after this batch go to
 * the compiler processes the batch leaves idle (a guided search's batch is
 * smaller than the pool: the model strategy's 4 to 32 against 16 or more
 * CPUs), so that the next batch finds them compiled.  The search is the
 * same with or without it; only its wall time changes. */
static void compile_ahead(tuner *t)
{
    int jobs = run_session_jobs(t->rs);
    const char *no = getenv("KFORGE_NO_AHEAD");
    if ((no && *no && strcmp(no, "0") != 0) || jobs < 1)
        return;
    int *idx = malloc(sizeof *idx * (size_t)jobs);
    kf_variant *v = malloc(sizeof *v * (size_t)jobs);
    int k = idx && v ? strat_peek(t->st, idx, jobs) : 0;
    for (int i = 0; i < k; i++)
        v[i] = t->sp.variants[t->var[idx[i]]];
    char err[256];
    int n = k > 0 ? run_session_ahead(t->rs, v, k, err, sizeof err) : 0;
    if (n > 0)
        kf_trace("%d candidate%s compiled ahead", n, n == 1 ? "" : "s");
    free(idx);
    free(v);
}

/* A family whose reference is a variant run on the GPU (a custom kernel's
 * parameter set, or a kernel of its own) has the GPU worker compile it at
 * the first case, after that case's own compile: on a cold cache that is
 * one more compile (1.8 s median on Kernel Tuner's convolution) in the
 * first result's path.  Compiled ahead here, on a compiler process the first
 * batch leaves idle, the worker finds it in the cubin cache (as after
 * check --compile).  KFORGE_NO_AHEAD=1 leaves it to the worker. */
static void compile_reference_ahead(tuner *t)
{
    const char *no = getenv("KFORGE_NO_AHEAD");
    if ((no && *no && strcmp(no, "0") != 0) || t->sp.nvariants < 1 || t->nsizes < 1)
        return;
    const kf_family *f = family_of(&t->sp.variants[0]);
    kf_variant rv;
    if (!f->reference_variant || f->reference_variant(&t->sp.variants[0], &t->sizes[0], &rv) != 0)
        return;
    char err[256];
    if (run_session_ahead(t->rs, &rv, 1, err, sizeof err) > 0)
        kf_trace("the reference variant is compiled ahead");
}

typedef enum { SEARCH_DONE, SEARCH_INTERRUPTED, SEARCH_FAILED } search_end;

/* The model strategy under --time asks as compile slots free
 * (measure_stream); KFORGE_STREAM=0 keeps its batches.  Without --time a
 * seed gives one search, so batches stay. */
static bool stream_possible(const tuner *t)
{
    const char *e = getenv("KFORGE_STREAM");
    return t->kind == STRAT_MODEL && t->o.time_s > 0 && !(e && strcmp(e, "0") == 0);
}

static bool stream_search(const tuner *t) { return stream_possible(t) && !t->o.simulate; }

/* --simulate with -j N (N > 1): N compiler processes on the simulated clock,
 * each candidate taking its recorded compile and run time on one of them
 * (the GPU's share is small beside the compile in a compile-bound search;
 * it is not queued here).  1: one at a time, as recorded. */
static int sim_lanes(const tuner *t) { return t->o.ro.jobs > 1 ? t->o.ro.jobs : 1; }

/* The lane free first (its index). */
static int first_free(const double *lane, int n)
{
    int f = 0;
    for (int i = 1; i < n; i++)
        if (lane[i] < lane[f])
            f = i;
    return f;
}

/* A batch on the lanes: each candidate to the lane free first, from the
 * batch's start; the batch ends when its last finishes.  Candidates that
 * finish after --time are not evaluated (told in batch order up to the
 * first of them: the strategy sees the batch's order). */
static void simulate_batch_lanes(tuner *t, const int *batch, int k)
{
    int n = sim_lanes(t);
    double *lane = malloc(sizeof *lane * (size_t)n), *fin = malloc(sizeof *fin * (size_t)(k ? k : 1));
    if (!lane || !fin) {
        free(lane);
        free(fin);
        t->out_of_time = true;
        return;
    }
    double end = t->sim_clock_ms;
    for (int i = 0; i < n; i++)
        lane[i] = t->sim_clock_ms;
    for (int i = 0; i < k; i++) {
        int f = first_free(lane, n);
        lane[f] += t->sim_ms[batch[i]];
        fin[i] = lane[f];
        end = fin[i] > end ? fin[i] : end;
    }
    double limit = t->o.time_s > 0 ? t->o.time_s * 1e3 : INFINITY;
    for (int i = 0; i < k; i++) {
        if (fin[i] > limit) {
            t->sim_clock_ms = limit;
            t->out_of_time = true;
            break;
        }
        int before = strat_best(t->st, NULL);
        tell(t, batch[i]);
        if (strat_best(t->st, NULL) != before)
            t->sim_best_ms = fin[i];
    }
    if (!t->out_of_time)
        t->sim_clock_ms = end;
    free(lane);
    free(fin);
}

/* The model's stream on the lanes: each lane asks for a candidate when it
 * frees, and the one that finishes first is told first. */
static void simulate_stream(tuner *t)
{
    int n = sim_lanes(t);
    int *cand = malloc(sizeof *cand * (size_t)n);
    double *fin = malloc(sizeof *fin * (size_t)n);
    double limit = t->o.time_s * 1e3;
    if (!cand || !fin) {
        free(cand);
        free(fin);
        return;
    }
    t->sim_stream = true;
    for (int i = 0; i < n; i++) {
        int c;
        cand[i] = strat_ask_more(t->st, &c, 1) == 1 ? c : -1;
        fin[i] = cand[i] >= 0 ? t->sim_clock_ms + t->sim_ms[c] : INFINITY;
    }
    for (;;) {
        if (kf_interrupted)
            break;
        int f = first_free(fin, n);
        if (cand[f] < 0)
            break; /* nothing pending: the search is over */
        if (fin[f] > limit) {
            t->sim_clock_ms = limit;
            t->out_of_time = true;
            break;
        }
        t->sim_clock_ms = fin[f];
        int before = strat_best(t->st, NULL);
        tell(t, cand[f]);
        if (strat_best(t->st, NULL) != before)
            t->sim_best_ms = fin[f];
        int c;
        cand[f] = strat_ask_more(t->st, &c, 1) == 1 ? c : -1;
        fin[f] = cand[f] >= 0 ? t->sim_clock_ms + t->sim_ms[c] : INFINITY;
        show_progress(t, false);
    }
    free(cand);
    free(fin);
}

/* What a measure's answer (measure_batch, measure_stream: 0, 1 out of time,
 * -1 interrupted or failed with err) means for the search: true when it
 * ends there. */
static bool search_stops(tuner *t, int mr, search_end *end, const char *err)
{
    if (mr < 0) {
        if (kf_interrupted) {
            *end = SEARCH_INTERRUPTED;
        } else {
            clear_progress(t);
            fprintf(stderr, "kforge: %s\n", err);
            *end = SEARCH_FAILED;
        }
        return true;
    }
    if (mr == 1)
        t->out_of_time = true; /* out of time (on_case, or the session's deadline during compiles) */
    return mr == 1;
}

/* Asks the strategy for batches and measures (or looks up) them until it
 * has no more, the time is up or a signal came. */
static int search(tuner *t, search_end *end, char *err, size_t errlen)
{
    *end = SEARCH_DONE;
    t->progress = !t->o.quiet && isatty(2) && !getenv("NO_COLOR") && getenv("TERM") &&
                  strcmp(getenv("TERM"), "dumb") != 0;
    t->t0 = kf_now();
    if (t->o.time_s > 0 && !t->o.simulate)
        /* --time: a batch whose compiles outlast it ends there too */
        run_session_set_deadline(t->rs, t->t0 + t->o.time_s);
    kf_trace("search starts");
    if (!t->o.simulate)
        compile_reference_ahead(t);
    if (t->o.simulate && sim_lanes(t) > 1 && stream_possible(t)) {
        simulate_stream(t);
        return KF_EXIT_OK;
    }
    if (stream_search(t)) {
        int mr = measure_stream(t, err, errlen);
        show_progress(t, true);
        if (!search_stops(t, mr, end, err))
            out_of_time(t); /* the stream ended: the strategy had no more, or the time was up */
        run_session_set_deadline(t->rs, 0);
        return KF_EXIT_OK;
    }
    int bmax = t->kind == STRAT_EXHAUSTIVE || t->kind == STRAT_RANDOM ? ORDER_BATCH_MAX : BATCH_MAX;
    int *batch = malloc(sizeof *batch * (size_t)bmax);
    if (!batch) {
        fprintf(stderr, "kforge tune: out of memory\n");
        return KF_EXIT_USAGE;
    }
    for (;;) {
        if (kf_interrupted) {
            *end = SEARCH_INTERRUPTED;
            break;
        }
        if (out_of_time(t))
            break;
        int k = strat_ask(t->st, batch, bmax);
        if (k <= 0)
            break;
        if (t->o.simulate && sim_lanes(t) > 1) {
            simulate_batch_lanes(t, batch, k);
            show_progress(t, false);
            continue;
        }
        if (t->o.simulate) {
            /* one at a time on the simulated clock: --time stops where the recorded tuner would have */
            for (int i = 0; i < k; i++) {
                if (out_of_time(t))
                    break; /* the rest of the batch is not evaluated: the search ends here */
                int before = strat_best(t->st, NULL);
                t->sim_clock_ms += t->sim_ms[batch[i]];
                tell(t, batch[i]);
                if (strat_best(t->st, NULL) != before)
                    t->sim_best_ms = t->sim_clock_ms;
            }
            show_progress(t, false);
            continue;
        }
        compile_ahead(t);
        int mr = measure_batch(t, batch, k, err, errlen);
        show_progress(t, true);
        if (search_stops(t, mr, end, err))
            break;
    }
    free(batch);
    if (t->rs)
        run_session_set_deadline(t->rs, 0); /* what follows the search (--between) is not cut short */
    return KF_EXIT_OK;
}

/* The summary, the database, what went wrong, and the exit code. */
static int conclude(tuner *t, search_end end)
{
    bool interrupted = end == SEARCH_INTERRUPTED, failed = end == SEARCH_FAILED;
    clear_progress(t);
    report_warn_end(&t->warn, stderr);
    if (t->failures_said > TUNE_FAILS_SAID)
        fprintf(stderr, "kforge tune: %d more failed case%s (the results file's status and message say which)\n",
                t->failures_said - TUNE_FAILS_SAID, t->failures_said - TUNE_FAILS_SAID == 1 ? "" : "s");
    double wall = kf_now() - t->t0;
    kf_trace("search ends");
    const char *stopped = failed ? "error" : stop_reason(t, interrupted);
    /* the pass between the tuned sizes prints its summary only as text: a
     * JSON summary stays one document, the search's */
    if (!(t->o.between_pass && t->o.fmt != KF_FMT_TABLE && t->o.fmt != KF_FMT_MD))
        tune_print_summary(t, wall, stopped);
    /* the database holds the fastest variants: an energy search leaves it alone */
    const tune_opts *o = &t->o;
    bool db_failed =
        !o->simulate && !o->no_db && o->objective == TUNE_OBJ_TIME && tuner_record_db(t, &t->info.dev) != 0;
    if (o->objective != TUNE_OBJ_TIME && !o->quiet && !o->simulate && !o->no_db)
        fprintf(stderr, "kforge tune: --objective %s: the tuning database (fastest variants) is left alone\n",
                tune_objective_names[o->objective]);
    if (t->energy_note[0] && strat_best(t->st, NULL) < 0)
        fprintf(stderr, "kforge tune: --objective %s needs the energy of each run, from NVML: %s\n",
                tune_objective_names[o->objective], t->energy_note);
    if (t->write_error[0]) {
        fprintf(stderr, "kforge tune: %s; the search stopped (what was written is in %s)\n", t->write_error,
                o->results);
        return KF_EXIT_IO;
    }
    if (db_failed)
        return KF_EXIT_IO;
    if (interrupted && o->simulate) {
        fprintf(stderr, "kforge tune: interrupted after %d evaluations; --simulate writes no results file: there "
                        "is nothing to resume from\n",
                strat_evaluations(t->st));
        return KF_EXIT_INTERRUPT;
    }
    if (interrupted) {
        fprintf(stderr, "kforge tune: interrupted after %d evaluations; results are in %s; run the same command to "
                        "resume\n",
                strat_evaluations(t->st), o->results);
        return KF_EXIT_INTERRUPT;
    }
    if (failed)
        return KF_EXIT_NODEV;
    return strat_best(t->st, NULL) >= 0 ? KF_EXIT_OK : KF_EXIT_VARIANT;
}

/* The per-range table (ranges.h) of a search of several sizes, with the
 * sizes a --between pass measured (b; NULL: none): at each size the
 * variant best and export serve by default (pick.h: the fastest
 * deterministic, else the fastest).  On stdout with the summary's table or
 * Markdown, else on stderr (the summary is JSON there). */
void tune_print_ranges(const tuner *t, const tuner *b)
{
    const kf_family *f = kf_families[t->cfg.family];
    int ns = t->nsizes + (b ? b->nsizes : 0);
    if (f->nsizes != 1 || t->nsizes < 2 || t->o.objective != TUNE_OBJ_TIME || (t->o.quiet && !b))
        return;
    kf_range_point *p = calloc((size_t)ns, sizeof *p);
    char(*labels)[256] = calloc((size_t)ns, sizeof *labels);
    int nc = t->ncand > (b ? b->ncand : 0) ? t->ncand : b->ncand;
    pick_cand *pc = calloc((size_t)nc + 1, sizeof *pc);
    int np = 0;
    pick_policy pol = {PICK_PREFER_DET, 0};
    for (int pass = 0; p && labels && pc && pass < (b ? 2 : 1); pass++) {
        const tuner *u = pass ? b : t;
        for (int k = 0; k < u->nsizes; k++) {
            for (int c = 0; c < u->ncand; c++)
                pc[c] = tuner_pick_cand(u, c, k);
            int w = pick_serve(pc, u->ncand, &pol);
            if (w < 0)
                continue;
            const kf_variant *v = &u->sp.variants[u->var[w]];
            f->label(v, labels[np], sizeof labels[np]);
            p[np] = (kf_range_point){.n = u->sizes[k].d[0], .between = pass == 1, .label = labels[np]};
            np++;
        }
    }
    for (int i = 1; i < np; i++) /* by size (insertion: a few dozen) */
        for (int j = i; j > 0 && p[j - 1].n > p[j].n; j--) {
            kf_range_point x = p[j];
            p[j] = p[j - 1];
            p[j - 1] = x;
        }
    int m = 0; /* a size tuned and measured between (an explicit --set): the tuned one */
    for (int i = 0; i < np; i++)
        if (m == 0 || p[i].n != p[m - 1].n)
            p[m++] = p[i];
        else if (p[m - 1].between && !p[i].between)
            p[m - 1] = p[i];
    np = m;
    if (np > 0) {
        strbuf o = {0};
        int gaps = kf_range_unmeasured(p, np);
        sb_printf(&o, "\nper range of %s, what was measured and the variant best and export serve there (the fastest "
                      "deterministic one)%s:\n",
                  f->sizes[0].name, gaps ? "" : "; every range measured");
        kf_range_lines(&o, "  ", f->sizes[0].name, p, np);
        if (gaps)
            sb_printf(&o, "  %d pair%s of neighbouring tuned sizes more than %dx apart, nothing measured between: "
                          "there the nearest tuned size's variant is a guess (tune --between 1 measures them)\n",
                      gaps, gaps == 1 ? "" : "s", KF_BETWEEN_RATIO);
        bool out = t->o.fmt == KF_FMT_TABLE || t->o.fmt == KF_FMT_MD;
        fputs(o.s ? o.s : "", out ? stdout : stderr);
        fflush(out ? stdout : stderr);
        sb_free(&o);
    }
    free(p);
    free(labels);
    free(pc);
}

/* Whether the search t measures sizes between its tuned ones after it, and
 * if not by default, why (NULL: nothing to say). */
static bool want_between(const tuner *t, const char **why)
{
    const kf_family *f = kf_families[t->cfg.family];
    *why = NULL;
    if (t->o.between == 0 || t->o.simulate || t->nsizes < 2)
        return t->o.between > 0 && !t->o.simulate; /* --between K of one size: between() says so */
    if (t->o.between > 0)
        return true;
    /* the default */
    if (t->o.objective != TUNE_OBJ_TIME)
        return false;
    if (f->nsizes != 1) {
        if (f->source_hash) /* a custom kernel's family: its sizes are its own */
            *why = "sizes between the tuned ones are not measured for a custom kernel with several size axes "
                   "(tune --between: families with one size)";
        return false;
    }
    if (t->o.shard.n > 1) {
        *why = "sizes between the tuned ones are not measured in a shard (its leaders are not the search's): "
               "after kforge merge, run the whole tune again with --results set to the merged file (it measures "
               "nothing already there) to measure them";
        return false;
    }
    return true;
}

static int tune_steps(tuner *t);

/* --between K (and the default): a second, exhaustive search of the
 * leaders of the tuned sizes at the sizes between them (between.c), into
 * the same results file and database; then its cost and the per-range
 * table.  search_s: how long the first search took.  Frees t. */
static int between(tuner *t, double search_s)
{
    char path[1100], err[1024];
    snprintf(path, sizeof path, "%s.between.json", t->o.results);
    int np = 0;
    bool dflt = t->o.between < 0;
    double left = t->o.time_s > 0 ? t->o.time_s - search_s : 0;
    int br = t->nsizes < 2 ? 1 : tune_between_space(t, t->o.between, path, &np, err, sizeof err);
    tune_opts o = t->o;
    if (br == 0 && t->o.time_s > 0 && left < 1) {
        br = 1;
        snprintf(err, sizeof err, "--time %g s was spent on the search: the sizes between the tuned ones are not "
                                  "measured", t->o.time_s);
    }
    if (br < 0 && dflt) {
        /* the default pass is an extra: the search stands without it */
        fprintf(stderr, "kforge tune: the sizes between the tuned ones are not measured: %s\n", err);
        tune_print_ranges(t, NULL);
        tuner_free(t);
        return KF_EXIT_OK;
    }
    if (br != 0) {
        if (br < 0)
            fprintf(stderr, "kforge tune: %s\n", err);
        else if (!o.quiet && !(dflt && np == 0))
            fprintf(stderr, "kforge tune: %s%s\n", dflt ? "" : "--between: ",
                    t->nsizes < 2 ? "one size tuned: nothing lies between" : err);
        if (br > 0)
            tune_print_ranges(t, NULL);
        tuner_free(t);
        return br < 0 ? KF_EXIT_USAGE : KF_EXIT_OK;
    }
    /* the same options, but: that config, every candidate, no size override */
    const kf_family *f = kf_families[t->cfg.family];
    int ns = 0;
    for (int i = 0; i < o.nsets; i++) {
        size_t len = strlen(f->sizes[0].name);
        if (!(strncmp(o.sets[i], f->sizes[0].name, len) == 0 && o.sets[i][len] == '='))
            o.sets[ns++] = o.sets[i];
    }
    o.nsets = ns;
    o.n_set = false;
    o.space = path;
    o.between = 0;
    o.between_pass = true;
    o.strategy = STRAT_EXHAUSTIVE;
    o.budget = 0;
    o.time_s = left > 0 ? left : 0;
    o.top = 4;
    FILE *say = o.fmt == KF_FMT_TABLE || o.fmt == KF_FMT_MD ? stdout : stderr; /* beside a JSON summary: stderr */
    if (dflt)
        fprintf(say, "\nkforge tune: sizes between the tuned ones (the default; --between 0: none): the leaders of each "
               "tuned size at %d size%s between neighbours more than %dx apart (%s)\n",
               np, np == 1 ? "" : "s", KF_BETWEEN_RATIO, path);
    else
        fprintf(say, "\nkforge tune: --between %d: the leaders of each tuned size at %d size%s between them (%s)\n",
               t->o.between, np, np == 1 ? "" : "s", path);
    fflush(say);
    tuner b;
    memset(&b, 0, sizeof b);
    b.o = o;
    /* on the search's workers: no second start of the devices, compilers
     * and output checks (each GPU's context opened again cost seconds on 4
     * GPUs), and one teardown at the end */
    b.rs = t->rs;
    b.rs_borrowed = t->rs != NULL;
    double t0 = kf_now();
    int rc = tune_steps(&b);
    double cost = kf_now() - t0;
    if (rc == KF_EXIT_OK) {
        int cases = b.ncand * b.nsizes;
        fprintf(say, "\nsizes between the tuned ones: %d candidate%s (the leaders) at %d size%s, %d case%s (%d measured "
               "now) in %.1f s: %.0f%% of the search's %.1f s\n",
               b.ncand, b.ncand == 1 ? "" : "s", b.nsizes, b.nsizes == 1 ? "" : "s", cases, cases == 1 ? "" : "s",
               b.measured_cases, cost, search_s > 0 ? 100 * cost / search_s : 0, search_s);
        fflush(say);
        tune_print_ranges(t, &b);
    }
    tuner_free(&b);
    tuner_free(t);
    return rc;
}

/* The steps of one search (t->o given): the exit status; t is left for
 * tuner_free. */
static int tune_steps(tuner *t)
{
    char err[1024];
    bool sim = t->o.simulate != NULL;
    int rc = load_space(t, err, sizeof err);
    if (rc == KF_EXIT_OK)
        rc = sim ? simulated_device(t, err, sizeof err) : open_devices(t, err, sizeof err);
    if (rc == KF_EXIT_OK && t->sp.nskipped && !t->o.quiet)
        fprintf(stderr, "kforge tune: %s: skipped %d combination%s that cannot run (kforge check lists them)\n",
                t->cfg.path, t->sp.nskipped, t->sp.nskipped == 1 ? "" : "s");
    if (rc == KF_EXIT_OK)
        rc = make_strategy(t, err, sizeof err);
    if (rc == KF_EXIT_OK)
        rc = sim ? load_simulated(t, err, sizeof err) : resume_recorded(t, err, sizeof err);
    if (rc == KF_EXIT_OK && !sim)
        rc = open_results(t, err, sizeof err);
    if (rc == KF_EXIT_OK && t->o.shard.n > 1)
        rc = setup_shard(t, err, sizeof err);
    search_end end;
    if (rc == KF_EXIT_OK)
        rc = search(t, &end, err, sizeof err);
    if (rc == KF_EXIT_OK)
        rc = conclude(t, end);
    return rc;
}

int tune_run(const tune_opts *o)
{
    tuner t;
    memset(&t, 0, sizeof t);
    t.o = *o;
    double t0 = kf_now();
    int rc = tune_steps(&t);
    const char *why = NULL;
    if (rc == KF_EXIT_OK && !t.o.between_pass && want_between(&t, &why))
        return between(&t, kf_now() - t0);
    if (why && !t.o.quiet)
        fprintf(stderr, "kforge tune: %s\n", why);
    if (rc == KF_EXIT_OK && !t.o.between_pass && !t.o.simulate)
        tune_print_ranges(&t, NULL);
    tuner_free(&t);
    return rc;
}
