/*
 * strategy.c -- search strategies over an abstract space (see strategy.h).
 *
 * Structure: strat_ask() is a thin loop around one step function per
 * strategy.  A step first digests the costs of its previous proposal (all
 * known by then), then proposes new candidates -- only ones this search has
 * not evaluated, each once.  The loop takes proposals whose cost is known
 * from an earlier run (strat_known) without handing them out, and calls the
 * step again when nothing is left to hand out, so a step never has to care
 * where a cost came from.  Each step either proposes something or makes a
 * bounded number of free moves over cached costs, and the loop ends when
 * every candidate is evaluated or the budget is spent: no input makes it
 * spin.
 */
#include "strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest.h"
#include "rng.h"
#include "util.h"

const char *const strat_names[STRAT_COUNT] = {"exhaustive", "random", "local", "anneal", "genetic", "model"};

void strat_opts_defaults(strat_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->batch = 4;
    o->t_start = 0.1;
    o->t_end = 0.002;
    o->population = 16;
}

// ---------------------------------------------------------------------------
// PRNG: rng.h

/* Uniform in [0, n), n >= 1, without modulo bias. */
static int rng_below(uint64_t s[4], int n)
{
    uint64_t bound = (uint64_t)n;
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = rng_next(s);
    while (x >= limit);
    return (int)(x % bound);
}

static double rng_unit(uint64_t s[4]) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

