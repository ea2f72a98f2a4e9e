/*
 * rtc.h -- NVRTC compilation to cubins, the on-disk cubin cache, and a pool
 * of compiler worker processes.
 *
 * Threads inside one process stop scaling at about 2 NVRTC compiles in
 * flight, so the pool forks processes.  The pool is created before anything
 * initialises CUDA (CUDA does not survive fork()).
 *
 * Cache layout: <dir>/<key>.cubin and <dir>/<key>.key, where key is the
 * 128-bit hash (hex) of the key text: NVRTC version, options, architecture,
 * the full source and, for a source with an include-dir line (deps.h), the
 * length and hash of every file it includes from its folder.  The .key
 * file holds a line "cubin LEN HASH" (the cubin's length and kf_hash_hex)
 * and then that text.  A lookup compares the
 * text byte for byte, so a hash collision is a miss, not a wrong binary, and
 * checks the cubin's length, hash and ELF magic, so a damaged or truncated
 * cubin is a miss too (recompiled and replaced), never a binary the driver
 * reads past its end.  Files are written atomically (temporary file +
 * rename), so concurrent kforge processes can share one cache.
 */
#ifndef KF_RTC_H
#define KF_RTC_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char arch[16];      /* "sm_90" */
    bool lineinfo;      /* -lineinfo (for compute-sanitizer and ncu) */
    int nice;           /* the pool's processes' nice increment (0: none); not part of the cache key */
} rtc_options;

/* NVRTC's version; -1 if NVRTC cannot be used. */
int rtc_version(int *major, int *minor);

/* Compiles src (kernel entry points extern "C") straight to a cubin for
 * opt->arch.  On success returns 0 and a malloc'd cubin.  On failure returns
 * -1, sets *log to the malloc'd NVRTC program log (may be NULL) and err to a
 * one-line message.  *log is also set (or NULL) on success when the log is
 * not empty (warnings).  The program is destroyed on every path. */
int rtc_compile(const char *src, const char *name, const rtc_options *opt,
                void **cubin, size_t *cubin_len, char **log, char *err, size_t errlen);

/* A source line that starts with this asks NVRTC to instantiate and name
 * the expression after it (nvrtcAddNameExpression): a template kernel such
 * as "transpose<float>" that the source never instantiates, or any kernel
 * by its C++ name.  rtc_compile_named returns the lowered (mangled) names,
 * a line "EXPR<TAB>LOWERED" each, and the cache keeps them beside the
 * cubin (rtc_names_path).  If the program compiles only without its name
 * expressions (an entry it does not define), it is compiled without them
 * and *names stays NULL: the module's kernels then say what there is. */
#define RTC_NAME_DIRECTIVE "//!kforge name-expression "

/* A source line that starts with this passes the rest of the line to NVRTC
 * as one option (a custom kernel's "compiler_options", checked by the
 * family before it writes them): being in the source, it keys the cubin
 * cache like the rest of the text.  At most RTC_MAX_SRC_OPTIONS are taken,
 * each under 128 characters. */
#define RTC_OPTION_DIRECTIVE "//!kforge nvrtc-option "
#define RTC_MAX_SRC_OPTIONS 16

int rtc_compile_named(const char *src, const char *name, const rtc_options *opt, void **cubin, size_t *cubin_len,
                      char **log, char **names, char *err, size_t errlen);

/* The lowered name of expr in names (rtc_compile_named's text): false if
 * it is not there or does not fit. */
bool rtc_name_lookup(const char *names, const char *expr, char *out, size_t len);

/* Where a cubin's lowered names are kept: its path with .names for .cubin. */
void rtc_names_path(const char *cubin_path, char *out, size_t len);

/* Compiles src as rtc_compile does (no cubin kept) with the name
 * expression expr, a kernel such as "transpose" or "scale<float>", and
 * writes its lowered name (len bytes at most): the kernel's symbol in the
 * module, expr itself for an extern "C" kernel, the mangled name of a C++
 * one.  0, or -1 with *log and err as rtc_compile's. */
int rtc_lowered_name(const char *src, const char *name, const rtc_options *opt, const char *expr,
                     char *lowered, size_t len, char **log, char *err, size_t errlen);

typedef struct {
    char dir[PATH_MAX];
    bool enabled;
} rtc_cache;

/* dir: explicit directory, or NULL for $KFORGE_CACHE_DIR, else
 * $XDG_CACHE_HOME/kforge, else $HOME/.cache/kforge, else /tmp/kforge-cache-<uid>.
 * Creates the directory when enabled and checks that files can be created
 * in it (the /tmp fallback must also be owned by this user and not
 * group/world writable); the message then names the directory.  A disabled
 * cache only records the path. */
