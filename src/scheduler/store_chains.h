/* Chains of hazardous stores: successive region stores into one buffer whose
 * right-hand sides read the buffer's previous version through other index
 * maps (a recorded loop of in-place Jacobi sweeps). Instead of computing
 * every sweep into a temporary and copying it in (four passes over the
 * region per sweep), the versions of the chain alternate between the buffer
 * and one full-size temporary, so each sweep is one kernel reading one and
 * writing the other (store_chains.c says why this layout). Used by
 * plan_build.c. */
#ifndef ND_SCHEDULER_STORE_CHAINS_H
#define ND_SCHEDULER_STORE_CHAINS_H

#include "graph/graph.h"

/* Per node of the flush; -1 where nothing changes. */
typedef struct {
    int32_t *home;   /* plan slot holding the version the node writes
                        (-1: its own buffer); the kernel builder's
                        version_slot */
    int32_t *source; /* chain STOREs: slot their right-hand side reads the
                        buffer's previous version from */
    int32_t *fill;   /* first STORE of a chain: its temporary, which gets the
                        buffer's contents (nd_store_chain_fill_parts) just
                        before the store */
    int32_t *length; /* first STORE of a chain: the number of stores */
    int32_t *last;   /* first STORE of a chain: the node index of its last */
    int32_t *ready;  /* first STORE of a chain: 1 when its temporary is the
                        buffer's twin and already holds what the fill would
                        copy (no fill) */
    int rows;        /* the fill's parts walk whole rows (nd_chain_slots) */
} nd_store_chains;

/* Where a chain keeps its versions other than the buffer: a temporary of
 * `bytes`, or the twin of buffer u (graph/buffer.h), one slot per buffer
 * however many chains it has; -1 on failure. */
typedef struct {
    int32_t (*new_temp)(void *arg, size_t bytes);
    int32_t (*twin_slot)(void *arg, const nd_buffer *u);
    void *arg;
    int32_t memory; /* the plan's memory */
    int rows;       /* the plan is split in row blocks over devices
                       (partition.c): every part of a fill walks whole rows
                       of the buffer along its first axis, so that it splits
                       with the sweeps (store_chains.c) */
} nd_chain_slots;

/* One strided copy of the fill: the buffer's elements at offset +
 * sum_k i_k * strides[k] (0 <= i_k < shape[k]) go to the same places in the
 * temporary. */
typedef struct {
    int ndim;
    int64_t offset;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
} nd_chain_fill_part;

#define ND_CHAIN_FILL_MAX_PARTS (2 * ND_MAX_DIMS)

/* Whether node i is a live STORE next to another live STORE of the same
 * region in its buffer's write order: only those can form a chain, so only
 * those need the (costlier) hazard test. */
int nd_store_chain_candidate(const nd_graph *g, const uint8_t *live, uint32_t i);

/* Finds the chains among the STOREs with hazard[i] set (the right-hand side
 * reads the stored region through another map) and lays them out, taking
 * their slots from `slots`. A chain is two or more such stores, each
 * writing the version right after the previous one, over the identical
 * region. Reads the buffers' twins (what they hold and where, not their
 * contents). */
nd_status nd_store_chains_plan(const nd_graph *g, const uint8_t *hazard, const nd_chain_slots *slots,
                               nd_store_chains *out);
void nd_store_chains_free(nd_store_chains *c);

/* The copies that fill the temporary of the chain starting at `first`
 * (c->fill[first->index] >= 0), into parts[ND_CHAIN_FILL_MAX_PARTS]; returns
 * how many (0 when nothing needs copying: a ready twin). One copy of the
 * whole buffer, or up to 2 * ndim copies of the part outside the chain's
 * region (store_chains.c says when). Depends only on the chain's length,
 * the region's view, the buffer's size and dtype and its twin's state
 * (all in the plan-cache key). No errors. */
int nd_store_chain_fill_parts(const nd_store_chains *c, const nd_node *first, nd_chain_fill_part *parts);

#endif
