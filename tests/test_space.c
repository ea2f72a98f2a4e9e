/*
 * test_space.c -- expanding specs into variants and cases: the cartesian
 * product, its order, duplicates, skipped combinations, constraints, every
 * rule of space_check_variant, device limits, and the shipped configs.
 * No GPU needed.
 *
 *   make build/tests/test_space && build/tests/test_space
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
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
#include "time_limit.h"
#include "util.h"

static char err[2048];

#define ck_contains(hay, needle)                                                                          \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "expected \"%s\" in \"%s\"", (needle), (hay))

static void load_text(const char *text, kf_config *cfg)
{
    int rc = config_parse(text, strlen(text), "s.json", cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "parse failed: %s\n%s", err, text);
}

/* Parses and expands text; fails the test on any error. */
static void expand_ok(const char *text, const kf_device *dev, kf_space *s)
{
    kf_config c;
    load_text(text, &c);
    int rc = space_expand(&c, dev, s, err, sizeof err);
    config_free(&c);
    ck_assert_msg(rc == 0, "expand failed: %s\n%s", err, text);
}

/* Parses (must succeed) and expands (must fail); returns the message. */
static const char *expand_bad(const char *text, const kf_device *dev)
{
    kf_config c;
    kf_space s;
    load_text(text, &c);
    err[0] = '\0';
    int rc = space_expand(&c, dev, &s, err, sizeof err);
    config_free(&c);
    if (rc == 0)
        space_free(&s);
    ck_assert_msg(rc != 0, "expanded: %s", text);
    ck_assert(s.nvariants == 0 && s.variants == NULL && s.cases == NULL && s.skipped == NULL);
    return err;
}

/* A variant's reduce parameters, decoded. */
static reduce_v rv(const kf_variant *v)
{
    ck_assert_int_eq(v->family, family_find("reduce"));
    reduce_v r;
    reduce_decode(v, &r);
    return r;
}

static bool any_skipped(const kf_space *s, const char *a, const char *b)
{
    for (int i = 0; i < s->nskipped; i++)
        if (strstr(s->skipped[i], a) && (!b || strstr(s->skipped[i], b)))
            return true;
    return false;
}

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

// ---------------------------------------------------------------------------
// expansion

START_TEST(product_count_and_order)
{
    kf_space s;
    expand_ok("{\"dtype\": [\"int32\", \"float32\"], \"block_size\": [64, 128, 256], \"n\": [4096, 1024]}", NULL,
              &s);
    ck_assert_int_eq(s.nvariants, 6);
    ck_assert_int_eq(s.ncases, 12);
    ck_assert_int_eq(s.nskipped, 0);
    /* variants: the first axis varies slowest, values in the order given */
    static const kf_dtype dt[] = {KF_INT32, KF_INT32, KF_INT32, KF_FLOAT32, KF_FLOAT32, KF_FLOAT32};
    static const int bs[] = {64, 128, 256, 64, 128, 256};
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(s.variants[i].p[RP_DTYPE], dt[i]);
        ck_assert_int_eq(s.variants[i].p[RP_BLOCK_SIZE], bs[i]);
        /* the rest are the defaults, passes resolved */
        ck_assert_int_eq(s.variants[i].p[RP_ALGORITHM], KF_ALG_SEQUENTIAL);
        ck_assert_int_eq(s.variants[i].p[RP_PASSES], KF_PASSES_MULTI_KERNEL);
        ck_assert_int_eq(rv(&s.variants[i]).grid.kind, KF_GRID_AUTO);
        ck_assert_str_eq(s.variants[i].name, "");
    }
    /* cases: by n, then variant */
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(s.cases[i].shape.d[0], i < 6 ? 1024 : 4096);
        ck_assert_int_eq(s.cases[i].variant, i % 6);
    }
    space_free(&s);
    ck_assert_int_eq(s.nvariants, 0);
    ck_assert_ptr_null(s.variants);
}
END_TEST

