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
#include "data.h"
#include "datashare.h"
#include "family.h"
#include "gpu.h"
#include "launch.h"
#include "leave.h"
#include "outcheck.h"
#include "rtc.h"
#include "stats.h"
#include "util.h"

#define KF_BATCH 32
/* --abandon-above decides after this many timed repetitions */
#define KF_ABANDON_REPS 3
#define KF_MAX_REPS_CAP 100000

/* Data kept on the device: the exact and realistic inputs of up to this
 * many keys (data.h: family, key axes, shape, seed, lengths; and the
 * offset), the least recently used given up first when device memory runs
 * short or every slot is taken.  A tune over several sizes makes each
 * size's input once. */
#define KF_INPUTS 32

typedef struct {
    bool have;
    uint64_t used;          /* bench.tick when last used (LRU) */
    data_key key;
    int64_t offset;
    data_set data;          /* the references; the inputs' host copies only when kept (planted faults) */
    CUdeviceptr d[KF_MAX_BUFFERS];  /* inputs on the device, poison around them */
    size_t cap[KF_MAX_BUFFERS];
    /* the exact data's reference outputs on the device (the GPU's check) */
    CUdeviceptr dref[KF_MAX_BUFFERS];
    size_t refcap[KF_MAX_BUFFERS];
    bool have_fig;          /* fig: compare's figures of the reference against itself */
    kf_result fig;
    /* the elements of each out buffer that the reference variant leaves
     * (leave.h), and, where it leaves any, the outputs' first contents
     * before a run poisoned 0xFF ([0]) and 0x00 ([1]) on the device */
    leave_map leave[KF_MAX_BUFFERS];
    CUdeviceptr dinit[KF_MAX_BUFFERS][2];
    size_t initcap[KF_MAX_BUFFERS][2];
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
    /* host copies of the outputs of two runs, per buffer */
    void *got[KF_MAX_BUFFERS], *got2[KF_MAX_BUFFERS];
    /* outputs, inouts and scratch on the device, grown on demand */
    CUdeviceptr d_work[KF_MAX_BUFFERS];
    size_t work_cap[KF_MAX_BUFFERS];
    /* the outputs checked on the GPU (outcheck.h): oc_state 0 not tried
     * yet, 1 open, -1 on the host (KFORGE_CHECK_ON_HOST, or it failed to
     * compile or load); d_keep the first checked run's outputs where they
     * are not the reference's bits (determinism is checked against them) */
    kf_outcheck oc;
    int oc_state;
    CUdeviceptr d_keep[KF_MAX_BUFFERS];
    size_t keep_cap[KF_MAX_BUFFERS];
    void *scratch_host;     /* a scratch buffer's first contents */
    double *times;
    /* pinned staging for copies of inputs (copy_in), made on first use */
    void *stage[2];
    CUevent stage_ev[2];
    bench_nvml nv;          /* opened once per worker */
    kf_nvml_sampler *smp;   /* NVML readings on their own thread (NULL: in this one) */
    /* optional Driver API calls (CUDA 12.4+), looked up in bench_new: the
     * kernels a module defines (C++ entries, and the list an unknown entry
     * shows) and a kernel's parameters (the check of a family's arg_sizes) */
    CUresult (*fn_count)(unsigned *count, CUmodule mod);
    CUresult (*fn_enum)(CUfunction *fns, unsigned n, CUmodule mod);
    CUresult (*fn_name)(const char **name, CUfunction fn);
    CUresult (*fn_param)(CUfunction fn, size_t i, size_t *offset, size_t *size);
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
    B->fn_count = (CUresult(*)(unsigned *, CUmodule))dlsym(B->g.cu.lib, "cuModuleGetFunctionCount");
    B->fn_enum = (CUresult(*)(CUfunction *, unsigned, CUmodule))dlsym(B->g.cu.lib, "cuModuleEnumerateFunctions");
    B->fn_name = (CUresult(*)(const char **, CUfunction))dlsym(B->g.cu.lib, "cuFuncGetName");
    B->fn_param = (CUresult(*)(CUfunction, size_t, size_t *, size_t *))dlsym(B->g.cu.lib, "cuFuncGetParamInfo");
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
        if (B->flush)
            cu->cuMemFree(B->flush);
        for (int k = 0; k < KF_MAX_BUFFERS; k++) {
            if (B->d_work[k])
                cu->cuMemFree(B->d_work[k]);
            if (B->d_keep[k])
                cu->cuMemFree(B->d_keep[k]);
            for (int i = 0; i < KF_INPUTS; i++) {
                if (B->in[i].d[k])
                    cu->cuMemFree(B->in[i].d[k]);
                if (B->in[i].dref[k])
                    cu->cuMemFree(B->in[i].dref[k]);
                for (int j = 0; j < 2; j++)
                    if (B->in[i].dinit[k][j])
                        cu->cuMemFree(B->in[i].dinit[k][j]);
            }
        }
        if (B->oc_state == 1)
            outcheck_close(&B->oc);
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
        data_free(&B->in[i].data);
        for (int k = 0; k < KF_MAX_BUFFERS; k++)
            leave_free(&B->in[i].leave[k]);
    }
    for (int k = 0; k < KF_MAX_BUFFERS; k++) {
        free(B->got[k]);
        free(B->got2[k]);
    }
    free(B->scratch_host);
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

