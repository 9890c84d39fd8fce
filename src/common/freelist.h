/* A free list of fixed-size objects (buffer descriptors, array handles):
 * recording an op makes two or three such objects and a flush frees as
 * many, thousands per flush. Through malloc that cost tens of nanoseconds
 * each (calloc bypasses glibc's per-thread cache, and freeing thousands at
 * once trims the heap, so the next batch page-faults it back); reusing
 * them costs a few. Not thread-safe: used under the API lock only.
 *
 * A list may delay reuse (nd_freelist_give_delayed): the object waits in a
 * ring of the last ND_FREELIST_DELAY ones given before it joins the list or
 * goes back to free(), so a stale pointer to it finds the object as it was
 * left (array handles: marked freed, so a second nd_free is reported
 * rather than putting one handle on the list twice). */
#ifndef ND_COMMON_FREELIST_H
#define ND_COMMON_FREELIST_H

#include <stdint.h>
#include <stdlib.h>

#include "common/alloc.h"
/* 256 handles of ~190 bytes: the ring stays in the L2 cache. */
#define ND_FREELIST_DELAY 256

typedef struct nd_freelist {
    void *head;     /* next object in its first bytes */
    uint32_t n;
    uint32_t max;   /* 0: keep nothing, every object goes back to free() */
    uint32_t delay_on; /* nd_freelist_give_delayed delays (else it gives at once) */
    uint32_t delay_pos;
    void *delayed[ND_FREELIST_DELAY]; /* ring, oldest at delay_pos */
} nd_freelist;

/* A kept object (uninitialised) or malloc(bytes); NULL when out of memory.
 * Always inline: LTO made it one call shared by the two takes of every
 * recorded op (its buffer descriptor and its handle). */
static inline __attribute__((always_inline)) void *nd_freelist_take(nd_freelist *l, size_t bytes) {
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

/* Gives p after ND_FREELIST_DELAY more objects were given this way (at
 * once when the list does not delay). */
static inline void nd_freelist_give_delayed(nd_freelist *l, void *p) {
    if (l && l->delay_on && p) {
        void *oldest = l->delayed[l->delay_pos];
        l->delayed[l->delay_pos] = p;
        l->delay_pos = (l->delay_pos + 1) % ND_FREELIST_DELAY;
        p = oldest;
    }
    nd_freelist_give(l, p);
}

/* Frees every kept and delayed object; the list keeps nothing more (max 0,
 * no delay). */
static inline void nd_freelist_drain(nd_freelist *l) {
    for (uint32_t i = 0; i < ND_FREELIST_DELAY; i++) {
        free(l->delayed[i]);
        l->delayed[i] = NULL;
    }
    l->delay_on = 0;
    while (l->head) {
        void *p = l->head;
        l->head = *(void **)p;
        free(p);
    }
    l->n = 0;
    l->max = 0;
}

#endif
