/* Under mpirun (docs/internals.md "Several processes"): rank r plays
 * device r of a partitioned plan. Every rank walks the same steps in the
 * same order; these say what rank r does with each, and carry the bytes
 * between ranks through src/dist (the executor binds the memory). */
#ifndef ND_SCHEDULER_EXECUTOR_RANKS_H
#define ND_SCHEDULER_EXECUTOR_RANKS_H

#include <stdint.h>

#include "backends/backend.h"
#include "backends/plan.h"

/* What rank `rank` does with step st (part != ND_PART_NONE). */
typedef enum {
    ND_RANK_SKIP,  /* another rank's step: nothing */
    ND_RANK_RUN,   /* run it here as on one process */
    ND_RANK_SEND,  /* a halo copy out of this rank's piece: send the rows */
    ND_RANK_RECV,  /* a halo copy into this rank's piece: receive the rows */
    ND_RANK_GATHER /* a gather: the owner copies, then every rank receives the rows */
} nd_rank_role;

nd_rank_role nd_rank_role_of(const nd_plan *plan, const nd_step *st, int32_t rank);

/* The plan slot a kernel step writes a partial reduction of axis 0 into
 * (one chunk per device, folded by the combine step), and the chunk's
 * bytes at *offset, *bytes; -1 when it writes none. Every rank receives
 * each chunk from its owner before the combine, so the fold runs alike on
 * every rank. */
int32_t nd_rank_partial(const nd_plan *plan, const nd_step *st, size_t *offset, size_t *bytes);
/* Whether step st writes such a partial: the same answer on every rank. */
int nd_rank_makes_partial(const nd_plan *plan, const nd_step *st);

/* The device (0..n-1) a step or a piece belongs to; -1 whole. */
static inline int32_t nd_rank_of_step(const nd_step *st) { return (int32_t)st->device - 1; }
static inline int32_t nd_rank_of_slot(const nd_plan *plan, int32_t slot) {
    return (int32_t)plan->slots[slot].device - 1;
}

/* How the bytes between ranks reach the steps' memory. With `link` (the
 * ranks chose NCCL at nd_init: ND_RANK_TRANSPORT), bytes from device
 * memory to device memory (any bytes, where the link carries host memory:
 * the CPU test link of ND_RANK_LINK=1) go over the backend's rank_xfer,
 * enqueued on its stream (backend.h), and *linked is set: the plan then waits for them
 * before the ranks agree (nd_rank_link_wait). Otherwise, from host memory
 * MPI reads and writes the steps' own pointers; from any other memory
 * (a GPU's) they go through a host buffer of the backend's (pinned on
 * CUDA): the sender copies them out (backend.h's stage, ordered after the
 * step that wrote them) and sends the buffer, the receiver receives into
 * one and copies it in before the next step. `force_staging`
 * (ND_RANK_STAGING=1) takes that path from host memory too, so that the
 * CPU backend tests it. Both ends of a transfer choose alike: from the
 * plan's memories of both ends and the transfer's size, the same on
 * every rank. */
typedef struct {
    nd_backend *be;
    int32_t rank;      /* this process's */
    int force_staging;
    int link;
    int *linked;       /* set when a transfer went over the link, or NULL */
    nd_stats *stats;   /* rank_bytes_staged and rank_bytes_nccl are counted here, or NULL */
    /* Transfers over the link go on its own lane (ND_RANK_LINK_SIDE: the
     * step runs there, rank_lanes.h), not on the steps'. */
    int side;
} nd_rank_io;

/* Whether a transfer of `bytes` in `memory` (the other end's: far_memory)
 * goes over the link: device memory at both ends, or any memory over a
 * link that carries host memory too (the CPU test link, ND_RANK_LINK=1).
 * The memories are the plan's and the size the step's, so both ends
 * (every rank, a broadcast) decide alike. */
int nd_rank_over_link(const nd_rank_io *io, int memory, int far_memory, size_t bytes);

/* Carries a copy step's bytes for `role`: SEND/RECV to or from the other
 * end's rank; GATHER broadcasts dst from the owner (which has copied it). */
nd_status nd_rank_move(const nd_rank_io *io, const nd_plan *plan, const nd_step *st, nd_rank_role role, void *dst,
                       const void *src);
/* buf's `bytes`, in memory `memory`, from rank `root` into buf on every rank. */
nd_status nd_rank_bcast(const nd_rank_io *io, void *buf, int memory, size_t bytes, int32_t root);

/* Takes part in a broadcast of `bytes` in memory `memory` from rank
 * `root` without memory to receive it in (a rank whose allocation
 * failed): the bytes land in scratch and are dropped. */
nd_status nd_rank_bcast_idle(const nd_rank_io *io, int memory, size_t bytes, int32_t root);

/* Takes part in step st's transfers without its memory (a failed or
 * skipped step: the other ranks wait in them): sends zeros, receives into
 * a scratch block that is then dropped (over the link, the backend's
 * scratch: rank_xfer with no memory). */
nd_status nd_rank_transfer_idle(const nd_rank_io *io, const nd_plan *plan, const nd_step *st);

/* After a plan whose transfers went over the link (*io->linked): waits
 * for them (backend.h's rank_link_wait), so that a failed transfer, or a
 * peer's failure NCCL reports, is this rank's status when the ranks agree
 * (nd_rank_agree); ND_OK when nothing went over it. */
nd_status nd_rank_link_wait(const nd_rank_io *io);

/* After a plan: every rank's status (ND_OK or its first failure's); the
 * first failure of another rank, with that rank in *failed_rank, or
 * ND_OK. */
nd_status nd_rank_agree(nd_status mine, int32_t *failed_rank);

/* ND_CHECK_SPMD=1: the ranks compare the plan they are about to run
 * (the flush's key, `flush_key`: a plan found by its relative key was
 * built for views elsewhere; its step count; how many plans ran before);
 * a difference is an ND_ERR_STATE error on every rank naming the ranks
 * and their plans, instead of a hang in the first transfer that does not
 * match. */
nd_status nd_rank_check_plan(const nd_plan *plan, uint64_t flush_key, uint64_t plans_before, int32_t *finished);

/* nd_shutdown's part in that check (ND_CHECK_SPMD, more than one rank):
 * this rank offers "finished" where the others offer their plans, so that
 * a rank still waiting to compare a plan (one that recorded operations
 * after this one stopped: an error on this rank, a rank-dependent branch)
 * fails naming this rank instead of waiting for a plan that never comes.
 * *finished (the scheduler's rank_finished) set: a rank finished earlier,
 * nothing is exchanged. */
void nd_rank_check_finish(uint64_t plans_before, int32_t *finished);

#endif
