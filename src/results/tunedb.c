/*
 * tunedb.c -- the tuning database (see tunedb.h).
 *
 * The files are small (one entry per key and size tuned), so every
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "family.h"
#include "key.h"
#include "param.h"
#include "pick.h"
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

/* Text (from the one codec, family.c) to a cJSON item. */
static cJSON *param_cjson(const kf_param *p, int64_t x)
{
    strbuf b = {0};
    param_json(&b, p, x);
    cJSON *j = cJSON_Parse(b.s ? b.s : "null");
    sb_free(&b);
    return j;
}

static cJSON *variant_cjson(const kf_variant *v)
{
    strbuf b = {0};
    variant_json(&b, v);
    cJSON *o = cJSON_Parse(b.s ? b.s : "{}");
    sb_free(&b);
    if (o && v->name[0])
        cJSON_AddStringToObject(o, "name", v->name);
    return o;
}

static cJSON *entry_json(const tunedb_entry *e)
{
    char buf[32];
    const kf_family *f = family_of(&e->v);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kernel", f->name);
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].key)
            cJSON_AddItemToObject(o, f->params[i].name, param_cjson(&f->params[i], e->v.p[i]));
    for (int d = 0; d < f->nsizes; d++)
        cJSON_AddNumberToObject(o, f->sizes[d].name, (double)e->shape.d[d]);
    cJSON_AddItemToObject(o, "variant", variant_cjson(&e->v));
    cJSON_AddNumberToObject(o, "median_ms", e->median_ms);
    cJSON_AddNumberToObject(o, "gbps", e->gbps);
    cJSON_AddNumberToObject(o, "pct_peak", e->pct_peak);
    if (e->gflops > 0)
        cJSON_AddNumberToObject(o, "gflops", e->gflops);
    cJSON_AddNumberToObject(o, "blocks", (double)e->blocks);
    cJSON_AddNumberToObject(o, "launches", e->launches);
    cJSON_AddBoolToObject(o, "deterministic", e->deterministic);
    if (e->has_acc)
        cJSON_AddNumberToObject(o, "acc_rel", e->acc_rel);
    cJSON *d = cJSON_AddObjectToObject(o, "device");
    cJSON_AddStringToObject(d, "name", e->dev.name);
    snprintf(buf, sizeof buf, "%d.%d", e->dev.cc_major, e->dev.cc_minor);
    cJSON_AddStringToObject(d, "cc", buf);
    cJSON_AddNumberToObject(d, "sms", e->dev.sms);
    cJSON_AddNumberToObject(d, "peak_gbps", round(e->dev.peak_gbps * 10) / 10);
    kf_driver_text(e->dev.driver_version, buf, sizeof buf);
    cJSON_AddStringToObject(d, "driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", e->dev.nvrtc_major, e->dev.nvrtc_minor);
    cJSON_AddStringToObject(d, "nvrtc", buf);
    cJSON_AddStringToObject(o, "kforge", e->kforge[0] ? e->kforge : KF_VERSION);
    cJSON_AddStringToObject(o, "date", e->date);
    cJSON_AddStringToObject(o, "how", e->how);
    if (e->source_hash[0])
        cJSON_AddStringToObject(o, "source_hash", e->source_hash);
    if (e->between)
        cJSON_AddBoolToObject(o, "between", true);
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

/* The variant object: every parameter of the family through the config
 * decoder; a parameter left out keeps its default. */
static int parse_variant(const pctx *c, const cJSON *o, int family, kf_variant *v)
{
    variant_defaults(v, family);
    if (!cJSON_IsObject(o))
        return bad(c, "variant", "expected an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (cJSON_IsString(nm))
        snprintf(v->name, sizeof v->name, "%s", nm->valuestring);
    const kf_family *f = kf_families[family];
    for (int i = 0; i < f->nparams; i++) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, f->params[i].name);
        char e2[256];
        if (j && config_param_value(&f->params[i], j, "variant", &v->p[i], e2, sizeof e2) != 0)
            return bad(c, "variant", e2);
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

/* The family of a stored entry ("kernel"; missing: reduce), or -1. */
static int entry_family(const cJSON *o)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel");
    return k ? (cJSON_IsString(k) ? family_find(k->valuestring) : -1) : family_find("reduce");
}

