/*
 * inputs.c -- see inputs.h.
 */
#include "inputs.h"

#include <pthread.h>
#include <stdio.h>

#include "buffers.h"
#include "checks.h"
#include "datashare.h"
#include "reference.h"
#include "util.h"

// ----------------------------------------------------------------------------
// Input made ahead: the host copy of one exact input and its reference, made by a
// thread while the device opens (cuInit and the context take most of a
// second, and the input of a large case about as long); taken by the first
// prepare_input that wants the same key.

static struct {
    bool started;
    pthread_t th;
    kf_variant v;
    kf_shape shape;
    data_key key;
    data_set data;
    bool ok;
} ahead;

static void *ahead_main(void *arg)
{
    (void)arg;
    ahead.ok = data_make(&ahead.data, &ahead.v, &ahead.shape, ahead.key.seed, true) == 0;
    if (ahead.ok)
        kf_trace("input made ahead");
    return NULL;
}

void bench_make_input_ahead(const kf_variant *v, const kf_shape *shape, const kf_bench *b)
{
    if (ahead.started)
        return;
    ahead.v = *v;
    ahead.shape = *shape;
    data_key_of(&ahead.key, v, shape, b->seed, true);
    ahead.ok = false;
    ahead.started = pthread_create(&ahead.th, NULL, ahead_main, NULL) == 0;
}

/* The data made ahead into *d, if it is the one wanted (true); else it is
 * dropped. */
static bool ahead_take(const data_key *k, data_set *d)
{
    if (!ahead.started)
        return false;
    pthread_join(ahead.th, NULL);
    ahead.started = false;
    if (ahead.ok && data_key_eq(&ahead.key, k)) {
        *d = ahead.data;
        return true;
    }
    data_free(&ahead.data);
    return false;
}

/* Whether slot S holds the host copies of its inputs. */
static bool has_host(const input_slot *S)
{
    for (int i = 0; i < S->data.set.n; i++)
        if (role_is_input(S->data.set.b[i].role) && !S->data.host[i])
            return false;
    return true;
}

/* Slot S's reference outputs copied to the device (the GPU's check). */
static bool upload_refs(cctx *c, input_slot *S)
{
    const kf_buffer_set *set = &S->data.set;
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *x = &set->b[i];
        if (!role_is_output(x->role))
            continue;
        size_t bytes = data_bytes(x);
        char what[80];
        snprintf(what, sizeof what, "%s (its reference)", x->name);
        if (!ensure_evicting(c, &S->dref[i], &S->refcap[i], bytes + 16, what, S) ||
            (bytes && !copy_in(c, S->dref[i], S->data.ref[i], bytes)))
            return false;
    }
    return true;
}

/* The inputs of the exact data (exact) or the realistic data on the device,
 * and their references on the host: a kept one, or made in a free (else the
 * least recently used) slot; NULL on failure (c->r says why).  keep_host:
 * the inputs' host copies stay (the planted faults' model).  keep: a slot
 * the caller still uses, never given up. */
input_slot *prepare_input(cctx *c, bool exact, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
                          bool keep_host, const input_slot *keep)
{
    bench *B = c->B;
    data_key k;
    data_key_of(&k, v, shape, b->seed, exact);
    input_slot *S = NULL;
    for (int i = 0; i < KF_INPUTS && !S; i++) {
        input_slot *x = &B->in[i];
        if (x->have && data_key_eq(&x->key, &k) && x->offset == b->offset)
            S = x;
    }
    if (S && (!keep_host || has_host(S))) {
        S->used = ++B->tick;
        return S;
    }
    for (int i = 0; i < KF_INPUTS && !S; i++) /* a free slot */
        if (!B->in[i].have && &B->in[i] != keep)
            S = &B->in[i];
    if (!S) /* else the least recently used */
        for (int i = 0; i < KF_INPUTS; i++)
            if (&B->in[i] != keep && (!S || B->in[i].used < S->used))
                S = &B->in[i];
    S->have = false;
    S->used = ++B->tick;
    data_free(&S->data);
    for (int i = 0; i < KF_MAX_BUFFERS; i++)
        leave_free(&S->leave[i]);
    /* inputs kept on the host are a planted fault's, whose model writes into them: those are private */
    if (!(exact && ahead_take(&k, &S->data)) &&
        (keep_host ? data_make : data_make_shared)(&S->data, v, shape, b->seed, exact) != 0) {
        c->r->status = KF_ST_OOM;
        snprintf(c->r->message, sizeof c->r->message, "out of host memory for the inputs and their reference");
        return NULL;
    }
    kf_cu *cu = &B->g.cu;
    const kf_buffer_set *set = &S->data.set;
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *x = &set->b[i];
        if (!role_is_input(x->role))
            continue;
        /* offset elements before the data and 64 bytes after it hold a
         * poison pattern: a kernel that reads outside gets a wrong answer */
        size_t lead = lead_bytes(x, b->offset), bytes = lead + data_bytes(x) + 64;
        char what[64];
        snprintf(what, sizeof what, "%s%s", x->name, exact ? "" : " (realistic data)");
        if (!ensure_evicting(c, &S->d[i], &S->cap[i], bytes, what, S) ||
            !cu_ok(c, cu->cuMemsetD8Async(S->d[i], 0x5A, bytes, B->stream), "cuMemsetD8Async(input)") ||
            !cu_ok(c, cu->cuStreamSynchronize(B->stream), "cuStreamSynchronize") ||
            !copy_in(c, S->d[i] + lead, S->data.host[i], data_bytes(x))) {
            data_free(&S->data);
            return NULL;
        }
    }
    /* a family whose reference is one of its variants: run it here, on
     * these inputs, once per key */
    if (exact && family_of(v)->reference_variant && !gpu_reference(c, S, v, shape, b)) {
        data_free(&S->data);
        return NULL;
    }
    S->have_fig = false;
    if (exact && outcheck_ready(c) && !upload_refs(c, S)) {
        data_free(&S->data);
        return NULL;
    }
    if (!keep_host)
        data_drop_inputs(&S->data);
    kf_trace("inputs made: key %016llx (%s data)", (unsigned long long)data_key_hash(&k), exact ? "exact" : "realistic");
    S->have = true;
    S->key = k;
    S->offset = b->offset;
    return S;
}
