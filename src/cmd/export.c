/*
 * export.c -- `kforge export`: the variants the tuning database chose for
 * one GPU model, dtype and op, as one self-contained CUDA header with a host
 * API (the family writes it: family.h, export_source).
 *
 *   kforge export --dtype float32 --op sum -o kforge_reduce_float32_sum.cuh
 */
#include <errno.h>
#include <fcntl.h>
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
#include "space.h"
#include "tunedb.h"
#include "util.h"

static const char *const export_help =
    "usage: kforge export --dtype T --op OP [--kernel K] [--db DIR] [--gpu NAME]\n"
    "                     [--deterministic | --fastest] [--max-error E] [-o FILE]\n"
    "\n"
    "Writes one self-contained CUDA C++17 header (no kforge headers, no run-time compilation;\n"
    "compiles with nvcc, and its kernels with NVRTC) holding the variants the tuning database\n"
    "chose for the GPU model, kernel family K, dtype T and OP -- one per shape tuned -- and a\n"
    "host API.  For reduce (kforge_reduce_float32_sum.cuh):\n"
    "\n"
    "  size_t kforge_reduce_float32_sum_workspace(size_t n);\n"
    "  cudaError_t kforge_reduce_float32_sum_workspace_init(void *ws, size_t bytes, cudaStream_t s);\n"
    "  cudaError_t kforge_reduce_float32_sum(const float *in, size_t n, float *out, void *ws,\n"
    "                                        size_t bytes, cudaStream_t s);\n"
    "\n"
    "For reduce_rows (kforge_reduce_rows_float32_sum.cuh; row_stride 0 means cols):\n"
    "\n"
    "  size_t kforge_reduce_rows_float32_sum_workspace(size_t rows);\n"
    "  cudaError_t kforge_reduce_rows_float32_sum_workspace_init(void *ws, size_t bytes, cudaStream_t s);\n"
    "  cudaError_t kforge_reduce_rows_float32_sum(const float *in, size_t rows, size_t cols,\n"
    "                                             size_t row_stride, float *out, void *ws,\n"
    "                                             size_t bytes, cudaStream_t s);\n"
    "\n"
    "A call runs the variant tuned for the nearest shape, on a log scale, as kforge best answers\n"
    "(n; rows, cols and row_stride); the launch geometry that depends on the device is worked\n"
    "out at run time, so the header works, untuned, on other GPUs too.  Says on stderr which\n"
    "variant serves each shape and whether each is run-to-run deterministic.  The header's opening\n"
    "comment says, per range of n, which sizes were measured there (tuned, or between tuned sizes\n"
    "by kforge tune's pass between them) and which variant serves it, and which ranges were not\n"
    "measured between two tuned sizes.\n"
    "\n"
    "Which variant serves a shape: its fastest run-to-run deterministic entry where it has one,\n"
    "as CUB's reductions are (float sums and products whose blocks add in arrival order, with\n"
    "atomics, are a few percent faster at most, but their bits change run to run and their error\n"
    "grows with the number of blocks: up to ~100 x CUB's at 2^30), else its fastest.\n"
    "\n"
    "options:\n"
    "  --dtype T             int32, uint32, int64, float32, float64, bfloat16 or float16\n"
    "  --acc-dtype A         bfloat16 and float16: what they accumulate in, the output's type:\n"
    "                        float32 (default) or float64; input: results of the input type\n"
    "                        (accumulated in float32, rounded once)\n"
    "  --op OP               sum, min, max, prod, and, or, xor\n"
    "  --kernel K            the kernel family: reduce (default) or reduce_rows; or a custom kernel's\n"
    "                        config (configs/custom/transpose.json): its tuned parameters per size and,\n"
    "                        under CUDA, the kernel once per tuned parameter set and a launcher,\n"
    "                        kforge_transpose_launch(width, height, out, in, stream)\n"
    "  --db DIR              tuning database (default $KFORGE_DB, else $XDG_DATA_HOME/kforge/tuning,\n"
    "                        else ~/.local/share/kforge/tuning)\n"
    "  --gpu NAME            the GPU model (device name or database file name); default: the only\n"
    "                        GPU in the database, else this machine's GPU\n"
    "  --deterministic       only variants that give the same bits run to run (shapes without one\n"
    "                        are left out)\n"
    "  --fastest             each shape's fastest variant, deterministic or not\n"
    "  --max-error E         only variants whose relative error on the realistic data, measured by\n"
    "                        kforge tune --accuracy or --max-error (|error| / sum |x_i|), is at most E\n"
    "  -o FILE               write the header to FILE (default, and -o -: standard output): a regular file\n"
    "                        is replaced whole (a temporary file renamed over it); a device, FIFO\n"
    "                        or /dev/stdout is written in place; a symbolic link is followed (the\n"
    "                        file it points to is written, the link kept), one to nothing refused\n"
    "\n"
    "exit status: 0 written; 2 usage error, or nothing tuned for that dtype and op; 4 the\n"
    "header could not be written.  A custom kernel whose source does not compile once per\n"
    "tuned parameter set (checked with NVRTC) gets its table alone, one line on stderr says\n"
    "why, and the exit status is 0.\n"
    "\n"
    "examples:\n"
    "  kforge tune configs/tune-reduce.json --set 'n=[\"2^10\",\"2^20\",\"2^30\"]'\n"
    "  kforge export --dtype float32 --op sum -o kforge_reduce_float32_sum.cuh\n"
    "  kforge export --dtype int32 --op max --deterministic --db shared/tuning \\\n"
    "      --gpu \"NVIDIA H100 80GB HBM3\" > max.cuh\n"
    "  kforge tune configs/tune-rows.json --set rows=16384 --set cols=4096\n"
    "  kforge export --kernel reduce_rows --dtype float32 --op sum -o kforge_reduce_rows_float32_sum.cuh\n"
    "  kforge export --kernel configs/custom/transpose.json -o transpose_tuned.h\n";

