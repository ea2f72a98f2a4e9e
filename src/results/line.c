/*
 * line.c -- see line.h.  cJSON stays inside the results room (this file and
 * results.c) and config.c, whose parameter decoder the reader uses.
 */
#include "line.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fields.h"
#include "config.h"
#include "family.h"
#include "param.h"
#include "report.h"     /* report_gb_per_j */

// ----------------------------------------------------------------------------
// The field table

typedef enum {
    F_STR, F_INT, F_I64, F_DBL, F_BOOL,     /* a member of kf_result and/or kf_run_info */
    F_DEVICE,       /* F_STR, and the case identity's GPU model */
    F_VERSION,      /* "9.0": two ints side by side in kf_run_info (major, minor) */
    F_DRIVER,       /* "13.0": kf_device's driver_version (kf_driver_text) */
    F_KFORGE,       /* the writer's version; not read back */
    F_NAME,         /* the variant's name, its label when it has none */
    F_LABEL,        /* the variant's label; not read back */
    F_KERNEL,       /* the family's name */
    F_PARAMS,       /* one field per parameter of the family's table */
    F_SIZES,        /* one field per size dimension of the family */
    F_AXIS_NAMES,   /* the names of the F_PARAMS fields, a list; not read back */
    F_SIZE_NAMES,   /* the names of the F_SIZES fields, a list; not read back */
    F_STATUS,       /* kf_status_names */
    F_GB_PER_J,     /* computed (report_gb_per_j); not read back */
    F_BENCH         /* the object of core/bench_fields.h's table */
} ftype;

enum {
    DEV = 1,        /* only in JSON, and only when the run knows its device */
    OMIT = 2,       /* left out (not null) unless have() */
    POS = 4,        /* null unless the value is > 0 (a figure not read) */
    IDENT = 8,      /* part of the case identity */
    REQ = 16,       /* a line without it is not a results line (sizes: but the optional ones) */
    JSON = 32       /* only in JSON (a CSV file's header names its columns) */
};

typedef struct {
    const char *name;
    ftype type;
    unsigned flags;
    /* where the value lives: in the result (in_res), the run (in_run) or
     * both (the device: the result's when it has one, else the run's) */
    bool in_res, in_run;
    size_t res, rlen;           /* offset in kf_result; strings: the buffer's size */
    size_t run, ilen;           /* offset in kf_run_info; strings: the buffer's size */
    /* NULL: always a value; else null (OMIT: left out) unless have(r) */
    bool (*have)(const kf_result *r);
    int64_t lo, hi;             /* F_I64: the range read back */
} field;

#define RES(m) .in_res = true, .res = offsetof(kf_result, m), .rlen = sizeof(((kf_result *)0)->m)
#define RUN(m) .in_run = true, .run = offsetof(kf_run_info, m), .ilen = sizeof(((kf_run_info *)0)->m)

static bool have_acc(const kf_result *r) { return r->acc_bound > 0; }
static bool have_planted(const kf_result *r) { return r->planted[0] != 0; }
static bool have_throttle(const kf_result *r) { return r->throttle_reasons[0] != 0; }
static bool have_energy(const kf_result *r) { return r->energy_j > 0; }
static bool have_gb_per_j(const kf_result *r) { return r->energy_j > 0 && r->stats.gbps > 0; }
static bool have_source_hash(const kf_result *r) { return r->source_hash[0] != 0; }
/* a family that counts its flops (kf_family.flops): its lines carry
 * gflops, pct_peak_flops and the device's peak_gflops (null where a figure
 * is missing); others leave them out */
static bool have_flops(const kf_result *r) { return family_of(&r->v)->flops != NULL; }

