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
#include "util.h"
#include "worker.h"

volatile sig_atomic_t kf_interrupted = 0;

enum { VS_NEW, VS_COMPILING, VS_READY, VS_FAILED };

typedef struct {
    int state;
    int owner;              /* variant whose source this one shares (itself if first) */
    char key[33];
    char path[PATH_MAX];
    char *log;
    double ms;
    bool cached;
} vstate;

struct run_session {
    run_opts o;
    kf_device dev;
    gpu_worker *w;
    rtc_pool *pool;
    rtc_cache cache;
    rtc_options ropt;
    int sent;               /* cases sent in this process (for fault injection) */
    int ncompiled, ncached;
};

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
    free(s);
}

void run_session_counts(const run_session *s, int *compiled, int *cached)
{
    *compiled = s->ncompiled;
    *cached = s->ncached;
}

/* Source, cache lookup or submission for every variant. */
static int prepare_variants(rtc_pool *pool, const rtc_cache *cache, const rtc_options *ropt,
                            const kf_variant *variants, int nvariants, vstate *vs, int *ncached,
                            char *err, size_t errlen)
{
    for (int i = 0; i < nvariants; i++) {
        vs[i].owner = i;
        char *src = codegen_source(&variants[i], err, errlen);
        if (!src)
            return -1;
        rtc_cache_key(src, ropt, vs[i].key);
        for (int j = 0; j < i; j++)
            if (vs[j].owner == j && strcmp(vs[j].key, vs[i].key) == 0) {
                vs[i].owner = j;
                break;
            }
        if (vs[i].owner == i) {
            if (rtc_cache_lookup(cache, src, ropt, vs[i].path, sizeof vs[i].path)) {
                vs[i].state = VS_READY;
                vs[i].cached = true;
                (*ncached)++;
            } else {
                vs[i].state = VS_COMPILING;
                rtc_pool_submit(pool, i, src, "kforge_reduce.cu");
            }
        }
        free(src);
    }
    return 0;
}

static void compile_done(const rtc_done *d, const kf_variant *variants, vstate *vs)
{
    vstate *v = &vs[d->tag];
    v->ms = d->ms;
    if (d->ok) {
        v->state = VS_READY;
        snprintf(v->path, sizeof v->path, "%s", d->cubin_path);
        free(d->log);
    } else {
        v->state = VS_FAILED;
        v->log = d->log;
        char label[256];
        kf_variant_label(&variants[d->tag], label, sizeof label);
        fprintf(stderr, "kforge: %s%s%s failed to compile:\n%s\n", variants[d->tag].name,
                variants[d->tag].name[0] ? " " : "", label, d->log ? d->log : "(no log)");
    }
}

static void fill_compile_facts(kf_result *r, const vstate *owner)
{
    r->cached = owner->cached;
    r->compile_ms = owner->cached ? 0 : owner->ms;
}

static void compile_failure_result(kf_result *r, const kf_variant *v, int64_t n, const vstate *owner)
{
    memset(r, 0, sizeof *r);
    r->v = *v;
    r->n = n;
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

static void progress(const run_session *s, int done, int total, double t0)
{
    if (!s->o.progress)
        return;
    fprintf(stderr, "\r\033[K[%d/%d measured | %d compiling | %.0fs]", done, total, rtc_pool_pending(s->pool),
            kf_now() - t0);
    fflush(stderr);
}

int run_session_measure(run_session *s, const kf_variant *variants, int nvariants, const kf_case *cases,
                        int ncases, const kf_bench *b, run_result_fn fn, void *ctx, char *err, size_t errlen)
{
    int rc = 0;
    vstate *vs = calloc((size_t)(nvariants > 0 ? nvariants : 1), sizeof *vs);
    if (!vs) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    int cached_before = s->ncached;
    if (prepare_variants(s->pool, &s->cache, &s->ropt, variants, nvariants, vs, &s->ncached, err, errlen) != 0) {
        rc = -1;
        goto out;
    }
    (void)cached_before;

    int head = 0, inflight = -1, done = 0;
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
            const vstate *ow = &vs[vs[c->variant].owner];
            if (ow->state == VS_FAILED) {
                compile_failure_result(&r, &variants[c->variant], c->n, ow);
                head++;
                done++;
                if (fn(&r, ctx)) {
                    rc = 1;
                    goto out;
                }
                continue;
            }
            if (ow->state != VS_READY)
                break;
            int inject = worker_injection(++s->sent);
            if (worker_send(s->w, &variants[c->variant], c->n, b, ow->path, inject) != 0) {
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
            for (int i = 0; i < k; i++) {
                compile_done(&dd[i], variants, vs);
                s->ncompiled++;
            }
        }
        if (inflight >= 0 && pr > 0 && (fds[wfd].revents & (POLLIN | POLLHUP | POLLERR))) {
            const kf_case *c = &cases[inflight];
            memset(&r, 0, sizeof r);
            r.v = variants[c->variant];
            r.n = c->n;
            int wr = worker_recv(s->w, &r);
            if (wr != 0 && kf_interrupted)
                continue;   /* it died with us (a signal to the process group): not a result */
            r.v = variants[c->variant]; /* the name and grid as the caller knows them */
            r.n = c->n;
            fill_compile_facts(&r, &vs[vs[c->variant].owner]);
            inflight = -1;
            done++;
            if (wr != 0) {
                worker_free(s->w);
                s->w = worker_start(s->o.device, &s->dev, err, errlen);
            }
            if (fn(&r, ctx)) {
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
            r.v = variants[c->variant];
            r.n = c->n;
            r.status = KF_ST_TIMEOUT;
            snprintf(r.message, sizeof r.message, "no result after %.1f s: stopped by the watchdog (bench.timeout_s)",
                     b->timeout_s);
            fill_compile_facts(&r, &vs[vs[c->variant].owner]);
            inflight = -1;
            done++;
            s->w = worker_start(s->o.device, &s->dev, err, errlen);
            if (fn(&r, ctx)) {
                rc = 1;
                goto out;
            }
            if (!s->w) {
                rc = -1;
                goto out;
            }
        }
        if (s->o.progress && kf_now() - last_progress > 0.2) {
            progress(s, done, ncases, t0);
            last_progress = kf_now();
        }
    }
out:
    if (s->o.progress) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    /* drain compiles still in flight for variants we no longer need */
    for (int i = 0; i < nvariants; i++)
        free(vs[i].log);
    free(vs);
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
    vstate *vs = calloc((size_t)(nvariants > 0 ? nvariants : 1), sizeof *vs);
    if (!vs || prepare_variants(pool, &cache, &ropt, variants, nvariants, vs, &ncached, err, errlen) != 0) {
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
            compile_done(&d, variants, vs);
    }
    for (int i = 0; i < nvariants; i++) {
        const vstate *ow = &vs[vs[i].owner];
        kf_result r;
        if (ow->state == VS_FAILED) {
            compile_failure_result(&r, &variants[i], 0, ow);
            failed++;
        } else {
            memset(&r, 0, sizeof r);
            r.v = variants[i];
            r.status = KF_ST_OK;
            snprintf(r.message, sizeof r.message, "%.400s", ow->path);
            fill_compile_facts(&r, ow);
        }
        if (fn(&r, ctx))
            break;
    }
    rc = failed;
out:
    if (vs)
        for (int i = 0; i < nvariants; i++)
            free(vs[i].log);
    free(vs);
    rtc_pool_free(pool);
    return rc;
}
