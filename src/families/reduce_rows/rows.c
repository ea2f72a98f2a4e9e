/*
 * rows.c -- the row-wise reduction family: one value per row of a
 * rows x cols matrix whose rows start row_stride elements apart
 * (kernel_src/reduce_rows/reduce_rows.cuh, whose header documents the launch
 * rule this file follows).  Its parameter table, rules, launch plan, code
 * generation, per-row reference and comparison, and the fake-GPU model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "family.h"
#include "reduction.h"
#include "rows.h"
#include "util.h"
#include "verify.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))


static const char *const map_names[] = {"thread", "group", "block", "split", "tile"};
static const char *const block_reduce_names[] = {"shuffle", "shared"};
static const char *const combine_names[] = {"atomic", "last_block"};
static const char *const pipe_names[] = {"none", "next_tile"};
static const char *const load_names[] = {"plain", "ldg", "stream", "ldg_prefetch"};
_Static_assert(N_OF(map_names) == MAP_COUNT, "map names");
_Static_assert(N_OF(load_names) == LOAD_LDG_PREFETCH + 1, "load names");

static const int64_t group_only[] = {1, 2, 4, 8, 16, 32, 0};
static const int64_t vw_only[] = {1, 2, 4, 8, 0};

static const kf_param params[] = {
    KF_PARAM_DTYPE,
    KF_PARAM_OP,
    KF_PARAM_ACC,
    {.name = "map", .kind = KF_PK_ENUM, .names = map_names, .count = MAP_COUNT, .def = MAP_BLOCK,
     .macro = "KF_ROWS_MAP", .doc = "rows to threads: a thread, a group of lanes, a block per row, rows split "
                                    "over blocks, or tiles of short rows staged through shared memory"},
    {.name = "group", .kind = KF_PK_INT, .lo = 1, .hi = 32, .only = group_only, .def = 1,
     .allowed = "1, 2, 4, 8, 16 or 32 (lanes per row; map group: 2..32, others 1)", .macro = "KF_GROUP",
     .doc = "lanes per row for map group (32: a warp per row)"},
    {.name = "block_size", .kind = KF_PK_INT, .lo = 1, .hi = 1024, .def = 256,
     .allowed = "an integer 1..1024 (threads per block)", .macro = "KF_BS",
     .doc = "threads per block (a power of two, 32..1024)"},
    {.name = "elements_per_thread", .kind = KF_PK_INT, .lo = 1, .hi = 16, .def = 4, .allowed = "an integer 1..16",
     .macro = "KF_EPT", .doc = "vector loads in flight per thread per row (map tile: per tile)"},
    {.name = "rows_per_group", .kind = KF_PK_INT, .lo = 1, .hi = 16, .def = 1, .allowed = "an integer 1..16",
     .macro = "KF_RPG", .doc = "rows a team loads before folding any (short rows: more loads in flight)"},
    {.name = "vector_width", .kind = KF_PK_INT, .lo = 1, .hi = 8, .only = vw_only, .def = 4,
     .allowed = "1, 2, 4 or 8 (elements per load; 8 for bfloat16 and float16)", .macro = "KF_VW",
     .doc = "elements per load (each row gets its own aligned prefix and tail; 8: 2-byte dtypes)"},
    {.name = "load", .kind = KF_PK_ENUM, .names = load_names, .count = N_OF(load_names), .def = 0, .macro = "KF_LOAD",
     .doc = "global load flavour"},
    {.name = "block_reduce", .kind = KF_PK_ENUM, .names = block_reduce_names, .count = 2, .def = 0,
     .macro = "KF_BLOCK_REDUCE", .doc = "maps block and split: warp shuffles or a shared-memory tree"},
    {.name = "splits", .kind = KF_PK_INT, .lo = 1, .hi = 65536, .def = 1, .allowed = "an integer 1..65536",
     .doc = "map split: parts per row (launch-time)"},
    {.name = "split_combine", .kind = KF_PK_ENUM, .names = combine_names, .count = 2, .def = COMBINE_LAST_BLOCK,
     .macro = "KF_SPLIT_COMBINE", .doc = "map split: atomics, or the row's last block folds (deterministic)"},
    {.name = "grid", .kind = KF_PK_GRID, .def = 0, .doc = "blocks: auto (every tile), a count, "
     "{\"blocks_per_sm\": k} or {\"waves\": k} (grid-stride over the tiles)"},
    {.name = "pipeline", .kind = KF_PK_ENUM, .names = pipe_names, .count = 2, .def = 0, .macro = "KF_PIPE",
     .doc = "load the next tile before folding this one (map split: the next tile of a part)"},
    {.name = "min_blocks", .kind = KF_PK_INT, .lo = 0, .hi = 32, .def = 0, .allowed = "an integer 0..32",
     .macro = "KF_ROWS_MIN_BLOCKS", .doc = "resident blocks per SM asked of the compiler (0: none)"},
};
_Static_assert(N_OF(params) == WP_COUNT, "one table entry per parameter");

static const kf_param sizes[] = {
    {.name = "rows", .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 36, .pow2_strings = true,
     .allowed = "a row count 1..2^36 (an integer or a string such as \"2^20\")", .doc = "rows of the matrix"},
    {.name = "cols", .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 36, .pow2_strings = true,
     .allowed = "a column count 1..2^36 (an integer or a string such as \"2^10\")", .doc = "elements per row"},
    {.name = "row_stride", .kind = KF_PK_INT, .lo = 0, .hi = 1LL << 36, .pow2_strings = true, .optional = true,
     .allowed = "elements between row starts, >= cols (0: cols)", .doc = "elements between row starts (default and 0: cols)"},
};

#define MAX_ELEMS (1LL << 36)

static int p_int(const kf_variant *v, int i) { return (int)v->p[i]; }
static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static int check(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    kf_dtype t = variant_dtype(v);
    int map = p_int(v, WP_MAP), bs = p_int(v, WP_BLOCK_SIZE), group = p_int(v, WP_GROUP);
    int ept = p_int(v, WP_EPT), rpg = p_int(v, WP_RPG);
    int max_threads = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    if (kf_op_is_bitwise(variant_op(v)) && kf_dtype_is_float(t)) {
        kf_err(why, whylen, "op %s is bitwise: it needs an integer dtype, got %s", kf_op_names[variant_op(v)],
               kf_dtype_names[t]);
        return -1;
    }
    if (kf_acc_check(t, variant_op(v), variant_acc(v), why, whylen) != 0)
        return -1;
    /* loads are at most 16 bytes (common.cuh: kf_load_vec) */
    if (v->p[WP_VECTOR_WIDTH] == 8 && kf_dtype_size(t) != 2) {
        kf_err(why, whylen, "vector_width 8 needs a 2-byte dtype (bfloat16 or float16: 8 x 2 = 16-byte loads), got %s",
               kf_dtype_names[t]);
        return -1;
    }
    if (!is_pow2(bs) || bs < 32 || bs > max_threads) {
        kf_err(why, whylen, "block_size %d: the kernel needs a power of two from 32 to %d", bs, max_threads);
        return -1;
    }
    if (map == MAP_GROUP && (group < 2 || group > 32)) {
        kf_err(why, whylen, "map group needs group 2, 4, 8, 16 or 32 (lanes per row), got %d", group);
        return -1;
    }
    if (map != MAP_GROUP && group != 1) {
        kf_err(why, whylen, "group %d applies to map group only (map %s: group 1)", group, map_names[map]);
        return -1;
    }
    if (rpg * ept > 16) {
        kf_err(why, whylen, "rows_per_group x elements_per_thread must be at most 16 (loads in flight), got %d x %d",
               rpg, ept);
        return -1;
    }
    if (map == MAP_SPLIT && rpg != 1) {
        kf_err(why, whylen, "map split takes rows_per_group 1");
        return -1;
    }
    if (map != MAP_SPLIT && (v->p[WP_SPLITS] != 1 || v->p[WP_COMBINE] != COMBINE_LAST_BLOCK)) {
        kf_err(why, whylen, "splits and split_combine apply to map split only (map %s: splits 1, split_combine "
                            "last_block)", map_names[map]);
        return -1;
    }
    if (map == MAP_TILE && rpg != 1) {
        kf_err(why, whylen, "map tile takes rows_per_group 1 (a tile holds block_size x elements_per_thread x "
                            "vector_width elements of whole rows), got %d", rpg);
        return -1;
    }
    if (map == MAP_TILE) {
        /* the tile, one padding slot per 128 bytes, as accumulator values */
        int64_t te = (int64_t)bs * ept * v->p[WP_VECTOR_WIDTH], ab = (int64_t)kf_dtype_size(variant_acc_dtype(v));
        int64_t smem = (te + te / (128 / ab)) * ab;
        if (smem > 49152) {
            kf_err(why, whylen, "map tile: block_size x elements_per_thread x vector_width = %lld elements need "
                                "%lld bytes of shared memory as %s, more than 48 KiB", (long long)te,
                   (long long)smem, kf_dtype_names[variant_acc_dtype(v)]);
            return -1;
        }
    }
    if ((map == MAP_THREAD || map == MAP_GROUP || map == MAP_TILE) && v->p[WP_BLOCK_REDUCE] != 0) {
        kf_err(why, whylen, "block_reduce applies to maps block and split (map %s: shuffle)", map_names[map]);
        return -1;
    }
    size_t acc_bytes = kf_dtype_size(variant_acc_dtype(v));
    if (v->p[WP_BLOCK_REDUCE] == 1 && (int64_t)rpg * bs * (int64_t)acc_bytes > 32768) {
        kf_err(why, whylen, "block_reduce shared needs rows_per_group x block_size x %zu bytes <= 32 KiB",
               acc_bytes);
        return -1;
    }
    if (v->p[WP_MIN_BLOCKS] > 0 && (int64_t)bs * v->p[WP_MIN_BLOCKS] > 2048) {
        kf_err(why, whylen, "min_blocks %lld x block_size %d is more threads than an SM holds (2048)",
               (long long)v->p[WP_MIN_BLOCKS], bs);
        return -1;
    }
    return 0;
}

