/*
 * t4.c -- see t4.h.
 */
#include "t4.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const struct {
    const char *status, *invalidity;
} invalidity[] = {{"ok", "correct"}, {"abandoned", "correct"}, {"wrong", "correctness"}, {"compile_error", "compile"},
                  {"skipped", "constraints"}, {"timeout", "timeout"}};

static const char *invalid_of(const char *st)
{
    for (size_t i = 0; i < sizeof invalidity / sizeof invalidity[0]; i++)
        if (strcmp(st, invalidity[i].status) == 0)
            return invalidity[i].invalidity;
    return "runtime"; /* launch_error, fault, oom, ... */
}

/* A failed result's objective value: Kernel Tuner's error names, the only
 * strings the methodology's reader takes there (its validators); kforge's
 * status goes beside it as the measurement "status". */
static const char *error_of(const char *st)
{
    if (strcmp(st, "compile_error") == 0)
        return "CompilationFailedConfig";
    if (strcmp(st, "skipped") == 0)
        return "InvalidConfig";
    return "RuntimeFailedConfig";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : 0.0;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void measure(cJSON *m, const char *name, cJSON *value, const char *unit)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddItemToObject(e, "value", value);
    cJSON_AddStringToObject(e, "unit", unit);
    cJSON_AddItemToArray(m, e);
}

