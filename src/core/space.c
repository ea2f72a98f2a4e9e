/*
 * space.c -- specs to variants and cases (see space.h).
 */
#include "space.h"

#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "family.h"
#include "util.h"

#define MAX_COMBINATIONS 10000000LL   /* a cartesian product beyond this is a mistake, */
#define MAX_RAW 1000000000000000LL    /* unless constraints cut it as it is enumerated */
#define MAX_VISITS 200000000LL        /* combinations looked at while cutting */
#define MAX_SHAPES 1000000LL

void space_resolve(kf_variant *v)
{
    if (family_of(v)->resolve)
        family_of(v)->resolve(v);
}

int space_check_variant(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    return family_of(v)->check(v, dev, why, whylen);
}

/* For a variant that cannot run: one enumerated value that would make it
 * run, as " (with --set op=xor, add --set dtype=int32, for example)"; ""
 * when none does.  Axes the --set overrides chose are left as they are. */
static void fix_hint(const kf_config *cfg, const kf_variant *raw, const kf_device *dev, char *buf, size_t len)
{
    const kf_family *f = family_of(raw);
    buf[0] = '\0';
    for (int a = 0; a < f->nparams; a++) {
        const kf_param *p = &f->params[a];
        char set[80];
        snprintf(set, sizeof set, "--set %s=", p->name);
        if (p->kind != KF_PK_ENUM || strstr(cfg->sets, set))
            continue;
        for (int x = 0; x < p->count; x++) {
            kf_variant v = *raw;
            char why[256];
            if (x == raw->p[a])
                continue;
            v.p[a] = x;
            space_resolve(&v);
            if (space_check_variant(&v, dev, why, sizeof why) != 0)
                continue;
            if (cfg->sets[0])
                snprintf(buf, len, " (with%s: add --set %s=%s, for example)", cfg->sets, p->name, p->names[x]);
            else
                snprintf(buf, len, " (%s %s would run)", p->name, p->names[x]);
            return;
        }
    }
    if (cfg->sets[0])
        snprintf(buf, len, " (with%s)", cfg->sets);
}

// ---------------------------------------------------------------------------
// hash sets of variants and cases

typedef struct {
    kf_space *s;
    int vcap, ccap, kcap;
    size_t *skip_off;       /* the skip lines' offsets in s->skip_text */
    size_t tlen, tcap;
    kf_index vset, cset;    /* the variants and cases so far (kf_index) */
    bool count_only;        /* space_expand_counting: the first skip line, then counts */
} builder;

/* space_expand_counting past its first skip line: the combination counted,
 * its line not made (a label and a message for each of a million skipped
 * combinations took a third of the expansion).  true when so. */
static bool count_only_skip(builder *b)
{
    if (!b->count_only || b->s->nskipped == 0)
        return false;
    b->s->nskipped++;
    return true;
}

static uint64_t case_hash(const kf_case *c)
{
    return kf_hash64(c->shape.d, sizeof c->shape.d, (uint64_t)c->variant * 0x9e3779b97f4a7c15ULL + 1);
}

static bool variant_is(const void *ctx, size_t i, const void *key)
{
    const builder *b = ctx;
    return variant_eq(&b->s->variants[i], key);
}

static bool case_is(const void *ctx, size_t i, const void *key)
{
    const builder *b = ctx;
    const kf_case *c = &b->s->cases[i], *k = key;
    return c->variant == k->variant && shape_eq(&c->shape, &k->shape);
}

/* The skip lines go to one block of text (a space of millions of
 * combinations is freed at once, not line by line); their offsets become
 * pointers when the expansion ends (skip_pointers). */
static int push_skip(builder *b, const char *line)
{
    kf_space *s = b->s;
    if (s->nlisted == b->kcap) {
        int nc = b->kcap ? b->kcap * 2 : 16;
        size_t *l = realloc(b->skip_off, sizeof *l * (size_t)nc);
        if (!l)
            return -1;
        b->skip_off = l;
        b->kcap = nc;
    }
    size_t len = strlen(line) + 1;
    if (b->tlen + len > b->tcap) {
        size_t nc = b->tcap ? b->tcap * 2 : 4096;
        while (nc < b->tlen + len)
            nc *= 2;
        char *t = realloc(s->skip_text, nc);
        if (!t)
            return -1;
        s->skip_text = t;
        b->tcap = nc;
    }
    memcpy(s->skip_text + b->tlen, line, len);
    b->skip_off[s->nlisted++] = b->tlen;
    s->nskipped++;
    b->tlen += len;
    return 0;
}

