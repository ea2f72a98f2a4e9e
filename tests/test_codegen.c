/*
 * test_codegen.c -- generated CUDA source (header comment, #defines, what
 * the source depends on, the KFORGE_PLANT hook), launch plans (pure
 * arithmetic), and NVRTC compilation of every variant of every shipped
 * config plus a sample across dtypes, ops, algorithms, vector widths and
 * load flavours.  Needs NVRTC (the CUDA toolkit), not a GPU.
 *
 *   make build/tests/test_codegen && build/tests/test_codegen
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen.h"
#include "config.h"
#include "plan.h"
#include "rtc.h"
#include "space.h"
#include "util.h"

static char err[2048];

#define ck_contains(hay, needle)                                                                          \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "expected \"%s\" in the text", (needle))

static const char *srcdir(void)
{
    const char *e = getenv("KFORGE_SRCDIR");
    if (e && e[0])
        return e;
    struct stat st;
    if (stat("configs", &st) == 0 && S_ISDIR(st.st_mode))
        return ".";
    return "..";
}

static kf_variant base(void)
{
    kf_variant v;
    kf_variant_defaults(&v);
    space_resolve(&v);
    return v;
}

static char *gen(const kf_variant *v)
{
    char e[512] = "";
    char *s = codegen_source(v, e, sizeof e);
    ck_assert_msg(s != NULL, "codegen: %s", e);
    return s;
}

/* The value of axis a in v, as the header comment and JSON spell it. */
static void axis_value(const kf_variant *v, kf_axis a, char *buf, size_t len)
{
    switch (a) {
    case KF_AX_DTYPE: snprintf(buf, len, "%s", kf_dtype_names[v->dtype]); break;
    case KF_AX_OP: snprintf(buf, len, "%s", kf_op_names[v->op]); break;
    case KF_AX_ALGORITHM: snprintf(buf, len, "%s", kf_algorithm_names[v->algorithm]); break;
    case KF_AX_BLOCK_SIZE: snprintf(buf, len, "%d", v->block_size); break;
    case KF_AX_ELEMENTS_PER_THREAD: snprintf(buf, len, "%d", v->elements_per_thread); break;
    case KF_AX_UNROLL: snprintf(buf, len, "%s", kf_unroll_names[v->unroll]); break;
    case KF_AX_VECTOR_WIDTH: snprintf(buf, len, "%d", v->vector_width); break;
    case KF_AX_GRID: kf_grid_format(&v->grid, buf, len); break;
    case KF_AX_PASSES: snprintf(buf, len, "%s", kf_passes_names[v->passes]); break;
    case KF_AX_LAYOUT: snprintf(buf, len, "%s", kf_layout_names[v->layout]); break;
    case KF_AX_ACCUMULATOR: snprintf(buf, len, "%s", kf_accum_names[v->accumulator]); break;
    case KF_AX_WARP_REDUCE: snprintf(buf, len, "%s", kf_warp_reduce_names[v->warp_reduce]); break;
    case KF_AX_LOAD: snprintf(buf, len, "%s", kf_load_names[v->load]); break;
    default: snprintf(buf, len, "?"); break;
    }
}

/* The opening comment: the leading lines that start with "//". */
static char *opening_comment(const char *src)
{
    const char *p = src;
    while (strncmp(p, "//", 2) == 0) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return strndup(src, (size_t)(p - src));
}

/* Checks "//   <key>   <value>" is a line of the comment. */
static void comment_has(const char *comment, const char *key, const char *value)
{
    bool found = false;
    const char *p = comment;
    while (*p && !found) {
        char k[128], val[128];
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)l, p);
        if (sscanf(line, "// %127s %127s", k, val) == 2 && strcmp(k, key) == 0) {
            ck_assert_msg(strcmp(val, value) == 0, "comment: %s is %s, expected %s", key, val, value);
            found = true;
        }
        p += l + (nl ? 1 : 0);
    }
    ck_assert_msg(found, "the opening comment does not name %s:\n%s", key, comment);
}

// ---------------------------------------------------------------------------
// source text

static kf_variant unusual(void)
{
    kf_variant v = base();
    v.dtype = KF_UINT32;
    v.op = KF_OP_XOR;
    v.algorithm = KF_ALG_SEQUENTIAL;
    v.block_size = 512;
    v.elements_per_thread = 8;
    v.unroll = KF_UNROLL_LAST_WARP;
    v.vector_width = 4;
    v.grid = (kf_grid){KF_GRID_WAVES, 2};
    v.passes = KF_PASSES_LAST_BLOCK;
    v.layout = KF_LAYOUT_GRID;
    v.accumulator = KF_ACC_SHARED;
    v.warp_reduce = KF_WARP_INTRINSIC;
    v.load = KF_LOAD_LDG_PREFETCH;
    snprintf(v.name, sizeof v.name, "odd_one");
    return v;
}

