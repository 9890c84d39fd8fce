/* numpy.linalg functions composed from the factorisations
 * (linalg_decomp.c) and lazy ops: pinv, matrix_rank, cond, lstsq,
 * matrix_power, multi_dot, norm, and tensordot and kron. Each is a few
 * public calls whose temporaries are freed at the end; the results fuse
 * with whatever consumes them like any other lazy result. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/linalg_internal.h"

/* Temporaries of one function, freed together. */
#define MAX_TMP 32
typedef struct {
    nd_array *a[MAX_TMP];
    int n;
} temps;
static nd_array *keep(temps *t, nd_array *a) {
    if (a && t->n < MAX_TMP) t->a[t->n++] = a;
    return a;
}
static void drop(temps *t) {
    for (int i = 0; i < t->n; i++) nd_free(t->a[i]);
    t->n = 0;
}
static double eps_of(nd_dtype t) { return nd_la_real_dtype(t) == ND_FLOAT32 ? FLT_EPSILON : DBL_EPSILON; }
/* x^H of the last two axes (x^T for real x). */
static nd_array *herm_t(temps *t, nd_array *x) {
    nd_array *sw = keep(t, nd_swapaxes(x, -1, -2));
    return sw && nd_la_is_complex((nd_dtype)x->dtype) ? keep(t, nd_conj(sw)) : sw;
}

/* 1/s where s > cutoff, else 0 (the pseudo-inverse's singular values). */
static nd_array *inverted_above(temps *t, nd_array *s, nd_array *cutoff) {
    nd_array *gt = keep(t, nd_gt(s, cutoff));
    nd_array *one = keep(t, nd_scalar(1.0)), *zero = keep(t, nd_scalar(0.0));
    nd_array *rec = gt ? keep(t, nd_div(one, s)) : NULL;
    return rec ? keep(t, nd_where(gt, rec, zero)) : NULL;
}

/* rcond * max(s) over the last axis, kept as (..., 1). */
static nd_array *cutoff_of(temps *t, nd_array *s, double rcond) {
    int last = -1;
    nd_array *mx = keep(t, nd_max_axes(s, 1, &last, true));
    nd_array *rc = keep(t, nd_scalar(rcond));
    return mx ? keep(t, nd_mul(mx, rc)) : NULL;
}

nd_array *nd_linalg_pinv(nd_array *a, double rcond) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_pinv";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (rcond < 0) rcond = 1e-15;
    temps t = {0};
    nd_array *u = NULL, *s = NULL, *vh = NULL, *out = NULL;
    if (nd_la_svd(fn, a, 0, 1, &u, &s, &vh) == ND_OK) {
        keep(&t, u), keep(&t, s), keep(&t, vh);
        nd_array *cut = cutoff_of(&t, s, rcond);
        nd_array *sinv = cut ? inverted_above(&t, s, cut) : NULL;
        nd_array *col = sinv ? keep(&t, nd_expand_dims(sinv, -1)) : NULL; /* (..., k, 1) */
        nd_array *ut = col ? herm_t(&t, u) : NULL;     /* U^H (..., k, m) */
        nd_array *scaled = ut ? keep(&t, nd_mul(col, ut)) : NULL;
        nd_array *v = scaled ? herm_t(&t, vh) : NULL;  /* V (..., n, k) */
        out = v ? nd_matmul(v, scaled) : NULL;
    }
    drop(&t);
    return out;
}

nd_array *nd_linalg_matrix_rank(nd_array *a, double tol) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_matrix_rank";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    temps t = {0};
    nd_array *out = NULL;
    if (a->ndim < 2) { /* NumPy: int(not all(a == 0)) */
        nd_array *zero = keep(&t, nd_scalar(0.0)), *nz = keep(&t, nd_ne(a, zero));
        nd_array *any = nz ? keep(&t, nd_any(nz, ND_ALL_AXES)) : NULL;
        out = any ? nd_astype(any, ND_INT64) : NULL;
        drop(&t);
        return out;
    }
    nd_array *s = NULL;
    if (nd_la_svd(fn, a, 0, 0, NULL, &s, NULL) == ND_OK) {
        keep(&t, s);
        int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
        nd_array *cut;
        if (tol < 0) {
            cut = cutoff_of(&t, s, (double)(m > n ? m : n) * eps_of((nd_dtype)s->dtype));
        } else {
            cut = keep(&t, nd_scalar(tol));
        }
        nd_array *gt = cut ? keep(&t, nd_gt(s, cut)) : NULL;
        nd_array *cnt = gt ? keep(&t, nd_sum(gt, -1)) : NULL;
        out = cnt ? nd_astype(cnt, ND_INT64) : NULL;
    }
    drop(&t);
    return out;
}

