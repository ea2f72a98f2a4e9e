/*
 * forest.c -- the random forest of forest.h.
 */
#include "forest.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int dim;                /* -1: a leaf */
    int thr;                /* ordered: x[dim] <= thr goes left */
    uint64_t mask;          /* enumerated (mask != 0): levels going left */
    int left, right;
    double value;
} node;

typedef struct {
    node *nodes;
    int n, cap;
} tree;

struct forest {
    int ntrees, dims;
    tree *trees;
};

typedef struct {
    const int *X;
    const double *y;
    int dims;
    const int *levels;
    const bool *ordered;
    int min_leaf, ntry;
    uint64_t rng[4];
    int *axes;
    double *cnt, *sum;      /* per level of one axis */
    int *order;             /* levels sorted by mean */
    double *mean;
    bool oom;
} builder;


static int rng_below(uint64_t s[4], int n) { return (int)((rng_next(s) >> 11) % (uint64_t)n); }

static int add_node(tree *t, builder *b)
{
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        node *nn = realloc(t->nodes, sizeof *nn * (size_t)cap);
        if (!nn) {
            b->oom = true;
            return -1;
        }
        t->nodes = nn;
        t->cap = cap;
    }
    memset(&t->nodes[t->n], 0, sizeof t->nodes[t->n]);
    t->nodes[t->n].dim = -1;
    return t->n++;
}

static bool goes_left(const node *nd, const int *x)
{
    int v = x[nd->dim];
    if (nd->mask)
        return v < 64 && ((nd->mask >> v) & 1);
    return v <= nd->thr;
}

static void sort_levels(builder *b, int *lv, int k)
{
    /* insertion sort by mean, ties by level: k <= 64 */
    for (int i = 1; i < k; i++) {
        int v = lv[i], j = i - 1;
        while (j >= 0 && (b->mean[lv[j]] > b->mean[v] || (b->mean[lv[j]] == b->mean[v] && lv[j] > v))) {
            lv[j + 1] = lv[j];
            j--;
        }
        lv[j + 1] = v;
    }
}

/* Grows the subtree of the samples idx[0..k); returns its node. */
static int grow(tree *t, builder *b, int *idx, int k, int depth)
{
    int me = add_node(t, b);
    if (me < 0)
        return -1;
    double tot = 0;
    for (int i = 0; i < k; i++)
        tot += b->y[idx[i]];
    t->nodes[me].value = tot / k;
    if (k < 2 * b->min_leaf || depth >= 48)
        return me;
    bool same = true;
    for (int i = 1; i < k && same; i++)
        same = b->y[idx[i]] == b->y[idx[0]];
    if (same)
        return me;
    double base = tot * tot / k, best = base + 1e-12 * fabs(base) + 1e-12;
    int bd = -1, bthr = 0;
    uint64_t bmask = 0;
    /* a random subset of the axes (partial Fisher-Yates) */
    for (int d = 0; d < b->dims; d++)
        b->axes[d] = d;
    for (int q = 0; q < b->ntry; q++) {
        int r = q + rng_below(b->rng, b->dims - q);
        int d = b->axes[r];
        b->axes[r] = b->axes[q];
        b->axes[q] = d;
        int L = b->levels[d];
        memset(b->cnt, 0, sizeof *b->cnt * (size_t)L);
        memset(b->sum, 0, sizeof *b->sum * (size_t)L);
        for (int i = 0; i < k; i++) {
            int v = b->X[(size_t)idx[i] * (size_t)b->dims + (size_t)d];
            b->cnt[v]++;
            b->sum[v] += b->y[idx[i]];
        }
        int nl = 0;
        for (int v = 0; v < L; v++)
            if (b->cnt[v] > 0)
                b->order[nl++] = v;
        if (nl < 2)
            continue;
        bool enumerated = !b->ordered[d] && L <= 64;
        if (enumerated) {
            for (int i = 0; i < nl; i++)
                b->mean[b->order[i]] = b->sum[b->order[i]] / b->cnt[b->order[i]];
            sort_levels(b, b->order, nl);
        }
        double cl = 0, sl = 0;
        uint64_t mask = 0;
        for (int i = 0; i < nl - 1; i++) {
            int v = b->order[i];
            cl += b->cnt[v];
            sl += b->sum[v];
            if (v < 64)
                mask |= 1ULL << v;
            double cr = k - cl, sr = tot - sl;
            if (cl < b->min_leaf || cr < b->min_leaf)
                continue;
            double g = sl * sl / cl + sr * sr / cr;
            if (g > best) {
                best = g;
                bd = d;
                bthr = v;
                bmask = enumerated ? mask : 0;
            }
        }
    }
    if (bd < 0)
        return me;
    node probe = {.dim = bd, .thr = bthr, .mask = bmask};
    int lo = 0, hi = k - 1;
    while (lo <= hi) {
        if (goes_left(&probe, b->X + (size_t)idx[lo] * (size_t)b->dims)) {
            lo++;
        } else {
            int tmp = idx[lo];
            idx[lo] = idx[hi];
            idx[hi] = tmp;
            hi--;
        }
    }
    if (lo == 0 || lo == k)
        return me;
    int l = grow(t, b, idx, lo, depth + 1);
    int r = l < 0 ? -1 : grow(t, b, idx + lo, k - lo, depth + 1);
    if (r < 0)
        return -1;
    node *nd = &t->nodes[me]; /* after the children: the array may have moved */
    nd->dim = bd;
    nd->thr = bthr;
    nd->mask = bmask;
    nd->left = l;
    nd->right = r;
    return me;
}

