/*
 * reduce.c -- the full-reduction family: one value from n elements
 * (kernel_src/reduce/reduce.cuh).  Its parameter table, the rules that say
 * which combinations the template can run (each names the template's
 * assumption it protects, so a combination that would compile into a
 * wrong or racy kernel is rejected before anything is generated), code
 * generation, launch planning (plan.c), the reference and the fake-GPU
 * time model.
 */
#include "reduce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "plan.h"
#include "reduction.h"
#include "util.h"
#include "verify.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *const kf_algorithm_names[] = {
    "atomic_global", "atomic_shared", "interleaved_divergent", "interleaved_strided",
    "sequential", "shuffle", "warp_intrinsic"};
const char *const kf_unroll_names[] = {"none", "last_warp", "full"};
const char *const kf_passes_names[] = {"auto", "multi_kernel", "atomic", "last_block"};
const char *const kf_layout_names[] = {"block", "grid"};
const char *const kf_accum_names[] = {"register", "shared"};
const char *const kf_warp_reduce_names[] = {"shared", "shuffle", "intrinsic"};
const char *const kf_load_names[] = {"plain", "ldg", "stream", "ldg_prefetch"};
_Static_assert(N_OF(kf_algorithm_names) == KF_ALG_COUNT, "algorithm names");
_Static_assert(N_OF(kf_unroll_names) == KF_UNROLL_COUNT, "unroll names");
_Static_assert(N_OF(kf_passes_names) == KF_PASSES_COUNT, "passes names");
_Static_assert(N_OF(kf_layout_names) == KF_LAYOUT_COUNT, "layout names");
_Static_assert(N_OF(kf_accum_names) == KF_ACC_COUNT, "accumulator names");
_Static_assert(N_OF(kf_warp_reduce_names) == KF_WARP_COUNT, "warp_reduce names");
_Static_assert(N_OF(kf_load_names) == KF_LOAD_COUNT, "load names");

static const int64_t vw_only[] = {1, 2, 4, 8, 0};

/* In the order of reduce_param. */
static const kf_param params[] = {
    KF_PARAM_DTYPE,
    KF_PARAM_OP,
    KF_PARAM_ACC,
    {.name = "algorithm", .kind = KF_PK_ENUM, .names = kf_algorithm_names, .count = KF_ALG_COUNT,
     .def = KF_ALG_SEQUENTIAL, .macro = "KF_ALG", .doc = "how a block combines its threads' values"},
    {.name = "block_size", .kind = KF_PK_INT, .lo = 1, .hi = 1024, .def = 256,
     .allowed = "an integer 1..1024 (threads per block)", .macro = "KF_BS",
     .doc = "threads per block (a power of two, 32..1024)"},
    {.name = "elements_per_thread", .kind = KF_PK_INT, .lo = 1, .hi = 256, .def = 1,
     .allowed = "an integer 1..256", .macro = "KF_EPT", .doc = "loads (of vector_width elements) in flight per thread"},
    {.name = "unroll", .kind = KF_PK_ENUM, .names = kf_unroll_names, .count = KF_UNROLL_COUNT,
     .def = KF_UNROLL_NONE, .macro = "KF_UNROLL", .doc = "unrolling of the block tree"},
    {.name = "vector_width", .kind = KF_PK_INT, .lo = 1, .hi = 8, .only = vw_only, .def = 1,
     .allowed = "1, 2, 4 or 8 (elements per load; 8 for bfloat16 and float16)", .macro = "KF_VW",
     .doc = "elements per load (aligned prefix and tail; 8: 2-byte dtypes, 16-byte loads)"},
    {.name = "grid", .kind = KF_PK_GRID, .def = 0 /* auto */, .doc = "blocks: auto (one tile each), a count, "
     "{\"blocks_per_sm\": k} or {\"waves\": k}"},
    {.name = "passes", .kind = KF_PK_ENUM, .names = kf_passes_names, .count = KF_PASSES_COUNT,
     .def = KF_PASSES_AUTO, .macro = "KF_PASSES", .doc = "how blocks' partial results are combined"},
    {.name = "layout", .kind = KF_PK_ENUM, .names = kf_layout_names, .count = KF_LAYOUT_COUNT,
     .def = KF_LAYOUT_BLOCK, .macro = "KF_LAYOUT", .doc = "which elements a thread reads"},
    {.name = "accumulator", .kind = KF_PK_ENUM, .names = kf_accum_names, .count = KF_ACC_COUNT,
     .def = KF_ACC_REGISTER, .macro = "KF_ACC", .doc = "where a thread accumulates (shared: trees only)"},
    {.name = "warp_reduce", .kind = KF_PK_ENUM, .names = kf_warp_reduce_names, .count = KF_WARP_COUNT,
     .def = KF_WARP_SHARED, .macro = "KF_WARP", .doc = "the last warp of a sequential tree"},
    {.name = "load", .kind = KF_PK_ENUM, .names = kf_load_names, .count = KF_LOAD_COUNT, .def = KF_LOAD_PLAIN,
     .macro = "KF_LOAD", .doc = "global load flavour"},
};
_Static_assert(N_OF(params) == RP_COUNT, "one table entry per reduce_param");
_Static_assert(RP_COUNT <= KF_MAX_PARAMS, "KF_MAX_PARAMS");

