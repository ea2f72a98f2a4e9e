// kforge_reduce_float32_sum.cuh -- float32 sum reduction, tuned by kforge.
//
<date line>
//   kforge export --dtype float32 --op sum --db db -o reduce.cuh
// Do not edit: export again after tuning.
//
// Tuned on fake-gpu (KFORGE_FAKE_GPU) (compute capability 9.0, 132 SMs).  It works, untuned,
// on any NVIDIA GPU of compute capability 7.5 or newer: the launch geometry that depends on
// the device (its multiprocessors, the blocks of a kernel that fit on one) is asked for at run
// time, but the variants were chosen for that GPU.  Needs nothing but the CUDA toolkit: no
// kforge headers, no run-time compilation.  C++17 (nvcc's default).  NVRTC compiles the kernels
// (extern "C" kforge_reduce_float32_sum_k0, ...); the host API is left out there.
//
// API (all static inline, so the header may be included by several .cu files):
//
//   size_t kforge_reduce_float32_sum_workspace(size_t n);
//       workspace bytes for calls with up to n elements (depends on n only)
//   cudaError_t kforge_reduce_float32_sum_workspace_init(void *workspace, size_t workspace_bytes,
//                                 cudaStream_t stream);
//       once per workspace, before its first use: the single-pass variants keep a ticket
//       (and, atomic ones, an accumulator) there, which every call leaves as it found it
//   cudaError_t kforge_reduce_float32_sum(const float *in, size_t n, float *out, void *workspace,
//                  size_t workspace_bytes, cudaStream_t stream);
//       *out = the sum of in[0..n), asynchronously on stream; n == 0 gives the identity;
//       cudaErrorInvalidValue for a null out, a null in or workspace (n > 0) or a
//       workspace too small
//   const char *kforge_reduce_float32_sum_variant(size_t n);
//       the variant used for n, and where it was tuned
//
// Use:
//
//   #include "kforge_reduce_float32_sum.cuh"
//   size_t bytes = kforge_reduce_float32_sum_workspace(n_max);
//   void *ws;
//   cudaMalloc(&ws, bytes);
//   kforge_reduce_float32_sum_workspace_init(ws, bytes, stream);
//   kforge_reduce_float32_sum(d_in, n, d_out, ws, bytes, stream);     // any n <= n_max, any number of times
//
// A workspace serves one stream at a time; use it for nothing else between calls (or
// initialise it again).
//
// Determinism: every variant here gives the same bits run to run.
//
// Dispatch: n goes to the variant tuned for the nearest size (log scale).
//   n            0 .. 65535        k0  sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle
//                                  tuned at n = 2^12: 0.0020126 ms, 8.1 GB/s, deterministic
//   n        65536 .. ...          k0  sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle
//                                  tuned at n = 2^20: 0.0042159 ms, 994.9 GB/s, deterministic
//
// What was measured, per range of n (neighbours served by the same variant share one):
//   every n: measured at 2^12 (tuned), 2^20 (tuned) -> sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle; nearest tuned size, not measured in between (2^12 .. 2^20)
// Where nothing was measured between two tuned sizes more than 2x apart, the nearest
// tuned size's variant is a guess: kforge tune --between 1 measures there.
//
#ifndef KFORGE_REDUCE_FLOAT32_SUM_CUH
#define KFORGE_REDUCE_FLOAT32_SUM_CUH

#if !defined(__CUDACC__)
#error "kforge_reduce_float32_sum.cuh holds CUDA kernels: include it from a .cu file (nvcc) or compile it with NVRTC"
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750
#error "kforge_reduce_float32_sum.cuh needs compute capability 7.5 or newer"
#endif

#define KFORGE_REDUCE_FLOAT32_SUM_KFORGE_VERSION "0.1.0"
#define KFORGE_REDUCE_FLOAT32_SUM_TUNED_DEVICE "fake-gpu (KFORGE_FAKE_GPU)"
#define KFORGE_REDUCE_FLOAT32_SUM_DETERMINISTIC 1 /* every variant gives the same bits run to run */

#if defined(__CUDACC_RTC__)
#define KFORGE_REDUCE_FLOAT32_SUM_LINKAGE extern "C"
#else
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <atomic>
#define KFORGE_REDUCE_FLOAT32_SUM_LINKAGE static
#endif

// Some template paths leave a constant unused (nvcc warning 177).
#pragma nv_diag_suppress 177

