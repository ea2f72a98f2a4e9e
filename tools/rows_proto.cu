// rows_proto.cu -- standalone harness for the reduce_rows template
// (kernel_src/reduce_rows/reduce_rows.cuh): the same #defines kforge's generator
// writes, then common.cuh and rows.cuh pasted by #include, as the generated
// source would have them.  One configuration per build; tools/rows_proto.sh
// builds several with -D flags and sweeps them.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_BS=256 \
//        -DKF_EPT=1 -DKF_RPG=4 -DKF_VW=4 -DKF_LOAD=3 tools/rows_proto.cu -o rows_proto
//   ./rows_proto --shape 2^21,32 --check 70000,3 --waves 0,4
//
// Options
//   --shape R,C[,S[,OFF]]   verify and time (repeatable); S = row stride
//                           (default C), OFF = elements before row 0
//   --check R,C[,S[,OFF]]   verify only (every launch setting, 3 launches)
//   --waves LIST            grid cap in waves of resident blocks (0 = no cap:
//                           one block per tile); default 0
//   --splits LIST           map 3: blocks per row (0 = auto, see below); default 0
//   --reps N                timed repetitions (>= 30; default 50)
//   --seed S                data seed (default 42)
//
// Method: tools/rows_bench.h.  Every launch setting is checked twice (output
// poisoned with 0xff, then 0x7f) and the two results compared bit for bit
// (det=yes/no); after timing, the output of the last repetition (poisoned
// before it) is checked again, which also proves that partial/tickets were
// left as the next launch needs them.  Exit 1 on any wrong row, or on det=no
// for a configuration that promises determinism.
#include "rows_bench.h"

// ---- the generator's #defines ----------------------------------------------
#ifndef RP_DTYPE
#define RP_DTYPE 0 // 0 float32, 1 int32, 2 float64
#endif
#if RP_DTYPE == 0
#define KF_T float
#define KF_ELEM_BYTES 4
#define KF_IS_FLOAT 1
#define KF_IS_SIGNED 0
#define KF_INT32_LIKE 0
#elif RP_DTYPE == 1
#define KF_T int
#define KF_ELEM_BYTES 4
#define KF_IS_FLOAT 0
#define KF_IS_SIGNED 1
#define KF_INT32_LIKE 1
#else
#define KF_T double
#define KF_ELEM_BYTES 8
#define KF_IS_FLOAT 1
#define KF_IS_SIGNED 0
#define KF_INT32_LIKE 0
#endif
#ifndef KF_OP
#define KF_OP 0 // 0 sum, 1 min, 2 max (kforge's kf_op numbering)
#endif
// value names that kforge's generator #defines from its parameter table
#define KF_OP_SUM 0
#define KF_OP_MIN 1
#define KF_OP_MAX 2
#define KF_OP_PROD 3
#define KF_OP_AND 4
#define KF_OP_OR 5
#define KF_OP_XOR 6
#define KF_ROWS_MAP_THREAD 0
#define KF_ROWS_MAP_GROUP 1
#define KF_ROWS_MAP_BLOCK 2
#define KF_ROWS_MAP_SPLIT 3
#define KF_ROWS_MAP_TILE 4
#define KF_BLOCK_REDUCE_SHUFFLE 0
#define KF_BLOCK_REDUCE_SHARED 1
#define KF_SPLIT_COMBINE_ATOMIC 0
#define KF_SPLIT_COMBINE_LAST_BLOCK 1
#define KF_PIPE_NONE 0
#define KF_PIPE_NEXT_TILE 1
#define KF_LOAD_PLAIN 0
#define KF_LOAD_LDG 1
#define KF_LOAD_STREAM 2
#define KF_LOAD_LDG_PREFETCH 3
#ifndef KF_ROWS_MAP
#define KF_ROWS_MAP 1
#endif
#ifndef KF_GROUP
#define KF_GROUP (KF_ROWS_MAP == 1 ? 32 : 1)
#endif
#ifndef KF_BS
#define KF_BS 256
#endif
#ifndef KF_EPT
#define KF_EPT 1
#endif
#ifndef KF_RPG
#define KF_RPG 1
#endif
#ifndef KF_VW
#define KF_VW 4
#endif
#ifndef KF_LOAD
#define KF_LOAD 0
#endif
#ifndef KF_BLOCK_REDUCE
#define KF_BLOCK_REDUCE 0
#endif
#ifndef KF_PIPE
#define KF_PIPE 0
#endif
#ifndef KF_SPLIT_COMBINE
#define KF_SPLIT_COMBINE 1
#endif

