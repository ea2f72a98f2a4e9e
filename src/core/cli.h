/*
 * cli.h -- a small argv walker for the subcommands: flags, "--opt value" and
 * "--opt=value", positionals ("-" is a positional; "--" ends options), and
 * "unknown option" errors with a suggestion drawn from the options the
 * command tried.
 *
 *   cli c; cli_init(&c, argc, argv);
 *   while (cli_next(&c)) {
 *       if (cli_flag(&c, "--quiet")) ...
 *       else if (cli_value(&c, "--format", &val)) ...
 *       else if (cli_positional(&c, &val)) ...
 *       else return cli_unknown(&c);
 *   }
 *   if (c.error) return -1;
 */
#ifndef KF_CLI_H
#define KF_CLI_H

#include <stdbool.h>

#include "util.h"

typedef struct {
    int argc;
    char **argv;            /* argv[0] is the command name */
    int i;
    bool dashdash;
    bool error;
    const char *tried[64];  /* option names checked against the current argument */
    int ntried;
} cli;

void cli_init(cli *c, int argc, char **argv);
bool cli_next(cli *c);
bool cli_flag(cli *c, const char *name);
bool cli_value(cli *c, const char *name, const char **val);
/* A short option with its number attached: -j2 (as make takes it). */
bool cli_attached(cli *c, const char *name, const char **val);
bool cli_positional(cli *c, const char **val);
/* Print "kforge CMD: message" to stderr; return -1. */
int cli_fail(cli *c, const char *fmt, ...) KF_PRINTF(2, 3);
int cli_unknown(cli *c);


#endif
