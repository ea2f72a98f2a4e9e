// kforge_reduce_rows_float32_sum.cuh -- float32 sum row-wise reduction, tuned by kforge.
//
<date line>
//   kforge export --kernel reduce_rows --dtype float32 --op sum --db db -o rows.cuh
// Do not edit: export again after tuning.
//
// Tuned on fake-gpu (KFORGE_FAKE_GPU) (compute capability 9.0, 132 SMs).  It works, untuned,
// on any NVIDIA GPU of compute capability 8.0 or newer: the launch geometry that depends on
// the device (its multiprocessors, the blocks of a kernel that fit on one) is asked for at run
// time, but the variants were chosen for that GPU.  Needs nothing but the CUDA toolkit: no
// kforge headers, no run-time compilation.  C++17 (nvcc's default).  NVRTC compiles the kernels
// (extern "C" kforge_reduce_rows_float32_sum_k0, ...); the host API is left out there.
//
// API (all static inline, so the header may be included by several .cu files):
//
//   cudaError_t kforge_reduce_rows_float32_sum(const float *in, size_t rows, size_t cols, size_t row_stride,
//       float *out, void *workspace, size_t workspace_bytes, cudaStream_t stream);
//       out[r] = the sum of in[r * row_stride + c], c < cols, for every row r < rows,
//       asynchronously on stream; row_stride 0 means cols; any alignment of in and of
//       the rows; cols == 0 gives the identity, rows == 0 does nothing;
//       cudaErrorInvalidValue for a null out, a null in (cols > 0), a pointer not aligned
//       to the element, or a workspace (null or) too small for the variant chosen
//   size_t kforge_reduce_rows_float32_sum_workspace(size_t rows);
//       workspace bytes for calls with up to rows rows (any cols and row_stride) on the
//       current device; split variants here need one
//   size_t kforge_reduce_rows_float32_sum_workspace_for(size_t rows, size_t cols, size_t row_stride);
//       workspace bytes for a call of that shape (0 if its variant needs none); the
//       largest over several shapes serves them all
//   cudaError_t kforge_reduce_rows_float32_sum_workspace_init(void *workspace, size_t workspace_bytes,
//       cudaStream_t stream);
//       once per workspace, before its first use: split variants keep per-row tickets
//       (and, atomic ones, partials) there, which every call leaves as it found them
//   const char *kforge_reduce_rows_float32_sum_variant(size_t rows, size_t cols, size_t row_stride);
//       the variant used for rows x cols with row_stride, and where it was tuned
//
// Use:
//
//   #include "kforge_reduce_rows_float32_sum.cuh"
//   size_t bytes = kforge_reduce_rows_float32_sum_workspace(rows_max);
//   void *ws = 0;
//   if (bytes) cudaMalloc(&ws, bytes);
//   kforge_reduce_rows_float32_sum_workspace_init(ws, bytes, stream);
//   kforge_reduce_rows_float32_sum(d_in, rows, cols, 0, d_out, ws, bytes, stream);  // any rows <= rows_max, any cols
//
// Pass every call on a workspace the same workspace_bytes (its parts are laid out by
// it).  A workspace serves one stream at a time; use it for nothing else between calls
// (or initialise it again).
//
// Determinism: every variant here gives the same bits run to run.
//
// Dispatch: a call goes to the variant tuned for the nearest shape, the smallest
// |ln rows - ln R| + |ln cols - ln C| + |ln row_stride - ln S| over the tuned R x C with
// row stride S (as near up to rounding: the larger R C S; as large: the faster), as
// `kforge best --kernel reduce_rows --rows R --cols C --row_stride S` answers (without
// --row_stride, S is C: for rows stored densely, cols counts twice).  Tuned:
//   rows=4096 cols=32            k0  group8/bs256/ept2/rpg4/v4/1waves/ldg_prefetch
//                                    0.0022303 ms, 235.1 GB/s, deterministic
//   rows=64 cols=16384           k1  split2/last_block/bs1024/ept2/rpg1/v4/2waves/ldg_prefetch
//                                    0.004946 ms, 848.0 GB/s, deterministic
//
// What was measured: each shape listed was tuned there (a search); a shape between them runs
// the nearest tuned shape's variant, not measured there (kforge tune --between measures the
// sizes between tuned ones for families with one size axis only).
//
#ifndef KFORGE_REDUCE_ROWS_FLOAT32_SUM_CUH
#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_CUH

#if !defined(__CUDACC__)
#error "kforge_reduce_rows_float32_sum.cuh holds CUDA kernels: include it from a .cu file (nvcc) or compile it with NVRTC"
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "kforge_reduce_rows_float32_sum.cuh needs compute capability 8.0 or newer"
#endif

#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_KFORGE_VERSION "0.1.0"
#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_TUNED_DEVICE "fake-gpu (KFORGE_FAKE_GPU)"
#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_DETERMINISTIC 1 /* every variant gives the same bits run to run */

#if defined(__CUDACC_RTC__)
#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE extern "C"
#else
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <atomic>
#include <cmath>
#define KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE static
#endif

// Some template paths leave a constant unused (nvcc warning 177).
#pragma nv_diag_suppress 177

// ===========================================================================
// kernel k0: group8/bs256/ept2/rpg4/v4/1waves/ldg_prefetch (the grid is chosen at launch)
// ===========================================================================
#define kf_reduce_rows kforge_reduce_rows_float32_sum_k0
#define KF_ENTRY_LINKAGE KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE
namespace kforge_reduce_rows_float32_sum_k0_ns {
// kforge 0.1.0 generated reduce_rows kernel
//   kernel               reduce_rows
//   dtype                float32
//   op                   sum
//   acc_dtype            auto
//   map                  group
//   group                8
//   block_size           256
//   elements_per_thread  2
//   rows_per_group       4
//   vector_width         4
//   load                 ldg_prefetch
//   block_reduce         shuffle
//   split_combine        last_block
//   pipeline             none
//   min_blocks           0
// rows, cols, row_stride, splits and the grid are launch-time arguments.

#define KF_T float
#define KF_ELEM_BYTES 4
#define KF_IS_FLOAT 1
#define KF_IS_SIGNED 0
#define KF_INT32_LIKE 0
#define KF_DTYPE_INT32 0
#define KF_DTYPE_UINT32 1
#define KF_DTYPE_INT64 2
#define KF_DTYPE_FLOAT32 3
#define KF_DTYPE_FLOAT64 4
#define KF_DTYPE_BFLOAT16 5
#define KF_DTYPE_FLOAT16 6
#define KF_OP_SUM 0
#define KF_OP_MIN 1
#define KF_OP_MAX 2
#define KF_OP_PROD 3
#define KF_OP_AND 4
#define KF_OP_OR 5
#define KF_OP_XOR 6
#define KF_ACC_DTYPE_AUTO 0
#define KF_ACC_DTYPE_INPUT 1
#define KF_ACC_DTYPE_FLOAT32 2
#define KF_ACC_DTYPE_FLOAT64 3
#define KF_ROWS_MAP_THREAD 0
#define KF_ROWS_MAP_GROUP 1
#define KF_ROWS_MAP_BLOCK 2
#define KF_ROWS_MAP_SPLIT 3
#define KF_ROWS_MAP_TILE 4
#define KF_LOAD_PLAIN 0
#define KF_LOAD_LDG 1
#define KF_LOAD_STREAM 2
#define KF_LOAD_LDG_PREFETCH 3
#define KF_BLOCK_REDUCE_SHUFFLE 0
#define KF_BLOCK_REDUCE_SHARED 1
#define KF_SPLIT_COMBINE_ATOMIC 0
#define KF_SPLIT_COMBINE_LAST_BLOCK 1
#define KF_PIPE_NONE 0
#define KF_PIPE_NEXT_TILE 1
#define KF_DTYPE 3 /* float32 */
#define KF_OP 0 /* sum */
#define KF_ACC_DTYPE 0 /* auto */
#define KF_ROWS_MAP 1 /* group */
#define KF_GROUP 8
#define KF_BS 256
#define KF_EPT 2
#define KF_RPG 4
#define KF_VW 4
#define KF_LOAD 3 /* ldg_prefetch */
#define KF_BLOCK_REDUCE 0 /* shuffle */
#define KF_SPLIT_COMBINE 1 /* last_block */
#define KF_PIPE 0 /* none */
#define KF_ROWS_MIN_BLOCKS 0
#if KF_ROWS_MIN_BLOCKS > 0
#define KF_MIN_BLOCKS KF_ROWS_MIN_BLOCKS
#endif

// ---------------------------------------------------------------------------
// common.cuh -- element type, operator, identity, atomics and global loads
// for kforge's generated reduction kernels.  codegen.c puts the parameter
// #defines (KF_T, KF_OP, ...) in front of this file.  No headers are
// included: NVRTC provides the device intrinsics (and has no cuda_bf16.h
// or cuda_fp16.h of its own: 2-byte floats are their bits here, widened by
// hand).
// ---------------------------------------------------------------------------

// T: the accumulator's type, which the outputs and partials have.  E: the
// input's element, T itself, or (KF_IN_T) the bits of a bfloat16
// (KF_IN_BFLOAT16) or float16 (KF_IN_FLOAT16), widened to T as loaded.
typedef KF_T T;
#ifdef KF_IN_T
typedef KF_IN_T E;
#else
typedef T E;
#endif
typedef unsigned long long kf_u64;
typedef unsigned int kf_u32;

// O: the outputs' type: T, or (KF_OUT_T, acc_dtype input) the bits of the
// 2-byte input type, T rounded once to nearest even as a result is stored
// (kf_put).  Partials, scratch and atomics stay T.
#ifdef KF_OUT_T
typedef KF_OUT_T O;
#else
typedef T O;
#endif

__device__ __forceinline__ O kf_out(T x)
{
#if defined(KF_OUT_BFLOAT16)
    const kf_u32 u = __float_as_uint((float)x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (O)((u >> 16) | 0x40u); // NaN stays a (quiet) NaN
    return (O)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#elif defined(KF_OUT_FLOAT16)
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"((float)x));
    return h;
#else
    return x;
#endif
}

// Stores result i: out[i] as an O (out points at the outputs, whatever the
// kernel's parameter type says).
__device__ __forceinline__ void kf_put(T *out, long long i, T x)
{
    ((O *)(void *)out)[i] = kf_out(x);
}

#define KF_FULL_MASK 0xffffffffu

// The linkage of a kernel entry: extern "C", so that cuModuleGetFunction
// finds it by its plain name.  kforge export defines it as static for nvcc,
// so that a header holding kernels may be included by several translation
// units (an extern "C" kernel would be defined once per unit).
#ifndef KF_ENTRY_LINKAGE
#define KF_ENTRY_LINKAGE extern "C"
#endif

// Operators: KF_OP_SUM, KF_OP_MIN, ... and every other enumerated value
// (KF_LOAD_LDG, ...) are #defined by the generator from kforge's parameter
// table, so templates compare names, never numbers that could drift.

// Unsigned type of the same width: integer sums and products are done in
// it, so that signed overflow wraps (as the CPU reference does) instead of
// being undefined behaviour.
template <int B> struct kf_bits_of;
template <> struct kf_bits_of<4> { typedef kf_u32 type; };
template <> struct kf_bits_of<8> { typedef kf_u64 type; };
typedef typename kf_bits_of<sizeof(T)>::type U;

__device__ __forceinline__ U kf_to_bits(T x)
{
    union { T t; U u; } c;
    c.t = x;
    return c.u;
}

__device__ __forceinline__ T kf_from_bits(U x)
{
    union { T t; U u; } c;
    c.u = x;
    return c.t;
}

__device__ __forceinline__ T kf_identity()
{
    if constexpr (KF_OP == KF_OP_SUM || KF_OP == KF_OP_OR || KF_OP == KF_OP_XOR) {
        return T(0);
    } else if constexpr (KF_OP == KF_OP_PROD) {
        return T(1);
    } else if constexpr (KF_OP == KF_OP_AND) {
        return kf_from_bits(~U(0));
    } else if constexpr (KF_OP == KF_OP_MIN) {
        if constexpr (KF_IS_FLOAT) return kf_from_bits(sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull));
        else if constexpr (KF_IS_SIGNED) return kf_from_bits(~U(0) >> 1);
        else return kf_from_bits(~U(0));
    } else { // KF_OP_MAX
        if constexpr (KF_IS_FLOAT) return kf_from_bits(sizeof(T) == 4 ? U(0xff800000u) : U(0xfff0000000000000ull));
        else if constexpr (KF_IS_SIGNED) return kf_from_bits(~(~U(0) >> 1));
        else return T(0);
    }
}

__device__ __forceinline__ T kf_op(T a, T b)
{
#if KF_OP == KF_OP_SUM && KF_IS_FLOAT
    return a + b;
#elif KF_OP == KF_OP_SUM
    return kf_from_bits(kf_to_bits(a) + kf_to_bits(b));
#elif KF_OP == KF_OP_PROD && KF_IS_FLOAT
    return a * b;
#elif KF_OP == KF_OP_PROD
    return kf_from_bits(kf_to_bits(a) * kf_to_bits(b));
#elif KF_OP == KF_OP_MIN
    return min(a, b);
#elif KF_OP == KF_OP_MAX
    return max(a, b);
#elif KF_OP == KF_OP_AND
    return a & b;
#elif KF_OP == KF_OP_OR
    return a | b;
#else
    return a ^ b;
#endif
}

// Atomically combines v into *addr (global or shared memory).  Native
// atomics where the hardware has them, a compare-and-swap loop otherwise.
__device__ __forceinline__ void kf_atomic(T *addr, T v)
{
#if KF_OP == KF_OP_SUM && (KF_IS_FLOAT || KF_ELEM_BYTES == 4)
    atomicAdd(addr, v);
#elif KF_OP == KF_OP_SUM
    atomicAdd((kf_u64 *)addr, (kf_u64)v);
#elif KF_OP == KF_OP_MIN && !KF_IS_FLOAT
    atomicMin(addr, v);
#elif KF_OP == KF_OP_MAX && !KF_IS_FLOAT
    atomicMax(addr, v);
#elif KF_OP == KF_OP_AND
    atomicAnd((U *)addr, kf_to_bits(v));
#elif KF_OP == KF_OP_OR
    atomicOr((U *)addr, kf_to_bits(v));
#elif KF_OP == KF_OP_XOR
    atomicXor((U *)addr, kf_to_bits(v));
#else
    // float min/max and every product: compare-and-swap.
    U *a = (U *)addr;
    U old = *(volatile U *)a, assumed;
    do {
        assumed = old;
        old = atomicCAS(a, assumed, kf_to_bits(kf_op(kf_from_bits(assumed), v)));
    } while (assumed != old);
#endif
}

// The ticket of the single-pass combines: an atomic increment with
// acquire-release semantics at GPU scope.  Release makes this thread's
// partial (stored or atomically combined just before) visible to whoever
// takes a later ticket; acquire makes every earlier block's partial visible
// to the block that takes the last one.  This replaces the seeds'
// __threadfence() + atomicAdd (a full sequentially consistent fence) by the
// ordering that is actually needed (PTX ISA, memory consistency model).
__device__ __forceinline__ unsigned kf_ticket(unsigned *t)
{
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(t) : "memory");
    return old;
}

// Takes the value out of *addr and leaves the identity in its place, so a
// single-pass kernel is ready for its next launch without a host memset.
__device__ __forceinline__ T kf_atomic_take(T *addr)
{
    return kf_from_bits(atomicExch((U *)addr, kf_to_bits(kf_identity())));
}

// ---------------------------------------------------------------------------
// Test hook (KFORGE_PLANT, tests only; absent from every normal build):
// coverage faults, chosen at run time.  The engine sets these globals before
// the launches (cuModuleGetGlobal): the address of the input element that is
// dropped (read as the identity) or read from its neighbour (kf_plant_shift),
// the first pass's input, the block whose value counts twice in the first
// pass, the row whose result goes to the next row (-1: none).

