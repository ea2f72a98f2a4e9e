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
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "export_common.h"
#include "expr.h"
#include "family.h"
#include "rtc.h"
#include "util.h"

/* The element types a custom buffer or scalar may have: every kf_dtype.
 * bfloat16 and float16 values are made as doubles, rounded to float and then
 * to the 2-byte type (to nearest even), and compared as floats. */
#define CUSTOM_DTYPES KF_DTYPE_COUNT
#define DTYPE_LIST "int32, uint32, int64, float32, float64, bfloat16, float16"
#define MAX_ARGS 16
#define MAX_VALUES 4096
#define MAX_CONSTRAINTS 64

typedef enum { FILL_RANDOM, FILL_ZEROS, FILL_ONES, FILL_IOTA, FILL_CONSTANT, FILL_NPY } fill_kind;
static const char *const fill_names[] = {"random", "zeros", "ones", "iota", "constant"};

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
    char source_path[PATH_MAX];
    char *source_text;
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
    /* "reference": {"source", "entry", ...}: a kernel of its own, made a
     * family of its own (the companion: its params, each at one value, its
     * launch, the same args), registered beside this one; NULL otherwise */
    struct cfam *ref;
    double rtol, atol;
    bool deterministic;
    int index;
} cfam;

static cfam *made[KF_MAX_FAMILIES];
static int nmade;

static const cfam *cf_of(const kf_variant *v) { return (const cfam *)family_of(v)->ext; }
static void buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set);
static char *export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen);

// ---------------------------------------------------------------------------
// evaluation

/* An expression at v and s (s NULL: no sizes), as an integer: 0, or -1 and
 * why (prefixed by what). */
static int eval_int(const kf_expr *e, const kf_variant *v, const kf_shape *s, const char *what, int64_t *out,
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
    return e && eval_int(e, v, s, "", &x, why, sizeof why) == 0 ? x : fallback;
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

static bool listed(const cfam *c, int i, int64_t x)
{
    for (int k = 0; k < c->nvalues[i]; k++)
        if (c->values[i][k] == x)
            return true;
    return false;
}

/* Every value listed; the constraints without sizes. */
static int check(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    (void)dev;
    const cfam *c = cf_of(v);
    for (int i = 0; i < c->fam.nparams; i++)
        if (!listed(c, i, v->p[i])) {
            kf_err(why, whylen, "%s = %lld is not one of the listed values (%s)", c->params[i].name,
                   (long long)v->p[i], c->params[i].allowed);
            return -1;
        }
    for (int i = 0; i < c->ncons; i++) {
        if (expr_uses_n(c->cons[i]))
            continue;
        int64_t x;
        if (eval_int(c->cons[i], v, NULL, c->cons_text[i], &x, why, whylen) != 0)
            return -1;
        if (!x) {
            kf_err(why, whylen, "constraint \"%s\" is false", c->cons_text[i]);
            return -1;
        }
    }
    return 0;
}

/* The constraints with sizes, and every expression must evaluate. */
static int check_shape(const kf_variant *v, kf_shape *s, char *why, size_t whylen)
{
    const cfam *c = cf_of(v);
    int64_t x;
    for (int i = 0; i < c->ncons; i++) {
        if (!expr_uses_n(c->cons[i]))
            continue;
        if (eval_int(c->cons[i], v, s, c->cons_text[i], &x, why, whylen) != 0)
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
        if (eval_int(g->scalar ? g->value : g->length, v, s, what, &x, why, whylen) != 0)
            return -1;
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
        if (eval_int(g->length, v, s, what, &x, why, whylen) != 0)
            return -1;
        if (x < 1 || x > (1LL << 30)) {
            kf_err(why, whylen, "%s = %lld: a constant holds 1..2^30 elements", what, (long long)x);
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
        if (c->grid[d] && eval_int(c->grid[d], v, s, what, &x, why, whylen) != 0)
            return -1;
    }
    if (c->bytes && eval_int(c->bytes, v, s, "bytes", &x, why, whylen) != 0)
        return -1;
    double fl;
    char ferr[256];
    if (c->flops && expr_eval(c->flops, v, s, &fl, ferr, sizeof ferr) != 0) {
        kf_err(why, whylen, "flops: %s", ferr);
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

static char *source(const kf_variant *v, char *err, size_t errlen)
{
    const cfam *c = cf_of(v);
    strbuf b = {0};
    codegen_comment(&b, v);
    sb_printf(&b, "//   %-20s %s (%s)\n", "source", c->source_path, c->entry);
    for (int i = 0; i < c->fam.nparams; i++)
        sb_printf(&b, "#define %s %lld\n", c->params[i].name, (long long)v->p[i]);
    sb_printf(&b, "#line 1 \"%s\"\n", c->source_path); /* no quotes, backslashes or control characters: make() */
    sb_append(&b, c->source_text);
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

static bool role_expected(const carg *g) { return g && g->expect && g->role != KF_ROLE_IN; }

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
    if (!g || g->scalar || g->role == KF_ROLE_IN || !kf_dtype_is_float((kf_dtype)g->dtype))
        return false;
    *rtol = g->rtol;
    *atol = g->atol;
    return true;
}

static int first_output(const cfam *c)
{
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar && c->args[a].role != KF_ROLE_IN)
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
    int o = first_output(c);
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
    int o = first_output(c);
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

// ---------------------------------------------------------------------------
// making a family from the spec

typedef struct {
    char *err;
    size_t errlen;
} mk;

static int bad(mk *m, const char *field, const char *fmt, ...) KF_PRINTF(3, 4);
static int bad(mk *m, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kf_err(m->err, m->errlen, "custom%s%s: %s", field[0] ? "." : "", field, msg);
    return -1;
}

static void given(const cJSON *j, char *buf, size_t len)
{
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    snprintf(buf, len, "%s", t ? t : "nothing");
    if (strlen(buf) > 60)
        snprintf(buf + 57, len - 57, "...");
    free(t);
}

static bool ident(const char *s)
{
    if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return strlen(s) < 64;
}

static int check_keys(mk *m, const char *field, const cJSON *o, const char *const *keys, int n)
{
    for (const cJSON *k = o->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(k->string, keys[i]) == 0;
        if (!ok) {
            const char *sug = kf_suggest(k->string, keys, n);
            strbuf b = {0};
            for (int i = 0; i < n; i++)
                sb_printf(&b, "%s%s", i ? ", " : "", keys[i]);
            int rc = bad(m, field, "unknown key \"%s\"%s%s%s (known: %s)", k->string,
                         sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : "", b.s ? b.s : "");
            sb_free(&b);
            return rc;
        }
    }
    return 0;
}

static int get_integer(mk *m, const char *field, const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    char g[80];
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || j->valuedouble < (double)lo ||
        j->valuedouble > (double)hi) {
        given(j, g, sizeof g);
        return bad(m, field, "expected an integer %lld..%lld, got %s", (long long)lo, (long long)hi, g);
    }
    *out = (int64_t)j->valuedouble;
    return 0;
}

/* An expression: a string or a number, parsed against the family; its
 * text (malloc'd) in *keep unless keep is NULL. */
static int get_expr_keep(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out, char **keep)
{
    char text[1024], g[80];
    if (cJSON_IsString(j))
        snprintf(text, sizeof text, "%s", j->valuestring);
    else if (cJSON_IsNumber(j))
        snprintf(text, sizeof text, "%.17g", j->valuedouble);
    else {
        given(j, g, sizeof g);
        return bad(m, field, "expected an expression over params and sizes (a string or a number), got %s", g);
    }
    char err[512];
    if (!(*out = expr_parse_for(text, &c->fam, err, sizeof err)))
        return bad(m, field, "%s", err);
    if (keep && !(*keep = strdup(text)))
        return bad(m, field, "out of memory");
    return 0;
}

static int get_expr(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out)
{
    return get_expr_keep(m, c, field, j, out, NULL);
}

static int parse_params(mk *m, cfam *c, const cJSON *j)
{
    if (!cJSON_IsObject(j) || !j->child)
        return bad(m, "params", "expected an object of tunable parameters, e.g. {\"block_size_x\": [64, 128, 256]}");
    int n = 0;
    for (const cJSON *p = j->child; p; p = p->next, n++) {
        char f[160];
        snprintf(f, sizeof f, "params.%s", p->string);
        if (n == KF_MAX_PARAMS)
            return bad(m, "params", "at most %d parameters", KF_MAX_PARAMS);
        if (!ident(p->string))
            return bad(m, f, "a parameter's name must be a C identifier (it is #defined)");
        int64_t *vals = malloc(sizeof *vals * MAX_VALUES);
        if (!vals)
            return bad(m, f, "out of memory");
        c->values[n] = vals;
        int nv = 0;
        if (cJSON_IsArray(p)) {
            int i = 0;
            for (const cJSON *x = p->child; x; x = x->next, i++) {
                char fi[200];
                snprintf(fi, sizeof fi, "%s[%d]", f, i);
                if (nv == MAX_VALUES)
                    return bad(m, f, "at most %d values", MAX_VALUES);
                if (get_integer(m, fi, x, -(1LL << 40), 1LL << 40, &vals[nv]) != 0)
                    return -1;
                for (int k = 0; k < nv; k++)
                    if (vals[k] == vals[nv])
                        return bad(m, fi, "%lld is listed twice", (long long)vals[nv]);
                nv++;
            }
        } else if (cJSON_IsObject(p) && cJSON_GetObjectItemCaseSensitive(p, "range")) {
            static const char *const keys[] = {"range", "step"};
            if (check_keys(m, f, p, keys, 2) != 0)
                return -1;
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "range"), *st = cJSON_GetObjectItemCaseSensitive(p, "step");
            int64_t lo, hi, step = 1;
            char fr[200];
            snprintf(fr, sizeof fr, "%s.range", f);
            if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2)
                return bad(m, fr, "expected [first, last]");
            if (get_integer(m, fr, r->child, -(1LL << 40), 1LL << 40, &lo) != 0 ||
                get_integer(m, fr, r->child->next, lo, lo + MAX_VALUES * (1LL << 20), &hi) != 0)
                return -1;
            char fs[200];
            snprintf(fs, sizeof fs, "%s.step", f);
            if (st && get_integer(m, fs, st, 1, 1LL << 40, &step) != 0)
                return -1;
            for (int64_t x = lo; x <= hi; x += step) {
                if (nv == MAX_VALUES)
                    return bad(m, f, "at most %d values", MAX_VALUES);
                vals[nv++] = x;
            }
        } else {
            char g[80];
            given(p, g, sizeof g);
            return bad(m, f, "expected a list of integers or {\"range\": [first, last]}, got %s", g);
        }
        if (nv == 0)
            return bad(m, f, "expected at least one value");
        c->nvalues[n] = nv;
        int64_t lo = vals[0], hi = vals[0];
        strbuf al = {0};
        for (int k = 0; k < nv; k++) {
            lo = vals[k] < lo ? vals[k] : lo;
            hi = vals[k] > hi ? vals[k] : hi;
            if (k < 12)
                sb_printf(&al, "%s%lld", k ? ", " : "", (long long)vals[k]);
        }
        if (nv > 12)
            sb_printf(&al, ", ... (%d values)", nv);
        c->pnames[n] = strdup(p->string);
        c->pallowed[n] = sb_take(&al);
        if (!c->pnames[n] || !c->pallowed[n])
            return bad(m, f, "out of memory");
        c->params[n] = (kf_param){.name = c->pnames[n], .kind = KF_PK_INT, .lo = lo, .hi = hi, .def = vals[0],
                                  .allowed = c->pallowed[n], .macro = c->pnames[n], .doc = "a tunable parameter "
                                  "of the user's kernel (#defined before its source)", .sweep = vals, .nsweep = nv};
    }
    c->fam.nparams = n;
    return 0;
}

static int parse_sizes(mk *m, cfam *c, const cJSON *j)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > KF_MAX_DIMS)
        return bad(m, "sizes", "expected a list of 1..%d size names, e.g. [\"n\"] or [\"width\", \"height\"]",
                   KF_MAX_DIMS);
    int n = 0;
    for (const cJSON *s = j->child; s; s = s->next, n++) {
        char f[32];
        snprintf(f, sizeof f, "sizes[%d]", n);
        if (!cJSON_IsString(s) || !ident(s->valuestring))
            return bad(m, f, "expected a size name (a C identifier)");
        if (param_find(c->params, c->fam.nparams, s->valuestring) >= 0 ||
            param_find(c->sizes, n, s->valuestring) >= 0)
            return bad(m, f, "\"%s\" is already a parameter or size", s->valuestring);
        if (!(c->snames[n] = strdup(s->valuestring)))
            return bad(m, f, "out of memory");
        c->sizes[n] = (kf_param){.name = c->snames[n], .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 34,
                                 .pow2_strings = true, .allowed = "an integer 1..2^34", .doc = "a problem size"};
    }
    c->fam.nsizes = n;
    return 0;
}

