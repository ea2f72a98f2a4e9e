/*
 * module.c -- see module.h.
 */
#include "module.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtc.h"
#include "util.h"

/* The launcher's go (launch.h) for gpu_kernels (bench_impl.h). */
int gpu_go(kf_launcher *l, int k, kf_dim3 grid, kf_dim3 block, unsigned smem, void **args)
{
    gpu_kernels *K = l->ctx;
    kf_cu *cu = &K->c->B->g.cu;
    if (smem > (48u << 10) && smem > K->smem_set[k]) {
        if (!cu_ok(K->c, cu->cuFuncSetAttribute(K->fn[k], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                   "cuFuncSetAttribute(dynamic shared memory)"))
            return -1;
        K->smem_set[k] = smem;
    }
    return cu_ok(K->c, cu->cuLaunchKernel(K->fn[k], grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
                                          K->c->B->stream, args, NULL),
                 "cuLaunchKernel")
               ? 0
               : -1;
}

/* The block of kernel 0 and its dynamic shared memory (family.h). */
static void block_of(const kf_variant *v, kf_dim3 *block, unsigned *smem)
{
    const kf_family *f = family_of(v);
    *block = (kf_dim3){1, 1, 1};
    *smem = 0;
    if (f->block_shape)
        f->block_shape(v, block, smem);
    else
        block->x = (unsigned)v->p[f->p_block];
}

/* The kernels module mod defines, as "a, b, c" (CUDA 12.4+; else a note). */
static void module_kernels(bench *B, CUmodule mod, char *buf, size_t len)
{
    unsigned n = 0;
    CUfunction fns[64];
    snprintf(buf, len, "(not known: the driver cannot list a module's kernels)");
    if (!B->fn_count || !B->fn_enum || !B->fn_name || B->fn_count(&n, mod) != CUDA_SUCCESS)
        return;
    n = n > 64 ? 64 : n;
    if (B->fn_enum(fns, n, mod) != CUDA_SUCCESS)
        return;
    size_t o = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && o < len; i++) {
        const char *name = NULL;
        if (B->fn_name(&name, fns[i]) == CUDA_SUCCESS && name)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", name);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
}

/* The Itanium mangling of a template argument list's simple types
 * ("float" -> "f", "float, 4" -> "fLi4E"): false when a type is not one. */
static bool mangle_args(const char *args, char *out, size_t len)
{
    static const char *const types[][2] = {
        {"float", "f"}, {"double", "d"}, {"int", "i"}, {"unsigned int", "j"}, {"unsigned", "j"}, {"long long", "x"},
        {"unsigned long long", "y"}, {"long", "l"}, {"unsigned long", "m"}, {"short", "s"}, {"char", "c"},
        {"signed char", "a"}, {"unsigned char", "h"}, {"bool", "b"}, {"__half", "6__half"}, {"half", "6__half"}};
    size_t o = 0;
    out[0] = '\0';
    const char *p = args;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        while (n > 0 && p[n - 1] == ' ')
            n--;
        char tok[64];
        if (n == 0 || n >= sizeof tok)
            return false;
        memcpy(tok, p, n);
        tok[n] = '\0';
        const char *code = NULL;
        for (size_t t = 0; t < sizeof types / sizeof types[0] && !code; t++)
            if (strcmp(tok, types[t][0]) == 0)
                code = types[t][1];
        char num[48];
        long long x;
        if (!code && kf_parse_ll(tok, &x)) {
            snprintf(num, sizeof num, x < 0 ? "Lin%lldE" : "Li%lldE", x < 0 ? -x : x);
            code = num;
        }
        if (!code || o + strlen(code) >= len)
            return false;
        o += (size_t)snprintf(out + o, len - o, "%s", code);
        p += n;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
    }
    return o > 0;
}

/* A C++ entry ("transpose", "transpose<float>", "ns::k" not handled) in
 * mod: the one kernel whose mangled name is _Z<len><name>, with
 * I<args>E after it for a template instantiation.  CUDA 12.4+. */
