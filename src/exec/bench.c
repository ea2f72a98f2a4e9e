/*
 * bench.c -- see bench.h.
 */
#include "bench.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "family.h"
#include "gpu.h"
#include "stats.h"
#include "util.h"
#include "verify.h"

#define KF_BATCH 32
#define KF_MAX_REPS_CAP 100000

/* Inputs kept on the device: the exact and realistic data of up to this
 * many (family, dtype, op, seed, shape, offset) keys, the least recently
 * used given up first when device memory runs short or every slot is
 * taken.  A tune over several sizes makes each size's input once. */
#define KF_INPUTS 32

enum { SLOT_EXACT, SLOT_REAL };

typedef struct {
    bool have;
    int kind;               /* SLOT_EXACT, SLOT_REAL */
    uint64_t used;          /* bench.tick when last used (LRU) */
    int family;
    kf_dtype dtype, acc;
    kf_op op;
    uint64_t seed;
    kf_shape shape;
    int64_t offset;
    CUdeviceptr d;
    size_t cap;
    void *ref;              /* outputs(shape) reference values */
    double *aux;            /* one per output (sum |x| for the float bound) */
    void *host;             /* the host copy, kept only for planted faults */
} input_slot;

struct bench {
    kf_gpu g;
    CUstream stream;
    CUevent ev[2 * KF_BATCH];
    CUdeviceptr flush;
    size_t flush_words;
    /* inputs and their reference outputs (KF_INPUTS): the exact data
     * (verification and timing) and the realistic data (the accuracy of
     * float sums and products) */
    input_slot in[KF_INPUTS];
    uint64_t tick;
    void *got, *got2;       /* host copies of the outputs */
    int64_t nout;
    /* work buffers, grown on demand */
    CUdeviceptr d_ws, d_out;
    size_t ws_cap, out_cap;
    void *ws_init;
    size_t ws_init_cap;
    double *times;
    /* pinned staging for copies of inputs (copy_in), made on first use */
    void *stage[2];
    CUevent stage_ev[2];
    bench_nvml nv;          /* opened once per worker */
    kf_nvml_sampler *smp;   /* NVML readings on their own thread (NULL: in this one) */
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

bench *bench_new(int ordinal, int index, kf_device *dev, bool *missing, char *err, size_t errlen)
{
    *missing = false;
    bench *B = calloc(1, sizeof *B);
    if (!B) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    if (gpu_open(&B->g, ordinal, err, errlen) != 0) {
        *missing = gpu_open_missing(&B->g);
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
    B->times = malloc(sizeof(double) * KF_MAX_REPS_CAP);
    if (!B->times) {
        kf_err(err, errlen, "out of memory");
        goto fail;
    }
    /* NVML names devices in PCI order, CUDA fastest first: find ours by UUID
     * (cuDeviceGetUuid is looked up here: gpu.h's table need not carry it) */
    typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
    uuid_fn get_uuid = (uuid_fn)dlsym(B->g.cu.lib, "cuDeviceGetUuid_v2");
    if (!get_uuid)
        get_uuid = (uuid_fn)dlsym(B->g.cu.lib, "cuDeviceGetUuid");
    CUuuid u;
    if (get_uuid && get_uuid(&u, B->g.dev) == CUDA_SUCCESS && !B->g.info.uuid[0])
        kf_nvml_format_uuid((const unsigned char *)u.bytes, B->g.info.uuid, sizeof B->g.info.uuid);
    kf_trace("gpu %d: NVML", index);
    bench_nvml_open(&B->nv, B->g.info.uuid, index);
    if (B->nv.ok)
        B->smp = kf_nvml_sampler_start(&B->nv.d, 0.02);
    kf_trace("gpu %d: NVML open", index);
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
        CUdeviceptr bufs[] = {B->flush, B->d_ws, B->d_out};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i])
                cu->cuMemFree(bufs[i]);
        for (int i = 0; i < KF_INPUTS; i++)
            if (B->in[i].d)
                cu->cuMemFree(B->in[i].d);
        for (int i = 0; i < 2 * KF_BATCH; i++)
            if (B->ev[i])
                cu->cuEventDestroy(B->ev[i]);
        for (int i = 0; i < 2; i++) {
            if (B->stage[i])
                cu->cuMemFreeHost(B->stage[i]);
            if (B->stage_ev[i])
                cu->cuEventDestroy(B->stage_ev[i]);
        }
        if (B->stream)
            cu->cuStreamDestroy(B->stream);
    }
    gpu_close(&B->g);
    kf_nvml_sampler_stop(B->smp);
    bench_nvml_close(&B->nv);
    free(B->times);
    for (int i = 0; i < KF_INPUTS; i++) {
        free(B->in[i].ref);
        free(B->in[i].aux);
        free(B->in[i].host);
    }
    free(B->got);
    free(B->got2);
    free(B->ws_init);
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

