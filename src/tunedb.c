/*
 * tunedb.c -- the tuning database (see tunedb.h).
 *
 * The files are small (one entry per dtype, op and size tuned), so every
 * operation reads and parses the whole file.  Writers serialise on a lock
 * file beside the data file rather than on the data file itself: the data
 * file is replaced by rename(), and a lock held on a file that has just been
 * replaced protects nothing.
 */
#include "tunedb.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define DB_FORMAT 1

int tunedb_default_dir(char *buf, size_t len)
{
    const char *e = getenv("KFORGE_DB");
    int k;
    if (e && *e) {
        k = snprintf(buf, len, "%s", e);
    } else if ((e = getenv("XDG_DATA_HOME")) && *e == '/') {
        k = snprintf(buf, len, "%s/kforge/tuning", e);
    } else if ((e = getenv("HOME")) && *e) {
        k = snprintf(buf, len, "%s/.local/share/kforge/tuning", e);
    } else {
        return -1;
    }
    return k > 0 && (size_t)k < len ? 0 : -1;
}

void tunedb_stem(const char *name, char *buf, size_t len)
{
    size_t o = 0;
    bool gap = false;
    for (const char *p = name; *p && o + 2 < len; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '_' || c == '-') {
            if (gap && o > 0)
                buf[o++] = '_';
            gap = false;
            if (o + 1 < len)
                buf[o++] = (char)c;
        } else {
            gap = true;
        }
    }
    buf[o] = '\0';
    if (o == 0)
        snprintf(buf, len, "unknown-gpu");
}

// ---------------------------------------------------------------------------
// variants and entries <-> JSON

static cJSON *grid_json(const kf_grid *g)
{
    switch (g->kind) {
    case KF_GRID_BLOCKS: return cJSON_CreateNumber((double)g->value);
    case KF_GRID_PER_SM: {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "blocks_per_sm", (double)g->value);
        return o;
    }
    case KF_GRID_WAVES: {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "waves", (double)g->value);
        return o;
    }
    default: return cJSON_CreateString("auto");
    }
}

static cJSON *variant_json(const kf_variant *v)
{
    cJSON *o = cJSON_CreateObject();
    if (v->name[0])
        cJSON_AddStringToObject(o, "name", v->name);
    cJSON_AddStringToObject(o, "dtype", kf_dtype_names[v->dtype]);
    cJSON_AddStringToObject(o, "op", kf_op_names[v->op]);
    cJSON_AddStringToObject(o, "algorithm", kf_algorithm_names[v->algorithm]);
    cJSON_AddNumberToObject(o, "block_size", v->block_size);
    cJSON_AddNumberToObject(o, "elements_per_thread", v->elements_per_thread);
    cJSON_AddStringToObject(o, "unroll", kf_unroll_names[v->unroll]);
    cJSON_AddNumberToObject(o, "vector_width", v->vector_width);
    cJSON_AddItemToObject(o, "grid", grid_json(&v->grid));
    cJSON_AddStringToObject(o, "passes", kf_passes_names[v->passes]);
    cJSON_AddStringToObject(o, "layout", kf_layout_names[v->layout]);
    cJSON_AddStringToObject(o, "accumulator", kf_accum_names[v->accumulator]);
    cJSON_AddStringToObject(o, "warp_reduce", kf_warp_reduce_names[v->warp_reduce]);
    cJSON_AddStringToObject(o, "load", kf_load_names[v->load]);
    return o;
}

