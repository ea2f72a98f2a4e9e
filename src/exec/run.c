/*
 * run.c -- see run.h.
 */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "codegen.h"
#include "datashare.h"
#include "family.h"
#include "outcheck.h"
#include "util.h"
#include "worker.h"


enum { VS_NEW, VS_COMPILING, VS_READY, VS_FAILED };

/* The compile of the output check's module (submit_outcheck), not a source of the table. */
#define TAG_OUTCHECK (-2)

/* One distinct source (variants that differ only in launch-time values
 * share one) for one architecture.  The table lives as long as the
 * session, so a compile still in flight from an earlier batch or config
 * lands in its own entry. */
typedef struct {
    int state;
    char path[PATH_MAX];    /* the cubin in the cache, or "" when it is in memory: */
    void *cubin;            /* the cubin the cache could not store (rtc_done) */
    size_t cubin_len;
    char *names;            /* and its lowered names */
    char *log;
    double ms;
    bool cached;
    bool ahead;             /* compiled ahead of need (run_session_ahead), not asked for yet */
    char label[160];        /* a variant that uses it, for messages */
} vstate;

typedef struct {
    kf_strset keys;         /* the sources' cache keys: v[i] is the source of keys.keys[i] */
    vstate *v;
    int n, cap;
} srctab;

/* One compiler pool and source table per distinct GPU architecture. */
typedef struct {
    rtc_options ropt;
    rtc_pool *pool;
    int jobs;
    srctab src;
} compiler;

/* A worker that dies without a word on this many cases in a row has its
 * device dropped (while another is left), and those cases go to the others. */
#define STRIKES 3

/* The data (exact data's keys, data.h) a worker is taken to hold on its
 * device: the last this many it was sent cases of (its device keeps 32
 * inputs, exact and realistic, the least recently used given up first). */
#define AFF_KEEP 16

/* One device and its worker. */
typedef struct {
    kf_device dev;
    gpu_worker *w;          /* NULL once the device is dropped */
    int comp;               /* its compiler */
    int inflight;           /* index of the case it measures, or -1 */
    double t_sent;
    int nheld;              /* cases its worker died on, in a row, not reported yet */
    int held_case[STRIKES];
    kf_result held[STRIKES];
    /* data affinity: the keys (data_key_hash of the exact data) of the
     * cases sent to this worker since it started, the most recent last */
    uint64_t aff_key[AFF_KEEP];
    int naff;
} slot;

struct run_session {
    run_opts o;
    slot *slots;
    kf_device *devs;        /* the slots' devices, for run_session_devices */
    int nslots, nlive;
    compiler comps[KF_MAX_DEVICES];
    int ncomps;
    rtc_cache cache;
    int sent;               /* cases sent in this process (for fault injection) */
    int ncompiled, ncached;
    double deadline;        /* kf_now() after which no case starts (0: none) */
    char note[96];          /* the caller's words at the end of the progress line ("best ...") */
    bool shared;            /* datashare_open was called for it */
    bool cache_ready;       /* s->cache set up (early_compilers) */
};

/* The entry for key, made if new (*added says which): its index, or -1. */
static int src_add(srctab *t, const char *key, bool *added)
{
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 64;
        vstate *nv = realloc(t->v, sizeof *nv * (size_t)nc);
        if (!nv)
            return -1;
        t->v = nv;
        t->cap = nc;
    }
    int e = kf_strset_add(&t->keys, key, added);
    if (e >= 0 && *added) {
        memset(&t->v[e], 0, sizeof t->v[e]);
        t->n++;
    }
    return e;
}

static void src_free(srctab *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->v[i].log);
        free(t->v[i].cubin);
        free(t->v[i].names);
    }
    free(t->v);
    kf_strset_free(&t->keys);
    memset(t, 0, sizeof *t);
}

// ---------------------------------------------------------------------------
// Devices and compilers

int run_devices_parse(const char *spec, run_opts *o, char *err, size_t errlen)
{
    o->all_devices = false;
    o->ndevices = 0;
    snprintf(o->devices_spec, sizeof o->devices_spec, "%s", spec);
    if (strcmp(spec, "all") == 0) {
        o->all_devices = true;
        return 0;
    }
    const char *p = spec;
    for (;;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || *p == '-' || *p == '+' || a < 0 || a >= KF_MAX_DEVICES)
            goto bad;
        if (*end == '-') {
            const char *q = end + 1;
            b = strtol(q, &end, 10);
            if (end == q || *q == '-' || *q == '+' || b < a || b >= KF_MAX_DEVICES)
                goto bad;
        }
        for (long d = a; d <= b; d++) {
            for (int i = 0; i < o->ndevices; i++)
                if (o->devices[i] == d) {
                    o->ndevices = 0;
                    kf_err(err, errlen, "GPU %ld is listed twice in '%s'", d, spec);
                    return -1;
                }
            o->devices[o->ndevices++] = (int)d;
        }
        if (*end == '\0')
            return 0;
        if (*end != ',')
            goto bad;
        p = end + 1;
    }
bad:
    o->ndevices = 0;
    kf_err(err, errlen, "expected 'all' or GPU indices 0..%d such as 0,2,3 or 0-3, got '%s'", KF_MAX_DEVICES - 1,
           spec);
    return -1;
}

/* NVRTC and the cache: 0; -1 NVRTC is not usable; -2 the cache directory is
 * unusable. */
static int setup_cache(const run_opts *o, rtc_cache *cache, char *err, size_t errlen)
{
    int maj, min;
    if (rtc_version(&maj, &min) != 0) {
        kf_err(err, errlen, "NVRTC is not usable");
        return -1;
    }
    return rtc_cache_init(cache, o->cache_dir, !o->no_cache, err, errlen) != 0 ? -2 : 0;
}

/* The compiler processes' nice increment beside GPU workers: when both
 * want the CPUs (a device's context made while 64 NVRTC processes start:
 * 6.7 s on the 4-H200 host, run A10; the workers' copies of inputs on
 * every CPU; the session's loop handing out cases), the GPUs' side goes
 * first; idle CPUs still compile. */
#define COMPILE_NICE 10

static int compiler_start(compiler *c, const run_opts *o, const char *arch, int jobs, const rtc_cache *cache,
                          bool beside_gpus, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->ropt.arch, sizeof c->ropt.arch, "%s", arch);
    c->ropt.lineinfo = o->lineinfo;
    c->ropt.nice = beside_gpus ? COMPILE_NICE : 0;
    if (jobs <= 0) {
        jobs = kf_usable_cpus();
    }
    c->jobs = jobs > 1024 ? 1024 : jobs;
    c->pool = rtc_pool_new(c->jobs, cache, &c->ropt, err, errlen);
    return c->pool ? 0 : -1;
}

static void compiler_free(compiler *c)
{
    rtc_pool_free(c->pool);
    src_free(&c->src);
    c->pool = NULL;
}

/* Whether n workers may each make the first case's input ahead: all of
 * them at once in at most a quarter of the host's memory. */
static bool ahead_fits(const kf_variant *v, const kf_shape *shape, int n)
{
    double bytes = variant_input_bytes(v, shape);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 && bytes * (n > 0 ? n : 1) <= (double)pages * (double)page / 4;
}

/* Whether the data of every shape (exact and realistic) fits in an eighth
 * of the host's memory, made once each in the shared region. */
static bool ahead_all_fit(const kf_variant *v, const kf_shape *shapes, int n)
{
    double bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += 2 * variant_input_bytes(v, &shapes[i]);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 && bytes <= (double)pages * (double)page / 8;
}

static int src_entry(compiler *cp, const rtc_cache *cache, const kf_variant *var, const char *src, bool ahead,
                     bool *added);

