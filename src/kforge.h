/*
 * kforge.h -- the types every module shares: what a reduction variant is,
 * what a measurement produces, and the names of every enumerated value.
 *
 * A *variant* is everything that changes the compiled kernel or how it is
 * launched.  A *case* is a variant at one size n.  Variants are plain
 * structs with no pointers, so they can be copied through pipes to worker
 * processes unchanged.
 */
#ifndef KFORGE_H
#define KFORGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_VERSION "0.1.0"

/* Exit codes (documented in README and man page). */
enum {
    KF_EXIT_OK = 0,          /* everything compiled, verified and was timed */
    KF_EXIT_VARIANT = 1,     /* some variant failed; the others still ran */
    KF_EXIT_USAGE = 2,       /* usage or configuration error */
    KF_EXIT_NODEV = 3,       /* no usable GPU, driver or NVRTC */
    KF_EXIT_INTERRUPT = 130  /* SIGINT or SIGTERM */
};

/* ---------------------------------------------------------------------- */
/* Enumerated axes.  Each has a name table in kforge.c; the names are the */
/* JSON spelling.  Keep the enum order and the name table in step.        */

typedef enum { KF_INT32, KF_UINT32, KF_INT64, KF_FLOAT32, KF_FLOAT64, KF_DTYPE_COUNT } kf_dtype;

typedef enum {
    KF_OP_SUM, KF_OP_MIN, KF_OP_MAX, KF_OP_PROD, KF_OP_AND, KF_OP_OR, KF_OP_XOR, KF_OP_COUNT
} kf_op;

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
    KF_PASSES_LAST_BLOCK,   /* partials + __threadfence + ticket; last block folds; deterministic */
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

typedef enum {
    KF_GRID_AUTO,          /* enough blocks for each thread to do one tile: ceil(n / tile) */
    KF_GRID_BLOCKS,        /* a fixed block count (grid-stride loop) */
    KF_GRID_PER_SM,        /* value blocks per SM x SM count */
    KF_GRID_WAVES,         /* value x occupancy-calculator blocks per SM x SM count */
    KF_GRID_KIND_COUNT
} kf_grid_kind;

typedef struct {
    kf_grid_kind kind;
    int64_t value;          /* unused for AUTO */
} kf_grid;

/* ---------------------------------------------------------------------- */
/* A variant: one point of the space.                                     */

#define KF_NAME_MAX 64

typedef struct {
    char name[KF_NAME_MAX];     /* label from the config ("reduce6"), may be "" */
    kf_dtype dtype;
    kf_op op;
    kf_algorithm algorithm;
    int block_size;
    int elements_per_thread;
    kf_unroll unroll;
    int vector_width;           /* 1, 2 or 4 elements per load */
    kf_grid grid;
    kf_passes passes;           /* never AUTO after space_expand */
    kf_layout layout;
    kf_accum accumulator;
    kf_warp_reduce warp_reduce;
    kf_load load;
} kf_variant;

/* Defaults for every axis (the values a config may omit). */
void kf_variant_defaults(kf_variant *v);

/* Benchmark settings ("bench" in a config). */
typedef struct {
    int warmup;                 /* untimed runs before timing */
    int min_reps;               /* at least this many timed repetitions */
    int max_reps;               /* at most this many */
    double max_time_s;          /* time budget per case for timed repetitions */
    double max_noise;           /* stop early once relative stddev <= this (after min_reps) */
    bool flush_l2;              /* overwrite L2 before every repetition */
    uint64_t seed;              /* input data seed */
    int64_t offset;             /* input pointer offset in elements (alignment tests) */
    double timeout_s;           /* watchdog per case; 0 = none */
} kf_bench;

void kf_bench_defaults(kf_bench *b);

/* ---------------------------------------------------------------------- */
/* Measurement results.                                                   */

