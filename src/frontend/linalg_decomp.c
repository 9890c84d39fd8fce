/* numpy.linalg's factorisations (include/nd/linalg_decomp.h): each is one
 * library routine (common/lib_linalg.h: cholesky, lu, solve, qr, svd,
 * eigh) over packed inputs in the layout the routine takes, with the
 * user's result a view of or a lazy op on the routine's outputs (the
 * triangle of a Cholesky factor, R, a determinant from the LU factors). */
#include <math.h>
#include <string.h>

#include "common/lib_linalg.h"
#include "frontend/compose.h"
#include "frontend/linalg_internal.h"
#include "frontend/runtime.h"
#include "frontend/shaping_internal.h"

nd_dtype nd_la_dtype(const char *fn, const nd_array *a) {
    switch ((nd_dtype)a->dtype) {
    case ND_FLOAT32:
    case ND_FLOAT64:
    case ND_COMPLEX64:
    case ND_COMPLEX128: return (nd_dtype)a->dtype;
    case ND_FLOAT16:
    case ND_BFLOAT16:
        nd_error_set(ND_ERR_DTYPE, "%s: a is %s, which linear algebra does not take (NumPy refuses float16 too): "
                     "nd_astype it to float32", fn, nd_dtype_name((nd_dtype)a->dtype));
        return ND_NUM_DTYPES;
    default:
        if (a->dtype < ND_NUM_DTYPES) return ND_FLOAT64; /* bool and integers, as NumPy */
        nd_error_set(ND_ERR_DTYPE, "%s: a is %s, which nd_linalg does not take (float32, float64, complex64, "
                     "complex128; bool and integers become float64)", fn, nd_dtype_name((nd_dtype)a->dtype));
        return ND_NUM_DTYPES;
    }
}

nd_dtype nd_la_common(nd_dtype a, nd_dtype b) {
    int cx = nd_la_is_complex(a) || nd_la_is_complex(b);
    int f64 = nd_la_real_dtype(a) == ND_FLOAT64 || nd_la_real_dtype(b) == ND_FLOAT64;
    return cx ? (f64 ? ND_COMPLEX128 : ND_COMPLEX64) : (f64 ? ND_FLOAT64 : ND_FLOAT32);
}

nd_array *nd_la_imag_unit(nd_dtype t) {
    return nd_full_complex(nd_la_real_dtype(t) == ND_FLOAT64 ? ND_COMPLEX128 : ND_COMPLEX64, 0, NULL, 0, 1);
}

/* x with its last two axes swapped, conjugated when complex (x^H). */
static nd_array *herm(nd_array *x) {
    nd_array *sw = nd_la_swap_last(x);
    if (!sw || !nd_la_is_complex((nd_dtype)x->dtype)) return nd_runtime_track(sw);
    nd_array *c = nd_conj(sw);
    nd_fe_release(sw);
    return c;
}

int nd_la_matrices(const char *fn, const char *name, const nd_array *a, int square) {
    if (a->ndim < 2) {
        nd_error_set(ND_ERR_SHAPE, "%s: %s is %d-d; it needs at least 2 dimensions (a matrix or a stack of "
                     "matrices)", fn, name, a->ndim);
        return -1;
    }
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    if (square && m != n) {
        nd_error_set(ND_ERR_SHAPE, "%s: the matrices of %s are %lld x %lld; they must be square (last two "
                     "dimensions equal)", fn, name, (long long)m, (long long)n);
        return -1;
    }
    return 0;
}

nd_array *nd_la_packed(const char *fn, nd_array *a, nd_dtype t) {
    if (a->dtype == t && nd_array_is_contiguous(a)) {
        a->refs++;
        return a;
    }
    return nd_fe_astype(fn, a, t);
}

nd_array *nd_la_swap_last(nd_array *x) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    int n = x->ndim;
    memcpy(sh, x->shape, sizeof sh);
    memcpy(st, x->strides, sizeof st);
    sh[n - 2] = x->shape[n - 1];
    sh[n - 1] = x->shape[n - 2];
    st[n - 2] = x->strides[n - 1];
    st[n - 1] = x->strides[n - 2];
    return nd_fe_view(x, n, sh, st, x->offset);
}

/* The shape of a's batch with (r, c) or (r) appended. */
static int out_shape(const nd_array *a, int tail, int64_t r, int64_t c, int64_t *shape) {
    int nb = a->ndim - 2;
    memcpy(shape, a->shape, (size_t)nb * sizeof *shape);
    shape[nb] = r;
    if (tail == 2) shape[nb + 1] = c;
    return nb + tail;
}

