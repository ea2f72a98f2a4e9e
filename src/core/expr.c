/*
 * expr.c -- constraint expressions (see expr.h): a recursive-descent parser
 * to a small tree, evaluated in double precision against one variant.
 *
 * Names are resolved while parsing, so a typo is reported with its position
 * before anything is expanded.  Types (string or number) are checked while
 * evaluating, as expr.h promises.
 */
#include "expr.h"

#include "config.h"
#include "family.h"
#include "util.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parser recursion (parentheses, unary chains, call arguments) and tree
 * height are bounded so that hostile input cannot exhaust the stack while
 * parsing, evaluating or freeing. */
#define EXPR_MAX_DEPTH 200
#define EXPR_MAX_HEIGHT 1000

typedef enum { E_NUM, E_STR, E_VAR, E_NEG, E_NOT, E_BIN, E_CALL } ekind;

typedef enum {
    B_OR, B_AND, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_ADD, B_SUB, B_MUL, B_DIV, B_MOD, B_IDIV
} binop;

static const char *const binop_text[] = {"||", "&&", "==", "!=", "<",  "<=", ">",
                                         ">=", "+",  "-",  "*",  "/",  "%", "//"};

/* Identifiers of a family: its parameters (indices 0..), its size
 * dimensions (V_SIZE + d) and its derived names (V_DERIVED + k). */
enum { V_SIZE = 64, V_DERIVED = 128, V_END = 192 };

typedef enum { F_LOG2, F_POW2, F_MIN, F_MAX, F_CEIL, F_FLOOR, F_COUNT } efunc;
static const char *const func_names[F_COUNT] = {"log2", "pow2", "min", "max", "ceil", "floor"};
static const int func_arity[F_COUNT] = {1, 1, 2, 2, 1, 1};

typedef struct enode {
    ekind kind;
    int op;             /* binop, variable index, or efunc */
    size_t pos;         /* 0-based offset of the token, for messages */
    int height;
    double num;
    char *str;
    struct enode *a, *b;
} enode;

struct kf_expr {
    enode *root;
    char *text;
    bool uses_n;
    bool uses_p;        /* mentions a parameter or a derived name */
    const kf_family *fam;
};

/* The name of identifier i, or NULL if the family has none there. */
static const char *var_name(const kf_family *f, int i)
{
    if (i >= 0 && i < f->nparams)
        return f->params[i].name;
    if (i >= V_SIZE && i < V_SIZE + f->nsizes)
        return f->sizes[i - V_SIZE].name;
    if (i >= V_DERIVED && i < V_DERIVED + f->nderived)
        return f->derived[i - V_DERIVED];
    return NULL;
}

/* Name table of an enumerated parameter, or NULL for numeric ones. */
static const char *const *enum_names(const kf_family *f, int var, int *count)
{
    if (var >= 0 && var < f->nparams && f->params[var].kind == KF_PK_ENUM) {
        *count = f->params[var].count;
        return f->params[var].names;
    }
    *count = 0;
    return NULL;
}

static void node_free(enode *n)
{
    if (!n)
        return;
    node_free(n->a);
    node_free(n->b);
    free(n->str);
    free(n);
}

// ---------------------------------------------------------------------------
// parser

typedef struct {
    const char *s;
    size_t len;
    size_t pos;
    int depth;
    bool uses_n, uses_p;
    const kf_family *fam;
    bool failed;
    char *err;
    size_t errlen;
} parser;

static void perr(parser *p, size_t pos, const char *fmt, ...) KF_PRINTF(3, 4);
static void perr(parser *p, size_t pos, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kf_err(p->err, p->errlen, "'%s' at position %zu: %s", p->s, pos + 1, msg);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                                p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

/* Consumes op (after whitespace) if it is next and not the prefix of a
 * longer operator given in not_before (e.g. "<" must not match "<="). */
static bool accept(parser *p, const char *op, char not_before)
{
    skip_ws(p);
    size_t n = strlen(op);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, op, n) != 0)
        return false;
    /* a word (and, or, not) ends where a name would */
    if (isalpha((unsigned char)op[0]) && p->pos + n < p->len &&
        (isalnum((unsigned char)p->s[p->pos + n]) || p->s[p->pos + n] == '_'))
        return false;
    if (not_before && p->pos + n < p->len && p->s[p->pos + n] == not_before)
        return false;
    p->pos += n;
    return true;
}

