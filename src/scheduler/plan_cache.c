#include "scheduler/plan_cache.h"
#include "common/alloc.h"

#include <stdlib.h>

#include "scheduler/plan_build.h"

/* Enough for every loop body and phase of a real program; a program that
 * makes ever-new graph shapes evicts instead of growing without bound. */
#define ND_PLAN_CACHE_CAPACITY 256

typedef struct {
    nd_plan *plan;
    uint64_t last_use;
} cache_entry;

struct nd_plan_cache {
    cache_entry entries[ND_PLAN_CACHE_CAPACITY];
    int32_t n;
    uint64_t clock;
};

nd_plan_cache *nd_plan_cache_new(void) { return nd_calloc(1, sizeof(nd_plan_cache)); }

void nd_plan_cache_free(nd_plan_cache *c) {
    if (!c) return;
    for (int32_t i = 0; i < c->n; i++) nd_plan_free(c->entries[i].plan);
    free(c);
}

static nd_plan *find(nd_plan_cache *c, uint64_t key, int generic) {
    /* Most recently inserted first: a loop body is usually the last plan. */
    for (int32_t i = c->n; i-- > 0;) {
        const nd_plan *p = c->entries[i].plan;
        if (generic ? p->offset_generic && p->relative_key == key : p->key == key) {
            c->entries[i].last_use = ++c->clock;
            return c->entries[i].plan;
        }
    }
    return NULL;
}

nd_plan *nd_plan_cache_find(nd_plan_cache *c, uint64_t key) { return find(c, key, 0); }
nd_plan *nd_plan_cache_find_generic(nd_plan_cache *c, uint64_t relative_key) { return find(c, relative_key, 1); }

void nd_plan_cache_insert(nd_plan_cache *c, nd_plan *p) {
    if (c->n == ND_PLAN_CACHE_CAPACITY) {
        int32_t lru = 0;
        for (int32_t i = 1; i < c->n; i++)
            if (c->entries[i].last_use < c->entries[lru].last_use) lru = i;
        nd_plan_free(c->entries[lru].plan);
        c->entries[lru] = c->entries[--c->n];
    }
    c->entries[c->n].plan = p;
    c->entries[c->n].last_use = ++c->clock;
    c->n++;
}
