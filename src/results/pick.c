/*
 * pick.c -- what "best" means (pick.h): the rules tune, merge, best and
 * export share, and the database entry made from a pick.
 */
#include "pick.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "family.h"

bool pick_eligible(const pick_cand *c, bool det_only)
{
    return c->status == KF_ST_OK && !c->failed_elsewhere && c->median_ms > 0 && isfinite(c->median_ms) &&
           (!det_only || c->deterministic);
}

bool pick_faster(double a_ms, double b_ms) { return !isfinite(b_ms) || a_ms < b_ms; }

int pick_fastest(const pick_cand *c, int n, bool det_only)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (pick_eligible(&c[i], det_only) && pick_faster(c[i].median_ms, best < 0 ? INFINITY : c[best].median_ms))
            best = i;
    return best;
}

int pick_size_entries(const pick_cand *c, int n, const kf_device *dev, const char *date, const char *how,
                      tunedb_entry out[2])
{
    int fast = pick_fastest(c, n, false);
    if (fast < 0)
        return 0;
    pick_entry(&out[0], &c[fast], dev, date, how);
    if (c[fast].deterministic)
        return 1;
    int det = pick_fastest(c, n, true);
    if (det < 0)
        return 1;
    pick_entry(&out[1], &c[det], dev, date, how);
    return 2;
}

void pick_entry(tunedb_entry *e, const pick_cand *c, const kf_device *dev, const char *date, const char *how)
{
    memset(e, 0, sizeof *e);
    e->v = *c->v;
    e->v.name[0] = '\0';
    e->shape = c->shape;
    e->deterministic = c->deterministic;
    e->median_ms = c->median_ms;
    e->gbps = c->gbps;
    e->pct_peak = c->pct_peak;
    e->gflops = c->gflops;
    e->blocks = c->blocks;
    e->launches = c->launches;
    e->dev = *dev;
    snprintf(e->kforge, sizeof e->kforge, "%s", KF_VERSION);
    snprintf(e->date, sizeof e->date, "%s", date);
    snprintf(e->how, sizeof e->how, "%s", how);
    const char *h = c->source_hash ? c->source_hash : family_of(c->v)->source_hash;
    snprintf(e->source_hash, sizeof e->source_hash, "%s", h ? h : "");
}

pick_cand pick_cand_of_entry(const tunedb_entry *e)
{
    return (pick_cand){.v = &e->v, .shape = e->shape, .status = KF_ST_OK, .median_ms = e->median_ms,
                       .gbps = e->gbps, .pct_peak = e->pct_peak, .gflops = e->gflops, .blocks = e->blocks,
                       .launches = e->launches,
                       .deterministic = e->deterministic, .source_hash = e->source_hash};
}
