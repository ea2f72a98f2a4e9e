/*
 * between.c -- tune --between K (issue 35): after a search over several
 * sizes, the leading candidates of each pair of neighbouring sizes are
 * measured at K sizes in between (log-spaced), so that the database, kforge
 * best and an exported header's nearest-size dispatch hold a variant
 * measured to be right there instead of a guess.
 *
 * The leaders of a size: its two fastest candidates and its fastest
 * run-to-run deterministic one (what best and export serve by default,
 * pick.h).  The union of the leaders of every size is measured at every size
 * in between, an exhaustive search of a config of its own, written next to
 * the results file (RESULTS.between.json), so the second search resumes and
 * merges like any other.  Its variants are the search's (its names too), so
 * their results lines are the same variants at more sizes.
 */
#include "tuner.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fields.h"
#include "family.h"
#include "param.h"
#include "pick.h"
#include "ranges.h"
#include "util.h"

/* Marks the leaders of size k in lead[] (lead[c] |= 1 << k). */
static void mark_leaders(const tuner *t, int k, pick_cand *pc, uint64_t *lead)
{
    for (int c = 0; c < t->ncand; c++)
        pc[c] = tuner_pick_cand(t, c, k);
    int a = pick_fastest(pc, t->ncand, false);
    if (a < 0)
        return;
    lead[a] |= 1ull << k;
    pc[a].status = KF_ST_COUNT; /* out of the way for the second */
    int b = pick_fastest(pc, t->ncand, false);
    if (b >= 0)
        lead[b] |= 1ull << k;
    pc[a] = tuner_pick_cand(t, a, k);
    int d = pick_fastest(pc, t->ncand, true);
    if (d >= 0)
        lead[d] |= 1ull << k;
}

/* The sizes measured between neighbouring tuned sizes a < b: written to
 * b (a JSON list's items) or stored in out[*npoints ...], counted in
 * *npoints.  between < 0: the default, one size between neighbours more
 * than KF_BETWEEN_RATIO apart, none between nearer ones. */
static void points_between(int64_t a, int64_t b, int between, strbuf *sb, int *npoints, int64_t *out)
{
    double la = log((double)a), lb = log((double)b);
    int64_t last = a;
    int k = between >= 0 ? between : b > a * KF_BETWEEN_RATIO ? 1 : 0;
    for (int j = 1; j <= k; j++) {
        int64_t p = llround(exp(la + (lb - la) * j / (k + 1)));
        if (p <= last || p >= b)
            continue;
        if (sb)
            sb_printf(sb, "%s%lld", *npoints ? ", " : "", (long long)p);
        if (out)
            out[*npoints] = p;
        last = p;
        ++*npoints;
    }
}

/* The tuned sizes (n of a one-size family), ascending, into n[0 .. nsizes). */
static void tuned_ascending(const tuner *t, int64_t *n)
{
    int ns = t->nsizes;
    for (int k = 0; k < ns; k++)
        n[k] = t->sizes[k].d[0];
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && n[j - 1] > n[j]; j--) {
            int64_t x = n[j];
            n[j] = n[j - 1];
            n[j - 1] = x;
        }
}

int tune_between_sizes(const tuner *t, int between, int64_t **out)
{
    *out = NULL;
    int ns = t->nsizes, np = 0;
    if (ns < 2 || ns > 64 || kf_families[t->cfg.family]->nsizes != 1)
        return 0;
    int64_t *n = malloc(sizeof *n * (size_t)ns);
    size_t cap = (size_t)(ns - 1) * (size_t)(between > 0 ? between : 1);
    int64_t *p = malloc(sizeof *p * (cap ? cap : 1));
    if (!n || !p || between > 1000) {
        free(n);
        free(p);
        return 0;
    }
    tuned_ascending(t, n);
    for (int i = 0; i + 1 < ns; i++)
        points_between(n[i], n[i + 1], between, NULL, &np, p);
    free(n);
    *out = p;
    return np;
}

