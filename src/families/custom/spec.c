/*
 * spec.c -- the `custom` family maker's first job: a family made from the
 * config's "custom" object (custom.c's comment shows one).  Every key is
 * checked, unknown ones refused with a suggestion; params become INT axes,
 * sizes the family's sizes, args and constants their buffers, scalars and
 * module variables (fills, .npy files, tolerances), and every expression
 * is parsed against the family before it is registered.  A reference
 * kernel of its own becomes the companion family (make_reference).  Every
 * message names its field, "custom.args[2] (b).dtype: ...".
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "custom_internal.h"
#include "expr.h"
#include "family.h"
#include "util.h"

/* The element types a custom buffer or scalar may have: every kf_dtype.
 * bfloat16 and float16 values are made as doubles, rounded to float and then
 * to the 2-byte type (to nearest even), and compared as floats. */
#define CUSTOM_DTYPES KF_DTYPE_COUNT
#define DTYPE_LIST "int32, uint32, int64, float32, float64, bfloat16, float16, int8, uint8"
#define MAX_VALUES 4096

static const char *const fill_names[] = {"random", "zeros", "ones", "iota", "constant"};

typedef struct {
    char *err;
    size_t errlen;
} mk;

static int bad(mk *m, const char *field, const char *fmt, ...) KF_PRINTF(3, 4);
static int bad(mk *m, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kf_err(m->err, m->errlen, "custom%s%s: %s", field[0] ? "." : "", field, msg);
    return -1;
}

static void given(const cJSON *j, char *buf, size_t len)
{
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    snprintf(buf, len, "%s", t ? t : "nothing");
    if (strlen(buf) > 60)
        snprintf(buf + 57, len - 57, "...");
    free(t);
}

bool custom_ident(const char *s)
{
    if (!s[0] || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return strlen(s) < 64;
}

static int check_keys(mk *m, const char *field, const cJSON *o, const char *const *keys, int n)
{
    for (const cJSON *k = o->child; k; k = k->next) {
        bool ok = false;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(k->string, keys[i]) == 0;
        if (!ok) {
            const char *sug = kf_suggest(k->string, keys, n);
            strbuf b = {0};
            for (int i = 0; i < n; i++)
                sb_printf(&b, "%s%s", i ? ", " : "", keys[i]);
            int rc = bad(m, field, "unknown key \"%s\"%s%s%s (known: %s)", k->string,
                         sug ? " (did you mean \"" : "", sug ? sug : "", sug ? "\"?)" : "", b.s ? b.s : "");
            sb_free(&b);
            return rc;
        }
    }
    return 0;
}

static int get_integer(mk *m, const char *field, const cJSON *j, int64_t lo, int64_t hi, int64_t *out)
{
    char g[80];
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) || j->valuedouble < (double)lo ||
        j->valuedouble > (double)hi) {
        given(j, g, sizeof g);
        return bad(m, field, "expected an integer %lld..%lld, got %s", (long long)lo, (long long)hi, g);
    }
    *out = (int64_t)j->valuedouble;
    return 0;
}

/* obj's key, the name of an element type, into *out (an arg's "dtype" or
 * "scalar", a constant's "dtype"); the message names field.key. */
static int get_dtype(mk *m, const char *field, const cJSON *obj, const char *key, kf_dtype *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    char f[160], g[80];
    snprintf(f, sizeof f, "%s.%s", field, key);
    int t = cJSON_IsString(j) ? kf_lookup(kf_dtype_names, CUSTOM_DTYPES, j->valuestring) : -1;
    if (t < 0) {
        given(j, g, sizeof g);
        return bad(m, f, "expected a dtype (" DTYPE_LIST "), got %s", g);
    }
    *out = (kf_dtype)t;
    return 0;
}

/* An expression: a string or a number, parsed against the family; its
 * text (malloc'd) in *keep unless keep is NULL. */
static int get_expr_keep(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out, char **keep)
{
    char text[1024], g[80];
    if (cJSON_IsString(j))
        snprintf(text, sizeof text, "%s", j->valuestring);
    else if (cJSON_IsNumber(j))
        snprintf(text, sizeof text, "%.17g", j->valuedouble);
    else {
        given(j, g, sizeof g);
        return bad(m, field, "expected an expression over params and sizes (a string or a number), got %s", g);
    }
    char err[512];
    if (!(*out = expr_parse_for(text, &c->fam, err, sizeof err)))
        return bad(m, field, "%s", err);
    if (keep && !(*keep = strdup(text)))
        return bad(m, field, "out of memory");
    return 0;
}

static int get_expr(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out)
{
    return get_expr_keep(m, c, field, j, out, NULL);
}

static int parse_params(mk *m, cfam *c, const cJSON *j)
{
    if (!cJSON_IsObject(j) || !j->child)
        return bad(m, "params", "expected an object of tunable parameters, e.g. {\"block_size_x\": [64, 128, 256]}");
    int n = 0;
    for (const cJSON *p = j->child; p; p = p->next, n++) {
        char f[160];
        snprintf(f, sizeof f, "params.%s", p->string);
        if (n == KF_MAX_PARAMS)
            return bad(m, "params", "at most %d parameters", KF_MAX_PARAMS);
        if (!custom_ident(p->string))
            return bad(m, f, "a parameter's name must be a C identifier (it is #defined)");
        int64_t *vals = malloc(sizeof *vals * MAX_VALUES);
        if (!vals)
            return bad(m, f, "out of memory");
        c->values[n] = vals;
        int nv = 0;
        if (cJSON_IsArray(p)) {
            int i = 0;
            for (const cJSON *x = p->child; x; x = x->next, i++) {
                char fi[200];
                snprintf(fi, sizeof fi, "%s[%d]", f, i);
                if (nv == MAX_VALUES)
                    return bad(m, f, "at most %d values", MAX_VALUES);
                if (get_integer(m, fi, x, -(1LL << 40), 1LL << 40, &vals[nv]) != 0)
                    return -1;
                for (int k = 0; k < nv; k++)
                    if (vals[k] == vals[nv])
                        return bad(m, fi, "%lld is listed twice", (long long)vals[nv]);
                nv++;
            }
        } else if (cJSON_IsObject(p) && cJSON_GetObjectItemCaseSensitive(p, "range")) {
            static const char *const keys[] = {"range", "step"};
            if (check_keys(m, f, p, keys, 2) != 0)
                return -1;
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "range"), *st = cJSON_GetObjectItemCaseSensitive(p, "step");
            int64_t lo, hi, step = 1;
            char fr[200];
            snprintf(fr, sizeof fr, "%s.range", f);
            if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2)
                return bad(m, fr, "expected [first, last]");
            if (get_integer(m, fr, r->child, -(1LL << 40), 1LL << 40, &lo) != 0 ||
                get_integer(m, fr, r->child->next, lo, lo + MAX_VALUES * (1LL << 20), &hi) != 0)
                return -1;
            char fs[200];
            snprintf(fs, sizeof fs, "%s.step", f);
            if (st && get_integer(m, fs, st, 1, 1LL << 40, &step) != 0)
                return -1;
            for (int64_t x = lo; x <= hi; x += step) {
                if (nv == MAX_VALUES)
                    return bad(m, f, "at most %d values", MAX_VALUES);
                vals[nv++] = x;
            }
        } else {
            char g[80];
            given(p, g, sizeof g);
            return bad(m, f, "expected a list of integers or {\"range\": [first, last]}, got %s", g);
        }
        if (nv == 0)
            return bad(m, f, "expected at least one value");
        c->nvalues[n] = nv;
        /* the listed values are the space; --set and "variants" may give
         * any integer of the range a value may have */
        strbuf al = {0};
        sb_append(&al, "an integer -2^40..2^40 (listed: ");
        for (int k = 0; k < nv && k < 12; k++)
            sb_printf(&al, "%s%lld", k ? ", " : "", (long long)vals[k]);
        if (nv > 12)
            sb_printf(&al, ", ... (%d values)", nv);
        sb_append(&al, ")");
        c->pnames[n] = strdup(p->string);
        c->pallowed[n] = sb_take(&al);
        if (!c->pnames[n] || !c->pallowed[n])
            return bad(m, f, "out of memory");
        c->params[n] = (kf_param){.name = c->pnames[n], .kind = KF_PK_INT, .lo = -(1LL << 40), .hi = 1LL << 40,
                                  .def = vals[0],
                                  .allowed = c->pallowed[n], .macro = c->pnames[n], .doc = "a tunable parameter "
                                  "of the user's kernel (#defined before its source)", .sweep = vals, .nsweep = nv};
    }
    c->fam.nparams = n;
    return 0;
}

