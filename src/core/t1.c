/*
 * t1.c -- see t1.h.
 */
#include "t1.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool t1_is(const cJSON *root)
{
    return cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "KernelSpecification") &&
           cJSON_GetObjectItemCaseSensitive(root, "ConfigurationSpace") &&
           !cJSON_GetObjectItemCaseSensitive(root, "kernel");
}

typedef struct {
    char *err;
    size_t errlen;
} t1ctx;

static int bad(t1ctx *c, const char *field, const char *fmt, ...) KF_PRINTF(3, 4);
static int bad(t1ctx *c, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kf_err(c->err, c->errlen, "T1 %s: %s", field, msg);
    return -1;
}

static void shown(const cJSON *j, char *buf, size_t len)
{
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    snprintf(buf, len, "%.60s", t ? t : "nothing");
    free(t);
}

/* Keys of o outside known (NULL-terminated) and ignored (informational):
 * the first unknown one refused, naming the known ones. */
static int only_keys(t1ctx *c, const char *field, const cJSON *o, const char *const *known, const char *const *ignored)
{
    for (const cJSON *k = o->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; known[i] && !ok; i++)
            ok = strcmp(k->string, known[i]) == 0;
        for (int i = 0; ignored && ignored[i] && !ok; i++)
            ok = strcmp(k->string, ignored[i]) == 0;
        if (!ok) {
            strbuf b = {0};
            for (int i = 0; known[i]; i++)
                sb_printf(&b, "%s%s", i ? ", " : "", known[i]);
            for (int i = 0; ignored && ignored[i]; i++)
                sb_printf(&b, ", %s", ignored[i]);
            char *t = sb_take(&b);
            char f[256];
            snprintf(f, sizeof f, "%s%s%s", field, field[0] ? "." : "", k->string);
            bad(c, f, "not supported by kforge (the supported fields here: %s)", t ? t : "");
            free(t);
            return -1;
        }
    }
    return 0;
}

