/*
 * kforge.h -- the types every module shares: what a variant is, what a
 * measurement produces, element types and operators.
 *
 * A *variant* is everything that changes the compiled kernel or how it is
 * launched: a family (family.h) and one value per parameter of its table
 * (param.h).  A *case* is a variant at one shape.  Variants are plain
 * structs with no pointers, so they can be copied through pipes to worker
 * processes unchanged.
 */
#ifndef KFORGE_H
#define KFORGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KF_VERSION "0.1.0"

/* Exit codes (documented in README and man page). */
enum {
    KF_EXIT_OK = 0,          /* everything compiled, verified and was timed */
    KF_EXIT_VARIANT = 1,     /* some variant failed; the others still ran */
    KF_EXIT_USAGE = 2,       /* usage or configuration error */
    KF_EXIT_NODEV = 3,       /* no usable GPU, driver or NVRTC */
    KF_EXIT_IO = 4,          /* a result, the database or the output could not be written */
    KF_EXIT_INTERRUPT = 130  /* SIGINT or SIGTERM */
};

/* ---------------------------------------------------------------------- */
/* Element types and operators: shared by every reduction-like family.    */
/* Each has a name table in kforge.c; the names are the JSON spelling.    */

/* bfloat16 and float16 are input types (2-byte elements) that reductions
 * accumulate in a wider type (the families' acc_dtype axis). */
typedef enum {
    KF_INT32, KF_UINT32, KF_INT64, KF_FLOAT32, KF_FLOAT64, KF_BFLOAT16, KF_FLOAT16,
    KF_INT8, KF_UINT8,          /* custom kernels' buffers, constants and scalars only */
    KF_DTYPE_COUNT
} kf_dtype;
/* The element types of the reduction families (their dtype axis): those
 * before int8. */
#define KF_REDUCE_DTYPES ((int)KF_INT8)

/* What a reduction accumulates in, and so the type of its output (the
 * acc_dtype axis): auto (float32 for bfloat16 and float16, else the input
 * type), the input type, float32, float64. */
typedef enum { KF_ACCT_AUTO, KF_ACCT_INPUT, KF_ACCT_FLOAT32, KF_ACCT_FLOAT64, KF_ACCT_COUNT } kf_acc_type;

typedef enum {
    KF_OP_SUM, KF_OP_MIN, KF_OP_MAX, KF_OP_PROD, KF_OP_AND, KF_OP_OR, KF_OP_XOR, KF_OP_COUNT
} kf_op;

/* ---------------------------------------------------------------------- */
/* A variant: one point of a family's space.  p[] holds one value per    */
/* parameter of the family's table (param.h), in table order.             */

#define KF_NAME_MAX 64
#define KF_MAX_PARAMS 24
#define KF_MAX_DIMS 3

typedef struct {
    char name[KF_NAME_MAX];     /* label from the config ("reduce6"), may be "" */
    int family;                 /* index into kf_families[] (family.h) */
    int64_t p[KF_MAX_PARAMS];   /* unused entries are 0 */
} kf_variant;

/* A problem size: the family's size dimensions in table order
 * (reduce: n; reduce_rows: rows, cols, row_stride); unused entries 0. */
typedef struct {
    int64_t d[KF_MAX_DIMS];
} kf_shape;

