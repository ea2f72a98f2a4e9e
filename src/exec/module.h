/*
 * module.h -- a case's module: compiled in the worker (compile_here),
 * loaded, its kernels looked up (NVRTC's lowered names, C++ manglings) and
 * checked against the family's arg_sizes, its constants written, the
 * occupancy worked out and the launches planned (load_and_plan); gpu_go is
 * the launcher's side of a family's enqueue.
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_MODULE_H
#define KF_MODULE_H

#include "bench_impl.h"

int gpu_go(kf_launcher *l, int k, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args);
bool get_kernels(cctx *c, CUmodule mod, const kf_variant *v, const char *names, gpu_kernels *K,
                 kf_launcher *l);
bool set_constants(cctx *c, CUmodule mod, const kf_variant *v, const kf_shape *shape, uint64_t seed);
bool load_and_plan(gcase *q, const void *cubin);
void *compile_here(bench *B, const char *src, const char *name, char **names, char *err, size_t errlen);

#endif
