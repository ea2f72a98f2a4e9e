/*
 * run.h -- the measuring session: one GPU worker process per device and one
 * pool of compiler processes per distinct GPU architecture, driven by one
 * poll() loop.  The compiler pools work ahead of the GPUs (every variant's
 * source is submitted at once), so once the pipeline is full no GPU waits on
 * NVRTC; cubins come from the on-disk cache when nothing changed.  Cases are
 * handed out in order, each to whichever worker is free; with several
 * workers (data affinity) a free worker takes the first case in order among
 * those whose data (the exact data's key, data.h: each size's inputs) it
 * holds on its device or no worker holds, so each size's inputs are set up
 * on few devices rather than on every one, and once none is left it takes
 * a share of the data with the most work left per worker holding it, when
 * that share outweighs setting the data up (KFORGE_DATA_AFFINITY=0: the
 * first case in order, whichever its data; a stream, run_session_stream,
 * whose cases come as it goes, is dispatched without it); under a deadline
 * (run_session_set_deadline: tune --time) a free worker gets the first case
 * in order whose cubin is ready (or failed to compile), so a slow compile
 * holds up only its own cases (KFORGE_IN_ORDER=1: in order then too).
 * Results come in completion order.  A case whose
 * kernel faults or hangs costs only that case on its device: the worker is
 * replaced and the loop goes on.  A device whose worker keeps dying without
 * a word (three cases in a row) is dropped with a message while others
 * remain, and the cases it lost are measured on the others.
 */
#ifndef KF_RUN_H
#define KF_RUN_H

#include <signal.h>

#include "kforge.h"
#include "rtc.h"
#include "space.h"


#define KF_MAX_DEVICES 64

typedef struct run_opts_s {
    int device;             /* GPU ordinal, when no device list is given */
    bool device_given;      /* --device was on the command line */
    /* --devices / KFORGE_DEVICES: one worker per listed device */
    bool all_devices;       /* "all": every device the driver shows */
    int ndevices;           /* 0: just `device` */
    int devices[KF_MAX_DEVICES];
    char devices_spec[64];  /* as given ("all", "0,2,3"), for messages */
    int jobs;               /* compiler processes; <= 0: online CPUs */
    const char *cache_dir;  /* NULL: default */
    bool no_cache;
    bool lineinfo;
    const char *arch;       /* NULL: the device's sm_XY */
    bool progress;          /* a progress line on stderr (only when it is a terminal) */
    /* the input of the first case, if known: each worker makes it while its
     * device opens (NULL: none) */
    const kf_variant *ahead_v;
    kf_shape ahead_shape;
    const kf_bench *ahead_b;
    /* every shape the session will measure ahead_v's key at (ahead_shape
     * first), or NULL: with shared data (datashare.h) the workers make
     * them all ahead, each worker its share */
    const kf_shape *ahead_shapes;
    int nahead_shapes;
    /* the variants measured first, in order (NULL: none known): compiled
     * from the start, while the devices open, when the GPUs' architecture
     * can be told before (--arch, or worker_arch_guess) */
    const kf_variant *early_v;
    int nearly_v;
} run_opts;

/* Parses a device list: "all", or ordinals and ranges ("0,2,3", "0-3"),
 * each once, into o (all_devices, devices, ndevices, devices_spec).  0, or
 * -1 with a message. */
int run_devices_parse(const char *spec, run_opts *o, char *err, size_t errlen);

typedef struct run_session run_session;

/* Starts a GPU worker for each device (fills *dev with the first one's
 * facts; fails with exit-code-3 class errors: *nodev is set when the
 * failure is "no usable GPU / driver") and the compiler pools (*nodev is
 * not set when the cache directory is unusable). */
run_session *run_session_new(const run_opts *o, kf_device *dev, bool *nodev, char *err, size_t errlen);

/* The session's devices, in the order given (dropped ones included); *n set. */
const kf_device *run_session_devices(const run_session *s, int *n);

/* Called for every finished case, in completion order, with the case's
 * index into the cases given to run_session_measure.  Return non-zero to
 * stop early: no case is started after that, and the cases other devices
 * still have in flight are awaited and passed to fn too (its return value
 * then ignored). */