/* The output check's module (outcheck.h), which every GPU worker wants on
 * its first case: compiled once for the session, first of all on an idle
 * compiler process, into the cache the workers look in (bench_cache), with
 * the options of their own compile (bench_compile_for: the architecture
 * alone), rather than by each worker while its first case waits.  Not when
 * the pool's options differ (-lineinfo) or the cache is off. */
static void submit_outcheck(compiler *cp, const rtc_cache *cache)
{
    rtc_options opt;
    memset(&opt, 0, sizeof opt);
    snprintf(opt.arch, sizeof opt.arch, "%s", cp->ropt.arch);
    char path[PATH_MAX];
    const char *src = outcheck_source();
    if (cp->ropt.lineinfo || !cache->enabled || !src || rtc_cache_lookup(cache, src, &opt, path, sizeof path))
        return;
    rtc_pool_submit_ahead(cp->pool, TAG_OUTCHECK, src, "outcheck.cu");
}

/* The compiler processes a session of ncomps pools gets in all: -j, or the CPUs. */
static int session_jobs(const run_opts *o)
{
    int jobs = o->jobs;
    if (jobs <= 0) {
        jobs = kf_usable_cpus();
    }
    return jobs;
}

/* While the workers open their devices (most of a second each, two on 4
 * GPUs), the compiler pool starts on the first variants when the GPUs'
 * architecture is known without them (--arch, or worker_arch_guess): as
 * compiles ahead of need (run_session_ahead), which the measure promotes.
 * Nothing is said on failure: the usual start after the hellos follows and
 * says it in its order. */
static void early_compilers(run_session *s, const run_opts *o, const int *ords, int n)
{
    if (!o->early_v || o->nearly_v <= 0)
        return;
    char arch[16], err[KF_MSG_MAX];
    if (o->arch)
        snprintf(arch, sizeof arch, "%s", o->arch);
    else if (worker_arch_guess(ords, n, arch, sizeof arch) != 0)
        return;
    if (setup_cache(o, &s->cache, err, sizeof err) != 0)
        return;
    s->cache_ready = true;
    if (compiler_start(&s->comps[0], o, arch, session_jobs(o), &s->cache, true, err, sizeof err) != 0) {
        compiler_free(&s->comps[0]);
        return;
    }
    s->ncomps = 1;
    if (!o->arch)
        submit_outcheck(&s->comps[0], &s->cache);
    int k = 0;
    for (int i = 0; i < o->nearly_v; i++) {
        char *src = codegen_source(&o->early_v[i], err, sizeof err);
        if (!src)
            break;
        bool added = false;
        int e = src_entry(&s->comps[0], &s->cache, &o->early_v[i], src, true, &added);
        free(src);
        if (e < 0)
            break;
        k += added && !s->comps[0].src.v[e].cached;
    }
    kf_trace("compiler pool for %s started before the devices opened: %d compile%s queued", arch, k,
             k == 1 ? "" : "s");
}

/* Starts the GPU workers, every device opening at the same time (cuInit
 * and the context take most of a second per process on a machine of
 * several GPUs), each worker shown only its own GPU (worker.h: isolate):
 * the listed ordinals, or for "all" as many as worker_device_guess()
 * expects; the trailing ones of those that find no such device are dropped
 * (CUDA stops at the first CUDA_VISIBLE_DEVICES entry it cannot use).  When
 * nothing tells how many there are, the first worker sees every GPU and
 * counts them, and the others start after it.  Fills s->slots and
 * s->nslots, and ords[] with each slot's ordinal. */
static int start_workers(run_session *s, const run_opts *o, int *ords, char *err, size_t errlen)
{
    int n = 0, guess = 0;
    if (o->all_devices) {
        guess = worker_device_guess();
        n = guess > 0 ? guess : 1;
        for (int d = 0; d < n; d++)
            ords[d] = d;
    } else if (o->ndevices) {
        for (int i = 0; i < o->ndevices; i++)
            ords[n++] = o->devices[i];
    } else {
        ords[n++] = o->device;
    }
    if (n > KF_MAX_DEVICES)
        n = KF_MAX_DEVICES;
    s->slots = calloc(KF_MAX_DEVICES, sizeof *s->slots);
    if (!s->slots) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < KF_MAX_DEVICES; i++)
        s->slots[i].inflight = -1;
    bool counting = o->all_devices && guess <= 0; /* the first worker counts the devices */
    /* with shared data every shape's data is made ahead, once, each worker
     * making its share; else each worker makes the first case's */
    int nshare = datashare_on() && o->ahead_v && o->ahead_shapes ? o->nahead_shapes : 0;
    while (nshare > 0 && !ahead_all_fit(o->ahead_v, o->ahead_shapes, nshare))
        nshare--; /* the first ones that fit */
    bool share = nshare > 0;
    if (o->ahead_v && (share || ahead_fits(o->ahead_v, &o->ahead_shape, n)))
        worker_input_ahead(o->ahead_v, &o->ahead_shape, o->ahead_b);
    for (int i = 0; i < n; i++) {
        if (share)
            worker_input_ahead_shapes(o->ahead_shapes, nshare, i, n);
        if (!(s->slots[i].w = worker_spawn(ords[i], !(counting && i == 0), err, errlen))) {
            s->nslots = i;
            worker_input_ahead(NULL, NULL, NULL);
            return -1;
        }
        s->nslots = i + 1;
    }
    kf_trace("%d GPU worker%s started", n, n == 1 ? "" : "s");
    worker_input_ahead(NULL, NULL, NULL); /* not for workers started later */
    early_compilers(s, o, ords, n);
    bool missing[KF_MAX_DEVICES] = {false};
    char e0[KF_MSG_MAX] = "";
    if (!(s->slots[0].w = worker_hello(s->slots[0].w, &s->slots[0].dev, &missing[0], err, errlen)))
        return -1;
    /* counting: the first worker, which sees every GPU, says how many */
    int count = counting ? worker_device_count(s->slots[0].w) : 0;
    for (int i = n; i < count && i < KF_MAX_DEVICES; i++) {
        ords[i] = i;
        if (!(s->slots[i].w = worker_spawn(i, true, err, errlen)))
            return -1;
        s->nslots = i + 1;
    }
    n = s->nslots;
    int failed = -1;
    for (int i = 1; i < n; i++) {
        char e2[KF_MSG_MAX];
        if (!(s->slots[i].w = worker_hello(s->slots[i].w, &s->slots[i].dev, &missing[i], e2, sizeof e2)) &&
            failed < 0) {
            failed = i;
            snprintf(e0, sizeof e0, "%s", e2);
        }
    }
    /* "all" is the GPUs before the first one that does not exist, or that
     * is one already listed (CUDA stops at the first CUDA_VISIBLE_DEVICES
     * entry it cannot use); any other failure to open is an error */
    int cut = n;
    for (int i = 1; i < n && o->all_devices && cut == n; i++) {
        bool dup = false;
        for (int j = 0; j < i && s->slots[i].w && s->slots[i].dev.uuid[0]; j++)
            dup = dup || strcmp(s->slots[i].dev.uuid, s->slots[j].dev.uuid) == 0;
        if ((!s->slots[i].w && missing[i]) || dup)
            cut = i;
    }
    if (failed >= 0 && failed < cut) {
        kf_err(err, errlen, "%s", e0);
        return -1;
    }
    for (int i = cut; i < n; i++)
        if (s->slots[i].w) {
            worker_kill(s->slots[i].w);
            worker_free(s->slots[i].w);
            s->slots[i].w = NULL;
        }
    s->nslots = n = cut;
    kf_trace("every GPU worker has opened its device");
    return 0;
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
    /* the region the workers share their data in, and the cache of their
     * own compiles: before they are forked */
    datashare_open();
    bench_cache(o->cache_dir, !o->no_cache);
    s->shared = true;
    /* The GPU workers first: the parent must not have touched CUDA when it
     * forks, and it never does. */
    int ords[KF_MAX_DEVICES];
    int sw = start_workers(s, o, ords, err, errlen);
    s->o.ahead_v = NULL; /* the caller's, only for the start */
    s->o.ahead_b = NULL;
    s->o.ahead_shapes = NULL;
    if (sw != 0) {
        *nodev = true;
        goto fail;
    }
    int n = s->nslots;
    s->devs = calloc((size_t)n, sizeof *s->devs);
    if (!s->devs) {
        kf_err(err, errlen, "out of memory");
        goto fail;
    }
    s->nlive = n;
    int maj, min;
    bool have_nvrtc = rtc_version(&maj, &min) == 0;
    for (int i = 0; i < n; i++) {
        slot *sl = &s->slots[i];
        if (have_nvrtc) {
            sl->dev.nvrtc_major = maj;
            sl->dev.nvrtc_minor = min;
        }
        sl->dev.index = ords[i];
        s->devs[i] = sl->dev;
    }
    int sc = s->cache_ready ? 0 : setup_cache(o, &s->cache, err, errlen);
    if (sc != 0) {
        *nodev = sc != -2;
        goto fail;
    }
    /* one compiler pool per architecture, the compiler processes shared out
     * between them */
    char archs[KF_MAX_DEVICES][16];
    int ncomps = 0;
    for (int i = 0; i < n; i++) {
        char arch[16];
        if (o->arch)
            snprintf(arch, sizeof arch, "%s", o->arch);
        else
            snprintf(arch, sizeof arch, "sm_%d%d", s->slots[i].dev.cc_major, s->slots[i].dev.cc_minor);
        int c = 0;
        while (c < ncomps && strcmp(archs[c], arch) != 0)
            c++;
        if (c == ncomps)
            snprintf(archs[ncomps++], sizeof archs[0], "%s", arch);
        s->slots[i].comp = c;
    }
    if (s->ncomps == 1 && (ncomps != 1 || strcmp(archs[0], s->comps[0].ropt.arch) != 0)) {
        /* the early pool guessed another architecture: its cubins stay in
         * the cache, unused */
        kf_trace("the compiler pool started early is for %s, the GPUs are not: started again", s->comps[0].ropt.arch);
        compiler_free(&s->comps[0]);
        s->ncomps = 0;
    }
    if (s->ncomps == 0) {
        int per = (session_jobs(o) + ncomps - 1) / ncomps;
        for (int c = 0; c < ncomps; c++) {
            if (compiler_start(&s->comps[c], o, archs[c], per, &s->cache, true, err, errlen) != 0) {
                *nodev = true;
                goto fail;
            }
            s->ncomps = c + 1;
            if (!o->arch)
                submit_outcheck(&s->comps[c], &s->cache);
        }
    }
    *dev = s->slots[0].dev;
    kf_trace("compiler pools started: %d compile processes each", s->ncomps > 0 ? s->comps[0].jobs : 0);
    return s;
