/*
 * export.c -- the reduce family's export (family.h: export_source): one
 * self-contained CUDA C++17 header holding the tuned variants of one dtype
 * and op and a host API that dispatches on n.
 *
 * The header is made of
 *   1. an opening comment: the API, how to use it, where it was tuned, the
 *      dispatch table;
 *   2. the kernels: each distinct variant source exactly as kforge run
 *      compiles it (codegen_wrapped: its own namespace, the entry renamed
 *      kforge_reduce_<dtype>_<op>_k<i>, its macros #undef'd after it), so
 *      each compiles to the code kforge measured; static under nvcc (the
 *      header may be included by several translation units), extern "C"
 *      under NVRTC; and a one-thread kernel that writes the identity;
 *   3. the host API (kernel_src/reduce/reduce_export.cuh with the tables
 *      filled in), skipped under NVRTC.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "codegen.h"
#include "export_common.h"
#include "plan.h"
#include "ranges.h"
#include "reduce.h"
#include "util.h"

char *reduce_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen)
{
    const char *host = codegen_template("reduce_export");
    if (!host) {
        kf_err(err, errlen, "the export template is missing from the build (kernel_src/reduce/reduce_export.cuh)");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (e[i].shape.d[0] < 1 || (i > 0 && e[i].shape.d[0] <= e[i - 1].shape.d[0])) {
            kf_err(err, errlen, "export: entries must come one per size, in increasing size");
            return NULL;
        }
    export_ctx x;
    uint64_t *from = NULL;
    strbuf b = {0}, tables = {0};
    char *out = NULL;
    if (export_begin(&x, e, n, err, errlen) != 0)
        goto done;
    const char *P = x.P, *UP = x.UP, *T = x.T;
    if (info->api)
        sb_append(info->api, P);
    kf_op op = x.op;
    from = calloc((size_t)n, sizeof *from);
    if (!from) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }
    int min_cc = KF_EXPORT_MIN_CC;
    bool all_det = true;
    for (int i = 0; i < n; i++) {
        reduce_v r;
        reduce_decode(&e[i].v, &r);
        /* __reduce_*_sync and the L2::256B prefetch need sm_80 */
        if (r.load == KF_LOAD_LDG_PREFETCH || r.algorithm == KF_ALG_WARP_INTRINSIC ||
            r.warp_reduce == KF_WARP_INTRINSIC)
            min_cc = 80;
        all_det = all_det && e[i].deterministic;
    }
    for (int i = 1; i < n; i++)
        from[i] = kf_size_boundary((uint64_t)e[i - 1].shape.d[0], (uint64_t)e[i].shape.d[0]);

    // -----------------------------------------------------------------------
    // 1. the opening comment
    export_opening(&b, &x, "reduction", info, min_cc);
    sb_printf(&b, "// API (all static inline, so the header may be included by several .cu files):\n//\n"
                  "//   size_t %s_workspace(size_t n);\n"
                  "//       workspace bytes for calls with up to n elements (depends on n only)\n"
                  "//   cudaError_t %s_workspace_init(void *workspace, size_t workspace_bytes,\n"
                  "//                                 cudaStream_t stream);\n"
                  "//       once per workspace, before its first use: the single-pass variants keep a ticket\n"
                  "//       (and, atomic ones, an accumulator) there, which every call leaves as it found it\n"
                  "//   cudaError_t %s(const %s *in, size_t n, %s *out, void *workspace,\n"
                  "//                  size_t workspace_bytes, cudaStream_t stream);\n"
                  "//       *out = the %s of in[0..n), asynchronously on stream; n == 0 gives the identity;\n"
                  "//       cudaErrorInvalidValue for a null out, a null in or workspace (n > 0) or a\n"
                  "//       workspace too small\n"
                  "//   const char *%s_variant(size_t n);\n"
                  "//       the variant used for n, and where it was tuned\n//\n",
              P, P, P, x.IN, x.O, kf_op_names[op], P);
    sb_printf(&b, "// Use:\n//\n"
                  "//   #include \"%s.cuh\"\n"
                  "//   size_t bytes = %s_workspace(n_max);\n"
                  "//   void *ws;\n"
                  "//   cudaMalloc(&ws, bytes);\n"
                  "//   %s_workspace_init(ws, bytes, stream);\n"
                  "//   %s(d_in, n, d_out, ws, bytes, stream);     // any n <= n_max, any number of times\n"
                  "//\n"
                  "// A workspace serves one stream at a time; use it for nothing else between calls (or\n"
                  "// initialise it again).\n//\n",
              P, P, P, P);
    sb_printf(&b, "// Determinism: %s\n//\n",
              all_det ? "every variant here gives the same bits run to run."
                      : "not every variant here gives the same bits run to run (atomic combines of\n"
                        "// floats in arrival order: see the table); kforge export --deterministic chooses only\n"
                        "// variants that do.");
    sb_append(&b, "// Dispatch: n goes to the variant tuned for the nearest size (log scale).\n");
    for (int i = 0; i < n; i++) {
        char label[256], tn[32], lo[32], hi[40];
        reduce_v r;
        reduce_decode(&e[i].v, &r);
        family_of(&e[i].v)->label(&e[i].v, label, sizeof label);
        export_size_text(tn, sizeof tn, (uint64_t)e[i].shape.d[0]);
        snprintf(lo, sizeof lo, "%" PRIu64, from[i]);
        if (i + 1 < n)
            snprintf(hi, sizeof hi, "%" PRIu64, from[i + 1] - 1);
        else
            snprintf(hi, sizeof hi, "...");
        sb_printf(&b, "//   n %12s .. %-12s k%-2d %s\n//   %30s %s at n = %s: %.5g ms, %.1f GB/s%s\n", lo, hi,
                  x.kernel[i], label, "", e[i].between ? "measured between the tuned sizes" : "tuned", tn,
                  e[i].median_ms, e[i].gbps, e[i].deterministic ? ", deterministic" : ", not deterministic");
    }
    sb_append(&b, "//\n");
    if (export_range_comment(&b, e, n, "n") != 0) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }

    // -----------------------------------------------------------------------
    // 2. the kernels
    export_preamble(&b, &x, info, min_cc, all_det, NULL);
    if (export_kernels(&b, &x, e, err, errlen) != 0)
        goto done;
    const char *U, *UO;
    char idbits[40], idout[40];
    export_identity(&x, x.acc, &U, idbits, sizeof idbits);
    export_identity(&x, x.out, &UO, idout, sizeof idout);
    sb_printf(&b, "\n// The identity of %s into each non-null pointer; the ticket 0.\n"
                  "%s_LINKAGE __global__ void %s_init(unsigned *ticket, %s *slot, %s *out)\n{\n"
                  "    union { %s u; %s t; } id;\n    id.u = %s;\n"
                  "    if (ticket) *ticket = 0;\n    if (slot) *slot = id.t;\n",
              kf_op_names[op], UP, P, T, x.out == x.acc ? T : UO, U, T, idbits);
    if (x.out == x.acc)
        sb_append(&b, "    if (out) *out = id.t;\n}\n#pragma nv_diag_default 177\n\n");
    else
        sb_printf(&b, "    if (out) *out = %s;\n}\n#pragma nv_diag_default 177\n\n", idout);

    // -----------------------------------------------------------------------
    // 3. the host API
    sb_printf(&tables, "static const int nkernels = %d;\nstatic const kernel_info kernels[nkernels] = {\n", x.nk);
    for (int k = 0; k < x.nk; k++)
        sb_printf(&tables, "    {(const void *)%s_k%d_ns::%s_k%d, %d},\n", P, k, P, k,
                  (int)e[x.first[k]].v.p[RP_BLOCK_SIZE]);
    sb_printf(&tables, "};\nstatic const int nsizes = %d;\nstatic const variant_info variants[nsizes] = {\n", n);
    static const char *const grid_kinds[] = {"grid_auto", "grid_blocks", "grid_per_sm", "grid_waves"};
    for (int i = 0; i < n; i++) {
        reduce_v r;
        reduce_decode(&e[i].v, &r);
        char label[256], tn[32];
        family_of(&e[i].v)->label(&e[i].v, label, sizeof label);
        export_size_text(tn, sizeof tn, (uint64_t)e[i].shape.d[0]);
        strbuf l = {0};
        sb_printf(&l, "k%d %s, %s at n = %s on ", x.kernel[i], label,
                  e[i].between ? "measured between the tuned sizes" : "tuned", tn);
        sb_append(&l, info && info->device ? info->device : "?");
        sb_printf(&l, ": %.5g ms%s", e[i].median_ms, e[i].deterministic ? ", deterministic" : "");
        sb_printf(&tables, "    {%d, %lluull, %s, %lluull, %s, ", x.kernel[i], (unsigned long long)plan_tile(&r),
                  grid_kinds[r.grid.kind < 4 ? r.grid.kind : 0], (unsigned long long)r.grid.value,
                  r.passes == KF_PASSES_ATOMIC       ? "passes_atomic"
                  : r.passes == KF_PASSES_LAST_BLOCK ? "passes_last_block"
                                                     : "passes_multi_kernel");
        export_c_string(&tables, l.s ? l.s : "");
        sb_append(&tables, "},\n");
        sb_free(&l);
    }
    sb_append(&tables, "};\nstatic const size_info sizes[nsizes] = {\n");
    for (int i = 0; i < n; i++)
        sb_printf(&tables, "    {%" PRIu64 "ull, %d},\n", from[i], i);
    sb_append(&tables, "};\n");
    if (export_host_api(&b, &x, host, kf_op_names[op], tables.s, err, errlen) != 0)
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
    free(from);
    return out;
}
