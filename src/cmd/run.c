/*
 * run.c -- `kforge run`: generate, compile, verify and time every case of
 * the configs, appending each result to the results file as it finishes,
 * resuming an interrupted run of the same command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "family.h"
#include "report.h"
#include "results.h"
#include "resume.h"
#include "t4.h"
#include "util.h"

static const char *const run_help =
    "usage: kforge run [OPTIONS] CONFIG...     (CONFIG '-' reads standard input)\n"
    "\n"
    "Generates, compiles (NVRTC, cached, several processes), verifies against a CPU reference\n"
    "and times every variant at every size.  Data goes to stdout, messages to stderr.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE     override a config key in every variant (repeatable); VALUE is JSON or\n"
    "                      a bare word: --set block_size=128  --set 'n=[1024,\"2^20\"]'  --set bench.seed=7\n"
    "                      (quote a list: to the shell, n=[1024,2^20] is a file name pattern)\n"
    "  --only NAME[,NAME]  only the variants with these names\n"
    "  --format FMT        table (default), csv, jsonl, json, md (a Markdown table) or t4 (the run's\n"
    "                      cases, resumed ones too, as one T4 document: the Auto-Tuning Association's\n"
    "                      results format, made from the results file)\n"
    "  --no-header         with --format csv: no header line (to append to one file in a loop)\n"
    "  --results FILE      JSON Lines results file, one line per case, flushed as each finishes\n"
    "                      (default: kforge-results.jsonl)\n"
    "  --no-results        write no results file\n"
    "  --resume            skip cases already in the results file from an interrupted run of the\n"
    "                      same configs (the default when the last run was interrupted)\n"
    "  --no-resume         measure everything again\n"
    "  --speedup           table: add step and cumulative speedup columns\n"
    "  --columns COLS      table and md: auto (the default, on a terminal or not: a column for each axis\n"
    "                      that varies, the rest said once above the table) or a list of: axes (those\n"
    "                      that vary), name, kernel, size, status, time, min, noise, gbps, peak, gflops,\n"
    "                      flops_peak, step, cumul, sm, energy, gbpj, note, or an axis or size name:\n"
    "                      --columns block_size,time,gbps (gflops, flops_peak: a custom kernel with\n"
    "                      \"flops\", shown by default for one); csv: a list of CSV columns\n"
    "                      (--columns name,block_size,median_ms,gbps)\n"
    "  --sort KEY          table and md: rows by time, min, noise, gbps, peak, gflops, flops_peak, energy,\n"
    "                      gbpj (the best first), name, kernel, size, status or an axis; -KEY reverses\n"
    "  --timeout SEC       watchdog per case (bench.timeout_s; default 30)\n"
    "  --device N          GPU index (default 0)\n"
    "  --devices LIST      measure on several GPUs at once: 'all' or indices such as 0,2,3 (default\n"
    "                      $KFORGE_DEVICES); one worker per GPU, each case on whichever is free\n"
    "  --shard K/N         measure only the K-th of N balanced slices of the case list (default: the\n"
    "                      Slurm job array's task, from SLURM_ARRAY_TASK_ID and _COUNT); see kforge merge\n"
    OPT_HELP_COMPILE
    "\n"
    "examples:\n"
    "  kforge run configs/seeds.json --speedup\n"
    "  kforge run configs/fast.json --set n=2^30 --format csv > fast.csv\n"
    "  kforge run configs/explore-h100.json --devices all --results explore.jsonl\n"
    "  for bs in 64 128 256; do kforge run cfg.json --set block_size=$bs --format csv --no-header; done\n"
    "  for bs in 64 128 256; do kforge run cfg.json --set block_size=$bs --format jsonl; done \\\n"
    "    | jq -r 'select(.status==\"ok\") | [.block_size, .gbps] | @tsv'\n";

typedef struct {
    report *rep;
    results_file *rf;
    const kf_run_info *info;
    const kf_run_info *dev_info;   /* one per device of the session */
    int ndev;
    int failed, measured;
    report_warnings warn;       /* throttled cases, NVML notes (issue 14) */
    bool fmt_streams;
    char write_error[1024];     /* a result could not be written: the run stops */
    /* rows reach the report in case order whatever device finished first */
    kf_result **early;          /* results that came before an earlier case's */
    int next;                   /* the case the report waits for */
    int *per_device;            /* cases measured on each device */
    run_session *s;             /* the best so far goes to its progress line */
    bool progress;
    double best_gbps;
} run_ctx;

