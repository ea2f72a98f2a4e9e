/*
 * tile.c -- a kernel family that lives in tests/, not in src/families/, and
 * is registered at run time (issue 22): y = a * x + b over a rows x cols
 * matrix, tiled in 2-D.  Two inputs of different element types (x float32,
 * a int32 per column), one output, no dtype or op axis, a 2-D grid and
 * block and dynamic shared memory.  Its kernel is read from tile.cuh when a
 * variant's source is made.  The program registers the family and runs the
 * kforge command line: `kforge-tile run tests/family_tile/tile.json`.
 *
 * It is the worked example of docs/ARCHITECTURE.md: a family describes its
 * buffers, kernels and launches, and gives a reference and a comparison;
 * the engine does the rest.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "codegen.h"
#include "family.h"
#include "util.h"

#ifndef KF_TILE_CUH
#define KF_TILE_CUH "tests/family_tile/tile.cuh"
#endif

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum { TP_TILE_X, TP_TILE_Y, TP_ROWS_PER_THREAD, TP_EXTRA_SMEM, TP_COUNT };
enum { TB_X, TB_A, TB_Y };          /* the buffers, in the kernel's order */
static const float B_CONST = 0.5f;  /* b: exact in float32 */

static const int64_t tile_x_only[] = {8, 16, 32, 64, 128, 256, 512, 1024, 0};
static const int64_t tile_y_only[] = {1, 2, 4, 8, 16, 32, 64, 0};

static const kf_param params[] = {
    {.name = "tile_x", .kind = KF_PK_INT, .lo = 8, .hi = 1024, .only = tile_x_only, .def = 32,
     .allowed = "a power of two 8..1024", .macro = "KF_TILE_X", .doc = "threads (columns) of a tile in x"},
    {.name = "tile_y", .kind = KF_PK_INT, .lo = 1, .hi = 64, .only = tile_y_only, .def = 8,
     .allowed = "a power of two 1..64", .macro = "KF_TILE_Y", .doc = "threads of a tile in y"},
    {.name = "rows_per_thread", .kind = KF_PK_INT, .lo = 1, .hi = 8, .def = 1, .allowed = "an integer 1..8",
     .macro = "KF_ROWS_PER_THREAD", .doc = "rows each thread computes"},
    {.name = "extra_smem", .kind = KF_PK_INT, .lo = 0, .hi = 1024, .def = 0, .allowed = "KiB 0..1024",
     .doc = "more dynamic shared memory per block, unused (KiB; launch-time): above 48 KiB the launcher opts in, "
            "above the device's limit the case is skipped"},
};

static const kf_param sizes[] = {
    {.name = "rows", .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 20, .pow2_strings = true,
     .allowed = "a row count 1..2^20", .doc = "rows of x and y"},
    {.name = "cols", .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 20, .pow2_strings = true,
     .allowed = "a column count 1..2^20", .doc = "columns of x and y, and the length of a"},
};

static const char *const derived_names[] = {"threads"};

static int64_t P(const kf_variant *v, int i) { return v->p[i]; }

static double derived_value(const kf_variant *v, int which)
{
    (void)which;
    return (double)(P(v, TP_TILE_X) * P(v, TP_TILE_Y));
}

/* Every variant compiles; a block beyond the device's limit is the
 * launcher's to refuse (a skip with its reason). */
static int check(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    (void)v, (void)dev, (void)why, (void)whylen;
    return 0;
}

static int check_shape(const kf_variant *v, kf_shape *s, char *why, size_t whylen)
{
    (void)v, (void)s, (void)why, (void)whylen;
    return 0;
}

static void label(const kf_variant *v, char *buf, size_t len)
{
    int n = snprintf(buf, len, "tile%lldx%lld/r%lld", (long long)P(v, TP_TILE_X), (long long)P(v, TP_TILE_Y),
                     (long long)P(v, TP_ROWS_PER_THREAD));
    if (P(v, TP_EXTRA_SMEM) && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "/smem+%lldk", (long long)P(v, TP_EXTRA_SMEM));
}

