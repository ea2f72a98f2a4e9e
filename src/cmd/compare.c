/*
 * compare.c -- `kforge compare OLD.jsonl NEW.jsonl`: two results files side
 * by side, as nvbench_compare does for nvbench's JSON.
 *
 *   kforge compare before.jsonl after.jsonl
 *   kforge compare before.jsonl after.jsonl --fail-above 5% --format md
 *
 * Cases are matched by their identity (results_key_of: family, name, every
 * parameter, the shape, the GPU model and the bench settings; --any-device
 * leaves the GPU out).  A case recorded more than once in a file counts by
 * its latest line, as resume does.  For each case in both files it prints
 * the old and new median time, their ratio and whether the difference is
 * significant given both runs' noise (stats_significant: Welch's t-test on
 * the recorded mean, standard deviation and repetitions, and a change larger
 * than either run's spread).  With --fail-above PCT it exits 1 when a case
 * got significantly slower by more than PCT percent, or failed where it
 * used to pass: a check for CI.
 *
 * --match KEYS pairs cases on those keys alone (kforge compare a.jsonl
 * b.jsonl --match n: one variant against another, size by size): cases
 * identical in every respect pair first, then a case pairs with the one case
 * of the other file that has the same values of KEYS; where several have
 * them, none of those pairs and compare says so (ambiguous).  Each pair shows
 * what differs between its two sides ("block_size 256 vs 512").  When
 * nothing pairs, compare says which keys differ between the files and what
 * --match would pair them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_fields.h"
#include "cli.h"
#include "cmd.h"
#include "family.h"
#include "key.h"
#include "results.h"
#include "stats.h"
#include "util.h"

static const char *const compare_help =
    "usage: kforge compare OLD.jsonl NEW.jsonl [OPTIONS]\n"
    "\n"
    "Matches the cases of two results files (kforge run or tune) by identity: the kernel, name,\n"
    "every parameter, the size, the GPU model and the bench settings; a case recorded more than\n"
    "once counts by its latest line.  For each case in both files it prints the old and new median\n"
    "time, the ratio new/old, and whether the difference is significant given both runs' noise:\n"
    "Welch's t-test on their mean, standard deviation and repetitions (p < 0.01), and a change\n"
    "larger than either run's standard deviation.  A summary goes to stderr.\n"
    "\n"
    "With --match KEYS, cases pair when they agree on KEYS alone: one variant against another\n"
    "(--match n), two tuned configs size by size (--match n,dtype), or two GPUs (--match name,n).\n"
    "Cases identical in every respect pair first; then a case pairs with the one case of the other\n"
    "file that has its values of KEYS; where several cases have them, none of those pairs and\n"
    "compare says so (ambiguous: add a key).  The differs column shows what differs between the\n"
    "two sides of a pair (\"block_size 256 vs 512\").  When nothing pairs, compare names the keys\n"
    "that differ between the files and the --match that would pair them.\n"
    "\n"
    "options:\n"
    "  --kernel CONFIG     the config of a custom kernel whose results these are (its family is\n"
    "                      made from the config; repeat for several)\n"    "  --fail-above PCT    exit 1 if a case got significantly slower by more than PCT percent\n"
    "                      (5%, 5 or 0.5%), or fails now where it passed before\n"
    "  --any-device        match cases measured on different GPUs (the GPU is left out of the identity)\n"
    "  --match KEYS        pair cases on these keys only (comma-separated): a size (n, rows, cols,\n"
    "                      row_stride), a parameter (dtype, op, block_size, ...: kforge axes FAMILY),\n"
    "                      kernel, name, gpu or a bench setting (bench.seed, bench.max_reps, ...)\n"
    "  --all               also list the cases that did not pair (only in one file, or ambiguous),\n"
    "                      also when none paired\n"
    "  --format FMT        table (default; coloured on a terminal), md, csv, jsonl or json\n"
    "  --no-header         with --format csv: no header line (to append to a file in a loop)\n"
    "\n"
    "exit status: 0 no regression (or no --fail-above); 1 a regression beyond --fail-above; 2 usage\n"
    "error, a file that cannot be read, or no case in common; 4 the output could not be written (a\n"
    "full disk, a closed pipe).\n"
    "\n"
    "examples:\n"
    "  kforge run configs/fast.json --results before.jsonl      # then change something\n"
    "  kforge run configs/fast.json --results after.jsonl\n"
    "  kforge compare before.jsonl after.jsonl --fail-above 5%\n"
    "  kforge compare bs256.jsonl bs512.jsonl --match n        # one variant against another\n"
    "  kforge compare tuned-a.jsonl tuned-b.jsonl --match n,dtype --format csv --no-header >> all.csv\n";

#define ALPHA 0.01
#define KEY_MAX 2048

// ---------------------------------------------------------------------------
// the cases of a file, latest line per identity, in order of first appearance

typedef struct {
    kf_result *r;           /* r[i]'s identity is keys.keys[i] */
    int n, cap;
    kf_strset keys;
    bool any_device;
    bool oom;
} caseset;

static void case_key(const caseset *s, const kf_result *r, char *key, size_t len)
{
    if (!s->any_device) {
        results_key_of(r, key, len);
        return;
    }
    kf_result x = *r;
    x.device_name[0] = '\0';
    results_key_of(&x, key, len);
}

