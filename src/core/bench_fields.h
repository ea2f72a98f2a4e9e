/*
 * bench_fields.h -- the settings of kf_bench as data: each one's name (the
 * key under "bench" in a results line, and in a config), type and place in
 * the struct, and whether it is part of a case's identity.
 *
 * The results line (results/line.c: writer, reader and case identity),
 * merge's ranking groups and compare's keys walk this table instead of
 * spelling the settings out.  Adding a setting to kf_bench means one line
 * here (and its config rule in config.c).
 */
#ifndef KF_BENCH_FIELDS_H
#define KF_BENCH_FIELDS_H

#include <stdint.h>

#include "kforge.h"
#include "util.h"

typedef enum { BF_INT, BF_I64, BF_U64, BF_DBL, BF_BOOL } bench_field_type;

typedef struct {
    const char *name;
    bench_field_type type;      /* int, int64_t, uint64_t, double, bool in kf_bench */
    size_t off;                 /* offsetof(kf_bench, ...) */
    /* changes the value or the timing, so two results that differ in it are
     * different measurements; the watchdog does not */
    bool ident;
    int64_t lo, hi;             /* BF_I64, BF_U64: the range a results line may hold */
} bench_field;

/* In the order a results line writes them (at most BENCH_FIELDS_MAX). */
#define BENCH_FIELDS_MAX 16
extern const bench_field bench_fields[];
extern const int bench_nfields;

/* The field's member in b. */
const void *bench_field_at(const bench_field *f, const kf_bench *b);
void *bench_field_at_mut(const bench_field *f, kf_bench *b);

/* The value as exact text: "3", "42", "0.5" (%.17g), "true". */
void bench_field_text(strbuf *sb, const bench_field *f, const kf_bench *b);

#endif
