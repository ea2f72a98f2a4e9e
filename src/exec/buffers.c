/*
 * buffers.c -- see buffers.h.
 */
#include "buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "inputs.h"
#include "runner.h"
#include "util.h"

/* Grows *p to at least bytes (contents not kept). */
static bool ensure(cctx *c, CUdeviceptr *p, size_t *cap, size_t bytes, const char *what)
{
    if (*p && *cap >= bytes)
        return true;
    kf_cu *cu = &c->B->g.cu;
    if (*p)
        cu->cuMemFree(*p);
    *p = 0;
    *cap = 0;
    if (!cu_ok(c, cu->cuMemAlloc(p, bytes), what)) {
        if (c->r->status == KF_ST_OOM) {
            size_t fr = 0, tot = 0;
            cu->cuMemGetInfo(&fr, &tot);
            snprintf(c->r->message, sizeof c->r->message,
                     "out of device memory: %s needs %.2f GiB, %.2f GiB free of %.2f GiB", what,
                     bytes / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0);
        }
        return false;
    }
    *cap = bytes;
    return true;
}

/* Gives up the least recently used kept input other than `keep` (its device
 * memory); false when there is none. */
static bool evict_input(bench *B, const input_slot *keep)
{
    input_slot *lru = NULL;
    for (int i = 0; i < KF_INPUTS; i++) {
        input_slot *S = &B->in[i];
        bool holds = false;
        for (int k = 0; k < KF_MAX_BUFFERS; k++)
            holds = holds || S->d[k] || S->dref[k] || S->dinit[k][0] || S->dinit[k][1];
        if (S != keep && holds && (!lru || S->used < lru->used))
            lru = S;
    }
    if (!lru)
        return false;
    for (int k = 0; k < KF_MAX_BUFFERS; k++) {
        if (lru->d[k])
            B->g.cu.cuMemFree(lru->d[k]);
        if (lru->dref[k])
            B->g.cu.cuMemFree(lru->dref[k]);
        for (int j = 0; j < 2; j++)
            if (lru->dinit[k][j])
                B->g.cu.cuMemFree(lru->dinit[k][j]);
        lru->d[k] = lru->dref[k] = lru->dinit[k][0] = lru->dinit[k][1] = 0;
        lru->cap[k] = lru->refcap[k] = lru->initcap[k][0] = lru->initcap[k][1] = 0;
        leave_free(&lru->leave[k]);
    }
    lru->have = false;
    kf_trace("input of %s given up for device memory", lru->key.exact ? "exact data" : "realistic data");
    return true;
}

/* ensure(), giving up kept inputs (but keep) while device memory is short. */
bool ensure_evicting(cctx *c, CUdeviceptr *p, size_t *cap, size_t bytes, const char *what,
                     const input_slot *keep)
{
    for (;;) {
        if (ensure(c, p, cap, bytes, what))
            return true;
        if (c->r->status != KF_ST_OOM || !evict_input(c->B, keep))
            return false;
        c->r->status = KF_ST_OK;
        c->r->message[0] = '\0';
    }
}

bool host_grow(cctx *c, void **p, size_t bytes)
{
    void *n = realloc(*p, bytes ? bytes : 1);
    if (!n) {
        c->r->status = KF_ST_OOM;
        snprintf(c->r->message, sizeof c->r->message, "out of host memory (%zu bytes)", bytes);
        return false;
    }
    *p = n;
    return true;
}

/* Host to device through two pinned buffers, the host side copied on every
 * CPU while the previous piece goes over the bus: a 1 GiB input in ~0.06 s
 * where cuMemcpyHtoD from pageable memory takes ~0.37 s (H200).  Small
 * copies, and any failure to pin, go the plain way. */
enum { STAGE_BYTES = 64 << 20 };

typedef struct {
    char *dst;
    const char *src;
} copy_job;

static void copy_piece(void *ctx, int64_t piece, int64_t lo, int64_t hi)
{
    (void)piece;
    copy_job *j = ctx;
    memcpy(j->dst + lo, j->src + lo, (size_t)(hi - lo));
}

