/*
 * config.c -- JSON configuration files to kf_config (see config.h).
 *
 * cJSON stays inside this file.  Every value is checked here, against a
 * closed list or a numeric range, so that nothing taken from a config
 * reaches generated source or a file path unvalidated.  Messages name the
 * file, the field path ("variants[2].block_size"), what was given and what
 * is allowed.
 */
#include "config.h"
#include "t1.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "family.h"
#include "param.h"
#include "util.h"

/* Limits of the numeric axes and sizes.  Generous, but bounded so that the
 * arithmetic downstream (tiles, grids, byte counts) cannot overflow. */
#define MAX_GRID_BLOCKS KF_GRID_MAX_BLOCKS
#define MAX_PER_SM KF_GRID_MAX_PER_SM
#define MAX_LIST 4096           /* values on one axis after range expansion */
#define MAX_CONSTRAINT_LEN 1024

// ---------------------------------------------------------------------------
// error context

typedef struct {
    const char *path;   /* file name for messages ("<stdin>", "--set") */
    char *err;
    size_t errlen;
    const char *text;   /* the file's text, to give the line of a field (NULL: none) */
    size_t len;
} ctx;

static int line_of(const ctx *c, const char *field);

static int fail(const ctx *c, const char *field, const char *fmt, ...) KF_PRINTF(3, 4);
static int fail(const ctx *c, const char *field, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = field && field[0] ? line_of(c, field) : 0;
    if (line > 0)
        kf_err(c->err, c->errlen, "%s: line %d: %s: %s", c->path, line, field, msg);
    else if (field && field[0])
        kf_err(c->err, c->errlen, "%s: %s: %s", c->path, field, msg);
    else
        kf_err(c->err, c->errlen, "%s: %s", c->path, msg);
    return -1;
}

// ---------------------------------------------------------------------------
// where a field is: cJSON keeps no positions, so the field path
// ("variants[2].grid.waves") is looked up again in the text

static size_t skip_ws(const char *t, size_t n, size_t i)
{
    while (i < n && strchr(" \t\r\n", t[i]))
        i++;
    return i;
}

/* The end of the string starting at t[i] == '"' (after its closing quote), or n. */
static size_t skip_string(const char *t, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (t[i] == '\\')
            i++;
        else if (t[i] == '"')
            return i + 1;
    }
    return n;
}

/* The end of the value starting at t[i], or n when it is malformed. */
static size_t skip_value(const char *t, size_t n, size_t i, int depth)
{
    if (i >= n || depth > 200)
        return n;
    if (t[i] == '"')
        return skip_string(t, n, i);
    if (t[i] == '{' || t[i] == '[') {
        char close = t[i] == '{' ? '}' : ']';
        i = skip_ws(t, n, i + 1);
        if (i < n && t[i] == close)
            return i + 1;
        for (;;) {
            if (close == '}') {
                i = skip_ws(t, n, skip_string(t, n, i));
                if (i >= n || t[i] != ':')
                    return n;
                i = skip_ws(t, n, i + 1);
            }
            i = skip_ws(t, n, skip_value(t, n, i, depth + 1));
            if (i < n && t[i] == ',')
                i = skip_ws(t, n, i + 1);
            else
                return i < n && t[i] == close ? i + 1 : n;
        }
    }
    while (i < n && !strchr(",]} \t\r\n", t[i]))
        i++;
    return i;
}

/* The offset of the value at path inside the value at t[i], or n. */
static size_t locate(const char *t, size_t n, size_t i, const char *path, int depth)
{
    i = skip_ws(t, n, i);
    if (*path == '.')
        path++;
    if (!*path || i >= n || depth > 200)
        return i;
    if (*path == '[') {
        char *end;
        long k = strtol(path + 1, &end, 10);
        if (*end != ']' || k < 0 || t[i] != '[')
            return n;
        i = skip_ws(t, n, i + 1);
        for (long e = 0; i < n && t[i] != ']'; e++) {
            if (e == k)
                return locate(t, n, i, end + 1, depth + 1);
            i = skip_ws(t, n, skip_value(t, n, i, 0));
            if (i >= n || t[i] != ',')
                return n;
            i = skip_ws(t, n, i + 1);
        }
        return n;
    }
    size_t klen = strcspn(path, ".[");
    if (t[i] != '{')
        return n;
    size_t found = n;   /* the last of duplicate keys (the one a "duplicate key" error is about) */
    i = skip_ws(t, n, i + 1);
    while (i < n && t[i] == '"') {
        size_t kend = skip_string(t, n, i);
        bool match = kend - i - 2 == klen && strncmp(t + i + 1, path, klen) == 0;
        i = skip_ws(t, n, kend);
        if (i >= n || t[i] != ':')
            return found;
        i = skip_ws(t, n, i + 1);
        if (match)
            found = i;
        i = skip_ws(t, n, skip_value(t, n, i, 0));
        if (i >= n || t[i] != ',')
            break;
        i = skip_ws(t, n, i + 1);
    }
    return found < n ? locate(t, n, found, path + klen, depth + 1) : n;
}

/* The line of a field's value in the file, or 0 when not known or when the
 * file is one line (where "line 1" says nothing). */
static int line_of(const ctx *c, const char *field)
{
    if (!c->text || !memchr(c->text, '\n', c->len ? c->len - 1 : 0))
        return 0;
    size_t off = locate(c->text, c->len, 0, field, 0);
    if (off >= c->len)
        return 0;
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += c->text[i] == '\n';
    return line;
}

/* The line of the field a maker's message names ("custom.args[2] (b).dtype:
 * ...": custom.args[2].dtype, the names in parentheses left out), or of
 * the nearest enclosing field found; 0 when none is. */
static int maker_line(const ctx *c, const char *msg)
{
    char path[256];
    size_t k = 0;
    const char *end = strstr(msg, ": ");
    for (const char *p = msg; end && p < end && k + 1 < sizeof path; p++) {
        if (p[0] == ' ' && p[1] == '(') { /* " (name)": a label, not a key */
            const char *q = strchr(p, ')');
            if (!q || q > end)
                break;
            p = q;
            continue;
        }
        path[k++] = *p;
    }
    path[k] = '\0';
    while (k > 0) {
        int line = line_of(c, path);
        if (line > 0)
            return line;
        while (k > 0 && path[k - 1] != '.' && path[k - 1] != '[')
            k--;
        if (k > 0)
            k--;
        path[k] = '\0';
    }
    return 0;
}

/* A short JSON rendering of what was given, for messages. */
static void given(const cJSON *j, char *buf, size_t len)
{
    if (cJSON_IsNumber(j) && !isfinite(j->valuedouble)) {
        snprintf(buf, len, "a number out of range");
        return;
    }
    char *s = cJSON_PrintUnformatted(j);
    if (!s) {
        snprintf(buf, len, "(unprintable)");
        return;
    }
    if (strlen(s) > 60)
        snprintf(buf, len, "%.57s...", s);
    else
        snprintf(buf, len, "%s", s);
    cJSON_free(s);
}

