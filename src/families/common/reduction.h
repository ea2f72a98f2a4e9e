/*
 * reduction.h -- the family interface (family.h) filled in the same way for
 * every reduction-like family: one input of the variant's dtype, one output
 * array, one workspace, exact and realistic data from verify.c, the float
 * bound as the tolerance, and the planted faults' model.  Such a family
 * gives its own few functions in a reduction_ops (the kf_family's ext) and
 * takes the rest from here with REDUCTION_INTERFACE.
 */
#ifndef KF_REDUCTION_H
#define KF_REDUCTION_H

#include "family.h"

/* The buffers' order, as enqueue gets them. */
enum { RED_IN, RED_OUT, RED_WS };

typedef struct {
    int64_t (*input_elems)(const kf_shape *s);   /* elements filled (padding included) */
    int64_t (*outputs)(const kf_shape *s);       /* output elements */
    /* The workspace's first contents (host image of workspace_bytes). */
    void (*workspace_init)(const kf_variant *v, const kf_plan_info *p, void *ws);
    /* Reference outputs of the input (aux: one double per output). */
    void (*reference)(const kf_variant *v, const kf_shape *s, const void *in, void *ref, double *aux);
    /* Compares the outputs: how many are wrong, r filled from the worst. */
    int64_t (*compare)(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, const void *got,
                       const void *ref, const double *aux, bool exact, kf_result *r);
    /* Optional: ref and aux, the reference outputs of an input that differs
     * from `in` at element i alone, made those of `in` by recomputing only
     * the outputs element i feeds (a planted fault's model changes one
     * element; without it the whole reference is recomputed). */
    void (*reference_at)(const kf_variant *v, const kf_shape *s, const void *in, int64_t i, void *ref, double *aux);
    /* Optional: the outputs' segments of the input: *segs of *len elements,
     * *stride apart (without it: one output, all elements). */
    void (*segments)(const kf_shape *s, int64_t *segs, int64_t *len, int64_t *stride);
} reduction_ops;

static inline const reduction_ops *reduction_of(const kf_variant *v)
{
    return (const reduction_ops *)family_of(v)->ext;
}

void reduction_buffers(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, kf_buffer_set *set);
void reduction_fill(const kf_variant *v, const kf_shape *s, int buf, uint64_t seed, bool exact, void *host,
                    int64_t elems);
void reduction_scratch_init(const kf_variant *v, const kf_plan_info *p, int buf, void *host);
void reduction_reference(const kf_variant *v, const kf_shape *s, const void *const *in, void *const *ref,
                         double *const *aux);
int64_t reduction_compare(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int buf, const void *got,
                          const void *ref, const double *aux, bool exact, kf_result *r);
bool reduction_accuracy(const kf_variant *v);
int64_t reduction_plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                              const kf_plant *spec, const void *const *in, void *const *ref, double *const *aux,
                              bool exact, kf_result *r);

/* The kf_family members a reduction-like family takes from here. */
#define REDUCTION_INTERFACE                                                                                  \
    .buffers = reduction_buffers, .fill = reduction_fill, .scratch_init = reduction_scratch_init,            \
    .reference = reduction_reference, .compare = reduction_compare, .accuracy = reduction_accuracy,          \
    .plant_check = reduction_plant_check

#endif
