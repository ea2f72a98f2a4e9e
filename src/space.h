/*
 * space.h -- expanding specs into variants and cases, and the rules that
 * say which combinations can run.
 *
 * A spec whose keys all hold single values describes one variant: if that
 * variant cannot run, expansion fails with the reason.  A spec with lists
 * describes the cartesian product: combinations that cannot run are
 * skipped and listed (space.skipped), and expansion fails only if nothing
 * is left.  Constraints filter combinations the same way.
 */
#ifndef KF_SPACE_H
#define KF_SPACE_H

#include "config.h"
#include "kforge.h"

typedef struct {
    int variant;        /* index into space.variants */
    int64_t n;
} kf_case;

typedef struct {
    kf_variant *variants;   /* distinct variants, in config order */
    int nvariants;
    kf_case *cases;         /* every (variant, n), ordered by n, then variant (config order) */
    int ncases;
    char **skipped;         /* one line per skipped combination: label + reason */
    int nskipped;
} kf_space;

/* Checks whether v can run.  dev may be NULL (limits of sm_90 are assumed:
 * 1024 threads, 48 KiB static shared memory).  Returns 0 if it can, else -1
 * with the reason in why ("warp_intrinsic needs a 32-bit integer dtype,
 * got float32").  v->passes must not be AUTO (see space_resolve). */
int space_check_variant(const kf_variant *v, const kf_device *dev, char *why, size_t whylen);

/* Turns AUTO passes into the concrete choice (atomic for atomic_*, else
 * multi_kernel). */
void space_resolve(kf_variant *v);

int space_expand(const kf_config *cfg, const kf_device *dev, kf_space *out,
                 char *err, size_t errlen);

void space_free(kf_space *s);

#endif
