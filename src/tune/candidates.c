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
    run_session_free(t->rs);
    space_free(&t->sp);
    config_free(&t->cfg);
    free(t->sizes);
    free(t->weights);
    free(t->var);
    free(t->cells);
    free(t->mine);
    free(t->dev_info);
    free(t->per_device);
}