/* A .npy file (NumPy's format, version 1 to 3): little-endian, C order,
 * of the element type want ('<i4' int32, '<u4' uint32, '<i8' int64, '<f4'
 * float32, '<f8' float64, '<f2' float16; bfloat16, which NumPy lacks, as
 * its bits: '<u2' (x.view(np.uint16)) or 2-byte void '|V2' / '<V2', what
 * np.save writes for ml_dtypes.bfloat16); any shape, read as its elements
 * in order.  path relative to the config's folder.  0 and the data, or -1
 * and why. */
static int npy_load(const cfam *c, const char *name, kf_dtype want, void **data, int64_t *elems, char *why,
                    size_t whylen)
{
    static const char *const descr[KF_DTYPE_COUNT][3] = {
        [KF_INT32] = {"'<i4'"}, [KF_UINT32] = {"'<u4'"}, [KF_INT64] = {"'<i8'"}, [KF_FLOAT32] = {"'<f4'"},
        [KF_FLOAT64] = {"'<f8'"}, [KF_BFLOAT16] = {"'<u2'", "'|V2'", "'<V2'"}, [KF_FLOAT16] = {"'<f2'"}};
    char path[PATH_MAX + 256];
    if (name[0] == '/' || !c->config_dir[0])
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    size_t len;
    char err[256];
    unsigned char *f = (unsigned char *)kf_read_file_max(path, (size_t)1 << 34, &len, err, sizeof err);
    if (!f) {
        kf_err(why, whylen, "cannot read %s: %s", path, err);
        return -1;
    }
    size_t hl = 0, off = 0;
    if (len >= 10 && memcmp(f, "\x93NUMPY", 6) == 0 && f[6] == 1)
        hl = (size_t)f[8] | (size_t)f[9] << 8, off = 10;
    else if (len >= 12 && memcmp(f, "\x93NUMPY", 6) == 0 && (f[6] == 2 || f[6] == 3))
        hl = (size_t)f[8] | (size_t)f[9] << 8 | (size_t)f[10] << 16 | (size_t)f[11] << 24, off = 12;
    if (!off || off + hl > len) {
        kf_err(why, whylen, "%s is not a .npy file (NumPy's format: \\x93NUMPY, version 1 to 3)", path);
        free(f);
        return -1;
    }
    char head[4096];
    snprintf(head, sizeof head, "%.*s", (int)(hl < sizeof head - 1 ? hl : sizeof head - 1), (const char *)f + off);
    const char *d = strstr(head, "'descr':"), *fo = strstr(head, "'fortran_order':"), *sh = strstr(head, "'shape':");
    if (!d || !fo || !sh || strncmp(fo + 16 + strspn(fo + 16, " "), "False", 5) != 0) {
        kf_err(why, whylen, "%s: a .npy header with 'descr', 'fortran_order': False (C order) and 'shape' was expected",
               path);
        free(f);
        return -1;
    }
    d += 8 + strspn(d + 8, " ");
    bool known = false;
    for (int k = 0; k < 3 && descr[want][k] && !known; k++)
        known = strncmp(d, descr[want][k], strlen(descr[want][k])) == 0;
    if (!known) {
        kf_err(why, whylen, "%s holds %.5s elements, the buffer is %s (%s%s)", path, d, kf_dtype_names[want],
               descr[want][0], want == KF_BFLOAT16 ? ", its bits as uint16, or '|V2'" : "");
        free(f);
        return -1;
    }
    int64_t n = 1;
    const char *p = strchr(sh, '(');
    for (p = p ? p + 1 : sh; *p && *p != ')'; p++)
        if (*p >= '0' && *p <= '9') {
            char *end;
            long long k = strtoll(p, &end, 10);
            n *= k;
            p = end - 1;
        }
    size_t es = kf_dtype_size(want);
    if (n < 1 || (size_t)n * es != len - off - hl) {
        kf_err(why, whylen, "%s: its shape gives %lld elements, its data holds %zu bytes", path, (long long)n,
               len - off - hl);
        free(f);
        return -1;
    }
    void *x = malloc((size_t)n * es);
    if (!x) {
        kf_err(why, whylen, "%s: out of memory", path);
        free(f);
        return -1;
    }
    memcpy(x, f + off + hl, (size_t)n * es);
    free(f);
    *data = x;
    *elems = n;
    return 0;
}

/* {"rtol": r, "atol": a} at field: each given one into *rtol, *atol. */
static int parse_tolerance(mk *m, const char *field, const cJSON *tol, double *rtol, double *atol)
{
    static const char *const tkeys[] = {"rtol", "atol"};
    char g[80], f[160];
    if (!cJSON_IsObject(tol)) {
        given(tol, g, sizeof g);
        return bad(m, field, "expected {\"rtol\": r, \"atol\": a} (|got - ref| <= atol + rtol |ref|), got %s", g);
    }
    if (check_keys(m, field, tol, tkeys, 2) != 0)
        return -1;
    double *out[2] = {rtol, atol};
    for (int k = 0; k < 2; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(tol, tkeys[k]);
        snprintf(f, sizeof f, "%s.%s", field, tkeys[k]);
        if (!x)
            continue;
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || !isfinite(x->valuedouble)) {
            given(x, g, sizeof g);
            return bad(m, f, "expected a number >= 0, got %s", g);
        }
        *out[k] = x->valuedouble;
    }
    return 0;
}

/* A buffer's or a constant's "fill" (x's defaults set by the caller; fi
 * NULL keeps them); fd names the field in messages. */
static int parse_fill(mk *m, cfam *c, const char *fd, const cJSON *fi, carg *x)
{
    char g[80];
    static const char *const fill_allowed =
        "{\"random\": [lo, hi]}, \"zeros\", \"ones\", \"iota\", {\"constant\": x} or {\"npy\": \"file.npy\"}";
    if (!fi)
        return 0;
    given(fi, g, sizeof g);
    if (cJSON_IsString(fi)) {
        int k = kf_lookup(fill_names, 4, fi->valuestring);
        if (k < 1)
            return bad(m, fd, "expected %s, got %s", fill_allowed, g);
        x->fill = (fill_kind)k;
        return 0;
    }
    if (!cJSON_IsObject(fi) || cJSON_GetArraySize(fi) != 1)
        return bad(m, fd, "expected %s, got %s", fill_allowed, g);
    const cJSON *k = fi->child;
    if (strcmp(k->string, "npy") == 0 && cJSON_IsString(k)) {
        char why[PATH_MAX + 512];
        if (npy_load(c, k->valuestring, x->dtype, &x->npy, &x->npy_elems, why, sizeof why) != 0)
            return bad(m, fd, "%s", why);
        x->fill = FILL_NPY;
        return 0;
    }
    if (strcmp(k->string, "constant") == 0 && cJSON_IsNumber(k)) {
        x->fill = FILL_CONSTANT;
        x->lo = k->valuedouble;
        return 0;
    }
    if (strcmp(k->string, "random") == 0 && cJSON_IsArray(k) && cJSON_GetArraySize(k) == 2 &&
        cJSON_IsNumber(k->child) && cJSON_IsNumber(k->child->next) &&
        k->child->valuedouble <= k->child->next->valuedouble) {
        x->fill = FILL_RANDOM;
        x->lo = k->child->valuedouble;
        x->hi = k->child->next->valuedouble;
        if (!kf_dtype_is_float(x->dtype) && (x->lo != floor(x->lo) || x->hi != floor(x->hi)))
            return bad(m, fd, "an integer buffer's random range needs integer bounds, got %s", g);
        return 0;
    }
    return bad(m, fd, "expected %s, got %s", fill_allowed, g);
}

