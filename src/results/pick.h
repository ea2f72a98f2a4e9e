/*
 * pick.h -- what "best" means, decided in one place for kforge tune, merge,
 * best and export alike.
 *
 *   - Only a verified measurement can be best: status ok with a positive,
 *     finite median.  A wrong answer, a compile or launch failure, a fault,
 *     a timeout, out of memory and an abandoned case never are.
 *   - A candidate that failed or was abandoned at any size of a search is
 *     never best at another size of it.
 *   - The fastest is the one with the least median time; of two as fast,
 *     the one seen first (the space's order; the database keeps what it
 *     holds) stays.
 *   - Beside the fastest, the fastest run-to-run deterministic one is kept
 *     when that is another (kforge best --deterministic, kforge export
 *     --deterministic).
 *
 * A tuning database entry is made from the picked measurement by
 * pick_entry alone, so a tune and a merge of its shards record the same
 * entries (their date and how aside).
 */
#ifndef KF_PICK_H
#define KF_PICK_H

#include <stdbool.h>
#include <stdint.h>

#include "kforge.h"
#include "tunedb.h"

/* One candidate's measurement at one size, as best is decided from it. */
typedef struct {
    const kf_variant *v;
    kf_shape shape;
    kf_status status;           /* KF_ST_COUNT: not measured */
    double median_ms, gbps, pct_peak;
    double gflops;              /* 0: the family counts no flops */
    int64_t blocks;
    int launches;
    bool deterministic;
    bool has_acc;               /* acc_rel measured */
    double acc_rel;             /* relative error on the realistic data (kf_result.acc_rel) */
    bool failed_elsewhere;      /* failed at another size of the search (abandoned there: slower, not failed) */
    bool over_error;            /* above the search's --max-error (never best) */
    const char *source_hash;    /* the source it ran (family.h); NULL: its family's now */
} pick_cand;

/* Whether c can be best (with det_only: among the deterministic ones). */
bool pick_eligible(const pick_cand *c, bool det_only);

/* Whether a time a_ms beats the best so far b_ms (b_ms not finite: none
 * yet): strictly faster; a tie keeps the one already picked. */
bool pick_faster(double a_ms, double b_ms);

/* The fastest eligible of c[0..n) (det_only: deterministic), -1 if none. */
int pick_fastest(const pick_cand *c, int n, bool det_only);

/* The database entries for one size from its candidates c[0..n): the
 * fastest, then the fastest deterministic one when that is another.  Writes
 * up to two entries to out (made by pick_entry) and returns how many. */
int pick_size_entries(const pick_cand *c, int n, const kf_device *dev, const char *date, const char *how,
                      tunedb_entry out[2]);

/* Which of a shape's database entries serves it (kforge best, kforge
 * export).  Float sums and products in arrival order (top-level atomics)
 * are faster by a few percent at most but not reproducible, and their error
 * grows with the number of blocks (up to ~100 x CUB's at 2^30 on the H100,
 * issue 35); a library that stands in for CUB is expected to give the same
 * bits every run, so the default prefers the deterministic entry. */
typedef enum {
    PICK_PREFER_DET,            /* the fastest deterministic entry of the shape if it has one, else its fastest */
    PICK_DET_ONLY,              /* --deterministic: deterministic entries only */
    PICK_FASTEST                /* --fastest: the fastest, deterministic or not */
} pick_order;

struct pick_policy {
    pick_order order;
    double max_error;           /* > 0 (--max-error): only entries whose recorded acc_rel is at most this */
};

/* Whether c is within the error bound (none; or acc_rel measured and at most it). */
bool pick_within_error(const pick_cand *c, double max_error);

/* Whether c can serve under p at all (pick_eligible, the order's
 * determinism, the error bound). */
bool pick_allowed(const pick_cand *c, const pick_policy *p);

/* The one of c[0..n) (one shape's entries) that serves it under p; -1 if none can. */
int pick_serve(const pick_cand *c, int n, const pick_policy *p);

/* "--deterministic", "--fastest", "--max-error 1e-06" as given: for messages. */
void pick_policy_text(const pick_policy *p, char *buf, size_t len);

/* A database entry as a candidate (best --deterministic, export). */
pick_cand pick_cand_of_entry(const tunedb_entry *e);

/* A database entry from a picked measurement on dev (the variant's name is
 * dropped: it labels the space, not the variant). */
void pick_entry(tunedb_entry *e, const pick_cand *c, const kf_device *dev, const char *date, const char *how);

#endif
