/*
 * checks.c -- see checks.h.
 */
#include "checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffers.h"
#include "inputs.h"
#include "module.h"
#include "runner.h"
#include "util.h"

/* Says which output is wrong, after compare() filled the values. */
void bench_wrong(kf_result *r, int64_t bad, int64_t nout, const char *what)
{
    r->status = KF_ST_WRONG;
    char at[64] = "";
    if (r->worst_at[0])
        snprintf(at, sizeof at, " at %s", r->worst_at);
    if (nout > 1)
        snprintf(r->message, sizeof r->message, "%s: %lld of %lld outputs wrong; worst%s: GPU %s, reference %s "
                 "(|error| %.3g, tolerance %.3g)", what, (long long)bad, (long long)nout, at, r->gpu_value,
                 r->ref_value, r->abs_err, r->tolerance);
    else
        snprintf(r->message, sizeof r->message, "%s%s: GPU %s, reference %s (|error| %.3g, tolerance %.3g)", what, at,
                 r->gpu_value, r->ref_value, r->abs_err, r->tolerance);
}

int64_t bench_compare(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, const kf_buffer_set *set,
                      void *const *got, void *const *ref, double *const *aux, bool exact, kf_result *r,
                      int64_t *nout)
{
    const kf_family *f = family_of(v);
    int64_t bad = 0;
    int shown = -1, outs = 0;
    *nout = 0;
    kf_result keep = *r;
    for (int i = 0; i < set->n; i++) {
        if (!role_is_output(set->b[i].role))
            continue;
        outs++;
        kf_result tmp = *r;
        tmp.worst_at[0] = '\0';
        int64_t k = f->compare(v, shape, p, i, got[i], ref[i], aux[i], exact, &tmp);
        if (tmp.status != KF_ST_OK && tmp.status != KF_ST_WRONG) { /* out of host memory */
            *r = tmp;
            return k > 0 ? k : 1;
        }
        if (shown < 0 || (k > 0 && bad == 0)) { /* the first wrong buffer, else the first */
            keep = tmp;
            shown = i;
        }
        bad += k;
        *nout += set->b[i].elems;
    }
    *r = keep;
    if (shown >= 0 && outs > 1 && !r->worst_at[0]) /* the family did not say where: name the buffer */
        snprintf(r->worst_at, sizeof r->worst_at, "%s", set->b[shown].name);
    return bad;
}

void bench_accuracy(kf_result *r, const kf_result *acc, int64_t bad)
{
    r->acc_err = acc->abs_err;
    r->acc_bound = acc->tolerance;
    r->acc_rel = acc->err_scale > 0 ? acc->abs_err / acc->err_scale : 0;
    if (r->status == KF_ST_WRONG) {
        size_t len = strlen(r->message);
        snprintf(r->message + len, sizeof r->message - len,
                 "; on the realistic data |error| %.3g against the rounding bound %.3g (%s)", acc->abs_err,
                 acc->tolerance, bad ? "wrong there too" : "the bound alone would have passed it");
    }
}

/* Whether two runs' outputs are the same bits. */
bool same_outputs(const kf_buffer_set *set, void *const *a, void *const *b)
{
    for (int i = 0; i < set->n; i++)
        if (role_is_output(set->b[i].role) && memcmp(a[i], b[i], data_bytes(&set->b[i])) != 0)
            return false;
    return true;
}

/* compare's figures of a check (kf_result's gpu_value, ref_value,
 * abs_err, tolerance, worst_at) copied into r. */
static void take_figures(kf_result *r, const kf_result *f)
{
    snprintf(r->gpu_value, sizeof r->gpu_value, "%s", f->gpu_value);
    snprintf(r->ref_value, sizeof r->ref_value, "%s", f->ref_value);
    snprintf(r->worst_at, sizeof r->worst_at, "%s", f->worst_at);
    r->abs_err = f->abs_err;
    r->tolerance = f->tolerance;
}

/* The figures compare gives of the exact data's reference against itself,
 * which are those of any run with the reference's bits: made once per
 * slot. */
