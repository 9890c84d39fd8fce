/* Under mpirun with the link (docs/internals.md "Several processes"): a
 * rank runs its halo transfers on the link's own queue (backend.h's
 * ND_RANK_LANE_LINK) beside its kernels (ND_RANK_LANE_STEPS), as one
 * process driving several GPUs runs them on a copy stream, so that the
 * exchange overlaps the interior the edge strips were computed before
 * (partition_edges.c). This says, per step of a partitioned plan, which
 * lane it runs on and which step of the other lane it must wait for:
 * derived from the bytes each step reads and writes on this rank, as
 * stream_assign.c derives a process's waits, but over this rank's steps
 * only (another rank's are not run here, so waits that plan implies
 * through them would not hold). */
#ifndef ND_SCHEDULER_RANK_LANES_H
#define ND_SCHEDULER_RANK_LANES_H

#include <stdint.h>

#include "backends/plan.h"
#include "scheduler/executor_ranks.h"

typedef struct {
    uint8_t run;   /* this rank takes part in the step (its role is not ND_RANK_SKIP) */
    uint8_t lane;  /* ND_RANK_LANE_*: where it runs */
    /* It makes transfers that do not go on the link's lane (a gather, a
     * partial reduction, one through host memory): both lanes join before
     * and after it, so that the link's transfers stay in the plan's order
     * on the GPU (NCCL's operations on one communicator must not run out of
     * order) and the step needs no finer waits. */
    uint8_t join;
    uint8_t marks; /* a later step of the other lane waits for it: marked after it */
    int32_t after; /* the step of the other lane it waits for, or -1 */
} nd_rank_lane;

typedef struct nd_rank_lanes {
    int32_t rank;      /* what they were made for (a plan is per process) */
    nd_rank_lane *steps;
    /* Per plan slot: a step on the link's lane reads or writes it, so a
     * temporary's memory goes back to the pool only after both lanes join
     * (the pool orders reuse after the steps' lane only). */
    uint8_t *link_slots;
    /* The order to issue the steps in (a permutation of the plan's that
     * keeps every dependency: rank_lanes.c's issue_order). */
    int32_t *order;
} nd_rank_lanes;

/* The lanes of partitioned plan `plan` on this rank (io's), made on its
 * first run here and kept with the plan (nd_plan.rank_lanes); NULL when
 * the backend has no lanes, nothing goes over the link, or out of memory:
 * every step then runs on the steps' lane, as before. */
const nd_rank_lanes *nd_rank_lanes_of(nd_plan *plan, const nd_rank_io *io);
void nd_rank_lanes_free(nd_rank_lanes *lanes);

#endif