/* A T1 element type as kforge's dtype name, or NULL. */
static const char *dtype_of(const char *t)
{
    static const char *const map[][2] = {{"float", "float32"}, {"float32", "float32"}, {"double", "float64"},
                                         {"float64", "float64"}, {"int", "int32"}, {"int32", "int32"},
                                         {"uint", "uint32"}, {"uint32", "uint32"}, {"int64", "int64"},
                                         {"long", "int64"}, {"half", "float16"}, {"float16", "float16"},
                                         {"int8", "int8"}, {"char", "int8"}, {"byte", "int8"}, {"uint8", "uint8"},
                                         {"uchar", "uint8"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(t, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* An expression field: a string, or a number written as one. */
static int expr_text(t1ctx *c, const char *field, const cJSON *j, char *out, size_t len)
{
    if (cJSON_IsString(j) && j->valuestring[0] && strlen(j->valuestring) < len) {
        snprintf(out, len, "%s", j->valuestring);
        return 0;
    }
    if (cJSON_IsNumber(j)) {
        snprintf(out, len, "%.17g", j->valuedouble);
        return 0;
    }
    char g[80];
    shown(j, g, sizeof g);
    return bad(c, field, "expected an expression (a string such as \"4096 // BLOCK_SIZE\") or a number, got %s", g);
}

// ---------------------------------------------------------------------------
// Values written as Python (BAT's T1 files): "list(range(32, 1024+1, 32))",
// "[2**i for i in range(0, 6)]", "[1] + [2*i for i in range(1,11)]": a
// list, range() with integer arguments, a comprehension over one range, and
// + of lists; integers with + - * // % ** and parentheses.

#define PYL_MAX 4096

typedef struct {
    const char *s;
    size_t i;
    const char *var;    /* a comprehension's variable, and its value */
    size_t varlen;
    long long val;
    bool failed;
} pyl;

static void pyl_ws(pyl *p)
{
    while (p->s[p->i] == ' ' || p->s[p->i] == '\t')
        p->i++;
}

static bool pyl_accept(pyl *p, const char *t)
{
    pyl_ws(p);
    size_t n = strlen(t);
    if (strncmp(p->s + p->i, t, n) != 0)
        return false;
    if (isalnum((unsigned char)t[n - 1]) && (isalnum((unsigned char)p->s[p->i + n]) || p->s[p->i + n] == '_'))
        return false;
    p->i += n;
    return true;
}

static long long pyl_sum(pyl *p);

static long long pyl_atom(pyl *p)
{
    pyl_ws(p);
    if (pyl_accept(p, "(")) {
        long long v = pyl_sum(p);
        if (!pyl_accept(p, ")"))
            p->failed = true;
        return v;
    }
    if (pyl_accept(p, "-"))
        return -pyl_atom(p);
    if (isdigit((unsigned char)p->s[p->i])) {
        long long v = 0;
        while (isdigit((unsigned char)p->s[p->i]) && v < (1LL << 40))
            v = v * 10 + (p->s[p->i++] - '0');
        return v;
    }
    if (p->var && strncmp(p->s + p->i, p->var, p->varlen) == 0 &&
        !isalnum((unsigned char)p->s[p->i + p->varlen]) && p->s[p->i + p->varlen] != '_') {
        p->i += p->varlen;
        return p->val;
    }
    p->failed = true;
    return 0;
}

static long long pyl_pow(pyl *p)
{
    long long b = pyl_atom(p);
    if (pyl_accept(p, "**")) {
        long long e = pyl_pow(p), r = 1;
        if (e < 0 || e > 62)
            p->failed = true;
        for (long long k = 0; k < e && !p->failed && r < (1LL << 50); k++)
            r *= b;
        return r;
    }
    return b;
}

static long long pyl_prod(pyl *p)
{
    long long v = pyl_pow(p);
    for (;;) {
        if (pyl_accept(p, "**")) {
            p->failed = true;
            return v;
        }
        if (pyl_accept(p, "*"))
            v *= pyl_pow(p);
        else if (pyl_accept(p, "//")) {
            long long d = pyl_pow(p);
            if (!d)
                p->failed = true;
            else
                v = (long long)floor((double)v / (double)d);
        } else if (pyl_accept(p, "%")) {
            long long d = pyl_pow(p);
            if (!d)
                p->failed = true;
            else
                v = ((v % d) + d) % d;
        } else
            return v;
    }
}

static long long pyl_sum(pyl *p)
{
    long long v = pyl_prod(p);
    for (;;) {
        if (pyl_accept(p, "+"))
            v += pyl_prod(p);
        else if (pyl_accept(p, "-"))
            v -= pyl_prod(p);
        else
            return v;
    }
}

static void pyl_push(pyl *p, long long *out, int *n, long long v)
{
    if (*n >= PYL_MAX)
        p->failed = true;
    else
        out[(*n)++] = v;
}

static void pyl_range(pyl *p, long long *out, int *n)
{
    long long a[3];
    int k = 0;
    do
        a[k++] = pyl_sum(p);
    while (k < 3 && pyl_accept(p, ","));
    if (!pyl_accept(p, ")")) {
        p->failed = true;
        return;
    }
    long long lo = k == 1 ? 0 : a[0], hi = k == 1 ? a[0] : a[1], st = k == 3 ? a[2] : 1;
    if (st == 0) {
        p->failed = true;
        return;
    }
    for (long long v = lo; (st > 0 ? v < hi : v > hi) && !p->failed; v += st)
        pyl_push(p, out, n, v);
}

static void pyl_list(pyl *p, long long *out, int *n);

static void pyl_term(pyl *p, long long *out, int *n)
{
    if (pyl_accept(p, "list(")) {
        pyl_list(p, out, n);
        if (!pyl_accept(p, ")"))
            p->failed = true;
    } else if (pyl_accept(p, "range(")) {
        pyl_range(p, out, n);
    } else if (pyl_accept(p, "[")) {
        if (pyl_accept(p, "]"))
            return;
        size_t at = p->i;
        /* a comprehension: the element expression, "for NAME in", a list */
        const char *f = strstr(p->s + p->i, " for ");
        const char *close = strchr(p->s + p->i, ']');
        if (f && close && f < close) {
            size_t j = (size_t)(f - p->s) + 5;
            while (p->s[j] == ' ')
                j++;
            size_t v0 = j;
            while (isalnum((unsigned char)p->s[j]) || p->s[j] == '_')
                j++;
            if (j == v0) {
                p->failed = true;
                return;
            }
            const char *var = p->s + v0;
            size_t vl = j - v0;
            pyl q = *p;
            q.i = j;
            if (!pyl_accept(&q, "in")) {
                p->failed = true;
                return;
            }
            long long src[PYL_MAX];
            int ns = 0;
            pyl_term(&q, src, &ns);
            if (q.failed || !pyl_accept(&q, "]")) {
                p->failed = true;
                return;
            }
            for (int k = 0; k < ns && !p->failed; k++) {
                pyl e = {p->s, at, var, vl, src[k], false};
                long long v = pyl_sum(&e);
                pyl_ws(&e);
                if (e.failed || e.s + e.i != f + 1) /* f: the space before "for" */
                    p->failed = true;
                else
                    pyl_push(p, out, n, v);
            }
            p->i = q.i;
            return;
        }
        do
            pyl_push(p, out, n, pyl_sum(p));
        while (!p->failed && pyl_accept(p, ","));
        if (!pyl_accept(p, "]"))
            p->failed = true;
    } else {
        p->failed = true;
    }
}

static void pyl_list(pyl *p, long long *out, int *n)
{
    pyl_term(p, out, n);
    while (!p->failed && pyl_accept(p, "+"))
        pyl_term(p, out, n);
}

/* Values written as Python as a JSON list of integers (NULL: not one kforge reads). */
static cJSON *python_values(const char *text)
{
    static long long v[PYL_MAX];
    int n = 0;
    pyl p = {text, 0, NULL, 0, 0, false};
    pyl_list(&p, v, &n);
    pyl_ws(&p);
    if (p.failed || p.s[p.i] || n == 0)
        return NULL;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static int params(t1ctx *c, const cJSON *space, cJSON *custom, cJSON *refp)
{
    static const char *const skeys[] = {"TuningParameters", "Conditions", NULL};
    if (!cJSON_IsObject(space))
        return bad(c, "ConfigurationSpace", "expected an object with TuningParameters and Conditions");
    if (only_keys(c, "ConfigurationSpace", space, skeys, NULL) != 0)
        return -1;
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(space, "TuningParameters");
    if (!cJSON_IsArray(tp) || !cJSON_GetArraySize(tp))
        return bad(c, "ConfigurationSpace.TuningParameters", "expected a list of {\"Name\", \"Type\", \"Values\", "
                                                             "\"Default\"}");
    cJSON *pm = cJSON_AddObjectToObject(custom, "params");
    int i = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, tp)
    {
        char f[128], g[80];
        snprintf(f, sizeof f, "ConfigurationSpace.TuningParameters[%d]", i++);
        static const char *const pkeys[] = {"Name", "Type", "Values", "Default", NULL};
        if (!cJSON_IsObject(p))
            return bad(c, f, "expected {\"Name\", \"Type\", \"Values\", \"Default\"}");
        if (only_keys(c, f, p, pkeys, NULL) != 0)
            return -1;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "Name");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "Type");
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(p, "Values");
        if (!cJSON_IsString(name) || !name->valuestring[0])
            return bad(c, f, "expected a \"Name\"");
        snprintf(f + strlen(f), sizeof f - strlen(f), " (%s)", name->valuestring);
        if (type && (!cJSON_IsString(type) || (strcmp(type->valuestring, "int") != 0 &&
                                                strcmp(type->valuestring, "uint") != 0))) {
            shown(type, g, sizeof g);
            return bad(c, f, "Type: kforge's parameters are integers: expected \"int\" or \"uint\", got %s", g);
        }
        /* Values: a list, or a string holding one ("[64, 128]", as BAT writes it) */
        cJSON *list = cJSON_IsString(vals) ? python_values(vals->valuestring) : cJSON_Duplicate(vals, 1);
        bool ok = cJSON_IsArray(list) && cJSON_GetArraySize(list) > 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, list) ok = ok && cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
        if (!ok) {
            cJSON_Delete(list);
            shown(vals, g, sizeof g);
            return bad(c, f, "Values: expected a list of integers, or a string holding one as Python writes it (a "
                             "list, range(), [EXPR for i in range(...)], + of lists), got %s", g);
        }
        cJSON_AddItemToObject(pm, name->valuestring, list);
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "Default");
        if (def && !cJSON_IsNumber(def)) {
            shown(def, g, sizeof g);
            return bad(c, f, "Default: expected one of its Values, got %s", g);
        }
        /* the reference: every parameter at its Default (else its first value) */
        cJSON_AddNumberToObject(refp, name->valuestring, def ? def->valuedouble : list->child->valuedouble);
    }
    const cJSON *cond = cJSON_GetObjectItemCaseSensitive(space, "Conditions");
    if (cond) {
        if (!cJSON_IsArray(cond))
            return bad(c, "ConfigurationSpace.Conditions", "expected a list of {\"Parameters\", \"Expression\"}");
        cJSON *cons = cJSON_AddArrayToObject(custom, "constraints");
        i = 0;
        const cJSON *k;
        cJSON_ArrayForEach(k, cond)
        {
            char f[96];
            snprintf(f, sizeof f, "ConfigurationSpace.Conditions[%d]", i++);
            static const char *const ckeys[] = {"Expression", "Parameters", NULL};
            if (!cJSON_IsObject(k))
                return bad(c, f, "expected {\"Parameters\", \"Expression\"}");
            if (only_keys(c, f, k, ckeys, NULL) != 0)
                return -1;
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(k, "Expression");
            if (!cJSON_IsString(e) || !e->valuestring[0])
                return bad(c, f, "expected an \"Expression\" (a string over the parameters, as Python writes it)");
            cJSON_AddItemToArray(cons, cJSON_CreateString(e->valuestring));
        }
    }
    return 0;
}

