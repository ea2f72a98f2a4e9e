/*
 * merge.c -- `kforge merge FILE...`: combines the results files of shards
 * (kforge run or tune with --shard, or a Slurm job array), prints the
 * summary `kforge tune` would have printed for the whole search, and
 * updates the tuning database.
 *
 *   kforge merge shard-*.jsonl --results all.jsonl
 *
 * Cases are de-duplicated by case identity (results_case_key: family,
 * parameters, shape, GPU model, bench settings).  The same case recorded
 * twice with different outcomes is a conflict: reported, and the failure
 * kept (a variant that failed once is never ranked).  The cases are then
 * grouped by the command that measured them (the lines' "config") and the
 * GPU model.  When a group's config is a tuning space kforge can read (from
 * the directory merge runs in, as the shards did), its summary is tune's
 * own, with the space's sizes, weights and order (tune_replay); otherwise
 * the candidates are ranked from the results alone: the sum of their median
 * times over the sizes of the group.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_fields.h"
#include "cmd.h"
#include "family.h"
#include "pick.h"
#include "results.h"
#include "resume.h"
#include "tune.h"
#include "tunedb.h"
#include "util.h"

static const char *const merge_help =
    "usage: kforge merge FILE... [OPTIONS]\n"
    "\n"
    "Combines results files of the shards of one run or tune (kforge run/tune --shard K/N, or the\n"
    "tasks of a Slurm job array), prints the summary kforge tune prints for the whole search, and\n"
    "records the fastest variant per size and GPU model in the tuning database.  Cases recorded\n"
    "more than once are kept once (by case identity); the same case with different outcomes is\n"
    "reported as a conflict and the failure is kept.  Run it in the directory the shards ran in:\n"
    "the space config named in the results gives the sizes, weights and candidate order.  A custom\n"
    "kernel's lines of an older source (its .cu or a header changed since) are left out and counted.\n"
    "Times are taken as measured; a line that contradicts itself (a label not its parameters', a\n"
    "time that is not above 0, a negative error, ...) is left out as damaged, counted and said.\n"
    "\n"
    "options:\n"
    "  --kernel CONFIG     the config of a custom kernel whose results these are (its family is\n"
    "                      made from the config; repeat for several)\n"    "  --results FILE      also write the merged cases to FILE (a new file), one line each; it\n"
    "                      appears whole or not at all (written as FILE.tmp.PID first)\n"
    "  --db DIR            tuning database (default $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,\n"
    "                      else ~/.local/share/kforge/tuning)\n"
    "  --no-db             leave the tuning database alone\n"
    "  --format FMT        the summary on stdout: table (default), jsonl or json\n"
    "  -q, --quiet         fewer messages (the counts only when there is a conflict)\n"
    "\n"
    "exit status: 0 merged, a best variant found for every group; 1 a group where every candidate\n"
    "failed; 2 usage error or unreadable file; 4 the database or --results could not be written.\n"
    "\n"
    "examples:\n"
    "  kforge tune configs/tune-reduce.json --shard 1/2 --results s1.jsonl\n"
    "  kforge tune configs/tune-reduce.json --shard 2/2 --results s2.jsonl\n"
    "  kforge merge s1.jsonl s2.jsonl --results all.jsonl\n"
    "  sbatch --array=0-7 tools/slurm-tune.sbatch configs/tune-reduce.json   (see its header)\n";

// ---------------------------------------------------------------------------
// Reading

typedef struct {
    kf_result r;
    char *line;             /* the line as recorded (no newline) */
    int file;
    long lineno;
    char config[512];       /* the command that measured it */
    kf_device dev;          /* the GPU model's facts for the database */
    int group;
} rec;

typedef struct {
    rec *v;
    int n, cap;
    kf_strset keys;         /* v[i]'s case key is keys.keys[i] */
    int dups, conflicts, unreadable;
    int damaged;            /* lines that contradict themselves (results_line_damaged), left out */
    int stale;              /* lines of an older source or none, left out (resume.h) */
} recset;

