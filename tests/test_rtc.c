/*
 * test_rtc.c -- NVRTC compilation, the cubin cache and the worker pool.
 * Needs the CUDA toolkit's NVRTC, not a GPU.  Run: build/tests/test_rtc
 */
#include "rtc.h"
#include "deps.h"
#include "outcheck.h"
#include "util.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char GOOD[] =
    "extern \"C\" __global__ void scale(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= 2.0f;\n"
    "}\n";

/* The syntax error is on line 3. */
static const char BAD[] =
    "extern \"C\" __global__ void broken(float *x)\n"
    "{\n"
    "    x[0] = 1.0f +* ;\n"
    "}\n";

/* Takes NVRTC about a second or more, so a worker can be caught mid-compile. */
static const char SLOW[] =
    "template <int N> struct F { __device__ static float f(float x)"
    " { return F<N - 1>::f(x) * 1.0001f + F<N / 2>::f(x + 1.0f); } };\n"
    "template <> struct F<0> { __device__ static float f(float x) { return x; } };\n"
    "extern \"C\" __global__ void slow(float *x)\n"
    "{\n"
    "    float v = x[threadIdx.x];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < 64; i++) v = sinf(v) * cosf(v + i) + F<24>::f(v);\n"
    "    x[threadIdx.x] = v;\n"
    "}\n";

static rtc_options sm90(void)
{
    rtc_options o = {.arch = "sm_90", .lineinfo = false};
    return o;
}

// ---------------------------------------------------------------------------
// helpers

/* The root is made and removed by an unchecked fixture, in the runner
 * process, so a failing test (whose process just exits) leaves nothing. */
static char rootdir[512];
static char tmpdir[600];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw);

static void root_setup(void)
{
    snprintf(rootdir, sizeof rootdir, "%s/kforge-test-rtc-XXXXXX", kf_tmpdir());
    if (!mkdtemp(rootdir)) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
}

static void root_teardown(void)
{
    if (rootdir[0])
        nftw(rootdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    rootdir[0] = '\0';
}

/* A fresh directory for one test. */
static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/t-XXXXXX", rootdir);
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (tmpdir[0])
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
}

/* A cubin of a disabled cache: in a kforge-nocache- directory under $TMPDIR (else /tmp). */
static bool in_nocache(const char *path)
{
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/kforge-nocache-", kf_tmpdir());
    return strncmp(path, want, strlen(want)) == 0;
}

static bool is_elf_file(const char *path)
{
    size_t len = 0;
    char *data = kf_read_file(path, &len, NULL, 0);
    bool ok = data && len > 4 && memcmp(data, "\177ELF", 4) == 0;
    free(data);
    return ok;
}

/* Child processes of this process, from /proc. */
static int children(pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = '\0';
        char *rp = strrchr(buf, ')');
        char state;
        long ppid;
        if (rp && sscanf(rp + 1, " %c %ld", &state, &ppid) == 2 && ppid == (long)getpid() &&
            n < max)
            out[n++] = (pid_t)pid;
    }
    closedir(d);
    return n;
}

