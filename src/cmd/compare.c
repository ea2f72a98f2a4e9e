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
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "family.h"
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
    "options:\n"
    "  --fail-above PCT    exit 1 if a case got significantly slower by more than PCT percent\n"
    "                      (5%, 5 or 0.5%), or fails now where it passed before\n"
    "  --any-device        match cases measured on different GPUs (the GPU is left out of the identity)\n"
    "  --all               also list the cases found in only one of the files\n"
    "  --format FMT        table (default; coloured on a terminal), md, csv, jsonl or json\n"
    "\n"
    "exit status: 0 no regression (or no --fail-above); 1 a regression beyond --fail-above; 2 usage\n"
    "error, a file that cannot be read, or no case in common.\n"
    "\n"
    "examples:\n"
    "  kforge run configs/fast.json --results before.jsonl      # then change something\n"
    "  kforge run configs/fast.json --results after.jsonl\n"
    "  kforge compare before.jsonl after.jsonl --fail-above 5%\n";

#define ALPHA 0.01
#define KEY_MAX 2048

// ---------------------------------------------------------------------------
// the cases of a file, latest line per identity, in order of first appearance

typedef struct {
    kf_result *r;
    char **keys;
    int n, cap;
    int *table;             /* open addressing: index + 1, 0 empty */
    int tsize;
    bool any_device;
    bool oom;
} caseset;

static int cs_find(const caseset *s, const char *key)
{
    if (!s->tsize)
        return -1;
    for (uint64_t h = kf_hash64(key, strlen(key), 3) & (uint64_t)(s->tsize - 1);;
         h = (h + 1) & (uint64_t)(s->tsize - 1)) {
        if (!s->table[h])
            return -1;
        if (strcmp(s->keys[s->table[h] - 1], key) == 0)
            return s->table[h] - 1;
    }
}

static bool cs_rehash(caseset *s)
{
    int ns = s->tsize ? s->tsize * 2 : 1024;
    int *t = calloc((size_t)ns, sizeof *t);
    if (!t)
        return false;
    for (int i = 0; i < s->n; i++) {
        uint64_t h = kf_hash64(s->keys[i], strlen(s->keys[i]), 3) & (uint64_t)(ns - 1);
        while (t[h])
            h = (h + 1) & (uint64_t)(ns - 1);
        t[h] = i + 1;
    }
    free(s->table);
    s->table = t;
    s->tsize = ns;
    return true;
}

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
    int i = cs_find(s, key);
    if (i >= 0) {           /* measured again: the latest line counts */
        s->r[i] = *r;
        return 0;
    }
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 256;
        kf_result *nr = realloc(s->r, sizeof *nr * (size_t)nc);
        if (nr)
            s->r = nr;
        char **nk = realloc(s->keys, sizeof *nk * (size_t)nc);
        if (nk)
            s->keys = nk;
        if (!nr || !nk) {
            s->oom = true;
            return 1;
        }
        s->cap = nc;
    }
    if ((s->n + 1) * 2 > s->tsize && !cs_rehash(s)) {
        s->oom = true;
        return 1;
    }
    s->keys[s->n] = strdup(key);
    if (!s->keys[s->n]) {
        s->oom = true;
        return 1;
    }
    s->r[s->n] = *r;
    uint64_t h = kf_hash64(key, strlen(key), 3) & (uint64_t)(s->tsize - 1);
    while (s->table[h])
        h = (h + 1) & (uint64_t)(s->tsize - 1);
    s->table[h] = ++s->n;
    return 0;
}

static void cs_free(caseset *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    free(s->r);
    free(s->table);
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
    if (skipped)
        fprintf(stderr, "kforge compare: %s: %d line%s that are not results skipped\n", path, skipped,
                skipped == 1 ? "" : "s");
    return 0;
}

// ---------------------------------------------------------------------------
// rows

typedef enum { V_SAME, V_FASTER, V_SLOWER, V_FAILS, V_FIXED, V_BOTH_FAIL, V_ONLY_OLD, V_ONLY_NEW } verdict;
static const char *const verdict_names[] = {"same",   "faster",     "slower",   "fails now",
                                            "fixed",  "fails both", "only old", "only new"};

typedef struct {
    const kf_result *o, *n;     /* either may be NULL (--all) */
    double ratio;               /* new / old median; NaN when not both ok */
    double p;                   /* Welch's p-value; NaN when no test */
    verdict v;
    bool regression;            /* counts against --fail-above */
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
    double ms = r->stats.median_ms;
    if (ms < 1)
        snprintf(buf, len, "%.4g us", ms * 1e3);
    else
        snprintf(buf, len, "%.4g ms", ms);
}

// ---------------------------------------------------------------------------
// output

enum { K_NAME, K_DTYPE, K_OP, K_SIZE, K_OLD, K_NEW, K_RATIO, K_CHANGE, K_P, K_VERDICT, K_COLS };
static const char *const titles[K_COLS] = {"name", "dtype", "op",     "size", "old",
                                           "new",  "ratio", "change", "p",    "verdict"};