/* In the order of the line. */
static const field fields[] = {
    {.name = "kforge", .type = F_KFORGE, .flags = 0},
    {.name = "run", .type = F_STR, .flags = 0, RUN(run_id)},
    {.name = "time", .type = F_STR, .flags = 0, RUN(time)},
    {.name = "host", .type = F_STR, .flags = 0, RUN(host)},
    {.name = "config", .type = F_STR, .flags = 0, RUN(config)},
    {.name = "device", .type = F_DEVICE, .flags = DEV | IDENT, RES(device_name), RUN(dev.name)},
    {.name = "device_index", .type = F_INT, .flags = DEV, RES(device), RUN(dev.index)},
    {.name = "uuid", .type = F_STR, .flags = DEV, RES(device_uuid), RUN(dev.uuid)},
    {.name = "cc", .type = F_VERSION, .flags = DEV, RUN(dev.cc_major)},
    {.name = "sms", .type = F_INT, .flags = DEV, RUN(dev.sms)},
    {.name = "l2_bytes", .type = F_I64, .flags = DEV, RUN(dev.l2_bytes), .lo = 0, .hi = INT64_MAX},
    {.name = "peak_gbps", .type = F_DBL, .flags = DEV, RUN(dev.peak_gbps)},
    {.name = "peak_gflops", .type = F_DBL, .flags = DEV | OMIT | POS, RUN(dev.peak_gflops), .have = have_flops},
    {.name = "driver", .type = F_DRIVER, .flags = DEV, RUN(dev.driver_version)},
    {.name = "nvrtc", .type = F_VERSION, .flags = DEV, RUN(dev.nvrtc_major)},
    {.name = "name", .type = F_NAME, .flags = IDENT},
    {.name = "label", .type = F_LABEL, .flags = 0},
    {.name = "kernel", .type = F_KERNEL, .flags = IDENT},
    {.name = "", .type = F_PARAMS, .flags = IDENT | REQ},
    {.name = "", .type = F_SIZES, .flags = IDENT | REQ},
    /* which fields are the parameters and which the sizes, so that a
     * reader that does not know the family (tools/plot.py) can tell */
    {.name = "axes", .type = F_AXIS_NAMES, .flags = JSON},
    {.name = "sizes", .type = F_SIZE_NAMES, .flags = JSON},
    {.name = "status", .type = F_STATUS, .flags = REQ},
    {.name = "message", .type = F_STR, .flags = 0, RES(message)},
    {.name = "gpu_value", .type = F_STR, .flags = 0, RES(gpu_value)},
    {.name = "ref_value", .type = F_STR, .flags = 0, RES(ref_value)},
    {.name = "abs_err", .type = F_DBL, .flags = 0, RES(abs_err)},
    {.name = "tolerance", .type = F_DBL, .flags = 0, RES(tolerance)},
    {.name = "acc_err", .type = F_DBL, .flags = 0, RES(acc_err), .have = have_acc},
    {.name = "acc_bound", .type = F_DBL, .flags = 0, RES(acc_bound), .have = have_acc},
    {.name = "acc_rel", .type = F_DBL, .flags = 0, RES(acc_rel), .have = have_acc},
    {.name = "planted", .type = F_STR, .flags = OMIT, RES(planted), .have = have_planted},
    {.name = "planted_effect", .type = F_STR, .flags = OMIT, RES(planted_effect), .have = have_planted},
    {.name = "deterministic", .type = F_BOOL, .flags = 0, RES(deterministic)},
    {.name = "launches", .type = F_INT, .flags = 0, RES(launches)},
    {.name = "blocks", .type = F_I64, .flags = 0, RES(blocks), .lo = INT64_MIN, .hi = INT64_MAX},
    {.name = "regs", .type = F_INT, .flags = 0, RES(regs)},
    {.name = "smem_bytes", .type = F_INT, .flags = 0, RES(smem_bytes)},
    {.name = "occupancy", .type = F_INT, .flags = 0, RES(occupancy)},
    {.name = "cached", .type = F_BOOL, .flags = 0, RES(cached)},
    /* a user's kernel: which source and headers it ran (family.h);
     * built-in families' lines leave it out */
    {.name = "source_hash", .type = F_STR, .flags = OMIT | JSON, RES(source_hash), .have = have_source_hash},
    {.name = "compile_ms", .type = F_DBL, .flags = 0, RES(compile_ms)},
    {.name = "setup_ms", .type = F_DBL, .flags = 0, RES(setup_ms)},
    {.name = "verify_ms", .type = F_DBL, .flags = 0, RES(verify_ms)},
    {.name = "bench_ms", .type = F_DBL, .flags = 0, RES(bench_ms)},
    {.name = "reps", .type = F_INT, .flags = 0, RES(stats.reps)},
    {.name = "median_ms", .type = F_DBL, .flags = 0, RES(stats.median_ms)},
    {.name = "min_ms", .type = F_DBL, .flags = 0, RES(stats.min_ms)},
    {.name = "max_ms", .type = F_DBL, .flags = 0, RES(stats.max_ms)},
    {.name = "mean_ms", .type = F_DBL, .flags = 0, RES(stats.mean_ms)},
    {.name = "stddev_ms", .type = F_DBL, .flags = 0, RES(stats.stddev_ms)},
    {.name = "noise", .type = F_DBL, .flags = 0, RES(stats.noise)},
    {.name = "gbps", .type = F_DBL, .flags = 0, RES(stats.gbps)},
    {.name = "pct_peak", .type = F_DBL, .flags = 0, RES(stats.pct_peak)},
    {.name = "gflops", .type = F_DBL, .flags = OMIT | POS, RES(stats.gflops), .have = have_flops},
    {.name = "pct_peak_flops", .type = F_DBL, .flags = OMIT | POS, RES(stats.pct_peak_flops), .have = have_flops},
    /* NVML (issue 14): null where nothing was read */
    {.name = "nvml", .type = F_BOOL, .flags = 0, RES(nvml)},
    {.name = "nvml_note", .type = F_STR, .flags = 0, RES(nvml_note)},
    {.name = "sm_mhz_min", .type = F_INT, .flags = POS, RES(sm_mhz_min)},
    {.name = "sm_mhz_max", .type = F_INT, .flags = POS, RES(sm_mhz_max)},
    {.name = "sm_mhz_limit", .type = F_INT, .flags = POS, RES(sm_mhz_limit)},
    {.name = "mem_mhz", .type = F_INT, .flags = POS, RES(mem_mhz)},
    {.name = "temp_c", .type = F_INT, .flags = POS, RES(temp_c)},
    {.name = "power_w", .type = F_DBL, .flags = POS, RES(power_w)},
    {.name = "throttled", .type = F_BOOL, .flags = 0, RES(throttled), .have = have_throttle},
    {.name = "throttle_reasons", .type = F_STR, .flags = 0, RES(throttle_reasons)},
    {.name = "energy_j", .type = F_DBL, .flags = POS, RES(energy_j)},
    {.name = "energy_runs", .type = F_INT, .flags = 0, RES(energy_runs), .have = have_energy},
    {.name = "energy_window_s", .type = F_DBL, .flags = 0, RES(energy_window_s), .have = have_energy},
    {.name = "gb_per_j", .type = F_GB_PER_J, .flags = 0, .have = have_gb_per_j},
    {.name = "bench", .type = F_BENCH, .flags = IDENT},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Whether a field that may be missing has its value in r (have, then a
 * POS figure > 0). */
static bool present(const field *f, const kf_result *r, const void *p)
{
    if (f->have && !f->have(r))
        return false;
    if (f->flags & POS)
        return f->type == F_INT ? *(const int *)p > 0 : *(const double *)p > 0;
    return true;
}

/* A null in the line leaves the value alone (a figure not read). */
static bool may_be_null(const field *f)
{
    return (f->have && !(f->flags & OMIT)) || (f->flags & POS);
}

/* Where f's value is in r or info: the result's, unless the run has it too
 * and the result's is not set (no device name, index -1). */
static const void *value_of(const field *f, const kf_result *r, const kf_run_info *info)
{
    const char *rp = f->in_res ? (const char *)r + f->res : NULL;
    const char *ip = f->in_run ? (const char *)info + f->run : NULL;
    if (rp && ip) {
        bool set = f->type == F_INT ? *(const int *)rp >= 0 : rp[0] != 0;
        return set ? rp : ip;
    }
    return rp ? rp : ip;
}

// ----------------------------------------------------------------------------
// Text helpers

char *line_utf8_clean(const char *s)
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

/* The JSON string of s, valid even when a compile log or a truncated
 * message holds stray bytes. */
static void sb_json_clean(strbuf *b, const char *s)
{
    char *c = line_utf8_clean(s);
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

// ----------------------------------------------------------------------------
// Writing: one emitter, three modes (a JSON line, a CSV header, a CSV row)

typedef enum { EM_JSON, EM_CSV_HEAD, EM_CSV_ROW } em_mode;

typedef struct {
    em_mode mode;
    strbuf *b;
    int count;              /* fields written at the current level */
    const char *prefix;     /* CSV: "bench." inside the bench object */
    const char *only;       /* CSV: write only the column of this name (--columns) */
    bool wrote;             /* ... and whether it was written */
} emitter;

/* Whether the field key (inside the prefix) is one to write. */
static bool em_wanted(emitter *e, const char *key)
{
    if (!e->only)
        return true;
    size_t n = e->prefix ? strlen(e->prefix) : 0;
    if (n && strncmp(e->only, e->prefix, n) != 0)
        return false;
    if (strcmp(e->only + n, key) != 0)
        return false;
    e->wrote = true;
    return true;
}

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
    if (!em_wanted(e, key))
        return;
    em_key(e, key);
    if (e->mode == EM_JSON)
        sb_json_clean(e->b, v);
    else if (e->mode == EM_CSV_ROW)
        csv_field(e->b, v);
}

static void em_int(emitter *e, const char *key, long long v)
{
    if (!em_wanted(e, key))
        return;
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_printf(e->b, "%lld", v);
}

static void em_uint(emitter *e, const char *key, unsigned long long v)
{
    if (!em_wanted(e, key))
        return;
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_printf(e->b, "%llu", v);
}

static void em_dbl(emitter *e, const char *key, double v)
{
    if (!em_wanted(e, key))
        return;
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
    if (!em_wanted(e, key))
        return;
    em_key(e, key);
    if (e->mode != EM_CSV_HEAD)
        sb_append(e->b, v ? "true" : "false");
}

/* A figure that is missing: null in JSON, an empty CSV cell. */
static void em_null(emitter *e, const char *key)
{
    if (!em_wanted(e, key))
        return;
    em_key(e, key);
    if (e->mode == EM_JSON)
        sb_append(e->b, "null");
}

/* A parameter's value: JSON in JSON, plain text in CSV. */
static void em_param(emitter *e, const kf_param *p, int64_t x)
{
    if (!em_wanted(e, p->name))
        return;
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

/* The names of params[0..n) as a JSON list (JSON only: see emit_fields). */
static void em_names(emitter *e, const char *key, const kf_param *params, int n)
{
    em_key(e, key);
    sb_append(e->b, "[");
    for (int i = 0; i < n; i++) {
        sb_append(e->b, i ? "," : "");
        sb_json_string(e->b, params[i].name);
    }
    sb_append(e->b, "]");
}

/* The bench settings: an object in JSON, "bench.NAME" columns in CSV. */
static void em_bench(emitter *e, const char *key, const kf_bench *bn)
{
    int saved = e->count;
    if (e->mode == EM_JSON) {
        em_key(e, key);
        sb_append(e->b, "{");
        saved = e->count;
        e->count = 0;
    } else {
        e->prefix = "bench.";
    }
    for (int i = 0; i < bench_nfields; i++) {
        const bench_field *bf = &bench_fields[i];
        const void *p = bench_field_at(bf, bn);
        switch (bf->type) {
        case BF_INT: em_int(e, bf->name, *(const int *)p); break;
        case BF_I64: em_int(e, bf->name, *(const int64_t *)p); break;
        case BF_U64: em_uint(e, bf->name, *(const uint64_t *)p); break;
        case BF_DBL: em_dbl(e, bf->name, *(const double *)p); break;
        case BF_BOOL: em_bool(e, bf->name, *(const bool *)p); break;
        }
    }
    if (e->mode == EM_JSON) {
        sb_append(e->b, "}");
        e->count = saved;
    } else {
        e->prefix = NULL;
    }
}

/* A member of the result or the run, null where a figure is missing. */
static void em_member(emitter *e, const field *f, const kf_result *r, const kf_run_info *info)
{
    const void *p = value_of(f, r, info);
    if (may_be_null(f) && !present(f, r, p)) {
        em_null(e, f->name);
        return;
    }
    char buf[32];
    switch (f->type) {
    case F_STR: case F_DEVICE: em_str(e, f->name, p); break;
    case F_INT: em_int(e, f->name, *(const int *)p); break;
    case F_I64: em_int(e, f->name, *(const int64_t *)p); break;
    case F_BOOL: em_bool(e, f->name, *(const bool *)p); break;
    case F_DBL:
        if (may_be_null(f) && !isfinite(*(const double *)p))
            em_null(e, f->name);
        else
            em_dbl(e, f->name, *(const double *)p);
        break;
    case F_VERSION:
        snprintf(buf, sizeof buf, "%d.%d", ((const int *)p)[0], ((const int *)p)[1]);
        em_str(e, f->name, buf);
        break;
    case F_DRIVER:
        kf_driver_text(*(const int *)p, buf, sizeof buf);
        em_str(e, f->name, buf);
        break;
    default: break;
    }
}

static void emit_field(emitter *e, const field *f, const kf_result *r, const kf_run_info *info, const char *label)
{
    const kf_family *fam = family_of(&r->v);
    switch (f->type) {
    case F_KFORGE: em_str(e, f->name, KF_VERSION); break;
    /* never empty: the label stands in (results_case_key agrees) */
    case F_NAME: em_str(e, f->name, r->v.name[0] ? r->v.name : label); break;
    case F_LABEL: em_str(e, f->name, label); break;
    case F_KERNEL: em_str(e, f->name, fam->name); break;
    case F_PARAMS:
        for (int k = 0; k < fam->nparams; k++)
            em_param(e, &fam->params[k], r->v.p[k]);
        break;
    case F_SIZES:
        for (int d = 0; d < fam->nsizes; d++)
            em_int(e, fam->sizes[d].name, r->shape.d[d]);
        break;
    case F_AXIS_NAMES: em_names(e, f->name, fam->params, fam->nparams); break;
    case F_SIZE_NAMES: em_names(e, f->name, fam->sizes, fam->nsizes); break;
    case F_STATUS:
        em_str(e, f->name, (unsigned)r->status < KF_ST_COUNT ? kf_status_names[r->status] : "?");
        break;
    case F_GB_PER_J:
        if (present(f, r, NULL) && isfinite(report_gb_per_j(r)))
            em_dbl(e, f->name, report_gb_per_j(r));
        else
            em_null(e, f->name);
        break;
    case F_BENCH: em_bench(e, f->name, &r->bench); break;
    default: em_member(e, f, r, info); break;
    }
}

/* Whether f is a column of every CSV row, whatever the family: all but the
 * parameters and sizes (and what only JSON has). */
static bool csv_core(const field *f)
{
    return !(f->flags & (DEV | JSON)) && f->type != F_PARAMS && f->type != F_SIZES;
}

/* The fields of the line, in the table's order.  CSV: the core first (the
 * same columns in every family's rows, a field left out of a JSON line an
 * empty cell), then the family's parameters and sizes, so that rows of
 * several families appended to one file agree on every core column. */
static void emit_fields(emitter *e, const kf_result *r, const kf_run_info *info)
{
    static const kf_run_info no_info;
    if (!info)
        info = &no_info;
    char label[256];
    family_of(&r->v)->label(&r->v, label, sizeof label);
    bool csv = e->mode != EM_JSON;
    for (int pass = 0; pass < (csv ? 2 : 1); pass++)
        for (int i = 0; i < NFIELDS; i++) {
            const field *f = &fields[i];
            if (csv && csv_core(f) != (pass == 0))
                continue;
            if ((f->flags & DEV) && !(e->mode == EM_JSON && info->have_dev))
                continue;
            if ((f->flags & JSON) && e->mode != EM_JSON)
                continue;
            if ((f->flags & OMIT) && !f->have(r)) {
                if (csv)
                    em_null(e, f->name);    /* an empty cell: the core is the same in every row */
                continue;
            }
            emit_field(e, f, r, info, label);
        }
}

void line_json(strbuf *b, const kf_result *r, const kf_run_info *info)
{
    emitter e = {EM_JSON, b, 0, NULL, NULL, false};
    sb_append(b, "{");
    emit_fields(&e, r, info);
    sb_append(b, "}");
}

void line_csv(strbuf *b, const kf_result *r, const kf_run_info *info, bool header)
{
    emitter e = {header ? EM_CSV_HEAD : EM_CSV_ROW, b, 0, NULL, NULL, false};
    emit_fields(&e, r, info);
}

void line_csv_columns(strbuf *b, const kf_result *r, const kf_run_info *info, bool header, const char *columns)
{
    emitter e = {header ? EM_CSV_HEAD : EM_CSV_ROW, b, 0, NULL, NULL, false};
    for (const char *p = columns; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[KF_NAME_MAX + 16];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        e.only = name;
        e.wrote = false;
        emit_fields(&e, r, info);
        if (!e.wrote) {     /* a column r's family lacks: an empty cell */
            e.only = NULL;
            em_null(&e, name);
        }
        if (!end)
            break;
        p = end + 1;
    }
}

bool line_csv_column(const char *name)
{
    if (strncmp(name, "bench.", 6) == 0) {
        for (int i = 0; i < bench_nfields; i++)
            if (strcmp(bench_fields[i].name, name + 6) == 0)
                return true;
        return false;
    }
    for (int i = 0; i < NFIELDS; i++)
        if (csv_core(&fields[i]) && fields[i].type != F_BENCH && strcmp(fields[i].name, name) == 0)
            return true;
    return false;
}

// ----------------------------------------------------------------------------
// Reading: typed getters that fail on a field of the wrong type

typedef struct {
    char *err;
    size_t errlen;
    bool failed;            /* the first failure's message is kept */
} reader;

static const cJSON *get(const cJSON *o, const char *key, bool required, reader *rd)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j && required) {
        kf_err(rd->err, rd->errlen, "results line lacks \"%s\"", key);
        rd->failed = true;
    }
    return j;
}

