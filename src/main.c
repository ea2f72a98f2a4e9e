/*
 * main.c -- the kforge command line: run, gen, check, info, tune, best.
 *
 *   kforge run configs/seeds.json
 *   kforge run cfg.json --set block_size=128 --format jsonl
 *   kforge gen cfg.json
 *   kforge check cfg.json --compile --arch sm_90
 *   kforge info
 *
 * Only this file turns failures into exit codes (kforge.h: KF_EXIT_*).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "codegen.h"
#include "config.h"
#include "report.h"
#include "resume.h"
#include "rtc.h"
#include "run.h"
#include "space.h"
#include "tune.h"
#include "util.h"
#include "worker.h"

// ---------------------------------------------------------------------------
// help texts

static const char *const main_help =
    "kforge " KF_VERSION " -- generate, compile, verify and time GPU reduction kernels\n"
    "\n"
    "usage: kforge COMMAND [OPTIONS] ...\n"
    "\n"
    "commands:\n"
    "  run CONFIG...     generate, compile, verify and time every variant of the configs\n"
    "  gen CONFIG        print the generated CUDA source of every variant\n"
    "  check CONFIG...   validate configs and list their variants (no GPU); --compile compiles them\n"
    "  info              the GPU's properties, driver and NVRTC versions\n"
    "  tune SPACE        search a space of variants for the fastest (autotuning)\n"
    "  best              print the best known variant from the tuning database\n"
    "\n"
    "Run 'kforge COMMAND --help' for a command's options and examples.\n"
    "\n"
    "exit codes: 0 all good; 1 some variant failed to compile, launch or verify (the others\n"
    "ran); 2 usage or configuration error; 3 no usable GPU, driver or NVRTC; 130 interrupted.\n";

static const char *const run_help =
    "usage: kforge run [OPTIONS] CONFIG...     (CONFIG '-' reads standard input)\n"
    "\n"
    "Generates, compiles (NVRTC, cached, several processes), verifies against a CPU reference\n"
    "and times every variant at every size.  Data goes to stdout, messages to stderr.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE     override a config key in every variant (repeatable); VALUE is JSON or\n"
    "                      a bare word: --set block_size=128  --set n=[1024,4096]  --set bench.seed=7\n"
    "  --format FMT        table (default), csv, jsonl or json\n"
    "  --results FILE      JSON Lines results file, one line per case, flushed as each finishes\n"
    "                      (default: kforge-results.jsonl)\n"
    "  --no-results        write no results file\n"
    "  --resume            skip cases already in the results file from an interrupted run of the\n"
    "                      same configs (the default when the last run was interrupted)\n"
    "  --no-resume         measure everything again\n"
    "  --speedup           table: add step and cumulative speedup columns\n"
    "  --timeout SEC       watchdog per case (bench.timeout_s; default 30)\n"
    "  --device N          GPU index (default 0)\n"
    "  --jobs N            compiler processes (default: number of CPUs)\n"
    "  --cache-dir DIR     cubin cache (default $KFORGE_CACHE_DIR or ~/.cache/kforge)\n"
    "  --no-cache          compile everything afresh\n"
    "  --lineinfo          compile with -lineinfo (for compute-sanitizer and ncu)\n"
    "  --quiet             no progress line\n"
    "\n"
    "examples:\n"
    "  kforge run configs/seeds.json --speedup\n"
    "  kforge run configs/fast.json --set n=2^30 --format csv > fast.csv\n"
    "  for bs in 64 128 256; do kforge run cfg.json --set block_size=$bs --format jsonl; done \\\n"
    "    | jq -r 'select(.status==\"ok\") | [.block_size, .gbps] | @tsv'\n";

static const char *const gen_help =
    "usage: kforge gen [--set KEY=VALUE]... CONFIG\n"
    "\n"
    "Prints the CUDA source kforge generates for every variant of CONFIG, each opening with a\n"
    "comment that names every parameter.  Needs no GPU and no NVRTC.\n"
    "\n"
    "example:\n"
    "  kforge gen configs/seeds.json --set block_size=512 > seeds512.cu\n";

static const char *const check_help =
    "usage: kforge check [--compile] [--arch sm_XY] [--set KEY=VALUE]... CONFIG...\n"
    "\n"
    "Validates configs and lists their variants and sizes without touching a GPU; combinations\n"
    "that cannot run are listed with the reason.  --compile also compiles every variant with\n"
    "NVRTC for --arch (default sm_90) and reports failures with the compiler log.\n"
    "\n"
    "examples:\n"
    "  kforge check configs/seeds.json\n"
    "  kforge check --compile --arch sm_90 configs/*.json\n";

static const char *const info_help =
    "usage: kforge info [--device N] [--format table|json]\n"
    "\n"
    "Prints the GPU's properties that matter for reductions: name, compute capability, SMs, L2,\n"
    "memory clock and bus width, theoretical DRAM bandwidth, driver and NVRTC versions.\n";

// ---------------------------------------------------------------------------
// signals

static void on_signal(int sig)
{
    (void)sig;
    kf_interrupted = 1;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: poll() must return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Installed again before the shared libraries' initialisers run (NVRTC's take
 * milliseconds), so that a SIGTERM that early is an interruption (130), not
 * death by signal (143). */