static const kf_param sizes[] = {
    {.name = "n", .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 36, .pow2_strings = true, .def = 0,
     .allowed = "a size 1..2^36 (an integer or a string such as \"2^20\")", .doc = "elements to reduce"},
};

void reduce_decode(const kf_variant *v, reduce_v *r)
{
    memset(r, 0, sizeof *r);
    r->dtype = (kf_dtype)v->p[RP_DTYPE];
    r->op = (kf_op)v->p[RP_OP];
    r->acc_dtype = (kf_acc_type)v->p[RP_ACC_DTYPE];
    r->algorithm = (kf_algorithm)v->p[RP_ALGORITHM];
    r->block_size = (int)v->p[RP_BLOCK_SIZE];
    r->elements_per_thread = (int)v->p[RP_ELEMENTS_PER_THREAD];
    r->unroll = (kf_unroll)v->p[RP_UNROLL];
    r->vector_width = (int)v->p[RP_VECTOR_WIDTH];
    r->grid = kf_grid_decode(v->p[RP_GRID]);
    r->passes = (kf_passes)v->p[RP_PASSES];
    r->layout = (kf_layout)v->p[RP_LAYOUT];
    r->accumulator = (kf_accum)v->p[RP_ACCUMULATOR];
    r->warp_reduce = (kf_warp_reduce)v->p[RP_WARP_REDUCE];
    r->load = (kf_load)v->p[RP_LOAD];
}

void reduce_defaults(reduce_v *r)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce"));
    reduce_decode(&v, r);
}

void reduce_encode(const reduce_v *r, const char *name, kf_variant *v)
{
    variant_defaults(v, family_find("reduce"));
    snprintf(v->name, sizeof v->name, "%s", name ? name : "");
    v->p[RP_DTYPE] = r->dtype;
    v->p[RP_OP] = r->op;
    v->p[RP_ACC_DTYPE] = r->acc_dtype;
    v->p[RP_ALGORITHM] = r->algorithm;
    v->p[RP_BLOCK_SIZE] = r->block_size;
    v->p[RP_ELEMENTS_PER_THREAD] = r->elements_per_thread;
    v->p[RP_UNROLL] = r->unroll;
    v->p[RP_VECTOR_WIDTH] = r->vector_width;
    v->p[RP_GRID] = kf_grid_encode(r->grid);
    v->p[RP_PASSES] = r->passes;
    v->p[RP_LAYOUT] = r->layout;
    v->p[RP_ACCUMULATOR] = r->accumulator;
    v->p[RP_WARP_REDUCE] = r->warp_reduce;
    v->p[RP_LOAD] = r->load;
}

// ---------------------------------------------------------------------------
// rules

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static bool is_tree(kf_algorithm a)
{
    return a == KF_ALG_INTERLEAVED_DIVERGENT || a == KF_ALG_INTERLEAVED_STRIDED || a == KF_ALG_SEQUENTIAL;
}

static void resolve(kf_variant *v)
{
    v->p[RP_ACC_DTYPE] = kf_acc_resolve((kf_dtype)v->p[RP_DTYPE], (kf_acc_type)v->p[RP_ACC_DTYPE]);
    if (v->p[RP_PASSES] == KF_PASSES_AUTO)
        v->p[RP_PASSES] = (v->p[RP_ALGORITHM] == KF_ALG_ATOMIC_GLOBAL || v->p[RP_ALGORITHM] == KF_ALG_ATOMIC_SHARED)
                              ? KF_PASSES_ATOMIC
                              : KF_PASSES_MULTI_KERNEL;
}