static int grow(recset *s)
{
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 256;
        rec *nv = realloc(s->v, sizeof *nv * (size_t)nc);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    return 0;
}

static void describe(const kf_result *r, char *buf, size_t len)
{
    char label[256], st[128];
    variant_label(&r->v, label, sizeof label);
    shape_text(family_of(&r->v), &r->shape, st, sizeof st);
    strbuf b = {0};
    sb_printf(&b, "%s %s on %s", label, st, r->device_name[0] ? r->device_name : "an unnamed GPU");
    snprintf(buf, len, "%s", b.s ? b.s : "");
    sb_free(&b);
}

/* Adds one line; 0, or -1 out of memory. */
static int add_line(recset *s, char *line, const kf_result *r, int file, long lineno, const char *const *files)
{
    char key[4096];
    results_key_of(r, key, sizeof key);
    int i = kf_strset_find(&s->keys, key);
    if (i >= 0) {
        rec *o = &s->v[i];
        if (o->r.status == r->status) {
            s->dups++;
            free(line);
            return 0;
        }
        s->conflicts++;
        char what[512];
        describe(r, what, sizeof what);
        bool keep_new = o->r.status == KF_ST_OK;
        fprintf(stderr, "kforge merge: conflict: %s: %s in %s (line %ld), %s in %s (line %ld); keeping the %s\n", what,
                kf_status_names[o->r.status], files[o->file], o->lineno, kf_status_names[r->status], files[file],
                lineno, kf_status_names[keep_new ? r->status : o->r.status]);
        if (!keep_new) {
            free(line);
            return 0;
        }
        free(o->line);
        o->line = line;
        o->r = *r;
        o->file = file;
        o->lineno = lineno;
        return 0;
    }
    if (grow(s) != 0)
        return -1;
    rec *e = &s->v[s->n];
    memset(e, 0, sizeof *e);
    e->r = *r;
    e->line = line;
    if (kf_strset_add(&s->keys, key, NULL) != s->n)
        return -1;
    e->file = file;
    e->lineno = lineno;
    kf_run_info run;
    char err[256];
    if (results_parse_run(line, &run, err, sizeof err) == 0) {
        snprintf(e->config, sizeof e->config, "%s", run.config);
        e->dev = run.dev;
    }
    snprintf(e->dev.name, sizeof e->dev.name, "%s", r->device_name);
    s->n++;
    return 0;
}

typedef struct {
    recset *s;
    const char *const *files;
    int file;
    bool oom;
    resume_state src;       /* its stale and unhashed counts: this file's lines of another source */
    int damaged;            /* this file's damaged lines */
    long first_damaged;     /* the first one's line number */
    char why[320];          /* and what is wrong with it */
} read_ctx;

static int read_line(const char *text, long lineno, const kf_result *r, void *ctx)
{
    read_ctx *c = ctx;
    /* a line of another source than the current one is left out before
     * anything else: as a duplicate it would hide the current line, as a
     * conflict replace it, and ranked it would choose from what no longer
     * runs (resume, --simulate and the replay leave it out the same way) */
    int src = resume_source_check(r);
    if (src) {
        if (src == 1)
            c->src.stale++;
        else
            c->src.unhashed++;
        return 0;
    }
    char why[320]; /* after the source check: an older line is counted as older */
    if (results_line_damaged(text, r, why, sizeof why)) {
        if (!c->damaged++) {
            c->first_damaged = lineno;
            snprintf(c->why, sizeof c->why, "%s", why);
        }
        return 0;
    }
    char *line = strdup(text);
    if (!line || add_line(c->s, line, r, c->file, lineno, c->files) != 0) {
        free(line);
        c->oom = true;
        return 1;
    }
    return 0;
}

/* Reads every line of path, through the results module's reader (NUL
 * bytes dropped, damaged lines counted, no input without end).  0, or -1
 * after a message. */
