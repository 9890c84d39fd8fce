/* The recording of an elementwise MAP node, inline: nd_fe_map (record.c)
 * and the public binary ops' one function (elementwise.c's binary_op),
 * which records a node whose dtype rule it remembered in its own frame.
 * There nd_fe_map as a call cost its prologue, its seven arguments and the
 * operand array passed through memory. Only record.c and elementwise.c
 * include this. */
#ifndef ND_FRONTEND_RECORD_INLINE_H
#define ND_FRONTEND_RECORD_INLINE_H

#include <stddef.h>
#include <string.h>

#include "common/callsite.h"
#include "frontend/frontend.h"

/* The ND_ERR_SHAPE of a shape whose bytes do not fit 64 bits (cold). */
void nd_fe_nbytes_overflow(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype)
    __attribute__((noinline, cold));

/* nd_fe_nbytes, inline into fe_map. */
static inline __attribute__((always_inline)) int fe_nbytes(const char *fn, int ndim,
                                                           const int64_t *shape, nd_dtype dtype,
                                                           size_t *nbytes) {
    /* Overflow checked by the multiplies themselves: a division per axis
     * cost more than the rest of recording an op's shape. The product of
     * the nonzero extents must fit, even in an empty shape: a prefix of
     * them that overflows says so at once; an empty shape (product 0) is
     * checked extent by extent, off the common path. */
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n)) goto overflow;
    if (__builtin_expect(n == 0, 0)) {
        int64_t nz = 1;
        for (int i = 0; i < ndim; i++)
            if (shape[i] != 0 && __builtin_mul_overflow(nz, shape[i], &nz)) goto overflow;
    }
    if (__builtin_mul_overflow((size_t)n, nd_dtype_itemsize(dtype), nbytes)) goto overflow;
    return 0;
overflow:
    *nbytes = 0;
    nd_fe_nbytes_overflow(fn, ndim, shape, dtype);
    return -1;
}

/* nd_fe_begin and nd_fe_end, inline into nd_fe_map (every elementwise op):
 * as calls, their ten arguments and the record between them were spilled
 * and reloaded on every op. map_only: the node is a MAP of an elementwise
 * op whose inputs the caller sets with nd_graph_set_input(_inline) or
 * nd_graph_set_const_input (fe_map), so its block need not be zeroed
 * first (graph.h, nd_graph_add_map_node). copy_shape 0: the caller writes
 * the node's extents (fe_map2_same, fe_map2_scalar: in their loop over
 * the refs'). rule >= 0: op, dtype and cdtype as a remembered binary rule
 * holds them (fe_rule_bits, below), -1 otherwise. */
static inline __attribute__((always_inline)) int fe_begin_as(nd_fe_rec *r, const char *label,
                                                             nd_node_kind kind, int op, int n_inputs,
                                                             nd_dtype dtype, nd_dtype cdtype, int ndim,
                                                             const int64_t *shape, size_t nbytes,
                                                             int map_only, int copy_shape,
                                                             int64_t rule) {
    nd_runtime_before_record();
    r->buf = nd_buffer_new(dtype, nbytes);
    if (!r->buf) r->node = NULL;
    else if (map_only) r->node = nd_graph_add_map_node(&nd_rt.graph, n_inputs);
    else r->node = nd_graph_add_node(&nd_rt.graph, kind, n_inputs, nd_node_tail_bytes(kind, op, n_inputs));
    if (__builtin_expect(!r->node, 0)) {
        if (r->buf) nd_buffer_unref(r->buf);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory recording the operation (free arrays you no "
                     "longer need)", label);
        return -1;
    }
    nd_node *n = r->node;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (rule >= 0) {
        /* op, dtype, cdtype as the rule holds them, and ndim: one store,
         * where the four bytes built from the rule took ten instructions */
        _Static_assert(offsetof(nd_node, dtype) == offsetof(nd_node, op) + 1 &&
                           offsetof(nd_node, cdtype) == offsetof(nd_node, op) + 2 &&
                           offsetof(nd_node, ndim) == offsetof(nd_node, op) + 3,
                       "op, dtype, cdtype, ndim: four bytes in a row");
        const uint32_t w = ((uint32_t)rule & 0xffffffu) | (uint32_t)ndim << 24;
        memcpy(&n->op, &w, sizeof w);
    } else
#endif
    {
        n->op = (uint8_t)op;
        n->dtype = (uint8_t)dtype;
        n->cdtype = (uint8_t)cdtype;
        n->ndim = (uint8_t)ndim;
    }
    if (copy_shape)
        for (int i = 0; i < ndim; i++) n->shape[i] = shape[i];
    n->label = nd_site_label(label);
    return 0;
}
static inline __attribute__((always_inline)) int fe_begin(nd_fe_rec *r, const char *label,
                                                          nd_node_kind kind, int op, int n_inputs,
                                                          nd_dtype dtype, nd_dtype cdtype, int ndim,
                                                          const int64_t *shape, size_t nbytes) {
    return fe_begin_as(r, label, kind, op, n_inputs, dtype, cdtype, ndim, shape, nbytes, 0, 1, -1);
}

