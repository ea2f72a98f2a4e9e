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

/* ---- kernels and launches ---------------------------------------------
 * A family's enqueue launches its kernels (entries[k], in the module its
 * source compiles to) through the engine's launcher, in as many launches as
 * a run needs, each with a 1- to 3-D grid and block and dynamic shared
 * memory.  The launcher checks every launch against the device's limits
 * (threads per block, dimensions, shared memory, opting in above 48 KiB)
 * first: one that cannot run makes the case "skipped" with the reason,
 * never a launch error.  On the fake GPU the same checks run and nothing
 * executes. */
typedef struct {
    unsigned x, y, z;
} kf_dim3;

typedef struct kf_launcher kf_launcher;
/* Launches kernel `kernel` (an index into the family's entries): 0, or -1
 * (the case's status and message say why). */
int kf_launch_kernel(kf_launcher *l, int kernel, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args);
/* The common case: kernel 0, a 1-D grid of blocks of `block` threads, no
 * dynamic shared memory. */
int kf_launch(kf_launcher *l, int64_t grid, int block, void **args);

/* ---- buffers -----------------------------------------------------------
 * What one run reads and writes, as the family describes it for a variant,
 * a shape and a plan.  The engine allocates every buffer on the device and
 * hands their addresses to enqueue in this order; it fills the inputs (the
 * family's fill), poisons the outputs before every checked run, lays the
 * scratch buffers' first contents down (scratch_init) and compares every
 * output buffer with the family's reference. */
typedef enum {
    KF_ROLE_IN,         /* read: filled by the family's fill, never written */
    KF_ROLE_OUT,        /* written: compared with the reference */
    KF_ROLE_INOUT,      /* filled, then written: compared; its first contents are restored before a checked run */
    KF_ROLE_SCRATCH,    /* the kernels' own: scratch_init (NULL: zeros) before every checked run */
    KF_ROLE_COUNT
} kf_role;
extern const char *const kf_role_names[KF_ROLE_COUNT];

#define KF_MAX_BUFFERS 16

typedef struct {
    const char *name;           /* "in", "out", "ws", "x", ...: messages name it */
    kf_role role;
    int dtype;                  /* a kf_dtype, or -1 (bytes) */
    size_t elem_bytes;          /* bytes per element */
    int64_t elems;              /* length in elements */
    bool offset;                /* in: starts bench.offset elements past an aligned address (alignment tests) */
} kf_buffer;

typedef struct {
    int n;
    kf_buffer b[KF_MAX_BUFFERS];
} kf_buffer_set;

/* Device addresses of one run's buffers, in the family's order. */
typedef struct {
    uint64_t at[KF_MAX_BUFFERS];
} kf_buffers;

/* ---- module constants --------------------------------------------------
 * Variables of the compiled module (a __constant__ array, say: Kernel
 * Tuner's cmem_args) that the engine fills before any launch.  After it
 * loads a module -- the candidate's, and a reference variant's -- it looks
 * each one up by name (cuModuleGetGlobal), checks that the module's
 * variable holds at least elems * elem_bytes bytes (else the case fails
 * with both sizes), fills the contents on the host (constant_fill) and
 * copies them in.  The fake GPU, which loads no module, makes the contents
 * the same way and writes them nowhere. */
typedef struct {
    const char *name;           /* the variable's name in the module (file scope, unmangled) */
    int dtype;                  /* a kf_dtype, or -1 (bytes) */
    size_t elem_bytes;          /* bytes per element */
    int64_t elems;              /* elements the engine writes from the variable's start */
} kf_constant;

#define KF_MAX_CONSTANTS 8

typedef struct {
    int n;
    kf_constant c[KF_MAX_CONSTANTS];
} kf_constant_set;

/* One tuned choice handed to a family's export_source: a variant and the
 * shape it was tuned for, with what was measured there. */
typedef struct {
    kf_variant v;               /* resolved; name empty */
    kf_shape shape;
    double median_ms, gbps;
    bool deterministic;         /* run-to-run deterministic */
    bool has_acc;               /* acc_rel measured */
    double acc_rel;             /* relative error on the realistic data (tunedb_entry) */
    bool between;               /* measured by tune --between between tuned sizes, not tuned there */
} kf_export_entry;

