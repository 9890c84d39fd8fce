/* numpy.linalg with complex matrices and nd_linalg_eig / nd_linalg_eigvals
 * (include/nd/linalg_decomp.h), against independent references computed
 * here in double complex: reconstructions (L L^H = A, Q R = A with Q^H Q
 * = I, U diag(S) Vh = A, A x = b, A v = v w) with tolerances scaled by the
 * condition number, determinants by Gaussian elimination, norms by their
 * definitions; NumPy 2's dtype rule of eig (real results only when every
 * eigenvalue of a real batch is real), rotation and defective matrices,
 * batches, 0x0 and 1x1, results read into poisoned buffers, and the
 * errors (ND_ERR_LINALG at the read naming the function and the matrix). */
#include "common.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double complex cd;

static const nd_dtype CT[2] = {ND_COMPLEX64, ND_COMPLEX128};

/* ---- host helpers */

static nd_array *upc(nd_dtype t, int nd, const int64_t *shape, const cd *v) {
    nd_array *d = nd_from_host(v, ND_COMPLEX128, nd, shape);
    cr_assert(d, "upload: %s", nd_last_error());
    if (t == ND_COMPLEX128) return d;
    nd_array *c = nd_astype(d, t);
    nd_free(d);
    return c;
}

static int64_t count_of(nd_array *a) {
    int64_t c = 1;
    for (int i = 0; i < nd_ndim(a); i++) c *= nd_shape(a)[i];
    return c;
}

/* a's values as double complex (malloc'd), read into a poisoned buffer:
 * every element must be written. */
static cd *downc(nd_array *a) {
    cr_assert(a, "no array: %s", nd_last_error());
    nd_array *d = nd_astype(a, ND_COMPLEX128);
    cr_assert(d, "%s", nd_last_error());
    int64_t cnt = count_of(a);
    cd *v = malloc((size_t)(cnt + 1) * sizeof *v);
    memset(v, 0xAB, (size_t)(cnt + 1) * sizeof *v);
    nd_status s = nd_to_host(d, v, (size_t)cnt * sizeof *v);
    cr_assert_eq(s, ND_OK, "read: %s", nd_last_error());
    unsigned char past[sizeof(cd)];
    memset(past, 0xAB, sizeof past);
    cr_assert(!memcmp(&v[cnt], past, sizeof past), "nd_to_host wrote past the end");
    nd_free(d);
    return v;
}

static double *downr(nd_array *a) {
    cr_assert(a, "no array: %s", nd_last_error());
    nd_array *d = nd_astype(a, ND_FLOAT64);
    int64_t cnt = count_of(a);
    double *v = malloc((size_t)(cnt + 1) * sizeof *v);
    memset(v, 0xAB, (size_t)(cnt + 1) * sizeof *v);
    cr_assert_eq(nd_to_host(d, v, (size_t)cnt * sizeof *v), ND_OK, "read: %s", nd_last_error());
    nd_free(d);
    return v;
}

static void random_c(ndt_rng *r, int64_t n, cd *a) {
    for (int64_t i = 0; i < n; i++) a[i] = ndt_uniform(r, -1, 1) + I * ndt_uniform(r, -1, 1);
}

/* c = a (m x k) @ b (k x n). */
static void mmc(const cd *a, const cd *b, cd *c, int64_t m, int64_t k, int64_t n) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            cd s = 0;
            for (int64_t p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
            c[i * n + j] = s;
        }
}
/* h = a^H (a is m x n, h n x m). */
static void herm(const cd *a, cd *h, int64_t m, int64_t n) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) h[j * m + i] = conj(a[i * n + j]);
}
/* A Hermitian positive definite n x n: B B^H + n I. */
static void hpd(ndt_rng *r, int64_t n, cd *a) {
    cd *b = calloc((size_t)(n * n), sizeof *b), *bh = calloc((size_t)(n * n), sizeof *bh); /* calloc: GCC -O2 with ASan takes bh for unset */
    random_c(r, n * n, b);
    herm(b, bh, n, n);
    mmc(b, bh, a, n, n, n);
    for (int64_t i = 0; i < n; i++) a[i * n + i] = creal(a[i * n + i]) + (double)n;
    free(b), free(bh);
}

static double eps_of(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_FLOAT32 ? FLT_EPSILON : DBL_EPSILON; }
/* The tolerance of a backward-stable result of order n (times cond). */
static double tol_of(nd_dtype t, int64_t n, double cond) { return eps_of(t) * 40.0 * (double)(n + 4) * cond; }

/* max |got - want| <= tol * scale. */
static void expect_close_c(const cd *got, const cd *want, int64_t n, double tol, double scale, const char *what) {
    for (int64_t i = 0; i < n; i++) {
        double d = cabs(got[i] - want[i]);
        if (!(d <= tol * scale)) {
            cr_expect(0, "%s: element %lld is %.10g%+.10gi, expected %.10g%+.10gi (|diff| %.3g, tolerance %.3g)", what,
                      (long long)i, creal(got[i]), cimag(got[i]), creal(want[i]), cimag(want[i]), d, tol * scale);
            return;
        }
    }
}

static void expect_identity(const cd *q, int64_t m, int64_t n, double tol, const char *what) {
    /* q is m x n; q^H q == I (n x n) */
    cd *qh = calloc((size_t)(m * n + 1), sizeof *qh), *p = calloc((size_t)(n * n + 1), sizeof *p);
    cd *eye = calloc((size_t)(n * n + 1), sizeof *eye);
    for (int64_t i = 0; i < n; i++) eye[i * n + i] = 1;
    herm(q, qh, m, n);
    mmc(qh, q, p, n, m, n);
    expect_close_c(p, eye, n * n, tol, 1, what);
    free(qh), free(p), free(eye);
}

static double max_abs_c(const cd *a, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, cabs(a[i]));
    return m;
}

/* ---- solve, inv */

