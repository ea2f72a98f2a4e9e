// t1_saxpy.cu -- the kernel of tests/custom/t1_saxpy.json, a T1 file
// (issue 37): y = a * x + y over n floats, WORK elements a thread.
#ifndef T1_OPTION
#error "the T1 file's CompilerOptions did not reach NVRTC"
#endif
extern "C" __global__ void saxpy(float *y, const float *x, float a, int n)
{
    int i = (blockIdx.x * BLOCK_SIZE + threadIdx.x) * WORK;
    for (int k = 0; k < WORK; k++)
        if (i + k < n)
            y[i + k] = a * x[i + k] + y[i + k];
}
