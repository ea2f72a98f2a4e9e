/*
 * custom.c -- the `custom` family maker (issue 25): a kernel the user
 * writes, described by data in the config's "custom" object, made into a
 * kernel family at run time and registered before any worker is forked.
 *
 *   {"kernel": "custom",
 *    "custom": {"source": "vector_add.cu", "entry": "vector_add",
 *               "params": {"block_size_x": [64, 128, 256], "per_thread": {"range": [1, 4]}},
 *               "sizes": ["n"],
 *               "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"}, ...,
 *                        {"name": "n", "scalar": "int32", "value": "n"}],
 *               "grid": ["(n + block_size_x * per_thread - 1) / (block_size_x * per_thread)"],
 *               "reference": {"params": {"block_size_x": 64, "per_thread": 1}},
 *               "tolerance": {"rtol": 1e-5, "atol": 1e-6}},
 *    "defaults": {"n": "2^24"}}
 *
 * An out or inout buffer may carry a "tolerance" of its own, which
 * overrides the config-wide one key by key; "flops" (an expression) gives
 * GFLOP/s.
 *
 * Every param is an INT axis of the family's table; it reaches CUDA as
 * `#define NAME value` before the source, Kernel Tuner style.  Lengths,
 * scalars, grid, block, shared memory and bytes are expressions (expr.h)
 * over params and sizes.  The reference is a parameter set of the same
 * source, or a kernel of its own ("reference": {"source", "entry",
 * "params", "grid", "block", "smem"}: a companion family with its params
 * at one value each, its launch and the same args, registered beside this
 * one), that the GPU worker runs on the same inputs (reference_variant);
 * the fake GPU, which cannot run a user's kernel, gets deterministic
 * reference outputs from reference() and returns them as the kernel's.
 *
 * This file holds the family's callbacks at run time and the registration
 * (custom_family_make); spec.c makes the family from the JSON, export.c
 * writes kforge export's header (custom_internal.h).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "deps.h"
#include "custom_internal.h"
#include "expr.h"
#include "family.h"
#include "util.h"

static cfam *made[KF_MAX_FAMILIES];
static int nmade;

static void buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set);
static void block_shape(const kf_variant *v, kf_dim3 *block, unsigned *smem);

// ---------------------------------------------------------------------------
// evaluation

int custom_eval_int(const kf_expr *e, const kf_variant *v, const kf_shape *s, const char *what, int64_t *out,
                    char *why, size_t whylen)
{
    double d;
    char err[256];
    if (expr_eval(e, v, s, &d, err, sizeof err) != 0) {
        kf_err(why, whylen, "%s: %s", what, err);
        return -1;
    }
    if (!isfinite(d) || fabs(d) > 9.0e15) {
        kf_err(why, whylen, "%s: %g is not a usable integer", what, d);
        return -1;
    }
    *out = (int64_t)floor(d);
    return 0;
}

static int64_t evi(const kf_expr *e, const kf_variant *v, const kf_shape *s, int64_t fallback)
{
    int64_t x;
    char why[8];
    return e && custom_eval_int(e, v, s, "", &x, why, sizeof why) == 0 ? x : fallback;
}

// ---------------------------------------------------------------------------
// the family's callbacks

static void label(const kf_variant *v, char *buf, size_t len)
{
    const kf_family *f = family_of(v);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < f->nparams && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s=%lld", i ? "," : "", f->params[i].name, (long long)v->p[i]);
}

/* The block and the dynamic shared memory (params only) as a GPU can
 * have them: each dimension 1..1024 (z 1..64), at most the device's
 * threads a block (1024 on every CUDA GPU when there is no device), shared
 * memory 0..2^30 bytes (the device's own limit is the launcher's): else
 * the value itself in why, before anything is compiled. */
static int check_launch(const cfam *c, const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    int64_t b[3] = {1, 1, 1}, threads = 1;
    static const int64_t most[3] = {1024, 1024, 64};
    static const char *const names[3] = {"block[0]", "block[1]", "block[2]"}; /* no snprintf a variant: millions */
    for (int d = 0; d < 3; d++) {
        const char *what = names[d];
        if (c->block[d] && custom_eval_int(c->block[d], v, NULL, what, &b[d], why, whylen) != 0)
            return -1;
        if (b[d] < 1 || b[d] > most[d]) {
            kf_err(why, whylen, "%s = %lld is outside 1..%lld", what, (long long)b[d], (long long)most[d]);
            return -1;
        }
        threads *= b[d];
    }
    int64_t limit = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    if (threads > limit) {
        kf_err(why, whylen, "block = %lld threads (%lld x %lld x %lld), over the %lld a block may have", (long long)threads,
               (long long)b[0], (long long)b[1], (long long)b[2], (long long)limit);
        return -1;
    }
    int64_t m = 0;
    if (c->smem && custom_eval_int(c->smem, v, NULL, "smem", &m, why, whylen) != 0)
        return -1;
    if (m < 0 || m > (1LL << 30)) {
        kf_err(why, whylen, "smem = %lld bytes is %s", (long long)m, m < 0 ? "below 0" : "over 2^30 (1 GiB)");
        return -1;
    }
    return 0;
}

/* The launch; the constraints without sizes.  A value the params do not
 * list is taken (--set, "variants"): the list is the space to search. */
static int check(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    const cfam *c = cf_of(v);
    if (check_launch(c, v, dev, why, whylen) != 0)
        return -1;
    for (int i = 0; i < c->ncons; i++) {
        if (expr_uses_n(c->cons[i]))
            continue;
        int64_t x;
        if (custom_eval_int(c->cons[i], v, NULL, c->cons_text[i], &x, why, whylen) != 0)
            return -1;
        if (!x) {
            kf_err(why, whylen, "constraint \"%s\" is false", c->cons_text[i]);
            return -1;
        }
    }
    return custom_check_options(c, v, why, whylen);
}