static int skip_pointers(builder *b)
{
    kf_space *s = b->s;
    if (s->nlisted == 0)
        return 0;
    s->skipped = malloc(sizeof *s->skipped * (size_t)s->nlisted);
    if (!s->skipped)
        return -1;
    for (int i = 0; i < s->nlisted; i++)
        s->skipped[i] = s->skip_text + b->skip_off[i];
    return 0;
}

static int add_variant(builder *b, const kf_variant *v)
{
    uint64_t h = variant_hash(v);
    long i = kf_index_find(&b->vset, h, variant_is, b, v);
    if (i >= 0)
        return (int)i;
    kf_space *s = b->s;
    if (s->nvariants == b->vcap) {
        int nc = b->vcap ? b->vcap * 2 : 16;
        kf_variant *l = realloc(s->variants, sizeof *l * (size_t)nc);
        if (!l)
            return -1;
        s->variants = l;
        b->vcap = nc;
    }
    s->variants[s->nvariants] = *v;
    if (kf_index_add(&b->vset, h, (size_t)s->nvariants) != 0)
        return -1;
    return s->nvariants++;
}

static int add_case(builder *b, int variant, const kf_shape *shape)
{
    kf_case c = {.variant = variant, .shape = *shape};
    uint64_t h = case_hash(&c);
    if (kf_index_find(&b->cset, h, case_is, b, &c) >= 0)
        return 0;
    kf_space *s = b->s;
    if (s->ncases == b->ccap) {
        int nc = b->ccap ? b->ccap * 2 : 64;
        kf_case *l = realloc(s->cases, sizeof *l * (size_t)nc);
        if (!l)
            return -1;
        s->cases = l;
        b->ccap = nc;
    }
    s->cases[s->ncases] = c;
    if (kf_index_add(&b->cset, h, (size_t)s->ncases) != 0)
        return -1;
    s->ncases++;
    return 0;
}

int space_cmp_shape(const kf_variant *v, const kf_shape *a, const kf_shape *b)
{
    int64_t ea = shape_elems(v, a), eb = shape_elems(v, b);
    if (ea != eb)
        return ea < eb ? -1 : 1;
    for (int d = 0; d < KF_MAX_DIMS; d++)
        if (a->d[d] != b->d[d])
            return a->d[d] < b->d[d] ? -1 : 1;
    return 0;
}

static const kf_space *sort_space;

static int cmp_case(const void *pa, const void *pb)
{
    const kf_case *a = pa, *b = pb;
    int c = space_cmp_shape(&sort_space->variants[a->variant], &a->shape, &b->shape);
    if (c)
        return c;
    return (a->variant > b->variant) - (a->variant < b->variant);
}

/* Shapes of one family (space_cmp_shape needs a variant only for it). */
static int cmp_case_shape(const void *pa, const void *pb)
{
    const kf_case *a = pa, *b = pb;
    return space_cmp_shape(&sort_space->variants[0], &a->shape, &b->shape);
}

static bool case_shape_is(const void *ctx, size_t i, const void *key)
{
    const kf_space *s = ctx;
    return shape_eq(&s->cases[i].shape, key);
}

/* The next combination of idx over count[0..n-1] (an odometer, the last
 * axis fastest); false after the last. */
static bool odometer_next(int *idx, const int *count, int n)
{
    for (int a = n - 1; a >= 0; a--) {
        if (++idx[a] < count[a])
            return true;
        idx[a] = 0;
    }
    return false;
}

/* Sorts the cases by shape (space_cmp_shape), then variant: the order of
 * cmp_case, in linear time (a million cases are sorted in milliseconds, not
 * the second qsort takes).  Cases already in order (one shape) are left as
 * they are.  0, or -1 out of memory. */
