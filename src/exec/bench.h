/*
 * bench.h -- measuring one case on the GPU: load the cubin, prepare seeded
 * input (cached across cases of the same dtype, op, seed and n), verify the
 * result against the CPU reference, then time the whole reduction (every
 * launch) with CUDA events, flushing L2 before each repetition.
 *
 * This runs inside the GPU worker process (worker.c); the orchestrating
 * process never initialises CUDA.
 */
#ifndef KF_BENCH_H
#define KF_BENCH_H

#include "family.h"
#include "kforge.h"
#include "nvml.h"

typedef struct bench bench;

/* Opens GPU `ordinal` of those this process sees; fills *dev.  index: its
 * index in the parent's view (NVML's fallback when the driver gives no
 * UUID).  NULL with a message on failure, *missing true when the device does
 * not exist. */
bench *bench_new(int ordinal, int index, kf_device *dev, bool *missing, char *err, size_t errlen);

/* Starts making the host copy and the reference of an input (that of v's
 * family, dtype and op, b's seed, at shape) on a thread, for the first case
 * that needs it: a worker calls it before it opens its device.  Once per
 * process. */
void bench_make_input_ahead(const kf_variant *v, const kf_shape *shape, const kf_bench *b);

/* Measures variant v at shape s (through its family, family.h).  cubin is
 * the compiled module; names its lowered names (rtc.h: "EXPR<TAB>LOWERED"
 * lines, from NVRTC's name expressions), or NULL.  r is filled in every case
 * (r->status tells the outcome).  Returns 0, or -1 when the CUDA context can no longer be
 * used (a kernel faulted): the caller reports r and ends the process. */
int bench_case(bench *B, const kf_variant *v, const kf_shape *shape, const kf_bench *b, const void *cubin,
               size_t cubin_len, const char *names, kf_result *r);

void bench_free(bench *B);

// ----------------------------------------------------------------------------
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

/* r is wrong: bad of nout outputs differ (compare() filled the values);
 * the message says what, and shows the worst. */
void bench_wrong(kf_result *r, int64_t bad, int64_t nout, const char *what);

/* Records the accuracy run (acc: compare()'s figures on the realistic data,
 * bad outputs beyond the rounding bound); a wrong r's message says what the
 * bound alone would have said. */
void bench_accuracy(kf_result *r, const kf_result *acc, int64_t bad);

/* Compares every output (and inout) buffer of set: got[i] against ref[i]
 * with the family's compare (exact: bit for bit).  Returns the wrong
 * elements in all; r is filled from the first buffer with any (else the
 * first output), its worst_at as the family's compare set it ("y[3][17]"),
 * else the buffer's name where there are several outputs;
 * *nout: the output elements in all. */
int64_t bench_compare(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, const kf_buffer_set *set,
                      void *const *got, void *const *ref, double *const *aux, bool exact, kf_result *r,
                      int64_t *nout);

#endif
