// half_time.h -- the timing loop that tools/half_cub.cu (CUB) and
// tools/half_kforge.cu (kforge's exported headers) share, so that both are
// measured by the same code: L2 flushed before every repetition (a memset
// over 2 x L2), CUDA events around the reduction only, warm-up 3, the
// median of 31.  The includer defines CK(x) (exit on a CUDA error).
#ifndef KF_HALF_TIME_H
#define KF_HALF_TIME_H

#include <algorithm>
#include <vector>

static void *flush_buf;
static size_t flush_bytes;

template <typename F> static double time_median(F run, int reps = 31)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) run();
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; i++) {
        CK(cudaMemsetAsync(flush_buf, i & 0xff, flush_bytes));
        CK(cudaEventRecord(a));
        run();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms[i], a, b));
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return ms[reps / 2];
}

// The same repetitions enqueued all at once, then one wait (as kforge's
// worker times a batch): flush, event, run, event, flush, ...
template <typename F> static double time_median_batched(F run, int reps = 31)
{
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto &e : ev) CK(cudaEventCreate(&e));
    for (int i = 0; i < 3; i++) run();
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < reps; i++) {
        CK(cudaMemsetAsync(flush_buf, i & 0xff, flush_bytes));
        CK(cudaEventRecord(ev[2 * i]));
        run();
        CK(cudaEventRecord(ev[2 * i + 1]));
    }
    CK(cudaEventSynchronize(ev[2 * reps - 1]));
    std::vector<float> ms(reps);
    for (int i = 0; i < reps; i++) CK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    std::sort(ms.begin(), ms.end());
    for (auto &e : ev) CK(cudaEventDestroy(e));
    return ms[reps / 2];
}

static void flush_init()
{
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    CK(cudaMalloc(&flush_buf, flush_bytes));
}

#endif
