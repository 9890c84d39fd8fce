/* Plans a pending graph on a plan-cache miss (see plan_build.c). */
#ifndef ND_SCHEDULER_PLAN_BUILD_H
#define ND_SCHEDULER_PLAN_BUILD_H

#include "backends/plan.h"
#include "graph/graph.h"
#include "scheduler/flush_walk.h"
#include "scheduler/partition.h"

/* Builds the plan for g (walk already run). memory: where the backend
 * computes. fusion 0: every node its own kernel, every value in memory. */
nd_status nd_plan_build(const nd_graph *g, const nd_flush_walk *walk, int fusion, int32_t memory,
                        size_t chunk_bytes, const nd_split_config *split, nd_plan **out);
void nd_plan_free(nd_plan *p);
/* Records w's bases pass in p (nd_plan.relative_key, view_base) and
 * whether p runs on views that start elsewhere (offset_generic). */
nd_status nd_plan_set_bases(nd_plan *p, const nd_flush_walk *w);

#endif
