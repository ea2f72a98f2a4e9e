/*
 * export.c -- kforge export of a custom kernel: the parameter table, the
 * lookup and the launcher.
 *
 * Under CUDA the header also holds the kernel, once per distinct tuned
 * parameter set: the source's #include lines first (at file scope, so that
 * guarded headers are no-ops inside the namespaces), then for set i
 * codegen_wrapped's text -- namespace kforge_<name>_v<i> { the #defines and
 * the source exactly as kforge compiles them } and the #undef of every macro
 * they define -- an extern "C" entry renamed kforge_<name>_v<i>_<entry>
 * (one C name cannot live in several namespaces).  The launcher computes the
 * launch from the config's expressions (expr_c_text).  NVRTC compiles that
 * part at export time for the tuned GPU's architecture, with a check that
 * the launcher's arguments convert to the kernel's parameters; a source that
 * fails there (an extern "C" helper, __constant__ or second kernel: one C
 * name defined in every copy) gets the table and lookup alone, and export
 * says why.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "custom_internal.h"
#include "export_common.h"
#include "expr.h"
#include "family.h"
#include "rtc.h"
#include "util.h"

#define LINE_MARK "#line @KFORGE@\n" /* numbered by number_lines once the text is whole */

typedef struct {
    const cfam *c;
    const kf_export_entry *e;
    int n;
    int *set;                           /* set[j]: entry j's parameter set (n) */
    int *first;                         /* first[i]: the first entry of set i (n) */
    int nsets;
    bool extern_c;                      /* the entry keeps its name in the module: renamed per copy */
    char bufname[MAX_ARGS][64], cname[KF_MAX_CONSTANTS][64];
    char file[PATH_MAX];                /* the header's name in its #line directives */
    strbuf sig;                         /* the launcher's declaration */
} xport;

static const char *c_type(kf_dtype t)
{
    static const char *const names[KF_DTYPE_COUNT] = {
        [KF_INT32] = "int", [KF_UINT32] = "unsigned int", [KF_INT64] = "long long", [KF_FLOAT32] = "float",
        [KF_FLOAT64] = "double", [KF_BFLOAT16] = "__nv_bfloat16", [KF_FLOAT16] = "__half",
        [KF_INT8] = "signed char", [KF_UINT8] = "unsigned char"};
    return names[t];
}

static bool cxx_keyword(const char *s)
{
    static const char *const kw[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
        "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
        "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
        "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "dim3",
        "stream"};
    return kf_lookup(kw, (int)(sizeof kw / sizeof kw[0]), s) >= 0;
}

/* The launcher's parameter for a buffer or constant: its own name where
 * that is a C identifier, no C++ keyword, not kforge's (kf..., stream), no
 * size's and not taken; else fallback. */
static void param_name(const xport *x, const char *name, const char *fallback, char *out, size_t len)
{
    const cfam *c = x->c;
    bool ok = custom_ident(name) && !cxx_keyword(name) && strncmp(name, "kf", 2) != 0 &&
              param_find(c->sizes, c->fam.nsizes, name) < 0;
    for (int a = 0; a < c->nargs && ok; a++)
        ok = strcmp(x->bufname[a], name) != 0;
    for (int k = 0; k < c->nconsts && ok; k++)
        ok = strcmp(x->cname[k], name) != 0;
    snprintf(out, len, "%s", ok ? name : fallback);
}

/* The kernel of set i, as the launcher names it. */
static void kernel_name(const xport *x, int i, char *buf, size_t len)
{
    if (x->extern_c)
        snprintf(buf, len, "kforge_%s_v%d::kforge_%s_v%d_%s", x->c->famname, i, x->c->famname, i, x->c->entry);
    else
        snprintf(buf, len, "kforge_%s_v%d::%s", x->c->famname, i, x->c->entry);
}