/* Pipe fds open in a process; fills is_pipe[fd] when given. */
static int count_pipes(pid_t pid, bool *is_pipe, int maxfd)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX], target[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strncmp(target, "pipe:", 5) != 0)
            continue;
        n++;
        int fd = atoi(e->d_name);
        if (is_pipe && fd < maxfd)
            is_pipe[fd] = true;
    }
    closedir(d);
    return n;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void assert_no_children(void)
{
    int st;
    errno = 0;
    ck_assert_int_eq(waitpid(-1, &st, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

// ---------------------------------------------------------------------------
// compile

START_TEST(test_compile_ok)
{
    rtc_options o = sm90();
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL, err[256] = "";
    int rc = rtc_compile(GOOD, "good.cu", &o, &bin, &len, &log, err, sizeof err);
    ck_assert_msg(rc == 0, "compile failed: %s\n%s", err, log ? log : "");
    ck_assert_ptr_nonnull(bin);
    ck_assert_uint_gt(len, 4);
    ck_assert_int_eq(memcmp(bin, "\177ELF", 4), 0);
    free(bin);
    free(log);

    o.lineinfo = true;
    rc = rtc_compile(GOOD, NULL, &o, &bin, &len, &log, err, sizeof err);
    ck_assert_msg(rc == 0, "compile -lineinfo failed: %s", err);
    ck_assert_int_eq(memcmp(bin, "\177ELF", 4), 0);
    free(bin);
    free(log);
}
END_TEST

/* NVRTC's name expressions: a template the source never instantiates is
 * instantiated, and its lowered name, given back and kept in the cache
 * beside the cubin, is a kernel of that cubin.  An expression that names
 * nothing compiles without them, so that the module lists its kernels. */
#define TEMPLATED                                                                                                  \
    "struct Twice { __device__ float operator()(float x) const { return 2 * x; } };\n"                          \
    "template <typename Op> __global__ void apply(float *y, const float *x, int n)\n"                          \
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = Op()(x[i]); }\n"                       \
    "extern \"C\" __global__ void plain(float *y) { y[0] = 1; }\n"

START_TEST(test_name_expressions)
{
    rtc_options o = sm90();
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL, *names = NULL, err[256] = "";
    const char *src = TEMPLATED RTC_NAME_DIRECTIVE "apply<Twice>\n" RTC_NAME_DIRECTIVE "plain\n";
    int rc = rtc_compile_named(src, "t.cu", &o, &bin, &len, &log, &names, err, sizeof err);
    ck_assert_msg(rc == 0, "%s\n%s", err, log ? log : "");
    ck_assert_ptr_nonnull(names);
    char low[256];
    ck_assert(rtc_name_lookup(names, "apply<Twice>", low, sizeof low));
    ck_assert_str_eq(low, "_Z5applyI5TwiceEvPfPKfi");
    ck_assert(rtc_name_lookup(names, "plain", low, sizeof low));
    ck_assert_str_eq(low, "plain");
    ck_assert(!rtc_name_lookup(names, "apply", low, sizeof low));
    ck_assert(!rtc_name_lookup(names, "apply<Twice>", low, 8)); /* does not fit */
    ck_assert(!rtc_name_lookup(NULL, "plain", low, sizeof low));
    /* the instantiation is in the cubin (its symbol table holds the name) */
    ck_assert_ptr_nonnull(memmem(bin, len, "_Z5applyI5TwiceEvPfPKfi", 23));

    /* kept beside the cubin; a lookup without the names file is a miss */
    make_tmpdir();
    rtc_cache c;
    char dir[PATH_MAX], path[PATH_MAX], hit[PATH_MAX], np[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/names", tmpdir);
    ck_assert_msg(rtc_cache_init(&c, dir, true, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(rtc_cache_store_named(&c, src, &o, bin, len, names, path, sizeof path, err, sizeof err) == 0,
                  "%s", err);
    ck_assert(rtc_cache_lookup(&c, src, &o, hit, sizeof hit));
    rtc_names_path(hit, np, sizeof np);
    size_t nl = 0;
    char *kept = kf_read_file(np, &nl, err, sizeof err);
    ck_assert_ptr_nonnull(kept);
    ck_assert_str_eq(kept, names);
    free(kept);
    ck_assert_int_eq(unlink(np), 0);
    ck_assert(!rtc_cache_lookup(&c, src, &o, hit, sizeof hit));
    free(bin);
    free(log);
    free(names);

    /* without the directive the template is not instantiated */
    rc = rtc_compile_named(TEMPLATED, "t.cu", &o, &bin, &len, &log, &names, err, sizeof err);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_null(names);
    ck_assert_ptr_null(memmem(bin, len, "_Z5apply", 8));
    free(bin);
    free(log);

    /* an expression naming nothing: compiled without the expressions */
    rc = rtc_compile_named(TEMPLATED RTC_NAME_DIRECTIVE "nosuch<int>\n", "t.cu", &o, &bin, &len, &log, &names, err,
                           sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_ptr_null(names);
    ck_assert_ptr_nonnull(memmem(bin, len, "plain", 5));
    free(bin);
    free(log);
    /* a real error is still one */
    rc = rtc_compile_named(TEMPLATED "this is not C++;\n" RTC_NAME_DIRECTIVE "apply<Twice>\n", "t.cu", &o, &bin, &len,
                           &log, &names, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_nonnull(log);
    free(log);
}
END_TEST

/* The GPU's output check (outcheck.h) compiles, and its cubin defines the
 * kernels outcheck_open looks up. */
START_TEST(test_outcheck_compiles)
{
    rtc_options o = sm90();
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL, err[256] = "";
    int rc = rtc_compile(outcheck_source(), "outcheck.cu", &o, &bin, &len, &log, err, sizeof err);
    ck_assert_msg(rc == 0, "outcheck.cuh failed to compile: %s\n%s", err, log ? log : "");
    static const char *const names[] = {"kf_differ", "kf_within_float32", "kf_within_float64",
                                        "kf_within_bfloat16", "kf_within_float16"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        bool found = false;
        size_t n = strlen(names[i]);
        for (size_t k = 0; !found && k + n < len; k++)
            found = memcmp((const char *)bin + k, names[i], n) == 0 && ((const char *)bin)[k + n] == '\0';
        ck_assert_msg(found, "%s is not in the cubin", names[i]);
    }
    free(bin);
    free(log);
}
END_TEST

START_TEST(test_compile_error)
{
    rtc_options o = sm90();
    void *bin = (void *)1;
    size_t len = 1;
    char *log = NULL, err[256] = "";
    int rc = rtc_compile(BAD, "bad.cu", &o, &bin, &len, &log, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_null(bin);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(err, "NVRTC: compilation failed (NVRTC_ERROR_COMPILATION)");
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "bad.cu(3): error") != NULL, "log does not name line 3:\n%s", log);
    free(log);
}
END_TEST

/* The lowered name of a kernel: an extern "C" one keeps its name, a C++
 * one (a template instantiation too) is mangled; an unknown one fails. */
START_TEST(test_lowered_name)
{
    static const char *src = "extern \"C\" __global__ void plain(float *x) { x[0] = 1; }\n"
                             "__global__ void cxx(float *x) { x[0] = 2; }\n"
                             "template <typename T> __global__ void tpl(T *x) { x[0] = 3; }\n"
                             "template __global__ void tpl<float>(float *);\n";
    rtc_options o = sm90();
    char low[256], *log = NULL, err[256] = "";
    ck_assert_msg(rtc_lowered_name(src, "names.cu", &o, "plain", low, sizeof low, &log, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(low, "plain");
    free(log);
    ck_assert_int_eq(rtc_lowered_name(src, "names.cu", &o, "cxx", low, sizeof low, &log, err, sizeof err), 0);
    ck_assert_str_eq(low, "_Z3cxxPf");
    free(log);
    ck_assert_int_eq(rtc_lowered_name(src, "names.cu", &o, "tpl<float>", low, sizeof low, &log, err, sizeof err), 0);
    ck_assert_str_eq(low, "_Z3tplIfEvPT_");
    free(log);
    ck_assert_int_eq(rtc_lowered_name(src, "names.cu", &o, "nothing", low, sizeof low, &log, err, sizeof err), -1);
    ck_assert_msg(log && strstr(log, "nothing"), "the log does not name the unknown kernel: %s", log ? log : err);
    free(log);
    char tiny[4];
    ck_assert_int_eq(rtc_lowered_name(src, "names.cu", &o, "cxx", tiny, sizeof tiny, &log, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "longer than 3 bytes") != NULL, "%s", err);
    free(log);
}
END_TEST

START_TEST(test_compile_virtual_arch)
{
    rtc_options o = {.arch = "compute_90"};
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL, err[256] = "";
    ck_assert_int_eq(rtc_compile(GOOD, NULL, &o, &bin, &len, &log, err, sizeof err), -1);
    ck_assert_ptr_null(bin);
    ck_assert_str_ne(err, "");
    free(log);
}
END_TEST

START_TEST(test_version)
{
    int major = 0, minor = -1;
    ck_assert_int_eq(rtc_version(&major, &minor), 0);
    ck_assert_int_eq(major, 13);
    ck_assert_int_ge(minor, 0);
}
END_TEST

// ---------------------------------------------------------------------------
// cache

START_TEST(test_key)
{
    rtc_options o = sm90();
    char base[33], k[33];
    rtc_cache_key(GOOD, &o, base);
    ck_assert_uint_eq(strlen(base), 32);
    rtc_cache_key(GOOD, &o, k);
    ck_assert_str_eq(base, k);

    rtc_cache_key(BAD, &o, k);
    ck_assert_str_ne(base, k);

    rtc_options a = o;
    snprintf(a.arch, sizeof a.arch, "sm_80");
    rtc_cache_key(GOOD, &a, k);
    ck_assert_str_ne(base, k);

    rtc_options l = o;
    l.lineinfo = true;
    rtc_cache_key(GOOD, &l, k);
    ck_assert_str_ne(base, k);

    int major, minor;
    ck_assert_int_eq(rtc_version(&major, &minor), 0);
    char want[128];
    snprintf(want, sizeof want, "kforge-rtc-v1\nnvrtc %d.%d\narch sm_90\nopts -std=c++17 -lineinfo", major, minor);
    char *text = rtc_key_text(GOOD, &l);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(strncmp(text, want, strlen(want)), 0);
    /* then the CUDA toolkit's include directory, where one is found
     * (a user's kernel may include <cuda_fp16.h>): it holds cuda_fp16.h */
    const char *rest = text + strlen(want);
    if (strncmp(rest, " --include-path=", 16) == 0) {
        const char *nl = strchr(rest, '\n');
        ck_assert_ptr_nonnull(nl);
        char hdr[4096];
        snprintf(hdr, sizeof hdr, "%.*s/cuda_fp16.h", (int)(nl - rest - 16), rest + 16);
        ck_assert_int_eq(access(hdr, R_OK), 0);
        rest = nl;
    }
    ck_assert_int_eq(strncmp(rest, "\n--\n", 4), 0);
    ck_assert_str_eq(rest + 4, GOOD);
    free(text);
}
END_TEST

static void put(const char *dir, const char *name, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A source with an include-dir line (deps.h): compiled from any directory
 * with its headers, and every header it includes is in the key. */
START_TEST(test_key_headers)
{
    make_tmpdir();
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/sub", tmpdir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    put(tmpdir, "helper.h", "#include \"sub/inner.h\"\n#define SCALE (2 * ONE)\n");
    put(sub, "inner.h", "#include \"near.h\"\n#define ONE 1.0f\n");
    put(sub, "near.h", "#define NEAR 1\n");
    put(tmpdir, "angle.h", "#define ANGLE 1\n");
    strbuf b = {0};
    sb_printf(&b, RTC_INCLUDE_DIRECTIVE "%s\n#include \"helper.h\"\n#include <angle.h>\n#include <cuda_fp16.h>\n"
              "#if 0\n#include \"missing.h\"\n#endif\n"
              "extern \"C\" __global__ void k(float *x) { x[0] = SCALE + NEAR + ANGLE; }\n", tmpdir);
    char *src = sb_take(&b);
    char dir[PATH_MAX];
    ck_assert(rtc_include_dir(src, dir, sizeof dir));
    ck_assert_str_eq(dir, tmpdir);
    ck_assert(!rtc_include_dir(GOOD, dir, sizeof dir));

    /* helper.h, inner.h beside it (sub/), near.h beside inner.h, angle.h by
     * -I; not the toolkit's header, not a file that is not there */
    char *deps = rtc_deps_text(src);
    ck_assert_ptr_nonnull(deps);
    ck_assert_msg(strstr(deps, "/helper.h ") && strstr(deps, "/sub/inner.h ") && strstr(deps, "/sub/near.h ") &&
                  strstr(deps, "/angle.h ") && !strstr(deps, "cuda_fp16") && !strstr(deps, "missing"),
                  "deps: %s", deps);
    free(deps);
    char *none = rtc_deps_text(GOOD);
    ck_assert_str_eq(none, "");
    free(none);

    /* compiled from another directory: the headers are the folder's */
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir("/"), 0);
    rtc_options o = sm90();
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL, err[256];
    int rc = rtc_compile(src, "kernel.cu", &o, &bin, &len, &log, err, sizeof err);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_msg(rc == 0, "%s: %s", err, log ? log : "");
    free(bin);
    free(log);

    /* an edit of a header two levels down is another key; back as it
     * was, the same key */
    char k0[33], k1[33], k2[33];
    rtc_cache_key(src, &o, k0);
    put(sub, "near.h", "#define NEAR 2\n");
    rtc_cache_key(src, &o, k1);
    ck_assert_str_ne(k0, k1);
    put(sub, "near.h", "#define NEAR 1\n");
    rtc_cache_key(src, &o, k2);
    ck_assert_str_eq(k0, k2);

    /* an #include of a macro: every file of the folder counts */
    char *msrc = NULL;
    strbuf m = {0};
    sb_printf(&m, RTC_INCLUDE_DIRECTIVE "%s\n#define H \"other.h\"\n#include H\n", tmpdir);
    msrc = sb_take(&m);
    put(tmpdir, "other.h", "#define OTHER 1\n");
    rtc_cache_key(msrc, &o, k0);
    put(tmpdir, "other.h", "#define OTHER 2\n");
    rtc_cache_key(msrc, &o, k1);
    ck_assert_str_ne(k0, k1);
    free(msrc);
    free(src);
    remove_tmpdir();
}
END_TEST

START_TEST(test_store_lookup)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "", dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/sub/cache", tmpdir);
    ck_assert_msg(rtc_cache_init(&c, dir, true, err, sizeof err) == 0, "%s", err);
    struct stat st;
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));

    rtc_options o = sm90();
    char path[PATH_MAX], hit[PATH_MAX];
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));

    const char bytes[] = "\177ELF pretend cubin";
    ck_assert_msg(rtc_cache_store(&c, GOOD, &o, bytes, sizeof bytes, path, sizeof path, err,
                                  sizeof err) == 0, "%s", err);
    ck_assert(rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    ck_assert_str_eq(hit, path);
    char key[33];
    rtc_cache_key(GOOD, &o, key);
    ck_assert_ptr_nonnull(strstr(path, key));

    size_t len = 0;
    char *got = kf_read_file(hit, &len, err, sizeof err);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(len, sizeof bytes);
    ck_assert_int_eq(memcmp(got, bytes, len), 0);
    free(got);

    /* Other options are other entries. */
    rtc_options l = o;
    l.lineinfo = true;
    ck_assert(!rtc_cache_lookup(&c, GOOD, &l, hit, sizeof hit));

    /* A path buffer too small is a miss, never a truncated path. */
    char tiny[8];
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, tiny, sizeof tiny));
    remove_tmpdir();
}
END_TEST

static void put_file(const char *path, const void *data, size_t len)
{
    char err[256] = "";
    ck_assert_msg(kf_write_file_atomic(path, data, len, err, sizeof err) == 0, "%s", err);
}

START_TEST(test_tampered)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "";
    ck_assert_msg(rtc_cache_init(&c, tmpdir, true, err, sizeof err) == 0, "%s", err);
    rtc_options o = sm90();
    char path[PATH_MAX], hit[PATH_MAX], keypath[PATH_MAX + 8];
    const char bytes[] = "\177ELF pretend";
    ck_assert_int_eq(rtc_cache_store(&c, GOOD, &o, bytes, sizeof bytes, path, sizeof path, err,
                                     sizeof err), 0);
    ck_assert(rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));

    /* The .key file: "cubin LEN HASH", then the key text. */
    char key[33], hash[33], head[128];
    rtc_cache_key(GOOD, &o, key);
    snprintf(keypath, sizeof keypath, "%s/%s.key", tmpdir, key);
    kf_hash_hex(bytes, sizeof bytes, hash);
    snprintf(head, sizeof head, "cubin %zu %s\n", sizeof bytes, hash);
    size_t elen = 0;
    char *entry = kf_read_file(keypath, &elen, err, sizeof err);
    ck_assert_ptr_nonnull(entry);
    char *text = rtc_key_text(GOOD, &o);
    size_t tlen = strlen(text);
    ck_assert_uint_eq(elen, strlen(head) + tlen);
    ck_assert_int_eq(memcmp(entry, head, strlen(head)), 0);
    ck_assert_int_eq(memcmp(entry + strlen(head), text, tlen), 0);

    /* Same hash, different text: what a collision looks like. */
    entry[elen - 2] ^= 1;
    put_file(keypath, entry, elen);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    entry[elen - 2] ^= 1;

    /* Truncated key text; no header (an entry of an older kforge); a bad header. */
    put_file(keypath, entry, elen - 1);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    put_file(keypath, text, tlen);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    entry[6] = 'x';
    put_file(keypath, entry, elen);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    entry[6] = head[6];
    put_file(keypath, entry, elen);
    ck_assert(rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));

    /* Right key, damaged cubin: garbage, cut short, one byte changed, one
     * byte more, empty, missing. */
    put_file(path, "garbage\n", 8);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    put_file(path, bytes, sizeof bytes / 2);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    char changed[sizeof bytes + 1];
    memcpy(changed, bytes, sizeof bytes);
    changed[6] ^= 0x20;
    put_file(path, changed, sizeof bytes);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    memcpy(changed, bytes, sizeof bytes);
    changed[sizeof bytes] = '\0';
    put_file(path, changed, sizeof bytes + 1);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    put_file(path, "", 0);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    ck_assert_int_eq(unlink(path), 0);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));

    /* Length and hash agree, but it is not an ELF file. */
    const char notelf[] = "#!ELF pretend";
    kf_hash_hex(notelf, sizeof notelf, hash);
    strbuf b = {0};
    sb_printf(&b, "cubin %zu %s\n", sizeof notelf, hash);
    sb_append(&b, text);
    put_file(keypath, b.s, b.len);
    put_file(path, notelf, sizeof notelf);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    sb_free(&b);

    /* A store replaces a bad entry. */
    ck_assert_int_eq(rtc_cache_store(&c, GOOD, &o, bytes, sizeof bytes, path, sizeof path, err,
                                     sizeof err), 0);
    ck_assert(rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    free(entry);
    free(text);
    remove_tmpdir();
}
END_TEST