#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
__device__ kf_u64 kf_plant_at;
__device__ int kf_plant_shift;
__device__ kf_u64 kf_plant_in;
__device__ long long kf_plant_twice = -1;
__device__ long long kf_plant_row = -1;
#define KF_HOOK_LOADS 1
#else
#define KF_HOOK_LOADS 0
#endif

// ---------------------------------------------------------------------------
// Input elements as accumulator values.  kf_widen(x): x itself for a T, a
// bfloat16's or float16's bits widened exactly (bfloat16 is the upper half
// of a float; float16 by cvt.f32.f16).  kf_identity_of<X>(): the identity
// as an X (a 2-byte float's bits for the input: 0, 1, +inf, -inf).

template <typename X> struct kf_is_acc { static constexpr bool value = false; };
template <> struct kf_is_acc<T> { static constexpr bool value = true; };

template <typename X> __device__ __forceinline__ T kf_widen(X x)
{
#ifdef KF_IN_T
    if constexpr (!kf_is_acc<X>::value) {
#ifdef KF_IN_BFLOAT16
        return (T)__uint_as_float((kf_u32)x << 16);
#else
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
        return (T)f;
#endif
    } else
#endif
    return x;
}

template <typename X> __device__ __forceinline__ X kf_identity_of()
{
#ifdef KF_IN_T
    if constexpr (!kf_is_acc<X>::value) {
#ifdef KF_IN_BFLOAT16
        constexpr unsigned short one = 0x3f80, inf = 0x7f80;
#else
        constexpr unsigned short one = 0x3c00, inf = 0x7c00;
#endif
        if constexpr (KF_OP == KF_OP_PROD) return one;
        else if constexpr (KF_OP == KF_OP_MIN) return inf;
        else if constexpr (KF_OP == KF_OP_MAX) return (unsigned short)(inf | 0x8000);
        else return 0;
    } else
#endif
    return kf_identity();
}

// ---------------------------------------------------------------------------
// Global loads of KF_VW consecutive elements (of the input, E, or of
// partials, T).  A vector of VW * sizeof(X) bytes is loaded as 2-, 4-, 8- or
// 16-byte words (more as several 16-byte words), with the load flavour
// chosen by KF_LOAD: plain, read-only (__ldg) or streaming (__ldcs,
// evict-first).

template <typename X> struct kf_vec_of {
    X v[KF_VW];
};
typedef kf_vec_of<E> kf_vec;

// load ldg_prefetch: the read-only path without L1 allocation, asking L2 to
// fetch the whole 256-byte sector group (fewer, larger DRAM requests for a
// stream that will use them all).  The input is not written while the kernel
// runs, so the asm needs no "memory" clobber and may be scheduled freely.
__device__ __forceinline__ unsigned short kf_ld_pf(const unsigned short *p)
{
    unsigned short r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.u16 %0, [%1];" : "=h"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ kf_u32 kf_ld_pf(const kf_u32 *p)
{
    kf_u32 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.u32 %0, [%1];" : "=r"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ uint2 kf_ld_pf(const uint2 *p)
{
    uint2 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
    return r;
}
__device__ __forceinline__ uint4 kf_ld_pf(const uint4 *p)
{
    uint4 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

template <typename W> __device__ __forceinline__ W kf_ld_word(const W *p)
{
    if constexpr (KF_LOAD == KF_LOAD_LDG_PREFETCH) return kf_ld_pf(p);
    else if constexpr (KF_LOAD == KF_LOAD_LDG) return __ldg(p);
    else if constexpr (KF_LOAD == KF_LOAD_STREAM) return __ldcs(p);
    else return *p;
}

template <typename X> __device__ __forceinline__ kf_vec_of<X> kf_load_vec(const kf_vec_of<X> *p)
{
    constexpr int bytes = (int)sizeof(X) * KF_VW;
    union { kf_vec_of<X> v; unsigned short w0; kf_u32 w1; uint2 w2; uint4 w4[bytes > 16 ? bytes / 16 : 1]; } u;
    if constexpr (bytes == 2) {
        u.w0 = kf_ld_word((const unsigned short *)p);
    } else if constexpr (bytes == 4) {
        u.w1 = kf_ld_word((const kf_u32 *)p);
    } else if constexpr (bytes == 8) {
        u.w2 = kf_ld_word((const uint2 *)p);
    } else {
#pragma unroll
        for (int w = 0; w < bytes / 16; w++) u.w4[w] = kf_ld_word((const uint4 *)p + w);
    }
#if KF_HOOK_LOADS
    const kf_u64 off = kf_plant_at - (kf_u64)p;
    if (kf_plant_at && off < sizeof(kf_vec_of<X>)) {
        const int lane = (int)(off / sizeof(X));
        u.v.v[lane] = kf_plant_shift ? ((const X *)p)[lane + 1] : kf_identity_of<X>();
    }
#endif
    return u.v;
}

// One element, widened to T.
template <typename X> __device__ __forceinline__ T kf_load_one(const X *p)
{
#if KF_HOOK_LOADS
    if (kf_plant_at && (kf_u64)p == kf_plant_at) return kf_plant_shift ? kf_widen(p[1]) : kf_identity();
#endif
    if constexpr (KF_LOAD == KF_LOAD_LDG || KF_LOAD == KF_LOAD_LDG_PREFETCH) return kf_widen(__ldg(p));
    else if constexpr (KF_LOAD == KF_LOAD_STREAM) return kf_widen(__ldcs(p));
    else return kf_widen(*p);
}

template <typename X> __device__ __forceinline__ T kf_fold_vec(const kf_vec_of<X> &x)
{
    T r = kf_widen(x.v[0]);
#pragma unroll
    for (int i = 1; i < KF_VW; i++)
        r = kf_op(r, kf_widen(x.v[i]));
    return r;
}

// ---------------------------------------------------------------------------
// reduce_rows/reduce_rows.cuh -- row-wise reduction: out[r] = op over
// in[r * stride + c], c = 0 .. cols-1, for every row r < rows.
//
// Pasted after the #defines and kernel_src/common.cuh (kf_op, kf_identity,
// kf_atomic, kf_ticket, kf_atomic_take, kf_vec, kf_load_vec, kf_fold_vec,
// kf_load_one).  No #includes: NVRTC provides the intrinsics.
//
// Defines (those of common.cuh: KF_T, KF_OP, KF_IS_FLOAT, KF_IS_SIGNED,
// KF_ELEM_BYTES, KF_INT32_LIKE, KF_VW, KF_LOAD; and):
//
//   KF_ROWS_MAP       how rows are mapped to threads:
//                       0  a thread per row
//                       1  a group of KF_GROUP consecutive lanes per row
//                          (2, 4, 8, 16 or 32; 32 = a warp per row)
//                       2  a block per row
//                       3  every row cut in `splits` parts; the rows * splits
//                          parts are dealt to the blocks in balanced
//                          contiguous ranges, so a block may hold several
//                          parts of one row (folded as one range, no extra
//                          reduction) or parts of several rows; the blocks
//                          of a row combine by KF_SPLIT_COMBINE
//                       4  tiles of whole rows staged through shared memory
//                          (short rows, row_stride == cols): the block
//                          loads a contiguous tile of up to TE = KF_BS *
//                          KF_EPT * KF_VW elements with vector loads
//                          spread over all its threads, then each thread
//                          folds whole rows of the tile from shared memory
//                          and the block's stores of consecutive rows are
//                          coalesced.  Rows per tile: RT = floor(TE / cols)
//                          rounded down to a multiple of KF_VW, so that
//                          every tile starts on a vector boundary when the
//                          input does.  When row_stride != cols or
//                          cols * KF_VW > TE, the kernel falls back to a
//                          thread per row (RT = KF_BS).
//   KF_GROUP          lanes per row for map 1 (2..32, power of two).  Map 0
//                     is the group of 1 (KF_GROUP absent or 1); ignored by
//                     maps 2 and 3.
//   KF_BS             threads per block (power of two, 32..1024).
//   KF_EPT            vector loads in flight per thread per row tile
//                     (1..16): a team of P lanes (P = 1, KF_GROUP, KF_BS)
//                     walks a row in tiles of P * KF_EPT vectors.
//   KF_RPG            rows in flight per team per iteration (maps 0..2;
//                     must be 1 for maps 3 and 4);
//                     default 1): the first tile of
//                     KF_RPG rows is loaded before any of it is folded, so
//                     short rows still have KF_RPG * KF_EPT loads in flight.
//                     KF_RPG * KF_EPT <= 16.
//   KF_PIPE           optional (default 0).  Maps 0..2: 1 issues the row
//                     information and first-tile loads of the block's next
//                     tile before folding the current one (software
//                     pipelining across grid-stride iterations; pays off
//                     only with a capped grid; doubles the tile registers).
//                     Map 4: the next tile's loads are issued before the
//                     rows of this one are folded from shared memory.
//                     Map 3: inside a part, tile t + 1's KF_EPT loads are
//                     issued before tile t is folded (the fold order, and
//                     so the result, is the same as without).
//   KF_VW             elements per vector load (1, 2, 4; 8 for a 2-byte input).  Each row has its
//                     own aligned prefix (< KF_VW elements before the first
//                     aligned vector) and tail, so any row start alignment,
//                     any stride and any cols work.
//   KF_LOAD           0 plain, 1 ldg, 2 stream (__ldcs), 3 ldg_prefetch
//                     (ld.global.nc.L1::no_allocate.L2::256B), as common.cuh.
//   KF_BLOCK_REDUCE   maps 2 and 3: 0 warp shuffles + one shared slot per
//                     warp, 1 shared-memory tree down to 64 values, then the
//                     last warp by shuffles.  Default 0.
//   KF_SPLIT_COMBINE  map 3, for rows held by more than one block: 0 atomic
//                     (kf_atomic into partial[row]; the row's last block, by
//                     a per-row ticket, moves it to out[row] and leaves the
//                     identity behind; float sums are then not run-to-run
//                     deterministic), 1 last block (each block stores its
//                     partial; warp 0 of the row's last block folds the
//                     row's partials in block order: deterministic).
//                     Default 1.
//   KF_MIN_BLOCKS     optional: resident blocks per SM asked of the compiler
//                     (__launch_bounds__(KF_BS, KF_MIN_BLOCKS): caps registers
//                     at 65536 / (KF_BS * KF_MIN_BLOCKS)).  Absent: plain
//                     __launch_bounds__(KF_BS).
//
// Kernel
//   kf_reduce_rows(in, rows, cols, stride, out, partial, tickets, splits)
//     in       rows x cols elements (E: T, or a 2-byte float's bits widened
//              to T as loaded: common.cuh), row r at in + r * stride (stride >=
//              cols; any alignment of in and of stride); rows, cols >= 1
//     out      rows results (every element written by every launch)
//     partial  map 3 only (else may be NULL):
//                combine 0: rows elements, each holding kf_identity()
//                           before the first launch; every launch leaves
//                           them so.
//                combine 1: rows + gridDim.x - 1 elements (block b's partial
//                           of row r is partial[r + b]), no initialisation.
//     tickets  map 3 only (else may be NULL): rows unsigned, 0 before the
//              first launch; every launch leaves them 0.
//              partial and tickets may be shared by consecutive launches on
//              one stream, not by concurrent ones.
//     splits   map 3: parts per row (>= 1; 1: whole rows dealt to blocks,
//              no combine); other maps ignore it.
//
// Launch rule (block = KF_BS threads, no dynamic shared memory; map 4 has
// (TE + TE / (128 / sizeof(T))) * sizeof(T) bytes of static shared memory):
//   maps 0, 1: rows_per_tile = (KF_BS / G) * KF_RPG (G = 1 for map 0,
//              KF_GROUP for map 1); tiles = ceil(rows / rows_per_tile)
//   map 2:     tiles = ceil(rows / KF_RPG)
//   map 4:     tiles = ceil(rows / RT) (RT above; KF_BS in the fallback)
//   map 3:     tiles = rows * splits (part p of a row is vectors
//              [p*chunk, (p+1)*chunk), chunk = ceil(nvec / splits) rounded up
//              to 8 vectors; the first (tiles % grid) blocks take
//              tiles / grid + 1 consecutive parts, the others tiles / grid)
//   grid.x = min(tiles, cap) for any cap >= 1, at most 2^31 - 1.  Maps 0-2
//   are grid-stride loops over their tiles and map 3 deals its parts to
//   whatever grid it gets, so a capped (persistent) grid is correct.
//   gridDim.y/z are never used: rows beyond 65535 or 2^31 need nothing
//   special.
//
// Determinism: every map except map 3 with KF_SPLIT_COMBINE 0 folds each
// row in an order fixed by the compile-time parameters, cols, the alignment
// of the row and (map 3) splits and the grid size: bit-identical results run
// to run for a given launch.
// ---------------------------------------------------------------------------

// Every parameter above is #defined by the generator (tools/rows_proto.cu
// gives its own defaults when used outside kforge).

// KF_ROWS_MAP_THREAD, _GROUP, _BLOCK, _SPLIT, KF_BLOCK_REDUCE_SHUFFLE, _SHARED,
// KF_SPLIT_COMBINE_ATOMIC, _LAST_BLOCK and KF_PIPE_NONE, _NEXT_TILE come from
// the generator (the parameter table in src/families/reduce_rows/rows.c).

// Lanes that share one row: the team.
#if KF_ROWS_MAP == KF_ROWS_MAP_THREAD || KF_ROWS_MAP == KF_ROWS_MAP_TILE
#define KF_ROWS_P 1
#elif KF_ROWS_MAP == KF_ROWS_MAP_GROUP
#define KF_ROWS_P KF_GROUP
#else
#define KF_ROWS_P KF_BS
#endif

static_assert(KF_ROWS_MAP >= 0 && KF_ROWS_MAP <= 4, "KF_ROWS_MAP is 0..4");
static_assert(KF_BS >= 32 && KF_BS <= 1024 && (KF_BS & (KF_BS - 1)) == 0, "KF_BS: power of two, 32..1024");
static_assert((KF_ROWS_MAP != KF_ROWS_MAP_THREAD && KF_ROWS_MAP != KF_ROWS_MAP_TILE) || KF_GROUP == 1,
              "maps 0 and 4: KF_GROUP 1");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_TILE || KF_RPG == 1, "map 4: KF_RPG 1");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_GROUP || (KF_GROUP >= 2 && KF_GROUP <= 32 && (KF_GROUP & (KF_GROUP - 1)) == 0),
              "map 1: KF_GROUP is 2, 4, 8, 16 or 32");
static_assert(KF_VW == 1 || KF_VW == 2 || KF_VW == 4 || (KF_VW == 8 && sizeof(E) == 2), "KF_VW is 1, 2, 4 (8: 2-byte input)");
static_assert(KF_EPT >= 1 && KF_RPG >= 1 && KF_RPG * KF_EPT <= 16, "1 <= KF_RPG * KF_EPT <= 16");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_SPLIT || KF_RPG == 1, "map 3: KF_RPG 1");
static_assert(KF_BLOCK_REDUCE != KF_BLOCK_REDUCE_SHARED || KF_RPG * KF_BS * KF_ELEM_BYTES <= 32768,
              "shared-memory tree: KF_RPG * KF_BS * element bytes <= 32 KiB");

// ---------------------------------------------------------------------------
// One row: scalar prefix up to the first aligned vector, the vector body, a
// scalar tail.  A row of 0 columns (used for rows past the end) is empty.

struct kf_row {
    const E *p;       // first element of the row
    const kf_vec *v;  // first aligned vector (p + prefix)
    kf_u64 nv;        // vectors in the body
    unsigned prefix;  // elements before the body (< KF_VW)
    unsigned tail;    // elements after the body (< KF_VW)
};

