// scale.cu -- a C++ template kernel for tests/custom_suite.sh and
// tests/custom_gpu.sh: the entry "scale<float>" is found by the lowered name
// NVRTC gives its name expression (no extern "C").  The instantiations are
// explicit here; tests/custom/apply.cu leaves them to the name expression.
template <typename T>
__global__ void scale(T *y, const T *x, T a, int n)
{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}
template __global__ void scale<float>(float *, const float *, float, int);
template __global__ void scale<double>(double *, const double *, double, int);