static const kf_result *self_figures(gcase *q)
{
    input_slot *X = q->X;
    if (!X->have_fig) {
        data_set *d = &X->data;
        int64_t nout;
        X->fig = *q->c.r;
        bench_compare(q->v, q->shape, &q->p, &q->R.set, d->ref, d->ref, d->aux, true, &X->fig, &nout);
        X->have_fig = true;
    }
    return &X->fig;
}

/* Element i of a float buffer of dtype t at p, as double. */
static double float_elem(kf_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case KF_FLOAT32: return ((const float *)p)[i];
    case KF_FLOAT64: return ((const double *)p)[i];
    default: return kf_half_to_float(t, ((const uint16_t *)p)[i]);
    }
}

/* The figures of output i that the GPU found within the family's
 * tolerance (family.h, tolerance): its largest error's, at element w. */
static bool within_figures(gcase *q, int i, int64_t w, double rtol, double atol, int outs, kf_result *f)
{
    const kf_buffer *x = &q->R.set.b[i];
    kf_dtype t = (kf_dtype)x->dtype;
    unsigned char g[8];
    if (!cu_ok(&q->c, q->B->g.cu.cuMemcpyDtoH(g, (CUdeviceptr)q->R.buf.at[i] + (CUdeviceptr)w * x->elem_bytes,
                                              x->elem_bytes),
               "cuMemcpyDtoH(out)"))
        return false;
    double gv = float_elem(t, g, 0), fv = float_elem(t, q->X->data.ref[i], w);
    snprintf(f->gpu_value, sizeof f->gpu_value, "%.9g", gv);
    snprintf(f->ref_value, sizeof f->ref_value, "%.9g", fv);
    f->abs_err = isnan(gv) != isnan(fv) ? INFINITY : isnan(gv) ? 0 : fabs(gv - fv);
    f->tolerance = atol + rtol * fabs(fv);
    snprintf(f->worst_at, sizeof f->worst_at, "%s", outs > 1 ? x->name : "");
    return true;
}

/* Checks the outputs now in R's buffers against the exact data's
 * reference: on the GPU where it can say "the same bits" or "within the
 * family's tolerance" (outcheck.h), else copied to got[] and compared on
 * the host, where the family counts and names what is wrong.  false when
 * a CUDA call failed. */
bool check_outputs(gcase *q, void **got, run_check *k)
{
    bench *B = q->B;
    runner *R = &q->R;
    const kf_family *fam = family_of(q->v);
    k->host = k->same = false;
    k->bad = 0;
    k->nout = buffer_elems(&R->set, true);
    k->fig = *q->c.r;
    bool gpu = B->oc_state == 1;
    for (int i = 0; gpu && i < R->set.n; i++)
        gpu = !role_is_output(R->set.b[i].role) || q->X->dref[i] || data_bytes(&R->set.b[i]) == 0;
    if (gpu) {
        bool same = true, within = true, differ[KF_MAX_BUFFERS] = {false};
        int64_t worst[KF_MAX_BUFFERS] = {0};
        double rtol[KF_MAX_BUFFERS] = {0}, atol[KF_MAX_BUFFERS] = {0};
        int first = -1, outs = 0;
        for (int i = 0; within && i < R->set.n; i++) {
            const kf_buffer *x = &R->set.b[i];
            if (!role_is_output(x->role))
                continue;
            outs++;
            first = first < 0 ? i : first;
            if (!cu_ok(&q->c, outcheck_differ(&B->oc, R->buf.at[i], q->X->dref[i], data_bytes(x), &differ[i]),
                       "the output check on the GPU"))
                return false;
            if (!differ[i])
                continue;
            same = false;
            int64_t nbad = 1;
            if (fam->tolerance && fam->tolerance(q->v, i, &rtol[i], &atol[i]) &&
                outcheck_can_within(&B->oc, (kf_dtype)x->dtype, x->elems) &&
                !cu_ok(&q->c, outcheck_within(&B->oc, (kf_dtype)x->dtype, R->buf.at[i], q->X->dref[i], x->elems,
                                              rtol[i], atol[i], &nbad, &worst[i]),
                       "the output check on the GPU"))
                return false;
            within = nbad == 0;
        }
        if (same) {
            k->same = true;
            take_figures(&k->fig, self_figures(q));
            return true;
        }
        if (within) { /* bench_compare's figures: those of the first output */
            if (!differ[first])
                take_figures(&k->fig, self_figures(q));
            else if (!within_figures(q, first, worst[first], rtol[first], atol[first], outs, &k->fig))
                return false;
            return true;
        }
    }
    if (!copy_outputs(R, false, got))
        return false;
    k->host = true;
    if (same_outputs(&R->set, got, q->X->data.ref))
        take_figures(&k->fig, self_figures(q));
    else
        k->bad = bench_compare(q->v, q->shape, &q->p, &R->set, got, q->X->data.ref, q->X->data.aux, true, &k->fig,
                               &k->nout);
    return true;
}