static int parse_arg(mk *m, cfam *c, int a, const cJSON *j)
{
    char f[64], g[80];
    snprintf(f, sizeof f, "args[%d]", a);
    carg *x = &c->args[a];
    if (!cJSON_IsObject(j))
        return bad(m, f, "expected a buffer {\"name\", \"dtype\", \"length\", \"role\", \"fill\"} or a scalar "
                         "{\"name\", \"scalar\", \"value\"}");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof x->name)
        return bad(m, f, "expected a \"name\" (a string)");
    snprintf(x->name, sizeof x->name, "%s", name->valuestring);
    snprintf(f, sizeof f, "args[%d] (%s)", a, x->name);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scalar");
    char fd[96];
    if (sc) {
        static const char *const keys[] = {"name", "scalar", "value"};
        if (check_keys(m, f, j, keys, 3) != 0)
            return -1;
        x->scalar = true;
        snprintf(fd, sizeof fd, "%s.scalar", f);
        int t = cJSON_IsString(sc) ? kf_lookup(kf_dtype_names, CUSTOM_DTYPES, sc->valuestring) : -1;
        if (t < 0) {
            given(sc, g, sizeof g);
            return bad(m, fd, "expected a dtype (" DTYPE_LIST "), got %s", g);
        }
        x->dtype = (kf_dtype)t;
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(j, "value");
        snprintf(fd, sizeof fd, "%s.value", f);
        if (!val)
            return bad(m, fd, "missing: a scalar needs a value (an expression, e.g. \"n\")");
        return get_expr_keep(m, c, fd, val, &x->value, &x->value_text);
    }
    static const char *const keys[] = {"name", "dtype", "length", "role", "fill", "tolerance"};
    if (check_keys(m, f, j, keys, 6) != 0)
        return -1;
    if (c->nbufs == KF_MAX_BUFFERS)
        return bad(m, f, "at most %d buffers", KF_MAX_BUFFERS);
    x->buf = c->nbufs++;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    snprintf(fd, sizeof fd, "%s.dtype", f);
    int t = cJSON_IsString(dt) ? kf_lookup(kf_dtype_names, CUSTOM_DTYPES, dt->valuestring) : -1;
    if (t < 0) {
        given(dt, g, sizeof g);
        return bad(m, fd, "expected a dtype (" DTYPE_LIST "), got %s", g);
    }
    x->dtype = (kf_dtype)t;
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(j, "role");
    snprintf(fd, sizeof fd, "%s.role", f);
    int r = cJSON_IsString(ro) ? kf_lookup(kf_role_names, KF_ROLE_SCRATCH, ro->valuestring) : -1;
    if (r < 0) {
        given(ro, g, sizeof g);
        return bad(m, fd, "expected a role (in, out or inout), got %s", g);
    }
    x->role = (kf_role)r;
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(j, "length");
    snprintf(fd, sizeof fd, "%s.length", f);
    if (!len)
        return bad(m, fd, "missing: a buffer needs a length in elements (an expression, e.g. \"n\")");
    if (get_expr_keep(m, c, fd, len, &x->length, &x->length_text) != 0)
        return -1;
    /* its own tolerance, key by key; the config-wide one fills the rest (make) */
    x->rtol = x->atol = NAN;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    snprintf(fd, sizeof fd, "%s.tolerance", f);
    if (tol && x->role == KF_ROLE_IN)
        return bad(m, fd, "only an out or inout buffer is compared: an input takes no tolerance");
    if (tol && !kf_dtype_is_float(x->dtype))
        return bad(m, fd, "a %s buffer is compared exactly: only a float buffer takes a tolerance",
                   kf_dtype_names[x->dtype]);
    if (tol && parse_tolerance(m, fd, tol, &x->rtol, &x->atol) != 0)
        return -1;
    const cJSON *fi = cJSON_GetObjectItemCaseSensitive(j, "fill");
    snprintf(fd, sizeof fd, "%s.fill", f);
    x->fill = x->role == KF_ROLE_OUT ? FILL_ZEROS : FILL_RANDOM;
    x->lo = kf_dtype_is_float(x->dtype) ? -1 : -100;
    x->hi = kf_dtype_is_float(x->dtype) ? 1 : 100;
    return parse_fill(m, c, fd, fi, x);
}

/* One of "constants": {"name", "dtype", "length", "fill"}, a variable of
 * the module (a __constant__ array) the engine fills before any launch. */
static int parse_constant(mk *m, cfam *c, int k, const cJSON *j)
{
    char f[96], fd[128], g[80];
    snprintf(f, sizeof f, "constants[%d]", k);
    carg *x = &c->consts[k];
    if (!cJSON_IsObject(j))
        return bad(m, f, "expected {\"name\", \"dtype\", \"length\", \"fill\"}: a __constant__ variable of the source "
                         "and its contents");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(name) || !ident(name->valuestring)) {
        given(name, g, sizeof g);
        return bad(m, f, "expected a \"name\": the variable's name in the source, a C identifier (e.g. \"d_filter\"), "
                         "got %s", g);
    }
    snprintf(x->name, sizeof x->name, "%s", name->valuestring);
    snprintf(f, sizeof f, "constants[%d] (%s)", k, x->name);
    static const char *const keys[] = {"name", "dtype", "length", "fill"};
    if (check_keys(m, f, j, keys, 4) != 0)
        return -1;
    for (int q = 0; q < k; q++)
        if (strcmp(c->consts[q].name, x->name) == 0)
            return bad(m, f, "\"%s\" is already constants[%d]", x->name, q);
    if (param_find(c->params, c->fam.nparams, x->name) >= 0)
        return bad(m, f, "\"%s\" is a parameter's name (#defined before the source): the variable needs another",
                   x->name);
    x->role = KF_ROLE_IN;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    snprintf(fd, sizeof fd, "%s.dtype", f);
    int t = cJSON_IsString(dt) ? kf_lookup(kf_dtype_names, CUSTOM_DTYPES, dt->valuestring) : -1;
    if (t < 0) {
        given(dt, g, sizeof g);
        return bad(m, fd, "expected a dtype (" DTYPE_LIST "), got %s", g);
    }
    x->dtype = (kf_dtype)t;
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(j, "length");
    snprintf(fd, sizeof fd, "%s.length", f);
    if (!len)
        return bad(m, fd, "missing: a constant needs a length in elements (an expression over sizes, e.g. \"17 * 17\")");
    if (get_expr(m, c, fd, len, &x->length) != 0)
        return -1;
    if (expr_uses_params(x->length))
        return bad(m, fd, "a constant's length may use sizes only, not params (the reference and every candidate read "
                          "the same constants)");
    snprintf(fd, sizeof fd, "%s.fill", f);
    x->fill = FILL_RANDOM;
    x->lo = kf_dtype_is_float(x->dtype) ? -1 : -100;
    x->hi = kf_dtype_is_float(x->dtype) ? 1 : 100;
    return parse_fill(m, c, fd, cJSON_GetObjectItemCaseSensitive(j, "fill"), x);
}

static int parse_dims(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out)
{
    if (cJSON_IsString(j) || cJSON_IsNumber(j))
        return get_expr(m, c, field, j, &out[0]);
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > 3)
        return bad(m, field, "expected 1 to 3 expressions (x, y, z)");
    int d = 0;
    for (const cJSON *x = j->child; x; x = x->next, d++) {
        char f[48];
        snprintf(f, sizeof f, "%s[%d]", field, d);
        if (get_expr(m, c, f, x, &out[d]) != 0)
            return -1;
    }
    return 0;
}

static void cfam_free(cfam *c)
{
    if (!c)
        return;
    for (int i = 0; i < KF_MAX_PARAMS; i++)
        free(c->values[i]), free(c->pnames[i]), free(c->pallowed[i]);
    for (int i = 0; i < KF_MAX_DIMS; i++)
        free(c->snames[i]);
    for (int a = 0; a < MAX_ARGS; a++) {
        expr_free(c->args[a].length), expr_free(c->args[a].value), free(c->args[a].npy), free(c->args[a].expect);
        free(c->args[a].length_text), free(c->args[a].value_text);
    }
    for (int k = 0; k < KF_MAX_CONSTANTS; k++)
        expr_free(c->consts[k].length), free(c->consts[k].npy);
    cfam_free(c->ref);
    for (int d = 0; d < 3; d++)
        expr_free(c->grid[d]), expr_free(c->block[d]);
    expr_free(c->smem);
    expr_free(c->bytes);
    expr_free(c->flops);
    for (int i = 0; i < c->ncons; i++)
        expr_free(c->cons[i]), free(c->cons_text[i]);
    free(c->identity);
    free(c->source_text);
    free(c);
}

/* An entry that names a kernel: a C identifier, or one with template
 * arguments ("naive<float>"), as the engine looks kernels up. */
static bool entry_name(const char *s)
{
    size_t base = strcspn(s, "<"), n = strlen(s);
    char id[80];
    if (base == 0 || base >= sizeof id)
        return false;
    snprintf(id, sizeof id, "%.*s", (int)base, s);
    return ident(id) && (!s[base] || (n > base + 2 && s[n - 1] == '>'));
}

/* "reference": {"source": ..., "entry": ..., "params": {...}, "grid": [...],
 * "block": [...], "smem": ...}: the reference is a kernel of its own, made
 * the companion family of c: its source (default c's) with its params as
 * #defines (each one value), its entry (default c's), its launch over the
 * sizes and its params, and c's args, whose lengths and values are parsed
 * again against it.  0, or -1 and a message naming the field. */
