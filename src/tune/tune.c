/*
 * tune.c -- `kforge tune`: search a space of variants for the fastest with a
 * strategy (strategy.h), measuring through the run session (run.h); and
 * `kforge best`: the best known variant from the tuning database (tunedb.h).
 *
 * The strategy sees candidates only as coordinate vectors.  This file maps
 * them to variants, measures each batch the strategy asks for with one
 * run_session_measure() call (so the compiler pool compiles the batch while
 * the GPU measures its first cases), turns the per-size results into one
 * objective per candidate, appends every case to the results file as it
 * finishes, and records the best per size in the tuning database at the
 * end -- also when interrupted.
 */
#include "tune.h"
#include "cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "report.h"
#include "resume.h"
#include "results.h"
#include "family.h"
#include "param.h"
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
/* The guided default.  Simulated on an exhaustive H100 sweep of
 * configs/tune-reduce.json at n = 2^24 (1338 candidates, 5 of them within 2%
 * of the optimum), 30 seeds, evaluations until the best was within 2%:
 *   genetic      median 84, 90th percentile 130, worst 146
 *   local -first median 48, 90th percentile 115, worst 155
 *   anneal       median 44, 90th percentile 197, worst 237
 *   local        median 70, 90th percentile 165, worst 208
 *   random       median 183, 90th percentile 493, worst 703
 * Genetic has the smallest worst case, which is what a default budget has
 * to cover; its population is also a natural batch for the compiler pool.
 * tools/tune_bench.sh repeats the comparison on any GPU. */
#define DEFAULT_GUIDED STRAT_GENETIC

static const char *const tune_help =
    "usage: kforge tune SPACE [OPTIONS]\n"
    "\n"
    "Searches the variants of SPACE (a kforge config whose axes hold lists or ranges, with\n"
    "\"constraints\") for the fastest.  Each candidate is measured like kforge run does it (compiled,\n"
    "verified, timed) at the sizes to tune for: \"tune\": {\"n\": [...], \"weights\": [...]} in SPACE,\n"
    "else every n of SPACE.  The objective of a candidate is the weighted sum of its median times\n"
    "over those sizes; a candidate that fails at any size is never chosen.  Every measured case is\n"
    "appended to the results file as it finishes; at the end (or on Ctrl-C) the fastest variant\n"
    "for each size goes to the tuning database (see kforge best --help).\n"
    "\n"
    "options:\n"
    "  --strategy S        exhaustive, random, local, anneal or genetic.  Default: exhaustive when\n"
    "                      the space has at most 2000 candidates and neither --budget nor --time\n"
    "                      limits the search, else genetic\n"
    "  --budget N          evaluate at most N candidates (default: all of them for exhaustive and\n"
    "                      random or with --time; 20% of the space, at least 100, for the others)\n"
    "  --time SEC          start no new measurement after SEC seconds\n"
    "  --seed S            seed of the strategy's random choices (default 1): the same space, seed\n"
    "                      and measurements give the same search\n"
    "  --first-improvement local: move to the first better neighbour found, not the best one\n"
    "  --set KEY=VALUE     override a config key (repeatable), as for kforge run; --set n=...\n"
    "                      also replaces the sizes of \"tune\"\n"
    "  --results FILE      JSON Lines results file (default kforge-tune.jsonl)\n"
    "  --resume            candidates already in the results file (measured on this GPU) are taken\n"
    "                      from it, not measured again (the default)\n"
    "  --no-resume         measure every candidate the search visits\n"
    "  --db DIR            tuning database (default $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,\n"
    "                      else ~/.local/share/kforge/tuning)\n"
    "  --no-db             leave the tuning database alone\n"
    "  --simulate FILE     no GPU: every candidate's times come from FILE, the results file of an\n"
    "                      earlier sweep of the same space (to compare strategies, like Kernel\n"
    "                      Tuner's simulation mode); writes no results file and no database\n"
    "  --format FMT        the summary on stdout: table (default), jsonl (one line per new best,\n"
    "                      then a summary line) or json (one object)\n"
    "  --timeout SEC       watchdog per case (bench.timeout_s; default 30)\n"
    "  --device N          GPU index (default 0)\n"
    "  --jobs N            compiler processes (default: number of CPUs)\n"
    "  --cache-dir DIR     cubin cache (default $KFORGE_CACHE_DIR or ~/.cache/kforge)\n"
    "  --no-cache          compile everything afresh\n"
    "  --lineinfo          compile with -lineinfo (for compute-sanitizer and ncu)\n"
    "  --quiet             no progress line\n"
    "\n"
    "Resuming: a search is deterministic, so running an interrupted command again replays it.\n"
    "Candidates found in the results file are not measured again (they count toward --budget when\n"
    "the search reaches them), and the search ends where the uninterrupted one would have.\n"
    "\n"
    "exit status: 0 a best variant was found; 1 every candidate evaluated failed; 2 usage or\n"
    "configuration error; 3 no usable GPU, driver or NVRTC; 130 interrupted (what was measured is\n"
    "in the results file, the best so far in the database).\n"
    "\n"
    "examples:\n"
    "  kforge tune configs/tune-reduce.json\n"
    "  kforge tune configs/tune-reduce.json --strategy anneal --budget 150 --seed 7\n"
    "  kforge tune configs/tune-reduce.json --set dtype=int32 --set op=max --time 600\n"
    "  kforge tune configs/tune-reduce.json --strategy exhaustive --results sweep.jsonl\n"
    "  kforge tune configs/tune-reduce.json --simulate sweep.jsonl --strategy local --format jsonl\n"
    "  kforge best --dtype float32 --op sum --n 2^24 --header > reduce_tuned.h\n";

