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
    "  --format FMT        table (default), csv, jsonl, json or md (a Markdown table)\n"
    "  --no-header         with --format csv: no header line (to append to one file in a loop)\n"
    "  --results FILE      JSON Lines results file, one line per case, flushed as each finishes\n"
    "                      (default: kforge-results.jsonl)\n"
    "  --no-results        write no results file\n"
    "  --resume            skip cases already in the results file from an interrupted run of the\n"
    "                      same configs (the default when the last run was interrupted)\n"
    "  --no-resume         measure everything again\n"
    "  --speedup           table: add step and cumulative speedup columns\n"
    "  --columns COLS      table and md: auto (a column for each axis that varies, the rest said once\n"
    "                      above the table; the default on a terminal) or a list of: axes (those that\n"
    "                      vary), name, kernel, size, status, time, min, noise, gbps, peak, step, cumul,\n"
    "                      sm, energy, gbpj, note, or an axis or size name: --columns block_size,time,gbps\n"
    "  --sort KEY          table and md: rows by time, min, noise, gbps, peak, energy, gbpj (the best\n"
    "                      first), name, kernel, size, status or an axis; -KEY reverses\n"
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
    if (r->status != KF_ST_OK && r->status != KF_ST_SKIPPED) /* a skip is the device's limit, not a failure */
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
        fprintf(stderr, "kforge: %s%s%s %s: %s: %s\n", r->v.name, r->v.name[0] ? " " : "", label, st,
                kf_status_names[r->status], r->message);
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


