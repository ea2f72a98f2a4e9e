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