static void get_i64(const cJSON *o, const char *key, bool required, int64_t lo, int64_t hi, int64_t *out,
                    reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, key, required, rd);
    if (!j)
        return;
    double x = cJSON_IsNumber(j) ? j->valuedouble : NAN;
    /* 2^63 is the first double past INT64_MAX */
    if (!(x == floor(x) && x >= (double)lo && x <= (double)hi && x < 0x1p63)) {
        kf_err(rd->err, rd->errlen, "results line: \"%s\" is not an integer in [%lld, %lld]", key, (long long)lo,
               (long long)hi);
        rd->failed = true;
        return;
    }
    *out = (int64_t)x;
}

static void get_int(const cJSON *o, const char *key, int *out, reader *rd)
{
    int64_t x = *out;
    get_i64(o, key, false, INT32_MIN, INT32_MAX, &x, rd);
    *out = (int)x;
}

/* null stands for a non-finite value (JSON has none): read back as NaN. */
static void get_dbl(const cJSON *o, const char *key, double *out, reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, key, false, rd);
    if (!j)
        return;
    if (cJSON_IsNull(j)) {
        *out = NAN;
    } else if (cJSON_IsNumber(j)) {
        *out = j->valuedouble;
    } else {
        kf_err(rd->err, rd->errlen, "results line: \"%s\" is not a number", key);
        rd->failed = true;
    }
}

