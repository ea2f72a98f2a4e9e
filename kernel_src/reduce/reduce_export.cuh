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

namespace @P@_detail {

typedef @T@ T; // the accumulator's type: the partials'
typedef @O@ O; // the output's (T, or for acc_dtype input the input's)

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

@TABLES@
@HOST_HELPERS@

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

// in: the input (@IN@), or (partials 1) the T partials of an earlier pass.
// The sixth argument is read only by kernels whose input is not T.
static inline cudaError_t launch(int k, unsigned long long blocks, const void *in, unsigned long long n, T *out,
                                 T *scratch, unsigned *ticket, cudaStream_t stream, int partials = 0)
{
    void *args[] = {(void *)&in, (void *)&n, (void *)&out, (void *)&scratch, (void *)&ticket, (void *)&partials};
    return cudaLaunchKernel(kernels[k].fn, dim3((unsigned)blocks), dim3((unsigned)kernels[k].block), args, 0,
                            stream);
}

} // namespace @P@_detail

// Bytes of workspace that serve every call with up to n elements (at least
// the 768 that @P@_workspace_init needs).  Depends on n only, not on the
// device.
static inline size_t @P@_workspace(size_t n)
{
    using namespace @P@_detail;
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
@P@_workspace_init(void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace @P@_detail;
    size_t base = align_up((size_t)(uintptr_t)workspace, ws_align);
    if (!workspace || base + ws_parts > (size_t)(uintptr_t)workspace + workspace_bytes)
        return cudaErrorInvalidValue;
    unsigned *ticket = (unsigned *)(base + ws_ticket);
    T *slot = (T *)(base + ws_slot), *none = 0;
    void *args[] = {(void *)&ticket, (void *)&slot, (void *)&none};
    return cudaLaunchKernel((const void *)@P@_init, dim3(1), dim3(1), args, 0, stream);
}

// out[0] = the @OPNAME@ of in[0..n), on stream, with the variant tuned for the
// nearest n.  n == 0 gives the identity (in may then be null).  Errors:
// cudaErrorInvalidValue for a null out, a null in or workspace with n > 0,
// or a workspace smaller than @P@_workspace(n); else what the launch
// returns.  Asynchronous, like a kernel launch.
static inline cudaError_t
@P@(const @IN@ *in, size_t n, @O@ *out, void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace @P@_detail;
    if (!out)
        return cudaErrorInvalidValue;
    if (n == 0) {
        unsigned *no_ticket = 0;
        T *no_slot = 0;
        void *args[] = {(void *)&no_ticket, (void *)&no_slot, (void *)&out};
        return cudaLaunchKernel((const void *)@P@_init, dim3(1), dim3(1), args, 0, stream);
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

// The variant @P@ uses for n elements, and what it was tuned at.
static inline const char *@P@_variant(size_t n)
{
    using namespace @P@_detail;
    return variants[sizes[pick(n)].variant].label;
}

#endif // !__CUDACC_RTC__
