/*
 * tune.c -- `kforge tune SPACE`: its options and help; the search itself is
 * src/tune/tune.c (tune_run).
 */
#include "cmd.h"
#include "tune.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "strategy.h"
#include "t4.h"
#include "util.h"

static const char *const tune_help =
    "usage: kforge tune SPACE [OPTIONS]\n"
    "\n"
    "Searches the variants of SPACE (a kforge config whose axes hold lists or ranges, with\n"
    "\"constraints\") for the fastest.  Each candidate is measured like kforge run does it (compiled,\n"
    "verified, timed) at the sizes to tune for: \"tune\": {\"n\": [...], \"weights\": [...]} in SPACE,\n"
    "else every n of SPACE.  The objective of a candidate is the weighted sum of its median times\n"
    "over those sizes; a candidate that fails at any size is never chosen.  Every measured case is\n"
    "appended to the results file as it finishes; at the end (or on Ctrl-C) the fastest variant\n"
    "for each size goes to the tuning database (see kforge best --help).\n"
    "\n"
    "options:\n"
    "  --strategy S        exhaustive, random, local, anneal, genetic or model (a random forest\n"
    "                      fitted to what was measured picks the next batch).  Default: exhaustive\n"
    "                      when the space has at most 2000 candidates and neither --budget nor\n"
    "                      --time limits the search, else model\n"
    "  --budget N          evaluate at most N candidates (default: all of them for exhaustive and\n"
    "                      random or with --time; 20% of the space, at least 100, for the others)\n"
    "  --time SEC          start no new measurement after SEC seconds (those in flight finish;\n"
    "                      compiles not done are left)\n"
    "  --seed S            seed of the strategy's random choices (default 1): the same space, seed\n"
    "                      and measurements give the same search\n"
    "  --first-improvement local: move to the first better neighbour found, not the best one\n"
    "  --objective O       time (default: the weighted median times), energy (the weighted energy\n"
    "                      of one run, from NVML; sets bench.energy) or edp (energy x time)\n"
    "  --set KEY=VALUE     override a config key (repeatable), as for kforge run; --set n=...\n"
    "                      also replaces the sizes of \"tune\"\n"
    "  --results FILE      JSON Lines results file (default kforge-tune.jsonl)\n"
    "  --resume            candidates already in the results file (measured on this GPU) are taken\n"
    "                      from it, not measured again (the default)\n"
    "  --no-resume         measure every candidate the search visits\n"
    "  --db DIR            tuning database (default $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,\n"
    "                      else ~/.local/share/kforge/tuning)\n"
    "  --no-db             leave the tuning database alone\n"
    "  --simulate FILE     no GPU: every candidate's times come from FILE, the results file of an\n"
    "                      earlier sweep of the same space, a Kernel Tuner cache file or a T4 file\n"
    "                      (.json or .json.gz; matched to the candidates by parameter name) (to\n"
    "                      compare strategies, like Kernel Tuner's simulation mode); the recorded\n"
    "                      compile and run times make a simulated clock (time to the best; --time\n"
    "                      runs on it); writes no results file and no database\n"
    "  --format FMT        the summary on stdout: table (default), jsonl (one line per new best,\n"
    "                      then a summary line), json (one object), md (Markdown) or t4 (no summary:\n"
    "                      the candidates of this search in the results file, resumed ones too, as\n"
    "                      one T4 document, the Auto-Tuning Association's results format)\n"
    "  --top N             the summary ranks the best N candidates at each size (default 5; 0: none):\n"
    "                      time, how far behind the best, the axes that differ from it, and how many\n"
    "                      lie within 2% and 10% of the best (a sharp peak or a plateau)\n"
    "  --abandon-above K   stop timing a candidate whose first repetitions at a size are slower than\n"
    "                      K x the fastest there so far, or whose median is, with 95% confidence,\n"
    "                      more than 2% above it (default 2; 0: never): recorded as abandoned, with\n"
    "                      its partial figures; never the best (objective time only)\n"
    "  --accuracy          also run each candidate on the realistic data for its rounding error\n"
    "                      (acc_err, acc_bound), as kforge run does; without it tune checks every\n"
    "                      candidate's answer on the exact data only, which decides right or wrong\n"
    "  --between K         after the search, measure the leading candidates of each pair of\n"
    "                      neighbouring sizes (each size's two fastest and its fastest deterministic\n"
    "                      one) at K log-spaced sizes between them, and record the fastest at each\n"
    "                      in the database: best and export then dispatch on measurements there\n"
    "                      (families with one size, not custom kernels; the config goes to\n"
    "                      RESULTS.between.json).  Default: 1 size between each pair more than 2x\n"
    "                      apart, for a search of several sizes (not --simulate, a shard, or\n"
    "                      --objective energy or edp); 0: none.  Not counted in --budget; --time\n"
    "                      bounds both.  The summary says what it cost and, per dispatch range,\n"
    "                      which sizes were measured and which variant serves it\n"
    "  --max-error E       a candidate whose relative error on the realistic data (|error| /\n"
    "                      sum |x_i|, measured as with --accuracy, which it sets) is above E at some\n"
    "                      size is never the best, nor recorded in the database (float sums and\n"
    "                      products; e.g. 1e-6)\n"
    "  --timeout SEC       watchdog per case (bench.timeout_s; default 30)\n"
    "  --device N          GPU index (default 0)\n"
    "  --devices LIST      evaluate the search on several GPUs of one model at once: 'all' or indices\n"
    "                      such as 0,2,3 (default $KFORGE_DEVICES); the same seed gives the same search\n"
    "  --shard K/N         exhaustive and random: evaluate only the K-th of N balanced slices of the\n"
    "                      candidates (default: the Slurm job array's task); kforge merge combines the\n"
    "                      shards' results files\n"
    OPT_HELP_COMPILE
    "\n"
    "Resuming: a search is deterministic, so running an interrupted command again replays it.\n"
    "Candidates found in the results file are not measured again (they count toward --budget when\n"
    "the search reaches them), and the search ends where the uninterrupted one would have.\n"
    "\n"
    "exit status: 0 a best variant was found; 1 every candidate evaluated failed; 2 usage or\n"
    "configuration error; 3 no usable GPU, driver or NVRTC; 4 a result, the database or the output\n"
    "could not be written (a full disk, a read-only folder; the same command resumes); 141 the\n"
    "reader of standard output went away (| head); 130 interrupted\n"
    "(SIGINT, SIGTERM), 129 hung up (SIGHUP): what was measured is in the results file, the best so\n"
    "far in the database, and the same command resumes.\n"
    "\n"
    "examples:\n"
    "  kforge tune configs/tune-reduce.json\n"
    "  kforge tune configs/tune-reduce.json --strategy anneal --budget 150 --seed 7\n"
    "  kforge tune configs/tune-reduce.json --set dtype=int32 --set op=max --time 600\n"
    "  kforge tune configs/tune-reduce.json --strategy exhaustive --results sweep.jsonl\n"
    "  kforge tune configs/tune-reduce.json --devices all --strategy genetic --budget 200\n"
    "  kforge tune configs/tune-reduce.json --shard 2/4 --results shard2.jsonl   (then kforge merge)\n"
    "  kforge tune configs/tune-reduce.json --simulate sweep.jsonl --strategy local --format jsonl\n"
    "  kforge tune tools/hub/convolution_milo.json --simulate A100.json.gz --budget 87 --strategy model\n"
    "  kforge best --dtype float32 --op sum --n 2^24 --header > reduce_tuned.h\n";

