/*
 * custom_launch_stub.cpp -- a stand-in for the CUDA runtime (linked with
 * nvcc -cudart none), so that tests/custom_launch_plan.cu runs the
 * launchers of exported custom kernels without a GPU.  Nothing runs: each
 * launch goes to custom_launch_plan.cu's stub_launch (which knows the
 * kernels' parameter types) with the kernel's device name, and the
 * launchers' other calls are printed:
 *
 *   attribute <kernel> max_dynamic_smem <bytes>
 *   constant <variable> bytes <n> from <host pointer> stream <stream>
 *
 * The declarations are C-linkage stand-ins for those in cuda_runtime_api.h
 * and crt/host_runtime.h: only the layout of the arguments matters.
 */
#include <cstddef>

struct stub_dim3 {
    unsigned x, y, z;
};
void stub_launch(const char *kernel, stub_dim3 grid, stub_dim3 block, size_t smem, void *stream, void **args);
void stub_attribute(const char *kernel, int attr, int value);
void stub_constant(const char *var, const void *src, size_t count, size_t offset, int kind, void *stream);

namespace {
const char *names_host[64], *names_dev[64];
int nnames;
const char *vars_host[64], *vars_dev[64];
int nvars;

const char *name_of(const void *p, const char *const *host, const char *const *dev, int n)
{
    for (int i = 0; i < n; i++)
        if (host[i] == (const char *)p)
            return dev[i];
    return "?";
}
} // namespace

extern "C" {
void **__cudaRegisterFatBinary(void *) { static void *h; return &h; }
void __cudaRegisterFatBinaryEnd(void **) {}
void __cudaUnregisterFatBinary(void **) {}
char __cudaInitModule(void **) { return 0; }
void __cudaRegisterFunction(void **, const char *host, char *, const char *dev, int, void *, void *, void *, void *,
                            int *)
{
    if (nnames < 64)
        names_host[nnames] = host, names_dev[nnames++] = dev;
}
void __cudaRegisterVar(void **, char *host, char *, const char *dev, int, size_t, int, int)
{
    if (nvars < 64)
        vars_host[nvars] = host, vars_dev[nvars++] = dev;
}
/* <<<grid, block, smem, stream>>>: pushed, then popped by the kernel's host stub, which launches */
static stub_dim3 push_grid, push_block;
static size_t push_smem;
static void *push_stream;
unsigned __cudaPushCallConfiguration(stub_dim3 g, stub_dim3 b, size_t smem, void *stream)
{
    push_grid = g, push_block = b, push_smem = smem, push_stream = stream;
    return 0;
}
int __cudaPopCallConfiguration(stub_dim3 *g, stub_dim3 *b, size_t *smem, void **stream)
{
    *g = push_grid, *b = push_block, *smem = push_smem, *stream = push_stream;
    return 0;
}
int __cudaGetKernel(void **k, const void *f)
{
    *k = (void *)f;
    return 0;
}
int cudaLaunchKernel(const void *f, stub_dim3 g, stub_dim3 b, void **args, size_t smem, void *stream)
{
    stub_launch(name_of(f, names_host, names_dev, nnames), g, b, smem, stream, args);
    return 0;
}
int __cudaLaunchKernel(void *k, stub_dim3 g, stub_dim3 b, void **args, size_t smem, void *stream)
{
    return cudaLaunchKernel(k, g, b, args, smem, stream);
}
int cudaFuncSetAttribute(const void *f, int attr, int value)
{
    stub_attribute(name_of(f, names_host, names_dev, nnames), attr, value);
    return 0;
}
int cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, int kind, void *stream)
{
    stub_constant(name_of(symbol, vars_host, vars_dev, nvars), src, count, offset, kind, stream);
    return 0;
}
int cudaGetLastError(void) { return 0; }
}
