/*
 * test_tunedb.c -- the tuning database: write and read back (the
 * deterministic flag included), replace only by a faster entry, nearest-size
 * lookup (optionally of deterministic entries only), config and header
 * output (the header must compile), and concurrent updaters.
 *
 *   make BUILD=build build/tests/test_tunedb && build/tests/test_tunedb
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "family.h"
#include "reduce.h"
#include "space.h"
#include "pick.h"
#include "tunedb.h"
#include "util.h"

static char *tmpdir(void)
{
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/kforge-test-tunedb-XXXXXX", kf_tmpdir());
    char *d = mkdtemp(tmpl);
    ck_assert_ptr_nonnull(d);
    return strdup(d);
}

static void rmrf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static tunedb_entry entry(const char *gpu, kf_dtype t, kf_op op, int64_t n, double ms, int block_size)
{
    tunedb_entry e;
    memset(&e, 0, sizeof e);
    reduce_v r;
    reduce_defaults(&r);
    r.dtype = t;
    r.op = op;
    r.algorithm = KF_ALG_SHUFFLE;
    r.block_size = block_size;
    r.elements_per_thread = 4;
    r.vector_width = 4;
    r.unroll = KF_UNROLL_FULL;
    r.grid.kind = KF_GRID_WAVES;
    r.grid.value = 2;
    r.passes = KF_PASSES_LAST_BLOCK;
    r.load = KF_LOAD_STREAM;
    reduce_encode(&r, "", &e.v);
    e.shape.d[0] = n;
    e.deterministic = true;     /* last_block: a fixed order */
    e.median_ms = ms;
    e.gbps = (double)n * kf_dtype_size(t) / (ms * 1e6);
    e.pct_peak = e.gbps / 33.5;
    e.blocks = 1056;
    e.launches = 1;
    snprintf(e.dev.name, sizeof e.dev.name, "%s", gpu);
    e.dev.cc_major = 9;
    e.dev.cc_minor = 0;
    e.dev.sms = 132;
    e.dev.peak_gbps = 3352.3;
    e.dev.driver_version = 13000;
    e.dev.nvrtc_major = 13;
    e.dev.nvrtc_minor = 0;
    snprintf(e.kforge, sizeof e.kforge, "%s", KF_VERSION);
    snprintf(e.date, sizeof e.date, "2026-11-22T15:40:00Z");
    snprintf(e.how, sizeof e.how, "kforge tune configs/tune-reduce.json --strategy local --seed 1: best of 120 "
                                  "evaluations");
    return e;
}

/* The same variant with atomic passes: blocks combine in any order. */
static tunedb_entry entry_nondet(const char *gpu, kf_dtype t, kf_op op, int64_t n, double ms, int block_size)
{
    tunedb_entry e = entry(gpu, t, op, n, ms, block_size);
    e.v.p[RP_PASSES] = KF_PASSES_ATOMIC;
    e.deterministic = false;
    return e;
}

static kf_shape shape_n(int64_t n)
{
    kf_shape s;
    memset(&s, 0, sizeof s);
    s.d[0] = n;
    return s;
}

/* tunedb_lookup for a reduce (dtype, op) at n. */
static int lookup(const char *dir, const char *gpu, kf_dtype t, kf_op op, int64_t n, bool deterministic,
                  tunedb_entry *out, bool *exact, char *err, size_t errlen)
{
    kf_variant key;
    variant_defaults(&key, family_find("reduce"));
    key.p[RP_DTYPE] = t;
    key.p[RP_OP] = op;
    kf_shape s = shape_n(n);
    pick_policy p = {deterministic ? PICK_DET_ONLY : PICK_FASTEST, 0};
    return tunedb_lookup(dir, gpu, &key, &s, &p, out, exact, err, errlen);
}