/* A case that failed: a skip is the device's limit, not a failure. */
static bool failed(kf_status st)
{
    return st != KF_ST_OK && st != KF_ST_SKIPPED;
}

static const kf_run_info *info_for(const run_ctx *c, const kf_result *r, int *slot)
{
    *slot = -1;
    for (int i = 0; i < c->ndev; i++)
        if (c->dev_info[i].dev.index == r->device) {
            *slot = i;
            return &c->dev_info[i];
        }
    return c->info;
}

static int on_result(const kf_result *r, int index, void *vctx)
{
    run_ctx *c = vctx;
    if (c->write_error[0])
        return 1;   /* stopped: a case that was in flight on another device */
    c->measured++;
    if (failed(r->status))
        c->failed++;
    int slot;
    const kf_run_info *info = info_for(c, r, &slot);
    if (slot >= 0)
        c->per_device[slot]++;
    if (c->rf) {
        char *line = report_json(r, info);
        int ar = line ? results_append(c->rf, line, c->write_error, sizeof c->write_error) : -1;
        if (!line)
            snprintf(c->write_error, sizeof c->write_error, "out of memory");
        free(line);
        if (ar != 0)
            return 1;   /* stop: nothing measured may be lost */
    }
    if (index == c->next) {
        report_add(c->rep, r);
        for (c->next++; c->early[c->next]; c->next++) {
            report_add(c->rep, c->early[c->next]);
            free(c->early[c->next]);
            c->early[c->next] = NULL;
        }
    } else if ((c->early[index] = malloc(sizeof *r)) != NULL) {
        *c->early[index] = *r;
    } else {
        report_add(c->rep, r);
    }
    if (c->progress && r->status == KF_ST_OK && r->stats.gbps > c->best_gbps) {
        char what[48], note[96]; /* the line stays within a terminal's width */
        c->best_gbps = r->stats.gbps;
        report_describe(c->rep, r, what, sizeof what);
        snprintf(note, sizeof note, "best %.1f GB/s: %s", r->stats.gbps, what);
        run_session_note(c->s, note);
    }
    report_warn(&c->warn, r, stderr);
    if (r->status != KF_ST_OK && !c->fmt_streams) {
        char label[256], st[128];
        family_of(&r->v)->label(&r->v, label, sizeof label);
        shape_text(family_of(&r->v), &r->shape, st, sizeof st);
        const char *sn = kf_status_names[r->status]; /* "skipped: ..." says it once */
        bool said = strncmp(r->message, sn, strlen(sn)) == 0 && r->message[strlen(sn)] == ':';
        char msg[sizeof r->message * 4];
        fprintf(stderr, "kforge: %s%s%s %s: %s%s%s\n", r->v.name, r->v.name[0] ? " " : "", label, st, said ? "" : sn,
                said ? "" : ": ", kf_printable(r->message, msg, sizeof msg));
    }
    return 0;
}

/* Rows still waiting for an earlier case (one that was never measured:
 * interrupted, stopped). */
static void flush_early(run_ctx *c, int n)
{
    for (int i = 0; i < n; i++)
        if (c->early[i]) {
            report_add(c->rep, c->early[i]);
            free(c->early[i]);
            c->early[i] = NULL;
        }
}

static void make_run_info(kf_run_info *info, const opts *o)
{
    memset(info, 0, sizeof *info);
    kf_iso_time(info->time, sizeof info->time);
    snprintf(info->run_id, sizeof info->run_id, "%s-%ld", info->time, (long)getpid());
    gethostname(info->host, sizeof info->host - 1);
    strbuf b = {0};
    for (int i = 0; i < o->nconfigs; i++)
        sb_printf(&b, "%s%s", i ? " " : "", o->configs[i]);
    for (int i = 0; i < o->nsets; i++)
        sb_printf(&b, " --set %s", o->sets[i]);
    char *s = sb_take(&b);
    snprintf(info->config, sizeof info->config, "%s", s);
    free(s);
}


