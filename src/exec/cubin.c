/*
 * cubin.c -- see cubin.h.  An ELF64 little-endian reader of the few things
 * the fake GPU needs: section names and the .nv.info.NAME records.  Every
 * offset is checked against the file's length; anything unexpected makes
 * the answer "not known" (-1, false), never a wrong one.
 */
#include "cubin.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
    EIFMT_BVAL = 2,     /* a record with a byte value (4 bytes in all) */
    EIFMT_HVAL = 3,     /* a record with a 16-bit value (4 bytes in all) */
    EIFMT_SVAL = 4,     /* a record with a 16-bit length and that many bytes */
    EIATTR_KPARAM_INFO = 0x17,  /* SVAL: index u32, ordinal u16, offset u16, flags u32 (size in bits 18..31) */
};

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

typedef struct {
    const unsigned char *d;
    size_t len;
    uint64_t shoff;
    unsigned shentsize, shnum;
    uint64_t stroff, strsize;   /* the section names' table */
} elf;

static bool elf_open(elf *e, const void *cubin, size_t len)
{
    const unsigned char *d = cubin;
    memset(e, 0, sizeof *e);
    if (!d || len < 64 || memcmp(d, "\x7f" "ELF", 4) != 0 || d[4] != 2 /* 64-bit */ || d[5] != 1 /* LE */)
        return false;
    e->d = d;
    e->len = len;
    e->shoff = rd64(d + 0x28);
    e->shentsize = rd16(d + 0x3a);
    e->shnum = rd16(d + 0x3c);
    unsigned shstrndx = rd16(d + 0x3e);
    if (e->shentsize < 64 || shstrndx >= e->shnum || e->shoff > len ||
        (uint64_t)e->shnum * e->shentsize > len - e->shoff)
        return false;
    const unsigned char *s = d + e->shoff + (uint64_t)shstrndx * e->shentsize;
    e->stroff = rd64(s + 0x18);
    e->strsize = rd64(s + 0x20);
    return e->stroff <= len && e->strsize <= len - e->stroff;
}

/* Section i's name (NULL if it is not a NUL-terminated string in the
 * table), its contents and their size. */
static const char *elf_section(const elf *e, unsigned i, const unsigned char **data, size_t *size)
{
    const unsigned char *s = e->d + e->shoff + (uint64_t)i * e->shentsize;
    uint32_t name = rd32(s);
    uint64_t off = rd64(s + 0x18), sz = rd64(s + 0x20);
    *data = NULL;
    *size = 0;
    if (off <= e->len && sz <= e->len - off) {
        *data = e->d + off;
        *size = (size_t)sz;
    }
    if (name >= e->strsize || !memchr(e->d + e->stroff + name, 0, (size_t)(e->strsize - name)))
        return NULL;
    return (const char *)e->d + e->stroff + name;
}

#define INFO ".nv.info."

bool cubin_ok(const void *cubin, size_t len)
{
    elf e;
    return elf_open(&e, cubin, len);
}

void cubin_kernels(const void *cubin, size_t len, char *buf, size_t buflen)
{
    elf e;
    size_t o = 0;
    buf[0] = '\0';
    if (elf_open(&e, cubin, len))
        for (unsigned i = 0; i < e.shnum && o < buflen; i++) {
            const unsigned char *data;
            size_t size;
            const char *n = elf_section(&e, i, &data, &size);
            if (n && strncmp(n, INFO, strlen(INFO)) == 0 && n[strlen(INFO)])
                o += (size_t)snprintf(buf + o, buflen - o, "%s%s", o ? ", " : "", n + strlen(INFO));
        }
    if (!buf[0])
        snprintf(buf, buflen, "none");
}

/* The .nv.info section of kernel name: its records and their size. */
static bool kernel_info(const elf *e, const char *name, const unsigned char **data, size_t *size)
{
    for (unsigned i = 0; i < e->shnum; i++) {
        const char *n = elf_section(e, i, data, size);
        if (n && strncmp(n, INFO, strlen(INFO)) == 0 && strcmp(n + strlen(INFO), name) == 0)
            return *data != NULL;
    }
    return false;
}

bool cubin_has_kernel(const void *cubin, size_t len, const char *name)
{
    elf e;
    const unsigned char *data;
    size_t size;
    return elf_open(&e, cubin, len) && kernel_info(&e, name, &data, &size);
}

bool cubin_find_prefix(const void *cubin, size_t len, const char *prefix, char *out, size_t outlen)
{
    elf e;
    int found = 0;
    if (!elf_open(&e, cubin, len))
        return false;
    for (unsigned i = 0; i < e.shnum; i++) {
        const unsigned char *data;
        size_t size;
        const char *n = elf_section(&e, i, &data, &size);
        if (n && strncmp(n, INFO, strlen(INFO)) == 0 && strncmp(n + strlen(INFO), prefix, strlen(prefix)) == 0) {
            snprintf(out, outlen, "%s", n + strlen(INFO));
            found++;
        }
    }
    return found == 1;
}

int cubin_param_sizes(const void *cubin, size_t len, const char *name, size_t *sizes, int max)
{
    elf e;
    const unsigned char *b;
    size_t size;
    if (!elf_open(&e, cubin, len) || !kernel_info(&e, name, &b, &size))
        return -1;
    enum { MAXP = 256 };
    size_t got[MAXP];
    bool seen[MAXP] = {false};
    int n = 0;
    for (size_t i = 0; i + 4 <= size;) {
        unsigned fmt = b[i], attr = b[i + 1];
        if (fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) {
            i += 4;
            continue;
        }
        if (fmt != EIFMT_SVAL)
            return -1;  /* a record this reader does not know: the rest cannot be read */
        size_t vlen = rd16(b + i + 2);
        if (vlen > size - i - 4)
            return -1;
        if (attr == EIATTR_KPARAM_INFO) {
            if (vlen != 12)
                return -1;
            unsigned ordinal = rd16(b + i + 8);
            uint32_t flags = rd32(b + i + 12);
            if (ordinal >= MAXP || seen[ordinal])
                return -1;
            seen[ordinal] = true;
            got[ordinal] = flags >> 18;
            n++;
        }
        i += 4 + vlen;
    }
    /* the ordinals are 0..n-1, each once */
    for (int k = 0; k < n; k++)
        if (!seen[k])
            return -1;
    for (int k = 0; k < n && k < max; k++)
        sizes[k] = got[k];
    return n;
}

long long cubin_global_size(const void *cubin, size_t len, const char *name)
{
    elf e;
    if (!elf_open(&e, cubin, len))
        return -1;
    for (unsigned i = 0; i < e.shnum; i++) {
        const unsigned char *sh = e.d + e.shoff + (uint64_t)i * e.shentsize;
        if (rd32(sh + 4) != 2 /* SHT_SYMTAB */)
            continue;
        unsigned link = rd32(sh + 0x28);
        const unsigned char *syms, *strs;
        size_t nsyms, nstrs;
        elf_section(&e, i, &syms, &nsyms);
        if (link >= e.shnum || !syms)
            continue;
        elf_section(&e, link, &strs, &nstrs);
        if (!strs)
            continue;
        for (size_t o = 0; o + 24 <= nsyms; o += 24) {
            uint32_t nm = rd32(syms + o);
            unsigned type = syms[o + 4] & 0xf;
            if (type != 1 /* STT_OBJECT */ || nm >= nstrs || !memchr(strs + nm, 0, nstrs - nm))
                continue;
            if (strcmp((const char *)strs + nm, name) == 0)
                return (long long)rd64(syms + o + 16);
        }
    }
    return -1;
}
