/*
 * energy.c -- see energy.h.
 */
#include "energy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

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
