/*
 * test_codegen.c -- generated CUDA source (header comment, #defines, the
 * macros of every enumerated value of every family and their agreement with
 * the C enums and the templates, what the source depends on, the
 * KFORGE_PLANT hook), reduce launch plans (pure
 * arithmetic), and NVRTC compilation of every variant of every shipped
 * config plus a sample across dtypes, ops, algorithms, vector widths and
 * load flavours (up to 16 sources in one translation unit, as kforge gen
 * and export wrap several; the shell suites compile theirs alone, as kforge
 * run does).  Needs NVRTC (the CUDA toolkit), not a GPU.
 *
 *   make build/tests/test_codegen && build/tests/test_codegen
 *   (run from the repository root, or set KFORGE_SRCDIR to it)
 */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

#define ck_contains(hay, needle)                                                                          \
    ck_assert_msg(strstr((hay), (needle)) != NULL, "expected \"%s\" in the text", (needle))

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

static int reduce_family(void)
{
    int f = family_find("reduce");
    ck_assert_int_ge(f, 0);
    return f;
}

/* The reduce family's defaults, resolved (passes auto -> multi_kernel). */
static kf_variant base(void)
{
    kf_variant v;
    variant_defaults(&v, reduce_family());
    space_resolve(&v);
    return v;
}

static reduce_v rbase(void)
{
    kf_variant v = base();
    reduce_v r;
    reduce_decode(&v, &r);
    return r;
}

static int64_t grid(kf_grid_kind kind, int64_t value)
{
    return kf_grid_encode((kf_grid){kind, value});
}

static char *gen(const kf_variant *v)
{
    char e[512] = "";
    char *s = codegen_source(v, e, sizeof e);
    ck_assert_msg(s != NULL, "codegen: %s", e);
    return s;
}

/* The value of reduce parameter a in v, as the header comment spells it
 * (from the name tables, not through the parameter table). */
static void axis_value(const kf_variant *var, int a, char *buf, size_t len)
{
    reduce_v vv, *v = &vv;
    reduce_decode(var, v);
    switch ((reduce_param)a) {
    case RP_DTYPE: snprintf(buf, len, "%s", kf_dtype_names[v->dtype]); break;
    case RP_OP: snprintf(buf, len, "%s", kf_op_names[v->op]); break;
    case RP_ACC_DTYPE: snprintf(buf, len, "%s", kf_acc_type_names[v->acc_dtype]); break;
    case RP_ALGORITHM: snprintf(buf, len, "%s", kf_algorithm_names[v->algorithm]); break;
    case RP_BLOCK_SIZE: snprintf(buf, len, "%d", v->block_size); break;
    case RP_ELEMENTS_PER_THREAD: snprintf(buf, len, "%d", v->elements_per_thread); break;
    case RP_UNROLL: snprintf(buf, len, "%s", kf_unroll_names[v->unroll]); break;
    case RP_VECTOR_WIDTH: snprintf(buf, len, "%d", v->vector_width); break;
    case RP_PASSES: snprintf(buf, len, "%s", kf_passes_names[v->passes]); break;
    case RP_LAYOUT: snprintf(buf, len, "%s", kf_layout_names[v->layout]); break;
    case RP_ACCUMULATOR: snprintf(buf, len, "%s", kf_accum_names[v->accumulator]); break;
    case RP_WARP_REDUCE: snprintf(buf, len, "%s", kf_warp_reduce_names[v->warp_reduce]); break;
    case RP_LOAD: snprintf(buf, len, "%s", kf_load_names[v->load]); break;
    default: snprintf(buf, len, "?"); break;
    }
}

/* The opening comment: the leading lines that start with "//". */
static char *opening_comment(const char *src)
{
    const char *p = src;
    while (strncmp(p, "//", 2) == 0) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return strndup(src, (size_t)(p - src));
}

/* Checks "//   <key>   <value>" is a line of the comment. */
static void comment_has(const char *comment, const char *key, const char *value)
{
    bool found = false;
    const char *p = comment;
    while (*p && !found) {
        char k[128], val[128];
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)l, p);
        if (sscanf(line, "// %127s %127s", k, val) == 2 && strcmp(k, key) == 0) {
            ck_assert_msg(strcmp(val, value) == 0, "comment: %s is %s, expected %s", key, val, value);
            found = true;
        }
        p += l + (nl ? 1 : 0);
    }
    ck_assert_msg(found, "the opening comment does not name %s:\n%s", key, comment);
}

// ---------------------------------------------------------------------------
// source text

static kf_variant unusual(void)
{
    reduce_v r = rbase();
    r.dtype = KF_UINT32;
    r.op = KF_OP_XOR;
    r.algorithm = KF_ALG_SEQUENTIAL;
    r.block_size = 512;
    r.elements_per_thread = 8;
    r.unroll = KF_UNROLL_LAST_WARP;
    r.vector_width = 4;
    r.grid = (kf_grid){KF_GRID_WAVES, 2};
    r.passes = KF_PASSES_LAST_BLOCK;
    r.layout = KF_LAYOUT_GRID;
    r.accumulator = KF_ACC_SHARED;
    r.warp_reduce = KF_WARP_INTRINSIC;
    r.load = KF_LOAD_LDG_PREFETCH;
    kf_variant v;
    reduce_encode(&r, "odd_one", &v);
    return v;
}

START_TEST(header_names_every_parameter)
{
    kf_variant vs[4];
    vs[0] = base();
    vs[1] = unusual();
    vs[2] = base();
    vs[2].p[RP_DTYPE] = KF_FLOAT64;
    vs[2].p[RP_OP] = KF_OP_PROD;
    vs[2].p[RP_ALGORITHM] = KF_ALG_ATOMIC_SHARED;
    vs[2].p[RP_PASSES] = KF_PASSES_ATOMIC;
    vs[2].p[RP_LOAD] = KF_LOAD_STREAM;
    vs[2].p[RP_VECTOR_WIDTH] = 2;
    vs[3] = base();
    vs[3].p[RP_DTYPE] = KF_INT64;
    vs[3].p[RP_ALGORITHM] = KF_ALG_INTERLEAVED_STRIDED;
    vs[3].p[RP_UNROLL] = KF_UNROLL_FULL;
    vs[3].p[RP_LOAD] = KF_LOAD_LDG;
    vs[3].p[RP_BLOCK_SIZE] = 32;
    const kf_family *f = kf_families[reduce_family()];
    for (int i = 0; i < 4; i++) {
        char why[256];
        ck_assert_msg(space_check_variant(&vs[i], NULL, why, sizeof why) == 0, "%d: %s", i, why);
        char *src = gen(&vs[i]);
        ck_assert(strncmp(src, "// kforge " KF_VERSION, 10 + strlen(KF_VERSION)) == 0);
        ck_assert(strncmp(src, "// kforge " KF_VERSION " generated reduce kernel\n",
                          strlen("// kforge " KF_VERSION " generated reduce kernel\n")) == 0);
        char *c = opening_comment(src);
        comment_has(c, "kernel", "reduce");
        for (int a = 0; a < RP_COUNT; a++) {
            if (a == RP_GRID) {
                /* only auto-or-fixed is compiled in; the block count is launch-time */
                comment_has(c, "grid_stride",
                            kf_grid_decode(vs[i].p[RP_GRID]).kind == KF_GRID_AUTO ? "no" : "yes");
                continue;
            }
            char val[64];
            axis_value(&vs[i], a, val, sizeof val);
            comment_has(c, f->params[a].name, val);
        }
        ck_contains(c, "launch-time");
        free(c);
        free(src);
    }
}
END_TEST