/* The shape of a stored entry; false if it lacks one. */
static bool entry_shape(const cJSON *o, const kf_family *f, kf_shape *s)
{
    memset(s, 0, sizeof *s);
    for (int d = 0; d < f->nsizes; d++) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, f->sizes[d].name);
        if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0))
            return false;
        s->d[d] = (int64_t)j->valuedouble;
    }
    return true;
}

static bool entry_matches(const cJSON *o, const kf_variant *v, const kf_shape *shape)
{
    int fam = entry_family(o);
    if (fam != v->family)
        return false;
    const kf_family *f = kf_families[fam];
    for (int i = 0; i < f->nparams; i++) {
        if (!f->params[i].key)
            continue;
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, f->params[i].name);
        int64_t x = f->params[i].def; /* an optional key missing: entries written before it existed */
        if (!j && !f->params[i].optional)
            return false;
        if ((j && config_param_value(&f->params[i], j, "entry", &x, NULL, 0) != 0) || x != v->p[i])
            return false;
    }
    kf_shape s;
    if (!entry_shape(o, f, &s))
        return false;
    return !shape || shape_eq(&s, shape);
}

/* Whether stored entry o is for the family, key axes (key.h) and
 * (when shape is not NULL) the shape of v, and (det >= 0) of that
 * determinism class. */
static bool entry_matches_class(const cJSON *o, const kf_variant *v, const kf_shape *shape, int det)
{
    if (det >= 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "deterministic")) != (det == 1))
        return false;
    return entry_matches(o, v, shape);
}

static int parse_entry(const pctx *c, const cJSON *o, tunedb_entry *e)
{
    memset(e, 0, sizeof *e);
    int fam = entry_family(o);
    if (fam < 0)
        return bad(c, "kernel", "not a known kernel family");
    if (parse_variant(c, cJSON_GetObjectItemCaseSensitive(o, "variant"), fam, &e->v) != 0)
        return -1;
    if (!entry_shape(o, kf_families[fam], &e->shape))
        return bad(c, kf_families[fam]->sizes[0].name, "missing or not a size");
    /* the variant is what the entry's key says it is (an entry found as
     * float32 sum must not serve an int32 max variant), and one that can run */
    const kf_family *f = kf_families[fam];
    for (int i = 0; i < f->nparams; i++) {
        if (!f->params[i].key)
            continue;
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, f->params[i].name);
        int64_t x = f->params[i].def;
        if (j && config_param_value(&f->params[i], j, "entry", &x, NULL, 0) != 0)
            return bad(c, f->params[i].name, "not a value of the family's parameter");
        if (x != e->v.p[i]) {
            strbuf want = {0}, got = {0};
            param_text(&want, &f->params[i], x);
            param_text(&got, &f->params[i], e->v.p[i]);
            char what[256];
            snprintf(what, sizeof what, "its %s is %s, the entry's key %s: a damaged entry", f->params[i].name,
                     got.s ? got.s : "?", want.s ? want.s : "?");
            sb_free(&want);
            sb_free(&got);
            return bad(c, "variant", what);
        }
    }
    char why[256];
    if (f->check && f->check(&e->v, NULL, why, sizeof why) != 0) {
        char what[320];
        snprintf(what, sizeof what, "a variant that cannot run: %s", why);
        return bad(c, "variant", what);
    }
    if (get_num(c, o, "median_ms", "median_ms", 0, 1e12, true, &e->median_ms) != 0 ||
        get_num(c, o, "gbps", "gbps", 0, 1e12, false, &e->gbps) != 0 ||
        get_num(c, o, "pct_peak", "pct_peak", 0, 1e6, false, &e->pct_peak) != 0 ||
        get_num(c, o, "gflops", "gflops", 0, 1e15, false, &e->gflops) != 0)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(o, "acc_rel")) {
        if (get_num(c, o, "acc_rel", "acc_rel", 0, 1e300, true, &e->acc_rel) != 0)
            return -1;
        e->has_acc = true;
    }
    double x = 0;
    if (get_num(c, o, "blocks", "blocks", 0, 1e15, false, &x) != 0)
        return -1;
    e->blocks = (int64_t)x;
    x = 0;
    if (get_num(c, o, "launches", "launches", 0, 1e6, false, &x) != 0)
        return -1;
    e->launches = (int)x;
    e->deterministic = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "deterministic"));
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
    get_str(o, "source_hash", e->source_hash, sizeof e->source_hash);
    e->between = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "between"));
    return 0;
}