static int sort_cases(kf_space *s)
{
    size_t n = (size_t)s->ncases;
    if (n < 2)
        return 0;
    sort_space = s;
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; i++) {
        const kf_case *a = &s->cases[i - 1], *b = &s->cases[i];
        sorted = shape_eq(&a->shape, &b->shape) ? a->variant < b->variant : cmp_case(a, b) < 0;
    }
    if (sorted) {
        sort_space = NULL;
        return 0;
    }
    int rc = -1;
    kf_index first = {0};   /* each shape's first case */
    int *rank = malloc(sizeof *rank * n);
    kf_case *tmp = malloc(sizeof *tmp * n), *shapes = NULL;
    size_t cnt_len = (size_t)s->nvariants > n ? (size_t)s->nvariants : n;
    size_t *cnt = malloc(sizeof *cnt * (cnt_len + 1));
    size_t nshapes = 0;
    if (!rank || !tmp || !cnt)
        goto out;
    /* distinct shapes: rank[i] is the shape's number, in order of appearance */
    for (size_t i = 0; i < n; i++) {
        const kf_shape *sh = &s->cases[i].shape;
        uint64_t h = kf_hash64(sh->d, sizeof sh->d, 0x5a);
        long f = kf_index_find(&first, h, case_shape_is, s, sh);
        if (f >= 0) {
            rank[i] = rank[f];
        } else {
            if (kf_index_add(&first, h, i) != 0)
                goto out;
            rank[i] = (int)nshapes++;
        }
    }
    /* the distinct shapes in order; rank becomes the position in it */
    shapes = malloc(sizeof *shapes * nshapes);
    int *pos = malloc(sizeof *pos * nshapes);
    if (!shapes || !pos) {
        free(pos);
        goto out;
    }
    for (size_t i = 0, k = 0; i < n && k < nshapes; i++)
        if ((size_t)rank[i] == k) {     /* the first case of shape k */
            shapes[k].shape = s->cases[i].shape;
            shapes[k].variant = (int)k;
            k++;
        }
    qsort(shapes, nshapes, sizeof *shapes, cmp_case_shape);
    for (size_t k = 0; k < nshapes; k++)
        pos[shapes[k].variant] = (int)k;
    for (size_t i = 0; i < n; i++)
        rank[i] = pos[rank[i]];
    free(pos);
    /* stable counting sorts: by variant, then by shape */
    memset(cnt, 0, sizeof *cnt * ((size_t)s->nvariants + 1));
    for (size_t i = 0; i < n; i++)
        cnt[s->cases[i].variant + 1]++;
    for (size_t v = 0; v < (size_t)s->nvariants; v++)
        cnt[v + 1] += cnt[v];
    int *rank2 = malloc(sizeof *rank2 * n);
    if (!rank2)
        goto out;
    for (size_t i = 0; i < n; i++) {
        size_t at = cnt[s->cases[i].variant]++;
        tmp[at] = s->cases[i];
        rank2[at] = rank[i];
    }
    memset(cnt, 0, sizeof *cnt * (nshapes + 1));
    for (size_t i = 0; i < n; i++)
        cnt[rank2[i] + 1]++;
    for (size_t k = 0; k < nshapes; k++)
        cnt[k + 1] += cnt[k];
    for (size_t i = 0; i < n; i++)
        s->cases[cnt[rank2[i]]++] = tmp[i];
    free(rank2);
    rc = 0;
out:
    sort_space = NULL;
    kf_index_free(&first);
    free(rank);
    free(tmp);
    free(shapes);
    free(cnt);
    return rc;
}

// ---------------------------------------------------------------------------
// expansion