static int parse_sizes(mk *m, cfam *c, const cJSON *j)
{
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > KF_MAX_DIMS)
        return bad(m, "sizes", "expected a list of 1..%d size names, e.g. [\"n\"] or [\"width\", \"height\"]",
                   KF_MAX_DIMS);
    int n = 0;
    for (const cJSON *s = j->child; s; s = s->next, n++) {
        char f[32];
        snprintf(f, sizeof f, "sizes[%d]", n);
        if (!cJSON_IsString(s) || !custom_ident(s->valuestring))
            return bad(m, f, "expected a size name (a C identifier)");
        if (param_find(c->params, c->fam.nparams, s->valuestring) >= 0 ||
            param_find(c->sizes, n, s->valuestring) >= 0)
            return bad(m, f, "\"%s\" is already a parameter or size", s->valuestring);
        if (!(c->snames[n] = strdup(s->valuestring)))
            return bad(m, f, "out of memory");
        c->sizes[n] = (kf_param){.name = c->snames[n], .kind = KF_PK_INT, .lo = 1, .hi = 1LL << 34,
                                 .pow2_strings = true, .allowed = "an integer 1..2^34", .doc = "a problem size"};
    }
    c->fam.nsizes = n;
    return 0;
}

/* The header of a .npy file, as NumPy writes it: a Python dict literal
 * with exactly the keys 'descr' (a quoted string), 'fortran_order' (False:
 * C order) and 'shape' (a tuple of integers >= 0), in any order, then
 * spaces and one '\n' that end the header.  *elems: the shape's product
 * (1 for the shape ()), at most 2^36.  0, or -1 and why. */
#define NPY_MAX_ELEMS ((int64_t)1 << 36)

static void npy_blank(const char **p, const char *end)
{
    while (*p < end && **p == ' ')
        (*p)++;
}

static bool npy_lit(const char **p, const char *end, const char *s)
{
    npy_blank(p, end);
    size_t n = strlen(s);
    if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
        return false;
    *p += n;
    return true;
}

/* A quoted string (no escapes: none of the keys or descrs has one). */
static bool npy_str(const char **p, const char *end, char *out, size_t len)
{
    npy_blank(p, end);
    if (*p >= end || (**p != '\'' && **p != '"'))
        return false;
    char q = *(*p)++;
    const char *s = *p;
    /* printable ASCII only: every string NumPy writes there is, and no
     * control character (a terminal's escape, a NUL) reaches a message */
    while (*p < end && **p != q && **p != '\\' && (unsigned char)**p >= 32 && (unsigned char)**p < 127)
        (*p)++;
    if (*p >= end || **p != q || (size_t)(*p - s) >= len)
        return false;
    memcpy(out, s, (size_t)(*p - s));
    out[*p - s] = '\0';
    (*p)++;
    return true;
}

static int npy_header(const char *h, size_t hl, char *descr, size_t dlen, int64_t *elems, char *why, size_t whylen)
{
    const char *p = h, *end = h + hl;
    bool seen[3] = {false, false, false};
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    if (hl == 0 || h[hl - 1] != '\n') {
        kf_err(why, whylen, "its header does not end in a newline (NumPy pads it with spaces and ends it with '\\n')");
        return -1;
    }
    end--; /* the '\n' */
    if (!npy_lit(&p, end, "{")) {
        kf_err(why, whylen, "its header is not a Python dict ({'descr': ..., 'fortran_order': False, 'shape': (...)})");
        return -1;
    }
    *elems = 1;
    for (;;) {
        if (npy_lit(&p, end, "}"))
            break;
        char key[32];
        if (!npy_str(&p, end, key, sizeof key) || !npy_lit(&p, end, ":")) {
            kf_err(why, whylen, "its header is not a dict of quoted keys ('descr', 'fortran_order', 'shape')");
            return -1;
        }
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]) != 0)
            k++;
        if (k == 3 || seen[k]) {
            kf_err(why, whylen, "its header has %s key '%.31s' (expected 'descr', 'fortran_order' and 'shape' once each)",
                   k == 3 ? "an unknown" : "a second", key);
            return -1;
        }
        seen[k] = true;
        if (k == 0 && !npy_str(&p, end, descr, dlen)) {
            kf_err(why, whylen, "its 'descr' is not a quoted type such as '<f4'");
            return -1;
        }
        if (k == 1 && !npy_lit(&p, end, "False")) {
            kf_err(why, whylen, "its 'fortran_order' is not False (C order is expected: np.ascontiguousarray)");
            return -1;
        }
        if (k == 2) {
            if (!npy_lit(&p, end, "(")) {
                kf_err(why, whylen, "its 'shape' is not a tuple of integers");
                return -1;
            }
            for (int dims = 0;; dims++) {
                if (npy_lit(&p, end, ")"))
                    break;
                npy_blank(&p, end);
                if (p < end && *p == '-') {
                    kf_err(why, whylen, "its 'shape' has a negative dimension");
                    return -1;
                }
                if (p >= end || *p < '0' || *p > '9') {
                    kf_err(why, whylen, "its 'shape' is not a tuple of integers");
                    return -1;
                }
                int64_t d = 0;
                for (; p < end && *p >= '0' && *p <= '9'; p++) {
                    d = d * 10 + (*p - '0');
                    if (d > NPY_MAX_ELEMS) {
                        kf_err(why, whylen, "its 'shape' has a dimension over 2^36");
                        return -1;
                    }
                }
                /* both at most 2^36: the product fits in 72 bits, checked before it is made */
                if (d != 0 && *elems > NPY_MAX_ELEMS / d) {
                    kf_err(why, whylen, "its 'shape' holds more than 2^36 elements");
                    return -1;
                }
                *elems *= d;
                if (!npy_lit(&p, end, ",") && !(npy_blank(&p, end), p < end && *p == ')')) {
                    kf_err(why, whylen, "its 'shape' is not a tuple of integers");
                    return -1;
                }
            }
        }
        if (!npy_lit(&p, end, ",") && !(npy_blank(&p, end), p < end && *p == '}')) {
            kf_err(why, whylen, "its header is not a Python dict (a ',' or '}' expected after '%s')", key);
            return -1;
        }
    }
    for (int k = 0; k < 3; k++)
        if (!seen[k]) {
            kf_err(why, whylen, "its header has no '%s'", keys[k]);
            return -1;
        }
    npy_blank(&p, end);
    if (p != end) {
        kf_err(why, whylen, "its header has more after the dict than the spaces that pad it");
        return -1;
    }
    return 0;
}

/* The environment variable that lets a config name files outside its
 * folder (an absolute path, .., a symbolic link out of it).  Not a key of
 * the config: a config handed over by someone else must not be able to
 * allow itself to read anywhere. */
#define ALLOW_OUTSIDE "KFORGE_ALLOW_OUTSIDE_FILES"

/* Whether s is valid UTF-8 (what NVRTC takes as a file name). */
static bool utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 && *p >= 0xC2 ? 1 : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 && *p <= 0xF4 ? 3 : -1;
        if (n < 0)
            return false;
        p++;
        for (int k = 0; k < n; k++, p++)
            if ((*p & 0xC0) != 0x80)
                return false;
    }
    return true;
}

/* The extensions of a CUDA or C++ source file. */
static bool source_name(const char *name)
{
    static const char *const ext[] = {".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c", ".inl"};
    const char *dot = strrchr(name, '.');
    if (!dot || strchr(dot, '/'))
        return false;
    return kf_lookup(ext, (int)(sizeof ext / sizeof ext[0]), dot) >= 0;
}

/* A file the config names at field (its source, a reference source, a
 * .npy file: source says which), name relative to the config's folder:
 * refused unless it is a regular file that lies in that folder or below
 * it (no absolute path, no .. component, no symbolic link that leads out
 * of it) -- unless KFORGE_ALLOW_OUTSIDE_FILES=1 -- and, for a source, is
 * named as a CUDA or C++ file (.cu, .cuh, .h, ...): a compile error quotes
 * the source's lines, so what is not one is never compiled.  0, or -1 and
 * why. */
