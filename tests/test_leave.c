/*
 * test_leave.c -- outputs a kernel leaves alone (src/exec/leave.c): the
 * stencil pattern of issue 37 played on the host.  A "kernel" here is a C
 * function that writes the interior of a W x H float grid into an output
 * that starts from whatever the engine laid down (the poison, or an image
 * of leave_image), exactly as exec/reference.c runs the reference variant and the
 * candidates on a GPU.
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "leave.h"

enum { W = 37, H = 11, N = W * H };

typedef enum { GOOD, SKIP_ONE, WRITES_BORDER, RACY } kind;

/* One run of the stencil into out: interior points x_new = mean of five;
 * the faults: an interior point left unwritten, the border written too, an
 * interior point that differs run to run. */
static void stencil(kind k, int run, const float *in, float *out)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            bool interior = y > 0 && y < H - 1 && x > 0 && x < W - 1;
            if (!interior) {
                if (k == WRITES_BORDER && y == 0 && x == 5)
                    out[y * W + x] = in[y * W + x];
                continue;
            }
            if (k == SKIP_ONE && y == 3 && x == 7)
                continue;
            float v = (in[y * W + x] + in[y * W + x - 1] + in[y * W + x + 1] + in[(y + 1) * W + x] +
                       in[(y - 1) * W + x]) / 5.0f;
            if (k == RACY && y == 2 && x == 2)
                v += (float)run;
            out[y * W + x] = v;
        }
}

static float in[N], ref[N], got2[N], fill[N], img[N], out[N];

/* The reference's two poisoned runs and its map. */
static void reference(kind k, leave_map *m)
{
    for (int i = 0; i < N; i++)
        in[i] = (float)((i * 7919) % 101) / 8.0f;
    memset(ref, 0xFF, sizeof ref);
    stencil(k, 0, in, ref);
    memset(got2, 0x00, sizeof got2);
    stencil(k, 1, in, got2);
    ck_assert_int_eq(leave_find(ref, got2, N, sizeof(float), m), 0);
}

/* A candidate run from the image of `poison`: its outputs in out. */
static void candidate(kind k, unsigned char poison, const leave_map *m)
{
    leave_image(img, poison, fill, N, sizeof(float), m);
    memcpy(out, img, sizeof out);
    stencil(k, 0, in, out);
}

START_TEST(stencil_reference_leaves_the_border)
{
    leave_map m;
    reference(GOOD, &m);
    ck_assert_int_eq(m.racy, 0);
    ck_assert_int_eq(m.left, 2 * W + 2 * (H - 2)); /* the border */
    ck_assert_ptr_nonnull(m.mask);
    ck_assert_int_eq(m.mask[0], 1);
    ck_assert_int_eq(m.mask[W + 1], 0);
    /* the answer holds the fill (zeros, as Kernel Tuner's output starts) where the reference leaves it */
    memset(fill, 0, sizeof fill);
    leave_apply(ref, fill, N, sizeof(float), &m);
    ck_assert(ref[0] == 0.0f && ref[N - 1] == 0.0f);
    /* a correct candidate gives the answer's bits from either image */
    for (int p = 0; p < 2; p++) {
        candidate(GOOD, p ? 0x00 : 0xFF, &m);
        ck_assert(memcmp(out, ref, sizeof out) == 0);
        int64_t first;
        ck_assert_int_eq(leave_changed(out, ref, N, sizeof(float), &m, &first), 0);
        ck_assert_int_eq(first, -1);
    }
    leave_free(&m);
    ck_assert_ptr_null(m.mask);
}
END_TEST

START_TEST(fill_other_than_zeros)
{
    leave_map m;
    reference(GOOD, &m);
    for (int i = 0; i < N; i++) /* Kernel Tuner's stencil: x_new starts as a copy of x_old */
        fill[i] = in[i];
    leave_apply(ref, fill, N, sizeof(float), &m);
    ck_assert(ref[0] == in[0] && ref[W * 2] == in[W * 2]);
    candidate(GOOD, 0xFF, &m);
    ck_assert(memcmp(out, ref, sizeof out) == 0);
    leave_free(&m);
}
END_TEST

START_TEST(poison_still_catches_an_unwritten_element)
{
    leave_map m;
    reference(GOOD, &m);
    memset(fill, 0, sizeof fill);
    leave_apply(ref, fill, N, sizeof(float), &m);
    for (int p = 0; p < 2; p++) {
        candidate(SKIP_ONE, p ? 0x00 : 0xFF, &m);
        int diff = 0, at = -1;
        for (int i = 0; i < N; i++)
            if (memcmp(&out[i], &ref[i], sizeof(float)) != 0 && diff++ == 0)
                at = i;
        ck_assert_int_eq(diff, 1);
        ck_assert_int_eq(at, 3 * W + 7);
        int64_t first;
        ck_assert_int_eq(leave_changed(out, ref, N, sizeof(float), &m, &first), 0); /* not a left element */
    }
    leave_free(&m);
}
END_TEST

START_TEST(a_candidate_that_writes_a_left_element_is_named)
{
    leave_map m;
    reference(GOOD, &m);
    memset(fill, 0, sizeof fill);
    leave_apply(ref, fill, N, sizeof(float), &m);
    candidate(WRITES_BORDER, 0xFF, &m);
    int64_t first;
    ck_assert_int_eq(leave_changed(out, ref, N, sizeof(float), &m, &first), 1);
    ck_assert_int_eq(first, 5);
    leave_free(&m);
}
END_TEST

START_TEST(a_race_is_not_taken_for_a_left_element)
{
    leave_map m;
    reference(RACY, &m);
    ck_assert_int_eq(m.racy, 1);
    ck_assert_int_eq(m.first_racy, 2 * W + 2);
    ck_assert_int_eq(m.left, 2 * W + 2 * (H - 2));
    leave_free(&m);
}
END_TEST

START_TEST(a_reference_that_writes_everything_leaves_nothing)
{
    unsigned char a[64], b[64];
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = (unsigned char)i;
    leave_map m;
    ck_assert_int_eq(leave_find(a, b, 16, 4, &m), 0);
    ck_assert_int_eq(m.left, 0);
    ck_assert_int_eq(m.racy, 0);
    ck_assert_ptr_null(m.mask);
    /* an element only partly the poison is written (a race), not left */
    memset(a, 0xFF, 4);
    a[3] = 1;
    memset(b, 0x00, 4);
    ck_assert_int_eq(leave_find(a, b, 16, 4, &m), 0);
    ck_assert_int_eq(m.left, 0);
    ck_assert_int_eq(m.racy, 1);
    leave_free(&m);
}
END_TEST

static Suite *leave_suite(void)
{
    Suite *s = suite_create("leave");
    TCase *t = tcase_create("stencil");
    tcase_add_test(t, stencil_reference_leaves_the_border);
    tcase_add_test(t, fill_other_than_zeros);
    tcase_add_test(t, poison_still_catches_an_unwritten_element);
    tcase_add_test(t, a_candidate_that_writes_a_left_element_is_named);
    tcase_add_test(t, a_race_is_not_taken_for_a_left_element);
    tcase_add_test(t, a_reference_that_writes_everything_leaves_nothing);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(leave_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
