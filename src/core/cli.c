/*
 * cli.c -- see cli.h.
 */
#include "cli.h"


#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cli_init(cli *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->argc = argc;
    c->argv = argv;
    c->i = 0;
}

bool cli_next(cli *c)
{
    if (c->error)
        return false;
    c->i++;
    c->ntried = 0;
    if (c->i < c->argc && !c->dashdash && strcmp(c->argv[c->i], "--") == 0) {
        c->dashdash = true;
        c->i++;
    }
    return c->i < c->argc;
}

static const char *cur(const cli *c) { return c->argv[c->i]; }

static void tried(cli *c, const char *name)
{
    if (c->ntried < 64)
        c->tried[c->ntried++] = name;
}

bool cli_flag(cli *c, const char *name)
{
    tried(c, name);
    return !c->dashdash && strcmp(cur(c), name) == 0;
}

bool cli_value(cli *c, const char *name, const char **val)
{
    tried(c, name);
    if (c->dashdash)
        return false;
    const char *a = cur(c);
    size_t len = strlen(name);
    if (strncmp(a, name, len) != 0)
        return false;
    if (a[len] == '=') {
        *val = a + len + 1;
        return true;
    }
    if (a[len] != '\0')
        return false;
    if (c->i + 1 >= c->argc) {
        cli_fail(c, "%s needs a value", name);
        *val = "";
        return true;
    }
    *val = c->argv[++c->i];
    return true;
}

bool cli_attached(cli *c, const char *name, const char **val)
{
    size_t len = strlen(name);
    const char *a = cur(c);
    if (c->dashdash || strncmp(a, name, len) != 0 || a[len] < '0' || a[len] > '9')
        return false;
    *val = a + len;
    return true;
}

bool cli_positional(cli *c, const char **val)
{
    const char *a = cur(c);
    if (c->dashdash || a[0] != '-' || strcmp(a, "-") == 0) {
        *val = a;
        return true;
    }
    return false;
}

int cli_fail(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kforge %s: ", c->argv[0]);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    c->error = true;
    return -1;
}

int cli_unknown(cli *c)
{
    char opt[128];
    snprintf(opt, sizeof opt, "%s", cur(c));
    char *eq = strchr(opt, '=');
    if (eq)
        *eq = '\0';
    const char *near = kf_suggest(opt, c->tried, c->ntried);
    if (near)
        return cli_fail(c, "unknown option '%s' (did you mean '%s'?); see 'kforge %s --help'", opt, near,
                        c->argv[0]);
    return cli_fail(c, "unknown option '%s'; see 'kforge %s --help'", opt, c->argv[0]);
}
