/*
 * family.h -- the kernel-family interface.  Everything a family knows and
 * the engine does not: its parameter table and size dimensions, which
 * combinations can run, launch planning, CUDA code generation from its
 * templates in kernel_src/<family>/, the CPU reference and the comparison
 * of its outputs, the bytes it moves, and a time model for the fake GPU.
 *
 * A family is one folder under src/families/ that defines one kf_family,
 * plus one line in the registry (family.c: kf_families[]).
 */
#ifndef KF_FAMILY_H
#define KF_FAMILY_H

#include <stdint.h>

#include "kforge.h"
#include "param.h"

/* A launch plan: what the engine needs to know, plus the family's own
 * data (the passes and grids) in priv. */
typedef struct {
    int launches;               /* kernel launches per run */
    int64_t blocks;             /* blocks of the first launch */
    int64_t workspace_bytes;    /* device scratch the launches need */
    int64_t depth;              /* most operations an input goes through (float tolerance) */
    bool deterministic;         /* same bits run to run */
    _Alignas(max_align_t) unsigned char priv[1024]; /* family-private (cast to the family's plan struct: aligned for it) */
} kf_plan_info;

/* The engine's launcher, handed to a family's enqueue (exec/bench.c). */
typedef struct kf_launcher kf_launcher;
int kf_launch(kf_launcher *l, int64_t grid, int block, void **args);

/* Device buffers of one run. */
typedef struct {
    uint64_t in;                /* the input (offset applied) */
    uint64_t out;               /* outputs(shape) elements */
    uint64_t ws;                /* workspace_bytes, initialised by workspace_init */
} kf_buffers;

/* One tuned choice handed to a family's export_source: a variant and the
 * shape it was tuned for, with what was measured there. */
typedef struct {
    kf_variant v;               /* resolved; name empty */
    kf_shape shape;
    double median_ms, gbps;
    bool deterministic;         /* run-to-run deterministic */
} kf_export_entry;

/* Where an export comes from, for the header's opening comment. */
typedef struct {
    const char *device;         /* the GPU model the entries were tuned on */
    int cc_major, cc_minor, sms;
    const char *command;        /* the kforge command line that wrote it */
    const char *date;           /* ISO 8601 UTC */
    bool deterministic_only;    /* only deterministic variants were eligible */
} kf_export_info;

/* Test hook (KFORGE_PLANT, compile/codegen.h): where a planted coverage
 * fault strikes in one case. */
typedef struct {
    int64_t elem;               /* input element dropped, or read from elem + 1; -1: none */
    bool shift;                 /* elem is read from elem + 1 (else dropped) */
    int64_t unit;               /* double_block: the block; row_shift: the row; -1: none */
    int64_t unwritten;          /* an output the faulted kernel never writes; -1: none */
} kf_plant;

typedef struct kf_family {
    const char *name;           /* "reduce": the config's "kernel" */
    const char *doc;            /* one line */
    const kf_param *params;     /* the variant axes */
    int nparams;
    const kf_param *sizes;      /* the size dimensions ("n"; "rows", "cols", "row_stride") */
    int nsizes;
    int p_dtype, p_op;          /* indices of the dtype and op parameters */
    int p_block;                /* index of the threads-per-block parameter */
    const char *entry;          /* the kernel's extern "C" name */
    /* constraint identifiers beyond params and sizes ("tile", "vector_bytes", ...) */
    const char *const *derived;
    int nderived;
    double (*derived_value)(const kf_variant *v, int which);

    /* Turns "auto" choices into concrete ones (passes auto -> atomic, ...). */
    void (*resolve)(kf_variant *v);
    /* 0 if v can run (dev may be NULL: sm_90 limits), else -1 and why. */
    int (*check)(const kf_variant *v, const kf_device *dev, char *why, size_t whylen);
    /* Normalises a shape (row_stride 0 -> cols) and checks it against v:
     * 0, or -1 and why. */
    int (*check_shape)(const kf_variant *v, kf_shape *s, char *why, size_t whylen);
    /* A one-line label of the parameters that matter. */
    void (*label)(const kf_variant *v, char *buf, size_t len);
    /* CUDA source (malloc'd): a comment naming every compile-time
     * parameter, the #defines, the templates.  Depends only on what is
     * compiled in, so variants that differ only in launch-time values
     * share a cubin. */
    char *(*source)(const kf_variant *v, char *err, size_t errlen);

    /* Plans the launches for shape s on a GPU of sms multiprocessors where
     * occupancy blocks fit per SM: 0, or -1. */
    int (*plan)(const kf_variant *v, const kf_shape *s, int sms, int occupancy, kf_plan_info *p);
    int64_t (*input_elems)(const kf_shape *s);   /* elements filled (padding included) */
    int64_t (*outputs)(const kf_shape *s);       /* output elements */
    double (*bytes)(const kf_shape *s, size_t elem_size); /* bytes a run must move (GB/s) */
    /* The workspace's first contents (host image of workspace_bytes). */
    void (*workspace_init)(const kf_variant *v, const kf_plan_info *p, void *ws);
    /* Enqueues one whole run (every launch). */
    int (*enqueue)(kf_launcher *l, const kf_variant *v, const kf_shape *s, const kf_plan_info *p,
                   const kf_buffers *b);

    /* Reference outputs from the host input (aux: one double per output,
     * e.g. sum |x| for the float bound). */
    void (*reference)(const kf_variant *v, const kf_shape *s, const void *in, void *ref, double *aux);
    /* Compares outputs; fills r->gpu_value, ref_value, abs_err, tolerance
     * from the worst output; returns how many outputs are wrong.  exact:
     * every output must equal its reference bit for bit (the exact data,
     * verify_fill_exact); else floats within the rounding bound. */
    int64_t (*compare)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r);
    /* Optional test hooks (KFORGE_PLANT).  plant: where the coverage fault
     * `kind` (kf_plant_kind) strikes on shape s, for an input whose first
     * element lies `offset` elements past a 256-byte boundary: 0 and spec,
     * or -1 and why it has no place in this case (no vector tail, one
     * block, ...).  plant_outputs: the output-level part of the fault (a
     * block counted twice, a row written to the next), applied to the
     * reference outputs `out` of `in`. */
    int (*plant)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset, int kind,
                 kf_plant *spec, char *why, size_t whylen);
    void (*plant_outputs)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                          const kf_plant *spec, const void *in, void *out);
    /* Fake GPU: a smooth time model with one best point (ms). */
    double (*fake_ms)(const kf_variant *v, const kf_shape *s, const kf_device *d, const kf_plan_info *p);

    /* Optional (NULL: `kforge export` says the family has no export yet).
     * kforge export: one self-contained CUDA C++17 header (no kforge
     * headers, no JIT; compiles with nvcc, and its kernels with NVRTC)
     * holding the variants of entries e[0..n) -- one dtype and op, one
     * entry per shape, sorted by size -- and a host API named
     * kforge_<family>_<dtype>_<op> that dispatches on the shape to the entry
     * tuned for the nearest one and plans its launches on the device it
     * runs on (multiprocessors, occupancy).  malloc'd, or NULL with a
     * message. */
    char *(*export_source)(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen);
} kf_family;