// ===========================================================================
// kernel k0: sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle (the grid is chosen at launch)
// ===========================================================================
#define kf_reduce kforge_reduce_float32_sum_k0
#define KF_ENTRY_LINKAGE KFORGE_REDUCE_FLOAT32_SUM_LINKAGE
namespace kforge_reduce_float32_sum_k0_ns {
// kforge 0.1.0 generated reduce kernel
//   kernel               reduce
//   dtype                float32
//   op                   sum
//   acc_dtype            auto
//   algorithm            sequential
//   block_size           256
//   elements_per_thread  4
//   unroll               full
//   vector_width         4
//   passes               last_block
//   layout               block
//   accumulator          register
//   warp_reduce          shuffle
//   load                 plain
//   grid_stride          no (grid auto: one tile per block)
// The block count and n are launch-time arguments: variants whose grids
// differ only in a fixed count share this source and its cubin.

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
#define KF_ALG_ATOMIC_GLOBAL 0
#define KF_ALG_ATOMIC_SHARED 1
#define KF_ALG_INTERLEAVED_DIVERGENT 2
#define KF_ALG_INTERLEAVED_STRIDED 3
#define KF_ALG_SEQUENTIAL 4
#define KF_ALG_SHUFFLE 5
#define KF_ALG_WARP_INTRINSIC 6
#define KF_UNROLL_NONE 0
#define KF_UNROLL_LAST_WARP 1
#define KF_UNROLL_FULL 2
#define KF_PASSES_AUTO 0
#define KF_PASSES_MULTI_KERNEL 1
#define KF_PASSES_ATOMIC 2
#define KF_PASSES_LAST_BLOCK 3
#define KF_LAYOUT_BLOCK 0
#define KF_LAYOUT_GRID 1
#define KF_ACC_REGISTER 0
#define KF_ACC_SHARED 1
#define KF_WARP_SHARED 0
#define KF_WARP_SHUFFLE 1
#define KF_WARP_INTRINSIC 2
#define KF_LOAD_PLAIN 0
#define KF_LOAD_LDG 1
#define KF_LOAD_STREAM 2
#define KF_LOAD_LDG_PREFETCH 3
#define KF_DTYPE 3 /* float32 */
#define KF_OP 0 /* sum */
#define KF_ACC_DTYPE 0 /* auto */
#define KF_ALG 4 /* sequential */
#define KF_BS 256
#define KF_EPT 4
#define KF_UNROLL 2 /* full */
#define KF_VW 4
#define KF_PASSES 3 /* last_block */
#define KF_LAYOUT 0 /* block */
#define KF_ACC 0 /* register */
#define KF_WARP 1 /* shuffle */
#define KF_LOAD 0 /* plain */
#define KF_GRID_STRIDE 0

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
// reduce.cuh -- the reduction kernel.  Three phases:
//   1. load: each thread folds its elements into an accumulator
//      (elements_per_thread vectors of vector_width elements per tile,
//      block or grid layout, grid-stride over tiles when the grid is fixed);
//   2. block: the block's accumulators are reduced to one value by the
//      chosen tree (the seeds' algorithms);
//   3. combine: the block's value is written as a partial (multi_kernel),
//      or combined into the result in the same launch (atomic, last_block).
// Everything the kernel depends on is a compile-time constant (#defines in
// front of common.cuh), except n and the grid.
// ---------------------------------------------------------------------------

// KF_ALG_*, KF_UNROLL_*, KF_PASSES_*, KF_LAYOUT_*, KF_ACC_*, KF_WARP_* and
// KF_LOAD_* come from the generator (the parameter table in
// src/families/reduce/reduce.c).  KF_UNROLL_NONE: tree loops bounded by
// blockDim.x at run time, as in the seeds.

#define KF_TREE (KF_ALG == KF_ALG_INTERLEAVED_DIVERGENT || KF_ALG == KF_ALG_INTERLEAVED_STRIDED || KF_ALG == KF_ALG_SEQUENTIAL)
#define KF_WARPS (KF_BS / 32)

// ---------------------------------------------------------------------------
// Warp-level pieces.

#if KF_INT32_LIKE && (KF_ALG == KF_ALG_WARP_INTRINSIC || KF_WARP == KF_WARP_INTRINSIC)
// (only when used: __reduce_*_sync needs sm_80, the rest runs on older GPUs)
__device__ __forceinline__ T kf_warp_intrinsic(T v)
{
    // __reduce_*_sync exist for 32-bit integers only (space.c enforces it).
#if KF_OP == KF_OP_SUM
    return __reduce_add_sync(KF_FULL_MASK, v);
#elif KF_OP == KF_OP_MIN
    return __reduce_min_sync(KF_FULL_MASK, v);
#elif KF_OP == KF_OP_MAX
    return __reduce_max_sync(KF_FULL_MASK, v);
#elif KF_OP == KF_OP_AND
    return (T)__reduce_and_sync(KF_FULL_MASK, (kf_u32)v);
#elif KF_OP == KF_OP_OR
    return (T)__reduce_or_sync(KF_FULL_MASK, (kf_u32)v);
#else
    return (T)__reduce_xor_sync(KF_FULL_MASK, (kf_u32)v);
#endif
}
#endif

// Reduces the values in lanes 0..W-1 (W a power of two, the other lanes
// holding the identity) with __shfl_down_sync in log2(W) steps; lane 0 holds
// the result.  unroll none keeps the loop a loop, as written in the seeds
// before their "#pragma unroll".
template <int W> __device__ __forceinline__ T kf_warp_shuffle_first(T v)
{
    if constexpr (KF_UNROLL == KF_UNROLL_NONE) {
#pragma unroll 1
        for (int offset = W / 2; offset > 0; offset /= 2)
            v = kf_op(v, __shfl_down_sync(KF_FULL_MASK, v, offset));
    } else {
#pragma unroll
        for (int offset = W / 2; offset > 0; offset /= 2)
            v = kf_op(v, __shfl_down_sync(KF_FULL_MASK, v, offset));
    }
    return v;
}

// Reduces v over the whole warp; lane 0 holds the result.
__device__ __forceinline__ T kf_warp_shuffle(T v) { return kf_warp_shuffle_first<32>(v); }

// The last warp of the sequential tree: sdata[0..63] (or [0..31] for a
// 32-thread block) to one value, in thread 0.
//
// The seeds do this with a volatile pointer and no barrier, relying on the
// warp running in lock step.  Since Volta, threads of a warp are scheduled
// independently, and that code races: a thread can overwrite sdata[tid]
// before its neighbour has read it.  The correct equivalent, generated here,
// reads into a register, then __syncwarp(), then writes, then __syncwarp()
// (NVIDIA, "Using CUDA Warp-Level Primitives", 2018).  warp_reduce shuffle
// and intrinsic replace the shared-memory steps by register exchanges.
__device__ __forceinline__ T kf_last_warp(T *sdata, unsigned tid)
{
    T v = sdata[tid];
    if constexpr (KF_WARP == KF_WARP_SHARED) { // shared
        if constexpr (KF_BS >= 64) { v = kf_op(v, sdata[tid + 32]); __syncwarp(); sdata[tid] = v; __syncwarp(); }
        v = kf_op(v, sdata[tid + 16]); __syncwarp(); sdata[tid] = v; __syncwarp();
        v = kf_op(v, sdata[tid + 8]);  __syncwarp(); sdata[tid] = v; __syncwarp();
        v = kf_op(v, sdata[tid + 4]);  __syncwarp(); sdata[tid] = v; __syncwarp();
        v = kf_op(v, sdata[tid + 2]);  __syncwarp(); sdata[tid] = v; __syncwarp();
        v = kf_op(v, sdata[tid + 1]);
        return v;
    } else {
        if constexpr (KF_BS >= 64) v = kf_op(v, sdata[tid + 32]);
#if KF_WARP == KF_WARP_INTRINSIC
        return kf_warp_intrinsic(v);
#else
        return kf_warp_shuffle(v);
#endif
    }
}

// ---------------------------------------------------------------------------
// Block-level reduction.  Every thread passes its accumulator (for the
// shared accumulator, the value is already in sdata[tid]); the block's
// result is valid in thread 0.

__device__ __forceinline__ T kf_block_reduce(T acc, T *sdata, unsigned tid)
{
    if constexpr (KF_ALG == KF_ALG_ATOMIC_SHARED) {
        __shared__ T slot;
        if (tid == 0) slot = kf_identity();
        __syncthreads();
        kf_atomic(&slot, acc);
        __syncthreads();
        return slot;
    } else if constexpr (KF_ALG == KF_ALG_INTERLEAVED_DIVERGENT) {
        // reduce0: interleaved addressing with divergent branching.
        if constexpr (KF_ACC == KF_ACC_REGISTER) sdata[tid] = acc;
        __syncthreads();
        if constexpr (KF_UNROLL == KF_UNROLL_FULL) {
#pragma unroll
            for (unsigned s = 1; s < KF_BS; s *= 2) {
                if (tid % (2 * s) == 0) sdata[tid] = kf_op(sdata[tid], sdata[tid + s]);
                __syncthreads();
            }
        } else {
            for (unsigned s = 1; s < blockDim.x; s *= 2) {
                if (tid % (2 * s) == 0) sdata[tid] = kf_op(sdata[tid], sdata[tid + s]);
                __syncthreads();
            }
        }
        return sdata[0];
    } else if constexpr (KF_ALG == KF_ALG_INTERLEAVED_STRIDED) {
        // reduce1: interleaved addressing, strided index, no divergence
        // (but shared-memory bank conflicts).
        if constexpr (KF_ACC == KF_ACC_REGISTER) sdata[tid] = acc;
        __syncthreads();
        if constexpr (KF_UNROLL == KF_UNROLL_FULL) {
#pragma unroll
            for (unsigned s = 1; s < KF_BS; s *= 2) {
                unsigned index = 2 * s * tid;
                if (index < KF_BS) sdata[index] = kf_op(sdata[index], sdata[index + s]);
                __syncthreads();
            }
        } else {
            for (unsigned s = 1; s < blockDim.x; s *= 2) {
                unsigned index = 2 * s * tid;
                if (index < blockDim.x) sdata[index] = kf_op(sdata[index], sdata[index + s]);
                __syncthreads();
            }
        }
        return sdata[0];
    } else if constexpr (KF_ALG == KF_ALG_SEQUENTIAL) {
        // reduce2..6: sequential addressing.
        if constexpr (KF_ACC == KF_ACC_REGISTER) sdata[tid] = acc;
        __syncthreads();
        if constexpr (KF_UNROLL == KF_UNROLL_NONE) {
            for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
                if (tid < s) sdata[tid] = kf_op(sdata[tid], sdata[tid + s]);
                __syncthreads();
            }
            return sdata[0];
        } else if constexpr (KF_UNROLL == KF_UNROLL_LAST_WARP) {
            // reduce4: loop down to 64 elements, then the last warp.
            for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
                if (tid < s) sdata[tid] = kf_op(sdata[tid], sdata[tid + s]);
                __syncthreads();
            }
            T r = acc;
            if (tid < 32) r = kf_last_warp(sdata, tid);
            return r;
        } else {
            // reduce5/6: completely unrolled for the compile-time block size.
            if constexpr (KF_BS >= 1024) { if (tid < 512) sdata[tid] = kf_op(sdata[tid], sdata[tid + 512]); __syncthreads(); }
            if constexpr (KF_BS >= 512) { if (tid < 256) sdata[tid] = kf_op(sdata[tid], sdata[tid + 256]); __syncthreads(); }
            if constexpr (KF_BS >= 256) { if (tid < 128) sdata[tid] = kf_op(sdata[tid], sdata[tid + 128]); __syncthreads(); }
            if constexpr (KF_BS >= 128) { if (tid < 64) sdata[tid] = kf_op(sdata[tid], sdata[tid + 64]); __syncthreads(); }
            T r = acc;
            if (tid < 32) r = kf_last_warp(sdata, tid);
            return r;
        }
    } else {
        // shuffle (seed 002's reduce7) and warp_intrinsic: reduce each warp
        // in registers, one shared slot per warp, then the first warp
        // reduces the slots.
        const unsigned lane = tid % 32, warp = tid / 32;
#if KF_ALG == KF_ALG_WARP_INTRINSIC
#define KF_WARP_FOLD kf_warp_intrinsic
#else
#define KF_WARP_FOLD kf_warp_shuffle
#endif
        T v = KF_WARP_FOLD(acc);
        if constexpr (KF_WARPS == 1) {
            return v;
        } else {
            if (lane == 0) sdata[warp] = v;
            __syncthreads();
            if (warp == 0) {
                v = lane < KF_WARPS ? sdata[lane] : kf_identity();
#if KF_ALG == KF_ALG_WARP_INTRINSIC
                v = KF_WARP_FOLD(v);
#else
                // KF_WARPS values, in lanes 0..KF_WARPS-1: log2(KF_WARPS)
                // steps (the 32-lane steps before them only added the
                // identity, which cost a 4-warp block 3 of its 10 steps)
                v = kf_warp_shuffle_first<KF_WARPS>(v);
#endif
            }
            return v;
        }
    }
}