__device__ __forceinline__ kf_row kf_row_at(const E *p, kf_u64 cols)
{
    kf_row R;
    R.p = p;
    kf_u64 prefix = 0;
    if constexpr (KF_VW > 1) {
        // 16 bytes at most: a 32-byte vector (float64 x 4) is two 16-byte words.
        constexpr kf_u64 align = sizeof(kf_vec) < 16 ? sizeof(kf_vec) : 16;
        const kf_u64 mis = ((kf_u64)p % align) / sizeof(E);
        prefix = mis ? align / sizeof(E) - mis : 0;
        if (prefix > cols) prefix = cols;
    }
    R.prefix = (unsigned)prefix;
    R.v = (const kf_vec *)(p + prefix);
    R.nv = (cols - prefix) / KF_VW;
    R.tail = (unsigned)(cols - prefix - R.nv * KF_VW);
    return R;
}

__device__ __forceinline__ kf_vec kf_rows_vec_identity()
{
    kf_vec x;
#pragma unroll
    for (int i = 0; i < KF_VW; i++)
        x.v[i] = kf_identity_of<E>();
    return x;
}

// Lane l of a team of P folds its share of the row's scalar prefix and tail
// (fewer than KF_VW elements each) into acc.
template <int P>
__device__ __forceinline__ T kf_row_edges(const kf_row &R, unsigned l, T acc, bool do_prefix, bool do_tail)
{
    if constexpr (KF_VW > 1) {
        if ((do_prefix && R.prefix) || (do_tail && R.tail)) {
            const E *tp = R.p + R.prefix + R.nv * KF_VW;
#pragma unroll
            for (int i = 0; i < KF_VW - 1; i += P) {
                const unsigned e = (unsigned)i + l;
                if (do_prefix && e < R.prefix) acc = kf_op(acc, kf_load_one(R.p + e));
                if (do_tail && e < R.tail) acc = kf_op(acc, kf_load_one(tp + e));
            }
        }
    }
    return acc;
}

// Lane l of a team of P folds vectors lo + l, lo + l + P, ... < hi into acc,
// KF_EPT loads in flight per tile of P * KF_EPT vectors.
template <int P>
__device__ __forceinline__ T kf_row_body(const kf_vec *v, kf_u64 lo, kf_u64 hi, unsigned l, T acc)
{
    constexpr kf_u64 tile = (kf_u64)P * KF_EPT;
    kf_u64 base = lo;
    for (; base + tile <= hi; base += tile) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            x[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    if (base < hi) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = base + (kf_u64)k * P + l;
            x[k] = i < hi ? kf_load_vec(v + i) : kf_rows_vec_identity();
        }
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    return acc;
}

#if KF_ROWS_MAP == KF_ROWS_MAP_SPLIT && KF_PIPE == KF_PIPE_NEXT_TILE
// kf_row_body, software-pipelined (map 3): the loads of tile t + 1 are issued
// before tile t is folded, so 2 * KF_EPT loads are in flight across the
// boundary; the tiles and their vectors are folded in the same order.
template <int P>
__device__ __forceinline__ T kf_row_body_pipe(const kf_vec *v, kf_u64 lo, kf_u64 hi, unsigned l, T acc)
{
    constexpr kf_u64 tile = (kf_u64)P * KF_EPT;
    kf_u64 base = lo;
    if (base + tile <= hi) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            x[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
        for (base += tile; base + tile <= hi; base += tile) {
            kf_vec y[KF_EPT];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++)
                y[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) {
                acc = kf_op(acc, kf_fold_vec(x[k]));
                x[k] = y[k];
            }
        }
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    return kf_row_body<P>(v, base, hi, l, acc);
}
#endif

// ---------------------------------------------------------------------------
// Team reductions.

// A group of G consecutive lanes (aligned to G inside the warp); every lane
// of the warp must call it.  Lane 0 of the group holds the result (the
// butterfly gives every lane a value, but only lane 0's order is the one
// documented as deterministic).
template <int G>
__device__ __forceinline__ T kf_rows_group_reduce(T v)
{
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2)
        v = kf_op(v, __shfl_xor_sync(KF_FULL_MASK, v, off));
    return v;
}

// The block reduces N values at once (one barrier pair for all N); thread 0
// holds the results.  Opens with a barrier, so the shared slots may be
// reused by consecutive calls.
template <int N>
__device__ __forceinline__ void kf_rows_block_reduce(T (&v)[N], unsigned tid)
{
#if KF_BLOCK_REDUCE == KF_BLOCK_REDUCE_SHUFFLE
    constexpr int W = KF_BS / 32;
#pragma unroll
    for (int j = 0; j < N; j++)
        v[j] = kf_rows_group_reduce<32>(v[j]);
    if constexpr (W > 1) {
        __shared__ T s[N][W];
        const unsigned lane = tid % 32, warp = tid / 32;
        __syncthreads();
        if (lane == 0) {
#pragma unroll
            for (int j = 0; j < N; j++)
                s[j][warp] = v[j];
        }
        __syncthreads();
        // (W values, in lanes 0..W-1: log2(W) steps; the 32-lane steps
        // before them only added the identity)
        if (warp == 0) {
#pragma unroll
            for (int j = 0; j < N; j++)
                v[j] = kf_rows_group_reduce<W>(lane < W ? s[j][lane] : kf_identity());
        }
    }
#else
    __shared__ T s[N][KF_BS];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < N; j++)
        s[j][tid] = v[j];
    __syncthreads();
#pragma unroll
    for (unsigned h = KF_BS / 2; h >= 64; h /= 2) {
        if (tid < h) {
#pragma unroll
            for (int j = 0; j < N; j++)
                s[j][tid] = kf_op(s[j][tid], s[j][tid + h]);
        }
        __syncthreads();
    }
    if (tid < 32) {
#pragma unroll
        for (int j = 0; j < N; j++) {
            T a = s[j][tid];
            if constexpr (KF_BS >= 64) a = kf_op(a, s[j][tid + 32]);
            v[j] = kf_rows_group_reduce<32>(a);
        }
    }
#endif
}

// Map 3: the block holding item i when `work` items are dealt in contiguous
// ranges to nb blocks, the first rem = work % nb blocks taking q + 1 = work /
// nb + 1 items, the others q (no product can overflow).
__device__ __forceinline__ kf_u64 kf_rows_block_of(kf_u64 i, kf_u64 q, kf_u64 rem)
{
    const kf_u64 big = rem * (q + 1);
    return i < big ? i / (q + 1) : rem + (i - big) / q;
}

// Maps 0-2: row information and the first tile (KF_EPT vectors per row and
// lane) of the KF_RPG rows r0, r0 + teams, ...; rows past the end are empty
// (no loads).
template <int P, int TEAMS>
__device__ __forceinline__ void kf_rows_prep(const E *in, kf_u64 r0, kf_u64 nrows, kf_u64 ncols, kf_u64 rstride,
                                             unsigned l, kf_row (&R)[KF_RPG], kf_vec (&x)[KF_RPG][KF_EPT])
{
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
        const kf_u64 r = r0 + (kf_u64)j * TEAMS;
        const bool ok = r < nrows;
        R[j] = kf_row_at(in + (ok ? r : 0) * rstride, ok ? ncols : 0);
    }
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * P + l;
            x[j][k] = i < R[j].nv ? kf_load_vec(R[j].v + i) : kf_rows_vec_identity();
        }
    }
}

// Maps 0-2: folds the first tile, the edges and the rest of each row.
template <int P>
__device__ __forceinline__ void kf_rows_finish(const kf_row (&R)[KF_RPG], const kf_vec (&x)[KF_RPG][KF_EPT],
                                               unsigned l, T (&acc)[KF_RPG])
{
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
        T a = kf_fold_vec(x[j][0]);
#pragma unroll
        for (int k = 1; k < KF_EPT; k++)
            a = kf_op(a, kf_fold_vec(x[j][k]));
        a = kf_row_edges<P>(R[j], l, a, true, true);
        constexpr kf_u64 first = (kf_u64)P * KF_EPT;
        if (first < R[j].nv) a = kf_row_body<P>(R[j].v, first, R[j].nv, l, a);
        acc[j] = a;
    }
}

// ---------------------------------------------------------------------------
// The kernel (KF_ENTRY_LINKAGE: extern "C", common.cuh; static in kforge
// export's nvcc build).  No __restrict__ (as reduce.cuh: load "plain" stays plain).

// Test hook (KFORGE_PLANT=row_shift): row kf_plant_row's result goes to
// the next row.
#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
#define KF_ROWS_AT(r) ((long long)(r) == kf_plant_row && (r) + 1 < nrows ? (r) + 1 : (r))
#else
#define KF_ROWS_AT(r) (r)
#endif

#ifdef KF_MIN_BLOCKS
#define KF_ROWS_BOUNDS __launch_bounds__(KF_BS, KF_MIN_BLOCKS)
#else
#define KF_ROWS_BOUNDS __launch_bounds__(KF_BS)
#endif

KF_ENTRY_LINKAGE __global__ void KF_ROWS_BOUNDS
kf_reduce_rows(const E *in, long long rows, long long cols, long long stride, T *out, T *partial,
               unsigned *tickets, int splits)
{
    const unsigned tid = threadIdx.x;
    const kf_u64 nrows = (kf_u64)rows, ncols = (kf_u64)cols, rstride = (kf_u64)stride;

#if KF_ROWS_MAP == KF_ROWS_MAP_TILE
    // --- map 4: tiles of whole rows staged through shared memory ---------
    (void)partial;
    (void)tickets;
    (void)splits;
    constexpr kf_u64 TE = (kf_u64)KF_BS * KF_EPT * KF_VW;
    if (rstride != ncols || ncols * KF_VW > TE) {
        // Fallback: a thread per row, straight from global memory.
        const kf_u64 ntiles = (nrows + KF_BS - 1) / KF_BS;
        for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
            const kf_u64 r = t * KF_BS + tid;
            if (r < nrows) {
                const kf_row R = kf_row_at(in + r * rstride, ncols);
                T a = kf_row_edges<1>(R, 0, kf_identity(), true, true);
                kf_put(out, KF_ROWS_AT(r), kf_row_body<1>(R.v, 0, R.nv, 0, a));
            }
        }
        return;
    }
    // Element j of the tile sits at s[j + j / PAD]: one padding slot per
    // 128 bytes, so that the 32 threads of a warp reading element c of 32
    // consecutive rows (stride cols) hit different banks for cols up to 32.
    constexpr unsigned PAD = 128 / sizeof(T);
    __shared__ T s[TE + TE / PAD];
    const kf_u64 rt = TE / ncols / KF_VW * KF_VW;
    const kf_u64 ntiles = (nrows + rt - 1) / rt;
    kf_u64 t = blockIdx.x;
    if (t >= ntiles) return;
    // The tile's elements as one row: scalar prefix (misaligned input
    // only), vectors, scalar tail; in registers until stored.
    kf_row R;
    kf_vec x[KF_EPT];
    T pre = kf_identity(), post = kf_identity();
    auto load = [&](kf_u64 tt) {
        const kf_u64 r0 = tt * rt, nr = nrows - r0 < rt ? nrows - r0 : rt;
        R = kf_row_at(in + r0 * ncols, nr * ncols);
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * KF_BS + tid;
            if (i < R.nv) x[k] = kf_load_vec(R.v + i);
        }
        if constexpr (KF_VW > 1) {
            if (tid < R.prefix) pre = kf_load_one(R.p + tid);
            if (tid < R.tail) post = kf_load_one(R.p + R.prefix + R.nv * KF_VW + tid);
        }
    };
    load(t);
    for (; t < ntiles; t += gridDim.x) {
        __syncthreads(); // the previous tile's rows are folded
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * KF_BS + tid;
            if (i < R.nv) {
#pragma unroll
                for (int e = 0; e < KF_VW; e++) {
                    const unsigned j = R.prefix + (unsigned)i * KF_VW + e;
                    s[j + j / PAD] = kf_widen(x[k].v[e]);
                }
            }
        }
        if constexpr (KF_VW > 1) {
            if (tid < R.prefix) s[tid] = pre;
            if (tid < R.tail) {
                const unsigned j = R.prefix + (unsigned)R.nv * KF_VW + tid;
                s[j + j / PAD] = post;
            }
        }
        __syncthreads();
        const kf_u64 r0 = t * rt, nr = nrows - r0 < rt ? nrows - r0 : rt;
#if KF_PIPE == KF_PIPE_NEXT_TILE
        if (t + gridDim.x < ntiles) load(t + gridDim.x); // in flight while this tile is folded
#endif
        const unsigned nc = (unsigned)ncols;
        for (unsigned q = tid; q < nr; q += KF_BS) {
            unsigned j = q * nc;
            T a = s[j + j / PAD];
            for (unsigned c = 1; c < nc; c++) {
                j++;
                a = kf_op(a, s[j + j / PAD]);
            }
            kf_put(out, KF_ROWS_AT(r0 + q), a);
        }
#if KF_PIPE != KF_PIPE_NEXT_TILE
        if (t + gridDim.x < ntiles) load(t + gridDim.x);
#endif
    }
#elif KF_ROWS_MAP != KF_ROWS_MAP_SPLIT
    // --- maps 0, 1, 2: a team of P lanes per row, KF_RPG rows per team ---
    constexpr unsigned P = KF_ROWS_P;
    constexpr unsigned teams = KF_BS / P;                       // rows side by side in a block
    constexpr kf_u64 rows_per_tile = (kf_u64)teams * KF_RPG;
    const unsigned team = tid / P, l = tid % P;
    const kf_u64 ntiles = (nrows + rows_per_tile - 1) / rows_per_tile;
    (void)partial;
    (void)tickets;
    (void)splits;

    // Row j of a team: r0 + j * teams, so that for every j the teams of a
    // warp read neighbouring rows (coalesced when rows are short).
#if KF_PIPE == KF_PIPE_NEXT_TILE
    // Pipelined: the next tile's row information and first loads are issued
    // before this tile is folded and reduced (needs a capped grid to matter).
    kf_row R[KF_RPG];
    kf_vec x[KF_RPG][KF_EPT];
    kf_rows_prep<P, teams>(in, (kf_u64)blockIdx.x * rows_per_tile + team, nrows, ncols, rstride, l, R, x);
    for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const kf_u64 r0 = t * rows_per_tile + team;
        kf_row Rn[KF_RPG];
        kf_vec xn[KF_RPG][KF_EPT];
        kf_rows_prep<P, teams>(in, (t + gridDim.x) * rows_per_tile + team, nrows, ncols, rstride, l, Rn, xn);
        T acc[KF_RPG];
        kf_rows_finish<P>(R, x, l, acc);
#else
    for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const kf_u64 r0 = t * rows_per_tile + team;
        T acc[KF_RPG];
        if constexpr (KF_RPG == 1) {
            // One row: the tile loop from the start (unpredicated full tiles).
            const bool ok = r0 < nrows;
            const kf_row R = kf_row_at(in + (ok ? r0 : 0) * rstride, ok ? ncols : 0);
            acc[0] = kf_row_edges<P>(R, l, kf_identity(), true, true);
            acc[0] = kf_row_body<P>(R.v, 0, R.nv, l, acc[0]);
        } else {
            // First tile of every row: all KF_RPG * KF_EPT loads before any
            // use, then the rest of each row (long rows only).
            kf_row R[KF_RPG];
            kf_vec x[KF_RPG][KF_EPT];
            kf_rows_prep<P, teams>(in, r0, nrows, ncols, rstride, l, R, x);
            kf_rows_finish<P>(R, x, l, acc);
        }
#endif

#if KF_ROWS_MAP == KF_ROWS_MAP_GROUP
#pragma unroll
        for (int j = 0; j < KF_RPG; j++)
            acc[j] = kf_rows_group_reduce<P>(acc[j]);
#elif KF_ROWS_MAP == KF_ROWS_MAP_BLOCK
        kf_rows_block_reduce<KF_RPG>(acc, tid);