NDT_TEST(linalg_complex, solve_and_inv_reconstruct_batches) {
    NDT_RNG(r);
    const int64_t sizes[2] = {5, 24}, batch = 3, k = 2; /* the small-system path and LAPACK's */
    for (int si = 0; si < 2; si++) {
        int64_t n = sizes[si];
        cd *a = malloc(sizeof(cd) * batch * n * n), *b = malloc(sizeof(cd) * batch * n * k);
        cd *ax = malloc(sizeof(cd) * n * n), *eye = calloc((size_t)(n * n), sizeof(cd));
        random_c(&r, batch * n * n, a);
        for (int64_t i = 0; i < batch * n; i++) a[i * n + i % n] += 3; /* well conditioned */
        random_c(&r, batch * n * k, b);
        for (int64_t i = 0; i < n; i++) eye[i * n + i] = 1;
        for (int ti = 0; ti < 2; ti++) {
            nd_dtype t = CT[ti];
            nd_array *x = upc(t, ND_SHAPE(batch, n, n), a), *y = upc(t, ND_SHAPE(batch, n, k), b);
            nd_array *s = nd_linalg_solve(x, y), *inv = nd_linalg_inv(x);
            cr_assert(s && inv, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(s), t);
            cr_expect_eq(nd_dtype_of(inv), t);
            cd *xs = downc(s), *xi = downc(inv);
            for (int64_t bi = 0; bi < batch; bi++) {
                mmc(a + bi * n * n, xs + bi * n * k, ax, n, n, k);
                expect_close_c(ax, b + bi * n * k, n * k, tol_of(t, n, 10), max_abs_c(b, batch * n * k) + 1, "A x == b");
                mmc(a + bi * n * n, xi + bi * n * n, ax, n, n, n);
                expect_close_c(ax, eye, n * n, tol_of(t, n, 10), 1, "A inv(A) == I");
            }
            free(xs), free(xi);
            nd_free(x), nd_free(y), nd_free(s), nd_free(inv);
        }
        free(a), free(b), free(ax), free(eye);
    }
}

NDT_TEST(linalg_complex, solve_vector_promotes_real_b) {
    /* complex a, float64 b (n,): complex128 x (NumPy's common type) */
    cd a[4] = {1 + 1 * I, 2, 0, 1 - 1 * I};
    double b[2] = {3, 1};
    nd_array *x = upc(ND_COMPLEX64, ND_SHAPE(2, 2), a), *y = nd_from_host(b, ND_FLOAT64, ND_SHAPE(2));
    nd_array *s = nd_linalg_solve(x, y);
    cr_assert(s, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(s), ND_COMPLEX128);
    cr_expect_eq(nd_ndim(s), 1);
    cd *g = downc(s), ax[2];
    mmc(a, g, ax, 2, 2, 1);
    cd want[2] = {3, 1};
    expect_close_c(ax, want, 2, tol_of(ND_COMPLEX64, 2, 10), 3, "A x == b");
    free(g);
    nd_free(x), nd_free(y), nd_free(s);
}

/* ---- cholesky */

NDT_TEST(linalg_complex, cholesky_hermitian) {
    NDT_RNG(r);
    const int64_t n = 9, batch = 2;
    cd *a = malloc(sizeof(cd) * batch * n * n), lh[81], ll[81];
    for (int64_t b = 0; b < batch; b++) hpd(&r, n, a + b * n * n);
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti];
        nd_array *x = upc(t, ND_SHAPE(batch, n, n), a), *l = nd_linalg_cholesky(x);
        cr_assert(l, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(l), t);
        cd *g = downc(l);
        for (int64_t b = 0; b < batch; b++) {
            const cd *L = g + b * n * n;
            for (int64_t p = 0; p < n; p++) {
                cr_expect(cimag(L[p * n + p]) == 0 && creal(L[p * n + p]) > 0, "diagonal must be real positive");
                for (int64_t q = p + 1; q < n; q++) cr_expect(L[p * n + q] == 0, "upper triangle must be zero");
            }
            herm(L, lh, n, n);
            mmc(L, lh, ll, n, n, n);
            expect_close_c(ll, a + b * n * n, n * n, tol_of(t, n, 1), 2.0 * n, "L L^H == A");
        }
        free(g);
        nd_free(x), nd_free(l);
    }
    free(a);
}

/* As test_linalg's float case: only A's lower triangle is read (NaN above),
 * every element of L is written (the result likely reuses a freed block of
 * NaNs), zeros above the diagonal; L against a Cholesky made here in
 * complex128 (A = L L^H, L[i][j] = (A[i][j] - sum L[i][k] conj(L[j][k])) /
 * L[j][j]). Sizes: edge-cut and several 32 x 32 tiles, and a batch of
 * small matrices. */
NDT_TEST(linalg_complex, cholesky_reads_lower_writes_every_element) {
    NDT_RNG(r);
    static const int64_t cases[][2] = {{1, 2}, {33, 2}, {70, 1}, {300, 1}, {6, 30}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t n = cases[c][0], batch = cases[c][1], nn = n * n;
        cd *a = malloc(sizeof(cd) * (size_t)(batch * nn)), *want = calloc((size_t)(batch * nn), sizeof(cd));
        for (int64_t b = 0; b < batch; b++) {
            cd *ab = a + b * nn, *l = want + b * nn;
            hpd(&r, n, ab);
            for (int64_t j = 0; j < n; j++) {
                double d = creal(ab[j * n + j]);
                for (int64_t k = 0; k < j; k++) d -= creal(l[j * n + k] * conj(l[j * n + k]));
                l[j * n + j] = sqrt(d);
                for (int64_t i = j + 1; i < n; i++) {
                    cd s = ab[i * n + j];
                    for (int64_t k = 0; k < j; k++) s -= l[i * n + k] * conj(l[j * n + k]);
                    l[i * n + j] = s / l[j * n + j];
                }
            }
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) ab[i * n + j] = CMPLX(NAN, NAN);
        }
        for (int ti = 0; ti < 2; ti++) {
            nd_dtype t = CT[ti];
            nd_array *x = upc(t, ND_SHAPE(batch, n, n), a);
            nd_array *junk = nd_full(t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64, ND_SHAPE(2 * batch * nn), NAN);
            cr_assert(x && junk && nd_sync() == ND_OK, "%s", nd_last_error());
            nd_free(junk);
            nd_array *l = nd_linalg_cholesky(x);
            cr_assert(l, "%s", nd_last_error());
            cd *g = downc(l);
            int zero_above = 1, finite = 1;
            for (int64_t b = 0; b < batch; b++)
                for (int64_t p = 0; p < n; p++)
                    for (int64_t q = 0; q < n; q++) {
                        cd v = g[b * nn + p * n + q];
                        if (q > p && !(creal(v) == 0 && cimag(v) == 0)) zero_above = 0;
                        if (!isfinite(creal(v)) || !isfinite(cimag(v))) finite = 0;
                    }
            cr_expect(zero_above, "%s n=%lld batch=%lld: L's strict upper triangle must be 0", nd_dtype_name(t),
                      (long long)n, (long long)batch);
            cr_expect(finite, "%s n=%lld batch=%lld: an element is not finite (not written, or A's upper triangle "
                      "read)", nd_dtype_name(t), (long long)n, (long long)batch);
            expect_close_c(g, want, batch * nn, tol_of(t, n, 1), 2.0 * (double)n, "cholesky from the lower triangle");
            free(g);
            nd_free(x), nd_free(l);
        }
        free(a), free(want);
    }
}