static void resolve(kf_variant *v)
{
    v->p[WP_ACC_DTYPE] = kf_acc_resolve(variant_dtype(v), variant_acc(v));
}

static int check_shape(const kf_variant *v, kf_shape *s, char *why, size_t whylen)
{
    (void)v;
    if (s->d[2] == 0)
        s->d[2] = s->d[1];
    if (s->d[2] < s->d[1]) {
        kf_err(why, whylen, "row_stride %lld is below cols %lld: rows would overlap", (long long)s->d[2],
               (long long)s->d[1]);
        return -1;
    }
    if (s->d[0] > MAX_ELEMS / s->d[2]) {
        kf_err(why, whylen, "rows x row_stride is more than 2^36 elements");
        return -1;
    }
    return 0;
}

static void label(const kf_variant *v, char *buf, size_t len)
{
    strbuf g = {0};
    param_text(&g, &params[WP_GRID], v->p[WP_GRID]);
    int map = p_int(v, WP_MAP);
    char how[32];
    if (map == MAP_GROUP)
        snprintf(how, sizeof how, "group%d", p_int(v, WP_GROUP));
    else if (map == MAP_SPLIT)
        snprintf(how, sizeof how, "split%d/%s", p_int(v, WP_SPLITS), combine_names[v->p[WP_COMBINE]]);
    else
        snprintf(how, sizeof how, "%s", map_names[map]);
    /* min_blocks > 0: "/mbK" (variants that differ only there get labels of their own) */
    char mb[16] = "";
    if (v->p[WP_MIN_BLOCKS] > 0)
        snprintf(mb, sizeof mb, "/mb%d", p_int(v, WP_MIN_BLOCKS));
    snprintf(buf, len, "%s/bs%d/ept%d/rpg%d/v%d/%s%s%s%s%s%s%s", how, p_int(v, WP_BLOCK_SIZE), p_int(v, WP_EPT),
             p_int(v, WP_RPG), p_int(v, WP_VECTOR_WIDTH), g.s ? g.s : "?",
             v->p[WP_LOAD] ? "/" : "", v->p[WP_LOAD] ? load_names[v->p[WP_LOAD]] : "",
             v->p[WP_BLOCK_REDUCE] ? "/shared_tree" : "", v->p[WP_PIPE] ? "/pipe" : "", mb,
             kf_acc_label(variant_acc(v)));
    sb_free(&g);
}

