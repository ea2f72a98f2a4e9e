/*
 * launch.h -- the engine's side of kf_launch_kernel (family.h): every
 * launch a family's enqueue asks for is checked against the device's limits
 * and the kernel's own (threads per block its registers allow, static
 * shared memory), then handed to `go` (the GPU worker's cuLaunchKernel) or,
 * on the fake GPU (go NULL), only counted.  A launch that cannot run makes
 * the case KF_ST_SKIPPED with the reason.
 */
#ifndef KF_LAUNCH_H
#define KF_LAUNCH_H

#include "family.h"

#define KF_MAX_KERNELS 8

struct kf_launcher {
    const kf_device *dev;
    kf_result *r;                       /* status and message of a refused launch */
    int nkernels;
    int max_threads[KF_MAX_KERNELS];    /* per kernel (0: the device's) */
    int static_smem[KF_MAX_KERNELS];
    /* launches for real: 0, or -1 with r filled */
    int (*go)(kf_launcher *l, int kernel, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args);
    void *ctx;
    int launches;                       /* launches checked so far */
};

/* Whether a launch of kernel k with this geometry can run on l's device:
 * 0, or -1 and why. */
int launch_check(const kf_launcher *l, int k, kf_dim3 grid, kf_dim3 block, unsigned smem, char *why, size_t whylen);

#endif
