/* Reductions of complex arrays that need an order or a square: min, max,
 * argmin and argmax in NumPy's lexicographic order (and their NaN-ignoring
 * forms), |x|^2 for var/std. The reduction kernels accumulate real values
 * only, so each is composed from real REDUCE and MAP nodes over the parts
 * (they fuse into the kernels that read them); every step picks or
 * compares values, none rounds, so the results are NumPy's exactly.
 * A product of complex values mixes the parts, so it is a tree of
 * elementwise complex multiplies instead (nd_fe_complex_prod). */
#include "frontend/reduction.h"

#include <math.h>
#include <string.h>

#include "frontend/shaping_internal.h"

enum { MAX_TEMPS = 32 };
typedef struct {
    nd_array *t[MAX_TEMPS];
    int n, failed;
} temps;

/* Keeps x for release at the end; NULL marks the composition failed. */
static nd_array *keep(temps *T, nd_array *x) {
    if (!x || T->n == MAX_TEMPS) T->failed = 1;
    else T->t[T->n++] = x;
    return x;
}
static void release_all(temps *T) {
    while (T->n > 0) nd_fe_release(T->t[--T->n]);
}

/* x (a reduction kept with keepdims) seen without the reduced axes. */
static nd_array *drop_axes(const char *fn, nd_array *x, const nd_array *a, uint32_t mask) {
    int n = 0;
    int64_t shape[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++)
        if (!(mask >> k & 1u)) shape[n++] = a->shape[k];
    return nd_fe_reshape(fn, x, n, shape);
}

nd_array *nd_fe_complex_extreme(const char *fn, nd_reduce_kind kind, nd_array *a, uint32_t mask,
                                int keepdims, int skip_nan, const char *what) {
    int empty = 0;
    for (int k = 0; k < a->ndim; k++) empty |= (mask >> k & 1u) && a->shape[k] == 0;
    /* no axis, or an empty extent (an error): reduction.c's rules */
    if (mask == 0 || empty) return nd_fe_reduce_mask(fn, kind, a, mask, keepdims, what);
    const int mx = kind == ND_REDUCE_MAX || kind == ND_REDUCE_ARGMAX;
    const int arg = nd_reduce_is_arg(kind);
    const nd_reduce_kind rk = mx ? ND_REDUCE_MAX : ND_REDUCE_MIN;
    const nd_dtype pt = nd_dtype_part(a->dtype);
    temps T = {{0}, 0, 0};
    nd_array *out = NULL;
    nd_array *re = keep(&T, nd_fe_map(fn, ND_OP_REAL, 1, &a, NULL, a->dtype, pt));
    nd_array *im = keep(&T, nd_fe_map(fn, ND_OP_IMAG, 1, &a, NULL, a->dtype, pt));
    nd_array *nan = keep(&T, nd_fe_unary(fn, ND_OP_ISNAN, a)); /* either part */
    nd_array *ext = keep(&T, nd_fe_scalar(mx ? -INFINITY : INFINITY));
    if (T.failed) goto done;
    nd_array *valid = keep(&T, nd_fe_unary(fn, ND_OP_LOGICAL_NOT, nan));
    /* the extreme real part among the values without a NaN part ... */
    nd_array *re_c = keep(&T, nd_fe_where(fn, nan, ext, re));
    if (T.failed) goto done;
    nd_array *m_re = keep(&T, nd_fe_reduce_mask(fn, rk, re_c, mask, 1, what));
    if (T.failed) goto done;
    nd_array *eq_re = keep(&T, nd_fe_binary(fn, ND_OP_EQ, re_c, m_re));
    if (T.failed) goto done;
    nd_array *cand = keep(&T, nd_fe_binary(fn, ND_OP_LOGICAL_AND, eq_re, valid));
    if (T.failed) goto done;
    /* ... then the extreme imaginary part among those, its first index */
    nd_array *im_c = keep(&T, nd_fe_where(fn, cand, im, ext));
    if (T.failed) goto done;
    nd_array *m_im = keep(&T, nd_fe_reduce_mask(fn, rk, im_c, mask, 1, what));
    if (T.failed) goto done;
    nd_array *eq_im = keep(&T, nd_fe_binary(fn, ND_OP_EQ, im_c, m_im));
    if (T.failed) goto done;
    nd_array *key = keep(&T, nd_fe_binary(fn, ND_OP_LOGICAL_AND, cand, eq_im));
    nd_array *key8 = key ? keep(&T, nd_fe_astype(fn, key, ND_INT8)) : NULL;
    nd_array *nan8 = keep(&T, nd_fe_astype(fn, nan, ND_INT8));
    if (T.failed) goto done;
    nd_array *first_key = keep(&T, nd_fe_reduce_mask(fn, ND_REDUCE_ARGMAX, key8, mask, 1, what));
    nd_array *first_nan = keep(&T, nd_fe_reduce_mask(fn, ND_REDUCE_ARGMAX, nan8, mask, 1, what));
    /* NumPy: a NaN wins (the first one), np.nan*: a NaN never wins and an
     * all-NaN slice gives index -1 (nanargmin/nanargmax, reductions.h) or
     * its first value (nanmin/nanmax: NumPy's fmax.reduce, a NaN) */
    nd_array *flag = keep(&T, nd_fe_reduce_mask(fn, skip_nan ? ND_REDUCE_ALL : ND_REDUCE_ANY, nan,
                                                mask, 1, what));
    if (T.failed) goto done;
    nd_array *when = first_nan;
    if (skip_nan && arg) {
        nd_scalar_bits m1 = {.i = -1};
        when = keep(&T, nd_fe_full(fn, ND_INT64, 0, NULL, m1));
        if (T.failed) goto done;
    }
    nd_array *idx = keep(&T, nd_fe_where(fn, flag, when, first_key));
    if (T.failed) goto done;
    if (arg) {
        out = keepdims ? (idx->refs++, idx) : drop_axes(fn, idx, a, mask);
        goto done;
    }
    /* the value at idx: a one-hot mask over the reduced axes picks it out
     * (the maximum of one value and -inf's is that value, NaN and -0
     * included) */
    int64_t ishape[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++) ishape[k] = (mask >> k & 1u) ? a->shape[k] : 1;
    nd_array *io = keep(&T, nd_fe_arange(fn, ND_INT64, 0, 1, nd_fe_reduced_count(a, mask)));
    if (T.failed) goto done;
    nd_array *io_r = keep(&T, nd_fe_reshape(fn, io, a->ndim, ishape));
    if (T.failed) goto done;
    nd_array *hot = keep(&T, nd_fe_binary(fn, ND_OP_EQ, io_r, idx));
    nd_array *low = keep(&T, nd_fe_scalar(-INFINITY));
    if (T.failed) goto done;
    nd_array *pr = keep(&T, nd_fe_where(fn, hot, re, low));
    nd_array *pi = keep(&T, nd_fe_where(fn, hot, im, low));
    if (T.failed) goto done;
    nd_array *parts[2] = {keep(&T, nd_fe_reduce_mask(fn, ND_REDUCE_MAX, pr, mask, keepdims, what)),
                          keep(&T, nd_fe_reduce_mask(fn, ND_REDUCE_MAX, pi, mask, keepdims, what))};
    if (T.failed) goto done;
    out = nd_fe_map(fn, ND_OP_MAKE_COMPLEX, 2, parts, NULL, a->dtype, a->dtype);
done:
    release_all(&T);
    return out;
}