// ---------------------------------------------------------------------------
// Phase 1, load: the thread folds its elements of in[0..n) into acc.  X is
// the input's element E, or T for the partials a multi_kernel pass after
// the first reads (the same code: they differ when a 2-byte float input is
// widened to its accumulator).

template <typename X>
__device__ __forceinline__ void kf_load_phase(const X *in, kf_u64 n, T &acc, unsigned tid)
{
    typedef kf_vec_of<X> V;
    // The vector body starts at the first element aligned to the vector
    // width (16 bytes at most); the few elements before it (prefix) and
    // after it (tail) are loaded one by one by the first threads of the grid.
    constexpr kf_u64 align = sizeof(V) < 16 ? sizeof(V) : 16;
    kf_u64 prefix = 0;
    if constexpr (KF_VW > 1) {
        const kf_u64 mis = ((kf_u64)in % align) / sizeof(X);
        prefix = mis ? (align / sizeof(X) - mis) : 0;
        if (prefix > n) prefix = n;
    }
    const V *inv = (const V *)(in + prefix);
    const kf_u64 nv = (n - prefix) / KF_VW;

    if constexpr (KF_VW > 1) {
        const kf_u64 tail = n - prefix - nv * KF_VW;
        const kf_u64 g = (kf_u64)blockIdx.x * KF_BS + tid;
        if (g < prefix) acc = kf_op(acc, kf_load_one(in + g));
        else if (g - prefix < tail) acc = kf_op(acc, kf_load_one(in + prefix + nv * KF_VW + (g - prefix)));
    }

    if constexpr (KF_LAYOUT == KF_LAYOUT_BLOCK) {
        // block layout: a tile is KF_EPT * KF_BS consecutive vectors; thread
        // tid takes vectors tid, tid + KF_BS, ... of it (Harris: i, i + blockDim).
        constexpr kf_u64 tile = (kf_u64)KF_BS * KF_EPT;
#if !KF_GRID_STRIDE && KF_EPT == 1 && KF_VW == 1 && KF_ACC == KF_ACC_REGISTER
        // grid auto, one element per thread (Harris' reduce0..2): the seeds'
        // one-line load, plus the bound check that lets n be anything.  The
        // early kernels are instruction-bound, so every instruction counts.
        const kf_u64 i = (kf_u64)blockIdx.x * KF_BS + tid;
        if (i < n) acc = kf_load_one(in + i);
#elif !KF_GRID_STRIDE
        // grid auto: ceil(nv / tile) blocks, one tile each.  No loop: the
        // load phase stays short, which matters for the instruction-bound
        // early kernels.
        const kf_u64 base = (kf_u64)blockIdx.x * tile;
        const V *p = inv + base + tid;
        if (base + tile <= nv) {
            V x[KF_EPT];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) x[k] = kf_load_vec(p + k * KF_BS);
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) acc = kf_op(acc, kf_fold_vec(x[k]));
        } else {
#pragma unroll
            for (int k = 0; k < KF_EPT; k++)
                if (base + k * KF_BS + tid < nv) acc = kf_op(acc, kf_fold_vec(kf_load_vec(p + k * KF_BS)));
        }
