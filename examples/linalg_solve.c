/*
 * linalg_solve.c — least squares by the normal equations with a Cholesky
 * solve, float64, checked against the SVD route:
 *
 *     X (M x N), y = X @ w_true + noise
 *     G = X.T @ X + lam * I        (SPD)
 *     L = np.linalg.cholesky(G)
 *     w = solve(L.T, solve(L, X.T @ y))
 *     w2 = np.linalg.lstsq(X, y)[0]   (for lam = 0: the same answer)
 *
 * Prints the fitted weights' error against w_true and |w - w2|; exits 1 if
 * the two routes disagree beyond a tolerance scaled by cond(X)^2. A
 * batch of B small problems (B x N x N SPD systems) is then solved in one
 * call and checked with G @ w == rhs.
 *
 * Usage: linalg_solve [M] [N] [B]   (defaults 4000 64 1000)
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
    fprintf(stderr, "linalg_solve: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

int main(int argc, char **argv) {
    int64_t m = argc > 1 ? atoll(argv[1]) : 4000, n = argc > 2 ? atoll(argv[2]) : 64;
    int64_t batch = argc > 3 ? atoll(argv[3]) : 1000;
    if (m < n || n < 1 || batch < 1) {
        fprintf(stderr, "usage: linalg_solve [M >= N] [N >= 1] [B >= 1]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) return fail("nd_init");
    nd_scope_begin();
    nd_random_seed(7);
    nd_array *x = nd_random_normal(ND_FLOAT64, 2, (int64_t[]){m, n}, 0, 1);
    nd_array *w_true = nd_random_uniform(ND_FLOAT64, 1, (int64_t[]){n}, -1, 1);
    nd_array *noise = nd_random_normal(ND_FLOAT64, 1, (int64_t[]){m}, 0, 1e-3);
    nd_array *y = nd_add(nd_matmul(x, w_true), noise);
    nd_array *xt = nd_transpose(x, NULL);
    nd_array *g = nd_matmul(xt, x);
    nd_array *l = nd_linalg_cholesky(g);
    nd_array *z = nd_linalg_solve(l, nd_matmul(xt, y));
    nd_array *w = nd_linalg_solve(nd_transpose(l, NULL), z);
    nd_array *w2 = NULL;
    if (nd_linalg_lstsq(x, y, -1, &w2, NULL, NULL, NULL) != ND_OK) return fail("nd_linalg_lstsq");
    double err = nd_item(nd_max(nd_abs(nd_sub(w, w_true)), ND_ALL_AXES));
    double diff = nd_item(nd_max(nd_abs(nd_sub(w, w2)), ND_ALL_AXES));
    double cond = nd_item(nd_linalg_cond(x));
    if (nd_last_status() != ND_OK) return fail("the least-squares fit");
    double tol = 1e-14 * cond * cond * (double)n;
    printf("least squares %lld x %lld: max |w - w_true| = %.3g, max |cholesky - lstsq| = %.3g (cond %.3g, tol "
           "%.3g)\n", (long long)m, (long long)n, err, diff, cond, tol);
    int bad = !(diff <= tol) || !(err < 1e-2);

    /* A batch of SPD systems G_b w_b = r_b in one call. */
    enum { K = 8 };
    nd_array *p = nd_random_normal(ND_FLOAT64, 3, (int64_t[]){batch, K, K}, 0, 1);
    nd_array *gb = nd_add(nd_matmul(p, nd_swapaxes(p, -1, -2)), nd_mul(nd_eye(ND_FLOAT64, K, K, 0), nd_scalar(K)));
    nd_array *rb = nd_random_normal(ND_FLOAT64, 3, (int64_t[]){batch, K, 1}, 0, 1);
    nd_array *wb = nd_linalg_solve(gb, rb);
    double res = nd_item(nd_max(nd_abs(nd_sub(nd_matmul(gb, wb), rb)), ND_ALL_AXES));
    if (nd_last_status() != ND_OK) return fail("the batched solve");
    printf("batched solve %lld x %dx%d: max |G w - r| = %.3g\n", (long long)batch, K, K, res);
    bad |= !(res < 1e-10);
    nd_scope_end();
    nd_shutdown();
    if (bad) fprintf(stderr, "linalg_solve: check FAILED\n");
    return bad;
}
