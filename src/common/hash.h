/* 64-bit FNV-1a style mixing for structural hashes (plan and kernel keys). */
#ifndef ND_COMMON_HASH_H
#define ND_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define ND_HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t nd_hash_u64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0x100000001b3ull;
    return h;
}
static inline uint64_t nd_hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

#endif
