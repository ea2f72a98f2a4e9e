/*
 * deps.c -- see deps.h: the include-dir line and the files a source reads.
 */
#include "deps.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

#define DEPS_MAX_FILES 1024          /* more is written as a line that says so */
#define DEPS_MAX_DEPTH 64
#define DEPS_MAX_BYTES (16u << 20)   /* a larger file counts by its size and time */

bool rtc_include_dir(const char *src, char *dir, size_t len)
{
    size_t dl = strlen(RTC_INCLUDE_DIRECTIVE);
    /* only in the lines kforge writes before the user's text (its "#line 1") */
    for (const char *p = src; p && *p && strncmp(p, "#line ", 6) != 0;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n > dl && strncmp(p, RTC_INCLUDE_DIRECTIVE, dl) == 0) {
            if (n - dl + 1 > len)
                return false;
            memcpy(dir, p + dl, n - dl);
            dir[n - dl] = '\0';
            return true;
        }
        p = eol ? eol + 1 : NULL;
    }
    return false;
}

typedef struct {
    strbuf *out;
    kf_strset seen;         /* real paths already written */
    const char *dir;        /* the include-dir */
    bool macro;             /* an #include this scan cannot follow */
    bool full;              /* DEPS_MAX_FILES reached */
} scan;

static bool regular(const char *path, struct stat *st)
{
    return stat(path, st) == 0 && S_ISREG(st->st_mode);
}

static void scan_text(scan *s, const char *text, size_t len, const char *curdir, int depth);

/* Writes path's line (once) and follows its includes. */
static void add_file(scan *s, const char *path, int depth, bool follow)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(path, real) || !regular(real, &st))
        return;
    bool added = false;
    if (s->seen.n >= DEPS_MAX_FILES) {
        if (!s->full)
            sb_append(s->out, "more files than counted\n");
        s->full = true;
        return;
    }
    if (kf_strset_add(&s->seen, real, &added) < 0) {
        s->out->failed = true;
        return;
    }
    if (!added)
        return;
    size_t n = 0;
    char *t = (size_t)st.st_size <= DEPS_MAX_BYTES ? kf_read_file_max(real, DEPS_MAX_BYTES, &n, NULL, 0) : NULL;
    if (!t) {
        sb_printf(s->out, "%s %lld mtime %lld.%09ld\n", real, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                  (long)st.st_mtim.tv_nsec);
        return;
    }
    char h[33];
    kf_hash_hex(t, n, h);
    sb_printf(s->out, "%s %zu %s\n", real, n, h);
    if (follow && depth < DEPS_MAX_DEPTH) {
        char *slash = strrchr(real, '/');
        *slash = '\0';  /* realpath is absolute: the file's folder ("" for /) */
        scan_text(s, t, n, real, depth + 1);
    }
    free(t);
}

/* name as NVRTC looks for it: quoted beside the including file (curdir),
 * then in the include-dir; angle-bracketed in the include-dir. */
static void resolve(scan *s, const char *name, const char *curdir, int depth)
{
    char path[PATH_MAX];
    struct stat st;
    if (name[0] == '/') {
        add_file(s, name, depth, true);
        return;
    }
    if (curdir && snprintf(path, sizeof path, "%s/%s", curdir, name) < (int)sizeof path && regular(path, &st)) {
        add_file(s, path, depth, true);
        return;
    }
    if (snprintf(path, sizeof path, "%s/%s", s->dir, name) < (int)sizeof path && regular(path, &st))
        add_file(s, path, depth, true);
}

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* Every "#include" line of text, whatever #if it sits in. */
static void scan_text(scan *s, const char *text, size_t len, const char *curdir, int depth)
{
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        const char *end = text + e;
        const char *p = skip_blank(text + i, end);
        i = e + 1;
        if (p == end || *p != '#')
            continue;
        p = skip_blank(p + 1, end);
        if (end - p < 7 || memcmp(p, "include", 7) != 0)
            continue;
        p += 7;
        if (end - p >= 5 && memcmp(p, "_next", 5) == 0)
            p += 5;
        p = skip_blank(p, end);
        if (p == end)
            continue;
        if (*p != '"' && *p != '<') {
            s->macro = true;
            continue;
        }
        char close = *p == '"' ? '"' : '>';
        const char *q = memchr(p + 1, close, (size_t)(end - p - 1));
        if (!q || q == p + 1 || q - p - 1 >= PATH_MAX)
            continue;
        char name[PATH_MAX];
        memcpy(name, p + 1, (size_t)(q - p - 1));
        name[q - p - 1] = '\0';
        resolve(s, name, close == '"' ? curdir : NULL, depth);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in the include-dir (in name order), not followed. */
static void add_folder(scan *s)
{
    DIR *d = opendir(s->dir);
    if (!d) {
        sb_printf(s->out, "%s unreadable\n", s->dir);
        return;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **g = realloc(names, sizeof *g * (size_t)cap);
            if (!g)
                break;
            names = g;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", s->dir, names[i]) < (int)sizeof path)
            add_file(s, path, DEPS_MAX_DEPTH, false);
        free(names[i]);
    }
    free(names);
}

char *rtc_deps_text(const char *src)
{
    char dir[PATH_MAX];
    strbuf out = {0};
    sb_append(&out, "");
    if (rtc_include_dir(src, dir, sizeof dir)) {
        scan s = {.out = &out, .dir = dir};
        scan_text(&s, src, strlen(src), dir, 0);
        if (s.macro) {
            sb_append(&out, "an #include of a macro: every file of the folder\n");
            add_folder(&s);
        }
        kf_strset_free(&s.seen);
    }
    if (out.failed) {
        sb_free(&out);
        return NULL;
    }
    return sb_take(&out);
}