static int cs_add(const kf_result *r, void *ctx)
{
    caseset *s = ctx;
    char key[KEY_MAX];
    case_key(s, r, key, sizeof key);
    int i = kf_strset_find(&s->keys, key);
    if (i >= 0) {           /* measured again: the latest line counts */
        s->r[i] = *r;
        return 0;
    }
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 256;
        kf_result *nr = realloc(s->r, sizeof *nr * (size_t)nc);
        if (!nr) {
            s->oom = true;
            return 1;
        }
        s->r = nr;
        s->cap = nc;
    }
    if (kf_strset_add(&s->keys, key, NULL) != s->n) {
        s->oom = true;
        return 1;
    }
    s->r[s->n++] = *r;
    return 0;
}

static void cs_free(caseset *s)
{
    kf_strset_free(&s->keys);
    free(s->r);
}

/* Reads path into s.  0, or -1 after a message. */
static int cs_load(caseset *s, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "kforge compare: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char err[1024];
    int skipped = 0;
    if (results_read(path, cs_add, s, &skipped, err, sizeof err) != 0) {
        fprintf(stderr, "kforge compare: %s\n", err);
        return -1;
    }
    if (s->oom) {
        fprintf(stderr, "kforge compare: %s: out of memory\n", path);
        return -1;
    }
    int unknown = note_unknown_kernel("compare", path, skipped, ", skipped");
    if (skipped > unknown)
        fprintf(stderr, "kforge compare: %s: %d line%s that are not results skipped\n", path, skipped - unknown,
                skipped - unknown == 1 ? "" : "s");
    return 0;
}

// ---------------------------------------------------------------------------
// keys: what --match pairs on, and what differs between two cases

/* The bench settings that are part of a case's identity (bench_fields.h's
 * ident), as compare names them: "bench.warmup", ... */
#define BENCH_KEY_MAX 48
static char bench_keys[BENCH_FIELDS_MAX][BENCH_KEY_MAX];
static const bench_field *bench_of[BENCH_FIELDS_MAX];
static int nbench = -1;

static void bench_keys_init(void)
{
    if (nbench >= 0)
        return;
    nbench = 0;
    for (int i = 0; i < bench_nfields && nbench < BENCH_FIELDS_MAX; i++)
        if (bench_fields[i].ident) {
            snprintf(bench_keys[nbench], BENCH_KEY_MAX, "bench.%s", bench_fields[i].name);
            bench_of[nbench++] = &bench_fields[i];
        }
}

/* The bench setting a key names, or NULL. */
static const bench_field *bench_key(const char *key)
{
    bench_keys_init();
    for (int k = 0; k < nbench; k++)
        if (strcmp(key, bench_keys[k]) == 0)
            return bench_of[k];
    return NULL;
}

/* The name as written in the results file: the label when the variant had none. */
static void name_of(const kf_result *r, char *buf, size_t len)
{
    if (r->v.name[0])
        snprintf(buf, len, "%s", r->v.name);
    else
        family_of(&r->v)->label(&r->v, buf, len);
}

/* Whether the name was given in the config rather than made from the label. */
static bool named(const kf_result *r)
{
    char label[256];
    family_of(&r->v)->label(&r->v, label, sizeof label);
    return r->v.name[0] && strcmp(r->v.name, label) != 0;
}

/* The value of key in r, as text (txt) and as JSON (json); either may be
 * NULL.  false when r has no such key (a parameter of another family). */
static bool key_value(const kf_result *r, const char *key, strbuf *txt, strbuf *json)
{
    const kf_family *f = family_of(&r->v);
    char buf[256];
    const char *str = NULL;
    if (strcmp(key, "kernel") == 0) {
        str = f->name;
    } else if (strcmp(key, "name") == 0) {
        name_of(r, buf, sizeof buf);
        str = buf;
    } else if (strcmp(key, "gpu") == 0) {
        str = r->device_name;
    }
    if (str) {
        if (txt)
            sb_append(txt, str);
        if (json)
            sb_json_string(json, str);
        return true;
    }
    const bench_field *bf = bench_key(key);
    if (bf) {
        strbuf t = {0};
        bench_field_text(&t, bf, &r->bench);
        if (txt)
            sb_append(txt, t.s ? t.s : "");
        if (json)
            sb_append(json, t.s ? t.s : "");
        sb_free(&t);
        return true;
    }
    int i = param_find(f->params, f->nparams, key);
    if (i >= 0) {
        if (txt)
            param_text(txt, &f->params[i], r->v.p[i]);
        if (json)
            param_json(json, &f->params[i], r->v.p[i]);
        return true;
    }
    i = param_find(f->sizes, f->nsizes, key);
    if (i >= 0) {
        if (txt)
            sb_printf(txt, "%lld", (long long)r->shape.d[i]);
        if (json)
            sb_printf(json, "%lld", (long long)r->shape.d[i]);
        return true;
    }
    return false;
}

/* Whether key names something --match can pair on. */
static bool key_known(const char *key)
{
    if (strcmp(key, "kernel") == 0 || strcmp(key, "name") == 0 || strcmp(key, "gpu") == 0)
        return true;
    if (bench_key(key))
        return true;
    for (int i = 0; i < kf_nfamilies; i++)
        if (param_find(kf_families[i]->params, kf_families[i]->nparams, key) >= 0 ||
            param_find(kf_families[i]->sizes, kf_families[i]->nsizes, key) >= 0)
            return true;
    return false;
}

/* Every key, in the order compare names them: kernel, each family's
 * parameters then sizes (a name once), name, gpu, the bench settings.
 * fams[i]: whether family i is in play.  Returns the count. */
