/*
 * family.c -- the family registry and what the engine does with any
 * family's variants and shapes (see family.h).
 */
#include "family.h"

#include "key.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const kf_family kf_family_reduce, kf_family_reduce_rows;

/* The registry: one line per built-in family. */
const kf_family *kf_families[KF_MAX_FAMILIES] = {
    &kf_family_reduce,
    &kf_family_reduce_rows,
};
int kf_nfamilies = 2;

extern int custom_family_make(const char *spec_json, const char *config_path, char *err, size_t errlen);

/* Families made from a config: one line per maker. */
static const struct {
    const char *name;
    kf_family_maker make;
} makers[] = {
    {"custom", custom_family_make},
};

const char *const kf_role_names[KF_ROLE_COUNT] = {"in", "out", "inout", "scratch"};

int family_register(const kf_family *f, char *err, size_t errlen)
{
    if (family_find(f->name) >= 0) {
        kf_err(err, errlen, "a kernel family called \"%s\" is already registered", f->name);
        return -1;
    }
    if (kf_nfamilies == KF_MAX_FAMILIES) {
        kf_err(err, errlen, "no room for kernel family \"%s\": %d families at most", f->name, KF_MAX_FAMILIES);
        return -1;
    }
    kf_families[kf_nfamilies] = f;
    return kf_nfamilies++;
}

int family_find(const char *name)
{
    for (int i = 0; i < kf_nfamilies; i++)
        if (strcmp(kf_families[i]->name, name) == 0)
            return i;
    return -1;
}

bool family_is_maker(const char *name)
{
    for (size_t i = 0; i < sizeof makers / sizeof makers[0]; i++)
        if (strcmp(makers[i].name, name) == 0)
            return true;
    return false;
}

int family_make(const char *name, const char *spec_json, const char *config_path, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof makers / sizeof makers[0]; i++)
        if (strcmp(makers[i].name, name) == 0)
            return makers[i].make(spec_json, config_path, err, errlen);
    kf_err(err, errlen, "no family maker called \"%s\"", name);
    return -1;
}

void variant_defaults(kf_variant *v, int family)
{
    memset(v, 0, sizeof *v);
    v->family = family;
    const kf_family *f = kf_families[family];
    for (int i = 0; i < f->nparams; i++)
        v->p[i] = f->params[i].def;
}

void family_arg_mismatch(const kf_variant *v, int k, const char *entry, int i, size_t want, size_t have, char *buf,
                         size_t len)
{
    const kf_family *f = family_of(v);
    char what[400] = "";
    if (i < 0) {
        if (f->arg_text)
            f->arg_text(v, k, -1, what, sizeof what);
        snprintf(buf, len, "the arguments do not match kernel %s: the config gives %zu%s%s, the kernel takes %zu",
                 entry, want, what[0] ? " " : "", what, have);
        return;
    }
    if (f->arg_text)
        f->arg_text(v, k, i, what, sizeof what);
    const char *fits = have == 1 ? "int8 or uint8" : have == 2 ? "float16 or bfloat16" : have == 4 ? "float32, int32 or uint32"
                       : have == 8 ? "float64, int64 or a buffer (a pointer)" : NULL;
    char expect[96] = "";
    if (fits)
        snprintf(expect, sizeof expect, ": expected %s there", fits);
    snprintf(buf, len, "the arguments do not match kernel %s: argument %d%s%s is %zu bytes in the config, the kernel's "
             "parameter %d takes %zu%s", entry, i, what[0] ? " " : "", what, want, i, have, expect);
}

kf_dtype variant_dtype(const kf_variant *v) { return (kf_dtype)v->p[key_dtype_axis(family_of(v))]; }
kf_op variant_op(const kf_variant *v) { return (kf_op)v->p[key_op_axis(family_of(v))]; }

kf_acc_type variant_acc(const kf_variant *v)
{
    int i = key_acc_axis(family_of(v));
    return i < 0 ? KF_ACCT_AUTO : (kf_acc_type)v->p[i];
}

kf_dtype variant_acc_dtype(const kf_variant *v) { return kf_acc_dtype(variant_dtype(v), variant_acc(v)); }
kf_dtype variant_out_dtype(const kf_variant *v) { return kf_out_dtype(variant_dtype(v), variant_acc(v)); }

void variant_set_acc(kf_variant *v, kf_acc_type a)
{
    int i = key_acc_axis(family_of(v));
    if (i >= 0)
        v->p[i] = kf_acc_resolve(variant_dtype(v), a);
}

