/*
 * expr.h -- constraint expressions over variant parameters, for example
 *   "block_size * elements_per_thread <= 16384"
 *   "algorithm != \"atomic_global\" || n <= 1048576"
 *
 * Grammar (C-like precedence): || && ! == != < <= > >= + - * / % unary -,
 * parentheses, integer and decimal literals, "string" literals, and the
 * identifiers of the config's family (family.h): every parameter
 * (enumerated ones evaluate to their name as a string and compare only with
 * == and != against strings; a grid is its block count, 0 unless fixed),
 * every size dimension ("n"; "rows", "cols", "row_stride") and the
 * family's derived names (reduce: "elem_bytes", "vector_bytes", "tile").
 * Functions: log2(x), pow2(k), min(a,b), max(a,b).
 */
#ifndef KF_EXPR_H
#define KF_EXPR_H

#include "kforge.h"

typedef struct kf_expr kf_expr;

/* Parses text.  On error returns NULL and writes a message naming the
 * expression and the 1-based character position:
 *   'block_size <= ' at position 15: expected a value */
kf_expr *expr_parse(const char *text, int family, char *err, size_t errlen);
/* The same for a family not registered yet (a family being made from a
 * config: its launch expressions are checked before it is registered). */
struct kf_family;
kf_expr *expr_parse_for(const char *text, const struct kf_family *f, char *err, size_t errlen);

/* Evaluates e for variant v (of the family e was parsed for) at shape s
 * (NULL when e uses no size).  Comparisons and logic yield 0 or 1.
 * Returns 0, or -1 with a message (division by zero, comparing a string
 * with a number). */
int expr_eval(const kf_expr *e, const kf_variant *v, const kf_shape *s, double *out,
              char *err, size_t errlen);

/* e as C source text (malloc'd) that computes expr_eval's value in double
 * arithmetic over double variables named prefix + identifier (every
 * parameter and size it mentions), for code written from an expression
 * (kforge export's launcher): literals are doubles, '/' is real division,
 * '%' fmod, log2(x) log2, pow2(k) pow(2.0, k), ceil and floor, min and max a comparison,
 * and comparisons, &&, || and ! give 1.0 or 0.0.  The text needs <math.h>.
 * Where expr_eval fails (division by zero, log2 of 0), the C text gives an
 * infinity or a NaN instead.  NULL with a message for what C cannot say
 * over numbers: a string, an enumerated or grid parameter, a family's
 * derived name. */
char *expr_c_text(const kf_expr *e, const char *prefix, char *err, size_t errlen);

/* The text e was parsed from. */
const char *expr_source_text(const kf_expr *e);

/* True if the expression mentions a size (then it is checked per case). */
bool expr_uses_n(const kf_expr *e);
/* The highest index of a parameter e mentions, leaving out those with
 * fixed[i] true (fixed may be NULL); -1 if none, INT_MAX if it mentions a
 * family's derived name (which may depend on any parameter).  A constraint
 * can be checked as soon as the parameters up to this one are bound. */
int expr_last_param(const kf_expr *e, const bool *fixed);
/* True if it mentions a parameter (or a family's derived name). */
bool expr_uses_params(const kf_expr *e);

void expr_free(kf_expr *e);

#endif