static void subfield(char *out, size_t len, const char *field, const char *key)
{
    if (field && field[0])
        snprintf(out, len, "%.120s.%.120s", field, key);
    else
        snprintf(out, len, "%s", key);
}

static void subindex(char *out, size_t len, const char *field, int i)
{
    snprintf(out, len, "%.200s[%d]", field ? field : "", i);
}

// ---------------------------------------------------------------------------
// scalars

/* An integer: a JSON number without fraction, or (when allow_str) a string
 * "2^k", "1<<k" or a decimal integer. */
static int get_int(const ctx *c, const char *field, const cJSON *j, bool allow_str, long long lo, long long hi,
                   const char *allowed, long long *out)
{
    char g[80];
    long long v;
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (!isfinite(d) || d != floor(d) || d < -9.0e18 || d > 9.0e18) {
            given(j, g, sizeof g);
            return fail(c, field, "expected %s, got %s", allowed, g);
        }
        v = (long long)d;
    } else if (allow_str && cJSON_IsString(j)) {
        const char *s = j->valuestring;
        long long base = 0, e = 0;
        const char *op = strstr(s, "^");
        int shift = 0;
        if (!op) {
            op = strstr(s, "<<");
            shift = 1;
        }
        char tmp[64];
        bool ok;
        if (op && (size_t)(op - s) < sizeof tmp) {
            memcpy(tmp, s, (size_t)(op - s));
            tmp[op - s] = '\0';
            ok = kf_parse_ll(tmp, &base) && kf_parse_ll(op + (shift ? 2 : 1), &e) && e >= 0 && e <= 62;
            if (ok && shift) {
                ok = base >= 0 && base <= 1024 && e <= 52;
                v = ok ? base << e : 0; /* a negative base must not be shifted (undefined) */
            } else if (ok) {
                ok = base == 2;
                v = 1LL << e;
            } else {
                v = 0;
            }
        } else {
            ok = kf_parse_ll(s, &v);
        }
        if (!ok) {
            given(j, g, sizeof g);
            return fail(c, field, "expected %s, got %s", allowed, g);
        }
    } else {
        given(j, g, sizeof g);
        return fail(c, field, "expected %s, got %s", allowed, g);
    }
    if (v < lo || v > hi) {
        given(j, g, sizeof g);
        return fail(c, field, "expected %s, got %s", allowed, g);
    }
    *out = v;
    return 0;
}

static int get_double(const ctx *c, const char *field, const cJSON *j, double lo, double hi, const char *allowed,
                      double *out)
{
    char g[80];
    if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble < lo || j->valuedouble > hi) {
        given(j, g, sizeof g);
        return fail(c, field, "expected %s, got %s", allowed, g);
    }
    *out = j->valuedouble;
    return 0;
}

static int get_bool(const ctx *c, const char *field, const cJSON *j, bool *out)
{
    char g[80];
    if (!cJSON_IsBool(j)) {
        given(j, g, sizeof g);
        return fail(c, field, "expected true or false, got %s", g);
    }
    *out = cJSON_IsTrue(j);
    return 0;
}

static int get_enum(const ctx *c, const char *field, const cJSON *j, const char *const *names, int count,
                    int64_t *out)
{
    char g[80];
    strbuf allowed = {0};
    for (int i = 0; i < count; i++)
        sb_printf(&allowed, "%s\"%s\"", i ? (i == count - 1 ? " or " : ", ") : "", names[i]);
    int rc = 0;
    if (!cJSON_IsString(j)) {
        given(j, g, sizeof g);
        rc = fail(c, field, "expected one of %s, got %s", allowed.s, g);
    } else {
        int k = kf_lookup(names, count, j->valuestring);
        if (k < 0) {
            const char *near = kf_suggest(j->valuestring, names, count);
            given(j, g, sizeof g);
            if (near)
                rc = fail(c, field, "unknown value %s (did you mean \"%s\"?); allowed: %s", g, near, allowed.s);
            else
                rc = fail(c, field, "unknown value %s; allowed: %s", g, allowed.s);
        } else {
            *out = k;
        }
    }
    sb_free(&allowed);
    return rc;
}

/* Unknown keys are errors, with a suggestion; duplicate keys too (cJSON
 * would silently keep the first). */
typedef struct {
    const char *s;
    int pos;
} keypos;

static int cmp_keypos(const void *pa, const void *pb)
{
    const keypos *a = pa, *b = pb;
    int r = strcmp(a->s, b->s);
    return r ? r : (a->pos > b->pos) - (a->pos < b->pos);
}

/* A key given twice (cJSON would silently keep the first): the first
 * repeat in document order.  Sorting keeps an object of many keys
 * O(k log k). */
static int check_duplicates(const ctx *c, const char *field, const cJSON *obj)
{
    int n = cJSON_GetArraySize(obj);
    if (n < 2)
        return 0;
    keypos *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        return fail(c, field, "out of memory");
    int i = 0;
    for (const cJSON *k = obj->child; k; k = k->next, i++)
        v[i] = (keypos){k->string, i};
    qsort(v, (size_t)n, sizeof *v, cmp_keypos);
    int first = -1;
    for (i = 1; i < n; i++)
        if (strcmp(v[i - 1].s, v[i].s) == 0 && (first < 0 || v[i].pos < v[first].pos))
            first = i;
    int rc = 0;
    if (first >= 0) {
        char f[256];
        subfield(f, sizeof f, field, v[first].s);
        rc = fail(c, f, "duplicate key");
    }
    free(v);
    return rc;
}

static int check_keys(const ctx *c, const char *field, const cJSON *obj, const char *const *known, int nknown)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        char f[256];
        subfield(f, sizeof f, field, k->string);
        if (kf_lookup(known, nknown, k->string) < 0) {
            const char *near = kf_suggest(k->string, known, nknown);
            if (near)
                return fail(c, f, "unknown key (did you mean \"%s\"?)", near);
            strbuf b = {0};
            for (int i = 0; i < nknown; i++)
                sb_printf(&b, "%s%s", i ? ", " : "", known[i]);
            fail(c, f, "unknown key; known keys here: %s", b.s);
            sb_free(&b);
            return -1;
        }
    }
    return check_duplicates(c, field, obj);
}

// ---------------------------------------------------------------------------
// value lists

typedef struct {
    int64_t *v;
    int n, cap;
} vlist;