static int expand_spec(builder *b, const kf_config *cfg, const kf_spec *sp, const kf_device *dev, char *err,
                       size_t errlen)
{
    const kf_family *fam = kf_families[cfg->family];
    char at[96];
    snprintf(at, sizeof at, "line %d: %s", sp->line, sp->where);
    const char *where = sp->where[0] ? (sp->line > 0 ? at : sp->where) : "";
    const char *sep = sp->where[0] ? ": " : "";
    for (int d = 0; d < fam->nsizes; d++)
        if (sp->sz[d].count == 0 && !fam->sizes[d].optional) {
            kf_err(err, errlen, "%s: %s%sno sizes: give \"%s\" (for example \"%s\": [1000000, \"2^24\"]) or --set %s=...",
                   cfg->path, where, sep, fam->sizes[d].name, fam->sizes[d].name, fam->sizes[d].name);
            return -1;
        }
    kf_expr **ex = calloc((size_t)(sp->n_constraints + 1), sizeof *ex);
    if (!ex) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    for (int i = 0; i < sp->n_constraints; i++) {
        char eerr[512];
        ex[i] = expr_parse(sp->constraints[i], cfg->family, eerr, sizeof eerr);
        if (!ex[i]) {
            kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
            goto out;
        }
    }

    /* The raw product up to MAX_COMBINATIONS is walked combination by
     * combination (each skipped one listed).  Beyond it (BAT's hotspot: 22
     * million), constraints are checked as soon as their parameters are
     * bound: a constraint false for the parameters up to axis L leaves out
     * every combination of the axes after L at once (counted in
     * space.npruned, not listed), so the valid set is built without the raw
     * product; still at most MAX_COMBINATIONS kept and MAX_VISITS
     * combinations looked at. */
    int64_t total = 1, nshapes = 1;
    bool single = true;
    int count[KF_MAX_PARAMS];
    bool fixed[KF_MAX_PARAMS];
    for (int a = 0; a < fam->nparams; a++) {
        int c = sp->ax[a].count > 0 ? sp->ax[a].count : 1;
        count[a] = c;
        fixed[a] = c == 1;
        if (c > 1)
            single = false;
        if (total > MAX_RAW / c) {
            kf_err(err, errlen, "%s: %s%sthe lists describe more than %lld combinations; narrow them", cfg->path,
                   where, sep, MAX_RAW);
            goto out;
        }
        total *= c;
    }
    bool prune = total > MAX_COMBINATIONS;
    /* the constraints without sizes (the spec's and the family's own), by
     * the last parameter they need */
    int ncut = sp->n_constraints + fam->nconstraints;
    const kf_expr **cx = NULL;
    int *lvl = NULL, nord = 0;
    if (prune) {
        cx = malloc(sizeof *cx * (size_t)(ncut + 1));
        lvl = malloc(sizeof *lvl * (size_t)(ncut + 1));
        if (!cx || !lvl) {
            free(cx);
            free(lvl);
            goto oom_early;
        }
        for (int i = 0; i < ncut; i++) {
            const kf_expr *e = i < sp->n_constraints ? ex[i] : fam->constraints[i - sp->n_constraints];
            if (!e || expr_uses_n(e))
                continue;
            int l = expr_last_param(e, fixed);
            l = l >= fam->nparams ? fam->nparams - 1 : l;
            int j = nord++;
            for (; j > 0 && lvl[j - 1] > l; j--) {
                lvl[j] = lvl[j - 1];
                cx[j] = cx[j - 1];
            }
            lvl[j] = l;
            cx[j] = e;
        }
        if (nord == 0 || lvl[0] >= fam->nparams - 1) {
            /* nothing to cut early: the raw product would be walked */
            free(cx);
            free(lvl);
            kf_err(err, errlen, "%s: %s%sthe lists describe more than %lld combinations; narrow them or add "
                                "constraints over the first parameters",
                   cfg->path, where, sep, MAX_COMBINATIONS);
            goto out;
        }
    }
    for (int d = 0; d < fam->nsizes; d++) {
        nshapes *= sp->sz[d].count > 0 ? sp->sz[d].count : 1;
        if (nshapes > MAX_SHAPES) {
            kf_err(err, errlen, "%s: %s%sthe sizes describe more than %lld shapes", cfg->path, where, sep, MAX_SHAPES);
            free(lvl);
            free(cx);
            goto out;
        }
    }

    int idx[KF_MAX_PARAMS] = {0};
    int64_t visits = 0, kept = 0;
    for (bool more = true; more;) {
        if ((visits++ & 4095) == 0 && kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            free(lvl);
            free(cx);
            goto out;
        }
        if (visits > MAX_VISITS || kept > MAX_COMBINATIONS) {
            kf_err(err, errlen, "%s: %s%sthe lists describe %lld combinations, and the constraints checked as their "
                                "parameters are bound leave more than %lld %s; narrow the lists",
                   cfg->path, where, sep, (long long)total, visits > MAX_VISITS ? MAX_VISITS : MAX_COMBINATIONS,
                   visits > MAX_VISITS ? "to look at" : "combinations");
            free(lvl);
            free(cx);
            goto out;
        }
        kf_variant v;
        variant_defaults(&v, cfg->family);
        size_t nl = strnlen(sp->name, sizeof v.name - 1); /* no snprintf a combination: millions */
        memcpy(v.name, sp->name, nl);
        v.name[nl] = '\0';
        for (int a = 0; a < fam->nparams; a++)
            if (sp->ax[a].count > 0)
                v.p[a] = sp->ax[a].vals[idx[a]];
        if (prune) {
            kf_variant rv = v;
            space_resolve(&rv);
            int cut = INT_MAX;
            for (int o = 0; o < nord && cut == INT_MAX; o++) {
                double r;
                char eerr[512];
                /* one that cannot be evaluated cuts nothing: the checks of
                 * the whole combination below say why */
                if (expr_eval(cx[o], &rv, NULL, &r, eerr, sizeof eerr) == 0 && r == 0)
                    cut = lvl[o];
            }
            if (cut != INT_MAX) {
                /* every combination from here to the end of the subtree at
                 * axis cut is left out: count them, then move past it */
                int64_t rem = 1, below = 1;
                for (int a = fam->nparams - 1; a > cut; a--) {
                    rem += (int64_t)(count[a] - 1 - idx[a]) * below;
                    below *= count[a];
                    idx[a] = count[a] - 1;
                }
                b->s->npruned += rem;
                more = odometer_next(idx, count, fam->nparams) && cut >= 0;
                continue;
            }
            kept++;
        }
        more = odometer_next(idx, count, fam->nparams);

        char why[512], label[256] = "", line[1024];
        kf_variant raw = v;
        space_resolve(&v);
        if (space_check_variant(&v, dev, why, sizeof why) != 0) {
            if (single) {
                char hint[600];
                fix_hint(cfg, &raw, dev, hint, sizeof hint);
                kf_err(err, errlen, "%s: %s%s%s%scannot run: %s%s", cfg->path, where, sep, v.name,
                       v.name[0] ? " " : "", why, hint);
                goto out;
            }
            if (count_only_skip(b))
                continue;
            fam->label(&v, label, sizeof label);
            snprintf(line, sizeof line, "%s%s%s: %s", v.name, v.name[0] ? " " : "", label, why);
            if (push_skip(b, line) != 0)
                goto oom;
            continue;
        }
        /* constraints without sizes: once per variant */
        bool keep = true;
        for (int i = 0; i < sp->n_constraints && keep; i++) {
            if (expr_uses_n(ex[i]))
                continue;
            double r;
            char eerr[512];
            if (expr_eval(ex[i], &v, NULL, &r, eerr, sizeof eerr) != 0) {
                kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
                goto out;
            }
            if (r == 0) {
                keep = false;
                if (count_only_skip(b))
                    break;
                if (!label[0])
                    fam->label(&v, label, sizeof label);
                snprintf(line, sizeof line, "%s%s%s: constraint \"%s\" is false", v.name, v.name[0] ? " " : "",
                         label, sp->constraints[i]);
                if (push_skip(b, line) != 0)
                    goto oom;
            }
        }
        if (!keep)
            continue;

        /* shapes: the product of the size lists, constraints with sizes */
        int vi = -1;
        int sidx[KF_MAX_DIMS] = {0};
        for (int64_t q = 0; q < nshapes; q++) {
            kf_shape shape;
            memset(&shape, 0, sizeof shape);
            for (int d = 0; d < fam->nsizes; d++)
                shape.d[d] = sp->sz[d].count > 0 ? sp->sz[d].vals[sidx[d]] : fam->sizes[d].def;
            for (int d = fam->nsizes - 1; d >= 0; d--) {
                int c = sp->sz[d].count > 0 ? sp->sz[d].count : 1;
                if (++sidx[d] < c)
                    break;
                sidx[d] = 0;
            }
            char stext[128];
            bool ok = true;
            int sc = fam->check_shape ? fam->check_shape(&v, &shape, why, sizeof why) : 0;
            /* for the skip lines; normalised: row_stride 0 -> cols */
#define SKIP_TEXTS()                                        \
    do {                                                    \
        if (!label[0])                                      \
            fam->label(&v, label, sizeof label);            \
        shape_text(fam, &shape, stext, sizeof stext);       \
    } while (0)
            if (sc != 0 && count_only_skip(b)) {
                ok = false;
            } else if (sc != 0) {
                ok = false;
                SKIP_TEXTS();
                snprintf(line, sizeof line, "%s%s%s %s: %s", v.name, v.name[0] ? " " : "", label, stext, why);
                if (push_skip(b, line) != 0)
                    goto oom;
            }
            for (int i = 0; i < sp->n_constraints && ok; i++) {
                if (!expr_uses_n(ex[i]))
                    continue;
                double r;
                char eerr[512];
                if (expr_eval(ex[i], &v, &shape, &r, eerr, sizeof eerr) != 0) {
                    kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
                    goto out;
                }
                if (r == 0) {
                    ok = false;
                    if (count_only_skip(b))
                        break;
                    SKIP_TEXTS();
                    snprintf(line, sizeof line, "%s%s%s %s: constraint \"%s\" is false", v.name,
                             v.name[0] ? " " : "", label, stext, sp->constraints[i]);
                    if (push_skip(b, line) != 0)
                        goto oom;
                }
            }
#undef SKIP_TEXTS
            if (!ok)
                continue;
            if (vi < 0 && (vi = add_variant(b, &v)) < 0)
                goto oom;
            if (add_case(b, vi, &shape) != 0)
                goto oom;
        }
    }
    free(lvl);
    free(cx);
    rc = 0;
    goto out;
oom:
    free(lvl);
    free(cx);
oom_early:
    kf_err(err, errlen, "%s: out of memory while expanding %s", cfg->path, where[0] ? where : "the config");
out:
    for (int i = 0; i < sp->n_constraints; i++)
        expr_free(ex[i]);
    free(ex);
    return rc;
}