// ---------------------------------------------------------------------------
// options

typedef struct {
    const char *space;
    const char *sets[64];
    int nsets;
    bool n_set;             /* a --set of a size (replaces the tune sizes) */
    int strategy;           /* -1: automatic */
    long long budget;       /* 0: automatic */
    double time_s;          /* 0: no limit */
    uint64_t seed;
    bool first_improvement;
    const char *results;
    int resume;             /* 1 (default) or 0 */
    const char *db;
    bool no_db;
    const char *simulate;
    run_opts ro;
    double timeout;         /* < 0: from the config */
    bool quiet;
    kf_format fmt;
} topts;

/* 0, 1 for --help (printed), -1 after a usage error. */
static int parse_tune_opts(int argc, char **argv, topts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = -1;
    o->seed = 1;
    o->results = "kforge-tune.jsonl";
    o->resume = 1;
    o->timeout = -1;
    o->fmt = KF_FMT_TABLE;
    cli c;
    cli_init(&c, argc, argv);
    int shared;
    const char *val;
    while (cli_next(&c)) {
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(tune_help, stdout);
            return 1;
        } else if (cli_value(&c, "--strategy", &val)) {
            o->strategy = kf_lookup(strat_names, STRAT_COUNT, val);
            if (o->strategy < 0)
                return cli_fail(&c, "--strategy: unknown strategy '%s' (allowed: exhaustive, random, local, anneal, "
                                    "genetic)",
                                val);
        } else if (cli_value(&c, "--budget", &val)) {
            if (!kf_parse_ll(val, &o->budget) || o->budget < 1 || o->budget > 100000000)
                return cli_fail(&c, "--budget: expected a number of evaluations >= 1, got '%s'", val);
        } else if (cli_value(&c, "--time", &val)) {
            if (!kf_parse_double(val, &o->time_s) || !(o->time_s > 0))
                return cli_fail(&c, "--time: expected seconds > 0, got '%s'", val);
        } else if (cli_value(&c, "--seed", &val)) {
            long long s;
            if (!kf_parse_ll(val, &s) || s < 0)
                return cli_fail(&c, "--seed: expected an integer >= 0, got '%s'", val);
            o->seed = (uint64_t)s;
        } else if (cli_flag(&c, "--first-improvement")) {
            o->first_improvement = true;
        } else if (cli_value(&c, "--set", &val)) {
            if (o->nsets == 64)
                return cli_fail(&c, "too many --set options (at most 64)");
            o->sets[o->nsets++] = val;
        } else if (cli_value(&c, "--results", &val)) {
            o->results = val;
        } else if (cli_flag(&c, "--resume")) {
            o->resume = 1;
        } else if (cli_flag(&c, "--no-resume")) {
            o->resume = 0;
        } else if (cli_value(&c, "--db", &val)) {
            o->db = val;
        } else if (cli_flag(&c, "--no-db")) {
            o->no_db = true;
        } else if (cli_value(&c, "--simulate", &val)) {
            o->simulate = val;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            if (f < 0 || f == KF_FMT_CSV)
                return cli_fail(&c, "--format: unknown format '%s' (allowed: table, jsonl, json)", val);
            o->fmt = (kf_format)f;
        } else if ((shared = cli_run_option(&c, &o->ro, &o->timeout)) != 0) {
            if (shared < 0)
                return -1;
        } else if (cli_flag(&c, "--quiet") || cli_flag(&c, "-q")) {
            o->quiet = true;
        } else if (cli_positional(&c, &val)) {
            if (o->space)
                return cli_fail(&c, "one SPACE config at a time (got '%s' and '%s')", o->space, val);
            o->space = val;
        } else {
            return cli_unknown(&c);
        }
    }
    if (c.error)
        return -1;
    if (!o->space) {
        fprintf(stderr, "kforge tune: no SPACE config given\n\n%s", tune_help);
        return -1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// the tuner

typedef struct {
    kf_status st;           /* KF_ST_COUNT: not measured */
    double median_ms, gbps, pct_peak;
    int64_t blocks;
    int launches;
    bool deterministic;
} cell;

typedef struct {
    topts o;
    kf_config cfg;
    kf_space sp;
    kf_run_info info;
    char device[128];       /* the GPU the times are from */
    /* objective: sum over sizes of weight x median time */
    int nsizes;
    kf_shape *sizes;
    double *weights;
    bool tune_sizes;        /* sizes from the config's "tune" */
    /* candidates */
    int ncand;
    int *var;               /* candidate -> index into sp.variants */
    cell *cells;            /* ncand x nsizes */
    strat_kind kind;
    int budget;
    strategy *st;
    /* measuring */
    run_session *rs;
    results_file *rf;
    int measured_cases, failed_cases, told, reused_cands;
    double t0, last_progress;
    bool progress, out_of_time;
    char write_error[1024];   /* a result could not be written: the search stopped */
} tuner;

static cell *cell_at(const tuner *t, int c, int k) { return &t->cells[(size_t)c * (size_t)t->nsizes + (size_t)k]; }

static bool complete(const tuner *t, int c)
{
    for (int k = 0; k < t->nsizes; k++)
        if (cell_at(t, c, k)->st == KF_ST_COUNT)
            return false;
    return true;
}

/* +inf unless the candidate is OK at every size. */
static double objective(const tuner *t, int c)
{
    double sum = 0;
    for (int k = 0; k < t->nsizes; k++) {
        const cell *x = cell_at(t, c, k);
        if (x->st != KF_ST_OK || !(x->median_ms > 0))
            return INFINITY;
        sum += t->weights[k] * x->median_ms;
    }
    return sum;
}

static void fill_cell(cell *x, const kf_result *r)
{
    x->st = r->status;
    x->median_ms = r->stats.median_ms;
    x->gbps = r->stats.gbps;
    x->pct_peak = r->stats.pct_peak;
    x->blocks = r->blocks;
    x->launches = r->launches;
    x->deterministic = r->deterministic;
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
    for (int c = 0; c < t->ncand; c++)
        vals[c] = axis_value(&t->sp.variants[t->var[c]], a);
    qsort(vals, (size_t)t->ncand, sizeof *vals, cmp_i64);
    int m = 0;
    for (int c = 0; c < t->ncand; c++)
        if (m == 0 || vals[c] != vals[m - 1])
            vals[m++] = vals[c];
    return m;
}

/* The strategy's view: one coordinate per axis that varies.  Numeric axes
 * are ordered (a neighbour of block_size 256 is 128 or 512); so is grid when
 * every value is of one counted kind ({"waves": 1}, {"waves": 2}, ...);
 * everything else is enumerated. */
static strategy *make_strategy(tuner *t, char *err, size_t errlen)
{
    int levels[KF_MAX_PARAMS], axis[KF_MAX_PARAMS], dims = 0;
    bool ordered[KF_MAX_PARAMS];
    int64_t *vals[KF_MAX_PARAMS] = {0};
    int *coords = NULL;
    strategy *st = NULL;
    const kf_family *fam = kf_families[t->cfg.family];
    for (int a = 0; a < fam->nparams; a++) {
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
    for (int c = 0; c < t->ncand; c++)
        for (int d = 0; d < dims; d++) {
            int64_t x = axis_value(&t->sp.variants[t->var[c]], axis[d]);
            const int64_t *p = bsearch(&x, vals[d], (size_t)levels[d], sizeof x, cmp_i64);
            coords[(size_t)c * (size_t)dims + (size_t)d] = (int)(p - vals[d]);
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

static void fmt_ms(char *buf, size_t len, double ms)
{
    if (!isfinite(ms))
        snprintf(buf, len, "-");
    else if (ms < 1)
        snprintf(buf, len, "%.4g us", ms * 1e3);
    else if (ms < 1000)
        snprintf(buf, len, "%.4g ms", ms);
    else
        snprintf(buf, len, "%.4g s", ms / 1e3);
}

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
        fmt_ms(bb, sizeof bb, best);
    char left[48] = "";
    if (t->o.time_s > 0) {
        double l = t->o.time_s - (now - t->t0);
        snprintf(left, sizeof left, ", %.0fs left", l > 0 ? l : 0);
    }
    fprintf(stderr, "\r\033[K[tune %s: %d/%d evaluated | best %s | %.0fs%s]", strat_names[t->kind],
            strat_evaluations(t->st), t->budget, bb, now - t->t0, left);
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
    if (t->o.time_s > 0 && kf_now() - t->t0 >= t->o.time_s)
        t->out_of_time = true;
    return t->out_of_time;
}

// ---------------------------------------------------------------------------
// measuring

static void tell(tuner *t, int c)
{
    t->told++;
    strat_tell(t->st, c, objective(t, c));
}

/* Evaluated candidates that failed (measured now or taken from the file). */
static int failed_candidates(const tuner *t)
{
    int f = 0;
    for (int c = 0; c < t->ncand; c++)
        f += isinf(strat_cost(t->st, c));
    return f;
}

typedef struct {
    tuner *t;
    const kf_variant *vars;
    const int *cand;        /* candidate of each variant of the batch */
    int nvars;
} batch_ctx;

static int on_case(const kf_result *r, void *vctx)
{
    batch_ctx *b = vctx;
    tuner *t = b->t;
    t->measured_cases++;
    if (r->status != KF_ST_OK)
        t->failed_cases++;
    if (t->rf) {
        char *line = report_json(r, &t->info);
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
    for (int i = 0; i < b->nvars && k >= 0; i++)
        if (variant_eq(&b->vars[i], &r->v)) {
            int c = b->cand[i];
            cell *x = cell_at(t, c, k);
            bool was_complete = complete(t, c);
            fill_cell(x, r);
            if (!was_complete && complete(t, c))
                tell(t, c);
            break;
        }
    show_progress(t, false);
    return out_of_time(t) ? 1 : 0;
}

/* Measures the cases of a batch not measured yet.  As run_session_measure. */
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
    int nv = 0, nc = 0;
    for (int i = 0; i < k; i++) {
        int c = batch[i];
        if (complete(t, c)) { /* every size recorded already (cannot happen with resume on; harmless) */
            tell(t, c);
            continue;
        }
        vars[nv] = t->sp.variants[t->var[c]];
        cand[nv] = c;
        for (int s = 0; s < t->nsizes; s++)
            if (cell_at(t, c, s)->st == KF_ST_COUNT)
                cases[nc++] = (kf_case){nv, t->sizes[s]};
        nv++;
    }
    batch_ctx b = {t, vars, cand, nv};
    int rc = nc ? run_session_measure(t->rs, vars, nv, cases, nc, &t->cfg.bench, on_case, &b, err, errlen) : 0;
    free(cases);
    if (rc == 0)
        /* Every case reports through on_case; should one not have, the
         * candidate counts as failed rather than leaving the strategy
         * waiting for it. */
        for (int i = 0; i < nv; i++)
            if (!complete(t, cand[i])) {
                char label[256];
                variant_label(&vars[i], label, sizeof label);
                fprintf(stderr, "kforge tune: warning: no result for %s at every size; counted as failed\n", label);
                for (int s = 0; s < t->nsizes; s++)
                    if (cell_at(t, cand[i], s)->st == KF_ST_COUNT)
                        cell_at(t, cand[i], s)->st = KF_ST_LAUNCH;
                tell(t, cand[i]);
            }
    free(vars);
    free(cand);
    return rc;
}

// ---------------------------------------------------------------------------
// results files

typedef struct {
    char (*names)[128];
    int n, max;
} devs_ctx;

static int add_device(const kf_result *r, void *vctx)
{
    devs_ctx *c = vctx;
    if (!r->device_name[0])
        return 0;
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->names[i], r->device_name) == 0)
            return 0;
    if (c->n < c->max)
        snprintf(c->names[c->n++], 128, "%s", r->device_name);
    return 0;
}

/* The distinct "device" names of a results file's lines (at most max). */
static int file_devices(const char *path, char names[][128], int max, char *err, size_t errlen)
{
    devs_ctx c = {names, 0, max};
    if (results_read(path, add_device, &c, NULL, err, errlen) != 0)
        return -1;
    return c.n;
}

/* Fills the cells of every candidate recorded in path.  Returns the number
 * of cases found, or -1. */
static int load_recorded(tuner *t, const char *path, char *err, size_t errlen)
{
    resume_state prev;
    resume_init(&prev);
    if (resume_load_all(&prev, path, err, errlen) != 0) {
        resume_free(&prev);
        return -1;
    }
    int found = 0;
    for (int c = 0; c < t->ncand; c++)
        for (int k = 0; k < t->nsizes; k++) {
            const kf_result *r = resume_find(&prev, &t->sp.variants[t->var[c]], &t->sizes[k], &t->cfg.bench,
                                             t->device);
            if (r) {
                fill_cell(cell_at(t, c, k), r);
                found++;
            }
        }
    resume_free(&prev);
    return found;
}

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

/* Config, overrides, tune sizes.  KF_EXIT_* */
static int load_space(tuner *t)
{
    char err[1024];
    if (config_load(t->o.space, &t->cfg, err, sizeof err) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        return KF_EXIT_USAGE;
    }
    for (int i = 0; i < t->o.nsets; i++)
        if (config_set(&t->cfg, t->o.sets[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            return KF_EXIT_USAGE;
        }
    if (t->o.timeout >= 0)
        t->cfg.bench.timeout_s = t->o.timeout;
    /* "tune": {"n": [...]} replaces the space's sizes (unless --set of a
     * size replaced them on the command line, which wins) */
    const kf_family *fam = kf_families[t->cfg.family];
    for (int i = 0; i < t->o.nsets; i++)
        for (int d = 0; d < fam->nsizes; d++) {
            size_t len = strlen(fam->sizes[d].name);
            if (strncmp(t->o.sets[i], fam->sizes[d].name, len) == 0 && t->o.sets[i][len] == '=')
                t->o.n_set = true;
        }
    if (t->cfg.tune_sz[0].count > 0 && !t->o.n_set) {
        for (int d = 0; d < fam->nsizes; d++) {
            if (t->cfg.tune_sz[d].count == 0)
                continue;
            strbuf b = {0};
            sb_printf(&b, "%s=[", fam->sizes[d].name);
            for (int i = 0; i < t->cfg.tune_sz[d].count; i++)
                sb_printf(&b, "%s%lld", i ? "," : "", (long long)t->cfg.tune_sz[d].vals[i]);
            sb_append(&b, "]");
            char *set = sb_take(&b);
            int rc = config_set(&t->cfg, set, err, sizeof err);
            free(set);
            if (rc != 0) {
                fprintf(stderr, "kforge: %s: tune.%s: %s\n", t->cfg.path, fam->sizes[d].name, err);
                return KF_EXIT_USAGE;
            }
        }
        t->tune_sizes = true;
    }
    return KF_EXIT_OK;
}

/* Sizes, weights and candidates from the expanded space.  KF_EXIT_* */
static int build_candidates(tuner *t)
{
    const kf_space *sp = &t->sp;
    free(t->sizes);
    free(t->weights);
    free(t->var);
    free(t->cells);
    t->sizes = malloc(sizeof *t->sizes * (size_t)(sp->ncases + 1));
    t->weights = malloc(sizeof *t->weights * (size_t)(sp->ncases + 1));
    t->var = malloc(sizeof *t->var * (size_t)(sp->nvariants + 1));
    int *count = calloc((size_t)sp->nvariants + 1, sizeof *count);
    if (!t->sizes || !t->weights || !t->var || !count) {
        free(count);
        fprintf(stderr, "kforge tune: out of memory\n");
        return KF_EXIT_USAGE;
    }
    t->nsizes = 0;
    for (int i = 0; i < sp->ncases; i++) /* cases are ordered by shape */
        if (t->nsizes == 0 || !shape_eq(&t->sizes[t->nsizes - 1], &sp->cases[i].shape))
            t->sizes[t->nsizes++] = sp->cases[i].shape;
    const kf_family *fam = kf_families[t->cfg.family];
    for (int k = 0; k < t->nsizes; k++) {
        t->weights[k] = 1;
        if (!t->tune_sizes || !t->cfg.tune_weights)
            continue;
        /* the shape's index in the product of the tune lists */
        int idx = 0;
        for (int d = 0; d < fam->nsizes && idx >= 0; d++) {
            const kf_axis_values *l = &t->cfg.tune_sz[d];
            if (l->count == 0)
                continue;
            int pos = -1;
            for (int i = 0; i < l->count; i++)
                if (l->vals[i] == t->sizes[k].d[d])
                    pos = i;
            idx = pos < 0 ? -1 : idx * l->count + pos;
        }
        if (idx >= 0 && idx < t->cfg.tune_nweights)
            t->weights[k] = t->cfg.tune_weights[idx];
    }
    for (int i = 0; i < sp->ncases; i++)
        count[sp->cases[i].variant]++;
    t->ncand = 0;
    int partial = 0;
    for (int v = 0; v < sp->nvariants; v++) {
        if (count[v] == t->nsizes)
            t->var[t->ncand++] = v;
        else
            partial++;
    }
    free(count);
    if (partial)
        fprintf(stderr, "kforge tune: %s: %d variant%s left out: constraints on n exclude them at some of the sizes "
                        "tuned for\n",
                t->cfg.path, partial, partial == 1 ? "" : "s");
    if (t->ncand == 0) {
        fprintf(stderr, "kforge tune: %s: no variant runs at every size tuned for\n", t->cfg.path);
        return KF_EXIT_USAGE;
    }
    /* one problem at a time: the key parameters (dtype, op) must not vary */
    const kf_variant *v0 = &sp->variants[t->var[0]];
    for (int c = 1; c < t->ncand; c++) {
        const kf_variant *v = &sp->variants[t->var[c]];
        for (int a = 0; a < fam->nparams; a++) {
            if (!fam->params[a].key || v->p[a] == v0->p[a])
                continue;
            strbuf x = {0}, y = {0};
            param_text(&x, &fam->params[a], v0->p[a]);
            param_text(&y, &fam->params[a], v->p[a]);
            fprintf(stderr, "kforge tune: %s: the space mixes %ss (%s and %s); tune one at a time, for example "
                            "--set %s=%s\n",
                    t->cfg.path, fam->params[a].name, x.s, y.s, fam->params[a].name, x.s);
            sb_free(&x);
            sb_free(&y);
            return KF_EXIT_USAGE;
        }
    }
    t->cells = malloc(sizeof *t->cells * (size_t)t->ncand * (size_t)t->nsizes);
    if (!t->cells) {
        fprintf(stderr, "kforge tune: out of memory\n");
        return KF_EXIT_USAGE;
    }
    for (size_t i = 0; i < (size_t)t->ncand * (size_t)t->nsizes; i++) {
        memset(&t->cells[i], 0, sizeof t->cells[i]);
        t->cells[i].st = KF_ST_COUNT;
    }
    return KF_EXIT_OK;
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
    if (t->out_of_time)
        return "time limit";
    int e = strat_evaluations(t->st);
    if (e >= t->ncand)
        return "space exhausted";
    if (e >= t->budget)
        return "budget spent";
    return "search finished";
}

static void sizes_text(const tuner *t, strbuf *b)
{
    const kf_family *f = kf_families[t->cfg.family];
    for (int k = 0; k < t->nsizes; k++) {
        char st[128];
        shape_short(f, &t->sizes[k], st, sizeof st);
        sb_printf(b, "%s%s", k ? ", " : "", st);
    }
}

static void print_summary(tuner *t, double wall, const char *stopped)
{
    double best_obj;
    int best = strat_best(t->st, &best_obj);
    int nt;
    const strat_improvement *tr = strat_trace(t->st, &nt);
    int evals = strat_evaluations(t->st);
    const kf_variant *bv = best >= 0 ? &t->sp.variants[t->var[best]] : NULL;
    char label[256] = "";
    if (bv)
        family_of(bv)->label(bv, label, sizeof label);
    char *vjson = bv ? tunedb_variant_json(bv) : NULL;
    strbuf sz = {0};
    sizes_text(t, &sz);
    int from_file = evals - t->told;
    int failed_cands = failed_candidates(t);

    if (t->o.fmt == KF_FMT_TABLE) {
        printf("kforge tune: %s on %s: %d candidates, objective over %s = %s%s\n", t->o.space, t->device, t->ncand,
               kf_families[t->cfg.family]->nsizes == 1 ? kf_families[t->cfg.family]->sizes[0].name : "shapes",
               sz.s ? sz.s : "", t->tune_sizes ? " (tune, weighted)" : "");
        printf("strategy %s (seed %llu): %d of %d candidates evaluated (%.1f%%) in %.1f s; stopped: %s\n",
               strat_names[t->kind], (unsigned long long)t->o.seed, evals, t->ncand, 100.0 * evals / t->ncand, wall,
               stopped);
        if (t->o.simulate)
            printf("  simulated from %s; %d of them failed\n", t->o.simulate, failed_cands);
        else
            printf("  measured now: %d candidates (%d cases, %d failed); taken from %s: %d; failed candidates: %d\n",
                   t->told, t->measured_cases, t->failed_cases, t->o.results, from_file, failed_cands);
        if (!bv) {
            printf("no candidate succeeded\n");
        } else {
            char ob[32];
            fmt_ms(ob, sizeof ob, best_obj);
            printf("best: %s%s%s (found at evaluation %d)\n", bv->name, bv->name[0] ? " " : "", label,
                   nt ? tr[nt - 1].evaluation : 0);
            printf("  objective %s (%s)\n", ob,
                   t->nsizes == 1 ? "median time" : "weighted sum of median times over the sizes");
            printf("  %16s  %10s  %8s  %6s  %8s  %8s\n", "size", "median", "GB/s", "% peak", "blocks", "launches");
            for (int k = 0; k < t->nsizes; k++) {
                const cell *x = cell_at(t, best, k);
                char m[32], st[128];
                fmt_ms(m, sizeof m, x->median_ms);
                shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
                printf("  %16s  %10s  %8.1f  %6.1f  %8lld  %8d\n", st, m, x->gbps, x->pct_peak,
                       (long long)x->blocks, x->launches);
            }
            printf("  variant: %s\n", vjson ? vjson : "");
            printf("  new best at evaluation:");
            for (int i = 0; i < nt; i++)
                printf("%s %d", i ? "," : "", tr[i].evaluation);
            printf("\n");
        }
    } else {
        strbuf b = {0};
        if (t->o.fmt == KF_FMT_JSONL)
            for (int i = 0; i < nt; i++) {
                char l[256];
                variant_label(&t->sp.variants[t->var[tr[i].idx]], l, sizeof l);
                sb_printf(&b, "{\"event\": \"improvement\", \"evaluation\": %d, \"objective_ms\": %.9g, \"label\": ",
                          tr[i].evaluation, tr[i].cost);
                sb_json_string(&b, l);
                sb_append(&b, "}\n");
            }
        sb_append(&b, "{\"event\": \"summary\", \"space\": ");
        sb_json_string(&b, t->o.space);
        sb_append(&b, ", \"device\": ");
        sb_json_string(&b, t->device);
        sb_printf(&b, ", \"strategy\": \"%s\", \"seed\": %llu, \"candidates\": %d, \"budget\": %d, \"evaluations\": %d, "
                      "\"measured_candidates\": %d, \"measured_cases\": %d, \"failed_cases\": %d, \"from_results\": %d, "
                      "\"failed_candidates\": %d, \"wall_s\": %.3f, \"stopped\": \"%s\", \"simulated\": %s, \"n\": [",
                  strat_names[t->kind], (unsigned long long)t->o.seed, t->ncand, t->budget, evals, t->told,
                  t->measured_cases, t->failed_cases, from_file, failed_cands, wall, stopped,
                  t->o.simulate ? "true" : "false");
        for (int k = 0; k < t->nsizes; k++) {
            char st[128];
            shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
            sb_printf(&b, "%s\"%s\"", k ? ", " : "", st);
        }
        sb_append(&b, "], \"weights\": [");
        for (int k = 0; k < t->nsizes; k++)
            sb_printf(&b, "%s%.9g", k ? ", " : "", t->weights[k]);
        sb_append(&b, "]");
        if (bv) {
            sb_printf(&b, ", \"best\": {\"objective_ms\": %.9g, \"evaluation\": %d, \"label\": ", best_obj,
                      nt ? tr[nt - 1].evaluation : 0);
            sb_json_string(&b, label);
            sb_printf(&b, ", \"variant\": %s, \"sizes\": [", vjson ? vjson : "{}");
            for (int k = 0; k < t->nsizes; k++) {
                const cell *x = cell_at(t, best, k);
                char st[128];
                shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
                sb_printf(&b, "%s{\"size\": \"%s\", \"median_ms\": %.9g, \"gbps\": %.6g, \"pct_peak\": %.4g, "
                              "\"blocks\": %lld, \"launches\": %d}",
                          k ? ", " : "", st, x->median_ms, x->gbps, x->pct_peak, (long long)x->blocks, x->launches);
            }
            sb_append(&b, "]}");
        } else {
            sb_append(&b, ", \"best\": null");
        }
        if (t->o.fmt == KF_FMT_JSON) {
            sb_append(&b, ", \"improvements\": [");
            for (int i = 0; i < nt; i++)
                sb_printf(&b, "%s{\"evaluation\": %d, \"objective_ms\": %.9g}", i ? ", " : "", tr[i].evaluation,
                          tr[i].cost);
            sb_append(&b, "]");
        }
        sb_append(&b, "}\n");
        char *s = sb_take(&b);
        fputs(s, stdout);
        free(s);
    }
    fflush(stdout);
    free(vjson);
    sb_free(&sz);
}

/* The fastest evaluated variant at each size goes to the database.
 * 0, or -1 after a message (a database that cannot be updated is an
 * error, never a silent success). */
static int update_db(tuner *t, const kf_device *dev)
{
    char dir[PATH_MAX], err[1024];
    if (t->o.db)
        snprintf(dir, sizeof dir, "%s", t->o.db);
    else if (tunedb_default_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "kforge tune: no tuning database directory (set KFORGE_DB or HOME, or give --db or --no-db)\n");
        return -1;
    }
    tunedb_entry *es = calloc((size_t)t->nsizes * 2 + 1, sizeof *es);
    if (!es)
        return -1;
    int ne = 0;
    char date[32];
    kf_iso_time(date, sizeof date);
    /* the fastest, and the fastest deterministic one when that is another
     * (kforge best --deterministic, kforge export --deterministic) */
    for (int k2 = 0; k2 < t->nsizes * 2; k2++) {
        int k = k2 / 2;
        bool det_only = k2 % 2;
        int pick = -1;
        for (int c = 0; c < t->ncand; c++) {
            const cell *x = cell_at(t, c, k);
            if (isnan(strat_cost(t->st, c)) || x->st != KF_ST_OK || !(x->median_ms > 0) ||
                (det_only && !x->deterministic))
                continue;
            if (pick < 0 || x->median_ms < cell_at(t, pick, k)->median_ms)
                pick = c;
        }
        if (pick < 0 || (det_only && ne > 0 && es[ne - 1].deterministic && shape_eq(&es[ne - 1].shape, &t->sizes[k])))
            continue;
        const cell *x = cell_at(t, pick, k);
        tunedb_entry *e = &es[ne++];
        e->v = t->sp.variants[t->var[pick]];
        e->v.name[0] = '\0'; /* a label of the space, not of the variant */
        e->shape = t->sizes[k];
        e->deterministic = x->deterministic;
        e->median_ms = x->median_ms;
        e->gbps = x->gbps;
        e->pct_peak = x->pct_peak;
        e->blocks = x->blocks;
        e->launches = x->launches;
        e->dev = *dev;
        snprintf(e->kforge, sizeof e->kforge, "%s", KF_VERSION);
        snprintf(e->date, sizeof e->date, "%s", date);
        snprintf(e->how, sizeof e->how, "kforge tune %.300s --strategy %s --seed %llu: fastest at this size of %d "
                                        "evaluated candidates (of %d)",
                 t->info.config, strat_names[t->kind], (unsigned long long)t->o.seed, strat_evaluations(t->st),
                 t->ncand);
    }
    int rc = 0;
    if (ne > 0) {
        int w = tunedb_update(dir, es, ne, err, sizeof err);
        char stem[256];
        tunedb_stem(dev->name, stem, sizeof stem);
        if (w < 0) {
            fprintf(stderr, "kforge tune: tuning database not updated: %s\n", err);
            rc = -1;
        } else if (!t->o.quiet) {
            fprintf(stderr, "kforge tune: tuning database %s/%s.json: %d of %d entr%s updated%s\n", dir, stem, w, ne,
                    ne == 1 ? "y" : "ies", w < ne ? " (it already held faster variants)" : "");
        }
    }
    free(es);
    return rc;
}

// ---------------------------------------------------------------------------

static void tuner_free(tuner *t)
{
    strat_free(t->st);
    results_close(t->rf);
    run_session_free(t->rs);
    space_free(&t->sp);
    config_free(&t->cfg);
    free(t->sizes);
    free(t->weights);
    free(t->var);
    free(t->cells);
}

int tune_main(int argc, char **argv)
{
    tuner t;
    memset(&t, 0, sizeof t);
    int pr = parse_tune_opts(argc, argv, &t.o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    char err[1024];
    int rc = load_space(&t);
    if (rc != KF_EXIT_OK)
        goto out;
    /* everything is validated before a GPU is touched */
    if (space_expand(&t.cfg, NULL, &t.sp, err, sizeof err) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    if ((rc = build_candidates(&t)) != KF_EXIT_OK)
        goto out;

    kf_device dev;
    memset(&dev, 0, sizeof dev);
    if (t.o.simulate) {
        char names[4][128];
        int nd = file_devices(t.o.simulate, names, 4, err, sizeof err);
        if (nd < 0) {
            fprintf(stderr, "kforge tune: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        if (nd > 1) {
            fprintf(stderr, "kforge tune: --simulate %s: the file holds results of several GPUs (%s, %s%s); "
                            "simulate from one GPU's sweep\n",
                    t.o.simulate, names[0], names[1], nd > 2 ? ", ..." : "");
            rc = KF_EXIT_USAGE;
            goto out;
        }
        snprintf(t.device, sizeof t.device, "%s", nd ? names[0] : "unknown GPU");
    } else {
        make_info(&t);
        bool nodev = false;
        t.o.ro.progress = false; /* ours replaces the session's */
        t.rs = run_session_new(&t.o.ro, &dev, &nodev, err, sizeof err);
        if (!t.rs) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = nodev ? KF_EXIT_NODEV : KF_EXIT_USAGE;
            goto out;
        }
        t.info.dev = dev;
        t.info.have_dev = true;
        snprintf(t.device, sizeof t.device, "%s", dev.name);
        /* again, with the device's limits */
        space_free(&t.sp);
        if (space_expand(&t.cfg, &dev, &t.sp, err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        if ((rc = build_candidates(&t)) != KF_EXIT_OK)
            goto out;
    }
    if (t.sp.nskipped && !t.o.quiet)
        fprintf(stderr, "kforge tune: %s: skipped %d combination%s that cannot run (kforge check lists them)\n",
                t.cfg.path, t.sp.nskipped, t.sp.nskipped == 1 ? "" : "s");

    choose_strategy(&t);
    t.st = make_strategy(&t, err, sizeof err);
    if (!t.st) {
        fprintf(stderr, "kforge tune: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }

    if (t.o.simulate) {
        int found = load_recorded(&t, t.o.simulate, err, sizeof err);
        if (found < 0) {
            fprintf(stderr, "kforge tune: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        int missing = 0;
        for (int c = 0; c < t.ncand; c++)
            missing += !complete(&t, c);
        if (missing == t.ncand) {
            fprintf(stderr, "kforge tune: --simulate %s: no result for any candidate of %s (a sweep of another "
                            "space, or other --set overrides?)\n",
                    t.o.simulate, t.o.space);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        if (missing && !t.o.quiet)
            fprintf(stderr, "kforge tune: --simulate %s: %d of %d candidates have no result there; they count as "
                            "failed\n",
                    t.o.simulate, missing, t.ncand);
    } else {
        if (t.o.resume) {
            char names[4][128];
            int nd = file_devices(t.o.results, names, 4, err, sizeof err);
            if (nd < 0) {
                fprintf(stderr, "kforge tune: %s\n", err);
                rc = KF_EXIT_USAGE;
                goto out;
            }
            for (int i = 0; i < nd; i++)
                if (strcmp(names[i], dev.name) != 0) {
                    fprintf(stderr, "kforge tune: %s holds results measured on %s, not on this GPU (%s): give "
                                    "another --results file, or --no-resume to measure again\n",
                            t.o.results, names[i], dev.name);
                    rc = KF_EXIT_USAGE;
                    goto out;
                }
            if (load_recorded(&t, t.o.results, err, sizeof err) < 0) {
                fprintf(stderr, "kforge tune: %s\n", err);
                rc = KF_EXIT_USAGE;
                goto out;
            }
            for (int c = 0; c < t.ncand; c++)
                if (complete(&t, c)) {
                    strat_known(t.st, c, objective(&t, c));
                    t.reused_cands++;
                }
            if (t.reused_cands && !t.o.quiet)
                fprintf(stderr, "kforge tune: resuming: %d candidate%s of this space already measured in %s; they are "
                                "taken from there when the search reaches them\n",
                        t.reused_cands, t.reused_cands == 1 ? "" : "s", t.o.results);
        }
        t.rf = results_open(t.o.results, err, sizeof err);
        if (!t.rf) {
            fprintf(stderr, "kforge tune: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
    }

    t.progress = !t.o.quiet && isatty(2) && !getenv("NO_COLOR") && getenv("TERM") &&
                 strcmp(getenv("TERM"), "dumb") != 0;
    t.t0 = kf_now();
    bool interrupted = false, failed = false;
    int bmax = t.kind == STRAT_EXHAUSTIVE || t.kind == STRAT_RANDOM ? ORDER_BATCH_MAX : BATCH_MAX;
    int *batch = malloc(sizeof *batch * (size_t)bmax);
    if (!batch) {
        fprintf(stderr, "kforge tune: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (;;) {
        if (kf_interrupted) {
            interrupted = true;
            break;
        }
        if (out_of_time(&t))
            break;
        int k = strat_ask(t.st, batch, bmax);
        if (k <= 0)
            break;
        if (t.o.simulate) {
            for (int i = 0; i < k; i++)
                tell(&t, batch[i]);
            show_progress(&t, false);
            continue;
        }
        int mr = measure_batch(&t, batch, k, err, sizeof err);
        show_progress(&t, true);
        if (mr < 0) {
            if (kf_interrupted) {
                interrupted = true;
            } else {
                clear_progress(&t);
                fprintf(stderr, "kforge: %s\n", err);
                failed = true;
            }
            break;
        }
        if (mr == 1)
            break; /* out of time */
    }
    free(batch);
    clear_progress(&t);
    double wall = kf_now() - t.t0;
    const char *stopped = failed ? "error" : stop_reason(&t, interrupted);
    print_summary(&t, wall, stopped);
    bool db_failed = !t.o.simulate && !t.o.no_db && update_db(&t, &dev) != 0;
    if (t.write_error[0]) {
        fprintf(stderr, "kforge tune: %s; the search stopped (what was written is in %s)\n", t.write_error,
                t.o.results);
        rc = KF_EXIT_IO;
    } else if (db_failed) {
        rc = KF_EXIT_IO;
    } else if (interrupted) {
        fprintf(stderr, "kforge tune: interrupted after %d evaluations; results are in %s; run the same command to "
                        "resume\n",
                strat_evaluations(t.st), t.o.results);
        rc = KF_EXIT_INTERRUPT;
    } else if (failed) {
        rc = KF_EXIT_NODEV;
    } else {
        rc = strat_best(t.st, NULL) >= 0 ? KF_EXIT_OK : KF_EXIT_VARIANT;
    }
out:
    tuner_free(&t);
    return rc;
}

