/*
 * test_export.c -- several variants in one translation unit (codegen:
 * #undefs, kernel names, NVRTC compiles the whole file) and the reduce
 * family's export: the header it writes (dispatch boundaries, refusals),
 * NVRTC compiles its kernels, and its host API, run against a stand-in for
 * the CUDA runtime (tests/export_stub.cpp, no GPU), launches exactly what
 * kforge's launch plan (plan.c) launches.  Needs NVRTC; the host API test
 * needs nvcc too (skipped, and said so, without it).
 *
 *   make build/tests/test_export && build/tests/test_export
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen.h"
#include "config.h"
#include "family.h"
#include "plan.h"
#include "reduce.h"
#include "rtc.h"
#include "space.h"
#include "util.h"

static char err[2048];

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

static char *tmpdir(void)
{
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/kforge-test-export-XXXXXX", kf_tmpdir());
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

/* Compiles src with NVRTC for sm_90; the cubin (malloc'd) and its length. */
static void *nvrtc(const char *src, size_t *len)
{
    rtc_options o = {.arch = "sm_90", .lineinfo = false};
    void *cubin = NULL;
    char *log = NULL;
    int rc = rtc_compile(src, "kforge_test.cu", &o, &cubin, len, &log, err, sizeof err);
    ck_assert_msg(rc == 0, "NVRTC: %s\n%.3000s", err, log ? log : "");
    free(log);
    return cubin;
}

static bool has_name(const void *cubin, size_t len, const char *name)
{
    size_t k = strlen(name);
    const char *c = cubin;
    for (size_t p = 0; p + k < len; p++)
        if (memcmp(c + p, name, k) == 0 && c[p + k] == '\0')
            return true;
    return false;
}

static kf_variant variant(kf_dtype t, kf_op op, int bs, int ept, int vw, kf_grid_kind gk, int64_t gv, kf_passes passes,
                          kf_load load)
{
    reduce_v r;
    reduce_defaults(&r);
    r.dtype = t;
    r.op = op;
    r.algorithm = KF_ALG_SHUFFLE;
    r.unroll = KF_UNROLL_FULL;
    r.block_size = bs;
    r.elements_per_thread = ept;
    r.vector_width = vw;
    r.grid.kind = gk;
    r.grid.value = gv;
    r.passes = passes;
    r.load = load;
    kf_variant v;
    reduce_encode(&r, "", &v);
    char why[256];
    ck_assert_msg(space_check_variant(&v, NULL, why, sizeof why) == 0, "%s", why);
    return v;
}

// ---------------------------------------------------------------------------
// several variants in one translation unit

START_TEST(undefs_once_each)
{
    strbuf b = {0};
    codegen_undefs(&b, "#define A 1\n  #  define B(x) x\n#define A 2\n#ifndef C\n#define C\n#endif\n"
                       "int x; // #define D\n#defined E\n");
    ck_assert_str_eq(b.s, "#undef A\n#undef B\n#undef C\n");
    sb_free(&b);
}
END_TEST

START_TEST(suffixes_distinct)
{
    kf_variant vs[5];
    for (int i = 0; i < 5; i++)
        variant_defaults(&vs[i], family_find("reduce"));
    snprintf(vs[0].name, sizeof vs[0].name, "reduce6");
    snprintf(vs[1].name, sizeof vs[1].name, "a-b.c");
    snprintf(vs[2].name, sizeof vs[2].name, "a_b_c");  /* the same identifier as a-b.c */
    vs[3].name[0] = '\0';                               /* none: v3 */
    snprintf(vs[4].name, sizeof vs[4].name, "v3");     /* meets the unnamed one's v3 */
    const char *want[] = {"reduce6", "a_b_c_1", "a_b_c_2", "v3", "v3_4"};
    for (int i = 0; i < 5; i++) {
        char s[96];
        codegen_suffix(vs, 5, i, s, sizeof s);
        ck_assert_str_eq(s, want[i]);
    }
}
END_TEST