bool space_same_for_device(const kf_device *dev)
{
    return !dev || dev->max_threads_per_block <= 0 || dev->max_threads_per_block == 1024;
}

static int expand_all(const kf_config *cfg, const kf_device *dev, kf_space *out, bool count_only, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof *out);
    builder b;
    memset(&b, 0, sizeof b);
    b.s = out;
    b.count_only = count_only;
    int rc = 0;
    for (int i = 0; i < cfg->nspecs && rc == 0; i++)
        rc = expand_spec(&b, cfg, &cfg->specs[i], dev, err, errlen);
    kf_index_free(&b.vset);
    kf_index_free(&b.cset);
    if (rc == 0 && skip_pointers(&b) != 0) {
        kf_err(err, errlen, "%s: out of memory while expanding the config", cfg->path);
        rc = -1;
    }
    free(b.skip_off);
    if (rc != 0) {
        space_free(out);
        return -1;
    }
    if (out->ncases == 0) {
        if (out->nskipped > 0)
            kf_err(err, errlen, "%s: no combination can run (%d skipped; the first: %s)", cfg->path,
                   out->nskipped, out->skipped[0]);
        else
            kf_err(err, errlen, "%s: describes no variant", cfg->path);
        space_free(out);
        return -1;
    }
    /* Size-major order: all variants at one shape, then the next.  Tables
     * then compare variants side by side, and the worker's input cache is
     * reused across consecutive cases. */
    if (sort_cases(out) != 0) {
        kf_err(err, errlen, "%s: out of memory while expanding the config", cfg->path);
        space_free(out);
        return -1;
    }
    kf_trace("space expanded%s: %d variants, %d cases, %d skipped", dev ? " with the device's limits" : "",
             out->nvariants, out->ncases, out->nskipped);
    return 0;
}

int space_expand(const kf_config *cfg, const kf_device *dev, kf_space *out, char *err, size_t errlen)
{
    return expand_all(cfg, dev, out, false, err, errlen);
}

int space_expand_counting(const kf_config *cfg, const kf_device *dev, kf_space *out, char *err, size_t errlen)
{
    return expand_all(cfg, dev, out, true, err, errlen);
}

void space_free(kf_space *s)
{
    free(s->variants);
    free(s->cases);
    free(s->skipped);
    free(s->skip_text);
    memset(s, 0, sizeof *s);
}