typedef int (*run_case_fn)(const kf_result *r, int index, void *ctx);

/* Measures cases (indices into variants) with bench settings b.  Returns 0
 * when all were measured (whatever their status), 1 when stopped by fn, or
 * -1 when interrupted (kf_interrupted) or on an internal error (message in
 * err). */
int run_session_measure(run_session *s, const kf_variant *variants, int nvariants, const kf_case *cases,
                        int ncases, const kf_bench *b, run_case_fn fn, void *ctx, char *err, size_t errlen);

/* A stream (run_session_stream): more variants and cases while measuring.
 * Called when compiler processes would be idle and fewer cases than devices
 * wait for a GPU, with room: how many more variants would keep the pool
 * busy.  It may append up to room variants to the variants array and their
 * cases to the cases array (the arrays given to run_session_stream, of the
 * capacities given there), and sets *nvariants and *ncases to the new
 * counts.  Returns how many variants it added, or -1 when it will never add
 * more (the measure then ends when what it has is measured). */
typedef int (*run_more_fn)(int room, int *nvariants, int *ncases, void *ctx);

/* As run_session_measure, over a stream: starts with nvariants variants and
 * ncases cases (0 and 0 are fine) and asks more for the rest, until more
 * returns -1, fn stops it or the deadline passes.  The arrays are the
 * caller's, of vcap variants and ccap cases, and grow through more. */
int run_session_stream(run_session *s, kf_variant *variants, int nvariants, int vcap, kf_case *cases, int ncases,
                       int ccap, const kf_bench *b, run_case_fn fn, run_more_fn more, void *ctx, char *err,
                       size_t errlen);

/* No case starts after kf_now() passes t (0: no deadline): a
 * run_session_measure call then returns 1, as when stopped by its fn, once
 * the cases in flight have finished, without waiting for compiles. */
void run_session_set_deadline(run_session *s, double t);

/* The compiler processes of the session, over its pools. */
int run_session_jobs(const run_session *s);

/* Compiles variants ahead of need: the candidates a search will likely ask
 * for next, compiled by compiler processes that would otherwise be idle
 * (never before a compile a measurement waits for), into the cache and the
 * session's table, so that a later run_session_measure of them finds them
 * compiled.  Nothing is measured, and a failure to compile is said only
 * when a measurement asks for the variant.  Returns how many compiles were
 * queued (the rest were cached, or known already), or -1 (err). */
int run_session_ahead(run_session *s, const kf_variant *variants, int nvariants, char *err, size_t errlen);

/* Called for every compiled variant (run_compile_only). */
typedef int (*run_result_fn)(const kf_result *r, void *ctx);

/* Words the progress line ends with (the best so far), or NULL for none;
 * cut to 95 bytes. */
void run_session_note(run_session *s, const char *note);

/* Total compile time spent and how many came from the cache (for summaries). */
void run_session_counts(const run_session *s, int *compiled, int *cached);

void run_session_free(run_session *s);

/* Compiles every variant without a GPU (kforge check --compile): results
 * through fn with status OK or COMPILE (and the NVRTC log in stderr).
 * Returns the number that failed, -1 on an internal error, or -2 when the
 * cache directory is unusable (a usage error). */
int run_compile_only(const kf_variant *variants, int nvariants, const run_opts *o, run_result_fn fn, void *ctx,
                     char *err, size_t errlen);

/* A slice of a list for one job of several (--shard K/N, or a Slurm job
 * array): the items whose index i has i % n == k - 1, so slices are
 * deterministic and differ in size by at most one. */
typedef struct {
    int k, n;               /* the k-th (1-based) of n; n == 0: not sharded */
    bool from_env;          /* from SLURM_ARRAY_TASK_* rather than --shard */
    char how[192];          /* where it came from, for messages */
} kf_shard;

static inline bool shard_has(const kf_shard *sh, long long i)
{
    return sh->n <= 1 || i % sh->n == sh->k - 1;
}

/* After "no NVIDIA driver" or "no GPU" (exit 3), unless KFORGE_FAKE_GPU is
 * set: KFORGE_FAKE_GPU=1 runs every command on a synthetic device, and the
 * commands that need no GPU at all. */
void run_nodev_hint(void);

#endif