/* text with every LINE_MARK made `#line N "file"`, N the next line's number. */
static char *number_lines(const char *text, const char *file)
{
    strbuf b = {0};
    int line = 1;
    size_t mlen = strlen(LINE_MARK);
    for (const char *p = text; *p;) {
        if (strncmp(p, LINE_MARK, mlen) == 0) {
            sb_printf(&b, "#line %d \"%s\"\n", line + 1, file);
            p += mlen;
            line++;
            continue;
        }
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p) + 1 : strlen(p);
        sb_appendn(&b, p, k);
        line += nl != NULL;
        p += k;
    }
    if (b.failed) {
        sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

/* Whether an NVRTC log line continues the message before it ("argument
 * types are: (...)"), rather than quoting the source. */
static bool continues(const char *line)
{
    line += strspn(line, " \t");
    size_t k = strspn(line, "abcdefghijklmnopqrstuvwxyz ");
    return line[k] == ':' && ((k >= 4 && strncmp(line + k - 4, " are", 4) == 0) ||
                              (k >= 3 && strncmp(line + k - 3, " is", 3) == 0));
}

/* The first error line of an NVRTC log (with the line after it when that
 * one continues the message), else fallback: one line into out. */
static void first_error(const char *log, const char *fallback, char *out, size_t len)
{
    const char *p = log ? strstr(log, "error") : NULL;
    if (!p) {
        snprintf(out, len, "%s", fallback);
        return;
    }
    while (p > log && p[-1] != '\n')
        p--;
    size_t k = strcspn(p, "\n");
    const char *next = p[k] == '\n' ? p + k + 1 : NULL;
    if (next && continues(next)) {
        size_t skip = strspn(next, " \t");
        snprintf(out, len, "%.*s (%.*s)", (int)k, p, (int)strcspn(next + skip, "\n"), next + skip);
    } else {
        snprintf(out, len, "%.*s", (int)k, p);
    }
    for (char *q = out; *q; q++)
        if ((unsigned char)*q < 32)
            *q = ' ';
}

/* Entry j's parameter set: the first entry with the same parameters. */
static void find_sets(xport *x)
{
    const int np = x->c->fam.nparams;
    x->nsets = 0;
    for (int j = 0; j < x->n; j++) {
        int i = 0;
        while (i < x->nsets && memcmp(x->e[x->first[i]].v.p, x->e[j].v.p, sizeof(int64_t) * (size_t)np) != 0)
            i++;
        if (i == x->nsets)
            x->first[x->nsets++] = j;
        x->set[j] = i;
    }
}

/* Whether the entry is an extern "C" kernel: its lowered name (NVRTC, on
 * the source of set 0) is the entry itself. */
static int entry_linkage(xport *x, const rtc_options *o, char *why, size_t whylen)
{
    char err[256], low[512], *log = NULL;
    char *src = codegen_source(&x->e[x->first[0]].v, err, sizeof err);
    if (!src) {
        kf_err(why, whylen, "%s", err);
        return -1;
    }
    int rc = rtc_lowered_name(src, x->c->source_path, o, x->c->entry, low, sizeof low, &log, err, sizeof err);
    if (rc != 0) {
        char first[512];
        first_error(log, err, first, sizeof first);
        kf_err(why, whylen, "NVRTC (%s) does not find the entry %s in the source: %s", o->arch, x->c->entry, first);
    } else {
        x->extern_c = strcmp(low, x->c->entry) == 0;
    }
    free(log);
    free(src);
    return rc;
}

static bool uses_dtype(const cfam *c, kf_dtype t)
{
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].dtype == t)
            return true;
    for (int k = 0; k < c->nconsts; k++)
        if (c->consts[k].dtype == t)
            return true;
    return false;
}

/* The kernel once per set: the source's #include lines, the 2-byte float
 * headers the launcher's types need, each set's wrapped source. */