/* Shared memory the kernel declares: the tree's array, one slot per warp,
 * or one slot (reduce.cuh: KF_SMEM_ELEMS), plus a flag. */
static int smem_bytes(const reduce_v *v)
{
    int elems = is_tree(v->algorithm) ? v->block_size
                : (v->algorithm == KF_ALG_SHUFFLE || v->algorithm == KF_ALG_WARP_INTRINSIC) ? 32
                                                                                              : 1;
    return elems * (int)kf_dtype_size(kf_acc_dtype(v->dtype, v->acc_dtype)) + 16;
}

static int check(const kf_variant *var, const kf_device *dev, char *why, size_t whylen)
{
    reduce_v vv, *v = &vv;
    reduce_decode(var, v);
    const char *alg = kf_algorithm_names[v->algorithm];
    const char *dt = kf_dtype_names[v->dtype];
    int max_threads = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    int max_smem = 48 * 1024;    /* static shared memory: the same limit on every GPU since Kepler */

    if (kf_op_is_bitwise(v->op) && kf_dtype_is_float(v->dtype)) {
        kf_err(why, whylen, "op %s is bitwise: it needs an integer dtype, got %s", kf_op_names[v->op], dt);
        return -1;
    }
    if (kf_acc_check(v->dtype, v->op, v->acc_dtype, why, whylen) != 0)
        return -1;
    /* Every tree halves the block and the warp code assumes whole warps. */
    if (!is_pow2(v->block_size) || v->block_size < 32 || v->block_size > max_threads) {
        kf_err(why, whylen, "block_size %d: the kernels need a power of two from 32 to %d", v->block_size,
               max_threads);
        return -1;
    }
    if (v->elements_per_thread < 1 || v->elements_per_thread > 256) {
        kf_err(why, whylen, "elements_per_thread %d: expected 1..256", v->elements_per_thread);
        return -1;
    }
    if (v->vector_width != 1 && v->vector_width != 2 && v->vector_width != 4 && v->vector_width != 8) {
        kf_err(why, whylen, "vector_width %d: expected 1, 2, 4 or 8", v->vector_width);
        return -1;
    }
    /* loads are at most 16 bytes (common.cuh: kf_load_vec) */
    if (v->vector_width == 8 && kf_dtype_size(v->dtype) != 2) {
        kf_err(why, whylen, "vector_width 8 needs a 2-byte dtype (bfloat16 or float16: 8 x 2 = 16-byte loads), got %s",
               dt);
        return -1;
    }
    bool int32 = v->dtype == KF_INT32 || v->dtype == KF_UINT32;
    if (v->algorithm == KF_ALG_WARP_INTRINSIC || v->warp_reduce == KF_WARP_INTRINSIC) {
        const char *what = v->algorithm == KF_ALG_WARP_INTRINSIC ? "algorithm warp_intrinsic"
                                                                 : "warp_reduce intrinsic";
        if (!int32) {
            kf_err(why, whylen, "%s (__reduce_*_sync) needs a 32-bit integer dtype (int32 or uint32), got %s",
                   what, dt);
            return -1;
        }
        if (v->op == KF_OP_PROD) {
            kf_err(why, whylen, "%s: there is no __reduce_*_sync for prod", what);
            return -1;
        }
    }
    if (v->warp_reduce != KF_WARP_SHARED &&
        (v->algorithm != KF_ALG_SEQUENTIAL || v->unroll == KF_UNROLL_NONE)) {
        kf_err(why, whylen,
               "warp_reduce %s applies to the last warp of algorithm sequential with unroll last_warp or "
               "full, got algorithm %s, unroll %s",
               kf_warp_reduce_names[v->warp_reduce], alg, kf_unroll_names[v->unroll]);
        return -1;
    }
    /* A shared accumulator needs one slot per thread: only the trees have it. */
    if (v->accumulator == KF_ACC_SHARED && !is_tree(v->algorithm)) {
        kf_err(why, whylen,
               "accumulator shared needs one shared slot per thread: only algorithms interleaved_divergent, "
               "interleaved_strided and sequential have that, got %s",
               alg);
        return -1;
    }
    switch (v->algorithm) {
    case KF_ALG_ATOMIC_GLOBAL:
    case KF_ALG_ATOMIC_SHARED:
        if (v->unroll != KF_UNROLL_NONE) {
            kf_err(why, whylen, "algorithm %s has no tree to unroll: unroll must be none, got %s", alg,
                   kf_unroll_names[v->unroll]);
            return -1;
        }
        break;
    case KF_ALG_SEQUENTIAL:
        break;
    default:
        if (v->unroll == KF_UNROLL_LAST_WARP) {
            kf_err(why, whylen, "unroll last_warp applies to algorithm sequential only; %s takes none or full",
                   alg);
            return -1;
        }
        break;
    }
    if (v->algorithm == KF_ALG_ATOMIC_GLOBAL && v->passes != KF_PASSES_ATOMIC && v->passes != KF_PASSES_AUTO) {
        kf_err(why, whylen, "algorithm atomic_global combines with atomics by definition: passes must be atomic, "
                            "got %s",
               kf_passes_names[v->passes]);
        return -1;
    }
    if (v->grid.kind == KF_GRID_BLOCKS && (v->grid.value < 1 || v->grid.value > 2147483647LL)) {
        kf_err(why, whylen, "grid %lld: expected 1..2147483647 blocks", (long long)v->grid.value);
        return -1;
    }
    if ((v->grid.kind == KF_GRID_PER_SM || v->grid.kind == KF_GRID_WAVES) &&
        (v->grid.value < 1 || v->grid.value > 64)) {
        kf_err(why, whylen, "grid: expected 1..64 per SM, got %lld", (long long)v->grid.value);
        return -1;
    }
    if (smem_bytes(v) > max_smem) {
        kf_err(why, whylen, "needs %d bytes of shared memory per block, the limit is %d", smem_bytes(v), max_smem);
        return -1;
    }
    return 0;
}