/* Where an export comes from, for the header's opening comment. */
typedef struct {
    const char *device;         /* the GPU model the entries were tuned on */
    int cc_major, cc_minor, sms;
    const char *command;        /* the kforge command line that wrote it */
    const char *date;           /* ISO 8601 UTC */
    bool deterministic_only;    /* only deterministic variants were eligible */
    /* Out, unless NULL: export_source appends the name of what the header
     * defines for its callers (kforge_reduce_bfloat16_sum;
     * kforge_transpose_lookup), the very spelling of the header, for
     * kforge export's message. */
    strbuf *api;
    const char *path;           /* where the header goes (-o), NULL: standard output */
    /* Optional: a line the family has for the user, which kforge export
     * prints on stderr (what the header leaves out, and why); the family
     * writes it (NUL-terminated, at most notelen bytes) or leaves it "". */
    char *note;
    size_t notelen;
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
    int p_block;                /* the threads-per-block axis of a 1-D kernel (-1: block_shape says) */
    const char *const *entries; /* the kernels' extern "C" names: kf_launch_kernel's `kernel` indexes them */
    int nentries;
    /* constraint identifiers beyond params and sizes ("tile", "vector_bytes", ...) */
    const char *const *derived;
    int nderived;
    double (*derived_value)(const kf_variant *v, int which);

    /* Turns "auto" choices into concrete ones (passes auto -> atomic, ...). */
    void (*resolve)(kf_variant *v);
    /* 0 if v can run (dev may be NULL: sm_90 limits), else -1 and why.
     * It reads dev->max_threads_per_block alone (1024 without a device):
     * space_same_for_device relies on that. */
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

    /* Optional: the block of kernel 0 and its dynamic shared memory, from
     * which the occupancy that plan() gets is worked out (NULL: p_block
     * threads in x, none). */
    void (*block_shape)(const kf_variant *v, kf_dim3 *block, unsigned *smem);
    /* Plans the launches for shape s on a GPU of sms multiprocessors where
     * occupancy blocks of kernel 0 fit per SM: 0, or -1. */
    int (*plan)(const kf_variant *v, const kf_shape *s, int sms, int occupancy, kf_plan_info *p);
    /* The buffers of a run (see kf_buffer).  p may be NULL when only the
     * inputs and outputs are wanted (scratch lengths are then 0). */
    void (*buffers)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set);
    /* Fills input (or inout) buffer `buf`, `elems` elements at host: the
     * exact data, on which pass or fail is decided (every output of a
     * correct kernel equals its reference bit for bit), or with exact false
     * the realistic data of the accuracy run.  The same seed gives the same
     * data; the contents may depend only on the key axes (kf_param.key). */
    void (*fill)(const kf_variant *v, const kf_shape *s, int buf, uint64_t seed, bool exact, void *host, int64_t elems);
    /* Optional: the first contents of scratch buffer `buf` (NULL: zeros). */
    void (*scratch_init)(const kf_variant *v, const kf_plan_info *p, int buf, void *host);
    double (*bytes)(const kf_variant *v, const kf_shape *s); /* bytes a run must move (GB/s) */
    /* Optional: the floating-point operations one run performs (GFLOP/s and
     * % of the device's FP32 peak); NULL: the family counts none, and its
     * results have no such figure (null, never 0). */
    double (*flops)(const kf_variant *v, const kf_shape *s);
    /* Enqueues one whole run (every launch). */
    int (*enqueue)(kf_launcher *l, const kf_variant *v, const kf_shape *s, const kf_plan_info *p,
                   const kf_buffers *b);

    /* Reference outputs from the host inputs: in[i] is input (or inout)
     * buffer i's contents, ref[i] receives output (or inout) buffer i's,
     * aux[i] one double per element of output i for the family's compare
     * (e.g. sum |x| for a float bound); entries of other roles are NULL. */
    void (*reference)(const kf_variant *v, const kf_shape *s, const void *const *in, void *const *ref,
                      double *const *aux);
    /* Compares output buffer `buf`; fills r->gpu_value, ref_value, abs_err,
     * tolerance and, optionally, worst_at ("y[3][17]") from the worst (or
     * first wrong) element; returns how many
     * elements are wrong.  exact: every element must equal its reference
     * bit for bit (the exact data); else within the family's tolerance. */
    int64_t (*compare)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int buf, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r);
    /* Optional: output buffer `buf` of a float dtype is right when every
     * element lies within *atol + *rtol |ref| of the reference (a NaN only
     * where the reference has one), which is what compare says of it, and
     * the figures compare gives are the largest error's ("%.9g" values,
     * tolerance atol + rtol |ref| there).  Lets the GPU check outputs that
     * are not the reference's bits without a pass on the host.  Without
     * it (or false), only the reference's bits pass on the GPU; any other
     * output goes to compare on the host. */
    bool (*tolerance)(const kf_variant *v, int buf, double *rtol, double *atol);
    /* Optional: whether a run on the realistic data gives accuracy figures
     * (acc_err, acc_bound) for v. */
    bool (*accuracy)(const kf_variant *v);
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
    /* The planted fault's model: how many outputs the faulted kernel gets
     * wrong on the inputs in[], r filled as compare does; -1 out of memory. */
    int64_t (*plant_check)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                           const kf_plant *spec, const void *const *in, void *const *ref, double *const *aux,
                           bool exact, kf_result *r);
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

    /* Optional: the reference is a variant run on the GPU (a family made
     * from a user's kernel: no CPU reference exists), of the same family or
     * of another registered one (a reference kernel of its own: a naive
     * kernel in its own source, with its own launch, taking the same
     * buffers and arguments).  ref receives the variant whose outputs, on
     * the same inputs, are the reference of v's at s: 0, or -1 (none).  The
     * GPU worker compiles it with its family's source, plans and launches
     * it with its family's plan and enqueue, runs it once per data key
     * (outputs poisoned twice, differently: both runs must agree) and keeps
     * its outputs in place of reference()'s, which the fake GPU still uses;
     * check --compile compiles it, gen --reference prints its source. */
    int (*reference_variant)(const kf_variant *v, const kf_shape *s, kf_variant *ref);
    /* Optional: the size in bytes of each argument kernel `kernel` takes,
     * in order, as enqueue passes them (at most max): their count.  The GPU
     * worker checks them against the compiled kernel's parameters
     * (cuFuncGetParamInfo) before any launch: a mismatch is a launch error
     * that names the argument, never a corrupted launch. */
    int (*arg_sizes)(const kf_variant *v, int kernel, size_t *sizes, int max);
    /* Optional: argument i of kernel `kernel` as the config gives it, for
     * that message ("args[3] \"s\" (a float64 scalar) in triad.json"). */
    void (*arg_text)(const kf_variant *v, int kernel, int i, char *buf, size_t len);
    /* Optional: the module constants (kf_constant) v's kernels read at s;
     * set->n 0 (or constants NULL): none.  constant_fill writes constant
     * `which`'s elems elements at host.  Lengths and contents may depend
     * only on the shape and the seed (the same seed, the same contents),
     * never on other parameters: a reference variant and every candidate
     * read the same constants, and the reference outputs are kept per data
     * key (data.h). */
    void (*constants)(const kf_variant *v, const kf_shape *s, kf_constant_set *set);
    void (*constant_fill)(const kf_variant *v, const kf_shape *s, int which, uint64_t seed, void *host,
                          int64_t elems);

    /* Optional: the hash (32 hex digits) of what its source reads that is
     * not part of kforge: a user's source file, the headers it includes
     * and a reference kernel's (compile/deps.h).  Each result records it
     * ("source_hash"); a recorded result or database entry with another
     * hash is of an older source: resume, --simulate and merge leave it,
     * best and export say so.  NULL or "": the source is kforge's own
     * templates, embedded in the binary (the built-in families). */
    const char *source_hash;

    /* Optional (a family made from a config: custom): the members of a
     * config that make the family again, as JSON text ("\"kernel\":
     * \"custom\", \"custom\": {...}"), every file it names relative to
     * the folder dir, where that config is to be read (kforge best writes
     * one that kforge run takes).  *outside: a file lies outside dir (its
     * name has a .. component: kforge run needs KFORGE_ALLOW_OUTSIDE_FILES=1
     * for it).  NULL and why. */
    char *(*config_members)(const struct kf_family *f, const char *dir, bool *outside, char *err, size_t errlen);

    /* Optional (custom): the constraints the family's check applies, those
     * without sizes among them; a space of more than 10 million
     * combinations checks them as soon as their parameters are bound, to
     * leave out whole parts of the product at once (space.c). */
    struct kf_expr *const *constraints;
    int nconstraints;

    const void *ext;            /* the family's own (reduction-like families: their reduction_ops) */
} kf_family;

