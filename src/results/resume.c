/*
 * resume.c -- see resume.h.
 */
#include "resume.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "family.h"
#include "results.h"
#include "util.h"

#define KEY_MAX 2048

void resume_init(resume_state *rs) { memset(rs, 0, sizeof *rs); }

int resume_source_check(const kf_result *r)
{
    const char *now = family_of(&r->v)->source_hash;
    if (!now || !now[0] || strcmp(r->source_hash, now) == 0)
        return 0;
    return r->source_hash[0] ? 1 : 2;
}

static int add(const kf_result *r, void *ctx)
{
    resume_state *rs = ctx;
    int src = resume_source_check(r);
    if (src) {
        if (src == 1)
            rs->stale++;
        else
            rs->unhashed++;
        return 0;
    }
    char key[KEY_MAX];
    results_key_of(r, key, sizeof key);
    if (rs->ndone == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 64;
        kf_result *d = realloc(rs->done, sizeof *d * (size_t)cap);
        if (!d)
            return -1;
        rs->done = d;
        rs->cap = cap;
    }
    int i = kf_strset_add(&rs->keys, key, NULL);
    if (i < 0)
        return -1;
    /* a later line for the same case replaces the earlier one */
    rs->done[i] = *r;
    if (i == rs->ndone)
        rs->ndone++;
    return 0;
}

const kf_result *resume_find(const resume_state *rs, const kf_variant *v, const kf_shape *s, const kf_bench *b,
                             const char *device)
{
    char key[KEY_MAX];
    results_case_key(v, s, b, device, key, sizeof key);
    int i = kf_strset_find(&rs->keys, key);
    return i >= 0 ? &rs->done[i] : NULL;
}

/* Loads the lines of path from byte offset on. */
static int load_from(resume_state *rs, const char *path, long offset, char *err, size_t errlen)
{
    return results_read_from(path, offset, add, rs, NULL, err, errlen);
}

int resume_load_all(resume_state *rs, const char *results_path, char *err, size_t errlen)
{
    return load_from(rs, results_path, 0, err, errlen);
}

// ---------------------------------------------------------------------------
// the state file: "kforge-state 2" then "<identity> <offset>" lines

#define STATE_MAX 256

typedef struct {
    char id[33];
    long off;
} entry;

/* Opens and locks the state file; reads its entries. */
static int state_open(const char *path, entry *e, int *n, char *err, size_t errlen)
{
    int fd;
    for (;;) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            kf_err(err, errlen, "%s: cannot open the resume state, kept beside the results file (its folder must "
                                "be writable): %s", path, strerror(errno));
            return -1;
        }
        int rc;
        do
            rc = flock(fd, LOCK_EX);
        while (rc < 0 && errno == EINTR);
        /* another command may have removed the file while we waited */
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            break;
        close(fd);
    }
    char buf[STATE_MAX * 64];
    long got = kf_read_full(fd, buf, sizeof buf - 1);
    *n = 0;
    if (got > 0) {
        buf[got] = '\0';
        char *save = NULL;
        for (char *l = strtok_r(buf, "\n", &save); l && *n < STATE_MAX; l = strtok_r(NULL, "\n", &save)) {
            entry x;
            if (sscanf(l, "%32s %ld", x.id, &x.off) == 2 && strlen(x.id) == 32 && x.off >= 0)
                e[(*n)++] = x;
        }
    }
    return fd;
}

/* Rewrites the entries and unlocks; an empty state removes the file. */
static int state_close(int fd, const char *path, const entry *e, int n, char *err, size_t errlen)
{
    strbuf b = {0};
    sb_append(&b, "kforge-state 2\n");
    for (int i = 0; i < n; i++)
        sb_printf(&b, "%s %ld\n", e[i].id, e[i].off);
    int rc = 0;
    if (n == 0) {
        unlink(path);
    } else if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) < 0 || kf_write_full(fd, b.s, b.len) != 0) {
        kf_err(err, errlen, "%s: cannot write the resume state: %s", path, strerror(errno));
        rc = -1;
    }
    sb_free(&b);
    close(fd);
    return rc;
}

