/*
 * tune.c -- autotuning (being written).
 */
#include "tune.h"

#include <stdio.h>

#include "kforge.h"

int tune_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kforge tune: not implemented yet\n");
    return KF_EXIT_USAGE;
}

int best_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kforge best: not implemented yet\n");
    return KF_EXIT_USAGE;
}