// ----------------------------------------------------------------------------
// The command, step by step: validate every config, open the devices, expand
// the cases for them, open the results file (resuming) and the report, then
// measure config by config and say how it ended.

typedef struct {
    opts o;
    kf_config *cfgs;
    kf_space *spaces;
    kf_variant first_v;         /* the first case: its input is made while the devices open */
    kf_run_info info;
    run_session *s;
    kf_run_info *dev_info;      /* one run info per device: a results line names the GPU it ran on */
    int *per_device;
    int ndev;
    const char *models[KF_MAX_DEVICES]; /* the distinct GPU models: a case measured on any of them resumes */
    int nmodels;
    resume_state rs;
    char *identity;
    results_file *rf;
    report *rep;
    run_ctx ctx;
    kf_strset seen;             /* case identities of earlier configs: a case given twice is measured once */
    int total, skipped_done, duplicates, other_shards;
    long long ord;              /* cases of the whole command, for --shard */
    bool interrupted;
    char err[1024];
    FILE *sink;                 /* --format t4: where the table goes (/dev/null) */
} run_cmd;

static int oom(void)
{
    fprintf(stderr, "kforge: out of memory\n");
    return KF_EXIT_USAGE;
}

/* Everything is validated before anything runs. */
static int validate(run_cmd *c)
{
    if (load_configs(&c->o, c->cfgs) != 0)
        return KF_EXIT_USAGE;
    /* --columns and --sort name columns of the families the configs
     * registered too (a custom kernel's parameters) */
    if ((c->o.columns && report_columns_check(c->o.columns, c->o.fmt, c->err, sizeof c->err) != 0) ||
        (c->o.sort && report_sort_check(c->o.sort, c->err, sizeof c->err) != 0)) {
        fprintf(stderr, "kforge run: %s\n", c->err);
        return KF_EXIT_USAGE;
    }
    for (int i = 0; i < c->o.nconfigs; i++) {
        kf_space *sp = &c->spaces[i];
        if (space_expand(&c->cfgs[i], NULL, sp, c->err, sizeof c->err) != 0) {
            fprintf(stderr, "kforge: %s\n", c->err);
            return kf_interrupted ? KF_EXIT_INTERRUPT : KF_EXIT_USAGE;
        }
        if (!c->o.ro.ahead_v && sp->ncases > 0) {
            c->first_v = sp->variants[sp->cases[0].variant];
            c->o.ro.ahead_v = &c->first_v;
            c->o.ro.ahead_shape = sp->cases[0].shape;
            c->o.ro.ahead_b = &c->cfgs[i].bench;
        }
        space_free(sp);
    }
    return KF_EXIT_OK;
}

static int open_devices(run_cmd *c)
{
    make_run_info(&c->info, &c->o);
    bool nodev = false;
    c->s = run_session_new(&c->o.ro, &c->info.dev, &nodev, c->err, sizeof c->err);
    if (!c->s) {
        fprintf(stderr, "kforge: %s\n", c->err);
        if (nodev)
            run_nodev_hint();
        return nodev ? KF_EXIT_NODEV : KF_EXIT_USAGE;
    }
    c->info.have_dev = true;
    const kf_device *devs = run_session_devices(c->s, &c->ndev);
    c->dev_info = calloc((size_t)c->ndev, sizeof *c->dev_info);
    c->per_device = calloc((size_t)c->ndev, sizeof *c->per_device);
    if (!c->dev_info || !c->per_device)
        return oom();
    for (int i = 0; i < c->ndev; i++) {
        c->dev_info[i] = c->info;
        c->dev_info[i].dev = devs[i];
    }
    if (c->ndev > 1 && !c->o.quiet) {
        fprintf(stderr, "kforge: measuring on %d GPUs:", c->ndev);
        for (int i = 0; i < c->ndev; i++)
            fprintf(stderr, "%s %d (%s)", i ? "," : "", devs[i].index, devs[i].name);
        fprintf(stderr, "\n");
    }
    for (int i = 0; i < c->ndev; i++) {
        int k = 0;
        while (k < c->nmodels && strcmp(c->models[k], devs[i].name) != 0)
            k++;
        if (k == c->nmodels)
            c->models[c->nmodels++] = devs[i].name;
    }
    return KF_EXIT_OK;
}