#endif
        if (l == 0) {
#pragma unroll
            for (int j = 0; j < KF_RPG; j++) {
                const kf_u64 r = r0 + (kf_u64)j * teams;
                if (r < nrows) kf_put(out, KF_ROWS_AT(r), acc[j]);
            }
        }
#if KF_PIPE == KF_PIPE_NEXT_TILE
#pragma unroll
        for (int j = 0; j < KF_RPG; j++) {
            R[j] = Rn[j];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++)
                x[j][k] = xn[j][k];
        }
#endif
    }
#else
    // --- map 3: rows split in `splits` parts, balanced over the grid --------
    // The rows * splits parts (row-major) are dealt to the blocks in
    // contiguous, balanced ranges (kf_rows_block_of).  A block folds the parts
    // it holds of one row as one contiguous vector range, then reduces and
    // either writes the row (it holds the whole row) or publishes a partial;
    // a per-row ticket counts the row's blocks and the last one combines.
    // The divisions are the block's first instructions, before any load:
    // a grid of one block per part (grid auto) needs none for the deal, and
    // a power-of-two `splits` (the tuning spaces') divides by shifts.
    const kf_u64 ns = splits > 1 ? (kf_u64)splits : 1;
    const kf_u64 work = nrows * ns, nb = gridDim.x, b = blockIdx.x;
    const bool one = nb == work; // block b holds part b
    const kf_u64 q = one ? 1 : work / nb, rem = one ? 0 : work % nb;
    const bool pow2 = (ns & (ns - 1)) == 0;
    const unsigned sh = (unsigned)(__ffsll((long long)ns) - 1);
    auto div_ns = [&](kf_u64 x) { return pow2 ? x >> sh : x / ns; };
    kf_u64 i = b * q + (b < rem ? b : rem);
    const kf_u64 iend = i + q + (b < rem ? 1 : 0);
    while (i < iend) {
        const kf_u64 r = div_ns(i), p0 = i - r * ns;
        const kf_u64 p1 = ns - p0 < iend - i ? ns : p0 + (iend - i);
        i += p1 - p0;
        const kf_row R = kf_row_at(in + r * rstride, ncols);
        // Parts of whole 8-vector groups (128 B for float x 4): neighbouring
        // blocks share no DRAM sector.
        const kf_u64 chunk = (div_ns(R.nv + ns - 1) + 7) & ~(kf_u64)7;
        kf_u64 lo = p0 * chunk, hi = p1 * chunk;
        if (lo > R.nv) lo = R.nv;
        if (hi > R.nv) hi = R.nv;
        T a = kf_identity();
        a = kf_row_edges<KF_BS>(R, tid, a, p0 == 0, p1 == ns);
#if KF_PIPE == KF_PIPE_NEXT_TILE
        a = kf_row_body_pipe<KF_BS>(R.v, lo, hi, tid, a);
#else
        a = kf_row_body<KF_BS>(R.v, lo, hi, tid, a);
#endif
        T v[1] = {a};
        kf_rows_block_reduce<1>(v, tid);
        if (p0 == 0 && p1 == ns) { // the whole row is this block's
            if (tid == 0) kf_put(out, KF_ROWS_AT(r), v[0]);
            continue;
        }
        // Blocks fb..lb hold parts of row r.
        const kf_u64 fb = one ? r * ns : kf_rows_block_of(r * ns, q, rem);
        const kf_u64 lb = one ? fb + ns - 1 : kf_rows_block_of(r * ns + ns - 1, q, rem);
        const kf_u64 n = lb - fb + 1;
#if KF_SPLIT_COMBINE == KF_SPLIT_COMBINE_ATOMIC
        // Combine into partial[r]; the row's last block moves the value to
        // out[r] and leaves the identity (and ticket 0) for the next launch.
        if (tid == 0) {
            kf_atomic(partial + r, v[0]);
            if (kf_ticket(tickets + r) == n - 1) {
                kf_put(out, KF_ROWS_AT(r), kf_atomic_take(partial + r));
                tickets[r] = 0;
            }
        }
#else
        // Block b's partial of row r goes to partial[r + b] (distinct for
        // every (row, block) pair: the blocks of row r + 1 start at lb or
        // later).  The ticket (release) publishes it; warp 0 of the row's last
        // block (acquire by lane 0, then __syncwarp, which orders memory among
        // the warp's lanes) folds partial[r + fb .. r + lb] in a fixed order
        // (deterministic for a given grid) and resets the ticket.  Only warp
        // 0 waits for the ticket: the other warps go on to their next part.
        if (tid < 32) {
            int last = 0;
            if (tid == 0) {
                partial[r + b] = v[0];
                last = kf_ticket(tickets + r) == n - 1;
            }
            last = __shfl_sync(KF_FULL_MASK, last, 0);
            if (last) {
                __syncwarp();
                // volatile: L2, never a stale L1 line
                const volatile T *pp = (const volatile T *)partial + r + fb;
                T c = kf_identity();
                kf_u64 k = tid;
                for (; k + 96 < n; k += 128) {
                    const T x0 = pp[k], x1 = pp[k + 32], x2 = pp[k + 64], x3 = pp[k + 96];
                    c = kf_op(kf_op(kf_op(kf_op(c, x0), x1), x2), x3);
                }
                for (; k < n; k += 32)
                    c = kf_op(c, pp[k]);
                c = kf_rows_group_reduce<32>(c);
                if (tid == 0) {
                    kf_put(out, KF_ROWS_AT(r), c);
                    tickets[r] = 0;
                }
            }
        }
#endif
    }
#endif
}

} // namespace kforge_reduce_rows_float32_sum_k0_ns
#undef kf_reduce_rows
#undef KF_T
#undef KF_ELEM_BYTES
#undef KF_IS_FLOAT
#undef KF_IS_SIGNED
#undef KF_INT32_LIKE
#undef KF_DTYPE_INT32
#undef KF_DTYPE_UINT32
#undef KF_DTYPE_INT64
#undef KF_DTYPE_FLOAT32
#undef KF_DTYPE_FLOAT64
#undef KF_DTYPE_BFLOAT16
#undef KF_DTYPE_FLOAT16
#undef KF_OP_SUM
#undef KF_OP_MIN
#undef KF_OP_MAX
#undef KF_OP_PROD
#undef KF_OP_AND
#undef KF_OP_OR
#undef KF_OP_XOR
#undef KF_ACC_DTYPE_AUTO
#undef KF_ACC_DTYPE_INPUT
#undef KF_ACC_DTYPE_FLOAT32
#undef KF_ACC_DTYPE_FLOAT64
#undef KF_ROWS_MAP_THREAD
#undef KF_ROWS_MAP_GROUP
#undef KF_ROWS_MAP_BLOCK
#undef KF_ROWS_MAP_SPLIT
#undef KF_ROWS_MAP_TILE
#undef KF_LOAD_PLAIN
#undef KF_LOAD_LDG
#undef KF_LOAD_STREAM
#undef KF_LOAD_LDG_PREFETCH
#undef KF_BLOCK_REDUCE_SHUFFLE
#undef KF_BLOCK_REDUCE_SHARED
#undef KF_SPLIT_COMBINE_ATOMIC
#undef KF_SPLIT_COMBINE_LAST_BLOCK
#undef KF_PIPE_NONE
#undef KF_PIPE_NEXT_TILE
#undef KF_DTYPE
#undef KF_OP
#undef KF_ACC_DTYPE
#undef KF_ROWS_MAP
#undef KF_GROUP
#undef KF_BS
#undef KF_EPT
#undef KF_RPG
#undef KF_VW
#undef KF_LOAD
#undef KF_BLOCK_REDUCE
#undef KF_SPLIT_COMBINE
#undef KF_PIPE
#undef KF_ROWS_MIN_BLOCKS
#undef KF_MIN_BLOCKS
#undef KF_FULL_MASK
#undef KF_ENTRY_LINKAGE
#undef KF_HOOK_LOADS
#undef KF_ROWS_P
#undef KF_ROWS_AT
#undef KF_ROWS_BOUNDS

// ===========================================================================
// kernel k1: split2/last_block/bs1024/ept2/rpg1/v4/2waves/ldg_prefetch (the grid is chosen at launch)
// ===========================================================================
#define kf_reduce_rows kforge_reduce_rows_float32_sum_k1
#define KF_ENTRY_LINKAGE KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE
namespace kforge_reduce_rows_float32_sum_k1_ns {
// kforge 0.1.0 generated reduce_rows kernel
//   kernel               reduce_rows
//   dtype                float32
//   op                   sum
//   acc_dtype            auto
//   map                  split
//   group                1
//   block_size           1024
//   elements_per_thread  2
//   rows_per_group       1
//   vector_width         4
//   load                 ldg_prefetch
//   block_reduce         shuffle
//   split_combine        last_block
//   pipeline             none
//   min_blocks           0
// rows, cols, row_stride, splits and the grid are launch-time arguments.

#define KF_T float
#define KF_ELEM_BYTES 4
#define KF_IS_FLOAT 1
#define KF_IS_SIGNED 0
#define KF_INT32_LIKE 0
#define KF_DTYPE_INT32 0
#define KF_DTYPE_UINT32 1
#define KF_DTYPE_INT64 2
#define KF_DTYPE_FLOAT32 3
#define KF_DTYPE_FLOAT64 4
#define KF_DTYPE_BFLOAT16 5
#define KF_DTYPE_FLOAT16 6
#define KF_OP_SUM 0
#define KF_OP_MIN 1
#define KF_OP_MAX 2
#define KF_OP_PROD 3
#define KF_OP_AND 4
#define KF_OP_OR 5
#define KF_OP_XOR 6
#define KF_ACC_DTYPE_AUTO 0
#define KF_ACC_DTYPE_INPUT 1
#define KF_ACC_DTYPE_FLOAT32 2
#define KF_ACC_DTYPE_FLOAT64 3
#define KF_ROWS_MAP_THREAD 0
#define KF_ROWS_MAP_GROUP 1
#define KF_ROWS_MAP_BLOCK 2
#define KF_ROWS_MAP_SPLIT 3
#define KF_ROWS_MAP_TILE 4
#define KF_LOAD_PLAIN 0
#define KF_LOAD_LDG 1
#define KF_LOAD_STREAM 2
#define KF_LOAD_LDG_PREFETCH 3
#define KF_BLOCK_REDUCE_SHUFFLE 0
#define KF_BLOCK_REDUCE_SHARED 1
#define KF_SPLIT_COMBINE_ATOMIC 0
#define KF_SPLIT_COMBINE_LAST_BLOCK 1
#define KF_PIPE_NONE 0
#define KF_PIPE_NEXT_TILE 1
#define KF_DTYPE 3 /* float32 */
#define KF_OP 0 /* sum */
#define KF_ACC_DTYPE 0 /* auto */
#define KF_ROWS_MAP 3 /* split */
#define KF_GROUP 1
#define KF_BS 1024
#define KF_EPT 2
#define KF_RPG 1
#define KF_VW 4
#define KF_LOAD 3 /* ldg_prefetch */
#define KF_BLOCK_REDUCE 0 /* shuffle */
#define KF_SPLIT_COMBINE 1 /* last_block */
#define KF_PIPE 0 /* none */
#define KF_ROWS_MIN_BLOCKS 0
#if KF_ROWS_MIN_BLOCKS > 0
#define KF_MIN_BLOCKS KF_ROWS_MIN_BLOCKS
#endif

// ---------------------------------------------------------------------------
// common.cuh -- element type, operator, identity, atomics and global loads
// for kforge's generated reduction kernels.  codegen.c puts the parameter
// #defines (KF_T, KF_OP, ...) in front of this file.  No headers are
// included: NVRTC provides the device intrinsics (and has no cuda_bf16.h
// or cuda_fp16.h of its own: 2-byte floats are their bits here, widened by
// hand).
// ---------------------------------------------------------------------------

// T: the accumulator's type, which the outputs and partials have.  E: the
// input's element, T itself, or (KF_IN_T) the bits of a bfloat16
// (KF_IN_BFLOAT16) or float16 (KF_IN_FLOAT16), widened to T as loaded.
typedef KF_T T;
#ifdef KF_IN_T
typedef KF_IN_T E;
#else
typedef T E;
#endif
typedef unsigned long long kf_u64;
typedef unsigned int kf_u32;

// O: the outputs' type: T, or (KF_OUT_T, acc_dtype input) the bits of the
// 2-byte input type, T rounded once to nearest even as a result is stored
// (kf_put).  Partials, scratch and atomics stay T.
#ifdef KF_OUT_T
typedef KF_OUT_T O;
#else
typedef T O;
#endif

__device__ __forceinline__ O kf_out(T x)
{
#if defined(KF_OUT_BFLOAT16)
    const kf_u32 u = __float_as_uint((float)x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (O)((u >> 16) | 0x40u); // NaN stays a (quiet) NaN
    return (O)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#elif defined(KF_OUT_FLOAT16)
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"((float)x));
    return h;
#else
    return x;
#endif
}

// Stores result i: out[i] as an O (out points at the outputs, whatever the
// kernel's parameter type says).
__device__ __forceinline__ void kf_put(T *out, long long i, T x)
{
    ((O *)(void *)out)[i] = kf_out(x);
}

#define KF_FULL_MASK 0xffffffffu

// The linkage of a kernel entry: extern "C", so that cuModuleGetFunction
// finds it by its plain name.  kforge export defines it as static for nvcc,
// so that a header holding kernels may be included by several translation
// units (an extern "C" kernel would be defined once per unit).
#ifndef KF_ENTRY_LINKAGE
#define KF_ENTRY_LINKAGE extern "C"
#endif

// Operators: KF_OP_SUM, KF_OP_MIN, ... and every other enumerated value
// (KF_LOAD_LDG, ...) are #defined by the generator from kforge's parameter
// table, so templates compare names, never numbers that could drift.

// Unsigned type of the same width: integer sums and products are done in
// it, so that signed overflow wraps (as the CPU reference does) instead of
// being undefined behaviour.
template <int B> struct kf_bits_of;
template <> struct kf_bits_of<4> { typedef kf_u32 type; };
template <> struct kf_bits_of<8> { typedef kf_u64 type; };
typedef typename kf_bits_of<sizeof(T)>::type U;

__device__ __forceinline__ U kf_to_bits(T x)
{
    union { T t; U u; } c;
    c.t = x;
    return c.u;
}

__device__ __forceinline__ T kf_from_bits(U x)
{
    union { T t; U u; } c;
    c.u = x;
    return c.t;
}

__device__ __forceinline__ T kf_identity()
{
    if constexpr (KF_OP == KF_OP_SUM || KF_OP == KF_OP_OR || KF_OP == KF_OP_XOR) {
        return T(0);
    } else if constexpr (KF_OP == KF_OP_PROD) {
        return T(1);
    } else if constexpr (KF_OP == KF_OP_AND) {
        return kf_from_bits(~U(0));
    } else if constexpr (KF_OP == KF_OP_MIN) {
        if constexpr (KF_IS_FLOAT) return kf_from_bits(sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull));
        else if constexpr (KF_IS_SIGNED) return kf_from_bits(~U(0) >> 1);
        else return kf_from_bits(~U(0));
    } else { // KF_OP_MAX
        if constexpr (KF_IS_FLOAT) return kf_from_bits(sizeof(T) == 4 ? U(0xff800000u) : U(0xfff0000000000000ull));
        else if constexpr (KF_IS_SIGNED) return kf_from_bits(~(~U(0) >> 1));
        else return T(0);
    }
}

__device__ __forceinline__ T kf_op(T a, T b)
{
#if KF_OP == KF_OP_SUM && KF_IS_FLOAT
    return a + b;
#elif KF_OP == KF_OP_SUM
    return kf_from_bits(kf_to_bits(a) + kf_to_bits(b));
#elif KF_OP == KF_OP_PROD && KF_IS_FLOAT
    return a * b;
#elif KF_OP == KF_OP_PROD
    return kf_from_bits(kf_to_bits(a) * kf_to_bits(b));
#elif KF_OP == KF_OP_MIN
    return min(a, b);
#elif KF_OP == KF_OP_MAX
    return max(a, b);
#elif KF_OP == KF_OP_AND
    return a & b;
#elif KF_OP == KF_OP_OR
    return a | b;
#else
    return a ^ b;
#endif
}

// Atomically combines v into *addr (global or shared memory).  Native
// atomics where the hardware has them, a compare-and-swap loop otherwise.
__device__ __forceinline__ void kf_atomic(T *addr, T v)
{
#if KF_OP == KF_OP_SUM && (KF_IS_FLOAT || KF_ELEM_BYTES == 4)
    atomicAdd(addr, v);
#elif KF_OP == KF_OP_SUM
    atomicAdd((kf_u64 *)addr, (kf_u64)v);
#elif KF_OP == KF_OP_MIN && !KF_IS_FLOAT
    atomicMin(addr, v);
#elif KF_OP == KF_OP_MAX && !KF_IS_FLOAT
    atomicMax(addr, v);
#elif KF_OP == KF_OP_AND
    atomicAnd((U *)addr, kf_to_bits(v));
#elif KF_OP == KF_OP_OR
    atomicOr((U *)addr, kf_to_bits(v));
#elif KF_OP == KF_OP_XOR
    atomicXor((U *)addr, kf_to_bits(v));
#else
    // float min/max and every product: compare-and-swap.
    U *a = (U *)addr;
    U old = *(volatile U *)a, assumed;
    do {
        assumed = old;
        old = atomicCAS(a, assumed, kf_to_bits(kf_op(kf_from_bits(assumed), v)));
    } while (assumed != old);
#endif
}

// The ticket of the single-pass combines: an atomic increment with
// acquire-release semantics at GPU scope.  Release makes this thread's
// partial (stored or atomically combined just before) visible to whoever
// takes a later ticket; acquire makes every earlier block's partial visible
// to the block that takes the last one.  This replaces the seeds'
// __threadfence() + atomicAdd (a full sequentially consistent fence) by the
// ordering that is actually needed (PTX ISA, memory consistency model).
__device__ __forceinline__ unsigned kf_ticket(unsigned *t)
{
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(t) : "memory");
    return old;
}

