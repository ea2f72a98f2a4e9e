/*
 * axes.c -- `kforge axes [FAMILY]`: the kernel families and every axis and
 * size of their parameter tables, with allowed values and defaults (the
 * table that drives configs, --set, results, tuning and the generated CUDA).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "family.h"
#include "param.h"
#include "util.h"

static const char *const axes_help =
    "usage: kforge axes [FAMILY] [--format table|json|csv] [--no-header]\n"
    "\n"
    "Lists the kernel families, or the axes (variant parameters) and sizes of FAMILY: name,\n"
    "allowed values, default and a line of documentation.  Every axis takes a value or a list in\n"
    "a config and with --set; integer axes without a closed set of values also take a range\n"
    "{\"range\": [lo, hi], \"step\": \"pow2\" | k}.  --format csv: family,key,values lines (the\n"
    "enumerated values space-separated), for scripts and the bash completion; it has no header\n"
    "line, and takes --no-header as run and compare do.\n"
    "\n"
    "examples:\n"
    "  kforge axes\n"
    "  kforge axes reduce\n"
    "  kforge axes reduce --format json | jq -r '.axes[].name'\n";

/* size: a size (n, rows, ...), which a config must give unless optional;
 * an axis always has a default. */
static void print_param(const kf_param *p, bool size, bool json, bool first)
{
    strbuf allowed = {0}, def = {0};
    param_allowed(&allowed, p);
    if (p->kind == KF_PK_INT && !p->allowed)
        sb_printf(&allowed, " %lld..%lld", (long long)p->lo, (long long)p->hi);
    if (size && p->optional)
        sb_append(&def, "optional");
    else if (size)
        sb_append(&def, "required");
    else
        param_json(&def, p, p->def);
    if (json) {
        strbuf b = {0};
        sb_append(&b, first ? "" : ", ");
        sb_append(&b, "{\"name\": ");
        sb_json_string(&b, p->name);
        sb_printf(&b, ", \"kind\": \"%s\", \"allowed\": ", p->kind == KF_PK_ENUM ? "enum" : p->kind == KF_PK_INT ? "int" : "grid");
        if (p->kind == KF_PK_ENUM) {
            sb_append(&b, "[");
            for (int i = 0; i < p->count; i++) {
                sb_append(&b, i ? ", " : "");
                sb_json_string(&b, p->names[i]);
            }
            sb_append(&b, "]");
        } else {
            sb_json_string(&b, allowed.s ? allowed.s : "");
        }
        /* the default as the config writes it: "float32", 256, {"waves": 1};
         * a size has none: "required" or "optional" */
        sb_append(&b, ", \"default\": ");
        if (size)
            sb_json_string(&b, def.s ? def.s : "");
        else
            sb_append(&b, def.s ? def.s : "null");
        sb_printf(&b, ", \"key\": %s, \"doc\": ", p->key ? "true" : "false");
        sb_json_string(&b, p->doc ? p->doc : "");
        sb_append(&b, "}");
        fputs(b.s, stdout);
        sb_free(&b);
    } else {
        printf("  %-20s %s\n  %-20s   default %s%s\n  %-20s   %s\n", p->name, p->doc ? p->doc : "", "",
               def.s ? def.s : "", p->key ? "; part of what is computed (a tuning-database key)" : "", "",
               allowed.s ? allowed.s : "");
    }
    sb_free(&allowed);
    sb_free(&def);
}

int cmd_axes(int argc, char **argv)
{
    opts o;
    opts_init(&o);
    int pr = parse_opts(argc, argv, axes_help, OPT_FORMAT | OPT_CSV | OPT_CONFIGS, &o);
    if (pr != 0)
        return pr > 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
    bool json = o.fmt == KF_FMT_JSON || o.fmt == KF_FMT_JSONL;
    if (o.fmt == KF_FMT_CSV) {
        /* family,key,values (space-separated, enumerated keys only): for
         * scripts and the bash completion */
        for (int i = 0; i < kf_nfamilies; i++) {
            const kf_family *f = kf_families[i];
            if (o.nconfigs && strcmp(o.configs[0], f->name) != 0)
                continue;
            for (int k = 0; k < f->nparams + f->nsizes; k++) {
                const kf_param *p = k < f->nparams ? &f->params[k] : &f->sizes[k - f->nparams];
                printf("%s,%s,", f->name, p->name);
                for (int v = 0; p->kind == KF_PK_ENUM && v < p->count; v++)
                    printf("%s%s", v ? " " : "", p->names[v]);
                printf("\n");
            }
        }
        return KF_EXIT_OK;
    }
    if (o.nconfigs == 0) {
        if (json)
            printf("{\"families\": [");
        for (int i = 0; i < kf_nfamilies; i++) {
            if (json) {
                strbuf b = {0};
                sb_append(&b, i ? ", {\"name\": " : "{\"name\": ");
                sb_json_string(&b, kf_families[i]->name);
                sb_append(&b, ", \"doc\": ");
                sb_json_string(&b, kf_families[i]->doc);
                sb_append(&b, "}");
                fputs(b.s, stdout);
                sb_free(&b);
            } else {
                printf("%-14s %s\n", kf_families[i]->name, kf_families[i]->doc);
            }
        }
        if (json)
            printf("]}\n");
        return KF_EXIT_OK;
    }
    int f = family_find(o.configs[0]);
    if (f < 0 && o.nconfigs == 1 && strstr(o.configs[0], ".json") && family_from_config("axes", o.configs[0], &f) != 0)
        return KF_EXIT_USAGE; /* a family a config makes (kernel "custom"): the config names it */
    if (f < 0 || o.nconfigs > 1) {
        const char *names[16];
        int n = 0;
        for (int i = 0; i < kf_nfamilies && n < 16; i++)
            names[n++] = kf_families[i]->name;
        const char *near = kf_suggest(o.configs[0], names, n);
        fprintf(stderr, "kforge axes: unknown kernel family '%s'%s%s%s; kforge axes lists them\n", o.configs[0],
                near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return KF_EXIT_USAGE;
    }
    const kf_family *fam = kf_families[f];
    if (json) {
        printf("{\"family\": \"%s\", \"axes\": [", fam->name);
        for (int i = 0; i < fam->nparams; i++)
            print_param(&fam->params[i], false, true, i == 0);
        printf("], \"sizes\": [");
        for (int i = 0; i < fam->nsizes; i++)
            print_param(&fam->sizes[i], true, true, i == 0);
        printf("], \"derived\": [");
        for (int i = 0; i < fam->nderived; i++)
            printf("%s\"%s\"", i ? ", " : "", fam->derived[i]);
        printf("]}\n");
        return KF_EXIT_OK;
    }
    printf("%s -- %s\n\naxes:\n", fam->name, fam->doc);
    for (int i = 0; i < fam->nparams; i++)
        print_param(&fam->params[i], false, false, i == 0);
    printf("\nsizes:\n");
    for (int i = 0; i < fam->nsizes; i++)
        print_param(&fam->sizes[i], true, false, i == 0);
    if (fam->nderived) {
        printf("\nalso in constraints:");
        for (int i = 0; i < fam->nderived; i++)
            printf(" %s", fam->derived[i]);
        printf("\n");
    }
    return KF_EXIT_OK;
}
