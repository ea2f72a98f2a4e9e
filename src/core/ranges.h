/*
 * ranges.h -- what was measured in each dispatch range of one size axis
 * (issue 35): a size goes to the variant of the nearest measured size on a
 * log scale (ties: the larger), as kforge best (shape_nearer) and an
 * exported header dispatch; these say, per range, which sizes were measured
 * there and how -- tuned (a search) or between (tune --between: the leaders
 * of the neighbouring tuned sizes measured there) -- and which variant
 * serves it.  The tune summary and every exported header print the same
 * lines.
 */
#ifndef KF_RANGES_H
#define KF_RANGES_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Neighbouring tuned sizes more than this many times apart get a size
 * measured between them by default (tune's --between default) and, without
 * one, a range that reaches between them says it was not measured there. */
#define KF_BETWEEN_RATIO 2

/* One measured size and the variant that serves it. */
typedef struct {
    int64_t n;
    bool between;               /* measured by tune --between, not tuned there */
    const char *label;          /* the variant (family label) */
} kf_range_point;

/* The smallest m with m * m >= a * b (a <= b): from there a size is nearer
 * b than a on a log scale (a tie goes to the larger, b). */
uint64_t kf_size_boundary(uint64_t a, uint64_t b);

/* "2^20" for a power of two, else the number. */
void kf_size_text(char *buf, size_t len, uint64_t n);

/* One line per dispatch range of p[0..np) (sorted by n, distinct;
 * neighbouring sizes served by the same label share one range), each
 * starting with prefix and ending in '\n':
 *
 *   n in [2^11, 2^13): measured at 2^10 (tuned), 2^12 (between) -> LABEL
 *
 * and, where the range reaches between two tuned sizes more than
 * KF_BETWEEN_RATIO apart with nothing measured between them,
 * "; nearest tuned size, not measured in between (2^10 .. 2^14)".  The
 * labels are written as they are: a header escapes the lines. */
void kf_range_lines(strbuf *b, const char *prefix, const char *axis, const kf_range_point *p, int np);

/* How many pairs of neighbouring tuned sizes of p, more than
 * KF_BETWEEN_RATIO apart, have nothing measured between them. */
int kf_range_unmeasured(const kf_range_point *p, int np);

#endif
