/*
 * results.c -- see results.h.  cJSON stays inside this file (and config.c,
 * whose parameter decoder it uses).
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "family.h"
#include "util.h"

#define LINE_MAX_BYTES (1 << 20)
/* More than this read without a results line, and the file is not one
 * (/dev/zero, `yes |`): the read ends with an error instead of going on. */
#define RESULTS_GARBAGE_MAX ((size_t)16 << 20)

// ----------------------------------------------------------------------------
// Appending

struct results_file {
    int fd;
    char path[4096];
};

results_file *results_open(const char *path, char *err, size_t errlen)
{
    /* read access too: results_append looks at the last byte */
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot open the results file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        kf_err(err, errlen, "%s: is a directory, not a results file", path);
        return NULL;
    }
    results_file *f = malloc(sizeof *f);
    if (!f) {
        close(fd);
        kf_err(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

static int lock(int fd, int op)
{
    int rc;
    do
        rc = flock(fd, op);
    while (rc < 0 && errno == EINTR);
    return rc;
}

int results_append(results_file *f, const char *line, char *err, size_t errlen)
{
    if (!f || !line) {
        kf_err(err, errlen, "results: nothing to append");
        return -1;
    }
    size_t len = strlen(line);
    if (memchr(line, '\n', len)) {
        kf_err(err, errlen, "%s: internal error: a results line holds a newline", f->path);
        return -1;
    }
    char *buf = malloc(len + 2);
    if (!buf) {
        kf_err(err, errlen, "%s: out of memory", f->path);
        return -1;
    }
    int rc = -1;
    if (lock(f->fd, LOCK_EX) < 0) {
        kf_err(err, errlen, "%s: cannot lock the results file: %s", f->path, strerror(errno));
        goto out;
    }
    /* a crash may have left a partial line: start ours on a line of its own */
    size_t off = 1;
    struct stat st;
    if (fstat(f->fd, &st) == 0 && st.st_size > 0) {
        char last;
        if (pread(f->fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
            off = 0;
    }
    buf[0] = '\n';
    memcpy(buf + 1, line, len);
    buf[len + 1] = '\n';
    rc = kf_write_full(f->fd, buf + off, len + 2 - off) == 0 ? 0 : -1;
    if (rc != 0)
        kf_err(err, errlen, "%s: cannot append a result: %s", f->path, strerror(errno));
    lock(f->fd, LOCK_UN);
out:
    free(buf);
    return rc;
}

void results_close(results_file *f)
{
    if (!f)
        return;
    close(f->fd);
    free(f);
}

// ----------------------------------------------------------------------------
// Reading

typedef struct {
    int (*fn)(const kf_result *r, void *ctx);
    void *ctx;
} parsed_ctx;

static int parsed_only(const char *line, long lineno, const kf_result *r, void *ctx)
{
    (void)line;
    (void)lineno;
    const parsed_ctx *p = ctx;
    return p->fn(r, p->ctx);
}

int results_read(const char *path, int (*fn)(const kf_result *r, void *ctx), void *ctx, int *skipped, char *err,
                 size_t errlen)
{
    return results_read_from(path, 0, fn, ctx, skipped, err, errlen);
}

int results_read_from(const char *path, long offset, int (*fn)(const kf_result *r, void *ctx), void *ctx,
                      int *skipped, char *err, size_t errlen)
{
    parsed_ctx p = {fn, ctx};
    return results_read_lines(path, offset, parsed_only, &p, skipped, err, errlen);
}

int results_read_lines(const char *path, long offset, results_line_fn fn, void *ctx, int *skipped, char *err,
                       size_t errlen)
{
    if (skipped)
        *skipped = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        kf_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        kf_err(err, errlen, "%s: is a directory, not a results file", path);
        return -1;
    }
    /* shared lock: no line is half-written while we read */
    lock(fd, LOCK_SH);
    if (offset > 0 && lseek(fd, offset, SEEK_SET) < 0)
        offset = 0;
    int ret = 0;
    size_t cap = 1 << 16, len = 0;
    size_t since_good = 0;      /* bytes read since the last results line */
    long lineno = 1;
    char *line = malloc(cap + 1);
    char chunk[1 << 16];
    bool too_long = false, stop = false;
    kf_result *res = malloc(sizeof *res);
    if (!line || !res) {
        kf_err(err, errlen, "%s: out of memory", path);
        ret = -1;
        goto out;
    }
    while (!stop) {
        /* a read of a regular file is never interrupted by a signal: look */
        if (kf_interrupted) {
            kf_err(err, errlen, "%s: interrupted", path);
            ret = -1;
            break;
        }
        if (since_good > RESULTS_GARBAGE_MAX) {
            kf_err(err, errlen, "%s: %zu MiB without a results line: not a results file", path,
                   RESULTS_GARBAGE_MAX >> 20);
            ret = -1;
            break;
        }
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            kf_err(err, errlen, "%s: %s", path, strerror(errno));
            ret = -1;
            break;
        }
        if (got == 0)
            break;
        since_good += (size_t)got;
        for (ssize_t i = 0; i < got && !stop; i++) {
            char ch = chunk[i];
            if (ch == '\0')
                continue;       /* damaged bytes (a crash can leave blocks of NULs) */
            if (ch != '\n') {
                if (len >= LINE_MAX_BYTES) {
                    too_long = true;
                    continue;
                }
                if (len == cap) {
                    size_t nc = cap * 2;
                    char *nl = realloc(line, nc + 1);
                    if (!nl) {
                        too_long = true;
                        continue;
                    }
                    line = nl;
                    cap = nc;
                }
                line[len++] = ch;
                continue;
            }
            line[len] = '\0';
            if (too_long) {
                if (skipped)
                    (*skipped)++;
            } else if (len > 0) {
                if (results_parse_line(line, res, NULL, 0) == 0) {
                    since_good = (size_t)(got - i);
                    if (fn(line, lineno, res, ctx) != 0)
                        stop = true;
                } else if (skipped) {
                    (*skipped)++;
                }
            }
            lineno++;
            len = 0;
            too_long = false;
        }
    }
    if (!stop && ret == 0 && (len > 0 || too_long) && skipped)
        (*skipped)++;   /* unterminated: a write still in flight or a crash */
out:
    lock(fd, LOCK_UN);
    free(line);
    free(res);
    close(fd);
    return ret;
}

// ----------------------------------------------------------------------------
// Parsing a line

static const cJSON *field(const cJSON *o, const char *key, bool required, char *err, size_t errlen,
                          bool *failed)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!f && required) {
        kf_err(err, errlen, "results line lacks \"%s\"", key);
        *failed = true;
    }
    return f;
}
static void get_enum(const cJSON *o, const char *key, const char *const *names, int count, int *out,
                     char *err, size_t errlen, bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, key, true, err, errlen, failed);
    if (!f)
        return;
    int i = cJSON_IsString(f) ? kf_lookup(names, count, f->valuestring) : -1;
    if (i < 0) {
        kf_err(err, errlen, "results line: \"%s\" is not one of the known names", key);
        *failed = true;
        return;
    }
    *out = i;
}