/* The token at pos, for "got '...'" messages. */
static void token_text(const parser *p, size_t pos, char *buf, size_t len)
{
    size_t end = pos;
    if (pos >= p->len) {
        snprintf(buf, len, "end of expression");
        return;
    }
    if (is_ident_char(p->s[pos]) || p->s[pos] == '.') {
        while (end < p->len && (is_ident_char(p->s[end]) || p->s[end] == '.') && end - pos < 32)
            end++;
    } else {
        end = pos + 1;
    }
    snprintf(buf, len, "'%.*s'", (int)(end - pos), p->s + pos);
}

static enode *new_node(parser *p, ekind kind, size_t pos)
{
    enode *n = calloc(1, sizeof *n);
    if (!n) {
        perr(p, pos, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->pos = pos;
    n->height = 1;
    return n;
}

/* Joins children under a new node; frees them if that fails. */
static enode *join(parser *p, ekind kind, int op, size_t pos, enode *a, enode *b)
{
    if (!a || (kind == E_BIN && !b) || p->failed) {
        node_free(a);
        node_free(b);
        return NULL;
    }
    int h = 1 + (a->height > (b ? b->height : 0) ? a->height : b->height);
    if (h > EXPR_MAX_HEIGHT) {
        perr(p, pos, "expression too long (more than %d nested operations)", EXPR_MAX_HEIGHT);
        node_free(a);
        node_free(b);
        return NULL;
    }
    enode *n = new_node(p, kind, pos);
    if (!n) {
        node_free(a);
        node_free(b);
        return NULL;
    }
    n->op = op;
    n->a = a;
    n->b = b;
    n->height = h;
    return n;
}

static enode *parse_or(parser *p);

/* An enumerated axis compared with a string literal: the literal must be
 * one of the axis's names, or the comparison could never be true. */
static void check_enum_literal(parser *p, const enode *a, const enode *b)
{
    if (a->kind == E_STR && b->kind == E_VAR) {
        const enode *t = a;
        a = b;
        b = t;
    }
    if (a->kind != E_VAR || b->kind != E_STR)
        return;
    int count;
    const char *const *names = enum_names(p->fam, a->op, &count);
    if (!names || kf_lookup(names, count, b->str) >= 0)
        return;
    const char *s = kf_suggest(b->str, names, count);
    if (s) {
        perr(p, b->pos, "unknown %s '%s' (did you mean '%s'?)", var_name(p->fam, a->op), b->str, s);
        return;
    }
    char allowed[256] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof allowed; i++) {
        int w = snprintf(allowed + used, sizeof allowed - used, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    perr(p, b->pos, "unknown %s '%s' (allowed: %s)", var_name(p->fam, a->op), b->str, allowed);
}

static enode *parse_number(parser *p)
{
    size_t start = p->pos, i = p->pos;
    while (i < p->len && is_digit(p->s[i]))
        i++;
    if (i < p->len && p->s[i] == '.') {
        i++;
        while (i < p->len && is_digit(p->s[i]))
            i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->len && (p->s[j] == '+' || p->s[j] == '-'))
            j++;
        if (j < p->len && is_digit(p->s[j])) {
            while (j < p->len && is_digit(p->s[j]))
                j++;
            i = j;
        }
    }
    char buf[64];
    if (i - start >= sizeof buf) {
        perr(p, start, "number too long");
        return NULL;
    }
    memcpy(buf, p->s + start, i - start);
    buf[i - start] = '\0';
    double x;
    if (!kf_parse_double(buf, &x) || !isfinite(x)) {
        perr(p, start, "bad number '%s'", buf);
        return NULL;
    }
    p->pos = i;
    enode *n = new_node(p, E_NUM, start);
    if (n)
        n->num = x;
    return n;
}

static enode *parse_string(parser *p)
{
    size_t start = p->pos;
    const char *close = memchr(p->s + start + 1, '"', p->len - start - 1);
    if (!close) {
        perr(p, start, "unterminated string");
        return NULL;
    }
    size_t n = (size_t)(close - (p->s + start + 1));
    enode *nd = new_node(p, E_STR, start);
    if (!nd)
        return NULL;
    nd->str = malloc(n + 1);
    if (!nd->str) {
        free(nd);
        perr(p, start, "out of memory");
        return NULL;
    }
    memcpy(nd->str, p->s + start + 1, n);
    nd->str[n] = '\0';
    p->pos = start + n + 2;
    return nd;
}

static enode *parse_call(parser *p, int f, size_t start)
{
    enode *args[2] = {NULL, NULL};
    int nargs = 0;
    accept(p, "(", 0);
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ')') {
        perr(p, p->pos, "%s takes %d argument%s, got 0", func_names[f], func_arity[f],
             func_arity[f] == 1 ? "" : "s");
        return NULL;
    }
    for (;;) {
        enode *a = parse_or(p);
        if (!a)
            goto fail;
        if (nargs < 2)
            args[nargs] = a;
        else
            node_free(a);
        nargs++;
        if (accept(p, ",", 0))
            continue;
        if (accept(p, ")", 0))
            break;
        skip_ws(p);
        char got[48];
        token_text(p, p->pos, got, sizeof got);
        perr(p, p->pos, "expected ',' or ')' in the call of %s, got %s", func_names[f], got);
        goto fail;
    }
    if (nargs != func_arity[f]) {
        perr(p, start, "%s takes %d argument%s, got %d", func_names[f], func_arity[f],
             func_arity[f] == 1 ? "" : "s", nargs);
        goto fail;
    }
    return join(p, E_CALL, f, start, args[0], args[1]);
fail:
    node_free(args[0]);
    node_free(args[1]);
    return NULL;
}

static enode *parse_identifier(parser *p)
{
    size_t start = p->pos, end = p->pos;
    while (end < p->len && is_ident_char(p->s[end]))
        end++;
    char name[64];
    size_t n = end - start;
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p->s + start);
    p->pos = end;
    skip_ws(p);
    bool call = p->pos < p->len && p->s[p->pos] == '(';

    int var = -1, fn = -1;
    if (n < sizeof name) {
        for (int i = 0; i < V_END; i++)
            if (var_name(p->fam, i) && strcmp(name, var_name(p->fam, i)) == 0)
                var = i;
        fn = kf_lookup(func_names, F_COUNT, name);
    }
    if (call) {
        if (fn >= 0)
            return parse_call(p, fn, start);
        if (var >= 0) {
            perr(p, start, "'%s' is not a function", name);
            return NULL;
        }
        const char *s = kf_suggest(name, func_names, F_COUNT);
        if (s)
            perr(p, start, "unknown function '%s' (did you mean '%s'?)", name, s);
        else
            perr(p, start, "unknown function '%s' (known: log2, pow2, min, max, ceil, floor)", name);
        return NULL;
    }
    if (fn >= 0) {
        perr(p, start, "expected '(' after %s", name);
        return NULL;
    }
    if (var < 0) {
        const char *cands[V_END + F_COUNT];
        int nc = 0;
        for (int i = 0; i < V_END; i++)
            if (var_name(p->fam, i))
                cands[nc++] = var_name(p->fam, i);
        for (int i = 0; i < F_COUNT; i++)
            cands[nc++] = func_names[i];
        const char *s = kf_suggest(name, cands, nc);
        if (s)
            perr(p, start, "unknown name '%s' (did you mean '%s'?)", name, s);
        else
            perr(p, start, "unknown name '%s'", name);
        return NULL;
    }
    if (var >= V_SIZE && var < V_DERIVED)
        p->uses_n = true;
    else
        p->uses_p = true;
    enode *nd = new_node(p, E_VAR, start);
    if (nd)
        nd->op = var;
    return nd;
}

