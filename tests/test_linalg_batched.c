/* Batches of small matrices through numpy.linalg (include/nd/linalg_decomp.h)
 * against references built here in float64: SVDs of matrices A = U diag(s)
 * Vh made from random unitary factors (so S is known exactly), in every
 * dtype, square, tall and wide, full_matrices on and off and values only,
 * batch sizes 1, 2 and 1000 (on CUDA a batch of two or more matrices up to
 * 32 x 32 is one gesvdjBatched call, a single matrix gesvdj:
 * src/backends/cuda/lib_linalg.c, svd_batched), and NaN and inf matrices
 * inside a batch. The checks are computed on the host from the downloaded U, S, Vh:
 * S against the singular values built in, U diag(S) Vh against A, and U, Vh
 * unitary, within a backward stable SVD's error, a small multiple of
 * k eps ||A|| (||A|| = s[0]). */
#include "common.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cd;

static int is_cx(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_COMPLEX128; }
static int is_single(nd_dtype t) { return t == ND_FLOAT32 || t == ND_COMPLEX64; }

/* A random unitary n x n (orthogonal when !cx), row-major: Gram-Schmidt
 * on a uniform matrix's columns, each projection done twice (once loses
 * orthogonality in proportion to the matrix's condition number, which
 * would shift the singular values built with it by more than the
 * tolerance). */
static void random_unitary(ndt_rng *r, int64_t n, int cx, cd *q) {
    for (int64_t i = 0; i < n * n; i++) q[i] = ndt_uniform(r, -1, 1) + (cx ? I * ndt_uniform(r, -1, 1) : 0);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t p = 0; p < 2 * j; p++) {
            cd d = 0;
            for (int64_t i = 0; i < n; i++) d += conj(q[i * n + p % j]) * q[i * n + j];
            for (int64_t i = 0; i < n; i++) q[i * n + j] -= d * q[i * n + p % j];
        }
        double nn = 0;
        for (int64_t i = 0; i < n; i++) nn += creal(q[i * n + j] * conj(q[i * n + j]));
        nn = sqrt(nn);
        for (int64_t i = 0; i < n; i++) q[i * n + j] /= nn;
    }
}

/* batch matrices m x n into a (row-major, one after another) with the
 * singular values sig (k per matrix, descending, in [0.1, 2]: condition
 * number at most 20). */
static void known_batch(ndt_rng *r, int64_t batch, int64_t m, int64_t n, int cx, cd *a, double *sig) {
    int64_t k = m < n ? m : n;
    cd *u = malloc(sizeof(cd) * (size_t)(m * m)), *v = malloc(sizeof(cd) * (size_t)(n * n));
    for (int64_t b = 0; b < batch; b++) {
        double *s = sig + b * k;
        for (int64_t i = 0; i < k; i++) s[i] = ndt_uniform(r, 0.1, 2);
        for (int64_t i = 0; i < k; i++) /* descending */
            for (int64_t j = i + 1; j < k; j++)
                if (s[j] > s[i]) {
                    double t = s[i];
                    s[i] = s[j], s[j] = t;
                }
        random_unitary(r, m, cx, u);
        random_unitary(r, n, cx, v);
        cd *ab = a + b * m * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                cd x = 0;
                for (int64_t p = 0; p < k; p++) x += u[i * m + p] * s[p] * v[p * n + j];
                ab[i * n + j] = x;
            }
    }
    free(u), free(v);
}

/* The batch as an nd array of dtype t and shape (lead..., m, n). */
static nd_array *upload(nd_dtype t, int nd, const int64_t *shape, const cd *a, int64_t count) {
    nd_array *d = NULL;
    if (is_cx(t)) d = nd_from_host(a, ND_COMPLEX128, nd, shape);
    else {
        double *re = malloc(sizeof(double) * (size_t)(count ? count : 1));
        for (int64_t i = 0; i < count; i++) re[i] = creal(a[i]);
        d = nd_from_host(re, ND_FLOAT64, nd, shape);
        free(re);
    }
    cr_assert(d, "upload: %s", nd_last_error());
    if (t == ND_FLOAT64 || t == ND_COMPLEX128) return d;
    nd_array *c = nd_astype(d, t);
    nd_free(d);
    cr_assert(c, "astype: %s", nd_last_error());
    return c;
}