/* ---- qr */

static void check_qr(nd_dtype t, int64_t m, int64_t n, nd_qr_mode mode, const cd *a) {
    nd_array *x = upc(t, ND_SHAPE(m, n), a), *q = NULL, *rr = NULL;
    cr_assert_eq(nd_linalg_qr(x, mode, &q, &rr), ND_OK, "%s", nd_last_error());
    int64_t k = m < n ? m : n, qc = mode == ND_QR_COMPLETE ? m : k;
    cr_expect(nd_shape(q)[0] == m && nd_shape(q)[1] == qc && nd_shape(rr)[0] == qc && nd_shape(rr)[1] == n);
    cr_expect_eq(nd_dtype_of(q), t);
    cd *gq = downc(q), *gr = downc(rr), *qr = malloc(sizeof(cd) * (size_t)(m * n + 1));
    for (int64_t i = 0; i < qc; i++)
        for (int64_t j = 0; j < i && j < n; j++) cr_expect(gr[i * n + j] == 0, "R must be upper triangular");
    expect_identity(gq, m, qc, tol_of(t, m, 1), "Q^H Q == I");
    mmc(gq, gr, qr, m, qc, n);
    expect_close_c(qr, a, m * n, tol_of(t, m, 1), 1, "Q R == A");
    free(gq), free(gr), free(qr);
    nd_free(x), nd_free(q), nd_free(rr);
}

NDT_TEST(linalg_complex, qr_reduced_and_complete) {
    NDT_RNG(r);
    int64_t shapes[3][2] = {{7, 4}, {4, 7}, {5, 5}};
    for (int si = 0; si < 3; si++) {
        int64_t m = shapes[si][0], n = shapes[si][1];
        cd *a = malloc(sizeof(cd) * (size_t)(m * n));
        random_c(&r, m * n, a);
        for (int ti = 0; ti < 2; ti++) {
            check_qr(CT[ti], m, n, ND_QR_REDUCED, a);
            check_qr(CT[ti], m, n, ND_QR_COMPLETE, a);
        }
        free(a);
    }
}

/* ---- svd */

static void check_svd(nd_dtype t, int64_t m, int64_t n, int full, const cd *a) {
    nd_array *x = upc(t, ND_SHAPE(m, n), a), *u, *s, *vh;
    cr_assert_eq(nd_linalg_svd(x, full, true, &u, &s, &vh), ND_OK, "%s", nd_last_error());
    int64_t k = m < n ? m : n, cu = full ? m : k, cv = full ? n : k;
    nd_dtype rt = t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    cr_expect_eq(nd_dtype_of(s), rt, "singular values are real");
    cr_expect_eq(nd_dtype_of(u), t);
    cr_expect(nd_shape(u)[1] == cu && nd_shape(vh)[0] == cv);
    cd *gu = downc(u), *gv = downc(vh), *us = calloc((size_t)(m * n + 1), sizeof(cd));
    cd *vhh = calloc((size_t)(n * n + 1), sizeof(cd));
    double *gs = downr(s);
    for (int64_t i = 0; i + 1 < k; i++) cr_expect(gs[i] >= gs[i + 1], "S must descend");
    expect_identity(gu, m, cu, tol_of(t, m, 1), "U^H U == I");
    herm(gv, vhh, cv, n);
    expect_identity(vhh, n, cv, tol_of(t, n, 1), "V^H V == I");
    /* U[:, :k] diag(S) Vh[:k, :] == A */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            cd acc = 0;
            for (int64_t p = 0; p < k; p++) acc += gu[i * cu + p] * gs[p] * gv[p * n + j];
            us[i * n + j] = acc;
        }
    expect_close_c(us, a, m * n, tol_of(t, m > n ? m : n, 1), gs[0] + 1, "U S Vh == A");
    /* svdvals agrees */
    nd_array *sv = nd_linalg_svdvals(x);
    cr_expect_eq(nd_dtype_of(sv), rt);
    double *g2 = downr(sv);
    for (int64_t i = 0; i < k; i++) cr_expect(fabs(g2[i] - gs[i]) <= tol_of(t, k, 1) * (gs[0] + 1), "svdvals");
    free(gu), free(gv), free(us), free(vhh), free(gs), free(g2);
    nd_free(x), nd_free(u), nd_free(s), nd_free(vh), nd_free(sv);
}

/* Matrices past 1024 in double precision take cuSOLVER's gesvd on CUDA
 * (lib_linalg.c's svd rule), whose V^H is transposed in the step: square
 * reduced (complex128 and float64) and wide full (float64), checked on
 * sampled entries (a whole check is O(n^3) here): U diag(S) Vh == A,
 * columns of U and rows of Vh orthonormal, S descending and against
 * svdvals (gesvd without vectors). */