bool tunedb_other_source(const tunedb_entry *e)
{
    const char *now = family_of(&e->v)->source_hash;
    return now && now[0] && strcmp(now, e->source_hash) != 0;
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
    char *text = kf_read_regular(path, TUNEDB_MAX_BYTES, &len, err, errlen);
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

/* Removes what a writer killed while it wrote path left beside it: the
 * temporary file PATH.tmp.PID of kf_write_file_atomic (a database of
 * thousands of entries leaves tens of MB).  Called with the writers' lock
 * held, so no writer that keeps to the lock is writing one, on this host or
 * on another sharing the directory over NFS (flock is cluster-wide there);
 * and, in case a writer did not take it, only where no process of this
 * host has that PID.  Nothing else is touched: the name is this file's, a
 * dot, "tmp", a dot and digits alone, and it is a regular file. */
static void remove_stale_tmp(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    size_t bl = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".tmp.", 5) != 0)
            continue;
        const char *digits = n + bl + 5;
        size_t nd = strspn(digits, "0123456789");
        if (nd == 0 || nd > 9 || digits[nd] != '\0')
            continue;
        long pid = strtol(digits, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[PATH_MAX + 256];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, n);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
            unlink(p);
    }
    closedir(d);
}

/* Takes the writers' lock of gpu's file in dir (creating dir); fills path,
 * and removes what a killed writer left beside it.  The lock's descriptor,
 * or -1 with a message. */
static int lock_file(const char *dir, const char *gpu, char *path, size_t len, char *err, size_t errlen)
{
    char lockpath[PATH_MAX + 8];
    if (file_path(dir, gpu, path, len) != 0) {
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
    remove_stale_tmp(path);
    return fd;
}

static void unlock_file(int fd)
{
    lock_fd(fd, LOCK_UN);
    close(fd);
}

/* Replaces path by root, atomically.  0, or -1 with a message. */
static int store(const char *path, const cJSON *root, char *err, size_t errlen)
{
    char *text = cJSON_Print(root);
    if (!text) {
        kf_err(err, errlen, "%s: out of memory", path);
        return -1;
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
    int rc = b.failed || kf_write_file_atomic(path, b.s, b.len, err, errlen) != 0 ? -1 : 0;
    if (b.failed)
        kf_err(err, errlen, "%s: out of memory", path);
    sb_free(&b);
    return rc;
}

int tunedb_update(const char *dir, const tunedb_entry *entries, int count, char *err, size_t errlen)
{
    if (count <= 0)
        return 0;
    char path[PATH_MAX];
    int fd = lock_file(dir, entries[0].dev.name, path, sizeof path, err, errlen);
    if (fd < 0)
        return -1;
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
        int pos = 0;
        cJSON *old = NULL;
        /* the fastest of each determinism class is kept, so that best
         * --deterministic still has an answer when a faster
         * non-deterministic variant exists */
        for (cJSON *it = list->child; it; it = it->next, pos++)
            if (entry_matches_class(it, &e->v, &e->shape, e->deterministic ? 1 : 0)) {
                old = it;
                break;
            }
        if (old) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(old, "median_ms");
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(old, "source_hash");
            bool other = e->source_hash[0] && !(cJSON_IsString(h) && strcmp(h->valuestring, e->source_hash) == 0);
            if (!other && cJSON_IsNumber(m) && m->valuedouble > 0 && !pick_faster(e->median_ms, m->valuedouble)) {
                /* the database already has one at least as fast.  The same
                 * measurement again (a resumed search takes it from its
                 * results file): its provenance now counts the whole search */
                const cJSON *how = cJSON_GetObjectItemCaseSensitive(old, "how");
                cJSON *v = variant_cjson(&e->v);
                bool same = m->valuedouble == e->median_ms && e->how[0] && cJSON_IsString(how) &&
                            strcmp(how->valuestring, e->how) != 0 &&
                            cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, "variant"), v, true);
                cJSON_Delete(v);
                /* a search at this size found nothing faster than what
                 * tune --between measured here: it is tuned now */
                if (!e->between && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(old, "between"))) {
                    cJSON_DeleteItemFromObjectCaseSensitive(old, "between");
                    if (!same) {
                        written++;
                        continue;
                    }
                }
                if (!same)
                    continue;
                cJSON_ReplaceItemInObjectCaseSensitive(old, "how", cJSON_CreateString(e->how));
                written++;
                continue;
            }
            cJSON_ReplaceItemInArray(list, pos, entry_json(e));
        } else {
            cJSON_AddItemToArray(list, entry_json(e));
        }
        written++;
        /* the other determinism class's entry of another source goes too:
         * best would otherwise still take it when it is faster */
        for (cJSON *it = list->child, *next; e->source_hash[0] && it; it = next) {
            next = it->next;
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(it, "source_hash");
            if (entry_matches_class(it, &e->v, &e->shape, e->deterministic ? 0 : 1) &&
                !(cJSON_IsString(h) && strcmp(h->valuestring, e->source_hash) == 0))
                cJSON_Delete(cJSON_DetachItemViaPointer(list, it));
        }
    }
    if (written > 0 && store(path, root, err, errlen) != 0)
        written = -1;
