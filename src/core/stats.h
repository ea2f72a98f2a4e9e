/*
 * stats.h -- statistics of repeated timings and the rule that decides when
 * enough repetitions have been taken.
 */
#ifndef KF_STATS_H
#define KF_STATS_H

#include "kforge.h"

/* Fills reps, median, min, max, mean, stddev (sample) and noise
 * (stddev / mean) from ms[0..n).  ms is not modified.  gbps and pct_peak are
 * left 0. */
void stats_compute(const double *ms, int n, kf_stats *out);

/* Sets gbps = bytes / median and pct_peak (0 if peak <= 0).  bytes: what
 * the run must move (the family's bytes()). */
void stats_bandwidth(kf_stats *s, double bytes, double peak_gbps);

/* The stopping rule: stop once reps >= max_reps; or reps >= min_reps and
 * (noise <= max_noise or elapsed_s >= max_time_s).  elapsed_s is the time
 * spent in timed repetitions so far. */
bool stats_should_stop(const double *ms, int reps, double elapsed_s, const kf_bench *b);

#endif