static int read_file(recset *s, const char *const *files, int file)
{
    const char *path = files[file];
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "kforge merge: %s: %s\n", path, strerror(errno));
        return -1;
    }
    read_ctx c = {.s = s, .files = files, .file = file};
    char err[1024];
    int skipped = 0;
    if (results_read_lines(path, 0, read_line, &c, &skipped, err, sizeof err) != 0) {
        fprintf(stderr, "kforge merge: %s\n", err);
        return -1;
    }
    s->unreadable += skipped;
    s->damaged += c.damaged;
    if (c.damaged) {
        char shown[PATH_MAX * 2];
        fprintf(stderr, "kforge merge: %s: %d damaged line%s left out (line %ld: %s); a line that contradicts "
                        "itself was not written by kforge\n", kf_printable(path, shown, sizeof shown), c.damaged,
                c.damaged == 1 ? "" : "s", c.first_damaged, c.why);
    }
    s->stale += c.src.stale + c.src.unhashed;
    resume_note_stale(&c.src, "kforge merge", path);
    note_unknown_kernel("merge", path, skipped, "");
    if (c.oom) {
        fprintf(stderr, "kforge merge: out of memory\n");
        return -1;
    }
    return 0;
}

static void recset_free(recset *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i].line);
    free(s->v);
    kf_strset_free(&s->keys);
}

// ---------------------------------------------------------------------------
// Ranking without the space (a config merge cannot read)

/* The group of a case in this ranking: the command, the GPU model, the
 * problem (family and key parameters) and the bench settings. */
static void rank_key(const rec *e, strbuf *b)
{
    const kf_family *f = family_of(&e->r.v);
    sb_printf(b, "%s|%s|%s|", e->config, e->r.device_name, f->name);
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].key) {
            param_text(b, &f->params[i], e->r.v.p[i]);
            sb_append(b, "|");
        }
    for (int i = 0; i < bench_nfields; i++)
        if (bench_fields[i].ident) {
            bench_field_text(b, &bench_fields[i], &e->r.bench);
            sb_append(b, "|");
        }
}

typedef struct {
    int first;              /* a record of it */
    int *cell;              /* record per size, -1 none */
    double obj;             /* +inf unless OK at every size */
    bool failed;            /* failed at a size: never best at another (pick.h); abandoned is not failed */
} cand;

/* Ranks the records idx[0..n) (one rank group) from the results alone,
 * prints the summary and updates the database.  KF_EXIT_*. */
