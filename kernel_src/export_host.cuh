// Host helpers every exported header's API uses (kforge export puts this
// text, from kernel_src/export_host.cuh, right after the header's tables,
// inside its <P>_detail namespace; it needs the tables' kernels[] and
// nkernels).

static inline unsigned long long ceil_div(unsigned long long a, unsigned long long b) { return (a + b - 1) / b; }
static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Multiprocessors of a device and resident blocks per multiprocessor of a
// kernel, asked for once per device (up to 64 devices are remembered).
static const int max_devices = 64;

static inline cudaError_t sms_of(int dev, int *sms)
{
    static std::atomic<int> cache[max_devices];
    bool keep = dev >= 0 && dev < max_devices;
    if (keep && (*sms = cache[dev].load(std::memory_order_relaxed)) > 0)
        return cudaSuccess;
    cudaError_t e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess && keep)
        cache[dev].store(*sms, std::memory_order_relaxed);
    return e;
}

static inline cudaError_t occupancy_of(int dev, int k, int *occ)
{
    static std::atomic<int> cache[max_devices][nkernels];
    bool keep = dev >= 0 && dev < max_devices;
    if (keep && (*occ = cache[dev][k].load(std::memory_order_relaxed)) > 0)
        return cudaSuccess;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(occ, kernels[k].fn, kernels[k].block, 0);
    if (e == cudaSuccess && keep)
        cache[dev][k].store(*occ, std::memory_order_relaxed);
    return e;
}
