/*
 * bench_fields.c -- see bench_fields.h.
 */
#include "bench_fields.h"

#include <stddef.h>

#define BF(name, type, member, ident, lo, hi) {name, type, offsetof(kf_bench, member), ident, lo, hi}

const bench_field bench_fields[] = {
    BF("warmup", BF_INT, warmup, true, 0, 0),
    BF("min_reps", BF_INT, min_reps, true, 0, 0),
    BF("max_reps", BF_INT, max_reps, true, 0, 0),
    BF("max_time_s", BF_DBL, max_time_s, true, 0, 0),
    BF("max_noise", BF_DBL, max_noise, true, 0, 0),
    BF("max_median_ci", BF_DBL, max_median_ci, true, 0, 0),
    BF("flush_l2", BF_BOOL, flush_l2, true, 0, 0),
    BF("seed", BF_U64, seed, true, 0, INT64_MAX),
    BF("offset", BF_I64, offset, true, 0, 1 << 20),
    BF("timeout_s", BF_DBL, timeout_s, false, 0, 0),
    BF("energy", BF_BOOL, energy, true, 0, 0),
};
const int bench_nfields = (int)(sizeof bench_fields / sizeof bench_fields[0]);

const void *bench_field_at(const bench_field *f, const kf_bench *b)
{
    return (const char *)b + f->off;
}

void *bench_field_at_mut(const bench_field *f, kf_bench *b)
{
    return (char *)b + f->off;
}

void bench_field_text(strbuf *sb, const bench_field *f, const kf_bench *b)
{
    const void *p = bench_field_at(f, b);
    switch (f->type) {
    case BF_INT: sb_printf(sb, "%d", *(const int *)p); break;
    case BF_I64: sb_printf(sb, "%lld", (long long)*(const int64_t *)p); break;
    case BF_U64: sb_printf(sb, "%llu", (unsigned long long)*(const uint64_t *)p); break;
    case BF_DBL: sb_printf(sb, "%.17g", *(const double *)p); break;
    case BF_BOOL: sb_append(sb, *(const bool *)p ? "true" : "false"); break;
    }
}
