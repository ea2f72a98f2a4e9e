/*
 * test_expr.c -- constraint expressions: parsing, evaluation, messages,
 * the identifiers each family's table gives (and no other family's); and
 * the parameter values those identifiers read (param.h: param_valid,
 * param_json and param_text round trips for enum, int and grid values);
 * expressions written as C (expr_c_text, kforge export's launcher): the
 * text, what it refuses, and the values of a compiled program of them,
 * which must equal expr_eval's bit for bit.
 *
 *   make build/tests/test_expr && build/tests/test_expr
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "expr.h"
#include "family.h"
#include "param.h"
#include "reduce.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The reduce family's index (kf_families[]). */
static int reduce_family(void)
{
    int f = family_find("reduce");
    ck_assert_int_ge(f, 0);
    return f;
}

static kf_expr *parse(const char *text, char *err, size_t errlen)
{
    return expr_parse(text, reduce_family(), err, errlen);
}

static kf_shape shape_n(int64_t n)
{
    kf_shape s = {{n, 0, 0}};
    return s;
}

static kf_variant base(void)
{
    reduce_v r;
    reduce_defaults(&r);
    r.dtype = KF_FLOAT64;
    r.op = KF_OP_MAX;
    r.algorithm = KF_ALG_SHUFFLE;
    r.block_size = 256;
    r.elements_per_thread = 4;
    r.unroll = KF_UNROLL_FULL;
    r.vector_width = 2;
    r.grid.kind = KF_GRID_BLOCKS;
    r.grid.value = 2048;
    r.passes = KF_PASSES_LAST_BLOCK;
    r.layout = KF_LAYOUT_GRID;
    r.accumulator = KF_ACC_SHARED;
    r.warp_reduce = KF_WARP_SHUFFLE;
    r.load = KF_LOAD_LDG;
    kf_variant v;
    reduce_encode(&r, NULL, &v);
    return v;
}

static int64_t grid_blocks(int64_t blocks)
{
    return kf_grid_encode((kf_grid){KF_GRID_BLOCKS, blocks});
}

/* Parses and evaluates; both must succeed. */
static double ev_v(const char *text, const kf_variant *v, int64_t n)
{
    char err[512] = "";
    kf_expr *e = parse(text, err, sizeof err);
    ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, err);
    double out = NAN;
    kf_shape sh = shape_n(n);
    int rc = expr_eval(e, v, &sh, &out, err, sizeof err);
    ck_assert_msg(rc == 0, "eval of '%s' failed: %s", text, err);
    expr_free(e);
    return out;
}

static double ev(const char *text)
{
    kf_variant v = base();
    return ev_v(text, &v, 1000);
}

#define EV_EQ(text, want)                                                                  \
    do {                                                                                   \
        double got_ = ev(text);                                                            \
        double want_ = (want);                                                             \
        ck_assert_msg(got_ == want_ || fabs(got_ - want_) <= 1e-12 * fabs(want_),          \
                      "'%s' = %.17g, want %.17g", text, got_, want_);                      \
    } while (0)

/* Parsing must fail; the message names the text and the 1-based position
 * (pos > 0), and contains needle if given. */
static void parse_fails(const char *text, int pos, const char *needle)
{
    char err[512] = "";
    kf_expr *e = parse(text, err, sizeof err);
    ck_assert_msg(e == NULL, "'%s' parsed but should not", text);
    ck_assert_msg(err[0] != 0, "'%s': no message", text);
    ck_assert_msg(strstr(err, text) != NULL, "message for '%s' lacks the text: %s", text, err);
    ck_assert_msg(strstr(err, "position ") != NULL, "message lacks a position: %s", err);
    if (pos > 0) {
        char want[48];
        snprintf(want, sizeof want, "at position %d:", pos);
        ck_assert_msg(strstr(err, want) != NULL, "'%s': want \"%s\" in: %s", text, want, err);
    }
    if (needle)
        ck_assert_msg(strstr(err, needle) != NULL, "'%s': want \"%s\" in: %s", text, needle, err);
}

/* Parsing succeeds, evaluation fails with -1 and a message. */
static void eval_fails_v(const char *text, const kf_variant *v, int64_t n, int pos,
                         const char *needle)
{
    char err[512] = "";
    kf_expr *e = parse(text, err, sizeof err);
    ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, err);
    double out = 0;
    err[0] = 0;
    kf_shape sh = shape_n(n);
    int rc = expr_eval(e, v, &sh, &out, err, sizeof err);
    ck_assert_msg(rc == -1, "eval of '%s' gave rc %d (value %g), want -1", text, rc, out);
    ck_assert_msg(err[0] != 0, "eval of '%s': no message", text);
    ck_assert_msg(strstr(err, text) != NULL, "message lacks the text: %s", err);
    if (pos > 0) {
        char want[48];
        snprintf(want, sizeof want, "at position %d:", pos);
        ck_assert_msg(strstr(err, want) != NULL, "'%s': want \"%s\" in: %s", text, want, err);
    }
    if (needle)
        ck_assert_msg(strstr(err, needle) != NULL, "'%s': want \"%s\" in: %s", text, needle, err);
    expr_free(e);
}

static void eval_fails(const char *text, int pos, const char *needle)
{
    kf_variant v = base();
    eval_fails_v(text, &v, 1000, pos, needle);
}

// ----------------------------------------------------------------------------
// Arithmetic and precedence

START_TEST(arithmetic)
{
    EV_EQ("1 + 2", 3);
    EV_EQ("7 - 10", -3);
    EV_EQ("6 * 7", 42);
    EV_EQ("7 / 2", 3.5);
    EV_EQ("7 % 3", 1);
    EV_EQ("-7 % 3", fmod(-7, 3));
    EV_EQ("7.5 % 2", 1.5);
    EV_EQ("1.5 * 2", 3);
    EV_EQ(".5 + .25", 0.75);
    EV_EQ("1e3", 1000);
    EV_EQ("2.5e-1 * 4", 1);
    EV_EQ("0", 0);
    EV_EQ("-3", -3);
    EV_EQ("--3", 3);
    EV_EQ("- - -3", -3);
    EV_EQ("4 - -2", 6);
    EV_EQ("16384", 16384);
    EV_EQ("1048576 * 1024", 1073741824.0);
}
END_TEST