static int rank_alone(const recset *s, const int *idx, int n, const char *files_label, int nfiles,
                      const char *db, bool no_db, kf_format fmt, bool quiet)
{
    const rec *e0 = &s->v[idx[0]];
    const kf_family *f = family_of(&e0->r.v);
    kf_shape *sizes = malloc(sizeof *sizes * (size_t)n);
    cand *cs = calloc((size_t)n, sizeof *cs);
    int *cells = malloc(sizeof *cells * (size_t)n * (size_t)n);
    int nsizes = 0, ncand = 0, rc = KF_EXIT_OK;
    if (!sizes || !cs || !cells) {
        fprintf(stderr, "kforge merge: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const kf_shape *sh = &s->v[idx[i]].r.shape;
        int k = 0;
        while (k < nsizes && !shape_eq(&sizes[k], sh))
            k++;
        if (k == nsizes)
            sizes[nsizes++] = *sh;
    }
    for (int i = 0; i < n; i++) {
        const kf_result *r = &s->v[idx[i]].r;
        int c = 0;
        while (c < ncand && !(variant_eq(&s->v[cs[c].first].r.v, &r->v)))
            c++;
        if (c == ncand) {
            cs[c].first = idx[i];
            cs[c].cell = cells + (size_t)c * (size_t)n;
            for (int k = 0; k < nsizes; k++)
                cs[c].cell[k] = -1;
            ncand++;
        }
        for (int k = 0; k < nsizes; k++)
            if (shape_eq(&sizes[k], &r->shape))
                cs[c].cell[k] = idx[i];
    }
    int best = -1, complete = 0, failed = 0;
    for (int c = 0; c < ncand; c++) {
        double sum = 0;
        bool all = true;
        for (int k = 0; k < nsizes; k++) {
            if (cs[c].cell[k] < 0) {
                all = false;
                sum = INFINITY;
                continue;
            }
            const kf_result *r = &s->v[cs[c].cell[k]].r;
            bool ok = r->status == KF_ST_OK && r->stats.median_ms > 0;
            cs[c].failed |= !ok && r->status != KF_ST_ABANDONED;
            sum += ok ? r->stats.median_ms : INFINITY;
        }
        cs[c].obj = sum;
        if (!all)
            continue;
        complete++;
        if (!isfinite(sum))
            failed++;
        else if (best < 0 || sum < cs[best].obj)
            best = c;
    }
    char shapes[512] = "";
    for (int k = 0, o = 0; k < nsizes && o < (int)sizeof shapes - 2; k++) {
        char st[128];
        shape_short(f, &sizes[k], st, sizeof st);
        o += snprintf(shapes + o, sizeof shapes - (size_t)o, "%s%s", k ? ", " : "", st);
    }
    const kf_variant *bv = best >= 0 ? &s->v[cs[best].first].r.v : NULL;
    char label[256] = "";
    if (bv)
        f->label(bv, label, sizeof label);
    char *vjson = bv ? tunedb_variant_json(bv) : NULL;
    if (fmt == KF_FMT_TABLE) {
        printf("kforge merge: %s on %s: %d variants with results at every size (%s)\n",
               e0->config[0] ? e0->config : "(no config)", e0->r.device_name, complete, shapes);
        printf("merged from %d results file%s (%s), ranked by the results alone (sum of median times over the "
               "sizes); failed candidates: %d\n",
               nfiles, nfiles == 1 ? "" : "s", files_label, failed);
        if (!bv) {
            printf("no candidate succeeded\n");
        } else {
            char ob[32];
            kf_fmt_ms(ob, sizeof ob, cs[best].obj, false);
            printf("best: %s%s%s\n", bv->name, bv->name[0] ? " " : "", label);
            printf("  objective %s (%s)\n", ob, nsizes == 1 ? "median time" : "sum of median times over the sizes");
            bool flops = f->flops != NULL; /* a GFLOP/s column, only where the family counts flops */
            printf("  %16s  %10s  %8s  %6s", "size", "median", "GB/s", "% peak");
            if (flops)
                printf("  %9s", "GFLOP/s");
            printf("  %8s  %8s\n", "blocks", "launches");
            for (int k = 0; k < nsizes; k++) {
                const kf_result *r = &s->v[cs[best].cell[k]].r;
                char m[32], st[128];
                kf_fmt_ms(m, sizeof m, r->stats.median_ms, false);
                shape_short(f, &sizes[k], st, sizeof st);
                printf("  %16s  %10s  %8.1f  %6.1f", st, m, r->stats.gbps, r->stats.pct_peak);
                if (flops)
                    printf("  %9.1f", r->stats.gflops);
                printf("  %8lld  %8d\n", (long long)r->blocks, r->launches);
            }
            printf("  variant: %s\n", vjson ? vjson : "");
        }
    } else {
        strbuf b = {0};
        sb_append(&b, "{\"event\": \"summary\", \"space\": ");
        sb_json_string(&b, e0->config);
        sb_append(&b, ", \"device\": ");
        sb_json_string(&b, e0->r.device_name);
        sb_printf(&b, ", \"strategy\": \"merge\", \"candidates\": %d, \"evaluations\": %d, \"failed_candidates\": %d, "
                      "\"merged_files\": %d, \"ranked\": \"results\"",
                  complete, complete, failed, nfiles);
        if (bv) {
            sb_printf(&b, ", \"best\": {\"objective_ms\": %.9g, \"label\": ", cs[best].obj);
            sb_json_string(&b, label);
            sb_printf(&b, ", \"variant\": %s}", vjson ? vjson : "{}");
        } else {
            sb_append(&b, ", \"best\": null");
        }
        sb_append(&b, "}\n");
        char *out = sb_take(&b);
        fputs(out, stdout);
        free(out);
    }
    free(vjson);
    if (!bv) {
        rc = KF_EXIT_VARIANT;
        goto out;
    }
    if (no_db)
        goto out;
    /* the fastest at each size, as tune records it */
    char dir[PATH_MAX], err[1024];
    if (db)
        snprintf(dir, sizeof dir, "%s", db);
    else if (tunedb_default_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "kforge merge: no tuning database directory (set KFORGE_DB or HOME, or give --db or --no-db)\n");
        rc = KF_EXIT_IO;
        goto out;
    }
    tunedb_entry *es = calloc((size_t)nsizes * 2 + 1, sizeof *es);
    pick_cand *pc = calloc((size_t)ncand + 1, sizeof *pc);
    if (!es || !pc) {
        free(es);
        free(pc);
        rc = KF_EXIT_IO;
        goto out;
    }
    char date[32], how[512];
    kf_iso_time(date, sizeof date);
    snprintf(how, sizeof how, "kforge merge of %d results files of %.300s: fastest at this size of the %d variants "
                              "measured there",
             nfiles, e0->config, ncand);
    int ne = 0;
    for (int k = 0; k < nsizes; k++) {
        int np = 0;
        for (int c = 0; c < ncand; c++) {
            int ri = cs[c].cell[k];
            if (ri < 0)
                continue;
            const kf_result *r = &s->v[ri].r;
            pc[np++] = (pick_cand){.v = &r->v, .shape = r->shape, .status = r->status,
                                   .median_ms = r->stats.median_ms, .gbps = r->stats.gbps,
                                   .pct_peak = r->stats.pct_peak, .gflops = r->stats.gflops, .blocks = r->blocks,
                                   .launches = r->launches,
                                   .deterministic = r->deterministic, .failed_elsewhere = cs[c].failed,
                                   .has_acc = r->acc_bound > 0 && isfinite(r->acc_rel), .acc_rel = r->acc_rel,
                                   .source_hash = r->source_hash};
        }
        ne += pick_size_entries(pc, np, &s->v[cs[best].first].dev, date, how, &es[ne]);
    }
    free(pc);
    int w = ne ? tunedb_update(dir, es, ne, err, sizeof err) : 0;
    if (w < 0) {
        fprintf(stderr, "kforge merge: tuning database not updated: %s\n", err);
        rc = KF_EXIT_IO;
    } else if (ne && !quiet) {
        char stem[256];
        tunedb_stem(es[0].dev.name, stem, sizeof stem);
        fprintf(stderr, "kforge merge: tuning database %s/%s.json: %d of %d size%s updated%s\n", dir, stem, w, ne,
                ne == 1 ? "" : "s", w < ne ? " (it already held faster variants)" : "");
    }
    free(es);
out:
    free(sizes);
    free(cs);
    free(cells);
    return rc;
}