static enode *parse_primary(parser *p)
{
    skip_ws(p);
    if (p->pos >= p->len) {
        perr(p, p->pos, "expected a value");
        return NULL;
    }
    char c = p->s[p->pos];
    if (is_digit(c) || (c == '.' && p->pos + 1 < p->len && is_digit(p->s[p->pos + 1])))
        return parse_number(p);
    if (c == '"')
        return parse_string(p);
    if (is_ident_start(c))
        return parse_identifier(p);
    if (c == '(') {
        size_t open = p->pos;
        p->pos++;
        enode *e = parse_or(p);
        if (!e)
            return NULL;
        if (!accept(p, ")", 0)) {
            skip_ws(p);
            char got[48];
            token_text(p, p->pos, got, sizeof got);
            perr(p, p->pos, "expected ')' to close the '(' at position %zu, got %s", open + 1, got);
            node_free(e);
            return NULL;
        }
        return e;
    }
    if (c == '\'') {
        perr(p, p->pos, "strings use double quotes");
        return NULL;
    }
    char got[48];
    token_text(p, p->pos, got, sizeof got);
    perr(p, p->pos, "expected a value, got %s", got);
    return NULL;
}

static enode *parse_level(parser *p, int level);

static enode *parse_unary(parser *p)
{
    if (++p->depth > EXPR_MAX_DEPTH) {
        perr(p, p->pos, "expression nested too deeply");
        return NULL;
    }
    enode *r;
    skip_ws(p);
    size_t pos = p->pos;
    if (accept(p, "!", '='))
        r = join(p, E_NOT, 0, pos, parse_unary(p), NULL);
    else if (accept(p, "not", 0)) /* Python's: over a comparison, `not a == b` is !(a == b) */
        r = join(p, E_NOT, 0, pos, parse_level(p, 2), NULL);
    else if (accept(p, "-", 0))
        r = join(p, E_NEG, 0, pos, parse_unary(p), NULL);
    else
        r = parse_primary(p);
    p->depth--;
    return r;
}

