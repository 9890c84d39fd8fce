/* nd's own host allocations: malloc/calloc/realloc/strdup through one
 * place, so fault injection (fault.h) can fail the N-th of them. Off, each
 * costs one relaxed load and a predicted branch more than the libc call.
 * Memory from these is released with plain free(). */
#ifndef ND_COMMON_ALLOC_H
#define ND_COMMON_ALLOC_H

#include <stdlib.h>
#include <string.h>

#include "common/fault.h"

static inline void *nd_malloc(size_t n) { return nd_fault_hit(ND_FAULT_HOST_ALLOC) ? NULL : malloc(n); }
static inline void *nd_calloc(size_t n, size_t size) {
    return nd_fault_hit(ND_FAULT_HOST_ALLOC) ? NULL : calloc(n, size);
}
static inline void *nd_realloc(void *p, size_t n) {
    return nd_fault_hit(ND_FAULT_HOST_ALLOC) ? NULL : realloc(p, n);
}
static inline char *nd_strdup(const char *s) { return nd_fault_hit(ND_FAULT_HOST_ALLOC) ? NULL : strdup(s); }

#endif