#else
        const kf_u64 stride = (kf_u64)gridDim.x * tile;
        kf_u64 base = (kf_u64)blockIdx.x * tile;
        for (; base + tile <= nv; base += stride) {
            V x[KF_EPT];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) x[k] = kf_load_vec(inv + base + k * KF_BS + tid);
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) acc = kf_op(acc, kf_fold_vec(x[k]));
        }
        if (base < nv) {
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) {
                const kf_u64 i = base + k * KF_BS + tid;
                if (i < nv) acc = kf_op(acc, kf_fold_vec(kf_load_vec(inv + i)));
            }
        }
#endif
    } else {
        // grid layout: thread g takes vectors g, g + T, g + 2T, ... where T is
        // the number of threads in the grid (seed 001's "chunks").
        const kf_u64 threads = (kf_u64)gridDim.x * KF_BS;
        const kf_u64 round = threads * KF_EPT;
        kf_u64 base = (kf_u64)blockIdx.x * KF_BS + tid;
        for (; base + (KF_EPT - 1) * threads < nv; base += round) {
            V x[KF_EPT];
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) x[k] = kf_load_vec(inv + base + k * threads);
#pragma unroll
            for (int k = 0; k < KF_EPT; k++) acc = kf_op(acc, kf_fold_vec(x[k]));
        }