#define MAX_KEYS 128
static int all_keys(const bool *fams, const char **keys)
{
    bench_keys_init();
    int n = 0;
    keys[n++] = "kernel";
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < kf_nfamilies; i++) {
            if (!fams[i])
                continue;
            const kf_family *f = kf_families[i];
            const kf_param *t = pass ? f->sizes : f->params;
            int c = pass ? f->nsizes : f->nparams;
            for (int j = 0; j < c && n < MAX_KEYS - 2 - nbench; j++) {
                int k = 0;
                while (k < n && strcmp(keys[k], t[j].name) != 0)
                    k++;
                if (k == n)
                    keys[n++] = t[j].name;
            }
        }
    keys[n++] = "name";
    keys[n++] = "gpu";
    for (int k = 0; k < nbench; k++)
        keys[n++] = bench_keys[k];
    return n;
}

/* "block_size 256 vs 512; n 1024 vs 4096": the keys whose values differ
 * between a and b (the name only when one of them was given one), malloc'd
 * ("" when none). */
static char *differs_text(const kf_result *a, const kf_result *b)
{
    bool fams[64] = {false};
    fams[a->v.family] = fams[b->v.family] = true;
    const char *keys[MAX_KEYS];
    int nk = all_keys(fams, keys);
    strbuf out = {0};
    sb_append(&out, "");
    for (int k = 0; k < nk; k++) {
        if (strcmp(keys[k], "name") == 0 && !named(a) && !named(b))
            continue;
        strbuf x = {0}, y = {0};
        bool hx = key_value(a, keys[k], &x, NULL), hy = key_value(b, keys[k], &y, NULL);
        const char *sx = hx ? (x.s ? x.s : "") : "-", *sy = hy ? (y.s ? y.s : "") : "-";
        if (hx != hy || strcmp(sx, sy) != 0)
            sb_printf(&out, "%s%s %s vs %s", out.len ? "; " : "", keys[k], sx, sy);
        sb_free(&x);
        sb_free(&y);
    }
    return sb_take(&out);
}

/* The same as JSON: [{"key": "block_size", "old": 256, "new": 512}, ...]. */
static void differs_json(strbuf *b, const kf_result *o, const kf_result *n)
{
    bool fams[64] = {false};
    fams[o->v.family] = fams[n->v.family] = true;
    const char *keys[MAX_KEYS];
    int nk = all_keys(fams, keys);
    int count = 0;
    sb_append(b, "[");
    for (int k = 0; k < nk; k++) {
        if (strcmp(keys[k], "name") == 0 && !named(o) && !named(n))
            continue;
        strbuf x = {0}, y = {0}, jx = {0}, jy = {0};
        bool hx = key_value(o, keys[k], &x, &jx), hy = key_value(n, keys[k], &y, &jy);
        if (hx != hy || strcmp(x.s ? x.s : "", y.s ? y.s : "") != 0) {
            sb_append(b, count++ ? ", {\"key\": " : "{\"key\": ");
            sb_json_string(b, keys[k]);
            sb_printf(b, ", \"old\": %s, \"new\": %s}", hx ? (jx.s ? jx.s : "\"\"") : "null",
                      hy ? (jy.s ? jy.s : "\"\"") : "null");
        }
        sb_free(&x);
        sb_free(&y);
        sb_free(&jx);
        sb_free(&jy);
    }
    sb_append(b, "]");
}

/* "n=1048576,dtype=float32": the values of the --match keys ("-" where a
 * case has no such key). */
static char *match_key(const kf_result *r, char *const *keys, int nkeys)
{
    strbuf b = {0};
    sb_append(&b, "");
    for (int k = 0; k < nkeys; k++) {
        sb_printf(&b, "%s%s=", k ? "," : "", keys[k]);
        if (!key_value(r, keys[k], &b, NULL))
            sb_append(&b, "-");
    }
    return sb_take(&b);
}

// ---------------------------------------------------------------------------
// rows
typedef enum {
    V_SAME, V_FASTER, V_SLOWER, V_FAILS, V_FIXED, V_BOTH_FAIL, V_ONLY_OLD, V_ONLY_NEW, V_AMBIGUOUS, V_COUNT
} verdict;
static const char *const verdict_names[] = {"same",       "faster",   "slower",   "fails now", "fixed",
                                            "fails both", "only old", "only new", "ambiguous"};

typedef struct {
    const kf_result *o, *n;     /* either may be NULL (--all) */
    double ratio;               /* new / old median; NaN when not both ok */
    double p;                   /* Welch's p-value; NaN when no test */
    verdict v;
    bool regression;            /* counts against --fail-above */
    char *differs;              /* what differs between o and n ("" when nothing or not both) */
} row;

static verdict judge(row *w, double fail_above)
{
    const kf_result *o = w->o, *n = w->n;
    w->ratio = NAN;
    w->p = NAN;
    if (!n)
        return V_ONLY_OLD;
    if (!o)
        return V_ONLY_NEW;
    bool ok_o = o->status == KF_ST_OK && o->stats.median_ms > 0, ok_n = n->status == KF_ST_OK && n->stats.median_ms > 0;
    if (!ok_o && !ok_n)
        return V_BOTH_FAIL;
    if (!ok_n) {
        w->regression = fail_above >= 0;
        return V_FAILS;
    }
    if (!ok_o)
        return V_FIXED;
    w->ratio = n->stats.median_ms / o->stats.median_ms;
    if (!stats_significant(&o->stats, &n->stats, ALPHA, &w->p))
        return V_SAME;
    if (w->ratio > 1) {
        w->regression = fail_above >= 0 && (w->ratio - 1) * 100 > fail_above;
        return V_SLOWER;
    }
    return w->ratio < 1 ? V_FASTER : V_SAME;
}

