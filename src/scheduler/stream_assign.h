/* The last planning passes: temporaries into shared storages, steps onto
 * streams with the cross-stream waits they need (see stream_assign.c). */
#ifndef ND_SCHEDULER_STREAM_ASSIGN_H
#define ND_SCHEDULER_STREAM_ASSIGN_H

#include "backends/plan.h"
#include "nd.h"

/* Sets slots[].used, temporaries' first/last steps from the final step
 * list, and slots[].storage, n_storages and storage_bytes from those. */
nd_status nd_plan_assign_storage(nd_plan *plan);
/* Sets each step's stream, waits and signals, and n_streams_used. Needs
 * nd_plan_assign_storage first. */
nd_status nd_plan_assign_streams(nd_plan *plan);
/* The bytes [*lo, *hi) of its slot that access j of step st touches (in
 * nd_step_access_at's order): the rows of a device kernel, the range of a
 * halo, scatter or gather copy, else the whole slot [0, INT64_MAX). Two
 * accesses of disjoint ranges do not order each other. */
void nd_step_access_range(const nd_step *st, int32_t j, int64_t *lo, int64_t *hi);

#endif