static int make_reference(mk *m, cfam *c, const cJSON *ref, const char *config_path)
{
    cfam *r = calloc(1, sizeof *r);
    if (!r)
        return bad(m, "reference", "out of memory");
    c->ref = r;
    snprintf(r->config_dir, sizeof r->config_dir, "%s", c->config_dir);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(ref, "source");
    if (src) {
        if (!cJSON_IsString(src) || !src->valuestring[0])
            return bad(m, "reference.source", "expected the reference kernel's .cu file, relative to the config");
        for (const char *p = src->valuestring; *p; p++)
            if ((unsigned char)*p < 32 || *p == '"' || *p == '\\')
                return bad(m, "reference.source", "a file name without control characters, quotes or backslashes "
                                                  "(it goes into a #line directive)");
        const char *slash = strrchr(config_path, '/');
        if (src->valuestring[0] == '/' || !slash)
            snprintf(r->source_path, sizeof r->source_path, "%s", src->valuestring);
        else
            snprintf(r->source_path, sizeof r->source_path, "%.*s/%s", (int)(slash - config_path), config_path,
                     src->valuestring);
        char rerr[512];
        size_t len;
        if (!(r->source_text = kf_read_file_max(r->source_path, 16u << 20, &len, rerr, sizeof rerr)))
            return bad(m, "reference.source", "cannot read the reference kernel's source: %s", rerr);
    } else {
        snprintf(r->source_path, sizeof r->source_path, "%s", c->source_path);
        if (!(r->source_text = strdup(c->source_text)))
            return bad(m, "reference", "out of memory");
    }
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(ref, "entry");
    if (entry) {
        char g[80];
        given(entry, g, sizeof g);
        if (!cJSON_IsString(entry) || !entry_name(entry->valuestring))
            return bad(m, "reference.entry", "expected the reference kernel's name in its source: a C identifier "
                                             "(extern \"C\") or one with template arguments, e.g. \"naive\" or "
                                             "\"naive<float>\", got %s", g);
        snprintf(r->entry, sizeof r->entry, "%s", entry->valuestring);
    } else {
        snprintf(r->entry, sizeof r->entry, "%s", c->entry);
    }
    snprintf(r->famname, sizeof r->famname, "%.*s.reference", (int)(sizeof r->famname - 11), c->famname);
    r->entries[0] = r->entry;
    r->fam = c->fam;
    r->fam.name = r->famname;
    r->fam.doc = "the reference kernel of a user's kernel (kernel \"custom\", \"reference\" with a source or entry)";
    r->fam.params = r->params;
    r->fam.sizes = r->sizes;
    r->fam.entries = r->entries;
    r->fam.reference_variant = NULL;
    r->fam.export_source = NULL;
    r->fam.plant = NULL;
    r->fam.plant_check = NULL;
    r->fam.ext = r;
    /* its params: each one value, #defined before its source */
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(ref, "params");
    if (rp && !cJSON_IsObject(rp))
        return bad(m, "reference.params", "expected {\"NAME\": value, ...}: the reference kernel's own #defines");
    int n = 0;
    for (const cJSON *x = rp ? rp->child : NULL; x; x = x->next, n++) {
        char f[160];
        snprintf(f, sizeof f, "reference.params.%s", x->string);
        if (n == KF_MAX_PARAMS)
            return bad(m, "reference.params", "at most %d parameters", KF_MAX_PARAMS);
        if (!ident(x->string))
            return bad(m, f, "a parameter's name must be a C identifier (it is #defined)");
        if (param_find(c->sizes, c->fam.nsizes, x->string) >= 0)
            return bad(m, f, "\"%s\" is a size: a reference param needs a name of its own", x->string);
        if (param_find(r->params, n, x->string) >= 0)
            return bad(m, f, "given twice");
        if (!(r->values[n] = malloc(sizeof *r->values[n])) || !(r->pnames[n] = strdup(x->string)))
            return bad(m, f, "out of memory");
        if (get_integer(m, f, x, -(1LL << 40), 1LL << 40, &r->values[n][0]) != 0)
            return -1;
        r->nvalues[n] = 1;
        char al[32];
        snprintf(al, sizeof al, "%lld", (long long)r->values[n][0]);
        if (!(r->pallowed[n] = strdup(al)))
            return bad(m, f, "out of memory");
        r->params[n] = (kf_param){.name = r->pnames[n], .kind = KF_PK_INT, .lo = r->values[n][0],
                                  .hi = r->values[n][0], .def = r->values[n][0], .allowed = r->pallowed[n],
                                  .macro = r->pnames[n], .doc = "a parameter of the reference kernel (#defined before "
                                  "its source)", .sweep = r->values[n], .nsweep = 1};
    }
    r->fam.nparams = n;
    for (int d = 0; d < c->fam.nsizes; d++) {
        if (!(r->snames[d] = strdup(c->sizes[d].name)))
            return bad(m, "reference", "out of memory");
        r->sizes[d] = c->sizes[d];
        r->sizes[d].name = r->snames[d];
    }
    /* the same args: lengths and values over the sizes and its params */
    r->nargs = c->nargs;
    r->nbufs = c->nbufs;
    for (int a = 0; a < c->nargs; a++) {
        const carg *g = &c->args[a];
        carg *x = &r->args[a];
        *x = (carg){.scalar = g->scalar, .dtype = g->dtype, .role = g->role, .buf = g->buf, .fill = g->fill,
                    .lo = g->lo, .hi = g->hi, .rtol = g->rtol, .atol = g->atol};
        snprintf(x->name, sizeof x->name, "%s", g->name);
        const char *text = g->scalar ? g->value_text : g->length_text;
        char err[512];
        kf_expr *e = text ? expr_parse_for(text, &r->fam, err, sizeof err) : NULL;
        if (!e)
            return bad(m, "reference", "args[%d] (%s).%s: %s (the reference kernel's expressions may use the sizes "
                                       "and reference.params only)", a, g->name, g->scalar ? "value" : "length",
                       text ? err : "out of memory");
        if (g->scalar)
            x->value = e;
        else
            x->length = e;
    }
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(ref, "grid");
    if (!grid)
        return bad(m, "reference.grid", "missing: the reference kernel's grid in blocks, 1 to 3 expressions over the "
                                        "sizes and reference.params");
    if (parse_dims(m, r, "reference.grid", grid, r->grid) != 0)
        return -1;
    const cJSON *block = cJSON_GetObjectItemCaseSensitive(ref, "block");
    char rerr[256];
    if (block) {
        if (parse_dims(m, r, "reference.block", block, r->block) != 0)
            return -1;
    } else {
        static const char *const bs[] = {"block_size_x", "block_size_y", "block_size_z"};
        for (int d = 0; d < 3; d++)
            if (param_find(r->params, r->fam.nparams, bs[d]) >= 0 &&
                !(r->block[d] = expr_parse_for(bs[d], &r->fam, rerr, sizeof rerr)))
                return bad(m, "reference.block", "%s", rerr);
        if (!r->block[0])
            return bad(m, "reference.block", "missing: give \"block\" or a reference param block_size_x "
                                             "(block_size_y, block_size_z)");
    }
    for (int d = 0; d < 3; d++)
        if (r->block[d] && expr_uses_n(r->block[d]))
            return bad(m, "reference.block", "the block may use reference.params only, not sizes");
    const cJSON *smem = cJSON_GetObjectItemCaseSensitive(ref, "smem");
    if (smem && get_expr(m, r, "reference.smem", smem, &r->smem) != 0)
        return -1;
    if (r->smem && expr_uses_n(r->smem))
        return bad(m, "reference.smem", "dynamic shared memory may use reference.params only, not sizes");
    r->deterministic = true;
    return 0;
}

