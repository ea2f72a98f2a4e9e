/*
 * kforge.c -- name tables and small helpers for the shared types.
 */
#include "kforge.h"

#include <stdio.h>
#include <string.h>

const char *const kf_dtype_names[KF_DTYPE_COUNT] = {"int32", "uint32", "int64", "float32", "float64"};
const char *const kf_op_names[KF_OP_COUNT] = {"sum", "min", "max", "prod", "and", "or", "xor"};
const char *const kf_algorithm_names[KF_ALG_COUNT] = {
    "atomic_global", "atomic_shared", "interleaved_divergent", "interleaved_strided",
    "sequential", "shuffle", "warp_intrinsic"};
const char *const kf_unroll_names[KF_UNROLL_COUNT] = {"none", "last_warp", "full"};
const char *const kf_passes_names[KF_PASSES_COUNT] = {"auto", "multi_kernel", "atomic", "last_block"};
const char *const kf_layout_names[KF_LAYOUT_COUNT] = {"block", "grid"};
const char *const kf_accum_names[KF_ACC_COUNT] = {"register", "shared"};
const char *const kf_warp_reduce_names[KF_WARP_COUNT] = {"shared", "shuffle", "intrinsic"};
const char *const kf_load_names[KF_LOAD_COUNT] = {"plain", "ldg", "stream", "ldg_prefetch"};
const char *const kf_status_names[KF_ST_COUNT] = {"ok", "wrong", "compile_error", "launch_error",
                                                  "fault", "timeout", "out_of_memory"};

void kf_variant_defaults(kf_variant *v)
{
    memset(v, 0, sizeof *v);
    v->dtype = KF_FLOAT32;
    v->op = KF_OP_SUM;
    v->algorithm = KF_ALG_SEQUENTIAL;
    v->block_size = 256;
    v->elements_per_thread = 1;
    v->unroll = KF_UNROLL_NONE;
    v->vector_width = 1;
    v->grid.kind = KF_GRID_AUTO;
    v->grid.value = 0;
    v->passes = KF_PASSES_AUTO;
    v->layout = KF_LAYOUT_BLOCK;
    v->accumulator = KF_ACC_REGISTER;
    v->warp_reduce = KF_WARP_SHARED;
    v->load = KF_LOAD_PLAIN;
}

void kf_bench_defaults(kf_bench *b)
{
    memset(b, 0, sizeof *b);
    b->warmup = 3;
    b->min_reps = 10;
    b->max_reps = 1000;
    b->max_time_s = 0.5;
    b->max_noise = 0.005;
    b->flush_l2 = true;
    b->seed = 42;
    b->offset = 0;
    b->timeout_s = 30.0;
}

int kf_lookup(const char *const *names, int count, const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

size_t kf_dtype_size(kf_dtype t)
{
    switch (t) {
    case KF_INT32: case KF_UINT32: case KF_FLOAT32: return 4;
    case KF_INT64: case KF_FLOAT64: return 8;
    default: return 0;
    }
}

bool kf_dtype_is_float(kf_dtype t) { return t == KF_FLOAT32 || t == KF_FLOAT64; }

bool kf_op_is_bitwise(kf_op op) { return op == KF_OP_AND || op == KF_OP_OR || op == KF_OP_XOR; }

const char *kf_dtype_ctype(kf_dtype t)
{
    switch (t) {
    case KF_INT32: return "int";
    case KF_UINT32: return "unsigned int";
    case KF_INT64: return "long long";
    case KF_FLOAT32: return "float";
    case KF_FLOAT64: return "double";
    default: return "?";
    }
}

void kf_grid_format(const kf_grid *g, char *buf, size_t len)
{
    switch (g->kind) {
    case KF_GRID_AUTO: snprintf(buf, len, "\"auto\""); break;
    case KF_GRID_BLOCKS: snprintf(buf, len, "%lld", (long long)g->value); break;
    case KF_GRID_PER_SM: snprintf(buf, len, "{\"blocks_per_sm\": %lld}", (long long)g->value); break;
    case KF_GRID_WAVES: snprintf(buf, len, "{\"waves\": %lld}", (long long)g->value); break;
    default: snprintf(buf, len, "\"?\""); break;
    }
}

void kf_variant_label(const kf_variant *v, char *buf, size_t len)
{
    char grid[32];
    switch (v->grid.kind) {
    case KF_GRID_AUTO: snprintf(grid, sizeof grid, "auto"); break;
    case KF_GRID_BLOCKS: snprintf(grid, sizeof grid, "%lld", (long long)v->grid.value); break;
    case KF_GRID_PER_SM: snprintf(grid, sizeof grid, "%lldxSM", (long long)v->grid.value); break;
    case KF_GRID_WAVES: snprintf(grid, sizeof grid, "%lldwaves", (long long)v->grid.value); break;
    default: snprintf(grid, sizeof grid, "?"); break;
    }
    snprintf(buf, len, "%s/bs%d/ept%d/%s/v%d/%s/%s%s%s%s%s%s%s",
             kf_algorithm_names[v->algorithm], v->block_size, v->elements_per_thread,
             kf_unroll_names[v->unroll], v->vector_width, grid, kf_passes_names[v->passes],
             v->layout == KF_LAYOUT_GRID ? "/layout=grid" : "",
             v->accumulator == KF_ACC_SHARED ? "/acc=shared" : "",
             v->warp_reduce != KF_WARP_SHARED ? "/warp=" : "",
             v->warp_reduce != KF_WARP_SHARED ? kf_warp_reduce_names[v->warp_reduce] : "",
             v->load != KF_LOAD_PLAIN ? "/" : "", v->load != KF_LOAD_PLAIN ? kf_load_names[v->load] : "");
}
