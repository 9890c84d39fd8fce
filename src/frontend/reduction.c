/* Reductions: one REDUCE node each; mean/var/std are composed from SUM and
 * MAP nodes here (they fuse back into one kernel per reduction). */
#include "frontend/frontend.h"

static const char *const reduce_names[] = {"sum", "prod", "min", "max", "argmin", "argmax",
                                           "any", "all"};

/* Accumulation (cdtype) and result dtypes, as NumPy. */
static void reduce_dtypes(nd_reduce_kind kind, nd_dtype t, nd_dtype *cdtype, nd_dtype *dtype) {
    switch (kind) {
    case ND_REDUCE_SUM:
    case ND_REDUCE_PROD:
        switch (nd_dtype_kind_of(t)) {
        case ND_KIND_BOOL: case ND_KIND_INT: *cdtype = *dtype = ND_INT64; break;
        case ND_KIND_UINT: *cdtype = *dtype = ND_UINT64; break;
        default: *cdtype = *dtype = t; break;
        }
        break;
    case ND_REDUCE_ANY:
    case ND_REDUCE_ALL: *cdtype = *dtype = ND_BOOL; break;
    case ND_REDUCE_ARGMIN:
    case ND_REDUCE_ARGMAX: *cdtype = t; *dtype = ND_INT64; break;
    default: *cdtype = *dtype = t; break;
    }
}

/* Axis bitmask and the kept shape (keepdims: reduced axes stay as 1). */
static int reduce_axes(const char *fn, const nd_array *a, int axis, uint32_t *mask) {
    if (axis == ND_ALL_AXES) {
        *mask = a->ndim ? (uint32_t)((1u << a->ndim) - 1u) : 0u;
        return 0;
    }
    int ax;
    if (nd_fe_axis(fn, axis, a->ndim, &ax)) return -1;
    *mask = 1u << ax;
    return 0;
}

nd_array *nd_fe_reduce(const char *fn, nd_reduce_kind kind, nd_array *a, int axis, int keepdims) {
    uint32_t mask;
    if (reduce_axes(fn, a, axis, &mask)) return NULL;
    if (kind == ND_REDUCE_MIN || kind == ND_REDUCE_MAX || kind == ND_REDUCE_ARGMIN ||
        kind == ND_REDUCE_ARGMAX) {
        for (int k = 0; k < a->ndim; k++)
            if ((mask >> k & 1u) && a->shape[k] == 0) {
                char s[200];
                nd_error_set(ND_ERR_SHAPE,
                             "%s: cannot take the %s of an empty extent (array shape %s, axis "
                             "%d has length 0; %s has no identity)",
                             fn, reduce_names[kind], nd_format_shape(s, sizeof s, a->ndim, a->shape),
                             k, reduce_names[kind]);
                return NULL;
            }
    }
    nd_dtype cdtype, dtype;
    reduce_dtypes(kind, a->dtype, &cdtype, &dtype);
    if (mask == 0) {
        /* A 0-d input: nothing to combine. The value itself, converted (or
         * index 0 for argmin/argmax), without a reduction over no axes. */
        if (kind == ND_REDUCE_ARGMIN || kind == ND_REDUCE_ARGMAX) {
            nd_scalar_bits zero = {0};
            return nd_fe_full(fn, ND_INT64, 0, NULL, zero);
        }
        return nd_fe_astype(fn, a, dtype);
    }
    int ondim = 0;
    int64_t oshape[ND_MAX_DIMS], kshape[ND_MAX_DIMS], kstrides[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++) {
        kshape[k] = (mask >> k & 1u) ? 1 : a->shape[k];
        if (!(mask >> k & 1u)) oshape[ondim++] = a->shape[k];
    }
    size_t nbytes;
    if (nd_fe_nbytes(fn, ondim, oshape, dtype, &nbytes)) return NULL;
    /* A weak scalar has no producer to fuse: read it as a constant-free
     * strong 0-d array. */
    nd_array *src = nd_fe_strong(fn, a);
    if (!src) return NULL;
    nd_fe_rec r;
    nd_array *out = NULL;
    if (!nd_fe_begin(&r, fn, ND_NODE_REDUCE, kind, 1, dtype, cdtype, ondim, oshape, nbytes)) {
        r.node->u.reduce.axes = mask;
        nd_graph_set_input(r.node, 0, src, src->ndim, src->shape, src->strides);
        out = nd_fe_end(&r, ondim, oshape);
    }
    nd_fe_release(src);
    if (!out || !keepdims) return out;
    /* keepdims: the same buffer seen with the reduced axes as length 1. */
    nd_contiguous_strides(a->ndim, kshape, kstrides);
    nd_array *v = nd_fe_view(out, a->ndim, kshape, kstrides, 0);
    nd_fe_release(out);
    return v;
}