fail:
    run_session_free(s);
    return NULL;
}

void run_session_free(run_session *s)
{
    if (!s)
        return;
    kf_trace("session ends");
    /* told to go and not waited for: their context's teardown goes on
     * while kforge finishes (worker_release) */
    int exiting = 0;
    for (int i = 0; i < s->nslots; i++)
        worker_quit(s->slots[i].w);
    for (int i = 0; i < s->nslots; i++)
        exiting += worker_release(s->slots[i].w);
    kf_trace("GPU workers gone (%d still exiting, not waited for)", exiting);
    for (int c = 0; c < s->ncomps; c++)
        compiler_free(&s->comps[c]);
    if (s->shared)
        datashare_close();
    free(s->slots);
    free(s->devs);
    free(s);
}

const kf_device *run_session_devices(const run_session *s, int *n)
{
    *n = s->nslots;
    return s->devs;
}

void run_session_note(run_session *s, const char *note)
{
    snprintf(s->note, sizeof s->note, "%s", note ? note : "");
}

void run_session_set_deadline(run_session *s, double t) { s->deadline = t; }

int run_session_jobs(const run_session *s)
{
    int n = 0;
    for (int c = 0; c < s->ncomps; c++)
        n += s->comps[c].jobs;
    return n;
}

void run_session_counts(const run_session *s, int *compiled, int *cached)
{
    *compiled = s->ncompiled;
    *cached = s->ncached;
}

// ---------------------------------------------------------------------------
// Sources

static void say_compile_failure(const vstate *v, const char *arch, bool name_arch)
{
    fprintf(stderr, "kforge: %s failed to compile%s%s:\n%s\n", v->label, name_arch ? " for " : "",
            name_arch ? arch : "", v->log ? v->log : "(no log)");
}

/* The entry of src (a source of variant var) in cp's table, made if new
 * (*added): its label set, and found in the cache or submitted to the pool
 * (ahead: to idle workers only, and marked so).  -1 when out of memory. */
static int src_entry(compiler *cp, const rtc_cache *cache, const kf_variant *var, const char *src, bool ahead,
                     bool *added)
{
    char key[33];
    rtc_cache_key(src, &cp->ropt, key);
    int e = src_add(&cp->src, key, added);
    if (e < 0 || !*added)
        return e;
    vstate *v = &cp->src.v[e];
    variant_label(var, v->label, sizeof v->label);
    v->ahead = ahead;
    if (rtc_cache_lookup(cache, src, &cp->ropt, v->path, sizeof v->path)) {
        v->state = VS_READY;
        v->cached = true;
    } else {
        v->state = VS_COMPILING;
        (ahead ? rtc_pool_submit_ahead : rtc_pool_submit)(cp->pool, e, src, "kforge_kernel.cu");
    }
    return e;
}

/* Source, cache lookup or submission for every variant and every compiler;
 * src_of[c * stride + i] is variant i's entry in compiler c's table. */
static int prepare_variants(compiler *comps, int ncomps, const rtc_cache *cache, const kf_variant *variants,
                            int stride, int from, int to, int *src_of, int *ncached, char *err, size_t errlen)
{
    for (int i = from; i < to; i++) {
        if ((i & 255) == 0 && kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            return -1;
        }
        char *src = codegen_source(&variants[i], err, errlen);
        if (!src)
            return -1;
        for (int c = 0; c < ncomps; c++) {
            compiler *cp = &comps[c];
            bool added = false;
            int e = src_entry(cp, cache, &variants[i], src, false, &added);
            if (e < 0) {
                free(src);
                kf_err(err, errlen, "out of memory");
                return -1;
            }
            vstate *v = &cp->src.v[e];
            if (added) {
                if (v->cached)
                    (*ncached)++;
            } else if (v->ahead) {
                /* compiled ahead: needed now */
                v->ahead = false;
                if (v->state == VS_COMPILING)
                    rtc_pool_promote(cp->pool, e);
                else if (v->state == VS_FAILED)
                    say_compile_failure(v, cp->ropt.arch, ncomps > 1);
                if (v->cached)
                    (*ncached)++;
            }
            src_of[(size_t)c * (size_t)stride + (size_t)i] = e;
        }
        free(src);
    }
    return 0;
}

int run_session_ahead(run_session *s, const kf_variant *variants, int nvariants, char *err, size_t errlen)
{
    int n = 0;
    for (int i = 0; i < nvariants; i++) {
        char *src = codegen_source(&variants[i], err, errlen);
        if (!src)
            return -1;
        for (int c = 0; c < s->ncomps; c++) {
            compiler *cp = &s->comps[c];
            bool added = false;
            int e = src_entry(cp, &s->cache, &variants[i], src, true, &added);
            if (e < 0) {
                free(src);
                kf_err(err, errlen, "out of memory");
                return -1;
            }
            if (added && !cp->src.v[e].cached)
                n++; /* else asked for, or ahead, already; or in the cache */
        }
        free(src);
    }
    return n;
}