typedef enum {
    KF_ST_OK,            /* verified and timed */
    KF_ST_WRONG,         /* gave a wrong answer; never ranked */
    KF_ST_COMPILE,       /* NVRTC failed */
    KF_ST_LAUNCH,        /* module load or launch refused (resources, config) */
    KF_ST_FAULT,         /* the kernel faulted; the context was lost */
    KF_ST_TIMEOUT,       /* the watchdog stopped it */
    KF_ST_OOM,           /* not enough device memory for this n */
    KF_ST_COUNT
} kf_status;

typedef struct {
    int reps;
    double median_ms, min_ms, max_ms, mean_ms, stddev_ms;
    double noise;               /* stddev / mean */
    double gbps;                /* n * sizeof(T) / median */
    double pct_peak;            /* gbps / theoretical DRAM bandwidth * 100 */
} kf_stats;

#define KF_MSG_MAX 512

typedef struct {
    kf_variant v;
    int64_t n;
    kf_status status;
    char message[KF_MSG_MAX];   /* error text, compile log excerpt, ... */
    /* verification */
    char gpu_value[48];         /* printed with full precision */
    char ref_value[48];
    double abs_err;             /* |gpu - ref| (floats), 0 for exact matches */
    double tolerance;           /* bound used (0 for exact) */
    bool deterministic;         /* same bits run to run */
    /* launch facts */
    int launches;               /* kernel launches per reduction */
    int64_t blocks;             /* blocks of the first launch */
    int regs;                   /* registers per thread */
    int smem_bytes;             /* static + dynamic shared memory per block */
    int occupancy;              /* resident blocks per SM (occupancy calculator) */
    double compile_ms;          /* 0 when the cubin came from the cache */
    bool cached;
    kf_stats stats;
} kf_result;

/* Facts about the device and software, recorded with every result. */
typedef struct {
    char name[128];
    int cc_major, cc_minor;
    int sms;
    int64_t l2_bytes;
    int64_t mem_bytes;
    int mem_clock_khz;
    int bus_width_bits;
    double peak_gbps;           /* 2 * clock * bus width / 8 */
    int max_threads_per_block;
    int max_smem_per_block;     /* opt-in maximum */
    int max_smem_per_sm;
    int driver_version;         /* e.g. 13000 */
    int nvrtc_major, nvrtc_minor;
} kf_device;

/* ---------------------------------------------------------------------- */
/* Names.  *_name returns a static string; *_parse returns the enum or -1. */

extern const char *const kf_dtype_names[KF_DTYPE_COUNT];
extern const char *const kf_op_names[KF_OP_COUNT];
extern const char *const kf_algorithm_names[KF_ALG_COUNT];
extern const char *const kf_unroll_names[KF_UNROLL_COUNT];
extern const char *const kf_passes_names[KF_PASSES_COUNT];
extern const char *const kf_layout_names[KF_LAYOUT_COUNT];
extern const char *const kf_accum_names[KF_ACC_COUNT];
extern const char *const kf_warp_reduce_names[KF_WARP_COUNT];
extern const char *const kf_load_names[KF_LOAD_COUNT];
extern const char *const kf_status_names[KF_ST_COUNT];

/* Index of s in names[0..count), or -1. */
int kf_lookup(const char *const *names, int count, const char *s);

size_t kf_dtype_size(kf_dtype t);
bool kf_dtype_is_float(kf_dtype t);
bool kf_op_is_bitwise(kf_op op);
/* C/CUDA spelling of the element type ("int", "unsigned int", "long long", "float", "double"). */
const char *kf_dtype_ctype(kf_dtype t);

/* Writes "auto", "2048" or {"blocks_per_sm": 4} style text (JSON) into buf. */
void kf_grid_format(const kf_grid *g, char *buf, size_t len);

/* A one-line human label: "sequential/bs256/ept2/full/v1/grid=2048/multi_kernel". */
void kf_variant_label(const kf_variant *v, char *buf, size_t len);

#endif
