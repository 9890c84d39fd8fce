/* Runs a plan on the backend and records what it produced in the buffers. */
#ifndef ND_SCHEDULER_EXECUTOR_H
#define ND_SCHEDULER_EXECUTOR_H

#include "scheduler/executor_ranks.h"
#include "scheduler/flush_walk.h"
#include "scheduler/scheduler.h"

nd_status nd_execute_plan(nd_scheduler_ctx *ctx, nd_plan *plan, const nd_flush_walk *walk);
/* Under mpirun: how this rank's transfers travel (executor_ranks.h). */
nd_rank_io nd_scheduler_rank_io(nd_scheduler_ctx *ctx);
void nd_temp_pool_free(nd_scheduler_ctx *ctx);

#endif