START_TEST(precedence_and_associativity)
{
    EV_EQ("2 + 3 * 4", 14);
    EV_EQ("(2 + 3) * 4", 20);
    EV_EQ("2 * 3 + 4", 10);
    EV_EQ("2 * (3 + 4)", 14);
    EV_EQ("10 - 3 - 2", 5);         /* left-associative */
    EV_EQ("10 - (3 - 2)", 9);
    EV_EQ("100 / 10 / 5", 2);
    EV_EQ("100 / (10 / 5)", 50);
    EV_EQ("2 * 3 % 4", 2);          /* (2*3)%4, same level, left to right */
    EV_EQ("20 % 6 * 2", 4);
    EV_EQ("-2 * 3", -6);
    EV_EQ("-(2 + 3) * 2", -10);
    EV_EQ("1 + 2 < 4", 1);          /* arithmetic binds tighter than comparison */
    EV_EQ("1 + (2 < 4)", 2);
    EV_EQ("1 < 2 == 1", 1);         /* relational tighter than equality, as in C */
    EV_EQ("2 == 2 < 1", 0);         /* 2 == (2 < 1) */
    EV_EQ("1 < 2 < 3", 1);          /* (1<2)<3 */
    EV_EQ("3 > 2 > 1", 0);          /* (3>2)>1 = 1>1 */
    EV_EQ("1 || 0 && 0", 1);        /* && tighter than || */
    EV_EQ("(1 || 0) && 0", 0);
    EV_EQ("0 && 1 || 1", 1);
    EV_EQ("!0 + 1", 2);             /* unary tighter than + */
    EV_EQ("!(0 + 1)", 0);
    EV_EQ("!1 == 0", 1);            /* (!1) == 0 */
    EV_EQ("1 == 1 && 2 != 3", 1);
    EV_EQ("((((((1 + 1))))))", 2);
    EV_EQ(" \t1\n+\r2 ", 3);        /* any whitespace */
    EV_EQ("1+2*3-4/2", 5);          /* no whitespace at all */
}
END_TEST

START_TEST(comparisons_and_logic)
{
    EV_EQ("3 < 4", 1);
    EV_EQ("4 < 4", 0);
    EV_EQ("4 <= 4", 1);
    EV_EQ("5 <= 4", 0);
    EV_EQ("5 > 4", 1);
    EV_EQ("4 > 4", 0);
    EV_EQ("4 >= 4", 1);
    EV_EQ("3 >= 4", 0);
    EV_EQ("4 == 4", 1);
    EV_EQ("4 == 4.5", 0);
    EV_EQ("4 != 4.5", 1);
    EV_EQ("4 != 4", 0);
    /* results are exactly 0 or 1 */
    EV_EQ("5 && 7", 1);
    EV_EQ("-2 || 0", 1);
    EV_EQ("0 || 0", 0);
    EV_EQ("0 && 1", 0);
    EV_EQ("!5", 0);
    EV_EQ("!0", 1);
    EV_EQ("!!7", 1);
    EV_EQ("0.5 && 0.5", 1);
    /* short circuit: the right side is not evaluated (would divide by zero) */
    EV_EQ("1 || 1 / 0", 1);
    EV_EQ("0 && 1 / 0", 0);
    EV_EQ("n > 0 || 1 % 0", 1);
    /* string literals compare with each other */
    EV_EQ("\"abc\" == \"abc\"", 1);
    EV_EQ("\"abc\" != \"abd\"", 1);
    EV_EQ("\"\" == \"\"", 1);
}
END_TEST

START_TEST(functions)
{
    EV_EQ("log2(1024)", 10);
    EV_EQ("log2(1)", 0);
    EV_EQ("log2(0.5)", -1);
    EV_EQ("pow2(10)", 1024);
    EV_EQ("pow2(0)", 1);
    EV_EQ("pow2(-1)", 0.5);
    EV_EQ("pow2(log2(256))", 256);
    EV_EQ("ceil(7 / 2)", 4);          /* Kernel Tuner's grid arithmetic */
    EV_EQ("7 // 2", 3);               /* Python's floor division (T1 files, Kernel Tuner) */
    EV_EQ("-7 // 2", -4);
    EV_EQ("100 // 3 * 3", 99);        /* // binds as * and /: (100 // 3) * 3 */
    EV_EQ("2 * 7 // 4", 3);           /* (2 * 7) // 4 */
    EV_EQ("1 < 2 and 3 < 4", 1);
    EV_EQ("1 < 2 and 3 > 4 or 5 == 5", 1);
    EV_EQ("not 1 == 2", 1);           /* Python: not (1 == 2) */
    EV_EQ("not 0 and 1", 1);
    EV_EQ("ceil(8 / 2)", 4);
    EV_EQ("ceil(-0.5)", 0);
    EV_EQ("floor(7 / 2)", 3);
    EV_EQ("floor(-0.5)", -1);
    EV_EQ("max(ceil(1000 / 256), floor(2.9))", 4);
    EV_EQ("min(3, 5)", 3);
    EV_EQ("min(5, 3)", 3);
    EV_EQ("max(3, 5)", 5);
    EV_EQ("max(-3, -5)", -3);
    EV_EQ("min(1 + 1, 2 * 2)", 2);
    EV_EQ("max(min(1, 2), min(3, 4))", 3);
    EV_EQ("2 * max(1, 2) + 1", 5);
    EV_EQ("log2 (8)", 3);           /* space before the parenthesis */
    EV_EQ("min( 7 ,8 )", 7);
    EV_EQ("min(block_size, 128)", 128);
    EV_EQ("max(n, 1)", 1000);
}
END_TEST

/* Identifiers of the variant and size. */
START_TEST(identifiers)
{
    kf_variant v = base();
    ck_assert(ev_v("block_size", &v, 7) == 256);
    ck_assert(ev_v("elements_per_thread", &v, 7) == 4);
    ck_assert(ev_v("vector_width", &v, 7) == 2);
    ck_assert(ev_v("n", &v, 7) == 7);
    ck_assert(ev_v("n", &v, (int64_t)1 << 40) == 0x1p40);
    ck_assert(ev_v("n", &v, 0) == 0);
    ck_assert(ev_v("grid", &v, 7) == 2048);
    /* derived values: float64 is 8 bytes */
    ck_assert(ev_v("elem_bytes", &v, 7) == 8);
    ck_assert(ev_v("vector_bytes", &v, 7) == 8 * 2);
    ck_assert(ev_v("tile", &v, 7) == 256 * 4 * 2);
    ck_assert(ev_v("tile == block_size * elements_per_thread * vector_width", &v, 7) == 1);

    for (int t = 0; t < KF_REDUCE_DTYPES; t++) {
        v.p[RP_DTYPE] = t;
        for (int vw = 1; vw <= 4; vw *= 2) {
            v.p[RP_VECTOR_WIDTH] = vw;
            double es = (double)kf_dtype_size((kf_dtype)t);
            ck_assert(ev_v("elem_bytes", &v, 1) == es);
            ck_assert(ev_v("vector_bytes", &v, 1) == es * vw);
            ck_assert(ev_v("tile", &v, 1) == 256.0 * 4 * vw);
        }
    }
    v = base();
    v.p[RP_ELEMENTS_PER_THREAD] = 8;
    v.p[RP_BLOCK_SIZE] = 1024;
    ck_assert(ev_v("block_size * elements_per_thread <= 16384", &v, 1) == 1);
    v.p[RP_ELEMENTS_PER_THREAD] = 32;
    ck_assert(ev_v("block_size * elements_per_thread <= 16384", &v, 1) == 0);
    ck_assert(ev_v("n % tile == 0", &v, 1024 * 32 * 2 * 3) == 1);
    ck_assert(ev_v("n % tile == 0", &v, 1024 * 32 * 2 * 3 + 1) == 0);
    ck_assert(ev_v("log2(block_size) == 10", &v, 1) == 1);
    ck_assert(ev_v("pow2(log2(block_size)) == block_size", &v, 1) == 1);
    ck_assert(ev_v("max(n, block_size)", &v, 5) == 1024);
    ck_assert(ev_v("min(n, block_size)", &v, 5) == 5);
}
END_TEST