int rtc_cache_init(rtc_cache *c, const char *dir, bool enabled, char *err, size_t errlen);

/* Key text (malloc'd) and its hash. */
char *rtc_key_text(const char *src, const rtc_options *opt);
void rtc_cache_key(const char *src, const rtc_options *opt, char key[33]);

/* If a valid entry exists (key text, cubin length, hash and ELF magic all
 * match), writes the cubin path and returns true. */
bool rtc_cache_lookup(const rtc_cache *c, const char *src, const rtc_options *opt,
                      char *path, size_t pathlen);

/* Stores a cubin; writes its path.  Works (into a private temporary
 * directory, /tmp/kforge-nocache-XXXXXX) even when the cache is disabled, so
 * callers always get a path; the process that created that directory
 * removes it at exit(). */
int rtc_cache_store(const rtc_cache *c, const char *src, const rtc_options *opt,
                    const void *cubin, size_t len, char *path, size_t pathlen,
                    char *err, size_t errlen);

/* rtc_cache_store, with the lowered names (or NULL) written beside it. */
int rtc_cache_store_named(const rtc_cache *c, const char *src, const rtc_options *opt, const void *cubin, size_t len,
                          const char *names, char *path, size_t pathlen, char *err, size_t errlen);

/* ---------------------------------------------------------------------- */
/* Worker pool. */

/* A compiled job's cubin is in the cache (cubin_path), or, when the cache
 * could not store it (a full disk, a quota, a file-size limit: store_err
 * says why), in memory (cubin_path "", cubin and names): never a failure
 * of the job. */
typedef struct {
    int tag;                 /* as submitted */
    bool ok;
    char cubin_path[PATH_MAX];
    double ms;               /* compile wall time in the worker */
    char *log;               /* malloc'd NVRTC log or error text, or NULL; caller frees */
    void *cubin;             /* malloc'd cubin when not stored (cubin_path ""), else NULL; caller frees */
    size_t cubin_len;
    char *names;             /* malloc'd lowered names of that cubin, or NULL; caller frees */
    char *store_err;         /* malloc'd reason the cache did not store it, or NULL; caller frees */
} rtc_done;

typedef struct rtc_pool rtc_pool;

/* Forks jobs workers (jobs <= 0: the number of online CPUs). */
rtc_pool *rtc_pool_new(int jobs, const rtc_cache *cache, const rtc_options *opt,
                       char *err, size_t errlen);

/* Queues a compile (src and name are copied).  Never blocks on workers. */
void rtc_pool_submit(rtc_pool *p, int tag, const char *src, const char *name);

/* Queues a compile that is not needed yet (the next candidates a search
 * will likely ask for): it goes to a worker only when no job submitted with
 * rtc_pool_submit waits, so it never delays one.  Reported like any job. */
void rtc_pool_submit_ahead(rtc_pool *p, int tag, const char *src, const char *name);

/* The job of tag submitted ahead and not started yet is needed now: it
 * joins the end of the queue.  false when there is none (started already,
 * or never submitted ahead). */
bool rtc_pool_promote(rtc_pool *p, int tag);

/* Jobs queued (ahead ones too) or running. */
int rtc_pool_pending(const rtc_pool *p);

/* For an event loop: gives queued jobs to idle workers, then adds one
 * pollfd (POLLIN) per busy worker to fds, plus one internal fd while jobs
 * that failed without a worker wait to be collected, and returns how many
 * were added (at most max; jobs + 1 is always enough). */
int rtc_pool_pollfds(rtc_pool *p, struct pollfd *fds, int max);
/* Milliseconds until the pool opens its remaining workers to queued jobs
 * (the ramp), -1 when nothing waits on it: a poll() timeout. */
int rtc_pool_wake_ms(const rtc_pool *p);

/* After poll(): reads the results of workers whose fds are readable, gives
 * queued jobs to idle workers, and returns the number of rtc_done written
 * (at most maxdone).  A worker that died is replaced and its job runs again
 * on a new worker; a job whose second worker dies too is reported as failed,
 * with a message that names the signal or exit status.  Workers ignore
 * SIGINT and SIGTERM (sent to the whole process group): the parent decides. */
int rtc_pool_collect(rtc_pool *p, const struct pollfd *fds, int nfds, rtc_done *done, int maxdone);

/* Blocking convenience: waits up to timeout_ms (-1 = forever) for one job to
 * finish.  Returns 1 and fills *done, 0 on timeout or when a signal
 * interrupted the wait (so a SIGINT flag can be checked), -1 when nothing is
 * pending. */
int rtc_pool_wait(rtc_pool *p, int timeout_ms, rtc_done *done);

/* Kills and reaps the workers. */
void rtc_pool_free(rtc_pool *p);

#endif
