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

#endif
