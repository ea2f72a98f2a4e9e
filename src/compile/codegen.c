/*
 * codegen.c -- see codegen.h.
 */
#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int codegen_planted(const kf_variant *v)
{
    const char *e = getenv("KFORGE_PLANT");
    if (!e || !v->name[0])
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", e);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *at = strchr(tok, '@');
        if (!at || strcmp(at + 1, v->name) != 0)
            continue;
        *at = '\0';
        if (strcmp(tok, "fault") == 0)
            return 1;
        if (strcmp(tok, "hang") == 0)
            return 2;
    }
    return 0;
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
    kf_dtype t = variant_dtype(v);
    sb_printf(b, "#define KF_T %s\n", kf_dtype_ctype(t));
    sb_printf(b, "#define KF_ELEM_BYTES %zu\n", kf_dtype_size(t));
    sb_printf(b, "#define KF_IS_FLOAT %d\n", kf_dtype_is_float(t));
    sb_printf(b, "#define KF_IS_SIGNED %d\n", t == KF_INT32 || t == KF_INT64);
    sb_printf(b, "#define KF_INT32_LIKE %d\n", t == KF_INT32 || t == KF_UINT32);
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