START_TEST(defines)
{
    kf_variant v = unusual();
    char *s = gen(&v);
    ck_contains(s, "\n#define KF_T unsigned int\n");
    ck_contains(s, "\n#define KF_ELEM_BYTES 4\n");
    ck_contains(s, "\n#define KF_IS_FLOAT 0\n");
    ck_contains(s, "\n#define KF_IS_SIGNED 0\n");
    ck_contains(s, "\n#define KF_INT32_LIKE 1\n");
    ck_contains(s, "\n#define KF_DTYPE 1 /* uint32 */\n");
    ck_contains(s, "\n#define KF_OP 6 /* xor */\n");
    ck_contains(s, "\n#define KF_ALG 4 /* sequential */\n");
    ck_contains(s, "\n#define KF_BS 512\n");
    ck_contains(s, "\n#define KF_EPT 8\n");
    ck_contains(s, "\n#define KF_UNROLL 1 /* last_warp */\n");
    ck_contains(s, "\n#define KF_VW 4\n");
    ck_contains(s, "\n#define KF_PASSES 3 /* last_block */\n");
    ck_contains(s, "\n#define KF_LAYOUT 1 /* grid */\n");
    ck_contains(s, "\n#define KF_ACC 1 /* shared */\n");
    ck_contains(s, "\n#define KF_WARP 2 /* intrinsic */\n");
    ck_contains(s, "\n#define KF_LOAD 3 /* ldg_prefetch */\n");
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");     /* waves: a fixed grid */
    ck_assert_ptr_null(strstr(s, "KF_PLANT 1"));
    ck_contains(s, "kf_reduce(");   /* the templates follow */
    ck_contains(s, "extern \"C\"");
    free(s);

    v = base();
    v.p[RP_DTYPE] = KF_INT64;
    s = gen(&v);
    ck_contains(s, "\n#define KF_T long long\n");
    ck_contains(s, "\n#define KF_ELEM_BYTES 8\n");
    ck_contains(s, "\n#define KF_IS_SIGNED 1\n");
    ck_contains(s, "\n#define KF_INT32_LIKE 0\n");
    ck_contains(s, "\n#define KF_PASSES 1 /* multi_kernel */\n");
    ck_contains(s, "\n#define KF_GRID_STRIDE 0\n");     /* grid auto: one tile per block */
    free(s);
    v.p[RP_GRID] = grid(KF_GRID_BLOCKS, 2048);
    s = gen(&v);
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");
    free(s);
    v.p[RP_GRID] = grid(KF_GRID_PER_SM, 2);
    s = gen(&v);
    ck_contains(s, "\n#define KF_GRID_STRIDE 1\n");
    free(s);

    /* KF_T is the accumulator: float for bfloat16 and float16 (acc_dtype auto) */
    static const char *const ctype[] = {"int", "unsigned int", "long long", "float", "double", "float", "float"};
    static const int bytes[] = {4, 4, 8, 4, 8, 4, 4};
    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        v = base();
        v.p[RP_DTYPE] = t;
        s = gen(&v);
        char line[128];
        snprintf(line, sizeof line, "\n#define KF_T %s\n#define KF_ELEM_BYTES %d\n#define KF_IS_FLOAT %d\n", ctype[t],
                 bytes[t], kf_dtype_is_float((kf_dtype)t));
        ck_contains(s, line);
        snprintf(line, sizeof line, "\n#define KF_IS_SIGNED %d\n", t == KF_INT32 || t == KF_INT64);
        ck_contains(s, line);
        free(s);
    }
}
END_TEST

