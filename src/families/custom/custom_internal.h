/*
 * custom_internal.h -- what the three files of the `custom` family maker
 * share (not for use outside src/families/custom/):
 *
 *   spec.c    makes a family from the config's "custom" object: the spec
 *             parsed and checked, the reference kernel of its own, the
 *             constants, the .npy files (custom_spec_make, custom_spec_probe)
 *   custom.c  the family's callbacks at run time and the registration
 *             (custom_family_make, the one public function)
 *   export.c  kforge export of a custom kernel (custom_export_source)
 *
 * The family's data is a cfam, whose kf_family is its first member and
 * whose fam.ext points back at it (cf_of).
 */
#ifndef KF_CUSTOM_INTERNAL_H
#define KF_CUSTOM_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "expr.h"
#include "family.h"
#include "util.h"

#define MAX_ARGS 16
#define MAX_CONSTRAINTS 64
#define CUSTOM_MAX_OPTIONS 16
#define CUSTOM_OPTION_MAX 128

typedef enum { FILL_RANDOM, FILL_ZEROS, FILL_ONES, FILL_IOTA, FILL_CONSTANT, FILL_NPY } fill_kind;

typedef struct {
    char name[64];
    bool scalar;
    kf_dtype dtype;
    kf_role role;               /* buffers */
    int buf;                    /* buffers: index in the buffer set */
    kf_expr *length;            /* buffers: elements */
    fill_kind fill;
    double lo, hi;              /* random: the range; constant: lo */
    kf_expr *value;             /* scalars */
    void *npy;                  /* fill {"npy": FILE}: the file's elements, npy_elems of them */
    int64_t npy_elems;
    void *expect;               /* reference {"expected": {NAME: FILE}}: this output's answer */
    int64_t expect_elems;
    double rtol, atol;          /* float outputs: its tolerance (its own "tolerance", else the config-wide one) */
    char *length_text, *value_text; /* the expressions as written (a reference kernel of its own parses them again) */
} carg;

typedef struct cfam {
    kf_family fam;
    char config_dir[PATH_MAX];  /* where the config is: files it names are relative to it */
    char *identity;             /* spec text + source path: the same family if equal */
    char *spec_json;            /* the "custom" object's text as given (custom_config_members) */
    char source_path[PATH_MAX];
    char config_name[256];      /* the config's file name, for messages (a T1 file's too) */
    char *source_text;
    char include_dir[PATH_MAX]; /* the source's folder, absolute ("": none): NVRTC's include path (deps.h) */
    char source_hash[33];       /* the source, its headers and the reference kernel's (fam.source_hash) */
    char entry[256];
    char famname[KF_NAME_MAX];
    const char *entries[1];
    kf_param params[KF_MAX_PARAMS];
    int64_t *values[KF_MAX_PARAMS];
    int nvalues[KF_MAX_PARAMS];
    char *pnames[KF_MAX_PARAMS], *pallowed[KF_MAX_PARAMS];
    kf_param sizes[KF_MAX_DIMS];
    char *snames[KF_MAX_DIMS];
    carg args[MAX_ARGS];
    int nargs, nbufs;
    carg consts[KF_MAX_CONSTANTS];  /* "constants": module variables filled before any launch */
    int nconsts;
    kf_expr *grid[3], *block[3], *smem, *bytes, *flops;
    kf_expr *cons[MAX_CONSTRAINTS];
    char *cons_text[MAX_CONSTRAINTS];
    int ncons;
    int64_t refp[KF_MAX_PARAMS];
    bool ref_given;          /* the config has a "reference" (else: default_reference) */
    /* "reference": {"source", "entry", ...}: a kernel of its own, made a
     * family of its own (the companion: its params, each at one value, its
     * launch, the same args), registered beside this one; NULL otherwise */
    struct cfam *ref;
    double rtol, atol;
    bool deterministic;
    int index;
    /* "compiler_options" (kt.c): each an NVRTC option, with {param}s, on
     * where its expression holds (NULL: always) */
    char *copt[CUSTOM_MAX_OPTIONS];
    kf_expr *copt_when[CUSTOM_MAX_OPTIONS];
    int ncopt;
    /* "size_macros" (kt.c): sizes the kernel sees as macros, each at the
     * one value it is compiled for (smac_size: the size's index) */
    int smac_size[KF_MAX_DIMS];
    int64_t smac_value[KF_MAX_DIMS];
    int nsmac;
} cfam;

