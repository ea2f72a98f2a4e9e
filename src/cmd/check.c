/*
 * check.c -- `kforge check`: validate configs and list their variants and
 * cases without a GPU; --compile compiles them with NVRTC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "family.h"
#include "util.h"

static const char *const check_help =
    "usage: kforge check [-v] [--compile [--shard K/N]] [--arch sm_XY] [--set KEY=VALUE]... CONFIG...\n"
    "\n"
    "Validates configs and lists their variants and sizes without touching a GPU; combinations\n"
    "that cannot run are counted by reason (with the first of each; -v, --verbose lists each).  --compile also compiles every variant with\n"
    "NVRTC for --arch (default sm_90) and reports failures with the compiler log; a custom\n"
    "kernel's reference kernel is compiled too (\"reference compiled\"), and the module that checks\n"
    "outputs on the GPU.\n"
    "\n"
    "Compiling where the CPUs are: --compile fills the cubin cache (--cache-dir DIR) that a run or\n"
    "tune on the GPU node then measures from, compiling nothing there, when it uses the same\n"
    "kforge, CUDA toolkit, config, --set options and --arch as the GPU (sm_90 for an H100).\n"
    "  --shard K/N         compile only the K-th of N slices of the variants (in a Slurm job array\n"
    "                      without --shard, the array task's slice); several jobs, on several\n"
    "                      nodes too, may fill one cache directory at once (tools/slurm-compile.sbatch)\n"
    "  -j N, --jobs N      compiler processes (default: number of CPUs)\n"
    "  --cache-dir DIR     cubin cache (default $KFORGE_CACHE_DIR or ~/.cache/kforge)\n"
    "  --no-cache, --lineinfo  as for run and tune\n"
    "\n"
    "examples:\n"
    "  kforge check configs/seeds.json\n"
    "  kforge check --compile --arch sm_90 configs/*.json\n"
    "  kforge check --compile --shard 2/8 --cache-dir /shared/kforge-cache configs/tune-reduce.json\n";

typedef struct {
    int failed;
    int compiled, cached; /* variants compiled now, and found in the cache */
} check_ctx;

/* The reference variant (check_reference): one line. */
static int on_reference(const kf_result *r, void *vctx)
{
    check_ctx *c = vctx;
    char label[256];
    const kf_family *f = family_of(&r->v);
    f->label(&r->v, label, sizeof label);
    if (r->status == KF_ST_OK)
        printf("  reference compiled  %s%s%s%s\n", f->name, label[0] ? " " : "", label, r->cached ? "  (cached)" : "");
    else {
        printf("  reference FAILED    %s%s%s: %s\n", f->name, label[0] ? " " : "", label, r->message);
        c->failed++;
    }
    return 0;
}

/* A family whose reference is a variant run on the GPU (reference_variant:
 * a custom kernel's parameter set, or a kernel of its own): it is compiled
 * too.  0, 1 (it failed), or -1 / -2 as run_compile_only. */
static int check_reference(const kf_space *sp, const kf_family *f, const run_opts *ro, check_ctx *cc, char *err,
                           size_t errlen)
{
    kf_variant rv;
    kf_shape s0;
    memset(&s0, 0, sizeof s0);
    if (sp->ncases > 0)
        s0 = sp->cases[0].shape;
    if (!f->reference_variant || sp->nvariants < 1 || f->reference_variant(&sp->variants[0], &s0, &rv) != 0)
        return 0;
    fflush(stdout);
    return run_compile_only(&rv, 1, ro, on_reference, cc, err, errlen);
}

static int on_compiled(const kf_result *r, void *vctx)
{
    check_ctx *c = vctx;
    char label[256];
    family_of(&r->v)->label(&r->v, label, sizeof label);
    if (r->status == KF_ST_OK) {
        printf("  compiled  %-10s %s%s\n", r->v.name, label, r->cached ? "  (cached)" : "");
        c->compiled += !r->cached;
        c->cached += r->cached;
    } else {
        printf("  FAILED    %-10s %s: %s\n", r->v.name, label, r->message);
        c->failed++;
    }
    return 0;
}

/* --compile: config i's variants of this shard (ord: the variants of the
 * configs before it), and its reference kernel in the shard that has
 * config i.  KF_EXIT_* */
