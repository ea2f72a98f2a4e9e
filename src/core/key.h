/*
 * key.h -- a family's key axes and roles, read from its parameter table.
 *
 * Key axes are the parameters marked `key` in the table (kf_param.key):
 * what a kernel computes, not how (reduce: dtype and op).  The tuning
 * database key is the family, its key axes and the shape; kforge best and
 * export take one option per key axis (--dtype, --op), and the database's
 * comments and messages name them.  A family may have none: its key is the
 * family and the shape.
 *
 * Roles are what the engine knows about an axis from its values alone: an
 * enum axis whose values are kf_dtype_names is the element type (the
 * KF_T of the generated source, the C type of a tuned header), one whose
 * values are kf_op_names the operator, one of kf_acc_type_names the
 * accumulator.  All are optional.
 */
#ifndef KF_KEY_H
#define KF_KEY_H

#include <stdbool.h>

#include "cli.h"
#include "family.h"
#include "util.h"

/* The family's element-type axis (role dtype), or -1. */
int key_dtype_axis(const kf_family *f);
/* The family's operator axis (role op), or -1. */
int key_op_axis(const kf_family *f);
/* The family's accumulator axis (role acc: an enum axis of
 * kf_acc_type_names: what bfloat16 and float16 accumulate in), or -1. */
int key_acc_axis(const kf_family *f);
/* v's element type, or -1 when its family has no dtype axis. */
int key_dtype(const kf_variant *v);

/* The text of v's parameter called name ("float32"), or "" when its family
 * has no such parameter (columns named after the built-in key axes). */
void key_param_text(const kf_variant *v, const char *name, char *buf, size_t len);

/* v's key axes' values, in table order, each preceded by sep (" float32
 * sum" with sep " "); nothing for a family without key axes. */
void key_text(strbuf *b, const kf_variant *v, const char *sep);
/* The family and its key: "reduce float32 sum"; "saxpy" without key axes. */
void key_describe(strbuf *b, const kf_variant *v);
/* The same as `kforge tune` options: " --set dtype=float32 --set op=sum". */
void key_set_args(strbuf *b, const kf_variant *v);
/* The required key options as a usage phrase: "--dtype and --op" (an
 * optional key axis, acc-dtype, has its default); "" if none. */
void key_options(strbuf *b, const kf_family *f);

/* Whether a and b (same family) agree on every key axis i with given[i]
 * (given NULL: every key axis). */
bool key_match(const kf_variant *a, const kf_variant *b, const bool *given);

/* --AXIS VALUE for a key axis of f: parses VALUE into key->p[i] and sets
 * given[i].  1 if the argument was one, 0 if not, -1 after a message. */
int key_option(cli *c, const kf_family *f, kf_variant *key, bool *given);

#endif
