/*
 * test_rows.c -- the reduce_rows family without a GPU: its table and rules,
 * the launch plan of every mapping, the per-row reference and comparison,
 * and the workspace it initialises.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "space.h"
#include "time_limit.h"
#include "util.h"
#include "reduction.h"
#include "rows.h"
#include "verify.h"

static const kf_family *fam(void) { return kf_families[family_find("reduce_rows")]; }

static kf_variant rows_variant(const char *map, int group, int bs)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce_rows"));
    const kf_family *f = fam();
    int pm = param_find(f->params, f->nparams, "map");
    v.p[pm] = kf_lookup(f->params[pm].names, f->params[pm].count, map);
    v.p[param_find(f->params, f->nparams, "group")] = group;
    v.p[param_find(f->params, f->nparams, "block_size")] = bs;
    return v;
}

static void set(kf_variant *v, const char *name, int64_t x)
{
    const kf_family *f = fam();
    int i = param_find(f->params, f->nparams, name);
    ck_assert_int_ge(i, 0);
    v->p[i] = x;
}

START_TEST(registered)
{
    ck_assert_int_ge(family_find("reduce_rows"), 0);
    ck_assert_str_eq(fam()->entries[0], "kf_reduce_rows");
    ck_assert_int_eq(fam()->nsizes, 3);
    ck_assert_str_eq(fam()->sizes[2].name, "row_stride");
    ck_assert(fam()->sizes[2].optional);
}
END_TEST

START_TEST(rules)
{
    char why[256];
    kf_variant v = rows_variant("group", 1, 256);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "map group needs group"));
    v = rows_variant("block", 4, 256);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "applies to map group only"));
    v = rows_variant("thread", 1, 48);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    v = rows_variant("block", 1, 256);
    set(&v, "splits", 4);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "map split only"));
    v = rows_variant("split", 1, 256);
    set(&v, "splits", 4);
    ck_assert_int_eq(space_check_variant(&v, NULL, why, sizeof why), 0);
    set(&v, "rows_per_group", 2);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "map split takes rows_per_group 1"));
    /* map split takes pipeline next_tile (the next tile of a part) */
    set(&v, "rows_per_group", 1);
    set(&v, "pipeline", 1);
    ck_assert_int_eq(space_check_variant(&v, NULL, why, sizeof why), 0);
    v = rows_variant("group", 32, 256);
    set(&v, "elements_per_thread", 8);
    set(&v, "rows_per_group", 4);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "at most 16"));
    v = rows_variant("block", 1, 256);
    set(&v, "op", KF_OP_XOR);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "bitwise"));
}
END_TEST

/* Every axis that changes the kernel shows in the label: variants that
 * differ only in min_blocks or pipeline are told apart in tables, compare
 * and the database's listings. */
START_TEST(labels)
{
    kf_variant v = rows_variant("split", 1, 512);
    set(&v, "splits", 32);
    set(&v, "elements_per_thread", 8);
    char a[256], b[256], c[256];
    fam()->label(&v, a, sizeof a);
    set(&v, "min_blocks", 3);
    fam()->label(&v, b, sizeof b);
    set(&v, "pipeline", 1);
    fam()->label(&v, c, sizeof c);
    ck_assert_str_eq(a, "split32/last_block/bs512/ept8/rpg1/v4/auto");
    ck_assert_str_eq(b, "split32/last_block/bs512/ept8/rpg1/v4/auto/mb3");
    ck_assert_str_eq(c, "split32/last_block/bs512/ept8/rpg1/v4/auto/pipe/mb3");
}
END_TEST

