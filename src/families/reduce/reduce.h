/*
 * reduce.h -- the full-reduction family's own types: its parameters (in
 * table order: reduce.c's table, the config keys, the results fields), the
 * enumerations of its axes, and reduce_v, a variant's parameters decoded
 * into a struct for the rules, the planner and the code generator.
 */
#ifndef KF_REDUCE_H
#define KF_REDUCE_H

#include "family.h"
#include "kforge.h"

/* Parameter indices: kf_variant.p[RP_...]. */
typedef enum {
    RP_DTYPE, RP_OP, RP_ACC_DTYPE, RP_ALGORITHM, RP_BLOCK_SIZE, RP_ELEMENTS_PER_THREAD, RP_UNROLL, RP_VECTOR_WIDTH,
    RP_GRID, RP_PASSES, RP_LAYOUT, RP_ACCUMULATOR, RP_WARP_REDUCE, RP_LOAD, RP_COUNT
} reduce_param;

typedef enum {
    KF_ALG_ATOMIC_GLOBAL,        /* every thread atomically combines into the result */
    KF_ALG_ATOMIC_SHARED,        /* shared-memory atomic per block, then one global atomic */
    KF_ALG_INTERLEAVED_DIVERGENT,/* Harris reduce0: tid % (2s) == 0 */
    KF_ALG_INTERLEAVED_STRIDED,  /* Harris reduce1: index = 2*s*tid */
    KF_ALG_SEQUENTIAL,           /* Harris reduce2..6: s = bs/2 .. 1, tid < s */
    KF_ALG_SHUFFLE,              /* warp shuffles, one shared slot per warp */
    KF_ALG_WARP_INTRINSIC,       /* __reduce_*_sync per warp (32-bit integers) */
    KF_ALG_COUNT
} kf_algorithm;

typedef enum { KF_UNROLL_NONE, KF_UNROLL_LAST_WARP, KF_UNROLL_FULL, KF_UNROLL_COUNT } kf_unroll;

typedef enum {
    KF_PASSES_AUTO,         /* atomic for atomic_* algorithms, multi_kernel otherwise */
    KF_PASSES_MULTI_KERNEL, /* the same kernel launched on the partials until one is left */
    KF_PASSES_ATOMIC,       /* blocks combine atomically; one launch; order not fixed */
    KF_PASSES_LAST_BLOCK,   /* partials + ticket; last block folds; deterministic */
    KF_PASSES_COUNT
} kf_passes;

typedef enum {
    KF_LAYOUT_BLOCK,  /* a block's elements are contiguous (Harris: i, i + blockDim) */
    KF_LAYOUT_GRID,   /* a thread's elements are one grid-width apart (seed 001 "chunks") */
    KF_LAYOUT_COUNT
} kf_layout;

typedef enum { KF_ACC_REGISTER, KF_ACC_SHARED, KF_ACC_COUNT } kf_accum;

/* How the last warp of the sequential tree is reduced. */
typedef enum { KF_WARP_SHARED, KF_WARP_SHUFFLE, KF_WARP_INTRINSIC, KF_WARP_COUNT } kf_warp_reduce;

/* Global load flavour: plain ld.global, read-only path (__ldg), streaming
 * (__ldcs), or read-only with no L1 allocation and a 256-byte L2 prefetch
 * hint (ld.global.nc.L1::no_allocate.L2::256B, sm_80+). */
typedef enum { KF_LOAD_PLAIN, KF_LOAD_LDG, KF_LOAD_STREAM, KF_LOAD_LDG_PREFETCH, KF_LOAD_COUNT } kf_load;

extern const char *const kf_algorithm_names[KF_ALG_COUNT];
extern const char *const kf_unroll_names[KF_UNROLL_COUNT];
extern const char *const kf_passes_names[KF_PASSES_COUNT];
extern const char *const kf_layout_names[KF_LAYOUT_COUNT];
extern const char *const kf_accum_names[KF_ACC_COUNT];
extern const char *const kf_warp_reduce_names[KF_WARP_COUNT];
extern const char *const kf_load_names[KF_LOAD_COUNT];

/* A variant's parameters, decoded. */
typedef struct {
    kf_dtype dtype;
    kf_op op;
    kf_acc_type acc_dtype;      /* resolved: never auto for bfloat16 and float16 */
    kf_algorithm algorithm;
    int block_size;
    int elements_per_thread;
    kf_unroll unroll;
    int vector_width;           /* 1, 2, 4 (or 8 for 2-byte dtypes) elements per load */
    kf_grid grid;
    kf_passes passes;           /* never AUTO after resolve */
    kf_layout layout;
    kf_accum accumulator;
    kf_warp_reduce warp_reduce;
    kf_load load;
} reduce_v;

void reduce_decode(const kf_variant *v, reduce_v *r);
/* The parameter table's defaults, and back to a variant (tests and tools
 * build variants field by field this way). */
void reduce_defaults(reduce_v *r);
void reduce_encode(const reduce_v *r, const char *name, kf_variant *v);

/* family.h: export_source (export.c). */
char *reduce_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen);

extern const kf_family kf_family_reduce;

#endif