/* The numbers codegen writes are the ones the templates test for. */
START_TEST(template_numbering)
{
    kf_variant v = base();
    char *s = gen(&v);
    char line[128];
    for (int a = 0; a < KF_ALG_COUNT; a++) {
        int k = snprintf(line, sizeof line, "#define KF_ALG_");
        for (const char *p = kf_algorithm_names[a]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", a);
        ck_contains(s, line);
    }
    for (int o = 0; o < KF_OP_COUNT; o++) {
        int k = snprintf(line, sizeof line, "#define KF_OP_");
        for (const char *p = kf_op_names[o]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", o);
        ck_contains(s, line);
    }
    for (int u = 0; u < KF_UNROLL_COUNT; u++) {
        int k = snprintf(line, sizeof line, "#define KF_UNROLL_");
        for (const char *p = kf_unroll_names[u]; *p; p++)
            line[k++] = (char)toupper((unsigned char)*p);
        snprintf(line + k, sizeof line - (size_t)k, " %d", u);
        ck_contains(s, line);
    }
    for (int p = 0; p < KF_PASSES_COUNT; p++) {
        int k = snprintf(line, sizeof line, "#define KF_PASSES_");
        for (const char *q = kf_passes_names[p]; *q; q++)
            line[k++] = (char)toupper((unsigned char)*q);
        snprintf(line + k, sizeof line - (size_t)k, " %d\n", p);
        ck_contains(s, line);
    }
    free(s);
}
END_TEST

/* "last_warp" -> "LAST_WARP": the test's own spelling of a value's macro
 * suffix (not param_macro_suffix). */
static void upper_ident(const char *s, char *buf, size_t len)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        buf[i] = isalnum((unsigned char)s[i]) ? (char)toupper((unsigned char)s[i]) : '_';
    buf[i] = '\0';
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Every comparison "M == X" / "M != X" of enumerated macro M in a template
 * compares with a value name M_..., never a number that could drift. */
static void template_compares_names(const char *tpl, const char *tplname, const char *m)
{
    size_t ml = strlen(m);
    for (const char *p = strstr(tpl, m); p; p = strstr(p + 1, m)) {
        if ((p > tpl && ident_char(p[-1])) || ident_char(p[ml]))
            continue;
        const char *q = p + ml;
        while (*q == ' ' || *q == '\t')
            q++;
        if (!((q[0] == '=' || q[0] == '!') && q[1] == '='))
            continue;
        q += 2;
        while (*q == ' ' || *q == '\t')
            q++;
        ck_assert_msg(strncmp(q, m, ml) == 0 && q[ml] == '_',
                      "template %s compares %s with \"%.20s\", not with a %s_* name", tplname, m, q, m);
    }
}

/* For every enumerated parameter of every family, the generated source
 * #defines each value name with its index (exactly once), and the value
 * itself; every generated macro is defined once, and the templates never
 * redefine one nor compare an enumerated macro with a number. */
START_TEST(enum_value_names_defined)
{
    int checked = 0;
    for (int fi = 0; fi < kf_nfamilies; fi++) {
        const kf_family *f = kf_families[fi];
        kf_variant v;
        variant_defaults(&v, fi);
        space_resolve(&v);
        char why[256];
        ck_assert_msg(space_check_variant(&v, NULL, why, sizeof why) == 0, "%s defaults: %s", f->name, why);
        char *src = gen(&v);
        char head[64];
        snprintf(head, sizeof head, "// kforge %s generated %s kernel\n", KF_VERSION, f->name);
        ck_assert_msg(strncmp(src, head, strlen(head)) == 0, "source does not start with %s", head);

        /* the generated part: everything before the first template */
        const char *common = codegen_template("common");
        const char *own = codegen_template(f->name);
        ck_assert_msg(common && own, "%s: templates missing", f->name);
        const char *tpl_start = strstr(src, common);
        ck_assert_ptr_nonnull(tpl_start);
        char *gpart = strndup(src, (size_t)(tpl_start - src));

        for (int i = 0; i < f->nparams; i++) {
            const kf_param *p = &f->params[i];
            if (p->kind != KF_PK_ENUM || !p->macro)
                continue;   /* not compiled in: the templates never see it */
            for (int k = 0; k < p->count; k++) {
                char suf[64], line[192], def[160];
                upper_ident(p->names[k], suf, sizeof suf);
                snprintf(line, sizeof line, "\n#define %s_%s %d\n", p->macro, suf, k);
                ck_assert_msg(strstr(gpart, line) != NULL, "%s: %s = %s (%d) is not #defined as \"%s\"", f->name,
                              p->name, p->names[k], k, line + 1);
                snprintf(def, sizeof def, "#define %s_%s ", p->macro, suf);
                ck_assert_msg(count_of(src, def) == 1, "%s_%s defined %d times", p->macro, suf, count_of(src, def));
                checked++;
            }
            char line[192];
            snprintf(line, sizeof line, "\n#define %s %d /* %s */\n", p->macro, (int)v.p[i], p->names[v.p[i]]);
            ck_contains(gpart, line);
            template_compares_names(common, "common", p->macro);
            template_compares_names(own, f->name, p->macro);
        }

        /* no generated macro is defined twice, here or in the templates */
        for (const char *d = strstr(gpart, "#define "); d; d = strstr(d + 1, "#define ")) {
            char name[128], def[160];
            if (sscanf(d, "#define %127s", name) != 1)
                continue;
            snprintf(def, sizeof def, "#define %s ", name);
            ck_assert_msg(count_of(gpart, def) == 1, "%s: %s is #defined %d times", f->name, name,
                          count_of(gpart, def));
            ck_assert_msg(count_of(common, def) == 0 && count_of(own, def) == 0,
                          "%s: a template redefines the generated %s", f->name, name);
        }
        free(gpart);
        free(src);
    }
    ck_assert_int_gt(checked, 0);
}
END_TEST

/* The reduce family's value macros carry the numbers of the C enums
 * (reduce.h, kforge.h) the host code uses: a template compares KF_ALG with
 * KF_ALG_SHUFFLE and gets what the planner and the checks meant by it. */
#define CE(x) {#x, x}
START_TEST(reduce_value_macros_match_c_enums)
{
    static const struct {
        const char *macro;
        int value;
    } ce[] = {
        {"KF_DTYPE_INT32", KF_INT32}, {"KF_DTYPE_UINT32", KF_UINT32}, {"KF_DTYPE_INT64", KF_INT64},
        {"KF_DTYPE_FLOAT32", KF_FLOAT32}, {"KF_DTYPE_FLOAT64", KF_FLOAT64},
        {"KF_DTYPE_BFLOAT16", KF_BFLOAT16}, {"KF_DTYPE_FLOAT16", KF_FLOAT16},
        {"KF_ACC_DTYPE_AUTO", KF_ACCT_AUTO}, {"KF_ACC_DTYPE_INPUT", KF_ACCT_INPUT},
        {"KF_ACC_DTYPE_FLOAT32", KF_ACCT_FLOAT32}, {"KF_ACC_DTYPE_FLOAT64", KF_ACCT_FLOAT64},
        CE(KF_OP_SUM), CE(KF_OP_MIN), CE(KF_OP_MAX), CE(KF_OP_PROD), CE(KF_OP_AND), CE(KF_OP_OR), CE(KF_OP_XOR),
        CE(KF_ALG_ATOMIC_GLOBAL), CE(KF_ALG_ATOMIC_SHARED), CE(KF_ALG_INTERLEAVED_DIVERGENT),
        CE(KF_ALG_INTERLEAVED_STRIDED), CE(KF_ALG_SEQUENTIAL), CE(KF_ALG_SHUFFLE), CE(KF_ALG_WARP_INTRINSIC),
        CE(KF_UNROLL_NONE), CE(KF_UNROLL_LAST_WARP), CE(KF_UNROLL_FULL),
        CE(KF_PASSES_AUTO), CE(KF_PASSES_MULTI_KERNEL), CE(KF_PASSES_ATOMIC), CE(KF_PASSES_LAST_BLOCK),
        CE(KF_LAYOUT_BLOCK), CE(KF_LAYOUT_GRID),
        CE(KF_ACC_REGISTER), CE(KF_ACC_SHARED),
        CE(KF_WARP_SHARED), CE(KF_WARP_SHUFFLE), CE(KF_WARP_INTRINSIC),
        CE(KF_LOAD_PLAIN), CE(KF_LOAD_LDG), CE(KF_LOAD_STREAM), CE(KF_LOAD_LDG_PREFETCH),
    };
    /* every value of every enumerated reduce parameter is listed above */
    const kf_family *f = kf_families[reduce_family()];
    int values = 0;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].kind == KF_PK_ENUM)
            values += f->params[i].count;
    ck_assert_int_eq(values, (int)(sizeof ce / sizeof ce[0]));
    ck_assert_int_eq(values, KF_REDUCE_DTYPES + KF_ACCT_COUNT + KF_OP_COUNT + KF_ALG_COUNT + KF_UNROLL_COUNT + KF_PASSES_COUNT +
                                 KF_LAYOUT_COUNT + KF_ACC_COUNT + KF_WARP_COUNT + KF_LOAD_COUNT);
    kf_variant v = unusual();
    char *s = gen(&v);
    for (size_t i = 0; i < sizeof ce / sizeof ce[0]; i++) {
        char line[128];
        snprintf(line, sizeof line, "\n#define %s %d\n", ce[i].macro, ce[i].value);
        ck_contains(s, line);
    }
    free(s);
}
END_TEST
#undef CE

