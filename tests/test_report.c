/*
 * test_report.c -- results lines (JSON) and their parser (results.h), the
 * table / CSV / JSON Lines / JSON reports, case keys and the shared results
 * file.
 *
 *   make build/tests/test_report && build/tests/test_report
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_quiet.h"
#include "bench_fields.h"
#include "config.h"
#include "family.h"
#include "key.h"
#include "line.h"
#include "param.h"
#include "reduce.h"
#include "report.h"
#include "results.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

// ----------------------------------------------------------------------------
// Helpers

static int reduce_family(void)
{
    int f = family_find("reduce");
    ck_assert_int_ge(f, 0);
    return f;
}

static const kf_family *reduce_fam(void) { return kf_families[reduce_family()]; }

static void reduce_variant_defaults(kf_variant *v) { variant_defaults(v, reduce_family()); }

static kf_shape shape_n(int64_t n)
{
    kf_shape s;
    memset(&s, 0, sizeof s);
    s.d[0] = n;
    return s;
}

/* A result whose every field depends on i, cycling through every value of
 * every enumerated axis, grid kind and status. */
static kf_result make_result(int i)
{
    kf_result r;
    memset(&r, 0, sizeof r);
    reduce_v v;
    reduce_defaults(&v);
    static const char *const names[] = {"reduce6", "", "with \"quotes\" and \\ back", "caf\xc3\xa9 \xe2\x82\xac",
                                        "tab\there", "a|b|c", "comma, name"};
    v.dtype = (kf_dtype)(i % KF_REDUCE_DTYPES);
    v.op = (kf_op)((i + 1) % KF_OP_COUNT);
    v.algorithm = (kf_algorithm)((i + 2) % KF_ALG_COUNT);
    v.block_size = 32 << (i % 6);
    v.elements_per_thread = 1 + i % 9;
    v.unroll = (kf_unroll)(i % KF_UNROLL_COUNT);
    v.vector_width = 1 << (i % 3);
    v.grid.kind = (kf_grid_kind)(i % KF_GRID_KIND_COUNT);
    v.grid.value = v.grid.kind == KF_GRID_AUTO     ? 0
                   : v.grid.kind == KF_GRID_BLOCKS ? 1 + i * 37
                                                   : 1 + i % KF_GRID_MAX_PER_SM;
    v.passes = (kf_passes)((i + 3) % KF_PASSES_COUNT);
    v.layout = (kf_layout)(i % KF_LAYOUT_COUNT);
    v.accumulator = (kf_accum)((i / 2) % KF_ACC_COUNT);
    v.warp_reduce = (kf_warp_reduce)((i + 1) % KF_WARP_COUNT);
    v.load = (kf_load)((i + 2) % KF_LOAD_COUNT);
    reduce_encode(&v, names[i % N_OF(names)], &r.v);
    r.shape.d[0] = ((int64_t)1 << (i % 40)) + i;
    /* the result's own bench settings, device and UUID */
    kf_bench_defaults(&r.bench);
    r.bench.warmup = i % 5;
    r.bench.min_reps = 1 + i % 7;
    r.bench.max_reps = 100 + i;
    r.bench.max_time_s = 0.25 * (i % 4);
    r.bench.max_noise = 0.01 * (1 + i % 3);
    r.bench.flush_l2 = i % 2 == 0;
    r.bench.seed = 1234567 + (uint64_t)i * 1000003;
    r.bench.offset = i % 5;
    r.bench.timeout_s = i % 3 ? 30.5 : 0;
    r.device = i % 4 == 3 ? -1 : i % 8;
    static const char *const gpus[] = {"NVIDIA H100 80GB HBM3", "", "NVIDIA H200", "GPU \"q\" | x"};
    snprintf(r.device_name, sizeof r.device_name, "%s", gpus[i % N_OF(gpus)]);
    if (i % 3)
        snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-%08x-1111-2222-3333-%012d", 0xabc00 + i, i);
    r.status = (kf_status)(i % KF_ST_COUNT);
    static const char *const msgs[] = {"", "line 3: error: expected ';'\nline 4: note: here",
                                       "quote \" backslash \\ ctrl \x01 tab\t cr\r",
                                       "unicode \xce\xbb and comma, semicolon;", "  padded  "};
    snprintf(r.message, sizeof r.message, "%s", msgs[i % N_OF(msgs)]);
    snprintf(r.gpu_value, sizeof r.gpu_value, "%.17g", 1.0 / (i + 3));
    snprintf(r.ref_value, sizeof r.ref_value, "%d", -i * 1000003);
    r.abs_err = i % 3 ? 1e-300 * i : 0.1 * i;
    r.tolerance = 1.0 / 3.0 + i;
    r.deterministic = i % 2;
    r.launches = 1 + i % 3;
    r.blocks = ((int64_t)1 << (20 + i % 30)) + 7;
    r.regs = 16 + i;
    r.smem_bytes = 1024 * (i % 48);
    r.occupancy = i % 17;
    r.compile_ms = i * 12.375 + 0.1;
    r.setup_ms = i * 3.25 + 0.7;
    r.verify_ms = i * 0.5 + 0.3;
    r.bench_ms = i * 7.125 + 1.1;
    r.cached = i % 3 == 0;
    kf_stats *s = &r.stats;
    s->reps = 10 + i;
    s->median_ms = 0.001 * (i + 1) + 1e-9;
    s->min_ms = s->median_ms * 0.9;
    s->max_ms = s->median_ms * 1.7;
    s->mean_ms = s->median_ms * 1.01;
    s->stddev_ms = s->median_ms / 3;
    s->noise = s->stddev_ms / s->mean_ms;
    s->gbps = 1234.5678 + i;
    s->pct_peak = s->gbps / 3352.3 * 100;
    r.bench.energy = i % 4 == 1;
    if (i % 3 != 2) { /* NVML figures (issue 14); every third result has none */
        r.nvml = true;
        r.sm_mhz_min = 1755 + i;
        r.sm_mhz_max = 1980;
        r.sm_mhz_limit = i % 2 ? 1980 : 0;
        r.mem_mhz = 2619;
        r.temp_c = 40 + i % 30;
        r.power_w = 100.0 + i / 3.0;
        r.throttled = i % 5 == 0;
        snprintf(r.throttle_reasons, sizeof r.throttle_reasons, "%s", r.throttled ? "sw power cap" : "none");
        if (r.bench.energy) {
            r.energy_j = 1e-4 * (i + 1) / 3.0;
            r.energy_runs = 1000 + i;
            r.energy_window_s = 1.0 + i / 7.0;
        }
    } else {
        snprintf(r.nvml_note, sizeof r.nvml_note, "NVML not available: cannot load libnvidia-ml.so.1");
    }
    return r;
}

static kf_run_info make_info(bool have_dev)
{
    kf_run_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.run_id, sizeof info.run_id, "run-123-abc");
    snprintf(info.time, sizeof info.time, "2026-11-22T15:40:00Z");
    snprintf(info.host, sizeof info.host, "gpu-host-7");
    snprintf(info.config, sizeof info.config, "configs/a.json,configs/\"b\".json");
    info.have_dev = have_dev;
    snprintf(info.dev.name, sizeof info.dev.name, "NVIDIA H100 80GB HBM3");
    snprintf(info.dev.uuid, sizeof info.dev.uuid, "GPU-00000000-aaaa-bbbb-cccc-000000000001");
    info.dev.index = 2;
    info.dev.cc_major = 9;
    info.dev.cc_minor = 0;
    info.dev.sms = 132;
    info.dev.l2_bytes = 52428800;
    info.dev.peak_gbps = 3352.32;
    info.dev.driver_version = 12040;
    info.dev.nvrtc_major = 12;
    info.dev.nvrtc_minor = 8;
    return info;
}

/* What a result reads back as after report_json(r, info): the device
 * fields are written only with a device (the result's own, else the
 * run's); without one they read back as none. */
static kf_result as_written(const kf_result *r, const kf_run_info *info)
{
    kf_result w = *r;
    if (!info || !info->have_dev) {
        w.device = -1;
        w.device_name[0] = 0;
        w.device_uuid[0] = 0;
        return w;
    }
    if (w.device < 0)
        w.device = info->dev.index;
    if (!w.device_name[0])
        snprintf(w.device_name, sizeof w.device_name, "%s", info->dev.name);
    if (!w.device_uuid[0])
        snprintf(w.device_uuid, sizeof w.device_uuid, "%s", info->dev.uuid);
    return w;
}

/* Doubles: equal, or both NaN. */
static bool same_dbl(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void assert_variant_eq(const kf_variant *va, const kf_variant *vb, int i)
{
    ck_assert_msg(va->family == vb->family, "[%d] family %d != %d", i, va->family, vb->family);
    ck_assert_msg(strcmp(va->name, vb->name) == 0, "[%d] name '%s' != '%s'", i, va->name, vb->name);
    reduce_v x, y, *a = &x, *b = &y;
    reduce_decode(va, a);
    reduce_decode(vb, b);
    ck_assert_msg(a->dtype == b->dtype, "[%d] dtype", i);
    ck_assert_msg(a->op == b->op, "[%d] op", i);
    ck_assert_msg(a->algorithm == b->algorithm, "[%d] algorithm", i);
    ck_assert_msg(a->block_size == b->block_size, "[%d] block_size", i);
    ck_assert_msg(a->elements_per_thread == b->elements_per_thread, "[%d] ept", i);
    ck_assert_msg(a->unroll == b->unroll, "[%d] unroll", i);
    ck_assert_msg(a->vector_width == b->vector_width, "[%d] vector_width", i);
    ck_assert_msg(a->grid.kind == b->grid.kind, "[%d] grid kind %d != %d", i, a->grid.kind, b->grid.kind);
    ck_assert_msg(a->grid.value == b->grid.value, "[%d] grid value", i);
    ck_assert_msg(a->passes == b->passes, "[%d] passes", i);
    ck_assert_msg(a->layout == b->layout, "[%d] layout", i);
    ck_assert_msg(a->accumulator == b->accumulator, "[%d] accumulator", i);
    ck_assert_msg(a->warp_reduce == b->warp_reduce, "[%d] warp_reduce", i);
    ck_assert_msg(a->load == b->load, "[%d] load", i);
    /* and the generic view: every parameter of the table */
    ck_assert_msg(variant_eq(va, vb), "[%d] variant_eq", i);
}

static void assert_bench_eq(const kf_bench *a, const kf_bench *b, int i)
{
    ck_assert_msg(a->warmup == b->warmup, "[%d] bench.warmup", i);
    ck_assert_msg(a->min_reps == b->min_reps, "[%d] bench.min_reps", i);
    ck_assert_msg(a->max_reps == b->max_reps, "[%d] bench.max_reps", i);
    ck_assert_msg(same_dbl(a->max_time_s, b->max_time_s), "[%d] bench.max_time_s", i);
    ck_assert_msg(same_dbl(a->max_noise, b->max_noise), "[%d] bench.max_noise", i);
    ck_assert_msg(a->flush_l2 == b->flush_l2, "[%d] bench.flush_l2", i);
    ck_assert_msg(a->seed == b->seed, "[%d] bench.seed %llu != %llu", i, (unsigned long long)a->seed,
                  (unsigned long long)b->seed);
    ck_assert_msg(a->offset == b->offset, "[%d] bench.offset", i);
    ck_assert_msg(same_dbl(a->timeout_s, b->timeout_s), "[%d] bench.timeout_s", i);
    ck_assert_msg(a->energy == b->energy, "[%d] bench.energy", i);
}

static void assert_result_eq(const kf_result *a, const kf_result *b, int i)
{
    assert_variant_eq(&a->v, &b->v, i);
    ck_assert_msg(a->shape.d[0] == b->shape.d[0], "[%d] n %lld != %lld", i, (long long)a->shape.d[0],
                  (long long)b->shape.d[0]);
    ck_assert_msg(shape_eq(&a->shape, &b->shape), "[%d] shape", i);
    assert_bench_eq(&a->bench, &b->bench, i);
    ck_assert_msg(a->device == b->device, "[%d] device %d != %d", i, a->device, b->device);
    ck_assert_msg(strcmp(a->device_name, b->device_name) == 0, "[%d] device name '%s' != '%s'", i, a->device_name,
                  b->device_name);
    ck_assert_msg(strcmp(a->device_uuid, b->device_uuid) == 0, "[%d] uuid '%s' != '%s'", i, a->device_uuid,
                  b->device_uuid);
    ck_assert_msg(a->status == b->status, "[%d] status", i);
    ck_assert_msg(strcmp(a->message, b->message) == 0, "[%d] message '%s' != '%s'", i, a->message,
                  b->message);
    ck_assert_msg(strcmp(a->gpu_value, b->gpu_value) == 0, "[%d] gpu_value", i);
    ck_assert_msg(strcmp(a->ref_value, b->ref_value) == 0, "[%d] ref_value", i);
    ck_assert_msg(same_dbl(a->abs_err, b->abs_err), "[%d] abs_err %.17g != %.17g", i, a->abs_err,
                  b->abs_err);
    ck_assert_msg(same_dbl(a->tolerance, b->tolerance), "[%d] tolerance", i);
    ck_assert_msg(a->deterministic == b->deterministic, "[%d] deterministic", i);
    ck_assert_msg(a->launches == b->launches, "[%d] launches", i);
    ck_assert_msg(a->blocks == b->blocks, "[%d] blocks", i);
    ck_assert_msg(a->regs == b->regs, "[%d] regs", i);
    ck_assert_msg(a->smem_bytes == b->smem_bytes, "[%d] smem_bytes", i);
    ck_assert_msg(a->occupancy == b->occupancy, "[%d] occupancy", i);
    ck_assert_msg(same_dbl(a->compile_ms, b->compile_ms), "[%d] compile_ms", i);
    ck_assert_msg(same_dbl(a->setup_ms, b->setup_ms), "[%d] setup_ms", i);
    ck_assert_msg(same_dbl(a->verify_ms, b->verify_ms), "[%d] verify_ms", i);
    ck_assert_msg(same_dbl(a->bench_ms, b->bench_ms), "[%d] bench_ms", i);
    ck_assert_msg(a->cached == b->cached, "[%d] cached", i);
    const kf_stats *s = &a->stats, *t = &b->stats;
    ck_assert_msg(s->reps == t->reps, "[%d] reps", i);
    ck_assert_msg(same_dbl(s->median_ms, t->median_ms), "[%d] median %.17g != %.17g", i,
                  s->median_ms, t->median_ms);
    ck_assert_msg(same_dbl(s->min_ms, t->min_ms), "[%d] min", i);
    ck_assert_msg(same_dbl(s->max_ms, t->max_ms), "[%d] max", i);
    ck_assert_msg(same_dbl(s->mean_ms, t->mean_ms), "[%d] mean", i);
    ck_assert_msg(same_dbl(s->stddev_ms, t->stddev_ms), "[%d] stddev", i);
    ck_assert_msg(same_dbl(s->noise, t->noise), "[%d] noise", i);
    ck_assert_msg(same_dbl(s->gbps, t->gbps), "[%d] gbps", i);
    ck_assert_msg(same_dbl(s->pct_peak, t->pct_peak), "[%d] pct_peak", i);
    ck_assert_msg(a->nvml == b->nvml, "[%d] nvml", i);
    ck_assert_msg(strcmp(a->nvml_note, b->nvml_note) == 0, "[%d] nvml_note", i);
    ck_assert_msg(a->sm_mhz_min == b->sm_mhz_min && a->sm_mhz_max == b->sm_mhz_max, "[%d] sm_mhz", i);
    ck_assert_msg(a->sm_mhz_limit == b->sm_mhz_limit, "[%d] sm_mhz_limit", i);
    ck_assert_msg(a->mem_mhz == b->mem_mhz && a->temp_c == b->temp_c, "[%d] mem_mhz, temp_c", i);
    ck_assert_msg(same_dbl(a->power_w, b->power_w), "[%d] power_w", i);
    ck_assert_msg(a->throttled == b->throttled, "[%d] throttled", i);
    ck_assert_msg(strcmp(a->throttle_reasons, b->throttle_reasons) == 0, "[%d] throttle_reasons", i);
    ck_assert_msg(same_dbl(a->energy_j, b->energy_j), "[%d] energy_j", i);
    ck_assert_msg(a->energy_runs == b->energy_runs, "[%d] energy_runs", i);
    ck_assert_msg(same_dbl(a->energy_window_s, b->energy_window_s), "[%d] energy_window_s", i);
}

/* r written with report_json(r, info) reads back as it should. */
static void assert_read_back(const kf_result *r, const kf_run_info *info, const kf_result *back, int i)
{
    kf_result want = as_written(r, info);
    assert_result_eq(&want, back, i);
}

/* Strict parse: the whole text must be one JSON value. */
static cJSON *parse_strict(const char *text)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 1);
    ck_assert_msg(j != NULL, "not valid JSON near offset %ld: %.200s",
                  end ? (long)(end - text) : -1L, text);
    return j;
}

