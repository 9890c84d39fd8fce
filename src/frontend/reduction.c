/* Reductions: one REDUCE node each, over any set of axes (a bitmask, so a
 * multi-axis reduction is one node and one kernel, never a chain through
 * temporaries); mean/var/std are composed from SUM and MAP nodes here
 * (they fuse back into one kernel per reduction). The NaN-ignoring forms,
 * count_nonzero, ptp and average are in reduction_nan.c. */
#include "frontend/reduction.h"

#include <math.h>

/* Accumulation (cdtype) and result dtypes, as NumPy (common/ops.h's result
 * column). */
static void reduce_dtypes(nd_reduce_kind kind, nd_dtype t, nd_dtype *cdtype, nd_dtype *dtype) {
    switch (nd_reduce_result_of(kind)) {
    case ND_RRES_WIDEN:
        switch (nd_dtype_kind_of(t)) {
        case ND_KIND_BOOL:
        case ND_KIND_INT: *cdtype = *dtype = ND_INT64; return;
        case ND_KIND_UINT: *cdtype = *dtype = ND_UINT64; return;
        case ND_KIND_FLOAT:
        case ND_KIND_COMPLEX: *cdtype = *dtype = t; return;
        }
        break;
    case ND_RRES_SAME: *cdtype = *dtype = t; return;
    case ND_RRES_INDEX: *cdtype = t; *dtype = ND_INT64; return;
    case ND_RRES_BOOL: *cdtype = *dtype = ND_BOOL; return;
    }
    *cdtype = *dtype = t;
}

int nd_fe_axis_mask(const char *fn, int ndim, int axis, uint32_t *mask) {
    if (axis == ND_ALL_AXES) {
        *mask = ndim ? (uint32_t)((1u << ndim) - 1u) : 0u;
        return 0;
    }
    int ax;
    if (nd_fe_axis(fn, axis, ndim, &ax)) return -1;
    *mask = 1u << ax;
    return 0;
}

int nd_fe_axes_mask(const char *fn, int ndim, int naxes, const int *axes, uint32_t *mask) {
    if (naxes == ND_ALL_AXES) return nd_fe_axis_mask(fn, ndim, ND_ALL_AXES, mask);
    if (naxes < 0) {
        nd_error_set(ND_ERR_ARG,
                     "%s: naxes %d is negative (give the number of axes in `axes`, 0 for no "
                     "reduction, or ND_ALL_AXES for every axis)",
                     fn, naxes);
        return -1;
    }
    if (naxes > 0 && !axes) {
        nd_error_set(ND_ERR_ARG,
                     "%s: axes is NULL with naxes %d (pass naxes axes, or naxes = ND_ALL_AXES "
                     "for every axis)",
                     fn, naxes);
        return -1;
    }
    uint32_t m = 0;
    for (int i = 0; i < naxes; i++) {
        int ax;
        if (nd_fe_axis(fn, axes[i], ndim, &ax)) return -1;
        if (m >> ax & 1u) {
            nd_error_set(ND_ERR_ARG,
                         "%s: axis %d is repeated (axes[%d] = %d names axis %d of an array of "
                         "ndim %d again; give each axis once, in -%d..%d)",
                         fn, axes[i], i, axes[i], ax, ndim, ndim, ndim - 1);
            return -1;
        }
        m |= 1u << ax;
    }
    *mask = m;
    return 0;
}

int64_t nd_fe_reduced_count(const nd_array *a, uint32_t mask) {
    int64_t n = 1;
    for (int k = 0; k < a->ndim; k++)
        if (mask >> k & 1u) n *= a->shape[k];
    return n;
}