/* a checked, converted and packed for a routine. NULL on error. */
static nd_array *prepare(const char *fn, nd_array *a, int square, nd_dtype *t) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    *t = nd_la_dtype(fn, a);
    if (*t == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, square)) return NULL;
    return nd_la_packed(fn, a, *t);
}

static nd_lib_args la_args(int64_t v0, int64_t v1, nd_lib_la_fn who) {
    nd_lib_args args = {{{.i = v0}, {.i = v1}, {.i = 0}, {.i = 0}}};
    args.v[ND_LA_FN_ARG].i = who;
    return args;
}

/* ------------------------------------------------------------ cholesky */

nd_array *nd_linalg_cholesky(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_cholesky";
    nd_dtype t;
    nd_array *p = prepare(fn, a, 1, &t);
    if (!p) return NULL;
    /* The routine writes the whole of L (zeros above the diagonal) into a
     * new array, reading A's lower triangle as NumPy does: the copy potrf
     * overwrites and the layout it needs are made inside the step
     * (common/lib_linalg.h), so no elementwise pass runs before or after.
     * A backend whose routine writes L^T (CUDA: lib_cholesky.c says why)
     * gets L as that buffer's transposed view. */
    int64_t n = a->shape[a->ndim - 1], shape[ND_MAX_DIMS];
    int nd = out_shape(a, 2, n, n, shape);
    nd_kernel_output out = {NULL, t, nd, shape};
    nd_lib_args args = la_args(0, 0, ND_LA_FN_CHOLESKY);
    nd_array *l = NULL;
    nd_fe_lib_call(fn, ND_LIB_LA_CHOLESKY, &args, 1, &p, 1, &out, &l);
    nd_fe_release(p);
    l = nd_runtime_track(l);
    if (!l || !nd_runtime_cholesky_transposed()) return l;
    nd_array *view = nd_swapaxes(l, -1, -2);
    nd_free(l);
    return view;
}

/* ------------------------------------------------------------ solve, inv */

/* x with a x = b for b (..., n, k) already broadcast to a's batch. */
static nd_array *solve_matrices(const char *fn, nd_lib_la_fn who, nd_array *a, nd_array *b, nd_dtype t) {
    nd_array *pa = nd_la_packed(fn, a, t);
    nd_array *bt = pa ? nd_la_swap_last(b) : NULL; /* B column-major: its columns as rows */
    nd_array *pb = bt ? nd_la_packed(fn, bt, t) : NULL;
    nd_array *x = NULL, *result = NULL;
    if (pb) {
        nd_kernel_output out = {NULL, t, pb->ndim, pb->shape};
        nd_array *in[2] = {pa, pb};
        nd_lib_args args = la_args(0, 0, who);
        if (nd_fe_lib_call(fn, ND_LIB_LA_SOLVE, &args, 2, in, 1, &out, &x) == ND_OK) result = nd_la_swap_last(x);
    }
    nd_fe_release(x);
    nd_fe_release(pb);
    nd_fe_release(bt);
    nd_fe_release(pa);
    return result;
}

