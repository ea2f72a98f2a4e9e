/*
 * bench_impl.h -- the state that the files measuring one case in the GPU
 * worker share (bench.h; private to src/exec/): the worker's bench, the
 * inputs it keeps on the device, a case's CUDA calls (cctx, cu_ok), the
 * launcher's kernels, a runner of one run, what a check found, and the
 * case itself.  The steps of bench_case: module.h (load and plan),
 * buffers.h and inputs.h (buffers, input data), reference.h (a family's
 * reference variant), runner.h (one run), checks.h (verify), timing.h
 * (time) and energy_gpu.h (the energy window).
 */
#ifndef KF_BENCH_IMPL_H
#define KF_BENCH_IMPL_H

#include <stdio.h>

#include "bench.h"
#include "data.h"
#include "family.h"
#include "gpu.h"
#include "launch.h"
#include "leave.h"
#include "outcheck.h"

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

static inline bool cu_ok(cctx *c, CUresult res, const char *what)
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

/* The engine's side of a family's enqueue (launch.h): cuLaunchKernel on
 * the worker's stream, opting in to more than 48 KiB of dynamic shared
 * memory where a launch asks for it. */
typedef struct {
    cctx *c;
    CUfunction fn[KF_MAX_KERNELS];
    unsigned smem_set[KF_MAX_KERNELS];  /* dynamic shared memory opted in to so far */
} gpu_kernels;

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
static inline bool enqueue(runner *R)
{
    return family_of(R->v)->enqueue(&R->l, R->v, R->shape, R->p, &R->buf) == 0;
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

#endif
