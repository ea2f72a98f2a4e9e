/*
 * config.h -- JSON configuration files to structs.  cJSON stays inside
 * config.c: nothing here exposes it.
 *
 * A file describes one or more *specs*.  Each spec gives, for every axis,
 * a list of values (a single value is a list of one; a range object
 * {"range": [lo, hi], "step": "pow2" | k} is expanded here), a list of
 * sizes n, and constraint expressions.  space.c expands specs into variants.
 *
 * Accepted top-level shapes:
 *   { "kernel": FAMILY, <axis keys>, <size keys>, "bench": {...}, "constraints": [...] }
 *   { "kernel": FAMILY, "defaults": { <axis keys>, <size keys> }, "variants": [ {...}, ... ],
 *     "bench": {...} }
 * A variant object may carry "name" (a label such as "reduce6").  The axis
 * and size keys are those of the family's parameter table (family.h);
 * "kernel" defaults to "reduce".
 */
#ifndef KF_CONFIG_H
#define KF_CONFIG_H

#include "family.h"
#include "kforge.h"

typedef struct {
    int count;          /* 0: not given in this spec (the default applies) */
    int64_t *vals;
} kf_axis_values;

typedef struct {
    char name[KF_NAME_MAX];     /* "name" of the variant object, or "" */
    char where[64];             /* "variants[2]" or "" for a flat file: used in messages */
    int line;                   /* where that variant object starts in the file (0: not known) */
    kf_axis_values ax[KF_MAX_PARAMS];   /* by the family's parameter index */
    kf_axis_values sz[KF_MAX_DIMS];     /* sizes, by dimension; count 0: not given */
    char **constraints;         /* expression texts (see expr.h) */
    int n_constraints;
} kf_spec;

typedef struct {
    char path[512];             /* the file name as given ("-" for stdin: shown as "<stdin>") */
    int family;                 /* "kernel" (family.h; default reduce) */
    kf_spec *specs;
    int nspecs;
    kf_bench bench;
    /* tuning ("tune" object; see tune.h): sizes to tune for (a list per
     * dimension, as in a spec) and one weight per shape of their product */
    kf_axis_values tune_sz[KF_MAX_DIMS];
    double *tune_weights;       /* NULL: 1 each */
    int tune_nweights;
    uint64_t content_hash;      /* of the file's bytes (command identity) */
    char sets[256];             /* the --set overrides of axes applied (" --set op=xor"), for messages */
} kf_config;

/* Parses text (len bytes) read from path.  Returns 0, or -1 with a message in
 * err that names the file, the field path (e.g. "variants[1].block_size"),
 * what was given and what is allowed; for malformed JSON, the line and column.
 * Unknown keys are errors with a "did you mean" suggestion. */
int config_parse(const char *text, size_t len, const char *path, kf_config *out,
                 char *err, size_t errlen);

/* Reads and parses a file ("-" reads stdin). */
int config_load(const char *path, kf_config *out, char *err, size_t errlen);

/* Applies one --set override "key=value" to every spec (or to the bench
 * settings for "bench.key=value").  value is parsed as JSON if it is valid
 * JSON (so lists and objects work: block_size=[64,128]), otherwise taken as
 * a bare string (dtype=float64).  The same validation as in a file applies;
 * messages name "--set key". */
int config_set(kf_config *cfg, const char *assignment, char *err, size_t errlen);

void config_free(kf_config *cfg);

/* Whether s is a variant's name as a config's "name" takes it (letters,
 * digits, _ - . +, under KF_NAME_MAX bytes): results lines are held to it. */
bool config_valid_name(const char *s);

/* One value of parameter p from a cJSON item (passed as void *: cJSON stays
 * inside the config and results modules), with the same validation as a
 * config; messages name what ("results line") and the field.  The one
 * decoder of parameter values: results files and the tuning database use it. */
int config_param_value(const kf_param *p, const void *json, const char *what, int64_t *out, char *err,
                       size_t errlen);

/* Every key --set takes for this config's family (for suggestions and
 * completion): axes, sizes, "constraints", "bench.KEY".  NULL-terminated,
 * static storage until the next call. */
const char *const *config_set_keys(int family);

#endif