nd_array *nd_la_solve(const char *fn, nd_lib_la_fn who, nd_array *a, nd_array *b) {
    nd_dtype ta = nd_la_dtype(fn, a), tb = ta == ND_NUM_DTYPES ? ta : nd_la_dtype(fn, b);
    if (tb == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, 1)) return NULL;
    nd_dtype t = nd_la_common(ta, tb);
    int64_t n = a->shape[a->ndim - 1];
    int vec = b->ndim == 1;
    if (b->ndim == 0 || b->shape[vec ? 0 : b->ndim - 2] != n) {
        nd_error_set(ND_ERR_SHAPE, "%s: b has shape %s%lld...; b must be (n,) or (..., n, k) with n = %lld, a's "
                     "size", fn, b->ndim == 0 ? "() " : "", b->ndim ? (long long)b->shape[vec ? 0 : b->ndim - 2] : 0LL,
                     (long long)n);
        return NULL;
    }
    /* The broadcast batch of a and b. */
    int64_t bs_a[ND_MAX_DIMS], bs_b[ND_MAX_DIMS], batch[ND_MAX_DIMS];
    int nb_a = a->ndim - 2, nb_b = vec ? 0 : b->ndim - 2, nb = 0;
    memcpy(bs_a, a->shape, sizeof bs_a);
    memcpy(bs_b, b->shape, sizeof bs_b);
    nb = nb_a > nb_b ? nb_a : nb_b;
    for (int d = 0; d < nb; d++) {
        int64_t x = d - (nb - nb_a) >= 0 ? bs_a[d - (nb - nb_a)] : 1, y = d - (nb - nb_b) >= 0 ? bs_b[d - (nb - nb_b)] : 1;
        if (x != y && x != 1 && y != 1) {
            nd_error_set(ND_ERR_SHAPE, "%s: the batches of a (%d leading axes) and b (%d) do not broadcast: "
                         "%lld against %lld at batch axis %d", fn, nb_a, nb_b, (long long)x, (long long)y, d);
            return NULL;
        }
        batch[d] = x == 1 ? y : x;
    }
    int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
    memcpy(sa, batch, (size_t)nb * sizeof *sa);
    sa[nb] = sa[nb + 1] = n;
    memcpy(sb, batch, (size_t)nb * sizeof *sb);
    sb[nb] = n;
    sb[nb + 1] = vec ? 1 : b->shape[b->ndim - 1];
    if (nb + 2 > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: the result would have more than %d dimensions", fn, ND_MAX_DIMS);
        return NULL;
    }
    nd_fe_temps tmp = {0};
    nd_array *bm = b;
    if (vec) {
        int64_t col[2] = {n, 1};
        bm = nd_fe_tmp(&tmp, nd_fe_reshape(fn, b, 2, col));
    }
    nd_array *ab = bm ? nd_fe_tmp(&tmp, nd_broadcast_to(a, nb + 2, sa)) : NULL;
    nd_array *bb = ab ? nd_fe_tmp(&tmp, nd_broadcast_to(bm, nb + 2, sb)) : NULL;
    nd_array *x = bb ? solve_matrices(fn, who, ab, bb, t) : NULL;
    if (x && vec) { /* drop the column axis */
        nd_array *xv = nd_fe_view(x, nb + 1, x->shape, x->strides, x->offset);
        nd_fe_release(x);
        x = xv;
    }
    nd_fe_temps_release(&tmp);
    return x;
}

nd_array *nd_linalg_solve(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_solve";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b) || nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_la_solve(fn, ND_LA_FN_SOLVE, a, b));
}

nd_array *nd_linalg_inv(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_inv";
    nd_dtype t;
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if ((t = nd_la_dtype(fn, a)) == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, 1)) return NULL;
    int64_t n = a->shape[a->ndim - 1];
    nd_array *eye = nd_eye(t, n, n, 0);
    nd_array *x = eye ? nd_la_solve(fn, ND_LA_FN_INV, a, eye) : NULL;
    nd_free(eye);
    return nd_runtime_track(x);
}

/* ------------------------------------------------------------ det, slogdet */

/* The LU factors' diagonal (..., n) and (-1)^swaps (..., ) of a's matrices. */
static nd_status lu_parts(const char *fn, nd_array *a, nd_array **diag, nd_array **perm_sign) {
    *diag = *perm_sign = NULL;
    nd_dtype t;
    nd_array *p = prepare(fn, a, 1, &t);
    if (!p) return nd_last_status();
    int64_t n = a->shape[a->ndim - 1], shape[2][ND_MAX_DIMS];
    int nd = out_shape(a, 2, n, n, shape[0]);
    out_shape(a, 1, n, 0, shape[1]);
    nd_kernel_output out[2] = {{NULL, t, nd, shape[0]}, {NULL, ND_INT32, nd - 1, shape[1]}};
    nd_lib_args args = la_args(0, 0, ND_LA_FN_SOLVE);
    nd_array *res[2] = {NULL, NULL};
    nd_status s = nd_fe_lib_call(fn, ND_LIB_LA_LU, &args, 1, &p, 2, out, res);
    nd_fe_release(p);
    if (s != ND_OK) return s;
    /* Pivot i (1-based) != i + 1 is a row swap; (-1)^swaps = 1 - 2 * (swaps % 2). */
    nd_array *tmp[8] = {0};
    tmp[0] = nd_arange(ND_INT32, 1, (double)n + 1, 1);
    tmp[1] = tmp[0] ? nd_ne(res[1], tmp[0]) : NULL;
    tmp[2] = tmp[1] ? nd_sum(tmp[1], -1) : NULL;
    tmp[3] = nd_scalar_int(2);
    tmp[4] = tmp[2] && tmp[3] ? nd_remainder(tmp[2], tmp[3]) : NULL;
    tmp[5] = nd_scalar(-2.0);
    tmp[6] = tmp[4] && tmp[5] ? nd_mul(tmp[4], tmp[5]) : NULL;
    tmp[7] = tmp[6] ? nd_astype(tmp[6], nd_la_real_dtype(t)) : NULL;
    nd_array *one = nd_scalar(1.0);
    *perm_sign = tmp[7] && one ? nd_add(tmp[7], one) : NULL;
    nd_free(one);
    *diag = *perm_sign ? nd_diagonal(res[0], 0, -2, -1) : NULL;
    for (int i = 0; i < 8; i++) nd_free(tmp[i]);
    nd_fe_release(res[0]);
    nd_fe_release(res[1]);
    if (*diag) return ND_OK;
    nd_free(*perm_sign);
    *perm_sign = NULL;
    return nd_last_status();
}