nd_array *nd_linalg_cond(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_cond";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    temps t = {0};
    nd_array *s = NULL, *out = NULL;
    if (nd_la_svd(fn, a, 0, 0, NULL, &s, NULL) == ND_OK) {
        keep(&t, s);
        nd_array *mx = keep(&t, nd_max(s, -1)), *mn = keep(&t, nd_min(s, -1));
        out = mx && mn ? nd_div(mx, mn) : NULL;
    }
    drop(&t);
    return out;
}

nd_status nd_linalg_lstsq(nd_array *a, nd_array *b, double rcond, nd_array **x, nd_array **residuals,
                          nd_array **rank, nd_array **s) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_lstsq";
    nd_array **outs[4] = {x, residuals, rank, s};
    for (int i = 0; i < 4; i++)
        if (outs[i]) *outs[i] = NULL;
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b) || nd_runtime_ensure() != ND_OK) return nd_last_status();
    if (a->ndim != 2)
        return nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d; it must be a matrix (2-d)", fn, a->ndim);
    if ((b->ndim != 1 && b->ndim != 2) || b->shape[0] != a->shape[0])
        return nd_error_set(ND_ERR_SHAPE, "%s: b must be (m,) or (m, k) with m = %lld, a's rows (b is %d-d with "
                            "%lld rows)", fn, (long long)a->shape[0], b->ndim,
                            (long long)(b->ndim ? b->shape[0] : 0));
    nd_dtype ta = nd_la_dtype(fn, a), tb = ta == ND_NUM_DTYPES ? ta : nd_la_dtype(fn, b);
    if (tb == ND_NUM_DTYPES) return nd_last_status();
    nd_dtype dt = nd_la_common(ta, tb);
    int64_t m = a->shape[0], n = a->shape[1], k = b->ndim == 2 ? b->shape[1] : 1;
    if (rcond < 0) rcond = eps_of(dt) * (double)(m > n ? m : n);
    temps t = {0};
    nd_array *u = NULL, *sv = NULL, *vh = NULL;
    nd_array *af = keep(&t, nd_astype(a, dt)), *bf = af ? keep(&t, nd_astype(b, dt)) : NULL;
    int64_t col[2] = {m, k};
    nd_array *b2 = bf ? keep(&t, nd_reshape(bf, 2, col)) : NULL;
    nd_status st = b2 ? nd_la_svd(fn, af, 0, 1, &u, &sv, &vh) : nd_last_status();
    nd_array *xv = NULL, *rk = NULL, *res = NULL;
    if (st == ND_OK) {
        keep(&t, u), keep(&t, vh);
        nd_array *cut = cutoff_of(&t, sv, rcond);
        nd_array *sinv = cut ? inverted_above(&t, sv, cut) : NULL;
        nd_array *ut = sinv ? herm_t(&t, u) : NULL;
        nd_array *utb = ut ? keep(&t, nd_matmul(ut, b2)) : NULL; /* (k', k) */
        nd_array *colv = utb ? keep(&t, nd_expand_dims(sinv, -1)) : NULL;
        nd_array *scaled = colv ? keep(&t, nd_mul(colv, utb)) : NULL;
        nd_array *v = scaled ? herm_t(&t, vh) : NULL;
        nd_array *x2 = v ? keep(&t, nd_matmul(v, scaled)) : NULL; /* (n, k) */
        int64_t xs[2] = {n, k};
        xv = x2 ? nd_reshape(x2, b->ndim, xs) : NULL;
        nd_array *gt = xv && cut ? keep(&t, nd_gt(sv, cut)) : NULL;
        nd_array *cnt = gt ? keep(&t, nd_sum(gt, -1)) : NULL;
        rk = cnt ? nd_astype(cnt, ND_INT64) : NULL;
        /* The residuals' shape depends on the rank: evaluate it now. */
        double r = rk ? nd_item(rk) : -1;
        if (rk && nd_last_status() == ND_OK) {
            if ((int64_t)r == n && m > n) {
                nd_array *ax = keep(&t, nd_matmul(af, x2));
                nd_array *d = ax ? keep(&t, nd_sub(b2, ax)) : NULL;
                nd_array *ad = d ? keep(&t, nd_abs(d)) : NULL; /* |d|^2: real for complex d */
                nd_array *sq = ad ? keep(&t, nd_square(ad)) : NULL;
                res = sq ? nd_sum(sq, 0) : NULL;
            } else {
                int64_t zero = 0;
                res = nd_empty(nd_la_real_dtype(dt), 1, &zero);
            }
        }
        st = xv && rk && res ? ND_OK : nd_last_status();
        if (st == ND_OK && st == ND_OK) {
            nd_array *vals[4] = {xv, res, rk, sv};
            for (int i = 0; i < 4; i++) {
                if (outs[i]) *outs[i] = vals[i];
                else nd_free(vals[i]);
            }
            xv = rk = res = sv = NULL;
        }
    }
    nd_free(xv);
    nd_free(rk);
    nd_free(res);
    nd_free(sv);
    drop(&t);
    return st;
}