static int check_shape(const kf_variant *var, kf_shape *s, char *why, size_t whylen)
{
    reduce_v v;
    reduce_decode(var, &v);
    int64_t n = s->d[0];
    /* grid auto launches one block per tile, and a grid holds at most
     * 2^31 - 1 blocks */
    if (v.grid.kind == KF_GRID_AUTO && (n + plan_tile(&v) - 1) / plan_tile(&v) > 2147483647LL) {
        kf_err(why, whylen, "grid auto would need more than 2^31-1 blocks; use a fixed grid");
        return -1;
    }
    return 0;
}

static void label(const kf_variant *var, char *buf, size_t len)
{
    reduce_v vv, *v = &vv;
    reduce_decode(var, v);
    strbuf g = {0};
    param_text(&g, &params[RP_GRID], var->p[RP_GRID]);
    snprintf(buf, len, "%s/bs%d/ept%d/%s/v%d/%s/%s%s%s%s%s%s%s%s", kf_algorithm_names[v->algorithm], v->block_size,
             v->elements_per_thread, kf_unroll_names[v->unroll], v->vector_width, g.s ? g.s : "?",
             kf_passes_names[v->passes], v->layout == KF_LAYOUT_GRID ? "/layout=grid" : "",
             v->accumulator == KF_ACC_SHARED ? "/acc=shared" : "", v->warp_reduce != KF_WARP_SHARED ? "/warp=" : "",
             v->warp_reduce != KF_WARP_SHARED ? kf_warp_reduce_names[v->warp_reduce] : "",
             v->load != KF_LOAD_PLAIN ? "/" : "", v->load != KF_LOAD_PLAIN ? kf_load_names[v->load] : "",
             kf_acc_label(v->acc_dtype));
    sb_free(&g);
}

static const char *const derived_names[] = {"elem_bytes", "vector_bytes", "tile"};

static double derived_value(const kf_variant *var, int which)
{
    reduce_v v;
    reduce_decode(var, &v);
    double es = (double)kf_dtype_size(v.dtype);
    switch (which) {
    case 0: return es;
    case 1: return es * v.vector_width;
    default: return (double)plan_tile(&v);
    }
}

// ---------------------------------------------------------------------------
// code

