/*
 * energy_gpu.c -- see energy_gpu.h.
 */
#include "energy_gpu.h"

#include "util.h"

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
bool energy_window(cctx *c, runner *R, double run_s, kf_nvml_window_result *ew, long *runs, char *nerr,
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
