/*
 * codegen.c -- see codegen.h.
 */
#include "codegen.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "key.h"
#include "rtc.h"

extern const char *const kf_tpl_names[];
extern const char *const kf_tpl_texts[];

const char *codegen_template(const char *name)
{
    for (int i = 0; kf_tpl_names[i]; i++)
        if (strcmp(kf_tpl_names[i], name) == 0)
            return kf_tpl_texts[i];
    return NULL;
}

char *codegen_source(const kf_variant *v, char *err, size_t errlen)
{
    return family_of(v)->source(v, err, errlen);
}

const char *const kf_plant_names[KF_PLANT_COUNT] = {
    "", "fault", "hang", "drop_first", "drop_last", "drop_tail", "drop_block", "shift", "double_block",
    "skip_col", "row_shift",
};

/* Whether which[0..len) (a name, `*` or PARAM=VALUE) selects v. */
static bool plant_selects(const kf_variant *v, const char *which, size_t len)
{
    if (len == 1 && which[0] == '*')
        return true;
    const char *eq = memchr(which, '=', len);
    if (!eq)
        return v->name[0] && strlen(v->name) == len && memcmp(which, v->name, len) == 0;
    const kf_family *f = family_of(v);
    size_t klen = (size_t)(eq - which), vlen = len - klen - 1;
    for (int k = 0; k < f->nparams; k++) {
        if (strlen(f->params[k].name) != klen || memcmp(f->params[k].name, which, klen) != 0)
            continue;
        strbuf b = {0};
        param_text(&b, &f->params[k], v->p[k]);
        bool match = b.s && strlen(b.s) == vlen && memcmp(b.s, eq + 1, vlen) == 0;
        sb_free(&b);
        return match;
    }
    return false;
}

int codegen_planted(const kf_variant *v)
{
    const char *e = getenv("KFORGE_PLANT");
    if (!e)
        return KF_PLANT_NONE;
    /* read where it lies, token by token: a long list (a test plants a
     * fault per variant by name) is never cut short */
    for (const char *tok = e; *tok;) {
        size_t len = strcspn(tok, ",");
        const char *at = memchr(tok, '@', len);
        if (at && plant_selects(v, at + 1, len - (size_t)(at + 1 - tok))) {
            size_t klen = (size_t)(at - tok);
            for (int k = 1; k < KF_PLANT_COUNT; k++)
                if (strlen(kf_plant_names[k]) == klen && memcmp(tok, kf_plant_names[k], klen) == 0)
                    return k;
        }
        tok += len + (tok[len] == ',');
    }
    return KF_PLANT_NONE;
}

char *codegen_template_file(const char *path, char *err, size_t errlen)
{
    size_t len;
    char e[256];
    char *text = kf_read_file_max(path, 16 << 20, &len, e, sizeof e);
    if (!text)
        kf_err(err, errlen, "kernel template %s: %s", path, e);
    return text;
}

void codegen_plant_defines(strbuf *b, const kf_variant *v)
{
    int plant = codegen_planted(v);
    if (!plant)
        return;
    /* every coverage fault is one source (the engine picks the fault at run
     * time): one cubin per variant serves them all */
    if (plant >= KF_PLANT_DROP_FIRST)
        sb_append(b, "#define KF_PLANT_COVERAGE 3 /* test hook: KFORGE_PLANT (the fault is chosen at run time) */\n"
                     "#define KF_PLANT KF_PLANT_COVERAGE\n\n");
    else
        sb_printf(b, "#define KF_PLANT_FAULT 1\n#define KF_PLANT_HANG 2\n#define KF_PLANT %d /* test hook: KFORGE_PLANT */\n\n",
                  plant);
}

void codegen_comment(strbuf *b, const kf_variant *v)
{
    const kf_family *f = family_of(v);
    sb_printf(b, "// kforge " KF_VERSION " generated %s kernel\n", f->name);
    sb_printf(b, "//   %-20s %s\n", "kernel", f->name);
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        if (!p->macro)
            continue;
        sb_printf(b, "//   %-20s ", p->name);
        param_text(b, p, v->p[i]);
        sb_append(b, "\n");
    }
}

