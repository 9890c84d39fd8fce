/* Plans by structural key, least recently used evicted first. */
#ifndef ND_SCHEDULER_PLAN_CACHE_H
#define ND_SCHEDULER_PLAN_CACHE_H

#include "backends/plan.h"
#include "scheduler/scheduler.h"

nd_plan *nd_plan_cache_find(nd_plan_cache *c, uint64_t key);
/* A plan that runs on views starting anywhere (nd_plan.offset_generic) of
 * the flush walk's relative key; NULL: none. */
nd_plan *nd_plan_cache_find_generic(nd_plan_cache *c, uint64_t relative_key);
/* Takes ownership of p; may evict (free) the least recently used plan. */
void nd_plan_cache_insert(nd_plan_cache *c, nd_plan *p);

#endif
