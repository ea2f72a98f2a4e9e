// half_time.h -- what tools/half_cub.cu (CUB) and tools/half_kforge.cu
// (kforge's exported headers) share, so that both are measured on the same
// data by the same code: the timing loop (L2 flushed before every
// repetition by a memset over 2 x L2, CUDA events around the reduction
// only, each repetition waited for, warm-up 3, the median of 31), the host
// data and the size parser.  The includer defines CK(x) (exit on a CUDA
// error) and includes cuda_bf16.h / cuda_fp16.h for the 2-byte types.
#ifndef KF_HALF_TIME_H
#define KF_HALF_TIME_H

#include <algorithm>
#include <cstdlib>
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

static long long num(const char *s)
{
    if (s[0] == '2' && s[1] == '^') return 1LL << atoi(s + 2);
    return atoll(s);
}

// Host data: small integers with random signs (an LCG), widened sums exact.
template <typename T> static void fill(std::vector<T> &h, std::vector<float> &v, unsigned long long seed)
{
    unsigned long long z = seed;
    for (size_t i = 0; i < h.size(); i++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        float x = (float)(1 + (z >> 62)) * ((z >> 40) & 1 ? -1.0f : 1.0f);
        h[i] = T(x);
        v[i] = x;
    }
}

static void flush_init()
{
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    CK(cudaMalloc(&flush_buf, flush_bytes));
}

#endif
