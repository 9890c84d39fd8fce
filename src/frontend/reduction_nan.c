/* NaN-ignoring reductions, count_nonzero, ptp and average, composed from
 * the REDUCE kinds of common/ops.h and elementwise MAP nodes (NumPy builds
 * its nan* functions the same way: replace NaN, reduce, fix up all-NaN
 * slices). Each reduction is one node over all its axes; the maps fuse
 * into the kernels that read them. Bool and integer inputs hold no NaN, so
 * there each is its plain reduction. A complex value is NaN when either
 * part is (np.isnan); its nanmin .. nanargmax are reduction_complex.c's. */
#include "frontend/reduction.h"

#include <math.h>

static int has_nan(const nd_array *a) {
    return nd_dtype_is_float(a->dtype) || nd_dtype_is_complex(a->dtype);
}

/* where(isnan(a), v, a), in a's dtype */
static nd_array *replace_nan(const char *fn, nd_array *a, double v) {
    nd_array *isn = nd_fe_unary(fn, ND_OP_ISNAN, a);
    nd_array *s = isn ? nd_fe_scalar(v) : NULL;
    nd_array *r = s ? nd_fe_where(fn, isn, s, a) : NULL;
    nd_fe_release(s);
    nd_fe_release(isn);
    return r;
}

/* all(isnan(a)) over mask: the all-NaN slices. */
static nd_array *all_nan(const char *fn, nd_array *a, uint32_t mask, int keepdims) {
    nd_array *isn = nd_fe_unary(fn, ND_OP_ISNAN, a);
    if (!isn) return NULL;
    nd_array *r = nd_fe_reduce_mask(fn, ND_REDUCE_ALL, isn, mask, keepdims, NULL);
    nd_fe_release(isn);
    return r;
}

/* The count of non-NaN elements over mask (int64). */
static nd_array *count_valid(const char *fn, nd_array *a, uint32_t mask, int keepdims) {
    nd_array *isn = nd_fe_unary(fn, ND_OP_ISNAN, a);
    nd_array *ok = isn ? nd_fe_unary(fn, ND_OP_LOGICAL_NOT, isn) : NULL;
    nd_fe_release(isn);
    if (!ok) return NULL;
    nd_array *r = nd_fe_reduce_mask(fn, ND_REDUCE_SUM, ok, mask, keepdims, NULL);
    nd_fe_release(ok);
    return r;
}

/* kind over where(isnan(a), fill, a); then, where fix is set, the all-NaN
 * slices get fix_value instead (a NaN, or index -1). */
static nd_array *reduce_filled(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                               int keepdims, double fill, const char *what, int fix,
                               nd_array *fix_value) {
    nd_array *x = replace_nan(fn, a, fill);
    if (!x) return NULL;
    nd_array *r = nd_fe_reduce_mask(fn, kind, x, mask, keepdims, what);
    nd_fe_release(x);
    if (!r || !fix) return r;
    nd_array *alln = all_nan(fn, a, mask, keepdims);
    nd_array *out = alln ? nd_fe_where(fn, alln, fix_value, r) : NULL;
    nd_fe_release(alln);
    nd_fe_release(r);
    return out;
}

nd_array *nd_fe_nansum_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_sum_r(fn, a, mask, keepdims, ddof);
    return reduce_filled(fn, ND_REDUCE_SUM, a, mask, keepdims, 0.0, NULL, 0, NULL);
}

nd_array *nd_fe_nanprod_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_prod_r(fn, a, mask, keepdims, ddof);
    return reduce_filled(fn, ND_REDUCE_PROD, a, mask, keepdims, 1.0, NULL, 0, NULL);
}

/* nanmin/nanmax: NaN replaced by the value that never wins (+inf for min),
 * an all-NaN slice NaN (NumPy 2). */
static nd_array *nan_extreme(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                             int keepdims, double fill, const char *what) {
    nd_array *nan = nd_fe_scalar(NAN);
    if (!nan) return NULL;
    nd_array *r = reduce_filled(fn, kind, a, mask, keepdims, fill, what, 1, nan);
    nd_fe_release(nan);
    return r;
}

nd_array *nd_fe_nanmin_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_min_r(fn, a, mask, keepdims, ddof);
    if (nd_dtype_is_complex(a->dtype))
        return nd_fe_complex_extreme(fn, ND_REDUCE_MIN, a, mask, keepdims, 1, "nanmin");
    return nan_extreme(fn, ND_REDUCE_MIN, a, mask, keepdims, INFINITY, "nanmin");
}

nd_array *nd_fe_nanmax_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_max_r(fn, a, mask, keepdims, ddof);
    if (nd_dtype_is_complex(a->dtype))
        return nd_fe_complex_extreme(fn, ND_REDUCE_MAX, a, mask, keepdims, 1, "nanmax");
    return nan_extreme(fn, ND_REDUCE_MAX, a, mask, keepdims, -INFINITY, "nanmax");
}