// ---------------------------------------------------------------------------

/* Writes the merged lines to a new file (refused if it exists): to a
 * temporary name beside it first, linked to path only once whole (link()
 * never replaces a file), so that a full disk, a file-size limit, a signal
 * or kill -9 never leaves a partial path, which the same command would then
 * refuse as existing.  A temporary file that could not be finished is
 * removed (kill -9 leaves path.tmp.PID, never path). */
static int write_merged(const recset *s, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        kf_err(err, errlen, "%s exists; give a new file for the merged results", path);
        return -1;
    }
    if (errno != ENOENT) {
        kf_err(err, errlen, "%s: cannot create the results file: %s", path, strerror(errno));
        return -1;
    }
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot create the results file (%s): %s", path, tmp, strerror(errno));
        return -1;
    }
    close(fd);
    results_file *rf = results_open(tmp, err, errlen);
    int rc = rf ? 0 : -1;
    for (int i = 0; i < s->n && rc == 0; i++) {
        if (kf_interrupted) {
            kf_err(err, errlen, "%s: interrupted; not written", path);
            rc = -1;
            break;
        }
        rc = results_append(rf, s->v[i].line, err, errlen);
    }
    results_close(rf);
    if (rc == 0 && link(tmp, path) != 0) {
        int e = errno;
        if (e == EEXIST) {
            kf_err(err, errlen, "%s exists; give a new file for the merged results", path);
            rc = -1;
        } else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
            /* a file system without hard links, nor rename without replacing */
            kf_err(err, errlen, "%s: cannot create the results file: %s", path,
                   strerror(errno == EEXIST ? EEXIST : e));
            rc = -1;
        }
    }
    if (rc != 0) { /* the message names path, not the temporary name */
        size_t tl = strlen(tmp);
        if (strncmp(err, tmp, tl) == 0) {
            char rest[1024];
            snprintf(rest, sizeof rest, "%s", err + tl);
            kf_err(err, errlen, "%s%s", path, rest);
        }
    }
    unlink(tmp);
    return rc;
}

