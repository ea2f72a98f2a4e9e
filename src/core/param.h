/*
 * param.h -- the parameter table.  Every axis of every kernel family (and
 * every size dimension) is declared once, as a kf_param in its family's
 * table; config parsing, --set, constraints, labels, results fields,
 * resume and tuning-database keys, header export, tuning neighbours,
 * `kforge axes` and the generated CUDA's #defines all walk that table.
 *
 * A variant stores one int64 per parameter (kf_variant.p, in table order):
 * the index of the name for an enum, the number for an int, and
 * kf_grid_encode() for a grid.
 */
#ifndef KF_PARAM_H
#define KF_PARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef enum {
    KF_PK_ENUM,     /* one of names[0..count) */
    KF_PK_INT,      /* an integer lo..hi (or one of only[]) */
    KF_PK_GRID      /* "auto", a block count, {"blocks_per_sm": k} or {"waves": k} */
} kf_pkind;

typedef struct {
    const char *name;           /* JSON key, constraint identifier, CSV column */
    kf_pkind kind;
    const char *const *names;   /* ENUM: value names in enum order */
    int count;                  /* ENUM: how many */
    int64_t lo, hi;             /* INT: inclusive range */
    const int64_t *only;        /* INT: the allowed values, 0-terminated; NULL: any in lo..hi */
    bool pow2_strings;          /* INT: also "2^k" and "1<<k" strings (sizes) */
    bool optional;              /* sizes: may be left out (the family's check_shape fills it); parameters:
                                 * may be missing from results lines and database entries written
                                 * before it existed (read as the default) */
    int64_t def;                /* default value (enum index, number or grid code) */
    bool key;                   /* what is computed (dtype, op), not how: a tuning-database key */
    const char *allowed;        /* INT: what is allowed, for messages */
    const char *macro;          /* codegen: #define name of the value (KF_BS); NULL: not compiled in */
    const char *doc;            /* one line for `kforge axes` and --help */
    /* INT: the values an axis takes when a config without "variants" leaves
     * it out (a family made from a config: every listed value); NULL: the
     * default alone */
    const int64_t *sweep;
    int nsweep;
} kf_param;

/* ---- grid values ---------------------------------------------------- */

typedef enum {
    KF_GRID_AUTO,          /* enough blocks for each thread to do one tile */
    KF_GRID_BLOCKS,        /* a fixed block count (grid-stride loop) */
    KF_GRID_PER_SM,        /* value blocks per SM x SM count */
    KF_GRID_WAVES,         /* value x occupancy-calculator blocks per SM x SM count */
    KF_GRID_KIND_COUNT
} kf_grid_kind;

typedef struct {
    kf_grid_kind kind;
    int64_t value;          /* unused for AUTO */
} kf_grid;

int64_t kf_grid_encode(kf_grid g);
kf_grid kf_grid_decode(int64_t x);
#define KF_GRID_MAX_BLOCKS 2147483647LL
#define KF_GRID_MAX_PER_SM 64

/* ---- values ------------------------------------------------------------ */

/* Appends the value as JSON ("shuffle", 256, {"waves": 2}). */
void param_json(strbuf *b, const kf_param *p, int64_t x);
/* Appends the value as plain text (shuffle, 256, 2waves), for labels and CSV. */
void param_text(strbuf *b, const kf_param *p, int64_t x);
/* Whether x is a value the parameter allows. */
bool param_valid(const kf_param *p, int64_t x);
/* "a power of two..."-style description of what is allowed (for messages). */
void param_allowed(strbuf *b, const kf_param *p);

/* Index of name in the table, or -1. */
int param_find(const kf_param *t, int count, const char *name);

/* Upper-cases a value name for a macro suffix: "ldg_prefetch" -> "LDG_PREFETCH". */
void param_macro_suffix(const char *name, char *buf, size_t len);

#endif