/* x's values as complex doubles (malloc'd), count elements. */
static cd *download(nd_array *x, int64_t count) {
    cr_assert(x, "no array: %s", nd_last_error());
    nd_array *d = nd_astype(x, ND_COMPLEX128);
    cd *v = malloc(sizeof(cd) * (size_t)(count ? count : 1));
    cr_assert(d && nd_to_host(d, v, (size_t)count * sizeof(cd)) == ND_OK, "read: %s", nd_last_error());
    nd_free(d);
    return v;
}

/* max |(X^H X or X X^H) - I| over an r x c matrix x: the columns (rows
 * when !cols) orthonormal. */
static double unitary_err(const cd *x, int64_t r, int64_t c, int cols) {
    int64_t d = cols ? c : r, len = cols ? r : c;
    double worst = 0;
    for (int64_t p = 0; p < d; p++)
        for (int64_t q = 0; q < d; q++) {
            cd s = 0;
            for (int64_t i = 0; i < len; i++)
                s += cols ? conj(x[i * c + p]) * x[i * c + q] : x[p * c + i] * conj(x[q * c + i]);
            worst = fmax(worst, cabs(s - (p == q ? 1.0 : 0.0)));
        }
    return worst;
}

/* One batch: nd_linalg_svd (and nd_linalg_svdvals) against the known
 * values, the reconstruction and unitarity, matrix by matrix. */
static void check_batch(nd_dtype t, int nlead, const int64_t *lead, int64_t m, int64_t n, int full, int uv) {
    NDT_RNG(r);
    int64_t batch = 1, shape[ND_MAX_DIMS];
    for (int i = 0; i < nlead; i++) batch *= lead[i], shape[i] = lead[i];
    shape[nlead] = m, shape[nlead + 1] = n;
    int64_t k = m < n ? m : n, cu = full ? m : k, cv = full ? n : k;
    cd *a = malloc(sizeof(cd) * (size_t)(batch * m * n));
    double *sig = malloc(sizeof(double) * (size_t)(batch * k));
    known_batch(&r, batch, m, n, is_cx(t), a, sig);
    double eps = is_single(t) ? FLT_EPSILON : DBL_EPSILON, tol = 64 * (double)(k + 1) * eps * 2; /* ||A|| <= 2 */
    nd_array *x = upload(t, nlead + 2, shape, a, batch * m * n), *u = NULL, *s = NULL, *vh = NULL;
    cr_assert_eq(nd_linalg_svd(x, full, uv, &u, &s, &vh), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_ndim(s), nlead + 1);
    cr_expect_eq(nd_dtype_of(s), is_single(t) ? ND_FLOAT32 : ND_FLOAT64);
    cd *gs = download(s, batch * k), *gu = NULL, *gv = NULL;
    if (uv) {
        cr_assert(nd_ndim(u) == nlead + 2 && nd_shape(u)[nlead] == m && nd_shape(u)[nlead + 1] == cu &&
                      nd_shape(vh)[nlead] == cv && nd_shape(vh)[nlead + 1] == n,
                  "U, Vh shapes");
        cr_expect(nd_dtype_of(u) == t && nd_dtype_of(vh) == t);
        gu = download(u, batch * m * cu), gv = download(vh, batch * cv * n);
    }
    const char *what = nd_dtype_name(t);
    for (int64_t b = 0; b < batch; b++) {
        const cd *sb = gs + b * k;
        double es = 0;
        for (int64_t i = 0; i < k; i++) es = fmax(es, fabs(creal(sb[i]) - sig[b * k + i]));
        if (!(es <= tol)) {
            cr_expect(0, "%s batch %lld of %lld x %lld, full %d uv %d: matrix %lld's S off by %g (tolerance %g)", what,
                      (long long)batch, (long long)m, (long long)n, full, uv, (long long)b, es, tol);
            break;
        }
        if (!uv) continue;
        const cd *ub = gu + b * m * cu, *vb = gv + b * cv * n, *ab = a + b * m * n;
        double rec = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                cd z = 0;
                for (int64_t p = 0; p < k; p++) z += ub[i * cu + p] * creal(sb[p]) * vb[p * n + j];
                rec = fmax(rec, cabs(z - ab[i * n + j]));
            }
        double ou = unitary_err(ub, m, cu, 1), ov = unitary_err(vb, cv, n, 0);
        if (!(rec <= tol && ou <= tol && ov <= tol)) {
            cr_expect(0, "%s batch %lld of %lld x %lld, full %d: matrix %lld: |U S Vh - A| %g, |U^H U - I| %g, "
                      "|Vh Vh^H - I| %g (tolerance %g)", what, (long long)batch, (long long)m, (long long)n, full,
                      (long long)b, rec, ou, ov, tol);
            break;
        }
    }
    if (!uv) { /* svdvals: the same values */
        nd_array *s2 = nd_linalg_svdvals(x);
        cd *g2 = download(s2, batch * k);
        for (int64_t i = 0; i < batch * k; i++)
            if (!(fabs(creal(g2[i]) - sig[i]) <= tol)) {
                cr_expect(0, "%s svdvals: value %lld is %g, expected %g", what, (long long)i, creal(g2[i]), sig[i]);
                break;
            }
        free(g2);
        nd_free(s2);
    }
    free(gs), free(gu), free(gv), free(a), free(sig);
    nd_free(x), nd_free(u), nd_free(s), nd_free(vh);
}