static void check_big_svd(ndt_rng *r, nd_dtype t, int64_t m, int64_t n, int full) {
    cd *a = malloc(sizeof(cd) * (size_t)(m * n));
    random_c(r, m * n, a);
    if (t == ND_FLOAT64)
        for (int64_t i = 0; i < m * n; i++) a[i] = creal(a[i]);
    nd_array *x = upc(t, ND_SHAPE(m, n), a), *u, *s, *vh;
    cr_assert_eq(nd_linalg_svd(x, full, true, &u, &s, &vh), ND_OK, "%s", nd_last_error());
    int64_t k = m < n ? m : n, cu = full ? m : k, cv = full ? n : k;
    cr_assert(nd_shape(u)[0] == m && nd_shape(u)[1] == cu && nd_shape(vh)[0] == cv && nd_shape(vh)[1] == n);
    cd *gu = downc(u), *gv = downc(vh);
    double *gs = downr(s), tol = tol_of(t, m > n ? m : n, 1);
    for (int64_t i = 0; i + 1 < k; i++) cr_expect(gs[i] >= gs[i + 1] && gs[i + 1] >= 0, "S must descend");
    uint64_t st = 7;
    double worst = 0, worst_o = 0;
    for (int q = 0; q < 48; q++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int64_t i = (int64_t)((st >> 33) % (uint64_t)m), j = (int64_t)((st >> 13) % (uint64_t)n);
        cd acc = 0;
        for (int64_t p = 0; p < k; p++) acc += gu[i * cu + p] * gs[p] * gv[p * n + j];
        worst = fmax(worst, cabs(acc - a[i * n + j]) / gs[0]);
        int64_t c1 = (int64_t)((st >> 40) % (uint64_t)cu), c2 = q % 2 ? c1 : (int64_t)((st >> 20) % (uint64_t)cu);
        cd d = 0; /* U[:, c1]^H U[:, c2] */
        for (int64_t p = 0; p < m; p++) d += conj(gu[p * cu + c1]) * gu[p * cu + c2];
        worst_o = fmax(worst_o, cabs(d - (c1 == c2)));
        int64_t r1 = c1 % cv, r2 = c2 % cv;
        d = 0; /* Vh[r1, :] Vh[r2, :]^H */
        for (int64_t p = 0; p < n; p++) d += gv[r1 * n + p] * conj(gv[r2 * n + p]);
        worst_o = fmax(worst_o, cabs(d - (r1 == r2)));
    }
    cr_expect(worst <= tol, "%s %lld x %lld full=%d: |U S Vh - A| / S[0] up to %.3g (tolerance %.3g)",
              nd_dtype_name(t), (long long)m, (long long)n, full, worst, tol);
    cr_expect(worst_o <= tol, "%s %lld x %lld full=%d: orthonormality off by %.3g (tolerance %.3g)",
              nd_dtype_name(t), (long long)m, (long long)n, full, worst_o, tol);
    nd_array *sv = nd_linalg_svdvals(x);
    double *g2 = downr(sv), worst_s = 0;
    for (int64_t i = 0; i < k; i++) worst_s = fmax(worst_s, fabs(g2[i] - gs[i]) / gs[0]);
    cr_expect(worst_s <= tol, "%s: svdvals differ from S by %.3g", nd_dtype_name(t), worst_s);
    free(a), free(gu), free(gv), free(gs), free(g2);
    nd_free(x), nd_free(u), nd_free(s), nd_free(vh), nd_free(sv);
}

NDT_TEST(linalg_complex, svd_past_1024_double) {
    NDT_RNG(r);
    check_big_svd(&r, ND_FLOAT64, 1030, 1030, 0);
    check_big_svd(&r, ND_FLOAT64, 1027, 1041, 1);
    check_big_svd(&r, ND_COMPLEX128, 1026, 1026, 0);
}

NDT_TEST(linalg_complex, svd_full_and_reduced) {
    NDT_RNG(r);
    int64_t shapes[3][2] = {{6, 3}, {3, 6}, {5, 5}};
    for (int si = 0; si < 3; si++) {
        int64_t m = shapes[si][0], n = shapes[si][1];
        cd *a = malloc(sizeof(cd) * (size_t)(m * n));
        random_c(&r, m * n, a);
        for (int ti = 0; ti < 2; ti++) {
            check_svd(CT[ti], m, n, 1, a);
            check_svd(CT[ti], m, n, 0, a);
        }
        free(a);
    }
}

/* ---- eigh */

NDT_TEST(linalg_complex, eigh_hermitian_batches) {
    NDT_RNG(r);
    const int64_t n = 8, batch = 3;
    cd *a = malloc(sizeof(cd) * batch * n * n), av[64], vw[64];
    for (int64_t b = 0; b < batch; b++) {
        cd *m = a + b * n * n, h[64];
        random_c(&r, n * n, m);
        herm(m, h, n, n);
        for (int64_t i = 0; i < n * n; i++) m[i] = 0.5 * (m[i] + h[i]);
    }
    /* eigh reads only the lower triangle: garbage above must not matter */
    cd *lower = malloc(sizeof(cd) * batch * n * n);
    memcpy(lower, a, sizeof(cd) * batch * n * n);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) lower[b * n * n + i * n + j] = 99 - 7 * I;
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti];
        nd_array *x = upc(t, ND_SHAPE(batch, n, n), lower), *w, *v;
        cr_assert_eq(nd_linalg_eigh(x, &w, &v), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(w), t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64);
        double *gw = downr(w);
        cd *gv = downc(v);
        for (int64_t b = 0; b < batch; b++) {
            const double *W = gw + b * n;
            const cd *V = gv + b * n * n;
            for (int64_t i = 0; i + 1 < n; i++) cr_expect(W[i] <= W[i + 1], "ascending");
            mmc(a + b * n * n, V, av, n, n, n);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) vw[i * n + j] = V[i * n + j] * W[j];
            expect_close_c(av, vw, n * n, tol_of(t, n, 1), 2.0 * n, "A v == v w");
            expect_identity(V, n, n, tol_of(t, n, 1), "V^H V == I");
        }
        nd_array *w2 = nd_linalg_eigvalsh(x);
        double *g2 = downr(w2);
        for (int64_t i = 0; i < batch * n; i++) cr_expect(fabs(g2[i] - gw[i]) <= tol_of(t, n, 1) * 2 * n, "eigvalsh");
        free(gw), free(gv), free(g2);
        nd_free(x), nd_free(w), nd_free(v), nd_free(w2);
    }
    free(a), free(lower);
}

/* ---- det, slogdet */

/* det by Gaussian elimination with partial pivoting, in double complex. */
static cd ref_det(const cd *a_in, int64_t n) {
    cd *a = malloc(sizeof(cd) * (size_t)(n * n + 1));
    memcpy(a, a_in, sizeof(cd) * (size_t)(n * n));
    cd det = 1;
    for (int64_t c = 0; c < n; c++) {
        int64_t p = c;
        for (int64_t i = c + 1; i < n; i++)
            if (cabs(a[i * n + c]) > cabs(a[p * n + c])) p = i;
        if (a[p * n + c] == 0) {
            free(a);
            return 0;
        }
        if (p != c) {
            for (int64_t j = 0; j < n; j++) {
                cd tmp = a[c * n + j];
                a[c * n + j] = a[p * n + j], a[p * n + j] = tmp;
            }
            det = -det;
        }
        det *= a[c * n + c];
        for (int64_t i = c + 1; i < n; i++) {
            cd f = a[i * n + c] / a[c * n + c];
            for (int64_t j = c; j < n; j++) a[i * n + j] -= f * a[c * n + j];
        }
    }
    free(a);
    return det;
}