#pragma unroll
        for (int k = 0; k < KF_EPT - 1; k++) {
            const kf_u64 i = base + k * threads;
            if (i < nv) acc = kf_op(acc, kf_fold_vec(kf_load_vec(inv + i)));
        }
    }
}

// ---------------------------------------------------------------------------
// The kernel.
//
//   in, n      the input (any alignment; a 2-byte float input is E, else T).
//              No __restrict__: with it the
//              compiler turns plain loads into read-only (ld.global.nc)
//              loads, and load "plain" would no longer be the seeds' load.
//   out        multi_kernel: one partial per block (the result when the grid
//              is one block); atomic and last_block: the result
//   scratch    atomic: one element holding the identity between launches;
//              last_block: one partial per block
//   ticket     atomic and last_block: a counter that is 0 between launches
//
//   partials   (E other than T only) 0: in is the input; 1: in holds the
//              T partials of an earlier multi_kernel pass
//
// atomic and last_block leave scratch and ticket as they found them, so
// consecutive launches need no host-side reset.

// Test hook (KFORGE_PLANT=double_block): block kf_plant_twice of the first
// pass (the one that reads the input) counts its value twice.
#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_COVERAGE
#define KF_HOOK_TWICE(val) (((kf_u64)in == kf_plant_in && blockIdx.x == kf_plant_twice) ? kf_op((val), (val)) : (val))
#else
#define KF_HOOK_TWICE(val) (val)
#endif

#if KF_TREE
#define KF_SMEM_ELEMS KF_BS
#elif KF_ALG == KF_ALG_SHUFFLE || KF_ALG == KF_ALG_WARP_INTRINSIC
#define KF_SMEM_ELEMS 32
#else
#define KF_SMEM_ELEMS 1
#endif