START_TEST(source_depends_on_compile_time_parameters_only)
{
    kf_variant a = base();
    a.p[RP_DTYPE] = KF_INT32;
    a.p[RP_UNROLL] = KF_UNROLL_FULL;
    a.p[RP_GRID] = grid(KF_GRID_BLOCKS, 2048);
    char *sa = gen(&a);

    /* a fixed grid's size and kind, and the name: the same source */
    kf_grid grids[] = {{KF_GRID_BLOCKS, 64}, {KF_GRID_PER_SM, 4}, {KF_GRID_WAVES, 1}, {KF_GRID_WAVES, 2}};
    for (int i = 0; i < 4; i++) {
        kf_variant b = a;
        b.p[RP_GRID] = kf_grid_encode(grids[i]);
        snprintf(b.name, sizeof b.name, "other%d", i);
        char *sb = gen(&b);
        ck_assert_msg(strcmp(sa, sb) == 0, "grid %d/name changed the source", i);
        free(sb);
    }
    /* auto is compiled in (no grid-stride loop), with any name */
    kf_variant au = a, au2 = a;
    au.p[RP_GRID] = grid(KF_GRID_AUTO, 0);
    au2.p[RP_GRID] = au.p[RP_GRID];
    snprintf(au2.name, sizeof au2.name, "named");
    char *su = gen(&au), *su2 = gen(&au2);
    ck_assert_msg(strcmp(sa, su) != 0, "grid auto and a fixed grid share a source");
    ck_assert_str_eq(su, su2);
    free(su);
    free(su2);

    /* any other axis: a different source */
    const kf_family *f = kf_families[reduce_family()];
    for (int ax = 0; ax < RP_COUNT; ax++) {
        if (ax == RP_GRID)
            continue;
        if (ax == RP_ACC_DTYPE) { /* float32 or float64 for a bfloat16 input: KF_T float or double */
            kf_variant h32 = a, h64 = a;
            h32.p[RP_DTYPE] = h64.p[RP_DTYPE] = KF_BFLOAT16;
            h32.p[RP_ACC_DTYPE] = KF_ACCT_FLOAT32;
            h64.p[RP_ACC_DTYPE] = KF_ACCT_FLOAT64;
            char why[256];
            ck_assert_msg(space_check_variant(&h64, NULL, why, sizeof why) == 0, "acc_dtype: %s", why);
            char *s32 = gen(&h32), *s64 = gen(&h64);
            ck_assert_msg(strcmp(s32, s64) != 0, "changing acc_dtype left the source the same");
            ck_contains(s64, "\n#define KF_T double\n");
            ck_contains(s64, "\n#define KF_IN_T unsigned short\n#define KF_IN_BFLOAT16 1\n");
            free(s32);
            free(s64);
            continue;
        }
        kf_variant b = a;
        int64_t val = -1;
        switch ((reduce_param)ax) {
        case RP_DTYPE: val = KF_UINT32; break;
        case RP_OP: val = KF_OP_MAX; break;
        case RP_ACC_DTYPE: val = KF_ACCT_FLOAT64; break; /* KF_T double */
        case RP_ALGORITHM: val = KF_ALG_SHUFFLE; break;
        case RP_BLOCK_SIZE: val = 512; break;
        case RP_ELEMENTS_PER_THREAD: val = 2; break;
        case RP_UNROLL: val = KF_UNROLL_LAST_WARP; break;
        case RP_VECTOR_WIDTH: val = 2; break;
        case RP_PASSES: val = KF_PASSES_LAST_BLOCK; break;
        case RP_LAYOUT: val = KF_LAYOUT_GRID; break;
        case RP_ACCUMULATOR: val = KF_ACC_SHARED; break;
        case RP_WARP_REDUCE: val = KF_WARP_SHUFFLE; break;
        case RP_LOAD: val = KF_LOAD_LDG; break;
        default: break;
        }
        ck_assert_msg(val >= 0, "no other value for %s", f->params[ax].name);
        ck_assert_msg(val != a.p[ax], "%s: the other value is the same", f->params[ax].name);
        b.p[ax] = val;
        char why[256];
        ck_assert_msg(space_check_variant(&b, NULL, why, sizeof why) == 0, "%s: %s", f->params[ax].name, why);
        char *sb = gen(&b);
        ck_assert_msg(strcmp(sa, sb) != 0, "changing %s left the source the same", f->params[ax].name);
        free(sb);
    }
    free(sa);

    /* generation is deterministic */
    kf_variant u = unusual();
    char *s1 = gen(&u), *s2 = gen(&u);
    ck_assert_str_eq(s1, s2);
    free(s1);
    free(s2);
}
END_TEST

START_TEST(unresolved_passes_refused)
{
    kf_variant v;
    variant_defaults(&v, reduce_family());
    ck_assert_int_eq(v.p[RP_PASSES], KF_PASSES_AUTO);
    char e[256] = "";
    ck_assert_ptr_null(codegen_source(&v, e, sizeof e));
    ck_contains(e, "passes must be resolved");
}
END_TEST

START_TEST(launch_comment)
{
    kf_variant v = unusual();
    char *c = codegen_launch_comment(&v);
    ck_contains(c, "// ===== variant odd_one -- sequential/bs512/ept8/last_warp/v4/2waves/last_block");
    ck_contains(c, "//   name                 odd_one\n");
    ck_contains(c, "//   grid                 {\"waves\": 2}\n");
    free(c);
    v = base();
    v.p[RP_GRID] = grid(KF_GRID_BLOCKS, 2048);
    c = codegen_launch_comment(&v);
    ck_contains(c, "// ===== variant sequential/bs256/ept1/none/v1/2048/multi_kernel\n");
    ck_contains(c, "(none)");
    ck_contains(c, "//   grid                 2048\n");
    free(c);
}
END_TEST