/* The header into path (-o): a regular file, or a new one, is written whole
 * beside it and renamed over it (a reader never sees half a header); a
 * symbolic link is followed, the file it points to written so and the
 * link kept, and one that points to nothing is refused; anything else (a
 * device such as /dev/null, a FIFO, a terminal, /dev/stdout) is written in
 * place, never replaced by a regular file.  0, or -1 and why. */
static int write_header(const char *path, const char *text, char *err, size_t errlen)
{
    size_t len = strlen(text);
    struct stat st, lst;
    /* the descriptor itself, as a shell does (not a reopened file, truncated) */
    int fdn = strcmp(path, "/dev/stdout") == 0 ? 1 : strcmp(path, "/dev/stderr") == 0 ? 2 : -1;
    if (fdn >= 0 || stat(path, &st) == 0) {
        if (fdn < 0 && S_ISDIR(st.st_mode)) {
            kf_err(err, errlen, "%s: is a directory", path);
            return -1;
        }
        if (fdn >= 0 || !S_ISREG(st.st_mode)) {
            int fd = fdn >= 0 ? fdn : open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
            if (fd < 0) {
                kf_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
                return -1;
            }
            int rc = kf_write_full(fd, text, len);
            int e = errno;
            if (fd != fdn && close(fd) != 0 && rc == 0)
                rc = -1, e = errno;
            if (rc != 0)
                kf_err(err, errlen, "%s: write failed: %s", path, strerror(e));
            return rc;
        }
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            char real[PATH_MAX];
            if (!realpath(path, real)) {
                kf_err(err, errlen, "%s: cannot resolve the symbolic link: %s", path, strerror(errno));
                return -1;
            }
            return kf_write_file_atomic(real, text, len, err, errlen);
        }
    } else if (errno == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        kf_err(err, errlen, "%s: a symbolic link to nothing (kforge export follows a link to write the file it points "
                            "to; it creates no file at a link's target): remove it or give the file's own name", path);
        return -1;
    } else if (errno != ENOENT) {
        kf_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return kf_write_file_atomic(path, text, len, err, errlen);
}


/* Orders entries by shape (the family's input size, then dimension by
 * dimension), then by time. */