static void get_bool(const cJSON *o, const char *key, bool *out, reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, key, false, rd);
    if (!j)
        return;
    if (!cJSON_IsBool(j)) {
        kf_err(rd->err, rd->errlen, "results line: \"%s\" is not true or false", key);
        rd->failed = true;
        return;
    }
    *out = cJSON_IsTrue(j);
}

/* Strings longer than the field are cut (messages are excerpts anyway). */
static void get_str(const cJSON *o, const char *key, char *out, size_t len, reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, key, false, rd);
    if (!j)
        return;
    if (!cJSON_IsString(j)) {
        kf_err(rd->err, rd->errlen, "results line: \"%s\" is not a string", key);
        rd->failed = true;
        return;
    }
    snprintf(out, len, "%s", j->valuestring);
}

/* "9.0" -> 9, 0; left alone unless two numbers (the versions are facts, not
 * the measurement: a line with an odd one still reads). */
static bool get_version(const cJSON *o, const char *key, int *major, int *minor)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) && sscanf(j->valuestring, "%d.%d", major, minor) == 2;
}

/* A member field into base (a kf_result or a kf_run_info) at off. */
static void get_member(const cJSON *o, const field *f, char *base, size_t off, size_t len, reader *rd)
{
    if (may_be_null(f)) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, f->name);
        if (!j || cJSON_IsNull(j))
            return;     /* a figure not read: left as it is */
    }
    void *p = base + off;
    int a = 0, b = 0;
    switch (f->type) {
    case F_STR: case F_DEVICE: get_str(o, f->name, p, len, rd); break;
    case F_INT: get_int(o, f->name, p, rd); break;
    case F_I64: get_i64(o, f->name, false, f->lo, f->hi, p, rd); break;
    case F_DBL: get_dbl(o, f->name, p, rd); break;
    case F_BOOL: get_bool(o, f->name, p, rd); break;
    case F_VERSION: get_version(o, f->name, &((int *)p)[0], &((int *)p)[1]); break;
    case F_DRIVER:
        if (get_version(o, f->name, &a, &b))
            *(int *)p = a * 1000 + b * 10;
        break;
    default: break;
    }
}

