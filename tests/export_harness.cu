/*
 * export_harness.cu -- runs the host API of a header written by kforge
 * export against tests/export_stub.cpp (no GPU): for each n on the command
 * line, prints the workspace size, then the launches the call makes.  The
 * input, output and workspace are fake addresses (nothing is dereferenced):
 * input at base + 0x1000, output at base + 0x2000, workspace at base +
 * 0x10000 with room without end.
 *
 *   nvcc -std=c++17 -arch=sm_90 -cudart none -DKFORGE_HEADER='"h.cuh"' -DKFORGE_FN=... \
 *       -DKFORGE_T=float tests/export_harness.cu tests/export_stub.cpp -o harness
 *   harness N...
 */
#include KFORGE_HEADER

#include <cstdio>
#include <cstdlib>

#define KF_CAT2(a, b) a##b
#define KF_CAT(a, b) KF_CAT2(a, b)

int main(int argc, char **argv)
{
    const unsigned long long base = 0x100000000000ull;
    KFORGE_T *in = (KFORGE_T *)(base + 0x1000), *out = (KFORGE_T *)(base + 0x2000);
    void *ws = (void *)(base + 0x10000);
    printf("init %d\n", (int)KF_CAT(KFORGE_FN, _workspace_init)(ws, 768, 0));
    for (int i = 1; i < argc; i++) {
        size_t n = strtoull(argv[i], NULL, 10);
        printf("call n %zu workspace %zu\n", n, KF_CAT(KFORGE_FN, _workspace)(n));
        int rc = (int)KFORGE_FN(n ? in : NULL, n, out, ws, (size_t)1 << 40, 0);
        printf("rc %d\n", rc);
    }
    return 0;
}