#include "../kernel_src/common.cuh"
#include "../kernel_src/reduce_rows/reduce_rows.cuh"

// ----------------------------------------------------------------------------

__global__ void rp_fill_identity(T *p, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = kf_identity();
}

static const bool k_deterministic = !(KF_ROWS_MAP == 3 && KF_SPLIT_COMBINE == 0 && KF_IS_FLOAT && KF_OP == 0);

static std::string config_label()
{
    char b[160];
    int n = snprintf(b, sizeof b, "kf:m%d", KF_ROWS_MAP);
    if (KF_ROWS_MAP == 1) n += snprintf(b + n, sizeof b - n, ".g%d", KF_GROUP);
    n += snprintf(b + n, sizeof b - n, ".bs%d.ept%d", KF_BS, KF_EPT);
    if (KF_ROWS_MAP != 3) n += snprintf(b + n, sizeof b - n, ".rpg%d", KF_RPG);
    n += snprintf(b + n, sizeof b - n, ".vw%d.ld%d", KF_VW, KF_LOAD);
    if (KF_ROWS_MAP >= 2) n += snprintf(b + n, sizeof b - n, ".br%d", KF_BLOCK_REDUCE);
    if (KF_ROWS_MAP == 3) n += snprintf(b + n, sizeof b - n, ".sc%d", KF_SPLIT_COMBINE);
    if (KF_PIPE) n += snprintf(b + n, sizeof b - n, ".pipe");
#ifdef KF_MIN_BLOCKS
    n += snprintf(b + n, sizeof b - n, ".mb%d", KF_MIN_BLOCKS);
#endif
    return b;
}

static std::vector<long long> parse_list(const char *s)
{
    std::vector<long long> v;
    const char *p = s, *e;
    for (;;) {
        v.push_back(rb_num(p, &e));
        if (*e != ',') break;
        p = e + 1;
    }
    return v;
}

// The launch rule of rows.cuh, as the host would apply it.
static long long tiles_of(long long rows, long long splits)
{
    const long long G = KF_ROWS_MAP == 0 ? 1 : KF_ROWS_MAP == 1 ? KF_GROUP : KF_BS;
    if (KF_ROWS_MAP <= 1) {
        const long long per = (KF_BS / G) * KF_RPG;
        return (rows + per - 1) / per;
    }
    if (KF_ROWS_MAP == 2) return (rows + KF_RPG - 1) / KF_RPG;
    return rows * splits;
}

// splits auto (map 3): about eight parts per resident block (with a grid
// of one wave, the blocks' shares then differ by an eighth of a share at
// most), but no part under one tile of KF_BS * KF_EPT vectors.
static long long auto_splits(long long rows, long long cols, long long resident)
{
    const long long want = (8 * resident + rows - 1) / rows;
    const long long tile = (long long)KF_BS * KF_EPT * KF_VW;
    long long most = (cols + tile - 1) / tile;
    if (most < 1) most = 1;
    return std::max(1LL, std::min(want, most));
}