static int vl_push(const ctx *c, const char *field, vlist *l, int64_t x)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == x)
            return 0;   /* a repeated value adds nothing to a cartesian product */
    if (l->n >= MAX_LIST)
        return fail(c, field, "too many values (at most %d)", MAX_LIST);
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 8;
        int64_t *nv = realloc(l->v, sizeof *nv * (size_t)nc);
        if (!nv)
            return fail(c, field, "out of memory");
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = x;
    return 0;
}

/* {"range": [lo, hi], "step": "pow2" | k}: lo, lo*2, ... or lo, lo+k, ... up to hi. */
static int parse_range(const ctx *c, const char *field, const cJSON *j, long long lo_lim, long long hi_lim,
                       const char *allowed, bool allow_str, vlist *out)
{
    static const char *const keys[] = {"range", "step"};
    if (check_keys(c, field, j, keys, 2) != 0)
        return -1;
    char f[256];
    subfield(f, sizeof f, field, "range");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "range");
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2)
        return fail(c, f, "expected [low, high]");
    long long lo, hi;
    char fi[256];
    subindex(fi, sizeof fi, f, 0);
    if (get_int(c, fi, cJSON_GetArrayItem(r, 0), allow_str, lo_lim, hi_lim, allowed, &lo) != 0)
        return -1;
    subindex(fi, sizeof fi, f, 1);
    if (get_int(c, fi, cJSON_GetArrayItem(r, 1), allow_str, lo_lim, hi_lim, allowed, &hi) != 0)
        return -1;
    if (lo > hi)
        return fail(c, f, "low %lld is above high %lld", lo, hi);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "step");
    subfield(f, sizeof f, field, "step");
    if (!st || (cJSON_IsString(st) && strcmp(st->valuestring, "pow2") == 0)) {
        if (lo < 1)
            return st ? fail(c, f, "a pow2 range needs low >= 1")
                      : fail(c, field, "a range without \"step\" doubles from low, which needs low >= 1: give "
                                       "\"step\": 1 (or another step) to start at %lld", lo);
        for (long long x = lo; x <= hi; x *= 2) {
            if (vl_push(c, field, out, x) != 0)
                return -1;
            if (x > hi / 2)
                break;
        }
        return 0;
    }
    long long step;
    if (get_int(c, f, st, false, 1, hi_lim, "\"pow2\" or a positive integer step", &step) != 0)
        return -1;
    for (long long x = lo; x <= hi; x += step) {
        if (vl_push(c, field, out, x) != 0)
            return -1;
        if (x > hi - step)
            break;
    }
    return 0;
}

typedef int (*scalar_fn)(const ctx *c, const char *field, const cJSON *j, const void *arg, int64_t *out);

/* A scalar, a list of scalars, or (for numeric axes) a range object. */
static int parse_list(const ctx *c, const char *field, const cJSON *j, scalar_fn fn, const void *arg,
                      bool range_ok, long long lo, long long hi, const char *allowed, bool allow_str, vlist *out)
{
    if (cJSON_IsArray(j)) {
        int i = 0;
        if (cJSON_GetArraySize(j) == 0)
            return fail(c, field, "an empty list: give at least one value");
        for (const cJSON *e = j->child; e; e = e->next, i++) {
            char f[256];
            subindex(f, sizeof f, field, i);
            int64_t x;
            if (range_ok && cJSON_IsObject(e) && cJSON_GetObjectItemCaseSensitive(e, "range")) {
                if (parse_range(c, f, e, lo, hi, allowed, allow_str, out) != 0)
                    return -1;
                continue;
            }
            if (fn(c, f, e, arg, &x) != 0 || vl_push(c, f, out, x) != 0)
                return -1;
        }
        return 0;
    }
    if (range_ok && cJSON_IsObject(j) && cJSON_GetObjectItemCaseSensitive(j, "range"))
        return parse_range(c, field, j, lo, hi, allowed, allow_str, out);
    int64_t x;
    if (fn(c, field, j, arg, &x) != 0)
        return -1;
    return vl_push(c, field, out, x);
}

typedef struct {
    const char *const *names;
    int count;
} enum_arg;

static int scalar_enum(const ctx *c, const char *field, const cJSON *j, const void *arg, int64_t *out)
{
    const enum_arg *a = arg;
    return get_enum(c, field, j, a->names, a->count, out);
}

typedef struct {
    long long lo, hi;
    const char *allowed;
    bool allow_str;
    const long long *only;  /* if set: the allowed values, terminated by 0 */
} int_arg;

static int scalar_int(const ctx *c, const char *field, const cJSON *j, const void *arg, int64_t *out)
{
    const int_arg *a = arg;
    long long v;
    if (get_int(c, field, j, a->allow_str, a->lo, a->hi, a->allowed, &v) != 0)
        return -1;
    if (a->only) {
        bool ok = false;
        for (const long long *p = a->only; *p; p++)
            ok = ok || *p == v;
        if (!ok) {
            char g[80];
            given(j, g, sizeof g);
            return fail(c, field, "expected %s, got %s", a->allowed, g);
        }
    }
    *out = v;
    return 0;
}

static int scalar_grid(const ctx *c, const char *field, const cJSON *j, const void *arg, int64_t *out)
{
    (void)arg;
    static const char *const allowed =
        "\"auto\", a block count 1..2147483647, {\"blocks_per_sm\": 1..64} or {\"waves\": 1..64}";
    static const char *const keys[] = {"blocks_per_sm", "waves"};
    kf_grid g = {KF_GRID_AUTO, 0};
    char gv[80];
    if (cJSON_IsString(j)) {
        if (strcmp(j->valuestring, "auto") != 0) {
            given(j, gv, sizeof gv);
            return fail(c, field, "expected %s, got %s", allowed, gv);
        }
    } else if (cJSON_IsNumber(j)) {
        long long v;
        if (get_int(c, field, j, false, 1, MAX_GRID_BLOCKS, allowed, &v) != 0)
            return -1;
        g.kind = KF_GRID_BLOCKS;
        g.value = v;
    } else if (cJSON_IsObject(j)) {
        if (check_keys(c, field, j, keys, 2) != 0)
            return -1;
        if (cJSON_GetArraySize(j) != 1)
            return fail(c, field, "expected %s: exactly one key", allowed);
        char f[256];
        subfield(f, sizeof f, field, j->child->string);
        long long v;
        if (get_int(c, f, j->child, false, 1, MAX_PER_SM, "an integer 1..64", &v) != 0)
            return -1;
        g.kind = strcmp(j->child->string, "waves") == 0 ? KF_GRID_WAVES : KF_GRID_PER_SM;
        g.value = v;
    } else {
        given(j, gv, sizeof gv);
        return fail(c, field, "expected %s, got %s", allowed, gv);
    }
    *out = kf_grid_encode(g);
    return 0;
}

/* Any parameter of the table: a value, a list, or (integers without a
 * closed set) a range object. */