static cJSON *entry_json(const tunedb_entry *e)
{
    char buf[32];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kernel", e->kernel[0] ? e->kernel : "reduce");
    cJSON_AddStringToObject(o, "dtype", kf_dtype_names[e->v.dtype]);
    cJSON_AddStringToObject(o, "op", kf_op_names[e->v.op]);
    cJSON_AddNumberToObject(o, "n", (double)e->n);
    cJSON_AddItemToObject(o, "variant", variant_json(&e->v));
    cJSON_AddNumberToObject(o, "median_ms", e->median_ms);
    cJSON_AddNumberToObject(o, "gbps", e->gbps);
    cJSON_AddNumberToObject(o, "pct_peak", e->pct_peak);
    cJSON_AddNumberToObject(o, "blocks", (double)e->blocks);
    cJSON_AddNumberToObject(o, "launches", e->launches);
    cJSON *d = cJSON_AddObjectToObject(o, "device");
    cJSON_AddStringToObject(d, "name", e->dev.name);
    snprintf(buf, sizeof buf, "%d.%d", e->dev.cc_major, e->dev.cc_minor);
    cJSON_AddStringToObject(d, "cc", buf);
    cJSON_AddNumberToObject(d, "sms", e->dev.sms);
    cJSON_AddNumberToObject(d, "peak_gbps", round(e->dev.peak_gbps * 10) / 10);
    snprintf(buf, sizeof buf, "%d.%d", e->dev.driver_version / 1000, e->dev.driver_version % 1000 / 10);
    cJSON_AddStringToObject(d, "driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", e->dev.nvrtc_major, e->dev.nvrtc_minor);
    cJSON_AddStringToObject(d, "nvrtc", buf);
    cJSON_AddStringToObject(o, "kforge", e->kforge[0] ? e->kforge : KF_VERSION);
    cJSON_AddStringToObject(o, "date", e->date);
    cJSON_AddStringToObject(o, "how", e->how);
    return o;
}

typedef struct {
    const char *path;
    int index;
    char *err;
    size_t errlen;
} pctx;

static int bad(const pctx *c, const char *field, const char *what)
{
    kf_err(c->err, c->errlen, "%s: entries[%d].%s: %s", c->path, c->index, field, what);
    return -1;
}

static int get_name(const pctx *c, const cJSON *o, const char *key, const char *field, const char *const *names,
                    int count, int *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j)
        return 0; /* the default stays */
    int k = cJSON_IsString(j) ? kf_lookup(names, count, j->valuestring) : -1;
    if (k < 0)
        return bad(c, field, "not a known value");
    *out = k;
    return 0;
}

static int get_num(const pctx *c, const cJSON *o, const char *key, const char *field, double lo, double hi,
                   bool required, double *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j) {
        if (required)
            return bad(c, field, "missing");
        return 0;
    }
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= lo && j->valuedouble <= hi))
        return bad(c, field, "expected a number in range");
    *out = j->valuedouble;
    return 0;
}

static int parse_variant(const pctx *c, const cJSON *o, kf_variant *v)
{
    kf_variant_defaults(v);
    if (!cJSON_IsObject(o))
        return bad(c, "variant", "expected an object");
    int k;
    double x;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (cJSON_IsString(nm))
        snprintf(v->name, sizeof v->name, "%s", nm->valuestring);
#define NAMED(key, names, count, field)                                                                           \
    do {                                                                                                         \
        k = (int)v->field;                                                                                       \
        if (get_name(c, o, key, "variant." key, names, count, &k) != 0)                                          \
            return -1;                                                                                           \
        v->field = k;                                                                                            \
    } while (0)
    NAMED("dtype", kf_dtype_names, KF_DTYPE_COUNT, dtype);
    NAMED("op", kf_op_names, KF_OP_COUNT, op);
    NAMED("algorithm", kf_algorithm_names, KF_ALG_COUNT, algorithm);
    NAMED("unroll", kf_unroll_names, KF_UNROLL_COUNT, unroll);
    NAMED("passes", kf_passes_names, KF_PASSES_COUNT, passes);
    NAMED("layout", kf_layout_names, KF_LAYOUT_COUNT, layout);
    NAMED("accumulator", kf_accum_names, KF_ACC_COUNT, accumulator);
    NAMED("warp_reduce", kf_warp_reduce_names, KF_WARP_COUNT, warp_reduce);
    NAMED("load", kf_load_names, KF_LOAD_COUNT, load);
#undef NAMED
    x = v->block_size;
    if (get_num(c, o, "block_size", "variant.block_size", 1, 1024, false, &x) != 0)
        return -1;
    v->block_size = (int)x;
    x = v->elements_per_thread;
    if (get_num(c, o, "elements_per_thread", "variant.elements_per_thread", 1, 256, false, &x) != 0)
        return -1;
    v->elements_per_thread = (int)x;
    x = v->vector_width;
    if (get_num(c, o, "vector_width", "variant.vector_width", 1, 4, false, &x) != 0)
        return -1;
    v->vector_width = (int)x;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "grid");
    if (g) {
        if (cJSON_IsString(g) && strcmp(g->valuestring, "auto") == 0) {
            v->grid.kind = KF_GRID_AUTO;
            v->grid.value = 0;
        } else if (cJSON_IsNumber(g) && g->valuedouble >= 1 && g->valuedouble <= 2147483647.0) {
            v->grid.kind = KF_GRID_BLOCKS;
            v->grid.value = (int64_t)g->valuedouble;
        } else if (cJSON_IsObject(g) && g->child && !g->child->next && cJSON_IsNumber(g->child) &&
                   g->child->valuedouble >= 1 && g->child->valuedouble <= 64 &&
                   (strcmp(g->child->string, "waves") == 0 || strcmp(g->child->string, "blocks_per_sm") == 0)) {
            v->grid.kind = strcmp(g->child->string, "waves") == 0 ? KF_GRID_WAVES : KF_GRID_PER_SM;
            v->grid.value = (int64_t)g->child->valuedouble;
        } else {
            return bad(c, "variant.grid", "expected \"auto\", a block count, {\"waves\": k} or {\"blocks_per_sm\": k}");
        }
    }
    return 0;
}

