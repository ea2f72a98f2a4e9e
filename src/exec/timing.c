/*
 * timing.c -- see timing.h.
 */
#include "timing.h"

#include <stdio.h>

#include "checks.h"
#include "energy_gpu.h"
#include "stats.h"
#include "util.h"

/* --abandon-above: a verified case whose second checked run alone (its L2
 * not flushed, so if anything faster than a timed repetition) took longer
 * than k x the best so far cannot win: it is abandoned before any timed
 * repetition, with that run's time as its figures. */
bool abandon_checked(gcase *q)
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
bool time_case(gcase *q)
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
