/* Plans by structural key, least recently used evicted first. */
#ifndef ND_SCHEDULER_PLAN_CACHE_H
#define ND_SCHEDULER_PLAN_CACHE_H

#include "backends/plan.h"
#include "scheduler/scheduler.h"

/* The plan of key for views starting at base_key's bases: one built for
 * them, or one that runs on any (nd_plan.offset_generic); NULL: none. */
nd_plan *nd_plan_cache_find(nd_plan_cache *c, uint64_t key, uint64_t base_key);
/* Takes ownership of p; may evict (free) the least recently used plan. */
void nd_plan_cache_insert(nd_plan_cache *c, nd_plan *p);

#endif
