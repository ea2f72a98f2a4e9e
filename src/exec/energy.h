/*
 * energy.h -- NVML around each case (issue 14): the clocks, temperature,
 * power and clock-limit reasons over the timed repetitions, and the energy
 * of one run.  Used by the GPU worker's measuring of a case (timing.c,
 * energy_gpu.c) and by the fake GPU (worker.c); the energy window's
 * schedule is apart from CUDA so that tests drive it (test_nvml.c).
 */
#ifndef KF_ENERGY_H
#define KF_ENERGY_H

#include "family.h"
#include "kforge.h"
#include "nvml.h"

// NVML around each case (issue 14)
//
// A worker opens NVML once, for its GPU.  Around the timed repetitions it
// reads the SM and memory clocks, the temperature, the power and the
// clock-limit ("throttle") reasons.  With bench.energy it then measures the
// energy of one run: NVML's energy counter advances in steps of ~100 ms, so
// the whole reduction runs back to back, without L2 flushes, until the
// window lasts KF_NVML_MIN_WINDOW_S, and energy per run = energy / runs.
// Without NVML (or a GPU before Volta) the result carries a note instead.

typedef struct {
    kf_nvml m;
    kf_nvml_dev d;              /* points into m: a bench_nvml is not moved once open */
    bool ok;                    /* NVML is open with this GPU */
    char note[160];             /* why not ("NVML not available: ...") */
} bench_nvml;

/* Opens NVML for the GPU with this UUID (NULL or "": NVML's index `index`).
 * Never fails: without NVML, nv->ok is false and nv->note says why. */
void bench_nvml_open(bench_nvml *nv, const char *uuid, int index);
void bench_nvml_close(bench_nvml *nv);

/* Back-to-back runs of run_s seconds each that fill window_s: >= 1. */
long bench_energy_runs(double run_s, double window_s);

/* The energy window's schedule, apart from CUDA so that tests can drive it.
 * queue enqueues runs and marks their end in slot 0 or 1 (two chunks are in
 * flight, so the GPU never waits for the host); wait waits for a slot's end
 * (and samples NVML); now is the clock. */
typedef struct {
    bool (*queue)(void *ctx, long runs, int slot);
    bool (*wait)(void *ctx, int slot);
    double (*now)(void *ctx);
    void *ctx;
} bench_energy_ops;

/* Runs chunks of about 50 ms (sized from run_s, the timed repetitions' rate,
 * then from the rate seen) until, at the end of a chunk, min_s has passed
 * since t0; the window then ends with the chunk still in flight, so it is
 * never shorter than min_s, whatever the first guess.  Returns the runs
 * queued, with the window's end in *t_end, or -1 when a step failed. */
long bench_energy_loop(const bench_energy_ops *o, double run_s, double t0, double min_s, double *t_end);

/* bench_energy_loop on a simulated GPU whose runs take true_s while the
 * first guess is guess_s: the runs, and the window's length in *window_s
 * (for tests). */
long bench_energy_simulate(double guess_s, double true_s, double min_s, double *window_s);

/* Writes what NVML read into r's NVML fields: timed (the window over the
 * timed repetitions), last (a reading right after it: clock limits, memory
 * clock, power), energy (the energy window over `runs` runs, or NULL when
 * bench.energy was off), note (a reading that failed, or NULL). */
void bench_nvml_record(kf_result *r, const kf_nvml_window_result *timed, const kf_nvml_reading *last,
                       const kf_nvml_window_result *energy, long runs, const char *note);

/* The fake GPU's (KFORGE_FAKE_GPU) NVML, for tests with a scripted NVML
 * (tests/fake_nvml.c through KFORGE_NVML_LIB): the same windows around a case
 * whose runs take r->stats.median_ms, on a clock that only counts (no
 * waiting).  Without NVML, r gets the note. */
void bench_nvml_fake(bench_nvml *nv, const kf_bench *b, kf_result *r);

#endif