/* Every seed kernel in one file: it compiles, each kernel under its name. */
START_TEST(multi_source_compiles)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/configs/seeds.json", srcdir());
    kf_config c;
    kf_space s;
    ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(space_expand(&c, NULL, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_ge(s.nvariants, 10);
    char *src = codegen_multi_source(s.variants, s.nvariants, err, sizeof err);
    ck_assert_msg(src != NULL, "%s", err);
    size_t len;
    void *cubin = nvrtc(src, &len);
    for (int i = 0; i < s.nvariants; i++) {
        char name[128];
        snprintf(name, sizeof name, "kf_reduce_%s", s.variants[i].name);
        ck_assert_msg(strstr(src, name) != NULL, "%s not named in the source", name);
        ck_assert_msg(has_name(cubin, len, name), "no kernel %s in the cubin", name);
    }
    free(cubin);
    free(src);
    /* one variant: exactly its own source, as kforge run compiles it */
    src = codegen_multi_source(s.variants, 1, err, sizeof err);
    char *own = codegen_source(&s.variants[0], err, sizeof err);
    ck_assert_ptr_nonnull(strstr(src, own));
    ck_assert_ptr_null(strstr(src, "namespace"));
    free(own);
    free(src);
    space_free(&s);
    config_free(&c);
}
END_TEST

// ---------------------------------------------------------------------------
// export

/* The entries of the host API test: every grid kind and every passes kind
 * at sizes 2^10, 2^13, ... (one kernel shared by two grids). */
#define NE 8
static void entries(kf_dtype t, kf_op op, kf_export_entry *e)
{
    kf_variant vs[NE] = {
        variant(t, op, 256, 2, 4, KF_GRID_AUTO, 0, KF_PASSES_LAST_BLOCK, KF_LOAD_PLAIN),
        variant(t, op, 128, 4, 2, KF_GRID_BLOCKS, 7, KF_PASSES_MULTI_KERNEL, KF_LOAD_STREAM),
        variant(t, op, 512, 2, 4, KF_GRID_AUTO, 0, KF_PASSES_ATOMIC, KF_LOAD_LDG),
        variant(t, op, 64, 1, 1, KF_GRID_AUTO, 0, KF_PASSES_MULTI_KERNEL, KF_LOAD_PLAIN),
        variant(t, op, 256, 4, 4, KF_GRID_WAVES, 1, KF_PASSES_LAST_BLOCK, KF_LOAD_STREAM),
        variant(t, op, 256, 4, 4, KF_GRID_WAVES, 2, KF_PASSES_LAST_BLOCK, KF_LOAD_STREAM),  /* k of the above */
        variant(t, op, 1024, 4, 4, KF_GRID_PER_SM, 3, KF_PASSES_ATOMIC, KF_LOAD_PLAIN),
        variant(t, op, 32, 2, 1, KF_GRID_WAVES, 4, KF_PASSES_MULTI_KERNEL, KF_LOAD_PLAIN),
    };
    for (int i = 0; i < NE; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].v = vs[i];
        e[i].shape.d[0] = (int64_t)1 << (10 + 3 * i);
        e[i].median_ms = 0.001 * (i + 1);
        e[i].gbps = 100;
        e[i].deterministic = e[i].v.p[RP_PASSES] != KF_PASSES_ATOMIC;
    }
}

static const kf_export_info info = {.device = "Test GPU \"X\" \\ 1", .cc_major = 9, .sms = 132,
                                    .command = "kforge export --dtype float32 --op sum", .date = "2026-11-23"};