static bool find_cxx(bench *B, CUmodule mod, const char *entry, CUfunction *fn)
{
    unsigned n = 0;
    CUfunction fns[256];
    if (!B->fn_count || !B->fn_enum || !B->fn_name || B->fn_count(&n, mod) != CUDA_SUCCESS)
        return false;
    n = n > 256 ? 256 : n;
    if (B->fn_enum(fns, n, mod) != CUDA_SUCCESS)
        return false;
    size_t base = strcspn(entry, "<");
    char prefix[320], targs[128] = "";
    snprintf(prefix, sizeof prefix, "_Z%zu%.*s", base, (int)base, entry);
    if (entry[base] == '<') {
        char inner[200];
        const char *close = strrchr(entry, '>');
        if (!close || close < entry + base)
            return false;
        snprintf(inner, sizeof inner, "%.*s", (int)(close - entry - base - 1), entry + base + 1);
        char m[120];
        if (!mangle_args(inner, m, sizeof m))
            return false;
        snprintf(targs, sizeof targs, "I%sE", m);
    }
    int found = 0;
    for (unsigned i = 0; i < n; i++) {
        const char *name = NULL;
        if (B->fn_name(&name, fns[i]) != CUDA_SUCCESS || !name || strncmp(name, prefix, strlen(prefix)) != 0)
            continue;
        const char *rest = name + strlen(prefix);
        if (targs[0] ? strncmp(rest, targs, strlen(targs)) == 0 : rest[0] != 'I') {
            *fn = fns[i];
            found++;
        }
    }
    return found == 1;
}

/* The family's kernels in mod, for launcher l; each checked against the
 * family's arg_sizes where the driver can tell a kernel's parameters.  An
 * unknown entry lists the kernels the module defines. */
bool get_kernels(cctx *c, CUmodule mod, const kf_variant *v, const char *names, gpu_kernels *K,
                 kf_launcher *l)
{
    const kf_family *fam = family_of(v);
    bench *B = c->B;
    kf_cu *cu = &B->g.cu;
    kf_result *r = c->r;
    for (int k = 0; k < fam->nentries && k < KF_MAX_KERNELS; k++) {
        const char *e = fam->entries[k];
        char lowered[512];
        /* NVRTC's lowered name (a name expression), else the name itself, else
         * a C++ name's mangling of simple template arguments */
        CUresult res = cu->cuModuleGetFunction(&K->fn[k], mod, rtc_name_lookup(names, e, lowered, sizeof lowered) ?
                                                                   lowered : e);
        if (res == CUDA_ERROR_NOT_FOUND && find_cxx(B, mod, e, &K->fn[k]))
            res = CUDA_SUCCESS;
        if (res == CUDA_ERROR_NOT_FOUND) {
            char list[400];
            module_kernels(B, mod, list, sizeof list);
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "no kernel \"%s\" in the module (an extern \"C\" name, a C++ "
                     "name, or a template instantiated in the source); it defines: %s", e, list);
            return false;
        }
        char what[160];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", e);
        if (!cu_ok(c, res, what))
            return false;
        cu->cuFuncGetAttribute(&l->max_threads[k], CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, K->fn[k]);
        cu->cuFuncGetAttribute(&l->static_smem[k], CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, K->fn[k]);
        size_t want[32];
        int nwant = fam->arg_sizes ? fam->arg_sizes(v, k, want, 32) : -1;
        if (nwant < 0 || !B->fn_param)
            continue;
        int have = 0;
        size_t off, size;
        CUresult pr;
        while (have < 64 && (pr = B->fn_param(K->fn[k], (size_t)have, &off, &size)) == CUDA_SUCCESS) {
            if (have < nwant && size != want[have]) {
                r->status = KF_ST_LAUNCH;
                family_arg_mismatch(v, k, e, have, want[have], size, r->message, sizeof r->message);
                return false;
            }
            have++;
        }
        if (pr != CUDA_ERROR_INVALID_VALUE) /* past the last parameter; anything else: the driver cannot tell */
            continue;
        if (have != nwant) {
            r->status = KF_ST_LAUNCH;
            family_arg_mismatch(v, k, e, -1, (size_t)nwant, (size_t)have, r->message, sizeof r->message);
            return false;
        }
    }
    return true;
}