static int parse_param(const ctx *c, const char *field, const kf_param *p, const cJSON *j, kf_axis_values *out)
{
    vlist l = {0};
    int rc;
    switch (p->kind) {
    case KF_PK_ENUM: {
        enum_arg ea = {p->names, p->count};
        rc = parse_list(c, field, j, scalar_enum, &ea, false, 0, 0, "", false, &l);
        break;
    }
    case KF_PK_INT: {
        long long only[16] = {0};
        int k = 0;
        for (const int64_t *o = p->only; o && *o && k < 15; o++)
            only[k++] = *o;
        int_arg ia = {p->lo, p->hi, p->allowed ? p->allowed : "an integer", p->pow2_strings, p->only ? only : NULL};
        rc = parse_list(c, field, j, scalar_int, &ia, !p->only, ia.lo, ia.hi, ia.allowed, ia.allow_str, &l);
        break;
    }
    default:
        rc = parse_list(c, field, j, scalar_grid, NULL, false, 0, 0, "", false, &l);
        break;
    }
    if (rc != 0) {
        free(l.v);
        return -1;
    }
    free(out->vals);
    out->vals = l.v;
    out->count = l.n;
    return 0;
}

static int parse_constraints(const ctx *c, int family, const char *field, const cJSON *j, char ***list, int *count)
{
    if (cJSON_IsString(j)) {
        /* one expression: accept it as a list of one */
    } else if (!cJSON_IsArray(j)) {
        char g[80];
        given(j, g, sizeof g);
        return fail(c, field, "expected a list of expression strings, got %s", g);
    }
    int n = cJSON_IsString(j) ? 1 : cJSON_GetArraySize(j);
    char **out = realloc(*list, sizeof *out * (size_t)(*count + n + 1));
    if (!out)
        return fail(c, field, "out of memory");
    *list = out;
    const cJSON *e = cJSON_IsString(j) ? j : j->child;   /* walked, not indexed: O(n) */
    for (int i = 0; i < n; i++, e = e ? e->next : NULL) {
        char f[256];
        if (cJSON_IsString(j))
            snprintf(f, sizeof f, "%s", field ? field : "");
        else
            subindex(f, sizeof f, field, i);
        if (!cJSON_IsString(e)) {
            char g[80];
            given(e, g, sizeof g);
            return fail(c, f, "expected an expression string, got %s", g);
        }
        if (strlen(e->valuestring) > MAX_CONSTRAINT_LEN)
            return fail(c, f, "expression longer than %d characters", MAX_CONSTRAINT_LEN);
        char eerr[512];
        kf_expr *x = expr_parse(e->valuestring, family, eerr, sizeof eerr);
        if (!x)
            return fail(c, f, "%s", eerr);
        expr_free(x);
        char *dup = strdup(e->valuestring);
        if (!dup)
            return fail(c, f, "out of memory");
        out[(*count)++] = dup;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// bench

static const char *const bench_keys[] = {"warmup", "min_reps", "max_reps", "repetitions", "max_time_s",
                                         "max_noise", "max_median_ci", "flush_l2", "seed", "offset", "timeout_s", "energy"};
#define N_BENCH_KEYS ((int)(sizeof bench_keys / sizeof bench_keys[0]))

static int parse_bench_key(const ctx *c, const char *field, const char *key, const cJSON *j, kf_bench *b)
{
    long long v;
    double d;
    if (strcmp(key, "warmup") == 0) {
        if (get_int(c, field, j, false, 0, 10000, "an integer 0..10000", &v) != 0)
            return -1;
        b->warmup = (int)v;
    } else if (strcmp(key, "min_reps") == 0) {
        if (get_int(c, field, j, false, 1, 1000000, "an integer 1..1000000", &v) != 0)
            return -1;
        b->min_reps = (int)v;
    } else if (strcmp(key, "max_reps") == 0) {
        if (get_int(c, field, j, false, 1, 1000000, "an integer 1..1000000", &v) != 0)
            return -1;
        b->max_reps = (int)v;
    } else if (strcmp(key, "repetitions") == 0) {
        if (get_int(c, field, j, false, 1, 1000000, "an integer 1..1000000", &v) != 0)
            return -1;
        b->min_reps = b->max_reps = (int)v;
    } else if (strcmp(key, "max_time_s") == 0) {
        if (get_double(c, field, j, 0.0, 86400.0, "seconds 0..86400", &d) != 0)
            return -1;
        b->max_time_s = d;
    } else if (strcmp(key, "max_noise") == 0) {
        if (get_double(c, field, j, 0.0, 1.0, "a fraction 0..1 (relative standard deviation)", &d) != 0)
            return -1;
        b->max_noise = d;
    } else if (strcmp(key, "max_median_ci") == 0) {
        if (get_double(c, field, j, 0.0, 1.0,
                       "a fraction 0..1 (half-width of the median's 95% confidence interval; 0: not used)", &d) != 0)
            return -1;
        b->max_median_ci = d;
    } else if (strcmp(key, "flush_l2") == 0) {
        if (get_bool(c, field, j, &b->flush_l2) != 0)
            return -1;
    } else if (strcmp(key, "seed") == 0) {
        if (get_int(c, field, j, false, 0, 9007199254740991LL, "an integer 0..2^53-1", &v) != 0)
            return -1;
        b->seed = (uint64_t)v;
    } else if (strcmp(key, "offset") == 0) {
        if (get_int(c, field, j, false, 0, 4096, "an element offset 0..4096", &v) != 0)
            return -1;
        b->offset = v;
    } else if (strcmp(key, "timeout_s") == 0) {
        if (get_double(c, field, j, 0.0, 86400.0, "seconds 0..86400 (0: no watchdog)", &d) != 0)
            return -1;
        b->timeout_s = d;
    } else if (strcmp(key, "energy") == 0) {
        if (get_bool(c, field, j, &b->energy) != 0)
            return -1;
    } else {
        const char *near = kf_suggest(key, bench_keys, N_BENCH_KEYS);
        if (near)
            return fail(c, field, "unknown key (did you mean \"%s\"?)", near);
        return fail(c, field, "unknown bench key");
    }
    return 0;
}

static int check_bench(const ctx *c, const char *field, const kf_bench *b)
{
    if (b->min_reps > b->max_reps)
        return fail(c, field, "min_reps (%d) is above max_reps (%d)", b->min_reps, b->max_reps);
    return 0;
}

static int parse_bench(const ctx *c, const cJSON *j, kf_bench *b)
{
    if (!cJSON_IsObject(j)) {
        char g[80];
        given(j, g, sizeof g);
        return fail(c, "bench", "expected an object such as {\"warmup\": 3, \"max_time_s\": 0.5}, got %s", g);
    }
    if (check_keys(c, "bench", j, bench_keys, N_BENCH_KEYS) != 0)
        return -1;
    for (const cJSON *k = j->child; k; k = k->next) {
        char f[256];
        subfield(f, sizeof f, "bench", k->string);
        if (parse_bench_key(c, f, k->string, k, b) != 0)
            return -1;
    }
    return check_bench(c, "bench", b);
}

// ---------------------------------------------------------------------------
// specs

/* Keys of a variant object (and of "defaults") beyond the family's
 * parameters and sizes, and of the top level beyond those. */
static const char *const spec_extra[] = {"constraints", "name", "description", "comment"};
static const char *const top_extra[] = {"kernel", "defaults", "variants", "bench", "tune"};
#define N_SPEC_EXTRA ((int)(sizeof spec_extra / sizeof spec_extra[0]))
#define N_TOP_EXTRA ((int)(sizeof top_extra / sizeof top_extra[0]))
#define MAX_KEYS (KF_MAX_PARAMS + KF_MAX_DIMS + N_SPEC_EXTRA + N_TOP_EXTRA)

/* The keys a spec (top: the top level) of family f takes. */
static int known_keys(int family, bool top, const char **keys)
{
    const kf_family *f = kf_families[family];
    int n = 0;
    for (int i = 0; i < f->nparams; i++)
        keys[n++] = f->params[i].name;
    for (int i = 0; i < f->nsizes; i++)
        keys[n++] = f->sizes[i].name;
    for (int i = 0; i < N_SPEC_EXTRA; i++)
        keys[n++] = spec_extra[i];
    for (int i = 0; top && i < N_TOP_EXTRA; i++)
        keys[n++] = top_extra[i];
    return n;
}

static void spec_free(kf_spec *s)
{
    for (int a = 0; a < KF_MAX_PARAMS; a++)
        free(s->ax[a].vals);
    for (int d = 0; d < KF_MAX_DIMS; d++)
        free(s->sz[d].vals);
    for (int i = 0; i < s->n_constraints; i++)
        free(s->constraints[i]);
    free(s->constraints);
    memset(s, 0, sizeof *s);
}

bool config_valid_name(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len >= KF_NAME_MAX)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.' || *p == '+'))
            return false;
    return true;
}

/* Reads the spec keys of obj into s (only those present). */
static int parse_spec_keys(const ctx *c, int family, const char *field, const cJSON *obj, kf_spec *s)
{
    const kf_family *fam = kf_families[family];
    for (const cJSON *k = obj->child; k; k = k->next) {
        char f[256];
        subfield(f, sizeof f, field, k->string);
        int a = param_find(fam->params, fam->nparams, k->string);
        int d = param_find(fam->sizes, fam->nsizes, k->string);
        if (a >= 0) {
            if (parse_param(c, f, &fam->params[a], k, &s->ax[a]) != 0)
                return -1;
        } else if (d >= 0) {
            if (parse_param(c, f, &fam->sizes[d], k, &s->sz[d]) != 0)
                return -1;
        } else if (strcmp(k->string, "constraints") == 0) {
            if (parse_constraints(c, family, f, k, &s->constraints, &s->n_constraints) != 0)
                return -1;
        } else if (strcmp(k->string, "name") == 0) {
            if (!cJSON_IsString(k) || !config_valid_name(k->valuestring)) {
                char g[80];
                given(k, g, sizeof g);
                return fail(c, f, "expected a name of 1..%d letters, digits or _-.+, got %s", KF_NAME_MAX - 1, g);
            }
            snprintf(s->name, sizeof s->name, "%s", k->valuestring);
        } else if (strcmp(k->string, "description") == 0 || strcmp(k->string, "comment") == 0) {
            if (!cJSON_IsString(k))
                return fail(c, f, "expected a string");
        }
        /* other keys ("kernel", "bench", ...) are handled by the caller */
    }
    return 0;
}

static int copy_values(kf_axis_values *dst, const kf_axis_values *src)
{
    if (src->count == 0)
        return 0;
    int64_t *v = malloc(sizeof *v * (size_t)src->count);
    if (!v)
        return -1;
    memcpy(v, src->vals, sizeof *v * (size_t)src->count);
    free(dst->vals);
    dst->vals = v;
    dst->count = src->count;
    return 0;
}

/* dst takes every key of base that dst lacks; constraints accumulate. */
static int inherit(kf_spec *dst, const kf_spec *base)
{
    for (int a = 0; a < KF_MAX_PARAMS; a++)
        if (dst->ax[a].count == 0 && copy_values(&dst->ax[a], &base->ax[a]) != 0)
            return -1;
    for (int d = 0; d < KF_MAX_DIMS; d++)
        if (dst->sz[d].count == 0 && copy_values(&dst->sz[d], &base->sz[d]) != 0)
            return -1;
    if (base->n_constraints > 0) {
        char **l = realloc(dst->constraints, sizeof *l * (size_t)(dst->n_constraints + base->n_constraints));
        if (!l)
            return -1;
        dst->constraints = l;
        for (int i = 0; i < base->n_constraints; i++) {
            l[dst->n_constraints] = strdup(base->constraints[i]);
            if (!l[dst->n_constraints])
                return -1;
            dst->n_constraints++;
        }
    }
    return 0;
}

static int parse_tune(const ctx *c, const cJSON *j, kf_config *cfg)
{
    const kf_family *fam = kf_families[cfg->family];
    const char *keys[KF_MAX_DIMS + 1];
    int nk = 0;
    for (int d = 0; d < fam->nsizes; d++)
        keys[nk++] = fam->sizes[d].name;
    keys[nk++] = "weights";
    if (!cJSON_IsObject(j))
        return fail(c, "tune", "expected an object {\"%s\": [...], \"weights\": [...]}", fam->sizes[0].name);
    if (check_keys(c, "tune", j, keys, nk) != 0)
        return -1;
    int shapes = 1;
    for (int d = 0; d < fam->nsizes; d++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, fam->sizes[d].name);
        char f[64];
        snprintf(f, sizeof f, "tune.%s", fam->sizes[d].name);
        if (!x) {
            if (d == 0)
                return fail(c, "tune", "missing \"%s\": the sizes to tune for", fam->sizes[0].name);
            continue;
        }
        if (parse_param(c, f, &fam->sizes[d], x, &cfg->tune_sz[d]) != 0)
            return -1;
        shapes *= cfg->tune_sz[d].count;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "weights");
    if (w) {
        if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) != shapes)
            return fail(c, "tune.weights", "expected a list of %d positive numbers (one per size tuned for)", shapes);
        cfg->tune_weights = malloc(sizeof(double) * (size_t)shapes);
        if (!cfg->tune_weights)
            return fail(c, "tune", "out of memory");
        cfg->tune_nweights = shapes;
        for (int i = 0; i < shapes; i++) {
            char f[64];
            subindex(f, sizeof f, "tune.weights", i);
            if (get_double(c, f, cJSON_GetArrayItem(w, i), 1e-9, 1e9, "a positive number", &cfg->tune_weights[i]) != 0)
                return -1;
        }
    }
    return 0;
}

