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
 * extra traffic and saves the repeated work. Values shared only between
 * elementwise kernels and reductions stay inlined: on memory-bound kernels
 * reading the inputs twice is cheaper than writing and reading the value. */
#include "scheduler/shared_values.h"

#include <stdlib.h>

#include "common/alloc.h"
#include "common/error.h"

typedef struct {
    const nd_graph *g;
    const uint8_t *inl;
    uint32_t *seen, stamp;
    uint32_t *stack;
    uint8_t *uses;   /* kernels computing the node, saturating at 2 */
    uint8_t *by_lib; /* one of them is an operand's kernel */
} counter;

/* Counts one kernel for every inlined node reachable from c's inputs
 * first..last (one kernel: a node reached twice counts once). */
static void count_kernel(counter *C, const nd_node *c, int first, int last, int lib) {
    uint32_t top = 0, stamp = ++C->stamp;
    for (int k = first; k <= last; k++) {
        const nd_ref *r = &c->inputs[k];
        int64_t w = r->buf ? nd_buffer_writer_of(r->buf, r->version) : -1;
        if (w < 0 || !C->inl[w] || C->seen[w] == stamp) continue;
        C->seen[w] = stamp;
        C->stack[top++] = (uint32_t)w;
    }
    while (top > 0) {
        uint32_t p = C->stack[--top];
        if (C->uses[p] < 2) C->uses[p]++;
        C->by_lib[p] |= (uint8_t)lib;
        const nd_node *pn = C->g->nodes[p];
        for (int k = 0; k < pn->n_inputs; k++) {
            const nd_ref *r = &pn->inputs[k];
            int64_t w = r->buf ? nd_buffer_writer_of(r->buf, r->version) : -1;
            if (w < 0 || !C->inl[w] || C->seen[w] == stamp) continue;
            C->seen[w] = stamp;
            C->stack[top++] = (uint32_t)w;
        }
    }
}

int nd_materialise_shared_operands(const nd_graph *g, const uint8_t *live, uint8_t *inl) {
    uint32_t n = g->n_nodes;
    counter C = {g, inl, nd_calloc(n + 1, sizeof(uint32_t)), 0, nd_malloc(sizeof(uint32_t) * (n + 1)),
                 nd_calloc(n + 1, 1), nd_calloc(n + 1, 1)};
    int changed = 0;
    if (!C.seen || !C.stack || !C.uses || !C.by_lib) goto done; /* only a missed saving */
    int any_lib = 0;
    for (uint32_t i = 0; i < n && !any_lib; i++)
        any_lib = live[i] && !inl[i] &&
                  (g->nodes[i]->kind == ND_NODE_MATMUL || g->nodes[i]->kind == ND_NODE_USER);
    if (!any_lib) goto done;
    /* A recipe a read's flush leaves pending for a node that stays
     * (graph/read_split.h) runs again in that node's flush. */
    for (uint32_t i = 0; i < n; i++) C.uses[i] = inl[i] && (g->nodes[i]->flags & ND_NODE_READ_LATER);
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *c = g->nodes[i];
        if (!live[i] || inl[i] || c->n_inputs == 0) continue;
        /* A library call or user kernel: one operand kernel per input. */
        if (c->kind == ND_NODE_MATMUL || c->kind == ND_NODE_USER)
            for (int k = 0; k < c->n_inputs; k++) count_kernel(&C, c, k, k, 1);
        else
            count_kernel(&C, c, 0, c->n_inputs - 1, 0);
    }
    /* The latest shared value first: the values it reads are computed in
     * its kernel once it has one, so they are left for the next round
     * (decide_inlining asks again until nothing changes). */
    uint32_t stamp = ++C.stamp;
    for (uint32_t p = n; p-- > 0;) {
        if (!inl[p] || C.seen[p] == stamp || C.uses[p] < 2 || !C.by_lib[p]) continue;
        const nd_node *pn = g->nodes[p];
        nd_logf(3, "node %u (%s, %d-d %s) feeds several kernels, one a library call's or user kernel's "
                   "operand: written to memory once instead of computed in each",
                p, pn->label ? pn->label : "?", pn->ndim, nd_dtype_name((nd_dtype)pn->dtype));
        inl[p] = 0;
        changed = 1;
        uint32_t top = 0;
        C.stack[top++] = p;
        while (top > 0) {
            const nd_node *q = g->nodes[C.stack[--top]];
            for (int k = 0; k < q->n_inputs; k++) {
                const nd_ref *r = &q->inputs[k];
                int64_t w = r->buf ? nd_buffer_writer_of(r->buf, r->version) : -1;
                if (w < 0 || !inl[w] || C.seen[w] == stamp) continue;
                C.seen[w] = stamp;
                C.stack[top++] = (uint32_t)w;
            }
        }
    }
done:
    free(C.seen);
    free(C.stack);
    free(C.uses);
    free(C.by_lib);
    return changed;
}
