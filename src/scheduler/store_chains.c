/* Chains of hazardous stores (store_chains.h).
 *
 * A chain S_1..S_m writes versions v_1..v_m of buffer U over one region R;
 * v_0 is U before it. Every S_k reads v_{k-1} through views that overlap R
 * (north, south, ... of a stencil), so it cannot write U in place.
 *
 * Layout: one temporary T of U's full size (every view of U reads T at the
 * same offsets and strides) and U itself hold the versions alternately,
 * ending in U: v_m in U, v_{m-1} in T, v_{m-2} in U, ... S_k reads v_{k-1}
 * where it lives and writes R of the other slot. Just before S_1, the fill
 * copies U into T (all of it, or only the part outside R: below). Then
 * before every S_k the slot it writes holds v_{k-2} (v_0 for k <= 2) outside
 * R, which equals v_k there: nothing in between writes outside R, which is
 * why every store of a chain must have the very same region. Writing R
 * makes it v_k in full. For even m, v_1 goes to T and S_1 reads v_0 from U;
 * for odd m, v_1 goes to U and S_1 reads v_0 from the copy in T (that read
 * is the `source` override).
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
 * but here the per-chain cost is at most one copy of U (read + write)
 * instead of filling two temporaries (one read, two writes), and the plan
 * holds one extra grid, not two (1 GiB for the 16384^2 float32 stencil).
 *
 * The fill copies only the part of U outside R when all of these hold:
 *  - m is even. Then S_1 writes R of T before anything reads it, so a copy
 *    of R would be overwritten unread. For odd m, S_1 writes U and reads
 *    all of v_0 (R included) from T, so T needs the whole copy.
 *  - R is a box of U seen as a row-major array of some shape D: the
 *    region's strides are D's contiguous strides (the last one 1, the
 *    product of D the buffer's element count), its offset splits into
 *    start coordinates inside D and its extents fit. Then the complement is
 *    at most 2 * ndim strided copies: per axis d, the region's extent on
 *    the axes before d, the part before R and the part after R on axis d,
 *    and all of the axes after d (one contiguous run each). Where the parts
 *    before and after have the same length (the usual symmetric border)
 *    they are one kernel with an extra leading axis, so the fill of
 *    [1:-1, 1:-1] is two small kernels (the first and last rows, the first
 *    and last columns). The complement of a strided region (every other
 *    column) is no such handful of views: it keeps the whole copy. (Every
 *    other row of an even number of rows is a box of U seen as rows twice
 *    as long, and takes the parts.)
 *  - R holds at least PARTIAL_FILL_MIN_BYTES (below).
 * All three depend only on the chain's length, the region's view and the
 * buffer's size and dtype, which the plan-cache key holds.
 *
 * The temporary of a chain over a buffer of at most TWIN_MAX_BYTES is the
 * buffer's twin (graph/buffer.h), which outlives the flush. After the
 * chain, it holds v_{m-1}, which equals v_m outside R. A loop recorded over
 * several flushes (early flushes cut a stencil loop into a few chains, and
 * a loop that syncs every few sweeps makes one chain per sync) continues
 * in the next flush with S'_1 writing v_m + 1: if nothing else wrote U in
 * between (the twin's version is U's materialised one), the region is the
 * same and the new chain is even, so that S'_1 writes R of the twin and
 * reads all of v_m from U, the twin already holds everything the fill
 * would copy, and there is no fill. An odd chain reads all of v_m from the
 * twin and still takes the whole copy. Twins are kept only for buffers
 * small enough that a fill's launches cost as much as its copying
 * (TWIN_MAX_BYTES below): they hold the memory for as long as the buffer
 * lives, where a temporary goes back to the pool after the flush.
 *
 * A lone hazardous store (m = 1) keeps the temporary-then-copy plan: the
 * same traffic as the fill plus one sweep, with a temporary only as large
 * as the region. So does a chain over a small part of a large buffer (m
 * regions smaller than the buffer): the fill would cost more than the
 * copies it saves. */
#include "scheduler/store_chains.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

/* Copying only the complement of R saves copying R but takes up to
 * 2 * ndim - 1 more launches (one more for a symmetric 2-d border, three
 * for an asymmetric one). Skipping 4 MiB of R saves 8 MiB of traffic, about
 * 2.5 us at an H100's 3.3 TB/s, which is what a few launches of tiny
 * kernels cost: below that the single copy is as fast or faster, above it
 * the saving grows with the grid while the launches stay few (0.74 ms of
 * copy for a 16384^2 float32 grid). */
