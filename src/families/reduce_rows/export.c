/*
 * export.c -- the row-wise family's export (family.h: export_source): one
 * self-contained CUDA C++17 header holding the tuned variants of one dtype
 * and op and a host API that dispatches on rows and cols
 * (export_common.h says how such a header is made).
 *
 *   1. the opening comment: the API, how to use it, the workspace, where it
 *      was tuned, the tuned shapes and what serves them;
 *   2. the kernels, each exactly as kforge run compiles it, and a kernel
 *      that fills with the identity (rows of no columns) and prepares a
 *      workspace;
 *   3. the host API, kernel_src/reduce_rows/reduce_rows_export.cuh with the
 *      tables filled in: the dispatch (family.h: shape_nearer, as kforge
 *      best) and rows.c's launch plan, asked of the device at run time.
 */
#include <math.h>
#include <stdio.h>

#include "codegen.h"
#include "export_common.h"
#include "rows.h"
#include "util.h"

static const char *const map_kinds[] = {"map_thread", "map_group", "map_block", "map_split", "map_tile"};
static const char *const grid_kinds[] = {"grid_auto", "grid_blocks", "grid_per_sm", "grid_waves"};

/* Whether a variant uses the workspace: map split with rows cut in parts. */
static bool uses_workspace(const kf_variant *v) { return v->p[WP_MAP] == MAP_SPLIT && v->p[WP_SPLITS] > 1; }

