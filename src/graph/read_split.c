/* A read's flush: which pending nodes it runs, which stay (read_split.h). */
#include "graph/read_split.h"

#include <assert.h>
#include <string.h>

#include "common/grow.h"
#include "common/user_kernel.h"

#define NEED ND_FATE_RUNS
#define READ_LATER 8u  /* scratch: a node that stays reads this one's value */
#define READ_BY_RUN 16u /* scratch: a node that only stays (will run) reads it */

/* Values whose recipe can stay pending: they write a fresh buffer whole and
 * depend on nothing but the versions they read (random draws are keyed by
 * the element's index, so a second run draws the same values). */
static int recipe_kind(const nd_node *n) {
    /* Not a loop call (node.h): its recipe is its rounds from the start,
     * and a loop that reads its value every few rounds (a convergence
     * check) would compute them all again at each read, and join the next
     * rounds onto them (graph.h, nd_graph_merge_loop): its value is
     * written, and the loop goes on from it. */
    if (nd_node_is_body(n) && nd_node_body_count(n) > 1) return 0;
    return n->kind == ND_NODE_FULL || n->kind == ND_NODE_ARANGE || n->kind == ND_NODE_RANDOM ||
           n->kind == ND_NODE_MAP;
}

/* The versions node n reads: its inputs, and for a store the version it
 * overwrites (the region it leaves keeps that version's values). Returns
 * 0 for a constant input. */
static int read_at(const nd_node *n, int k, const nd_buffer **b, uint32_t *v) {
    if (k < n->n_inputs) {
        *b = n->inputs[k].buf;
        *v = n->inputs[k].version;
        return *b != NULL;
    }
    *b = n->out;
    *v = n->out_version - 1;
    return 1;
}

static int n_reads(const nd_node *n) { return n->n_inputs + (n->kind == ND_NODE_STORE); }

uint32_t nd_graph_read_fates(const nd_graph *g, const nd_buffer *target, uint8_t *fate, uint8_t *live) {
    uint32_t n = g->n_nodes, stays = 0;
    nd_graph_liveness(g, live);
    memset(fate, 0, n);
    /* Reverse record order: a node's consumers, and the writes after the
     * versions it reads, come after it, so they are decided first. A write
     * this flush makes implies every earlier pending write of the buffer
     * (a store keeps the version it overwrites), so the writes that run
     * are the first of each buffer's pending writers. */
    for (uint32_t i = n; i-- > 0;) {
        const nd_node *nd = g->nodes[i];
        if (!live[i]) continue;
        /* User kernel calls run when any pending work does, as before:
         * they are groups of nodes and rarely read. So do writes into the
         * program's own memory (a wrap): not deferred past any flush. */
        int need = (fate[i] & NEED) || nd->out == target || nd->kind == ND_NODE_USER || nd->out->borrow;
        /* A version this flush overwrites is gone afterwards: a node that
         * reads it must run now. */
        int war = 0;
        for (int k = 0; k < n_reads(nd) && !war; k++) {
            const nd_buffer *b;
            uint32_t v;
            if (!read_at(nd, k, &b, &v)) continue;
            uint32_t w = nd_buffer_next_write_after(b, v);
            war = w != UINT32_MAX && w != i && (fate[w] & NEED);
        }
        need |= war;
        int later = (fate[i] & READ_LATER) != 0;
        int recipe = 0;
        if (!need) {
            fate[i] = ND_FATE_LATER;
        } else {
            int wanted = later || (nd_buffer_visible(nd->out) && nd->out_version == nd->out->version);
            recipe = wanted && !war && recipe_kind(nd) && nd->out != target && !nd->out->borrow &&
                     nd->out_version == nd->out->version;
            /* A recipe read by a recipe is computed again only if that
             * one is; one read by a node that only stays, when it runs. */
            int flag = recipe ? (fate[i] & READ_BY_RUN) != 0 : later;
            fate[i] = (uint8_t)((recipe ? ND_FATE_BOTH : ND_FATE_NOW) | (flag ? ND_FATE_VALUE_NEEDED : 0));
        }
        stays += (fate[i] & ND_FATE_STAYS) != 0;
        for (int k = 0; k < n_reads(nd); k++) {
            const nd_buffer *b;
            uint32_t v;
            if (!read_at(nd, k, &b, &v)) continue;
            int64_t w = nd_buffer_writer_of(b, v);
            if (w >= 0)
                fate[w] |= (uint8_t)((need ? NEED : 0) | ((fate[i] & ND_FATE_STAYS) ? READ_LATER : 0) |
                                     (fate[i] == ND_FATE_LATER ? READ_BY_RUN : 0));
        }
    }
    return stays;
}