/* The family's module constants (family.h: kf_constant) written into mod
 * before any launch: each variable looked up by name and checked to hold
 * what the family describes, its contents made from the seed and copied
 * in.  false with c->r saying why: a missing variable or one too small is
 * a launch error naming it and both sizes. */
bool set_constants(cctx *c, CUmodule mod, const kf_variant *v, const kf_shape *shape, uint64_t seed)
{
    if (!family_of(v)->constants)
        return true;
    kf_cu *cu = &c->B->g.cu;
    kf_result *r = c->r;
    kf_constant_set set;
    void *host[KF_MAX_CONSTANTS];
    if (data_constants(v, shape, seed, &set, host) != 0) {
        r->status = KF_ST_OOM;
        snprintf(r->message, sizeof r->message, "out of host memory for the module's constants");
        return false;
    }
    static const char *const ctype[KF_DTYPE_COUNT] = {"int", "unsigned", "long long", "float", "double",
                                                      "__nv_bfloat16", "__half", "signed char", "unsigned char"};
    bool ok = true;
    for (int i = 0; ok && i < set.n; i++) {
        const kf_constant *k = &set.c[i];
        size_t want = (size_t)k->elems * k->elem_bytes, have = 0;
        char type[32];
        snprintf(type, sizeof type, "%s", k->dtype >= 0 ? kf_dtype_names[k->dtype] : "bytes");
        CUdeviceptr d = 0;
        CUresult res = cu->cuModuleGetGlobal(&d, &have, mod, k->name);
        if (res == CUDA_ERROR_NOT_FOUND) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "constant \"%s\": no __constant__ or __device__ variable of that "
                     "name in the module (it must be declared at file scope, outside any namespace, e.g. "
                     "__constant__ %s %s[%lld];)", k->name, k->dtype >= 0 && k->dtype < KF_DTYPE_COUNT ?
                     ctype[k->dtype] : "char", k->name, (long long)k->elems);
            ok = false;
            break;
        }
        char what[128];
        snprintf(what, sizeof what, "cuModuleGetGlobal(%s)", k->name);
        if (!(ok = cu_ok(c, res, what)))
            break;
        if (have < want) {
            r->status = KF_ST_LAUNCH;
            snprintf(r->message, sizeof r->message, "constant \"%s\": the module's variable is %zu bytes, the config "
                     "describes %zu (%lld %s)", k->name, have, want, (long long)k->elems, type);
            ok = false;
            break;
        }
        snprintf(what, sizeof what, "cuMemcpyHtoD(constant %s)", k->name);
        ok = want == 0 || cu_ok(c, cu->cuMemcpyHtoD(d, host[i], want), what);
    }
    int n = set.n;
    data_constants_free(&set, host);
    /* a copy from pageable memory may still be under way when cuMemcpyHtoD
     * returns: done before any launch on the worker's stream */
    return ok && (n == 0 || cu_ok(c, cu->cuCtxSynchronize(), "cuCtxSynchronize(constants)"));
}

/* Loads the module and its kernels, works out the occupancy and plans the
 * launches. */