// Takes the value out of *addr and leaves the identity in its place, so a
// single-pass kernel is ready for its next launch without a host memset.
__device__ __forceinline__ T kf_atomic_take(T *addr)
{
    return kf_from_bits(atomicExch((U *)addr, kf_to_bits(kf_identity())));
}

// ---------------------------------------------------------------------------
// Test hook (KFORGE_PLANT, tests only; absent from every normal build):
// coverage faults, chosen at run time.  The engine sets these globals before
// the launches (cuModuleGetGlobal): the address of the input element that is
// dropped (read as the identity) or read from its neighbour (kf_plant_shift),
// the first pass's input, the block whose value counts twice in the first
// pass, the row whose result goes to the next row (-1: none).

#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
__device__ kf_u64 kf_plant_at;
__device__ int kf_plant_shift;
__device__ kf_u64 kf_plant_in;
__device__ long long kf_plant_twice = -1;
__device__ long long kf_plant_row = -1;
#define KF_HOOK_LOADS 1
#else
#define KF_HOOK_LOADS 0
#endif

// ---------------------------------------------------------------------------
// Input elements as accumulator values.  kf_widen(x): x itself for a T, a
// bfloat16's or float16's bits widened exactly (bfloat16 is the upper half
// of a float; float16 by cvt.f32.f16).  kf_identity_of<X>(): the identity
// as an X (a 2-byte float's bits for the input: 0, 1, +inf, -inf).

template <typename X> struct kf_is_acc { static constexpr bool value = false; };
template <> struct kf_is_acc<T> { static constexpr bool value = true; };

template <typename X> __device__ __forceinline__ T kf_widen(X x)
{
#ifdef KF_IN_T
    if constexpr (!kf_is_acc<X>::value) {
#ifdef KF_IN_BFLOAT16
        return (T)__uint_as_float((kf_u32)x << 16);
#else
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
        return (T)f;
#endif
    } else
#endif
    return x;
}

template <typename X> __device__ __forceinline__ X kf_identity_of()
{
#ifdef KF_IN_T
    if constexpr (!kf_is_acc<X>::value) {
#ifdef KF_IN_BFLOAT16
        constexpr unsigned short one = 0x3f80, inf = 0x7f80;
#else
        constexpr unsigned short one = 0x3c00, inf = 0x7c00;
#endif
        if constexpr (KF_OP == KF_OP_PROD) return one;
        else if constexpr (KF_OP == KF_OP_MIN) return inf;
        else if constexpr (KF_OP == KF_OP_MAX) return (unsigned short)(inf | 0x8000);
        else return 0;
    } else
#endif
    return kf_identity();
}

// ---------------------------------------------------------------------------
// Global loads of KF_VW consecutive elements (of the input, E, or of
// partials, T).  A vector of VW * sizeof(X) bytes is loaded as 2-, 4-, 8- or
// 16-byte words (more as several 16-byte words), with the load flavour
// chosen by KF_LOAD: plain, read-only (__ldg) or streaming (__ldcs,
// evict-first).

template <typename X> struct kf_vec_of {
    X v[KF_VW];
};
typedef kf_vec_of<E> kf_vec;

// load ldg_prefetch: the read-only path without L1 allocation, asking L2 to
// fetch the whole 256-byte sector group (fewer, larger DRAM requests for a
// stream that will use them all).  The input is not written while the kernel
// runs, so the asm needs no "memory" clobber and may be scheduled freely.
__device__ __forceinline__ unsigned short kf_ld_pf(const unsigned short *p)
{
    unsigned short r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.u16 %0, [%1];" : "=h"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ kf_u32 kf_ld_pf(const kf_u32 *p)
{
    kf_u32 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.u32 %0, [%1];" : "=r"(r) : "l"(p));
    return r;
}
__device__ __forceinline__ uint2 kf_ld_pf(const uint2 *p)
{
    uint2 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
    return r;
}
__device__ __forceinline__ uint4 kf_ld_pf(const uint4 *p)
{
    uint4 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

template <typename W> __device__ __forceinline__ W kf_ld_word(const W *p)
{
    if constexpr (KF_LOAD == KF_LOAD_LDG_PREFETCH) return kf_ld_pf(p);
    else if constexpr (KF_LOAD == KF_LOAD_LDG) return __ldg(p);
    else if constexpr (KF_LOAD == KF_LOAD_STREAM) return __ldcs(p);
    else return *p;
}

template <typename X> __device__ __forceinline__ kf_vec_of<X> kf_load_vec(const kf_vec_of<X> *p)
{
    constexpr int bytes = (int)sizeof(X) * KF_VW;
    union { kf_vec_of<X> v; unsigned short w0; kf_u32 w1; uint2 w2; uint4 w4[bytes > 16 ? bytes / 16 : 1]; } u;
    if constexpr (bytes == 2) {
        u.w0 = kf_ld_word((const unsigned short *)p);
    } else if constexpr (bytes == 4) {
        u.w1 = kf_ld_word((const kf_u32 *)p);
    } else if constexpr (bytes == 8) {
        u.w2 = kf_ld_word((const uint2 *)p);
    } else {
#pragma unroll
        for (int w = 0; w < bytes / 16; w++) u.w4[w] = kf_ld_word((const uint4 *)p + w);
    }
#if KF_HOOK_LOADS
    const kf_u64 off = kf_plant_at - (kf_u64)p;
    if (kf_plant_at && off < sizeof(kf_vec_of<X>)) {
        const int lane = (int)(off / sizeof(X));
        u.v.v[lane] = kf_plant_shift ? ((const X *)p)[lane + 1] : kf_identity_of<X>();
    }
#endif
    return u.v;
}

// One element, widened to T.
template <typename X> __device__ __forceinline__ T kf_load_one(const X *p)
{
#if KF_HOOK_LOADS
    if (kf_plant_at && (kf_u64)p == kf_plant_at) return kf_plant_shift ? kf_widen(p[1]) : kf_identity();
#endif
    if constexpr (KF_LOAD == KF_LOAD_LDG || KF_LOAD == KF_LOAD_LDG_PREFETCH) return kf_widen(__ldg(p));
    else if constexpr (KF_LOAD == KF_LOAD_STREAM) return kf_widen(__ldcs(p));
    else return kf_widen(*p);
}

template <typename X> __device__ __forceinline__ T kf_fold_vec(const kf_vec_of<X> &x)
{
    T r = kf_widen(x.v[0]);
#pragma unroll
    for (int i = 1; i < KF_VW; i++)
        r = kf_op(r, kf_widen(x.v[i]));
    return r;
}

// ---------------------------------------------------------------------------
// reduce_rows/reduce_rows.cuh -- row-wise reduction: out[r] = op over
// in[r * stride + c], c = 0 .. cols-1, for every row r < rows.
//
// Pasted after the #defines and kernel_src/common.cuh (kf_op, kf_identity,
// kf_atomic, kf_ticket, kf_atomic_take, kf_vec, kf_load_vec, kf_fold_vec,
// kf_load_one).  No #includes: NVRTC provides the intrinsics.
//
// Defines (those of common.cuh: KF_T, KF_OP, KF_IS_FLOAT, KF_IS_SIGNED,
// KF_ELEM_BYTES, KF_INT32_LIKE, KF_VW, KF_LOAD; and):
//
//   KF_ROWS_MAP       how rows are mapped to threads:
//                       0  a thread per row
//                       1  a group of KF_GROUP consecutive lanes per row
//                          (2, 4, 8, 16 or 32; 32 = a warp per row)
//                       2  a block per row
//                       3  every row cut in `splits` parts; the rows * splits
//                          parts are dealt to the blocks in balanced
//                          contiguous ranges, so a block may hold several
//                          parts of one row (folded as one range, no extra
//                          reduction) or parts of several rows; the blocks
//                          of a row combine by KF_SPLIT_COMBINE
//                       4  tiles of whole rows staged through shared memory
//                          (short rows, row_stride == cols): the block
//                          loads a contiguous tile of up to TE = KF_BS *
//                          KF_EPT * KF_VW elements with vector loads
//                          spread over all its threads, then each thread
//                          folds whole rows of the tile from shared memory
//                          and the block's stores of consecutive rows are
//                          coalesced.  Rows per tile: RT = floor(TE / cols)
//                          rounded down to a multiple of KF_VW, so that
//                          every tile starts on a vector boundary when the
//                          input does.  When row_stride != cols or
//                          cols * KF_VW > TE, the kernel falls back to a
//                          thread per row (RT = KF_BS).
//   KF_GROUP          lanes per row for map 1 (2..32, power of two).  Map 0
//                     is the group of 1 (KF_GROUP absent or 1); ignored by
//                     maps 2 and 3.
//   KF_BS             threads per block (power of two, 32..1024).
//   KF_EPT            vector loads in flight per thread per row tile
//                     (1..16): a team of P lanes (P = 1, KF_GROUP, KF_BS)
//                     walks a row in tiles of P * KF_EPT vectors.
//   KF_RPG            rows in flight per team per iteration (maps 0..2;
//                     must be 1 for maps 3 and 4);
//                     default 1): the first tile of
//                     KF_RPG rows is loaded before any of it is folded, so
//                     short rows still have KF_RPG * KF_EPT loads in flight.
//                     KF_RPG * KF_EPT <= 16.
//   KF_PIPE           optional (default 0).  Maps 0..2: 1 issues the row
//                     information and first-tile loads of the block's next
//                     tile before folding the current one (software
//                     pipelining across grid-stride iterations; pays off
//                     only with a capped grid; doubles the tile registers).
//                     Map 4: the next tile's loads are issued before the
//                     rows of this one are folded from shared memory.
//                     Map 3: inside a part, tile t + 1's KF_EPT loads are
//                     issued before tile t is folded (the fold order, and
//                     so the result, is the same as without).
//   KF_VW             elements per vector load (1, 2, 4; 8 for a 2-byte input).  Each row has its
//                     own aligned prefix (< KF_VW elements before the first
//                     aligned vector) and tail, so any row start alignment,
//                     any stride and any cols work.
//   KF_LOAD           0 plain, 1 ldg, 2 stream (__ldcs), 3 ldg_prefetch
//                     (ld.global.nc.L1::no_allocate.L2::256B), as common.cuh.
//   KF_BLOCK_REDUCE   maps 2 and 3: 0 warp shuffles + one shared slot per
//                     warp, 1 shared-memory tree down to 64 values, then the
//                     last warp by shuffles.  Default 0.
//   KF_SPLIT_COMBINE  map 3, for rows held by more than one block: 0 atomic
//                     (kf_atomic into partial[row]; the row's last block, by
//                     a per-row ticket, moves it to out[row] and leaves the
//                     identity behind; float sums are then not run-to-run
//                     deterministic), 1 last block (each block stores its
//                     partial; warp 0 of the row's last block folds the
//                     row's partials in block order: deterministic).
//                     Default 1.
//   KF_MIN_BLOCKS     optional: resident blocks per SM asked of the compiler
//                     (__launch_bounds__(KF_BS, KF_MIN_BLOCKS): caps registers
//                     at 65536 / (KF_BS * KF_MIN_BLOCKS)).  Absent: plain
//                     __launch_bounds__(KF_BS).
//
// Kernel
//   kf_reduce_rows(in, rows, cols, stride, out, partial, tickets, splits)
//     in       rows x cols elements (E: T, or a 2-byte float's bits widened
//              to T as loaded: common.cuh), row r at in + r * stride (stride >=
//              cols; any alignment of in and of stride); rows, cols >= 1
//     out      rows results (every element written by every launch)
//     partial  map 3 only (else may be NULL):
//                combine 0: rows elements, each holding kf_identity()
//                           before the first launch; every launch leaves
//                           them so.
//                combine 1: rows + gridDim.x - 1 elements (block b's partial
//                           of row r is partial[r + b]), no initialisation.
//     tickets  map 3 only (else may be NULL): rows unsigned, 0 before the
//              first launch; every launch leaves them 0.
//              partial and tickets may be shared by consecutive launches on
//              one stream, not by concurrent ones.
//     splits   map 3: parts per row (>= 1; 1: whole rows dealt to blocks,
//              no combine); other maps ignore it.
//
// Launch rule (block = KF_BS threads, no dynamic shared memory; map 4 has
// (TE + TE / (128 / sizeof(T))) * sizeof(T) bytes of static shared memory):
//   maps 0, 1: rows_per_tile = (KF_BS / G) * KF_RPG (G = 1 for map 0,
//              KF_GROUP for map 1); tiles = ceil(rows / rows_per_tile)
//   map 2:     tiles = ceil(rows / KF_RPG)
//   map 4:     tiles = ceil(rows / RT) (RT above; KF_BS in the fallback)
//   map 3:     tiles = rows * splits (part p of a row is vectors
//              [p*chunk, (p+1)*chunk), chunk = ceil(nvec / splits) rounded up
//              to 8 vectors; the first (tiles % grid) blocks take
//              tiles / grid + 1 consecutive parts, the others tiles / grid)
//   grid.x = min(tiles, cap) for any cap >= 1, at most 2^31 - 1.  Maps 0-2
//   are grid-stride loops over their tiles and map 3 deals its parts to
//   whatever grid it gets, so a capped (persistent) grid is correct.
//   gridDim.y/z are never used: rows beyond 65535 or 2^31 need nothing
//   special.
//
// Determinism: every map except map 3 with KF_SPLIT_COMBINE 0 folds each
// row in an order fixed by the compile-time parameters, cols, the alignment
// of the row and (map 3) splits and the grid size: bit-identical results run
// to run for a given launch.
// ---------------------------------------------------------------------------

// Every parameter above is #defined by the generator (tools/rows_proto.cu
// gives its own defaults when used outside kforge).

// KF_ROWS_MAP_THREAD, _GROUP, _BLOCK, _SPLIT, KF_BLOCK_REDUCE_SHUFFLE, _SHARED,
// KF_SPLIT_COMBINE_ATOMIC, _LAST_BLOCK and KF_PIPE_NONE, _NEXT_TILE come from
// the generator (the parameter table in src/families/reduce_rows/rows.c).

// Lanes that share one row: the team.
#if KF_ROWS_MAP == KF_ROWS_MAP_THREAD || KF_ROWS_MAP == KF_ROWS_MAP_TILE
#define KF_ROWS_P 1
#elif KF_ROWS_MAP == KF_ROWS_MAP_GROUP
#define KF_ROWS_P KF_GROUP
#else
#define KF_ROWS_P KF_BS
#endif

static_assert(KF_ROWS_MAP >= 0 && KF_ROWS_MAP <= 4, "KF_ROWS_MAP is 0..4");
static_assert(KF_BS >= 32 && KF_BS <= 1024 && (KF_BS & (KF_BS - 1)) == 0, "KF_BS: power of two, 32..1024");
static_assert((KF_ROWS_MAP != KF_ROWS_MAP_THREAD && KF_ROWS_MAP != KF_ROWS_MAP_TILE) || KF_GROUP == 1,
              "maps 0 and 4: KF_GROUP 1");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_TILE || KF_RPG == 1, "map 4: KF_RPG 1");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_GROUP || (KF_GROUP >= 2 && KF_GROUP <= 32 && (KF_GROUP & (KF_GROUP - 1)) == 0),
              "map 1: KF_GROUP is 2, 4, 8, 16 or 32");