static void ref_node(nd_node *n) {
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k].buf) nd_buffer_ref(n->inputs[k].buf);
    nd_buffer_ref(n->out);
    nd_node_take_extras(n);
}

static void unref_node(nd_node *n) {
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k].buf) nd_buffer_unref(n->inputs[k].buf);
    nd_buffer_unref(n->out);
    nd_node_release_extras(n);
}

/* A copy of n appended to g (no references taken); 0 when out of memory. */
static int copy_node(nd_graph *g, const nd_node *n) {
    if (!nd_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes)) return 0;
    size_t after = nd_node_block_bytes(n) - sizeof(nd_node); /* the refs and the tail */
    nd_node *c = nd_arena_alloc(&g->arena, sizeof *c + after);
    if (!c) return 0;
    *c = *n;
    c->inputs = n->n_inputs ? (nd_ref *)(c + 1) : NULL;
    if (after) memcpy(c + 1, n + 1, after);
    c->index = g->n_nodes;
    c->flags = 0;
    g->nodes[g->n_nodes++] = c;
    return 1;
}

nd_status nd_graph_split(nd_graph *g, const uint8_t *fate, nd_graph *later, uint32_t *origin, int32_t *pos,
                         uint64_t stamp) {
    uint32_t n = g->n_nodes;
    assert(later->n_nodes == 0);
    for (uint32_t i = 0; i < n; i++) {
        if (!(fate[i] & ND_FATE_STAYS)) continue;
        if (!copy_node(later, g->nodes[i])) {
            later->n_nodes = 0;
            nd_arena_reset(&later->arena);
            return ND_ERR_OOM;
        }
        origin[later->n_nodes - 1] = i;
    }
    /* Nothing below can fail. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) pos[i] = (fate[i] & ND_FATE_RUNS) ? (int32_t)m++ : -1;
    /* Writer lists: the writes that run are the first of each list, so
     * they keep their version numbers. */
    for (uint32_t i = 0; i < n; i++) {
        nd_buffer *b = g->nodes[i]->out;
        if (b->stamp == stamp) continue;
        b->stamp = stamp;
        uint32_t base = b->version - b->n_writers, kept = 0;
        for (uint32_t j = 0; j < b->n_writers; j++)
            if (pos[b->writers[j]] >= 0) b->writers[kept++] = (uint32_t)pos[b->writers[j]];
        b->n_writers = kept;
        b->version = base + kept;
    }
    /* A copy of a node that also runs holds references of its own; one of
     * a node that only stays took over the original's. */
    for (uint32_t k = 0; k < later->n_nodes; k++)
        if (fate[origin[k]] & ND_FATE_RUNS) ref_node(later->nodes[k]);
    m = 0;
    for (uint32_t i = 0; i < n; i++) {
        nd_node *nd = g->nodes[i];
        if (fate[i] & ND_FATE_RUNS) {
            nd->index = m;
            int needed = (fate[i] & ND_FATE_VALUE_NEEDED) != 0;
            if (fate[i] & ND_FATE_STAYS)
                nd->flags = (uint8_t)(ND_NODE_RECIPE_KEPT | (needed ? ND_NODE_READ_LATER : 0));
            else
                nd->flags = needed ? ND_NODE_VALUE_NEEDED : 0;
            g->nodes[m++] = nd;
        } else if (fate[i] == ND_FATE_DROP) {
            unref_node(nd);
        }
    }
    g->n_nodes = m;
    return ND_OK;
}

void nd_graph_split_finish(nd_graph *later, const uint8_t *drop, uint64_t stamp) {
    uint32_t m = 0;
    for (uint32_t k = 0; k < later->n_nodes; k++) {
        nd_node *c = later->nodes[k];
        if (drop[k]) {
            unref_node(c);
            continue;
        }
        c->index = m;
        later->nodes[m++] = c;
    }
    later->n_nodes = m;
    /* Each buffer's writers that stayed come after those that ran, in
     * record order, with consecutive versions. */
    for (uint32_t k = 0; k < m; k++) {
        nd_node *c = later->nodes[k];
        nd_buffer *b = c->out;
        if (b->stamp != stamp) {
            b->stamp = stamp;
            b->n_writers = 0;
            b->version = c->out_version - 1;
        }
        assert(b->n_writers < b->cap_writers && b->version + 1 == c->out_version);
        b->writers[b->n_writers++] = k;
        b->version = c->out_version;
    }
}