/* One precedence level of left-associative binary operators. */
typedef struct {
    const char *text;
    char not_before;
    binop op;
} opdef;

static enode *parse_level(parser *p, int level);

static const opdef level_ops[][4] = {
    {{"||", 0, B_OR}, {"or", 0, B_OR}},
    {{"&&", 0, B_AND}, {"and", 0, B_AND}},
    {{"==", 0, B_EQ}, {"!=", 0, B_NE}},
    {{"<=", 0, B_LE}, {">=", 0, B_GE}, {"<", 0, B_LT}, {">", 0, B_GT}},
    {{"+", 0, B_ADD}, {"-", 0, B_SUB}},
    {{"*", 0, B_MUL}, {"//", 0, B_IDIV}, {"/", 0, B_DIV}, {"%", 0, B_MOD}},
};
#define NLEVELS ((int)(sizeof level_ops / sizeof level_ops[0]))

static enode *parse_level(parser *p, int level)
{
    if (level == NLEVELS)
        return parse_unary(p);
    enode *l = parse_level(p, level + 1);
    while (l) {
        const opdef *hit = NULL;
        skip_ws(p);
        size_t pos = p->pos;
        for (int i = 0; i < 4 && level_ops[level][i].text; i++)
            if (accept(p, level_ops[level][i].text, level_ops[level][i].not_before)) {
                hit = &level_ops[level][i];
                break;
            }
        if (!hit)
            break;
        enode *r = parse_level(p, level + 1);
        if (r && (hit->op == B_EQ || hit->op == B_NE))
            check_enum_literal(p, l, r);
        l = join(p, E_BIN, (int)hit->op, pos, l, r);
    }
    return l;
}

static enode *parse_or(parser *p)
{
    if (++p->depth > EXPR_MAX_DEPTH) {
        perr(p, p->pos, "expression nested too deeply");
        return NULL;
    }
    enode *e = parse_level(p, 0);
    p->depth--;
    return e;
}

kf_expr *expr_parse(const char *text, int family, char *err, size_t errlen)
{
    return expr_parse_for(text, kf_families[family], err, errlen);
}

kf_expr *expr_parse_for(const char *text, const kf_family *f, char *err, size_t errlen)
{
    if (!text) {
        kf_err(err, errlen, "no expression");
        return NULL;
    }
    parser p = {.s = text, .len = strlen(text), .err = err, .errlen = errlen, .fam = f};
    kf_expr *e = NULL;
    enode *root = parse_or(&p);
    if (root) {
        skip_ws(&p);
        if (p.pos < p.len) {
            char c = p.s[p.pos];
            char next = p.pos + 1 < p.len ? p.s[p.pos + 1] : '\0';
            char got[48];
            token_text(&p, p.pos, got, sizeof got);
            if (c == '=' && next != '=')
                perr(&p, p.pos, "'=' is not an operator (did you mean '=='?)");
            else if (c == '&' && next != '&')
                perr(&p, p.pos, "'&' is not an operator (did you mean '&&'?)");
            else if (c == '|' && next != '|')
                perr(&p, p.pos, "'|' is not an operator (did you mean '||'?)");
            else if (c == ')')
                perr(&p, p.pos, "unmatched ')'");
            else
                perr(&p, p.pos, "expected an operator, got %s", got);
        }
    }
    if (p.failed)
        goto fail;
    e = calloc(1, sizeof *e);
    if (!e || !(e->text = strdup(text))) {
        kf_err(err, errlen, "'%s': out of memory", text);
        goto fail;
    }
    e->root = root;
    e->uses_n = p.uses_n;
    e->uses_p = p.uses_p;
    e->fam = p.fam;
    return e;
fail:
    node_free(root);
    free(e);
    return NULL;
}