KF_ENTRY_LINKAGE __global__ void __launch_bounds__(KF_BS)
#ifdef KF_IN_T
kf_reduce(const E *in, kf_u64 n, T *out, T *scratch, unsigned *ticket, int partials)
#else
kf_reduce(const T *in, kf_u64 n, T *out, T *scratch, unsigned *ticket)
#endif
{
    __shared__ T sdata[KF_SMEM_ELEMS];
    const unsigned tid = threadIdx.x;
#if defined(KF_PLANT) && KF_PLANT == KF_PLANT_FAULT
    // Test hook (KFORGE_PLANT, tests only): an illegal address.
    if (blockIdx.x == 0 && tid == 0) *(volatile int *)(kf_u64)16 = 1;
#elif defined(KF_PLANT) && KF_PLANT == KF_PLANT_HANG
    // Test hook (KFORGE_PLANT, tests only): a kernel that never finishes.
    // (__nanosleep is a side effect: the compiler may not drop the loop, as
    // C++ forward progress lets it drop an empty infinite one.)
    for (;;) __nanosleep(1000);
#endif

    // --- 1. load ----------------------------------------------------------
    T reg = kf_identity();
    T &acc = KF_ACC ? sdata[tid % KF_SMEM_ELEMS] : reg;
    if constexpr (KF_ACC) acc = kf_identity();

#ifdef KF_IN_T
    if (partials) kf_load_phase((const T *)(const void *)in, n, acc, tid);
    else kf_load_phase(in, n, acc, tid);
#else
    kf_load_phase(in, n, acc, tid);
#endif

    // --- 2. block ---------------------------------------------------------
    if constexpr (KF_ALG == KF_ALG_ATOMIC_GLOBAL) {
        // Every thread combines straight into the result slot.
        kf_atomic(scratch, KF_HOOK_TWICE(acc));
        __threadfence();
    }
    T r;
    if constexpr (KF_ALG != KF_ALG_ATOMIC_GLOBAL) r = kf_block_reduce(acc, sdata, tid);

    // --- 3. combine -------------------------------------------------------
    if constexpr (KF_PASSES == KF_PASSES_MULTI_KERNEL) {
        // (a pass of one block is the last: it writes the result)
        if (tid == 0) {
            if (gridDim.x == 1) kf_put(out, 0, KF_HOOK_TWICE(r));
            else out[blockIdx.x] = KF_HOOK_TWICE(r);
        }
    } else if constexpr (KF_PASSES == KF_PASSES_ATOMIC) {
        // Combine into scratch[0]; the last block to finish moves the value
        // to out and leaves the identity (and ticket 0) for the next launch.
        if constexpr (KF_ALG != KF_ALG_ATOMIC_GLOBAL) {
            // A single block (small n) has nothing to combine with.
            if (gridDim.x == 1) {
                if (tid == 0) kf_put(out, 0, KF_HOOK_TWICE(r));
                return;
            }
        }
        __shared__ bool last;
        if constexpr (KF_ALG == KF_ALG_ATOMIC_GLOBAL) __syncthreads();
        if (tid == 0) {
            if constexpr (KF_ALG != KF_ALG_ATOMIC_GLOBAL) kf_atomic(scratch, KF_HOOK_TWICE(r));
            last = kf_ticket(ticket) == gridDim.x - 1;
        }
        __syncthreads();
        if (last && tid == 0) {
            kf_put(out, 0, kf_atomic_take(scratch));
            *ticket = 0;
        }
    } else {
        // last_block: partials to scratch; the ticket (release) publishes
        // them, and the last block (acquire) folds them in a fixed order
        // (deterministic).  A single block writes its value directly.
        if (gridDim.x == 1) {
            if (tid == 0) kf_put(out, 0, KF_HOOK_TWICE(r));
            return;
        }
        __shared__ bool last;
        if (tid == 0) {
            scratch[blockIdx.x] = KF_HOOK_TWICE(r);
            last = kf_ticket(ticket) == gridDim.x - 1;
        }
        __syncthreads();
        if (last) {
            T a = kf_identity();
            for (unsigned i = tid; i < gridDim.x; i += KF_BS)
                a = kf_op(a, ((volatile T *)scratch)[i]);
            if constexpr (KF_ACC) {
                __syncthreads();
                sdata[tid % KF_SMEM_ELEMS] = a;
            }
            a = kf_block_reduce(a, sdata, tid);
            if (tid == 0) {
                kf_put(out, 0, a);
                *ticket = 0;
            }
        }
    }
}

} // namespace kforge_reduce_float32_sum_k0_ns
#undef kf_reduce
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
#undef KF_ALG_ATOMIC_GLOBAL
#undef KF_ALG_ATOMIC_SHARED
#undef KF_ALG_INTERLEAVED_DIVERGENT
#undef KF_ALG_INTERLEAVED_STRIDED
#undef KF_ALG_SEQUENTIAL
#undef KF_ALG_SHUFFLE
#undef KF_ALG_WARP_INTRINSIC
#undef KF_UNROLL_NONE
#undef KF_UNROLL_LAST_WARP
#undef KF_UNROLL_FULL
#undef KF_PASSES_AUTO
#undef KF_PASSES_MULTI_KERNEL
#undef KF_PASSES_ATOMIC
#undef KF_PASSES_LAST_BLOCK
#undef KF_LAYOUT_BLOCK
#undef KF_LAYOUT_GRID
#undef KF_ACC_REGISTER
#undef KF_ACC_SHARED
#undef KF_WARP_SHARED
#undef KF_WARP_SHUFFLE
#undef KF_WARP_INTRINSIC
#undef KF_LOAD_PLAIN
#undef KF_LOAD_LDG
#undef KF_LOAD_STREAM
#undef KF_LOAD_LDG_PREFETCH
#undef KF_DTYPE
#undef KF_OP
#undef KF_ACC_DTYPE
#undef KF_ALG
#undef KF_BS
#undef KF_EPT
#undef KF_UNROLL
#undef KF_VW
#undef KF_PASSES
#undef KF_LAYOUT
#undef KF_ACC
#undef KF_WARP
#undef KF_LOAD
#undef KF_GRID_STRIDE
#undef KF_FULL_MASK
#undef KF_ENTRY_LINKAGE
#undef KF_HOOK_LOADS
#undef KF_TREE
#undef KF_WARPS
#undef KF_WARP_FOLD
#undef KF_HOOK_TWICE
#undef KF_SMEM_ELEMS

// The identity of sum into each non-null pointer; the ticket 0.
KFORGE_REDUCE_FLOAT32_SUM_LINKAGE __global__ void kforge_reduce_float32_sum_init(unsigned *ticket, float *slot, float *out)
{
    union { unsigned int u; float t; } id;
    id.u = 0x00000000u;
    if (ticket) *ticket = 0;
    if (slot) *slot = id.t;
    if (out) *out = id.t;
}
#pragma nv_diag_default 177