forest *forest_fit(const int *X, const double *y, int m, int dims, const int *levels, const bool *ordered,
                   const forest_opts *o)
{
    if (m < 1)
        return NULL;
    forest *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->ntrees = o->ntrees > 0 ? o->ntrees : 24;
    f->dims = dims;
    f->trees = calloc((size_t)f->ntrees, sizeof *f->trees);
    int maxl = 1;
    for (int d = 0; d < dims; d++)
        if (levels[d] > maxl)
            maxl = levels[d];
    double frac = o->axis_frac > 0 ? o->axis_frac : 0.7;
    int ntry = (int)ceil(frac * dims);
    builder b;
    memset(&b, 0, sizeof b);
    b.X = X;
    b.y = y;
    b.dims = dims;
    b.levels = levels;
    b.ordered = ordered;
    b.min_leaf = o->min_leaf > 0 ? o->min_leaf : 1;
    b.ntry = ntry < 1 ? 1 : ntry > dims ? dims : ntry;
    uint64_t sm = o->seed;
    for (int i = 0; i < 4; i++)
        b.rng[i] = splitmix64(&sm);
    b.axes = malloc(sizeof *b.axes * (size_t)(dims ? dims : 1));
    b.cnt = malloc(sizeof *b.cnt * (size_t)maxl);
    b.sum = malloc(sizeof *b.sum * (size_t)maxl);
    b.order = malloc(sizeof *b.order * (size_t)maxl);
    b.mean = malloc(sizeof *b.mean * (size_t)maxl);
    int *idx = malloc(sizeof *idx * (size_t)m);
    bool ok = f->trees && b.axes && b.cnt && b.sum && b.order && b.mean && idx;
    for (int t = 0; ok && t < f->ntrees; t++) {
        for (int i = 0; i < m; i++)
            idx[i] = m == 1 ? 0 : rng_below(b.rng, m);   /* bootstrap */
        if (dims == 0) {
            ok = add_node(&f->trees[t], &b) >= 0;
            if (ok) {
                double s = 0;
                for (int i = 0; i < m; i++)
                    s += y[idx[i]];
                f->trees[t].nodes[0].value = s / m;
            }
            continue;
        }
        ok = grow(&f->trees[t], &b, idx, m, 0) >= 0 && !b.oom;
    }
    free(b.axes);
    free(b.cnt);
    free(b.sum);
    free(b.order);
    free(b.mean);
    free(idx);
    if (!ok) {
        forest_free(f);
        return NULL;
    }
    return f;
}

int forest_trees(const forest *f) { return f->ntrees; }

double forest_predict_tree(const forest *f, int t, const int *x)
{
    const node *nodes = f->trees[t].nodes;
    int i = 0;
    while (nodes[i].dim >= 0)
        i = goes_left(&nodes[i], x) ? nodes[i].left : nodes[i].right;
    return nodes[i].value;
}

void forest_predict(const forest *f, const int *x, double *mean, double *sd)
{
    double s = 0, s2 = 0;
    for (int t = 0; t < f->ntrees; t++) {
        const node *nodes = f->trees[t].nodes;
        int i = 0;
        while (nodes[i].dim >= 0)
            i = goes_left(&nodes[i], x) ? nodes[i].left : nodes[i].right;
        double v = nodes[i].value;
        s += v;
        s2 += v * v;
    }
    double m = s / f->ntrees, var = s2 / f->ntrees - m * m;
    *mean = m;
    *sd = var > 0 ? sqrt(var) : 0;
}

void forest_free(forest *f)
{
    if (!f)
        return;
    if (f->trees)
        for (int t = 0; t < f->ntrees; t++)
            free(f->trees[t].nodes);
    free(f->trees);
    free(f);
}
