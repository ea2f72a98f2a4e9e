/*
 * best.c -- `kforge best`: the best known variant from the tuning database,
 * as a config or a C header.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "family.h"
#include "key.h"
#include "pick.h"
#include "tunedb.h"
#include "util.h"

static const char *const best_help =
    "usage: kforge best [--kernel K] [--dtype T] [--op OP] --SIZE N... [--db DIR] [--gpu NAME]\n"
    "                   [--deterministic | --fastest] [--max-error E] [--header]\n"
    "       kforge best --list [--kernel K] [--dtype T] [--op OP] [--SIZE N...] [--deterministic]\n"
    "                   [--db DIR] [--gpu NAME]\n"
    "       kforge best --delete --dtype T --op OP --SIZE N... [--kernel K] [--deterministic]\n"
    "                   [--db DIR] [--gpu NAME]\n"
    "\n"
    "Prints the best known variant of kernel family K (default reduce) for dtype T (default\n"
    "float32), OP (default sum) and a size (reduce: --n N; reduce_rows: --rows R --cols C) from the\n"
    "tuning database that kforge tune fills: as a kforge config (JSON) that kforge run accepts, or\n"
    "with --header as a C header of #defines (KFORGE_REDUCE_BLOCK_SIZE, ...).  Without an entry for\n"
    "exactly that size, the entry for the nearest tuned size (log scale) is printed and the output\n"
    "says so.  Either way it says whether the variant is run-to-run deterministic.  A custom\n"
    "kernel's config describes the kernel again, its files named relative to the folder of the file\n"
    "stdout goes to (> dir/best.json), else to the current folder.\n"
    "\n"
    "Which variant: a size's fastest run-to-run deterministic entry where it has one (float sums\n"
    "and products whose blocks add in arrival order, with atomics, are a few percent faster at\n"
    "most, but their bits change run to run and their error grows with the number of blocks),\n"
    "else its fastest; --fastest takes the fastest whatever its order, --deterministic only\n"
    "deterministic ones, --max-error only entries whose measured error is within the bound.\n"
    "\n"
    "--list prints the database's entries (every GPU's, or --gpu's), one line each, those that\n"
    "match the options given.  --delete removes the entries for that kernel, dtype, op and size\n"
    "(both the fastest and the fastest deterministic one; with --deterministic only the latter).\n"
    "\n"
    "options:\n"
    "  --kernel K          the kernel family (kforge axes lists them), or the config of a custom\n"
    "                      kernel (configs/custom/vector_add.json): the family it makes\n"
    "  --dtype T, --op OP  the key: one option per key axis of the family (what it computes; reduce\n"
    "                      and reduce_rows: --dtype, --op), each at its default when left out;\n"
    "                      a family without key axes takes none\n"
    "  --n N, --rows N ... the size, one option per size of the family: an integer or 2^K\n"
    "  --deterministic     only variants whose result is the same bits run to run\n"
    "  --fastest           the fastest entry, deterministic or not (default: the deterministic one\n"
    "                      where the size has one)\n"
    "  --max-error E       only entries whose relative error on the realistic data, measured by\n"
    "                      kforge tune --accuracy or --max-error (|error| / sum |x_i|), is at most E\n"
    "  --db DIR            tuning database (default $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,\n"
    "                      else ~/.local/share/kforge/tuning)\n"
    "  --gpu NAME          the GPU (device name or database file name); default: the only GPU in\n"
    "                      the database, else this machine's GPU\n"
    "  --header            a C header instead of a config\n"
    "  --list              list the entries instead\n"
    "  --delete            delete the entries for the key (--dtype, --op: each given) and the size\n"
    "\n"
    "exit status: 0 printed (or deleted); 2 usage error, or nothing known (or to delete) for that\n"
    "dtype and op; 4 the output or the database (--delete) could not be written.\n"
    "\n"
    "examples:\n"
    "  kforge best --n 2^24 > best.json && kforge run best.json\n"
    "  kforge best --dtype int32 --op max --n 1000000 --header > reduce_tuned.h\n"
    "  kforge best --n 2^20 --gpu \"NVIDIA H100 80GB HBM3\" --db shared/tuning\n"
    "  kforge best --list --dtype float32\n"
    "  kforge best --delete --dtype float32 --op sum --n 2^20\n";

// ---------------------------------------------------------------------------
// kforge best

/* An integer, 2^K or 1<<K. */
static bool parse_size(const char *s, int64_t *out)
{
    long long v;
    if (kf_parse_ll(s, &v) && v >= 1) {
        *out = v;
        return true;
    }
    if (s[0] == '2' && s[1] == '^' && kf_parse_ll(s + 2, &v) && v >= 0 && v <= 62) {
        *out = (int64_t)1 << v;
        return true;
    }
    if (s[0] == '1' && s[1] == '<' && s[2] == '<' && kf_parse_ll(s + 3, &v) && v >= 0 && v <= 62) {
        *out = (int64_t)1 << v;
        return true;
    }
    return false;
}

