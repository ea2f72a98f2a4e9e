/*
 * codegen.h -- what every family's code generator shares: the comment that
 * names every compile-time parameter, the #defines the parameter table
 * gives (values and the numbers of every enumerated value, so templates
 * compare against names, never against numbers that could drift), the
 * embedded templates, and the test hook that plants faults.
 */
#ifndef KF_CODEGEN_H
#define KF_CODEGEN_H

#include "family.h"
#include "kforge.h"
#include "util.h"

/* The variant's source (the family's generator).  NULL with a message. */
char *codegen_source(const kf_variant *v, char *err, size_t errlen);

/* "// kforge X generated <family> kernel" and one line per compiled-in
 * parameter. */
void codegen_comment(strbuf *b, const kf_variant *v);
/* #define KF_T, KF_ELEM_BYTES, KF_IS_FLOAT, KF_IS_SIGNED, KF_INT32_LIKE,
 * then for every parameter with a macro its value names
 * (#define KF_ALG_SHUFFLE 5) and its value (#define KF_ALG 5 / * shuffle * /). */
void codegen_defines(strbuf *b, const kf_variant *v);

/* An embedded template (kernel_src/NAME.cuh, by base name), or NULL. */
const char *codegen_template(const char *name);

/* Test hook: KFORGE_PLANT="fault@NAME,hang@NAME" makes the variant named NAME
 * fault (illegal address) or never finish.  Returns 0, 1 (fault) or 2 (hang).
 * Used by the GPU fault tests; never set it otherwise. */
int codegen_planted(const kf_variant *v);

/* The comment `kforge gen` prints before the source: the name and the
 * launch-time parameters (those without a macro).  malloc'd. */
char *codegen_launch_comment(const kf_variant *v);

// ---------------------------------------------------------------------------
// Several variants in one translation unit (kforge gen of several variants,
// kforge export).  A variant's source #defines its parameters and the
// templates' own macros, and every variant has the same entry name, so each
// is wrapped: its entry renamed by a macro, the source inside a namespace of
// its own (the templates' types and helpers), and every macro the source
// defined #undef'd after it.  The source itself is unchanged, so each kernel
// compiles to the same code as the variant's own cubin.

/* Appends "#undef NAME" for every macro that text #defines (a line that
 * starts with '#', blanks allowed, then "define NAME"), each name once. */
void codegen_undefs(strbuf *b, const char *text);

/* Appends v's source wrapped as above: `#define <family entry> <entry>`, then
 * prologue (may be NULL: lines placed before the source, such as a
 * KF_ENTRY_LINKAGE), `namespace <ns> {`, the source, `}`, and the #undefs
 * (the entry macro's included).  0, or -1 with a message. */
int codegen_wrapped(strbuf *b, const kf_variant *v, const char *ns, const char *entry, const char *prologue,
                    char *err, size_t errlen);

/* The suffix that names variant i of vs in a multi-variant source: its name
 * with every character outside [A-Za-z0-9_] made '_' when that is unique
 * among vs, "<name>_<i>" when several variants share the name, "v<i>" when
 * it has none. */
void codegen_suffix(const kf_variant *vs, int n, int i, char *buf, size_t len);

/* The source of several variants in one translation unit: a comment that
 * lists the kernels, then for each variant its launch comment and its
 * wrapped source, the kernel named <family entry>_<suffix> (extern "C"), in
 * namespace <family entry>_<suffix>_ns.  One variant: its launch comment and
 * exactly its own source (the kernel keeps the family's entry name), as
 * kforge run compiles it.  malloc'd, or NULL with a message. */
char *codegen_multi_source(const kf_variant *vs, int n, char *err, size_t errlen);

#endif
