/*
 * common.c -- what the commands share (see cmd.h).
 */
#include "cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "line.h"
#include "pick.h"
#include "tunedb.h"
#include "util.h"
#include "worker.h"

void opts_init(opts *o)
{
    memset(o, 0, sizeof *o);
    o->fmt = KF_FMT_TABLE;
    o->results = "kforge-results.jsonl";
    o->resume = -1;
    o->timeout = -1;
    o->ro.device = -1; /* not given (parse_opts makes it 0) */
}

/* Options of some kforge command, for "not an option of this command". */
static const char *const all_options[] = {
    "--set", "--format", "--results", "--no-results", "--resume", "--no-resume", "--speedup", "--timeout",
    "--device", "--jobs", "-j", "--cache-dir", "--no-cache", "--lineinfo", "--quiet", "-q", "--compile", "--arch",
    "--strategy", "--budget", "--time", "--seed", "--db", "--no-db", "--simulate", "--first-improvement",
    "--header", "--gpu", "--dtype", "--op", "--kernel", "--n", "--devices", "--shard", "--objective", "--fail-above",
    "--any-device", "--only", "--columns", "--sort", "--top", "--abandon-above", "--list", "--delete", "--deterministic", "--device-model",
    "-o", "--no-header", "--match", "--all", "--reference"};