nd_array *nd_linalg_matrix_power(nd_array *a, int64_t n) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_matrix_power";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_la_matrices(fn, "a", a, 1)) return NULL;
    int64_t m = a->shape[a->ndim - 1];
    if (n == 0) {
        nd_array *eye = nd_eye((nd_dtype)a->dtype, m, m, 0);
        nd_array *b = eye ? nd_broadcast_to(eye, a->ndim, a->shape) : NULL;
        nd_array *out = b ? nd_copy(b) : NULL;
        nd_free(eye);
        nd_free(b);
        return out;
    }
    nd_array *base = n < 0 ? nd_linalg_inv(a) : nd_retain(a);
    if (!base) return NULL;
    uint64_t e = n < 0 ? (uint64_t)(-(n + 1)) + 1 : (uint64_t)n;
    nd_array *result = NULL;
    while (base) { /* binary powering */
        if (e & 1) {
            nd_array *r = result ? nd_matmul(result, base) : nd_retain(base);
            nd_free(result);
            result = r;
            if (!r) break;
        }
        e >>= 1;
        if (!e) break;
        nd_array *sq = nd_matmul(base, base);
        nd_free(base);
        base = sq;
    }
    nd_free(base);
    if (!e) return result;
    nd_free(result);
    return NULL;
}

/* ------------------------------------------------------------ multi_dot */

/* The product of arrays[i..j] in the order split[] chose. */
static nd_array *chain(nd_array *const *arrays, const int *split, int n, int i, int j) {
    if (i == j) return nd_retain(arrays[i]);
    int s = split[i * n + j];
    nd_array *l = chain(arrays, split, n, i, s), *r = l ? chain(arrays, split, n, s + 1, j) : NULL;
    nd_array *p = r ? nd_matmul(l, r) : NULL;
    nd_free(l);
    nd_free(r);
    return p;
}

