/*
 * data.h -- a case's data on the host: the contents of every input buffer
 * (the family's fill) and the reference contents of every output buffer
 * (the family's reference), for one key: the family, its key axes (what is
 * computed), the shape, the seed, the buffers' lengths, and whether it is
 * the exact data (pass or fail) or the realistic data (accuracy).  The GPU
 * worker and the fake GPU keep data by key and make it once.
 */
#ifndef KF_DATA_H
#define KF_DATA_H

#include "family.h"

typedef struct {
    int family;
    int64_t keyp[KF_MAX_PARAMS];    /* the variant's key axes (others 0) */
    kf_shape shape;
    uint64_t seed;
    bool exact;
    int nbuf;
    int64_t elems[KF_MAX_BUFFERS];  /* every buffer's length (scratch: 0) */
} data_key;

typedef struct {
    kf_buffer_set set;              /* the buffers (scratch lengths 0) */
    void *host[KF_MAX_BUFFERS];     /* in and inout: the contents */
    void *ref[KF_MAX_BUFFERS];      /* out and inout: the reference */
    double *aux[KF_MAX_BUFFERS];    /* out and inout: one per element, for compare */
    int pin;                        /* 0, or host[] points into the shared region (datashare.h) */
} data_set;

void data_key_of(data_key *k, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact);
bool data_key_eq(const data_key *a, const data_key *b);
/* A hash of the key (for messages and traces). */
uint64_t data_key_hash(const data_key *k);

/* Fills every input and computes the reference: 0, or -1 when host memory
 * ran out (d left empty). */
int data_make(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact);
/* Fills every input, without the reference (ref and aux stay NULL): 0, or
 * -1 when host memory ran out (d left empty). */
int data_make_inputs(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact);
/* Frees the inputs' host copies (the references stay); shared ones
 * (datashare.h) are unpinned. */
void data_drop_inputs(data_set *d);
void data_free(data_set *d);
/* The module constants of v at s (family.h: kf_family.constants), each
 * filled on the host from seed: set (n 0: none) and host[i], malloc'd
 * (data_constants_free).  0, or -1 when host memory ran out (nothing
 * left allocated). */
int data_constants(const kf_variant *v, const kf_shape *s, uint64_t seed, kf_constant_set *set,
                   void *host[KF_MAX_CONSTANTS]);
void data_constants_free(kf_constant_set *set, void *host[KF_MAX_CONSTANTS]);

/* Bytes of buffer i. */
static inline size_t data_bytes(const kf_buffer *b) { return (size_t)b->elems * b->elem_bytes; }

#endif
