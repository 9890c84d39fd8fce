/* One pass over the pending graph that every flush makes, hit or miss: it
 * numbers the buffers in first-appearance order, gathers the scalar values
 * (kernel parameters) and computes the structural hash that keys the plan
 * cache. Everything a plan depends on is in the hash; nothing it does not
 * depend on (scalar values, addresses) is. A flush that misses makes a
 * second pass (nd_flush_walk_bases): the same hash with where each view
 * starts taken from the first view of its buffer (its base), and the
 * bases apart, so that a loop over a matrix's rows finds the plan of its
 * first row (nd_plan.offset_generic) with one pass more, not a plan; a
 * flush that hits pays nothing for it. */
#ifndef ND_SCHEDULER_FLUSH_WALK_H
#define ND_SCHEDULER_FLUSH_WALK_H

#include <stdint.h>

#include "backends/plan.h"
#include "graph/graph.h"

#define ND_NO_VIEW_BASE INT64_MIN

typedef struct {
    uint64_t key;
    nd_buffer **buffers; /* walk order */
    uint32_t n_buffers, cap_buffers;
    /* The bases pass (bases_valid: made since the walk): the key with
     * views' offsets from their buffer's base, and per buffer (walk order)
     * the offset in bytes of the first view of it (ND_NO_VIEW_BASE: none,
     * a value written whole; whether a buffer has views is in the key, so
     * flushes of one relative key have it at the same buffers). */
    uint64_t relative_key;
    /* The facts about each buffer that change a plan (visit_buffer), in
     * walk order: the bases pass numbers buffers only, so the relative key
     * starts from these (a flush whose result no handle holds writes
     * nothing; its plan must not serve one whose result is held). */
    uint64_t buffer_facts;
    int64_t *view_base;
    uint32_t cap_view_base;
    int bases_valid;
    nd_scalar_bits *params; /* walk order: per node its params, then consts */
    uint32_t n_params, cap_params;
    uint32_t *param_base; /* per node: index of its first parameter */
    uint32_t cap_nodes;
    /* Per RANDOM node (other nodes' entries are not set): the first node
     * of its run of RANDOM nodes, in graph order, with one seed and one
     * high word of the stream (a loop's draws after one nd_random_seed).
     * The run's draws read that node's seed parameter, so a kernel's draws
     * of one seed parameter have streams of one high word (kernel_ir.h's
     * ND_IR_ONE_HIGH_WORD). Whether a node continues the run is in the
     * key: a plan that relies on it serves only flushes where it holds. */
    uint32_t *rng_root;
    uint32_t cap_rng_root;
    uint64_t stamp; /* marks buffers numbered in this walk */
    /* Per node: its recording function ("nd_add"), which names a value
     * the executor could not compute (the graph is gone by then). */
    const char **labels;
    uint32_t cap_labels;
    /* Per node, when the program names things (common/names.h; else
     * NULL): what its value is called, "jacobi sweep/grid", or NULL. For
     * dumps, profiles, traces, NVTX ranges and messages. */
    const char **names;
    uint32_t cap_names;
} nd_flush_walk;

/* What node n's value is called: its named scope and its buffer's name
 * ("jacobi sweep/grid"), or NULL. */
const char *nd_node_name(const nd_node *n);
/* The name of what step st computes (its last node's), or NULL. */
const char *nd_flush_walk_step_name(const nd_flush_walk *w, const nd_step *st);

/* Fills w from g (reusing w's arrays). Returns ND_OK or ND_ERR_OOM. */
nd_status nd_flush_walk_run(nd_flush_walk *w, const nd_graph *g, uint64_t stamp);
/* The bases pass over the same g, after nd_flush_walk_run. */
nd_status nd_flush_walk_bases(nd_flush_walk *w, const nd_graph *g);
void nd_flush_walk_free(nd_flush_walk *w);

#endif
