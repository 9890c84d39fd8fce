/* Values that several kernels would compute again: written once instead.
 *
 * A value computed inside its consumers (inlined) is computed once per
 * kernel that reads it. Kernels that merge (siblings over one iteration
 * space) share it through CSE; a library call's or user kernel's operand
 * is written to memory by a kernel of its own, so a normalised z read by
 * z @ w1, z @ w2 and z.T @ z was computed, and written, four times. Such a
 * value goes to memory once when a library call or user kernel reads it
 * (directly or through other inlined values) and some other kernel reads
 * it too: the operand's own kernel writes memory anyway, so this costs no
 * extra traffic and saves the repeated work.
 *
 * A value shared by k kernels that are neither library operands nor able to
 * merge (reductions, kernels over other iteration spaces) is a trade: k
 * times its body and its inputs' reads, against one body, one write and k
 * reads of the value; with inputs about the value's size, writing it once
 * wins when (k - 1) * body > 2 * value bytes. Bodies are weighed in
 * transcendental calls (an approximate op or a random draw 8, any other op
 * 1), and what 2 * 4 bytes cost depends on the machine: about two calls'
 * time on a CPU core (vectorised, ~1-2 ns; its memory ~10 GB/s per core),
 * about twenty on an H100 (3.35 TB/s against 67 TFLOP/s). Elementwise
 * kernels over one space count as one: consecutive ones merge and share the
 * value by CSE (Black-Scholes' call and put). */
#include "scheduler/shared_values.h"

#include <stdlib.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/ops.h"
#include "common/ufunc_loop.h"

typedef struct {
    const nd_graph *g;
    const uint8_t *inl;
    uint32_t *seen, stamp;
    uint32_t *stack;
    uint8_t *uses;   /* kernels computing the node, saturating at 3 */
    uint8_t *later;  /* one of them is a later flush's (a recipe read later) */
    uint8_t *by_lib; /* one of them is an operand's kernel */
    uint64_t *first; /* the key of the first kernel counted */
} counter;

/* Keys of kernels: elementwise ones over one iteration space share one
 * (they may merge); every other kernel has its own. */
static uint64_t space_key(int ndim, const int64_t *shape) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)ndim;
    for (int k = 0; k < ndim; k++) h = (h ^ (uint64_t)shape[k]) * 0x100000001B3ull;
    return h | (1ull << 63);
}
static uint64_t own_key(uint32_t node, int operand) { return (uint64_t)node * 512u + (uint64_t)operand + 1u; }

/* The pending writer of the version r reads when it is computed inline,
 * else -1. */
static int64_t inlined_writer(const uint8_t *inl, const nd_ref *r) {
    int64_t w = r->buf ? nd_buffer_writer_of(r->buf, r->version) : -1;
    return w >= 0 && inl[w] ? w : -1;
}

static void count_use(counter *C, uint32_t p, uint64_t key, int lib) {
    if (C->uses[p] == 0) C->first[p] = key;
    if (C->uses[p] == 0 || (C->uses[p] < 3 && C->first[p] != key)) C->uses[p]++;
    C->by_lib[p] |= (uint8_t)lib;
}

/* Counts one kernel (key) for every inlined node reachable from c's inputs
 * first..last (one kernel: a node reached twice counts once). */
static void count_kernel(counter *C, const nd_node *c, int first, int last, uint64_t key, int lib) {
    uint32_t top = 0, stamp = ++C->stamp;
    for (int k = first; k <= last; k++) {
        int64_t w = inlined_writer(C->inl, &c->inputs[k]);
        if (w < 0 || C->seen[w] == stamp) continue;
        C->seen[w] = stamp;
        C->stack[top++] = (uint32_t)w;
    }
    while (top > 0) {
        uint32_t p = C->stack[--top];
        count_use(C, p, key, lib);
        const nd_node *pn = C->g->nodes[p];
        for (int k = 0; k < pn->n_inputs; k++) {
            int64_t w = inlined_writer(C->inl, &pn->inputs[k]);
            if (w < 0 || C->seen[w] == stamp) continue;
            C->seen[w] = stamp;
            C->stack[top++] = (uint32_t)w;
        }
    }
}

/* Transcendental calls per element of node p's value computed inline: p
 * and every inlined value it reads (once each), stopping at `cap`. */