static int make(mk *m, cfam *c, const cJSON *root, const char *config_path)
{
    static const char *const keys[] = {"source", "entry", "name", "params", "sizes", "args", "grid", "block",
                                       "smem", "reference", "tolerance", "bytes", "flops", "constraints",
                                       "deterministic", "constants"};
    if (check_keys(m, "", root, keys, (int)(sizeof keys / sizeof keys[0])) != 0)
        return -1;
    /* source: relative to the config's folder */
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "source");
    if (!cJSON_IsString(src) || !src->valuestring[0])
        return bad(m, "source", "missing: the kernel's .cu file, relative to the config");
    for (const char *p = src->valuestring; *p; p++)
        if ((unsigned char)*p < 32 || *p == '"' || *p == '\\')
            return bad(m, "source", "a file name without control characters, quotes or backslashes (it goes into a "
                                    "#line directive)");
    const char *slash = strrchr(config_path, '/');
    if (slash)
        snprintf(c->config_dir, sizeof c->config_dir, "%.*s", (int)(slash - config_path), config_path);
    if (src->valuestring[0] == '/' || !slash)
        snprintf(c->source_path, sizeof c->source_path, "%s", src->valuestring);
    else
        snprintf(c->source_path, sizeof c->source_path, "%.*s/%s", (int)(slash - config_path), config_path,
                 src->valuestring);
    char rerr[512];
    size_t len;
    if (!(c->source_text = kf_read_file_max(c->source_path, 16u << 20, &len, rerr, sizeof rerr)))
        return bad(m, "source", "cannot read the kernel's source: %s", rerr);
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(root, "entry");
    if (!cJSON_IsString(entry) || !entry->valuestring[0] || strlen(entry->valuestring) >= sizeof c->entry)
        return bad(m, "entry", "missing: the kernel's name in the source (extern \"C\" or C++, e.g. "
                               "\"vector_add\" or \"transpose<float>\")");
    snprintf(c->entry, sizeof c->entry, "%s", entry->valuestring);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (name) {
        if (!cJSON_IsString(name) || !ident(name->valuestring))
            return bad(m, "name", "expected a family name (a C identifier: letters, digits, _)");
        snprintf(c->famname, sizeof c->famname, "%s", name->valuestring);
    } else {
        size_t k = 0;
        for (const char *p = c->entry; *p && k + 1 < sizeof c->famname; p++)
            c->famname[k++] = isalnum((unsigned char)*p) ? *p : '_';
        while (k > 0 && c->famname[k - 1] == '_')
            k--;
        c->famname[k] = '\0';
        if (!ident(c->famname))
            return bad(m, "name", "the entry \"%s\" gives no family name: give one", c->entry);
    }
    c->entries[0] = c->entry;
    c->fam = (kf_family){
        .name = c->famname, .doc = "a user's kernel (kernel \"custom\")", .params = c->params, .sizes = c->sizes,
        .p_block = -1, .entries = c->entries, .nentries = 1, .check = check, .check_shape = check_shape,
        .label = label, .source = source, .block_shape = block_shape, .plan = plan, .buffers = buffers, .fill = fill,
        .bytes = bytes, .enqueue = enqueue, .reference = reference, .compare = compare, .tolerance = tolerance, .plant = plant,
        .plant_check = plant_check, .fake_ms = fake_ms, .reference_variant = reference_variant,
        .export_source = export_source,
        .arg_sizes = arg_sizes, .constants = constants, .constant_fill = constant_fill, .ext = c};
    if (parse_params(m, c, cJSON_GetObjectItemCaseSensitive(root, "params")) != 0)
        return -1;
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(root, "sizes");
    if (!sizes)
        return bad(m, "sizes", "missing: the problem's size names, e.g. [\"n\"] or [\"width\", \"height\"]");
    if (parse_sizes(m, c, sizes) != 0)
        return -1;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
    if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) < 1)
        return bad(m, "args", "missing: the kernel's arguments in order (buffers and scalars)");
    if (cJSON_GetArraySize(args) > MAX_ARGS)
        return bad(m, "args", "at most %d arguments", MAX_ARGS);
    int a = 0;
    for (const cJSON *x = args->child; x; x = x->next, a++)
        if (parse_arg(m, c, a, x) != 0)
            return -1;
    c->nargs = a;
    if (first_output(c) < 0)
        return bad(m, "args", "no buffer has the role out or inout: nothing could be checked");
    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(root, "constants");
    if (consts) {
        if (!cJSON_IsArray(consts) || cJSON_GetArraySize(consts) > KF_MAX_CONSTANTS)
            return bad(m, "constants", "expected a list of up to %d {\"name\", \"dtype\", \"length\", \"fill\"}: "
                                       "__constant__ variables of the source, filled before any launch",
                       KF_MAX_CONSTANTS);
        int k = 0;
        for (const cJSON *x = consts->child; x; x = x->next, k++) {
            if (parse_constant(m, c, k, x) != 0)
                return -1;
            c->nconsts = k + 1;
        }
    }
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(root, "grid");
    if (!grid)
        return bad(m, "grid", "missing: the grid in blocks, 1 to 3 expressions, e.g. [\"(n + block_size_x - 1) / "
                              "block_size_x\"]");
    if (parse_dims(m, c, "grid", grid, c->grid) != 0)
        return -1;
    const cJSON *block = cJSON_GetObjectItemCaseSensitive(root, "block");
    if (block) {
        if (parse_dims(m, c, "block", block, c->block) != 0)
            return -1;
    } else {
        static const char *const bs[] = {"block_size_x", "block_size_y", "block_size_z"};
        for (int d = 0; d < 3; d++)
            if (param_find(c->params, c->fam.nparams, bs[d]) >= 0 &&
                !(c->block[d] = expr_parse_for(bs[d], &c->fam, rerr, sizeof rerr)))
                return bad(m, "block", "%s", rerr);
        if (!c->block[0])
            return bad(m, "block", "missing: give \"block\" or a param block_size_x (block_size_y, block_size_z)");
    }
    for (int d = 0; d < 3; d++)
        if (c->block[d] && expr_uses_n(c->block[d]))
            return bad(m, "block", "the block may use params only, not sizes (its occupancy is worked out once per "
                                   "variant)");
    const cJSON *smem = cJSON_GetObjectItemCaseSensitive(root, "smem");
    if (smem && get_expr(m, c, "smem", smem, &c->smem) != 0)
        return -1;
    if (c->smem && expr_uses_n(c->smem))
        return bad(m, "smem", "dynamic shared memory may use params only, not sizes");
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(root, "bytes");
    if (by && get_expr(m, c, "bytes", by, &c->bytes) != 0)
        return -1;
    const cJSON *fo = cJSON_GetObjectItemCaseSensitive(root, "flops");
    if (fo && get_expr(m, c, "flops", fo, &c->flops) != 0)
        return -1;
    c->fam.flops = c->flops ? flops : NULL; /* no "flops": no GFLOP/s figure (null, not 0) */
    const cJSON *cons = cJSON_GetObjectItemCaseSensitive(root, "constraints");
    if (cons) {
        if (!cJSON_IsArray(cons) || cJSON_GetArraySize(cons) > MAX_CONSTRAINTS)
            return bad(m, "constraints", "expected a list of up to %d expressions", MAX_CONSTRAINTS);
        int i = 0;
        for (const cJSON *x = cons->child; x; x = x->next, i++) {
            char f[48];
            snprintf(f, sizeof f, "constraints[%d]", i);
            if (!cJSON_IsString(x))
                return bad(m, f, "expected an expression (a string)");
            if (get_expr(m, c, f, x, &c->cons[i]) != 0 || !(c->cons_text[i] = strdup(x->valuestring)))
                return -1;
            c->ncons = i + 1;
        }
    }
    /* every expression once at the first value of every param: division by
     * zero and the like are config errors here (those with sizes are
     * checked per case) */
    for (int i = 0; i < c->fam.nparams; i++)
        c->refp[i] = c->values[i][0];
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "reference");
    const cJSON *expected = ref ? cJSON_GetObjectItemCaseSensitive(ref, "expected") : NULL;
    if (expected) {
        /* the answer as .npy files, one per output: no reference run */
        static const char *const ekeys[] = {"expected"};
        if (check_keys(m, "reference", ref, ekeys, 1) != 0)
            return -1;
        if (!cJSON_IsObject(expected))
            return bad(m, "reference.expected", "expected {\"OUTPUT\": \"file.npy\", ...}: every out and inout buffer");
        for (const cJSON *x = expected->child; x; x = x->next) {
            char f[160], why[PATH_MAX + 512];
            snprintf(f, sizeof f, "reference.expected.%s", x->string);
            carg *g = NULL;
            for (int q = 0; q < c->nargs && !g; q++)
                if (!c->args[q].scalar && strcmp(c->args[q].name, x->string) == 0)
                    g = &c->args[q];
            if (!g || g->role == KF_ROLE_IN)
                return bad(m, f, "not an out or inout buffer of \"args\"");
            if (!cJSON_IsString(x))
                return bad(m, f, "expected the name of a .npy file");
            if (npy_load(c, x->valuestring, g->dtype, &g->expect, &g->expect_elems, why, sizeof why) != 0)
                return bad(m, f, "%s", why);
        }
        for (int q = 0; q < c->nargs; q++)
            if (!c->args[q].scalar && c->args[q].role != KF_ROLE_IN && !c->args[q].expect)
                return bad(m, "reference.expected", "no file for output \"%s\": give every out and inout buffer's answer",
                           c->args[q].name);
        c->fam.reference_variant = NULL; /* the host reference: the files */
    } else if (ref) {
        static const char *const rkeys[] = {"params", "source", "entry", "grid", "block", "smem"};
        const int nrkeys = (int)(sizeof rkeys / sizeof rkeys[0]);
        const cJSON *rp = cJSON_GetObjectItemCaseSensitive(ref, "params");
        bool known = false;
        for (int k = 0; k < nrkeys && cJSON_IsObject(ref); k++)
            known = known || cJSON_GetObjectItemCaseSensitive(ref, rkeys[k]);
        if (!known) {
            char g[80];
            given(ref, g, sizeof g);
            return bad(m, "reference", "expected {\"params\": {...}}: a parameter set of the same source, "
                                       "{\"source\": \"naive.cu\", \"entry\": \"naive\", \"grid\": [...], ...}: "
                                       "a kernel of its own, or {\"expected\": {\"OUTPUT\": \"file.npy\"}}, got %s", g);
        }
        if (check_keys(m, "reference", ref, rkeys, nrkeys) != 0)
            return -1;
        bool own = cJSON_GetObjectItemCaseSensitive(ref, "source") || cJSON_GetObjectItemCaseSensitive(ref, "entry");
        for (int k = 3; k < nrkeys && !own; k++)
            if (cJSON_GetObjectItemCaseSensitive(ref, rkeys[k])) {
                char f[32];
                snprintf(f, sizeof f, "reference.%s", rkeys[k]);
                return bad(m, f, "a launch of its own goes with a kernel of its own: give the reference's \"source\" "
                                 "and/or \"entry\" (with \"params\" alone the reference is a parameter set of the "
                                 "same kernel, launched as the candidates are)");
            }
        if (own && make_reference(m, c, ref, config_path) != 0)
            return -1;
        if (!own && !cJSON_IsObject(rp))
            return bad(m, "reference.params", "expected {\"PARAM\": value, ...}: a parameter set of the same source");
        for (const cJSON *x = own ? NULL : rp->child; x; x = x->next) {
            char f[160];
            snprintf(f, sizeof f, "reference.params.%s", x->string);
            int i = param_find(c->params, c->fam.nparams, x->string);
            if (i < 0)
                return bad(m, f, "not a parameter of \"params\"");
            if (get_integer(m, f, x, -(1LL << 40), 1LL << 40, &c->refp[i]) != 0)
                return -1;
        }
    }
    c->rtol = 1e-5;
    c->atol = 1e-6;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (tol && parse_tolerance(m, "tolerance", tol, &c->rtol, &c->atol) != 0)
        return -1;
    for (int q = 0; q < c->nargs; q++) { /* a buffer's own tolerance overrides it key by key */
        carg *g = &c->args[q];
        g->rtol = isnan(g->rtol) ? c->rtol : g->rtol;
        g->atol = isnan(g->atol) ? c->atol : g->atol;
        if (c->ref)
            c->ref->args[q].rtol = g->rtol, c->ref->args[q].atol = g->atol;
    }
    if (c->ref)
        c->ref->rtol = c->rtol, c->ref->atol = c->atol;
    c->deterministic = true;
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(root, "deterministic");
    if (det) {
        if (!cJSON_IsBool(det))
            return bad(m, "deterministic", "expected true or false");
        c->deterministic = cJSON_IsTrue(det);
    }
    return 0;
}

/* Parameter-only expressions at the first listed values, once registered:
 * division by zero and the like are config errors at load time. */
static int probe(mk *m, cfam *c)
{
    kf_variant v;
    variant_defaults(&v, c->index);
    int64_t x;
    char why[512];
    for (int d = 0; d < 3; d++) {
        char f[16];
        snprintf(f, sizeof f, "block[%d]", d);
        if (c->block[d] && eval_int(c->block[d], &v, NULL, f, &x, why, sizeof why) != 0)
            return bad(m, "block", "%s", why);
    }
    if (c->smem && eval_int(c->smem, &v, NULL, "smem", &x, why, sizeof why) != 0)
        return bad(m, "smem", "%s", why);
    kf_variant r = v;
    memcpy(r.p, c->refp, sizeof r.p);
    for (int d = 0; d < 3 && !c->ref; d++)
        if (c->block[d] && eval_int(c->block[d], &r, NULL, "block (reference)", &x, why, sizeof why) != 0)
            return bad(m, "reference", "%s", why);
    if (c->ref) { /* a kernel of its own: its block and shared memory at its params */
        reference_variant(&v, NULL, &r);
        for (int d = 0; d < 3; d++) {
            char f[24];
            snprintf(f, sizeof f, "reference.block[%d]", d);
            if (c->ref->block[d] && eval_int(c->ref->block[d], &r, NULL, f, &x, why, sizeof why) != 0)
                return bad(m, "reference.block", "%s", why);
        }
        if (c->ref->smem && eval_int(c->ref->smem, &r, NULL, "reference.smem", &x, why, sizeof why) != 0)
            return bad(m, "reference.smem", "%s", why);
    }
    return 0;
}

// ---------------------------------------------------------------------------
// kforge export: the parameter table, the lookup and the launcher
//
// Under CUDA the header also holds the kernel, once per distinct tuned
// parameter set: the source's #include lines first (at file scope, so that
// guarded headers are no-ops inside the namespaces), then for set i
// codegen_wrapped's text -- namespace kforge_<name>_v<i> { the #defines and
// the source exactly as kforge compiles them } and the #undef of every macro
// they define -- an extern "C" entry renamed kforge_<name>_v<i>_<entry>
// (one C name cannot live in several namespaces).  The launcher computes the
// launch from the config's expressions (expr_c_text).  NVRTC compiles that
// part at export time for the tuned GPU's architecture, with a check that
// the launcher's arguments convert to the kernel's parameters; a source that
// fails there (an extern "C" helper, __constant__ or second kernel: one C
// name defined in every copy) gets the table and lookup alone, and export
// says why.

#define LINE_MARK "#line @KFORGE@\n" /* numbered by number_lines once the text is whole */

typedef struct {
    const cfam *c;
    const kf_export_entry *e;
    int n;
    int *set;                           /* set[j]: entry j's parameter set (n) */
    int *first;                         /* first[i]: the first entry of set i (n) */
    int nsets;
    bool extern_c;                      /* the entry keeps its name in the module: renamed per copy */
    char bufname[MAX_ARGS][64], cname[KF_MAX_CONSTANTS][64];
    char file[PATH_MAX];                /* the header's name in its #line directives */
    strbuf sig;                         /* the launcher's declaration */
} xport;