static_assert(KF_VW == 1 || KF_VW == 2 || KF_VW == 4 || (KF_VW == 8 && sizeof(E) == 2), "KF_VW is 1, 2, 4 (8: 2-byte input)");
static_assert(KF_EPT >= 1 && KF_RPG >= 1 && KF_RPG * KF_EPT <= 16, "1 <= KF_RPG * KF_EPT <= 16");
static_assert(KF_ROWS_MAP != KF_ROWS_MAP_SPLIT || KF_RPG == 1, "map 3: KF_RPG 1");
static_assert(KF_BLOCK_REDUCE != KF_BLOCK_REDUCE_SHARED || KF_RPG * KF_BS * KF_ELEM_BYTES <= 32768,
              "shared-memory tree: KF_RPG * KF_BS * element bytes <= 32 KiB");

// ---------------------------------------------------------------------------
// One row: scalar prefix up to the first aligned vector, the vector body, a
// scalar tail.  A row of 0 columns (used for rows past the end) is empty.

struct kf_row {
    const E *p;       // first element of the row
    const kf_vec *v;  // first aligned vector (p + prefix)
    kf_u64 nv;        // vectors in the body
    unsigned prefix;  // elements before the body (< KF_VW)
    unsigned tail;    // elements after the body (< KF_VW)
};

__device__ __forceinline__ kf_row kf_row_at(const E *p, kf_u64 cols)
{
    kf_row R;
    R.p = p;
    kf_u64 prefix = 0;
    if constexpr (KF_VW > 1) {
        // 16 bytes at most: a 32-byte vector (float64 x 4) is two 16-byte words.
        constexpr kf_u64 align = sizeof(kf_vec) < 16 ? sizeof(kf_vec) : 16;
        const kf_u64 mis = ((kf_u64)p % align) / sizeof(E);
        prefix = mis ? align / sizeof(E) - mis : 0;
        if (prefix > cols) prefix = cols;
    }
    R.prefix = (unsigned)prefix;
    R.v = (const kf_vec *)(p + prefix);
    R.nv = (cols - prefix) / KF_VW;
    R.tail = (unsigned)(cols - prefix - R.nv * KF_VW);
    return R;
}

__device__ __forceinline__ kf_vec kf_rows_vec_identity()
{
    kf_vec x;
#pragma unroll
    for (int i = 0; i < KF_VW; i++)
        x.v[i] = kf_identity_of<E>();
    return x;
}

// Lane l of a team of P folds its share of the row's scalar prefix and tail
// (fewer than KF_VW elements each) into acc.
template <int P>
__device__ __forceinline__ T kf_row_edges(const kf_row &R, unsigned l, T acc, bool do_prefix, bool do_tail)
{
    if constexpr (KF_VW > 1) {
        if ((do_prefix && R.prefix) || (do_tail && R.tail)) {
            const E *tp = R.p + R.prefix + R.nv * KF_VW;
#pragma unroll
            for (int i = 0; i < KF_VW - 1; i += P) {
                const unsigned e = (unsigned)i + l;
                if (do_prefix && e < R.prefix) acc = kf_op(acc, kf_load_one(R.p + e));
                if (do_tail && e < R.tail) acc = kf_op(acc, kf_load_one(tp + e));
            }
        }
    }
    return acc;
}

// Lane l of a team of P folds vectors lo + l, lo + l + P, ... < hi into acc,
// KF_EPT loads in flight per tile of P * KF_EPT vectors.
template <int P>
__device__ __forceinline__ T kf_row_body(const kf_vec *v, kf_u64 lo, kf_u64 hi, unsigned l, T acc)
{
    constexpr kf_u64 tile = (kf_u64)P * KF_EPT;
    kf_u64 base = lo;
    for (; base + tile <= hi; base += tile) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            x[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    if (base < hi) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = base + (kf_u64)k * P + l;
            x[k] = i < hi ? kf_load_vec(v + i) : kf_rows_vec_identity();
        }
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    return acc;
}

#if KF_ROWS_MAP == KF_ROWS_MAP_SPLIT && KF_PIPE == KF_PIPE_NEXT_TILE
// kf_row_body, software-pipelined (map 3): the loads of tile t + 1 are issued
// before tile t is folded, so 2 * KF_EPT loads are in flight across the
// boundary; the tiles and their vectors are folded in the same order.
template <int P>
__device__ __forceinline__ T kf_row_body_pipe(const kf_vec *v, kf_u64 lo, kf_u64 hi, unsigned l, T acc)
{
    constexpr kf_u64 tile = (kf_u64)P * KF_EPT;
    kf_u64 base = lo;
    if (base + tile <= hi) {
        kf_vec x[KF_EPT];
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            x[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
        for (base += tile; base + tile <= hi; base += tile) {
            kf_vec y[KF_EPT];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++)
                y[k] = kf_load_vec(v + base + (kf_u64)k * P + l);
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) {
                acc = kf_op(acc, kf_fold_vec(x[k]));
                x[k] = y[k];
            }
        }
#pragma unroll
        for (int k = 0; k < KF_EPT; k++)
            acc = kf_op(acc, kf_fold_vec(x[k]));
    }
    return kf_row_body<P>(v, base, hi, l, acc);
}
#endif

// ---------------------------------------------------------------------------
// Team reductions.

// A group of G consecutive lanes (aligned to G inside the warp); every lane
// of the warp must call it.  Lane 0 of the group holds the result (the
// butterfly gives every lane a value, but only lane 0's order is the one
// documented as deterministic).
template <int G>
__device__ __forceinline__ T kf_rows_group_reduce(T v)
{
#pragma unroll
    for (int off = G / 2; off > 0; off /= 2)
        v = kf_op(v, __shfl_xor_sync(KF_FULL_MASK, v, off));
    return v;
}

// The block reduces N values at once (one barrier pair for all N); thread 0
// holds the results.  Opens with a barrier, so the shared slots may be
// reused by consecutive calls.
template <int N>
__device__ __forceinline__ void kf_rows_block_reduce(T (&v)[N], unsigned tid)
{
#if KF_BLOCK_REDUCE == KF_BLOCK_REDUCE_SHUFFLE
    constexpr int W = KF_BS / 32;
#pragma unroll
    for (int j = 0; j < N; j++)
        v[j] = kf_rows_group_reduce<32>(v[j]);
    if constexpr (W > 1) {
        __shared__ T s[N][W];
        const unsigned lane = tid % 32, warp = tid / 32;
        __syncthreads();
        if (lane == 0) {
#pragma unroll
            for (int j = 0; j < N; j++)
                s[j][warp] = v[j];
        }
        __syncthreads();
        // (W values, in lanes 0..W-1: log2(W) steps; the 32-lane steps
        // before them only added the identity)
        if (warp == 0) {
#pragma unroll
            for (int j = 0; j < N; j++)
                v[j] = kf_rows_group_reduce<W>(lane < W ? s[j][lane] : kf_identity());
        }
    }
#else
    __shared__ T s[N][KF_BS];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < N; j++)
        s[j][tid] = v[j];
    __syncthreads();
#pragma unroll
    for (unsigned h = KF_BS / 2; h >= 64; h /= 2) {
        if (tid < h) {
#pragma unroll
            for (int j = 0; j < N; j++)
                s[j][tid] = kf_op(s[j][tid], s[j][tid + h]);
        }
        __syncthreads();
    }
    if (tid < 32) {
#pragma unroll
        for (int j = 0; j < N; j++) {
            T a = s[j][tid];
            if constexpr (KF_BS >= 64) a = kf_op(a, s[j][tid + 32]);
            v[j] = kf_rows_group_reduce<32>(a);
        }
    }
#endif
}

// Map 3: the block holding item i when `work` items are dealt in contiguous
// ranges to nb blocks, the first rem = work % nb blocks taking q + 1 = work /
// nb + 1 items, the others q (no product can overflow).
__device__ __forceinline__ kf_u64 kf_rows_block_of(kf_u64 i, kf_u64 q, kf_u64 rem)
{
    const kf_u64 big = rem * (q + 1);
    return i < big ? i / (q + 1) : rem + (i - big) / q;
}

// Maps 0-2: row information and the first tile (KF_EPT vectors per row and
// lane) of the KF_RPG rows r0, r0 + teams, ...; rows past the end are empty
// (no loads).
template <int P, int TEAMS>
__device__ __forceinline__ void kf_rows_prep(const E *in, kf_u64 r0, kf_u64 nrows, kf_u64 ncols, kf_u64 rstride,
                                             unsigned l, kf_row (&R)[KF_RPG], kf_vec (&x)[KF_RPG][KF_EPT])
{
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
        const kf_u64 r = r0 + (kf_u64)j * TEAMS;
        const bool ok = r < nrows;
        R[j] = kf_row_at(in + (ok ? r : 0) * rstride, ok ? ncols : 0);
    }
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * P + l;
            x[j][k] = i < R[j].nv ? kf_load_vec(R[j].v + i) : kf_rows_vec_identity();
        }
    }
}

// Maps 0-2: folds the first tile, the edges and the rest of each row.
template <int P>
__device__ __forceinline__ void kf_rows_finish(const kf_row (&R)[KF_RPG], const kf_vec (&x)[KF_RPG][KF_EPT],
                                               unsigned l, T (&acc)[KF_RPG])
{
#pragma unroll
    for (int j = 0; j < KF_RPG; j++) {
        T a = kf_fold_vec(x[j][0]);
#pragma unroll
        for (int k = 1; k < KF_EPT; k++)
            a = kf_op(a, kf_fold_vec(x[j][k]));
        a = kf_row_edges<P>(R[j], l, a, true, true);
        constexpr kf_u64 first = (kf_u64)P * KF_EPT;
        if (first < R[j].nv) a = kf_row_body<P>(R[j].v, first, R[j].nv, l, a);
        acc[j] = a;
    }
}

// ---------------------------------------------------------------------------
// The kernel (KF_ENTRY_LINKAGE: extern "C", common.cuh; static in kforge
// export's nvcc build).  No __restrict__ (as reduce.cuh: load "plain" stays plain).

// Test hook (KFORGE_PLANT=row_shift): row kf_plant_row's result goes to
// the next row.
#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
#define KF_ROWS_AT(r) ((long long)(r) == kf_plant_row && (r) + 1 < nrows ? (r) + 1 : (r))
#else
#define KF_ROWS_AT(r) (r)
#endif

#ifdef KF_MIN_BLOCKS
#define KF_ROWS_BOUNDS __launch_bounds__(KF_BS, KF_MIN_BLOCKS)
#else
#define KF_ROWS_BOUNDS __launch_bounds__(KF_BS)
#endif

KF_ENTRY_LINKAGE __global__ void KF_ROWS_BOUNDS
kf_reduce_rows(const E *in, long long rows, long long cols, long long stride, T *out, T *partial,
               unsigned *tickets, int splits)
{
    const unsigned tid = threadIdx.x;
    const kf_u64 nrows = (kf_u64)rows, ncols = (kf_u64)cols, rstride = (kf_u64)stride;

#if KF_ROWS_MAP == KF_ROWS_MAP_TILE
    // --- map 4: tiles of whole rows staged through shared memory ---------
    (void)partial;
    (void)tickets;
    (void)splits;
    constexpr kf_u64 TE = (kf_u64)KF_BS * KF_EPT * KF_VW;
    if (rstride != ncols || ncols * KF_VW > TE) {
        // Fallback: a thread per row, straight from global memory.
        const kf_u64 ntiles = (nrows + KF_BS - 1) / KF_BS;
        for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
            const kf_u64 r = t * KF_BS + tid;
            if (r < nrows) {
                const kf_row R = kf_row_at(in + r * rstride, ncols);
                T a = kf_row_edges<1>(R, 0, kf_identity(), true, true);
                kf_put(out, KF_ROWS_AT(r), kf_row_body<1>(R.v, 0, R.nv, 0, a));
            }
        }
        return;
    }
    // Element j of the tile sits at s[j + j / PAD]: one padding slot per
    // 128 bytes, so that the 32 threads of a warp reading element c of 32
    // consecutive rows (stride cols) hit different banks for cols up to 32.
    constexpr unsigned PAD = 128 / sizeof(T);
    __shared__ T s[TE + TE / PAD];
    const kf_u64 rt = TE / ncols / KF_VW * KF_VW;
    const kf_u64 ntiles = (nrows + rt - 1) / rt;
    kf_u64 t = blockIdx.x;
    if (t >= ntiles) return;
    // The tile's elements as one row: scalar prefix (misaligned input
    // only), vectors, scalar tail; in registers until stored.
    kf_row R;
    kf_vec x[KF_EPT];
    T pre = kf_identity(), post = kf_identity();
    auto load = [&](kf_u64 tt) {
        const kf_u64 r0 = tt * rt, nr = nrows - r0 < rt ? nrows - r0 : rt;
        R = kf_row_at(in + r0 * ncols, nr * ncols);
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * KF_BS + tid;
            if (i < R.nv) x[k] = kf_load_vec(R.v + i);
        }
        if constexpr (KF_VW > 1) {
            if (tid < R.prefix) pre = kf_load_one(R.p + tid);
            if (tid < R.tail) post = kf_load_one(R.p + R.prefix + R.nv * KF_VW + tid);
        }
    };
    load(t);
    for (; t < ntiles; t += gridDim.x) {
        __syncthreads(); // the previous tile's rows are folded
#pragma unroll
        for (int k = 0; k < KF_EPT; k++) {
            const kf_u64 i = (kf_u64)k * KF_BS + tid;
            if (i < R.nv) {
#pragma unroll
                for (int e = 0; e < KF_VW; e++) {
                    const unsigned j = R.prefix + (unsigned)i * KF_VW + e;
                    s[j + j / PAD] = kf_widen(x[k].v[e]);
                }
            }
        }
        if constexpr (KF_VW > 1) {
            if (tid < R.prefix) s[tid] = pre;
            if (tid < R.tail) {
                const unsigned j = R.prefix + (unsigned)R.nv * KF_VW + tid;
                s[j + j / PAD] = post;
            }
        }
        __syncthreads();
        const kf_u64 r0 = t * rt, nr = nrows - r0 < rt ? nrows - r0 : rt;
#if KF_PIPE == KF_PIPE_NEXT_TILE
        if (t + gridDim.x < ntiles) load(t + gridDim.x); // in flight while this tile is folded
#endif
        const unsigned nc = (unsigned)ncols;
        for (unsigned q = tid; q < nr; q += KF_BS) {
            unsigned j = q * nc;
            T a = s[j + j / PAD];
            for (unsigned c = 1; c < nc; c++) {
                j++;
                a = kf_op(a, s[j + j / PAD]);
            }
            kf_put(out, KF_ROWS_AT(r0 + q), a);
        }
#if KF_PIPE != KF_PIPE_NEXT_TILE
        if (t + gridDim.x < ntiles) load(t + gridDim.x);
#endif
    }