/* The constraints with sizes, and every expression must evaluate. */
static int check_shape(const kf_variant *v, kf_shape *s, char *why, size_t whylen)
{
    const cfam *c = cf_of(v);
    int64_t x;
    if (custom_check_size_macros(c, s, why, whylen) != 0)
        return -1;
    for (int i = 0; i < c->ncons; i++) {
        if (!expr_uses_n(c->cons[i]))
            continue;
        if (custom_eval_int(c->cons[i], v, s, c->cons_text[i], &x, why, whylen) != 0)
            return -1;
        if (!x) {
            kf_err(why, whylen, "constraint \"%s\" is false", c->cons_text[i]);
            return -1;
        }
    }
    char what[96];
    for (int a = 0; a < c->nargs; a++) {
        const carg *g = &c->args[a];
        snprintf(what, sizeof what, "args[%d] (%s).%s", a, g->name, g->scalar ? "value" : "length");
        if (g->scalar && kf_dtype_is_float(g->dtype)) { /* a float: finite, within its type (float16: 65504) */
            double d, most = g->dtype == KF_FLOAT16 ? 65504.0 : g->dtype == KF_BFLOAT16 ? 0x1.fep127
                           : g->dtype == KF_FLOAT32 ? 0x1.fffffep127 : DBL_MAX;
            char err[256];
            if (expr_eval(g->value, v, s, &d, err, sizeof err) != 0) {
                kf_err(why, whylen, "%s: %s", what, err);
                return -1;
            }
            if (!(fabs(d) <= most)) {
                kf_err(why, whylen, "%s = %g is not a finite %s (its largest: %g)", what, d,
                       kf_dtype_names[g->dtype], most);
                return -1;
            }
            continue;
        }
        if (custom_eval_int(g->scalar ? g->value : g->length, v, s, what, &x, why, whylen) != 0)
            return -1;
        if (g->scalar && (g->dtype == KF_INT32 || g->dtype == KF_UINT32 || g->dtype == KF_INT8 ||
                          g->dtype == KF_UINT8)) {
            int64_t lo = g->dtype == KF_INT32 ? INT32_MIN : g->dtype == KF_INT8 ? INT8_MIN : 0;
            int64_t hi = g->dtype == KF_INT32 ? INT32_MAX : g->dtype == KF_INT8 ? INT8_MAX
                       : g->dtype == KF_UINT8 ? UINT8_MAX : UINT32_MAX;
            if (x < lo || x > hi) {
                kf_err(why, whylen, "%s = %lld is outside %s's range %lld..%lld", what, (long long)x,
                       kf_dtype_names[g->dtype], (long long)lo, (long long)hi);
                return -1;
            }
        }
        if (!g->scalar && (x < 1 || x > (1LL << 36))) {
            kf_err(why, whylen, "%s = %lld: a buffer holds 1..2^36 elements", what, (long long)x);
            return -1;
        }
        if (!g->scalar && ((g->npy && x != g->npy_elems) || (g->expect && x != g->expect_elems))) {
            kf_err(why, whylen, "%s = %lld here, its .npy file holds %lld elements", what, (long long)x,
                   (long long)(g->npy ? g->npy_elems : g->expect_elems));
            return -1;
        }
    }
    for (int k = 0; k < c->nconsts; k++) {
        const carg *g = &c->consts[k];
        snprintf(what, sizeof what, "constants[%d] (%s).length", k, g->name);
        if (custom_eval_int(g->length, v, s, what, &x, why, whylen) != 0)
            return -1;
        if (x < 1 || x > (1LL << 30)) {
            kf_err(why, whylen, "%s = %lld: a constant holds 1..2^30 elements", what, (long long)x);
            return -1;
        }
        if (x * (int64_t)kf_dtype_size(g->dtype) > 65536) { /* a GPU's constant memory: 64 KiB */
            kf_err(why, whylen, "%s = %lld: %lld bytes, over the 64 KiB of a GPU's constant memory", what,
                   (long long)x, (long long)x * (long long)kf_dtype_size(g->dtype));
            return -1;
        }
        if (g->npy && x != g->npy_elems) {
            kf_err(why, whylen, "%s = %lld here, its .npy file holds %lld elements", what, (long long)x,
                   (long long)g->npy_elems);
            return -1;
        }
    }
    for (int d = 0; d < 3; d++) {
        snprintf(what, sizeof what, "grid[%d]", d);
        if (c->grid[d] && custom_eval_int(c->grid[d], v, s, what, &x, why, whylen) != 0)
            return -1;
        int64_t most = d ? 65535 : INT32_MAX;
        if (c->grid[d] && (x < 1 || x > most)) {
            kf_err(why, whylen, "%s = %lld is outside 1..%lld", what, (long long)x, (long long)most);
            return -1;
        }
    }
    if (c->bytes && custom_eval_int(c->bytes, v, s, "bytes", &x, why, whylen) != 0)
        return -1;
    if (c->bytes && x < 0) {
        kf_err(why, whylen, "bytes = %lld is below 0", (long long)x);
        return -1;
    }
    double fl;
    char ferr[256];
    if (c->flops && expr_eval(c->flops, v, s, &fl, ferr, sizeof ferr) != 0) {
        kf_err(why, whylen, "flops: %s", ferr);
        return -1;
    }
    if (c->flops && !(fl >= 0 && isfinite(fl))) {
        kf_err(why, whylen, "flops = %g is not a count (0 or more)", fl);
        return -1;
    }
    if (c->ref) { /* the reference kernel's lengths, values and grid at s too */
        kf_variant r;
        variant_defaults(&r, c->ref->index);
        char rwhy[512];
        if (check_shape(&r, s, rwhy, sizeof rwhy) != 0) {
            kf_err(why, whylen, "reference: %s", rwhy);
            return -1;
        }
        kf_buffer_set mine, its;
        memset(&mine, 0, sizeof mine);
        memset(&its, 0, sizeof its);
        buffers(v, s, NULL, &mine);
        buffers(&r, s, NULL, &its);
        for (int i = 0; i < mine.n; i++)
            if (mine.b[i].elems != its.b[i].elems) {
                kf_err(why, whylen, "reference: %s's length is %lld for the reference kernel, %lld for this variant: "
                       "both run on the same buffers", mine.b[i].name, (long long)its.b[i].elems,
                       (long long)mine.b[i].elems);
                return -1;
            }
    }
    return 0;
}

