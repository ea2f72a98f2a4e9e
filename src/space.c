/*
 * space.c -- specs to variants and cases (see space.h), and the rules that
 * say which combinations of parameters the kernel template can run.
 *
 * The rules mirror kernel_src/reduce.cuh: each one names the template's
 * assumption it protects, so a combination that would compile into a wrong
 * or racy kernel is rejected here, before anything is generated.
 */
#include "space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "plan.h"
#include "util.h"

#define MAX_COMBINATIONS 10000000LL   /* a cartesian product beyond this is a mistake */

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static bool is_tree(kf_algorithm a)
{
    return a == KF_ALG_INTERLEAVED_DIVERGENT || a == KF_ALG_INTERLEAVED_STRIDED || a == KF_ALG_SEQUENTIAL;
}

void space_resolve(kf_variant *v)
{
    if (v->passes == KF_PASSES_AUTO)
        v->passes = (v->algorithm == KF_ALG_ATOMIC_GLOBAL || v->algorithm == KF_ALG_ATOMIC_SHARED)
                        ? KF_PASSES_ATOMIC
                        : KF_PASSES_MULTI_KERNEL;
}

/* Shared memory the kernel declares: the tree's array, one slot per warp,
 * or one slot (reduce.cuh: KF_SMEM_ELEMS), plus a flag. */
static int smem_bytes(const kf_variant *v)
{
    int elems = is_tree(v->algorithm) ? v->block_size
                : (v->algorithm == KF_ALG_SHUFFLE || v->algorithm == KF_ALG_WARP_INTRINSIC) ? 32
                                                                                              : 1;
    return elems * (int)kf_dtype_size(v->dtype) + 16;
}