START_TEST(product_several_specs)
{
    kf_space s;
    expand_ok("{\"defaults\": {\"n\": [\"2^20\", 1000]},\n"
              " \"variants\": [\n"
              "   {\"name\": \"a\", \"block_size\": [128, 64]},\n"
              "   {\"name\": \"b\", \"n\": [1000, 5]},\n"
              "   {\"name\": \"c\", \"op\": [\"min\", \"max\"], \"n\": 1000}]}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 5);
    ck_assert_str_eq(s.variants[0].name, "a");
    ck_assert_int_eq(s.variants[0].p[RP_BLOCK_SIZE], 128);
    ck_assert_int_eq(s.variants[1].p[RP_BLOCK_SIZE], 64);
    ck_assert_str_eq(s.variants[2].name, "b");
    ck_assert_str_eq(s.variants[3].name, "c");
    ck_assert_int_eq(s.variants[3].p[RP_OP], KF_OP_MIN);
    ck_assert_int_eq(s.variants[4].p[RP_OP], KF_OP_MAX);
    /* n=5: b; n=1000: a64 a128 b cmin cmax; n=2^20: a128 a64 */
    static const struct { int64_t n; int v; } want[] = {
        {5, 2}, {1000, 0}, {1000, 1}, {1000, 2}, {1000, 3}, {1000, 4}, {1 << 20, 0}, {1 << 20, 1}};
    ck_assert_int_eq(s.ncases, 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(s.cases[i].shape.d[0], want[i].n);
        ck_assert_int_eq(s.cases[i].variant, want[i].v);
    }
    space_free(&s);
}
END_TEST

START_TEST(duplicates_removed)
{
    kf_space s;
    /* auto resolves to multi_kernel for sequential: one variant */
    expand_ok("{\"passes\": [\"auto\", \"multi_kernel\"], \"n\": [1024, 1024, 2048]}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 1);
    ck_assert_int_eq(s.ncases, 2);
    space_free(&s);

    /* the same unnamed variant in two specs: one variant, each (variant, n) once */
    expand_ok("{\"defaults\": {\"n\": [1024, 2048]}, \"variants\": [{\"block_size\": 128}, {},"
              " {\"block_size\": [256, 128], \"n\": [2048, 4096]}]}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.variants[0].p[RP_BLOCK_SIZE], 128);
    ck_assert_int_eq(s.variants[1].p[RP_BLOCK_SIZE], 256);
    ck_assert_int_eq(s.ncases, 6); /* 128 and 256, each at 1024 2048 4096 */
    for (int i = 0; i < s.ncases; i++)
        for (int j = 0; j < i; j++)
            ck_assert(s.cases[i].variant != s.cases[j].variant ||
                      !shape_eq(&s.cases[i].shape, &s.cases[j].shape));
    space_free(&s);

    /* names are part of a variant: the same parameters under two names stay two */
    expand_ok("{\"defaults\": {\"n\": 1024}, \"variants\": [{\"name\": \"x\"}, {\"name\": \"y\"}]}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.ncases, 2);
    space_free(&s);

    /* grid is part of a variant too */
    expand_ok("{\"grid\": [\"auto\", 64, {\"waves\": 1}], \"n\": 1024}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 3);
    space_free(&s);
}
END_TEST

START_TEST(single_impossible_is_error)
{
    const char *m = expand_bad("{\"dtype\": \"float32\", \"algorithm\": \"warp_intrinsic\", \"n\": 1024}", NULL);
    ck_contains(m, "s.json: cannot run: ");
    ck_contains(m, "needs a 32-bit integer dtype");
    /* a list of one value is a single value */
    m = expand_bad("{\"dtype\": [\"float32\"], \"op\": [\"xor\"], \"n\": [1, 2]}", NULL);
    ck_contains(m, "op xor is bitwise");
    /* in a variants file the message names the variant */
    m = expand_bad("{\"defaults\": {\"n\": 1024}, \"variants\": [{\"name\": \"ok\"},"
                   " {\"name\": \"bad1\", \"unroll\": \"last_warp\", \"algorithm\": \"shuffle\"}]}",
                   NULL);
    ck_contains(m, "s.json: variants[1]: bad1 cannot run: unroll last_warp applies to algorithm sequential only");
}
END_TEST

START_TEST(list_skips_impossible)
{
    kf_space s;
    expand_ok("{\"dtype\": [\"int32\", \"float32\"], \"algorithm\": [\"sequential\", \"warp_intrinsic\"],"
              " \"unroll\": \"full\", \"n\": 1024}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 3);
    ck_assert_int_eq(s.nskipped, 1);
    ck_contains(s.skipped[0], "warp_intrinsic/bs256");
    ck_contains(s.skipped[0], "needs a 32-bit integer dtype (int32 or uint32), got float32");
    space_free(&s);

    /* skipped lines carry the variant's name */
    expand_ok("{\"defaults\": {\"n\": 1024}, \"variants\": [{\"name\": \"v\", \"block_size\": [32, 48, 64]}]}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.nskipped, 1);
    ck_contains(s.skipped[0], "v sequential/bs48");
    ck_contains(s.skipped[0], "block_size 48: the kernels need a power of two");
    space_free(&s);

    /* nothing left: an error naming the count and the first reason */
    const char *m = expand_bad("{\"op\": [\"and\", \"or\"], \"dtype\": \"float64\", \"n\": 1}", NULL);
    ck_contains(m, "s.json: no combination can run (2 skipped; the first: ");
    ck_contains(m, "op and is bitwise");
}
END_TEST

START_TEST(constraints_without_n)
{
    kf_space s;
    expand_ok("{\"block_size\": [128, 256, 512], \"elements_per_thread\": [1, 2, 4],"
              " \"constraints\": [\"block_size * elements_per_thread <= 512\"], \"n\": [100, 200]}",
              NULL, &s);
    /* kept: 128x1 128x2 128x4 256x1 256x2 512x1 */
    ck_assert_int_eq(s.nvariants, 6);
    ck_assert_int_eq(s.ncases, 12);
    ck_assert_int_eq(s.nskipped, 3);
    for (int i = 0; i < s.nvariants; i++)
        ck_assert(s.variants[i].p[RP_BLOCK_SIZE] * s.variants[i].p[RP_ELEMENTS_PER_THREAD] <= 512);
    ck_assert(any_skipped(&s, "bs512/ept4", "constraint \"block_size * elements_per_thread <= 512\" is false"));
    /* per variant, not per case: no "n=" in these lines */
    ck_assert(!any_skipped(&s, "n=", NULL));
    space_free(&s);

    /* several constraints all apply; enumerated axes compare as strings */
    expand_ok("{\"dtype\": [\"int32\", \"float32\", \"float64\"], \"op\": [\"sum\", \"max\"],"
              " \"constraints\": [\"dtype != \\\"float64\\\"\", \"op == \\\"sum\\\" || dtype == \\\"int32\\\"\"],"
              " \"n\": 10}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 3); /* int32 sum, int32 max, float32 sum */
    ck_assert_int_eq(s.variants[2].p[RP_DTYPE], KF_FLOAT32);
    ck_assert_int_eq(s.variants[2].p[RP_OP], KF_OP_SUM);
    space_free(&s);

    /* a constraint that rejects a single-valued spec: nothing can run */
    const char *m = expand_bad("{\"block_size\": 256, \"constraints\": \"block_size < 256\", \"n\": 1}", NULL);
    ck_contains(m, "no combination can run (1 skipped");
    ck_contains(m, "constraint \"block_size < 256\" is false");

    /* evaluation errors are errors, with the spec and constraint index */
    m = expand_bad("{\"defaults\": {\"n\": 1}, \"variants\": [{}, {\"constraints\": [\"n > 0\", \"dtype > 3\"]}]}",
                   NULL);
    ck_contains(m, "s.json: variants[1]: constraints[1]: 'dtype > 3'");
    ck_contains(m, "cannot compare a string with a number");
}
END_TEST

START_TEST(constraints_with_n)
{
    kf_space s;
    expand_ok("{\"algorithm\": [\"sequential\", \"atomic_global\"], \"n\": [1000, 100000, 10000000],"
              " \"constraints\": \"algorithm != \\\"atomic_global\\\" || n <= 100000\"}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.ncases, 5);
    ck_assert_int_eq(s.nskipped, 1);
    ck_contains(s.skipped[0], "atomic_global/");
    ck_contains(s.skipped[0], "n=10000000: constraint");
    ck_assert_int_eq(s.cases[4].shape.d[0], 10000000);
    ck_assert_int_eq(s.variants[s.cases[4].variant].p[RP_ALGORITHM], KF_ALG_SEQUENTIAL);
    space_free(&s);

    /* a variant rejected at every n is not in the space at all */
    expand_ok("{\"block_size\": [64, 1024], \"n\": [100, 1000], \"constraints\": [\"tile <= n\"]}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 1);
    ck_assert_int_eq(s.variants[0].p[RP_BLOCK_SIZE], 64);
    ck_assert_int_eq(s.ncases, 2);
    ck_assert_int_eq(s.nskipped, 2);
    ck_assert(any_skipped(&s, "bs1024", "n=100:"));
    ck_assert(any_skipped(&s, "bs1024", "n=1000:"));
    space_free(&s);

    /* mixed: the n-free one filters first, the n one per case */
    expand_ok("{\"block_size\": [32, 64, 128], \"n\": [64, 128],"
              " \"constraints\": [\"block_size >= 64\", \"block_size <= n\"]}",
              NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.ncases, 3); /* 64@64, 64@128, 128@128 */
    ck_assert_int_eq(s.nskipped, 2);
    space_free(&s);

}
END_TEST

START_TEST(missing_sizes)
{
    const char *m = expand_bad("{\"block_size\": 64}", NULL);
    ck_contains(m, "s.json: no sizes: give \"n\"");
    m = expand_bad("{\"variants\": [{\"n\": 4}, {\"name\": \"q\"}]}", NULL);
    ck_contains(m, "s.json: variants[1]: no sizes");

    /* --set n= supplies them */
    kf_config c;
    kf_space s;
    load_text("{\"variants\": [{\"n\": 4}, {\"name\": \"q\"}]}", &c);
    ck_assert_int_eq(config_set(&c, "n=2^30", err, sizeof err), 0);
    ck_assert_msg(space_expand(&c, NULL, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.ncases, 2);
    ck_assert_int_eq(s.cases[0].shape.d[0], 1LL << 30);
    space_free(&s);
    config_free(&c);
}
END_TEST

START_TEST(too_many_combinations)
{
    const char *m = expand_bad("{\"dtype\": [\"int32\", \"uint32\", \"int64\", \"float32\", \"float64\"],"
                               " \"op\": [\"sum\", \"min\", \"max\", \"prod\", \"and\", \"or\", \"xor\"],"
                               " \"unroll\": [\"none\", \"full\"],"
                               " \"block_size\": {\"range\": [1, 1024], \"step\": 1},"
                               " \"elements_per_thread\": {\"range\": [1, 256], \"step\": 1}, \"n\": 1}",
                               NULL);
    ck_contains(m, "more than 10000000 combinations");
}
END_TEST

/* The large space: elements_per_thread 1..256 x grid 1..400 at one
 * n.  Every combination can run, so there are 256 * 400 variants and as
 * many cases.  head opens the object, tail follows the grid list. */
static char *large_config(const char *head, const char *tail)
{
    strbuf b = {0};
    sb_append(&b, head);
    sb_append(&b, "\"elements_per_thread\": {\"range\": [1, 256], \"step\": 1}, \"grid\": [");
    for (int g = 1; g <= 400; g++)
        sb_printf(&b, "%s%d", g > 1 ? ", " : "", g);
    sb_append(&b, "]");
    sb_append(&b, tail);
    ck_assert(!b.failed);
    return sb_take(&b);
}

/* Checks that the space holds exactly the 256 x 400 variants, in config
 * order (elements_per_thread slowest), every other parameter at its default. */
static void check_large_variants(const kf_space *s)
{
    ck_assert_int_eq(s->nvariants, 256 * 400);
    ck_assert_int_eq(s->nskipped, 0);
    /* one assertion at the end: check records every assertion it passes */
    int bad = -1;
    for (int i = 0; i < s->nvariants && bad < 0; i++) {
        reduce_v r;
        reduce_decode(&s->variants[i], &r);
        if (s->variants[i].family != family_find("reduce") || s->variants[i].name[0] ||
            r.elements_per_thread != 1 + i / 400 || r.grid.kind != KF_GRID_BLOCKS || r.grid.value != 1 + i % 400 ||
            r.block_size != 256 || r.passes != KF_PASSES_MULTI_KERNEL)
            bad = i;
    }
    if (bad >= 0) {
        char label[256];
        family_of(&s->variants[bad])->label(&s->variants[bad], label, sizeof label);
        ck_abort_msg("variant %d is %s", bad, label);
    }
}

/* Case i must be variant i % per_shape at the (i / per_shape)-th n of ns. */
static void check_large_cases(const kf_space *s, int per_shape, const int64_t *ns, int nns)
{
    ck_assert_int_eq(s->ncases, per_shape * nns);
    int bad = -1;
    for (int i = 0; i < s->ncases && bad < 0; i++)
        if (s->cases[i].variant != i % per_shape || s->cases[i].shape.d[0] != ns[i / per_shape] ||
            s->cases[i].shape.d[1] != 0 || s->cases[i].shape.d[2] != 0)
            bad = i;
    ck_assert_msg(bad < 0, "case %d: variant %d, n=%lld", bad, bad < 0 ? 0 : s->cases[bad].variant,
                  bad < 0 ? 0LL : (long long)s->cases[bad].shape.d[0]);
}

START_TEST(large_space_expands_fast)
{
    char *text = large_config("{\"n\": 4096, ", "}");
    kf_config c;
    load_text(text, &c);
    free(text);
    kf_space s;
    double t0 = kf_now();
    int rc = space_expand(&c, NULL, &s, err, sizeof err);
    double dt = kf_now() - t0;
    config_free(&c);
    ck_assert_msg(rc == 0, "%s", err);
    check_large_variants(&s);
    ck_assert_int_eq(s.ncases, 102400);
    check_large_cases(&s, 256 * 400, (int64_t[]){4096}, 1);
    space_free(&s);
    ck_assert_msg(dt < time_limit(2.0), "expanding 102400 variants took %.3f s (duplicate detection is not O(1)?)",
                  dt);
}
END_TEST

/* The same space three times over (the same unnamed variants from three
 * specs, one with the grid list reversed, one adding a second n): each
 * variant and each (variant, n) is kept once, still fast. */
START_TEST(large_space_duplicates_dropped_fast)
{
    strbuf grid_rev = {0};
    for (int g = 400; g >= 1; g--)
        sb_printf(&grid_rev, "%s%d", g < 400 ? ", " : "", g);
    strbuf tail = {0};
    sb_printf(&tail, "}, \"variants\": [{}, {\"grid\": [%s]}, {\"n\": [8192, 4096, \"2^12\"]}]}", grid_rev.s);
    sb_free(&grid_rev);
    char *text = large_config("{\"defaults\": {\"n\": 4096, ", tail.s);
    sb_free(&tail);
    kf_config c;
    load_text(text, &c);
    free(text);
    ck_assert_int_eq(c.nspecs, 3);
    kf_space s;
    double t0 = kf_now();
    int rc = space_expand(&c, NULL, &s, err, sizeof err);
    double dt = kf_now() - t0;
    config_free(&c);
    ck_assert_msg(rc == 0, "%s", err);
    /* the variants keep the order of their first occurrence (the first spec) */
    check_large_variants(&s);
    /* every variant at 4096, then every variant at 8192 */
    ck_assert_int_eq(s.ncases, 204800);
    check_large_cases(&s, 256 * 400, (int64_t[]){4096, 8192}, 2);
    space_free(&s);
    ck_assert_msg(dt < time_limit(2.0), "expanding 3 x 102400 combinations took %.3f s", dt);
}
END_TEST

START_TEST(device_limits)
{
    kf_device dev;
    memset(&dev, 0, sizeof dev);
    dev.max_threads_per_block = 512;
    dev.sms = 132;
    kf_space s;
    expand_ok("{\"block_size\": [256, 512, 1024], \"n\": 1}", &dev, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.variants[1].p[RP_BLOCK_SIZE], 512);
    ck_assert_int_eq(s.nskipped, 1);
    ck_contains(s.skipped[0], "block_size 1024: the kernels need a power of two from 32 to 512");
    space_free(&s);

    /* without a device, 1024 is the limit */
    expand_ok("{\"block_size\": [256, 512, 1024], \"n\": 1}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 3);
    space_free(&s);

    const char *m = expand_bad("{\"block_size\": 1024, \"n\": 1}", &dev);
    ck_contains(m, "cannot run: block_size 1024");
    ck_contains(m, "from 32 to 512");

    /* a device that reports 0 falls back to 1024 */
    dev.max_threads_per_block = 0;
    expand_ok("{\"block_size\": 1024, \"n\": 1}", &dev, &s);
    ck_assert_int_eq(s.nvariants, 1);
    space_free(&s);

    /* tune keeps the space expanded without a device when space_same_for_device
     * says so: a device of 1024 threads a block, whatever else it has, gives the
     * device-less space; one of 512 does not */
    dev.max_threads_per_block = 512;
    ck_assert(!space_same_for_device(&dev));
    memset(&dev, 0, sizeof dev);
    dev.max_threads_per_block = 1024;
    dev.sms = 2;
    dev.cc_major = 5;
    dev.max_smem_per_block = 16 * 1024;
    dev.max_smem_per_sm = 16 * 1024;
    ck_assert(space_same_for_device(&dev) && space_same_for_device(NULL));
    const char *text = "{\"block_size\": [16, 32, 256, 1024], \"elements_per_thread\": [1, 256], "
                       "\"vector_width\": [1, 8], \"n\": [1000, 4096]}";
    kf_space a, b;
    expand_ok(text, NULL, &a);
    expand_ok(text, &dev, &b);
    ck_assert_int_eq(a.nvariants, b.nvariants);
    ck_assert_int_eq(a.ncases, b.ncases);
    ck_assert_int_eq(a.nskipped, b.nskipped);
    ck_assert(a.nskipped > 0 && a.nvariants > 0);
    ck_assert(memcmp(a.variants, b.variants, sizeof *a.variants * (size_t)a.nvariants) == 0);
    ck_assert(memcmp(a.cases, b.cases, sizeof *a.cases * (size_t)a.ncases) == 0);
    for (int i = 0; i < a.nskipped; i++)
        ck_assert_str_eq(a.skipped[i], b.skipped[i]);
    ck_assert_int_eq(a.nlisted, a.nskipped);
    space_free(&b);

    /* tune's expansion lists the first skipped combination only: the same
     * variants, cases and count */
    kf_config c;
    load_text(text, &c);
    ck_assert_msg(space_expand_counting(&c, &dev, &b, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(a.nvariants, b.nvariants);
    ck_assert_int_eq(a.ncases, b.ncases);
    ck_assert_int_eq(a.nskipped, b.nskipped);
    ck_assert_int_eq(b.nlisted, 1);
    ck_assert_str_eq(a.skipped[0], b.skipped[0]);
    ck_assert(memcmp(a.variants, b.variants, sizeof *a.variants * (size_t)a.nvariants) == 0);
    ck_assert(memcmp(a.cases, b.cases, sizeof *a.cases * (size_t)a.ncases) == 0);
    config_free(&c);
    space_free(&a);
    space_free(&b);
}
END_TEST

// ---------------------------------------------------------------------------
// rules

/* The rule tests build variants field by field as reduce_v (reduce.h) and
 * check them through the generic space_check_variant. */
static kf_variant enc(const reduce_v *r)
{
    kf_variant v;
    reduce_encode(r, "", &v);
    return v;
}

/* The family's resolve ("auto" choices), through space_resolve. */
static void resolve(reduce_v *r)
{
    kf_variant v = enc(r);
    space_resolve(&v);
    reduce_decode(&v, r);
}

/* A variant that passes every rule; each test changes it. */
static reduce_v base(void)
{
    reduce_v v;
    reduce_defaults(&v);
    resolve(&v);
    return v;
}

static void accept(const reduce_v *r, const kf_device *dev)
{
    char why[512] = "";
    char label[256];
    kf_variant v = enc(r);
    family_of(&v)->label(&v, label, sizeof label);
    ck_assert_msg(space_check_variant(&v, dev, why, sizeof why) == 0, "%s %s/%s rejected: %s", label,
                  kf_dtype_names[r->dtype], kf_op_names[r->op], why);
}

static void reject(const reduce_v *r, const kf_device *dev, const char *reason)
{
    char why[512] = "";
    char label[256];
    kf_variant v = enc(r);
    family_of(&v)->label(&v, label, sizeof label);
    ck_assert_msg(space_check_variant(&v, dev, why, sizeof why) != 0, "%s %s/%s accepted (expected: %s)", label,
                  kf_dtype_names[r->dtype], kf_op_names[r->op], reason);
    ck_assert_msg(strstr(why, reason) != NULL, "%s: expected \"%s\" in \"%s\"", label, reason, why);
}

START_TEST(rule_bitwise_needs_integer)
{
    reduce_v v = base();
    for (int op = KF_OP_AND; op <= KF_OP_XOR; op++) {
        v.op = (kf_op)op;
        for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
            v.dtype = (kf_dtype)t;
            if (kf_dtype_is_float(v.dtype))
                reject(&v, NULL, "is bitwise: it needs an integer dtype");
            else
                accept(&v, NULL);
        }
    }
    v.op = KF_OP_PROD;
    v.dtype = KF_FLOAT64;
    accept(&v, NULL);
}
END_TEST

START_TEST(rule_block_size)
{
    reduce_v v = base();
    static const int ok[] = {32, 64, 128, 256, 512, 1024};
    static const int bad[] = {0, 1, 16, 48, 96, 1000, 2048, -256};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        v.block_size = ok[i];
        accept(&v, NULL);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v.block_size = bad[i];
        reject(&v, NULL, "the kernels need a power of two from 32 to 1024");
    }
    kf_device dev;
    memset(&dev, 0, sizeof dev);
    dev.max_threads_per_block = 512;
    v.block_size = 512;
    accept(&v, &dev);
    v.block_size = 1024;
    reject(&v, &dev, "block_size 1024: the kernels need a power of two from 32 to 512");
}
END_TEST

START_TEST(rule_elements_per_thread)
{
    reduce_v v = base();
    v.elements_per_thread = 1;
    accept(&v, NULL);
    v.elements_per_thread = 256;
    accept(&v, NULL);
    v.elements_per_thread = 0;
    reject(&v, NULL, "elements_per_thread 0: expected 1..256");
    v.elements_per_thread = 257;
    reject(&v, NULL, "elements_per_thread 257");
}
END_TEST

START_TEST(rule_vector_width)
{
    reduce_v v = base();
    for (int w = 0; w <= 8; w++) {
        v.vector_width = w;
        if (w == 1 || w == 2 || w == 4)
            accept(&v, NULL);
        else if (w == 8) /* 16-byte loads at most: 2-byte dtypes only */
            reject(&v, NULL, "vector_width 8 needs a 2-byte dtype");
        else
            reject(&v, NULL, "expected 1, 2, 4 or 8");
    }
    v.vector_width = 8;
    v.dtype = KF_BFLOAT16;
    v.acc_dtype = KF_ACCT_FLOAT32;
    accept(&v, NULL);
    v.dtype = KF_FLOAT16;
    accept(&v, NULL);
}
END_TEST

START_TEST(rule_warp_intrinsic)
{
    reduce_v v = base();
    v.algorithm = KF_ALG_WARP_INTRINSIC;
    v.unroll = KF_UNROLL_FULL;
    v.dtype = KF_INT32;
    accept(&v, NULL);
    v.dtype = KF_UINT32;
    v.op = KF_OP_XOR;
    accept(&v, NULL);
    v.op = KF_OP_SUM;
    v.dtype = KF_INT64;
    reject(&v, NULL, "algorithm warp_intrinsic (__reduce_*_sync) needs a 32-bit integer dtype (int32 or uint32), got int64");
    v.dtype = KF_FLOAT32;
    reject(&v, NULL, "got float32");
    v.dtype = KF_FLOAT64;
    reject(&v, NULL, "got float64");
    v.dtype = KF_INT32;
    v.op = KF_OP_PROD;
    reject(&v, NULL, "algorithm warp_intrinsic: there is no __reduce_*_sync for prod");

    /* the sequential tree's last warp by intrinsic: the same two rules */
    v = base();
    v.unroll = KF_UNROLL_LAST_WARP;
    v.warp_reduce = KF_WARP_INTRINSIC;
    v.dtype = KF_INT32;
    accept(&v, NULL);
    v.dtype = KF_FLOAT32;
    reject(&v, NULL, "warp_reduce intrinsic (__reduce_*_sync) needs a 32-bit integer dtype");
    v.dtype = KF_UINT32;
    v.op = KF_OP_PROD;
    reject(&v, NULL, "warp_reduce intrinsic: there is no __reduce_*_sync for prod");
}
END_TEST

START_TEST(rule_warp_reduce_needs_unrolled_sequential)
{
    reduce_v v = base();
    v.warp_reduce = KF_WARP_SHUFFLE;
    v.unroll = KF_UNROLL_LAST_WARP;
    accept(&v, NULL);
    v.unroll = KF_UNROLL_FULL;
    accept(&v, NULL);
    v.dtype = KF_FLOAT64;
    accept(&v, NULL);
    v.unroll = KF_UNROLL_NONE;
    reject(&v, NULL, "warp_reduce shuffle applies to the last warp of algorithm sequential with unroll last_warp or full");
    v.unroll = KF_UNROLL_FULL;
    v.algorithm = KF_ALG_SHUFFLE;
    reject(&v, NULL, "got algorithm shuffle, unroll full");
    v.algorithm = KF_ALG_INTERLEAVED_DIVERGENT;
    reject(&v, NULL, "warp_reduce shuffle applies");
}
END_TEST

START_TEST(rule_shared_accumulator_needs_tree)
{
    reduce_v v = base();
    v.accumulator = KF_ACC_SHARED;
    static const kf_algorithm trees[] = {KF_ALG_INTERLEAVED_DIVERGENT, KF_ALG_INTERLEAVED_STRIDED,
                                         KF_ALG_SEQUENTIAL};
    for (int i = 0; i < 3; i++) {
        v.algorithm = trees[i];
        accept(&v, NULL);
    }
    v.algorithm = KF_ALG_SHUFFLE;
    reject(&v, NULL, "accumulator shared needs one shared slot per thread");
    v.algorithm = KF_ALG_ATOMIC_SHARED;
    v.passes = KF_PASSES_ATOMIC;
    reject(&v, NULL, "got atomic_shared");
}
END_TEST

START_TEST(rule_atomic_has_no_tree)
{
    reduce_v v = base();
    v.algorithm = KF_ALG_ATOMIC_SHARED;
    v.passes = KF_PASSES_ATOMIC;
    accept(&v, NULL);
    v.unroll = KF_UNROLL_FULL;
    reject(&v, NULL, "algorithm atomic_shared has no tree to unroll: unroll must be none, got full");
    v.algorithm = KF_ALG_ATOMIC_GLOBAL;
    v.unroll = KF_UNROLL_LAST_WARP;
    reject(&v, NULL, "algorithm atomic_global has no tree to unroll");
    v.unroll = KF_UNROLL_NONE;
    accept(&v, NULL);
}
END_TEST

START_TEST(rule_last_warp_sequential_only)
{
    reduce_v v = base();
    v.unroll = KF_UNROLL_LAST_WARP;
    accept(&v, NULL);
    static const kf_algorithm others[] = {KF_ALG_INTERLEAVED_DIVERGENT, KF_ALG_INTERLEAVED_STRIDED,
                                          KF_ALG_SHUFFLE, KF_ALG_WARP_INTRINSIC};
    v.dtype = KF_INT32;
    for (int i = 0; i < 4; i++) {
        v.algorithm = others[i];
        v.unroll = KF_UNROLL_LAST_WARP;
        reject(&v, NULL, "unroll last_warp applies to algorithm sequential only");
        v.unroll = KF_UNROLL_FULL;
        accept(&v, NULL);
        v.unroll = KF_UNROLL_NONE;
        accept(&v, NULL);
    }
}
END_TEST

START_TEST(rule_atomic_global_passes)
{
    reduce_v v = base();
    v.algorithm = KF_ALG_ATOMIC_GLOBAL;
    v.passes = KF_PASSES_ATOMIC;
    accept(&v, NULL);
    v.passes = KF_PASSES_MULTI_KERNEL;
    reject(&v, NULL, "passes must be atomic, got multi_kernel");
    v.passes = KF_PASSES_LAST_BLOCK;
    reject(&v, NULL, "passes must be atomic, got last_block");
    /* atomic_shared combines per block: every passes choice works */
    v.algorithm = KF_ALG_ATOMIC_SHARED;
    for (int p = KF_PASSES_MULTI_KERNEL; p < KF_PASSES_COUNT; p++) {
        v.passes = (kf_passes)p;
        accept(&v, NULL);
    }
}
END_TEST

START_TEST(rule_grid_ranges)
{
    reduce_v v = base();
    v.grid = (kf_grid){KF_GRID_BLOCKS, 1};
    accept(&v, NULL);
    v.grid.value = 2147483647LL;
    accept(&v, NULL);
    v.grid.value = 0;
    reject(&v, NULL, "grid 0: expected 1..2147483647 blocks");
    v.grid.value = 2147483648LL;
    reject(&v, NULL, "expected 1..2147483647 blocks");
    v.grid = (kf_grid){KF_GRID_PER_SM, 64};
    accept(&v, NULL);
    v.grid.value = 65;
    reject(&v, NULL, "grid: expected 1..64 per SM, got 65");
    v.grid = (kf_grid){KF_GRID_WAVES, 1};
    accept(&v, NULL);
    v.grid.value = 0;
    reject(&v, NULL, "expected 1..64 per SM, got 0");
    v.grid = (kf_grid){KF_GRID_AUTO, 0};
    accept(&v, NULL);
}
END_TEST

START_TEST(rule_shared_memory)
{
    /* Only reachable on a device that allows bigger blocks than 1024
     * threads: the tree needs block_size elements. */
    kf_device dev;
    memset(&dev, 0, sizeof dev);
    dev.max_threads_per_block = 8192;
    reduce_v v = base();
    v.dtype = KF_FLOAT64;
    v.block_size = 4096;    /* 32 KiB + 16 */
    accept(&v, &dev);
    v.block_size = 8192;    /* 64 KiB + 16 */
    reject(&v, &dev, "needs 65552 bytes of shared memory per block, the limit is 49152");
    /* one slot per warp: fine at any size */
    v.algorithm = KF_ALG_SHUFFLE;
    v.unroll = KF_UNROLL_FULL;
    accept(&v, &dev);
}
END_TEST

START_TEST(resolve_passes)
{
    for (int a = 0; a < KF_ALG_COUNT; a++) {
        reduce_v v;
        reduce_defaults(&v);
        v.algorithm = (kf_algorithm)a;
        ck_assert_int_eq(v.passes, KF_PASSES_AUTO);
        resolve(&v);
        kf_passes want = (a == KF_ALG_ATOMIC_GLOBAL || a == KF_ALG_ATOMIC_SHARED) ? KF_PASSES_ATOMIC
                                                                                  : KF_PASSES_MULTI_KERNEL;
        ck_assert_int_eq(v.passes, want);
        /* explicit choices are kept */
        for (int p = KF_PASSES_MULTI_KERNEL; p < KF_PASSES_COUNT; p++) {
            v.passes = (kf_passes)p;
            resolve(&v);
            ck_assert_int_eq(v.passes, p);
        }
    }
    /* expansion resolves */
    kf_space s;
    expand_ok("{\"algorithm\": [\"atomic_shared\", \"shuffle\"], \"n\": 1}", NULL, &s);
    ck_assert_int_eq(s.nvariants, 2);
    ck_assert_int_eq(s.variants[0].p[RP_PASSES], KF_PASSES_ATOMIC);
    ck_assert_int_eq(s.variants[1].p[RP_PASSES], KF_PASSES_MULTI_KERNEL);
    space_free(&s);
}
END_TEST

/* Every variant space_check_variant accepts is also accepted with a
 * resolved passes; nothing leaves AUTO in an expanded space. */
START_TEST(expanded_never_auto)
{
    kf_space s;
    expand_ok("{\"algorithm\": [\"atomic_global\", \"atomic_shared\", \"interleaved_divergent\","
              " \"interleaved_strided\", \"sequential\", \"shuffle\", \"warp_intrinsic\"],"
              " \"dtype\": [\"int32\", \"float32\"], \"unroll\": [\"none\", \"full\"],"
              " \"passes\": [\"auto\", \"atomic\", \"last_block\"], \"n\": 1}",
              NULL, &s);
    ck_assert_int_gt(s.nvariants, 10);
    for (int i = 0; i < s.nvariants; i++) {
        ck_assert_int_ne(s.variants[i].p[RP_PASSES], KF_PASSES_AUTO);
        char why[256];
        ck_assert(space_check_variant(&s.variants[i], NULL, why, sizeof why) == 0);
    }
    space_free(&s);
}
END_TEST

// ---------------------------------------------------------------------------
// shipped configs

START_TEST(shipped_configs_expand)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/configs", srcdir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    kf_device h100;
    memset(&h100, 0, sizeof h100);
    h100.max_threads_per_block = 1024;
    h100.sms = 132;
    h100.cc_major = 9;
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kf_config c;
        ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
        for (int k = 0; k < 2; k++) {
            kf_space s;
            ck_assert_msg(space_expand(&c, k ? &h100 : NULL, &s, err, sizeof err) == 0, "%s", err);
            ck_assert_int_gt(s.nvariants, 0);
            ck_assert_int_gt(s.ncases, 0);
            for (int i = 1; i < s.ncases; i++) {
                /* ordered by shape (elements, then dimension by dimension), then variant */
                int cmp = space_cmp_shape(&s.variants[s.cases[i].variant], &s.cases[i - 1].shape, &s.cases[i].shape);
                ck_assert(cmp < 0 || (cmp == 0 && s.cases[i - 1].variant < s.cases[i].variant));
            }
            space_free(&s);
        }
        config_free(&c);
        files++;
    }
    closedir(d);
    ck_assert_int_ge(files, 3);
}
END_TEST

START_TEST(seeds_config_contents)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/seeds.json", srcdir());
    kf_config c;
    ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
    kf_space s;
    ck_assert_msg(space_expand(&c, NULL, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.nvariants, 14);
    ck_assert_int_eq(s.ncases, 28);
    ck_assert_int_eq(s.nskipped, 0);
    ck_assert_str_eq(s.variants[0].name, "reduce0");
    ck_assert_int_eq(s.variants[0].p[RP_ALGORITHM], KF_ALG_INTERLEAVED_DIVERGENT);
    ck_assert_str_eq(s.variants[6].name, "reduce6");
    ck_assert_int_eq(rv(&s.variants[6]).grid.kind, KF_GRID_BLOCKS);
    ck_assert_int_eq(rv(&s.variants[6]).grid.value, 2048);
    ck_assert_str_eq(s.variants[8].name, "atomic_global");
    ck_assert_int_eq(s.variants[8].p[RP_PASSES], KF_PASSES_ATOMIC);
    for (int i = 0; i < 14; i++)
        ck_assert_int_eq(s.cases[i].shape.d[0], 1 << 22);
    space_free(&s);
    config_free(&c);
}
END_TEST

static Suite *space_suite(void)
{
    Suite *s = suite_create("space");
    TCase *tc = tcase_create("expand");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, product_count_and_order);
    tcase_add_test(tc, product_several_specs);
    tcase_add_test(tc, duplicates_removed);
    tcase_add_test(tc, single_impossible_is_error);
    tcase_add_test(tc, list_skips_impossible);
    tcase_add_test(tc, constraints_without_n);
    tcase_add_test(tc, constraints_with_n);
    tcase_add_test(tc, missing_sizes);
    tcase_add_test(tc, too_many_combinations);
    tcase_add_test(tc, large_space_expands_fast);
    tcase_add_test(tc, large_space_duplicates_dropped_fast);
    tcase_add_test(tc, device_limits);
    suite_add_tcase(s, tc);

    tc = tcase_create("rules");
    tcase_add_test(tc, rule_bitwise_needs_integer);
    tcase_add_test(tc, rule_block_size);
    tcase_add_test(tc, rule_elements_per_thread);
    tcase_add_test(tc, rule_vector_width);
    tcase_add_test(tc, rule_warp_intrinsic);
    tcase_add_test(tc, rule_warp_reduce_needs_unrolled_sequential);
    tcase_add_test(tc, rule_shared_accumulator_needs_tree);
    tcase_add_test(tc, rule_atomic_has_no_tree);
    tcase_add_test(tc, rule_last_warp_sequential_only);
    tcase_add_test(tc, rule_atomic_global_passes);
    tcase_add_test(tc, rule_grid_ranges);
    tcase_add_test(tc, rule_shared_memory);
    tcase_add_test(tc, resolve_passes);
    tcase_add_test(tc, expanded_never_auto);
    suite_add_tcase(s, tc);

    tc = tcase_create("configs");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, shipped_configs_expand);
    tcase_add_test(tc, seeds_config_contents);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(space_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
