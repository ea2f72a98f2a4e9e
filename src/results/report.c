/*
 * report.c -- results as an aligned table, CSV, JSON Lines or JSON, and the
 * shared results file (JSON Lines, appended under flock()).
 *
 * The fields of a result are listed once, in emit_fields(); the JSON
 * object, the CSV header and the CSV rows are all produced by walking that
 * one list, so they cannot drift apart.  Parsing (report_parse_json) is the
 * inverse for the kf_result fields; cJSON stays inside this file.
 */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "family.h"
#include "param.h"
#include "util.h"

const char *const kf_format_names[KF_FMT_COUNT] = {"table", "csv", "jsonl", "json", "md"};

static const char *nm(const char *const *names, int count, int i)
{
    return i >= 0 && i < count ? names[i] : "?";
}

// ----------------------------------------------------------------------------
// Text helpers

/* Copies s into a malloc'd string with every byte that is not part of a
 * well-formed UTF-8 sequence replaced by '?', so the JSON we write is valid
 * even when a compile log or a truncated message holds stray bytes. */
static char *utf8_clean(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned c = p[i];
        int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = len > 0 && i + (size_t)len <= n;
        uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
        for (int k = 1; ok && k < len; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                ok = false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (ok && len > 1) {
            static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
            if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                ok = false;
        }
        if (ok) {
            memcpy(out + o, p + i, (size_t)len);
            o += (size_t)len;
            i += (size_t)len;
        } else {
            out[o++] = '?';
            i++;
        }
    }
    out[o] = 0;
    return out;
}

static void sb_json_clean(strbuf *b, const char *s)
{
    char *c = utf8_clean(s);
    sb_json_string(b, c ? c : "");
    free(c);
}

/* Shortest of %.15g .. %.17g that reads back as the same double. */
static void fmt_double(char *buf, size_t len, double x)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
}

static void csv_field(strbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (s[0] == 0 || s[strlen(s) - 1] != ' ')) {
        sb_append(b, s);
        return;
    }
    sb_append(b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            sb_append(b, "\"\"");
        else
            sb_appendn(b, p, 1);
    }
    sb_append(b, "\"");
}

/* Columns a string takes on a terminal: UTF-8 continuation bytes take none. */
static int text_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}

// ----------------------------------------------------------------------------
// The field list, walked by three emitters

typedef enum { EM_JSON, EM_CSV_HEAD, EM_CSV_ROW } em_mode;

typedef struct {
    em_mode mode;
    strbuf *b;
    int count;              /* fields written at the current level */
    const char *prefix;     /* CSV: "bench." inside the bench object */
} emitter;

static void em_key(emitter *e, const char *key)
{
    if (e->count++ > 0)
        sb_append(e->b, ",");
    if (e->mode == EM_JSON) {
        sb_json_string(e->b, key);
        sb_append(e->b, ":");
    } else if (e->mode == EM_CSV_HEAD) {
        sb_printf(e->b, "%s%s", e->prefix ? e->prefix : "", key);
    }
}

static void em_str(emitter *e, const char *key, const char *v)
{
    em_key(e, key);
    if (e->mode == EM_JSON)
        sb_json_clean(e->b, v);
    else if (e->mode == EM_CSV_ROW)
        csv_field(e->b, v);
}

static void em_int(emitter *e, const char *key, long long v)
{
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_printf(e->b, "%lld", v);
}

static void em_uint(emitter *e, const char *key, unsigned long long v)
{
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_printf(e->b, "%llu", v);
}

