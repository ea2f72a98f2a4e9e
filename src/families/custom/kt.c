/*
 * kt.c -- Kernel Tuner's conventions for a custom kernel (issue 37):
 * "compiler_options", NVRTC options for every variant or only where an
 * expression over the params holds, with a param's value substituted:
 *
 *   "compiler_options": ["-use_fast_math",
 *                        {"option": "-maxrregcount={maxreg}", "when": "maxreg > 0"},
 *                        {"option": "-ftz=true", "when": "ftz == 1"}]
 *
 * Each option reaches NVRTC through a directive line of the variant's
 * source (RTC_OPTION_DIRECTIVE, rtc.h), so the cubin cache, the compile
 * pool and `kforge gen` see them with no change of their own.  An option
 * is checked against the NVRTC options a user's kernel may take, with
 * every {param} substituted by a number (nothing else of the config
 * reaches the source): others are refused with the list.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "custom_internal.h"
#include "rtc.h"
#include "util.h"

/* The NVRTC options a user's kernel may give: a name alone, or a name and
 * "=" and a value of the class shown (N digits, B true/false, S a C++
 * standard). */
static const struct {
    const char *name;
    char value; /* 0: none; 'N' a register count, 1 to 255; 'B' true/false; 'S' c++11..c++20; 'D' a macro definition */
} allowed[] = {
    {"-use_fast_math", 0}, {"--use_fast_math", 0}, {"-lineinfo", 0}, {"--generate-line-info", 0},
    {"-extra-device-vectorization", 0}, {"--extra-device-vectorization", 0}, {"-restrict", 0}, {"--restrict", 0},
    {"-default-device", 0}, {"--device-as-default-execution-space", 0},
    {"-maxrregcount", 'N'}, {"--maxrregcount", 'N'}, {"-ftz", 'B'}, {"--ftz", 'B'}, {"-prec-div", 'B'},
    {"--prec-div", 'B'}, {"-prec-sqrt", 'B'}, {"--prec-sqrt", 'B'}, {"-fmad", 'B'}, {"--fmad", 'B'},
    {"-std", 'S'}, {"--std", 'S'}, {"-D", 'D'}, {"--define-macro", 'D'},
};

static const char *const allowed_text =
    "-use_fast_math, -lineinfo, -extra-device-vectorization, -restrict, -default-device, -maxrregcount=N (N: 1 "
    "to 255), "
    "-ftz=B, -prec-div=B, -prec-sqrt=B, -fmad=B (B: true or false), -std=c++11..c++20, -DNAME or -DNAME=VALUE "
    "(VALUE: letters, digits, _ . + -), each also with --";

static bool value_ok(char kind, const char *v)
{
    if (kind == 'N') { /* -maxrregcount: 1 to 255 registers (a thread has at most 255) */
        if (!*v || strlen(v) > 3)
            return false;
        for (const char *q = v; *q; q++)
            if (!isdigit((unsigned char)*q))
                return false;
        int x = atoi(v);
        return x >= 1 && x <= 255;
    }
    if (kind == 'B')
        return strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
    if (kind == 'S')
        return strcmp(v, "c++11") == 0 || strcmp(v, "c++14") == 0 || strcmp(v, "c++17") == 0 ||
               strcmp(v, "c++20") == 0;
    /* 'D': NAME or NAME=VALUE */
    if (!isalpha((unsigned char)*v) && *v != '_')
        return false;
    while (isalnum((unsigned char)*v) || *v == '_')
        v++;
    if (!*v)
        return true;
    if (*v++ != '=')
        return false;
    for (; *v; v++)
        if (!isalnum((unsigned char)*v) && !strchr("_.+-", *v))
            return false;
    return true;
}

/* Whether opt (substituted) is an option a user's kernel may give. */
static bool option_ok(const char *opt)
{
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        size_t n = strlen(allowed[i].name);
        if (strncmp(opt, allowed[i].name, n) != 0)
            continue;
        const char *rest = opt + n;
        if (!allowed[i].value && !*rest)
            return true;
        if (allowed[i].value == 'D' && strcmp(allowed[i].name, "-D") == 0)
            return value_ok('D', rest);
        if (allowed[i].value && *rest == '=' && value_ok(allowed[i].value, rest + 1))
            return true;
    }
    return false;
}

/* opt with every {param} replaced by its value in v (v NULL: by 0), into
 * out: 0, or -1 and why (an unknown name, a brace not closed, too long). */