// ---------------------------------------------------------------------------
// Host API of an exported reduction (kforge export: this part comes from
// kernel_src/reduce/reduce_export.cuh, with the names, the element type and
// the tables filled in by src/families/reduce/export.c).  It reproduces
// kforge's launch
// plan (src/families/reduce/plan.c): the grid of each pass from the
// variant's grid kind, with the device's multiprocessors and the occupancy
// calculator's blocks per multiprocessor asked for at run time; multi_kernel
// passes relaunch the kernel on the partials, ping-ponging between two
// buffers of the workspace; atomic and last_block variants are one launch
// with the ticket (and the atomic accumulator) in the workspace.
// NVRTC compiles the kernels above and skips this part.
// ---------------------------------------------------------------------------
#if !defined(__CUDACC_RTC__)

namespace kforge_reduce_float32_sum_detail {

typedef float T; // the accumulator's type: the partials'
typedef float O; // the output's (T, or for acc_dtype input the input's)

enum grid_kind { grid_auto, grid_blocks, grid_per_sm, grid_waves };
enum passes_kind { passes_multi_kernel, passes_atomic, passes_last_block };

// The workspace, from its first 256-byte aligned address: the ticket of the
// single-pass variants at 0, the atomic variants' accumulator at 256 (both
// set by workspace_init and left so by every call), and from 512 the
// last_block variants' partials or the multi_kernel variants' two partials
// buffers (written before they are read).
static const size_t ws_align = 256, ws_ticket = 0, ws_slot = 256, ws_parts = 512;

struct kernel_info {
    const void *fn;
    int block;               // threads per block (compiled in)
};
struct variant_info {
    int kernel;              // index into kernels[]
    unsigned long long tile; // elements one block covers per round
    int grid;                // grid_kind
    unsigned long long grid_value;
    int passes;              // passes_kind
    const char *label;
};
struct size_info {
    unsigned long long from; // serves n >= from (up to the next entry's from)
    int variant;             // index into variants[]
};

static const int nkernels = 1;
static const kernel_info kernels[nkernels] = {
    {(const void *)kforge_reduce_float32_sum_k0_ns::kforge_reduce_float32_sum_k0, 256},
};
static const int nsizes = 2;
static const variant_info variants[nsizes] = {
    {0, 4096ull, grid_auto, 0ull, passes_last_block, "k0 sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle, tuned at n = 2^12 on fake-gpu (KFORGE_FAKE_GPU): 0.0020126 ms, deterministic"},
    {0, 4096ull, grid_auto, 0ull, passes_last_block, "k0 sequential/bs256/ept4/full/v4/auto/last_block/warp=shuffle, tuned at n = 2^20 on fake-gpu (KFORGE_FAKE_GPU): 0.0042159 ms, deterministic"},
};
static const size_info sizes[nsizes] = {
    {0ull, 0},
    {65536ull, 1},
};

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


// The entry of sizes[] that serves n: the one tuned for the nearest size on
// a log scale (a tie goes to the larger).
static inline int pick(unsigned long long n)
{
    int i = 0;
    while (i + 1 < nsizes && n >= sizes[i + 1].from)
        i++;
    return i;
}

// Workspace bytes, from the aligned base, that variant v needs when its
// first pass has b0 blocks.
static inline size_t need_bytes(const variant_info &v, unsigned long long b0)
{
    if (v.passes == passes_last_block && b0 > 1)
        return ws_parts + b0 * sizeof(T) + 64;
    if (v.passes == passes_multi_kernel && b0 > 1)
        return ws_parts + 2 * align_up(b0 * sizeof(T) + 64, ws_align);
    return ws_parts;
}

// Blocks of one pass over n elements: grid auto, one tile per block; a
// count, blocks_per_sm x SMs, or waves x occupancy x SMs, at most one
// block per tile.
static inline cudaError_t blocks_for(const variant_info &v, unsigned long long n, int dev,
                                     unsigned long long *blocks)
{
    unsigned long long need = ceil_div(n < 1 ? 1 : n, v.tile), want = need;
    if (v.grid == grid_blocks) {
        want = v.grid_value;
    } else if (v.grid == grid_per_sm || v.grid == grid_waves) {
        int sms = 0, occ = 1;
        cudaError_t e = sms_of(dev, &sms);
        if (e == cudaSuccess && v.grid == grid_waves)
            e = occupancy_of(dev, v.kernel, &occ);
        if (e != cudaSuccess)
            return e;
        want = v.grid_value * (unsigned long long)(sms > 0 ? sms : 1) * (unsigned long long)(occ > 0 ? occ : 1);
    }
    if (want > need)
        want = need;
    if (want < 1)
        want = 1;
    if (want > 2147483647ull) {
        if (v.grid == grid_auto)
            return cudaErrorInvalidValue; // one block per tile: more than a grid holds
        want = 2147483647ull;             // the grid-stride loop covers the rest
    }
    *blocks = want;
    return cudaSuccess;
}

// in: the input (float), or (partials 1) the T partials of an earlier pass.
// The sixth argument is read only by kernels whose input is not T.
static inline cudaError_t launch(int k, unsigned long long blocks, const void *in, unsigned long long n, T *out,
                                 T *scratch, unsigned *ticket, cudaStream_t stream, int partials = 0)
{
    void *args[] = {(void *)&in, (void *)&n, (void *)&out, (void *)&scratch, (void *)&ticket, (void *)&partials};
    return cudaLaunchKernel(kernels[k].fn, dim3((unsigned)blocks), dim3((unsigned)kernels[k].block), args, 0,
                            stream);
}

} // namespace kforge_reduce_float32_sum_detail