/* Deep equality with numbers compared exactly (cJSON_Compare allows an
 * epsilon) and keys in the same order. */
static bool json_exact_eq(const cJSON *a, const cJSON *b)
{
    if ((a->type & 0xFF) != (b->type & 0xFF))
        return false;
    if ((a->string || b->string) && (!a->string || !b->string || strcmp(a->string, b->string)))
        return false;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsObject(a) || cJSON_IsArray(a)) {
        const cJSON *x = a->child, *y = b->child;
        for (; x && y; x = x->next, y = y->next)
            if (!json_exact_eq(x, y))
                return false;
        return !x && !y;
    }
    return true;
}

/* Well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF). */
static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int len;
        unsigned cp;
        if (c < 0x80) {
            p++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (int k = 1; k < len; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[k] & 0x3F);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        p += len;
    }
    return true;
}

/* Minimal RFC 4180 reader: records of fields (quoted fields may hold commas,
 * doubled quotes and newlines). */
typedef struct {
    int nrec;
    int nfields[256];
    char *fields[256][128];
} csv_doc;

static void csv_parse(const char *s, csv_doc *d)
{
    memset(d, 0, sizeof *d);
    const char *p = s;
    while (*p) {
        ck_assert_int_lt(d->nrec, 256);
        int rec = d->nrec++;
        for (;;) {
            char buf[4096];
            size_t o = 0;
            if (*p == '"') {
                p++;
                for (;;) {
                    ck_assert_msg(*p != 0, "unterminated quoted CSV field");
                    if (*p == '"' && p[1] == '"') {
                        buf[o++] = '"';
                        p += 2;
                    } else if (*p == '"') {
                        p++;
                        break;
                    } else {
                        buf[o++] = *p++;
                    }
                    ck_assert(o < sizeof buf);
                }
                ck_assert_msg(*p == ',' || *p == '\n' || *p == 0,
                              "junk after a quoted CSV field: %.20s", p);
            } else {
                while (*p && *p != ',' && *p != '\n') {
                    ck_assert_msg(*p != '"', "bare quote in an unquoted CSV field");
                    buf[o++] = *p++;
                    ck_assert(o < sizeof buf);
                }
            }
            buf[o] = 0;
            ck_assert_int_lt(d->nfields[rec], 128);
            d->fields[rec][d->nfields[rec]++] = strdup(buf);
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == '\n')
                p++;
            break;
        }
    }
}

static void csv_free(csv_doc *d)
{
    for (int r = 0; r < d->nrec; r++)
        for (int f = 0; f < d->nfields[r]; f++)
            free(d->fields[r][f]);
}

static int csv_col(const csv_doc *d, const char *name)
{
    for (int f = 0; f < d->nfields[0]; f++)
        if (strcmp(d->fields[0][f], name) == 0)
            return f;
    return -1;
}

/* Runs a report over rows into a malloc'd string. */
static char *run_report(kf_format fmt, const kf_result *rows, int n, const kf_run_info *info,
                        const report_opts *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    report *r = report_new(f, fmt, info, o);
    ck_assert_ptr_nonnull(r);
    for (int i = 0; i < n; i++)
        report_add(r, &rows[i]);
    report_finish(r);
    report_add(r, &rows[0]);  /* after finish: ignored */
    report_finish(r);         /* twice: harmless */
    report_free(r);
    fclose(f);
    return text;
}

/* Splits text into lines in place (the last one need not end in '\n'). */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    char *p = text;
    while (*p) {
        ck_assert_int_lt(n, max);
        lines[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = 0;
        p = nl + 1;
    }
    return n;
}

/* Display width: UTF-8 continuation bytes take no column. */
static int width_of(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}

/* Column (display) at which the byte offset off of s lies. */
static int col_at(const char *s, size_t off)
{
    int w = 0;
    for (size_t i = 0; i < off && s[i]; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* Byte offset of the character at display column col of s. */
static size_t off_at_col(const char *s, int col)
{
    size_t i = 0;
    int w = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (w == col)
                return i;
            w++;
        }
        i++;
    }
    return i;
}

/* Removes ANSI colour sequences in place. */
static void strip_ansi(char *s)
{
    char *o = s;
    for (char *p = s; *p;) {
        if (*p == '\033' && p[1] == '[') {
            p += 2;
            while (*p && *p != 'm')
                p++;
            if (*p)
                p++;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
}

#define NVAR 84   /* covers every value of every axis, grid kind and status, many times over */

// ----------------------------------------------------------------------------
// report_json / results_parse_line

START_TEST(json_round_trip_every_field)
{
    kf_run_info info = make_info(true), nodev = make_info(false);
    bool seen_grid[KF_GRID_KIND_COUNT] = {0}, seen_status[KF_ST_COUNT] = {0};
    for (int i = 0; i < NVAR; i++) {
        kf_result r = make_result(i);
        seen_grid[kf_grid_decode(r.v.p[RP_GRID]).kind] = seen_status[r.status] = true;
        const kf_run_info *ip = i % 3 == 0 ? NULL : i % 3 == 1 ? &info : &nodev;
        char *line = report_json(&r, ip);
        ck_assert_ptr_nonnull(line);
        ck_assert_msg(strchr(line, '\n') == NULL, "a results line holds a newline");
        ck_assert_msg(valid_utf8(line), "not UTF-8: %s", line);
        cJSON *j = parse_strict(line);
        ck_assert(cJSON_IsObject(j));
        cJSON_Delete(j);

        kf_result back;
        memset(&back, 0x77, sizeof back);
        char err[256] = "";
        ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "[%d] %s: %s", i, err,
                      line);
        assert_read_back(&r, ip, &back, i);
        /* the case identity survives the round trip (resume relies on it) */
        kf_result want = as_written(&r, ip);
        char k1[2048], k2[2048];
        results_key_of(&want, k1, sizeof k1);
        results_key_of(&back, k2, sizeof k2);
        ck_assert_msg(strcmp(k1, k2) == 0, "[%d] key %s != %s", i, k1, k2);
        free(line);
    }
    for (int k = 0; k < KF_GRID_KIND_COUNT; k++)
        ck_assert(seen_grid[k]);
    for (int k = 0; k < KF_ST_COUNT; k++)
        ck_assert(seen_status[k]);
}
END_TEST

START_TEST(json_round_trip_every_enum_value)
{
    /* each enumerated axis of the table at each of its values, the others at the defaults */
    const kf_family *f = reduce_fam();
    int enums = 0;
    for (int ax = 0; ax < f->nparams; ax++) {
        const kf_param *p = &f->params[ax];
        if (p->kind != KF_PK_ENUM)
            continue;
        enums++;
        for (int val = 0; val < p->count; val++) {
            kf_result r;
            memset(&r, 0, sizeof r);
            reduce_variant_defaults(&r.v);
            kf_bench_defaults(&r.bench);
            r.device = -1;
            r.shape = shape_n(1000);
            r.v.p[ax] = val;
            char *line = report_json(&r, NULL);
            cJSON *j = parse_strict(line);
            ck_assert_str_eq(cJSON_GetObjectItem(j, p->name)->valuestring, p->names[val]);
            cJSON_Delete(j);
            kf_result back;
            char err[256];
            ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
            assert_result_eq(&r, &back, ax * 100 + val);
            free(line);
        }
    }
    ck_assert_int_eq(enums, 10);   /* dtype, op, acc_dtype, algorithm, unroll, passes, layout, accumulator,
                                    * warp_reduce, load */
    /* grid kinds at a few values (the extremes of each range), status at each value */
    static const kf_grid grids[] = {{KF_GRID_AUTO, 0},    {KF_GRID_BLOCKS, 1},
                                    {KF_GRID_BLOCKS, 65535}, {KF_GRID_BLOCKS, KF_GRID_MAX_BLOCKS},
                                    {KF_GRID_PER_SM, 1},  {KF_GRID_PER_SM, 32}, {KF_GRID_PER_SM, KF_GRID_MAX_PER_SM},
                                    {KF_GRID_WAVES, 1},   {KF_GRID_WAVES, 8}, {KF_GRID_WAVES, KF_GRID_MAX_PER_SM}};
    for (int g = 0; g < N_OF(grids); g++)
        for (int st = 0; st < KF_ST_COUNT; st++) {
            kf_result r;
            memset(&r, 0, sizeof r);
            reduce_variant_defaults(&r.v);
            kf_bench_defaults(&r.bench);
            r.device = -1;
            r.v.p[RP_GRID] = kf_grid_encode(grids[g]);
            r.status = (kf_status)st;
            r.shape = shape_n(1);
            char *line = report_json(&r, NULL);
            kf_result back;
            char err[256];
            ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
            assert_result_eq(&r, &back, g * 100 + st);
            free(line);
        }
}
END_TEST

START_TEST(json_keys_and_run_info)
{
    kf_run_info info = make_info(true);
    kf_result r = make_result(5);
    r.device_name[0] = 0;          /* no device of its own: the run's */
    r.device = -1;
    r.device_uuid[0] = 0;
    r.bench.seed = 1234567;
    r.bench.offset = 3;
    char *line = report_json(&r, &info);
    cJSON *j = parse_strict(line);
    /* the variant axes use the config's spelling: the family's parameter table */
    const kf_family *f = reduce_fam();
    for (int a = 0; a < f->nparams; a++)
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(j, f->params[a].name) != NULL,
                      "results line lacks the axis key \"%s\"", f->params[a].name);
    static const char *const keys[] = {"run",      "time",   "host",      "config",    "device",
                                       "n",        "status", "message",   "median_ms", "gbps",
                                       "pct_peak", "reps",   "gpu_value", "ref_value", "bench",
                                       "kernel",   "device_index", "uuid"};
    for (int k = 0; k < N_OF(keys); k++)
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(j, keys[k]) != NULL, "lacks \"%s\"", keys[k]);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "run")->valuestring, info.run_id);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "time")->valuestring, info.time);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "host")->valuestring, info.host);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "config")->valuestring, info.config);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "device")->valuestring, info.dev.name);
    ck_assert_int_eq((int)cJSON_GetObjectItem(j, "device_index")->valuedouble, info.dev.index);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "uuid")->valuestring, info.dev.uuid);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "kernel")->valuestring, "reduce");
    ck_assert_int_eq((int)cJSON_GetObjectItem(j, "sms")->valuedouble, 132);
    ck_assert(cJSON_GetObjectItem(j, "peak_gbps")->valuedouble == info.dev.peak_gbps);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "status")->valuestring, kf_status_names[r.status]);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "dtype")->valuestring, kf_dtype_names[variant_dtype(&r.v)]);
    ck_assert(cJSON_GetObjectItem(j, "n")->valuedouble == (double)r.shape.d[0]);
    /* which fields are the parameters and which the sizes, in the table's order */
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(j, "axes"), *sizes = cJSON_GetObjectItemCaseSensitive(j, "sizes");
    ck_assert(cJSON_IsArray(axes) && cJSON_IsArray(sizes));
    ck_assert_int_eq(cJSON_GetArraySize(axes), f->nparams);
    ck_assert_int_eq(cJSON_GetArraySize(sizes), f->nsizes);
    for (int a = 0; a < f->nparams; a++)
        ck_assert_str_eq(cJSON_GetArrayItem(axes, a)->valuestring, f->params[a].name);
    for (int d = 0; d < f->nsizes; d++)
        ck_assert_str_eq(cJSON_GetArrayItem(sizes, d)->valuestring, f->sizes[d].name);
    strbuf csv = {0}; /* a CSV header names the columns itself */
    line_csv(&csv, &r, &info, true);
    ck_assert_msg(csv.s && !strstr(csv.s, "axes") && !strstr(csv.s, "sizes"), "%s", csv.s);
    sb_free(&csv);
    const cJSON *b = cJSON_GetObjectItem(j, "bench");
    ck_assert(cJSON_IsObject(b));
    ck_assert(cJSON_GetObjectItem(b, "seed")->valuedouble == 1234567);
    ck_assert(cJSON_GetObjectItem(b, "offset")->valuedouble == 3);
    ck_assert(cJSON_GetObjectItem(b, "min_reps")->valuedouble == r.bench.min_reps);
    ck_assert(cJSON_GetObjectItem(b, "max_noise")->valuedouble == r.bench.max_noise);
    ck_assert(cJSON_GetObjectItem(b, "timeout_s")->valuedouble == r.bench.timeout_s);
    ck_assert(cJSON_IsBool(cJSON_GetObjectItem(b, "flush_l2")));
    /* no key appears twice */
    for (const cJSON *x = j->child; x; x = x->next)
        for (const cJSON *y = x->next; y; y = y->next)
            ck_assert_msg(strcmp(x->string, y->string) != 0, "duplicate key \"%s\"", x->string);
    cJSON_Delete(j);
    free(line);

    /* the result's own device, index and UUID win over the run's */
    kf_result own = r;
    snprintf(own.device_name, sizeof own.device_name, "NVIDIA H200");
    own.device = 7;
    snprintf(own.device_uuid, sizeof own.device_uuid, "GPU-77777777-0000-0000-0000-000000000007");
    line = report_json(&own, &info);
    j = parse_strict(line);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "device")->valuestring, "NVIDIA H200");
    ck_assert_int_eq((int)cJSON_GetObjectItem(j, "device_index")->valuedouble, 7);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "uuid")->valuestring, own.device_uuid);
    cJSON_Delete(j);
    free(line);

    /* "bench" is each result's own: two results of one run, two benches */
    kf_result other = r;
    other.bench.seed = 99;
    other.bench.offset = 17;
    other.bench.flush_l2 = !r.bench.flush_l2;
    line = report_json(&other, &info);
    j = parse_strict(line);
    b = cJSON_GetObjectItem(j, "bench");
    ck_assert(cJSON_GetObjectItem(b, "seed")->valuedouble == 99);
    ck_assert(cJSON_GetObjectItem(b, "offset")->valuedouble == 17);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(b, "flush_l2")) == other.bench.flush_l2);
    cJSON_Delete(j);
    free(line);

    /* without a device there are no device keys */
    info.have_dev = false;
    line = report_json(&r, &info);
    j = parse_strict(line);
    ck_assert(cJSON_GetObjectItem(j, "device") == NULL);
    ck_assert(cJSON_GetObjectItem(j, "device_index") == NULL);
    ck_assert(cJSON_GetObjectItem(j, "uuid") == NULL);
    ck_assert(cJSON_GetObjectItem(j, "run") != NULL);
    ck_assert(cJSON_GetObjectItem(j, "kernel") != NULL);
    ck_assert(cJSON_GetObjectItem(j, "bench") != NULL);
    cJSON_Delete(j);
    free(line);
}
END_TEST