/* 0, 1 for --help (printed), -1 after a usage error. */
static int parse_tune_opts(int argc, char **argv, tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = -1;
    o->seed = 1;
    o->results = "kforge-tune.jsonl";
    o->resume = 1;
    o->timeout = -1;
    o->fmt = KF_FMT_TABLE;
    o->top = 5;
    o->between = -1; /* automatic: 1 between each pair of sizes more than 2x apart */
    o->abandon_k = 2;
    o->ro.device = -1;
    cli c;
    cli_init(&c, argc, argv);
    int shared;
    const char *val;
    while (cli_next(&c)) {
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(tune_help, stdout);
            return 1;
        } else if (cli_value(&c, "--strategy", &val)) {
            o->strategy = kf_lookup(strat_names, STRAT_COUNT, val);
            if (o->strategy < 0)
                return cli_fail(&c, "--strategy: unknown strategy '%s' (allowed: exhaustive, random, local, anneal, "
                                    "genetic, model)",
                                val);
        } else if (cli_value(&c, "--budget", &val)) {
            if (!kf_parse_ll(val, &o->budget) || o->budget < 1 || o->budget > 100000000)
                return cli_fail(&c, "--budget: expected a number of evaluations >= 1, got '%s'", val);
        } else if (cli_value(&c, "--time", &val)) {
            if (!kf_parse_double(val, &o->time_s) || !(o->time_s > 0))
                return cli_fail(&c, "--time: expected seconds > 0, got '%s'", val);
        } else if (cli_value(&c, "--seed", &val)) {
            long long s;
            if (!kf_parse_ll(val, &s) || s < 0)
                return cli_fail(&c, "--seed: expected an integer >= 0, got '%s'", val);
            o->seed = (uint64_t)s;
        } else if (cli_flag(&c, "--accuracy")) {
            o->accuracy = true;
        } else if (cli_value(&c, "--between", &val)) {
            long long k;
            if (!kf_parse_ll(val, &k) || k < 0 || k > 16)
                return cli_fail(&c, "--between: expected a number of sizes 0..16, got '%s'", val);
            o->between = (int)k;
        } else if (cli_value(&c, "--max-error", &val)) {
            if (!parse_max_error(val, &o->max_error))
                return cli_fail(&c, "--max-error: expected a relative error between 0 and 1 such as 1e-6, got '%s'",
                                val);
        } else if (cli_value(&c, "--abandon-above", &val)) {
            if (!kf_parse_double(val, &o->abandon_k) || !(o->abandon_k == 0 || o->abandon_k >= 1))
                return cli_fail(&c, "--abandon-above: expected a factor >= 1, or 0 for never, got '%s'", val);
        } else if (cli_value(&c, "--top", &val)) {
            long long n;
            if (!kf_parse_ll(val, &n) || n < 0 || n > 1000)
                return cli_fail(&c, "--top: expected a number of candidates 0..1000, got '%s'", val);
            o->top = (int)n;
        } else if (cli_value(&c, "--objective", &val)) {
            o->objective = kf_lookup(tune_objective_names, TUNE_OBJ_COUNT, val);
            if (o->objective < 0)
                return cli_fail(&c, "--objective: unknown objective '%s' (allowed: time, energy, edp)", val);
        } else if (cli_flag(&c, "--first-improvement")) {
            o->first_improvement = true;
        } else if (cli_value(&c, "--set", &val)) {
            if (o->nsets == 64)
                return cli_fail(&c, "too many --set options (at most 64)");
            warn_set_glob(val);
            o->sets[o->nsets++] = val;
        } else if (cli_value(&c, "--results", &val)) {
            o->results = val;
        } else if (cli_flag(&c, "--resume")) {
            o->resume = 1;
        } else if (cli_flag(&c, "--no-resume")) {
            o->resume = 0;
        } else if (cli_value(&c, "--db", &val)) {
            o->db = val;
        } else if (cli_flag(&c, "--no-db")) {
            o->no_db = true;
        } else if (cli_value(&c, "--simulate", &val)) {
            o->simulate = val;
        } else if (cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            o->t4 = strcmp(val, "t4") == 0;
            if (!o->t4 && (f < 0 || f == KF_FMT_CSV))
                return cli_fail(&c, "--format: unknown format '%s' (allowed: table, jsonl, json, md, t4)", val);
            o->fmt = o->t4 ? KF_FMT_TABLE : (kf_format)f;
        } else if ((shared = cli_run_option(&c, &o->ro, &o->timeout)) != 0) {
            if (shared < 0)
                return -1;
        } else if ((shared = multi_option(&c, &o->ro, &o->shard)) != 0) {
            if (shared < 0)
                return -1;
        } else if (cli_flag(&c, "--quiet") || cli_flag(&c, "-q")) {
            o->quiet = true;
        } else if (cli_positional(&c, &val)) {
            if (o->space)
                return cli_fail(&c, "one SPACE config at a time (got '%s' and '%s')", o->space, val);
            o->space = val;
        } else {
            return cli_unknown(&c);
        }
    }
    if (c.error)
        return -1;
    if (!o->space) {
        fprintf(stderr, "kforge tune: no SPACE config given\n\n%s", tune_help);
        return -1;
    }
    o->ro.device_given = o->ro.device >= 0;
    if (o->ro.device < 0)
        o->ro.device = 0;
    if (o->simulate && o->shard.n > 1 && !o->shard.from_env) {
        fprintf(stderr, "kforge tune: --simulate and --shard: a simulation measures nothing to share out\n");
        return -1;
    }
    if (multi_finish("tune", &o->ro, o->simulate ? &(kf_shard){.n = 1} : &o->shard) != 0)
        return -1;
    return 0;
}


