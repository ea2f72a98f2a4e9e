/*
 * rtc.c -- NVRTC compilation, the cubin cache and the compiler worker pool.
 * See rtc.h for the contract.
 *
 * The pool speaks a tiny binary protocol over two pipes per worker:
 *   request: req_hdr, name bytes, source bytes
 *   reply:   rep_hdr, cubin path bytes, log bytes, and when the cache could
 *            not store the cubin (a full disk, a file-size limit): no path,
 *            the cubin, its lowered names and why it was not stored
 * Both ends are the same binary, so the headers are sent as raw structs.
 * A worker only ever gets a request while it is idle (blocked in read), so
 * the parent's writes never wait on a compile.
 */
#include "rtc.h"

#include "deps.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The most a cache entry's .key or .fail file holds (the source, at most
 * 16 MiB, and a log): a larger one, or one that is not a regular file, is
 * not an entry of this cache (compiled again). */
#define RTC_META_MAX_BYTES ((size_t)64 << 20)

#define RTC_KEY_MAGIC "kforge-rtc-v1"
#define RTC_DEFAULT_NAME "kernel.cu"
#define RTC_MAX_LOG (64u << 20)      /* a reply log larger than this is a protocol error */
#define RTC_MAX_CUBIN ((uint64_t)1 << 31) /* and a cubin sent in the reply larger than this */

// ---------------------------------------------------------------------------
// NVRTC

int rtc_version(int *major, int *minor)
{
    int ma = 0, mi = 0;
    if (nvrtcVersion(&ma, &mi) != NVRTC_SUCCESS)
        return -1;
    if (major)
        *major = ma;
    if (minor)
        *minor = mi;
    return 0;
}

/* The CUDA toolkit's include directory as an NVRTC option, or "" when
 * none is found: NVRTC searches no directory of its own, and a user's kernel
 * (kernel "custom") that includes <cuda_fp16.h> or <cuda_bf16.h> needs
 * it.  The first directory holding cuda_fp16.h of: $CUDA_HOME/include,
 * $CUDA_PATH/include, the include/ beside the libnvrtc this process loaded
 * (lib64/.. or lib/..), /usr/local/cuda/include. */
static char cuda_include_opt[PATH_MAX + 32];
static pthread_once_t cuda_include_once = PTHREAD_ONCE_INIT;

static bool has_fp16_header(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/cuda_fp16.h", dir);
    return access(p, R_OK) == 0;
}

static void find_cuda_include(void)
{
    char dir[PATH_MAX + 16] = "";
    const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
    for (int i = 0; i < 2 && !dir[0]; i++) {
        const char *e = getenv(env[i]);
        if (e && *e) {
            snprintf(dir, sizeof dir, "%s/include", e);
            if (!has_fp16_header(dir))
                dir[0] = '\0';
        }
    }
    Dl_info info;
    char lib[PATH_MAX];
    if (!dir[0] && dladdr((void *)nvrtcVersion, &info) && info.dli_fname && realpath(info.dli_fname, lib)) {
        char *slash = strrchr(lib, '/');
        if (slash) {
            *slash = '\0';
            snprintf(dir, sizeof dir, "%s/../include", lib);
            if (!has_fp16_header(dir))
                dir[0] = '\0';
        }
    }
    if (!dir[0] && has_fp16_header("/usr/local/cuda/include"))
        snprintf(dir, sizeof dir, "/usr/local/cuda/include");
    char real[PATH_MAX];
    if (dir[0])
        snprintf(cuda_include_opt, sizeof cuda_include_opt, "--include-path=%s", realpath(dir, real) ? real : dir);
}

/* The options other than the architecture, in the order they are passed.
 * Shared by the compiler and the cache key so the two cannot drift. */
static int extra_options(const rtc_options *opt, const char *out[4])
{
    int n = 0;
    out[n++] = "-std=c++17";
    if (opt->lineinfo)
        out[n++] = "-lineinfo";
    pthread_once(&cuda_include_once, find_cuda_include);
    if (cuda_include_opt[0])
        out[n++] = cuda_include_opt;
    return n;
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t')
            return false;
    return true;
}

/* The program log, or NULL when it is empty or cannot be read. */
static char *program_log(nvrtcProgram prog)
{
    size_t len = 0;
    if (nvrtcGetProgramLogSize(prog, &len) != NVRTC_SUCCESS || len <= 1)
        return NULL;
    char *log = malloc(len + 1);
    if (!log)
        return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        free(log);
        return NULL;
    }
    log[len] = '\0';
    if (blank(log)) {
        free(log);
        return NULL;
    }
    return log;
}

/* The name expressions a source asks for (RTC_NAME_DIRECTIVE lines): a
 * malloc'd array of malloc'd strings, NULL-terminated; *n of them (0: NULL
 * returned, nothing to free). */
static char **name_expressions(const char *src, int *n)
{
    *n = 0;
    char **out = NULL;
    size_t dl = strlen(RTC_NAME_DIRECTIVE);
    for (const char *p = src; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > dl && strncmp(p, RTC_NAME_DIRECTIVE, dl) == 0) {
            char **grown = realloc(out, sizeof *out * (size_t)(*n + 2));
            char *e = grown ? strndup(p + dl, len - dl) : NULL;
            if (!e) {
                free(grown ? grown : out);
                *n = 0;
                return NULL;
            }
            out = grown;
            out[(*n)++] = e;
            out[*n] = NULL;
        }
        p = eol ? eol + 1 : NULL;
    }
    return out;
}