/* Whether slot S holds the host copies of its inputs. */
static bool has_host(const input_slot *S)
{
    for (int i = 0; i < S->data.set.n; i++)
        if (role_is_input(S->data.set.b[i].role) && !S->data.host[i])
            return false;
    return true;
}

/* Where buffer i's data starts in its allocation, in bytes. */
static size_t lead_bytes(const kf_buffer *b, int64_t offset)
{
    return b->offset ? (size_t)offset * b->elem_bytes : 0;
}

static bool gpu_reference(cctx *c, input_slot *S, const kf_variant *v, const kf_shape *shape, const kf_bench *b);
static bool outcheck_ready(cctx *c);

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
static input_slot *prepare_input(cctx *c, bool exact, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
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
    kf_trace("inputs made");
    S->have = true;
    S->key = k;
    S->offset = b->offset;
    return S;
}

/* The engine's side of a family's enqueue (launch.h): cuLaunchKernel on
 * the worker's stream, opting in to more than 48 KiB of dynamic shared
 * memory where a launch asks for it. */
typedef struct {
    cctx *c;
    CUfunction fn[KF_MAX_KERNELS];
    unsigned smem_set[KF_MAX_KERNELS];  /* dynamic shared memory opted in to so far */
} gpu_kernels;

static int gpu_go(kf_launcher *l, int k, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args)
{
    gpu_kernels *K = l->ctx;
    kf_cu *cu = &K->c->B->g.cu;
    if (smem > (48u << 10) && smem > K->smem_set[k]) {
        if (!cu_ok(K->c, cu->cuFuncSetAttribute(K->fn[k], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                   "cuFuncSetAttribute(dynamic shared memory)"))
            return -1;
        K->smem_set[k] = smem;
    }
    return cu_ok(K->c, cu->cuLaunchKernel(K->fn[k], grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
                                          K->c->B->stream, args, NULL),
                 "cuLaunchKernel")
               ? 0
               : -1;
}

typedef struct {
    kf_launcher l;
    cctx *c;
    const kf_variant *v;
    const kf_shape *shape;
    const kf_plan_info *p;
    kf_buffer_set set;      /* the buffers, scratch lengths from the plan */
    kf_buffers buf;
    const input_slot *X;    /* whose inouts are restored before a checked run */
} runner;

/* Enqueues one whole run (every launch). */
static bool enqueue(runner *R)
{
    return family_of(R->v)->enqueue(&R->l, R->v, R->shape, R->p, &R->buf) == 0;
}

/* Points R's inputs at slot X's (offset applied) and its other buffers at
 * the worker's own. */
static void runner_use(runner *R, bench *B, const input_slot *X, int64_t offset)
{
    R->X = X;
    for (int i = 0; i < R->set.n; i++)
        R->buf.at[i] = R->set.b[i].role == KF_ROLE_IN ? X->d[i] + lead_bytes(&R->set.b[i], offset) : B->d_work[i];
}

/* Runs once with the outputs poisoned (inouts restored) and waits. */
static bool run_poisoned_timed(runner *R, unsigned char poison, double *ms);

static bool run_poisoned(runner *R, unsigned char poison)
{
    return run_poisoned_timed(R, poison, NULL);
}

/* run_poisoned, with a pair of events around the run's launches when ms is
 * given: *ms is its time (0 if the events could not say). */
static bool run_poisoned_timed(runner *R, unsigned char poison, double *ms)
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
static bool copy_outputs(runner *R, bool kept, void **got)
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
static bool run_checked(runner *R, unsigned char poison, void **got)
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
static bool plant_aim_at(runner *R, CUmodule mod, int kind, const kf_plant *spec)
{
    int i = buffer_first(&R->set, KF_ROLE_IN);
    return i < 0 || plant_aim(R->c, mod, kind, spec, R->buf.at[i], R->set.b[i].elem_bytes);
}

/* Whether the planted fault changes the answer on the exact data (the
 * family's model of it, as the fake GPU computes it). */
static void plant_effect(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, int64_t offset,
                         const kf_plant *spec, input_slot *X, kf_result *r)
{
    kf_result tmp = *r;
    const data_set *d = &X->data;
    int64_t bad = family_of(v)->plant_check(v, shape, p, offset, spec, (const void *const *)d->host, d->ref, d->aux,
                                            true, &tmp);
    snprintf(r->planted_effect, sizeof r->planted_effect, "%s",
             bad < 0 ? "unknown (out of host memory)" : bad ? "changes the answer" : "cannot change the answer");
}

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

/* What the check of one run's outputs found. */
typedef struct {
    bool host;      /* compared on the host: the outputs are in the got[] given */
    bool same;      /* the reference's bits (the GPU said so) */
    int64_t bad, nout;
    kf_result fig;  /* compare's figures; with bad, its status and message too */
} run_check;

/* One case on the GPU, as bench_case's steps see it. */
typedef struct {
    bench *B;
    cctx c;
    const kf_variant *v;
    const kf_shape *shape;
    const kf_bench *b;
    CUmodule mod;
    gpu_kernels K;
    kf_plan_info p;
    runner R;
    input_slot *X;          /* the exact data */
    int plant_kind;         /* KFORGE_PLANT */
    bool planted;
    kf_plant spec;
    const char *names;      /* the module's lowered names (rtc.h), or NULL */
    run_check first;        /* the first checked run (verify_exact) */
    double checked_ms;      /* the second checked run's time (events; L2 not flushed), 0 if unknown */
} gcase;

/* The block of kernel 0 and its dynamic shared memory (family.h). */
static void block_of(const kf_variant *v, kf_dim3 *block, unsigned *smem)
{
    const kf_family *f = family_of(v);
    *block = (kf_dim3){1, 1, 1};
    *smem = 0;
    if (f->block_shape)
        f->block_shape(v, block, smem);
    else
        block->x = (unsigned)v->p[f->p_block];
}

/* The kernels module mod defines, as "a, b, c" (CUDA 12.4+; else a note). */
static void module_kernels(bench *B, CUmodule mod, char *buf, size_t len)
{
    unsigned n = 0;
    CUfunction fns[64];
    snprintf(buf, len, "(not known: the driver cannot list a module's kernels)");
    if (!B->fn_count || !B->fn_enum || !B->fn_name || B->fn_count(&n, mod) != CUDA_SUCCESS)
        return;
    n = n > 64 ? 64 : n;
    if (B->fn_enum(fns, n, mod) != CUDA_SUCCESS)
        return;
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && o < len; i++) {
        const char *name = NULL;
        if (B->fn_name(&name, fns[i]) == CUDA_SUCCESS && name)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", name);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* The Itanium mangling of a template argument list's simple types
 * ("float" -> "f", "float, 4" -> "fLi4E"): false when a type is not one. */
static bool mangle_args(const char *args, char *out, size_t len)
{
    static const char *const types[][2] = {
        {"float", "f"}, {"double", "d"}, {"int", "i"}, {"unsigned int", "j"}, {"unsigned", "j"}, {"long long", "x"},
        {"unsigned long long", "y"}, {"long", "l"}, {"unsigned long", "m"}, {"short", "s"}, {"char", "c"},
        {"signed char", "a"}, {"unsigned char", "h"}, {"bool", "b"}, {"__half", "6__half"}, {"half", "6__half"}};
    size_t o = 0;
    out[0] = '\0';
    const char *p = args;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        while (n > 0 && p[n - 1] == ' ')
            n--;
        char tok[64];
        if (n == 0 || n >= sizeof tok)
            return false;
        memcpy(tok, p, n);
        tok[n] = '\0';
        const char *code = NULL;
        for (size_t t = 0; t < sizeof types / sizeof types[0] && !code; t++)
            if (strcmp(tok, types[t][0]) == 0)
                code = types[t][1];
        char num[48];
        long long x;
        if (!code && kf_parse_ll(tok, &x)) {
            snprintf(num, sizeof num, x < 0 ? "Lin%lldE" : "Li%lldE", x < 0 ? -x : x);
            code = num;
        }
        if (!code || o + strlen(code) >= len)
            return false;
        o += (size_t)snprintf(out + o, len - o, "%s", code);
        p += n;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
    }
    return o > 0;
}

/* A C++ entry ("transpose", "transpose<float>", "ns::k" not handled) in
 * mod: the one kernel whose mangled name is _Z<len><name>, with
 * I<args>E after it for a template instantiation.  CUDA 12.4+. */
static bool find_cxx(bench *B, CUmodule mod, const char *entry, CUfunction *fn)
{
    unsigned n = 0;
    CUfunction fns[256];
    if (!B->fn_count || !B->fn_enum || !B->fn_name || B->fn_count(&n, mod) != CUDA_SUCCESS)
        return false;
    n = n > 256 ? 256 : n;
    if (B->fn_enum(fns, n, mod) != CUDA_SUCCESS)
        return false;
    size_t base = strcspn(entry, "<");
    char prefix[320], targs[128] = "";
    snprintf(prefix, sizeof prefix, "_Z%zu%.*s", base, (int)base, entry);
    if (entry[base] == '<') {
        char inner[200];
        const char *close = strrchr(entry, '>');
        if (!close || close < entry + base)
            return false;
        snprintf(inner, sizeof inner, "%.*s", (int)(close - entry - base - 1), entry + base + 1);
        char m[120];
        if (!mangle_args(inner, m, sizeof m))
            return false;
        snprintf(targs, sizeof targs, "I%sE", m);
    }
    int found = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *name = NULL;
        if (B->fn_name(&name, fns[i]) != CUDA_SUCCESS || !name || strncmp(name, prefix, strlen(prefix)) != 0)
            continue;
        const char *rest = name + strlen(prefix);
        if (targs[0] ? strncmp(rest, targs, strlen(targs)) == 0 : rest[0] != 'I') {
            *fn = fns[i];
            found++;
        }
    }
    return found == 1;
}