START_TEST(header_text_and_refusals)
{
    kf_export_entry e[NE];
    entries(KF_FLOAT32, KF_OP_SUM, e);
    char *h = reduce_export_source(e, NE, &info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    const char *want[] = {
        "size_t kforge_reduce_float32_sum_workspace(size_t n)",
        "kforge_reduce_float32_sum_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)",
        "kforge_reduce_float32_sum(const float *in, size_t n, float *out, void *workspace, size_t workspace_bytes, "
        "cudaStream_t stream)",
        "#define KFORGE_REDUCE_FLOAT32_SUM_TUNED_DEVICE \"Test GPU \\\"X\\\" \\\\ 1\"",
        "#define KFORGE_REDUCE_FLOAT32_SUM_DETERMINISTIC 0",
        "Tuned on Test GPU \"X\"   1 (compute capability 9.0, 132 SMs).  It works, untuned,",
        "#if !defined(__CUDACC_RTC__)",
        /* boundaries: 2^10 | 2^13 from 2^11.5 rounded up: 2897 (2896^2 < 2^23 <= 2897^2) */
        "    {0ull, 0},\n    {2897ull, 1},\n    {23171ull, 2},",
        "k5 shuffle/bs1024/ept4/full/v4/3xSM/atomic",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(h, want[i]) != NULL, "expected in the header: %s", want[i]);
    /* two grids of one kernel share it: 7 kernels for 8 entries */
    ck_assert_ptr_nonnull(strstr(h, "kforge_reduce_float32_sum_k6_ns"));
    ck_assert_ptr_null(strstr(h, "kforge_reduce_float32_sum_k7_ns"));
    ck_assert_ptr_null(strstr(h, "@P@"));
    ck_assert_ptr_null(strstr(h, "@TABLES@"));
    free(h);

    /* out of order, mixed ops: refused */
    kf_export_entry x = e[0];
    e[0] = e[1];
    e[1] = x;
    ck_assert_ptr_null(reduce_export_source(e, NE, &info, err, sizeof err));
    entries(KF_FLOAT32, KF_OP_SUM, e);
    e[3].v.p[RP_OP] = KF_OP_MAX;
    ck_assert_ptr_null(reduce_export_source(e, NE, &info, err, sizeof err));
    ck_assert_ptr_null(reduce_export_source(e, 0, &info, err, sizeof err));
}
END_TEST

/* The kernels compile with NVRTC, as extern "C" names, for several types. */
START_TEST(header_compiles_with_nvrtc)
{
    static const kf_dtype ts[] = {KF_FLOAT32, KF_INT64, KF_FLOAT64, KF_UINT32};
    static const kf_op ops[] = {KF_OP_SUM, KF_OP_MAX, KF_OP_PROD, KF_OP_AND};
    for (int i = 0; i < 4; i++) {
        kf_export_entry e[NE];
        entries(ts[i], ops[i], e);
        char *h = reduce_export_source(e, NE, &info, err, sizeof err);
        ck_assert_msg(h != NULL, "%s", err);
        size_t len;
        void *cubin = nvrtc(h, &len);
        char name[96];
        for (int k = 0; k < 7; k++) {
            snprintf(name, sizeof name, "kforge_reduce_%s_%s_k%d", kf_dtype_names[ts[i]], kf_op_names[ops[i]], k);
            ck_assert_msg(has_name(cubin, len, name), "no kernel %s", name);
        }
        snprintf(name, sizeof name, "kforge_reduce_%s_%s_init", kf_dtype_names[ts[i]], kf_op_names[ops[i]]);
        ck_assert_msg(has_name(cubin, len, name), "no kernel %s", name);
        free(cubin);
        free(h);
    }
}
END_TEST

/* The launches the host API makes, parsed from the harness's output. */
typedef struct {
    int block;
    unsigned long long grid, in, n, out, scratch, ticket;
} launch;

/* The entry nearest n on a log scale (ties: the larger), as kforge best
 * picks. */
static int nearest(const kf_export_entry *e, int ne, unsigned long long n)
{
    int i = 0;
    while (i + 1 < ne && (unsigned __int128)n * n >= (unsigned __int128)(uint64_t)e[i].shape.d[0] *
                                                            (uint64_t)e[i + 1].shape.d[0])
        i++;
    return i;
}

static void check_plan(const char *dir, const char *harness, const kf_export_entry *e, int sms, int occ,
                       size_t es)
{
    static const unsigned long long ns[] = {1, 2, 33, 1000, 2896, 2897, 4095, 65537, 100003, 1 << 20, 3000017,
                                            (1 << 22) + 1, 1 << 25, 50000017, (1ULL << 31) + 5};
    char cmd[2048], outp[1100];
    snprintf(outp, sizeof outp, "%s/plan.txt", dir);
    int k = snprintf(cmd, sizeof cmd, "KFORGE_STUB_SMS=%d KFORGE_STUB_OCC=%d '%s'", sms, occ, harness);
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        k += snprintf(cmd + k, sizeof cmd - (size_t)k, " %llu", ns[i]);
    snprintf(cmd + k, sizeof cmd - (size_t)k, " > '%s'", outp);
    ck_assert_int_eq(system(cmd), 0);
    FILE *f = fopen(outp, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    const unsigned long long in = 0x1000, out = 0x2000, ws = 0x10000;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strstr(line, "launch init ticket 100000010000 slot 100000010100 out 0"), "%s", line);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "init 0\n");
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        unsigned long long n = ns[i], wsb;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_msg(sscanf(line, "call n %*u workspace %llu", &wsb) == 1, "%s", line);
        launch L[KF_MAX_PASSES];
        int nl = 0;
        while (fgets(line, sizeof line, f) && strncmp(line, "rc ", 3) != 0) {
            ck_assert_int_lt(nl, KF_MAX_PASSES);
            launch *l = &L[nl++];
            ck_assert_msg(sscanf(line, "launch %*s grid %llu block %d in %llx n %llu out %llx scratch %llx ticket %llx",
                                 &l->grid, &l->block, &l->in, &l->n, &l->out, &l->scratch, &l->ticket) == 7,
                          "%s", line);
            ck_assert_msg(strstr(line, "_k") != NULL, "%s", line);
        }
        ck_assert_str_eq(line, "rc 0\n");

        /* kforge's plan for the entry tuned nearest n */
        const kf_export_entry *x = &e[nearest(e, NE, n)];
        reduce_v r;
        reduce_decode(&x->v, &r);
        kf_plan p;
        ck_assert_int_eq(plan_make(&r, (int64_t)n, sms, occ, &p), 0);
        ck_assert_msg(nl == p.npasses, "n %llu: %d launches, kforge plans %d", n, nl, p.npasses);
        unsigned long long top = ws; /* the highest workspace byte used */
        for (int j = 0; j < nl; j++) {
            ck_assert_msg(L[j].grid == (unsigned long long)p.blocks[j] && L[j].n == (unsigned long long)p.n_in[j],
                          "n %llu pass %d: grid %llu over %llu, kforge: %lld over %lld", n, j, L[j].grid, L[j].n,
                          (long long)p.blocks[j], (long long)p.n_in[j]);
            ck_assert_int_eq(L[j].block, r.block_size);
            ck_assert(L[j].in == (j == 0 ? in : L[j - 1].out));
            ck_assert(L[j].ticket == ws);
            if (j == nl - 1)
                ck_assert(L[j].out == out);
            else
                ck_assert(L[j].out >= ws + 512 && L[j].out % 256 == 0 && L[j].out != L[j].in);
            if (L[j].out != out && L[j].out + L[j].grid * es > top)
                top = L[j].out + L[j].grid * es;
        }
        if (r.passes == KF_PASSES_ATOMIC)
            ck_assert(L[0].scratch == ws + 256);
        if (r.passes == KF_PASSES_LAST_BLOCK) {
            ck_assert(L[0].scratch == ws + 512);
            if (L[0].grid > 1)
                top = ws + 512 + L[0].grid * es;
        }
        /* the workspace size it asks for covers what it uses, alignment included */
        ck_assert_msg(top <= ws + wsb - 256 && wsb >= 768, "n %llu: uses %llu bytes, asks for %llu", n, top - ws, wsb);
    }
    fclose(f);
}

