/*
 * test_expr.c -- constraint expressions: parsing, evaluation, messages.
 *
 *   make build/tests/test_expr && build/tests/test_expr
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "expr.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static kf_variant base(void)
{
    kf_variant v;
    kf_variant_defaults(&v);
    v.dtype = KF_FLOAT64;
    v.op = KF_OP_MAX;
    v.algorithm = KF_ALG_SHUFFLE;
    v.block_size = 256;
    v.elements_per_thread = 4;
    v.unroll = KF_UNROLL_FULL;
    v.vector_width = 2;
    v.grid.kind = KF_GRID_BLOCKS;
    v.grid.value = 2048;
    v.passes = KF_PASSES_LAST_BLOCK;
    v.layout = KF_LAYOUT_GRID;
    v.accumulator = KF_ACC_SHARED;
    v.warp_reduce = KF_WARP_SHUFFLE;
    v.load = KF_LOAD_LDG;
    return v;
}

/* Parses and evaluates; both must succeed. */
static double ev_v(const char *text, const kf_variant *v, int64_t n)
{
    char err[512] = "";
    kf_expr *e = expr_parse(text, err, sizeof err);
    ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, err);
    double out = NAN;
    int rc = expr_eval(e, v, n, &out, err, sizeof err);
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
    kf_expr *e = expr_parse(text, err, sizeof err);
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
    kf_expr *e = expr_parse(text, err, sizeof err);
    ck_assert_msg(e != NULL, "parse of '%s' failed: %s", text, err);
    double out = 0;
    err[0] = 0;
    int rc = expr_eval(e, v, n, &out, err, sizeof err);
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

    for (int t = 0; t < KF_DTYPE_COUNT; t++) {
        v.dtype = (kf_dtype)t;
        for (int vw = 1; vw <= 4; vw *= 2) {
            v.vector_width = vw;
            double es = (double)kf_dtype_size((kf_dtype)t);
            ck_assert(ev_v("elem_bytes", &v, 1) == es);
            ck_assert(ev_v("vector_bytes", &v, 1) == es * vw);
            ck_assert(ev_v("tile", &v, 1) == 256.0 * 4 * vw);
        }
    }
    v = base();
    v.elements_per_thread = 8;
    v.block_size = 1024;
    ck_assert(ev_v("block_size * elements_per_thread <= 16384", &v, 1) == 1);
    v.elements_per_thread = 32;
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
    struct {
        kf_axis ax;
        const char *const *names;
        int count;
    } axes[] = {
        {KF_AX_DTYPE, kf_dtype_names, KF_DTYPE_COUNT},
        {KF_AX_OP, kf_op_names, KF_OP_COUNT},
        {KF_AX_ALGORITHM, kf_algorithm_names, KF_ALG_COUNT},
        {KF_AX_UNROLL, kf_unroll_names, KF_UNROLL_COUNT},
        {KF_AX_PASSES, kf_passes_names, KF_PASSES_COUNT},
        {KF_AX_LAYOUT, kf_layout_names, KF_LAYOUT_COUNT},
        {KF_AX_ACCUMULATOR, kf_accum_names, KF_ACC_COUNT},
        {KF_AX_WARP_REDUCE, kf_warp_reduce_names, KF_WARP_COUNT},
        {KF_AX_LOAD, kf_load_names, KF_LOAD_COUNT},
    };
    for (int a = 0; a < N_OF(axes); a++) {
        const char *axis = kf_axis_names[axes[a].ax];
        for (int val = 0; val < axes[a].count; val++) {
            kf_variant v = base();
            switch (axes[a].ax) {
            case KF_AX_DTYPE: v.dtype = (kf_dtype)val; break;
            case KF_AX_OP: v.op = (kf_op)val; break;
            case KF_AX_ALGORITHM: v.algorithm = (kf_algorithm)val; break;
            case KF_AX_UNROLL: v.unroll = (kf_unroll)val; break;
            case KF_AX_PASSES: v.passes = (kf_passes)val; break;
            case KF_AX_LAYOUT: v.layout = (kf_layout)val; break;
            case KF_AX_ACCUMULATOR: v.accumulator = (kf_accum)val; break;
            case KF_AX_WARP_REDUCE: v.warp_reduce = (kf_warp_reduce)val; break;
            default: v.load = (kf_load)val; break;
            }
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
    v.algorithm = KF_ALG_ATOMIC_GLOBAL;
    ck_assert(ev_v("algorithm != \"atomic_global\" || n <= 1048576", &v, 1 << 30) == 0);
    ck_assert(ev_v("algorithm != \"atomic_global\" || n <= 1048576", &v, 1 << 20) == 1);
    ck_assert(ev_v("dtype == \"float64\" && op == \"max\" && !(load == \"stream\")", &v, 1) == 1);
    ck_assert(ev_v("(dtype == \"int32\") + (dtype == \"float64\") * 2", &v, 1) == 2);
}
END_TEST

START_TEST(grid_identifier)
{
    kf_variant v = base();
    v.grid.kind = KF_GRID_BLOCKS;
    v.grid.value = 4096;
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
        kf_expr *e = expr_parse(cases[i].text, err, sizeof err);
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
    kf_expr *e = expr_parse("block_size * elements_per_thread * 2 <= n", err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);
    kf_variant v = base();
    for (int bs = 32; bs <= 1024; bs *= 2)
        for (int ept = 1; ept <= 16; ept *= 2)
            for (int64_t n = 1; n <= 1 << 16; n *= 4) {
                v.block_size = bs;
                v.elements_per_thread = ept;
                double out;
                ck_assert_int_eq(expr_eval(e, &v, n, &out, err, sizeof err), 0);
                ck_assert(out == (bs * ept * 2 <= n));
            }
    expr_free(e);
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
    ck_assert_ptr_null(expr_parse("(", NULL, 0));
    ck_assert_ptr_null(expr_parse(NULL, NULL, 0));
    char err[64] = "";
    ck_assert_ptr_null(expr_parse(NULL, err, sizeof err));
    ck_assert(err[0] != 0);
    /* a tiny buffer is still NUL-terminated */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    ck_assert_ptr_null(expr_parse("unknown_name_here + 1", tiny, sizeof tiny));
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
    ck_assert_ptr_null(expr_parse(s, err, sizeof err));
    memset(s, '!', depth);
    s[depth] = '1';
    s[depth + 1] = 0;
    ck_assert_ptr_null(expr_parse(s, err, sizeof err));
    memset(s, '-', depth);
    ck_assert_ptr_null(expr_parse(s, err, sizeof err));
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
    kf_expr *e = expr_parse(s, err, sizeof err);
    if (e) {
        kf_variant v = base();
        double out;
        ck_assert_int_eq(expr_eval(e, &v, 1, &out, err, sizeof err), 0);
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
    kf_expr *e = expr_parse("n > 0", err, sizeof err);
    ck_assert_ptr_nonnull(e);
    double out;
    kf_variant v = base();
    ck_assert_int_eq(expr_eval(NULL, &v, 1, &out, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, NULL, 1, &out, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, &v, 1, NULL, err, sizeof err), -1);
    ck_assert_int_eq(expr_eval(e, &v, 1, &out, NULL, 0), 0);
    ck_assert(out == 1);
    expr_free(e);
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
    suite_add_tcase(s, ev_tc);

    TCase *err = tcase_create("errors");
    tcase_set_timeout(err, 60);
    tcase_add_test(err, parse_error_positions);
    tcase_add_test(err, parse_error_null_buffers);
    tcase_add_test(err, parse_hostile_input);
    tcase_add_test(err, eval_errors);
    tcase_add_test(err, eval_errors_2);
    suite_add_tcase(s, err);
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