int space_check_variant(const kf_variant *v, const kf_device *dev, char *why, size_t whylen)
{
    const char *alg = kf_algorithm_names[v->algorithm];
    const char *dt = kf_dtype_names[v->dtype];
    int max_threads = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    int max_smem = 48 * 1024;    /* static shared memory: the same limit on every GPU since Kepler */

    if (kf_op_is_bitwise(v->op) && kf_dtype_is_float(v->dtype)) {
        kf_err(why, whylen, "op %s is bitwise: it needs an integer dtype, got %s", kf_op_names[v->op], dt);
        return -1;
    }
    /* Every tree halves the block and the warp code assumes whole warps. */
    if (!is_pow2(v->block_size) || v->block_size < 32 || v->block_size > max_threads) {
        kf_err(why, whylen, "block_size %d: the kernels need a power of two from 32 to %d", v->block_size,
               max_threads);
        return -1;
    }
    if (v->elements_per_thread < 1 || v->elements_per_thread > 256) {
        kf_err(why, whylen, "elements_per_thread %d: expected 1..256", v->elements_per_thread);
        return -1;
    }
    if (v->vector_width != 1 && v->vector_width != 2 && v->vector_width != 4) {
        kf_err(why, whylen, "vector_width %d: expected 1, 2 or 4", v->vector_width);
        return -1;
    }
    bool int32 = v->dtype == KF_INT32 || v->dtype == KF_UINT32;
    if (v->algorithm == KF_ALG_WARP_INTRINSIC || v->warp_reduce == KF_WARP_INTRINSIC) {
        const char *what = v->algorithm == KF_ALG_WARP_INTRINSIC ? "algorithm warp_intrinsic"
                                                                 : "warp_reduce intrinsic";
        if (!int32) {
            kf_err(why, whylen, "%s (__reduce_*_sync) needs a 32-bit integer dtype (int32 or uint32), got %s",
                   what, dt);
            return -1;
        }
        if (v->op == KF_OP_PROD) {
            kf_err(why, whylen, "%s: there is no __reduce_*_sync for prod", what);
            return -1;
        }
    }
    if (v->warp_reduce != KF_WARP_SHARED &&
        (v->algorithm != KF_ALG_SEQUENTIAL || v->unroll == KF_UNROLL_NONE)) {
        kf_err(why, whylen,
               "warp_reduce %s applies to the last warp of algorithm sequential with unroll last_warp or "
               "full, got algorithm %s, unroll %s",
               kf_warp_reduce_names[v->warp_reduce], alg, kf_unroll_names[v->unroll]);
        return -1;
    }
    /* A shared accumulator needs one slot per thread: only the trees have it. */
    if (v->accumulator == KF_ACC_SHARED && !is_tree(v->algorithm)) {
        kf_err(why, whylen,
               "accumulator shared needs one shared slot per thread: only algorithms interleaved_divergent, "
               "interleaved_strided and sequential have that, got %s",
               alg);
        return -1;
    }
    switch (v->algorithm) {
    case KF_ALG_ATOMIC_GLOBAL:
    case KF_ALG_ATOMIC_SHARED:
        if (v->unroll != KF_UNROLL_NONE) {
            kf_err(why, whylen, "algorithm %s has no tree to unroll: unroll must be none, got %s", alg,
                   kf_unroll_names[v->unroll]);
            return -1;
        }
        break;
    case KF_ALG_SEQUENTIAL:
        break;
    default:
        if (v->unroll == KF_UNROLL_LAST_WARP) {
            kf_err(why, whylen, "unroll last_warp applies to algorithm sequential only; %s takes none or full",
                   alg);
            return -1;
        }
        break;
    }
    if (v->algorithm == KF_ALG_ATOMIC_GLOBAL && v->passes != KF_PASSES_ATOMIC && v->passes != KF_PASSES_AUTO) {
        kf_err(why, whylen, "algorithm atomic_global combines with atomics by definition: passes must be atomic, "
                            "got %s",
               kf_passes_names[v->passes]);
        return -1;
    }
    if (v->grid.kind == KF_GRID_BLOCKS && (v->grid.value < 1 || v->grid.value > 2147483647LL)) {
        kf_err(why, whylen, "grid %lld: expected 1..2147483647 blocks", (long long)v->grid.value);
        return -1;
    }
    if ((v->grid.kind == KF_GRID_PER_SM || v->grid.kind == KF_GRID_WAVES) &&
        (v->grid.value < 1 || v->grid.value > 64)) {
        kf_err(why, whylen, "grid: expected 1..64 per SM, got %lld", (long long)v->grid.value);
        return -1;
    }
    if (smem_bytes(v) > max_smem) {
        kf_err(why, whylen, "needs %d bytes of shared memory per block, the limit is %d", smem_bytes(v), max_smem);
        return -1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// expansion

typedef struct {
    kf_space *s;
    int vcap, ccap, kcap;
    int *table;         /* open addressing: variant index + 1, 0 empty */
    size_t tsize;
} builder;

static int push_skip(builder *b, const char *line)
{
    kf_space *s = b->s;
    if (s->nskipped == b->kcap) {
        int nc = b->kcap ? b->kcap * 2 : 16;
        char **l = realloc(s->skipped, sizeof *l * (size_t)nc);
        if (!l)
            return -1;
        s->skipped = l;
        b->kcap = nc;
    }
    s->skipped[s->nskipped] = strdup(line);
    if (!s->skipped[s->nskipped])
        return -1;
    s->nskipped++;
    return 0;
}

static void set_axis(kf_variant *v, kf_axis a, int64_t x)
{
    switch (a) {
    case KF_AX_DTYPE: v->dtype = (kf_dtype)x; break;
    case KF_AX_OP: v->op = (kf_op)x; break;
    case KF_AX_ALGORITHM: v->algorithm = (kf_algorithm)x; break;
    case KF_AX_BLOCK_SIZE: v->block_size = (int)x; break;
    case KF_AX_ELEMENTS_PER_THREAD: v->elements_per_thread = (int)x; break;
    case KF_AX_UNROLL: v->unroll = (kf_unroll)x; break;
    case KF_AX_VECTOR_WIDTH: v->vector_width = (int)x; break;
    case KF_AX_GRID: {
        /* field by field: a struct copy could bring padding bytes along,
         * and variants are hashed and compared byte by byte */
        kf_grid g = kf_grid_decode(x);
        v->grid.kind = g.kind;
        v->grid.value = g.value;
        break;
    }
    case KF_AX_PASSES: v->passes = (kf_passes)x; break;
    case KF_AX_LAYOUT: v->layout = (kf_layout)x; break;
    case KF_AX_ACCUMULATOR: v->accumulator = (kf_accum)x; break;
    case KF_AX_WARP_REDUCE: v->warp_reduce = (kf_warp_reduce)x; break;
    case KF_AX_LOAD: v->load = (kf_load)x; break;
    default: break;
    }
}

/* Index of v among the variants so far (same parameters and name), or -1.
 * Variants are memset before filling (padding included), so hashing and
 * comparing the bytes is exact. */
static int find_variant(const builder *b, const kf_variant *v)
{
    if (!b->table)
        return -1;
    for (size_t h = kf_hash64(v, sizeof *v, 7) & (b->tsize - 1);; h = (h + 1) & (b->tsize - 1)) {
        int e = b->table[h];
        if (e == 0)
            return -1;
        if (memcmp(&b->s->variants[e - 1], v, sizeof *v) == 0)
            return e - 1;
    }
}

static int index_variant(builder *b, int vi)
{
    if ((size_t)b->s->nvariants * 2 >= b->tsize) {
        size_t ns = b->tsize ? b->tsize * 2 : 64;
        int *t = calloc(ns, sizeof *t);
        if (!t)
            return -1;
        free(b->table);
        b->table = t;
        b->tsize = ns;
        for (int i = 0; i < b->s->nvariants; i++)
            if (i != vi && index_variant(b, i) != 0)
                return -1;
    }
    size_t h = kf_hash64(&b->s->variants[vi], sizeof(kf_variant), 7) & (b->tsize - 1);
    while (b->table[h])
        h = (h + 1) & (b->tsize - 1);
    b->table[h] = vi + 1;
    return 0;
}

static int add_case(builder *b, int variant, int64_t n, bool maybe_dup)
{
    kf_space *s = b->s;
    if (maybe_dup)
        for (int i = 0; i < s->ncases; i++)
            if (s->cases[i].variant == variant && s->cases[i].n == n)
                return 0;
    if (s->ncases == b->ccap) {
        int nc = b->ccap ? b->ccap * 2 : 64;
        kf_case *l = realloc(s->cases, sizeof *l * (size_t)nc);
        if (!l)
            return -1;
        s->cases = l;
        b->ccap = nc;
    }
    s->cases[s->ncases].variant = variant;
    s->cases[s->ncases].n = n;
    s->ncases++;
    return 0;
}

static int cmp_case(const void *pa, const void *pb)
{
    const kf_case *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    return (a->variant > b->variant) - (a->variant < b->variant);
}

static int expand_spec(builder *b, const kf_config *cfg, const kf_spec *sp, const kf_device *dev, char *err,
                       size_t errlen)
{
    const char *where = sp->where[0] ? sp->where : "";
    const char *sep = sp->where[0] ? ": " : "";
    if (sp->n_count == 0) {
        kf_err(err, errlen, "%s: %s%sno sizes: give \"n\" (for example \"n\": [1000000, \"2^24\"]) or --set n=...",
               cfg->path, where, sep);
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
        ex[i] = expr_parse(sp->constraints[i], eerr, sizeof eerr);
        if (!ex[i]) {
            kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
            goto out;
        }
    }

    int64_t total = 1;
    bool single = true;
    for (int a = 0; a < KF_AX_COUNT; a++) {
        int c = sp->ax[a].count > 0 ? sp->ax[a].count : 1;
        if (c > 1)
            single = false;
        total *= c;
        if (total > MAX_COMBINATIONS) {
            kf_err(err, errlen, "%s: %s%sthe lists describe more than %lld combinations; narrow them or add "
                                "constraints",
                   cfg->path, where, sep, MAX_COMBINATIONS);
            goto out;
        }
    }

    int idx[KF_AX_COUNT] = {0};
    for (int64_t k = 0; k < total; k++) {
        kf_variant v;
        kf_variant_defaults(&v);
        snprintf(v.name, sizeof v.name, "%s", sp->name);
        for (int a = 0; a < KF_AX_COUNT; a++)
            if (sp->ax[a].count > 0)
                set_axis(&v, (kf_axis)a, sp->ax[a].vals[idx[a]]);
        /* next combination (odometer, last axis fastest) */
        for (int a = KF_AX_COUNT - 1; a >= 0; a--) {
            int c = sp->ax[a].count > 0 ? sp->ax[a].count : 1;
            if (++idx[a] < c)
                break;
            idx[a] = 0;
        }

        char why[512], label[256], line[1024];
        space_resolve(&v);
        kf_variant_label(&v, label, sizeof label);
        if (space_check_variant(&v, dev, why, sizeof why) != 0) {
            if (single) {
                kf_err(err, errlen, "%s: %s%s%s%scannot run: %s", cfg->path, where, sep, v.name,
                       v.name[0] ? " " : "", why);
                goto out;
            }
            snprintf(line, sizeof line, "%s%s%s: %s", v.name, v.name[0] ? " " : "", label, why);
            if (push_skip(b, line) != 0)
                goto oom;
            continue;
        }
        /* constraints without n: once per variant */
        bool keep = true;
        for (int i = 0; i < sp->n_constraints && keep; i++) {
            if (expr_uses_n(ex[i]))
                continue;
            double r;
            char eerr[512];
            if (expr_eval(ex[i], &v, 0, &r, eerr, sizeof eerr) != 0) {
                kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
                goto out;
            }
            if (r == 0) {
                keep = false;
                snprintf(line, sizeof line, "%s%s%s: constraint \"%s\" is false", v.name, v.name[0] ? " " : "",
                         label, sp->constraints[i]);
                if (push_skip(b, line) != 0)
                    goto oom;
            }
        }
        if (!keep)
            continue;

        /* sizes: constraints with n, per case */
        int vi = find_variant(b, &v);
        bool existed = vi >= 0;
        for (int j = 0; j < sp->n_count; j++) {
            int64_t n = sp->n[j];
            bool ok = true;
            for (int i = 0; i < sp->n_constraints && ok; i++) {
                if (!expr_uses_n(ex[i]))
                    continue;
                double r;
                char eerr[512];
                if (expr_eval(ex[i], &v, n, &r, eerr, sizeof eerr) != 0) {
                    kf_err(err, errlen, "%s: %s%sconstraints[%d]: %s", cfg->path, where, sep, i, eerr);
                    goto out;
                }
                if (r == 0) {
                    ok = false;
                    snprintf(line, sizeof line, "%s%s%s n=%lld: constraint \"%s\" is false", v.name,
                             v.name[0] ? " " : "", label, (long long)n, sp->constraints[i]);
                    if (push_skip(b, line) != 0)
                        goto oom;
                }
            }
            /* grid auto launches one block per tile, and a grid holds at
             * most 2^31 - 1 blocks */
            if (ok && v.grid.kind == KF_GRID_AUTO && (n + plan_tile(&v) - 1) / plan_tile(&v) > 2147483647LL) {
                ok = false;
                snprintf(line, sizeof line, "%s%s%s n=%lld: grid auto would need more than 2^31-1 blocks; use a "
                         "fixed grid", v.name, v.name[0] ? " " : "", label, (long long)n);
                if (push_skip(b, line) != 0)
                    goto oom;
            }
            if (!ok)
                continue;
            if (vi < 0) {
                kf_space *s = b->s;
                if (s->nvariants == b->vcap) {
                    int nc = b->vcap ? b->vcap * 2 : 16;
                    kf_variant *l = realloc(s->variants, sizeof *l * (size_t)nc);
                    if (!l)
                        goto oom;
                    s->variants = l;
                    b->vcap = nc;
                }
                s->variants[s->nvariants] = v;
                vi = s->nvariants++;
                if (index_variant(b, vi) != 0)
                    goto oom;
            }
            if (add_case(b, vi, n, existed) != 0)
                goto oom;
        }
    }
    rc = 0;
    goto out;
oom:
    kf_err(err, errlen, "%s: out of memory while expanding %s", cfg->path, where[0] ? where : "the config");
out:
    for (int i = 0; i < sp->n_constraints; i++)
        expr_free(ex[i]);
    free(ex);
    return rc;
}

int space_expand(const kf_config *cfg, const kf_device *dev, kf_space *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    builder b = {out, 0, 0, 0, NULL, 0};
    for (int i = 0; i < cfg->nspecs; i++)
        if (expand_spec(&b, cfg, &cfg->specs[i], dev, err, errlen) != 0) {
            free(b.table);
            space_free(out);
            return -1;
        }
    free(b.table);
    if (out->ncases == 0) {
        if (out->nskipped > 0)
            kf_err(err, errlen, "%s: no combination can run (%d skipped; the first: %s)", cfg->path,
                   out->nskipped, out->skipped[0]);
        else
            kf_err(err, errlen, "%s: describes no variant", cfg->path);
        space_free(out);
        return -1;
    }
    /* Size-major order: all variants at one n, then the next n.  Tables
     * then compare variants side by side, and the worker's input cache
     * (keyed by dtype, op, seed and n) is reused across consecutive cases. */
    qsort(out->cases, (size_t)out->ncases, sizeof *out->cases, cmp_case);
    return 0;
}

void space_free(kf_space *s)
{
    free(s->variants);
    free(s->cases);
    for (int i = 0; i < s->nskipped; i++)
        free(s->skipped[i]);
    free(s->skipped);
    memset(s, 0, sizeof *s);
}
