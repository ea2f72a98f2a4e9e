/*
 * resume.h -- picking up an interrupted run.  While a command is in
 * progress, <results>.state holds one line per running command identity
 * (its configs' paths and contents, overrides and options, hashed) with the
 * offset in the results file where it began; a command that ends normally
 * removes its own line, and only that.  The same command run again after
 * an interruption finds its line and takes the cases recorded since then
 * from the results file, instead of measuring them again.
 *
 * A recorded case is taken only when its whole identity (results.h:
 * family, parameters, shape, GPU model, bench settings) matches.
 */
#ifndef KF_RESUME_H
#define KF_RESUME_H

#include <limits.h>

#include "kforge.h"
#include "util.h"

typedef struct {
    char state_path[PATH_MAX];
    char id[33];            /* our identity's hash */
    bool active;            /* our line is in the state file */
    kf_result *done;        /* results taken over: done[i] for keys.keys[i] */
    kf_strset keys;         /* results_key_of each */
    int ndone, cap;
} resume_state;

void resume_init(resume_state *rs);

/* mode: -1 resume only if an interrupted run of the same identity left its
 * line; 1 resume from any recorded case (whole file) if none did; 0 never.
 * Then records this command as in progress.  -1 with a message if the
 * state file cannot be read or written. */
int resume_begin(resume_state *rs, const char *results_path, const char *identity, int mode, char *err,
                 size_t errlen);

/* Loads every recorded case of a results file (for tune --resume). */
int resume_load_all(resume_state *rs, const char *results_path, char *err, size_t errlen);

/* The recorded result of this case, or NULL. */
const kf_result *resume_find(const resume_state *rs, const kf_variant *v, const kf_shape *s, const kf_bench *b,
                             const char *device);

/* The command finished: remove our line (and the file when it is empty). */
void resume_end(resume_state *rs);
void resume_free(resume_state *rs);

#endif
