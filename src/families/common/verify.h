/*
 * verify.h -- input data, the CPU reference, and the comparison that
 * decides whether a GPU result is right.
 *
 * Integers are compared exactly, with the wrap-around of two's complement
 * arithmetic that the GPU has.  Floating-point results must be within a
 * bound derived from n, the data and the depth of the summation order
 * (Higham: |error| <= gamma_d * sum|x_i|, gamma_d = d u / (1 - d u)); min and
 * max are exact for floats too.  The reference for floats is computed in
 * long double with compensated (Kahan-Babuska) summation.
 */
#ifndef KF_VERIFY_H
#define KF_VERIFY_H

#include "kforge.h"
#include "family.h"
#include "param.h"

/* The element type and the operator: the first two parameters of every
 * reduction family's table (both are what is computed: database keys). */
#define KF_PARAM_DTYPE                                                                                              \
    {.name = "dtype", .kind = KF_PK_ENUM, .names = kf_dtype_names, .count = KF_REDUCE_DTYPES, .def = KF_FLOAT32,   \
     .key = true, .macro = "KF_DTYPE", .doc = "element type"}
/* What it accumulates in: the output's type (a database key too).  Its
 * macro names the choice; codegen_defines writes the types (KF_T, KF_IN_T). */
#define KF_PARAM_ACC                                                                                                \
    {.name = "acc_dtype", .kind = KF_PK_ENUM, .names = kf_acc_type_names, .count = KF_ACCT_COUNT,                 \
     .def = KF_ACCT_AUTO, .key = true, .optional = true, .macro = "KF_ACC_DTYPE",                                   \
     .doc = "accumulator and output type: auto (float32 for bfloat16 and float16 input, else the input type), "   \
            "float32 or float64 (for bfloat16 and float16), input (bfloat16 and float16 results: the float32 "     \
            "accumulator rounded once)"}
#define KF_PARAM_OP                                                                                                 \
    {.name = "op", .kind = KF_PK_ENUM, .names = kf_op_names, .count = KF_OP_COUNT, .def = KF_OP_SUM, .key = true,  \
     .macro = "KF_OP", .doc = "reduction operator (and, or, xor need an integer dtype)"}

typedef union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    float f32;
    double f64;
    uint16_t h16;    /* bfloat16, float16: the bits (kf_half_to_float) */
    uint64_t bits;   /* for hashing and exact comparisons */
} kf_value;

/* Fills buf[0..n) with seeded pseudo-random data suited to op, never all
 * zeros: sum/min/max/xor: values over the type's range (floats in [-1, 1));
 * prod: odd integers (the product never becomes 0) or floats near 1 (no
 * overflow); and: all bits set but a sparse few; or: all clear but a sparse
 * few.  The same (dtype, op, seed, n) always gives the same data, and
 * element i does not depend on n. */
void verify_fill(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n);

/* Fills buf[0..n) with the exact data: values whose result the CPU knows
 * exactly and every correct kernel reproduces bit for bit, whatever its
 * order of operations, and where a single dropped, doubled or misplaced
 * element changes the answer:
 *   float sum:   small nonzero integers (1, 3 at even i; 2, 4 at odd i;
 *                with random signs for float32, bfloat16 and float16
 *                beyond n = 2^22): every partial sum is an integer far
 *                below 2^24 (exact in the float32 accumulator of the
 *                2-byte floats, whose elements 1..4 are exact), and
 *                without signs never 0;
 *   float prod:  -1, but for 60 (float32, bfloat16, float16: partial
 *                products up to 2^120 in float32) or 500 (float64) factors spread
 *                evenly, -2 (even i) or -4 (odd i): every factor is
 *                negative, every partial product a power of two;
 *   integer sum, xor: random words whose lowest bit is the opposite of i's,
 *                never 0;
 *   integer prod: random odd words, 1 mod 4 at even i and 3 mod 4 at odd i,
 *                never 1;
 *   min, max, and, or: the realistic data (verify_fill), which are exact
 *                already.
 * Neighbours always differ (but for float prod between two -1 factors),
 * and no element is the identity.  Element i depends on (seed, dtype, op,
 * i), and for float sum and prod on n too (the signs, the marks). */
void verify_fill_exact(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n);

/* The exact data for a 2-byte input t whose results are rounded to t once
 * (acc_dtype input; for another t, verify_fill_exact), in segs segments
 * of len elements, stride apart (a row-wise reduction's rows; one segment
 * for a full one).  A rounded result tells one element more or less only
 * while it is small (bfloat16 holds the integers up to 256), so:
 *   sum:  the exact data, but in each segment element p + i is element i
 *         negated for i < p, p the largest odd number below len / 2 (an
 *         odd offset: no block of a power-of-two size is the negation of
 *         another), and the last element (|x| >= 8; the one or few
 *         between 2p and it keep their values) makes the segment's sum
 *         +-(20 + (97 k mod 181)) for segment k: every partial sum is still
 *         an integer (exact in the float32 accumulator), the result exact
 *         in t, segments up to 180 apart have different sums, and a
 *         dropped, doubled or misplaced element, or a row's result in
 *         another row, changes it;
 *   prod: the exact data, with 7 marks for float16 (|product| <= 2^14).
 * Neighbours differ and no element is 0. */
void verify_fill_exact_rounded(kf_dtype t, kf_op op, uint64_t seed, void *buf, int64_t n, int64_t segs, int64_t len,
                               int64_t stride);

