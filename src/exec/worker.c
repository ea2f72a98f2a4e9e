/*
 * worker.c -- see worker.h.
 */
#include "worker.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "codegen.h"
#include "data.h"
#include "datashare.h"
#include "family.h"
#include "gpu.h"
#include "cubin.h"
#include "launch.h"
#include "nvml.h"
#include "outcheck.h"
#include "rtc.h"
#include "stats.h"
#include "util.h"

enum { REQ_MEASURE = 1, REQ_QUIT = 2 };

typedef struct {
    int type;
    int inject;
    kf_variant v;
    kf_shape shape;
    kf_bench b;
    char cubin_path[PATH_MAX]; /* the cubin in the cache, or "" when it follows the request: */
    uint64_t cubin_len;        /* a cubin the cache could not store, this long, then */
    uint32_t names_len;        /* its lowered names */
} request;

#define REQ_MAX_CUBIN ((uint64_t)1 << 31)
#define REQ_MAX_NAMES (64u << 20)

typedef struct {
    int ok;
    int missing;    /* not ok: the device does not exist */
    kf_device dev;
    int count;      /* devices this process sees */
    char err[KF_MSG_MAX];
} hello;

typedef struct {
    kf_result r;
    int fatal;      /* the worker ends after sending this */
} reply;

struct gpu_worker {
    pid_t pid;
    int to, from;   /* request pipe (write end), reply pipe (read end) */
    int count;      /* devices the worker's process sees */
    bool quit_sent; /* worker_quit told it to go */
};

/* How many fake devices KFORGE_FAKE_GPU provides (0: the real GPU is used):
 * N >= 1 gives N devices (at most 64); any other value but "0" gives one, as
 * KFORGE_FAKE_GPU=1 always did. */
static int fake_gpu_count(void)
{
    const char *e = getenv("KFORGE_FAKE_GPU");
    if (!e || !*e || strcmp(e, "0") == 0)
        return 0;
    char *end;
    long n = strtol(e, &end, 10);
    if (*end || n < 1)
        return 1;
    return n > 64 ? 64 : (int)n;
}

int worker_device_guess(void)
{
    int n = 0;
    const char *e = getenv("CUDA_VISIBLE_DEVICES");
    if (e) { /* also with the fake GPU, which ignores it: the tests' way to guess wrong */
        n = *e != '\0';
        for (const char *p = e; *p; p++)
            n += *p == ',';
    } else if ((n = fake_gpu_count()) > 0) {
    } else {
        DIR *d = opendir("/proc/driver/nvidia/gpus");
        struct dirent *de;
        while (d && (de = readdir(d)))
            n += de->d_name[0] != '.';
        if (d)
            closedir(d);
    }
    return n < 0 ? 0 : n > 64 ? 64 : n;
}

/* The entry of KFORGE_FAULT_INJECT naming what@k: 1 when present. */
static bool injected(const char *what, int k)
{
    const char *e = getenv("KFORGE_FAULT_INJECT");
    if (!e)
        return false;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", e);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *at = strchr(tok, '@');
        if (!at)
            continue;
        *at = '\0';
        if (strcmp(tok, what) == 0 && atoi(at + 1) == k)
            return true;
    }
    return false;
}

int worker_injection(int k)
{
    if (injected("crash", k))
        return 1;
    if (injected("hang", k))
        return 2;
    return 0;
}

bool worker_device_dead(int ordinal) { return injected("dead", ordinal); }

// ---------------------------------------------------------------------------
// The fake device: CPU results and a formula for the time.  Never used
// unless KFORGE_FAKE_GPU is set.

/* Fake device `ordinal`: every one the same model (an H100-like device),
 * unless KFORGE_FAKE_GPU_MIXED is set, which makes the odd-numbered ones
 * another model (an A100-like sm_80), for tests of mixed nodes.  Each has
 * its own UUID. */
static void fake_device(kf_device *d, int ordinal)
{
    memset(d, 0, sizeof *d);
    const char *mixed = getenv("KFORGE_FAKE_GPU_MIXED");
    bool other = mixed && *mixed && strcmp(mixed, "0") != 0 && ordinal % 2 == 1;
    snprintf(d->name, sizeof d->name, "%s", other ? "fake-gpu-b (KFORGE_FAKE_GPU)" : "fake-gpu (KFORGE_FAKE_GPU)");
    d->index = ordinal;
    unsigned char id[16] = {0xfa, 0x4e, 0x69, 0x70, 0x75, 0x00, 0x40, 0x00, 0x80, 0x00, 0, 0, 0, 0, 0, 0};
    id[15] = (unsigned char)ordinal;
    gpu_uuid_text(id, d->uuid, sizeof d->uuid);
    d->cc_major = other ? 8 : 9;
    d->sms = other ? 108 : 132;
    d->l2_bytes = (other ? 40 : 50) << 20;
    d->mem_bytes = (int64_t)80 << 30;
    d->mem_clock_khz = other ? 1593000 : 2619000;
    d->bus_width_bits = 5120;
    d->peak_gbps = 2.0 * d->mem_clock_khz * 1e3 * (d->bus_width_bits / 8.0) / 1e9;
    d->sm_clock_khz = other ? 1410000 : 1980000;
    d->peak_gflops = kf_peak_fp32_gflops(d->cc_major, d->cc_minor, d->sms, d->sm_clock_khz);
    d->max_threads_per_block = 1024;
    d->max_smem_per_block = other ? 166912 : 232448;
    d->max_smem_per_sm = other ? 167936 : 233472;
    d->driver_version = 13000;
}