static const char *c_type(kf_dtype t)
{
    static const char *const names[KF_DTYPE_COUNT] = {
        [KF_INT32] = "int", [KF_UINT32] = "unsigned int", [KF_INT64] = "long long", [KF_FLOAT32] = "float",
        [KF_FLOAT64] = "double", [KF_BFLOAT16] = "__nv_bfloat16", [KF_FLOAT16] = "__half"};
    return names[t];
}

static bool cxx_keyword(const char *s)
{
    static const char *const kw[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
        "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
        "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
        "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "dim3",
        "stream"};
    return kf_lookup(kw, (int)(sizeof kw / sizeof kw[0]), s) >= 0;
}

/* The launcher's parameter for a buffer or constant: its own name where
 * that is a C identifier, no C++ keyword, not kforge's (kf..., stream), no
 * size's and not taken; else fallback. */
static void param_name(const xport *x, const char *name, const char *fallback, char *out, size_t len)
{
    const cfam *c = x->c;
    bool ok = ident(name) && !cxx_keyword(name) && strncmp(name, "kf", 2) != 0 &&
              param_find(c->sizes, c->fam.nsizes, name) < 0;
    for (int a = 0; a < c->nargs && ok; a++)
        ok = strcmp(x->bufname[a], name) != 0;
    for (int k = 0; k < c->nconsts && ok; k++)
        ok = strcmp(x->cname[k], name) != 0;
    snprintf(out, len, "%s", ok ? name : fallback);
}

/* The kernel of set i, as the launcher names it. */
static void kernel_name(const xport *x, int i, char *buf, size_t len)
{
    if (x->extern_c)
        snprintf(buf, len, "kforge_%s_v%d::kforge_%s_v%d_%s", x->c->famname, i, x->c->famname, i, x->c->entry);
    else
        snprintf(buf, len, "kforge_%s_v%d::%s", x->c->famname, i, x->c->entry);
}

/* text with every LINE_MARK made `#line N "file"`, N the next line's number. */
static char *number_lines(const char *text, const char *file)
{
    strbuf b = {0};
    int line = 1;
    size_t mlen = strlen(LINE_MARK);
    for (const char *p = text; *p;) {
        if (strncmp(p, LINE_MARK, mlen) == 0) {
            sb_printf(&b, "#line %d \"%s\"\n", line + 1, file);
            p += mlen;
            line++;
            continue;
        }
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p) + 1 : strlen(p);
        sb_appendn(&b, p, k);
        line += nl != NULL;
        p += k;
    }
    if (b.failed) {
        sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

/* Whether an NVRTC log line continues the message before it ("argument
 * types are: (...)"), rather than quoting the source. */
static bool continues(const char *line)
{
    line += strspn(line, " \t");
    size_t k = strspn(line, "abcdefghijklmnopqrstuvwxyz ");
    return line[k] == ':' && ((k >= 4 && strncmp(line + k - 4, " are", 4) == 0) ||
                              (k >= 3 && strncmp(line + k - 3, " is", 3) == 0));
}

/* The first error line of an NVRTC log (with the line after it when that
 * one continues the message), else fallback: one line into out. */
static void first_error(const char *log, const char *fallback, char *out, size_t len)
{
    const char *p = log ? strstr(log, "error") : NULL;
    if (!p) {
        snprintf(out, len, "%s", fallback);
        return;
    }
    while (p > log && p[-1] != '\n')
        p--;
    size_t k = strcspn(p, "\n");
    const char *next = p[k] == '\n' ? p + k + 1 : NULL;
    if (next && continues(next)) {
        size_t skip = strspn(next, " \t");
        snprintf(out, len, "%.*s (%.*s)", (int)k, p, (int)strcspn(next + skip, "\n"), next + skip);
    } else {
        snprintf(out, len, "%.*s", (int)k, p);
    }
    for (char *q = out; *q; q++)
        if ((unsigned char)*q < 32)
            *q = ' ';
}

/* Entry j's parameter set: the first entry with the same parameters. */
static void find_sets(xport *x)
{
    const int np = x->c->fam.nparams;
    x->nsets = 0;
    for (int j = 0; j < x->n; j++) {
        int i = 0;
        while (i < x->nsets && memcmp(x->e[x->first[i]].v.p, x->e[j].v.p, sizeof(int64_t) * (size_t)np) != 0)
            i++;
        if (i == x->nsets)
            x->first[x->nsets++] = j;
        x->set[j] = i;
    }
}

/* Whether the entry is an extern "C" kernel: its lowered name (NVRTC, on
 * the source of set 0) is the entry itself. */
static int entry_linkage(xport *x, const rtc_options *o, char *why, size_t whylen)
{
    char err[256], low[512], *log = NULL;
    char *src = codegen_source(&x->e[x->first[0]].v, err, sizeof err);
    if (!src) {
        kf_err(why, whylen, "%s", err);
        return -1;
    }
    int rc = rtc_lowered_name(src, x->c->source_path, o, x->c->entry, low, sizeof low, &log, err, sizeof err);
    if (rc != 0) {
        char first[512];
        first_error(log, err, first, sizeof first);
        kf_err(why, whylen, "NVRTC (%s) does not find the entry %s in the source: %s", o->arch, x->c->entry, first);
    } else {
        x->extern_c = strcmp(low, x->c->entry) == 0;
    }
    free(log);
    free(src);
    return rc;
}

static bool uses_dtype(const cfam *c, kf_dtype t)
{
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].dtype == t)
            return true;
    for (int k = 0; k < c->nconsts; k++)
        if (c->consts[k].dtype == t)
            return true;
    return false;
}

/* The kernel once per set: the source's #include lines, the 2-byte float
 * headers the launcher's types need, each set's wrapped source. */