/* The cases again, now with the device's limits; --only. */
static int expand_for_device(run_cmd *c)
{
    for (int i = 0; i < c->o.nconfigs; i++) {
        if (space_expand(&c->cfgs[i], &c->info.dev, &c->spaces[i], c->err, sizeof c->err) != 0) {
            fprintf(stderr, "kforge: %s\n", c->err);
            return kf_interrupted ? KF_EXIT_INTERRUPT : KF_EXIT_USAGE;
        }
        print_skipped(&c->spaces[i], c->cfgs[i].path, 0);
    }
    return select_only(&c->o, c->spaces, c->o.nconfigs) != 0 ? KF_EXIT_USAGE : KF_EXIT_OK;
}

static int open_results(run_cmd *c)
{
    if (c->o.no_results)
        return KF_EXIT_OK;
    c->identity = command_identity("run", &c->o, c->cfgs);
    if (!c->identity || resume_begin(&c->rs, c->o.results, c->identity, c->o.resume, c->err, sizeof c->err) != 0) {
        fprintf(stderr, "kforge: %s\n", c->identity ? c->err : "out of memory");
        return KF_EXIT_IO;
    }
    resume_note_stale(&c->rs, "kforge", c->o.results);
    c->rf = results_open(c->o.results, c->err, sizeof c->err);
    if (!c->rf) {
        fprintf(stderr, "kforge: %s\n", c->err);
        return KF_EXIT_IO;
    }
    return KF_EXIT_OK;
}

static int open_report(run_cmd *c)
{
    /* a table shows what varies, on a terminal or not; on a terminal it
     * prints each row as its case finishes, with colour and a progress line */
    const opts *o = &c->o;
    bool tty = isatty(1);
    report_opts ropt = {.speedup = o->speedup,
                        .color = tty && !getenv("NO_COLOR"),
                        .columns = o->columns ? o->columns : o->fmt == KF_FMT_CSV ? NULL : "auto",
                        .sort = o->sort,
                        .stream = tty && o->fmt == KF_FMT_TABLE && !o->sort,
                        .no_header = o->no_header};
    if (o->t4 && !(c->sink = fopen("/dev/null", "w"))) {
        fprintf(stderr, "kforge run: --format t4: cannot open /dev/null\n");
        return KF_EXIT_IO;
    }
    c->rep = report_new(o->t4 ? c->sink : stdout, o->fmt, &c->info, &ropt);
    if (!c->rep)
        return oom();
    /* the columns of a streamed table and the progress line's words come
     * from the cases, known before any is measured */
    if (ropt.stream || o->ro.progress)
        for (int i = 0; i < o->nconfigs; i++)
            for (int k = 0; k < c->spaces[i].ncases; k++)
                report_expect(c->rep, &c->spaces[i].variants[c->spaces[i].cases[k].variant],
                              &c->spaces[i].cases[k].shape, &c->cfgs[i].bench);
    c->ctx = (run_ctx){.rep = c->rep, .rf = c->rf, .info = &c->info, .dev_info = c->dev_info, .ndev = c->ndev,
                       .fmt_streams = false, .per_device = c->per_device, .s = c->s, .progress = o->ro.progress};
    return KF_EXIT_OK;
}

/* The cases of config i still to measure, into todo: not those an earlier
 * config of this command has, nor another shard's; those the interrupted
 * run we resume measured go to the report as they were. */