START_TEST(planted)
{
    kf_variant a = base(), b = base(), c = base(), anon = base();
    snprintf(a.name, sizeof a.name, "victim");
    snprintf(b.name, sizeof b.name, "sleeper");
    snprintf(c.name, sizeof c.name, "bystander");

    unsetenv("KFORGE_PLANT");
    ck_assert_int_eq(codegen_planted(&a), 0);
    char *s = gen(&a);
    ck_assert_ptr_null(strstr(s, "#define KF_PLANT"));
    free(s);

    setenv("KFORGE_PLANT", "fault@victim,hang@sleeper,bogus@bystander,fault@", 1);
    ck_assert_int_eq(codegen_planted(&a), 1);
    ck_assert_int_eq(codegen_planted(&b), 2);
    ck_assert_int_eq(codegen_planted(&c), 0);
    ck_assert_int_eq(codegen_planted(&anon), 0);   /* unnamed variants are never planted */
    s = gen(&a);
    ck_contains(s, "\n#define KF_PLANT 1 /* test hook: KFORGE_PLANT */\n");
    free(s);
    s = gen(&b);
    ck_contains(s, "\n#define KF_PLANT 2 ");
    free(s);
    s = gen(&c);
    ck_assert_ptr_null(strstr(s, "#define KF_PLANT"));
    free(s);

    /* names must match whole */
    setenv("KFORGE_PLANT", "fault@vict,hang@sleeper2", 1);
    ck_assert_int_eq(codegen_planted(&a), 0);
    ck_assert_int_eq(codegen_planted(&b), 0);

    /* coverage faults: `*` selects every variant (unnamed ones too),
     * PARAM=VALUE those with that value; every coverage fault is one source
     * (the fault is aimed at run time) */
    setenv("KFORGE_PLANT", "drop_last@*", 1);
    ck_assert_int_eq(codegen_planted(&anon), KF_PLANT_DROP_LAST);
    s = gen(&anon);
    ck_contains(s, "\n#define KF_PLANT KF_PLANT_COVERAGE\n");
    setenv("KFORGE_PLANT", "double_block@*", 1);
    char *s2 = gen(&anon);
    ck_assert_str_eq(s, s2);
    free(s);
    free(s2);
    char bs[32];
    snprintf(bs, sizeof bs, "shift@block_size=%d", (int)a.p[RP_BLOCK_SIZE]);
    setenv("KFORGE_PLANT", bs, 1);
    ck_assert_int_eq(codegen_planted(&a), KF_PLANT_SHIFT);
    snprintf(bs, sizeof bs, "shift@block_size=%d", (int)a.p[RP_BLOCK_SIZE] + 1);
    setenv("KFORGE_PLANT", bs, 1);
    ck_assert_int_eq(codegen_planted(&a), 0);
    setenv("KFORGE_PLANT", "shift@no_such_axis=1", 1);
    ck_assert_int_eq(codegen_planted(&a), 0);

    /* any length: a fault per variant by name runs long (it was cut at 511
     * characters, and what lay beyond was silently not planted) */
    kf_variant d = base();
    snprintf(d.name, sizeof d.name, "bystander");
    d.p[RP_BLOCK_SIZE] = a.p[RP_BLOCK_SIZE] == 512 ? 256 : 512;
    strbuf big = {0};
    for (int i = 0; i < 200; i++)
        sb_printf(&big, "drop_last@other_variant_%d,", i);
    sb_printf(&big, "hang@sleeper,shift@block_size=%d,fault@", (int)a.p[RP_BLOCK_SIZE]);
    for (int i = 0; i < 600; i++)
        sb_append(&big, "x");
    ck_assert_uint_gt(strlen(big.s), 4096);
    setenv("KFORGE_PLANT", big.s, 1);
    ck_assert_int_eq(codegen_planted(&b), KF_PLANT_HANG);
    ck_assert_int_eq(codegen_planted(&a), KF_PLANT_SHIFT);
    ck_assert_int_eq(codegen_planted(&d), 0);
    /* names and values still match whole, at the end of the value too */
    sb_printf(&big, ",hang@bystande,shift@block_size=%d", (int)d.p[RP_BLOCK_SIZE] / 10);
    setenv("KFORGE_PLANT", big.s, 1);
    ck_assert_int_eq(codegen_planted(&d), 0);
    sb_printf(&big, "%d,fault@x", (int)d.p[RP_BLOCK_SIZE] % 10); /* 25 or 51, then 256 or 512 */
    setenv("KFORGE_PLANT", big.s, 1);
    ck_assert_int_eq(codegen_planted(&d), KF_PLANT_SHIFT);
    sb_free(&big);
    setenv("KFORGE_PLANT", "", 1);
    ck_assert_int_eq(codegen_planted(&a), 0);
    unsetenv("KFORGE_PLANT");
}
END_TEST

// ---------------------------------------------------------------------------
// plans

static reduce_v shaped(int bs, int ept, int vw, kf_grid g, kf_passes p)
{
    reduce_v v = rbase();
    v.block_size = bs;
    v.elements_per_thread = ept;
    v.vector_width = vw;
    v.grid = g;
    v.passes = p;
    return v;
}

static const kf_grid AUTO = {KF_GRID_AUTO, 0};

START_TEST(plan_tiles_and_blocks)
{
    reduce_v v = shaped(256, 2, 4, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_tile(&v), 2048);
    ck_assert_int_eq(plan_blocks(&v, 1, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 0, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 2048, 132, 4), 1);
    ck_assert_int_eq(plan_blocks(&v, 2049, 132, 4), 2);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 4), (1LL << 30) / 2048);

    /* a fixed count, capped at ceil(n / tile) */
    v.grid = (kf_grid){KF_GRID_BLOCKS, 100};
    ck_assert_int_eq(plan_blocks(&v, 2048 * 1000, 132, 4), 100);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 50, 132, 4), 50);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 50 + 1, 132, 4), 51);
    ck_assert_int_eq(plan_blocks(&v, 5, 132, 4), 1);

    /* blocks per SM x SMs */
    v.grid = (kf_grid){KF_GRID_PER_SM, 4};
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 7), 4 * 132);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 10, 132, 7), 10);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 0, 7), 4);  /* unknown SM count: 1 */

    /* waves x occupancy x SMs */
    v.grid = (kf_grid){KF_GRID_WAVES, 2};
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 3), 2 * 3 * 132);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 108, 8), 2 * 8 * 108);
    ck_assert_int_eq(plan_blocks(&v, 1LL << 30, 132, 0), 2 * 132);
    ck_assert_int_eq(plan_blocks(&v, 2048 * 3 + 7, 132, 3), 4);

    /* beyond int range: capped */
    reduce_v t = shaped(32, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_tile(&t), 32);
    ck_assert_int_eq(plan_blocks(&t, 1LL << 36, 132, 1), 2147483647);
}
END_TEST

static void check_chain(const kf_plan *p, int64_t n)
{
    ck_assert_int_ge(p->npasses, 1);
    ck_assert_int_eq(p->n_in[0], n);
    ck_assert_int_eq(p->blocks[p->npasses - 1], 1);
    int64_t maxb = 0;
    for (int i = 0; i + 1 < p->npasses; i++) {
        ck_assert_int_eq(p->n_in[i + 1], p->blocks[i]);
        ck_assert_int_gt(p->blocks[i], 1);
        if (p->blocks[i] > maxb)
            maxb = p->blocks[i];
    }
    ck_assert_int_eq(p->partial_elems, maxb);
    ck_assert_int_eq(p->scratch_elems, 0);
    ck_assert_int_gt(p->depth, 0);
}

START_TEST(plan_multi_kernel_passes)
{
    reduce_v v = shaped(256, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    static const struct { int64_t n; int passes; int64_t b0; } cases[] = {
        {1, 1, 1},           {256, 1, 1},          {257, 2, 2},           {65536, 2, 256},
        {65537, 3, 257},     {1 << 24, 3, 65536},  {(1 << 24) + 1, 4, 65537}, {1LL << 30, 4, 1 << 22},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kf_plan p;
        ck_assert_int_eq(plan_make(&v, cases[i].n, 132, 4, &p), 0);
        ck_assert_msg(p.npasses == cases[i].passes, "n=%lld: %d passes, expected %d", (long long)cases[i].n,
                      p.npasses, cases[i].passes);
        ck_assert_int_eq(p.blocks[0], cases[i].b0);
        check_chain(&p, cases[i].n);
        ck_assert(p.deterministic);
    }
    kf_plan p;
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.blocks[1], 256);
    ck_assert_int_eq(p.partial_elems, 65536);

    /* a fixed grid: the first pass is capped, later passes shrink by the tile */
    v = shaped(256, 2, 4, (kf_grid){KF_GRID_BLOCKS, 2048}, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.npasses, 2);
    ck_assert_int_eq(p.blocks[0], 2048);
    ck_assert_int_eq(p.blocks[1], 1);
    check_chain(&p, 1 << 24);

    /* waves: 1 x 4 x 132 = 528 blocks, then 1 */
    v = shaped(256, 1, 1, (kf_grid){KF_GRID_WAVES, 1}, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1 << 24, 132, 4, &p), 0);
    ck_assert_int_eq(p.npasses, 3);
    ck_assert_int_eq(p.blocks[0], 528);
    ck_assert_int_eq(p.blocks[1], 3);
    check_chain(&p, 1 << 24);

    /* the smallest tile and the largest n stay within KF_MAX_PASSES */
    v = shaped(32, 1, 1, AUTO, KF_PASSES_MULTI_KERNEL);
    ck_assert_int_eq(plan_make(&v, 1LL << 36, 132, 4, &p), 0);
    ck_assert_int_le(p.npasses, KF_MAX_PASSES);
    ck_assert_int_eq(p.blocks[0], 2147483647);
    check_chain(&p, 1LL << 36);

    ck_assert_int_eq(plan_make(&v, 0, 132, 4, &p), -1);
    ck_assert_int_eq(plan_make(&v, -5, 132, 4, &p), -1);
}
END_TEST