static int argument(t1ctx *c, int i, const cJSON *a, cJSON *args, cJSON *consts)
{
    char f[160], g[80];
    snprintf(f, sizeof f, "KernelSpecification.Arguments[%d]", i);
    static const char *const akeys[] = {"Name", "Type", "MemoryType", "Size", "AccessType", "FillType", "FillValue",
                                        "DataSource", "Output", "MemType", "TypeSize", NULL};
    if (!cJSON_IsObject(a))
        return bad(c, f, "expected {\"Name\", \"Type\", \"MemoryType\", ...}");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(a, "Name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return bad(c, f, "expected a \"Name\"");
    snprintf(f + strlen(f), sizeof f - strlen(f), " (%s)", name->valuestring);
    if (only_keys(c, f, a, akeys, NULL) != 0)
        return -1;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(a, "Type");
    const char *dt = cJSON_IsString(type) ? dtype_of(type->valuestring) : NULL;
    if (!dt) {
        shown(type, g, sizeof g);
        return bad(c, f, "Type: expected float, double, int32 (int), uint32 (uint), int64, half, int8 (char) "
                              "or uint8 (uchar), got %s", g);
    }
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(a, "MemoryType");
    const cJSON *fv = cJSON_GetObjectItemCaseSensitive(a, "FillValue");
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(a, "FillType");
    if (cJSON_IsString(mt) && strcmp(mt->valuestring, "Scalar") == 0) {
        if (!cJSON_IsNumber(fv))
            return bad(c, f, "FillValue: a Scalar needs its value (a number)");
        if (ft && !(cJSON_IsString(ft) && strcmp(ft->valuestring, "Constant") == 0))
            return bad(c, f, "FillType: a Scalar is a Constant");
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", name->valuestring);
        cJSON_AddStringToObject(s, "scalar", dt);
        char num[64];
        snprintf(num, sizeof num, "%.17g", fv->valuedouble);
        cJSON_AddStringToObject(s, "value", num);
        cJSON_AddItemToArray(args, s);
        return 0;
    }
    if (!cJSON_IsString(mt) || strcmp(mt->valuestring, "Vector") != 0) {
        shown(mt, g, sizeof g);
        return bad(c, f, "MemoryType: expected \"Vector\" or \"Scalar\", got %s", g);
    }
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(a, "Size");
    if (!cJSON_IsNumber(size) || size->valuedouble < 1 || size->valuedouble != floor(size->valuedouble))
        return bad(c, f, "Size: expected the number of elements (a positive integer)");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(a, "TypeSize");
    if (ts && !(cJSON_IsNumber(ts) && ts->valuedouble == 1))
        return bad(c, f, "TypeSize: only 1 (one element of Type per element) is supported");
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "name", name->valuestring);
    cJSON_AddStringToObject(b, "dtype", dt);
    char num[64];
    snprintf(num, sizeof num, "%.0f", size->valuedouble);
    cJSON_AddStringToObject(b, "length", num);
    /* the fill */
    const char *fill = cJSON_IsString(ft) ? ft->valuestring : "Constant";
    if (strcmp(fill, "Constant") == 0) {
        if (fv && !cJSON_IsNumber(fv))
            return cJSON_Delete(b), bad(c, f, "FillValue: expected a number");
        cJSON *o = cJSON_AddObjectToObject(b, "fill");
        cJSON_AddNumberToObject(o, "constant", fv ? fv->valuedouble : 0);
    } else if (strcmp(fill, "Random") == 0) {
        if (fv && !cJSON_IsNumber(fv))
            return cJSON_Delete(b), bad(c, f, "FillValue: expected a number (the random values' largest)");
        double hi = fv ? fv->valuedouble : 1;
        bool integer = strncmp(dt, "int", 3) == 0 || strncmp(dt, "uint", 4) == 0;
        cJSON *o = cJSON_AddObjectToObject(b, "fill");
        cJSON *r = cJSON_AddArrayToObject(o, "random");
        cJSON_AddItemToArray(r, cJSON_CreateNumber(0));
        cJSON_AddItemToArray(r, cJSON_CreateNumber(integer ? floor(hi) : hi));
    } else if (strcmp(fill, "Generator") == 0) {
        const cJSON *ds = cJSON_GetObjectItemCaseSensitive(a, "DataSource");
        if (!cJSON_IsString(ds) || strcmp(ds->valuestring, "i") != 0) {
            cJSON_Delete(b);
            shown(ds, g, sizeof g);
            return bad(c, f, "DataSource: the only Generator kforge has is \"i\" (each element its index), got %s", g);
        }
        cJSON_AddStringToObject(b, "fill", "iota");
    } else {
        cJSON_Delete(b);
        shown(ft, g, sizeof g);
        return bad(c, f, "FillType: expected Constant, Random or Generator, got %s", g);
    }
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(a, "MemType");
    if (mem) {
        if (!cJSON_IsString(mem) || (strcmp(mem->valuestring, "Constant") != 0 &&
                                     strcmp(mem->valuestring, "Global") != 0)) {
            cJSON_Delete(b);
            shown(mem, g, sizeof g);
            return bad(c, f, "MemType: expected \"Constant\" (a __constant__ variable) or \"Global\", got %s", g);
        }
    }
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(a, "AccessType");
    const char *role = !cJSON_IsString(acc) ? NULL
                       : strcmp(acc->valuestring, "ReadOnly") == 0  ? "in"
                       : strcmp(acc->valuestring, "WriteOnly") == 0 ? "out"
                       : strcmp(acc->valuestring, "ReadWrite") == 0 ? "inout"
                                                                    : NULL;
    if (!role) {
        cJSON_Delete(b);
        shown(acc, g, sizeof g);
        return bad(c, f, "AccessType: expected ReadOnly, WriteOnly or ReadWrite, got %s", g);
    }
    if (mem && strcmp(mem->valuestring, "Constant") == 0) {
        /* BAT passes it twice: into the __constant__ variable of its name
         * and as the kernel's argument at its place (batbench's Arguments:
         * every argument is in the list, constants too) */
        if (strcmp(role, "in") != 0) {
            cJSON_Delete(b);
            return bad(c, f, "MemType Constant: a __constant__ variable is ReadOnly");
        }
        cJSON_AddItemToArray(consts, cJSON_Duplicate(b, 1));
    }
    cJSON_AddStringToObject(b, "role", role);
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(a, "Output");
    if (out && !cJSON_IsNumber(out) && !cJSON_IsBool(out)) {
        cJSON_Delete(b);
        return bad(c, f, "Output: expected 1 or 0");
    }
    bool compared = !out || cJSON_IsTrue(out) || (cJSON_IsNumber(out) && out->valuedouble != 0);
    if (strcmp(role, "in") != 0 && !compared)
        cJSON_AddBoolToObject(b, "check", false); /* written, not an output to verify */
    cJSON_AddItemToArray(args, b);
    return 0;
}