START_TEST(header_names_every_parameter)
{
    kf_variant vs[4];
    vs[0] = base();
    vs[1] = unusual();
    vs[2] = base();
    vs[2].dtype = KF_FLOAT64;
    vs[2].op = KF_OP_PROD;
    vs[2].algorithm = KF_ALG_ATOMIC_SHARED;
    vs[2].passes = KF_PASSES_ATOMIC;
    vs[2].load = KF_LOAD_STREAM;
    vs[2].vector_width = 2;
    vs[3] = base();
    vs[3].dtype = KF_INT64;
    vs[3].algorithm = KF_ALG_INTERLEAVED_STRIDED;
    vs[3].unroll = KF_UNROLL_FULL;
    vs[3].load = KF_LOAD_LDG;
    vs[3].block_size = 32;
    for (int i = 0; i < 4; i++) {
        char why[256];
        ck_assert_msg(space_check_variant(&vs[i], NULL, why, sizeof why) == 0, "%d: %s", i, why);
        char *src = gen(&vs[i]);
        ck_assert(strncmp(src, "// kforge " KF_VERSION, 10 + strlen(KF_VERSION)) == 0);
        char *c = opening_comment(src);
        comment_has(c, "kernel", "reduce");
        for (int a = 0; a < KF_AX_COUNT; a++) {
            if (a == KF_AX_GRID) {
                /* only auto-or-fixed is compiled in; the block count is launch-time */
                comment_has(c, "grid_stride", vs[i].grid.kind == KF_GRID_AUTO ? "no" : "yes");
                continue;
            }
            char val[64];
            axis_value(&vs[i], (kf_axis)a, val, sizeof val);
            comment_has(c, kf_axis_names[a], val);
        }
        ck_contains(c, "launch-time");
        free(c);
        free(src);
    }
}
END_TEST

START_TEST(defines)
{
    kf_variant v = unusual();
    char *s = gen(&v);
    ck_contains(s, "\n#define KF_T unsigned int\n");
    ck_contains(s, "\n#define KF_ELEM_BYTES 4\n");
    ck_contains(s, "\n#define KF_IS_FLOAT 0\n");
    ck_contains(s, "\n#define KF_IS_SIGNED 0\n");
    ck_contains(s, "\n#define KF_INT32_LIKE 1\n");
    ck_contains(s, "\n#define KF_OP 6 /* xor */\n");
    ck_contains(s, "\n#define KF_ALG 4 /* sequential */\n");
    ck_contains(s, "\n#define KF_BS 512\n");
    ck_contains(s, "\n#define KF_EPT 8\n");
    ck_contains(s, "\n#define KF_UNROLL 1 /* last_warp */\n");
    ck_contains(s, "\n#define KF_VW 4\n");
    ck_contains(s, "\n#define KF_PASSES 3 /* last_block */\n");
    ck_contains(s, "\n#define KF_LAYOUT 1 /* grid */\n");
    ck_contains(s, "\n#define KF_ACC 1 /* shared */\n");
    ck_contains(s, "\n#define KF_WARP 2 /* intrinsic */\n");
    ck_contains(s, "\n#define KF_LOAD 3 /* ldg_prefetch */\n");
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");     /* waves: a fixed grid */
    ck_assert_ptr_null(strstr(s, "KF_PLANT 1"));
    ck_contains(s, "kf_reduce(");   /* the templates follow */
    ck_contains(s, "extern \"C\"");
    free(s);

    v = base();
    v.dtype = KF_INT64;
    s = gen(&v);
    ck_contains(s, "\n#define KF_T long long\n");
    ck_contains(s, "\n#define KF_ELEM_BYTES 8\n");
    ck_contains(s, "\n#define KF_IS_SIGNED 1\n");
    ck_contains(s, "\n#define KF_INT32_LIKE 0\n");
    ck_contains(s, "\n#define KF_PASSES 1 /* multi_kernel */\n");
    ck_contains(s, "\n#define KF_GRID_STRIDE 0\n");     /* grid auto: one tile per block */
    free(s);
    v.grid = (kf_grid){KF_GRID_BLOCKS, 2048};
    s = gen(&v);
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");
    free(s);
    v.grid = (kf_grid){KF_GRID_PER_SM, 2};
    s = gen(&v);
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");
    free(s);

    static const char *const ctype[] = {"int", "unsigned int", "long long", "float", "double"};
    static const int bytes[] = {4, 4, 8, 4, 8};
    for (int t = 0; t < KF_DTYPE_COUNT; t++) {
        v = base();
        v.dtype = (kf_dtype)t;
        s = gen(&v);
        char line[128];
        snprintf(line, sizeof line, "\n#define KF_T %s\n#define KF_ELEM_BYTES %d\n#define KF_IS_FLOAT %d\n", ctype[t],
                 bytes[t], kf_dtype_is_float(v.dtype));
        ck_contains(s, line);
        snprintf(line, sizeof line, "\n#define KF_IS_SIGNED %d\n", t == KF_INT32 || t == KF_INT64);
        ck_contains(s, line);
        free(s);
    }
}
END_TEST

