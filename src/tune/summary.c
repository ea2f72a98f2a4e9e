/*
 * summary.c -- what `kforge tune` (and `kforge merge`) print at the end of a
 * search, in the --format asked for: the search (strategy, evaluations,
 * where the figures came from), the best candidate with its figures at
 * every size, and the ranking at each size.
 */
#include "tuner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "param.h"
#include "tunedb.h"
#include "util.h"

/* Joules with a unit ("4.802 mJ"); suffix after the unit ("*ms" for EDP). */
void tune_fmt_joules(char *buf, size_t len, double x, const char *suffix)
{
    if (!(x > 0) || !isfinite(x)) {
        snprintf(buf, len, "-");
        return;
    }
    double k = x < 1e-3 ? 1e6 : x < 1 ? 1e3 : 1;
    snprintf(buf, len, "%.4g %s%s", x * k, x < 1e-3 ? "uJ" : x < 1 ? "mJ" : "J", suffix);
}

/* An objective's value with its unit: "29.41 us", "4.802 mJ", "0.1412 mJ*ms". */
void tune_fmt_objective(const tuner *t, char *buf, size_t len, double x)
{
    if (t->o.objective == TUNE_OBJ_TIME)
        kf_fmt_ms(buf, len, x, false);
    else
        tune_fmt_joules(buf, len, x, t->o.objective == TUNE_OBJ_EDP ? "*ms" : "");
}
static void sizes_text(const tuner *t, strbuf *b)
{
    const kf_family *f = kf_families[t->cfg.family];
    for (int k = 0; k < t->nsizes; k++) {
        char st[128];
        shape_short(f, &t->sizes[k], st, sizeof st);
        sb_printf(b, "%s%s", k ? ", " : "", st);
    }
}

// ---------------------------------------------------------------------------
// the ranking at each size: the best few and how far behind they are

/* The candidates evaluated here that succeeded at size k, fastest first
 * (by the objective's share at that size). */
typedef struct {
    int *c;                 /* candidates, best first */
    int n;                  /* how many succeeded at the size */
    int within2, within10;  /* within 2% and 10% of the best (the best included) */
} ranking;

static const tuner *rank_t;
static int rank_k, rank_best;

/* Candidate c's share of the objective at size k; an abandoned case's
 * partial median (ranked, never best). */
static double rank_cost(const tuner *t, int c, int k) { return tuner_cell_estimate(t, cell_at(t, c, k)); }

/* Ranked: evaluated here, and failed at no size (abandoned counts; a size
 * without a figure leaves it out of that size's ranking). */
static bool ranked(const tuner *t, int c)
{
    return !tuner_other_shard(t, c) && !isnan(strat_cost(t->st, c)) && !tuner_failed(t, c);
}

static int cmp_rank(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    if (a == rank_best || b == rank_best)   /* the size's best first */
        return a == b ? 0 : a == rank_best ? -1 : 1;
    double x = rank_cost(rank_t, a, rank_k), y = rank_cost(rank_t, b, rank_k);
    if (x != y)
        return x < y ? -1 : 1;
    return (a > b) - (a < b);
}

/* The best at size k: the ranked candidate measured in full there with the
 * lowest objective (ties: the first); for time, what the database records
 * there; at a single size, the search's best.  Falls back to the search's
 * best. */
static int size_best(const tuner *t, const ranking *r, int k)
{
    int best = -1;
    double bx = 0;
    for (int i = 0; i < r->n; i++) {
        int c = r->c[i];
        if (cell_at(t, c, k)->st != KF_ST_OK)
            continue;
        double x = tuner_cell_cost(t, cell_at(t, c, k));
        if (best < 0 || x < bx) {
            best = c;
            bx = x;
        }
    }
    return best >= 0 ? best : strat_best(t->st, NULL);
}

