// tile.cuh -- the test family's kernel (tests/family_tile/tile.c): a tiled
// 2-D y = a * x + b over a rows x cols float32 matrix x, with one int32
// scale per column (a), read once per block into dynamic shared memory.
//
// Launch: block (KF_TILE_X, KF_TILE_Y), grid (cols / KF_TILE_X,
// rows / (KF_TILE_Y * KF_ROWS_PER_THREAD)) rounded up, KF_TILE_X ints of
// dynamic shared memory.

#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
// Test hook (KFORGE_PLANT=drop_last@...): the engine sets these before
// every launch; kf_plant_at != 0 means the last element is not written.
__device__ unsigned long long kf_plant_at, kf_plant_in;
__device__ int kf_plant_shift;
__device__ long long kf_plant_twice, kf_plant_row;
#define KF_TILE_SKIP(r, c) ((r) == rows - 1 && (c) == cols - 1)
#else
#define KF_TILE_SKIP(r, c) false
#endif

extern "C" __global__ void kf_tile_axpb(const float *__restrict__ x, const int *__restrict__ a,
                                        float *__restrict__ y, float b, long long rows, long long cols)
{
    extern __shared__ int scale[];
    long long c = (long long)blockIdx.x * KF_TILE_X + threadIdx.x;
    if (threadIdx.y == 0)
        scale[threadIdx.x] = c < cols ? a[c] : 0;
    __syncthreads();
    if (c >= cols)
        return;
    float s = (float)scale[threadIdx.x];
    long long r0 = (long long)blockIdx.y * (KF_TILE_Y * KF_ROWS_PER_THREAD) + threadIdx.y;
#pragma unroll
    for (int k = 0; k < KF_ROWS_PER_THREAD; k++) {
        long long r = r0 + (long long)k * KF_TILE_Y;
        if (r < rows && !KF_TILE_SKIP(r, c))
            y[r * cols + c] = s * x[r * cols + c] + b;
    }
}
