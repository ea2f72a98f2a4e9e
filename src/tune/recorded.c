/*
 * recorded.c -- Kernel Tuner cache files and T4 files read as recorded
 * spaces (recorded.h).
 *
 * Kernel Tuner's cache: {"device_name", "tune_params_keys": [...],
 * "cache": {"v1,v2,...": {<each param>: value, "time": ms or a string
 * naming the failure ("CompilationFailedConfig", "RuntimeFailedConfig",
 * "InvalidConfig"), "compile_time", "verification_time", "benchmark_time",
 * "framework_time", "strategy_time" (ms)}}}.
 *
 * T4: {"results": [{"configuration": {<param>: value}, "invalidity":
 * "correct" | "compile" | "runtime" | "constraints" | ..., "times":
 * {"compilation", "validation", "framework", "search_algorithm",
 * "runtimes": [ms, ...]}, "measurements": [{"name": "time", "value": ms}],
 * "objectives": ["time"]}], "metadata": {"timeunit": ...}}.
 */
#include "recorded.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* The largest recorded file kforge reads, decompressed. */
#define REC_MAX_BYTES ((size_t)1 << 30)

/* The output of `gzip -dc -- path`, NUL-terminated; NULL with a message. */
static char *gunzip(const char *path, size_t *len, char *err, size_t errlen)
{
    int fd[2];
    if (pipe(fd) != 0) {
        kf_err(err, errlen, "%s: cannot decompress: %s", path, strerror(errno));
        return NULL;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        kf_err(err, errlen, "%s: cannot decompress: %s", path, strerror(errno));
        return NULL;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execlp("gzip", "gzip", "-dc", "--", path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    bool too_big = false;
    while (buf) {
        if (n == cap) {
            if (cap >= REC_MAX_BYTES) {
                too_big = true;
                break;
            }
            char *b = realloc(buf, cap * 2 + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t k = read(fd[0], buf + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd[0]);
    if (too_big)
        kill(pid, SIGTERM);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!buf) {
        kf_err(err, errlen, "%s: out of memory decompressing it", path);
        return NULL;
    }
    if (too_big) {
        free(buf);
        kf_err(err, errlen, "%s: larger than %zu MiB decompressed", path, REC_MAX_BYTES >> 20);
        return NULL;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(buf);
        kf_err(err, errlen, "%s: gzip -dc failed (%s)", path,
               WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "gzip not found" : "not a valid gzip file?");
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int bad(char *err, size_t errlen, const char *path, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    kf_err(err, errlen, "%s: %s", path, msg);
    return -1;
}

int rec_param(const rec_space *r, const char *name)
{
    for (int p = 0; p < r->nparams; p++)
        if (strcmp(r->names[p], name) == 0)
            return p;
    return -1;
}

void rec_free(rec_space *r)
{
    free(r->names);
    free(r->values);
    free(r->is_string);
    free(r->time_ms);
    free(r->status);
    free(r->eval_ms);
    free(r->compile_ms);
    memset(r, 0, sizeof *r);
}

/* Per parameter, the strings seen so far (a string value's number). */
typedef struct {
    kf_strset *sets;
} strtab;

static double num(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) && isfinite(x->valuedouble) ? x->valuedouble : 0;
}

static int add_param(rec_space *r, const char *name, const char *path, char *err, size_t errlen)
{
    if (strlen(name) >= REC_NAME_MAX)
        return bad(err, errlen, path, "parameter name \"%.60s...\" longer than 63 characters%s", name, "");
    char (*nm)[REC_NAME_MAX] = realloc(r->names, sizeof *nm * (size_t)(r->nparams + 1));
    if (!nm)
        return bad(err, errlen, path, "out of memory%s%s", "", "");
    r->names = nm;
    snprintf(r->names[r->nparams++], REC_NAME_MAX, "%s", name);
    return 0;
}

static int alloc_confs(rec_space *r, int n)
{
    size_t np = (size_t)(r->nparams ? r->nparams : 1), m = (size_t)(n ? n : 1);
    r->values = malloc(sizeof *r->values * np * m);
    r->is_string = calloc(np, 1);
    r->time_ms = malloc(sizeof *r->time_ms * m);
    r->status = malloc(m);
    r->eval_ms = malloc(sizeof *r->eval_ms * m);
    r->compile_ms = malloc(sizeof *r->compile_ms * m);
    return r->values && r->is_string && r->time_ms && r->status && r->eval_ms && r->compile_ms ? 0 : -1;
}

/* Configuration i's parameter values from the object cfg. */
static int read_values(rec_space *r, strtab *st, int i, const cJSON *cfg, const char *path, const char *where,
                       char *err, size_t errlen)
{
    for (int p = 0; p < r->nparams; p++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, r->names[p]);
        double x;
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
            x = v->valuedouble;
        } else if (cJSON_IsString(v)) {
            r->is_string[p] = 1;
            int k = kf_strset_add(&st->sets[p], v->valuestring, NULL);
            if (k < 0)
                return bad(err, errlen, path, "out of memory%s%s", "", "");
            x = k;
        } else if (cJSON_IsBool(v)) {
            x = cJSON_IsTrue(v);
        } else {
            char f[160];
            snprintf(f, sizeof f, "%.80s.%.60s", where, r->names[p]);
            return bad(err, errlen, path, "%s: missing, or not a number or string: every configuration gives a value "
                                          "for each parameter%s", f, "");
        }
        r->values[(size_t)i * (size_t)r->nparams + (size_t)p] = x;
    }
    return 0;
}

static int read_kt(const cJSON *root, rec_space *r, strtab *st, const char *path, char *err, size_t errlen)
{
    snprintf(r->format, sizeof r->format, "kernel_tuner");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device_name");
    if (cJSON_IsString(dev)) {
        snprintf(r->device, sizeof r->device, "%s", dev->valuestring);
        for (char *p = r->device; *p; p++) /* printed on the terminal */
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
    if (!cJSON_IsArray(keys) || cJSON_GetArraySize(keys) == 0)
        return bad(err, errlen, path, "tune_params_keys: expected the list of the tuned parameters' names%s%s", "",
                   "");
    if (!cJSON_IsObject(cache))
        return bad(err, errlen, path, "cache: expected an object of configurations%s%s", "", "");
    const cJSON *k;
    cJSON_ArrayForEach(k, keys)
    {
        if (!cJSON_IsString(k))
            return bad(err, errlen, path, "tune_params_keys: expected strings%s%s", "", "");
        if (add_param(r, k->valuestring, path, err, errlen) != 0)
            return -1;
    }
    st->sets = calloc((size_t)r->nparams, sizeof *st->sets);
    if (!st->sets || alloc_confs(r, cJSON_GetArraySize(cache)) != 0)
        return bad(err, errlen, path, "out of memory%s%s", "", "");
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, cache)
    {
        char where[128];
        snprintf(where, sizeof where, "cache[\"%.60s\"]", e->string ? e->string : "?");
        if (!cJSON_IsObject(e))
            return bad(err, errlen, path, "%s: expected an object%s", where, "");
        if (read_values(r, st, i, e, path, where, err, errlen) != 0)
            return -1;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "time");
        r->time_ms[i] = NAN;
        if (cJSON_IsNumber(t) && isfinite(t->valuedouble) && t->valuedouble > 0) {
            r->status[i] = REC_OK;
            r->time_ms[i] = t->valuedouble;
        } else if (cJSON_IsString(t) && strstr(t->valuestring, "Compil")) {
            r->status[i] = REC_COMPILE;
        } else if (cJSON_IsString(t) && strstr(t->valuestring, "Invalid")) {
            r->status[i] = REC_INVALID;
        } else if (cJSON_IsString(t) || cJSON_IsNumber(t)) {
            r->status[i] = REC_RUNTIME;
        } else {
            return bad(err, errlen, path, "%s.time: missing: expected the time in ms or the failure's name", where,
                       "");
        }
        r->compile_ms[i] = num(e, "compile_time");
        r->eval_ms[i] = r->compile_ms[i] + num(e, "verification_time") + num(e, "benchmark_time") +
                        num(e, "framework_time");
        i++;
    }
    r->nconf = i;
    return 1;
}

static int read_t4(const cJSON *root, rec_space *r, strtab *st, const char *path, char *err, size_t errlen)
{
    snprintf(r->format, sizeof r->format, "t4");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "metadata"),
                                                         "timeunit");
    double scale = 1; /* to ms */
    if (cJSON_IsString(unit)) {
        const char *u = unit->valuestring;
        if (strncmp(u, "mili", 4) == 0 || strncmp(u, "milli", 5) == 0 || strcmp(u, "ms") == 0)
            scale = 1;
        else if (strncmp(u, "micro", 5) == 0 || strcmp(u, "us") == 0)
            scale = 1e-3;
        else if (strncmp(u, "nano", 4) == 0 || strcmp(u, "ns") == 0)
            scale = 1e-6;
        else if (strcmp(u, "seconds") == 0 || strcmp(u, "s") == 0)
            scale = 1e3;
        else
            return bad(err, errlen, path, "metadata.timeunit \"%.40s\": expected seconds, miliseconds, "
                                          "microseconds or nanoseconds%s", u, "");
    }
    int n = cJSON_GetArraySize(res);
    if (n == 0)
        return bad(err, errlen, path, "results: expected a non-empty list of configurations%s%s", "", "");
    /* the parameters: the first result's configuration's keys */
    const cJSON *c0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res, 0), "configuration");
    if (!cJSON_IsObject(c0) || !c0->child)
        return bad(err, errlen, path, "results[0].configuration: expected an object of parameter values%s%s", "",
                   "");
    const cJSON *k;
    cJSON_ArrayForEach(k, c0)
    {
        if (add_param(r, k->string, path, err, errlen) != 0)
            return -1;
    }
    st->sets = calloc((size_t)r->nparams, sizeof *st->sets);
    if (!st->sets || alloc_confs(r, n) != 0)
        return bad(err, errlen, path, "out of memory%s%s", "", "");
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(res, i);
        char where[64];
        snprintf(where, sizeof where, "results[%d]", i);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(e, "configuration");
        if (!cJSON_IsObject(cfg))
            return bad(err, errlen, path, "%s.configuration: expected an object of parameter values%s", where, "");
        char w2[96];
        snprintf(w2, sizeof w2, "%s.configuration", where);
        if (read_values(r, st, i, cfg, path, w2, err, errlen) != 0)
            return -1;
        const cJSON *inv = cJSON_GetObjectItemCaseSensitive(e, "invalidity");
        const char *iv = cJSON_IsString(inv) ? inv->valuestring : "correct";
        double t = NAN;
        const cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(e, "measurements"))
        {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(m, "name");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "value");
            if (cJSON_IsString(nm) && strcmp(nm->valuestring, "time") == 0 && cJSON_IsNumber(v))
                t = v->valuedouble * scale;
        }
        r->time_ms[i] = NAN;
        if (strcmp(iv, "correct") == 0 && isfinite(t) && t > 0) {
            r->status[i] = REC_OK;
            r->time_ms[i] = t;
        } else if (strcmp(iv, "compile") == 0) {
            r->status[i] = REC_COMPILE;
        } else if (strcmp(iv, "constraints") == 0) {
            r->status[i] = REC_INVALID;
        } else {
            r->status[i] = REC_RUNTIME;
        }
        const cJSON *tm = cJSON_GetObjectItemCaseSensitive(e, "times");
        double run = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(tm, "runtimes"))
        {
            if (cJSON_IsNumber(x) && isfinite(x->valuedouble))
                run += x->valuedouble;
        }
        r->compile_ms[i] = num(tm, "compilation") * scale;
        r->eval_ms[i] = r->compile_ms[i] + (num(tm, "validation") + num(tm, "framework") + run) * scale;
    }
    r->nconf = n;
    return 1;
}

