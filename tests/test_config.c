/*
 * test_config.c -- JSON configuration files to kf_config: every key and
 * shape, --set overrides, and the corpus of bad files in tests/bad/ (each
 * NAME.json has a NAME.expect: substrings, one per line, that the error
 * message must contain).  No GPU needed.
 *
 *   make build/tests/test_config && build/tests/test_config
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "family.h"
#include "param.h"
#include "reduce.h"
#include "space.h"
#include "util.h"

static char err[2048];

/* Parses a config held in a C string; fails the test if it does not parse. */
static void parse_ok(const char *text, kf_config *cfg)
{
    err[0] = '\0';
    int rc = config_parse(text, strlen(text), "t.json", cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "parse failed: %s\n--- text:\n%s", err, text);
}

/* Parses a config that must be rejected; returns the message (in err). */
static const char *parse_bad(const char *text)
{
    kf_config cfg;
    err[0] = '\0';
    int rc = config_parse(text, strlen(text), "t.json", &cfg, err, sizeof err);
    if (rc == 0)
        config_free(&cfg);
    ck_assert_msg(rc != 0, "accepted: %s", text);
    ck_assert_msg(err[0], "no message for: %s", text);
    return err;
}

#define ck_contains(hay, needle)                                                                          \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (hay))

/* The reduce family (the default "kernel") and the name of its parameter a. */
static const kf_family *reduce_family(void)
{
    int f = family_find("reduce");
    ck_assert_int_ge(f, 0);
    return kf_families[f];
}

static const char *pname(int a) { return reduce_family()->params[a].name; }

