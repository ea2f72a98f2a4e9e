/*
 * ranges.c -- what was measured in each dispatch range (ranges.h).
 */
#include "ranges.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

uint64_t kf_size_boundary(uint64_t a, uint64_t b)
{
    unsigned __int128 ab = (unsigned __int128)a * b;
    uint64_t lo = a, hi = b; /* a * a <= ab <= b * b */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((unsigned __int128)mid * mid >= ab)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void kf_size_text(char *buf, size_t len, uint64_t n)
{
    if (n > 0 && (n & (n - 1)) == 0) {
        int k = 0;
        while ((1ULL << k) < n)
            k++;
        snprintf(buf, len, "2^%d", k);
    } else {
        snprintf(buf, len, "%" PRIu64, n);
    }
}

/* Whether nothing was measured between p[i] and p[i + 1] although they are
 * tuned sizes far apart. */
static bool gap_unmeasured(const kf_range_point *p, int i)
{
    return !p[i].between && !p[i + 1].between && (uint64_t)p[i + 1].n > (uint64_t)p[i].n * KF_BETWEEN_RATIO;
}

static bool same_label(const kf_range_point *a, const kf_range_point *b)
{
    return strcmp(a->label ? a->label : "", b->label ? b->label : "") == 0;
}

void kf_range_lines(strbuf *b, const char *prefix, const char *axis, const kf_range_point *p, int np)
{
    for (int a = 0; a < np;) {
        int e = a;
        while (e + 1 < np && same_label(&p[e + 1], &p[a]))
            e++;
        char lo[32], hi[32], s[32];
        if (a > 0)
            kf_size_text(lo, sizeof lo, kf_size_boundary((uint64_t)p[a - 1].n, (uint64_t)p[a].n));
        if (e + 1 < np)
            kf_size_text(hi, sizeof hi, kf_size_boundary((uint64_t)p[e].n, (uint64_t)p[e + 1].n));
        sb_append(b, prefix);
        if (a == 0 && e + 1 == np)
            sb_printf(b, "every %s", axis);
        else if (a == 0)
            sb_printf(b, "%s < %s", axis, hi);
        else if (e + 1 == np)
            sb_printf(b, "%s >= %s", axis, lo);
        else
            sb_printf(b, "%s in [%s, %s)", axis, lo, hi);
        sb_append(b, ": measured at ");
        for (int i = a; i <= e; i++) {
            kf_size_text(s, sizeof s, (uint64_t)p[i].n);
            sb_printf(b, "%s%s (%s)", i > a ? ", " : "", s, p[i].between ? "between" : "tuned");
        }
        sb_printf(b, " -> %s", p[a].label ? p[a].label : "?");
        int ng = 0;
        for (int i = a > 0 ? a - 1 : a; i <= e && i + 1 < np; i++)
            if (gap_unmeasured(p, i)) {
                char x[32], y[32];
                kf_size_text(x, sizeof x, (uint64_t)p[i].n);
                kf_size_text(y, sizeof y, (uint64_t)p[i + 1].n);
                sb_printf(b, "%s%s .. %s", ng++ ? ", " : "; nearest tuned size, not measured in between (", x, y);
            }
        sb_append(b, ng ? ")\n" : "\n");
        a = e + 1;
    }
}

int kf_range_unmeasured(const kf_range_point *p, int np)
{
    int n = 0;
    for (int i = 0; i + 1 < np; i++)
        n += gap_unmeasured(p, i);
    return n;
}