static int check_file(mk *m, const cfam *c, const char *field, const char *name, bool source, const char *what)
{
    const char *allow = getenv(ALLOW_OUTSIDE);
    bool anywhere = allow && strcmp(allow, "1") == 0;
    const char *dir = c->config_dir[0] ? c->config_dir : ".";
    if (!utf8(name))
        return bad(m, field, "the file name is not valid UTF-8 (NVRTC takes UTF-8 names; it goes into a #line "
                             "directive): rename the file");
    if (source && !source_name(name))
        return bad(m, field, "\"%s\" is not named as a CUDA source: expected a .cu, .cuh, .h, .hpp, .hh, .hxx, .cpp, "
                             ".cc, .cxx, .c or .inl file", name);
    if (!anywhere) {
        bool up = false;
        for (const char *p = name; *p && !up; p += strcspn(p, "/"), p += *p == '/')
            up = strncmp(p, "..", 2) == 0 && (p[2] == '/' || !p[2]);
        if (name[0] == '/' || up)
            return bad(m, field, "\"%s\" is %s: files a config names lie in its folder (%s) or below it; set "
                                 ALLOW_OUTSIDE "=1 to allow others", name, up ? "a path with a .. component"
                                                                              : "an absolute path", dir);
    }
    char path[PATH_MAX + 256], real[PATH_MAX], base[PATH_MAX];
    if (name[0] == '/' || !c->config_dir[0])
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    struct stat st;
    if (!realpath(path, real) || stat(real, &st) != 0)
        return bad(m, field, "cannot read %s: %s: %s", what, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return bad(m, field, "%s is not a regular file", path);
    if (!anywhere) {
        if (!realpath(dir, base))
            return bad(m, field, "cannot resolve the config's folder %s: %s", dir, strerror(errno));
        size_t bl = strlen(base);
        bool inside = strncmp(real, base, bl) == 0 && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
        if (!inside)
            return bad(m, field, "%s leads (through a symbolic link) to %s, outside the config's folder (%s); set "
                                 ALLOW_OUTSIDE "=1 to allow it", path, real, base);
    }
    return 0;
}

/* A source's text at field (path checked by check_file): NULL and why
 * unless it is text (no NUL byte). */
static char *read_source(mk *m, const char *field, const char *path, const char *what)
{
    char rerr[512];
    size_t len;
    char *t = kf_read_file_max(path, 16u << 20, &len, rerr, sizeof rerr);
    if (!t) {
        bad(m, field, "cannot read %s: %s", what, rerr);
        return NULL;
    }
    if (memchr(t, '\0', len)) {
        bad(m, field, "%s is not a text file (it holds a NUL byte at offset %zu)", path,
            (size_t)((char *)memchr(t, '\0', len) - t));
        free(t);
        return NULL;
    }
    return t;
}

/* A .npy file (NumPy's format, version 1 to 3): little-endian, C order,
 * of the element type want ('<i4' int32, '<u4' uint32, '<i8' int64, '<f4'
 * float32, '<f8' float64, '<f2' float16; bfloat16, which NumPy lacks, as
 * its bits: '<u2' (x.view(np.uint16)) or 2-byte void '|V2' / '<V2', what
 * np.save writes for ml_dtypes.bfloat16); any shape, read as its elements
 * in order.  path relative to the config's folder.  A regular file only
 * (not /dev/zero, not a pipe), whose header (checked in full: the keys, a
 * shape of integers >= 0, the padding that aligns the data to 16 bytes)
 * agrees with its size before any data is read; the read stops at SIGINT
 * or SIGTERM.  0 and the data, or -1 and why. */
static int npy_load(const cfam *c, const char *name, kf_dtype want, void **data, int64_t *elems, char *why,
                    size_t whylen)
{
    static const char *const descr[KF_DTYPE_COUNT][3] = {
        [KF_INT32] = {"<i4"}, [KF_UINT32] = {"<u4"}, [KF_INT64] = {"<i8"}, [KF_FLOAT32] = {"<f4"},
        [KF_FLOAT64] = {"<f8"}, [KF_BFLOAT16] = {"<u2", "|V2", "<V2"}, [KF_FLOAT16] = {"<f2"},
        [KF_INT8] = {"|i1", "<i1"}, [KF_UINT8] = {"|u1", "<u1"}};
    char path[PATH_MAX + 256];
    if (name[0] == '/' || !c->config_dir[0])
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        kf_err(why, whylen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    unsigned char *x = NULL;
    char *head = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        kf_err(why, whylen, "%s is not a regular file (a .npy file is expected, from np.save)", path);
        goto out;
    }
    unsigned char pre[12];
    size_t off = 0, hl = 0;
    ssize_t got = pread(fd, pre, sizeof pre, 0);
    if (got >= 10 && memcmp(pre, "\x93NUMPY", 6) == 0 && pre[6] == 1)
        hl = (size_t)pre[8] | (size_t)pre[9] << 8, off = 10;
    else if (got >= 12 && memcmp(pre, "\x93NUMPY", 6) == 0 && (pre[6] == 2 || pre[6] == 3))
        hl = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24, off = 12;
    if (!off || hl > ((size_t)1 << 20) || (off_t)(off + hl) > st.st_size) {
        kf_err(why, whylen, "%s is not a .npy file (NumPy's format: \\x93NUMPY, version 1 to 3, a header of at "
                            "most 1 MiB)", path);
        goto out;
    }
    if ((off + hl) % 16 != 0) {
        kf_err(why, whylen, "%s: its header is not padded: the data must start at a multiple of 16 bytes (np.save "
                            "pads to 64), it starts at %zu", path, off + hl);
        goto out;
    }
    head = malloc(hl + 1);
    if (!head || pread(fd, head, hl, (off_t)off) != (ssize_t)hl) {
        kf_err(why, whylen, "cannot read %s: %s", path, head ? "short read" : "out of memory");
        goto out;
    }
    head[hl] = '\0';
    char d[32], herr[200];
    int64_t n = 0;
    if (npy_header(head, hl, d, sizeof d, &n, herr, sizeof herr) != 0) {
        kf_err(why, whylen, "%s: not a .npy file NumPy wrote: %s", path, herr);
        goto out;
    }
    bool known = false;
    for (int k = 0; k < 3 && descr[want][k] && !known; k++)
        known = strcmp(d, descr[want][k]) == 0;
    if (!known) {
        kf_err(why, whylen, "%s holds '%.8s' elements, the buffer is %s ('%s'%s)", path, d, kf_dtype_names[want],
               descr[want][0], want == KF_BFLOAT16 ? ", its bits as uint16, or '|V2'" : "");
        goto out;
    }
    size_t es = kf_dtype_size(want);
    uint64_t bytes = (uint64_t)n * es; /* n <= 2^36, es <= 8: no overflow */
    uint64_t have = (uint64_t)st.st_size - (off + hl);
    if (n < 1) {
        kf_err(why, whylen, "%s: its shape gives no elements (a buffer needs at least one)", path);
        goto out;
    }
    if (bytes != have) {
        kf_err(why, whylen, "%s: its shape gives %lld elements (%llu bytes), its data holds %llu bytes", path,
               (long long)n, (unsigned long long)bytes, (unsigned long long)have);
        goto out;
    }
    if (bytes > ((uint64_t)1 << 34) || bytes > SIZE_MAX) {
        kf_err(why, whylen, "%s: %llu bytes of data, more than the 16 GiB limit", path, (unsigned long long)bytes);
        goto out;
    }
    x = malloc((size_t)bytes);
    if (!x) {
        kf_err(why, whylen, "%s: out of memory for %llu bytes", path, (unsigned long long)bytes);
        goto out;
    }
    /* a regular file's read is never interrupted by a signal: in pieces,
     * looking between them */
    for (uint64_t at = 0; at < bytes;) {
        if (kf_interrupted) {
            kf_err(why, whylen, "%s: interrupted", path);
            goto out;
        }
        size_t piece = bytes - at < ((uint64_t)16 << 20) ? (size_t)(bytes - at) : (size_t)16 << 20;
        ssize_t r = pread(fd, x + at, piece, (off_t)(off + hl + at));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            kf_err(why, whylen, "cannot read %s: %s", path, r < 0 ? strerror(errno) : "it became shorter");
            goto out;
        }
        at += (uint64_t)r;
    }
    *data = x;
    *elems = n;
    x = NULL;
    rc = 0;
out:
    free(x);
    free(head);
    close(fd);
    return rc;
}

/* {"rtol": r, "atol": a} at field: each given one into *rtol, *atol. */
static int parse_tolerance(mk *m, const char *field, const cJSON *tol, double *rtol, double *atol)
{
    static const char *const tkeys[] = {"rtol", "atol"};
    char g[80], f[160];
    if (!cJSON_IsObject(tol)) {
        given(tol, g, sizeof g);
        return bad(m, field, "expected {\"rtol\": r, \"atol\": a} (|got - ref| <= atol + rtol |ref|), got %s", g);
    }
    if (check_keys(m, field, tol, tkeys, 2) != 0)
        return -1;
    double *out[2] = {rtol, atol};
    for (int k = 0; k < 2; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(tol, tkeys[k]);
        snprintf(f, sizeof f, "%s.%s", field, tkeys[k]);
        if (!x)
            continue;
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || !isfinite(x->valuedouble)) {
            given(x, g, sizeof g);
            return bad(m, f, "expected a number >= 0, got %s", g);
        }
        *out[k] = x->valuedouble;
    }
    return 0;
}

/* A constant or random fill's values (x->lo..x->hi) are values of x's
 * dtype: an integer type's integers within its range (int64: within
 * +-2^53, the integers a double holds exactly), a float type's finite
 * values within its largest (float16 65504), with a finite width.  0, or
 * -1 naming the range (an int32 range of +-1e300 made the GPU worker die
 * of SIGFPE; 1e10 or 3.5 reached an int32 buffer as whatever the cast gave). */