static bool is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int parse_opts(int argc, char **argv, const char *help, unsigned allowed, opts *o)
{
    cli c;
    cli_init(&c, argc, argv);
    int shared;
    const char *val;
    while (cli_next(&c)) {
        const char *arg = c.argv[c.i];
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(help, stdout);
            return 1;
        }
        /* --device alone (info); the compile options without a GPU (check) */
        if (!(allowed & OPT_MEASURE) && !c.dashdash &&
            (((allowed & OPT_COMPILE) &&
              (is_option(arg, "--jobs") || is_option(arg, "-j") || (strncmp(arg, "-j", 2) == 0 && arg[2] >= '0' &&
                                                                       arg[2] <= '9') ||
               is_option(arg, "--cache-dir") ||
               is_option(arg, "--no-cache") || is_option(arg, "--lineinfo"))) ||
             ((allowed & OPT_DEVICE) && is_option(arg, "--device")))) {
            if ((shared = cli_run_option(&c, &o->ro, &o->timeout)) < 0)
                return -1;
            continue;
        }
        /* --shard alone: check --compile's slice of the variants */
        if ((allowed & OPT_COMPILE) && !(allowed & OPT_MULTI) && !c.dashdash && is_option(arg, "--shard")) {
            if (multi_option(&c, &o->ro, &o->shard) < 0)
                return -1;
            continue;
        }
        if ((allowed & OPT_SET) && cli_value(&c, "--set", &val)) {
            if (o->nsets == 64)
                return cli_fail(&c, "too many --set options (at most 64)");
            warn_set_glob(val);
            o->sets[o->nsets++] = val;
        } else if ((allowed & OPT_FORMAT) && cli_value(&c, "--format", &val)) {
            int f = kf_lookup(kf_format_names, KF_FMT_COUNT, val);
            bool t4 = (allowed & OPT_T4) && strcmp(val, "t4") == 0;
            if (!t4 && (f < 0 || (f == KF_FMT_MD && !(allowed & OPT_MD))))
                return cli_fail(&c, "--format: unknown format '%s' (allowed: table, csv, jsonl, json%s%s)", val,
                                allowed & OPT_MD ? ", md" : "", allowed & OPT_T4 ? ", t4" : "");
            o->t4 = t4;
            o->fmt = t4 ? KF_FMT_TABLE : (kf_format)f;
            o->json_info = f == KF_FMT_JSON || f == KF_FMT_JSONL;
        } else if ((allowed & OPT_FORMAT) && (allowed & OPT_CSV) && cli_flag(&c, "--no-header")) {
            o->no_header = true;
        } else if ((allowed & OPT_RESULTS) && cli_value(&c, "--results", &val)) {
            o->results = val;
        } else if ((allowed & OPT_RESULTS) && cli_flag(&c, "--no-results")) {
            o->no_results = true;
        } else if ((allowed & OPT_RESULTS) && cli_flag(&c, "--resume")) {
            o->resume = 1;
        } else if ((allowed & OPT_RESULTS) && cli_flag(&c, "--no-resume")) {
            o->resume = 0;
        } else if ((allowed & OPT_ONLY) && cli_value(&c, "--only", &val)) {
            if (!*val)
                return cli_fail(&c, "--only: expected variant names, NAME[,NAME...]");
            o->only = val;
        } else if ((allowed & OPT_TABLE) && cli_value(&c, "--columns", &val)) {
            o->columns = val;   /* checked once the configs have registered their families (opts_check_table) */
        } else if ((allowed & OPT_TABLE) && cli_value(&c, "--sort", &val)) {
            o->sort = val;
        } else if ((allowed & OPT_SPEEDUP) && cli_flag(&c, "--speedup")) {
            o->speedup = true;
        } else if ((allowed & OPT_MEASURE) && (shared = cli_run_option(&c, &o->ro, &o->timeout)) != 0) {
            if (shared < 0)
                return -1;
        } else if ((allowed & OPT_MULTI) && (shared = multi_option(&c, &o->ro, &o->shard)) != 0) {
            if (shared < 0)
                return -1;
        } else if ((allowed & OPT_QUIET) && (cli_flag(&c, "--quiet") || cli_flag(&c, "-q"))) {
            o->quiet = true;
        } else if ((allowed & OPT_REFERENCE) && cli_flag(&c, "--reference")) {
            o->reference = true;
        } else if ((allowed & OPT_COMPILE) && cli_flag(&c, "--compile")) {
            o->compile = true;
        } else if ((allowed & OPT_COMPILE) && cli_value(&c, "--arch", &val)) {
            if (strncmp(val, "sm_", 3) != 0 || strlen(val) < 5 || strlen(val) > 8)
                return cli_fail(&c, "--arch: expected sm_XY (for example sm_90), got '%s'", val);
            o->arch = val;
        } else if (cli_positional(&c, &val)) {
            if (!(allowed & OPT_CONFIGS))
                return cli_fail(&c, "unexpected argument '%s'; see 'kforge %s --help'", val, argv[0]);
            if (o->nconfigs == 64)
                return cli_fail(&c, "too many config files (at most 64)");
            o->configs[o->nconfigs++] = val;
        } else {
            for (size_t k = 0; k < sizeof all_options / sizeof all_options[0]; k++)
                if (is_option(arg, all_options[k]))
                    return cli_fail(&c, "%s is not an option of 'kforge %s'; see 'kforge %s --help'", all_options[k],
                                    argv[0], argv[0]);
            return cli_unknown(&c);
        }
    }
    if (c.error)
        return -1;
    if (o->no_header && o->fmt != KF_FMT_CSV) {
        fprintf(stderr, "kforge %s: --no-header goes with --format csv (the other formats have no header line to "
                        "leave out)\n", argv[0]);
        return -1;
    }
    if (((o->columns && o->fmt != KF_FMT_CSV) || o->sort) && o->fmt != KF_FMT_TABLE && o->fmt != KF_FMT_MD) {
        fprintf(stderr, "kforge %s: %s shapes the table and md formats%s, not %s\n", argv[0],
                o->sort ? "--sort" : "--columns", o->sort ? "" : " and picks csv's columns", kf_format_names[o->fmt]);
        return -1;
    }
    o->ro.device_given = o->ro.device >= 0;
    if (o->ro.device < 0)
        o->ro.device = 0;
    if ((allowed & OPT_MULTI) && multi_finish(argv[0], &o->ro, &o->shard) != 0)
        return -1;
    o->ro.progress = !o->quiet && isatty(2) && !getenv("NO_COLOR") && getenv("TERM") &&
                     strcmp(getenv("TERM"), "dumb") != 0;
    return 0;
}

