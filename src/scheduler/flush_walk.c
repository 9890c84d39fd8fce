#include "scheduler/flush_walk.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#include "common/dtype.h"
#include "common/hash.h"
#include "common/names.h"
#include "common/ufunc_loop.h"

/* Hashing costs one wide multiply per pair of words (nd_hash_pair): the
 * walk runs on every flush, cached plan or not, over every pending node,
 * so its cost is part of the price of recording an op. */

/* A view: ndim, offset, and per axis the extent and the stride. shape
 * NULL: the extents are known already (a MAP or STORE node's refs have
 * the node's shape, node.h, which its header hashed); strides NULL: none
 * (a node's own shape). */
static uint64_t hash_view(uint64_t h, int ndim, const int64_t *shape, const int64_t *strides,
                          int64_t offset) {
    h = nd_hash_pair(h ^ (uint64_t)ndim, (uint64_t)offset);
    for (int k = 0; k < ndim; k++)
        h = nd_hash_pair(h ^ (shape ? (uint64_t)shape[k] : 0), strides ? (uint64_t)strides[k] : 0);
    return h;
}

/* A twin that holds the materialised version's elements outside a region
 * spares the fill of a chain over that region (store_chains.c): its region
 * and memory, or 0 when it holds nothing of use (as for no twin at all:
 * the plan is the same). */
static uint64_t twin_state(const nd_buffer *b) {
    const nd_buffer_twin *t = nd_buffer_twin_at(b, b->version - b->n_writers);
    if (!t) return 0;
    return hash_view(nd_hash_pair(0x7A1Eu, (uint64_t)t->mem_memory), t->ndim, t->shape, t->strides,
                     t->offset);
}

/* Pieces that hold a split value from an earlier flush decide whether a
 * plan scatters, starts from them, or gathers them first
 * (scheduler/partition.c): their layout, or 0 when they hold nothing. */
static uint64_t pieces_state(const nd_buffer_pieces *p) {
    if (!p) return 0;
    uint64_t h = nd_hash_pair(0x91ECE5ull ^ (uint64_t)p->whole_stale ^ ((uint64_t)p->ghosts_fresh << 1),
                              (uint64_t)p->n_dev);
    h = nd_hash_pair(h ^ (uint64_t)p->rows, (uint64_t)p->row_bytes);
    for (int32_t d = 0; d < p->n_dev && d < ND_MAX_PIECES; d++) h = nd_hash_pair(h ^ (uint64_t)p->p0[d], (uint64_t)p->pn[d]);
    return h;
}

/* Numbers b on first sight and hashes its number and, the first time, the
 * facts about it that change a plan: size, dtype, whether a handle sees it,
 * where its value lives (memories, pieces), what its twin holds. */
static uint64_t visit_buffer(nd_flush_walk *w, nd_buffer *b, int *ok) {
    if (b->stamp == w->stamp) return nd_hash_pair(0x5107, (uint64_t)b->slot);
    if (!nd_grow((void **)&w->buffers, (uint32_t *)&w->cap_buffers, w->n_buffers + 1, sizeof *w->buffers)) {
        *ok = 0;
        return 0;
    }
    b->stamp = w->stamp;
    b->slot = (int32_t)w->n_buffers;
    w->buffers[w->n_buffers++] = b;
    uint32_t mem_mask = 0;
    for (int m = 0; m < ND_MAX_MEMORIES; m++)
        if (b->mem[m]) mem_mask |= 1u << m;
    uint64_t h = nd_hash_pair(b->nbytes, ((uint64_t)b->dtype << 48) ^ ((uint64_t)nd_buffer_visible(b) << 40) ^
                                             ((uint64_t)b->valid << 8) ^ mem_mask);
    uint64_t twin = b->twin ? twin_state(b) : 0;
    if (b->pieces) h = nd_hash_pair(h, pieces_state(nd_buffer_pieces_at(b)));
    if (twin && b->twin->pieces) twin = nd_hash_pair(twin, pieces_state(b->twin->pieces->valid ? b->twin->pieces : NULL));
    h = nd_hash_pair(h ^ twin, 0xB0FF0000ull ^ (uint64_t)b->slot);
    w->buffer_facts = nd_hash_pair(w->buffer_facts, h);
    return h;
}

/* Where a view of b (numbered in this walk) starts, `offset` elements of
 * dt: in bytes from the first view of b the bases pass met, which sets the
 * base. */
static inline int64_t view_offset(nd_flush_walk *w, const nd_buffer *b, int64_t offset, int dt) {
    int64_t bytes = offset * (int64_t)nd_dtype_size_table[dt];
    int64_t *base = &w->view_base[b->slot];
    if (*base == ND_NO_VIEW_BASE) *base = bytes;
    return bytes - *base;
}

/* relative: the bases pass (nd_flush_walk_bases), where a STORE's offset
 * is hashed after its buffer's number, from its base. */
