/* Rank r's part in a partitioned plan under mpirun (executor_ranks.h). */
#include "scheduler/executor_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/dtype.h"
#include "common/error.h"
#include "dist/dist.h"
#include "scheduler/partition.h" /* ND_MAX_SPLIT: at most that many ranks */

int32_t nd_rank_partial(const nd_plan *plan, const nd_step *st, size_t *offset, size_t *bytes) {
    if (st->kind != ND_STEP_KERNEL || st->part != ND_PART_KERNEL) return -1;
    const nd_kernel *k = st->kernel;
    if (!k->has_reduce || !(k->reduce.axes & 1u)) return -1;
    int32_t slot = st->slots[k->reduce.out.slot];
    const nd_plan_slot *s = &plan->slots[slot];
    if (s->role != ND_SLOT_TEMP || !s->split_temp || s->device != 0) return -1;
    int64_t out_n = 1;
    for (int d = 0; d < k->ndim; d++)
        if (!(k->reduce.axes & (1u << d))) out_n *= k->shape[d];
    size_t item = nd_dtype_size((nd_dtype)k->reduce.out_dtype);
    /* the partial's place in its slot: the IR's offset from the address
     * the step binds (kernel_rebase.h) */
    int64_t shift = st->slot_byte_offset ? st->slot_byte_offset[k->reduce.out.slot] : 0;
    *offset = (size_t)(k->reduce.out.offset * (int64_t)item + shift);
    *bytes = (size_t)out_n * item;
    return slot;
}

int nd_rank_makes_partial(const nd_plan *plan, const nd_step *st) {
    size_t off, bytes;
    return nd_rank_partial(plan, st, &off, &bytes) >= 0;
}

nd_rank_role nd_rank_role_of(const nd_plan *plan, const nd_step *st, int32_t rank) {
    int32_t d = nd_rank_of_step(st);
    switch (st->part) {
    case ND_PART_KERNEL: /* a partial's owner runs it; the others receive the chunk */
        return d == rank || nd_rank_makes_partial(plan, st) ? ND_RANK_RUN : ND_RANK_SKIP;
    case ND_PART_COMBINE: return ND_RANK_RUN; /* every rank folds the same partials */
    case ND_PART_SCATTER:
    case ND_PART_REPLICA: return d == rank ? ND_RANK_RUN : ND_RANK_SKIP; /* whole arrays are on every rank */
    case ND_PART_HALO:
    case ND_PART_RING: /* a block of a matmul's B from its owner's piece */
        if (d == rank) return ND_RANK_RECV;
        return nd_rank_of_slot(plan, st->copy.src_slot) == rank ? ND_RANK_SEND : ND_RANK_SKIP;
    case ND_PART_GATHER: return ND_RANK_GATHER;
    default: return ND_RANK_RUN;
    }
}

/* One transfer: a send, a receive, or a broadcast from `peer` (the
 * link's ops, backend.h). */
typedef enum { XFER_SEND = ND_RANK_LINK_SEND, XFER_RECV = ND_RANK_LINK_RECV, XFER_BCAST = ND_RANK_LINK_BCAST } xfer_kind;

static nd_status xfer_plain(xfer_kind kind, void *buf, size_t bytes, int32_t peer) {
    switch (kind) {
    case XFER_SEND: return nd_dist_send(buf, bytes, peer);
    case XFER_RECV: return nd_dist_recv(buf, bytes, peer);
    default: return nd_dist_bcast(buf, bytes, peer);
    }
}

int nd_rank_over_link(const nd_rank_io *io, int memory, int far_memory, size_t bytes) {
    return io->link && bytes > 0 &&
           (io->be->rank_link_host || (memory != ND_MEMORY_HOST && far_memory != ND_MEMORY_HOST));
}

/* Over the link; mem NULL takes part without memory (rank_xfer's zeros
 * and sink). The plan waits for it before the ranks agree. */
static nd_status xfer_link(const nd_rank_io *io, xfer_kind kind, void *mem, int memory, size_t bytes, int32_t peer) {
    nd_status st = io->be->rank_xfer(io->be, (int)kind | (io->side ? ND_RANK_LINK_SIDE : 0), mem, memory, bytes, peer);
    if (io->linked) *io->linked = 1;
    if (io->stats && st == ND_OK && mem) io->stats->rank_bytes_nccl += bytes;
    return st;
}

/* `bytes` at `mem`, in memory `memory` (the other end's: `far_memory`):
 * read by a send or a broadcast's root, written by a receive or a
 * broadcast elsewhere (nd_rank_io says when over the link, when through a
 * host buffer). Whatever fails here, the peers wait in the transfer, so
 * it is made all the same (a failed copy out sends zeros); the flush then
 * fails on every rank (nd_rank_agree). */