// ---------------------------------------------------------------------------
// evaluation

typedef struct {
    bool is_str;
    double num;
    const char *str;
} value;

typedef struct {
    const kf_expr *e;
    const kf_variant *v;
    const kf_shape *shape;
    char *err;
    size_t errlen;
} evalctx;

static int everr(const evalctx *c, size_t pos, const char *fmt, ...) KF_PRINTF(3, 4);
static int everr(const evalctx *c, size_t pos, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kf_err(c->err, c->errlen, "'%s' at position %zu: %s", c->e->text, pos + 1, msg);
    return -1;
}

static int eval_var(const evalctx *c, const enode *nd, value *out)
{
    const kf_variant *v = c->v;
    const kf_family *f = c->e->fam;
    int count;
    const char *const *names = enum_names(f, nd->op, &count);
    if (names) {
        int64_t idx = v->p[nd->op];
        if (idx < 0 || idx >= count)
            return everr(c, nd->pos, "the variant has an invalid %s (%lld)", var_name(f, nd->op), (long long)idx);
        out->is_str = true;
        out->str = names[idx];
        return 0;
    }
    double x = 0;
    if (nd->op >= 0 && nd->op < f->nparams) {
        const kf_param *p = &f->params[nd->op];
        if (p->kind == KF_PK_GRID) {
            kf_grid g = kf_grid_decode(v->p[nd->op]);
            x = g.kind == KF_GRID_BLOCKS ? (double)g.value : 0;
        } else {
            x = (double)v->p[nd->op];
        }
    } else if (nd->op >= V_SIZE && nd->op < V_SIZE + f->nsizes) {
        x = c->shape ? (double)c->shape->d[nd->op - V_SIZE] : 0;
    } else if (nd->op >= V_DERIVED && nd->op < V_DERIVED + f->nderived) {
        x = f->derived_value(v, nd->op - V_DERIVED);
    } else {
        return everr(c, nd->pos, "internal error: unknown variable");
    }
    out->is_str = false;
    out->num = x;
    return 0;
}

static int eval_node(const evalctx *c, const enode *nd, value *out);

static int eval_num(const evalctx *c, const enode *nd, const char *what, double *out)
{
    value v;
    if (eval_node(c, nd, &v) != 0)
        return -1;
    if (v.is_str)
        return everr(c, nd->pos, "%s needs a number, got the string \"%s\"", what, v.str);
    *out = v.num;
    return 0;
}

static int eval_bin(const evalctx *c, const enode *nd, value *out)
{
    const char *optext = binop_text[nd->op];
    char what[32];
    snprintf(what, sizeof what, "'%s'", optext);
    out->is_str = false;
    double l = 0, r = 0;
    if (nd->op == B_OR || nd->op == B_AND) {
        if (eval_num(c, nd->a, what, &l) != 0)
            return -1;
        if ((nd->op == B_OR && l != 0) || (nd->op == B_AND && l == 0)) {
            out->num = nd->op == B_OR;
            return 0;
        }
        if (eval_num(c, nd->b, what, &r) != 0)
            return -1;
        out->num = r != 0;
        return 0;
    }
    if (nd->op <= B_GE) {
        value a, b;
        if (eval_node(c, nd->a, &a) != 0 || eval_node(c, nd->b, &b) != 0)
            return -1;
        if (a.is_str != b.is_str)
            return everr(c, nd->pos, "cannot compare a string with a number");
        if (a.is_str) {
            if (nd->op != B_EQ && nd->op != B_NE)
                return everr(c, nd->pos, "'%s' needs numbers; strings compare only with == and !=",
                             optext);
            int eq = strcmp(a.str, b.str) == 0;
            out->num = nd->op == B_EQ ? eq : !eq;
            return 0;
        }
        switch (nd->op) {
        case B_EQ: out->num = a.num == b.num; break;
        case B_NE: out->num = a.num != b.num; break;
        case B_LT: out->num = a.num < b.num; break;
        case B_LE: out->num = a.num <= b.num; break;
        case B_GT: out->num = a.num > b.num; break;
        default: out->num = a.num >= b.num; break;
        }
        return 0;
    }
    if (eval_num(c, nd->a, what, &l) != 0 || eval_num(c, nd->b, what, &r) != 0)
        return -1;
    switch (nd->op) {
    case B_ADD: out->num = l + r; break;
    case B_SUB: out->num = l - r; break;
    case B_MUL: out->num = l * r; break;
    case B_DIV:
        if (r == 0)
            return everr(c, nd->pos, "division by zero");
        out->num = l / r;
        break;
    case B_IDIV: /* Python's floor division */
        if (r == 0)
            return everr(c, nd->pos, "division by zero");
        out->num = floor(l / r);
        break;
    default:
        if (r == 0)
            return everr(c, nd->pos, "modulo by zero");
        out->num = fmod(l, r);
        break;
    }
    return 0;
}

