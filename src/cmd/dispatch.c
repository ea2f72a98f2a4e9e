/*
 * dispatch.c -- the kforge command line: dispatches to the commands (one
 * file each in src/cmd/: run, gen, check, info, tune, best, export, axes,
 * merge, compare).  main.c calls it; so does a program that registers
 * families of its own first (tests/family_tile/).
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
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "rtc.h"
#include "util.h"

// ---------------------------------------------------------------------------
// help texts

static const char *const main_help =
    "kforge " KF_VERSION " -- generate, compile, verify, time and tune GPU kernels\n"
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
    "  export            write the tuned variants as a self-contained CUDA header with a host API\n"
    "  axes [FAMILY]     the kernel families and their axes (the parameter table)\n"
    "  merge FILE...     combine the results files of shards (--shard, Slurm job arrays)\n"
    "  compare OLD NEW   two results files side by side: ratio and significance per case\n"
    "\n"
    "Run 'kforge COMMAND --help' for a command's options and examples.\n"
    "\n"
    "exit codes: 0 all good; 1 some variant failed to compile, launch or verify (the others\n"
    "ran); 2 usage or configuration error; 3 no usable GPU, driver or NVRTC; 4 a result, the\n"
    "tuning database or the output could not be written; 130 interrupted; 141 the reader of\n"
    "standard output went away (| head: stopped as if interrupted, no error message).\n";

// ---------------------------------------------------------------------------
// signals

static void on_signal(int sig)
{
    (void)sig;
    kf_interrupted = 1;
}

/* Descriptors 0, 1 and 2 that were closed when kforge started are opened
 * on /dev/null, so that no pipe, results file or device kforge opens later
 * takes one of them (a pipe on fd 1 reached the GPU worker as its stdout and
 * made a false fault).  Opened the wrong way round (stdin write-only, stdout
 * and stderr read-only), so that they still behave as closed ones did: a
 * read of stdin or a write to stdout fails with EBADF, and writing to a
 * stdout that was closed is still the write error it always was. */
static void reserve_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int nf = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (nf < 0)
            nf = open("/", O_RDONLY | O_DIRECTORY); /* no /dev/null (a bare chroot): any descriptor */
        if (nf >= 0 && nf != fd) {
            dup2(nf, fd);
            close(nf);
        }
    }
}

static void install_signals(void)
{
    reserve_std_fds();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: poll() must return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* a file-size limit (ulimit -f) makes a write fail with EFBIG, which
     * kforge reports (exit 4), instead of killing it without a word */
    signal(SIGXFSZ, SIG_IGN);
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
    kf_trace("exit %d", status);
    int closed = kf_stdout_close(err, sizeof err);
    if (closed == -2) /* the reader has gone (| head): silent, as grep or jq */
        _exit(KF_EXIT_PIPE);
    if (closed != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        _exit(KF_EXIT_IO);
    }
    if (kf_interrupted && status != KF_EXIT_OK && status != KF_EXIT_INTERRUPT)
        _exit(KF_EXIT_INTERRUPT);
}

// ---------------------------------------------------------------------------

int kforge_main(int argc, char **argv)
{
    install_signals();
    kf_trace("start: kforge %s", argc > 1 ? argv[1] : "");
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
        return cmd_best(argc - 1, argv + 1);
    if (strcmp(cmd, "axes") == 0)
        return cmd_axes(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0)
        return cmd_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    static const char *const cmds[] = {"run", "gen", "check", "info", "tune", "best", "export", "axes", "merge", "compare", "help"};
    const char *near = kf_suggest(cmd, cmds, (int)(sizeof cmds / sizeof cmds[0]));
    fprintf(stderr, "kforge: unknown command '%s'%s%s%s\nRun 'kforge --help' for the list.\n", cmd,
            near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    return KF_EXIT_USAGE;
}
