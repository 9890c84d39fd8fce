/* The pending graph: nodes in record order (a valid sequential order), their
 * refs in an arena that is reset at each flush. Recording an op costs one
 * arena allocation plus buffer bookkeeping. */
#ifndef ND_GRAPH_GRAPH_H
#define ND_GRAPH_GRAPH_H

#include <string.h>

#include "common/api_guard.h"
#include "common/arena.h"
#include "graph/array.h"
#include "graph/node.h"

typedef struct nd_graph {
    nd_node **nodes;
    uint32_t n_nodes, cap_nodes;
    /* Nodes found dead while other nodes came after them
     * (nd_graph_drop_dead): their references are released already and
     * nd_graph_compact takes them out before anything walks the graph. */
    uint32_t n_gone;
    /* Body calls that joined a loop call (nd_graph_merge_loop) since the
     * graph was last cleared: rounds pending that are no node, which the
     * runtime's early flushes count as nodes (the device work they stand
     * for). */
    uint32_t joined;
    nd_arena arena;
} nd_graph;

/* The kind of a node nd_graph_drop_dead took out of the middle of the
 * graph: no references, out NULL; gone from nodes[] at the next
 * nd_graph_compact. Never the newest node (those are popped). */
#define ND_NODE_GONE 0xFFu

void nd_graph_init(nd_graph *g);
void nd_graph_destroy(nd_graph *g); /* releases all pending refs */

/* Appends a node of `kind` with n_inputs zeroed refs and tail_bytes after
 * them (graph/node.h's nd_node_tail_bytes); sets index. NULL +
 * ND_ERR_OOM on failure. The caller fills the fields, then calls
 * nd_graph_set_input for each input and nd_graph_set_output. */
nd_node *nd_graph_add_node_slow(nd_graph *g, nd_node_kind kind, int n_inputs, uint32_t tail_bytes);
/* The arena had no memory for a node: NULL + ND_ERR_OOM. */
nd_node *nd_graph_oom(void);
static inline __attribute__((always_inline)) nd_node *
nd_graph_add_node(nd_graph *g, nd_node_kind kind, int n_inputs, uint32_t tail_bytes) {
    /* Inline while nodes[] has room (every op but one in thousands);
     * otherwise graph.c grows it. One arena block holds the node, its refs
     * and its tail side by side (nd_node_block_bytes). */
    if (__builtin_expect(g->n_nodes == g->cap_nodes, 0))
        return nd_graph_add_node_slow(g, kind, n_inputs, tail_bytes);
    nd_node *n = nd_arena_alloc(&g->arena, sizeof(nd_node) + (size_t)n_inputs * sizeof(nd_ref) + tail_bytes);
    if (__builtin_expect(!n, 0)) return nd_graph_oom();
    n->index = g->n_nodes;
    n->kind = (uint8_t)kind;
    n->n_inputs = (uint8_t)n_inputs;
    n->tail_bytes = tail_bytes;
    n->inputs = n_inputs ? (nd_ref *)(n + 1) : NULL;
    n->scope = nd_api_tls.scope; /* in padding: the node does not grow */
    g->nodes[g->n_nodes++] = n;
    return n;
}
/* nd_graph_add_node for a MAP of an elementwise op (op < ND_NUM_ELEMENTWISE_OPS:
 * no params, no `u` member, no tail), its block not zeroed first: the
 * caller sets op, dtype, cdtype, ndim, shape[0, ndim), label, each input
 * with nd_graph_set_input(_inline) or nd_graph_set_const_input (which
 * write every field of a ref that is read: shape and strides up to ndim,
 * not value when there is a buffer) and then nd_graph_set_output. What
 * stays unwritten (params, u, the extents past ndim) is read by nobody:
 * readers go up to ndim and look at u and params by kind and op.
 * Builds with assertions poison it (common/arena.h) so that the suites
 * prove it. The fill and its call were 63 of the ~750 instructions of
 * recording an op and freeing it. */
static inline __attribute__((always_inline)) nd_node *nd_graph_add_map_node(nd_graph *g, int n_inputs) {
    if (__builtin_expect(g->n_nodes == g->cap_nodes, 0))
        return nd_graph_add_node_slow(g, ND_NODE_MAP, n_inputs, 0);
    nd_node *n = nd_arena_alloc_raw(&g->arena, sizeof(nd_node) + (size_t)n_inputs * sizeof(nd_ref));
    if (__builtin_expect(!n, 0)) return nd_graph_oom();
    n->index = g->n_nodes;
    n->kind = ND_NODE_MAP;
    n->n_inputs = (uint8_t)n_inputs;
    n->n_params = 0;
    n->flags = 0;
    n->tail_bytes = 0;
    n->inputs = n_inputs ? (nd_ref *)(n + 1) : NULL;
    n->scope = nd_api_tls.scope;
    g->nodes[g->n_nodes++] = n;
    return n;
}
/* inputs[i] := view of array `a` (takes a buffer reference; records the
 * version read). For a weak scalar the ref is a constant. ndim/shape/strides
 * given explicitly so callers can pass a broadcast view. */