START_TEST(host_api_follows_the_plan)
{
    char nvcc[1024];
    const char *cuda = getenv("CUDA");
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", cuda && *cuda ? cuda : "/usr/local/cuda");
    if (access(nvcc, X_OK) != 0) {
        fprintf(stderr, "SKIP: host_api_follows_the_plan: no nvcc at %s\n", nvcc);
        return;
    }
    static const kf_dtype ts[] = {KF_FLOAT32, KF_INT64};
    for (int t = 0; t < 2; t++) {
        char *dir = tmpdir();
        kf_export_entry e[NE];
        entries(ts[t], KF_OP_SUM, e);
        char *h = reduce_export_source(e, NE, &info, err, sizeof err);
        ck_assert_msg(h != NULL, "%s", err);
        char path[1100], harness[1100], cmd[4096];
        snprintf(path, sizeof path, "%s/h.cuh", dir);
        ck_assert_int_eq(kf_write_file_atomic(path, h, strlen(h), err, sizeof err), 0);
        free(h);
        snprintf(harness, sizeof harness, "%s/harness", dir);
        snprintf(cmd, sizeof cmd,
                 "'%s' -std=c++17 -arch=sm_90 -cudart none -I '%s' -DKFORGE_HEADER='\"h.cuh\"' "
                 "-DKFORGE_FN=kforge_reduce_%s_sum -DKFORGE_T='%s' '%s/tests/export_harness.cu' "
                 "'%s/tests/export_stub.cpp' -o '%s' 2> '%s/nvcc.log'",
                 nvcc, dir, kf_dtype_names[ts[t]], kf_dtype_ctype(ts[t]), srcdir(), srcdir(), harness, dir);
        if (system(cmd) != 0) {
            snprintf(cmd, sizeof cmd, "cat '%s/nvcc.log' >&2", dir);
            ck_assert_int_eq(system(cmd), 0);
            ck_abort_msg("the harness did not compile");
        }
        check_plan(dir, harness, e, 132, 2, kf_dtype_size(ts[t]));
        check_plan(dir, harness, e, 7, 1, kf_dtype_size(ts[t]));
        check_plan(dir, harness, e, 144, 3, kf_dtype_size(ts[t]));
        rmrf(dir);
        free(dir);
    }
}
END_TEST

static Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *tc = tcase_create("multi");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, undefs_once_each);
    tcase_add_test(tc, suffixes_distinct);
    tcase_add_test(tc, multi_source_compiles);
    suite_add_tcase(s, tc);
    tc = tcase_create("export");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, header_text_and_refusals);
    tcase_add_test(tc, header_compiles_with_nvrtc);
    tcase_add_test(tc, host_api_follows_the_plan);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(export_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