int resume_begin(resume_state *rs, const char *results_path, const char *identity, int mode, char *err,
                 size_t errlen)
{
    snprintf(rs->state_path, sizeof rs->state_path, "%s.state", results_path);
    /* a results file whose name leaves no room for ".state" (NAME_MAX): a
     * hidden name beside it, from the hash of its name */
    const char *base = strrchr(results_path, '/');
    base = base ? base + 1 : results_path;
    if (strlen(base) + 6 > NAME_MAX) {
        char h[33];
        kf_hash_hex(base, strlen(base), h);
        int dirlen = (int)(base - results_path);
        snprintf(rs->state_path, sizeof rs->state_path, "%.*s.kforge-%.16s.state", dirlen, results_path, h);
    }
    kf_hash_hex(identity, strlen(identity), rs->id);
    struct stat st;
    long size = stat(results_path, &st) == 0 ? (long)st.st_size : 0;
    if (access(results_path, F_OK) == 0 && !S_ISREG(st.st_mode))
        return 0;   /* a device or a pipe: nothing to resume from, no state beside it */

    entry e[STATE_MAX];
    int n;
    int fd = state_open(rs->state_path, e, &n, err, errlen);
    if (fd < 0)
        return -1;
    int mine = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].id, rs->id) == 0)
            mine = i;
    if (mine >= 0 && e[mine].off > size)
        e[mine].off = size;  /* the file was truncated: start again from its end */
    int rc = 0;
    if (mine >= 0 && mode != 0)
        rc = load_from(rs, results_path, e[mine].off, err, errlen);
    if (rc == 0 && mode == 1 && mine < 0)
        rc = load_from(rs, results_path, 0, err, errlen);
    if (rc == 0 && mine < 0) {
        if (n == STATE_MAX) {   /* forget the oldest */
            memmove(e, e + 1, sizeof *e * (STATE_MAX - 1));
            n--;
        }
        snprintf(e[n].id, sizeof e[n].id, "%s", rs->id);
        /* where this command's cases begin: with mode 1 it took the whole
         * file's, so an interruption must leave 0 there, or the next
         * --resume would forget them and measure them again */
        e[n].off = mode == 1 ? 0 : size;
        n++;
    } else if (rc == 0 && mode == 0) {
        e[mine].off = size;
    }
    if (state_close(fd, rs->state_path, e, n, rc == 0 ? err : NULL, errlen) != 0)
        rc = -1;
    rs->active = rc == 0;
    return rc;
}

void resume_end(resume_state *rs)
{
    if (!rs->active)
        return;
    rs->active = false;
    entry e[STATE_MAX];
    int n;
    int fd = state_open(rs->state_path, e, &n, NULL, 0);
    if (fd < 0)
        return;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].id, rs->id) != 0)
            e[k++] = e[i];
    state_close(fd, rs->state_path, e, k, NULL, 0);
}

void resume_free(resume_state *rs)
{
    kf_strset_free(&rs->keys);
    free(rs->done);
    memset(rs, 0, sizeof *rs);
}

void resume_note_stale(const resume_state *rs, const char *prefix, const char *path)
{
    if (rs->stale)
        fprintf(stderr, "%s: ignored %d result%s of an older source in %s (the kernel's source or a header it "
                        "includes changed since they were measured)\n",
                prefix, rs->stale, rs->stale == 1 ? "" : "s", path);
    if (rs->unhashed)
        fprintf(stderr, "%s: ignored %d result%s of a user's kernel in %s that record no source hash (an older "
                        "kforge wrote them: the source they ran is not known)\n",
                prefix, rs->unhashed, rs->unhashed == 1 ? "" : "s", path);
}