/* Keeps the outputs of the first checked run a where a later run must be
 * compared with them on the GPU (not the reference's bits, not on the
 * host). */
static bool keep_outputs(gcase *q, const run_check *a)
{
    if (a->same || a->host)
        return true;
    bench *B = q->B;
    runner *R = &q->R;
    for (int i = 0; i < R->set.n; i++) {
        const kf_buffer *x = &R->set.b[i];
        if (!role_is_output(x->role))
            continue;
        if (!ensure_evicting(&q->c, &B->d_keep[i], &B->keep_cap[i], data_bytes(x) + 16, x->name, q->X) ||
            !cu_ok(&q->c, B->g.cu.cuMemcpyDtoDAsync(B->d_keep[i], R->buf.at[i], data_bytes(x), B->stream),
                   "cuMemcpyDtoDAsync(kept outputs)"))
            return false;
    }
    return cu_ok(&q->c, B->g.cu.cuStreamSynchronize(B->stream), "cuStreamSynchronize(kept outputs)");
}

/* *same: whether the outputs now in R's buffers (checked as k, host
 * copies in got[] when k->host) are the first checked run a's bits. */
bool same_as_first(gcase *q, const run_check *a, const run_check *k, void **got, bool *same)
{
    bench *B = q->B;
    runner *R = &q->R;
    if (a->same || k->same) { /* the GPU compared both with the reference's bits */
        *same = a->same && k->same;
        return true;
    }
    if (!a->host && !k->host) {
        *same = true;
        for (int i = 0; *same && i < R->set.n; i++) {
            bool d = false;
            if (role_is_output(R->set.b[i].role) &&
                !cu_ok(&q->c, outcheck_differ(&B->oc, R->buf.at[i], B->d_keep[i], data_bytes(&R->set.b[i]), &d),
                       "the output check on the GPU"))
                return false;
            *same = !d;
        }
        return true;
    }
    if ((!a->host && !copy_outputs(R, true, B->got)) || (!k->host && !copy_outputs(R, false, got)))
        return false;
    *same = same_outputs(&R->set, B->got, got);
    return true;
}

/* Whether outputs are checked on the GPU (outcheck.h): its module made on
 * first use; false (on the host) with KFORGE_CHECK_ON_HOST=1, or when it
 * cannot be compiled or loaded (said once on stderr). */
bool outcheck_ready(cctx *c)
{
    bench *B = c->B;
    if (B->oc_state)
        return B->oc_state > 0;
    B->oc_state = -1;
    const char *env = getenv("KFORGE_CHECK_ON_HOST");
    if (env && *env && strcmp(env, "0") != 0)
        return false;
    char err[KF_MSG_MAX];
    char *names = NULL;
    void *cubin = compile_here(B, outcheck_source(), "outcheck.cu", &names, err, sizeof err);
    free(names);
    if (!cubin) {
        fprintf(stderr, "kforge: outputs are checked on the host: the GPU's check did not compile: %.300s\n", err);
        return false;
    }
    CUresult e = outcheck_open(&B->oc, &B->g.cu, B->stream, B->g.info.sms, cubin);
    free(cubin);
    if (e != CUDA_SUCCESS) {
        char text[200];
        gpu_error_text(&B->g.cu, e, text, sizeof text);
        fprintf(stderr, "kforge: outputs are checked on the host: the GPU's check did not load: %s\n", text);
        return false;
    }
    B->oc_state = 1;
    kf_trace("output check on the GPU ready");
    return true;
}

