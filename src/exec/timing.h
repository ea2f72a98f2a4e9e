/*
 * timing.h -- the timing of a verified case: abandoned after its checked runs
 * (abandon_checked), else warm-up and timed repetitions until the stopping
 * rule, a race or --abandon-above says (time_case), NVML around them.
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_TIMING_H
#define KF_TIMING_H

#include "bench_impl.h"

bool abandon_checked(gcase *q);
bool time_case(gcase *q);

#endif