static void get_str(const cJSON *o, const char *key, char *out, size_t len)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(j))
        snprintf(out, len, "%s", j->valuestring);
}

/* "13.0" -> 13, 0 */
static void get_version(const cJSON *o, const char *key, int *major, int *minor)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(j))
        sscanf(j->valuestring, "%d.%d", major, minor);
}

static int parse_entry(const pctx *c, const cJSON *o, tunedb_entry *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->kernel, sizeof e->kernel, "reduce");
    get_str(o, "kernel", e->kernel, sizeof e->kernel);
    if (parse_variant(c, cJSON_GetObjectItemCaseSensitive(o, "variant"), &e->v) != 0)
        return -1;
    double x = 0;
    if (get_num(c, o, "n", "n", 1, 1e15, true, &x) != 0)
        return -1;
    e->n = (int64_t)x;
    if (get_num(c, o, "median_ms", "median_ms", 0, 1e12, true, &e->median_ms) != 0 ||
        get_num(c, o, "gbps", "gbps", 0, 1e12, false, &e->gbps) != 0 ||
        get_num(c, o, "pct_peak", "pct_peak", 0, 1e6, false, &e->pct_peak) != 0)
        return -1;
    x = 0;
    if (get_num(c, o, "blocks", "blocks", 0, 1e15, false, &x) != 0)
        return -1;
    e->blocks = (int64_t)x;
    x = 0;
    if (get_num(c, o, "launches", "launches", 0, 1e6, false, &x) != 0)
        return -1;
    e->launches = (int)x;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "device");
    if (cJSON_IsObject(d)) {
        get_str(d, "name", e->dev.name, sizeof e->dev.name);
        get_version(d, "cc", &e->dev.cc_major, &e->dev.cc_minor);
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(d, "sms");
        if (cJSON_IsNumber(j))
            e->dev.sms = j->valueint;
        j = cJSON_GetObjectItemCaseSensitive(d, "peak_gbps");
        if (cJSON_IsNumber(j))
            e->dev.peak_gbps = j->valuedouble;
        int dmaj = 0, dmin = 0;
        get_version(d, "driver", &dmaj, &dmin);
        e->dev.driver_version = dmaj * 1000 + dmin * 10;
        get_version(d, "nvrtc", &e->dev.nvrtc_major, &e->dev.nvrtc_minor);
    }
    get_str(o, "kforge", e->kforge, sizeof e->kforge);
    get_str(o, "date", e->date, sizeof e->date);
    get_str(o, "how", e->how, sizeof e->how);
    return 0;
}

/* The key fields of a stored entry; false if it lacks them (kept, never matched). */
static bool entry_key(const cJSON *o, const char **kernel, int *dtype, int *op, double *n)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "op");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "n");
    if (!cJSON_IsString(k) || !cJSON_IsString(t) || !cJSON_IsString(p) || !cJSON_IsNumber(s))
        return false;
    *kernel = k->valuestring;
    *dtype = kf_lookup(kf_dtype_names, KF_DTYPE_COUNT, t->valuestring);
    *op = kf_lookup(kf_op_names, KF_OP_COUNT, p->valuestring);
    *n = s->valuedouble;
    return *dtype >= 0 && *op >= 0;
}

// ---------------------------------------------------------------------------
// files

static int file_path(const char *dir, const char *gpu, char *buf, size_t len)
{
    char stem[256];
    tunedb_stem(gpu, stem, sizeof stem);
    int k = snprintf(buf, len, "%s/%s.json", dir, stem);
    return k > 0 && (size_t)k < len ? 0 : -1;
}

