// noisy.cu -- a kernel whose fault is a parameter, for the output check on
// the GPU (tests/gpu_suite.sh step 7): every case must get the same verdict
// and figures whether its outputs are checked on the GPU or on the host
// (KFORGE_CHECK_ON_HOST=1).
//   fault 0: the reference's bits
//   fault 1: y off by 2^-20 relative everywhere: within rtol 1e-5, not bits
//   fault 2: y off by 2^-10 relative at element n - 7 only: outside
//   fault 3: y a NaN at element n / 2
//   fault 4: the integer output q off by one at its last element
//   fault 5: y off by 2^-20 relative where the clock's low bit is set: within
//            the tolerance, but not the same bits twice (deterministic)
extern "C" __global__ void noisy(float *y, int *q, const float *x, int n)
{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i] * 3.0f;
    int k = (int)(x[i] * 100.0f);
#if fault == 1
    v = v + v * (1.0f / 1048576.0f);
#elif fault == 2
    if (i == n - 7)
        v = v + v * (1.0f / 1024.0f);
#elif fault == 3
    if (i == n / 2)
        v = __int_as_float(0x7FC00000);
#elif fault == 4
    if (i == n - 1)
        k += 1;
#elif fault == 5
    if (clock64() & 1)
        v = v + v * (1.0f / 1048576.0f);
#endif
    y[i] = v;
    q[i] = k;
}