/* The numbers codegen writes are the ones the templates test for. */
START_TEST(template_numbering)
{
    kf_variant v = base();
    char *s = gen(&v);
    char line[128];
    for (int a = 0; a < KF_ALG_COUNT; a++) {
        int k = snprintf(line, sizeof line, "#define KF_ALG_");
        for (const char *p = kf_algorithm_names[a]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", a);
        ck_contains(s, line);
    }
    for (int o = 0; o < KF_OP_COUNT; o++) {
        int k = snprintf(line, sizeof line, "#define KF_");
        for (const char *p = kf_op_names[o]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", o);
        ck_contains(s, line);
    }
    for (int u = 0; u < KF_UNROLL_COUNT; u++) {
        int k = snprintf(line, sizeof line, "#define KF_UNROLL_");
        for (const char *p = kf_unroll_names[u]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d", u);
        ck_contains(s, line);
    }
    for (int p = KF_PASSES_MULTI_KERNEL; p < KF_PASSES_COUNT; p++) {
        int k = snprintf(line, sizeof line, "#define KF_PASSES_");
        for (const char *q = kf_passes_names[p]; *q; q++)
            line[k++] = (char)toupper((unsigned char)*q);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", p);
        ck_contains(s, line);
    }
    free(s);
}
END_TEST

START_TEST(source_depends_on_compile_time_parameters_only)
{
    kf_variant a = base();
    a.dtype = KF_INT32;
    a.unroll = KF_UNROLL_FULL;
    a.grid = (kf_grid){KF_GRID_BLOCKS, 2048};
    char *sa = gen(&a);

    /* a fixed grid's size and kind, and the name: the same source */
    kf_grid grids[] = {{KF_GRID_BLOCKS, 64}, {KF_GRID_PER_SM, 4}, {KF_GRID_WAVES, 1}, {KF_GRID_WAVES, 2}};
    for (int i = 0; i < 4; i++) {
        kf_variant b = a;
        b.grid = grids[i];
        snprintf(b.name, sizeof b.name, "other%d", i);
        char *sb = gen(&b);
        ck_assert_msg(strcmp(sa, sb) == 0, "grid %d/name changed the source", i);
        free(sb);
    }
    /* auto is compiled in (no grid-stride loop), with any name */
    kf_variant au = a, au2 = a;
    au.grid = (kf_grid){KF_GRID_AUTO, 0};
    au2.grid = au.grid;
    snprintf(au2.name, sizeof au2.name, "named");
    char *su = gen(&au), *su2 = gen(&au2);
    ck_assert_msg(strcmp(sa, su) != 0, "grid auto and a fixed grid share a source");
    ck_assert_str_eq(su, su2);
    free(su);
    free(su2);

    /* any other axis: a different source */
    for (int ax = 0; ax < KF_AX_COUNT; ax++) {
        if (ax == KF_AX_GRID)
            continue;
        kf_variant b = a;
        switch ((kf_axis)ax) {
        case KF_AX_DTYPE: b.dtype = KF_UINT32; break;
        case KF_AX_OP: b.op = KF_OP_MAX; break;
        case KF_AX_ALGORITHM: b.algorithm = KF_ALG_SHUFFLE; break;
        case KF_AX_BLOCK_SIZE: b.block_size = 512; break;
        case KF_AX_ELEMENTS_PER_THREAD: b.elements_per_thread = 2; break;
        case KF_AX_UNROLL: b.unroll = KF_UNROLL_LAST_WARP; break;
        case KF_AX_VECTOR_WIDTH: b.vector_width = 2; break;
        case KF_AX_PASSES: b.passes = KF_PASSES_LAST_BLOCK; break;
        case KF_AX_LAYOUT: b.layout = KF_LAYOUT_GRID; break;
        case KF_AX_ACCUMULATOR: b.accumulator = KF_ACC_SHARED; break;
        case KF_AX_WARP_REDUCE: b.warp_reduce = KF_WARP_SHUFFLE; break;
        case KF_AX_LOAD: b.load = KF_LOAD_LDG; break;
        default: break;
        }
        char why[256];
        ck_assert_msg(space_check_variant(&b, NULL, why, sizeof why) == 0, "%s: %s", kf_axis_names[ax], why);
        char *sb = gen(&b);
        ck_assert_msg(strcmp(sa, sb) != 0, "changing %s left the source the same", kf_axis_names[ax]);
        free(sb);
    }
    free(sa);

    /* generation is deterministic */
    kf_variant u = unusual();
    char *s1 = gen(&u), *s2 = gen(&u);
    ck_assert_str_eq(s1, s2);
    free(s1);
    free(s2);
}
END_TEST

START_TEST(unresolved_passes_refused)
{
    kf_variant v;
    kf_variant_defaults(&v);
    char e[256] = "";
    ck_assert_ptr_null(codegen_source(&v, e, sizeof e));
    ck_contains(e, "passes must be resolved");
}
END_TEST

START_TEST(launch_comment)
{
    kf_variant v = unusual();
    char *c = codegen_launch_comment(&v);
    ck_contains(c, "// ===== variant odd_one -- sequential/bs512/ept8/last_warp/v4/2waves/last_block");
    ck_contains(c, "//   name                 odd_one\n");
    ck_contains(c, "//   grid                 {\"waves\": 2}\n");
    free(c);
    v = base();
    v.grid = (kf_grid){KF_GRID_BLOCKS, 2048};
    c = codegen_launch_comment(&v);
    ck_contains(c, "// ===== variant sequential/bs256/ept1/none/v1/2048/multi_kernel\n");
    ck_contains(c, "(none)");
    ck_contains(c, "//   grid                 2048\n");
    free(c);
}
END_TEST

START_TEST(planted)
{
    kf_variant a = base(), b = base(), c = base(), anon = base();
    snprintf(a.name, sizeof a.name, "victim");
    snprintf(b.name, sizeof b.name, "sleeper");
    snprintf(c.name, sizeof c.name, "bystander");

    unsetenv("KFORGE_PLANT");
    ck_assert_int_eq(codegen_planted(&a), 0);
    char *s = gen(&a);
    ck_assert_ptr_null(strstr(s, "#define KF_PLANT"));
    free(s);

    setenv("KFORGE_PLANT", "fault@victim,hang@sleeper,bogus@bystander,fault@", 1);
    ck_assert_int_eq(codegen_planted(&a), 1);
    ck_assert_int_eq(codegen_planted(&b), 2);
    ck_assert_int_eq(codegen_planted(&c), 0);
    ck_assert_int_eq(codegen_planted(&anon), 0);   /* unnamed variants are never planted */
    s = gen(&a);
    ck_contains(s, "\n#define KF_PLANT 1 /* test hook: KFORGE_PLANT */\n");
    free(s);
    s = gen(&b);
    ck_contains(s, "\n#define KF_PLANT 2 ");
    free(s);
    s = gen(&c);
    ck_assert_ptr_null(strstr(s, "#define KF_PLANT"));
    free(s);

    /* names must match whole */
    setenv("KFORGE_PLANT", "fault@vict,hang@sleeper2", 1);
    ck_assert_int_eq(codegen_planted(&a), 0);
    ck_assert_int_eq(codegen_planted(&b), 0);
    setenv("KFORGE_PLANT", "", 1);
    ck_assert_int_eq(codegen_planted(&a), 0);
    unsetenv("KFORGE_PLANT");
}
END_TEST

// ---------------------------------------------------------------------------
// plans

static kf_variant shaped(int bs, int ept, int vw, kf_grid g, kf_passes p)
{
    kf_variant v = base();
    v.block_size = bs;
    v.elements_per_thread = ept;
    v.vector_width = vw;
    v.grid = g;
    v.passes = p;
    return v;
}

static const kf_grid AUTO = {KF_GRID_AUTO, 0};

START_TEST(plan_tiles_and_blocks)
{
    kf_variant v = shaped(256, 2, 4, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_tile(&v), 2048);
    ck_assert_int_eq(plan_blocks(&v, 1, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 0, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 2048, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 2049, 132, 4), 2);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 4), (1LL << 30) / 2048);

    /* a fixed count, capped at ceil(n / tile) */
    v.grid = (kf_grid){KF_GRID_BLOCKS, 100};
    ck_assert_int_eq(plan_blocks(&v, 2048 * 1000, 132, 4), 100);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 50, 132, 4), 50);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 50 + 1, 132, 4), 51);
    ck_assert_int_eq(plan_blocks(&v, 5, 132, 4), 1);

    /* blocks per SM x SMs */
    v.grid = (kf_grid){KF_GRID_PER_SM, 4};
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 7), 4 * 132);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 10, 132, 7), 10);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 0, 7), 4);  /* unknown SM count: 1 */

    /* waves x occupancy x SMs */
    v.grid = (kf_grid){KF_GRID_WAVES, 2};
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 3), 2 * 3 * 132);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 108, 8), 2 * 8 * 108);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 0), 2 * 132);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 3 + 7, 132, 3), 4);

    /* beyond int range: capped */
    kf_variant t = shaped(32, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_tile(&t), 32);
    ck_assert_int_eq(plan_blocks(&t, 1LL << 36, 132, 1), 2147483647);
}
END_TEST

