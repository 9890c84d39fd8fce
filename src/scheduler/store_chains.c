/* Chains of hazardous stores (store_chains.h).
 *
 * A chain S_1..S_m writes versions v_1..v_m of buffer U over one region R;
 * v_0 is U before it. Every S_k reads v_{k-1} through views that overlap R
 * (north, south, ... of a stencil), so it cannot write U in place.
 *
 * Layout: one temporary T of U's full size (every view of U reads T at the
 * same offsets and strides) and U itself hold the versions alternately,
 * ending in U: v_m in U, v_{m-1} in T, v_{m-2} in U, ... S_k reads v_{k-1}
 * where it lives and writes R of the other slot. Just before S_1, one kernel
 * copies all of U into T. Then before every S_k the slot it writes holds
 * v_{k-2} (v_0 for k <= 2), which equals v_k outside R: nothing in between
 * writes outside R, which is why every store of a chain must have the very
 * same region. Writing R makes it v_k in full. For even m, v_1 goes to T
 * and S_1 reads v_0 from U; for odd m, v_1 goes to U and S_1 reads v_0 from
 * the copy in T (that read is the `source` override).
 *
 * Anything else reading an intermediate v_k (another value, a reduction, a
 * matmul operand) reads it where it lives. Record order keeps that safe: a
 * node reading v_k is recorded before S_{k+1}, and one inlined into a later
 * kernel is refused by decide_inlining (v_k ends at S_{k+1}), so it runs
 * before S_{k+2} overwrites the slot. The plan depends only on the graph's
 * structure (regions, versions, which node wrote them), all of it in the
 * plan-cache key.
 *
 * Why this and not two temporaries A/B with the last store writing U: the
 * sweeps cost the same (read one slot, write R of the other: two passes),
 * but here the per-chain cost is one copy of U (read + write) instead of
 * filling two temporaries (one read, two writes), and the plan holds one
 * extra grid, not two (1 GiB for the 16384^2 float32 stencil). Copying only
 * the part outside R would be cheaper still, but the complement of a strided
 * region is no single view: several small kernels, whose launches cost more
 * than the copy on grids where launches dominate. A lone hazardous store
 * (m = 1) keeps the temporary-then-copy plan: the same traffic as the fill
 * plus one sweep, with a temporary only as large as the region. So does a
 * chain over a small part of a large buffer (m regions smaller than the
 * buffer): the fill would cost more than the copies it saves. */
#include "scheduler/store_chains.h"

#include <stdlib.h>
#include <string.h>

static int same_region(const nd_node *a, const nd_node *b) {
    if (a->kind != ND_NODE_STORE || b->kind != ND_NODE_STORE || a->out != b->out ||
        a->ndim != b->ndim || a->u.store.offset != b->u.store.offset)
        return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->u.store.strides[k] != b->u.store.strides[k]) return 0;
    return nd_shape_size(a->ndim, a->shape) > 0;
}

/* The store writing the version right after node i's, when it stores the
 * same region; -1 otherwise. */
static int64_t next_same_region(const nd_graph *g, uint32_t i) {
    const nd_node *n = g->nodes[i];
    uint32_t w = nd_buffer_next_write_after(n->out, n->out_version);
    return w != UINT32_MAX && same_region(n, g->nodes[w]) ? (int64_t)w : -1;
}

int nd_store_chain_candidate(const nd_graph *g, const uint8_t *live, uint32_t i) {
    const nd_node *n = g->nodes[i];
    if (!live[i] || n->kind != ND_NODE_STORE) return 0;
    int64_t next = next_same_region(g, i);
    int64_t prev = nd_buffer_writer_of(n->out, n->out_version - 1);
    return (next >= 0 && live[next]) || (prev >= 0 && live[prev] && same_region(g->nodes[prev], n));
}

/* The next store of i's chain, or -1. */
static int64_t chain_next(const nd_graph *g, const uint8_t *hazard, uint32_t i) {
    int64_t w = next_same_region(g, i);
    return w >= 0 && hazard[w] ? w : -1;
}

nd_status nd_store_chains_plan(const nd_graph *g, const uint8_t *hazard,
                               int32_t (*new_temp)(void *arg, size_t bytes), void *arg,
                               nd_store_chains *out) {
    uint32_t n = g->n_nodes;
    memset(out, 0, sizeof *out);
    out->home = malloc(sizeof(int32_t) * 3 * ((size_t)n + 1));
    if (!out->home) return ND_ERR_OOM;
    memset(out->home, 0xff, sizeof(int32_t) * 3 * ((size_t)n + 1));
    out->source = out->home + n + 1;
    out->fill = out->source + n + 1;
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *s = g->nodes[i];
        if (!hazard[i]) continue;
        int64_t prev = nd_buffer_writer_of(s->out, s->out_version - 1);
        if (prev >= 0 && hazard[prev] && chain_next(g, hazard, (uint32_t)prev) == (int64_t)i)
            continue; /* not the first store of its chain */
        uint32_t m = 1;
        for (int64_t j = chain_next(g, hazard, i); j >= 0; j = chain_next(g, hazard, (uint32_t)j)) m++;
        /* The fill copies the whole buffer: worth it when the sweeps' copies
         * it saves (one region each) add up to at least as much. */
        double region = (double)nd_shape_size(s->ndim, s->shape);
        if (m < 2 || (double)m * region < (double)(s->out->nbytes / nd_dtype_size(s->out->dtype)))
            continue;
        int32_t temp = new_temp(arg, s->out->nbytes);
        if (temp < 0) return ND_ERR_OOM;
        out->fill[i] = temp;
        uint32_t k = 1;
        for (int64_t j = i; j >= 0; j = chain_next(g, hazard, (uint32_t)j), k++) {
            int in_temp = (m - k) % 2 == 1;
            out->home[j] = in_temp ? temp : -1;
            out->source[j] = in_temp ? s->out->slot : temp;
        }
    }
    return ND_OK;
}

void nd_store_chains_free(nd_store_chains *c) {
    free(c->home);
    memset(c, 0, sizeof *c);
}