/* Gives up the least recently used kept input other than `keep` (its device
 * memory); false when there is none. */
static bool evict_input(bench *B, const input_slot *keep)
{
    input_slot *lru = NULL;
    for (int i = 0; i < KF_INPUTS; i++) {
        input_slot *S = &B->in[i];
        if (S != keep && S->d && (!lru || S->used < lru->used))
            lru = S;
    }
    if (!lru)
        return false;
    B->g.cu.cuMemFree(lru->d);
    lru->d = 0;
    lru->cap = 0;
    lru->have = false;
    kf_trace("input of %s given up for device memory", lru->kind == SLOT_EXACT ? "exact data" : "realistic data");
    return true;
}

/* ensure(), giving up kept inputs (but keep) while device memory is short. */
static bool ensure_evicting(cctx *c, CUdeviceptr *p, size_t *cap, size_t bytes, const char *what,
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

static bool host_grow(cctx *c, void **p, size_t bytes)
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

// ----------------------------------------------------------------------------
// Input made ahead: the host copy of one exact input and its reference, made by a
// thread while the device opens (cuInit and the context take most of a
// second, and the input of a large case about as long); taken by the first
// prepare_input that wants the same family, dtype, op, seed and shape.

static struct {
    bool started;
    pthread_t th;
    kf_variant v;
    kf_shape shape;
    uint64_t seed;
    void *host, *ref;
    double *aux;
    bool ok;
} ahead;

static void *ahead_main(void *arg)
{
    (void)arg;
    const kf_family *f = family_of(&ahead.v);
    kf_dtype t = variant_dtype(&ahead.v);
    size_t es = kf_dtype_size(t), eo = kf_dtype_size(variant_acc_dtype(&ahead.v));
    int64_t n = f->input_elems(&ahead.shape), nout = f->outputs(&ahead.shape);
    ahead.host = malloc((size_t)n * es + 1);
    ahead.ref = malloc((size_t)nout * eo + 1);
    ahead.aux = malloc((size_t)nout * sizeof(double) + 1);
    if (ahead.host && ahead.ref && ahead.aux) {
        verify_fill_exact(t, variant_op(&ahead.v), ahead.seed, ahead.host, n);
        f->reference(&ahead.v, &ahead.shape, ahead.host, ahead.ref, ahead.aux);
        ahead.ok = true;
        kf_trace("input of %lld elements made ahead", (long long)n);
    }
    return NULL;
}

void bench_make_input_ahead(const kf_variant *v, const kf_shape *shape, const kf_bench *b)
{
    if (ahead.started)
        return;
    ahead.v = *v;
    ahead.shape = *shape;
    ahead.seed = b->seed;
    ahead.ok = false;
    ahead.started = pthread_create(&ahead.th, NULL, ahead_main, NULL) == 0;
}

/* The input made ahead, if it is the one wanted (its buffers then belong to
 * the caller); else NULL, and it is dropped. */
static void *ahead_take(const kf_variant *v, const kf_shape *shape, uint64_t seed, void **ref, double **aux)
{
    if (!ahead.started)
        return NULL;
    pthread_join(ahead.th, NULL);
    ahead.started = false;
    if (ahead.ok && ahead.v.family == v->family && variant_dtype(&ahead.v) == variant_dtype(v) &&
        variant_acc_dtype(&ahead.v) == variant_acc_dtype(v) &&
        variant_op(&ahead.v) == variant_op(v) && ahead.seed == seed && shape_eq(&ahead.shape, shape)) {
        *ref = ahead.ref;
        *aux = ahead.aux;
        return ahead.host;
    }
    free(ahead.host);
    free(ahead.ref);
    free(ahead.aux);
    return NULL;
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

static bool copy_in(cctx *c, CUdeviceptr dst, const void *src, size_t bytes)
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

/* The input of kind k (SLOT_EXACT: verify_fill_exact, SLOT_REAL:
 * verify_fill) on the device, and its reference on the host: a kept one,
 * or made in a free (else the least recently used) slot; NULL on failure
 * (c->r says why).  keep_host: the host copy stays (the planted faults'
 * model).  keep: a slot the caller still uses, never given up. */
static input_slot *prepare_input(cctx *c, int k, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
                                 bool keep_host, const input_slot *keep)
{
    bench *B = c->B;
    const kf_family *f = family_of(v);
    kf_dtype t = variant_dtype(v);
    kf_op op = variant_op(v);
    kf_dtype acc = variant_acc_dtype(v); /* the reference's and the outputs' type */
    size_t es = kf_dtype_size(t), eo = kf_dtype_size(acc);
    int64_t n = f->input_elems(shape);
    int64_t nout = f->outputs(shape);
    if (!host_grow(c, &B->got, (size_t)nout * eo) || !host_grow(c, &B->got2, (size_t)nout * eo))
        return NULL;
    B->nout = nout;
    input_slot *S = NULL;
    for (int i = 0; i < KF_INPUTS && !S; i++) {
        input_slot *x = &B->in[i];
        if (x->have && x->kind == k && x->family == v->family && x->dtype == t && x->acc == acc && x->op == op &&
            x->seed == b->seed && shape_eq(&x->shape, shape) && x->offset == b->offset)
            S = x;
    }
    if (S && (S->host || !keep_host)) {
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
    S->kind = k;
    S->used = ++B->tick;
    free(S->host);
    S->host = NULL;
    /* offset elements before the data and 64 bytes after it hold a poison
     * pattern: a kernel that reads outside the input gets a wrong answer. */
    size_t bytes = ((size_t)b->offset + (size_t)n) * es + 64;
    if (!ensure_evicting(c, &S->d, &S->cap, bytes, k == SLOT_EXACT ? "input" : "input (realistic data)", S))
        return NULL;
    void *ref = NULL;
    double *aux = NULL;
    void *host = k == SLOT_EXACT ? ahead_take(v, shape, b->seed, &ref, &aux) : NULL;
    if (host) {
        free(S->ref);
        free(S->aux);
        S->ref = ref;
        S->aux = aux;
    } else if (!(host = malloc((size_t)n * es + 1))) {
        c->r->status = KF_ST_OOM;
        snprintf(c->r->message, sizeof c->r->message, "out of host memory for %lld input elements", (long long)n);
        return NULL;
    }
    if (!host_grow(c, &S->ref, (size_t)nout * eo) || !host_grow(c, (void **)&S->aux, (size_t)nout * sizeof(double))) {
        free(host);
        return NULL;
    }
    if (!ref) {
        if (k == SLOT_EXACT)
            verify_fill_exact(t, op, b->seed, host, n);
        else
            verify_fill(t, op, b->seed, host, n);
        f->reference(v, shape, host, S->ref, S->aux);
    }
    kf_cu *cu = &B->g.cu;
    bool ok = cu_ok(c, cu->cuMemsetD8Async(S->d, 0x5A, bytes, B->stream), "cuMemsetD8Async(input)") &&
              cu_ok(c, cu->cuStreamSynchronize(B->stream), "cuStreamSynchronize") &&
              copy_in(c, S->d + (CUdeviceptr)b->offset * es, host, (size_t)n * es);
    if (keep_host && ok)
        S->host = host;
    else
        free(host);
    if (!ok)
        return NULL;
    kf_trace("input of %lld elements made", (long long)n);
    S->have = true;
    S->family = v->family;
    S->dtype = t;
    S->acc = acc;
    S->op = op;
    S->seed = b->seed;
    S->shape = *shape;
    S->offset = b->offset;
    return S;
}

/* The engine's side of a family's enqueue. */
struct kf_launcher {
    cctx *c;
    CUfunction f;
};

int kf_launch(kf_launcher *l, int64_t grid, int block, void **args)
{
    bench *B = l->c->B;
    if (grid < 1 || grid > 2147483647LL) {
        l->c->r->status = KF_ST_LAUNCH;
        snprintf(l->c->r->message, sizeof l->c->r->message, "planned grid of %lld blocks is out of range",
                 (long long)grid);
        return -1;
    }
    return cu_ok(l->c, B->g.cu.cuLaunchKernel(l->f, (unsigned)grid, 1, 1, (unsigned)block, 1, 1, 0, B->stream, args,
                                              NULL),
                 "cuLaunchKernel")
               ? 0
               : -1;
}

typedef struct {
    kf_launcher l;
    const kf_variant *v;
    const kf_shape *shape;
    const kf_plan_info *p;
    kf_buffers buf;
    size_t out_bytes;
} runner;

/* Enqueues one whole run (every launch). */
static bool enqueue(runner *R)
{
    return family_of(R->v)->enqueue(&R->l, R->v, R->shape, R->p, &R->buf) == 0;
}

/* Runs once with the output poisoned; copies the outputs to host. */
static bool run_checked(runner *R, unsigned char poison, void *out)
{
    cctx *c = R->l.c;
    kf_cu *cu = &c->B->g.cu;
    return cu_ok(c, cu->cuMemsetD8Async(R->buf.out, poison, R->out_bytes, c->B->stream), "cuMemsetD8Async(out)") &&
           enqueue(R) && cu_ok(c, cu->cuStreamSynchronize(c->B->stream), "kernel execution") &&
           cu_ok(c, cu->cuMemcpyDtoH(out, R->buf.out, R->out_bytes), "cuMemcpyDtoH(out)");
}

/* Test hook (KFORGE_PLANT): tells the planted kernel where its fault
 * strikes in the input at `in` (the module's kf_plant_* globals). */
static bool plant_aim(cctx *c, CUmodule mod, const kf_variant *v, int kind, const kf_plant *spec, CUdeviceptr in)
{
    kf_cu *cu = &c->B->g.cu;
    size_t es = kf_dtype_size(variant_dtype(v));
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

/* Whether the planted fault changes the answer on the exact data (the
 * model of verify_plant_model, as the fake GPU computes it). */
static void plant_effect(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, int64_t offset,
                         const kf_plant *spec, input_slot *X, kf_result *r)
{
    kf_result tmp = *r;
    int64_t bad = verify_plant_check(v, shape, p, offset, spec, X->host, X->ref, X->aux, true, &tmp);
    snprintf(r->planted_effect, sizeof r->planted_effect, "%s",
             bad < 0 ? "unknown (out of host memory)" : bad ? "changes the answer" : "cannot change the answer");
}

/* Says which output is wrong, after compare() filled the values. */
void bench_wrong(kf_result *r, int64_t bad, int64_t nout, const char *what)
{
    r->status = KF_ST_WRONG;
    if (nout > 1)
        snprintf(r->message, sizeof r->message, "%s: %lld of %lld outputs wrong; worst: GPU %s, reference %s "
                 "(|error| %.3g, tolerance %.3g)", what, (long long)bad, (long long)nout, r->gpu_value, r->ref_value,
                 r->abs_err, r->tolerance);
    else
        snprintf(r->message, sizeof r->message, "%s: GPU %s, reference %s (|error| %.3g, tolerance %.3g)", what,
                 r->gpu_value, r->ref_value, r->abs_err, r->tolerance);
}

void bench_accuracy(kf_result *r, const kf_result *acc, int64_t bad)
{
    r->acc_err = acc->abs_err;
    r->acc_bound = acc->tolerance;
    if (r->status == KF_ST_WRONG) {
        size_t len = strlen(r->message);
        snprintf(r->message + len, sizeof r->message - len,
                 "; on the realistic data |error| %.3g against the rounding bound %.3g (%s)", acc->abs_err,
                 acc->tolerance, bad ? "wrong there too" : "the bound alone would have passed it");
    }
}

/* The energy window on the GPU: bench_energy_loop's steps as CUDA calls.
 * The two event slots mark the ends of the two chunks in flight. */
typedef struct {
    cctx *c;
    runner *R;
    kf_nvml_window *w;
    char *nerr;
    size_t nerrlen;
} gpu_energy;

static bool gpu_queue(void *ctx, long runs, int slot)
{
    gpu_energy *g = ctx;
    for (long i = 0; i < runs; i++)
        if (!enqueue(g->R))
            return false;
    return cu_ok(g->c, g->c->B->g.cu.cuEventRecord(g->c->B->ev[slot], g->c->B->stream), "cuEventRecord");
}

static bool gpu_wait(void *ctx, int slot)
{
    gpu_energy *g = ctx;
    if (!cu_ok(g->c, g->c->B->g.cu.cuEventSynchronize(g->c->B->ev[slot]), "energy window"))
        return false;
    kf_nvml_window_sample(g->w, g->nerr[0] ? NULL : g->nerr, g->nerrlen);
    return true;
}

static double gpu_now(void *ctx)
{
    (void)ctx;
    return kf_now();
}

/* The whole reduction back to back, without L2 flushes (their memsets would
 * be charged to the kernel), until the window lasts KF_NVML_MIN_WINDOW_S.
 * false when a launch failed (r says why). */
static bool energy_window(cctx *c, runner *R, double run_s, kf_nvml_window_result *ew, long *runs, char *nerr,
                          size_t nerrlen)
{
    kf_nvml_window w;
    gpu_energy g = {c, R, &w, nerr, nerrlen};
    bench_energy_ops ops = {gpu_queue, gpu_wait, gpu_now, &g};
    double t0 = kf_now(), t_end;
    kf_nvml_window_begin(&w, &c->B->nv.d, t0, nerr[0] ? NULL : nerr, nerrlen);
    *runs = bench_energy_loop(&ops, run_s, t0, KF_NVML_MIN_WINDOW_S, &t_end);
    if (*runs < 0)
        return false;
    kf_nvml_window_end(&w, t_end, ew, nerr[0] ? NULL : nerr, nerrlen);
    return true;
}

int bench_case(bench *B, const kf_variant *v, const kf_shape *shape, const kf_bench *b, const void *cubin,
               size_t cubin_len, kf_result *r)
{
    (void)cubin_len;
    const kf_family *fam = family_of(v);
    cctx c = {.r = r, .B = B, .last = CUDA_SUCCESS};
    kf_cu *cu = &B->g.cu;
    CUmodule mod = NULL;
    CUfunction f;
    size_t es = kf_dtype_size(variant_dtype(v)), eo = kf_dtype_size(variant_acc_dtype(v));
    int block = 0;
    r->v = *v;
    r->shape = *shape;
    r->bench = *b;
    r->status = KF_ST_OK;
    r->message[0] = '\0';
    double tc = kf_now(); /* the case's parts: setup_ms, verify_ms, bench_ms */
    double *part = &r->setup_ms;

    if (!cu_ok(&c, cu->cuModuleLoadData(&mod, cubin), "cuModuleLoadData"))
        goto done;
    if (!cu_ok(&c, cu->cuModuleGetFunction(&f, mod, fam->entry), "cuModuleGetFunction"))
        goto done;
    cu->cuFuncGetAttribute(&r->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    cu->cuFuncGetAttribute(&r->smem_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    block = (int)v->p[fam->p_block];
    if (!cu_ok(&c, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&r->occupancy, f, block, 0),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        goto done;
    if (r->occupancy < 1) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "no block of %d threads fits on an SM (%d registers/thread)",
                 block, r->regs);
        goto done;
    }

    kf_plan_info p;
    if (fam->plan(v, shape, B->g.info.sms, r->occupancy, &p) != 0) {
        r->status = KF_ST_LAUNCH;
        char st[128];
        shape_text(fam, shape, st, sizeof st);
        snprintf(r->message, sizeof r->message, "cannot plan launches for %s", st);
        goto done;
    }
    r->launches = p.launches;
    r->blocks = p.blocks;
    r->deterministic = p.deterministic;

    int plant_kind = codegen_planted(v);
    bool planted = plant_kind >= KF_PLANT_DROP_FIRST;
    input_slot *X = prepare_input(&c, SLOT_EXACT, v, shape, b, planted, NULL);
    if (!X)
        goto done;
    runner R = {.l = {&c, f}, .v = v, .shape = shape, .p = &p};
    R.out_bytes = (size_t)B->nout * eo;
    if (!ensure_evicting(&c, &B->d_out, &B->out_cap, R.out_bytes + 64, "outputs", X))
        goto done;
    if (!ensure_evicting(&c, &B->d_ws, &B->ws_cap, (size_t)p.workspace_bytes + 256, "workspace", X))
        goto done;
    if (p.workspace_bytes > 0) {
        if (!host_grow(&c, &B->ws_init, (size_t)p.workspace_bytes))
            goto done;
        fam->workspace_init(v, &p, B->ws_init);
        if (!cu_ok(&c, cu->cuMemcpyHtoD(B->d_ws, B->ws_init, (size_t)p.workspace_bytes), "cuMemcpyHtoD(workspace)") ||
            !cu_ok(&c, cu->cuCtxSynchronize(), "cuCtxSynchronize(workspace)"))   /* as for the input */
            goto done;
    }
    R.buf.in = X->d + (CUdeviceptr)b->offset * es;
    R.buf.out = B->d_out;
    R.buf.ws = B->d_ws;
    kf_plant spec = {.elem = -1, .unit = -1, .unwritten = -1};
    if (planted) {
        char why[80] = "";
        snprintf(r->planted, sizeof r->planted, "%s", kf_plant_names[plant_kind]);
        if (!fam->plant || fam->plant(v, shape, &p, b->offset, plant_kind, &spec, why, sizeof why) != 0) {
            spec = (kf_plant){.elem = -1, .unit = -1, .unwritten = -1};
            snprintf(r->planted_effect, sizeof r->planted_effect, "no place: %s", fam->plant ? why : "no model");
        } else {
            plant_effect(v, shape, &p, b->offset, &spec, X, r);
        }
        if (!plant_aim(&c, mod, v, plant_kind, &spec, R.buf.in))
            goto done;
    }

    /* --- verify: twice on the exact data, with different poison in the
     * output; every output must be bit for bit right ------------------- */
    r->setup_ms = 1e3 * (kf_now() - tc);
    tc = kf_now();
    part = &r->verify_ms;
    if (!run_checked(&R, 0xFF, B->got))
        goto done;
    int64_t bad = fam->compare(v, shape, &p, B->got, X->ref, X->aux, true, r);
    if (!bad) {
        if (!run_checked(&R, 0x00, B->got2))
            goto done;
        bad = fam->compare(v, shape, &p, B->got2, X->ref, X->aux, true, r);
        if (bad)
            bench_wrong(r, bad, B->nout, "result changed between runs (a race or state not reset)");
        else if (p.deterministic && memcmp(B->got, B->got2, R.out_bytes) != 0) {
            r->status = KF_ST_WRONG;
            snprintf(r->message, sizeof r->message,
                     "result changed between runs although the plan is deterministic: a race or state not reset");
        }
    } else {
        bench_wrong(r, bad, B->nout, "wrong result on the exact data");
    }
    if (r->status == KF_ST_OK)
        fam->compare(v, shape, &p, B->got, X->ref, X->aux, true, r); /* record the first run's figures */

    /* --- accuracy: one run on the realistic data (float sum and prod), for
     * information; a wrong case says what the rounding bound alone would
     * have said ---------------------------------------------------------- */
    if (verify_has_accuracy(variant_dtype(v), variant_op(v))) {
        input_slot *Y = prepare_input(&c, SLOT_REAL, v, shape, b, false, X);
        if (!Y)
            goto done;
        runner Q = R;
        Q.buf.in = Y->d + (CUdeviceptr)b->offset * es;
        kf_result acc = *r;
        if ((planted && !plant_aim(&c, mod, v, plant_kind, &spec, Q.buf.in)) || !run_checked(&Q, 0xFF, B->got2))
            goto done;
        int64_t abad = fam->compare(v, shape, &p, B->got2, Y->ref, Y->aux, false, &acc);
        bench_accuracy(r, &acc, abad);
        if (planted && !plant_aim(&c, mod, v, plant_kind, &spec, R.buf.in))
            goto done;
    }
    if (r->status != KF_ST_OK)
        goto done;

    /* --- time ---------------------------------------------------------- */
    r->verify_ms = 1e3 * (kf_now() - tc);
    tc = kf_now();
    part = &r->bench_ms;
    for (int i = 0; i < b->warmup; i++)
        if (!enqueue(&R))
            goto done;
    if (!cu_ok(&c, cu->cuStreamSynchronize(B->stream), "warm-up"))
        goto done;

    int reps = 0, max_reps = b->max_reps < KF_MAX_REPS_CAP ? b->max_reps : KF_MAX_REPS_CAP;
    kf_nvml_window nw;
    char nerr[160] = "";
    if (B->smp)
        kf_nvml_sampler_open(B->smp, kf_now());
    else if (B->nv.ok)
        kf_nvml_window_begin(&nw, &B->nv.d, kf_now(), nerr, sizeof nerr);
    double t0 = kf_now();
    int batch = b->min_reps < KF_BATCH ? b->min_reps : KF_BATCH;
    bool abandoned = false;
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
            if (!cu_ok(&c, cu->cuEventRecord(B->ev[2 * i], B->stream), "cuEventRecord") || !enqueue(&R) ||
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
        if (B->nv.ok && !B->smp) /* outside the events: costs the timing nothing */
            kf_nvml_window_sample(&nw, nerr[0] ? NULL : nerr, sizeof nerr);
        double elapsed = kf_now() - t0;
        if (stats_should_stop(B->times, reps, elapsed, b))
            break;
        if (b->abandon_ms > 0) {
            kf_stats so_far;
            stats_compute(B->times, reps, &so_far);
            if (so_far.median_ms > b->abandon_ms) {
                abandoned = true;   /* it cannot win: its first repetitions tell */
                break;
            }
        }
        /* next batch: what fits in the remaining budget, at least 1 */
        double per = elapsed / reps;
        double left = b->max_time_s - elapsed;
        int fit = per > 0 ? (int)(left / per) : KF_BATCH;
        batch = fit < 1 ? 1 : (fit > KF_BATCH ? KF_BATCH : fit);
    }
    kf_nvml_window_result tw;
    kf_nvml_reading last;
    if (B->smp) {
        kf_nvml_sampler_close(B->smp, kf_now(), &tw, &last, nerr, sizeof nerr);
    } else if (B->nv.ok) {
        kf_nvml_window_end(&nw, kf_now(), &tw, nerr[0] ? NULL : nerr, sizeof nerr);
        kf_nvml_sample(&B->nv.d, &last, nerr[0] ? NULL : nerr, sizeof nerr);
    }
    stats_compute(B->times, reps, &r->stats);
    stats_bandwidth(&r->stats, fam->bytes(shape, es), B->g.info.peak_gbps);

    /* The last timed run's output must still be right (catches races that
     * two checked runs missed, and single-pass state that drifted). */
    if (!cu_ok(&c, cu->cuMemcpyDtoH(B->got2, B->d_out, R.out_bytes), "cuMemcpyDtoH(out)"))
        goto done;
    kf_result tmp = *r;
    bad = fam->compare(v, shape, &p, B->got2, X->ref, X->aux, true, &tmp);
    if (bad || (p.deterministic && memcmp(B->got, B->got2, R.out_bytes) != 0)) {
        if (bad) {
            *r = tmp;
            bench_wrong(r, bad, B->nout, "result changed during timing");
        } else {
            r->status = KF_ST_WRONG;
            snprintf(r->message, sizeof r->message, "result changed during timing although the plan is deterministic");
        }
    }
    if (r->status == KF_ST_OK && abandoned) {
        r->status = KF_ST_ABANDONED;
        snprintf(r->message, sizeof r->message,
                 "abandoned after %d repetitions: median %.4g ms, above %.4g ms (k x the best so far)", reps,
                 r->stats.median_ms, b->abandon_ms);
    }
    if (r->status == KF_ST_OK && B->nv.ok) {
        kf_nvml_window_result ew;
        long runs = 0;
        if (b->energy && !energy_window(&c, &R, r->stats.median_ms / 1e3, &ew, &runs, nerr, sizeof nerr))
            goto done;
        bench_nvml_record(r, &tw, &last, b->energy ? &ew : NULL, runs, nerr);
    } else if (r->status == KF_ST_OK) {
        snprintf(r->nvml_note, sizeof r->nvml_note, "%s", B->nv.note);
    }

done:
    *part = 1e3 * (kf_now() - tc); /* the part that was under way (all of it on success) */
    kf_nvml_sampler_cancel(B->smp);
    if (c.last != CUDA_SUCCESS && gpu_error_is_sticky(c.last))
        return -1;
    if (mod)
        cu->cuModuleUnload(mod);
    return 0;
}

// ----------------------------------------------------------------------------
// NVML around each case

void bench_nvml_open(bench_nvml *nv, const char *uuid, int index)
{
    memset(nv, 0, sizeof *nv);
    char err[sizeof nv->note];
    if (kf_nvml_open(&nv->m, err, sizeof err) != 0) {
        snprintf(nv->note, sizeof nv->note, "%s", err);
        return;
    }
    if (kf_nvml_device(&nv->m, uuid && *uuid ? uuid : NULL, index, &nv->d, err, sizeof err) != 0) {
        snprintf(nv->note, sizeof nv->note, "NVML not available: %.130s", err);
        kf_nvml_close(&nv->m);
        return;
    }
    nv->ok = true;
}

void bench_nvml_close(bench_nvml *nv)
{
    if (nv && nv->ok)
        kf_nvml_close(&nv->m);
    if (nv)
        nv->ok = false;
}

long bench_energy_loop(const bench_energy_ops *o, double run_s, double t0, double min_s, double *t_end)
{
    const double chunk_s = 0.05;
    long chunk = bench_energy_runs(run_s, chunk_s), runs = chunk, done = 0, pending[2] = {chunk, 0};
    if (!o->queue(o->ctx, chunk, 0))
        return -1;
    for (int k = 1;; k++) {
        int slot = k & 1;
        if (!o->queue(o->ctx, chunk, slot))
            return -1;
        pending[slot] = chunk;
        runs += chunk;
        /* the older chunk; the newer one keeps the GPU busy meanwhile */
        if (!o->wait(o->ctx, 1 - slot))
            return -1;
        done += pending[1 - slot];
        double elapsed = o->now(o->ctx) - t0;
        /* long enough already: the window ends with the chunk in flight.
         * (The timed repetitions' rate is only a first guess: back to back,
         * without flushes, runs are often faster; 10 s caps a guess far off
         * the other way.) */
        if (elapsed >= min_s || elapsed > 10) {
            if (!o->wait(o->ctx, slot))
                return -1;
            *t_end = o->now(o->ctx);
            return runs;
        }
        if (elapsed > 0)
            chunk = bench_energy_runs(elapsed / (double)done, chunk_s);
    }
}

long bench_energy_runs(double run_s, double window_s)
{
    if (!(run_s > 0) || !(window_s > 0))
        return 1;
    double n = ceil(window_s / run_s);
    return n < 1 ? 1 : n > 1e8 ? 100000000L : (long)n;
}

void bench_nvml_record(kf_result *r, const kf_nvml_window_result *timed, const kf_nvml_reading *last,
                       const kf_nvml_window_result *energy, long runs, const char *note)
{
    r->nvml = true;
    unsigned lo = timed->min_sm_mhz, hi = timed->max_sm_mhz, temp = timed->max_temp_c;
    unsigned long long reasons = timed->reasons;
    bool have_reasons = timed->have_reasons;
    if (energy) {
        if (energy->min_sm_mhz && (!lo || energy->min_sm_mhz < lo))
            lo = energy->min_sm_mhz;
        if (energy->max_sm_mhz > hi)
            hi = energy->max_sm_mhz;
        if (energy->max_temp_c > temp)
            temp = energy->max_temp_c;
        reasons |= energy->reasons;
        have_reasons = have_reasons || energy->have_reasons;
    }
    r->sm_mhz_min = (int)lo;
    r->sm_mhz_max = (int)hi;
    r->temp_c = (int)temp;
    r->sm_mhz_limit = last->have & KF_NVML_HAVE_MAX_SM_CLOCK ? (int)last->max_sm_mhz : 0;
    r->mem_mhz = last->have & KF_NVML_HAVE_MEM_CLOCK ? (int)last->mem_mhz : 0;
    r->power_w = last->have & KF_NVML_HAVE_POWER ? last->power_w : 0;
    r->throttled = have_reasons && kf_nvml_throttled(reasons);
    if (have_reasons)
        kf_nvml_throttle_text(reasons, r->throttle_reasons, sizeof r->throttle_reasons);
    else
        r->throttle_reasons[0] = '\0';
    r->energy_j = 0;
    r->energy_runs = 0;
    r->energy_window_s = 0;
    r->nvml_note[0] = '\0';
    if (energy && energy->energy_valid && runs > 0 && energy->energy_j > 0) {
        r->energy_j = energy->energy_j / (double)runs;
        r->energy_runs = runs > INT32_MAX ? INT32_MAX : (int)runs;
        r->energy_window_s = energy->seconds;
        r->power_w = energy->power_w;
    } else if (energy) {
        snprintf(r->nvml_note, sizeof r->nvml_note, "no energy: %.140s",
                 energy->energy_note[0] ? energy->energy_note : "the counter did not advance");
    }
    if (note && note[0] && !r->nvml_note[0])
        snprintf(r->nvml_note, sizeof r->nvml_note, "%s", note);
}

/* A simulated GPU for the fake's energy window: chunks run one after the
 * other, each run taking run_s; the clock moves only when the host waits. */
typedef struct {
    double run_s, now, gpu_free, end[2];
    kf_nvml_window *w;
} sim_gpu;

static bool sim_queue(void *ctx, long runs, int slot)
{
    sim_gpu *g = ctx;
    double start = g->gpu_free > g->now ? g->gpu_free : g->now;
    g->gpu_free = g->end[slot] = start + (double)runs * g->run_s;
    return true;
}

static bool sim_wait(void *ctx, int slot)
{
    sim_gpu *g = ctx;
    if (g->end[slot] > g->now)
        g->now = g->end[slot];
    if (g->w)
        kf_nvml_window_sample(g->w, NULL, 0);
    return true;
}

static double sim_now(void *ctx)
{
    return ((sim_gpu *)ctx)->now;
}

long bench_energy_simulate(double guess_s, double true_s, double min_s, double *window_s)
{
    sim_gpu g = {.run_s = true_s};
    bench_energy_ops ops = {sim_queue, sim_wait, sim_now, &g};
    double t_end = 0;
    long runs = bench_energy_loop(&ops, guess_s, 0, min_s, &t_end);
    *window_s = t_end;
    return runs;
}

void bench_nvml_fake(bench_nvml *nv, const kf_bench *b, kf_result *r)
{
    if (r->status != KF_ST_OK)
        return;
    if (!nv->ok) {
        snprintf(r->nvml_note, sizeof r->nvml_note, "%s", nv->note);
        return;
    }
    char err[160] = "";
    double run_s = r->stats.median_ms / 1e3, t = 0;
    kf_nvml_window w;
    kf_nvml_window_result tw, ew;
    kf_nvml_reading last;
    kf_nvml_window_begin(&w, &nv->d, t, err, sizeof err);
    kf_nvml_window_sample(&w, err[0] ? NULL : err, sizeof err);
    t += r->stats.reps * run_s;
    kf_nvml_window_end(&w, t, &tw, err[0] ? NULL : err, sizeof err);
    kf_nvml_sample(&nv->d, &last, err[0] ? NULL : err, sizeof err);
    long runs = 0;
    if (b->energy) {
        /* the same schedule as on a GPU, on a clock that only counts; the
         * energy counter is read at the window's ends only */
        sim_gpu g = {.run_s = run_s, .now = t, .gpu_free = t};
        bench_energy_ops ops = {sim_queue, sim_wait, sim_now, &g};
        double t_end = t;
        kf_nvml_window_begin(&w, &nv->d, t, err[0] ? NULL : err, sizeof err);
        runs = bench_energy_loop(&ops, run_s, t, KF_NVML_MIN_WINDOW_S, &t_end);
        kf_nvml_window_end(&w, t_end, &ew, err[0] ? NULL : err, sizeof err);
    }
    bench_nvml_record(r, &tw, &last, b->energy ? &ew : NULL, runs, err);
}