static char *source(const kf_variant *v, char *err, size_t errlen)
{
    const char *path = getenv("KFORGE_TILE_CUH"); /* where the tree moved (a GPU machine's copy) */
    char *tpl = codegen_template_file(path && path[0] ? path : KF_TILE_CUH, err, errlen);
    if (!tpl)
        return NULL;
    strbuf b = {0};
    codegen_comment(&b, v);
    codegen_defines(&b, v);
    codegen_plant_defines(&b, v);
    sb_append(&b, "\n");
    sb_append(&b, tpl);
    free(tpl);
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

static void block_shape(const kf_variant *v, kf_dim3 *block, unsigned *smem)
{
    *block = (kf_dim3){(unsigned)P(v, TP_TILE_X), (unsigned)P(v, TP_TILE_Y), 1};
    *smem = (unsigned)(P(v, TP_TILE_X) * 4 + P(v, TP_EXTRA_SMEM) * 1024);
}

typedef struct {
    kf_dim3 grid;
} tplan;

static int plan(const kf_variant *v, const kf_shape *s, int sms, int occupancy, kf_plan_info *pi)
{
    (void)sms, (void)occupancy;
    memset(pi, 0, sizeof *pi);
    tplan *t = (tplan *)pi->priv;
    int64_t per = P(v, TP_TILE_Y) * P(v, TP_ROWS_PER_THREAD);
    int64_t gx = (s->d[1] + P(v, TP_TILE_X) - 1) / P(v, TP_TILE_X), gy = (s->d[0] + per - 1) / per;
    if (gx > 2147483647LL || gy > 2147483647LL)
        return -1;
    t->grid = (kf_dim3){(unsigned)gx, (unsigned)gy, 1}; /* gy over 65535: the launcher skips it */
    pi->launches = 1;
    pi->blocks = gx * gy;
    pi->deterministic = true;
    return 0;
}

static void buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set)
{
    (void)v, (void)p;
    int64_t n = s->d[0] * s->d[1];
    set->n = 3;
    set->b[TB_X] = (kf_buffer){"x", KF_ROLE_IN, KF_FLOAT32, 4, n, true};
    set->b[TB_A] = (kf_buffer){"a", KF_ROLE_IN, KF_INT32, 4, s->d[1], false};
    set->b[TB_Y] = (kf_buffer){"y", KF_ROLE_OUT, KF_FLOAT32, 4, n, false};
}

/* Small integers: every y is exact in float32 (|a x + b| < 2^7).  The
 * same seed gives the same data. */
static void fill(const kf_variant *v, const kf_shape *s, int buf, uint64_t seed, bool exact, void *host,
                 int64_t elems)
{
    (void)v, (void)s, (void)exact;
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)buf + 1;
    for (int64_t i = 0; i < elems; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int k = (int)((state >> 33) % 17) - 8; /* -8..8 */
        if (buf == TB_X)
            ((float *)host)[i] = (float)k;
        else
            ((int32_t *)host)[i] = k / 2; /* -4..4 */
    }
}

static void reference(const kf_variant *v, const kf_shape *s, const void *const *in, void *const *ref,
                      double *const *aux)
{
    (void)v, (void)aux;
    const float *x = in[TB_X];
    const int32_t *a = in[TB_A];
    float *y = ref[TB_Y];
    for (int64_t r = 0; r < s->d[0]; r++)
        for (int64_t c = 0; c < s->d[1]; c++)
            y[r * s->d[1] + c] = (float)a[c] * x[r * s->d[1] + c] + B_CONST;
}

/* Exact: every element bit for bit; else within 1e-6 relative.  The first
 * wrong element is shown ("[row][col]"). */
static int64_t compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int buf, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r)
{
    (void)v, (void)p, (void)buf, (void)aux;
    const float *g = got, *f = ref;
    int64_t n = s->d[0] * s->d[1], bad = 0, show = 0;
    for (int64_t i = 0; i < n; i++) {
        bool ok = exact ? memcmp(&g[i], &f[i], sizeof g[i]) == 0 : fabsf(g[i] - f[i]) <= 1e-6f * fabsf(f[i]);
        if (!ok && bad++ == 0)
            show = i;
    }
    snprintf(r->gpu_value, sizeof r->gpu_value, "%.9g", (double)g[show]);
    snprintf(r->ref_value, sizeof r->ref_value, "%.9g", (double)f[show]);
    r->abs_err = isnan(g[show]) ? INFINITY : fabs((double)g[show] - (double)f[show]);
    r->tolerance = exact ? 0 : 1e-6 * fabs((double)f[show]);
    if (bad)
        snprintf(r->worst_at, sizeof r->worst_at, "y[%lld][%lld]", (long long)(show / s->d[1]),
                 (long long)(show % s->d[1]));
    return bad;
}