nd_array *nd_linalg_multi_dot(int n, nd_array *const *arrays) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_multi_dot";
    if (n < 2 || !arrays) {
        nd_error_set(ND_ERR_ARG, "%s: needs at least 2 arrays (got %d%s)", fn, n, arrays ? "" : ", arrays NULL");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "arrays[%d]", i);
        if (nd_fe_arg(fn, name, arrays[i])) return NULL;
        int want1 = (i == 0 || i == n - 1) && arrays[i]->ndim == 1;
        if (!want1 && arrays[i]->ndim != 2) {
            nd_error_set(ND_ERR_SHAPE, "%s: %s is %d-d; the first and last may be 1-d, every array must otherwise "
                         "be 2-d", fn, name, arrays[i]->ndim);
            return NULL;
        }
    }
    if (nd_runtime_ensure() != ND_OK) return NULL;
    nd_array **mats = nd_calloc((size_t)n, sizeof *mats);
    int64_t *p = nd_calloc((size_t)n + 1, sizeof *p), *cost = nd_calloc((size_t)n * n, sizeof *cost);
    int *split = nd_calloc((size_t)n * n, sizeof *split);
    nd_array *out = NULL;
    int first1 = arrays[0]->ndim == 1, last1 = arrays[n - 1]->ndim == 1, ok = mats && p && cost && split;
    if (!ok) nd_error_set(ND_ERR_OOM, "%s: out of host memory for %d arrays", fn, n);
    for (int i = 0; i < n && ok; i++) { /* 1-d ends as a row and a column */
        int64_t len = arrays[i]->shape[0], rs[2] = {1, len}, cs[2] = {len, 1};
        mats[i] = i == 0 && first1 ? nd_reshape(arrays[i], 2, rs)
                  : i == n - 1 && last1 ? nd_reshape(arrays[i], 2, cs) : nd_retain(arrays[i]);
        ok = mats[i] != NULL;
    }
    for (int i = 0; i < n && ok; i++) {
        p[i] = mats[i]->shape[0];
        if (i > 0 && mats[i]->shape[0] != mats[i - 1]->shape[1]) {
            nd_error_set(ND_ERR_SHAPE, "%s: arrays[%d] has %lld columns but arrays[%d] has %lld rows", fn, i - 1,
                         (long long)mats[i - 1]->shape[1], i, (long long)mats[i]->shape[0]);
            ok = 0;
        }
    }
    if (ok) {
        p[n] = mats[n - 1]->shape[1];
        /* cost[i][j]: fewest scalar multiplications for mats[i..j]. */
        for (int len = 1; len < n; len++)
            for (int i = 0; i + len < n; i++) {
                int j = i + len;
                cost[i * n + j] = INT64_MAX;
                for (int s = i; s < j; s++) {
                    double c = (double)cost[i * n + s] + (double)cost[(s + 1) * n + j] +
                               (double)p[i] * (double)p[s + 1] * (double)p[j + 1];
                    int64_t ci = c > 9e18 ? INT64_MAX - 1 : (int64_t)c;
                    if (ci < cost[i * n + j]) {
                        cost[i * n + j] = ci;
                        split[i * n + j] = s;
                    }
                }
            }
        out = chain(mats, split, n, 0, n - 1);
    }
    if (out && (first1 || last1)) { /* drop the axes the 1-d ends gained */
        int64_t shape[2];
        int nd = 0;
        if (!first1) shape[nd++] = out->shape[0];
        if (!last1) shape[nd++] = out->shape[1];
        nd_array *r = nd_reshape(out, nd, shape);
        nd_free(out);
        out = r;
    }
    for (int i = 0; mats && i < n; i++) nd_free(mats[i]);
    free(mats);
    free(p);
    free(cost);
    free(split);
    return out;
}

/* ------------------------------------------------------------ norm */