/* Worst first: usage and I/O errors over failed groups over success. */
static int worse(int a, int b)
{
    static const int rank[] = {KF_EXIT_OK, KF_EXIT_VARIANT, KF_EXIT_IO, KF_EXIT_USAGE};
    int ra = 0, rb = 0;
    for (int i = 0; i < 4; i++) {
        if (rank[i] == a)
            ra = i;
        if (rank[i] == b)
            rb = i;
    }
    return ra >= rb ? a : b;
}

int cmd_merge(int argc, char **argv)
{
    const char *out_path = NULL, *db = NULL;
    bool no_db = false, quiet = false;
    kf_format fmt = KF_FMT_TABLE;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0;
    if (!files) {
        fprintf(stderr, "kforge merge: out of memory\n");
        return KF_EXIT_USAGE;
    }
    cli c;
    cli_init(&c, argc, argv);
    const char *val;
    while (cli_next(&c)) {
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(merge_help, stdout);
            free((void *)files);
            return KF_EXIT_OK;
        } else if (cli_value(&c, "--results", &val)) {
            out_path = val;
        } else if (cli_value(&c, "--db", &val)) {
            db = val;
        } else if (cli_flag(&c, "--no-db")) {
            no_db = true;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            if (f < 0 || f == KF_FMT_CSV) {
                cli_fail(&c, "--format: unknown format '%s' (allowed: table, jsonl, json)", val);
                break;
            }
            fmt = (kf_format)f;
        } else if (cli_flag(&c, "--quiet") || cli_flag(&c, "-q")) {
            quiet = true;
        } else if (cli_value(&c, "--kernel", &val)) {
            int fam;
            if (family_from_config("merge", val, &fam) != 0)
                return KF_EXIT_USAGE;
        } else if (cli_positional(&c, &val)) {
            files[nfiles++] = val;
        } else {
            cli_unknown(&c);
            break;
        }
    }
    if (c.error) {
        free((void *)files);
        return KF_EXIT_USAGE;
    }
    if (nfiles == 0) {
        fprintf(stderr, "kforge merge: no results file given\n\n%s", merge_help);
        free((void *)files);
        return KF_EXIT_USAGE;
    }
    int rc = KF_EXIT_OK;
    char err[1024], tmp[PATH_MAX] = "";
    recset s;
    memset(&s, 0, sizeof s);
    int *idx = NULL;
    bool *done = NULL;
    for (int i = 0; i < nfiles; i++)
        if (read_file(&s, files, i) != 0) {
            rc = KF_EXIT_USAGE;
            goto out;
        }
    if (!quiet || s.conflicts)
        fprintf(stderr, "kforge merge: %d file%s: %d cases; %d recorded more than once kept once; %d conflict%s; "
                        "%d unreadable line%s skipped%s\n",
                nfiles, nfiles == 1 ? "" : "s", s.n, s.dups, s.conflicts, s.conflicts == 1 ? "" : "s", s.unreadable,
                s.unreadable == 1 ? "" : "s", s.damaged ? "; damaged lines left out (above)" : "");
    if (s.n == 0) {
        fprintf(stderr, "kforge merge: no results %sin the files given\n",
                s.stale ? "of the current source " : "");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    /* the merged cases, for tune_replay (and --results) */
    const char *merged = out_path;
    if (out_path) {
        if (write_merged(&s, out_path, err, sizeof err) != 0) {
            fprintf(stderr, "kforge merge: %s\n", err);
            rc = KF_EXIT_IO;
            goto out;
        }
    } else {
        snprintf(tmp, sizeof tmp, "%s/kforge-merge-%ld.jsonl", kf_tmpdir(), (long)getpid());
        unlink(tmp);
        if (write_merged(&s, tmp, err, sizeof err) != 0) {
            fprintf(stderr, "kforge merge: %s\n", err);
            rc = KF_EXIT_IO;
            tmp[0] = '\0';
            goto out;
        }
        merged = tmp;
    }
    char label[256];
    if (nfiles <= 3) {
        int o = 0;
        for (int i = 0; i < nfiles; i++)
            o += snprintf(label + o, sizeof label - (size_t)o, "%s%s", i ? ", " : "", files[i]);
    } else {
        snprintf(label, sizeof label, "%s ... %s", files[0], files[nfiles - 1]);
    }

    /* groups: the command and the GPU model (a tuning space), then, for
     * what tune_replay cannot read, the problem and bench settings */
    idx = malloc(sizeof *idx * (size_t)s.n);
    done = calloc((size_t)s.n, sizeof *done);
    if (!idx || !done) {
        fprintf(stderr, "kforge merge: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < s.n; i++) {
        if (done[i])
            continue;
        const rec *e = &s.v[i];
        int n = 0;
        for (int j = i; j < s.n; j++)
            if (!done[j] && strcmp(s.v[j].config, e->config) == 0 &&
                strcmp(s.v[j].r.device_name, e->r.device_name) == 0) {
                idx[n++] = j;
                done[j] = true;
            }
        tune_replay_args a = {.config = e->config, .results = merged, .label = label, .nfiles = nfiles,
                              .dev = e->dev, .db = db, .no_db = no_db, .fmt = fmt, .quiet = quiet};
        int grc = KF_EXIT_OK;
        if (e->config[0] && tune_replay(&a, &grc, err, sizeof err) == 0) {
            rc = worse(rc, grc);
            continue;
        }
        if (!quiet)
            fprintf(stderr, "kforge merge: %s on %s: %s; ranking from the results alone\n",
                    e->config[0] ? e->config : "(no config)", e->r.device_name,
                    e->config[0] ? err : "the results name no config");
        /* rank groups within */
        bool *taken = calloc((size_t)n, sizeof *taken);
        int *sub = malloc(sizeof *sub * (size_t)n);
        if (!taken || !sub) {
            free(taken);
            free(sub);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        for (int a0 = 0; a0 < n; a0++) {
            if (taken[a0])
                continue;
            strbuf k0 = {0};
            rank_key(&s.v[idx[a0]], &k0);
            int m = 0;
            for (int b0 = a0; b0 < n; b0++) {
                if (taken[b0])
                    continue;
                strbuf k1 = {0};
                rank_key(&s.v[idx[b0]], &k1);
                if (strcmp(k0.s, k1.s) == 0) {
                    sub[m++] = idx[b0];
                    taken[b0] = true;
                }
                sb_free(&k1);
            }
            sb_free(&k0);
            rc = worse(rc, rank_alone(&s, sub, m, label, nfiles, db, no_db, fmt, quiet));
        }
        free(taken);
        free(sub);
    }
out:
    if (tmp[0])
        unlink(tmp);
    free(idx);
    free(done);
    recset_free(&s);
    free((void *)files);
    return rc;
}