static int32_t body_weight(counter *C, uint32_t p, int32_t cap) {
    uint32_t top = 0, stamp = ++C->stamp;
    int32_t w = 0;
    C->seen[p] = stamp;
    C->stack[top++] = p;
    while (top > 0 && w < cap) {
        const nd_node *q = C->g->nodes[C->stack[--top]];
        if (q->kind == ND_NODE_RANDOM) w += 8;
        else if (nd_node_is_body(q)) {
            /* a loop call computes its body count times */
            const int64_t cw = (int64_t)q->u.body.body->calls * nd_node_body_count(q);
            w += cw > cap ? cap : (int32_t)cw;
        }
        else if (q->kind == ND_NODE_MAP) w += q->op == ND_UFUNC_MAP_OP || q->op == ND_GATHER_MAP_OP || nd_op_ulps((nd_op)q->op) > 0 ? 8 : 1;
        for (int k = 0; k < q->n_inputs; k++) {
            int64_t v = inlined_writer(C->inl, &q->inputs[k]);
            if (v < 0 || C->seen[v] == stamp) continue;
            C->seen[v] = stamp;
            C->stack[top++] = (uint32_t)v;
        }
    }
    return w;
}

int nd_materialise_shared_operands(const nd_graph *g, const uint8_t *live, uint8_t *inl, int device,
                                   uint8_t *degraded) {
    uint32_t n = g->n_nodes;
    counter C = {g,    inl, nd_calloc(n + 1, sizeof(uint32_t)), 0, nd_malloc(sizeof(uint32_t) * (n + 1)),
                 nd_calloc(n + 1, 1), nd_calloc(n + 1, 1), nd_calloc(n + 1, 1),
                 nd_malloc(sizeof(uint64_t) * (n + 1))};
    /* Weight of 2 * 4 bytes written and read, in transcendental calls (x8). */
    const int32_t trade = device ? 8 * 20 : 8 * 2;
    int changed = 0;
    if (!C.seen || !C.stack || !C.uses || !C.later || !C.by_lib || !C.first) {
        *degraded = 1; /* a missed saving */
        goto done;
    }
    /* A recipe a read's flush leaves pending for a node that stays
     * (graph/read_split.h) runs again in that node's flush, if it runs:
     * a reason to write a value an operand kernel writes anyway, not to
     * pay for a write. */
    for (uint32_t i = 0; i < n; i++)
        if (inl[i] && (g->nodes[i]->flags & ND_NODE_READ_LATER)) {
            count_use(&C, i, UINT64_MAX - i, 0);
            C.later[i] = 1;
        }
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *c = g->nodes[i];
        if (!live[i] || inl[i] || c->n_inputs == 0) continue;
        /* A library call or user kernel: one operand kernel per input. */
        if (c->kind == ND_NODE_MATMUL || c->kind == ND_NODE_USER)
            for (int k = 0; k < c->n_inputs; k++) count_kernel(&C, c, k, k, own_key(i, k), 1);
        else if (c->kind == ND_NODE_REDUCE)
            count_kernel(&C, c, 0, c->n_inputs - 1, own_key(i, 0), 0);
        else
            count_kernel(&C, c, 0, c->n_inputs - 1, space_key(c->ndim, c->shape), 0);
    }
    /* The latest shared value first: the values it reads are computed in
     * its kernel once it has one, so they are left for the next round
     * (decide_inlining asks again until nothing changes). */
    uint8_t *taken = C.by_lib; /* reused below: bit 2 = covered this round */
    for (uint32_t p = n; p-- > 0;) {
        if (!inl[p] || (taken[p] & 2) || C.uses[p] < 2) continue;
        const nd_node *pn = g->nodes[p];
        const char *label = pn->label ? pn->label : "?";
        if (C.by_lib[p] & 1) {
            nd_logf(3, "node %u (%s, %d-d %s) feeds several kernels, one a library call's or user kernel's "
                       "operand: written to memory once instead of computed in each",
                    p, label, pn->ndim, nd_dtype_name((nd_dtype)pn->dtype));
        } else {
            int k = C.uses[p] - C.later[p];
            if (k < 2) continue;
            int32_t need = (trade + k - 2) / (k - 1); /* (k - 1) * body > trade */
            int32_t w = body_weight(&C, p, need + 1);
            if (w <= need) continue;
            nd_logf(3, "node %u (%s, %d-d %s) feeds %s%d kernels that cannot share it; computing it in each "
                       "costs more than writing it once and reading it (its body weighs over %d, 8 per "
                       "transcendental call; the trade on a %s: %d): written to memory once",
                    p, label, pn->ndim, nd_dtype_name((nd_dtype)pn->dtype), k >= 3 ? "at least " : "", k, need,
                    device ? "device" : "CPU", trade);
        }
        inl[p] = 0;
        changed = 1;
        uint32_t top = 0;
        C.stack[top++] = p;
        while (top > 0) {
            const nd_node *q = g->nodes[C.stack[--top]];
            for (int k = 0; k < q->n_inputs; k++) {
                int64_t w = inlined_writer(inl, &q->inputs[k]);
                if (w < 0 || (taken[w] & 2)) continue;
                taken[w] |= 2;
                C.stack[top++] = (uint32_t)w;
            }
        }
    }
done:
    free(C.seen);
    free(C.stack);
    free(C.uses);
    free(C.later);
    free(C.by_lib);
    free(C.first);
    return changed;
}
