/*
 * tuner.h -- the tuner's state, shared by the files of src/tune/ that work
 * on one search: tune.c (the search loop and the results file), record.c
 * (the tuning database), replay.c (kforge merge's summary) and summary.c
 * (what is printed at the end).  Not for use outside src/tune/.
 */
#ifndef KF_TUNER_H
#define KF_TUNER_H

#include <stdbool.h>
#include <stdint.h>

#include "kforge.h"
#include "pick.h"
#include "recorded.h"
#include "report.h"
#include "results.h"
#include "run.h"
#include "space.h"
#include "strategy.h"
#include "tune.h"

typedef struct {
    kf_status st;           /* KF_ST_COUNT: not measured */
    double median_ms, gbps, pct_peak;
    double gflops;          /* 0: the family counts no flops */
    double energy_j;        /* of one run; 0: none */
    int64_t blocks;
    int launches;
    bool deterministic;
    bool has_acc;           /* acc_rel measured (--accuracy, --max-error) */
    double acc_rel;
} cell;

typedef struct {
    tune_opts o;
    kf_config cfg;
    kf_space sp;
    kf_run_info info;
    char device[128];       /* the GPU the times are from */
    /* objective: sum over sizes of weight x median time */
    int nsizes;
    kf_shape *sizes;
    kf_shape *ahead_shapes; /* the sizes and those between them, whose data is made ahead (open_devices) */
    double *weights;
    bool tune_sizes;        /* sizes from the config's "tune" */
    /* candidates */
    int ncand;
    int *var;               /* candidate -> index into sp.variants */
    cell *cells;            /* ncand x nsizes */
    strat_kind kind;
    int budget;
    strategy *st;
    /* kforge merge: the summary of results files merged (no measuring) */
    int merged_files;
    int space_cands;        /* candidates of the space (merged ones have results) */
    /* --shard: the candidates of this slice */
    bool *mine;
    int nmine, nothers;
    /* measuring */
    run_session *rs;
    bool rs_borrowed;       /* rs is another search's (the pass between sizes uses the search's): not freed here */
    int rs_compiled0, rs_cached0; /* rs's cubin counts when this search began with it */
    kf_run_info *dev_info;  /* one per device: a results line names its GPU */
    int ndev;
    int *per_device;        /* cases measured on each */
    results_file *rf;
    int measured_cases, failed_cases, abandoned_cases, told, reused_cands;
    /* where the measured cases' time went (results' compile_ms, setup_ms,
     * verify_ms, bench_ms), summed, ms */
    double compile_ms, setup_ms, verify_ms, bench_ms;
    report_warnings warn;     /* throttled cases, NVML notes, as run says them */
    int failures_said;        /* failed cases named on stderr (the first TUNE_FAILS_SAID) */
    double t0, last_progress;
    bool progress, out_of_time;
    /* --simulate: the recorded space when the file is a Kernel Tuner cache
     * or T4 file (rec.nconf 0: a kforge results file), and the simulated
     * clock: what evaluating each candidate cost where it was recorded
     * (compile, verify, benchmark and the tuner's own time), ms */
    rec_space rec;
    double *sim_ms;
    double sim_clock_ms, sim_best_ms;
    bool sim_stream;        /* simulated as a stream on -j processes (tune.c simulate_stream) */
    char energy_note[160];    /* why a case had no energy figure (--objective energy, edp) */
    char write_error[1024];   /* a result could not be written: the search stopped */
} tuner;

static inline cell *cell_at(const tuner *t, int c, int k) { return &t->cells[(size_t)c * (size_t)t->nsizes + (size_t)k]; }

static inline bool complete(const tuner *t, int c)
{
    for (int k = 0; k < t->nsizes; k++)
        if (cell_at(t, c, k)->st == KF_ST_COUNT)
            return false;
    return true;
}


/* The weighted objective of candidate c: +inf unless it is OK (and has the
 * objective's figures) at every size. */
