/* Shared recording machinery: checks, broadcasting, NEP 50 weak scalars and
 * node creation. This is the hot path of every op, so the success path does
 * no formatting and no allocation beyond the buffer, the node and the
 * handle. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/body.h"
#include "common/callsite.h"
#include "frontend/frontend.h"
#include "frontend/scope_replay.h"
#include "frontend/record_inline.h"

void nd_fe_release_last(nd_array *a) {
    if (a->scope_slot >= 0) nd_runtime_untrack(a);
    if (__builtin_expect(a->pooled, 0)) { /* its call site keeps it (scope_replay.c) */
        a->state = ND_ARRAY_FREED;
        return;
    }
    /* The last handle of a pending value nothing else reads (refs: the
     * handle and its one writer): that node may be dead now, newest or
     * not (graph.h, nd_graph_drop_dead; the newest inline). */
    nd_buffer *b = a->buf;
    const int last = b->refs == 2 && b->n_writers == 1;
    /* x = f(x) with a traced body: the call that read x joins the one that
     * wrote it (graph.h; refs: this handle, x's writer and its reader) */
    if (__builtin_expect(b->refs == 3, 0) && b->handles == 1 && nd_rt.body_loops &&
        nd_graph_merge_loop(&nd_rt.graph, b))
        nd_rt.stats.body_calls_merged++;
    nd_array_destroy(a);
    if (last) nd_rt.stats.nodes_dropped += nd_graph_drop_dead_fast(&nd_rt.graph, b);
}

int nd_fe_arg_handle(const char *fn, const char *name, const nd_array *a) {
    if (a->state == ND_ARRAY_LIVE) return 0;
    if (a->state == ND_ARRAY_FREED)
        nd_error_set(ND_ERR_ARG, "%s: argument '%s' (handle %p) was already freed: its last "
                     "reference went at an earlier nd_free or nd_scope_end (free each handle "
                     "once, nd_retain it to share it, and do not use it after)",
                     fn, name, (const void *)a);
    else
        nd_error_set(ND_ERR_ARG, "%s: argument '%s' (%p) is not an nd_array handle (freed "
                     "long ago and its memory reused, or never one)", fn, name, (const void *)a);
    return -1;
}

int nd_fe_arg_slow(const char *fn, const char *name, const nd_array *a) {
    if (!a) {
        nd_error_null_input(fn, name);
        return -1;
    }
    if (nd_fe_arg_handle(fn, name, a)) return -1;
    if (nd_rt.replay_sentinel && a->buf == nd_rt.replay_sentinel) return nd_replay_placeholder_arg(fn, name, a);
    if (a->buf->dead) {
        nd_error_set(ND_ERR_STATE, "%s: argument '%s' was created before nd_shutdown, which "
                     "released its memory (make arrays again after the runtime restarts; "
                     "nd_free the old handle)", fn, name);
        return -1;
    }
    return 0;
}

int nd_fe_check_dtype(const char *fn, nd_dtype t) {
    if (nd_dtype_valid((int)t)) return 0;
    nd_error_set(ND_ERR_DTYPE, "%s: dtype %d is not a valid nd_dtype (use ND_BOOL .. ND_FLOAT64)",
                 fn, (int)t);
    return -1;
}

void nd_fe_nbytes_overflow(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype) {
    char s[200];
    nd_error_set(ND_ERR_SHAPE,
                 "%s: shape %s of %s has more elements or bytes than fit in 64 bits (use a "
                 "smaller shape)",
                 fn, nd_format_shape(s, sizeof s, ndim, shape), nd_dtype_name(dtype));
}

int nd_fe_nbytes(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype, size_t *nbytes) {
    return fe_nbytes(fn, ndim, shape, dtype, nbytes);
}

int nd_fe_check_shape(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype,
                      size_t *nbytes) {
    if (nd_fe_check_dtype(fn, dtype)) return -1;
    if (ndim < 0 || ndim > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_ARG, "%s: ndim %d is out of range (use 0..%d)", fn, ndim, ND_MAX_DIMS);
        return -1;
    }
    if (ndim > 0 && !shape) {
        nd_error_set(ND_ERR_ARG, "%s: shape is NULL but ndim is %d (pass %d dimensions, or use "
                     "ND_SCALAR_SHAPE for a 0-d array)", fn, ndim, ndim);
        return -1;
    }
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) {
            char s[200];
            nd_error_set(ND_ERR_ARG,
                         "%s: shape %s has a negative dimension %lld at axis %d (dimensions "
                         "must be >= 0)",
                         fn, nd_format_shape(s, sizeof s, ndim, shape), (long long)shape[i], i);
            return -1;
        }
    return nd_fe_nbytes(fn, ndim, shape, dtype, nbytes);
}