static bool is_param(const cfam *c, const char *name)
{
    for (int i = 0; i < c->fam.nparams; i++)
        if (strcmp(c->params[i].name, name) == 0)
            return true;
    return false;
}

/* The macros Kernel Tuner defines for every kernel, where no param takes
 * the name: kernel_tuner 1; block_size_x/y/z, the block's dimensions (1
 * where the block has none); grid_size_x/y/z, the grid's, where the grid
 * expression uses params only (the source is one per variant, compiled
 * once for every size: a grid over the sizes has no one value to give,
 * and a kernel that needs it keeps its own #ifndef fallback, as Kernel
 * Tuner's examples do). */
static void kt_macros(const cfam *c, const kf_variant *v, strbuf *b)
{
    static const char *const xyz = "xyz";
    if (!is_param(c, "kernel_tuner"))
        sb_append(b, "#define kernel_tuner 1\n");
    kf_dim3 block;
    unsigned smem;
    block_shape(v, &block, &smem);
    const unsigned bd[3] = {block.x, block.y, block.z};
    char name[16];
    for (int d = 0; d < 3; d++) {
        snprintf(name, sizeof name, "block_size_%c", xyz[d]);
        if (!is_param(c, name))
            sb_printf(b, "#define %s %u\n", name, bd[d]);
    }
    for (int d = 0; d < 3; d++) {
        snprintf(name, sizeof name, "grid_size_%c", xyz[d]);
        int64_t g = 1;
        if (is_param(c, name) || (c->grid[d] && (expr_uses_n(c->grid[d]) || !(g = evi(c->grid[d], v, NULL, 0)))))
            continue;
        sb_printf(b, "#define %s %lld\n", name, (long long)g);
    }
}

static char *source(const kf_variant *v, char *err, size_t errlen)
{
    const cfam *c = cf_of(v);
    strbuf b = {0};
    codegen_comment(&b, v);
    sb_printf(&b, "//   %-20s %s (%s)\n", "source", c->source_path, c->entry);
    for (int i = 0; i < c->fam.nparams; i++)
        sb_printf(&b, "#define %s %lld\n", c->params[i].name, (long long)v->p[i]);
    if (c->include_dir[0]) /* quoted includes beside the source, from any directory (deps.h) */
        sb_printf(&b, RTC_INCLUDE_DIRECTIVE "%s\n", c->include_dir);
    kt_macros(c, v, &b);
    custom_write_size_macros(c, &b);
    custom_write_options(c, v, &b);
    sb_printf(&b, "#line 1 \"%s\"\n", c->source_path); /* no quotes, backslashes or control characters: make() */
    custom_write_source_text(c, v, &b);
    /* the entry by its name as written: NVRTC instantiates a template entry
     * and gives its lowered name, which the worker looks up (rtc.h) */
    codegen_name_expression(&b, c->entry);
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

/* block (params only) and dynamic shared memory (params only). */
static void block_shape(const kf_variant *v, kf_dim3 *block, unsigned *smem)
{
    const cfam *c = cf_of(v);
    int64_t d[3];
    for (int k = 0; k < 3; k++) {
        d[k] = evi(c->block[k], v, NULL, 1);
        if (d[k] < 1 || d[k] > (1LL << 20))
            d[k] = 1LL << 20; /* refused by the launcher, with the reason */
    }
    *block = (kf_dim3){(unsigned)d[0], (unsigned)d[1], (unsigned)d[2]};
    int64_t m = evi(c->smem, v, NULL, 0);
    *smem = m < 0 ? 0u : m > (1LL << 30) ? (1u << 30) : (unsigned)m;
}

typedef struct {
    kf_dim3 grid;
    int64_t elems[KF_MAX_BUFFERS]; /* each buffer's length at the plan's shape (scratch_init) */
} cplan;

static int plan(const kf_variant *v, const kf_shape *s, int sms, int occupancy, kf_plan_info *pi)
{
    (void)sms, (void)occupancy;
    const cfam *c = cf_of(v);
    memset(pi, 0, sizeof *pi);
    cplan *t = (cplan *)pi->priv;
    int64_t g[3];
    for (int k = 0; k < 3; k++) {
        g[k] = evi(c->grid[k], v, s, k == 0 ? 0 : 1);
        if (g[k] < 1 || g[k] > 2147483647LL)
            return -1;
    }
    t->grid = (kf_dim3){(unsigned)g[0], (unsigned)g[1], (unsigned)g[2]};
    pi->launches = 1;
    pi->blocks = g[0] * g[1] * g[2];
    pi->deterministic = c->deterministic;
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar)
            t->elems[c->args[a].buf] = evi(c->args[a].length, v, s, 1);
    return 0;
}