__attribute__((section(".preinit_array"), used)) static void (*preinit_signals)(void) = install_signals;

/* Runs as main returns: output that could not be written (a full disk, a
 * closed pipe) is an error, and a command that failed after SIGINT/SIGTERM
 * (a config read from a pipe, say) was interrupted. */
static void finish(int status, void *arg)
{
    (void)arg;
    char err[256];
    if (kf_stdout_close(err, sizeof err) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        _exit(KF_EXIT_USAGE);
    }
    if (kf_interrupted && status != KF_EXIT_OK && status != KF_EXIT_INTERRUPT)
        _exit(KF_EXIT_INTERRUPT);
}

// ---------------------------------------------------------------------------
// shared option handling

typedef struct {
    const char *sets[64];
    int nsets;
    const char *configs[64];
    int nconfigs;
    kf_format fmt;
    const char *results;
    bool no_results;
    int resume;            /* -1 auto, 0 no, 1 yes */
    bool speedup;
    double timeout;        /* < 0: from config */
    bool quiet;
    bool compile;
    const char *arch;
    run_opts ro;
    bool json_info;
} opts;

static void opts_init(opts *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = KF_FMT_TABLE;
    o->results = "kforge-results.jsonl";
    o->resume = -1;
    o->timeout = -1;
}

/* Parses the options shared by the commands; returns 0, 1 for --help (printed), or
 * -1 after printing a usage error. */
static int parse_opts(int argc, char **argv, const char *help, opts *o)
{
    cli c;
    cli_init(&c, argc, argv);
    int shared;
    const char *val;
    while (cli_next(&c)) {
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(help, stdout);
            return 1;
        } else if (cli_value(&c, "--set", &val)) {
            if (o->nsets == 64)
                return cli_fail(&c, "too many --set options (at most 64)");
            o->sets[o->nsets++] = val;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            if (f < 0)
                return cli_fail(&c, "--format: unknown format '%s' (allowed: table, csv, jsonl, json)", val);
            o->fmt = (kf_format)f;
            o->json_info = f == KF_FMT_JSON || f == KF_FMT_JSONL;
        } else if (cli_value(&c, "--results", &val)) {
            o->results = val;
        } else if (cli_flag(&c, "--no-results")) {
            o->no_results = true;
        } else if (cli_flag(&c, "--resume")) {
            o->resume = 1;
        } else if (cli_flag(&c, "--no-resume")) {
            o->resume = 0;
        } else if (cli_flag(&c, "--speedup")) {
            o->speedup = true;
        } else if ((shared = cli_run_option(&c, &o->ro, &o->timeout)) != 0) {
            if (shared < 0)
                return -1;
        } else if (cli_flag(&c, "--quiet") || cli_flag(&c, "-q")) {
            o->quiet = true;
        } else if (cli_flag(&c, "--compile")) {
            o->compile = true;
        } else if (cli_value(&c, "--arch", &val)) {
            if (strncmp(val, "sm_", 3) != 0 || strlen(val) < 5 || strlen(val) > 8)
                return cli_fail(&c, "--arch: expected sm_XY (for example sm_90), got '%s'", val);
            o->arch = val;
        } else if (cli_positional(&c, &val)) {
            if (o->nconfigs == 64)
                return cli_fail(&c, "too many config files (at most 64)");
            o->configs[o->nconfigs++] = val;
        } else {
            return cli_unknown(&c);
        }
    }
    if (c.error)
        return -1;
    o->ro.progress = !o->quiet && isatty(2) && !getenv("NO_COLOR") && getenv("TERM") &&
                     strcmp(getenv("TERM"), "dumb") != 0;
    return 0;
}