static void fmt_ms(char *buf, size_t len, const kf_result *r)
{
    if (!r) {
        snprintf(buf, len, "-");
        return;
    }
    if (r->status != KF_ST_OK || !(r->stats.median_ms > 0)) {
        snprintf(buf, len, "%s", kf_status_names[r->status]);
        return;
    }
    kf_fmt_ms(buf, len, r->stats.median_ms, false);
}

// ---------------------------------------------------------------------------
// output

enum { K_NAME, K_DTYPE, K_OP, K_SIZE, K_OLD, K_NEW, K_RATIO, K_CHANGE, K_P, K_VERDICT, K_DIFFERS, K_COLS };
static const char *const titles[K_COLS] = {"name", "dtype", "op",     "size", "old",    "new",
                                           "ratio", "change", "p",    "verdict", "differs"};
#define CELL 160

/* The cells of a row but differs (rows[i].differs, of any length). */
static void cells_of(const row *w, char c[K_COLS][CELL])
{
    const kf_result *r = w->n ? w->n : w->o;
    const kf_family *f = family_of(&r->v);
    name_of(r, c[K_NAME], CELL);
    key_param_text(&r->v, "dtype", c[K_DTYPE], CELL); /* "" for a family without one */
    key_param_text(&r->v, "op", c[K_OP], CELL);
    shape_short(f, &r->shape, c[K_SIZE], CELL);
    fmt_ms(c[K_OLD], CELL, w->o);
    fmt_ms(c[K_NEW], CELL, w->n);
    if (isfinite(w->ratio)) {
        snprintf(c[K_RATIO], CELL, "%.3f", w->ratio);
        snprintf(c[K_CHANGE], CELL, "%+.1f%%", (w->ratio - 1) * 100);
    } else {
        snprintf(c[K_RATIO], CELL, "-");
        snprintf(c[K_CHANGE], CELL, "-");
    }
    if (isfinite(w->p))
        snprintf(c[K_P], CELL, w->p < 1e-4 ? "<1e-4" : "%.4f", w->p);
    else
        snprintf(c[K_P], CELL, "-");
    snprintf(c[K_VERDICT], CELL, "%s%s", verdict_names[w->v], w->regression ? " (!)" : "");
    c[K_DIFFERS][0] = '\0';
}

static const char *verdict_color(verdict v)
{
    switch (v) {
    case V_FASTER: case V_FIXED: return "\033[32m";
    case V_SLOWER: case V_FAILS: return "\033[31m";
    case V_BOTH_FAIL: case V_AMBIGUOUS: return "\033[33m";
    default: return NULL;
    }
}

static int width_of(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}

/* The differs column is shown when some pair has a difference. */
static void print_table(const row *rows, int n, bool md, bool color)
{
    char (*c)[K_COLS][CELL] = calloc(n ? (size_t)n : 1, sizeof *c);
    if (!c)
        return;
    int ncols = K_DIFFERS;
    for (int i = 0; i < n; i++)
        if (rows[i].differs && rows[i].differs[0])
            ncols = K_COLS;
#define CELL_OF(i, k) ((k) == K_DIFFERS ? (rows[i].differs && rows[i].differs[0] ? rows[i].differs : "-") : c[i][k])
    int width[K_COLS];
    for (int k = 0; k < K_COLS; k++)
        width[k] = width_of(titles[k]);
    for (int i = 0; i < n; i++) {
        cells_of(&rows[i], c[i]);
        for (int k = 0; k < ncols; k++)
            if (width_of(CELL_OF(i, k)) > width[k])
                width[k] = width_of(CELL_OF(i, k));
    }
    bool right[K_COLS] = {false};
    right[K_SIZE] = right[K_OLD] = right[K_NEW] = right[K_RATIO] = right[K_CHANGE] = right[K_P] = true;
    if (md) {
        printf("|");
        for (int k = 0; k < ncols; k++)
            printf(" %s |", titles[k]);
        printf("\n|");
        for (int k = 0; k < ncols; k++)
            printf("%s", right[k] ? "---:|" : "---|");
        printf("\n");
        for (int i = 0; i < n; i++) {
            printf("|");
            for (int k = 0; k < ncols; k++)
                printf(" %s |", CELL_OF(i, k));
            printf("\n");
        }
    } else {
        for (int k = 0; k < ncols; k++) {
            if (k)
                printf("  ");
            int fill = width[k] - width_of(titles[k]);
            if (right[k])
                printf("%*s%s", fill, "", titles[k]);
            else
                printf("%s%*s", titles[k], k == ncols - 1 ? 0 : fill, "");
        }
        printf("\n");
        int total = 0;
        for (int k = 0; k < ncols; k++)
            total += width[k] + (k ? 2 : 0);
        for (int i = 0; i < total; i++)
            putchar('-');
        printf("\n");
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < ncols; k++) {
                if (k)
                    printf("  ");
                const char *cell = CELL_OF(i, k);
                int fill = width[k] - width_of(cell);
                const char *col = k == K_VERDICT && color ? verdict_color(rows[i].v) : NULL;
                if (right[k])
                    printf("%*s%s", fill, "", cell);
                else
                    printf("%s%s%s%*s", col ? col : "", cell, col ? "\033[0m" : "", k == ncols - 1 ? 0 : fill, "");
            }
            printf("\n");
        }
    }
#undef CELL_OF
    free(c);
}

