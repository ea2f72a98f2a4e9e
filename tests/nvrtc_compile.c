/*
 * nvrtc_compile.c -- compiles one CUDA file with NVRTC to a cubin, as a user
 * who loads kernels at run time would (export_suite.sh: the header that
 * kforge export writes must compile with NVRTC as well as with nvcc).
 *
 *   cc tests/nvrtc_compile.c -I$CUDA/include -L$CUDA/lib64 -lnvrtc -o nvrtc_compile
 *   nvrtc_compile FILE sm_90 [NAME...]
 *
 * Compiles FILE (-std=c++17, the architecture given) and checks that the
 * cubin holds each NAME (the extern "C" kernel names).  Prints the log on
 * failure.  Exit 0 compiled (and every name found), 1 not.
 */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: nvrtc_compile FILE sm_XY [NAME...]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *src = malloc((size_t)len + 1);
    if (!src || fread(src, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    src[len] = '\0';
    fclose(f);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", argv[2]);
    const char *opts[] = {"-std=c++17", arch};
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, argv[1], 0, NULL, NULL) != NVRTC_SUCCESS)
        return 1;
    nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
    size_t loglen = 0;
    nvrtcGetProgramLogSize(prog, &loglen);
    char *log = malloc(loglen + 1);
    if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS && loglen > 1)
        fprintf(stderr, "%s", log);
    free(log);
    int rc = 0;
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: NVRTC: %s\n", argv[1], nvrtcGetErrorString(r));
        rc = 1;
    } else {
        size_t n = 0;
        nvrtcGetCUBINSize(prog, &n);
        char *cubin = malloc(n);
        if (!cubin || nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS)
            return 1;
        for (int i = 3; i < argc; i++) {
            size_t k = strlen(argv[i]);
            int found = 0;
            for (size_t p = 0; p + k <= n && !found; p++)
                found = memcmp(cubin + p, argv[i], k) == 0 && (p + k == n || cubin[p + k] == '\0');
            if (!found) {
                fprintf(stderr, "%s: no kernel %s in the cubin\n", argv[1], argv[i]);
                rc = 1;
            }
        }
        free(cubin);
    }
    nvrtcDestroyProgram(&prog);
    free(src);
    return rc;
}
