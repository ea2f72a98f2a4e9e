/*
 * gen.c -- `kforge gen`: the CUDA source of every variant of a config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "codegen.h"
#include "util.h"

/* The most variants in one generated file (about 30 kB each). */
#define KF_GEN_MAX_VARIANTS 10000

static const char *const gen_help =
    "usage: kforge gen [--set KEY=VALUE]... [--only NAME[,NAME...]] [--reference] CONFIG\n"
    "\n"
    "Prints the CUDA source kforge generates for the variants of CONFIG, each opening with a\n"
    "comment that names every parameter.  Needs no GPU and no NVRTC.  One variant: its source as\n"
    "kforge run compiles it (kernel kf_reduce).  Several: one file that compiles as a whole (nvcc\n"
    "or NVRTC), each variant in a namespace of its own with its kernel renamed <entry>_<name>\n"
    "(kf_reduce_reduce6; v<i> for a variant without a name); the opening comment lists them.\n"
    "At most 10000 variants in one file.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE         override a config key in every variant (repeatable)\n"
    "  --only NAME[,NAME...]   only the variants with these names\n"
    "  --reference             the source of the reference kernel instead (a custom kernel's: its own\n"
    "                          source and entry, or a parameter set of the same source), as the GPU\n"
    "                          worker compiles it\n"
    "\n"
    "examples:\n"
    "  kforge gen configs/seeds.json --set block_size=512 > seeds512.cu\n"
    "  kforge gen configs/seeds.json --only reduce5,reduce6 > two.cu && nvcc -c two.cu\n";

/* --reference: the source of the family's reference variant (of the first
 * variant and case), from its own family (a reference kernel of its own). */
static int gen_reference(const kf_config *cfg, const kf_space *sp)
{
    const kf_family *f = kf_families[cfg->family];
    kf_variant rv;
    kf_shape s0;
    memset(&s0, 0, sizeof s0);
    if (sp->ncases > 0)
        s0 = sp->cases[0].shape;
    if (!f->reference_variant || sp->nvariants < 1 || f->reference_variant(&sp->variants[0], &s0, &rv) != 0) {
        fprintf(stderr, "kforge gen: %s: the %s family has no reference kernel (its reference is computed on the "
                        "CPU, or given as .npy files)\n", cfg->path, f->name);
        return KF_EXIT_USAGE;
    }
    char err[1024];
    char *src = family_of(&rv)->source(&rv, err, sizeof err);
    if (!src) {
        fprintf(stderr, "kforge: %s\n", err);
        return KF_EXIT_USAGE;
    }
    fputs(src, stdout);
    free(src);
    return KF_EXIT_OK;
}

int cmd_gen(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, gen_help, OPT_SET | OPT_ONLY | OPT_CONFIGS | OPT_REFERENCE, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    if (o.nconfigs != 1) {
        fprintf(stderr, "kforge gen: give exactly one config file\n%s", gen_help);
        return KF_EXIT_USAGE;
    }
    kf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    kf_space sp;
    memset(&sp, 0, sizeof sp);
    char err[1024];
    int rc = KF_EXIT_OK;
    if (load_configs(&o, &cfg) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    if (space_expand(&cfg, NULL, &sp, err, sizeof err) != 0) {
        fprintf(stderr, "kforge: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    print_skipped(&sp, cfg.path, 0);
    if (select_only(&o, &sp, 1) != 0) {
        rc = KF_EXIT_USAGE;
        goto out;
    }
    if (o.reference) {
        rc = gen_reference(&cfg, &sp);
        goto out;
    }
    if (sp.nvariants > KF_GEN_MAX_VARIANTS) {
        /* one file of them all: tens of kB each, gigabytes for a large space */
        fprintf(stderr, "kforge gen: %s: %d variants; gen writes at most %d in one file: pick some with --only "
                        "or --set, or narrow the lists\n",
                cfg.path, sp.nvariants, KF_GEN_MAX_VARIANTS);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    char *src = codegen_multi_source(sp.variants, sp.nvariants, err, sizeof err);
    if (!src) {
        fprintf(stderr, "kforge: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    fputs(src, stdout);
    free(src);
    if (kf_interrupted)
        rc = KF_EXIT_INTERRUPT;
out:
    space_free(&sp);
    config_free(&cfg);
    return rc;
}
