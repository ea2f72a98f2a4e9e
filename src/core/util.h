/*
 * util.h -- small pieces every module uses: a growable string builder,
 * error-buffer formatting, whole-file reads, hashing, edit distance,
 * clocks and directory creation.
 */
#ifndef KF_UTIL_H
#define KF_UTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KF_PRINTF(a, b)
#endif

/* Set by the SIGINT/SIGTERM handler (main installs it); long loops poll it. */
extern volatile sig_atomic_t kf_interrupted;

/* Growable NUL-terminated string.  Zero-initialise ({0}) before use. */
typedef struct {
    char *s;
    size_t len, cap;
    bool failed;       /* an allocation failed; s holds what fitted */
} strbuf;

void sb_append(strbuf *b, const char *s);
void sb_appendn(strbuf *b, const char *s, size_t n);
void sb_printf(strbuf *b, const char *fmt, ...) KF_PRINTF(2, 3);
void sb_vprintf(strbuf *b, const char *fmt, va_list ap) KF_PRINTF(2, 0);
/* Appends s as a JSON string literal, quotes included. */
void sb_json_string(strbuf *b, const char *s);
/* Returns the string (never NULL) and gives up ownership; the caller frees it. */
char *sb_take(strbuf *b);
void sb_free(strbuf *b);

/* The one hash table: an index over items the caller stores (0, 1, ...),
 * by their 64-bit hashes (kf_hash64), open addressing at most half full;
 * eq says whether item i is the key looked for.  Zero-initialise ({0}). */
typedef struct {
    struct kf_index_slot *slot;
    size_t size, count;
} kf_index;
typedef bool (*kf_index_eq)(const void *ctx, size_t item, const void *key);

/* The item equal to key (hash: its hash), or -1. */
long kf_index_find(const kf_index *x, uint64_t hash, kf_index_eq eq, const void *ctx, const void *key);
/* Adds item with hash (the caller checked it is not there).  0, or -1 out of memory. */
int kf_index_add(kf_index *x, uint64_t hash, size_t item);
void kf_index_free(kf_index *x);

/* The one time formatter: a time in ms with its unit.  Free style (tune,
 * merge, compare): 4 significant digits ("29.41 us", "1.5 ms", "2.3 s"),
 * "-" if not finite.  fixed (tables): 4 significant digits kept to the last
 * zero ("9.600 us", "1234 ms"), us below 1 ms, "-" if not positive. */
void kf_fmt_ms(char *buf, size_t len, double ms, bool fixed);
/* v with 4 significant digits and no exponent: 1.234, 12.34, 123.4, 1234. */
void kf_sig4(char *buf, size_t len, double v);

/* A set of strings, each with a stable index (0, 1, ... in the order of
 * first insertion), on kf_index.  Zero-initialise ({0}). */
typedef struct {
    char **keys;            /* keys[i]: the string of index i */
    int n, cap;
    kf_index index;
} kf_strset;

/* The index of key, or -1. */
int kf_strset_find(const kf_strset *s, const char *key);
/* The index of key, adding it if new (*added says which, may be NULL);
 * -1 when memory runs out. */
int kf_strset_add(kf_strset *s, const char *key, bool *added);
void kf_strset_free(kf_strset *s);

/* The CPUs this process may run on: its affinity mask (taskset, a Slurm
 * job's cpuset), else the online CPUs.  The default size of every pool. */
int kf_usable_cpus(void);

/* Runs fn(ctx, piece, lo, hi) for every piece [lo, hi) of [0, n) cut into
 * pieces of `grain` items (the last one shorter): piece k is [k grain,
 * min(n, (k + 1) grain)), whatever the number of threads, so results kept
 * per piece and combined in piece order do not depend on the machine.  The
 * pieces run on up to as many threads as this process may use (its CPU
 * affinity; at most 64); in the calling thread alone when there is one
 * piece, when called from inside another kf_parallel_for, or when no thread
 * can be started.  Returns the number of pieces. */
int64_t kf_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t piece, int64_t lo, int64_t hi),
                        void *ctx);

/* snprintf into an error buffer; safe with err == NULL.  The message is
 * made printable (kf_printable): whatever text from a config, a database or
 * a results file it quotes, it stays one line and sends the terminal no
 * command. */
void kf_err(char *err, size_t errlen, const char *fmt, ...) KF_PRINTF(3, 4);

/* The one owner of untrusted text in messages: s into buf (len bytes, cut
 * to fit), control characters written as escapes that show them: \n, \r,
 * \t, and \xHH for the other C0 controls, DEL, the C1 controls (U+0080 to
 * U+009F) and bytes that are not UTF-8.  Backslashes stay as they are, so
 * printable text is unchanged and making it printable again changes
 * nothing.  Returns buf. */
