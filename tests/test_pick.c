/*
 * test_pick.c -- what "best" means (results/pick.h) and a family's key axes
 * (core/key.h): only verified cases are best, never one that failed or was
 * abandoned at another size; ties keep the first; the fastest
 * deterministic one is kept beside the fastest; database entries carry the
 * device as given.  Key axes come from the parameter table, and a family
 * without a dtype or op axis has neither role, no key options and no key
 * text.
 *
 *   make BUILD=build build/tests/test_pick && build/tests/test_pick
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "key.h"
#include "param.h"
#include "pick.h"
#include "util.h"

static pick_cand cand(const kf_variant *v, kf_status st, double ms, bool det)
{
    return (pick_cand){.v = v, .status = st, .median_ms = ms, .gbps = 1.0 / ms, .deterministic = det};
}

START_TEST(only_verified_never_failed_elsewhere)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce"));
    pick_cand c[6] = {cand(&v, KF_ST_WRONG, 0.1, true), cand(&v, KF_ST_ABANDONED, 0.2, true),
                      cand(&v, KF_ST_OK, 0.3, true),    cand(&v, KF_ST_OK, 0.0, true),
                      cand(&v, KF_ST_OK, NAN, true),    cand(&v, KF_ST_OK, 0.25, true)};
    c[5].failed_elsewhere = true;
    ck_assert_int_eq(pick_fastest(c, 6, false), 2);
    c[2].status = KF_ST_TIMEOUT;
    ck_assert_int_eq(pick_fastest(c, 6, false), -1);
    ck_assert_int_eq(pick_fastest(c, 0, false), -1);
}
END_TEST

START_TEST(ties_keep_the_first)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce"));
    pick_cand c[3] = {cand(&v, KF_ST_OK, 0.5, false), cand(&v, KF_ST_OK, 0.5, false), cand(&v, KF_ST_OK, 0.6, false)};
    ck_assert_int_eq(pick_fastest(c, 3, false), 0);
    ck_assert(pick_faster(0.4, INFINITY));
    ck_assert(!pick_faster(0.5, 0.5));
    ck_assert(pick_faster(0.49, 0.5));
}
END_TEST

START_TEST(fastest_and_fastest_deterministic)
{
    kf_variant a, b;
    variant_defaults(&a, family_find("reduce"));
    b = a;
    snprintf(a.name, sizeof a.name, "a");
    b.p[param_find(family_of(&b)->params, family_of(&b)->nparams, "block_size")] = 512;
    pick_cand c[3] = {cand(&b, KF_ST_OK, 0.7, true), cand(&a, KF_ST_OK, 0.5, false), cand(&a, KF_ST_OK, 0.6, true)};
    kf_device dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "gpu");
    dev.peak_gbps = 3352.3;
    tunedb_entry e[2];
    ck_assert_int_eq(pick_size_entries(c, 3, &dev, "2026-01-01T00:00:00Z", "how", e), 2);
    ck_assert_double_eq(e[0].median_ms, 0.5);
    ck_assert(!e[0].deterministic);
    ck_assert_double_eq(e[1].median_ms, 0.6);
    ck_assert(e[1].deterministic);
    ck_assert_str_eq(e[0].v.name, ""); /* a label of the space, not of the variant */
    ck_assert_double_eq(e[0].dev.peak_gbps, 3352.3);
    ck_assert_str_eq(e[1].how, "how");
    /* the fastest is deterministic: one entry */
    c[1].deterministic = true;
    ck_assert_int_eq(pick_size_entries(c, 3, &dev, "d", "h", e), 1);
    /* a database entry as a candidate */
    pick_cand pc = pick_cand_of_entry(&e[0]);
    ck_assert(pick_eligible(&pc, true));
    e[0].deterministic = false;
    pc = pick_cand_of_entry(&e[0]);
    ck_assert(pick_eligible(&pc, false) && !pick_eligible(&pc, true));
}
END_TEST

START_TEST(key_axes_of_reduce)
{
    kf_variant v;
    int fam = family_find("reduce");
    variant_defaults(&v, fam);
    const kf_family *f = kf_families[fam];
    ck_assert_int_ge(key_dtype_axis(f), 0);
    ck_assert_int_ge(key_op_axis(f), 0);
    ck_assert_int_eq(key_dtype(&v), KF_FLOAT32);
    strbuf b = {0};
    key_describe(&b, &v);
    ck_assert_str_eq(b.s, "reduce float32 sum");
    sb_free(&b);
    key_set_args(&b, &v);
    ck_assert_str_eq(b.s, " --set dtype=float32 --set op=sum");
    sb_free(&b);
    key_text(&b, &v, "_");
    ck_assert_str_eq(b.s, "_float32_sum");
    sb_free(&b);
    key_options(&b, f);
    ck_assert_str_eq(b.s, "--dtype and --op"); /* acc_dtype is optional */
    sb_free(&b);
    kf_variant w = v;
    w.p[key_op_axis(f)] = KF_OP_MAX;
    ck_assert(!key_match(&v, &w, NULL));
    bool given[KF_MAX_PARAMS] = {false};
    given[key_dtype_axis(f)] = true;
    ck_assert(key_match(&v, &w, given));
    char buf[64];
    key_param_text(&v, "op", buf, sizeof buf);
    ck_assert_str_eq(buf, "sum");
    key_param_text(&v, "no_such_axis", buf, sizeof buf);
    ck_assert_str_eq(buf, "");
}
END_TEST

/* A family whose table has neither a dtype nor an op axis: no roles, no
 * key options. */
START_TEST(a_family_without_dtype_or_op)
{
    static const char *const kinds[] = {"scalar", "vector"};
    static const kf_param params[] = {
        {.name = "tile", .kind = KF_PK_INT, .lo = 8, .hi = 64, .def = 16, .key = false, .doc = "tile"},
        {.name = "alpha_kind", .kind = KF_PK_ENUM, .names = kinds, .count = 2,
         .key = true, .doc = "what is computed"},
    };
    kf_family f = {.name = "saxpy2d", .params = params, .nparams = 1};
    ck_assert_int_eq(key_dtype_axis(&f), -1);
    ck_assert_int_eq(key_op_axis(&f), -1);
    strbuf b = {0};
    key_options(&b, &f);
    ck_assert_ptr_null(b.s);
    f.nparams = 2;
    key_options(&b, &f);
    ck_assert_str_eq(b.s, "--alpha-kind"); /* options spell the axis alpha_kind with a dash */
    sb_free(&b);
}
END_TEST

static Suite *pick_suite(void)
{
    Suite *s = suite_create("pick");
    TCase *t = tcase_create("best");
    tcase_add_test(t, only_verified_never_failed_elsewhere);
    tcase_add_test(t, ties_keep_the_first);
    tcase_add_test(t, fastest_and_fastest_deterministic);
    suite_add_tcase(s, t);
    TCase *k = tcase_create("key");
    tcase_add_test(k, key_axes_of_reduce);
    tcase_add_test(k, a_family_without_dtype_or_op);
    suite_add_tcase(s, k);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(pick_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