/* A wrong run whose outputs (host copies in got) change elements the
 * reference leaves (leave.h): r's message says so first. */
static void say_changed(gcase *q, void *const *got, kf_result *r)
{
    const kf_buffer_set *set = &q->R.set;
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *x = &set->b[i];
        int64_t first;
        int64_t n = role_is_output(x->role) ? leave_changed(got[i], q->X->data.ref[i], x->elems, x->elem_bytes,
                                                            &q->X->leave[i], &first)
                                            : 0;
        if (n) {
            char msg[KF_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", r->message);
            snprintf(r->message, sizeof r->message, "it changes %lld of the %lld elements of %s that the reference "
                     "leaves at their first contents (first at %s[%lld]); %.300s", (long long)n,
                     (long long)q->X->leave[i].left, x->name, x->name, (long long)first, msg);
            return;
        }
    }
}

/* Twice on the exact data, with different poison in the outputs: every
 * output must be bit for bit right, and a deterministic plan must give
 * the same bits twice.  false when a CUDA call failed. */
bool verify_exact(gcase *q)
{
    bench *B = q->B;
    kf_result *r = q->c.r;
    runner *R = &q->R;
    run_check *a = &q->first, k;
    if (!run_poisoned(R, 0xFF) || !check_outputs(q, B->got, a))
        return false;
    if (a->bad) {
        *r = a->fig;
        bench_wrong(r, a->bad, a->nout, "wrong result on the exact data");
        if (a->host)
            say_changed(q, B->got, r);
        return true;
    }
    if (!keep_outputs(q, a) || !run_poisoned_timed(R, 0x00, &q->checked_ms) || !check_outputs(q, B->got2, &k))
        return false;
    bool same = true;
    if (k.bad) {
        *r = k.fig;
        bench_wrong(r, k.bad, k.nout, "result changed between runs (a race or state not reset)");
        if (k.host)
            say_changed(q, B->got2, r);
    } else if (q->p.deterministic) {
        if (!same_as_first(q, a, &k, B->got2, &same))
            return false;
        if (!same) {
            r->status = KF_ST_WRONG;
            snprintf(r->message, sizeof r->message,
                     "result changed between runs although the plan is deterministic: a race or state not reset");
        }
    }
    if (r->status == KF_ST_OK) /* record the first run's figures */
        take_figures(r, &a->fig);
    return true;
}

/* One run on the realistic data, for information (acc_err, acc_bound); a
 * wrong case says what the rounding bound alone would have said. */
bool verify_accuracy(gcase *q)
{
    const kf_family *fam = family_of(q->v);
    if (q->b->no_accuracy || !fam->accuracy || !fam->accuracy(q->v))
        return true;
    bench *B = q->B;
    kf_result *r = q->c.r;
    input_slot *Y = prepare_input(&q->c, false, q->v, q->shape, q->b, false, q->X);
    if (!Y)
        return false;
    runner Q = q->R;
    runner_use(&Q, B, Y, q->b->offset);
    kf_result acc = *r;
    if ((q->planted && !plant_aim_at(&Q, q->mod, q->plant_kind, &q->spec)) || !run_checked(&Q, 0xFF, B->got2))
        return false;
    int64_t nout;
    int64_t abad = bench_compare(q->v, q->shape, &q->p, &Q.set, B->got2, Y->data.ref, Y->data.aux, false, &acc, &nout);
    bench_accuracy(r, &acc, abad);
    return !q->planted || plant_aim_at(&q->R, q->mod, q->plant_kind, &q->spec);
}