nd_array *nd_fe_reduce_mask(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                            int keepdims, const char *what) {
    if (!nd_reduce_has_identity(kind)) {
        for (int k = 0; k < a->ndim; k++)
            if ((mask >> k & 1u) && a->shape[k] == 0) {
                char s[200];
                const char *w = what ? what : nd_reduce_label(kind);
                nd_error_set(ND_ERR_SHAPE,
                             "%s: cannot take the %s of an empty extent (array shape %s, axis "
                             "%d has length 0; %s has no identity)",
                             fn, w, nd_format_shape(s, sizeof s, a->ndim, a->shape), k, w);
                return NULL;
            }
    }
    nd_dtype cdtype, dtype;
    reduce_dtypes(kind, a->dtype, &cdtype, &dtype);
    if (mask == 0) {
        /* No axis to combine over (a 0-d input, or NumPy's axis=()): the
         * values, converted (or index 0 for argmin/argmax). */
        if (nd_reduce_is_arg(kind)) {
            nd_scalar_bits zero = {0};
            return nd_fe_full(fn, ND_INT64, a->ndim, a->shape, zero);
        }
        return nd_fe_astype(fn, a, dtype);
    }
    if (nd_dtype_is_complex(a->dtype)) {
        switch (kind) {
        case ND_REDUCE_SUM: break; /* below */
        case ND_REDUCE_ANY:
        case ND_REDUCE_ALL: { /* of z != 0: the bool cast (either part) */
            nd_array *nz = nd_fe_astype(fn, a, ND_BOOL);
            nd_array *r = nz ? nd_fe_reduce_mask(fn, kind, nz, mask, keepdims, what) : NULL;
            nd_fe_release(nz);
            return r;
        }
        case ND_REDUCE_MIN:
        case ND_REDUCE_MAX:
        case ND_REDUCE_ARGMIN:
        case ND_REDUCE_ARGMAX:
            return nd_fe_complex_extreme(fn, kind, a, mask, keepdims, 0, what);
        case ND_REDUCE_PROD:
            return nd_fe_complex_prod(fn, a, mask, keepdims);
        }
        /* A complex sum is the sums of its parts (each pairwise, as a real
         * sum; the part reads fuse into the reductions' kernels), put
         * together exactly. */
        nd_dtype pt = nd_dtype_part(a->dtype);
        nd_array *part[2] = {NULL, NULL}, *sums[2] = {NULL, NULL}, *out = NULL;
        for (int k = 0; k < 2; k++) {
            part[k] = nd_fe_map(fn, k ? ND_OP_IMAG : ND_OP_REAL, 1, &a, NULL, a->dtype, pt);
            if (part[k]) sums[k] = nd_fe_reduce_mask(fn, kind, part[k], mask, keepdims, what);
        }
        if (sums[0] && sums[1])
            out = nd_fe_map(fn, ND_OP_MAKE_COMPLEX, 2, sums, NULL, a->dtype, a->dtype);
        for (int k = 0; k < 2; k++) {
            nd_fe_release(part[k]);
            nd_fe_release(sums[k]);
        }
        return out;
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

nd_array *nd_fe_reduce(const char *fn, nd_reduce_kind kind, nd_array *a, int axis, int keepdims) {
    uint32_t mask;
    if (nd_fe_axis_mask(fn, a->ndim, axis, &mask)) return NULL;
    return nd_fe_reduce_mask(fn, kind, a, mask, keepdims, NULL);
}

nd_array *nd_fe_sum_div(const char *fn, nd_array *x, uint32_t mask, int keepdims,
                        nd_array *divisor) {
    /* NumPy sums float16 means in float32 and rounds the result, and bool
     * and integer means in float64 (np.mean's dtype='f8' accumulator): an
     * int64 sum of nanosecond timestamps (~1.7e18) would wrap. The cast
     * fuses into the reduction's kernel, so nothing extra is stored. var and
     * std inherit it: their mean is float64 and a - mean promotes to it. */
    nd_dtype t = x->dtype;
    nd_array *src = x;
    /* complex: NumPy divides the complex sum by (n + 0j), Smith's way */
    if (!nd_dtype_is_complex(t) && (t == ND_FLOAT16 || t == ND_BFLOAT16 || !nd_dtype_is_float(t))) {
        src = nd_fe_astype(fn, x, nd_dtype_is_float(t) ? ND_FLOAT32 : ND_FLOAT64);
        if (!src) return NULL;
    }
    nd_array *s = nd_fe_reduce_mask(fn, ND_REDUCE_SUM, src, mask, keepdims, NULL);
    if (src != x) nd_fe_release(src);
    if (!s) return NULL;
    nd_array *m = nd_fe_binary(fn, ND_OP_DIV, s, divisor);
    nd_fe_release(s);
    if (m && (nd_dtype_is_float(t) || nd_dtype_is_complex(t)) && m->dtype != t) {
        nd_array *c = nd_fe_astype(fn, m, t);
        nd_fe_release(m);
        m = c;
    }
    return m;
}

/* sum(x) / d for a number d. */
static nd_array *sum_div_n(const char *fn, nd_array *x, uint32_t mask, int keepdims, double d) {
    nd_array *n = nd_fe_scalar(d);
    if (!n) return NULL;
    nd_array *m = nd_fe_sum_div(fn, x, mask, keepdims, n);
    nd_fe_release(n);
    return m;
}

nd_array *nd_fe_mean_mask(const char *fn, nd_array *a, uint32_t mask, int keepdims) {
    return sum_div_n(fn, a, mask, keepdims, (double)nd_fe_reduced_count(a, mask));
}

nd_array *nd_fe_mean(const char *fn, nd_array *a, int axis, int keepdims) {
    uint32_t mask;
    if (nd_fe_axis_mask(fn, a->ndim, axis, &mask)) return NULL;
    return nd_fe_mean_mask(fn, a, mask, keepdims);
}

nd_array *nd_fe_var_mask(const char *fn, nd_array *a, uint32_t mask, double ddof, int keepdims,
                         int sqrt_) {
    nd_array *mu = nd_fe_mean_mask(fn, a, mask, 1);
    if (!mu) return NULL;
    nd_array *d = nd_fe_binary(fn, ND_OP_SUB, a, mu);
    nd_fe_release(mu);
    if (!d) return NULL;
    nd_array *sq = nd_fe_abs2(fn, d); /* |a - mean|^2: a real result for complex a */
    nd_fe_release(d);
    if (!sq) return NULL;
    /* NumPy's divisor: max(N - ddof, 0), so N <= ddof divides by zero. */
    double n = (double)nd_fe_reduced_count(a, mask) - ddof;
    nd_array *v = sum_div_n(fn, sq, mask, keepdims, n > 0 ? n : 0.0);
    nd_fe_release(sq);
    if (!v || !sqrt_) return v;
    nd_array *s = nd_fe_unary(fn, ND_OP_SQRT, v);
    nd_fe_release(v);
    return s;
}

nd_array *nd_fe_where(const char *fn, nd_array *cond, nd_array *a, nd_array *b) {
    nd_dtype t = nd_fe_result_type(fn, a, b, 0);
    if (t == ND_NUM_DTYPES) return NULL;
    nd_array *in[3] = {cond, a, b};
    nd_dtype consts[3] = {ND_BOOL, t, t};
    return nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, t, t);
}

/* ------------------------------------------------- the plain reducers */

#define KIND(impl, kind)                                                                   \
    nd_array *impl(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) { \
        (void)ddof;                                                                        \
        return nd_fe_reduce_mask(fn, kind, a, mask, keepdims, NULL);                       \
    }
KIND(nd_fe_sum_r, ND_REDUCE_SUM)
KIND(nd_fe_prod_r, ND_REDUCE_PROD)
KIND(nd_fe_min_r, ND_REDUCE_MIN)
KIND(nd_fe_max_r, ND_REDUCE_MAX)
KIND(nd_fe_argmin_r, ND_REDUCE_ARGMIN)
KIND(nd_fe_argmax_r, ND_REDUCE_ARGMAX)
KIND(nd_fe_any_r, ND_REDUCE_ANY)
KIND(nd_fe_all_r, ND_REDUCE_ALL)
#undef KIND

nd_array *nd_fe_mean_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    (void)ddof;
    return nd_fe_mean_mask(fn, a, mask, keepdims);
}
nd_array *nd_fe_var_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    return nd_fe_var_mask(fn, a, mask, ddof, keepdims, 0);
}
nd_array *nd_fe_std_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    return nd_fe_var_mask(fn, a, mask, ddof, keepdims, 1);
}
