/*
 * param.c -- see param.h.
 */
#include "param.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int64_t kf_grid_encode(kf_grid g)
{
    return ((int64_t)g.kind << 48) | (g.value & ((1LL << 48) - 1));
}

kf_grid kf_grid_decode(int64_t x)
{
    kf_grid g;
    memset(&g, 0, sizeof g);
    g.kind = (kf_grid_kind)(x >> 48);
    g.value = x & ((1LL << 48) - 1);
    return g;
}

void param_json(strbuf *b, const kf_param *p, int64_t x)
{
    switch (p->kind) {
    case KF_PK_ENUM:
        sb_json_string(b, x >= 0 && x < p->count ? p->names[x] : "?");
        break;
    case KF_PK_INT:
        sb_printf(b, "%lld", (long long)x);
        break;
    case KF_PK_GRID: {
        kf_grid g = kf_grid_decode(x);
        switch (g.kind) {
        case KF_GRID_AUTO: sb_append(b, "\"auto\""); break;
        case KF_GRID_BLOCKS: sb_printf(b, "%lld", (long long)g.value); break;
        case KF_GRID_PER_SM: sb_printf(b, "{\"blocks_per_sm\": %lld}", (long long)g.value); break;
        case KF_GRID_WAVES: sb_printf(b, "{\"waves\": %lld}", (long long)g.value); break;
        default: sb_append(b, "\"?\""); break;
        }
        break;
    }
    }
}

void param_text(strbuf *b, const kf_param *p, int64_t x)
{
    switch (p->kind) {
    case KF_PK_ENUM:
        sb_append(b, x >= 0 && x < p->count ? p->names[x] : "?");
        break;
    case KF_PK_INT:
        sb_printf(b, "%lld", (long long)x);
        break;
    case KF_PK_GRID: {
        kf_grid g = kf_grid_decode(x);
        switch (g.kind) {
        case KF_GRID_AUTO: sb_append(b, "auto"); break;
        case KF_GRID_BLOCKS: sb_printf(b, "%lld", (long long)g.value); break;
        case KF_GRID_PER_SM: sb_printf(b, "%lldxSM", (long long)g.value); break;
        case KF_GRID_WAVES: sb_printf(b, "%lldwaves", (long long)g.value); break;
        default: sb_append(b, "?"); break;
        }
        break;
    }
    }
}

bool param_valid(const kf_param *p, int64_t x)
{
    switch (p->kind) {
    case KF_PK_ENUM:
        return x >= 0 && x < p->count;
    case KF_PK_INT:
        if (x < p->lo || x > p->hi)
            return false;
        if (p->only) {
            for (const int64_t *o = p->only; *o; o++)
                if (*o == x)
                    return true;
            return false;
        }
        return true;
    case KF_PK_GRID: {
        kf_grid g = kf_grid_decode(x);
        switch (g.kind) {
        case KF_GRID_AUTO: return g.value == 0;
        case KF_GRID_BLOCKS: return g.value >= 1 && g.value <= KF_GRID_MAX_BLOCKS;
        case KF_GRID_PER_SM: case KF_GRID_WAVES: return g.value >= 1 && g.value <= KF_GRID_MAX_PER_SM;
        default: return false;
        }
    }
    }
    return false;
}

void param_allowed(strbuf *b, const kf_param *p)
{
    switch (p->kind) {
    case KF_PK_ENUM:
        for (int i = 0; i < p->count; i++)
            sb_printf(b, "%s\"%s\"", i ? (i == p->count - 1 ? " or " : ", ") : "", p->names[i]);
        break;
    case KF_PK_INT:
        sb_append(b, p->allowed ? p->allowed : "an integer");
        break;
    case KF_PK_GRID:
        sb_append(b, "\"auto\", a block count 1..2147483647, {\"blocks_per_sm\": 1..64} or {\"waves\": 1..64}");
        break;
    }
}

int param_find(const kf_param *t, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (strcmp(t[i].name, name) == 0)
            return i;
    return -1;
}

void param_macro_suffix(const char *name, char *buf, size_t len)
{
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++)
        buf[i] = isalnum((unsigned char)name[i]) ? (char)toupper((unsigned char)name[i]) : '_';
    buf[i] = '\0';
}