NDT_TEST(linalg_complex, det_and_slogdet) {
    NDT_RNG(r);
    const int64_t n = 6, batch = 4;
    cd *a = malloc(sizeof(cd) * batch * n * n);
    random_c(&r, batch * n * n, a);
    for (int64_t j = 0; j < n; j++) a[2 * n * n + 3 * n + j] = 2.0 * a[2 * n * n + 1 * n + j]; /* matrix 2 singular */
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti];
        nd_array *x = upc(t, ND_SHAPE(batch, n, n), a), *d = nd_linalg_det(x), *sg, *ld;
        cr_assert(d, "%s", nd_last_error());
        cr_assert_eq(nd_linalg_slogdet(x, &sg, &ld), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(d), t);
        cr_expect_eq(nd_dtype_of(sg), t, "slogdet's sign is complex");
        cr_expect_eq(nd_dtype_of(ld), t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64, "logabsdet is real");
        cd *gd = downc(d), *gs = downc(sg);
        double *gl = downr(ld);
        for (int64_t b = 0; b < batch; b++) {
            cd want = ref_det(a + b * n * n, n);
            if (b == 2) { /* exactly singular in float64; float32 rounds */
                cr_expect(cabs(gd[b]) <= tol_of(t, n, 100), "det of a singular matrix %g", cabs(gd[b]));
                if (t == ND_COMPLEX128) cr_expect(gs[b] == 0 || cabs(gd[b]) < 1e-12, "sign 0 when singular");
                continue;
            }
            cr_expect(cabs(gd[b] - want) <= tol_of(t, n, 10) * cabs(want), "det %lld: %g%+gi vs %g%+gi", (long long)b,
                      creal(gd[b]), cimag(gd[b]), creal(want), cimag(want));
            cr_expect(fabs(cabs(gs[b]) - 1) <= tol_of(t, n, 1), "|sign| == 1");
            cr_expect(cabs(gs[b] - want / cabs(want)) <= tol_of(t, n, 10), "sign");
            cr_expect(fabs(gl[b] - log(cabs(want))) <= tol_of(t, n, 10), "logabsdet");
        }
        free(gd), free(gs), free(gl);
        nd_free(x), nd_free(d), nd_free(sg), nd_free(ld);
    }
    /* an exactly singular complex matrix: sign 0, logabsdet -inf (NumPy) */
    cd z[4] = {1 + I, 2 + 2 * I, 1, 2};
    nd_array *x = upc(ND_COMPLEX128, ND_SHAPE(2, 2), z), *sg, *ld;
    cr_assert_eq(nd_linalg_slogdet(x, &sg, &ld), ND_OK, "%s", nd_last_error());
    cd *gs = downc(sg);
    double *gl = downr(ld);
    cr_expect(gs[0] == 0 && isinf(gl[0]) && gl[0] < 0, "singular: sign %g%+gi logabsdet %g", creal(gs[0]),
              cimag(gs[0]), gl[0]);
    free(gs), free(gl);
    nd_free(x), nd_free(sg), nd_free(ld);
    free(a);
}

/* ---- eig */

/* A v == v w for a complex result, column by column, relative to |A|. */
static void check_eig(const cd *a, const cd *w, const cd *v, int64_t n, double tol, const char *what) {
    cd *av = malloc(sizeof(cd) * (size_t)(n * n + 1)), *vw = calloc((size_t)(n * n + 1), sizeof(cd));
    mmc(a, v, av, n, n, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) vw[i * n + j] = v[i * n + j] * w[j];
    expect_close_c(av, vw, n * n, tol, max_abs_c(a, n * n) * (double)n + 1, what);
    for (int64_t j = 0; j < n; j++) { /* unit columns */
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += creal(v[i * n + j] * conj(v[i * n + j]));
        cr_expect(fabs(sqrt(s) - 1) <= tol, "%s: column %lld has norm %.17g", what, (long long)j, sqrt(s));
    }
    free(av), free(vw);
}

NDT_TEST(linalg_complex, eig_complex_input_batches) {
    NDT_RNG(r);
    const int64_t n = 7, batch = 3;
    cd *a = malloc(sizeof(cd) * batch * n * n);
    random_c(&r, batch * n * n, a);
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti];
        nd_array *x = upc(t, ND_SHAPE(batch, n, n), a), *w, *v;
        cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(w), t);
        cr_expect_eq(nd_dtype_of(v), t);
        cr_expect(nd_ndim(w) == 2 && nd_shape(w)[1] == n && nd_ndim(v) == 3);
        cd *gw = downc(w), *gv = downc(v);
        for (int64_t b = 0; b < batch; b++)
            check_eig(a + b * n * n, gw + b * n, gv + b * n * n, n, tol_of(t, n, 100), "complex eig");
        /* eigvals: the same values */
        nd_array *w2 = nd_linalg_eigvals(x);
        cd *g2 = downc(w2);
        expect_close_c(g2, gw, batch * n, tol_of(t, n, 100), 3, "eigvals == eig's w");
        free(gw), free(gv), free(g2);
        nd_free(x), nd_free(w), nd_free(v), nd_free(w2);
    }
    free(a);
}

static nd_array *upr(nd_dtype t, int nd, const int64_t *shape, const double *v) {
    nd_array *d = nd_from_host(v, ND_FLOAT64, nd, shape);
    cr_assert(d, "%s", nd_last_error());
    if (t == ND_FLOAT64) return d;
    nd_array *c = nd_astype(d, t);
    nd_free(d);
    return c;
}

NDT_TEST(linalg_complex, eig_real_input_follows_numpy2_dtype_rule) {
    const nd_dtype RT[2] = {ND_FLOAT32, ND_FLOAT64};
    /* a rotation (eigenvalues +-i) and a symmetric matrix (real ones) */
    double rot[4] = {0, -1, 1, 0}, sym[4] = {2, 1, 1, 2}, both[8] = {2, 1, 1, 2, 0, -1, 1, 0};
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = RT[ti], ct = t == ND_FLOAT32 ? ND_COMPLEX64 : ND_COMPLEX128;
        /* rotation: complex results */
        nd_array *x = upr(t, ND_SHAPE(2, 2), rot), *w, *v;
        cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(w), ct, "complex eigenvalues make complex results");
        cr_expect_eq(nd_dtype_of(v), ct);
        cd *gw = downc(w), *gv = downc(v), ar[4] = {0, -1, 1, 0};
        cr_expect(cabs(gw[0] - I) < 1e-6 && cabs(gw[1] + I) < 1e-6, "w = +i, -i (pair order): %g%+gi %g%+gi",
                  creal(gw[0]), cimag(gw[0]), creal(gw[1]), cimag(gw[1]));
        check_eig(ar, gw, gv, 2, tol_of(t, 2, 10), "rotation");
        free(gw), free(gv);
        nd_free(x), nd_free(w), nd_free(v);
        /* symmetric: real results, the input's dtype */
        x = upr(t, ND_SHAPE(2, 2), sym);
        cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(w), t, "all-real eigenvalues give real results");
        cr_expect_eq(nd_dtype_of(v), t);
        gw = downc(w), gv = downc(v);
        cd as[4] = {2, 1, 1, 2};
        check_eig(as, gw, gv, 2, tol_of(t, 2, 10), "symmetric");
        free(gw), free(gv);
        nd_free(x), nd_free(w), nd_free(v);
        /* a batch with one of each: complex for the whole batch */
        x = upr(t, ND_SHAPE(2, 2, 2), both);
        nd_array *ev = nd_linalg_eigvals(x);
        cr_assert(ev, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(ev), ct);
        gw = downc(ev);
        cr_expect(fabs(cimag(gw[0])) < 1e-6 && fabs(cimag(gw[1])) < 1e-6 && fabs(cimag(gw[2]) - 1) < 1e-6,
                  "batch eigenvalues");
        free(gw);
        nd_free(x), nd_free(ev);
    }
}

