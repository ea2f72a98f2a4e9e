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
    return c->status == KF_ST_OK && !c->failed_elsewhere && !c->over_error && c->median_ms > 0 && isfinite(c->median_ms) &&
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
    e->has_acc = c->has_acc;
    e->acc_rel = c->acc_rel;
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

bool pick_within_error(const pick_cand *c, double max_error)
{
    return !(max_error > 0) || (c->has_acc && c->acc_rel <= max_error);
}

bool pick_allowed(const pick_cand *c, const pick_policy *p)
{
    return pick_eligible(c, p->order == PICK_DET_ONLY) && pick_within_error(c, p->max_error);
}

int pick_serve(const pick_cand *c, int n, const pick_policy *p)
{
    int fast = -1, det = -1;
    for (int i = 0; i < n; i++) {
        if (!pick_allowed(&c[i], p))
            continue;
        if (fast < 0 || pick_faster(c[i].median_ms, c[fast].median_ms))
            fast = i;
        if (c[i].deterministic && (det < 0 || pick_faster(c[i].median_ms, c[det].median_ms)))
            det = i;
    }
    return p->order == PICK_FASTEST ? fast : det >= 0 ? det : fast;
}

void pick_policy_text(const pick_policy *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", p->order == PICK_DET_ONLY ? "--deterministic" : p->order == PICK_FASTEST ? "--fastest" : "",
             "");
    if (p->max_error > 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s--max-error %g", l ? " " : "", p->max_error);
    }
}

pick_cand pick_cand_of_entry(const tunedb_entry *e)
{
    return (pick_cand){.v = &e->v, .shape = e->shape, .status = KF_ST_OK, .median_ms = e->median_ms,
                       .gbps = e->gbps, .pct_peak = e->pct_peak, .gflops = e->gflops, .blocks = e->blocks,
                       .launches = e->launches,
                       .deterministic = e->deterministic, .has_acc = e->has_acc, .acc_rel = e->acc_rel, .source_hash = e->source_hash};
}
