/*
 * resume.h -- picking up an interrupted run.  While a run is in progress,
 * <results>.state records who is running (the configs and overrides) and
 * where in the results file that run began.  A run that ends normally
 * removes it.  When the same command finds the state file of an
 * interrupted run of the same configs, it takes the cases recorded since
 * then from the results file instead of measuring them again.
 */
#ifndef KF_RESUME_H
#define KF_RESUME_H

#include <limits.h>

#include "kforge.h"

typedef struct {
    char state_path[PATH_MAX];
    bool active;            /* a state file of ours exists */
    kf_result *done;        /* results taken over */
    char **keys;            /* report_case_key of each */
    int ndone, cap;
    int *table;             /* open-addressing index into done (-1 empty) */
    int tsize;
} resume_state;

void resume_init(resume_state *rs);

/* mode: -1 resume only if an interrupted run of the same identity left a
 * state file; 1 resume from any recorded case (whole file) if no state file
 * matches; 0 never.  Then records this run as in progress. */
int resume_begin(resume_state *rs, const char *results_path, const char *identity, int mode, char *err,
                 size_t errlen);

/* Loads every recorded case of a results file (for tune --resume). */
int resume_load_all(resume_state *rs, const char *results_path, char *err, size_t errlen);

/* The recorded result of (v, n), or NULL. */
const kf_result *resume_find(const resume_state *rs, const kf_variant *v, int64_t n);

/* The run finished: remove the state file. */
void resume_end(resume_state *rs);
void resume_free(resume_state *rs);

#endif