/* Issue 14: the NVML figures are null where nothing was read, GB/J is
 * derived, bench.energy is part of the case identity only when on. */
START_TEST(json_nvml_fields)
{
    kf_run_info info = make_info(true);
    kf_result r = make_result(2); /* no NVML */
    ck_assert(!r.nvml);
    char *line = report_json(&r, &info);
    cJSON *j = parse_strict(line);
    static const char *const nullable[] = {"sm_mhz_min", "sm_mhz_max", "sm_mhz_limit", "mem_mhz",  "temp_c",
                                           "power_w",    "throttled",  "energy_j",     "energy_runs", "gb_per_j"};
    for (int k = 0; k < N_OF(nullable); k++)
        ck_assert_msg(cJSON_IsNull(cJSON_GetObjectItem(j, nullable[k])), "%s is not null", nullable[k]);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "nvml")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "nvml_note")->valuestring, r.nvml_note);
    cJSON_Delete(j);
    free(line);

    r = make_result(1); /* NVML and energy */
    ck_assert(r.nvml && r.energy_j > 0 && r.bench.energy);
    line = report_json(&r, &info);
    j = parse_strict(line);
    ck_assert_int_eq((int)cJSON_GetObjectItem(j, "sm_mhz_min")->valuedouble, r.sm_mhz_min);
    ck_assert(cJSON_GetObjectItem(j, "energy_j")->valuedouble == r.energy_j);
    double gbpj = r.stats.gbps * r.stats.median_ms / 1e3 / r.energy_j;
    ck_assert_double_eq_tol(cJSON_GetObjectItem(j, "gb_per_j")->valuedouble, gbpj, gbpj * 1e-12);
    ck_assert_double_eq_tol(report_gb_per_j(&r), gbpj, gbpj * 1e-12);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bench"), "energy")));
    cJSON_Delete(j);
    kf_result back;
    char err[256];
    ck_assert_int_eq(results_parse_line(line, &back, err, sizeof err), 0);
    assert_read_back(&r, &info, &back, 1);
    free(line);

    /* energy on or off: two measurements; a line of a file written before
     * bench.energy existed is the same case as one with energy off */
    char k1[2048], k2[2048], k3[2048];
    r.bench.energy = false;
    results_case_key(&r.v, &r.shape, &r.bench, info.dev.name, k1, sizeof k1);  /* the device the line names */
    line = report_json(&r, &info);
    char *cut = strstr(line, ",\"energy\":false");
    ck_assert_ptr_nonnull(cut);
    memmove(cut, cut + strlen(",\"energy\":false"), strlen(cut + strlen(",\"energy\":false")) + 1);
    ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s: %s", err, line);
    free(line);
    results_key_of(&back, k2, sizeof k2);
    ck_assert_str_eq(k1, k2);
    r.bench.energy = true;
    results_case_key(&r.v, &r.shape, &r.bench, info.dev.name, k2, sizeof k2);
    ck_assert_str_ne(k1, k2);
    /* the NVML figures themselves are not part of the identity */
    r.sm_mhz_min = 1;
    r.energy_j = 5;
    results_case_key(&r.v, &r.shape, &r.bench, info.dev.name, k3, sizeof k3);
    ck_assert_str_eq(k2, k3);
}
END_TEST

/* A variant without a name is written with its label, even one longer than
 * a name may be, and reads back without a name: the same case. */
START_TEST(json_name_never_empty)
{
    kf_run_info info = make_info(true);
    kf_result r = make_result(1);
    ck_assert_str_eq(r.v.name, "");
    char label[256];
    variant_label(&r.v, label, sizeof label);
    ck_assert_int_gt((int)strlen(label), KF_NAME_MAX);
    char *line = report_json(&r, &info);
    cJSON *j = parse_strict(line);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, label);
    cJSON_Delete(j);
    kf_result back;
    char err[256], ka[2048], kb[2048];
    ck_assert_int_eq(results_parse_line(line, &back, err, sizeof err), 0);
    ck_assert_str_eq(back.v.name, "");
    kf_result w = as_written(&r, &info);
    results_key_of(&w, ka, sizeof ka);
    results_key_of(&back, kb, sizeof kb);
    ck_assert_str_eq(ka, kb);
    free(line);
    /* a name given as the label is the same case as no name */
    kf_result named = w;
    snprintf(named.v.name, sizeof named.v.name, "%.63s", label);
    results_key_of(&named, kb, sizeof kb);
    ck_assert_str_ne(ka, kb); /* a cut label is a name of its own */
}
END_TEST

START_TEST(json_special_values)
{
    kf_result r = make_result(3);
    /* non-finite numbers become null (valid JSON) and read back as NaN */
    r.abs_err = INFINITY;
    r.stats.noise = NAN;
    r.stats.gbps = -INFINITY;
    r.stats.median_ms = 5e-324;            /* smallest subnormal */
    r.stats.mean_ms = 1.7976931348623157e308;
    r.tolerance = -0.0;
    r.compile_ms = 0.1 + 0.2;              /* needs 17 digits */
    char *line = report_json(&r, NULL);
    cJSON *j = parse_strict(line);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "abs_err")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "noise")));
    cJSON_Delete(j);
    kf_result back;
    char err[256];
    ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
    ck_assert(isnan(back.abs_err) && isnan(back.stats.noise) && isnan(back.stats.gbps));
    ck_assert(back.stats.median_ms == 5e-324);
    ck_assert(back.stats.mean_ms == 1.7976931348623157e308);
    ck_assert(back.compile_ms == 0.1 + 0.2);
    ck_assert(back.tolerance == 0);
    free(line);

    /* longest strings, large n and blocks */
    memset(&r, 0, sizeof r);
    reduce_variant_defaults(&r.v);
    kf_bench_defaults(&r.bench);
    r.device = -1;
    memset(r.v.name, 'N', sizeof r.v.name - 1);
    for (size_t i = 0; i < sizeof r.message - 1; i++)
        r.message[i] = (char)('a' + i % 26);
    memset(r.gpu_value, '9', sizeof r.gpu_value - 1);
    r.shape.d[0] = ((int64_t)1 << 53) - 1;
    r.bench.seed = ((uint64_t)1 << 53) - 1;   /* the largest seed a config takes */
    r.bench.offset = 4096;
    r.blocks = -((int64_t)1 << 52);
    r.launches = -1;
    r.regs = 2147483647;
    r.smem_bytes = -2147483647 - 1;
    line = report_json(&r, NULL);
    ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
    assert_result_eq(&r, &back, 0);
    free(line);
}
END_TEST

START_TEST(json_cleans_bad_utf8)
{
    kf_result r = make_result(0);
    /* stray continuation byte, truncated sequence, overlong '/', surrogate, 0xFF */
    snprintf(r.message, sizeof r.message, "a\x80 b\xe2\x82 c\xc0\xaf d\xed\xa0\x80 e\xff f\xc3\xa9");
    snprintf(r.v.name, sizeof r.v.name, "n\xfe");
    snprintf(r.device_name, sizeof r.device_name, "GPU\xc0 \xe2\x82\xac");
    kf_run_info info = make_info(true);
    char *line = report_json(&r, &info);
    ck_assert_msg(valid_utf8(line), "results line is not UTF-8");
    cJSON *j = parse_strict(line);
    cJSON_Delete(j);
    kf_result back;
    char err[256];
    ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
    ck_assert(valid_utf8(back.message));
    ck_assert(valid_utf8(back.v.name));
    ck_assert(valid_utf8(back.device_name));
    ck_assert(strstr(back.device_name, "\xe2\x82\xac") != NULL);
    ck_assert(strncmp(back.message, "a", 1) == 0);
    ck_assert(strstr(back.message, "f\xc3\xa9") != NULL);   /* good characters kept */
    ck_assert(strstr(back.message, " b") && strstr(back.message, " c") && strstr(back.message, " e"));
    free(line);
}
END_TEST

START_TEST(parse_rejects_bad_lines)
{
    kf_result r = make_result(1);
    kf_run_info info = make_info(true);
    char *good = report_json(&r, &info);   /* with the device keys */
    kf_result back;
    char err[256];

    static const char *const bad[] = {
        "", "not json", "{", "[1,2,3]", "42", "\"str\"", "null", "{}",
        "{\"dtype\":\"float32\"}",
    };
    for (int i = 0; i < N_OF(bad); i++) {
        err[0] = 0;
        ck_assert_msg(results_parse_line(bad[i], &back, err, sizeof err) == -1, "accepted '%s'", bad[i]);
        ck_assert_msg(err[0] != 0, "no message for '%s'", bad[i]);
    }
    /* trailing junk after the object */
    size_t len = strlen(good);
    char *junk = malloc(len + 8);
    snprintf(junk, len + 8, "%s xyz", good);
    ck_assert_int_eq(results_parse_line(junk, &back, err, sizeof err), -1);
    /* half a line (what a crash leaves) */
    memcpy(junk, good, len / 2);
    junk[len / 2] = 0;
    ck_assert_int_eq(results_parse_line(junk, &back, err, sizeof err), -1);
    free(junk);

    /* one field removed or corrupted at a time: every parameter of the
     * table (but acc_dtype, which lines written before it existed lack:
     * parse_optional_fields_default), the size and the status are required */
    const kf_family *f = reduce_fam();
    const char *required[KF_MAX_PARAMS + 4];
    int nreq = 0;
    for (int a = 0; a < f->nparams; a++)
        if (!f->params[a].optional)
            required[nreq++] = f->params[a].name;
    required[nreq++] = "n";
    required[nreq++] = "status";
    ck_assert_int_eq(nreq, 15);
    for (int k = 0; k < nreq; k++) {
        cJSON *j = parse_strict(good);
        cJSON_DeleteItemFromObjectCaseSensitive(j, required[k]);
        char *s = cJSON_PrintUnformatted(j);
        err[0] = 0;
        ck_assert_msg(results_parse_line(s, &back, err, sizeof err) == -1, "accepted without %s",
                      required[k]);
        ck_assert_msg(strstr(err, required[k]) != NULL, "message lacks \"%s\": %s", required[k], err);
        free(s);
        cJSON_Delete(j);
    }
    static const struct {
        const char *key, *json;
    } corrupt[] = {
        {"dtype", "\"float8\""},     {"op", "3"},           {"status", "\"okay\""},
        {"algorithm", "null"},       {"n", "-1"},           {"n", "1.5"},
        {"n", "\"1000\""},           {"n", "1e30"},         {"block_size", "1e12"},
        {"grid", "0"},               {"grid", "\"big\""},   {"grid", "{\"blocks\": 4}"},
        {"grid", "{\"waves\": 0}"},  {"grid", "[4]"},       {"grid", "2.5"},
        {"grid", "{\"waves\": 2, \"blocks_per_sm\": 2}"},  {"median_ms", "\"fast\""},
        {"deterministic", "1"},      {"message", "7"},      {"name", "false"},
        /* the engine's values: the table's ranges, the family, the device, the bench */
        {"grid", "1099511627776"},   {"grid", "{\"waves\": 65}"}, {"grid", "{\"blocks_per_sm\": 0}"},
        {"block_size", "2000"},      {"block_size", "0"},  {"vector_width", "3"},
        {"elements_per_thread", "257"}, {"kernel", "\"scan\""}, {"kernel", "7"},
        {"kernel", "null"},          {"device_index", "\"0\""}, {"device_index", "1.5"},
        {"uuid", "5"},               {"device", "[]"},
        {"bench", "{\"seed\": -1}"}, {"bench", "{\"seed\": \"x\"}"}, {"bench", "{\"offset\": -1}"},
        {"bench", "{\"flush_l2\": 1}"}, {"bench", "{\"min_reps\": 1.5}"}, {"bench", "{\"timeout_s\": \"no\"}"},
    };
    for (int k = 0; k < N_OF(corrupt); k++) {
        cJSON *j = parse_strict(good);
        cJSON *val = cJSON_Parse(corrupt[k].json);
        ck_assert_ptr_nonnull(val);
        cJSON_ReplaceItemInObjectCaseSensitive(j, corrupt[k].key, val);
        char *s = cJSON_PrintUnformatted(j);
        err[0] = 0;
        ck_assert_msg(results_parse_line(s, &back, err, sizeof err) == -1, "accepted %s = %s",
                      corrupt[k].key, corrupt[k].json);
        ck_assert_msg(err[0] != 0, "no message for %s = %s", corrupt[k].key, corrupt[k].json);
        free(s);
        cJSON_Delete(j);
    }
    /* a NULL message buffer is fine */
    ck_assert_int_eq(results_parse_line("{", &back, NULL, 0), -1);
    free(good);
}
END_TEST

