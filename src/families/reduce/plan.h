/*
 * plan.h -- how one reduction of n elements is launched: the grid of each
 * pass, the scratch memory, the summation depth (for the float error bound)
 * and whether the result is run-to-run deterministic.  Pure arithmetic: no
 * GPU needed.
 */
#ifndef KF_PLAN_H
#define KF_PLAN_H

#include "reduce.h"

#define KF_MAX_PASSES 16

typedef struct {
    int npasses;
    int64_t n_in[KF_MAX_PASSES];    /* elements read by each pass */
    int64_t blocks[KF_MAX_PASSES];  /* grid of each pass */
    int64_t partial_elems;          /* multi_kernel: size of each ping-pong partials buffer */
    int64_t scratch_elems;          /* atomic: 1; last_block: blocks of the single pass */
    int64_t depth;                  /* most operations any input goes through */
    bool deterministic;             /* same bits every run */
} kf_plan;

/* Elements one block covers per grid-stride round. */
int64_t plan_tile(const reduce_v *v);

/* Blocks for one pass over n elements: grid auto = ceil(n / tile); a fixed
 * count (blocks, blocks_per_sm x sms, waves x occupancy x sms) is capped at
 * ceil(n / tile), since more blocks would have nothing to do. */
int64_t plan_blocks(const reduce_v *v, int64_t n, int sms, int occupancy);

/* Fills p.  v->passes must be resolved.  Returns 0, or -1 if n < 1. */
int plan_make(const reduce_v *v, int64_t n, int sms, int occupancy, kf_plan *p);

#endif