/* Parses path into *root.  Returns 0, 1 if the file does not exist, -1 with
 * a message if it cannot be read or is not a tuning database. */
static int load(const char *path, cJSON **root, char *err, size_t errlen)
{
    *root = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 1;
        kf_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t len;
    char *text = kf_read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    cJSON *r = cJSON_ParseWithLength(text, len);
    free(text);
    if (!r || !cJSON_IsObject(r) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "entries"))) {
        cJSON_Delete(r);
        kf_err(err, errlen, "%s: not a kforge tuning database (malformed JSON or no \"entries\" list); fix or "
                            "remove it",
               path);
        return -1;
    }
    *root = r;
    return 0;
}

static int lock_fd(int fd, int op)
{
    int rc;
    do
        rc = flock(fd, op);
    while (rc < 0 && errno == EINTR);
    return rc;
}

int tunedb_update(const char *dir, const tunedb_entry *entries, int count, char *err, size_t errlen)
{
    if (count <= 0)
        return 0;
    char path[PATH_MAX], lockpath[PATH_MAX + 8];
    if (file_path(dir, entries[0].dev.name, path, sizeof path) != 0) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    snprintf(lockpath, sizeof lockpath, "%s.lock", path);
    if (kf_mkdir_p(dir, err, errlen) != 0)
        return -1;
    int fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        kf_err(err, errlen, "%s: %s", lockpath, strerror(errno));
        return -1;
    }
    if (lock_fd(fd, LOCK_EX) != 0) {
        kf_err(err, errlen, "%s: cannot lock: %s", lockpath, strerror(errno));
        close(fd);
        return -1;
    }
    int written = -1;
    cJSON *root = NULL;
    int lr = load(path, &root, err, errlen);
    if (lr < 0)
        goto out;
    if (lr == 1) {
        root = cJSON_CreateObject();
        cJSON_AddNumberToObject(root, "kforge_tuning_db", DB_FORMAT);
        cJSON_AddStringToObject(root, "device", entries[0].dev.name);
        cJSON_AddItemToObject(root, "entries", cJSON_CreateArray());
    }
    cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
    written = 0;
    for (int i = 0; i < count; i++) {
        const tunedb_entry *e = &entries[i];
        if (!(e->median_ms > 0) || !isfinite(e->median_ms))
            continue;
        const char *kernel = e->kernel[0] ? e->kernel : "reduce";
        int pos = 0;
        cJSON *old = NULL;
        for (cJSON *it = list->child; it; it = it->next, pos++) {
            const char *k;
            int t, p;
            double n;
            if (entry_key(it, &k, &t, &p, &n) && strcmp(k, kernel) == 0 && t == (int)e->v.dtype &&
                p == (int)e->v.op && n == (double)e->n) {
                old = it;
                break;
            }
        }
        if (old) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(old, "median_ms");
            if (cJSON_IsNumber(m) && m->valuedouble > 0 && m->valuedouble <= e->median_ms)
                continue; /* the database already has one at least as fast */
            cJSON_ReplaceItemInArray(list, pos, entry_json(e));
        } else {
            cJSON_AddItemToArray(list, entry_json(e));
        }
        written++;
    }
    if (written > 0) {
        char *text = cJSON_Print(root);
        if (!text) {
            kf_err(err, errlen, "%s: out of memory", path);
            written = -1;
            goto out;
        }
        /* cJSON indents with tabs and writes "key":<tab>value; tabs inside
         * strings are escaped, so every raw tab is layout: make it two
         * spaces of indentation, or one space after a colon */
        strbuf b = {0};
        for (const char *p = text; *p; p++) {
            if (*p != '\t')
                sb_appendn(&b, p, 1);
            else if (p > text && p[-1] == ':')
                sb_append(&b, " ");
            else
                sb_append(&b, "  ");
        }
        sb_append(&b, "\n");
        free(text);
        if (b.failed || kf_write_file_atomic(path, b.s, b.len, err, errlen) != 0)
            written = -1;
        sb_free(&b);
    }