int nd_fe_axis(const char *fn, int axis, int ndim, int *out) {
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        if (ndim == 0)
            nd_error_set(ND_ERR_ARG, "%s: axis %d is out of range for a 0-d array (it has no axes)",
                         fn, axis);
        else
            nd_error_set(ND_ERR_ARG,
                         "%s: axis %d is out of range for an array of ndim %d (use %d..%d)", fn,
                         axis, ndim, -ndim, ndim - 1);
        return -1;
    }
    *out = a;
    return 0;
}

int nd_fe_broadcast(const char *fn, int n, nd_array *const *in, int *ndim, int64_t *shape) {
    int nd = 0;
    for (int k = 0; k < n; k++)
        if (in[k]->ndim > nd) nd = in[k]->ndim;
    for (int i = 0; i < nd; i++) shape[i] = 1;
    for (int k = 0; k < n; k++) {
        const nd_array *a = in[k];
        int off = nd - a->ndim;
        for (int j = 0; j < a->ndim; j++) {
            int64_t d = a->shape[j], *o = &shape[off + j];
            if (d == *o || d == 1) continue;
            if (*o == 1) {
                *o = d;
                continue;
            }
            char s1[200], s2[200], n1[220], n2[220];
            /* Name the first input that disagrees with the running shape. */
            int first = 0;
            for (int m = 0; m < k; m++)
                if (in[m]->ndim >= in[first]->ndim) first = m;
            nd_error_set(ND_ERR_SHAPE,
                         "%s: shapes %s%s and %s%s cannot be broadcast together (each dimension "
                         "must match or be 1; reshape or view one operand)",
                         fn, nd_format_shape(s1, sizeof s1, in[first]->ndim, in[first]->shape),
                         nd_fe_name_note(in[first], n1, sizeof n1),
                         nd_format_shape(s2, sizeof s2, a->ndim, a->shape), nd_fe_name_note(a, n2, sizeof n2));
            return -1;
        }
    }
    *ndim = nd;
    return 0;
}

void nd_fe_broadcast_strides(const nd_array *a, int ndim, const int64_t *shape, int64_t *strides) {
    int off = ndim - a->ndim;
    for (int i = 0; i < off; i++) strides[i] = 0;
    for (int j = 0; j < a->ndim; j++)
        strides[off + j] = (a->shape[j] == 1 && shape[off + j] != 1) ? 0 : a->strides[j];
}

int nd_fe_begin(nd_fe_rec *r, const char *label, nd_node_kind kind, int op, int n_inputs,
                nd_dtype dtype, nd_dtype cdtype, int ndim, const int64_t *shape, size_t nbytes) {
    return fe_begin(r, label, kind, op, n_inputs, dtype, cdtype, ndim, shape, nbytes);
}

nd_array *nd_fe_end(nd_fe_rec *r, int ndim, const int64_t *shape) { return fe_end(r, ndim, shape); }

nd_scalar_bits nd_fe_double_bits(double v, nd_dtype dtype) {
    nd_scalar_bits b;
    switch (nd_dtype_kind_of(dtype)) {
    case ND_KIND_FLOAT:
    case ND_KIND_COMPLEX: b.f = v; break; /* a complex constant's real part; imaginary 0 */
    case ND_KIND_BOOL: b.i = v != 0; break;
    default: {
        /* Unsafe cast through the dtype itself, so the bits wrap as NumPy.
         * 16 bytes: nd_store_double writes a complex's two parts, a kind
         * this branch never sees but the compiler cannot rule out. */
        unsigned char tmp[16];
        nd_store_double(tmp, dtype, v);
        int64_t i = 0;
        uint64_t u = 0;
        switch (dtype) {
        case ND_INT8: { int8_t x; memcpy(&x, tmp, 1); i = x; break; }
        case ND_INT16: { int16_t x; memcpy(&x, tmp, 2); i = x; break; }
        case ND_INT32: { int32_t x; memcpy(&x, tmp, 4); i = x; break; }
        case ND_INT64: memcpy(&i, tmp, 8); break;
        case ND_UINT8: { uint8_t x; memcpy(&x, tmp, 1); u = x; break; }
        case ND_UINT16: { uint16_t x; memcpy(&x, tmp, 2); u = x; break; }
        case ND_UINT32: { uint32_t x; memcpy(&x, tmp, 4); u = x; break; }
        default: memcpy(&u, tmp, 8); break;
        }
        if (nd_dtype_kind_of(dtype) == ND_KIND_INT) b.i = i;
        else b.u = u;
        break;
    }
    }
    return b;
}