bool copy_in(cctx *c, CUdeviceptr dst, const void *src, size_t bytes)
{
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    bool staged = bytes >= 2 * (size_t)STAGE_BYTES;
    for (int i = 0; i < 2 && staged; i++) {
        if (!B->stage[i] && cu->cuMemAllocHost(&B->stage[i], STAGE_BYTES) != CUDA_SUCCESS)
            B->stage[i] = NULL;
        if (!B->stage_ev[i] && cu->cuEventCreate(&B->stage_ev[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
            B->stage_ev[i] = NULL;
        staged = B->stage[i] && B->stage_ev[i];
    }
    if (!staged)
        /* From pageable memory cuMemcpyHtoD may return before its DMA
         * lands, and our stream does not wait for the legacy stream
         * (CU_STREAM_NON_BLOCKING): wait for it, or a kernel can read what
         * was there before. */
        return cu_ok(c, cu->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD(input)") &&
               cu_ok(c, cu->cuCtxSynchronize(), "cuCtxSynchronize(input)");
    bool ok = true;
    for (size_t off = 0, k = 0; ok && off < bytes; off += STAGE_BYTES, k++) {
        int s = (int)(k & 1);
        size_t len = bytes - off < (size_t)STAGE_BYTES ? bytes - off : (size_t)STAGE_BYTES;
        if (k >= 2 && !(ok = cu_ok(c, cu->cuEventSynchronize(B->stage_ev[s]), "cuEventSynchronize(input)")))
            break;
        copy_job j = {B->stage[s], (const char *)src + off};
        kf_parallel_for((int64_t)len, 1 << 20, copy_piece, &j);
        ok = cu_ok(c, cu->cuMemcpyHtoDAsync(dst + off, B->stage[s], len, B->stream), "cuMemcpyHtoDAsync(input)") &&
             cu_ok(c, cu->cuEventRecord(B->stage_ev[s], B->stream), "cuEventRecord(input)");
    }
    if (!ok) { /* no copy may still read the staging buffers when the next fills them */
        cu->cuStreamSynchronize(B->stream);
        return false;
    }
    return cu_ok(c, cu->cuStreamSynchronize(B->stream), "cuStreamSynchronize(input)");
}

/* Where buffer i's data starts in its allocation, in bytes. */
size_t lead_bytes(const kf_buffer *b, int64_t offset)
{
    return b->offset ? (size_t)offset * b->elem_bytes : 0;
}

/* The exact data, the worker's own buffers (outputs, scratch with its
 * first contents, host copies) and the planted fault's aim. */
bool prepare_buffers(gcase *q)
{
    const kf_family *fam = family_of(q->v);
    bench *B = q->B;
    kf_cu *cu = &B->g.cu;
    kf_result *r = q->c.r;
    runner *R = &q->R;
    q->plant_kind = codegen_planted(q->v);
    q->planted = q->plant_kind >= KF_PLANT_DROP_FIRST;
    if (!(q->X = prepare_input(&q->c, true, q->v, q->shape, q->b, q->planted, NULL)))
        return false;
    R->c = &q->c;
    R->v = q->v;
    R->shape = q->shape;
    R->p = &q->p;
    variant_buffers(q->v, q->shape, &q->p, &R->set);
    for (int i = 0; i < R->set.n; i++) {
        const kf_buffer *x = &R->set.b[i];
        size_t bytes = data_bytes(x);
        if (role_is_output(x->role) &&
            (!host_grow(&q->c, &B->got[i], bytes) || !host_grow(&q->c, &B->got2[i], bytes)))
            return false;
        if (x->role == KF_ROLE_IN)
            continue;
        if (!ensure_evicting(&q->c, &B->d_work[i], &B->work_cap[i], bytes + 256, x->name, q->X))
            return false;
        if (x->role == KF_ROLE_SCRATCH && bytes > 0) {
            if (!host_grow(&q->c, &B->scratch_host, bytes))
                return false;
            memset(B->scratch_host, 0, bytes);
            if (fam->scratch_init)
                fam->scratch_init(q->v, &q->p, i, B->scratch_host);
            if (!cu_ok(&q->c, cu->cuMemcpyHtoD(B->d_work[i], B->scratch_host, bytes), "cuMemcpyHtoD(scratch)") ||
                !cu_ok(&q->c, cu->cuCtxSynchronize(), "cuCtxSynchronize(scratch)")) /* as for the input */
                return false;
        }
    }
    runner_use(R, B, q->X, q->b->offset);
    q->spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = -1};
    if (!q->planted)
        return true;
    char why[80] = "";
    snprintf(r->planted, sizeof r->planted, "%s", kf_plant_names[q->plant_kind]);
    if (!fam->plant || !fam->plant_check ||
        fam->plant(q->v, q->shape, &q->p, q->b->offset, q->plant_kind, &q->spec, why, sizeof why) != 0) {
        q->spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = -1};
        snprintf(r->planted_effect, sizeof r->planted_effect, "no place: %s", fam->plant ? why : "no model");
    } else {
        plant_effect(q->v, q->shape, &q->p, q->b->offset, &q->spec, q->X, r);
    }
    return plant_aim_at(R, q->mod, q->plant_kind, &q->spec);
}
