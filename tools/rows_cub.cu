// rows_cub.cu -- CUB baselines for the row-wise reduction, measured and
// checked exactly as tools/rows_proto.cu does (tools/rows_bench.h: same data,
// same per-row check, output poisoned before every run, L2 flushed before
// every repetition, events around the reduction only, median of >= 30).
//
//   impl=cubVVVVVV-offsets   cub::DeviceSegmentedReduce::Sum / Max with
//                            offset arrays in device memory (int32 when the
//                            matrix spans < 2^31 elements, else int64; one
//                            aliased array when stride == cols, separate
//                            begin/end arrays otherwise), as most callers have
//   impl=cubVVVVVV-offset-it the same with the offsets computed by a
//                            transform iterator (r * stride, r * stride +
//                            cols): no offset traffic
//   impl=cubVVVVVV-fixed     (built with -DKF_CCCL_FIXED and CCCL >= 3.2
//                            headers first on the include path) the
//                            fixed-segment-size overloads
//                            Sum/Max(temp, bytes, in, out, int64 num_segments,
//                            int segment_size, stream); stride == cols only
// VVVVVV is CUB_VERSION (300001 = CCCL 3.0.1, the toolkit's).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 tools/rows_cub.cu -o rows_cub
//   nvcc -O3 -std=c++17 -arch=sm_90 -DKF_CCCL_FIXED -I$CCCL_DIR/cub -I$CCCL_DIR/thrust \
//        -I$CCCL_DIR/libcudacxx/include tools/rows_cub.cu -o rows_cub_fixed
//   ./rows_cub --dtype float32 --op sum,max --shape 2^21,32 --shape 64,2^20
//
// Temporary storage and offsets are allocated outside timing.  Exit 1 on a
// wrong row.
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "rows_bench.h"

#if defined(KF_CCCL_FIXED) && CUB_VERSION < 300200
#error "KF_CCCL_FIXED needs CCCL >= 3.2 headers (fixed-size DeviceSegmentedReduce overloads) before the toolkit's"
#endif

template <typename O> struct row_off {
    O stride, add;
    __host__ __device__ O operator()(O r) const { return r * stride + add; }
};

template <typename T, typename O> struct cub_case {
    const T *in;
    T *out;
    long long rows;
    const O *d_begin, *d_end; // arrays
    row_off<O> fb, fe;       // iterators

    template <typename BI, typename EI>
    cudaError_t run(void *tmp, size_t &bytes, int op, BI b, EI e, cudaStream_t st) const
    {
        if (op == RB_SUM) return cub::DeviceSegmentedReduce::Sum(tmp, bytes, in, out, rows, b, e, st);
        return cub::DeviceSegmentedReduce::Max(tmp, bytes, in, out, rows, b, e, st);
    }
    cudaError_t arrays(void *tmp, size_t &bytes, int op, cudaStream_t st) const
    {
        return run(tmp, bytes, op, d_begin, d_end, st);
    }
    cudaError_t iters(void *tmp, size_t &bytes, int op, cudaStream_t st) const
    {
        auto c = thrust::make_counting_iterator<O>(0);
        return run(tmp, bytes, op, thrust::make_transform_iterator(c, fb), thrust::make_transform_iterator(c, fe), st);
    }
#ifdef KF_CCCL_FIXED
    cudaError_t fixed(void *tmp, size_t &bytes, int op, long long cols, cudaStream_t st) const
    {
        if (op == RB_SUM) return cub::DeviceSegmentedReduce::Sum(tmp, bytes, in, out, (::cuda::std::int64_t)rows, (int)cols, st);
        return cub::DeviceSegmentedReduce::Max(tmp, bytes, in, out, (::cuda::std::int64_t)rows, (int)cols, st);
    }
#endif
};