/* slogdet of complex LU factors, as NumPy: sign = (-1)^swaps * prod(d /
 * |d|), here exp(i * sum(angle(d))) (0 when a d is 0), logabsdet =
 * sum(log|d|). */
static nd_status complex_slogdet(nd_array *diag, nd_array *ps, nd_array **sign, nd_array **logabsdet) {
    nd_array *t[12] = {0};
    t[0] = nd_abs(diag);
    t[1] = t[0] ? nd_log(t[0]) : NULL;
    *logabsdet = t[1] ? nd_sum(t[1], -1) : NULL;
    t[2] = nd_angle(diag);
    t[3] = t[2] ? nd_sum(t[2], -1) : NULL;
    t[4] = t[3] ? nd_cos(t[3]) : NULL;
    t[5] = t[3] ? nd_sin(t[3]) : NULL;
    t[6] = nd_la_imag_unit((nd_dtype)diag->dtype);
    t[7] = t[5] && t[6] ? nd_mul(t[5], t[6]) : NULL;
    t[8] = t[4] && t[7] ? nd_add(t[4], t[7]) : NULL;
    t[9] = nd_scalar(0.0);
    t[10] = t[0] && t[9] ? nd_ne(t[0], t[9]) : NULL;
    t[11] = t[10] ? nd_all(t[10], -1) : NULL;
    nd_array *signed_ = t[8] ? nd_mul(t[8], ps) : NULL;
    *sign = signed_ && t[11] ? nd_where(t[11], signed_, t[9]) : NULL;
    nd_free(signed_);
    for (int i = 0; i < 12; i++) nd_free(t[i]);
    if (*sign && *logabsdet) return ND_OK;
    nd_status s = nd_last_status();
    nd_free(*sign);
    nd_free(*logabsdet);
    *sign = *logabsdet = NULL;
    return s;
}

nd_array *nd_linalg_det(nd_array *a) {
    ND_API_GUARD();
    nd_array *diag, *ps;
    if (lu_parts("nd_linalg_det", a, &diag, &ps) != ND_OK) return NULL;
    if (nd_la_is_complex((nd_dtype)diag->dtype)) { /* NumPy's det: sign * exp(logabsdet) */
        nd_array *sign, *lad, *det = NULL;
        if (complex_slogdet(diag, ps, &sign, &lad) == ND_OK) {
            nd_array *e = nd_exp(lad);
            det = e ? nd_mul(sign, e) : NULL;
            nd_free(e);
            nd_free(sign);
            nd_free(lad);
        }
        nd_free(diag);
        nd_free(ps);
        return det;
    }
    nd_array *pr = nd_prod(diag, -1);
    nd_array *det = pr ? nd_mul(pr, ps) : NULL;
    nd_free(pr);
    nd_free(diag);
    nd_free(ps);
    return det;
}

nd_status nd_linalg_slogdet(nd_array *a, nd_array **sign, nd_array **logabsdet) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_slogdet";
    if (!sign || !logabsdet)
        return nd_error_set(ND_ERR_ARG, "%s: sign and logabsdet must not be NULL (the results go there)", fn);
    *sign = *logabsdet = NULL;
    nd_array *diag, *ps;
    nd_status s = lu_parts(fn, a, &diag, &ps);
    if (s != ND_OK) return s;
    if (nd_la_is_complex((nd_dtype)diag->dtype)) {
        s = complex_slogdet(diag, ps, sign, logabsdet);
        nd_free(diag);
        nd_free(ps);
        return s;
    }
    nd_array *sd = nd_sign(diag), *psd = sd ? nd_prod(sd, -1) : NULL;
    nd_array *ad = nd_abs(diag), *ld = ad ? nd_log(ad) : NULL;
    *sign = psd ? nd_mul(psd, ps) : NULL;
    *logabsdet = ld ? nd_sum(ld, -1) : NULL;
    nd_free(sd);
    nd_free(psd);
    nd_free(ad);
    nd_free(ld);
    nd_free(diag);
    nd_free(ps);
    if (*sign && *logabsdet) return ND_OK;
    s = nd_last_status();
    nd_free(*sign);
    nd_free(*logabsdet);
    *sign = *logabsdet = NULL;
    return s;
}

