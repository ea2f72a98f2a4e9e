/*
 * export_rows_harness.cu -- runs the host API of a row-wise header written by
 * kforge export --kernel reduce_rows against tests/export_stub.cpp (no GPU):
 * prepares a workspace, then for each shape on the command line prints the
 * variant chosen and the launches the call makes, and its return code.
 * The input, output and workspace are fake addresses (nothing is
 * dereferenced): input at base + 0x1000 (+ one element with -m: misaligned
 * for vectors), output at base + 0x2000, workspace at
 * base + 0x10000 (+ 40 bytes: not 256-byte aligned).
 *
 *   nvcc -std=c++17 -arch=sm_90 -cudart none -DKFORGE_HEADER='"h.cuh"' -DKFORGE_FN=... \
 *       -DKFORGE_T=float tests/export_rows_harness.cu tests/export_stub.cpp -o harness
 *   harness [-b BYTES | -f] [-m] ROWSxCOLS[/STRIDE]...
 *
 * Prints "workspace BYTES for ROWS" (the bytes _workspace asks for the most
 * rows on the command line; -f: the most _workspace_for asks for a shape;
 * -b: BYTES), "init RC" and the init's launch, then per shape "call ROWS
 * COLS STRIDE variant LABEL", "need BYTES" (_workspace_for), its launches
 * and "rc RC".
 */
#include KFORGE_HEADER

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define KF_CAT2(a, b) a##b
#define KF_CAT(a, b) KF_CAT2(a, b)

struct shape {
    unsigned long long rows, cols, stride;
};

static bool parse(const char *s, shape *sh)
{
    char *end;
    sh->rows = strtoull(s, &end, 10);
    if (*end != 'x')
        return false;
    sh->cols = strtoull(end + 1, &end, 10);
    sh->stride = 0;
    if (*end == '/')
        sh->stride = strtoull(end + 1, &end, 10);
    return *end == '\0';
}

int main(int argc, char **argv)
{
    const unsigned long long base = 0x100000000000ull;
    size_t bytes = 0;
    bool given = false, misaligned = false, each = false;
    shape sh[256];
    int n = 0;
    unsigned long long most = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc) {
            bytes = strtoull(argv[++i], NULL, 10);
            given = true;
        } else if (!strcmp(argv[i], "-f")) {
            each = true;
        } else if (!strcmp(argv[i], "-m")) {
            misaligned = true;
        } else if (n < 256 && parse(argv[i], &sh[n])) {
            most = sh[n].rows > most ? sh[n].rows : most;
            n++;
        } else {
            fprintf(stderr, "usage: harness [-b BYTES] [-m] ROWSxCOLS[/STRIDE]...\n");
            return 2;
        }
    }
    KFORGE_T *in = (KFORGE_T *)(base + 0x1000 + (misaligned ? sizeof(KFORGE_T) : 0)), *out = (KFORGE_T *)(base + 0x2000);
    void *ws = (void *)(base + 0x10000 + 40);
    if (!given && !each)
        bytes = KF_CAT(KFORGE_FN, _workspace)(most);
    for (int i = 0; i < n && each; i++) {
        size_t b = KF_CAT(KFORGE_FN, _workspace_for)(sh[i].rows, sh[i].cols, sh[i].stride);
        bytes = b > bytes ? b : bytes;
    }
    printf("workspace %zu for %llu\n", bytes, most);
    fflush(stdout);
    int rc = (int)KF_CAT(KFORGE_FN, _workspace_init)(bytes ? ws : NULL, bytes, 0);
    printf("init %d\n", rc);
    for (int i = 0; i < n; i++) {
        printf("call %llu %llu %llu variant %s\n", sh[i].rows, sh[i].cols, sh[i].stride,
               KF_CAT(KFORGE_FN, _variant)(sh[i].rows, sh[i].cols, sh[i].stride));
        printf("need %zu\n", KF_CAT(KFORGE_FN, _workspace_for)(sh[i].rows, sh[i].cols, sh[i].stride));
        fflush(stdout);
        rc = (int)KFORGE_FN(in, sh[i].rows, sh[i].cols, sh[i].stride, out, bytes ? ws : NULL, bytes, 0);
        printf("rc %d\n", rc);
    }
    return 0;
}
