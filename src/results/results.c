/*
 * results.c -- see results.h: the file (appending, reading line by line).
 * The line itself is line.c's.
 */
#include "results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define LINE_MAX_BYTES (1 << 20)
/* More than this read without a results line, and the file is not one
 * (/dev/zero, `yes |`): the read ends with an error instead of going on. */
#define RESULTS_GARBAGE_MAX ((size_t)16 << 20)

// ----------------------------------------------------------------------------
// Appending

struct results_file {
    int fd;
    char path[4096];
};

results_file *results_open(const char *path, char *err, size_t errlen)
{
    /* read access too: results_append looks at the last byte */
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot open the results file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        kf_err(err, errlen, "%s: is a directory, not a results file", path);
        return NULL;
    }
    results_file *f = malloc(sizeof *f);
    if (!f) {
        close(fd);
        kf_err(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

static int lock(int fd, int op)
{
    int rc;
    do
        rc = flock(fd, op);
    while (rc < 0 && errno == EINTR);
    return rc;
}

int results_append(results_file *f, const char *line, char *err, size_t errlen)
{
    if (!f || !line) {
        kf_err(err, errlen, "results: nothing to append");
        return -1;
    }
    size_t len = strlen(line);
    if (memchr(line, '\n', len)) {
        kf_err(err, errlen, "%s: internal error: a results line holds a newline", f->path);
        return -1;
    }
    char *buf = malloc(len + 2);
    if (!buf) {
        kf_err(err, errlen, "%s: out of memory", f->path);
        return -1;
    }
    int rc = -1;
    if (lock(f->fd, LOCK_EX) < 0) {
        kf_err(err, errlen, "%s: cannot lock the results file: %s", f->path, strerror(errno));
        goto out;
    }
    /* a crash may have left a partial line: start ours on a line of its own */
    size_t off = 1;
    struct stat st;
    bool sized = fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode);
    if (sized && st.st_size > 0) {
        char last;
        if (pread(f->fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
            off = 0;
    }
    buf[0] = '\n';
    memcpy(buf + 1, line, len);
    buf[len + 1] = '\n';
    rc = kf_write_full(f->fd, buf + off, len + 2 - off) == 0 ? 0 : -1;
    if (rc != 0) {
        int e = errno;
        /* a full disk or a file-size limit (EFBIG) can take part of the
         * line: cut the file back to where it ended, so that it never
         * ends in half a line (the lock is held: nobody appended since) */
        if (sized && ftruncate(f->fd, st.st_size) != 0)
            kf_err(err, errlen, "%s: cannot append a result: %s (and a partial line is left at its end: %s)",
                   f->path, strerror(e), strerror(errno));
        else
            kf_err(err, errlen, "%s: cannot append a result: %s", f->path, strerror(e));
    }
    lock(f->fd, LOCK_UN);
out:
    free(buf);
    return rc;
}

void results_close(results_file *f)
{
    if (!f)
        return;
    close(f->fd);
    free(f);
}

// ----------------------------------------------------------------------------
// Reading

typedef struct {
    int (*fn)(const kf_result *r, void *ctx);
    void *ctx;
} parsed_ctx;

static int parsed_only(const char *line, long lineno, const kf_result *r, void *ctx)
{
    (void)line;
    (void)lineno;
    const parsed_ctx *p = ctx;
    return p->fn(r, p->ctx);
}

int results_read(const char *path, int (*fn)(const kf_result *r, void *ctx), void *ctx, int *skipped, char *err,
                 size_t errlen)
{
    return results_read_from(path, 0, fn, ctx, skipped, err, errlen);
}

int results_read_from(const char *path, long offset, int (*fn)(const kf_result *r, void *ctx), void *ctx,
                      int *skipped, char *err, size_t errlen)
{
    parsed_ctx p = {fn, ctx};
    return results_read_lines(path, offset, parsed_only, &p, skipped, err, errlen);
}

int results_read_lines(const char *path, long offset, results_line_fn fn, void *ctx, int *skipped, char *err,
                       size_t errlen)
{
    if (skipped)
        *skipped = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        kf_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        kf_err(err, errlen, "%s: is a directory, not a results file", path);
        return -1;
    }
    /* shared lock: no line is half-written while we read */
    lock(fd, LOCK_SH);
    if (offset > 0 && lseek(fd, offset, SEEK_SET) < 0)
        offset = 0;
    int ret = 0;
    size_t cap = 1 << 16, len = 0;
    size_t since_good = 0;      /* bytes read since the last results line */
    long lineno = 1;
    char *line = malloc(cap + 1);
    char chunk[1 << 16];
    bool too_long = false, stop = false;
    kf_result *res = malloc(sizeof *res);
    if (!line || !res) {
        kf_err(err, errlen, "%s: out of memory", path);
        ret = -1;
        goto out;
    }
    while (!stop) {
        /* a read of a regular file is never interrupted by a signal: look */
        if (kf_interrupted) {
            kf_err(err, errlen, "%s: interrupted", path);
            ret = -1;
            break;
        }
        if (since_good > RESULTS_GARBAGE_MAX) {
            kf_err(err, errlen, "%s: %zu MiB without a results line: not a results file", path,
                   RESULTS_GARBAGE_MAX >> 20);
            ret = -1;
            break;
        }
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            kf_err(err, errlen, "%s: %s", path, strerror(errno));
            ret = -1;
            break;
        }
        if (got == 0)
            break;
        since_good += (size_t)got;
        for (ssize_t i = 0; i < got && !stop; i++) {
            char ch = chunk[i];
            if (ch == '\0')
                continue;       /* damaged bytes (a crash can leave blocks of NULs) */
            if (ch != '\n') {
                if (len >= LINE_MAX_BYTES) {
                    too_long = true;
                    continue;
                }
                if (len == cap) {
                    size_t nc = cap * 2;
                    char *nl = realloc(line, nc + 1);
                    if (!nl) {
                        too_long = true;
                        continue;
                    }
                    line = nl;
                    cap = nc;
                }
                line[len++] = ch;
                continue;
            }
            line[len] = '\0';
            if (too_long) {
                if (skipped)
                    (*skipped)++;
            } else if (len > 0) {
                if (results_parse_line(line, res, NULL, 0) == 0) {
                    since_good = (size_t)(got - i);
                    if (fn(line, lineno, res, ctx) != 0)
                        stop = true;
                } else if (skipped) {
                    (*skipped)++;
                }
            }
            lineno++;
            len = 0;
            too_long = false;
        }
    }
    if (!stop && ret == 0 && (len > 0 || too_long) && skipped)
        (*skipped)++;   /* unterminated: a write still in flight or a crash */
out:
    lock(fd, LOCK_UN);
    free(line);
    free(res);
    close(fd);
    return ret;
}

int results_unknown_kernel(const char *path, char *kernel, size_t len)
{
    kernel[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL, name[256];
    size_t cap = 0;
    int count = 0;
    while (getline(&line, &cap, f) >= 0 && !kf_interrupted)
        if (results_line_unknown_kernel(line, name, sizeof name) && count++ == 0)
            snprintf(kernel, len, "%s", name);
    free(line);
    fclose(f);
    return count;
}
