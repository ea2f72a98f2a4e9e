/*
 * candidates.c -- the tuner's state that kforge tune and kforge merge's
 * summary (replay.c) both build: the space with its overrides and tune
 * sizes, the candidates (variants that run at every size) and their cells,
 * the cells of results already in a file, and freeing it all.  The search
 * itself is tune.c's.
 */
#include "tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "family.h"
#include "param.h"
#include "results.h"
#include "resume.h"
#include "run.h"
#include "space.h"
#include "strategy.h"
#include "util.h"

void tuner_fill_cell(cell *x, const kf_result *r)
{
    x->st = r->status;
    x->median_ms = r->stats.median_ms;
    x->gbps = r->stats.gbps;
    x->pct_peak = r->stats.pct_peak;
    x->gflops = r->stats.gflops;
    x->energy_j = r->energy_j;
    x->blocks = r->blocks;
    x->launches = r->launches;
    x->deterministic = r->deterministic;
    x->has_acc = r->acc_bound > 0 && isfinite(r->acc_rel);
    x->acc_rel = r->acc_rel;
}


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

int tuner_file_devices(const char *path, char names[][128], int max, char *err, size_t errlen)
{
    devs_ctx c = {names, 0, max};
    if (results_read(path, add_device, &c, NULL, err, errlen) != 0)
        return -1;
    return c.n;
}

/* Fills the cells of every candidate recorded in path.  Returns the number
 * of cases found, or -1. */
int tuner_load_recorded(tuner *t, const char *path, char *err, size_t errlen)
{
    resume_state prev;
    resume_init(&prev);
    if (resume_load_all(&prev, path, err, errlen) != 0) {
        resume_free(&prev);
        return -1;
    }
    /* results of an older source than the kernel's now are not taken:
     * their candidates are measured again (or, simulated, missing) */
    resume_note_stale(&prev, t->merged_files ? "kforge merge" : "kforge tune", path);
    int found = 0;
    for (int c = 0; c < t->ncand && prev.ndone > 0; c++) {
        if ((c & 4095) == 0 && kf_interrupted) {
            resume_free(&prev);
            kf_err(err, errlen, "%s: interrupted", path);
            return -1;
        }
        for (int k = 0; k < t->nsizes; k++) {
            const kf_result *r = resume_find(&prev, &t->sp.variants[t->var[c]], &t->sizes[k], &t->cfg.bench,
                                             t->device);
            if (r) {
                tuner_fill_cell(cell_at(t, c, k), r);
                if (t->sim_ms)
                    t->sim_ms[c] += r->compile_ms + r->setup_ms + r->verify_ms + r->bench_ms;
                found++;
            }
        }
    }
    resume_free(&prev);
    return found;
}

/* Config, overrides, tune sizes.  KF_EXIT_*, with a message in err. */
int tuner_load_space(tuner *t, char *err, size_t errlen)
{
    if (config_load(t->o.space, &t->cfg, err, errlen) != 0)
        return KF_EXIT_USAGE;
    if (results_check_names(t->o.space, t->cfg.family, err, errlen) != 0)
        return KF_EXIT_USAGE;
    for (int i = 0; i < t->o.nsets; i++)
        if (config_set(&t->cfg, t->o.sets[i], err, errlen) != 0)
            return KF_EXIT_USAGE;
    if (t->o.timeout >= 0)
        t->cfg.bench.timeout_s = t->o.timeout;
    if (t->o.objective != TUNE_OBJ_TIME)
        t->cfg.bench.energy = true;
    t->cfg.bench.no_accuracy = !t->o.accuracy && !(t->o.max_error > 0);
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
            char e2[1024];
            int rc = config_set(&t->cfg, set, e2, sizeof e2);
            free(set);
            if (rc != 0) {
                kf_err(err, errlen, "%s: tune.%s: %s", t->cfg.path, fam->sizes[d].name, e2);
                return KF_EXIT_USAGE;
            }
        }
        t->tune_sizes = true;
    }
    return KF_EXIT_OK;
}

