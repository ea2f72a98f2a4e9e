/*
 * tune.h -- autotuning: `kforge tune SPACE` searches a space of variants with
 * a strategy (strategy.h), measuring through the run session, and records
 * the best per size in the tuning database (tunedb.h).
 */
#ifndef KF_TUNE_H
#define KF_TUNE_H

#include "kforge.h"
#include "report.h"

int tune_main(int argc, char **argv);

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