static int fill_range(mk *m, const char *fd, const carg *x, const char *g)
{
    double lo, hi;
    bool integer = !kf_dtype_is_float(x->dtype);
    switch (x->dtype) {
    case KF_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
    case KF_UINT32: lo = 0, hi = 4294967295.0; break;
    case KF_INT8: lo = -128.0, hi = 127.0; break;
    case KF_UINT8: lo = 0, hi = 255.0; break;
    case KF_INT64: lo = -0x1p53, hi = 0x1p53; break;
    case KF_FLOAT16: lo = -65504.0, hi = 65504.0; break;
    case KF_BFLOAT16: lo = -0x1.fep127, hi = 0x1.fep127; break;
    case KF_FLOAT32: lo = -0x1.fffffep127, hi = 0x1.fffffep127; break;
    default: lo = -DBL_MAX, hi = DBL_MAX; break;
    }
    const char *dt = kf_dtype_names[x->dtype];
    if (integer && (x->lo != floor(x->lo) || x->hi != floor(x->hi)))
        return bad(m, fd, "%s values are integers, got %s", dt, g);
    if (!(x->lo >= lo && x->hi <= hi && isfinite(x->hi - x->lo)))
        return bad(m, fd, integer ? "%s values for a fill lie in [%.0f, %.0f]%s, got %s"
                                  : "%s values for a fill lie in [%.9g, %.9g]%s, got %s", dt, lo, hi,
                   x->dtype == KF_INT64 ? " (the integers a double holds exactly)"
                   : integer ? "" : " (and a random range's width must be finite)", g);
    return 0;
}

/* A buffer's or a constant's "fill" (x's defaults set by the caller; fi
 * NULL keeps them); fd names the field in messages. */
static int parse_fill(mk *m, cfam *c, const char *fd, const cJSON *fi, carg *x)
{
    char g[80];
    static const char *const fill_allowed =
        "{\"random\": [lo, hi]}, \"zeros\", \"ones\", \"iota\", {\"constant\": x} or {\"npy\": \"file.npy\"}";
    if (!fi)
        return 0;
    given(fi, g, sizeof g);
    if (cJSON_IsString(fi)) {
        int k = kf_lookup(fill_names, 4, fi->valuestring);
        if (k < 1)
            return bad(m, fd, "expected %s, got %s", fill_allowed, g);
        x->fill = (fill_kind)k;
        return 0;
    }
    if (!cJSON_IsObject(fi) || cJSON_GetArraySize(fi) != 1)
        return bad(m, fd, "expected %s, got %s", fill_allowed, g);
    const cJSON *k = fi->child;
    if (strcmp(k->string, "npy") == 0 && cJSON_IsString(k)) {
        char why[PATH_MAX + 512];
        if (check_file(m, c, fd, k->valuestring, false, "the .npy file") != 0)
            return -1;
        if (npy_load(c, k->valuestring, x->dtype, &x->npy, &x->npy_elems, why, sizeof why) != 0)
            return bad(m, fd, "%s", why);
        x->fill = FILL_NPY;
        return 0;
    }
    /* a byte buffer's values must fit its type */
    double blo = x->dtype == KF_INT8 ? INT8_MIN : 0, bhi = x->dtype == KF_INT8 ? INT8_MAX : UINT8_MAX;
    bool bytes = x->dtype == KF_INT8 || x->dtype == KF_UINT8;
    if (strcmp(k->string, "constant") == 0 && cJSON_IsNumber(k)) {
        x->fill = FILL_CONSTANT;
        x->lo = x->hi = k->valuedouble;
        if (bytes && (x->lo < blo || x->lo > bhi || x->lo != floor(x->lo)))
            return bad(m, fd, "a buffer of %s takes a constant that is an integer %g..%g, got %s", kf_dtype_names[x->dtype],
                       blo, bhi, g);
        return fill_range(m, fd, x, g);
    }
    if (strcmp(k->string, "random") == 0 && cJSON_IsArray(k) && cJSON_GetArraySize(k) == 2 &&
        cJSON_IsNumber(k->child) && cJSON_IsNumber(k->child->next) &&
        k->child->valuedouble <= k->child->next->valuedouble) {
        x->fill = FILL_RANDOM;
        x->lo = k->child->valuedouble;
        x->hi = k->child->next->valuedouble;
        if (!kf_dtype_is_float(x->dtype) && (x->lo != floor(x->lo) || x->hi != floor(x->hi)))
            return bad(m, fd, "an integer buffer's random range needs integer bounds, got %s", g);
        if (bytes && (x->lo < blo || x->hi > bhi))
            return bad(m, fd, "a buffer of %s takes a random range within %g..%g, got %s", kf_dtype_names[x->dtype], blo,
                       bhi, g);
        return fill_range(m, fd, x, g);
    }
    return bad(m, fd, "expected %s, got %s", fill_allowed, g);
}

static int parse_arg(mk *m, cfam *c, int a, const cJSON *j)
{
    char f[64], g[80];
    snprintf(f, sizeof f, "args[%d]", a);
    carg *x = &c->args[a];
    if (!cJSON_IsObject(j))
        return bad(m, f, "expected a buffer {\"name\", \"dtype\", \"length\", \"role\", \"fill\"} or a scalar "
                         "{\"name\", \"scalar\", \"value\"}");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof x->name ||
        kf_has_control(name->valuestring)) {
        given(name, g, sizeof g);
        return bad(m, f, "expected a \"name\": a string of 1 to %zu bytes of UTF-8 text without control characters "
                         "(a newline, a tab, an escape), e.g. \"a\", got %s", sizeof x->name - 1, g);
    }
    snprintf(x->name, sizeof x->name, "%s", name->valuestring);
    snprintf(f, sizeof f, "args[%d] (%s)", a, x->name);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scalar");
    char fd[96];
    if (sc) {
        static const char *const keys[] = {"name", "scalar", "value"};
        if (check_keys(m, f, j, keys, 3) != 0)
            return -1;
        x->scalar = true;
        if (get_dtype(m, f, j, "scalar", &x->dtype) != 0)
            return -1;
        const cJSON *val = cJSON_GetObjectItemCaseSensitive(j, "value");
        snprintf(fd, sizeof fd, "%s.value", f);
        if (!val)
            return bad(m, fd, "missing: a scalar needs a value (an expression, e.g. \"n\")");
        return get_expr_keep(m, c, fd, val, &x->value, &x->value_text);
    }
    static const char *const keys[] = {"name", "dtype", "length", "role", "fill", "tolerance", "check"};
    if (check_keys(m, f, j, keys, 7) != 0)
        return -1;
    if (c->nbufs == KF_MAX_BUFFERS)
        return bad(m, f, "at most %d buffers", KF_MAX_BUFFERS);
    x->buf = c->nbufs++;
    if (get_dtype(m, f, j, "dtype", &x->dtype) != 0)
        return -1;
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(j, "role");
    snprintf(fd, sizeof fd, "%s.role", f);
    int r = cJSON_IsString(ro) ? kf_lookup(kf_role_names, KF_ROLE_SCRATCH, ro->valuestring) : -1;
    if (r < 0) {
        given(ro, g, sizeof g);
        return bad(m, fd, "expected a role (in, out or inout), got %s", g);
    }
    x->role = (kf_role)r;
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(j, "length");
    snprintf(fd, sizeof fd, "%s.length", f);
    if (!len)
        return bad(m, fd, "missing: a buffer needs a length in elements (an expression, e.g. \"n\")");
    if (get_expr_keep(m, c, fd, len, &x->length, &x->length_text) != 0)
        return -1;
    /* its own tolerance, key by key; the config-wide one fills the rest (make) */
    x->rtol = x->atol = NAN;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(j, "tolerance");
    snprintf(fd, sizeof fd, "%s.tolerance", f);
    if (tol && x->role == KF_ROLE_IN)
        return bad(m, fd, "only an out or inout buffer is compared: an input takes no tolerance");
    if (tol && !kf_dtype_is_float(x->dtype))
        return bad(m, fd, "a %s buffer is compared exactly: only a float buffer takes a tolerance",
                   kf_dtype_names[x->dtype]);
    if (tol && parse_tolerance(m, fd, tol, &x->rtol, &x->atol) != 0)
        return -1;
    const cJSON *fi = cJSON_GetObjectItemCaseSensitive(j, "fill");
    snprintf(fd, sizeof fd, "%s.fill", f);
    x->fill = x->role == KF_ROLE_OUT ? FILL_ZEROS : FILL_RANDOM;
    x->lo = kf_dtype_is_float(x->dtype) ? -1 : x->dtype == KF_UINT8 ? 0 : -100;
    x->hi = kf_dtype_is_float(x->dtype) ? 1 : 100;
    if (parse_fill(m, c, fd, fi, x) != 0)
        return -1;
    /* "check": false, Kernel Tuner's None in answer: an output that is
     * written but never compared (the engine's scratch: its fill laid down,
     * nothing checked) */
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(j, "check");
    snprintf(fd, sizeof fd, "%s.check", f);
    if (ck && !cJSON_IsBool(ck)) {
        given(ck, g, sizeof g);
        return bad(m, fd, "expected true or false, got %s", g);
    }
    if (cJSON_IsFalse(ck)) {
        if (x->role == KF_ROLE_IN)
            return bad(m, fd, "only an out or inout buffer is compared: \"check\": false is for outputs");
        if (tol)
            return bad(m, fd, "an output that is not compared takes no tolerance");
        x->role = KF_ROLE_SCRATCH;
    }
    return 0;
}