int tune_main(int argc, char **argv)
{
    tune_opts o;
    int pr = parse_tune_opts(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (!o.t4)
        return tune_run(&o);
    if (o.simulate) {
        fprintf(stderr, "kforge tune: --format t4 is made from the results file, which --simulate does not write\n");
        return KF_EXIT_USAGE;
    }
    /* --format t4: the summary goes nowhere, then the candidates of this
     * space and --sets in the results file (resumed ones too) as T4 */
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0 || dup2(null, 1) < 0) {
        fprintf(stderr, "kforge tune: --format t4: cannot set standard output aside\n");
        return KF_EXIT_IO;
    }
    close(null);
    int rc = tune_run(&o);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    if (rc != KF_EXIT_OK && rc != KF_EXIT_VARIANT)
        return rc;
    strbuf b = {0};
    sb_printf(&b, "%s", o.space);
    for (int i = 0; i < o.nsets; i++)
        sb_printf(&b, " --set %s", o.sets[i]);
    char *config = sb_take(&b), err[512];
    if (!config || t4_write(stdout, o.results, config, err, sizeof err) != 0) {
        fprintf(stderr, "kforge tune: --format t4: %s\n", config ? err : "out of memory");
        rc = KF_EXIT_IO;
    }
    free(config);
    return rc;
}