START_TEST(plan_single_pass)
{
    static const int64_t ns[] = {1, 1000, 1 << 20, (1LL << 30) + 3};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        kf_plan p;
        reduce_v v = shaped(256, 4, 4, (kf_grid){KF_GRID_WAVES, 1}, KF_PASSES_ATOMIC);
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.n_in[0], ns[i]);
        ck_assert_int_eq(p.blocks[0], plan_blocks(&v, ns[i], 132, 2));
        ck_assert_int_eq(p.scratch_elems, 1);
        ck_assert_int_eq(p.partial_elems, 0);

        v.passes = KF_PASSES_LAST_BLOCK;
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.scratch_elems, p.blocks[0]);
        ck_assert_int_eq(p.partial_elems, 0);
        ck_assert(p.deterministic);

        v = shaped(128, 1, 1, AUTO, KF_PASSES_ATOMIC);
        v.algorithm = KF_ALG_ATOMIC_GLOBAL;
        v.unroll = KF_UNROLL_NONE;
        ck_assert_int_eq(plan_make(&v, ns[i], 132, 2, &p), 0);
        ck_assert_int_eq(p.npasses, 1);
        ck_assert_int_eq(p.blocks[0], (ns[i] + 127) / 128);
        ck_assert_int_eq(p.scratch_elems, 1);
        /* every thread's value lands on one slot */
        ck_assert_int_ge(p.depth, p.blocks[0] * 128);
    }
}
END_TEST

START_TEST(plan_determinism)
{
    for (int t = 0; t < KF_REDUCE_DTYPES; t++)
        for (int o = 0; o < KF_OP_COUNT; o++)
            for (int a = 0; a < KF_ALG_COUNT; a++)
                for (int p = KF_PASSES_MULTI_KERNEL; p < KF_PASSES_COUNT; p++) {
                    reduce_v v = rbase();
                    v.dtype = (kf_dtype)t;
                    v.op = (kf_op)o;
                    v.algorithm = (kf_algorithm)a;
                    v.passes = (kf_passes)p;
                    if (a == KF_ALG_ATOMIC_GLOBAL && p != KF_PASSES_ATOMIC)
                        continue;
                    kf_plan pl;
                    ck_assert_int_eq(plan_make(&v, 1 << 20, 132, 4, &pl), 0);
                    bool float_assoc = kf_dtype_is_float(v.dtype) && (o == KF_OP_SUM || o == KF_OP_PROD);
                    /* atomics combine in arrival order: between blocks (passes
                     * atomic) or inside a block (atomic_shared's shared slot) */
                    bool atomic_order = p == KF_PASSES_ATOMIC || a == KF_ALG_ATOMIC_SHARED ||
                                        a == KF_ALG_ATOMIC_GLOBAL;
                    ck_assert_msg(pl.deterministic == !(float_assoc && atomic_order),
                                  "%s/%s/%s/%s: deterministic=%d", kf_dtype_names[t], kf_op_names[o],
                                  kf_algorithm_names[a], kf_passes_names[p], pl.deterministic);
                }
    /* the cases named in plan.h */
    reduce_v v = rbase();
    kf_plan pl;
    v.passes = KF_PASSES_ATOMIC;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(!pl.deterministic);               /* float32 sum, atomic */
    v.op = KF_OP_MIN;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* min is order-free */
    v.op = KF_OP_SUM;
    v.dtype = KF_INT64;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* integer sums are exact */
    v.dtype = KF_FLOAT64;
    v.passes = KF_PASSES_LAST_BLOCK;
    plan_make(&v, 1000, 1, 1, &pl);
    ck_assert(pl.deterministic);                /* fixed-order fold */
}
END_TEST

// ---------------------------------------------------------------------------
// NVRTC

typedef struct {
    char **src;
    uint64_t *hash;
    char (*label)[160];
    kf_variant *v;      /* the variant each source is */
    int n, cap;
    bool batch;         /* compile several in one translation unit (below) */
} srcset;

/* Adds the source of v unless an identical one is there. */
static void add_source(srcset *ss, const kf_variant *v, const char *from)
{
    char *s = gen(v);
    uint64_t h = kf_hash64(s, strlen(s), 1);
    for (int i = 0; i < ss->n; i++)
        if (ss->hash[i] == h && strcmp(ss->src[i], s) == 0) {
            free(s);
            return;
        }
    if (ss->n == ss->cap) {
        ss->cap = ss->cap ? ss->cap * 2 : 64;
        ss->src = realloc(ss->src, sizeof *ss->src * (size_t)ss->cap);
        ss->hash = realloc(ss->hash, sizeof *ss->hash * (size_t)ss->cap);
        ss->label = realloc(ss->label, sizeof *ss->label * (size_t)ss->cap);
        ss->v = realloc(ss->v, sizeof *ss->v * (size_t)ss->cap);
        ck_assert(ss->src && ss->hash && ss->label && ss->v);
    }
    char l[128];
    variant_label(v, l, sizeof l);
    snprintf(ss->label[ss->n], sizeof ss->label[0], "%s %s/%s %s", from, kf_dtype_names[variant_dtype(v)],
             kf_op_names[variant_op(v)], l);
    ss->src[ss->n] = s;
    ss->hash[ss->n] = h;
    ss->v[ss->n] = *v;
    ss->n++;
}

static void srcset_free(srcset *ss)
{
    for (int i = 0; i < ss->n; i++)
        free(ss->src[i]);
    free(ss->src);
    free(ss->hash);
    free(ss->label);
    free(ss->v);
    memset(ss, 0, sizeof *ss);
}

/* The cubin cache that make check gives the tests and suites of one run
 * (KFORGE_TEST_CACHE: empty when the run starts, so an entry there is a
 * source that NVRTC compiled in this run, with these options), or none. */
static bool test_cache(rtc_cache *c)
{
    const char *d = getenv("KFORGE_TEST_CACHE");
    char e[512];
    return d && d[0] && rtc_cache_init(c, d, true, e, sizeof e) == 0;
}