static void check_chain(const kf_plan *p, int64_t n)
{
    ck_assert_int_ge(p->npasses, 1);
    ck_assert_int_eq(p->n_in[0], n);
    ck_assert_int_eq(p->blocks[p->npasses - 1], 1);
    int64_t maxb = 0;
    for (int i = 0; i + 1 < p->npasses; i++) {
        ck_assert_int_eq(p->n_in[i + 1], p->blocks[i]);
        ck_assert_int_gt(p->blocks[i], 1);
        if (p->blocks[i] > maxb)
            maxb = p->blocks[i];
    }
    ck_assert_int_eq(p->partial_elems, maxb);
    ck_assert_int_eq(p->scratch_elems, 0);
    ck_assert_int_gt(p->depth, 0);
}

START_TEST(plan_multi_kernel_passes)
{
    kf_variant v = shaped(256, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    static const struct { int64_t n; int passes; int64_t b0; } cases[] = {
        {1, 1, 1},           {256, 1, 1},          {257, 2, 2},           {65536, 2, 256},
        {65537, 3, 257},     {1 << 24, 3, 65536},  {(1 << 24) + 1, 4, 65537}, {1LL << 30, 4, 1 << 22},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kf_plan p;
        ck_assert_int_eq(plan_make(&v, cases[i].n, 132, 4, &p), 0);
        ck_assert_msg(p.npasses == cases[i].passes, "n=%lld: %d passes, expected %d", (long long)cases[i].n,
                      p.npasses, cases[i].passes);
        ck_assert_int_eq(p.blocks[0], cases[i].b0);
        check_chain(&p, cases[i].n);
        ck_assert(p.deterministic);
    }
    kf_plan p;
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.blocks[1], 256);
    ck_assert_int_eq(p.partial_elems, 65536);

    /* a fixed grid: the first pass is capped, later passes shrink by the tile */
    v = shaped(256, 2, 4, (kf_grid){KF_GRID_BLOCKS, 2048}, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.npasses, 2);
    ck_assert_int_eq(p.blocks[0], 2048);
    ck_assert_int_eq(p.blocks[1], 1);
    check_chain(&p, 1 << 24);

    /* waves: 1 x 4 x 132 = 528 blocks, then 1 */
    v = shaped(256, 1, 1, (kf_grid){KF_GRID_WAVES, 1}, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.npasses, 3);
    ck_assert_int_eq(p.blocks[0], 528);
    ck_assert_int_eq(p.blocks[1], 3);
    check_chain(&p, 1 << 24);

    /* the smallest tile and the largest n stay within KF_MAX_PASSES */
    v = shaped(32, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1LL << 36, 132, 4, &p), 0);
    ck_assert_int_le(p.npasses, KF_MAX_PASSES);
    ck_assert_int_eq(p.blocks[0], 2147483647);
    check_chain(&p, 1LL << 36);

    ck_assert_int_eq(plan_make(&v, 0, 132, 4, &p), -1);
    ck_assert_int_eq(plan_make(&v, -5, 132, 4, &p), -1);
}
END_TEST