static int cases_to_measure(run_cmd *c, int i, kf_case *todo)
{
    const kf_space *sp = &c->spaces[i];
    const kf_bench *bench = &c->cfgs[i].bench;
    int ntodo = 0;
    for (int k = 0; k < sp->ncases; k++) {
        if ((k & 4095) == 0 && kf_interrupted) {   /* a large space takes seconds here */
            c->interrupted = true;
            break;
        }
        const kf_variant *v = &sp->variants[sp->cases[k].variant];
        char key[2048];
        results_case_key(v, &sp->cases[k].shape, bench, c->info.dev.name, key, sizeof key);
        bool added = true;
        kf_strset_add(&c->seen, key, &added);
        if (!added) {
            c->duplicates++;
            continue;
        }
        if (!shard_has(&c->o.shard, c->ord++)) {
            c->other_shards++;
            continue;
        }
        c->total++;
        const kf_result *prev = NULL;
        for (int m = 0; m < c->nmodels && !prev && c->rs.ndone > 0; m++)
            prev = resume_find(&c->rs, v, &sp->cases[k].shape, bench, c->models[m]);
        if (prev) {
            report_add(c->rep, prev);
            if (failed(prev->status))
                c->ctx.failed++;
            c->skipped_done++;
        } else {
            todo[ntodo++] = sp->cases[k];
        }
    }
    return ntodo;
}

/* Measures config i: KF_EXIT_OK to go on (c->interrupted, or a write error
 * in c->ctx, stop the loop), else the exit code that ends it. */
static int measure_config(run_cmd *c, int i)
{
    kf_space *sp = &c->spaces[i];
    kf_case *todo = malloc(sizeof *todo * (size_t)(sp->ncases > 0 ? sp->ncases : 1));
    if (!todo)
        return oom();
    int ntodo = cases_to_measure(c, i, todo);
    if (c->interrupted) {
        free(todo);
        return KF_EXIT_OK;
    }
    run_ctx *ctx = &c->ctx;
    ctx->early = calloc((size_t)ntodo + 1, sizeof *ctx->early);
    if (!ctx->early) {
        free(todo);
        return oom();
    }
    ctx->next = 0;
    int mr = run_session_measure(c->s, sp->variants, sp->nvariants, todo, ntodo, &c->cfgs[i].bench, on_result, ctx,
                                 c->err, sizeof c->err);
    flush_early(ctx, ntodo);
    free(ctx->early);
    ctx->early = NULL;
    free(todo);
    if (mr < 0) {
        if (!kf_interrupted && !kf_output_broken) {
            fprintf(stderr, "kforge: %s\n", c->err);
            return KF_EXIT_NODEV;
        }
        c->interrupted = true;
    }
    return KF_EXIT_OK;
}

static int measure_all(run_cmd *c)
{
    for (int i = 0; i < c->o.nconfigs && !c->interrupted && !c->ctx.write_error[0]; i++) {
        int rc = measure_config(c, i);
        if (rc != KF_EXIT_OK)
            return rc;
    }
    return KF_EXIT_OK;
}

/* The table's end, what the run did, and its exit code. */
static int conclude(run_cmd *c, int rc)
{
    const run_ctx *ctx = &c->ctx;
    report_finish(c->rep);
    if (c->o.shard.n > 1)
        fprintf(stderr, "kforge: %s: %d of %d cases in this shard (%d in the others); kforge merge combines the "
                        "shards' results files\n",
                c->o.shard.how, c->total, c->total + c->other_shards, c->other_shards);
    if (ctx->ndev > 1 && !c->o.quiet) {
        fprintf(stderr, "kforge: cases measured per GPU:");
        for (int i = 0; i < ctx->ndev; i++)
            fprintf(stderr, "%s %d: %d", i ? "," : "", c->dev_info[i].dev.index, c->per_device[i]);
        fprintf(stderr, "\n");
    }
    report_warn_end(&ctx->warn, stderr);
    if (c->duplicates)
        fprintf(stderr, "kforge: %d case%s given more than once measured once\n", c->duplicates,
                c->duplicates == 1 ? "" : "s");
    if (c->skipped_done)
        fprintf(stderr, "kforge: resumed: %d case%s taken from %s, %d measured now\n", c->skipped_done,
                c->skipped_done == 1 ? "" : "s", c->o.results, ctx->measured);
    int done = ctx->measured + c->skipped_done;
    if (ctx->write_error[0]) {
        fprintf(stderr, "kforge: %s; the run stopped after %d of %d cases (the lines written before are intact)\n",
                ctx->write_error, done - 1, c->total);
        return KF_EXIT_IO;
    }
    if (c->interrupted) {
        const char *why = kf_output_broken && !kf_interrupted ? "standard output closed" : "interrupted";
        if (c->rf)
            fprintf(stderr, "kforge: %s after %d of %d cases; results are in %s; run the same command to resume\n",
                    why, done, c->total, c->o.results);
        else
            fprintf(stderr, "kforge: %s after %d of %d cases; the cases measured were printed; with --no-results "
                            "there is no results file to resume from\n",
                    why, done, c->total);
        return KF_EXIT_INTERRUPT; /* `| head`: exit KF_EXIT_PIPE, with no error message (dispatch.c) */
    }
    if (rc == KF_EXIT_OK) {
        resume_end(&c->rs);
        if (ctx->failed)
            rc = KF_EXIT_VARIANT;
    }
    return rc;
}