static void buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set)
{
    (void)p;
    const cfam *c = cf_of(v);
    set->n = c->nbufs;
    for (int a = 0; a < c->nargs; a++) {
        const carg *g = &c->args[a];
        if (g->scalar)
            continue;
        int64_t n = evi(g->length, v, s, 1);
        set->b[g->buf] = (kf_buffer){g->name, g->role, (int)g->dtype, kf_dtype_size(g->dtype), n < 1 ? 1 : n, false};
    }
}

static const carg *arg_of_buf(const cfam *c, int buf)
{
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar && c->args[a].buf == buf)
            return &c->args[a];
    return NULL;
}

static void put(kf_dtype t, void *host, int64_t i, double x)
{
    switch (t) {
    case KF_INT32: ((int32_t *)host)[i] = (int32_t)x; break;
    case KF_UINT32: ((uint32_t *)host)[i] = (uint32_t)(int64_t)x; break; /* (a negative double to unsigned is undefined) */
    case KF_INT8: ((int8_t *)host)[i] = (int8_t)(int64_t)x; break;
    case KF_UINT8: ((uint8_t *)host)[i] = (uint8_t)(int64_t)x; break;
    case KF_INT64: ((int64_t *)host)[i] = (int64_t)x; break;
    case KF_FLOAT32: ((float *)host)[i] = (float)x; break;
    case KF_BFLOAT16: case KF_FLOAT16: ((uint16_t *)host)[i] = kf_float_to_half(t, (float)x); break;
    default: ((double *)host)[i] = x; break;
    }
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

typedef struct {
    const carg *g;
    void *host;
    uint64_t seed;
} fill_ctx;

static void fill_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    const fill_ctx *f = ctx;
    const carg *g = f->g;
    bool fl = kf_dtype_is_float(g->dtype);
    for (int64_t i = lo; i < hi; i++) {
        double x;
        switch (g->fill) {
        case FILL_ZEROS: x = 0; break;
        case FILL_ONES: x = 1; break;
        case FILL_IOTA: x = (double)i; break;
        case FILL_CONSTANT: x = g->lo; break;
        default: {
            uint64_t r = mix(f->seed ^ mix((uint64_t)i));
            if (fl)
                x = g->lo + (g->hi - g->lo) * ((double)(r >> 11) * 0x1.0p-53);
            else
                x = g->lo + (double)(r % (uint64_t)(g->hi - g->lo + 1));
        }
        }
        put(g->dtype, f->host, i, x);
    }
}

/* Seeded, per buffer; the same seed gives the same data. */
static void fill(const kf_variant *v, const kf_shape *s, int buf, uint64_t seed, bool exact, void *host,
                 int64_t elems)
{
    (void)s, (void)exact;
    const cfam *c = cf_of(v);
    const carg *g = arg_of_buf(c, buf);
    if (g->fill == FILL_NPY) { /* check_shape saw to it that the lengths agree */
        memcpy(host, g->npy, (size_t)(elems < g->npy_elems ? elems : g->npy_elems) * kf_dtype_size(g->dtype));
        return;
    }
    fill_ctx f = {g, host, mix(seed * 31 + (uint64_t)buf)};
    kf_parallel_for(elems, 1 << 20, fill_piece, &f);
}

/* An output with "check": false (the engine's scratch) starts from its
 * fill, as every out buffer does (a random fill from a fixed seed: none
 * reaches here). */
static void scratch_init(const kf_variant *v, const kf_plan_info *p, int buf, void *host)
{
    const cplan *t = (const cplan *)p->priv;
    fill(v, NULL, buf, 0, true, host, t->elems[buf] < 1 ? 1 : t->elems[buf]);
}

/* "constants": the module variables and their contents, as fill() makes
 * a buffer's (the seed mixed apart from the buffers'). */
static void constants(const kf_variant *v, const kf_shape *s, kf_constant_set *set)
{
    const cfam *c = cf_of(v);
    set->n = c->nconsts;
    for (int k = 0; k < c->nconsts; k++) {
        const carg *g = &c->consts[k];
        int64_t n = evi(g->length, v, s, 1);
        set->c[k] = (kf_constant){g->name, (int)g->dtype, kf_dtype_size(g->dtype), n < 1 ? 1 : n};
    }
}

static void constant_fill(const kf_variant *v, const kf_shape *s, int which, uint64_t seed, void *host,
                          int64_t elems)
{
    (void)s;
    const carg *g = &cf_of(v)->consts[which];
    if (g->fill == FILL_NPY) { /* check_shape saw to it that the lengths agree */
        memcpy(host, g->npy, (size_t)(elems < g->npy_elems ? elems : g->npy_elems) * kf_dtype_size(g->dtype));
        return;
    }
    fill_ctx f = {g, host, mix(seed * 31 + 0x100 + (uint64_t)which)};
    kf_parallel_for(elems, 1 << 20, fill_piece, &f);
}

static bool role_expected(const carg *g) { return g && g->expect && role_is_output(g->role); }

/* The answer given as .npy files ({"expected": ...}), else: no CPU
 * reference exists for a user's kernel.  The fake GPU, which runs
 * nothing, uses these outputs (an inout's input, else a pattern of the
 * seed) and returns them as the kernel's; on a GPU the reference
 * variant's outputs replace them (reference_variant). */