/* Every enumerated axis compares with each of its names, from either side. */
START_TEST(enum_axes_compare_with_strings)
{
    const kf_family *f = kf_families[reduce_family()];
    struct {
        int ax;
        const char *const *names;
        int count;
    } axes[] = {
        {RP_DTYPE, kf_dtype_names, KF_REDUCE_DTYPES},
        {RP_OP, kf_op_names, KF_OP_COUNT},
        {RP_ACC_DTYPE, kf_acc_type_names, KF_ACCT_COUNT},
        {RP_ALGORITHM, kf_algorithm_names, KF_ALG_COUNT},
        {RP_UNROLL, kf_unroll_names, KF_UNROLL_COUNT},
        {RP_PASSES, kf_passes_names, KF_PASSES_COUNT},
        {RP_LAYOUT, kf_layout_names, KF_LAYOUT_COUNT},
        {RP_ACCUMULATOR, kf_accum_names, KF_ACC_COUNT},
        {RP_WARP_REDUCE, kf_warp_reduce_names, KF_WARP_COUNT},
        {RP_LOAD, kf_load_names, KF_LOAD_COUNT},
    };
    /* the list above is every enumerated parameter of the table */
    int nenum = 0;
    for (int i = 0; i < f->nparams; i++)
        nenum += f->params[i].kind == KF_PK_ENUM;
    ck_assert_int_eq(nenum, N_OF(axes));
    for (int a = 0; a < N_OF(axes); a++) {
        const kf_param *pa = &f->params[axes[a].ax];
        ck_assert_int_eq(pa->kind, KF_PK_ENUM);
        ck_assert(pa->names == axes[a].names);
        ck_assert_int_eq(pa->count, axes[a].count);
        const char *axis = pa->name;
        for (int val = 0; val < axes[a].count; val++) {
            kf_variant v = base();
            v.p[axes[a].ax] = val;
            for (int other = 0; other < axes[a].count; other++) {
                char text[160];
                const char *name = axes[a].names[other];
                double same = other == val;
                snprintf(text, sizeof text, "%s == \"%s\"", axis, name);
                ck_assert_msg(ev_v(text, &v, 1) == same, "%s (value %s)", text, axes[a].names[val]);
                snprintf(text, sizeof text, "%s != \"%s\"", axis, name);
                ck_assert_msg(ev_v(text, &v, 1) == !same, "%s", text);
                snprintf(text, sizeof text, "\"%s\" == %s", name, axis);
                ck_assert_msg(ev_v(text, &v, 1) == same, "%s", text);
            }
        }
    }

    kf_variant v = base();     /* shuffle, float64, max */
    ck_assert(ev_v("algorithm == \"shuffle\"", &v, 1) == 1);
    ck_assert(ev_v("algorithm != \"atomic_global\" || n <= 1048576", &v, 1 << 30) == 1);
    v.p[RP_ALGORITHM] = KF_ALG_ATOMIC_GLOBAL;
    ck_assert(ev_v("algorithm != \"atomic_global\" || n <= 1048576", &v, 1 << 30) == 0);
    ck_assert(ev_v("algorithm != \"atomic_global\" || n <= 1048576", &v, 1 << 20) == 1);
    ck_assert(ev_v("dtype == \"float64\" && op == \"max\" && !(load == \"stream\")", &v, 1) == 1);
    ck_assert(ev_v("(dtype == \"int32\") + (dtype == \"float64\") * 2", &v, 1) == 2);
}
END_TEST

START_TEST(grid_identifier)
{
    kf_variant v = base();
    v.p[RP_GRID] = grid_blocks(4096);
    ck_assert(ev_v("grid == 4096", &v, 1) == 1);
    ck_assert(ev_v("grid / 2", &v, 1) == 2048);
}
END_TEST

START_TEST(uses_n)
{
    static const struct {
        const char *text;
        bool uses;
    } cases[] = {
        {"n > 0", true},
        {"block_size <= 1024", false},
        {"min(n, 4) > 0", true},
        {"algorithm != \"atomic_global\" || n <= 1048576", true},
        {"1 || n", true},               /* mentioned, even if short-circuited */
        {"tile * 2 <= 65536", false},
        {"dtype == \"float32\"", false},
        {"\"n\" == \"n\"", false},      /* a string, not the identifier */
        {"-(-(n))", true},
        {"vector_bytes <= 16", false},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        char err[256];
        kf_expr *e = parse(cases[i].text, err, sizeof err);
        ck_assert_msg(e != NULL, "%s: %s", cases[i].text, err);
        ck_assert_msg(expr_uses_n(e) == cases[i].uses, "expr_uses_n('%s') wrong", cases[i].text);
        expr_free(e);
    }
    ck_assert(!expr_uses_n(NULL));
    expr_free(NULL);
}
END_TEST

/* The same parsed expression evaluates against many variants and sizes. */
START_TEST(reuse_parsed)
{
    char err[256];
    kf_expr *e = parse("block_size * elements_per_thread * 2 <= n", err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);
    kf_variant v = base();
    for (int bs = 32; bs <= 1024; bs *= 2)
        for (int ept = 1; ept <= 16; ept *= 2)
            for (int64_t n = 1; n <= 1 << 16; n *= 4) {
                v.p[RP_BLOCK_SIZE] = bs;
                v.p[RP_ELEMENTS_PER_THREAD] = ept;
                double out;
                kf_shape sh = shape_n(n);
                ck_assert_int_eq(expr_eval(e, &v, &sh, &out, err, sizeof err), 0);
                ck_assert(out == (bs * ept * 2 <= n));
            }
    expr_free(e);
}
END_TEST