static void run_cmd_free(run_cmd *c)
{
    free(c->dev_info);
    free(c->per_device);
    report_free(c->rep);
    results_close(c->rf);
    resume_free(&c->rs);
    run_session_free(c->s);
    kf_strset_free(&c->seen);
    free(c->identity);
    if (c->spaces)
        for (int i = 0; i < c->o.nconfigs; i++)
            space_free(&c->spaces[i]);
    if (c->cfgs)
        free_configs(c->cfgs, c->o.nconfigs);
    free(c->cfgs);
    free(c->spaces);
}

int cmd_run(int argc, char **argv)
{
    static run_cmd zero;
    run_cmd *c = malloc(sizeof *c);
    if (!c)
        return oom();
    *c = zero;
    opts_init(&c->o);
    int rc = parse_opts(argc, argv, run_help,
                        OPT_SET | OPT_ONLY | OPT_FORMAT | OPT_CSV | OPT_MD | OPT_T4 | OPT_RESULTS | OPT_SPEEDUP | OPT_TABLE |
                            OPT_MEASURE | OPT_MULTI | OPT_QUIET | OPT_CONFIGS,
                        &c->o);
    if (rc != 0) {
        free(c);
        return rc > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    }
    if (c->o.t4 && c->o.no_results) {
        fprintf(stderr, "kforge run: --format t4 is made from the results file: not with --no-results\n");
        free(c);
        return KF_EXIT_USAGE;
    }
    if (c->o.nconfigs == 0) {
        fprintf(stderr, "kforge run: no config file given\n%s", run_help);
        free(c);
        return KF_EXIT_USAGE;
    }
    resume_init(&c->rs);
    c->cfgs = calloc((size_t)c->o.nconfigs, sizeof *c->cfgs);
    c->spaces = calloc((size_t)c->o.nconfigs, sizeof *c->spaces);
    rc = c->cfgs && c->spaces ? KF_EXIT_OK : oom();
    if (rc == KF_EXIT_OK)
        rc = validate(c);
    if (rc == KF_EXIT_OK)
        rc = open_devices(c);
    if (rc == KF_EXIT_OK)
        rc = expand_for_device(c);
    if (rc == KF_EXIT_OK)
        rc = open_results(c);
    if (rc == KF_EXIT_OK)
        rc = open_report(c);
    if (rc == KF_EXIT_OK)
        rc = conclude(c, measure_all(c));
    if (c->o.t4 && (rc == KF_EXIT_OK || rc == KF_EXIT_VARIANT)) { /* the run's cases, resumed ones too */
        char err[512];
        if (t4_write(stdout, c->o.results, c->info.config, err, sizeof err) != 0) {
            fprintf(stderr, "kforge run: --format t4: %s\n", err);
            rc = KF_EXIT_IO;
        }
    }
    if (c->sink)
        fclose(c->sink);
    run_cmd_free(c);
    free(c);
    return rc;
}