static void reference(const kf_variant *v, const kf_shape *s, const void *const *in, void *const *ref,
                      double *const *aux)
{
    (void)aux;
    const cfam *c = cf_of(v);
    kf_buffer_set set;
    memset(&set, 0, sizeof set);
    buffers(v, s, NULL, &set);
    for (int i = 0; i < set.n; i++) {
        const carg *e = arg_of_buf(c, i);
        if (role_expected(e)) /* reference {"expected": ...}: the answer given */
            memcpy(ref[i], e->expect, (size_t)set.b[i].elems * set.b[i].elem_bytes);
        else if (set.b[i].role == KF_ROLE_INOUT)
            memcpy(ref[i], in[i], (size_t)set.b[i].elems * set.b[i].elem_bytes);
        else if (set.b[i].role == KF_ROLE_OUT) {
            const carg *g = arg_of_buf(c, i);
            carg pat = *g;
            pat.fill = FILL_RANDOM;
            pat.lo = 0;
            pat.hi = 100;
            fill_ctx f = {&pat, ref[i], mix(0x5EEDULL + (uint64_t)i)};
            kf_parallel_for(set.b[i].elems, 1 << 20, fill_piece, &f);
        }
    }
}

static double get(kf_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case KF_INT32: return ((const int32_t *)p)[i];
    case KF_UINT32: return ((const uint32_t *)p)[i];
    case KF_INT8: return ((const int8_t *)p)[i];
    case KF_UINT8: return ((const uint8_t *)p)[i];
    case KF_INT64: return (double)((const int64_t *)p)[i];
    case KF_FLOAT32: return ((const float *)p)[i];
    case KF_BFLOAT16: case KF_FLOAT16: return kf_half_to_float(t, ((const uint16_t *)p)[i]);
    default: return ((const double *)p)[i];
    }
}

/* One piece of a comparison (compare_piece): its wrong elements, the first
 * of them, and the element with the largest error. */
typedef struct {
    int64_t bad, first_bad, worst_at;
    double worst;
} cmp_part;

typedef struct {
    double rtol, atol;          /* the buffer's tolerance */
    const kf_buffer *b;
    const void *got, *ref;
    cmp_part *parts;
} cmp_job;

static void compare_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    const cmp_job *j = ctx;
    const kf_buffer *b = j->b;
    kf_dtype t = (kf_dtype)b->dtype;
    bool fl = kf_dtype_is_float(t);
    cmp_part q = {0, -1, lo, -1};
    for (int64_t i = lo; i < hi; i++) {
        bool ok;
        double e = 0;
        if (!fl) {
            ok = memcmp((const char *)j->got + i * (int64_t)b->elem_bytes,
                        (const char *)j->ref + i * (int64_t)b->elem_bytes, b->elem_bytes) == 0;
        } else {
            double g = get(t, j->got, i), f = get(t, j->ref, i);
            if (isnan(f) || isnan(g))
                ok = isnan(f) && isnan(g), e = ok ? 0 : INFINITY;
            else
                e = fabs(g - f), ok = e <= j->atol + j->rtol * fabs(f);
        }
        if (!ok && q.bad++ == 0)
            q.first_bad = i;
        if (e > q.worst)
            q.worst = e, q.worst_at = i;
    }
    j->parts[piece] = q;
}

/* $KFORGE_SAVE_OUTPUTS=DIR (the Python front end's run_kernel): each
 * output the host compares is written as DIR/NAME.npy, the kernel's values
 * as they came back from the GPU (a 1-D array of the buffer's dtype).  The
 * front end makes every output differ from an impossible answer (NaN,
 * tolerance 0) so that the host sees it; an output never written here
 * equalled that answer bit for bit.  Best effort: a file that cannot be
 * written is left out (the front end says so). */
static void save_output(const kf_buffer *b, const void *got)
{
    const char *dir = getenv("KFORGE_SAVE_OUTPUTS");
    if (!dir || !dir[0] || !b->name[0] || strchr(b->name, '/') || b->name[0] == '.')
        return;
    static const char *const descr[KF_DTYPE_COUNT] = {
        [KF_INT32] = "<i4", [KF_UINT32] = "<u4", [KF_INT64] = "<i8", [KF_FLOAT32] = "<f4",
        [KF_FLOAT64] = "<f8", [KF_FLOAT16] = "<f2", [KF_INT8] = "|i1", [KF_UINT8] = "|u1"};
    if (b->dtype < 0 || b->dtype >= KF_DTYPE_COUNT || !descr[b->dtype])
        return;
    char head[128];
    int n = snprintf(head, sizeof head, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,), }",
                     descr[b->dtype], (long long)b->elems);
    int pad = 64 - (10 + n + 1) % 64; /* NPY 1.0: magic, version, length, the dict, spaces, a newline */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, b->name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    unsigned short hl = (unsigned short)(n + pad % 64 + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char le[2] = {(unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
    fwrite(le, 1, 2, f);
    fprintf(f, "%s%*s\n", head, pad % 64, "");
    fwrite(got, (size_t)b->elem_bytes, (size_t)b->elems, f);
    fclose(f);
}

/* Integers exactly; floats within atol + rtol |ref| (a NaN only where the
 * reference has one), the buffer's own tolerance or the config's.  The
 * first wrong element is named; with none, the one of the largest error
 * (the first of them).  Large buffers are compared
 * in pieces on every CPU, combined in order: the same answer as one pass. */
static int64_t compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int buf, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r)
{
    (void)s, (void)p, (void)aux, (void)exact;
    const cfam *c = cf_of(v);
    kf_buffer_set set;
    memset(&set, 0, sizeof set);
    buffers(v, s, NULL, &set);
    const kf_buffer *b = &set.b[buf];
    kf_dtype t = (kf_dtype)b->dtype;
    bool fl = kf_dtype_is_float(t);
    if (b->elems <= 0)
        return 0;
    save_output(b, got);
    const int64_t grain = 1 << 20;
    cmp_part one, *parts = &one;
    if (b->elems > grain && !(parts = malloc((size_t)((b->elems - 1) / grain + 1) * sizeof *parts))) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory comparing %lld elements", (long long)b->elems);
        return b->elems;
    }
    const carg *ga = arg_of_buf(c, buf);
    cmp_job j = {ga->rtol, ga->atol, b, got, ref, parts};
    int64_t pieces = kf_parallel_for(b->elems, grain, compare_piece, &j);
    int64_t bad = 0, show = 0;
    double worst = -1;
    for (int64_t k = 0; k < pieces; k++) {
        if (parts[k].bad && bad == 0)
            show = parts[k].first_bad;
        bad += parts[k].bad;
        if (bad == 0 && parts[k].worst > worst)
            worst = parts[k].worst, show = parts[k].worst_at;
    }
    if (parts != &one)
        free(parts);
    double g = get(t, got, show), f = get(t, ref, show);
    snprintf(r->gpu_value, sizeof r->gpu_value, fl ? "%.9g" : "%.0f", g);
    snprintf(r->ref_value, sizeof r->ref_value, fl ? "%.9g" : "%.0f", f);
    r->abs_err = isnan(g) != isnan(f) ? INFINITY : isnan(g) ? 0 : fabs(g - f);
    r->tolerance = fl ? j.atol + j.rtol * fabs(f) : 0;
    if (bad)
        snprintf(r->worst_at, sizeof r->worst_at, "%s[%lld]", b->name, (long long)show);
    return bad;
}

