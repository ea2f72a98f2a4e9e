/*
 * results.h -- the results file, its one owner: JSON Lines, one line per
 * case, appended whole under an exclusive flock() (so concurrent kforge
 * processes never interleave), read back line by line by resume, tune,
 * merge and the tests alike, and the case identity that decides whether a
 * recorded line is the same measurement as one about to be made.
 *
 * A line holds the run (id, time, host, config), the device and software
 * versions, the family ("kernel"), every parameter, the shape, the status
 * and message, the verification outcome, the statistics and the bench
 * settings it was measured with.  line.c owns the line: its field table
 * writes it (report_json), reads it and makes the case identity.
 */
#ifndef KF_RESULTS_H
#define KF_RESULTS_H

#include "kforge.h"
#include "line.h"     /* the line itself: kf_run_info, parsing, case identity */

typedef struct results_file results_file;

/* Opens (creating) path for appending. */
results_file *results_open(const char *path, char *err, size_t errlen);

/* Appends line + '\n' with a single write() while holding an exclusive
 * flock(); a partial last line left by a crash is first terminated so that
 * the new line starts on a line of its own.  0, or -1 with a message
 * naming the file and the error (disk full, ...): the caller must stop. */
int results_append(results_file *f, const char *line, char *err, size_t errlen);

void results_close(results_file *f);

/* Calls fn for every complete, parseable line of path, in order, reading
 * line by line (constant memory).  Damaged bytes are skipped: NUL bytes are
 * dropped, a line longer than 1 MiB, an unterminated last line or one that
 * does not parse is counted in *skipped (may be NULL).  A missing file is
 * not an error (no calls).  fn returning non-zero stops the read.  Returns
 * 0, or -1 with a message: also when SIGINT/SIGTERM arrived (kf_interrupted;
 * "interrupted"), and when more than 16 MiB came without a results line
 * (/dev/zero, `yes |`: "not a results file"), so that no input keeps the
 * read going for ever. */
int results_read(const char *path, int (*fn)(const kf_result *r, void *ctx), void *ctx, int *skipped,
                 char *err, size_t errlen);

/* The same from byte offset on (where a command began appending). */
int results_read_from(const char *path, long offset, int (*fn)(const kf_result *r, void *ctx), void *ctx,
                      int *skipped, char *err, size_t errlen);

/* results_read_from with the text of each line (NUL bytes dropped) and its
 * line number in the file (from 1; counted from offset on). */
typedef int (*results_line_fn)(const char *line, long lineno, const kf_result *r, void *ctx);
int results_read_lines(const char *path, long offset, results_line_fn fn, void *ctx, int *skipped, char *err,
                       size_t errlen);

/* How many lines of path name a kernel no family registered here has (a
 * custom kernel's results read without its config, --kernel CONFIG), and
 * the first such name in kernel; for a message after a read skipped lines. */
int results_unknown_kernel(const char *path, char *kernel, size_t len);

#endif