/* ------------------------------------------------------------ qr */

nd_status nd_linalg_qr(nd_array *a, nd_qr_mode mode, nd_array **q, nd_array **r) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_qr";
    if (q) *q = NULL;
    if (r) *r = NULL;
    if (mode != ND_QR_REDUCED && mode != ND_QR_COMPLETE && mode != ND_QR_R)
        return nd_error_set(ND_ERR_ARG, "%s: mode %d is not a qr mode (ND_QR_REDUCED, ND_QR_COMPLETE or ND_QR_R)",
                            fn, (int)mode);
    if (!r || (!q && mode != ND_QR_R))
        return nd_error_set(ND_ERR_ARG, "%s: %s must not be NULL (the results go there)", fn, r ? "q" : "r");
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return nd_last_status();
    nd_dtype t = nd_la_dtype(fn, a);
    if (t == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, 0)) return nd_last_status();
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    int64_t qc = mode == ND_QR_R ? 0 : mode == ND_QR_COMPLETE ? m : k, rr = mode == ND_QR_COMPLETE ? m : k;
    int64_t shape[2][ND_MAX_DIMS];
    if (k == 0) { /* no reflectors: Q is the identity, R zeros */
        int nd = out_shape(a, 2, m, qc, shape[0]);
        out_shape(a, 2, rr, n, shape[1]);
        *r = nd_zeros(t, nd, shape[1]);
        if (mode == ND_QR_R) return *r ? ND_OK : nd_last_status();
        nd_array *eye = nd_eye(t, m, qc, 0), *b = eye ? nd_broadcast_to(eye, nd, shape[0]) : NULL;
        *q = b ? nd_copy(b) : NULL;
        nd_free(eye);
        nd_free(b);
        if (*q && *r) return ND_OK;
        nd_status s = nd_last_status();
        nd_free(*q);
        nd_free(*r);
        *q = *r = NULL;
        return s;
    }
    nd_array *at = nd_la_swap_last(a); /* A column-major */
    nd_array *p = at ? nd_la_packed(fn, at, t) : NULL;
    nd_fe_release(at);
    if (!p) return nd_last_status();
    int nd = out_shape(a, 2, qc, m, shape[0]);
    out_shape(a, 2, n, m, shape[1]);
    nd_kernel_output out[2] = {{NULL, t, nd, shape[0]}, {NULL, t, nd, shape[1]}};
    nd_lib_args args = la_args(qc, 0, ND_LA_FN_SOLVE);
    nd_array *res[2] = {NULL, NULL};
    nd_status s = nd_fe_lib_call(fn, ND_LIB_LA_QR, &args, 1, &p, 2, out, res);
    nd_fe_release(p);
    if (s != ND_OK) return s;
    /* R = triu of RAW^T's first rr rows (rows past k of a complete R are
     * zero: triu of RAW^T's rows k.. is, as geqrf leaves reflectors below
     * the diagonal only). */
    nd_array *rawt = nd_la_swap_last(res[1]); /* (m, n) */
    nd_array *top = rawt ? nd_fe_axis_slice(rawt, nd - 2, 0, rr, 1) : NULL;
    *r = top ? nd_triu(top, 0) : NULL;
    if (qc) {
        nd_array *qv = nd_la_swap_last(res[0]);
        *q = nd_runtime_track(qv);
    }
    nd_fe_release(top);
    nd_fe_release(rawt);
    nd_fe_release(res[0]);
    nd_fe_release(res[1]);
    if (*r && (!qc || *q)) return ND_OK;
    s = nd_last_status();
    nd_free(*r);
    if (q) nd_free(*q);
    *r = NULL;
    if (q) *q = NULL;
    return s;
}

/* ------------------------------------------------------------ svd */

