/*
 * test_util.c -- the one hash table (kf_index, and kf_strset on it) and the
 * one time formatter (kf_fmt_ms).
 *
 *   make BUILD=build build/tests/test_util && build/tests/test_util
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool int_is(const void *ctx, size_t i, const void *key)
{
    const int *items = ctx;
    return items[i] == *(const int *)key;
}

START_TEST(index_finds_every_item_through_collisions)
{
    enum { N = 5000 };
    int *items = malloc(sizeof *items * N);
    kf_index x = {0};
    for (int i = 0; i < N; i++) {
        items[i] = i * 7;
        /* few distinct hashes: every lookup walks past others */
        ck_assert_int_eq(kf_index_add(&x, (uint64_t)(i % 13), (size_t)i), 0);
    }
    for (int i = 0; i < N; i++) {
        int key = i * 7;
        ck_assert_int_eq(kf_index_find(&x, (uint64_t)(i % 13), int_is, items, &key), i);
    }
    int absent = 3;
    ck_assert_int_eq(kf_index_find(&x, 3, int_is, items, &absent), -1);
    kf_index_free(&x);
    ck_assert_int_eq(kf_index_find(&x, 3, int_is, items, &absent), -1); /* empty again */
    free(items);
}
END_TEST

START_TEST(strset_indices_in_insertion_order)
{
    kf_strset s = {0};
    bool added;
    ck_assert_int_eq(kf_strset_add(&s, "b", &added), 0);
    ck_assert(added);
    ck_assert_int_eq(kf_strset_add(&s, "a", &added), 1);
    ck_assert_int_eq(kf_strset_add(&s, "b", &added), 0);
    ck_assert(!added);
    ck_assert_int_eq(kf_strset_find(&s, "a"), 1);
    ck_assert_int_eq(kf_strset_find(&s, "c"), -1);
    kf_strset_free(&s);
}
END_TEST

START_TEST(one_time_formatter)
{
    char b[32];
    kf_fmt_ms(b, sizeof b, 0.02941, false);
    ck_assert_str_eq(b, "29.41 us");
    kf_fmt_ms(b, sizeof b, 1.5, false);
    ck_assert_str_eq(b, "1.5 ms");
    kf_fmt_ms(b, sizeof b, 2300, false);
    ck_assert_str_eq(b, "2.3 s");
    kf_fmt_ms(b, sizeof b, INFINITY, false);
    ck_assert_str_eq(b, "-");
    kf_fmt_ms(b, sizeof b, 0.0096, true);
    ck_assert_str_eq(b, "9.600 us");
    kf_fmt_ms(b, sizeof b, 1234, true);
    ck_assert_str_eq(b, "1234 ms");
    kf_fmt_ms(b, sizeof b, 0.0099996, true);
    ck_assert_str_eq(b, "10.00 us");
    kf_fmt_ms(b, sizeof b, 0, true);
    ck_assert_str_eq(b, "-");
}
END_TEST

static Suite *util_suite(void)
{
    Suite *s = suite_create("util");
    TCase *t = tcase_create("util");
    tcase_add_test(t, index_finds_every_item_through_collisions);
    tcase_add_test(t, strset_indices_in_insertion_order);
    tcase_add_test(t, one_time_formatter);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(util_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
