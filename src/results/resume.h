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
 * family, parameters, shape, GPU model, bench settings) matches, and it ran
 * the current source: a user's kernel's line records the hash of its source
 * and headers (family.h: source_hash); one with another hash, or none, is
 * left out and counted (stale, unhashed), so the case is measured again.
 * The built-in families' source is the binary's own: their lines carry no
 * hash and are taken as before.
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
    /* recorded results left out: of another source than the current one
     * (a user's kernel whose source or headers changed since: family.h's
     * source_hash), and of a user's kernel with no source hash (a kforge
     * before it was recorded: the source they ran is not known) */
    int stale, unhashed;
} resume_state;

void resume_init(resume_state *rs);

/* Whether a recorded result ran the current source: 0 yes (or a built-in
 * family, whose lines carry no hash), 1 another source (stale), 2 a user's
 * kernel's line with no hash (unhashed).  Resume, --simulate and merge
 * leave out every line that is not 0. */
int resume_source_check(const kf_result *r);

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

/* A line for stderr (prefix: "kforge tune", ...) that says how many
 * recorded results of path were left out as of another source, when any
 * were. */
void resume_note_stale(const resume_state *rs, const char *prefix, const char *path);
void resume_free(resume_state *rs);

#endif