#elif KF_ROWS_MAP != KF_ROWS_MAP_SPLIT
    // --- maps 0, 1, 2: a team of P lanes per row, KF_RPG rows per team ---
    constexpr unsigned P = KF_ROWS_P;
    constexpr unsigned teams = KF_BS / P;                       // rows side by side in a block
    constexpr kf_u64 rows_per_tile = (kf_u64)teams * KF_RPG;
    const unsigned team = tid / P, l = tid % P;
    const kf_u64 ntiles = (nrows + rows_per_tile - 1) / rows_per_tile;
    (void)partial;
    (void)tickets;
    (void)splits;

    // Row j of a team: r0 + j * teams, so that for every j the teams of a
    // warp read neighbouring rows (coalesced when rows are short).
#if KF_PIPE == KF_PIPE_NEXT_TILE
    // Pipelined: the next tile's row information and first loads are issued
    // before this tile is folded and reduced (needs a capped grid to matter).
    kf_row R[KF_RPG];
    kf_vec x[KF_RPG][KF_EPT];
    kf_rows_prep<P, teams>(in, (kf_u64)blockIdx.x * rows_per_tile + team, nrows, ncols, rstride, l, R, x);
    for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const kf_u64 r0 = t * rows_per_tile + team;
        kf_row Rn[KF_RPG];
        kf_vec xn[KF_RPG][KF_EPT];
        kf_rows_prep<P, teams>(in, (t + gridDim.x) * rows_per_tile + team, nrows, ncols, rstride, l, Rn, xn);
        T acc[KF_RPG];
        kf_rows_finish<P>(R, x, l, acc);
#else
    for (kf_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const kf_u64 r0 = t * rows_per_tile + team;
        T acc[KF_RPG];
        if constexpr (KF_RPG == 1) {
            // One row: the tile loop from the start (unpredicated full tiles).
            const bool ok = r0 < nrows;
            const kf_row R = kf_row_at(in + (ok ? r0 : 0) * rstride, ok ? ncols : 0);
            acc[0] = kf_row_edges<P>(R, l, kf_identity(), true, true);
            acc[0] = kf_row_body<P>(R.v, 0, R.nv, l, acc[0]);
        } else {
            // First tile of every row: all KF_RPG * KF_EPT loads before any
            // use, then the rest of each row (long rows only).
            kf_row R[KF_RPG];
            kf_vec x[KF_RPG][KF_EPT];
            kf_rows_prep<P, teams>(in, r0, nrows, ncols, rstride, l, R, x);
            kf_rows_finish<P>(R, x, l, acc);
        }
#endif

#if KF_ROWS_MAP == KF_ROWS_MAP_GROUP
#pragma unroll
        for (int j = 0; j < KF_RPG; j++)
            acc[j] = kf_rows_group_reduce<P>(acc[j]);
#elif KF_ROWS_MAP == KF_ROWS_MAP_BLOCK
        kf_rows_block_reduce<KF_RPG>(acc, tid);
#endif
        if (l == 0) {
#pragma unroll
            for (int j = 0; j < KF_RPG; j++) {
                const kf_u64 r = r0 + (kf_u64)j * teams;
                if (r < nrows) kf_put(out, KF_ROWS_AT(r), acc[j]);
            }
        }
#if KF_PIPE == KF_PIPE_NEXT_TILE
#pragma unroll
        for (int j = 0; j < KF_RPG; j++) {
            R[j] = Rn[j];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++)
                x[j][k] = xn[j][k];
        }
#endif
    }
#else
    // --- map 3: rows split in `splits` parts, balanced over the grid --------
    // The rows * splits parts (row-major) are dealt to the blocks in
    // contiguous, balanced ranges (kf_rows_block_of).  A block folds the parts
    // it holds of one row as one contiguous vector range, then reduces and
    // either writes the row (it holds the whole row) or publishes a partial;
    // a per-row ticket counts the row's blocks and the last one combines.
    // The divisions are the block's first instructions, before any load:
    // a grid of one block per part (grid auto) needs none for the deal, and
    // a power-of-two `splits` (the tuning spaces') divides by shifts.
    const kf_u64 ns = splits > 1 ? (kf_u64)splits : 1;
    const kf_u64 work = nrows * ns, nb = gridDim.x, b = blockIdx.x;
    const bool one = nb == work; // block b holds part b
    const kf_u64 q = one ? 1 : work / nb, rem = one ? 0 : work % nb;
    const bool pow2 = (ns & (ns - 1)) == 0;
    const unsigned sh = (unsigned)(__ffsll((long long)ns) - 1);
    auto div_ns = [&](kf_u64 x) { return pow2 ? x >> sh : x / ns; };
    kf_u64 i = b * q + (b < rem ? b : rem);
    const kf_u64 iend = i + q + (b < rem ? 1 : 0);
    while (i < iend) {
        const kf_u64 r = div_ns(i), p0 = i - r * ns;
        const kf_u64 p1 = ns - p0 < iend - i ? ns : p0 + (iend - i);
        i += p1 - p0;
        const kf_row R = kf_row_at(in + r * rstride, ncols);
        // Parts of whole 8-vector groups (128 B for float x 4): neighbouring
        // blocks share no DRAM sector.
        const kf_u64 chunk = (div_ns(R.nv + ns - 1) + 7) & ~(kf_u64)7;
        kf_u64 lo = p0 * chunk, hi = p1 * chunk;
        if (lo > R.nv) lo = R.nv;
        if (hi > R.nv) hi = R.nv;
        T a = kf_identity();
        a = kf_row_edges<KF_BS>(R, tid, a, p0 == 0, p1 == ns);
#if KF_PIPE == KF_PIPE_NEXT_TILE
        a = kf_row_body_pipe<KF_BS>(R.v, lo, hi, tid, a);
#else
        a = kf_row_body<KF_BS>(R.v, lo, hi, tid, a);
#endif
        T v[1] = {a};
        kf_rows_block_reduce<1>(v, tid);
        if (p0 == 0 && p1 == ns) { // the whole row is this block's
            if (tid == 0) kf_put(out, KF_ROWS_AT(r), v[0]);
            continue;
        }
        // Blocks fb..lb hold parts of row r.
        const kf_u64 fb = one ? r * ns : kf_rows_block_of(r * ns, q, rem);
        const kf_u64 lb = one ? fb + ns - 1 : kf_rows_block_of(r * ns + ns - 1, q, rem);
        const kf_u64 n = lb - fb + 1;
#if KF_SPLIT_COMBINE == KF_SPLIT_COMBINE_ATOMIC
        // Combine into partial[r]; the row's last block moves the value to
        // out[r] and leaves the identity (and ticket 0) for the next launch.
        if (tid == 0) {
            kf_atomic(partial + r, v[0]);
            if (kf_ticket(tickets + r) == n - 1) {
                kf_put(out, KF_ROWS_AT(r), kf_atomic_take(partial + r));
                tickets[r] = 0;
            }
        }
#else
        // Block b's partial of row r goes to partial[r + b] (distinct for
        // every (row, block) pair: the blocks of row r + 1 start at lb or
        // later).  The ticket (release) publishes it; warp 0 of the row's last
        // block (acquire by lane 0, then __syncwarp, which orders memory among
        // the warp's lanes) folds partial[r + fb .. r + lb] in a fixed order
        // (deterministic for a given grid) and resets the ticket.  Only warp
        // 0 waits for the ticket: the other warps go on to their next part.
        if (tid < 32) {
            int last = 0;
            if (tid == 0) {
                partial[r + b] = v[0];
                last = kf_ticket(tickets + r) == n - 1;
            }
            last = __shfl_sync(KF_FULL_MASK, last, 0);
            if (last) {
                __syncwarp();
                // volatile: L2, never a stale L1 line
                const volatile T *pp = (const volatile T *)partial + r + fb;
                T c = kf_identity();
                kf_u64 k = tid;
                for (; k + 96 < n; k += 128) {
                    const T x0 = pp[k], x1 = pp[k + 32], x2 = pp[k + 64], x3 = pp[k + 96];
                    c = kf_op(kf_op(kf_op(kf_op(c, x0), x1), x2), x3);
                }
                for (; k < n; k += 32)
                    c = kf_op(c, pp[k]);
                c = kf_rows_group_reduce<32>(c);
                if (tid == 0) {
                    kf_put(out, KF_ROWS_AT(r), c);
                    tickets[r] = 0;
                }
            }
        }
#endif
    }
#endif
}

} // namespace kforge_reduce_rows_float32_sum_k1_ns
#undef kf_reduce_rows
#undef KF_T
#undef KF_ELEM_BYTES
#undef KF_IS_FLOAT
#undef KF_IS_SIGNED
#undef KF_INT32_LIKE
#undef KF_DTYPE_INT32
#undef KF_DTYPE_UINT32
#undef KF_DTYPE_INT64
#undef KF_DTYPE_FLOAT32
#undef KF_DTYPE_FLOAT64
#undef KF_DTYPE_BFLOAT16
#undef KF_DTYPE_FLOAT16
#undef KF_OP_SUM
#undef KF_OP_MIN
#undef KF_OP_MAX
#undef KF_OP_PROD
#undef KF_OP_AND
#undef KF_OP_OR
#undef KF_OP_XOR
#undef KF_ACC_DTYPE_AUTO
#undef KF_ACC_DTYPE_INPUT
#undef KF_ACC_DTYPE_FLOAT32
#undef KF_ACC_DTYPE_FLOAT64
#undef KF_ROWS_MAP_THREAD
#undef KF_ROWS_MAP_GROUP
#undef KF_ROWS_MAP_BLOCK
#undef KF_ROWS_MAP_SPLIT
#undef KF_ROWS_MAP_TILE
#undef KF_LOAD_PLAIN
#undef KF_LOAD_LDG
#undef KF_LOAD_STREAM
#undef KF_LOAD_LDG_PREFETCH
#undef KF_BLOCK_REDUCE_SHUFFLE
#undef KF_BLOCK_REDUCE_SHARED
#undef KF_SPLIT_COMBINE_ATOMIC
#undef KF_SPLIT_COMBINE_LAST_BLOCK
#undef KF_PIPE_NONE
#undef KF_PIPE_NEXT_TILE
#undef KF_DTYPE
#undef KF_OP
#undef KF_ACC_DTYPE
#undef KF_ROWS_MAP
#undef KF_GROUP
#undef KF_BS
#undef KF_EPT
#undef KF_RPG
#undef KF_VW
#undef KF_LOAD
#undef KF_BLOCK_REDUCE
#undef KF_SPLIT_COMBINE
#undef KF_PIPE
#undef KF_ROWS_MIN_BLOCKS
#undef KF_MIN_BLOCKS
#undef KF_FULL_MASK
#undef KF_ENTRY_LINKAGE
#undef KF_HOOK_LOADS
#undef KF_ROWS_P
#undef KF_ROWS_AT
#undef KF_ROWS_BOUNDS

// The identity of sum into out[0..n) (rows of no columns, the atomic partials of a
// workspace), 0 into zero[0..nzero) (the tickets of a workspace).
KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE __global__ void kforge_reduce_rows_float32_sum_fill(float *out, unsigned long long n, unsigned *zero,
                                   unsigned long long nzero)
{
    union { unsigned int u; float t; } id;
    id.u = 0x00000000u;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n || i < nzero; i += step) {
        if (i < n) out[i] = id.t;
        if (i < nzero) zero[i] = 0;
    }
}
#pragma nv_diag_default 177

// ---------------------------------------------------------------------------
// Host API of an exported row-wise reduction (kforge export --kernel
// reduce_rows: this part comes from kernel_src/reduce_rows/reduce_rows_export.cuh,
// with the names, the element type and the tables filled in by
// src/families/reduce_rows/export.c).  It reproduces kforge's launch plan
// (src/families/reduce_rows/rows.c, plan and enqueue; the launch rule in
// reduce_rows.cuh): one launch of KF_BS threads per block over
// min(tiles, cap) blocks, the tiles ceil(rows / rows per tile) (maps thread,
// group, block, tile: the last's rows per tile depend on cols and row_stride)
// or rows x splits (map split), the cap from the variant's
// grid kind with the device's multiprocessors and the occupancy
// calculator's blocks per multiprocessor asked for at run time.  The kernel
// itself handles any alignment of the input and of each row (a scalar
// prefix up to the first aligned vector) and any row stride.  Map split with
// more than one part per row combines the parts of a row through per-row
// tickets and partials in the workspace; the other variants need none.
// NVRTC compiles the kernels above and skips this part.
// ---------------------------------------------------------------------------
#if !defined(__CUDACC_RTC__)

namespace kforge_reduce_rows_float32_sum_detail {

typedef float T; // the accumulator's type: the partials'
typedef float O; // the outputs' (T, or for acc_dtype input the input's)
typedef float E_in; // the input's

enum grid_kind { grid_auto, grid_blocks, grid_per_sm, grid_waves };
enum map_kind { map_thread, map_group, map_block, map_split, map_tile };
enum combine_kind { combine_atomic, combine_last_block };

struct kernel_info {
    const void *fn;
    int block;                      // threads per block (compiled in)
};
struct variant_info {
    int kernel;                     // index into kernels[]
    int map;                        // map_kind
    unsigned long long tile_rows;   // maps thread, group, block: rows a block covers per tile
                                    // (map tile: in its thread-per-row fallback)
    unsigned long long tile_elems;  // map tile: elements a tile holds (0 for the other maps)
    int vw;                         // map tile: elements per vector load
    int splits;                     // map split: parts per row (1 for the other maps)
    int combine;                    // map split: combine_kind
    int grid;                       // grid_kind
    unsigned long long grid_value;
    // where it was tuned, for the dispatch (family.h: shape_log_distance,
    // shape_nearer): ln rows, ln cols, ln row_stride, their sum, and the
    // median time measured there
    double log_rows, log_cols, log_stride, log_size, ms;
    const char *label;
};

#define kforge_reduce_rows_float32_sum_FILL_OUT 0 // 1: the outputs are not T (kforge_reduce_rows_float32_sum_fill_out)
static const int nkernels = 2;
static const kernel_info kernels[nkernels] = {
    {(const void *)kforge_reduce_rows_float32_sum_k0_ns::kforge_reduce_rows_float32_sum_k0, 256},
    {(const void *)kforge_reduce_rows_float32_sum_k1_ns::kforge_reduce_rows_float32_sum_k1, 1024},
};
static const int nvariants = 2;
static const variant_info variants[nvariants] = {
    {0, map_group, 128ull, 0ull, 4, 1, combine_last_block, grid_waves, 1ull,
     8.317766166719343, 3.4657359027997265, 3.4657359027997265, 15.249237972318797, 0.0022303292248695415,
     "k0 group8/bs256/ept2/rpg4/v4/1waves/ldg_prefetch, tuned at rows=4096 cols=32 on fake-gpu (KFORGE_FAKE_GPU): 0.0022303 ms, deterministic"},
    {1, map_split, 0ull, 0ull, 4, 2, combine_last_block, grid_waves, 2ull,
     4.1588830833596715, 9.7040605278392338, 9.7040605278392338, 23.56700413903814, 0.0049460328349693163,
     "k1 split2/last_block/bs1024/ept2/rpg1/v4/2waves/ldg_prefetch, tuned at rows=64 cols=16384 on fake-gpu (KFORGE_FAKE_GPU): 0.004946 ms, deterministic"},
};
static const bool any_workspace = true, any_atomic = false;

// Host helpers every exported header's API uses (kforge export puts this
// text, from kernel_src/export_host.cuh, right after the header's tables,
// inside its <P>_detail namespace; it needs the tables' kernels[] and
// nkernels).

static inline unsigned long long ceil_div(unsigned long long a, unsigned long long b) { return (a + b - 1) / b; }
static inline size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Multiprocessors of a device and resident blocks per multiprocessor of a
// kernel, asked for once per device (up to 64 devices are remembered).
static const int max_devices = 64;

static inline cudaError_t sms_of(int dev, int *sms)
{
    static std::atomic<int> cache[max_devices];
    bool keep = dev >= 0 && dev < max_devices;
    if (keep && (*sms = cache[dev].load(std::memory_order_relaxed)) > 0)
        return cudaSuccess;
    cudaError_t e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess && keep)
        cache[dev].store(*sms, std::memory_order_relaxed);
    return e;
}

