// apply.cu -- a C++ template kernel that the source never instantiates, for
// tests/custom_suite.sh and tests/custom_gpu.sh: the entry "apply<Twice>"
// (a template argument of the user's own type) is instantiated and named by
// NVRTC (a name expression), as Kernel Tuner users write their kernels.
struct Twice {
    __device__ float operator()(float x) const { return 2.0f * x; }
};

template <typename Op>
__global__ void apply(float *y, const float *x, int n)
{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        y[i] = Op()(x[i]);
}