NDT_TEST(linalg_complex, eig_real_random_pairs_and_defective) {
    NDT_RNG(r);
    const int64_t n = 9, batch = 4;
    double *a = malloc(sizeof(double) * batch * n * n);
    cd *ac = malloc(sizeof(cd) * batch * n * n);
    for (int64_t i = 0; i < batch * n * n; i++) ac[i] = a[i] = ndt_uniform(&r, -1, 1);
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = ti ? ND_FLOAT64 : ND_FLOAT32;
        nd_array *x = upr(t, ND_SHAPE(batch, n, n), a), *w, *v;
        cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
        cr_expect(nd_dtype_of(w) == ND_COMPLEX64 || nd_dtype_of(w) == ND_COMPLEX128,
                  "random real 9x9 matrices have complex pairs");
        cd *gw = downc(w), *gv = downc(v);
        for (int64_t b = 0; b < batch; b++) {
            check_eig(ac + b * n * n, gw + b * n, gv + b * n * n, n, tol_of(t, n, 1000), "real random eig");
            for (int64_t i = 0; i < n; i++) /* pairs are adjacent, conjugate, positive imaginary part first */
                if (cimag(gw[b * n + i]) > 0)
                    cr_expect(i + 1 < n && gw[b * n + i + 1] == conj(gw[b * n + i]), "conjugate pair");
        }
        free(gw), free(gv);
        nd_free(x), nd_free(w), nd_free(v);
    }
    /* a defective matrix (one Jordan block): eigenvalue 1 twice, real */
    double jd[4] = {1, 1, 0, 1};
    nd_array *x = upr(ND_FLOAT64, ND_SHAPE(2, 2), jd), *w, *v;
    cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(w), ND_FLOAT64);
    double *gw = downr(w), *gv = downr(v);
    cr_expect(gw[0] == 1 && gw[1] == 1, "w %g %g", gw[0], gw[1]);
    cr_expect(fabs(fabs(gv[0]) - 1) < 1e-12 && gv[2] == 0, "first eigenvector e1");
    /* the second is parallel to e1 up to rounding (NumPy gives [-1, 2.2e-16]) */
    cr_expect(fabs(fabs(gv[1]) - 1) < 1e-12 && fabs(gv[3]) < 1e-12, "second eigenvector ~ e1");
    free(gw), free(gv);
    nd_free(x), nd_free(w), nd_free(v);
    free(a), free(ac);
}

NDT_TEST(linalg_complex, eig_empty_and_one_by_one) {
    /* 0x0: empty results; 1x1: the element itself, eigenvector 1 */
    nd_array *e = nd_zeros(ND_FLOAT64, ND_SHAPE(3, 0, 0)), *w, *v;
    cr_assert_eq(nd_linalg_eig(e, &w, &v), ND_OK, "%s", nd_last_error());
    cr_expect(nd_ndim(w) == 2 && nd_shape(w)[0] == 3 && nd_shape(w)[1] == 0 && nd_ndim(v) == 3);
    cr_expect_eq(nd_dtype_of(w), ND_FLOAT64, "no eigenvalues: all real (NumPy's all([]))");
    nd_free(e), nd_free(w), nd_free(v);
    cd one[2] = {3 - 2 * I, -1};
    nd_array *x = upc(ND_COMPLEX128, ND_SHAPE(2, 1, 1), one);
    cr_assert_eq(nd_linalg_eig(x, &w, &v), ND_OK, "%s", nd_last_error());
    cd *gw = downc(w), *gv = downc(v);
    cr_expect(gw[0] == one[0] && gw[1] == one[1] && gv[0] == 1 && gv[1] == 1, "1x1 eig");
    free(gw), free(gv);
    nd_free(x), nd_free(w), nd_free(v);
    float r1 = -4;
    x = nd_from_host(&r1, ND_FLOAT32, ND_SHAPE(1, 1));
    nd_array *ev = nd_linalg_eigvals(x);
    cr_assert(ev, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(ev), ND_FLOAT32);
    double *g = downr(ev);
    cr_expect(g[0] == -4);
    free(g);
    nd_free(x), nd_free(ev);
}