/* nanargmin/nanargmax: NumPy's rule (NaN -> +inf for argmin, -inf for
 * argmax, then the first extreme), an all-NaN slice -1 (reductions.h). */
static nd_array *nan_arg(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                         int keepdims, double fill, const char *what) {
    nd_scalar_bits minus1 = {.i = -1};
    nd_array *m1 = nd_fe_full(fn, ND_INT64, 0, NULL, minus1);
    if (!m1) return NULL;
    nd_array *r = reduce_filled(fn, kind, a, mask, keepdims, fill, what, 1, m1);
    nd_fe_release(m1);
    return r;
}

nd_array *nd_fe_nanargmin_r(const char *fn, nd_array *a, uint32_t mask, int keepdims,
                            double ddof) {
    if (!has_nan(a)) return nd_fe_argmin_r(fn, a, mask, keepdims, ddof);
    if (nd_dtype_is_complex(a->dtype))
        return nd_fe_complex_extreme(fn, ND_REDUCE_ARGMIN, a, mask, keepdims, 1, "nanargmin");
    return nan_arg(fn, ND_REDUCE_ARGMIN, a, mask, keepdims, INFINITY, "nanargmin");
}

nd_array *nd_fe_nanargmax_r(const char *fn, nd_array *a, uint32_t mask, int keepdims,
                            double ddof) {
    if (!has_nan(a)) return nd_fe_argmax_r(fn, a, mask, keepdims, ddof);
    if (nd_dtype_is_complex(a->dtype))
        return nd_fe_complex_extreme(fn, ND_REDUCE_ARGMAX, a, mask, keepdims, 1, "nanargmax");
    return nan_arg(fn, ND_REDUCE_ARGMAX, a, mask, keepdims, -INFINITY, "nanargmax");
}

/* x (a reduction kept with keepdims) seen without the reduced axes. */
static nd_array *drop_reduced(const char *fn, nd_array *x, const nd_array *a, uint32_t mask) {
    int n = 0;
    int64_t shape[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++)
        if (!(mask >> k & 1u)) shape[n++] = a->shape[k];
    return nd_fe_reshape(fn, x, n, shape);
}

nd_array *nd_fe_nanmean_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_mean_r(fn, a, mask, keepdims, ddof);
    nd_array *cnt = count_valid(fn, a, mask, keepdims);
    nd_array *x = cnt ? replace_nan(fn, a, 0.0) : NULL;
    nd_array *r = x ? nd_fe_sum_div(fn, x, mask, keepdims, cnt) : NULL;
    nd_fe_release(x);
    nd_fe_release(cnt);
    return r;
}

/* var over the non-NaN elements: deviations from their mean, squared, NaN
 * counted as 0, divided by max(count - ddof, 0) (NumPy's nanvar). */
static nd_array *nan_var(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    nd_array *cnt = count_valid(fn, a, mask, 1), *x = NULL, *mu = NULL, *d = NULL, *sq = NULL,
             *sq0 = NULL, *dof = NULL, *div = NULL, *zero = NULL, *dd = NULL, *divk = NULL,
             *v = NULL;
    if (!cnt || !(x = replace_nan(fn, a, 0.0))) goto done;
    if (!(mu = nd_fe_sum_div(fn, x, mask, 1, cnt))) goto done;
    if (!(d = nd_fe_binary(fn, ND_OP_SUB, a, mu)) || !(sq = nd_fe_abs2(fn, d)))
        goto done;
    if (!(sq0 = replace_nan(fn, sq, 0.0)) || !(dd = nd_fe_scalar(ddof)) || !(zero = nd_fe_scalar(0)))
        goto done;
    if (!(dof = nd_fe_binary(fn, ND_OP_SUB, cnt, dd)) ||
        !(div = nd_fe_binary(fn, ND_OP_MAX, dof, zero)))
        goto done;
    if (!(divk = keepdims ? (div->refs++, div) : drop_reduced(fn, div, a, mask))) goto done;
    v = nd_fe_sum_div(fn, sq0, mask, keepdims, divk);
done:
    nd_fe_release(divk);
    nd_fe_release(div);
    nd_fe_release(dof);
    nd_fe_release(zero);
    nd_fe_release(dd);
    nd_fe_release(sq0);
    nd_fe_release(sq);
    nd_fe_release(d);
    nd_fe_release(mu);
    nd_fe_release(x);
    nd_fe_release(cnt);
    return v;
}

nd_array *nd_fe_nanvar_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_var_r(fn, a, mask, keepdims, ddof);
    return nan_var(fn, a, mask, keepdims, ddof);
}

nd_array *nd_fe_nanstd_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    if (!has_nan(a)) return nd_fe_std_r(fn, a, mask, keepdims, ddof);
    nd_array *v = nan_var(fn, a, mask, keepdims, ddof);
    if (!v) return NULL;
    nd_array *s = nd_fe_unary(fn, ND_OP_SQRT, v);
    nd_fe_release(v);
    return s;
}