/* The compute capability every GPU of the host has, read by NVML in the
 * child process of worker_arch_guess: writes major, minor to fd. */
static _Noreturn void arch_probe_main(int fd)
{
    kf_nvml m;
    char err[256];
    int cc[2] = {-1, -1};
    if (kf_nvml_open(&m, err, sizeof err) == 0) {
        int (*count)(unsigned *) = (int (*)(unsigned *))dlsym(m.lib, "nvmlDeviceGetCount_v2");
        int (*capability)(kf_nvml_handle, int *, int *) =
            (int (*)(kf_nvml_handle, int *, int *))dlsym(m.lib, "nvmlDeviceGetCudaComputeCapability");
        unsigned n = 0;
        if (count && capability && count(&n) == 0 && n > 0) {
            for (unsigned i = 0; i < n; i++) {
                kf_nvml_handle h;
                int a = -1, b = -1;
                if (m.by_index(i, &h) != 0 || capability(h, &a, &b) != 0 || a < 1 ||
                    (i > 0 && (a != cc[0] || b != cc[1]))) {
                    cc[0] = -1;
                    break;
                }
                cc[0] = a;
                cc[1] = b;
            }
        }
    }
    ssize_t w = write(fd, cc, sizeof cc);
    (void)w;
    _exit(0);
}

int worker_arch_guess(const int *ords, int n, char *arch, size_t len)
{
    int nfake = fake_gpu_count();
    if (nfake > 0) {
        int major = -1, minor = -1;
        for (int i = 0; i < n; i++) {
            if (ords[i] < 0 || ords[i] >= nfake)
                continue; /* missing: the workers' hellos say so */
            kf_device d;
            fake_device(&d, ords[i]);
            if (major >= 0 && (d.cc_major != major || d.cc_minor != minor))
                return -1;
            major = d.cc_major;
            minor = d.cc_minor;
        }
        if (major < 0)
            return -1;
        snprintf(arch, len, "sm_%d%d", major, minor);
        return 0;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        arch_probe_main(p[1]);
    }
    close(p[1]);
    int cc[2] = {-1, -1};
    struct pollfd f = {.fd = p[0], .events = POLLIN};
    /* NVML answers in a fraction of a second; the workers open their
     * devices meanwhile, so waiting longer would gain nothing */
    bool got = poll(&f, 1, 1000) == 1 && kf_read_full(p[0], cc, sizeof cc) == (long)sizeof cc;
    close(p[0]);
    if (!got)
        kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (!got || cc[0] < 1 || cc[1] < 0)
        return -1;
    snprintf(arch, len, "sm_%d%d", cc[0], cc[1]);
    return 0;
}

/* Sleeps the milliseconds the environment variable env gives, if any. */
static void fake_delay(const char *env)
{
    const char *e = getenv(env);
    int ms = e ? atoi(e) : 0;
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The fake's data, kept by key: a sweep goes variant by variant over the
 * same keys (dtype, op, shape), and making a key's data (above all its
 * reference) is most of a fake case's cost.  Every key's reference is kept;
 * its inputs, which only a planted fault's model reads, are made when a
 * case needs them.  Beyond an eighth of the host's memory (at most 1 GiB)
 * the inputs of the most recently used other keys go first (a sweep that
 * does not fit then keeps finding the keys it met first), then whole keys,
 * the least recently used first; never the data in use. */
typedef struct {
    data_key key;
    data_set d;         /* the buffers, the reference, and the inputs when made */
    bool inputs;
    size_t ref_bytes, in_bytes;
    uint64_t used;
} fake_data;

static fake_data **fake_keys;
static int fake_nkeys;
static size_t fake_bytes;
static uint64_t fake_tick;
static fake_data *fake_in_use[2]; /* the last exact and realistic data handed out */

static size_t fake_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t mem = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0, cap = (size_t)1 << 30;
    return mem && mem / 8 < cap ? mem / 8 : cap;
}

static size_t fake_set_bytes(const data_set *d, bool inputs)
{
    size_t n = 0;
    for (int i = 0; i < d->set.n; i++) {
        const kf_buffer *b = &d->set.b[i];
        if (inputs ? d->host[i] != NULL : d->ref[i] != NULL)
            n += data_bytes(b) + (inputs ? 0 : (size_t)b->elems * sizeof(double));
    }
    return n;
}

static bool fake_data_busy(const fake_data *x, const fake_data *keep)
{
    return x == keep || x == fake_in_use[0] || x == fake_in_use[1];
}