static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* cJSON reports a failed object key (a trailing comma: {"n": 1,}) one
 * character past the offending character.  If off - 1 is where a key was
 * due (inside an object, after '{' or ','), move back to it. */
static size_t key_error_offset(const char *text, size_t len, size_t off)
{
    if (off == 0 || off > len)
        return off;
    size_t p = off - 1;
    char ch = text[p];
    if (ch == '"' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
        return off;
    char stack[256];
    int depth = 0;
    bool in_str = false;
    char prev = 0;      /* last structural or value character before p, outside strings */
    for (size_t i = 0; i < p; i++) {
        char t = text[i];
        if (in_str) {
            if (t == '\\')
                i++;
            else if (t == '"') {
                in_str = false;
                prev = '"';
            }
            continue;
        }
        if (t == '"')
            in_str = true;
        else if (t == '{' || t == '[') {
            if (depth < (int)sizeof stack)
                stack[depth] = t;
            depth++;
        } else if ((t == '}' || t == ']') && depth > 0)
            depth--;
        if (t != ' ' && t != '\t' && t != '\n' && t != '\r' && t != '"')
            prev = t;
    }
    if (in_str || depth < 1 || depth > (int)sizeof stack || stack[depth - 1] != '{')
        return off;
    return prev == '{' || prev == ',' ? p : off;
}

/* Where cJSON stopped at a '}' or ']' right after a comma and whitespace:
 * that comma's offset, else len (the end of the file after a comma is a
 * truncated file, not a trailing comma). */
static size_t trailing_comma(const char *text, size_t len, size_t off)
{
    if (off > len)
        return len;
    size_t p = off;
    while (p < len && strchr(" \t\r\n", text[p]))
        p++;
    if (p >= len || (text[p] != '}' && text[p] != ']'))
        return len;
    size_t q = off;
    while (q > 0 && strchr(" \t\r\n", text[q - 1]))
        q--;
    return q > 0 && text[q - 1] == ',' ? q - 1 : len;
}

static int parse_root(const ctx *c, const cJSON *root, kf_config *cfg)
{
    if (!cJSON_IsObject(root))
        return fail(c, NULL, "expected a JSON object at the top level (a kforge config)");
    const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(root, "kernel");
    cfg->family = 0;
    const char *maker = cJSON_IsString(kernel) && family_is_maker(kernel->valuestring) ? kernel->valuestring : NULL;
    if (maker) {
        /* a family described by the config itself, in the object named
         * after its maker ("custom"): made and registered here */
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(root, maker);
        if (!cJSON_IsObject(spec))
            return fail(c, maker, "expected an object describing the kernel (\"kernel\": \"%s\" needs one)", maker);
        char *text = cJSON_PrintUnformatted(spec);
        if (!text)
            return fail(c, maker, "out of memory");
        char merr[768];
        int fi = family_make(maker, text, c->path, merr, sizeof merr);
        free(text);
        if (fi < 0) {
            int line = maker_line(c, merr);
            if (line > 0) {
                kf_err(c->err, c->errlen, "%s: line %d: %s", c->path, line, merr);
                return -1;
            }
            return fail(c, NULL, "%s", merr);
        }
        cfg->family = fi;
    } else if (kernel) {
        const char *fams[16];
        int nf = 0;
        for (int i = 0; i < kf_nfamilies && nf < 16; i++)
            fams[nf++] = kf_families[i]->name;
        int64_t fi;
        if (get_enum(c, "kernel", kernel, fams, nf, &fi) != 0)
            return -1;
        cfg->family = (int)fi;
    }
    const char *top_keys[MAX_KEYS + 1], *spec_keys[MAX_KEYS];
    int n_top = known_keys(cfg->family, true, top_keys);
    int n_spec = known_keys(cfg->family, false, spec_keys);
    if (maker)
        top_keys[n_top++] = maker;
    if (check_keys(c, NULL, root, top_keys, n_top) != 0)
        return -1;
    const cJSON *bench = cJSON_GetObjectItemCaseSensitive(root, "bench");
    if (bench && parse_bench(c, bench, &cfg->bench) != 0)
        return -1;
    const cJSON *tune = cJSON_GetObjectItemCaseSensitive(root, "tune");
    if (tune && parse_tune(c, tune, cfg) != 0)
        return -1;

    kf_spec top;
    memset(&top, 0, sizeof top);
    int rc = -1;
    if (parse_spec_keys(c, cfg->family, NULL, root, &top) != 0)
        goto out;
    const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(root, "defaults");
    const cJSON *variants = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (defaults) {
        if (!cJSON_IsObject(defaults)) {
            fail(c, "defaults", "expected an object of variant keys");
            goto out;
        }
        if (check_keys(c, "defaults", defaults, spec_keys, n_spec) != 0)
            goto out;
        kf_spec d;
        memset(&d, 0, sizeof d);
        if (parse_spec_keys(c, cfg->family, "defaults", defaults, &d) != 0 || inherit(&d, &top) != 0) {
            spec_free(&d);
            goto out;
        }
        if (cJSON_GetObjectItemCaseSensitive(defaults, "name")) {
            spec_free(&d);
            fail(c, "defaults.name", "a name belongs to one variant, not to the defaults");
            goto out;
        }
        spec_free(&top);
        top = d;
    }
    if (variants) {
        if (!cJSON_IsArray(variants) || cJSON_GetArraySize(variants) == 0) {
            fail(c, "variants", "expected a non-empty list of variant objects");
            goto out;
        }
        int nv = cJSON_GetArraySize(variants);
        cfg->specs = calloc((size_t)nv, sizeof *cfg->specs);
        if (!cfg->specs) {
            fail(c, "variants", "out of memory");
            goto out;
        }
        int i = 0;
        for (const cJSON *v = variants->child; v; v = v->next, i++) {
            char f[64];
            subindex(f, sizeof f, "variants", i);
            kf_spec *s = &cfg->specs[i];
            cfg->nspecs = i + 1;
            snprintf(s->where, sizeof s->where, "%s", f);
            s->line = line_of(c, f);
            if (!cJSON_IsObject(v)) {
                fail(c, f, "expected a variant object");
                goto out;
            }
            if (check_keys(c, f, v, spec_keys, n_spec) != 0 || parse_spec_keys(c, cfg->family, f, v, s) != 0)
                goto out;
            if (inherit(s, &top) != 0) {
                fail(c, f, "out of memory");
                goto out;
            }
        }
        /* a name given twice: sorted, so 100k variants take no time */
        keypos *names = malloc(sizeof *names * (size_t)nv);
        if (!names) {
            fail(c, "variants", "out of memory");
            goto out;
        }
        for (int a = 0; a < nv; a++)
            names[a] = (keypos){cfg->specs[a].name, a};
        qsort(names, (size_t)nv, sizeof *names, cmp_keypos);
        int dup_a = -1, dup_b = -1;
        for (int a = 1; a < nv; a++)
            if (names[a].s[0] && strcmp(names[a - 1].s, names[a].s) == 0 && (dup_a < 0 || names[a].pos < dup_a)) {
                dup_a = names[a].pos;
                dup_b = names[a - 1].pos;
            }
        free(names);
        if (dup_a >= 0) {
            char f[80];
            snprintf(f, sizeof f, "%s.name", cfg->specs[dup_a].where);
            fail(c, f, "\"%s\" is already the name of %s", cfg->specs[dup_a].name, cfg->specs[dup_b].where);
            goto out;
        }
    } else {
        cfg->specs = calloc(1, sizeof *cfg->specs);
        if (!cfg->specs) {
            fail(c, NULL, "out of memory");
            goto out;
        }
        /* axes left out take their sweep (a made family: every listed
         * value), else the default */
        const kf_family *fam = kf_families[cfg->family];
        for (int a = 0; a < fam->nparams; a++) {
            const kf_param *p = &fam->params[a];
            if (top.ax[a].count > 0 || !p->sweep || p->nsweep < 1)
                continue;
            if (!(top.ax[a].vals = malloc(sizeof(int64_t) * (size_t)p->nsweep))) {
                fail(c, NULL, "out of memory");
                goto out;
            }
            memcpy(top.ax[a].vals, p->sweep, sizeof(int64_t) * (size_t)p->nsweep);
            top.ax[a].count = p->nsweep;
        }
        cfg->specs[0] = top;
        memset(&top, 0, sizeof top);
        cfg->nspecs = 1;
    }
    rc = 0;
out:
    spec_free(&top);
    return rc;
}

int config_parse(const char *text, size_t len, const char *path, kf_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    kf_bench_defaults(&out->bench);
    snprintf(out->path, sizeof out->path, "%s", strcmp(path, "-") == 0 ? "<stdin>" : path);
    ctx c = {out->path, err, errlen, NULL, 0};
    if (memchr(text, '\0', len)) {
        fail(&c, NULL, "not a JSON text (it contains a NUL byte)");
        return -1;
    }
    /* "\u0000" would end a string early in cJSON ("float32\u0000junk" read
     * as "float32"): no config needs one */
    for (size_t i = 0; i + 6 <= len; i++) {
        if (text[i] != '\\')
            continue;
        if (text[i + 1] == 'u' && text[i + 2] == '0' && text[i + 3] == '0' && text[i + 4] == '0' && text[i + 5] == '0') {
            int line, col;
            line_col(text, i, &line, &col);
            fail(&c, NULL, "line %d, column %d: a string holds \\u0000 (a NUL character), which no key or value "
                           "takes", line, col);
            return -1;
        }
        i++;    /* skip the escaped character (\\\\ included) */
    }
    /* A NUL-terminated copy: cJSON's "nothing after the value" check reads
     * the terminator, and callers (the fuzzer) may pass unterminated text. */
    char *copy = malloc(len + 1);
    if (!copy) {
        fail(&c, NULL, "out of memory");
        return -1;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(copy, &end, true);
    size_t off = end && end >= copy && end <= copy + len ? (size_t)(end - copy) : len;
    free(copy);
    if (!root) {
        off = key_error_offset(text, len, off);
        int line, col;
        size_t comma = trailing_comma(text, len, off);
        if (comma < len) {
            /* on the comma's own line, not at the bracket after it */
            line_col(text, comma, &line, &col);
            size_t close = comma + 1;
            while (close < len && strchr(" \t\r\n", text[close]))
                close++;
            fail(&c, NULL, "line %d, column %d: trailing comma (JSON allows no comma before '%c')", line, col,
                 close < len ? text[close] : '}');
            return -1;
        }
        line_col(text, off, &line, &col);
        if (off >= len) {
            fail(&c, NULL, "malformed JSON at line %d, column %d: unexpected end of file", line, col);
        } else {
            char near[16];
            size_t k = 0;
            for (; k < sizeof near - 1 && off + k < len && text[off + k] != '\n'; k++)
                near[k] = (text[off + k] >= 32 && text[off + k] < 127) ? text[off + k] : '?';
            near[k] = '\0';
            fail(&c, NULL, "malformed JSON at line %d, column %d, near '%s'", line, col, near);
        }
        return -1;
    }
    c.text = text;  /* from here on, messages about a field give its line */
    c.len = len;
    if (t1_is(root)) { /* a T1 file: read as the custom config it describes (t1.h) */
        char terr[768];
        cJSON *cfg = t1_translate(root, terr, sizeof terr);
        cJSON_Delete(root);
        if (!cfg)
            return fail(&c, NULL, "%s", terr);
        root = cfg;
        c.text = NULL; /* its fields are not the file's lines */
        c.len = 0;
    }
    int rc = parse_root(&c, root, out);
    out->content_hash = kf_hash64(text, len, 0x6b666367);
    cJSON_Delete(root);
    if (rc != 0)
        config_free(out);
    return rc;
}

int config_load(const char *path, kf_config *out, char *err, size_t errlen)
{
    size_t len;
    char rerr[512];
    memset(out, 0, sizeof *out);
    char *text = kf_read_file_max(path, KF_CONFIG_MAX_BYTES, &len, rerr, sizeof rerr);
    if (!text) {
        kf_err(err, errlen, "%s", rerr);
        return -1;
    }
    int rc = config_parse(text, len, path, out, err, errlen);
    free(text);
    return rc;
}

/* [1000,2^20] -> [1000,"2^20"]: the words of a flat list or object that are
 * not JSON values in quotes.  true when the result is valid JSON. */
static bool quote_bare_words(const char *val, char *out, size_t len)
{
    strbuf b = {0};
    const char *p = val;
    while (*p) {
        if (strchr("[]{},: ", *p)) {
            sb_appendn(&b, p++, 1);
            continue;
        }
        const char *q = *p == '"' ? strchr(p + 1, '"') : NULL;
        size_t n = q ? (size_t)(q - p) + 1 : *p == '"' ? strlen(p) : strcspn(p, "[]{},: ");
        char word[128];
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), p);
        cJSON *w = cJSON_ParseWithOpts(word, NULL, true);
        if (w || *p == '"')
            sb_append(&b, word);
        else
            sb_printf(&b, "\"%s\"", word);
        cJSON_Delete(w);
        p += n;
    }
    cJSON *all = b.s ? cJSON_Parse(b.s) : NULL;
    bool ok = all != NULL;
    cJSON_Delete(all);
    snprintf(out, len, "%s", b.s ? b.s : "");
    sb_free(&b);
    return ok && strlen(out) < len - 1;
}