bool load_and_plan(gcase *q, const void *cubin)
{
    const kf_family *fam = family_of(q->v);
    kf_cu *cu = &q->B->g.cu;
    kf_result *r = q->c.r;
    kf_launcher *l = &q->R.l;
    if (!cu_ok(&q->c, cu->cuModuleLoadData(&q->mod, cubin), "cuModuleLoadData"))
        return false;
    *l = (kf_launcher){.dev = &q->B->g.info, .r = r, .nkernels = fam->nentries, .go = gpu_go, .ctx = &q->K};
    q->K.c = &q->c;
    if (!get_kernels(&q->c, q->mod, q->v, q->names, &q->K, l) || !set_constants(&q->c, q->mod, q->v, q->shape, q->b->seed))
        return false;
    cu->cuFuncGetAttribute(&r->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, q->K.fn[0]);
    kf_dim3 block;
    unsigned smem;
    block_of(q->v, &block, &smem);
    r->smem_bytes = l->static_smem[0] + (int)smem;
    char why[200];
    if (launch_check(l, 0, (kf_dim3){1, 1, 1}, block, smem, why, sizeof why) != 0) {
        r->status = KF_ST_SKIPPED;
        snprintf(r->message, sizeof r->message, "skipped: %s", why);
        return false;
    }
    int threads = (int)(block.x * block.y * block.z);
    if (smem > (48u << 10)) {
        if (!cu_ok(&q->c, cu->cuFuncSetAttribute(q->K.fn[0], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem),
                   "cuFuncSetAttribute(dynamic shared memory)"))
            return false;
        q->K.smem_set[0] = smem;
    }
    if (!cu_ok(&q->c, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&r->occupancy, q->K.fn[0], threads, smem),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
        return false;
    if (r->occupancy < 1) {
        r->status = KF_ST_LAUNCH;
        snprintf(r->message, sizeof r->message, "no block of %d threads fits on an SM (%d registers/thread)", threads,
                 r->regs);
        return false;
    }
    if (fam->plan(q->v, q->shape, q->B->g.info.sms, r->occupancy, &q->p) != 0) {
        r->status = KF_ST_LAUNCH;
        char st[128];
        shape_text(fam, q->shape, st, sizeof st);
        snprintf(r->message, sizeof r->message, "cannot plan launches for %s", st);
        return false;
    }
    r->launches = q->p.launches;
    r->blocks = q->p.blocks;
    r->deterministic = q->p.deterministic;
    return true;
}

/* src compiled for this device in the worker (the cubin cache first):
 * the cubin, or NULL with NVRTC's log or the error in err. */
static struct {
    bool set, enabled;
    char dir[PATH_MAX];
} here_cache = {.enabled = true};

void bench_cache(const char *dir, bool enabled)
{
    here_cache.set = true;
    here_cache.enabled = enabled;
    snprintf(here_cache.dir, sizeof here_cache.dir, "%s", dir ? dir : "");
}

void *bench_compile_for(const char *arch, const char *src, const char *name, bool compile, char **names,
                        bool *compiled, char *err, size_t errlen)
{
    *names = NULL;
    *compiled = false;
    rtc_options opt;
    memset(&opt, 0, sizeof opt);
    snprintf(opt.arch, sizeof opt.arch, "%s", arch);
    rtc_cache cache;
    char path[PATH_MAX], cerr[KF_MSG_MAX];
    void *cubin = NULL;
    size_t len = 0;
    bool cached = rtc_cache_init(&cache, here_cache.set && here_cache.dir[0] ? here_cache.dir : NULL,
                                 here_cache.enabled, cerr, sizeof cerr) == 0 && cache.enabled;
    if (cached && rtc_cache_lookup(&cache, src, &opt, path, sizeof path))
        cubin = kf_read_file(path, &len, cerr, sizeof cerr);
    if (cubin) {
        char np[PATH_MAX];
        rtc_names_path(path, np, sizeof np);
        size_t nlen = 0;
        *names = kf_read_file(np, &nlen, NULL, 0); /* NULL: none asked for */
        return cubin;
    }
    if (!compile) {
        kf_err(err, errlen, "%s is not in the cubin cache", name);
        return NULL;
    }
    char *log = NULL;
    double t0 = kf_now();
    if (rtc_compile_named(src, name, &opt, &cubin, &len, &log, names, err, errlen) != 0) {
        if (log)
            snprintf(err, errlen, "%s", log);
        free(log);
        return NULL;
    }
    free(log);
    *compiled = true;
    kf_trace("%s compiled in the worker (%.0f ms)", name, (kf_now() - t0) * 1e3);
    if (cached)
        rtc_cache_store_named(&cache, src, &opt, cubin, len, *names, path, sizeof path, cerr, sizeof cerr);
    return cubin;
}

void *compile_here(bench *B, const char *src, const char *name, char **names, char *err, size_t errlen)
{
    char arch[16];
    bool compiled;
    snprintf(arch, sizeof arch, "sm_%d%d", B->g.info.cc_major, B->g.info.cc_minor);
    return bench_compile_for(arch, src, name, true, names, &compiled, err, errlen);
}