/* One of "constants": {"name", "dtype", "length", "fill"}, a variable of
 * the module (a __constant__ array) the engine fills before any launch. */
static int parse_constant(mk *m, cfam *c, int k, const cJSON *j)
{
    char f[96], fd[128], g[80];
    snprintf(f, sizeof f, "constants[%d]", k);
    carg *x = &c->consts[k];
    if (!cJSON_IsObject(j))
        return bad(m, f, "expected {\"name\", \"dtype\", \"length\", \"fill\"}: a __constant__ variable of the source "
                         "and its contents");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(name) || !custom_ident(name->valuestring)) {
        given(name, g, sizeof g);
        return bad(m, f, "expected a \"name\": the variable's name in the source, a C identifier (e.g. \"d_filter\"), "
                         "got %s", g);
    }
    snprintf(x->name, sizeof x->name, "%s", name->valuestring);
    snprintf(f, sizeof f, "constants[%d] (%s)", k, x->name);
    static const char *const keys[] = {"name", "dtype", "length", "fill"};
    if (check_keys(m, f, j, keys, 4) != 0)
        return -1;
    for (int q = 0; q < k; q++)
        if (strcmp(c->consts[q].name, x->name) == 0)
            return bad(m, f, "\"%s\" is already constants[%d]", x->name, q);
    if (param_find(c->params, c->fam.nparams, x->name) >= 0)
        return bad(m, f, "\"%s\" is a parameter's name (#defined before the source): the variable needs another",
                   x->name);
    x->role = KF_ROLE_IN;
    if (get_dtype(m, f, j, "dtype", &x->dtype) != 0)
        return -1;
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(j, "length");
    snprintf(fd, sizeof fd, "%s.length", f);
    if (!len)
        return bad(m, fd, "missing: a constant needs a length in elements (an expression over sizes, e.g. \"17 * 17\")");
    if (get_expr(m, c, fd, len, &x->length) != 0)
        return -1;
    if (expr_uses_params(x->length))
        return bad(m, fd, "a constant's length may use sizes only, not params (the reference and every candidate read "
                          "the same constants)");
    snprintf(fd, sizeof fd, "%s.fill", f);
    x->fill = FILL_RANDOM;
    x->lo = kf_dtype_is_float(x->dtype) ? -1 : x->dtype == KF_UINT8 ? 0 : -100;
    x->hi = kf_dtype_is_float(x->dtype) ? 1 : 100;
    return parse_fill(m, c, fd, cJSON_GetObjectItemCaseSensitive(j, "fill"), x);
}

static int parse_dims(mk *m, cfam *c, const char *field, const cJSON *j, kf_expr **out)
{
    if (cJSON_IsString(j) || cJSON_IsNumber(j))
        return get_expr(m, c, field, j, &out[0]);
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > 3)
        return bad(m, field, "expected 1 to 3 expressions (x, y, z)");
    int d = 0;
    for (const cJSON *x = j->child; x; x = x->next, d++) {
        char f[48];
        snprintf(f, sizeof f, "%s[%d]", field, d);
        if (get_expr(m, c, f, x, &out[d]) != 0)
            return -1;
    }
    return 0;
}

/* "grid", "block" and "smem" of the kernel (ref false: keys at the top of
 * the config) or of its reference kernel (keys under "reference"): the grid
 * over the sizes and params, the block (by default the params block_size_x,
 * _y, _z) and the dynamic shared memory over the params alone. */
static int parse_launch(mk *m, cfam *c, const cJSON *obj, bool ref)
{
    const char *pre = ref ? "reference." : "", *params = ref ? "reference.params" : "params";
    char fg[32], fb[32], fs[32], err[256];
    snprintf(fg, sizeof fg, "%sgrid", pre);
    snprintf(fb, sizeof fb, "%sblock", pre);
    snprintf(fs, sizeof fs, "%ssmem", pre);
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(obj, "grid");
    if (!grid && ref)
        return bad(m, fg, "missing: the reference kernel's grid in blocks, 1 to 3 expressions over the sizes and "
                          "reference.params");
    if (!grid)
        return bad(m, fg, "missing: the grid in blocks, 1 to 3 expressions, e.g. [\"(n + block_size_x - 1) / "
                          "block_size_x\"]");
    if (parse_dims(m, c, fg, grid, c->grid) != 0)
        return -1;
    const cJSON *block = cJSON_GetObjectItemCaseSensitive(obj, "block");
    if (block) {
        if (parse_dims(m, c, fb, block, c->block) != 0)
            return -1;
    } else {
        static const char *const bs[] = {"block_size_x", "block_size_y", "block_size_z"};
        for (int d = 0; d < 3; d++)
            if (param_find(c->params, c->fam.nparams, bs[d]) >= 0 &&
                !(c->block[d] = expr_parse_for(bs[d], &c->fam, err, sizeof err)))
                return bad(m, fb, "%s", err);
        if (!c->block[0])
            return bad(m, fb, "missing: give \"block\" or a %sparam block_size_x (block_size_y, block_size_z)",
                       ref ? "reference " : "");
    }
    for (int d = 0; d < 3; d++)
        if (c->block[d] && expr_uses_n(c->block[d]))
            return bad(m, fb, "the block may use %s only, not sizes%s", params,
                       ref ? "" : " (its occupancy is worked out once per variant)");
    const cJSON *smem = cJSON_GetObjectItemCaseSensitive(obj, "smem");
    if (smem && get_expr(m, c, fs, smem, &c->smem) != 0)
        return -1;
    if (c->smem && expr_uses_n(c->smem))
        return bad(m, fs, "dynamic shared memory may use %s only, not sizes", params);
    return 0;
}

void custom_cfam_free(cfam *c)
{
    if (!c)
        return;
    for (int i = 0; i < KF_MAX_PARAMS; i++)
        free(c->values[i]), free(c->pnames[i]), free(c->pallowed[i]);
    for (int i = 0; i < KF_MAX_DIMS; i++)
        free(c->snames[i]);
    for (int a = 0; a < MAX_ARGS; a++) {
        expr_free(c->args[a].length), expr_free(c->args[a].value), free(c->args[a].npy), free(c->args[a].expect);
        free(c->args[a].length_text), free(c->args[a].value_text);
    }
    for (int k = 0; k < KF_MAX_CONSTANTS; k++)
        expr_free(c->consts[k].length), free(c->consts[k].npy);
    custom_cfam_free(c->ref);
    for (int d = 0; d < 3; d++)
        expr_free(c->grid[d]), expr_free(c->block[d]);
    expr_free(c->smem);
    expr_free(c->bytes);
    expr_free(c->flops);
    for (int i = 0; i < c->ncons; i++)
        expr_free(c->cons[i]), free(c->cons_text[i]);
    custom_free_options(c);
    free(c->identity);
    free(c->spec_json);
    free(c->source_text);
    free(c);
}

#define ENTRY_EXPECTED                                                                                           \
    "a kernel's name as NVRTC takes it (a name expression): a C identifier, a qualified name or a template-id, "  \
    "e.g. \"vector_add\", \"ns::kernel\" or \"scale<float, 4>\" (template arguments: names, numbers, ::, *, &, " \
    "+, -, parentheses, commas and spaces)"

/* The entry: a name expression that names a kernel, name(<args>)?(::name(<args>)?)*,
 * the template arguments made of names, numbers, ::, *, &, +, -, parentheses,
 * commas, spaces and nested <...>; nothing else reaches the generated source
 * (its name-expression line) and an exported header (where it is called).
 * NULL, or what is wrong with it. */
static const char *entry_problem(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return "it is empty";
    if (n >= 256)
        return "it is 256 characters or more (at most 255)";
    const char *p = s;
    for (;;) {
        if (!(isalpha((unsigned char)*p) || *p == '_'))
            return *p == ':' && p == s ? "it starts with :: (give the name without it)"
                                       : "a name (a letter or _ first) is expected after :: and at the start";
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        if (*p == '<') { /* template arguments, nested <> and () balanced */
            int angle = 0, paren = 0;
            for (; *p; p++) {
                unsigned char ch = (unsigned char)*p;
                if (ch == '<')
                    angle++;
                else if (ch == '>' && paren == 0 && --angle == 0)
                    break;
                else if (ch == '(')
                    paren++;
                else if (ch == ')') {
                    if (--paren < 0)
                        return "a ) without its (";
                }
                else if (!(isalnum(ch) || ch == '_' || ch == ':' || ch == '*' || ch == '&' || ch == '+' ||
                           ch == '-' || ch == ',' || ch == ' ' || ch == '>'))
                    return ch < 32 || ch >= 127 ? "a control character or a non-ASCII byte"
                                                : "a character that is not part of a name expression";
            }
            if (*p != '>')
                return "a < without its >";
            p++;
        }
        if (!*p)
            return NULL;
        if (p[0] != ':' || p[1] != ':')
            return (unsigned char)*p < 32 || (unsigned char)*p >= 127 ? "a control character or a non-ASCII byte"
                                                                      : "a character that is not part of a name "
                                                                        "expression";
        p += 2;
    }
}