static int device_part(const xport *x, strbuf *b, char *why, size_t whylen)
{
    const cfam *c = x->c;
    sb_append(b, "// The source's #include lines, at file scope first: the copies' own are then no-ops.\n");
    for (const char *p = c->source_text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p + strspn(p, " \t");
        if (*q == '#') {
            q += 1 + strspn(q + 1, " \t");
            if (strncmp(q, "include", 7) == 0) {
                q += 7 + strspn(q + 7, " \t");
                if (*q == '<' || *q == '"')
                    sb_printf(b, "%.*s\n", (int)k, p);
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    if (uses_dtype(c, KF_FLOAT16))
        sb_append(b, "#include <cuda_fp16.h>\n");
    if (uses_dtype(c, KF_BFLOAT16))
        sb_append(b, "#include <cuda_bf16.h>\n");
    for (int i = 0; i < x->nsets; i++) {
        char ns[KF_NAME_MAX + 32], entry[KF_NAME_MAX + 300];
        snprintf(ns, sizeof ns, "kforge_%s_v%d", c->famname, i);
        snprintf(entry, sizeof entry, "%s_%s", ns, c->entry);
        int members = 0;
        for (int j = 0; j < x->n; j++)
            members += x->set[j] == i;
        sb_printf(b, "\n// set %d: entr%s", i, members == 1 ? "y" : "ies");
        for (int j = 0; j < x->n; j++)
            if (x->set[j] == i)
                sb_printf(b, " %d", j);
        sb_append(b, " of the table\n");
        if (codegen_wrapped(b, &x->e[x->first[i]].v, ns, x->extern_c ? entry : NULL, NULL, why, whylen) != 0)
            return -1;
        sb_append(b, LINE_MARK);
    }
    return 0;
}

/* For NVRTC only: the launcher's arguments must convert to each kernel's
 * parameters as in a call, and each constant must be a variable of each
 * copy. */
static void check_part(const xport *x, strbuf *b)
{
    const cfam *c = x->c;
    sb_printf(b, "#line 1 \"the arguments kforge_%s_launch passes\"\nnamespace kforge_%s_check {\n"
                 "template <typename T> struct id { typedef T type; };\n"
                 "template <typename... P> __device__ int accepts(void (*)(P...), typename id<P>::type...);\n",
              c->famname, c->famname);
    for (int i = 0; i < x->nsets; i++) {
        char k[2 * KF_NAME_MAX + 300];
        kernel_name(x, i, k, sizeof k);
        sb_printf(b, "typedef decltype(accepts(&%s", k);
        for (int a = 0; a < c->nargs; a++) /* unevaluated: a buffer's T *, a scalar's const T lvalue */
            sb_printf(b, c->args[a].scalar ? ", *(const %s *)0" : ", (%s *)0", c_type(c->args[a].dtype));
        sb_printf(b, ")) v%d;\n", i);
        for (int q = 0; q < c->nconsts; q++)
            sb_printf(b, "typedef char c%d_%d[sizeof(kforge_%s_v%d::%s)];\n", i, q, c->famname, i, c->consts[q].name);
    }
    sb_append(b, "}\n");
}

/* C text of e over kf_<name> (expr_c_text); -1 and why. */
static char *c_expr(const kf_expr *e, const char *what, char *why, size_t whylen)
{
    char err[512];
    char *t = expr_c_text(e, "kf_", err, sizeof err);
    if (!t)
        kf_err(why, whylen, "%s: %s", what, err);
    return t;
}

/* Whether text mentions the identifier kf_<name>. */
static bool mentions(const char *text, const char *name)
{
    char id[80];
    snprintf(id, sizeof id, "kf_%s", name);
    size_t n = strlen(id);
    for (const char *p = strstr(text, id); p; p = strstr(p + 1, id))
        if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
            !(isalnum((unsigned char)p[n]) || p[n] == '_'))
            return true;
    return false;
}

/* "//   <name><d><post> <text><tail>" with name and text made comment
 * text (export_comment_text); d < 0: none; the name padded to 9. */
static void comment_line(strbuf *b, const char *name, int d, const char *post, const char *text, const char *tail)
{
    strbuf n = {0};
    export_comment_text(&n, name);
    if (d >= 0)
        sb_printf(&n, "%d%s", d, post);
    sb_printf(b, "//   %-9s ", n.s ? n.s : "");
    export_comment_text(b, text);
    sb_append(b, tail);
    sb_append(b, "\n");
    sb_free(&n);
}

/* The launcher (host code): the set tuned for the nearest shape, its
 * launch from the config's expressions.  -1 and why where an expression
 * has no C form. */
static int launcher(xport *x, strbuf *b, char *why, size_t whylen)
{
    const cfam *c = x->c;
    const kf_family *f = &c->fam;
    const char *N = c->famname;
    int rc = -1;
    strbuf body = {0}, sig = {0};
    char *g[3] = {NULL, NULL, NULL}, *bl[3] = {NULL, NULL, NULL}, *sm = NULL, *val[MAX_ARGS] = {NULL},
         *len[KF_MAX_CONSTANTS] = {NULL};
    for (int d = 0; d < 3; d++) {
        char what[16];
        snprintf(what, sizeof what, "grid[%d]", d);
        if (c->grid[d] && !(g[d] = c_expr(c->grid[d], what, why, whylen)))
            goto out;
        snprintf(what, sizeof what, "block[%d]", d);
        if (c->block[d] && !(bl[d] = c_expr(c->block[d], what, why, whylen)))
            goto out;
    }
    if (c->smem && !(sm = c_expr(c->smem, "smem", why, whylen)))
        goto out;
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].scalar && !(val[a] = c_expr(c->args[a].value, c->args[a].name, why, whylen)))
            goto out;
    for (int k = 0; k < c->nconsts; k++)
        if (!(len[k] = c_expr(c->consts[k].length, c->consts[k].name, why, whylen)))
            goto out;

    /* the declaration */
    sb_printf(&sig, "cudaError_t kforge_%s_launch(", N);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&sig, "long long %s, ", f->sizes[d].name);
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar)
            sb_printf(&sig, "%s%s *%s, ", c->args[a].role == KF_ROLE_IN ? "const " : "", c_type(c->args[a].dtype),
                      x->bufname[a]);
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&sig, "const %s *%s, ", c_type(c->consts[k].dtype), x->cname[k]);
    sb_append(&sig, "cudaStream_t stream)");

    /* the body: the values kforge's expressions give, in double */
    sb_append(&body, "    if (");
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&body, "%s%s < 1", d ? " || " : "", f->sizes[d].name);
    for (int a = 0; a < c->nargs; a++)
        if (!c->args[a].scalar)
            sb_printf(&body, " || !%s", x->bufname[a]);
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&body, " || !%s", x->cname[k]);
    sb_printf(&body, ")\n        return cudaErrorInvalidValue;\n    const kforge_%s_params *kfl_t = kforge_%s_lookup(",
              N, N);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&body, "%s%s", d ? ", " : "", f->sizes[d].name);
    sb_append(&body, ");\n");
    strbuf all = {0}; /* every expression's text: which names it uses */
    for (int d = 0; d < 3; d++)
        sb_printf(&all, "%s %s ", g[d] ? g[d] : "", bl[d] ? bl[d] : "");
    sb_printf(&all, "%s ", sm ? sm : "");
    for (int a = 0; a < c->nargs; a++)
        sb_printf(&all, "%s ", val[a] ? val[a] : "");
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&all, "%s ", len[k]);
    const char *used = all.s ? all.s : "";
    for (int d = 0; d < f->nsizes; d++)
        if (mentions(used, f->sizes[d].name))
            sb_printf(&body, "    const double kf_%s = (double)%s;\n", f->sizes[d].name, f->sizes[d].name);
    for (int i = 0; i < f->nparams; i++)
        if (mentions(used, f->params[i].name))
            sb_printf(&body, "    const double kf_%s = (double)kfl_t->%s;\n", f->params[i].name, f->params[i].name);
    sb_free(&all);
    sb_append(&body, "    const double kfl_grid[3] = {");
    for (int d = 0; d < 3; d++)
        sb_printf(&body, d ? ", %s%s%s" : "%s%s%s", g[d] ? "floor(" : "", g[d] ? g[d] : "1.0", g[d] ? ")" : "");
    sb_append(&body, "};\n    const double kfl_block[3] = {");
    for (int d = 0; d < 3; d++)
        sb_printf(&body, d ? ", %s%s%s" : "%s%s%s", bl[d] ? "floor(" : "", bl[d] ? bl[d] : "1.0", bl[d] ? ")" : "");
    sb_append(&body, "};\n");
    if (sm)
        sb_printf(&body, "    const double kfl_smem = floor(%s);\n", sm);
    sb_append(&body, "    for (int kfl_d = 0; kfl_d < 3; kfl_d++)\n"
                     "        if (!(kfl_grid[kfl_d] >= 1 && kfl_grid[kfl_d] <= 2147483647.0) ||\n"
                     "            !(kfl_block[kfl_d] >= 1 && kfl_block[kfl_d] <= 1048576.0))\n"
                     "            return cudaErrorInvalidValue;\n");
    if (sm) /* NaN too; below 0 is none, as kforge has it */
        sb_append(&body, "    if (!(kfl_smem <= 1073741824.0))\n        return cudaErrorInvalidValue;\n");
    sb_append(&body, "    const dim3 kfl_g((unsigned)kfl_grid[0], (unsigned)kfl_grid[1], (unsigned)kfl_grid[2]);\n"
                     "    const dim3 kfl_b((unsigned)kfl_block[0], (unsigned)kfl_block[1], (unsigned)kfl_block[2]);\n");
    sb_append(&body, sm ? "    const size_t kfl_shared = kfl_smem > 0 ? (size_t)kfl_smem : 0;\n"
                        : "    const size_t kfl_shared = 0;\n");
    for (int a = 0; a < c->nargs; a++) {
        const carg *q = &c->args[a];
        if (!q->scalar)
            continue;
        /* a value kforge takes (check_shape: finite, at most 9e15), stored as enqueue stores it */
        sb_printf(&body, "    const double kfl_v%d = %s; /* ", a, val[a]);
        export_comment_text(&body, q->name);
        sb_printf(&body, " */\n    if (!(fabs(kfl_v%d) <= 9.0e15))\n        return cudaErrorInvalidValue;\n", a);
        const char *T = c_type(q->dtype);
        switch (q->dtype) {
        case KF_UINT32: case KF_UINT8:
            sb_printf(&body, "    const %s kfl_arg%d = (%s)(long long)kfl_v%d;\n", T, a, T, a);
            break;
        case KF_FLOAT64: sb_printf(&body, "    const %s kfl_arg%d = kfl_v%d;\n", T, a, a); break;
        case KF_FLOAT16: sb_printf(&body, "    const %s kfl_arg%d = __float2half_rn((float)kfl_v%d);\n", T, a, a); break;
        case KF_BFLOAT16:
            sb_printf(&body, "    const %s kfl_arg%d = __float2bfloat16_rn((float)kfl_v%d);\n", T, a, a);
            break;
        default: sb_printf(&body, "    const %s kfl_arg%d = (%s)kfl_v%d;\n", T, a, T, a); break;
        }
    }
    for (int k = 0; k < c->nconsts; k++)
        sb_printf(&body, "    const double kfl_len%d = floor(%s); /* %s's elements */\n"
                         "    if (!(kfl_len%d >= 1 && kfl_len%d <= 1073741824.0))\n        return cudaErrorInvalidValue;\n",
                  k, len[k], c->consts[k].name, k, k);
    if (sm || c->nconsts)
        sb_append(&body, "    cudaError_t kfl_e = cudaSuccess;\n");
    sb_printf(&body, "    switch (kfl_t - kforge_%s_tuned) {\n", N);
    for (int i = 0; i < x->nsets; i++) {
        char kn[2 * KF_NAME_MAX + 300];
        kernel_name(x, i, kn, sizeof kn);
        for (int j = 0; j < x->n; j++)
            if (x->set[j] == i) {
                char st[128];
                shape_text(f, &x->e[j].shape, st, sizeof st);
                sb_printf(&body, "    case %d: /* %s */\n", j, st);
            }
        if (sm)
            sb_printf(&body, "        if (kfl_shared > 48 * 1024 &&\n            (kfl_e = cudaFuncSetAttribute(%s, "
                             "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kfl_shared)) != cudaSuccess)\n"
                             "            return kfl_e;\n", kn);
        for (int k = 0; k < c->nconsts; k++)
            sb_printf(&body, "        if ((kfl_e = cudaMemcpyToSymbolAsync(kforge_%s_v%d::%s, %s, (size_t)kfl_len%d * "
                             "sizeof(%s), 0,\n                                             cudaMemcpyHostToDevice, "
                             "stream)) != cudaSuccess)\n            return kfl_e;\n",
                      N, i, c->consts[k].name, x->cname[k], k, c_type(c->consts[k].dtype));
        sb_printf(&body, "        %s<<<kfl_g, kfl_b, kfl_shared, stream>>>(", kn);
        for (int a = 0; a < c->nargs; a++) {
            const carg *q = &c->args[a];
            if (q->scalar)
                sb_printf(&body, "%skfl_arg%d", a ? ", " : "", a);
            else if (q->role == KF_ROLE_IN) /* a T * passes to a kernel's T * or const T * */
                sb_printf(&body, "%sconst_cast<%s *>(%s)", a ? ", " : "", c_type(q->dtype), x->bufname[a]);
            else
                sb_printf(&body, "%s%s", a ? ", " : "", x->bufname[a]);
        }
        sb_append(&body, ");\n        break;\n");
    }
    sb_append(&body, "    default:\n        return cudaErrorInvalidValue;\n    }\n    return cudaGetLastError();\n");

    /* the comment: what it launches, then the function */
    sb_printf(b, "// kforge_%s_launch: the kernel tuned for the nearest shape (kforge_%s_lookup), launched\n"
                 "// on stream as the config says, every value worked out in double as kforge does (grid,\n"
                 "// block and shared memory rounded down, scalars converted to their dtype):\n", N, N);
    /* the expressions as written (newlines are whitespace in them) and the
     * args' names (any string) through export_comment_text */
    for (int d = 0; d < 3; d++)
        if (c->grid[d])
            comment_line(b, "grid[", d, "]", expr_source_text(c->grid[d]), "");
    for (int d = 0; d < 3; d++)
        if (c->block[d])
            comment_line(b, "block[", d, "]", expr_source_text(c->block[d]), "");
    if (c->smem)
        comment_line(b, "smem", -1, "", expr_source_text(c->smem), " bytes (opted in above 48 KiB)");
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a].scalar) {
            char t[40];
            snprintf(t, sizeof t, " (%s)", kf_dtype_names[c->args[a].dtype]);
            comment_line(b, c->args[a].name, -1, "", expr_source_text(c->args[a].value), t);
        }
    for (int k = 0; k < c->nconsts; k++) {
        char t[96];
        snprintf(t, sizeof t, " %s elements copied from the host first", kf_dtype_names[c->consts[k].dtype]);
        sb_printf(b, "//   %-9s __constant__, ", c->consts[k].name); /* a C identifier (spec.c) */
        export_comment_text(b, expr_source_text(c->consts[k].length));
        sb_printf(b, "%s\n", t);
    }
    sb_append(b, "// cudaErrorInvalidValue for a size below 1, a null pointer or a launch the expressions do\n"
                 "// not give (not finite, out of range); else the first error of the shared memory\n"
                 "// attribute, of the constants' copies, or cudaGetLastError() after the launch.\n");
    sb_printf(b, "static inline %s\n{\n%s}\n", sig.s, body.s);
    if (!b->failed && !body.failed && !sig.failed) {
        x->sig = sig;
        sig = (strbuf){0};
        rc = 0;
    } else {
        kf_err(why, whylen, "out of memory");
    }