static const char *const derived_names[] = {"elem_bytes", "vector_bytes", "team"};

static double derived_value(const kf_variant *v, int which)
{
    double es = (double)kf_dtype_size(variant_dtype(v));
    int map = p_int(v, WP_MAP);
    switch (which) {
    case 0: return es;
    case 1: return es * (double)v->p[WP_VECTOR_WIDTH];
    default:
        return map == MAP_THREAD || map == MAP_TILE ? 1 : map == MAP_GROUP ? (double)v->p[WP_GROUP]
                                                                           : (double)v->p[WP_BLOCK_SIZE];
    }
}

static char *source(const kf_variant *v, char *err, size_t errlen)
{
    const char *common = codegen_template("common");
    const char *rows = codegen_template("reduce_rows");
    if (!common || !rows) {
        kf_err(err, errlen, "kernel templates missing from the build (kernel_src/common.cuh, reduce_rows/reduce_rows.cuh)");
        return NULL;
    }
    strbuf b = {0};
    codegen_comment(&b, v);
    sb_append(&b, "// rows, cols, row_stride, splits and the grid are launch-time arguments.\n\n");
    codegen_defines(&b, v);
    sb_append(&b, "#if KF_ROWS_MIN_BLOCKS > 0\n#define KF_MIN_BLOCKS KF_ROWS_MIN_BLOCKS\n#endif\n\n");
    codegen_plant_defines(&b, v);
    sb_append(&b, common);
    sb_append(&b, "\n");
    sb_append(&b, rows);
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

// ---------------------------------------------------------------------------
// launches (reduce_rows.cuh: "Launch rule")

typedef struct {
    int64_t grid, tiles;
    int64_t off_partial;        /* workspace: [tickets][partial] */
    int64_t partial_elems;
} wplan;
_Static_assert(sizeof(wplan) <= sizeof(((kf_plan_info *)0)->priv), "plan fits");

int64_t rows_tile_fit(int64_t te, int64_t vw, int64_t bs, int64_t cols, int64_t stride)
{
    if (stride != cols || cols < 1 || cols > te / vw)
        return bs;
    return te / cols / vw * vw;
}

int64_t rows_tile_rows(const kf_variant *v, int64_t cols, int64_t stride)
{
    int64_t bs = v->p[WP_BLOCK_SIZE], rpg = v->p[WP_RPG], vw = v->p[WP_VECTOR_WIDTH];
    switch (v->p[WP_MAP]) {
    case MAP_THREAD: return bs * rpg;
    case MAP_GROUP: return bs / v->p[WP_GROUP] * rpg;
    case MAP_BLOCK: return rpg;
    case MAP_TILE: return rows_tile_fit(bs * v->p[WP_EPT] * vw, vw, bs, cols, stride);
    default: return 0;
    }
}

static int64_t align256(int64_t x) { return (x + 255) & ~(int64_t)255; }

static int plan(const kf_variant *v, const kf_shape *s, int sms, int occupancy, kf_plan_info *pi)
{
    memset(pi, 0, sizeof *pi);
    wplan *w = (wplan *)pi->priv;
    int64_t rows = s->d[0], cols = s->d[1];
    if (rows < 1 || cols < 1)
        return -1;
    int map = p_int(v, WP_MAP);
    int64_t splits = map == MAP_SPLIT ? v->p[WP_SPLITS] : 1;
    int64_t per = rows_tile_rows(v, cols, s->d[2]);
    w->tiles = map == MAP_SPLIT ? rows * splits : (rows + per - 1) / per;
    kf_grid g = kf_grid_decode(v->p[WP_GRID]);
    int64_t cap;
    switch (g.kind) {
    case KF_GRID_BLOCKS: cap = g.value; break;
    case KF_GRID_PER_SM: cap = g.value * (sms > 0 ? sms : 1); break;
    case KF_GRID_WAVES: cap = g.value * (occupancy > 0 ? occupancy : 1) * (sms > 0 ? sms : 1); break;
    default: cap = w->tiles; break;
    }
    w->grid = w->tiles < cap ? w->tiles : cap;
    if (w->grid > 2147483647LL)
        w->grid = 2147483647LL;
    if (w->grid < 1)
        w->grid = 1;
    bool combine = map == MAP_SPLIT;
    bool atomic = combine && v->p[WP_COMBINE] == COMBINE_ATOMIC;
    int64_t es = (int64_t)kf_dtype_size(variant_acc_dtype(v)); /* partials: the accumulator's type */
    if (combine) {
        w->partial_elems = atomic ? rows : rows + w->grid - 1;
        w->off_partial = align256(rows * 4);
        pi->workspace_bytes = align256(w->off_partial + w->partial_elems * es);
    }
    pi->launches = 1;
    pi->blocks = w->grid;
    /* any order of at most cols + the block's tree: the sequential bound */
    pi->depth = cols + 2 * 11 + splits;
    kf_op op = variant_op(v);
    pi->deterministic = !(atomic && kf_dtype_is_float(variant_dtype(v)) && (op == KF_OP_SUM || op == KF_OP_PROD));
    return 0;
}

static int64_t input_elems(const kf_shape *s) { return (s->d[0] - 1) * s->d[2] + s->d[1]; }
static int64_t outputs(const kf_shape *s) { return s->d[0]; }
static double bytes(const kf_variant *v, const kf_shape *s)
{
    return (double)s->d[0] * (double)s->d[1] * (double)kf_dtype_size(variant_dtype(v));
}

/* tickets 0; partials the identity (the atomic combine accumulates in them) */
static void workspace_init(const kf_variant *v, const kf_plan_info *pi, void *ws)
{
    const wplan *w = (const wplan *)pi->priv;
    memset(ws, 0, (size_t)pi->workspace_bytes);
    if (w->partial_elems == 0)
        return;
    kf_value id = verify_identity(variant_acc_dtype(v), variant_op(v));
    size_t es = kf_dtype_size(variant_acc_dtype(v));
    for (int64_t i = 0; i < w->partial_elems; i++)
        memcpy((char *)ws + w->off_partial + i * (int64_t)es, &id, es);
}

static int enqueue(kf_launcher *l, const kf_variant *v, const kf_shape *s, const kf_plan_info *pi,
                   const kf_buffers *b)
{
    const wplan *w = (const wplan *)pi->priv;
    unsigned long long in = b->at[RED_IN], out = b->at[RED_OUT];
    unsigned long long tickets = w->partial_elems ? b->at[RED_WS] : 0;
    unsigned long long partial = w->partial_elems ? b->at[RED_WS] + (uint64_t)w->off_partial : 0;
    long long rows = s->d[0], cols = s->d[1], stride = s->d[2];
    int splits = p_int(v, WP_MAP) == MAP_SPLIT ? p_int(v, WP_SPLITS) : 1;
    void *args[] = {&in, &rows, &cols, &stride, &out, &partial, &tickets, &splits};
    return kf_launch(l, w->grid, p_int(v, WP_BLOCK_SIZE), args);
}

// ---------------------------------------------------------------------------
// reference: every row

typedef struct {
    kf_dtype t, acc;    /* the input's type, the accumulator's (the outputs') */
    kf_op op;
    const kf_shape *s;
    const void *in;
    void *ref;
    double *aux;
} ref_job;

static void reference_rows(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    const ref_job *j = ctx;
    size_t es = kf_dtype_size(j->t), eo = kf_dtype_size(j->acc);
    for (int64_t r = lo; r < hi; r++) {
        kf_value x = verify_reference_acc(j->t, j->acc, j->op, (const char *)j->in + (size_t)(r * j->s->d[2]) * es,
                                          j->s->d[1], &j->aux[r]);
        memcpy((char *)j->ref + (size_t)r * eo, &x, eo);
    }
}

/* Rows in pieces of about 2^20 elements on every CPU (a single long row is
 * split inside verify_reference instead). */
static void reference(const kf_variant *v, const kf_shape *s, const void *in, void *ref, double *aux)
{
    ref_job j = {variant_dtype(v), variant_out_dtype(v), variant_op(v), s, in, ref, aux};
    int64_t grain = s->d[1] >= ((int64_t)1 << 20) ? 1 : ((int64_t)1 << 20) / (s->d[1] > 0 ? s->d[1] : 1);
    kf_parallel_for(s->d[0], grain, reference_rows, &j);
}

/* Element i feeds its row's output alone (none where it is padding
 * between cols and row_stride). */
static void reference_at(const kf_variant *v, const kf_shape *s, const void *in, int64_t i, void *ref, double *aux)
{
    if (s->d[2] < 1) {
        reference(v, s, in, ref, aux);
        return;
    }
    ref_job j = {variant_dtype(v), variant_out_dtype(v), variant_op(v), s, in, ref, aux};
    int64_t r = i / s->d[2];
    if (r < s->d[0] && i % s->d[2] < s->d[1])
        reference_rows(&j, 0, r, r + 1);
}

/* Every row against the reference, in pieces of rows on every CPU (2^24
 * rows are compared several times per case).  Per piece: the wrong rows,
 * the first of them, and the first row closest to its bound. */
typedef struct {
    int64_t bad, first_bad, worst_row;
    double worst;
} cmp_part;

typedef struct {
    kf_dtype t, acc;    /* the outputs' type, the accumulator's */
    kf_op op;
    int64_t cols, depth;
    bool exact;
    const void *got, *ref;
    const double *aux;
    cmp_part *parts;
} cmp_job;

static kf_value row_value(const void *base, int64_t i, size_t es)
{
    kf_value x;
    memset(&x, 0, sizeof x);
    memcpy(&x, (const char *)base + (size_t)i * es, es);
    return x;
}

static void compare_rows(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    const cmp_job *j = ctx;
    size_t es = kf_dtype_size(j->t);
    cmp_part p = {0, -1, -1, -1};
    for (int64_t i = lo; i < hi; i++) {
        kf_value g = row_value(j->got, i, es), rf = row_value(j->ref, i, es);
        double tol = j->exact ? 0 : verify_tolerance_out(j->acc, j->t, j->op, j->cols, j->depth, j->aux[i], rf);
        double err, used;
        if (!verify_check(j->t, j->op, g, rf, tol, &err, &used)) {
            if (p.bad++ == 0)
                p.first_bad = i;
            continue;
        }
        double score = used > 0 ? err / used : 0;
        if (score > p.worst) {
            p.worst = score;
            p.worst_row = i;
        }
    }
    j->parts[piece] = p;
}

static int64_t compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *pi, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r)
{
    const int64_t grain = 1 << 16;
    int64_t rows = s->d[0];
    if (rows <= 0)
        return 0;
    cmp_part one, *parts = &one;
    if (rows > grain && !(parts = malloc((size_t)((rows - 1) / grain + 1) * sizeof *parts))) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory comparing %lld rows", (long long)rows);
        return rows;
    }
    cmp_job j = {variant_out_dtype(v), variant_acc_dtype(v), variant_op(v), s->d[1], pi->depth, exact, got, ref, aux, parts};
    int64_t pieces = kf_parallel_for(rows, grain, compare_rows, &j);
    /* show the first wrong row, else the row closest to its bound */
    int64_t bad = 0, show = -1;
    double worst = -1;
    for (int64_t k = 0; k < pieces; k++) {
        if (parts[k].bad && bad == 0)
            show = parts[k].first_bad;
        bad += parts[k].bad;
        if (bad == 0 && parts[k].worst > worst) {
            worst = parts[k].worst;
            show = parts[k].worst_row;
        }
    }
    if (parts != &one)
        free(parts);
    if (show >= 0) {
        size_t es = kf_dtype_size(j.t);
        kf_value rf = row_value(ref, show, es);
        double tol = exact ? 0 : verify_tolerance_out(j.acc, j.t, j.op, j.cols, j.depth, aux[show], rf);
        verify_compare(j.t, j.op, row_value(got, show, es), rf, tol, r);
        r->err_scale = verify_err_scale(j.t, j.op, aux[show], rf);
        if (bad)
            snprintf(r->worst_at, sizeof r->worst_at, "out[%lld]", (long long)(show & 0xFFFFFFFFFFFFLL));
    }
    return bad;
}

