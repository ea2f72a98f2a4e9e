/*
 * strategy.h -- search strategies for autotuning, over an abstract space.
 *
 * Nothing here knows about GPUs or kernels: a space is N candidates, each a
 * coordinate vector (coords[i * dims + d] is the index of candidate i's
 * value among the sorted distinct values of axis d), and a strategy decides
 * which candidates to evaluate next from the costs of those evaluated so
 * far.  Lower cost is better; +inf (or NaN) marks a candidate that failed,
 * which is never chosen as the best, and so does a cost told as an estimate
 * (strat_tell_estimate), which steers the search all the same.
 *
 * Neighbours (local search, annealing, mutation): candidates that differ
 * from i in exactly one axis.  Along an ordered (numeric) axis that is the
 * nearest existing value below and above (the grid has holes where
 * constraints removed combinations, so "+-1 among the candidates" rather
 * than "+-1 in the full product"); along an enumerated axis every other
 * value is a neighbour.
 *
 * The interface is batch-oriented so that the caller can submit a whole
 * batch at once (the compiler pool then works ahead of the GPU):
 *
 *   strategy *s = strat_new(STRAT_LOCAL, &space, &opts, err, sizeof err);
 *   int batch[32], k;
 *   while ((k = strat_ask(s, batch, 32)) > 0 && !out_of_time)
 *       for (int i = 0; i < k; i++)
 *           strat_tell(s, batch[i], measure(batch[i]));   // any order
 *
 * Every candidate of a batch must be told before asking again.  A strategy
 * never asks for a candidate twice: costs are cached, and revisiting a
 * candidate (a hill climber stepping back) is free and does not count.
 * Costs known from an earlier run (strat_known) are taken instead of asking:
 * they count as evaluations when the search reaches them, so an
 * interrupted search re-run with the same seed replays the same path and
 * ends with the same answer, measuring only what it had not measured yet.
 *
 * Reproducible: the only randomness is the strategy's own PRNG
 * (xoshiro256** seeded through splitmix64), so the same space, seed, batch
 * size and costs give the same sequence of batches on every machine.
 */
#ifndef KF_STRATEGY_H
#define KF_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef enum {
    STRAT_EXHAUSTIVE,   /* every candidate, in index order */
    STRAT_RANDOM,       /* uniform sampling without replacement */
    STRAT_LOCAL,        /* hill climbing (best or first improvement) with random restarts */
    STRAT_ANNEAL,       /* simulated annealing on the neighbour graph, restarts when frozen */
    STRAT_GENETIC,      /* (mu + lambda) genetic search: tournaments, uniform crossover, mutation */
    STRAT_MODEL,        /* model-guided: a random forest fitted to the costs so far, expected improvement */
    STRAT_COUNT
} strat_kind;

/* "exhaustive", "random", "local", "anneal", "genetic", "model" */
extern const char *const strat_names[STRAT_COUNT];

typedef struct {
    int n;                  /* candidates (>= 1) */
    int dims;               /* axes (>= 0) */
    const int *coords;      /* n * dims coordinates, coords[i * dims + d] in 0 .. levels[d] - 1 */
    const int *levels;      /* distinct values of each axis */
    const bool *ordered;    /* per axis: numeric (neighbours are the nearest values) or enumerated */
} strat_space;

typedef struct {
    uint64_t seed;
    int budget;             /* evaluations at most; <= 0 or > n: n */
    /* local */
    bool first_improvement; /* move to the first better neighbour found (in random order), not the best */
    /* local (first improvement) and anneal: candidates per batch; <= 0: 4 */
    int batch;
    /* anneal: temperatures, as relative cost increase accepted with probability 1/e;
     * <= 0: 0.1 falling geometrically to 0.002 over the budget */
    double t_start, t_end;
    /* genetic: population size; <= 0: 16 (at most n) */
    int population;
} strat_opts;

void strat_opts_defaults(strat_opts *o);

typedef struct strategy strategy;

/* Copies the space (the caller's arrays may be freed).  NULL with a message
 * if the space is malformed or memory runs out. */
strategy *strat_new(strat_kind kind, const strat_space *sp, const strat_opts *o, char *err, size_t errlen);

/* Cost of candidate idx known from an earlier run: used instead of asking
 * for it, when the search gets there.  Call before the first strat_ask.
 * strat_known_estimate: as strat_known, for an estimate (strat_tell_estimate). */
void strat_known(strategy *s, int idx, double cost);
void strat_known_estimate(strategy *s, int idx, double cost);

/* Writes up to max (>= 1) candidates to evaluate next into out and returns
 * how many; 0 when the search is over (space exhausted, budget spent, or
 * the strategy has nothing left to try); -1 if candidates of the previous
 * batch were not told yet. */
int strat_ask(strategy *s, int *out, int max);

/* As strat_ask, while candidates asked for earlier are not told yet (an
 * asynchronous search: ask as compile slots free, tell as results come, in
 * any order); those pending are never asked for again.  Only the model
 * strategy: -1 for the others (ask in batches), or max < 1.  0: nothing to
 * ask now within the budget; the search is over once nothing is pending
 * either.  The sequence then depends on the order results come in: the
 * same seed and costs told in the same order give the same candidates. */
int strat_ask_more(strategy *s, int *out, int max);

/* The cost of a candidate of the current batch.  Returns 0, or -1 if idx
 * was not asked for (or told already). */
int strat_tell(strategy *s, int idx, double cost);

/* As strat_tell, for a candidate whose cost was only estimated (measured
 * in part, e.g. stopped early as slower than the best): the estimate steers
 * the search as a cost does, but the candidate is never the best. */
int strat_tell_estimate(strategy *s, int idx, double cost);

/* Up to max candidates the search will likely ask for after the current
 * batch (the model strategy's ranking beyond it; none for the others),
 * within the budget, written to out; how many.  Only a hint, for compiling
 * ahead: it changes nothing in the search. */
int strat_peek(const strategy *s, int *out, int max);

/* Candidates evaluated so far (told, or taken from strat_known). */
int strat_evaluations(const strategy *s);

/* Best candidate so far (-1 if none has a finite cost) and its cost. */
int strat_best(const strategy *s, double *cost);

/* Cost of idx as this search knows it; NaN if not evaluated. */
double strat_cost(const strategy *s, int idx);

/* Every new best, in order: at which evaluation (1-based) it was found. */
typedef struct {
    int evaluation;
    int idx;
    double cost;
} strat_improvement;

const strat_improvement *strat_trace(const strategy *s, int *count);

/* The neighbours of idx (see above); *count set.  Built for the strategies
 * that move between neighbours (local, anneal); none (count 0) for the
 * others.  For tests and tools. */
const int *strat_neighbours(const strategy *s, int idx, int *count);

void strat_free(strategy *s);

#endif