static int64_t reduced_count(const nd_array *a, int axis) {
    if (axis == ND_ALL_AXES) return nd_shape_size(a->ndim, a->shape);
    int ax = axis < 0 ? axis + a->ndim : axis;
    return a->shape[ax];
}

nd_array *nd_fe_mean(const char *fn, nd_array *a, int axis, int keepdims) {
    uint32_t mask;
    if (reduce_axes(fn, a, axis, &mask)) return NULL;
    /* NumPy sums float16 means in float32 and rounds the result, and bool
     * and integer means in float64 (np.mean's dtype='f8' accumulator): an
     * int64 sum of nanosecond timestamps (~1.7e18) would wrap. The cast
     * fuses into the reduction's kernel, so nothing extra is stored. var and
     * std inherit it: their mean is float64 and a - mean promotes to it. */
    nd_dtype t = a->dtype;
    nd_array *src = a;
    if (t == ND_FLOAT16 || t == ND_BFLOAT16 || !nd_dtype_is_float(t)) {
        src = nd_fe_astype(fn, a, nd_dtype_is_float(t) ? ND_FLOAT32 : ND_FLOAT64);
        if (!src) return NULL;
    }
    nd_array *s = nd_fe_reduce(fn, ND_REDUCE_SUM, src, axis, keepdims);
    if (src != a) nd_fe_release(src);
    if (!s) return NULL;
    nd_array *n = nd_fe_scalar((double)reduced_count(a, axis));
    if (!n) {
        nd_fe_release(s);
        return NULL;
    }
    nd_array *m = nd_fe_binary(fn, ND_OP_DIV, s, n);
    nd_fe_release(s);
    nd_fe_release(n);
    if (m && nd_dtype_is_float(t) && m->dtype != t) {
        nd_array *c = nd_fe_astype(fn, m, t);
        nd_fe_release(m);
        m = c;
    }
    return m;
}

static nd_array *var_impl(const char *fn, nd_array *a, int axis) {
    nd_array *mu = nd_fe_mean(fn, a, axis, 1);
    if (!mu) return NULL;
    nd_array *d = nd_fe_binary(fn, ND_OP_SUB, a, mu);
    nd_fe_release(mu);
    if (!d) return NULL;
    nd_array *sq = nd_fe_unary(fn, ND_OP_SQUARE, d);
    nd_fe_release(d);
    if (!sq) return NULL;
    nd_array *v = nd_fe_mean(fn, sq, axis, 0);
    nd_fe_release(sq);
    return v;
}

static int check(const char *fn, nd_array *a) {
    if (nd_fe_arg(fn, "a", a)) return -1;
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

#define REDUCE(name, kind)                                                                 \
    nd_array *name(nd_array *a, int axis) {                                                \
        ND_API_GUARD();                                                                    \
        if (check(#name, a)) return NULL;                                                  \
        return nd_runtime_track(nd_fe_reduce(#name, kind, a, axis, 0));                    \
    }
REDUCE(nd_sum, ND_REDUCE_SUM)
REDUCE(nd_prod, ND_REDUCE_PROD)
REDUCE(nd_min, ND_REDUCE_MIN)
REDUCE(nd_max, ND_REDUCE_MAX)
REDUCE(nd_argmin, ND_REDUCE_ARGMIN)
REDUCE(nd_argmax, ND_REDUCE_ARGMAX)
REDUCE(nd_any, ND_REDUCE_ANY)
REDUCE(nd_all, ND_REDUCE_ALL)
#undef REDUCE

nd_array *nd_mean(nd_array *a, int axis) {
    ND_API_GUARD();
    if (check("nd_mean", a)) return NULL;
    return nd_runtime_track(nd_fe_mean("nd_mean", a, axis, 0));
}

nd_array *nd_var(nd_array *a, int axis) {
    ND_API_GUARD();
    if (check("nd_var", a)) return NULL;
    return nd_runtime_track(var_impl("nd_var", a, axis));
}

nd_array *nd_std(nd_array *a, int axis) {
    ND_API_GUARD();
    if (check("nd_std", a)) return NULL;
    nd_array *v = var_impl("nd_std", a, axis);
    if (!v) return NULL;
    nd_array *s = nd_fe_unary("nd_std", ND_OP_SQRT, v);
    nd_fe_release(v);
    return nd_runtime_track(s);
}