START_TEST(plan_single_pass)
{
    static const int64_t ns[] = {1, 1000, 1 << 20, (1LL << 30) + 3};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        kf_plan p;
        kf_variant v = shaped(256, 4, 4, (kf_grid){KF_GRID_WAVES, 1}, KF_PASSES_ATOMIC);
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.n_in[0], ns[i]);
        ck_assert_int_eq(p.blocks[0], plan_blocks(&v, ns[i], 132, 2));
        ck_assert_int_eq(p.scratch_elems, 1);
        ck_assert_int_eq(p.partial_elems, 0);

        v.passes = KF_PASSES_LAST_BLOCK;
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.scratch_elems, p.blocks[0]);
        ck_assert_int_eq(p.partial_elems, 0);
        ck_assert(p.deterministic);

        v = shaped(128, 1, 1, AUTO, KF_PASSES_ATOMIC);
        v.algorithm = KF_ALG_ATOMIC_GLOBAL;
        v.unroll = KF_UNROLL_NONE;
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.blocks[0], (ns[i] + 127) / 128);
        ck_assert_int_eq(p.scratch_elems, 1);
        /* every thread's value lands on one slot */
        ck_assert_int_ge(p.depth, p.blocks[0] * 128);
    }
}
END_TEST

START_TEST(plan_determinism)
{
    for (int t = 0; t < KF_DTYPE_COUNT; t++)
        for (int o = 0; o < KF_OP_COUNT; o++)
            for (int a = 0; a < KF_ALG_COUNT; a++)
                for (int p = KF_PASSES_MULTI_KERNEL; p < KF_PASSES_COUNT; p++) {
                    kf_variant v = base();
                    v.dtype = (kf_dtype)t;
                    v.op = (kf_op)o;
                    v.algorithm = (kf_algorithm)a;
                    v.passes = (kf_passes)p;
                    if (a == KF_ALG_ATOMIC_GLOBAL && p != KF_PASSES_ATOMIC)
                        continue;
                    kf_plan pl;
                    ck_assert_int_eq(plan_make(&v, 1 << 20, 132, 4, &pl), 0);
                    bool float_assoc = kf_dtype_is_float(v.dtype) && (o == KF_OP_SUM || o == KF_OP_PROD);
                    /* atomics combine in arrival order: between blocks (passes
                     * atomic) or inside a block (atomic_shared's shared slot) */
                    bool atomic_order = p == KF_PASSES_ATOMIC || a == KF_ALG_ATOMIC_SHARED ||
                                        a == KF_ALG_ATOMIC_GLOBAL;
                    ck_assert_msg(pl.deterministic == !(float_assoc && atomic_order),
                                  "%s/%s/%s/%s: deterministic=%d", kf_dtype_names[t], kf_op_names[o],
                                  kf_algorithm_names[a], kf_passes_names[p], pl.deterministic);
                }
    /* the cases named in plan.h */
    kf_variant v = base();
    kf_plan pl;
    v.passes = KF_PASSES_ATOMIC;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(!pl.deterministic);               /* float32 sum, atomic */
    v.op = KF_OP_MIN;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* min is order-free */
    v.op = KF_OP_SUM;
    v.dtype = KF_INT64;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* integer sums are exact */
    v.dtype = KF_FLOAT64;
    v.passes = KF_PASSES_LAST_BLOCK;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* fixed-order fold */
}
END_TEST