static void ax_is(const kf_spec *s, reduce_param a, int count, const int64_t *want)
{
    ck_assert_msg(s->ax[a].count == count, "%s: %d values, expected %d", pname(a), s->ax[a].count, count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(s->ax[a].vals[i] == want[i], "%s[%d] = %lld, expected %lld", pname(a), i,
                      (long long)s->ax[a].vals[i], (long long)want[i]);
}

static void ax1(const kf_spec *s, reduce_param a, int64_t want) { ax_is(s, a, 1, &want); }

static void n_is(const int64_t *n, int count, int want_count, const int64_t *want)
{
    ck_assert_int_eq(count, want_count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(n[i] == want[i], "n[%d] = %lld, expected %lld", i, (long long)n[i], (long long)want[i]);
}

static int64_t grid(kf_grid_kind k, int64_t v)
{
    kf_grid g = {k, v};
    return kf_grid_encode(g);
}

/* The repository root: KFORGE_SRCDIR, "." or "..". */
static const char *srcdir(void)
{
    const char *e = getenv("KFORGE_SRCDIR");
    if (e && e[0])
        return e;
    struct stat st;
    if (stat("tests/bad", &st) == 0 && S_ISDIR(st.st_mode))
        return ".";
    return "..";
}

// ---------------------------------------------------------------------------
// shapes

START_TEST(flat_every_key)
{
    kf_config c;
    parse_ok("{\n"
             "  \"kernel\": \"reduce\",\n"
             "  \"name\": \"flat1\",\n"
             "  \"description\": \"every key\",\n"
             "  \"comment\": \"once\",\n"
             "  \"dtype\": \"int64\",\n"
             "  \"op\": \"max\",\n"
             "  \"algorithm\": \"sequential\",\n"
             "  \"block_size\": 512,\n"
             "  \"elements_per_thread\": 4,\n"
             "  \"unroll\": \"last_warp\",\n"
             "  \"vector_width\": 2,\n"
             "  \"grid\": 2048,\n"
             "  \"passes\": \"last_block\",\n"
             "  \"layout\": \"grid\",\n"
             "  \"accumulator\": \"shared\",\n"
             "  \"warp_reduce\": \"shuffle\",\n"
             "  \"load\": \"ldg_prefetch\",\n"
             "  \"n\": 1000000,\n"
             "  \"constraints\": [\"tile <= 65536\", \"n >= 1\"]\n"
             "}\n",
             &c);
    ck_assert_str_eq(c.path, "t.json");
    ck_assert_int_eq(c.nspecs, 1);
    const kf_spec *s = &c.specs[0];
    ck_assert_str_eq(s->name, "flat1");
    ck_assert_str_eq(s->where, "");
    ax1(s, RP_DTYPE, KF_INT64);
    ax1(s, RP_OP, KF_OP_MAX);
    ax1(s, RP_ALGORITHM, KF_ALG_SEQUENTIAL);
    ax1(s, RP_BLOCK_SIZE, 512);
    ax1(s, RP_ELEMENTS_PER_THREAD, 4);
    ax1(s, RP_UNROLL, KF_UNROLL_LAST_WARP);
    ax1(s, RP_VECTOR_WIDTH, 2);
    ax1(s, RP_GRID, grid(KF_GRID_BLOCKS, 2048));
    ax1(s, RP_PASSES, KF_PASSES_LAST_BLOCK);
    ax1(s, RP_LAYOUT, KF_LAYOUT_GRID);
    ax1(s, RP_ACCUMULATOR, KF_ACC_SHARED);
    ax1(s, RP_WARP_REDUCE, KF_WARP_SHUFFLE);
    ax1(s, RP_LOAD, KF_LOAD_LDG_PREFETCH);
    n_is(s->sz[0].vals, s->sz[0].count, 1, (int64_t[]){1000000});
    ck_assert_int_eq(s->n_constraints, 2);
    ck_assert_str_eq(s->constraints[0], "tile <= 65536");
    ck_assert_str_eq(s->constraints[1], "n >= 1");
    /* no bench, no tune: the defaults */
    kf_bench d;
    kf_bench_defaults(&d);
    ck_assert_int_eq(c.bench.warmup, d.warmup);
    ck_assert_int_eq(c.bench.min_reps, d.min_reps);
    ck_assert_int_eq(c.bench.max_reps, d.max_reps);
    ck_assert(c.bench.seed == d.seed);
    ck_assert(c.bench.flush_l2 == d.flush_l2);
    for (int k = 0; k < KF_MAX_DIMS; k++) {
        ck_assert_int_eq(c.tune_sz[k].count, 0);
        ck_assert_ptr_null(c.tune_sz[k].vals);
    }
    ck_assert_ptr_null(c.tune_weights);
    ck_assert_int_eq(c.tune_nweights, 0);
    ck_assert_int_eq(c.family, family_find("reduce"));
    config_free(&c);
    ck_assert_int_eq(c.nspecs, 0);
    ck_assert_ptr_null(c.specs);
}
END_TEST

START_TEST(flat_omitted_axes)
{
    kf_config c;
    parse_ok("{\"n\": 4096}", &c);
    ck_assert_int_eq(c.nspecs, 1);
    ck_assert_int_eq(c.family, family_find("reduce"));   /* "kernel" defaults to reduce */
    ck_assert_int_eq(reduce_family()->nparams, RP_COUNT);
    for (int a = 0; a < KF_MAX_PARAMS; a++)
        ck_assert_msg(c.specs[0].ax[a].count == 0, "%s given", a < RP_COUNT ? pname(a) : "(unused)");
    for (int d = 0; d < KF_MAX_DIMS; d++)
        ck_assert_int_eq(c.specs[0].sz[d].count, d == 0 ? 1 : 0);
    ck_assert_str_eq(c.specs[0].name, "");
    ck_assert_int_eq(c.specs[0].n_constraints, 0);
    config_free(&c);

    /* "kernel" may be left out; every other shape needs nothing more */
    parse_ok("{}", &c);
    ck_assert_int_eq(c.nspecs, 1);
    ck_assert_int_eq(c.specs[0].sz[0].count, 0);
    config_free(&c);
}
END_TEST

START_TEST(defaults_and_variants)
{
    kf_config c;
    parse_ok("{\n"
             "  \"kernel\": \"reduce\",\n"
             "  \"dtype\": \"int32\",\n"
             "  \"block_size\": 128,\n"
             "  \"constraints\": \"block_size >= 32\",\n"
             "  \"defaults\": {\"op\": \"min\", \"block_size\": 256, \"n\": [\"2^10\", 4096],\n"
             "               \"constraints\": [\"tile <= 8192\"], \"comment\": \"shared\"},\n"
             "  \"variants\": [\n"
             "    {\"name\": \"a\"},\n"
             "    {\"name\": \"b.v-2+x\", \"dtype\": \"float32\", \"op\": \"sum\", \"n\": 77,\n"
             "     \"constraints\": [\"n > 1\"], \"description\": \"second\"},\n"
             "    {\"block_size\": [32, 64]}\n"
             "  ]\n"
             "}\n",
             &c);
    ck_assert_int_eq(c.nspecs, 3);
    const kf_spec *a = &c.specs[0], *b = &c.specs[1], *u = &c.specs[2];
    ck_assert_str_eq(a->name, "a");
    ck_assert_str_eq(a->where, "variants[0]");
    ck_assert_str_eq(b->name, "b.v-2+x");
    ck_assert_str_eq(b->where, "variants[1]");
    ck_assert_str_eq(u->name, "");
    ck_assert_str_eq(u->where, "variants[2]");

    /* top-level keys act as defaults; "defaults" overrides them; variants override both */
    ax1(a, RP_DTYPE, KF_INT32);
    ax1(a, RP_OP, KF_OP_MIN);
    ax1(a, RP_BLOCK_SIZE, 256);
    ck_assert_int_eq(a->ax[RP_ALGORITHM].count, 0);
    n_is(a->sz[0].vals, a->sz[0].count, 2, (int64_t[]){1024, 4096});

    ax1(b, RP_DTYPE, KF_FLOAT32);
    ax1(b, RP_OP, KF_OP_SUM);
    ax1(b, RP_BLOCK_SIZE, 256);
    n_is(b->sz[0].vals, b->sz[0].count, 1, (int64_t[]){77});

    ax_is(u, RP_BLOCK_SIZE, 2, (int64_t[]){32, 64});
    ax1(u, RP_OP, KF_OP_MIN);
    ax1(u, RP_DTYPE, KF_INT32);

    /* constraints accumulate: the variant's own, then the defaults', then the top level's */
    ck_assert_int_eq(a->n_constraints, 2);
    ck_assert_str_eq(a->constraints[0], "tile <= 8192");
    ck_assert_str_eq(a->constraints[1], "block_size >= 32");
    ck_assert_int_eq(b->n_constraints, 3);
    ck_assert_str_eq(b->constraints[0], "n > 1");
    ck_assert_str_eq(b->constraints[1], "tile <= 8192");
    ck_assert_str_eq(b->constraints[2], "block_size >= 32");
    config_free(&c);
}
END_TEST

START_TEST(variants_without_defaults)
{
    kf_config c;
    parse_ok("{\"algorithm\": \"shuffle\", \"unroll\": \"full\", \"n\": 100,\n"
             " \"variants\": [{\"name\": \"x\", \"block_size\": 64}, {\"name\": \"y\", \"n\": [5, 6]}]}",
             &c);
    ck_assert_int_eq(c.nspecs, 2);
    for (int i = 0; i < 2; i++) {
        ax1(&c.specs[i], RP_ALGORITHM, KF_ALG_SHUFFLE);
        ax1(&c.specs[i], RP_UNROLL, KF_UNROLL_FULL);
    }
    ax1(&c.specs[0], RP_BLOCK_SIZE, 64);
    ck_assert_int_eq(c.specs[1].ax[RP_BLOCK_SIZE].count, 0);
    n_is(c.specs[0].sz[0].vals, c.specs[0].sz[0].count, 1, (int64_t[]){100});
    n_is(c.specs[1].sz[0].vals, c.specs[1].sz[0].count, 2, (int64_t[]){5, 6});
    config_free(&c);
}
END_TEST

START_TEST(lists)
{
    kf_config c;
    parse_ok("{\"dtype\": [\"int32\", \"float64\", \"int32\", \"uint32\"],\n"
             " \"op\": [\"sum\", \"min\", \"max\", \"prod\", \"and\", \"or\", \"xor\"],\n"
             " \"algorithm\": [\"atomic_global\", \"atomic_shared\", \"interleaved_divergent\",\n"
             "               \"interleaved_strided\", \"sequential\", \"shuffle\", \"warp_intrinsic\"],\n"
             " \"unroll\": [\"full\", \"none\", \"last_warp\"],\n"
             " \"passes\": [\"auto\", \"multi_kernel\", \"atomic\", \"last_block\"],\n"
             " \"layout\": [\"grid\", \"block\"],\n"
             " \"accumulator\": [\"register\", \"shared\"],\n"
             " \"warp_reduce\": [\"shared\", \"shuffle\", \"intrinsic\"],\n"
             " \"load\": [\"plain\", \"ldg\", \"stream\", \"ldg_prefetch\"],\n"
             " \"vector_width\": [4, 1, 2, 4],\n"
             " \"block_size\": [1024, 32, 1],\n"
             " \"elements_per_thread\": [256, 1],\n"
             " \"n\": [3, \"2^20\", 3]}",
             &c);
    const kf_spec *s = &c.specs[0];
    /* first occurrence order, repeats dropped */
    ax_is(s, RP_DTYPE, 3, (int64_t[]){KF_INT32, KF_FLOAT64, KF_UINT32});
    ax_is(s, RP_OP, 7, (int64_t[]){0, 1, 2, 3, 4, 5, 6});
    ax_is(s, RP_ALGORITHM, 7, (int64_t[]){0, 1, 2, 3, 4, 5, 6});
    ax_is(s, RP_UNROLL, 3, (int64_t[]){KF_UNROLL_FULL, KF_UNROLL_NONE, KF_UNROLL_LAST_WARP});
    ax_is(s, RP_PASSES, 4, (int64_t[]){0, 1, 2, 3});
    ax_is(s, RP_LAYOUT, 2, (int64_t[]){KF_LAYOUT_GRID, KF_LAYOUT_BLOCK});
    ax_is(s, RP_ACCUMULATOR, 2, (int64_t[]){KF_ACC_REGISTER, KF_ACC_SHARED});
    ax_is(s, RP_WARP_REDUCE, 3, (int64_t[]){0, 1, 2});
    ax_is(s, RP_LOAD, 4, (int64_t[]){0, 1, 2, 3});
    ax_is(s, RP_VECTOR_WIDTH, 3, (int64_t[]){4, 1, 2});
    ax_is(s, RP_BLOCK_SIZE, 3, (int64_t[]){1024, 32, 1});
    ax_is(s, RP_ELEMENTS_PER_THREAD, 2, (int64_t[]){256, 1});
    n_is(s->sz[0].vals, s->sz[0].count, 2, (int64_t[]){3, 1 << 20});
    config_free(&c);
}
END_TEST

START_TEST(ranges)
{
    kf_config c;
    parse_ok("{\"block_size\": {\"range\": [32, 1024]},\n"
             " \"elements_per_thread\": {\"range\": [1, 8], \"step\": 3},\n"
             " \"n\": {\"range\": [\"2^10\", \"1<<13\"], \"step\": \"pow2\"}}",
             &c);
    const kf_spec *s = &c.specs[0];
    ax_is(s, RP_BLOCK_SIZE, 6, (int64_t[]){32, 64, 128, 256, 512, 1024});
    ax_is(s, RP_ELEMENTS_PER_THREAD, 3, (int64_t[]){1, 4, 7});
    n_is(s->sz[0].vals, s->sz[0].count, 4, (int64_t[]){1024, 2048, 4096, 8192});
    config_free(&c);

    /* a pow2 range stops below hi when hi is not a power of two; a step range too */
    parse_ok("{\"block_size\": {\"range\": [48, 500], \"step\": \"pow2\"},\n"
             " \"elements_per_thread\": {\"range\": [64, 100], \"step\": 16},\n"
             " \"n\": {\"range\": [1000, 3000], \"step\": 1000}}",
             &c);
    s = &c.specs[0];
    ax_is(s, RP_BLOCK_SIZE, 4, (int64_t[]){48, 96, 192, 384});
    ax_is(s, RP_ELEMENTS_PER_THREAD, 3, (int64_t[]){64, 80, 96});
    n_is(s->sz[0].vals, s->sz[0].count, 3, (int64_t[]){1000, 2000, 3000});
    config_free(&c);

    /* ranges inside lists, mixed with scalars; a one-value range */
    parse_ok("{\"block_size\": [{\"range\": [32, 64]}, 256, {\"range\": [64, 128]}],\n"
             " \"elements_per_thread\": {\"range\": [2, 2]},\n"
             " \"n\": [{\"range\": [1, 4]}, \"2^36\"]}",
             &c);
    s = &c.specs[0];
    ax_is(s, RP_BLOCK_SIZE, 4, (int64_t[]){32, 64, 256, 128});
    ax_is(s, RP_ELEMENTS_PER_THREAD, 1, (int64_t[]){2});
    n_is(s->sz[0].vals, s->sz[0].count, 4, (int64_t[]){1, 2, 4, 1LL << 36});
    config_free(&c);

    /* a range whose step list would exceed the per-axis limit */
    ck_contains(parse_bad("{\"n\": {\"range\": [1, 100000], \"step\": 1}}"), "too many values");
    /* enum axes take no ranges */
    ck_contains(parse_bad("{\"dtype\": {\"range\": [0, 2]}}"), "dtype: expected one of");
    ck_contains(parse_bad("{\"block_size\": {\"range\": [32]}}"), "block_size.range: expected [low, high]");
    ck_contains(parse_bad("{\"block_size\": {\"range\": [32, 64], \"stp\": 2}}"),
                "block_size.stp: unknown key (did you mean \"step\"?)");
    ck_contains(parse_bad("{\"block_size\": {\"range\": [32, 64], \"step\": 0}}"), "block_size.step");
    ck_contains(parse_bad("{\"block_size\": {\"range\": [32, 4096]}}"), "block_size.range[1]");
    ck_contains(parse_bad("{\"n\": {\"range\": [0, 16]}}"), "n.range[0]");
}
END_TEST

START_TEST(sizes)
{
    kf_config c;
    parse_ok("{\"n\": [1000000, \"2^20\", \"1<<10\", \"3<<4\", \"12345\", 1, \"2^36\", 1024]}", &c);
    n_is(c.specs[0].sz[0].vals, c.specs[0].sz[0].count, 7,
         (int64_t[]){1000000, 1 << 20, 1024, 48, 12345, 1, 1LL << 36});
    config_free(&c);
    parse_ok("{\"n\": \"2^0\"}", &c);
    n_is(c.specs[0].sz[0].vals, c.specs[0].sz[0].count, 1, (int64_t[]){1});
    config_free(&c);
    parse_ok("{\"n\": 1e6}", &c);   /* a JSON number without a fraction is an integer */
    n_is(c.specs[0].sz[0].vals, c.specs[0].sz[0].count, 1, (int64_t[]){1000000});
    config_free(&c);

    ck_contains(parse_bad("{\"n\": \"2^37\"}"), "n: expected a size 1..2^36");
    ck_contains(parse_bad("{\"n\": \"3^4\"}"), "got \"3^4\"");
    ck_contains(parse_bad("{\"n\": \"1<<63\"}"), "got \"1<<63\"");
    ck_contains(parse_bad("{\"n\": \"2^-1\"}"), "got \"2^-1\"");
    ck_contains(parse_bad("{\"n\": \"lots\"}"), "got \"lots\"");
    ck_contains(parse_bad("{\"n\": 1.5}"), "n: expected a size");
    ck_contains(parse_bad("{\"n\": -4}"), "got -4");
    ck_contains(parse_bad("{\"n\": true}"), "got true");
    ck_contains(parse_bad("{\"n\": [1024, [2048]]}"), "n[1]: expected a size");
    ck_contains(parse_bad("{\"n\": []}"), "n: an empty list");
    /* strings are for sizes only */
    ck_contains(parse_bad("{\"block_size\": \"2^8\"}"), "block_size: expected an integer 1..1024");
}
END_TEST

START_TEST(grids)
{
    kf_config c;
    parse_ok("{\"grid\": [\"auto\", 4096, {\"blocks_per_sm\": 4}, {\"waves\": 2}, 1, 2147483647,"
             " {\"waves\": 64}, {\"blocks_per_sm\": 1}]}",
             &c);
    const kf_spec *s = &c.specs[0];
    ck_assert_int_eq(s->ax[RP_GRID].count, 8);
    static const kf_grid want[] = {{KF_GRID_AUTO, 0},    {KF_GRID_BLOCKS, 4096},       {KF_GRID_PER_SM, 4},
                                   {KF_GRID_WAVES, 2},   {KF_GRID_BLOCKS, 1},          {KF_GRID_BLOCKS, 2147483647},
                                   {KF_GRID_WAVES, 64},  {KF_GRID_PER_SM, 1}};
    for (int i = 0; i < 8; i++) {
        kf_grid g = kf_grid_decode(s->ax[RP_GRID].vals[i]);
        ck_assert_msg(g.kind == want[i].kind && g.value == want[i].value, "grid[%d]: kind %d value %lld", i,
                      (int)g.kind, (long long)g.value);
    }
    config_free(&c);

    parse_ok("{\"grid\": {\"waves\": 3}}", &c);
    kf_grid g = kf_grid_decode(c.specs[0].ax[RP_GRID].vals[0]);
    ck_assert_int_eq(g.kind, KF_GRID_WAVES);
    ck_assert_int_eq(g.value, 3);
    config_free(&c);

    ck_contains(parse_bad("{\"grid\": 0}"), "grid: expected \"auto\", a block count");
    ck_contains(parse_bad("{\"grid\": 2147483648}"), "got 2147483648");
    ck_contains(parse_bad("{\"grid\": {}}"), "exactly one key");
    ck_contains(parse_bad("{\"grid\": {\"waves\": 1, \"blocks_per_sm\": 2}}"), "exactly one key");
    ck_contains(parse_bad("{\"grid\": {\"blocks_per_sm\": 65}}"), "grid.blocks_per_sm: expected an integer 1..64");
    ck_contains(parse_bad("{\"grid\": {\"wave\": 1}}"), "grid.wave: unknown key (did you mean \"waves\"?)");
    ck_contains(parse_bad("{\"grid\": [\"auto\", null]}"), "grid[1]");
    ck_contains(parse_bad("{\"grid\": 12.5}"), "grid");
}
END_TEST

START_TEST(grid_encoding)
{
    kf_grid gs[] = {{KF_GRID_AUTO, 0}, {KF_GRID_BLOCKS, 1}, {KF_GRID_BLOCKS, 2147483647},
                    {KF_GRID_PER_SM, 64}, {KF_GRID_WAVES, 1}};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        kf_grid d = kf_grid_decode(kf_grid_encode(gs[i]));
        ck_assert_int_eq(d.kind, gs[i].kind);
        ck_assert_int_eq(d.value, gs[i].value);
        for (size_t j = 0; j < i; j++)
            ck_assert(kf_grid_encode(gs[i]) != kf_grid_encode(gs[j]));
    }
}
END_TEST

START_TEST(bench_keys)
{
    kf_config c;
    parse_ok("{\"n\": 1, \"bench\": {\"warmup\": 5, \"min_reps\": 20, \"max_reps\": 200, \"max_time_s\": 1.5,\n"
             " \"max_noise\": 0.01, \"max_median_ci\": 0.015, \"flush_l2\": false, \"seed\": 7, \"offset\": 3, \"timeout_s\": 0}}",
             &c);
    ck_assert_int_eq(c.bench.warmup, 5);
    ck_assert_int_eq(c.bench.min_reps, 20);
    ck_assert_int_eq(c.bench.max_reps, 200);
    ck_assert_double_eq(c.bench.max_time_s, 1.5);
    ck_assert_double_eq(c.bench.max_noise, 0.01);
    ck_assert_double_eq(c.bench.max_median_ci, 0.015);
    ck_assert(!c.bench.flush_l2);
    ck_assert(c.bench.seed == 7);
    ck_assert_int_eq(c.bench.offset, 3);
    ck_assert_double_eq(c.bench.timeout_s, 0.0);
    config_free(&c);

    /* repetitions sets both bounds; untouched keys keep their defaults */
    parse_ok("{\"n\": 1, \"bench\": {\"repetitions\": 50, \"seed\": 9007199254740991}}", &c);
    ck_assert_int_eq(c.bench.min_reps, 50);
    ck_assert_int_eq(c.bench.max_reps, 50);
    ck_assert(c.bench.seed == 9007199254740991ULL);
    kf_bench d;
    kf_bench_defaults(&d);
    ck_assert_int_eq(c.bench.warmup, d.warmup);
    ck_assert_double_eq(c.bench.max_time_s, d.max_time_s);
    ck_assert_double_eq(c.bench.max_median_ci, 0.0); /* off unless asked */
    ck_assert(c.bench.flush_l2);
    config_free(&c);

    parse_ok("{\"n\": 1, \"bench\": {}}", &c);
    ck_assert_int_eq(c.bench.max_reps, d.max_reps);
    config_free(&c);

    ck_contains(parse_bad("{\"bench\": {\"warmup\": -1}}"), "bench.warmup: expected an integer 0..10000");
    ck_contains(parse_bad("{\"bench\": {\"max_noise\": 2}}"), "bench.max_noise");
    ck_contains(parse_bad("{\"bench\": {\"max_median_ci\": -0.1}}"),
                "bench.max_median_ci: expected a fraction 0..1 (half-width of the median's 95% confidence interval");
    ck_contains(parse_bad("{\"bench\": {\"max_time_s\": \"1\"}}"), "bench.max_time_s: expected seconds");
    ck_contains(parse_bad("{\"bench\": {\"offset\": 5000}}"), "bench.offset");
    ck_contains(parse_bad("{\"bench\": {\"seed\": 9007199254740992}}"), "bench.seed");
    ck_contains(parse_bad("{\"bench\": {\"repetitions\": 0}}"), "bench.repetitions");
    ck_contains(parse_bad("{\"bench\": {\"timeout_s\": -1}}"), "bench.timeout_s");
    ck_contains(parse_bad("{\"bench\": [1]}"), "bench: expected an object");
    ck_contains(parse_bad("{\"bench\": {\"seed\": 1, \"seed\": 2}}"), "bench.seed: duplicate key");
}
END_TEST

/* The weight of tuning shape i ("weights" left out: NULL, 1 each). */
static double tune_weight(const kf_config *c, int i)
{
    if (!c->tune_weights)
        return 1.0;
    ck_assert_int_lt(i, c->tune_nweights);
    return c->tune_weights[i];
}

START_TEST(tune_keys)
{
    kf_config c;
    parse_ok("{\"n\": 1, \"tune\": {\"n\": [\"2^20\", 4096, \"1<<24\"], \"weights\": [2, 0.5, 1]}}", &c);
    n_is(c.tune_sz[0].vals, c.tune_sz[0].count, 3, (int64_t[]){1 << 20, 4096, 1 << 24});
    ck_assert_double_eq(c.tune_weights[0], 2.0);
    ck_assert_double_eq(c.tune_weights[1], 0.5);
    ck_assert_double_eq(c.tune_weights[2], 1.0);
    ck_assert_int_eq(c.tune_nweights, 3);
    config_free(&c);
    ck_assert_ptr_null(c.tune_sz[0].vals);
    ck_assert_ptr_null(c.tune_weights);

    parse_ok("{\"n\": 1, \"tune\": {\"n\": \"2^22\"}}", &c);
    n_is(c.tune_sz[0].vals, c.tune_sz[0].count, 1, (int64_t[]){1 << 22});
    /* no weights: NULL, which means 1 each */
    ck_assert_ptr_null(c.tune_weights);
    ck_assert_int_eq(c.tune_nweights, 0);
    ck_assert_double_eq(tune_weight(&c, 0), 1.0);
    config_free(&c);

    ck_contains(parse_bad("{\"tune\": {\"weights\": [1]}}"), "tune: missing \"n\"");
    ck_contains(parse_bad("{\"tune\": [1, 2]}"), "tune: expected an object");
    ck_contains(parse_bad("{\"tune\": {\"n\": [1, 2], \"weights\": [1, 0]}}"), "tune.weights[1]: expected a positive");
    ck_contains(parse_bad("{\"tune\": {\"n\": [1, 2], \"weights\": 1}}"), "tune.weights: expected a list of 2");
    ck_contains(parse_bad("{\"tune\": {\"n\": 0}}"), "tune.n");
    ck_contains(parse_bad("{\"tune\": {\"n\": 1, \"weight\": [1]}}"), "tune.weight: unknown key (did you mean \"weights\"?)");
}
END_TEST

START_TEST(constraint_keys)
{
    kf_config c;
    parse_ok("{\"constraints\": \"block_size * elements_per_thread <= 16384\"}", &c);
    ck_assert_int_eq(c.specs[0].n_constraints, 1);
    ck_assert_str_eq(c.specs[0].constraints[0], "block_size * elements_per_thread <= 16384");
    config_free(&c);
    parse_ok("{\"constraints\": []}", &c);
    ck_assert_int_eq(c.specs[0].n_constraints, 0);
    config_free(&c);
    parse_ok("{\"constraints\": [\"algorithm != \\\"atomic_global\\\" || n <= 1048576\", \"log2(tile) < 20\"]}",
             &c);
    ck_assert_int_eq(c.specs[0].n_constraints, 2);
    ck_assert_str_eq(c.specs[0].constraints[0], "algorithm != \"atomic_global\" || n <= 1048576");
    config_free(&c);

    ck_contains(parse_bad("{\"constraints\": 5}"), "constraints: expected a list of expression strings, got 5");
    ck_contains(parse_bad("{\"constraints\": [\"n > 1\", 5]}"), "constraints[1]: expected an expression string");
    ck_contains(parse_bad("{\"constraints\": [\"(n > 1\"]}"), "constraints[0]");
    ck_contains(parse_bad("{\"defaults\": {\"constraints\": [\"n >\"]}, \"variants\": [{}]}"),
                "defaults.constraints[0]");
    ck_contains(parse_bad("{\"variants\": [{}, {\"constraints\": \"tile <\"}]}"), "variants[1].constraints");
    char big[1200];
    memset(big, '1', sizeof big);
    memcpy(big, "{\"constraints\": \"", 17);
    memcpy(big + sizeof big - 4, "\"}", 3);
    ck_contains(parse_bad(big), "longer than 1024");
}
END_TEST

START_TEST(names_and_misc)
{
    ck_contains(parse_bad("{\"variants\": [{\"name\": \"has space\"}]}"), "variants[0].name: expected a name");
    ck_contains(parse_bad("{\"variants\": [{\"name\": \"\"}]}"), "variants[0].name");
    ck_contains(parse_bad("{\"variants\": [{\"name\": 3}]}"), "variants[0].name");
    ck_contains(parse_bad("{\"variants\": [{\"name\": \"a\\\"b\"}]}"), "variants[0].name");
    char longname[200];
    snprintf(longname, sizeof longname, "{\"variants\": [{\"name\": \"%064d\"}]}", 0);
    ck_contains(parse_bad(longname), "variants[0].name");
    ck_contains(parse_bad("{\"description\": 1}"), "description: expected a string");
    ck_contains(parse_bad("{\"defaults\": [1]}"), "defaults: expected an object");
    ck_contains(parse_bad("{\"defaults\": {\"kernel\": \"reduce\"}}"), "defaults.kernel: unknown key");
    ck_contains(parse_bad("{\"variants\": [{\"bench\": {}}]}"), "variants[0].bench: unknown key");
    /* "kernel" names a family of the registry (the message lists them) */
    ck_contains(parse_bad("{\"kernel\": 1}"), "kernel: expected one of \"reduce\"");
    ck_contains(parse_bad("{\"kernel\": 1}"), "got 1");
    ck_contains(parse_bad("{\"varaints\": []}"), "varaints: unknown key (did you mean \"variants\"?)");
    ck_contains(parse_bad("\"just a string\""), "expected a JSON object at the top level");
    ck_contains(parse_bad("{} {}"), "malformed JSON at line 1, column 4");
    ck_contains(parse_bad("{\"n\": 1}\n\n  x"), "malformed JSON at line 3, column 3, near 'x'");
    /* a trailing comma is named, on the comma's own line (issue 14) */
    ck_contains(parse_bad("{\"n\": 1,\n\n}"), "line 1, column 8: trailing comma (JSON allows no comma before '}')");
    ck_contains(parse_bad("{\"n\": [1,\n 2,\n ]}"), "line 2, column 3: trailing comma (JSON allows no comma before ']')");
    ck_contains(parse_bad("{\"variants\": [{\"n\": 1},\n{\"n\": 2},\n],\n\"dtype\": \"int32\"}"),
                "line 2, column 9: trailing comma");
    ck_assert(strstr(parse_bad("{,}"), "trailing") == NULL);
    ck_contains(parse_bad("{\"a\": 1,,}"), "line 1, column 9, near ',}'");
    ck_contains(parse_bad("{\"n\": [1, 2x]}"), "line 1, column 12, near 'x]}'");
}
END_TEST

/* Issue 14: a message about a value gives its line as well as its path. */
START_TEST(parse_errors_give_the_line)
{
    const char *text = "{\n"
                       "  \"n\": 1024,\n"
                       "  \"variants\": [\n"
                       "    {\"name\": \"a\", \"block_size\": 128},\n"
                       "    {\"name\": \"b\",\n"
                       "     \"grid\": {\"waves\": 0}}\n"
                       "  ]\n"
                       "}\n";
    ck_contains(parse_bad(text), "t.json: line 6: variants[1].grid.waves: expected an integer 1..64, got 0");
    ck_contains(parse_bad("{\"n\": 1,\n \"bench\": {\n  \"warmup\": -1}}"), "line 3: bench.warmup: expected");
    ck_contains(parse_bad("{\"n\": [1,\n 2,\n 0]}"), "line 3: n[2]: expected a size");
    ck_contains(parse_bad("{\"n\": 1,\n\"block_size\": {\"range\": [64,\n 32]}}"), "line 2: block_size.range: low");
    ck_contains(parse_bad("{\"n\": 1,\n\"dtype\": \"int32\",\n\"dtype\": \"int64\"}"), "line 3: dtype: duplicate key");
    ck_contains(parse_bad("{\"n\": 1,\n\n\"blok_size\": 1}"), "line 3: blok_size: unknown key");
    /* a string key with a '.' or an escape is not found: no line, but the path */
    ck_contains(parse_bad("{\"n\": 1,\n \"a.b\": 1}"), "t.json: a.b: unknown key");
    /* a file of one line: no "line 1" */
    ck_contains(parse_bad("{\"n\": 0}"), "t.json: n: expected a size");
    /* a variant that cannot run: the line of its object */
    kf_config c;
    kf_space sp;
    const char *t2 = "{\"n\": 1024,\n \"variants\": [\n  {\"algorithm\": \"shuffle\"},\n  {\"block_size\": 96}]}";
    ck_assert_int_eq(config_parse(t2, strlen(t2), "x.json", &c, err, sizeof err), 0);
    ck_assert_int_eq(c.specs[1].line, 4);
    ck_assert_int_ne(space_expand(&c, NULL, &sp, err, sizeof err), 0);
    ck_contains(err, "x.json: line 4: variants[1]: cannot run: block_size 96");
    config_free(&c);
}
END_TEST

/* Issue 14: --set errors that say what to type. */
START_TEST(set_messages_suggest)
{
    kf_config c;
    const char *t = "{\"n\": 1024, \"dtype\": \"float32\", \"algorithm\": \"shuffle\"}";
    ck_assert_int_eq(config_parse(t, strlen(t), "x.json", &c, err, sizeof err), 0);
    /* a bare 2^20 in a list: quote it */
    ck_assert_int_ne(config_set(&c, "n=[1000,2^20]", err, sizeof err), 0);
    ck_contains(err, "--set n: [1000,2^20] is not valid JSON");
    ck_contains(err, "--set 'n=[1000,\"2^20\"]'");
    ck_assert_int_ne(config_set(&c, "block_size=[64,x]", err, sizeof err), 0);
    ck_contains(err, "--set 'block_size=[64,\"x\"]'");
    ck_assert_int_eq(config_set(&c, "n=[1000,\"2^20\"]", err, sizeof err), 0);
    /* a bitwise op on a float config: the --set is named, an integer dtype suggested */
    ck_assert_int_eq(config_set(&c, "op=xor", err, sizeof err), 0);
    ck_assert_str_eq(c.sets, " --set op=xor"); /* the axes' overrides, not the sizes' */
    kf_space sp;
    ck_assert_int_ne(space_expand(&c, NULL, &sp, err, sizeof err), 0);
    ck_contains(err, "op xor is bitwise: it needs an integer dtype, got float32");
    ck_contains(err, "(with --set op=xor: add --set dtype=");
    ck_assert_msg(strstr(err, "dtype=int32") || strstr(err, "dtype=uint32") || strstr(err, "dtype=int64"), "%s", err);
    /* and then it runs */
    ck_assert_int_eq(config_set(&c, "dtype=int32", err, sizeof err), 0);
    ck_assert_int_eq(space_expand(&c, NULL, &sp, err, sizeof err), 0);
    space_free(&sp);
    config_free(&c);
}
END_TEST

START_TEST(parse_length_and_stdin)
{
    /* only len bytes are parsed; the text need not be NUL-terminated there */
    const char text[] = "{\"n\": 1024}garbage";
    kf_config c;
    ck_assert_int_eq(config_parse(text, 11, "x.json", &c, err, sizeof err), 0);
    n_is(c.specs[0].sz[0].vals, c.specs[0].sz[0].count, 1, (int64_t[]){1024});
    config_free(&c);

    /* a NUL inside the length is an error */
    const char nul[] = "{\"n\": 1}\0 ";
    ck_assert_int_eq(config_parse(nul, sizeof nul - 1, "x.json", &c, err, sizeof err), -1);
    ck_contains(err, "x.json: not a JSON text (it contains a NUL byte)");

    /* "-" is stdin and is named so */
    ck_assert_int_eq(config_parse("{\"n\": 0}", 8, "-", &c, err, sizeof err), -1);
    ck_contains(err, "<stdin>: n: expected a size");
    ck_assert_int_eq(config_parse("{\"n\": 5}", 8, "-", &c, err, sizeof err), 0);
    ck_assert_str_eq(c.path, "<stdin>");
    config_free(&c);

    /* a small error buffer is truncated, not overrun */
    char small[16];
    memset(small, 'x', sizeof small);
    ck_assert_int_eq(config_parse("{\"blok_size\": 1}", 16, "a-rather-long-file-name.json", &c, small, 8), -1);
    ck_assert(memchr(small, '\0', 8) != NULL);
    ck_assert_int_eq(small[8], 'x');
}
END_TEST

START_TEST(load_files)
{
    char path[1024];
    kf_config c;
    ck_assert_int_eq(config_load("/nonexistent/kforge/none.json", &c, err, sizeof err), -1);
    ck_contains(err, "/nonexistent/kforge/none.json");
    snprintf(path, sizeof path, "%s/configs/seeds.json", srcdir());
    ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.nspecs, 14);
    ck_assert_str_eq(c.specs[0].name, "reduce0");
    ck_assert_str_eq(c.specs[13].name, "chunks4");
    ck_assert_str_eq(c.path, path);
    config_free(&c);
    snprintf(path, sizeof path, "%s/configs/explore-h100.json", srcdir());
    ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.nspecs, 1);
    ck_assert_int_eq(c.specs[0].sz[0].count, 9);
    ck_assert(c.specs[0].sz[0].vals[8] == (1LL << 30));
    ck_assert_double_eq(c.bench.max_time_s, 0.2);
    config_free(&c);
}
END_TEST

