/*
 * space.h -- expanding specs into variants and cases.  The rules that say
 * which combinations can run belong to each family (family.h: check,
 * check_shape); this module applies them, and the constraints.
 *
 * A spec whose keys all hold single values describes one variant: if that
 * variant cannot run, expansion fails with the reason.  A spec with lists
 * describes the cartesian product: combinations that cannot run are
 * skipped and listed (space.skipped), and expansion fails only if nothing
 * is left.  Constraints filter combinations the same way.  Duplicates
 * (the same variant or case twice) are dropped in O(1) each (hashing).
 */
#ifndef KF_SPACE_H
#define KF_SPACE_H

#include "config.h"
#include "kforge.h"

typedef struct {
    int variant;        /* index into space.variants */
    kf_shape shape;
    /* kforge tune (--abandon-above): the case stops timing once its first
     * repetitions' median is above abandon_ms (0: no limit yet), or above
     * abandon_k x the fastest verified median at its shape measured so far
     * in the same run_session_measure (0: no factor) */
    double abandon_ms, abandon_k;
} kf_case;

typedef struct {
    kf_variant *variants;   /* distinct variants, in config order */
    int nvariants;
    kf_case *cases;         /* every (variant, shape), ordered by shape, then variant (config order) */
    int ncases;
    char **skipped;         /* one line per skipped combination: label + reason (nlisted of them) */
    int nskipped;           /* the skipped combinations */
    int nlisted;            /* lines in skipped: nskipped, or at most 1 (space_expand_counting) */
    char *skip_text;        /* the block the skipped lines point into */
    long long npruned;      /* combinations the constraints left out as a space of more than 10 million
                             * was enumerated (space.c), counted and not listed */
} kf_space;

/* Checks whether v can run (the family's rules, with v resolved first).
 * dev may be NULL (limits of sm_90 are assumed). */
int space_check_variant(const kf_variant *v, const kf_device *dev, char *why, size_t whylen);

/* Resolves the family's "auto" choices (passes auto -> ...). */
void space_resolve(kf_variant *v);

int space_expand(const kf_config *cfg, const kf_device *dev, kf_space *out,
                 char *err, size_t errlen);

/* space_expand, with the first skipped combination's line only (nlisted
 * at most 1; nskipped still counts them all): for tune, which says how many
 * were skipped and lists none. */
int space_expand_counting(const kf_config *cfg, const kf_device *dev, kf_space *out, char *err, size_t errlen);

/* Whether space_expand with dev gives the space it gives without a device:
 * the families' checks read a device for its threads a block only (1024
 * without one; family.h), so a device of 1024 (every CUDA GPU) changes
 * nothing and a space expanded before the devices opened can be kept (a
 * million-candidate space takes seconds to expand). */
bool space_same_for_device(const kf_device *dev);

/* Orders shapes: by elements (the family's input size), then dimension by
 * dimension. */
int space_cmp_shape(const kf_variant *v, const kf_shape *a, const kf_shape *b);

void space_free(kf_space *s);

#endif
