/* test_worker.c -- the GPU worker's start: which CUDA_VISIBLE_DEVICES shows a
 * worker only its own GPU, and the guess of how many GPUs "all" is. */
#include "worker.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_visible_entry)
{
    char out[64];
    /* no CUDA_VISIBLE_DEVICES: the ordinal itself */
    ck_assert_int_eq(worker_visible_entry(NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "0");
    ck_assert_int_eq(worker_visible_entry(NULL, 13, out, sizeof out), 0);
    ck_assert_str_eq(out, "13");
    ck_assert_int_eq(worker_visible_entry(NULL, -1, out, sizeof out), -1);
    /* the ordinal's entry of the parent's list: indices, UUIDs, MIG names */
    ck_assert_int_eq(worker_visible_entry("3,1,2", 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "3");
    ck_assert_int_eq(worker_visible_entry("3,1,2", 2, out, sizeof out), 0);
    ck_assert_str_eq(out, "2");
    ck_assert_int_eq(worker_visible_entry("3,1,2", 3, out, sizeof out), -1);
    ck_assert_int_eq(worker_visible_entry("GPU-6f21ed48-5a1f-fd6d-806b-91a1528d0011, GPU-10ca9bd3", 1, out, sizeof out),
                     0);
    ck_assert_str_eq(out, "GPU-10ca9bd3");
    ck_assert_int_eq(worker_visible_entry("MIG-a1b2", 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "MIG-a1b2");
    /* an empty list or entry shows nothing: no isolation */
    ck_assert_int_eq(worker_visible_entry("", 0, out, sizeof out), -1);
    ck_assert_int_eq(worker_visible_entry("0,,1", 1, out, sizeof out), -1);
    /* an entry that does not fit */
    ck_assert_int_eq(worker_visible_entry("0123456789", 0, out, 4), -1);
}
END_TEST

START_TEST(test_device_guess)
{
    setenv("CUDA_VISIBLE_DEVICES", "0,1,3", 1);
    setenv("KFORGE_FAKE_GPU", "5", 1);
    ck_assert_int_eq(worker_device_guess(), 3); /* CUDA_VISIBLE_DEVICES first */
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    ck_assert_int_eq(worker_device_guess(), 0); /* nothing visible: the first worker says so */
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_int_eq(worker_device_guess(), 5); /* the fake GPU's count */
    setenv("KFORGE_FAKE_GPU", "100", 1);
    ck_assert_int_eq(worker_device_guess(), 64);
    unsetenv("KFORGE_FAKE_GPU");
    int g = worker_device_guess(); /* the driver's list, 0 on a machine without it */
    ck_assert_int_ge(g, 0);
    ck_assert_int_le(g, 64);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("worker");
    TCase *tc = tcase_create("start");
    tcase_add_test(tc, test_visible_entry);
    tcase_add_test(tc, test_device_guess);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
