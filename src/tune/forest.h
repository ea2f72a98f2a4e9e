/*
 * forest.h -- a random forest regressor over integer coordinates, the
 * surrogate model of the "model" search strategy (strategy.c).
 *
 * Inputs are coordinate vectors as strategy.h defines them (coords[d] is the
 * index of the value among the axis' levels); an ordered axis splits at a
 * threshold (x[d] <= t goes left), an enumerated one by a set of levels
 * (those whose mean target is lowest go left; up to 64 levels, more are
 * split as ordered).  Each tree is grown on a bootstrap sample, trying a
 * random subset of the axes at every node, down to leaves of min_leaf
 * samples; the prediction is the mean over the trees of the leaf means,
 * and its spread across the trees the uncertainty.
 *
 * Deterministic: the only randomness is the seed's.
 */
#ifndef KF_FOREST_H
#define KF_FOREST_H

#include <stdbool.h>
#include <stdint.h>

typedef struct forest forest;

typedef struct {
    int ntrees;             /* <= 0: 24 */
    int min_leaf;           /* samples a leaf keeps at least; <= 0: 1 */
    double axis_frac;       /* share of the axes tried at a node; <= 0: 0.7 (at least one) */
    uint64_t seed;
} forest_opts;

/* Fits the forest to m samples: X (m x dims coordinates), y (targets).
 * NULL when memory runs out. */
forest *forest_fit(const int *X, const double *y, int m, int dims, const int *levels, const bool *ordered,
                   const forest_opts *o);

/* The mean prediction at x and its standard deviation across the trees. */
void forest_predict(const forest *f, const int *x, double *mean, double *sd);

/* The trees, and one tree's prediction at x (a sample of the forest's
 * belief: Thompson sampling). */
int forest_trees(const forest *f);
double forest_predict_tree(const forest *f, int t, const int *x);

void forest_free(forest *f);

#endif