nd_array *nd_fe_count_nonzero_r(const char *fn, nd_array *a, uint32_t mask, int keepdims,
                                double ddof) {
    (void)ddof;
    /* x != 0 is the bool cast (NaN is nonzero, -0.0 is not) */
    nd_array *nz = nd_fe_astype(fn, a, ND_BOOL);
    if (!nz) return NULL;
    nd_array *r = nd_fe_reduce_mask(fn, ND_REDUCE_SUM, nz, mask, keepdims, NULL);
    nd_fe_release(nz);
    return r;
}

nd_array *nd_fe_ptp_r(const char *fn, nd_array *a, uint32_t mask, int keepdims, double ddof) {
    (void)ddof;
    if (a->dtype == ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE,
                     "%s: ptp of a bool array is not defined (NumPy has no boolean subtract); "
                     "use nd_astype to an integer dtype first",
                     fn);
        return NULL;
    }
    nd_array *mx = nd_fe_reduce_mask(fn, ND_REDUCE_MAX, a, mask, keepdims, "ptp");
    nd_array *mn = mx ? nd_fe_reduce_mask(fn, ND_REDUCE_MIN, a, mask, keepdims, "ptp") : NULL;
    nd_array *r = mn ? nd_fe_binary(fn, ND_OP_SUB, mx, mn) : NULL;
    nd_fe_release(mn);
    nd_fe_release(mx);
    return r;
}

/* The weights seen in a's shape: themselves when of a's shape, or 1-d
 * along the one reduced axis (broadcast over the others). */
static nd_array *weights_view(const char *fn, nd_array *a, uint32_t mask, nd_array *w) {
    int same = w->ndim == a->ndim;
    for (int k = 0; same && k < a->ndim; k++) same = w->shape[k] == a->shape[k];
    if (same) {
        w->refs++;
        return w;
    }
    int nred = 0, ax = -1;
    for (int k = 0; k < a->ndim; k++)
        if (mask >> k & 1u) nred++, ax = k;
    if (nred == 1 && w->ndim == 1 && w->shape[0] == a->shape[ax]) {
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        for (int k = 0; k < a->ndim; k++) {
            shape[k] = k == ax ? w->shape[0] : 1;
            strides[k] = k == ax ? w->strides[0] : 0;
        }
        return nd_fe_view(w, a->ndim, shape, strides, w->offset);
    }
    char sa[200], sw[200];
    nd_format_shape(sa, sizeof sa, a->ndim, a->shape);
    nd_format_shape(sw, sizeof sw, w->ndim, w->shape);
    if (nred == 1)
        nd_error_set(ND_ERR_SHAPE,
                     "%s: weights of shape %s do not fit a of shape %s averaged over axis %d "
                     "(give weights of a's shape, or 1-d of length %lld)",
                     fn, sw, sa, ax, (long long)a->shape[ax]);
    else
        nd_error_set(ND_ERR_SHAPE,
                     "%s: weights of shape %s do not fit a of shape %s averaged over %d axes "
                     "(give weights of a's shape; 1-d weights need exactly one reduced axis)",
                     fn, sw, sa, nred);
    return NULL;
}

nd_array *nd_fe_average(const char *fn, nd_array *a, uint32_t mask, nd_array *weights,
                        int keepdims) {
    if (!weights) return nd_fe_mean_mask(fn, a, mask, keepdims);
    nd_array *w = nd_fe_strong(fn, weights);
    if (!w) return NULL;
    /* NumPy: result_type(a, weights), and float64 at least for bool/int a */
    nd_dtype rt = nd_promote(a->dtype, w->dtype);
    if (!nd_dtype_is_float(a->dtype)) rt = nd_promote(rt, ND_FLOAT64);
    nd_array *wv = weights_view(fn, a, mask, w), *ac = NULL, *wc = NULL, *aw = NULL, *num = NULL,
             *den = NULL, *r = NULL;
    nd_fe_release(w);
    if (!wv || !(ac = nd_fe_astype(fn, a, rt)) || !(wc = nd_fe_astype(fn, wv, rt))) goto done;
    if (!(aw = nd_fe_binary(fn, ND_OP_MUL, ac, wc))) goto done;
    if (!(num = nd_fe_reduce_mask(fn, ND_REDUCE_SUM, aw, mask, keepdims, NULL))) goto done;
    if (!(den = nd_fe_reduce_mask(fn, ND_REDUCE_SUM, wc, mask, keepdims, NULL))) goto done;
    r = nd_fe_binary(fn, ND_OP_DIV, num, den);
done:
    nd_fe_release(den);
    nd_fe_release(num);
    nd_fe_release(aw);
    nd_fe_release(wc);
    nd_fe_release(ac);
    nd_fe_release(wv);
    return r;
}
