/*
 * t4.h -- T4, the Auto-Tuning Association's results format (issue 37):
 * `kforge run --format t4` and `kforge tune --format t4` print the run's
 * results as one T4 document (schema 1.0.0: tests/data/t4) on stdout.
 *
 * Each results line is one T4 result: "configuration" its axes (the line's
 * "axes"), "times" in milliseconds under the keys Kernel Tuner writes and
 * the methodology's reader sums (compilation, validation, benchmark,
 * framework, search_algorithm, runtimes), "invalidity" from its status
 * (correct, compile, runtime, correctness, constraints, timeout),
 * "correctness", "measurements" (time: the median, or the status of a
 * failed case; min/max/mean/stddev, GB/s, GFLOP/s, energy; its sizes) and
 * "objectives" ["time"].  python/kforge/t4.py does the same for an existing
 * results file (python3 -m kforge.t4 FILE).
 */
#ifndef KF_T4_H
#define KF_T4_H

#include <stddef.h>
#include <stdio.h>

/* The lines of results file `path` whose "config" is `config` (NULL: every
 * line), the last of each case (its label, sizes and device), as a T4
 * document on out: 0, or -1 and why (the file unreadable, out of memory). */
int t4_write(FILE *out, const char *path, const char *config, char *err, size_t errlen);

#endif
