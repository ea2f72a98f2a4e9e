/*
 * bench.c -- see bench.h.
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "gpu.h"
#include "plan.h"
#include "stats.h"
#include "util.h"
#include "verify.h"

#define KF_BATCH 32
#define KF_MAX_REPS_CAP 100000

struct bench {
    kf_gpu g;
    CUstream stream;
    CUevent ev[2 * KF_BATCH];
    CUdeviceptr flush;
    size_t flush_words;
    /* input, kept while cases share dtype, op, seed, n and offset */
    bool have_input;
    kf_dtype in_dtype;
    kf_op in_op;
    uint64_t in_seed;
    int64_t in_n, in_offset;
    CUdeviceptr d_in;
    size_t in_cap;
    kf_value ref;
    double abs_sum;
    /* work buffers, grown on demand */
    CUdeviceptr d_part[2];
    size_t part_cap[2];
    CUdeviceptr d_scratch;
    size_t scratch_cap;
    CUdeviceptr d_out, d_ticket;
    double *times;
};

/* Result of a CUDA call inside a case: sticky errors end the worker. */
typedef struct {
    kf_result *r;
    bench *B;
    CUresult last;
} cctx;

static bool cu_ok(cctx *c, CUresult res, const char *what)
{
    if (res == CUDA_SUCCESS)
        return true;
    c->last = res;
    char text[200];
    gpu_error_text(&c->B->g.cu, res, text, sizeof text);
    if (res == CUDA_ERROR_OUT_OF_MEMORY)
        c->r->status = KF_ST_OOM;
    else if (gpu_error_is_sticky(res))
        c->r->status = KF_ST_FAULT;
    else
        c->r->status = KF_ST_LAUNCH;
    snprintf(c->r->message, sizeof c->r->message, "%s: %s", what, text);
    return false;
}

