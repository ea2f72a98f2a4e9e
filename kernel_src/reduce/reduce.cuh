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
