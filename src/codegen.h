/*
 * codegen.h -- a variant to CUDA source text, from the templates in
 * kernel_src/ (built into the binary).
 *
 * The source depends only on the compile-time parameters of the variant:
 * everything but the name and the block count of a fixed grid (whether the
 * grid is "auto" -- one tile per block, no grid-stride loop -- is compiled
 * in), so variants that differ only in a fixed grid's size share one cubin.  It opens with a comment naming every such parameter.
 * Entry points are extern "C": KF_ENTRY (the reduction kernel) and, for
 * atomic and last_block passes, nothing else: those kernels reset their own
 * counters.
 */
#ifndef KF_CODEGEN_H
#define KF_CODEGEN_H

#include "kforge.h"

#define KF_ENTRY "kf_reduce"

/* Returns the malloc'd source, or NULL with a message.  v must have passed
 * space_check_variant. */
char *codegen_source(const kf_variant *v, char *err, size_t errlen);

/* Test hook: KFORGE_PLANT="fault@NAME,hang@NAME" makes the variant named NAME
 * fault (illegal address) or never finish.  Returns 0, 1 (fault) or 2 (hang).
 * Used by the GPU fault tests; never set it otherwise. */
int codegen_planted(const kf_variant *v);

/* The comment `kforge gen` prints before the source: the launch-time
 * parameters (name, grid) that the source itself does not depend on.
 * malloc'd. */
char *codegen_launch_comment(const kf_variant *v);

#endif