/* Lines of kforge 0.1 may lack "bench": the defaults. */
static void get_bench(const cJSON *o, const char *key, kf_bench *bn, reader *rd)
{
    kf_bench_defaults(bn);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(j))
        return;
    for (int i = 0; i < bench_nfields; i++) {
        const bench_field *bf = &bench_fields[i];
        void *p = bench_field_at_mut(bf, bn);
        int64_t x;
        switch (bf->type) {
        case BF_INT: get_int(j, bf->name, p, rd); break;
        case BF_I64: get_i64(j, bf->name, false, bf->lo, bf->hi, p, rd); break;
        case BF_U64:
            x = (int64_t)*(uint64_t *)p;
            get_i64(j, bf->name, false, bf->lo, bf->hi, &x, rd);
            *(uint64_t *)p = (uint64_t)x;
            break;
        case BF_DBL: get_dbl(j, bf->name, p, rd); break;
        case BF_BOOL: get_bool(j, bf->name, p, rd); break;
        }
    }
}

static void get_status(const cJSON *o, const char *key, bool required, kf_status *out, reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, key, required, rd);
    if (!j)
        return;
    int i = cJSON_IsString(j) ? kf_lookup(kf_status_names, KF_ST_COUNT, j->valuestring) : -1;
    if (i < 0) {
        kf_err(rd->err, rd->errlen, "results line: \"%s\" is not one of the known names", key);
        rd->failed = true;
        return;
    }
    *out = (kf_status)i;
}