/* config_param_value: one value of one parameter from JSON, validated as in
 * a config (the decoder results files and the tuning database use). */
static int param_value(const kf_param *p, const char *json, int64_t *out)
{
    cJSON *j = cJSON_Parse(json);
    ck_assert_msg(j != NULL, "bad JSON in the test: %s", json);
    err[0] = '\0';
    int rc = config_param_value(p, j, "results line", out, err, sizeof err);
    cJSON_Delete(j);
    return rc;
}

START_TEST(param_values)
{
    const kf_family *f = reduce_family();
    int64_t x = -1;
    ck_assert_int_eq(param_value(&f->params[RP_ALGORITHM], "\"shuffle\"", &x), 0);
    ck_assert_int_eq(x, KF_ALG_SHUFFLE);
    ck_assert_int_eq(param_value(&f->params[RP_DTYPE], "\"uint32\"", &x), 0);
    ck_assert_int_eq(x, KF_UINT32);
    ck_assert_int_eq(param_value(&f->params[RP_BLOCK_SIZE], "512", &x), 0);
    ck_assert_int_eq(x, 512);
    ck_assert_int_eq(param_value(&f->params[RP_VECTOR_WIDTH], "4", &x), 0);
    ck_assert_int_eq(x, 4);
    ck_assert_int_eq(param_value(&f->params[RP_GRID], "{\"waves\": 2}", &x), 0);
    ck_assert(x == grid(KF_GRID_WAVES, 2));
    ck_assert_int_eq(param_value(&f->params[RP_GRID], "\"auto\"", &x), 0);
    ck_assert(x == grid(KF_GRID_AUTO, 0));
    ck_assert_int_eq(param_value(&f->params[RP_GRID], "2048", &x), 0);
    ck_assert(x == grid(KF_GRID_BLOCKS, 2048));
    ck_assert_int_eq(param_value(&f->sizes[0], "\"2^20\"", &x), 0);
    ck_assert_int_eq(x, 1 << 20);

    /* the same checks as a config; the message names what and the field */
    x = 77;
    ck_assert_int_eq(param_value(&f->params[RP_DTYPE], "\"flaot32\"", &x), -1);
    ck_contains(err, "results line: dtype: unknown value \"flaot32\" (did you mean \"float32\"?)");
    ck_assert_int_eq(param_value(&f->params[RP_BLOCK_SIZE], "0", &x), -1);
    ck_contains(err, "results line: block_size: expected an integer 1..1024");
    ck_assert_int_eq(param_value(&f->params[RP_VECTOR_WIDTH], "3", &x), -1);
    ck_contains(err, "results line: vector_width: expected 1, 2, 4 or 8");
    ck_assert_int_eq(param_value(&f->params[RP_GRID], "{\"waves\": 65}", &x), -1);
    ck_contains(err, "results line: grid.waves: expected an integer 1..64");
    ck_assert_int_eq(param_value(&f->params[RP_ELEMENTS_PER_THREAD], "[4]", &x), -1);
    ck_contains(err, "results line: elements_per_thread: expected an integer 1..256");
    ck_assert_int_eq(param_value(&f->sizes[0], "\"2^37\"", &x), -1);
    ck_contains(err, "results line: n: expected a size 1..2^36");
    ck_assert_int_eq(x, 77);   /* untouched on failure */
}
END_TEST