/* Benchmark settings ("bench" in a config). */
typedef struct {
    int warmup;                 /* untimed runs before timing */
    int min_reps;               /* at least this many timed repetitions */
    int max_reps;               /* at most this many */
    double max_time_s;          /* time budget per case for timed repetitions */
    double max_noise;           /* stop early once relative stddev <= this (after min_reps) */
    double max_median_ci;       /* or once the median's 95% confidence interval is within
                                 * +- this fraction of it (stats_median_ci); 0: not used */
    bool flush_l2;              /* overwrite L2 before every repetition */
    uint64_t seed;              /* input data seed */
    int64_t offset;             /* input pointer offset in elements (alignment tests) */
    double timeout_s;           /* watchdog per case; 0 = none */
    bool energy;                /* also measure the energy of one run (NVML; a window of >= 1 s) */
    /* kforge tune, per case (not a config setting, not recorded): stop
     * timing once the first repetitions' median is above this (ms); 0 never */
    double abandon_ms;
    /* kforge tune, per case (not a config setting, not recorded): the best
     * median so far at this size (ms; 0: none).  Timing also stops once the
     * median's 95% confidence interval (stats_median_interval) lies wholly
     * above KF_RACE_MARGIN x this: it cannot win */
    double race_ms;
    /* kforge tune with --abandon-above (not a config setting, not
     * recorded): a race.  A candidate is either abandoned or measured to
     * its full budget (max_time_s, max_reps): the noise rules do not stop
     * it early, since a short lucky streak would set a best that is too
     * low, and every candidate after it would be raced against that */
    bool race;
    /* kforge tune (not a config setting, not recorded): no run on the
     * realistic data (acc_err, acc_bound are information; every case's
     * answer is still checked on the exact data); --accuracy keeps it */
    bool no_accuracy;
} kf_bench;

/* A candidate is abandoned once its median is, with 95% confidence, more
 * than 2% above the best so far (kf_bench.race_ms). */
#define KF_RACE_MARGIN 1.02

void kf_bench_defaults(kf_bench *b);

/* The CUDA version the driver supports, as every output writes it: 13000
 * -> "13.0", 12080 -> "12.8" (info, results lines, the tuning database). */
void kf_driver_text(int driver_version, char *buf, size_t len);

/* FP32 lanes per SM of compute capability major.minor (64: sm_60, sm_7x,
 * sm_80; 128: sm_61/62, sm_86/87/89, sm_90, sm_10x, sm_11x, sm_12x), 0
 * where kforge does not know the architecture. */
int kf_fp32_lanes(int cc_major, int cc_minor);
/* The FP32 peak in GFLOP/s: SMs x SM clock x FP32 lanes x 2 (a fused
 * multiply-add is two operations), at the maximum clock, without tensor
 * cores; 0 where the lanes are not known. */
double kf_peak_fp32_gflops(int cc_major, int cc_minor, int sms, int sm_clock_khz);

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
    KF_ST_ABANDONED,     /* tune: its first timed repetitions were slower than k x the best so far */
    KF_ST_SKIPPED,       /* a launch beyond the device's limits (threads, dimensions, shared memory): not run */
    KF_ST_COUNT
} kf_status;

typedef struct {
    int reps;
    double median_ms, min_ms, max_ms, mean_ms, stddev_ms;
    double noise;               /* stddev / mean */
    double gbps;                /* n * sizeof(T) / median */
    double pct_peak;            /* gbps / theoretical DRAM bandwidth * 100 */
    /* a family that counts its floating-point operations (kf_family.flops):
     * flops / median, and that over the device's FP32 peak * 100; 0 where
     * the family counts none or the device's peak is not known */
    double gflops;
    double pct_peak_flops;
} kf_stats;

#define KF_MSG_MAX 512