double tuner_objective(const tuner *t, int c);
/* A cell's share of the objective: ms, J or J x ms; 0 when it has none. */
double tuner_cell_cost(const tuner *t, const cell *x);
/* Whether x is an OK case outside --max-error (its error above the bound, or not measured). */
bool tuner_over_error(const tuner *t, const cell *x);
/* tune --between K (between.c): writes to path the config that measures the
 * leaders of each tuned size at K log-spaced sizes between each pair of
 * neighbouring ones (*npoints of them).  0 written, 1 nothing to measure, -1
 * error; a message in err either way. */
int tune_between_space(const tuner *t, int between, const char *path, int *npoints, char *err, size_t errlen);
/* The sizes a pass between t's tuned sizes measures (--between K; < 0: the
 * default), ascending per pair, in *out (malloc'd; NULL when none): their
 * count.  0 also when the family has several size axes. */
int tune_between_sizes(const tuner *t, int between, int64_t **out);

/* Evaluated candidates, not failed, above --max-error at some size. */
int tuner_over_error_candidates(const tuner *t);
/* As tuner_cell_cost, with an abandoned case's partial median (it stopped
 * once it could not win there): what ranks it and steers a guided search. */
double tuner_cell_estimate(const tuner *t, const cell *x);
/* Whether candidate c failed at some size (abandoned is not failed: it was
 * only slower there, and says nothing about the other sizes). */
bool tuner_failed(const tuner *t, int c);
/* Candidate c's measurement at size k, as "best" is decided (pick.h). */
pick_cand tuner_pick_cand(const tuner *t, int c, int k);
/* A candidate of another shard, not measured here nor found in the results file. */
bool tuner_other_shard(const tuner *t, int c);
/* Evaluated candidates that failed (measured now or taken from the file). */
int tuner_failed_candidates(const tuner *t);
/* Whether candidate c was abandoned at some size (--abandon-above). */
bool tuner_abandoned(const tuner *t, int c);
/* Gives the strategy candidate c's objective, told (known false) or as
 * known from a results file; abandoned at some size: an estimate from its
 * partial medians, which steers the search but is never the best. */
void tuner_tell_strategy(tuner *t, int c, bool known);

/* Evaluated candidates abandoned at some size (--abandon-above). */
int tuner_abandoned_candidates(const tuner *t);
/* Evaluated candidates left to the other shards (none when not sharded). */
int tuner_other_shard_evaluated(const tuner *t);

/* Energies with a unit: "4.802 mJ" (suffix after the unit: "*ms" for EDP;
 * times: kf_fmt_ms); the objective's value in its unit. */
void tune_fmt_joules(char *buf, size_t len, double x, const char *suffix);
void tune_fmt_objective(const tuner *t, char *buf, size_t len, double x);

/* The steps tune.c, record.c and replay.c share (tune.c): the space from
 * t->o (KF_EXIT_*, err), the candidates and their cells (KF_EXIT_*), the
 * strategy for t->kind (NULL, err), the cells of results already in a file
 * (how many found, or -1, err), and freeing it all. */
int tuner_load_space(tuner *t, char *err, size_t errlen);
/* (candidates.c, as the three around it) A result's figures into a cell. */
void tuner_fill_cell(cell *x, const kf_result *r);
/* The distinct "device" names of a results file's lines (at most max), or -1. */
int tuner_file_devices(const char *path, char names[][128], int max, char *err, size_t errlen);
int tuner_build_candidates(tuner *t);
strategy *tuner_make_strategy(tuner *t, char *err, size_t errlen);
int tuner_load_recorded(tuner *t, const char *path, char *err, size_t errlen);
/* The cells of t->rec (a Kernel Tuner cache or T4 file read for --simulate),
 * matched to the candidates by parameter name: how many found, or -1 (err). */
int tuner_load_rec(tuner *t, const char *path, char *err, size_t errlen);
void tuner_free(tuner *t);

/* The fastest variant at each size to the database (record.c): 0, or -1
 * after a message. */
int tuner_record_db(tuner *t, const kf_device *dev);

/* The summary on stdout in t->o.fmt (summary.c). */
void tune_print_summary(tuner *t, double wall, const char *stopped);
/* After the summary of a search of several sizes of a family of one size
 * axis (tune.c): its cost aside, the per-range table (ranges.h) of what was
 * measured, with the sizes a pass between them measured (b; NULL: none). */
void tune_print_ranges(const tuner *t, const tuner *b);

#endif