out:
    cJSON_Delete(root);
    lock_fd(fd, LOCK_UN);
    close(fd);
    return written;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int tunedb_list(const char *dir, char ***stems, int *count, char *err, size_t errlen)
{
    *stems = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        kf_err(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 8;
            char **s = realloc(*stems, sizeof *s * (size_t)cap);
            if (!s)
                break;
            *stems = s;
        }
        (*stems)[*count] = strndup(de->d_name, len - 5);
        if ((*stems)[*count])
            (*count)++;
    }
    closedir(d);
    if (*count > 1)
        qsort(*stems, (size_t)*count, sizeof **stems, cmp_str);
    return 0;
}

void tunedb_list_free(char **stems, int count)
{
    for (int i = 0; i < count; i++)
        free(stems[i]);
    free(stems);
}

int tunedb_lookup(const char *dir, const char *gpu, kf_dtype dtype, kf_op op, int64_t n, tunedb_entry *out,
                  bool *exact, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (file_path(dir, gpu, path, sizeof path) != 0) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    cJSON *root;
    int lr = load(path, &root, err, errlen);
    if (lr != 0)
        return lr;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
    const cJSON *pick = NULL;
    int pick_index = -1, index = 0;
    double pick_n = 0, pick_dist = INFINITY;
    double ln = log((double)(n > 0 ? n : 1));
    for (const cJSON *it = list->child; it; it = it->next, index++) {
        const char *k;
        int t, p;
        double en;
        if (!entry_key(it, &k, &t, &p, &en) || strcmp(k, "reduce") != 0 || t != (int)dtype || p != (int)op ||
            !(en >= 1))
            continue;
        double dist = fabs(log(en) - ln);
        if (dist < pick_dist || (dist == pick_dist && en > pick_n)) {
            pick = it;
            pick_index = index;
            pick_n = en;
            pick_dist = dist;
        }
    }
    int rc = 1;
    if (pick) {
        pctx c = {path, pick_index, err, errlen};
        rc = parse_entry(&c, pick, out) == 0 ? 0 : -1;
        if (rc == 0)
            *exact = out->n == n;
    }
    cJSON_Delete(root);
    return rc;
}

// ---------------------------------------------------------------------------
// output

static void fmt_driver(const kf_device *d, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", d->driver_version / 1000, d->driver_version % 1000 / 10);
}

/* One line of where an entry came from (no newline). */
static void provenance(strbuf *b, const tunedb_entry *e)
{
    char drv[32];
    fmt_driver(&e->dev, drv, sizeof drv);
    sb_printf(b, "Best known variant for %s %s at n = %lld on %s (cc %d.%d, driver %s, NVRTC %d.%d): %.4g ms, "
                 "%.1f GB/s (%.1f%% of peak). Measured by kforge %s on %s",
              kf_dtype_names[e->v.dtype], kf_op_names[e->v.op], (long long)e->n, e->dev.name, e->dev.cc_major,
              e->dev.cc_minor, drv, e->dev.nvrtc_major, e->dev.nvrtc_minor, e->median_ms, e->gbps, e->pct_peak,
              e->kforge[0] ? e->kforge : "?", e->date[0] ? e->date : "?");
    if (e->how[0])
        sb_printf(b, "; obtained by: %s", e->how);
    sb_append(b, ".");
}

char *tunedb_variant_json(const kf_variant *v)
{
    strbuf b = {0};
    char grid[64];
    kf_grid_format(&v->grid, grid, sizeof grid);
    sb_append(&b, "{");
    if (v->name[0]) {
        sb_append(&b, "\"name\": ");
        sb_json_string(&b, v->name);
        sb_append(&b, ", ");
    }
    sb_printf(&b,
              "\"dtype\": \"%s\", \"op\": \"%s\", \"algorithm\": \"%s\", \"block_size\": %d, "
              "\"elements_per_thread\": %d, \"unroll\": \"%s\", \"vector_width\": %d, \"grid\": %s, "
              "\"passes\": \"%s\", \"layout\": \"%s\", \"accumulator\": \"%s\", \"warp_reduce\": \"%s\", "
              "\"load\": \"%s\"}",
              kf_dtype_names[v->dtype], kf_op_names[v->op], kf_algorithm_names[v->algorithm], v->block_size,
              v->elements_per_thread, kf_unroll_names[v->unroll], v->vector_width, grid, kf_passes_names[v->passes],
              kf_layout_names[v->layout], kf_accum_names[v->accumulator], kf_warp_reduce_names[v->warp_reduce],
              kf_load_names[v->load]);
    return sb_take(&b);
}

/* Written by hand rather than with cJSON_Print: one key per line, in the
 * order of a config file, indented like the configs in configs/. */
