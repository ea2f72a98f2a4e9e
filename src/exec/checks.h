/*
 * checks.h -- the check of a case's outputs against the reference: on the GPU
 * (outcheck.h) where it can say so, else on the host by the family's compare;
 * the two checked runs on the exact data (verify_exact) and the run on the
 * realistic data (verify_accuracy).
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_CHECKS_H
#define KF_CHECKS_H

#include "bench_impl.h"

bool same_outputs(const kf_buffer_set *set, void *const *a, void *const *b);
bool check_outputs(gcase *q, void **got, run_check *k);
bool same_as_first(gcase *q, const run_check *a, const run_check *k, void **got, bool *same);
bool outcheck_ready(cctx *c);
bool verify_exact(gcase *q);
bool verify_accuracy(gcase *q);

#endif