nd_status nd_la_svd(const char *fn, nd_array *a, int full, int uv, nd_array **u, nd_array **s, nd_array **vh) {
    nd_dtype t = nd_la_dtype(fn, a);
    if (t == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, 0)) return nd_last_status();
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
    int64_t shape[3][ND_MAX_DIMS];
    int nd = out_shape(a, 1, k, 0, shape[0]) + 1;
    out_shape(a, 2, cu, m, shape[1]);
    out_shape(a, 2, cv, n, shape[2]);
    if (k == 0) { /* no singular values: full U and V are identities */
        *s = nd_zeros(nd_la_real_dtype(t), nd - 1, shape[0]);
        if (!uv) return *s ? ND_OK : nd_last_status();
        nd_array *eu = nd_eye(t, cu, m, 0), *ev = nd_eye(t, cv, n, 0);
        nd_array *bu = eu ? nd_broadcast_to(eu, nd, shape[1]) : NULL, *bv = ev ? nd_broadcast_to(ev, nd, shape[2]) : NULL;
        *u = bu ? nd_copy(bu) : NULL;
        *vh = bv ? nd_copy(bv) : NULL;
        nd_free(eu);
        nd_free(ev);
        nd_free(bu);
        nd_free(bv);
        return *s && *u && *vh ? ND_OK : nd_last_status();
    }
    /* A matrix holding NaN or inf has NaN singular values and no error, on
     * every backend and routine (NumPy's LAPACK raises "SVD did not
     * converge" there; cuSOLVER's routines variously fail, or return
     * finite values for complex NaN matrices). So the routine factors such
     * a matrix as zeros, and s gets 0 * max|a| added below: +0 where a is
     * finite (s unchanged), NaN where it is not. max, not a sum, so that
     * no finite matrix overflows. The max is one read of a; the zeroing
     * fuses into the packed copy the routine takes anyway. */
    static const int last2[2] = {-2, -1};
    nd_array *mag = nd_abs(a);
    nd_array *top = mag ? nd_max_axes(mag, 2, last2, true) : NULL; /* (..., 1, 1) */
    nd_array *finite = top ? nd_isfinite(top) : NULL;
    nd_array *zero0 = finite ? nd_scalar(0.0) : NULL;
    nd_array *clean = zero0 ? nd_where(finite, a, zero0) : NULL;
    nd_array *p = clean ? nd_la_packed(fn, clean, t) : NULL;
    nd_free(mag);
    nd_free(finite);
    nd_free(zero0);
    nd_free(clean);
    if (!p) {
        nd_status st = nd_last_status();
        nd_free(top);
        return st;
    }
    nd_kernel_output out[3] = {
        {NULL, nd_la_real_dtype(t), nd - 1, shape[0]}, {NULL, t, nd, shape[1]}, {NULL, t, nd, shape[2]}};
    nd_lib_args args = la_args(uv, full, ND_LA_FN_SVD);
    nd_array *res[3] = {NULL, NULL, NULL};
    nd_status st = nd_fe_lib_call(fn, ND_LIB_LA_SVD, &args, 1, &p, 3, out, res);
    nd_fe_release(p);
    if (st != ND_OK) {
        nd_free(top);
        return st;
    }
    *s = nd_runtime_track(res[0]);
    { /* s + 0 * max|a| (above), one per matrix against its k values */
        nd_array *col = nd_squeeze(top, -1);
        nd_array *naught = col ? nd_scalar(0.0) : NULL;
        nd_array *zero = naught ? nd_mul(col, naught) : NULL;
        nd_array *fixed = zero ? nd_add(*s, zero) : NULL;
        nd_free(top);
        nd_free(col);
        nd_free(naught);
        nd_free(zero);
        nd_free(*s);
        *s = fixed;
        if (!fixed) {
            st = nd_last_status();
            nd_fe_release(res[1]);
            nd_fe_release(res[2]);
            return st;
        }
    }
    if (uv) {
        *u = herm(res[1]); /* the routine gives U^H */
        *vh = nd_runtime_track(res[2]);
        nd_fe_release(res[1]);
        if (*u) return ND_OK;
        st = nd_last_status();
        nd_free(*vh);
        nd_free(*s);
        *s = *vh = NULL;
        return st;
    }
    nd_fe_release(res[1]);
    nd_fe_release(res[2]);
    return ND_OK;
}

nd_status nd_linalg_svd(nd_array *a, bool full_matrices, bool compute_uv, nd_array **u, nd_array **s,
                        nd_array **vh) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_svd";
    if (u) *u = NULL;
    if (s) *s = NULL;
    if (vh) *vh = NULL;
    if (!s || (compute_uv && (!u || !vh)))
        return nd_error_set(ND_ERR_ARG, "%s: %s must not be NULL (the results go there)", fn,
                            !s ? "s" : !u ? "u" : "vh");
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return nd_last_status();
    return nd_la_svd(fn, a, full_matrices, compute_uv, u, s, vh);
}