/* The GPU's check (family.h): every float output within its tolerance
 * (its own, else the config's), which is compare's rule for it. */
static bool tolerance(const kf_variant *v, int buf, double *rtol, double *atol)
{
    const carg *g = arg_of_buf(cf_of(v), buf);
    if (!g || g->scalar || !role_is_output(g->role) || !kf_dtype_is_float((kf_dtype)g->dtype))
        return false;
    *rtol = g->rtol;
    *atol = g->atol;
    return true;
}

int custom_first_output(const cfam *c)
{
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar && role_is_output(c->args[a].role))
            return c->args[a].buf;
    return -1;
}

/* Test hooks (KFORGE_PLANT=KIND@..., fake GPU only: a user's kernel knows
 * nothing of planted faults), on the first output:
 *   drop_last  its last element is left unwritten, and the poison before
 *              each checked run must show it;
 *   shift      its element 0 holds element 1's value (a kernel that reads
 *              its neighbour): an error of |ref[1] - ref[0]|, known from the
 *              data (.npy files), for tests of the tolerances. */
static int plant(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset, int kind,
                 kf_plant *spec, char *why, size_t whylen)
{
    (void)p, (void)offset;
    const cfam *c = cf_of(v);
    int o = custom_first_output(c);
    if ((kind != KF_PLANT_DROP_LAST && kind != KF_PLANT_SHIFT) || o < 0) {
        kf_err(why, whylen, "%s is not a fault of a custom kernel (drop_last, shift)", kf_plant_names[kind]);
        return -1;
    }
    kf_buffer_set set;
    memset(&set, 0, sizeof set);
    buffers(v, s, NULL, &set);
    if (kind == KF_PLANT_SHIFT) {
        if (set.b[o].elems < 2) {
            kf_err(why, whylen, "shift: %s has one element, no neighbour", set.b[o].name);
            return -1;
        }
        *spec = (kf_plant){.elem = 0, .shift = true, .unit = -1, .unwritten = -1};
        return 0;
    }
    *spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = set.b[o].elems - 1};
    return 0;
}

static int64_t plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                           const kf_plant *spec, const void *const *in, void *const *ref, double *const *aux,
                           bool exact, kf_result *r)
{
    (void)offset, (void)in;
    const cfam *c = cf_of(v);
    int o = custom_first_output(c);
    kf_buffer_set set;
    memset(&set, 0, sizeof set);
    buffers(v, s, NULL, &set);
    size_t es = set.b[o].elem_bytes, bytes = (size_t)set.b[o].elems * es;
    unsigned char *y = malloc(bytes + 1);
    if (!y)
        return -1;
    int64_t bad = 0;
    for (int k = 0; k < 2 && bad == 0; k++) {
        memcpy(y, ref[o], bytes);
        if (spec->shift) /* element 0 reads element 1 */
            memcpy(y, y + es, es);
        else
            memset(y + (size_t)spec->unwritten * es, k ? 0x00 : 0xFF, es);
        bad = compare(v, s, p, o, y, ref[o], aux[o], exact, r);
    }
    free(y);
    return bad;
}

/* "bytes", else every buffer once (an inout twice). */
static double bytes(const kf_variant *v, const kf_shape *s)
{
    const cfam *c = cf_of(v);
    if (c->bytes)
        return (double)evi(c->bytes, v, s, 0);
    kf_buffer_set set;
    memset(&set, 0, sizeof set);
    buffers(v, s, NULL, &set);
    double n = 0;
    for (int i = 0; i < set.n; i++)
        n += (set.b[i].role == KF_ROLE_INOUT ? 2.0 : 1.0) * (double)set.b[i].elems * (double)set.b[i].elem_bytes;
    return n;
}

/* "flops": the floating-point operations of one run (GFLOP/s); the family
 * has this callback only when the config gives it. */