// ---------------------------------------------------------------------------
// --set

static kf_config two_specs(void)
{
    kf_config c;
    parse_ok("{\"defaults\": {\"n\": 1024, \"constraints\": [\"n > 0\"]},"
             " \"variants\": [{\"name\": \"a\", \"dtype\": \"int32\"}, {\"name\": \"b\", \"block_size\": 64}]}",
             &c);
    return c;
}

static void set_ok(kf_config *c, const char *a)
{
    err[0] = '\0';
    ck_assert_msg(config_set(c, a, err, sizeof err) == 0, "--set %s: %s", a, err);
}

static const char *set_bad(kf_config *c, const char *a)
{
    err[0] = '\0';
    ck_assert_msg(config_set(c, a, err, sizeof err) != 0, "--set %s accepted", a);
    ck_assert(err[0]);
    return err;
}

START_TEST(set_axes)
{
    kf_config c = two_specs();
    set_ok(&c, "dtype=float64");        /* a bare word */
    set_ok(&c, "block_size=[64,128]");  /* JSON list */
    set_ok(&c, "elements_per_thread={\"range\": [1, 4]}");
    set_ok(&c, "grid=auto");
    set_ok(&c, "load=[\"ldg\", \"stream\"]");
    set_ok(&c, "unroll=\"full\"");      /* a JSON string works too */
    for (int i = 0; i < 2; i++) {
        const kf_spec *s = &c.specs[i];
        ax1(s, RP_DTYPE, KF_FLOAT64);
        ax_is(s, RP_BLOCK_SIZE, 2, (int64_t[]){64, 128});
        ax_is(s, RP_ELEMENTS_PER_THREAD, 3, (int64_t[]){1, 2, 4});
        ax1(s, RP_GRID, grid(KF_GRID_AUTO, 0));
        ax_is(s, RP_LOAD, 2, (int64_t[]){KF_LOAD_LDG, KF_LOAD_STREAM});
        ax1(s, RP_UNROLL, KF_UNROLL_FULL);
    }
    set_ok(&c, "grid={\"waves\": 2}");
    ax1(&c.specs[1], RP_GRID, grid(KF_GRID_WAVES, 2));
    set_ok(&c, "grid=4096");
    ax1(&c.specs[0], RP_GRID, grid(KF_GRID_BLOCKS, 4096));

    /* failures leave the config as it was */
    ck_contains(set_bad(&c, "dtype=flaot32"), "--set dtype: unknown value \"flaot32\" (did you mean \"float32\"?)");
    ck_contains(set_bad(&c, "vector_width=3"), "--set vector_width: expected 1, 2, 4 or 8");
    ck_contains(set_bad(&c, "block_size=[64, 0]"), "--set block_size: [1]: expected an integer");
    ck_contains(set_bad(&c, "block_size=[]"), "empty list");
    ck_contains(set_bad(&c, "grid={\"waves\": 0}"), "--set grid: waves: expected an integer 1..64");
    ax1(&c.specs[0], RP_DTYPE, KF_FLOAT64);
    ax_is(&c.specs[0], RP_BLOCK_SIZE, 2, (int64_t[]){64, 128});
    ax1(&c.specs[0], RP_GRID, grid(KF_GRID_BLOCKS, 4096));
    config_free(&c);
}
END_TEST

