/*
 * fuzz_config.c -- libFuzzer target for the config pipeline: the bytes are a
 * config file; config_parse it, and if it parses, space_expand it (when the
 * expansion is small enough to stay fast) and generate the CUDA source of
 * up to 16 variants.  Everything is freed, so leaks show up under ASan.
 *
 *   make build/fuzz_config     (the Makefile's FUZZ_SRC lists the sources it needs)
 *   build/fuzz_config -dict=tests/fuzz/config.dict tests/fuzz/corpus
 *
 * tests/fuzz_replay.c is a main() that feeds files to this function, so
 * the regression inputs also run without clang/libFuzzer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "codegen.h"
#include "config.h"
#include "family.h"
#include "space.h"

/* space.c accepts up to 10 million combinations per spec: fine for a user,
 * far too slow for a fuzzer iteration.  Expand only configs whose product
 * of list lengths (times the sizes) stays below this. */
#define FUZZ_MAX_COMBINATIONS 4096
#define FUZZ_MAX_SOURCES 16

static int64_t combinations(const kf_config *cfg)
{
    int64_t total = 0;
    for (int i = 0; i < cfg->nspecs; i++) {
        const kf_spec *sp = &cfg->specs[i];
        const kf_family *f = kf_families[cfg->family];
        int64_t t = 1;
        for (int d = 0; d < f->nsizes && d < KF_MAX_DIMS; d++) {
            t *= sp->sz[d].count > 0 ? sp->sz[d].count : 1;
            if (t > FUZZ_MAX_COMBINATIONS)
                return t;
        }
        for (int a = 0; a < f->nparams; a++) {
            t *= sp->ax[a].count > 0 ? sp->ax[a].count : 1;
            if (t > FUZZ_MAX_COMBINATIONS)
                return t;
        }
        /* constraint evaluation is per combination and per size */
        t *= sp->n_constraints + 1;
        total += t;
        if (total > FUZZ_MAX_COMBINATIONS)
            return total;
    }
    return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kf_config cfg;
    char err[1024];
    if (config_parse((const char *)data, size, "fuzz.json", &cfg, err, sizeof err) != 0)
        return 0;
    if (combinations(&cfg) <= FUZZ_MAX_COMBINATIONS) {
        kf_space sp;
        if (space_expand(&cfg, NULL, &sp, err, sizeof err) == 0) {
            for (int i = 0; i < sp.nvariants && i < FUZZ_MAX_SOURCES; i++) {
                char *head = codegen_launch_comment(&sp.variants[i]);
                char *src = codegen_source(&sp.variants[i], err, sizeof err);
                if (!src)
                    abort(); /* a variant that passed space_expand must generate */
                free(head);
                free(src);
            }
            space_free(&sp);
        }
    }
    config_free(&cfg);
    return 0;
}