out:
    for (int d = 0; d < 3; d++)
        free(g[d]), free(bl[d]);
    free(sm);
    for (int a = 0; a < MAX_ARGS; a++)
        free(val[a]);
    for (int k = 0; k < KF_MAX_CONSTANTS; k++)
        free(len[k]);
    sb_free(&body);
    sb_free(&sig);
    return rc;
}

/* The CUDA part of the header into cuda (the kernel per set and the
 * launcher), compiled by NVRTC (but the launcher) for the tuned GPU; -1 and
 * why (one line) where the launcher has to be left out. */
static int cuda_part(xport *x, const kf_export_info *info, strbuf *cuda, char *why, size_t whylen)
{
    const cfam *c = x->c;
    int rc = -1;
    strbuf dev = {0}, host = {0}, chk = {0};
    char *numbered = NULL, *log = NULL;
    for (int a = 0; a < c->nargs; a++) {
        char fb[24];
        snprintf(fb, sizeof fb, "arg%d", a);
        if (!c->args[a].scalar)
            param_name(x, c->args[a].name, fb, x->bufname[a], sizeof x->bufname[a]);
    }
    for (int k = 0; k < c->nconsts; k++) {
        char fb[24];
        snprintf(fb, sizeof fb, "constant%d", k);
        param_name(x, c->consts[k].name, fb, x->cname[k], sizeof x->cname[k]);
    }
    if (info->cc_major < 1) {
        kf_err(why, whylen, "the tuned GPU's architecture is not known (compute capability %d.%d)", info->cc_major,
               info->cc_minor);
        goto out;
    }
    rtc_options o = {.lineinfo = false};
    snprintf(o.arch, sizeof o.arch, "sm_%d%d", info->cc_major, info->cc_minor);
    if (entry_linkage(x, &o, why, whylen) != 0)
        goto out;
    if (launcher(x, &host, why, whylen) != 0)
        goto out;
    if (device_part(x, &dev, why, whylen) != 0)
        goto out;
    sb_append(&chk, dev.s);
    check_part(x, &chk);
    char name[KF_NAME_MAX + 32], prog[PATH_MAX + KF_NAME_MAX + 32], err[256];
    snprintf(name, sizeof name, "kforge_%s_export.cu", c->famname);
    /* to NVRTC a file of the source's folder: the quoted includes of the
     * source are found there, from any directory (deps.h) */
    snprintf(prog, sizeof prog, "%s%s%s", c->include_dir, c->include_dir[0] ? "/" : "", name);
    if (chk.failed || !(numbered = number_lines(chk.s, name))) {
        kf_err(why, whylen, "out of memory");
        goto out;
    }
    void *cubin = NULL;
    size_t cubin_len = 0;
    if (rtc_compile(numbered, prog, &o, &cubin, &cubin_len, &log, err, sizeof err) != 0) {
        char first[512];
        first_error(log, err, first, sizeof first);
        if (strncmp(first, "the arguments ", 14) == 0) /* check_part's */
            kf_err(why, whylen, "the launcher's arguments (the config's dtypes) do not match the kernel's "
                                "parameters (NVRTC, %s): %s", o.arch, first);
        else
            kf_err(why, whylen, "the source does not compile once per tuned parameter set (%d) in one translation "
                                "unit (NVRTC, %s): %s", x->nsets, o.arch, first);
        goto out;
    }
    free(cubin);
    sb_printf(cuda, "\n#ifdef __CUDACC__\n// ---------------------------------------------------------------------------\n"
                    "// The kernel, once per distinct tuned parameter set (%d), each in a namespace of its own:\n"
                    "// its parameters #defined, then the source as kforge compiled it, then every macro\n"
                    "// they define #undef'd%s.\n\n",
              x->nsets, x->extern_c ? "; the extern \"C\" entry renamed kforge_<name>_v<i>_<entry>" : "");
    sb_append(cuda, dev.s);
    sb_append(cuda, "\n#ifndef __CUDACC_RTC__\n// ---------------------------------------------------------------------------\n"
                    "// The launcher (host code)\n\n#include <cuda_runtime.h>\n\n");
    sb_append(cuda, host.s);
    sb_append(cuda, "#endif /* __CUDACC_RTC__ */\n#endif /* __CUDACC__ */\n\n");
    rc = cuda->failed ? -1 : 0;
    if (rc != 0)
        kf_err(why, whylen, "out of memory");
out:
    free(log);
    free(numbered);
    sb_free(&dev);
    sb_free(&host);
    sb_free(&chk);
    return rc;
}