/* Compiles source i alone (and stores it in make check's cache); false if
 * it failed (reported with its label and the start of the log). */
static bool compile_one(const srcset *ss, int i, const rtc_options *o, const rtc_cache *cache)
{
    void *cubin = NULL;
    size_t len = 0;
    char *log = NULL;
    char e[512] = "", path[PATH_MAX];
    bool ok = rtc_compile(ss->src[i], "kforge_test.cu", o, &cubin, &len, &log, e, sizeof e) == 0;
    if (!ok) {
        fprintf(stderr, "compile failed: %s: %s\n%.2000s\n", ss->label[i], e, log ? log : "");
    } else {
        ck_assert(cubin != NULL && len > 0);
        if (cache)
            rtc_cache_store(cache, ss->src[i], o, cubin, len, path, sizeof path, e, sizeof e);
    }
    free(cubin);
    free(log);
    return ok;
}

/* Compiles sources idx[0..n) (variants of one family) in one translation
 * unit, each wrapped as kforge gen and export wrap a variant of several
 * (codegen_wrapped: the source unchanged inside a namespace of its own, its
 * kernels renamed by macros, its macros #undef'd after it); true if NVRTC
 * compiled it.  NVRTC's cost per program is about half of a reduce source's
 * (55 against 35 ms per source in batches of 16 on one core). */
static bool compile_batch(const srcset *ss, const int *idx, int n, const rtc_options *o)
{
    strbuf b = {0};
    char e[512] = "";
    for (int k = 0; k < n; k++) {
        char ns[32], entry[64];
        snprintf(ns, sizeof ns, "kf_batch_%d", k);
        snprintf(entry, sizeof entry, "%s_batch_%d", family_of(&ss->v[idx[k]])->entries[0], k);
        ck_assert_msg(codegen_wrapped(&b, &ss->v[idx[k]], ns, entry, NULL, e, sizeof e) == 0, "%s", e);
    }
    char *src = sb_take(&b);
    ck_assert_ptr_nonnull(src);
    void *cubin = NULL;
    size_t len = 0;
    char *log = NULL;
    bool ok = rtc_compile(src, "kforge_test.cu", o, &cubin, &len, &log, e, sizeof e) == 0 && cubin && len > 0;
    free(cubin);
    free(log);
    free(src);
    return ok;
}

/* A batch: sources [lo, hi) of one family, at most BATCH of them. */
enum { BATCH = 16 };
typedef struct {
    int lo, hi;
} batch_range;

/* Compiles batches first, first + step, ... for sm_90 (kforge run's options
 * on an sm_90 device: those of a cubin it would take from the cache).  A
 * source make check's cache holds already compiled in this run; one left
 * alone in its batch is compiled alone, and stored there; several go into
 * one translation unit when ss->batch, and if that fails each is compiled
 * alone, so that every source that fails is named.  Returns the number that
 * failed (each reported with its label and the start of the log). */
static int compile_some(const srcset *ss, const batch_range *br, int nbr, int first, int step)
{
    rtc_options o = {.arch = "sm_90", .lineinfo = false};
    rtc_cache cache;
    bool cached = test_cache(&cache);
    int failed = 0, mine = 0, hits = 0, batched = 0;
    for (int r = first; r < nbr; r += step) {
        int idx[BATCH], n = 0;
        for (int i = br[r].lo; i < br[r].hi; i++, mine++) {
            char path[PATH_MAX];
            if (cached && rtc_cache_lookup(&cache, ss->src[i], &o, path, sizeof path))
                hits++;
            else
                idx[n++] = i;
        }
        if (n > 1 && ss->batch && compile_batch(ss, idx, n, &o)) {
            batched += n;
            continue;
        }
        for (int k = 0; k < n; k++)
            failed += !compile_one(ss, idx[k], &o, cached ? &cache : NULL);
    }
    if (cached)
        fprintf(stderr, "%d of %d sources compiled already in %s (this make check)\n", hits, mine, cache.dir);
    if (batched)
        fprintf(stderr, "%d of %d sources compiled in translation units of up to %d\n", batched, mine, BATCH);
    return failed;
}

/* Compiles every source, in one process per CPU (at most 8): NVRTC does
 * not scale with threads, and the shipped configs hold over a thousand
 * distinct sources. */