out:
    cJSON_Delete(root);
    unlock_file(fd);
    return written;
}

int tunedb_delete(const char *dir, const char *gpu, const kf_variant *key, const kf_shape *shape, int det,
                  char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;
    if (file_path(dir, gpu, path, sizeof path) != 0) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0; /* nothing to delete; do not create the directory */
    int fd = lock_file(dir, gpu, path, sizeof path, err, errlen);
    if (fd < 0)
        return -1;
    cJSON *root = NULL;
    int lr = load(path, &root, err, errlen);
    int removed = lr < 0 ? -1 : 0;
    if (lr == 0) {
        cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
        for (cJSON *it = list->child, *next; it; it = next) {
            next = it->next;
            if (entry_matches_class(it, key, shape, det)) {
                cJSON_Delete(cJSON_DetachItemViaPointer(list, it));
                removed++;
            }
        }
        if (removed > 0 && store(path, root, err, errlen) != 0)
            removed = -1;
    }
    cJSON_Delete(root);
    unlock_file(fd);
    return removed;
}

int tunedb_entries(const char *dir, const char *gpu, tunedb_entry **out, int *count, char *err, size_t errlen)
{
    *out = NULL;
    *count = 0;
    char path[PATH_MAX];
    if (file_path(dir, gpu, path, sizeof path) != 0) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    cJSON *root;
    int lr = load(path, &root, err, errlen);
    if (lr != 0)
        return lr < 0 ? -1 : 0;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
    int n = cJSON_GetArraySize(list), index = 0, rc = 0;
    *out = calloc((size_t)(n > 0 ? n : 1), sizeof **out);
    if (!*out) {
        kf_err(err, errlen, "out of memory");
        rc = -1;
    }
    for (const cJSON *it = list->child; it && rc == 0; it = it->next, index++) {
        if (entry_family(it) < 0)
            continue; /* a family this build does not know */
        pctx c = {path, index, err, errlen};
        if (parse_entry(&c, it, &(*out)[*count]) != 0)
            rc = -1;
        else
            (*count)++;
    }
    if (rc != 0) {
        free(*out);
        *out = NULL;
        *count = 0;
    }
    cJSON_Delete(root);
    return rc;
}