static void shuffle(uint64_t s[4], int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rng_below(s, i + 1);
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

// ---------------------------------------------------------------------------

struct strategy {
    strat_kind kind;
    strat_opts o;
    int n, dims, budget;
    int *coords, *levels;
    bool *ordered;
    int *nb_start, *nb;             /* neighbour lists (CSR) */
    kf_index index;                 /* coordinate vector -> candidate */
    uint64_t rng[4];

    double *cost;                   /* NaN: not evaluated by this search; failures are +inf */
    double *known;                  /* NaN: no earlier cost */
    unsigned char *known_est;       /* known[i] is an estimate (never the best) */
    unsigned char *pending;         /* handed out, not told yet */
    int noutstanding;
    int evaluated;
    int best;
    double best_cost;
    strat_improvement *trace;
    int ntrace, tcap;
    bool over;

    int *prop;                      /* the step's latest proposal */
    int nprop;
    unsigned char *inprop;

    /* exhaustive, random */
    int *order;
    int next;
    /* local, anneal */
    int cur;
    int *scan;                      /* shuffled neighbours of cur (first improvement, anneal) */
    int nscan, pscan;
    bool scan_valid;
    bool prop_is_nbrs;              /* the last proposal was neighbours of cur (not a restart point) */
    /* genetic */
    int popsize;
    int *pop, npop;
    int *child, nchild, childcap;
    int *x;                         /* a child's coordinates */
    bool started;
    /* model: the ranking of the last fit, taken in order until the next */
    int *rank, nrank, prank;
    int fit_at;                     /* evaluations when it was fitted */
    double fit_best;                /* the best cost then */
};

static bool evaluated(const strategy *s, int i) { return !isnan(s->cost[i]); }

/* estimate: c steers the search but the candidate is never the best */
static void record(strategy *s, int idx, double c, bool estimate)
{
    if (isnan(c))
        c = INFINITY;
    s->cost[idx] = c;
    s->evaluated++;
    if (!isfinite(c) || estimate)
        return;
    /* Equal costs go to the lower index, so the best does not depend on the
     * order in which a batch's results were told. */
    if (s->best >= 0 && c == s->best_cost && idx < s->best)
        s->best = idx;
    if (s->best < 0 || c < s->best_cost) {
        s->best = idx;
        s->best_cost = c;
        if (s->ntrace == s->tcap) {
            int cap = s->tcap ? s->tcap * 2 : 32;
            strat_improvement *t = realloc(s->trace, sizeof *t * (size_t)cap);
            if (!t)
                return; /* the trace is informational; the search goes on */
            s->trace = t;
            s->tcap = cap;
        }
        s->trace[s->ntrace++] = (strat_improvement){s->evaluated, idx, c};
    }
}

static void begin_proposal(strategy *s)
{
    for (int i = 0; i < s->nprop; i++)
        s->inprop[s->prop[i]] = 0;
    s->nprop = 0;
}

/* Adds i to the proposal if this search has not evaluated it and it is not
 * in the proposal yet. */
static bool propose(strategy *s, int i)
{
    if (evaluated(s, i) || s->inprop[i] || s->pending[i])
        return false;
    s->inprop[i] = 1;
    s->prop[s->nprop++] = i;
    return true;
}

/* A random candidate not evaluated and not proposed yet, or -1. */
static int pick_unevaluated(strategy *s)
{
    if (s->evaluated + s->noutstanding + s->nprop >= s->n)
        return -1;
    for (int t = 0; t < 64; t++) {
        int i = rng_below(s->rng, s->n);
        if (!evaluated(s, i) && !s->inprop[i] && !s->pending[i])
            return i;
    }
    int start = rng_below(s->rng, s->n);
    for (int k = 0; k < s->n; k++) {
        int i = (start + k) % s->n;
        if (!evaluated(s, i) && !s->inprop[i] && !s->pending[i])
            return i;
    }
    return -1;
}

// ---------------------------------------------------------------------------
// coordinate lookup and neighbours

static uint64_t hash_coords(const int *x, int dims)
{
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (int d = 0; d < dims; d++) {
        h ^= (uint64_t)(uint32_t)x[d];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static bool coords_are(const void *ctx, size_t i, const void *key)
{
    const strategy *s = ctx;
    return memcmp(s->coords + i * (size_t)s->dims, key, sizeof(int) * (size_t)s->dims) == 0;
}

static int lookup(const strategy *s, const int *x)
{
    return (int)kf_index_find(&s->index, hash_coords(x, s->dims), coords_are, s, x);
}

typedef struct {
    const int *coords;
    int dims, d;
} axis_cmp;

/* Orders candidates by their coordinates on every axis but d, then on d:
 * candidates on one line along axis d end up together, sorted along it. */
static int cmp_axis(const axis_cmp *c, int a, int b)
{
    const int *x = c->coords + (size_t)a * (size_t)c->dims, *y = c->coords + (size_t)b * (size_t)c->dims;
    for (int e = 0; e < c->dims; e++)
        if (e != c->d && x[e] != y[e])
            return x[e] < y[e] ? -1 : 1;
    if (x[c->d] != y[c->d])
        return x[c->d] < y[c->d] ? -1 : 1;
    return (a > b) - (a < b);
}

static bool same_line(const axis_cmp *c, int a, int b)
{
    const int *x = c->coords + (size_t)a * (size_t)c->dims, *y = c->coords + (size_t)b * (size_t)c->dims;
    for (int e = 0; e < c->dims; e++)
        if (e != c->d && x[e] != y[e])
            return false;
    return true;
}

/* Merge sort with a context (qsort_r is not portable). */
static void msort(int *a, int *tmp, int n, const axis_cmp *c)
{
    if (n < 2 || (n >= (1 << 16) && kf_interrupted)) /* SIGINT/SIGTERM: the caller gives up */
        return;
    int h = n / 2;
    msort(a, tmp, h, c);
    msort(a + h, tmp, n - h, c);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_axis(c, a[i], a[j]) <= 0 ? a[i++] : a[j++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, sizeof *a * (size_t)n);
}

typedef struct {
    int *src, *dst;
    size_t len, cap;
} edges;

static int edge_add(edges *e, int a, int b)
{
    if (e->len == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 1024;
        int *s = realloc(e->src, sizeof *s * cap);
        if (!s)
            return -1;
        e->src = s;
        int *d = realloc(e->dst, sizeof *d * cap);
        if (!d)
            return -1;
        e->dst = d;
        e->cap = cap;
    }
    e->src[e->len] = a;
    e->dst[e->len] = b;
    e->len++;
    return 0;
}

static int build_neighbours(strategy *s)
{
    int n = s->n, dims = s->dims;
    edges e = {0};
    int *order = malloc(sizeof *order * (size_t)n), *tmp = malloc(sizeof *tmp * (size_t)n);
    int rc = -1;
    if (!order || !tmp)
        goto out;
    for (int d = 0; d < dims; d++) {
        if (s->levels[d] < 2)
            continue;
        if (kf_interrupted) {   /* a large space sorts for seconds: answer SIGINT/SIGTERM */
            rc = -2;
            goto out;
        }
        axis_cmp c = {s->coords, dims, d};
        for (int i = 0; i < n; i++)
            order[i] = i;
        msort(order, tmp, n, &c);
        if (kf_interrupted) {
            rc = -2;
            goto out;
        }
        for (int g0 = 0; g0 < n;) {
            int g1 = g0 + 1;
            while (g1 < n && same_line(&c, order[g0], order[g1]))
                g1++;
            for (int p = g0; p < g1; p++) {
                int i = order[p];
                int v = s->coords[(size_t)i * (size_t)dims + (size_t)d];
                if (s->ordered[d]) {
                    /* the nearest existing value below and above */
                    int rs = p, re = p + 1;
                    while (rs > g0 && s->coords[(size_t)order[rs - 1] * (size_t)dims + (size_t)d] == v)
                        rs--;
                    while (re < g1 && s->coords[(size_t)order[re] * (size_t)dims + (size_t)d] == v)
                        re++;
                    if (rs > g0 && edge_add(&e, i, order[rs - 1]) != 0)
                        goto out;
                    if (re < g1 && edge_add(&e, i, order[re]) != 0)
                        goto out;
                } else {
                    for (int q = g0; q < g1; q++)
                        if (s->coords[(size_t)order[q] * (size_t)dims + (size_t)d] != v &&
                            edge_add(&e, i, order[q]) != 0)
                            goto out;
                }
            }
            g0 = g1;
        }
    }
    s->nb_start = calloc((size_t)n + 1, sizeof *s->nb_start);
    s->nb = malloc(sizeof *s->nb * (e.len ? e.len : 1));
    if (!s->nb_start || !s->nb)
        goto out;
    for (size_t k = 0; k < e.len; k++)
        s->nb_start[e.src[k] + 1]++;
    for (int i = 0; i < n; i++)
        s->nb_start[i + 1] += s->nb_start[i];
    /* stable fill: per candidate, by axis, then along the axis */
    int *fill = malloc(sizeof *fill * (size_t)(n ? n : 1));
    if (!fill)
        goto out;
    memcpy(fill, s->nb_start, sizeof *fill * (size_t)n);
    for (size_t k = 0; k < e.len; k++)
        s->nb[fill[e.src[k]]++] = e.dst[k];
    free(fill);
    rc = 0;
out:
    free(e.src);
    free(e.dst);
    free(order);
    free(tmp);
    return rc;
}

const int *strat_neighbours(const strategy *s, int idx, int *count)
{
    if (idx < 0 || idx >= s->n || !s->nb_start) {
        *count = 0;
        return NULL;
    }
    *count = s->nb_start[idx + 1] - s->nb_start[idx];
    return s->nb + s->nb_start[idx];
}

// ---------------------------------------------------------------------------
// exhaustive and random: walk an order

static int step_order(strategy *s, int lim)
{
    begin_proposal(s);
    while (s->next < s->n && s->nprop < lim) {
        int i = s->order ? s->order[s->next] : s->next;
        s->next++;
        propose(s, i);
    }
    return s->nprop;
}

// ---------------------------------------------------------------------------
// local search: hill climbing with random restarts

static void move_to(strategy *s, int i)
{
    s->cur = i;
    s->scan_valid = false;
}

static void load_scan(strategy *s)
{
    int cnt;
    const int *nb = strat_neighbours(s, s->cur, &cnt);
    memcpy(s->scan, nb, sizeof *nb * (size_t)cnt);
    s->nscan = cnt;
    s->pscan = 0;
    shuffle(s->rng, s->scan, cnt);
    s->scan_valid = true;
}

static int step_local(strategy *s, int lim)
{
    /* first improvement: the first better candidate of the batch, in the
     * (random) order it was proposed */
    if (s->o.first_improvement && s->cur >= 0 && s->prop_is_nbrs)
        for (int k = 0; k < s->nprop; k++)
            if (s->cost[s->prop[k]] < s->cost[s->cur]) {
                move_to(s, s->prop[k]);
                break;
            }
    begin_proposal(s);
    s->prop_is_nbrs = false;
    for (;;) {
        if (s->cur < 0) {
            int i = pick_unevaluated(s);
            if (i < 0)
                return 0;
            move_to(s, i);
            propose(s, i);
            return s->nprop;
        }
        if (!evaluated(s, s->cur)) {    /* a start point cut off by the budget */
            propose(s, s->cur);
            return s->nprop;
        }
        if (!isfinite(s->cost[s->cur])) {
            s->cur = -1;                /* a failed start: restart elsewhere */
            continue;
        }
        double cc = s->cost[s->cur];
        if (!s->o.first_improvement) {
            /* best improvement: evaluate the whole neighbourhood, then move
             * to its best if that is better */
            int cnt;
            const int *nb = strat_neighbours(s, s->cur, &cnt);
            for (int k = 0; k < cnt && s->nprop < lim; k++)
                propose(s, nb[k]);
            if (s->nprop) {
                s->prop_is_nbrs = true;
                return s->nprop;
            }
            int b = -1;
            for (int k = 0; k < cnt; k++)
                if (s->cost[nb[k]] < (b < 0 ? cc : s->cost[b]))
                    b = nb[k];
            if (b >= 0)
                move_to(s, b);
            else
                s->cur = -1;            /* a local optimum: restart */
            continue;
        }
        if (!s->scan_valid)
            load_scan(s);
        int want = s->o.batch < lim ? s->o.batch : lim;
        int better = -1;
        while (s->pscan < s->nscan && s->nprop < want) {
            int j = s->scan[s->pscan];
            if (evaluated(s, j)) {
                s->pscan++;
                if (s->cost[j] < cc) {
                    better = j;
                    break;
                }
                continue;
            }
            propose(s, j);
            s->pscan++;
        }
        if (better >= 0) {
            /* a cached better neighbour: move there for free, dropping the
             * proposal not handed out yet */
            begin_proposal(s);
            move_to(s, better);
            continue;
        }
        if (s->nprop) {
            s->prop_is_nbrs = true;
            return s->nprop;
        }
        s->cur = -1;                    /* no neighbour is better: restart */
    }
}

// ---------------------------------------------------------------------------
// simulated annealing

static double temperature(const strategy *s)
{
    double f = s->budget > 0 ? (double)s->evaluated / s->budget : 1.0;
    if (f > 1)
        f = 1;
    return s->o.t_start * pow(s->o.t_end / s->o.t_start, f);
}

/* Metropolis: always downhill; uphill by a relative cost increase r with
 * probability exp(-r / T).  Failed candidates never. */
static bool accept(strategy *s, int from, int to)
{
    double a = s->cost[from], b = s->cost[to];
    if (!isfinite(b))
        return false;
    if (b <= a)
        return true;
    double scale = fabs(a) > 0 ? fabs(a) : 1.0;
    double r = (b - a) / scale;
    return rng_unit(s->rng) < exp(-r / temperature(s));
}

static void sort_by_cost(const strategy *s, int *a, int n)
{
    /* insertion sort: batches are small; ties keep proposal order */
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i;
        while (j > 0 && s->cost[a[j - 1]] > s->cost[v]) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

#define FREE_MOVES 64   /* moves over cached costs per step before restarting */

static int step_anneal(strategy *s, int lim)
{
    if (s->cur >= 0 && s->prop_is_nbrs && s->nprop > 0) {
        /* the batch's neighbours, best first: the first accepted is the move */
        int tmp[64];
        int k = s->nprop < 64 ? s->nprop : 64;
        memcpy(tmp, s->prop, sizeof *tmp * (size_t)k);
        sort_by_cost(s, tmp, k);
        for (int i = 0; i < k; i++)
            if (accept(s, s->cur, tmp[i])) {
                move_to(s, tmp[i]);
                break;
            }
    }
    begin_proposal(s);
    s->prop_is_nbrs = false;
    int free_moves = 0;
    for (;;) {
        if (s->cur < 0) {
            int i = pick_unevaluated(s);
            if (i < 0)
                return 0;
            move_to(s, i);
            propose(s, i);
            return s->nprop;
        }
        if (!evaluated(s, s->cur)) {
            propose(s, s->cur);
            return s->nprop;
        }
        if (!isfinite(s->cost[s->cur])) {
            s->cur = -1;
            continue;
        }
        load_scan(s);
        int want = s->o.batch < lim ? s->o.batch : lim;
        int moved = -1;
        for (int k = 0; k < s->nscan && s->nprop < want; k++) {
            int j = s->scan[k];
            if (!evaluated(s, j)) {
                propose(s, j);
            } else if (s->nprop == 0 && accept(s, s->cur, j)) {
                moved = j;              /* a cached neighbour accepted: a free move */
                break;
            }
        }
        if (moved >= 0) {
            move_to(s, moved);
            if (++free_moves > FREE_MOVES)
                s->cur = -1;            /* wandering over known ground: restart */
            continue;
        }
        if (s->nprop) {
            s->prop_is_nbrs = true;
            return s->nprop;
        }
        s->cur = -1;                    /* every neighbour known and none accepted: frozen */
    }
}

// ---------------------------------------------------------------------------
// genetic search

static int tournament(strategy *s)
{
    int a = s->pop[rng_below(s->rng, s->npop)];
    int b = s->pop[rng_below(s->rng, s->npop)];
    return s->cost[b] < s->cost[a] ? b : a;
}

/* The candidate nearest to coordinates x: x itself if it is a candidate,
 * else the closest by normalised distance per axis, an unevaluated one on
 * ties (then a random one). */
static int snap(strategy *s, const int *x)
{
    int i = lookup(s, x);
    if (i >= 0)
        return i;
    double best = INFINITY;
    int pick = -1, ties = 0;
    bool pick_new = false;
    for (int c = 0; c < s->n; c++) {
        const int *y = s->coords + (size_t)c * (size_t)s->dims;
        double dist = 0;
        for (int d = 0; d < s->dims && dist <= best; d++) {
            if (x[d] == y[d])
                continue;
            dist += s->ordered[d] && s->levels[d] > 1 ? fabs((double)(x[d] - y[d])) / (s->levels[d] - 1) : 1.0;
        }
        bool fresh = !evaluated(s, c) && !s->inprop[c];
        if (dist < best || (dist == best && fresh && !pick_new)) {
            best = dist;
            pick = c;
            pick_new = fresh;
            ties = 1;
        } else if (dist == best && fresh == pick_new) {
            if (rng_below(s->rng, ++ties) == 0)
                pick = c;
        }
    }
    return pick;
}

static void make_child(strategy *s)
{
    int a = tournament(s), b = tournament(s);
    const int *pa = s->coords + (size_t)a * (size_t)s->dims, *pb = s->coords + (size_t)b * (size_t)s->dims;
    int live = 0;
    for (int d = 0; d < s->dims; d++) {
        s->x[d] = rng_below(s->rng, 2) ? pa[d] : pb[d];
        live += s->levels[d] > 1;
    }
    double pm = live ? 1.0 / live : 0;
    for (int d = 0; d < s->dims; d++) {
        int L = s->levels[d];
        if (L < 2 || rng_unit(s->rng) >= pm)
            continue;
        if (s->ordered[d] && rng_unit(s->rng) < 0.8) {
            int v = s->x[d] + (rng_below(s->rng, 2) ? 1 : -1);
            s->x[d] = v < 0 ? 1 : v >= L ? L - 2 : v;
        } else {
            int v = rng_below(s->rng, L - 1);
            s->x[d] = v >= s->x[d] ? v + 1 : v;
        }
    }
}

static bool in_list(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return true;
    return false;
}

static int step_genetic(strategy *s, int lim)
{
    int P = s->popsize;
    if (!s->started) {
        s->started = true;
        begin_proposal(s);
        s->npop = 0;
        while (s->npop < P && s->nprop < lim) {
            int i = pick_unevaluated(s);
            if (i < 0)
                break;
            s->pop[s->npop++] = i;
            propose(s, i);
        }
        return s->nprop;
    }
    /* (mu + lambda): the best P of parents and children survive */
    int *all = s->child + s->nchild; /* room: childcap >= nchild + npop */
    int na = 0;
    for (int i = 0; i < s->npop; i++)
        all[na++] = s->pop[i];
    for (int i = 0; i < s->nchild; i++)
        if (!in_list(all, na, s->child[i]) && evaluated(s, s->child[i]))
            all[na++] = s->child[i];
    for (int i = 0; i < na; i++)
        if (!evaluated(s, all[i]))
            all[i] = all[--na]; /* cut off by the budget: cannot happen while searching */
    sort_by_cost(s, all, na);
    s->npop = na < P ? na : P;
    memmove(s->pop, all, sizeof *all * (size_t)s->npop);

    begin_proposal(s);
    s->nchild = 0;
    int want = P < lim ? P : lim;
    int maxchild = s->childcap - P;
    /* cached children join the next selection for free, but leave room for
     * the immigrants below */
    for (int attempt = 0; attempt < 20 * P && s->nprop < want && s->nchild < maxchild - 4 && s->npop > 0;
         attempt++) {
        make_child(s);
        int c = snap(s, s->x);
        if (c < 0 || in_list(s->child, s->nchild, c))
            continue;
        s->child[s->nchild++] = c;
        propose(s, c);
    }
    if (s->nprop == 0) {
        /* everything near the population is known: immigrants keep it going */
        int k = want < 4 ? want : 4;
        while (s->nprop < k && s->nchild < maxchild) {
            int i = pick_unevaluated(s);
            if (i < 0)
                break;
            s->child[s->nchild++] = i;
            propose(s, i);
        }
    }
    return s->nprop;
}

// ---------------------------------------------------------------------------
// model-guided: a random forest (forest.h) fitted to the log costs measured
// so far predicts the candidates not evaluated yet, and the batch is those
// of lowest lower confidence bound (prediction minus its spread across the
// trees).  Costs above the median of those measured count as the median:
// the model spends its splits on telling the good from the best, not the
// slow from the slowest.  A failed candidate counts as worse than the worst
// that ran, so the search steers away from what fails; an estimate (an
// abandoned candidate) counts as its cost.
//
// A search that has found nothing better for a while (MODEL_STALL_MIN
// evaluations and MODEL_STALL_SHARE of the space) explores: its spread gains
// MODEL_NOVELTY times the distance to the nearest candidate measured (per
// axis, the share of an ordered axis' range, 1 for another value of an
// enumerated one) in units of the targets' range (the log time from the best
// to the clipping quantile: where the fast half lies within a few percent of
// the best, as in a dedispersion space, it explores little), so the batch
// goes where nothing was measured rather than around the incumbent's region.  The forest's spread alone is small far
// from every measurement (every tree predicts there from the same big
// leaves): on Kernel Tuner's convolution recorded on the H100 (340
// candidates, one optimum 2.4% ahead of the rest) the model without this
// settled in a region that held none of the 3 candidates within 5% and, in
// half the seeds, did not find the optimum in 85 evaluations (52 of 100
// seeds found it); with it, 81 of 100 do.  It changes nothing in a search
// that keeps improving, nor in a space of thousands before some hundred
// evaluations.
//
// Chosen on benchmark_hub's NVIDIA convolution spaces (A100, A4000, A6000;
// tools/bench_strategies.sh), 20 seeds, against expected improvement,
// Thompson sampling by single trees, other bounds, clipping quantiles,
// forest sizes and batch sizes.

/* Random candidates before the first fit. */
#define MODEL_INIT 10
/* Asked while the random start is pending (strat_ask_more), the model fits
 * once this many are measured rather than waiting for all of them: on
 * Kernel Tuner's convolution recorded on an H200, simulated on 16 compiler
 * processes for 13.5 s, the optimum in 52 of 100 seeds with 3 (51 with 6)
 * against 43 when every further lane took a random candidate until 10 were
 * measured. */
#define MODEL_FIT_MIN 4
/* The batch: an eighth of the evaluations so far, at least MODEL_BATCH_MIN
 * and at most MODEL_BATCH_MAX (fewer fits as the search goes on, and a
 * full compiler pool on a big host). */
#define MODEL_BATCH_MIN 4
#define MODEL_BATCH_MAX 32
/* Candidates scored at a fit, at most: every candidate not evaluated in a
 * smaller space; else a random sample of this many, plus every candidate
 * one axis away from the best MODEL_TOP. */
#define MODEL_POOL 16384
#define MODEL_TOP 8
/* The forest, the bound's weight of the spread, the quantile above which
 * costs are clipped, how much worse than the worst a failure counts (in
 * units of the log range that ran). */
#define MODEL_TREES 48
#define MODEL_KAPPA 1.0
#define MODEL_CLIP 0.5
#define MODEL_FAIL 1.0
/* A fit's ranking serves the following batches until the evaluations grew
 * by this share (from MODEL_REFIT_FROM evaluations on; before, every batch
 * is fitted), or a new best was found. */
#define MODEL_REFIT 0.2
#define MODEL_REFIT_FROM 64
/* Stalled: no new best in the last MODEL_STALL_MIN evaluations and
 * MODEL_STALL_SHARE of the space; then the spread gains MODEL_NOVELTY target
 * ranges per unit of distance to the nearest candidate measured. */
#define MODEL_STALL_MIN 8
#define MODEL_STALL_SHARE 0.05
#define MODEL_NOVELTY 1.0

typedef struct {
    double score;
    int idx;
} scored;

/* Highest score first, ties to the lower index. */
static int cmp_scored(const void *pa, const void *pb)
{
    const scored *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static void model_random(strategy *s, int k)
{
    while (s->nprop < k) {
        int i = pick_unevaluated(s);
        if (i < 0)
            break;
        propose(s, i);
    }
}

/* The training targets of the m evaluated candidates ev[]: log costs,
 * clipped at the MODEL_CLIP quantile, failures above; the lowest and the
 * range up to the clip.  false when none ran. */
static bool model_targets(const strategy *s, const int *ev, int m, double *y, double *ymin, double *yrange)
{
    double *sy = malloc(sizeof *sy * (size_t)(m ? m : 1));
    if (!sy)
        return false;
    int k = 0;
    for (int i = 0; i < m; i++) {
        double c = s->cost[ev[i]];
        y[i] = isfinite(c) && c > 0 ? log(c) : NAN;
        if (!isnan(y[i]))
            sy[k++] = y[i];
    }
    if (k == 0) {
        free(sy);
        return false;
    }
    qsort(sy, (size_t)k, sizeof *sy, cmp_double);
    double lo = sy[0], cap = sy[(int)(MODEL_CLIP * (k - 1))];
    free(sy);
    double fail = cap + MODEL_FAIL * (cap - lo > 0.1 ? cap - lo : 0.1);
    for (int i = 0; i < m; i++)
        y[i] = isnan(y[i]) ? fail : y[i] > cap ? cap : y[i];
    *ymin = lo;
    *yrange = cap - lo;
    return true;
}

/* The candidates to score: pool[].idx, how many. */
static int model_pool(strategy *s, const int *ev, const double *y, int m, scored *pool)
{
    int np = 0;
    if ((size_t)s->n - (size_t)s->evaluated <= MODEL_POOL) {
        for (int i = 0; i < s->n; i++)
            if (!evaluated(s, i) && !s->pending[i])
                pool[np++].idx = i;
        return np;
    }
    for (int t = 0; t < MODEL_POOL; t++) {
        int i = rng_below(s->rng, s->n);
        if (!evaluated(s, i) && !s->inprop[i] && !s->pending[i]) {
            s->inprop[i] = 1; /* marks the pool's members; cleared below */
            pool[np++].idx = i;
        }
    }
    /* one axis away from the best few */
    scored top[MODEL_TOP];
    int nt = 0;
    for (int i = 0; i < m; i++) {
        scored c = {-y[i], ev[i]};
        if (nt == MODEL_TOP && cmp_scored(&c, &top[nt - 1]) >= 0)
            continue;
        if (nt < MODEL_TOP)
            nt++;
        top[nt - 1] = c;
        qsort(top, (size_t)nt, sizeof *top, cmp_scored);
    }
    int dims = s->dims;
    for (int t = 0; t < nt; t++)
        for (int d = 0; d < dims; d++) {
            memcpy(s->x, s->coords + (size_t)top[t].idx * (size_t)dims, sizeof *s->x * (size_t)dims);
            for (int v = 0; v < s->levels[d] && np < MODEL_POOL + 64 * MODEL_TOP; v++) {
                s->x[d] = v;
                int j = lookup(s, s->x);
                if (j >= 0 && !evaluated(s, j) && !s->inprop[j] && !s->pending[j]) {
                    s->inprop[j] = 1;
                    pool[np++].idx = j;
                }
            }
        }
    for (int t = 0; t < np; t++)
        s->inprop[pool[t].idx] = 0;
    return np;
}

/* The distance between candidates a and b: per axis, the share of an
 * ordered axis' range between them, 1 for another value of an enumerated
 * one. */
static double cand_distance(const strategy *s, int a, int b)
{
    const int *x = s->coords + (size_t)a * (size_t)s->dims, *y = s->coords + (size_t)b * (size_t)s->dims;
    double dist = 0;
    for (int d = 0; d < s->dims; d++)
        if (x[d] != y[d])
            dist += s->ordered[d] && s->levels[d] > 1 ? fabs((double)(x[d] - y[d])) / (s->levels[d] - 1) : 1;
    return dist;
}

/* The search found nothing better for a while (see MODEL_STALL_MIN). */
static bool model_stalled(const strategy *s)
{
    if (s->ntrace == 0)
        return false;
    int since = s->evaluated - s->trace[s->ntrace - 1].evaluation;
    return since >= MODEL_STALL_MIN && since >= MODEL_STALL_SHARE * s->n;
}

static int step_model(strategy *s, int lim)
{
    begin_proposal(s);
    int ne = s->evaluated;
    if (ne < MODEL_INIT && (ne + s->noutstanding < MODEL_INIT || ne < MODEL_FIT_MIN)) {
        int k = MODEL_INIT - ne - s->noutstanding;
        model_random(s, k < 1 ? 1 : k < lim ? k : lim);
        return s->nprop;
    }
    int B = ne / 8;
    B = B < MODEL_BATCH_MIN ? MODEL_BATCH_MIN : B > MODEL_BATCH_MAX ? MODEL_BATCH_MAX : B;
    if (B > lim)
        B = lim;
    if (s->rank && s->best_cost == s->fit_best && ne >= MODEL_REFIT_FROM && ne < s->fit_at * (1 + MODEL_REFIT)) {
        while (s->prank < s->nrank && s->nprop < B)
            propose(s, s->rank[s->prank++]);
        if (s->nprop == B)
            return s->nprop;
        begin_proposal(s); /* used up: a new fit */
    }
    int dims = s->dims;
    size_t n = (size_t)s->n, pmax = n < MODEL_POOL + 64 * MODEL_TOP ? n : MODEL_POOL + 64 * MODEL_TOP;
    int *X = malloc(sizeof *X * (size_t)ne * (size_t)(dims ? dims : 1));
    double *y = malloc(sizeof *y * (size_t)ne);
    int *ev = malloc(sizeof *ev * (size_t)ne);
    scored *pool = malloc(sizeof *pool * pmax + 1);
    forest *f = NULL;
    double ymin, yrange;
    int m = 0;
    if (!X || !y || !ev || !pool)
        goto fallback;
    for (size_t i = 0; i < n && m < ne; i++)
        if (evaluated(s, (int)i)) {
            ev[m] = (int)i;
            memcpy(X + (size_t)m * (size_t)dims, s->coords + i * (size_t)dims, sizeof *X * (size_t)dims);
            m++;
        }
    if (!model_targets(s, ev, m, y, &ymin, &yrange))
        goto fallback; /* nothing ran yet: nothing to learn from */
    forest_opts fo = {MODEL_TREES, 1, 0.7, rng_next(s->rng)};
    f = forest_fit(X, y, m, dims, s->levels, s->ordered, &fo);
    if (!f)
        goto fallback;
    int np = model_pool(s, ev, y, m, pool);
    bool explore = model_stalled(s);
    for (int t = 0; t < np; t++) {
        double mu, sd;
        forest_predict(f, s->coords + (size_t)pool[t].idx * (size_t)dims, &mu, &sd);
        if (explore) {
            double near = INFINITY;
            for (int j = 0; j < m && near > 0; j++) {
                double d = cand_distance(s, pool[t].idx, ev[j]);
                if (d < near)
                    near = d;
            }
            sd += MODEL_NOVELTY * yrange * near;
        }
        pool[t].score = -(mu - MODEL_KAPPA * sd);
    }
    qsort(pool, (size_t)np, sizeof *pool, cmp_scored);
    free(s->rank);
    s->rank = malloc(sizeof *s->rank * (size_t)(np ? np : 1));
    s->nrank = s->prank = 0;
    if (s->rank)
        for (int t = 0; t < np; t++)
            s->rank[s->nrank++] = pool[t].idx;
    s->fit_at = ne;
    s->fit_best = s->best_cost;
    while (s->prank < s->nrank && s->nprop < B)
        propose(s, s->rank[s->prank++]);
fallback:
    model_random(s, B); /* the pool used up, or no model */
    forest_free(f);
    free(X);
    free(y);
    free(ev);
    free(pool);
    return s->nprop;
}

// ---------------------------------------------------------------------------

static int step(strategy *s, int lim)
{
    switch (s->kind) {
    case STRAT_EXHAUSTIVE:
    case STRAT_RANDOM: return step_order(s, lim);
    case STRAT_LOCAL: return step_local(s, lim);
    case STRAT_ANNEAL: return step_anneal(s, lim);
    case STRAT_GENETIC: return step_genetic(s, lim);
    case STRAT_MODEL: return step_model(s, lim);
    default: return 0;
    }
}

/* Steps the strategy until it proposes a candidate not known already (those
 * are recorded on the way): how many went to out (marked pending), 0 when
 * nothing is left within the budget.  more: candidates are still pending
 * (strat_ask_more), so nothing left now is not the end of the search. */
static int ask(strategy *s, int *out, int max, bool more)
{
    for (;;) {
        int remaining = s->budget - s->evaluated - s->noutstanding;
        if (s->over || s->evaluated >= s->n || (remaining <= 0 && !more)) {
            s->over = true;
            return 0;
        }
        if (remaining <= 0)
            return 0;
        int lim = max < remaining ? max : remaining;
        int k = step(s, lim);
        if (k <= 0) {
            s->over = s->noutstanding == 0;
            return 0;
        }
        if (k > lim)
            k = lim; /* a step never does this; the budget is the caller's promise */
        int nout = 0;
        for (int j = 0; j < k; j++) {
            int i = s->prop[j];
            if (!isnan(s->known[i])) {
                record(s, i, s->known[i], s->known_est[i]);
            } else {
                out[nout++] = i;
                s->pending[i] = 1;
            }
        }
        if (nout) {
            s->noutstanding += nout;
            return nout;
        }
    }
}

int strat_ask(strategy *s, int *out, int max)
{
    if (s->noutstanding > 0 || max < 1)
        return -1;
    return ask(s, out, max, false);
}

int strat_ask_more(strategy *s, int *out, int max)
{
    if (s->kind != STRAT_MODEL || max < 1)
        return -1;
    return ask(s, out, max, s->noutstanding > 0);
}

static int tell(strategy *s, int idx, double cost, bool estimate)
{
    if (idx < 0 || idx >= s->n || !s->pending[idx])
        return -1;
    s->pending[idx] = 0;
    s->noutstanding--;
    record(s, idx, cost, estimate);
    return 0;
}

int strat_tell(strategy *s, int idx, double cost) { return tell(s, idx, cost, false); }
int strat_tell_estimate(strategy *s, int idx, double cost) { return tell(s, idx, cost, true); }

static void known(strategy *s, int idx, double cost, bool estimate)
{
    if (idx >= 0 && idx < s->n) {
        s->known[idx] = isnan(cost) ? INFINITY : cost;
        s->known_est[idx] = estimate;
    }
}

void strat_known(strategy *s, int idx, double cost) { known(s, idx, cost, false); }
void strat_known_estimate(strategy *s, int idx, double cost) { known(s, idx, cost, true); }

int strat_peek(const strategy *s, int *out, int max)
{
    int left = s->budget - s->evaluated - s->noutstanding, k = 0;
    if (s->kind != STRAT_MODEL || s->over || !s->rank)
        return 0;
    if (max > left)
        max = left;
    for (int r = s->prank; r < s->nrank && k < max; r++) {
        int i = s->rank[r];
        if (!evaluated(s, i) && !s->pending[i] && isnan(s->known[i]))
            out[k++] = i;
    }
    return k;
}

int strat_evaluations(const strategy *s) { return s->evaluated; }

int strat_best(const strategy *s, double *cost)
{
    if (cost)
        *cost = s->best >= 0 ? s->best_cost : INFINITY;
    return s->best;
}

double strat_cost(const strategy *s, int idx)
{
    return idx >= 0 && idx < s->n ? s->cost[idx] : NAN;
}

const strat_improvement *strat_trace(const strategy *s, int *count)
{
    *count = s->ntrace;
    return s->trace;
}

strategy *strat_new(strat_kind kind, const strat_space *sp, const strat_opts *o, char *err, size_t errlen)
{
    if ((int)kind < 0 || kind >= STRAT_COUNT) {
        kf_err(err, errlen, "unknown strategy %d", (int)kind);
        return NULL;
    }
    if (sp->n < 1 || sp->dims < 0 || (sp->dims > 0 && (!sp->coords || !sp->levels || !sp->ordered))) {
        kf_err(err, errlen, "strategy: empty or malformed space (%d candidates, %d axes)", sp->n, sp->dims);
        return NULL;
    }
    for (int d = 0; d < sp->dims; d++)
        if (sp->levels[d] < 1) {
            kf_err(err, errlen, "strategy: axis %d has %d levels", d, sp->levels[d]);
            return NULL;
        }
    for (size_t k = 0; k < (size_t)sp->n * (size_t)sp->dims; k++) {
        int d = (int)(k % (size_t)sp->dims);
        if (sp->coords[k] < 0 || sp->coords[k] >= sp->levels[d]) {
            kf_err(err, errlen, "strategy: candidate %zu has coordinate %d on axis %d (levels %d)",
                   k / (size_t)sp->dims, sp->coords[k], d, sp->levels[d]);
            return NULL;
        }
    }
    strategy *s = calloc(1, sizeof *s);
    if (!s) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    s->kind = kind;
    s->o = *o;
    if (s->o.batch <= 0)
        s->o.batch = 4;
    if (!(s->o.t_start > 0))
        s->o.t_start = 0.1;
    if (!(s->o.t_end > 0) || s->o.t_end > s->o.t_start)
        s->o.t_end = s->o.t_start < 0.002 ? s->o.t_start : 0.002;
    s->n = sp->n;
    s->dims = sp->dims;
    s->budget = o->budget <= 0 || o->budget > sp->n ? sp->n : o->budget;
    s->best = -1;
    s->best_cost = INFINITY;
    s->cur = -1;
    size_t n = (size_t)sp->n, dims = (size_t)sp->dims;
    s->coords = malloc(sizeof(int) * ((n * dims) > 0 ? n * dims : 1));
    s->levels = malloc(sizeof(int) * (dims ? dims : 1));
    s->ordered = malloc(sizeof(bool) * (dims ? dims : 1));
    s->cost = malloc(sizeof(double) * n);
    s->known = malloc(sizeof(double) * n);
    s->known_est = calloc(n ? n : 1, 1);
    s->pending = calloc(n, 1);
    s->inprop = calloc(n, 1);
    s->prop = malloc(sizeof(int) * n);
    s->x = malloc(sizeof(int) * (dims ? dims : 1));
    int maxdeg = 0;
    if (!s->coords || !s->levels || !s->ordered || !s->cost || !s->known || !s->known_est || !s->pending || !s->inprop ||
        !s->prop || !s->x)
        goto oom;
    if (dims) {
        memcpy(s->coords, sp->coords, sizeof(int) * n * dims);
        memcpy(s->levels, sp->levels, sizeof(int) * dims);
        memcpy(s->ordered, sp->ordered, sizeof(bool) * dims);
    }
    for (size_t i = 0; i < n; i++) {
        if ((i & 65535) == 0 && kf_interrupted) {
            strat_free(s);
            kf_err(err, errlen, "interrupted");
            return NULL;
        }
        s->cost[i] = NAN;
        s->known[i] = NAN;
        /* duplicates keep the first: lookup() finds one candidate per vector */
        if (lookup(s, s->coords + i * dims) >= 0)
            continue;
        if (kf_index_add(&s->index, hash_coords(s->coords + i * dims, (int)dims), i) != 0)
            goto oom;
    }
    /* neighbour lists: for the strategies that move between neighbours */
    if (kind == STRAT_LOCAL || kind == STRAT_ANNEAL) {
        int br = build_neighbours(s);
        if (br == -2) {
            strat_free(s);
            kf_err(err, errlen, "interrupted");
            return NULL;
        }
        if (br != 0)
            goto oom;
        for (int i = 0; i < s->n; i++)
            if (s->nb_start[i + 1] - s->nb_start[i] > maxdeg)
                maxdeg = s->nb_start[i + 1] - s->nb_start[i];
    }
    s->scan = malloc(sizeof(int) * (size_t)(maxdeg ? maxdeg : 1));
    if (!s->scan)
        goto oom;

    uint64_t sm = o->seed;
    for (int i = 0; i < 4; i++)
        s->rng[i] = splitmix64(&sm);
    if (kind == STRAT_RANDOM) {
        s->order = malloc(sizeof(int) * n);
        if (!s->order)
            goto oom;
        for (int i = 0; i < s->n; i++)
            s->order[i] = i;
        shuffle(s->rng, s->order, s->n);
    }
    if (kind == STRAT_GENETIC) {
        s->popsize = o->population > 0 ? o->population : 16;
        if (s->popsize > s->n)
            s->popsize = s->n;
        if (s->popsize < 2)
            s->popsize = s->n < 2 ? s->n : 2;
        /* children of a generation plus room to merge them with the parents */
        s->childcap = 5 * s->popsize;
        s->pop = malloc(sizeof(int) * (size_t)s->popsize);
        s->child = malloc(sizeof(int) * (size_t)(2 * s->childcap));
        if (!s->pop || !s->child)
            goto oom;
    }
    return s;
oom:
    strat_free(s);
    kf_err(err, errlen, "out of memory building the search space (%d candidates, %d axes)", sp->n, sp->dims);
    return NULL;
}

void strat_free(strategy *s)
{
    if (!s)
        return;
    free(s->coords);
    free(s->levels);
    free(s->ordered);
    free(s->nb_start);
    free(s->nb);
    kf_index_free(&s->index);
    free(s->cost);
    free(s->known);
    free(s->known_est);
    free(s->pending);
    free(s->inprop);
    free(s->prop);
    free(s->trace);
    free(s->order);
    free(s->scan);
    free(s->pop);
    free(s->child);
    free(s->x);
    free(s->rank);
    free(s);
}