NDT_TEST(linalg_complex, eig_errors) {
    /* record time */
    nd_array *rect = nd_zeros(ND_COMPLEX64, ND_SHAPE(2, 3)), *w = (nd_array *)1, *v = (nd_array *)1;
    cr_expect_neq(nd_linalg_eig(rect, &w, &v), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_linalg_eig");
    cr_expect(w == NULL && v == NULL, "outputs are cleared on failure");
    nd_array *h = nd_zeros(ND_FLOAT16, ND_SHAPE(2, 2));
    cr_expect_null(nd_linalg_eigvals(h));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_linalg_eigvals");
    cr_expect_neq(nd_linalg_eig(h, NULL, &v), ND_OK);
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_linalg_eig");
    nd_free(rect), nd_free(h);
    if (ndt_backend_is_cuda()) return; /* cuSOLVER gives NaN rather than refusing them */
    /* NaN in a real batch: eig synchronises, so the call reports it */
    double a[8] = {1, 0, 0, 1, 1, NAN, 0, 1};
    nd_array *x = upr(ND_FLOAT64, ND_SHAPE(2, 2, 2), a);
    cr_expect_eq(nd_linalg_eig(x, &w, &v), ND_ERR_LINALG);
    const char *m = nd_last_error();
    cr_expect(strstr(m, "nd_linalg_eig") && strstr(m, "NaN") && strstr(m, "matrix 1 of the batch of 2"), "%s", m);
    cr_expect(w == NULL && v == NULL);
    nd_clear_error();
    /* complex: lazy, the read reports it, the rest of the flush is intact */
    nd_array *xc = nd_astype(x, ND_COMPLEX128), *three = nd_scalar(3.0), *ok = nd_mul(x, three);
    nd_array *ev = nd_linalg_eigvals(xc);
    cr_assert(ev, "recording must succeed: %s", nd_last_error());
    cd out[4];
    cr_expect_neq(nd_to_host(ev, out, sizeof out), ND_OK);
    cr_expect(nd_last_status() == ND_ERR_LINALG && strstr(nd_last_error(), "nd_linalg_eigvals"), "%s",
              nd_last_error());
    nd_clear_error();
    double o[8];
    cr_expect_eq(nd_to_host(ok, o, sizeof o), ND_OK, "%s", nd_last_error());
    cr_expect(o[0] == 3);
    nd_free(x), nd_free(xc), nd_free(three), nd_free(ok), nd_free(ev);
}

/* ---- errors of the complex routines */

NDT_TEST(linalg_complex, singular_and_not_hpd_name_the_matrix) {
    /* matrix 1 singular and not positive definite in any rounding: every
     * product its LU and Cholesky form is exact, so the zero pivot is an
     * exact 0 on every backend (a matrix singular only in exact arithmetic,
     * such as [[1, 2-i], [2+i, 5]], factors with a tiny pivot on cuBLAS) */
    cd a[12] = {2, I, -I, 2, 1, I, -I, 1, 3, 0, 0, 3};
    cd b[6] = {1, 1, 1, 1, 1, 1};
    for (int ti = 0; ti < 2; ti++) {
        nd_array *x = upc(CT[ti], ND_SHAPE(3, 2, 2), a), *y = upc(CT[ti], ND_SHAPE(3, 2, 1), b);
        nd_array *s = nd_linalg_solve(x, y), *c = nd_linalg_cholesky(x);
        cr_assert(s && c, "%s", nd_last_error());
        cd out[12];
        cr_expect_neq(nd_to_host(s, out, 6 * nd_dtype_size(CT[ti])), ND_OK);
        const char *m = nd_last_error();
        cr_expect(nd_last_status() == ND_ERR_LINALG && strstr(m, "nd_linalg_solve") &&
                  strstr(m, "matrix 1 of the batch of 3"), "%s", m);
        nd_clear_error();
        cr_expect_neq(nd_to_host(c, out, 12 * nd_dtype_size(CT[ti])), ND_OK);
        m = nd_last_error();
        cr_expect(nd_last_status() == ND_ERR_LINALG && strstr(m, "nd_linalg_cholesky") && strstr(m, "matrix 1"),
                  "%s", m);
        nd_clear_error();
        nd_free(x), nd_free(y), nd_free(s), nd_free(c);
    }
}

/* ---- composed: norm, cond, matrix_rank */

NDT_TEST(linalg_complex, norms_cond_and_rank) {
    NDT_RNG(r);
    const int64_t m = 4, n = 3;
    cd a[12], vec[5];
    random_c(&r, m * n, a);
    random_c(&r, 5, vec);
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti], rt = ti ? ND_FLOAT64 : ND_FLOAT32;
        double tol = tol_of(t, 5, 10);
        nd_array *x = upc(t, ND_SHAPE(m, n), a), *y = upc(t, ND_SHAPE(5), vec);
        /* matrices: fro, 1, inf, nuc, 2 */
        double fro = 0, c1 = 0, rinf = 0;
        for (int64_t i = 0; i < m * n; i++) fro += creal(a[i] * conj(a[i]));
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t i = 0; i < m; i++) s += cabs(a[i * n + j]);
            c1 = fmax(c1, s);
        }
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++) s += cabs(a[i * n + j]);
            rinf = fmax(rinf, s);
        }
        struct { nd_norm_kind k; double ord, want; } cases[] = {
            {ND_NORM_FRO, 0, sqrt(fro)}, {ND_NORM_DEFAULT, 0, sqrt(fro)}, {ND_NORM_ORD, 1, c1},
            {ND_NORM_ORD, INFINITY, rinf}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            nd_array *nv = nd_linalg_norm(x, cases[c].k, cases[c].ord);
            cr_assert(nv, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(nv), rt, "norms of complex arrays are real");
            double g = nd_item(nv);
            cr_expect(fabs(g - cases[c].want) <= tol * cases[c].want, "matrix norm case %zu: %.10g vs %.10g", c, g,
                      cases[c].want);
            nd_free(nv);
        }
        /* 2-norm and nuc from the singular values; cond = s0 / s_last; rank 3 */
        nd_array *s = nd_linalg_svdvals(x);
        double *gs = downr(s);
        nd_array *n2 = nd_linalg_norm(x, ND_NORM_ORD, 2), *nn = nd_linalg_norm(x, ND_NORM_NUC, 0);
        nd_array *cd_ = nd_linalg_cond(x), *rk = nd_linalg_matrix_rank(x, -1);
        cr_assert(n2 && nn && rk, "%s", nd_last_error());
        cr_expect(fabs(nd_item(n2) - gs[0]) <= tol * gs[0]);
        cr_expect(fabs(nd_item(nn) - (gs[0] + gs[1] + gs[2])) <= tol * gs[0] * 3);
        cr_assert(cd_, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(cd_), rt);
        cr_expect(fabs(nd_item(cd_) - gs[0] / gs[2]) <= tol * gs[0] / gs[2], "cond");
        cr_expect_eq(nd_item(rk), 3.0);
        /* vectors: ord 1, 2, inf, 0, 3 */
        double v1 = 0, v2 = 0, vi = 0, v3 = 0;
        for (int i = 0; i < 5; i++) {
            double z = cabs(vec[i]);
            v1 += z, v2 += z * z, vi = fmax(vi, z), v3 += z * z * z;
        }
        double ords[5] = {1, 2, INFINITY, 0, 3}, want[5] = {v1, sqrt(v2), vi, 5, cbrt(v3)};
        for (int c = 0; c < 5; c++) {
            nd_array *nv = nd_linalg_norm(y, ND_NORM_ORD, ords[c]);
            cr_assert(nv, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(nv), rt);
            double g = nd_item(nv);
            cr_expect(fabs(g - want[c]) <= tol * want[c], "vector ord %g: %.10g vs %.10g", ords[c], g, want[c]);
            nd_free(nv);
        }
        free(gs);
        nd_free(x), nd_free(y), nd_free(s), nd_free(n2), nd_free(nn), nd_free(cd_), nd_free(rk);
    }
}

