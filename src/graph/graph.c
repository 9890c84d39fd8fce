#include "graph/graph.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#include "common/api_guard.h"
#include "common/error.h"
#include "common/user_kernel.h"

void nd_graph_init(nd_graph *g) { memset(g, 0, sizeof *g); }

void nd_graph_destroy(nd_graph *g) {
    nd_graph_clear(g);
    free(g->nodes);
    nd_arena_destroy(&g->arena);
    memset(g, 0, sizeof *g);
}

/* nodes[] full: grow it, then the inline path has room. */
nd_node *nd_graph_add_node_slow(nd_graph *g, nd_node_kind kind, int n_inputs, uint32_t tail_bytes) {
    uint32_t cap = g->cap_nodes ? g->cap_nodes * 2 : 1024;
    nd_node **nodes = nd_realloc(g->nodes, cap * sizeof *nodes);
    if (!nodes) return nd_graph_oom();
    g->nodes = nodes;
    g->cap_nodes = cap;
    return nd_graph_add_node(g, kind, n_inputs, tail_bytes);
}

nd_node *nd_graph_oom(void) {
    nd_error_set(ND_ERR_OOM, "out of host memory while recording an operation");
    return NULL;
}

void nd_graph_set_input(nd_node *n, int i, const nd_array *a, int ndim, const int64_t *shape,
                        const int64_t *strides) {
    nd_graph_set_input_inline(n, i, a, ndim, shape, strides);
}

void nd_graph_set_const_input(nd_node *n, int i, nd_dtype dtype, nd_scalar_bits value, int ndim,
                              const int64_t *shape) {
    nd_ref *r = nd_graph_set_const_input_head(n, i, dtype, value, ndim);
    /* Every field written: the node's block may not be zeroed
     * (nd_graph_add_map_node). */
    for (int k = 0; k < ndim; k++) {
        r->shape[k] = shape[k];
        r->strides[k] = 0;
    }
}

int nd_graph_set_output_slow(nd_graph *g, nd_node *n, nd_buffer *b) {
    uint32_t v = nd_buffer_add_writer(b, n->index);
    if (v == UINT32_MAX) {
        /* No memory to record the write: the node goes, as if never added
         * (it is the last one), and the caller reports the error. */
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k].buf) nd_buffer_unref(n->inputs[k].buf);
        g->n_nodes--;
        return -1;
    }
    n->out = b;
    nd_buffer_ref(b);
    n->out_version = v;
    return 0;
}

void nd_graph_drop_last(nd_graph *g) {
    nd_node *n = g->nodes[--g->n_nodes];
    nd_buffer *b = n->out;
    b->n_writers--;
    b->version--;
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k].buf) nd_buffer_unref(n->inputs[k].buf);
    nd_buffer_unref(b);
    nd_node_release_extras(n);
}

/* The node writing b when it is dead: an elementwise map, b's only
 * pending writer, and b referenced by nothing else (refs 1 is the node's
 * own: no handle, no pending reader). */
static nd_node *dead_writer(const nd_graph *g, const nd_buffer *b) {
    if (b->refs != 1 || b->n_writers != 1 || nd_buffer_visible(b)) return NULL;
    nd_node *n = g->nodes[b->writers[0]];
    return n->kind == ND_NODE_MAP && n->out == b ? n : NULL;
}

/* Not inlined into a handle's release (link-time optimisation did): its
 * stack of 32 buffers and six saved registers were paid by every release,
 * and most releases (a scope's end) never call it. */
__attribute__((noinline)) uint32_t nd_graph_drop_dead(nd_graph *g, nd_buffer *b) {
    /* Buffers whose writer may be dead: b, then the inputs a dropped node
     * was the last reader of. A chain deeper than the stack is left to
     * the flush, which drops it too. */
    enum { DEPTH = 32 };
    nd_buffer *stack[DEPTH];
    int top = 0;
    uint32_t dropped = 0;
    if (b) stack[top++] = b;
    for (;;) {
        while (top > 0) {
            nd_buffer *c = stack[--top];
            nd_node *n = dead_writer(g, c);
            if (!n) continue;
            for (int k = 0; k < n->n_inputs; k++) {
                nd_buffer *in = n->inputs[k].buf;
                if (!in) continue;
                n->inputs[k].buf = NULL;
                /* This reference and its writer's: the writer may be dead now. */
                const int last_reader = in->refs == 2 && in->n_writers == 1;
                nd_buffer_unref(in);
                if (last_reader && top < DEPTH) stack[top++] = in;
            }
            c->n_writers = 0;
            c->version--;
            nd_buffer_unref(c); /* the last reference: c is freed */
            nd_node_release_extras(n);
            dropped++;
            if (n->index + 1 == g->n_nodes) {
                /* The newest node: its slot and memory are reused at once. */
                g->n_nodes--;
                nd_arena_pop(&g->arena, n, nd_node_block_bytes(n));
                continue;
            }
            n->out = NULL;
            n->kind = ND_NODE_GONE;
            g->n_gone++;
        }
        /* The newest nodes: a gone one leaves (counted when it went), a
         * dead one goes as above. */
        while (g->n_nodes > 0 && g->nodes[g->n_nodes - 1]->kind == ND_NODE_GONE) {
            nd_node *n = g->nodes[--g->n_nodes];
            g->n_gone--;
            nd_arena_pop(&g->arena, n, nd_node_block_bytes(n));
        }
        if (g->n_nodes == 0) break;
        nd_node *t = g->nodes[g->n_nodes - 1];
        if (t->kind != ND_NODE_MAP || dead_writer(g, t->out) != t) break;
        stack[top++] = t->out;
    }
    return dropped;
}

