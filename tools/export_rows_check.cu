/*
 * export_rows_check.cu -- checks and times a row-wise header written by
 * `kforge export --kernel reduce_rows` through its host API only, as a
 * user's program would.
 *
 *   kforge export --kernel reduce_rows --dtype float32 --op sum -o build/kforge_reduce_rows_float32_sum.cuh
 *   nvcc -std=c++17 -O3 -arch=sm_90 -I build tools/export_rows_check.cu -o build/export_rows_check
 *   build/export_rows_check                       # the 32 default shapes, checked
 *   build/export_rows_check --check 1000x1000/1003+1,2^20x4 --time 16384x4096,2^21x32
 *
 * A shape is ROWSxCOLS[/ROW_STRIDE][+OFFSET]: the rows, the columns, the
 * elements between row starts (default: cols) and the elements the input
 * starts after an aligned address (default 0); each an integer or 2^K.
 *
 * Another dtype or op: -DKFORGE_T=int -DKFORGE_OP=max -DKFORGE_FN=kforge_reduce_rows_int32_max
 * (KFORGE_HEADER defaults to "<KFORGE_FN>.cuh").
 *
 * Checks: every row of each shape against a CPU reference, exactly (sums
 * and products of +-1 are exact in any order up to 2^24 columns, min, max
 * and the bitwise ops are exact anyway).  The default shapes: one row, one
 * column, columns not a multiple of 4, row strides above cols, input
 * pointers off 16-byte alignment, 65536 rows and more, more than 2^24 rows,
 * few very long rows (the split variants), zero rows and zero columns, each
 * input at most 2^26 elements.  Each shape is run twice, the output
 * poisoned before each (the second run shows the workspace was left
 * ready); one workspace, prepared once, serves every shape in turn (its
 * size the largest _workspace_for of the shapes).  Also:
 * rows == 0 writes nothing, cols == 0 gives the identity, a null output, a
 * null input, a pointer not aligned to the element and, where the variant
 * chosen needs one, a missing workspace are refused.
 *
 * Times the kforge way (tools/export_check.h); GB/s are rows x cols x
 * element bytes over the median, as kforge counts them.
 *
 * One JSON line per check and per timing on stdout.  Exit: 0 all right,
 * 1 a wrong result, 2 usage, 3 a CUDA error.
 */
#define KF_STR2(x) #x
#define KF_STR(x) KF_STR2(x)
#ifndef KFORGE_FN
#define KFORGE_FN kforge_reduce_rows_float32_sum
#endif
#ifndef KFORGE_T
#define KFORGE_T float
#endif
#ifndef KFORGE_OP
#define KFORGE_OP sum
#endif
#ifndef KFORGE_HEADER
#define KFORGE_HEADER KF_STR(KFORGE_FN.cuh)
#endif
#include KFORGE_HEADER

#include "export_check.h"

#define API KFORGE_FN
#define API_WORKSPACE KF_CAT(KFORGE_FN, _workspace)
#define API_WORKSPACE_FOR KF_CAT(KFORGE_FN, _workspace_for)
#define API_INIT KF_CAT(KFORGE_FN, _workspace_init)
#define API_VARIANT KF_CAT(KFORGE_FN, _variant)

struct shape {
    size_t rows, cols, stride, offset; // stride 0: cols
    size_t span() const { return rows ? offset + (rows - 1) * (stride ? stride : cols) + cols : offset; }
    std::string name() const
    {
        char buf[128];
        int k = snprintf(buf, sizeof buf, "%zux%zu", rows, cols);
        if (stride) k += snprintf(buf + k, sizeof buf - k, "/%zu", stride);
        if (offset) snprintf(buf + k, sizeof buf - k, "+%zu", offset);
        return buf;
    }
};

static bool parse_shape(const char *s, shape *sh)
{
    char *p;
    *sh = shape{0, 0, 0, 0};
    if (!parse_size(s, &sh->rows, &p) || *p != 'x' || !parse_size(p + 1, &sh->cols, &p)) return false;
    if (*p == '/' && !parse_size(p + 1, &sh->stride, &p)) return false;
    if (*p == '+' && !parse_size(p + 1, &sh->offset, &p)) return false;
    return *p == '\0';
}