static int launch(t1ctx *c, const cJSON *ks, cJSON *custom)
{
    const cJSON *gst = cJSON_GetObjectItemCaseSensitive(ks, "GlobalSizeType");
    bool opencl = false;
    if (gst) {
        if (!cJSON_IsString(gst) || (strcmp(gst->valuestring, "CUDA") != 0 && strcmp(gst->valuestring, "OpenCL") != 0))
            return bad(c, "KernelSpecification.GlobalSizeType", "expected \"CUDA\" (GlobalSize in blocks) or "
                                                                "\"OpenCL\" (in threads)");
        opencl = strcmp(gst->valuestring, "OpenCL") == 0;
    }
    const cJSON *gs = cJSON_GetObjectItemCaseSensitive(ks, "GlobalSize");
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(ks, "LocalSize");
    if (!cJSON_IsObject(gs) || !cJSON_IsObject(ls))
        return bad(c, "KernelSpecification", "GlobalSize and LocalSize: expected {\"X\": ..., \"Y\": ..., \"Z\": ...}");
    cJSON *grid = cJSON_AddArrayToObject(custom, "grid");
    cJSON *block = cJSON_AddArrayToObject(custom, "block");
    static const char *const dims[] = {"X", "Y", "Z"};
    static const char *const keys[] = {"X", "Y", "Z", NULL};
    if (only_keys(c, "KernelSpecification.GlobalSize", gs, keys, NULL) != 0 ||
        only_keys(c, "KernelSpecification.LocalSize", ls, keys, NULL) != 0)
        return -1;
    for (int d = 0; d < 3; d++) {
        char f[80], g[200], l[200], e[420];
        const cJSON *gj = cJSON_GetObjectItemCaseSensitive(gs, dims[d]);
        const cJSON *lj = cJSON_GetObjectItemCaseSensitive(ls, dims[d]);
        snprintf(f, sizeof f, "KernelSpecification.GlobalSize.%s", dims[d]);
        if (!gj)
            snprintf(g, sizeof g, "1");
        else if (expr_text(c, f, gj, g, sizeof g) != 0)
            return -1;
        snprintf(f, sizeof f, "KernelSpecification.LocalSize.%s", dims[d]);
        if (!lj)
            snprintf(l, sizeof l, "1");
        else if (expr_text(c, f, lj, l, sizeof l) != 0)
            return -1;
        if (opencl) /* threads: blocks of the local size, the last one partly used */
            snprintf(e, sizeof e, "ceil((%s) / (%s))", g, l);
        else
            snprintf(e, sizeof e, "%s", g);
        cJSON_AddItemToArray(grid, cJSON_CreateString(e));
        cJSON_AddItemToArray(block, cJSON_CreateString(l));
    }
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(ks, "SharedMemory");
    if (sm) {
        char s[200];
        if (expr_text(c, "KernelSpecification.SharedMemory", sm, s, sizeof s) != 0)
            return -1;
        if (strcmp(s, "0") != 0)
            cJSON_AddStringToObject(custom, "smem", s);
    }
    return 0;
}