/* Every identifier of family f: its parameters, sizes and derived names. */
static int family_identifiers(const kf_family *f, const char **out, int max)
{
    int k = 0;
    for (int i = 0; i < f->nparams && k < max; i++)
        out[k++] = f->params[i].name;
    for (int i = 0; i < f->nsizes && k < max; i++)
        out[k++] = f->sizes[i].name;
    for (int i = 0; i < f->nderived && k < max; i++)
        out[k++] = f->derived[i];
    return k;
}

static bool has_name(const char *const *names, int count, const char *s)
{
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], s) == 0)
            return true;
    return false;
}

/* The reduce family's derived names are identifiers (they parse alone and
 * in expressions, and do not count as sizes); every identifier of each
 * family's own table parses for that family. */
START_TEST(family_identifiers_accepted)
{
    int rf = reduce_family();
    const kf_family *f = kf_families[rf];
    static const char *const derived[] = {"tile", "vector_bytes", "elem_bytes"};
    for (int i = 0; i < N_OF(derived); i++) {
        ck_assert_msg(has_name(f->derived, f->nderived, derived[i]), "reduce lacks derived name %s", derived[i]);
        char err[256] = "";
        kf_expr *e = expr_parse(derived[i], rf, err, sizeof err);
        ck_assert_msg(e != NULL, "'%s' rejected: %s", derived[i], err);
        ck_assert(!expr_uses_n(e));
        expr_free(e);
        char text[96];
        snprintf(text, sizeof text, "%s * 2 > 0 && %s <= n", derived[i], derived[i]);
        e = expr_parse(text, rf, err, sizeof err);
        ck_assert_msg(e != NULL, "'%s' rejected: %s", text, err);
        ck_assert(expr_uses_n(e));
        expr_free(e);
    }
    /* and they evaluate to the family's derived_value */
    kf_variant v = base();
    for (int i = 0; i < f->nderived; i++)
        ck_assert(ev_v(f->derived[i], &v, 1) == f->derived_value(&v, i));

    for (int fi = 0; fi < kf_nfamilies; fi++) {
        const char *ids[KF_MAX_PARAMS + KF_MAX_DIMS + 32];
        int n = family_identifiers(kf_families[fi], ids, N_OF(ids));
        for (int i = 0; i < n; i++) {
            char err[256] = "";
            kf_expr *e = expr_parse(ids[i], fi, err, sizeof err);
            ck_assert_msg(e != NULL, "%s: own identifier '%s' rejected: %s", kf_families[fi]->name, ids[i], err);
            expr_free(e);
        }
    }
}
END_TEST

/* A name of another family's table is not an identifier of this one: the
 * constraint is refused at parse time, naming the identifier and where. */
START_TEST(other_family_identifiers_rejected)
{
    /* the row-reduction family's size dimensions (expr.h) are not reduce's */
    parse_fails("rows > 0", 1, "unknown name 'rows'");
    parse_fails("cols <= 4096", 1, "unknown name 'cols'");
    parse_fails("n > 0 && row_stride == cols", 10, "row_stride");
    for (int fi = 0; fi < kf_nfamilies; fi++) {
        const char *own[KF_MAX_PARAMS + KF_MAX_DIMS + 32];
        int nown = family_identifiers(kf_families[fi], own, N_OF(own));
        for (int gi = 0; gi < kf_nfamilies; gi++) {
            if (gi == fi)
                continue;
            const char *theirs[KF_MAX_PARAMS + KF_MAX_DIMS + 32];
            int nth = family_identifiers(kf_families[gi], theirs, N_OF(theirs));
            for (int i = 0; i < nth; i++) {
                if (has_name(own, nown, theirs[i]))
                    continue;     /* shared (dtype, op, ...) */
                char err[256] = "";
                kf_expr *e = expr_parse(theirs[i], fi, err, sizeof err);
                ck_assert_msg(e == NULL, "%s accepted %s's identifier '%s'", kf_families[fi]->name,
                              kf_families[gi]->name, theirs[i]);
                ck_assert_msg(strstr(err, theirs[i]) != NULL, "message lacks '%s': %s", theirs[i], err);
            }
        }
    }
    /* an expression parsed for one family is not evaluated on another's variant */
    if (kf_nfamilies > 1) {
        char err[256] = "";
        kf_expr *e = expr_parse("1 == 1", reduce_family(), err, sizeof err);
        ck_assert_ptr_nonnull(e);
        int other = reduce_family() == 0 ? 1 : 0;
        kf_variant w;
        variant_defaults(&w, other);
        double out = 0;
        ck_assert_int_eq(expr_eval(e, &w, NULL, &out, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "written for kernel reduce") != NULL, "%s", err);
        expr_free(e);
    }
}
END_TEST

// ----------------------------------------------------------------------------
// Parse errors

START_TEST(parse_error_positions)
{
    parse_fails("", 1, NULL);
    parse_fails("   ", 4, NULL);
    parse_fails("block_size <= ", 15, NULL);        /* the example of expr.h */
    parse_fails("1 +", 4, NULL);
    parse_fails("(n + 1", 7, NULL);                 /* unbalanced: missing ')' at the end */
    parse_fails("((n + 1)", 9, NULL);
    parse_fails("n + 1)", 6, NULL);                 /* unbalanced: extra ')' */
    parse_fails("(n + 1))", 8, NULL);
    parse_fails("()", 2, NULL);
    parse_fails("foo > 1", 1, "foo");               /* unknown identifier */
    parse_fails("n > 0 && blok_size < 3", 10, "blok_size");
    parse_fails("n 1", 3, NULL);                    /* trailing junk */
    parse_fails("n > 1 2", 7, NULL);
    parse_fails("12abc", 3, NULL);
    parse_fails("1 + 2 $", 7, NULL);
    parse_fails("n = 1", 3, "==");                  /* '=' hint */
    parse_fails("n > 1 & n < 5", 7, "&&");
    parse_fails("n > 1 | n < 5", 7, "||");
    parse_fails("dtype == \"float32", 10, NULL);    /* unterminated string */
    parse_fails("algorithm == \"shufle\"", 14, "shufle"); /* no such algorithm */
    parse_fails("\"zzz\" == dtype", 1, "zzz");
    parse_fails("'shuffle' == algorithm", 1, NULL); /* single quotes */
    parse_fails("sqrt(4) > 1", 1, "sqrt");          /* unknown function */
    parse_fails("n > 0 && bogus(1)", 10, "bogus");
    parse_fails("block_size(2)", 1, NULL);          /* not a function */
    parse_fails("log2 > 1", 1, NULL);               /* function without '(' */
    parse_fails("min(1) > 0", 1, NULL);             /* wrong arity */
    parse_fails("max(1, 2, 3)", 1, NULL);
    parse_fails("log2()", 6, NULL);
    parse_fails("min(1 2)", 7, NULL);
    parse_fails("min(1, 2", 9, NULL);
    parse_fails("1 < < 2", 5, NULL);
    parse_fails("* 2", 1, NULL);
    parse_fails("1e999 > 1", 1, NULL);              /* not a finite number */
    parse_fails("! = 1", 3, NULL);
}
END_TEST

