/*
 * run.h -- the measuring session: a GPU worker process and a pool of
 * compiler processes driven by one poll() loop.  The compiler pool works
 * ahead of the GPU (every variant's source is submitted at once), so once
 * the pipeline is full the GPU never waits on NVRTC; cubins come from the
 * on-disk cache when nothing changed.  A case whose kernel faults or hangs
 * costs only that case: the worker is replaced and the loop goes on.
 */
#ifndef KF_RUN_H
#define KF_RUN_H

#include <signal.h>

#include "kforge.h"
#include "rtc.h"
#include "space.h"


typedef struct run_opts_s {
    int device;             /* GPU ordinal */
    int jobs;               /* compiler processes; <= 0: online CPUs */
    const char *cache_dir;  /* NULL: default */
    bool no_cache;
    bool lineinfo;
    const char *arch;       /* NULL: the device's sm_XY */
    bool progress;          /* a progress line on stderr (only when it is a terminal) */
} run_opts;

typedef struct run_session run_session;

/* Starts the GPU worker (fills *dev; fails with exit-code-3 class errors:
 * *nodev is set when the failure is "no usable GPU / driver") and the
 * compiler pool (*nodev is not set when the cache directory is unusable). */
run_session *run_session_new(const run_opts *o, kf_device *dev, bool *nodev, char *err, size_t errlen);

/* Called for every finished case, in completion order.  Return non-zero to
 * stop early. */
typedef int (*run_result_fn)(const kf_result *r, void *ctx);

/* Measures cases (indices into variants) with bench settings b.  Returns 0
 * when all were measured (whatever their status), 1 when stopped by fn, or
 * -1 when interrupted (kf_interrupted) or on an internal error (message in
 * err). */
int run_session_measure(run_session *s, const kf_variant *variants, int nvariants, const kf_case *cases,
                        int ncases, const kf_bench *b, run_result_fn fn, void *ctx, char *err, size_t errlen);

/* Total compile time spent and how many came from the cache (for summaries). */
void run_session_counts(const run_session *s, int *compiled, int *cached);

void run_session_free(run_session *s);

/* Compiles every variant without a GPU (kforge check --compile): results
 * through fn with status OK or COMPILE (and the NVRTC log in stderr).
 * Returns the number that failed, -1 on an internal error, or -2 when the
 * cache directory is unusable (a usage error). */
int run_compile_only(const kf_variant *variants, int nvariants, const run_opts *o, run_result_fn fn, void *ctx,
                     char *err, size_t errlen);

#endif