nd_array *nd_fe_abs2(const char *fn, nd_array *x) {
    if (!nd_dtype_is_complex(x->dtype)) return nd_fe_unary(fn, ND_OP_SQUARE, x);
    /* NumPy's var of a complex: re*re + im*im of the deviations */
    nd_dtype pt = nd_dtype_part(x->dtype);
    temps T = {{0}, 0, 0};
    nd_array *out = NULL;
    nd_array *re = keep(&T, nd_fe_map(fn, ND_OP_REAL, 1, &x, NULL, x->dtype, pt));
    nd_array *im = keep(&T, nd_fe_map(fn, ND_OP_IMAG, 1, &x, NULL, x->dtype, pt));
    if (T.failed) goto done;
    nd_array *r2 = keep(&T, nd_fe_unary(fn, ND_OP_SQUARE, re));
    nd_array *i2 = keep(&T, nd_fe_unary(fn, ND_OP_SQUARE, im));
    if (!T.failed) out = nd_fe_binary(fn, ND_OP_ADD, r2, i2);
done:
    release_all(&T);
    return out;
}

/* prod of a complex array over mask: the reduced axes moved last and
 * flattened into one of length R, padded with ones to a power of two, then
 * halved log2(R) times by elementwise products of its two halves (NumPy
 * multiplies in order; a pairwise product rounds as well or better, and is
 * exact where NumPy's is). Empty extents give 1 + 0j. */
nd_array *nd_fe_complex_prod(const char *fn, nd_array *a, uint32_t mask, int keepdims) {
    int n = a->ndim, perm[ND_MAX_DIMS], np_ = 0, on = 0;
    int64_t oshape[ND_MAX_DIMS + 1], kshape[ND_MAX_DIMS];
    for (int k = 0; k < n; k++)
        if (!(mask >> k & 1u)) perm[np_++] = k, oshape[on++] = a->shape[k];
    for (int k = 0; k < n; k++) {
        if (mask >> k & 1u) perm[np_++] = k;
        kshape[k] = (mask >> k & 1u) ? 1 : a->shape[k];
    }
    const int64_t R = nd_fe_reduced_count(a, mask);
    temps T = {{0}, 0, 0};
    nd_array *out = NULL, *x = NULL;
    if (R == 0 || nd_shape_size(on, oshape) == 0) {
        x = keep(&T, nd_fe_full(fn, a->dtype, on, oshape, nd_fe_double_bits(1.0, a->dtype)));
    } else {
        nd_array *moved = keep(&T, nd_fe_with_axes(a, n, perm));
        if (T.failed) goto done;
        int64_t P = 1;
        while (P < R) P *= 2;
        oshape[on] = R;
        x = keep(&T, nd_fe_reshape(fn, moved, on + 1, oshape));
        if (T.failed) goto done;
        if (P > R) {
            oshape[on] = P - R;
            nd_array *ones = keep(&T, nd_fe_full(fn, a->dtype, on + 1, oshape, nd_fe_double_bits(1.0, a->dtype)));
            if (T.failed) goto done;
            nd_array *parts[2] = {x, ones};
            x = keep(&T, nd_fe_concatenate(fn, 2, parts, on));
        }
        for (int64_t L = P; L > 1 && !T.failed; L /= 2) {
            nd_array *lo = keep(&T, nd_fe_axis_slice(x, on, 0, L / 2, 1));
            nd_array *hi = keep(&T, nd_fe_axis_slice(x, on, L / 2, L / 2, 1));
            if (T.failed) goto done;
            x = keep(&T, nd_fe_binary(fn, ND_OP_MUL, lo, hi));
        }
        if (T.failed) goto done;
    }
    if (T.failed) goto done;
    out = keepdims ? nd_fe_reshape(fn, x, n, kshape) : nd_fe_reshape(fn, x, on, oshape);
done:
    release_all(&T);
    return out;
}