START_TEST(set_sizes_bench_constraints)
{
    kf_config c = two_specs();
    set_ok(&c, "n=2^30");
    for (int i = 0; i < 2; i++)
        n_is(c.specs[i].sz[0].vals, c.specs[i].sz[0].count, 1, (int64_t[]){1LL << 30});
    set_ok(&c, "n=[1000, \"2^20\", \"1<<4\"]");
    for (int i = 0; i < 2; i++)
        n_is(c.specs[i].sz[0].vals, c.specs[i].sz[0].count, 3, (int64_t[]){1000, 1 << 20, 16});
    set_ok(&c, "n=77");
    n_is(c.specs[1].sz[0].vals, c.specs[1].sz[0].count, 1, (int64_t[]){77});
    ck_contains(set_bad(&c, "n=2^99"), "--set n: expected a size");
    ck_contains(set_bad(&c, "n=0"), "--set n");
    n_is(c.specs[1].sz[0].vals, c.specs[1].sz[0].count, 1, (int64_t[]){77});

    set_ok(&c, "bench.seed=7");
    ck_assert(c.bench.seed == 7);
    set_ok(&c, "bench.repetitions=5");
    ck_assert_int_eq(c.bench.min_reps, 5);
    ck_assert_int_eq(c.bench.max_reps, 5);
    set_ok(&c, "bench.flush_l2=false");
    ck_assert(!c.bench.flush_l2);
    set_ok(&c, "bench.max_time_s=2.5");
    ck_assert_double_eq(c.bench.max_time_s, 2.5);
    ck_contains(set_bad(&c, "bench.min_reps=6"), "min_reps (6) is above max_reps (5)");
    ck_assert_int_eq(c.bench.min_reps, 5);   /* unchanged */
    ck_contains(set_bad(&c, "bench.seed=-1"), "--set bench.seed: expected an integer 0..2^53-1");
    ck_assert(c.bench.seed == 7);
    ck_contains(set_bad(&c, "bench.warmpu=1"), "--set bench.warmpu: unknown bench key (did you mean bench.warmup?)");
    ck_contains(set_bad(&c, "bench.zzzzzzzz=1"), "unknown bench key");
    ck_contains(set_bad(&c, "bench.flush_l2=yes"), "expected true or false");

    /* constraints are added to each spec's own */
    set_ok(&c, "constraints=block_size <= 128");
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(c.specs[i].n_constraints, 2);
        ck_assert_str_eq(c.specs[i].constraints[0], "n > 0");
        ck_assert_str_eq(c.specs[i].constraints[1], "block_size <= 128");
    }
    set_ok(&c, "constraints=[\"tile >= 32\", \"n < pow2(40)\"]");
    ck_assert_int_eq(c.specs[1].n_constraints, 4);
    ck_assert_str_eq(c.specs[1].constraints[3], "n < pow2(40)");
    ck_contains(set_bad(&c, "constraints=block_size <="), "--set constraints: 'block_size <=' at position");
    ck_contains(set_bad(&c, "constraints=blok_size > 1"), "did you mean 'block_size'");
    /* a failed --set constraints=[...] leaves every spec as it was */
    ck_contains(set_bad(&c, "constraints=[\"tile >= 1\", \"n >\"]"), "--set constraints: [1]: 'n >'");
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(c.specs[i].n_constraints, 4);

    config_free(&c);
}
END_TEST

