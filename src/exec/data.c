/*
 * data.c -- see data.h.
 */
#include "data.h"
#include "datashare.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void data_key_of(data_key *k, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    memset(k, 0, sizeof *k);
    const kf_family *f = family_of(v);
    k->family = v->family;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].key)
            k->keyp[i] = v->p[i];
    k->shape = *s;
    k->seed = seed;
    k->exact = exact;
    kf_buffer_set set;
    variant_buffers(v, s, NULL, &set);
    k->nbuf = set.n;
    for (int i = 0; i < set.n; i++)
        if (set.b[i].role != KF_ROLE_SCRATCH)
            k->elems[i] = set.b[i].elems;
}

bool data_key_eq(const data_key *a, const data_key *b)
{
    return a->family == b->family && memcmp(a->keyp, b->keyp, sizeof a->keyp) == 0 &&
           shape_eq(&a->shape, &b->shape) && a->seed == b->seed && a->exact == b->exact && a->nbuf == b->nbuf &&
           memcmp(a->elems, b->elems, sizeof a->elems) == 0;
}

uint64_t data_key_hash(const data_key *k)
{
    /* FNV-1a over the key's bytes (data_key_of zeroes it first, padding too) */
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)k;
    for (size_t i = 0; i < sizeof *k; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int data_make_inputs(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    const kf_family *f = family_of(v);
    memset(d, 0, sizeof *d);
    variant_buffers(v, s, NULL, &d->set);
    for (int i = 0; i < d->set.n; i++) {
        const kf_buffer *b = &d->set.b[i];
        if (!role_is_input(b->role))
            continue;
        if (!(d->host[i] = malloc(data_bytes(b) + 1))) {
            data_free(d);
            return -1;
        }
        f->fill(v, s, i, seed, exact, d->host[i], b->elems);
    }
    if (kf_trace_on()) {
        data_key k;
        data_key_of(&k, v, s, seed, exact);
        kf_trace("data made: key %016llx (%s data, private)", (unsigned long long)data_key_hash(&k),
                 exact ? "exact" : "realistic");
    }
    return 0;
}

int data_make(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    if (data_make_inputs(d, v, s, seed, exact) != 0)
        return -1;
    for (int i = 0; i < d->set.n; i++) {
        const kf_buffer *b = &d->set.b[i];
        if (role_is_output(b->role) && (!(d->ref[i] = malloc(data_bytes(b) + 1)) ||
                                        !(d->aux[i] = calloc((size_t)b->elems + 1, sizeof(double))))) {
            data_free(d);
            return -1;
        }
    }
    family_of(v)->reference(v, s, (const void *const *)d->host, d->ref, d->aux);
    return 0;
}

void data_drop_inputs(data_set *d)
{
    if (d->pin) {
        datashare_release(d);
        return;
    }
    for (int i = 0; i < KF_MAX_BUFFERS; i++) {
        free(d->host[i]);
        d->host[i] = NULL;
    }
}

void data_free(data_set *d)
{
    data_drop_inputs(d);
    for (int i = 0; i < KF_MAX_BUFFERS; i++) {
        free(d->ref[i]);
        free(d->aux[i]);
        d->ref[i] = NULL;
        d->aux[i] = NULL;
    }
}

int data_constants(const kf_variant *v, const kf_shape *s, uint64_t seed, kf_constant_set *set,
                   void *host[KF_MAX_CONSTANTS])
{
    const kf_family *f = family_of(v);
    memset(set, 0, sizeof *set);
    memset(host, 0, sizeof(void *) * KF_MAX_CONSTANTS);
    if (!f->constants || !f->constant_fill)
        return 0;
    f->constants(v, s, set);
    if (set->n > KF_MAX_CONSTANTS)
        set->n = KF_MAX_CONSTANTS;
    for (int i = 0; i < set->n; i++) {
        const kf_constant *c = &set->c[i];
        if (c->elems < 0 || !(host[i] = malloc((size_t)c->elems * c->elem_bytes + 1))) {
            data_constants_free(set, host);
            return -1;
        }
        f->constant_fill(v, s, i, seed, host[i], c->elems);
    }
    return 0;
}

void data_constants_free(kf_constant_set *set, void *host[KF_MAX_CONSTANTS])
{
    for (int i = 0; i < KF_MAX_CONSTANTS; i++) {
        free(host[i]);
        host[i] = NULL;
    }
    set->n = 0;
}