static void json_row(strbuf *b, const row *w)
{
    const kf_result *r = w->n ? w->n : w->o;
    const kf_family *f = family_of(&r->v);
    char label[256], name[256];
    f->label(&r->v, label, sizeof label);
    name_of(r, name, sizeof name);
    sb_append(b, "{\"name\": ");
    sb_json_string(b, name);
    sb_append(b, ", \"label\": ");
    sb_json_string(b, label);
    char dt[KF_NAME_MAX], op[KF_NAME_MAX];
    key_param_text(&r->v, "dtype", dt, sizeof dt);
    key_param_text(&r->v, "op", op, sizeof op);
    sb_printf(b, ", \"kernel\": \"%s\", \"dtype\": \"%s\", \"op\": \"%s\", \"size\": ", f->name, dt, op);
    shape_json(b, f, &r->shape);
    const kf_result *side[2] = {w->o, w->n};
    const char *which[2] = {"old", "new"};
    for (int i = 0; i < 2; i++) {
        if (!side[i]) {
            sb_printf(b, ", \"%s\": null", which[i]);
            continue;
        }
        const kf_stats *s = &side[i]->stats;
        name_of(side[i], name, sizeof name);
        sb_printf(b, ", \"%s\": {\"name\": ", which[i]);
        sb_json_string(b, name);
        sb_printf(b, ", \"status\": \"%s\", \"median_ms\": %.9g, \"mean_ms\": %.9g, \"stddev_ms\": %.9g, "
                     "\"reps\": %d, \"device\": ",
                  kf_status_names[side[i]->status], s->median_ms, s->mean_ms, s->stddev_ms, s->reps);
        sb_json_string(b, side[i]->device_name);
        sb_append(b, "}");
    }
    if (isfinite(w->ratio))
        sb_printf(b, ", \"ratio\": %.9g", w->ratio);
    else
        sb_append(b, ", \"ratio\": null");
    if (isfinite(w->p))
        sb_printf(b, ", \"p\": %.6g", w->p);
    else
        sb_append(b, ", \"p\": null");
    sb_printf(b, ", \"significant\": %s, \"verdict\": \"%s\", \"regression\": %s, \"differs\": ",
              w->v == V_FASTER || w->v == V_SLOWER ? "true" : "false", verdict_names[w->v],
              w->regression ? "true" : "false");
    if (w->o && w->n)
        differs_json(b, w->o, w->n);
    else
        sb_append(b, "[]");
    sb_append(b, "}");
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_put(const char *s, const char *end)
{
    if (strpbrk(s, ",\"\r\n")) {
        putchar('"');
        for (; *s; s++) {
            if (*s == '"')
                putchar('"');
            putchar(*s);
        }
        putchar('"');
    } else {
        fputs(s, stdout);
    }
    fputs(end, stdout);
}

static void print_csv(const row *rows, int n, bool header)
{
    if (header)
        printf("name,dtype,op,size,old_ms,new_ms,old_status,new_status,ratio,p,verdict,regression,differs\n");
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        char c[K_COLS][CELL];
        cells_of(w, c);
        csv_put(c[K_NAME], ",");
        printf("%s,%s,%s,", c[K_DTYPE], c[K_OP], c[K_SIZE]);
        if (w->o)
            printf("%.9g,", w->o->stats.median_ms);
        else
            printf(",");
        if (w->n)
            printf("%.9g,", w->n->stats.median_ms);
        else
            printf(",");
        printf("%s,%s,", w->o ? kf_status_names[w->o->status] : "", w->n ? kf_status_names[w->n->status] : "");
        if (isfinite(w->ratio))
            printf("%.9g,", w->ratio);
        else
            printf(",");
        if (isfinite(w->p))
            printf("%.6g,", w->p);
        else
            printf(",");
        printf("%s,%s,", verdict_names[w->v], w->regression ? "true" : "false");
        csv_put(w->differs ? w->differs : "", "\n");
    }
}

// ---------------------------------------------------------------------------
// pairing

/* One side's case in the --match pairing. */
typedef struct {
    char *key;                  /* match_key */
    int side;                   /* 0 old, 1 new */
    int idx;                    /* into that side's caseset */
} mitem;

static int mitem_cmp(const void *a, const void *b)
{
    const mitem *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    if (x->side != y->side)
        return x->side - y->side;
    return x->idx - y->idx;
}

/* The keys whose values vary among the cases it[0..n) (both sides), as
 * "block_size, vector_width" in buf; false when none. */
static bool varying_keys(const mitem *it, int n, const caseset *sides, char *buf, size_t len)
{
    bool fams[64] = {false};
    for (int i = 0; i < n; i++)
        fams[sides[it[i].side].r[it[i].idx].v.family] = true;
    const char *keys[MAX_KEYS];
    int nk = all_keys(fams, keys);
    size_t o = 0;
    buf[0] = '\0';
    for (int k = 0; k < nk; k++) {
        strbuf first = {0};
        bool hfirst = key_value(&sides[it[0].side].r[it[0].idx], keys[k], &first, NULL), varies = false;
        for (int i = 1; i < n && !varies; i++) {
            strbuf x = {0};
            bool hx = key_value(&sides[it[i].side].r[it[i].idx], keys[k], &x, NULL);
            varies = hx != hfirst || strcmp(x.s ? x.s : "", first.s ? first.s : "") != 0;
            sb_free(&x);
        }
        sb_free(&first);
        if (varies && o < len)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", keys[k]);
    }
    return buf[0] != '\0';
}

/* Pairs the cases left unpaired (pair_of_new[i] < 0, old_paired[j] false)
 * on the --match keys: a key held by exactly one case on each side pairs
 * them; a key held by several cases on a side with cases on the other is
 * ambiguous (those cases are marked, and the first few groups explained on
 * stderr).  Returns the number of ambiguous groups, or -1 out of memory. */