START_TEST(parse_error_null_buffers)
{
    /* no message buffer: just NULL, no crash */
    ck_assert_ptr_null(parse("(", NULL, 0));
    ck_assert_ptr_null(parse(NULL, NULL, 0));
    char err[64] = "";
    ck_assert_ptr_null(parse(NULL, err, sizeof err));
    ck_assert(err[0] != 0);
    /* a tiny buffer is still NUL-terminated */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    ck_assert_ptr_null(parse("unknown_name_here + 1", tiny, sizeof tiny));
    ck_assert(memchr(tiny, 0, sizeof tiny) != NULL);
}
END_TEST

START_TEST(parse_hostile_input)
{
    /* deep nesting and long chains are refused, not a stack overflow */
    size_t depth = 100000;
    char *s = malloc(2 * depth + 2);
    ck_assert_ptr_nonnull(s);
    memset(s, '(', depth);
    s[depth] = '1';
    memset(s + depth + 1, ')', depth);
    s[2 * depth + 1] = 0;
    char err[256];
    ck_assert_ptr_null(parse(s, err, sizeof err));
    memset(s, '!', depth);
    s[depth] = '1';
    s[depth + 1] = 0;
    ck_assert_ptr_null(parse(s, err, sizeof err));
    memset(s, '-', depth);
    ck_assert_ptr_null(parse(s, err, sizeof err));
    free(s);

    /* 1+1+...+1 with 50000 terms: refused or evaluated, never a crash */
    size_t terms = 50000;
    s = malloc(2 * terms + 1);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < terms; i++) {
        s[2 * i] = '1';
        s[2 * i + 1] = '+';
    }
    s[2 * terms - 1] = 0;
    kf_expr *e = parse(s, err, sizeof err);
    if (e) {
        kf_variant v = base();
        double out;
        kf_shape sh = shape_n(1);
        ck_assert_int_eq(expr_eval(e, &v, &sh, &out, err, sizeof err), 0);
        ck_assert(out == (double)terms);
        expr_free(e);
    }
    free(s);

    /* moderate nesting is fine */
    EV_EQ("((((((((((((((((((((1))))))))))))))))))))", 1);
    EV_EQ("!!!!!!!!!!!!!!!!!!!!1", 1);
}
END_TEST

// ----------------------------------------------------------------------------
// Evaluation errors

START_TEST(eval_errors)
{
    eval_fails("n / 0 > 1", 3, "zero");             /* division by zero */
    eval_fails("1 + n % 0", 7, "zero");
    kf_variant v = base();
    eval_fails_v("block_size / (n - n)", &v, 1000, 12, "zero");
    eval_fails_v("block_size / n", &v, 0, 12, NULL);
    ck_assert(ev_v("block_size / n", &v, 4) == 64);   /* the same text is fine when n != 0 */

    /* strings against numbers */
    eval_fails("algorithm == 1", 11, "string");
    eval_fails("1 != dtype", 3, NULL);
    eval_fails("block_size == \"big\"", 12, NULL);
    eval_fails("algorithm < \"shuffle\"", 11, NULL);    /* strings only compare with == != */
    eval_fails("\"a\" >= \"b\"", 5, NULL);
    eval_fails("algorithm + 1", 0, NULL);
    eval_fails("-dtype", 0, NULL);
    eval_fails("!op", 0, NULL);
    eval_fails("min(dtype, 1)", 0, NULL);
    eval_fails("algorithm && 1", 0, NULL);
    EV_EQ("1 || \"x\" == 2", 1);                 /* short circuit skips the bad half... */
}
END_TEST

START_TEST(eval_errors_2)
{
    /* ...so this one really is evaluated */
    eval_fails("0 || \"x\" == 2", 10, NULL);
    eval_fails("algorithm", 1, NULL);               /* a string is not a truth value */
    eval_fails("\"abc\"", 1, NULL);
    eval_fails("log2(0)", 1, NULL);
    eval_fails("log2(-4)", 1, NULL);
    /* missing arguments */
    char err[128];
    kf_expr *e = parse("n > 0", err, sizeof err);
    ck_assert_ptr_nonnull(e);
    double out;
    kf_variant v = base();
    kf_shape sh = shape_n(1);
    ck_assert_int_eq(expr_eval(NULL, &v, &sh, &out, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, NULL, &sh, &out, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, &v, &sh, NULL, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, &v, &sh, &out, NULL, 0), 0);
    ck_assert(out == 1);
    /* no shape: sizes read as 0 */
    ck_assert_int_eq(expr_eval(e, &v, NULL, &out, err, sizeof err), 0);
    ck_assert(out == 0);
    expr_free(e);
}
END_TEST

// ----------------------------------------------------------------------------
// Parameter values (param.h): what the identifiers above read, and what
// configs, results lines, labels and #defines write.  For every value x,
// param_valid(x) holds exactly when param_json(x) reads back (through the
// config decoder, the one decoder of parameter values) as x; param_text
// names the same value.

/* param_json(x), parsed and decoded back: 0 and *back, or -1. */
static int json_back(const kf_param *p, int64_t x, int64_t *back, char *json, size_t jsonlen)
{
    strbuf b = {0};
    param_json(&b, p, x);
    ck_assert(!b.failed && b.s);
    snprintf(json, jsonlen, "%s", b.s);
    cJSON *j = cJSON_Parse(b.s);
    ck_assert_msg(j != NULL, "%s: param_json gave invalid JSON: %s", p->name, b.s);
    sb_free(&b);
    char err[512] = "";
    int rc = config_param_value(p, j, "test", back, err, sizeof err);
    if (rc != 0)
        ck_assert_msg(err[0] != 0, "%s: refused %s without a message", p->name, json);
    cJSON_Delete(j);
    return rc;
}

static void text_of(const kf_param *p, int64_t x, char *buf, size_t len)
{
    strbuf b = {0};
    param_text(&b, p, x);
    ck_assert(!b.failed && b.s);
    snprintf(buf, len, "%s", b.s);
    sb_free(&b);
}

/* The test's own reading of param_text's forms: a name, a number, "auto",
 * "<k>xSM", "<k>waves". */
