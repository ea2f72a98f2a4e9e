/*
 * run.c -- see run.h.
 */
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen.h"
#include "family.h"
#include "util.h"
#include "worker.h"


enum { VS_NEW, VS_COMPILING, VS_READY, VS_FAILED };

/* One distinct source (variants that differ only in launch-time values
 * share one).  The table lives as long as the session, so a compile still
 * in flight from an earlier batch or config lands in its own entry. */
typedef struct {
    int state;
    char key[33];
    char path[PATH_MAX];
    char *log;
    double ms;
    bool cached;
    char label[160];        /* a variant that uses it, for messages */
} vstate;

typedef struct {
    vstate *v;
    int n, cap;
    int *table;             /* open addressing: index + 1, 0 empty */
    int tsize;
} srctab;

struct run_session {
    run_opts o;
    kf_device dev;
    gpu_worker *w;
    rtc_pool *pool;
    rtc_cache cache;
    rtc_options ropt;
    srctab src;
    int sent;               /* cases sent in this process (for fault injection) */
    int ncompiled, ncached;
};

static uint64_t key_hash(const char *key) { return kf_hash64(key, strlen(key), 11); }

static int src_find(const srctab *t, const char *key)
{
    if (!t->tsize)
        return -1;
    for (uint64_t h = key_hash(key) & (uint64_t)(t->tsize - 1);; h = (h + 1) & (uint64_t)(t->tsize - 1)) {
        if (!t->table[h])
            return -1;
        if (strcmp(t->v[t->table[h] - 1].key, key) == 0)
            return t->table[h] - 1;
    }
}

/* A new entry for key: its index, or -1. */
static int src_add(srctab *t, const char *key)
{
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 64;
        vstate *nv = realloc(t->v, sizeof *nv * (size_t)nc);
        if (!nv)
            return -1;
        t->v = nv;
        t->cap = nc;
    }
    if ((t->n + 1) * 2 > t->tsize) {
        int ns = t->tsize ? t->tsize * 2 : 128;
        int *nt = calloc((size_t)ns, sizeof *nt);
        if (!nt)
            return -1;
        for (int i = 0; i < t->n; i++) {
            uint64_t h = key_hash(t->v[i].key) & (uint64_t)(ns - 1);
            while (nt[h])
                h = (h + 1) & (uint64_t)(ns - 1);
            nt[h] = i + 1;
        }
        free(t->table);
        t->table = nt;
        t->tsize = ns;
    }
    vstate *e = &t->v[t->n];
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    uint64_t h = key_hash(key) & (uint64_t)(t->tsize - 1);
    while (t->table[h])
        h = (h + 1) & (uint64_t)(t->tsize - 1);
    t->table[h] = t->n + 1;
    return t->n++;
}

static void src_free(srctab *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->v[i].log);
    free(t->v);
    free(t->table);
    memset(t, 0, sizeof *t);
}

/* -1: NVRTC or the pool failed; -2: the cache directory is unusable. */
static int setup_compiler(const run_opts *o, const char *arch, rtc_cache *cache, rtc_options *ropt,
                          rtc_pool **pool, char *err, size_t errlen)
{
    memset(ropt, 0, sizeof *ropt);
    snprintf(ropt->arch, sizeof ropt->arch, "%s", arch);
    ropt->lineinfo = o->lineinfo;
    int maj, min;
    if (rtc_version(&maj, &min) != 0) {
        kf_err(err, errlen, "NVRTC is not usable");
        return -1;
    }
    if (rtc_cache_init(cache, o->cache_dir, !o->no_cache, err, errlen) != 0)
        return -2;
    *pool = rtc_pool_new(o->jobs, cache, ropt, err, errlen);
    return *pool ? 0 : -1;
}

