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

#include "kforge.h"

typedef struct bench bench;

/* Opens GPU `ordinal`; fills *dev.  NULL with a message on failure. */
bench *bench_new(int ordinal, kf_device *dev, char *err, size_t errlen);

/* Measures variant v at shape s (through its family, family.h).  r is filled in every case (r->status tells
 * the outcome).  Returns 0, or -1 when the CUDA context can no longer be
 * used (a kernel faulted): the caller reports r and ends the process. */
int bench_case(bench *B, const kf_variant *v, const kf_shape *shape, const kf_bench *b, const void *cubin,
               size_t cubin_len, kf_result *r);

void bench_free(bench *B);

#endif