char *rows_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen)
{
    const char *host = codegen_template("reduce_rows_export");
    if (!host) {
        kf_err(err, errlen,
               "the export template is missing from the build (kernel_src/reduce_rows/reduce_rows_export.cuh)");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || shape_eq(&e[j].shape, &e[i].shape);
        if (e[i].shape.d[0] < 1 || e[i].shape.d[1] < 1 || e[i].shape.d[2] < e[i].shape.d[1] || dup) {
            kf_err(err, errlen, "export: entries must come one per shape (rows, cols, row_stride >= cols)");
            return NULL;
        }
    }
    export_ctx x;
    strbuf b = {0}, tables = {0};
    char *out = NULL;
    if (export_begin(&x, e, n, err, errlen) != 0)
        goto done;
    const kf_family *f = family_of(&e[0].v);
    int min_cc = KF_EXPORT_MIN_CC;
    bool all_det = true, any_ws = false, any_atomic = false;
    for (int i = 0; i < n; i++) {
        /* the L2::256B prefetch needs sm_80 */
        if (e[i].v.p[WP_LOAD] == LOAD_LDG_PREFETCH)
            min_cc = 80;
        all_det = all_det && e[i].deterministic;
        any_ws = any_ws || uses_workspace(&e[i].v);
        any_atomic = any_atomic || (uses_workspace(&e[i].v) && e[i].v.p[WP_COMBINE] == COMBINE_ATOMIC);
    }
    const char *P = x.P, *T = x.T, *opname = kf_op_names[x.op];
    if (info->api)
        sb_append(info->api, P);

    // -----------------------------------------------------------------------
    // 1. the opening comment
    export_opening(&b, &x, "row-wise reduction", info, min_cc);
    sb_printf(&b, "// API (all static inline, so the header may be included by several .cu files):\n//\n"
                  "//   cudaError_t %s(const %s *in, size_t rows, size_t cols, size_t row_stride,\n"
                  "//       %s *out, void *workspace, size_t workspace_bytes, cudaStream_t stream);\n"
                  "//       out[r] = the %s of in[r * row_stride + c], c < cols, for every row r < rows,\n"
                  "//       asynchronously on stream; row_stride 0 means cols; any alignment of in and of\n"
                  "//       the rows; cols == 0 gives the identity, rows == 0 does nothing;\n"
                  "//       cudaErrorInvalidValue for a null out, a null in (cols > 0), a pointer not aligned\n"
                  "//       to the element, or a workspace (null or) too small for the variant chosen\n"
                  "//   size_t %s_workspace(size_t rows);\n"
                  "//       workspace bytes for calls with up to rows rows (any cols and row_stride) on the\n"
                  "//       current device; %s\n"
                  "//   size_t %s_workspace_for(size_t rows, size_t cols, size_t row_stride);\n"
                  "//       workspace bytes for a call of that shape (0 if its variant needs none); the\n"
                  "//       largest over several shapes serves them all\n"
                  "//   cudaError_t %s_workspace_init(void *workspace, size_t workspace_bytes,\n"
                  "//       cudaStream_t stream);\n"
                  "//       once per workspace, before its first use: split variants keep per-row tickets\n"
                  "//       (and, atomic ones, partials) there, which every call leaves as it found them\n"
                  "//   const char *%s_variant(size_t rows, size_t cols, size_t row_stride);\n"
                  "//       the variant used for rows x cols with row_stride, and where it was tuned\n//\n",
              P, x.IN, x.O, opname, P, any_ws ? "split variants here need one" : "0 here: no variant here needs one", P,
              P, P);
    sb_printf(&b, "// Use:\n//\n"
                  "//   #include \"%s.cuh\"\n"
                  "//   size_t bytes = %s_workspace(rows_max);\n"
                  "//   void *ws = 0;\n"
                  "//   if (bytes) cudaMalloc(&ws, bytes);\n"
                  "//   %s_workspace_init(ws, bytes, stream);\n"
                  "//   %s(d_in, rows, cols, 0, d_out, ws, bytes, stream);  // any rows <= rows_max, any cols\n"
                  "//\n"
                  "// Pass every call on a workspace the same workspace_bytes (its parts are laid out by\n"
                  "// it).  A workspace serves one stream at a time; use it for nothing else between calls\n"
                  "// (or initialise it again).\n//\n",
              P, P, P, P);
    sb_printf(&b, "// Determinism: %s\n//\n",
              all_det ? "every variant here gives the same bits run to run."
                      : "not every variant here gives the same bits run to run (rows split over\n"
                        "// blocks combined by float atomics in arrival order: see the table); kforge export\n"
                        "// --deterministic chooses only variants that do.");
    sb_append(&b, "// Dispatch: a call goes to the variant tuned for the nearest shape, the smallest\n"
                  "// |ln rows - ln R| + |ln cols - ln C| + |ln row_stride - ln S| over the tuned R x C with\n"
                  "// row stride S (as near up to rounding: the larger R C S; as large: the faster), as\n"
                  "// `kforge best --kernel reduce_rows --rows R --cols C --row_stride S` answers (without\n"
                  "// --row_stride, S is C: for rows stored densely, cols counts twice).  Tuned:\n");
    for (int i = 0; i < n; i++) {
        char label[256], st[128];
        f->label(&e[i].v, label, sizeof label);
        shape_text(f, &e[i].shape, st, sizeof st);
        sb_printf(&b, "//   %-28s k%-2d %s\n//   %28s     %.5g ms, %.1f GB/s%s\n", st, x.kernel[i], label, "",
                  e[i].median_ms, e[i].gbps, e[i].deterministic ? ", deterministic" : ", not deterministic");
    }
    sb_append(&b, "//\n");
    if (export_range_comment(&b, e, n, NULL) != 0) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }

    // -----------------------------------------------------------------------
    // 2. the kernels
    static const char *const includes[] = {"<cmath>", NULL};
    export_preamble(&b, &x, info, min_cc, all_det, includes);
    if (export_kernels(&b, &x, e, err, errlen) != 0)
        goto done;
    const char *U;
    char idbits[40];
    export_identity(&x, x.acc, &U, idbits, sizeof idbits);
    sb_printf(&b, "\n// The identity of %s into out[0..n) (rows of no columns, the atomic partials of a\n"
                  "// workspace), 0 into zero[0..nzero) (the tickets of a workspace).\n"
                  "%s_LINKAGE __global__ void %s_fill(%s *out, unsigned long long n, unsigned *zero,\n"
                  "                                   unsigned long long nzero)\n{\n"
                  "    union { %s u; %s t; } id;\n    id.u = %s;\n"
                  "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
                  "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "         i < n || i < nzero; i += step) {\n"
                  "        if (i < n) out[i] = id.t;\n"
                  "        if (i < nzero) zero[i] = 0;\n"
                  "    }\n}\n"
                  "#pragma nv_diag_default 177\n\n",
              opname, x.UP, P, T, U, T, idbits);
    /* the outputs' identity (rows of no columns), where they are not T */
    if (x.out != x.acc) {
        const char *UO;
        char idout[40];
        export_identity(&x, x.out, &UO, idout, sizeof idout);
        sb_printf(&b, "// The identity of %s as %s (its bits) into out[0..n) (rows of no columns).\n"
                      "%s_LINKAGE __global__ void %s_fill_out(%s *out, unsigned long long n)\n{\n"
                      "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
                      "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
                      "         i += step)\n"
                      "        out[i] = %s;\n}\n\n",
                  opname, x.O, x.UP, P, UO, idout);
    }
    sb_printf(&tables, "#define %s_FILL_OUT %d // 1: the outputs are not T (%s_fill_out)\n", P, x.out != x.acc, P);

    // -----------------------------------------------------------------------
    // 3. the host API
    sb_printf(&tables, "static const int nkernels = %d;\nstatic const kernel_info kernels[nkernels] = {\n", x.nk);
    for (int k = 0; k < x.nk; k++)
        sb_printf(&tables, "    {(const void *)%s_k%d_ns::%s_k%d, %d},\n", P, k, P, k,
                  (int)e[x.first[k]].v.p[WP_BLOCK_SIZE]);
    sb_printf(&tables, "};\nstatic const int nvariants = %d;\nstatic const variant_info variants[nvariants] = {\n", n);
    for (int i = 0; i < n; i++) {
        const kf_variant *v = &e[i].v;
        char label[256], st[128];
        f->label(v, label, sizeof label);
        shape_text(f, &e[i].shape, st, sizeof st);
        kf_grid g = kf_grid_decode(v->p[WP_GRID]);
        /* the dispatch's figures, computed as kforge best computes them */
        double dist, size;
        shape_log_distance(f, &e[i].shape, &e[i].shape, &dist, &size);
        strbuf l = {0};
        sb_printf(&l, "k%d %s, tuned at %s on ", x.kernel[i], label, st);
        sb_append(&l, info && info->device ? info->device : "?");
        sb_printf(&l, ": %.5g ms%s", e[i].median_ms, e[i].deterministic ? ", deterministic" : "");
        bool tile = v->p[WP_MAP] == MAP_TILE;
        sb_printf(&tables, "    {%d, %s, %lldull, %lldull, %d, %d, %s, %s, %lldull,\n     %.17g, %.17g, %.17g, %.17g, %.17g,\n     ",
                  x.kernel[i], map_kinds[v->p[WP_MAP]], (long long)rows_tile_rows(v, 0, 1),
                  tile ? (long long)(v->p[WP_BLOCK_SIZE] * v->p[WP_EPT] * v->p[WP_VECTOR_WIDTH]) : 0LL,
                  (int)v->p[WP_VECTOR_WIDTH],
                  v->p[WP_MAP] == MAP_SPLIT ? (int)v->p[WP_SPLITS] : 1,
                  v->p[WP_COMBINE] == COMBINE_ATOMIC ? "combine_atomic" : "combine_last_block",
                  grid_kinds[g.kind < 4 ? g.kind : 0], (long long)g.value, log((double)e[i].shape.d[0]),
                  log((double)e[i].shape.d[1]), log((double)e[i].shape.d[2]), size, e[i].median_ms);
        export_c_string(&tables, l.s ? l.s : "");
        sb_append(&tables, "},\n");
        sb_free(&l);
    }
    sb_printf(&tables, "};\nstatic const bool any_workspace = %s, any_atomic = %s;\n", any_ws ? "true" : "false",
              any_atomic ? "true" : "false");
    if (export_host_api(&b, &x, host, opname, tables.s, err, errlen) != 0)
        goto done;
    export_closing(&b, &x);
    if (b.failed || tables.failed) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }
    out = sb_take(&b);
done:
    sb_free(&b);
    sb_free(&tables);
    export_end(&x);
    return out;
}
