/*
 * util.c -- see util.h.
 */
#include "util.h"

volatile sig_atomic_t kf_interrupted = 0;

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// ---------------------------------------------------------------------------
// parallel for

typedef struct {
    int64_t n, grain, pieces;
    int64_t next;                   /* the next piece to take (atomic) */
    void (*fn)(void *ctx, int64_t piece, int64_t lo, int64_t hi);
    void *ctx;
} pfor;

static _Thread_local bool in_parallel_for;

static void *pfor_worker(void *arg)
{
    pfor *p = arg;
    in_parallel_for = true;
    for (;;) {
        int64_t k = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (k >= p->pieces)
            break;
        int64_t lo = k * p->grain, hi = lo + p->grain < p->n ? lo + p->grain : p->n;
        p->fn(p->ctx, k, lo, hi);
    }
    return NULL;
}

int kf_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

int64_t kf_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t piece, int64_t lo, int64_t hi),
                        void *ctx)
{
    if (n <= 0)
        return 0;
    if (grain < 1)
        grain = 1;
    pfor p = {.n = n, .grain = grain, .pieces = (n - 1) / grain + 1, .next = 0, .fn = fn, .ctx = ctx};
    int threads = kf_usable_cpus();
    if (threads > 64)
        threads = 64;
    if (threads > p.pieces)
        threads = (int)p.pieces;
    if (in_parallel_for || threads <= 1) {
        for (int64_t k = 0; k < p.pieces; k++)
            fn(ctx, k, k * grain, k * grain + grain < n ? k * grain + grain : n);
        return p.pieces;
    }
    pthread_t tid[64];
    int started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&tid[started], NULL, pfor_worker, &p) != 0)
            break;
    /* this thread works too; with no helper it does every piece */
    bool was = in_parallel_for;
    pfor_worker(&p);
    in_parallel_for = was;
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return p.pieces;
}

// ---------------------------------------------------------------------------
// string builder