nd_array *nd_linalg_norm(nd_array *a, nd_norm_kind kind, double ord) {
    ND_API_GUARD();
    static const char fn[] = "nd_linalg_norm";
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (kind < ND_NORM_DEFAULT || kind > ND_NORM_NUC) {
        nd_error_set(ND_ERR_ARG, "%s: kind %d is not a norm kind (ND_NORM_DEFAULT, ND_NORM_ORD, ND_NORM_FRO, "
                     "ND_NORM_NUC)", fn, (int)kind);
        return NULL;
    }
    nd_dtype dt = nd_la_dtype(fn, a);
    if (dt == ND_NUM_DTYPES) return NULL;
    if (kind != ND_NORM_DEFAULT && a->ndim != 1 && a->ndim != 2) {
        nd_error_set(ND_ERR_ARG, "%s: a is %d-d; an ord needs a vector (1-d) or a matrix (2-d) (use "
                     "ND_NORM_DEFAULT for the 2-norm of all elements)", fn, a->ndim);
        return NULL;
    }
    int vec = a->ndim == 1, fro = kind == ND_NORM_DEFAULT || kind == ND_NORM_FRO || (vec && ord == 2);
    if (vec && (kind == ND_NORM_FRO || kind == ND_NORM_NUC)) {
        nd_error_set(ND_ERR_ARG, "%s: '%s' is a matrix norm; a is a vector (use ND_NORM_ORD with ord 2)", fn,
                     kind == ND_NORM_FRO ? "fro" : "nuc");
        return NULL;
    }
    if (!vec && kind == ND_NORM_ORD && !(ord == 1 || ord == -1 || ord == 2 || ord == -2 || isinf(ord))) {
        nd_error_set(ND_ERR_ARG, "%s: ord %g is not a matrix norm (use 1, -1, 2, -2, INFINITY, -INFINITY, or "
                     "ND_NORM_FRO / ND_NORM_NUC)", fn, ord);
        return NULL;
    }
    temps t = {0};
    nd_array *x = keep(&t, nd_astype(a, dt)), *out = NULL;
    nd_array *ab = x ? keep(&t, nd_abs(x)) : NULL;
    if (!ab) goto done;
    if (fro) { /* |x|^2 summed: complex x too */
        nd_array *sq = keep(&t, nd_square(nd_la_is_complex(dt) ? ab : x)), *sum = sq ? keep(&t, nd_sum(sq, ND_ALL_AXES)) : NULL;
        out = sum ? nd_sqrt(sum) : NULL;
    } else if (kind == ND_NORM_NUC || (!vec && (ord == 2 || ord == -2))) {
        nd_array *s = keep(&t, nd_linalg_svdvals(x));
        out = !s ? NULL : kind == ND_NORM_NUC ? nd_sum(s, -1) : ord == 2 ? nd_max(s, -1) : nd_min(s, -1);
    } else if (!vec) { /* 1, -1: column sums; inf, -inf: row sums */
        nd_array *sums = keep(&t, nd_sum(ab, isinf(ord) ? 1 : 0));
        out = !sums ? NULL : ord > 0 ? nd_max(sums, 0) : nd_min(sums, 0);
    } else if (isinf(ord)) {
        out = ord > 0 ? nd_max(ab, 0) : nd_min(ab, 0);
    } else if (ord == 0) {
        nd_array *zero = keep(&t, nd_scalar(0.0)), *nz = keep(&t, nd_ne(x, zero));
        nd_array *cnt = nz ? keep(&t, nd_sum(nz, 0)) : NULL;
        out = cnt ? nd_astype(cnt, nd_la_real_dtype(dt)) : NULL;
    } else if (ord == 1) {
        out = nd_sum(ab, 0);
    } else { /* sum(|x|^p)^(1/p) */
        nd_array *p = keep(&t, nd_scalar(ord)), *ip = keep(&t, nd_scalar(1.0 / ord));
        nd_array *pw = keep(&t, nd_pow(ab, p)), *sum = pw ? keep(&t, nd_sum(pw, 0)) : NULL;
        out = sum ? nd_pow(sum, ip) : NULL;
    }
done:
    drop(&t);
    return out;
}

/* ------------------------------------------------------------ tensordot, kron */