/* One results line as a T4 result (NULL: not a results line). */
static cJSON *t4_result(const cJSON *line)
{
    const char *st = str(line, "status");
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(line, "axes");
    if (!st || !cJSON_IsArray(axes))
        return NULL;
    cJSON *r = cJSON_CreateObject();
    if (str(line, "time"))
        cJSON_AddStringToObject(r, "timestamp", str(line, "time"));
    cJSON *conf = cJSON_AddObjectToObject(r, "configuration");
    const cJSON *a;
    cJSON_ArrayForEach(a, axes)
    {
        const cJSON *v = cJSON_IsString(a) ? cJSON_GetObjectItemCaseSensitive(line, a->valuestring) : NULL;
        if (v)
            cJSON_AddItemToObject(conf, a->valuestring, cJSON_Duplicate(v, 1));
    }
    cJSON *times = cJSON_AddObjectToObject(r, "times");
    cJSON_AddNumberToObject(times, "compilation", num(line, "compile_ms"));
    cJSON_AddNumberToObject(times, "validation", num(line, "verify_ms"));
    cJSON_AddNumberToObject(times, "benchmark", num(line, "bench_ms"));
    cJSON_AddNumberToObject(times, "framework", num(line, "setup_ms"));
    cJSON_AddNumberToObject(times, "search_algorithm", 0);
    cJSON_AddArrayToObject(times, "runtimes");
    cJSON_AddStringToObject(r, "invalidity", invalid_of(st));
    cJSON_AddNumberToObject(r, "correctness", strcmp(st, "wrong") == 0 ? 0 : 1);
    cJSON *m = cJSON_AddArrayToObject(r, "measurements");
    const cJSON *med = cJSON_GetObjectItemCaseSensitive(line, "median_ms");
    bool ok = (strcmp(st, "ok") == 0 || strcmp(st, "abandoned") == 0) && cJSON_IsNumber(med);
    /* every result names the objective: a failed one's value is Kernel Tuner's error name */
    measure(m, "time", ok ? cJSON_CreateNumber(med->valuedouble) : cJSON_CreateString(error_of(st)), "ms");
    if (!ok)
        measure(m, "status", cJSON_CreateString(st), "");
    static const char *const more[][2] = {{"min_ms", "ms"}, {"max_ms", "ms"}, {"mean_ms", "ms"},
                                          {"stddev_ms", "ms"}, {"gbps", "GB/s"}, {"gflops", "GFLOP/s"},
                                          {"energy_j", "J"}};
    for (size_t i = 0; ok && i < sizeof more / sizeof more[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(line, more[i][0]);
        if (cJSON_IsNumber(v))
            measure(m, more[i][0], cJSON_CreateNumber(v->valuedouble), more[i][1]);
    }
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(line, "sizes");
    cJSON_ArrayForEach(a, sizes)
    {
        const cJSON *v = cJSON_IsString(a) ? cJSON_GetObjectItemCaseSensitive(line, a->valuestring) : NULL;
        if (v)
            measure(m, a->valuestring, cJSON_Duplicate(v, 1), "");
    }
    if (str(line, "message") && str(line, "message")[0])
        measure(m, "message", cJSON_CreateString(str(line, "message")), "");
    cJSON *obj = cJSON_AddArrayToObject(r, "objectives");
    cJSON_AddItemToArray(obj, cJSON_CreateString("time"));
    return r;
}

/* A case's identity for "the last line of each case": kernel, label,
 * sizes' values and device. */
static char *case_key(const cJSON *line)
{
    strbuf b = {0};
    sb_printf(&b, "%s|%s|%s", str(line, "kernel") ? str(line, "kernel") : "", str(line, "label") ? str(line, "label") : "",
              str(line, "device") ? str(line, "device") : "");
    const cJSON *a, *sizes = cJSON_GetObjectItemCaseSensitive(line, "sizes");
    cJSON_ArrayForEach(a, sizes)
    {
        if (cJSON_IsString(a))
            sb_printf(&b, "|%.17g", num(line, a->valuestring));
    }
    return sb_take(&b);
}

int t4_write(FILE *out, const char *path, const char *config, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = kf_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = -1, n = 0;
    cJSON **lines = NULL;
    char **keys = NULL;
    for (char *p = text; p && *p;) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = '\0';
        cJSON *j = *p ? cJSON_Parse(p) : NULL;
        p = eol ? eol + 1 : NULL;
        const char *cf = j ? str(j, "config") : NULL;
        if (!j || !str(j, "status") || (config && (!cf || strcmp(cf, config) != 0))) {
            cJSON_Delete(j);
            continue;
        }
        char *k = case_key(j);
        int at = n;
        for (int i = 0; i < n; i++)
            if (k && keys[i] && strcmp(keys[i], k) == 0)
                at = i;
        if (at < n) { /* a case measured again: its last line */
            cJSON_Delete(lines[at]);
            free(keys[at]);
        } else {
            cJSON **nl = realloc(lines, sizeof *nl * (size_t)(n + 1));
            char **nk = nl ? realloc(keys, sizeof *nk * (size_t)(n + 1)) : NULL;
            if (nl)
                lines = nl;
            if (!nl || !nk) {
                cJSON_Delete(j);
                free(k);
                kf_err(err, errlen, "out of memory");
                goto out;
            }
            keys = nk;
            n++;
        }
        lines[at] = j;
        keys[at] = k;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema_version", "1.0.0");
    cJSON *res = cJSON_AddArrayToObject(doc, "results");
    for (int i = 0; i < n; i++) {
        cJSON *r = t4_result(lines[i]);
        if (r)
            cJSON_AddItemToArray(res, r);
    }
    cJSON *meta = cJSON_AddObjectToObject(doc, "metadata");
    cJSON_AddStringToObject(meta, "timeunit", "milliseconds");
    cJSON_AddStringToObject(meta, "producer", "kforge");
    if (n && str(lines[0], "device"))
        cJSON_AddStringToObject(meta, "device", str(lines[0], "device"));
    char *s = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!s) {
        kf_err(err, errlen, "out of memory");
        goto out;
    }
    fputs(s, out);
    fputc('\n', out);
    free(s);
    fflush(out);
    rc = 0;
out:
    for (int i = 0; i < n; i++) {
        cJSON_Delete(lines[i]);
        free(keys[i]);
    }
    free(lines);
    free(keys);
    free(text);
    return rc;
}