static void get_i64(const cJSON *o, const char *key, bool required, int64_t lo, int64_t hi,
                    int64_t *out, char *err, size_t errlen, bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, key, required, err, errlen, failed);
    if (!f)
        return;
    double x = cJSON_IsNumber(f) ? f->valuedouble : NAN;
    /* 2^63 is the first double past INT64_MAX */
    if (!(x == floor(x) && x >= (double)lo && x <= (double)hi && x < 0x1p63)) {
        kf_err(err, errlen, "results line: \"%s\" is not an integer in [%lld, %lld]", key,
               (long long)lo, (long long)hi);
        *failed = true;
        return;
    }
    *out = (int64_t)x;
}

static void get_int(const cJSON *o, const char *key, bool required, int *out, char *err,
                    size_t errlen, bool *failed)
{
    int64_t x = *out;
    get_i64(o, key, required, INT32_MIN, INT32_MAX, &x, err, errlen, failed);
    *out = (int)x;
}

/* null stands for a non-finite value (JSON has none): read back as NaN. */
static void get_dbl(const cJSON *o, const char *key, double *out, char *err, size_t errlen,
                    bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, key, false, err, errlen, failed);
    if (!f)
        return;
    if (cJSON_IsNull(f)) {
        *out = NAN;
    } else if (cJSON_IsNumber(f)) {
        *out = f->valuedouble;
    } else {
        kf_err(err, errlen, "results line: \"%s\" is not a number", key);
        *failed = true;
    }
}