void codegen_defines(strbuf *b, const kf_variant *v)
{
    const kf_family *f = family_of(v);
    /* For a family with a dtype axis (key.h): KF_T is the accumulator's type
     * (the partials' and, but for KF_OUT_T, the outputs'); an input of another type (bfloat16, float16) is
     * KF_IN_T, its bits widened as it is loaded */
    if (key_dtype(v) >= 0) {
        kf_dtype t = variant_acc_dtype(v), in = variant_dtype(v);
        sb_printf(b, "#define KF_T %s\n", kf_dtype_ctype(t));
        sb_printf(b, "#define KF_ELEM_BYTES %zu\n", kf_dtype_size(t));
        sb_printf(b, "#define KF_IS_FLOAT %d\n", kf_dtype_is_float(t));
        sb_printf(b, "#define KF_IS_SIGNED %d\n", t == KF_INT32 || t == KF_INT64);
        sb_printf(b, "#define KF_INT32_LIKE %d\n", t == KF_INT32 || t == KF_UINT32);
        if (in != t)
            sb_printf(b, "#define KF_IN_T unsigned short\n#define KF_IN_%s 1\n", in == KF_BFLOAT16 ? "BFLOAT16" : "FLOAT16");
        /* acc_dtype input: the outputs are the input's 2-byte type, KF_T
         * rounded once as stored (common.cuh: kf_out) */
        kf_dtype o = variant_out_dtype(v);
        if (o != t)
            sb_printf(b, "#define KF_OUT_T unsigned short\n#define KF_OUT_%s 1\n", o == KF_BFLOAT16 ? "BFLOAT16" : "FLOAT16");
    }
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        if (!p->macro || p->kind != KF_PK_ENUM)
            continue;
        for (int k = 0; k < p->count; k++) {
            char suf[64];
            param_macro_suffix(p->names[k], suf, sizeof suf);
            sb_printf(b, "#define %s_%s %d\n", p->macro, suf, k);
        }
    }
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        if (!p->macro)
            continue;
        if (p->kind == KF_PK_ENUM)
            sb_printf(b, "#define %s %d /* %s */\n", p->macro, (int)v->p[i], p->names[v->p[i]]);
        else
            sb_printf(b, "#define %s %lld\n", p->macro, (long long)v->p[i]);
    }
}

char *codegen_launch_comment(const kf_variant *v)
{
    const kf_family *f = family_of(v);
    char label[256];
    f->label(v, label, sizeof label);
    strbuf b = {0};
    sb_printf(&b, "// ===== variant %s%s%s\n", v->name[0] ? v->name : label, v->name[0] ? " -- " : "",
              v->name[0] ? label : "");
    sb_printf(&b, "//   %-20s %s\n", "name", v->name[0] ? v->name : "(none)");
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        if (p->macro)
            continue;
        sb_printf(&b, "//   %-20s ", p->name);
        param_json(&b, p, v->p[i]);
        sb_append(&b, "\n");
    }
    return sb_take(&b);
}

// ---------------------------------------------------------------------------
// several variants in one translation unit

void codegen_undefs(strbuf *b, const char *text)
{
    strbuf seen = {0}; /* " NAME NAME ... " */
    sb_append(&seen, " ");
    for (const char *p = text; p && *p;) {
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '#') {
            q++;
            while (*q == ' ' || *q == '\t')
                q++;
            if (strncmp(q, "define", 6) == 0 && (q[6] == ' ' || q[6] == '\t')) {
                q += 6;
                while (*q == ' ' || *q == '\t')
                    q++;
                const char *s = q;
                while (isalnum((unsigned char)*q) || *q == '_')
                    q++;
                if (q > s && q - s < 128) {
                    char name[130];
                    snprintf(name, sizeof name, " %.*s ", (int)(q - s), s);
                    if (!seen.s || !strstr(seen.s, name)) {
                        sb_append(&seen, name + 1);
                        sb_printf(b, "#undef %.*s\n", (int)(q - s), s);
                    }
                }
            }
        }
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    sb_free(&seen);
}

int codegen_wrapped(strbuf *b, const kf_variant *v, const char *ns, const char *entry, const char *prologue,
                    char *err, size_t errlen)
{
    const kf_family *f = family_of(v);
    char *src = codegen_source(v, err, errlen);
    if (!src)
        return -1;
    /* kernel 0 becomes `entry`, any other kernel K `entry`__K; none renamed without an entry */
    for (int k = 0; entry && k < f->nentries; k++)
        sb_printf(b, k ? "#define %s %s__%s\n" : "#define %s %s\n", f->entries[k], entry, f->entries[k]);
    if (prologue)
        sb_append(b, prologue);
    sb_printf(b, "namespace %s {\n", ns);
    /* not the include-dir line (deps.h): a text for another place, whose
     * compiler is told where the headers are by its own -I */
    size_t dl = strlen(RTC_INCLUDE_DIRECTIVE);
    for (const char *p = src; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl + 1 - p) : strlen(p);
        if (strncmp(p, RTC_INCLUDE_DIRECTIVE, dl) != 0)
            sb_appendn(b, p, n);
        p += n;
    }
    sb_printf(b, "\n} // namespace %s\n", ns);
    for (int k = 0; entry && k < f->nentries; k++)
        sb_printf(b, "#undef %s\n", f->entries[k]);
    codegen_undefs(b, src);
    free(src);
    return 0;
}

