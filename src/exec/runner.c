/*
 * runner.c -- see runner.h.
 */
#include "runner.h"

#include <stdio.h>

#include "buffers.h"
#include "codegen.h"

/* Points R's inputs at slot X's (offset applied) and its other buffers at
 * the worker's own. */
void runner_use(runner *R, bench *B, const input_slot *X, int64_t offset)
{
    R->X = X;
    for (int i = 0; i < R->set.n; i++)
        R->buf.at[i] = R->set.b[i].role == KF_ROLE_IN ? X->d[i] + lead_bytes(&R->set.b[i], offset) : B->d_work[i];
}

/* Runs once with the outputs poisoned (inouts restored) and waits. */
bool run_poisoned(runner *R, unsigned char poison)
{
    return run_poisoned_timed(R, poison, NULL);
}

/* run_poisoned, with a pair of events around the run's launches when ms is
 * given: *ms is its time (0 if the events could not say). */
bool run_poisoned_timed(runner *R, unsigned char poison, double *ms)
{
    cctx *c = R->c;
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    for (int i = 0; i < R->set.n; i++) {
        const kf_buffer *x = &R->set.b[i];
        size_t bytes = data_bytes(x);
        /* an output the reference leaves in part starts from its image
         * (leave.h): the fill where the reference leaves it, the poison
         * elsewhere */
        CUdeviceptr img = x->role == KF_ROLE_OUT && R->X && R->X->leave[i].mask ? R->X->dinit[i][poison ? 0 : 1] : 0;
        if (img && !cu_ok(c, cu->cuMemcpyDtoDAsync(R->buf.at[i], img, bytes, B->stream), "cuMemcpyDtoDAsync(out)"))
            return false;
        if (!img && x->role == KF_ROLE_OUT &&
            !cu_ok(c, cu->cuMemsetD8Async(R->buf.at[i], poison, bytes, B->stream), "cuMemsetD8Async(out)"))
            return false;
        if (x->role == KF_ROLE_INOUT &&
            !cu_ok(c, cu->cuMemcpyDtoDAsync(R->buf.at[i], R->X->d[i] + lead_bytes(x, R->X->offset), bytes, B->stream),
                   "cuMemcpyDtoDAsync(inout)"))
            return false;
    }
    if (!ms)
        return enqueue(R) && cu_ok(c, cu->cuStreamSynchronize(B->stream), "kernel execution");
    *ms = 0;
    if (!cu_ok(c, cu->cuEventRecord(B->ev[0], B->stream), "cuEventRecord") || !enqueue(R) ||
        !cu_ok(c, cu->cuEventRecord(B->ev[1], B->stream), "cuEventRecord") ||
        !cu_ok(c, cu->cuStreamSynchronize(B->stream), "kernel execution"))
        return false;
    float t = 0;
    if (cu->cuEventElapsedTime(&t, B->ev[0], B->ev[1]) == CUDA_SUCCESS)
        *ms = t;
    return true;
}

/* Copies every output to host got[]: R's, or (kept) the first checked
 * run's from d_keep. */
bool copy_outputs(runner *R, bool kept, void **got)
{
    bench *B = R->c->B;
    kf_cu *cu = &B->g.cu;
    for (int i = 0; i < R->set.n; i++)
        if (role_is_output(R->set.b[i].role) &&
            !cu_ok(R->c, cu->cuMemcpyDtoH(got[i], kept ? B->d_keep[i] : (CUdeviceptr)R->buf.at[i],
                                          data_bytes(&R->set.b[i])),
                   "cuMemcpyDtoH(out)"))
            return false;
    return true;
}

/* run_poisoned, then every output copied to host got[]. */
bool run_checked(runner *R, unsigned char poison, void **got)
{
    return run_poisoned(R, poison) && copy_outputs(R, false, got);
}

/* Test hook (KFORGE_PLANT): tells the planted kernel where its fault
 * strikes in the input at `in` of es-byte elements (the module's
 * kf_plant_* globals). */
static bool plant_aim(cctx *c, CUmodule mod, int kind, const kf_plant *spec, CUdeviceptr in, size_t es)
{
    kf_cu *cu = &c->B->g.cu;
    unsigned long long at = spec->elem >= 0 ? in + (CUdeviceptr)spec->elem * es : 0, base = in;
    int shift = spec->shift;
    long long twice = kind == KF_PLANT_DOUBLE_BLOCK ? spec->unit : -1, row = kind == KF_PLANT_ROW_SHIFT ? spec->unit : -1;
    struct {
        const char *name;
        const void *val;
        size_t bytes;
    } g[] = {{"kf_plant_at", &at, 8}, {"kf_plant_shift", &shift, 4}, {"kf_plant_in", &base, 8},
             {"kf_plant_twice", &twice, 8}, {"kf_plant_row", &row, 8}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        CUdeviceptr d;
        size_t bytes = 0;
        if (!cu_ok(c, cu->cuModuleGetGlobal(&d, &bytes, mod, g[i].name), "cuModuleGetGlobal(planted fault)") ||
            !cu_ok(c, cu->cuMemcpyHtoD(d, g[i].val, g[i].bytes), "cuMemcpyHtoD(planted fault)"))
            return false;
    }
    return cu_ok(c, cu->cuCtxSynchronize(), "cuCtxSynchronize(planted fault)");
}

/* plant_aim at R's first input. */
bool plant_aim_at(runner *R, CUmodule mod, int kind, const kf_plant *spec)
{
    int i = buffer_first(&R->set, KF_ROLE_IN);
    return i < 0 || plant_aim(R->c, mod, kind, spec, R->buf.at[i], R->set.b[i].elem_bytes);
}

/* Whether the planted fault changes the answer on the exact data (the
 * family's model of it, as the fake GPU computes it). */
void plant_effect(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, int64_t offset,
                  const kf_plant *spec, input_slot *X, kf_result *r)
{
    kf_result tmp = *r;
    const data_set *d = &X->data;
    int64_t bad = family_of(v)->plant_check(v, shape, p, offset, spec, (const void *const *)d->host, d->ref, d->aux,
                                            true, &tmp);
    snprintf(r->planted_effect, sizeof r->planted_effect, "%s",
             bad < 0 ? "unknown (out of host memory)" : bad ? "changes the answer" : "cannot change the answer");
}