static inline __attribute__((always_inline)) nd_array *fe_end(nd_fe_rec *r, int ndim,
                                                              const int64_t *shape) {
    if (__builtin_expect(nd_graph_set_output(&nd_rt.graph, r->node, r->buf) != 0, 0)) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory recording the operation (free arrays you no "
                     "longer need)", r->node->label);
        nd_buffer_unref(r->buf);
        return NULL;
    }
    nd_array *a = nd_array_new_contiguous(r->buf, (nd_dtype)r->node->dtype, ndim, shape);
    /* The handle and the node hold it now: never its last reference
     * unless the handle failed. */
    if (__builtin_expect(a != NULL, 1)) {
        r->buf->refs--;
        nd_runtime_after_record_of(r->buf);
    } else {
        nd_buffer_unref(r->buf);
    }
    return a;
}

/* When the strong inputs all have one shape and the weak ones are 0-d
 * scalars (most ops: x * y, x * 0.99), the first strong input: its shape
 * is the result's, each strong input's own strides are its broadcast
 * strides, and the general broadcast is not needed. NULL otherwise, and
 * when every input is weak. */
static inline const nd_array *same_strong_shapes(int n, nd_array *const *in) {
    const nd_array *a = NULL;
    for (int k = 0; k < n; k++) {
        const nd_array *b = in[k];
        if (b->weak) {
            if (b->ndim != 0) return NULL;
            continue;
        }
        if (!a) {
            a = b;
            continue;
        }
        if (b->ndim != a->ndim) return NULL;
        for (int j = 0; j < a->ndim; j++)
            if (b->shape[j] != a->shape[j]) return NULL;
    }
    return a;
}

/* A weak scalar's constant input. A Python float into a float compute
 * dtype (x * 0.99) is its value as is: no conversion to go through. */
static inline void set_weak_input(nd_node *n, int i, const nd_array *a, nd_dtype const_dtype,
                                  int ndim, const int64_t *shape) {
    if (a->weak == ND_WEAK_FLOAT && nd_dtype_kind_of(const_dtype) == ND_KIND_FLOAT) {
        nd_graph_set_const_input(n, i, const_dtype, a->weak_value, ndim, shape);
        n->inputs[i].weak = 1;
        return;
    }
    nd_fe_set_input(n, i, a, const_dtype, ndim, shape);
}

/* nd_fe_map's body. */
static inline __attribute__((always_inline)) nd_array *fe_map(const char *fn, nd_op op, int n,
                                                              nd_array *const *in,
                                                              const nd_dtype *const_dtypes,
                                                              nd_dtype cdtype, nd_dtype dtype) {
    int ndim;
    int64_t shape_buf[ND_MAX_DIMS];
    const int64_t *shape = shape_buf;
    size_t nbytes;
    /* The common case reads the shape from that input (alive for the
     * whole call) rather than copying it. */
    const nd_array *same = same_strong_shapes(n, in);
    if (same) {
        ndim = same->ndim;
        shape = same->shape;
    } else if (nd_fe_broadcast(fn, n, in, &ndim, shape_buf)) {
        return NULL;
    }
    if (fe_nbytes(fn, ndim, shape, dtype, &nbytes)) return NULL;
    nd_fe_rec r;
    if (fe_begin_as(&r, fn, ND_NODE_MAP, op, n, dtype, cdtype, ndim, shape, nbytes, 1, 1, -1)) return NULL;
    for (int i = 0; i < n; i++) {
        const nd_array *x = in[i];
        const nd_dtype cd = const_dtypes ? const_dtypes[i] : cdtype;
        if (x->weak) set_weak_input(r.node, i, x, cd, ndim, shape);
        else if (same) nd_graph_set_input_inline(r.node, i, x, ndim, shape, x->strides);
        else nd_fe_set_input(r.node, i, x, cd, ndim, shape);
    }
    return fe_end(&r, ndim, shape);
}