int multi_option(cli *c, run_opts *ro, kf_shard *sh)
{
    const char *val;
    char err[256];
    if (cli_value(c, "--devices", &val)) {
        if (run_devices_parse(val, ro, err, sizeof err) != 0)
            return cli_fail(c, "--devices: %s", err);
    } else if (cli_value(c, "--shard", &val)) {
        long long k, n;
        const char *slash = strchr(val, '/');
        char kb[32];
        snprintf(kb, sizeof kb, "%.*s", slash ? (int)(slash - val) : 0, val);
        if (!slash || !kf_parse_ll(kb, &k) || !kf_parse_ll(slash + 1, &n) || n < 1 || n > 1000000 || k < 1 ||
            k > n)
            return cli_fail(c, "--shard: expected K/N with 1 <= K <= N (the K-th of N slices), got '%s'", val);
        sh->k = (int)k;
        sh->n = (int)n;
        sh->from_env = false;
        snprintf(sh->how, sizeof sh->how, "--shard %d/%d", sh->k, sh->n);
    } else {
        return 0;
    }
    return 1;
}

/* An environment variable as an integer: 1 set and valid, 0 unset, -1 not a
 * number. */
static int env_ll(const char *name, long long *v)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return 0;
    return kf_parse_ll(e, v) ? 1 : -1;
}

int slurm_shard(const char *cmd, kf_shard *sh)
{
    long long id, count = 0, min = 0, max = 0;
    int hid = env_ll("SLURM_ARRAY_TASK_ID", &id);
    if (hid == 0)
        return 0;
    int hc = env_ll("SLURM_ARRAY_TASK_COUNT", &count), hmin = env_ll("SLURM_ARRAY_TASK_MIN", &min),
        hmax = env_ll("SLURM_ARRAY_TASK_MAX", &max);
    if (hid < 0 || hc < 0 || hmin < 0 || hmax < 0) {
        fprintf(stderr, "kforge %s: SLURM_ARRAY_TASK_* is not a number; give --shard K/N\n", cmd);
        return -1;
    }
    long long k, n;
    if (hmin && hmax) {
        /* --array=A-B or A-B:S: the tasks are min, min + step, ..., max */
        n = hc ? count : max - min + 1;
        long long step = n > 1 ? (max - min) / (n - 1) : 1;
        if (n < 1 || step < 1 || min + step * (n - 1) != max || id < min || id > max || (id - min) % step) {
            fprintf(stderr, "kforge %s: the Slurm job array's tasks (%lld..%lld, %lld of them, this one %lld) are not "
                            "evenly spaced; give --shard K/N\n",
                    cmd, min, max, n, id);
            return -1;
        }
        k = (id - min) / step + 1;
    } else if (hc) {
        n = count;
        k = id + 1;
    } else {
        return 0; /* an array task, but of how many? */
    }
    if (n < 1 || k < 1 || k > n) {
        fprintf(stderr, "kforge %s: SLURM_ARRAY_TASK_ID %lld is outside the job array; give --shard K/N\n", cmd, id);
        return -1;
    }
    if (n == 1)
        return 0;
    sh->k = (int)k;
    sh->n = (int)n;
    sh->from_env = true;
    snprintf(sh->how, sizeof sh->how, "Slurm job array task %lld of %lld (SLURM_ARRAY_TASK_ID=%lld)", k, n, id);
    fprintf(stderr, "kforge %s: %s: this job takes shard %d/%d (--shard 1/1 takes everything)\n", cmd, sh->how,
            sh->k, sh->n);
    return 0;
}

