/* A bump allocator: the pending graph's nodes and refs live in one arena that
 * is reset after each flush, so recording an op allocates no heap memory in
 * the steady state. */
#ifndef ND_COMMON_ARENA_H
#define ND_COMMON_ARENA_H

#include <stddef.h>

typedef struct nd_arena_block nd_arena_block;
typedef struct {
    nd_arena_block *head; /* block being filled */
    nd_arena_block *free; /* blocks kept from before the last reset */
} nd_arena;

/* 16-byte aligned, zero-filled memory; NULL when out of memory. */
void *nd_arena_alloc(nd_arena *a, size_t bytes);
/* Gives back p, `bytes` long, when it is the newest allocation (a node
 * dropped as soon as it was found dead); otherwise does nothing. */
void nd_arena_pop(nd_arena *a, void *p, size_t bytes);
void nd_arena_reset(nd_arena *a); /* keeps the blocks for reuse */
void nd_arena_destroy(nd_arena *a);

#endif
