/*
 * reference.h -- a family's reference variant (family.h: reference_variant)
 * compiled and run in the worker on each new exact input, twice with
 * different poison; the elements it leaves (leave.h) found from the two runs.
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_REFERENCE_H
#define KF_REFERENCE_H

#include "bench_impl.h"

bool gpu_reference(cctx *c, input_slot *S, const kf_variant *v, const kf_shape *shape, const kf_bench *b);

#endif