nd_array *nd_linalg_svdvals(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_svdvals";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *s = NULL;
    return nd_la_svd(fn, a, 0, 0, NULL, &s, NULL) == ND_OK ? s : NULL;
}

/* ------------------------------------------------------------ eigh */

static nd_status eigh(const char *fn, nd_array *a, int vectors, nd_array **w, nd_array **v) {
    nd_dtype t;
    nd_array *p = prepare(fn, a, 1, &t);
    if (!p) return nd_last_status();
    int64_t n = a->shape[a->ndim - 1], shape[2][ND_MAX_DIMS];
    int nd = out_shape(a, 2, n, n, shape[1]);
    out_shape(a, 1, n, 0, shape[0]);
    nd_kernel_output out[2] = {{NULL, nd_la_real_dtype(t), nd - 1, shape[0]}, {NULL, t, nd, shape[1]}};
    nd_lib_args args = la_args(vectors, 0, ND_LA_FN_EIGH);
    nd_array *res[2] = {NULL, NULL};
    nd_status s = nd_fe_lib_call(fn, ND_LIB_LA_EIGH, &args, 1, &p, 2, out, res);
    nd_fe_release(p);
    if (s != ND_OK) return s;
    *w = nd_runtime_track(res[0]);
    if (vectors) *v = herm(res[1]); /* the routine gives V^H */
    nd_fe_release(res[1]);
    if (!vectors || *v) return ND_OK;
    nd_free(*w);
    *w = NULL;
    return nd_last_status();
}

nd_status nd_linalg_eigh(nd_array *a, nd_array **w, nd_array **v) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_eigh";
    if (w) *w = NULL;
    if (v) *v = NULL;
    if (!w || !v) return nd_error_set(ND_ERR_ARG, "%s: %s must not be NULL (the results go there)", fn, w ? "v" : "w");
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return nd_last_status();
    return eigh(fn, a, 1, w, v);
}

nd_array *nd_linalg_eigvalsh(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_eigvalsh";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    nd_array *w = NULL;
    return eigh(fn, a, 0, &w, NULL) == ND_OK ? w : NULL;
}

/* ------------------------------------------------------------ eig */

/* Row r of x's second-to-last axis, that axis dropped (a view). */
static nd_array *row_of(nd_array *x, int64_t r) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    int n = x->ndim;
    memcpy(sh, x->shape, sizeof sh);
    memcpy(st, x->strides, sizeof st);
    sh[n - 2] = sh[n - 1];
    st[n - 2] = st[n - 1];
    return nd_fe_view(x, n - 1, sh, st, x->offset + r * x->strides[n - 2]);
}

/* geev's real layout made complex (common/lib_linalg.h, LA_EIG): w = wr +
 * i wi; eigenvector rows VT[j] +- i VT[j + 1] for a pair (wi[j] > 0 on
 * its first row, < 0 on its second), VT[j] for a real one. One fused
 * elementwise pass over neighbouring rows (rolled views: the wrapped row
 * is never selected, as a pair cannot start on the last row). */
static nd_status expand_pairs(nd_array *wr, nd_array *wi, nd_array *vt, nd_array **w, nd_array **v) {
    nd_array *t[16] = {0};
    t[0] = nd_la_imag_unit((nd_dtype)wr->dtype);
    t[1] = t[0] ? nd_mul(wi, t[0]) : NULL;
    *w = t[1] ? nd_add(wr, t[1]) : NULL;
    if (v && *w) {
        t[2] = nd_scalar(0.0);
        t[3] = nd_expand_dims(wi, -1); /* (..., n, 1): one value per row of vt */
        t[4] = t[3] ? nd_gt(t[3], t[2]) : NULL;
        t[5] = t[3] ? nd_lt(t[3], t[2]) : NULL;
        t[6] = nd_roll(vt, -1, -2); /* row j + 1 at j */
        t[7] = nd_roll(vt, 1, -2);  /* row j - 1 at j */
        t[8] = t[5] && t[7] ? nd_where(t[5], t[7], vt) : NULL; /* real parts */
        t[9] = nd_neg(vt);
        t[10] = t[5] && t[9] ? nd_where(t[5], t[9], t[2]) : NULL;
        t[11] = t[4] && t[6] && t[10] ? nd_where(t[4], t[6], t[10]) : NULL; /* imaginary parts */
        t[12] = t[11] ? nd_mul(t[11], t[0]) : NULL;
        t[13] = t[8] && t[12] ? nd_add(t[8], t[12]) : NULL;
        *v = t[13] ? nd_swapaxes(t[13], -1, -2) : NULL;
    }
    for (int i = 0; i < 16; i++) nd_free(t[i]);
    if (*w && (!v || *v)) return ND_OK;
    nd_status s = nd_last_status();
    nd_free(*w);
    *w = NULL;
    if (v) {
        nd_free(*v);
        *v = NULL;
    }
    return s;
}