typedef struct {
    kf_variant v;
    kf_shape shape;
    kf_bench bench;             /* the settings it was measured with */
    int device;                 /* GPU index it ran on (-1: none, e.g. compile only) */
    char device_name[128];      /* the GPU's name and UUID ("" when not known) */
    char device_uuid[48];
    kf_status status;
    char message[KF_MSG_MAX];   /* error text, compile log excerpt, ... */
    /* verification */
    char gpu_value[48];         /* printed with full precision */
    char ref_value[48];
    double abs_err;             /* |gpu - ref| (floats), 0 for exact matches */
    double tolerance;           /* bound used (0 for exact) */
    char worst_at[48];          /* where the worst output is, as compare says it: "y[3][17]" (not recorded) */
    bool deterministic;         /* same bits run to run */
    /* the accuracy run on the realistic data (float sum and prod): the worst
     * output's |error| and the rounding bound there (acc_bound 0: no run) */
    double acc_err, acc_bound;
    /* acc_err relative to the size of what was summed: sum |x_i| for sums,
     * |reference| for products (the normwise relative error; for data of one
     * sign, the plain relative error of the result).  Set with acc_bound. */
    double acc_rel;
    /* what compare measured abs_err against for acc_rel (0: not known) */
    double err_scale;
    /* test hook (KFORGE_PLANT): the planted fault and what it does here:
     * "changes the answer", "cannot change the answer" or "no place: why" */
    char planted[16];
    char planted_effect[96];
    /* launch facts */
    int launches;               /* kernel launches per reduction */
    int64_t blocks;             /* blocks of the first launch */
    int regs;                   /* registers per thread */
    int smem_bytes;             /* static + dynamic shared memory per block */
    int occupancy;              /* resident blocks per SM (occupancy calculator) */
    double compile_ms;          /* 0 when the cubin came from the cache */
    bool cached;
    /* the GPU worker's wall time for the case, in three parts (Kernel
     * Tuner's verification_time and benchmark_time): loading the module and
     * preparing input, output and workspace (the input only when the shape,
     * dtype, op or seed changed); the two checked runs; warm-up, timed
     * repetitions, the last check and the energy window */
    double setup_ms, verify_ms, bench_ms;
    kf_stats stats;
    /* NVML around the case (exec/nvml.h).  nvml is false when NVML was not
     * available (nvml_note says why); a figure NVML did not give is 0. */
    bool nvml;
    char nvml_note[160];        /* "NVML not available: ...", why no energy, or "" */
    int sm_mhz_min, sm_mhz_max; /* SM clock over the timed repetitions (and energy runs) */
    int sm_mhz_limit;           /* the SM clock's maximum (boost) */
    int mem_mhz;
    int temp_c;                 /* the highest GPU temperature read */
    double power_w;             /* board power: energy / window, else NVML's 1 s average */
    bool throttled;             /* a clock-limit reason other than idle or applications clocks */
    char throttle_reasons[96];  /* "none", "sw power cap, hw slowdown", ... ("" if not read) */
    double energy_j;            /* of one run of the reduction (bench.energy); 0 if not measured */
    int energy_runs;            /* back-to-back runs in the energy window */
    double energy_window_s;     /* that window's length */
    /* the family's source_hash when it was measured (family.h): "" for the
     * built-in families, and in lines of a kforge before it was recorded */
    char source_hash[33];
} kf_result;

/* Facts about the device and software, recorded with every result. */
typedef struct {
    char name[128];
    char uuid[48];              /* "GPU-xxxxxxxx-..." or "" */
    int index;                  /* ordinal */
    int cc_major, cc_minor;
    int sms;
    int64_t l2_bytes;
    int64_t mem_bytes;
    int mem_clock_khz;
    int bus_width_bits;
    double peak_gbps;           /* 2 * clock * bus width / 8 */
    int sm_clock_khz;           /* the SM clock's maximum (CU_DEVICE_ATTRIBUTE_CLOCK_RATE) */
    double peak_gflops;         /* FP32 (kf_peak_fp32_gflops); 0: not known for this architecture */
    int max_threads_per_block;
    int max_smem_per_block;     /* opt-in maximum */
    int max_smem_per_sm;
    int driver_version;         /* e.g. 13000 */
    int nvrtc_major, nvrtc_minor;
} kf_device;

/* ---------------------------------------------------------------------- */
/* Names.  *_name returns a static string; *_parse returns the enum or -1. */

extern const char *const kf_dtype_names[];
extern const char *const kf_op_names[];
extern const char *const kf_acc_type_names[];
extern const char *const kf_status_names[];

/* Index of s in names[0..count), or -1. */
int kf_lookup(const char *const *names, int count, const char *s);