int cmd_run(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, run_help,
                        OPT_SET | OPT_ONLY | OPT_FORMAT | OPT_CSV | OPT_MD | OPT_RESULTS | OPT_SPEEDUP | OPT_TABLE |
                            OPT_MEASURE | OPT_MULTI | OPT_QUIET | OPT_CONFIGS,
                        &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs == 0) {
        fprintf(stderr, "kforge run: no config file given\n%s", run_help);
        return KF_EXIT_USAGE;
    }
    int rc = KF_EXIT_OK;
    char err[1024];
    kf_config *cfgs = calloc((size_t)o.nconfigs, sizeof *cfgs);
    kf_space *spaces = calloc((size_t)o.nconfigs, sizeof *spaces);
    run_session *s = NULL;
    report *rep = NULL;
    results_file *rf = NULL;
    char *identity = NULL;
    kf_run_info *dev_info = NULL;
    int *per_device = NULL;
    kf_strset seen = {0};   /* case identities of earlier configs: a case given twice is measured once */
    resume_state rs;
    resume_init(&rs);
    if (!cfgs || !spaces) {
        fprintf(stderr, "kforge: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }

    /* Everything is validated before anything runs. */
    if (load_configs(&o, cfgs) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    kf_variant first_v; /* the first case: its input is made while the devices open */
    for (int i = 0; i < o.nconfigs; i++) {
        if (space_expand(&cfgs[i], NULL, &spaces[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = kf_interrupted ? KF_EXIT_INTERRUPT : KF_EXIT_USAGE;
            goto out;
        }
        if (!o.ro.ahead_v && spaces[i].ncases > 0) {
            first_v = spaces[i].variants[spaces[i].cases[0].variant];
            o.ro.ahead_v = &first_v;
            o.ro.ahead_shape = spaces[i].cases[0].shape;
            o.ro.ahead_b = &cfgs[i].bench;
        }
        space_free(&spaces[i]);
    }

    kf_run_info info;
    make_run_info(&info, &o);
    bool nodev = false;
    s = run_session_new(&o.ro, &info.dev, &nodev, err, sizeof err);
    if (!s) {
        fprintf(stderr, "kforge: %s\n", err);
        if (nodev)
            run_nodev_hint();
        rc = nodev ? KF_EXIT_NODEV : KF_EXIT_USAGE;
        goto out;
    }
    info.have_dev = true;
    /* one run info per device: a results line names the GPU it ran on */
    int ndev;
    const kf_device *devs = run_session_devices(s, &ndev);
    dev_info = calloc((size_t)ndev, sizeof *dev_info);
    per_device = calloc((size_t)ndev, sizeof *per_device);
    if (!dev_info || !per_device) {
        fprintf(stderr, "kforge: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < ndev; i++) {
        dev_info[i] = info;
        dev_info[i].dev = devs[i];
    }
    if (ndev > 1 && !o.quiet) {
        fprintf(stderr, "kforge: measuring on %d GPUs:", ndev);
        for (int i = 0; i < ndev; i++)
            fprintf(stderr, "%s %d (%s)", i ? "," : "", devs[i].index, devs[i].name);
        fprintf(stderr, "\n");
    }
    /* the distinct GPU models: a case measured on any of them resumes */
    const char *models[KF_MAX_DEVICES];
    int nmodels = 0;
    for (int i = 0; i < ndev; i++) {
        int k = 0;
        while (k < nmodels && strcmp(models[k], devs[i].name) != 0)
            k++;
        if (k == nmodels)
            models[nmodels++] = devs[i].name;
    }
    for (int i = 0; i < o.nconfigs; i++) {
        /* again, now with the device's limits */
        if (space_expand(&cfgs[i], &info.dev, &spaces[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = kf_interrupted ? KF_EXIT_INTERRUPT : KF_EXIT_USAGE;
            goto out;
        }
        print_skipped(&spaces[i], cfgs[i].path, false);
    }
    if (select_only(&o, spaces, o.nconfigs) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }

    if (!o.no_results) {
        identity = command_identity("run", &o, cfgs);
        if (!identity || resume_begin(&rs, o.results, identity, o.resume, err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", identity ? err : "out of memory");
            rc = KF_EXIT_IO;
            goto out;
        }
        rf = results_open(o.results, err, sizeof err);
        if (!rf) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_IO;
            goto out;
        }
    }

    /* on a terminal, a table shows what varies and prints each row as its
     * case finishes; piped, it is what scripts have always read */
    bool tty = isatty(1);
    report_opts ropt = {.speedup = o.speedup,
                        .color = tty && !getenv("NO_COLOR"),
                        .columns = o.columns ? o.columns : tty ? "auto" : NULL,
                        .sort = o.sort,
                        .stream = tty && o.fmt == KF_FMT_TABLE && !o.sort,
                        .no_header = o.no_header};
    rep = report_new(stdout, o.fmt, &info, &ropt);
    if (!rep) {
        fprintf(stderr, "kforge: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    /* the columns of a streamed table and the progress line's words come
     * from the cases, known before any is measured */
    if (ropt.stream || o.ro.progress)
        for (int i = 0; i < o.nconfigs; i++)
            for (int k = 0; k < spaces[i].ncases; k++)
                report_expect(rep, &spaces[i].variants[spaces[i].cases[k].variant], &spaces[i].cases[k].shape,
                              &cfgs[i].bench);
    run_ctx ctx = {.rep = rep, .rf = rf, .info = &info, .dev_info = dev_info, .ndev = ndev, .fmt_streams = false,
                   .per_device = per_device, .s = s, .progress = o.ro.progress};
    int total = 0, skipped_done = 0, duplicates = 0, other_shards = 0;
    long long ord = 0;  /* cases of the whole command, for --shard */
    bool interrupted = false;
    for (int i = 0; i < o.nconfigs && !interrupted; i++) {
        kf_space *sp = &spaces[i];
        const kf_bench *bench = &cfgs[i].bench;
        /* cases already measured by the interrupted run we resume, and
         * cases an earlier config of this command already has */
        kf_case *todo = malloc(sizeof *todo * (size_t)(sp->ncases > 0 ? sp->ncases : 1));
        if (!todo) {
            fprintf(stderr, "kforge: out of memory\n");
            rc = KF_EXIT_USAGE;
            goto finish;
        }
        int ntodo = 0;
        for (int k = 0; k < sp->ncases; k++) {
            if ((k & 4095) == 0 && kf_interrupted) {   /* a large space takes seconds here */
                interrupted = true;
                break;
            }
            const kf_variant *v = &sp->variants[sp->cases[k].variant];
            char key[2048];
            results_case_key(v, &sp->cases[k].shape, bench, info.dev.name, key, sizeof key);
            bool added = true;
            kf_strset_add(&seen, key, &added);
            if (!added) {
                duplicates++;
                continue;
            }
            if (!shard_has(&o.shard, ord++)) {
                other_shards++;
                continue;
            }
            total++;
            const kf_result *prev = NULL;
            for (int m = 0; m < nmodels && !prev && rs.ndone > 0; m++)
                prev = resume_find(&rs, v, &sp->cases[k].shape, bench, models[m]);
            if (prev) {
                report_add(rep, prev);
                if (prev->status != KF_ST_OK)
                    ctx.failed++;
                skipped_done++;
            } else {
                todo[ntodo++] = sp->cases[k];
            }
        }
        if (interrupted) {
            free(todo);
            break;
        }
        ctx.early = calloc((size_t)ntodo + 1, sizeof *ctx.early);
        if (!ctx.early) {
            free(todo);
            fprintf(stderr, "kforge: out of memory\n");
            rc = KF_EXIT_USAGE;
            goto finish;
        }
        ctx.next = 0;
        int mr = run_session_measure(s, sp->variants, sp->nvariants, todo, ntodo, bench, on_result, &ctx, err,
                                     sizeof err);
        flush_early(&ctx, ntodo);
        free(ctx.early);
        ctx.early = NULL;
        free(todo);
        if (mr < 0) {
            if (kf_interrupted || kf_output_broken) {
                interrupted = true;
            } else {
                fprintf(stderr, "kforge: %s\n", err);
                rc = KF_EXIT_NODEV;
                goto finish;
            }
        } else if (mr == 1 && ctx.write_error[0]) {
            break;
        }
    }
finish:
    report_finish(rep);
    if (o.shard.n > 1)
        fprintf(stderr, "kforge: %s: %d of %d cases in this shard (%d in the others); kforge merge combines the "
                        "shards' results files\n",
                o.shard.how, total, total + other_shards, other_shards);
    if (ctx.ndev > 1 && !o.quiet) {
        fprintf(stderr, "kforge: cases measured per GPU:");
        for (int i = 0; i < ctx.ndev; i++)
            fprintf(stderr, "%s %d: %d", i ? "," : "", dev_info[i].dev.index, per_device[i]);
        fprintf(stderr, "\n");
    }
    report_warn_end(&ctx.warn, stderr);
    if (duplicates)
        fprintf(stderr, "kforge: %d case%s given more than once measured once\n", duplicates,
                duplicates == 1 ? "" : "s");
    if (skipped_done)
        fprintf(stderr, "kforge: resumed: %d case%s taken from %s, %d measured now\n", skipped_done,
                skipped_done == 1 ? "" : "s", o.results, ctx.measured);
    if (ctx.write_error[0]) {
        fprintf(stderr, "kforge: %s; the run stopped after %d of %d cases (the lines written before are intact)\n",
                ctx.write_error, ctx.measured - 1 + skipped_done, total);
        rc = KF_EXIT_IO;
    } else if (interrupted) {
        const char *why = kf_output_broken && !kf_interrupted ? "standard output closed" : "interrupted";
        if (rf)
            fprintf(stderr, "kforge: %s after %d of %d cases; results are in %s; run the same command to resume\n",
                    why, ctx.measured + skipped_done, total, o.results);
        else
            fprintf(stderr, "kforge: %s after %d of %d cases; the cases measured were printed; with --no-results "
                            "there is no results file to resume from\n",
                    why, ctx.measured + skipped_done, total);
        rc = KF_EXIT_INTERRUPT;
    } else if (rc == KF_EXIT_OK) {
        resume_end(&rs);
        if (ctx.failed)
            rc = KF_EXIT_VARIANT;
    }
out:
    free(dev_info);
    free(per_device);
    report_free(rep);
    results_close(rf);
    resume_free(&rs);
    run_session_free(s);
    kf_strset_free(&seen);
    free(identity);
    if (spaces)
        for (int i = 0; i < o.nconfigs; i++)
            space_free(&spaces[i]);
    if (cfgs)
        free_configs(cfgs, o.nconfigs);
    free(cfgs);
    free(spaces);
    return rc;
}