static void get_param(const cJSON *o, const kf_param *p, bool required, int64_t *out, reader *rd)
{
    if (rd->failed)
        return;
    const cJSON *j = get(o, p->name, required, rd);
    if (j && config_param_value(p, j, "results line", out, rd->err, rd->errlen) != 0)
        rd->failed = true;
}

static void parse_field(const cJSON *o, const field *f, const kf_family *fam, kf_result *res, reader *rd)
{
    bool req = f->flags & REQ;
    switch (f->type) {
    case F_NAME: get_str(o, f->name, res->v.name, sizeof res->v.name, rd); break;
    case F_PARAMS:
        for (int i = 0; i < fam->nparams; i++) /* an optional parameter missing (older lines): its default */
            get_param(o, &fam->params[i], req && !fam->params[i].optional, &res->v.p[i], rd);
        break;
    case F_SIZES:
        for (int d = 0; d < fam->nsizes; d++)
            get_i64(o, fam->sizes[d].name, req && !fam->sizes[d].optional, 0, INT64_MAX, &res->shape.d[d], rd);
        break;
    case F_STATUS: get_status(o, f->name, req, &res->status, rd); break;
    case F_BENCH: get_bench(o, f->name, &res->bench, rd); break;
    case F_KFORGE: case F_LABEL: case F_KERNEL: case F_AXIS_NAMES: case F_SIZE_NAMES: case F_GB_PER_J:
        break;  /* written, not read */
    default:
        if (f->in_res)
            get_member(o, f, (char *)res, f->res, f->rlen, rd);
        break;
    }
}

