/*
 * test_cache_writers.c -- several writers of one cache at once (issue 38):
 * compile-only jobs on several nodes fill one cubin cache on a shared file
 * system.  kf_write_file_atomic must give each writer a temporary file of
 * its own (two nodes' processes may have the same pid: here, threads of one
 * process stand for them), and a reader must see a whole file or none.
 * Needs NVRTC's library (the cache key names its version), not a GPU.
 * Run: build/tests/test_cache_writers
 */
#include "rtc.h"
#include "util.h"

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_quiet.h"

#define WRITERS 4
#define ROUNDS 60
#define BIG (512 * 1024)

static char root[PATH_MAX];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void root_setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/kforge-writers-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(root))
        abort();
}

static void root_teardown(void)
{
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory under root. */
static void fresh_dir(const char *name, char *out, size_t len)
{
    ck_assert_int_lt(snprintf(out, len, "%.*s/%s", (int)(len / 2), root, name), (int)len);
    nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    ck_assert_int_eq(mkdir(out, 0755), 0);
}

/* Names in dir other than those of the finished files (a temporary file
 * left behind). */
static int leftovers(const char *dir, const char *keep_suffix)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t l = strlen(e->d_name), s = strlen(keep_suffix);
        if (strstr(e->d_name, ".tmp.") || l < s || strcmp(e->d_name + l - s, keep_suffix) != 0) {
            fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

// ---------------------------------------------------------------------------
// one path, several writers of one pid

typedef struct {
    const char *path;
    int id;
    int failures;
    char err[256];
} writer_arg;

static atomic_int writers_left;

/* Writes BIG bytes of its own id, ROUNDS times. */
static void *writer(void *vp)
{
    writer_arg *a = vp;
    unsigned char *buf = malloc(BIG);
    memset(buf, 'A' + a->id, BIG);
    for (int i = 0; i < ROUNDS; i++)
        if (kf_write_file_atomic(a->path, buf, BIG, a->err, sizeof a->err) != 0)
            a->failures++;
    free(buf);
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

/* While WRITERS threads of this process rewrite one file, a reader sees it
 * whole every time: BIG bytes, all from one writer; no write fails and no
 * temporary file is left.  (With a temporary name made of the path and the
 * pid alone, the threads share it: one truncates what another is writing,
 * renames fail, and the file read is cut short or mixed.) */
START_TEST(test_same_pid_writers)
{
    char dir[PATH_MAX / 2], path[PATH_MAX];
    fresh_dir("one", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.cubin", dir);
    pthread_t th[WRITERS];
    writer_arg args[WRITERS];
    atomic_store(&writers_left, WRITERS);
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (writer_arg){.path = path, .id = i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, writer, &args[i]), 0);
    }
    int reads = 0, bad = 0;
    while (atomic_load(&writers_left) > 0) {
        size_t len = 0;
        char *got = kf_read_file(path, &len, NULL, 0);
        if (!got)
            continue; /* not written yet */
        reads++;
        bool whole = len == BIG && got[0] >= 'A' && got[0] < 'A' + WRITERS;
        for (size_t k = 1; whole && k < len; k++)
            whole = got[k] == got[0];
        if (!whole) {
            if (!bad)
                fprintf(stderr, "read %zu bytes, first '%c', not one writer's %d\n", len, got[0], BIG);
            bad++;
        }
        free(got);
    }
    int failures = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        if (args[i].failures)
            fprintf(stderr, "writer %d: %d failed: %s\n", i, args[i].failures, args[i].err);
        failures += args[i].failures;
    }
    ck_assert_int_eq(failures, 0);
    ck_assert_msg(bad == 0, "%d of %d reads saw a partial or mixed file", bad, reads);
    ck_assert_int_eq(leftovers(dir, ".cubin"), 0);
}
END_TEST

// ---------------------------------------------------------------------------
// the cubin cache: writer processes and a reader process

static rtc_options sm90(void)
{
    rtc_options o = {.arch = "sm_90", .lineinfo = false};
    return o;
}

#define KEYS 12

static void source_of(int k, char *buf, size_t len)
{
    snprintf(buf, len, "extern \"C\" __global__ void k%d(float *x) { x[0] = %d; }\n", k, k);
}

/* An ELF-looking cubin of a size and bytes that depend on the key alone,
 * as NVRTC's do on the source. */
static unsigned char *cubin_of(int k, size_t *len)
{
    *len = 64 * 1024 + (size_t)k * 4099;
    unsigned char *b = malloc(*len);
    memcpy(b, "\177ELF", 4);
    for (size_t i = 4; i < *len; i++)
        b[i] = (unsigned char)(i * 31 + (size_t)k);
    return b;
}

/* Stores every key ROUNDS / 4 times, starting at a key of its own; exits 0
 * when every store worked. */
static int store_all(const rtc_cache *c, int who)
{
    rtc_options o = sm90();
    for (int round = 0; round < ROUNDS / 4; round++)
        for (int j = 0; j < KEYS; j++) {
            int k = (j + who * 3) % KEYS;
            char src[256], path[PATH_MAX], err[512];
            source_of(k, src, sizeof src);
            size_t len;
            unsigned char *b = cubin_of(k, &len);
            int rc = rtc_cache_store(c, src, &o, b, len, path, sizeof path, err, sizeof err);
            free(b);
            if (rc != 0) {
                fprintf(stderr, "writer %d: %s\n", who, err);
                return 1;
            }
        }
    return 0;
}

/* Looks every key up until the writers end; a hit must be the key's cubin,
 * whole.  Exits 0 when every hit was (and some were seen), 1 if not. */
static int read_all(const rtc_cache *c, const char *stop)
{
    rtc_options o = sm90();
    long hits = 0, bad = 0;
    for (;;) {
        bool last = access(stop, F_OK) == 0; /* one more pass after the writers ended */
        for (int k = 0; k < KEYS; k++) {
            char src[256], path[PATH_MAX];
            source_of(k, src, sizeof src);
            if (!rtc_cache_lookup(c, src, &o, path, sizeof path))
                continue;
            size_t want, got = 0;
            unsigned char *b = cubin_of(k, &want);
            char *f = kf_read_file(path, &got, NULL, 0);
            hits++;
            if (!f || got != want || memcmp(f, b, want) != 0) {
                fprintf(stderr, "reader: key %d: a hit whose cubin is %zu bytes, not the %zu stored\n", k, got, want);
                bad++;
            }
            free(f);
            free(b);
        }
        if (last)
            break;
    }
    fprintf(stderr, "reader: %ld hits, %ld bad\n", hits, bad);
    return bad == 0 && hits >= KEYS ? 0 : 1;
}

/* WRITERS processes store the same keys into one cache directory at once
 * (the compile-only shards of a Slurm array on a shared file system),
 * while another process looks them up: every hit is the stored cubin,
 * whole, every store works, and only finished files are left. */
START_TEST(test_cache_writer_processes)
{
    char dir[PATH_MAX / 2], stop[PATH_MAX], err[512];
    fresh_dir("cache", dir, sizeof dir);
    snprintf(stop, sizeof stop, "%s/../stop", dir);
    unlink(stop);
    rtc_cache c;
    ck_assert_int_eq(rtc_cache_init(&c, dir, true, err, sizeof err), 0);
    pid_t reader = fork();
    ck_assert_int_ge(reader, 0);
    if (reader == 0)
        _exit(read_all(&c, stop));
    pid_t w[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = fork();
        ck_assert_int_ge(w[i], 0);
        if (w[i] == 0)
            _exit(store_all(&c, i));
    }
    int failed = 0, st;
    for (int i = 0; i < WRITERS; i++) {
        ck_assert_int_eq(waitpid(w[i], &st, 0), w[i]);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    FILE *f = fopen(stop, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(waitpid(reader, &st, 0), reader);
    unlink(stop);
    ck_assert_int_eq(failed, 0);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader saw a cubin that was not the one stored");
    /* every key is there, once: a .key and a .cubin each */
    rtc_options o = sm90();
    for (int k = 0; k < KEYS; k++) {
        char src[256], path[PATH_MAX];
        source_of(k, src, sizeof src);
        ck_assert_msg(rtc_cache_lookup(&c, src, &o, path, sizeof path), "key %d missing", k);
    }
    int files = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        files += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(files, 2 * KEYS);
    ck_assert_int_eq(leftovers(dir, ""), 0);
}
END_TEST

static Suite *writers_suite(void)
{
    Suite *s = suite_create("cache_writers");
    TCase *tc = tcase_create("writers");
    tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_same_pid_writers);
    tcase_add_test(tc, test_cache_writer_processes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(writers_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