// ---------------------------------------------------------------------------
// NVRTC

typedef struct {
    char **src;
    uint64_t *hash;
    char (*label)[160];
    int n, cap;
} srcset;

/* Adds the source of v unless an identical one is there. */
static void add_source(srcset *ss, const kf_variant *v, const char *from)
{
    char *s = gen(v);
    uint64_t h = kf_hash64(s, strlen(s), 1);
    for (int i = 0; i < ss->n; i++)
        if (ss->hash[i] == h && strcmp(ss->src[i], s) == 0) {
            free(s);
            return;
        }
    if (ss->n == ss->cap) {
        ss->cap = ss->cap ? ss->cap * 2 : 64;
        ss->src = realloc(ss->src, sizeof *ss->src * (size_t)ss->cap);
        ss->hash = realloc(ss->hash, sizeof *ss->hash * (size_t)ss->cap);
        ss->label = realloc(ss->label, sizeof *ss->label * (size_t)ss->cap);
        ck_assert(ss->src && ss->hash && ss->label);
    }
    char l[128];
    kf_variant_label(v, l, sizeof l);
    snprintf(ss->label[ss->n], sizeof ss->label[0], "%s %s/%s %s", from, kf_dtype_names[v->dtype],
             kf_op_names[v->op], l);
    ss->src[ss->n] = s;
    ss->hash[ss->n] = h;
    ss->n++;
}

static void srcset_free(srcset *ss)
{
    for (int i = 0; i < ss->n; i++)
        free(ss->src[i]);
    free(ss->src);
    free(ss->hash);
    free(ss->label);
    memset(ss, 0, sizeof *ss);
}

/* Compiles sources first, first + step, ... for sm_90; returns the number
 * that failed (each reported with its label and the start of the log). */
static int compile_some(const srcset *ss, int first, int step)
{
    rtc_options o = {.arch = "sm_90", .lineinfo = false};
    int failed = 0;
    for (int i = first; i < ss->n; i += step) {
        void *cubin = NULL;
        size_t len = 0;
        char *log = NULL;
        char e[512] = "";
        if (rtc_compile(ss->src[i], "kforge_test.cu", &o, &cubin, &len, &log, e, sizeof e) != 0) {
            fprintf(stderr, "compile failed: %s: %s\n%.2000s\n", ss->label[i], e, log ? log : "");
            failed++;
        } else {
            ck_assert(cubin != NULL && len > 0);
            free(cubin);
        }
        free(log);
    }
    return failed;
}

