/*
 * export_common.c -- the parts of an exported header that every family's
 * export writer shares (export_common.h): names, the opening lines, the
 * preamble, the wrapped kernels, literals, template substitution.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"
#include "export_common.h"
#include "ranges.h"
#include "verify.h"

int export_begin(export_ctx *x, const kf_export_entry *e, int n, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    if (n < 1) {
        kf_err(err, errlen, "nothing to export");
        return -1;
    }
    const kf_family *f = family_of(&e[0].v);
    x->t = variant_dtype(&e[0].v);
    x->acc = variant_acc_dtype(&e[0].v);
    x->out = variant_out_dtype(&e[0].v);
    x->op = variant_op(&e[0].v);
    x->T = kf_dtype_ctype(x->acc);
    x->O = kf_dtype_ctype(x->out);
    x->IN = kf_dtype_ctype(x->t);
    x->n = n;
    for (int i = 0; i < n; i++)
        if (e[i].v.family != e[0].v.family || variant_dtype(&e[i].v) != x->t || variant_op(&e[i].v) != x->op ||
            variant_acc_dtype(&e[i].v) != x->acc || variant_out_dtype(&e[i].v) != x->out) {
            kf_err(err, errlen, "export: entries must share family, dtype, acc_dtype and op");
            return -1;
        }
    snprintf(x->P, sizeof x->P, "kforge_%s_%s_%s%s", f->name, kf_dtype_names[x->t], kf_op_names[x->op],
             kf_dtype_is_half(x->t) && x->acc == KF_FLOAT64 ? "_acc_float64" : x->out != x->acc ? "_acc_input" : "");
    for (size_t i = 0; i <= strlen(x->P); i++)
        x->UP[i] = (char)(x->P[i] >= 'a' && x->P[i] <= 'z' ? x->P[i] - 'a' + 'A' : x->P[i]);

    x->srcs = calloc((size_t)n, sizeof *x->srcs);
    x->kernel = calloc((size_t)n, sizeof *x->kernel);
    x->first = calloc((size_t)n, sizeof *x->first);
    if (!x->srcs || !x->kernel || !x->first) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        kf_variant v = e[i].v;
        v.name[0] = '\0';
        char *s = codegen_source(&v, err, errlen);
        if (!s)
            return -1;
        int k = 0;
        while (k < x->nk && strcmp(x->srcs[k], s) != 0)
            k++;
        if (k == x->nk) {
            x->srcs[x->nk] = s;
            x->first[x->nk++] = i;
        } else {
            free(s);
        }
        x->kernel[i] = k;
    }
    return 0;
}

void export_end(export_ctx *x)
{
    if (x->srcs)
        for (int k = 0; k < x->nk; k++)
            free(x->srcs[k]);
    free(x->srcs);
    free(x->kernel);
    free(x->first);
    memset(x, 0, sizeof *x);
}

void export_comment_text(strbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        sb_printf(b, "%c", *p < 32 || *p == 127 || *p == '\\' ? ' ' : *p);
        if ((*p == '*' && p[1] == '/') || (*p == '?' && p[1] == '?'))
            sb_append(b, " "); /* no end of a block comment, no trigraph (C's ??/ is a backslash) */
    }
}

void export_c_string(strbuf *b, const char *s)
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