/* --NAME VALUE for a size of the family: its index, or -1. */
static int size_option(cli *c, const kf_family *f, const char **val)
{
    /* static: cli keeps the names it tried, for "did you mean" */
    static char opt[KF_MAX_DIMS][64];
    for (int d = 0; d < f->nsizes; d++) {
        snprintf(opt[d], sizeof opt[d], "--%s", f->sizes[d].name);
        if (cli_value(c, opt[d], val))
            return d;
    }
    return -1;
}


/* Whether entry variant v matches the filters of --list: key's family when
 * same_family, and for each key axis i of key's family given, the value of
 * key's (compared by name and text, so that --dtype float32 without --kernel
 * lists every family's float32 entries). */
static bool list_match(const kf_variant *v, const kf_variant *key, bool same_family, const bool *given)
{
    if (same_family && v->family != key->family)
        return false;
    const kf_family *f = family_of(key);
    for (int i = 0; i < f->nparams; i++) {
        if (!f->params[i].key || !given[i])
            continue;
        char want[KF_NAME_MAX], got[KF_NAME_MAX];
        key_param_text(key, f->params[i].name, want, sizeof want);
        key_param_text(v, f->params[i].name, got, sizeof got);
        if (strcmp(want, got) != 0)
            return false;
    }
    return true;
}

/* --list: the entries of every GPU (or gpu's) that match the filters given
 * (list_match; shape all zero: any size). */
static int list_entries(const char *dir, const char *gpu, const kf_variant *key, bool same_family,
                        const bool *given, const kf_shape *shape, const pick_policy *policy)
{
    char err[1024];
    char **stems = NULL;
    int ns = 0;
    if (gpu) {
        stems = malloc(sizeof *stems);
        if (!stems || !(stems[0] = strdup(gpu))) {
            free(stems);
            fprintf(stderr, "kforge best: out of memory\n");
            return KF_EXIT_USAGE;
        }
        ns = 1;
    } else if (tunedb_list(dir, &stems, &ns, err, sizeof err) != 0) {
        fprintf(stderr, "kforge best: %s\n", err);
        return KF_EXIT_USAGE;
    }
    bool any_size = true;
    for (int d = 0; d < KF_MAX_DIMS; d++)
        any_size = any_size && shape->d[d] == 0;
    int shown = 0, rc = KF_EXIT_OK;
    for (int g = 0; g < ns && rc == KF_EXIT_OK; g++) {
        tunedb_entry *es;
        int n;
        if (tunedb_entries(dir, stems[g], &es, &n, err, sizeof err) != 0) {
            fprintf(stderr, "kforge best: %s\n", err);
            rc = KF_EXIT_USAGE;
            break;
        }
        for (int i = 0; i < n; i++) {
            const tunedb_entry *e = &es[i];
            const kf_family *f = family_of(&e->v);
            pick_cand pc = pick_cand_of_entry(e);
            if (!list_match(&e->v, key, same_family, given) || !pick_allowed(&pc, policy) ||
                (!any_size && !shape_eq(&e->shape, shape)))
                continue;
            if (shown++ == 0)
                printf("%-26s %-11s %-7s %-4s %-22s %10s %8s %-3s %s\n", "gpu", "kernel", "dtype", "op", "size",
                       "median_ms", "GB/s", "det", "variant");
            char st[128], label[256];
            shape_text(f, &e->shape, st, sizeof st);
            f->label(&e->v, label, sizeof label);
            char dt[KF_NAME_MAX], op[KF_NAME_MAX];
            key_param_text(&e->v, "dtype", dt, sizeof dt);
            key_param_text(&e->v, "op", op, sizeof op);
            char gname[sizeof e->dev.name];
            kf_printable(e->dev.name[0] ? e->dev.name : stems[g], gname, sizeof gname);
            printf("%-26s %-11s %-7s %-4s %-22s %10.5f %8.1f %-3s %s\n", gname,
                   f->name, dt[0] ? dt : "-", op[0] ? op : "-", st, e->median_ms, e->gbps,
                   e->deterministic ? "yes" : "no", label);
        }
        free(es);
    }
    /* the entries of kernels made from a config (custom), which only
     * --kernel CONFIG makes known: named, never hidden */
    kf_strset other = {0};
    int counts[16] = {0}, nother = 0;
    for (int g = 0; g < ns && rc == KF_EXIT_OK && !same_family; g++)
        nother += tunedb_unknown_kernels(dir, stems[g], &other, counts, 16);
    tunedb_list_free(stems, ns);
    if (rc == KF_EXIT_OK)
        fprintf(stderr, "kforge best: %d entr%s in %s%s\n", shown, shown == 1 ? "y" : "ies", dir,
                shown ? "" : " match");
    if (nother > 0) {
        fprintf(stderr, "kforge best: and %d entr%s of kernels made from a config (kernel \"custom\"):", nother,
                nother == 1 ? "y" : "ies");
        for (int k = 0; k < other.n && k < 16; k++)
        {
            char kn[KF_NAME_MAX + 64];
            kf_printable(other.keys[k], kn, sizeof kn);
            fprintf(stderr, "%s %s (%d)", k ? "," : "", kn, counts[k]);
        }
        fprintf(stderr, "%s; kforge best --list --kernel CONFIG lists them\n", other.n > 16 ? ", ..." : "");
    }
    kf_strset_free(&other);
    return rc;
}