// ---------------------------------------------------------------------------
// planted faults (test hook: KFORGE_PLANT, codegen.h), where
// reduce_rows.cuh's loads and stores put them

/* Row r's scalar prefix, body vectors and tail (verify_vector_split; the
 * input starts `offset` elements past a 256-byte boundary). */
static void row_body(const kf_variant *v, const kf_shape *s, int64_t offset, int64_t r, int64_t *prefix,
                     int64_t *nv, int64_t *tail)
{
    verify_vector_split(offset + r * s->d[2], kf_dtype_size(variant_dtype(v)), (int)v->p[WP_VECTOR_WIDTH], s->d[1],
                        prefix, nv, tail);
}

/* The first element block 1 folds: the first row of its first tile (maps
 * 0-2), or the start of its first part (map 3). */
static int block1_first(const kf_variant *v, const kf_shape *s, const wplan *w, int64_t offset, int64_t *elem)
{
    int64_t rows = s->d[0], stride = s->d[2];
    if (w->grid < 2)
        return -1;
    if (p_int(v, WP_MAP) != MAP_SPLIT) {
        int64_t r = rows_tile_rows(v, s->d[1], stride);
        if (r >= rows)
            return -1;
        *elem = r * stride;
        return 0;
    }
    int64_t ns = v->p[WP_SPLITS] > 1 ? v->p[WP_SPLITS] : 1, work = rows * ns;
    int64_t q = work / w->grid, rem = work % w->grid;
    int64_t i = q + (1 < rem ? 1 : 0);
    if (q + (1 < rem ? 1 : 0) == 0 || i >= work)
        return -1;
    int64_t r = i / ns, p0 = i % ns, prefix, nv, tail;
    if (p0 == 0) {
        *elem = r * stride;
        return 0;
    }
    row_body(v, s, offset, r, &prefix, &nv, &tail);
    int64_t chunk = ((nv + ns - 1) / ns + 7) & ~(int64_t)7, lo = p0 * chunk;
    if (lo >= nv)
        return -1;
    *elem = r * stride + prefix + lo * v->p[WP_VECTOR_WIDTH];
    return 0;
}