START_TEST(set_unknown_and_malformed)
{
    kf_config c = two_specs();
    ck_contains(set_bad(&c, "blok_size=64"), "--set blok_size: unknown key (did you mean block_size?)");
    ck_contains(set_bad(&c, "dtyp=int32"), "did you mean dtype?");
    ck_contains(set_bad(&c, "bench_seed=1"), "did you mean bench.seed?");
    ck_contains(set_bad(&c, "qqqqqqqqqqqqq=1"), "--set qqqqqqqqqqqqq: unknown key; --set takes");
    ck_contains(set_bad(&c, "block_size"), "--set: expected KEY=VALUE");
    ck_contains(set_bad(&c, "=64"), "--set: expected KEY=VALUE");
    ck_contains(set_bad(&c, "name=x"), "--set name: unknown key");
    ck_contains(set_bad(&c, "dtype="), "--set dtype: unknown value \"\"");
    /* '=' inside the value is fine */
    set_ok(&c, "constraints=block_size == 64 || n >= 1");
    ck_assert_str_eq(c.specs[0].constraints[1], "block_size == 64 || n >= 1");
    config_free(&c);
}
END_TEST

/* "kernel" picks a family of the registry; an unknown one is rejected with
 * the list of known families. */
START_TEST(kernel_family)
{
    kf_config c;
    parse_ok("{\"kernel\": \"reduce\", \"n\": 8}", &c);
    ck_assert_int_eq(c.family, family_find("reduce"));
    config_free(&c);
    /* config_free keeps the family (callers print it after freeing) */
    ck_assert_int_eq(c.family, family_find("reduce"));

    const char *m = parse_bad("{\"kernel\": \"nonexistent\", \"n\": 1024}");
    ck_contains(m, "t.json: kernel: unknown value \"nonexistent\"");
    ck_assert_int_ge(kf_nfamilies, 1);
    for (int i = 0; i < kf_nfamilies; i++) {
        char q[96];
        snprintf(q, sizeof q, "\"%s\"", kf_families[i]->name);
        ck_contains(m, q);
    }
    ck_contains(m, "allowed: \"reduce\"");
    /* no family is close: no suggestion */
    ck_assert_ptr_null(strstr(m, "did you mean"));
    /* a near miss gets one */
    ck_contains(parse_bad("{\"kernel\": \"reduse\", \"n\": 1}"),
                "kernel: unknown value \"reduse\" (did you mean \"reduce\"?)");
    ck_contains(parse_bad("{\"kernel\": \"Reduce\", \"n\": 1}"), "did you mean \"reduce\"?");
    ck_contains(parse_bad("{\"kernel\": [\"reduce\"], \"n\": 1}"), "kernel: expected one of \"reduce\"");
    /* "kernel" belongs to the top level only */
    ck_contains(parse_bad("{\"variants\": [{\"kernel\": \"reduce\", \"n\": 1}]}"), "variants[0].kernel: unknown key");
}
END_TEST