/* The family's kernels in mod, for launcher l; each checked against the
 * family's arg_sizes where the driver can tell a kernel's parameters.  An
 * unknown entry lists the kernels the module defines. */
static bool get_kernels(cctx *c, CUmodule mod, const kf_variant *v, const char *names, gpu_kernels *K,
                        kf_launcher *l)
{
    const kf_family *fam = family_of(v);
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    kf_result *r = c->r;
    for (int k = 0; k < fam->nentries && k < KF_MAX_KERNELS; k++) {
        const char *e = fam->entries[k];
        char lowered[512];
        /* NVRTC's lowered name (a name expression), else the name itself, else
         * a C++ name's mangling of simple template arguments */
        CUresult res = cu->cuModuleGetFunction(&K->fn[k], mod, rtc_name_lookup(names, e, lowered, sizeof lowered) ?
                                                                   lowered : e);
        if (res == CUDA_ERROR_NOT_FOUND && find_cxx(B, mod, e, &K->fn[k]))
            res = CUDA_SUCCESS;
        if (res == CUDA_ERROR_NOT_FOUND) {
            char list[400];
            module_kernels(B, mod, list, sizeof list);
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "no kernel \"%s\" in the module (an extern \"C\" name, a C++ "
                     "name, or a template instantiated in the source); it defines: %s", e, list);
            return false;
        }
        char what[160];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", e);
        if (!cu_ok(c, res, what))
            return false;
        cu->cuFuncGetAttribute(&l->max_threads[k], CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, K->fn[k]);
        cu->cuFuncGetAttribute(&l->static_smem[k], CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, K->fn[k]);
        size_t want[32];
        int nwant = fam->arg_sizes ? fam->arg_sizes(v, k, want, 32) : -1;
        if (nwant < 0 || !B->fn_param)
            continue;
        int have = 0;
        size_t off, size;
        CUresult pr;
        while (have < 64 && (pr = B->fn_param(K->fn[k], (size_t)have, &off, &size)) == CUDA_SUCCESS) {
            if (have < nwant && size != want[have]) {
                r->status = KF_ST_LAUNCH;
                snprintf(r->message, sizeof r->message, "the arguments do not match kernel %s: argument %d is %zu "
                         "bytes in the config, the kernel's parameter %d takes %zu", e, have, want[have], have, size);
                return false;
            }
            have++;
        }
        if (pr != CUDA_ERROR_INVALID_VALUE) /* past the last parameter; anything else: the driver cannot tell */
            continue;
        if (have != nwant) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "the arguments do not match kernel %s: the config gives %d, the "
                     "kernel takes %d", e, nwant, have);
            return false;
        }
    }
    return true;
}