static bool rank_size(const tuner *t, int k, ranking *r)
{
    memset(r, 0, sizeof *r);
    r->c = malloc(sizeof *r->c * (size_t)(t->ncand ? t->ncand : 1));
    if (!r->c)
        return false;
    for (int c = 0; c < t->ncand; c++) {
        double x = rank_cost(t, c, k);
        if (!ranked(t, c) /* failed at some size: never ranked */ || !(x > 0) || !isfinite(x))
            continue;
        r->c[r->n++] = c;
    }
    rank_t = t;
    rank_k = k;
    rank_best = size_best(t, r, k);
    qsort(r->c, (size_t)r->n, sizeof *r->c, cmp_rank);
    if (r->n > 0) {
        double best = rank_cost(t, r->c[0], k);
        for (int i = 0; i < r->n; i++) {
            double x = rank_cost(t, r->c[i], k);
            r->within2 += x <= best * 1.02;
            r->within10 += x <= best * 1.10;
        }
    }
    return true;
}

/* How much slower than the best, in percent. */
static double behind_pct(const tuner *t, const ranking *r, int k, int i)
{
    double best = rank_cost(t, r->c[0], k);
    return (rank_cost(t, r->c[i], k) / best - 1) * 100;
}

/* The parameters of candidate c that differ from candidate b's: "block_size=128 load=stream"
 * (json: {"block_size": 128, "load": "stream"}). */
static void differs_text(const tuner *t, int c, int b, strbuf *out, bool json)
{
    const kf_variant *v = &t->sp.variants[t->var[c]], *w = &t->sp.variants[t->var[b]];
    const kf_family *f = family_of(v);
    int n = 0;
    if (json)
        sb_append(out, "{");
    for (int a = 0; a < f->nparams; a++) {
        if (v->p[a] == w->p[a])
            continue;
        if (json) {
            sb_printf(out, "%s", n ? ", " : "");
            sb_json_string(out, f->params[a].name);
            sb_append(out, ": ");
            param_json(out, &f->params[a], v->p[a]);
        } else {
            sb_printf(out, "%s%s=", n ? " " : "", f->params[a].name);
            param_text(out, &f->params[a], v->p[a]);
        }
        n++;
    }
    if (json)
        sb_append(out, "}");
}

/* "a sharp peak: no other candidate within 2%" or "a plateau: 5 within 2%". */
static const char *spread_words(const ranking *r)
{
    return r->within2 > 1 ? "a plateau" : r->n > 1 ? "a sharp peak" : "the only one";
}

/* Rank i's text: the best's label, else what differs from the best (and
 * that it was abandoned: its time is that of its first repetitions). */
static void rank_text(const tuner *t, const ranking *r, int k, int i, strbuf *d)
{
    if (i > 0) {
        differs_text(t, r->c[i], r->c[0], d, false);
        if (cell_at(t, r->c[i], k)->st == KF_ST_ABANDONED)
            sb_append(d, d->len ? "  (abandoned)" : "(abandoned)");
        return;
    }
    char label[256];
    variant_label(&t->sp.variants[t->var[r->c[0]]], label, sizeof label);
    sb_append(d, label);
}

static void print_top_table(const tuner *t, int k, const ranking *r)
{
    const kf_family *f = kf_families[t->cfg.family];
    char st[128];
    shape_text(f, &t->sizes[k], st, sizeof st);
    int top = r->n < t->o.top ? r->n : t->o.top;
    printf("top %d at %s of %d candidate%s that ran: %d within 2%% of the best, %d within 10%% (%s)\n", top, st, r->n,
           r->n == 1 ? "" : "s", r->within2, r->within10, spread_words(r));
    const char *unit = t->o.objective == TUNE_OBJ_TIME ? "time" : tune_objective_names[t->o.objective];
    printf("  %4s  %12s  %7s  %s\n", "rank", unit, "behind", "differs from the best");
    for (int i = 0; i < top; i++) {
        char ob[32];
        tune_fmt_objective(t, ob, sizeof ob, rank_cost(t, r->c[i], k));
        strbuf d = {0};
        char behind[32] = "-";
        rank_text(t, r, k, i, &d);
        if (i > 0) /* an abandoned case's partial median may lie below the best's */
            snprintf(behind, sizeof behind, "%+.1f%%", behind_pct(t, r, k, i));
        printf("  %4d  %12s  %7s  %s\n", i + 1, ob, behind, d.s ? d.s : "(the same parameters)");
        sb_free(&d);
    }
}