static void compile_done(const rtc_done *d, srctab *t, const char *arch, bool name_arch)
{
    if (d->tag == TAG_OUTCHECK)
        kf_trace("output check %s in the pool for %s (%.0f ms)", d->ok ? "compiled" : "did not compile", arch, d->ms);
    if (d->tag < 0 || d->tag >= t->n) {
        free(d->log);
        free(d->cubin);
        free(d->names);
        free(d->store_err);
        return;
    }
    vstate *v = &t->v[d->tag];
    v->ms = d->ms;
    static bool said; /* the start's critical path: the first cubin */
    if (!said && d->ok)
        kf_trace("first cubin compiled (%.0f ms in its compiler process)", d->ms);
    said = said || d->ok;
    if (d->store_err) {
        /* once: every cubin after it is likely not stored either */
        static bool warned;
        if (!warned)
            fprintf(stderr, "kforge: warning: the cubin cache could not store a cubin (%s); cubins it cannot store "
                            "are used from memory, and compiled again next time\n", d->store_err);
        warned = true;
        free(d->store_err);
    }
    if (d->ok) {
        v->state = VS_READY;
        snprintf(v->path, sizeof v->path, "%s", d->cubin_path);
        v->cubin = d->cubin;
        v->cubin_len = d->cubin_len;
        v->names = d->names;
        free(d->log);
    } else {
        free(d->cubin);
        free(d->names);
        v->state = VS_FAILED;
        free(v->log);
        v->log = d->log;
        if (!v->ahead) /* else said when a measure asks for it, if one does */
            say_compile_failure(v, arch, name_arch);
    }
}