bench *bench_new(int ordinal, kf_device *dev, char *err, size_t errlen)
{
    bench *B = calloc(1, sizeof *B);
    if (!B) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    if (gpu_open(&B->g, ordinal, err, errlen) != 0) {
        free(B);
        return NULL;
    }
    kf_cu *cu = &B->g.cu;
    if (CU_CALL(&B->g, err, errlen, cu->cuStreamCreate(&B->stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        goto fail;
    for (int i = 0; i < 2 * KF_BATCH; i++)
        if (CU_CALL(&B->g, err, errlen, cu->cuEventCreate(&B->ev[i], CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
            goto fail;
    /* Twice the L2 size, so that a memset over it evicts everything the
     * previous repetition left in L2. */
    size_t flush_bytes = (size_t)(B->g.info.l2_bytes > 0 ? B->g.info.l2_bytes : (64 << 20)) * 2;
    B->flush_words = flush_bytes / 4;
    if (CU_CALL(&B->g, err, errlen, cu->cuMemAlloc(&B->flush, flush_bytes)) != CUDA_SUCCESS)
        goto fail;
    if (CU_CALL(&B->g, err, errlen, cu->cuMemAlloc(&B->d_out, 256)) != CUDA_SUCCESS)
        goto fail;
    if (CU_CALL(&B->g, err, errlen, cu->cuMemAlloc(&B->d_ticket, 256)) != CUDA_SUCCESS)
        goto fail;
    B->times = malloc(sizeof(double) * KF_MAX_REPS_CAP);
    if (!B->times) {
        kf_err(err, errlen, "out of memory");
        goto fail;
    }
    *dev = B->g.info;
    return B;
fail:
    bench_free(B);
    return NULL;
}

void bench_free(bench *B)
{
    if (!B)
        return;
    kf_cu *cu = &B->g.cu;
    if (B->g.have_ctx) {
        cu->cuCtxSynchronize();
        CUdeviceptr bufs[] = {B->flush, B->d_in, B->d_part[0], B->d_part[1], B->d_scratch, B->d_out, B->d_ticket};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i])
                cu->cuMemFree(bufs[i]);
        for (int i = 0; i < 2 * KF_BATCH; i++)
            if (B->ev[i])
                cu->cuEventDestroy(B->ev[i]);
        if (B->stream)
            cu->cuStreamDestroy(B->stream);
    }
    gpu_close(&B->g);
    free(B->times);
    free(B);
}

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

static bool prepare_input(cctx *c, const kf_variant *v, int64_t n, const kf_bench *b)
{
    bench *B = c->B;
    if (B->have_input && B->in_dtype == v->dtype && B->in_op == v->op && B->in_seed == b->seed &&
        B->in_n == n && B->in_offset == b->offset)
        return true;
    B->have_input = false;
    size_t es = kf_dtype_size(v->dtype);
    /* offset elements before the data and 64 bytes after it hold a poison
     * pattern: a kernel that reads outside [0, n) gets a wrong answer. */
    size_t bytes = ((size_t)b->offset + (size_t)n) * es + 64;
    if (!ensure(c, &B->d_in, &B->in_cap, bytes, "input"))
        return false;
    void *host = malloc((size_t)n * es);
    if (!host) {
        c->r->status = KF_ST_OOM;
        snprintf(c->r->message, sizeof c->r->message, "out of host memory for %lld input elements", (long long)n);
        return false;
    }
    verify_fill(v->dtype, v->op, b->seed, host, n);
    B->ref = verify_reference(v->dtype, v->op, host, n, &B->abs_sum);
    kf_cu *cu = &B->g.cu;
    bool ok = cu_ok(c, cu->cuMemsetD8Async(B->d_in, 0x5A, bytes, B->stream), "cuMemsetD8Async(input)") &&
              cu_ok(c, cu->cuStreamSynchronize(B->stream), "cuStreamSynchronize") &&
              cu_ok(c, cu->cuMemcpyHtoD(B->d_in + (CUdeviceptr)b->offset * es, host, (size_t)n * es),
                    "cuMemcpyHtoD(input)");
    free(host);
    if (!ok)
        return false;
    B->have_input = true;
    B->in_dtype = v->dtype;
    B->in_op = v->op;
    B->in_seed = b->seed;
    B->in_n = n;
    B->in_offset = b->offset;
    return true;
}

/* Enqueues one whole reduction (every pass). */
static bool enqueue(cctx *c, CUfunction f, const kf_variant *v, const kf_plan *p, CUdeviceptr in)
{
    bench *B = c->B;
    CUdeviceptr src = in;
    for (int k = 0; k < p->npasses; k++) {
        CUdeviceptr dst = k == p->npasses - 1 ? B->d_out : B->d_part[k % 2];
        unsigned long long nn = (unsigned long long)p->n_in[k];
        void *args[] = {&src, &nn, &dst, &B->d_scratch, &B->d_ticket};
        if (!cu_ok(c, B->g.cu.cuLaunchKernel(f, (unsigned)p->blocks[k], 1, 1, (unsigned)v->block_size, 1, 1, 0,
                                             B->stream, args, NULL),
                   "cuLaunchKernel"))
            return false;
        src = dst;
    }
    return true;
}

/* Resets the single-pass state (scratch[0] = identity, ticket = 0). */
static bool reset_state(cctx *c, const kf_variant *v)
{
    bench *B = c->B;
    kf_value id = verify_identity(v->dtype, v->op);
    return cu_ok(c, B->g.cu.cuMemsetD32Async(B->d_ticket, 0, 1, B->stream), "cuMemsetD32Async(ticket)") &&
           cu_ok(c, B->g.cu.cuStreamSynchronize(B->stream), "cuStreamSynchronize") &&
           cu_ok(c, B->g.cu.cuMemcpyHtoD(B->d_scratch, &id, kf_dtype_size(v->dtype)), "cuMemcpyHtoD(scratch)");
}

/* Runs once with the output poisoned, returns the output. */
static bool run_checked(cctx *c, CUfunction f, const kf_variant *v, const kf_plan *p, CUdeviceptr in,
                        unsigned char poison, kf_value *out)
{
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    memset(out, 0, sizeof *out);
    return cu_ok(c, cu->cuMemsetD8Async(B->d_out, poison, 16, B->stream), "cuMemsetD8Async(out)") &&
           enqueue(c, f, v, p, in) && cu_ok(c, cu->cuStreamSynchronize(B->stream), "kernel execution") &&
           cu_ok(c, cu->cuMemcpyDtoH(out, B->d_out, kf_dtype_size(v->dtype)), "cuMemcpyDtoH(out)");
}

static bool same_bits(kf_value a, kf_value b, size_t es)
{
    return memcmp(&a, &b, es) == 0;
}

int bench_case(bench *B, const kf_variant *v, int64_t n, const kf_bench *b, const void *cubin,
               size_t cubin_len, kf_result *r)
{
    (void)cubin_len;
    cctx c = {.r = r, .B = B, .last = CUDA_SUCCESS};
    kf_cu *cu = &B->g.cu;
    CUmodule mod = NULL;
    CUfunction f;
    size_t es = kf_dtype_size(v->dtype);
    r->v = *v;
    r->n = n;
    r->status = KF_ST_OK;
    r->message[0] = '\0';

    if (!cu_ok(&c, cu->cuModuleLoadData(&mod, cubin), "cuModuleLoadData"))
        goto done;
    if (!cu_ok(&c, cu->cuModuleGetFunction(&f, mod, KF_ENTRY), "cuModuleGetFunction"))
        goto done;
    cu->cuFuncGetAttribute(&r->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    cu->cuFuncGetAttribute(&r->smem_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    if (!cu_ok(&c, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&r->occupancy, f, v->block_size, 0),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        goto done;
    if (r->occupancy < 1) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "no block of %d threads fits on an SM (%d registers/thread)",
                 v->block_size, r->regs);
        goto done;
    }

    kf_plan p;
    if (plan_make(v, n, B->g.info.sms, r->occupancy, &p) != 0) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "cannot plan launches for n=%lld", (long long)n);
        goto done;
    }
    r->launches = p.npasses;
    r->blocks = p.blocks[0];
    r->deterministic = p.deterministic;

    if (!prepare_input(&c, v, n, b))
        goto done;
    for (int i = 0; i < 2 && p.partial_elems > 0; i++)
        if (!ensure(&c, &B->d_part[i], &B->part_cap[i], (size_t)p.partial_elems * es + 64, "partials"))
            goto done;
    if (!ensure(&c, &B->d_scratch, &B->scratch_cap, (size_t)(p.scratch_elems > 0 ? p.scratch_elems : 1) * es + 64,
                "scratch"))
        goto done;
    if (!reset_state(&c, v))
        goto done;

    CUdeviceptr in = B->d_in + (CUdeviceptr)b->offset * es;

    /* --- verify: twice, with different poison in the output ----------- */
    kf_value got1, got2;
    double tol = verify_tolerance(v->dtype, v->op, n, p.depth, B->abs_sum, B->ref);
    if (!run_checked(&c, f, v, &p, in, 0xFF, &got1))
        goto done;
    if (!verify_compare(v->dtype, v->op, got1, B->ref, tol, r)) {
        r->status = KF_ST_WRONG;
        snprintf(r->message, sizeof r->message, "wrong result: GPU %s, reference %s (|error| %.3g, tolerance %.3g)",
                 r->gpu_value, r->ref_value, r->abs_err, r->tolerance);
        goto done;
    }
    if (!run_checked(&c, f, v, &p, in, 0x00, &got2))
        goto done;
    if (!verify_compare(v->dtype, v->op, got2, B->ref, tol, r) ||
        (p.deterministic && !same_bits(got1, got2, es))) {
        char a[48], bb[48];
        verify_format(v->dtype, got1, a, sizeof a);
        verify_format(v->dtype, got2, bb, sizeof bb);
        r->status = KF_ST_WRONG;
        snprintf(r->message, sizeof r->message,
                 "result changed between runs: %s then %s (reference %s): a race or state not reset", a, bb,
                 r->ref_value);
        goto done;
    }
    verify_compare(v->dtype, v->op, got1, B->ref, tol, r); /* record the first run's figures */

    /* --- time ---------------------------------------------------------- */
    for (int i = 0; i < b->warmup; i++)
        if (!enqueue(&c, f, v, &p, in))
            goto done;
    if (!cu_ok(&c, cu->cuStreamSynchronize(B->stream), "warm-up"))
        goto done;

    int reps = 0, max_reps = b->max_reps < KF_MAX_REPS_CAP ? b->max_reps : KF_MAX_REPS_CAP;
    double t0 = kf_now();
    int batch = b->min_reps < KF_BATCH ? b->min_reps : KF_BATCH;
    for (;;) {
        if (batch > max_reps - reps)
            batch = max_reps - reps;
        if (batch < 1)
            batch = 1;
        for (int i = 0; i < batch; i++) {
            if (b->flush_l2 &&
                !cu_ok(&c, cu->cuMemsetD32Async(B->flush, (unsigned)(reps + i), B->flush_words, B->stream),
                       "cuMemsetD32Async(L2 flush)"))
                goto done;
            if (!cu_ok(&c, cu->cuEventRecord(B->ev[2 * i], B->stream), "cuEventRecord") ||
                !enqueue(&c, f, v, &p, in) ||
                !cu_ok(&c, cu->cuEventRecord(B->ev[2 * i + 1], B->stream), "cuEventRecord"))
                goto done;
        }
        if (!cu_ok(&c, cu->cuEventSynchronize(B->ev[2 * batch - 1]), "timed repetitions"))
            goto done;
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            if (!cu_ok(&c, cu->cuEventElapsedTime(&ms, B->ev[2 * i], B->ev[2 * i + 1]), "cuEventElapsedTime"))
                goto done;
            B->times[reps++] = ms;
        }
        double elapsed = kf_now() - t0;
        if (stats_should_stop(B->times, reps, elapsed, b))
            break;
        /* next batch: what fits in the remaining budget, at least 1 */
        double per = elapsed / reps;
        double left = b->max_time_s - elapsed;
        int fit = per > 0 ? (int)(left / per) : KF_BATCH;
        batch = fit < 1 ? 1 : (fit > KF_BATCH ? KF_BATCH : fit);
    }
    stats_compute(B->times, reps, &r->stats);
    stats_bandwidth(&r->stats, n, es, B->g.info.peak_gbps);

    /* The last timed run's output must still be right (catches races that
     * two checked runs missed, and single-pass state that drifted). */
    kf_value last;
    if (!cu_ok(&c, cu->cuMemcpyDtoH(&last, B->d_out, es), "cuMemcpyDtoH(out)"))
        goto done;
    kf_result tmp = *r;
    if (!verify_compare(v->dtype, v->op, last, B->ref, tol, &tmp) || (p.deterministic && !same_bits(last, got1, es))) {
        char a[48];
        verify_format(v->dtype, last, a, sizeof a);
        r->status = KF_ST_WRONG;
        snprintf(r->message, sizeof r->message, "result changed during timing: %s, first %s (reference %s)", a,
                 r->gpu_value, r->ref_value);
    }

done:
    if (c.last != CUDA_SUCCESS && gpu_error_is_sticky(c.last))
        return -1;
    if (mod)
        cu->cuModuleUnload(mod);
    return 0;
}
