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
#include <string.h>

#include "codegen.h"
#include "plan.h"
#include "reduce.h"
#include "util.h"
#include "verify.h"

/* text with every control character and backslash made a space: safe on a
 * // comment line (a trailing backslash would continue the comment). */
static void comment_text(strbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        sb_printf(b, "%c", *p < 32 || *p == 127 || *p == '\\' ? ' ' : *p);
}

/* A C string literal. */
static void c_string(strbuf *b, const char *s)
{
    sb_append(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p < 32 || *p >= 127)
            sb_printf(b, "\\%03o", *p);
        else if (*p == '?' && p[1] == '?')
            sb_append(b, "?\\"); /* no trigraphs */
        else
            sb_appendn(b, (const char *)p, 1);
    }
    sb_append(b, "\"");
}

/* "2^20" for a power of two, else the number. */
static void size_text(char *buf, size_t len, uint64_t n)
{
    if (n > 0 && (n & (n - 1)) == 0) {
        int k = 0;
        while ((1ULL << k) < n)
            k++;
        snprintf(buf, len, "2^%d", k);
    } else {
        snprintf(buf, len, "%" PRIu64, n);
    }
}

/* The smallest m with m * m >= a * b: from there n is nearer b than a on a
 * log scale (n * n == a * b is a tie, which goes to the larger, b). */
static uint64_t boundary(uint64_t a, uint64_t b)
{
    unsigned __int128 ab = (unsigned __int128)a * b;
    uint64_t lo = a, hi = b; /* a * a <= ab <= b * b */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((unsigned __int128)mid * mid >= ab)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* A copy of text with every @KEY@ replaced by its value (keys[i], vals[i]). */
static void substitute(strbuf *b, const char *text, const char *const *keys, const char *const *vals, int nkeys)
{
    for (const char *p = text; *p;) {
        const char *at = strchr(p, '@');
        if (!at) {
            sb_append(b, p);
            break;
        }
        sb_appendn(b, p, (size_t)(at - p));
        int k = 0;
        for (; k < nkeys; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(at + 1, keys[k], kl) == 0 && at[1 + kl] == '@')
                break;
        }
        if (k < nkeys) {
            sb_append(b, vals[k]);
            p = at + strlen(keys[k]) + 2;
        } else {
            sb_append(b, "@");
            p = at + 1;
        }
    }
}

