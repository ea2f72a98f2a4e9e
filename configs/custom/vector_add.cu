// vector_add.cu -- kforge's "hello world" of user kernels (README: "Your
// own kernels"): c = a + b over n floats.  block_size_x and per_thread are
// tunable: kforge #defines them before this file, as Kernel Tuner does.
// Each block handles block_size_x * per_thread consecutive elements, the
// threads striding by block_size_x so that every load is coalesced.
extern "C" __global__ void vector_add(float *c, const float *a, const float *b, int n)
{
    int i = blockIdx.x * (block_size_x * per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < per_thread; k++, i += block_size_x)
        if (i < n)
            c[i] = a[i] + b[i];
}