nd_scalar_bits nd_fe_weak_bits(const nd_array *a, nd_dtype dtype) {
    if (a->weak == ND_WEAK_FLOAT) return nd_fe_double_bits(a->weak_value.f, dtype);
    int64_t v = a->weak_value.i;
    nd_scalar_bits b;
    switch (nd_dtype_kind_of(dtype)) {
    case ND_KIND_FLOAT:
    case ND_KIND_COMPLEX: b.f = (double)v; break;
    case ND_KIND_BOOL: b.i = v != 0; break;
    case ND_KIND_INT: {
        /* Wrap to the width (the fit was checked where it matters). */
        b.i = v;
        if (nd_dtype_size(dtype) < 8) {
            int shift = 64 - 8 * (int)nd_dtype_size(dtype);
            b.i = (int64_t)((uint64_t)v << shift) >> shift;
        }
        break;
    }
    default: {
        b.u = (uint64_t)v;
        if (nd_dtype_size(dtype) < 8) b.u &= ((uint64_t)1 << (8 * nd_dtype_size(dtype))) - 1;
        break;
    }
    }
    return b;
}

static int int_fits(int64_t v, nd_dtype t) {
    switch (t) {
    case ND_INT8: return v >= INT8_MIN && v <= INT8_MAX;
    case ND_INT16: return v >= INT16_MIN && v <= INT16_MAX;
    case ND_INT32: return v >= INT32_MIN && v <= INT32_MAX;
    case ND_INT64: return 1;
    case ND_UINT8: return v >= 0 && v <= UINT8_MAX;
    case ND_UINT16: return v >= 0 && v <= UINT16_MAX;
    case ND_UINT32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case ND_UINT64: return v >= 0;
    default: return 1;
    }
}

/* "0..255": the values an integer dtype holds. */
static const char *int_range(nd_dtype t, char *buf, size_t cap) {
    const int bits = 8 * (int)nd_dtype_size(t);
    if (nd_dtype_kind_of(t) == ND_KIND_UINT)
        snprintf(buf, cap, "0..%llu",
                 (unsigned long long)(bits == 64 ? UINT64_MAX : (1ull << bits) - 1));
    else
        snprintf(buf, cap, "%lld..%lld", (long long)(bits == 64 ? INT64_MIN : -(1ll << (bits - 1))),
                 (long long)(bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1));
    return buf;
}

nd_status nd_fe_value_fits(const char *fn, const char *what, double v, nd_dtype t) {
    nd_dtype_kind k = nd_dtype_kind_of(t);
    if (k != ND_KIND_INT && k != ND_KIND_UINT) return ND_OK;
    char range[64];
    if (!isfinite(v))
        return nd_error_set(ND_ERR_DTYPE, "%s: %s %g has no integer value to store into %s (NumPy "
                            "2 raises here; use a finite value, or a float dtype)", fn, what, v,
                            nd_dtype_name(t));
    /* int(v) as NumPy: truncated toward zero, then it must fit. */
    const double tv = trunc(v);
    const int bits = 8 * (int)nd_dtype_size(t);
    const double top = ldexp(1.0, k == ND_KIND_UINT ? bits : bits - 1); /* exclusive */
    const double bottom = k == ND_KIND_UINT ? 0.0 : -top;
    if (tv >= bottom && tv < top) return ND_OK;
    return nd_error_set(ND_ERR_DTYPE, "%s: %s %.17g is out of range for %s (%s; NumPy 2 raises "
                        "OverflowError here rather than wrap; use a value in range, or a wider "
                        "dtype)", fn, what, v, nd_dtype_name(t),
                        int_range(t, range, sizeof range));
}

nd_status nd_fe_weak_fits(const char *fn, const nd_array *w, nd_dtype t) {
    if (w->weak == ND_WEAK_FLOAT) return nd_fe_value_fits(fn, "the scalar", w->weak_value.f, t);
    nd_dtype_kind k = nd_dtype_kind_of(t);
    if ((k != ND_KIND_INT && k != ND_KIND_UINT) || int_fits(w->weak_value.i, t)) return ND_OK;
    char range[64];
    return nd_error_set(ND_ERR_DTYPE, "%s: the Python-int scalar %lld is out of range for %s (%s; "
                        "NumPy 2 raises OverflowError here rather than wrap; use a value in "
                        "range, or a wider dtype)", fn, (long long)w->weak_value.i,
                        nd_dtype_name(t), int_range(t, range, sizeof range));
}