int tunedb_unknown_kernels(const char *dir, const char *gpu, kf_strset *names, int *counts, int maxn)
{
    char path[PATH_MAX], err[8];
    cJSON *root;
    if (file_path(dir, gpu, path, sizeof path) != 0 || load(path, &root, err, sizeof err) != 0)
        return 0;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
    int total = 0;
    for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kernel");
        if (entry_family(it) >= 0 || !cJSON_IsString(k))
            continue;
        total++;
        int i = names->n < maxn || kf_strset_find(names, k->valuestring) >= 0 ? kf_strset_add(names, k->valuestring, NULL)
                                                                               : -1;
        if (i >= 0 && i < maxn)
            counts[i]++;
    }
    cJSON_Delete(root);
    return total;
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

int tunedb_lookup(const char *dir, const char *gpu, const kf_variant *key, const kf_shape *shape,
                  const pick_policy *policy, tunedb_entry *out, bool *exact, char *err, size_t errlen)
{
    pick_policy def = {PICK_PREFER_DET, 0};
    const pick_policy *pol = policy ? policy : &def;
    char path[PATH_MAX];
    if (file_path(dir, gpu, path, sizeof path) != 0) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    cJSON *root;
    int lr = load(path, &root, err, errlen);
    if (lr != 0)
        return lr;
    const kf_family *f = family_of(key);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "entries");
    bool picked = false;
    int index = 0, n = 0;
    double pick_size = 0, pick_dist = INFINITY, pick_ms = INFINITY;
    /* the nearest shape on a log scale among the entries the policy allows
     * (family.h: shape_nearer, as the exported headers dispatch); then the
     * entry of that shape that serves it (pick_serve) */
    tunedb_entry *at = malloc(sizeof *at * 8);
    int cap = 8;
    if (!at) {
        cJSON_Delete(root);
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    for (const cJSON *it = list->child; it; it = it->next, index++) {
        kf_shape s;
        tunedb_entry e;
        pctx c = {path, index, err, errlen};
        if (!entry_matches(it, key, NULL) || !entry_shape(it, f, &s))
            continue;
        if (parse_entry(&c, it, &e) != 0) {
            free(at);
            cJSON_Delete(root);
            return -1;
        }
        pick_cand pc = pick_cand_of_entry(&e);
        if (!pick_allowed(&pc, pol))
            continue;
        double dist, size;
        if (!shape_log_distance(f, &s, shape, &dist, &size))
            continue;
        if (picked && shape_eq(&s, &at[0].shape)) {
            if (n == cap) {
                tunedb_entry *m = realloc(at, sizeof *at * (size_t)(cap *= 2));
                if (!m) {
                    free(at);
                    cJSON_Delete(root);
                    kf_err(err, errlen, "out of memory");
                    return -1;
                }
                at = m;
            }
            at[n++] = e;
        } else if (shape_nearer(dist, size, e.median_ms, pick_dist, pick_size, pick_ms)) {
            pick_ms = e.median_ms;
            at[0] = e;
            n = 1;
            picked = true;
            pick_size = size;
            pick_dist = dist;
        }
    }
    if (picked) {
        pick_cand pc[n];
        for (int i = 0; i < n; i++)
            pc[i] = pick_cand_of_entry(&at[i]);
        int k = pick_serve(pc, n, pol);
        *out = at[k < 0 ? 0 : k];
        *exact = shape_eq(&out->shape, shape);
    }
    free(at);
    cJSON_Delete(root);
    return picked ? 0 : 1;
}

// ---------------------------------------------------------------------------
// output

static void fmt_driver(const kf_device *d, char *buf, size_t len)
{
    kf_driver_text(d->driver_version, buf, len);
}

/* One line of where an entry came from (no newline). */
static void provenance(strbuf *b, const tunedb_entry *e)
{
    char drv[32], st[128];
    fmt_driver(&e->dev, drv, sizeof drv);
    shape_text(family_of(&e->v), &e->shape, st, sizeof st);
    strbuf key = {0};
    key_text(&key, &e->v, " ");
    char fl[48] = "";
    if (e->gflops > 0)
        snprintf(fl, sizeof fl, ", %.1f GFLOP/s", e->gflops);
    sb_printf(b, "Best known %s variant%s%s at %s on %s (cc %d.%d, driver %s, NVRTC %d.%d): %.4g ms, "
                 "%.1f GB/s (%.1f%% of peak)%s, %s. Measured by kforge %s on %s",
              family_of(&e->v)->name, key.s ? " for" : "", key.s ? key.s : "", st, e->dev.name, e->dev.cc_major, e->dev.cc_minor, drv, e->dev.nvrtc_major, e->dev.nvrtc_minor,
              e->median_ms, e->gbps, e->pct_peak, fl, e->deterministic ? "deterministic" : "not run-to-run deterministic",
              e->kforge[0] ? e->kforge : "?", e->date[0] ? e->date : "?");
    if (e->how[0])
        sb_printf(b, "; obtained by: %s", e->how);
    sb_append(b, ".");
    if (e->between)
        sb_printf(b, " Measured at %s between the tuned sizes (tune --between): only the leaders of its "
                     "neighbouring tuned sizes ran there.", st);
    sb_free(&key);
}