static void free_names(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static int compile_once(const char *src, const char *name, const rtc_options *opt, char **exprs,
                        void **cubin, size_t *cubin_len, char **log, char **names, char *err, size_t errlen);

int rtc_compile(const char *src, const char *name, const rtc_options *opt,
                void **cubin, size_t *cubin_len, char **log, char *err, size_t errlen)
{
    return rtc_compile_named(src, name, opt, cubin, cubin_len, log, NULL, err, errlen);
}

int rtc_compile_named(const char *src, const char *name, const rtc_options *opt, void **cubin, size_t *cubin_len,
                      char **log, char **names, char *err, size_t errlen)
{
    if (names)
        *names = NULL;
    int n = 0;
    char **exprs = name_expressions(src, &n);
    char *text = NULL;
    int rc = compile_once(src, name, opt, exprs, cubin, cubin_len, &text, names, err, errlen);
    bool named = false; /* the failure's log names an expression */
    for (int i = 0; rc != 0 && text && i < n; i++)
        named = named || strstr(text, exprs[i]);
    if (named) {
        /* Perhaps only a name expression failed (an entry the source does
         * not define): compiled without them, the module says which
         * kernels it has when the entry is looked for. */
        char *text2 = NULL;
        if (compile_once(src, name, opt, NULL, cubin, cubin_len, &text2, NULL, err, errlen) == 0) {
            rc = 0;
            free(text);
            text = text2;
        } else {
            free(text2);
        }
    }
    if (log)
        *log = text;
    else
        free(text);
    free_names(exprs);
    return rc;
}

static int compile_once(const char *src, const char *name, const rtc_options *opt, char **exprs,
                        void **cubin, size_t *cubin_len, char **log, char **names, char *err, size_t errlen)
{
    *cubin = NULL;
    *cubin_len = 0;
    if (log)
        *log = NULL;
    if (!opt->arch[0]) {
        kf_err(err, errlen, "NVRTC: no target architecture");
        return -1;
    }

    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", opt->arch);
    const char *opts[6 + RTC_MAX_SRC_OPTIONS];
    opts[0] = archopt;
    int nopts = 1;
    /* A user's source (deps.h): compiled as a file of its folder, which is
     * also searched for headers; before the toolkit's, like nvcc -I. */
    char dir[PATH_MAX], diropt[PATH_MAX + 16], pname[PATH_MAX + 64];
    const char *pn = name && name[0] ? name : RTC_DEFAULT_NAME;
    if (rtc_include_dir(src, dir, sizeof dir)) {
        const char *base = strrchr(pn, '/');
        snprintf(pname, sizeof pname, "%s/%s", dir, base ? base + 1 : pn);
        snprintf(diropt, sizeof diropt, "--include-path=%s", dir);
        pn = pname;
        opts[nopts++] = diropt;
    }
    nopts += extra_options(opt, opts + nopts);
    /* the source's own options (RTC_OPTION_DIRECTIVE lines), in the lines
     * kforge writes before the user's text (its "#line 1"): a user's file
     * cannot add options of its own */
    char srcopt[RTC_MAX_SRC_OPTIONS][128];
    const size_t dl = strlen(RTC_OPTION_DIRECTIVE);
    int nsrc = 0;
    for (const char *p = src; p && *p && nsrc < RTC_MAX_SRC_OPTIONS && strncmp(p, "#line ", 6) != 0;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > dl && len - dl < sizeof srcopt[0] && strncmp(p, RTC_OPTION_DIRECTIVE, dl) == 0) {
            snprintf(srcopt[nsrc], sizeof srcopt[nsrc], "%.*s", (int)(len - dl), p + dl);
            opts[nopts++] = srcopt[nsrc++];
        }
        p = eol ? eol + 1 : NULL;
    }

    nvrtcProgram prog = NULL;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, pn, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        kf_err(err, errlen, "NVRTC: cannot create program (%s)", nvrtcGetErrorString(r));
        return -1;
    }

    int rc = -1;
    char *text = NULL;
    char *bin = NULL;
    for (int i = 0; exprs && exprs[i]; i++)
        if ((r = nvrtcAddNameExpression(prog, exprs[i])) != NVRTC_SUCCESS) {
            kf_err(err, errlen, "NVRTC: name expression \"%s\": %s", exprs[i], nvrtcGetErrorString(r));
            goto out;
        }
    r = nvrtcCompileProgram(prog, nopts, opts);
    /* The log first: it is what explains any failure below. */
    text = program_log(prog);
    if (r != NVRTC_SUCCESS) {
        kf_err(err, errlen, "NVRTC: compilation failed (%s)", nvrtcGetErrorString(r));
        goto out;
    }
    size_t len = 0;
    r = nvrtcGetCUBINSize(prog, &len);
    if (r != NVRTC_SUCCESS) {
        kf_err(err, errlen, "NVRTC: cannot get cubin size (%s)", nvrtcGetErrorString(r));
        goto out;
    }
    if (len == 0) {
        /* compute_XY targets produce PTX only. */
        kf_err(err, errlen, "NVRTC: no cubin produced for %s (use a real sm_XY architecture)",
               opt->arch);
        goto out;
    }
    bin = malloc(len);
    if (!bin) {
        kf_err(err, errlen, "NVRTC: out of memory for a %zu-byte cubin", len);
        goto out;
    }
    r = nvrtcGetCUBIN(prog, bin);
    if (r != NVRTC_SUCCESS) {
        kf_err(err, errlen, "NVRTC: cannot get cubin (%s)", nvrtcGetErrorString(r));
        goto out;
    }
    strbuf nb = {0};
    for (int i = 0; exprs && exprs[i]; i++) {
        const char *lowered = NULL;
        if ((r = nvrtcGetLoweredName(prog, exprs[i], &lowered)) != NVRTC_SUCCESS || !lowered) {
            kf_err(err, errlen, "NVRTC: no lowered name for \"%s\" (%s)", exprs[i], nvrtcGetErrorString(r));
            sb_free(&nb);
            goto out;
        }
        sb_printf(&nb, "%s\t%s\n", exprs[i], lowered);
    }
    if (nb.failed) {
        kf_err(err, errlen, "NVRTC: out of memory");
        goto out;
    }
    if (names && exprs && exprs[0])
        *names = sb_take(&nb);
    else
        sb_free(&nb);
    *cubin = bin;
    *cubin_len = len;
    bin = NULL;
    rc = 0;
out:
    free(bin);
    nvrtcDestroyProgram(&prog);
    if (log)
        *log = text;
    else
        free(text);
    return rc;
}

// ---------------------------------------------------------------------------
// cache

/* The no-cache directory is per process tree: rtc_pool_new creates it before
 * forking so the workers write where the parent can read, and the process
 * that created it removes it at exit (workers leave through _exit). */
static char nocache_dir_path[PATH_MAX];
static pid_t nocache_owner;

