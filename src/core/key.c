/*
 * key.c -- a family's key axes and roles (key.h), from its parameter table.
 */
#include "key.h"

#include <stdio.h>
#include <string.h>

#include "kforge.h"
#include "param.h"

static int enum_axis(const kf_family *f, const char *const *names)
{
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].kind == KF_PK_ENUM && f->params[i].names == names)
            return i;
    return -1;
}

int key_dtype_axis(const kf_family *f) { return enum_axis(f, kf_dtype_names); }
int key_op_axis(const kf_family *f) { return enum_axis(f, kf_op_names); }
int key_acc_axis(const kf_family *f) { return enum_axis(f, kf_acc_type_names); }

int key_dtype(const kf_variant *v)
{
    int a = key_dtype_axis(family_of(v));
    return a < 0 ? -1 : (int)v->p[a];
}

void key_param_text(const kf_variant *v, const char *name, char *buf, size_t len)
{
    const kf_family *f = family_of(v);
    int i = param_find(f->params, f->nparams, name);
    strbuf b = {0};
    if (i >= 0)
        param_text(&b, &f->params[i], v->p[i]);
    snprintf(buf, len, "%s", b.s ? b.s : "");
    sb_free(&b);
}

/* An optional key axis at its default (acc-dtype auto) goes without saying. */
static bool said(const kf_param *p, int64_t x) { return p->key && !(p->optional && x == p->def); }

void key_text(strbuf *b, const kf_variant *v, const char *sep)
{
    const kf_family *f = family_of(v);
    for (int i = 0; i < f->nparams; i++)
        if (said(&f->params[i], v->p[i])) {
            sb_append(b, sep);
            param_text(b, &f->params[i], v->p[i]);
        }
}

void key_describe(strbuf *b, const kf_variant *v)
{
    sb_append(b, family_of(v)->name);
    key_text(b, v, " ");
}

void key_set_args(strbuf *b, const kf_variant *v)
{
    const kf_family *f = family_of(v);
    for (int i = 0; i < f->nparams; i++)
        if (said(&f->params[i], v->p[i])) {
            sb_printf(b, " --set %s=", f->params[i].name);
            param_text(b, &f->params[i], v->p[i]);
        }
}

void key_options(strbuf *b, const kf_family *f)
{
    int n = 0, total = 0;
    for (int i = 0; i < f->nparams; i++) /* the required ones: an optional one (acc-dtype) has a default */
        total += f->params[i].key && !f->params[i].optional;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].key && !f->params[i].optional) {
            n++;
            sb_printf(b, "%s--", n == 1 ? "" : n == total ? " and " : ", ");
            for (const char *x = f->params[i].name; *x; x++)
                sb_printf(b, "%c", *x == '_' ? '-' : *x);
        }
}

bool key_match(const kf_variant *a, const kf_variant *b, const bool *given)
{
    if (a->family != b->family)
        return false;
    const kf_family *f = family_of(a);
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].key && (!given || given[i]) && a->p[i] != b->p[i])
            return false;
    return true;
}

/* VALUE of a key axis as the command line spells it: an enum's name or an
 * integer the axis allows. */
static bool parse_value(const kf_param *p, const char *s, int64_t *out)
{
    long long x;
    switch (p->kind) {
    case KF_PK_ENUM:
        x = kf_lookup(p->names, p->count, s);
        break;
    case KF_PK_INT:
        if (!kf_parse_ll(s, &x))
            return false;
        break;
    default:
        return false;
    }
    if (x < 0 && p->kind == KF_PK_ENUM)
        return false;
    if (!param_valid(p, (int64_t)x))
        return false;
    *out = (int64_t)x;
    return true;
}

int key_option(cli *c, const kf_family *f, kf_variant *key, bool *given)
{
    /* static: cli keeps the names it tried, for "did you mean" */
    static char opt[KF_MAX_PARAMS][KF_NAME_MAX + 2], alt[KF_MAX_PARAMS][KF_NAME_MAX + 2];
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        const char *val;
        if (!p->key)
            continue;
        /* --acc-dtype, as options are spelled; --acc_dtype, as the axis is */
        snprintf(opt[i], sizeof opt[i], "--%s", p->name);
        for (char *x = opt[i]; *x; x++)
            if (*x == '_')
                *x = '-';
        snprintf(alt[i], sizeof alt[i], "--%s", p->name);
        if (!cli_value(c, opt[i], &val) && (strcmp(opt[i], alt[i]) == 0 || !cli_value(c, alt[i], &val)))
            continue;
        if (!parse_value(p, val, &key->p[i])) {
            strbuf a = {0};
            if (p->kind == KF_PK_ENUM)
                for (int k = 0; k < p->count; k++)
                    sb_printf(&a, "%s%s", k ? ", " : "", p->names[k]);
            else
                param_allowed(&a, p);
            cli_fail(c, "%s: unknown %s '%s' (allowed: %s)", opt[i], p->name, val, a.s ? a.s : "");
            sb_free(&a);
            return -1;
        }
        given[i] = true;
        return 1;
    }
    return 0;
}
