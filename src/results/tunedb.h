/*
 * tunedb.h -- the tuning database: the best variant found so far for each
 * (family, key axes, shape) on each GPU model.  The key axes are the
 * parameters marked key in the family's table (key.h; reduce: dtype, op),
 * possibly none.
 *
 * A directory with one JSON file per GPU model, named after the device name
 * with everything outside [A-Za-z0-9_-] turned into '_'
 * ("NVIDIA H100 80GB HBM3" -> NVIDIA_H100_80GB_HBM3.json):
 *
 *   {"kforge_tuning_db": 1, "device": "NVIDIA H100 80GB HBM3",
 *    "entries": [
 *      {"kernel": "reduce", "dtype": "float32", "op": "sum", "n": 16777216,     (sizes as in the family)
 *       "variant": {"dtype": "float32", ..., "load": "stream"},    (config syntax)
 *       "median_ms": 0.035, "gbps": 1917.4, "pct_peak": 57.2, "blocks": 1056, "launches": 1,
 *       "device": {"name": ..., "cc": "9.0", "sms": 132, "driver": "13.0", "nvrtc": "13.0"},
 *       "kforge": "0.1.0", "date": "2026-11-22T15:40:00Z", "how": "kforge tune ... (strategy, evaluations)",
 *       "source_hash": "..." (a user's kernel: its source and headers, family.h),
 *       "between": true (measured by tune --between between tuned sizes; absent: tuned there)},
 *      ...]}
 *
 * Updates take an exclusive flock() on <file>.lock, read the file, merge,
 * and replace it atomically (temporary file + rename), so concurrent tuners
 * never lose each other's entries and readers never see half a file.  An
 * entry is replaced only by a faster one (lower median time).  Entries and
 * fields this version does not know are kept as they are.
 */
#ifndef KF_TUNEDB_H
#define KF_TUNEDB_H

/* The largest database file kforge reads (1 GiB: millions of entries); one
 * that is larger, or not a regular file (a FIFO, /dev/zero), is refused at
 * once. */
#define TUNEDB_MAX_BYTES ((size_t)1 << 30)

#include <limits.h>

#include "kforge.h"
#include "util.h"

typedef struct pick_policy pick_policy; /* pick.h */

typedef struct {
    kf_variant v;               /* family and every parameter; the key axes (key.h) are part of the key */
    kf_shape shape;             /* the size it was tuned for */
    bool deterministic;         /* run-to-run deterministic */
    bool has_acc;               /* acc_rel measured ("acc_rel" in the file) */
    double acc_rel;             /* relative error on the realistic data, as the results' acc_rel */
    double median_ms, gbps, pct_peak;
    double gflops;              /* a family that counts its flops; 0 (and no "gflops" in the file): none */
    int64_t blocks;             /* blocks of the first launch at n on that GPU */
    int launches;
    kf_device dev;              /* name, cc, sms, driver, NVRTC version */
    char kforge[16];            /* kforge version that measured it */
    char date[32];              /* ISO 8601 UTC */
    char how[512];              /* how it was obtained (the tune command, strategy, evaluations) */
    char source_hash[33];       /* a user's kernel: the source and headers it ran (family.h); "" none recorded */
    bool between;               /* measured by tune --between at a size between tuned ones: only the leaders of
                                 * its neighbouring tuned sizes ran there ("between": true; absent: tuned) */
} tunedb_entry;

/* The database directory: $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,
 * else $HOME/.local/share/kforge/tuning.  -1 if none can be formed. */
int tunedb_default_dir(char *buf, size_t len);

/* File stem for a device name: [A-Za-z0-9_-] kept, runs of anything else
 * become one '_', no leading or trailing '_'; "unknown-gpu" if empty. */
void tunedb_stem(const char *device_name, char *buf, size_t len);

/* Records entries (all for the GPU entries[0].dev.name), each unless the
 * database already holds one at least as fast for its (kernel, key axes,
 * shape) and determinism class (pick.h), or one of another source (its
 * source_hash differs, or is missing where e has one: the kernel changed,
 * so the old entry's time says nothing about it).
 * Creates the directory.  Returns how many were written, or -1 with a
 * message (a malformed existing file is an error, never overwritten). */
int tunedb_update(const char *dir, const tunedb_entry *entries, int count, char *err, size_t errlen);

/* Every entry of the file of gpu (a device name or a file stem), in file
 * order, as a malloc'd array of *count (entries of a family this build does
 * not know are left out).  No file: 0 entries.  0, or -1 with a message. */
int tunedb_entries(const char *dir, const char *gpu, tunedb_entry **out, int *count, char *err, size_t errlen);

/* The entries of gpu's file whose kernel this process does not know (a
 * custom kernel's, whose config makes the family): their kernel names added
 * to names, counts[i] (maxn of them, zeroed by the caller) how many each of
 * the first maxn has.  Returns how many there are; an unreadable file has
 * none. */
int tunedb_unknown_kernels(const char *dir, const char *gpu, kf_strset *names, int *counts, int maxn);

/* Removes from gpu's file the entries for key's family and key axes at shape (NULL: at every size) of determinism class det (-1:
 * both, 0: the not deterministic, 1: the deterministic), under the writers'
 * lock.  Returns how many were removed, or -1 with a message. */
int tunedb_delete(const char *dir, const char *gpu, const kf_variant *key, const kf_shape *shape, int det,
                  char *err, size_t errlen);

/* Device file stems present in dir (malloc'd array of malloc'd strings,
 * sorted).  A missing directory is 0 files.  -1 with a message on error. */
int tunedb_list(const char *dir, char ***stems, int *count, char *err, size_t errlen);
void tunedb_list_free(char **stems, int count);

/* Whether e was tuned with another source than its family's now (a
 * user's kernel whose source or headers changed since, or an entry that
 * records none); false for the built-in families. */
bool tunedb_other_source(const tunedb_entry *e);

/* The entry for key's family and key axes at shape in the
 * file of gpu (a device name or a file stem) that serves it under policy
 * (pick.h; NULL: the default).  If there is none for that shape, one of the
 * shape nearest on a log scale (summed over the dimensions; ties: the
 * larger) among the entries the policy allows, *exact = false.  Returns 0
 * found, 1 nothing for that family and key (or no file for gpu), -1 error. */
int tunedb_lookup(const char *dir, const char *gpu, const kf_variant *key, const kf_shape *shape,
                  const pick_policy *policy, tunedb_entry *out, bool *exact, char *err, size_t errlen);

/* A variant as a JSON object in config syntax, every parameter, on one line
 * ({"dtype": "float32", ..., "load": "stream"}).  malloc'd. */
char *tunedb_variant_json(const kf_variant *v);

/* The entry as a kforge config (flat form) that `kforge run` accepts:
 * every parameter, "n": [requested_n], and a "description" saying where it
 * came from (plus a "comment" when it was tuned for another n).  A family
 * made from a config (custom) is described again in it, the files it names
 * relative to the folder dir, where the config is to be read (*outside: one
 * of them lies outside it; family.h: config_members).  malloc'd, or NULL
 * and why. */
char *tunedb_config_json(const tunedb_entry *e, const kf_shape *requested, bool exact, const char *dir, bool *outside,
                         char *err, size_t errlen);

/* The entry as a C header of #defines (KFORGE_REDUCE_BLOCK_SIZE, ...), with a
 * comment saying how it was obtained.  malloc'd. */
char *tunedb_header(const tunedb_entry *e, const kf_shape *requested, bool exact);

#endif