static nd_status eig(const char *fn, nd_array *a, int vectors, nd_array **w, nd_array **v) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return nd_last_status();
    nd_dtype t = nd_la_dtype(fn, a);
    if (t == ND_NUM_DTYPES || nd_la_matrices(fn, "a", a, 1)) return nd_last_status();
    int cx = nd_la_is_complex(t);
    int64_t n = a->shape[a->ndim - 1], shape[2][ND_MAX_DIMS];
    int nd = out_shape(a, 2, n, n, shape[1]);
    int ndw = cx ? out_shape(a, 1, n, 0, shape[0]) : out_shape(a, 2, 2, n, shape[0]);
    nd_array *at = nd_la_swap_last(a); /* geev takes A column-major */
    nd_array *p = at ? nd_la_packed(fn, at, t) : NULL;
    nd_fe_release(at);
    if (!p) return nd_last_status();
    nd_kernel_output out[2] = {{NULL, t, ndw, shape[0]}, {NULL, t, nd, shape[1]}};
    nd_lib_args args = la_args(vectors, 0, ND_LA_FN_EIG);
    nd_array *res[2] = {NULL, NULL};
    nd_status s = nd_fe_lib_call(fn, ND_LIB_LA_EIG, &args, 1, &p, 2, out, res);
    nd_fe_release(p);
    if (s != ND_OK) return s;
    if (cx) { /* lazy: W and VT are the results */
        *w = nd_runtime_track(res[0]);
        if (vectors) *v = nd_runtime_track(nd_la_swap_last(res[1]));
        nd_fe_release(res[1]);
        if (!vectors || *v) return ND_OK;
        nd_free(*w);
        *w = NULL;
        return nd_last_status();
    }
    /* Real a: NumPy returns real arrays when every imaginary part of the
     * whole batch is zero, complex ones otherwise, so the dtype depends on
     * the values: evaluate the imaginary parts now. */
    nd_array *wr = row_of(res[0], 0), *wi = wr ? row_of(res[0], 1) : NULL;
    nd_array *zero = nd_scalar(0.0), *nz = wi ? nd_ne(wi, zero) : NULL, *any = nz ? nd_any(nz, ND_ALL_AXES) : NULL;
    double complex_parts = any ? nd_item(any) : NAN;
    nd_free(zero);
    nd_free(nz);
    nd_free(any);
    if (isnan(complex_parts)) { /* the step failed (ND_ERR_LINALG), or recording did */
        s = nd_last_status();
    } else if (complex_parts == 0) {
        *w = nd_runtime_track(wr);
        wr = NULL;
        if (vectors) *v = nd_runtime_track(nd_la_swap_last(res[1]));
        s = !vectors || *v ? ND_OK : nd_last_status();
    } else {
        s = expand_pairs(wr, wi, res[1], w, vectors ? v : NULL);
    }
    nd_fe_release(wr);
    nd_fe_release(wi);
    nd_fe_release(res[0]);
    nd_fe_release(res[1]);
    if (s != ND_OK) {
        nd_free(*w);
        *w = NULL;
        if (vectors) {
            nd_free(*v);
            *v = NULL;
        }
    }
    return s;
}

nd_status nd_linalg_eig(nd_array *a, nd_array **w, nd_array **v) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_eig";
    if (w) *w = NULL;
    if (v) *v = NULL;
    if (!w || !v) return nd_error_set(ND_ERR_ARG, "%s: %s must not be NULL (the results go there)", fn, w ? "v" : "w");
    return eig(fn, a, 1, w, v);
}

nd_array *nd_linalg_eigvals(nd_array *a) {
    ND_API_GUARD();
    nd_array *w = NULL;
    return eig("nd_linalg_eigvals", a, 0, &w, NULL) == ND_OK ? w : NULL;
}
