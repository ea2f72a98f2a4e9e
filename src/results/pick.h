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
    bool failed_elsewhere;      /* failed at another size of the search (abandoned there: slower, not failed) */
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

/* A database entry as a candidate (best --deterministic, export). */
pick_cand pick_cand_of_entry(const tunedb_entry *e);

/* A database entry from a picked measurement on dev (the variant's name is
 * dropped: it labels the space, not the variant). */
void pick_entry(tunedb_entry *e, const pick_cand *c, const kf_device *dev, const char *date, const char *how);

#endif