int multi_finish(const char *cmd, run_opts *ro, kf_shard *sh)
{
    char err[256];
    if (ro->device_given && (ro->ndevices || ro->all_devices)) {
        fprintf(stderr, "kforge %s: give --device N or --devices LIST, not both\n", cmd);
        return -1;
    }
    const char *env = getenv("KFORGE_DEVICES");
    if (!ro->device_given && !ro->ndevices && !ro->all_devices && env && *env &&
        run_devices_parse(env, ro, err, sizeof err) != 0) {
        fprintf(stderr, "kforge %s: KFORGE_DEVICES: %s\n", cmd, err);
        return -1;
    }
    if (sh->n == 0 && slurm_shard(cmd, sh) != 0)
        return -1;
    return 0;
}

int load_configs(const opts *o, kf_config *cfgs)
{
    char err[1024];
    for (int i = 0; i < o->nconfigs; i++) {
        if (config_load(o->configs[i], &cfgs[i], err, sizeof err) != 0 ||
            results_check_names(o->configs[i], cfgs[i].family, err, sizeof err) != 0) {
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

void free_configs(kf_config *cfgs, int n)
{
    for (int i = 0; i < n; i++)
        config_free(&cfgs[i]);
}

void warn_set_glob(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || strchr(assignment, '/') || strpbrk(assignment, "[]*?") || access(assignment, F_OK) != 0)
        return;
    fprintf(stderr, "kforge: warning: --set %s: a file of that name is in this directory: if the argument was a "
                    "list typed without quotes (%.*s=[...]), the shell replaced it by the file's name; quote it: "
                    "--set '%.*s=[...]'\n",
            assignment, (int)(eq - assignment), assignment, (int)(eq - assignment), assignment);
}

/* A skip line's reason: what follows the label's ": ". */
static const char *skip_reason(const char *line)
{
    const char *r = strstr(line, ": ");
    return r ? r + 2 : line;
}

void print_skipped(const kf_space *sp, const char *path, int detail)
{
    if (sp->npruned > 0 && detail)
        fprintf(stderr, "kforge: %s: the constraints left out %lld combinations as they were enumerated (checked "
                        "as soon as their parameters were bound; not listed)\n",
                path, sp->npruned);
    if (sp->nskipped == 0)
        return;
    /* up to 10 lines, or with -v (detail 2), each; else one line per reason
     * with its count and its first combination */
    bool each = detail == 2 || (detail == 1 && sp->nskipped <= 10);
    fprintf(stderr, "kforge: %s: skipped %d combination%s that cannot run%s\n", path, sp->nskipped,
            sp->nskipped == 1 ? "" : "s", each ? ":" : detail ? ", by reason (kforge check -v lists each):"
                                                              : " (kforge check lists them)");
    if (each) {
        for (int i = 0; i < sp->nlisted && !kf_interrupted; i++)
            fprintf(stderr, "  %s\n", sp->skipped[i]);
        return;
    }
    if (!detail)
        return;
    kf_strset seen = {0};
    int *count = calloc((size_t)sp->nlisted + 1, sizeof *count), *first = calloc((size_t)sp->nlisted + 1, sizeof *first);
    for (int i = 0; count && first && i < sp->nlisted; i++) {
        bool added = false;
        int k = kf_strset_add(&seen, skip_reason(sp->skipped[i]), &added);
        if (k < 0)
            break;
        if (added)
            first[k] = i;
        count[k]++;
    }
    for (int k = 0; count && first && k < seen.n && !kf_interrupted; k++) {
        const char *line = sp->skipped[first[k]], *why = skip_reason(line);
        fprintf(stderr, "  %6d x %s (the first: %.*s)\n", count[k], why, (int)(why > line + 1 ? why - line - 2 : 0),
                line);
    }
    free(count);
    free(first);
    kf_strset_free(&seen);
}

/* Whether name is one of the comma-separated names of list. */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && n > 0 && strncmp(p, name, n) == 0)
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

int select_only(const opts *o, kf_space *spaces, int nspaces)
{
    if (!o->only)
        return 0;
    /* every name must pick something */
    for (const char *p = o->only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[KF_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        bool found = false;
        for (int s = 0; s < nspaces && !found; s++)
            for (int i = 0; i < spaces[s].nvariants && !found; i++)
                found = strcmp(spaces[s].variants[i].name, name) == 0;
        if (!found) {
            strbuf names = {0};
            const char *cands[256];
            int nc = 0;
            for (int s = 0; s < nspaces; s++)
                for (int i = 0; i < spaces[s].nvariants; i++) {
                    const char *vn = spaces[s].variants[i].name;
                    if (!vn[0] || (names.s && in_list(names.s, vn)))
                        continue;
                    sb_printf(&names, "%s%s", names.len ? "," : "", vn);
                    if (nc < 256)
                        cands[nc++] = vn;
                }
            const char *near = kf_suggest(name, cands, nc);
            fprintf(stderr, "kforge: --only: no variant is named '%s'%s%s%s; the names are: %s\n", name,
                    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
                    names.s ? names.s : "(none: the configs name no variant)");
            sb_free(&names);
            return -1;
        }
        p += len + (e ? 1 : 0);
    }
    for (int s = 0; s < nspaces; s++) {
        kf_space *sp = &spaces[s];
        int *map = malloc(sizeof *map * (size_t)(sp->nvariants > 0 ? sp->nvariants : 1));
        if (!map) {
            fprintf(stderr, "kforge: out of memory\n");
            return -1;
        }
        int nv = 0;
        for (int i = 0; i < sp->nvariants; i++) {
            map[i] = in_list(o->only, sp->variants[i].name) ? nv : -1;
            if (map[i] >= 0)
                sp->variants[nv++] = sp->variants[i];
        }
        int nc = 0;
        for (int k = 0; k < sp->ncases; k++)
            if (map[sp->cases[k].variant] >= 0) {
                sp->cases[nc] = sp->cases[k];
                sp->cases[nc++].variant = map[sp->cases[k].variant];
            }
        sp->nvariants = nv;
        sp->ncases = nc;
        free(map);
    }
    return 0;
}

int db_dir(const char *cmd, const char *given, char *buf, size_t len)
{
    if (given) {
        snprintf(buf, len, "%s", given);
        return 0;
    }
    if (tunedb_default_dir(buf, len) != 0) {
        fprintf(stderr, "kforge %s: no tuning database directory (set KFORGE_DB or HOME, or give --db)\n", cmd);
        return -1;
    }
    return 0;
}

int db_gpu(const char *cmd, const char *dir, char *buf, size_t len)
{
    char err[1024];
    char **stems;
    int ns;
    if (tunedb_list(dir, &stems, &ns, err, sizeof err) != 0) {
        fprintf(stderr, "kforge %s: %s\n", cmd, err);
        return -1;
    }
    int rc = 0;
    if (ns == 0) {
        fprintf(stderr, "kforge %s: the tuning database %s is empty: run kforge tune first\n", cmd, dir);
        rc = -1;
    } else if (ns == 1) {
        snprintf(buf, len, "%s", stems[0]);
    } else {
        /* several GPUs: this machine's */
        kf_device d;
        gpu_worker *w = worker_start(0, false, &d, err, sizeof err);
        if (!w) {
            fprintf(stderr, "kforge %s: %s holds several GPUs and there is no GPU here to choose by (%s); give "
                            "%s with one of:\n",
                    cmd, dir, err, "--gpu");
            for (int i = 0; i < ns; i++)
                fprintf(stderr, "  %s\n", stems[i]);
            rc = -1;
        } else {
            worker_free(w);
            snprintf(buf, len, "%s", d.name);
        }
    }
    tunedb_list_free(stems, ns);
    return rc;
}

char *command_identity(const char *cmd, const opts *o, const kf_config *cfgs)
{
    strbuf b = {0};
    sb_printf(&b, "%s", cmd);
    for (int i = 0; i < o->nconfigs; i++)
        sb_printf(&b, " %s#%016llx", o->configs[i], (unsigned long long)cfgs[i].content_hash);
    for (int i = 0; i < o->nsets; i++)
        sb_printf(&b, " --set %s", o->sets[i]);
    if (o->only)
        sb_printf(&b, " --only %s", o->only);
    /* not the watchdog: it changes no result */
    if (o->ro.all_devices || o->ro.ndevices)
        sb_printf(&b, " --devices %s", o->ro.devices_spec);
    else
        sb_printf(&b, " --device %d", o->ro.device);
    if (o->shard.n > 1)
        sb_printf(&b, " --shard %d/%d", o->shard.k, o->shard.n);
    return sb_take(&b);
}

int cli_run_option(cli *c, run_opts *ro, double *timeout)
{
    const char *val;
    if (cli_value(c, "--timeout", &val)) {
        /* as bench.timeout_s; nan and inf would switch the watchdog off */
        if (!kf_parse_double(val, timeout) || !isfinite(*timeout) || *timeout < 0 || *timeout > 86400)
            return cli_fail(c, "--timeout: expected seconds 0..86400 (0: no watchdog), got '%s'", val);
    } else if (cli_value(c, "--device", &val)) {
        long long d;
        if (!kf_parse_ll(val, &d) || d < 0 || d > 64)
            return cli_fail(c, "--device: expected a GPU index 0..64, got '%s'", val);
        ro->device = (int)d;
    } else if (cli_value(c, "--jobs", &val) || cli_value(c, "-j", &val) || cli_attached(c, "-j", &val)) {
        long long j;
        if (!kf_parse_ll(val, &j) || j < 1 || j > 256)
            return cli_fail(c, "--jobs: expected 1..256, got '%s'", val);
        ro->jobs = (int)j;
    } else if (cli_value(c, "--cache-dir", &val)) {
        ro->cache_dir = val;
    } else if (cli_flag(c, "--no-cache")) {
        ro->no_cache = true;
    } else if (cli_flag(c, "--lineinfo")) {
        ro->lineinfo = true;
    } else {
        return 0;
    }
    return 1;
}

bool parse_max_error(const char *s, double *out)
{
    return kf_parse_double(s, out) && *out > 0 && *out < 1;
}

int cli_policy_option(cli *c, pick_policy *p)
{
    const char *val;
    if (cli_flag(c, "--deterministic")) {
        if (p->order == PICK_FASTEST)
            return cli_fail(c, "--deterministic and --fastest: choose one");
        p->order = PICK_DET_ONLY;
    } else if (cli_flag(c, "--fastest")) {
        if (p->order == PICK_DET_ONLY)
            return cli_fail(c, "--deterministic and --fastest: choose one");
        p->order = PICK_FASTEST;
    } else if (cli_value(c, "--max-error", &val)) {
        if (!parse_max_error(val, &p->max_error))
            return cli_fail(c, "--max-error: expected a relative error between 0 and 1 such as 1e-6, got '%s'", val);
    } else {
        return 0;
    }
    return 1;
}

int note_unknown_kernel(const char *cmd, const char *path, int skipped, const char *how)
{
    char kernel[128];
    int unknown = skipped > 0 ? results_unknown_kernel(path, kernel, sizeof kernel) : 0;
    if (unknown > 0)
        fprintf(stderr, "kforge %s: %s: %d line%s of the kernel \"%s\", which no config given here describes%s: "
                        "a custom kernel's results are read with --kernel CONFIG (its config)\n",
                cmd, path, unknown, unknown == 1 ? "" : "s", kernel, how);
    return unknown;
}

int family_from_config(const char *cmd, const char *path, int *family)
{
    kf_config cfg;
    char err[1024];
    if (config_load(path, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "kforge %s: %s\n", cmd, err);
        return KF_EXIT_USAGE;
    }
    if (results_check_names(path, cfg.family, err, sizeof err) != 0) {
        fprintf(stderr, "kforge %s: %s\n", cmd, err);
        config_free(&cfg);
        return KF_EXIT_USAGE;
    }
    *family = cfg.family;
    config_free(&cfg);
    return 0;
}