#define PARTIAL_FILL_MIN_BYTES ((size_t)4 << 20)

/* The buffers whose chains keep a twin: the 1000x1000 float64 stencil
 * (8 MB) runs 1-2 us sweeps where each fill kernel costs about as much, and
 * early flushes, which cut its loop into chains, apply only up to the same
 * size (runtime.c). A 1 GiB grid's sweeps take hundreds of us, next to
 * which its fill is nothing, and holding a second GiB for the buffer's
 * lifetime would be felt. */
#define TWIN_MAX_BYTES ((size_t)64 << 20)

/* A store through a component view (nd_real/nd_imag of a complex buffer:
 * its dtype is the parts', graph/array.h) is never in a chain: the fill
 * copies the complement of the region in the buffer's own elements. */
static int same_region(const nd_node *a, const nd_node *b) {
    if (a->kind != ND_NODE_STORE || b->kind != ND_NODE_STORE || a->out != b->out ||
        a->dtype != a->out->dtype || b->dtype != b->out->dtype ||
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

/* Whether u's twin holds what lies outside the region store s writes, as
 * of the version before s (the file's header comment). */
static int twin_holds_outside(const nd_node *s, int32_t memory) {
    const nd_buffer_twin *t = nd_buffer_twin_at(s->out, s->out_version - 1);
    if (!t || t->mem_memory != memory || t->ndim != s->ndim || t->offset != s->u.store.offset) return 0;
    for (int k = 0; k < s->ndim; k++)
        if (t->shape[k] != s->shape[k] || t->strides[k] != s->u.store.strides[k]) return 0;
    return 1;
}

nd_status nd_store_chains_plan(const nd_graph *g, const uint8_t *hazard, const nd_chain_slots *slots,
                               nd_store_chains *out) {
    uint32_t n = g->n_nodes;
    memset(out, 0, sizeof *out);
    out->home = nd_malloc(sizeof(int32_t) * 6 * ((size_t)n + 1));
    if (!out->home) return ND_ERR_OOM;
    memset(out->home, 0xff, sizeof(int32_t) * 6 * ((size_t)n + 1));
    out->source = out->home + n + 1;
    out->fill = out->source + n + 1;
    out->length = out->fill + n + 1;
    out->last = out->length + n + 1;
    out->ready = out->last + n + 1;
    out->rows = slots->rows;
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *s = g->nodes[i];
        if (!hazard[i]) continue;
        int64_t prev = nd_buffer_writer_of(s->out, s->out_version - 1);
        if (prev >= 0 && hazard[prev] && chain_next(g, hazard, (uint32_t)prev) == (int64_t)i)
            continue; /* not the first store of its chain */
        uint32_t m = 1;
        int64_t last = i;
        for (int64_t j = chain_next(g, hazard, i); j >= 0; j = chain_next(g, hazard, (uint32_t)j)) {
            m++;
            last = j;
        }
        /* The fill copies the whole buffer: worth it when the sweeps' copies
         * it saves (one region each) add up to at least as much. */
        double region = (double)nd_shape_size(s->ndim, s->shape);
        if (m < 2 || (double)m * region < (double)(s->out->nbytes / nd_dtype_size(s->out->dtype)))
            continue;
        int twin = s->out->nbytes <= TWIN_MAX_BYTES;
        int32_t temp = twin ? slots->twin_slot(slots->arg, s->out) : slots->new_temp(slots->arg, s->out->nbytes);
        if (temp < 0) return ND_ERR_OOM;
        out->fill[i] = temp;
        out->length[i] = (int32_t)m;
        out->last[i] = (int32_t)last;
        out->ready[i] = twin && m % 2 == 0 && twin_holds_outside(s, slots->memory);
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

/* Buffer U seen as a row-major array of shape dims, the region as the box
 * start[k] <= x_k < start[k] + extent[k] in it; stride[k] the contiguous
 * strides of dims. */
typedef struct {
    int ndim;
    int64_t dims[ND_MAX_DIMS], start[ND_MAX_DIMS], extent[ND_MAX_DIMS], stride[ND_MAX_DIMS];
} box;

/* Whether store n's region is such a box (the file's header comment). The
 * shape D is read off the strides: D_{j+1} = strides[j] / strides[j+1],
 * D_0 = the element count / strides[0]. */
static int region_box(const nd_node *n, box *b) {
    int k = n->ndim;
    const int64_t *st = n->u.store.strides;
    int64_t count = (int64_t)(n->out->nbytes / nd_dtype_size(n->out->dtype));
    if (k < 1 || st[k - 1] != 1 || n->u.store.offset < 0) return 0;
    for (int j = k - 2; j >= 0; j--)
        if (st[j] < st[j + 1] || st[j] % st[j + 1] != 0) return 0;
    if (count % st[0] != 0) return 0;
    b->ndim = k;
    int64_t rem = n->u.store.offset;
    for (int j = 0; j < k; j++) {
        b->stride[j] = st[j];
        b->dims[j] = j == 0 ? count / st[0] : st[j - 1] / st[j];
        b->start[j] = rem / st[j]; /* < dims[j] for j > 0: rem < st[j - 1] */
        rem -= b->start[j] * st[j];
        b->extent[j] = n->shape[j];
        if (b->start[j] + b->extent[j] > b->dims[j]) return 0;
    }
    return 1;
}

/* The copy of the part of the box's axis d of length `len` (in units of
 * axis d) starting at `offset`; pair_stride > 0 adds an axis of two that
 * also copies the same part pair_stride elements further on, the leading
 * axis, or (rows) the second one, after the box's axis 0 (d > 0). The axes
 * before d keep the region's extent; axis d and the full axes after it are
 * one contiguous run. */
static nd_chain_fill_part outside_part(const box *b, int d, int64_t offset, int64_t len, int64_t pair_stride,
                                       int rows) {
    nd_chain_fill_part p;
    memset(&p, 0, sizeof p);
    p.offset = offset;
    int pair_at = pair_stride > 0 ? (rows ? 1 : 0) : -1;
    for (int j = 0; j < d; j++) {
        if (j == pair_at) {
            p.shape[p.ndim] = 2;
            p.strides[p.ndim++] = pair_stride;
        }
        p.shape[p.ndim] = b->extent[j];
        p.strides[p.ndim++] = b->stride[j];
    }
    if (pair_at >= d) {
        p.shape[p.ndim] = 2;
        p.strides[p.ndim++] = pair_stride;
    }
    p.shape[p.ndim] = len * b->stride[d];
    p.strides[p.ndim++] = 1;
    return p;
}

/* The complement of the box, axis by axis; empty parts are left out. A
 * split plan (rows) takes the rows before and after the region on axis 0
 * as two copies: one copy of both steps from the first rows to the last
 * (n - 1 rows at a time), which the partition pass cannot split in row
 * blocks, and it would keep the buffer and the chain's temporary whole. */
static int outside_parts(const box *b, int rows, nd_chain_fill_part *parts) {
    int n = 0;
    int64_t base = 0; /* offset of the region's corner on the axes before d */
    for (int d = 0; d < b->ndim; d++) {
        int64_t before = b->start[d], after = b->dims[d] - b->start[d] - b->extent[d];
        int64_t after_offset = base + (b->start[d] + b->extent[d]) * b->stride[d];
        /* the pair axis needs one axis more than the part itself: d + 2 */
        if (before > 0 && before == after && d + 2 <= ND_MAX_DIMS && !(rows && d == 0)) {
            parts[n++] = outside_part(b, d, base, before, after_offset - base, rows);
        } else {
            if (before > 0) parts[n++] = outside_part(b, d, base, before, 0, rows);
            if (after > 0) parts[n++] = outside_part(b, d, after_offset, after, 0, rows);
        }
        base += b->start[d] * b->stride[d];
    }
    return n;
}

int nd_store_chain_fill_parts(const nd_store_chains *c, const nd_node *first, nd_chain_fill_part *parts) {
    const nd_buffer *u = first->out;
    if (c->ready[first->index] == 1) return 0;
    box b;
    size_t region_bytes = (size_t)nd_shape_size(first->ndim, first->shape) * nd_dtype_size(u->dtype);
    if (c->length[first->index] % 2 == 0 && region_bytes >= PARTIAL_FILL_MIN_BYTES &&
        region_box(first, &b))
        return outside_parts(&b, c->rows, parts);
    memset(&parts[0], 0, sizeof parts[0]);
    parts[0].ndim = 1;
    parts[0].shape[0] = (int64_t)(u->nbytes / nd_dtype_size(u->dtype));
    parts[0].strides[0] = 1;
    return 1;
}