/* A remembered binary rule's op, dtype and cdtype (elementwise.c's table
 * of binary rules): one byte each, in the order of nd_node's op, dtype and
 * cdtype bytes (a node's elementwise op fits its byte), so that
 * fe_begin_as writes them as they are. */
_Static_assert(ND_NUM_ELEMENTWISE_OPS <= 256, "a rule's op byte");
static inline uint32_t fe_rule_bits(nd_op op, nd_dtype dtype, nd_dtype cdtype) {
    return (uint32_t)op | (uint32_t)dtype << 8 | (uint32_t)cdtype << 16;
}
static inline nd_op fe_rule_op(uint32_t rule) { return (nd_op)(rule & 0xff); }
static inline nd_dtype fe_rule_dtype(uint32_t rule) { return (nd_dtype)(rule >> 8 & 0xff); }
static inline nd_dtype fe_rule_cdtype(uint32_t rule) { return (nd_dtype)(rule >> 16 & 0xff); }

/* The start of fe_map2_same and fe_map2_scalar: the byte count, the
 * buffer and the node of a two-input MAP whose op, dtype and cdtype are
 * a remembered binary rule's low bytes (`rule`: fe_rule_bits), written
 * with ndim as one word; the node's extents are the caller's to write. */
static inline __attribute__((always_inline)) int fe_begin_rule(nd_fe_rec *r, const char *fn, uint32_t rule,
                                                               int ndim, const int64_t *shape) {
    const nd_dtype dtype = fe_rule_dtype(rule), cdtype = fe_rule_cdtype(rule);
    size_t nbytes;
    if (fe_nbytes(fn, ndim, shape, dtype, &nbytes)) return -1;
    return fe_begin_as(r, fn, ND_NODE_MAP, (int)fe_rule_op(rule), 2, dtype, cdtype, ndim, shape, nbytes, 1, 0,
                       rule);
}

/* fe_map of two strong operands of one shape (x + y, the binary ops' most
 * common call; the caller has compared the shapes): no weak or broadcast
 * case to test per input, no operand array in memory, each ref written
 * from its operand directly. `rule` as fe_begin_rule's. */
static inline __attribute__((always_inline)) nd_array *fe_map2_same(const char *fn, uint32_t rule,
                                                                    const nd_array *a,
                                                                    const nd_array *b) {
    const int ndim = a->ndim;
    const int64_t *shape = a->shape;
    nd_fe_rec r;
    if (fe_begin_rule(&r, fn, rule, ndim, shape)) return NULL;
    nd_node *node = r.node;
    nd_ref *r0 = nd_graph_set_input_head(node, 0, a, ndim);
    nd_ref *r1 = nd_graph_set_input_head(node, 1, b, ndim);
    /* The node's extents and both refs' extents and strides, one loop. */
    for (int k = 0; k < ndim; k++) {
        const int64_t e = shape[k];
        node->shape[k] = e;
        r0->shape[k] = e;
        r0->strides[k] = a->strides[k];
        r1->shape[k] = e;
        r1->strides[k] = b->strides[k];
    }
    return fe_end(&r, ndim, shape);
}

/* fe_map of a strong operand x (input xi) and a 0-d Python-float scalar w
 * (the other input) into a float compute dtype (x * 0.99, 0.01 * y; the
 * caller has checked all that): w's ref is its value as is, as
 * set_weak_input makes it; x's is written from x, both refs' extents (and
 * x's strides) in one loop with the node's. `rule` as fe_begin_rule's. */
static inline __attribute__((always_inline)) nd_array *fe_map2_scalar(const char *fn, uint32_t rule,
                                                                      const nd_array *x, int xi,
                                                                      const nd_array *w) {
    const int ndim = x->ndim;
    const int64_t *shape = x->shape;
    nd_fe_rec r;
    if (fe_begin_rule(&r, fn, rule, ndim, shape)) return NULL;
    nd_node *node = r.node;
    nd_ref *rx = nd_graph_set_input_head(node, xi, x, ndim);
    const nd_dtype cdtype = fe_rule_cdtype(rule);
    nd_ref *rw = nd_graph_set_const_input_head(node, 1 - xi, cdtype, w->weak_value, ndim);
    rw->weak = 1;
    for (int k = 0; k < ndim; k++) {
        const int64_t e = shape[k];
        node->shape[k] = e;
        rx->shape[k] = e;
        rx->strides[k] = x->strides[k];
        rw->shape[k] = e;
        rw->strides[k] = 0;
    }
    return fe_end(&r, ndim, shape);
}

#endif