/* The family's module constants (family.h: kf_constant) written into mod
 * before any launch: each variable looked up by name and checked to hold
 * what the family describes, its contents made from the seed and copied
 * in.  false with c->r saying why: a missing variable or one too small is
 * a launch error naming it and both sizes. */
static bool set_constants(cctx *c, CUmodule mod, const kf_variant *v, const kf_shape *shape, uint64_t seed)
{
    if (!family_of(v)->constants)
        return true;
    kf_cu *cu = &c->B->g.cu;
    kf_result *r = c->r;
    kf_constant_set set;
    void *host[KF_MAX_CONSTANTS];
    if (data_constants(v, shape, seed, &set, host) != 0) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory for the module's constants");
        return false;
    }
    static const char *const ctype[KF_DTYPE_COUNT] = {"int", "unsigned", "long long", "float", "double",
                                                      "__nv_bfloat16", "__half"};
    bool ok = true;
    for (int i = 0; ok && i < set.n; i++) {
        const kf_constant *k = &set.c[i];
        size_t want = (size_t)k->elems * k->elem_bytes, have = 0;
        char type[32];
        snprintf(type, sizeof type, "%s", k->dtype >= 0 ? kf_dtype_names[k->dtype] : "bytes");
        CUdeviceptr d = 0;
        CUresult res = cu->cuModuleGetGlobal(&d, &have, mod, k->name);
        if (res == CUDA_ERROR_NOT_FOUND) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "constant \"%s\": no __constant__ or __device__ variable of that "
                     "name in the module (it must be declared at file scope, outside any namespace, e.g. "
                     "__constant__ %s %s[%lld];)", k->name, k->dtype >= 0 && k->dtype < KF_DTYPE_COUNT ?
                     ctype[k->dtype] : "char", k->name, (long long)k->elems);
            ok = false;
            break;
        }
        char what[128];
        snprintf(what, sizeof what, "cuModuleGetGlobal(%s)", k->name);
        if (!(ok = cu_ok(c, res, what)))
            break;
        if (have < want) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "constant \"%s\": the module's variable is %zu bytes, the config "
                     "describes %zu (%lld %s)", k->name, have, want, (long long)k->elems, type);
            ok = false;
            break;
        }
        snprintf(what, sizeof what, "cuMemcpyHtoD(constant %s)", k->name);
        ok = want == 0 || cu_ok(c, cu->cuMemcpyHtoD(d, host[i], want), what);
    }
    int n = set.n;
    data_constants_free(&set, host);
    /* a copy from pageable memory may still be under way when cuMemcpyHtoD
     * returns: done before any launch on the worker's stream */
    return ok && (n == 0 || cu_ok(c, cu->cuCtxSynchronize(), "cuCtxSynchronize(constants)"));
}