char *kf_printable(const char *s, char *buf, size_t len);

/* Whether s holds a control character (what kf_printable escapes). */
bool kf_has_control(const char *s);

/* The largest config file kforge reads (16 MiB): far above any real config,
 * and small enough that `kforge check /dev/zero` fails at once. */
#define KF_CONFIG_MAX_BYTES ((size_t)16 << 20)

/* Reads a whole file ("-" is stdin).  Returns a malloc'd NUL-terminated
 * buffer and its length, or NULL with a message in err: "is a directory",
 * "larger than the N MiB limit" (more than max bytes), "interrupted" (a
 * signal arrived while it waited for input), "out of memory". */
char *kf_read_file_max(const char *path, size_t max, size_t *len, char *err, size_t errlen);
/* Where temporary files go: $TMPDIR when it is an absolute path, else /tmp. */
const char *kf_tmpdir(void);

/* kf_read_file_max of a regular file only (after symbolic links): a FIFO,
 * a device (/dev/zero) or a socket is refused at once, and so is a file
 * over max bytes, before any read.  For what kforge keeps (the tuning
 * database, the cubin cache), where anything else is a planted file. */
char *kf_read_regular(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* kf_read_file_max without a size limit. */
char *kf_read_file(const char *path, size_t *len, char *err, size_t errlen);

/* Set when a write to standard output failed (a full disk, or EPIPE: the
 * reader is gone).  Loops that produce output stop as if interrupted. */
extern volatile sig_atomic_t kf_output_broken;
/* Sets kf_output_broken after a failed write to stdout, keeping errno for
 * kf_stdout_close's message (EFBIG, ENOSPC, EPIPE ...). */
void kf_output_failed(void);

/* Whether stdout's reader has gone (a write failed with EPIPE: `kforge ...
 * | head`): a stop like an interrupt, said with no message. */
bool kf_output_reader_gone(void);

/* The exit status when stdout's reader has gone: the shell's for a command
 * killed by SIGPIPE (128 + 13), what `set -o pipefail` users get from grep
 * or jq.  Nothing is lost: the results file is whole and --resume goes on. */
#define KF_EXIT_PIPE 141

/* Flushes and closes stdout.  -1 with a message if anything written to it
 * was lost (ENOSPC, EIO ...); -2 with no message when its reader had gone
 * (EPIPE: the caller exits KF_EXIT_PIPE); 0 otherwise, also when stdout was
 * closed to begin with and nothing was written. */
int kf_stdout_close(char *err, size_t errlen);

/* Writes len bytes to path atomically: a temporary file beside it, unique
 * to this host, process and call (O_EXCL), then rename(), so that several
 * writers of one path at once, on several hosts of a shared file system
 * too, never mix their bytes, and a reader sees the old file or the new
 * one whole.  No lock is taken. */
int kf_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* mkdir -p; 0 on success. */
int kf_mkdir_p(const char *path, char *err, size_t errlen);

/* 128-bit non-cryptographic hash, written as 32 lowercase hex digits + NUL. */
void kf_hash_hex(const void *data, size_t len, char out[33]);
uint64_t kf_hash64(const void *data, size_t len, uint64_t seed);

/* Levenshtein distance (for "did you mean" suggestions). */
int kf_edit_distance(const char *a, const char *b);
/* The candidate nearest to s, or NULL if none is close (distance > max(2, len/3)). */
const char *kf_suggest(const char *s, const char *const *candidates, int count);

/* Monotonic seconds. */
double kf_now(void);
/* KFORGE_TRACE=1: one line on stderr per phase of a run, "kforge: trace
 * 1.234 s [pid]: <what>", seconds since the first trace (main's start),
 * from the parent and its GPU workers.  Nothing otherwise. */
void kf_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether KFORGE_TRACE is on (a trace that costs work to word asks first). */
bool kf_trace_on(void);

/* Wall clock as ISO 8601 UTC ("2026-11-22T15:40:00Z"). */
void kf_iso_time(char *buf, size_t len);

/* Full-length read/write on a file descriptor, retrying on EINTR.
 * read returns bytes read (short only at EOF) or -1. */
long kf_read_full(int fd, void *buf, size_t len);
int kf_write_full(int fd, const void *buf, size_t len);

/* Parses a whole string as a long long / double; false on any junk. */
bool kf_parse_ll(const char *s, long long *out);
bool kf_parse_double(const char *s, double *out);

#endif