static void em_dbl(emitter *e, const char *key, double v)
{
    em_key(e, key);
    if (e->mode == EM_CSV_HEAD)
        return;
    char buf[40];
    if (isfinite(v))
        fmt_double(buf, sizeof buf, v);
    else if (e->mode == EM_JSON)
        snprintf(buf, sizeof buf, "null");
    else
        snprintf(buf, sizeof buf, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    sb_append(e->b, buf);
}

static void em_bool(emitter *e, const char *key, bool v)
{
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_append(e->b, v ? "true" : "false");
}

/* A figure that may be missing: null in JSON, an empty CSV cell. */
static void em_opt_int(emitter *e, const char *key, bool have, long long v)
{
    if (have) {
        em_int(e, key, v);
        return;
    }
    em_key(e, key);
    if (e->mode == EM_JSON)
        sb_append(e->b, "null");
}

static void em_opt_dbl(emitter *e, const char *key, bool have, double v)
{
    if (have && isfinite(v)) {
        em_dbl(e, key, v);
        return;
    }
    em_opt_int(e, key, false, 0);
}

static void em_opt_bool(emitter *e, const char *key, bool have, bool v)
{
    if (have) {
        em_bool(e, key, v);
        return;
    }
    em_opt_int(e, key, false, 0);
}

/* A parameter's value: JSON in JSON, plain text in CSV. */
static void em_param(emitter *e, const kf_param *p, int64_t x)
{
    em_key(e, p->name);
    if (e->mode == EM_CSV_HEAD)
        return;
    strbuf t = {0};
    if (e->mode == EM_JSON) {
        param_json(&t, p, x);
        sb_append(e->b, t.s ? t.s : "null");
    } else {
        param_text(&t, p, x);
        csv_field(e->b, t.s ? t.s : "");
    }
    sb_free(&t);
}

static void em_open(emitter *e, const char *key, int *saved)
{
    if (e->mode == EM_JSON) {
        em_key(e, key);
        sb_append(e->b, "{");
        *saved = e->count;
        e->count = 0;
    } else {
        *saved = -1;
        e->prefix = "bench.";
    }
}

static void em_close(emitter *e, int saved)
{
    if (e->mode == EM_JSON) {
        sb_append(e->b, "}");
        e->count = saved;
    } else {
        e->prefix = NULL;
    }
}

static void emit_fields(emitter *e, const kf_result *r, const kf_run_info *info)
{
    const kf_variant *v = &r->v;
    const kf_family *f = family_of(v);
    char label[256];
    f->label(v, label, sizeof label);

    em_str(e, "kforge", KF_VERSION);
    em_str(e, "run", info->run_id);
    em_str(e, "time", info->time);
    em_str(e, "host", info->host);
    em_str(e, "config", info->config);
    if (e->mode == EM_JSON && info->have_dev) {
        const kf_device *d = &info->dev;
        char buf[32];
        em_str(e, "device", r->device_name[0] ? r->device_name : d->name);
        em_int(e, "device_index", r->device >= 0 ? r->device : d->index);
        em_str(e, "uuid", r->device_uuid[0] ? r->device_uuid : d->uuid);
        snprintf(buf, sizeof buf, "%d.%d", d->cc_major, d->cc_minor);
        em_str(e, "cc", buf);
        em_int(e, "sms", d->sms);
        em_int(e, "l2_bytes", d->l2_bytes);
        em_dbl(e, "peak_gbps", d->peak_gbps);
        kf_driver_text(d->driver_version, buf, sizeof buf);
        em_str(e, "driver", buf);
        snprintf(buf, sizeof buf, "%d.%d", d->nvrtc_major, d->nvrtc_minor);
        em_str(e, "nvrtc", buf);
    }
    em_str(e, "name", v->name[0] ? v->name : label); /* never empty: the label stands in (results_case_key agrees) */
    em_str(e, "label", label);
    em_str(e, "kernel", f->name);
    for (int k = 0; k < f->nparams; k++)
        em_param(e, &f->params[k], v->p[k]);
    for (int d = 0; d < f->nsizes; d++)
        em_int(e, f->sizes[d].name, r->shape.d[d]);
    em_str(e, "status", nm(kf_status_names, KF_ST_COUNT, r->status));
    em_str(e, "message", r->message);
    em_str(e, "gpu_value", r->gpu_value);
    em_str(e, "ref_value", r->ref_value);
    em_dbl(e, "abs_err", r->abs_err);
    em_dbl(e, "tolerance", r->tolerance);
    em_opt_dbl(e, "acc_err", r->acc_bound > 0, r->acc_err);
    em_opt_dbl(e, "acc_bound", r->acc_bound > 0, r->acc_bound);
    if (r->planted[0]) {
        em_str(e, "planted", r->planted);
        em_str(e, "planted_effect", r->planted_effect);
    }
    em_bool(e, "deterministic", r->deterministic);
    em_int(e, "launches", r->launches);
    em_int(e, "blocks", r->blocks);
    em_int(e, "regs", r->regs);
    em_int(e, "smem_bytes", r->smem_bytes);
    em_int(e, "occupancy", r->occupancy);
    em_bool(e, "cached", r->cached);
    em_dbl(e, "compile_ms", r->compile_ms);
    em_dbl(e, "setup_ms", r->setup_ms);
    em_dbl(e, "verify_ms", r->verify_ms);
    em_dbl(e, "bench_ms", r->bench_ms);
    const kf_stats *s = &r->stats;
    em_int(e, "reps", s->reps);
    em_dbl(e, "median_ms", s->median_ms);
    em_dbl(e, "min_ms", s->min_ms);
    em_dbl(e, "max_ms", s->max_ms);
    em_dbl(e, "mean_ms", s->mean_ms);
    em_dbl(e, "stddev_ms", s->stddev_ms);
    em_dbl(e, "noise", s->noise);
    em_dbl(e, "gbps", s->gbps);
    em_dbl(e, "pct_peak", s->pct_peak);
    /* NVML (issue 14): null where nothing was read */
    em_bool(e, "nvml", r->nvml);
    em_str(e, "nvml_note", r->nvml_note);
    em_opt_int(e, "sm_mhz_min", r->sm_mhz_min > 0, r->sm_mhz_min);
    em_opt_int(e, "sm_mhz_max", r->sm_mhz_max > 0, r->sm_mhz_max);
    em_opt_int(e, "sm_mhz_limit", r->sm_mhz_limit > 0, r->sm_mhz_limit);
    em_opt_int(e, "mem_mhz", r->mem_mhz > 0, r->mem_mhz);
    em_opt_int(e, "temp_c", r->temp_c > 0, r->temp_c);
    em_opt_dbl(e, "power_w", r->power_w > 0, r->power_w);
    em_opt_bool(e, "throttled", r->throttle_reasons[0] != 0, r->throttled);
    em_str(e, "throttle_reasons", r->throttle_reasons);
    em_opt_dbl(e, "energy_j", r->energy_j > 0, r->energy_j);
    em_opt_int(e, "energy_runs", r->energy_j > 0, r->energy_runs);
    em_opt_dbl(e, "energy_window_s", r->energy_j > 0, r->energy_window_s);
    em_opt_dbl(e, "gb_per_j", r->energy_j > 0 && s->gbps > 0, report_gb_per_j(r));
    const kf_bench *bn = &r->bench;
    int saved;
    em_open(e, "bench", &saved);
    em_int(e, "warmup", bn->warmup);
    em_int(e, "min_reps", bn->min_reps);
    em_int(e, "max_reps", bn->max_reps);
    em_dbl(e, "max_time_s", bn->max_time_s);
    em_dbl(e, "max_noise", bn->max_noise);
    em_bool(e, "flush_l2", bn->flush_l2);
    em_uint(e, "seed", (unsigned long long)bn->seed);
    em_int(e, "offset", bn->offset);
    em_dbl(e, "timeout_s", bn->timeout_s);
    em_bool(e, "energy", bn->energy);
    em_close(e, saved);
}

double report_gb_per_j(const kf_result *r)
{
    /* bytes moved = GB/s x median; per joule of one run */
    if (!(r->energy_j > 0) || !(r->stats.gbps > 0) || !(r->stats.median_ms > 0))
        return 0;
    return r->stats.gbps * r->stats.median_ms / 1e3 / r->energy_j;
}

// ----------------------------------------------------------------------------
// Warnings

bool report_clock_warning(const kf_result *r, char *buf, size_t len)
{
    if (r->status != KF_ST_OK || !r->nvml)
        return false;
    bool below = r->sm_mhz_limit > 0 && r->sm_mhz_min > 0 && r->sm_mhz_min < r->sm_mhz_limit;
    if (!r->throttled && !below)
        return false;
    char clocks[96] = "";
    if (r->sm_mhz_min > 0 && r->sm_mhz_min != r->sm_mhz_max)
        snprintf(clocks, sizeof clocks, "SM clock %d..%d MHz", r->sm_mhz_min, r->sm_mhz_max);
    else if (r->sm_mhz_min > 0)
        snprintf(clocks, sizeof clocks, "SM clock %d MHz", r->sm_mhz_min);
    if (r->throttled)
        snprintf(buf, len, "ran throttled (%s)%s%s", r->throttle_reasons, clocks[0] ? "; " : "", clocks);
    else
        snprintf(buf, len, "ran below its maximum clock: %s", clocks);
    if (r->sm_mhz_limit > 0) {
        size_t at = strlen(buf);
        snprintf(buf + at, len - at, "%s maximum %d MHz", clocks[0] ? "," : "; SM clock", r->sm_mhz_limit);
    }
    return true;
}

static void case_name(const kf_result *r, char *buf, size_t len)
{
    char label[256], st[128];
    const kf_family *f = family_of(&r->v);
    f->label(&r->v, label, sizeof label);
    shape_text(f, &r->shape, st, sizeof st);
    snprintf(buf, len, "%s %s", r->v.name[0] ? r->v.name : label, st);
}

void report_warn(report_warnings *w, const kf_result *r, FILE *f)
{
    if (r->status != KF_ST_OK)
        return;
    char why[256], name[400];
    if (r->nvml_note[0] && strcmp(r->nvml_note, w->last_note) != 0) {
        /* "NVML not available" is the same for every case: say it once */
        if (w->noted < 3) {
            if (r->nvml)
                case_name(r, name, sizeof name);
            fprintf(f, "kforge: note: %s%s%s%s\n", r->nvml ? name : "", r->nvml ? ": " : "", r->nvml_note,
                    r->nvml ? "" : "; no clocks, power or energy are recorded");
            w->noted++;
        } else {
            w->notes_more++;
        }
        snprintf(w->last_note, sizeof w->last_note, "%s", r->nvml_note);
    }
    if (!report_clock_warning(r, why, sizeof why))
        return;
    if (w->warned >= REPORT_WARN_MAX) {
        w->more++;
        return;
    }
    case_name(r, name, sizeof name);
    fprintf(f, "kforge: warning: %s %s\n", name, why);
    w->warned++;
}

void report_warn_end(const report_warnings *w, FILE *f)
{
    if (w->more)
        fprintf(f, "kforge: warning: %d more case%s ran throttled or below the maximum clock (the results file's "
                   "throttled, throttle_reasons and sm_mhz_* say which)\n",
                w->more, w->more == 1 ? "" : "s");
    if (w->notes_more)
        fprintf(f, "kforge: note: %d more NVML note%s (the results file's nvml_note)\n", w->notes_more,
                w->notes_more == 1 ? "" : "s");
}

static const kf_run_info no_info;

char *report_json(const kf_result *res, const kf_run_info *info)
{
    strbuf b = {0};
    emitter e = {EM_JSON, &b, 0, NULL};
    sb_append(&b, "{");
    emit_fields(&e, res, info ? info : &no_info);
    sb_append(&b, "}");
    return sb_take(&b);
}

static char *csv_line(const kf_result *res, const kf_run_info *info, bool header)
{
    strbuf b = {0};
    emitter e = {header ? EM_CSV_HEAD : EM_CSV_ROW, &b, 0, NULL};
    emit_fields(&e, res, info ? info : &no_info);
    sb_append(&b, "\n");
    return sb_take(&b);
}

// ----------------------------------------------------------------------------
// Reports

struct report {
    FILE *out;
    kf_format fmt;
    kf_run_info info;
    report_opts opts;
    kf_result *rows;        /* table and json: kept until report_finish */
    int nrows, cap;
    bool finished;
    bool csv_head;          /* the CSV header is out */
};

report *report_new(FILE *out, kf_format fmt, const kf_run_info *info, const report_opts *o)
{
    report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->out = out;
    r->fmt = fmt;
    if (info)
        r->info = *info;
    if (o)
        r->opts = *o;
    r->csv_head = r->opts.no_header;    /* as if it were out already */
    return r;
}

void report_add(report *r, const kf_result *res)
{
    if (!r || r->finished)
        return;
    if (r->fmt == KF_FMT_CSV) {
        if (!r->csv_head) {     /* the columns of the first row's family */
            char *h = csv_line(res, &r->info, true);
            fputs(h, r->out);
            free(h);
            r->csv_head = true;
        }
        char *line = csv_line(res, &r->info, false);
        fputs(line, r->out);
        if (fflush(r->out) != 0 || ferror(r->out))
            kf_output_broken = 1;   /* EPIPE: the reader is gone; the run stops */
        free(line);
        return;
    }
    if (r->fmt == KF_FMT_JSONL) {
        char *line = report_json(res, &r->info);
        fputs(line, r->out);
        fputc('\n', r->out);
        if (fflush(r->out) != 0 || ferror(r->out))
            kf_output_broken = 1;
        free(line);
        return;
    }
    if (r->nrows == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        kf_result *rows = realloc(r->rows, (size_t)cap * sizeof *rows);
        if (!rows)
            return;
        r->rows = rows;
        r->cap = cap;
    }
    r->rows[r->nrows++] = *res;
}

/* value with 4 significant digits, no exponent: 1.234, 12.34, 123.4, 1234 */
static void sig4(char *buf, size_t len, double v)
{
    int mag = (int)floor(log10(v));
    int dec = 3 - mag;
    if (dec < 0)
        dec = 0;
    snprintf(buf, len, "%.*f", dec, v);
    if (dec > 0 && strtod(buf, NULL) >= pow(10, mag + 1))
        snprintf(buf, len, "%.*f", dec - 1, v);     /* 9.9996 rounded to 10.000 */
}

static void fmt_time(char *buf, size_t len, double ms)
{
    if (!(ms > 0) || !isfinite(ms)) {
        snprintf(buf, len, "-");
        return;
    }
    char num[40];
    bool us = ms < 1;
    sig4(num, sizeof num, us ? ms * 1000 : ms);
    snprintf(buf, len, "%s %s", num, us ? "us" : "ms");
}

/* Energy with 4 significant digits and a unit: "4.802 mJ". */
static void fmt_energy(char *buf, size_t len, double j)
{
    if (!(j > 0) || !isfinite(j)) {
        snprintf(buf, len, "-");
        return;
    }
    char num[40];
    const char *unit = j < 1e-3 ? "uJ" : j < 1 ? "mJ" : "J";
    sig4(num, sizeof num, j < 1e-3 ? j * 1e6 : j < 1 ? j * 1e3 : j);
    snprintf(buf, len, "%s %s", num, unit);
}

/* The columns; those after C_PEAK appear only when asked for (speedups) or
 * when some row has the figure (NVML clocks, energy; md: failure notes). */
enum { C_NAME, C_DTYPE, C_OP, C_N, C_STATUS, C_TIME, C_NOISE, C_GBPS, C_PEAK, C_STEP, C_CUMUL, C_SM, C_ENERGY,
       C_GBPJ, C_NOTE, C_MAX };
static const char *const col_title[C_MAX] = {"name",  "dtype",  "op",     "size",   "status",
                                             "time",  "noise",  "GB/s",   "% peak", "step",
                                             "cumul.", "SM MHz", "energy", "GB/J",   "note"};

#define CELL 96

static const char *status_color(kf_status s)
{
    switch (s) {
    case KF_ST_OK: return "\033[32m";
    case KF_ST_TIMEOUT: case KF_ST_OOM: return "\033[33m";
    default: return "\033[31m";
    }
}

static void pad(strbuf *b, const char *s, int width, bool right)
{
    int fill = width - text_width(s);
    if (right)
        for (int i = 0; i < fill; i++)
            sb_append(b, " ");
    sb_append(b, s);
    if (!right)
        for (int i = 0; i < fill; i++)
            sb_append(b, " ");
}

/* The message of a failed row on one line, cut to width columns. */
static void short_message(const kf_result *res, char *out, size_t outlen, int width)
{
    char msg[KF_MSG_MAX + 128];
    if (res->message[0])
        snprintf(msg, sizeof msg, "%s", res->message);
    else if (res->status == KF_ST_WRONG)
        snprintf(msg, sizeof msg, "got %s, expected %s", res->gpu_value, res->ref_value);
    else
        snprintf(msg, sizeof msg, "%s", kf_status_names[res->status]);
    char *clean = utf8_clean(msg);
    const char *src = clean ? clean : msg;
    size_t o = 0;
    int w = 0;
    bool cut = false;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 4 < outlen; p++) {
        bool starts = (*p & 0xC0) != 0x80;
        if (starts && w >= width - 3 && text_width((const char *)p) + w > width) {
            cut = true;
            break;
        }
        out[o++] = *p < 0x20 ? ' ' : (char)*p;
        w += starts;
    }
    out[o] = 0;
    if (cut)
        snprintf(out + o, outlen - o, "...");
    free(clean);
}

