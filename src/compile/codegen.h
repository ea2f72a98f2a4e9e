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

/* Asks NVRTC to instantiate and name the kernel entry as written ("k",
 * "ns::k", "transpose<float>"): a line at the end of the source that rtc
 * reads (RTC_NAME_DIRECTIVE); the worker finds the kernel by the lowered
 * name NVRTC gives. */
void codegen_name_expression(strbuf *b, const char *entry);
/* #define KF_T (the accumulator's type), KF_ELEM_BYTES, KF_IS_FLOAT,
 * KF_IS_SIGNED, KF_INT32_LIKE (of KF_T), KF_IN_T and KF_IN_BFLOAT16 or
 * KF_IN_FLOAT16 for a 2-byte float input, then for every parameter with a macro its value names
 * (#define KF_ALG_SHUFFLE 5) and its value (#define KF_ALG 5 / * shuffle * /). */
void codegen_defines(strbuf *b, const kf_variant *v);

/* An embedded template (kernel_src/NAME.cuh, by base name), or NULL. */
const char *codegen_template(const char *name);
/* A template read from a file at run time (a family made at run time, or
 * one whose kernels live outside the binary): malloc'd, or NULL and why. */
char *codegen_template_file(const char *path, char *err, size_t errlen);

/* Test hook: KFORGE_PLANT="KIND@WHICH,..." (any length) compiles a planted fault into the
 * variants WHICH names: a variant's name, `*` (every variant), or
 * PARAM=VALUE (every variant whose parameter has that value, as the config
 * writes it: block_size=256, algorithm=shuffle).  KIND:
 *   fault         an illegal address             hang   a kernel that never ends
 *   drop_first    element 0 is not folded        drop_last  element n-1 is not
 *   drop_tail     the first element of the vector tail is not
 *   drop_block    the first element a block other than the first folds is not
 *   shift         one element is read from the next one (element i+1 for i)
 *   double_block  one block's partial is combined twice
 *   skip_col      reduce_rows: the last column of one row is not folded
 *   row_shift     reduce_rows: row r's result is written to row r + 1
 * The coverage faults (drop_first ... row_shift) strike where the family's
 * plant() says, which the engine tells the kernel before every launch; the
 * fake GPU applies the same fault to its results.  Never set it otherwise:
 * planted sources differ, so they have their own cubins. */
typedef enum {
    KF_PLANT_NONE, KF_PLANT_FAULT, KF_PLANT_HANG,
    KF_PLANT_DROP_FIRST, KF_PLANT_DROP_LAST, KF_PLANT_DROP_TAIL, KF_PLANT_DROP_BLOCK, KF_PLANT_SHIFT,
    KF_PLANT_DOUBLE_BLOCK, KF_PLANT_SKIP_COL, KF_PLANT_ROW_SHIFT,
    KF_PLANT_COUNT
} kf_plant_kind;
extern const char *const kf_plant_names[KF_PLANT_COUNT];

/* The planted kind for v (KF_PLANT_NONE when KFORGE_PLANT names none). */
int codegen_planted(const kf_variant *v);

/* For a planted v: fault and hang: "#define KF_PLANT 1" (2); a coverage
 * fault: "#define KF_PLANT KF_PLANT_COVERAGE", the same source for every
 * coverage fault (the engine aims it at run time: kernel_src/common.cuh).
 * Nothing otherwise. */
void codegen_plant_defines(strbuf *b, const kf_variant *v);

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
 * (the entry macro's included).  entry NULL: no kernel is renamed (C++
 * kernels, whose names the namespace keeps apart; kforge export of a
 * custom kernel).  0, or -1 with a message. */
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