run_session *run_session_new(const run_opts *o, kf_device *dev, bool *nodev, char *err, size_t errlen)
{
    *nodev = false;
    run_session *s = calloc(1, sizeof *s);
    if (!s) {
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    /* The GPU worker first: the parent must not have touched CUDA when it
     * forks, and it never does. */
    s->w = worker_start(o->device, &s->dev, err, errlen);
    if (!s->w) {
        *nodev = true;
        free(s);
        return NULL;
    }
    int maj, min;
    if (rtc_version(&maj, &min) == 0) {
        s->dev.nvrtc_major = maj;
        s->dev.nvrtc_minor = min;
    }
    char arch[16];
    if (o->arch)
        snprintf(arch, sizeof arch, "%s", o->arch);
    else
        snprintf(arch, sizeof arch, "sm_%d%d", s->dev.cc_major, s->dev.cc_minor);
    int sc = setup_compiler(o, arch, &s->cache, &s->ropt, &s->pool, err, errlen);
    if (sc != 0) {
        *nodev = sc != -2;
        worker_free(s->w);
        free(s);
        return NULL;
    }
    *dev = s->dev;
    return s;
}

void run_session_free(run_session *s)
{
    if (!s)
        return;
    if (s->w)
        worker_free(s->w);
    rtc_pool_free(s->pool);
    src_free(&s->src);
    free(s);
}

void run_session_counts(const run_session *s, int *compiled, int *cached)
{
    *compiled = s->ncompiled;
    *cached = s->ncached;
}

/* Source, cache lookup or submission for every variant; src_of[i] is
 * variant i's entry in the session's source table. */
static int prepare_variants(rtc_pool *pool, const rtc_cache *cache, const rtc_options *ropt, srctab *t,
                            const kf_variant *variants, int nvariants, int *src_of, int *ncached, char *err,
                            size_t errlen)
{
    for (int i = 0; i < nvariants; i++) {
        if ((i & 255) == 0 && kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            return -1;
        }
        char *src = codegen_source(&variants[i], err, errlen);
        if (!src)
            return -1;
        char key[33];
        rtc_cache_key(src, ropt, key);
        int e = src_find(t, key);
        if (e < 0) {
            e = src_add(t, key);
            if (e < 0) {
                free(src);
                kf_err(err, errlen, "out of memory");
                return -1;
            }
            vstate *v = &t->v[e];
            variant_label(&variants[i], v->label, sizeof v->label);
            if (rtc_cache_lookup(cache, src, ropt, v->path, sizeof v->path)) {
                v->state = VS_READY;
                v->cached = true;
                (*ncached)++;
            } else {
                v->state = VS_COMPILING;
                rtc_pool_submit(pool, e, src, "kforge_kernel.cu");
            }
        }
        src_of[i] = e;
        free(src);
    }
    return 0;
}

static void compile_done(const rtc_done *d, srctab *t)
{
    if (d->tag < 0 || d->tag >= t->n) {
        free(d->log);
        return;
    }
    vstate *v = &t->v[d->tag];
    v->ms = d->ms;
    if (d->ok) {
        v->state = VS_READY;
        snprintf(v->path, sizeof v->path, "%s", d->cubin_path);
        free(d->log);
    } else {
        v->state = VS_FAILED;
        free(v->log);
        v->log = d->log;
        fprintf(stderr, "kforge: %s failed to compile:\n%s\n", v->label, d->log ? d->log : "(no log)");
    }
}

static void fill_compile_facts(kf_result *r, const vstate *owner)
{
    r->cached = owner->cached;
    r->compile_ms = owner->cached ? 0 : owner->ms;
}

static void compile_failure_result(kf_result *r, const kf_variant *v, const kf_shape *shape, const vstate *owner)
{
    memset(r, 0, sizeof *r);
    r->v = *v;
    if (shape)
        r->shape = *shape;
    r->device = -1;
    r->status = KF_ST_COMPILE;
    const char *log = owner->log ? owner->log : "NVRTC failed";
    /* first error line of the log */
    const char *e = strstr(log, "error");
    const char *start = e ? e : log;
    const char *nl = strchr(start, '\n');
    int len = nl ? (int)(nl - start) : (int)strlen(start);
    snprintf(r->message, sizeof r->message, "compile failed: %.*s", len, start);
    fill_compile_facts(r, owner);
}

static void progress(const run_session *s, int done, int failed, int total, double t0)
{
    if (!s->o.progress)
        return;
    double el = kf_now() - t0;
    char left[32] = "";
    if (done > 0 && done < total)
        snprintf(left, sizeof left, ", ~%.0fs left", el / done * (total - done));
    fprintf(stderr, "\r\033[K[%d/%d measured | %d failed | %d compiling | %.0fs%s]", done, total, failed,
            rtc_pool_pending(s->pool), el, left);
    fflush(stderr);
}

/* Hands a result to the caller, who may print (a failure, a warning): the
 * progress line is cleared first and drawn again after. */
static int deliver(const run_session *s, run_result_fn fn, const kf_result *r, void *ctx, int *failed,
                   bool *redraw)
{
    if (s->o.progress) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        *redraw = true;
    }
    *failed += r->status != KF_ST_OK;
    return fn(r, ctx);
}