static void fill_compile_facts(kf_result *r, const vstate *owner)
{
    r->cached = owner->cached;
    r->compile_ms = owner->cached ? 0 : owner->ms;
    /* which source and headers it ran (family.h; r->v is set) */
    const char *h = family_of(&r->v)->source_hash;
    snprintf(r->source_hash, sizeof r->source_hash, "%s", h ? h : "");
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

// ---------------------------------------------------------------------------
// Measuring

static int pending_compiles(const run_session *s)
{
    int n = 0;
    for (int c = 0; c < s->ncomps; c++)
        n += rtc_pool_pending(s->comps[c].pool);
    return n;
}

static void progress(const run_session *s, int done, int failed, int total, double t0)
{
    if (!s->o.progress)
        return;
    char gpus[32] = "", left[32] = "";
    if (s->nslots > 1)
        snprintf(gpus, sizeof gpus, " | %d GPUs", s->nlive);
    double el = kf_now() - t0;
    if (done > 0 && done < total)
        snprintf(left, sizeof left, ", ~%.0fs left", el / done * (total - done));
    fprintf(stderr, "\r\033[K[%d/%d measured | %d failed | %d compiling%s%s%s | %.0fs%s]", done, total, failed,
            pending_compiles(s), gpus, s->note[0] ? " | " : "", s->note, el, left);
    fflush(stderr);
}

static void clear_progress(const run_session *s)
{
    if (s->o.progress) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}

/* A result of slot's device, for case c. */
static void stamp(const slot *sl, kf_result *r, const kf_variant *v, const kf_case *c, const kf_bench *b)
{
    r->v = *v;          /* the name and grid as the caller knows them */
    r->shape = c->shape;
    r->bench = *b;
    r->device = sl->dev.index;
    snprintf(r->device_name, sizeof r->device_name, "%s", sl->dev.name);
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", sl->dev.uuid);
}

/* Variants prepared at a time between looks at the workers (~3 ms). */
enum { PREPARE_CHUNK = 16 };

/* The state of one run_session_measure call. */
typedef struct {
    run_session *s;
    const kf_variant *variants;
    int nvariants;
    const kf_case *cases;
    int ncases;
    const kf_bench *b;
    run_case_fn fn;
    void *ctx;
    run_more_fn more;       /* a stream (run_session_stream), or NULL */
    bool more_over;         /* more said it has no more */
    double compile_s;       /* a stream's running means: a compile, and a case on a GPU (0: none yet) */
    double case_s;
    int vcap, ccap;         /* the arrays' capacities: src_of's stride, taken's size */
    int *src_of;
    int prepared;           /* variants [0, prepared) have sources and cache lookups (src_of) */
    int head;               /* first case in order not handed out yet */
    unsigned char *taken;   /* taken[i]: case i was handed out (cases after head may be) */
    bool in_order;          /* KFORGE_IN_ORDER: a case waits for every case before it */
    int *retry;             /* cases a dropped device lost, handed out first */
    int nretry;
    int done, failed;
    bool redraw;            /* the progress line was cleared for a message */
    bool stopping;          /* fn asked to stop */
    bool sent_any;
    /* --abandon-above: the fastest verified median per shape so far */
    kf_shape *best_shape;
    double *best_ms;
    int nbest;
    /* data affinity (several GPUs; aff_start): the cases grouped by the
     * data they read (NULL grp: off) */
    struct aff_group *grp;
    int ngrp;
    int *grp_of;            /* each case's group */
    int *ord;               /* the case indices, group by group, each group's in order */
    kf_index grp_index;     /* group by key */
    double all_ms;          /* the wall times of every case so far, and their count */
    int all_n;
} measure;

/* The fastest verified median at shape s so far in this measure (0: none). */
static double *best_at(measure *m, const kf_shape *s, bool add)
{
    for (int i = 0; i < m->nbest; i++)
        if (shape_eq(&m->best_shape[i], s))
            return &m->best_ms[i];
    if (!add || !m->best_shape || !m->best_ms || m->nbest >= m->ccap)
        return NULL;
    m->best_shape[m->nbest] = *s;
    m->best_ms[m->nbest] = 0;
    return &m->best_ms[m->nbest++];
}

/* A case's abandon threshold when it is sent (kf_case.abandon_ms, abandon_k). */
static double abandon_ms(measure *m, const kf_case *c)
{
    double at = c->abandon_ms;
    double *best = c->abandon_k > 0 ? best_at(m, &c->shape, false) : NULL;
    if (best && *best > 0 && (at <= 0 || c->abandon_k * *best < at))
        at = c->abandon_k * *best;
    return at;
}

static const vstate *owner_of(const measure *m, const slot *sl, int ci)
{
    const compiler *cp = &m->s->comps[sl->comp];
    return &cp->src.v[m->src_of[(size_t)sl->comp * (size_t)m->vcap + (size_t)m->cases[ci].variant]];
}

// ----------------------------------------------------------------------------
// Data affinity.  With several GPUs a case goes preferably to a worker
// that holds its data on its device already.  Without it every worker set
// up every size's inputs (on 4 H200s 3.4-3.7 s of each GPU's 17 s search,
// most of it the 2^30 input's 4 GiB), where each size's data needs to be on
// one device, or on as many as its share of the work needs.  A free worker
// takes the first case in order among those whose data it holds or no
// worker holds (readiness as in next_case: without a deadline it waits for
// that case's compile); when none is left it takes a share of the data
// whose cases left are the most work per worker that would then hold it,
// if that share is more than setting the data up costs (the longest case
// of that data so far), else it waits.  The data are the exact data's keys
// (data.h: the variant's key axes, the shape, the seed).

typedef struct aff_group {
    uint64_t key;           /* data_key_hash of its cases' exact data */
    int first, end;         /* its cases: ord[first .. end), in order */
    int cur;                /* ord[first .. cur) are handed out */
    int left;               /* its cases not handed out */
    uint64_t holders;       /* bit i: slots[i]'s worker holds the data */
    double sum_ms, max_ms;  /* the wall times of its cases so far, sent to result */
    int nms;
} aff_group;

static uint64_t case_key(const measure *m, int ci)
{
    data_key k;
    data_key_of(&k, &m->variants[m->cases[ci].variant], &m->cases[ci].shape, m->b->seed, true);
    return data_key_hash(&k);
}

static bool aff_key_eq(const void *ctx, size_t item, const void *key)
{
    return ((const aff_group *)ctx)[item].key == *(const uint64_t *)key;
}

static int aff_find(const measure *m, uint64_t key)
{
    return m->grp ? (int)kf_index_find(&m->grp_index, key, aff_key_eq, m->grp, &key) : -1;
}

static void aff_free(measure *m)
{
    free(m->grp);
    free(m->grp_of);
    free(m->ord);
    kf_index_free(&m->grp_index);
    m->grp = NULL;
    m->grp_of = m->ord = NULL;
    m->ngrp = 0;
}

/* Groups the cases by their data, when several GPUs measure cases of more
 * than one (KFORGE_DATA_AFFINITY=0: never); else m->grp stays NULL. */
static void aff_start(measure *m)
{
    const run_session *s = m->s;
    const char *e = getenv("KFORGE_DATA_AFFINITY");
    if (s->nslots < 2 || m->ncases < 2 || (e && strcmp(e, "0") == 0))
        return;
    size_t n = (size_t)m->ncases;
    m->grp = malloc(sizeof *m->grp * n);
    m->grp_of = malloc(sizeof *m->grp_of * n);
    m->ord = malloc(sizeof *m->ord * n);
    if (!m->grp || !m->grp_of || !m->ord) {
        aff_free(m);
        return;
    }
    for (int ci = 0; ci < m->ncases; ci++) {
        uint64_t key = case_key(m, ci);
        int g = aff_find(m, key);
        if (g < 0) {
            g = m->ngrp++;
            m->grp[g] = (aff_group){.key = key};
            if (kf_index_add(&m->grp_index, key, (size_t)g) != 0) {
                aff_free(m);
                return;
            }
        }
        m->grp_of[ci] = g;
        m->grp[g].left++;
    }
    if (m->ngrp < 2) {
        aff_free(m);
        return;
    }
    for (int g = 0, at = 0; g < m->ngrp; g++) {
        m->grp[g].first = m->grp[g].cur = at;
        at += m->grp[g].left;
        m->grp[g].end = at;
    }
    for (int ci = 0; ci < m->ncases; ci++)
        m->ord[m->grp[m->grp_of[ci]].cur++] = ci;
    for (int g = 0; g < m->ngrp; g++)
        m->grp[g].cur = m->grp[g].first;
    for (int i = 0; i < s->nslots; i++)
        for (int k = 0; k < s->slots[i].naff; k++) {
            int g = aff_find(m, s->slots[i].aff_key[k]);
            if (g >= 0)
                m->grp[g].holders |= (uint64_t)1 << i;
        }
}

/* Case ci was handed out. */
static void aff_taken(measure *m, int ci)
{
    if (!m->grp)
        return;
    aff_group *G = &m->grp[m->grp_of[ci]];
    G->left--;
    while (G->cur < G->end && m->taken[m->ord[G->cur]])
        G->cur++;
}

/* Case ci was sent to sl's worker: it holds ci's data now. */
static void aff_sent(measure *m, slot *sl, int ci)
{
    run_session *s = m->s;
    if (s->nslots < 2)
        return;
    int me = (int)(sl - s->slots);
    uint64_t key = m->grp ? m->grp[m->grp_of[ci]].key : case_key(m, ci);
    int k = 0;
    while (k < sl->naff && sl->aff_key[k] != key)
        k++;
    if (k == sl->naff && sl->naff == AFF_KEEP) { /* the least recently sent is taken as given up */
        int g = aff_find(m, sl->aff_key[0]);
        if (g >= 0)
            m->grp[g].holders &= ~((uint64_t)1 << me);
        k = 0;
    } else if (k == sl->naff) {
        sl->naff++;
    }
    memmove(sl->aff_key + k, sl->aff_key + k + 1, sizeof *sl->aff_key * (size_t)(sl->naff - 1 - k));
    sl->aff_key[sl->naff - 1] = key;
    if (m->grp)
        m->grp[m->grp_of[ci]].holders |= (uint64_t)1 << me;
}

/* sl's worker is gone (restarted or dropped): it holds nothing. */
static void aff_forget(measure *m, slot *sl)
{
    int me = (int)(sl - m->s->slots);
    for (int g = 0; g < m->ngrp; g++)
        m->grp[g].holders &= ~((uint64_t)1 << me);
    sl->naff = 0;
}

/* Case ci took ms from sent to result. */
static void aff_timed(measure *m, int ci, double ms)
{
    m->all_ms += ms;
    m->all_n++;
    if (!m->grp)
        return;
    aff_group *G = &m->grp[m->grp_of[ci]];
    G->sum_ms += ms;
    G->nms++;
    if (ms > G->max_ms)
        G->max_ms = ms;
}

static bool case_ready(const measure *m, const slot *sl, int ci)
{
    if (m->cases[ci].variant >= m->prepared)
        return false;
    const vstate *ow = owner_of(m, sl, ci);
    return ow->state == VS_READY || ow->state == VS_FAILED;
}

/* The case of group G that sl may take now: in order, the first not
 * handed out if its cubin is ready; else the first ready; or -1. */
static int aff_first(const measure *m, const slot *sl, const aff_group *G, bool in_order)
{
    for (int j = G->cur; j < G->end; j++) {
        int ci = m->ord[j];
        if (m->taken[ci])
            continue;
        if (case_ready(m, sl, ci))
            return ci;
        if (in_order)
            break;
    }
    return -1;
}

static int nbits(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* next_case with data affinity (above). */
static int aff_next(const measure *m, const slot *sl, bool in_order)
{
    const run_session *s = m->s;
    uint64_t me = (uint64_t)1 << (sl - s->slots), live = 0;
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].w)
            live |= (uint64_t)1 << i;
    int best = -1, nown = 0;
    for (int g = 0; g < m->ngrp; g++) {
        const aff_group *G = &m->grp[g];
        if (!G->left || (!(G->holders & me) && (G->holders & live)))
            continue;
        nown++;
        int ci = in_order ? m->ord[G->cur] : aff_first(m, sl, G, false);
        if (ci >= 0 && (best < 0 || ci < best))
            best = ci;
    }
    if (nown > 0)
        return best >= 0 && (!in_order || case_ready(m, sl, best)) ? best : -1;
    double mean = m->all_n ? m->all_ms / m->all_n : 0, most = 0;
    const aff_group *pick = NULL;
    for (int g = 0; g < m->ngrp; g++) {
        const aff_group *G = &m->grp[g];
        if (!G->left)
            continue;
        double share = G->left * (G->nms ? G->sum_ms / G->nms : mean) / (nbits(G->holders & live) + 1);
        if (share > G->max_ms && share > most) {
            most = share;
            pick = G;
        }
    }
    return pick ? aff_first(m, sl, pick, in_order) : -1;
}

/* Passes a result to fn (once stopping, fn's answer no longer matters).
 * fn may print (a failure, a warning): the progress line is cleared first
 * and drawn again after. */
static void deliver(measure *m, const kf_result *r, int ci)
{
    if (m->s->o.progress) {
        clear_progress(m->s);
        m->redraw = true;
    }
    m->done++;
    m->failed += r->status != KF_ST_OK;
    double *best = r->status == KF_ST_OK && r->stats.median_ms > 0 ? best_at(m, &r->shape, true) : NULL;
    if (best && (*best == 0 || r->stats.median_ms < *best))
        *best = r->stats.median_ms;
    if (m->fn(r, ci, m->ctx) && !m->stopping)
        m->stopping = true;
}