static bool sb_grow(strbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void sb_appendn(strbuf *b, const char *s, size_t n)
{
    if (!sb_grow(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_append(strbuf *b, const char *s) { sb_appendn(b, s, strlen(s)); }

void sb_vprintf(strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !sb_grow(b, (size_t)n))
        return;
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sb_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

void sb_json_string(strbuf *b, const char *s)
{
    sb_append(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': sb_append(b, "\\\""); break;
        case '\\': sb_append(b, "\\\\"); break;
        case '\n': sb_append(b, "\\n"); break;
        case '\r': sb_append(b, "\\r"); break;
        case '\t': sb_append(b, "\\t"); break;
        default:
            if (*p < 0x20)
                sb_printf(b, "\\u%04x", *p);
            else
                sb_appendn(b, (const char *)p, 1);
        }
    }
    sb_append(b, "\"");
}

char *sb_take(strbuf *b)
{
    char *s = b->s;
    if (!s)
        s = calloc(1, 1);
    b->s = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return s;
}

void sb_free(strbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

// ---------------------------------------------------------------------------
// errors and files

/* The length of the UTF-8 character at p that is printable text (not a
 * C1 control, not overlong, no surrogate), or 0. */
static size_t utf8_printable(const unsigned char *p)
{
    if (p[0] >= 0x20 && p[0] < 0x7f)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        return (p[1] & 0xc0) == 0x80 && !(p[0] == 0xc2 && p[1] < 0xa0) ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

char *kf_printable(const char *s, char *buf, size_t len)
{
    if (!buf || !len)
        return buf;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = utf8_printable(p);
        char esc[8];
        if (n) {
            if (o + n >= len)
                break;
            memcpy(buf + o, p, n);
            o += n;
            p += n;
            continue;
        }
        if (*p == '\n' || *p == '\r' || *p == '\t')
            snprintf(esc, sizeof esc, "\\%c", *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't');
        else
            snprintf(esc, sizeof esc, "\\x%02x", *p);
        size_t e = strlen(esc);
        if (o + e >= len)
            break;
        memcpy(buf + o, esc, e);
        o += e;
        p++;
    }
    buf[o] = 0;
    return buf;
}

bool kf_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_printable(p);
        if (!n)
            return true;
        p += n;
    }
    return false;
}

void kf_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    char raw[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    kf_printable(raw, err, errlen);
}

static void too_large(const char *path, size_t max, char *err, size_t errlen)
{
    if (max % ((size_t)1 << 20) == 0)
        kf_err(err, errlen, "%s: larger than the %zu MiB limit", path, max >> 20);
    else
        kf_err(err, errlen, "%s: larger than the %zu-byte limit", path, max);
}

static char *read_file(const char *path, size_t max, bool regular, size_t *len, char *err, size_t errlen)
{
    bool is_stdin = !regular && strcmp(path, "-") == 0;
    /* O_NONBLOCK: a FIFO where a regular file is wanted opens at once (and
     * is refused below) instead of waiting for a writer */
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
    const char *name = is_stdin ? "<stdin>" : path;
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t got = 0, cap = 0;
    /* max + 1 bytes tell "too large" from "exactly max", plus the NUL */
    size_t most = max < SIZE_MAX - 2 ? max + 2 : SIZE_MAX;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        kf_err(err, errlen, "%s: is a directory", name);
        goto fail;
    }
    if (regular) {
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            kf_err(err, errlen, "%s: not a regular file (a FIFO, a device or a socket is never read here)", name);
            goto fail;
        }
        if ((uint64_t)st.st_size > (uint64_t)max) {
            too_large(name, max, err, errlen);
            goto fail;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    /* read(), not stdio: a signal must end the wait (EINTR) rather than be
     * retried, and a source without end (/dev/zero, `yes |`) stops at max. */
    for (;;) {
        if (got > max) {
            too_large(name, max, err, errlen);
            goto fail;
        }
        if (cap - got < 2) {
            size_t ncap = !cap ? (most < 65536 ? most : 65536) : cap <= most / 2 ? cap * 2 : most;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                kf_err(err, errlen, "%s: out of memory", name);
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + got, cap - got - 1);
        if (r == 0)
            break;
        if (r < 0) {
            /* kforge's SIGINT/SIGTERM handlers do not restart system calls */
            if (errno == EINTR)
                kf_err(err, errlen, "%s: interrupted", name);
            else
                kf_err(err, errlen, "%s: read error: %s", name, strerror(errno));
            goto fail;
        }
        got += (size_t)r;
    }
    if (!is_stdin)
        close(fd);
    buf[got] = '\0';
    if (len)
        *len = got;
    return buf;
fail:
    if (!is_stdin)
        close(fd);
    free(buf);
    return NULL;
}

const char *kf_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && t[0] == '/' ? t : "/tmp";
}

char *kf_read_file_max(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    return read_file(path, max, false, len, err, errlen);
}

char *kf_read_regular(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    return read_file(path, max, true, len, err, errlen);
}

char *kf_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    return kf_read_file_max(path, SIZE_MAX, len, err, errlen);
}

volatile sig_atomic_t kf_output_broken = 0;
static int output_errno; /* the errno of the first failed write to stdout */

void kf_output_failed(void)
{
    if (!kf_output_broken)
        output_errno = errno;
    kf_output_broken = 1;
}

bool kf_output_reader_gone(void)
{
    return kf_output_broken && output_errno == EPIPE;
}

int kf_stdout_close(char *err, size_t errlen)
{
    /* After gnulib's close_stdout: a stdout that was closed to begin with
     * (EBADF) is fine as long as nothing was written to it. */
    bool pending = __fpending(stdout) != 0;
    bool failed_before = ferror(stdout) != 0;
    int e = 0;
    if (failed_before) {
        /* The failed write's errno is gone; the usual cause is a pipe whose
         * reader has left, which poll() still tells. */
        struct pollfd pf = {.fd = fileno(stdout), .events = POLLOUT};
        if (pf.fd >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR))
            e = EPIPE;
        /* a stdout closed at the start is /dev/null opened read-only
         * (dispatch.c): it was as good as closed */
        int fl = pf.fd >= 0 ? fcntl(pf.fd, F_GETFL) : -1;
        if (fl != -1 && (fl & O_ACCMODE) == O_RDONLY)
            e = EBADF;
        if (!e && output_errno)
            e = output_errno;
    }
    errno = 0;
    bool close_failed = fclose(stdout) != 0;
    if (close_failed && errno)
        e = errno;
    if (!failed_before && (!close_failed || (!pending && e == EBADF)))
        return 0;
    if (e == EPIPE)
        return -2;
    if (e)
        kf_err(err, errlen, "write error on standard output: %s", strerror(e));
    else
        kf_err(err, errlen, "write error on standard output");
    return -1;
}

