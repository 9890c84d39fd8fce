/* Dead-node removal: a node runs only if a handle can see its effect. */
#include "graph/graph.h"

#include <string.h>

uint32_t nd_graph_liveness(const nd_graph *g, uint8_t *live) {
    memset(live, 0, g->n_nodes);
    uint32_t count = 0;
    /* Reverse record order: every consumer is decided before its producers. */
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        const nd_node *n = g->nodes[i];
        /* The version a node makes is visible to handles when it is the
         * buffer's latest one; earlier versions matter only through readers. */
        if (!live[i] && nd_node_value_wanted(n)) live[i] = 1;
        /* The outputs of a user kernel call are one step: all run or none.
         * Met at its last output, every consumer of any output (all later
         * in record order) has already been decided. */
        if (n->kind == ND_NODE_USER && n->u.user.index + 1 == n->u.user.count) {
            uint32_t first = i + 1 - n->u.user.count;
            int any = 0;
            for (uint32_t m = first; m <= i; m++) {
                const nd_node *o = g->nodes[m];
                any |= live[m] || nd_node_value_wanted(o);
            }
            if (any)
                for (uint32_t m = first; m < i; m++) live[m] = 1;
            if (any) live[i] = 1;
        }
        /* A store keeps the earlier writers of its buffer alive: the region it
         * does not write still shows their values. */
        if (!live[i]) continue;
        count++;
        if (n->kind == ND_NODE_STORE) {
            int64_t w = nd_buffer_writer_of(n->out, n->out_version - 1);
            if (w >= 0) live[w] = 1;
        }
        for (int k = 0; k < n->n_inputs; k++) {
            const nd_ref *r = &n->inputs[k];
            if (!r->buf) continue;
            int64_t w = nd_buffer_writer_of(r->buf, r->version);
            if (w >= 0) live[w] = 1;
        }
    }
    return count;
}
