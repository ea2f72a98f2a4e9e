/*
 * export_stub.cpp -- a stand-in for the CUDA runtime, so that test_export can
 * run the host API of a header written by kforge export without a GPU
 * (linked with nvcc -cudart none).  Launches are printed, not run:
 *
 *   launch <kernel> grid <g> block <b> in <p> n <n> out <p> scratch <p> ticket <p>
 *
 * with the pointers as offsets from the fake base addresses that
 * export_harness.cu passes; a row-wise kernel (its name holds "reduce_rows";
 * tests/export_rows_harness.cu) as
 *
 *   launch <kernel> grid <g> block <b> in <p> rows <r> cols <c> stride <s> out <p> partial <p> tickets <p> splits <k>
 *   launch fill grid <g> block <b> out <p> n <n> zero <p> nzero <n>
 *
 * (a null pointer as "-").  The device has KFORGE_STUB_SMS multiprocessors
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

const unsigned long long base = 0x100000000000ull;

// A pointer argument as its offset from base, or "-" if null.
const char *offset(void *arg, char *buf)
{
    unsigned long long p = *(unsigned long long *)arg;
    if (!p)
        return "-";
    snprintf(buf, 32, "%llx", p - base);
    return buf;
}

int rows_launch(const char *name, dim3s g, dim3s b, void **args)
{
    char o[4][32];
    if (strstr(name, "_fill")) {
        printf("launch fill grid %u block %u out %s n %llu zero %s nzero %llu\n", g.x, b.x, offset(args[0], o[0]),
               *(unsigned long long *)args[1], offset(args[2], o[1]), *(unsigned long long *)args[3]);
        return 0;
    }
    printf("launch %s grid %u block %u in %s rows %lld cols %lld stride %lld out %s partial %s tickets %s splits %d\n",
           name, g.x, b.x, offset(args[0], o[0]), *(long long *)args[1], *(long long *)args[2],
           *(long long *)args[3], offset(args[4], o[1]), offset(args[5], o[2]), offset(args[6], o[3]),
           *(int *)args[7]);
    return 0;
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
    if (strstr(name_of(f), "reduce_rows"))
        return rows_launch(name_of(f), g, b, args);
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
