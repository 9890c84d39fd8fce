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
/* Two words mixed into one: their 128-bit product with the halves folded
 * (wyhash's "mum"), each word first offset by a constant so that zeros
 * still mix. One multiply for a pair of words where nd_hash_u64 spends one
 * per word on a longer dependent chain: the flush walk hashes every
 * pending node at every flush (scheduler/flush_walk.c). */
static inline uint64_t nd_hash_pair(uint64_t a, uint64_t b) {
    __extension__ typedef unsigned __int128 nd_u128;
    nd_u128 p = (nd_u128)(a ^ 0xa0761d6478bd642full) * (nd_u128)(b ^ 0xe7037ed1a0b428dbull);
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}
static inline uint64_t nd_hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

#endif
