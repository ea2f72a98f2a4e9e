/*
 * rows.h -- the row-wise reduction family's own names (rows.c): its
 * parameter indices and the values of its enumerated axes, the launch rule's
 * tile, and its export (export.c).
 */
#ifndef KF_ROWS_H
#define KF_ROWS_H

#include "family.h"
#include "kforge.h"

/* Parameter indices: kf_variant.p[WP_...]. */
enum {
    WP_DTYPE, WP_OP, WP_ACC_DTYPE, WP_MAP, WP_GROUP, WP_BLOCK_SIZE, WP_EPT, WP_RPG, WP_VECTOR_WIDTH, WP_LOAD, WP_BLOCK_REDUCE,
    WP_SPLITS, WP_COMBINE, WP_GRID, WP_PIPE, WP_MIN_BLOCKS, WP_COUNT
};
enum { MAP_THREAD, MAP_GROUP, MAP_BLOCK, MAP_SPLIT, MAP_TILE, MAP_COUNT };
enum { COMBINE_ATOMIC, COMBINE_LAST_BLOCK };
enum { LOAD_PLAIN, LOAD_LDG, LOAD_STREAM, LOAD_LDG_PREFETCH };

/* Rows one block covers per tile (reduce_rows.cuh, "Launch rule"): maps
 * thread and group (KF_BS / lanes per row) x rows_per_group, map block
 * rows_per_group; map tile: rows_tile_fit's rows for a matrix of cols
 * columns whose rows start `stride` elements apart; map split: 0 (its tiles
 * are rows x splits parts). */
int64_t rows_tile_rows(const kf_variant *v, int64_t cols, int64_t stride);

/* Map tile: elements one tile holds (block_size x elements_per_thread x
 * vector_width), and the rows of such a tile for cols columns `stride`
 * apart: floor(te / cols) rounded down to a multiple of vw, or bs (the
 * kernel's thread-per-row fallback) when stride != cols or cols x vw > te. */
int64_t rows_tile_fit(int64_t te, int64_t vw, int64_t bs, int64_t cols, int64_t stride);

/* family.h: export_source (export.c). */
char *rows_export_source(const kf_export_entry *e, int n, const kf_export_info *info, char *err, size_t errlen);

#endif
