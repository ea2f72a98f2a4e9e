/*
 * bench.h -- measuring one case on the GPU: load the cubin, prepare seeded
 * input (cached across cases of the same dtype, op, seed and n), verify the
 * result against the CPU reference, then time the whole reduction (every
 * launch) with CUDA events, flushing L2 before each repetition.
 *
 * This runs inside the GPU worker process (worker.c); the orchestrating
 * process never initialises CUDA.  bench_case's steps live in files of their
 * own (bench_impl.h names them): module.c, buffers.c, inputs.c,
 * reference.c, runner.c, checks.c, timing.c and energy_gpu.c.
 */
#ifndef KF_BENCH_H
#define KF_BENCH_H

#include "family.h"
#include "kforge.h"
#include "energy.h"
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

/* The cubin cache of the worker's own compiles (the output check, a
 * reference variant): the session's (--cache-dir, --no-cache), set before
 * the workers are forked; dir NULL: the default one. */
void bench_cache(const char *dir, bool enabled);

/* A module of kforge's own (src, NVRTC's name for it) for arch ("sm_90"),
 * as a worker gets it: from bench_cache's cache, else (with compile)
 * compiled here and stored (*compiled: which; a trace line says it).  A
 * malloc'd cubin and its lowered names (*names, or NULL), or NULL with err
 * (without compile: not in the cache). */
void *bench_compile_for(const char *arch, const char *src, const char *name, bool compile, char **names,
                        bool *compiled, char *err, size_t errlen);

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
