/*
 * replay.c -- kforge merge's summary: the space of a tune rebuilt from its
 * config, its candidates' results taken from the merged shards' files, and
 * the summary and database entries a tune would have made of them.
 */
#include "tuner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Splits "SPACE --set A --set B" (make_info's form) into o. */
static int split_config(char *cfg, tune_opts *o)
{
    char *p = strstr(cfg, " --set ");
    o->space = cfg;
    while (p) {
        *p = '\0';
        p += strlen(" --set ");
        if (o->nsets == 64)
            return -1;
        o->sets[o->nsets++] = p;
        p = strstr(p, " --set ");
    }
    return 0;
}

int tune_replay(const tune_replay_args *a, int *rc, char *err, size_t errlen)
{
    tuner t;
    memset(&t, 0, sizeof t);
    int ret = -1;
    int *order = NULL;
    char *cfg = strdup(a->config);
    t.o.strategy = STRAT_EXHAUSTIVE;
    t.o.seed = 1;
    t.o.timeout = -1;
    t.o.fmt = a->fmt;
    t.o.quiet = a->quiet;
    t.o.top = 5;
    t.o.db = a->db;
    t.o.no_db = a->no_db;
    t.o.results = a->label;
    t.merged_files = a->nfiles;
    snprintf(t.info.config, sizeof t.info.config, "%s", a->config);
    if (!cfg || split_config(cfg, &t.o) != 0) {
        kf_err(err, errlen, "cannot read the command in the results' \"config\"");
        goto out;
    }
    if (tuner_load_space(&t, err, errlen) != KF_EXIT_OK)
        goto out;
    if (space_expand(&t.cfg, NULL, &t.sp, err, errlen) != 0)
        goto out;
    if (tuner_build_candidates(&t) != KF_EXIT_OK) {
        kf_err(err, errlen, "%s is not one tuning space (several problems, or no candidate)", t.o.space);
        goto out;
    }
    snprintf(t.device, sizeof t.device, "%s", a->dev.name);
    if (tuner_load_recorded(&t, a->results, err, errlen) < 0)
        goto out;
    /* the candidates with results, in the space's order */
    t.space_cands = t.ncand;
    int m = 0;
    for (int c = 0; c < t.ncand; c++)
        if (complete(&t, c)) {
            t.var[m] = t.var[c];
            memmove(cell_at(&t, m, 0), cell_at(&t, c, 0), sizeof *t.cells * (size_t)t.nsizes);
            m++;
        }
    if (m == 0) {
        kf_err(err, errlen, "no candidate of %s has results at every size (was it changed since?)", t.o.space);
        goto out;
    }
    t.ncand = m;
    t.kind = STRAT_EXHAUSTIVE;
    t.budget = m;
    t.st = tuner_make_strategy(&t, err, errlen);
    order = malloc(sizeof *order * (size_t)m);
    if (!t.st || !order) {
        if (t.st)
            kf_err(err, errlen, "out of memory");
        goto out;
    }
    for (int c = 0; c < m; c++)
        tuner_tell_strategy(&t, c, true);
    while (strat_ask(t.st, order, m) > 0)
        ; /* every cost is known: nothing is handed out */
    ret = 0;
    tune_print_summary(&t, 0, "merged");
    bool db_failed = !a->no_db && tuner_record_db(&t, &a->dev) != 0;
    tune_print_ranges(&t, NULL); /* as tune prints it: what was measured per range */
    *rc = db_failed ? KF_EXIT_IO : strat_best(t.st, NULL) >= 0 ? KF_EXIT_OK : KF_EXIT_VARIANT;
out:
    free(order);
    tuner_free(&t);
    free(cfg);
    return ret;
}
