/*
 * rng.h -- the search's PRNG, shared by the strategies (strategy.c) and the
 * model strategy's forest (forest.c): xoshiro256** seeded by splitmix64
 * (never rand(): results must not depend on the C library or on other code
 * drawing from a shared state).
 */
#ifndef KF_TUNE_RNG_H
#define KF_TUNE_RNG_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(uint64_t s[4])
{
    uint64_t r = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

#endif