START_TEST(test_disabled)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "", dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/never", tmpdir);
    ck_assert_int_eq(rtc_cache_init(&c, dir, false, err, sizeof err), 0);
    ck_assert(!c.enabled);
    ck_assert_int_ne(access(dir, F_OK), 0);   /* a disabled cache creates nothing */

    rtc_options o = sm90();
    char path[PATH_MAX], hit[PATH_MAX];
    const char bytes[] = "\177ELF disabled";
    ck_assert_msg(rtc_cache_store(&c, GOOD, &o, bytes, sizeof bytes, path, sizeof path, err,
                                  sizeof err) == 0, "%s", err);
    ck_assert(in_nocache(path));
    size_t len = 0;
    char *got = kf_read_file(path, &len, err, sizeof err);
    ck_assert_msg(got != NULL, "%s", err);
    ck_assert_uint_eq(len, sizeof bytes);
    ck_assert_int_eq(memcmp(got, bytes, len), 0);
    free(got);
    ck_assert(!rtc_cache_lookup(&c, GOOD, &o, hit, sizeof hit));
    remove_tmpdir();
}
END_TEST

static void restore_env(const char *name, char *old)
{
    if (old) {
        setenv(name, old, 1);
        free(old);
    } else {
        unsetenv(name);
    }
}

