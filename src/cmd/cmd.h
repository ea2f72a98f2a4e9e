/*
 * cmd.h -- the commands (one file each in src/cmd/) and what they share:
 * option parsing where every command accepts only its own options, and
 * loading configs with --set overrides.  Each command returns a KF_EXIT_*
 * code; main() returns it.
 */
#ifndef KF_CMD_H
#define KF_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "config.h"
#include "report.h"
#include "run.h"
#include "space.h"

/* The command line: dispatches argv[1] to its command; returns the exit
 * status (kforge.h: KF_EXIT_*).  Families registered before the call
 * (family_register) take part like the built-in ones. */
int kforge_main(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_best(int argc, char **argv);
int cmd_axes(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int tune_main(int argc, char **argv);

/* A family that a config makes (kernel "custom"): loads config `path`,
 * which registers it, and sets *family.  0, or KF_EXIT_USAGE after a
 * message prefixed "kforge CMD: ". */
int family_from_config(const char *cmd, const char *path, int *family);

/* After reading results file path with `skipped` unreadable lines: says on
 * stderr how many are of a kernel no config given describes (a custom
 * kernel's, read with --kernel CONFIG), `how` ending that clause (", skipped"
 * or ""), and returns that count. */
int note_unknown_kernel(const char *cmd, const char *path, int skipped, const char *how);

/* Option groups a command takes. */
enum {
    OPT_SET = 1 << 0,       /* --set KEY=VALUE */
    OPT_FORMAT = 1 << 1,    /* --format; --no-header where csv is one of the formats */
    OPT_RESULTS = 1 << 2,   /* --results, --no-results, --resume, --no-resume */
    OPT_SPEEDUP = 1 << 3,   /* --speedup */
    OPT_MEASURE = 1 << 4,   /* --timeout, --device, --jobs, --cache-dir, --no-cache, --lineinfo */
    OPT_QUIET = 1 << 5,     /* --quiet */
    OPT_COMPILE = 1 << 6,   /* --compile, --arch, --jobs, --cache-dir, --no-cache, --lineinfo; --shard
                               without OPT_MULTI */
    OPT_DEVICE = 1 << 7,    /* --device */
    OPT_CONFIGS = 1 << 8,   /* positional CONFIG files */
    OPT_MULTI = 1 << 9,     /* --devices, --shard (with OPT_MEASURE) */
    OPT_MD = 1 << 10,       /* --format md as well (a Markdown table) */
    OPT_ONLY = 1 << 11,     /* --only NAME[,NAME...] */
    OPT_CSV = 1 << 12,      /* --format csv is one of the formats: --no-header too */
    OPT_TABLE = 1 << 13,    /* --columns, --sort (table and md) */
    OPT_REFERENCE = 1 << 14, /* --reference (gen: the reference kernel's source) */
    OPT_T4 = 1 << 15        /* --format t4 (run: the results as one T4 document, results/t4.h) */
};

/* The help lines of the compiler and progress options run and tune share
 * (OPT_MEASURE's --jobs, --cache-dir, --no-cache, --lineinfo; OPT_QUIET). */
#define OPT_HELP_COMPILE                                                                                     \
    "  -j N, --jobs N      compiler processes (default: number of CPUs; -j8 works too)\n"                     \
    "  --cache-dir DIR     cubin cache (default $KFORGE_CACHE_DIR or ~/.cache/kforge)\n"                      \
    "  --no-cache          compile everything afresh\n"                                                        \
    "  --lineinfo          compile with -lineinfo (for compute-sanitizer and ncu)\n"                           \
    "  -q, --quiet         no progress line\n"

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
    kf_shard shard;
    bool json_info;
    bool no_header;        /* --no-header (with --format csv) */
    const char *only;      /* --only: comma-separated variant names, or NULL */
    const char *columns;   /* --columns: auto or a list of keys (report_opts), or NULL */
    const char *sort;      /* --sort KEY, or NULL */
    bool reference;        /* --reference (gen) */
    bool t4;               /* --format t4: the table left out, the run's results as T4 on stdout */
} opts;

void opts_init(opts *o);

/* Parses the options of a command that takes the groups in `allowed`;
 * returns 0, 1 for --help (printed), or -1 after printing a usage error
 * (an option of another command is refused, naming the command). */
int parse_opts(int argc, char **argv, const char *help, unsigned allowed, opts *o);

/* The options every measuring command shares (run, tune): --timeout SEC,
 * --device N, --jobs/-j N (also -jN), --cache-dir DIR, --no-cache, --lineinfo.
 * Returns 1 if the current argument was one of them (stored in *ro and
 * *timeout), 0 if not, -1 after printing an error. */
int cli_run_option(cli *c, run_opts *ro, double *timeout);

/* --deterministic, --fastest, --max-error E (best, export: which entry
 * serves a shape, pick.h): 1 taken, 0 not one of them, -1 after a message. */
struct pick_policy;
int cli_policy_option(cli *c, struct pick_policy *p);

/* --max-error E's value: a relative error in (0, 1).  false if not. */
bool parse_max_error(const char *s, double *out);

/* --devices LIST and --shard K/N (run and tune): 1 if the current argument
 * was one of them, 0 if not, -1 after printing an error. */
int multi_option(cli *c, run_opts *ro, kf_shard *sh);

/* After parsing: KFORGE_DEVICES when neither --device nor --devices was
 * given; the Slurm job array's task when --shard was not given (announced
 * on stderr).  0, or -1 after printing an error. */
int multi_finish(const char *cmd, run_opts *ro, kf_shard *sh);

/* The Slurm job array's task as a shard (SLURM_ARRAY_TASK_ID and _COUNT,
 * or _MIN and _MAX): 0 (sh set and announced on stderr, or untouched when
 * not in an array of several tasks), or -1 after a message. */
int slurm_shard(const char *cmd, kf_shard *sh);

/* Loads every config and applies the --set overrides; messages printed. */
int load_configs(const opts *o, kf_config *cfgs);
void free_configs(kf_config *cfgs, int n);

/* Warns when a --set argument is the name of a file in this directory: the
 * shell most likely expanded an unquoted pattern (n=[1000,2^20] matches a
 * file "n=1") and kforge never saw what was typed. */
void warn_set_glob(const char *assignment);

/* The combinations of sp that cannot run, on stderr: detail 0 their count
 * (run, gen); 1 each of up to 10, else one line per reason with its count
 * and its first combination (check); 2 each (check -v). */
void print_skipped(const kf_space *sp, const char *path, int detail);

/* --only: keeps in each space only the variants with one of the names (and
 * their cases).  0, or -1 after a message when a name matches no variant of
 * any space (with the names there are). */
int select_only(const opts *o, kf_space *spaces, int nspaces);

/* The tuning database directory: given, else tunedb_default_dir.  0, or -1
 * after a message naming cmd. */
int db_dir(const char *cmd, const char *given, char *buf, size_t len);
/* The GPU whose database file to read when none is given: the only one in
 * dir, else this machine's GPU.  0, or -1 after a message (an empty
 * database; several GPUs and none here: the choices are listed). */
int db_gpu(const char *cmd, const char *dir, char *buf, size_t len);

/* The command identity for resuming: the command, its configs' paths and
 * contents, the overrides and the options that change what is measured. */
char *command_identity(const char *cmd, const opts *o, const kf_config *cfgs);

#endif