static void release_held(measure *m, slot *sl)
{
    for (int i = 0; i < sl->nheld; i++)
        deliver(m, &sl->held[i], sl->held_case[i]);
    sl->nheld = 0;
}

/* The device of sl is dropped: its lost cases go to the others. */
static void drop_device(measure *m, slot *sl, const char *why)
{
    run_session *s = m->s;
    clear_progress(s);
    char others[32] = "the other GPU";
    if (s->nlive > 2)
        snprintf(others, sizeof others, "the other %d GPUs", s->nlive - 1);
    fprintf(stderr, "kforge: GPU %d (%s%s%s): %s; dropping it: its cases go to %s\n", sl->dev.index, sl->dev.name,
            sl->dev.uuid[0] ? ", " : "", sl->dev.uuid, why, others);
    for (int i = 0; i < sl->nheld; i++)
        m->retry[m->nretry++] = sl->held_case[i];
    sl->nheld = 0;
    if (sl->w)
        worker_free(sl->w);
    sl->w = NULL;
    aff_forget(m, sl);
    s->nlive--;
}

/* sl's worker is gone: a new one, or the device is dropped.  -1 when the
 * last device cannot go on (message in err). */
static int restart(measure *m, slot *sl, char *err, size_t errlen)
{
    aff_forget(m, sl);
    worker_free(sl->w);
    sl->w = NULL;
    kf_device d;
    char e2[KF_MSG_MAX];
    sl->w = worker_start(sl->dev.index, true, &d, e2, sizeof e2);
    if (sl->w)
        return 0;
    if (m->s->nlive > 1) {
        char why[KF_MSG_MAX + 64];
        snprintf(why, sizeof why, "its worker cannot be restarted (%s)", e2);
        drop_device(m, sl, why);
        return 0;
    }
    release_held(m, sl);
    kf_err(err, errlen, "%s", e2);
    return -1;
}

/* The case in flight on sl ended with r; wr as worker_recv, or 1 for the
 * watchdog.  -1 on an internal error (message in err). */
static void running_mean(double *mean, double x) { *mean = *mean > 0 ? 0.8 * *mean + 0.2 * x : x; }

static int finished(measure *m, slot *sl, kf_result *r, int wr, char *err, size_t errlen)
{
    run_session *s = m->s;
    int ci = sl->inflight;
    sl->inflight = -1;
    double took = kf_now() - sl->t_sent;
    running_mean(&m->case_s, took);
    aff_timed(m, ci, 1e3 * took);
    if (wr == -2 && s->nlive > 1) {
        /* Died without a word: the kernel or the device?  Held until the
         * device measures a case, or dropped on the third in a row. */
        sl->held[sl->nheld] = *r;
        sl->held_case[sl->nheld++] = ci;
        if (sl->nheld == STRIKES) {
            char why[96];
            snprintf(why, sizeof why, "its worker died on %d cases in a row", STRIKES);
            drop_device(m, sl, why);
            return 0;
        }
        return restart(m, sl, err, errlen);
    }
    release_held(m, sl);
    deliver(m, r, ci);
    if (wr != 0)
        return restart(m, sl, err, errlen);
    return 0;
}

/* The case sl may take now: the first lost case, else the first in order
 * not handed out whose cubin is ready (or failed to compile), so that a
 * slow compile holds up only its own cases; -1: none is ready.  Only under
 * a deadline (tune --time, whose extent depends on time anyway): otherwise
 * each case waits for the ones before it, so that on one GPU the abandon
 * thresholds (the best so far when a case starts), and so the results, do
 * not depend on the order compiles finish in. */
static int next_case(const measure *m, const slot *sl)
{
    if (m->nretry > 0)
        return m->retry[0];     /* sent before: its cubin is ready */
    bool in_order = m->in_order || !(m->s->deadline > 0);
    if (m->grp && m->s->nlive > 1)
        return aff_next(m, sl, in_order);
    for (int ci = m->head; ci < m->ncases; ci++) {
        if (m->taken[ci])
            continue;
        if (m->cases[ci].variant < m->prepared) {
            const vstate *ow = owner_of(m, sl, ci);
            if (ow->state == VS_READY || ow->state == VS_FAILED)
                return ci;
        }
        if (in_order)
            break;
    }
    return -1;
}

/* Hands out cases to idle devices, each the first whose cubin is ready. */
static int dispatch(measure *m, char *err, size_t errlen)
{
    run_session *s = m->s;
    for (int i = 0; i < s->nslots && !m->stopping; i++) {
        slot *sl = &s->slots[i];
        while (sl->w && sl->inflight < 0 && !m->stopping && (m->nretry > 0 || m->head < m->ncases)) {
            int ci = next_case(m, sl);
            if (ci < 0)
                break;
            const kf_case *c = &m->cases[ci];
            const vstate *ow = owner_of(m, sl, ci);
            if (m->nretry > 0) {
                memmove(m->retry, m->retry + 1, sizeof *m->retry * (size_t)--m->nretry);
            } else {
                m->taken[ci] = 1;
                while (m->head < m->ncases && m->taken[m->head])
                    m->head++;
                aff_taken(m, ci);
            }
            if (ow->state == VS_FAILED) {
                kf_result r;
                compile_failure_result(&r, &m->variants[c->variant], &c->shape, ow);
                r.bench = *m->b;
                if (s->nslots > 1)
                    stamp(sl, &r, &m->variants[c->variant], c, m->b);
                deliver(m, &r, ci);
                continue;
            }
            int inject = worker_injection(++s->sent);
            if (!inject && worker_device_dead(sl->dev.index))
                inject = 1;
            kf_bench cb = *m->b;
            cb.abandon_ms = abandon_ms(m, c);
            cb.race = c->abandon_k > 0;
            cb.race_ms = cb.race && cb.abandon_ms > 0 ? cb.abandon_ms / c->abandon_k : 0;
            if (worker_send(sl->w, &m->variants[c->variant], &c->shape, &cb, ow->path, ow->cubin, ow->cubin_len,
                            ow->names, inject) != 0) {
                /* the worker died between cases: the case never ran; it
                 * goes first again, to a new worker or another device */
                memmove(m->retry + 1, m->retry, sizeof *m->retry * (size_t)m->nretry++);
                m->retry[0] = ci;
                if (restart(m, sl, err, errlen) != 0)
                    return -1;
                continue;
            }
            if (m->grp && kf_trace_on()) {
                const aff_group *G = &m->grp[m->grp_of[ci]];
                uint64_t me = (uint64_t)1 << i;
                if (!(G->holders & me))
                    kf_trace("GPU %d takes the data of key %016llx (%s; %d of its cases left)", sl->dev.index,
                             (unsigned long long)G->key, G->holders ? "held by another GPU too" : "held by none",
                             G->left);
            }
            aff_sent(m, sl, ci);
            sl->inflight = ci;
            sl->t_sent = kf_now();
            if (!m->sent_any)
                kf_trace("first case sent (GPU %d)", sl->dev.index);
            m->sent_any = true;
        }
    }
    return 0;
}

/* Abandons the cases in flight: their workers are killed (and restarted or
 * reaped later). */
static void kill_inflight(run_session *s)
{
    for (int i = 0; i < s->nslots; i++)
        if (s->slots[i].inflight >= 0) {
            worker_kill(s->slots[i].w);
            s->slots[i].inflight = -1;
        }
}

static int inflight_count(const run_session *s)
{
    int n = 0;
    for (int i = 0; i < s->nslots; i++)
        n += s->slots[i].inflight >= 0;
    return n;
}