/* Test hook (KFORGE_PLANT=drop_last@...): the kernel leaves the last
 * element of y unwritten; the engine poisons outputs before each checked
 * run, so it must be caught.  Other faults have no place here. */
static int plant(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset, int kind,
                 kf_plant *spec, char *why, size_t whylen)
{
    (void)v, (void)p, (void)offset;
    if (kind != KF_PLANT_DROP_LAST) {
        kf_err(why, whylen, "%s is not a fault of the tile_axpb family", kf_plant_names[kind]);
        return -1;
    }
    *spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = s->d[0] * s->d[1] - 1};
    return 0;
}

/* The planted kernel's outputs: the reference with the unwritten element
 * left as each checked run's poison. */
static int64_t plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                           const kf_plant *spec, const void *const *in, void *const *ref, double *const *aux,
                           bool exact, kf_result *r)
{
    (void)offset, (void)in;
    int64_t n = s->d[0] * s->d[1], bad = 0;
    float *y = malloc((size_t)n * sizeof *y + 1);
    if (!y)
        return -1;
    for (int k = 0; k < 2 && bad == 0; k++) {
        memcpy(y, ref[TB_Y], (size_t)n * sizeof *y);
        memset(&y[spec->unwritten], k ? 0x00 : 0xFF, sizeof *y);
        bad = compare(v, s, p, TB_Y, y, ref[TB_Y], aux[TB_Y], exact, r);
    }
    free(y);
    return bad;
}

static double bytes(const kf_variant *v, const kf_shape *s)
{
    (void)v;
    return 8.0 * (double)s->d[0] * (double)s->d[1] + 4.0 * (double)s->d[1];
}

static int enqueue(kf_launcher *l, const kf_variant *v, const kf_shape *s, const kf_plan_info *pi,
                   const kf_buffers *b)
{
    const tplan *t = (const tplan *)pi->priv;
    unsigned long long x = b->at[TB_X], a = b->at[TB_A], y = b->at[TB_Y];
    float bb = B_CONST;
    long long rows = s->d[0], cols = s->d[1];
    void *args[] = {&x, &a, &y, &bb, &rows, &cols};
    kf_dim3 block;
    unsigned smem;
    block_shape(v, &block, &smem);
    return kf_launch_kernel(l, 0, t->grid, block, smem, args);
}

/* The fake GPU's landscape: best at a 64 x 4 tile of 2 rows per thread. */
static double fake_ms(const kf_variant *v, const kf_shape *s, const kf_device *d, const kf_plan_info *pi)
{
    (void)d, (void)pi;
    double bw = 2500.0;
    bw /= 1.0 + 0.2 * fabs(log2((double)P(v, TP_TILE_X) / 64.0));
    bw /= 1.0 + 0.1 * fabs(log2((double)P(v, TP_TILE_Y) / 4.0));
    bw /= 1.0 + 0.05 * fabs((double)P(v, TP_ROWS_PER_THREAD) - 2.0);
    return bytes(v, s) / (bw * 1e9) * 1e3 + 0.002;
}

static const char *const entries[] = {"kf_tile_axpb"};

static const kf_family tile_family = {
    .name = "tile_axpb",
    .doc = "test family: y = a * x + b, tiled in 2-D (tests/family_tile)",
    .params = params,
    .nparams = TP_COUNT,
    .sizes = sizes,
    .nsizes = N_OF(sizes),
    .p_block = -1,
    .entries = entries,
    .nentries = 1,
    .derived = derived_names,
    .nderived = N_OF(derived_names),
    .derived_value = derived_value,
    .check = check,
    .check_shape = check_shape,
    .label = label,
    .source = source,
    .block_shape = block_shape,
    .plan = plan,
    .buffers = buffers,
    .fill = fill,
    .bytes = bytes,
    .enqueue = enqueue,
    .reference = reference,
    .compare = compare,
    .plant = plant,
    .plant_check = plant_check,
    .fake_ms = fake_ms,
};

int main(int argc, char **argv)
{
    char err[256];
    if (family_register(&tile_family, err, sizeof err) < 0) {
        fprintf(stderr, "kforge-tile: %s\n", err);
        return KF_EXIT_USAGE;
    }
    return kforge_main(argc, argv);
}