/* Back within the budget, keeping keep and the data in use. */
static void fake_data_trim(const fake_data *keep)
{
    static size_t budget;
    if (!budget)
        budget = fake_budget();
    while (fake_bytes > budget) {
        fake_data *mru = NULL;
        for (int i = 0; i < fake_nkeys; i++) {
            fake_data *x = fake_keys[i];
            if (x->inputs && !fake_data_busy(x, keep) && (!mru || x->used > mru->used))
                mru = x;
        }
        if (!mru)
            break;
        data_drop_inputs(&mru->d);
        mru->inputs = false;
        fake_bytes -= mru->in_bytes;
        mru->in_bytes = 0;
    }
    while (fake_bytes > budget) {
        int lru = -1;
        for (int i = 0; i < fake_nkeys; i++)
            if (!fake_data_busy(fake_keys[i], keep) && (lru < 0 || fake_keys[i]->used < fake_keys[lru]->used))
                lru = i;
        if (lru < 0)
            break;
        fake_data *x = fake_keys[lru];
        fake_bytes -= x->ref_bytes + x->in_bytes;
        data_free(&x->d);
        free(x);
        fake_keys[lru] = fake_keys[--fake_nkeys];
    }
}

/* The exact or the realistic data of this case's key: its reference, and
 * with inputs its inputs too; NULL when host memory ran out. */
static fake_data *fake_data_get(bool exact, const kf_variant *v, const kf_shape *shape, uint64_t seed, bool inputs)
{
    data_key k;
    data_key_of(&k, v, shape, seed, exact);
    fake_data *D = NULL;
    for (int i = 0; i < fake_nkeys && !D; i++)
        if (data_key_eq(&fake_keys[i]->key, &k))
            D = fake_keys[i];
    if (!D) {
        fake_data **a = realloc(fake_keys, sizeof *a * (size_t)(fake_nkeys + 1));
        if (!a || !(D = calloc(1, sizeof *D)))
            return NULL;
        fake_keys = a;
        /* inputs kept are a planted fault's, whose model writes into them: private */
        if ((inputs ? data_make : data_make_shared)(&D->d, v, shape, seed, exact) != 0) {
            free(D);
            return NULL;
        }
        D->key = k;
        kf_trace("inputs made: key %016llx (%s data, fake GPU)", (unsigned long long)data_key_hash(&k),
                 exact ? "exact" : "realistic");
        if (!inputs)
            data_drop_inputs(&D->d);
        D->inputs = inputs;
        D->ref_bytes = fake_set_bytes(&D->d, false);
        D->in_bytes = inputs ? fake_set_bytes(&D->d, true) : 0;
        fake_bytes += D->ref_bytes + D->in_bytes;
        fake_keys[fake_nkeys++] = D;
    } else if (inputs && !D->inputs) {
        data_set in;
        if (data_make_inputs(&in, v, shape, seed, exact) != 0)
            return NULL;
        memcpy(D->d.host, in.host, sizeof D->d.host);
        D->inputs = true;
        D->in_bytes = fake_set_bytes(&D->d, true);
        fake_bytes += D->in_bytes;
    }
    D->used = ++fake_tick;
    fake_in_use[exact ? 0 : 1] = D;
    fake_data_trim(D);
    return D;
}

/* The outputs the fake "computes" on data S: the reference, or with a
 * planted fault the family's model of it (plant_check).  Returns the wrong
 * outputs' count (r filled by compare); *nout the outputs in all. */
static int64_t fake_outputs(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, int64_t offset,
                            const kf_plant *spec, fake_data *S, bool exact, kf_result *r, int64_t *nout)
{
    kf_buffer_set set;
    variant_buffers(v, shape, p, &set);
    if (!spec)
        return bench_compare(v, shape, p, &set, S->d.ref, S->d.ref, S->d.aux, exact, r, nout);
    *nout = buffer_elems(&set, true);
    int64_t bad = family_of(v)->plant_check(v, shape, p, offset, spec, (const void *const *)S->d.host, S->d.ref, S->d.aux,
                                    exact, r);
    if (bad < 0) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory for the planted fault's model");
        return 0;
    }
    return bad;
}

/* The fake GPU's launcher: every launch the family's enqueue asks for is
 * checked against the fake device's limits, as on a GPU; nothing runs. */
static bool fake_launches(const kf_variant *v, const kf_shape *shape, const kf_plan_info *p, const kf_device *dev,
                          kf_result *r)
{
    const kf_family *f = family_of(v);
    kf_launcher l = {.dev = dev, .r = r, .nkernels = f->nentries};
    kf_buffers none;
    memset(&none, 0, sizeof none);
    return f->enqueue(&l, v, shape, p, &none) == 0;
}

/* The fake GPU loads no module, but it gets the cubin a GPU would: from the
 * cache (its path) or from memory; one that is not there or is not an ELF
 * file fails the case as cuModuleLoadData would. */
static bool fake_cubin(const request *q, const void *mem, kf_result *r)
{
    char head[4] = {0};
    bool elf;
    if (mem) {
        elf = q->cubin_len >= 4 && memcmp(mem, "\177ELF", 4) == 0;
    } else {
        int fd = open(q->cubin_path, O_RDONLY | O_CLOEXEC);
        elf = fd >= 0 && kf_read_full(fd, head, 4) == 4 && memcmp(head, "\177ELF", 4) == 0;
        if (fd >= 0)
            close(fd);
    }
    if (!elf) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "fake GPU: no cubin to load (%.300s)",
                 mem ? "the one sent is not an ELF file" : q->cubin_path[0] ? q->cubin_path : "none sent");
    }
    return elf;
}

