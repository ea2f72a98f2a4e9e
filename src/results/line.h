/*
 * line.h -- the results line, its one owner: a table of its fields (name,
 * type, where the value lives, when it is null or left out, whether it is
 * part of a case's identity) that every job on a line walks:
 *
 *   - writing a result as a JSON Lines results line (report_json) or as a
 *     CSV row and its header (report.c's csv format);
 *   - reading a line back (results_parse_line) and its run and device facts
 *     (results_parse_run), old lines included: a line without "kernel" is a
 *     reduce line of kforge 0.1, one without "bench" has the defaults, a
 *     field missing from an old line keeps its zero;
 *   - case identity (results_case_key): the fields marked as identity.
 *
 * A line holds the run (id, time, host, config), the device and software
 * versions, the name and label, the family ("kernel"), every parameter of
 * its table, the shape, the status and message, the verification outcome,
 * the launch facts, where the time went, the statistics, what NVML read and
 * the bench settings (core/bench_fields.h) it was measured with.
 */
#ifndef KF_LINE_H
#define KF_LINE_H

#include "kforge.h"
#include "util.h"

/* The run a results line belongs to: who measured it, where, on what. */
typedef struct {
    char run_id[64];        /* unique per invocation */
    char time[32];          /* ISO 8601 UTC start time */
    char host[64];
    char config[512];       /* config path(s) */
    kf_device dev;
    bool have_dev;
} kf_run_info;

/* r as one results line (no newline) appended to b: the run's facts from
 * info, the device's when info->have_dev. */
void line_json(strbuf *b, const kf_result *r, const kf_run_info *info);

/* r as one CSV row, or the header of r's family when header (no newline):
 * the fields of the JSON line but the device's, the bench settings as
 * "bench.NAME" columns.  The core comes first, the same columns in the same
 * order for every family (a field a JSON line leaves out, an empty cell):
 * kforge ... label, kernel, status ... bench.*; after it the family's
 * parameters and sizes, in its table's order. */
void line_csv(strbuf *b, const kf_result *r, const kf_run_info *info, bool header);

/* The same, only the columns named in the comma-separated list, in its
 * order (--format csv --columns); a name r's family lacks, an empty cell. */
void line_csv_columns(strbuf *b, const kf_result *r, const kf_run_info *info, bool header, const char *columns);

/* Whether name is a core CSV column (status, median_ms, bench.seed, ...). */
bool line_csv_column(const char *name);

/* Parses one line (NUL-terminated) into r: 0, or -1 with a message.  A line
 * without "kernel" is a reduce line (files of kforge 0.1). */
int results_parse_line(const char *line, kf_result *r, char *err, size_t errlen);

/* Whether the line r was parsed from (line) contradicts itself, as no
 * kforge ever wrote it: a "label" or a "name" that is not its variant's, a
 * variant its family says cannot run, a status of ok with a time that is
 * not finite and above 0 (reps at least 1), a
 * negative or non-finite time or rate, an error figure (abs_err,
 * tolerance, acc_*) below 0, or a source_hash that is not 32 hexadecimal
 * digits.  false, or true and why (merge leaves such a line out as
 * damaged; the times of a line that agrees with itself are taken as
 * measured). */
bool results_line_damaged(const char *line, const kf_result *r, char *why, size_t whylen);

/* Whether line is a JSON object whose "kernel" names no family registered
 * in this process (a custom kernel's line read without its config): true,
 * and the name in kernel. */
bool results_line_unknown_kernel(const char *line, char *kernel, size_t len);

/* The run and device facts of one line (NUL-terminated) into info, as
 * report_json wrote them (have_dev: the line names a device): 0, or -1
 * with a message. */
int results_parse_run(const char *line, kf_run_info *info, char *err, size_t errlen);

/* Whether name is a key every results line of any family has ("status",
 * "time", "bench", ...): a family's parameter or size of that name would
 * write the key twice. */
bool results_line_key(const char *name);

/* 0, or -1 with a message naming path, when a parameter or size of family
 * (kf_families index) is named as such a key (a custom kernel's "status"). */
int results_check_names(const char *path, int family, char *err, size_t errlen);

/* The case identity: family, name, every parameter, the shape, the GPU
 * model, and the bench settings that change the value or the timing (all
 * but the watchdog): the fields the table marks as identity.  Two results
 * are the same measurement iff their keys are equal. */
void results_case_key(const kf_variant *v, const kf_shape *s, const kf_bench *b, const char *device, char *buf,
                      size_t len);

/* results_case_key of a recorded result. */
void results_key_of(const kf_result *r, char *buf, size_t len);

/* A malloc'd copy of s with every byte that is not part of a well-formed
 * UTF-8 sequence replaced by '?' (NULL when out of memory). */
char *line_utf8_clean(const char *s);

#endif
