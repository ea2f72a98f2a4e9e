/*
 * runner.h -- one run of a variant's launches on the worker's stream: outputs
 * poisoned and inouts restored first, optionally timed with events, its
 * outputs copied back; and the planted fault's aim (KFORGE_PLANT).
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_RUNNER_H
#define KF_RUNNER_H

#include "bench_impl.h"

void runner_use(runner *R, bench *B, const input_slot *X, int64_t offset);
bool run_poisoned(runner *R, unsigned char poison);
bool run_poisoned_timed(runner *R, unsigned char poison, double *ms);
bool copy_outputs(runner *R, bool kept, void **got);
bool run_checked(runner *R, unsigned char poison, void **got);
bool plant_aim_at(runner *R, CUmodule mod, int kind, const kf_plant *spec);
void plant_effect(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, int64_t offset,
                  const kf_plant *spec, input_slot *X, kf_result *r);

#endif
