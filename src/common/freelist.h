/* A free list of fixed-size objects (buffer descriptors, array handles):
 * recording an op makes two or three such objects and a flush frees as
 * many, thousands per flush. Through malloc that cost tens of nanoseconds
 * each (calloc bypasses glibc's per-thread cache, and freeing thousands at
 * once trims the heap, so the next batch page-faults it back); reusing
 * them costs a few. Not thread-safe: the owner's thread only. */
#ifndef ND_COMMON_FREELIST_H
#define ND_COMMON_FREELIST_H

#include <stdint.h>
#include <stdlib.h>

#include "common/alloc.h"

typedef struct nd_freelist {
    void *head;     /* next object in its first bytes */
    uint32_t n;
    uint32_t max;   /* 0: keep nothing, every object goes back to free() */
} nd_freelist;

/* A kept object (uninitialised) or malloc(bytes); NULL when out of memory. */
static inline void *nd_freelist_take(nd_freelist *l, size_t bytes) {
    if (!l || !l->head) return nd_malloc(bytes);
    void *p = l->head;
    l->head = *(void **)p;
    l->n--;
    /* The next object is cold after a flush freed thousands: fetch it
     * while the caller fills this one. */
    if (l->head) __builtin_prefetch(l->head, 1);
    return p;
}

/* Keeps p for reuse, or frees it when the list is full (or has max 0). */
static inline void nd_freelist_give(nd_freelist *l, void *p) {
    if (!p) return;
    if (!l || l->n >= l->max) {
        free(p);
        return;
    }
    *(void **)p = l->head;
    l->head = p;
    l->n++;
}

/* Frees every kept object; the list keeps nothing more (max 0). */
static inline void nd_freelist_drain(nd_freelist *l) {
    while (l->head) {
        void *p = l->head;
        l->head = *(void **)p;
        free(p);
    }
    l->n = 0;
    l->max = 0;
}

#endif
