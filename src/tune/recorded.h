/*
 * recorded.h -- spaces recorded by other autotuners, for kforge tune
 * --simulate and tools/strat_bench: Kernel Tuner cache files and T4 files
 * (the Auto-Tuning Association's results format), plain or gzipped.
 *
 * A recorded space is a list of configurations, each a value per named
 * parameter, with the time it ran in (or how it failed: at compile time,
 * at run time, or refused by a restriction) and what evaluating it cost in
 * the tuner that recorded it (compile, verification, benchmark and the
 * tuner's own time): the simulated clock of a replay.
 */
#ifndef KF_RECORDED_H
#define KF_RECORDED_H

#include <stddef.h>

typedef enum {
    REC_OK,             /* ran: time_ms */
    REC_COMPILE,        /* failed to compile */
    REC_RUNTIME,        /* failed to launch or run, or gave a wrong answer */
    REC_INVALID,        /* refused by a restriction */
} rec_status;

#define REC_NAME_MAX 64

typedef struct {
    char format[16];            /* "kernel_tuner" or "t4" */
    char device[128];           /* the GPU named in the file ("" if none) */
    int nparams;
    char (*names)[REC_NAME_MAX];
    int nconf;
    double *values;             /* nconf x nparams; a string value: its index among the parameter's strings */
    unsigned char *is_string;   /* per parameter: values were strings */
    double *time_ms;            /* per configuration; NaN unless REC_OK */
    unsigned char *status;      /* rec_status */
    double *eval_ms;            /* what evaluating it cost (compile + verify + benchmark + framework) */
    double *compile_ms;
} rec_space;

/* Reads path (gzipped files through `gzip -dc`).  1: a Kernel Tuner cache
 * or T4 file, read into r; 0: neither (a kforge results file, say: nothing
 * is filled in); -1: unreadable or malformed, with a message in err that
 * names the file and the field. */
int rec_load(const char *path, rec_space *r, char *err, size_t errlen);

/* The index of a parameter by name, or -1. */
int rec_param(const rec_space *r, const char *name);

void rec_free(rec_space *r);

#endif