int config_set(kf_config *cfg, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    char key[128];
    if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof key) {
        kf_err(err, errlen, "--set: expected KEY=VALUE (for example block_size=128), got '%s'", assignment);
        return -1;
    }
    memcpy(key, assignment, (size_t)(eq - assignment));
    key[eq - assignment] = '\0';
    const char *val = eq + 1;
    char where[160];
    snprintf(where, sizeof where, "--set %s", key);
    ctx c = {where, err, errlen, NULL, 0};

    cJSON *j = cJSON_ParseWithOpts(val, NULL, true);
    if (!j)
        j = cJSON_CreateString(val);    /* a bare word: dtype=float64 */
    if (!j) {
        kf_err(err, errlen, "--set %s: out of memory", key);
        return -1;
    }
    int rc = -1;
    const kf_family *fam = kf_families[cfg->family];
    int a = param_find(fam->params, fam->nparams, key);
    int d = param_find(fam->sizes, fam->nsizes, key);
    if (strncmp(key, "bench.", 6) == 0) {
        kf_bench b = cfg->bench;
        if (kf_lookup(bench_keys, N_BENCH_KEYS, key + 6) < 0) {
            const char *near = kf_suggest(key + 6, bench_keys, N_BENCH_KEYS);
            if (near)
                fail(&c, NULL, "unknown bench key (did you mean bench.%s?)", near);
            else
                fail(&c, NULL, "unknown bench key");
        } else if (parse_bench_key(&c, NULL, key + 6, j, &b) == 0 && check_bench(&c, NULL, &b) == 0) {
            cfg->bench = b;
            rc = 0;
        }
    } else if (a >= 0 || d >= 0) {
        kf_axis_values nv = {0, NULL};
        const kf_param *p = a >= 0 ? &fam->params[a] : &fam->sizes[d];
        if (parse_param(&c, NULL, p, j, &nv) == 0) {
            rc = 0;
            for (int i = 0; i < cfg->nspecs && rc == 0; i++)
                if (copy_values(a >= 0 ? &cfg->specs[i].ax[a] : &cfg->specs[i].sz[d], &nv) != 0)
                    rc = fail(&c, NULL, "out of memory");
            size_t at = strlen(cfg->sets);
            if (rc == 0 && a >= 0 && at + strlen(assignment) + 8 < sizeof cfg->sets)
                snprintf(cfg->sets + at, sizeof cfg->sets - at, " --set %s", assignment);
        } else if (!cJSON_IsNumber(j) && !cJSON_IsArray(j) && !cJSON_IsObject(j) && (val[0] == '[' || val[0] == '{')) {
            /* a list or object that is not JSON: most often a bare 2^20 in a list */
            char fixed[256];
            if (quote_bare_words(val, fixed, sizeof fixed))
                fail(&c, NULL, "%s is not valid JSON: quote strings inside a list (and the whole argument, for the "
                               "shell): --set '%s=%s'",
                     val, key, fixed);
        }
        free(nv.vals);
    } else if (strcmp(key, "constraints") == 0) {
        /* the whole list is validated first: a failed --set changes nothing */
        char **list = NULL;
        int n = 0;
        rc = parse_constraints(&c, cfg->family, NULL, j, &list, &n);
        for (int i = 0; i < cfg->nspecs && rc == 0; i++) {
            kf_spec *sp = &cfg->specs[i];
            char **l = realloc(sp->constraints, sizeof *l * (size_t)(sp->n_constraints + n + 1));
            if (!l) {
                rc = fail(&c, NULL, "out of memory");
                break;
            }
            sp->constraints = l;
            for (int k = 0; k < n && rc == 0; k++) {
                l[sp->n_constraints] = strdup(list[k]);
                if (!l[sp->n_constraints])
                    rc = fail(&c, NULL, "out of memory");
                else
                    sp->n_constraints++;
            }
        }
        for (int k = 0; k < n; k++)
            free(list[k]);
        free(list);
    } else {
        const char *const *keys = config_set_keys(cfg->family);
        int nk = 0;
        while (keys[nk])
            nk++;
        const char *near = kf_suggest(key, keys, nk);
        if (near)
            fail(&c, NULL, "unknown key (did you mean %s?)", near);
        else
            fail(&c, NULL, "unknown key; --set takes a %s key (%s, ...), a size (%s), constraints or bench.KEY",
                 fam->name, fam->params[0].name, fam->sizes[0].name);
    }
    cJSON_Delete(j);
    return rc;
}