START_TEST(shapes)
{
    char why[256];
    kf_variant v = rows_variant("block", 1, 256);
    kf_shape s = {{10, 100, 0}};
    ck_assert_int_eq(fam()->check_shape(&v, &s, why, sizeof why), 0);
    ck_assert_int_eq(s.d[2], 100);   /* row_stride 0: cols */
    kf_shape bad = {{10, 100, 99}};
    ck_assert_int_ne(fam()->check_shape(&v, &bad, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "overlap"));
    kf_shape pad = {{10, 100, 103}};
    ck_assert_int_eq(fam()->check_shape(&v, &pad, why, sizeof why), 0);
    ck_assert_int_eq(reduction_of(&v)->input_elems(&pad), 9 * 103 + 100);
    ck_assert_int_eq(reduction_of(&v)->outputs(&pad), 10);
    ck_assert(fam()->bytes(&v, &pad) == 10.0 * 100 * 4);
    char t[64];
    shape_short(fam(), &s, t, sizeof t);
    ck_assert_str_eq(t, "10x100");
    shape_short(fam(), &pad, t, sizeof t);
    ck_assert_str_eq(t, "10x100/103");
}
END_TEST

START_TEST(plans)
{
    kf_plan_info p;
    kf_shape s = {{70001, 33, 33}};
    kf_variant v = rows_variant("thread", 1, 128);
    set(&v, "rows_per_group", 2);
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, (70001 + 255) / 256);
    ck_assert_int_eq(p.workspace_bytes, 0);
    ck_assert(p.deterministic);
    v = rows_variant("group", 8, 256);
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, (70001 + 31) / 32);
    set(&v, "grid", kf_grid_encode((kf_grid){KF_GRID_WAVES, 2}));
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, 2 * 8 * 132);
    v = rows_variant("block", 1, 256);
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, 70001);
    /* split, atomic: rows partials (identity) and tickets; float sums are
     * not deterministic, max is */
    kf_shape few = {{64, 1 << 20, 1 << 20}};
    v = rows_variant("split", 1, 512);
    set(&v, "splits", 32);
    set(&v, "split_combine", 0);
    ck_assert_int_eq(fam()->plan(&v, &few, 132, 4, &p), 0);
    ck_assert_int_eq(p.blocks, 64 * 32);
    ck_assert(!p.deterministic);
    ck_assert_int_ge(p.workspace_bytes, 64 * 4 + 64 * 4);
    unsigned char *ws = malloc((size_t)p.workspace_bytes);
    reduction_of(&v)->workspace_init(&v, &p, ws);
    ck_assert_int_eq(ws[0], 0);
    set(&v, "op", KF_OP_MAX);
    ck_assert_int_eq(fam()->plan(&v, &few, 132, 4, &p), 0);
    ck_assert(p.deterministic);
    free(ws);
    /* split, last block: rows + grid - 1 partials; deterministic */
    set(&v, "op", KF_OP_SUM);
    set(&v, "split_combine", 1);
    set(&v, "grid", kf_grid_encode((kf_grid){KF_GRID_BLOCKS, 100}));
    ck_assert_int_eq(fam()->plan(&v, &few, 132, 4, &p), 0);
    ck_assert_int_eq(p.blocks, 100);
    ck_assert(p.deterministic);
    ck_assert_int_ge(p.workspace_bytes, 64 * 4 + (64 + 99) * 4);
}
END_TEST

/* Map tile: tiles of whole rows, floor(te / cols) rounded down to the
 * vector width; the thread-per-row fallback (block_size rows) for padded
 * rows and rows too long for a tile; its rules. */
