/* cov, corrcoef, correlate and convolve (include/nd/statistics.h), composed
 * from lazy primitives as NumPy defines them: cov is the centred rows'
 * product X X^T / (N - ddof) (mean, subtract, matmul); corrcoef divides by
 * the standard deviations on the diagonal; correlate sums, for each output,
 * the products of a sliding window of the zero-padded signal with the taps:
 * one reduction over a strided window view (shape (outputs, taps), both
 * strides 1) of an elementwise product, which the scheduler fuses into one
 * kernel with no window ever stored. */
#include <math.h>

#include "frontend/compose.h"
#include "frontend/shaping_internal.h"

/* ------------------------------------------------------------ cov, corrcoef */

/* np.cov(m, rowvar, bias, ddof) in float64, not yet squeezed. */
static nd_array *cov2d(const char *fn, nd_array *m, int rowvar, int bias, int ddof) {
    if (nd_fe_arg(fn, "m", m) || nd_runtime_ensure() != ND_OK) return NULL;
    if (m->ndim > 2) {
        nd_error_set(ND_ERR_SHAPE, "%s: m must be 1-d or 2-d, got %d-d", fn, m->ndim);
        return NULL;
    }
    if (!nd_dtype_is_float(m->dtype) && !nd_dtype_is_int(m->dtype) && m->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: m of dtype %s (give real numbers)", fn, nd_dtype_name(m->dtype));
        return NULL;
    }
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    /* np.atleast_2d: a 1-d m is one variable (a row). */
    int map1[2] = {-1, 0}, tr[2] = {1, 0};
    nd_array *x = nd_fe_tmp(&t, m->ndim == 2 ? nd_fe_with_axes(m, 2, rowvar ? (int[]){0, 1} : tr)
                                             : nd_fe_with_axes(m, 2, m->ndim == 1 ? map1 : (int[]){-1, -1}));
    nd_array *xf = x ? nd_fe_tmp(&t, nd_fe_astype(fn, x, ND_FLOAT64)) : NULL;
    nd_array *mean = xf ? nd_fe_tmp(&t, nd_fe_mean(fn, xf, 1, 1)) : NULL;
    nd_array *xc = mean ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_SUB, xf, mean)) : NULL;
    nd_array *xt = xc ? nd_fe_tmp(&t, nd_fe_with_axes(xc, 2, tr)) : NULL;
    nd_array *c = xt ? nd_fe_tmp(&t, nd_fe_matmul(fn, xc, xt)) : NULL;
    if (c) {
        if (ddof < 0) ddof = bias ? 0 : 1;
        /* NumPy: fact <= 0 warns and divides by 0 (inf and NaN follow). */
        double fact = (double)x->shape[1] - ddof;
        nd_array *k = nd_fe_tmp(&t, nd_fe_scalar(1.0 / (fact > 0 ? fact : 0.0)));
        if (k) result = nd_fe_binary(fn, ND_OP_MUL, c, k);
    }
    nd_fe_temps_release(&t);
    return result;
}

/* NumPy's c.squeeze() for a variables x variables matrix. */
static nd_array *squeezed(const char *fn, nd_array *c) {
    if (!c || c->shape[0] != 1) return c;
    nd_array *s = nd_fe_reshape(fn, c, 0, NULL);
    nd_fe_release(c);
    return s;
}

nd_array *nd_cov(nd_array *m, int rowvar, int bias, int ddof) {
    ND_API_GUARD();
    static const char fn[] = "nd_cov";
    return nd_runtime_track(squeezed(fn, cov2d(fn, m, rowvar, bias, ddof)));
}

nd_array *nd_corrcoef(nd_array *x, int rowvar) {
    ND_API_GUARD();
    static const char fn[] = "nd_corrcoef";
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *c = nd_fe_tmp(&t, cov2d(fn, x, rowvar, 0, -1));
    if (!c) goto done;
    /* c / d[:, None] / d[None, :] with d = sqrt(diag(c)), clipped to
     * [-1, 1] (NaN stays NaN); one variable gives c / c. */
    nd_array *diag = nd_fe_tmp(&t, nd_fe_diagonal(fn, c, 0, 0, 1));
    nd_array *d = diag ? nd_fe_tmp(&t, nd_fe_unary(fn, ND_OP_SQRT, diag)) : NULL;
    nd_array *col = d ? nd_fe_tmp(&t, nd_fe_with_axes(d, 2, (int[]){0, -1})) : NULL;
    nd_array *row = d ? nd_fe_tmp(&t, nd_fe_with_axes(d, 2, (int[]){-1, 0})) : NULL;
    nd_array *q1 = col ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_DIV, c, col)) : NULL;
    nd_array *q2 = q1 && row ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_DIV, q1, row)) : NULL;
    nd_array *one = nd_fe_tmp(&t, nd_fe_scalar(1.0)), *minus = nd_fe_tmp(&t, nd_fe_scalar(-1.0));
    if (c->shape[0] == 1) {
        result = squeezed(fn, nd_fe_binary(fn, ND_OP_DIV, c, c));
        goto done;
    }
    nd_array *lo = q2 && one ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MIN, q2, one)) : NULL;
    if (lo && minus) result = nd_fe_binary(fn, ND_OP_MAX, lo, minus);