char *tunedb_config_json(const tunedb_entry *e, int64_t requested_n, bool exact)
{
    const kf_variant *v = &e->v;
    strbuf b = {0};
    strbuf prov = {0};
    provenance(&prov, e);
    sb_append(&b, "{\n  \"kernel\": \"reduce\",\n  \"description\": ");
    sb_json_string(&b, prov.s ? prov.s : "");
    sb_free(&prov);
    if (!exact)
        sb_printf(&b, ",\n  \"comment\": \"no entry for n = %lld: this variant was tuned for the nearest size, "
                      "n = %lld (log scale)\"",
                  (long long)requested_n, (long long)e->n);
    if (v->name[0]) {
        sb_append(&b, ",\n  \"name\": ");
        sb_json_string(&b, v->name);
    }
    char grid[64];
    kf_grid_format(&v->grid, grid, sizeof grid);
    sb_printf(&b,
              ",\n  \"dtype\": \"%s\",\n  \"op\": \"%s\",\n  \"algorithm\": \"%s\",\n  \"block_size\": %d,\n"
              "  \"elements_per_thread\": %d,\n  \"unroll\": \"%s\",\n  \"vector_width\": %d,\n  \"grid\": %s,\n"
              "  \"passes\": \"%s\",\n  \"layout\": \"%s\",\n  \"accumulator\": \"%s\",\n"
              "  \"warp_reduce\": \"%s\",\n  \"load\": \"%s\",\n  \"n\": [%lld]\n}\n",
              kf_dtype_names[v->dtype], kf_op_names[v->op], kf_algorithm_names[v->algorithm], v->block_size,
              v->elements_per_thread, kf_unroll_names[v->unroll], v->vector_width, grid, kf_passes_names[v->passes],
              kf_layout_names[v->layout], kf_accum_names[v->accumulator], kf_warp_reduce_names[v->warp_reduce],
              kf_load_names[v->load], (long long)requested_n);
    return sb_take(&b);
}

/* Text safe inside a C comment: no comment terminator, one line. */
static void sb_comment_text(strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (p[0] == '*' && p[1] == '/')
            sb_append(b, "* ");
        else if (*p == '\n' || *p == '\r' || *p == '\t')
            sb_append(b, " ");
        else if ((unsigned char)*p >= 32 && *p != 127)
            sb_appendn(b, p, 1);
    }
}

/* text as comment lines " * ...", wrapped at spaces before 96 columns. */
static void sb_comment_wrapped(strbuf *b, const char *text)
{
    strbuf clean = {0};
    sb_comment_text(&clean, text);
    const char *p = clean.s ? clean.s : "";
    while (*p) {
        size_t len = strlen(p), cut = len;
        if (len > 93) {
            cut = 93;
            while (cut > 20 && p[cut] != ' ')
                cut--;
            if (p[cut] != ' ')
                cut = 93;
        }
        sb_append(b, " * ");
        sb_appendn(b, p, cut);
        sb_append(b, "\n");
        p += cut;
        while (*p == ' ')
            p++;
    }
    sb_free(&clean);
}

/* A C string literal. */
static void sb_c_string(strbuf *b, const char *s)
{
    sb_append(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(b, "\\%c", *p);
        else if (*p < 32 || *p >= 127)
            sb_printf(b, "\\%03o", *p);
        else if (*p == '?' && p[1] == '?')
            sb_append(b, "?\\"); /* no trigraphs */
        else
            sb_appendn(b, (const char *)p, 1);
    }
    sb_append(b, "\"");
}

static void upper(char *dst, size_t len, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        dst[i] = (char)toupper((unsigned char)s[i]);
    dst[i] = '\0';
}

/* #define KFORGE_REDUCE_<AXIS>_NAME "value" and #define KFORGE_REDUCE_<AXIS>_<VALUE> 1 */
static void define_named(strbuf *b, const char *axis, const char *value)
{
    char A[64], V[64];
    upper(A, sizeof A, axis);
    upper(V, sizeof V, value);
    sb_printf(b, "#define KFORGE_REDUCE_%s_NAME \"%s\"\n#define KFORGE_REDUCE_%s_%s 1\n", A, value, A, V);
}

