/*
 * inputs.h -- the inputs kept on the device (KF_INPUTS slots, the least
 * recently used given up first) with their references on the host: made
 * once per key (prepare_input), the first one on a thread while the device
 * opens (bench_make_input_ahead, bench.h).
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_INPUTS_H
#define KF_INPUTS_H

#include "bench_impl.h"

input_slot *prepare_input(cctx *c, bool exact, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
                          bool keep_host, const input_slot *keep);

#endif