static int cmp_entry(const void *a, const void *b)
{
    const tunedb_entry *x = a, *y = b;
    int c = space_cmp_shape(&x->v, &x->shape, &y->shape);
    if (c)
        return c;
    return (x->median_ms > y->median_ms) - (x->median_ms < y->median_ms);
}

int cmd_export(int argc, char **argv)
{
    const char *db = NULL, *gpu = NULL, *outpath = NULL, *val;
    int family = family_find("reduce");
    pick_policy policy = {PICK_PREFER_DET, 0};
    /* --kernel first: the key options (--dtype, --op) are its key axes */
    const char *kname = NULL;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--kernel") == 0 && i + 1 < argc)
            kname = argv[i + 1];
        else if (strncmp(argv[i], "--kernel=", 9) == 0)
            kname = argv[i] + 9;
    if (kname)
        family = family_find(kname);
    if (family < 0 && kname && strstr(kname, ".json") && family_from_config("export", kname, &family) != 0)
        return KF_EXIT_USAGE; /* a family a config makes (kernel "custom"): the config names it */
    int kfamily = family;
    if (family < 0)
        family = family_find("reduce"); /* the loop below says what is wrong */
    kf_variant key;
    variant_defaults(&key, family);
    bool given[KF_MAX_PARAMS] = {false};
    cli c;
    cli_init(&c, argc, argv);
    while (cli_next(&c)) {
        int k = 0;
        if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
            fputs(export_help, stdout);
            return KF_EXIT_OK;
        } else if (cli_value(&c, "--kernel", &val)) {
            if (kfamily < 0) {
                cli_fail(&c, "--kernel: unknown kernel family '%s' (kforge axes lists them)", val);
                return KF_EXIT_USAGE;
            }
        } else if ((k = key_option(&c, kf_families[family], &key, given)) != 0) {
            if (k < 0)
                return KF_EXIT_USAGE;
        } else if (cli_value(&c, "--db", &val)) {
            db = val;
        } else if (cli_value(&c, "--gpu", &val) || cli_value(&c, "--device-model", &val)) {
            gpu = val;
        } else if ((k = cli_policy_option(&c, &policy)) != 0) {
            if (k < 0)
                return KF_EXIT_USAGE;
        } else if (cli_value(&c, "-o", &val) || cli_value(&c, "--output", &val)) {
            outpath = strcmp(val, "-") == 0 ? NULL : val;
            if (outpath && !outpath[0]) {
                fprintf(stderr, "kforge export: -o: expected a file name, got an empty one (without -o the header "
                                "goes to standard output)\n");
                return KF_EXIT_USAGE;
            }
        } else {
            cli_unknown(&c);
            return KF_EXIT_USAGE;
        }
    }
    if (c.error)
        return KF_EXIT_USAGE;
    const kf_family *fam = kf_families[family];
    if (fam->resolve) /* "auto" key values as the database records them (acc-dtype auto: float32 for bfloat16) */
        fam->resolve(&key);
    if (!fam->export_source) {
        strbuf have = {0};
        for (int i = 0; i < kf_nfamilies; i++)
            if (kf_families[i]->export_source)
                sb_printf(&have, "%s%s", have.len ? ", " : "", kf_families[i]->name);
        fprintf(stderr, "kforge export: the %s family has no export yet (families with one: %s)\n", fam->name,
                have.s ? have.s : "none");
        sb_free(&have);
        return KF_EXIT_USAGE;
    }
    for (int i = 0; i < fam->nparams; i++)
        if (fam->params[i].key && !fam->params[i].optional && !given[i]) { /* an optional one (acc-dtype): its default */
            strbuf ko = {0};
            key_options(&ko, fam);
            fprintf(stderr, "kforge export: %s %s required\n\n%s", ko.s, strchr(ko.s, ' ') ? "are" : "is",
                    export_help);
            sb_free(&ko);
            return KF_EXIT_USAGE;
        }
    char dir[PATH_MAX], gpu_buf[256], err[1024];
    if (db_dir("export", db, dir, sizeof dir) != 0)
        return KF_EXIT_USAGE;
    if (!gpu) {
        if (db_gpu("export", dir, gpu_buf, sizeof gpu_buf) != 0)
            return KF_EXIT_USAGE;
        gpu = gpu_buf;
    }

    tunedb_entry *all = NULL;
    int nall = 0, nshapes = 0, nmatch = 0, rc = KF_EXIT_OK;
    kf_export_entry *ex = NULL;
    char *text = NULL, *command = NULL;
    if (tunedb_entries(dir, gpu, &all, &nall, err, sizeof err) != 0) {
        fprintf(stderr, "kforge export: %s\n", err);
        return KF_EXIT_USAGE;
    }
    strbuf what = {0}, sets = {0}, api = {0};
    key_describe(&what, &key);    /* "reduce float32 sum" */
    key_set_args(&sets, &key);    /* " --set dtype=float32 --set op=sum" */
    /* the eligible entries, by shape; the first of each shape (the fastest) */
    int keep = 0;
    for (int i = 0; i < nall; i++) {
        const tunedb_entry *e = &all[i];
        if (!key_match(&e->v, &key, NULL))
            continue;
        nmatch++;
        pick_cand pc = pick_cand_of_entry(e);
        if (!pick_allowed(&pc, &policy))
            continue;
        all[keep++] = *e;
    }
    /* by shape; at each shape the fastest comes first (pick.h) */
    qsort(all, (size_t)keep, sizeof *all, cmp_entry);
    ex = calloc((size_t)(keep > 0 ? keep : 1), sizeof *ex);
    if (!ex) {
        fprintf(stderr, "kforge export: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    bool *other = calloc((size_t)(keep > 0 ? keep : 1), sizeof *other); /* tuned with another source (pick.h) */
    if (!other) {
        fprintf(stderr, "kforge export: out of memory\n");
        rc = KF_EXIT_USAGE;
        goto out;
    }
    /* each shape's entry that serves it under the policy (pick_serve) */
    int ndetless = 0; /* shapes served by a non-deterministic entry although a deterministic one was asked for first */
    for (int i = 0; i < keep;) {
        int j = i;
        while (j < keep && shape_eq(&all[j].shape, &all[i].shape))
            j++;
        pick_cand pc[j - i];
        for (int m = i; m < j; m++)
            pc[m - i] = pick_cand_of_entry(&all[m]);
        int k = pick_serve(pc, j - i, &policy);
        if (k >= 0) {
            const tunedb_entry *e = &all[i + k];
            other[nshapes] = tunedb_other_source(e);
            kf_export_entry *x = &ex[nshapes++];
            x->v = e->v;
            x->v.name[0] = '\0';
            space_resolve(&x->v);
            x->shape = e->shape;
            x->median_ms = e->median_ms;
            x->gbps = e->gbps;
            x->deterministic = e->deterministic;
            x->has_acc = e->has_acc;
            x->acc_rel = e->acc_rel;
            x->between = e->between;
            ndetless += !e->deterministic && policy.order == PICK_PREFER_DET;
        }
        i = j;
    }
    int nother = 0;
    for (int i = 0; i < nshapes; i++)
        nother += other[i];
    free(other);
    if (nother)
        fprintf(stderr, "kforge export: warning: %d of the %d shapes of the custom kernel %s were tuned with another "
                        "source (its source or a header it includes has changed since, or the entries record no "
                        "source hash): their variants were not measured with this source; kforge tune measures "
                        "this one\n",
                nother, nshapes, fam->name);
    if (nshapes == 0) {
        char stem[256], gpu_shown[1024], dir_shown[PATH_MAX * 2];
        tunedb_stem(gpu, stem, sizeof stem);
        kf_printable(gpu, gpu_shown, sizeof gpu_shown); /* --gpu's text, a database's device name */
        kf_printable(dir, dir_shown, sizeof dir_shown);
        if (nmatch > 0 && policy.max_error > 0)
            fprintf(stderr, "kforge export: none of the %d %s entr%s for %s in %s has a measured relative error "
                            "within %g; tune with --max-error %g (it measures each candidate's error), or relax "
                            "the bound\n",
                    nmatch, what.s, nmatch == 1 ? "y" : "ies", gpu_shown, dir_shown, policy.max_error, policy.max_error);
        else if (nmatch > 0)
            fprintf(stderr, "kforge export: none of the %d %s entr%s for %s in %s is deterministic; tune a space "
                            "with deterministic variants (%s), or leave out --deterministic\n",
                    nmatch, what.s, nmatch == 1 ? "y" : "ies", gpu_shown, dir_shown,
                    strcmp(fam->name, "reduce_rows") == 0 ? "any map but split with split_combine atomic"
                                                          : "passes last_block or multi_kernel");
        else
            fprintf(stderr, "kforge export: nothing tuned for %s on %s in %s (%s/%s.json); run kforge tune%s%s\n",
                    what.s, gpu_shown, dir_shown, dir_shown, stem, sets.s ? " with" : "", sets.s ? sets.s : "");
        rc = KF_EXIT_USAGE;
        goto out;
    }

    strbuf cmd = {0};
    sb_append(&cmd, "kforge");
    for (int i = 0; i < argc; i++)
        sb_printf(&cmd, " %s", argv[i]);
    command = sb_take(&cmd);
    char date[32], note[1024] = "";
    kf_iso_time(date, sizeof date);
    kf_export_info info = {.device = all[0].dev.name[0] ? all[0].dev.name : gpu,
                           .cc_major = all[0].dev.cc_major,
                           .cc_minor = all[0].dev.cc_minor,
                           .sms = all[0].dev.sms,
                           .command = command,
                           .date = date,
                           .deterministic_only = policy.order == PICK_DET_ONLY,
                           /* the API as the header spells it: the key's values do not say it
                            * (bfloat16 in float32 is kforge_reduce_bfloat16_sum) */
                           .api = &api,

                           .path = outpath,
                           .note = note,
                           .notelen = sizeof note};
    text = fam->export_source(ex, nshapes, &info, err, sizeof err);
    if (!text) {
        fprintf(stderr, "kforge export: %s\n", err);
        rc = KF_EXIT_USAGE;
        goto out;
    }
    if (outpath) {
        if (write_header(outpath, text, err, sizeof err) != 0) {
            fprintf(stderr, "kforge export: %s\n", err);
            rc = KF_EXIT_IO;
            goto out;
        }
    } else {
        fputs(text, stdout);
        if (fflush(stdout) != 0) {
            rc = KF_EXIT_IO;
            goto out;
        }
    }

    /* what it gave, size by size */
    int ndet = 0;
    for (int i = 0; i < nshapes; i++)
        ndet += ex[i].deterministic;
    char dev[256], outp[PATH_MAX];
    kf_printable(info.device, dev, sizeof dev);
    kf_printable(outpath ? outpath : "", outp, sizeof outp);
    fprintf(stderr, "kforge export: %s%s%s: %d %s%s tuned on %s%s\n", api.s ? api.s : "the header",
            outpath ? " -> " : "", outp, nshapes,
            fam->nsizes > 1 ? "shape" : "size", nshapes == 1 ? "" : "s", dev,
            ndet == nshapes ? "; every variant is deterministic (the same bits every run)"
            : ndetless ? "; NOT every variant is deterministic: some sizes have no deterministic entry (tune a space "
                         "with deterministic variants, or give --deterministic to leave those sizes out)"
                       : "; NOT every variant is deterministic (--fastest: float results may differ in the last bits "
                         "run to run; the default and --deterministic choose those that are not)");
    for (int i = 0; i < nshapes; i++) {
        char st[128], label[256];
        shape_text(fam, &ex[i].shape, st, sizeof st);
        fam->label(&ex[i].v, label, sizeof label);
        char acc[48] = "";
        if (ex[i].has_acc)
            snprintf(acc, sizeof acc, ", relative error %.2g", ex[i].acc_rel);
        fprintf(stderr, "  %-24s %-60s %s%s%s\n", st, label, ex[i].deterministic ? "deterministic" : "not deterministic",
                acc, ex[i].between ? " (measured between tuned sizes)" : "");
    }
    if (note[0]) /* what the header leaves out (a custom kernel's launcher), and why */
        fprintf(stderr, "kforge export: %s\n", note);
out:
    sb_free(&what);
    sb_free(&sets);
    sb_free(&api);
    free(text);
    free(command);
    free(ex);
    free(all);
    return rc;
}
