/*
 * report.h -- output for people (an aligned table) and programs (CSV, JSON
 * Lines, JSON), and the results file: JSON Lines, one line per case,
 * appended and flushed as each case finishes.
 *
 * A results line holds the run (id, time, host, config), the device and
 * software versions, every variant parameter, n, the status and message,
 * the verification outcome and the statistics.  Field names are the JSON
 * keys of the config plus those of kf_result / kf_stats.
 */
#ifndef KF_REPORT_H
#define KF_REPORT_H

#include <stdio.h>

#include "kforge.h"

typedef enum { KF_FMT_TABLE, KF_FMT_CSV, KF_FMT_JSONL, KF_FMT_JSON, KF_FMT_COUNT } kf_format;
extern const char *const kf_format_names[KF_FMT_COUNT];

typedef struct {
    char run_id[64];        /* unique per invocation */
    char time[32];          /* ISO 8601 UTC start time */
    char host[64];
    char config[512];       /* config path(s) */
    kf_device dev;
    bool have_dev;
    kf_bench bench;
} kf_run_info;

typedef struct {
    bool speedup;           /* table: step and cumulative speedup columns (vs the previous row with the same n) */
    bool color;             /* table: colour the status column */
} report_opts;

typedef struct report report;

/* csv and jsonl print and flush each row as it is added; table and json
 * print at report_finish (a table needs every row to align its columns). */
report *report_new(FILE *out, kf_format fmt, const kf_run_info *info, const report_opts *o);
void report_add(report *r, const kf_result *res);
void report_finish(report *r);
void report_free(report *r);

/* One results line (no newline), malloc'd. */
char *report_json(const kf_result *res, const kf_run_info *info);

/* Inverse of report_json for the fields of kf_result (info is ignored):
 * 0, or -1 with a message. */
int report_parse_json(const char *line, kf_result *res, char *err, size_t errlen);

/* Canonical text naming a case (every variant parameter and n): two cases
 * are the same measurement iff their keys are equal.  Used for resume. */
void report_case_key(const kf_variant *v, int64_t n, char *buf, size_t len);

/* ---------------------------------------------------------------------- */
/* Results file. */

typedef struct results_file results_file;

/* Opens (creating) path for appending. */
results_file *results_open(const char *path, char *err, size_t errlen);

/* Appends line + '\n' with a single write() while holding an exclusive
 * flock(), so lines from concurrent kforge processes never interleave; a
 * partial last line left by a crash is first terminated so that the new line
 * starts on a line of its own.  0 or -1. */
int results_append(results_file *f, const char *line);

void results_close(results_file *f);

/* Calls fn for every complete, parseable line of path, in order; a
 * truncated or garbled line is skipped (*skipped counts them; may be NULL).
 * A missing file is not an error (no calls).  fn returning non-zero stops
 * the read.  Returns 0, or -1 with a message. */
int results_read(const char *path, int (*fn)(const kf_result *r, void *ctx), void *ctx,
                 int *skipped, char *err, size_t errlen);

#endif