bool variant_eq(const kf_variant *a, const kf_variant *b)
{
    if (a->family != b->family || strcmp(a->name, b->name) != 0)
        return false;
    int np = family_of(a)->nparams;
    for (int i = 0; i < np; i++)
        if (a->p[i] != b->p[i])
            return false;
    return true;
}

uint64_t variant_hash(const kf_variant *v)
{
    uint64_t h = kf_hash64(v->name, strlen(v->name), (uint64_t)v->family + 1);
    return kf_hash64(v->p, sizeof v->p[0] * (size_t)family_of(v)->nparams, h);
}

void variant_label(const kf_variant *v, char *buf, size_t len)
{
    if (v->name[0])
        snprintf(buf, len, "%s", v->name);
    else
        family_of(v)->label(v, buf, len);
}

void variant_json(strbuf *b, const kf_variant *v)
{
    const kf_family *f = family_of(v);
    sb_append(b, "{\"kernel\": ");
    sb_json_string(b, f->name);
    for (int i = 0; i < f->nparams; i++) {
        sb_printf(b, ", \"%s\": ", f->params[i].name);
        param_json(b, &f->params[i], v->p[i]);
    }
    sb_append(b, "}");
}

void variant_buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set)
{
    memset(set, 0, sizeof *set);
    family_of(v)->buffers(v, s, p, set);
}

int buffer_first(const kf_buffer_set *set, kf_role r)
{
    for (int i = 0; i < set->n; i++)
        if (set->b[i].role == r)
            return i;
    return -1;
}

int64_t buffer_elems(const kf_buffer_set *set, bool outputs)
{
    int64_t n = 0;
    for (int i = 0; i < set->n; i++)
        if (outputs ? role_is_output(set->b[i].role) : role_is_input(set->b[i].role))
            n += set->b[i].elems;
    return n;
}

double variant_input_bytes(const kf_variant *v, const kf_shape *s)
{
    kf_buffer_set set;
    variant_buffers(v, s, NULL, &set);
    double bytes = 0;
    for (int i = 0; i < set.n; i++)
        if (role_is_input(set.b[i].role))
            bytes += (double)set.b[i].elems * (double)set.b[i].elem_bytes;
    return bytes;
}

/* Elements of every input: what orders shapes by size. */
int64_t shape_elems(const kf_variant *v, const kf_shape *s)
{
    kf_buffer_set set;
    variant_buffers(v, s, NULL, &set);
    return buffer_elems(&set, false);
}

bool shape_eq(const kf_shape *a, const kf_shape *b)
{
    return memcmp(a->d, b->d, sizeof a->d) == 0;
}

/* An optional size equal to the one before it (row_stride = cols) is its
 * default: shapes leave it out. */
static bool shown(const kf_family *f, const kf_shape *s, int i)
{
    return !(i > 0 && f->sizes[i].optional && s->d[i] == s->d[i - 1]);
}

void shape_text(const kf_family *f, const kf_shape *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < f->nsizes && o < len; i++)
        if (shown(f, s, i))
            o += (size_t)snprintf(buf + o, len - o, "%s%s=%lld", i ? " " : "", f->sizes[i].name, (long long)s->d[i]);
}

void shape_short(const kf_family *f, const kf_shape *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < f->nsizes && o < len; i++)
        if (shown(f, s, i))
            o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? (f->sizes[i].optional ? "/" : "x") : "",
                                  (long long)s->d[i]);
}

void shape_json(strbuf *b, const kf_family *f, const kf_shape *s)
{
    sb_append(b, "{");
    for (int i = 0; i < f->nsizes; i++) {
        sb_append(b, i ? ", " : "");
        sb_json_string(b, f->sizes[i].name);
        sb_printf(b, ": %lld", (long long)s->d[i]);
    }
    sb_append(b, "}");
}

bool shape_log_distance(const kf_family *f, const kf_shape *t, const kf_shape *q, double *dist, double *size)
{
    *dist = 0;
    *size = 0;
    bool ok = true;
    for (int d = 0; d < f->nsizes; d++) {
        if (t->d[d] < 1 || q->d[d] < 1) {
            ok = ok && (t->d[d] == q->d[d] || f->sizes[d].optional);
            continue;
        }
        *dist += fabs(log((double)t->d[d]) - log((double)q->d[d]));
        *size += log((double)t->d[d]);
    }
    return ok;
}

bool shape_nearer(double dist, double size, double ms, double pick_dist, double pick_size, double pick_ms)
{
    const double eps = 1e-9;
    if (fabs(dist - pick_dist) > eps)
        return dist < pick_dist;
    if (fabs(size - pick_size) > eps)
        return size > pick_size;
    return ms < pick_ms;
}