static bool text_back(const kf_param *p, const char *t, int64_t *out)
{
    long long k;
    size_t l = strlen(t);
    switch (p->kind) {
    case KF_PK_ENUM:
        *out = kf_lookup(p->names, p->count, t);
        return *out >= 0;
    case KF_PK_INT:
        if (!kf_parse_ll(t, &k))
            return false;
        *out = k;
        return true;
    case KF_PK_GRID: {
        char num[64];
        kf_grid g = {KF_GRID_AUTO, 0};
        if (strcmp(t, "auto") == 0) {
            *out = kf_grid_encode(g);
            return true;
        }
        if (l > 5 && strcmp(t + l - 5, "waves") == 0) {
            g.kind = KF_GRID_WAVES;
            l -= 5;
        } else if (l > 3 && strcmp(t + l - 3, "xSM") == 0) {
            g.kind = KF_GRID_PER_SM;
            l -= 3;
        } else {
            g.kind = KF_GRID_BLOCKS;
        }
        snprintf(num, sizeof num, "%.*s", (int)l, t);
        if (!kf_parse_ll(num, &k))
            return false;
        g.value = k;
        *out = kf_grid_encode(g);
        return true;
    }
    }
    return false;
}

/* The round-trip property for x; returns param_valid(x). */
static bool roundtrip(const kf_param *p, int64_t x)
{
    char json[256], text[256];
    int64_t back = -12345;
    bool valid = param_valid(p, x);
    int rc = json_back(p, x, &back, json, sizeof json);
    text_of(p, x, text, sizeof text);
    if (valid) {
        ck_assert_msg(rc == 0, "%s: valid value %lld as JSON %s does not read back", p->name, (long long)x, json);
        ck_assert_msg(back == x, "%s: %lld -> %s -> %lld", p->name, (long long)x, json, (long long)back);
        int64_t tb = -12345;
        ck_assert_msg(text_back(p, text, &tb) && tb == x, "%s: %lld -> text '%s' -> %lld", p->name,
                      (long long)x, text, (long long)tb);
        ck_assert_msg(strchr(text, '?') == NULL, "%s: text of a valid value: %s", p->name, text);
    } else {
        ck_assert_msg(rc != 0 || back != x, "%s: invalid value %lld read back from %s", p->name, (long long)x,
                      json);
    }
    return valid;
}

START_TEST(param_enum_roundtrip)
{
    int nenum = 0;
    for (int fi = 0; fi < kf_nfamilies; fi++) {
        const kf_family *f = kf_families[fi];
        for (int i = 0; i < f->nparams; i++) {
            const kf_param *p = &f->params[i];
            if (p->kind != KF_PK_ENUM)
                continue;
            nenum++;
            ck_assert_int_gt(p->count, 0);
            for (int k = 0; k < p->count; k++) {
                ck_assert_msg(roundtrip(p, k), "%s: %s not valid", p->name, p->names[k]);
                char json[256], text[256], want[256];
                int64_t back;
                ck_assert_int_eq(json_back(p, k, &back, json, sizeof json), 0);
                snprintf(want, sizeof want, "\"%s\"", p->names[k]);
                ck_assert_str_eq(json, want);
                text_of(p, k, text, sizeof text);
                ck_assert_str_eq(text, p->names[k]);
            }
            static const int64_t bad[] = {-1, -100, INT64_MIN};
            for (int b = 0; b < N_OF(bad); b++)
                ck_assert_msg(!roundtrip(p, bad[b]), "%s: %lld valid", p->name, (long long)bad[b]);
            ck_assert(!roundtrip(p, p->count));
            ck_assert(!roundtrip(p, p->count + 1000));
            char text[64];
            text_of(p, p->count, text, sizeof text);
            ck_assert_str_eq(text, "?");
        }
    }
    ck_assert_int_ge(nenum, 9);   /* reduce alone has nine */
    /* one by name */
    const kf_family *f = kf_families[reduce_family()];
    char json[64];
    int64_t back;
    ck_assert_int_eq(json_back(&f->params[RP_ALGORITHM], KF_ALG_SHUFFLE, &back, json, sizeof json), 0);
    ck_assert_str_eq(json, "\"shuffle\"");
    ck_assert_int_eq(back, KF_ALG_SHUFFLE);
}
END_TEST

START_TEST(param_int_roundtrip)
{
    int nint = 0;
    for (int fi = 0; fi < kf_nfamilies; fi++) {
        const kf_family *f = kf_families[fi];
        for (int pass = 0; pass < 2; pass++) {
            const kf_param *t = pass ? f->sizes : f->params;
            int count = pass ? f->nsizes : f->nparams;
            for (int i = 0; i < count; i++) {
                const kf_param *p = &t[i];
                if (p->kind != KF_PK_INT)
                    continue;
                nint++;
                ck_assert_int_le(p->lo, p->hi);
                int64_t probes[] = {p->lo > INT64_MIN ? p->lo - 1 : p->lo, p->lo, p->lo + (p->lo < p->hi),
                                    p->hi - (p->lo < p->hi), p->hi, p->hi < INT64_MAX ? p->hi + 1 : p->hi,
                                    p->lo + (p->hi - p->lo) / 2, 0, -1, 3, INT64_MIN, INT64_MAX};
                for (int k = 0; k < N_OF(probes); k++) {
                    int64_t x = probes[k];
                    bool in_range = x >= p->lo && x <= p->hi;
                    bool listed = !p->only;
                    for (const int64_t *o = p->only; o && *o; o++)
                        listed = listed || *o == x;
                    ck_assert_msg(roundtrip(p, x) == (in_range && listed), "%s: %lld", p->name, (long long)x);
                }
                for (const int64_t *o = p->only; o && *o; o++)
                    ck_assert_msg(roundtrip(p, *o), "%s: listed value %lld", p->name, (long long)*o);
                if (!pass)
                    ck_assert_msg(param_valid(p, p->def), "%s: default %lld", p->name, (long long)p->def);
            }
        }
    }
    ck_assert_int_ge(nint, 4);   /* reduce: block_size, elements_per_thread, vector_width, n */

    const kf_family *f = kf_families[reduce_family()];
    const kf_param *bs = &f->params[RP_BLOCK_SIZE], *vw = &f->params[RP_VECTOR_WIDTH];
    char json[64], text[64];
    int64_t back;
    ck_assert_int_eq(json_back(bs, 256, &back, json, sizeof json), 0);
    ck_assert_str_eq(json, "256");
    ck_assert_int_eq(back, 256);
    text_of(bs, 256, text, sizeof text);
    ck_assert_str_eq(text, "256");
    ck_assert(roundtrip(bs, 1024));
    ck_assert(!roundtrip(bs, 1025));
    ck_assert(!roundtrip(bs, 0));
    ck_assert(roundtrip(vw, 1));
    ck_assert(roundtrip(vw, 2));
    ck_assert(!roundtrip(vw, 3));     /* in 1..4 but not one of 1, 2, 4 */
    ck_assert(roundtrip(vw, 4));
    int n = param_find(f->sizes, f->nsizes, "n");
    ck_assert_int_ge(n, 0);
    ck_assert(roundtrip(&f->sizes[n], 1LL << 36));
    ck_assert(!roundtrip(&f->sizes[n], (1LL << 36) + 1));
}
END_TEST