static cJSON *parse_object(const char *line, char *err, size_t errlen)
{
    const char *end = NULL;
    /* the length includes the NUL: cJSON checks for it when asked to
     * require null termination (and fails every line without it) */
    cJSON *o = cJSON_ParseWithLengthOpts(line, strlen(line) + 1, &end, 1);
    if (!o) {
        long col = end ? (long)(end - line) + 1 : 0;
        kf_err(err, errlen, "results line is not valid JSON (near column %ld)", col);
        return NULL;
    }
    if (!cJSON_IsObject(o)) {
        kf_err(err, errlen, "results line is not a JSON object");
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int results_parse_line(const char *line, kf_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    cJSON *o = parse_object(line, err, errlen);
    if (!o)
        return -1;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    int fam = k ? (cJSON_IsString(k) ? family_find(k->valuestring) : -1) : family_find("reduce");
    if (fam < 0) {
        kf_err(err, errlen, "results line: unknown \"kernel\"");
        cJSON_Delete(o);
        return -1;
    }
    const kf_family *f = kf_families[fam];
    variant_defaults(&res->v, fam);
    res->device = -1;
    reader rd = {err, errlen, false};
    for (int i = 0; i < NFIELDS; i++)
        parse_field(o, &fields[i], f, res, &rd);
    /* an unnamed variant is written with its label as the name, which may
     * be longer than a name can be: back to no name */
    const cJSON *nmj = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!rd.failed && cJSON_IsString(nmj)) {
        char label[256];
        f->label(&res->v, label, sizeof label);
        if (strcmp(nmj->valuestring, label) == 0)
            res->v.name[0] = '\0';
    }
    cJSON_Delete(o);
    return rd.failed ? -1 : 0;
}

bool results_line_damaged(const char *line, const kf_result *r, char *why, size_t whylen)
{
    const kf_family *f = family_of(&r->v);
    char label[256], w[320] = "";
    f->label(&r->v, label, sizeof label);
    cJSON *o = parse_object(line, NULL, 0);
    if (!o) {
        kf_err(why, whylen, "not a JSON object");
        return true;
    }
    const cJSON *lj = cJSON_GetObjectItemCaseSensitive(o, "label");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "source_hash");
    if (lj && (!cJSON_IsString(lj) || strcmp(lj->valuestring, label) != 0))
        snprintf(w, sizeof w, "its \"label\" is not its parameters' (%s)", label);
    else if (r->v.name[0] && !config_valid_name(r->v.name))
        snprintf(w, sizeof w, "its \"name\" is neither its label nor a name a config takes (letters, digits, "
                              "_ - . +)");
    else if (sh && !(cJSON_IsString(sh) && strlen(sh->valuestring) == 32 &&
                     strspn(sh->valuestring, "0123456789abcdef") == 32))
        snprintf(w, sizeof w, "its \"source_hash\" is not 32 hexadecimal digits");
    cJSON_Delete(o);
    if (!w[0] && f->check) {
        char cw[256];
        if (f->check(&r->v, NULL, cw, sizeof cw) != 0)
            snprintf(w, sizeof w, "a variant that cannot run: %s", cw);
    }
    const kf_stats *st = &r->stats;
    const struct {
        const char *name;
        double x;
    } nonneg[] = {{"median_ms", st->median_ms}, {"min_ms", st->min_ms}, {"max_ms", st->max_ms},
                  {"mean_ms", st->mean_ms}, {"stddev_ms", st->stddev_ms}, {"compile_ms", r->compile_ms},
                  {"setup_ms", r->setup_ms}, {"verify_ms", r->verify_ms}, {"bench_ms", r->bench_ms},
                  {"gbps", st->gbps}, {"pct_peak", st->pct_peak}, {"noise", st->noise}},
      errs[] = {{"abs_err", r->abs_err}, {"tolerance", r->tolerance}, {"acc_err", r->acc_err},
                {"acc_bound", r->acc_bound}, {"acc_rel", r->acc_rel}};
    for (size_t i = 0; !w[0] && i < sizeof nonneg / sizeof nonneg[0]; i++)
        if (nonneg[i].x < 0 || isinf(nonneg[i].x)) /* NaN: null, not measured */
            snprintf(w, sizeof w, "its \"%s\" is %g: a time or rate is finite and 0 or more (or null)", nonneg[i].name,
                     nonneg[i].x);
    for (size_t i = 0; !w[0] && i < sizeof errs / sizeof errs[0]; i++)
        if (errs[i].x < 0 || isinf(errs[i].x)) /* NaN: null, not measured */
            snprintf(w, sizeof w, "its \"%s\" is %g: an error figure is 0 or more (or null)", errs[i].name,
                     errs[i].x);
    if (!w[0] && r->status == KF_ST_OK) {
        if (!(st->median_ms > 0 && isfinite(st->median_ms)))
            snprintf(w, sizeof w, "status ok with a median_ms of %g: a measured time is above 0", st->median_ms);
        else if (st->reps < 1)
            snprintf(w, sizeof w, "status ok with %d reps: a measured time has 1 or more", st->reps);
    }
    if (!w[0])
        return false;
    kf_err(why, whylen, "%s", w);
    return true;
}