void config_free(kf_config *cfg)
{
    for (int i = 0; i < cfg->nspecs; i++)
        spec_free(&cfg->specs[i]);
    free(cfg->specs);
    for (int d = 0; d < KF_MAX_DIMS; d++)
        free(cfg->tune_sz[d].vals);
    free(cfg->tune_weights);
    int family = cfg->family;
    memset(cfg, 0, sizeof *cfg);
    cfg->family = family;
}

const char *const *config_set_keys(int family)
{
    static char benchq[N_BENCH_KEYS][32];
    static const char *keys[KF_MAX_PARAMS + KF_MAX_DIMS + 2 + N_BENCH_KEYS];
    const kf_family *f = kf_families[family];
    int nk = 0;
    for (int i = 0; i < f->nparams; i++)
        keys[nk++] = f->params[i].name;
    for (int i = 0; i < f->nsizes; i++)
        keys[nk++] = f->sizes[i].name;
    keys[nk++] = "constraints";
    for (int b = 0; b < N_BENCH_KEYS; b++) {
        snprintf(benchq[b], sizeof benchq[b], "bench.%s", bench_keys[b]);
        keys[nk++] = benchq[b];
    }
    keys[nk] = NULL;
    return keys;
}

int config_param_value(const kf_param *p, const void *json, const char *what, int64_t *out, char *err,
                       size_t errlen)
{
    ctx c = {what, err, errlen, NULL, 0};
    const cJSON *j = json;
    switch (p->kind) {
    case KF_PK_ENUM: {
        enum_arg ea = {p->names, p->count};
        return scalar_enum(&c, p->name, j, &ea, out);
    }
    case KF_PK_INT: {
        long long only[16] = {0};
        int k = 0;
        for (const int64_t *o = p->only; o && *o && k < 15; o++)
            only[k++] = *o;
        int_arg ia = {p->lo, p->hi, p->allowed ? p->allowed : "an integer", p->pow2_strings, p->only ? only : NULL};
        return scalar_int(&c, p->name, j, &ia, out);
    }
    default:
        return scalar_grid(&c, p->name, j, NULL, out);
    }
}