/* How many more variants a stream should add now.  The variants open (a
 * case not handed to a GPU yet: compiling, or ready and waiting) should be
 * as many as keep the GPUs fed while the next ones compile: one per device,
 * and one more per device for each GPU time of a variant (its cases) that a
 * compile takes (running means); every compiler process while either is
 * unknown.  Fewer open means each is chosen knowing more; never more than
 * the idle compiler processes. */
static int stream_room(const measure *m)
{
    const run_session *s = m->s;
    int idle = 0, jobs = 0;
    for (int c = 0; c < s->ncomps; c++) {
        int busy = rtc_pool_pending(s->comps[c].pool);
        idle += s->comps[c].jobs > busy ? s->comps[c].jobs - busy : 0;
        jobs += s->comps[c].jobs;
    }
    int per = s->ncomps > 0 ? s->ncomps : 1; /* a variant is a compile in each pool */
    idle /= per;
    jobs /= per;
    int target = jobs + s->nlive;
    double per_variant = m->case_s * (m->nvariants > 0 ? (double)m->ncases / m->nvariants : 1);
    if (m->compile_s > 0 && per_variant > 0) {
        double t = s->nlive * (1 + ceil(m->compile_s / per_variant));
        if (t < target)
            target = (int)t;
    }
    int open = 0;
    for (int v = m->nvariants - 1, ci = m->ncases - 1; ci >= m->head; ci--)
        if (!m->taken[ci] && m->cases[ci].variant <= v) {
            open++; /* cases of a variant are contiguous: count each variant once */
            v = m->cases[ci].variant - 1;
        }
    int room = target - open < idle ? target - open : idle;
    return room > 0 ? room : 0;
}

/* Asks the stream for more while it has room, each lot prepared at once
 * (submitted to the pool, or found in the cache) so that the room is
 * measured again with it: how many variants were added, or -1 (err). */
static int stream_more(measure *m, char *err, size_t errlen)
{
    run_session *s = m->s;
    int before = m->nvariants;
    while (m->more && !m->more_over && !m->stopping) {
        int room = stream_room(m);
        if (m->head >= m->ncases && m->nretry == 0 && inflight_count(s) == 0 && room < 1)
            room = 1; /* nothing left at all: ask anyway, or the measure would end */
        if (room > m->vcap - m->nvariants)
            room = m->vcap - m->nvariants;
        if (room < 1) {
            if (m->nvariants >= m->vcap)
                m->more_over = true;
            break;
        }
        int nv = m->nvariants, nc = m->ncases;
        int k = m->more(room, &nv, &nc, m->ctx);
        if (k < 0 || nv < m->nvariants || nv > m->vcap || nc < m->ncases || nc > m->ccap) {
            m->more_over = true; /* no more (or the caller's bug: keep what was there) */
            break;
        }
        if (nv == m->nvariants && nc == m->ncases)
            break;
        kf_trace("stream: %d more variant%s (%d case%s)", nv - m->nvariants, nv - m->nvariants == 1 ? "" : "s",
                 nc - m->ncases, nc - m->ncases == 1 ? "" : "s");
        m->nvariants = nv;
        m->ncases = nc;
        if (prepare_variants(s->comps, s->ncomps, &s->cache, m->variants, m->vcap, m->prepared, nv, m->src_of,
                             &s->ncached, err, errlen) != 0)
            return -1;
        m->prepared = nv;
    }
    return m->nvariants - before;
}

