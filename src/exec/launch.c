/*
 * launch.c -- see launch.h.
 */
#include "launch.h"

#include <stdio.h>

#include "util.h"

/* CUDA's fixed limits of a launch's dimensions. */
static const unsigned block_max[3] = {1024, 1024, 64};
static const unsigned long long grid_max[3] = {2147483647ULL, 65535, 65535};

int launch_check(const kf_launcher *l, int k, kf_dim3 grid, kf_dim3 block, unsigned smem, char *why, size_t whylen)
{
    const char *axis = "xyz";
    unsigned b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
    if (k < 0 || k >= l->nkernels) {
        kf_err(why, whylen, "kernel %d launched: the family has %d", k, l->nkernels);
        return -1;
    }
    for (int d = 0; d < 3; d++) {
        if (b[d] < 1 || b[d] > block_max[d]) {
            kf_err(why, whylen, "block.%c = %u is outside 1..%u", axis[d], b[d], block_max[d]);
            return -1;
        }
        if (g[d] < 1 || g[d] > grid_max[d]) {
            kf_err(why, whylen, "grid.%c = %u is outside 1..%llu", axis[d], g[d], grid_max[d]);
            return -1;
        }
    }
    long long threads = (long long)b[0] * b[1] * b[2];
    int most = l->dev->max_threads_per_block > 0 ? l->dev->max_threads_per_block : 1024;
    if (l->max_threads[k] > 0 && l->max_threads[k] < most)
        most = l->max_threads[k];
    if (threads > most) {
        kf_err(why, whylen, "a block of %lld threads (%ux%ux%u) is more than the %d this kernel can have here",
               threads, b[0], b[1], b[2], most);
        return -1;
    }
    long long shared = (long long)smem + l->static_smem[k];
    int smax = l->dev->max_smem_per_block > 0 ? l->dev->max_smem_per_block : 48 << 10;
    if (shared > smax) {
        kf_err(why, whylen, "%lld bytes of shared memory per block (%u dynamic) are more than the device's %d",
               shared, smem, smax);
        return -1;
    }
    return 0;
}

int kf_launch_kernel(kf_launcher *l, int kernel, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args)
{
    char why[200];
    if (launch_check(l, kernel, grid, block, smem, why, sizeof why) != 0) {
        l->r->status = KF_ST_SKIPPED;
        snprintf(l->r->message, sizeof l->r->message, "skipped: %s", why);
        return -1;
    }
    l->launches++;
    return l->go ? l->go(l, kernel, grid, block, smem, args) : 0;
}

int kf_launch(kf_launcher *l, int64_t grid, int block, void **args)
{
    if (grid < 1 || grid > 2147483647LL) {
        l->r->status = KF_ST_LAUNCH;
        snprintf(l->r->message, sizeof l->r->message, "planned grid of %lld blocks is out of range", (long long)grid);
        return -1;
    }
    return kf_launch_kernel(l, 0, (kf_dim3){(unsigned)grid, 1, 1}, (kf_dim3){(unsigned)block, 1, 1}, 0, args);
}