/* The entry at field (j: its JSON), into out (256 bytes): 0, or -1 and
 * what was expected. */
static int get_entry(mk *m, const char *field, const cJSON *j, char *out, size_t outlen)
{
    char g[80];
    given(j, g, sizeof g);
    if (!j)
        return bad(m, field, "missing: %s", ENTRY_EXPECTED);
    if (!cJSON_IsString(j))
        return bad(m, field, "expected %s, got %s", ENTRY_EXPECTED, g);
    const char *why = entry_problem(j->valuestring);
    if (why)
        return bad(m, field, "%s: expected %s, got %s", why, ENTRY_EXPECTED, g);
    snprintf(out, outlen, "%s", j->valuestring);
    return 0;
}

/* "reference": {"source": ..., "entry": ..., "params": {...}, "grid": [...],
 * "block": [...], "smem": ...}: the reference is a kernel of its own, made
 * the companion family of c: its source (default c's) with its params as
 * #defines (each one value), its entry (default c's), its launch over the
 * sizes and its params, and c's args, whose lengths and values are parsed
 * again against it.  0, or -1 and a message naming the field. */
static int make_reference(mk *m, cfam *c, const cJSON *ref, const char *config_path)
{
    cfam *r = calloc(1, sizeof *r);
    if (!r)
        return bad(m, "reference", "out of memory");
    c->ref = r;
    snprintf(r->config_dir, sizeof r->config_dir, "%s", c->config_dir);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(ref, "source");
    if (src) {
        if (!cJSON_IsString(src) || !src->valuestring[0])
            return bad(m, "reference.source", "expected the reference kernel's .cu file, relative to the config");
        for (const char *p = src->valuestring; *p; p++)
            if ((unsigned char)*p < 32 || *p == '"' || *p == '\\')
                return bad(m, "reference.source", "a file name without control characters, quotes or backslashes "
                                                  "(it goes into a #line directive)");
        const char *slash = strrchr(config_path, '/');
        if (src->valuestring[0] == '/' || !slash)
            snprintf(r->source_path, sizeof r->source_path, "%s", src->valuestring);
        else
            snprintf(r->source_path, sizeof r->source_path, "%.*s/%s", (int)(slash - config_path), config_path,
                     src->valuestring);
        if (check_file(m, c, "reference.source", src->valuestring, true, "the reference kernel's source") != 0 ||
            !(r->source_text = read_source(m, "reference.source", r->source_path, "the reference kernel's source")))
            return -1;
    } else {
        snprintf(r->source_path, sizeof r->source_path, "%s", c->source_path);
        if (!(r->source_text = strdup(c->source_text)))
            return bad(m, "reference", "out of memory");
    }
    const cJSON *entry = cJSON_GetObjectItemCaseSensitive(ref, "entry");
    if (entry) {
        if (get_entry(m, "reference.entry", entry, r->entry, sizeof r->entry) != 0)
            return -1;
    } else {
        snprintf(r->entry, sizeof r->entry, "%s", c->entry);
    }
    snprintf(r->famname, sizeof r->famname, "%.*s.reference", (int)(sizeof r->famname - 11), c->famname);
    r->entries[0] = r->entry;
    r->fam = c->fam;
    r->fam.name = r->famname;
    r->fam.doc = "the reference kernel of a user's kernel (kernel \"custom\", \"reference\" with a source or entry)";
    r->fam.params = r->params;
    r->fam.sizes = r->sizes;
    r->fam.entries = r->entries;
    r->fam.reference_variant = NULL;
    r->fam.export_source = NULL;
    r->fam.plant = NULL;
    r->fam.plant_check = NULL;
    r->fam.ext = r;
    /* its params: each one value, #defined before its source */
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(ref, "params");
    if (rp && !cJSON_IsObject(rp))
        return bad(m, "reference.params", "expected {\"NAME\": value, ...}: the reference kernel's own #defines");
    int n = 0;
    for (const cJSON *x = rp ? rp->child : NULL; x; x = x->next, n++) {
        char f[160];
        snprintf(f, sizeof f, "reference.params.%s", x->string);
        if (n == KF_MAX_PARAMS)
            return bad(m, "reference.params", "at most %d parameters", KF_MAX_PARAMS);
        if (!custom_ident(x->string))
            return bad(m, f, "a parameter's name must be a C identifier (it is #defined)");
        if (param_find(c->sizes, c->fam.nsizes, x->string) >= 0)
            return bad(m, f, "\"%s\" is a size: a reference param needs a name of its own", x->string);
        if (param_find(r->params, n, x->string) >= 0)
            return bad(m, f, "given twice");
        if (!(r->values[n] = malloc(sizeof *r->values[n])) || !(r->pnames[n] = strdup(x->string)))
            return bad(m, f, "out of memory");
        if (get_integer(m, f, x, -(1LL << 40), 1LL << 40, &r->values[n][0]) != 0)
            return -1;
        r->nvalues[n] = 1;
        char al[32];
        snprintf(al, sizeof al, "%lld", (long long)r->values[n][0]);
        if (!(r->pallowed[n] = strdup(al)))
            return bad(m, f, "out of memory");
        r->params[n] = (kf_param){.name = r->pnames[n], .kind = KF_PK_INT, .lo = r->values[n][0],
                                  .hi = r->values[n][0], .def = r->values[n][0], .allowed = r->pallowed[n],
                                  .macro = r->pnames[n], .doc = "a parameter of the reference kernel (#defined before "
                                  "its source)", .sweep = r->values[n], .nsweep = 1};
    }
    r->fam.nparams = n;
    for (int d = 0; d < c->fam.nsizes; d++) {
        if (!(r->snames[d] = strdup(c->sizes[d].name)))
            return bad(m, "reference", "out of memory");
        r->sizes[d] = c->sizes[d];
        r->sizes[d].name = r->snames[d];
    }
    /* the same args: lengths and values over the sizes and its params */
    r->nargs = c->nargs;
    r->nbufs = c->nbufs;
    for (int a = 0; a < c->nargs; a++) {
        const carg *g = &c->args[a];
        carg *x = &r->args[a];
        *x = (carg){.scalar = g->scalar, .dtype = g->dtype, .role = g->role, .buf = g->buf, .fill = g->fill,
                    .lo = g->lo, .hi = g->hi, .rtol = g->rtol, .atol = g->atol};
        snprintf(x->name, sizeof x->name, "%s", g->name);
        const char *text = g->scalar ? g->value_text : g->length_text;
        char err[512];
        kf_expr *e = text ? expr_parse_for(text, &r->fam, err, sizeof err) : NULL;
        if (!e)
            return bad(m, "reference", "args[%d] (%s).%s: %s (the reference kernel's expressions may use the sizes "
                                       "and reference.params only)", a, g->name, g->scalar ? "value" : "length",
                       text ? err : "out of memory");
        if (g->scalar)
            x->value = e;
        else
            x->length = e;
    }
    if (parse_launch(m, r, ref, true) != 0)
        return -1;
    r->deterministic = true;
    return 0;
}

