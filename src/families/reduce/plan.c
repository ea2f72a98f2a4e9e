/*
 * plan.c -- see plan.h.
 */
#include "plan.h"

#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t ilog2_ceil(int64_t x)
{
    int64_t r = 0;
    while (((int64_t)1 << r) < x)
        r++;
    return r;
}

int64_t plan_tile(const reduce_v *v)
{
    return (int64_t)v->block_size * v->elements_per_thread * v->vector_width;
}

int64_t plan_blocks(const reduce_v *v, int64_t n, int sms, int occupancy)
{
    int64_t need = ceil_div(n < 1 ? 1 : n, plan_tile(v));
    int64_t want;
    switch (v->grid.kind) {
    case KF_GRID_BLOCKS: want = v->grid.value; break;
    case KF_GRID_PER_SM: want = v->grid.value * (sms > 0 ? sms : 1); break;
    case KF_GRID_WAVES: want = v->grid.value * (occupancy > 0 ? occupancy : 1) * (sms > 0 ? sms : 1); break;
    default: want = need; break;
    }
    if (want > need)
        want = need;
    if (want < 1)
        want = 1;
    if (want > 2147483647)
        want = 2147483647;
    return want;
}

/* Operations along the longest path through one pass: the serial loads of
 * one thread plus the block tree. */
static int64_t pass_depth(const reduce_v *v, int64_t n, int64_t blocks)
{
    int64_t vecs = ceil_div(n, v->vector_width);
    int64_t per_round = blocks * v->block_size * v->elements_per_thread;
    int64_t serial = ceil_div(vecs, per_round) * v->elements_per_thread * v->vector_width;
    if (v->vector_width > 1)
        serial += 1;                               /* prefix / tail element */
    int64_t tree = ilog2_ceil(v->block_size);
    if (v->algorithm == KF_ALG_ATOMIC_SHARED)
        tree = v->block_size;                      /* shared atomics in any order */
    if (v->algorithm == KF_ALG_ATOMIC_GLOBAL)
        tree = 0;
    return serial + tree;
}

int plan_make(const reduce_v *v, int64_t n, int sms, int occupancy, kf_plan *p)
{
    memset(p, 0, sizeof *p);
    if (n < 1)
        return -1;
    bool float_assoc = kf_dtype_is_float(v->dtype) && (v->op == KF_OP_SUM || v->op == KF_OP_PROD);
    /* Atomic combines (between blocks, or inside a block for atomic_shared)
     * happen in arrival order: float sums and products then vary in the
     * last bits from run to run. */
    bool atomic_order = v->passes == KF_PASSES_ATOMIC || v->algorithm == KF_ALG_ATOMIC_SHARED ||
                        v->algorithm == KF_ALG_ATOMIC_GLOBAL;
    p->deterministic = !(float_assoc && atomic_order);

    if (v->passes == KF_PASSES_MULTI_KERNEL) {
        int64_t cur = n;
        for (;;) {
            int64_t b = plan_blocks(v, cur, sms, occupancy);
            if (p->npasses == KF_MAX_PASSES)
                return -1;
            p->n_in[p->npasses] = cur;
            p->blocks[p->npasses] = b;
            p->npasses++;
            p->depth += pass_depth(v, cur, b);
            if (b == 1)
                break;
            if (b > p->partial_elems)
                p->partial_elems = b;
            cur = b;
        }
        return 0;
    }

    int64_t b = plan_blocks(v, n, sms, occupancy);
    p->npasses = 1;
    p->n_in[0] = n;
    p->blocks[0] = b;
    p->depth = pass_depth(v, n, b);
    if (v->passes == KF_PASSES_ATOMIC) {
        p->scratch_elems = 1;
        /* every block's value (every thread's, for atomic_global) lands on one slot */
        p->depth += v->algorithm == KF_ALG_ATOMIC_GLOBAL ? b * v->block_size : b;
    } else {
        p->scratch_elems = b;
        p->depth += ceil_div(b, v->block_size) + ilog2_ceil(v->block_size);
    }
    return 0;
}