/* Loads every config and applies the --set overrides. */
static int load_configs(const opts *o, kf_config *cfgs)
{
    char err[1024];
    for (int i = 0; i < o->nconfigs; i++) {
        if (config_load(o->configs[i], &cfgs[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            return -1;
        }
        for (int k = 0; k < o->nsets; k++)
            if (config_set(&cfgs[i], o->sets[k], err, sizeof err) != 0) {
                fprintf(stderr, "kforge: %s\n", err);
                return -1;
            }
        if (o->timeout >= 0)
            cfgs[i].bench.timeout_s = o->timeout;
    }
    return 0;
}

static void free_configs(kf_config *cfgs, int n)
{
    for (int i = 0; i < n; i++)
        config_free(&cfgs[i]);
}

static void print_skipped(const kf_space *sp, const char *path, bool all)
{
    if (sp->nskipped == 0)
        return;
    fprintf(stderr, "kforge: %s: skipped %d combination%s that cannot run%s\n", path, sp->nskipped,
            sp->nskipped == 1 ? "" : "s", all ? ":" : " (kforge check lists them)");
    if (all)
        for (int i = 0; i < sp->nskipped; i++)
            fprintf(stderr, "  %s\n", sp->skipped[i]);
}

// ---------------------------------------------------------------------------
// run

typedef struct {
    report *rep;
    results_file *rf;
    const kf_run_info *info;
    int failed, measured;
    bool fmt_streams;
} run_ctx;

static int on_result(const kf_result *r, void *vctx)
{
    run_ctx *c = vctx;
    c->measured++;
    if (r->status != KF_ST_OK)
        c->failed++;
    if (c->rf) {
        char *line = report_json(r, c->info);
        if (results_append(c->rf, line) != 0)
            fprintf(stderr, "kforge: warning: could not append to the results file: %s\n", strerror(errno));
        free(line);
    }
    report_add(c->rep, r);
    if (r->status != KF_ST_OK && !c->fmt_streams) {
        char label[256];
        kf_variant_label(&r->v, label, sizeof label);
        fprintf(stderr, "kforge: %s%s%s n=%lld: %s: %s\n", r->v.name, r->v.name[0] ? " " : "", label,
                (long long)r->n, kf_status_names[r->status], r->message);
    }
    return 0;
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

static int cmd_run(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, run_help, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs == 0) {
        fprintf(stderr, "kforge run: no config file given\n%s", run_help);
        return KF_EXIT_USAGE;
    }
    int rc = KF_EXIT_OK;
    char err[1024];
    kf_config cfgs[64];
    memset(cfgs, 0, sizeof cfgs);
    kf_space spaces[64];
    memset(spaces, 0, sizeof spaces);
    run_session *s = NULL;
    report *rep = NULL;
    results_file *rf = NULL;
    resume_state rs;
    resume_init(&rs);

    /* Everything is validated before anything runs. */
    if (load_configs(&o, cfgs) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < o.nconfigs; i++) {
        if (space_expand(&cfgs[i], NULL, &spaces[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        space_free(&spaces[i]);
    }

    kf_run_info info;
    make_run_info(&info, &o);
    bool nodev = false;
    s = run_session_new(&o.ro, &info.dev, &nodev, err, sizeof err);
    if (!s) {
        fprintf(stderr, "kforge: %s\n", err);
        rc = nodev ? KF_EXIT_NODEV : KF_EXIT_USAGE;
        goto out;
    }
    info.have_dev = true;
    info.bench = cfgs[0].bench;
    for (int i = 0; i < o.nconfigs; i++) {
        /* again, now with the device's limits */
        if (space_expand(&cfgs[i], &info.dev, &spaces[i], err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        print_skipped(&spaces[i], cfgs[i].path, false);
    }

    if (!o.no_results) {
        if (resume_begin(&rs, o.results, info.config, o.resume, err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        rf = results_open(o.results, err, sizeof err);
        if (!rf) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            goto out;
        }
    }

    report_opts ropt = {.speedup = o.speedup, .color = isatty(1) && !getenv("NO_COLOR")};
    rep = report_new(stdout, o.fmt, &info, &ropt);
    run_ctx ctx = {.rep = rep, .rf = rf, .info = &info,
                   .fmt_streams = false};
    int total = 0, skipped_done = 0;
    bool interrupted = false;
    for (int i = 0; i < o.nconfigs && !interrupted; i++) {
        kf_space *sp = &spaces[i];
        /* cases already measured by the interrupted run we resume */
        kf_case *todo = malloc(sizeof *todo * (size_t)(sp->ncases > 0 ? sp->ncases : 1));
        int ntodo = 0;
        for (int k = 0; k < sp->ncases; k++) {
            const kf_result *prev = resume_find(&rs, &sp->variants[sp->cases[k].variant], sp->cases[k].n);
            if (prev) {
                report_add(rep, prev);
                if (prev->status != KF_ST_OK)
                    ctx.failed++;
                skipped_done++;
            } else {
                todo[ntodo++] = sp->cases[k];
            }
        }
        total += sp->ncases;
        int mr = run_session_measure(s, sp->variants, sp->nvariants, todo, ntodo, &cfgs[i].bench, on_result, &ctx,
                                     err, sizeof err);
        free(todo);
        if (mr < 0) {
            if (kf_interrupted || kf_output_broken) {
                interrupted = true;
            } else {
                fprintf(stderr, "kforge: %s\n", err);
                rc = KF_EXIT_NODEV;
                goto finish;
            }
        }
    }
finish:
    report_finish(rep);
    if (skipped_done)
        fprintf(stderr, "kforge: resumed: %d case%s taken from %s, %d measured now\n", skipped_done,
                skipped_done == 1 ? "" : "s", o.results, ctx.measured);
    if (interrupted) {
        fprintf(stderr, "kforge: interrupted after %d of %d cases; results are in %s; run the same command to "
                        "resume\n", ctx.measured + skipped_done, total, rf ? o.results : "(no results file)");
        rc = KF_EXIT_INTERRUPT;
    } else if (rc == KF_EXIT_OK) {
        resume_end(&rs);
        if (ctx.failed)
            rc = KF_EXIT_VARIANT;
    }
out:
    report_free(rep);
    results_close(rf);
    resume_free(&rs);
    run_session_free(s);
    for (int i = 0; i < o.nconfigs; i++)
        space_free(&spaces[i]);
    free_configs(cfgs, o.nconfigs);
    return rc;
}

// ---------------------------------------------------------------------------
// gen and check

static int cmd_gen(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, gen_help, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs != 1) {
        fprintf(stderr, "kforge gen: give exactly one config file\n%s", gen_help);
        return KF_EXIT_USAGE;
    }
    kf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    kf_space sp;
    memset(&sp, 0, sizeof sp);
    char err[1024];
    int rc = KF_EXIT_OK;
    if (load_configs(&o, &cfg) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    if (space_expand(&cfg, NULL, &sp, err, sizeof err) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    print_skipped(&sp, cfg.path, false);
    for (int i = 0; i < sp.nvariants; i++) {
        char *head = codegen_launch_comment(&sp.variants[i]);
        char *src = codegen_source(&sp.variants[i], err, sizeof err);
        if (!src) {
            fprintf(stderr, "kforge: %s\n", err);
            free(head);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        printf("%s%s\n", head, src);
        free(head);
        free(src);
    }
out:
    space_free(&sp);
    config_free(&cfg);
    return rc;
}

typedef struct {
    int failed;
} check_ctx;

static int on_compiled(const kf_result *r, void *vctx)
{
    check_ctx *c = vctx;
    char label[256];
    kf_variant_label(&r->v, label, sizeof label);
    if (r->status == KF_ST_OK)
        printf("  compiled  %-10s %s%s\n", r->v.name, label, r->cached ? "  (cached)" : "");
    else {
        printf("  FAILED    %-10s %s: %s\n", r->v.name, label, r->message);
        c->failed++;
    }
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, check_help, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs == 0) {
        fprintf(stderr, "kforge check: no config file given\n%s", check_help);
        return KF_EXIT_USAGE;
    }
    kf_config cfgs[64];
    memset(cfgs, 0, sizeof cfgs);
    char err[1024];
    int rc = KF_EXIT_OK;
    if (load_configs(&o, cfgs) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < o.nconfigs && rc == KF_EXIT_OK; i++) {
        kf_space sp;
        memset(&sp, 0, sizeof sp);
        if (space_expand(&cfgs[i], NULL, &sp, err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = KF_EXIT_USAGE;
            break;
        }
        printf("%s: %d variant%s, %d case%s\n", cfgs[i].path, sp.nvariants, sp.nvariants == 1 ? "" : "s",
               sp.ncases, sp.ncases == 1 ? "" : "s");
        for (int v = 0; v < sp.nvariants; v++) {
            char label[256];
            kf_variant_label(&sp.variants[v], label, sizeof label);
            printf("  %-12s %s  n =", sp.variants[v].name[0] ? sp.variants[v].name : "-", label);
            for (int k = 0; k < sp.ncases; k++)
                if (sp.cases[k].variant == v)
                    printf(" %lld", (long long)sp.cases[k].n);
            printf("\n");
        }
        print_skipped(&sp, cfgs[i].path, true);
        if (o.compile) {
            run_opts ro = o.ro;
            ro.arch = o.arch ? o.arch : "sm_90";
            check_ctx cc = {0};
            fflush(stdout);
            int f = run_compile_only(sp.variants, sp.nvariants, &ro, on_compiled, &cc, err, sizeof err);
            if (f < 0) {
                fprintf(stderr, "kforge: %s\n", err);
                rc = kf_interrupted ? KF_EXIT_INTERRUPT : f == -2 ? KF_EXIT_USAGE : KF_EXIT_NODEV;
            } else if (f > 0) {
                rc = KF_EXIT_VARIANT;
            }
        }
        space_free(&sp);
    }
out:
    free_configs(cfgs, o.nconfigs);
    return rc;
}

// ---------------------------------------------------------------------------
// info

static int cmd_info(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, info_help, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs) {
        fprintf(stderr, "kforge info: unexpected argument '%s'\n", o.configs[0]);
        return KF_EXIT_USAGE;
    }
    int maj = 0, min = 0;
    bool nvrtc = rtc_version(&maj, &min) == 0;
    kf_device d;
    char err[1024];
    gpu_worker *w = worker_start(o.ro.device, &d, err, sizeof err);
    if (!w) {
        fprintf(stderr, "kforge: %s\n", err);
        if (nvrtc)
            fprintf(stderr, "kforge: NVRTC %d.%d is available (kforge gen and check --compile work)\n", maj, min);
        return KF_EXIT_NODEV;
    }
    worker_free(w);
    if (o.json_info) {
        strbuf b = {0};
        sb_append(&b, "{\"name\": ");
        sb_json_string(&b, d.name);
        sb_printf(&b, ", \"cc\": \"%d.%d\", \"sms\": %d, \"l2_bytes\": %lld, \"mem_bytes\": %lld, "
                      "\"mem_clock_khz\": %d, \"bus_width_bits\": %d, \"peak_gbps\": %.1f, "
                      "\"max_threads_per_block\": %d, \"max_smem_per_block\": %d, \"driver\": %d, "
                      "\"nvrtc\": \"%d.%d\"}\n",
                  d.cc_major, d.cc_minor, d.sms, (long long)d.l2_bytes, (long long)d.mem_bytes, d.mem_clock_khz,
                  d.bus_width_bits, d.peak_gbps, d.max_threads_per_block, d.max_smem_per_block, d.driver_version,
                  maj, min);
        char *s = sb_take(&b);
        fputs(s, stdout);
        free(s);
    } else {
        printf("device              %s\n", d.name);
        printf("compute capability  %d.%d (sm_%d%d)\n", d.cc_major, d.cc_minor, d.cc_major, d.cc_minor);
        printf("multiprocessors     %d\n", d.sms);
        printf("L2 cache            %.1f MiB\n", d.l2_bytes / 1048576.0);
        printf("memory              %.1f GiB\n", d.mem_bytes / 1073741824.0);
        printf("memory clock        %d MHz\n", d.mem_clock_khz / 1000);
        printf("memory bus          %d bits\n", d.bus_width_bits);
        printf("peak DRAM bandwidth %.1f GB/s (2 x clock x bus width)\n", d.peak_gbps);
        printf("max threads/block   %d\n", d.max_threads_per_block);
        printf("max shared/block    %d bytes (opt-in)\n", d.max_smem_per_block);
        printf("driver (CUDA)       %d.%d\n", d.driver_version / 1000, (d.driver_version % 1000) / 10);
        if (nvrtc)
            printf("NVRTC               %d.%d\n", maj, min);
        else
            printf("NVRTC               not usable\n");
    }
    return KF_EXIT_OK;
}

// ---------------------------------------------------------------------------

int main(int argc, char **argv)
{
    install_signals();
    on_exit(finish, NULL);
    if (argc < 2) {
        fputs(main_help, stderr);
        return KF_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_help, stdout);
        return KF_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        int maj = 0, min = 0;
        if (rtc_version(&maj, &min) == 0)
            printf("kforge %s (NVRTC %d.%d)\n", KF_VERSION, maj, min);
        else
            printf("kforge %s\n", KF_VERSION);
        return KF_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "gen") == 0)
        return cmd_gen(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "tune") == 0)
        return tune_main(argc - 1, argv + 1);
    if (strcmp(cmd, "best") == 0)
        return best_main(argc - 1, argv + 1);
    static const char *const cmds[] = {"run", "gen", "check", "info", "tune", "best", "help"};
    const char *near = kf_suggest(cmd, cmds, 7);
    fprintf(stderr, "kforge: unknown command '%s'%s%s%s\nRun 'kforge --help' for the list.\n", cmd,
            near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return KF_EXIT_USAGE;
}
