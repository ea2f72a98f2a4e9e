/*
 * gen.c -- `kforge gen`: the CUDA source of every variant of a config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "codegen.h"
#include "util.h"

static const char *const gen_help =
    "usage: kforge gen [--set KEY=VALUE]... CONFIG\n"
    "\n"
    "Prints the CUDA source kforge generates for every variant of CONFIG, each opening with a\n"
    "comment that names every parameter.  Needs no GPU and no NVRTC.\n"
    "\n"
    "example:\n"
    "  kforge gen configs/seeds.json --set block_size=512 > seeds512.cu\n";

int cmd_gen(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, gen_help, OPT_SET | OPT_CONFIGS, &o);
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
    print_skipped(&sp, cfg.path, false);
    for (int i = 0; i < sp.nvariants && !kf_interrupted; i++) {
        char *head = codegen_launch_comment(&sp.variants[i]);
        char *src = codegen_source(&sp.variants[i], err, sizeof err);
        if (!src) {
            fprintf(stderr, "kforge: %s\n", err);
            free(head);
            rc = KF_EXIT_USAGE;
            goto out;
        }
        printf("%s%s\n", head, src);
        free(head);
        free(src);
    }
    if (kf_interrupted)
        rc = KF_EXIT_INTERRUPT;
out:
    space_free(&sp);
    config_free(&cfg);
    return rc;
}