static inline const cfam *cf_of(const kf_variant *v) { return (const cfam *)family_of(v)->ext; }

// ---------------------------------------------------------------------------
// spec.c

/* The family of the "custom" object spec_json (config_path: the config,
 * whose folder the files it names are relative to), not yet registered:
 * malloc'd, the caller frees it with custom_cfam_free; NULL and why. */
cfam *custom_spec_make(const char *spec_json, const char *config_path, char *err, size_t errlen);

/* Parameter-only expressions at the first listed values, once c is
 * registered: 0, or -1 and why. */
int custom_spec_probe(const cfam *c, char *err, size_t errlen);

/* kf_family.config_members of a custom kernel: "kernel": "custom" and its
 * "custom" object, every file it names (source, reference.source, each
 * fill's and reference.expected's .npy) relative to dir. */
char *custom_config_members(const kf_family *f, const char *dir, bool *outside, char *err, size_t errlen);

/* Frees c, its reference kernel's family and everything they own; NULL is
 * a no-op. */
void custom_cfam_free(cfam *c);

/* Whether s is a C identifier of under 64 characters. */
bool custom_ident(const char *s);

// ---------------------------------------------------------------------------
// custom.c

/* c->fam: the family interface over c (its callbacks, names and tables),
 * flops included. */
void custom_fam_init(cfam *c);

/* An expression at v and s (s NULL: no sizes), as an integer: 0, or -1 and
 * why (prefixed by what). */
int custom_eval_int(const kf_expr *e, const kf_variant *v, const kf_shape *s, const char *what, int64_t *out,
                    char *why, size_t whylen);

/* The buffer index of the first out or inout argument, -1 if none. */
int custom_first_output(const cfam *c);

// ---------------------------------------------------------------------------
// kt.c: Kernel Tuner's conventions

/* "compiler_options" (j NULL: none) into c, once c's params are known: 0,
 * or -1 and why (the field named). */
int custom_parse_options(cfam *c, const cJSON *j, char *err, size_t errlen);

/* The options that hold for v, as RTC_OPTION_DIRECTIVE lines into b. */
void custom_write_options(const cfam *c, const kf_variant *v, strbuf *b);
/* Whether every compiler option of c that v turns on gives an option kforge
 * passes to NVRTC: 0, or -1 and why (the variant cannot run). */
int custom_check_options(const cfam *c, const kf_variant *v, char *why, size_t whylen);

void custom_free_options(cfam *c);

/* "size_macros" (j NULL: none) into c, once c's sizes are known: 0, or -1
 * and why (the field named). */
int custom_parse_size_macros(cfam *c, const cJSON *j, char *err, size_t errlen);

/* "#define SIZE VALUE" for each, into b. */
void custom_write_size_macros(const cfam *c, strbuf *b);

/* c's source text for v: Kernel Tuner's "#pragma unroll NAME" line left
 * out (blank) where a param NAME containing "loop_unroll_factor" is 0. */
void custom_write_source_text(const cfam *c, const kf_variant *v, strbuf *b);

/* A case at another value of a size macro's size: -1 and why; else 0. */
int custom_check_size_macros(const cfam *c, const kf_shape *s, char *why, size_t whylen);

// ---------------------------------------------------------------------------
// export.c

/* The family's export_source (family.h): a malloc'd header, NULL and why. */
char *custom_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen);

#endif