/* The registry: the built-in families, then those registered at run time
 * (before any worker starts: workers are forked and inherit it). */
#define KF_MAX_FAMILIES 32
extern const kf_family *kf_families[KF_MAX_FAMILIES];
extern int kf_nfamilies;

/* Adds f: its index, or -1 (and why) when the name is taken or the
 * registry is full.  f must outlive every use. */
int family_register(const kf_family *f, char *err, size_t errlen);
/* The family called name, or -1. */
int family_find(const char *name);

/* ---- families made from a config --------------------------------------
 * A config whose "kernel" is a maker's name ("custom") describes a family
 * in its object of that name; the maker builds it (a heap kf_family) and
 * registers it, before any worker is forked.  A maker returns the
 * family's index (the same spec under the same name again: the same
 * family), or -1 and a message naming the field and what was expected.
 * spec_json: the object's text; config_path: the config file (sources are
 * relative to its folder). */
typedef int (*kf_family_maker)(const char *spec_json, const char *config_path, char *err, size_t errlen);
/* Whether "kernel": name names a maker. */
bool family_is_maker(const char *name);
int family_make(const char *name, const char *spec_json, const char *config_path, char *err, size_t errlen);
static inline const kf_family *family_of(const kf_variant *v) { return kf_families[v->family]; }

