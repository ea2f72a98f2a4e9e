/*
 * test_export.c -- several variants in one translation unit (codegen:
 * #undefs, kernel names, NVRTC compiles the whole file) and the reduce
 * family's export: the header it writes (dispatch boundaries, refusals),
 * NVRTC compiles its kernels, and its host API, run against a stand-in for
 * the CUDA runtime (tests/export_stub.cpp, no GPU), launches exactly what
 * kforge's launch plan (plan.c) launches; the same for the row-wise family
 * (tests/export_rows_harness.cu: the variant the dispatch chooses for each
 * shape is the nearest as kforge best decides it, the launch is rows.c's
 * plan, the workspace's parts never overlap across calls).  Needs NVRTC; the
 * host API tests need nvcc too (skipped, and said so, without it).
 *
 *   make build/tests/test_export && build/tests/test_export
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen.h"
#include "config.h"
#include "family.h"
#include "plan.h"
#include "ranges.h"
#include "reduce.h"
#include "rows.h"
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
/* The header names the oldest compute capability NVRTC 13 compiles for
 * (7.5: CUDA 13 dropped sm_50..sm_72), and compiles there; sm_72 is
 * refused by NVRTC itself. */
START_TEST(header_oldest_arch)
{
    kf_export_entry e[NE];
    entries(KF_FLOAT32, KF_OP_SUM, e);
    char *h = reduce_export_source(e, NE, &info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    ck_assert_msg(strstr(h, "compute capability 7.5 or newer") != NULL, "the header names 7.5");
    ck_assert_msg(strstr(h, "__CUDA_ARCH__ < 750") != NULL, "the header refuses older architectures");
    ck_assert_ptr_null(strstr(h, "7.0 or newer"));
    const char *archs[] = {"sm_75", "sm_72"};
    for (int i = 0; i < 2; i++) {
        rtc_options o = {.lineinfo = false};
        snprintf(o.arch, sizeof o.arch, "%s", archs[i]);
        void *cubin = NULL;
        char *log = NULL;
        size_t len;
        int rc = rtc_compile(h, "kforge_test.cu", &o, &cubin, &len, &log, err, sizeof err);
        if (i == 0)
            ck_assert_msg(rc == 0, "NVRTC sm_75: %s\n%.2000s", err, log ? log : "");
        else
            ck_assert_msg(rc != 0, "NVRTC compiled for sm_72: the oldest architecture is not 7.5");
        free(cubin);
        free(log);
    }
    free(h);
}
END_TEST

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


// ---------------------------------------------------------------------------
// export of the row-wise family

static kf_variant rows_v(kf_dtype t, kf_op op, int map, int group, int bs, int ept, int rpg, kf_grid_kind gk,
                         int64_t gv, int splits, int combine, int load)
{
    kf_variant v;
    variant_defaults(&v, family_find("reduce_rows"));
    v.p[WP_DTYPE] = t;
    v.p[WP_OP] = op;
    v.p[WP_MAP] = map;
    v.p[WP_GROUP] = group;
    v.p[WP_BLOCK_SIZE] = bs;
    v.p[WP_EPT] = ept;
    v.p[WP_RPG] = rpg;
    v.p[WP_GRID] = kf_grid_encode((kf_grid){gk, gv});
    v.p[WP_SPLITS] = splits;
    v.p[WP_COMBINE] = combine;
    v.p[WP_LOAD] = load;
    char why[256];
    ck_assert_msg(space_check_variant(&v, NULL, why, sizeof why) == 0, "%s", why);
    return v;
}

/* Every map (tile twice), every grid kind, both combines, a split of one part (no
 * workspace), two entries of one kernel; ties in the dispatch (2^18 x 16
 * is as near to 2^20 x 4 as to 2^16 x 64, of the same size: the faster;
 * 16 x 2^21 as near to 64 x 2^20 as to 4 x 2^22: the larger). */
#define NR 12
static void rows_entries(kf_dtype t, kf_op op, kf_export_entry *e)
{
    const int A = COMBINE_ATOMIC, L = COMBINE_LAST_BLOCK, PF = LOAD_LDG_PREFETCH;
    struct {
        kf_variant v;
        int64_t rows, cols;
    } x[NR] = {
        {rows_v(t, op, MAP_THREAD, 1, 128, 1, 2, KF_GRID_AUTO, 0, 1, L, LOAD_STREAM), 1 << 20, 4},
        {rows_v(t, op, MAP_GROUP, 8, 256, 2, 1, KF_GRID_WAVES, 2, 1, L, PF), 1 << 16, 64},
        {rows_v(t, op, MAP_BLOCK, 1, 512, 2, 2, KF_GRID_PER_SM, 3, 1, L, PF), 16384, 4096},
        {rows_v(t, op, MAP_SPLIT, 1, 512, 4, 1, KF_GRID_WAVES, 1, 16, A, PF), 64, 1 << 20},
        {rows_v(t, op, MAP_SPLIT, 1, 256, 2, 1, KF_GRID_AUTO, 0, 8, L, PF), 4, 1 << 22},
        {rows_v(t, op, MAP_SPLIT, 1, 1024, 4, 1, KF_GRID_BLOCKS, 100, 1, L, PF), 1024, 65536},
        {rows_v(t, op, MAP_GROUP, 32, 128, 1, 1, KF_GRID_BLOCKS, 7, 1, L, LOAD_PLAIN), 3, 100},
        {rows_v(t, op, MAP_SPLIT, 1, 256, 4, 1, KF_GRID_WAVES, 2, 4, L, PF), 256, 1 << 16},
        {rows_v(t, op, MAP_BLOCK, 1, 512, 2, 2, KF_GRID_AUTO, 0, 1, L, PF), 1 << 21, 32},  /* e2's kernel */
        {rows_v(t, op, MAP_SPLIT, 1, 512, 2, 1, KF_GRID_AUTO, 0, 2, A, PF), 512, 1 << 14},
        /* map tile: rows per tile from cols (a thread per row for padded rows) */
        {rows_v(t, op, MAP_TILE, 1, 256, 4, 1, KF_GRID_WAVES, 1, 1, L, PF), 1 << 24, 2},
        {rows_v(t, op, MAP_TILE, 1, 128, 2, 1, KF_GRID_AUTO, 0, 1, L, LOAD_STREAM), 1 << 20, 13},
    };
    for (int i = 0; i < NR; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].v = x[i].v;
        e[i].shape.d[0] = x[i].rows;
        e[i].shape.d[1] = x[i].cols;
        e[i].shape.d[2] = x[i].cols;
        e[i].median_ms = 0.001 * (i + 1);
        e[i].gbps = 100;
        kf_plan_info p;
        ck_assert_int_eq(family_of(&e[i].v)->plan(&e[i].v, &e[i].shape, 132, 2, &p), 0);
        e[i].deterministic = p.deterministic;
    }
}