int tune_between_space(const tuner *t, int between, const char *path, int *npoints, char *err, size_t errlen)
{
    const kf_family *f = kf_families[t->cfg.family];
    *npoints = 0;
    if (t->nsizes > 64) {
        kf_err(err, errlen, "--between: at most 64 tuned sizes (%d given)", t->nsizes);
        return -1;
    }
    if (f->nsizes != 1) {
        kf_err(err, errlen, "--between: for families with one size (n) only; %s has %d", f->name, f->nsizes);
        return -1;
    }
    int ns = t->nsizes;
    int64_t *n = malloc(sizeof *n * (size_t)ns);
    uint64_t *lead = calloc((size_t)t->ncand + 1, sizeof *lead);
    pick_cand *pc = calloc((size_t)t->ncand + 1, sizeof *pc);
    strbuf b = {0};
    int rc = -1, nl = 0;
    if (!n || !lead || !pc) {
        kf_err(err, errlen, "out of memory");
        goto out;
    }
    tuned_ascending(t, n);
    for (int k = 0; k < ns; k++)
        mark_leaders(t, k, pc, lead);
    sb_printf(&b, "{\n  \"kernel\": ");
    sb_json_string(&b, f->name);
    sb_printf(&b, ",\n  \"description\": ");
    strbuf d = {0};
    if (between >= 0)
        sb_printf(&d, "kforge tune --between %d of %s: the leaders of each tuned size (its two fastest candidates "
                      "and its fastest deterministic one) at %d size%s between each pair of neighbouring ones",
                  between, t->o.space, between, between == 1 ? "" : "s");
    else
        sb_printf(&d, "kforge tune of %s, sizes between the tuned ones (the default; --between 0: none): the "
                      "leaders of each tuned size (its two fastest candidates and its fastest deterministic one) "
                      "at the log-spaced size between each pair of neighbouring ones more than %dx apart",
                  t->o.space, KF_BETWEEN_RATIO);
    sb_json_string(&b, d.s);
    sb_free(&d);
    sb_printf(&b, ",\n  \"%s\": [", f->sizes[0].name);
    for (int i = 0; i + 1 < ns; i++)
        points_between(n[i], n[i + 1], between, &b, npoints, NULL);
    sb_append(&b, "],\n  \"bench\": {");
    for (int i = 0; i < bench_nfields; i++) {
        sb_printf(&b, "%s\"%s\": ", i ? ", " : "", bench_fields[i].name);
        bench_field_text(&b, &bench_fields[i], &t->cfg.bench);
    }
    sb_append(&b, "},\n  \"variants\": [");
    for (int c = 0; c < t->ncand; c++) {
        if (!lead[c])
            continue;
        const kf_variant *v = &t->sp.variants[t->var[c]];
        /* the variant as the search has it, its name (if any) too: the
         * same variant at other sizes, for plot, compare and best alike */
        sb_append(&b, nl++ ? ",\n    {" : "\n    {");
        if (v->name[0]) {
            sb_append(&b, "\"name\": ");
            sb_json_string(&b, v->name);
        }
        for (int p = 0; p < f->nparams; p++) {
            sb_printf(&b, "%s\"%s\": ", p || v->name[0] ? ", " : "", f->params[p].name);
            param_json(&b, &f->params[p], v->p[p]);
        }
        sb_append(&b, "}");
    }
    sb_append(&b, "\n  ]\n}\n");
    if (*npoints == 0 || nl == 0) {
        kf_err(err, errlen, "--between: nothing to measure (%s)",
               nl == 0 ? "no candidate succeeded" : "no size lies between the tuned ones");
        rc = 1;
        goto out;
    }
    if (kf_write_file_atomic(path, b.s, b.len, err, errlen) != 0)
        goto out;
    rc = 0;
out:
    sb_free(&b);
    free(n);
    free(lead);
    free(pc);
    return rc;
}