static int device_part(const xport *x, strbuf *b, char *why, size_t whylen)
{
    const cfam *c = x->c;
    sb_append(b, "// The source's #include lines, at file scope first: the copies' own are then no-ops.\n");
    for (const char *p = c->source_text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p + strspn(p, " \t");
        if (*q == '#') {
            q += 1 + strspn(q + 1, " \t");
            if (strncmp(q, "include", 7) == 0) {
                q += 7 + strspn(q + 7, " \t");
                if (*q == '<' || *q == '"')
                    sb_printf(b, "%.*s\n", (int)k, p);
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    if (uses_dtype(c, KF_FLOAT16))
        sb_append(b, "#include <cuda_fp16.h>\n");
    if (uses_dtype(c, KF_BFLOAT16))
        sb_append(b, "#include <cuda_bf16.h>\n");
    for (int i = 0; i < x->nsets; i++) {
        char ns[KF_NAME_MAX + 32], entry[KF_NAME_MAX + 300];
        snprintf(ns, sizeof ns, "kforge_%s_v%d", c->famname, i);
        snprintf(entry, sizeof entry, "%s_%s", ns, c->entry);
        int members = 0;
        for (int j = 0; j < x->n; j++)
            members += x->set[j] == i;
        sb_printf(b, "\n// set %d: entr%s", i, members == 1 ? "y" : "ies");
        for (int j = 0; j < x->n; j++)
            if (x->set[j] == i)
                sb_printf(b, " %d", j);
        sb_append(b, " of the table\n");
        if (codegen_wrapped(b, &x->e[x->first[i]].v, ns, x->extern_c ? entry : NULL, NULL, why, whylen) != 0)
            return -1;
        sb_append(b, LINE_MARK);
    }
    return 0;
}

/* For NVRTC only: the launcher's arguments must convert to each kernel's
 * parameters as in a call, and each constant must be a variable of each
 * copy. */
static void check_part(const xport *x, strbuf *b)
{
    const cfam *c = x->c;
    sb_printf(b, "#line 1 \"the arguments kforge_%s_launch passes\"\nnamespace kforge_%s_check {\n"
                 "template <typename T> struct id { typedef T type; };\n"
                 "template <typename... P> __device__ int accepts(void (*)(P...), typename id<P>::type...);\n",
              c->famname, c->famname);
    for (int i = 0; i < x->nsets; i++) {
        char k[2 * KF_NAME_MAX + 300];
        kernel_name(x, i, k, sizeof k);
        sb_printf(b, "typedef decltype(accepts(&%s", k);
        for (int a = 0; a < c->nargs; a++) /* unevaluated: a buffer's T *, a scalar's const T lvalue */
            sb_printf(b, c->args[a].scalar ? ", *(const %s *)0" : ", (%s *)0", c_type(c->args[a].dtype));
        sb_printf(b, ")) v%d;\n", i);
        for (int q = 0; q < c->nconsts; q++)
            sb_printf(b, "typedef char c%d_%d[sizeof(kforge_%s_v%d::%s)];\n", i, q, c->famname, i, c->consts[q].name);
    }
    sb_append(b, "}\n");
}

/* C text of e over kf_<name> (expr_c_text); -1 and why. */
static char *c_expr(const kf_expr *e, const char *what, char *why, size_t whylen)
{
    char err[512];
    char *t = expr_c_text(e, "kf_", err, sizeof err);
    if (!t)
        kf_err(why, whylen, "%s: %s", what, err);
    return t;
}

/* Whether text mentions the identifier kf_<name>. */
static bool mentions(const char *text, const char *name)
{
    char id[80];
    snprintf(id, sizeof id, "kf_%s", name);
    size_t n = strlen(id);
    for (const char *p = strstr(text, id); p; p = strstr(p + 1, id))
        if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
            !(isalnum((unsigned char)p[n]) || p[n] == '_'))
            return true;
    return false;
}

/* The launcher (host code): the set tuned for the nearest shape, its
 * launch from the config's expressions.  -1 and why where an expression
 * has no C form. */
static int launcher(xport *x, strbuf *b, char *why, size_t whylen)
{
    const cfam *c = x->c;
    const kf_family *f = &c->fam;
    const char *N = c->famname;
    int rc = -1;
    strbuf body = {0}, sig = {0};
    char *g[3] = {NULL, NULL, NULL}, *bl[3] = {NULL, NULL, NULL}, *sm = NULL, *val[MAX_ARGS] = {NULL},
         *len[KF_MAX_CONSTANTS] = {NULL};
    for (int d = 0; d < 3; d++) {
        char what[16];
        snprintf(what, sizeof what, "grid[%d]", d);
        if (c->grid[d] && !(g[d] = c_expr(c->grid[d], what, why, whylen)))
            goto out;
        snprintf(what, sizeof what, "block[%d]", d);
        if (c->block[d] && !(bl[d] = c_expr(c->block[d], what, why, whylen)))
            goto out;
    }
    if (c->smem && !(sm = c_expr(c->smem, "smem", why, whylen)))
        goto out;
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].scalar && !(val[a] = c_expr(c->args[a].value, c->args[a].name, why, whylen)))
            goto out;
    for (int k = 0; k < c->nconsts; k++)
        if (!(len[k] = c_expr(c->consts[k].length, c->consts[k].name, why, whylen)))
            goto out;

    /* the declaration */
    sb_printf(&sig, "cudaError_t kforge_%s_launch(", N);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&sig, "long long %s, ", f->sizes[d].name);
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar)
            sb_printf(&sig, "%s%s *%s, ", c->args[a].role == KF_ROLE_IN ? "const " : "", c_type(c->args[a].dtype),
                      x->bufname[a]);
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&sig, "const %s *%s, ", c_type(c->consts[k].dtype), x->cname[k]);
    sb_append(&sig, "cudaStream_t stream)");

    /* the body: the values kforge's expressions give, in double */
    sb_append(&body, "    if (");
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&body, "%s%s < 1", d ? " || " : "", f->sizes[d].name);
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar)
            sb_printf(&body, " || !%s", x->bufname[a]);
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&body, " || !%s", x->cname[k]);
    sb_printf(&body, ")\n        return cudaErrorInvalidValue;\n    const kforge_%s_params *kfl_t = kforge_%s_lookup(",
              N, N);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&body, "%s%s", d ? ", " : "", f->sizes[d].name);
    sb_append(&body, ");\n");
    strbuf all = {0}; /* every expression's text: which names it uses */
    for (int d = 0; d < 3; d++)
        sb_printf(&all, "%s %s ", g[d] ? g[d] : "", bl[d] ? bl[d] : "");
    sb_printf(&all, "%s ", sm ? sm : "");
    for (int a = 0; a < c->nargs; a++)
        sb_printf(&all, "%s ", val[a] ? val[a] : "");
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&all, "%s ", len[k]);
    const char *used = all.s ? all.s : "";
    for (int d = 0; d < f->nsizes; d++)
        if (mentions(used, f->sizes[d].name))
            sb_printf(&body, "    const double kf_%s = (double)%s;\n", f->sizes[d].name, f->sizes[d].name);
    for (int i = 0; i < f->nparams; i++)
        if (mentions(used, f->params[i].name))
            sb_printf(&body, "    const double kf_%s = (double)kfl_t->%s;\n", f->params[i].name, f->params[i].name);
    sb_free(&all);
    sb_append(&body, "    const double kfl_grid[3] = {");
    for (int d = 0; d < 3; d++)
        sb_printf(&body, d ? ", %s%s%s" : "%s%s%s", g[d] ? "floor(" : "", g[d] ? g[d] : "1.0", g[d] ? ")" : "");
    sb_append(&body, "};\n    const double kfl_block[3] = {");
    for (int d = 0; d < 3; d++)
        sb_printf(&body, d ? ", %s%s%s" : "%s%s%s", bl[d] ? "floor(" : "", bl[d] ? bl[d] : "1.0", bl[d] ? ")" : "");
    sb_append(&body, "};\n");
    if (sm)
        sb_printf(&body, "    const double kfl_smem = floor(%s);\n", sm);
    sb_append(&body, "    for (int kfl_d = 0; kfl_d < 3; kfl_d++)\n"
                     "        if (!(kfl_grid[kfl_d] >= 1 && kfl_grid[kfl_d] <= 2147483647.0) ||\n"
                     "            !(kfl_block[kfl_d] >= 1 && kfl_block[kfl_d] <= 1048576.0))\n"
                     "            return cudaErrorInvalidValue;\n");
    if (sm) /* NaN too; below 0 is none, as kforge has it */
        sb_append(&body, "    if (!(kfl_smem <= 1073741824.0))\n        return cudaErrorInvalidValue;\n");
    sb_append(&body, "    const dim3 kfl_g((unsigned)kfl_grid[0], (unsigned)kfl_grid[1], (unsigned)kfl_grid[2]);\n"
                     "    const dim3 kfl_b((unsigned)kfl_block[0], (unsigned)kfl_block[1], (unsigned)kfl_block[2]);\n");
    sb_append(&body, sm ? "    const size_t kfl_shared = kfl_smem > 0 ? (size_t)kfl_smem : 0;\n"
                        : "    const size_t kfl_shared = 0;\n");
    for (int a = 0; a < c->nargs; a++) {
        const carg *q = &c->args[a];
        if (!q->scalar)
            continue;
        /* a value kforge takes (check_shape: finite, at most 9e15), stored as enqueue stores it */
        sb_printf(&body, "    const double kfl_v%d = %s; /* %s */\n    if (!(fabs(kfl_v%d) <= 9.0e15))\n"
                         "        return cudaErrorInvalidValue;\n", a, val[a], q->name, a);
        const char *T = c_type(q->dtype);
        switch (q->dtype) {
        case KF_UINT32: sb_printf(&body, "    const %s kfl_arg%d = (%s)(long long)kfl_v%d;\n", T, a, T, a); break;
        case KF_FLOAT64: sb_printf(&body, "    const %s kfl_arg%d = kfl_v%d;\n", T, a, a); break;
        case KF_FLOAT16: sb_printf(&body, "    const %s kfl_arg%d = __float2half_rn((float)kfl_v%d);\n", T, a, a); break;
        case KF_BFLOAT16:
            sb_printf(&body, "    const %s kfl_arg%d = __float2bfloat16_rn((float)kfl_v%d);\n", T, a, a);
            break;
        default: sb_printf(&body, "    const %s kfl_arg%d = (%s)kfl_v%d;\n", T, a, T, a); break;
        }
    }
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&body, "    const double kfl_len%d = floor(%s); /* %s's elements */\n"
                         "    if (!(kfl_len%d >= 1 && kfl_len%d <= 1073741824.0))\n        return cudaErrorInvalidValue;\n",
                  k, len[k], c->consts[k].name, k, k);
    if (sm || c->nconsts)
        sb_append(&body, "    cudaError_t kfl_e = cudaSuccess;\n");
    sb_printf(&body, "    switch (kfl_t - kforge_%s_tuned) {\n", N);
    for (int i = 0; i < x->nsets; i++) {
        char kn[2 * KF_NAME_MAX + 300];
        kernel_name(x, i, kn, sizeof kn);
        for (int j = 0; j < x->n; j++)
            if (x->set[j] == i) {
                char st[128];
                shape_text(f, &x->e[j].shape, st, sizeof st);
                sb_printf(&body, "    case %d: /* %s */\n", j, st);
            }
        if (sm)
            sb_printf(&body, "        if (kfl_shared > 48 * 1024 &&\n            (kfl_e = cudaFuncSetAttribute(%s, "
                             "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kfl_shared)) != cudaSuccess)\n"
                             "            return kfl_e;\n", kn);
        for (int k = 0; k < c->nconsts; k++)
            sb_printf(&body, "        if ((kfl_e = cudaMemcpyToSymbolAsync(kforge_%s_v%d::%s, %s, (size_t)kfl_len%d * "
                             "sizeof(%s), 0,\n                                             cudaMemcpyHostToDevice, "
                             "stream)) != cudaSuccess)\n            return kfl_e;\n",
                      N, i, c->consts[k].name, x->cname[k], k, c_type(c->consts[k].dtype));
        sb_printf(&body, "        %s<<<kfl_g, kfl_b, kfl_shared, stream>>>(", kn);
        for (int a = 0; a < c->nargs; a++) {
            const carg *q = &c->args[a];
            if (q->scalar)
                sb_printf(&body, "%skfl_arg%d", a ? ", " : "", a);
            else if (q->role == KF_ROLE_IN) /* a T * passes to a kernel's T * or const T * */
                sb_printf(&body, "%sconst_cast<%s *>(%s)", a ? ", " : "", c_type(q->dtype), x->bufname[a]);
            else
                sb_printf(&body, "%s%s", a ? ", " : "", x->bufname[a]);
        }
        sb_append(&body, ");\n        break;\n");
    }
    sb_append(&body, "    default:\n        return cudaErrorInvalidValue;\n    }\n    return cudaGetLastError();\n");

    /* the comment: what it launches, then the function */
    sb_printf(b, "// kforge_%s_launch: the kernel tuned for the nearest shape (kforge_%s_lookup), launched\n"
                 "// on stream as the config says, every value worked out in double as kforge does (grid,\n"
                 "// block and shared memory rounded down, scalars converted to their dtype):\n", N, N);
    for (int d = 0; d < 3; d++)
        if (c->grid[d])
            sb_printf(b, "//   grid[%d]   %s\n", d, expr_source_text(c->grid[d]));
    for (int d = 0; d < 3; d++)
        if (c->block[d])
            sb_printf(b, "//   block[%d]  %s\n", d, expr_source_text(c->block[d]));
    if (c->smem)
        sb_printf(b, "//   smem      %s bytes (opted in above 48 KiB)\n", expr_source_text(c->smem));
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].scalar)
            sb_printf(b, "//   %-9s %s (%s)\n", c->args[a].name, expr_source_text(c->args[a].value),
                      kf_dtype_names[c->args[a].dtype]);
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(b, "//   %-9s __constant__, %s %s elements copied from the host first\n", c->consts[k].name,
                  expr_source_text(c->consts[k].length), kf_dtype_names[c->consts[k].dtype]);
    sb_append(b, "// cudaErrorInvalidValue for a size below 1, a null pointer or a launch the expressions do\n"
                 "// not give (not finite, out of range); else the first error of the shared memory\n"
                 "// attribute, of the constants' copies, or cudaGetLastError() after the launch.\n");
    sb_printf(b, "static inline %s\n{\n%s}\n", sig.s, body.s);
    if (!b->failed && !body.failed && !sig.failed) {
        x->sig = sig;
        sig = (strbuf){0};
        rc = 0;
    } else {
        kf_err(why, whylen, "out of memory");
    }
out:
    for (int d = 0; d < 3; d++)
        free(g[d]), free(bl[d]);
    free(sm);
    for (int a = 0; a < MAX_ARGS; a++)
        free(val[a]);
    for (int k = 0; k < KF_MAX_CONSTANTS; k++)
        free(len[k]);
    sb_free(&body);
    sb_free(&sig);
    return rc;
}

/* The CUDA part of the header into cuda (the kernel per set and the
 * launcher), compiled by NVRTC (but the launcher) for the tuned GPU; -1 and
 * why (one line) where the launcher has to be left out. */