/* Loads the module and its kernels, works out the occupancy and plans the
 * launches. */
static bool load_and_plan(gcase *q, const void *cubin)
{
    const kf_family *fam = family_of(q->v);
    kf_cu *cu = &q->B->g.cu;
    kf_result *r = q->c.r;
    kf_launcher *l = &q->R.l;
    if (!cu_ok(&q->c, cu->cuModuleLoadData(&q->mod, cubin), "cuModuleLoadData"))
        return false;
    *l = (kf_launcher){.dev = &q->B->g.info, .r = r, .nkernels = fam->nentries, .go = gpu_go, .ctx = &q->K};
    q->K.c = &q->c;
    if (!get_kernels(&q->c, q->mod, q->v, q->names, &q->K, l) || !set_constants(&q->c, q->mod, q->v, q->shape, q->b->seed))
        return false;
    cu->cuFuncGetAttribute(&r->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, q->K.fn[0]);
    kf_dim3 block;
    unsigned smem;
    block_of(q->v, &block, &smem);
    r->smem_bytes = l->static_smem[0] + (int)smem;
    char why[200];
    if (launch_check(l, 0, (kf_dim3){1, 1, 1}, block, smem, why, sizeof why) != 0) {
        r->status = KF_ST_SKIPPED;
        snprintf(r->message, sizeof r->message, "skipped: %s", why);
        return false;
    }
    int threads = (int)(block.x * block.y * block.z);
    if (smem > (48u << 10)) {
        if (!cu_ok(&q->c, cu->cuFuncSetAttribute(q->K.fn[0], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                   "cuFuncSetAttribute(dynamic shared memory)"))
            return false;
        q->K.smem_set[0] = smem;
    }
    if (!cu_ok(&q->c, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&r->occupancy, q->K.fn[0], threads, smem),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        return false;
    if (r->occupancy < 1) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "no block of %d threads fits on an SM (%d registers/thread)", threads,
                 r->regs);
        return false;
    }
    if (fam->plan(q->v, q->shape, q->B->g.info.sms, r->occupancy, &q->p) != 0) {
        r->status = KF_ST_LAUNCH;
        char st[128];
        shape_text(fam, q->shape, st, sizeof st);
        snprintf(r->message, sizeof r->message, "cannot plan launches for %s", st);
        return false;
    }
    r->launches = q->p.launches;
    r->blocks = q->p.blocks;
    r->deterministic = q->p.deterministic;
    return true;
}