START_TEST(tile_plans)
{
    char why[256];
    kf_plan_info p;
    kf_variant v = rows_variant("tile", 1, 256);
    set(&v, "elements_per_thread", 4);
    set(&v, "vector_width", 4); /* te = 4096 */
    ck_assert_int_eq(space_check_variant(&v, NULL, why, sizeof why), 0);
    kf_shape s = {{1 << 24, 2, 2}};
    ck_assert_int_eq(rows_tile_rows(&v, 2, 2), 2048);
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, (1 << 24) / 2048);
    ck_assert(p.deterministic);
    ck_assert_int_eq(p.workspace_bytes, 0);
    ck_assert_int_eq(rows_tile_rows(&v, 3, 3), 1364);      /* 1365 down to a multiple of 4 */
    ck_assert_int_eq(rows_tile_rows(&v, 1, 1), 4096);
    ck_assert_int_eq(rows_tile_rows(&v, 1024, 1024), 4);   /* cols x vw == te: still a tile */
    ck_assert_int_eq(rows_tile_rows(&v, 1025, 1025), 256); /* too long: a thread per row */
    ck_assert_int_eq(rows_tile_rows(&v, 3, 5), 256);       /* padded rows: a thread per row */
    kf_shape odd = {{70001, 3, 3}};
    ck_assert_int_eq(fam()->plan(&v, &odd, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, (70001 + 1363) / 1364);
    kf_shape pad = {{70001, 3, 4}};
    ck_assert_int_eq(fam()->plan(&v, &pad, 132, 8, &p), 0);
    ck_assert_int_eq(p.blocks, (70001 + 255) / 256);
    set(&v, "grid", kf_grid_encode((kf_grid){KF_GRID_WAVES, 1}));
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 4, &p), 0);
    ck_assert_int_eq(p.blocks, 4 * 132);
    /* rules: rows_per_group 1, no block_reduce, the tile within 48 KiB */
    set(&v, "rows_per_group", 2);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "map tile takes rows_per_group 1"));
    set(&v, "rows_per_group", 1);
    set(&v, "block_reduce", 1);
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    set(&v, "block_reduce", 0);
    set(&v, "block_size", 1024);
    set(&v, "elements_per_thread", 4); /* 16384 floats: 66 KiB */
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
    ck_assert_ptr_nonnull(strstr(why, "48 KiB"));
    set(&v, "elements_per_thread", 2); /* 8192 floats: 33 KiB */
    ck_assert_int_eq(space_check_variant(&v, NULL, why, sizeof why), 0);
    set(&v, "dtype", KF_FLOAT64);      /* 8192 doubles: 66 KiB */
    ck_assert_int_ne(space_check_variant(&v, NULL, why, sizeof why), 0);
}
END_TEST

/* The per-row reference over a padded matrix, and the comparison that
 * names the wrong rows. */
START_TEST(reference_and_compare)
{
    kf_variant v = rows_variant("block", 1, 256);
    kf_shape s = {{5, 7, 9}};
    kf_plan_info p;
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    int64_t n = reduction_of(&v)->input_elems(&s);
    float *in = malloc(sizeof *in * (size_t)n), ref[5], got[5];
    double aux[5];
    verify_fill(KF_FLOAT32, KF_OP_SUM, 42, in, n);
    reduction_of(&v)->reference(&v, &s, in, ref, aux);
    for (int r = 0; r < 5; r++) {
        double sum = 0, abs = 0;
        for (int c = 0; c < 7; c++) {
            sum += in[r * 9 + c];
            abs += fabs(in[r * 9 + c]);
        }
        ck_assert(fabs(ref[r] - sum) <= 1e-5 * abs);
        ck_assert(fabs(aux[r] - abs) <= 1e-9 * abs);
    }
    kf_result res;
    memset(&res, 0, sizeof res);
    memcpy(got, ref, sizeof got);
    ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 0);
    got[1] += 1.0f;
    got[3] = NAN;
    ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 2);
    ck_assert(res.abs_err > 0.5); /* the first wrong row is shown */
    free(in);
}
END_TEST

/* reference_at (what a planted fault's model recomputes when it changes
 * one element) gives the whole reference's bits, for an element in a row
 * and for one in the padding between cols and row_stride. */