static int plant(const kf_variant *v, const kf_shape *s, const kf_plan_info *pi, int64_t offset, int kind,
                 kf_plant *spec, char *why, size_t whylen)
{
    const wplan *w = (const wplan *)pi->priv;
    int64_t rows = s->d[0], cols = s->d[1], stride = s->d[2];
    int64_t mid = (rows - 1) / 2; /* a row with another after it when rows >= 2 */
    *spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = -1};
    switch (kind) {
    case KF_PLANT_DROP_FIRST: spec->elem = 0; return 0;
    case KF_PLANT_DROP_LAST: spec->elem = (rows - 1) * stride + cols - 1; return 0;
    case KF_PLANT_DROP_TAIL:
        for (int64_t r = 0; r < rows && r < 16; r++) {
            int64_t prefix, nv, tail;
            row_body(v, s, offset, r, &prefix, &nv, &tail);
            if (tail > 0) {
                spec->elem = r * stride + prefix + nv * v->p[WP_VECTOR_WIDTH];
                return 0;
            }
        }
        kf_err(why, whylen, v->p[WP_VECTOR_WIDTH] == 1 ? "no vector tail (vector_width 1)"
                                                         : "no vector tail in the first 16 rows");
        return -1;
    case KF_PLANT_DROP_BLOCK:
        if (block1_first(v, s, w, offset, &spec->elem) != 0) {
            kf_err(why, whylen, "no second block with elements");
            return -1;
        }
        return 0;
    case KF_PLANT_SHIFT:
        if (rows < 2 && cols < 2) {
            kf_err(why, whylen, "one element: no neighbour to read");
            return -1;
        }
        spec->elem = rows >= 2 ? mid * stride + (cols - 1) / 2 : (cols - 2) / 2;
        spec->shift = true;
        return 0;
    case KF_PLANT_SKIP_COL: spec->elem = mid * stride + cols - 1; return 0;
    case KF_PLANT_ROW_SHIFT:
        if (rows < 2) {
            kf_err(why, whylen, "one row: no next row to write");
            return -1;
        }
        spec->unit = mid;
        spec->unwritten = mid;
        return 0;
    default:
        kf_err(why, whylen, "%s is not a fault of the reduce_rows family", kf_plant_names[kind]);
        return -1;
    }
}