/* kforge export of a custom kernel: the tuned parameters per shape and the
 * lookup that picks the entry for the nearest shape, as kforge best does
 * (family.h: shape_log_distance, shape_nearer), in a C/C++ header; under
 * CUDA, the kernel once per tuned parameter set and the launcher, unless
 * the source cannot be compiled so (then info->note says why). */
char *custom_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen)
{
    if (n < 1) {
        kf_err(err, errlen, "nothing to export");
        return NULL;
    }
    const cfam *c = cf_of(&e[0].v);
    const kf_family *f = &c->fam;
    xport *x = calloc(1, sizeof *x);
    int *sets = calloc(2 * (size_t)n, sizeof *sets);
    if (!x || !sets) {
        free(x);
        free(sets);
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    x->set = sets;
    x->first = sets + n;
    x->c = c;
    x->e = e;
    x->n = n;
    find_sets(x);
    const char *base = info->path ? strrchr(info->path, '/') : NULL;
    base = base ? base + 1 : info->path;
    bool clean = base && *base;
    for (const char *p = base; clean && *p; p++)
        clean = (unsigned char)*p >= 32 && *p != '"' && *p != '\\';
    snprintf(x->file, sizeof x->file, "%s", clean ? base : "kforge export");
    strbuf cuda = {0};
    char why[768] = "";
    bool launch = cuda_part(x, info, &cuda, why, sizeof why) == 0;
    if (!launch && info->note)
        snprintf(info->note, info->notelen, "the launcher is left out, the header holds the parameter table and "
                 "lookup alone: %s", why);

    strbuf b = {0};
    char up[KF_NAME_MAX];
    size_t k = 0;
    for (const char *p = c->famname; *p && k + 1 < sizeof up; p++)
        up[k++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    up[k] = '\0';
    sb_printf(&b, "// kforge " KF_VERSION " export: the tuned parameters of the custom kernel \"%s\"\n", c->famname);
    /* every string from the config, the database (a results file merged
     * into it) or the command line goes through export_comment_text */
    sb_append(&b, "//   source ");
    export_comment_text(&b, c->source_path);
    sb_append(&b, ", entry ");
    export_comment_text(&b, c->entry);
    sb_append(&b, "\n//   tuned on ");
    export_comment_text(&b, info->device ? info->device : "an unknown GPU");
    sb_printf(&b, " (cc %d.%d, %d SMs)%s\n//   by: ", info->cc_major, info->cc_minor, info->sms,
              info->deterministic_only ? ", deterministic variants only" : "");
    export_comment_text(&b, info->command ? info->command : "");
    sb_append(&b, "\n//   date: ");
    export_comment_text(&b, info->date ? info->date : "");
    sb_append(&b, "\n");
    sb_printf(&b, "//\n// kforge_%s_tuned is the parameter table, one entry per tuned shape.  _lookup gives the\n"
                  "// entry tuned for the nearest shape (the smallest sum of |ln tuned - ln asked| over the\n"
                  "// sizes; ties go to the larger shape, then the faster entry), as `kforge best` answers.\n",
              c->famname);

    if (launch) {
        sb_printf(&b, "//\n// Compiled as CUDA (nvcc), the header also holds the kernel, compiled once per distinct\n"
                      "// parameter set (%d, namespaces kforge_%s_v0 ...), and a launcher that runs the set tuned\n"
                      "// for the nearest shape with the config's grid, block and shared memory:\n//\n//   ",
                  x->nsets, c->famname);
        export_comment_text(&b, x->sig.s);
        sb_append(&b, "\n//\n// It defines your kernel: include it in one .cu file of a program (NVRTC compiles the\n"
                      "// kernels and skips the host part).\n");
    } else {
        sb_append(&b, "//\n// The kernel and a launcher are not in this header: kforge export left them out, as\n//   ");
        export_comment_text(&b, why);
        sb_append(&b, "\n// Compile the source with each entry's values as #defines, as kforge did, and launch it\n"
                      "// with the config's grid, block and shared memory.\n");
    }
    sb_append(&b, "//\n");
    if (export_range_comment(&b, e, n, f->nsizes == 1 ? f->sizes[0].name : NULL) != 0) {
        sb_free(&b);
        sb_free(&cuda);
        sb_free(&x->sig);
        free(sets);
        free(x);
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    sb_printf(&b, "#ifndef KFORGE_CUSTOM_%s_H\n#define KFORGE_CUSTOM_%s_H\n\n#include <math.h>\n\n", up, up);
    sb_printf(&b, "typedef struct {\n");
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "    long long %s;\n", f->sizes[d].name);
    for (int i = 0; i < f->nparams; i++)
        sb_printf(&b, "    long long %s;\n", f->params[i].name);
    sb_printf(&b, "    double median_ms; /* measured at this shape */\n    int deterministic;\n} kforge_%s_params;\n\n",
              c->famname);
    sb_printf(&b, "static const kforge_%s_params kforge_%s_tuned[%d] = {\n", c->famname, c->famname, n);
    for (int j = 0; j < n; j++) {
        sb_append(&b, "    {");
        for (int d = 0; d < f->nsizes; d++)
            sb_printf(&b, "%lldLL, ", (long long)e[j].shape.d[d]);
        for (int i = 0; i < f->nparams; i++)
            sb_printf(&b, "%lldLL, ", (long long)e[j].v.p[i]);
        sb_printf(&b, "%.17g, %d},\n", e[j].median_ms, e[j].deterministic ? 1 : 0);
    }
    sb_append(&b, "};\n\n");
    sb_printf(&b, "static inline const kforge_%s_params *kforge_%s_lookup(", c->famname, c->famname);
    if (info->api)
        sb_printf(info->api, "kforge_%s_lookup", c->famname);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "%slong long %s", d ? ", " : "", f->sizes[d].name);
    sb_printf(&b, ")\n{\n    const kforge_%s_params *pick = 0;\n    double pick_dist = 0, pick_size = 0;\n", c->famname);
    sb_printf(&b, "    for (int i = 0; i < %d; i++) {\n        const kforge_%s_params *t = &kforge_%s_tuned[i];\n"
                  "        double dist = 0, size = 0;\n", n, c->famname, c->famname);
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&b, "        dist += fabs(log((double)t->%s) - log((double)%s));\n        size += log((double)t->%s);\n",
                  f->sizes[d].name, f->sizes[d].name, f->sizes[d].name);
    sb_append(&b, "        int nearer = !pick || (fabs(dist - pick_dist) > 1e-9   ? dist < pick_dist\n"
                  "                               : fabs(size - pick_size) > 1e-9 ? size > pick_size\n"
                  "                                                               : t->median_ms < pick->median_ms);\n"
                  "        if (nearer) {\n            pick = t;\n            pick_dist = dist;\n            pick_size = size;\n"
                  "        }\n    }\n    return pick;\n}\n");
    if (launch)
        sb_append(&b, cuda.s);
    else
        sb_append(&b, "\n");
    sb_printf(&b, "#endif /* KFORGE_CUSTOM_%s_H */\n", up);
    char *text = b.failed || cuda.failed ? NULL : number_lines(b.s, x->file);
    if (!text)
        kf_err(err, errlen, "out of memory");
    sb_free(&b);
    sb_free(&cuda);
    sb_free(&x->sig);
    free(sets);
    free(x);
    return text;
}