/* content_hash identifies the file's bytes (the command identity of
 * resume state): equal for the same text, different for different texts,
 * independent of the path and of anything past len. */
START_TEST(content_hash)
{
    static const char t1[] = "{\"n\": 1024, \"block_size\": [64, 128]}";
    static const char t2[] = "{\"n\": 2048, \"block_size\": [64, 128]}";
    static const char t3[] = "{\"n\": 1024,  \"block_size\": [64, 128]}"; /* same config, other bytes */
    kf_config a, b, d;
    parse_ok(t1, &a);
    parse_ok(t1, &b);
    ck_assert(a.content_hash != 0);
    ck_assert(a.content_hash == b.content_hash);
    config_free(&b);
    parse_ok(t2, &d);
    ck_assert(d.content_hash != a.content_hash);
    config_free(&d);
    parse_ok(t3, &d);
    ck_assert(d.content_hash != a.content_hash);
    config_free(&d);

    /* the path is not part of it */
    ck_assert_int_eq(config_parse(t1, strlen(t1), "elsewhere/other.json", &b, err, sizeof err), 0);
    ck_assert(b.content_hash == a.content_hash);
    config_free(&b);
    /* only the len bytes parsed count */
    char longer[128];
    snprintf(longer, sizeof longer, "%sgarbage", t1);
    ck_assert_int_eq(config_parse(longer, strlen(t1), "t.json", &b, err, sizeof err), 0);
    ck_assert(b.content_hash == a.content_hash);
    config_free(&b);
    /* --set is recorded beside it (command_identity), not folded in */
    uint64_t h = a.content_hash;
    set_ok(&a, "block_size=256");
    ck_assert(a.content_hash == h);
    config_free(&a);
    ck_assert(a.content_hash == 0);

    /* a file: the hash of its bytes, the same as parsing them */
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/seeds.json", srcdir());
    size_t len;
    char *text = kf_read_file(path, &len, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    ck_assert_msg(config_load(path, &a, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(config_parse(text, len, "copy.json", &b, err, sizeof err), 0);
    ck_assert(a.content_hash == b.content_hash);
    ck_assert(a.content_hash != h);
    config_free(&a);
    config_free(&b);
    free(text);
}
END_TEST

/* An unknown --set key suggests the nearest key --set takes, for every key
 * of the table (parameters, sizes, constraints, bench.KEY), and changes
 * nothing. */
START_TEST(set_unknown_key_suggests)
{
    kf_config c = two_specs();
    ck_contains(set_bad(&c, "elements_per_thred=4"),
                "--set elements_per_thred: unknown key (did you mean elements_per_thread?)");
    ck_contains(set_bad(&c, "vectr_width=2"), "did you mean vector_width?");
    ck_contains(set_bad(&c, "warp_reduse=shuffle"), "did you mean warp_reduce?");
    ck_contains(set_bad(&c, "accumulater=shared"), "did you mean accumulator?");
    ck_contains(set_bad(&c, "constraint=n > 1"), "--set constraint: unknown key (did you mean constraints?)");
    ck_contains(set_bad(&c, "bench.max_rep=5"), "--set bench.max_rep: unknown bench key (did you mean bench.max_reps?)");
    ck_contains(set_bad(&c, "bench.sed=5"), "did you mean bench.seed?");
    ck_contains(set_bad(&c, "benchseed=5"), "did you mean bench.seed?");
    /* nothing changed */
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(c.specs[i].ax[RP_ELEMENTS_PER_THREAD].count, 0);
        ck_assert_int_eq(c.specs[i].ax[RP_VECTOR_WIDTH].count, 0);
        ck_assert_int_eq(c.specs[i].n_constraints, 1);
    }
    ck_assert_int_eq(c.bench.max_reps, 1000);
    ck_assert(c.bench.seed == 42);

    /* the keys --set takes are the family's table plus constraints and bench.KEY */
    const kf_family *f = reduce_family();
    /* a copy: the table is static storage until the next call, and
     * config_set calls it for its suggestions */
    const char *keys[KF_MAX_PARAMS + KF_MAX_DIMS + 16];
    const char *const *tab = config_set_keys(c.family);
    int nk = 0, nbench = 0;
    for (; tab[nk]; nk++) {
        ck_assert_int_lt(nk, (int)(sizeof keys / sizeof keys[0]));
        keys[nk] = strdup(tab[nk]);
        nbench += strncmp(keys[nk], "bench.", 6) == 0;
    }
    ck_assert_int_eq(nbench, 12);
    ck_assert_int_eq(nk, f->nparams + f->nsizes + 1 + nbench);
    for (int i = 0; i < f->nparams; i++)
        ck_assert_int_ge(kf_lookup(keys, nk, f->params[i].name), 0);
    ck_assert_int_ge(kf_lookup(keys, nk, "n"), 0);
    ck_assert_int_ge(kf_lookup(keys, nk, "constraints"), 0);
    ck_assert_int_ge(kf_lookup(keys, nk, "bench.timeout_s"), 0);
    /* every key, misspelt by one letter more, is suggested back */
    for (int i = 0; i < nk; i++) {
        char a[160], want[160];
        snprintf(a, sizeof a, "%sq=1", keys[i]);
        snprintf(want, sizeof want, "(did you mean %s?)", keys[i]);
        ck_contains(set_bad(&c, a), want);
    }
    for (int i = 0; i < nk; i++)
        free((char *)keys[i]);
    config_free(&c);
}
END_TEST

// ---------------------------------------------------------------------------
// corpus of bad files

static char *read_text(const char *path)
{
    size_t len;
    char e[512];
    char *t = kf_read_file(path, &len, e, sizeof e);
    ck_assert_msg(t != NULL, "%s", e);
    return t;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

START_TEST(bad_corpus)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/bad", srcdir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s (run from the repository root or set KFORGE_SRCDIR)", dir);
    char *names[512];
    int nn = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0) {
            ck_assert(nn < 512);
            names[nn++] = strndup(e->d_name, l - 5);
        }
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    ck_assert_msg(nn >= 30, "only %d bad files", nn);

    int parse_fail = 0, expand_fail = 0;
    for (int i = 0; i < nn; i++) {
        char json[1200], expect[1200];
        snprintf(json, sizeof json, "%s/%s.json", dir, names[i]);
        snprintf(expect, sizeof expect, "%s/%s.expect", dir, names[i]);
        struct stat st;
        ck_assert_msg(stat(expect, &st) == 0, "%s has no .expect file", json);

        kf_config c;
        char msg[2048] = "";
        int rc = config_load(json, &c, msg, sizeof msg);
        if (rc == 0) {
            kf_space s;
            rc = space_expand(&c, NULL, &s, msg, sizeof msg);
            if (rc == 0)
                space_free(&s);
            config_free(&c);
            ck_assert_msg(rc != 0, "%s: accepted by config_load and space_expand", json);
            expand_fail++;
        } else {
            parse_fail++;
        }
        ck_assert_msg(strstr(msg, json) == msg, "%s: message does not start with the file name: %s", json, msg);

        char *want = read_text(expect);
        int lines = 0;
        for (char *save = NULL, *l = strtok_r(want, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (!l[0])
                continue;
            lines++;
            ck_assert_msg(strstr(msg, l) != NULL, "%s: message lacks \"%s\":\n  %s", json, l, msg);
        }
        ck_assert_msg(lines >= 2, "%s: the .expect file needs the file name and the field (%d lines)", expect,
                      lines);
        free(want);
        /* the .expect names the file */
        char *w2 = read_text(expect);
        ck_assert_msg(strstr(w2, names[i]) != NULL, "%s does not name %s", expect, names[i]);
        free(w2);
        free(names[i]);
    }
    ck_assert_int_gt(parse_fail, 0);
    ck_assert_int_gt(expand_fail, 0);
}
END_TEST

/* Every .expect has its .json (no orphans left behind by a rename). */
START_TEST(bad_corpus_no_orphans)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/bad", srcdir());
    DIR *d = opendir(dir);
    ck_assert(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l > 7 && strcmp(e->d_name + l - 7, ".expect") == 0) {
            char p[1300];
            snprintf(p, sizeof p, "%s/%.*s.json", dir, (int)(l - 7), e->d_name);
            struct stat st;
            ck_assert_msg(stat(p, &st) == 0, "%s/%s has no .json", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    ck_assert_int_ge(n, 30);
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("shapes");
    tcase_add_test(tc, flat_every_key);
    tcase_add_test(tc, flat_omitted_axes);
    tcase_add_test(tc, defaults_and_variants);
    tcase_add_test(tc, variants_without_defaults);
    tcase_add_test(tc, lists);
    tcase_add_test(tc, ranges);
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, grids);
    tcase_add_test(tc, grid_encoding);
    tcase_add_test(tc, bench_keys);
    tcase_add_test(tc, tune_keys);
    tcase_add_test(tc, constraint_keys);
    tcase_add_test(tc, names_and_misc);
    tcase_add_test(tc, parse_length_and_stdin);
    tcase_add_test(tc, parse_errors_give_the_line);
    tcase_add_test(tc, load_files);
    tcase_add_test(tc, kernel_family);
    tcase_add_test(tc, param_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("set");
    tcase_add_test(tc, set_axes);
    tcase_add_test(tc, set_sizes_bench_constraints);
    tcase_add_test(tc, set_unknown_and_malformed);
    tcase_add_test(tc, set_unknown_key_suggests);
    tcase_add_test(tc, set_messages_suggest);
    tcase_add_test(tc, content_hash);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bad_corpus);
    tcase_add_test(tc, bad_corpus_no_orphans);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(config_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