char *reduce_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen)
{
    const char *host = codegen_template("reduce_export");
    if (!host) {
        kf_err(err, errlen, "the export template is missing from the build (kernel_src/reduce/reduce_export.cuh)");
        return NULL;
    }
    if (n < 1) {
        kf_err(err, errlen, "nothing to export");
        return NULL;
    }
    kf_dtype t = variant_dtype(&e[0].v);
    kf_op op = variant_op(&e[0].v);
    for (int i = 0; i < n; i++)
        if (variant_dtype(&e[i].v) != t || variant_op(&e[i].v) != op || e[i].shape.d[0] < 1 ||
            (i > 0 && e[i].shape.d[0] <= e[i - 1].shape.d[0])) {
            kf_err(err, errlen, "export: entries must share dtype and op and come one per size, in increasing size");
            return NULL;
        }

    char P[64], UP[64];
    snprintf(P, sizeof P, "kforge_reduce_%s_%s", kf_dtype_names[t], kf_op_names[op]);
    for (size_t i = 0; i <= strlen(P); i++)
        UP[i] = (char)(P[i] >= 'a' && P[i] <= 'z' ? P[i] - 'a' + 'A' : P[i]);
    const char *T = kf_dtype_ctype(t);
    size_t es = kf_dtype_size(t);

    /* distinct kernel sources; kernel[i] is entry i's */
    char **srcs = calloc((size_t)n, sizeof *srcs);
    int *kernel = calloc((size_t)n, sizeof *kernel);
    int *first = calloc((size_t)n, sizeof *first); /* an entry of each kernel */
    uint64_t *from = calloc((size_t)n, sizeof *from);
    int nk = 0, min_cc = 70;
    bool all_det = true;
    strbuf b = {0}, tables = {0};
    char *out = NULL;
    if (!srcs || !kernel || !first || !from) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        kf_variant v = e[i].v;
        v.name[0] = '\0';
        char *s = codegen_source(&v, err, errlen);
        if (!s)
            goto done;
        int k = 0;
        while (k < nk && strcmp(srcs[k], s) != 0)
            k++;
        if (k == nk) {
            srcs[nk] = s;
            first[nk++] = i;
        } else {
            free(s);
        }
        kernel[i] = k;
        reduce_v r;
        reduce_decode(&v, &r);
        /* __reduce_*_sync and the L2::256B prefetch need sm_80 */
        if (r.load == KF_LOAD_LDG_PREFETCH || r.algorithm == KF_ALG_WARP_INTRINSIC ||
            r.warp_reduce == KF_WARP_INTRINSIC)
            min_cc = 80;
        all_det = all_det && e[i].deterministic;
    }
    for (int i = 1; i < n; i++)
        from[i] = boundary((uint64_t)e[i - 1].shape.d[0], (uint64_t)e[i].shape.d[0]);

    // -----------------------------------------------------------------------
    // 1. the opening comment
    sb_printf(&b, "// %s.cuh -- %s %s reduction, tuned by kforge.\n//\n", P, kf_dtype_names[t], kf_op_names[op]);
    sb_append(&b, "// Generated by kforge " KF_VERSION);
    if (info && info->date) {
        sb_append(&b, " on ");
        comment_text(&b, info->date);
    }
    if (info && info->command) {
        sb_append(&b, ":\n//   ");
        comment_text(&b, info->command);
    }
    sb_append(&b, "\n// Do not edit: export again after tuning.\n//\n");
    sb_append(&b, "// Tuned on ");
    comment_text(&b, info && info->device ? info->device : "an unknown GPU");
    if (info && info->cc_major > 0)
        sb_printf(&b, " (compute capability %d.%d, %d SMs)", info->cc_major, info->cc_minor, info->sms);
    sb_printf(&b, ".  It works, untuned,\n"
                  "// on any NVIDIA GPU of compute capability %d.%d or newer: the launch geometry that depends on\n"
                  "// the device (its multiprocessors, the blocks of a kernel that fit on one) is asked for at run\n"
                  "// time, but the variants were chosen for that GPU.  Needs nothing but the CUDA toolkit: no\n"
                  "// kforge headers, no run-time compilation.  C++17 (nvcc's default).  NVRTC compiles the kernels\n"
                  "// (extern \"C\" %s_k0, ...); the host API is left out there.\n//\n",
              min_cc / 10, min_cc % 10, P);
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
              P, P, P, T, T, kf_op_names[op], P);
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
        size_text(tn, sizeof tn, (uint64_t)e[i].shape.d[0]);
        snprintf(lo, sizeof lo, "%" PRIu64, from[i]);
        if (i + 1 < n)
            snprintf(hi, sizeof hi, "%" PRIu64, from[i + 1] - 1);
        else
            snprintf(hi, sizeof hi, "...");
        sb_printf(&b, "//   n %12s .. %-12s k%-2d %s\n//   %30s tuned at n = %s: %.5g ms, %.1f GB/s%s\n", lo, hi,
                  kernel[i], label, "", tn, e[i].median_ms, e[i].gbps,
                  e[i].deterministic ? ", deterministic" : ", not deterministic");
    }
    sb_append(&b, "//\n");

    // -----------------------------------------------------------------------
    // 2. the kernels
    sb_printf(&b, "#ifndef %s_CUH\n#define %s_CUH\n\n", UP, UP);
    sb_printf(&b, "#if !defined(__CUDACC__)\n#error \"%s.cuh holds CUDA kernels: include it from a .cu file (nvcc) "
                  "or compile it with NVRTC\"\n#endif\n",
              P);
    sb_printf(&b, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < %d\n#error \"%s.cuh needs compute capability "
                  "%d.%d or newer\"\n#endif\n\n",
              min_cc * 10, P, min_cc / 10, min_cc % 10);
    sb_printf(&b, "#define %s_KFORGE_VERSION \"" KF_VERSION "\"\n#define %s_TUNED_DEVICE ", UP, UP);
    c_string(&b, info && info->device ? info->device : "");
    sb_printf(&b, "\n#define %s_DETERMINISTIC %d /* every variant gives the same bits run to run */\n\n", UP,
              all_det ? 1 : 0);
    sb_printf(&b, "#if defined(__CUDACC_RTC__)\n#define %s_LINKAGE extern \"C\"\n#else\n"
                  "#include <cuda_runtime.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <atomic>\n"
                  "#define %s_LINKAGE static\n#endif\n\n",
              UP, UP);
    sb_append(&b, "// Some template paths leave a constant unused (nvcc warning 177).\n"
                  "#pragma nv_diag_suppress 177\n");
    for (int k = 0; k < nk; k++) {
        char entry[96], ns[112], prologue[160], label[256];
        snprintf(entry, sizeof entry, "%s_k%d", P, k);
        snprintf(ns, sizeof ns, "%s_ns", entry);
        snprintf(prologue, sizeof prologue, "#define KF_ENTRY_LINKAGE %s_LINKAGE\n", UP);
        family_of(&e[first[k]].v)->label(&e[first[k]].v, label, sizeof label);
        sb_printf(&b, "\n// ===========================================================================\n"
                      "// kernel k%d: %s (the grid is chosen at launch)\n"
                      "// ===========================================================================\n",
                  k, label);
        kf_variant v = e[first[k]].v;
        v.name[0] = '\0';
        if (codegen_wrapped(&b, &v, ns, entry, prologue, err, errlen) != 0)
            goto done;
    }
    kf_value id = verify_identity(t, op);
    const char *U = es == 4 ? "unsigned int" : "unsigned long long";
    char idbits[40];
    if (es == 4)
        snprintf(idbits, sizeof idbits, "0x%08" PRIx32 "u", id.u32);
    else
        snprintf(idbits, sizeof idbits, "0x%016" PRIx64 "ull", id.bits);
    sb_printf(&b, "\n// The identity of %s into each non-null pointer; the ticket 0.\n"
                  "%s_LINKAGE __global__ void %s_init(unsigned *ticket, %s *slot, %s *out)\n{\n"
                  "    union { %s u; %s t; } id;\n    id.u = %s;\n"
                  "    if (ticket) *ticket = 0;\n    if (slot) *slot = id.t;\n    if (out) *out = id.t;\n}\n"
                  "#pragma nv_diag_default 177\n\n",
              kf_op_names[op], UP, P, T, T, U, T, idbits);

    // -----------------------------------------------------------------------
    // 3. the host API
    sb_printf(&tables, "static const int nkernels = %d;\nstatic const kernel_info kernels[nkernels] = {\n", nk);
    for (int k = 0; k < nk; k++)
        sb_printf(&tables, "    {(const void *)%s_k%d_ns::%s_k%d, %d},\n", P, k, P, k,
                  (int)e[first[k]].v.p[RP_BLOCK_SIZE]);
    sb_printf(&tables, "};\nstatic const int nsizes = %d;\nstatic const variant_info variants[nsizes] = {\n", n);
    static const char *const grid_kinds[] = {"grid_auto", "grid_blocks", "grid_per_sm", "grid_waves"};
    for (int i = 0; i < n; i++) {
        reduce_v r;
        reduce_decode(&e[i].v, &r);
        char label[256], tn[32];
        family_of(&e[i].v)->label(&e[i].v, label, sizeof label);
        size_text(tn, sizeof tn, (uint64_t)e[i].shape.d[0]);
        strbuf l = {0};
        sb_printf(&l, "k%d %s, tuned at n = %s on ", kernel[i], label, tn);
        sb_append(&l, info && info->device ? info->device : "?");
        sb_printf(&l, ": %.5g ms%s", e[i].median_ms, e[i].deterministic ? ", deterministic" : "");
        sb_printf(&tables, "    {%d, %lluull, %s, %lluull, %s, ", kernel[i], (unsigned long long)plan_tile(&r),
                  grid_kinds[r.grid.kind < 4 ? r.grid.kind : 0], (unsigned long long)r.grid.value,
                  r.passes == KF_PASSES_ATOMIC       ? "passes_atomic"
                  : r.passes == KF_PASSES_LAST_BLOCK ? "passes_last_block"
                                                     : "passes_multi_kernel");
        c_string(&tables, l.s ? l.s : "");
        sb_append(&tables, "},\n");
        sb_free(&l);
    }
    sb_append(&tables, "};\nstatic const size_info sizes[nsizes] = {\n");
    for (int i = 0; i < n; i++)
        sb_printf(&tables, "    {%" PRIu64 "ull, %d},\n", from[i], i);
    sb_append(&tables, "};\n");
    static const char *const keys[] = {"P", "T", "OPNAME", "TABLES"};
    const char *vals[] = {P, T, kf_op_names[op], tables.s ? tables.s : ""};
    substitute(&b, host, keys, vals, 4);
    sb_printf(&b, "\n#undef %s_LINKAGE\n#endif // %s_CUH\n", UP, UP);
    if (b.failed || tables.failed) {
        kf_err(err, errlen, "out of memory");
        goto done;
    }
    out = sb_take(&b);
done:
    sb_free(&b);
    sb_free(&tables);
    if (srcs)
        for (int k = 0; k < nk; k++)
            free(srcs[k]);
    free(srcs);
    free(kernel);
    free(first);
    free(from);
    return out;
}