char *tunedb_variant_json(const kf_variant *v)
{
    strbuf b = {0};
    variant_json(&b, v);
    return sb_take(&b);
}

/* Written by hand rather than with cJSON_Print: one key per line, in the
 * order of a config file, indented like the configs in configs/. */
char *tunedb_config_json(const tunedb_entry *e, const kf_shape *requested, bool exact, const char *dir, bool *outside,
                         char *err, size_t errlen)
{
    const kf_variant *v = &e->v;
    const kf_family *f = family_of(v);
    strbuf b = {0};
    strbuf prov = {0};
    bool out_ = false;
    if (f->config_members) {
        char *m = f->config_members(f, dir, &out_, err, errlen);
        if (!m)
            return NULL;
        sb_append(&b, "{\n  ");
        sb_append(&b, m);
        free(m);
    } else {
        sb_append(&b, "{\n  \"kernel\": ");
        sb_json_string(&b, f->name);
    }
    if (outside)
        *outside = out_;
    provenance(&prov, e);
    sb_append(&b, ",\n  \"description\": ");
    sb_json_string(&b, prov.s ? prov.s : "");
    sb_free(&prov);
    if (!exact) {
        char want[128], got[128];
        shape_text(f, requested, want, sizeof want);
        shape_text(f, &e->shape, got, sizeof got);
        sb_printf(&b, ",\n  \"comment\": \"no entry for %s: this variant was tuned for the nearest size, %s "
                      "(log scale)\"", want, got);
    }
    if (v->name[0]) {
        sb_append(&b, ",\n  \"name\": ");
        sb_json_string(&b, v->name);
    }
    for (int i = 0; i < f->nparams; i++) {
        sb_printf(&b, ",\n  \"%s\": ", f->params[i].name);
        param_json(&b, &f->params[i], v->p[i]);
    }
    for (int d = 0; d < f->nsizes; d++)
        if (requested->d[d] > 0 || !f->sizes[d].optional)
            sb_printf(&b, ",\n  \"%s\": [%lld]", f->sizes[d].name, (long long)requested->d[d]);
    sb_append(&b, "\n}\n");
    char *text = b.failed ? (sb_free(&b), NULL) : sb_take(&b);
    if (!text)
        kf_err(err, errlen, "out of memory");
    return text;
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
        dst[i] = isalnum((unsigned char)s[i]) ? (char)toupper((unsigned char)s[i]) : '_';
    dst[i] = '\0';
}

/* #define <P>_<AXIS>_NAME "value" and #define <P>_<AXIS>_<VALUE> 1 */
static void define_named(strbuf *b, const char *prefix, const char *axis, const char *value)
{
    char A[64], V[64];
    upper(A, sizeof A, axis);
    upper(V, sizeof V, value);
    sb_printf(b, "#define %s_%s_NAME \"%s\"\n#define %s_%s_%s 1\n", prefix, A, value, prefix, A, V);
}