int rec_load(const char *path, rec_space *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    /* a pipe, a device: read once, by the results reader (a recorded space
     * is a regular file) */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        kf_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* the opening of the file: a Kernel Tuner cache names its parameters
     * ("tune_params_keys") and a T4 file its "results" and "metadata" or
     * "schema_version" near the start; anything else (a kforge results
     * file, /dev/zero) is not read any further here */
    enum { HEAD = 1 << 16 };
    char *head = malloc(HEAD);
    if (!head) {
        fclose(f);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    size_t got = fread(head, 1, HEAD - 1, f);
    fclose(f);
    head[got] = '\0';
    unsigned char magic[2] = {(unsigned char)head[0], (unsigned char)head[1]};
    if (!(got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)) {
        for (size_t i = 0; i < got; i++)
            if (head[i] == '\0')
                head[i] = ' ';
        bool ours = strstr(head, "\"tune_params_keys\"") ||
                    (strstr(head, "\"results\"") && (strstr(head, "\"metadata\"") || strstr(head, "\"schema_version\"")));
        if (!ours) {
            free(head);
            return 0;
        }
    }
    free(head);
    size_t len = 0;
    char *text = got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b ? gunzip(path, &len, err, errlen)
                                                                   : kf_read_file_max(path, REC_MAX_BYTES, &len,
                                                                                      err, errlen);
    if (!text)
        return -1;
    /* kforge's results files are JSON lines: the first value is one line's
     * object, without "cache" or "results" */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, false);
    int rc = 0;
    bool kt = root && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "cache")) &&
              cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
    bool t4 = root && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "results")) &&
              (cJSON_GetObjectItemCaseSensitive(root, "schema_version") ||
               cJSON_GetObjectItemCaseSensitive(root, "metadata"));
    if (!root && len > 0 && (text[strspn(text, " \t\r\n")] == '{') && strstr(text, "\"tune_params_keys\"")) {
        /* a Kernel Tuner cache whose run was cut off ends without its closing
         * braces: Kernel Tuner reads it so, and so does kforge */
        strbuf b = {0};
        sb_append(&b, text);
        while (b.len && strchr(" \t\r\n,", b.s[b.len - 1]))
            b.s[--b.len] = '\0';
        sb_append(&b, "}}");
        root = b.s ? cJSON_Parse(b.s) : NULL;
        sb_free(&b);
        kt = root && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "cache"));
    }
    strtab st = {0};
    if (!kt && !t4 && got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
        /* the results reader reads plain text only: said here, not "no
         * result for any candidate" later */
        rc = bad(err, errlen, path,
                 "a gzip file that is neither a Kernel Tuner cache nor a T4 file%s%s: a kforge results file is read "
                 "uncompressed (gunzip it first)",
                 "", "");
    if (kt || t4) {
        rc = kt ? read_kt(root, r, &st, path, err, errlen) : read_t4(root, r, &st, path, err, errlen);
        if (rc == 1 && r->nconf == 0)
            rc = bad(err, errlen, path, "no configuration in the file%s%s", "", "");
    }
    if (st.sets)
        for (int p = 0; p < r->nparams; p++)
            kf_strset_free(&st.sets[p]);
    free(st.sets);
    cJSON_Delete(root);
    free(text);
    if (rc != 1) {
        char e2[1024];
        snprintf(e2, sizeof e2, "%s", err ? err : "");
        rec_free(r);
        if (rc < 0 && err)
            snprintf(err, errlen, "%s", e2);
    }
    return rc;
}
