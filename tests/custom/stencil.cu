// stencil.cu -- issue 37's pattern: a 5-point stencil that writes only the
// interior of a width x height grid; the border of x_new is left as it
// was (Kernel Tuner starts every output from the array the user passed).
// planted_bug 1 writes one border element too, 2 leaves one interior
// element unwritten: tests/custom_gpu.sh expects both to be wrong.
// It also uses the macros Kernel Tuner defines (kernel_tuner, a default
// block_size_z) and the compiler options of its config.
#ifndef kernel_tuner
#error "kernel_tuner is not defined"
#endif
#if block_size_z != 1
#error "block_size_z is not 1 by default"
#endif
#ifndef STENCIL_OPT
#error "the config's compiler option -DSTENCIL_OPT=1 did not reach NVRTC"
#endif
#if scale_div == 1 && !defined(STENCIL_FIVE)
#error "the tunable option -DSTENCIL_FIVE (when scale_div == 1) did not reach NVRTC"
#endif
#if scale_div == 0 && defined(STENCIL_FIVE)
#error "the tunable option -DSTENCIL_FIVE reached NVRTC although scale_div == 0"
#endif

extern "C" __global__ void stencil(float *x_new, const float *x_old, int width, int height)
{
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (planted_bug == 1 && x == 3 && y == 0)
        x_new[x] = 1.0f;
    if (planted_bug == 2 && x == 2 && y == 2)
        return;
    if (y > 0 && y < height - 1 && x > 0 && x < width - 1)
        x_new[y * width + x] = (x_old[y * width + x] + x_old[y * width + x - 1] + x_old[y * width + x + 1] +
                                x_old[(y + 1) * width + x] + x_old[(y - 1) * width + x]) / 5.0f;
}