char *tunedb_header(const tunedb_entry *e, const kf_shape *requested, bool exact)
{
    const kf_variant *v = &e->v;
    const kf_family *f = family_of(v);
    char P[64], FAM[48];
    upper(FAM, sizeof FAM, f->name);
    snprintf(P, sizeof P, "KFORGE_%s", FAM);
    strbuf b = {0};
    sb_printf(&b, "/*\n * kforge tuned %s parameters -- generated by `kforge best --header`; do not edit.\n *\n",
              f->name);
    strbuf prov = {0};
    provenance(&prov, e);
    sb_comment_wrapped(&b, prov.s ? prov.s : "");
    sb_free(&prov);
    if (!exact) {
        char want[128], got[128];
        shape_text(f, requested, want, sizeof want);
        shape_text(f, &e->shape, got, sizeof got);
        sb_printf(&b, " *\n * Requested %s: the database has no entry for that size; these are the parameters\n"
                      " * %s for the nearest size (log scale), %s%s.\n", want,
                  e->between ? "measured" : "tuned", got,
                  e->between ? ", a size between tuned ones where tune --between measured their leaders" : "");
    }
    sb_append(&b, " *\n * Variant: ");
    char label[256];
    f->label(v, label, sizeof label);
    sb_comment_text(&b, label);
    sb_printf(&b, "\n */\n#ifndef %s_TUNED_H\n#define %s_TUNED_H\n\n", P, P);

    if (key_dtype(v) >= 0)
        sb_printf(&b, "#define %s_DTYPE %s\n", P, kf_dtype_ctype((kf_dtype)key_dtype(v)));
    static const char *const kinds[KF_GRID_KIND_COUNT] = {"auto", "blocks", "blocks_per_sm", "waves"};
    for (int i = 0; i < f->nparams; i++) {
        const kf_param *p = &f->params[i];
        char A[64];
        upper(A, sizeof A, p->name);
        switch (p->kind) {
        case KF_PK_ENUM:
            define_named(&b, P, p->name, p->names[v->p[i]]);
            break;
        case KF_PK_INT:
            sb_printf(&b, "#define %s_%s %lld\n", P, A, (long long)v->p[i]);
            break;
        case KF_PK_GRID: {
            kf_grid g = kf_grid_decode(v->p[i]);
            strbuf gt = {0};
            param_json(&gt, p, v->p[i]);
            sb_append(&b, "/* grid: ");
            sb_comment_text(&b, gt.s ? gt.s : "");
            sb_free(&gt);
            sb_append(&b, " (auto: one tile per block; blocks: fixed; blocks_per_sm: value x SMs;\n"
                          "   waves: value x resident blocks per SM x SMs) */\n");
            define_named(&b, P, p->name, kinds[g.kind < KF_GRID_KIND_COUNT ? g.kind : 0]);
            sb_printf(&b, "#define %s_%s_VALUE %lld\n", P, A, (long long)g.value);
            break;
        }
        }
    }
    for (int k = 0; k < f->nderived; k++) {
        char A[64];
        upper(A, sizeof A, f->derived[k]);
        sb_printf(&b, "#define %s_%s %lld\n", P, A, (long long)f->derived_value(v, k));
    }
    sb_printf(&b, "/* blocks of the first launch and launches per run at the tuned size on the tuned GPU */\n"
                  "#define %s_TUNED_BLOCKS %lld\n#define %s_TUNED_LAUNCHES %d\n#define %s_DETERMINISTIC %d\n",
              P, (long long)e->blocks, P, e->launches, P, e->deterministic ? 1 : 0);

    sb_printf(&b, "\n/* what it was tuned for */\n#define %s_TUNED_DEVICE ", P);
    sb_c_string(&b, e->dev.name);
    sb_printf(&b, "\n#define %s_TUNED_CC %d\n", P, e->dev.cc_major * 10 + e->dev.cc_minor);
    for (int d = 0; d < f->nsizes; d++) {
        char A[64];
        upper(A, sizeof A, f->sizes[d].name);
        sb_printf(&b, "#define %s_TUNED_%s %lldLL\n", P, A, (long long)e->shape.d[d]);
    }
    sb_printf(&b, "#define %s_TUNED_EXACT %d\n", P, exact ? 1 : 0);
    sb_printf(&b, "#define %s_TUNED_MEDIAN_MS %.6g\n", P, e->median_ms);
    sb_printf(&b, "#define %s_TUNED_GBPS %.1f\n", P, e->gbps);
    sb_printf(&b, "\n#endif /* %s_TUNED_H */\n", P);
    return sb_take(&b);
}
