/*
 * outcheck.h -- a run's outputs checked on the GPU against the reference
 * outputs kept there (kernel_src/outcheck.cuh), so that a right answer
 * costs no copy to the host and no pass over it there (issues 21 and 25).
 *
 * It only ever answers "the same bits" or "within atol + rtol |ref|" (the
 * rule a family states with its tolerance hook); whatever else it sees goes
 * to the family's compare on the host, which counts and names what is
 * wrong.  Every call runs on the given stream and waits for its answer.
 */
#ifndef KF_OUTCHECK_H
#define KF_OUTCHECK_H

#include "gpu.h"

typedef struct {
    kf_cu *cu;
    CUstream stream;
    CUmodule mod;
    CUfunction differ;
    CUfunction within[KF_DTYPE_COUNT];  /* the float dtypes; NULL elsewhere */
    CUdeviceptr res;                    /* 2 x u64: the kernels' answers */
    int blocks;                         /* grid of a check: 8 per SM */
} kf_outcheck;

/* The module compiled from outcheck_source() loaded on the current
 * context; a CUresult (o->mod is 0 on failure). */
CUresult outcheck_open(kf_outcheck *o, kf_cu *cu, CUstream stream, int sms, const void *cubin);
void outcheck_close(kf_outcheck *o);

/* The kernels' source (embedded from kernel_src/outcheck.cuh). */
const char *outcheck_source(void);

/* *differ: whether the bytes at a and b differ. */
CUresult outcheck_differ(kf_outcheck *o, CUdeviceptr a, CUdeviceptr b, size_t bytes, bool *differ);

/* Whether outcheck_within can check n elements of dtype t. */
bool outcheck_can_within(const kf_outcheck *o, kf_dtype t, int64_t n);

/* The n elements of dtype t at got against those at ref: *bad the count
 * outside atol + rtol |ref| (a NaN only where ref has one), *worst_at the
 * element of the largest error (the first of them). */
CUresult outcheck_within(kf_outcheck *o, kf_dtype t, CUdeviceptr got, CUdeviceptr ref, int64_t n, double rtol,
                         double atol, int64_t *bad, int64_t *worst_at);

#endif