// The parts of each row a split variant with this many parts (from the
// label "split16/...") would use, or 1.
static int splits_of(const char *label)
{
    const char *p = strstr(label, " split");
    return p ? atoi(p + 6) : 1;
}

int main(int argc, char **argv)
{
    // 32 shapes, each input at most 2^26 elements (256 MiB of float32)
    const char *defaults[] = {
        "1x1", "1x2", "2x1", "3x5", "1x1000003", "7x33/40+1", "5x0", "0x7", "2x65535+3", "31x4097/4101+2",
        "64x2^20", "63x1048573/1048583+3", "16x2^21", "4x4194301+1", "300x8191+3", "1000x1000/1003+2",
        "16384x4096", "16000x4095/4100+1", "65536x1024", "65537x257", "70000x64/65", "131072x16",
        "100000x3+1", "2^21x32", "1500000x31/37+1", "2^20x1", "2^22x4/7+2", "16777217x1/3+1", "16777217x2",
        "2^24x1+3", "33x100000/100003+2", "4096x16384"};
    std::vector<shape> checks, times;
    for (const char *d : defaults) {
        shape sh;
        if (!parse_shape(d, &sh)) { fprintf(stderr, "export_rows_check: bad default %s\n", d); return 2; }
        checks.push_back(sh);
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check") && i + 1 < argc) {
            if (!parse_list(argv[++i], &checks, parse_shape)) {
                fprintf(stderr, "export_rows_check: bad --check list\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            if (!parse_list(argv[++i], &times, parse_shape)) {
                fprintf(stderr, "export_rows_check: bad --time list\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--no-check")) {
            checks.clear();
        } else {
            fprintf(stderr, "usage: export_rows_check [--check RxC[/S][+O],...|--no-check] [--time RxC,...]\n");
            return 2;
        }
    }
    size_t nmax = 1, rmax = 1;
    for (const shape &sh : checks) nmax = std::max(nmax, sh.span()), rmax = std::max(rmax, sh.rows);
    for (const shape &sh : times) nmax = std::max(nmax, sh.span()), rmax = std::max(rmax, sh.rows);

    cudaDeviceProp prop;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    fprintf(stderr, "export_rows_check: %s on %s (%d SMs)\n", KF_STR(KFORGE_FN), prop.name,
            prop.multiProcessorCount);

    std::vector<T> host = make_data(nmax);
    T *d_in, *d_out;
    CK(cudaMalloc(&d_in, nmax * sizeof(T)));
    CK(cudaMalloc(&d_out, (rmax + 1) * sizeof(T)));
    CK(cudaMemcpy(d_in, host.data(), nmax * sizeof(T), cudaMemcpyHostToDevice));
    // the workspace for every shape here: the largest any of them asks for
    size_t ws_bytes = 0;
    for (const shape &sh : checks) ws_bytes = std::max(ws_bytes, API_WORKSPACE_FOR(sh.rows, sh.cols, sh.stride));
    for (const shape &sh : times) ws_bytes = std::max(ws_bytes, API_WORKSPACE_FOR(sh.rows, sh.cols, sh.stride));
    void *ws = nullptr;
    if (ws_bytes) CK(cudaMalloc(&ws, ws_bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(API_INIT(ws, ws_bytes, s));
    fprintf(stderr, "export_rows_check: workspace %zu bytes for these shapes (%zu for any %zu rows)\n", ws_bytes,
            API_WORKSPACE(rmax), rmax);

    int wrong = 0;
    // refusals
    const char *split = API_VARIANT(64, 1 << 20, 0);
    bool needs_ws = splits_of(split) > 1;
    if (API(d_in, 10, 10, 0, nullptr, ws, ws_bytes, s) != cudaErrorInvalidValue ||
        API(nullptr, 10, 10, 0, d_out, ws, ws_bytes, s) != cudaErrorInvalidValue ||
        API((const T *)((const char *)d_in + 1), 10, 10, 0, d_out, ws, ws_bytes, s) != cudaErrorInvalidValue ||
        API(d_in, 10, 10, 0, (T *)((char *)d_out + 1), ws, ws_bytes, s) != cudaErrorInvalidValue ||
        (needs_ws && API(d_in, 64, 1 << 20, 0, d_out, nullptr, 0, s) != cudaErrorInvalidValue) ||
        API(nullptr, 0, 10, 0, nullptr, nullptr, 0, s) != cudaSuccess) {
        fprintf(stderr, "export_rows_check: a bad argument was not refused with cudaErrorInvalidValue\n");
        wrong++;
    }
    printf("{\"refusals\": %s, \"split_variant_checked\": %s}\n", wrong ? "false" : "true",
           needs_ws ? "true" : "false");

    std::vector<T> got(rmax + 1), got2(rmax + 1), ref(rmax);
    for (const shape &sh : checks) {
        const size_t stride = sh.stride ? sh.stride : sh.cols;
        for (size_t r = 0; r < sh.rows; r++)
            ref[r] = reference(host.data() + sh.offset + r * stride, sh.cols);
        // out[rows] is a sentinel: never written
        for (int run = 0; run < 2; run++) {
            std::vector<T> &g = run ? got2 : got;
            CK(cudaMemsetAsync(d_out, run ? 0x00 : 0xFF, (sh.rows + 1) * sizeof(T), s));
            CK(API(d_in + sh.offset, sh.rows, sh.cols, sh.stride, d_out, ws, ws_bytes, s));
            CK(cudaMemcpyAsync(g.data(), d_out, (sh.rows + 1) * sizeof(T), cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
        }
        size_t bad = 0, first = 0;
        for (size_t r = 0; r < sh.rows; r++)
            if (!same(got[r], ref[r]) || !same(got2[r], ref[r])) {
                if (!bad++) first = r;
            }
        T poison0, poison1;
        memset(&poison0, 0xFF, sizeof poison0);
        memset(&poison1, 0x00, sizeof poison1);
        bool sentinel = same(got[sh.rows], poison0) && same(got2[sh.rows], poison1);
        bool ok = bad == 0 && sentinel;
        wrong += !ok;
        size_t show = bad ? first : (sh.rows ? sh.rows - 1 : 0);
        printf("{\"check\": \"%s\", \"rows\": %zu, \"cols\": %zu, \"stride\": %zu, \"offset\": %zu, \"ok\": %s, "
               "\"wrong_rows\": %zu, \"row\": %zu, \"got\": \"%s\", \"got2\": \"%s\", \"ref\": \"%s\", "
               "\"past_the_end_untouched\": %s, \"variant\": \"%s\"}\n",
               sh.name().c_str(), sh.rows, sh.cols, stride, sh.offset, ok ? "true" : "false", bad, show,
               sh.rows ? text(got[show]).c_str() : "", sh.rows ? text(got2[show]).c_str() : "",
               sh.rows ? text(ref[show]).c_str() : "", sentinel ? "true" : "false",
               API_VARIANT(sh.rows, sh.cols, sh.stride));
        fflush(stdout);
    }

    if (!times.empty()) {
        kforge_timer timer(s);
        for (const shape &sh : times) {
            const T *in = d_in + sh.offset;
            timing t = timer.time([&] { return API(in, sh.rows, sh.cols, sh.stride, d_out, ws, ws_bytes, s); });
            // the last timed call's result must still be right
            const size_t stride = sh.stride ? sh.stride : sh.cols;
            CK(cudaMemcpy(got.data(), d_out, sh.rows * sizeof(T), cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t r = 0; r < sh.rows; r++)
                bad += !same(got[r], reference(host.data() + sh.offset + r * stride, sh.cols));
            wrong += bad != 0;
            printf("{\"time\": \"%s\", \"rows\": %zu, \"cols\": %zu, \"median_ms\": %.6f, \"min_ms\": %.6f, "
                   "\"reps\": %zu, \"gbps\": %.1f, \"ok\": %s, \"variant\": \"%s\"}\n",
                   sh.name().c_str(), sh.rows, sh.cols, t.median_ms, t.min_ms, t.reps,
                   (double)sh.rows * sh.cols * sizeof(T) / (t.median_ms * 1e6), bad ? "false" : "true",
                   API_VARIANT(sh.rows, sh.cols, sh.stride));
            fflush(stdout);
        }
    }
    if (ws) CK(cudaFree(ws));
    CK(cudaFree(d_in));
    CK(cudaFree(d_out));
    CK(cudaStreamDestroy(s));
    fprintf(stderr, "export_rows_check: %s %s: %d wrong\n", KF_STR(KFORGE_T), op_name, wrong);
    return wrong ? 1 : 0;
}