static int make(mk *m, cfam *c, const cJSON *root, const char *config_path)
{
    static const char *const keys[] = {"source", "entry", "name", "params", "sizes", "args", "grid", "block",
                                       "smem", "reference", "tolerance", "bytes", "flops", "constraints",
                                       "deterministic", "constants", "compiler_options", "size_macros"};
    if (check_keys(m, "", root, keys, (int)(sizeof keys / sizeof keys[0])) != 0)
        return -1;
    /* source: relative to the config's folder */
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "source");
    if (!cJSON_IsString(src) || !src->valuestring[0])
        return bad(m, "source", "missing: the kernel's .cu file, relative to the config");
    for (const char *p = src->valuestring; *p; p++)
        if ((unsigned char)*p < 32 || *p == '"' || *p == '\\')
            return bad(m, "source", "a file name without control characters, quotes or backslashes (it goes into a "
                                    "#line directive)");
    const char *slash = strrchr(config_path, '/');
    if (slash)
        snprintf(c->config_dir, sizeof c->config_dir, "%.*s", (int)(slash - config_path), config_path);
    snprintf(c->config_name, sizeof c->config_name, "%s", slash ? slash + 1 : config_path);
    if (src->valuestring[0] == '/' || !slash)
        snprintf(c->source_path, sizeof c->source_path, "%s", src->valuestring);
    else
        snprintf(c->source_path, sizeof c->source_path, "%.*s/%s", (int)(slash - config_path), config_path,
                 src->valuestring);
    if (check_file(m, c, "source", src->valuestring, true, "the kernel's source") != 0 ||
        !(c->source_text = read_source(m, "source", c->source_path, "the kernel's source")))
        return -1;
    if (get_entry(m, "entry", cJSON_GetObjectItemCaseSensitive(root, "entry"), c->entry, sizeof c->entry) != 0)
        return -1;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (name) {
        if (!cJSON_IsString(name) || !custom_ident(name->valuestring))
            return bad(m, "name", "expected a family name (a C identifier: letters, digits, _)");
        snprintf(c->famname, sizeof c->famname, "%s", name->valuestring);
    } else {
        size_t k = 0;
        for (const char *p = c->entry; *p && k + 1 < sizeof c->famname; p++)
            c->famname[k++] = isalnum((unsigned char)*p) ? *p : '_';
        while (k > 0 && c->famname[k - 1] == '_')
            k--;
        c->famname[k] = '\0';
        if (!custom_ident(c->famname))
            return bad(m, "name", "the entry \"%s\" gives no family name: give one", c->entry);
    }
    custom_fam_init(c);
    if (parse_params(m, c, cJSON_GetObjectItemCaseSensitive(root, "params")) != 0)
        return -1;
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(root, "sizes");
    if (!sizes)
        return bad(m, "sizes", "missing: the problem's size names, e.g. [\"n\"] or [\"width\", \"height\"]");
    if (parse_sizes(m, c, sizes) != 0)
        return -1;
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(root, "args");
    if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) < 1)
        return bad(m, "args", "missing: the kernel's arguments in order (buffers and scalars)");
    if (cJSON_GetArraySize(args) > MAX_ARGS)
        return bad(m, "args", "at most %d arguments", MAX_ARGS);
    int a = 0;
    for (const cJSON *x = args->child; x; x = x->next, a++)
        if (parse_arg(m, c, a, x) != 0)
            return -1;
    c->nargs = a;
    if (custom_first_output(c) < 0)
        return bad(m, "args", "no buffer has the role out or inout: nothing could be checked");
    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(root, "constants");
    if (consts) {
        if (!cJSON_IsArray(consts) || cJSON_GetArraySize(consts) > KF_MAX_CONSTANTS)
            return bad(m, "constants", "expected a list of up to %d {\"name\", \"dtype\", \"length\", \"fill\"}: "
                                       "__constant__ variables of the source, filled before any launch",
                       KF_MAX_CONSTANTS);
        int k = 0;
        for (const cJSON *x = consts->child; x; x = x->next, k++) {
            if (parse_constant(m, c, k, x) != 0)
                return -1;
            c->nconsts = k + 1;
        }
    }
    if (parse_launch(m, c, root, false) != 0)
        return -1;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(root, "bytes");
    if (by && get_expr(m, c, "bytes", by, &c->bytes) != 0)
        return -1;
    const cJSON *fo = cJSON_GetObjectItemCaseSensitive(root, "flops");
    if (fo && get_expr(m, c, "flops", fo, &c->flops) != 0)
        return -1;
    if (!c->flops)
        c->fam.flops = NULL; /* no "flops": no GFLOP/s figure (null, not 0) */
    const cJSON *cons = cJSON_GetObjectItemCaseSensitive(root, "constraints");
    if (cons) {
        if (!cJSON_IsArray(cons) || cJSON_GetArraySize(cons) > MAX_CONSTRAINTS)
            return bad(m, "constraints", "expected a list of up to %d expressions", MAX_CONSTRAINTS);
        int i = 0;
        for (const cJSON *x = cons->child; x; x = x->next, i++) {
            char f[48];
            snprintf(f, sizeof f, "constraints[%d]", i);
            if (!cJSON_IsString(x))
                return bad(m, f, "expected an expression (a string)");
            if (get_expr(m, c, f, x, &c->cons[i]) != 0 || !(c->cons_text[i] = strdup(x->valuestring)))
                return -1;
            c->ncons = i + 1;
        }
        c->fam.constraints = c->cons;
        c->fam.nconstraints = c->ncons;
    }
    if (custom_parse_options(c, cJSON_GetObjectItemCaseSensitive(root, "compiler_options"), m->err, m->errlen) != 0)
        return -1;
    if (custom_parse_size_macros(c, cJSON_GetObjectItemCaseSensitive(root, "size_macros"), m->err, m->errlen) != 0)
        return -1;
    /* every expression once at the first value of every param: division by
     * zero and the like are config errors here (those with sizes are
     * checked per case) */
    for (int i = 0; i < c->fam.nparams; i++)
        c->refp[i] = c->values[i][0];
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "reference");
    c->ref_given = ref != NULL;
    const cJSON *expected = ref ? cJSON_GetObjectItemCaseSensitive(ref, "expected") : NULL;
    if (expected) {
        /* the answer as .npy files, one per output: no reference run */
        static const char *const ekeys[] = {"expected"};
        if (check_keys(m, "reference", ref, ekeys, 1) != 0)
            return -1;
        if (!cJSON_IsObject(expected))
            return bad(m, "reference.expected", "expected {\"OUTPUT\": \"file.npy\", ...}: every out and inout buffer");
        for (const cJSON *x = expected->child; x; x = x->next) {
            char f[160], why[PATH_MAX + 512];
            snprintf(f, sizeof f, "reference.expected.%s", x->string);
            carg *g = NULL;
            for (int q = 0; q < c->nargs && !g; q++)
                if (!c->args[q].scalar && strcmp(c->args[q].name, x->string) == 0)
                    g = &c->args[q];
            if (!g || !role_is_output(g->role))
                return bad(m, f, "not an out or inout buffer of \"args\" (one with \"check\": false is not compared)");
            if (!cJSON_IsString(x))
                return bad(m, f, "expected the name of a .npy file");
            if (check_file(m, c, f, x->valuestring, false, "the .npy file") != 0)
                return -1;
            if (npy_load(c, x->valuestring, g->dtype, &g->expect, &g->expect_elems, why, sizeof why) != 0)
                return bad(m, f, "%s", why);
        }
        for (int q = 0; q < c->nargs; q++)
            if (!c->args[q].scalar && role_is_output(c->args[q].role) && !c->args[q].expect)
                return bad(m, "reference.expected", "no file for output \"%s\": give every out and inout buffer's answer",
                           c->args[q].name);
        c->fam.reference_variant = NULL; /* the host reference: the files */
    } else if (ref) {
        static const char *const rkeys[] = {"params", "source", "entry", "grid", "block", "smem"};
        const int nrkeys = (int)(sizeof rkeys / sizeof rkeys[0]);
        const cJSON *rp = cJSON_GetObjectItemCaseSensitive(ref, "params");
        bool known = false;
        for (int k = 0; k < nrkeys && cJSON_IsObject(ref); k++)
            known = known || cJSON_GetObjectItemCaseSensitive(ref, rkeys[k]);
        if (!known) {
            char g[80];
            given(ref, g, sizeof g);
            return bad(m, "reference", "expected {\"params\": {...}}: a parameter set of the same source, "
                                       "{\"source\": \"naive.cu\", \"entry\": \"naive\", \"grid\": [...], ...}: "
                                       "a kernel of its own, or {\"expected\": {\"OUTPUT\": \"file.npy\"}}, got %s", g);
        }
        if (check_keys(m, "reference", ref, rkeys, nrkeys) != 0)
            return -1;
        bool own = cJSON_GetObjectItemCaseSensitive(ref, "source") || cJSON_GetObjectItemCaseSensitive(ref, "entry");
        for (int k = 3; k < nrkeys && !own; k++)
            if (cJSON_GetObjectItemCaseSensitive(ref, rkeys[k])) {
                char f[32];
                snprintf(f, sizeof f, "reference.%s", rkeys[k]);
                return bad(m, f, "a launch of its own goes with a kernel of its own: give the reference's \"source\" "
                                 "and/or \"entry\" (with \"params\" alone the reference is a parameter set of the "
                                 "same kernel, launched as the candidates are)");
            }
        if (own && make_reference(m, c, ref, config_path) != 0)
            return -1;
        if (!own && !cJSON_IsObject(rp))
            return bad(m, "reference.params", "expected {\"PARAM\": value, ...}: a parameter set of the same source");
        for (const cJSON *x = own ? NULL : rp->child; x; x = x->next) {
            char f[160];
            snprintf(f, sizeof f, "reference.params.%s", x->string);
            int i = param_find(c->params, c->fam.nparams, x->string);
            if (i < 0)
                return bad(m, f, "not a parameter of \"params\"");
            if (get_integer(m, f, x, -(1LL << 40), 1LL << 40, &c->refp[i]) != 0)
                return -1;
        }
    }
    c->rtol = 1e-5;
    c->atol = 1e-6;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (tol && parse_tolerance(m, "tolerance", tol, &c->rtol, &c->atol) != 0)
        return -1;
    for (int q = 0; q < c->nargs; q++) { /* a buffer's own tolerance overrides it key by key */
        carg *g = &c->args[q];
        g->rtol = isnan(g->rtol) ? c->rtol : g->rtol;
        g->atol = isnan(g->atol) ? c->atol : g->atol;
        if (c->ref)
            c->ref->args[q].rtol = g->rtol, c->ref->args[q].atol = g->atol;
    }
    if (c->ref)
        c->ref->rtol = c->rtol, c->ref->atol = c->atol;
    c->deterministic = true;
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(root, "deterministic");
    if (det) {
        if (!cJSON_IsBool(det))
            return bad(m, "deterministic", "expected true or false");
        c->deterministic = cJSON_IsTrue(det);
    }
    return 0;
}