static int eval_node(const evalctx *c, const enode *nd, value *out)
{
    double a = 0, b = 0;
    switch (nd->kind) {
    case E_NUM:
        out->is_str = false;
        out->num = nd->num;
        return 0;
    case E_STR:
        out->is_str = true;
        out->str = nd->str;
        return 0;
    case E_VAR:
        return eval_var(c, nd, out);
    case E_NEG:
    case E_NOT:
        if (eval_num(c, nd->a, nd->kind == E_NEG ? "'-'" : "'!'", &a) != 0)
            return -1;
        out->is_str = false;
        out->num = nd->kind == E_NEG ? -a : (a == 0);
        return 0;
    case E_BIN:
        return eval_bin(c, nd, out);
    case E_CALL:
        if (eval_num(c, nd->a, func_names[nd->op], &a) != 0)
            return -1;
        if (nd->b && eval_num(c, nd->b, func_names[nd->op], &b) != 0)
            return -1;
        out->is_str = false;
        switch (nd->op) {
        case F_LOG2:
            if (a <= 0)
                return everr(c, nd->pos, "log2 of %g (needs a positive number)", a);
            out->num = log2(a);
            break;
        case F_POW2: out->num = pow(2.0, a); break;
        case F_CEIL: out->num = ceil(a); break;
        case F_FLOOR: out->num = floor(a); break;
        case F_MIN: out->num = a < b ? a : b; break;
        default: out->num = a > b ? a : b; break;
        }
        return 0;
    }
    return everr(c, nd->pos, "internal error: bad node");
}

int expr_eval(const kf_expr *e, const kf_variant *v, const kf_shape *shape, double *out, char *err, size_t errlen)
{
    if (!e || !v || !out) {
        kf_err(err, errlen, "expr_eval: missing argument");
        return -1;
    }
    if (family_of(v) != e->fam) {
        kf_err(err, errlen, "'%s': written for kernel %s, evaluated on a %s variant", e->text, e->fam->name,
               family_of(v)->name);
        return -1;
    }
    evalctx c = {e, v, shape, err, errlen};
    value r;
    if (eval_node(&c, e->root, &r) != 0)
        return -1;
    if (r.is_str)
        return everr(&c, 0, "gives the string \"%s\", not a number or truth value", r.str);
    *out = r.num;
    return 0;
}

// ---------------------------------------------------------------------------
// C source text

/* nd as C text into b, every operation in parentheses; -1 and a message for
 * what has no C form over doubles. */