static int substitute(const cfam *c, const char *opt, const kf_variant *v, char *out, size_t len, char *why,
                      size_t whylen)
{
    size_t o = 0;
    for (const char *p = opt; *p;) {
        if (*p != '{') {
            if (o + 1 >= len)
                goto long_;
            out[o++] = *p++;
            continue;
        }
        const char *e = strchr(p, '}');
        if (!e) {
            kf_err(why, whylen, "a '{' without its '}'");
            return -1;
        }
        int k = -1;
        for (int i = 0; i < c->fam.nparams && k < 0; i++)
            if (strlen(c->params[i].name) == (size_t)(e - p - 1) && strncmp(c->params[i].name, p + 1, (size_t)(e - p - 1)) == 0)
                k = i;
        if (k < 0) {
            kf_err(why, whylen, "{%.*s} is not a param", (int)(e - p - 1), p + 1);
            return -1;
        }
        int w = snprintf(out + o, len - o, "%lld", v ? (long long)v->p[k] : 0LL);
        if (w < 0 || (size_t)w >= len - o)
            goto long_;
        o += (size_t)w;
        p = e + 1;
    }
    out[o] = '\0';
    return 0;
long_:
    kf_err(why, whylen, "longer than %zu characters", len - 1);
    return -1;
}

/* Option i (with {param}s and no "when") checked at every value of the
 * params it reads (up to 2^16 combinations; beyond, and for an option with
 * a "when", which needs the family made, each variant is checked as the
 * space is made: custom_check_options): 0, or -1 and the first values that
 * give no option kforge passes to NVRTC. */
static int check_values(const cfam *c, int i, char *err, size_t errlen)
{
    int used[KF_MAX_PARAMS], nused = 0, at[KF_MAX_PARAMS] = {0};
    kf_variant v;
    memset(&v, 0, sizeof v);
    double combos = 1;
    for (int k = 0; k < c->fam.nparams; k++) {
        char brace[80];
        snprintf(brace, sizeof brace, "{%s}", c->params[k].name);
        if (!c->params[k].nsweep || !strstr(c->copt[i], brace))
            continue;
        used[nused++] = k;
        combos *= c->params[k].nsweep;
    }
    if (combos > 65536)
        return 0;
    for (;;) {
        for (int u = 0; u < nused; u++)
            v.p[used[u]] = c->params[used[u]].sweep[at[u]];
        char w[160], sub[CUSTOM_OPTION_MAX];
        if (substitute(c, c->copt[i], &v, sub, sizeof sub, w, sizeof w) != 0 || !option_ok(sub)) {
            strbuf b = {0};
            for (int u = 0; u < nused; u++)
                sb_printf(&b, "%s%s = %lld", u ? ", " : "", c->params[used[u]].name, (long long)v.p[used[u]]);
            char *t = sb_take(&b);
            kf_err(err, errlen, "custom.compiler_options[%d]: \"%.80s\" with %s gives \"%.80s\", not an option "
                                "kforge passes to NVRTC (expected one of %s)", i, c->copt[i], t ? t : "", sub,
                   allowed_text);
            free(t);
            return -1;
        }
        int u = 0;
        while (u < nused && ++at[u] == c->params[used[u]].nsweep)
            at[u++] = 0;
        if (u == nused)
            return 0;
    }
}