void nd_graph_set_input(nd_node *n, int i, const nd_array *a, int ndim, const int64_t *shape,
                        const int64_t *strides);
/* Its body, for the binary ops' inline recording (frontend/record_inline.h):
 * there LTO's inliner, past its growth limits, left it a call. */
/* Every field of input i but its shape and strides (the caller writes
 * those up to ndim: frontend/record_inline.h's fe_map2_same and
 * fe_map2_scalar, with the node's and the other input's in one loop). */
static inline __attribute__((always_inline)) nd_ref *nd_graph_set_input_head(nd_node *n, int i,
                                                                             const nd_array *a, int ndim) {
    nd_ref *r = &n->inputs[i];
    r->buf = a->buf;
    nd_buffer_ref(a->buf);
    r->version = a->buf->version;
    r->dtype = (uint8_t)a->dtype;
    r->ndim = (uint8_t)ndim;
    r->weak = 0;
    r->pad = 0;
    r->offset = a->offset;
    return r;
}
static inline __attribute__((always_inline)) void nd_graph_set_input_inline(
    nd_node *n, int i, const nd_array *a, int ndim, const int64_t *shape, const int64_t *strides) {
    nd_ref *r = nd_graph_set_input_head(n, i, a, ndim);
    for (int k = 0; k < ndim; k++) {
        r->shape[k] = shape[k];
        r->strides[k] = strides[k];
    }
}
/* A constant input of dtype `dtype` (value in that dtype's kind). */
void nd_graph_set_const_input(nd_node *n, int i, nd_dtype dtype, nd_scalar_bits value, int ndim,
                              const int64_t *shape);
/* Its every field but the shape and strides (the caller writes those up to
 * ndim, strides 0: frontend/record_inline.h's fe_map2_scalar). */
static inline __attribute__((always_inline)) nd_ref *nd_graph_set_const_input_head(
    nd_node *n, int i, nd_dtype dtype, nd_scalar_bits value, int ndim) {
    nd_ref *r = &n->inputs[i];
    r->buf = NULL;
    r->version = 0;
    r->dtype = (uint8_t)dtype;
    r->ndim = (uint8_t)ndim;
    r->weak = 0;
    r->pad = 0;
    r->offset = 0;
    r->value = value;
    return r;
}
/* n->out := b (takes a reference), registers n as b's next writer. n must
 * be g's last node. -1 when there is no host memory to record the write:
 * then n is removed from g (its input references released) and the caller
 * reports ND_ERR_OOM. */
int nd_graph_set_output_slow(nd_graph *g, nd_node *n, nd_buffer *b);
static inline __attribute__((always_inline)) int nd_graph_set_output(nd_graph *g, nd_node *n, nd_buffer *b) {
    /* Inline while b's writer list has room (its first two writers are in
     * the buffer itself); graph.c grows it. Always: in the binary ops'
     * larger function LTO left it a call. */
    if (__builtin_expect(b->n_writers == b->cap_writers, 0)) return nd_graph_set_output_slow(g, n, b);
    b->writers[b->n_writers++] = n->index;
    n->out = b;
    b->refs++;
    /* Version 0 is the buffer as created; every write makes the next one
     * (nd_buffer_add_writer). */
    n->out_version = ++b->version;
    return 0;
}

/* Removes g's last node, which set_output made the last writer of its
 * buffer: the write is undone and its references released (a user kernel
 * call whose later outputs could not be recorded takes back the earlier). */
void nd_graph_drop_last(nd_graph *g);

/* Drops the newest pending nodes while they are dead: elementwise maps
 * whose buffer nothing else references (no handle sees the value, no
 * pending node reads it). Called when a handle goes, so a value freed
 * right after it was recorded (nd_free(nd_add(a, b)), the last
 * temporaries of a scope) leaves the graph at once, its node memory
 * reused, instead of being walked, hashed and dropped by the next flush
 * (which would drop it too: dead-node removal finds the same nodes).
 * Returns how many went. */
uint32_t nd_graph_drop_dead_tail(nd_graph *g);

/* The last handle of buffer x is going (x->handles is still 1). When x is
 * the result of the next-to-newest node P, a call of a traced body, and
 * the newest node N calls the same body with x as one input (the whole of
 * it, read once), its other inputs P's very refs, the body's result of the
 * carried input's dtype and shape: N joins P, which then applies the body
 * one more time and writes N's buffer (node.h's loop call); x is written
 * by nothing. `x = f(x)` in a loop (nd_body_call, or a replayed scope,
 * then nd_free of the old x) thus stays one node. Returns 1 when N
 * joined. */
