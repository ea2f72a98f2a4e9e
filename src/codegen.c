/*
 * codegen.c -- a variant to CUDA source: a comment naming every
 * compile-time parameter, the #defines that specialise the templates, then
 * kernel_src/common.cuh and kernel_src/reduce.cuh (embedded in the binary by
 * tools/embed.sh).
 */
#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

extern const char *const kf_tpl_names[];
extern const char *const kf_tpl_texts[];

static const char *template_text(const char *name)
{
    for (int i = 0; kf_tpl_names[i]; i++)
        if (strcmp(kf_tpl_names[i], name) == 0)
            return kf_tpl_texts[i];
    return NULL;
}

int codegen_planted(const kf_variant *v)
{
    const char *e = getenv("KFORGE_PLANT");
    if (!e || !v->name[0])
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", e);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *at = strchr(tok, '@');
        if (!at || strcmp(at + 1, v->name) != 0)
            continue;
        *at = '\0';
        if (strcmp(tok, "fault") == 0)
            return 1;
        if (strcmp(tok, "hang") == 0)
            return 2;
    }
    return 0;
}

char *codegen_source(const kf_variant *v, char *err, size_t errlen)
{
    const char *common = template_text("common");
    const char *reduce = template_text("reduce");
    if (!common || !reduce) {
        kf_err(err, errlen, "kernel templates missing from the build (kernel_src/common.cuh, reduce.cuh)");
        return NULL;
    }
    if (v->passes == KF_PASSES_AUTO) {
        kf_err(err, errlen, "codegen: passes must be resolved before generating code");
        return NULL;
    }
    bool is_float = kf_dtype_is_float(v->dtype);
    bool is_signed = v->dtype == KF_INT32 || v->dtype == KF_INT64;
    size_t bytes = kf_dtype_size(v->dtype);

    strbuf b = {0};
    sb_append(&b, "// kforge " KF_VERSION " generated reduction kernel\n");
    sb_printf(&b, "//   kernel               reduce\n");
    sb_printf(&b, "//   dtype                %s\n", kf_dtype_names[v->dtype]);
    sb_printf(&b, "//   op                   %s\n", kf_op_names[v->op]);
    sb_printf(&b, "//   algorithm            %s\n", kf_algorithm_names[v->algorithm]);
    sb_printf(&b, "//   block_size           %d\n", v->block_size);
    sb_printf(&b, "//   elements_per_thread  %d\n", v->elements_per_thread);
    sb_printf(&b, "//   unroll               %s\n", kf_unroll_names[v->unroll]);
    sb_printf(&b, "//   vector_width         %d\n", v->vector_width);
    sb_printf(&b, "//   passes               %s\n", kf_passes_names[v->passes]);
    sb_printf(&b, "//   layout               %s\n", kf_layout_names[v->layout]);
    sb_printf(&b, "//   accumulator          %s\n", kf_accum_names[v->accumulator]);
    sb_printf(&b, "//   warp_reduce          %s\n", kf_warp_reduce_names[v->warp_reduce]);
    sb_printf(&b, "//   load                 %s\n", kf_load_names[v->load]);
    sb_printf(&b, "//   grid_stride          %s\n",
              v->grid.kind == KF_GRID_AUTO ? "no (grid auto: one tile per block)" : "yes (fixed grid)");
    sb_append(&b, "// The block count and n are launch-time arguments: variants whose grids\n"
                  "// differ only in a fixed count share this source and its cubin.\n\n");
    sb_printf(&b, "#define KF_T %s\n", kf_dtype_ctype(v->dtype));
    sb_printf(&b, "#define KF_ELEM_BYTES %zu\n", bytes);
    sb_printf(&b, "#define KF_IS_FLOAT %d\n", is_float);
    sb_printf(&b, "#define KF_IS_SIGNED %d\n", is_signed);
    sb_printf(&b, "#define KF_INT32_LIKE %d\n", v->dtype == KF_INT32 || v->dtype == KF_UINT32);
    sb_printf(&b, "#define KF_OP %d /* %s */\n", (int)v->op, kf_op_names[v->op]);
    sb_printf(&b, "#define KF_ALG %d /* %s */\n", (int)v->algorithm, kf_algorithm_names[v->algorithm]);
    sb_printf(&b, "#define KF_BS %d\n", v->block_size);
    sb_printf(&b, "#define KF_EPT %d\n", v->elements_per_thread);
    sb_printf(&b, "#define KF_UNROLL %d /* %s */\n", (int)v->unroll, kf_unroll_names[v->unroll]);
    sb_printf(&b, "#define KF_VW %d\n", v->vector_width);
    sb_printf(&b, "#define KF_PASSES %d /* %s */\n", (int)v->passes, kf_passes_names[v->passes]);
    sb_printf(&b, "#define KF_LAYOUT %d /* %s */\n", (int)v->layout, kf_layout_names[v->layout]);
    sb_printf(&b, "#define KF_ACC %d /* %s */\n", (int)v->accumulator, kf_accum_names[v->accumulator]);
    sb_printf(&b, "#define KF_WARP %d /* %s */\n", (int)v->warp_reduce, kf_warp_reduce_names[v->warp_reduce]);
    sb_printf(&b, "#define KF_LOAD %d /* %s */\n", (int)v->load, kf_load_names[v->load]);
    sb_printf(&b, "#define KF_GRID_STRIDE %d\n\n", v->grid.kind != KF_GRID_AUTO);
    int plant = codegen_planted(v);
    if (plant)
        sb_printf(&b, "#define KF_PLANT %d /* test hook: KFORGE_PLANT */\n\n", plant);
    sb_append(&b, common);
    sb_append(&b, "\n");
    sb_append(&b, reduce);
    if (b.failed) {
        sb_free(&b);
        kf_err(err, errlen, "codegen: out of memory");
        return NULL;
    }
    return sb_take(&b);
}

char *codegen_launch_comment(const kf_variant *v)
{
    char grid[64], label[256];
    kf_grid_format(&v->grid, grid, sizeof grid);
    kf_variant_label(v, label, sizeof label);
    strbuf b = {0};
    sb_printf(&b, "// ===== variant %s%s%s\n", v->name[0] ? v->name : label, v->name[0] ? " -- " : "",
              v->name[0] ? label : "");
    sb_printf(&b, "//   name                 %s\n", v->name[0] ? v->name : "(none)");
    sb_printf(&b, "//   grid                 %s\n", grid);
    return sb_take(&b);
}
