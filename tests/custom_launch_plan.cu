// custom_launch_plan.cu -- runs the launchers of exported custom kernels
// on a stand-in CUDA runtime (tests/custom_launch_stub.cpp, nvcc -cudart
// none): no GPU, nothing launched, every launch printed.  For each call on
// the command line (vector_add N, transpose W H, convolution W H, scale N)
// it calls the launcher with fake device pointers p1, p2, ... and the
// stream s7, and prints
//
//   call transpose 300 200 -> 0
//   attribute transpose v1 8 66048                (cudaFuncSetAttribute: attribute, value)
//   constant convolution v0 d_filter 1156 filter 0 1 s7   (bytes, from, offset, kind, stream)
//   launch transpose v0 grid 19 13 1 block 16 8 1 smem 1088 s7 args p1 p2 300 200
//
// with vI the namespace (the tuned parameter set) of the kernel or
// variable.  tests/custom_suite.sh checks these against kforge best's
// parameters and the config's expressions.
#include "convolution_tuned.h"
#include "scale_f32_tuned.h"
#include "transpose_tuned.h"
#include "vector_add_tuned.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

struct stub_dim3 {
    unsigned x, y, z;
};

static const unsigned long long fake = 0x7f0000000000ull;
static float *P(int k) { return (float *)(fake + 0x100000ull * k); }
static cudaStream_t stream = (cudaStream_t)(fake + 7);
static float filter[17 * 17];

// "kforge_<name>_v<i>" in a device name, mangled (a namespace: its length
// before it) or not (an extern "C" kernel renamed kforge_<name>_v<i>_<entry>):
// name and i.
static void kernel_of(const char *dev, char *name, size_t len, int *set)
{
    snprintf(name, len, "?");
    *set = -1;
    const char *k = strstr(dev, "kforge_"), *d = k;
    if (!k)
        return;
    while (d > dev && d[-1] >= '0' && d[-1] <= '9')
        d--;
    size_t n = d < k ? (size_t)atoi(d) : strlen(k);
    for (size_t i = 7; i + 2 < n; i++) {
        size_t j = i + 2;
        if (k[i] != '_' || k[i + 1] != 'v' || k[j] < '0' || k[j] > '9')
            continue;
        int v = 0;
        while (j < n && k[j] >= '0' && k[j] <= '9')
            v = 10 * v + (k[j++] - '0');
        if (j == n || k[j] == '_') {
            snprintf(name, len, "%.*s", (int)(i - 7), k + 7);
            *set = v;
            return;
        }
    }
}

static void arg_ptr(void *a)
{
    unsigned long long p = *(unsigned long long *)a;
    if (p >= fake && (p - fake) % 0x100000ull == 0)
        printf(" p%llu", (p - fake) / 0x100000ull);
    else
        printf(" %#llx", p);
}

void stub_launch(const char *dev, stub_dim3 g, stub_dim3 b, size_t smem, void *s, void **args)
{
    char name[64];
    int set;
    kernel_of(dev, name, sizeof name, &set);
    printf("launch %s v%d grid %u %u %u block %u %u %u smem %zu %s args", name, set, g.x, g.y, g.z, b.x, b.y, b.z,
           smem, s == (void *)stream ? "s7" : "?");
    if (!strcmp(name, "vector_add")) {
        arg_ptr(args[0]), arg_ptr(args[1]), arg_ptr(args[2]);
        printf(" %d\n", *(int *)args[3]);
    } else if (!strcmp(name, "transpose") || !strcmp(name, "convolution")) {
        arg_ptr(args[0]), arg_ptr(args[1]);
        printf(" %d %d\n", *(int *)args[2], *(int *)args[3]);
    } else if (!strcmp(name, "scale_f32")) {
        arg_ptr(args[0]), arg_ptr(args[1]);
        printf(" %.9g %d\n", *(float *)args[2], *(int *)args[3]);
    } else {
        printf(" (unknown kernel %s)\n", dev);
    }
}

void stub_attribute(const char *dev, int attr, int value)
{
    char name[64];
    int set;
    kernel_of(dev, name, sizeof name, &set);
    printf("attribute %s v%d %d %d\n", name, set, attr, value);
}

void stub_constant(const char *dev, const void *src, size_t count, size_t offset, int kind, void *s)
{
    char name[64];
    int set;
    kernel_of(dev, name, sizeof name, &set);
    const char *var = strstr(dev, "d_filter") ? "d_filter" : dev;
    printf("constant %s v%d %s %zu %s %zu %d %s\n", name, set, var, count, src == filter ? "filter" : "?", offset,
           kind, s == (void *)stream ? "s7" : "?");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        long long a = i + 1 < argc ? atoll(argv[i + 1]) : 0, b = i + 2 < argc ? atoll(argv[i + 2]) : 0;
        cudaError_t rc;
        if (!strcmp(k, "vector_add"))
            rc = kforge_vector_add_launch(a, P(1), P(2), P(3), stream), printf("call %s %lld -> %d\n", k, a, rc), i++;
        else if (!strcmp(k, "scale"))
            rc = kforge_scale_f32_launch(a, P(1), P(2), stream), printf("call %s %lld -> %d\n", k, a, rc), i++;
        else if (!strcmp(k, "transpose"))
            rc = kforge_transpose_launch(a, b, P(1), P(2), stream), printf("call %s %lld %lld -> %d\n", k, a, b, rc), i += 2;
        else if (!strcmp(k, "convolution"))
            rc = kforge_convolution_launch(a, b, P(1), P(2), filter, stream),
            printf("call %s %lld %lld -> %d\n", k, a, b, rc), i += 2;
        else {
            fprintf(stderr, "custom_launch_plan: unknown kernel %s\n", k);
            return 2;
        }
    }
    return 0;
}
