/*
 * tune.h -- autotuning: `kforge tune SPACE` searches a space of variants with
 * a strategy (strategy.h), measuring through the run session, and records
 * the best per size in the tuning database (tunedb.h).
 */
#ifndef KF_TUNE_H
#define KF_TUNE_H

#include "kforge.h"
#include "report.h"

#include <stdbool.h>
#include <stdint.h>

#include "run.h"     /* run_opts, kf_shard: the options run and tune share */

/* What a candidate is ranked by (issue 14): the weighted sum over the sizes
 * of its median time, of the energy of one run, or of their product. */
enum { TUNE_OBJ_TIME, TUNE_OBJ_ENERGY, TUNE_OBJ_EDP, TUNE_OBJ_COUNT };
extern const char *const tune_objective_names[TUNE_OBJ_COUNT];

/* What `kforge tune` was asked (src/cmd/tune.c parses the command line). */
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
    kf_shard shard;
    double timeout;         /* < 0: from the config */
    bool quiet;
    kf_format fmt;
    bool t4;                /* --format t4 (src/cmd/tune.c: the summary left out, the results as T4) */
    int objective;          /* TUNE_OBJ_* */
    int top;                /* the summary ranks the best this many at each size (0: none) */
    double abandon_k;       /* --abandon-above K (0: never abandon) */
    bool accuracy;          /* --accuracy: each candidate also runs on the realistic data */
    int between;            /* --between K: the leaders of neighbouring sizes measured at K sizes between them;
                             * -1 (the command's default): 1 between neighbours more than 2x apart */
    bool between_pass;      /* this search is the pass between the tuned sizes (its entries say so) */
    double max_error;       /* --max-error E (> 0; sets accuracy): a candidate whose relative error on the
                             * realistic data is above E at some size is never the best */
} tune_opts;

/* Runs the search: the exit status (KF_EXIT_*), messages on stderr. */
int tune_run(const tune_opts *o);

/* kforge merge: the summary `kforge tune` prints, for one space on one GPU
 * model, from results already measured (the merged files of its shards),
 * and the tuning database updated from them. */
typedef struct {
    const char *config;     /* the results lines' "config": SPACE [--set KEY=VALUE]... */
    const char *results;    /* a results file holding the merged cases */
    const char *label;      /* the merged files, as the summary names them */
    int nfiles;
    kf_device dev;          /* the GPU model (name, cc, SMs, driver, NVRTC) */
    const char *db;         /* NULL: the default directory */
    bool no_db;
    kf_format fmt;          /* table, jsonl or json */
    bool quiet;
} tune_replay_args;

/* 0 when the summary was printed (*rc: KF_EXIT_OK, KF_EXIT_VARIANT when
 * no candidate succeeded, KF_EXIT_IO when the database could not be
 * updated); -1 with a message when the space cannot be rebuilt from the
 * config (nothing printed: rank from the results alone). */
int tune_replay(const tune_replay_args *a, int *rc, char *err, size_t errlen);

#endif
