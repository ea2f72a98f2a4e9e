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

namespace @P@_detail {

typedef @T@ T; // the accumulator's type: the partials'
typedef @O@ O; // the outputs' (T, or for acc_dtype input the input's)
typedef @IN@ E_in; // the input's

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

@TABLES@
@HOST_HELPERS@

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
    return cudaLaunchKernel((const void *)@P@_fill, dim3((unsigned)blocks), dim3(256), args, 0, stream);
}

// The identity of the op into out[0..n) (rows of no columns).
static inline cudaError_t fill_out(O *out, unsigned long long n, cudaStream_t stream)
{
#if @P@_FILL_OUT
    unsigned long long blocks = ceil_div(n, 256);
    if (blocks > 4096)
        blocks = 4096;
    void *args[] = {(void *)&out, (void *)&n};
    return cudaLaunchKernel((const void *)@P@_fill_out, dim3((unsigned)blocks), dim3(256), args, 0, stream);
#else
    return fill(out, n, 0, 0, stream);
#endif
}

} // namespace @P@_detail

// Bytes of workspace that serve every call with up to rows rows (any cols,
// any row_stride) on the current device; 0 if no variant here needs one.
// Depends on the device only through capped grids of split variants (the
// blocks of a kernel that fit on it).  It is the most any split variant here
// needs at that many rows: rows x (splits + 1) elements for one that splits
// rows over a block per part (grid auto) and combines in the last block.
// @P@_workspace_for gives what the calls of given shapes need.
static inline size_t @P@_workspace(size_t rows)
{
    using namespace @P@_detail;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess)
        dev = -1;
    return layout_bytes(rows < max_elems ? rows : max_elems, dev);
}

// Bytes of workspace that serve a call of rows x cols with row_stride (0:
// cols) on the current device: 0 if the variant it goes to needs none, else
// @P@_workspace(rows).  The largest of these over several shapes serves
// every one of them: calls that go to variants without a workspace (many
// short rows, as a rule) ask for nothing.
static inline size_t @P@_workspace_for(size_t rows, size_t cols, size_t row_stride)
{
    using namespace @P@_detail;
    if (rows == 0 || cols == 0)
        return 0;
    if (!uses_workspace(variants[pick(rows, cols, row_stride ? row_stride : cols)]))
        return 0;
    return @P@_workspace(rows);
}

// Prepares a workspace: the tickets 0, the atomic partials the identity.
// Once per workspace, before its first use; every call leaves it so.  Do it
// again if the memory was used for anything else in between.  A null
// workspace of 0 bytes is fine when @P@_workspace gives 0.
static inline cudaError_t
@P@_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace @P@_detail;
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

// out[r] = the @OPNAME@ of in[r * row_stride + c], c = 0 .. cols-1, for every
// row r < rows, on stream, with the variant tuned for the nearest shape
// (pick).
// row_stride 0 means cols (rows may overlap: the input is only read).  Any
// alignment of in and of row_stride (elements, not bytes).  cols == 0 gives
// the identity in every row; rows == 0 does nothing (in and out may then be
// null).  workspace: @P@_workspace(rows) bytes or more, prepared by
// @P@_workspace_init, always with the same workspace_bytes (null if
// @P@_workspace gives 0).  Errors: cudaErrorInvalidValue for a null out, a
// null in with cols > 0, pointers not aligned to the element, more than
// 2^47 elements, or a workspace (null or) smaller than the variant chosen
// needs; else what the launch returns.  Asynchronous, like a kernel launch.
static inline cudaError_t
@P@(const @IN@ *in, size_t rows, size_t cols, size_t row_stride, @O@ *out, void *workspace, size_t workspace_bytes,
    cudaStream_t stream)
{
    using namespace @P@_detail;
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

// The variant @P@ uses for rows x cols with row_stride (0: cols), and where
// it was tuned.
static inline const char *@P@_variant(size_t rows, size_t cols, size_t row_stride)
{
    using namespace @P@_detail;
    rows = rows ? rows : 1;
    cols = cols ? cols : 1;
    return variants[pick(rows, cols, row_stride ? row_stride : cols)].label;
}

#endif // !__CUDACC_RTC__