START_TEST(reference_at_one_element)
{
    kf_variant v = rows_variant("block", 1, 256);
    kf_shape s = {{5, 7, 9}};
    int64_t n = reduction_of(&v)->input_elems(&s);
    float *in = malloc(sizeof *in * (size_t)n), ref[5], want[5];
    double aux[5], want_aux[5];
    ck_assert_ptr_nonnull(in);
    verify_fill(KF_FLOAT32, KF_OP_SUM, 42, in, n);
    for (int64_t i = 0; i < n; i++) {
        reduction_of(&v)->reference(&v, &s, in, ref, aux);
        float saved = in[i];
        in[i] = 0.25f + (float)i;
        reduction_of(&v)->reference(&v, &s, in, want, want_aux);
        reduction_of(&v)->reference_at(&v, &s, in, i, ref, aux);
        ck_assert_msg(memcmp(ref, want, sizeof ref) == 0 && memcmp(aux, want_aux, sizeof aux) == 0,
                      "element %lld", (long long)i);
        in[i] = saved;
    }
    free(in);
}
END_TEST

/* Integer rows are exact, with two's complement wrap-around. */
START_TEST(integer_rows_exact)
{
    kf_variant v = rows_variant("thread", 1, 128);
    set(&v, "dtype", KF_INT32);
    kf_shape s = {{3, 4, 4}};
    kf_plan_info p;
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    int32_t in[12] = {2147483647, 1, 0, 0, -5, 5, 7, -7, 1, 2, 3, 4}, ref[3], got[3];
    double aux[3];
    reduction_of(&v)->reference(&v, &s, in, ref, aux);
    ck_assert_int_eq(ref[0], (int32_t)0x80000000u);
    ck_assert_int_eq(ref[1], 0);
    ck_assert_int_eq(ref[2], 10);
    kf_result res;
    memcpy(got, ref, sizeof got);
    ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 0);
    got[2] = 11;
    ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 1);
}
END_TEST

/* Millions of rows: the comparison runs several times per case and must
 * take well under the watchdog's 30 s (it formatted every row's values and
 * took ~8 s per pass at 2^24 rows: cases timed out); the first wrong row is
 * still the one shown, whichever thread compared it. */
START_TEST(many_rows_compare)
{
    kf_variant v = rows_variant("thread", 1, 128);
    kf_shape s = {{((int64_t)1 << 22) + 3, 1, 1}};
    kf_plan_info p;
    ck_assert_int_eq(fam()->plan(&v, &s, 132, 8, &p), 0);
    int64_t rows = s.d[0];
    float *in = malloc(sizeof *in * (size_t)rows), *ref = malloc(sizeof *ref * (size_t)rows),
          *got = malloc(sizeof *got * (size_t)rows);
    double *aux = malloc(sizeof *aux * (size_t)rows);
    ck_assert(in && ref && got && aux);
    verify_fill(KF_FLOAT32, KF_OP_SUM, 42, in, rows);
    reduction_of(&v)->reference(&v, &s, in, ref, aux);
    ck_assert(ref[rows - 1] == in[rows - 1]);
    memcpy(got, ref, sizeof *got * (size_t)rows);
    kf_result res;
    memset(&res, 0, sizeof res);
    double t0 = kf_now();
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 0);
    double dt = kf_now() - t0;
    ck_assert_msg(dt < time_limit(6.0), "4 comparisons of %lld rows took %.1f s", (long long)rows, dt);
    got[3000000] += 2.0f;     /* in a later piece */
    got[70000] = 4.0f + ref[70000];
    ck_assert_int_eq(reduction_of(&v)->compare(&v, &s, &p, got, ref, aux, false, &res), 2);
    ck_assert_double_eq_tol(res.abs_err, 4.0, 1e-6);     /* row 70000, the first wrong one */
    free(in);
    free(ref);
    free(got);
    free(aux);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rows");
    TCase *t = tcase_create("rows");
    tcase_add_test(t, registered);
    tcase_add_test(t, rules);
    tcase_add_test(t, labels);
    tcase_add_test(t, shapes);
    tcase_add_test(t, plans);
    tcase_add_test(t, tile_plans);
    tcase_add_test(t, reference_and_compare);
    tcase_add_test(t, reference_at_one_element);
    tcase_add_test(t, integer_rows_exact);
    tcase_add_test(t, many_rows_compare);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