static nd_status xfer_mpi(const nd_rank_io *io, xfer_kind kind, void *mem, int memory, size_t bytes, int32_t peer) {
    if (bytes == 0 || (!io->force_staging && memory == ND_MEMORY_HOST)) return xfer_plain(kind, mem, bytes, peer);
    nd_backend *be = io->be;
    const int out = kind == XFER_SEND || (kind == XFER_BCAST && peer == io->rank);
    void *host = NULL;
    nd_status st = be->stage ? be->alloc(be, ND_MEMORY_HOST, bytes, &host)
                             : nd_error_set(ND_ERR_UNSUPPORTED, "nd_sync: the %s backend cannot copy memory %d "
                                            "to or from host buffers for MPI", be->name, memory);
    if (st != ND_OK) {
        host = NULL;
        void *scratch = nd_calloc(bytes, 1);
        if (scratch) (void)xfer_plain(kind, scratch, bytes, peer);
        free(scratch);
        return st;
    }
    if (out) {
        st = be->stage(be, host, mem, memory, bytes, 1);
        if (st != ND_OK) memset(host, 0, bytes);
    }
    nd_status st2 = xfer_plain(kind, host, bytes, peer);
    if (st == ND_OK) st = st2;
    if (!out && st == ND_OK) st = be->stage(be, host, mem, memory, bytes, 0);
    be->release(be, ND_MEMORY_HOST, host, bytes);
    if (io->stats && st == ND_OK) io->stats->rank_bytes_staged += bytes;
    return st;
}

static nd_status xfer(const nd_rank_io *io, xfer_kind kind, void *mem, int memory, int far_memory, size_t bytes,
                      int32_t peer) {
    if (nd_rank_over_link(io, memory, far_memory, bytes)) return xfer_link(io, kind, mem, memory, bytes, peer);
    /* Beside the link the stream no longer stops at every transfer (a
     * staged one does): host memory that MPI reads or writes in place
     * waits for the steps enqueued before it. */
    nd_status waited = ND_OK;
    if (io->link && memory == ND_MEMORY_HOST && bytes > 0 && io->be->rank_link_wait)
        waited = io->be->rank_link_wait(io->be);
    nd_status st = xfer_mpi(io, kind, mem, memory, bytes, peer);
    return waited != ND_OK ? waited : st;
}

nd_status nd_rank_move(const nd_rank_io *io, const nd_plan *plan, const nd_step *st, nd_rank_role role, void *dst,
                       const void *src) {
    const nd_copy_desc *c = &st->copy;
    switch (role) {
    case ND_RANK_SEND:
        return xfer(io, XFER_SEND, (void *)src, c->src_memory, c->dst_memory, c->bytes, nd_rank_of_step(st));
    case ND_RANK_RECV:
        return xfer(io, XFER_RECV, dst, c->dst_memory, c->src_memory, c->bytes, nd_rank_of_slot(plan, c->src_slot));
    case ND_RANK_GATHER:
        return xfer(io, XFER_BCAST, dst, c->dst_memory, c->dst_memory, c->bytes, nd_rank_of_step(st));
    default: return ND_OK;
    }
}

/* A transfer made without memory of this rank's: over the link from none
 * (the link's own blocks), else through host scratch (no staging). */
static nd_status xfer_idle(const nd_rank_io *io, xfer_kind kind, int memory, int far_memory, size_t bytes,
                           int32_t peer) {
    if (nd_rank_over_link(io, memory, far_memory, bytes)) return xfer_link(io, kind, NULL, memory, bytes, peer);
    void *scratch = nd_calloc(bytes ? bytes : 1, 1);
    if (!scratch)
        return nd_error_set(ND_ERR_OOM, "nd_sync: out of host memory for a transfer between MPI ranks");
    nd_status st = xfer_plain(kind, scratch, bytes, peer);
    free(scratch);
    return st;
}

nd_status nd_rank_transfer_idle(const nd_rank_io *io, const nd_plan *plan, const nd_step *st) {
    const int32_t rank = io->rank;
    nd_rank_role role = nd_rank_role_of(plan, st, rank);
    size_t off = 0, bytes = 0;
    int32_t partial = role == ND_RANK_RUN ? nd_rank_partial(plan, st, &off, &bytes) : -1;
    /* A partial lives in the plan's memory (under mpirun no backend splits
     * over memories of its own: executor.c's temp_memory). */
    int memory = plan->memory, far_memory = plan->memory;
    xfer_kind kind = XFER_BCAST;
    int32_t peer = nd_rank_of_step(st);
    if (role == ND_RANK_SEND || role == ND_RANK_RECV || role == ND_RANK_GATHER) {
        const nd_copy_desc *c = &st->copy;
        bytes = c->bytes;
        memory = role == ND_RANK_SEND ? c->src_memory : c->dst_memory;
        far_memory = role == ND_RANK_RECV ? c->src_memory : c->dst_memory;
        if (role == ND_RANK_SEND) kind = XFER_SEND;
        if (role == ND_RANK_RECV) kind = XFER_RECV, peer = nd_rank_of_slot(plan, c->src_slot);
    } else if (partial < 0) {
        return ND_OK; /* no transfer */
    }
    return xfer_idle(io, kind, memory, far_memory, bytes, peer);
}