START_TEST(test_default_dir)
{
    make_tmpdir();
    char *old_k = getenv("KFORGE_CACHE_DIR") ? strdup(getenv("KFORGE_CACHE_DIR")) : NULL;
    char *old_x = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *old_h = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    rtc_cache c;
    char err[256] = "", want[PATH_MAX], v[PATH_MAX / 2];

    snprintf(v, sizeof v, "%s/k", tmpdir);
    setenv("KFORGE_CACHE_DIR", v, 1);
    setenv("XDG_CACHE_HOME", "/nonexistent-xdg", 1);
    ck_assert_msg(rtc_cache_init(&c, NULL, true, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(c.dir, v);
    ck_assert_int_eq(access(v, F_OK), 0);

    /* An explicit directory wins over the environment. */
    snprintf(want, sizeof want, "%s/explicit", tmpdir);
    ck_assert_int_eq(rtc_cache_init(&c, want, true, err, sizeof err), 0);
    ck_assert_str_eq(c.dir, want);

    unsetenv("KFORGE_CACHE_DIR");
    snprintf(v, sizeof v, "%s/xdg", tmpdir);
    setenv("XDG_CACHE_HOME", v, 1);
    ck_assert_int_eq(rtc_cache_init(&c, NULL, true, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/kforge", v);
    ck_assert_str_eq(c.dir, want);
    ck_assert_int_eq(access(want, F_OK), 0);

    unsetenv("XDG_CACHE_HOME");
    snprintf(v, sizeof v, "%s/home", tmpdir);
    setenv("HOME", v, 1);
    ck_assert_int_eq(rtc_cache_init(&c, NULL, true, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/.cache/kforge", v);
    ck_assert_str_eq(c.dir, want);
    ck_assert_int_eq(access(want, F_OK), 0);

    /* Disabled: the path is still resolved, nothing is created. */
    unsetenv("HOME");
    ck_assert_int_eq(rtc_cache_init(&c, NULL, false, err, sizeof err), 0);
    snprintf(want, sizeof want, "/tmp/kforge-cache-%lu", (unsigned long)getuid());
    ck_assert_str_eq(c.dir, want);

    restore_env("KFORGE_CACHE_DIR", old_k);
    restore_env("XDG_CACHE_HOME", old_x);
    restore_env("HOME", old_h);
    remove_tmpdir();
}
END_TEST

// ---------------------------------------------------------------------------
// pool

/* Good kernels differ by a constant so each is its own cache entry. */
static char *good_variant(int i)
{
    strbuf b = {0};
    sb_printf(&b,
              "extern \"C\" __global__ void v%d(float *x, int n)\n"
              "{\n"
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "    if (i < n) x[i] = x[i] * %d.0f + 1.0f;\n"
              "}\n", i, i + 2);
    return sb_take(&b);
}

START_TEST(test_pool_mixed)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "";
    ck_assert_int_eq(rtc_cache_init(&c, tmpdir, true, err, sizeof err), 0);
    rtc_options o = sm90();
    rtc_pool *p = rtc_pool_new(2, &c, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    pid_t kids[8];
    ck_assert_int_eq(children(kids, 8), 2);

    enum { N = 8 };
    char *srcs[N];
    bool want_ok[N], seen[N] = {false};
    for (int i = 0; i < N; i++) {
        want_ok[i] = i % 3 != 1;
        srcs[i] = want_ok[i] ? good_variant(i) : strdup(BAD);
        rtc_pool_submit(p, 100 + i, srcs[i], want_ok[i] ? "good.cu" : "bad.cu");
    }
    ck_assert_int_eq(rtc_pool_pending(p), N);

    /* Drive it the way an event loop would: pollfds, poll, collect. */
    int finished = 0;
    double deadline = kf_now() + 45;
    while (rtc_pool_pending(p) > 0) {
        ck_assert_msg(kf_now() < deadline, "pool did not finish");
        struct pollfd fds[4];
        int nf = rtc_pool_pollfds(p, fds, 4);
        ck_assert_int_gt(nf, 0);
        ck_assert_int_le(nf, 2);
        int r = poll(fds, (nfds_t)nf, 5000);
        ck_assert_int_ge(r, 0);
        rtc_done done[4];
        int got = rtc_pool_collect(p, fds, nf, done, 4);
        for (int k = 0; k < got; k++) {
            int i = done[k].tag - 100;
            ck_assert_msg(i >= 0 && i < N, "unknown tag %d", done[k].tag);
            ck_assert_msg(!seen[i], "tag %d reported twice", done[k].tag);
            seen[i] = true;
            finished++;
            ck_assert_msg(done[k].ok == want_ok[i], "tag %d: ok=%d, log: %s", done[k].tag,
                          done[k].ok, done[k].log ? done[k].log : "(none)");
            ck_assert_double_ge(done[k].ms, 0);
            if (want_ok[i]) {
                ck_assert(is_elf_file(done[k].cubin_path));
                char hit[PATH_MAX];
                ck_assert(rtc_cache_lookup(&c, srcs[i], &o, hit, sizeof hit));
                ck_assert_str_eq(hit, done[k].cubin_path);
            } else {
                ck_assert_str_eq(done[k].cubin_path, "");
                ck_assert_ptr_nonnull(done[k].log);
                ck_assert_ptr_nonnull(strstr(done[k].log, "NVRTC: compilation failed"));
                ck_assert_ptr_nonnull(strstr(done[k].log, "bad.cu(3): error"));
            }
            free(done[k].log);
        }
    }
    ck_assert_int_eq(finished, N);
    rtc_done d;
    ck_assert_int_eq(rtc_pool_wait(p, 0, &d), -1);

    rtc_pool_free(p);
    assert_no_children();
    for (int i = 0; i < N; i++)
        free(srcs[i]);
    remove_tmpdir();
}
END_TEST

/* Compiles ahead of need go to workers only when nothing needed waits; a
 * promoted one joins the queue of needed ones. */
START_TEST(test_pool_ahead)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "";
    ck_assert_int_eq(rtc_cache_init(&c, tmpdir, true, err, sizeof err), 0);
    rtc_options o = sm90();
    rtc_pool *p = rtc_pool_new(1, &c, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    char *srcs[5];
    for (int i = 0; i < 5; i++)
        srcs[i] = good_variant(40 + i);
    /* tags 1-3 ahead (1 starts at once: the worker is idle), then 4 and 5 needed, then 3 needed too */
    rtc_pool_submit_ahead(p, 1, srcs[0], "a.cu");
    rtc_pool_submit_ahead(p, 2, srcs[1], "a.cu");
    rtc_pool_submit_ahead(p, 3, srcs[2], "a.cu");
    rtc_pool_submit(p, 4, srcs[3], "n.cu");
    rtc_pool_submit(p, 5, srcs[4], "n.cu");
    ck_assert_int_eq(rtc_pool_pending(p), 5);
    ck_assert(rtc_pool_promote(p, 3));
    ck_assert(!rtc_pool_promote(p, 1)); /* running already */
    ck_assert(!rtc_pool_promote(p, 4)); /* not ahead */
    int order[5], n = 0;
    double deadline = kf_now() + 45;
    while (n < 5) {
        ck_assert_msg(kf_now() < deadline, "pool did not finish");
        rtc_done d;
        int w = rtc_pool_wait(p, 1000, &d);
        ck_assert_int_ge(w, 0);
        if (w == 1) {
            ck_assert_msg(d.ok, "tag %d: %s", d.tag, d.log ? d.log : "");
            free(d.log);
            order[n++] = d.tag;
        }
    }
    int want[5] = {1, 4, 5, 3, 2};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(order[i] == want[i], "completion %d: tag %d, want %d (order %d %d %d %d %d)", i, order[i],
                      want[i], order[0], order[1], order[2], order[3], order[4]);
    rtc_done d;
    ck_assert_int_eq(rtc_pool_wait(p, 0, &d), -1);
    rtc_pool_free(p);
    assert_no_children();
    for (int i = 0; i < 5; i++)
        free(srcs[i]);
    remove_tmpdir();
}
END_TEST

START_TEST(test_pool_worker_killed)
{
    rtc_cache c;
    char err[256] = "";
    ck_assert_int_eq(rtc_cache_init(&c, NULL, false, err, sizeof err), 0);
    rtc_options o = sm90();
    rtc_pool *p = rtc_pool_new(1, &c, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    pid_t kids[4];
    ck_assert_int_eq(children(kids, 4), 1);
    pid_t victim = kids[0];

    /* Ctrl-C, and SIGTERM to the process group, are the parent's business. */
    ck_assert_int_eq(kill(victim, SIGINT), 0);
    ck_assert_int_eq(kill(victim, SIGTERM), 0);
    sleep_ms(50);
    ck_assert_int_eq(waitpid(victim, NULL, WNOHANG), 0);

    /* A worker killed mid-compile: its job runs again on a new worker. */
    rtc_pool_submit(p, 1, SLOW, "slow.cu");
    sleep_ms(150);
    ck_assert_int_eq(kill(victim, SIGKILL), 0);
    rtc_pool_submit(p, 2, GOOD, "good.cu");
    char *g3 = good_variant(3);
    rtc_pool_submit(p, 3, g3, NULL);

    bool seen[5] = {false};
    rtc_done d;
    for (int n = 0; n < 3; n++) {
        ck_assert_int_eq(rtc_pool_wait(p, 30000, &d), 1);
        ck_assert(d.tag >= 1 && d.tag <= 3);
        ck_assert(!seen[d.tag]);
        seen[d.tag] = true;
        ck_assert_msg(d.ok, "tag %d failed: %s", d.tag, d.log ? d.log : "");
        ck_assert(is_elf_file(d.cubin_path));
        ck_assert(in_nocache(d.cubin_path));
        free(d.log);
    }
    ck_assert_int_eq(rtc_pool_wait(p, 100, &d), -1);
    ck_assert_int_eq(children(kids, 4), 1);
    ck_assert_int_ne(kids[0], victim);

    /* Killed again on the retry: now the job fails, naming the signal. */
    rtc_pool_submit(p, 4, SLOW, "slow.cu");
    pid_t first = kids[0];
    sleep_ms(150);
    ck_assert_int_eq(kill(first, SIGKILL), 0);
    ck_assert_int_eq(rtc_pool_wait(p, 100, &d), 0);   /* noticed, retrying */
    ck_assert_int_eq(rtc_pool_pending(p), 1);
    ck_assert_int_eq(children(kids, 4), 1);
    ck_assert_int_ne(kids[0], first);
    sleep_ms(100);
    ck_assert_int_eq(kill(kids[0], SIGKILL), 0);
    ck_assert_int_eq(rtc_pool_wait(p, 30000, &d), 1);
    ck_assert_int_eq(d.tag, 4);
    ck_assert(!d.ok);
    ck_assert_ptr_nonnull(d.log);
    ck_assert_msg(strcmp(d.log, "compiler worker died twice on this job (signal 9: Killed)") == 0, "log: %s",
                  d.log);
    free(d.log);
    ck_assert_int_eq(rtc_pool_wait(p, 100, &d), -1);

    ck_assert_int_eq(children(kids, 4), 1);
    rtc_pool_free(p);
    assert_no_children();
    free(g3);
}
END_TEST

START_TEST(test_pool_free_busy)
{
    make_tmpdir();
    rtc_cache c;
    char err[256] = "";
    ck_assert_int_eq(rtc_cache_init(&c, tmpdir, true, err, sizeof err), 0);
    rtc_options o = sm90();
    rtc_pool *p = rtc_pool_new(2, &c, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    for (int i = 0; i < 5; i++)
        rtc_pool_submit(p, i, SLOW, NULL);
    ck_assert_int_eq(rtc_pool_pending(p), 5);
    rtc_done d;
    ck_assert_int_eq(rtc_pool_wait(p, 50, &d), 0);   /* timeout: all still compiling */
    double t0 = kf_now();
    rtc_pool_free(p);
    ck_assert_double_lt(kf_now() - t0, 1.5);
    assert_no_children();
    remove_tmpdir();
}
END_TEST

START_TEST(test_pool_fds)
{
    int maxfd = 4096;
    bool *before = calloc((size_t)maxfd, 1), *after = calloc((size_t)maxfd, 1);
    int base = count_pipes(getpid(), before, maxfd);

    rtc_cache c;
    char err[256] = "";
    ck_assert_int_eq(rtc_cache_init(&c, NULL, false, err, sizeof err), 0);
    rtc_options o = sm90();
    rtc_pool *p = rtc_pool_new(3, &c, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);

    /* Parent: two ends per worker plus the pool's own notification pipe,
     * all close-on-exec. */
    ck_assert_int_eq(count_pipes(getpid(), after, maxfd), base + 3 * 2 + 2);
    for (int fd = 0; fd < maxfd; fd++)
        if (after[fd] && !before[fd])
            ck_assert_msg(fcntl(fd, F_GETFD) & FD_CLOEXEC, "fd %d lacks FD_CLOEXEC", fd);

    /* Each worker holds its own two ends and nothing of its siblings'. */
    pid_t kids[8];
    ck_assert_int_eq(children(kids, 8), 3);
    /* A worker closes the ends it inherited from its siblings as it starts:
     * give a freshly forked one (on a loaded machine) up to 2 s to do so. */
    for (int i = 0; i < 3; i++) {
        int n = count_pipes(kids[i], NULL, 0);
        for (int w = 0; w < 200 && n != base + 2; w++) {
            sleep_ms(10);
            n = count_pipes(kids[i], NULL, 0);
        }
        ck_assert_int_eq(n, base + 2);
    }

    rtc_pool_free(p);
    assert_no_children();
    ck_assert_int_eq(count_pipes(getpid(), NULL, 0), base);
    free(before);
    free(after);
}
END_TEST

// ---------------------------------------------------------------------------

static Suite *rtc_suite(void)
{
    Suite *s = suite_create("rtc");

    TCase *tc = tcase_create("compile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_compile_ok);
    tcase_add_test(tc, test_compile_error);
    tcase_add_test(tc, test_outcheck_compiles);
    tcase_add_test(tc, test_name_expressions);
    tcase_add_test(tc, test_compile_virtual_arch);
    tcase_add_test(tc, test_lowered_name);
    tcase_add_test(tc, test_version);
    suite_add_tcase(s, tc);

    tc = tcase_create("cache");
    tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_key);
    tcase_add_test(tc, test_key_headers);
    tcase_add_test(tc, test_store_lookup);
    tcase_add_test(tc, test_tampered);
    tcase_add_test(tc, test_disabled);
    tcase_add_test(tc, test_default_dir);
    suite_add_tcase(s, tc);

    tc = tcase_create("pool");
    tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pool_mixed);
    tcase_add_test(tc, test_pool_ahead);
    tcase_add_test(tc, test_pool_worker_killed);
    tcase_add_test(tc, test_pool_free_busy);
    tcase_add_test(tc, test_pool_fds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(rtc_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