static const nd_dtype ALL[4] = {ND_FLOAT32, ND_FLOAT64, ND_COMPLEX64, ND_COMPLEX128};
static const int64_t SHAPES[5][2] = {{8, 8}, {32, 32}, {32, 16}, {16, 32}, {1, 1}};

/* Batches of 1 (one matrix: gesvdj on CUDA) and 2 (the smallest batch
 * gesvdjBatched takes) of every shape, dtype and mode. */
NDT_TEST(linalg_batched, svd_known_values_small_batches) {
    for (int ti = 0; ti < 4; ti++)
        for (int si = 0; si < 5; si++)
            for (int64_t batch = 1; batch <= 2; batch++) {
                int64_t m = SHAPES[si][0], n = SHAPES[si][1];
                check_batch(ALL[ti], 1, &batch, m, n, 0, 1);
                check_batch(ALL[ti], 1, &batch, m, n, 1, 1);
                check_batch(ALL[ti], 1, &batch, m, n, 0, 0);
            }
}

/* A thousand matrices, also over two leading axes. */
NDT_TEST(linalg_batched, svd_known_values_batch_of_1000) {
    static const int64_t b1000[1] = {1000}, b10x100[2] = {10, 100};
    check_batch(ND_FLOAT32, 1, b1000, 8, 8, 0, 1);
    check_batch(ND_FLOAT32, 2, b10x100, 32, 32, 0, 1);
    check_batch(ND_FLOAT64, 1, b1000, 32, 16, 1, 1); /* tall, complete U: the columns past k too */
    check_batch(ND_FLOAT64, 1, b1000, 16, 32, 0, 1); /* wide, reduced Vh: gathered from full V */
    check_batch(ND_COMPLEX64, 1, b1000, 16, 32, 1, 1);
    check_batch(ND_COMPLEX64, 1, b1000, 32, 16, 0, 1);
    check_batch(ND_COMPLEX128, 1, b1000, 8, 8, 1, 1);
    check_batch(ND_FLOAT32, 1, b1000, 8, 8, 0, 0); /* values only */
    check_batch(ND_COMPLEX128, 1, b1000, 32, 16, 0, 0);
}

