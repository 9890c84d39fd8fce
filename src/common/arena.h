/* A bump allocator: the pending graph's nodes and refs live in one arena that
 * is reset after each flush, so recording an op allocates no heap memory in
 * the steady state. */
#ifndef ND_COMMON_ARENA_H
#define ND_COMMON_ARENA_H

#include <stddef.h>
#include <string.h>

typedef struct nd_arena_block nd_arena_block;
struct nd_arena_block {
    nd_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};
typedef struct {
    nd_arena_block *head; /* block being filled */
    nd_arena_block *free; /* blocks kept from before the last reset */
} nd_arena;

/* nd_arena_alloc when the head block is full: a kept or new block. */
void *nd_arena_alloc_block(nd_arena *a, size_t bytes);

/* 16-byte aligned, zero-filled memory; NULL when out of memory. Inline:
 * every recorded op allocates its node here. */
static inline void *nd_arena_alloc(nd_arena *a, size_t bytes) {
    bytes = (bytes + 15u) & ~(size_t)15u;
    nd_arena_block *h = a->head;
    if (__builtin_expect(!h || h->used + bytes > h->cap, 0)) return nd_arena_alloc_block(a, bytes);
    void *p = h->data + h->used;
    h->used += bytes;
    /* A size GCC sees as constant once inlined (a node of two inputs: 552
     * bytes) became `rep stosq`, slower to start than libc's memset and
     * counted once per word by callgrind: kept opaque. */
    __asm__("" : "+r"(bytes));
    memset(p, 0, bytes);
    return p;
}

/* nd_arena_alloc without the zero fill, for a block whose writer sets
 * every byte a reader looks at (graph.h's nd_graph_add_map_node: the
 * binary ops' nodes, where the fill was a twelfth of recording an op
 * and freeing it).
 * Builds with assertions fill it with ND_ARENA_POISON instead, so that a
 * reader of a byte left unwritten gets garbage in the tests, not the
 * zero a reused block may hold by chance. */
#define ND_ARENA_POISON 0xA5
static inline void *nd_arena_alloc_raw(nd_arena *a, size_t bytes) {
    bytes = (bytes + 15u) & ~(size_t)15u;
    nd_arena_block *h = a->head;
    void *p;
    if (__builtin_expect(!h || h->used + bytes > h->cap, 0)) {
        p = nd_arena_alloc_block(a, bytes);
    } else {
        p = h->data + h->used;
        h->used += bytes;
    }
#ifndef NDEBUG
    if (p) memset(p, ND_ARENA_POISON, bytes);
#endif
    return p;
}

/* Gives back p, `bytes` long, when it is the newest allocation (a node
 * dropped as soon as it was found dead); otherwise does nothing. */
static inline void nd_arena_pop(nd_arena *a, void *p, size_t bytes) {
    bytes = (bytes + 15u) & ~(size_t)15u;
    nd_arena_block *h = a->head;
    if (h && h->used >= bytes && (unsigned char *)p == h->data + h->used - bytes) h->used -= bytes;
}
void nd_arena_reset(nd_arena *a); /* keeps the blocks for reuse */
void nd_arena_destroy(nd_arena *a);

#endif
