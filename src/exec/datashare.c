/*
 * datashare.c -- see datashare.h.
 */
#include "datashare.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

enum { DS_FREE, DS_MAKING, DS_READY };
#define DS_ENTRIES 256
#define DS_ALIGN ((size_t)4096) /* whole pages: an entry given up frees its own */
#define DS_NONE ((size_t)-1)

/* One key's data in the region: the inputs' contents, the outputs'
 * references and their aux values, laid out as data_make allocates them. */
typedef struct {
    int state;
    pid_t maker;            /* DS_MAKING: the process making it */
    int readers;            /* pins: workers reading or keeping its inputs */
    uint64_t used;          /* LRU tick */
    size_t off, bytes;      /* where in the region */
    data_key key;
    size_t at_host[KF_MAX_BUFFERS], at_ref[KF_MAX_BUFFERS], at_aux[KF_MAX_BUFFERS]; /* within, or DS_NONE */
} ds_entry;

typedef struct {
    pthread_mutex_t mu;     /* process-shared and robust: a dead holder does not block the others */
    uint64_t tick;
    int made;
    size_t cap;             /* bytes of data after the head */
    ds_entry e[DS_ENTRIES];
} ds_head;

static ds_head *H;          /* the region (inherited by the workers), or NULL: no sharing */
static size_t H_len;
static int H_opens;
/* one making at a time in a process (the families' fill and reference were
 * never run on two threads at once; each runs on every CPU already) */
static pthread_mutex_t make_mu = PTHREAD_MUTEX_INITIALIZER;

static char *ds_base(void) { return (char *)H + ((sizeof *H + DS_ALIGN - 1) & ~(DS_ALIGN - 1)); }

/* The cgroup's memory limit (v2, else v1), or 0 when none is set. */
static size_t cgroup_limit(void)
{
    const char *files[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(files[i], "r");
        if (!f)
            continue;
        unsigned long long v = 0;
        int got = fscanf(f, "%llu", &v);
        fclose(f);
        if (got == 1 && v > 0 && v < ((unsigned long long)1 << 60))
            return (size_t)v;
    }
    return 0;
}

/* The region's size in bytes; 0: sharing off. */
static size_t ds_budget(void)
{
    const char *e = getenv("KFORGE_SHARED_INPUTS");
    if (e && *e) {
        /* 0: off; NM or NG: N MiB or GiB; anything else (1): the default */
        char *end;
        long long n = strtoll(e, &end, 10);
        if (*end == '\0' && n <= 0)
            return 0;
        if (end != e && n > 0 && n < ((long long)1 << 30) && (strcmp(end, "M") == 0 || strcmp(end, "G") == 0))
            return (size_t)n << (*end == 'G' ? 30 : 20);
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t mem = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0, cg = cgroup_limit();
    if (cg && cg < mem)
        mem = cg;
    return mem / 4;
}

void datashare_open(void)
{
    if (H_opens++ > 0 || H)
        return;
    size_t cap = ds_budget() & ~(DS_ALIGN - 1);
    if (cap == 0)
        return;
    size_t head = (sizeof *H + DS_ALIGN - 1) & ~(DS_ALIGN - 1);
    void *p = mmap(NULL, head + cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        kf_trace("shared data: no region (%s): each worker makes its own", strerror(errno));
        return;
    }
    ds_head *h = p;
    /* huge pages where the kernel gives them to shared memory: a 4 GiB input
     * in 2 MiB pages faults 512 times less (best effort) */
    (void)madvise((char *)p + head, cap, MADV_HUGEPAGE);
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0 || pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) != 0 ||
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) != 0 || pthread_mutex_init(&h->mu, &a) != 0) {
        munmap(p, head + cap);
        return;
    }
    pthread_mutexattr_destroy(&a);
    h->cap = cap;
    H = h;
    H_len = head + cap;
    kf_trace("shared data: a region of %zu MiB", cap >> 20);
}

/* A process, not waited for, that maps the region until this one has
 * unmapped it (the pipe's write end, *wfd, closed): the last process to
 * unmap a shared region gives its pages back to the system, ~0.1 s a GiB
 * (A10: 0.47 s on 4 H200s, 0.75 s on 1, at kforge's exit), and the GPU
 * workers, still exiting, may be gone before.  A grandchild, so that
 * nobody has to reap it; every descriptor closed but the pipe, so that
 * nothing waits for its end of another.  Its pid, or -1 (then *wfd is -1). */
static pid_t ds_holder(int *wfd)
{
    int fd[2];
    *wfd = -1;
    if (pipe(fd) != 0)
        return -1;
    int pp[2]; /* the grandchild's pid, from the child */
    if (pipe(pp) != 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    pid_t mid = fork();
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            long lim = sysconf(_SC_OPEN_MAX);
            if (lim < 0 || lim > 65536)
                lim = 65536;
            for (int i = 0; i < lim; i++)
                if (i != fd[0])
                    close(i);
            char c;
            while (read(fd[0], &c, 1) < 0 && errno == EINTR)
                ;
            _exit(0);
        }
        ssize_t w = write(pp[1], &g, sizeof g);
        _exit(w == (ssize_t)sizeof g ? 0 : 1);
    }
    close(fd[0]);
    close(pp[1]);
    pid_t g = -1;
    if (mid > 0) {
        if (read(pp[0], &g, sizeof g) != (ssize_t)sizeof g)
            g = -1;
        while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(pp[0]);
    if (g <= 0) {
        close(fd[1]);
        return -1;
    }
    *wfd = fd[1];
    return g;
}

