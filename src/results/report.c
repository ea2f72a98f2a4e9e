/*
 * report.c -- results as an aligned table, CSV, JSON Lines or JSON, and the
 * shared results file (JSON Lines, appended under flock()).
 *
 * The fields of a result are line.c's table: the JSON line, the CSV
 * header and the CSV rows are all made by walking it, and so is the reader,
 * so they cannot drift apart.
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
#include "worker.h"     /* KF_FAKE_NOT_VERIFIED */

const char *const kf_format_names[KF_FMT_COUNT] = {"table", "csv", "jsonl", "json", "md"};

static const char *nm(const char *const *names, int count, int i)
{
    return i >= 0 && i < count ? names[i] : "?";
}

// ----------------------------------------------------------------------------
// Text helpers

/* Columns a string takes on a terminal: UTF-8 continuation bytes take none. */
static int text_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
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
    if (strncmp(r->message, KF_FAKE_NOT_VERIFIED " (", strlen(KF_FAKE_NOT_VERIFIED " (")) == 0) {
        /* the fake GPU's results of a large case were not checked: say so (the first few) */
        if (w->unverified++ < 3) {
            case_name(r, name, sizeof name);
            fprintf(f, "kforge: note: %s: %s; the fake GPU checks up to %lld outputs and %lld inputs\n", name,
                    r->message, (long long)KF_FAKE_MAX_OUTPUTS, (long long)KF_FAKE_MAX_INPUTS);
        }
    }
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
    if (w->unverified > 3)
        fprintf(f, "kforge: note: %d more case%s not verified on the fake GPU (the results file's message)\n",
                w->unverified - 3, w->unverified == 4 ? "" : "s");
}

char *report_json(const kf_result *res, const kf_run_info *info)
{
    strbuf b = {0};
    line_json(&b, res, info);
    return sb_take(&b);
}

static char *csv_line(const kf_result *res, const kf_run_info *info, bool header, const char *columns)
{
    strbuf b = {0};
    if (columns)
        line_csv_columns(&b, res, info, header, columns);
    else
        line_csv(&b, res, info, header);
    sb_append(&b, "\n");
    return sb_take(&b);
}

// ----------------------------------------------------------------------------
// Reports


#define CELL 96

/* The columns.  Identity columns (what a row is) come from the variant and
 * the shape and are known before a case runs; metric columns from its
 * measurement.  K_AXIS is any parameter of a family's table, K_DIM any of
 * its size dimensions, both by name: nothing here knows a family's axes. */
typedef enum { K_NAME, K_KERNEL, K_AXIS, K_SIZE, K_DIM, K_STATUS,
               K_TIME, K_MIN, K_NOISE, K_GBPS, K_PEAK, K_GFLOPS, K_PEAKF, K_STEP, K_CUMUL, K_SM, K_ENERGY, K_GBPJ,
               K_NOTE } col_kind;

static bool is_metric(col_kind k) { return k >= K_TIME; }

typedef struct column {
    col_kind kind;
    char key[KF_NAME_MAX];      /* K_AXIS, K_DIM: the parameter's or size's name (also the title) */
    const char *title;
    bool right;
} column;

static const char *col_title(const column *c) { return c->title ? c->title : c->key; }

/* One identity item across the cases (or rows): whether it varies, its
 * first value, and its widest text. */
typedef struct tracked {
    col_kind kind;              /* K_NAME, K_KERNEL, K_AXIS, K_SIZE, K_DIM */
    char key[KF_NAME_MAX];
    int seen;                   /* cases that have it */
    bool varies;
    char first[CELL];           /* the first case's value ("" name: none) */
    char first_long[CELL];      /* K_SIZE: "n=1048576" */
    int width;                  /* widest shown text */
    int last_family;            /* K_AXIS: the last raw value, to skip texts already seen */
    int64_t last_raw;
    bool have_last;
} tracked;

#define MAX_TRACKED 96

#define MAX_COLS 128

static void stream_row(report *r, int i);
static void stream_head(report *r);
static void table_foot(const report *r, strbuf *b, bool any_mark);

struct report {
    FILE *out;
    kf_format fmt;
    kf_run_info info;
    report_opts opts;
    kf_result *rows;        /* table and json: kept until report_finish */
    int nrows, cap;
    bool finished;
    bool csv_head;          /* the CSV header is out */
    /* tables: what varies among the cases (report_expect) or the rows */
    struct tracked *trk;
    int ntrk, ntracked;
    bool expect_energy;     /* some case expected measures energy */
    bool expect_flops;      /* some case expected is of a family that counts its flops */
    /* tables: the columns */
    struct column *cols;
    int ncols;
    /* streaming */
    int width[MAX_COLS];
    bool streamed_head, any_mark;
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
    if (r->opts.sort || r->fmt != KF_FMT_TABLE)
        r->opts.stream = false;     /* sorted: at the end */
    r->trk = calloc(MAX_TRACKED, sizeof *r->trk);
    r->cols = calloc(MAX_COLS, sizeof *r->cols);
    if (!r->trk || !r->cols) {
        report_free(r);
        return NULL;
    }
    return r;
}