nd_status nd_rank_bcast_idle(const nd_rank_io *io, int memory, size_t bytes, int32_t root) {
    return xfer_idle(io, XFER_BCAST, memory, memory, bytes, root);
}

nd_status nd_rank_link_wait(const nd_rank_io *io) {
    if (!io->link || !io->linked || !*io->linked) return ND_OK;
    *io->linked = 0;
    return io->be->rank_link_wait ? io->be->rank_link_wait(io->be) : ND_OK;
}

nd_status nd_rank_agree(nd_status mine, int32_t *failed_rank) {
    int32_t n = nd_dist_size(), me = nd_dist_rank();
    uint64_t all[ND_MAX_SPLIT], m = (uint64_t)mine; /* on the stack: no allocation to fail */
    if (nd_dist_allgather_u64(&m, 1, all) != ND_OK) return ND_OK;
    for (int32_t r = 0; r < n; r++)
        if (r != me && all[r] != ND_OK) {
            *failed_rank = r;
            return (nd_status)all[r];
        }
    return ND_OK;
}

nd_status nd_rank_bcast(const nd_rank_io *io, void *buf, int memory, size_t bytes, int32_t root) {
    return xfer(io, XFER_BCAST, buf, memory, memory, bytes, root);
}

/* A rank's offer at nd_shutdown in place of a plan (nd_rank_check_finish):
 * no plan has this key and this step count. */
#define RANK_FINISHED UINT64_MAX

static nd_status finished_error(int32_t gone, const nd_plan *plan) {
    return nd_error_set(ND_ERR_STATE, "nd_sync: ND_CHECK_SPMD: MPI rank %d finished (nd_shutdown) while this rank "
                        "(%d of %d) has plan %016llx to run: every rank must record the same operations (did rank "
                        "%d stop early, after an error?); no plan runs on this rank from now on", (int)gone,
                        (int)nd_dist_rank(), (int)nd_dist_size(), (unsigned long long)plan->key, (int)gone);
}

nd_status nd_rank_check_plan(const nd_plan *plan, uint64_t flush_key, uint64_t plans_before, int32_t *finished) {
    if (*finished) return finished_error(*finished - 1, plan);
    int32_t n = nd_dist_size(), me = nd_dist_rank();
    uint64_t mine[3] = {flush_key, (uint64_t)plan->n_steps, plans_before};
    uint64_t all[3 * ND_MAX_SPLIT]; /* on the stack: no allocation to fail on one rank only */
    nd_status st = nd_dist_allgather_u64(mine, 3, all);
    if (st != ND_OK) return st;
    for (int32_t r = 0; r < n; r++)
        if (all[3 * r] == RANK_FINISHED && all[3 * r + 1] == RANK_FINISHED) {
            *finished = r + 1; /* it takes part in no exchange again */
            return finished_error(r, plan);
        }
    int same = 1;
    for (int32_t r = 1; r < n; r++) same &= !memcmp(&all[3 * r], &all[0], sizeof mine);
    if (same) return ND_OK;
    /* Name every rank that differs from rank 0, with what each runs. */
    char text[600];
    size_t len = 0;
    for (int32_t r = 0; r < n && len < sizeof text - 80; r++) {
        if (r && !memcmp(&all[3 * r], &all[0], sizeof mine)) continue;
        len += (size_t)snprintf(text + len, sizeof text - len, "%srank %d: plan %016llx of %llu steps after %llu "
                                "plans", len ? "; " : "", (int)r, (unsigned long long)all[3 * r],
                                (unsigned long long)all[3 * r + 1], (unsigned long long)all[3 * r + 2]);
    }
    return nd_error_set(ND_ERR_STATE, "nd_sync: ND_CHECK_SPMD: the MPI ranks are about to run different plans "
                        "(this is rank %d of %d; %s): every rank must record the same operations on arrays "
                        "of the same shapes, in the same order (a rank-dependent branch or shape?)", (int)me,
                        (int)n, text);
}

void nd_rank_check_finish(uint64_t plans_before, int32_t *finished) {
    if (*finished) return;
    uint64_t mine[3] = {RANK_FINISHED, RANK_FINISHED, plans_before};
    uint64_t all[3 * ND_MAX_SPLIT];
    if (nd_dist_allgather_u64(mine, 3, all) != ND_OK) return;
    int32_t n = nd_dist_size();
    for (int32_t r = 0; r < n; r++)
        if (all[3 * r] != RANK_FINISHED)
            nd_logf(1, "nd_shutdown: ND_CHECK_SPMD: MPI rank %d was about to run plan %016llx when this rank (%d) "
                    "finished: it fails that plan and every later one", (int)r, (unsigned long long)all[3 * r],
                    (int)nd_dist_rank());
}