/* The exact data, the worker's own buffers (outputs, scratch with its
 * first contents, host copies) and the planted fault's aim. */
static bool prepare_buffers(gcase *q)
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

/* Whether two runs' outputs are the same bits. */
static bool same_outputs(const kf_buffer_set *set, void *const *a, void *const *b)
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
static bool check_outputs(gcase *q, void **got, run_check *k)
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
static bool same_as_first(gcase *q, const run_check *a, const run_check *k, void **got, bool *same)
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

/* src compiled for this device in the worker (the cubin cache first):
 * the cubin, or NULL with NVRTC's log or the error in err. */
static void *compile_here(bench *B, const char *src, const char *name, char **names, char *err, size_t errlen)
{
    *names = NULL;
    rtc_options opt;
    memset(&opt, 0, sizeof opt);
    snprintf(opt.arch, sizeof opt.arch, "sm_%d%d", B->g.info.cc_major, B->g.info.cc_minor);
    rtc_cache cache;
    char path[PATH_MAX], cerr[KF_MSG_MAX];
    void *cubin = NULL;
    size_t len = 0;
    bool cached = rtc_cache_init(&cache, NULL, true, cerr, sizeof cerr) == 0;
    if (cached && rtc_cache_lookup(&cache, src, &opt, path, sizeof path))
        cubin = kf_read_file(path, &len, cerr, sizeof cerr);
    if (cubin) {
        char np[PATH_MAX];
        rtc_names_path(path, np, sizeof np);
        size_t nlen = 0;
        *names = kf_read_file(np, &nlen, NULL, 0); /* NULL: none asked for */
        return cubin;
    }
    char *log = NULL;
    if (rtc_compile_named(src, name, &opt, &cubin, &len, &log, names, err, errlen) != 0) {
        if (log)
            snprintf(err, errlen, "%s", log);
        free(log);
        return NULL;
    }
    free(log);
    if (cached)
        rtc_cache_store_named(&cache, src, &opt, cubin, len, *names, path, sizeof path, cerr, sizeof cerr);
    return cubin;
}

/* Whether outputs are checked on the GPU (outcheck.h): its module made on
 * first use; false (on the host) with KFORGE_CHECK_ON_HOST=1, or when it
 * cannot be compiled or loaded (said once on stderr). */
static bool outcheck_ready(cctx *c)
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
static bool gpu_reference(cctx *c, input_slot *S, const kf_variant *v, const kf_shape *shape, const kf_bench *b)
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
static bool verify_exact(gcase *q)
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
static bool verify_accuracy(gcase *q)
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

/* --abandon-above: a verified case whose second checked run alone (its L2
 * not flushed, so if anything faster than a timed repetition) took longer
 * than k x the best so far cannot win: it is abandoned before any timed
 * repetition, with that run's time as its figures. */