static int compile_all(const srcset *ss)
{
    double t0 = kf_now();
    /* batches of consecutive sources of one family */
    batch_range *br = malloc(sizeof *br * (size_t)(ss->n + 1));
    ck_assert_ptr_nonnull(br);
    int nbr = 0;
    for (int i = 0; i < ss->n; i++) {
        if (nbr == 0 || br[nbr - 1].hi - br[nbr - 1].lo == (ss->batch ? BATCH : 1) ||
            ss->v[i].family != ss->v[br[nbr - 1].lo].family)
            br[nbr++] = (batch_range){i, i};
        br[nbr - 1].hi = i + 1;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
    if (jobs > nbr)
        jobs = nbr;
    pid_t pids[8];
    int failed = 0;
    fflush(stderr);
    for (int j = 0; j < jobs; j++) {
        pids[j] = fork();
        ck_assert_msg(pids[j] >= 0, "fork");
        if (pids[j] == 0) {
            int f = compile_some(ss, br, nbr, j, jobs);
            fflush(stderr);
            _exit(f > 250 ? 250 : f);
        }
    }
    for (int j = 0; j < jobs; j++) {
        int st;
        while (waitpid(pids[j], &st, 0) < 0)
            ;
        if (WIFEXITED(st))
            failed += WEXITSTATUS(st);
        else {
            fprintf(stderr, "compile worker %d died (signal %d)\n", j, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            failed++;
        }
    }
    fprintf(stderr, "compiled %d distinct sources in %.1f s (%d processes)\n", ss->n, kf_now() - t0, jobs);
    free(br);
    return failed;
}

START_TEST(nvrtc_every_config_variant)
{
    int major, minor;
    ck_assert_msg(rtc_version(&major, &minor) == 0, "NVRTC is not usable");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/configs", srcdir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    srcset ss = {.batch = true};
    int variants = 0, files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        kf_config c;
        kf_space s;
        ck_assert_msg(config_load(path, &c, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(space_expand(&c, NULL, &s, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < s.nvariants; i++)
            add_source(&ss, &s.variants[i], e->d_name);
        variants += s.nvariants;
        files++;
        space_free(&s);
        config_free(&c);
    }
    closedir(d);
    ck_assert_int_ge(files, 3);
    ck_assert_int_gt(ss.n, 0);
    ck_assert_int_le(ss.n, variants);
    int failed = compile_all(&ss);
    ck_assert_msg(failed == 0, "%d of %d sources (%d variants) failed to compile", failed, ss.n, variants);
    srcset_free(&ss);
}
END_TEST

/* A valid variant for (dtype, op, algorithm), the other axes rotated by k
 * so that the sample covers every value of each; false if the triple cannot
 * run at all. */
static bool sample_variant(kf_dtype t, kf_op o, kf_algorithm a, int k, kf_variant *out)
{
    static const int bss[] = {32, 64, 128, 256, 512, 1024};
    static const int epts[] = {1, 2, 4, 8};
    static const int vws[] = {1, 2, 4};
    reduce_v v = rbase();
    v.dtype = t;
    v.op = o;
    v.algorithm = a;
    v.block_size = bss[k % 6];
    v.elements_per_thread = epts[(k / 3) % 4];
    v.vector_width = vws[k % 3];
    v.load = (kf_load)(k % KF_LOAD_COUNT);
    v.layout = (kf_layout)((k / 2) % 2);
    bool tree = a == KF_ALG_INTERLEAVED_DIVERGENT || a == KF_ALG_INTERLEAVED_STRIDED || a == KF_ALG_SEQUENTIAL;
    if (a == KF_ALG_ATOMIC_GLOBAL || a == KF_ALG_ATOMIC_SHARED)
        v.unroll = KF_UNROLL_NONE;
    else if (a == KF_ALG_SEQUENTIAL)
        v.unroll = (kf_unroll)(k % 3);
    else
        v.unroll = k % 2 ? KF_UNROLL_FULL : KF_UNROLL_NONE;
    v.passes = a == KF_ALG_ATOMIC_GLOBAL ? KF_PASSES_ATOMIC : (kf_passes)(KF_PASSES_MULTI_KERNEL + (k / 4) % 3);
    v.accumulator = tree ? (kf_accum)((k / 5) % 2) : KF_ACC_REGISTER;
    if (a == KF_ALG_SEQUENTIAL && v.unroll != KF_UNROLL_NONE) {
        v.warp_reduce = (kf_warp_reduce)((k / 7) % 3);
        bool i32 = t == KF_INT32 || t == KF_UINT32;
        if (v.warp_reduce == KF_WARP_INTRINSIC && (!i32 || o == KF_OP_PROD))
            v.warp_reduce = KF_WARP_SHUFFLE;
    }
    reduce_encode(&v, NULL, out);
    char why[256];
    return space_check_variant(out, NULL, why, sizeof why) == 0;
}

START_TEST(nvrtc_sample)
{
    srcset ss = {.batch = true};
    int k = 0, impossible = 0;
    for (int t = 0; t < KF_REDUCE_DTYPES; t++)
        for (int o = 0; o < KF_OP_COUNT; o++)
            for (int a = 0; a < KF_ALG_COUNT; a++) {
                kf_variant v;
                if (sample_variant((kf_dtype)t, (kf_op)o, (kf_algorithm)a, k, &v)) {
                    add_source(&ss, &v, "sample");
                    k++;
                } else {
                    impossible++;
                }
            }
    /* each (dtype, op) pair the rules allow has some algorithm */
    ck_assert_int_gt(k, 150);

    /* every dtype x vector width x load flavour, with a tree and with shuffles:
     * 8-byte types with vector_width 4 load 32 bytes as two 16-byte words */
    for (int t = 0; t < KF_REDUCE_DTYPES; t++)
        for (int w = 1; w <= 4; w *= 2)
            for (int l = 0; l < KF_LOAD_COUNT; l++) {
                reduce_v v = rbase();
                v.dtype = (kf_dtype)t;
                v.vector_width = w;
                v.load = (kf_load)l;
                v.elements_per_thread = 2;
                v.unroll = KF_UNROLL_FULL;
                v.algorithm = (t + w + l) % 2 ? KF_ALG_SHUFFLE : KF_ALG_SEQUENTIAL;
                v.passes = (kf_passes)(KF_PASSES_MULTI_KERNEL + (t + l) % 3);
                kf_variant kv;
                reduce_encode(&v, NULL, &kv);
                char why[256];
                ck_assert_msg(space_check_variant(&kv, NULL, why, sizeof why) == 0, "%s", why);
                add_source(&ss, &kv, "loads");
            }
    static const kf_dtype wide[] = {KF_INT64, KF_FLOAT64};
    static const kf_op wide_ops[] = {KF_OP_SUM, KF_OP_MIN, KF_OP_PROD, KF_OP_XOR};
    for (int i = 0; i < 2; i++)
        for (int o = 0; o < 4; o++)
            for (int l = 0; l < KF_LOAD_COUNT; l++) {
                reduce_v v = rbase();
                v.dtype = wide[i];
                v.op = wide_ops[o];
                if (kf_op_is_bitwise(v.op) && kf_dtype_is_float(v.dtype))
                    continue;
                v.vector_width = 4;
                v.load = (kf_load)l;
                v.algorithm = l % 2 ? KF_ALG_ATOMIC_SHARED : KF_ALG_SEQUENTIAL;
                v.passes = l % 2 ? KF_PASSES_ATOMIC : KF_PASSES_LAST_BLOCK;
                v.layout = (kf_layout)(o % 2);
                kf_variant kv;
                reduce_encode(&v, NULL, &kv);
                char why[256];
                ck_assert_msg(space_check_variant(&kv, NULL, why, sizeof why) == 0, "%s", why);
                add_source(&ss, &kv, "wide");
            }
    int failed = compile_all(&ss);
    ck_assert_msg(failed == 0, "%d of %d sample sources failed to compile", failed, ss.n);
    srcset_free(&ss);
}
END_TEST

START_TEST(nvrtc_planted_compiles)
{
    setenv("KFORGE_PLANT", "fault@f,hang@h,drop_first@c", 1);
    srcset ss = {0};
    kf_variant v = base();
    snprintf(v.name, sizeof v.name, "f");
    add_source(&ss, &v, "plant");
    snprintf(v.name, sizeof v.name, "h");
    add_source(&ss, &v, "plant");
    snprintf(v.name, sizeof v.name, "c");
    add_source(&ss, &v, "plant");
    unsetenv("KFORGE_PLANT");
    ck_assert_int_eq(ss.n, 3);
    ck_assert_int_eq(compile_all(&ss), 0);
    srcset_free(&ss);
}
END_TEST

static Suite *codegen_suite(void)
{
    Suite *s = suite_create("codegen");
    TCase *tc = tcase_create("source");
    tcase_add_test(tc, header_names_every_parameter);
    tcase_add_test(tc, defines);
    tcase_add_test(tc, template_numbering);
    tcase_add_test(tc, enum_value_names_defined);
    tcase_add_test(tc, reduce_value_macros_match_c_enums);
    tcase_add_test(tc, source_depends_on_compile_time_parameters_only);
    tcase_add_test(tc, unresolved_passes_refused);
    tcase_add_test(tc, launch_comment);
    tcase_add_test(tc, planted);
    suite_add_tcase(s, tc);

    tc = tcase_create("plan");
    tcase_add_test(tc, plan_tiles_and_blocks);
    tcase_add_test(tc, plan_multi_kernel_passes);
    tcase_add_test(tc, plan_single_pass);
    tcase_add_test(tc, plan_determinism);
    suite_add_tcase(s, tc);

    tc = tcase_create("nvrtc");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, nvrtc_every_config_variant);
    tcase_add_test(tc, nvrtc_sample);
    tcase_add_test(tc, nvrtc_planted_compiles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(codegen_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
