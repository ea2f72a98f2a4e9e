/*
 * resume.c -- see resume.h.
 */
#include "resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "util.h"

void resume_init(resume_state *rs) { memset(rs, 0, sizeof *rs); }

static int add(resume_state *rs, const kf_result *r)
{
    char key[1024];
    report_case_key(&r->v, r->n, key, sizeof key);
    /* a later line for the same case replaces the earlier one */
    const kf_result *old = resume_find(rs, &r->v, r->n);
    if (old) {
        rs->done[old - rs->done] = *r;
        return 0;
    }
    if (rs->ndone == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 64;
        kf_result *d = realloc(rs->done, sizeof *d * (size_t)cap);
        if (!d)
            return -1;
        rs->done = d;
        char **k = realloc(rs->keys, sizeof *k * (size_t)cap);
        if (!k)
            return -1;
        rs->keys = k;
        rs->cap = cap;
    }
    rs->done[rs->ndone] = *r;
    rs->keys[rs->ndone] = strdup(key);
    if (!rs->keys[rs->ndone])
        return -1;
    rs->ndone++;
    /* rebuild the index when it gets half full */
    if (rs->ndone * 2 > rs->tsize) {
        int ts = rs->tsize ? rs->tsize * 2 : 256;
        while (ts < rs->ndone * 2)
            ts *= 2;
        int *t = malloc(sizeof *t * (size_t)ts);
        if (!t)
            return -1;
        for (int i = 0; i < ts; i++)
            t[i] = -1;
        for (int i = 0; i < rs->ndone; i++) {
            uint64_t h = kf_hash64(rs->keys[i], strlen(rs->keys[i]), 0) & (uint64_t)(ts - 1);
            while (t[h] >= 0)
                h = (h + 1) & (uint64_t)(ts - 1);
            t[h] = i;
        }
        free(rs->table);
        rs->table = t;
        rs->tsize = ts;
    } else {
        int i = rs->ndone - 1;
        uint64_t h = kf_hash64(rs->keys[i], strlen(rs->keys[i]), 0) & (uint64_t)(rs->tsize - 1);
        while (rs->table[h] >= 0)
            h = (h + 1) & (uint64_t)(rs->tsize - 1);
        rs->table[h] = i;
    }
    return 0;
}

const kf_result *resume_find(const resume_state *rs, const kf_variant *v, int64_t n)
{
    if (!rs->tsize)
        return NULL;
    char key[1024];
    report_case_key(v, n, key, sizeof key);
    uint64_t h = kf_hash64(key, strlen(key), 0) & (uint64_t)(rs->tsize - 1);
    while (rs->table[h] >= 0) {
        if (strcmp(rs->keys[rs->table[h]], key) == 0)
            return &rs->done[rs->table[h]];
        h = (h + 1) & (uint64_t)(rs->tsize - 1);
    }
    return NULL;
}

/* Reads the complete lines of path from byte offset on. */
static int load_from(resume_state *rs, const char *path, long offset, char *err, size_t errlen)
{
    size_t len = 0;
    char e2[256];
    char *text = kf_read_file(path, &len, e2, sizeof e2);
    if (!text)
        return 0; /* no results yet */
    if (offset < 0 || (size_t)offset > len)
        offset = 0;
    char *p = text + offset;
    for (;;) {
        char *nl = strchr(p, '\n');
        if (!nl)
            break; /* a last line without its newline was cut short by a crash */
        *nl = '\0';
        kf_result r;
        memset(&r, 0, sizeof r);
        if (*p && report_parse_json(p, &r, e2, sizeof e2) == 0 && add(rs, &r) != 0) {
            free(text);
            kf_err(err, errlen, "out of memory reading %s", path);
            return -1;
        }
        p = nl + 1;
    }
    free(text);
    return 0;
}

int resume_load_all(resume_state *rs, const char *results_path, char *err, size_t errlen)
{
    return load_from(rs, results_path, 0, err, errlen);
}

int resume_begin(resume_state *rs, const char *results_path, const char *identity, int mode, char *err,
                 size_t errlen)
{
    snprintf(rs->state_path, sizeof rs->state_path, "%s.state", results_path);
    char idhash[33];
    kf_hash_hex(identity, strlen(identity), idhash);

    struct stat st;
    long size = stat(results_path, &st) == 0 ? (long)st.st_size : 0;
    long offset = size;

    char e2[256];
    char *state = kf_read_file(rs->state_path, NULL, e2, sizeof e2);
    if (state && mode != 0) {
        char id[64] = "";
        long off = -1;
        if (sscanf(state, "kforge-state 1\nidentity %63s\noffset %ld", id, &off) == 2 && strcmp(id, idhash) == 0 &&
            off >= 0 && off <= size) {
            offset = off;
            if (load_from(rs, results_path, off, err, errlen) != 0) {
                free(state);
                return -1;
            }
        }
    }
    free(state);
    if (mode == 1 && rs->ndone == 0 && load_from(rs, results_path, 0, err, errlen) != 0)
        return -1;

    char buf[256];
    int n = snprintf(buf, sizeof buf, "kforge-state 1\nidentity %s\noffset %ld\n", idhash, offset);
    if (kf_write_file_atomic(rs->state_path, buf, (size_t)n, err, errlen) != 0)
        return -1;
    rs->active = true;
    return 0;
}

void resume_end(resume_state *rs)
{
    if (rs->active)
        unlink(rs->state_path);
    rs->active = false;
}

void resume_free(resume_state *rs)
{
    for (int i = 0; i < rs->ndone; i++)
        free(rs->keys[i]);
    free(rs->keys);
    free(rs->done);
    free(rs->table);
    memset(rs, 0, sizeof *rs);
}