static bool abandon_checked(gcase *q)
{
    const kf_bench *b = q->b;
    kf_result *r = q->c.r;
    if (!(b->abandon_ms > 0) || !(q->checked_ms > b->abandon_ms))
        return false;
    const double t = q->checked_ms;
    stats_compute(&t, 1, &r->stats);
    const kf_family *fam = family_of(q->v);
    stats_bandwidth(&r->stats, fam->bytes(q->v, q->shape), q->B->g.info.peak_gbps);
    if (fam->flops)
        stats_flops(&r->stats, fam->flops(q->v, q->shape), q->B->g.info.peak_gflops);
    r->status = KF_ST_ABANDONED;
    snprintf(r->message, sizeof r->message,
             "abandoned after its checked runs: one took %.4g ms (L2 not flushed), above %.4g ms (k x the best so "
             "far)", t, b->abandon_ms);
    return true;
}

/* Warm-up, then timed repetitions (L2 flushed before each, events around
 * each) until the stopping rule (stats_should_stop) or abandon_ms says;
 * the last run's outputs must still be right; NVML around it all. */
static bool time_case(gcase *q)
{
    const kf_family *fam = family_of(q->v);
    bench *B = q->B;
    cctx *c = &q->c;
    kf_cu *cu = &B->g.cu;
    kf_result *r = c->r;
    const kf_bench *b = q->b;
    runner *R = &q->R;
    for (int i = 0; i < b->warmup; i++)
        if (!enqueue(R))
            return false;
    if (!cu_ok(c, cu->cuStreamSynchronize(B->stream), "warm-up"))
        return false;

    int reps = 0, max_reps = b->max_reps < KF_MAX_REPS_CAP ? b->max_reps : KF_MAX_REPS_CAP;
    kf_nvml_window nw;
    char nerr[160] = "";
    if (B->smp)
        kf_nvml_sampler_open(B->smp, kf_now());
    else if (B->nv.ok)
        kf_nvml_window_begin(&nw, &B->nv.d, kf_now(), nerr, sizeof nerr);
    double t0 = kf_now();
    int batch = b->min_reps < KF_BATCH ? b->min_reps : KF_BATCH;
    if (b->abandon_ms > 0 && batch > KF_ABANDON_REPS) /* a loser shows in its first repetitions */
        batch = KF_ABANDON_REPS;
    kf_bench budget_only = *b; /* a race: no early stop on the noise rules */
    budget_only.max_noise = -1;
    budget_only.max_median_ci = 0;
    bool abandoned = false, raced = false;
    double race_lo = 0, race_med = 0, race_hi = 0;
    for (;;) {
        if (batch > max_reps - reps)
            batch = max_reps - reps;
        if (batch < 1)
            batch = 1;
        for (int i = 0; i < batch; i++) {
            if (b->flush_l2 &&
                !cu_ok(c, cu->cuMemsetD32Async(B->flush, (unsigned)(reps + i), B->flush_words, B->stream),
                       "cuMemsetD32Async(L2 flush)"))
                return false;
            /* each repetition is waited for before the next is enqueued:
             * with the next flush queued behind it, a short kernel's
             * events read ~0.7 us longer (H100, 2026-11-25: 4.70 against
             * 4.13 us at 2^12 bfloat16, the same kernel; docs/method.md) */
            if (!cu_ok(c, cu->cuEventRecord(B->ev[2 * i], B->stream), "cuEventRecord") || !enqueue(R) ||
                !cu_ok(c, cu->cuEventRecord(B->ev[2 * i + 1], B->stream), "cuEventRecord") ||
                !cu_ok(c, cu->cuEventSynchronize(B->ev[2 * i + 1]), "timed repetitions"))
                return false;
        }
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            if (!cu_ok(c, cu->cuEventElapsedTime(&ms, B->ev[2 * i], B->ev[2 * i + 1]), "cuEventElapsedTime"))
                return false;
            B->times[reps++] = ms;
        }
        if (B->nv.ok && !B->smp) /* outside the events: costs the timing nothing */
            kf_nvml_window_sample(&nw, nerr[0] ? NULL : nerr, sizeof nerr);
        double elapsed = kf_now() - t0;
        if (stats_should_stop(B->times, reps, elapsed, b->race ? &budget_only : b))
            break;
        if (b->abandon_ms > 0) {
            kf_stats so_far;
            stats_compute(B->times, reps, &so_far);
            if (so_far.median_ms > b->abandon_ms) {
                abandoned = true;   /* it cannot win: its first repetitions tell */
                break;
            }
        }
        if (b->race_ms > 0 && stats_median_interval(B->times, reps, &race_lo, &race_med, &race_hi) &&
            race_lo > KF_RACE_MARGIN * b->race_ms) {
            raced = true; /* slower than the best so far, with 95% confidence */
            break;
        }
        /* next batch: what fits in the remaining budget, at least 1; in a
         * race, no more than were taken so far, so that the interval is
         * looked at after 6, 12, 24, ... repetitions */
        double per = elapsed / reps;
        double left = b->max_time_s - elapsed;
        int fit = per > 0 ? (int)(left / per) : KF_BATCH;
        if (b->race && fit > reps)
            fit = reps;
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
    stats_bandwidth(&r->stats, fam->bytes(q->v, q->shape), B->g.info.peak_gbps);
    if (fam->flops)
        stats_flops(&r->stats, fam->flops(q->v, q->shape), B->g.info.peak_gflops);

    /* The last timed run's outputs must still be right (catches races that
     * two checked runs missed, and single-pass state that drifted); an
     * inout buffer went through every timed run: nothing to check. */
    bool inout = false;
    for (int i = 0; i < R->set.n; i++)
        inout = inout || R->set.b[i].role == KF_ROLE_INOUT;
    run_check k;
    if (!inout && !check_outputs(q, B->got2, &k))
        return false;
    bool same = true;
    if (inout) {
    } else if (k.bad) {
        kf_result keep = *r;
        *r = k.fig;
        r->stats = keep.stats;
        bench_wrong(r, k.bad, k.nout, "result changed during timing");
    } else if (q->p.deterministic && (!same_as_first(q, &q->first, &k, B->got2, &same) || !same)) {
        if (q->c.last != CUDA_SUCCESS)
            return false;
        r->status = KF_ST_WRONG;
        snprintf(r->message, sizeof r->message, "result changed during timing although the plan is deterministic");
    }
    if (r->status == KF_ST_OK && abandoned) {
        r->status = KF_ST_ABANDONED;
        snprintf(r->message, sizeof r->message,
                 "abandoned after %d repetitions: median %.4g ms, above %.4g ms (k x the best so far)", reps,
                 r->stats.median_ms, b->abandon_ms);
    } else if (r->status == KF_ST_OK && raced) {
        r->status = KF_ST_ABANDONED;
        snprintf(r->message, sizeof r->message,
                 "abandoned after %d repetitions: median %.4g ms, its 95%% interval %.4g..%.4g ms above the best so "
                 "far (%.4g ms) + 2%%", reps, race_med, race_lo, race_hi, b->race_ms);
    }
    if (r->status == KF_ST_OK && B->nv.ok) {
        kf_nvml_window_result ew;
        long runs = 0;
        if (b->energy && !energy_window(c, R, r->stats.median_ms / 1e3, &ew, &runs, nerr, sizeof nerr))
            return false;
        bench_nvml_record(r, &tw, &last, b->energy ? &ew : NULL, runs, nerr);
    } else if (r->status == KF_ST_OK) {
        snprintf(r->nvml_note, sizeof r->nvml_note, "%s", B->nv.note);
    }
    return true;
}