static void print_top_md(const tuner *t, int k, const ranking *r)
{
    const kf_family *f = kf_families[t->cfg.family];
    char st[128];
    shape_text(f, &t->sizes[k], st, sizeof st);
    int top = r->n < t->o.top ? r->n : t->o.top;
    printf("\nTop %d at %s of %d candidate%s that ran: %d within 2%% of the best, %d within 10%% (%s).\n\n", top, st,
           r->n, r->n == 1 ? "" : "s", r->within2, r->within10, spread_words(r));
    printf("| rank | %s | behind | differs from the best |\n|---:|---:|---:|---|\n",
           t->o.objective == TUNE_OBJ_TIME ? "time" : tune_objective_names[t->o.objective]);
    for (int i = 0; i < top; i++) {
        char ob[32];
        tune_fmt_objective(t, ob, sizeof ob, rank_cost(t, r->c[i], k));
        strbuf d = {0};
        rank_text(t, r, k, i, &d);
        if (i == 0)
            printf("| 1 | %s | - | `%s` |\n", ob, d.s ? d.s : "");
        else
            printf("| %d | %s | +%.1f%% | `%s` |\n", i + 1, ob, behind_pct(t, r, k, i), d.s ? d.s : "");
        sb_free(&d);
    }
}

/* "top": [{"size": ..., "candidates": N, "within_2pct": a, "within_10pct": b, "ranking": [...]}] */
static void top_json(const tuner *t, strbuf *b, const char *okey)
{
    sb_append(b, ", \"top\": [");
    for (int k = 0; k < t->nsizes; k++) {
        ranking r;
        if (!rank_size(t, k, &r))
            continue;
        sb_append(b, k ? ", {\"size\": " : "{\"size\": ");
        shape_json(b, kf_families[t->cfg.family], &t->sizes[k]);
        sb_printf(b, ", \"candidates\": %d, \"within_2pct\": %d, \"within_10pct\": %d, \"ranking\": [", r.n,
                  r.within2, r.within10);
        int top = r.n < t->o.top ? r.n : t->o.top;
        for (int i = 0; i < top; i++) {
            char label[256];
            variant_label(&t->sp.variants[t->var[r.c[i]]], label, sizeof label);
            sb_printf(b, "%s{\"rank\": %d, \"%s\": %.9g, \"behind_pct\": %.4g, \"abandoned\": %s, \"label\": ",
                      i ? ", " : "", i + 1, okey, rank_cost(t, r.c[i], k), i ? behind_pct(t, &r, k, i) : 0.0,
                      cell_at(t, r.c[i], k)->st == KF_ST_ABANDONED ? "true" : "false");
            sb_json_string(b, label);
            sb_append(b, ", \"differs\": ");
            differs_text(t, r.c[i], r.c[0], b, true);
            sb_append(b, "}");
        }
        sb_append(b, "]}");
        free(r.c);
    }
    sb_append(b, "]");
}

/* The ranking at every size, after the best candidate's figures. */
static void print_top(const tuner *t)
{
    if (t->o.top <= 0)
        return;
    for (int k = 0; k < t->nsizes; k++) {
        ranking r;
        if (!rank_size(t, k, &r))
            return;
        if (r.n > 0) {
            if (t->o.fmt == KF_FMT_MD)
                print_top_md(t, k, &r);
            else
                print_top_table(t, k, &r);
        }
        free(r.c);
    }
}

/* Where the best is not run-to-run deterministic: what kforge best and
 * export serve by default at each size instead (the fastest deterministic
 * candidate there, pick.h), how far behind, and its measured error. */
