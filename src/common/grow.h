/* Growing a malloc'd array by doubling: the one helper behind every dynamic
 * list of the scheduler. New elements are zeroed. */
#ifndef ND_COMMON_GROW_H
#define ND_COMMON_GROW_H

#include <stdint.h>
#include <stdlib.h>

#include "common/alloc.h"
#include <string.h>

/* Makes room for `need` elements of `elem` bytes in *p (capacity *cap);
 * returns 0 when out of memory (then *p and *cap are unchanged). A signed
 * int32_t capacity may be passed cast to uint32_t * (C allows the access). */
static inline int nd_grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return 1;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = nd_realloc(*p, (size_t)c * elem);
    if (!q) return 0;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
    *p = q;
    *cap = c;
    return 1;
}

#endif