static inline uint64_t hash_header(const nd_node *n, int relative) {
    uint64_t h = nd_hash_pair((uint64_t)n->kind | (uint64_t)n->op << 8 | (uint64_t)n->dtype << 16 |
                                  (uint64_t)n->cdtype << 24 | (uint64_t)n->n_inputs << 32 |
                                  (uint64_t)n->n_params << 40 | (uint64_t)n->flags << 48,
                              0x4EAD);
    h = hash_view(h, n->ndim, n->shape, NULL, 0);
    if (n->kind == ND_NODE_REDUCE) h = nd_hash_pair(h, n->u.reduce.axes);
    /* which user loop a call runs (ids are never reused) */
    if (n->kind == ND_NODE_MAP && n->op == ND_UFUNC_MAP_OP) h = nd_hash_pair(h, n->u.ufunc.loop);
    /* which body a call runs: its template's content (two bodies that
     * trace the same ops share kernels and plans; an address could be a
     * freed body's, reused) */
    if (nd_node_is_body(n)) h = nd_hash_pair(h, n->u.body.body->hash ^ (uint64_t)n->u.body.carry);
    if (n->kind == ND_NODE_MAP && n->op == ND_GATHER_MAP_OP) {
        const int64_t *ax = nd_node_gather_axes(n);
        const int K = n->u.gather.n_axes;
        for (int k = 0; k < K && (uint32_t)(k + 1) * 16u <= n->tail_bytes; k++)
            h = nd_hash_pair(h ^ (uint64_t)ax[k], (uint64_t)ax[K + k]);
        h = nd_hash_pair(h ^ (uint64_t)n->u.gather.axes,
                         (uint64_t)(uint32_t)n->u.gather.fn | (uint64_t)(uint32_t)n->u.gather.n_axes << 32);
    }
    if (n->kind == ND_NODE_STORE)
        h = hash_view(h, n->ndim, NULL, n->u.store.strides, relative ? 0 : n->u.store.offset);
    if (n->kind == ND_NODE_USER) {
        /* The kernel itself (a plan holds a reference, so the address is
         * not reused while a cached plan names it) and the call's shape. */
        h = nd_hash_pair(h ^ (uint64_t)(uintptr_t)n->u.user.kernel,
                         (uint64_t)n->u.user.index << 56 | (uint64_t)n->u.user.count << 48 |
                             (uint64_t)n->u.user.n_in << 40 | (uint64_t)n->u.user.in_place << 32);
        h = hash_view(h, n->ndim, NULL, n->u.user.strides, n->u.user.offset);
        /* A library routine's arguments shape its plan step (n->op, the
         * routine, is in the header above). */
        if (!n->u.user.kernel)
            for (int k = 0; k < ND_LIB_MAX_ARGS; k++) h = nd_hash_pair(h, n->params[k].u);
    }
    return h;
}

/* A buffer ref: its buffer, which pending node wrote the version read (or
 * none: the version number itself differs from flush to flush) and the
 * view. A constant: its value goes to the parameters, not the hash. The
 * refs of MAP and STORE nodes have the node's shape (node.h): their
 * extents are not hashed again. */
static inline uint64_t hash_ref(nd_flush_walk *w, const nd_node *n, int own_shape, const nd_ref *r, int *ok,
                                int relative) {
    assert(own_shape || (r->ndim == n->ndim && !memcmp(r->shape, n->shape, (size_t)r->ndim * sizeof *r->shape)));
    (void)n;
    if (!r->buf) {
        if (!relative) w->params[w->n_params++] = r->value;
        /* A MAP or STORE constant has the node's shape: its dtype says all. */
        if (!own_shape) return nd_hash_pair(0xC0, r->dtype);
        return hash_view(nd_hash_pair(0xC0, r->dtype), r->ndim, r->shape, NULL, 0);
    }
    uint64_t h = nd_hash_pair(visit_buffer(w, r->buf, ok) ^ r->dtype,
                              (uint64_t)nd_buffer_writer_of(r->buf, r->version));
    return hash_view(h, r->ndim, own_shape ? r->shape : NULL, r->strides,
                     relative ? view_offset(w, r->buf, r->offset, r->dtype) : r->offset);
}

/* Node n's hash: its header, its refs (constants to the parameters in the
 * first pass), the buffer it writes, and in the bases pass where a STORE's
 * view starts. */
static inline uint64_t hash_node(nd_flush_walk *w, const nd_node *n, int *ok, int relative) {
    uint64_t hn = hash_header(n, relative);
    if (n->kind == ND_NODE_RANDOM) hn = nd_hash_pair(hn, 0x5EED0000ull | (w->rng_root[n->index] != n->index));
    const int own_shape = n->kind != ND_NODE_MAP && n->kind != ND_NODE_STORE;
    for (int k = 0; k < n->n_inputs; k++) hn = nd_hash_pair(hn, hash_ref(w, n, own_shape, &n->inputs[k], ok, relative));
    hn = nd_hash_pair(hn ^ visit_buffer(w, n->out, ok), (uint64_t)(n->out_version == n->out->version));
    if (relative && n->kind == ND_NODE_STORE)
        hn = nd_hash_pair(hn, (uint64_t)view_offset(w, n->out, n->u.store.offset, n->dtype));
    return hn;
}

