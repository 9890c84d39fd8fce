/* Matrices: eye, identity, tri, tril, triu (a comparison of column minus row
 * index with k, built from two ARANGE nodes: no new node kind, and the
 * whole mask fuses into the kernel that uses it), diag and the diagonal
 * view. */
#include <stdio.h>

#include "frontend/compose.h"

/* (n, m) bool: cmp(j - i, k) for row i and column j. j - i lies in
 * (-n, m), so it never overflows whatever k is; k is a FULL value (a
 * kernel parameter), so eye(n, n, 1) and eye(n, n, 2) share one plan. */
static nd_array *band_mask(const char *fn, nd_op cmp, int64_t n, int64_t m, int64_t k) {
    nd_fe_temps T = {0};
    nd_array *out = NULL;
    nd_array *i = nd_fe_tmp(&T, nd_fe_arange(fn, ND_INT64, 0, 1, n));
    nd_array *j = i ? nd_fe_tmp(&T, nd_fe_arange(fn, ND_INT64, 0, 1, m)) : NULL;
    nd_array *col = j ? nd_fe_tmp(&T, nd_fe_view(i, 2, (int64_t[]){n, 1}, (int64_t[]){1, 0}, 0))
                      : NULL;
    nd_array *d = col ? nd_fe_tmp(&T, nd_fe_binary(fn, ND_OP_SUB, j, col)) : NULL;
    nd_scalar_bits kb = {.i = k};
    nd_array *kk = d ? nd_fe_tmp(&T, nd_fe_full(fn, ND_INT64, 0, NULL, kb)) : NULL;
    if (kk) out = nd_fe_binary(fn, cmp, d, kk);
    nd_fe_temps_release(&T);
    return out;
}

/* Checks n and m (m = -1 means n) of eye/tri; 0 when fine. */
static int check_nm(const char *fn, nd_dtype dtype, int64_t n, int64_t *m) {
    if (nd_fe_check_dtype(fn, dtype)) return -1;
    if (n < 0) {
        nd_error_set(ND_ERR_ARG, "%s: n = %lld is negative (use n >= 0)", fn, (long long)n);
        return -1;
    }
    if (*m == -1) *m = n;
    if (*m < 0) {
        nd_error_set(ND_ERR_ARG, "%s: m = %lld is negative (use m >= 0, or -1 for m = n as "
                     "NumPy's M=None)", fn, (long long)*m);
        return -1;
    }
    size_t nbytes;
    return nd_fe_check_shape(fn, 2, (int64_t[]){n, *m}, dtype, &nbytes);
}

/* band_mask as dtype (true -> 1). */
static nd_array *band_matrix(const char *fn, nd_op cmp, nd_dtype dtype, int64_t n, int64_t m,
                             int64_t k) {
    if (check_nm(fn, dtype, n, &m)) return NULL;
    nd_array *mask = band_mask(fn, cmp, n, m, k);
    if (!mask || dtype == ND_BOOL) return mask;
    nd_array *out = nd_fe_astype(fn, mask, dtype);
    nd_fe_release(mask);
    return out;
}

nd_array *nd_eye(nd_dtype dtype, int64_t n, int64_t m, int64_t k) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(band_matrix("nd_eye", ND_OP_EQ, dtype, n, m, k));
}

nd_array *nd_identity(nd_dtype dtype, int64_t n) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(band_matrix("nd_identity", ND_OP_EQ, dtype, n, n, 0));
}

nd_array *nd_tri(nd_dtype dtype, int64_t n, int64_t m, int64_t k) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(band_matrix("nd_tri", ND_OP_LE, dtype, n, m, k));
}

/* NumPy's tril/triu: where(tri mask over the last two axes, a, 0). A 1-d
 * input is both axes (NumPy's tri(*a.shape[-2:])), giving an (n, n) result. */
static nd_array *triangle(const char *fn, nd_op cmp, nd_array *a, int64_t k) {
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (a->ndim == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is 0-d; %s needs an array of at least 1 dimension (it "
                     "works on the last two axes)", fn, fn + 3);
        return NULL;
    }
    const int64_t m = a->shape[a->ndim - 1], n = a->ndim >= 2 ? a->shape[a->ndim - 2] : m;
    nd_fe_temps T = {0};
    nd_array *out = NULL;
    nd_array *mask = nd_fe_tmp(&T, band_mask(fn, cmp, n, m, k));
    nd_scalar_bits zero = nd_fe_double_bits(0.0, a->dtype);
    nd_array *z = mask ? nd_fe_tmp(&T, nd_fe_full(fn, a->dtype, 0, NULL, zero)) : NULL;
    if (z) {
        nd_array *in[3] = {mask, a, z};
        nd_dtype consts[3] = {ND_BOOL, a->dtype, a->dtype};
        out = nd_fe_map(fn, ND_OP_WHERE, 3, in, consts, a->dtype, a->dtype);
    }
    nd_fe_temps_release(&T);
    return out;
}