void datashare_close(void)
{
    if (H_opens > 0 && --H_opens > 0)
        return;
    if (!H)
        return;
    int made = H->made, wfd = -1;
    pthread_mutex_destroy(&H->mu);
    pid_t holder = made > 0 ? ds_holder(&wfd) : -1;
    munmap(H, H_len);
    if (wfd >= 0)
        close(wfd); /* the holder unmaps it now */
    if (holder > 0)
        kf_trace("shared data: %d key%s made; the region given back by process %ld, not waited for", made,
                 made == 1 ? "" : "s", (long)holder);
    else
        kf_trace("shared data: %d key%s made", made, made == 1 ? "" : "s");
    H = NULL;
    H_len = 0;
}

bool datashare_on(void) { return H != NULL; }

int datashare_made(void) { return H ? H->made : 0; }

static void ds_lock(void)
{
    if (pthread_mutex_lock(&H->mu) == EOWNERDEAD)
        pthread_mutex_consistent(&H->mu); /* the table is whole between its statements */
}

static void ds_unlock(void) { pthread_mutex_unlock(&H->mu); }

static void nap_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static bool alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

static size_t up(size_t n) { return (n + DS_ALIGN - 1) & ~(DS_ALIGN - 1); }

/* The layout of set's data in an entry (data_make's allocations); its bytes. */
static size_t ds_layout(const kf_buffer_set *set, ds_entry *E)
{
    size_t at = 0;
    for (int i = 0; i < KF_MAX_BUFFERS; i++)
        E->at_host[i] = E->at_ref[i] = E->at_aux[i] = DS_NONE;
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *b = &set->b[i];
        if (role_is_input(b->role)) {
            E->at_host[i] = at;
            at += (data_bytes(b) + 1 + 63) & ~(size_t)63;
        }
        if (role_is_output(b->role)) {
            E->at_ref[i] = at;
            at += (data_bytes(b) + 1 + 63) & ~(size_t)63;
            E->at_aux[i] = at;
            at += ((size_t)b->elems + 1) * sizeof(double);
            at = (at + 63) & ~(size_t)63;
        }
    }
    return up(at ? at : 1);
}

/* The first gap of need bytes in the region (under the lock): its offset, or DS_NONE. */
static size_t ds_place(size_t need)
{
    size_t at = 0;
    for (;;) {
        bool moved = false;
        for (int i = 0; i < DS_ENTRIES; i++) {
            const ds_entry *x = &H->e[i];
            if (x->state != DS_FREE && x->off < at + need && at < x->off + x->bytes) {
                at = x->off + x->bytes; /* overlaps: try after it */
                moved = true;
            }
        }
        if (at + need > H->cap)
            return DS_NONE;
        if (!moved)
            return at;
    }
}

/* Gives up entry x (ready, unpinned): its pages go back to the system. */
static void ds_evict(ds_entry *x)
{
    (void)madvise(ds_base() + x->off, x->bytes, MADV_REMOVE);
    x->state = DS_FREE;
    kf_trace("shared data: a key given up for room");
}

/* The least recently used ready, unpinned entry, or NULL. */
static ds_entry *ds_victim(void)
{
    ds_entry *v = NULL;
    for (int i = 0; i < DS_ENTRIES; i++) {
        ds_entry *x = &H->e[i];
        if (x->state == DS_READY && x->readers == 0 && (!v || x->used < v->used))
            v = x;
    }
    return v;
}

/* A new entry for key k, its data bytes long, made by this process (under
 * the lock): its index, or -1 when it cannot have room. */
static int ds_claim(const data_key *k, const kf_buffer_set *set)
{
    ds_entry tmp;
    size_t need = ds_layout(set, &tmp);
    if (need > H->cap)
        return -1;
    int slot = -1;
    for (int i = 0; i < DS_ENTRIES && slot < 0; i++)
        if (H->e[i].state == DS_FREE)
            slot = i;
    size_t off;
    for (;;) {
        off = slot >= 0 ? ds_place(need) : DS_NONE;
        if (off != DS_NONE)
            break;
        ds_entry *v = ds_victim();
        if (!v)
            return -1;
        ds_evict(v);
        if (slot < 0)
            slot = (int)(v - H->e);
    }
    ds_entry *E = &H->e[slot];
    *E = tmp;
    E->key = *k;
    E->off = off;
    E->bytes = need;
    E->maker = getpid();
    E->readers = 1;
    E->used = ++H->tick;
    E->state = DS_MAKING;
    return slot;
}