static void get_bool(const cJSON *o, const char *key, bool *out, char *err, size_t errlen,
                     bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, key, false, err, errlen, failed);
    if (!f)
        return;
    if (!cJSON_IsBool(f)) {
        kf_err(err, errlen, "results line: \"%s\" is not true or false", key);
        *failed = true;
        return;
    }
    *out = cJSON_IsTrue(f);
}

/* Strings longer than the field are cut (messages are excerpts anyway). */
static void get_str(const cJSON *o, const char *key, char *out, size_t len, char *err,
                    size_t errlen, bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, key, false, err, errlen, failed);
    if (!f)
        return;
    if (!cJSON_IsString(f)) {
        kf_err(err, errlen, "results line: \"%s\" is not a string", key);
        *failed = true;
        return;
    }
    snprintf(out, len, "%s", f->valuestring);
}

/* A figure that may be null (not read): null leaves *out alone. */
static void get_opt_int(const cJSON *o, const char *key, int *out, char *err, size_t errlen, bool *failed)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
    if (f && !cJSON_IsNull(f))
        get_int(o, key, false, out, err, errlen, failed);
}

static void get_opt_dbl(const cJSON *o, const char *key, double *out, char *err, size_t errlen, bool *failed)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
    if (f && !cJSON_IsNull(f))
        get_dbl(o, key, out, err, errlen, failed);
}

static void get_opt_bool(const cJSON *o, const char *key, bool *out, char *err, size_t errlen, bool *failed)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, key);
    if (f && !cJSON_IsNull(f))
        get_bool(o, key, out, err, errlen, failed);
}

static void get_param(const cJSON *o, const kf_param *p, int64_t *out, char *err, size_t errlen, bool *failed)
{
    if (*failed)
        return;
    const cJSON *f = field(o, p->name, !p->optional, err, errlen, failed); /* missing optional: the default */
    if (f && config_param_value(p, f, "results line", out, err, errlen) != 0)
        *failed = true;
}

static void get_bench(const cJSON *o, kf_bench *b, char *err, size_t errlen, bool *failed)
{
    kf_bench_defaults(b);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "bench");
    if (!cJSON_IsObject(j))
        return;     /* lines of kforge 0.1 may lack it: the defaults */
    get_int(j, "warmup", false, &b->warmup, err, errlen, failed);
    get_int(j, "min_reps", false, &b->min_reps, err, errlen, failed);
    get_int(j, "max_reps", false, &b->max_reps, err, errlen, failed);
    get_dbl(j, "max_time_s", &b->max_time_s, err, errlen, failed);
    get_dbl(j, "max_noise", &b->max_noise, err, errlen, failed);
    get_bool(j, "flush_l2", &b->flush_l2, err, errlen, failed);
    int64_t seed = (int64_t)b->seed;
    get_i64(j, "seed", false, 0, INT64_MAX, &seed, err, errlen, failed);
    b->seed = (uint64_t)seed;
    get_i64(j, "offset", false, 0, 1 << 20, &b->offset, err, errlen, failed);
    get_dbl(j, "timeout_s", &b->timeout_s, err, errlen, failed);
    get_bool(j, "energy", &b->energy, err, errlen, failed);
}