/* A cell of a Markdown table: '|' escaped, no line breaks. */
static void md_cell(strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '|')
            sb_append(b, "\\|");
        else
            sb_appendn(b, (unsigned char)*p < 0x20 ? " " : p, 1);
    }
}

static void print_table(report *r)
{
    bool md = r->fmt == KF_FMT_MD;
    int n = r->nrows;
    char (*cells)[C_MAX][CELL] = calloc(n ? (size_t)n : 1, sizeof *cells);
    bool *marked = calloc(n ? (size_t)n : 1, sizeof *marked);
    if (!cells || !marked) {
        free(cells);
        free(marked);
        return;
    }
    bool on[C_MAX] = {false};
    for (int c = 0; c <= C_PEAK; c++)
        on[c] = true;
    on[C_STEP] = on[C_CUMUL] = r->opts.speedup;
    int width[C_MAX];
    for (int c = 0; c < C_MAX; c++)
        width[c] = text_width(col_title[c]);
    bool any_mark = false;

    for (int i = 0; i < n; i++) {
        const kf_result *res = &r->rows[i];
        char (*row)[CELL] = cells[i];
        if (res->v.name[0])
            snprintf(row[C_NAME], CELL, "%s", res->v.name);
        else
            family_of(&res->v)->label(&res->v, row[C_NAME], CELL);
        snprintf(row[C_DTYPE], CELL, "%s", nm(kf_dtype_names, KF_DTYPE_COUNT, variant_dtype(&res->v)));
        snprintf(row[C_OP], CELL, "%s", nm(kf_op_names, KF_OP_COUNT, variant_op(&res->v)));
        shape_short(family_of(&res->v), &res->shape, row[C_N], CELL);
        snprintf(row[C_STATUS], CELL, "%s", nm(kf_status_names, KF_ST_COUNT, res->status));
        if (res->status != KF_ST_OK) {
            if (md) {   /* text tables lay the message out once the widths are known */
                for (int c = C_TIME; c < C_NOTE; c++)
                    snprintf(row[c], CELL, "-");
                short_message(res, row[C_NOTE], CELL, 80);
                on[C_NOTE] = true;
            }
            continue;
        }

        const kf_stats *s = &res->stats;
        fmt_time(row[C_TIME], CELL, s->median_ms);
        if (s->reps > 1 && isfinite(s->noise))
            snprintf(row[C_NOISE], CELL, "%.1f%%", s->noise * 100);
        else
            snprintf(row[C_NOISE], CELL, "-");
        if (s->gbps > 0)
            snprintf(row[C_GBPS], CELL, "%.1f", s->gbps);
        else
            snprintf(row[C_GBPS], CELL, "-");
        if (s->pct_peak > 0)
            snprintf(row[C_PEAK], CELL, "%.1f", s->pct_peak);
        else
            snprintf(row[C_PEAK], CELL, "-");

        /* speedups against earlier verified rows of the same n */
        const kf_result *prev = NULL, *first = NULL;
        for (int j = 0; j < i; j++) {
            const kf_result *o = &r->rows[j];
            if (o->status != KF_ST_OK || o->v.family != res->v.family || !shape_eq(&o->shape, &res->shape) ||
                !(o->stats.median_ms > 0))
                continue;
            if (!first)
                first = o;
            prev = o;
        }
        if (prev && s->median_ms > 0)
            snprintf(row[C_STEP], CELL, "%.2fx", prev->stats.median_ms / s->median_ms);
        else
            snprintf(row[C_STEP], CELL, "-");
        if (first && s->median_ms > 0)
            snprintf(row[C_CUMUL], CELL, "%.2fx", first->stats.median_ms / s->median_ms);
        else
            snprintf(row[C_CUMUL], CELL, "-");

        /* NVML: the SM clock range, marked when throttled or below the maximum */
        char why[256];
        marked[i] = report_clock_warning(res, why, sizeof why);
        any_mark = any_mark || marked[i];
        if (res->sm_mhz_min > 0) {
            on[C_SM] = true;
            if (res->sm_mhz_max > res->sm_mhz_min)
                snprintf(row[C_SM], CELL, "%d-%d%s", res->sm_mhz_min, res->sm_mhz_max, marked[i] ? "!" : "");
            else
                snprintf(row[C_SM], CELL, "%d%s", res->sm_mhz_min, marked[i] ? "!" : "");
        } else {
            snprintf(row[C_SM], CELL, "%s", marked[i] ? "!" : "-");
        }
        fmt_energy(row[C_ENERGY], CELL, res->energy_j);
        double gbpj = report_gb_per_j(res);
        if (gbpj > 0) {
            on[C_ENERGY] = on[C_GBPJ] = true;
            snprintf(row[C_GBPJ], CELL, "%.1f", gbpj);
        } else {
            snprintf(row[C_GBPJ], CELL, "-");
        }
    }
    if (any_mark)
        on[C_SM] = true;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C_MAX; c++)
            if (on[c] && (c <= C_STATUS || r->rows[i].status == KF_ST_OK || md) &&
                text_width(cells[i][c]) > width[c])
                width[c] = text_width(cells[i][c]);

    strbuf b = {0};
    if (md) {
        sb_append(&b, "|");
        for (int c = 0; c < C_MAX; c++)
            if (on[c])
                sb_printf(&b, " %s |", col_title[c]);
        sb_append(&b, "\n|");
        for (int c = 0; c < C_MAX; c++)
            if (on[c])
                sb_append(&b, c == C_N || (c >= C_TIME && c != C_NOTE) ? "---:|" : "---|");
        sb_append(&b, "\n");
        for (int i = 0; i < n; i++) {
            sb_append(&b, "|");
            for (int c = 0; c < C_MAX; c++)
                if (on[c]) {
                    sb_append(&b, " ");
                    md_cell(&b, cells[i][c][0] ? cells[i][c] : "-");
                    sb_append(&b, " |");
                }
            sb_append(&b, "\n");
        }
    } else {
        /* a failed row's message spans the numeric columns (at least 40 wide) */
        int span = 0;
        for (int c = C_TIME; c < C_MAX; c++)
            if (on[c])
                span += width[c] + (c > C_TIME ? 2 : 0);
        if (span < 40)
            span = 40;
        int total = 0;
        for (int c = 0; c < C_MAX; c++)
            if (on[c]) {
                if (c)
                    sb_append(&b, "  ");
                pad(&b, col_title[c], width[c], c == C_N || c >= C_TIME);
                total += width[c] + (c ? 2 : 0);
            }
        sb_append(&b, "\n");
        for (int i = 0; i < total; i++)
            sb_append(&b, "-");
        sb_append(&b, "\n");

        for (int i = 0; i < n; i++) {
            const kf_result *res = &r->rows[i];
            for (int c = 0; c <= C_STATUS; c++) {
                if (c)
                    sb_append(&b, "  ");
                if (c == C_STATUS && r->opts.color) {
                    sb_append(&b, status_color(res->status));
                    sb_append(&b, cells[i][c]);
                    sb_append(&b, "\033[0m");
                    pad(&b, "", width[c] - text_width(cells[i][c]), false);
                } else {
                    pad(&b, cells[i][c], width[c], c == C_N);
                }
            }
            if (res->status == KF_ST_OK) {
                for (int c = C_TIME; c < C_MAX; c++) {
                    if (!on[c])
                        continue;
                    sb_append(&b, "  ");
                    if (c == C_SM && marked[i] && r->opts.color) {
                        sb_append(&b, "\033[33m");
                        pad(&b, cells[i][c], width[c], true);
                        sb_append(&b, "\033[0m");
                    } else {
                        pad(&b, cells[i][c], width[c], true);
                    }
                }
            } else {
                char msg[KF_MSG_MAX + 8];
                short_message(res, msg, sizeof msg, span);
                sb_append(&b, "  ");
                sb_append(&b, msg);
            }
            sb_append(&b, "\n");
        }
    }
    if (any_mark)
        sb_printf(&b, "%s! ran throttled or below the maximum SM clock (the results file's throttle_reasons say why)\n",
                  md ? "\n" : "");
    if (r->info.have_dev)
        sb_printf(&b, "%sdevice: %s, peak %.1f GB/s\n", md && !any_mark ? "\n" : "", r->info.dev.name,
                  r->info.dev.peak_gbps);
    if (b.s)
        fputs(b.s, r->out);
    sb_free(&b);
    free(cells);
    free(marked);
}

void report_finish(report *r)
{
    if (!r || r->finished)
        return;
    r->finished = true;
    if (r->fmt == KF_FMT_TABLE || r->fmt == KF_FMT_MD) {
        print_table(r);
    } else if (r->fmt == KF_FMT_JSON) {
        fputs("[", r->out);
        for (int i = 0; i < r->nrows; i++) {
            char *line = report_json(&r->rows[i], &r->info);
            fprintf(r->out, "%s\n%s", i ? "," : "", line);
            free(line);
        }
        fputs(r->nrows ? "\n]\n" : "]\n", r->out);
    }
    fflush(r->out);
}

void report_free(report *r)
{
    if (!r)
        return;
    free(r->rows);
    free(r);
}