nd_dtype nd_fe_weak_dtype(const char *fn, const nd_array *w, nd_dtype other, int comparison) {
    nd_dtype_kind k = nd_dtype_kind_of(other);
    if (w->weak == ND_WEAK_FLOAT) return k == ND_KIND_FLOAT || k == ND_KIND_COMPLEX ? other : ND_FLOAT64;
    if (k == ND_KIND_BOOL) return ND_INT64;
    if (k == ND_KIND_FLOAT || k == ND_KIND_COMPLEX) return other;
    if (int_fits(w->weak_value.i, other)) return other;
    if (comparison) return ND_INT64; /* promotes with `other` to a type holding both */
    nd_error_set(ND_ERR_DTYPE,
                 "%s: the Python-int scalar %lld does not fit the array's dtype %s (NumPy 2 "
                 "raises here; use nd_astype to widen the array, or a value in range)",
                 fn, (long long)w->weak_value.i, nd_dtype_name(other));
    return ND_NUM_DTYPES;
}

nd_dtype nd_fe_result_type(const char *fn, const nd_array *a, const nd_array *b, int comparison) {
    nd_dtype da = a->dtype, db = b->dtype;
    /* Two weak scalars combine as their strong 0-d float64/int64 selves. */
    if (a->weak && !b->weak) da = nd_fe_weak_dtype(fn, a, db, comparison);
    else if (b->weak && !a->weak) db = nd_fe_weak_dtype(fn, b, da, comparison);
    if (da == ND_NUM_DTYPES || db == ND_NUM_DTYPES) return ND_NUM_DTYPES;
    return nd_promote(da, db);
}

void nd_fe_set_input(nd_node *n, int i, const nd_array *a, nd_dtype const_dtype, int ndim,
                     const int64_t *shape) {
    if (a->weak) {
        nd_graph_set_const_input(n, i, const_dtype, nd_fe_weak_bits(a, const_dtype), ndim, shape);
        n->inputs[i].weak = 1;
        return;
    }
    int64_t strides[ND_MAX_DIMS];
    nd_fe_broadcast_strides(a, ndim, shape, strides);
    nd_graph_set_input(n, i, a, ndim, shape, strides);
}

nd_array *nd_fe_map(const char *fn, nd_op op, int n, nd_array *const *in,
                    const nd_dtype *const_dtypes, nd_dtype cdtype, nd_dtype dtype) {
    return fe_map(fn, op, n, in, const_dtypes, cdtype, dtype);
}

nd_array *nd_fe_body_node(const char *fn, struct nd_body *b, nd_array *const *in, int same) {
    const nd_dtype dt = (nd_dtype)b->out_dtype;
    const int ndim = b->out_ndim;
    nd_fe_rec r;
    if (fe_begin(&r, fn, ND_NODE_MAP, ND_BODY_MAP_OP, b->n_in, dt, dt, ndim, b->out_shape, b->out_nbytes)) return NULL;
    r.node->u.body.body = b;
    r.node->u.body.carry = 0;
    nd_body_ref_take(b);
    for (int k = 0; k < b->n_in; k++) {
        if (same) nd_graph_set_input(r.node, k, in[k], ndim, b->out_shape, in[k]->strides);
        else nd_fe_set_input(r.node, k, in[k], dt, ndim, b->out_shape);
    }
    return fe_end(&r, ndim, b->out_shape);
}

nd_array *nd_fe_astype(const char *fn, nd_array *a, nd_dtype dtype) {
    /* CAST computes in the input's own dtype: nothing to convert first. */
    nd_dtype src = a->dtype;
    return nd_fe_map(fn, ND_OP_CAST, 1, &a, &src, src, dtype);
}

nd_array *nd_fe_strong(const char *fn, nd_array *a) {
    if (!a->weak) {
        a->refs++;
        return a;
    }
    return nd_fe_astype(fn, a, a->dtype);
}

nd_array *nd_fe_view(nd_array *a, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset) {
    nd_array *v = nd_array_new_view(a->buf, a->dtype, ndim, shape, strides, offset);
    if (v) v->readonly = a->readonly;
    return v;
}

nd_array *nd_fe_part_view(nd_array *a, int part) {
    int64_t strides[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++) strides[k] = 2 * a->strides[k];
    nd_array *v = nd_array_new_view(a->buf, nd_dtype_part(a->dtype), a->ndim, a->shape, strides,
                                    2 * a->offset + part);
    if (v) v->readonly = a->readonly;
    return v;
}
