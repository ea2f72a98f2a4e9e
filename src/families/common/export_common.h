/*
 * export_common.h -- what every family's `kforge export` writer shares
 * (family.h: export_source).  An exported header is
 *
 *   1. an opening comment: the name, where and how it was made, where it was
 *      tuned and that it works (untuned) on other GPUs -- export_opening --
 *      then the family's own API, use and dispatch table;
 *   2. the include guard, the #error for non-CUDA compilers and too old
 *      GPUs, the version and device macros and the kernels' linkage
 *      (static under nvcc, extern "C" under NVRTC) -- export_preamble --
 *      then each distinct variant source exactly as kforge run compiles it
 *      (codegen_wrapped: its own namespace, the entry renamed
 *      <P>_k<i>) -- export_kernels -- and the family's own helper kernels;
 *   3. the host API: the family's template with @KEY@s filled in
 *      (export_substitute), skipped under NVRTC; export_closing.
 *
 * <P> is kforge_<family>_<dtype>_<op>, with _acc_float64 for a bfloat16 or
 * float16 input accumulated in float64.
 */
#ifndef KF_EXPORT_COMMON_H
#define KF_EXPORT_COMMON_H

#include <stdint.h>

#include "family.h"
#include "util.h"

/* What the writers of one header share: names and the distinct kernels. */
typedef struct {
    char P[64], UP[64];         /* kforge_reduce_float32_sum, KFORGE_REDUCE_FLOAT32_SUM */
    kf_dtype t, acc, out;       /* the input's type, the accumulator's, the outputs' */
    kf_op op;
    const char *T;              /* the accumulator's (and partials') C type */
    const char *O;              /* the outputs' C type (T, or for acc_dtype input the input's) */
    const char *IN;             /* the input element's C type (__nv_bfloat16, __half, or T) */
    int n;                      /* entries */
    int nk;                     /* distinct kernel sources */
    int *kernel;                /* kernel[i]: entry i's kernel (0..nk) */
    int *first;                 /* first[k]: the first entry of kernel k */
    char **srcs;                /* srcs[k]: kernel k's source (codegen_source) */
} export_ctx;

/* Checks that e[0..n) share one dtype and op (n >= 1), names the header
 * and finds the distinct kernel sources (variants that differ only in
 * launch-time values share one).  0, or -1 with a message; export_end
 * frees either way. */
int export_begin(export_ctx *x, const kf_export_entry *e, int n, char *err, size_t errlen);
void export_end(export_ctx *x);

/* s with every control character and backslash made a space, and a space
 * between the characters of every "*" "/" and "??": safe on a // comment
 * line (a trailing backslash, or C's trigraph ??/, would continue the
 * comment) and inside a block comment. */
void export_comment_text(strbuf *b, const char *s);
/* s as a C string literal (quotes, escapes, no trigraphs). */
void export_c_string(strbuf *b, const char *s);
/* "2^20" for a power of two, else the number. */
void export_size_text(char *buf, size_t len, uint64_t n);
/* The opening comment's lines that say, per dispatch range of the one size
 * axis `axis`, which sizes were measured there (tuned, or between them by
 * tune --between) and which variant serves it, and where nothing was
 * measured between two tuned sizes (ranges.h), each line through
 * export_comment_text.  e[0..n): one entry per size, in increasing size.
 * A family of several size axes: that each shape was tuned, and that the
 * shapes between them were not measured.  0, or -1 out of memory. */
int export_range_comment(strbuf *b, const kf_export_entry *e, int n, const char *axis);
/* text with every @KEY@ replaced by its value (keys[i], vals[i]); other @s
 * are kept. */
void export_substitute(strbuf *b, const char *text, const char *const *keys, const char *const *vals, int nkeys);

/* The oldest compute capability an exported header names (x 10): 7.5,
 * the oldest NVRTC 13 (CUDA 13) compiles for -- it dropped sm_50..sm_72. */
#define KF_EXPORT_MIN_CC 75

/* The first lines of the opening comment: "// <P>.cuh -- <what>, tuned by
 * kforge." (what: "<dtype> <op> <kind>", and " in <acc>" where the input
 * accumulates in another type, ", rounded to <out>" where the outputs have
 * another type still), when and by which command it was made, the GPU it was tuned on
 * and that it works, untuned, on any GPU of compute capability min_cc / 10
 * or newer, and that NVRTC compiles its kernels. */
void export_opening(strbuf *b, const export_ctx *x, const char *kind, const kf_export_info *info, int min_cc);

/* The include guard, the #errors, <UP>_KFORGE_VERSION, _TUNED_DEVICE and
 * _DETERMINISTIC, <UP>_LINKAGE, the host includes (cuda_runtime.h,
 * stddef.h, stdint.h, <atomic>, then each of includes, NULL-terminated, may
 * be NULL) and the warning suppression the kernels need. */
void export_preamble(strbuf *b, const export_ctx *x, const kf_export_info *info, int min_cc, bool all_det,
                     const char *const *includes);

/* Every distinct kernel, wrapped (namespace <P>_k<i>_ns, entry <P>_k<i>,
 * linkage <UP>_LINKAGE), each under a banner naming its first entry's
 * label.  0, or -1 with a message. */
int export_kernels(strbuf *b, const export_ctx *x, const kf_export_entry *e, char *err, size_t errlen);

/* The identity of the header's op for its dtype as the unsigned type of its
 * width and a literal of its bits ("unsigned int", "0x7f800000u"). */
void export_identity(const export_ctx *x, kf_dtype t, const char **utype, char *bits, size_t len);

/* The host API: the family's template host with @P@, @T@, @OPNAME@ and
 * @TABLES@ filled in, and @HOST_HELPERS@ replaced by the helpers every
 * family's API shares (kernel_src/export_host.cuh: ceil_div, align_up,
 * sms_of, occupancy_of).  0, or -1 with a message. */
int export_host_api(strbuf *b, const export_ctx *x, const char *host, const char *opname, const char *tables,
                    char *err, size_t errlen);

/* Closes what export_preamble opened. */
void export_closing(strbuf *b, const export_ctx *x);

#endif