/* Compiles every source, in one process per CPU (at most 8): NVRTC does
 * not scale with threads, and the shipped configs hold over a thousand
 * distinct sources. */
static int compile_all(const srcset *ss)
{
    double t0 = kf_now();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
    if (jobs > ss->n)
        jobs = ss->n;
    pid_t pids[8];
    int failed = 0;
    fflush(stderr);
    for (int j = 0; j < jobs; j++) {
        pids[j] = fork();
        ck_assert_msg(pids[j] >= 0, "fork");
        if (pids[j] == 0) {
            int f = compile_some(ss, j, jobs);
            fflush(stderr);
            _exit(f > 250 ? 250 : f);
        }
    }
    for (int j = 0; j < jobs; j++) {
        int st;
        while (waitpid(pids[j], &st, 0) < 0)
            ;
        if (WIFEXITED(st))
            failed += WEXITSTATUS(st);
        else {
            fprintf(stderr, "compile worker %d died (signal %d)\n", j, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            failed++;
        }
    }
    fprintf(stderr, "compiled %d distinct sources in %.1f s (%d processes)\n", ss->n, kf_now() - t0, jobs);
    return failed;
}

START_TEST(nvrtc_every_config_variant)
{
    int major, minor;
    ck_assert_msg(rtc_version(&major, &minor) == 0, "NVRTC is not usable");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/configs", srcdir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    srcset ss = {0};
    int variants = 0, files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kf_config c;
        kf_space s;
        ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(space_expand(&c, NULL, &s, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < s.nvariants; i++)
            add_source(&ss, &s.variants[i], e->d_name);
        variants += s.nvariants;
        files++;
        space_free(&s);
        config_free(&c);
    }
    closedir(d);
    ck_assert_int_ge(files, 3);
    ck_assert_int_gt(ss.n, 0);
    ck_assert_int_le(ss.n, variants);
    int failed = compile_all(&ss);
    ck_assert_msg(failed == 0, "%d of %d sources (%d variants) failed to compile", failed, ss.n, variants);
    srcset_free(&ss);
}
END_TEST

/* A valid variant for (dtype, op, algorithm), the other axes rotated by k
 * so that the sample covers every value of each; false if the triple cannot
 * run at all. */
static bool sample_variant(kf_dtype t, kf_op o, kf_algorithm a, int k, kf_variant *out)
{
    static const int bss[] = {32, 64, 128, 256, 512, 1024};
    static const int epts[] = {1, 2, 4, 8};
    static const int vws[] = {1, 2, 4};
    kf_variant v = base();
    v.dtype = t;
    v.op = o;
    v.algorithm = a;
    v.block_size = bss[k % 6];
    v.elements_per_thread = epts[(k / 3) % 4];
    v.vector_width = vws[k % 3];
    v.load = (kf_load)(k % KF_LOAD_COUNT);
    v.layout = (kf_layout)((k / 2) % 2);
    bool tree = a == KF_ALG_INTERLEAVED_DIVERGENT || a == KF_ALG_INTERLEAVED_STRIDED || a == KF_ALG_SEQUENTIAL;
    if (a == KF_ALG_ATOMIC_GLOBAL || a == KF_ALG_ATOMIC_SHARED)
        v.unroll = KF_UNROLL_NONE;
    else if (a == KF_ALG_SEQUENTIAL)
        v.unroll = (kf_unroll)(k % 3);
    else
        v.unroll = k % 2 ? KF_UNROLL_FULL : KF_UNROLL_NONE;
    v.passes = a == KF_ALG_ATOMIC_GLOBAL ? KF_PASSES_ATOMIC : (kf_passes)(KF_PASSES_MULTI_KERNEL + (k / 4) % 3);
    v.accumulator = tree ? (kf_accum)((k / 5) % 2) : KF_ACC_REGISTER;
    if (a == KF_ALG_SEQUENTIAL && v.unroll != KF_UNROLL_NONE) {
        v.warp_reduce = (kf_warp_reduce)((k / 7) % 3);
        bool i32 = t == KF_INT32 || t == KF_UINT32;
        if (v.warp_reduce == KF_WARP_INTRINSIC && (!i32 || o == KF_OP_PROD))
            v.warp_reduce = KF_WARP_SHUFFLE;
    }
    char why[256];
    if (space_check_variant(&v, NULL, why, sizeof why) != 0)
        return false;
    *out = v;
    return true;
}

START_TEST(nvrtc_sample)
{
    srcset ss = {0};
    int k = 0, impossible = 0;
    for (int t = 0; t < KF_DTYPE_COUNT; t++)
        for (int o = 0; o < KF_OP_COUNT; o++)
            for (int a = 0; a < KF_ALG_COUNT; a++) {
                kf_variant v;
                if (sample_variant((kf_dtype)t, (kf_op)o, (kf_algorithm)a, k, &v)) {
                    add_source(&ss, &v, "sample");
                    k++;
                } else {
                    impossible++;
                }
            }
    /* each (dtype, op) pair the rules allow has some algorithm */
    ck_assert_int_gt(k, 150);

    /* every dtype x vector width x load flavour, with a tree and with shuffles:
     * 8-byte types with vector_width 4 load 32 bytes as two 16-byte words */
    for (int t = 0; t < KF_DTYPE_COUNT; t++)
        for (int w = 1; w <= 4; w *= 2)
            for (int l = 0; l < KF_LOAD_COUNT; l++) {
                kf_variant v = base();
                v.dtype = (kf_dtype)t;
                v.vector_width = w;
                v.load = (kf_load)l;
                v.elements_per_thread = 2;
                v.unroll = KF_UNROLL_FULL;
                v.algorithm = (t + w + l) % 2 ? KF_ALG_SHUFFLE : KF_ALG_SEQUENTIAL;
                v.passes = (kf_passes)(KF_PASSES_MULTI_KERNEL + (t + l) % 3);
                char why[256];
                ck_assert_msg(space_check_variant(&v, NULL, why, sizeof why) == 0, "%s", why);
                add_source(&ss, &v, "loads");
            }
    static const kf_dtype wide[] = {KF_INT64, KF_FLOAT64};
    static const kf_op wide_ops[] = {KF_OP_SUM, KF_OP_MIN, KF_OP_PROD, KF_OP_XOR};
    for (int i = 0; i < 2; i++)
        for (int o = 0; o < 4; o++)
            for (int l = 0; l < KF_LOAD_COUNT; l++) {
                kf_variant v = base();
                v.dtype = wide[i];
                v.op = wide_ops[o];
                if (kf_op_is_bitwise(v.op) && kf_dtype_is_float(v.dtype))
                    continue;
                v.vector_width = 4;
                v.load = (kf_load)l;
                v.algorithm = l % 2 ? KF_ALG_ATOMIC_SHARED : KF_ALG_SEQUENTIAL;
                v.passes = l % 2 ? KF_PASSES_ATOMIC : KF_PASSES_LAST_BLOCK;
                v.layout = (kf_layout)(o % 2);
                char why[256];
                ck_assert_msg(space_check_variant(&v, NULL, why, sizeof why) == 0, "%s", why);
                add_source(&ss, &v, "wide");
            }
    int failed = compile_all(&ss);
    ck_assert_msg(failed == 0, "%d of %d sample sources failed to compile", failed, ss.n);
    srcset_free(&ss);
}
END_TEST

START_TEST(nvrtc_planted_compiles)
{
    setenv("KFORGE_PLANT", "fault@f,hang@h", 1);
    srcset ss = {0};
    kf_variant v = base();
    snprintf(v.name, sizeof v.name, "f");
    add_source(&ss, &v, "plant");
    snprintf(v.name, sizeof v.name, "h");
    add_source(&ss, &v, "plant");
    unsetenv("KFORGE_PLANT");
    ck_assert_int_eq(ss.n, 2);
    ck_assert_int_eq(compile_all(&ss), 0);
    srcset_free(&ss);
}
END_TEST

static Suite *codegen_suite(void)
{
    Suite *s = suite_create("codegen");
    TCase *tc = tcase_create("source");
    tcase_add_test(tc, header_names_every_parameter);
    tcase_add_test(tc, defines);
    tcase_add_test(tc, template_numbering);
    tcase_add_test(tc, source_depends_on_compile_time_parameters_only);
    tcase_add_test(tc, unresolved_passes_refused);
    tcase_add_test(tc, launch_comment);
    tcase_add_test(tc, planted);
    suite_add_tcase(s, tc);

    tc = tcase_create("plan");
    tcase_add_test(tc, plan_tiles_and_blocks);
    tcase_add_test(tc, plan_multi_kernel_passes);
    tcase_add_test(tc, plan_single_pass);
    tcase_add_test(tc, plan_determinism);
    suite_add_tcase(s, tc);

    tc = tcase_create("nvrtc");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, nvrtc_every_config_variant);
    tcase_add_test(tc, nvrtc_sample);
    tcase_add_test(tc, nvrtc_planted_compiles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(codegen_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