/* The registry. */
extern const kf_family *const kf_families[];
extern const int kf_nfamilies;

/* The family called name, or -1. */
int family_find(const char *name);
static inline const kf_family *family_of(const kf_variant *v) { return kf_families[v->family]; }

/* Every parameter at its default. */
void variant_defaults(kf_variant *v, int family);
kf_dtype variant_dtype(const kf_variant *v);
kf_op variant_op(const kf_variant *v);
/* The acc_dtype parameter (auto where the family has none), and the type
 * the variant accumulates in: its outputs' type. */
kf_acc_type variant_acc(const kf_variant *v);
kf_dtype variant_acc_dtype(const kf_variant *v);
/* Sets acc_dtype to a, resolved for the variant's dtype (auto: float32 for
 * bfloat16 and float16), where the family has the axis. */
void variant_set_acc(kf_variant *v, kf_acc_type a);
/* Same family, name and parameters. */
bool variant_eq(const kf_variant *a, const kf_variant *b);
uint64_t variant_hash(const kf_variant *v);
/* "name" or the family's label. */
void variant_label(const kf_variant *v, char *buf, size_t len);
/* Every parameter as a JSON object in config syntax, kernel first:
 * {"kernel": "reduce", "dtype": "float32", ...}. */
void variant_json(strbuf *b, const kf_variant *v);

/* Shapes. */
int64_t shape_elems(const kf_variant *v, const kf_shape *s);
bool shape_eq(const kf_shape *a, const kf_shape *b);
/* "n=1048576" or "rows=64 cols=1024" (an optional size equal to the one
 * before it -- row_stride = cols -- is left out; else "row_stride=1025") */
void shape_text(const kf_family *f, const kf_shape *s, char *buf, size_t len);
/* "1048576", "64x1024", or "64x1024/1025" with a row_stride of 1025. */
void shape_short(const kf_family *f, const kf_shape *s, char *buf, size_t len);
/* The shape as a JSON object of numbers, every size dimension in table
 * order: {"n": 1048576} or {"rows": 64, "cols": 1024, "row_stride": 1024}
 * (what --format json and jsonl write for a size). */
void shape_json(strbuf *b, const kf_family *f, const kf_shape *s);

/* The nearest tuned shape, as kforge best (tunedb_lookup) and the dispatch
 * of an exported header (kforge export) both decide it.  shape_log_distance:
 * the distance of a tuned shape t from the shape q asked for on a log scale,
 * |ln t - ln q| summed over the size dimensions given in both (an optional
 * one that either leaves 0 is left out), and t's log size over the same
 * dimensions; false if a required dimension is missing from one of them.
 * shape_nearer: whether a candidate (dist, size, ms) beats the pick so far
 * (pick_dist INFINITY: none yet): nearer, or as near up to rounding
 * (1e-9) and larger, or as large up to rounding and faster.  2^24 is as
 * near to 2^20 as to 2^28, and goes to 2^28. */
bool shape_log_distance(const kf_family *f, const kf_shape *t, const kf_shape *q, double *dist, double *size);
bool shape_nearer(double dist, double size, double ms, double pick_dist, double pick_size, double pick_ms);

#endif