#define CELL 160

static void cells_of(const row *w, char c[K_COLS][CELL])
{
    const kf_result *r = w->n ? w->n : w->o;
    const kf_family *f = family_of(&r->v);
    if (r->v.name[0])
        snprintf(c[K_NAME], CELL, "%s", r->v.name);
    else
        f->label(&r->v, c[K_NAME], CELL);
    snprintf(c[K_DTYPE], CELL, "%s", kf_dtype_names[variant_dtype(&r->v)]);
    snprintf(c[K_OP], CELL, "%s", kf_op_names[variant_op(&r->v)]);
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
}

static const char *verdict_color(verdict v)
{
    switch (v) {
    case V_FASTER: case V_FIXED: return "\033[32m";
    case V_SLOWER: case V_FAILS: return "\033[31m";
    case V_BOTH_FAIL: return "\033[33m";
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

static void print_table(const row *rows, int n, bool md, bool color)
{
    char (*c)[K_COLS][CELL] = calloc(n ? (size_t)n : 1, sizeof *c);
    if (!c)
        return;
    int width[K_COLS];
    for (int k = 0; k < K_COLS; k++)
        width[k] = width_of(titles[k]);
    for (int i = 0; i < n; i++) {
        cells_of(&rows[i], c[i]);
        for (int k = 0; k < K_COLS; k++)
            if (width_of(c[i][k]) > width[k])
                width[k] = width_of(c[i][k]);
    }
    bool right[K_COLS] = {false};
    right[K_SIZE] = right[K_OLD] = right[K_NEW] = right[K_RATIO] = right[K_CHANGE] = right[K_P] = true;
    if (md) {
        printf("|");
        for (int k = 0; k < K_COLS; k++)
            printf(" %s |", titles[k]);
        printf("\n|");
        for (int k = 0; k < K_COLS; k++)
            printf("%s", right[k] ? "---:|" : "---|");
        printf("\n");
        for (int i = 0; i < n; i++) {
            printf("|");
            for (int k = 0; k < K_COLS; k++)
                printf(" %s |", c[i][k]);
            printf("\n");
        }
    } else {
        for (int k = 0; k < K_COLS; k++) {
            if (k)
                printf("  ");
            int fill = width[k] - width_of(titles[k]);
            if (right[k])
                printf("%*s%s", fill, "", titles[k]);
            else
                printf("%s%*s", titles[k], k == K_COLS - 1 ? 0 : fill, "");
        }
        printf("\n");
        int total = 0;
        for (int k = 0; k < K_COLS; k++)
            total += width[k] + (k ? 2 : 0);
        for (int i = 0; i < total; i++)
            putchar('-');
        printf("\n");
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < K_COLS; k++) {
                if (k)
                    printf("  ");
                int fill = width[k] - width_of(c[i][k]);
                const char *col = k == K_VERDICT && color ? verdict_color(rows[i].v) : NULL;
                if (right[k])
                    printf("%*s%s", fill, "", c[i][k]);
                else
                    printf("%s%s%s%*s", col ? col : "", c[i][k], col ? "\033[0m" : "", k == K_COLS - 1 ? 0 : fill,
                           "");
            }
            printf("\n");
        }
    }
    free(c);
}