int bench_case(bench *B, const kf_variant *v, const kf_shape *shape, const kf_bench *b, const void *cubin,
               size_t cubin_len, const char *names, kf_result *r)
{
    (void)cubin_len;
    gcase q = {.B = B, .c = {.r = r, .B = B, .last = CUDA_SUCCESS}, .v = v, .shape = shape, .b = b, .names = names};
    r->v = *v;
    r->shape = *shape;
    r->bench = *b;
    r->status = KF_ST_OK;
    r->message[0] = '\0';
    /* the case's parts: setup_ms (module, plan, buffers), verify_ms, bench_ms */
    double tc = kf_now();
    if (load_and_plan(&q, cubin) && prepare_buffers(&q)) {
        r->setup_ms = 1e3 * (kf_now() - tc);
        tc = kf_now();
        bool ok = verify_exact(&q) && verify_accuracy(&q);
        r->verify_ms = 1e3 * (kf_now() - tc);
        tc = kf_now();
        if (ok && r->status == KF_ST_OK && !abandon_checked(&q)) {
            time_case(&q);
            r->bench_ms = 1e3 * (kf_now() - tc);
        }
    } else {
        r->setup_ms = 1e3 * (kf_now() - tc);
    }
    kf_nvml_sampler_cancel(B->smp);
    if (q.c.last != CUDA_SUCCESS && gpu_error_is_sticky(q.c.last))
        return -1;
    if (q.mod)
        B->g.cu.cuModuleUnload(q.mod);
    return 0;
}