/* Fills entry E's inputs and references, as data_make does. */
static void ds_make(ds_entry *E, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact,
                    const kf_buffer_set *set)
{
    double t0 = kf_now();
    const kf_family *f = family_of(v);
    char *base = ds_base() + E->off;
    void *host[KF_MAX_BUFFERS] = {0}, *ref[KF_MAX_BUFFERS] = {0};
    double *aux[KF_MAX_BUFFERS] = {0};
    for (int i = 0; i < set->n; i++) {
        const kf_buffer *b = &set->b[i];
        if (E->at_host[i] != DS_NONE) {
            host[i] = base + E->at_host[i];
            f->fill(v, s, i, seed, exact, host[i], b->elems);
        }
        if (E->at_ref[i] != DS_NONE) {
            ref[i] = base + E->at_ref[i];
            aux[i] = (double *)(void *)(base + E->at_aux[i]);
            memset(aux[i], 0, ((size_t)b->elems + 1) * sizeof(double)); /* as calloc: a dead maker's left nothing */
        }
    }
    f->reference(v, s, (const void *const *)host, ref, aux);
    kf_trace("data made: key %016llx (%s data, shared, %.3f s)", (unsigned long long)data_key_hash(&E->key),
             exact ? "exact" : "realistic", kf_now() - t0);
}

/* Key k's entry, ready and pinned once for this process: its index, or -1
 * when the region has no room for it (then it is made privately). */
static int ds_acquire(const data_key *k, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact,
                      const kf_buffer_set *set)
{
    ds_lock();
    for (;;) {
        int found = -1;
        for (int i = 0; i < DS_ENTRIES && found < 0; i++)
            if (H->e[i].state != DS_FREE && data_key_eq(&H->e[i].key, k))
                found = i;
        if (found >= 0 && H->e[found].state == DS_READY) {
            H->e[found].readers++;
            H->e[found].used = ++H->tick;
            ds_unlock();
            return found;
        }
        bool ours = false;
        if (found >= 0 && !alive(H->e[found].maker)) {
            /* its maker died: this process makes it */
            if (pthread_mutex_trylock(&make_mu) == 0) {
                H->e[found].maker = getpid();
                H->e[found].readers = 1;
                ours = true;
            }
        } else if (found < 0) {
            if (pthread_mutex_trylock(&make_mu) == 0) {
                found = ds_claim(k, set);
                if (found < 0) {
                    pthread_mutex_unlock(&make_mu);
                    ds_unlock();
                    return -1;
                }
                ours = true;
            }
        }
        if (ours) {
            ds_entry *E = &H->e[found];
            ds_unlock();
            ds_make(E, v, s, seed, exact, set);
            pthread_mutex_unlock(&make_mu);
            ds_lock();
            E->state = DS_READY;
            H->made++;
            ds_unlock();
            return found;
        }
        /* another process makes it, or this one makes another key: wait */
        ds_unlock();
        nap_ms(1);
        ds_lock();
    }
}

int data_make_shared(data_set *d, const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    if (!H)
        return data_make(d, v, s, seed, exact);
    data_key k;
    data_key_of(&k, v, s, seed, exact);
    memset(d, 0, sizeof *d);
    variant_buffers(v, s, NULL, &d->set);
    int e = ds_acquire(&k, v, s, seed, exact, &d->set);
    if (e < 0) { /* no room: made here, as without sharing (one making at a time in a process) */
        pthread_mutex_lock(&make_mu);
        int rc = data_make(d, v, s, seed, exact);
        pthread_mutex_unlock(&make_mu);
        return rc;
    }
    const ds_entry *E = &H->e[e];
    char *base = ds_base() + E->off;
    d->pin = e + 1;
    for (int i = 0; i < d->set.n; i++) {
        const kf_buffer *b = &d->set.b[i];
        if (E->at_host[i] != DS_NONE)
            d->host[i] = base + E->at_host[i];
        if (E->at_ref[i] != DS_NONE) {
            /* the references are the worker's own: kept per key as long as it likes */
            size_t rb = data_bytes(b) + 1, ab = ((size_t)b->elems + 1) * sizeof(double);
            if (!(d->ref[i] = malloc(rb)) || !(d->aux[i] = malloc(ab))) {
                data_free(d);
                return -1;
            }
            memcpy(d->ref[i], base + E->at_ref[i], rb);
            memcpy(d->aux[i], base + E->at_aux[i], ab);
        }
    }
    return 0;
}

void datashare_prefetch(const kf_variant *v, const kf_shape *s, uint64_t seed, bool exact)
{
    if (!H)
        return;
    data_key k;
    data_key_of(&k, v, s, seed, exact);
    kf_buffer_set set;
    variant_buffers(v, s, NULL, &set);
    int e = ds_acquire(&k, v, s, seed, exact, &set);
    if (e >= 0) {
        ds_lock();
        H->e[e].readers--;
        ds_unlock();
    }
}

void datashare_release(data_set *d)
{
    if (!d->pin)
        return;
    if (H && d->pin > 0 && d->pin <= DS_ENTRIES) {
        ds_lock();
        if (H->e[d->pin - 1].readers > 0)
            H->e[d->pin - 1].readers--;
        ds_unlock();
    }
    d->pin = 0;
    for (int i = 0; i < KF_MAX_BUFFERS; i++)
        d->host[i] = NULL;
}
