/*
 * buffers.h -- device and host memory of a case: allocations grown on demand
 * (ensure_evicting gives up kept inputs while device memory is short), copies
 * of inputs to the device, and the worker's own buffers of a case
 * (prepare_buffers: outputs, scratch, host copies, the planted fault's aim).
 *
 * Split from bench.c (measuring one case in the GPU worker, bench.h); the
 * shared state is bench_impl.h's.
 */
#ifndef KF_BUFFERS_H
#define KF_BUFFERS_H

#include "bench_impl.h"

bool ensure_evicting(cctx *c, CUdeviceptr *p, size_t *cap, size_t bytes, const char *what,
                     const input_slot *keep);
bool host_grow(cctx *c, void **p, size_t bytes);
bool copy_in(cctx *c, CUdeviceptr dst, const void *src, size_t bytes);
size_t lead_bytes(const kf_buffer *b, int64_t offset);
bool prepare_buffers(gcase *q);

#endif