/* A user's kernels (a family with arg_sizes: a custom kernel) checked in
 * the cubin NVRTC made, as a GPU's driver checks them when the module is
 * loaded (module.c's get_kernels): the entry must be there (NVRTC's lowered
 * name, the name, or a C++ name's one mangling), with as many parameters as
 * the config gives arguments, each of the size its dtype takes.  false, with
 * r saying why, when not; true when it is or the cubin cannot tell. */
static bool fake_kernels(const request *q, const void *mem, kf_result *r)
{
    const kf_family *f = family_of(&q->v);
    if (!f->arg_sizes || (!mem && !q->cubin_path[0]))
        return true;
    size_t len = 0, nlen = 0;
    /* the cubin sent in memory (one the cache could not store), else the cache's file */
    void *cubin = mem ? malloc(q->cubin_len ? q->cubin_len : 1) : kf_read_file(q->cubin_path, &len, NULL, 0);
    if (mem && cubin) {
        memcpy(cubin, mem, q->cubin_len);
        len = q->cubin_len;
    }
    if (!cubin || !cubin_ok(cubin, len)) {
        free(cubin);
        return true;
    }
    char np[PATH_MAX];
    char *names = NULL;
    if (q->cubin_path[0]) {
        rtc_names_path(q->cubin_path, np, sizeof np);
        names = kf_read_file(np, &nlen, NULL, 0);
    }
    bool ok = true;
    for (int k = 0; ok && k < f->nentries && k < KF_MAX_KERNELS; k++) {
        const char *e = f->entries[k];
        char name[512], prefix[320];
        if (!rtc_name_lookup(names, e, name, sizeof name))
            snprintf(name, sizeof name, "%s", e);
        if (!cubin_has_kernel(cubin, len, name)) {
            size_t base = strcspn(e, "<");
            snprintf(prefix, sizeof prefix, "_Z%zu%.*s", base, (int)base, e);
            if (e[base] == '<')
                continue;   /* a template NVRTC could not name: the mangling of its arguments is module.c's */
            if (!cubin_find_prefix(cubin, len, prefix, name, sizeof name)) {
                char list[240];
                cubin_kernels(cubin, len, list, sizeof list);
                r->status = KF_ST_LAUNCH;
                snprintf(r->message, sizeof r->message, "no kernel \"%.120s\" in the module (an extern \"C\" name, "
                         "a C++ name, or a template instantiated in the source); it defines: %s", e, list);
                ok = false;
                break;
            }
        }
        size_t want[32], have[64];
        int nwant = f->arg_sizes(&q->v, k, want, 32);
        int nhave = cubin_param_sizes(cubin, len, name, have, 64);
        if (nwant < 0 || nhave < 0)
            continue;
        for (int i = 0; i < nwant && i < nhave && i < 32 && i < 64; i++)
            if (want[i] != have[i]) {
                r->status = KF_ST_LAUNCH;
                family_arg_mismatch(&q->v, k, e, i, want[i], have[i], r->message, sizeof r->message);
                ok = false;
                break;
            }
        if (ok && nhave != nwant) {
            r->status = KF_ST_LAUNCH;
            family_arg_mismatch(&q->v, k, e, -1, (size_t)nwant, (size_t)nhave, r->message, sizeof r->message);
            ok = false;
        }
    }
    /* each module constant as big as the config makes it, as set_constants
     * (module.c) checks with cuModuleGetGlobal on a GPU */
    kf_constant_set cs = {0};
    if (ok && f->constants)
        f->constants(&q->v, &q->shape, &cs);
    for (int k = 0; ok && k < cs.n; k++) {
        const kf_constant *c = &cs.c[k];
        long long have = cubin_global_size(cubin, len, c->name);
        unsigned long long want = (unsigned long long)c->elems * (unsigned long long)c->elem_bytes;
        if (have >= 0 && (unsigned long long)have < want) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "constant \"%s\": the module's variable is %lld bytes, the config "
                     "describes %llu (%lld elements)", c->name, have, want, (long long)c->elems);
            ok = false;
        }
    }
    free(names);
    free(cubin);
    return ok;
}

