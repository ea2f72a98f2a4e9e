/*
 * reference.c -- see reference.h.
 */
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "checks.h"
#include "module.h"
#include "runner.h"
#include "util.h"

/* The reference variant's two runs (slot S's data.ref poisoned 0xFF,
 * B->got2 0x00) differ: the elements of its out buffers that hold the
 * poison in both are those it leaves (leave.h), whose answer is the
 * buffer's fill, and every candidate starts from the fill there (S's
 * dinit images); any other difference is a race.  false with c->r saying
 * why. */
static bool reference_leaves(cctx *c, input_slot *S, const kf_variant *v, const kf_shape *shape, const kf_bench *b)
{
    bench *B = c->B;
    kf_result *r = c->r;
    const kf_buffer_set *set = &S->data.set;
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *x = &set->b[i];
        if (!role_is_output(x->role))
            continue;
        leave_map *m = &S->leave[i];
        if (leave_find(S->data.ref[i], B->got2[i], x->elems, x->elem_bytes, m) != 0) {
            r->status = KF_ST_OOM;
            snprintf(r->message, sizeof r->message, "out of host memory for %s's elements it leaves", x->name);
            return false;
        }
        if (x->role == KF_ROLE_INOUT && m->left) { /* an inout starts from its input, never the poison */
            m->racy += m->left;
            m->first_racy = m->first_racy < 0 ? 0 : m->first_racy;
            leave_free(m);
        }
        if (m->racy) {
            r->status = KF_ST_WRONG;
            snprintf(r->message, sizeof r->message, "%lld of the %lld elements of %s differ between two runs with "
                     "different poison although it writes them (first at %s[%lld]), and it leaves %lld at their "
                     "first contents: a race; nothing can be checked against it", (long long)m->racy,
                     (long long)x->elems, x->name, x->name, (long long)m->first_racy, (long long)m->left);
            return false;
        }
        if (!m->mask)
            continue;
        size_t bytes = data_bytes(x);
        void *fill = malloc(bytes + 1), *img = malloc(bytes + 1);
        bool ok = fill && img;
        if (!ok) {
            r->status = KF_ST_OOM;
            snprintf(r->message, sizeof r->message, "out of host memory for %s's first contents", x->name);
        }
        if (ok) {
            family_of(v)->fill(v, shape, i, b->seed, true, fill, x->elems);
            leave_apply(S->data.ref[i], fill, x->elems, x->elem_bytes, m);
        }
        for (int k = 0; ok && k < 2; k++) {
            char what[80];
            snprintf(what, sizeof what, "%s (its first contents)", x->name);
            leave_image(img, k ? 0x00 : 0xFF, fill, x->elems, x->elem_bytes, m);
            ok = ensure_evicting(c, &S->dinit[i][k], &S->initcap[i][k], bytes + 16, what, S) &&
                 copy_in(c, S->dinit[i][k], img, bytes);
        }
        free(fill);
        free(img);
        if (!ok)
            return false;
        fprintf(stderr, "kforge: %s: the reference variant leaves %lld of the %lld elements of %s at their "
                    "first contents (the buffer's fill): every candidate must leave them too\n",
                    family_of(v)->name, (long long)m->left, (long long)x->elems, x->name);
    }
    return true;
}

/* The reference outputs of slot S's inputs from the family's reference
 * variant (reference_variant), compiled here (the cubin cache first) and
 * run twice with different poison: both runs must agree, so an output the
 * reference never writes is caught here, not blamed on every candidate.
 * false with c->r saying why. */
bool gpu_reference(cctx *c, input_slot *S, const kf_variant *v, const kf_shape *shape, const kf_bench *b)
{
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    kf_result *r = c->r;
    const kf_family *fam = family_of(v);
    kf_variant rv;
    char err[KF_MSG_MAX];
    if (fam->reference_variant(v, shape, &rv) != 0) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "the family gives no reference variant");
        return false;
    }
    fam = family_of(&rv); /* its source, plan and launches: those of its own family (a reference kernel of its own) */
    char *src = fam->source(&rv, err, sizeof err);
    if (!src) {
        r->status = KF_ST_COMPILE;
        snprintf(r->message, sizeof r->message, "the reference variant: %.480s", err);
        return false;
    }
    char *names = NULL;
    void *cubin = compile_here(B, src, "reference.cu", &names, err, sizeof err);
    free(src);
    if (!cubin) {
        r->status = KF_ST_COMPILE;
        snprintf(r->message, sizeof r->message, "the reference variant failed to compile: %.440s", err);
        return false;
    }
    kf_trace("reference compiled");
    CUmodule mod = NULL;
    bool ok = cu_ok(c, cu->cuModuleLoadData(&mod, cubin), "cuModuleLoadData(reference)");
    free(cubin);
    if (!ok)
        return false;
    gpu_kernels K;
    memset(&K, 0, sizeof K);
    K.c = c;
    runner R;
    memset(&R, 0, sizeof R);
    R.c = c;
    R.v = &rv;
    R.shape = shape;
    R.l = (kf_launcher){.dev = &B->g.info, .r = r, .nkernels = fam->nentries, .go = gpu_go, .ctx = &K};
    kf_plan_info p;
    R.p = &p;
    R.set = S->data.set;
    ok = get_kernels(c, mod, &rv, names, &K, &R.l) && set_constants(c, mod, &rv, shape, b->seed);
    free(names);
    if (ok && fam->plan(&rv, shape, B->g.info.sms, 1, &p) != 0) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "cannot plan its launches");
        ok = false;
    }
    for (int i = 0; ok && i < R.set.n; i++) {
        const kf_buffer *x = &R.set.b[i];
        if (x->role != KF_ROLE_IN)
            ok = ensure_evicting(c, &B->d_work[i], &B->work_cap[i], data_bytes(x) + 256, x->name, S) &&
                 (!role_is_output(x->role) || host_grow(c, &B->got2[i], data_bytes(x)));
    }
    if (ok) {
        runner_use(&R, B, S, b->offset);
        ok = run_checked(&R, 0xFF, S->data.ref) && run_checked(&R, 0x00, B->got2);
    }
    if (ok && !same_outputs(&R.set, S->data.ref, B->got2))
        ok = reference_leaves(c, S, v, shape, b);
    if (!ok) {
        char msg[KF_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", r->message);
        snprintf(r->message, sizeof r->message, "the reference variant: %.480s", msg);
    }
    if (c->last == CUDA_SUCCESS || !gpu_error_is_sticky(c->last))
        cu->cuModuleUnload(mod);
    kf_trace("reference run");
    return ok;
}