bool results_line_unknown_kernel(const char *line, char *kernel, size_t len)
{
    if (!strstr(line, "\"kernel\""))
        return false;
    cJSON *o = parse_object(line, NULL, 0);
    if (!o)
        return false;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    bool unknown = cJSON_IsString(k) && family_find(k->valuestring) < 0;
    if (unknown)
        snprintf(kernel, len, "%s", k->valuestring);
    cJSON_Delete(o);
    return unknown;
}

bool results_line_key(const char *name)
{
    if (strcmp(name, "bench") == 0)
        return true;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].name[0] && strcmp(fields[i].name, name) == 0)
            return true;
    return false;
}

int results_check_names(const char *path, int family, char *err, size_t errlen)
{
    const kf_family *f = kf_families[family];
    for (int i = 0; i < f->nparams + f->nsizes; i++) {
        const char *name = i < f->nparams ? f->params[i].name : f->sizes[i - f->nparams].name;
        if (results_line_key(name)) {
            kf_err(err, errlen, "%s: %s \"%s\" of kernel %s has the name of a key every results line has "
                   "(kforge, run, time, device, name, status, bench, ...): give it another name",
                   path, i < f->nparams ? "the parameter" : "the size", name, f->name);
            return -1;
        }
    }
    return 0;
}

int results_parse_run(const char *line, kf_run_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    cJSON *o = cJSON_ParseWithLengthOpts(line, strlen(line) + 1, NULL, 1);
    if (!cJSON_IsObject(o)) {
        kf_err(err, errlen, "results line is not a JSON object");
        cJSON_Delete(o);
        return -1;
    }
    info->dev.index = -1;
    info->have_dev = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "device"));
    reader rd = {err, errlen, false};
    for (int i = 0; i < NFIELDS; i++)
        if (fields[i].in_run)
            get_member(o, &fields[i], (char *)info, fields[i].run, fields[i].ilen, &rd);
    cJSON_Delete(o);
    return rd.failed ? -1 : 0;
}

// ----------------------------------------------------------------------------
// Case identity: the fields marked IDENT

/* A string of any bytes, unambiguous inside a key: its length first. */
static void key_str(strbuf *k, const char *tag, const char *s)
{
    sb_printf(k, "%s=%zu:%s|", tag, strlen(s), s);
}

void results_case_key(const kf_variant *v, const kf_shape *s, const kf_bench *b, const char *device, char *buf,
                      size_t len)
{
    const kf_family *fam = family_of(v);
    strbuf k = {0};
    char label[256];
    for (int i = 0; i < NFIELDS; i++) {
        const field *f = &fields[i];
        if (!(f->flags & IDENT))
            continue;
        switch (f->type) {
        case F_DEVICE: key_str(&k, "dev", device ? device : ""); break;
        case F_NAME:
            /* a variant without a name is written with its label as the
             * name: both spellings are the same case */
            if (!v->name[0])
                fam->label(v, label, sizeof label);
            key_str(&k, "name", v->name[0] ? v->name : label);
            break;
        case F_KERNEL: sb_printf(&k, "%s|", fam->name); break;
        case F_PARAMS:
            /* the parameter table's values hold no '|' */
            for (int p = 0; p < fam->nparams; p++) {
                param_text(&k, &fam->params[p], v->p[p]);
                sb_append(&k, "|");
            }
            break;
        case F_SIZES:
            for (int d = 0; d < fam->nsizes; d++)
                sb_printf(&k, "%lld|", (long long)s->d[d]);
            break;
        case F_BENCH:
            for (int j = 0; j < bench_nfields; j++)
                if (bench_fields[j].ident) {
                    sb_printf(&k, "%s=", bench_fields[j].name);
                    bench_field_text(&k, &bench_fields[j], b);
                    sb_append(&k, "|");
                }
            break;
        default: break;
        }
    }
    snprintf(buf, len, "%s", k.s ? k.s : "");
    sb_free(&k);
}

void results_key_of(const kf_result *r, char *buf, size_t len)
{
    results_case_key(&r->v, &r->shape, &r->bench, r->device_name, buf, len);
}