/* ---- composed through complex matmul: pinv, lstsq, matrix_power,
 * multi_dot. These need nd_matmul of complex arrays; a build without it
 * skips them visibly. */

static int complex_matmul_available(void) {
    nd_array *a = nd_zeros(ND_COMPLEX128, ND_SHAPE(2, 2)), *p = nd_matmul(a, a);
    int ok = p != NULL;
    nd_free(a), nd_free(p);
    nd_clear_error();
    return ok;
}

NDT_TEST(linalg_complex, pinv_lstsq_matrix_power_multi_dot) {
    if (!complex_matmul_available()) cr_skip_test("nd_matmul does not take complex arrays in this build");
    NDT_RNG(r);
    const int64_t m = 6, n = 3;
    cd a[18], b[6], ah[18], aha[9], ahb[3], sq[9];
    random_c(&r, m * n, a);
    random_c(&r, m, b);
    random_c(&r, 9, sq);
    herm(a, ah, m, n);
    mmc(ah, a, aha, n, m, n);
    mmc(ah, b, ahb, n, m, 1);
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti];
        double tol = tol_of(t, m, 100);
        nd_array *x = upc(t, ND_SHAPE(m, n), a), *y = upc(t, ND_SHAPE(m), b);
        /* lstsq: the normal equations hold, A^H A x == A^H b */
        nd_array *sol, *res, *rk;
        cr_assert_eq(nd_linalg_lstsq(x, y, -1, &sol, &res, &rk, NULL), ND_OK, "%s", nd_last_error());
        cd *gx = downc(sol), lhs[3];
        mmc(aha, gx, lhs, n, n, 1);
        expect_close_c(lhs, ahb, n, tol, 10, "A^H A x == A^H b");
        cr_expect_eq(nd_dtype_of(res), t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64, "residuals are real");
        cr_expect_eq(nd_item(rk), 3.0);
        /* pinv: A^+ A == I (full column rank) */
        nd_array *pi = nd_linalg_pinv(x, -1);
        cd *gp = downc(pi), pa[9], eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        mmc(gp, a, pa, n, m, n);
        expect_close_c(pa, eye, 9, tol, 1, "pinv(A) A == I");
        /* matrix_power 3 */
        nd_array *s = upc(t, ND_SHAPE(3, 3), sq), *p3 = nd_linalg_matrix_power(s, 3);
        cd s2[9], s3[9];
        mmc(sq, sq, s2, 3, 3, 3);
        mmc(s2, sq, s3, 3, 3, 3);
        cd *g3 = downc(p3);
        expect_close_c(g3, s3, 9, tol, max_abs_c(s3, 9), "A^3");
        /* multi_dot(A^H, A, x) == A^H A x */
        nd_array *xt = nd_swapaxes(x, -1, -2), *xh = nd_conj(xt), *arr[3] = {xh, x, sol};
        nd_array *md = nd_linalg_multi_dot(3, arr);
        cd *gm = downc(md);
        expect_close_c(gm, lhs, n, tol, 10, "multi_dot");
        free(gx), free(gp), free(g3), free(gm);
        nd_free(x), nd_free(y), nd_free(sol), nd_free(res), nd_free(rk), nd_free(pi), nd_free(s), nd_free(p3);
        nd_free(xt), nd_free(xh), nd_free(md);
    }
}

/* ---- 0x0 and 1x1 through every routine */

NDT_TEST(linalg_complex, empty_and_one_by_one_matrices) {
    for (int ti = 0; ti < 2; ti++) {
        nd_dtype t = CT[ti], rt = ti ? ND_FLOAT64 : ND_FLOAT32;
        /* a batch of two 0x0 matrices: empty results of the right shapes and dtypes */
        nd_array *e = nd_zeros(t, ND_SHAPE(2, 0, 0)), *w, *v, *q, *r, *u, *s, *vh, *sg, *ld;
        nd_array *l = nd_linalg_cholesky(e), *iv = nd_linalg_inv(e), *d = nd_linalg_det(e);
        cr_assert(l && iv && d, "%s", nd_last_error());
        cr_assert_eq(nd_linalg_eigh(e, &w, &v), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_linalg_qr(e, ND_QR_COMPLETE, &q, &r), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_linalg_svd(e, true, true, &u, &s, &vh), ND_OK, "%s", nd_last_error());
        cr_assert_eq(nd_linalg_slogdet(e, &sg, &ld), ND_OK, "%s", nd_last_error());
        cr_expect(count_of(l) == 0 && count_of(iv) == 0 && count_of(w) == 0 && count_of(s) == 0);
        cr_expect_eq(nd_dtype_of(w), rt);
        cr_expect_eq(nd_dtype_of(s), rt);
        cd *gd = downc(d); /* det of 0x0 is 1 (NumPy) */
        cr_expect(gd[0] == 1 && gd[1] == 1, "det of 0x0: %g%+gi", creal(gd[0]), cimag(gd[0]));
        free(gd);
        nd_free(e), nd_free(l), nd_free(iv), nd_free(d), nd_free(w), nd_free(v), nd_free(q), nd_free(r);
        nd_free(u), nd_free(s), nd_free(vh), nd_free(sg), nd_free(ld);
        /* 1x1: z, its inverse, sqrt for the Cholesky factor of a positive one */
        cd z[1] = {3 - 4 * I}, pz[1] = {4};
        nd_array *x = upc(t, ND_SHAPE(1, 1), z), *p = upc(t, ND_SHAPE(1, 1), pz);
        nd_array *xi = nd_linalg_inv(x), *xd = nd_linalg_det(x), *pl = nd_linalg_cholesky(p);
        nd_array *xs = nd_linalg_svdvals(x);
        cr_assert(xi && xd && pl && xs, "%s", nd_last_error());
        cd *gi = downc(xi), *gdd = downc(xd), *gl = downc(pl);
        double *gs = downr(xs);
        double tol = tol_of(t, 1, 1);
        cr_expect(cabs(gi[0] - 1 / z[0]) <= tol, "inv 1x1");
        cr_expect(cabs(gdd[0] - z[0]) <= 5 * tol, "det 1x1 %g%+gi", creal(gdd[0]), cimag(gdd[0]));
        cr_expect(cabs(gl[0] - 2) <= tol, "cholesky 1x1");
        cr_expect(fabs(gs[0] - 5) <= 5 * tol, "svdvals 1x1 %g", gs[0]);
        free(gi), free(gdd), free(gl), free(gs);
        nd_free(x), nd_free(p), nd_free(xi), nd_free(xd), nd_free(pl), nd_free(xs);
    }
}