/* The launch error of arguments that do not match the compiled kernel
 * `entry` (kernel index k) of v: argument i is `want` bytes as the config
 * gives it, the kernel's parameter i takes `have`; i < 0: the counts differ
 * (want and have are the counts).  It names the argument (arg_text) and
 * what a parameter of `have` bytes takes. */
void family_arg_mismatch(const kf_variant *v, int k, const char *entry, int i, size_t want, size_t have, char *buf,
                         size_t len);

/* Every parameter at its default. */
void variant_defaults(kf_variant *v, int family);
/* The element type and the operator of a variant whose family has those
 * roles (key.h: an enum axis of kf_dtype_names, of kf_op_names), as
 * reduction-like families do; other code asks key.h. */
kf_dtype variant_dtype(const kf_variant *v);
kf_op variant_op(const kf_variant *v);
/* The acc_dtype parameter (auto where the family has none), the type the
 * variant accumulates in (its partials'), and its outputs' type (the
 * accumulator's, or for acc_dtype input the 2-byte input's: kf_out_dtype). */
kf_acc_type variant_acc(const kf_variant *v);
kf_dtype variant_acc_dtype(const kf_variant *v);
kf_dtype variant_out_dtype(const kf_variant *v);
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

/* The buffers of v at s (p may be NULL: see kf_family.buffers); the
 * index of the first with role r, or -1. */
void variant_buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set);
int buffer_first(const kf_buffer_set *set, kf_role r);
/* What the engine fills (in, inout) and what it compares (out, inout). */
static inline bool role_is_input(kf_role r) { return r == KF_ROLE_IN || r == KF_ROLE_INOUT; }
static inline bool role_is_output(kf_role r) { return r == KF_ROLE_OUT || r == KF_ROLE_INOUT; }
/* Elements of set's inputs (outputs false) or outputs (outputs true). */
int64_t buffer_elems(const kf_buffer_set *set, bool outputs);
/* Bytes of every input (or inout) buffer of v at s. */
double variant_input_bytes(const kf_variant *v, const kf_shape *s);

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