START_TEST(param_grid_roundtrip)
{
    const kf_family *f = kf_families[reduce_family()];
    const kf_param *p = &f->params[RP_GRID];
    ck_assert_int_eq(p->kind, KF_PK_GRID);
    ck_assert_int_eq(param_find(f->params, f->nparams, "grid"), RP_GRID);
    static const struct {
        kf_grid g;
        const char *json, *text;
    } good[] = {
        {{KF_GRID_AUTO, 0}, "\"auto\"", "auto"},
        {{KF_GRID_BLOCKS, 1}, "1", "1"},
        {{KF_GRID_BLOCKS, 2048}, "2048", "2048"},
        {{KF_GRID_BLOCKS, KF_GRID_MAX_BLOCKS}, "2147483647", "2147483647"},
        {{KF_GRID_PER_SM, 1}, "{\"blocks_per_sm\": 1}", "1xSM"},
        {{KF_GRID_PER_SM, 4}, "{\"blocks_per_sm\": 4}", "4xSM"},
        {{KF_GRID_PER_SM, KF_GRID_MAX_PER_SM}, "{\"blocks_per_sm\": 64}", "64xSM"},
        {{KF_GRID_WAVES, 1}, "{\"waves\": 1}", "1waves"},
        {{KF_GRID_WAVES, 2}, "{\"waves\": 2}", "2waves"},
        {{KF_GRID_WAVES, KF_GRID_MAX_PER_SM}, "{\"waves\": 64}", "64waves"},
    };
    for (int i = 0; i < N_OF(good); i++) {
        int64_t x = kf_grid_encode(good[i].g);
        kf_grid d = kf_grid_decode(x);
        ck_assert_int_eq(d.kind, good[i].g.kind);
        ck_assert_int_eq(d.value, good[i].g.value);
        ck_assert_msg(roundtrip(p, x), "%s not valid", good[i].json);
        char json[128], text[128];
        int64_t back;
        ck_assert_int_eq(json_back(p, x, &back, json, sizeof json), 0);
        ck_assert_str_eq(json, good[i].json);
        ck_assert_int_eq(back, x);
        text_of(p, x, text, sizeof text);
        ck_assert_str_eq(text, good[i].text);
    }
    ck_assert_int_eq(kf_grid_encode((kf_grid){KF_GRID_AUTO, 0}), p->def);   /* the default: auto */
    static const kf_grid bad[] = {
        {KF_GRID_AUTO, 5},  {KF_GRID_BLOCKS, 0},  {KF_GRID_BLOCKS, -1},
        {KF_GRID_BLOCKS, KF_GRID_MAX_BLOCKS + 1}, {KF_GRID_PER_SM, 0}, {KF_GRID_PER_SM, KF_GRID_MAX_PER_SM + 1},
        {KF_GRID_WAVES, 0}, {KF_GRID_WAVES, -3},  {KF_GRID_WAVES, KF_GRID_MAX_PER_SM + 1},
        {KF_GRID_KIND_COUNT, 1},
    };
    for (int i = 0; i < N_OF(bad); i++)
        ck_assert_msg(!roundtrip(p, kf_grid_encode(bad[i])), "grid kind %d value %lld valid", bad[i].kind,
                      (long long)bad[i].value);
    ck_assert(!roundtrip(p, -1));
    ck_assert(!roundtrip(p, INT64_MIN));
}
END_TEST

// ----------------------------------------------------------------------------
// Expressions as C source text (expr_c_text)

static char *c_text(const char *text, char *err, size_t errlen)
{
    kf_expr *e = parse(text, err, errlen);
    ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, err);
    char *c = expr_c_text(e, "v_", err, errlen);
    expr_free(e);
    return c;
}

START_TEST(c_text_written)
{
    static const char *const cases[][2] = {
        {"7 / 2", "(7.0 / 2.0)"},
        {"block_size % 3", "fmod(v_block_size, 3.0)"},
        {"n < 4", "(v_n < 4.0 ? 1.0 : 0.0)"},
        {"!n", "(v_n == 0 ? 1.0 : 0.0)"},
        {"-n * 2.5", "((-v_n) * 2.5)"},
        {"1e20 + 0.1", "(1e+20 + 0.10000000000000001)"},
        {"min(1, n)", "(1.0 < v_n ? 1.0 : v_n)"},
        {"max(n, 1)", "(v_n > 1.0 ? v_n : 1.0)"},
        {"log2(n) + pow2(3)", "(log2(v_n) + pow(2.0, 3.0))"},
        {"ceil(n / 3) + floor(n)", "(ceil((v_n / 3.0)) + floor(v_n))"},
        {"n // 3", "floor(v_n / 3.0)"},
        {"n and not n", "(v_n && (v_n == 0 ? 1.0 : 0.0) ? 1.0 : 0.0)"},
        {"n && block_size || 0", "((v_n && v_block_size ? 1.0 : 0.0) || 0.0 ? 1.0 : 0.0)"},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        char err[256] = "";
        char *c = c_text(cases[i][0], err, sizeof err);
        ck_assert_msg(c != NULL, "'%s' not written: %s", cases[i][0], err);
        ck_assert_msg(strcmp(c, cases[i][1]) == 0, "'%s' written %s, want %s", cases[i][0], c, cases[i][1]);
        free(c);
    }
}
END_TEST

START_TEST(c_text_refused)
{
    static const char *const cases[][2] = {
        {"algorithm == \"shuffle\"", "algorithm is an enumerated or grid parameter"},
        {"n > 0 || \"x\" == \"y\"", "the string \"x\" has no value in C"},
        {"grid * 2", "grid is an enumerated or grid parameter"},
        {"elem_bytes * n", "elem_bytes is a name the family derives"},
        {"max(n, tile)", "tile is a name the family derives"},
    };
    for (int i = 0; i < N_OF(cases); i++) {
        char err[256] = "";
        char *c = c_text(cases[i][0], err, sizeof err);
        ck_assert_msg(c == NULL, "'%s' written as %s", cases[i][0], c ? c : "");
        ck_assert_msg(strstr(err, cases[i][1]) && strstr(err, cases[i][0]), "'%s': want \"%s\" in: %s",
                      cases[i][0], cases[i][1], err);
    }
    char err[64];
    ck_assert(expr_c_text(NULL, "v_", err, sizeof err) == NULL);
}
END_TEST