static const kf_export_info rows_info = {.device = "Test GPU", .cc_major = 9, .sms = 132,
                                         .command = "kforge export --kernel reduce_rows", .date = "2026-11-24"};

START_TEST(rows_header_text_and_refusals)
{
    kf_export_entry e[NR];
    rows_entries(KF_FLOAT32, KF_OP_SUM, e);
    char *h = family_of(&e[0].v)->export_source(e, NR, &rows_info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    const char *want[] = {
        "// kforge_reduce_rows_float32_sum.cuh -- float32 sum row-wise reduction, tuned by kforge.",
        "Tuned on Test GPU (compute capability 9.0, 132 SMs).  It works, untuned,",
        "on any NVIDIA GPU of compute capability 8.0 or newer",
        "static inline size_t kforge_reduce_rows_float32_sum_workspace(size_t rows)",
        "kforge_reduce_rows_float32_sum_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)",
        "kforge_reduce_rows_float32_sum(const float *in, size_t rows, size_t cols, size_t row_stride, float *out, "
        "void *workspace, size_t workspace_bytes,\n    cudaStream_t stream)",
        "static inline const char *kforge_reduce_rows_float32_sum_variant(size_t rows, size_t cols, size_t row_stride)",
        "#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_DETERMINISTIC 0",
        "KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE __global__ void kforge_reduce_rows_float32_sum_fill(",
        "static const bool any_workspace = true, any_atomic = true;",
        "k2 block/bs512/ept2/rpg2/v4/3xSM",
        "#include <cmath>",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(h, want[i]) != NULL, "expected in the header: %s", want[i]);
    /* e8 shares e2's kernel: 11 kernels for 12 entries */
    ck_assert_ptr_nonnull(strstr(h, "kforge_reduce_rows_float32_sum_k10_ns"));
    ck_assert_ptr_null(strstr(h, "kforge_reduce_rows_float32_sum_k11_ns"));
    ck_assert_ptr_nonnull(strstr(h, "map_tile, 256ull, 4096ull, 4,"));
    ck_assert_ptr_null(strstr(h, "@P@"));
    ck_assert_ptr_null(strstr(h, "@TABLES@"));
    /* each kernel exactly as kforge run compiles it */
    kf_variant v = e[3].v;
    char *own = codegen_source(&v, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(h, own));
    free(own);
    free(h);

    /* no split variant: no workspace; only deterministic ones: said so */
    kf_export_entry f[3] = {e[0], e[1], e[2]};
    h = family_of(&e[0].v)->export_source(f, 3, &rows_info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    ck_assert_ptr_nonnull(strstr(h, "static const bool any_workspace = false, any_atomic = false;"));
    ck_assert_ptr_nonnull(strstr(h, "#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_DETERMINISTIC 1"));
    free(h);

    /* one rows x cols with two strides: two shapes; one shape twice, a
     * stride below cols, mixed ops: refused */
    f[1].shape = f[0].shape;
    f[1].shape.d[2] = f[0].shape.d[1] + 1;
    h = family_of(&e[0].v)->export_source(f, 3, &rows_info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    free(h);
    f[1].shape.d[2] = f[0].shape.d[1];
    ck_assert_ptr_null(family_of(&e[0].v)->export_source(f, 3, &rows_info, err, sizeof err));
    f[1].shape.d[2] = f[0].shape.d[1] - 1;
    ck_assert_ptr_null(family_of(&e[0].v)->export_source(f, 3, &rows_info, err, sizeof err));
    rows_entries(KF_FLOAT32, KF_OP_SUM, e);
    e[4].v.p[WP_OP] = KF_OP_MAX;
    ck_assert_ptr_null(family_of(&e[0].v)->export_source(e, NR, &rows_info, err, sizeof err));
    ck_assert_ptr_null(family_of(&e[0].v)->export_source(e, 0, &rows_info, err, sizeof err));
}
END_TEST

START_TEST(rows_header_compiles_with_nvrtc)
{
    static const kf_dtype ts[] = {KF_FLOAT32, KF_INT64, KF_FLOAT64, KF_UINT32};
    static const kf_op ops[] = {KF_OP_SUM, KF_OP_MAX, KF_OP_PROD, KF_OP_XOR};
    for (int i = 0; i < 4; i++) {
        kf_export_entry e[NR];
        rows_entries(ts[i], ops[i], e);
        char *h = family_of(&e[0].v)->export_source(e, NR, &rows_info, err, sizeof err);
        ck_assert_msg(h != NULL, "%s", err);
        size_t len;
        void *cubin = nvrtc(h, &len);
        char name[96];
        for (int k = 0; k < 9; k++) {
            snprintf(name, sizeof name, "kforge_reduce_rows_%s_%s_k%d", kf_dtype_names[ts[i]], kf_op_names[ops[i]], k);
            ck_assert_msg(has_name(cubin, len, name), "no kernel %s", name);
        }
        snprintf(name, sizeof name, "kforge_reduce_rows_%s_%s_fill", kf_dtype_names[ts[i]], kf_op_names[ops[i]]);
        ck_assert_msg(has_name(cubin, len, name), "no kernel %s", name);
        free(cubin);
        free(h);
    }
}
END_TEST

/* The entry kforge best gives for rows x cols with stride (tunedb_lookup's
 * rule, family.h: shape_nearer). */
static int rows_nearest(const kf_export_entry *e, int ne, int64_t rows, int64_t cols, int64_t stride)
{
    const kf_family *f = family_of(&e[0].v);
    kf_shape q = {{rows, cols, stride}};
    int pick = -1;
    double pd = INFINITY, ps = 0, pm = INFINITY;
    for (int i = 0; i < ne; i++) {
        double d, sz;
        ck_assert(shape_log_distance(f, &e[i].shape, &q, &d, &sz));
        if (shape_nearer(d, sz, e[i].median_ms, pd, ps, pm)) {
            pick = i;
            pd = d;
            ps = sz;
            pm = e[i].median_ms;
        }
    }
    return pick;
}

typedef struct {
    unsigned long long lo, hi;
    char kind; /* 'T' tickets, 'A' atomic partials, 'L' last-block partials */
} span;

/* The workspace part [lo, hi) of kind meets none of another kind. */
static void no_overlap(const span *s, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (s[i].kind != s[j].kind)
                ck_assert_msg(s[i].hi <= s[j].lo || s[j].hi <= s[i].lo, "%c [%llx, %llx) meets %c [%llx, %llx)",
                              s[i].kind, s[i].lo, s[i].hi, s[j].kind, s[j].lo, s[j].hi);
}

static unsigned long long off_of(const char *s) { return strcmp(s, "-") == 0 ? 0 : strtoull(s, NULL, 16); }

/* Runs the harness on every shape and checks what it launched against
 * kforge's nearest entry and its plan on a GPU of sms multiprocessors and
 * occupancy occ. */
static void rows_check_plan(const char *dir, const char *harness, const kf_export_entry *e, int sms, int occ,
                            size_t es, bool misaligned, bool each)
{
    static const char *const shapes[] = {
        "1x1", "3x100", "2x3", "1x1000000", "64x1048576", "65x1048576/1048577", "16x2097152", "4x4194304",
        "8x8388608", "1024x65536", "1000x65536/65600", "16384x4096", "16385x4095/4099", "65536x64", "70000x63",
        "262144x16", "1048576x4", "1048577x5/7", "16777217x1", "4294967297x1", "2097152x32", "2097152x33/40",
        "256x65536", "300x60000", "512x16384", "100x16384/16385", "0x5", "5x0", "3x7/2", "131072x2048",
        "8589934592x32", "1000000x13", "300001x11", "33554432x3"};
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    char cmd[4096], outp[1100];
    snprintf(outp, sizeof outp, "%s/rplan.txt", dir);
    int k = snprintf(cmd, sizeof cmd, "KFORGE_STUB_SMS=%d KFORGE_STUB_OCC=%d '%s'%s%s", sms, occ, harness,
                     misaligned ? " -m" : "", each ? " -f" : "");
    for (int i = 0; i < nshapes; i++)
        k += snprintf(cmd + k, sizeof cmd - (size_t)k, " %s", shapes[i]);
    snprintf(cmd + k, sizeof cmd - (size_t)k, " > '%s'", outp);
    ck_assert_int_eq(system(cmd), 0);
    FILE *fp = fopen(outp, "r");
    ck_assert_ptr_nonnull(fp);
    const kf_family *fam = family_of(&e[0].v);
    const unsigned long long in = 0x1000 + (misaligned ? es : 0), out = 0x2000, ws = 0x10000 + 40;
    char line[1024], o1[32], o2[32], o3[32], o4[32], name[256];
    unsigned long long bytes, most, fz = 0, fn = 0, fo = 0, fnz = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    ck_assert_msg(sscanf(line, "workspace %llu for %llu", &bytes, &most) == 2, "%s", line);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    if (bytes > 0) {
        /* the init: tickets 0, atomic partials the identity, of the workspace's capacity */
        unsigned g, b;
        ck_assert_msg(sscanf(line, "launch fill grid %u block %u out %31s n %llu zero %31s nzero %llu", &g, &b, o1, &fn,
                             o2, &fnz) == 6, "%s", line);
        fo = off_of(o1);
        fz = off_of(o2);
        ck_assert(fz == (ws + 255) / 256 * 256 && (each || fnz >= most));
        ck_assert(fz + 4 * fnz <= ws + bytes && (fn == 0 || fo + es * fn <= ws + bytes));
        ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    }
    ck_assert_str_eq(line, "init 0\n");
    span sp[2 * 64];
    int nsp = 0;
    for (int i = 0; i < nshapes; i++) {
        unsigned long long rows, cols, stride;
        char label[512];
        ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
        ck_assert_msg(sscanf(line, "call %llu %llu %llu variant %511[^\n]", &rows, &cols, &stride, label) == 4, "%s",
                      line);
        int64_t r1 = rows ? (int64_t)rows : 1, c1 = cols ? (int64_t)cols : 1;
        int j = rows_nearest(e, NR, r1, c1, stride ? (int64_t)stride : c1);
        if (stride == 0)
            stride = cols;
        char st[128], lb[256], want[512];
        shape_text(fam, &e[j].shape, st, sizeof st);
        fam->label(&e[j].v, lb, sizeof lb);
        snprintf(want, sizeof want, " %s, tuned at %s on Test GPU", lb, st);
        ck_assert_msg(strstr(label, want) != NULL, "%s: variant %s, kforge best's is %s", shapes[i], label, want);
        /* _workspace_for: 0 unless the variant splits rows; no more than
         * _workspace of the most rows */
        unsigned long long need;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
        ck_assert_msg(sscanf(line, "need %llu", &need) == 1, "%s", line);
        bool splits_rows = e[j].v.p[WP_MAP] == MAP_SPLIT && e[j].v.p[WP_SPLITS] > 1;
        ck_assert_msg((need > 0) == (splits_rows && rows > 0 && cols > 0) && need <= bytes, "%s: need %llu of %llu",
                      shapes[i], need, bytes);
        ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
        if (rows == 0) {
            ck_assert_str_eq(line, "rc 0\n");
            continue;
        }
        if (cols == 0) {
            unsigned g, b;
            unsigned long long n, nz;
            ck_assert_msg(sscanf(line, "launch fill grid %u block %u out %31s n %llu zero %31s nzero %llu", &g, &b, o1,
                                 &n, o2, &nz) == 6, "%s", line);
            ck_assert(off_of(o1) == out && n == rows && strcmp(o2, "-") == 0 && nz == 0);
            ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
            ck_assert_str_eq(line, "rc 0\n");
            continue;
        }
        unsigned grid, block;
        long long lr, lc, ls;
        int splits;
        ck_assert_msg(sscanf(line, "launch %255s grid %u block %u in %31s rows %lld cols %lld stride %lld out %31s "
                                   "partial %31s tickets %31s splits %d",
                             name, &grid, &block, o1, &lr, &lc, &ls, o2, o3, o4, &splits) == 11,
                      "%s: %s", shapes[i], line);
        char kname[64];
        snprintf(kname, sizeof kname, "_k%d_ns", atoi(label + 1));
        ck_assert_msg(strstr(name, kname) != NULL, "%s: launched %s, the variant is %s", shapes[i], name, label);
        ck_assert(off_of(o1) == in && off_of(o2) == out);
        ck_assert(lr == (long long)rows && lc == (long long)cols && ls == (long long)stride);

        /* kforge's plan of that variant for this shape */
        const kf_variant *v = &e[j].v;
        kf_shape s = {{(int64_t)rows, (int64_t)cols, (int64_t)stride}};
        kf_plan_info p;
        ck_assert_int_eq(fam->plan(v, &s, sms, occ, &p), 0);
        ck_assert_msg(grid == (unsigned long long)p.blocks, "%s: grid %u, kforge plans %lld", shapes[i], grid,
                      (long long)p.blocks);
        ck_assert_int_eq(block, (int)v->p[WP_BLOCK_SIZE]);
        ck_assert_int_eq(splits, v->p[WP_MAP] == MAP_SPLIT ? (int)v->p[WP_SPLITS] : 1);
        bool uses = v->p[WP_MAP] == MAP_SPLIT && v->p[WP_SPLITS] > 1;
        if (!uses) {
            ck_assert_msg(strcmp(o3, "-") == 0 && strcmp(o4, "-") == 0, "%s: %s", shapes[i], line);
        } else {
            unsigned long long pa = off_of(o3), tk = off_of(o4);
            bool atomic = v->p[WP_COMBINE] == COMBINE_ATOMIC;
            unsigned long long np = atomic ? rows : rows + grid - 1;
            ck_assert(tk == fz && tk + 4 * rows <= fz + 4 * fnz);   /* tickets the init set to 0 */
            if (atomic)                                             /* partials it set to the identity */
                ck_assert(pa == fo && rows <= fn);
            ck_assert(tk >= ws && pa >= ws && pa + np * es <= ws + bytes && pa % 256 == 0);
            sp[nsp++] = (span){tk, tk + 4 * rows, 'T'};
            sp[nsp++] = (span){pa, pa + np * es, atomic ? 'A' : 'L'};
        }
        ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
        ck_assert_msg(strcmp(line, "rc 0\n") == 0, "%s: %s", shapes[i], line);
    }
    ck_assert_ptr_null(fgets(line, sizeof line, fp));
    fclose(fp);
    /* the parts every call used: last-block partials (written, never
     * reset) never where another call keeps tickets or atomic partials */
    if (fn > 0)
        sp[nsp++] = (span){fo, fo + es * fn, 'A'};
    no_overlap(sp, nsp);
}

static char *rows_harness(const char *dir, const kf_export_entry *e, int n, kf_dtype t, kf_op op)
{
    char *h = family_of(&e[0].v)->export_source(e, n, &rows_info, err, sizeof err);
    ck_assert_msg(h != NULL, "%s", err);
    char path[1100], cmd[4096];
    snprintf(path, sizeof path, "%s/h.cuh", dir);
    ck_assert_int_eq(kf_write_file_atomic(path, h, strlen(h), err, sizeof err), 0);
    free(h);
    char *harness = malloc(1100);
    snprintf(harness, 1100, "%s/rharness", dir);
    snprintf(cmd, sizeof cmd,
             "'%s/bin/nvcc' -std=c++17 -arch=sm_90 -cudart none -I '%s' -DKFORGE_HEADER='\"h.cuh\"' "
             "-DKFORGE_FN=kforge_reduce_rows_%s_%s -DKFORGE_T='%s' '%s/tests/export_rows_harness.cu' "
             "'%s/tests/export_stub.cpp' -o '%s' 2> '%s/nvcc.log'",
             getenv("CUDA") && *getenv("CUDA") ? getenv("CUDA") : "/usr/local/cuda", dir, kf_dtype_names[t],
             kf_op_names[op], kf_dtype_ctype(t), srcdir(), srcdir(), harness, dir);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s/nvcc.log' >&2", dir);
        ck_assert_int_eq(system(cmd), 0);
        ck_abort_msg("the row-wise harness did not compile");
    }
    return harness;
}

static bool have_nvcc(const char *test)
{
    char nvcc[1024];
    const char *cuda = getenv("CUDA");
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", cuda && *cuda ? cuda : "/usr/local/cuda");
    if (access(nvcc, X_OK) == 0)
        return true;
    fprintf(stderr, "SKIP: %s: no nvcc at %s\n", test, nvcc);
    return false;
}

START_TEST(rows_host_api_follows_the_plan)
{
    if (!have_nvcc("rows_host_api_follows_the_plan"))
        return;
    static const kf_dtype ts[] = {KF_FLOAT32, KF_FLOAT64};
    static const kf_op ops[] = {KF_OP_SUM, KF_OP_MIN};
    for (int t = 0; t < 2; t++) {
        char *dir = tmpdir();
        kf_export_entry e[NR];
        rows_entries(ts[t], ops[t], e);
        char *harness = rows_harness(dir, e, NR, ts[t], ops[t]);
        rows_check_plan(dir, harness, e, 132, 2, kf_dtype_size(ts[t]), false, false);
        rows_check_plan(dir, harness, e, 7, 1, kf_dtype_size(ts[t]), true, false);
        rows_check_plan(dir, harness, e, 144, 3, kf_dtype_size(ts[t]), false, false);
        rows_check_plan(dir, harness, e, 132, 2, kf_dtype_size(ts[t]), true, true);
        free(harness);
        rmrf(dir);
        free(dir);
    }
}
END_TEST

/* Refusals: a workspace too small, pointers not aligned to the element,
 * more than 2^47 elements; and a header with no split variant asks for no
 * workspace. */
START_TEST(rows_host_api_refusals)
{
    if (!have_nvcc("rows_host_api_refusals"))
        return;
    char *dir = tmpdir();
    kf_export_entry e[NR];
    rows_entries(KF_FLOAT32, KF_OP_SUM, e);
    char *harness = rows_harness(dir, e, NR, KF_FLOAT32, KF_OP_SUM);
    char cmd[2048], line[1024];
    /* 64 x 2^20 is split 16 ways: its workspace holds 64 rows, not 65 */
    snprintf(cmd, sizeof cmd, "'%s' 64x1048576 > '%s/a.txt' && '%s' -b $(sed -n 's/^workspace \\([0-9]*\\).*/\\1/p' "
                              "'%s/a.txt') 64x1048576 65x1048576 1024x1 > '%s/b.txt'",
             harness, dir, harness, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/b.txt", dir);
    FILE *fp = fopen(cmd, "r");
    ck_assert_ptr_nonnull(fp);
    int rcs[3], nrc = 0;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, "rc %d", &rcs[nrc]) == 1)
            nrc++;
    fclose(fp);
    ck_assert_int_eq(nrc, 3);
    ck_assert_int_eq(rcs[0], 0);
    ck_assert_int_eq(rcs[1], 1); /* cudaErrorInvalidValue */
    ck_assert_int_eq(rcs[2], 0); /* no workspace needed */
    rmrf(dir);
    free(dir);
    free(harness);

    dir = tmpdir();
    harness = rows_harness(dir, e, 3, KF_FLOAT32, KF_OP_SUM);
    snprintf(cmd, sizeof cmd, "'%s' 1000x1000 > '%s/c.txt'", harness, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/c.txt", dir);
    fp = fopen(cmd, "r");
    ck_assert_ptr_nonnull(fp);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    ck_assert_str_eq(line, "workspace 0 for 1000\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
    ck_assert_str_eq(line, "init 0\n");
    fclose(fp);
    rmrf(dir);
    free(dir);
    free(harness);
}
END_TEST

/* What was measured per dispatch range (ranges.h): neighbours served by
 * one variant share a range, the boundaries are the header's, and a range
 * reaching between two tuned sizes more than 2x apart with nothing
 * measured between says so; one measured between closes the gap. */
START_TEST(range_lines)
{
    kf_range_point p[] = {{1024, false, "A"}, {4096, true, "A"}, {16384, false, "B"},
                          {32768, false, "B"}, {1 << 20, false, "C"}};
    strbuf b = {0};
    kf_range_lines(&b, "  ", "n", p, 5);
    ck_assert_str_eq(b.s, "  n < 2^13: measured at 2^10 (tuned), 2^12 (between) -> A\n"
                          "  n in [2^13, 185364): measured at 2^14 (tuned), 2^15 (tuned) -> B; nearest tuned size, "
                          "not measured in between (2^15 .. 2^20)\n"
                          "  n >= 185364: measured at 2^20 (tuned) -> C; nearest tuned size, not measured in "
                          "between (2^15 .. 2^20)\n");
    ck_assert_int_eq(kf_range_unmeasured(p, 5), 1);
    sb_free(&b);
    p[3].between = true; /* 2^15 measured between 2^14 and 2^20: no gap left */
    ck_assert_int_eq(kf_range_unmeasured(p, 5), 0);
    kf_range_lines(&b, "", "n", p, 5);
    ck_assert_ptr_null(strstr(b.s, "not measured"));
    sb_free(&b);
    kf_range_lines(&b, "", "width", p, 1);
    ck_assert_str_eq(b.s, "every width: measured at 2^10 (tuned) -> A\n");
    sb_free(&b);
    /* the header's boundary: the smallest m with m * m >= a * b */
    ck_assert_uint_eq(kf_size_boundary(1024, 8192), 2897);
    ck_assert_uint_eq(kf_size_boundary(1024, 4096), 2048);
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
    tcase_add_test(tc, range_lines);
    tcase_add_test(tc, header_compiles_with_nvrtc);
    tcase_add_test(tc, header_oldest_arch);
    tcase_add_test(tc, host_api_follows_the_plan);
    suite_add_tcase(s, tc);
    tc = tcase_create("rows");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, rows_header_text_and_refusals);
    tcase_add_test(tc, rows_header_compiles_with_nvrtc);
    tcase_add_test(tc, rows_host_api_follows_the_plan);
    tcase_add_test(tc, rows_host_api_refusals);
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
