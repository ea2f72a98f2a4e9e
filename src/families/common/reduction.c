/*
 * reduction.c -- see reduction.h.
 */
#include "reduction.h"

#include <stdio.h>
#include <string.h>

#include "verify.h"

void reduction_buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set)
{
    const reduction_ops *o = reduction_of(v);
    kf_dtype t = variant_dtype(v), acc = variant_out_dtype(v); /* the accumulator's type, or acc_dtype input's */
    set->n = 3;
    set->b[RED_IN] = (kf_buffer){"in", KF_ROLE_IN, (int)t, kf_dtype_size(t), o->input_elems(s), true};
    set->b[RED_OUT] = (kf_buffer){"out", KF_ROLE_OUT, (int)acc, kf_dtype_size(acc), o->outputs(s), false};
    set->b[RED_WS] = (kf_buffer){"workspace", KF_ROLE_SCRATCH, -1, 1, p ? p->workspace_bytes : 0, false};
}

void reduction_fill(const kf_variant *v, const kf_shape *s, int buf, uint64_t seed, bool exact, void *host,
                    int64_t elems)
{
    (void)buf;
    kf_dtype t = variant_dtype(v), out = variant_out_dtype(v);
    if (exact && out == t && kf_dtype_is_half(t)) { /* results rounded to the 2-byte input type */
        int64_t segs = 1, len = elems, stride = elems;
        if (reduction_of(v)->segments)
            reduction_of(v)->segments(s, &segs, &len, &stride);
        verify_fill_exact_rounded(t, variant_op(v), seed, host, elems, segs, len, stride);
    } else if (exact)
        verify_fill_exact(variant_dtype(v), variant_op(v), seed, host, elems);
    else
        verify_fill(variant_dtype(v), variant_op(v), seed, host, elems);
}

void reduction_scratch_init(const kf_variant *v, const kf_plan_info *p, int buf, void *host)
{
    (void)buf;
    if (p->workspace_bytes > 0)
        reduction_of(v)->workspace_init(v, p, host);
}

void reduction_reference(const kf_variant *v, const kf_shape *s, const void *const *in, void *const *ref,
                         double *const *aux)
{
    reduction_of(v)->reference(v, s, in[RED_IN], ref[RED_OUT], aux[RED_OUT]);
}

int64_t reduction_compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int buf, const void *got,
                          const void *ref, const double *aux, bool exact, kf_result *r)
{
    (void)buf;
    return reduction_of(v)->compare(v, s, p, got, ref, aux, exact, r);
}

bool reduction_accuracy(const kf_variant *v)
{
    return verify_has_accuracy(variant_dtype(v), variant_op(v));
}

int64_t reduction_plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                              const kf_plant *spec, const void *const *in, void *const *ref, double *const *aux,
                              bool exact, kf_result *r)
{
    return verify_plant_check(v, s, p, offset, spec, (void *)in[RED_IN], ref[RED_OUT], aux[RED_OUT], exact, r);
}