static char *slurp(const char *path)
{
    char err[256];
    char *s = kf_read_file(path, NULL, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

// ----------------------------------------------------------------------------

START_TEST(stems_and_default_dir)
{
    char b[256];
    tunedb_stem("NVIDIA H100 80GB HBM3", b, sizeof b);
    ck_assert_str_eq(b, "NVIDIA_H100_80GB_HBM3");
    tunedb_stem("fake-gpu (KFORGE_FAKE_GPU)", b, sizeof b);
    ck_assert_str_eq(b, "fake-gpu_KFORGE_FAKE_GPU");
    tunedb_stem("  ../../etc/passwd  ", b, sizeof b);
    ck_assert_str_eq(b, "etc_passwd");
    tunedb_stem("", b, sizeof b);
    ck_assert_str_eq(b, "unknown-gpu");
    tunedb_stem("***", b, sizeof b);
    ck_assert_str_eq(b, "unknown-gpu");

    setenv("KFORGE_DB", "/x/db", 1);
    ck_assert_int_eq(tunedb_default_dir(b, sizeof b), 0);
    ck_assert_str_eq(b, "/x/db");
    unsetenv("KFORGE_DB");
    setenv("XDG_DATA_HOME", "/x/data", 1);
    ck_assert_int_eq(tunedb_default_dir(b, sizeof b), 0);
    ck_assert_str_eq(b, "/x/data/kforge/tuning");
    unsetenv("XDG_DATA_HOME");
    setenv("HOME", "/home/u", 1);
    ck_assert_int_eq(tunedb_default_dir(b, sizeof b), 0);
    ck_assert_str_eq(b, "/home/u/.local/share/kforge/tuning");
}
END_TEST

START_TEST(write_read_replace_only_if_faster)
{
    char *dir = tmpdir();
    char sub[512], err[512];
    snprintf(sub, sizeof sub, "%s/a/b", dir); /* created on demand */
    tunedb_entry e = entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, 1.0, 256);
    ck_assert_int_eq(tunedb_update(sub, &e, 1, err, sizeof err), 1);

    tunedb_entry r;
    bool exact = false;
    ck_assert_int_eq(lookup(sub, "NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err,
                            sizeof err),
                     0);
    ck_assert(exact);
    ck_assert(memcmp(&r.v, &e.v, sizeof r.v) == 0);
    ck_assert(variant_eq(&r.v, &e.v));
    ck_assert_int_eq(r.v.family, family_find("reduce"));
    ck_assert_int_eq(r.shape.d[0], e.shape.d[0]);
    ck_assert(shape_eq(&r.shape, &e.shape));
    ck_assert(r.deterministic);
    ck_assert(r.median_ms == e.median_ms && fabs(r.gbps - e.gbps) < 1e-9);
    ck_assert_int_eq(r.blocks, 1056);
    ck_assert_int_eq(r.launches, 1);
    ck_assert_str_eq(r.dev.name, e.dev.name);
    ck_assert_int_eq(r.dev.cc_major, 9);
    ck_assert_int_eq(r.dev.driver_version, 13000);
    ck_assert_int_eq(r.dev.nvrtc_major, 13);
    ck_assert_str_eq(r.kforge, KF_VERSION);
    ck_assert_str_eq(r.date, e.date);
    ck_assert_str_eq(r.how, e.how);
    /* the file stem also finds it */
    ck_assert_int_eq(lookup(sub, "NVIDIA_H100_80GB_HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err,
                            sizeof err),
                     0);

    /* slower or equal: kept */
    tunedb_entry slow = entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, 1.5, 512);
    ck_assert_int_eq(tunedb_update(sub, &slow, 1, err, sizeof err), 0);
    tunedb_entry same = entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, 1.0, 512);
    ck_assert_int_eq(tunedb_update(sub, &same, 1, err, sizeof err), 0);
    ck_assert_int_eq(lookup(sub, "NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err,
                            sizeof err),
                     0);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 256);
    /* faster: replaced, and other entries are untouched */
    tunedb_entry other = entry("NVIDIA H100 80GB HBM3", KF_INT32, KF_OP_MAX, 1 << 24, 2.0, 128);
    tunedb_entry fast[2] = {entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, 0.5, 1024), other};
    ck_assert_int_eq(tunedb_update(sub, fast, 2, err, sizeof err), 2);
    ck_assert_int_eq(lookup(sub, "NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err,
                            sizeof err),
                     0);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 1024);
    ck_assert(r.median_ms == 0.5);
    ck_assert_int_eq(lookup(sub, "NVIDIA H100 80GB HBM3", KF_INT32, KF_OP_MAX, 1 << 24, false, &r, &exact, err,
                            sizeof err),
                     0);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 128);
    /* failed measurements are never recorded */
    tunedb_entry nan_e = entry("NVIDIA H100 80GB HBM3", KF_FLOAT64, KF_OP_SUM, 100, NAN, 64);
    ck_assert_int_eq(tunedb_update(sub, &nan_e, 1, err, sizeof err), 0);

    /* one file per GPU; lock files are not listed */
    tunedb_entry a100 = entry("NVIDIA A100-SXM4-40GB", KF_FLOAT32, KF_OP_SUM, 1000, 0.01, 256);
    ck_assert_int_eq(tunedb_update(sub, &a100, 1, err, sizeof err), 1);
    char **stems;
    int n;
    ck_assert_int_eq(tunedb_list(sub, &stems, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(stems[0], "NVIDIA_A100-SXM4-40GB");
    ck_assert_str_eq(stems[1], "NVIDIA_H100_80GB_HBM3");
    tunedb_list_free(stems, n);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none", dir);
    ck_assert_int_eq(tunedb_list(missing, &stems, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(lookup(missing, "NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1, false, &r, &exact, err,
                            sizeof err),
                     1);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(unknown_fields_kept_malformed_refused)
{
    char *dir = tmpdir();
    char path[600], err[512];
    snprintf(path, sizeof path, "%s/GPU_X.json", dir);
    const char *text = "{\"kforge_tuning_db\": 1, \"device\": \"GPU X\", \"future\": [1, 2],\n"
                       " \"entries\": [{\"kernel\": \"scan\", \"dtype\": \"float32\", \"op\": \"sum\", \"n\": 5,"
                       " \"median_ms\": 1, \"variant\": {}, \"extra\": true}, {\"garbage\": 1}]}\n";
    ck_assert_int_eq(kf_write_file_atomic(path, text, strlen(text), err, sizeof err), 0);
    tunedb_entry e = entry("GPU X", KF_FLOAT32, KF_OP_SUM, 5, 9.0, 256);
    ck_assert_int_eq(tunedb_update(dir, &e, 1, err, sizeof err), 1); /* another kernel: no match */
    char *s = slurp(path);
    ck_assert(strstr(s, "\"future\"") && strstr(s, "\"extra\"") && strstr(s, "\"garbage\"") && strstr(s, "\"scan\""));
    free(s);
    tunedb_entry r;
    bool exact;
    ck_assert_int_eq(lookup(dir, "GPU X", KF_FLOAT32, KF_OP_SUM, 5, false, &r, &exact, err, sizeof err), 0);
    ck_assert(r.median_ms == 9.0);

    const char *broken = "{\"entries\": [";
    ck_assert_int_eq(kf_write_file_atomic(path, broken, strlen(broken), err, sizeof err), 0);
    ck_assert_int_eq(tunedb_update(dir, &e, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "GPU_X.json") && strstr(err, "not a kforge tuning database"), "%s", err);
    s = slurp(path);
    ck_assert_str_eq(s, broken); /* never overwritten */
    free(s);
    ck_assert_int_eq(lookup(dir, "GPU X", KF_FLOAT32, KF_OP_SUM, 5, false, &r, &exact, err, sizeof err), -1);

    /* a bad value names the file and field */
    const char *badval = "{\"entries\": [{\"kernel\": \"reduce\", \"dtype\": \"float32\", \"op\": \"sum\", \"n\": 5,"
                         " \"median_ms\": 1, \"variant\": {\"algorithm\": \"magic\"}}]}";
    ck_assert_int_eq(kf_write_file_atomic(path, badval, strlen(badval), err, sizeof err), 0);
    ck_assert_int_eq(lookup(dir, "GPU X", KF_FLOAT32, KF_OP_SUM, 5, false, &r, &exact, err, sizeof err), -1);
    /* (the parameter decoder's message: "...: entries[0].variant: variant: algorithm: unknown value ...") */
    ck_assert_msg(strstr(err, "GPU_X.json: entries[0].variant") && strstr(err, "algorithm") && strstr(err, "magic"),
                  "%s", err);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(nearest_n_on_log_scale)
{
    char *dir = tmpdir();
    char err[512];
    tunedb_entry es[4] = {
        entry("G", KF_FLOAT32, KF_OP_SUM, 1 << 10, 0.001, 64),
        entry("G", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 128),
        entry("G", KF_FLOAT32, KF_OP_SUM, 1 << 24, 0.1, 256),
        entry("G", KF_FLOAT64, KF_OP_SUM, 1000000, 0.1, 512),
    };
    ck_assert_int_eq(tunedb_update(dir, es, 4, err, sizeof err), 4);
    tunedb_entry r;
    bool exact = true;
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_SUM, 1000000, false, &r, &exact, err, sizeof err), 0);
    ck_assert(!exact);
    ck_assert_int_eq(r.shape.d[0], 1 << 20);
    /* 2^22 is as far from 2^20 as from 2^24: the larger wins */
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_SUM, 1 << 22, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.shape.d[0], 1 << 24);
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_SUM, 1, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.shape.d[0], 1 << 10);
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_SUM, (int64_t)1 << 33, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.shape.d[0], 1 << 24);
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_SUM, 1 << 10, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact);
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT64, KF_OP_SUM, 5, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 512);
    /* nothing for that dtype/op */
    ck_assert_int_eq(lookup(dir, "G", KF_INT32, KF_OP_SUM, 5, false, &r, &exact, err, sizeof err), 1);
    ck_assert_int_eq(lookup(dir, "G", KF_FLOAT32, KF_OP_MIN, 5, false, &r, &exact, err, sizeof err), 1);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(config_output_is_a_kforge_config)
{
    tunedb_entry e = entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 256);
    for (int exact = 0; exact < 2; exact++) {
        kf_shape want = shape_n(exact ? 1 << 20 : 1000000);
        char cerr[256];
        char *text = tunedb_config_json(&e, &want, exact, ".", NULL, cerr, sizeof cerr);
        ck_assert_ptr_nonnull(text);
        /* the comment names the sizes as "n=..." (shape_text) */
        ck_assert_msg(exact || strstr(text, "nearest size, n=1048576"), "%s", text);
        ck_assert_msg(exact || strstr(text, "no entry for n=1000000"), "%s", text);
        ck_assert_msg(!exact || !strstr(text, "\"comment\""), "%s", text);
        ck_assert_msg(strstr(text, "\"kernel\": \"reduce\""), "%s", text);
        kf_config cfg;
        char err[1024];
        ck_assert_msg(config_parse(text, strlen(text), "best.json", &cfg, err, sizeof err) == 0, "%s\n%s", err, text);
        kf_space sp;
        memset(&sp, 0, sizeof sp);
        ck_assert_msg(space_expand(&cfg, NULL, &sp, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(sp.nvariants, 1);
        ck_assert_int_eq(sp.ncases, 1);
        ck_assert_int_eq(sp.cases[0].shape.d[0], exact ? 1 << 20 : 1000000);
        ck_assert(shape_eq(&sp.cases[0].shape, &want));
        ck_assert_int_eq(cfg.family, family_find("reduce"));
        ck_assert(memcmp(&sp.variants[0], &e.v, sizeof e.v) == 0);
        space_free(&sp);
        config_free(&cfg);
        free(text);
    }
}
END_TEST

/* Writes header and a file using it (use: its text after the two
 * #includes) and compiles that with -Werror: 0 if it compiles. */
static int try_compile_header(const char *dir, const char *header, const char *use)
{
    char hpath[600], cpath[600], cmd[2048], err[256];
    snprintf(hpath, sizeof hpath, "%s/kforge_tuned.h", dir);
    snprintf(cpath, sizeof cpath, "%s/use.c", dir);
    ck_assert_int_eq(kf_write_file_atomic(hpath, header, strlen(header), err, sizeof err), 0);
    strbuf src = {0};
    sb_append(&src, "#include \"kforge_tuned.h\"\n"
                    "#include \"kforge_tuned.h\"\n"); /* include guard */
    sb_append(&src, use);
    ck_assert(!src.failed);
    ck_assert_int_eq(kf_write_file_atomic(cpath, src.s, src.len, err, sizeof err), 0);
    sb_free(&src);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -Wno-unused-variable -fsyntax-only '%s'", cpath);
    return system(cmd);
}

static void compile_header(const char *dir, const char *header)
{
    const char *use = 
                      "_Static_assert(KFORGE_REDUCE_BLOCK_SIZE == 256, \"block size\");\n"
                      "_Static_assert(KFORGE_REDUCE_ELEMENTS_PER_THREAD == 4, \"ept\");\n"
                      "_Static_assert(KFORGE_REDUCE_TILE == 4096, \"tile\");\n"
                      "_Static_assert(KFORGE_REDUCE_TUNED_BLOCKS == 1056, \"blocks\");\n"
                      "_Static_assert(KFORGE_REDUCE_TUNED_CC == 90, \"cc\");\n"
                      "_Static_assert(KFORGE_REDUCE_DETERMINISTIC == 1, \"deterministic\");\n"
                      "_Static_assert(KFORGE_REDUCE_VECTOR_BYTES == 16, \"vector bytes\");\n"
                      "#if !KFORGE_REDUCE_ALGORITHM_SHUFFLE || !KFORGE_REDUCE_PASSES_LAST_BLOCK || "
                      "!KFORGE_REDUCE_GRID_WAVES || KFORGE_REDUCE_GRID_VALUE != 2\n#error wrong\n#endif\n"
                      "KFORGE_REDUCE_DTYPE acc = 0;\n"
                      "const char *dev = KFORGE_REDUCE_TUNED_DEVICE;\n"
                      "const char *alg = KFORGE_REDUCE_ALGORITHM_NAME;\n"
                      "long long n = KFORGE_REDUCE_TUNED_N;\n"
                      "double ms = KFORGE_REDUCE_TUNED_MEDIAN_MS, gbps = KFORGE_REDUCE_TUNED_GBPS;\n";
    ck_assert_msg(try_compile_header(dir, header, use) == 0, "the header does not compile:\n%s", header);
}

START_TEST(header_compiles)
{
    char *dir = tmpdir();
    tunedb_entry e = entry("NVIDIA H100 80GB HBM3", KF_FLOAT32, KF_OP_SUM, 1 << 24, 0.035, 256);
    kf_shape s24 = shape_n(1 << 24), s1000 = shape_n(1000);
    char *h = tunedb_header(&e, &s24, true);
    ck_assert(strstr(h, "#define KFORGE_REDUCE_BLOCK_SIZE 256\n"));
    ck_assert(strstr(h, "NVIDIA H100 80GB HBM3"));
    ck_assert(strstr(h, "kforge tune configs/tune-reduce.json"));
    compile_header(dir, h);
    free(h);
    /* hostile text: quotes, backslashes, a comment terminator, trigraphs, newlines */
    snprintf(e.dev.name, sizeof e.dev.name, "GPU \"x\" \\ */ ?\?= \n end");
    snprintf(e.how, sizeof e.how, "kforge tune a*/b.json\n#error injected");
    h = tunedb_header(&e, &s1000, false);
    ck_assert(strstr(h, "nearest size"));
    compile_header(dir, h);
    free(h);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(entry_round_trip_keeps_deterministic)
{
    char *dir = tmpdir();
    char err[512], path[600];
    /* a deterministic and a non-deterministic entry (other sizes), and a
     * named variant: every field reads back as written */
    tunedb_entry in[3] = {
        entry("RT GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.25, 256),
        entry_nondet("RT GPU", KF_FLOAT32, KF_OP_SUM, 1 << 22, 0.75, 512),
        entry_nondet("RT GPU", KF_INT64, KF_OP_XOR, 12345, 0.5, 128),
    };
    snprintf(in[2].v.name, sizeof in[2].v.name, "my \"best\" one");
    in[2].deterministic = true;   /* the flag is stored as given, not recomputed */
    ck_assert_int_eq(tunedb_update(dir, in, 3, err, sizeof err), 3);

    /* stored as JSON booleans */
    snprintf(path, sizeof path, "%s/RT_GPU.json", dir);
    char *text = slurp(path);
    ck_assert_msg(strstr(text, "\"deterministic\": true") && strstr(text, "\"deterministic\": false"), "%s", text);
    free(text);

    for (int i = 0; i < 3; i++) {
        tunedb_entry r;
        bool exact = false;
        memset(&r, 0x5a, sizeof r);
        ck_assert_int_eq(lookup(dir, "RT GPU", variant_dtype(&in[i].v), variant_op(&in[i].v), in[i].shape.d[0],
                                false, &r, &exact, err, sizeof err),
                         0);
        ck_assert(exact);
        ck_assert_msg(r.deterministic == in[i].deterministic, "[%d] deterministic %d, wrote %d", i, r.deterministic,
                      in[i].deterministic);
        ck_assert_msg(variant_eq(&r.v, &in[i].v), "[%d] variant differs", i);
        ck_assert_str_eq(r.v.name, in[i].v.name);
        ck_assert(shape_eq(&r.shape, &in[i].shape));
        ck_assert(r.median_ms == in[i].median_ms);
        ck_assert_int_eq(r.blocks, in[i].blocks);
        ck_assert_str_eq(r.how, in[i].how);
    }

    /* replacing by a faster entry takes its flag too */
    tunedb_entry faster = entry_nondet("RT GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.125, 1024);
    ck_assert_int_eq(tunedb_update(dir, &faster, 1, err, sizeof err), 1);
    tunedb_entry r;
    bool exact = false;
    ck_assert_int_eq(lookup(dir, "RT GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && !r.deterministic && r.v.p[RP_BLOCK_SIZE] == 1024);
    rmrf(dir);
    free(dir);
}
END_TEST

/* An entry of another source (source_hash, a user's kernel's): the new
 * source's entry replaces it though slower, and the other determinism
 * class's entry of the old source goes too; the hash reads back. */
START_TEST(other_source_replaced)
{
    char *dir = tmpdir();
    char err[512];
    tunedb_entry old[2] = {
        entry_nondet("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.10, 256),
        entry("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.20, 512),
    };
    snprintf(old[0].source_hash, sizeof old[0].source_hash, "%032d", 1);
    snprintf(old[1].source_hash, sizeof old[1].source_hash, "%032d", 1);
    ck_assert_int_eq(tunedb_update(dir, old, 2, err, sizeof err), 2);
    tunedb_entry r;
    bool exact = false;
    ck_assert_int_eq(lookup(dir, "SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert_str_eq(r.source_hash, old[0].source_hash);

    /* the same source, slower: kept as it was */
    tunedb_entry slow = entry("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.30, 1024);
    snprintf(slow.source_hash, sizeof slow.source_hash, "%032d", 1);
    ck_assert_int_eq(tunedb_update(dir, &slow, 1, err, sizeof err), 0);

    /* another source, slower than both: replaces them */
    tunedb_entry next = entry("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.30, 1024);
    snprintf(next.source_hash, sizeof next.source_hash, "%032d", 2);
    ck_assert_int_eq(tunedb_update(dir, &next, 1, err, sizeof err), 1);
    tunedb_entry *all = NULL;
    int n = 0;
    ck_assert_int_eq(tunedb_entries(dir, "SH GPU", &all, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(all[0].source_hash, next.source_hash);
    ck_assert(all[0].median_ms == 0.30 && all[0].deterministic);
    free(all);

    /* an entry that records none (a built-in family's, an older kforge's)
     * is kept by the old rule: only a faster one replaces it */
    tunedb_entry plain = entry("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 22, 0.10, 256);
    ck_assert_int_eq(tunedb_update(dir, &plain, 1, err, sizeof err), 1);
    tunedb_entry plain_slow = entry("SH GPU", KF_FLOAT32, KF_OP_SUM, 1 << 22, 0.20, 512);
    ck_assert_int_eq(tunedb_update(dir, &plain_slow, 1, err, sizeof err), 0);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(lookup_deterministic_skips_others)
{
    char *dir = tmpdir();
    char err[512];
    tunedb_entry es[4] = {
        entry_nondet("D", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 128),   /* the exact size, not deterministic */
        entry("D", KF_FLOAT32, KF_OP_SUM, 1 << 26, 0.4, 256),           /* far, deterministic */
        entry_nondet("D", KF_FLOAT32, KF_OP_SUM, 1 << 21, 0.02, 512),   /* near, not deterministic */
        entry_nondet("D", KF_INT32, KF_OP_MAX, 1 << 20, 0.01, 64),      /* no deterministic one at all */
    };
    ck_assert_int_eq(tunedb_update(dir, es, 4, err, sizeof err), 4);
    tunedb_entry r;
    bool exact = true;

    /* any: the exact (non-deterministic) entry */
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && !r.deterministic);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 128);

    /* deterministic: the only deterministic one, however far, not exact */
    exact = true;
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 20, true, &r, &exact, err, sizeof err), 0);
    ck_assert(!exact);
    ck_assert(r.deterministic);
    ck_assert_int_eq(r.shape.d[0], 1 << 26);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 256);
    ck_assert_int_eq(r.v.p[RP_PASSES], KF_PASSES_LAST_BLOCK);
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 21, true, &r, &exact, err, sizeof err), 0);
    ck_assert(!exact && r.shape.d[0] == 1 << 26);
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 26, true, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && r.deterministic);

    /* nothing deterministic for (int32, max): "nothing" (1), though there is an entry */
    ck_assert_int_eq(lookup(dir, "D", KF_INT32, KF_OP_MAX, 1 << 20, true, &r, &exact, err, sizeof err), 1);
    ck_assert_int_eq(lookup(dir, "D", KF_INT32, KF_OP_MAX, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert(!r.deterministic);

    /* an entry written without the flag (older files) is not deterministic */
    char path[600];
    snprintf(path, sizeof path, "%s/OLD.json", dir);
    const char *old = "{\"kforge_tuning_db\": 1, \"device\": \"OLD\", \"entries\": [{\"kernel\": \"reduce\", "
                      "\"dtype\": \"float32\", \"op\": \"sum\", \"n\": 1024, \"median_ms\": 1, "
                      "\"variant\": {\"passes\": \"last_block\"}}]}\n";
    ck_assert_int_eq(kf_write_file_atomic(path, old, strlen(old), err, sizeof err), 0);
    ck_assert_int_eq(lookup(dir, "OLD", KF_FLOAT32, KF_OP_SUM, 1024, true, &r, &exact, err, sizeof err), 1);
    ck_assert_int_eq(lookup(dir, "OLD", KF_FLOAT32, KF_OP_SUM, 1024, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && !r.deterministic);
    ck_assert_int_eq(r.v.p[RP_PASSES], KF_PASSES_LAST_BLOCK);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 256);   /* left out: the default */
    rmrf(dir);
    free(dir);
}
END_TEST

/* Issue 35: which entry serves a size.  The default prefers the fastest
 * deterministic entry of the size (nearest size first), --fastest takes the
 * fastest, and --max-error only entries whose recorded error is within it
 * (an entry without one never is); acc_rel goes through the file. */
START_TEST(lookup_policy_and_max_error)
{
    char *dir = tmpdir();
    char err[512];
    tunedb_entry es[4] = {
        entry_nondet("P", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.010, 128),  /* fastest, atomic, error 8e-6 */
        entry("P", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.011, 256),         /* deterministic, error 3e-8 */
        entry_nondet("P", KF_FLOAT32, KF_OP_SUM, 1 << 24, 0.100, 512),  /* only an atomic one, no error */
        entry("P", KF_FLOAT32, KF_OP_SUM, 1 << 28, 1.000, 1024),        /* deterministic, no error recorded */
    };
    es[0].has_acc = true, es[0].acc_rel = 8e-6;
    es[1].has_acc = true, es[1].acc_rel = 3e-8;
    ck_assert_int_eq(tunedb_update(dir, es, 4, err, sizeof err), 4);
    kf_variant key;
    variant_defaults(&key, family_find("reduce"));
    key.p[RP_DTYPE] = KF_FLOAT32;
    key.p[RP_OP] = KF_OP_SUM;
    tunedb_entry r;
    bool exact;
    kf_shape s = shape_n(1 << 20);
    /* the default (NULL and PREFER_DET alike): the deterministic one, slower as it is */
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, NULL, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && r.deterministic);
    ck_assert_int_eq(r.v.p[RP_BLOCK_SIZE], 256);
    ck_assert(r.has_acc && fabs(r.acc_rel - 3e-8) < 1e-20);
    pick_policy fastest = {PICK_FASTEST, 0};
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, &fastest, &r, &exact, err, sizeof err), 0);
    ck_assert(!r.deterministic && r.has_acc && r.acc_rel == 8e-6);
    /* a size with no deterministic entry: the default takes its fastest */
    s = shape_n(1 << 24);
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, NULL, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && !r.deterministic && !r.has_acc);
    /* --max-error 1e-6 with --fastest: the atomic entry is out, the deterministic one in */
    pick_policy bound = {PICK_FASTEST, 1e-6};
    s = shape_n(1 << 20);
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, &bound, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && r.deterministic && r.v.p[RP_BLOCK_SIZE] == 256);
    /* at 2^28 nothing has a recorded error: the nearest that has one, not exact */
    s = shape_n(1 << 28);
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, &bound, &r, &exact, err, sizeof err), 0);
    ck_assert(!exact && r.shape.d[0] == 1 << 20);
    /* a bound nothing meets: nothing */
    pick_policy tight = {PICK_PREFER_DET, 1e-9};
    ck_assert_int_eq(tunedb_lookup(dir, "P", &key, &s, &tight, &r, &exact, err, sizeof err), 1);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(entries_and_delete)
{
    char *dir = tmpdir();
    char err[512];
    tunedb_entry es[5] = {
        entry("D", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.02, 256),
        entry_nondet("D", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 128),   /* beside the deterministic one */
        entry("D", KF_FLOAT32, KF_OP_SUM, 1 << 24, 0.05, 512),
        entry("D", KF_INT32, KF_OP_MAX, 1 << 20, 0.01, 64),
        entry("E", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 64),           /* another GPU's file */
    };
    ck_assert_int_eq(tunedb_update(dir, es, 4, err, sizeof err), 4);
    ck_assert_int_eq(tunedb_update(dir, es + 4, 1, err, sizeof err), 1);
    tunedb_entry *got;
    int n;
    ck_assert_int_eq(tunedb_entries(dir, "D", &got, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(got[1].v.p[RP_BLOCK_SIZE], 128);
    ck_assert(!got[1].deterministic && got[0].deterministic);
    ck_assert_int_eq(got[2].shape.d[0], 1 << 24);
    ck_assert_int_eq(variant_dtype(&got[3].v), KF_INT32);
    free(got);
    ck_assert_int_eq(tunedb_entries(dir, "nobody", &got, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 0);
    free(got);

    kf_variant key;
    variant_defaults(&key, family_find("reduce"));
    key.p[RP_DTYPE] = KF_FLOAT32;
    key.p[RP_OP] = KF_OP_SUM;
    kf_shape s = shape_n(1 << 20);
    /* the deterministic class only, then both, then nothing left */
    ck_assert_int_eq(tunedb_delete(dir, "D", &key, &s, 1, err, sizeof err), 1);
    tunedb_entry r;
    bool exact;
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && !r.deterministic);
    ck_assert_int_eq(tunedb_delete(dir, "D", &key, &s, -1, err, sizeof err), 1);
    ck_assert_int_eq(tunedb_delete(dir, "D", &key, &s, -1, err, sizeof err), 0);
    ck_assert_int_eq(tunedb_entries(dir, "D", &got, &n, err, sizeof err), 0);
    ck_assert_int_eq(n, 2);   /* 2^24 and int32 max are untouched */
    free(got);
    /* every size of (float32, sum) */
    ck_assert_int_eq(tunedb_delete(dir, "D", &key, NULL, -1, err, sizeof err), 1);
    ck_assert_int_eq(lookup(dir, "D", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err, sizeof err), 1);
    /* the other GPU's file is untouched; a missing file deletes nothing */
    ck_assert_int_eq(lookup(dir, "E", KF_FLOAT32, KF_OP_SUM, 1 << 20, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(tunedb_delete(dir, "nobody", &key, &s, -1, err, sizeof err), 0);

    /* 2^24 is as near 2^20 as 2^28 on a log scale (up to rounding): the
     * larger, as kforge export's dispatch decides */
    tunedb_entry tie[2] = {entry("T", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 128),
                           entry("T", KF_FLOAT32, KF_OP_SUM, 1 << 28, 0.3, 1024)};
    ck_assert_int_eq(tunedb_update(dir, tie, 2, err, sizeof err), 2);
    ck_assert_int_eq(lookup(dir, "T", KF_FLOAT32, KF_OP_SUM, 1 << 24, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.shape.d[0], 1 << 28);
    ck_assert_int_eq(lookup(dir, "T", KF_FLOAT32, KF_OP_SUM, (1 << 24) - 1, false, &r, &exact, err, sizeof err), 0);
    ck_assert_int_eq(r.shape.d[0], 1 << 20);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(header_defines_from_table)
{
    char *dir = tmpdir();
    /* a non-deterministic entry: the flag and every parameter of the table */
    tunedb_entry e = entry_nondet("NVIDIA H100 80GB HBM3", KF_INT64, KF_OP_MAX, 1000000, 0.02, 128);
    kf_shape s = shape_n(1000000);
    char *h = tunedb_header(&e, &s, true);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_DETERMINISTIC 0\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_TUNED_N 1000000LL\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_TUNED_EXACT 1\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_DTYPE long long\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_PASSES_NAME \"atomic\"\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_PASSES_ATOMIC 1\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_OP_MAX 1\n"), "%s", h);
    ck_assert_msg(strstr(h, "#define KFORGE_REDUCE_DTYPE_INT64 1\n"), "%s", h);
    const kf_family *f = kf_families[family_find("reduce")];
    for (int i = 0; i < f->nparams; i++) {
        char m[128], suffix[64];
        param_macro_suffix(f->params[i].name, suffix, sizeof suffix);
        snprintf(m, sizeof m, "#define KFORGE_REDUCE_%s%s", suffix,
                 f->params[i].kind == KF_PK_INT ? " " : "_NAME \"");
        ck_assert_msg(strstr(h, m), "no \"%s\" in\n%s", m, h);
    }
    const char *use = "_Static_assert(KFORGE_REDUCE_DETERMINISTIC == 0, \"det\");\n"
                      "_Static_assert(KFORGE_REDUCE_BLOCK_SIZE == 128, \"bs\");\n"
                      "_Static_assert(KFORGE_REDUCE_TILE == 128 * 4 * 4, \"tile\");\n"
                      "_Static_assert(KFORGE_REDUCE_ELEM_BYTES == 8, \"elem bytes\");\n"
                      "_Static_assert(KFORGE_REDUCE_TUNED_N == 1000000LL, \"n\");\n"
                      "#if !KFORGE_REDUCE_PASSES_ATOMIC || !KFORGE_REDUCE_DTYPE_INT64 || !KFORGE_REDUCE_OP_MAX\n"
                      "#error wrong\n#endif\n"
                      "KFORGE_REDUCE_DTYPE acc = 0;\n";
    ck_assert_msg(try_compile_header(dir, h, use) == 0, "the header does not compile:\n%s", h);
    free(h);
    rmrf(dir);
    free(dir);
}
END_TEST

/* A header for e with grid g (tuned launch: 777 blocks) and a check of the
 * grid macros: 0 if it compiles. */
static int grid_header_compiles(const char *dir, kf_grid g, const char *kind_macro)
{
    tunedb_entry e = entry("G", KF_FLOAT32, KF_OP_SUM, 1 << 20, 0.01, 256);
    e.v.p[RP_GRID] = kf_grid_encode(g);
    e.blocks = 777;
    kf_shape s = shape_n(1 << 20);
    char *h = tunedb_header(&e, &s, true);
    char use[512];
    snprintf(use, sizeof use,
             "_Static_assert(KFORGE_REDUCE_GRID_VALUE == %lld, \"value\");\n"
             "#if !KFORGE_REDUCE_GRID_%s\n#error kind\n#endif\n",
             (long long)g.value, kind_macro);
    int rc = try_compile_header(dir, h, use);
    if (rc != 0)
        fprintf(stderr, "grid %s: the header does not compile:\n%s", kind_macro, h);
    free(h);
    return rc;
}

START_TEST(header_every_grid_kind_compiles)
{
    /* every grid kind: the kind's flag, its value, and the block count of
     * the tuned launch must all be defined once, without clashes */
    char *dir = tmpdir();
    ck_assert_int_eq(grid_header_compiles(dir, (kf_grid){KF_GRID_AUTO, 0}, "AUTO"), 0);
    ck_assert_int_eq(grid_header_compiles(dir, (kf_grid){KF_GRID_PER_SM, 4}, "BLOCKS_PER_SM"), 0);
    ck_assert_int_eq(grid_header_compiles(dir, (kf_grid){KF_GRID_WAVES, 2}, "WAVES"), 0);
    rmrf(dir);
    free(dir);
}
END_TEST

/* A fixed grid's kind flag and the tuned launch's block count were one macro (a redefinition). */
START_TEST(header_grid_blocks_kind_compiles)
{
    char *dir = tmpdir();
    ck_assert_int_eq(grid_header_compiles(dir, (kf_grid){KF_GRID_BLOCKS, 512}, "BLOCKS"), 0);
    rmrf(dir);
    free(dir);
}
END_TEST

START_TEST(concurrent_updaters)
{
    /* 8 processes x 12 updates each: every distinct n survives, and the
     * shared n ends with the fastest of all. */
    char *dir = tmpdir();
    enum { P = 8, K = 12 };
    for (int p = 0; p < P; p++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            char err[512];
            for (int k = 0; k < K; k++) {
                tunedb_entry e[2] = {
                    entry("Shared GPU", KF_FLOAT32, KF_OP_SUM, 1000 + p * K + k, 1.0 + k, 256),
                    entry("Shared GPU", KF_FLOAT32, KF_OP_SUM, 42, 10.0 + ((p * 7 + k * 5) % 31), 64 << (k % 4)),
                };
                if (tunedb_update(dir, e, 2, err, sizeof err) < 0) {
                    fprintf(stderr, "%s\n", err);
                    free(dir);
                    _exit(1);
                }
            }
            free(dir);   /* the child's copy (valgrind follows children) */
            _exit(0);
        }
    }
    for (int p = 0; p < P; p++) {
        int st;
        ck_assert_int_gt(wait(&st), 0);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    char err[512];
    tunedb_entry r;
    bool exact;
    for (int i = 0; i < P * K; i++) {
        ck_assert_int_eq(lookup(dir, "Shared GPU", KF_FLOAT32, KF_OP_SUM, 1000 + i, false, &r, &exact, err, sizeof err),
                         0);
        ck_assert_msg(exact, "entry for n = %d lost", 1000 + i);
    }
    ck_assert_int_eq(lookup(dir, "Shared GPU", KF_FLOAT32, KF_OP_SUM, 42, false, &r, &exact, err, sizeof err), 0);
    ck_assert(exact && r.median_ms == 10.0);
    rmrf(dir);
    free(dir);
}
END_TEST

static Suite *tunedb_suite(void)
{
    Suite *s = suite_create("tunedb");
    TCase *t = tcase_create("db");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, stems_and_default_dir);
    tcase_add_test(t, write_read_replace_only_if_faster);
    tcase_add_test(t, other_source_replaced);
    tcase_add_test(t, unknown_fields_kept_malformed_refused);
    tcase_add_test(t, nearest_n_on_log_scale);
    tcase_add_test(t, config_output_is_a_kforge_config);
    tcase_add_test(t, header_compiles);
    tcase_add_test(t, entry_round_trip_keeps_deterministic);
    tcase_add_test(t, lookup_deterministic_skips_others);
    tcase_add_test(t, entries_and_delete);
    tcase_add_test(t, lookup_policy_and_max_error);
    tcase_add_test(t, header_defines_from_table);
    tcase_add_test(t, header_every_grid_kind_compiles);
    tcase_add_test(t, header_grid_blocks_kind_compiles);
    tcase_add_test(t, concurrent_updaters);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tunedb_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