static int cuda_part(xport *x, const kf_export_info *info, strbuf *cuda, char *why, size_t whylen)
{
    const cfam *c = x->c;
    int rc = -1;
    strbuf dev = {0}, host = {0}, chk = {0};
    char *numbered = NULL, *log = NULL;
    for (int a = 0; a < c->nargs; a++) {
        char fb[24];
        snprintf(fb, sizeof fb, "arg%d", a);
        if (!c->args[a].scalar)
            param_name(x, c->args[a].name, fb, x->bufname[a], sizeof x->bufname[a]);
    }
    for (int k = 0; k < c->nconsts; k++) {
        char fb[24];
        snprintf(fb, sizeof fb, "constant%d", k);
        param_name(x, c->consts[k].name, fb, x->cname[k], sizeof x->cname[k]);
    }
    if (info->cc_major < 1) {
        kf_err(why, whylen, "the tuned GPU's architecture is not known (compute capability %d.%d)", info->cc_major,
               info->cc_minor);
        goto out;
    }
    rtc_options o = {.lineinfo = false};
    snprintf(o.arch, sizeof o.arch, "sm_%d%d", info->cc_major, info->cc_minor);
    if (entry_linkage(x, &o, why, whylen) != 0)
        goto out;
    if (launcher(x, &host, why, whylen) != 0)
        goto out;
    if (device_part(x, &dev, why, whylen) != 0)
        goto out;
    sb_append(&chk, dev.s);
    check_part(x, &chk);
    char name[KF_NAME_MAX + 32], err[256];
    snprintf(name, sizeof name, "kforge_%s_export.cu", c->famname);
    if (chk.failed || !(numbered = number_lines(chk.s, name))) {
        kf_err(why, whylen, "out of memory");
        goto out;
    }
    void *cubin = NULL;
    size_t cubin_len = 0;
    if (rtc_compile(numbered, name, &o, &cubin, &cubin_len, &log, err, sizeof err) != 0) {
        char first[512];
        first_error(log, err, first, sizeof first);
        if (strncmp(first, "the arguments ", 14) == 0) /* check_part's */
            kf_err(why, whylen, "the launcher's arguments (the config's dtypes) do not match the kernel's "
                                "parameters (NVRTC, %s): %s", o.arch, first);
        else
            kf_err(why, whylen, "the source does not compile once per tuned parameter set (%d) in one translation "
                                "unit (NVRTC, %s): %s", x->nsets, o.arch, first);
        goto out;
    }
    free(cubin);
    sb_printf(cuda, "\n#ifdef __CUDACC__\n// ---------------------------------------------------------------------------\n"
                    "// The kernel, once per distinct tuned parameter set (%d), each in a namespace of its own:\n"
                    "// its parameters #defined, then the source as kforge compiled it, then every macro\n"
                    "// they define #undef'd%s.\n\n",
              x->nsets, x->extern_c ? "; the extern \"C\" entry renamed kforge_<name>_v<i>_<entry>" : "");
    sb_append(cuda, dev.s);
    sb_append(cuda, "\n#ifndef __CUDACC_RTC__\n// ---------------------------------------------------------------------------\n"
                    "// The launcher (host code)\n\n#include <cuda_runtime.h>\n\n");
    sb_append(cuda, host.s);
    sb_append(cuda, "#endif /* __CUDACC_RTC__ */\n#endif /* __CUDACC__ */\n\n");
    rc = cuda->failed ? -1 : 0;
    if (rc != 0)
        kf_err(why, whylen, "out of memory");
out:
    free(log);
    free(numbered);
    sb_free(&dev);
    sb_free(&host);
    sb_free(&chk);
    return rc;
}

/* kforge export of a custom kernel: the tuned parameters per shape and the
 * lookup that picks the entry for the nearest shape, as kforge best does
 * (family.h: shape_log_distance, shape_nearer), in a C/C++ header; under
 * CUDA, the kernel once per tuned parameter set and the launcher, unless
 * the source cannot be compiled so (then info->note says why). */
static char *export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen)
{
    if (n < 1) {
        kf_err(err, errlen, "nothing to export");
        return NULL;
    }
    const cfam *c = cf_of(&e[0].v);
    const kf_family *f = &c->fam;
    xport *x = calloc(1, sizeof *x);
    int *sets = calloc(2 * (size_t)n, sizeof *sets);
    if (!x || !sets) {
        free(x);
        free(sets);
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    x->set = sets;
    x->first = sets + n;
    x->c = c;
    x->e = e;
    x->n = n;
    find_sets(x);
    const char *base = info->path ? strrchr(info->path, '/') : NULL;
    base = base ? base + 1 : info->path;
    bool clean = base && *base;
    for (const char *p = base; clean && *p; p++)
        clean = (unsigned char)*p >= 32 && *p != '"' && *p != '\\';
    snprintf(x->file, sizeof x->file, "%s", clean ? base : "kforge export");
    strbuf cuda = {0};
    char why[768] = "";
    bool launch = cuda_part(x, info, &cuda, why, sizeof why) == 0;
    if (!launch && info->note)
        snprintf(info->note, info->notelen, "the launcher is left out, the header holds the parameter table and "
                 "lookup alone: %s", why);

    strbuf b = {0};
    char up[KF_NAME_MAX];
    size_t k = 0;
    for (const char *p = c->famname; *p && k + 1 < sizeof up; p++)
        up[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    up[k] = '\0';
    sb_printf(&b, "// kforge " KF_VERSION " export: the tuned parameters of the custom kernel \"%s\"\n", c->famname);
    sb_printf(&b, "//   source %s, entry %s\n", c->source_path, c->entry);
    sb_printf(&b, "//   tuned on %s (cc %d.%d, %d SMs)%s\n", info->device, info->cc_major, info->cc_minor, info->sms,
              info->deterministic_only ? ", deterministic variants only" : "");
    sb_printf(&b, "//   by: %s\n//   date: %s\n", info->command ? info->command : "", info->date ? info->date : "");
    sb_printf(&b, "//\n// kforge_%s_tuned is the parameter table, one entry per tuned shape.  _lookup gives the\n"
                  "// entry tuned for the nearest shape (the smallest sum of |ln tuned - ln asked| over the\n"
                  "// sizes; ties go to the larger shape, then the faster entry), as `kforge best` answers.\n",
              c->famname);
    if (launch) {
        sb_printf(&b, "//\n// Compiled as CUDA (nvcc), the header also holds the kernel, compiled once per distinct\n"
                      "// parameter set (%d, namespaces kforge_%s_v0 ...), and a launcher that runs the set tuned\n"
                      "// for the nearest shape with the config's grid, block and shared memory:\n//\n//   ",
                  x->nsets, c->famname);
        export_comment_text(&b, x->sig.s);
        sb_append(&b, "\n//\n// It defines your kernel: include it in one .cu file of a program (NVRTC compiles the\n"
                      "// kernels and skips the host part).\n");
    } else {
        sb_append(&b, "//\n// The kernel and a launcher are not in this header: kforge export left them out, as\n//   ");
        export_comment_text(&b, why);
        sb_append(&b, "\n// Compile the source with each entry's values as #defines, as kforge did, and launch it\n"
                      "// with the config's grid, block and shared memory.\n");
    }
    sb_printf(&b, "#ifndef KFORGE_CUSTOM_%s_H\n#define KFORGE_CUSTOM_%s_H\n\n#include <math.h>\n\n", up, up);
    sb_printf(&b, "typedef struct {\n");
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "    long long %s;\n", f->sizes[d].name);
    for (int i = 0; i < f->nparams; i++)
        sb_printf(&b, "    long long %s;\n", f->params[i].name);
    sb_printf(&b, "    double median_ms; /* measured at this shape */\n    int deterministic;\n} kforge_%s_params;\n\n",
              c->famname);
    sb_printf(&b, "static const kforge_%s_params kforge_%s_tuned[%d] = {\n", c->famname, c->famname, n);
    for (int j = 0; j < n; j++) {
        sb_append(&b, "    {");
        for (int d = 0; d < f->nsizes; d++)
            sb_printf(&b, "%lldLL, ", (long long)e[j].shape.d[d]);
        for (int i = 0; i < f->nparams; i++)
            sb_printf(&b, "%lldLL, ", (long long)e[j].v.p[i]);
        sb_printf(&b, "%.17g, %d},\n", e[j].median_ms, e[j].deterministic ? 1 : 0);
    }
    sb_append(&b, "};\n\n");
    sb_printf(&b, "static inline const kforge_%s_params *kforge_%s_lookup(", c->famname, c->famname);
    if (info->api)
        sb_printf(info->api, "kforge_%s_lookup", c->famname);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "%slong long %s", d ? ", " : "", f->sizes[d].name);
    sb_printf(&b, ")\n{\n    const kforge_%s_params *pick = 0;\n    double pick_dist = 0, pick_size = 0;\n", c->famname);
    sb_printf(&b, "    for (int i = 0; i < %d; i++) {\n        const kforge_%s_params *t = &kforge_%s_tuned[i];\n"
                  "        double dist = 0, size = 0;\n", n, c->famname, c->famname);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "        dist += fabs(log((double)t->%s) - log((double)%s));\n        size += log((double)t->%s);\n",
                  f->sizes[d].name, f->sizes[d].name, f->sizes[d].name);
    sb_append(&b, "        int nearer = !pick || (fabs(dist - pick_dist) > 1e-9   ? dist < pick_dist\n"
                  "                               : fabs(size - pick_size) > 1e-9 ? size > pick_size\n"
                  "                                                               : t->median_ms < pick->median_ms);\n"
                  "        if (nearer) {\n            pick = t;\n            pick_dist = dist;\n            pick_size = size;\n"
                  "        }\n    }\n    return pick;\n}\n");
    if (launch)
        sb_append(&b, cuda.s);
    else
        sb_append(&b, "\n");
    sb_printf(&b, "#endif /* KFORGE_CUSTOM_%s_H */\n", up);
    char *text = b.failed || cuda.failed ? NULL : number_lines(b.s, x->file);
    if (!text)
        kf_err(err, errlen, "out of memory");
    sb_free(&b);
    sb_free(&cuda);
    sb_free(&x->sig);
    free(sets);
    free(x);
    return text;
}

int custom_family_make(const char *spec_json, const char *config_path, char *err, size_t errlen)
{
    mk m = {err, errlen};
    cJSON *root = cJSON_Parse(spec_json);
    if (!root) {
        kf_err(err, errlen, "custom: not a JSON object");
        return -1;
    }
    cfam *c = calloc(1, sizeof *c);
    int rc = -1;
    if (!c) {
        kf_err(err, errlen, "custom: out of memory");
        goto out;
    }
    if (make(&m, c, root, config_path) != 0)
        goto out;
    strbuf id = {0};
    sb_printf(&id, "%s\n%s\n", c->source_path, spec_json);
    sb_append(&id, c->source_text);
    if (c->ref) { /* a reference kernel of its own: its source too */
        sb_printf(&id, "\n%s\n", c->ref->source_path);
        sb_append(&id, c->ref->source_text);
    }
    c->identity = sb_take(&id);
    if (!c->identity) {
        kf_err(err, errlen, "custom: out of memory");
        goto out;
    }
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
    c = NULL;
    if (probe(&m, made[nmade - 1]) != 0)
        rc = -1;
out:
    cfam_free(c);
    cJSON_Delete(root);
    return rc;
}
