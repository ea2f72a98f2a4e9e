/*
 * test_datashare.c -- the GPU workers' shared data (issue 38, datashare.h):
 * several processes that want one key's data get it made once, and the
 * bytes each sees are the bytes data_make gives (inputs, references, aux);
 * a key that does not fit is made privately; the least recently used
 * unpinned key makes room, a pinned one never does; a maker that dies
 * mid-way leaves the key to the next process that wants it.
 * Run: build/tests/test_datashare
 */
#include "datashare.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static kf_variant reduce_sum(void)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce")); /* float32 sum */
    return v;
}

/* Whether d holds exactly what data_make makes for the key. */
static bool same_as_private(const data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    data_set p;
    if (data_make(&p, v, s, seed, exact) != 0)
        return false;
    bool same = d->set.n == p.set.n;
    for (int i = 0; same && i < p.set.n; i++) {
        const kf_buffer *b = &p.set.b[i];
        if (p.host[i])
            same = d->host[i] && memcmp(d->host[i], p.host[i], data_bytes(b)) == 0;
        if (same && p.ref[i])
            same = d->ref[i] && d->aux[i] && memcmp(d->ref[i], p.ref[i], data_bytes(b)) == 0 &&
                   memcmp(d->aux[i], p.aux[i], (size_t)b->elems * sizeof(double)) == 0;
    }
    data_free(&p);
    return same;
}

static void nap(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

START_TEST(test_made_once)
{
    unsetenv("KFORGE_SHARED_INPUTS");
    datashare_open();
    ck_assert(datashare_on());
    kf_variant v = reduce_sum();
    kf_shape s = {{3000001}};
    enum { KIDS = 4 };
    pid_t kid[KIDS];
    for (int k = 0; k < KIDS; k++) {
        kid[k] = fork();
        ck_assert_int_ge(kid[k], 0);
        if (kid[k] == 0) {
            /* every process wants the exact data, then the realistic */
            data_set d, r;
            bool ok = data_make_shared(&d, &v, &s, 7, true) == 0 && d.pin && same_as_private(&d, &v, &s, 7, true) &&
                      data_make_shared(&r, &v, &s, 7, false) == 0 && same_as_private(&r, &v, &s, 7, false);
            data_free(&d);
            data_free(&r);
            _exit(ok ? 0 : 1);
        }
    }
    for (int k = 0; k < KIDS; k++) {
        int st;
        ck_assert_int_eq(waitpid(kid[k], &st, 0), kid[k]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_int_eq(datashare_made(), 2); /* each key once, whoever made it */
    /* the parent's own request finds it made */
    data_set d;
    ck_assert_int_eq(data_make_shared(&d, &v, &s, 7, true), 0);
    ck_assert_int_eq(datashare_made(), 2);
    ck_assert(same_as_private(&d, &v, &s, 7, true));
    data_free(&d);
    datashare_close();
    ck_assert(!datashare_on());
}
END_TEST

START_TEST(test_room)
{
    setenv("KFORGE_SHARED_INPUTS", "1M", 1); /* 1 MiB */
    datashare_open();
    ck_assert(datashare_on());
    kf_variant v = reduce_sum();
    kf_shape big = {{1 << 20}}, mid = {{100000}};
    data_set d, a, c, e;
    /* 4 MiB of input: made here, as without sharing */
    ck_assert_int_eq(data_make_shared(&d, &v, &big, 1, true), 0);
    ck_assert_int_eq(d.pin, 0);
    ck_assert(same_as_private(&d, &v, &big, 1, true));
    data_free(&d);
    ck_assert_int_eq(datashare_made(), 0);
    /* 400 KB keys: A kept (pinned), B made and let go, C takes B's room */
    ck_assert_int_eq(data_make_shared(&a, &v, &mid, 1, true), 0);
    ck_assert_int_ne(a.pin, 0);
    ck_assert_int_eq(data_make_shared(&d, &v, &mid, 2, true), 0);
    ck_assert_int_ne(d.pin, 0);
    data_free(&d);
    ck_assert_int_eq(data_make_shared(&c, &v, &mid, 3, true), 0);
    ck_assert_int_ne(c.pin, 0);
    ck_assert_int_eq(datashare_made(), 3);
    ck_assert(same_as_private(&a, &v, &mid, 1, true)); /* A was not given up */
    ck_assert(same_as_private(&c, &v, &mid, 3, true));
    /* A and C pinned, no room for D: made privately */
    ck_assert_int_eq(data_make_shared(&e, &v, &mid, 4, true), 0);
    ck_assert_int_eq(e.pin, 0);
    ck_assert(same_as_private(&e, &v, &mid, 4, true));
    data_free(&e);
    /* B again: it was given up, so it is made again, the same */
    data_drop_inputs(&c);
    ck_assert_int_eq(c.pin, 0);
    ck_assert_int_eq(data_make_shared(&d, &v, &mid, 2, true), 0);
    ck_assert_int_ne(d.pin, 0);
    ck_assert_int_eq(datashare_made(), 4);
    ck_assert(same_as_private(&d, &v, &mid, 2, true));
    data_free(&d);
    data_free(&c);
    data_free(&a);
    datashare_close();
    /* KFORGE_SHARED_INPUTS=0: no sharing */
    setenv("KFORGE_SHARED_INPUTS", "0", 1);
    datashare_open();
    ck_assert(!datashare_on());
    ck_assert_int_eq(data_make_shared(&d, &v, &mid, 1, true), 0);
    ck_assert_int_eq(d.pin, 0);
    ck_assert(same_as_private(&d, &v, &mid, 1, true));
    data_free(&d);
    datashare_close();
    /* 1 (or any value but 0 and NM or NG): on, with the default room */
    setenv("KFORGE_SHARED_INPUTS", "1", 1);
    datashare_open();
    ck_assert(datashare_on());
    ck_assert_int_eq(data_make_shared(&d, &v, &big, 1, true), 0);
    ck_assert_int_ne(d.pin, 0);
    data_free(&d);
    datashare_close();
    unsetenv("KFORGE_SHARED_INPUTS");
}
END_TEST

START_TEST(test_dead_maker)
{
    unsetenv("KFORGE_SHARED_INPUTS");
    datashare_open();
    kf_variant v = reduce_sum();
    kf_shape s = {{1 << 25}}; /* 128 MiB: long enough to be killed while making it */
    pid_t kid = fork();
    ck_assert_int_ge(kid, 0);
    if (kid == 0) {
        data_set d;
        data_make_shared(&d, &v, &s, 5, true);
        _exit(0);
    }
    nap(30);
    kill(kid, SIGKILL);
    ck_assert_int_eq(waitpid(kid, NULL, 0), kid);
    /* made here now (or found made, had the maker been quicker) */
    data_set d;
    ck_assert_int_eq(data_make_shared(&d, &v, &s, 5, true), 0);
    ck_assert_int_ne(d.pin, 0);
    ck_assert_int_eq(datashare_made(), 1);
    ck_assert(same_as_private(&d, &v, &s, 5, true));
    data_free(&d);
    datashare_close();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("datashare");
    TCase *tc = tcase_create("share");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_made_once);
    tcase_add_test(tc, test_room);
    tcase_add_test(tc, test_dead_maker);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