static void fake_case(const request *q, const void *mem, const kf_device *dev, kf_result *r)
{
    const kf_variant *v = &q->v;
    const kf_family *f = family_of(v);
    r->v = *v;
    r->shape = q->shape;
    r->status = KF_ST_OK;
    if (!fake_cubin(q, mem, r))
        return;
    kf_plan_info p;
    if (f->plan(v, &q->shape, dev->sms, 8, &p) != 0) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "cannot plan launches for this shape");
        return;
    }
    r->launches = p.launches;
    r->blocks = p.blocks;
    r->deterministic = p.deterministic;
    r->occupancy = 8;
    r->regs = 32;
    if (!fake_launches(v, &q->shape, &p, dev, r) || !fake_kernels(q, mem, r))
        return;
    /* the module's constants made as on a GPU; there is no module to write them to */
    kf_constant_set cs;
    void *chost[KF_MAX_CONSTANTS];
    if (data_constants(v, &q->shape, q->b.seed, &cs, chost) != 0) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory for the module's constants");
        return;
    }
    data_constants_free(&cs, chost);
    kf_buffer_set set;
    variant_buffers(v, &q->shape, &p, &set);
    int64_t in = buffer_elems(&set, false), outs = buffer_elems(&set, true);
    /* the exact data's reference as the result, or a planted fault's model
     * of it (keeping the CPU work bounded) */
    double t0 = kf_now();
    int kind = codegen_planted(v);
    kf_plant spec, *sp = NULL;
    if (kind >= KF_PLANT_DROP_FIRST) {
        char why[80] = "";
        snprintf(r->planted, sizeof r->planted, "%s", kf_plant_names[kind]);
        if (f->plant && f->plant_check && f->plant(v, &q->shape, &p, q->b.offset, kind, &spec, why, sizeof why) == 0)
            sp = &spec;
        else
            snprintf(r->planted_effect, sizeof r->planted_effect, "no place: %s", f->plant ? why : "no model");
    }
    bool checked = in <= KF_FAKE_MAX_INPUTS && outs <= KF_FAKE_MAX_OUTPUTS;
    if (checked) {
        int64_t nout;
        fake_data *X = fake_data_get(true, v, &q->shape, q->b.seed, sp != NULL);
        if (X) {
            int64_t bad = fake_outputs(v, &q->shape, &p, q->b.offset, sp, X, true, r, &nout);
            if (sp)
                snprintf(r->planted_effect, sizeof r->planted_effect, "%s",
                         bad ? "changes the answer" : "cannot change the answer");
            if (bad)
                bench_wrong(r, bad, nout, "wrong result on the exact data");
            else
                bench_compare(v, &q->shape, &p, &set, X->d.ref, X->d.ref, X->d.aux, true, r, &nout);
        }
        fake_data *Q = !q->b.no_accuracy && f->accuracy && f->accuracy(v)
                           ? fake_data_get(false, v, &q->shape, q->b.seed, sp != NULL)
                           : NULL;
        if (Q) {
            kf_result acc = *r;
            int64_t abad = fake_outputs(v, &q->shape, &p, q->b.offset, sp, Q, false, &acc, &nout);
            bench_accuracy(r, &acc, abad);
        }
    }
    r->verify_ms = 1e3 * (kf_now() - t0);
    if (r->status != KF_ST_OK)
        return;
    if (!checked) /* the CPU's work stays bounded; the result says it was not checked */
        snprintf(r->message, sizeof r->message, "%s (fake GPU, %lld %s)", KF_FAKE_NOT_VERIFIED,
                 (long long)(outs > KF_FAKE_MAX_OUTPUTS ? outs : in), outs > KF_FAKE_MAX_OUTPUTS ? "outputs" : "inputs");
    t0 = kf_now();
    double ms = f->fake_ms(v, &q->shape, dev, &p);
    fake_delay("KFORGE_FAKE_GPU_MS"); /* each case takes this long (tests of parallel devices) */
    double t5[5];
    for (int i = 0; i < 5; i++)
        t5[i] = ms * (1.0 + 0.001 * i);
    stats_compute(t5, 5, &r->stats);
    stats_bandwidth(&r->stats, f->bytes(v, &q->shape), dev->peak_gbps);
    if (f->flops)
        stats_flops(&r->stats, f->flops(v, &q->shape), dev->peak_gflops);
    if (q->b.abandon_ms > 0 && r->stats.median_ms > q->b.abandon_ms) {
        r->status = KF_ST_ABANDONED;
        snprintf(r->message, sizeof r->message,
                 "abandoned after 5 repetitions: median %.4g ms, above %.4g ms (k x the best so far)",
                 r->stats.median_ms, q->b.abandon_ms);
    } else if (q->b.race_ms > 0 && t5[0] > KF_RACE_MARGIN * q->b.race_ms) {
        /* as timing.c's time_case decides it; five repetitions give no 95%
         * interval, and these are not noisy: their range stands in for it */
        r->status = KF_ST_ABANDONED;
        snprintf(r->message, sizeof r->message,
                 "abandoned after 5 repetitions: median %.4g ms, its 95%% interval %.4g..%.4g ms above the best so "
                 "far (%.4g ms) + 2%%", r->stats.median_ms, t5[0], t5[4], q->b.race_ms);
    }
    r->bench_ms = 1e3 * (kf_now() - t0);
}

static struct {
    bool on;
    kf_variant v;
    kf_shape shape;
    kf_bench b;
    /* with shared data (datashare.h): every shape's data, worker part of
     * nparts making shapes part, part + nparts, ... */
    const kf_shape *shapes;
    int nshapes, part, nparts;
} input_ahead;

void worker_input_ahead(const kf_variant *v, const kf_shape *shape, const kf_bench *b)
{
    input_ahead.on = v != NULL;
    input_ahead.shapes = NULL;
    input_ahead.nshapes = 0;
    if (v) {
        input_ahead.v = *v;
        input_ahead.shape = *shape;
        input_ahead.b = *b;
    }
}

void worker_input_ahead_shapes(const kf_shape *shapes, int nshapes, int part, int nparts)
{
    input_ahead.shapes = shapes;
    input_ahead.nshapes = shapes ? nshapes : 0;
    input_ahead.part = part;
    input_ahead.nparts = nparts > 0 ? nparts : 1;
}

