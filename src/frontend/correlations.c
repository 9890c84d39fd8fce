/* cov, corrcoef, correlate and convolve (include/nd/statistics.h), composed
 * from lazy primitives as NumPy defines them: cov is the centred rows'
 * product X X^T / (N - ddof) (mean, subtract, matmul); corrcoef divides by
 * the standard deviations on the diagonal; correlate sums, for each output,
 * the products of a sliding window of the zero-padded signal with the taps:
 * one reduction over a strided window view (shape (outputs, taps), both
 * strides 1) of an elementwise product, which the scheduler fuses into one
 * kernel with no window ever stored. */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "frontend/compose.h"
#include "frontend/convolve.h"
#include "frontend/shaping_internal.h"

/* ------------------------------------------------------------ cov, corrcoef */

static int check_real(const char *fn, const char *name, nd_array *a) {
    if (nd_fe_arg(fn, name, a)) return -1;
    if (a->ndim > 2) {
        nd_error_set(ND_ERR_SHAPE, "%s: %s must be 1-d or 2-d, got %d-d", fn, name, a->ndim);
        return -1;
    }
    if (!nd_dtype_is_float(a->dtype) && !nd_dtype_is_int(a->dtype) && a->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: %s of dtype %s (give real numbers)", fn, name, nd_dtype_name(a->dtype));
        return -1;
    }
    return 0;
}

/* np.array(a, ndmin=2) in float64, transposed when `transpose`. */
static nd_array *rows2d(const char *fn, nd_array *a, int transpose) {
    static const int keep[2] = {0, 1}, tr[2] = {1, 0}, row[2] = {-1, 0}, one[2] = {-1, -1};
    nd_array *x = nd_fe_with_axes(a, 2, a->ndim == 2 ? (transpose ? tr : keep) : a->ndim == 1 ? row : one);
    nd_array *xf = x ? nd_fe_astype(fn, x, ND_FLOAT64) : NULL;
    nd_fe_release(x);
    return xf;
}

/* A 1-d weight vector of n observations read to the host as float64
 * (a sync point), checked as NumPy's cov checks it. NULL on error. */
static double *read_weights(const char *fn, const char *name, nd_array *w, int64_t n, int integral) {
    if (nd_fe_arg(fn, name, w)) return NULL;
    if (w->ndim != 1) {
        nd_error_set(ND_ERR_SHAPE, "%s: %s must be 1-d (one weight per observation), got %d-d", fn, name, w->ndim);
        return NULL;
    }
    if (w->shape[0] != n) {
        nd_error_set(ND_ERR_SHAPE, "%s: %lld %s for %lld observations", fn, (long long)w->shape[0], name,
                     (long long)n);
        return NULL;
    }
    if (!nd_dtype_is_float(w->dtype) && !nd_dtype_is_int(w->dtype) && w->dtype != ND_BOOL) {
        nd_error_set(ND_ERR_DTYPE, "%s: %s of dtype %s (give real numbers)", fn, name, nd_dtype_name(w->dtype));
        return NULL;
    }
    double *v = nd_malloc((size_t)(n ? n : 1) * sizeof *v);
    nd_array *wf = v ? nd_fe_astype(fn, w, ND_FLOAT64) : NULL;
    nd_status st = !v ? nd_error_set(ND_ERR_OOM, "%s: out of host memory reading %lld %s", fn, (long long)n, name)
                   : !wf ? nd_last_status() : nd_to_host(wf, v, (size_t)n * sizeof *v);
    nd_fe_release(wf);
    for (int64_t i = 0; i < n && st == ND_OK; i++) {
        if (integral && v[i] != nearbyint(v[i]))
            st = nd_error_set(ND_ERR_ARG, "%s: fweights must be integers, %s[%lld] is %g", fn, name, (long long)i, v[i]);
        else if (v[i] < 0)
            st = nd_error_set(ND_ERR_ARG, "%s: %s cannot be negative, %s[%lld] is %g", fn, name, name, (long long)i,
                              v[i]);
    }
    if (st != ND_OK) {
        free(v);
        return NULL;
    }
    return v;
}

/* NumPy's cov(m, y, rowvar, bias, ddof, fweights, aweights) in float64, not
 * yet squeezed: X (variables x N), w the product of the weights, avg the
 * weighted means, X -= avg, c = X (X w)^T / fact. */