/* Sizes, weights and candidates from the expanded space.  KF_EXIT_* */
int tuner_build_candidates(tuner *t)
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
    if (partial && !t->merged_files)
        fprintf(stderr, "kforge tune: %s: %d variant%s left out: constraints on n exclude them at some of the sizes "
                        "tuned for\n",
                t->cfg.path, partial, partial == 1 ? "" : "s");
    if (t->ncand == 0) {
        if (!t->merged_files)
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
            if (t->merged_files)
                return KF_EXIT_USAGE;
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

void tuner_free(tuner *t)
{
    strat_free(t->st);
    results_close(t->rf);
    if (!t->rs_borrowed)
        run_session_free(t->rs);
    space_free(&t->sp);
    config_free(&t->cfg);
    free(t->sizes);
    free(t->ahead_shapes);
    free(t->weights);
    free(t->var);
    free(t->cells);
    free(t->mine);
    free(t->dev_info);
    free(t->per_device);
    free(t->sim_ms);
    rec_free(&t->rec);
}

// ---------------------------------------------------------------------------
// a recorded space (Kernel Tuner cache, T4 file) as the cells of --simulate

typedef struct {
    const rec_space *r;
    const int *map;         /* recorded parameter -> its column in key, or -1 */
    int nkey;
    const double *key;
} rec_key_ctx;

static uint64_t hash_key(const double *k, int n)
{
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (int i = 0; i < n; i++) {
        int64_t v = (int64_t)k[i];
        h ^= (uint64_t)v;
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static void conf_key(const rec_space *r, const int *map, int i, double *key)
{
    for (int p = 0; p < r->nparams; p++)
        if (map[p] >= 0)
            key[map[p]] = r->values[(size_t)i * (size_t)r->nparams + (size_t)p];
}

static bool conf_is(const void *vctx, size_t i, const void *vkey)
{
    const rec_key_ctx *c = vctx;
    double k[KF_MAX_PARAMS];
    conf_key(c->r, c->map, (int)i, k);
    return memcmp(k, vkey, sizeof *k * (size_t)c->nkey) == 0;
}

/* Whether recorded parameter p takes more than one value. */
static bool rec_varies(const rec_space *r, int p)
{
    for (int i = 1; i < r->nconf; i++)
        if (r->values[(size_t)i * (size_t)r->nparams + (size_t)p] != r->values[(size_t)p])
            return true;
    return false;
}

int tuner_load_rec(tuner *t, const char *path, char *err, size_t errlen)
{
    const rec_space *r = &t->rec;
    const kf_family *fam = kf_families[t->cfg.family];
    if (t->nsizes != 1) {
        kf_err(err, errlen, "--simulate %s: a %s file records one problem size, and %s tunes for %d; give one "
                            "(--set of the size)",
               path, r->format, t->o.space, t->nsizes);
        return -1;
    }
    int map[256], fpar[KF_MAX_PARAMS], nkey = 0;
    if (r->nparams > 256) {
        kf_err(err, errlen, "--simulate %s: more than 256 parameters", path);
        return -1;
    }
    for (int p = 0; p < r->nparams; p++) {
        map[p] = -1;
        int a = -1;
        for (int i = 0; i < fam->nparams; i++)
            if (strcmp(fam->params[i].name, r->names[p]) == 0)
                a = i;
        if (a < 0) {
            if (rec_varies(r, p)) {
                kf_err(err, errlen, "--simulate %s: the recorded parameter %s takes several values there, and %s has "
                                    "no parameter of that name: the recorded configurations are matched to the "
                                    "candidates by parameter name",
                       path, r->names[p], t->o.space);
                return -1;
            }
            continue; /* one value: nothing to match */
        }
        if (r->is_string[p]) {
            kf_err(err, errlen, "--simulate %s: the recorded parameter %s has string values; %s's parameter of that "
                                "name is a number",
                   path, r->names[p], t->o.space);
            return -1;
        }
        map[p] = nkey;
        fpar[nkey++] = a;
    }
    /* a parameter of the space that varies must be in the file */
    for (int a = 0; a < fam->nparams; a++) {
        bool mapped = false;
        for (int k = 0; k < nkey; k++)
            mapped = mapped || fpar[k] == a;
        if (mapped)
            continue;
        for (int c = 1; c < t->ncand; c++)
            if (t->sp.variants[t->var[c]].p[a] != t->sp.variants[t->var[0]].p[a]) {
                strbuf names = {0};
                for (int p = 0; p < r->nparams; p++)
                    sb_printf(&names, "%s%s", p ? ", " : "", r->names[p]);
                kf_err(err, errlen, "--simulate %s: %s's parameter %s varies, and the file has no parameter of that "
                                    "name (it has %s)",
                       path, t->o.space, fam->params[a].name, names.s ? names.s : "none");
                sb_free(&names);
                return -1;
            }
    }
    kf_index idx = {0};
    rec_key_ctx ctx = {r, map, nkey, NULL};
    double key[KF_MAX_PARAMS];
    for (int i = 0; i < r->nconf; i++) {
        conf_key(r, map, i, key);
        uint64_t h = hash_key(key, nkey);
        if (kf_index_find(&idx, h, conf_is, &ctx, key) >= 0)
            continue; /* the first of duplicates */
        if (kf_index_add(&idx, h, (size_t)i) != 0) {
            kf_index_free(&idx);
            kf_err(err, errlen, "out of memory");
            return -1;
        }
    }
    int found = 0;
    for (int c = 0; c < t->ncand; c++) {
        const kf_variant *v = &t->sp.variants[t->var[c]];
        for (int k = 0; k < nkey; k++)
            key[k] = (double)v->p[fpar[k]];
        long i = kf_index_find(&idx, hash_key(key, nkey), conf_is, &ctx, key);
        if (i < 0 || r->status[i] == REC_INVALID)
            continue;
        cell *x = cell_at(t, c, 0);
        memset(x, 0, sizeof *x);
        x->st = r->status[i] == REC_OK ? KF_ST_OK : r->status[i] == REC_COMPILE ? KF_ST_COMPILE : KF_ST_LAUNCH;
        x->median_ms = r->status[i] == REC_OK ? r->time_ms[i] : 0;
        x->deterministic = true;
        if (t->sim_ms)
            t->sim_ms[c] = r->eval_ms[i];
        found++;
    }
    kf_index_free(&idx);
    return found;
}