static char *source(const kf_variant *var, char *err, size_t errlen)
{
    const char *common = codegen_template("common");
    const char *reduce = codegen_template("reduce");
    if (!common || !reduce) {
        kf_err(err, errlen, "kernel templates missing from the build (kernel_src/common.cuh, reduce/reduce.cuh)");
        return NULL;
    }
    reduce_v v;
    reduce_decode(var, &v);
    if (v.passes == KF_PASSES_AUTO) {
        kf_err(err, errlen, "codegen: passes must be resolved before generating code");
        return NULL;
    }
    strbuf b = {0};
    codegen_comment(&b, var);
    sb_printf(&b, "//   %-20s %s\n", "grid_stride",
              v.grid.kind == KF_GRID_AUTO ? "no (grid auto: one tile per block)" : "yes (fixed grid)");
    sb_append(&b, "// The block count and n are launch-time arguments: variants whose grids\n"
                  "// differ only in a fixed count share this source and its cubin.\n\n");
    codegen_defines(&b, var);
    sb_printf(&b, "#define KF_GRID_STRIDE %d\n\n", v.grid.kind != KF_GRID_AUTO);
    codegen_plant_defines(&b, var);
    sb_append(&b, common);
    sb_append(&b, "\n");
    sb_append(&b, reduce);
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

// ---------------------------------------------------------------------------
// launches

/* Workspace: [ticket: 256 B][scratch][partials 0][partials 1], each part
 * 256-byte aligned. */
typedef struct {
    kf_plan p;
    int64_t off_scratch, off_part[2];
} rplan;
_Static_assert(sizeof(rplan) <= sizeof(((kf_plan_info *)0)->priv), "plan fits");

static int64_t align256(int64_t x) { return (x + 255) & ~(int64_t)255; }

static int plan(const kf_variant *var, const kf_shape *s, int sms, int occupancy, kf_plan_info *pi)
{
    reduce_v v;
    reduce_decode(var, &v);
    memset(pi, 0, sizeof *pi);
    rplan *rp = (rplan *)pi->priv;
    if (plan_make(&v, s->d[0], sms, occupancy, &rp->p) != 0)
        return -1;
    int64_t es = (int64_t)kf_dtype_size(variant_acc_dtype(var)); /* partials have the accumulator's type */
    rp->off_scratch = 256;
    int64_t scratch = (rp->p.scratch_elems > 0 ? rp->p.scratch_elems : 1) * es + 64;
    rp->off_part[0] = align256(rp->off_scratch + scratch);
    int64_t part = rp->p.partial_elems > 0 ? rp->p.partial_elems * es + 64 : 0;
    rp->off_part[1] = align256(rp->off_part[0] + part);
    pi->workspace_bytes = align256(rp->off_part[1] + part);
    pi->launches = rp->p.npasses;
    pi->blocks = rp->p.blocks[0];
    pi->depth = rp->p.depth;
    pi->deterministic = rp->p.deterministic;
    return 0;
}

static int64_t input_elems(const kf_shape *s) { return s->d[0]; }
static int64_t outputs(const kf_shape *s)
{
    (void)s;
    return 1;
}
static double bytes(const kf_variant *v, const kf_shape *s)
{
    return (double)s->d[0] * (double)kf_dtype_size(variant_dtype(v));
}

/* Ticket 0, scratch[0] the identity (the atomic passes' accumulator). */
static void workspace_init(const kf_variant *var, const kf_plan_info *pi, void *ws)
{
    const rplan *rp = (const rplan *)pi->priv;
    memset(ws, 0, (size_t)pi->workspace_bytes);
    kf_value id = verify_identity(variant_acc_dtype(var), variant_op(var));
    memcpy((char *)ws + rp->off_scratch, &id, kf_dtype_size(variant_acc_dtype(var)));
}

static int enqueue(kf_launcher *l, const kf_variant *var, const kf_shape *s, const kf_plan_info *pi,
                   const kf_buffers *b)
{
    (void)s;
    const rplan *rp = (const rplan *)pi->priv;
    const kf_plan *p = &rp->p;
    unsigned long long src = b->at[RED_IN], scratch = b->at[RED_WS] + (uint64_t)rp->off_scratch, ticket = b->at[RED_WS];
    for (int k = 0; k < p->npasses; k++) {
        unsigned long long dst = k == p->npasses - 1 ? b->at[RED_OUT] : b->at[RED_WS] + (uint64_t)rp->off_part[k % 2];
        unsigned long long nn = (unsigned long long)p->n_in[k];
        /* the sixth argument, for an input of another type than the
         * accumulator's, says whether a pass reads the input or partials
         * (reduce.cuh); a kernel of one type has five parameters, and
         * cuLaunchKernel reads only as many as the kernel has */
        int partials = k > 0;
        void *args[] = {&src, &nn, &dst, &scratch, &ticket, &partials};
        if (kf_launch(l, p->blocks[k], (int)var->p[RP_BLOCK_SIZE], args) != 0)
            return -1;
        src = dst;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// reference

static void reference(const kf_variant *v, const kf_shape *s, const void *in, void *ref, double *aux)
{
    kf_dtype acc = variant_out_dtype(v);
    kf_value r = verify_reference_acc(variant_dtype(v), acc, variant_op(v), in, s->d[0], &aux[0]);
    memcpy(ref, &r, kf_dtype_size(acc));
}

static int64_t compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *pi, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r)
{
    kf_dtype t = variant_out_dtype(v);
    kf_op op = variant_op(v);
    kf_value g, rf;
    memset(&g, 0, sizeof g);
    memset(&rf, 0, sizeof rf);
    memcpy(&g, got, kf_dtype_size(t));
    memcpy(&rf, ref, kf_dtype_size(t));
    double tol = exact ? 0 : verify_tolerance_out(variant_acc_dtype(v), t, op, s->d[0], pi->depth, aux[0], rf);
    bool ok = verify_compare(t, op, g, rf, tol, r);
    r->err_scale = verify_err_scale(t, op, aux[0], rf);
    return ok ? 0 : 1;
}

// ---------------------------------------------------------------------------
// planted faults (test hook: KFORGE_PLANT, codegen.h), where reduce.cuh's
// load phase puts them

/* The first pass's vector body (verify_vector_split over the input). */
static void body_of(const reduce_v *v, int64_t n, int64_t offset, int64_t *prefix, int64_t *nv, int64_t *tail)
{
    verify_vector_split(offset, kf_dtype_size(v->dtype), v->vector_width, n, prefix, nv, tail);
}

/* The first vector block 1 folds (block layout: its first tile; grid
 * layout: thread blockDim's first vector). */
static int64_t first_vec_of_block1(const reduce_v *v)
{
    return v->layout == KF_LAYOUT_GRID ? v->block_size : (int64_t)v->block_size * v->elements_per_thread;
}

static int plant(const kf_variant *var, const kf_shape *s, const kf_plan_info *pi, int64_t offset, int kind,
                 kf_plant *spec, char *why, size_t whylen)
{
    reduce_v v;
    reduce_decode(var, &v);
    const rplan *rp = (const rplan *)pi->priv;
    int64_t n = s->d[0], prefix, nv, tail;
    body_of(&v, n, offset, &prefix, &nv, &tail);
    *spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = -1};
    switch (kind) {
    case KF_PLANT_DROP_FIRST: spec->elem = 0; return 0;
    case KF_PLANT_DROP_LAST: spec->elem = n - 1; return 0;
    case KF_PLANT_DROP_TAIL:
        if (tail == 0) {
            kf_err(why, whylen, v.vector_width == 1 ? "no vector tail (vector_width 1)"
                                                    : "no vector tail at this n and offset");
            return -1;
        }
        spec->elem = prefix + nv * v.vector_width;
        return 0;
    case KF_PLANT_DROP_BLOCK: {
        int64_t first = first_vec_of_block1(&v);
        if (rp->p.blocks[0] < 2 || first >= nv) {
            kf_err(why, whylen, "one block in the first pass");
            return -1;
        }
        spec->elem = prefix + first * v.vector_width;
        return 0;
    }
    case KF_PLANT_SHIFT:
        if (n < 2) {
            kf_err(why, whylen, "one element: no neighbour to read");
            return -1;
        }
        spec->elem = (n - 2) / 2;
        spec->shift = true;
        return 0;
    case KF_PLANT_DOUBLE_BLOCK: /* block 1 when it has elements, else block 0 */
        spec->unit = rp->p.blocks[0] >= 2 && first_vec_of_block1(&v) < nv ? 1 : 0;
        return 0;
    default:
        kf_err(why, whylen, "%s is not a fault of the reduce family", kf_plant_names[kind]);
        return -1;
    }
}

/* double_block: the block's value, folded once more into the result.  The
 * block's elements are those reduce.cuh's first pass gives it: the prefix
 * and tail go to the grid's first threads (block 0), body vector j to block
 * j / tile (block layout; modulo the grid when it strides) or to thread
 * j mod (grid x block) (grid layout). */
static void plant_outputs(const kf_variant *var, const kf_shape *s, const kf_plan_info *pi, int64_t offset,
                          const kf_plant *spec, const void *in, void *out)
{
    reduce_v v;
    reduce_decode(var, &v);
    const rplan *rp = (const rplan *)pi->priv;
    int64_t n = s->d[0], prefix, nv, tail, grid = rp->p.blocks[0], vw = v.vector_width, b = spec->unit;
    body_of(&v, n, offset, &prefix, &nv, &tail);
    kf_dtype tin = v.dtype, t = variant_acc_dtype(var);
    kf_value acc = verify_identity(t, v.op);
    if (b == 0) {
        for (int64_t i = 0; i < prefix; i++)
            acc = verify_combine(t, v.op, acc, verify_load_acc(tin, t, in, i));
        for (int64_t i = prefix + nv * vw; i < n; i++)
            acc = verify_combine(t, v.op, acc, verify_load_acc(tin, t, in, i));
    }
    /* block b's body vectors in increasing order: runs of `run` vectors,
     * the first at `first`, one every `every` (grid layout: a thread's
     * vectors a grid of threads apart; block layout: its tile, and with a
     * fixed grid every grid-th tile after it) */
    int64_t tile = (int64_t)v.block_size * v.elements_per_thread, threads = grid * v.block_size;
    bool stride = v.grid.kind != KF_GRID_AUTO;
    int64_t run = v.layout == KF_LAYOUT_GRID ? v.block_size : tile, first = b * run;
    int64_t every = v.layout == KF_LAYOUT_GRID ? threads : stride ? tile * grid : nv;
    for (int64_t j0 = first; j0 < nv; j0 += every)
        for (int64_t j = j0; j < j0 + run && j < nv; j++)
            for (int64_t k = 0; k < vw; k++)
                acc = verify_combine(t, v.op, acc, verify_load_acc(tin, t, in, prefix + j * vw + k));
    kf_dtype to = variant_out_dtype(var);
    kf_value o = verify_narrow(t, to, verify_combine(t, v.op, verify_load_acc(to, t, out, 0), acc));
    memcpy(out, &o, kf_dtype_size(to));
}

/* A smooth synthetic landscape with one best point: bandwidth peaks at
 * block_size 256, 4 elements per thread, vector width 4, shuffle. */
static double fake_ms(const kf_variant *var, const kf_shape *s, const kf_device *d, const kf_plan_info *pi)
{
    (void)d;
    reduce_v v;
    reduce_decode(var, &v);
    double bw = 2000.0;
    bw *= 1.0 / (1.0 + 0.15 * fabs(log2(v.block_size / 256.0)));
    bw *= 1.0 / (1.0 + 0.10 * fabs(log2(v.elements_per_thread / 4.0)));
    if (kf_dtype_size(v.dtype) == 2) /* by the bytes of a load: 16 is best, as 4 floats */
        bw *= v.vector_width == 8 ? 1.0 : v.vector_width == 4 ? 0.93 : 0.85;
    else
        bw *= v.vector_width == 4 ? 1.0 : (v.vector_width == 2 ? 0.93 : 0.85);
    bw *= v.algorithm == KF_ALG_SHUFFLE ? 1.0 : (v.algorithm == KF_ALG_SEQUENTIAL ? 0.95 : 0.5);
    return (double)s->d[0] * (double)kf_dtype_size(v.dtype) / (bw * 1e9) * 1e3 + 0.002 * pi->launches;
}

static const char *const entries[] = {"kf_reduce"};
/* no reference_at: the one output depends on every element */
static const reduction_ops ops = {input_elems, outputs, workspace_init, reference, compare, NULL, NULL};

const kf_family kf_family_reduce = {
    .name = "reduce",
    .doc = "full reduction: one value from n elements",
    .params = params,
    .nparams = RP_COUNT,
    .sizes = sizes,
    .nsizes = N_OF(sizes),
    .p_block = RP_BLOCK_SIZE,
    .entries = entries,
    .nentries = 1,
    .derived = derived_names,
    .nderived = N_OF(derived_names),
    .derived_value = derived_value,
    .resolve = resolve,
    .check = check,
    .check_shape = check_shape,
    .label = label,
    .source = source,
    .plan = plan,
    .bytes = bytes,
    .enqueue = enqueue,
    REDUCTION_INTERFACE,
    .plant = plant,
    .plant_outputs = plant_outputs,
    .fake_ms = fake_ms,
    .ext = &ops,
    .export_source = reduce_export_source,
};