int results_parse_line(const char *line, kf_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    const char *end = NULL;
    /* the length includes the NUL: cJSON checks for it when asked to
     * require null termination (and fails every line without it) */
    cJSON *o = cJSON_ParseWithLengthOpts(line, strlen(line) + 1, &end, 1);
    if (!o) {
        long col = end ? (long)(end - line) + 1 : 0;
        kf_err(err, errlen, "results line is not valid JSON (near column %ld)", col);
        return -1;
    }
    if (!cJSON_IsObject(o)) {
        kf_err(err, errlen, "results line is not a JSON object");
        cJSON_Delete(o);
        return -1;
    }
    bool failed = false;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    int fam = k ? (cJSON_IsString(k) ? family_find(k->valuestring) : -1) : family_find("reduce");
    if (fam < 0) {
        kf_err(err, errlen, "results line: unknown \"kernel\"");
        cJSON_Delete(o);
        return -1;
    }
    const kf_family *f = kf_families[fam];
    kf_variant *v = &res->v;
    variant_defaults(v, fam);
    get_str(o, "name", v->name, sizeof v->name, err, errlen, &failed);
    for (int i = 0; i < f->nparams; i++)
        get_param(o, &f->params[i], &v->p[i], err, errlen, &failed);
    /* an unnamed variant is written with its label as the name (report.c),
     * which may be longer than a name can be: back to no name */
    const cJSON *nmj = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!failed && cJSON_IsString(nmj)) {
        char label[256];
        f->label(v, label, sizeof label);
        if (strcmp(nmj->valuestring, label) == 0)
            v->name[0] = '\0';
    }
    for (int d = 0; d < f->nsizes; d++)
        get_i64(o, f->sizes[d].name, !f->sizes[d].optional, 0, INT64_MAX, &res->shape.d[d], err, errlen, &failed);
    int x = 0;
    get_enum(o, "status", kf_status_names, KF_ST_COUNT, &x, err, errlen, &failed);
    res->status = (kf_status)x;
    res->device = -1;
    get_int(o, "device_index", false, &res->device, err, errlen, &failed);
    get_str(o, "device", res->device_name, sizeof res->device_name, err, errlen, &failed);
    get_str(o, "uuid", res->device_uuid, sizeof res->device_uuid, err, errlen, &failed);
    get_bench(o, &res->bench, err, errlen, &failed);

    get_str(o, "message", res->message, sizeof res->message, err, errlen, &failed);
    get_str(o, "gpu_value", res->gpu_value, sizeof res->gpu_value, err, errlen, &failed);
    get_str(o, "ref_value", res->ref_value, sizeof res->ref_value, err, errlen, &failed);
    get_dbl(o, "abs_err", &res->abs_err, err, errlen, &failed);
    get_dbl(o, "tolerance", &res->tolerance, err, errlen, &failed);
    get_opt_dbl(o, "acc_err", &res->acc_err, err, errlen, &failed);
    get_opt_dbl(o, "acc_bound", &res->acc_bound, err, errlen, &failed);
    get_str(o, "planted", res->planted, sizeof res->planted, err, errlen, &failed);
    get_str(o, "planted_effect", res->planted_effect, sizeof res->planted_effect, err, errlen, &failed);
    get_bool(o, "deterministic", &res->deterministic, err, errlen, &failed);
    get_int(o, "launches", false, &res->launches, err, errlen, &failed);
    get_i64(o, "blocks", false, INT64_MIN, INT64_MAX, &res->blocks, err, errlen, &failed);
    get_int(o, "regs", false, &res->regs, err, errlen, &failed);
    get_int(o, "smem_bytes", false, &res->smem_bytes, err, errlen, &failed);
    get_int(o, "occupancy", false, &res->occupancy, err, errlen, &failed);
    get_bool(o, "cached", &res->cached, err, errlen, &failed);
    get_dbl(o, "compile_ms", &res->compile_ms, err, errlen, &failed);
    get_dbl(o, "setup_ms", &res->setup_ms, err, errlen, &failed);
    get_dbl(o, "verify_ms", &res->verify_ms, err, errlen, &failed);
    get_dbl(o, "bench_ms", &res->bench_ms, err, errlen, &failed);
    kf_stats *s = &res->stats;
    get_int(o, "reps", false, &s->reps, err, errlen, &failed);
    get_dbl(o, "median_ms", &s->median_ms, err, errlen, &failed);
    get_dbl(o, "min_ms", &s->min_ms, err, errlen, &failed);
    get_dbl(o, "max_ms", &s->max_ms, err, errlen, &failed);
    get_dbl(o, "mean_ms", &s->mean_ms, err, errlen, &failed);
    get_dbl(o, "stddev_ms", &s->stddev_ms, err, errlen, &failed);
    get_dbl(o, "noise", &s->noise, err, errlen, &failed);
    get_dbl(o, "gbps", &s->gbps, err, errlen, &failed);
    get_dbl(o, "pct_peak", &s->pct_peak, err, errlen, &failed);
    get_bool(o, "nvml", &res->nvml, err, errlen, &failed);
    get_str(o, "nvml_note", res->nvml_note, sizeof res->nvml_note, err, errlen, &failed);
    get_opt_int(o, "sm_mhz_min", &res->sm_mhz_min, err, errlen, &failed);
    get_opt_int(o, "sm_mhz_max", &res->sm_mhz_max, err, errlen, &failed);
    get_opt_int(o, "sm_mhz_limit", &res->sm_mhz_limit, err, errlen, &failed);
    get_opt_int(o, "mem_mhz", &res->mem_mhz, err, errlen, &failed);
    get_opt_int(o, "temp_c", &res->temp_c, err, errlen, &failed);
    get_opt_dbl(o, "power_w", &res->power_w, err, errlen, &failed);
    get_opt_bool(o, "throttled", &res->throttled, err, errlen, &failed);
    get_str(o, "throttle_reasons", res->throttle_reasons, sizeof res->throttle_reasons, err, errlen, &failed);
    get_opt_dbl(o, "energy_j", &res->energy_j, err, errlen, &failed);
    get_opt_int(o, "energy_runs", &res->energy_runs, err, errlen, &failed);
    get_opt_dbl(o, "energy_window_s", &res->energy_window_s, err, errlen, &failed);

    cJSON_Delete(o);
    return failed ? -1 : 0;
}

