/*
 * export_stub.cpp -- a stand-in for the CUDA runtime, so that test_export can
 * run the host API of a header written by kforge export without a GPU
 * (linked with nvcc -cudart none).  Launches are printed, not run:
 *
 *   launch <kernel> grid <g> block <b> in <p> n <n> out <p> scratch <p> ticket <p>
 *
 * with the pointers as offsets from the fake base addresses that
 * export_harness.cu passes.  The device has KFORGE_STUB_SMS multiprocessors
 * and KFORGE_STUB_OCC resident blocks per multiprocessor for every kernel
 * (the environment; defaults 132 and 2).  The declarations are C-linkage
 * stand-ins for those in cuda_runtime_api.h and crt/host_runtime.h: only
 * the layout of the arguments matters.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
struct dim3s { unsigned x, y, z; };
const char *names_host[64];
const char *names_dev[64];
int nnames;

int env_int(const char *name, int def)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : def;
}

const char *name_of(const void *f)
{
    for (int i = 0; i < nnames; i++)
        if (names_host[i] == (const char *)f)
            return names_dev[i];
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
    if (nnames < 64) {
        names_host[nnames] = host;
        names_dev[nnames++] = dev;
    }
}
int __cudaPopCallConfiguration(void *, void *, void *, void *) { return 1; }
int __cudaGetKernel(void **, const void *) { return 1; }
int __cudaLaunchKernel(void *, dim3s, dim3s, void **, size_t, void *) { return 1; }

int cudaGetDevice(int *d) { *d = 0; return 0; }
int cudaDeviceGetAttribute(int *v, int, int) { *v = env_int("KFORGE_STUB_SMS", 132); return 0; }
int cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *, int, size_t)
{
    *n = env_int("KFORGE_STUB_OCC", 2);
    return 0;
}
int cudaLaunchKernel(const void *f, dim3s g, dim3s b, void **args, size_t, void *)
{
    unsigned long long base = 0x100000000000ull;
    if (strstr(name_of(f), "_init")) {
        printf("launch init ticket %llx slot %llx out %llx\n", *(unsigned long long *)args[0],
               *(unsigned long long *)args[1], *(unsigned long long *)args[2]);
        return 0;
    }
    printf("launch %s grid %u block %u in %llx n %llu out %llx scratch %llx ticket %llx\n", name_of(f), g.x, b.x,
           *(unsigned long long *)args[0] - base, *(unsigned long long *)args[1],
           *(unsigned long long *)args[2] - base, *(unsigned long long *)args[3] - base,
           *(unsigned long long *)args[4] - base);
    return 0;
}
}
