/*
 * fuzz_replay.c -- runs LLVMFuzzerTestOneInput (tests/fuzz_config.c) on
 * files, without libFuzzer, so that `make check` can replay the fuzz
 * regression inputs and the seed corpus with any C compiler (add
 * -fsanitize=address,undefined -fno-sanitize-recover=all where available):
 *
 *   make build/fuzz_replay     (tests/fuzz_config.c and the Makefile's FUZZ_SRC)
 *   build/fuzz_replay tests/fuzz/regressions/<files> tests/fuzz/corpus/<files>
 *
 * Exit status 0 when every file was read and run; a bug found by a
 * sanitizer ends the process with the sanitizer's report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file, malloc'd (at least one byte allocated), or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        size_t len = 0;
        uint8_t *data = slurp(argv[i], &len);
        if (!data) {
            perror(argv[i]);
            failed = 1;
            continue;
        }
        LLVMFuzzerTestOneInput(data, len);
        free(data);
    }
    printf("fuzz_replay: %d input%s replayed\n", argc - 1, argc == 2 ? "" : "s");
    return failed;
}