/* verify_tolerance for a result accumulated in acc and rounded once to
 * out (acc_dtype input): acc's bound plus one ulp of out. */
double verify_tolerance_out(kf_dtype acc, kf_dtype out, kf_op op, int64_t n, int64_t depth, double abs_sum,
                            kf_value ref);

/* A value of type `from` (float32 or float64) as type `to`: rounded to
 * nearest even when `to` is a 2-byte float, else unchanged. */
kf_value verify_narrow(kf_dtype from, kf_dtype to, kf_value v);

/* Whether verify_fill_exact gives other data than verify_fill. */
bool verify_exact_differs(kf_dtype t, kf_op op);

/* Whether the realistic data have a rounding error worth reporting (float
 * sum and prod): the accuracy run of a case. */
bool verify_has_accuracy(kf_dtype t, kf_op op);

/* The identity element of op for t (0 for sum, +inf / INT_MAX for min, ...). */
kf_value verify_identity(kf_dtype t, kf_op op);

/* The reference result over buf[0..n).  abs_sum (may be NULL) receives
 * sum |x_i| as a double (for the float bound). */
kf_value verify_reference(kf_dtype t, kf_op op, const void *buf, int64_t n, double *abs_sum);
/* The same for an input of type tin accumulated in tacc (bfloat16 and
 * float16 in float32 or float64; else tacc is tin): the result has type
 * tacc, exact for min and max, and for sums and products as exact as
 * verify_reference's. */
kf_value verify_reference_acc(kf_dtype tin, kf_dtype tacc, kf_op op, const void *buf, int64_t n, double *abs_sum);

/* Tolerance for a floating-point result (0 for integers and for min/max).
 * depth: the most operations any input goes through on its way to the
 * result (the caller knows the kernel's shape); n; abs_sum; ref.
 * sum: gamma_depth * abs_sum (+ the reference's own rounding).
 * prod: |ref| * gamma_(n-1). */
double verify_tolerance(kf_dtype t, kf_op op, int64_t n, int64_t depth, double abs_sum, kf_value ref);

/* What a float result's error is relative to (acc_rel): sum |x_i|
 * (abs_sum) for sums, |ref| for products; 0 for the exact types and ops. */
double verify_err_scale(kf_dtype t, kf_op op, double abs_sum, kf_value ref);

/* Compares; fills r->gpu_value, r->ref_value, r->abs_err, r->tolerance.
 * NaN never passes.  Returns true when correct. */
bool verify_compare(kf_dtype t, kf_op op, kf_value gpu, kf_value ref, double tol, kf_result *r);

/* verify_compare without the formatting (for many outputs): *abs_err gets
 * |gpu - ref| and *used the tolerance that applied (0 when exact); either
 * may be NULL. */
bool verify_check(kf_dtype t, kf_op op, kf_value gpu, kf_value ref, double tol, double *abs_err, double *used);

/* a op b in t's own arithmetic (float sums and products rounded as the GPU
 * rounds one operation: exact on the exact data). */
kf_value verify_combine(kf_dtype t, kf_op op, kf_value a, kf_value b);

/* Element i of buf. */
kf_value verify_load(kf_dtype t, const void *buf, int64_t i);
/* Element i of buf (type tin) as a value of type tacc (exact: a 2-byte
 * float widened, or tacc == tin). */
kf_value verify_load_acc(kf_dtype tin, kf_dtype tacc, const void *buf, int64_t i);

/* Test hook (KFORGE_PLANT): the outputs a kernel carrying the planted fault
 * spec gives on `in` (n elements; the faulted element is changed and put
 * back), its outputs poisoned with the byte `poison` before the run: the
 * reference of the input as the fault sees it, the family's output-level
 * part, the unwritten output left as poison.  ref and ref_aux: the
 * reference of `in` itself (what a fault that changes no input element
 * starts from; a changed element's outputs are recomputed, by the family's
 * reference_at where it has one).  aux: one double per output. */
void verify_plant_model(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                        const kf_plant *spec, void *in, const void *ref, const double *ref_aux, unsigned char poison,
                        void *out, double *aux);

/* Test hook (KFORGE_PLANT): compares what the planted kernel gives (the
 * model above, with each poison of the checked runs where an output is left
 * unwritten, else once) with ref and aux (the family's compare; exact or
 * within the bound).  Returns the wrong outputs of the first run that has
 * any (r filled by compare), or -1 when out of host memory. */
int64_t verify_plant_check(const kf_variant *v, const kf_shape *s, const kf_plan_info *p, int64_t offset,
                           const kf_plant *spec, void *in, const void *ref, const double *aux, bool exact,
                           kf_result *r);

/* How kernel_src's vector loads split count elements that start `offset`
 * elements past a 256-byte boundary: the scalar prefix before the first
 * vector aligned to min(es x vw, 16) bytes, the vectors of vw elements, the
 * scalar tail (as kf_row_at and reduce.cuh's load phase compute them). */
void verify_vector_split(int64_t offset, size_t es, int vw, int64_t count, int64_t *prefix, int64_t *nv,
                         int64_t *tail);

/* Full-precision text ("%.9g" float, "%.17g" double, "%.5g" bfloat16 and
 * float16, decimal integers). */
void verify_format(kf_dtype t, kf_value v, char *buf, size_t len);

#endif