static void nocache_cleanup(void)
{
    if (!nocache_dir_path[0] || getpid() != nocache_owner)
        return;
    DIR *d = opendir(nocache_dir_path);
    if (d) {
        struct dirent *e;
        char p[PATH_MAX + 256];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof p, "%s/%s", nocache_dir_path, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(nocache_dir_path);
    nocache_dir_path[0] = '\0';
}

static const char *nocache_dir(char *err, size_t errlen)
{
    if (nocache_dir_path[0])
        return nocache_dir_path;
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/kforge-nocache-XXXXXX", kf_tmpdir());
    if (!mkdtemp(tmpl)) {
        kf_err(err, errlen, "cannot create a temporary cubin directory in %s: %s", kf_tmpdir(), strerror(errno));
        return NULL;
    }
    snprintf(nocache_dir_path, sizeof nocache_dir_path, "%s", tmpl);
    static bool registered;
    if (!registered) {
        atexit(nocache_cleanup);
        registered = true;
    }
    nocache_owner = getpid();
    return nocache_dir_path;
}

/* A directory this process can create files in.  Checked once, up front: a
 * cache that cannot be written would otherwise fail every compile. */
static int usable_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        kf_err(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        kf_err(err, errlen, "%s: not a directory", dir);
        return -1;
    }
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.kforge-probe-XXXXXX", dir) >= (int)sizeof probe) {
        kf_err(err, errlen, "%s: path too long", dir);
        return -1;
    }
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0) {
        kf_err(err, errlen, "%s: cannot create files: %s", dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

int rtc_cache_init(rtc_cache *c, const char *dir, bool enabled, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->enabled = enabled;
    const char *env;
    bool shared_tmp = false;
    int n;
    if (dir && *dir)
        n = snprintf(c->dir, sizeof c->dir, "%s", dir);
    else if ((env = getenv("KFORGE_CACHE_DIR")) && *env)
        n = snprintf(c->dir, sizeof c->dir, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/')   /* XDG: relative values are invalid */
        n = snprintf(c->dir, sizeof c->dir, "%s/kforge", env);
    else if ((env = getenv("HOME")) && *env)
        n = snprintf(c->dir, sizeof c->dir, "%s/.cache/kforge", env);
    else {
        n = snprintf(c->dir, sizeof c->dir, "/tmp/kforge-cache-%lu", (unsigned long)getuid());
        shared_tmp = true;
    }
    if (n < 0 || (size_t)n >= sizeof c->dir) {
        kf_err(err, errlen, "cache directory path too long");
        return -1;
    }
    if (!enabled)
        return 0;
    char why[PATH_MAX + 128];
    if (kf_mkdir_p(c->dir, why, sizeof why) != 0 || usable_dir(c->dir, why, sizeof why) != 0) {
        kf_err(err, errlen, "cubin cache directory unusable: %s (choose another with --cache-dir or "
               "KFORGE_CACHE_DIR, or use --no-cache)", why);
        return -1;
    }
    if (shared_tmp) {
        /* Anyone can create a name in /tmp; cubins from a directory someone
         * else controls would be run on the GPU. */
        struct stat st;
        if (lstat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
            (st.st_mode & 022)) {
            kf_err(err, errlen, "%s: not a private directory owned by this user", c->dir);
            return -1;
        }
    }
    return 0;
}

char *rtc_key_text(const char *src, const rtc_options *opt)
{
    int ma = 0, mi = 0;
    strbuf b = {0};
    sb_append(&b, RTC_KEY_MAGIC "\n");
    if (rtc_version(&ma, &mi) == 0)
        sb_printf(&b, "nvrtc %d.%d\n", ma, mi);
    else
        sb_append(&b, "nvrtc ?\n");
    sb_printf(&b, "arch %s\n", opt->arch);
    const char *opts[4];
    int n = extra_options(opt, opts);
    sb_append(&b, "opts");
    for (int i = 0; i < n; i++)
        sb_printf(&b, " %s", opts[i]);
    sb_append(&b, "\n--\n");
    sb_append(&b, src);
    /* the headers it includes from its folder (deps.h): an edited header
     * is another key, so a cubin of the old one is never taken */
    char *deps = rtc_deps_text(src);
    if (!deps)
        b.failed = true;
    else if (deps[0])
        sb_printf(&b, "\n--deps\n%s", deps);
    free(deps);
    if (b.failed) {
        sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

void rtc_cache_key(const char *src, const rtc_options *opt, char key[33])
{
    char *text = rtc_key_text(src, opt);
    if (!text) {
        key[0] = '\0';
        return;
    }
    kf_hash_hex(text, strlen(text), key);
    free(text);
}

/* The first line of a .key file: the cubin's length and hash, so that a
 * cubin that was cut short, overwritten or damaged is a miss. */
static void entry_header(strbuf *b, const void *cubin, size_t len)
{
    char hash[33];
    kf_hash_hex(cubin, len, hash);
    sb_printf(b, "cubin %zu %s\n", len, hash);
}

/* True if the .key file's text is a header for some cubin followed by
 * exactly the key text; *cubin_len and hash get the header's values. */
static bool parse_entry(const char *stored, size_t len, const char *text, size_t tlen,
                        size_t *cubin_len, char hash[33])
{
    const char *nl = memchr(stored, '\n', len);
    if (!nl || nl - stored > 80)
        return false;
    char line[96];
    memcpy(line, stored, (size_t)(nl - stored));
    line[nl - stored] = '\0';
    unsigned long long n = 0;
    int end = 0;
    if (sscanf(line, "cubin %llu %32[0-9a-f]%n", &n, hash, &end) != 2 || line[end] != '\0' ||
        strlen(hash) != 32 || n == 0 || n > SIZE_MAX)
        return false;
    *cubin_len = (size_t)n;
    size_t hl = (size_t)(nl + 1 - stored);
    return len - hl == tlen && memcmp(stored + hl, text, tlen) == 0;
}

/* The cubin at path has exactly len bytes with that hash, and is an ELF file. */
static bool cubin_intact(const char *path, size_t len, const char hash[33])
{
    size_t got = 0;
    char *bin = kf_read_regular(path, len, &got, NULL, 0);
    if (!bin)
        return false;
    char h[33];
    kf_hash_hex(bin, got, h);
    bool ok = got == len && got >= 4 && memcmp(bin, "\177ELF", 4) == 0 && strcmp(h, hash) == 0;
    free(bin);
    return ok;
}

bool rtc_cache_lookup(const rtc_cache *c, const char *src, const rtc_options *opt,
                      char *path, size_t pathlen)
{
    if (!c || !c->enabled)
        return false;
    char *text = rtc_key_text(src, opt);
    if (!text)
        return false;
    char key[33];
    size_t tlen = strlen(text);
    kf_hash_hex(text, tlen, key);

    bool hit = false;
    char keypath[PATH_MAX], binpath[PATH_MAX];
    if (snprintf(keypath, sizeof keypath, "%s/%s.key", c->dir, key) >= (int)sizeof keypath ||
        snprintf(binpath, sizeof binpath, "%s/%s.cubin", c->dir, key) >= (int)sizeof binpath)
        goto out;
    if (strlen(binpath) >= pathlen)
        goto out;
    size_t len = 0, cubin_len = 0;
    char hash[33];
    char *stored = kf_read_regular(keypath, RTC_META_MAX_BYTES, &len, NULL, 0);
    if (!stored)
        goto out;
    bool same = parse_entry(stored, len, text, tlen, &cubin_len, hash);
    free(stored);
    if (!same || !cubin_intact(binpath, cubin_len, hash))
        goto out;
    if (strstr(src, RTC_NAME_DIRECTIVE)) { /* and its lowered names, or it is compiled again */
        char np[PATH_MAX];
        rtc_names_path(binpath, np, sizeof np);
        struct stat nst; /* a regular file: the GPU worker reads it whole */
        if (access(np, R_OK) != 0 || stat(np, &nst) != 0 || !S_ISREG(nst.st_mode) ||
            nst.st_size > (off_t)RTC_META_MAX_BYTES)
            goto out;
    }
    memcpy(path, binpath, strlen(binpath) + 1);
    hit = true;
out:
    free(text);
    return hit;
}

int rtc_cache_store(const rtc_cache *c, const char *src, const rtc_options *opt,
                    const void *cubin, size_t len, char *path, size_t pathlen,
                    char *err, size_t errlen)
{
    return rtc_cache_store_named(c, src, opt, cubin, len, NULL, path, pathlen, err, errlen);
}

void rtc_names_path(const char *cubin_path, char *out, size_t len)
{
    size_t n = strlen(cubin_path);
    if (n > 6 && strcmp(cubin_path + n - 6, ".cubin") == 0)
        n -= 6;
    snprintf(out, len, "%.*s.names", (int)n, cubin_path);
}

int rtc_cache_store_named(const rtc_cache *c, const char *src, const rtc_options *opt, const void *cubin, size_t len,
                          const char *names, char *path, size_t pathlen, char *err, size_t errlen)
{
    bool enabled = c && c->enabled;
    const char *dir = enabled ? c->dir : nocache_dir(err, errlen);
    if (!dir)
        return -1;
    char *text = rtc_key_text(src, opt);
    if (!text) {
        kf_err(err, errlen, "out of memory");
        return -1;
    }
    int rc = -1;
    char key[33];
    size_t tlen = strlen(text);
    kf_hash_hex(text, tlen, key);
    char keypath[PATH_MAX], binpath[PATH_MAX];
    if (snprintf(keypath, sizeof keypath, "%s/%s.key", dir, key) >= (int)sizeof keypath ||
        snprintf(binpath, sizeof binpath, "%s/%s.cubin", dir, key) >= (int)sizeof binpath ||
        strlen(binpath) >= pathlen) {
        kf_err(err, errlen, "%s: cache path too long", dir);
        goto out;
    }
    /* The .names and .cubin first, the .key last: its header lets a lookup
     * check the .cubin. */
    if (names) {
        char np[PATH_MAX];
        rtc_names_path(binpath, np, sizeof np);
        if (kf_write_file_atomic(np, names, strlen(names), err, errlen) != 0)
            goto out;
    }
    if (kf_write_file_atomic(binpath, cubin, len, err, errlen) != 0)
        goto out;
    if (enabled) {
        strbuf entry = {0};
        entry_header(&entry, cubin, len);
        sb_appendn(&entry, text, tlen);
        int wr = -1;
        if (entry.failed)
            kf_err(err, errlen, "out of memory");
        else
            wr = kf_write_file_atomic(keypath, entry.s, entry.len, err, errlen);
        sb_free(&entry);
        if (wr != 0)
            goto out;
    }
    memcpy(path, binpath, strlen(binpath) + 1);
    rc = 0;
out:
    free(text);
    return rc;
}

// ---------------------------------------------------------------------------
// failed compiles: <key>.fail holds the key's text, then NVRTC's message and
// log, so that a source that does not compile is not compiled again by
// every run (keyed as its cubin would be; --no-cache keeps none)

#define FAIL_SEP "\n\001kforge: compile failure\001\n"

/* Whether src with opt failed to compile before: that message in err (and
 * that it is the cached one) and its log (malloc'd) in *log. */
static bool fail_lookup(const rtc_cache *c, const char *src, const rtc_options *opt, char **log, char *err,
                        size_t errlen)
{
    if (!c || !c->enabled)
        return false;
    char *text = rtc_key_text(src, opt), *stored = NULL, key[33], path[PATH_MAX];
    bool hit = false;
    if (!text)
        return false;
    size_t tlen = strlen(text), slen = strlen(FAIL_SEP), len = 0;
    kf_hash_hex(text, tlen, key);
    if (snprintf(path, sizeof path, "%s/%s.fail", c->dir, key) < (int)sizeof path &&
        (stored = kf_read_regular(path, RTC_META_MAX_BYTES, &len, NULL, 0)) && len > tlen + slen && memcmp(stored, text, tlen) == 0 &&
        memcmp(stored + tlen, FAIL_SEP, slen) == 0) {
        const char *msg = stored + tlen + slen, *end = strstr(msg, FAIL_SEP);
        if (end && (*log = strdup(end + slen))) {
            kf_err(err, errlen, "%.*s (as before: the cached failure %s)", (int)(end - msg), msg, path);
            hit = true;
        }
    }
    free(stored);
    free(text);
    return hit;
}

/* Records that src with opt does not compile (NVRTC's message err, its
 * log): only a compile error, never a failure of NVRTC itself. */
static void fail_store(const rtc_cache *c, const char *src, const rtc_options *opt, const char *err, const char *log)
{
    if (!c || !c->enabled || !strstr(err, "NVRTC_ERROR_COMPILATION"))
        return;
    char *text = rtc_key_text(src, opt), key[33], path[PATH_MAX], e[8];
    if (!text)
        return;
    kf_hash_hex(text, strlen(text), key);
    strbuf b = {0};
    sb_printf(&b, "%s" FAIL_SEP "%s" FAIL_SEP "%s", text, err, log ? log : "");
    if (!b.failed && snprintf(path, sizeof path, "%s/%s.fail", c->dir, key) < (int)sizeof path)
        kf_write_file_atomic(path, b.s, b.len, e, sizeof e); /* a cache that cannot take it compiles again */
    sb_free(&b);
    free(text);
}

// ---------------------------------------------------------------------------
// worker pool

typedef struct {
    int32_t tag;
    uint32_t namelen;
    uint64_t srclen;
} req_hdr;

typedef struct {
    int32_t tag;
    int32_t ok;
    double ms;
    uint32_t pathlen;
    uint32_t loglen;
    uint64_t binlen;         /* the cubin in the reply (pathlen 0): not stored */
    uint32_t nameslen;       /* its lowered names */
    uint32_t storelen;       /* why the cache could not store it */
} rep_hdr;

typedef struct rtc_job {
    int tag;
    char *src, *name;        /* name may be NULL */
    char *msg;               /* failure text for jobs that never reached a worker */
    int deaths;              /* workers that died running it */
    struct rtc_job *next;
} rtc_job;

typedef struct {
    pid_t pid;               /* <= 0: slot empty (fork failed) */
    int req_fd, rep_fd;      /* parent's ends */
    rtc_job *job;            /* running job, NULL when idle */
    bool ready;              /* scratch for rtc_pool_collect */
} rtc_worker;

/* A FIFO of jobs. */
typedef struct {
    rtc_job *head, *tail;
    int n;
} jobq;

static void q_push(jobq *q, rtc_job *j)
{
    j->next = NULL;
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    q->n++;
}

static void q_push_front(jobq *q, rtc_job *j)
{
    j->next = q->head;
    q->head = j;
    if (!q->tail)
        q->tail = j;
    q->n++;
}

static rtc_job *q_pop(jobq *q)
{
    rtc_job *j = q->head;
    if (!j)
        return NULL;
    q->head = j->next;
    if (!q->head)
        q->tail = NULL;
    j->next = NULL;
    q->n--;
    return j;
}

/* Takes the job of tag out of q (NULL: none). */
static rtc_job *q_take(jobq *q, int tag)
{
    for (rtc_job **pj = &q->head, *prev = NULL; *pj; prev = *pj, pj = &(*pj)->next) {
        rtc_job *j = *pj;
        if (j->tag != tag)
            continue;
        *pj = j->next;
        if (q->tail == j)
            q->tail = prev;
        j->next = NULL;
        q->n--;
        return j;
    }
    return NULL;
}

struct rtc_pool {
    rtc_worker *w;
    int n;
    jobq queue;              /* queued, needed now */
    jobq ahead;              /* compiles ahead of need: to idle workers only */
    int nbusy;
    jobq failed;             /* failed without a worker, not yet reported */
    int note[2];             /* readable while failed != NULL, so poll() wakes */
    rtc_cache cache;
    rtc_options opt;
    char spawn_err[256];
    int open;                /* workers 0..open-1 take jobs (the ramp, below) */
    double t_first;          /* when the first job was sent (0: none yet) */
};

/* The ramp: many compiler processes starting their first NVRTC compile at
 * once are each far slower than one alone (run A10, 64 CPUs: the first
 * cubin after 7.6 s, against 0.21 s a compile with -j 1), and the first
 * cubins are what the GPU waits for.  So the first RAMP_FIRST workers take
 * jobs at once, and the rest after the first reply or RAMP_MS, whichever
 * comes first.  KFORGE_COMPILE_RAMP=0 opens every worker at once, =K the
 * first K. */
#define RAMP_FIRST 4
#define RAMP_MS 1000

static void job_free(rtc_job *j)
{
    if (!j)
        return;
    free(j->src);
    free(j->name);
    free(j->msg);
    free(j);
}

/* KFORGE_COMPILE_DELAY_MS (a test hook): "MS", every compile; or a list
 * "TEXT:MS,...,MS": the first entry whose TEXT occurs in the source (an
 * entry without TEXT: any source) gives the delay, none matching: 0.  TEXT
 * is what comes before an entry's last ':' (e.g. "#define per_thread 3:4000,0"). */
static long compile_delay_ms(const char *spec, const char *src)
{
    for (const char *p = spec; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *colon = NULL;
        for (const char *q = p; q < p + len; q++)
            if (*q == ':')
                colon = q;
        bool match = true;
        if (colon) {
            size_t tl = (size_t)(colon - p);
            match = false;
            for (const char *q = src; *q && !match; q++)
                match = strncmp(q, p, tl) == 0;
        }
        if (match)
            return strtol(colon ? colon + 1 : p, NULL, 10);
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

static _Noreturn void worker_main(int req_fd, int rep_fd, const rtc_cache *cache,
                                  const rtc_options *opt)
{
    /* Ctrl-C, and the SIGTERM of timeout, systemd or Slurm, go to the whole
     * process group; the parent decides what dies (rtc_pool_free). */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (opt->nice > 0) { /* best effort: below what it works beside */
        errno = 0;
        int was = getpriority(PRIO_PROCESS, 0);
        if (errno == 0)
            (void)setpriority(PRIO_PROCESS, 0, was + opt->nice > 19 ? 19 : was + opt->nice);
    }
    /* test hook: compiles take at least this long (tests of --time and of
     * the order cases are sent in); see compile_delay_ms */
    const char *delay = getenv("KFORGE_COMPILE_DELAY_MS");

    for (;;) {
        req_hdr h;
        if (kf_read_full(req_fd, &h, sizeof h) != (long)sizeof h)
            _exit(0);   /* request pipe closed: the pool is done */
        char *name = malloc((size_t)h.namelen + 1);
        char *src = malloc((size_t)h.srclen + 1);
        if (!name || !src)
            _exit(3);
        if (kf_read_full(req_fd, name, h.namelen) != (long)h.namelen ||
            kf_read_full(req_fd, src, h.srclen) != (long)h.srclen)
            _exit(0);
        name[h.namelen] = '\0';
        src[h.srclen] = '\0';

        char err[512] = "";
        char path[PATH_MAX] = "";
        char *log = NULL;
        void *bin = NULL;
        size_t binlen = 0;
        double t0 = kf_now();
        char *names = NULL;
        long delay_ms = delay ? compile_delay_ms(delay, src) : 0;
        if (delay_ms > 0 && delay_ms < 600000) {
            struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        bool failed_before = fail_lookup(cache, src, opt, &log, err, sizeof err);
        int rc = failed_before ? -1
                               : rtc_compile_named(src, h.namelen ? name : NULL, opt, &bin, &binlen, &log, &names, err,
                                                   sizeof err);
        if (rc != 0 && !failed_before)
            fail_store(cache, src, opt, err, log);
        double ms = (kf_now() - t0) * 1e3;
        /* A cubin the cache cannot store (a full disk, a quota, a file-size
         * limit) is still a good cubin: it goes back in the reply, and the
         * parent keeps it in memory. */
        char store_err[512] = "";
        bool in_reply = false;
        if (rc == 0 &&
            rtc_cache_store_named(cache, src, opt, bin, binlen, names, path, sizeof path, store_err,
                                  sizeof store_err) != 0) {
            in_reply = true;
            path[0] = '\0';
            if (!store_err[0])
                snprintf(store_err, sizeof store_err, "cannot store the cubin");
        }

        strbuf text = {0};
        if (rc != 0) {
            sb_append(&text, err);
            sb_append(&text, "\n");
        }
        if (log)
            sb_append(&text, log);
        free(log);

        rep_hdr r = {
            .tag = h.tag,
            .ok = rc == 0,
            .ms = ms,
            .pathlen = rc == 0 ? (uint32_t)strlen(path) : 0,
            .loglen = (uint32_t)text.len,
            .binlen = in_reply ? binlen : 0,
            .nameslen = in_reply && names ? (uint32_t)strlen(names) : 0,
            .storelen = in_reply ? (uint32_t)strlen(store_err) : 0,
        };
        strbuf msg = {0};
        sb_appendn(&msg, (const char *)&r, sizeof r);
        sb_appendn(&msg, path, r.pathlen);
        if (text.len)
            sb_appendn(&msg, text.s, text.len);
        if (r.binlen)
            sb_appendn(&msg, bin, r.binlen);
        if (r.nameslen)
            sb_appendn(&msg, names, r.nameslen);
        if (r.storelen)
            sb_appendn(&msg, store_err, r.storelen);
        free(bin);
        free(names);
        if (msg.failed || kf_write_full(rep_fd, msg.s, msg.len) != 0)
            _exit(msg.failed ? 3 : 0);
        sb_free(&msg);
        sb_free(&text);
        free(src);
        free(name);
    }
}

/* kill() for a worker's pid, which is -1 once the worker is gone: kill(-1)
 * or kill(0) would signal every process of the user or the whole group. */
static void signal_worker(pid_t pid, int sig)
{
    if (pid > 0)
        kill(pid, sig);
}

static int spawn_worker(rtc_pool *p, int i, char *err, size_t errlen)
{
    int req[2], rep[2];
    if (pipe2(req, O_CLOEXEC) != 0) {
        kf_err(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(rep, O_CLOEXEC) != 0) {
        kf_err(err, errlen, "pipe: %s", strerror(errno));
        close(req[0]);
        close(req[1]);
        return -1;
    }
    /* SIGINT and SIGTERM stay blocked across fork() until the worker has
     * set its own dispositions (worker_main), so a Ctrl-C that arrives while
     * a worker starts cannot kill it before it ignores SIGINT. */
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
        close(req[0]);
        close(req[1]);
        close(rep[0]);
        close(rep[1]);
        return -1;
    }
    if (pid == 0) {
        /* Keep only this worker's ends: a sibling's pipe held open here would
         * hide that sibling's death from the parent. */
        close(req[1]);
        close(rep[0]);
        for (int j = 0; j < p->n; j++) {
            if (j == i)
                continue;
            if (p->w[j].req_fd >= 0)
                close(p->w[j].req_fd);
            if (p->w[j].rep_fd >= 0)
                close(p->w[j].rep_fd);
        }
        close(p->note[0]);
        close(p->note[1]);
        worker_main(req[0], rep[1], &p->cache, &p->opt);
    }
    close(req[0]);
    close(rep[1]);
    rtc_worker *w = &p->w[i];
    w->pid = pid;
    w->req_fd = req[1];
    w->rep_fd = rep[0];
    w->job = NULL;
    w->ready = false;
    return 0;
}

/* write() that reports EPIPE instead of raising SIGPIPE, without touching
 * the caller's SIGPIPE disposition. */
static int write_nosigpipe(int fd, const void *buf, size_t len)
{
    sigset_t pipeset, old, pending;
    sigemptyset(&pipeset);
    sigaddset(&pipeset, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipeset, &old);
    int rc = kf_write_full(fd, buf, len);
    int e = errno;
    if (rc != 0 && e == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipeset, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return rc;
}

static void send_job(rtc_pool *p, rtc_worker *w, rtc_job *j)
{
    size_t namelen = j->name ? strlen(j->name) : 0;
    size_t srclen = strlen(j->src);
    req_hdr h = {.tag = j->tag, .namelen = (uint32_t)namelen, .srclen = srclen};
    w->job = j;
    p->nbusy++;
    if (write_nosigpipe(w->req_fd, &h, sizeof h) != 0 ||
        write_nosigpipe(w->req_fd, j->name ? j->name : "", namelen) != 0 ||
        write_nosigpipe(w->req_fd, j->src, srclen) != 0) {
        /* The worker is gone (or the pipe is unusable): make sure its reply
         * pipe reports EOF so the job fails through the usual path. */
        signal_worker(w->pid, SIGKILL);
    }
}

static void push_failed(rtc_pool *p, rtc_job *j, const char *msg)
{
    if (!j->msg)
        j->msg = strdup(msg);
    q_push(&p->failed, j);
    if (p->failed.n == 1) {
        char c = 1;
        while (write(p->note[1], &c, 1) < 0 && errno == EINTR)
            ;
    }
}

/* The next job: one needed now before one compiled ahead. */
static rtc_job *pop_next(rtc_pool *p)
{
    rtc_job *j = q_pop(&p->queue);
    return j ? j : q_pop(&p->ahead);
}

/* Gives queued jobs to idle workers, restarting empty slots when there is
 * work.  With no worker left at all, the queue fails rather than hangs. */
static void ramp_open(rtc_pool *p, const char *why)
{
    if (p->open >= p->n)
        return;
    p->open = p->n;
    kf_trace("compiler pool: all %d processes take jobs (%s)", p->n, why);
}

static void dispatch(rtc_pool *p)
{
    bool live = false;
    if (p->open < p->n && p->t_first > 0 && kf_now() - p->t_first >= RAMP_MS / 1e3)
        ramp_open(p, "a second since the first job");
    for (int i = 0; i < p->n; i++) {
        rtc_worker *w = &p->w[i];
        if (w->pid <= 0 && (p->queue.head || p->ahead.head))
            spawn_worker(p, i, p->spawn_err, sizeof p->spawn_err);
        if (w->pid <= 0)
            continue;
        live = true;
        if (!w->job && i < p->open && (p->queue.head || p->ahead.head)) {
            if (p->t_first <= 0)
                p->t_first = kf_now();
            send_job(p, w, pop_next(p));
        }
    }
    if (!live && (p->queue.head || p->ahead.head)) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot start a compiler worker: %s", p->spawn_err);
        rtc_job *j;
        while ((j = pop_next(p)) != NULL)
            push_failed(p, j, msg);
    }
}

static void describe_status(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "compiler worker died twice on this job (signal %d: %s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else if (WIFEXITED(st))
        snprintf(buf, len, "compiler worker died twice on this job (exit status %d)", WEXITSTATUS(st));
    else
        snprintf(buf, len, "compiler worker died twice on this job");
}

static void close_worker_fds(rtc_worker *w)
{
    if (w->req_fd >= 0)
        close(w->req_fd);
    if (w->rep_fd >= 0)
        close(w->rep_fd);
    w->req_fd = w->rep_fd = -1;
}

/* Puts a job back at the head of the queue. */
static void requeue(rtc_pool *p, rtc_job *j)
{
    q_push_front(&p->queue, j);
}

/* A failed job's rtc_done, with nothing in it yet. */
static void done_empty(rtc_done *d, int tag)
{
    d->tag = tag;
    d->ok = false;
    d->cubin_path[0] = '\0';
    d->ms = 0;
    d->log = NULL;
    d->cubin = NULL;
    d->cubin_len = 0;
    d->names = NULL;
    d->store_err = NULL;
}

/* The worker's reply pipe hit EOF or garbage: reap it and start a
 * replacement.  The first death on a job retries it (the OOM killer or a
 * stray kill, not the source, is the likely cause); the second fails it into
 * d.  Returns true when d was filled. */
static bool worker_died(rtc_pool *p, rtc_worker *w, rtc_done *d)
{
    rtc_job *j = w->job;
    close_worker_fds(w);
    /* A worker that already died is a zombie and keeps its status; one that
     * sent garbage is still running and must go. */
    signal_worker(w->pid, SIGKILL);
    int st = 0;
    pid_t r;
    while ((r = waitpid(w->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    char msg[128];
    if (r == w->pid)
        describe_status(st, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "compiler worker died");
    w->pid = -1;
    w->job = NULL;
    p->nbusy--;

    bool failed = ++j->deaths >= 2;
    if (failed) {
        done_empty(d, j->tag);
        d->log = strdup(msg);
        job_free(j);
    } else {
        requeue(p, j);
    }

    int i = (int)(w - p->w);
    spawn_worker(p, i, p->spawn_err, sizeof p->spawn_err);
    return failed;
}

/* Reads one reply from a readable worker into d.  Returns true when d was
 * filled (false: the worker died and its job is queued again). */
static bool read_reply(rtc_pool *p, rtc_worker *w, rtc_done *d)
{
    rep_hdr h;
    if (kf_read_full(w->rep_fd, &h, sizeof h) != (long)sizeof h || h.tag != w->job->tag ||
        h.pathlen >= sizeof d->cubin_path || h.loglen > RTC_MAX_LOG || h.binlen > RTC_MAX_CUBIN ||
        h.nameslen > RTC_MAX_LOG || h.storelen > RTC_MAX_LOG || (h.binlen && (h.pathlen || !h.ok)))
        return worker_died(p, w, d);
    done_empty(d, w->job->tag);
    char *log = h.loglen ? malloc((size_t)h.loglen + 1) : NULL;
    void *bin = h.binlen ? malloc((size_t)h.binlen) : NULL;
    char *names = h.nameslen ? malloc((size_t)h.nameslen + 1) : NULL;
    char *store_err = h.storelen ? malloc((size_t)h.storelen + 1) : NULL;
    /* Cannot drain the reply without memory; the stream is lost with this worker. */
    bool ok = (log || !h.loglen) && (bin || !h.binlen) && (names || !h.nameslen) && (store_err || !h.storelen) &&
              kf_read_full(w->rep_fd, d->cubin_path, h.pathlen) == (long)h.pathlen &&
              (!log || kf_read_full(w->rep_fd, log, h.loglen) == (long)h.loglen) &&
              (!bin || kf_read_full(w->rep_fd, bin, h.binlen) == (long)h.binlen) &&
              (!names || kf_read_full(w->rep_fd, names, h.nameslen) == (long)h.nameslen) &&
              (!store_err || kf_read_full(w->rep_fd, store_err, h.storelen) == (long)h.storelen);
    if (!ok) {
        free(log);
        free(bin);
        free(names);
        free(store_err);
        return worker_died(p, w, d);
    }
    d->cubin_path[h.pathlen] = '\0';
    if (log)
        log[h.loglen] = '\0';
    if (names)
        names[h.nameslen] = '\0';
    if (store_err)
        store_err[h.storelen] = '\0';
    d->ok = h.ok != 0;
    d->ms = h.ms;
    d->log = log;
    d->cubin = bin;
    d->cubin_len = (size_t)h.binlen;
    d->names = names;
    d->store_err = store_err;
    job_free(w->job);
    w->job = NULL;
    p->nbusy--;
    ramp_open(p, "the first reply");
    return true;
}

rtc_pool *rtc_pool_new(int jobs, const rtc_cache *cache, const rtc_options *opt,
                       char *err, size_t errlen)
{
    if (jobs <= 0) {
        jobs = kf_usable_cpus();
    }
    if (jobs > 1024)
        jobs = 1024;
    /* Workers must inherit the no-cache directory, not make one each. */
    if ((!cache || !cache->enabled) && !nocache_dir(err, errlen))
        return NULL;

    rtc_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc((size_t)jobs, sizeof *p->w))) {
        free(p);
        kf_err(err, errlen, "out of memory");
        return NULL;
    }
    p->n = jobs;
    const char *ramp = getenv("KFORGE_COMPILE_RAMP");
    int first = ramp && *ramp ? atoi(ramp) : RAMP_FIRST;
    p->open = first <= 0 || first > jobs ? jobs : first;
    p->note[0] = p->note[1] = -1;
    for (int i = 0; i < jobs; i++) {
        p->w[i].pid = -1;
        p->w[i].req_fd = p->w[i].rep_fd = -1;
    }
    if (cache)
        p->cache = *cache;
    p->opt = *opt;
    if (pipe2(p->note, O_CLOEXEC | O_NONBLOCK) != 0) {
        kf_err(err, errlen, "pipe: %s", strerror(errno));
        p->note[0] = p->note[1] = -1;
        rtc_pool_free(p);
        return NULL;
    }
    for (int i = 0; i < jobs; i++) {
        if (spawn_worker(p, i, err, errlen) != 0) {
            rtc_pool_free(p);
            return NULL;
        }
    }
    return p;
}

static void submit(rtc_pool *p, int tag, const char *src, const char *name, bool ahead)
{
    rtc_job *j = calloc(1, sizeof *j);
    if (!j) {
        /* No way to report it later without memory to remember it. */
        fprintf(stderr, "kforge: out of memory\n");
        abort();
    }
    j->tag = tag;
    j->src = strdup(src);
    j->name = name ? strdup(name) : NULL;
    if (!j->src || (name && !j->name)) {
        push_failed(p, j, "out of memory");
        return;
    }
    q_push(ahead ? &p->ahead : &p->queue, j);
    dispatch(p);
}

void rtc_pool_submit(rtc_pool *p, int tag, const char *src, const char *name)
{
    submit(p, tag, src, name, false);
}

void rtc_pool_submit_ahead(rtc_pool *p, int tag, const char *src, const char *name)
{
    submit(p, tag, src, name, true);
}

bool rtc_pool_promote(rtc_pool *p, int tag)
{
    rtc_job *j = q_take(&p->ahead, tag);
    if (!j)
        return false;
    q_push(&p->queue, j);
    dispatch(p);
    return true;
}

int rtc_pool_pending(const rtc_pool *p)
{
    return p->queue.n + p->ahead.n + p->nbusy + p->failed.n;
}

int rtc_pool_wake_ms(const rtc_pool *p)
{
    if (p->open >= p->n || p->t_first <= 0 || !(p->queue.head || p->ahead.head))
        return -1;
    double left = p->t_first + RAMP_MS / 1e3 - kf_now();
    return left <= 0 ? 0 : (int)(left * 1e3) + 1;
}

int rtc_pool_pollfds(rtc_pool *p, struct pollfd *fds, int max)
{
    dispatch(p);
    int n = 0;
    if (p->failed.n && n < max)
        fds[n++] = (struct pollfd){.fd = p->note[0], .events = POLLIN};
    for (int i = 0; i < p->n && n < max; i++)
        if (p->w[i].job)
            fds[n++] = (struct pollfd){.fd = p->w[i].rep_fd, .events = POLLIN};
    return n;
}

int rtc_pool_collect(rtc_pool *p, const struct pollfd *fds, int nfds, rtc_done *done, int maxdone)
{
    int got = 0;
    while (p->failed.head && got < maxdone) {
        rtc_job *j = q_pop(&p->failed);
        rtc_done *d = &done[got++];
        done_empty(d, j->tag);
        d->log = j->msg;
        j->msg = NULL;
        job_free(j);
    }
    if (!p->failed.head) {
        char buf[64];
        while (read(p->note[0], buf, sizeof buf) > 0)
            ;
    }

    /* Mark first, read after: reading may replace a dead worker, and the
     * replacement can reuse a closed fd number still listed in fds. */
    int nready = 0;
    for (int k = 0; k < nfds; k++) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        for (int i = 0; i < p->n; i++) {
            rtc_worker *w = &p->w[i];
            if (w->job && !w->ready && w->rep_fd == fds[k].fd) {
                w->ready = true;
                nready++;
            }
        }
    }
    for (int i = 0; i < p->n && nready > 0; i++) {
        rtc_worker *w = &p->w[i];
        if (!w->ready)
            continue;
        w->ready = false;
        nready--;
        if (got >= maxdone)
            continue;   /* still readable; the next poll() reports it again */
        /* fds may be stale (from an earlier rtc_pool_pollfds); never block. */
        struct pollfd pf = {.fd = w->rep_fd, .events = POLLIN};
        if (poll(&pf, 1, 0) <= 0)
            continue;
        if (read_reply(p, w, &done[got]))
            got++;
    }
    dispatch(p);
    return got;
}

int rtc_pool_wait(rtc_pool *p, int timeout_ms, rtc_done *done)
{
    double deadline = timeout_ms >= 0 ? kf_now() + timeout_ms / 1e3 : 0;
    struct pollfd *fds = malloc(sizeof *fds * (size_t)(p->n + 1));
    if (!fds)
        return 0;
    int rc = 0;
    for (;;) {
        if (rtc_pool_pending(p) == 0) {
            rc = -1;
            break;
        }
        int nf = rtc_pool_pollfds(p, fds, p->n + 1);
        int wait = -1;
        if (timeout_ms >= 0) {
            double left = (deadline - kf_now()) * 1e3;
            wait = left > 0 ? (int)(left + 0.999) : 0;
        }
        int wake = rtc_pool_wake_ms(p);
        if (wake >= 0 && (wait < 0 || wake < wait))
            wait = wake;
        int r = poll(fds, (nfds_t)nf, wait);
        if (r < 0)
            break;   /* EINTR: let the caller look at its signal flags */
        if (r > 0 && rtc_pool_collect(p, fds, nf, done, 1) == 1) {
            rc = 1;
            break;
        }
        if (timeout_ms >= 0 && kf_now() >= deadline)
            break;
    }
    free(fds);
    return rc;
}

void rtc_pool_free(rtc_pool *p)
{
    if (!p)
        return;
    /* Idle workers exit on EOF; busy ones (which ignore SIGTERM) are killed,
     * and so is any that lingers. */
    for (int i = 0; i < p->n; i++) {
        close_worker_fds(&p->w[i]);
        if (p->w[i].job)
            signal_worker(p->w[i].pid, SIGKILL);
    }
    double deadline = kf_now() + 2.0;
    for (int i = 0; i < p->n; i++) {
        rtc_worker *w = &p->w[i];
        while (w->pid > 0) {
            pid_t r = waitpid(w->pid, NULL, WNOHANG);
            if (r == w->pid || (r < 0 && errno != EINTR)) {
                w->pid = -1;
                break;
            }
            if (kf_now() >= deadline) {
                signal_worker(w->pid, SIGKILL);
                while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
                    ;
                w->pid = -1;
                break;
            }
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        job_free(w->job);
        w->job = NULL;
    }
    rtc_job *j;
    while ((j = pop_next(p)) != NULL)
        job_free(j);
    while ((j = q_pop(&p->failed)) != NULL)
        job_free(j);
    if (p->note[0] >= 0)
        close(p->note[0]);
    if (p->note[1] >= 0)
        close(p->note[1]);
    free(p->w);
    free(p);
}

int rtc_lowered_name(const char *src, const char *name, const rtc_options *opt, const char *expr, char *lowered,
                     size_t len, char **log, char *err, size_t errlen)
{
    if (log)
        *log = NULL;
    if (!expr || !lowered || len == 0) {
        kf_err(err, errlen, "rtc_lowered_name: no name expression");
        return -1;
    }
    char *exprs[2] = {(char *)expr, NULL};
    void *bin = NULL;
    size_t binlen = 0;
    char *names = NULL;
    int rc = compile_once(src, name, opt, exprs, &bin, &binlen, log, &names, err, errlen);
    free(bin);
    if (rc == 0 && !rtc_name_lookup(names, expr, lowered, len)) {
        kf_err(err, errlen, "NVRTC: the lowered name of %s is longer than %zu bytes", expr, len - 1);
        rc = -1;
    }
    free(names);
    return rc;
}

bool rtc_name_lookup(const char *names, const char *expr, char *out, size_t len)
{
    size_t el = strlen(expr);
    for (const char *p = names; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *tab = memchr(p, '\t', n);
        if (tab && (size_t)(tab - p) == el && strncmp(p, expr, el) == 0) {
            size_t ll = n - el - 1;
            if (ll + 1 > len)
                return false;
            memcpy(out, tab + 1, ll);
            out[ll] = '\0';
            return true;
        }
        p = eol ? eol + 1 : NULL;
    }
    return false;
}