/* Whether the fake GPU checks v at shape (and so needs its data). */
static bool fake_checks(const kf_variant *v, const kf_shape *shape)
{
    kf_buffer_set set;
    variant_buffers(v, shape, NULL, &set);
    return buffer_elems(&set, false) <= KF_FAKE_MAX_INPUTS && buffer_elems(&set, true) <= KF_FAKE_MAX_OUTPUTS;
}

/* The worker's share of the session's data, made in the shared region on
 * a thread while the device opens and the first cases run: its own first
 * shape's first, so that on N GPUs the N first cases' data is made at once,
 * each key once. */
static void *prefetch_main(void *arg)
{
    bool fake = arg != NULL;
    const kf_variant *v = &input_ahead.v;
    const kf_bench *b = &input_ahead.b;
    const kf_family *f = family_of(v);
    bool acc = !b->no_accuracy && f->accuracy && f->accuracy(v);
    for (int j = input_ahead.part; j < input_ahead.nshapes; j += input_ahead.nparts) {
        const kf_shape *sh = &input_ahead.shapes[j];
        if (fake && !fake_checks(v, sh))
            continue;
        datashare_prefetch(v, sh, b->seed, true);
        if (acc)
            datashare_prefetch(v, sh, b->seed, false);
    }
    kf_trace("shared data: this worker's part made ahead");
    return NULL;
}

/* Starts the data made ahead: the shared prefetch, or (without sharing, on
 * a GPU) the first case's input on bench.c's thread. */
static void start_ahead(bool fake)
{
    if (!input_ahead.on)
        return;
    if (datashare_on() && input_ahead.nshapes > 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, prefetch_main, fake ? (void *)1 : NULL) == 0)
            pthread_detach(th);
    } else if (!fake) {
        bench_make_input_ahead(&input_ahead.v, &input_ahead.shape, &input_ahead.b);
    }
}

/* The fake GPU looks for the output check's module where a GPU worker does
 * on its first case (outcheck_ready: in the session's cache, which its pool
 * fills; a GPU worker compiles it when it is not there), and says whether
 * it is there: the tests see it.  It neither compiles nor loads it. */
static void fake_outcheck(const kf_device *d)
{
    const char *env = getenv("KFORGE_CHECK_ON_HOST");
    if (env && *env && strcmp(env, "0") != 0)
        return;
    char arch[16], err[KF_MSG_MAX], *names = NULL;
    bool compiled = false;
    snprintf(arch, sizeof arch, "sm_%d%d", d->cc_major, d->cc_minor);
    void *cubin = bench_compile_for(arch, outcheck_source(), "outcheck.cu", false, &names, &compiled, err, sizeof err);
    kf_trace("worker %d: output check %s", d->index,
             cubin ? "from the cache" : "not in the cache (a GPU's worker would compile it now)");
    free(cubin);
    free(names);
}

// ---------------------------------------------------------------------------
// The child.