size_t kf_dtype_size(kf_dtype t);
/* float32, float64, bfloat16, float16 */
bool kf_dtype_is_float(kf_dtype t);
/* bfloat16, float16: the 2-byte floats */
bool kf_dtype_is_half(kf_dtype t);
bool kf_op_is_bitwise(kf_op op);
/* C/CUDA spelling of the element type ("int", "unsigned int", "long long",
 * "float", "double", "__nv_bfloat16" (cuda_bf16.h), "__half" (cuda_fp16.h)). */
const char *kf_dtype_ctype(kf_dtype t);

/* The type an input of type t accumulates in under a: auto (and input) is
 * float32 for the 2-byte floats, else t. */
kf_dtype kf_acc_dtype(kf_dtype t, kf_acc_type a);
/* A variant label's suffix for a (canonical, kf_acc_resolve) accumulator:
 * "/acc=float64", "/acc=input", or "" (the default). */
const char *kf_acc_label(kf_acc_type a);
/* The type its outputs have: the accumulator's, but for acc_dtype input
 * with a 2-byte float t, which gives a result of type t rounded once from
 * the float32 accumulator (a 2-byte accumulator would round at every step,
 * and no data could tell a missing element from its rounding). */
kf_dtype kf_out_dtype(kf_dtype t, kf_acc_type a);
/* The canonical acc_dtype (what `resolve` stores): auto becomes float32
 * for the 2-byte floats; an accumulator that is the input type itself
 * becomes auto for the other types (so float32 and float32/auto are one
 * variant, and results written before the axis existed read the same). */
kf_acc_type kf_acc_resolve(kf_dtype t, kf_acc_type a);
/* 0 if input t can accumulate in a with op, else -1 and why. */
int kf_acc_check(kf_dtype t, kf_op op, kf_acc_type a, char *why, size_t whylen);

/* The 2-byte floats on the host, by hand: their bits to float (exact), and
 * float to their bits rounded to nearest even (overflow to infinity, NaN
 * kept a quiet NaN; float16 subnormals rounded too).  Inline: the
 * reference and the data convert every element. */
static inline uint32_t kf_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float kf_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bfloat16 is the upper half of a float32. */
static inline float kf_bf16_to_float(uint16_t h) { return kf_bits_f32((uint32_t)h << 16); }

static inline uint16_t kf_float_to_bf16(float f)
{
    uint32_t u = kf_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)             /* NaN: keep the sign, make it quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    /* round to nearest even on the 16 bits dropped; a carry into the
     * exponent is right (up to the next binade, or to infinity) */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* float16: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
static inline float kf_fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)                                    /* infinity, NaN */
        return kf_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e == 0) {                                     /* zero, subnormal: m 2^-24, exact in float */
        float x = (float)m * 0x1p-24f;
        return sign ? -x : x;
    }
    return kf_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t kf_float_to_fp16(float f)
{
    uint32_t u = kf_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)                              /* NaN: quiet, top fraction bits kept */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u)                             /* >= 65520: rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {                            /* below 2^-14: a subnormal or 0 */
        /* the result's bits are |f| 2^24 (units of the smallest
         * subnormal) rounded to nearest even, done in integers */
        int e = (int)(a >> 23);
        if (e < 102)                                  /* below 2^-25: rounds to 0 */
            return sign;
        uint32_t sig = (a & 0x7fffffu) | 0x800000u;   /* |f| = sig 2^(e - 150) */
        int shift = 126 - e;                          /* |f| 2^24 = sig 2^-(126 - e) */
        uint32_t q = sig >> shift, rem = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);                  /* q = 0x400 is the smallest normal: right */
    }
    /* normal: rebias the exponent, round the 13 bits dropped to nearest even */
    a += 0x0fffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}

/* Element of a 2-byte float type as float (t bfloat16 or float16). */
static inline float kf_half_to_float(kf_dtype t, uint16_t h)
{
    return t == KF_BFLOAT16 ? kf_bf16_to_float(h) : kf_fp16_to_float(h);
}

static inline uint16_t kf_float_to_half(kf_dtype t, float f)
{
    return t == KF_BFLOAT16 ? kf_float_to_bf16(f) : kf_float_to_fp16(f);
}

#endif
