/*
 * kforge.c -- name tables and small helpers for the shared types.
 */
#include "kforge.h"

#include <stdio.h>
#include <string.h>

const char *const kf_dtype_names[] = {"int32", "uint32", "int64", "float32", "float64"};
const char *const kf_op_names[] = {"sum", "min", "max", "prod", "and", "or", "xor"};
const char *const kf_status_names[] = {"ok", "wrong", "compile_error", "launch_error",
                                                  "fault", "timeout", "out_of_memory", "abandoned", "skipped"};

void kf_driver_text(int driver_version, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", driver_version / 1000, driver_version % 1000 / 10);
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
    default: return 0;
    }
}

bool kf_dtype_is_float(kf_dtype t) { return t == KF_FLOAT32 || t == KF_FLOAT64; }

bool kf_op_is_bitwise(kf_op op) { return op == KF_OP_AND || op == KF_OP_OR || op == KF_OP_XOR; }

const char *kf_dtype_ctype(kf_dtype t)
{
    switch (t) {
    case KF_INT32: return "int";
    case KF_UINT32: return "unsigned int";
    case KF_INT64: return "long long";
    case KF_FLOAT32: return "float";
    case KF_FLOAT64: return "double";
    default: return "?";
    }
}

_Static_assert(sizeof kf_dtype_names / sizeof kf_dtype_names[0] == KF_DTYPE_COUNT, "dtype names");
_Static_assert(sizeof kf_op_names / sizeof kf_op_names[0] == KF_OP_COUNT, "op names");
_Static_assert(sizeof kf_status_names / sizeof kf_status_names[0] == KF_ST_COUNT, "status names");
