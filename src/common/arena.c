#include "common/arena.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#define ND_ARENA_BLOCK (256u * 1024u)

static nd_arena_block *block_new(size_t cap) {
    nd_arena_block *b = nd_malloc(sizeof(nd_arena_block) + cap);
    if (!b) return NULL;
    b->next = NULL;
    b->used = 0;
    b->cap = cap;
    return b;
}

void *nd_arena_alloc_block(nd_arena *a, size_t bytes) {
    nd_arena_block *b = NULL;
    /* Reuse a kept block when it is large enough; oversized requests get
     * a block of their own. */
    if (a->free && a->free->cap >= bytes) {
        b = a->free;
        a->free = b->next;
        b->used = 0;
    } else {
        b = block_new(bytes > ND_ARENA_BLOCK ? bytes : ND_ARENA_BLOCK);
        if (!b) return NULL;
    }
    b->next = a->head;
    a->head = b;
    b->used = bytes;
    memset(b->data, 0, bytes);
    return b->data;
}

void nd_arena_reset(nd_arena *a) {
    /* The newest block stays the head, emptied: the next flush's first
     * node takes the inline path instead of fetching a kept block (a call
     * and its bookkeeping on every flush of a loop body). */
    nd_arena_block *keep = a->head;
    if (!keep) return;
    a->head = keep->next;
    while (a->head) {
        nd_arena_block *b = a->head;
        a->head = b->next;
        b->next = a->free;
        a->free = b;
    }
    keep->next = NULL;
    keep->used = 0;
    a->head = keep;
}

void nd_arena_destroy(nd_arena *a) {
    nd_arena_reset(a);
    if (a->head) {
        a->head->next = a->free;
        a->free = a->head;
        a->head = NULL;
    }
    while (a->free) {
        nd_arena_block *b = a->free;
        a->free = b->next;
        free(b);
    }
}