static double flops(const kf_variant *v, const kf_shape *s)
{
    const cfam *c = cf_of(v);
    double x = 0;
    char err[64];
    if (!c->flops || expr_eval(c->flops, v, s, &x, err, sizeof err) != 0 || !isfinite(x) || x < 0)
        return 0;
    return x;
}

static int arg_sizes(const kf_variant *v, int kernel, size_t *sizes, int max)
{
    const cfam *c = cf_of(v);
    if (kernel != 0)
        return 0;
    int n = 0;
    for (int a = 0; a < c->nargs && n < max; a++)
        sizes[n++] = c->args[a].scalar ? kf_dtype_size(c->args[a].dtype) : sizeof(unsigned long long);
    return n;
}

/* Argument i as the config gives it: its place, name and kind, and the file
 * (i < 0: the arguments' count). */
static void arg_text(const kf_variant *v, int kernel, int i, char *buf, size_t len)
{
    const cfam *c = cf_of(v);
    char file[300];
    kf_printable(c->config_name, file, sizeof file);
    if (kernel != 0 || i >= c->nargs) {
        buf[0] = '\0';
        return;
    }
    if (i < 0) {
        snprintf(buf, len, "(args in %s)", file);
        return;
    }
    const carg *a = &c->args[i];
    char name[200];
    kf_printable(a->name, name, sizeof name);
    const char *t = kf_dtype_names[a->dtype];
    snprintf(buf, len, "\"%s\" (%s%s%s in %s)", name, !a->scalar ? "a buffer of " : strchr("aeiou", t[0]) ? "an " : "a ",
             t, a->scalar ? " scalar" : "", file);
}

static int enqueue(kf_launcher *l, const kf_variant *v, const kf_shape *s, const kf_plan_info *pi,
                   const kf_buffers *b)
{
    const cfam *c = cf_of(v);
    const cplan *t = (const cplan *)pi->priv;
    union {
        unsigned long long ptr;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        float f32;
        double f64;
        uint16_t f16;           /* bfloat16, float16: the bits */
        int8_t i8;
        uint8_t u8;
    } store[MAX_ARGS];
    void *args[MAX_ARGS];
    for (int a = 0; a < c->nargs; a++) {
        const carg *g = &c->args[a];
        if (!g->scalar) {
            store[a].ptr = b->at[g->buf];
        } else {
            double x = 0;
            char err[64];
            expr_eval(g->value, v, s, &x, err, sizeof err); /* checked by check_shape */
            switch (g->dtype) {
            case KF_INT32: store[a].i32 = (int32_t)x; break;
            case KF_UINT32: store[a].u32 = (uint32_t)(int64_t)x; break;
            case KF_INT8: store[a].i8 = (int8_t)(int64_t)x; break;
            case KF_UINT8: store[a].u8 = (uint8_t)(int64_t)x; break;
            case KF_INT64: store[a].i64 = (int64_t)x; break;
            case KF_FLOAT32: store[a].f32 = (float)x; break;
            case KF_BFLOAT16: case KF_FLOAT16: store[a].f16 = kf_float_to_half(g->dtype, (float)x); break;
            default: store[a].f64 = x; break;
            }
        }
        args[a] = &store[a];
    }
    kf_dim3 block;
    unsigned smem;
    block_shape(v, &block, &smem);
    return kf_launch_kernel(l, 0, t->grid, block, smem, args);
}

/* Fake GPU: the bytes at a bandwidth that falls off away from the middle
 * of each param's list (one best point). */
static double fake_ms(const kf_variant *v, const kf_shape *s, const kf_device *d, const kf_plan_info *pi)
{
    (void)d, (void)pi;
    const cfam *c = cf_of(v);
    double bw = 2500.0;
    for (int i = 0; i < c->fam.nparams; i++) {
        int k = 0;
        while (k < c->nvalues[i] && c->values[i][k] != v->p[i])
            k++;
        bw /= 1.0 + 0.1 * fabs((double)k - (double)(c->nvalues[i] / 2));
    }
    return bytes(v, s) / (bw * 1e9) * 1e3 + 0.002;
}

/* A parameter set of the same source (refp), or the kernel of its own: a
 * variant of the companion family, whose source, launch and enqueue are
 * its own (the engine asks the reference variant's family for them). */
static int reference_variant(const kf_variant *v, const kf_shape *s, kf_variant *ref)
{
    (void)s;
    const cfam *c = cf_of(v);
    if (c->ref) {
        variant_defaults(ref, c->ref->index); /* each param has its one value */
        snprintf(ref->name, sizeof ref->name, "reference");
        return 0;
    }
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "reference");
    ref->family = v->family;
    memcpy(ref->p, c->refp, sizeof ref->p);
    return 0;
}

/* The family interface over c; make (spec.c) takes flops away when the
 * config gives no "flops". */
void custom_fam_init(cfam *c)
{
    c->entries[0] = c->entry;
    c->fam = (kf_family){
        .name = c->famname, .doc = "a user's kernel (kernel \"custom\")", .params = c->params, .sizes = c->sizes,
        .p_block = -1, .entries = c->entries, .nentries = 1, .check = check, .check_shape = check_shape,
        .label = label, .source = source, .block_shape = block_shape, .plan = plan, .buffers = buffers, .fill = fill, .scratch_init = scratch_init,
        .bytes = bytes, .enqueue = enqueue, .reference = reference, .compare = compare, .tolerance = tolerance, .plant = plant,
        .plant_check = plant_check, .fake_ms = fake_ms, .reference_variant = reference_variant,
        .export_source = custom_export_source, .flops = flops,
        .arg_sizes = arg_sizes, .arg_text = arg_text, .constants = constants, .constant_fill = constant_fill, .ext = c};
}

