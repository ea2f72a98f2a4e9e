/*
 * kforge.c -- name tables and small helpers for the shared types.
 */
#include "kforge.h"

#include <stdio.h>
#include <string.h>

const char *const kf_dtype_names[] = {"int32", "uint32", "int64", "float32", "float64", "bfloat16", "float16",
                                      "int8", "uint8"};
const char *const kf_op_names[] = {"sum", "min", "max", "prod", "and", "or", "xor"};
const char *const kf_acc_type_names[] = {"auto", "input", "float32", "float64"};
const char *const kf_status_names[] = {"ok", "wrong", "compile_error", "launch_error",
                                                  "fault", "timeout", "out_of_memory", "abandoned", "skipped"};

void kf_driver_text(int driver_version, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", driver_version / 1000, driver_version % 1000 / 10);
}

int kf_fp32_lanes(int cc_major, int cc_minor)
{
    switch (cc_major) {
    case 6: return cc_minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return cc_minor == 0 ? 64 : 128;
    case 9: case 10: case 11: case 12: return 128;
    default: return 0;
    }
}

double kf_peak_fp32_gflops(int cc_major, int cc_minor, int sms, int sm_clock_khz)
{
    int lanes = kf_fp32_lanes(cc_major, cc_minor);
    if (lanes <= 0 || sms <= 0 || sm_clock_khz <= 0)
        return 0;
    return (double)sms * sm_clock_khz * 1e3 * lanes * 2.0 / 1e9;
}

void kf_bench_defaults(kf_bench *b)
{
    memset(b, 0, sizeof *b);
    b->warmup = 3;
    b->min_reps = 10;
    b->max_reps = 1000;
    b->max_time_s = 0.5;
    b->max_noise = 0.005;
    b->flush_l2 = true;
    b->seed = 42;
    b->offset = 0;
    b->timeout_s = 30.0;
}

int kf_lookup(const char *const *names, int count, const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

size_t kf_dtype_size(kf_dtype t)
{
    switch (t) {
    case KF_INT32: case KF_UINT32: case KF_FLOAT32: return 4;
    case KF_INT64: case KF_FLOAT64: return 8;
    case KF_BFLOAT16: case KF_FLOAT16: return 2;
    case KF_INT8: case KF_UINT8: return 1;
    default: return 0;
    }
}

bool kf_dtype_is_float(kf_dtype t) { return t == KF_FLOAT32 || t == KF_FLOAT64 || kf_dtype_is_half(t); }

bool kf_dtype_is_half(kf_dtype t) { return t == KF_BFLOAT16 || t == KF_FLOAT16; }

bool kf_op_is_bitwise(kf_op op) { return op == KF_OP_AND || op == KF_OP_OR || op == KF_OP_XOR; }

const char *kf_dtype_ctype(kf_dtype t)
{
    switch (t) {
    case KF_INT32: return "int";
    case KF_UINT32: return "unsigned int";
    case KF_INT64: return "long long";
    case KF_FLOAT32: return "float";
    case KF_FLOAT64: return "double";
    case KF_BFLOAT16: return "__nv_bfloat16";
    case KF_FLOAT16: return "__half";
    case KF_INT8: return "signed char";
    case KF_UINT8: return "unsigned char";
    default: return "?";
    }
}

// ----------------------------------------------------------------------------
// Accumulator types

kf_dtype kf_acc_dtype(kf_dtype t, kf_acc_type a)
{
    switch (a) {
    case KF_ACCT_FLOAT32: return KF_FLOAT32;
    case KF_ACCT_FLOAT64: return KF_FLOAT64;
    case KF_ACCT_AUTO: case KF_ACCT_INPUT: return kf_dtype_is_half(t) ? KF_FLOAT32 : t;
    default: return t;
    }
}

const char *kf_acc_label(kf_acc_type a)
{
    return a == KF_ACCT_FLOAT64 ? "/acc=float64" : a == KF_ACCT_INPUT ? "/acc=input" : "";
}

kf_dtype kf_out_dtype(kf_dtype t, kf_acc_type a)
{
    return a == KF_ACCT_INPUT ? t : kf_acc_dtype(t, a);
}

kf_acc_type kf_acc_resolve(kf_dtype t, kf_acc_type a)
{
    if (kf_dtype_is_half(t))
        return a == KF_ACCT_AUTO ? KF_ACCT_FLOAT32 : a;
    if (a == KF_ACCT_INPUT || kf_acc_dtype(t, a) == t)
        return KF_ACCT_AUTO;
    return a;
}

int kf_acc_check(kf_dtype t, kf_op op, kf_acc_type a, char *why, size_t whylen)
{
    (void)op;
    a = kf_acc_resolve(t, a);
    if (!kf_dtype_is_half(t) && a != KF_ACCT_AUTO) {
        snprintf(why, whylen, "acc_dtype %s applies to bfloat16 and float16 input; %s accumulates in %s "
                 "(acc_dtype auto or input)", kf_acc_type_names[a], kf_dtype_names[t], kf_dtype_names[t]);
        return -1;
    }
    return 0;
}

_Static_assert(sizeof kf_dtype_names / sizeof kf_dtype_names[0] == KF_DTYPE_COUNT, "dtype names");
_Static_assert(sizeof kf_acc_type_names / sizeof kf_acc_type_names[0] == KF_ACCT_COUNT, "acc names");
_Static_assert(sizeof kf_op_names / sizeof kf_op_names[0] == KF_OP_COUNT, "op names");
_Static_assert(sizeof kf_status_names / sizeof kf_status_names[0] == KF_ST_COUNT, "status names");