static void print_det_alternative(const tuner *t, int best)
{
    pick_cand *pc = calloc((size_t)t->ncand + 1, sizeof *pc);
    if (!pc)
        return;
    bool said = false;
    for (int k = 0; k < t->nsizes; k++) {
        const cell *x = cell_at(t, best, k);
        if (x->deterministic)
            continue;
        for (int c = 0; c < t->ncand; c++)
            pc[c] = tuner_pick_cand(t, c, k);
        int d = pick_fastest(pc, t->ncand, true);
        char st[128], label[256], err[48] = "";
        shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
        if (!said)
            printf("  not run-to-run deterministic; kforge best and export serve by default (--fastest: the best "
                   "above):\n");
        said = true;
        if (d < 0) {
            printf("  %16s  the best above: no deterministic candidate was measured there\n", st);
            continue;
        }
        const cell *y = cell_at(t, d, k);
        family_of(pc[d].v)->label(pc[d].v, label, sizeof label);
        if (y->has_acc)
            snprintf(err, sizeof err, ", error %.2g", y->acc_rel);
        if (x->has_acc)
            snprintf(err + strlen(err), sizeof err - strlen(err), " (the best's %.2g)", x->acc_rel);
        printf("  %16s  %s, %+.1f%%%s\n", st, label, 100 * (y->median_ms / x->median_ms - 1), err);
    }
    free(pc);
}