static int c_node(const kf_expr *e, const enode *nd, const char *prefix, strbuf *b, char *err, size_t errlen)
{
    const kf_family *f = e->fam;
    switch (nd->kind) {
    case E_NUM: {
        char num[64];
        snprintf(num, sizeof num, "%.17g", nd->num);
        /* a double literal: 4 / 3 must not be integer division */
        sb_printf(b, "%s%s", num, strpbrk(num, ".e") ? "" : ".0");
        return 0;
    }
    case E_STR:
        kf_err(err, errlen, "'%s' at position %zu: the string \"%s\" has no value in C", e->text, nd->pos + 1,
               nd->str);
        return -1;
    case E_VAR: {
        int count;
        const char *name = var_name(f, nd->op);
        if (nd->op >= V_DERIVED || !name) {
            kf_err(err, errlen, "'%s' at position %zu: %s is a name the family derives, not a parameter or size",
                   e->text, nd->pos + 1, name ? name : "?");
            return -1;
        }
        if (enum_names(f, nd->op, &count) || (nd->op < f->nparams && f->params[nd->op].kind == KF_PK_GRID)) {
            kf_err(err, errlen, "'%s' at position %zu: %s is an enumerated or grid parameter, not a number",
                   e->text, nd->pos + 1, name);
            return -1;
        }
        sb_printf(b, "%s%s", prefix, name);
        return 0;
    }
    case E_NEG:
    case E_NOT:
        sb_append(b, nd->kind == E_NEG ? "(-" : "(");
        if (c_node(e, nd->a, prefix, b, err, errlen) != 0)
            return -1;
        sb_append(b, nd->kind == E_NEG ? ")" : " == 0 ? 1.0 : 0.0)");
        return 0;
    case E_BIN: {
        int op = nd->op;
        sb_append(b, op == B_MOD ? "fmod(" : op == B_IDIV ? "floor(" : "(");
        if (c_node(e, nd->a, prefix, b, err, errlen) != 0)
            return -1;
        sb_printf(b, op == B_MOD ? ", " : " %s ", op == B_IDIV ? "/" : binop_text[op]);
        if (c_node(e, nd->b, prefix, b, err, errlen) != 0)
            return -1;
        /* comparisons and logic give ints in C: made doubles, so that (a < b) / (c < d) divides reals */
        sb_append(b, op <= B_GE ? " ? 1.0 : 0.0)" : ")");
        return 0;
    }
    case E_CALL:
        if (nd->op == F_LOG2 || nd->op == F_POW2 || nd->op == F_CEIL || nd->op == F_FLOOR) {
            sb_append(b, nd->op == F_LOG2 ? "log2(" : nd->op == F_POW2 ? "pow(2.0, " : nd->op == F_CEIL ? "ceil(" : "floor(");
            if (c_node(e, nd->a, prefix, b, err, errlen) != 0)
                return -1;
            sb_append(b, ")");
            return 0;
        }
        /* min(a, b): a < b ? a : b, as expr_eval has it (fmin differs on NaN) */
        sb_append(b, "(");
        if (c_node(e, nd->a, prefix, b, err, errlen) != 0)
            return -1;
        sb_append(b, nd->op == F_MIN ? " < " : " > ");
        if (c_node(e, nd->b, prefix, b, err, errlen) != 0)
            return -1;
        sb_append(b, " ? ");
        if (c_node(e, nd->a, prefix, b, err, errlen) != 0)
            return -1;
        sb_append(b, " : ");
        if (c_node(e, nd->b, prefix, b, err, errlen) != 0)
            return -1;
        sb_append(b, ")");
        return 0;
    }
    kf_err(err, errlen, "'%s': internal error: bad node", e->text);
    return -1;
}

char *expr_c_text(const kf_expr *e, const char *prefix, char *err, size_t errlen)
{
    if (!e) {
        kf_err(err, errlen, "expr_c_text: no expression");
        return NULL;
    }
    strbuf b = {0};
    if (c_node(e, e->root, prefix ? prefix : "", &b, err, errlen) != 0) {
        sb_free(&b);
        return NULL;
    }
    if (b.failed || b.len > (1u << 20)) { /* min and max write their operands twice */
        kf_err(err, errlen, "'%s': %s", e->text, b.failed ? "out of memory" : "too long as C text");
        sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

const char *expr_source_text(const kf_expr *e) { return e ? e->text : ""; }
static int last_param(const enode *n, const bool *fixed)
{
    if (!n)
        return -1;
    int m = -1;
    if (n->kind == E_VAR) {
        if (n->op >= V_DERIVED)
            return INT_MAX;  /* a derived name: any parameter */
        if (n->op < V_SIZE && !(fixed && fixed[n->op]))
            m = n->op;
    }
    int a = last_param(n->a, fixed), b = last_param(n->b, fixed);
    return a > m ? (a > b ? a : b) : (m > b ? m : b);
}

int expr_last_param(const kf_expr *e, const bool *fixed) { return e ? last_param(e->root, fixed) : -1; }

bool expr_uses_n(const kf_expr *e) { return e && e->uses_n; }
bool expr_uses_params(const kf_expr *e) { return e && e->uses_p; }

void expr_free(kf_expr *e)
{
    if (!e)
        return;
    node_free(e->root);
    free(e->text);
    free(e);
}
