/*
 * leave.h -- outputs a kernel leaves alone (issue 37): a stencil that
 * writes only interior points, a kernel that masks its output.
 *
 * An `out` buffer starts from its fill (zeros by default) before every
 * run, as in Kernel Tuner.  The reference variant runs twice, its outputs
 * poisoned 0xFF and then 0x00: an element whose bytes are the poison in
 * both runs is one it leaves, and its answer is the buffer's fill there.
 * Any other difference between the two runs is a race.  Every candidate
 * then starts from an image of the output that holds the fill where the
 * reference leaves an element and the poison everywhere else, so that
 *   - an element the reference writes and the candidate does not still
 *     shows the poison (wrong, as before);
 *   - an element the reference leaves must still hold the fill: one the
 *     candidate changes is wrong, and leave_changed counts them for the
 *     message.
 * Pure host code on byte buffers: reference.c moves the images to the GPU.
 */
#ifndef KF_LEAVE_H
#define KF_LEAVE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t left;           /* elements the reference leaves (the poison in both runs) */
    int64_t racy;           /* elements that differ between the runs otherwise */
    int64_t first_racy;     /* the first of them, -1 if none */
    unsigned char *mask;    /* malloc'd, one byte an element, 1: left; NULL when none is left */
} leave_map;

/* The elements of one output (elems of es bytes) left by the reference:
 * a, its outputs from a run poisoned 0xFF, b from one poisoned 0x00.  0,
 * or -1 out of host memory (m cleared). */
int leave_find(const void *a, const void *b, int64_t elems, size_t es, leave_map *m);

/* The answer where the reference leaves an element: ref[e] = fill[e]. */
void leave_apply(void *ref, const void *fill, int64_t elems, size_t es, const leave_map *m);

/* The first contents of a candidate's output before a run poisoned with
 * `poison`: the poison, but the fill where the reference leaves an
 * element. */
void leave_image(void *img, unsigned char poison, const void *fill, int64_t elems, size_t es, const leave_map *m);

/* How many elements the reference leaves are not ref's bits in got (a
 * candidate that writes where the reference does not); *first the first
 * of them (-1 if none). */
int64_t leave_changed(const void *got, const void *ref, int64_t elems, size_t es, const leave_map *m, int64_t *first);

void leave_free(leave_map *m);

#endif