/* The C text of every expression, compiled with the system's C compiler
 * into a program that prints each value for the variables it reads at run
 * time (so the compiler folds nothing), must give expr_eval's values bit
 * for bit at several points, NaN and infinities included where the C
 * arithmetic gives them. */
START_TEST(c_text_compiled)
{
    static const char *const exprs[] = {
        "7 / 2", "7 % 3", "-7 % 3", "7 % -3", "7.5 % 2", "1 - 2 - 3", "100 / 10 / 3", "0.1 + 0.2",
        "(n + block_size * elements_per_thread - 1) / (block_size * elements_per_thread)",
        "(n + block_size - 1) % block_size", "n / 3 * 3 - n", "(1 < 2) / (3 < 4)", "(n < 2) + (n >= 2) * 5",
        "n == 1000 && block_size != 64", "0 && 1 || n", "!0 + !n + !!block_size", "-(-n)", "- - -3",
        "log2(n)", "log2(block_size) * 3", "pow2(elements_per_thread)", "pow2(log2(n) / 2)", "pow2(0.5)",
        "ceil(n / block_size)", "floor(n / 3) * 3 - n", "ceil(-n / 7)", "n // block_size * 3", "-n // 7",
        "n > 5 and block_size < 512 or not n",
        "min(n, block_size * 4)", "max(min(n, 100), min(block_size, 7)) * 2", "min(-n, max(n, 5))",
        "4 * block_size * (block_size + vector_width)", "2.5e-1 * 4", "1e300 * 1e10", "n / (block_size - block_size)",
        "(n - n) % 3", "1e20 / 3 + n", "vector_width * elements_per_thread / 3",
    };
    static const struct {
        int64_t block_size, ept, vw, n;
    } pts[] = {{256, 4, 2, 1000}, {64, 1, 1, 1}, {1024, 7, 4, 123456789}, {32, 3, 8, 17}};
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/kforge-test-expr-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    char src[600], bin[600], out[600], cmd[2400];
    snprintf(src, sizeof src, "%s/e.c", dir);
    snprintf(bin, sizeof bin, "%s/e", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    FILE *f = fopen(src, "w");
    ck_assert(f != NULL);
    fputs("#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
          "int main(int argc, char **argv)\n{\n    (void)argc;\n"
          "    const double v_block_size = atof(argv[1]), v_elements_per_thread = atof(argv[2]),\n"
          "                 v_vector_width = atof(argv[3]), v_n = atof(argv[4]);\n", f);
    for (int i = 0; i < N_OF(exprs); i++) {
        char err[256] = "";
        char *c = c_text(exprs[i], err, sizeof err);
        ck_assert_msg(c != NULL, "'%s' not written: %s", exprs[i], err);
        fprintf(f, "    printf(\"%%a\\n\", (double)%s);\n", c);
        free(c);
    }
    fputs("    return 0;\n}\n", f);
    fclose(f);
    const char *cc = getenv("CC");
    snprintf(cmd, sizeof cmd, "%s -std=c11 -O2 -Wall -Werror %s -o %s -lm", cc && *cc ? cc : "cc", src, bin);
    ck_assert_msg(system(cmd) == 0, "could not compile the C text: %s", cmd);
    kf_variant v = base();
    reduce_v r;
    for (int p = 0; p < N_OF(pts); p++) {
        reduce_decode(&v, &r);
        r.block_size = pts[p].block_size;
        r.elements_per_thread = pts[p].ept;
        r.vector_width = pts[p].vw;
        reduce_encode(&r, NULL, &v);
        snprintf(cmd, sizeof cmd, "%s %lld %lld %lld %lld > %s", bin, (long long)pts[p].block_size,
                 (long long)pts[p].ept, (long long)pts[p].vw, (long long)pts[p].n, out);
        ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
        f = fopen(out, "r");
        ck_assert(f != NULL);
        for (int i = 0; i < N_OF(exprs); i++) {
            char line[128];
            ck_assert_msg(fgets(line, sizeof line, f) != NULL, "no value for '%s'", exprs[i]);
            double got = strtod(line, NULL), want = NAN;
            char err[256] = "";
            kf_expr *e = parse(exprs[i], err, sizeof err);
            kf_shape sh = shape_n(pts[p].n);
            if (expr_eval(e, &v, &sh, &want, err, sizeof err) != 0) /* division by zero: C gives inf or NaN */
                ck_assert_msg(!isfinite(got), "'%s' at point %d: C gives %.17g where expr_eval fails (%s)", exprs[i],
                              p, got, err);
            else
                ck_assert_msg(got == want || (isnan(got) && isnan(want)), "'%s' at point %d: C gives %a, expr_eval %a",
                              exprs[i], p, got, want);
            expr_free(e);
        }
        fclose(f);
    }
    remove(out);
    remove(bin);
    remove(src);
    ck_assert_msg(rmdir(dir) == 0, "rmdir %s", dir);
}
END_TEST

static Suite *expr_suite(void)
{
    Suite *s = suite_create("expr");
    TCase *ev_tc = tcase_create("eval");
    tcase_add_test(ev_tc, arithmetic);
    tcase_add_test(ev_tc, precedence_and_associativity);
    tcase_add_test(ev_tc, comparisons_and_logic);
    tcase_add_test(ev_tc, functions);
    tcase_add_test(ev_tc, identifiers);
    tcase_add_test(ev_tc, enum_axes_compare_with_strings);
    tcase_add_test(ev_tc, grid_identifier);
    tcase_add_test(ev_tc, uses_n);
    tcase_add_test(ev_tc, reuse_parsed);
    tcase_add_test(ev_tc, family_identifiers_accepted);
    suite_add_tcase(s, ev_tc);

    TCase *err = tcase_create("errors");
    tcase_set_timeout(err, 60);
    tcase_add_test(err, parse_error_positions);
    tcase_add_test(err, other_family_identifiers_rejected);
    tcase_add_test(err, parse_error_null_buffers);
    tcase_add_test(err, parse_hostile_input);
    tcase_add_test(err, eval_errors);
    tcase_add_test(err, eval_errors_2);
    suite_add_tcase(s, err);

    TCase *pt = tcase_create("param");
    tcase_add_test(pt, param_enum_roundtrip);
    tcase_add_test(pt, param_int_roundtrip);
    tcase_add_test(pt, param_grid_roundtrip);
    suite_add_tcase(s, pt);

    TCase *ct = tcase_create("c_text");
    tcase_set_timeout(ct, 60);
    tcase_add_test(ct, c_text_written);
    tcase_add_test(ct, c_text_refused);
    tcase_add_test(ct, c_text_compiled);
    suite_add_tcase(s, ct);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(expr_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