int custom_parse_options(cfam *c, const cJSON *j, char *err, size_t errlen)
{
    if (!j)
        return 0;
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) > CUSTOM_MAX_OPTIONS) {
        kf_err(err, errlen, "custom.compiler_options: expected a list of up to %d NVRTC options (strings, or "
                            "{\"option\", \"when\"})", CUSTOM_MAX_OPTIONS);
        return -1;
    }
    int i = 0;
    for (const cJSON *x = j->child; x; x = x->next, i++) {
        const cJSON *opt = x, *when = NULL;
        if (cJSON_IsObject(x)) {
            opt = cJSON_GetObjectItemCaseSensitive(x, "option");
            when = cJSON_GetObjectItemCaseSensitive(x, "when");
            for (const cJSON *k = x->child; k; k = k->next)
                if (strcmp(k->string, "option") != 0 && strcmp(k->string, "when") != 0) {
                    kf_err(err, errlen, "custom.compiler_options[%d].%s: unknown key (expected \"option\" and "
                                        "\"when\")", i, k->string);
                    return -1;
                }
            if (when && !cJSON_IsString(when)) {
                kf_err(err, errlen, "custom.compiler_options[%d].when: expected an expression over the params "
                                    "(a string)", i);
                return -1;
            }
        }
        if (!cJSON_IsString(opt) || !opt->valuestring[0]) {
            kf_err(err, errlen, "custom.compiler_options[%d]: expected an NVRTC option (a string such as "
                                "\"-use_fast_math\") or {\"option\": ..., \"when\": EXPR}", i);
            return -1;
        }
        char sub[CUSTOM_OPTION_MAX], why[160];
        if (substitute(c, opt->valuestring, NULL, sub, sizeof sub, why, sizeof why) != 0) {
            kf_err(err, errlen, "custom.compiler_options[%d]: %s", i, why);
            return -1;
        }
        if (!strchr(opt->valuestring, '{') && !option_ok(sub)) {
            kf_err(err, errlen, "custom.compiler_options[%d]: \"%.80s\" is not an option kforge passes to NVRTC "
                                "(expected one of %s; include paths: the source's folder is searched)",
                   i, opt->valuestring, allowed_text);
            return -1;
        }
        if (!(c->copt[i] = strdup(opt->valuestring))) {
            kf_err(err, errlen, "out of memory");
            return -1;
        }
        c->ncopt = i + 1;
        if (when) {
            char perr[256];
            if (!(c->copt_when[i] = expr_parse_for(when->valuestring, &c->fam, perr, sizeof perr))) {
                kf_err(err, errlen, "custom.compiler_options[%d].when: %s", i, perr);
                return -1;
            }
            if (expr_uses_n(c->copt_when[i])) {
                kf_err(err, errlen, "custom.compiler_options[%d].when: \"%s\" uses a size: an option may depend on "
                                    "the params only (one compile serves every size)", i, when->valuestring);
                return -1;
            }
        }
        if (strchr(opt->valuestring, '{') && !when && check_values(c, i, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int custom_check_options(const cfam *c, const kf_variant *v, char *why, size_t whylen)
{
    for (int i = 0; i < c->ncopt; i++) {
        int64_t on = 1;
        char w[160], sub[CUSTOM_OPTION_MAX];
        if (c->copt_when[i] && custom_eval_int(c->copt_when[i], v, NULL, "when", &on, w, sizeof w) != 0)
            on = 0;
        if (!on)
            continue;
        if (substitute(c, c->copt[i], v, sub, sizeof sub, w, sizeof w) != 0) {
            kf_err(why, whylen, "compiler_options[%d]: %s", i, w);
            return -1;
        }
        if (!option_ok(sub)) {
            kf_err(why, whylen, "compiler_options[%d] \"%.60s\" gives \"%.60s\", not an option kforge passes to "
                                "NVRTC", i, c->copt[i], sub);
            return -1;
        }
    }
    return 0;
}

void custom_write_options(const cfam *c, const kf_variant *v, strbuf *b)
{
    for (int i = 0; i < c->ncopt; i++) {
        int64_t on = 1;
        char why[160], sub[CUSTOM_OPTION_MAX];
        if (c->copt_when[i] && custom_eval_int(c->copt_when[i], v, NULL, "when", &on, why, sizeof why) != 0)
            on = 0;
        /* checked at parse time with 0 in every {param}; again with the values */
        if (on && substitute(c, c->copt[i], v, sub, sizeof sub, why, sizeof why) == 0 && option_ok(sub))
            sb_printf(b, "%s%s\n", RTC_OPTION_DIRECTIVE, sub);
    }
}

void custom_free_options(cfam *c)
{
    for (int i = 0; i < c->ncopt; i++) {
        free(c->copt[i]);
        expr_free(c->copt_when[i]);
    }
    c->ncopt = 0;
}

// ---------------------------------------------------------------------------
// "size_macros": the problem sizes visible to the kernel as macros.  A
// variant's source is one for every size (compiled once), so each size
// named here has the one value the kernel is compiled for, and a case at
// another value of it is skipped, naming the key:
//
//   "sizes": ["width", "height"],
//   "size_macros": {"width": 4096, "height": 2048}      -> #define width 4096 ...

int custom_parse_size_macros(cfam *c, const cJSON *j, char *err, size_t errlen)
{
    c->nsmac = 0;
    if (!j)
        return 0;
    if (!cJSON_IsObject(j) || !j->child) {
        kf_err(err, errlen, "custom.size_macros: expected an object of sizes and the one value each is compiled "
                            "for, e.g. {\"width\": 4096}");
        return -1;
    }
    for (const cJSON *k = j->child; k; k = k->next) {
        int si = -1;
        for (int d = 0; d < c->fam.nsizes; d++)
            if (strcmp(c->sizes[d].name, k->string) == 0)
                si = d;
        if (si < 0) {
            strbuf b = {0};
            for (int d = 0; d < c->fam.nsizes; d++)
                sb_printf(&b, "%s%s", d ? ", " : "", c->sizes[d].name);
            char *t = sb_take(&b);
            kf_err(err, errlen, "custom.size_macros.%.64s: not one of the \"sizes\" (%s)", k->string, t ? t : "");
            free(t);
            return -1;
        }
        for (int i = 0; i < c->nsmac; i++)
            if (c->smac_size[i] == si) {
                kf_err(err, errlen, "custom.size_macros.%s: given twice", k->string);
                return -1;
            }
        for (int i = 0; i < c->fam.nparams; i++)
            if (strcmp(c->params[i].name, k->string) == 0) {
                kf_err(err, errlen, "custom.size_macros.%s: a param of that name is defined already", k->string);
                return -1;
            }
        if (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > (double)(1LL << 34) ||
            k->valuedouble != (double)(int64_t)k->valuedouble) {
            kf_err(err, errlen, "custom.size_macros.%s: expected the integer 1..2^34 the kernel is compiled for",
                   k->string);
            return -1;
        }
        c->smac_size[c->nsmac] = si;
        c->smac_value[c->nsmac++] = (int64_t)k->valuedouble;
    }
    return 0;
}

void custom_write_size_macros(const cfam *c, strbuf *b)
{
    for (int i = 0; i < c->nsmac; i++)
        sb_printf(b, "#define %s %lld\n", c->sizes[c->smac_size[i]].name, (long long)c->smac_value[i]);
}

int custom_check_size_macros(const cfam *c, const kf_shape *s, char *why, size_t whylen)
{
    for (int i = 0; s && i < c->nsmac; i++) {
        int64_t got = s->d[c->smac_size[i]];
        if (got != c->smac_value[i]) {
            kf_err(why, whylen, "%s = %lld here, the kernel is compiled for %s = %lld (custom.size_macros)",
                   c->sizes[c->smac_size[i]].name, (long long)got, c->sizes[c->smac_size[i]].name,
                   (long long)c->smac_value[i]);
            return -1;
        }
    }
    return 0;
}

// ---------------------------------------------------------------------------
// Kernel Tuner's loop_unroll_factor convention: a param whose name contains
// "loop_unroll_factor" at 0 means "no factor given": the line
// "#pragma unroll NAME" is left out (blank, so the lines keep their numbers)
// and the compiler unrolls as it likes; any other value is the factor.

static bool unroll_param(const char *name) { return strstr(name, "loop_unroll_factor") != NULL; }

static const char *skip_blanks(const char *p, const char *eol)
{
    while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* p past word at [p, eol) (after blanks), or NULL; with sep, a blank or the
 * line's end must follow it. */
static const char *word_at(const char *p, const char *eol, const char *word, bool sep)
{
    p = skip_blanks(p, eol);
    size_t n = strlen(word);
    if ((size_t)(eol - p) < n || strncmp(p, word, n) != 0)
        return NULL;
    p += n;
    return !sep || p == eol || *p == ' ' || *p == '\t' ? p : NULL;
}

/* The line [p, eol) is "#pragma unroll NAME" (spaces allowed) for name. */
static bool pragma_unroll_of(const char *p, const char *eol, const char *name)
{
    if (!(p = word_at(p, eol, "#", false)) || !(p = word_at(p, eol, "pragma", true)) || p == eol ||
        !(p = word_at(p, eol, "unroll", true)) || p == eol || !(p = word_at(p, eol, name, false)))
        return false;
    while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p == eol;
}

void custom_write_source_text(const cfam *c, const kf_variant *v, strbuf *b)
{
    int zero[KF_MAX_PARAMS], nz = 0;
    for (int i = 0; i < c->fam.nparams; i++)
        if (unroll_param(c->params[i].name) && v->p[i] == 0)
            zero[nz++] = i;
    if (!nz) {
        sb_append(b, c->source_text);
        return;
    }
    for (const char *p = c->source_text; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            eol = p + strlen(p);
        int drop = -1;
        for (int k = 0; k < nz && drop < 0; k++)
            if (pragma_unroll_of(p, eol, c->params[zero[k]].name))
                drop = zero[k];
        if (drop >= 0)
            sb_printf(b, "// (kforge: #pragma unroll %s left out: 0 gives no factor, as in Kernel Tuner)",
                      c->params[drop].name);
        else
            sb_printf(b, "%.*s", (int)(eol - p), p);
        if (!*eol)
            break;
        sb_append(b, "\n");
        p = eol + 1;
    }
}
