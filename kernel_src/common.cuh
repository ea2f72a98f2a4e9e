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