done:
    nd_fe_temps_release(&t);
    return nd_runtime_track(result);
}

/* ------------------------------------------------------ correlate, convolve */

static int check_signal(const char *fn, const char *name, nd_array *a) {
    if (nd_fe_arg(fn, name, a)) return -1;
    if (a->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: %s must be 1-d, got %d-d", fn, name, a->ndim);
        return -1;
    }
    if (a->shape[0] == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: %s cannot be empty", fn, name);
        return -1;
    }
    if (!nd_dtype_is_float(a->dtype) && !nd_dtype_is_int(a->dtype) && a->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: %s of dtype %s (give real numbers)", fn, name, nd_dtype_name(a->dtype));
        return -1;
    }
    return 0;
}

/* z[k] = sum_j a[k - left + j] * v[j] over the zero-padded a, with
 * len(a) >= len(v); NumPy's modes set left (full: m - 1, same: m / 2,
 * valid: 0) and the output length. */
static nd_array *correlate_long(const char *fn, nd_array *a, nd_array *v, nd_conv_mode mode) {
    const int64_t n = a->shape[0], m = v->shape[0];
    int64_t left = mode == ND_CONV_FULL ? m - 1 : mode == ND_CONV_SAME ? m / 2 : 0;
    int64_t outs = mode == ND_CONV_FULL ? n + m - 1 : mode == ND_CONV_SAME ? n : n - m + 1;
    int64_t right = outs + m - 1 - n - left;
    nd_dtype rt = nd_fe_result_type(fn, a, v, 0);
    if (rt == ND_NUM_DTYPES) return NULL;
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *ac = nd_fe_tmp(&t, nd_fe_astype(fn, a, rt)), *vc = nd_fe_tmp(&t, nd_fe_astype(fn, v, rt));
    nd_array *padded = ac;
    if (ac && (left || right)) {
        nd_array *zl = nd_fe_tmp(&t, nd_fe_full(fn, rt, 1, &left, (nd_scalar_bits){0}));
        nd_array *zr = nd_fe_tmp(&t, nd_fe_full(fn, rt, 1, &right, (nd_scalar_bits){0}));
        nd_array *parts[3] = {zl, ac, zr};
        padded = zl && zr ? nd_fe_tmp(&t, nd_fe_concatenate(fn, 3, parts, 0)) : NULL;
    }
    if (!padded || !vc) goto done;
    /* The (outs, m) window view: element (k, j) is padded[k + j]. */
    int64_t wsh[2] = {outs, m}, wst[2] = {padded->strides[0], padded->strides[0]};
    nd_array *win = nd_fe_tmp(&t, nd_fe_view(padded, 2, wsh, wst, padded->offset));
    nd_array *prod = win ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, win, vc)) : NULL;
    nd_array *sum = prod ? nd_fe_tmp(&t, nd_fe_reduce(fn, ND_REDUCE_SUM, prod, 1, 0)) : NULL;
    /* sum widens small integers and bool; NumPy keeps the common dtype. */
    if (sum) result = sum->dtype == rt ? (sum->refs++, sum) : nd_fe_astype(fn, sum, rt);
done:
    nd_fe_temps_release(&t);
    return result;
}

static int check_mode(const char *fn, nd_conv_mode mode) {
    if (mode == ND_CONV_FULL || mode == ND_CONV_SAME || mode == ND_CONV_VALID) return 0;
    nd_error_set(ND_ERR_ARG, "%s: mode %d is not one of ND_CONV_FULL, ND_CONV_SAME, ND_CONV_VALID", fn, (int)mode);
    return -1;
}

nd_array *nd_correlate(nd_array *a, nd_array *v, nd_conv_mode mode) {
    ND_API_GUARD();
    static const char fn[] = "nd_correlate";
    if (check_signal(fn, "a", a) || check_signal(fn, "v", v) || check_mode(fn, mode) ||
        nd_runtime_ensure() != ND_OK)
        return NULL;
    if (a->shape[0] >= v->shape[0]) return nd_runtime_track(correlate_long(fn, a, v, mode));
    /* NumPy swaps a shorter a with v and reverses the result. */
    nd_array *z = correlate_long(fn, v, a, mode), *r = NULL;
    if (z) {
        r = nd_fe_axis_slice(z, 0, z->shape[0] - 1, z->shape[0], -1);
        nd_fe_release(z);
    }
    return nd_runtime_track(r);
}

nd_array *nd_convolve(nd_array *a, nd_array *v, nd_conv_mode mode) {
    ND_API_GUARD();
    static const char fn[] = "nd_convolve";
    if (check_signal(fn, "a", a) || check_signal(fn, "v", v) || check_mode(fn, mode) ||
        nd_runtime_ensure() != ND_OK)
        return NULL;
    /* NumPy: the longer one is the signal, the other reversed is the
     * filter: correlate(a, v[::-1]). */
    if (v->shape[0] > a->shape[0]) {
        nd_array *s = a;
        a = v, v = s;
    }
    nd_array *rv = nd_fe_axis_slice(v, 0, v->shape[0] - 1, v->shape[0], -1), *z = NULL;
    if (rv) z = correlate_long(fn, a, rv, mode);
    if (rv) nd_fe_release(rv);
    return nd_runtime_track(z);
}