static nd_array *cov_full(const char *fn, nd_array *m, nd_array *y, int rowvar, int bias, int ddof,
                          nd_array *fweights, nd_array *aweights) {
    if (check_real(fn, "m", m) || (y && check_real(fn, "y", y)) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    double *fw = NULL, *aw = NULL, *w = NULL;
    nd_array *x = nd_fe_tmp(&t, rows2d(fn, m, !rowvar && m->ndim != 1));
    if (!x) goto done;
    if (x->shape[0] == 0) {
        /* NumPy returns np.array([]).reshape(0, 0) before looking at y or
         * the weights. */
        result = nd_fe_full(fn, ND_FLOAT64, 2, (int64_t[]){0, 0}, (nd_scalar_bits){0});
        goto done;
    }
    if (y) {
        /* NumPy transposes y by its own rows (after ndmin=2), not by y.ndim. */
        nd_array *y2 = nd_fe_tmp(&t, rows2d(fn, y, 0));
        if (y2 && !rowvar && y2->shape[0] != 1) y2 = nd_fe_tmp(&t, nd_fe_with_axes(y2, 2, (int[]){1, 0}));
        if (!y2) goto done;
        if (y2->shape[1] != x->shape[1]) {
            nd_error_set(ND_ERR_SHAPE, "%s: m has %lld observations and y %lld", fn, (long long)x->shape[1],
                         (long long)y2->shape[1]);
            goto done;
        }
        nd_array *parts[2] = {x, y2};
        if (!(x = nd_fe_tmp(&t, nd_fe_concatenate(fn, 2, parts, 0)))) goto done;
    }
    const int64_t n = x->shape[1];
    if (ddof == ND_DDOF_NONE) ddof = bias ? 0 : 1;
    if (fweights && !(fw = read_weights(fn, "fweights", fweights, n, 1))) goto done;
    if (aweights && !(aw = read_weights(fn, "aweights", aweights, n, 0))) goto done;
    double fact = (double)n - ddof;
    nd_array *avg, *xw;
    if (fw || aw) {
        /* w = fweights * aweights; NumPy's average(X, 1, w) and the
         * normalisation from the weights' sums (taken here in order). */
        w = fw ? fw : aw;
        double w_sum = 0, wa_sum = 0;
        for (int64_t i = 0; i < n; i++) {
            if (fw && aw) w[i] *= aw[i];
            w_sum += w[i];
        }
        if (w_sum == 0) {
            nd_error_set(ND_ERR_ARG, "%s: the weights sum to zero, so the mean cannot be normalised", fn);
            goto done;
        }
        if (ddof == 0) fact = w_sum;
        else if (!aw) fact = w_sum - ddof;
        else {
            for (int64_t i = 0; i < n; i++) wa_sum += w[i] * aw[i];
            fact = w_sum - ddof * wa_sum / w_sum;
        }
        void *data = NULL;
        nd_array *wv = nd_fe_tmp(&t, nd_fe_host_array(fn, ND_FLOAT64, 1, &n, &data));
        if (!wv) goto done;
        if (n) memcpy(data, w, (size_t)n * sizeof *w);
        nd_array *xwv = nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, x, wv));
        nd_array *sum = xwv ? nd_fe_tmp(&t, nd_fe_reduce(fn, ND_REDUCE_SUM, xwv, 1, 1)) : NULL;
        nd_array *ws = nd_fe_tmp(&t, nd_fe_scalar(w_sum));
        avg = sum && ws ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_DIV, sum, ws)) : NULL;
        xw = wv;
    } else {
        avg = nd_fe_tmp(&t, nd_fe_mean(fn, x, 1, 1));
        xw = NULL;
    }
    nd_array *xc = avg ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_SUB, x, avg)) : NULL;
    nd_array *xcw = xc && xw ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MUL, xc, xw)) : xc;
    nd_array *xt = xcw ? nd_fe_tmp(&t, nd_fe_with_axes(xcw, 2, (int[]){1, 0})) : NULL;
    nd_array *c = xt ? nd_fe_tmp(&t, nd_fe_matmul(fn, xc, xt)) : NULL;
    /* NumPy: fact <= 0 warns and divides by 0 (inf and NaN follow); a NaN
     * fact (NaN weights) stays NaN. */
    nd_array *k = c ? nd_fe_tmp(&t, nd_fe_scalar(1.0 / (fact <= 0 ? 0.0 : fact))) : NULL;
    if (k) result = nd_fe_binary(fn, ND_OP_MUL, c, k);
done:
    free(fw);
    free(aw);
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
    return nd_runtime_track(squeezed(fn, cov_full(fn, m, NULL, rowvar, bias, ddof < 0 ? ND_DDOF_NONE : ddof, NULL,
                                                  NULL)));
}

nd_array *nd_cov_ex(nd_array *m, nd_array *y, const nd_cov_options *opt) {
    ND_API_GUARD();
    static const char fn[] = "nd_cov_ex";
    const nd_cov_options def = ND_COV_OPTIONS_INIT, *o = opt ? opt : &def;
    return nd_runtime_track(squeezed(fn, cov_full(fn, m, y, o->rowvar, o->bias, o->ddof, o->fweights, o->aweights)));
}