void export_size_text(char *buf, size_t len, uint64_t n)
{
    kf_size_text(buf, len, n);
}
int export_range_comment(strbuf *b, const kf_export_entry *e, int n, const char *axis)
{
    kf_range_point *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    char(*labels)[256] = calloc((size_t)(n > 0 ? n : 1), sizeof *labels);
    strbuf l = {0};
    int rc = -1;
    if (!p || !labels)
        goto out;
    if (n > 0 && family_of(&e[0].v)->nsizes != 1) {
        sb_append(b, "// What was measured: each shape listed was tuned there (a search); a shape between them runs\n"
                     "// the nearest tuned shape's variant, not measured there (kforge tune --between measures the\n"
                     "// sizes between tuned ones for families with one size axis only).\n//\n");
        rc = b->failed ? -1 : 0;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        family_of(&e[i].v)->label(&e[i].v, labels[i], sizeof labels[i]);
        p[i] = (kf_range_point){.n = e[i].shape.d[0], .between = e[i].between, .label = labels[i]};
    }
    kf_range_lines(&l, "", axis, p, n);
    int gaps = kf_range_unmeasured(p, n);
    sb_append(b, "// What was measured, per range of ");
    export_comment_text(b, axis);
    sb_printf(b, " (neighbours served by the same variant share one)%s:\n", gaps ? "" : "; every range measured");
    for (const char *s = l.s ? l.s : "", *nl; *s; s = nl + 1) {
        nl = strchr(s, '\n');
        if (!nl)
            break;
        strbuf line = {0};
        sb_appendn(&line, s, (size_t)(nl - s));
        sb_append(b, "//   ");
        export_comment_text(b, line.s ? line.s : "");
        sb_append(b, "\n");
        bool failed = line.failed;
        sb_free(&line);
        if (failed)
            goto out;
    }
    if (gaps)
        sb_printf(b, "// Where nothing was measured between two tuned sizes more than %dx apart, the nearest\n"
                     "// tuned size's variant is a guess: kforge tune --between 1 measures there.\n",
                  KF_BETWEEN_RATIO);
    sb_append(b, "//\n");
    rc = l.failed || b->failed ? -1 : 0;
out:
    sb_free(&l);
    free(p);
    free(labels);
    return rc;
}

void export_substitute(strbuf *b, const char *text, const char *const *keys, const char *const *vals, int nkeys)
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

void export_opening(strbuf *b, const export_ctx *x, const char *kind, const kf_export_info *info, int min_cc)
{
    sb_printf(b, "// %s.cuh -- %s %s %s", x->P, kf_dtype_names[x->t], kf_op_names[x->op], kind);
    if (x->acc != x->t)
        sb_printf(b, " in %s", kf_dtype_names[x->acc]);
    if (x->out != x->acc)
        sb_printf(b, ", rounded to %s", kf_dtype_names[x->out]);
    sb_append(b, ", tuned by kforge.\n//\n");
    sb_append(b, "// Generated by kforge " KF_VERSION);
    if (info && info->date) {
        sb_append(b, " on ");
        export_comment_text(b, info->date);
    }
    if (info && info->command) {
        sb_append(b, ":\n//   ");
        export_comment_text(b, info->command);
    }
    sb_append(b, "\n// Do not edit: export again after tuning.\n//\n");
    sb_append(b, "// Tuned on ");
    export_comment_text(b, info && info->device ? info->device : "an unknown GPU");
    if (info && info->cc_major > 0)
        sb_printf(b, " (compute capability %d.%d, %d SMs)", info->cc_major, info->cc_minor, info->sms);
    sb_printf(b, ".  It works, untuned,\n"
                 "// on any NVIDIA GPU of compute capability %d.%d or newer: the launch geometry that depends on\n"
                 "// the device (its multiprocessors, the blocks of a kernel that fit on one) is asked for at run\n"
                 "// time, but the variants were chosen for that GPU.  Needs nothing but the CUDA toolkit: no\n"
                 "// kforge headers, no run-time compilation.  C++17 (nvcc's default).  NVRTC compiles the kernels\n"
                 "// (extern \"C\" %s_k0, ...); the host API is left out there.\n//\n",
              min_cc / 10, min_cc % 10, x->P);
}