/* Past 32 on a side the batch is factored matrix by matrix again (on
 * CUDA): the edge of gesvdjBatched's limit, both sides. */
NDT_TEST(linalg_batched, svd_batch_past_32) {
    static const int64_t b3[1] = {3};
    check_batch(ND_FLOAT32, 1, b3, 33, 32, 0, 1);
    check_batch(ND_FLOAT64, 1, b3, 32, 33, 1, 1);
    check_batch(ND_COMPLEX64, 1, b3, 33, 33, 0, 0);
}

/* A NaN or an inf in a matrix of a batch: every singular value of that
 * matrix is NaN, on every backend and whatever the routine makes of it
 * (the frontend adds 0 * max|a| to S: nd_linalg_svd), and the call does
 * not fail; the other matrices are right. NumPy raises "SVD did not
 * converge" there; nd documents the difference (linalg_decomp.h). On
 * CUDA the batch is one gesvdjBatched call (values only, or with vectors
 * from 1 x 1 to 32 x 32). */
NDT_TEST(linalg_batched, svd_nan_and_inf_matrices_in_a_batch) {
    static const double bad_values[3] = {NAN, INFINITY, -INFINITY};
    for (int ti = 0; ti < 4; ti++)
        for (int si = 0; si < 5; si++)
            for (int vi = 0; vi < 3; vi++) {
                NDT_RNG(r);
                nd_dtype t = ALL[ti];
                const int64_t batch = 5, bad = 3, m = SHAPES[si][0], n = SHAPES[si][1], k = m < n ? m : n;
                const int64_t bad2 = vi == 2 ? 0 : -1; /* -inf: the first matrix too */
                cd *a = malloc(sizeof(cd) * (size_t)(batch * m * n));
                double *sig = malloc(sizeof(double) * (size_t)(batch * k));
                known_batch(&r, batch, m, n, is_cx(t), a, sig);
                a[bad * m * n + (m * n) / 2] = bad_values[vi];
                if (bad2 >= 0) a[bad2 * m * n + m * n - 1] = is_cx(t) ? CMPLX(1, bad_values[vi]) : bad_values[vi];
                nd_array *x = upload(t, ND_SHAPE(batch, m, n), a, batch * m * n), *u = NULL, *s = NULL, *vh = NULL;
                cr_assert_eq(nd_linalg_svd(x, false, vi != 1, &u, &s, &vh), ND_OK, "%s", nd_last_error());
                nd_array *sd = nd_astype(s, ND_FLOAT64);
                double *gs = malloc(sizeof(double) * (size_t)(batch * k));
                nd_status st = nd_to_host(sd, gs, sizeof(double) * (size_t)(batch * k));
                cr_expect_eq(st, ND_OK, "%s %lld x %lld, %g in a batch: %s", nd_dtype_name(t), (long long)m,
                             (long long)n, bad_values[vi], nd_last_error());
                nd_clear_error();
                double tol = 64 * (double)(k + 1) * (is_single(t) ? FLT_EPSILON : DBL_EPSILON) * 2;
                for (int64_t b = 0; b < batch && st == ND_OK; b++)
                    for (int64_t i = 0; i < k; i++) {
                        if (b == bad || b == bad2)
                            cr_expect(isnan(gs[b * k + i]), "%s %lld x %lld, %g in matrix %lld: S[%lld] = %g, not NaN",
                                      nd_dtype_name(t), (long long)m, (long long)n, bad_values[vi], (long long)b,
                                      (long long)i, gs[b * k + i]);
                        else
                            cr_expect(fabs(gs[b * k + i] - sig[b * k + i]) <= tol,
                                      "%s: matrix %lld S[%lld] %g, expected %g", nd_dtype_name(t), (long long)b,
                                      (long long)i, gs[b * k + i], sig[b * k + i]);
                    }
                free(a), free(sig), free(gs);
                nd_free(x), nd_free(u), nd_free(s), nd_free(vh), nd_free(sd);
            }
}