/* The folder the config printed is read from: that of standard output when
 * it is a file (kforge best ... > dir/best.json), else the current one.  A
 * custom kernel's config names its files relative to it. */
static void stdout_folder(char *dir, size_t len)
{
    struct stat st;
    char path[PATH_MAX];
    ssize_t n;
    snprintf(dir, len, ".");
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode) ||
        (n = readlink("/proc/self/fd/1", path, sizeof path - 1)) <= 0)
        return;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (path[0] != '/' || !slash)
        return; /* not a path ("pipe:[...]", a deleted file's " (deleted)" still is one) */
    if (slash == path)
        snprintf(dir, len, "/");
    else
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* The answer for key at shape: the entry (as a config, or a header), or
 * the entries deleted.  what names the key ("reduce float32 sum"), sets
 * the tune options that would fill it. */
static int best_answer(const char *dir, const char *gpu, const kf_variant *key, const kf_shape *shape, bool del,
                       bool header, const pick_policy *policy, const char *what, const char *sets)
{
    bool deterministic = policy->order == PICK_DET_ONLY;
    const kf_family *fam = family_of(key);
    char err[1024];
    if (del) {
        int n = tunedb_delete(dir, gpu, key, shape, deterministic ? 1 : -1, err, sizeof err);
        char st[128];
        shape_text(fam, shape, st, sizeof st);
        if (n < 0) {
            fprintf(stderr, "kforge best: %s\n", err);
            return KF_EXIT_IO;
        }
        if (n == 0) {
            fprintf(stderr, "kforge best: nothing to delete: no%s entry for %s at %s on %s in %s\n",
                    deterministic ? " deterministic" : "", what, st, gpu, dir);
            return KF_EXIT_USAGE;
        }
        fprintf(stderr, "kforge best: deleted %d entr%s for %s at %s on %s\n", n, n == 1 ? "y" : "ies", what, st,
                gpu);
        return KF_EXIT_OK;
    }
    tunedb_entry e;
    bool exact = false;
    int lr = tunedb_lookup(dir, gpu, key, shape, policy, &e, &exact, err, sizeof err);
    if (lr < 0) {
        fprintf(stderr, "kforge best: %s\n", err);
        return KF_EXIT_USAGE;
    }
    if (lr == 1) {
        char stem[256];
        tunedb_stem(gpu, stem, sizeof stem);
        char pt[128];
        pick_policy_text(policy, pt, sizeof pt);
        fprintf(stderr, "kforge best: nothing%s%s%s tuned for %s on %s in %s (%s/%s.json); run kforge tune%s%s%s\n",
                pt[0] ? " that " : "", pt, pt[0] ? " allows" : "", what, gpu, dir, dir, stem, sets[0] ? " with" : "",
                sets, policy->max_error > 0 ? " --max-error (which measures each candidate's error)" : "");
        return KF_EXIT_USAGE;
    }
    char want[128], got[128];
    shape_text(fam, shape, want, sizeof want);
    shape_text(fam, &e.shape, got, sizeof got);
    if (!exact)
        fprintf(stderr, "kforge best: no entry for %s; using the one tuned for the nearest size, %s\n", want, got);
    if (tunedb_other_source(&e))
        fprintf(stderr, "kforge best: warning: this entry of the custom kernel %s was tuned with another source "
                        "(its source or a header it includes has changed since, or the entry records no source "
                        "hash): its time is not this source's; kforge tune measures this one\n",
                fam->name);
    char acc[96] = "";
    if (e.has_acc)
        snprintf(acc, sizeof acc, "; relative error %.2g on the realistic data", e.acc_rel);
    fprintf(stderr, "kforge best: %s variant (%s%s)\n", e.deterministic ? "a deterministic" : "a non-deterministic",
            e.deterministic ? "the same bits every run" : "float results may differ in the last bits run to run", acc);
    char here[PATH_MAX];
    bool outside = false;
    stdout_folder(here, sizeof here);
    char *text = header ? tunedb_header(&e, shape, exact)
                        : tunedb_config_json(&e, shape, exact, here, &outside, err, sizeof err);
    if (!text) {
        fprintf(stderr, "kforge best: %s\n", header ? "out of memory" : err);
        return KF_EXIT_USAGE;
    }
    if (outside)
        fprintf(stderr, "kforge best: the config names files outside %s%s (the folder it is written to), with a .. "
                        "component: kforge run takes it with KFORGE_ALLOW_OUTSIDE_FILES=1, or write it in the "
                        "custom config's folder or above\n", strcmp(here, ".") ? "" : "the current folder ", here);
    fputs(text, stdout);
    free(text);
    return fflush(stdout) == 0 ? KF_EXIT_OK : KF_EXIT_USAGE;
}