static void child_main(int ordinal, bool isolate, int in, int out)
{
    /* Ctrl-C, and the SIGTERM of timeout, systemd or Slurm, go to the whole
     * process group: a worker that died of them would be recorded as a GPU
     * fault.  The parent kills the worker itself (SIGKILL). */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    /* blocked by worker_start across fork(); a pending SIGINT or SIGTERM is
     * dropped now that it is ignored */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    hello h = {0};
    bench *B = NULL;
    bench_nvml fake_nvml = {.note = ""};
    int nfake = fake_gpu_count();
    bool fake = nfake > 0;
    if (fake && (ordinal < 0 || ordinal >= nfake)) {
        /* as gpu_open words a missing device */
        h.missing = 1;
        snprintf(h.err, sizeof h.err, "no GPU with index %d (KFORGE_FAKE_GPU provides %d device%s)", ordinal,
                 nfake, nfake == 1 ? "" : "s");
    } else if (fake) {
        start_ahead(true);
        /* opening the device takes this long, as cuInit and the context do
         * (tests of the workers' start) */
        fake_delay("KFORGE_FAKE_GPU_OPEN_MS");
        fake_device(&h.dev, ordinal);
        h.count = nfake;
        h.ok = 1;
        if (getenv(KF_NVML_LIB_ENV)) /* a scripted NVML (tests): the fake's cases read it like real ones */
            bench_nvml_open(&fake_nvml, NULL, ordinal);
    } else {
        /* Shown only its own GPU, the driver opens it sooner. */
        char vis[256];
        int open = ordinal, seen = worker_device_guess(); /* before CUDA_VISIBLE_DEVICES changes */
        if (isolate && worker_visible_entry(getenv("CUDA_VISIBLE_DEVICES"), ordinal, vis, sizeof vis) == 0 &&
            setenv("CUDA_VISIBLE_DEVICES", vis, 1) == 0)
            open = 0;
        bool missing = false;
        start_ahead(false);
        B = bench_new(open, ordinal, &h.dev, &missing, h.err, sizeof h.err);
        h.ok = B != NULL;
        h.missing = missing;
        if (!B && missing && open != ordinal) {
            /* worded as gpu_open words it, with what the parent would see */
            if (seen > 0 && ordinal >= seen)
                snprintf(h.err, sizeof h.err, "no GPU with index %d (the driver sees %d)", ordinal, seen);
            else
                snprintf(h.err, sizeof h.err, "no GPU with index %d (CUDA_VISIBLE_DEVICES=%s shows none)", ordinal,
                         vis);
        }
        if (B && gpu_count(&h.count, h.err, sizeof h.err) != 0)
            h.count = ordinal + 1;
        h.dev.index = ordinal;
    }
    kf_trace("worker %d: %s", ordinal, h.ok ? "device open" : "no device");
    if (kf_write_full(out, &h, sizeof h) != 0 || !h.ok)
        _exit(h.ok ? 1 : 3);

    request q;
    int ncases = 0;
    for (;;) {
        if (kf_read_full(in, &q, sizeof q) != (long)sizeof q || q.type != REQ_MEASURE ||
            q.cubin_len > REQ_MAX_CUBIN || q.names_len > REQ_MAX_NAMES || (q.names_len && !q.cubin_len))
            break;
        /* a cubin the cache could not store comes after the request: read
         * before anything else, so that the parent's write never waits */
        void *mem = q.cubin_len ? malloc((size_t)q.cubin_len) : NULL;
        char *mem_names = q.names_len ? malloc((size_t)q.names_len + 1) : NULL;
        if ((q.cubin_len && !mem) || (q.names_len && !mem_names) ||
            (mem && kf_read_full(in, mem, (size_t)q.cubin_len) != (long)q.cubin_len) ||
            (mem_names && kf_read_full(in, mem_names, q.names_len) != (long)q.names_len))
            break;
        if (mem_names)
            mem_names[q.names_len] = '\0';
        if (!ncases++)
            kf_trace("worker %d: first case received", ordinal);
        if (q.inject == 1)
            abort();
        if (q.inject == 2)
            for (;;)
                pause();
        reply rep;
        memset(&rep, 0, sizeof rep);
        if (fake) {
            if (ncases == 1)
                fake_outcheck(&h.dev);
            fake_case(&q, mem, &h.dev, &rep.r);
            if (getenv(KF_NVML_LIB_ENV))
                bench_nvml_fake(&fake_nvml, &q.b, &rep.r);
        } else {
            char err[KF_MSG_MAX];
            size_t len = (size_t)q.cubin_len;
            void *cubin = mem ? mem : kf_read_file(q.cubin_path, &len, err, sizeof err);
            mem = NULL;
            if (!cubin) {
                rep.r.v = q.v;
                rep.r.shape = q.shape;
                rep.r.status = KF_ST_LAUNCH;
                snprintf(rep.r.message, sizeof rep.r.message, "%s", err);
            } else {
                char *names = mem_names;
                mem_names = NULL;
                if (!q.cubin_len) {
                    char np[PATH_MAX];
                    size_t nlen = 0;
                    rtc_names_path(q.cubin_path, np, sizeof np);
                    names = kf_read_file(np, &nlen, NULL, 0); /* the lowered names, if NVRTC gave any */
                }
                rep.fatal = bench_case(B, &q.v, &q.shape, &q.b, cubin, len, names, &rep.r) != 0;
                free(names);
                free(cubin);
            }
        }
        free(mem);
        free(mem_names);
        if (ncases == 1)
            kf_trace("worker %d: first case done", ordinal);
        if (kf_write_full(out, &rep, sizeof rep) != 0 || rep.fatal)
            break;
    }
    /* After a fault the context is unusable: do not tear it down, just go.
     * Nor otherwise: the process's end frees the context and device memory
     * (cuCtxDestroy would do the same work, waited for), and the parent does
     * not wait for it (worker_release).  The standard streams first, so a
     * pipe the worker shares with kforge (a shell's $(...), | head) is not
     * held open while the driver tears down. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        close(null);
    }
    if (fake)
        fake_delay("KFORGE_FAKE_GPU_EXIT_MS"); /* the driver's teardown (tests of the workers' end) */
    _exit(0);
}

// ---------------------------------------------------------------------------
// The parent's side.

int worker_visible_entry(const char *cvd, int ordinal, char *out, size_t len)
{
    if (ordinal < 0)
        return -1;
    if (!cvd) {
        snprintf(out, len, "%d", ordinal);
        return 0;
    }
    const char *p = cvd;
    for (int i = 0; i < ordinal; i++) {
        p = strchr(p, ',');
        if (!p)
            return -1;
        p++;
    }
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, ",");
    while (n > 0 && p[n - 1] == ' ')
        n--;
    if (n == 0 || n >= len)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

/* Released workers' processes not reaped yet (worker_release). */
#define LEFT_MAX 64
static pid_t left_pid[LEFT_MAX];
static int left_n;

/* Reaps the released processes that have ended; with wait, the oldest one
 * too, ended or not (to make room). */
static void reap_left(bool wait)
{
    for (int i = 0; i < left_n;) {
        pid_t r = waitpid(left_pid[i], NULL, wait && i == 0 ? 0 : WNOHANG);
        if (r == left_pid[i] || (r < 0 && errno == ECHILD)) {
            left_pid[i] = left_pid[--left_n];
            wait = false;
        } else {
            i++;
        }
    }
}