static int pair_on_keys(caseset *sides, char *const *keys, int nkeys, int *pair_of_new, bool *old_paired,
                        bool *amb_old, bool *amb_new, const char *const *files)
{
    int total = sides[0].n + sides[1].n, n = 0, groups = 0;
    mitem *it = calloc((size_t)total + 1, sizeof *it);
    if (!it)
        return -1;
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < sides[side].n; i++) {
            if (side == 0 ? old_paired[i] : pair_of_new[i] >= 0)
                continue;
            it[n].key = match_key(&sides[side].r[i], keys, nkeys);
            if (!it[n].key) {
                for (int k = 0; k < n; k++)
                    free(it[k].key);
                free(it);
                return -1;
            }
            it[n].side = side;
            it[n++].idx = i;
        }
    qsort(it, (size_t)n, sizeof *it, mitem_cmp);
    for (int a = 0; a < n;) {
        int b = a, nold = 0;
        while (b < n && strcmp(it[b].key, it[a].key) == 0) {
            nold += it[b].side == 0;
            b++;
        }
        int nnew = (b - a) - nold;
        if (nold == 1 && nnew == 1) {
            pair_of_new[it[a + 1].idx] = it[a].idx;
            old_paired[it[a].idx] = true;
        } else if (nold && nnew) {
            for (int i = a; i < b; i++)
                *(it[i].side == 0 ? &amb_old[it[i].idx] : &amb_new[it[i].idx]) = true;
            if (groups < 3) {
                char vary[512], first[64] = "";
                bool v = varying_keys(&it[a], b - a, sides, vary, sizeof vary);
                if (v)
                    snprintf(first, sizeof first, "%.*s", (int)strcspn(vary, ","), vary);
                strbuf m = {0};
                for (int k = 0; k < nkeys; k++)
                    sb_printf(&m, "%s%s", k ? "," : "", keys[k]);
                fprintf(stderr,
                        "kforge compare: ambiguous: %d case%s in %s and %d in %s have %s%s%s; none of them paired "
                        "(a key that tells them apart pairs them one to one%s%s%s%s)\n",
                        nold, nold == 1 ? "" : "s", files[0], nnew, files[1], it[a].key,
                        v ? "; they differ in " : "", v ? vary : "", v ? ", for example --match " : "",
                        v && m.s ? m.s : "", v ? "," : "", first);
                sb_free(&m);
            }
            groups++;
        }
        a = b;
    }
    if (groups > 3)
        fprintf(stderr, "kforge compare: ambiguous: %d more groups of cases like these\n", groups - 3);
    for (int i = 0; i < n; i++)
        free(it[i].key);
    free(it);
    return groups;
}

/* Nothing paired: which keys differ between the two files, and a --match
 * that would pair them, on stderr. */
static void explain_no_pair(const caseset *sides, const char *const *files, bool any_device, bool matching)
{
    bool fams[64] = {false};
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < sides[side].n; i++)
            fams[sides[side].r[i].v.family] = true;
    const char *keys[MAX_KEYS];
    int nk = all_keys(fams, keys);
    strbuf differ = {0}, suggest = {0};
    int ndiffer = 0;
    bool gpu_only = true;
    for (int k = 0; k < nk; k++) {
        if (any_device && strcmp(keys[k], "gpu") == 0)
            continue;
        kf_strset vals[2] = {{0}, {0}};
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < sides[side].n; i++) {
                strbuf x = {0};
                if (!key_value(&sides[side].r[i], keys[k], &x, NULL))
                    sb_append(&x, "-");
                kf_strset_add(&vals[side], x.s ? x.s : "", NULL);
                sb_free(&x);
            }
        bool same = vals[0].n == vals[1].n, overlap = false;
        for (int j = 0; j < vals[0].n; j++) {
            bool in = kf_strset_find(&vals[1], vals[0].keys[j]) >= 0;
            same = same && in;
            overlap = overlap || in;
        }
        bool size = false;
        for (int f = 0; f < kf_nfamilies; f++)
            size = size || (fams[f] && param_find(kf_families[f]->sizes, kf_families[f]->nsizes, keys[k]) >= 0);
        bool is_name = strcmp(keys[k], "name") == 0;
        if (!same && !is_name) {
            /* "block_size (256 in old.jsonl; 512 in new.jsonl)" */
            sb_printf(&differ, "%s%s (", ndiffer++ ? ", " : "", keys[k]);
            for (int side = 0; side < 2; side++) {
                for (int j = 0; j < vals[side].n && j < 4; j++)
                    sb_printf(&differ, "%s%s", j ? " " : "", vals[side].keys[j]);
                if (vals[side].n > 4)
                    sb_printf(&differ, " and %d more", vals[side].n - 4);
                sb_printf(&differ, " in %s%s", files[side], side ? ")" : "; ");
            }
            if (strcmp(keys[k], "gpu") != 0)
                gpu_only = false;
        }
        /* suggested: the sizes both files have, and the keys that take
         * several values, some of them in both files (dtype in a sweep of
         * dtypes, block_size 128 256 512 against 256) */
        int in_both = 0;
        for (int j = 0; j < vals[0].n; j++)
            in_both += kf_strset_find(&vals[1], vals[0].keys[j]) >= 0;
        if ((size && overlap) || (overlap && vals[0].n + vals[1].n - in_both > 1))
            sb_printf(&suggest, "%s%s", suggest.len ? "," : "", keys[k]);
        kf_strset_free(&vals[0]);
        kf_strset_free(&vals[1]);
    }
    if (matching)
        ;   /* the ambiguity or the missing keys were said already */
    else if (ndiffer)
        fprintf(stderr, "kforge compare: the files differ in %s\n", differ.s);
    else
        fprintf(stderr, "kforge compare: the files have the same values of every key, but no case has the same "
                        "combination of them in both\n");
    if (ndiffer && gpu_only && !any_device)
        fprintf(stderr, "kforge compare: measured on different GPUs? --any-device matches across GPUs\n");
    else if (suggest.len)
        fprintf(stderr, "kforge compare: --match KEYS pairs cases on KEYS alone, for example --match %s%s\n", suggest.s,
                matching ? " (the keys both files have the same values of)" : "");
    else
        fprintf(stderr, "kforge compare: no key has values in common between the files: --match cannot pair them\n");
    sb_free(&differ);
    sb_free(&suggest);
}