static int compile_space(const opts *o, const kf_space *sp, const kf_family *f, int i, long long ord,
                         check_ctx *cc)
{
    char err[1024];
    run_opts ro = o->ro;
    ro.arch = o->arch ? o->arch : "sm_90";
    const kf_variant *mine = sp->variants;
    kf_variant *slice = NULL;
    int nmine = sp->nvariants;
    if (o->shard.n > 1) {
        slice = malloc(sizeof *slice * (size_t)(sp->nvariants > 0 ? sp->nvariants : 1));
        if (!slice) {
            fprintf(stderr, "kforge: out of memory\n");
            return KF_EXIT_USAGE;
        }
        nmine = 0;
        for (int v = 0; v < sp->nvariants; v++)
            if (shard_has(&o->shard, ord + v))
                slice[nmine++] = sp->variants[v];
        mine = slice;
        fprintf(stderr, "kforge check: %s: %d of the %d variants of %s are this shard's\n", o->shard.how, nmine,
                sp->nvariants, o->configs[i]);
    }
    int failed0 = cc->failed;
    fflush(stdout);
    int fl = nmine > 0 ? run_compile_only(mine, nmine, &ro, on_compiled, cc, err, sizeof err) : 0;
    int fr = fl < 0 || !shard_has(&o->shard, i) ? 0 : check_reference(sp, f, &ro, cc, err, sizeof err);
    free(slice);
    fl = fr < 0 ? fr : fl + fr;
    if (fl < 0) {
        fprintf(stderr, "kforge: %s\n", err);
        return kf_interrupted ? KF_EXIT_INTERRUPT : fl == -2 ? KF_EXIT_USAGE : KF_EXIT_NODEV;
    }
    return cc->failed > failed0 ? KF_EXIT_VARIANT : KF_EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    /* -v, --verbose: every combination that cannot run, one line each */
    bool verbose = false;
    char **av = malloc(sizeof *av * (size_t)(argc + 1));
    if (!av)
        return KF_EXIT_USAGE;
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0))
            verbose = true;
        else
            av[ac++] = argv[i];
    }
    av[ac] = NULL;
    int pr = parse_opts(ac, av, check_help, OPT_SET | OPT_COMPILE | OPT_CONFIGS, &o);
    free(av);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs == 0) {
        fprintf(stderr, "kforge check: no config file given\n%s", check_help);
        return KF_EXIT_USAGE;
    }
    if (o.shard.n > 0 && !o.compile) {
        fprintf(stderr, "kforge check: --shard goes with --compile (it slices the variants to compile)\n");
        return KF_EXIT_USAGE;
    }
    if (o.compile && o.shard.n == 0 && slurm_shard("check", &o.shard) != 0)
        return KF_EXIT_USAGE;
    kf_config *cfgs = calloc((size_t)o.nconfigs, sizeof *cfgs);
    if (!cfgs)
        return KF_EXIT_USAGE;
    char err[1024];
    int rc = KF_EXIT_OK;
    if (load_configs(&o, cfgs) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    long long ord = 0; /* variants of the configs before this one: --shard slices them all as one list */
    check_ctx cc = {0};
    for (int i = 0; i < o.nconfigs && rc == KF_EXIT_OK; i++) {
        kf_space sp;
        memset(&sp, 0, sizeof sp);
        if (space_expand(&cfgs[i], NULL, &sp, err, sizeof err) != 0) {
            fprintf(stderr, "kforge: %s\n", err);
            rc = kf_interrupted ? KF_EXIT_INTERRUPT : KF_EXIT_USAGE;
            break;
        }
        const kf_family *f = kf_families[cfgs[i].family];
        printf("%s: %d variant%s, %d case%s\n", cfgs[i].path, sp.nvariants, sp.nvariants == 1 ? "" : "s",
               sp.ncases, sp.ncases == 1 ? "" : "s");
        /* per variant, its shapes: one pass over the cases per variant
         * would be quadratic, so bucket the cases first */
        int *first = malloc(sizeof *first * (size_t)(sp.nvariants + 1));
        int *next = malloc(sizeof *next * (size_t)(sp.ncases + 1));
        if (first && next) {
            for (int v = 0; v < sp.nvariants; v++)
                first[v] = -1;
            for (int k = sp.ncases - 1; k >= 0; k--) {
                next[k] = first[sp.cases[k].variant];
                first[sp.cases[k].variant] = k;
            }
            for (int v = 0; v < sp.nvariants && !kf_interrupted; v++) {
                if (!shard_has(&o.shard, ord + v))
                    continue;
                char label[256];
                f->label(&sp.variants[v], label, sizeof label);
                printf("  %-12s %s  %s =", sp.variants[v].name[0] ? sp.variants[v].name : "-", label,
                       f->nsizes == 1 ? f->sizes[0].name : "shapes");
                for (int k = first[v]; k >= 0; k = next[k]) {
                    char st[128];
                    shape_short(f, &sp.cases[k].shape, st, sizeof st);
                    printf(" %s", st);
                }
                printf("\n");
            }
        } else {
            fprintf(stderr, "kforge: out of memory\n");
            rc = KF_EXIT_USAGE;
        }
        free(first);
        free(next);
        print_skipped(&sp, cfgs[i].path, verbose ? 2 : 1);
        if (kf_interrupted)
            rc = KF_EXIT_INTERRUPT;
        if (o.compile && rc == KF_EXIT_OK)
            rc = compile_space(&o, &sp, f, i, ord, &cc);
        ord += sp.nvariants;
        space_free(&sp);
    }
    if (o.compile && rc != KF_EXIT_USAGE && rc != KF_EXIT_INTERRUPT && rc != KF_EXIT_NODEV)
        fprintf(stderr, "kforge check: %s%s%d variant%s compiled now, %d from the cubin cache, %d failed\n",
                o.shard.n > 1 ? o.shard.how : "", o.shard.n > 1 ? ": " : "", cc.compiled,
                cc.compiled == 1 ? "" : "s", cc.cached, cc.failed);
out:
    free_configs(cfgs, o.nconfigs);
    free(cfgs);
    return rc;
}
