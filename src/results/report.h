/*
 * report.h -- output for people (an aligned table) and programs (CSV, JSON
 * Lines, JSON), and the results file: JSON Lines, one line per case,
 * appended and flushed as each case finishes.
 *
 * A results line holds the run (id, time, host, config), the device and
 * software versions, the family and every parameter (the parameter table's
 * names), the shape, the status and message, the verification outcome, the
 * statistics and the bench settings.  results.h parses them back.
 */
#ifndef KF_REPORT_H
#define KF_REPORT_H

#include <stdio.h>

#include "kforge.h"
#include "results.h"  /* kf_run_info */

/* md: a Markdown table (what the README's tables are made of). */
typedef enum { KF_FMT_TABLE, KF_FMT_CSV, KF_FMT_JSONL, KF_FMT_JSON, KF_FMT_MD, KF_FMT_COUNT } kf_format;
extern const char *const kf_format_names[KF_FMT_COUNT];

typedef struct {
    bool speedup;           /* table: step and cumulative speedup columns (vs the previous row with the same n) */
    bool color;             /* table: colour the status column */
    bool no_header;         /* csv: no header line (--no-header: appending in a loop) */
    /* table and md: the columns.  NULL: name, dtype and op (where a row's
     * family has them), size, then the figures.  "auto" (kforge run's
     * default, on a terminal or not): a column for each identity item (name,
     * kernel, every parameter of the families' tables, size) that varies
     * across the rows, the ones the same in every row said once in a line
     * above the table.  Else a comma-separated list of keys
     * (report_columns_check): name, kernel,
     * size, status, time, min, noise, gbps, peak, gflops, flops_peak, step,
     * cumul, sm, energy, gbpj, note, any parameter or size name, and "axes"
     * (the identity items that vary).  csv: NULL, every column (line_csv);
     * else a list of CSV columns (line_csv_columns). */
    const char *columns;
    /* table and md: the rows ordered by a key (report_sort_check): time,
     * gbps, a parameter, ...; "-KEY" reverses.  NULL: in the order added. */
    const char *sort;
    /* table without sort: print each row as it is added (on a terminal),
     * with columns and widths decided before the first one from the cases
     * given to report_expect. */
    bool stream;
} report_opts;

typedef struct report report;

/* csv (header from the first row's family) and jsonl print and flush each row as it is added; table, md and json
 * print at report_finish (a table needs every row to align its columns), unless a table streams (report_opts).  Tables add an "SM MHz" column
 * when NVML gave clocks (marked '!' when throttled or below the maximum) and "energy" and "GB/J" when
 * some row has an energy figure. */
report *report_new(FILE *out, kf_format fmt, const kf_run_info *info, const report_opts *o);
void report_add(report *r, const kf_result *res);
/* Tables: a case that will be added, before any row is (what varies is
 * known from the cases, not the results, so a streamed table's columns are
 * decided before its first row). */
void report_expect(report *r, const kf_variant *v, const kf_shape *s, const kf_bench *b);
/* What tells res apart from the other cases expected (the identity items
 * that vary: "block_size=256 n=1048576"), else its label; for progress lines. */
void report_describe(const report *r, const kf_result *res, char *buf, size_t len);
/* Whether a --columns list (of fmt: table and md, or csv) or a --sort key
 * is valid for the families registered: 0, or -1 with a message in err. */
int report_columns_check(const char *spec, kf_format fmt, char *err, size_t errlen);
int report_sort_check(const char *key, char *err, size_t errlen);
void report_finish(report *r);
void report_free(report *r);

/* One results line (no newline), malloc'd. */
char *report_json(const kf_result *res, const kf_run_info *info);

/* Bytes moved per joule of one run, in GB/J (0 without an energy figure). */
double report_gb_per_j(const kf_result *r);

// ----------------------------------------------------------------------------
// Warnings about how a case ran (issue 14), for stderr

/* Whether r ran throttled (a clock-limit reason other than idle or the
 * applications clocks setting) or below its maximum SM clock; if so, why in
 * buf ("throttled (sw power cap); SM clock 1755..1980 MHz, maximum 1980"). */
bool report_clock_warning(const kf_result *r, char *buf, size_t len);

/* Per command: a note when NVML is not available (once), a warning for each
 * case that ran throttled or below its maximum clock (the first
 * REPORT_WARN_MAX; the rest are counted), each on a line of its own. */
#define REPORT_WARN_MAX 10
typedef struct {
    int warned, more;       /* clock warnings printed, and left out */
    int noted, notes_more;  /* NVML notes printed (one per distinct text, at most 3), and left out */
    int unverified;         /* fake-GPU results not verified (a note for the first 3) */
    char last_note[160];
} report_warnings;
void report_warn(report_warnings *w, const kf_result *r, FILE *f);
/* "... and N more cases ran throttled" at the end; nothing when none. */
void report_warn_end(const report_warnings *w, FILE *f);

#endif