nd_status nd_flush_walk_run(nd_flush_walk *w, const nd_graph *g, uint64_t stamp) {
    w->n_buffers = 0;
    w->buffer_facts = 0;
    w->n_params = 0;
    w->stamp = stamp;
    if (!nd_grow((void **)&w->param_base, (uint32_t *)&w->cap_nodes, g->n_nodes + 1, sizeof *w->param_base) ||
        !nd_grow((void **)&w->labels, &w->cap_labels, g->n_nodes + 1, sizeof *w->labels))
        return ND_ERR_OOM;
    const int named = nd_names_in_use();
    if (!named) {
        if (w->names) { /* a call to free(NULL) on every flush otherwise */
            free(w->names);
            w->names = NULL;
            w->cap_names = 0;
        }
    } else if (!nd_grow((void **)&w->names, &w->cap_names, g->n_nodes + 1, sizeof *w->names)) {
        return ND_ERR_OOM;
    }
    uint64_t h = nd_hash_pair(ND_HASH_SEED, g->n_nodes);
    int ok = 1;
    uint32_t last_random = UINT32_MAX; /* the newest RANDOM node so far */
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const nd_node *n = g->nodes[i];
        w->param_base[i] = w->n_params;
        if (n->kind == ND_NODE_RANDOM) {
            /* params: seed, stream (frontend/random.c) */
            if (!nd_grow((void **)&w->rng_root, &w->cap_rng_root, g->n_nodes + 1, sizeof *w->rng_root))
                return ND_ERR_OOM;
            const nd_node *p = last_random == UINT32_MAX ? NULL : g->nodes[last_random];
            w->rng_root[i] = p && p->params[0].u == n->params[0].u && p->params[1].u >> 32 == n->params[1].u >> 32
                                 ? w->rng_root[last_random]
                                 : i;
            last_random = i;
        }
        w->labels[i] = n->label;
        if (named) w->names[i] = nd_node_name(n);
        /* Room for its parameters and, at most, one constant per input. */
        if (!nd_grow((void **)&w->params, (uint32_t *)&w->cap_params, w->n_params + n->n_params + n->n_inputs,
                     sizeof *w->params))
            return ND_ERR_OOM;
        for (int k = 0; k < n->n_params; k++) w->params[w->n_params++] = n->params[k];

        uint64_t hn = hash_node(w, n, &ok, 0);
        /* A body's constants (its weak scalars and fills) follow its refs'. */
        if (__builtin_expect(n->op == ND_BODY_MAP_OP, 0) && n->kind == ND_NODE_MAP) {
            const nd_body *b = n->u.body.body;
            if (!nd_grow((void **)&w->params, (uint32_t *)&w->cap_params, w->n_params + (uint32_t)b->n_consts,
                         sizeof *w->params))
                return ND_ERR_OOM;
            for (int32_t c = 0; c < b->n_consts; c++) w->params[w->n_params++] = b->consts[c];
        }
        h = nd_hash_pair(h, hn);
        if (!ok) return ND_ERR_OOM;
    }
    w->param_base[g->n_nodes] = w->n_params;
    w->key = h;
    w->bases_valid = 0;
    return ND_OK;
}

nd_status nd_flush_walk_bases(nd_flush_walk *w, const nd_graph *g) {
    if (!nd_grow((void **)&w->view_base, &w->cap_view_base, w->n_buffers + 1, sizeof *w->view_base)) return ND_ERR_OOM;
    for (uint32_t b = 0; b < w->n_buffers; b++) w->view_base[b] = ND_NO_VIEW_BASE;
    uint64_t h = nd_hash_pair(ND_HASH_SEED ^ 0x4E1A7 ^ w->buffer_facts, g->n_nodes);
    int ok = 1; /* every buffer is numbered already: visit_buffer hashes its number only */
    for (uint32_t i = 0; i < g->n_nodes; i++) h = nd_hash_pair(h, hash_node(w, g->nodes[i], &ok, 1));
    w->relative_key = h;
    w->bases_valid = 1;
    return ND_OK;
}

void nd_flush_walk_free(nd_flush_walk *w) {
    free(w->buffers);
    free(w->view_base);
    free(w->labels);
    free(w->names);
    free(w->params);
    free(w->param_base);
    free(w->rng_root);
    *w = (nd_flush_walk){0};
}

const char *nd_flush_walk_step_name(const nd_flush_walk *w, const nd_step *st) {
    if (!w->names) return NULL;
    int32_t n = st->last_node >= 0 ? st->last_node : st->first_node;
    return n >= 0 ? w->names[n] : NULL;
}

const char *nd_node_name(const nd_node *n) {
    if (!nd_names_in_use()) return NULL;
    return nd_name_join(n->scope, n->out && n->out->named ? nd_name_bound(n->out) : NULL);
}