gpu_worker *worker_spawn(int ordinal, bool isolate, char *err, size_t errlen)
{
    reap_left(false);
    int req[2], rep[2];
    if (pipe2(req, O_CLOEXEC) != 0) {
        kf_err(err, errlen, "pipe: %s", strerror(errno));
        return NULL;
    }
    if (pipe2(rep, O_CLOEXEC) != 0) {
        kf_err(err, errlen, "pipe: %s", strerror(errno));
        close(req[0]);
        close(req[1]);
        return NULL;
    }
    fflush(NULL);
    /* SIGINT and SIGTERM stay blocked across fork() until the child has set
     * its dispositions (child_main): a Ctrl-C during the start must not kill
     * the worker before it ignores SIGINT. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t pid = fork();
    if (pid != 0)
        sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        kf_err(err, errlen, "fork: %s", strerror(errno));
        close(req[0]); close(req[1]); close(rep[0]); close(rep[1]);
        return NULL;
    }
    if (pid == 0) {
        close(req[1]);
        close(rep[0]);
        child_main(ordinal, isolate, req[0], rep[1]);
    }
    close(req[0]);
    close(rep[1]);
    gpu_worker *w = calloc(1, sizeof *w);
    if (!w) {
        kf_err(err, errlen, "out of memory");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(req[1]);
        close(rep[0]);
        return NULL;
    }
    w->pid = pid;
    w->to = req[1];
    w->from = rep[0];
    return w;
}

gpu_worker *worker_hello(gpu_worker *w, kf_device *dev, bool *missing, char *err, size_t errlen)
{
    if (missing)
        *missing = false;
    if (!w)
        return NULL;
    hello h;
    if (kf_read_full(w->from, &h, sizeof h) != (long)sizeof h) {
        kf_err(err, errlen, "the GPU worker died while opening the device");
        worker_kill(w);
        worker_free(w);
        return NULL;
    }
    if (!h.ok) {
        kf_err(err, errlen, "%s", h.err);
        if (missing)
            *missing = h.missing != 0;
        worker_kill(w);
        worker_free(w);
        return NULL;
    }
    *dev = h.dev;
    w->count = h.count;
    return w;
}

gpu_worker *worker_start(int ordinal, bool isolate, kf_device *dev, char *err, size_t errlen)
{
    return worker_hello(worker_spawn(ordinal, isolate, err, errlen), dev, NULL, err, errlen);
}

int worker_fd(const gpu_worker *w) { return w->from; }
int worker_device_count(const gpu_worker *w) { return w->count; }
pid_t worker_pid(const gpu_worker *w) { return w->pid; }

int worker_send(gpu_worker *w, const kf_variant *v, const kf_shape *shape, const kf_bench *b,
                const char *cubin_path, const void *cubin, size_t cubin_len, const char *names, int inject)
{
    request q;
    memset(&q, 0, sizeof q);
    q.type = REQ_MEASURE;
    q.inject = inject;
    q.v = *v;
    q.shape = *shape;
    q.b = *b;
    if (cubin && cubin_len) {
        q.cubin_len = cubin_len;
        q.names_len = names ? (uint32_t)strlen(names) : 0;
    } else {
        snprintf(q.cubin_path, sizeof q.cubin_path, "%s", cubin_path ? cubin_path : "");
    }
    if (kf_write_full(w->to, &q, sizeof q) != 0)
        return -1;
    if (q.cubin_len && kf_write_full(w->to, cubin, cubin_len) != 0)
        return -1;
    return q.names_len ? kf_write_full(w->to, names, q.names_len) : 0;
}

static void describe_exit(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "GPU worker died: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(buf, len, "GPU worker exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, len, "GPU worker died");
}

int worker_recv(gpu_worker *w, kf_result *r)
{
    reply rep;
    long got = kf_read_full(w->from, &rep, sizeof rep);
    if (got != (long)sizeof rep) {
        int status = 0;
        if (w->pid > 0 && waitpid(w->pid, &status, 0) == w->pid)
            w->pid = -1;
        r->status = KF_ST_FAULT;
        describe_exit(status, r->message, sizeof r->message);
        return -2;
    }
    *r = rep.r;
    return rep.fatal ? -1 : 0;
}

void worker_kill(gpu_worker *w)
{
    if (w && w->pid > 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
        w->pid = -1;
    }
}

void worker_quit(gpu_worker *w)
{
    if (!w || w->pid <= 0 || w->quit_sent)
        return;
    request q;
    memset(&q, 0, sizeof q);
    q.type = REQ_QUIT;
    w->quit_sent = kf_write_full(w->to, &q, sizeof q) == 0;
    if (!w->quit_sent)
        worker_kill(w);
}

bool worker_release(gpu_worker *w)
{
    bool left = false;
    if (!w)
        return false;
    reap_left(false);
    if (w->pid > 0) {
        worker_quit(w);
        if (w->pid > 0 && waitpid(w->pid, NULL, WNOHANG) == 0) {
            if (left_n == LEFT_MAX)
                reap_left(true);
            left_pid[left_n++] = w->pid;
            left = true;
        }
        w->pid = -1;
    }
    close(w->to);
    close(w->from);
    free(w);
    return left;
}

void worker_free(gpu_worker *w)
{
    if (!w)
        return;
    if (w->pid > 0) {
        worker_quit(w);
        if (w->pid > 0 && waitpid(w->pid, NULL, 0) != w->pid)
            worker_kill(w);
        w->pid = -1;
    }
    close(w->to);
    close(w->from);
    free(w);
}
