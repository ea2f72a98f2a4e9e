/*
 * leave.c -- see leave.h.
 */
#include "leave.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool all_bytes(const unsigned char *p, size_t n, unsigned char x)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != x)
            return false;
    return true;
}

int leave_find(const void *a, const void *b, int64_t elems, size_t es, leave_map *m)
{
    memset(m, 0, sizeof *m);
    m->first_racy = -1;
    const unsigned char *x = a, *y = b;
    for (int64_t e = 0; e < elems; e++) {
        const unsigned char *p = x + (size_t)e * es, *q = y + (size_t)e * es;
        if (memcmp(p, q, es) == 0)
            continue;
        if (all_bytes(p, es, 0xFF) && all_bytes(q, es, 0x00)) {
            if (!m->mask && !(m->mask = calloc((size_t)elems, 1))) {
                memset(m, 0, sizeof *m);
                return -1;
            }
            m->mask[e] = 1;
            m->left++;
        } else if (m->racy++ == 0) {
            m->first_racy = e;
        }
    }
    return 0;
}

void leave_apply(void *ref, const void *fill, int64_t elems, size_t es, const leave_map *m)
{
    if (!m->mask)
        return;
    for (int64_t e = 0; e < elems; e++)
        if (m->mask[e])
            memcpy((unsigned char *)ref + (size_t)e * es, (const unsigned char *)fill + (size_t)e * es, es);
}

void leave_image(void *img, unsigned char poison, const void *fill, int64_t elems, size_t es, const leave_map *m)
{
    memset(img, poison, (size_t)elems * es);
    leave_apply(img, fill, elems, es, m);
}

int64_t leave_changed(const void *got, const void *ref, int64_t elems, size_t es, const leave_map *m, int64_t *first)
{
    *first = -1;
    if (!m->mask)
        return 0;
    int64_t n = 0;
    for (int64_t e = 0; e < elems; e++)
        if (m->mask[e] &&
            memcmp((const unsigned char *)got + (size_t)e * es, (const unsigned char *)ref + (size_t)e * es, es) != 0 &&
            n++ == 0)
            *first = e;
    return n;
}

void leave_free(leave_map *m)
{
    free(m->mask);
    memset(m, 0, sizeof *m);
    m->first_racy = -1;
}