int main(int argc, char **argv)
{
    std::vector<rb_shape> shapes;
    std::vector<bool> timed;
    std::vector<long long> waves = {0}, splits_list = {0};
    int reps = 50;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if ((a == "--shape" || a == "--check") && i + 1 < argc) {
            shapes.push_back(rb_parse_shape(argv[++i]));
            timed.push_back(a == "--shape");
        } else if (a == "--waves" && i + 1 < argc) {
            waves = parse_list(argv[++i]);
        } else if (a == "--splits" && i + 1 < argc) {
            splits_list = parse_list(argv[++i]);
        } else if (a == "--reps" && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (a == "--seed" && i + 1 < argc) {
            seed = strtoull(argv[++i], nullptr, 0);
        } else {
            fprintf(stderr, "usage: %s [--shape R,C[,S[,OFF]]]... [--check ...]... [--waves L] [--splits L] [--reps N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (KF_ROWS_MAP != 3) splits_list = {1};

    rb_timer tm;
    tm.init();
    int occ = 0;
    RB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kf_reduce_rows, KF_BS, 0));
    cudaFuncAttributes fa;
    RB_CHECK(cudaFuncGetAttributes(&fa, kf_reduce_rows));
    const long long resident = (long long)occ * tm.sms;
    const std::string label = config_label();
    fprintf(stderr, "%s: %s, %d regs, %zu B smem, %d blocks/SM\n", label.c_str(), tm.device, fa.numRegs,
            fa.sharedSizeBytes, occ);
    const int op = KF_OP;
    int failures = 0;

    for (size_t si = 0; si < shapes.size(); si++) {
        const rb_shape s = shapes[si];
        rb_data<T> D;
        rb_setup(D, s, op, seed + si);

        long long max_splits = 1;
        for (long long sp : splits_list)
            max_splits = std::max(max_splits, sp ? sp : auto_splits(s.rows, s.cols, resident));
        T *d_out, *d_partial = nullptr;
        unsigned *d_tickets = nullptr;
        RB_CHECK(cudaMalloc(&d_out, s.rows * sizeof(T)));
        if (KF_ROWS_MAP == 3) {
            // combine 1: rows + grid - 1 elements, grid <= rows * splits
            const long long np = KF_SPLIT_COMBINE == 0 ? s.rows : s.rows * (max_splits + 1);
            RB_CHECK(cudaMalloc(&d_partial, np * sizeof(T)));
            rp_fill_identity<<<1024, 256>>>(d_partial, np);
            RB_CHECK(cudaGetLastError());
            RB_CHECK(cudaMalloc(&d_tickets, s.rows * sizeof(unsigned)));
            RB_CHECK(cudaMemset(d_tickets, 0, s.rows * sizeof(unsigned)));
        }
        RB_CHECK(cudaDeviceSynchronize());
        std::vector<T> got(s.rows), first(s.rows);

        for (long long sp0 : splits_list) {
            const long long sp = KF_ROWS_MAP == 3 ? (sp0 ? sp0 : auto_splits(s.rows, s.cols, resident)) : 1;
            for (long long w : waves) {
                const long long tiles = tiles_of(s.rows, sp);
                const long long cap = w > 0 ? std::max(1LL, w * resident) : 0x7fffffffLL;
                const unsigned grid = (unsigned)std::max(1LL, std::min(tiles, cap));
                char setting[160];
                snprintf(setting, sizeof setting, "cfg=%s waves=%lld splits=%lld grid=%u", label.c_str(), w, sp, grid);
                auto launch = [&](cudaStream_t st) {
                    kf_reduce_rows<<<grid, KF_BS, 0, st>>>(D.d_in, s.rows, s.cols, s.stride, d_out, d_partial,
                                                          d_tickets, (int)sp);
                };
                // verify: two launches, two poisons, bit comparison
                bool ok = true, det = true;
                const unsigned char poison[2] = {0xff, 0x7f};
                for (int v = 0; v < 2; v++) {
                    RB_CHECK(cudaMemsetAsync(d_out, poison[v], s.rows * sizeof(T), tm.stream));
                    launch(tm.stream);
                    RB_CHECK(cudaGetLastError());
                    RB_CHECK(cudaStreamSynchronize(tm.stream));
                    RB_CHECK(cudaMemcpy((v ? got : first).data(), d_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost));
                    if (rb_check(D, v ? got : first, op, v ? "run 2" : "run 1")) ok = false;
                }
                if (memcmp(got.data(), first.data(), s.rows * sizeof(T))) det = false;
                double med = 0, mn = 0;
                if (ok && timed[si]) {
                    med = tm.time([&](cudaStream_t st) { RB_CHECK(cudaMemsetAsync(d_out, 0xff, s.rows * sizeof(T), st)); },
                                  launch, reps, &mn);
                    RB_CHECK(cudaMemcpy(got.data(), d_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost));
                    if (rb_check(D, got, op, "after timing")) ok = false;
                    if (memcmp(got.data(), first.data(), s.rows * sizeof(T))) det = false;
                } else if (ok) {
                    // a third launch on the reset partial/tickets
                    RB_CHECK(cudaMemsetAsync(d_out, 0xff, s.rows * sizeof(T), tm.stream));
                    launch(tm.stream);
                    RB_CHECK(cudaStreamSynchronize(tm.stream));
                    RB_CHECK(cudaMemcpy(got.data(), d_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost));
                    if (rb_check(D, got, op, "run 3")) ok = false;
                    if (memcmp(got.data(), first.data(), s.rows * sizeof(T))) det = false;
                }
                const char *status = !ok ? "FAIL" : (!det && k_deterministic) ? "FAIL_DET" : "PASS";
                if (strcmp(status, "PASS")) failures++;
                rb_line(s, rb_dtype_name<T>(), rb_op_names[op], "kforge", setting, status, med, mn, sizeof(T),
                        det ? "yes" : "no");
            }
        }
        RB_CHECK(cudaFree(d_out));
        if (d_partial) RB_CHECK(cudaFree(d_partial));
        if (d_tickets) RB_CHECK(cudaFree(d_tickets));
        rb_free(D);
    }
    return failures ? 1 : 0;
}