// ---------------------------------------------------------------------------
// registration

/* c's include_dir: its source's folder, absolute, so that its headers are
 * found from any directory; left "" (the current directory's, as before)
 * when it cannot be written on the one line of deps.h. */
static void set_include_dir(cfam *c)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(c->source_path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - c->source_path), c->source_path);
    else
        snprintf(dir, sizeof dir, ".");
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    if (!realpath(dir, real))
        return;
    for (const unsigned char *p = (const unsigned char *)real; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return;
    snprintf(c->include_dir, sizeof c->include_dir, "%s", real);
}

/* Appends c's source and the files it reads (deps.h): 0, or -1 out of memory. */
static int hash_text(strbuf *b, const cfam *c)
{
    strbuf s = {0};
    if (c->include_dir[0])
        sb_printf(&s, RTC_INCLUDE_DIRECTIVE "%s\n", c->include_dir);
    sb_append(&s, c->source_text);
    char *deps = s.failed ? NULL : rtc_deps_text(s.s);
    sb_free(&s);
    if (!deps)
        return -1;
    /* the files by their contents, not where they are: the same source
     * and headers in another folder are the same source */
    sb_printf(b, "source %zu\n", strlen(c->source_text));
    sb_append(b, c->source_text);
    for (const char *p = deps; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *sp = memrchr(p, ' ', n);
        const char *name = memrchr(p, '/', sp ? (size_t)(sp - p) : n);
        sb_printf(b, "\nfile %.*s", (int)(n - (size_t)(name ? name + 1 - p : 0)), name ? name + 1 : p);
        p = eol ? eol + 1 : p + n;
    }
    free(deps);
    return 0;
}

/* c->fam.source_hash (family.h), and the include dirs it rests on. */
static int set_source_hash(cfam *c, char *err, size_t errlen)
{
    set_include_dir(c);
    if (c->ref)
        set_include_dir(c->ref);
    strbuf b = {0};
    if (hash_text(&b, c) != 0 || (c->ref && (sb_append(&b, "\nreference\n"), hash_text(&b, c->ref) != 0)) ||
        b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    kf_hash_hex(b.s, b.len, c->source_hash);
    sb_free(&b);
    c->fam.source_hash = c->source_hash;
    if (c->ref) {
        snprintf(c->ref->source_hash, sizeof c->ref->source_hash, "%s", c->source_hash);
        c->ref->fam.source_hash = c->ref->source_hash;
    }
    return 0;
}


/* A config without "reference": the reference is the first parameter set,
 * in the order of "params" (the last varying fastest, as Kernel Tuner's
 * itertools.product), that passes the family's check (constraints without
 * sizes, the block's limits): the first value of each param may be no
 * configuration at all (Kernel Tuner's matmul: block_size_x 16 with
 * block_size_y 1 and tile_size_y 1 breaks block_size_x ==
 * block_size_y * tile_size_y, and faults).  None passes: the first values,
 * whose failure then names the reference. */
static void default_reference(cfam *c)
{
    kf_variant v;
    variant_defaults(&v, c->index);
    int n = c->fam.nparams, k[KF_MAX_PARAMS] = {0};
    for (long tries = 0; tries < 4000000; tries++) {
        for (int i = 0; i < n; i++)
            v.p[i] = c->values[i][k[i]];
        char why[256];
        if (check(&v, NULL, why, sizeof why) == 0) {
            for (int i = 0; i < n; i++)
                c->refp[i] = v.p[i];
            return;
        }
        int i = n - 1;
        while (i >= 0 && ++k[i] == c->nvalues[i])
            k[i--] = 0;
        if (i < 0)
            return;
    }
}

/* The family of the config's "custom" object, registered (with its
 * reference kernel's family first, when it has one): its index, the same
 * index again for the same spec and source, or -1 and why. */
int custom_family_make(const char *spec_json, const char *config_path, char *err, size_t errlen)
{
    int rc = -1;
    cfam *c = custom_spec_make(spec_json, config_path, err, errlen);
    if (!c)
        return -1;
    if (set_source_hash(c, err, errlen) != 0)
        goto out;
    c->fam.config_members = custom_config_members; /* not its reference kernel's: never tuned */
    for (int i = 0; i < nmade; i++)
        if (strcmp(made[i]->famname, c->famname) == 0) {
            if (strcmp(made[i]->identity, c->identity) == 0) {
                rc = made[i]->index;
                goto out;
            }
            kf_err(err, errlen, "custom.name: \"%s\" (%s) is already the name of another custom kernel (%s, "
                                "entry %s) with a different spec or source: give this one another \"name\"",
                   c->famname, c->source_path, made[i]->source_path, made[i]->entry);
            goto out;
        }
    char rerr[256];
    /* a reference kernel of its own first: a family of its own, which the
     * reference variant names (reference_variant) */
    if (c->ref && (c->ref->index = family_register(&c->ref->fam, rerr, sizeof rerr)) < 0) {
        kf_err(err, errlen, "custom.reference: %s: give the custom kernel another \"name\"", rerr);
        goto out;
    }
    if ((c->index = family_register(&c->fam, rerr, sizeof rerr)) < 0) {
        kf_err(err, errlen, "custom.name: %s: give the custom kernel another \"name\"", rerr);
        if (c->ref)
            c = NULL; /* its reference is registered: kept */
        goto out;
    }
    made[nmade++] = c;
    rc = c->index;
    if (!c->ref_given)
        default_reference(c);
    c = NULL;
    if (custom_spec_probe(made[nmade - 1], err, errlen) != 0)
        rc = -1;
out:
    custom_cfam_free(c);
    return rc;
}