/* A result of the session's device, for the case in flight. */
static void stamp(const run_session *s, kf_result *r, const kf_variant *v, const kf_case *c, const kf_bench *b)
{
    r->v = *v;          /* the name and grid as the caller knows them */
    r->shape = c->shape;
    r->bench = *b;
    r->device = s->dev.index;
    snprintf(r->device_name, sizeof r->device_name, "%s", s->dev.name);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", s->dev.uuid);
}

int run_session_measure(run_session *s, const kf_variant *variants, int nvariants, const kf_case *cases,
                        int ncases, const kf_bench *b, run_result_fn fn, void *ctx, char *err, size_t errlen)
{
    int rc = 0;
    int *src_of = malloc(sizeof *src_of * (size_t)(nvariants > 0 ? nvariants : 1));
    if (!src_of) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    srctab *t = &s->src;
    if (prepare_variants(s->pool, &s->cache, &s->ropt, t, variants, nvariants, src_of, &s->ncached, err,
                         errlen) != 0) {
        rc = -1;
        goto out;
    }

    int head = 0, inflight = -1, done = 0, failed = 0;
    bool redraw = false;
    double t_sent = 0, t0 = kf_now(), last_progress = 0;
    kf_result r;
    while (head < ncases || inflight >= 0) {
        if (kf_interrupted || kf_output_broken) {
            if (inflight >= 0)
                worker_kill(s->w);
            rc = -1;
            kf_err(err, errlen, "interrupted");
            break;
        }
        /* hand the next case to the GPU when its cubin is ready */
        while (inflight < 0 && head < ncases) {
            const kf_case *c = &cases[head];
            const vstate *ow = &t->v[src_of[c->variant]];
            if (ow->state == VS_FAILED) {
                compile_failure_result(&r, &variants[c->variant], &c->shape, ow);
                r.bench = *b;
                head++;
                done++;
                if (deliver(s, fn, &r, ctx, &failed, &redraw)) {
                    rc = 1;
                    goto out;
                }
                continue;
            }
            if (ow->state != VS_READY)
                break;
            int inject = worker_injection(++s->sent);
            if (worker_send(s->w, &variants[c->variant], &c->shape, b, ow->path, inject) != 0) {
                kf_err(err, errlen, "cannot talk to the GPU worker");
                rc = -1;
                goto out;
            }
            inflight = head++;
            t_sent = kf_now();
        }
        if (head >= ncases && inflight < 0)
            break;

        struct pollfd fds[512];
        int nf = rtc_pool_pollfds(s->pool, fds, 511);
        int wfd = -1;
        if (inflight >= 0) {
            wfd = nf;
            fds[nf].fd = worker_fd(s->w);
            fds[nf].events = POLLIN;
            fds[nf].revents = 0;
            nf++;
        }
        int timeout = -1;
        if (inflight >= 0 && b->timeout_s > 0) {
            double left = b->timeout_s - (kf_now() - t_sent);
            timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
        }
        if (s->o.progress && (timeout < 0 || timeout > 250))
            timeout = 250;
        int pr = poll(fds, (nfds_t)nf, timeout);
        if (pr < 0 && errno != EINTR) {
            kf_err(err, errlen, "poll: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (pr > 0) {
            rtc_done dd[16];
            int k = rtc_pool_collect(s->pool, fds, wfd >= 0 ? wfd : nf, dd, 16);
            if (k > 0 && s->o.progress) { /* a failed compile prints its log */
                fprintf(stderr, "\r\033[K");
                redraw = true;
            }
            for (int i = 0; i < k; i++) {
                compile_done(&dd[i], t);
                s->ncompiled++;
            }
        }
        if (inflight >= 0 && pr > 0 && (fds[wfd].revents & (POLLIN | POLLHUP | POLLERR))) {
            const kf_case *c = &cases[inflight];
            memset(&r, 0, sizeof r);
            int wr = worker_recv(s->w, &r);
            stamp(s, &r, &variants[c->variant], c, b);
            fill_compile_facts(&r, &t->v[src_of[c->variant]]);
            inflight = -1;
            if (wr != 0 && kf_interrupted) {
                /* the worker died of the signal that interrupts us (a
                 * group SIGTERM): not a result of the case */
                rc = -1;
                kf_err(err, errlen, "interrupted");
                break;
            }
            done++;
            if (wr != 0) {
                worker_free(s->w);
                s->w = worker_start(s->o.device, &s->dev, err, errlen);
            }
            if (deliver(s, fn, &r, ctx, &failed, &redraw)) {
                rc = 1;
                goto out;
            }
            if (!s->w) {
                rc = -1;
                goto out;
            }
        } else if (inflight >= 0 && !kf_interrupted && b->timeout_s > 0 && kf_now() - t_sent >= b->timeout_s) {
            const kf_case *c = &cases[inflight];
            worker_kill(s->w);
            worker_free(s->w);
            memset(&r, 0, sizeof r);
            stamp(s, &r, &variants[c->variant], c, b);
            r.status = KF_ST_TIMEOUT;
            snprintf(r.message, sizeof r.message, "no result after %.1f s: stopped by the watchdog (bench.timeout_s)",
                     b->timeout_s);
            fill_compile_facts(&r, &t->v[src_of[c->variant]]);
            inflight = -1;
            done++;
            s->w = worker_start(s->o.device, &s->dev, err, errlen);
            if (deliver(s, fn, &r, ctx, &failed, &redraw)) {
                rc = 1;
                goto out;
            }
            if (!s->w) {
                rc = -1;
                goto out;
            }
        }
        if (s->o.progress && (redraw || kf_now() - last_progress > 0.2)) {
            progress(s, done, failed, ncases, t0);
            last_progress = kf_now();
            redraw = false;
        }
    }
out:
    if (s->o.progress) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    free(src_of);
    return rc;
}

int run_compile_only(const kf_variant *variants, int nvariants, const run_opts *o, run_result_fn fn, void *ctx,
                     char *err, size_t errlen)
{
    rtc_cache cache;
    rtc_options ropt;
    rtc_pool *pool = NULL;
    int sc = setup_compiler(o, o->arch ? o->arch : "sm_90", &cache, &ropt, &pool, err, errlen);
    if (sc != 0)
        return sc;
    int failed = 0, ncached = 0, rc = 0;
    srctab t;
    memset(&t, 0, sizeof t);
    int *src_of = malloc(sizeof *src_of * (size_t)(nvariants > 0 ? nvariants : 1));
    if (!src_of || prepare_variants(pool, &cache, &ropt, &t, variants, nvariants, src_of, &ncached, err, errlen) != 0) {
        if (!src_of)
            kf_err(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }
    while (rtc_pool_pending(pool) > 0) {
        if (kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            rc = -1;
            goto out;
        }
        rtc_done d;
        int w = rtc_pool_wait(pool, 250, &d);
        if (w == 1)
            compile_done(&d, &t);
    }
    for (int i = 0; i < nvariants; i++) {
        const vstate *ow = &t.v[src_of[i]];
        kf_result r;
        if (ow->state == VS_FAILED) {
            compile_failure_result(&r, &variants[i], NULL, ow);
            failed++;
        } else {
            memset(&r, 0, sizeof r);
            r.v = variants[i];
            r.device = -1;
            r.status = KF_ST_OK;
            snprintf(r.message, sizeof r.message, "%.400s", ow->path);
            fill_compile_facts(&r, ow);
        }
        if (fn(&r, ctx))
            break;
    }
    rc = failed;
out:
    free(src_of);
    src_free(&t);
    rtc_pool_free(pool);
    return rc;
}
