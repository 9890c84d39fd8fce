/*
 * linalg_qr_svd.c — two NumPy programs that need QR and the SVD, float64:
 *
 *   1. A polynomial fit by QR (the numerically stable least squares):
 *        t = linspace(-1, 1, M); X = vander(t, N) (columns t^0 .. t^(N-1))
 *        y = X @ c_true + noise
 *        Q, R = np.linalg.qr(X)                  (reduced)
 *        c = np.linalg.solve(R, Q.T @ y)
 *      checked against np.linalg.lstsq (SVD route): |c - c_lstsq| within
 *      a tolerance scaled by cond(X), |Q.T Q - I| and |Q R - X| near eps.
 *
 *   2. A truncated SVD (the best rank-k approximation):
 *        A = P @ W (rank k) + E (noise of scale sigma)
 *        U, S, Vh = np.linalg.svd(A, full_matrices=False)
 *        A_k = (U[:, :k] * S[:k]) @ Vh[:k, :]
 *      checked by Eckart-Young: |A - A_k|_F == sqrt(sum(S[k:]**2)), and
 *      A_k is closer to the noiseless P @ W than A is.
 *
 * Prints each check; exits 1 if one fails.
 *
 * Usage: linalg_qr_svd [M] [N] [K]   (defaults 2000 8 10: M points and
 * degree N-1 for the fit; an M/4 x M/8 matrix of rank K for the SVD)
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
    fprintf(stderr, "linalg_qr_svd: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

static double max_abs(nd_array *x) { return nd_item(nd_max(nd_abs(x), ND_ALL_AXES)); }

/* X[i, j] = t[i]^j, j = 0 .. n-1 (np.vander(t, n, increasing=True)). */
static nd_array *vander(nd_array *t, int64_t n) {
    nd_array *j = nd_arange(ND_FLOAT64, 0, (double)n, 1);
    return nd_pow(nd_view(t, ":, None"), j);
}

int main(int argc, char **argv) {
    int64_t m = argc > 1 ? atoll(argv[1]) : 2000, n = argc > 2 ? atoll(argv[2]) : 8;
    int64_t k = argc > 3 ? atoll(argv[3]) : 10;
    int64_t rows = m / 4, cols = m / 8;
    if (n < 1 || m < 2 * n || k < 1 || cols <= k) {
        fprintf(stderr, "usage: linalg_qr_svd [M >= 2N] [N >= 1] [K >= 1, K < M/8]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) return fail("nd_init");
    nd_scope_begin();
    nd_random_seed(11);
    int bad = 0;

    /* 1. The polynomial fit by QR. */
    nd_array *t = nd_linspace(ND_FLOAT64, -1, 1, m);
    nd_array *x = vander(t, n);
    nd_array *c_true = nd_random_uniform(ND_FLOAT64, 1, (int64_t[]){n}, -1, 1);
    nd_array *y = nd_add(nd_matmul(x, c_true), nd_random_normal(ND_FLOAT64, 1, (int64_t[]){m}, 0, 1e-6));
    nd_array *q = NULL, *r = NULL;
    if (nd_linalg_qr(x, ND_QR_REDUCED, &q, &r) != ND_OK) return fail("nd_linalg_qr");
    nd_array *qt = nd_transpose(q, NULL);
    nd_array *c = nd_linalg_solve(r, nd_matmul(qt, y));
    nd_array *c2 = NULL;
    if (nd_linalg_lstsq(x, y, -1, &c2, NULL, NULL, NULL) != ND_OK) return fail("nd_linalg_lstsq");
    double diff = max_abs(nd_sub(c, c2));
    double orth = max_abs(nd_sub(nd_matmul(qt, q), nd_eye(ND_FLOAT64, n, n, 0)));
    double recon = max_abs(nd_sub(nd_matmul(q, r), x));
    double err = max_abs(nd_sub(c, c_true));
    double cond = nd_item(nd_linalg_cond(x));
    if (nd_last_status() != ND_OK) return fail("the polynomial fit");
    double tol = 1e-13 * cond * (double)n;
    printf("polynomial fit, %lld points, degree %lld: max |qr - lstsq| = %.3g (cond %.3g, tol %.3g), "
           "|Q^T Q - I| = %.3g, |QR - X| = %.3g, max |c - c_true| = %.3g\n",
           (long long)m, (long long)(n - 1), diff, cond, tol, orth, recon, err);
    bad |= !(diff <= tol) || !(orth < 1e-13 * (double)m) || !(recon < 1e-13 * (double)m) || !(err < 1e-2);

    /* 2. The truncated SVD. */
    const double sigma = 1e-3;
    nd_array *p = nd_random_normal(ND_FLOAT64, 2, (int64_t[]){rows, k}, 0, 1);
    nd_array *w = nd_random_normal(ND_FLOAT64, 2, (int64_t[]){k, cols}, 0, 1);
    nd_array *clean = nd_matmul(p, w);
    nd_array *a = nd_add(clean, nd_random_normal(ND_FLOAT64, 2, (int64_t[]){rows, cols}, 0, sigma));
    nd_array *u = NULL, *s = NULL, *vh = NULL;
    if (nd_linalg_svd(a, false, true, &u, &s, &vh) != ND_OK) return fail("nd_linalg_svd");
    /* U[:, :k], S[:k], Vh[:k, :], S[k:] and S[k-1] as NumPy index strings */
    char u_k[32], s_k[32], vh_k[32], s_rest[32], s_last[32];
    snprintf(u_k, sizeof u_k, ":, :%lld", (long long)k);
    snprintf(s_k, sizeof s_k, ":%lld", (long long)k);
    snprintf(vh_k, sizeof vh_k, ":%lld, :", (long long)k);
    snprintf(s_rest, sizeof s_rest, "%lld:", (long long)k);
    snprintf(s_last, sizeof s_last, "%lld", (long long)(k - 1));
    nd_array *ak = nd_matmul(nd_mul(nd_view(u, u_k), nd_view(s, s_k)), nd_view(vh, vh_k));
    double fro = nd_item(nd_linalg_norm(nd_sub(a, ak), ND_NORM_FRO, 0));
    double tail = sqrt(nd_item(nd_sum(nd_square(nd_view(s, s_rest)), ND_ALL_AXES)));
    double denoised = nd_item(nd_linalg_norm(nd_sub(ak, clean), ND_NORM_FRO, 0));
    double noisy = nd_item(nd_linalg_norm(nd_sub(a, clean), ND_NORM_FRO, 0));
    double kth = nd_item(nd_view(s, s_last));
    if (nd_last_status() != ND_OK) return fail("the truncated SVD");
    printf("truncated SVD %lld x %lld, rank %lld + noise %.0e: |A - A_k|_F = %.6g, sqrt(sum S[k:]^2) = %.6g; "
           "|A_k - clean|_F = %.3g against |A - clean|_F = %.3g; S[k-1] = %.3g\n",
           (long long)rows, (long long)cols, (long long)k, sigma, fro, tail, denoised, noisy, kth);
    bad |= !(fabs(fro - tail) <= 1e-10 * (tail + 1)) || !(denoised < noisy) || !(kth > 100 * sigma);

    nd_scope_end();
    nd_shutdown();
    if (bad) fprintf(stderr, "linalg_qr_svd: check FAILED\n");
    return bad;
}
