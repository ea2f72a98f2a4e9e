/*
 * expr.h -- constraint expressions over variant parameters, for example
 *   "block_size * elements_per_thread <= 16384"
 *   "algorithm != \"atomic_global\" || n <= 1048576"
 *
 * Grammar (C-like precedence): || && ! == != < <= > >= + - * / % unary -,
 * parentheses, integer and decimal literals, "string" literals, and the
 * identifiers: every axis name of config.h (enumerated axes evaluate to
 * their name as a string and compare only with == and != against strings),
 * "n", "vector_bytes" (vector_width * element size), "elem_bytes", "tile"
 * (block_size * elements_per_thread * vector_width).  Functions: log2(x),
 * pow2(k), min(a,b), max(a,b).
 */
#ifndef KF_EXPR_H
#define KF_EXPR_H

#include "kforge.h"

typedef struct kf_expr kf_expr;

/* Parses text.  On error returns NULL and writes a message naming the
 * expression and the 1-based character position:
 *   'block_size <= ' at position 15: expected a value */
kf_expr *expr_parse(const char *text, char *err, size_t errlen);

/* Evaluates e for variant v at size n.  Comparisons and logic yield 0 or 1.
 * Returns 0, or -1 with a message (division by zero, comparing a string
 * with a number). */
int expr_eval(const kf_expr *e, const kf_variant *v, int64_t n, double *out,
              char *err, size_t errlen);

/* True if the expression mentions n (then it is checked per case). */
bool expr_uses_n(const kf_expr *e);

void expr_free(kf_expr *e);

#endif