/* name with [^A-Za-z0-9_] made '_' */
static void ident(const char *name, char *buf, size_t len)
{
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++)
        buf[i] = isalnum((unsigned char)name[i]) || name[i] == '_' ? name[i] : '_';
    buf[i] = '\0';
}

void codegen_suffix(const kf_variant *vs, int n, int i, char *buf, size_t len)
{
    if (!vs[i].name[0]) {
        snprintf(buf, len, "v%d", i);
        return;
    }
    char mine[KF_NAME_MAX], other[KF_NAME_MAX];
    ident(vs[i].name, mine, sizeof mine);
    bool shared = false;
    for (int k = 0; k < n && !shared; k++) {
        if (k == i || !vs[k].name[0])
            continue;
        ident(vs[k].name, other, sizeof other);
        /* "v3" as a name must not meet the "v3" of an unnamed variant either */
        shared = strcmp(mine, other) == 0;
    }
    for (int k = 0; k < n && !shared; k++) {
        char vk[16];
        snprintf(vk, sizeof vk, "v%d", k);
        shared = !vs[k].name[0] && strcmp(mine, vk) == 0;
    }
    if (shared)
        snprintf(buf, len, "%s_%d", mine, i);
    else
        snprintf(buf, len, "%s", mine);
}

char *codegen_multi_source(const kf_variant *vs, int n, char *err, size_t errlen)
{
    strbuf b = {0};
    if (n == 1) {
        char *head = codegen_launch_comment(&vs[0]);
        char *src = codegen_source(&vs[0], err, errlen);
        if (src)
            sb_printf(&b, "%s%s\n", head ? head : "", src);
        free(head);
        if (!src)
            return NULL;
        free(src);
        return sb_take(&b);
    }
    sb_printf(&b, "// kforge " KF_VERSION " generated: %d variants in one translation unit.  Each variant's\n"
                  "// source is in a namespace of its own, its kernel renamed, its macros #undef'd after it.\n"
                  "// Kernels (extern \"C\"):\n", n);
    for (int i = 0; i < n; i++) {
        char suf[KF_NAME_MAX + 16], label[256];
        codegen_suffix(vs, n, i, suf, sizeof suf);
        family_of(&vs[i])->label(&vs[i], label, sizeof label);
        char base[KF_NAME_MAX + 16];
        ident(family_of(&vs[i])->entries[0], base, sizeof base);
        sb_printf(&b, "//   %s_%s  %s%s%s\n", base, suf, vs[i].name, vs[i].name[0] ? " -- " : "", label);
    }
    for (int i = 0; i < n; i++) {
        if (kf_interrupted) {
            sb_free(&b);
            kf_err(err, errlen, "interrupted");
            return NULL;
        }
        char suf[KF_NAME_MAX + 16], entry[2 * KF_NAME_MAX + 48], ns[2 * KF_NAME_MAX + 64];
        codegen_suffix(vs, n, i, suf, sizeof suf);
        char base[KF_NAME_MAX + 16];
        ident(family_of(&vs[i])->entries[0], base, sizeof base); /* "scale<float>" -> "scale_float_" */
        snprintf(entry, sizeof entry, "%s_%s", base, suf);
        snprintf(ns, sizeof ns, "%s_ns", entry);
        char *head = codegen_launch_comment(&vs[i]);
        sb_printf(&b, "\n%s//   %-20s %s\n", head ? head : "", "kernel", entry);
        free(head);
        /* a C++ entry ("scale<float>") cannot be renamed by a macro: its
         * namespace keeps it apart */
        const char *e0 = family_of(&vs[i])->entries[0];
        bool plain = isalpha((unsigned char)e0[0]) || e0[0] == '_';
        for (const char *p = e0; plain && *p; p++)
            plain = isalnum((unsigned char)*p) || *p == '_';
        if (codegen_wrapped(&b, &vs[i], ns, plain ? entry : NULL, NULL, err, errlen) != 0) {
            sb_free(&b);
            return NULL;
        }
    }
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

void codegen_name_expression(strbuf *b, const char *entry)
{
    sb_printf(b, "%s" RTC_NAME_DIRECTIVE "%s\n", b->len && b->s[b->len - 1] != '\n' ? "\n" : "", entry);
}