void tune_print_summary(tuner *t, double wall, const char *stopped)
{
    double best_obj;
    int best = strat_best(t->st, &best_obj);
    int nt;
    const strat_improvement *tr = strat_trace(t->st, &nt);
    int evals = strat_evaluations(t->st);
    const kf_variant *bv = best >= 0 ? &t->sp.variants[t->var[best]] : NULL;
    char label[256] = "";
    if (bv)
        family_of(bv)->label(bv, label, sizeof label);
    char *vjson = bv ? tunedb_variant_json(bv) : NULL;
    strbuf sz = {0};
    sizes_text(t, &sz);
    int others = tuner_other_shard_evaluated(t);
    int from_file = evals - t->told - others;
    int failed_cands = tuner_failed_candidates(t);
    int abandoned_cands = tuner_abandoned_candidates(t);
    int ncompiled = 0, ncached = 0; /* cubins: a tune after compile-only shards compiles none */
    if (t->rs) {
        run_session_counts(t->rs, &ncompiled, &ncached);
        ncompiled -= t->rs_compiled0; /* a borrowed session's: this search's share */
        ncached -= t->rs_cached0;
    }
    static const char *const obj_what[TUNE_OBJ_COUNT][2] = {
        {"median time", "weighted sum of median times over the sizes"},
        {"energy of one run", "weighted sum of the energy of one run over the sizes"},
        {"energy x median time", "weighted sum of energy x median time over the sizes"}};
    const char *what = obj_what[t->o.objective][t->nsizes == 1 ? 0 : 1];
    static const char *const obj_key[TUNE_OBJ_COUNT] = {"objective_ms", "objective_j", "objective_j_ms"};
    const char *okey = obj_key[t->o.objective];
    bool energy = t->o.objective != TUNE_OBJ_TIME;
    bool flops = kf_families[t->cfg.family]->flops != NULL; /* a GFLOP/s column, only where the family counts flops */

    if (t->o.fmt == KF_FMT_MD) {
        printf("kforge tune %s on %s: strategy %s (seed %llu), objective %s, %d of %d candidates evaluated in "
               "%.1f s; stopped: %s.\n\n",
               t->o.space, t->device, strat_names[t->kind], (unsigned long long)t->o.seed, tune_objective_names[t->o.objective],
               evals, t->ncand, wall, stopped);
        if (!bv) {
            printf("No candidate succeeded.\n");
        } else {
            char ob[32];
            tune_fmt_objective(t, ob, sizeof ob, best_obj);
            printf("Best: `%s%s%s` (found at evaluation %d), %s %s.\n\n", bv->name, bv->name[0] ? " " : "", label,
                   nt ? tr[nt - 1].evaluation : 0, what, ob);
            printf("| size | median | GB/s | %% peak |%s%s blocks | launches |\n", flops ? " GFLOP/s |" : "",
                   energy ? " energy | GB/J |" : "");
            printf("|---:|---:|---:|---:|%s%s---:|---:|\n", flops ? "---:|" : "", energy ? "---:|---:|" : "");
            for (int k = 0; k < t->nsizes; k++) {
                const cell *x = cell_at(t, best, k);
                char m[32], st[128], e[32] = "";
                kf_fmt_ms(m, sizeof m, x->median_ms, false);
                shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
                printf("| %s | %s | %.1f | %.1f |", st, m, x->gbps, x->pct_peak);
                if (flops)
                    printf(" %.1f |", x->gflops);
                if (energy) {
                    tune_fmt_joules(e, sizeof e, x->energy_j, "");
                    printf(" %s | %.1f |", e, x->energy_j > 0 ? x->gbps * x->median_ms / 1e3 / x->energy_j : 0);
                }
                printf(" %lld | %d |\n", (long long)x->blocks, x->launches);
            }
            printf("\nVariant: `%s`\n", vjson ? vjson : "");
            print_top(t);
        }
    } else if (t->o.fmt == KF_FMT_TABLE) {
        printf("kforge tune: %s on %s: %d candidates, objective over %s = %s%s\n", t->o.space, t->device, t->ncand,
               kf_families[t->cfg.family]->nsizes == 1 ? kf_families[t->cfg.family]->sizes[0].name : "shapes",
               sz.s ? sz.s : "", t->tune_sizes ? " (tune, weighted)" : "");
        if (t->merged_files)
            printf("merged from %d results file%s (%s): %d of the space's %d candidates have results at every size; "
                   "failed candidates: %d\n",
                   t->merged_files, t->merged_files == 1 ? "" : "s", t->o.results, t->ncand, t->space_cands,
                   failed_cands);
        else
            printf("strategy %s (seed %llu): %d of %d candidates evaluated (%.1f%%) in %.1f s; stopped: %s\n",
                   strat_names[t->kind], (unsigned long long)t->o.seed, evals, t->ncand, 100.0 * evals / t->ncand,
                   wall, stopped);
        if (t->merged_files)
            ;
        else if (t->o.simulate) {
            printf("  simulated from %s; %d of them failed\n", t->o.simulate, failed_cands);
            if (t->sim_clock_ms > 0 && t->o.ro.jobs > 1)
                printf("  simulated clock (each evaluation's recorded compile, verify, benchmark and tuner time, on "
                       "one of %d processes%s): %.1f s in all; the best found after %.1f s\n",
                       t->o.ro.jobs, t->sim_stream ? ", asked as each frees" : ", in batches", t->sim_clock_ms / 1e3,
                       t->sim_best_ms / 1e3);
            else if (t->sim_clock_ms > 0)
                printf("  simulated clock (each evaluation's recorded compile, verify, benchmark and tuner time, one "
                       "after another): %.1f s in all; the best found after %.1f s\n",
                       t->sim_clock_ms / 1e3, t->sim_best_ms / 1e3);
        }
        else
            printf("  measured now: %d candidates (%d cases, %d failed); taken from %s: %d; failed candidates: %d\n",
                   t->told, t->measured_cases, t->failed_cases, t->o.results, from_file, failed_cands);
        if (t->o.max_error > 0)
            printf("  above --max-error %g: %d candidates (relative error on the realistic data above the bound "
                   "at some size: never the best)\n",
                   t->o.max_error, tuner_over_error_candidates(t));
        if (abandoned_cands && t->o.abandon_k > 0)
            printf("  abandoned: %d candidates slower than %g x the fastest so far at a size, or more than 2%% slower "
                   "with 95%% confidence (%d cases measured now)\n",
                   abandoned_cands, t->o.abandon_k, t->abandoned_cases);
        else if (abandoned_cands) /* merge: the factor was the tune's */
            printf("  abandoned: %d candidates (stopped early by the tune's --abandon-above)\n", abandoned_cands);
        if (t->measured_cases > 0) {
            double gpu = (t->setup_ms + t->verify_ms + t->bench_ms) / 1e3 / (t->ndev > 1 ? t->ndev : 1);
            printf("  where the time went: GPU worker %.1f s (setup %.1f s, verify %.1f s, timing %.1f s)%s; "
                   "the rest %.1f s (start, waiting for the compiler, the host); compiling %.1f s in the pool, "
                   "alongside\n",
                   gpu, t->setup_ms / 1e3, t->verify_ms / 1e3, t->bench_ms / 1e3, t->ndev > 1 ? " per GPU" : "",
                   wall > gpu ? wall - gpu : 0, t->compile_ms / 1e3);
            printf("  cubins: %d compiled now, %d from the cubin cache\n", ncompiled, ncached);
        }
        if (t->mine)
            printf("  %s: %d of them left to the other shards (kforge merge combines the shards' results files)\n",
                   t->o.shard.how, others);
        if (t->ndev > 1) {
            printf("  on %d GPUs, cases measured per GPU:", t->ndev);
            for (int i = 0; i < t->ndev; i++)
                printf("%s %d: %d", i ? "," : "", t->dev_info[i].dev.index, t->per_device[i]);
            printf("\n");
        }
        if (!bv && strat_evaluations(t->st) == 0 && t->out_of_time) {
            printf("no candidate was measured within --time %g s: their compiles took longer (a cold cubin cache?); "
                   "a longer --time, or check --compile first\n",
                   t->o.time_s);
        } else if (!bv) {
            printf("no candidate succeeded\n");
        } else {
            char ob[32];
            tune_fmt_objective(t, ob, sizeof ob, best_obj);
            printf("best: %s%s%s (found at evaluation %d)\n", bv->name, bv->name[0] ? " " : "", label,
                   nt ? tr[nt - 1].evaluation : 0);
            printf("  objective %s (%s)\n", ob, what);
            printf("  %16s  %10s  %8s  %6s", "size", "median", "GB/s", "% peak");
            if (flops)
                printf("  %9s", "GFLOP/s");
            printf("  %8s  %8s", "blocks", "launches");
            bool acc = false;
            for (int k = 0; k < t->nsizes; k++)
                acc = acc || cell_at(t, best, k)->has_acc;
            if (acc)
                printf("  %9s", "error");
            printf(energy ? "  %10s  %8s\n" : "\n", "energy", "GB/J");
            for (int k = 0; k < t->nsizes; k++) {
                const cell *x = cell_at(t, best, k);
                char m[32], st[128], e[32];
                kf_fmt_ms(m, sizeof m, x->median_ms, false);
                shape_short(kf_families[t->cfg.family], &t->sizes[k], st, sizeof st);
                printf("  %16s  %10s  %8.1f  %6.1f", st, m, x->gbps, x->pct_peak);
                if (flops)
                    printf("  %9.1f", x->gflops);
                printf("  %8lld  %8d", (long long)x->blocks, x->launches);
                if (acc && x->has_acc)
                    printf("  %9.2g", x->acc_rel);
                else if (acc)
                    printf("  %9s", "-");
                tune_fmt_joules(e, sizeof e, x->energy_j, "");
                if (energy)
                    printf("  %10s  %8.1f\n", e, x->energy_j > 0 ? x->gbps * x->median_ms / 1e3 / x->energy_j : 0);
                else
                    printf("\n");
            }
            printf("  variant: %s\n", vjson ? vjson : "");
            print_det_alternative(t, best);
            printf("  new best at evaluation:");
            for (int i = 0; i < nt; i++)
                printf("%s %d", i ? "," : "", tr[i].evaluation);
            printf("\n");
            print_top(t);
        }
    } else {
        strbuf b = {0};
        if (t->o.fmt == KF_FMT_JSONL)
            for (int i = 0; i < nt; i++) {
                char l[256];
                variant_label(&t->sp.variants[t->var[tr[i].idx]], l, sizeof l);
                sb_printf(&b, "{\"event\": \"improvement\", \"evaluation\": %d, \"%s\": %.9g, \"label\": ",
                          tr[i].evaluation, okey, tr[i].cost);
                sb_json_string(&b, l);
                sb_append(&b, "}\n");
            }
        sb_append(&b, "{\"event\": \"summary\", \"space\": ");
        sb_json_string(&b, t->o.space);
        sb_append(&b, ", \"device\": ");
        sb_json_string(&b, t->device);
        sb_printf(&b, ", \"objective\": \"%s\"", tune_objective_names[t->o.objective]);
        sb_printf(&b, ", \"strategy\": \"%s\", \"seed\": %llu, \"candidates\": %d, \"budget\": %d, \"evaluations\": %d, "
                      "\"measured_candidates\": %d, \"measured_cases\": %d, \"failed_cases\": %d, \"from_results\": %d, "
                      "\"failed_candidates\": %d, \"wall_s\": %.3f, \"stopped\": \"%s\", \"simulated\": %s, ",
                  strat_names[t->kind], (unsigned long long)t->o.seed, t->ncand, t->budget, evals, t->told,
                  t->measured_cases, t->failed_cases, from_file, failed_cands, wall, stopped,
                  t->o.simulate ? "true" : "false");
        if (t->o.simulate)
            sb_printf(&b, "\"simulated_s\": %.3f, \"simulated_best_s\": %.3f, ", t->sim_clock_ms / 1e3,
                      t->sim_best_ms / 1e3);
        sb_printf(&b, "\"gpus\": %d, \"abandoned_candidates\": %d, \"abandoned_cases\": %d, ", t->ndev > 0 ? t->ndev : 1,
                  abandoned_cands, t->abandoned_cases);
        sb_printf(&b, "\"phases_s\": {\"compile\": %.3f, \"setup\": %.3f, \"verify\": %.3f, \"bench\": %.3f}, ",
                  t->compile_ms / 1e3, t->setup_ms / 1e3, t->verify_ms / 1e3, t->bench_ms / 1e3);
        if (t->rs)
            sb_printf(&b, "\"cubins\": {\"compiled\": %d, \"cached\": %d}, ", ncompiled, ncached);
        if (t->merged_files)
            sb_printf(&b, "\"merged_files\": %d, \"space_candidates\": %d, ", t->merged_files, t->space_cands);
        if (t->mine)
            sb_printf(&b, "\"shard\": \"%d/%d\", \"shard_candidates\": %d, \"other_shards\": %d, ", t->o.shard.k,
                      t->o.shard.n, t->nmine, others);
        /* the sizes as numbers: n for a family of one size, else {"rows": R, "cols": C, ...} */
        const kf_family *fam = kf_families[t->cfg.family];
        sb_append(&b, "\"n\": [");
        for (int k = 0; k < t->nsizes; k++) {
            sb_append(&b, k ? ", " : "");
            if (fam->nsizes == 1)
                sb_printf(&b, "%lld", (long long)t->sizes[k].d[0]);
            else
                shape_json(&b, fam, &t->sizes[k]);
        }
        sb_append(&b, "], \"weights\": [");
        for (int k = 0; k < t->nsizes; k++)
            sb_printf(&b, "%s%.9g", k ? ", " : "", t->weights[k]);
        sb_append(&b, "]");
        if (bv) {
            sb_printf(&b, ", \"best\": {\"%s\": %.9g, \"evaluation\": %d, \"label\": ", okey, best_obj,
                      nt ? tr[nt - 1].evaluation : 0);
            sb_json_string(&b, label);
            sb_printf(&b, ", \"variant\": %s, \"sizes\": [", vjson ? vjson : "{}");
            for (int k = 0; k < t->nsizes; k++) {
                const cell *x = cell_at(t, best, k);
                sb_append(&b, k ? ", {\"size\": " : "{\"size\": ");
                shape_json(&b, fam, &t->sizes[k]);
                sb_printf(&b, ", \"median_ms\": %.9g, \"gbps\": %.6g, \"pct_peak\": %.4g, \"blocks\": %lld, \"launches\": %d",
                          x->median_ms, x->gbps, x->pct_peak, (long long)x->blocks, x->launches);
                if (flops)
                    sb_printf(&b, ", \"gflops\": %.6g", x->gflops);
                if (energy)
                    sb_printf(&b, ", \"energy_j\": %.9g", x->energy_j);
                sb_append(&b, "}");
            }
            sb_append(&b, "]}");
        } else {
            sb_append(&b, ", \"best\": null");
        }
        if (bv && t->o.top > 0)
            top_json(t, &b, okey);
        if (t->o.fmt == KF_FMT_JSON) {
            sb_append(&b, ", \"improvements\": [");
            for (int i = 0; i < nt; i++)
                sb_printf(&b, "%s{\"evaluation\": %d, \"%s\": %.9g}", i ? ", " : "", tr[i].evaluation, okey,
                          tr[i].cost);
            sb_append(&b, "]");
        }
        sb_append(&b, "}\n");
        char *s = sb_take(&b);
        fputs(s, stdout);
        free(s);
    }
    fflush(stdout);
    free(vjson);
    sb_free(&sz);
}