char *tunedb_header(const tunedb_entry *e, int64_t requested_n, bool exact)
{
    const kf_variant *v = &e->v;
    strbuf b = {0};
    char drv[32];
    fmt_driver(&e->dev, drv, sizeof drv);
    sb_append(&b, "/*\n * kforge tuned reduction parameters -- generated by `kforge best --header`; do not edit.\n *\n");
    strbuf prov = {0};
    provenance(&prov, e);
    sb_comment_wrapped(&b, prov.s ? prov.s : "");
    sb_free(&prov);
    if (!exact)
        sb_printf(&b, " *\n * Requested n = %lld: the database has no entry for that size; these are the parameters\n"
                      " * tuned for the nearest size (log scale), n = %lld.\n",
                  (long long)requested_n, (long long)e->n);
    sb_append(&b, " *\n * Variant: ");
    char label[256];
    kf_variant_label(v, label, sizeof label);
    sb_comment_text(&b, label);
    sb_append(&b, "\n */\n#ifndef KFORGE_REDUCE_TUNED_H\n#define KFORGE_REDUCE_TUNED_H\n\n");

    sb_printf(&b, "#define KFORGE_REDUCE_DTYPE %s\n", kf_dtype_ctype(v->dtype));
    define_named(&b, "dtype", kf_dtype_names[v->dtype]);
    define_named(&b, "op", kf_op_names[v->op]);
    define_named(&b, "algorithm", kf_algorithm_names[v->algorithm]);
    sb_printf(&b, "#define KFORGE_REDUCE_BLOCK_SIZE %d\n", v->block_size);
    sb_printf(&b, "#define KFORGE_REDUCE_ELEMENTS_PER_THREAD %d\n", v->elements_per_thread);
    sb_printf(&b, "#define KFORGE_REDUCE_VECTOR_WIDTH %d\n", v->vector_width);
    sb_printf(&b, "/* elements one block covers per pass: block_size x elements_per_thread x vector_width */\n"
                  "#define KFORGE_REDUCE_TILE %lld\n",
              (long long)v->block_size * v->elements_per_thread * v->vector_width);
    define_named(&b, "unroll", kf_unroll_names[v->unroll]);
    define_named(&b, "passes", kf_passes_names[v->passes]);
    define_named(&b, "layout", kf_layout_names[v->layout]);
    define_named(&b, "accumulator", kf_accum_names[v->accumulator]);
    define_named(&b, "warp_reduce", kf_warp_reduce_names[v->warp_reduce]);
    define_named(&b, "load", kf_load_names[v->load]);

    static const char *const kinds[KF_GRID_KIND_COUNT] = {"auto", "blocks", "blocks_per_sm", "waves"};
    char g[64];
    kf_grid_format(&v->grid, g, sizeof g);
    sb_append(&b, "/* grid: ");
    sb_comment_text(&b, g);
    sb_append(&b, " (auto: ceil(n / tile) blocks; blocks: fixed; blocks_per_sm: value x SMs;\n"
                  "   waves: value x resident blocks per SM x SMs) */\n");
    define_named(&b, "grid", kinds[v->grid.kind < KF_GRID_KIND_COUNT ? v->grid.kind : 0]);
    sb_printf(&b, "#define KFORGE_REDUCE_GRID_VALUE %lld\n", (long long)v->grid.value);
    sb_printf(&b, "/* blocks of the first launch and launches per reduction at the tuned n on the tuned GPU */\n"
                  "#define KFORGE_REDUCE_GRID_BLOCKS %lld\n#define KFORGE_REDUCE_LAUNCHES %d\n",
              (long long)e->blocks, e->launches);

    sb_append(&b, "\n/* what it was tuned for */\n#define KFORGE_REDUCE_TUNED_DEVICE ");
    sb_c_string(&b, e->dev.name);
    sb_printf(&b, "\n#define KFORGE_REDUCE_TUNED_CC %d\n", e->dev.cc_major * 10 + e->dev.cc_minor);
    sb_printf(&b, "#define KFORGE_REDUCE_TUNED_N %lldLL\n", (long long)e->n);
    sb_printf(&b, "#define KFORGE_REDUCE_TUNED_EXACT %d\n", exact ? 1 : 0);
    sb_printf(&b, "#define KFORGE_REDUCE_TUNED_MEDIAN_MS %.6g\n", e->median_ms);
    sb_printf(&b, "#define KFORGE_REDUCE_TUNED_GBPS %.1f\n", e->gbps);
    sb_append(&b, "\n#endif /* KFORGE_REDUCE_TUNED_H */\n");
    return sb_take(&b);
}