static inline cudaError_t occupancy_of(int dev, int k, int *occ)
{
    static std::atomic<int> cache[max_devices][nkernels];
    bool keep = dev >= 0 && dev < max_devices;
    if (keep && (*occ = cache[dev][k].load(std::memory_order_relaxed)) > 0)
        return cudaSuccess;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(occ, kernels[k].fn, kernels[k].block, 0);
    if (e == cudaSuccess && keep)
        cache[dev][k].store(*occ, std::memory_order_relaxed);
    return e;
}


// The variant tuned for the shape nearest rows x cols with row_stride: the
// smallest |ln rows - ln R| + |ln cols - ln C| + |ln row_stride - ln S| over
// the tuned shapes R x C with S; as near up to rounding: the larger R C S;
// as large: the faster.  What `kforge best --kernel reduce_rows --rows R
// --cols C --row_stride S` answers (without --row_stride, S is C).
static inline int pick(unsigned long long rows, unsigned long long cols, unsigned long long stride)
{
    const double lr = std::log((double)rows), lc = std::log((double)cols), ls = std::log((double)stride);
    const double eps = 1e-9;
    int best = 0;
    double bd = INFINITY, bs = 0, bm = INFINITY;
    for (int i = 0; i < nvariants; i++) {
        const variant_info &v = variants[i];
        double d = 0;
        d += std::fabs(v.log_rows - lr);
        d += std::fabs(v.log_cols - lc);
        d += std::fabs(v.log_stride - ls);
        bool nearer = std::fabs(d - bd) > eps ? d < bd : std::fabs(v.log_size - bs) > eps ? v.log_size > bs : v.ms < bm;
        if (nearer) {
            best = i;
            bd = d;
            bs = v.log_size;
            bm = v.ms;
        }
    }
    return best;
}

// Blocks of the launch for rows rows (rows.c, plan): min(tiles, cap), at
// most 2^31 - 1 (the kernels are grid-stride loops, or deal the parts to
// whatever grid they get), at least 1.
// Map tile's rows per tile: floor(tile_elems / cols) rounded down to a
// multiple of vw, when row_stride == cols and cols x vw <= tile_elems (else
// the kernel's thread-per-row fallback: tile_rows).
static inline unsigned long long rows_per_tile(const variant_info &v, unsigned long long cols,
                                               unsigned long long stride)
{
    if (v.map != map_tile || stride != cols || cols < 1 || cols > v.tile_elems / (unsigned long long)v.vw)
        return v.tile_rows;
    return v.tile_elems / cols / (unsigned long long)v.vw * (unsigned long long)v.vw;
}

static inline cudaError_t blocks_for(const variant_info &v, unsigned long long rows, unsigned long long cols,
                                     unsigned long long stride, int dev, unsigned long long *blocks)
{
    unsigned long long tiles =
        v.map == map_split ? rows * (unsigned long long)v.splits : ceil_div(rows, rows_per_tile(v, cols, stride));
    unsigned long long cap = tiles;
    if (v.grid == grid_blocks) {
        cap = v.grid_value;
    } else if (v.grid == grid_per_sm || v.grid == grid_waves) {
        int sms = 0, occ = 1;
        cudaError_t e = sms_of(dev, &sms);
        if (e == cudaSuccess && v.grid == grid_waves)
            e = occupancy_of(dev, v.kernel, &occ);
        if (e != cudaSuccess)
            return e;
        cap = v.grid_value * (unsigned long long)(occ > 0 ? occ : 1) * (unsigned long long)(sms > 0 ? sms : 1);
    }
    unsigned long long g = tiles < cap ? tiles : cap;
    if (g > 2147483647ull)
        g = 2147483647ull;
    *blocks = g < 1 ? 1 : g;
    return cudaSuccess;
}

// ---------------------------------------------------------------------------
// The workspace.  Only map split with more than one part per row uses it:
// rows tickets (unsigned, 0 between calls), and partials -- for the atomic
// combine rows elements holding the identity between calls, for the
// last-block combine rows + blocks - 1 elements written before they are
// read.  Every call leaves the tickets and the atomic partials as it found
// them, so a workspace is prepared once (workspace_init).  For that, each
// part lies at the same place in every call, whatever its rows: from the
// first 256-byte aligned address, the tickets of `cap` rows, the atomic
// partials of cap rows (if any variant here combines atomically), and the
// last-block partials in the rest, where cap, the rows the workspace holds,
// is the most rows whose layout fits in workspace_bytes.  Hence: always pass
// a workspace with the same workspace_bytes.

static const size_t ws_align = 256;

// The largest input the kernels' 64-bit index arithmetic is asked to hold
// (2^47 elements: more than any GPU's memory; rows x splits stays below 2^63).
static const unsigned long long max_elems = 1ull << 47;

static inline bool uses_workspace(const variant_info &v) { return v.map == map_split && v.splits > 1; }

// Bytes of the layout for cap rows on device dev (dev < 0: an upper bound
// for any device).
static inline size_t layout_bytes(unsigned long long cap, int dev)
{
    if (cap == 0 || !any_workspace)
        return 0;
    size_t b = ws_align + align_up(cap * sizeof(unsigned), ws_align);
    if (any_atomic)
        b += align_up(cap * sizeof(T), ws_align);
    size_t last = 0;
    for (int i = 0; i < nvariants; i++) {
        const variant_info &v = variants[i];
        if (!uses_workspace(v) || v.combine != combine_last_block)
            continue;
        unsigned long long g = cap * (unsigned long long)v.splits;
        if (dev < 0 || blocks_for(v, cap, 1, 1, dev, &g) != cudaSuccess) // tiles: no grid is larger
            g = g < 2147483647ull ? g : 2147483647ull;
        size_t need = (cap + g - 1) * sizeof(T);
        last = need > last ? need : last;
    }
    return b + last;
}

// The rows a workspace of `bytes` holds on device dev (the largest cap with
// layout_bytes(cap, dev) <= bytes); remembered per thread for the last
// (bytes, dev) asked.
static inline unsigned long long capacity(size_t bytes, int dev)
{
    struct memo {
        size_t bytes;
        int dev;
        unsigned long long cap;
        bool valid;
    };
    static thread_local memo m = {0, 0, 0, false};
    if (m.valid && m.bytes == bytes && m.dev == dev)
        return m.cap;
    // layout_bytes(cap) > 4 cap; no call has more than max_elems rows
    unsigned long long lo = 0, hi = bytes / sizeof(unsigned);
    if (hi > max_elems)
        hi = max_elems;
    while (lo < hi) {
        unsigned long long mid = lo + (hi - lo + 1) / 2;
        if (layout_bytes(mid, dev) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    m = memo{bytes, dev, lo, true};
    return lo;
}

// The parts of a workspace that holds cap rows.
struct parts {
    unsigned *tickets;
    T *atomic;                  // cap elements
    T *last;                    // last_bytes
    size_t last_bytes;
};

static inline parts parts_of(void *workspace, size_t bytes, unsigned long long cap)
{
    size_t base = align_up((size_t)(uintptr_t)workspace, ws_align);
    size_t at = base + align_up(cap * sizeof(unsigned), ws_align);
    size_t last = at + (any_atomic ? align_up(cap * sizeof(T), ws_align) : 0);
    size_t end = (size_t)(uintptr_t)workspace + bytes;
    parts p = {(unsigned *)base, (T *)at, (T *)last, end > last ? end - last : 0};
    return p;
}

// The identity of the op into out[0..n), 0 into zero[0..nzero).
static inline cudaError_t fill(T *out, unsigned long long n, unsigned *zero, unsigned long long nzero,
                               cudaStream_t stream)
{
    unsigned long long most = n > nzero ? n : nzero;
    if (most == 0)
        return cudaSuccess;
    unsigned long long blocks = ceil_div(most, 256);
    if (blocks > 4096)
        blocks = 4096;
    void *args[] = {(void *)&out, (void *)&n, (void *)&zero, (void *)&nzero};
    return cudaLaunchKernel((const void *)kforge_reduce_rows_float32_sum_fill, dim3((unsigned)blocks), dim3(256), args, 0, stream);
}

// The identity of the op into out[0..n) (rows of no columns).
static inline cudaError_t fill_out(O *out, unsigned long long n, cudaStream_t stream)
{
#if kforge_reduce_rows_float32_sum_FILL_OUT
    unsigned long long blocks = ceil_div(n, 256);
    if (blocks > 4096)
        blocks = 4096;
    void *args[] = {(void *)&out, (void *)&n};
    return cudaLaunchKernel((const void *)kforge_reduce_rows_float32_sum_fill_out, dim3((unsigned)blocks), dim3(256), args, 0, stream);
#else
    return fill(out, n, 0, 0, stream);
#endif
}

} // namespace kforge_reduce_rows_float32_sum_detail

// Bytes of workspace that serve every call with up to rows rows (any cols,
// any row_stride) on the current device; 0 if no variant here needs one.
// Depends on the device only through capped grids of split variants (the
// blocks of a kernel that fit on it).  It is the most any split variant here
// needs at that many rows: rows x (splits + 1) elements for one that splits
// rows over a block per part (grid auto) and combines in the last block.
// kforge_reduce_rows_float32_sum_workspace_for gives what the calls of given shapes need.
static inline size_t kforge_reduce_rows_float32_sum_workspace(size_t rows)
{
    using namespace kforge_reduce_rows_float32_sum_detail;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess)
        dev = -1;
    return layout_bytes(rows < max_elems ? rows : max_elems, dev);
}

// Bytes of workspace that serve a call of rows x cols with row_stride (0:
// cols) on the current device: 0 if the variant it goes to needs none, else
// kforge_reduce_rows_float32_sum_workspace(rows).  The largest of these over several shapes serves
// every one of them: calls that go to variants without a workspace (many
// short rows, as a rule) ask for nothing.
static inline size_t kforge_reduce_rows_float32_sum_workspace_for(size_t rows, size_t cols, size_t row_stride)
{
    using namespace kforge_reduce_rows_float32_sum_detail;
    if (rows == 0 || cols == 0)
        return 0;
    if (!uses_workspace(variants[pick(rows, cols, row_stride ? row_stride : cols)]))
        return 0;
    return kforge_reduce_rows_float32_sum_workspace(rows);
}

// Prepares a workspace: the tickets 0, the atomic partials the identity.
// Once per workspace, before its first use; every call leaves it so.  Do it
// again if the memory was used for anything else in between.  A null
// workspace of 0 bytes is fine when kforge_reduce_rows_float32_sum_workspace gives 0.
static inline cudaError_t
kforge_reduce_rows_float32_sum_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace kforge_reduce_rows_float32_sum_detail;
    if (!any_workspace || (!workspace && workspace_bytes == 0))
        return cudaSuccess;
    if (!workspace)
        return cudaErrorInvalidValue;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    unsigned long long cap = capacity(workspace_bytes, dev);
    if (cap == 0)
        return cudaSuccess;
    parts p = parts_of(workspace, workspace_bytes, cap);
    return fill(p.atomic, any_atomic ? cap : 0, p.tickets, cap, stream);
}

// out[r] = the sum of in[r * row_stride + c], c = 0 .. cols-1, for every
// row r < rows, on stream, with the variant tuned for the nearest shape
// (pick).
// row_stride 0 means cols (rows may overlap: the input is only read).  Any
// alignment of in and of row_stride (elements, not bytes).  cols == 0 gives
// the identity in every row; rows == 0 does nothing (in and out may then be
// null).  workspace: kforge_reduce_rows_float32_sum_workspace(rows) bytes or more, prepared by
// kforge_reduce_rows_float32_sum_workspace_init, always with the same workspace_bytes (null if
// kforge_reduce_rows_float32_sum_workspace gives 0).  Errors: cudaErrorInvalidValue for a null out, a
// null in with cols > 0, pointers not aligned to the element, more than
// 2^47 elements, or a workspace (null or) smaller than the variant chosen
// needs; else what the launch returns.  Asynchronous, like a kernel launch.
static inline cudaError_t
kforge_reduce_rows_float32_sum(const float *in, size_t rows, size_t cols, size_t row_stride, float *out, void *workspace, size_t workspace_bytes,
    cudaStream_t stream)
{
    using namespace kforge_reduce_rows_float32_sum_detail;
    if (rows == 0)
        return cudaSuccess;
    if (!out || (uintptr_t)out % alignof(O) != 0)
        return cudaErrorInvalidValue;
    if (cols == 0)
        return fill_out(out, rows, stream);
    if (row_stride == 0)
        row_stride = cols;
    if (!in || (uintptr_t)in % alignof(E_in) != 0 || rows > max_elems || cols > max_elems || row_stride > max_elems ||
        (rows - 1) > (max_elems - cols) / row_stride)
        return cudaErrorInvalidValue;
    const variant_info &v = variants[pick(rows, cols, row_stride)];
    int dev = 0;
    unsigned long long blocks = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = blocks_for(v, rows, cols, row_stride, dev, &blocks);
    if (e != cudaSuccess)
        return e;
    T *partial = 0;
    unsigned *tickets = 0;
    if (uses_workspace(v)) {
        if (!workspace)
            return cudaErrorInvalidValue;
        unsigned long long cap = capacity(workspace_bytes, dev);
        if (rows > cap)
            return cudaErrorInvalidValue;
        parts p = parts_of(workspace, workspace_bytes, cap);
        tickets = p.tickets;
        if (v.combine == combine_atomic) {
            partial = p.atomic;
        } else {
            if ((rows + blocks - 1) * sizeof(T) > p.last_bytes)
                return cudaErrorInvalidValue;
            partial = p.last;
        }
    }
    long long r = (long long)rows, c = (long long)cols, s = (long long)row_stride;
    int splits = v.splits;
    void *args[] = {(void *)&in, (void *)&r, (void *)&c, (void *)&s, (void *)&out, (void *)&partial, (void *)&tickets,
                    (void *)&splits};
    return cudaLaunchKernel(kernels[v.kernel].fn, dim3((unsigned)blocks), dim3((unsigned)kernels[v.kernel].block), args,
                            0, stream);
}

// The variant kforge_reduce_rows_float32_sum uses for rows x cols with row_stride (0: cols), and where
// it was tuned.
static inline const char *kforge_reduce_rows_float32_sum_variant(size_t rows, size_t cols, size_t row_stride)
{
    using namespace kforge_reduce_rows_float32_sum_detail;
    rows = rows ? rows : 1;
    cols = cols ? cols : 1;
    return variants[pick(rows, cols, row_stride ? row_stride : cols)].label;
}

#endif // !__CUDACC_RTC__

#undef KFORGE_REDUCE_ROWS_FLOAT32_SUM_LINKAGE
#endif // KFORGE_REDUCE_ROWS_FLOAT32_SUM_CUH