nd_array *nd_tril(nd_array *a, int64_t k) {
    ND_API_GUARD();
    return nd_runtime_track(triangle("nd_tril", ND_OP_LE, a, k));
}

nd_array *nd_triu(nd_array *a, int64_t k) {
    ND_API_GUARD();
    return nd_runtime_track(triangle("nd_triu", ND_OP_GE, a, k));
}

nd_array *nd_fe_diagonal(const char *fn, nd_array *a, int64_t offset, int axis1, int axis2) {
    const int nd = a->ndim;
    if (nd < 2) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d; a diagonal needs at least 2 dimensions (use "
                     "nd_diag to build a matrix from a 1-d array)", fn, nd);
        return NULL;
    }
    int a1, a2;
    if (nd_fe_axis_named(fn, "axis1", axis1, nd, &a1) ||
        nd_fe_axis_named(fn, "axis2", axis2, nd, &a2))
        return NULL;
    if (a1 == a2) {
        nd_error_set(ND_ERR_ARG, "%s: axis1 (%d) and axis2 (%d) are the same axis %d of a %d-d "
                     "array (name two different axes)", fn, axis1, axis2, a1, nd);
        return NULL;
    }
    /* Row r = a1 index, column c = a2 index, c - r = offset. Neither
     * difference below overflows (shapes are >= 0); -offset is formed only
     * when the diagonal is not empty, where |offset| < a dimension. */
    const int64_t rows = a->shape[a1], cols = a->shape[a2];
    int64_t len = offset >= 0 ? cols - offset : rows + offset;
    if (len > (offset >= 0 ? rows : cols)) len = offset >= 0 ? rows : cols;
    if (len < 0) len = 0;
    int64_t off = a->offset;
    if (len > 0) off += offset >= 0 ? offset * a->strides[a2] : -offset * a->strides[a1];
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    int o = 0;
    for (int d = 0; d < nd; d++)
        if (d != a1 && d != a2) {
            shape[o] = a->shape[d];
            strides[o++] = a->strides[d];
        }
    shape[o] = len;
    strides[o++] = a->strides[a1] + a->strides[a2];
    return nd_fe_view(a, o, shape, strides, off);
}

nd_array *nd_diagonal(nd_array *a, int64_t offset, int axis1, int axis2) {
    ND_API_GUARD();
    static const char fn[] = "nd_diagonal";
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_diagonal(fn, a, offset, axis1, axis2));
}

/* 1-d v: an (n + |k|)-square matrix of zeros with v on diagonal k (a FULL
 * and one strided STORE, as NumPy's zeros then assignment). */
static nd_array *diag_matrix(const char *fn, nd_array *v, int64_t k) {
    const int64_t n = v->shape[0];
    if (k == INT64_MIN || (k < 0 ? -k : k) > INT64_MAX - n) {
        nd_error_set(ND_ERR_SHAPE, "%s: k = %lld makes a matrix of more than INT64_MAX rows (use "
                     "|k| below the size you can hold)", fn, (long long)k);
        return NULL;
    }
    const int64_t N = n + (k < 0 ? -k : k);
    nd_array *out = nd_fe_full(fn, v->dtype, 2, (int64_t[]){N, N},
                               nd_fe_double_bits(0.0, v->dtype));
    if (!out) return NULL;
    nd_array *d = nd_fe_diagonal(fn, out, k, 0, 1);
    if (!d || nd_fe_store(fn, d, v) != ND_OK) {
        nd_fe_release(d);
        nd_fe_release(out);
        return NULL;
    }
    nd_fe_release(d);
    return out;
}

nd_array *nd_diag(nd_array *v, int64_t k) {
    ND_API_GUARD();
    static const char fn[] = "nd_diag";
    if (nd_fe_arg(fn, "v", v)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (v->ndim == 1) return nd_runtime_track(diag_matrix(fn, v, k));
    if (v->ndim == 2) return nd_runtime_track(nd_fe_diagonal(fn, v, k, 0, 1));
    nd_error_set(ND_ERR_SHAPE, "%s: v is %d-d; diag takes a 1-d array (builds a matrix with it "
                 "on diagonal k) or a 2-d one (views its diagonal k); for other arrays use "
                 "nd_diagonal", fn, v->ndim);
    return NULL;
}