uint32_t nd_graph_drop_dead_tail(nd_graph *g) { return nd_graph_drop_dead(g, NULL); }

void nd_graph_compact_gone(nd_graph *g) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        nd_node *n = g->nodes[i];
        if (n->kind == ND_NODE_GONE) continue;
        if (m != i) {
            /* Its buffer names its pending writers by index. */
            nd_buffer *b = n->out;
            b->writers[n->out_version - (b->version - b->n_writers + 1)] = m;
            n->index = m;
            g->nodes[m] = n;
        }
        m++;
    }
    g->n_nodes = m;
    g->n_gone = 0;
}

void nd_graph_clear(nd_graph *g) {
    /* One pass: a buffer is freed only once every node that refers to it
     * has let go, so each node's out is still alive when its writers are
     * cleared (a flush of thousands of nodes walks them once, not twice). */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        nd_node *n = g->nodes[i];
        if (n->kind == ND_NODE_GONE) continue; /* released when it went */
        nd_buffer_clear_writers(n->out);
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k].buf) nd_buffer_unref(n->inputs[k].buf);
        nd_buffer_unref(n->out);
        nd_node_release_extras(n);
    }
    g->n_nodes = 0;
    g->n_gone = 0;
    g->joined = 0;
    nd_arena_reset(&g->arena);
}

/* Whether refs a and b read the same elements of the same version (or are
 * the same constant). */
static int same_ref(const nd_ref *a, const nd_ref *b) {
    if (a->buf != b->buf || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    if (!a->buf) return a->value.u == b->value.u;
    if (a->version != b->version || a->offset != b->offset) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k]) return 0;
    return 1;
}

int nd_graph_merge_loop(nd_graph *g, nd_buffer *x) {
    /* x's references: its last handle, P's write and N's read */
    if (g->n_nodes < 2 || x->refs != 3 || x->n_writers != 1 || x->handles != 1 || x->borrow) return 0;
    nd_node *p = g->nodes[g->n_nodes - 2], *n = g->nodes[g->n_nodes - 1];
    if (!nd_node_is_body(p) || !nd_node_is_body(n) || p->u.body.body != n->u.body.body || p->out != x ||
        p->out_version != x->version || n->n_params != 0 || p->flags || n->flags || p->scope != n->scope)
        return 0;
    nd_buffer *y = n->out;
    if (y->n_writers != 1 || y->writers[0] != n->index) return 0;
    int carry = -1;
    for (int k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k].buf != x) continue;
        if (carry >= 0) return 0; /* x read twice: f(x, x) is no loop of one carried value */
        carry = k;
    }
    const nd_body *b = n->u.body.body;
    if (carry < 0 || (p->n_params && (int)p->u.body.carry != carry) || !nd_body_carries(b, carry)) return 0;
    /* the carried ref is the whole of P's result as P wrote it */
    const nd_ref *c = &n->inputs[carry];
    int64_t st[ND_MAX_DIMS];
    nd_contiguous_strides(n->ndim, n->shape, st);
    if (c->version != p->out_version || c->offset != 0 || c->dtype != p->dtype || p->ndim != n->ndim) return 0;
    for (int d = 0; d < n->ndim; d++)
        if (p->shape[d] != n->shape[d] || (n->shape[d] != 1 && c->strides[d] != st[d])) return 0;
    for (int k = 0; k < n->n_inputs; k++)
        if (k != carry && !same_ref(&p->inputs[k], &n->inputs[k])) return 0;
    /* N's reads go (its other inputs are P's too) */
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k].buf) nd_buffer_unref(n->inputs[k].buf);
    /* x is written by nothing now: its version goes back, P's reference goes */
    x->n_writers = 0;
    x->version--;
    nd_buffer_unref(x);
    /* P writes y, as N did */
    p->out = y;
    p->out_version = n->out_version;
    y->writers[0] = p->index;
    nd_graph_loop_round(g, p, carry);
    nd_node_release_extras(n);
    g->n_nodes--;
    nd_arena_pop(&g->arena, n, nd_node_block_bytes(n));
    return 1;
}

const char *nd_node_kind_label(nd_node_kind k) {
    static const char *names[ND_NUM_NODE_KINDS] = {"full", "arange", "random", "map",
                                                   "reduce", "matmul", "store", "user kernel"};
    return (unsigned)k < ND_NUM_NODE_KINDS ? names[k] : "?";
}