static nd_array *corrcoef(const char *fn, nd_array *x, nd_array *y, int rowvar) {
    nd_fe_temps t = {0};
    nd_array *result = NULL;
    nd_array *c = nd_fe_tmp(&t, cov_full(fn, x, y, rowvar, 0, ND_DDOF_NONE, NULL, NULL));
    if (!c) goto done;
    if (c->shape[0] == 1) {
        /* One variable: NumPy's diag fails on the squeezed 0-d c and it
         * returns c / c. */
        result = squeezed(fn, nd_fe_binary(fn, ND_OP_DIV, c, c));
        goto done;
    }
    /* c / d[:, None] / d[None, :] with d = sqrt(diag(c)), clipped to
     * [-1, 1] (NaN stays NaN). */
    nd_array *diag = nd_fe_tmp(&t, nd_fe_diagonal(fn, c, 0, 0, 1));
    nd_array *d = diag ? nd_fe_tmp(&t, nd_fe_unary(fn, ND_OP_SQRT, diag)) : NULL;
    nd_array *col = d ? nd_fe_tmp(&t, nd_fe_with_axes(d, 2, (int[]){0, -1})) : NULL;
    nd_array *row = d ? nd_fe_tmp(&t, nd_fe_with_axes(d, 2, (int[]){-1, 0})) : NULL;
    nd_array *q1 = col ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_DIV, c, col)) : NULL;
    nd_array *q2 = q1 && row ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_DIV, q1, row)) : NULL;
    nd_array *one = nd_fe_tmp(&t, nd_fe_scalar(1.0)), *minus = nd_fe_tmp(&t, nd_fe_scalar(-1.0));
    nd_array *lo = q2 && one ? nd_fe_tmp(&t, nd_fe_binary(fn, ND_OP_MIN, q2, one)) : NULL;
    if (lo && minus) result = nd_fe_binary(fn, ND_OP_MAX, lo, minus);
done:
    nd_fe_temps_release(&t);
    return result;
}

nd_array *nd_corrcoef(nd_array *x, int rowvar) {
    ND_API_GUARD();
    return nd_runtime_track(corrcoef("nd_corrcoef", x, NULL, rowvar));
}

nd_array *nd_corrcoef_ex(nd_array *x, nd_array *y, int rowvar) {
    ND_API_GUARD();
    return nd_runtime_track(corrcoef("nd_corrcoef_ex", x, y, rowvar));
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
    if (!nd_dtype_is_float(a->dtype) && !nd_dtype_is_int(a->dtype) && a->dtype != ND_BOOL &&
        !nd_dtype_is_complex(a->dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: %s of dtype %s (give numbers)", fn, name, nd_dtype_name(a->dtype));
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

/* correlate_long(a, v, mode), or the same through the FFT when
 * ND_CONV_AUTO's rule says it pays (nd_convolve_nd's rule): correlating
 * with v is convolving with v reversed, and NumPy's 'same' start m / 2 of
 * the correlation is the convolution's (m - 1) / 2. */
static nd_array *correlate_auto(const char *fn, nd_array *a, nd_array *v, nd_conv_mode mode) {
    nd_dtype rt = nd_fe_result_type(fn, a, v, 0);
    if (rt == ND_NUM_DTYPES) return NULL;
    if (!nd_conv_auto_fft(1, a->shape, v->shape, mode, rt)) return correlate_long(fn, a, v, mode);
    nd_array *rv = nd_fe_axis_slice(v, 0, v->shape[0] - 1, v->shape[0], -1);
    nd_array *z = rv ? nd_fe_convolve_fft(fn, a, rv, mode, rt) : NULL;
    if (rv) nd_fe_release(rv);
    return z;
}

nd_array *nd_correlate(nd_array *a, nd_array *v, nd_conv_mode mode) {
    ND_API_GUARD();
    static const char fn[] = "nd_correlate";
    if (check_signal(fn, "a", a) || check_signal(fn, "v", v) || check_mode(fn, mode) ||
        nd_runtime_ensure() != ND_OK)
        return NULL;
    /* NumPy conjugates a complex v first (its correlate2), then swaps a
     * shorter a with it and reverses the result. */
    nd_array *vc = v, *z = NULL, *r = NULL;
    nd_dtype vt = (nd_dtype)v->dtype;
    if (nd_dtype_is_complex(vt) && !(vc = nd_fe_map(fn, ND_OP_CONJ, 1, &v, NULL, vt, vt))) return NULL;
    if (a->shape[0] >= v->shape[0]) {
        r = correlate_auto(fn, a, vc, mode);
    } else if ((z = correlate_auto(fn, vc, a, mode))) {
        r = nd_fe_axis_slice(z, 0, z->shape[0] - 1, z->shape[0], -1);
        nd_fe_release(z);
    }
    if (vc != v) nd_fe_release(vc);
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
    nd_dtype rt = nd_fe_result_type(fn, a, v, 0);
    if (rt == ND_NUM_DTYPES) return NULL;
    if (nd_conv_auto_fft(1, a->shape, v->shape, mode, rt))
        return nd_runtime_track(nd_fe_convolve_fft(fn, a, v, mode, rt));
    nd_array *rv = nd_fe_axis_slice(v, 0, v->shape[0] - 1, v->shape[0], -1), *z = NULL;
    if (rv) z = correlate_long(fn, a, rv, mode);
    if (rv) nd_fe_release(rv);
    return nd_runtime_track(z);
}