/* row_shift: row unit's value lands in row unit + 1 (whose own store races
 * with it; either may win: the model keeps the shifted one). */
static void plant_outputs(const kf_variant *v, const kf_shape *s, const kf_plan_info *pi, int64_t offset,
                          const kf_plant *spec, const void *in, void *out)
{
    (void)s, (void)pi, (void)offset, (void)in;
    size_t es = kf_dtype_size(variant_out_dtype(v));
    memcpy((char *)out + (size_t)(spec->unit + 1) * es, (char *)out + (size_t)spec->unit * es, es);
}

/* A smooth landscape: a block per row is best for long rows, a thread or
 * group for short ones, splits for few long rows. */
static double fake_ms(const kf_variant *v, const kf_shape *s, const kf_device *d, const kf_plan_info *pi)
{
    (void)d;
    double cols = (double)s->d[1], rows = (double)s->d[0];
    double team = derived_value(v, 2);
    double fit = 1.0 / (1.0 + 0.2 * fabs(log2((cols / 4 + 1) / team)));
    double bw = 2400.0 * fit / (1.0 + 0.1 * fabs(log2(v->p[WP_BLOCK_SIZE] / 256.0)));
    if (rows < 132 && p_int(v, WP_MAP) != MAP_SPLIT)
        bw *= rows / 132.0;
    return bytes(v, s) / (bw * 1e9) * 1e3 + 0.002 * pi->launches;
}

static const char *const entries[] = {"kf_reduce_rows"};
static void segments(const kf_shape *s, int64_t *segs, int64_t *len, int64_t *stride)
{
    *segs = s->d[0];
    *len = s->d[1];
    *stride = s->d[2];
}

static const reduction_ops ops = {input_elems, outputs, workspace_init, reference, compare, reference_at, segments};

const kf_family kf_family_reduce_rows = {
    .name = "reduce_rows",
    .doc = "row-wise reduction: one value per row of a rows x cols matrix (row_stride apart)",
    .params = params,
    .nparams = WP_COUNT,
    .sizes = sizes,
    .nsizes = N_OF(sizes),
    .p_block = WP_BLOCK_SIZE,
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
    .export_source = rows_export_source,
};