static int measure_loop(run_session *s, const kf_variant *variants, int nvariants0, int vcap, const kf_case *cases,
                        int ncases0, int ccap, const kf_bench *b, run_case_fn fn, run_more_fn more_fn, void *ctx,
                        char *err, size_t errlen)
{
    int rc = 0;
    measure m = {.s = s, .variants = variants, .nvariants = nvariants0, .cases = cases, .ncases = ncases0, .b = b,
                 .fn = fn, .ctx = ctx, .more = more_fn, .vcap = vcap, .ccap = ccap};
    size_t nfds = (size_t)s->nslots + 1;
    for (int c = 0; c < s->ncomps; c++)
        nfds += (size_t)s->comps[c].jobs + 1;
    m.src_of = malloc(sizeof *m.src_of * (size_t)(vcap > 0 ? vcap : 1) * (size_t)s->ncomps);
    m.retry = malloc(sizeof *m.retry * (size_t)(s->nslots * (STRIKES + 1) + 1));
    m.best_shape = malloc(sizeof *m.best_shape * (size_t)(ccap > 0 ? ccap : 1));
    m.best_ms = malloc(sizeof *m.best_ms * (size_t)(ccap > 0 ? ccap : 1));
    m.taken = calloc((size_t)(ccap > 0 ? ccap : 1), 1);
    const char *io = getenv("KFORGE_IN_ORDER");
    m.in_order = io && *io && strcmp(io, "0") != 0;
    struct pollfd *fds = malloc(sizeof *fds * nfds);
    int *slot_fd = malloc(sizeof *slot_fd * (size_t)s->nslots);
    if (!m.src_of || !m.retry || !m.taken || !fds || !slot_fd) {
        kf_err(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }
    aff_start(&m);


    double t0 = kf_now(), last_progress = 0;
    kf_result r;
    for (;;) {
        if (kf_interrupted || kf_output_broken) {
            kill_inflight(s);
            rc = -1;
            kf_err(err, errlen, "interrupted");
            break;
        }
        if (s->deadline > 0 && !m.stopping && kf_now() >= s->deadline)
            m.stopping = true; /* out of time: what is in flight finishes, compiles are left */
        if (dispatch(&m, err, errlen) != 0) {
            rc = -1;
            break;
        }
        int added, dr = 0;
        while ((added = stream_more(&m, err, errlen)) > 0 && (dr = dispatch(&m, err, errlen)) == 0)
            ; /* what the stream adds goes out at once, and the room is measured again */
        if (added < 0 || dr != 0) {
            if (added < 0 && kf_interrupted)
                continue; /* the top of the loop ends the cases in flight */
            kill_inflight(s);
            rc = -1;
            break;
        }
        int nvariants = m.nvariants, ncases = m.ncases;
        bool more = !m.stopping && (m.head < ncases || m.nretry > 0);
        if (!more && inflight_count(s) == 0)
            break;
        /* Sources and cache lookups a few variants at a time, between
         * results: the first cases start at once rather than after all of
         * them (860 variants: 0.15 s). */
        bool preparing = more && m.prepared < nvariants;
        if (preparing) {
            int to = m.prepared + PREPARE_CHUNK < nvariants ? m.prepared + PREPARE_CHUNK : nvariants;
            if (prepare_variants(s->comps, s->ncomps, &s->cache, variants, vcap, m.prepared, to, m.src_of,
                                 &s->ncached, err, errlen) != 0) {
                if (kf_interrupted)
                    continue; /* the top of the loop ends the cases in flight */
                kill_inflight(s); /* cases may be on the GPUs already */
                rc = -1;
                break;
            }
            m.prepared = to;
            if (to == nvariants)
                kf_trace("%d variant%s prepared (sources, cache)", nvariants, nvariants == 1 ? "" : "s");
            if (dispatch(&m, err, errlen) != 0) {
                rc = -1;
                break;
            }
        }

        int nf = 0, comp_end[KF_MAX_DEVICES];
        for (int c = 0; c < s->ncomps; c++) {
            nf += rtc_pool_pollfds(s->comps[c].pool, fds + nf, s->comps[c].jobs + 1);
            comp_end[c] = nf;
        }
        int timeout = -1;
        for (int i = 0; i < s->nslots; i++) {
            slot *sl = &s->slots[i];
            slot_fd[i] = -1;
            if (sl->inflight < 0)
                continue;
            slot_fd[i] = nf;
            fds[nf++] = (struct pollfd){.fd = worker_fd(sl->w), .events = POLLIN};
            if (b->timeout_s > 0) {
                double left = b->timeout_s - (kf_now() - sl->t_sent);
                int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
                if (timeout < 0 || ms < timeout)
                    timeout = ms;
            }
        }
        if (s->o.progress && (timeout < 0 || timeout > 250))
            timeout = 250;
        if (s->deadline > 0 && !m.stopping) {
            double left = s->deadline - kf_now();
            int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
            if (timeout < 0 || ms < timeout)
                timeout = ms;
        }
        for (int c = 0; c < s->ncomps; c++) { /* the compiler pool's ramp opens by time too */
            int wake = rtc_pool_wake_ms(s->comps[c].pool);
            if (wake >= 0 && (timeout < 0 || wake < timeout))
                timeout = wake;
        }
        if (preparing && m.prepared < nvariants)
            timeout = 0; /* more to prepare: look at results, then go on */
        int pr = poll(fds, (nfds_t)nf, timeout);
        if (pr < 0 && errno != EINTR) {
            kf_err(err, errlen, "poll: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (pr > 0)
            for (int c = 0, from = 0; c < s->ncomps; from = comp_end[c], c++) {
                rtc_done dd[16];
                int k = rtc_pool_collect(s->comps[c].pool, fds + from, comp_end[c] - from, dd, 16);
                if (k > 0 && s->o.progress) { /* a failed compile prints its log */
                    clear_progress(s);
                    m.redraw = true;
                }
                for (int i = 0; i < k; i++) {
                    if (dd[i].tag >= 0 && dd[i].ok)
                        running_mean(&m.compile_s, dd[i].ms / 1e3);
                    compile_done(&dd[i], &s->comps[c].src, s->comps[c].ropt.arch, s->ncomps > 1);
                    s->ncompiled += dd[i].tag >= 0; /* a variant's */
                }
            }
        bool broke = false;
        for (int i = 0; i < s->nslots && !broke; i++) {
            slot *sl = &s->slots[i];
            if (sl->inflight < 0 || slot_fd[i] < 0)
                continue;
            const kf_case *c = &cases[sl->inflight];
            if (pr > 0 && (fds[slot_fd[i]].revents & (POLLIN | POLLHUP | POLLERR))) {
                memset(&r, 0, sizeof r);
                int wr = worker_recv(sl->w, &r);
                stamp(sl, &r, &variants[c->variant], c, b);
                fill_compile_facts(&r, owner_of(&m, sl, sl->inflight));
                if (wr != 0 && kf_interrupted) {
                    /* the worker died of the signal that interrupts us (a
                     * group SIGTERM): not a result of the case */
                    rc = -1;
                    kf_err(err, errlen, "interrupted");
                    broke = true;
                } else if (finished(&m, sl, &r, wr, err, errlen) != 0) {
                    rc = -1;
                    broke = true;
                }
            } else if (!kf_interrupted && b->timeout_s > 0 && kf_now() - sl->t_sent >= b->timeout_s) {
                worker_kill(sl->w);
                memset(&r, 0, sizeof r);
                stamp(sl, &r, &variants[c->variant], c, b);
                r.status = KF_ST_TIMEOUT;
                snprintf(r.message, sizeof r.message,
                         "no result after %.1f s: stopped by the watchdog (bench.timeout_s)", b->timeout_s);
                fill_compile_facts(&r, owner_of(&m, sl, sl->inflight));
                if (finished(&m, sl, &r, 1, err, errlen) != 0) {
                    rc = -1;
                    broke = true;
                }
            }
        }
        if (broke)
            break;
        if (s->o.progress && (m.redraw || kf_now() - last_progress > 0.2)) {
            progress(s, m.done, m.failed, ncases, t0);
            last_progress = kf_now();
            m.redraw = false;
        }
    }
    if (rc == 0) {
        /* cases whose worker died with no case after them to tell: faults */
        for (int i = 0; i < s->nslots; i++)
            release_held(&m, &s->slots[i]);
        if (m.stopping)
            rc = 1;
    }
out:
    clear_progress(s);
    free(slot_fd);
    free(fds);
    free(m.retry);
    free(m.src_of);
    free(m.best_shape);
    free(m.best_ms);
    free(m.taken);
    aff_free(&m);
    return rc;
}

int run_session_measure(run_session *s, const kf_variant *variants, int nvariants, const kf_case *cases,
                        int ncases, const kf_bench *b, run_case_fn fn, void *ctx, char *err, size_t errlen)
{
    return measure_loop(s, variants, nvariants, nvariants, cases, ncases, ncases, b, fn, NULL, ctx, err, errlen);
}

int run_session_stream(run_session *s, kf_variant *variants, int nvariants, int vcap, kf_case *cases, int ncases,
                       int ccap, const kf_bench *b, run_case_fn fn, run_more_fn more, void *ctx, char *err,
                       size_t errlen)
{
    if (nvariants > vcap || ncases > ccap) {
        kf_err(err, errlen, "run_session_stream: %d variants and %d cases over the capacities %d and %d", nvariants,
               ncases, vcap, ccap);
        return -1;
    }
    return measure_loop(s, variants, nvariants, vcap, cases, ncases, ccap, b, fn, more, ctx, err, errlen);
}

int run_compile_only(const kf_variant *variants, int nvariants, const run_opts *o, run_result_fn fn, void *ctx,
                     char *err, size_t errlen)
{
    rtc_cache cache;
    compiler comp;
    memset(&comp, 0, sizeof comp);
    int sc = setup_cache(o, &cache, err, errlen);
    if (sc != 0)
        return sc;
    if (compiler_start(&comp, o, o->arch ? o->arch : "sm_90", o->jobs, &cache, false, err, errlen) != 0)
        return -1;
    submit_outcheck(&comp, &cache); /* the GPU node's workers then compile nothing either */
    int failed = 0, ncached = 0, rc = 0;
    int *src_of = malloc(sizeof *src_of * (size_t)(nvariants > 0 ? nvariants : 1));
    if (!src_of || prepare_variants(&comp, 1, &cache, variants, nvariants, 0, nvariants, src_of, &ncached, err,
                                    errlen) != 0) {
        if (!src_of)
            kf_err(err, errlen, "out of memory");
        rc = -1;
        goto out;
    }
    while (rtc_pool_pending(comp.pool) > 0) {
        if (kf_interrupted) {
            kf_err(err, errlen, "interrupted");
            rc = -1;
            goto out;
        }
        rtc_done d;
        int w = rtc_pool_wait(comp.pool, 250, &d);
        if (w == 1)
            compile_done(&d, &comp.src, comp.ropt.arch, false);
    }
    for (int i = 0; i < nvariants; i++) {
        const vstate *ow = &comp.src.v[src_of[i]];
        kf_result r;
        if (ow->state == VS_FAILED) {
            compile_failure_result(&r, &variants[i], NULL, ow);
            failed++;
        } else {
            memset(&r, 0, sizeof r);
            r.v = variants[i];
            r.device = -1;
            r.status = KF_ST_OK;
            snprintf(r.message, sizeof r.message, "%.400s",
                     ow->path[0] ? ow->path : "(in memory: the cache could not store it)");
            fill_compile_facts(&r, ow);
        }
        if (fn(&r, ctx))
            break;
    }
    rc = failed;
out:
    free(src_of);
    compiler_free(&comp);
    return rc;
}

void run_nodev_hint(void)
{
    const char *fake = getenv("KFORGE_FAKE_GPU");
    if (fake && *fake)
        return;
    fprintf(stderr, "kforge: without a GPU, KFORGE_FAKE_GPU=1 runs every command on a synthetic device (real "
                    "compilation and verification, modelled times), and these need no GPU at all: gen, check, "
                    "check --compile, axes, compare, merge, best and export (--gpu NAME when the tuning database holds "
                    "several GPUs), tune --simulate\n");
}