int cmd_best(int argc, char **argv)
{
    const char *db = NULL, *gpu = NULL, *val;
    int family = family_find("reduce");
    bool given_kernel = false, given[KF_MAX_PARAMS] = {false};
    kf_shape shape;
    memset(&shape, 0, sizeof shape);
    bool header = false, list = false, del = false;
    pick_policy policy = {PICK_PREFER_DET, 0};
    cli c;
    cli_init(&c, argc, argv);
    /* --kernel first: the size options depend on it */
    const char *kname = NULL;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc)
            kname = argv[i + 1];
        else if (strncmp(argv[i], "--kernel=", 9) == 0)
            kname = argv[i] + 9;
    if (kname)
        family = family_find(kname);
    if (family < 0 && kname && strstr(kname, ".json") && family_from_config("best", kname, &family) != 0)
        return KF_EXIT_USAGE; /* a family a config makes (kernel "custom"): the config names it */
    if (family < 0) {
        /* a custom kernel's name, as best --list and the database give it: its config makes the family */
        const char *db0 = NULL;
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
                db0 = argv[i + 1];
            else if (strncmp(argv[i], "--db=", 5) == 0)
                db0 = argv[i] + 5;
        char dir0[PATH_MAX], e0[256], **stems = NULL;
        int ns = 0, have = 0;
        kf_strset other = {0};
        int counts[64] = {0};
        if (kname && db_dir("best", db0, dir0, sizeof dir0) == 0 && tunedb_list(dir0, &stems, &ns, e0, sizeof e0) == 0) {
            for (int g = 0; g < ns; g++)
                tunedb_unknown_kernels(dir0, stems[g], &other, counts, 64);
            int k = kf_strset_find(&other, kname);
            have = k >= 0 && k < 64 ? counts[k] : 0;
            tunedb_list_free(stems, ns);
        }
        kf_strset_free(&other);
        if (have > 0)
            fprintf(stderr, "kforge best: --kernel %s: a kernel made from a config (kernel \"custom\"; the database has "
                            "%d entr%s of it): give its config, --kernel path/to/config.json\n", kname, have,
                    have == 1 ? "y" : "ies");
        else
            fprintf(stderr, "kforge best: --kernel%s%s: unknown kernel family (kforge axes lists them; a custom "
                            "kernel's: --kernel CONFIG)\n", kname ? " " : "", kname ? kname : "");
        return KF_EXIT_USAGE;
    }
    const kf_family *fam = kf_families[family];
    /* the key: the family, each key axis at its default unless given */
    kf_variant key;
    variant_defaults(&key, family);
    while (cli_next(&c)) {
        int d = -1, k = 0;
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(best_help, stdout);
            return KF_EXIT_OK;
        } else if (cli_value(&c, "--kernel", &val)) {
            given_kernel = true; /* taken above */
        } else if ((k = cli_policy_option(&c, &policy)) != 0) {
            if (k < 0)
                return KF_EXIT_USAGE;
        } else if ((k = key_option(&c, fam, &key, given)) != 0) {
            if (k < 0)
                return KF_EXIT_USAGE;
        } else if ((d = size_option(&c, fam, &val)) >= 0) {
            if (!parse_size(val, &shape.d[d])) {
                cli_fail(&c, "--%s: expected a size >= 1 (an integer, 2^K or 1<<K), got '%s'", fam->sizes[d].name,
                         val);
                return KF_EXIT_USAGE;
            }
        } else if (cli_value(&c, "--db", &val)) {
            db = val;
        } else if (cli_value(&c, "--gpu", &val) || cli_value(&c, "--device-model", &val)) {
            gpu = val;
        } else if (cli_flag(&c, "--header")) {
            header = true;
        } else if (cli_flag(&c, "--list")) {
            list = true;
        } else if (cli_flag(&c, "--delete")) {
            del = true;
        } else {
            cli_unknown(&c);
            return KF_EXIT_USAGE;
        }
    }
    if (c.error)
        return KF_EXIT_USAGE;
    if (fam->resolve) /* "auto" key values as the database records them (acc-dtype auto: float32 for bfloat16) */
        fam->resolve(&key);
    if (list + del + header > 1) {
        fprintf(stderr, "kforge best: give at most one of --list, --delete and --header\n");
        return KF_EXIT_USAGE;
    }
    bool all_given = true;
    for (int i = 0; i < fam->nparams; i++)
        all_given = all_given && (!fam->params[i].key || fam->params[i].optional || given[i]);
    if (del && !all_given) {
        strbuf ko = {0};
        key_options(&ko, fam);
        fprintf(stderr, "kforge best: --delete needs %s (and the size): it deletes only what is named\n",
                ko.s ? ko.s : "");
        sb_free(&ko);
        return KF_EXIT_USAGE;
    }
    bool some_size = false;
    for (int d = 0; d < fam->nsizes; d++)
        some_size = some_size || shape.d[d] != 0;
    for (int d = 0; d < fam->nsizes && (!list || some_size); d++)
        if (shape.d[d] == 0 && !fam->sizes[d].optional) {
            fprintf(stderr, "kforge best: --%s is required (%s)\n\n%s", fam->sizes[d].name, fam->sizes[d].doc,
                    best_help);
            return KF_EXIT_USAGE;
        }
    if (fam->check_shape && (!list || some_size)) {
        char why[256];
        fam->check_shape(&key, &shape, why, sizeof why); /* fills the optional sizes */
    }
    char dir[PATH_MAX];
    if (db_dir("best", db, dir, sizeof dir) != 0)
        return KF_EXIT_USAGE;
    if (list)
        return list_entries(dir, gpu, &key, given_kernel, given, &shape, &policy);
    char gpu_buf[256];
    if (!gpu) {
        if (db_gpu("best", dir, gpu_buf, sizeof gpu_buf) != 0)
            return KF_EXIT_USAGE;
        gpu = gpu_buf;
    }
    strbuf what = {0}; /* "reduce float32 sum" */
    key_describe(&what, &key);
    strbuf sets = {0}; /* " --set dtype=float32 --set op=sum" */
    key_set_args(&sets, &key);
    int rc = best_answer(dir, gpu, &key, &shape, del, header, &policy, what.s ? what.s : fam->name,
                         sets.s ? sets.s : "");
    sb_free(&what);
    sb_free(&sets);
    return rc;
}