static void json_row(strbuf *b, const row *w)
{
    const kf_result *r = w->n ? w->n : w->o;
    const kf_family *f = family_of(&r->v);
    char label[256], size[128];
    f->label(&r->v, label, sizeof label);
    shape_short(f, &r->shape, size, sizeof size);
    sb_append(b, "{\"name\": ");
    sb_json_string(b, r->v.name[0] ? r->v.name : label);
    sb_append(b, ", \"label\": ");
    sb_json_string(b, label);
    sb_printf(b, ", \"kernel\": \"%s\", \"dtype\": \"%s\", \"op\": \"%s\", \"size\": \"%s\"", f->name,
              kf_dtype_names[variant_dtype(&r->v)], kf_op_names[variant_op(&r->v)], size);
    const kf_result *side[2] = {w->o, w->n};
    const char *which[2] = {"old", "new"};
    for (int i = 0; i < 2; i++) {
        if (!side[i]) {
            sb_printf(b, ", \"%s\": null", which[i]);
            continue;
        }
        const kf_stats *s = &side[i]->stats;
        sb_printf(b, ", \"%s\": {\"status\": \"%s\", \"median_ms\": %.9g, \"mean_ms\": %.9g, \"stddev_ms\": %.9g, "
                     "\"reps\": %d, \"device\": ",
                  which[i], kf_status_names[side[i]->status], s->median_ms, s->mean_ms, s->stddev_ms, s->reps);
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
    sb_printf(b, ", \"significant\": %s, \"verdict\": \"%s\", \"regression\": %s}",
              w->v == V_FASTER || w->v == V_SLOWER ? "true" : "false", verdict_names[w->v],
              w->regression ? "true" : "false");
}

static void print_csv(const row *rows, int n)
{
    printf("name,dtype,op,size,old_ms,new_ms,old_status,new_status,ratio,p,verdict,regression\n");
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        char c[K_COLS][CELL];
        cells_of(w, c);
        printf("%s,%s,%s,%s,", c[K_NAME], c[K_DTYPE], c[K_OP], c[K_SIZE]);
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
        printf("%s,%s\n", verdict_names[w->v], w->regression ? "true" : "false");
    }
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

int cmd_compare(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL};
    int nfiles = 0;
    double fail_above = -1;
    bool any_device = false, all = false;
    kf_format fmt = KF_FMT_TABLE;
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
        } else if (cli_flag(&c, "--all")) {
            all = true;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            if (f < 0) {
                cli_fail(&c, "--format: unknown format '%s' (allowed: table, md, csv, jsonl, json)", val);
                return KF_EXIT_USAGE;
            }
            fmt = (kf_format)f;
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
    if (nfiles != 2) {
        fprintf(stderr, "kforge compare: expected two results files, OLD and NEW\n\n%s", compare_help);
        return KF_EXIT_USAGE;
    }

    int rc = KF_EXIT_USAGE;
    caseset olds = {.any_device = any_device}, news = {.any_device = any_device};
    row *rows = NULL;
    if (cs_load(&olds, files[0]) != 0 || cs_load(&news, files[1]) != 0)
        goto out;
    rows = calloc((size_t)(olds.n + news.n + 1), sizeof *rows);
    if (!rows) {
        fprintf(stderr, "kforge compare: out of memory\n");
        goto out;
    }
    int n = 0, both = 0, only_old = 0, only_new = 0, count[V_ONLY_NEW + 1] = {0}, regressions = 0;
    double log_sum = 0;
    int nratio = 0;
    bool *matched = calloc((size_t)olds.n + 1, sizeof *matched);
    if (!matched) {
        fprintf(stderr, "kforge compare: out of memory\n");
        goto out;
    }
    for (int i = 0; i < news.n; i++) {
        int j = cs_find(&olds, news.keys[i]);
        if (j < 0) {
            only_new++;
            if (!all)
                continue;
        } else {
            matched[j] = true;
            both++;
        }
        row *w = &rows[n++];
        w->o = j >= 0 ? &olds.r[j] : NULL;
        w->n = &news.r[i];
        w->v = judge(w, fail_above);
    }
    for (int j = 0; j < olds.n; j++)
        if (!matched[j]) {
            only_old++;
            if (all) {
                row *w = &rows[n++];
                w->o = &olds.r[j];
                w->v = judge(w, fail_above);
            }
        }
    free(matched);
    for (int i = 0; i < n; i++) {
        count[rows[i].v]++;
        regressions += rows[i].regression;
        if (isfinite(rows[i].ratio) && rows[i].ratio > 0) {
            log_sum += log(rows[i].ratio);
            nratio++;
        }
    }
    if (both == 0) {
        fprintf(stderr, "kforge compare: %s and %s have no case in common (%d and %d cases)%s\n", files[0], files[1],
                olds.n, news.n,
                any_device ? "" : "; measured on different GPUs? --any-device matches across GPUs");
        goto out;
    }

    if (fmt == KF_FMT_TABLE || fmt == KF_FMT_MD) {
        print_table(rows, n, fmt == KF_FMT_MD, fmt == KF_FMT_TABLE && isatty(1) && !getenv("NO_COLOR"));
    } else if (fmt == KF_FMT_CSV) {
        print_csv(rows, n);
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

    fprintf(stderr, "kforge compare: %d case%s in both: %d faster, %d slower, %d the same", both, both == 1 ? "" : "s",
            count[V_FASTER], count[V_SLOWER], count[V_SAME]);
    if (count[V_FAILS] || count[V_FIXED] || count[V_BOTH_FAIL])
        fprintf(stderr, ", %d failing now, %d fixed, %d failing in both", count[V_FAILS], count[V_FIXED],
                count[V_BOTH_FAIL]);
    if (nratio)
        fprintf(stderr, "; geometric mean of new/old %.3f", exp(log_sum / nratio));
    if (only_old || only_new)
        fprintf(stderr, "; only in %s: %d, only in %s: %d", files[0], only_old, files[1], only_new);
    fprintf(stderr, "\n");
    rc = KF_EXIT_OK;
    if (fail_above >= 0 && regressions) {
        fprintf(stderr, "kforge compare: %d case%s got slower by more than %g%% or fail%s now (marked (!))\n",
                regressions, regressions == 1 ? "" : "s", fail_above, regressions == 1 ? "s" : "");
        rc = KF_EXIT_VARIANT;
    }
out:
    free(rows);
    cs_free(&olds);
    cs_free(&news);
    return rc;
}