nd_array *nd_tensordot_axes(nd_array *a, nd_array *b, int n, const int *axes_a, const int *axes_b) {
    ND_API_GUARD();
    static const char fn[] = "nd_tensordot";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b) || nd_runtime_ensure() != ND_OK) return NULL;
    if (n < 0 || n > a->ndim || n > b->ndim || (n > 0 && (!axes_a || !axes_b))) {
        nd_error_set(ND_ERR_ARG, "%s: %d summed axes for a %d-d a and a %d-d b (use 0..%d, with both axis lists)",
                     fn, n, a->ndim, b->ndim, a->ndim < b->ndim ? a->ndim : b->ndim);
        return NULL;
    }
    int ua[ND_MAX_DIMS] = {0}, ub[ND_MAX_DIMS] = {0}, pa[ND_MAX_DIMS], pb[ND_MAX_DIMS];
    int64_t ksize = 1;
    for (int i = 0; i < n; i++) {
        int x = axes_a[i] < 0 ? axes_a[i] + a->ndim : axes_a[i], y = axes_b[i] < 0 ? axes_b[i] + b->ndim : axes_b[i];
        if (x < 0 || x >= a->ndim || y < 0 || y >= b->ndim || ua[x] || ub[y]) {
            nd_error_set(ND_ERR_ARG, "%s: axes pair %d (%d, %d) is out of range or repeated for a %d-d a and a %d-d "
                         "b", fn, i, axes_a[i], axes_b[i], a->ndim, b->ndim);
            return NULL;
        }
        if (a->shape[x] != b->shape[y]) {
            nd_error_set(ND_ERR_SHAPE, "%s: a's axis %d has length %lld but b's axis %d has %lld; summed axes must "
                         "match", fn, x, (long long)a->shape[x], y, (long long)b->shape[y]);
            return NULL;
        }
        ua[x] = ub[y] = 1;
        pa[a->ndim - n + i] = x;
        pb[i] = y;
        ksize *= a->shape[x];
    }
    int64_t out_shape[2 * ND_MAX_DIMS], fa = 1, fb = 1;
    int nout = 0;
    for (int d = 0, j = 0; d < a->ndim; d++)
        if (!ua[d]) {
            pa[j++] = d;
            out_shape[nout++] = a->shape[d];
            fa *= a->shape[d];
        }
    for (int d = 0, j = n; d < b->ndim; d++)
        if (!ub[d]) {
            pb[j++] = d;
            out_shape[nout++] = b->shape[d];
            fb *= b->shape[d];
        }
    if (nout > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: the result would have %d dimensions (at most %d)", fn, nout, ND_MAX_DIMS);
        return NULL;
    }
    temps t = {0};
    int64_t sa[2] = {fa, ksize}, sb[2] = {ksize, fb};
    nd_array *ta = keep(&t, nd_transpose(a, pa)), *tb = ta ? keep(&t, nd_transpose(b, pb)) : NULL;
    nd_array *ra = tb ? keep(&t, nd_reshape(ta, 2, sa)) : NULL, *rb = ra ? keep(&t, nd_reshape(tb, 2, sb)) : NULL;
    nd_array *p = rb ? keep(&t, nd_matmul(ra, rb)) : NULL;
    nd_array *out = p ? nd_reshape(p, nout, out_shape) : NULL;
    drop(&t);
    return out;
}

nd_array *nd_tensordot(nd_array *a, nd_array *b, int naxes) {
    ND_API_GUARD();
    static const char fn[] = "nd_tensordot";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b)) return NULL;
    if (naxes < 0 || naxes > a->ndim || naxes > b->ndim) {
        nd_error_set(ND_ERR_ARG, "%s: naxes %d for a %d-d a and a %d-d b (use 0..%d)", fn, naxes, a->ndim, b->ndim,
                     a->ndim < b->ndim ? a->ndim : b->ndim);
        return NULL;
    }
    int xa[ND_MAX_DIMS], xb[ND_MAX_DIMS];
    for (int i = 0; i < naxes; i++) {
        xa[i] = a->ndim - naxes + i;
        xb[i] = i;
    }
    return nd_tensordot_axes(a, b, naxes, xa, xb);
}

nd_array *nd_kron(nd_array *a, nd_array *b) {
    ND_API_GUARD();
    static const char fn[] = "nd_kron";
    if (nd_fe_arg(fn, "a", a) || nd_fe_arg(fn, "b", b) || nd_runtime_ensure() != ND_OK) return NULL;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (2 * nd > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: operands of %d dimensions (nd's kron takes at most %d)", fn, nd,
                     ND_MAX_DIMS / 2);
        return NULL;
    }
    /* a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product is
     * (a0, b0, a1, b1, ...), merged pairwise. */
    int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], so[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int64_t x = d - (nd - a->ndim) >= 0 ? a->shape[d - (nd - a->ndim)] : 1;
        int64_t y = d - (nd - b->ndim) >= 0 ? b->shape[d - (nd - b->ndim)] : 1;
        sa[2 * d] = x, sa[2 * d + 1] = 1;
        sb[2 * d] = 1, sb[2 * d + 1] = y;
        so[d] = x * y;
    }
    temps t = {0};
    nd_array *ra = keep(&t, nd_reshape(a, 2 * nd, sa)), *rb = ra ? keep(&t, nd_reshape(b, 2 * nd, sb)) : NULL;
    nd_array *p = rb ? keep(&t, nd_mul(ra, rb)) : NULL;
    nd_array *out = p ? nd_reshape(p, nd, so) : NULL;
    drop(&t);
    return out;
}