void export_preamble(strbuf *b, const export_ctx *x, const kf_export_info *info, int min_cc, bool all_det,
                     const char *const *includes)
{
    sb_printf(b, "#ifndef %s_CUH\n#define %s_CUH\n\n", x->UP, x->UP);
    sb_printf(b, "#if !defined(__CUDACC__)\n#error \"%s.cuh holds CUDA kernels: include it from a .cu file (nvcc) "
                 "or compile it with NVRTC\"\n#endif\n",
              x->P);
    sb_printf(b, "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < %d\n#error \"%s.cuh needs compute capability "
                 "%d.%d or newer\"\n#endif\n\n",
              min_cc * 10, x->P, min_cc / 10, min_cc % 10);
    sb_printf(b, "#define %s_KFORGE_VERSION \"" KF_VERSION "\"\n#define %s_TUNED_DEVICE ", x->UP, x->UP);
    export_c_string(b, info && info->device ? info->device : "");
    sb_printf(b, "\n#define %s_DETERMINISTIC %d /* every variant gives the same bits run to run */\n\n", x->UP,
              all_det ? 1 : 0);
    sb_printf(b, "#if defined(__CUDACC_RTC__)\n#define %s_LINKAGE extern \"C\"\n#else\n"
                 "#include <cuda_runtime.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <atomic>\n",
              x->UP);
    for (int i = 0; includes && includes[i]; i++)
        sb_printf(b, "#include %s\n", includes[i]);
    /* the host API's input type (the kernels read its bits: common.cuh) */
    if (x->t == KF_BFLOAT16)
        sb_append(b, "#include <cuda_bf16.h>\n");
    else if (x->t == KF_FLOAT16)
        sb_append(b, "#include <cuda_fp16.h>\n");
    sb_printf(b, "#define %s_LINKAGE static\n#endif\n\n", x->UP);
    sb_append(b, "// Some template paths leave a constant unused (nvcc warning 177).\n"
                 "#pragma nv_diag_suppress 177\n");
}

int export_kernels(strbuf *b, const export_ctx *x, const kf_export_entry *e, char *err, size_t errlen)
{
    for (int k = 0; k < x->nk; k++) {
        char entry[96], ns[112], prologue[160], label[256];
        snprintf(entry, sizeof entry, "%s_k%d", x->P, k);
        snprintf(ns, sizeof ns, "%s_ns", entry);
        snprintf(prologue, sizeof prologue, "#define KF_ENTRY_LINKAGE %s_LINKAGE\n", x->UP);
        family_of(&e[x->first[k]].v)->label(&e[x->first[k]].v, label, sizeof label);
        sb_printf(b, "\n// ===========================================================================\n"
                     "// kernel k%d: %s (the grid is chosen at launch)\n"
                     "// ===========================================================================\n",
                  k, label);
        kf_variant v = e[x->first[k]].v;
        v.name[0] = '\0';
        if (codegen_wrapped(b, &v, ns, entry, prologue, err, errlen) != 0)
            return -1;
    }
    return 0;
}

void export_identity(const export_ctx *x, kf_dtype t, const char **utype, char *bits, size_t len)
{
    kf_value id = verify_identity(t, x->op);
    if (kf_dtype_size(t) == 2) {
        *utype = "unsigned short";
        snprintf(bits, len, "0x%04x", (unsigned)id.h16);
    } else if (kf_dtype_size(t) == 4) {
        *utype = "unsigned int";
        snprintf(bits, len, "0x%08" PRIx32 "u", id.u32);
    } else {
        *utype = "unsigned long long";
        snprintf(bits, len, "0x%016" PRIx64 "ull", id.bits);
    }
}

int export_host_api(strbuf *b, const export_ctx *x, const char *host, const char *opname, const char *tables,
                    char *err, size_t errlen)
{
    const char *helpers = codegen_template("export_host");
    if (!helpers) {
        kf_err(err, errlen, "the export template is missing from the build (kernel_src/export_host.cuh)");
        return -1;
    }
    static const char *const keys[] = {"P", "T", "O", "IN", "OPNAME", "TABLES", "HOST_HELPERS"};
    const char *vals[] = {x->P, x->T, x->O, x->IN, opname, tables ? tables : "", helpers};
    export_substitute(b, host, keys, vals, 7);
    return 0;
}

void export_closing(strbuf *b, const export_ctx *x)
{
    sb_printf(b, "\n#undef %s_LINKAGE\n#endif // %s_CUH\n", x->UP, x->UP);
}
