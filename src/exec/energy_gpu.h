/*
 * energy_gpu.h -- the energy window on the GPU: energy.h's schedule
 * (bench_energy_loop) as CUDA calls, after the timed repetitions.
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_ENERGY_GPU_H
#define KF_ENERGY_GPU_H

#include "bench_impl.h"

bool energy_window(cctx *c, runner *R, double run_s, kf_nvml_window_result *ew, long *runs, char *nerr,
                   size_t nerrlen);

#endif