/* "9.0" -> 9, 0; false unless two numbers. */
static bool get_version(const cJSON *o, const char *key, int *major, int *minor)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) && sscanf(j->valuestring, "%d.%d", major, minor) == 2;
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
    bool failed = false;
    get_str(o, "run", info->run_id, sizeof info->run_id, err, errlen, &failed);
    get_str(o, "time", info->time, sizeof info->time, err, errlen, &failed);
    get_str(o, "host", info->host, sizeof info->host, err, errlen, &failed);
    get_str(o, "config", info->config, sizeof info->config, err, errlen, &failed);
    kf_device *d = &info->dev;
    d->index = -1;
    info->have_dev = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "device"));
    get_str(o, "device", d->name, sizeof d->name, err, errlen, &failed);
    get_str(o, "uuid", d->uuid, sizeof d->uuid, err, errlen, &failed);
    get_int(o, "device_index", false, &d->index, err, errlen, &failed);
    get_version(o, "cc", &d->cc_major, &d->cc_minor);
    get_int(o, "sms", false, &d->sms, err, errlen, &failed);
    get_i64(o, "l2_bytes", false, 0, INT64_MAX, &d->l2_bytes, err, errlen, &failed);
    get_dbl(o, "peak_gbps", &d->peak_gbps, err, errlen, &failed);
    int a = 0, b = 0;
    if (get_version(o, "driver", &a, &b))
        d->driver_version = a * 1000 + b * 10;
    get_version(o, "nvrtc", &d->nvrtc_major, &d->nvrtc_minor);
    cJSON_Delete(o);
    return failed ? -1 : 0;
}

// ----------------------------------------------------------------------------
// Case identity

void results_case_key(const kf_variant *v, const kf_shape *s, const kf_bench *b, const char *device, char *buf,
                      size_t len)
{
    /* Every part but the name is made of the parameter table's values
     * (no '|'); the name is last, so no name can make two keys equal. */
    const kf_family *f = family_of(v);
    strbuf k = {0};
    sb_printf(&k, "%s|", f->name);
    for (int i = 0; i < f->nparams; i++) {
        param_text(&k, &f->params[i], v->p[i]);
        sb_append(&k, "|");
    }
    for (int d = 0; d < f->nsizes; d++)
        sb_printf(&k, "%lld|", (long long)s->d[d]);
    sb_printf(&k, "seed=%llu|off=%lld|flush=%d|warm=%d|reps=%d..%d|t=%.17g|noise=%.17g|", (unsigned long long)b->seed,
              (long long)b->offset, b->flush_l2, b->warmup, b->min_reps, b->max_reps, b->max_time_s, b->max_noise);
    /* a result with an energy figure is not the same as one without (and
     * keys of files written before bench.energy existed stay as they were) */
    if (b->energy)
        sb_append(&k, "energy|");
    /* a variant without a name is written with its label as the name
     * (report.c): both spellings are the same case */
    char label[256];
    if (!v->name[0])
        f->label(v, label, sizeof label);
    sb_printf(&k, "dev=%zu:%s|%s", strlen(device ? device : ""), device ? device : "", v->name[0] ? v->name : label);
    snprintf(buf, len, "%s", k.s ? k.s : "");
    sb_free(&k);
}

void results_key_of(const kf_result *r, char *buf, size_t len)
{
    results_case_key(&r->v, &r->shape, &r->bench, r->device_name, buf, len);
}