// Bytes of workspace that serve every call with up to n elements (at least
// the 768 that kforge_reduce_float32_sum_workspace_init needs).  Depends on n only, not on the
// device.
static inline size_t kforge_reduce_float32_sum_workspace(size_t n)
{
    using namespace kforge_reduce_float32_sum_detail;
    size_t most = ws_parts;
    for (int i = 0; i < nsizes && sizes[i].from <= n; i++) {
        unsigned long long hi = n;
        if (i + 1 < nsizes && sizes[i + 1].from - 1 < hi)
            hi = sizes[i + 1].from - 1;
        const variant_info &v = variants[sizes[i].variant];
        size_t b = need_bytes(v, ceil_div(hi < 1 ? 1 : hi, v.tile));
        if (b > most)
            most = b;
    }
    return ws_align + most;
}

// Prepares a workspace: the ticket 0, the atomic accumulator the identity.
// Once per workspace, before its first use; every call leaves it so.  Do it
// again if the memory was used for anything else in between.
static inline cudaError_t
kforge_reduce_float32_sum_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace kforge_reduce_float32_sum_detail;
    size_t base = align_up((size_t)(uintptr_t)workspace, ws_align);
    if (!workspace || base + ws_parts > (size_t)(uintptr_t)workspace + workspace_bytes)
        return cudaErrorInvalidValue;
    unsigned *ticket = (unsigned *)(base + ws_ticket);
    T *slot = (T *)(base + ws_slot), *none = 0;
    void *args[] = {(void *)&ticket, (void *)&slot, (void *)&none};
    return cudaLaunchKernel((const void *)kforge_reduce_float32_sum_init, dim3(1), dim3(1), args, 0, stream);
}

// out[0] = the sum of in[0..n), on stream, with the variant tuned for the
// nearest n.  n == 0 gives the identity (in may then be null).  Errors:
// cudaErrorInvalidValue for a null out, a null in or workspace with n > 0,
// or a workspace smaller than kforge_reduce_float32_sum_workspace(n); else what the launch
// returns.  Asynchronous, like a kernel launch.
static inline cudaError_t
kforge_reduce_float32_sum(const float *in, size_t n, float *out, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace kforge_reduce_float32_sum_detail;
    if (!out)
        return cudaErrorInvalidValue;
    if (n == 0) {
        unsigned *no_ticket = 0;
        T *no_slot = 0;
        void *args[] = {(void *)&no_ticket, (void *)&no_slot, (void *)&out};
        return cudaLaunchKernel((const void *)kforge_reduce_float32_sum_init, dim3(1), dim3(1), args, 0, stream);
    }
    if (!in || !workspace)
        return cudaErrorInvalidValue;
    const variant_info &v = variants[sizes[pick(n)].variant];
    int dev = 0;
    unsigned long long b = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = blocks_for(v, n, dev, &b);
    if (e != cudaSuccess)
        return e;
    size_t base = align_up((size_t)(uintptr_t)workspace, ws_align);
    if (base + need_bytes(v, b) > (size_t)(uintptr_t)workspace + workspace_bytes)
        return cudaErrorInvalidValue;
    unsigned *ticket = (unsigned *)(base + ws_ticket);
    T *slot = (T *)(base + ws_slot), *parts = (T *)(base + ws_parts);
    T *res = (T *)(void *)out; // the kernels store the result as an O
    if (v.passes == passes_atomic)
        return launch(v.kernel, b, in, n, res, slot, ticket, stream);
    if (v.passes == passes_last_block)
        return launch(v.kernel, b, in, n, res, parts, ticket, stream);
    // multi_kernel: each pass reduces its input to one partial per block,
    // until a pass of one block writes out.
    T *part[2] = {parts, (T *)(base + ws_parts + align_up(b * sizeof(T) + 64, ws_align))};
    const void *src = in;
    for (int k = 0;; k++) {
        if (k > 0 && (e = blocks_for(v, n, dev, &b)) != cudaSuccess)
            return e;
        T *dst = b == 1 ? res : part[k % 2];
        if ((e = launch(v.kernel, b, src, n, dst, slot, ticket, stream, k > 0)) != cudaSuccess)
            return e;
        if (b == 1)
            return cudaSuccess;
        src = dst;
        n = b;
    }
}

// The variant kforge_reduce_float32_sum uses for n elements, and what it was tuned at.
static inline const char *kforge_reduce_float32_sum_variant(size_t n)
{
    using namespace kforge_reduce_float32_sum_detail;
    return variants[sizes[pick(n)].variant].label;
}

#endif // !__CUDACC_RTC__

#undef KFORGE_REDUCE_FLOAT32_SUM_LINKAGE
#endif // KFORGE_REDUCE_FLOAT32_SUM_CUH