/* Parameter-only expressions at the first listed values, once registered:
 * division by zero and the like are config errors at load time.  A
 * reference kernel of its own is looked at through the variant the
 * family's reference_variant gives. */
int custom_spec_probe(const cfam *c, char *err, size_t errlen)
{
    mk mm = {err, errlen}, *m = &mm;
    kf_variant v;
    variant_defaults(&v, c->index);
    int64_t x;
    char why[512];
    for (int d = 0; d < 3; d++) {
        char f[16];
        snprintf(f, sizeof f, "block[%d]", d);
        if (c->block[d] && custom_eval_int(c->block[d], &v, NULL, f, &x, why, sizeof why) != 0)
            return bad(m, "block", "%s", why);
    }
    if (c->smem && custom_eval_int(c->smem, &v, NULL, "smem", &x, why, sizeof why) != 0)
        return bad(m, "smem", "%s", why);
    kf_variant r = v;
    memcpy(r.p, c->refp, sizeof r.p);
    for (int d = 0; d < 3 && !c->ref; d++)
        if (c->block[d] && custom_eval_int(c->block[d], &r, NULL, "block (reference)", &x, why, sizeof why) != 0)
            return bad(m, "reference", "%s", why);
    if (c->ref) { /* a kernel of its own: its block and shared memory at its params */
        c->fam.reference_variant(&v, NULL, &r);
        for (int d = 0; d < 3; d++) {
            char f[24];
            snprintf(f, sizeof f, "reference.block[%d]", d);
            if (c->ref->block[d] && custom_eval_int(c->ref->block[d], &r, NULL, f, &x, why, sizeof why) != 0)
                return bad(m, "reference.block", "%s", why);
        }
        if (c->ref->smem && custom_eval_int(c->ref->smem, &r, NULL, "reference.smem", &x, why, sizeof why) != 0)
            return bad(m, "reference.smem", "%s", why);
    }
    return 0;
}

cfam *custom_spec_make(const char *spec_json, const char *config_path, char *err, size_t errlen)
{
    mk m = {err, errlen};
    cJSON *root = cJSON_Parse(spec_json);
    if (!root) {
        kf_err(err, errlen, "custom: not a JSON object");
        return NULL;
    }
    cfam *c = calloc(1, sizeof *c);
    if (!c) {
        kf_err(err, errlen, "custom: out of memory");
        goto out;
    }
    if (make(&m, c, root, config_path) != 0)
        goto out;
    strbuf id = {0};
    sb_printf(&id, "%s\n%s\n", c->source_path, spec_json);
    sb_append(&id, c->source_text);
    if (c->ref) { /* a reference kernel of its own: its source too */
        sb_printf(&id, "\n%s\n", c->ref->source_path);
        sb_append(&id, c->ref->source_text);
    }
    c->identity = sb_take(&id);
    c->spec_json = strdup(spec_json);
    if (!c->identity || !c->spec_json) {
        kf_err(err, errlen, "custom: out of memory");
        goto out;
    }
    cJSON_Delete(root);
    return c;
out:
    custom_cfam_free(c);
    cJSON_Delete(root);
    return NULL;
}

// ---------------------------------------------------------------------------
// The config that makes the family again (kforge best)

/* name, a file the config names (relative to config_dir, or absolute),
 * relative to the folder whose real path is dir_real: into *out (malloc'd).
 * 0, or -1 and why. */
static int file_relative(const cfam *c, const char *field, const char *name, const char *dir_real, char **out,
                         bool *outside, char *err, size_t errlen)
{
    char path[PATH_MAX + 256], real[PATH_MAX];
    if (name[0] == '/' || !c->config_dir[0])
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", c->config_dir, name);
    if (!realpath(path, real)) {
        kf_err(err, errlen, "custom.%s: cannot resolve %s: %s", field, path, strerror(errno));
        return -1;
    }
    /* the longest common folder of real and dir_real, component-wise */
    size_t common = 0;
    for (size_t i = 0; real[i] && real[i] == dir_real[i]; i++)
        if (real[i] == '/')
            common = i;
    size_t dl = strlen(dir_real);
    if (strncmp(real, dir_real, dl) == 0 && (real[dl] == '/' || dl == 1))
        common = dl == 1 ? 0 : dl;
    strbuf b = {0};
    for (const char *p = dir_real + common; *p; p++)
        if (*p == '/' && p[1]) {
            sb_append(&b, "../");
            *outside = true;
        }
    sb_append(&b, real + common + 1);
    if (b.failed || !b.s) {
        sb_free(&b);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    *out = sb_take(&b);
    return 0;
}

/* Replaces the string item it (a file name) by its name relative to dir. */
static int rebase(const cfam *c, const char *field, cJSON *parent, cJSON *it, const char *dir_real, bool *outside,
                  char *err, size_t errlen)
{
    if (!cJSON_IsString(it))
        return 0;
    char *rel = NULL;
    if (file_relative(c, field, it->valuestring, dir_real, &rel, outside, err, errlen) != 0)
        return -1;
    cJSON *n = cJSON_CreateString(rel);
    free(rel);
    if (!n || !cJSON_ReplaceItemInObjectCaseSensitive(parent, it->string, n)) {
        cJSON_Delete(n);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* Each arg's (or constant's) {"fill": {"npy": FILE}} in list. */
static int rebase_fills(const cfam *c, const char *field, cJSON *list, const char *dir_real, bool *outside, char *err,
                        size_t errlen)
{
    cJSON *x;
    cJSON_ArrayForEach(x, list)
    {
        cJSON *fill = cJSON_GetObjectItemCaseSensitive(x, "fill");
        cJSON *npy = cJSON_IsObject(fill) ? cJSON_GetObjectItemCaseSensitive(fill, "npy") : NULL;
        if (npy && rebase(c, field, fill, npy, dir_real, outside, err, errlen) != 0)
            return -1;
    }
    return 0;
}

char *custom_config_members(const kf_family *f, const char *dir, bool *outside, char *err, size_t errlen)
{
    const cfam *c = (const cfam *)f->ext;
    char dir_real[PATH_MAX];
    *outside = false;
    if (!realpath(dir && dir[0] ? dir : ".", dir_real)) {
        kf_err(err, errlen, "cannot resolve the folder %s: %s", dir && dir[0] ? dir : ".", strerror(errno));
        return NULL;
    }
    cJSON *root = cJSON_Parse(c->spec_json);
    if (!root) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    char *text = NULL;
    cJSON *ref = cJSON_GetObjectItemCaseSensitive(root, "reference");
    cJSON *expected = cJSON_IsObject(ref) ? cJSON_GetObjectItemCaseSensitive(ref, "expected") : NULL;
    if (rebase(c, "source", root, cJSON_GetObjectItemCaseSensitive(root, "source"), dir_real, outside, err,
               errlen) != 0 ||
        (cJSON_IsObject(ref) && rebase(c, "reference.source", ref, cJSON_GetObjectItemCaseSensitive(ref, "source"),
                                       dir_real, outside, err, errlen) != 0) ||
        rebase_fills(c, "args", cJSON_GetObjectItemCaseSensitive(root, "args"), dir_real, outside, err, errlen) != 0 ||
        rebase_fills(c, "constants", cJSON_GetObjectItemCaseSensitive(root, "constants"), dir_real, outside, err,
                     errlen) != 0)
        goto out;
    if (cJSON_IsObject(expected))
        for (cJSON *x = expected->child, *next; x; x = next) {
            next = x->next;
            if (rebase(c, "reference.expected", expected, x, dir_real, outside, err, errlen) != 0)
                goto out;
        }
    char *obj = cJSON_Print(root);
    if (!obj) {
        kf_err(err, errlen, "out of memory");
        goto out;
    }
    strbuf b = {0};
    sb_append(&b, "\"kernel\": \"custom\",\n  \"custom\": ");
    for (const char *p = obj; *p; p++) /* indented one level more, as the config's other members */
        if (*p == '\n')
            sb_append(&b, "\n  ");
        else if (*p == '\t') /* cJSON's indent and its tab after a key: no tab in a string is printed raw */
            sb_append(&b, p[-1] == ':' ? " " : "  ");
        else
            sb_appendn(&b, p, 1);
    free(obj);
    text = b.failed ? (sb_free(&b), NULL) : sb_take(&b);
    if (!text)
        kf_err(err, errlen, "out of memory");
out:
    cJSON_Delete(root);
    return text;
}