cJSON *t1_translate(const cJSON *root, char *err, size_t errlen)
{
    t1ctx c = {err, errlen};
    static const char *const top[] = {"KernelSpecification", "ConfigurationSpace", NULL};
    /* informational: a name, a budget for another tuner, BAT's own settings and reference */
    static const char *const ignored[] = {"General", "Budget", "BenchmarkConfig", "verification", "Search", NULL};
    if (only_keys(&c, "", root, top, ignored) != 0)
        return NULL;
    const cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "KernelSpecification");
    if (!cJSON_IsObject(ks)) {
        bad(&c, "KernelSpecification", "expected an object (the kernel: KernelFile, KernelName, Arguments, ...)");
        return NULL;
    }
    static const char *const kkeys[] = {"Language", "KernelFile", "KernelName", "CompilerOptions", "GlobalSizeType",
                                        "GlobalSize", "LocalSize", "SharedMemory", "Arguments", NULL};
    static const char *const kignored[] = {"BenchmarkName", "BenchmarkPath", "Stream", "Misc", "ProblemSize",
                                           "GridDivX", "GridDivY", "GridDivZ", "SharedMemoryOriginal", NULL};
    if (only_keys(&c, "KernelSpecification", ks, kkeys, kignored) != 0)
        return NULL;
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(ks, "Language");
    if (lang && !(cJSON_IsString(lang) && strcmp(lang->valuestring, "CUDA") == 0)) {
        char g[80];
        shown(lang, g, sizeof g);
        bad(&c, "KernelSpecification.Language", "kforge runs CUDA kernels: expected \"CUDA\", got %s", g);
        return NULL;
    }
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(ks, "KernelFile");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ks, "KernelName");
    if (!cJSON_IsString(file) || !file->valuestring[0]) {
        bad(&c, "KernelSpecification.KernelFile", "expected the kernel's .cu file, relative to the T1 file");
        return NULL;
    }
    if (!cJSON_IsString(name) || !name->valuestring[0]) {
        bad(&c, "KernelSpecification.KernelName", "expected the kernel's name in KernelFile");
        return NULL;
    }
    cJSON *cfg = cJSON_CreateObject();
    cJSON_AddStringToObject(cfg, "kernel", "custom");
    cJSON *custom = cJSON_AddObjectToObject(cfg, "custom");
    cJSON_AddStringToObject(custom, "source", file->valuestring);
    cJSON_AddStringToObject(custom, "entry", name->valuestring);
    cJSON *refp = cJSON_CreateObject();
    if (params(&c, cJSON_GetObjectItemCaseSensitive(root, "ConfigurationSpace"), custom, refp) != 0)
        goto fail;
    /* T1's sizes are numbers in its expressions: one size of one value keys the results */
    cJSON *sizes = cJSON_AddArrayToObject(custom, "sizes");
    cJSON_AddItemToArray(sizes, cJSON_CreateString("t1"));
    const cJSON *argl = cJSON_GetObjectItemCaseSensitive(ks, "Arguments");
    if (!cJSON_IsArray(argl) || !cJSON_GetArraySize(argl)) {
        bad(&c, "KernelSpecification.Arguments", "expected the kernel's arguments in order");
        goto fail;
    }
    cJSON *args = cJSON_AddArrayToObject(custom, "args");
    cJSON *consts = cJSON_CreateArray();
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, argl)
    {
        if (argument(&c, i++, a, args, consts) != 0) {
            cJSON_Delete(consts);
            goto fail;
        }
    }
    if (cJSON_GetArraySize(consts))
        cJSON_AddItemToObject(custom, "constants", consts);
    else
        cJSON_Delete(consts);
    if (launch(&c, ks, custom) != 0)
        goto fail;
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(ks, "CompilerOptions");
    if (co) {
        if (!cJSON_IsArray(co)) {
            bad(&c, "KernelSpecification.CompilerOptions", "expected a list of NVRTC options");
            goto fail;
        }
        cJSON_AddItemToObject(custom, "compiler_options", cJSON_Duplicate(co, 1));
    }
    cJSON *ref = cJSON_AddObjectToObject(custom, "reference");
    cJSON_AddItemToObject(ref, "params", refp);
    refp = NULL;
    /* the default configuration is the reference; others may sum in another order */
    cJSON *tol = cJSON_AddObjectToObject(custom, "tolerance");
    cJSON_AddNumberToObject(tol, "rtol", 1e-4);
    cJSON_AddNumberToObject(tol, "atol", 1e-5);
    cJSON *defs = cJSON_AddObjectToObject(cfg, "defaults");
    cJSON_AddStringToObject(defs, "t1", "1");
    return cfg;
fail:
    cJSON_Delete(refp);
    cJSON_Delete(cfg);
    return NULL;
}
