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
 *   { "kernel": "reduce", <axis keys>, "n": ..., "bench": {...}, "constraints": [...] }
 *   { "kernel": "reduce", "defaults": { <axis keys>, "n": ... }, "variants": [ {...}, ... ],
 *     "bench": {...} }
 * A variant object may carry "name" (a label such as "reduce6").
 */
#ifndef KF_CONFIG_H
#define KF_CONFIG_H

#include "kforge.h"

typedef enum {
    KF_AX_DTYPE, KF_AX_OP, KF_AX_ALGORITHM, KF_AX_BLOCK_SIZE, KF_AX_ELEMENTS_PER_THREAD,
    KF_AX_UNROLL, KF_AX_VECTOR_WIDTH, KF_AX_GRID, KF_AX_PASSES, KF_AX_LAYOUT,
    KF_AX_ACCUMULATOR, KF_AX_WARP_REDUCE, KF_AX_LOAD, KF_AX_COUNT
} kf_axis;

/* JSON key of each axis ("dtype", "op", ..., "load"). */
extern const char *const kf_axis_names[KF_AX_COUNT];

/* Axis values are int64: the enum index for named axes, the number for
 * numeric ones, and kf_grid_encode() for grid. */
int64_t kf_grid_encode(kf_grid g);
kf_grid kf_grid_decode(int64_t x);

typedef struct {
    int count;          /* 0: not given in this spec (the default applies) */
    int64_t *vals;
} kf_axis_values;

typedef struct {
    char name[KF_NAME_MAX];     /* "name" of the variant object, or "" */
    char where[64];             /* "variants[2]" or "" for a flat file: used in messages */
    kf_axis_values ax[KF_AX_COUNT];
    int64_t *n;
    int n_count;                /* 0: not given (error at expansion unless --set n=...) */
    char **constraints;         /* expression texts (see expr.h) */
    int n_constraints;
} kf_spec;

typedef struct {
    char path[512];             /* the file name as given ("-" for stdin: shown as "<stdin>") */
    kf_spec *specs;
    int nspecs;
    kf_bench bench;
    /* tuning ("tune" object; see tune.h): objective sizes and weights */
    int64_t *tune_n;
    double *tune_weights;       /* same length as tune_n; default 1 each */
    int tune_nn;
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

#endif