template <typename T, typename O>
static int run_shape(rb_timer &tm, rb_data<T> &D, T *d_out, int op, int reps)
{
    const rb_shape s = D.s;
    std::vector<O> hb, he;
    const bool aliased = s.stride == s.cols;
    hb.resize(s.rows + 1);
    for (long long r = 0; r <= s.rows; r++) hb[r] = (O)(r * s.stride);
    O *d_b = nullptr, *d_e = nullptr;
    RB_CHECK(cudaMalloc(&d_b, hb.size() * sizeof(O)));
    RB_CHECK(cudaMemcpy(d_b, hb.data(), hb.size() * sizeof(O), cudaMemcpyHostToDevice));
    if (!aliased) {
        he.resize(s.rows);
        for (long long r = 0; r < s.rows; r++) he[r] = (O)(r * s.stride + s.cols);
        RB_CHECK(cudaMalloc(&d_e, he.size() * sizeof(O)));
        RB_CHECK(cudaMemcpy(d_e, he.data(), he.size() * sizeof(O), cudaMemcpyHostToDevice));
    }
    cub_case<T, O> C{D.d_in, d_out, s.rows, d_b, aliased ? d_b + 1 : d_e, {(O)s.stride, 0}, {(O)s.stride, (O)s.cols}};

    int failures = 0;
    char ver[32];
    snprintf(ver, sizeof ver, "cub%d", (int)CUB_VERSION);
    std::vector<T> got(s.rows), first(s.rows);
    for (int impl = 0; impl < 3; impl++) {
#ifndef KF_CCCL_FIXED
        if (impl == 2) break;
#else
        if (impl == 2 && (s.stride != s.cols || s.cols > 0x7fffffffLL)) break;
#endif
        auto call = [&](void *tmp, size_t &bytes, cudaStream_t st) -> cudaError_t {
            if (impl == 0) return C.arrays(tmp, bytes, op, st);
            if (impl == 1) return C.iters(tmp, bytes, op, st);
#ifdef KF_CCCL_FIXED
            return C.fixed(tmp, bytes, op, s.cols, st);
#else
            return cudaErrorNotSupported;
#endif
        };
        const char *names[] = {"offsets", "offset-it", "fixed"};
        std::string impl_name = std::string(ver) + "-" + names[impl];
        size_t bytes = 0;
        RB_CHECK(call(nullptr, bytes, tm.stream));
        void *tmp = nullptr;
        RB_CHECK(cudaMalloc(&tmp, bytes ? bytes : 1));
        auto launch = [&](cudaStream_t st) { RB_CHECK(call(tmp, bytes, st)); };
        bool ok = true;
        const unsigned char poison[2] = {0xff, 0x7f};
        for (int v = 0; v < 2; v++) {
            RB_CHECK(cudaMemsetAsync(d_out, poison[v], s.rows * sizeof(T), tm.stream));
            launch(tm.stream);
            RB_CHECK(cudaStreamSynchronize(tm.stream));
            RB_CHECK(cudaMemcpy((v ? got : first).data(), d_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost));
            if (rb_check(D, v ? got : first, op, impl_name.c_str())) ok = false;
        }
        bool det = !memcmp(got.data(), first.data(), s.rows * sizeof(T));
        double med = 0, mn = 0;
        if (ok) {
            med = tm.time([&](cudaStream_t st) { RB_CHECK(cudaMemsetAsync(d_out, 0xff, s.rows * sizeof(T), st)); },
                          launch, reps, &mn);
            RB_CHECK(cudaMemcpy(got.data(), d_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost));
            if (rb_check(D, got, op, "after timing")) ok = false;
            det = det && !memcmp(got.data(), first.data(), s.rows * sizeof(T));
        }
        char setting[64];
        snprintf(setting, sizeof setting, "cfg=%s temp_bytes=%zu", impl_name.c_str(), bytes);
        rb_line(s, rb_dtype_name<T>(), rb_op_names[op], impl_name.c_str(), setting, ok ? "PASS" : "FAIL", med, mn,
                sizeof(T), det ? "yes" : "no");
        failures += !ok;
        RB_CHECK(cudaFree(tmp));
    }
    RB_CHECK(cudaFree(d_b));
    if (d_e) RB_CHECK(cudaFree(d_e));
    return failures;
}

template <typename T>
static int run_all(rb_timer &tm, const std::vector<rb_shape> &shapes, const std::vector<int> &ops, int reps,
                   uint64_t seed)
{
    int failures = 0;
    for (size_t si = 0; si < shapes.size(); si++) {
        const rb_shape s = shapes[si];
        for (int op : ops) {
            rb_data<T> D;
            rb_setup(D, s, op, seed + si);
            T *d_out;
            RB_CHECK(cudaMalloc(&d_out, s.rows * sizeof(T)));
            if (rb_span(s) + 1 < (1ull << 31)) failures += run_shape<T, int>(tm, D, d_out, op, reps);
            else failures += run_shape<T, long long>(tm, D, d_out, op, reps);
            RB_CHECK(cudaFree(d_out));
            rb_free(D);
        }
    }
    return failures;
}

int main(int argc, char **argv)
{
    std::vector<rb_shape> shapes;
    std::vector<int> ops = {RB_SUM};
    std::string dtype = "float32";
    int reps = 50;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--shape" && i + 1 < argc) {
            shapes.push_back(rb_parse_shape(argv[++i]));
        } else if (a == "--op" && i + 1 < argc) {
            ops.clear();
            std::string l = argv[++i];
            if (l.find("sum") != std::string::npos) ops.push_back(RB_SUM);
            if (l.find("max") != std::string::npos) ops.push_back(RB_MAX);
        } else if (a == "--dtype" && i + 1 < argc) {
            dtype = argv[++i];
        } else if (a == "--reps" && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (a == "--seed" && i + 1 < argc) {
            seed = strtoull(argv[++i], nullptr, 0);
        } else {
            fprintf(stderr, "usage: %s [--dtype float32|int32] [--op sum,max] [--shape R,C[,S[,OFF]]]... [--reps N]\n",
                    argv[0]);
            return 2;
        }
    }
    rb_timer tm;
    tm.init();
    fprintf(stderr, "rows_cub: %s, CUB %d\n", tm.device, (int)CUB_VERSION);
    int failures = dtype == "int32" ? run_all<int32_t>(tm, shapes, ops, reps, seed)
                                    : run_all<float>(tm, shapes, ops, reps, seed);
    return failures ? 1 : 0;
}