/* This host's short name, as characters safe in a file name ("host" when
 * it has none). */
static void host_tag(char *buf, size_t len)
{
    char h[256];
    if (gethostname(h, sizeof h) != 0)
        h[0] = '\0';
    h[sizeof h - 1] = '\0';
    size_t n = 0;
    for (const char *p = h; *p && *p != '.' && n + 1 < len && n < 32; p++)
        buf[n++] = (isalnum((unsigned char)*p) || *p == '-' || *p == '_') ? *p : '_';
    buf[n] = '\0';
    if (n == 0)
        snprintf(buf, len, "host");
}

int kf_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    /* The temporary file is this call's alone: named after the host, the
     * process, a counter and a random number, and created with O_EXCL.
     * Several processes, threads or hosts may write the same path at once
     * (a cubin cache on a shared file system: processes on two nodes may
     * have the same pid), and each renames only what it wrote itself.
     * rename() within a directory is atomic, on NFS too, so a reader sees
     * the old file or the new one, whole; no lock is taken. */
    static atomic_uint seq;
    char host[40], tmp[PATH_MAX];
    host_tag(host, sizeof host);
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        unsigned n = atomic_fetch_add(&seq, 1);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t r = kf_hash64(&ts, sizeof ts, ((uint64_t)getpid() << 32) ^ n);
        if (snprintf(tmp, sizeof tmp, "%s.tmp.%s.%ld.%u.%08x", path, host, (long)getpid(), n, (unsigned)r) >=
            (int)sizeof tmp) {
            kf_err(err, errlen, "%s: path too long", path);
            return -1;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) {
            kf_err(err, errlen, "%s: cannot write: the file that replaces it whole is made beside it first, and "
                                "its folder does not take it (%s): %s", path, tmp, strerror(errno));
            return -1;
        }
    }
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        return -1;
    }
    int wr = kf_write_full(fd, data, len), we = errno;
    if (close(fd) != 0 && wr == 0) {
        wr = -1;
        we = errno;
    }
    if (wr != 0) {
        kf_err(err, errlen, "%s: write failed: %s", tmp, strerror(we));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        kf_err(err, errlen, "%s: rename failed: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int kf_mkdir_p(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        kf_err(err, errlen, "%s: path too long", path);
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            kf_err(err, errlen, "%s: cannot create directory: %s", buf, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        kf_err(err, errlen, "%s: cannot create directory: %s", buf, strerror(errno));
        return -1;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// hashing (FNV-1a 64 with a final avalanche; two seeds make 128 bits)

uint64_t kf_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

void kf_hash_hex(const void *data, size_t len, char out[33])
{
    uint64_t a = kf_hash64(data, len, 0);
    uint64_t b = kf_hash64(data, len, 0x9e3779b97f4a7c15ULL);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

// ---------------------------------------------------------------------------
// suggestions

int kf_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 256 || lb > 256)
        return INT_MAX;
    int prev[257], cur[257];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (prev[j - 1] + cost < best)
                best = prev[j - 1] + cost;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

const char *kf_suggest(const char *s, const char *const *candidates, int count)
{
    const char *best = NULL;
    int bestd = INT_MAX;
    for (int i = 0; i < count; i++) {
        int d = kf_edit_distance(s, candidates[i]);
        if (d < bestd) {
            bestd = d;
            best = candidates[i];
        }
    }
    int limit = (int)strlen(s) / 3;
    if (limit < 2)
        limit = 2;
    return bestd <= limit ? best : NULL;
}

// ---------------------------------------------------------------------------
// clocks, fds, numbers

double kf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int trace_on = -1;
static double trace_t0;

bool kf_trace_on(void)
{
    if (trace_on < 0) {
        const char *e = getenv("KFORGE_TRACE");
        trace_on = e && *e && strcmp(e, "0") != 0;
        trace_t0 = kf_now();
    }
    return trace_on > 0;
}

void kf_trace(const char *fmt, ...)
{
    if (!kf_trace_on())
        return;
    double t0 = trace_t0;
    char line[256];
    int n = snprintf(line, sizeof line, "kforge: trace %.3f s [%ld]: ", kf_now() - t0, (long)getpid());
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && n < (int)sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    (void)!write(2, line, len); /* one write: lines of several processes do not mix */
}

void kf_iso_time(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

long kf_read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (long)got;
}

int kf_write_full(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, (const char *)buf + done, len - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

bool kf_parse_ll(const char *s, long long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool kf_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

// ---------------------------------------------------------------------------
// times

void kf_sig4(char *buf, size_t len, double v)
{
    int mag = (int)floor(log10(v));
    int dec = 3 - mag;
    if (dec < 0)
        dec = 0;
    snprintf(buf, len, "%.*f", dec, v);
    if (dec > 0 && strtod(buf, NULL) >= pow(10, mag + 1))
        snprintf(buf, len, "%.*f", dec - 1, v);     /* 9.9996 rounded to 10.000 */
}

void kf_fmt_ms(char *buf, size_t len, double ms, bool fixed)
{
    if (fixed) {
        if (!(ms > 0) || !isfinite(ms)) {
            snprintf(buf, len, "-");
            return;
        }
        char num[40];
        bool us = ms < 1;
        kf_sig4(num, sizeof num, us ? ms * 1000 : ms);
        snprintf(buf, len, "%s %s", num, us ? "us" : "ms");
    } else if (!isfinite(ms)) {
        snprintf(buf, len, "-");
    } else if (ms < 1) {
        snprintf(buf, len, "%.4g us", ms * 1e3);
    } else if (ms < 1000) {
        snprintf(buf, len, "%.4g ms", ms);
    } else {
        snprintf(buf, len, "%.4g s", ms / 1e3);
    }
}

// ---------------------------------------------------------------------------
// the hash table

struct kf_index_slot {
    uint64_t hash;
    size_t item;            /* item + 1; 0 empty */
};

long kf_index_find(const kf_index *x, uint64_t hash, kf_index_eq eq, const void *ctx, const void *key)
{
    if (!x->size)
        return -1;
    for (size_t i = hash & (x->size - 1);; i = (i + 1) & (x->size - 1)) {
        const struct kf_index_slot *e = &x->slot[i];
        if (!e->item)
            return -1;
        if (e->hash == hash && eq(ctx, e->item - 1, key))
            return (long)(e->item - 1);
    }
}

static void index_place(struct kf_index_slot *t, size_t size, uint64_t hash, size_t item1)
{
    size_t i = hash & (size - 1);
    while (t[i].item)
        i = (i + 1) & (size - 1);
    t[i].hash = hash;
    t[i].item = item1;
}

int kf_index_add(kf_index *x, uint64_t hash, size_t item)
{
    if ((x->count + 1) * 2 > x->size) {    /* at most half full */
        size_t ns = x->size ? x->size * 2 : 64;
        struct kf_index_slot *t = calloc(ns, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < x->size; i++)
            if (x->slot[i].item)
                index_place(t, ns, x->slot[i].hash, x->slot[i].item);
        free(x->slot);
        x->slot = t;
        x->size = ns;
    }
    index_place(x->slot, x->size, hash, item + 1);
    x->count++;
    return 0;
}

void kf_index_free(kf_index *x)
{
    free(x->slot);
    memset(x, 0, sizeof *x);
}

// ---------------------------------------------------------------------------
// string sets

static uint64_t strset_hash(const char *key) { return kf_hash64(key, strlen(key), 5); }

static bool strset_eq(const void *ctx, size_t item, const void *key)
{
    const kf_strset *s = ctx;
    return strcmp(s->keys[item], key) == 0;
}

int kf_strset_find(const kf_strset *s, const char *key)
{
    return (int)kf_index_find(&s->index, strset_hash(key), strset_eq, s, key);
}

int kf_strset_add(kf_strset *s, const char *key, bool *added)
{
    int i = kf_strset_find(s, key);
    if (added)
        *added = i < 0;
    if (i >= 0)
        return i;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 64;
        char **nk = realloc(s->keys, sizeof *nk * (size_t)nc);
        if (!nk)
            return -1;
        s->keys = nk;
        s->cap = nc;
    }
    if (!(s->keys[s->n] = strdup(key)))
        return -1;
    if (kf_index_add(&s->index, strset_hash(key), (size_t)s->n) != 0) {
        free(s->keys[s->n]);
        return -1;
    }
    return s->n++;
}

void kf_strset_free(kf_strset *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->keys[i]);
    free(s->keys);
    kf_index_free(&s->index);
    memset(s, 0, sizeof *s);
}