START_TEST(parse_optional_fields_default)
{
    /* a minimal line: only the required keys (and no "kernel": a kforge 0.1 line) */
    const char *line = "{\"dtype\":\"int64\",\"op\":\"xor\",\"algorithm\":\"shuffle\","
                       "\"block_size\":128,\"elements_per_thread\":2,\"unroll\":\"full\","
                       "\"vector_width\":4,\"grid\":{\"waves\":3},\"passes\":\"atomic\","
                       "\"layout\":\"grid\",\"accumulator\":\"shared\",\"warp_reduce\":\"intrinsic\","
                       "\"load\":\"stream\",\"n\":4096,\"status\":\"timeout\",\"unknown_key\":[1]}";
    kf_result r;
    char err[256];
    ck_assert_msg(results_parse_line(line, &r, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(r.v.family, reduce_family());
    reduce_v x;
    reduce_decode(&r.v, &x);
    ck_assert(x.dtype == KF_INT64 && x.op == KF_OP_XOR && x.algorithm == KF_ALG_SHUFFLE);
    ck_assert(x.block_size == 128 && x.elements_per_thread == 2 && x.vector_width == 4);
    ck_assert(x.unroll == KF_UNROLL_FULL && x.passes == KF_PASSES_ATOMIC);
    ck_assert(x.grid.kind == KF_GRID_WAVES && x.grid.value == 3);
    ck_assert(x.layout == KF_LAYOUT_GRID && x.accumulator == KF_ACC_SHARED);
    ck_assert(x.warp_reduce == KF_WARP_INTRINSIC && x.load == KF_LOAD_STREAM);
    ck_assert(x.acc_dtype == KF_ACCT_AUTO); /* written before the axis existed */
    ck_assert(r.shape.d[0] == 4096 && r.status == KF_ST_TIMEOUT);
    ck_assert(r.shape.d[1] == 0 && r.shape.d[2] == 0);
    ck_assert_str_eq(r.v.name, "");
    ck_assert_str_eq(r.message, "");
    ck_assert(r.stats.reps == 0 && r.stats.median_ms == 0 && r.blocks == 0 && !r.cached);
    /* no device: index -1, no name or UUID; no bench: the defaults */
    ck_assert_int_eq(r.device, -1);
    ck_assert_str_eq(r.device_name, "");
    ck_assert_str_eq(r.device_uuid, "");
    kf_bench def;
    kf_bench_defaults(&def);
    assert_bench_eq(&def, &r.bench, 0);
    /* a bench object with only some keys: the others at their defaults */
    char *partial = malloc(strlen(line) + 64);
    snprintf(partial, strlen(line) + 64, "%.*s,\"bench\":{\"seed\":77}}", (int)strlen(line) - 1, line);
    ck_assert_msg(results_parse_line(partial, &r, err, sizeof err) == 0, "%s: %s", err, partial);
    ck_assert_int_eq(r.bench.seed, 77);
    def.seed = 77;
    assert_bench_eq(&def, &r.bench, 1);
    free(partial);
}
END_TEST

START_TEST(parse_without_kernel_is_reduce)
{
    /* every results line of kforge 0.1 lacks "kernel": it is a reduce line,
     * read exactly like the same line with "kernel": "reduce" */
    kf_run_info info = make_info(true);
    for (int i = 0; i < NVAR; i += 5) {
        kf_result r = make_result(i);
        char *line = report_json(&r, &info);
        cJSON *j = parse_strict(line);
        ck_assert_str_eq(cJSON_GetObjectItem(j, "kernel")->valuestring, "reduce");
        cJSON_Delete(j);
        /* the same text without the key (not re-printed: cJSON may round numbers) */
        char *old = strdup(line);
        char *k = strstr(old, "\"kernel\":\"reduce\",");
        ck_assert_msg(k != NULL, "%s", line);
        memmove(k, k + strlen("\"kernel\":\"reduce\","), strlen(k + strlen("\"kernel\":\"reduce\",")) + 1);
        ck_assert(strstr(old, "\"kernel\"") == NULL);
        j = parse_strict(old);
        cJSON_Delete(j);
        kf_result a, b;
        char err[256];
        ck_assert_msg(results_parse_line(line, &a, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(results_parse_line(old, &b, err, sizeof err) == 0, "[%d] without kernel: %s", i, err);
        ck_assert_int_eq(b.v.family, reduce_family());
        assert_result_eq(&a, &b, i);
        assert_read_back(&r, &info, &b, i);
        free(old);
        free(line);
    }
    /* and a line of kforge 0.1 as it was written (no kernel, device_index, uuid, timeout_s) */
    const char *v01 = "{\"kforge\":\"0.1.0\",\"run\":\"r1\",\"device\":\"NVIDIA H100 80GB HBM3\",\"name\":\"reduce6\","
                      "\"label\":\"x\",\"dtype\":\"float32\",\"op\":\"sum\",\"algorithm\":\"sequential\","
                      "\"block_size\":256,\"elements_per_thread\":1,\"unroll\":\"full\",\"vector_width\":1,"
                      "\"grid\":\"auto\",\"passes\":\"multi_kernel\",\"layout\":\"block\",\"accumulator\":\"register\","
                      "\"warp_reduce\":\"shared\",\"load\":\"plain\",\"n\":16777216,\"status\":\"ok\","
                      "\"median_ms\":0.05,\"bench\":{\"warmup\":3,\"min_reps\":10,\"max_reps\":100,"
                      "\"max_time_s\":1,\"max_noise\":0.02,\"flush_l2\":true,\"seed\":42,\"offset\":0}}";
    kf_result r;
    char err[256];
    ck_assert_msg(results_parse_line(v01, &r, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(r.v.family, reduce_family());
    ck_assert_str_eq(r.v.name, "reduce6");
    ck_assert_int_eq(r.v.p[RP_ALGORITHM], KF_ALG_SEQUENTIAL);
    ck_assert_int_eq(r.v.p[RP_UNROLL], KF_UNROLL_FULL);
    ck_assert_int_eq(r.shape.d[0], 16777216);
    ck_assert_str_eq(r.device_name, "NVIDIA H100 80GB HBM3");
    ck_assert_int_eq(r.device, -1);
    ck_assert_int_eq(r.bench.seed, 42);
    ck_assert(r.bench.flush_l2 && r.bench.warmup == 3 && r.stats.median_ms == 0.05);
}
END_TEST

// ----------------------------------------------------------------------------
// results_case_key

/* results_case_key into buf with a default bench and GPU. */
static void key_of(const kf_variant *v, int64_t n, char *buf, size_t len)
{
    kf_shape s = shape_n(n);
    kf_bench b;
    kf_bench_defaults(&b);
    results_case_key(v, &s, &b, "NVIDIA H100 80GB HBM3", buf, len);
}

START_TEST(case_key_identity)
{
    kf_variant a, b;
    char ka[2048], kb[2048];
    for (int i = 0; i < NVAR; i++) {
        a = make_result(i).v;
        memset(&b, 0x33, sizeof b);     /* padding differs: must not matter */
        b = a;
        key_of(&a, 1000, ka, sizeof ka);
        key_of(&b, 1000, kb, sizeof kb);
        ck_assert_str_eq(ka, kb);
        key_of(&a, 1001, kb, sizeof kb);
        ck_assert_msg(strcmp(ka, kb) != 0, "n is not part of the key");
    }

    /* one field changed at a time */
    kf_variant base = make_result(7).v;
    reduce_v bv;
    reduce_decode(&base, &bv);
    key_of(&base, 64, ka, sizeof ka);
    for (int f = 0; f < 17; f++) {
        reduce_v x = bv;
        char name[KF_NAME_MAX];
        snprintf(name, sizeof name, "%s", base.name);
        switch (f) {
        case 0: snprintf(name, sizeof name, "%.62s.", base.name); break;
        case 1: x.dtype = (kf_dtype)((x.dtype + 1) % KF_REDUCE_DTYPES); break;
        case 2: x.op = (kf_op)((x.op + 1) % KF_OP_COUNT); break;
        case 3: x.algorithm = (kf_algorithm)((x.algorithm + 1) % KF_ALG_COUNT); break;
        case 4: x.block_size = x.block_size == 1024 ? 512 : x.block_size * 2; break;
        case 5: x.elements_per_thread += 1; break;
        case 6: x.unroll = (kf_unroll)((x.unroll + 1) % KF_UNROLL_COUNT); break;
        case 7: x.vector_width = x.vector_width == 1 ? 2 : 1; break;
        case 8: x.grid.kind = KF_GRID_BLOCKS; x.grid.value = 4; break;
        case 9: x.grid.kind = KF_GRID_PER_SM; x.grid.value = 4; break;
        case 10: x.grid.kind = KF_GRID_WAVES; x.grid.value = 4; break;
        case 11: x.passes = (kf_passes)((x.passes + 1) % KF_PASSES_COUNT); break;
        case 12: x.layout = (kf_layout)((x.layout + 1) % KF_LAYOUT_COUNT); break;
        case 13: x.accumulator = (kf_accum)((x.accumulator + 1) % KF_ACC_COUNT); break;
        case 14: x.warp_reduce = (kf_warp_reduce)((x.warp_reduce + 1) % KF_WARP_COUNT); break;
        case 15: x.load = (kf_load)((x.load + 1) % KF_LOAD_COUNT); break;
        default: x.grid.kind = KF_GRID_AUTO; x.grid.value = 0; break;
        }
        reduce_encode(&x, name, &b);
        if (variant_eq(&b, &base))
            continue;   /* e.g. base already had that grid */
        key_of(&b, 64, kb, sizeof kb);
        ck_assert_msg(strcmp(ka, kb) != 0, "changing field %d leaves the key at %s", f, ka);
    }
}
END_TEST

/* Every setting of core/bench_fields.h's table is written under "bench",
 * read back, named in the CSV header, and part of the case identity iff
 * the table says so: the line and the key walk the one table. */
START_TEST(bench_fields_walked)
{
    kf_result r = make_result(4);
    char *head = NULL;
    {
        strbuf h = {0};
        line_csv(&h, &r, NULL, true);
        head = sb_take(&h);
    }
    char k0[2048];
    results_key_of(&r, k0, sizeof k0);
    for (int i = 0; i < bench_nfields; i++) {
        const bench_field *bf = &bench_fields[i];
        kf_result x = r;
        void *p = bench_field_at_mut(bf, &x.bench);
        switch (bf->type) {
        case BF_INT: *(int *)p += 1; break;
        case BF_I64: *(int64_t *)p += 1; break;
        case BF_U64: *(uint64_t *)p += 1; break;
        case BF_DBL: *(double *)p += 0.25; break;
        case BF_BOOL: *(bool *)p = !*(bool *)p; break;
        }
        char *line = report_json(&x, NULL);
        cJSON *j = cJSON_Parse(line);
        ck_assert_ptr_nonnull(j);
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "bench"), bf->name),
                      "bench.%s not written: %s", bf->name, line);
        cJSON_Delete(j);
        kf_result back;
        char err[256];
        ck_assert_msg(results_parse_line(line, &back, err, sizeof err) == 0, "%s", err);
        strbuf a = {0}, b = {0};
        bench_field_text(&a, bf, &x.bench);
        bench_field_text(&b, bf, &back.bench);
        ck_assert_msg(strcmp(a.s, b.s) == 0, "bench.%s wrote %s, read %s", bf->name, a.s, b.s);
        sb_free(&a);
        sb_free(&b);
        char col[64];
        snprintf(col, sizeof col, ",bench.%s", bf->name);
        ck_assert_msg(strstr(head, col), "CSV header lacks %s: %s", col + 1, head);
        char k1[2048];
        results_key_of(&x, k1, sizeof k1);
        if (bf->ident)
            ck_assert_msg(strcmp(k0, k1) != 0, "bench.%s is not part of the key", bf->name);
        else
            ck_assert_str_eq(k0, k1);
        free(line);
    }
    free(head);
}
END_TEST

START_TEST(case_key_device_bench_shape)
{
    /* the identity also holds the GPU model, the bench settings that change
     * the value or the timing, and every dimension of the shape */
    kf_variant v = make_result(3).v;
    kf_shape s = shape_n(1 << 20);
    kf_bench b;
    kf_bench_defaults(&b);
    b.seed = 42;
    b.offset = 1;
    char k0[2048], k1[2048];
    results_case_key(&v, &s, &b, "NVIDIA H100 80GB HBM3", k0, sizeof k0);
    results_case_key(&v, &s, &b, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
    ck_assert_str_eq(k0, k1);

    /* device name */
    static const char *const devs[] = {"NVIDIA H200", "", "NVIDIA H100 80GB HBM3 ", "nvidia h100 80gb hbm3"};
    for (int d = 0; d < N_OF(devs); d++) {
        results_case_key(&v, &s, &b, devs[d], k1, sizeof k1);
        ck_assert_msg(strcmp(k0, k1) != 0, "device \"%s\" gives the same key", devs[d]);
    }
    /* NULL device is the same as "" (no GPU) */
    char kn[2048], ke[2048];
    results_case_key(&v, &s, &b, NULL, kn, sizeof kn);
    results_case_key(&v, &s, &b, "", ke, sizeof ke);
    ck_assert_str_eq(kn, ke);

    /* bench seed and offset (they change the input), and the timing settings */
    for (int f = 0; f < 9; f++) {
        kf_bench c = b;
        switch (f) {
        case 0: c.seed = 43; break;
        case 1: c.seed = 0; break;
        case 2: c.offset = 0; break;
        case 3: c.offset = 2; break;
        case 4: c.flush_l2 = !c.flush_l2; break;
        case 5: c.warmup += 1; break;
        case 6: c.min_reps += 1; break;
        case 7: c.max_reps += 1; break;
        default: c.max_noise += 0.001; break;
        }
        results_case_key(&v, &s, &c, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
        ck_assert_msg(strcmp(k0, k1) != 0, "bench change %d gives the same key %s", f, k0);
    }
    kf_bench t = b;
    t.max_time_s += 0.5;
    results_case_key(&v, &s, &t, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
    ck_assert_msg(strcmp(k0, k1) != 0, "max_time_s is not part of the key");
    /* the watchdog is not: it changes neither the value nor the timing */
    t = b;
    t.timeout_s = b.timeout_s + 60;
    results_case_key(&v, &s, &t, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
    ck_assert_str_eq(k0, k1);

    /* shape: n, and the unused dimensions are not looked at by reduce (one
     * size), but n must be */
    kf_shape s2 = shape_n((1 << 20) + 1);
    results_case_key(&v, &s2, &b, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
    ck_assert_msg(strcmp(k0, k1) != 0, "shape is not part of the key");
    s2 = shape_n(1);
    results_case_key(&v, &s2, &b, "NVIDIA H100 80GB HBM3", k1, sizeof k1);
    ck_assert(strcmp(k0, k1) != 0);

    /* no device name and variant name can be confused: '|' in either */
    kf_variant x = v, y = v;
    snprintf(x.name, sizeof x.name, "c");
    snprintf(y.name, sizeof y.name, "b|c");
    results_case_key(&x, &s, &b, "a|b", k0, sizeof k0);
    results_case_key(&y, &s, &b, "a", k1, sizeof k1);
    ck_assert_msg(strcmp(k0, k1) != 0, "device/name boundary is ambiguous: %s", k0);
    snprintf(x.name, sizeof x.name, "dev=1:a|x");
    snprintf(y.name, sizeof y.name, "x");
    results_case_key(&x, &s, &b, "", k0, sizeof k0);
    results_case_key(&y, &s, &b, "dev=1:a", k1, sizeof k1);
    ck_assert_msg(strcmp(k0, k1) != 0, "device/name boundary is ambiguous: %s", k0);

    /* results_key_of is results_case_key of the result's own fields */
    kf_result r = make_result(9);
    r.bench = b;
    snprintf(r.device_name, sizeof r.device_name, "NVIDIA H200");
    results_key_of(&r, k0, sizeof k0);
    results_case_key(&r.v, &r.shape, &r.bench, r.device_name, k1, sizeof k1);
    ck_assert_str_eq(k0, k1);
}
END_TEST

START_TEST(case_key_iff_equal_random)
{
    /* Random variants, shapes, seeds, offsets and GPUs from small value sets
     * (so that equal ones occur): key equality must match field-by-field
     * equality exactly. */
    enum { M = 600 };
    static kf_variant vs[M];
    static int64_t ns[M];
    static uint64_t seeds[M];
    static int64_t offs[M];
    static int devs[M];
    static char keys[M][2048];
    static const char *const names[] = {"", "a", "a|b", "a|float32", "b", "x|y|z|1|2"};
    static const char *const gpus[] = {"NVIDIA H100 80GB HBM3", "NVIDIA H200", "", "a|b"};
    static const kf_grid grids[] = {{KF_GRID_AUTO, 0}, {KF_GRID_BLOCKS, 4}, {KF_GRID_PER_SM, 4},
                                    {KF_GRID_WAVES, 4}, {KF_GRID_BLOCKS, 44}};
    uint64_t x = 88172645463325252ull;
#define RND(k) (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (int)(x % (uint64_t)(k)))
    for (int i = 0; i < M; i++) {
        reduce_v v;
        reduce_defaults(&v);
        const char *name = names[RND(N_OF(names))];
        v.dtype = (kf_dtype)RND(2);
        v.op = (kf_op)RND(2);
        v.algorithm = (kf_algorithm)RND(2);
        v.block_size = 128 << RND(2);
        v.elements_per_thread = 1 + RND(2);
        v.unroll = (kf_unroll)RND(2);
        v.vector_width = 1 + RND(2);
        v.grid = grids[RND(N_OF(grids))];
        v.passes = (kf_passes)RND(2);
        v.layout = (kf_layout)RND(2);
        v.accumulator = (kf_accum)RND(2);
        v.warp_reduce = (kf_warp_reduce)RND(2);
        v.load = (kf_load)RND(2);
        reduce_encode(&v, name, &vs[i]);
        ns[i] = 1 + RND(2);
        seeds[i] = (uint64_t)RND(2);
        offs[i] = RND(2);
        devs[i] = RND(N_OF(gpus));
        /* copy an earlier one now and then so that equal pairs are common */
        if (i > 0 && RND(2) == 0) {
            int j = RND(i);
            vs[i] = vs[j];
            ns[i] = ns[j];
            seeds[i] = seeds[j];
            offs[i] = offs[j];
            devs[i] = devs[j];
        }
        kf_shape s = shape_n(ns[i]);
        kf_bench b;
        kf_bench_defaults(&b);
        b.seed = seeds[i];
        b.offset = offs[i];
        results_case_key(&vs[i], &s, &b, gpus[devs[i]], keys[i], sizeof keys[i]);
    }
#undef RND
    int equal_pairs = 0;
    for (int i = 0; i < M; i++)
        for (int j = i + 1; j < M; j++) {
            bool same = variant_eq(&vs[i], &vs[j]) && ns[i] == ns[j] && seeds[i] == seeds[j] &&
                        offs[i] == offs[j] && devs[i] == devs[j];
            bool same_key = strcmp(keys[i], keys[j]) == 0;
            ck_assert_msg(same == same_key, "variants %d and %d: equal %d, keys equal %d (%s / %s)",
                          i, j, same, same_key, keys[i], keys[j]);
            equal_pairs += same;
        }
    ck_assert_int_gt(equal_pairs, 50);
}
END_TEST

// ----------------------------------------------------------------------------
// Reports

START_TEST(report_jsonl)
{
    kf_result rows[NVAR];
    for (int i = 0; i < NVAR; i++)
        rows[i] = make_result(i);
    kf_run_info info = make_info(true);
    char *text = run_report(KF_FMT_JSONL, rows, NVAR, &info, NULL);
    size_t len = strlen(text);
    ck_assert(len > 0 && text[len - 1] == '\n');
    char *lines[NVAR + 4];
    int n = split_lines(text, lines, NVAR + 4);
    ck_assert_int_eq(n, NVAR);
    for (int i = 0; i < n; i++) {
        cJSON *j = parse_strict(lines[i]);
        ck_assert(cJSON_IsObject(j));
        ck_assert_str_eq(cJSON_GetObjectItem(j, "run")->valuestring, info.run_id);
        cJSON_Delete(j);
        kf_result back;
        char err[256];
        ck_assert_msg(results_parse_line(lines[i], &back, err, sizeof err) == 0, "%s", err);
        assert_read_back(&rows[i], &info, &back, i);
    }
    free(text);

    /* no rows, no output */
    text = run_report(KF_FMT_JSONL, rows, 0, &info, NULL);
    ck_assert_str_eq(text, "");
    free(text);
}
END_TEST

START_TEST(report_json_array)
{
    kf_result rows[NVAR];
    for (int i = 0; i < NVAR; i++)
        rows[i] = make_result(i);
    kf_run_info info = make_info(false);
    for (int count = 0; count <= NVAR; count += (count < 3 ? 1 : NVAR - 3)) {
        char *text = run_report(KF_FMT_JSON, rows, count, &info, NULL);
        cJSON *arr = parse_strict(text);
        ck_assert(cJSON_IsArray(arr));
        ck_assert_int_eq(cJSON_GetArraySize(arr), count);
        int i = 0;
        for (const cJSON *it = arr->child; it; it = it->next, i++) {
            /* each element is exactly the results line of that row (which
             * the round-trip tests check field by field) */
            ck_assert(cJSON_IsObject(it));
            char *line = report_json(&rows[i], &info);
            cJSON *want = parse_strict(line);
            ck_assert_msg(json_exact_eq(it, want), "element %d differs from its results line", i);
            cJSON_Delete(want);
            free(line);
        }
        cJSON_Delete(arr);
        free(text);
    }
}
END_TEST

START_TEST(report_csv)
{
    kf_result rows[NVAR];
    for (int i = 0; i < NVAR; i++)
        rows[i] = make_result(i);
    rows[4].abs_err = NAN;
    rows[5].stats.gbps = INFINITY;
    kf_run_info info = make_info(true);
    char *text = run_report(KF_FMT_CSV, rows, NVAR, &info, NULL);
    static csv_doc d;
    csv_parse(text, &d);
    ck_assert_int_eq(d.nrec, NVAR + 1);
    int nf = d.nfields[0];
    ck_assert_int_gt(nf, 30);
    for (int r = 1; r < d.nrec; r++)
        ck_assert_msg(d.nfields[r] == nf, "row %d has %d fields, the header %d", r, d.nfields[r], nf);
    /* header: distinct names, including the family, the axes and the bench settings */
    for (int a = 0; a < nf; a++)
        for (int b = a + 1; b < nf; b++)
            ck_assert_msg(strcmp(d.fields[0][a], d.fields[0][b]) != 0, "duplicate column %s",
                          d.fields[0][a]);
    const kf_family *fam = reduce_fam();
    for (int a = 0; a < fam->nparams; a++)
        ck_assert_msg(csv_col(&d, fam->params[a].name) >= 0, "no column %s", fam->params[a].name);
    ck_assert(csv_col(&d, "bench.seed") >= 0 && csv_col(&d, "bench.min_reps") >= 0);
    ck_assert(csv_col(&d, "bench.offset") >= 0 && csv_col(&d, "bench.timeout_s") >= 0);
    int c_name = csv_col(&d, "name"), c_n = csv_col(&d, "n"), c_st = csv_col(&d, "status");
    int c_msg = csv_col(&d, "message"), c_med = csv_col(&d, "median_ms");
    int c_dt = csv_col(&d, "dtype"), c_seed = csv_col(&d, "bench.seed"), c_run = csv_col(&d, "run");
    int c_grid = csv_col(&d, "grid"), c_bs = csv_col(&d, "block_size");
    int c_kernel = csv_col(&d, "kernel"), c_off = csv_col(&d, "bench.offset");
    ck_assert(c_name >= 0 && c_n >= 0 && c_st >= 0 && c_msg >= 0 && c_med >= 0 && c_dt >= 0);
    ck_assert(c_grid >= 0 && c_bs >= 0 && c_run >= 0);
    ck_assert_msg(c_kernel >= 0, "no \"kernel\" column");
    /* the family comes before its parameters */
    ck_assert_int_lt(c_kernel, c_dt);
    /* the values survive CSV quoting */
    for (int i = 0; i < NVAR; i++) {
        char **f = d.fields[i + 1];
        const kf_result *r = &rows[i];
        reduce_v x;
        reduce_decode(&r->v, &x);
        /* never empty: a variant without a name is named by its label */
        char label[256];
        variant_label(&r->v, label, sizeof label);
        ck_assert_str_eq(f[c_name], label);
        ck_assert_str_eq(f[c_kernel], "reduce");
        ck_assert_str_eq(f[c_msg], r->message);
        ck_assert_str_eq(f[c_st], kf_status_names[r->status]);
        ck_assert_str_eq(f[c_dt], kf_dtype_names[x.dtype]);
        ck_assert_str_eq(f[c_run], info.run_id);
        ck_assert_int_eq(strtoll(f[c_n], NULL, 10), r->shape.d[0]);
        ck_assert_int_eq(atoi(f[c_bs]), x.block_size);
        /* the bench settings are the row's own */
        ck_assert_int_eq(strtoull(f[c_seed], NULL, 10), r->bench.seed);
        ck_assert_int_eq(strtoll(f[c_off], NULL, 10), r->bench.offset);
        ck_assert(strtod(f[c_med], NULL) == r->stats.median_ms);
        /* the grid as text: auto, a count, 4xSM, 2waves */
        char want[64];
        switch (x.grid.kind) {
        case KF_GRID_AUTO: snprintf(want, sizeof want, "auto"); break;
        case KF_GRID_BLOCKS: snprintf(want, sizeof want, "%lld", (long long)x.grid.value); break;
        case KF_GRID_PER_SM: snprintf(want, sizeof want, "%lldxSM", (long long)x.grid.value); break;
        default: snprintf(want, sizeof want, "%lldwaves", (long long)x.grid.value); break;
        }
        ck_assert_msg(strcmp(f[c_grid], want) == 0, "grid column %s, want %s", f[c_grid], want);
    }
    csv_free(&d);
    free(text);

    /* the header is written with the first row: no rows, no output at all */
    text = run_report(KF_FMT_CSV, rows, 0, &info, NULL);
    ck_assert_str_eq(text, "");
    free(text);
    /* one row: the same header, once */
    text = run_report(KF_FMT_CSV, rows, 1, &info, NULL);
    csv_parse(text, &d);
    ck_assert_int_eq(d.nrec, 2);
    ck_assert_int_eq(d.nfields[0], nf);
    ck_assert_int_eq(d.nfields[1], nf);
    ck_assert_int_ge(csv_col(&d, "kernel"), 0);
    csv_free(&d);
    free(text);
}
END_TEST

START_TEST(report_csv_streams_rows)
{
    /* csv prints (and flushes) each row as it is added, the header with the first */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    kf_run_info info = make_info(false);
    report *r = report_new(f, KF_FMT_CSV, &info, NULL);
    ck_assert_ptr_nonnull(r);
    fflush(f);
    ck_assert_int_eq(len, 0);
    kf_result a = make_result(1), b = make_result(2);
    report_add(r, &a);
    fflush(f);
    size_t after_one = len;
    ck_assert_int_gt(after_one, 0);
    ck_assert_int_eq(text[after_one - 1], '\n');
    report_add(r, &b);
    fflush(f);
    ck_assert_int_gt(len, after_one);
    report_finish(r);
    report_free(r);
    fclose(f);
    static csv_doc d;
    csv_parse(text, &d);
    ck_assert_int_eq(d.nrec, 3);
    ck_assert_str_eq(d.fields[0][0], "kforge");
    csv_free(&d);
    free(text);
}
END_TEST

/* Checks the table's alignment and returns its lines (text is split in place). */
static int check_table(char *text, char **lines, int max, bool speedup, const kf_result *rows,
                       int nrows, bool have_dev)
{
    static const char *const titles[] = {"name", "dtype", "op", "size", "status", "time",
                                         "noise", "GB/s", "% peak", "step", "cumul."};
    strip_ansi(text);
    int n = split_lines(text, lines, max);
    /* a row marked throttled adds a footnote before the device line */
    bool marked = false;
    for (int i = 0; i < nrows; i++) {
        char why[256];
        marked = marked || report_clock_warning(&rows[i], why, sizeof why);
    }
    ck_assert_int_eq(n, 2 + nrows + (have_dev ? 1 : 0) + marked);
    if (marked)
        ck_assert_msg(lines[2 + nrows][0] == '!', "no footnote: %s", lines[2 + nrows]);
    const char *head = lines[0];
    int ntitles = speedup ? 11 : 9;
    for (int t = 0; t < ntitles; t++)
        ck_assert_msg(strstr(head, titles[t]) != NULL, "header lacks \"%s\": %s", titles[t], head);
    if (!speedup)
        ck_assert(strstr(head, "step") == NULL && strstr(head, "cumul.") == NULL);
    int total = width_of(head);
    ck_assert_int_eq(width_of(lines[1]), total);
    for (const char *p = lines[1]; *p; p++)
        ck_assert(*p == '-');
    ck_assert(strncmp(head, "name", 4) == 0);

    /* the size column is "size" (it was "n") */
    ck_assert_msg(strstr(head, " n ") == NULL, "old \"n\" column title: %s", head);
    /* header columns: name, dtype, op left; size right; status left */
    int c_dtype = col_at(head, (size_t)(strstr(head, "dtype") - head));
    const char *pn = strstr(head, " size  status");
    ck_assert_ptr_nonnull(pn);
    int c_n_end = col_at(head, (size_t)(pn - head)) + 5;   /* the column after the "size" */
    int c_status = col_at(head, (size_t)(strstr(head, "status") - head));
    for (int i = 0; i < nrows; i++) {
        const char *line = lines[2 + i];
        const kf_result *r = &rows[i];
        char label[256];
        if (r->v.name[0])
            snprintf(label, sizeof label, "%s", r->v.name);
        else
            family_of(&r->v)->label(&r->v, label, sizeof label);
        char vl[256];
        variant_label(&r->v, vl, sizeof vl);
        ck_assert_str_eq(vl, label);
        /* (the table cuts labels to the 95 bytes of its cells) */
        size_t ll = strlen(label) < 95 ? strlen(label) : 95;
        ck_assert_msg(strncmp(line, label, ll) == 0, "row %d does not start with %s: %s", i, label,
                      line);
        /* the dtype column starts at the same column in every row */
        const char *dt = kf_dtype_names[variant_dtype(&r->v)];
        size_t off = off_at_col(line, c_dtype);
        ck_assert_msg(strncmp(line + off, dt, strlen(dt)) == 0, "row %d: dtype not at column %d: %s",
                      i, c_dtype, line);
        /* the size ends where the header's "size" ends */
        char want[64];
        int numlen = snprintf(want, sizeof want, " %lld  ", (long long)r->shape.d[0]) - 3;
        const char *pv = strstr(line + off, want);
        ck_assert_msg(pv != NULL, "row %d lacks n: %s", i, line);
        ck_assert_int_eq(col_at(line, (size_t)(pv - line)) + 1 + numlen, c_n_end);
        /* status at the header's status column */
        const char *st = kf_status_names[r->status];
        size_t soff = off_at_col(line, c_status);
        ck_assert_msg(strncmp(line + soff, st, strlen(st)) == 0, "row %d: status not at column %d: %s",
                      i, c_status, line);
        if (r->status == KF_ST_OK) {
            ck_assert_msg(width_of(line) == total, "ok row %d is %d wide, header %d: %s", i,
                          width_of(line), total, line);
        } else {
            /* failed rows: the message, cut to fit, after the status column
             * (whose width is at most that of the longest status name) */
            int bound = c_status + 13 + 2 + 40;
            ck_assert_msg(width_of(line) <= (total > bound ? total : bound), "row %d too wide: %s", i,
                          line);
        }
    }
    if (have_dev)
        ck_assert(strncmp(lines[n - 1], "device: ", 8) == 0);
    return n;
}

START_TEST(report_table)
{
    kf_result rows[NVAR];
    for (int i = 0; i < NVAR; i++)
        rows[i] = make_result(i);
    kf_run_info info = make_info(true);
    for (int sp = 0; sp < 2; sp++)
        for (int color = 0; color < 2; color++) {
            report_opts o = {.speedup = sp, .color = color};
            char *text = run_report(KF_FMT_TABLE, rows, NVAR, &info, &o);
            if (color)
                ck_assert(strstr(text, "\033[") != NULL);
            else
                ck_assert(strchr(text, '\033') == NULL);
            char *lines[NVAR + 8];
            int n = check_table(text, lines, NVAR + 8, sp, rows, NVAR, true);
            ck_assert(strstr(lines[n - 1], info.dev.name) != NULL);
            free(text);
        }
}
END_TEST

START_TEST(report_table_values)
{
    /* three ok rows of one size, 4 ms, 2 ms, 0.5 ms: steps 2x and 4x, cumulative 2x and 8x */
    kf_result rows[5];
    const double med[] = {4.0, 2.0, 0.5};
    for (int i = 0; i < 3; i++) {
        rows[i] = make_result(0);
        snprintf(rows[i].v.name, sizeof rows[i].v.name, "k%d", i);
        rows[i].status = KF_ST_OK;
        rows[i].shape = shape_n(1 << 20);
        rows[i].stats.median_ms = med[i];
        rows[i].stats.reps = 10;
        rows[i].stats.noise = 0.02;
        rows[i].stats.gbps = 2000.0 + i;
        rows[i].stats.pct_peak = 60.0 + i;
        rows[i].nvml = false; /* no clock column here (report_table_nvml) */
        rows[i].sm_mhz_min = rows[i].sm_mhz_max = 0;
        rows[i].energy_j = 0;
        rows[i].throttled = false;
    }
    /* a wrong answer without a message and a compile error with a long multi-line one */
    rows[3] = make_result(1);
    rows[3].status = KF_ST_WRONG;
    rows[3].message[0] = 0;
    snprintf(rows[3].gpu_value, sizeof rows[3].gpu_value, "12.5");
    snprintf(rows[3].ref_value, sizeof rows[3].ref_value, "13.25");
    rows[4] = make_result(2);
    rows[4].status = KF_ST_COMPILE;
    memset(rows[4].message, 0, sizeof rows[4].message);
    for (int i = 0; i < 300; i++)
        rows[4].message[i] = i % 50 == 49 ? '\n' : (char)('a' + i % 26);

    report_opts o = {.speedup = true};
    kf_run_info info = make_info(false);
    char *text = run_report(KF_FMT_TABLE, rows, 5, &info, &o);
    char *lines[16] = {0};
    int n = check_table(text, lines, 16, true, rows, 5, false);
    ck_assert_int_eq(n, 7);
    ck_assert_msg(strstr(lines[2], "4.000 ms"), "%s", lines[2]);
    ck_assert_msg(strstr(lines[3], "2.000 ms"), "%s", lines[3]);
    ck_assert_msg(strstr(lines[4], "500.0 us"), "%s", lines[4]);
    ck_assert(strstr(lines[2], "2000.0") && strstr(lines[2], "60.0") && strstr(lines[2], "2.0%"));
    ck_assert_msg(strstr(lines[3], "2.00x  ") && strstr(lines[3], "2.00x"), "%s", lines[3]);
    /* row 3: step 4x (vs 2 ms), cumulative 8x (vs 4 ms) */
    ck_assert_msg(strstr(lines[4], "4.00x") && strstr(lines[4], "8.00x"), "%s", lines[4]);
    ck_assert_msg(strstr(lines[5], "12.5") && strstr(lines[5], "13.25"), "wrong row: %s", lines[5]);
    ck_assert_msg(strstr(lines[6], "abcdef") && strstr(lines[6], "..."), "compile row: %s", lines[6]);
    free(text);

    /* no rows: header and rule only */
    text = run_report(KF_FMT_TABLE, rows, 0, &info, &o);
    n = check_table(text, lines, 16, true, rows, 0, false);
    ck_assert_int_eq(n, 2);
    free(text);
}
END_TEST

// ----------------------------------------------------------------------------
// Results file

static char tmpdir[512];

/* Issue 14: the SM clock column (marked when throttled or below the
 * maximum, with a footnote), energy and GB/J; none of them without NVML. */
START_TEST(report_table_nvml)
{
    kf_result rows[3];
    for (int i = 0; i < 3; i++) {
        rows[i] = make_result(0);
        snprintf(rows[i].v.name, sizeof rows[i].v.name, "k%d", i);
        rows[i].status = KF_ST_OK;
        rows[i].shape = shape_n(1 << 24);
        rows[i].stats.median_ms = 0.04;
        rows[i].stats.gbps = 1677.7216; /* 64 MiB in 40 us */
        rows[i].nvml = true;
        rows[i].throttled = false;
        snprintf(rows[i].throttle_reasons, sizeof rows[i].throttle_reasons, "none");
        rows[i].sm_mhz_min = rows[i].sm_mhz_max = rows[i].sm_mhz_limit = 1980;
        rows[i].energy_j = 0;
    }
    rows[1].sm_mhz_min = 1755;                  /* below the maximum */
    rows[2].energy_j = 0.0125;                  /* 67.1 MB / 12.5 mJ = 5.37 GB/J */
    report_opts o = {0};
    kf_run_info info = make_info(true);
    char *text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    char *lines[16] = {0};
    int n = check_table(text, lines, 16, false, rows, 3, true);
    ck_assert_int_eq(n, 7);
    ck_assert_msg(strstr(lines[0], "SM MHz") && strstr(lines[0], "energy") && strstr(lines[0], "GB/J"), "%s",
                  lines[0]);
    ck_assert_msg(strstr(lines[2], " 1980 ") && !strchr(lines[2], '!'), "%s", lines[2]);
    ck_assert_msg(strstr(lines[3], "1755-1980!"), "%s", lines[3]);
    ck_assert_msg(strstr(lines[4], "12.50 mJ") && strstr(lines[4], "5.4"), "%s", lines[4]);
    ck_assert_msg(lines[5][0] == '!', "%s", lines[5]);
    free(text);

    /* without NVML figures: the plain table */
    for (int i = 0; i < 3; i++) {
        rows[i].nvml = false;
        rows[i].sm_mhz_min = rows[i].sm_mhz_max = rows[i].sm_mhz_limit = 0;
        rows[i].energy_j = 0;
    }
    text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    ck_assert_msg(!strstr(text, "SM MHz") && !strstr(text, "GB/J") && !strchr(text, '!'), "%s", text);
    free(text);
}
END_TEST

/* Issue 14: --format md is a Markdown table: a header, an alignment row
 * (numbers right-aligned), one row per result with '|' escaped, failures'
 * messages in a note column. */
START_TEST(report_md)
{
    kf_result rows[3];
    for (int i = 0; i < 3; i++) {
        rows[i] = make_result(0);
        snprintf(rows[i].v.name, sizeof rows[i].v.name, "k%d", i);
        rows[i].status = KF_ST_OK;
        rows[i].nvml = false;
        rows[i].sm_mhz_min = rows[i].sm_mhz_max = 0;
        rows[i].energy_j = 0;
        rows[i].throttled = false;
        rows[i].stats.median_ms = 0.5 * (i + 1);
    }
    rows[2].status = KF_ST_COMPILE;
    snprintf(rows[2].message, sizeof rows[2].message, "error: a|b\nsecond line");
    report_opts o = {.speedup = true, .color = true};
    kf_run_info info = make_info(true);
    char *text = run_report(KF_FMT_MD, rows, 3, &info, &o);
    ck_assert_msg(strchr(text, '\033') == NULL, "colour in md: %s", text);
    char *lines[16] = {0};
    int n = split_lines(text, lines, 16);
    ck_assert_int_eq(n, 7); /* header, rule, 3 rows, blank, device */
    ck_assert_str_eq(lines[0], "| name | dtype | op | size | status | time | noise | GB/s | % peak | step | cumul. | note |");
    ck_assert_str_eq(lines[1], "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|");
    ck_assert_msg(strncmp(lines[2], "| k0 | ", 7) == 0 && strstr(lines[2], "| 500.0 us |"), "%s", lines[2]);
    ck_assert_msg(strstr(lines[3], "| 0.50x | 0.50x |"), "%s", lines[3]); /* 1 ms after 0.5 ms */
    ck_assert_msg(strstr(lines[4], "| compile_error |") && strstr(lines[4], "a\\|b second line"), "%s", lines[4]);
    /* every row has as many cells as the header */
    for (int i = 0; i < 5; i++) {
        int bars = 0;
        for (const char *p = lines[i]; *p; p++)
            bars += *p == '|' && (p == lines[i] || p[-1] != '\\');
        ck_assert_msg(bars == 13, "line %d has %d cells: %s", i, bars - 1, lines[i]);
    }
    ck_assert_str_eq(lines[5], "");
    ck_assert(strncmp(lines[6], "device: ", 8) == 0);
    free(text);
}
END_TEST

// ----------------------------------------------------------------------------
// Tables that show what varies (--columns, --sort, streaming)

/* n ok rows "mine" at 2^20 that differ only in block_size (64 << i), with
 * median times med[i]. */
static void sweep_rows(kf_result *rows, int n, const double *med)
{
    const kf_family *f = reduce_fam();
    for (int i = 0; i < n; i++) {
        rows[i] = make_result(0);
        snprintf(rows[i].v.name, sizeof rows[i].v.name, "mine");
        rows[i].v.p[f->p_block] = 64 << i;
        rows[i].status = KF_ST_OK;
        rows[i].shape = shape_n(1 << 20);
        rows[i].stats.median_ms = med[i];
        rows[i].stats.min_ms = med[i] * 0.9;
        rows[i].stats.reps = 10;
        rows[i].stats.noise = 0.002;
        rows[i].stats.gbps = 4.194304 / med[i];
        rows[i].stats.pct_peak = rows[i].stats.gbps / 33.5232;
        rows[i].nvml = false;
        rows[i].sm_mhz_min = rows[i].sm_mhz_max = 0;
        rows[i].energy_j = 0;
        rows[i].throttled = false;
    }
}

/* The index of the line that starts with prefix, or -1. */
static int line_index(char **lines, int n, const char *prefix)
{
    for (int i = 0; i < n; i++)
        if (strncmp(lines[i], prefix, strlen(prefix)) == 0)
            return i;
    return -1;
}

static const char *line_starting(char **lines, int n, const char *prefix)
{
    int i = line_index(lines, n, prefix);
    return i >= 0 ? lines[i] : NULL;
}

START_TEST(report_table_auto_columns)
{
    kf_result rows[3];
    const double med[] = {0.009424, 0.008855, 0.0095};
    sweep_rows(rows, 3, med);
    report_opts o = {.columns = "auto"};
    kf_run_info info = make_info(true);
    char *text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    ck_assert_msg(strstr(text, " n=1048576\n") != NULL, "%s", text);
    ck_assert_msg(!strstr(text, "block_size="), "%s", text);
    char *lines[16] = {0};
    int n = split_lines(text, lines, 16);
    /* what is the same in every row is said once, above the table */
    ck_assert_msg(strncmp(lines[0], "same in every row: name=mine kernel=reduce dtype=", 49) == 0, "%s", lines[0]);
    const char *head = line_starting(lines, n, "block_size");
    ck_assert_msg(head != NULL, "no block_size column first: %s", text);
    ck_assert_msg(strstr(head, "status") && strstr(head, "time") && strstr(head, "GB/s"), "%s", head);
    ck_assert_msg(!strstr(head, "name") && !strstr(head, "dtype") && !strstr(head, " op ") && !strstr(head, "  size "),
                  "a column that does not vary: %s", head);
    int h = line_index(lines, n, "block_size");
    ck_assert_msg(lines[h + 2][0] == ' ' && strstr(lines[h + 2], "  64  ok") && strstr(lines[h + 2], "9.424 us"), "%s",
                  lines[h + 2]);
    ck_assert_msg(strstr(lines[h + 3], " 128  ok") && strstr(lines[h + 3], "8.855 us"), "%s", lines[h + 3]);
    ck_assert_msg(strstr(lines[h + 4], " 256  ok"), "%s", lines[h + 4]);
    ck_assert_int_eq(width_of(lines[h + 2]), width_of(head));
    ck_assert(strncmp(lines[n - 1], "device: ", 8) == 0);
    free(text);

    /* md: the same columns, the constants in a line of their own */
    text = run_report(KF_FMT_MD, rows, 3, &info, &o);
    n = split_lines(text, lines, 16);
    ck_assert_msg(strncmp(lines[0], "Same in every row: name=mine kernel=reduce", 42) == 0 &&
                      strstr(lines[0], " n=1048576"), "%s", lines[0]);
    ck_assert_str_eq(lines[1], "");
    ck_assert_str_eq(lines[2], "| block_size | status | time | noise | GB/s | % peak |");
    ck_assert_str_eq(lines[3], "|---:|---|---:|---:|---:|---:|");
    ck_assert_str_eq(lines[4], "| 64 | ok | 9.424 us | 0.2% | 445.1 | 13.3 |");
    free(text);

    /* two axes vary (and the name): each gets a column, in the table's order */
    rows[2].v.p[key_op_axis(reduce_fam())] = KF_OP_MAX;
    snprintf(rows[1].v.name, sizeof rows[1].v.name, "other");
    text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    n = split_lines(text, lines, 16);
    head = line_starting(lines, n, "name");
    ck_assert_msg(head && strstr(head, "name   op   block_size  status"), "%s", head ? head : lines[0]);
    for (int i = 0; lines[i] != head; i++)
        ck_assert_msg(!strstr(lines[i], " op=") && !strstr(lines[i], "name="), "%s", lines[i]);
    free(text);

    /* no option: name, dtype, op, size and the figures */
    text = run_report(KF_FMT_TABLE, rows, 3, &info, &(report_opts){0});
    ck_assert_msg(strncmp(text, "name   dtype  op      size  status", 33) == 0, "%s", text);
    free(text);
}
END_TEST

START_TEST(report_table_column_list)
{
    kf_result rows[3];
    const double med[] = {0.004, 0.002, 0.001};
    sweep_rows(rows, 3, med);
    rows[1].status = KF_ST_WRONG;
    snprintf(rows[1].message, sizeof rows[1].message, "got 1, expected 2");
    report_opts o = {.columns = "block_size,time,gbps,min"};
    kf_run_info info = make_info(false);
    char *text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    char *lines[16] = {0};
    int n = split_lines(text, lines, 16);
    ck_assert_msg(strncmp(lines[0], "same in every row: name=mine", 28) == 0, "%s", lines[0]);
    int h = line_index(lines, n, "block_size");
    ck_assert_int_eq(n, h + 5); /* header, rule, 3 rows */
    ck_assert_str_eq(lines[h], "block_size      time    GB/s        min");
    ck_assert_str_eq(lines[h + 2], "        64  4.000 us  1048.6   3.600 us");
    /* a failed row: its message where the figures would be */
    ck_assert_msg(strncmp(lines[h + 3], "       128  got 1, expected 2", 30) == 0, "%s", lines[h + 3]);
    ck_assert_str_eq(lines[h + 4], "       256  1.000 us  4194.3  0.9000 us");
    free(text);

    /* "axes" in a list: the axes that vary; an identity column after a figure */
    o.columns = "time,axes,status";
    text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    n = split_lines(text, lines, 16);
    h = line_index(lines, n, "    time");
    ck_assert_int_ge(h, 0);
    ck_assert_str_eq(lines[h], "    time  block_size  status");
    ck_assert_msg(strncmp(lines[h + 3], "       -         128  wrong   got 1, expected 2", 47) == 0, "%s", lines[h + 3]);
    free(text);
}
END_TEST

START_TEST(report_table_sort)
{
    kf_result rows[4];
    const double med[] = {0.004, 0.001, 0.002, 0.003};
    sweep_rows(rows, 4, med);
    rows[3].status = KF_ST_TIMEOUT;
    kf_run_info info = make_info(false);
    /* KEY, the block sizes in the order wanted */
    static const struct {
        const char *key;
        const char *order;
    } cases[] = {{"time", "128 256 64 512"},      {"-time", "64 256 128 512"}, {"gbps", "128 256 64 512"},
                 {"block_size", "64 128 256 512"}, {"-block_size", "512 256 128 64"},
                 {"status", "64 128 256 512"},      {"name", "64 128 256 512"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        report_opts o = {.columns = "block_size,time", .sort = cases[c].key};
        char *text = run_report(KF_FMT_TABLE, rows, 4, &info, &o);
        char *lines[16] = {0};
        int n = split_lines(text, lines, 16);
        int h = line_index(lines, n, "block_size");
        ck_assert_int_eq(n, h + 6);
        char got[64] = "";
        for (int i = h + 2; i < n; i++) {
            long bs = strtol(lines[i], NULL, 10);
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%ld", i > h + 2 ? " " : "", bs);
        }
        ck_assert_msg(strcmp(got, cases[c].order) == 0, "--sort %s: %s, want %s", cases[c].key, got, cases[c].order);
        free(text);
    }
    /* the classic columns, sorted: the speedups are against the row above */
    report_opts o = {.sort = "-time", .speedup = true};
    char *text = run_report(KF_FMT_TABLE, rows, 3, &info, &o);
    char *lines[16] = {0};
    split_lines(text, lines, 16);
    ck_assert_msg(strstr(lines[2], "4.000 ms") || strstr(lines[2], "4.000 us"), "%s", lines[2]);
    ck_assert_msg(strstr(lines[3], "2.000 us") && strstr(lines[3], "2.00x   2.00x"), "%s", lines[3]);
    ck_assert_msg(strstr(lines[4], "1.000 us") && strstr(lines[4], "2.00x   4.00x"), "%s", lines[4]);
    free(text);
}
END_TEST

/* On a terminal rows are printed as they come, with columns decided from
 * the cases expected before any result. */
START_TEST(report_table_stream)
{
    kf_result rows[3];
    const double med[] = {0.009424, 0.008855, 0.0095};
    sweep_rows(rows, 3, med);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    kf_run_info info = make_info(true);
    report_opts o = {.columns = "auto", .stream = true};
    report *r = report_new(f, KF_FMT_TABLE, &info, &o);
    ck_assert_ptr_nonnull(r);
    kf_bench b;
    kf_bench_defaults(&b);
    for (int i = 0; i < 3; i++)
        report_expect(r, &rows[i].v, &rows[i].shape, &b);
    fflush(f);
    ck_assert_uint_eq(len, 0);  /* nothing before the first row */
    report_add(r, &rows[0]);
    fflush(f);
    /* the header knows block_size varies, though one row has come */
    char *copy = strdup(text);
    char *lines[16] = {0};
    int n = split_lines(copy, lines, 16);
    ck_assert_int_ge(n, 3);
    const char *head = line_starting(lines, n, "block_size");
    ck_assert_msg(head != NULL, "%s", text);
    ck_assert_msg(strstr(lines[n - 1], "  64  ok") && strstr(lines[n - 1], "9.424 us"), "%s", lines[n - 1]);
    int head_width = width_of(head);
    free(copy);
    size_t after_one = len;
    report_add(r, &rows[1]);
    fflush(f);
    ck_assert_uint_gt(len, after_one);
    ck_assert_msg(strstr(text + after_one, " 128  ok") && strstr(text + after_one, "8.855 us"), "%s",
                  text + after_one);
    ck_assert_int_eq(strchr(text + after_one, '\n') - (text + after_one), head_width); /* aligned with the header */
    /* report_describe: what tells a case apart, for the progress line */
    char what[128];
    report_describe(r, &rows[1], what, sizeof what);
    ck_assert_str_eq(what, "block_size=128");
    report_add(r, &rows[2]);
    report_finish(r);
    report_free(r);
    fclose(f);
    n = split_lines(text, lines, 16);
    ck_assert_msg(strncmp(lines[n - 1], "device: ", 8) == 0, "%s", lines[n - 1]);
    ck_assert_msg(line_starting(lines, n, "       256  ok") != NULL, "%s", lines[n - 2]);
    free(text);
}
END_TEST

/* CSV: the same core columns, in the same order, for every family (its
 * parameters and sizes after them), so rows of reduce and reduce_rows
 * appended to one file agree on every core column; --columns picks CSV
 * columns, an empty cell where a row's family lacks one. */
START_TEST(report_csv_core)
{
    kf_result a = make_result(0), b = make_result(1);
    int rows_fam = family_find("reduce_rows");
    ck_assert_int_ge(rows_fam, 0);
    variant_defaults(&b.v, rows_fam);
    b.shape = shape_n(64);
    b.shape.d[1] = 1024;
    b.shape.d[2] = 1024;
    b.planted[0] = 0;
    snprintf(a.planted, sizeof a.planted, "drop_last");
    kf_run_info info = make_info(false);
    strbuf ha = {0}, hb = {0};
    line_csv(&ha, &a, &info, true);
    line_csv(&hb, &b, &info, true);
    static csv_doc da, db;
    csv_parse(ha.s, &da);
    csv_parse(hb.s, &db);
    /* the core: every column up to the last bench setting */
    int core = csv_col(&da, "bench.energy") + 1;
    ck_assert_int_gt(core, 30);
    ck_assert_int_eq(csv_col(&db, "bench.energy") + 1, core);
    for (int c = 0; c < core; c++)
        ck_assert_str_eq(da.fields[0][c], db.fields[0][c]);
    /* a column only some rows fill (planted, gflops) is in the core of every row */
    ck_assert_int_lt(csv_col(&da, "planted"), core);
    ck_assert_int_lt(csv_col(&da, "gflops"), core);
    /* the family's parameters and sizes after the core */
    ck_assert_int_ge(csv_col(&da, "dtype"), core);
    ck_assert_int_ge(csv_col(&db, "rows"), core);
    ck_assert_int_eq(csv_col(&da, "rows"), -1);
    csv_free(&da);
    csv_free(&db);
    sb_free(&ha);
    sb_free(&hb);
    /* rows: as many fields as their header, the status in its core column */
    strbuf ra = {0}, rb = {0};
    line_csv(&ra, &a, &info, false);
    line_csv(&rb, &b, &info, false);
    csv_parse(ra.s, &da);
    csv_parse(rb.s, &db);
    int st = 0;
    {
        static csv_doc h;
        strbuf hh = {0};
        line_csv(&hh, &a, &info, true);
        csv_parse(hh.s, &h);
        st = csv_col(&h, "status");
        ck_assert_int_eq(da.nfields[0], h.nfields[0]);
        csv_free(&h);
        sb_free(&hh);
    }
    ck_assert_str_eq(da.fields[0][st], kf_status_names[a.status]);
    ck_assert_str_eq(db.fields[0][st], kf_status_names[b.status]);
    csv_free(&da);
    csv_free(&db);
    sb_free(&ra);
    sb_free(&rb);

    /* --columns: those, in that order, for both families */
    const char *cols = "status,block_size,rows,median_ms,bench.seed";
    char err[256];
    ck_assert_int_eq(report_columns_check(cols, KF_FMT_CSV, err, sizeof err), 0);
    ck_assert_int_eq(report_columns_check("status,nosuch", KF_FMT_CSV, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "'nosuch' is not a CSV column"), "%s", err);
    ck_assert_int_eq(report_columns_check("auto", KF_FMT_CSV, err, sizeof err), -1);
    ck_assert_int_eq(report_columns_check("bench.nosuch", KF_FMT_CSV, err, sizeof err), -1);
    kf_result both[2] = {a, b};
    both[0].status = KF_ST_OK;
    both[1].status = KF_ST_WRONG;
    report_opts o = {.columns = cols};
    char *text = run_report(KF_FMT_CSV, both, 2, &info, &o);
    csv_parse(text, &da);
    ck_assert_int_eq(da.nrec, 3);
    ck_assert_str_eq(da.fields[0][0], "status");
    ck_assert_str_eq(da.fields[0][4], "bench.seed");
    for (int r = 0; r < 3; r++)
        ck_assert_int_eq(da.nfields[r], 5);
    ck_assert_str_eq(da.fields[1][0], "ok");
    ck_assert_str_eq(da.fields[2][0], "wrong");
    ck_assert_str_eq(da.fields[1][2], "");      /* reduce has no rows */
    ck_assert_str_eq(da.fields[2][2], "64");
    ck_assert_int_eq(atoi(da.fields[1][1]), 32); /* make_result(0): block_size 32 */
    csv_free(&da);
    free(text);
}
END_TEST

START_TEST(report_column_keys)
{
    char err[1024];
    ck_assert_int_eq(report_columns_check("auto", KF_FMT_TABLE, err, sizeof err), 0);
    ck_assert_int_eq(report_columns_check("axes,time,gbps", KF_FMT_TABLE, err, sizeof err), 0);
    ck_assert_int_eq(report_columns_check("block_size,n,rows,status,note", KF_FMT_TABLE, err, sizeof err), 0);
    ck_assert_int_eq(report_columns_check("block_sise", KF_FMT_TABLE, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "did you mean 'block_size'"), "%s", err);
    ck_assert_int_eq(report_columns_check("time,,gbps", KF_FMT_TABLE, err, sizeof err), -1);
    ck_assert_int_eq(report_columns_check("time,auto", KF_FMT_TABLE, err, sizeof err), -1);
    ck_assert_int_eq(report_columns_check("", KF_FMT_TABLE, err, sizeof err), -1);
    ck_assert_int_eq(report_sort_check("time", err, sizeof err), 0);
    ck_assert_int_eq(report_sort_check("-gbps", err, sizeof err), 0);
    ck_assert_int_eq(report_sort_check("elements_per_thread", err, sizeof err), 0);
    ck_assert_int_eq(report_sort_check("cols", err, sizeof err), 0);
    ck_assert_int_eq(report_sort_check("tme", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "did you mean 'time'"), "%s", err);
    ck_assert_int_eq(report_sort_check("step", err, sizeof err), -1);
    ck_assert_int_eq(report_sort_check("-", err, sizeof err), -1);
}
END_TEST

static void tmp_setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/kf_test_report_XXXXXX", kf_tmpdir());
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void tmp_teardown(void)
{
    if (tmpdir[0])
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", tmpdir, name);
    ck_assert_msg(n > 0 && (size_t)n < len, "path too long: %s/%s ($TMPDIR)", tmpdir, name);
}

typedef struct {
    int calls;
    int stop_after;             /* 0: never */
    kf_result last;
    int *seen;                  /* concurrency: seen[proc * PER + i] */
    int dup, bad;
} read_ctx;

static int count_fn(const kf_result *r, void *p)
{
    read_ctx *c = p;
    c->calls++;
    c->last = *r;
    return c->stop_after && c->calls >= c->stop_after;
}

static void append_line(results_file *f, const kf_result *r)
{
    char *line = report_json(r, NULL);
    char err[512] = "";
    ck_assert_msg(results_append(f, line, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(err, "");
    free(line);
}

/* The whole file, malloc'd. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (cap - len < 65536) {
            cap = cap ? 2 * cap : 1 << 20;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    buf[len] = 0;
    fclose(f);
    return buf;
}

enum { PROCS = 8, PER = 200 };

static int conc_fn(const kf_result *r, void *p)
{
    read_ctx *c = p;
    c->calls++;
    int proc = -1;
    int64_t n = r->shape.d[0];
    if (sscanf(r->v.name, "proc%d", &proc) != 1 || proc < 0 || proc >= PROCS || n < 0 || n >= PER) {
        c->bad++;
        return 0;
    }
    if (c->seen[proc * PER + n]++)
        c->dup++;
    return 0;
}

START_TEST(results_concurrent_append)
{
    char path[128];
    tmp_path(path, sizeof path, "results.jsonl");
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            char err[256];
            results_file *f = results_open(path, err, sizeof err);
            if (!f)
                _exit(2);
            kf_result r = make_result(p);
            /* long lines make torn writes likely if locking were broken */
            memset(r.message, 'm', 400);
            r.message[400] = 0;
            int rc = 0;
            for (int i = 0; i < PER && rc == 0; i++) {
                snprintf(r.v.name, sizeof r.v.name, "proc%d", p);
                r.shape.d[0] = i;
                char *line = report_json(&r, NULL);
                rc = line ? results_append(f, line, err, sizeof err) : -1;
                free(line);
            }
            results_close(f);
            _exit(rc == 0 ? 0 : 3);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int st;
        ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed", p);
    }

    int *seen = calloc(PROCS * PER, sizeof *seen);
    read_ctx c = {.seen = seen};
    int skipped = -1;
    char err[256] = "";
    ck_assert_msg(results_read(path, conc_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(skipped, 0);
    ck_assert_int_eq(c.bad, 0);
    ck_assert_int_eq(c.dup, 0);
    ck_assert_int_eq(c.calls, PROCS * PER);
    for (int i = 0; i < PROCS * PER; i++)
        ck_assert_msg(seen[i] == 1, "line proc%d n=%d seen %d times", i / PER, i % PER, seen[i]);
    free(seen);

    /* the raw file: exactly PROCS*PER lines, each one JSON object, no blank lines */
    char *text = slurp(path);
    int lines = 0;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        ck_assert_ptr_nonnull(nl);
        *nl = 0;
        ck_assert_msg(nl > p, "blank line in the results file");
        cJSON *j = parse_strict(p);
        cJSON_Delete(j);
        lines++;
        p = nl + 1;
    }
    ck_assert_int_eq(lines, PROCS * PER);
    free(text);
}
END_TEST

START_TEST(results_truncated_last_line)
{
    char path[128], err[256];
    tmp_path(path, sizeof path, "trunc.jsonl");
    results_file *f = results_open(path, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    for (int i = 0; i < 3; i++) {
        kf_result r = make_result(i);
        append_line(f, &r);
    }
    /* a crash mid-write: half a line, no newline */
    kf_result half = make_result(10);
    char *line = report_json(&half, NULL);
    int fd = open(path, O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    size_t hl = strlen(line) / 2;
    ck_assert_int_eq(write(fd, line, hl), (ssize_t)hl);
    close(fd);
    free(line);

    read_ctx c = {0};
    int skipped = -1;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 3);
    ck_assert_int_eq(skipped, 1);
    kf_result r2 = make_result(2);
    assert_read_back(&r2, NULL, &c.last, 2);

    /* the next append starts on a line of its own */
    kf_result next = make_result(11);
    append_line(f, &next);
    results_close(f);
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 4);
    ck_assert_int_eq(skipped, 1);           /* the torn line, now terminated */
    assert_read_back(&next, NULL, &c.last, 11);
    char *text = slurp(path);
    size_t len = strlen(text);
    ck_assert(text[len - 1] == '\n');
    char *last_nl = text + len - 1;
    *last_nl = 0;
    char *prev_nl = strrchr(text, '\n');
    ck_assert_ptr_nonnull(prev_nl);
    ck_assert(prev_nl[1] == '{');
    cJSON *j = parse_strict(prev_nl + 1);
    cJSON_Delete(j);
    free(text);

    /* skipped may be NULL */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(results_read(path, count_fn, &c, NULL, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 4);
}
END_TEST

START_TEST(results_missing_file)
{
    char path[128], err[256] = "";
    tmp_path(path, sizeof path, "does-not-exist.jsonl");
    read_ctx c = {0};
    int skipped = 99;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 0);
    ck_assert_int_eq(skipped, 0);
    struct stat st;
    ck_assert_msg(stat(path, &st) != 0, "reading created the file");

    /* an empty file: nothing either */
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    close(fd);
    skipped = 99;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 0);
    ck_assert_int_eq(skipped, 0);
}
END_TEST

START_TEST(results_garbled_middle)
{
    char path[128], err[256];
    tmp_path(path, sizeof path, "garbled.jsonl");
    kf_result a = make_result(1), b = make_result(2), c3 = make_result(3);
    char *la = report_json(&a, NULL), *lb = report_json(&b, NULL), *lc = report_json(&c3, NULL);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "%s\n", la);
    fprintf(fp, "{\"dtype\": garbage\n");             /* not JSON */
    fprintf(fp, "%.*s\n", (int)strlen(lb) / 3, lb);    /* torn, then terminated */
    fprintf(fp, "%s\n", lb);
    fprintf(fp, "\n");                                 /* blank: not counted */
    fprintf(fp, "{\"x\": 1}\n");                       /* JSON but not a result */
    fprintf(fp, "[1, 2]\n");
    fprintf(fp, "%s\n", lc);
    fclose(fp);

    read_ctx c = {0};
    int skipped = -1;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 3);
    ck_assert_int_eq(skipped, 4);
    assert_read_back(&c3, NULL, &c.last, 3);

    /* fn returning non-zero stops the read */
    memset(&c, 0, sizeof c);
    c.stop_after = 2;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 2);
    assert_read_back(&b, NULL, &c.last, 2);
    free(la);
    free(lb);
    free(lc);
}
END_TEST

START_TEST(results_append_rules)
{
    char path[128], err[256];
    tmp_path(path, sizeof path, "rules.jsonl");
    results_file *f = results_open(path, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    /* a line with a newline would become two lines: refused (with a message
     * naming the file), file untouched */
    err[0] = 0;
    ck_assert_int_eq(results_append(f, "{\"a\":1}\n{\"b\":2}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, path) != NULL, "%s", err);
    err[0] = 0;
    ck_assert_int_eq(results_append(f, NULL, err, sizeof err), -1);
    ck_assert(err[0] != 0);
    err[0] = 0;
    ck_assert_int_eq(results_append(NULL, "{}", err, sizeof err), -1);
    ck_assert(err[0] != 0);
    /* a NULL message buffer is fine */
    ck_assert_int_eq(results_append(f, "{\"a\":1}\n", NULL, 0), -1);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    /* appends go to the end even after reopening */
    kf_result r = make_result(4);
    append_line(f, &r);
    results_close(f);
    f = results_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(f);
    append_line(f, &r);
    results_close(f);
    results_close(NULL);
    read_ctx c = {0};
    int skipped;
    ck_assert_int_eq(results_read(path, count_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 2);
    ck_assert_int_eq(skipped, 0);
    char *text = slurp(path);
    ck_assert(text[0] == '{');                 /* no leading blank line in a new file */
    free(text);

    /* opening in a missing directory fails with the path in the message */
    char bad[160];
    tmp_path(bad, sizeof bad, "no/such/dir/r.jsonl");
    err[0] = 0;
    ck_assert_ptr_null(results_open(bad, err, sizeof err));
    ck_assert_msg(strstr(err, bad) != NULL, "%s", err);
    /* reading a directory is an error, not "no results" */
    err[0] = 0;
    ck_assert_int_eq(results_read(tmpdir, count_fn, &c, &skipped, err, sizeof err), -1);
    ck_assert(err[0] != 0);
    /* so is opening one for appending */
    err[0] = 0;
    ck_assert_ptr_null(results_open(tmpdir, err, sizeof err));
    ck_assert_msg(strstr(err, tmpdir) != NULL, "%s", err);
}
END_TEST

START_TEST(results_append_write_error)
{
    /* a write that fails (here: past the file size limit, as on a full disk)
     * is reported with the file and the reason, so the caller can stop */
    char path[128], err[512] = "";
    tmp_path(path, sizeof path, "limited.jsonl");
    results_file *f = results_open(path, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    kf_result r = make_result(1);
    append_line(f, &r);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + 10;     /* room for 10 more bytes only */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char *line = report_json(&r, NULL);
    err[0] = 0;
    int rc = results_append(f, line, err, sizeof err);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, path) != NULL, "%s", err);
    ck_assert_msg(strstr(err, strerror(EFBIG)) != NULL, "%s", err);
    free(line);
    results_close(f);
}
END_TEST

/* Appends text (len bytes, NULs included) to path. */
static void append_raw(const char *path, const void *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

typedef struct {
    int calls;
    int64_t ns[64];
} ns_ctx;

static int ns_fn(const kf_result *r, void *p)
{
    ns_ctx *c = p;
    if (c->calls < 64)
        c->ns[c->calls] = r->shape.d[0];
    c->calls++;
    return 0;
}

START_TEST(results_read_skips_nul_bytes)
{
    /* A crash can leave blocks of NUL bytes (a file extended before its data
     * was written).  They are dropped, and every valid line around them is
     * read: after a line, before one, in big blocks (across the reader's
     * 64 KiB chunks) and in front of the last line. */
    char path[128], err[256] = "";
    tmp_path(path, sizeof path, "nul.jsonl");
    static const size_t blocks[] = {3, 3, 1, 4096, 65536 + 17, 200000, 3};
    const int nlines = N_OF(blocks) + 1;
    char *zeros = calloc(200000, 1);
    ck_assert_ptr_nonnull(zeros);
    for (int i = 0; i < nlines; i++) {
        kf_result r = make_result(i);
        r.shape.d[0] = 1000 + i;
        char *line = report_json(&r, NULL);
        append_raw(path, line, strlen(line));
        append_raw(path, "\n", 1);
        free(line);
        if (i < N_OF(blocks))
            append_raw(path, zeros, blocks[i]);     /* "\0\0\0" between valid lines */
    }
    free(zeros);
    ns_ctx c = {0};
    int skipped = -1;
    ck_assert_msg(results_read(path, ns_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.calls, nlines);
    for (int i = 0; i < nlines; i++)
        ck_assert_msg(c.ns[i] == 1000 + i, "line %d read as n=%lld", i, (long long)c.ns[i]);
    ck_assert_int_eq(skipped, 0);

    /* NULs followed by a newline make a blank line (not counted); NULs
     * inside a line are dropped and the line reads as if they were not there */
    tmp_path(path, sizeof path, "nul2.jsonl");
    kf_result a = make_result(1), b = make_result(2);
    char *la = report_json(&a, NULL), *lb = report_json(&b, NULL);
    append_raw(path, la, strlen(la));
    append_raw(path, "\n\0\0\0\n\0\0\0", 8);
    append_raw(path, lb, 10);
    append_raw(path, "\0\0\0", 3);
    append_raw(path, lb + 10, strlen(lb) - 10);
    append_raw(path, "\n\0\0\0", 4);     /* trailing NULs after the last line */
    memset(&c, 0, sizeof c);
    ck_assert_msg(results_read(path, ns_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.calls, 2);
    ck_assert_int_eq(c.ns[0], a.shape.d[0]);
    ck_assert_int_eq(c.ns[1], b.shape.d[0]);
    ck_assert_int_eq(skipped, 0);

    /* a torn line followed by NULs (the crash), then new appends: the torn
     * line is skipped, the lines after it are read */
    tmp_path(path, sizeof path, "nul3.jsonl");
    append_raw(path, la, strlen(la));
    append_raw(path, "\n", 1);
    append_raw(path, lb, strlen(lb) / 2);
    append_raw(path, "\0\0\0\0\0\0\0\0", 8);
    results_file *f = results_open(path, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    kf_result n1 = make_result(3), n2 = make_result(4);
    append_line(f, &n1);
    append_line(f, &n2);
    results_close(f);
    memset(&c, 0, sizeof c);
    ck_assert_msg(results_read(path, ns_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.calls, 3);
    ck_assert_int_eq(c.ns[0], a.shape.d[0]);
    ck_assert_int_eq(c.ns[1], n1.shape.d[0]);
    ck_assert_int_eq(c.ns[2], n2.shape.d[0]);
    ck_assert_int_eq(skipped, 1);
    free(la);
    free(lb);
}
END_TEST

START_TEST(results_read_long_line)
{
    /* a line longer than 1 MiB is skipped (counted), and the next is read */
    char path[128], err[256] = "";
    tmp_path(path, sizeof path, "long.jsonl");
    size_t big = (1u << 20) + 4096;
    char *junk = malloc(big);
    ck_assert_ptr_nonnull(junk);
    memset(junk, 'x', big);
    kf_result a = make_result(1), b = make_result(2);
    char *la = report_json(&a, NULL), *lb = report_json(&b, NULL);
    append_raw(path, la, strlen(la));
    append_raw(path, "\n", 1);
    append_raw(path, junk, big);
    append_raw(path, "\n", 1);
    append_raw(path, lb, strlen(lb));
    append_raw(path, "\n", 1);
    ns_ctx c = {0};
    int skipped = -1;
    ck_assert_msg(results_read(path, ns_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.calls, 2);
    ck_assert_int_eq(c.ns[1], b.shape.d[0]);
    ck_assert_int_eq(skipped, 1);
    free(junk);
    free(la);
    free(lb);
}
END_TEST

START_TEST(results_read_from_offset)
{
    /* reading from where a command began appending */
    char path[128], err[256] = "";
    tmp_path(path, sizeof path, "from.jsonl");
    results_file *f = results_open(path, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    long offs[5];
    for (int i = 0; i < 5; i++) {
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        offs[i] = (long)st.st_size;
        kf_result r = make_result(i);
        r.shape.d[0] = 500 + i;
        append_line(f, &r);
    }
    results_close(f);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    for (int k = 0; k < 5; k++) {
        ns_ctx c = {0};
        int skipped = -1;
        ck_assert_msg(results_read_from(path, offs[k], ns_fn, &c, &skipped, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(c.calls, 5 - k);
        ck_assert_int_eq(c.ns[0], 500 + k);
        ck_assert_int_eq(skipped, 0);
    }
    /* at the end: nothing */
    ns_ctx c = {0};
    int skipped = -1;
    ck_assert_int_eq(results_read_from(path, (long)st.st_size, ns_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 0);
    ck_assert_int_eq(skipped, 0);
    /* offset 0 is the whole file, like results_read */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(results_read_from(path, 0, ns_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 5);
    /* in the middle of a line: that partial line is skipped, the rest read */
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(results_read_from(path, offs[2] + 5, ns_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 2);
    ck_assert_int_eq(c.ns[0], 503);
    ck_assert_int_eq(skipped, 1);
    /* a missing file: nothing, no error */
    char missing[160];
    tmp_path(missing, sizeof missing, "none.jsonl");
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(results_read_from(missing, 100, ns_fn, &c, &skipped, err, sizeof err), 0);
    ck_assert_int_eq(c.calls, 0);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *json = tcase_create("json");
    tcase_set_timeout(json, 60);
    tcase_add_test(json, json_round_trip_every_field);
    tcase_add_test(json, json_round_trip_every_enum_value);
    tcase_add_test(json, json_keys_and_run_info);
    tcase_add_test(json, json_special_values);
    tcase_add_test(json, json_nvml_fields);
    tcase_add_test(json, json_name_never_empty);
    tcase_add_test(json, json_cleans_bad_utf8);
    tcase_add_test(json, parse_rejects_bad_lines);
    tcase_add_test(json, parse_optional_fields_default);
    tcase_add_test(json, parse_without_kernel_is_reduce);
    suite_add_tcase(s, json);

    TCase *key = tcase_create("case_key");
    tcase_set_timeout(key, 60);
    tcase_add_test(key, case_key_identity);
    tcase_add_test(key, case_key_device_bench_shape);
    tcase_add_test(key, case_key_iff_equal_random);
    tcase_add_test(key, bench_fields_walked);
    suite_add_tcase(s, key);

    TCase *rep = tcase_create("reports");
    tcase_set_timeout(rep, 60);
    tcase_add_test(rep, report_jsonl);
    tcase_add_test(rep, report_json_array);
    tcase_add_test(rep, report_csv);
    tcase_add_test(rep, report_csv_core);
    tcase_add_test(rep, report_csv_streams_rows);
    tcase_add_test(rep, report_table);
    tcase_add_test(rep, report_table_values);
    tcase_add_test(rep, report_table_nvml);
    tcase_add_test(rep, report_md);
    tcase_add_test(rep, report_table_auto_columns);
    tcase_add_test(rep, report_table_column_list);
    tcase_add_test(rep, report_table_sort);
    tcase_add_test(rep, report_table_stream);
    tcase_add_test(rep, report_column_keys);
    suite_add_tcase(s, rep);

    TCase *file = tcase_create("results_file");
    tcase_set_timeout(file, 120);
    tcase_add_checked_fixture(file, tmp_setup, tmp_teardown);
    tcase_add_test(file, results_concurrent_append);
    tcase_add_test(file, results_truncated_last_line);
    tcase_add_test(file, results_missing_file);
    tcase_add_test(file, results_garbled_middle);
    tcase_add_test(file, results_append_rules);
    tcase_add_test(file, results_append_write_error);
    tcase_add_test(file, results_read_skips_nul_bytes);
    tcase_add_test(file, results_read_long_line);
    tcase_add_test(file, results_read_from_offset);
    suite_add_tcase(s, file);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(report_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
