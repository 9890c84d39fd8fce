/* Plans by structural key, least recently used evicted first. */
#ifndef ND_SCHEDULER_PLAN_CACHE_H
#define ND_SCHEDULER_PLAN_CACHE_H

#include "backends/plan.h"
#include "scheduler/scheduler.h"

nd_plan *nd_plan_cache_find(nd_plan_cache *c, uint64_t key);
/* Takes ownership of p; may evict (free) the least recently used plan. */
void nd_plan_cache_insert(nd_plan_cache *c, nd_plan *p);

#endif