int nd_graph_merge_loop(nd_graph *g, nd_buffer *x);

/* Body call p, the newest or next-to-newest node, applies its body once
 * more, its result carried into input `carry` (node.h's loop call): the
 * round that joined it is counted for the early flushes. */
static inline void nd_graph_loop_round(nd_graph *g, nd_node *p, int carry) {
    if (!p->n_params) {
        p->n_params = 1;
        p->params[0].i = 2;
        p->u.body.carry = (uint32_t)carry;
    } else {
        p->params[0].i++;
    }
    g->joined++;
}

/* b's last handle went: when the node that writes b's only pending
 * version is an elementwise map that nothing else references (no handle,
 * no pending reader), it is dead wherever it is in the graph. Its
 * references go now (the buffer returns to its free list while it is
 * hot in the cache) and it is marked ND_NODE_GONE; an input that only it
 * read goes the same way, and the newest nodes are popped as in
 * nd_graph_drop_dead_tail. A loop that frees its results out of order
 * (record_cost's "left to the flush") no longer carries every dead node,
 * its refs and its buffer to the flush, which walked, hashed and released
 * them there, cold. Returns how many nodes went. */
uint32_t nd_graph_drop_dead(nd_graph *g, nd_buffer *b);

/* nd_graph_drop_dead, its common case inline: b's writer is the newest
 * node, an elementwise map of at most two distinct inputs none of which
 * it was the last reader of (nd_free(nd_add(a, b))). Anything else is the
 * general function's. As a call, the general function's prologue, stack
 * and loop were 124 of the ~840 instructions of recording an op and
 * freeing it. */
static inline uint32_t nd_graph_drop_dead_fast(nd_graph *g, nd_buffer *b) {
    if (b->refs != 1 || b->n_writers != 1 || nd_buffer_visible(b)) return 0;
    nd_node *n = g->nodes[b->writers[0]];
    /* The general function: an older node (marked gone, compacted later;
     * tested first, so that a result freed out of order pays little
     * here), a gone node below it to pop too, more inputs. */
    if (__builtin_expect(n->index + 1 != g->n_nodes || g->n_gone || n->n_inputs > 2, 0))
        return nd_graph_drop_dead(g, b);
    if (n->kind != ND_NODE_MAP || n->out != b) return 0;
    nd_buffer *in0 = n->n_inputs > 0 ? n->inputs[0].buf : NULL;
    nd_buffer *in1 = n->n_inputs > 1 ? n->inputs[1].buf : NULL;
    /* ... and one input twice (its references go one at a time there),
     * an input whose writer dies with this reader (refs: this node's and
     * its writer's), a body call (its body reference goes there). */
    if (__builtin_expect(n->op == ND_BODY_MAP_OP || (in0 && in0 == in1) || (in0 && in0->refs == 2 && in0->n_writers == 1) ||
                             (in1 && in1->refs == 2 && in1->n_writers == 1),
                         0))
        return nd_graph_drop_dead(g, b);
    nd_buffer_unref(in0);
    nd_buffer_unref(in1);
    b->n_writers = 0;
    b->version--;
    g->n_nodes--;
    nd_arena_pop(&g->arena, n, nd_node_block_bytes(n));
    /* The last reference: b is freed, inline (nd_buffer_free as a call
     * cost 9 more instructions). */
    b->refs--;
    nd_buffer_free_inline(b);
    /* The node below may be dead too (a chain the general function left,
     * deeper than its stack): it looks, as it does after each drop. */
    if (g->n_nodes > 0) {
        const nd_node *t = g->nodes[g->n_nodes - 1];
        if (t->kind == ND_NODE_MAP && t->out->refs == 1) return 1 + nd_graph_drop_dead(g, NULL);
    }
    return 1;
}

/* Takes the ND_NODE_GONE nodes out of nodes[], renumbering the rest (and
 * their buffers' writer lists). Every pass over the graph (flush, read
 * split, dumps) starts with it; free when nothing went. */
void nd_graph_compact_gone(nd_graph *g);
static inline void nd_graph_compact(nd_graph *g) {
    if (g->n_gone) nd_graph_compact_gone(g);
}

/* Drops every pending node: releases the buffers' node references and the
 * writer lists, resets the arena. Used after a flush has run the plan. */
void nd_graph_clear(nd_graph *g);

/* Liveness: marks live[i] = 1 for nodes whose effect some handle can reach
 * (directly or through a live consumer). Returns the number of live nodes. */
uint32_t nd_graph_liveness(const nd_graph *g, uint8_t *live);

#endif
