/*
 * record.c -- the tuning database's part of a search: the fastest verified
 * variant at each size, and the fastest deterministic one beside it, as
 * pick.h decides them, recorded once the search (or a merge) ends.
 */
#include "tuner.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pick.h"
#include "tunedb.h"
#include "util.h"

/* The fastest evaluated variant at each size goes to the database.
 * 0, or -1 after a message (a database that cannot be updated is an
 * error, never a silent success). */
int tuner_record_db(tuner *t, const kf_device *dev)
{
    char dir[PATH_MAX], err[1024];
    if (t->o.db)
        snprintf(dir, sizeof dir, "%s", t->o.db);
    else if (tunedb_default_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "kforge tune: no tuning database directory (set KFORGE_DB or HOME, or give --db or --no-db)\n");
        return -1;
    }
    tunedb_entry *es = calloc((size_t)t->nsizes * 2 + 1, sizeof *es);
    pick_cand *pc = calloc((size_t)t->ncand + 1, sizeof *pc);
    if (!es || !pc) {
        free(es);
        free(pc);
        return -1;
    }
    char date[32], how[512];
    kf_iso_time(date, sizeof date);
    if (t->merged_files)
        snprintf(how, sizeof how, "kforge merge of %d results files of kforge tune %.300s: fastest at this size of "
                                  "%d candidates (of %d)",
                 t->merged_files, t->info.config, t->ncand, t->space_cands);
    else
        snprintf(how, sizeof how, "kforge tune %.300s --strategy %s --seed %llu: fastest at this size of %d "
                                  "evaluated candidates (of %d)%s",
                 t->info.config, strat_names[t->kind], (unsigned long long)t->o.seed,
                 strat_evaluations(t->st) - tuner_other_shard_evaluated(t), t->ncand, t->mine ? " in one shard" : "");
    int ne = 0;
    for (int k = 0; k < t->nsizes; k++) {
        for (int c = 0; c < t->ncand; c++)
            pc[c] = tuner_pick_cand(t, c, k);
        ne += pick_size_entries(pc, t->ncand, dev, date, how, &es[ne]);
    }
    for (int i = 0; i < ne; i++) /* the sizes between the tuned ones (tune.c: between) */
        es[i].between = t->o.between_pass;
    free(pc);
    int rc = 0;
    if (ne > 0) {
        int w = tunedb_update(dir, es, ne, err, sizeof err);
        char stem[256];
        tunedb_stem(dev->name, stem, sizeof stem);
        if (w < 0) {
            fprintf(stderr, "kforge tune: tuning database not updated: %s\n", err);
            rc = -1;
        } else if (!t->o.quiet) {
            fprintf(stderr, "kforge %s: tuning database %s/%s.json: %d of %d entr%s updated%s\n",
                    t->merged_files ? "merge" : "tune", dir, stem, w, ne, ne == 1 ? "y" : "ies",
                    w < ne ? " (it already held faster variants)" : "");
        }
    }
    free(es);
    return rc;
}