// ---------------------------------------------------------------------------

/* "5%", "5" or "0.5%": percent >= 0.  false if not. */
static bool parse_percent(const char *s, double *out)
{
    char buf[64];
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len + 1);
    if (buf[len - 1] == '%')
        buf[len - 1] = '\0';
    return kf_parse_double(buf, out) && *out >= 0 && *out < 1e6;
}

#define MAX_MATCH 32

/* --match KEYS into keys[] (pointers into buf): the count, or -1 after a message. */
static int parse_match(cli *c, const char *val, char *buf, size_t len, char **keys)
{
    if (strlen(val) >= len)
        return cli_fail(c, "--match: too long");
    snprintf(buf, len, "%s", val);
    int n = 0;
    for (char *save = NULL, *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        while (*k == ' ')
            k++;
        if (!key_known(k)) {
            const char *cands[MAX_KEYS];
            bool fams[64];
            for (int i = 0; i < 64; i++)
                fams[i] = i < kf_nfamilies;
            int nc = all_keys(fams, cands);
            const char *near = kf_suggest(k, cands, nc);
            return cli_fail(c,
                            "--match: unknown key '%s'%s%s%s (keys: a size or parameter of kforge axes FAMILY, "
                            "kernel, name, gpu, bench.seed, ...)",
                            k, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        }
        if (n == MAX_MATCH)
            return cli_fail(c, "--match: at most %d keys", MAX_MATCH);
        keys[n++] = k;
    }
    if (n == 0)
        return cli_fail(c, "--match: expected keys, KEY[,KEY...] (for example --match n)");
    return n;
}

int cmd_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    int nfiles = 0;
    double fail_above = -1;
    bool any_device = false, all = false, no_header = false;
    kf_format fmt = KF_FMT_TABLE;
    char match_buf[1024], *match[MAX_MATCH];
    int nmatch = 0;
    cli c;
    cli_init(&c, argc, argv);
    const char *val;
    while (cli_next(&c)) {
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(compare_help, stdout);
            return KF_EXIT_OK;
        } else if (cli_value(&c, "--fail-above", &val)) {
            if (!parse_percent(val, &fail_above)) {
                cli_fail(&c, "--fail-above: expected a percentage such as 5%% or 0.5, got '%s'", val);
                return KF_EXIT_USAGE;
            }
        } else if (cli_flag(&c, "--any-device")) {
            any_device = true;
        } else if (cli_value(&c, "--match", &val)) {
            if ((nmatch = parse_match(&c, val, match_buf, sizeof match_buf, match)) < 0)
                return KF_EXIT_USAGE;
        } else if (cli_flag(&c, "--all")) {
            all = true;
        } else if (cli_flag(&c, "--no-header")) {
            no_header = true;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            if (f < 0) {
                cli_fail(&c, "--format: unknown format '%s' (allowed: table, md, csv, jsonl, json)", val);
                return KF_EXIT_USAGE;
            }
            fmt = (kf_format)f;
        } else if (cli_value(&c, "--kernel", &val)) {
            int fam;
            if (family_from_config("compare", val, &fam) != 0)
                return KF_EXIT_USAGE;
        } else if (cli_positional(&c, &val)) {
            if (nfiles == 2) {
                cli_fail(&c, "two results files at a time (OLD and NEW), got a third: '%s'", val);
                return KF_EXIT_USAGE;
            }
            files[nfiles++] = val;
        } else {
            cli_unknown(&c);
            return KF_EXIT_USAGE;
        }
    }
    if (c.error)
        return KF_EXIT_USAGE;
    if (no_header && fmt != KF_FMT_CSV) {
        fprintf(stderr, "kforge compare: --no-header goes with --format csv (the other formats have no header "
                        "line to leave out)\n");
        return KF_EXIT_USAGE;
    }
    if (nfiles != 2) {
        fprintf(stderr, "kforge compare: expected two results files, OLD and NEW\n\n%s", compare_help);
        return KF_EXIT_USAGE;
    }

    int rc = KF_EXIT_USAGE;
    caseset sides[2] = {{.any_device = any_device}, {.any_device = any_device}};
    caseset *olds = &sides[0], *news = &sides[1];
    row *rows = NULL;
    int n = 0;
    int *pair_of_new = NULL;
    bool *old_paired = NULL, *amb_old = NULL, *amb_new = NULL;
    if (cs_load(olds, files[0]) != 0 || cs_load(news, files[1]) != 0)
        goto out;
    rows = calloc((size_t)(olds->n + news->n + 1), sizeof *rows);
    pair_of_new = malloc(sizeof *pair_of_new * ((size_t)news->n + 1));
    old_paired = calloc((size_t)olds->n + 1, sizeof *old_paired);
    amb_old = calloc((size_t)olds->n + 1, sizeof *amb_old);
    amb_new = calloc((size_t)news->n + 1, sizeof *amb_new);
    if (!rows || !pair_of_new || !old_paired || !amb_old || !amb_new) {
        fprintf(stderr, "kforge compare: out of memory\n");
        goto out;
    }
    /* identical cases pair first; with --match, on the keys given */
    for (int i = 0; i < news->n; i++) {
        int j = kf_strset_find(&olds->keys, news->keys.keys[i]);
        pair_of_new[i] = -1;
        if (j >= 0 && nmatch) {
            char *a = match_key(&olds->r[j], match, nmatch), *b = match_key(&news->r[i], match, nmatch);
            if (!a || !b || strcmp(a, b) != 0)
                j = -1;
            free(a);
            free(b);
        }
        if (j >= 0) {
            pair_of_new[i] = j;
            old_paired[j] = true;
        }
    }
    int ambiguous = 0;
    if (nmatch && (ambiguous = pair_on_keys(sides, match, nmatch, pair_of_new, old_paired, amb_old, amb_new,
                                            files)) < 0) {
        fprintf(stderr, "kforge compare: out of memory\n");
        goto out;
    }
    int both = 0, only_old = 0, only_new = 0, namb = 0, count[V_COUNT] = {0}, regressions = 0;
    double log_sum = 0;
    int nratio = 0;
    for (int i = 0; i < news->n; i++) {
        int j = pair_of_new[i];
        if (j >= 0) {
            both++;
        } else {
            *(amb_new[i] ? &namb : &only_new) += 1;
            if (!all)
                continue;
        }
        row *w = &rows[n++];
        w->o = j >= 0 ? &olds->r[j] : NULL;
        w->n = &news->r[i];
        w->v = judge(w, fail_above);
        if (j < 0 && amb_new[i])
            w->v = V_AMBIGUOUS;
        if (j >= 0)
            w->differs = differs_text(w->o, w->n);
    }
    for (int j = 0; j < olds->n; j++)
        if (!old_paired[j]) {
            *(amb_old[j] ? &namb : &only_old) += 1;
            if (all) {
                row *w = &rows[n++];
                w->o = &olds->r[j];
                w->v = judge(w, fail_above);
                if (amb_old[j])
                    w->v = V_AMBIGUOUS;
            }
        }
    for (int i = 0; i < n; i++) {
        count[rows[i].v]++;
        regressions += rows[i].regression;
        if (isfinite(rows[i].ratio) && rows[i].ratio > 0) {
            log_sum += log(rows[i].ratio);
            nratio++;
        }
    }

    if (both > 0 || all) {
        if (fmt == KF_FMT_TABLE || fmt == KF_FMT_MD) {
            print_table(rows, n, fmt == KF_FMT_MD, fmt == KF_FMT_TABLE && isatty(1) && !getenv("NO_COLOR"));
        } else if (fmt == KF_FMT_CSV) {
            print_csv(rows, n, !no_header);
        } else {
            strbuf b = {0};
            if (fmt == KF_FMT_JSON)
                sb_append(&b, "[");
            for (int i = 0; i < n; i++) {
                if (fmt == KF_FMT_JSON)
                    sb_append(&b, i ? ",\n" : "\n");
                json_row(&b, &rows[i]);
                if (fmt == KF_FMT_JSONL)
                    sb_append(&b, "\n");
            }
            if (fmt == KF_FMT_JSON)
                sb_append(&b, n ? "\n]\n" : "]\n");
            if (b.s)
                fputs(b.s, stdout);
            sb_free(&b);
        }
        fflush(stdout);
    }
    if (both == 0) {
        fprintf(stderr, "kforge compare: %s and %s have no case in common (%d and %d cases)%s\n", files[0], files[1],
                olds->n, news->n, namb ? "; the pairs --match gives are ambiguous" : "");
        if (!namb)
            explain_no_pair(sides, files, any_device, nmatch > 0);
        goto out;
    }

    fprintf(stderr, "kforge compare: %d case%s in both: %d faster, %d slower, %d the same", both, both == 1 ? "" : "s",
            count[V_FASTER], count[V_SLOWER], count[V_SAME]);
    if (count[V_FAILS] || count[V_FIXED] || count[V_BOTH_FAIL])
        fprintf(stderr, ", %d failing now, %d fixed, %d failing in both", count[V_FAILS], count[V_FIXED],
                count[V_BOTH_FAIL]);
    if (nratio)
        fprintf(stderr, "; geometric mean of new/old %.3f", exp(log_sum / nratio));
    if (only_old || only_new)
        fprintf(stderr, "; only in %s: %d, only in %s: %d", files[0], only_old, files[1], only_new);
    if (namb)
        fprintf(stderr, "; ambiguous: %d (not paired)", namb);
    fprintf(stderr, "\n");
    rc = KF_EXIT_OK;
    if (fail_above >= 0 && regressions) {
        fprintf(stderr, "kforge compare: %d case%s got slower by more than %g%% or fail%s now (marked (!))\n",
                regressions, regressions == 1 ? "" : "s", fail_above, regressions == 1 ? "s" : "");
        rc = KF_EXIT_VARIANT;
    }
out:
    for (int i = 0; i < n; i++)
        free(rows[i].differs);
    free(rows);
    free(pair_of_new);
    free(old_paired);
    free(amb_old);
    free(amb_new);
    cs_free(olds);
    cs_free(news);
    (void)ambiguous;
    return rc;
}