void report_add(report *r, const kf_result *res)
{
    if (!r || r->finished)
        return;
    if (r->fmt == KF_FMT_CSV) {
        if (!r->csv_head) {     /* the columns of the first row's family */
            char *h = csv_line(res, &r->info, true, r->opts.columns);
            fputs(h, r->out);
            free(h);
            r->csv_head = true;
        }
        char *line = csv_line(res, &r->info, false, r->opts.columns);
        fputs(line, r->out);
        if (fflush(r->out) != 0 || ferror(r->out))
            kf_output_failed();   /* EPIPE: the reader is gone; the run stops */
        free(line);
        return;
    }
    if (r->fmt == KF_FMT_JSONL) {
        char *line = report_json(res, &r->info);
        fputs(line, r->out);
        fputc('\n', r->out);
        if (fflush(r->out) != 0 || ferror(r->out))
            kf_output_failed();
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
    if (r->opts.stream)
        stream_row(r, r->nrows - 1);
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
    kf_sig4(num, sizeof num, j < 1e-3 ? j * 1e6 : j < 1 ? j * 1e3 : j);
    snprintf(buf, len, "%s %s", num, unit);
}


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
    char *clean = line_utf8_clean(msg);
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



static const struct {
    const char *key, *title;
    col_kind kind;
    bool sort_desc;             /* --sort: larger first */
} fixed_cols[] = {
    {"name", "name", K_NAME, false},     {"kernel", "kernel", K_KERNEL, false}, {"size", "size", K_SIZE, false},
    {"status", "status", K_STATUS, false}, {"time", "time", K_TIME, false},   {"min", "min", K_MIN, false},
    {"noise", "noise", K_NOISE, false},  {"gbps", "GB/s", K_GBPS, true},       {"peak", "% peak", K_PEAK, true},
    {"gflops", "GFLOP/s", K_GFLOPS, true}, {"flops_peak", "% FP32", K_PEAKF, true},
    {"step", "step", K_STEP, true},      {"cumul", "cumul.", K_CUMUL, true},   {"sm", "SM MHz", K_SM, true},
    {"energy", "energy", K_ENERGY, false}, {"gbpj", "GB/J", K_GBPJ, true},     {"note", "note", K_NOTE, false}};
#define NFIXED ((int)(sizeof fixed_cols / sizeof fixed_cols[0]))

static int fixed_find(const char *key)
{
    for (int i = 0; i < NFIXED; i++)
        if (strcmp(fixed_cols[i].key, key) == 0)
            return i;
    return -1;
}

static column fixed_column(col_kind k)
{
    column c = {k, "", "", false};
    for (int i = 0; i < NFIXED; i++)
        if (fixed_cols[i].kind == k) {
            c.title = fixed_cols[i].title;
            snprintf(c.key, sizeof c.key, "%s", fixed_cols[i].key);
        }
    c.right = k == K_SIZE || (is_metric(k) && k != K_NOTE);
    return c;
}

/* A parameter (dims: a size dimension) of some family called name: its
 * table entry, or NULL. */
static const kf_param *any_param(const char *name, bool dims)
{
    for (int f = 0; f < kf_nfamilies; f++) {
        const kf_family *fam = kf_families[f];
        int k = dims ? param_find(fam->sizes, fam->nsizes, name) : param_find(fam->params, fam->nparams, name);
        if (k >= 0)
            return dims ? &fam->sizes[k] : &fam->params[k];
    }
    return NULL;
}

static column named_column(const char *key, bool dim)
{
    column c = {dim ? K_DIM : K_AXIS, "", "", false};
    snprintf(c.key, sizeof c.key, "%s", key);
    c.title = NULL; /* the key */
    const kf_param *p = any_param(key, dim);
    c.right = dim || (p && p->kind == KF_PK_INT);
    return c;
}

/* Every key --columns and --sort know, for "did you mean". */
static int all_keys(const char **keys, int max, bool sort)
{
    int n = 0;
    for (int i = 0; i < NFIXED && n < max; i++)
        if (!sort || (fixed_cols[i].kind != K_STEP && fixed_cols[i].kind != K_CUMUL && fixed_cols[i].kind != K_SM &&
                      fixed_cols[i].kind != K_NOTE))
            keys[n++] = fixed_cols[i].key;
    if (!sort && n < max)
        keys[n++] = "axes";
    for (int f = 0; f < kf_nfamilies; f++) {
        const kf_family *fam = kf_families[f];
        for (int k = 0; k < fam->nparams + fam->nsizes && n < max; k++) {
            const char *nm2 = k < fam->nparams ? fam->params[k].name : fam->sizes[k - fam->nparams].name;
            bool dup = false;
            for (int j = 0; j < n && !dup; j++)
                dup = strcmp(keys[j], nm2) == 0;
            if (!dup)
                keys[n++] = nm2;
        }
    }
    return n;
}

static int key_error(const char *what, const char *key, bool sort, char *err, size_t errlen)
{
    const char *keys[256];
    int n = all_keys(keys, 256, sort);
    const char *near = kf_suggest(key, keys, n);
    strbuf b = {0};
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%s%s", i ? ", " : "", keys[i]);
    snprintf(err, errlen, "%s: unknown column '%s'%s%s%s; the columns are: %s", what, key,
             near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", b.s ? b.s : "");
    sb_free(&b);
    return -1;
}

/* --format csv --columns: each a column of the CSV header. */
static int csv_columns_check(const char *spec, char *err, size_t errlen)
{
    if (strcmp(spec, "auto") == 0 || !*spec) {
        snprintf(err, errlen, "--columns: with --format csv, a list of CSV columns such as name,block_size,"
                              "median_ms,gbps (auto is for tables)");
        return -1;
    }
    for (const char *p = spec;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char key[KF_NAME_MAX + 16];
        snprintf(key, sizeof key, "%.*s", (int)(len < sizeof key ? len : sizeof key - 1), p);
        if (!*key) {
            snprintf(err, errlen, "--columns: an empty column name in '%s'", spec);
            return -1;
        }
        if (!line_csv_column(key) && !any_param(key, false) && !any_param(key, true)) {
            snprintf(err, errlen, "--columns: '%s' is not a CSV column (the header of kforge run --format csv "
                                  "names them: status, median_ms, gbps, bench.seed, a parameter or a size)", key);
            return -1;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int report_columns_check(const char *spec, kf_format fmt, char *err, size_t errlen)
{
    if (fmt == KF_FMT_CSV)
        return csv_columns_check(spec, err, errlen);
    if (strcmp(spec, "auto") == 0)
        return 0;
    if (!*spec) {
        snprintf(err, errlen, "--columns: expected auto or a list such as axes,time,gbps");
        return -1;
    }
    for (const char *p = spec;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char key[KF_NAME_MAX];
        snprintf(key, sizeof key, "%.*s", (int)(len < sizeof key ? len : sizeof key - 1), p);
        if (!*key) {
            snprintf(err, errlen, "--columns: an empty column name in '%s'", spec);
            return -1;
        }
        if (strcmp(key, "auto") == 0) {
            snprintf(err, errlen, "--columns: auto stands alone (the columns that vary); 'axes' in a list gives "
                                  "the axes that vary");
            return -1;
        }
        if (strcmp(key, "axes") != 0 && fixed_find(key) < 0 && !any_param(key, false) && !any_param(key, true))
            return key_error("--columns", key, false, err, errlen);
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int report_sort_check(const char *key, char *err, size_t errlen)
{
    const char *k = key[0] == '-' ? key + 1 : key;
    int f = fixed_find(k);
    if (f >= 0 && fixed_cols[f].kind != K_STEP && fixed_cols[f].kind != K_CUMUL && fixed_cols[f].kind != K_SM &&
        fixed_cols[f].kind != K_NOTE)
        return 0;
    if (*k && (any_param(k, false) || any_param(k, true)))
        return 0;
    return key_error("--sort", k, true, err, errlen);
}

// ----------------------------------------------------------------------------
// What varies


static tracked *track_get(report *r, col_kind kind, const char *key)
{
    for (int i = 0; i < r->ntrk; i++)
        if (r->trk[i].kind == kind && strcmp(r->trk[i].key, key) == 0)
            return &r->trk[i];
    if (r->ntrk == MAX_TRACKED)
        return NULL;
    tracked *t = &r->trk[r->ntrk++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    snprintf(t->key, sizeof t->key, "%s", key);
    return t;
}

static void track_text(report *r, tracked *t, const char *raw, const char *shown)
{
    if (!t)
        return;
    if (t->seen++ == 0)
        snprintf(t->first, sizeof t->first, "%s", raw);
    else if (strcmp(t->first, raw) != 0)
        t->varies = true;
    int w = text_width(shown);
    if (w > t->width)
        t->width = w;
    (void)r;
}

/* Notes one case: what it is, for the columns that vary. */
static void track_case(report *r, const kf_variant *v, const kf_shape *s)
{
    const kf_family *f = family_of(v);
    r->ntracked++;
    tracked *t = track_get(r, K_NAME, "name");
    if (t) {
        char label[CELL];
        if (!v->name[0])
            f->label(v, label, sizeof label);
        track_text(r, t, v->name, v->name[0] ? v->name : label);
    }
    track_text(r, track_get(r, K_KERNEL, "kernel"), f->name, f->name);
    for (int k = 0; k < f->nparams; k++) {
        t = track_get(r, K_AXIS, f->params[k].name);
        if (!t)
            continue;
        if (t->have_last && t->last_family == v->family && t->last_raw == v->p[k]) {
            t->seen++;  /* the same value as the case before: same text */
            continue;
        }
        strbuf b = {0};
        param_text(&b, &f->params[k], v->p[k]);
        track_text(r, t, b.s ? b.s : "", b.s ? b.s : "");
        sb_free(&b);
        t->have_last = true;
        t->last_family = v->family;
        t->last_raw = v->p[k];
    }
    char sz[CELL];
    shape_short(f, s, sz, sizeof sz);
    t = track_get(r, K_SIZE, "size");
    if (t && t->seen == 0)
        shape_text(f, s, t->first_long, sizeof t->first_long);
    track_text(r, t, sz, sz);
    for (int d = 0; d < f->nsizes; d++) {
        char x[32];
        snprintf(x, sizeof x, "%lld", (long long)s->d[d]);
        track_text(r, track_get(r, K_DIM, f->sizes[d].name), x, x);
    }
}

void report_expect(report *r, const kf_variant *v, const kf_shape *s, const kf_bench *b)
{
    if (!r)
        return;
    track_case(r, v, s);
    r->expect_energy = r->expect_energy || (b && b->energy);
    r->expect_flops = r->expect_flops || family_of(v)->flops;
}

static bool tracked_varies(const report *r, const tracked *t) { return t->varies || t->seen < r->ntracked; }

// ----------------------------------------------------------------------------
// Layout

static void add_col(report *r, column c)
{
    for (int i = 0; i < r->ncols; i++)
        if (r->cols[i].kind == c.kind && strcmp(r->cols[i].key, c.key) == 0)
            return; /* each once */
    if (r->ncols < MAX_COLS)
        r->cols[r->ncols++] = c;
}

/* The identity columns that vary: name (when the cases have names), the
 * family, every parameter, the size. */
static void add_varying(report *r)
{
    for (int i = 0; i < r->ntrk; i++) {
        const tracked *t = &r->trk[i];
        if (t->kind == K_DIM || !tracked_varies(r, t))
            continue;
        if (t->kind == K_NAME) {
            /* the raw names differ; unnamed rows show their label */
            add_col(r, fixed_column(K_NAME));
        } else if (t->kind == K_AXIS) {
            add_col(r, named_column(t->key, false));
        } else {
            add_col(r, fixed_column(t->kind));
        }
    }
}

/* Decides the columns.  sm, energy, fail: whether some row has a clock
 * figure, an energy figure, a failure (md's note column); flops: some row's
 * family counts its flops (GFLOP/s and % of the FP32 peak). */
static void lay_out(report *r, bool sm, bool energy, bool fail, bool flops)
{
    bool md = r->fmt == KF_FMT_MD;
    const char *spec = r->opts.columns;
    r->ncols = 0;
    if (!spec || strcmp(spec, "auto") == 0) {
        if (!spec) {
            add_col(r, fixed_column(K_NAME));
            /* dtype and op where some row's family has them (a custom kernel's has not) */
            for (int k = 0; k < 2; k++) {
                const char *key = k ? "op" : "dtype";
                bool has = false;
                for (int i = 0; i < r->nrows && !has; i++)
                    has = param_find(family_of(&r->rows[i].v)->params, family_of(&r->rows[i].v)->nparams, key) >= 0;
                for (int t = 0; t < r->ntrk && !has; t++)
                    has = r->trk[t].kind == K_AXIS && strcmp(r->trk[t].key, key) == 0;
                if (has || (r->nrows == 0 && r->ntrk == 0))   /* no rows: the usual header */
                    add_col(r, named_column(key, false));
            }
            add_col(r, fixed_column(K_SIZE));
        } else {
            add_varying(r);
        }
        static const col_kind metrics[] = {K_STATUS, K_TIME, K_NOISE, K_GBPS, K_PEAK};
        for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
            add_col(r, fixed_column(metrics[i]));
        if (flops) {
            add_col(r, fixed_column(K_GFLOPS));
            add_col(r, fixed_column(K_PEAKF));
        }
        if (r->opts.speedup) {
            add_col(r, fixed_column(K_STEP));
            add_col(r, fixed_column(K_CUMUL));
        }
        if (sm)
            add_col(r, fixed_column(K_SM));
        if (energy) {
            add_col(r, fixed_column(K_ENERGY));
            add_col(r, fixed_column(K_GBPJ));
        }
    } else {
        for (const char *p = spec;;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            char key[KF_NAME_MAX];
            snprintf(key, sizeof key, "%.*s", (int)(len < sizeof key ? len : sizeof key - 1), p);
            int fx = fixed_find(key);
            if (strcmp(key, "axes") == 0)
                add_varying(r);
            else if (fx >= 0)
                add_col(r, fixed_column(fixed_cols[fx].kind));
            else if (any_param(key, false))
                add_col(r, named_column(key, false));
            else if (any_param(key, true))
                add_col(r, named_column(key, true));
            if (!e)
                break;
            p = e + 1;
        }
    }
    if (md && fail)
        add_col(r, fixed_column(K_NOTE));
}

/* The identity items the same in every row and not shown as a column:
 * "name=mine kernel=reduce dtype=float32 ... n=1048576". */
static void constants_text(const report *r, strbuf *b)
{
    for (int i = 0; i < r->ntrk; i++) {
        const tracked *t = &r->trk[i];
        if (t->kind == K_DIM || tracked_varies(r, t) || (t->kind == K_NAME && !t->first[0]))
            continue;
        bool shown = false;
        for (int c = 0; c < r->ncols && !shown; c++)
            shown = r->cols[c].kind == t->kind && (t->kind != K_AXIS || strcmp(r->cols[c].key, t->key) == 0);
        if (shown)
            continue;
        if (b->len)
            sb_append(b, " ");
        if (t->kind == K_SIZE)
            sb_append(b, t->first_long);
        else
            sb_printf(b, "%s=%s", t->key, t->first);
    }
}

// ----------------------------------------------------------------------------
// Cells

/* The text of row i's cell in column c (rows before i: for the speedups).
 * *marked: the row ran throttled or below the maximum clock. */
static void cell_text(const report *r, const column *c, int i, char *buf, bool *marked)
{
    const kf_result *res = &r->rows[i];
    const kf_family *f = family_of(&res->v);
    const kf_stats *s = &res->stats;
    bool ok = res->status == KF_ST_OK;
    buf[0] = 0;
    if (is_metric(c->kind) && c->kind != K_NOTE && !ok) {
        snprintf(buf, CELL, "-");
        return;
    }
    switch (c->kind) {
    case K_NAME:
        if (res->v.name[0])
            snprintf(buf, CELL, "%s", res->v.name);
        else
            f->label(&res->v, buf, CELL);
        break;
    case K_KERNEL: snprintf(buf, CELL, "%s", f->name); break;
    case K_AXIS: {
        int k = param_find(f->params, f->nparams, c->key);
        strbuf b = {0};
        if (k >= 0)
            param_text(&b, &f->params[k], res->v.p[k]);
        snprintf(buf, CELL, "%s", b.s ? b.s : "-");
        sb_free(&b);
        break;
    }
    case K_SIZE: shape_short(f, &res->shape, buf, CELL); break;
    case K_DIM: {
        int d = param_find(f->sizes, f->nsizes, c->key);
        if (d >= 0)
            snprintf(buf, CELL, "%lld", (long long)res->shape.d[d]);
        else
            snprintf(buf, CELL, "-");
        break;
    }
    case K_STATUS: snprintf(buf, CELL, "%s", nm(kf_status_names, KF_ST_COUNT, res->status)); break;
    case K_TIME: kf_fmt_ms(buf, CELL, s->median_ms, true); break;
    case K_MIN: kf_fmt_ms(buf, CELL, s->min_ms, true); break;
    case K_NOISE:
        if (s->reps > 1 && isfinite(s->noise))
            snprintf(buf, CELL, "%.1f%%", s->noise * 100);
        else
            snprintf(buf, CELL, "-");
        break;
    case K_GBPS:
        if (s->gbps > 0)
            snprintf(buf, CELL, "%.1f", s->gbps);
        else
            snprintf(buf, CELL, "-");
        break;
    case K_PEAK:
        if (s->pct_peak > 0)
            snprintf(buf, CELL, "%.1f", s->pct_peak);
        else
            snprintf(buf, CELL, "-");
        break;
    case K_GFLOPS:
        if (s->gflops > 0)
            snprintf(buf, CELL, "%.1f", s->gflops);
        else
            snprintf(buf, CELL, "-");
        break;
    case K_PEAKF:
        if (s->pct_peak_flops > 0)
            snprintf(buf, CELL, "%.1f", s->pct_peak_flops);
        else
            snprintf(buf, CELL, "-");
        break;
    case K_STEP:
    case K_CUMUL: {
        /* against earlier verified rows of the same shape */
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
        const kf_result *base = c->kind == K_STEP ? prev : first;
        if (base && s->median_ms > 0)
            snprintf(buf, CELL, "%.2fx", base->stats.median_ms / s->median_ms);
        else
            snprintf(buf, CELL, "-");
        break;
    }
    case K_SM: {
        /* the SM clock range, marked when throttled or below the maximum */
        char why[256];
        bool m = report_clock_warning(res, why, sizeof why);
        if (marked)
            *marked = m;
        if (res->sm_mhz_min > 0 && res->sm_mhz_max > res->sm_mhz_min)
            snprintf(buf, CELL, "%d-%d%s", res->sm_mhz_min, res->sm_mhz_max, m ? "!" : "");
        else if (res->sm_mhz_min > 0)
            snprintf(buf, CELL, "%d%s", res->sm_mhz_min, m ? "!" : "");
        else
            snprintf(buf, CELL, "%s", m ? "!" : "-");
        break;
    }
    case K_ENERGY: fmt_energy(buf, CELL, res->energy_j); break;
    case K_GBPJ: {
        double g = report_gb_per_j(res);
        if (g > 0)
            snprintf(buf, CELL, "%.1f", g);
        else
            snprintf(buf, CELL, "-");
        break;
    }
    case K_NOTE:
        if (!ok)
            short_message(res, buf, CELL, 80);
        break;
    }
}

// ----------------------------------------------------------------------------
// Rendering

/* Text tables: the line of constants (wrapped), the titles, the rule. */
static void text_head(const report *r, strbuf *b, const int *width)
{
    if (r->opts.columns) {
        strbuf c = {0};
        constants_text(r, &c);
        if (c.s) {
            /* "same in every row: a=1 b=2 ...", wrapped at 100 columns */
            int col = 0;
            sb_append(b, "same in every row:");
            col = 18;
            for (char *p = c.s; *p;) {
                char *sp = strchr(p, ' ');
                int len = sp ? (int)(sp - p) : (int)strlen(p);
                if (col + 1 + len > 100 && col > 2) {
                    sb_append(b, "\n ");
                    col = 1;
                }
                sb_printf(b, " %.*s", len, p);
                col += 1 + len;
                p += len + (sp ? 1 : 0);
            }
            sb_append(b, "\n");
        }
        sb_free(&c);
    }
    int total = 0;
    for (int c = 0; c < r->ncols; c++) {
        if (c)
            sb_append(b, "  ");
        pad(b, col_title(&r->cols[c]), width[c], r->cols[c].right);
        total += width[c] + (c ? 2 : 0);
    }
    sb_append(b, "\n");
    for (int i = 0; i < total; i++)
        sb_append(b, "-");
    sb_append(b, "\n");
}

/* One row of a text table.  A failed row's message takes the place of the
 * metric columns at its end (at least 40 columns wide). */
static void text_row(const report *r, strbuf *b, int i, const int *width, bool *any_mark)
{
    const kf_result *res = &r->rows[i];
    bool ok = res->status == KF_ST_OK, said = false;
    char cell[CELL];
    for (int c = 0; c < r->ncols; c++) {
        const column *col = &r->cols[c];
        if (!ok && is_metric(col->kind)) {
            bool identity_after = false;
            for (int d = c + 1; d < r->ncols; d++)
                identity_after = identity_after || !is_metric(r->cols[d].kind);
            if (!identity_after) {
                int span = 0;
                for (int d = c; d < r->ncols; d++)
                    span += width[d] + (d > c ? 2 : 0);
                if (span < 40)
                    span = 40;
                char msg[KF_MSG_MAX + 8];
                short_message(res, msg, sizeof msg, span);
                sb_append(b, c ? "  " : "");
                sb_append(b, msg);
                said = true;
                break;
            }
        }
        if (c)
            sb_append(b, "  ");
        bool marked = false;
        cell_text(r, col, i, cell, &marked);
        if (col->kind == K_STATUS && r->opts.color) {
            sb_append(b, status_color(res->status));
            sb_append(b, cell);
            sb_append(b, "\033[0m");
            pad(b, "", width[c] - text_width(cell), false);
        } else if (col->kind == K_SM && marked && r->opts.color) {
            sb_append(b, "\033[33m");
            pad(b, cell, width[c], true);
            sb_append(b, "\033[0m");
        } else {
            pad(b, cell, width[c], col->right);
        }
        if (marked && any_mark)
            *any_mark = true;
    }
    if (!ok && !said) {
        char msg[KF_MSG_MAX + 8];
        short_message(res, msg, sizeof msg, 80);
        sb_append(b, "  ");
        sb_append(b, msg);
    }
    sb_append(b, "\n");
}

/* The footnote and the device line after a table. */
static void table_foot(const report *r, strbuf *b, bool any_mark)
{
    bool md = r->fmt == KF_FMT_MD;
    if (any_mark)
        sb_printf(b, "%s! ran throttled or below the maximum SM clock (the results file's throttle_reasons say why)\n",
                  md ? "\n" : "");
    bool flops = false; /* % FP32 is of this peak: say it, or that it is not known */
    for (int c = 0; c < r->ncols; c++)
        flops = flops || r->cols[c].kind == K_PEAKF;
    char fp[96] = "";
    if (flops && r->info.dev.peak_gflops > 0)
        snprintf(fp, sizeof fp, ", FP32 peak %.0f GFLOP/s", r->info.dev.peak_gflops);
    else if (flops)
        snprintf(fp, sizeof fp, ", FP32 peak not known for cc %d.%d", r->info.dev.cc_major, r->info.dev.cc_minor);
    if (r->info.have_dev)
        sb_printf(b, "%sdevice: %s, peak %.1f GB/s%s\n", md && !any_mark ? "\n" : "", r->info.dev.name,
                  r->info.dev.peak_gbps, fp);
}

/* --sort: a stable order of the rows by one key. */
static const report *sort_report;
static const char *sort_key;
static col_kind sort_kind;
static bool sort_desc;

static double sort_metric(const kf_result *x)
{
    switch (sort_kind) {
    case K_TIME: return x->stats.median_ms;
    case K_MIN: return x->stats.min_ms;
    case K_NOISE: return x->stats.noise;
    case K_GBPS: return x->stats.gbps;
    case K_PEAK: return x->stats.pct_peak;
    case K_GFLOPS: return x->stats.gflops;
    case K_PEAKF: return x->stats.pct_peak_flops;
    case K_ENERGY: return x->energy_j;
    case K_GBPJ: return report_gb_per_j(x);
    default: return 0;
    }
}

static int cmp_rows(const void *pa, const void *pb)
{
    const kf_result *a = &sort_report->rows[*(const int *)pa], *b = &sort_report->rows[*(const int *)pb];
    int c = 0;
    if (is_metric(sort_kind)) {
        double x = sort_metric(a), y = sort_metric(b);
        bool hx = a->status == KF_ST_OK && x > 0 && isfinite(x), hy = b->status == KF_ST_OK && y > 0 && isfinite(y);
        if (hx != hy)
            return hx ? -1 : 1;    /* rows without the figure last, whatever the direction */
        c = !hx ? 0 : (x > y) - (x < y);
    } else if (sort_kind == K_AXIS || sort_kind == K_DIM) {
        const kf_family *fa = family_of(&a->v), *fb = family_of(&b->v);
        bool dim = sort_kind == K_DIM;
        int ka = dim ? param_find(fa->sizes, fa->nsizes, sort_key) : param_find(fa->params, fa->nparams, sort_key);
        int kb = dim ? param_find(fb->sizes, fb->nsizes, sort_key) : param_find(fb->params, fb->nparams, sort_key);
        if ((ka >= 0) != (kb >= 0))
            return ka >= 0 ? -1 : 1;
        if (ka >= 0) {
            int64_t x = dim ? a->shape.d[ka] : a->v.p[ka], y = dim ? b->shape.d[kb] : b->v.p[kb];
            c = (x > y) - (x < y);
        }
    } else if (sort_kind == K_SIZE) {
        for (int d = 0; d < KF_MAX_DIMS && !c; d++)
            c = (a->shape.d[d] > b->shape.d[d]) - (a->shape.d[d] < b->shape.d[d]);
    } else if (sort_kind == K_STATUS) {
        c = (a->status > b->status) - (a->status < b->status);
    } else {
        char x[CELL], y[CELL];
        column col = fixed_column(sort_kind);
        cell_text(sort_report, &col, *(const int *)pa, x, NULL);
        cell_text(sort_report, &col, *(const int *)pb, y, NULL);
        c = strcmp(x, y);
    }
    if (sort_desc)
        c = -c;
    if (c)
        return c;
    return (*(const int *)pa > *(const int *)pb) - (*(const int *)pa < *(const int *)pb);
}

static void sort_rows(report *r)
{
    const char *key = r->opts.sort;
    if (!key || r->nrows < 2)
        return;
    bool rev = key[0] == '-';
    if (rev)
        key++;
    int fx = fixed_find(key);
    if (fx >= 0) {
        sort_kind = fixed_cols[fx].kind;
        sort_desc = fixed_cols[fx].sort_desc;
    } else {
        sort_kind = any_param(key, false) ? K_AXIS : K_DIM;
        sort_desc = false;
    }
    sort_desc = sort_desc != rev;
    sort_key = key;
    sort_report = r;
    int *idx = malloc(sizeof *idx * (size_t)r->nrows);
    kf_result *sorted = malloc(sizeof *sorted * (size_t)r->nrows);
    if (idx && sorted) {
        for (int i = 0; i < r->nrows; i++)
            idx[i] = i;
        qsort(idx, (size_t)r->nrows, sizeof *idx, cmp_rows);
        for (int i = 0; i < r->nrows; i++)
            sorted[i] = r->rows[idx[i]];
        memcpy(r->rows, sorted, sizeof *sorted * (size_t)r->nrows);
    }
    free(idx);
    free(sorted);
    sort_report = NULL;
}

/* The columns of a table printed whole: those that appear only when some
 * row has them (SM clocks, energy, a failure's note), and with --columns
 * what varies among the rows themselves. */
static void table_columns(report *r)
{
    bool sm = false, energy = false, fail = false, flops = false;
    for (int i = 0; i < r->nrows; i++) {
        const kf_result *res = &r->rows[i];
        char why[256];
        flops = flops || family_of(&res->v)->flops;
        if (res->status != KF_ST_OK) {
            fail = true;
            continue;
        }
        sm = sm || res->sm_mhz_min > 0 || report_clock_warning(res, why, sizeof why);
        energy = energy || report_gb_per_j(res) > 0;
    }
    if (r->opts.columns) {
        r->ntrk = r->ntracked = 0;
        for (int i = 0; i < r->nrows; i++)
            track_case(r, &r->rows[i].v, &r->rows[i].shape);
    }
    lay_out(r, sm, energy, fail, flops);
}

/* Every cell's text (cells[row * ncols + col]) and each column's width:
 * its title's or its widest cell's (a failed row's figures do not count in
 * a text table: its message spans them). */
static void table_cells(report *r, char (*cells)[CELL], int *width)
{
    bool md = r->fmt == KF_FMT_MD;
    int nc = r->ncols;
    for (int c = 0; c < nc; c++)
        width[c] = text_width(col_title(&r->cols[c]));
    for (int i = 0; i < r->nrows; i++)
        for (int c = 0; c < nc; c++) {
            char *cell = cells[(size_t)i * (size_t)nc + (size_t)c];
            cell_text(r, &r->cols[c], i, cell, NULL);
            if ((!is_metric(r->cols[c].kind) || r->rows[i].status == KF_ST_OK || md) && text_width(cell) > width[c])
                width[c] = text_width(cell);
        }
}

/* A Markdown table of the cells; *any_mark: an SM clock marked '!'. */
static void md_table(const report *r, strbuf *b, char (*cells)[CELL], bool *any_mark)
{
    int nc = r->ncols;
    if (r->opts.columns) {
        strbuf c = {0};
        constants_text(r, &c);
        if (c.s)
            sb_printf(b, "Same in every row: %s\n\n", c.s);
        sb_free(&c);
    }
    sb_append(b, "|");
    for (int c = 0; c < nc; c++)
        sb_printf(b, " %s |", col_title(&r->cols[c]));
    sb_append(b, "\n|");
    for (int c = 0; c < nc; c++)
        sb_append(b, r->cols[c].right ? "---:|" : "---|");
    sb_append(b, "\n");
    for (int i = 0; i < r->nrows; i++) {
        sb_append(b, "|");
        for (int c = 0; c < nc; c++) {
            const char *cell = cells[(size_t)i * (size_t)nc + (size_t)c];
            sb_append(b, " ");
            md_cell(b, cell[0] ? cell : "-");
            sb_append(b, " |");
            if (r->cols[c].kind == K_SM && strchr(cell, '!'))
                *any_mark = true;
        }
        sb_append(b, "\n");
    }
}

/* A table or Markdown table of every row, at report_finish: sorted, its
 * columns from the rows, aligned to the widest cell. */
static void print_table(report *r)
{
    sort_rows(r);
    table_columns(r);
    int n = r->nrows, nc = r->ncols;
    char (*cells)[CELL] = calloc((size_t)(n ? n : 1) * (size_t)(nc ? nc : 1), sizeof *cells);
    if (!cells)
        return;
    int width[MAX_COLS];
    table_cells(r, cells, width);
    strbuf b = {0};
    bool any_mark = false;
    if (r->fmt == KF_FMT_MD) {
        md_table(r, &b, cells, &any_mark);
    } else {
        text_head(r, &b, width);
        for (int i = 0; i < n; i++)
            text_row(r, &b, i, width, &any_mark);
    }
    table_foot(r, &b, any_mark);
    if (b.s)
        fputs(b.s, r->out);
    sb_free(&b);
    free(cells);
}

// ----------------------------------------------------------------------------
// Streaming: a text table on a terminal, one row as each case finishes

/* The columns and their widths before any row: from the cases expected
 * (report_expect), the metric columns at the widths their usual values take. */
static void stream_head(report *r)
{
    r->streamed_head = true;
    if (r->ntracked == 0 && r->nrows > 0)
        track_case(r, &r->rows[0].v, &r->rows[0].shape);
    if (r->nrows > 0 && family_of(&r->rows[0].v)->flops)
        r->expect_flops = true;
    lay_out(r, false, r->expect_energy, false, r->expect_flops);
    for (int c = 0; c < r->ncols; c++) {
        const column *col = &r->cols[c];
        int w = text_width(col_title(col));
        int usual = 0;
        switch (col->kind) {
        case K_TIME: case K_MIN: case K_ENERGY: usual = 8; break;    /* "9.603 us" */
        case K_NOISE: case K_PEAK: case K_PEAKF: usual = 5; break;   /* "12.5%", "100.0" */
        case K_GFLOPS: usual = 7; break;                             /* "12345.6" */
        case K_GBPS: usual = 6; break;                               /* "3352.3" */
        case K_STEP: case K_CUMUL: usual = 5; break;                 /* "1.23x" */
        case K_STATUS: usual = 2; break;                             /* "ok"; failures say more */
        default:
            for (int t = 0; t < r->ntrk; t++)
                if (r->trk[t].kind == (col->kind == K_AXIS ? K_AXIS : col->kind) &&
                    (col->kind != K_AXIS && col->kind != K_DIM ? true : strcmp(r->trk[t].key, col->key) == 0))
                    usual = r->trk[t].width;
            break;
        }
        r->width[c] = w > usual ? w : usual;
    }
    strbuf b = {0};
    text_head(r, &b, r->width);
    fputs(b.s, r->out);
    sb_free(&b);
}

static void stream_row(report *r, int i)
{
    if (!r->streamed_head)
        stream_head(r);
    strbuf b = {0};
    text_row(r, &b, i, r->width, &r->any_mark);
    fputs(b.s, r->out);
    sb_free(&b);
    if (fflush(r->out) != 0 || ferror(r->out))
        kf_output_failed();
}

void report_describe(const report *r, const kf_result *res, char *buf, size_t len)
{
    /* the identity items that vary among the cases expected, else the label */
    strbuf b = {0};
    const kf_family *f = family_of(&res->v);
    for (int t = 0; r && t < r->ntrk; t++) {
        const tracked *x = &r->trk[t];
        if (x->kind == K_DIM || !tracked_varies(r, x))
            continue;
        if (b.len)
            sb_append(&b, " ");
        if (x->kind == K_NAME) {
            sb_append(&b, res->v.name[0] ? res->v.name : "-");
        } else if (x->kind == K_KERNEL) {
            sb_append(&b, f->name);
        } else if (x->kind == K_SIZE) {
            char st[CELL];
            shape_text(f, &res->shape, st, sizeof st);
            sb_append(&b, st);
        } else {
            int k = param_find(f->params, f->nparams, x->key);
            if (k < 0)
                continue;
            sb_printf(&b, "%s=", x->key);
            param_text(&b, &f->params[k], res->v.p[k]);
        }
    }
    if (b.s)
        snprintf(buf, len, "%s", b.s);
    else
        variant_label(&res->v, buf, len);
    sb_free(&b);
}

void report_finish(report *r)
{
    if (!r || r->finished)
        return;
    r->finished = true;
    if (r->opts.stream) {
        strbuf b = {0};
        if (!r->streamed_head)
            stream_head(r);
        table_foot(r, &b, r->any_mark);
        if (b.s)
            fputs(b.s, r->out);
        sb_free(&b);
    } else if (r->fmt == KF_FMT_TABLE || r->fmt == KF_FMT_MD) {
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
    free(r->trk);
    free(r->cols);
    free(r);
}

