/* Host memory for the CPU backend, with a cache of large freed blocks.
 *
 * A fresh multi-megabyte block costs a page fault per 4 KiB page on first
 * touch: writing y = a*b + c*d - 0.5*a into a new 64 MiB array took 3x the
 * memory-bandwidth floor, into a reused one 1.3x. A loop that frees an
 * array and makes a new one of the same size (the common case) therefore
 * gets the old block back. The cache is bounded; out of memory empties it
 * and retries before failing. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"

#define ND_CPU_CACHE_MIN_BYTES ((size_t)1 << 20) /* smaller blocks: malloc is cheap */
#define ND_CPU_CACHE_MAX_BLOCKS 64

typedef struct {
    void *ptr;
    size_t bytes;
} cached_block;

struct nd_cpu_block_cache {
    uv_mutex_t lock;
    cached_block blocks[ND_CPU_CACHE_MAX_BLOCKS]; /* oldest first */
    int n;
    size_t cached_bytes, limit;
};

nd_cpu_block_cache *nd_cpu_block_cache_new(void) {
    nd_cpu_block_cache *c = nd_calloc(1, sizeof *c);
    if (!c) return NULL;
    if (uv_mutex_init(&c->lock) != 0) {
        free(c);
        return NULL;
    }
    /* A quarter of physical memory, at most 4 GiB. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t phys = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
    c->limit = phys / 4 < ((size_t)4 << 30) ? phys / 4 : ((size_t)4 << 30);
    return c;
}

static void drop_oldest(nd_cpu_block_cache *c) {
    free(c->blocks[0].ptr);
    c->cached_bytes -= c->blocks[0].bytes;
    memmove(c->blocks, c->blocks + 1, sizeof *c->blocks * (size_t)--c->n);
}

size_t nd_cpu_block_cache_bytes(nd_cpu_block_cache *c) {
    if (!c) return 0;
    uv_mutex_lock(&c->lock);
    size_t n = c->cached_bytes;
    uv_mutex_unlock(&c->lock);
    return n;
}

void nd_cpu_block_cache_trim(nd_cpu_block_cache *c) {
    if (!c) return;
    uv_mutex_lock(&c->lock);
    while (c->n) drop_oldest(c);
    uv_mutex_unlock(&c->lock);
}

void nd_cpu_block_cache_free(nd_cpu_block_cache *c) {
    if (!c) return;
    while (c->n) drop_oldest(c);
    uv_mutex_destroy(&c->lock);
    free(c);
}

static size_t rounded(size_t bytes) { return bytes ? (bytes + 63) & ~(size_t)63 : 64; }

nd_status nd_cpu_host_alloc(nd_cpu_block_cache *c, size_t bytes, void **out) {
    size_t n = rounded(bytes);
    if (n < bytes) return nd_error_set(ND_ERR_OOM, "cpu backend: allocation of %zu bytes overflows", bytes);
    /* An injected failure (common/fault.h) takes the path of a real one. */
    const int inject = nd_fault_hit(ND_FAULT_DEVICE_ALLOC);
    if (c && n >= ND_CPU_CACHE_MIN_BYTES && !inject) {
        uv_mutex_lock(&c->lock);
        /* The smallest cached block that fits without wasting over a quarter. */
        int best = -1;
        for (int i = 0; i < c->n; i++)
            if (c->blocks[i].bytes >= n && c->blocks[i].bytes <= n + n / 4 &&
                (best < 0 || c->blocks[i].bytes < c->blocks[best].bytes))
                best = i;
        if (best >= 0) {
            *out = c->blocks[best].ptr;
            c->cached_bytes -= c->blocks[best].bytes;
            memmove(c->blocks + best, c->blocks + best + 1, sizeof *c->blocks * (size_t)(c->n - best - 1));
            c->n--;
            uv_mutex_unlock(&c->lock);
            return ND_OK;
        }
        uv_mutex_unlock(&c->lock);
    }
    void *p = inject ? NULL : aligned_alloc(64, n);
    if (!p && c && !inject) {
        uv_mutex_lock(&c->lock);
        while (c->n) drop_oldest(c);
        uv_mutex_unlock(&c->lock);
        p = aligned_alloc(64, n);
    }
    if (!p) return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory allocating %zu bytes", bytes);
    *out = p;
    return ND_OK;
}

void nd_cpu_host_release(nd_cpu_block_cache *c, void *ptr, size_t bytes) {
    size_t n = rounded(bytes);
    if (!c || n < ND_CPU_CACHE_MIN_BYTES || n > c->limit) {
        free(ptr);
        return;
    }
    uv_mutex_lock(&c->lock);
    while (c->n && (c->n == ND_CPU_CACHE_MAX_BLOCKS || c->cached_bytes + n > c->limit)) drop_oldest(c);
    c->blocks[c->n].ptr = ptr;
    c->blocks[c->n].bytes = n;
    c->n++;
    c->cached_bytes += n;
    uv_mutex_unlock(&c->lock);
}
