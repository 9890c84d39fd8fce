/*
 * linalg_bench.c — dense linear algebra (include/nd/linalg_decomp.h) on the
 * backend ND_BACKEND picks: cholesky, solve (one right-hand side), eigh and
 * svd (full U and Vh off: reduced) of one N x N matrix in float32 and
 * float64, and B batched 8x8 float32 solves.
 *
 * Rules (bench/README.md): fresh random inputs per run, made and synced
 * outside the timed part; one checked warm-up (a reconstruction residual
 * against the input: L L^T, A x - b, A V - V diag(w), U diag(S) Vh, scaled
 * by N and the dtype's epsilon); the median of R timed runs, each from the
 * first call to the nd_sync that waits for it.
 *
 * Usage: linalg_bench [N] [B] [R] [ops]   (defaults 1024 100000 7 all;
 * ops a comma list of cholesky,solve,eigh,svd,batched)
 * Prints one line per case: name dtype size median_ms.
 */
#include <nd.h>

#include <float.h>
#include <math.h>

#include "bench_util.h"

static int64_t N = 1024, B = 100000;
static int R = 7;

/* An SPD matrix (P P^T / n + I) and a random right-hand side, synced. */
static void inputs(nd_dtype t, int64_t batch, int64_t n, nd_array **a, nd_array **b) {
    nd_scope_begin();
    int nd = batch ? 3 : 2;
    int64_t sa[3] = {batch, n, n}, sb[3] = {batch, n, 1};
    const int64_t *pa = batch ? sa : sa + 1, *pb = batch ? sb : sb + 1;
    nd_array *p = nd_random_uniform(t, nd, pa, -1, 1);
    nd_array *g = nd_matmul(p, nd_swapaxes(p, -1, -2));
    *a = nd_add(nd_div(g, nd_scalar((double)n)), nd_eye(t, n, n, 0));
    *b = nd_random_uniform(t, nd, pb, -1, 1);
    nd_retain(*a);
    nd_retain(*b);
    nd_scope_end();
    nd_sync();
}

static double max_abs(nd_array *x) { return nd_item(nd_max(nd_abs(x), ND_ALL_AXES)); }

/* The residual of op's answer on (a, b), relative to |a| (checked once). */
static double residual(const char *op, nd_array *a, nd_array *b) {
    nd_scope_begin();
    double r = INFINITY;
    if (!strcmp(op, "cholesky")) {
        nd_array *l = nd_linalg_cholesky(a);
        r = max_abs(nd_sub(nd_matmul(l, nd_swapaxes(l, -1, -2)), a));
    } else if (!strcmp(op, "solve") || !strcmp(op, "batched")) {
        nd_array *x = nd_linalg_solve(a, b);
        r = max_abs(nd_sub(nd_matmul(a, x), b));
    } else if (!strcmp(op, "eigh")) {
        nd_array *w, *v;
        nd_linalg_eigh(a, &w, &v);
        r = max_abs(nd_sub(nd_matmul(a, v), nd_mul(v, w)));
    } else if (!strcmp(op, "svd")) {
        nd_array *u, *s, *vh;
        nd_linalg_svd(a, false, true, &u, &s, &vh);
        r = max_abs(nd_sub(nd_matmul(nd_mul(u, s), vh), a));
    }
    nd_scope_end();
    return r / (max_abs(a) + 1e-300);
}

static void run(const char *op, nd_dtype t, int64_t batch, int64_t n) {
    nd_array *a, *b;
    inputs(t, batch, n, &a, &b);
    double res = residual(op, a, b), eps = t == ND_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    int ok = nd_last_status() == ND_OK && res < eps * (double)n * 1e3;
    nd_clear_error();
    nd_free(a);
    nd_free(b);
    double times[64];
    for (int i = 0; i < R && ok; i++) {
        inputs(t, batch, n, &a, &b);
        nd_scope_begin();
        double t0 = bench_now();
        if (!strcmp(op, "cholesky")) {
            nd_linalg_cholesky(a);
        } else if (!strcmp(op, "solve") || !strcmp(op, "batched")) {
            nd_linalg_solve(a, b);
        } else if (!strcmp(op, "eigh")) {
            nd_array *w, *v;
            nd_linalg_eigh(a, &w, &v);
        } else {
            nd_array *u, *s, *vh;
            nd_linalg_svd(a, false, true, &u, &s, &vh);
        }
        ok = nd_sync() == ND_OK;
        times[i] = bench_now() - t0;
        nd_scope_end();
        nd_free(a);
        nd_free(b);
    }
    if (!ok) {
        printf("%-9s %-7s %8lld x %-6lld FAILED (residual %.3g: %s)\n", op, nd_dtype_name(t), (long long)(batch ? batch : 1),
               (long long)n, res, nd_last_error());
        nd_clear_error();
        return;
    }
    printf("%-9s %-7s %8lld x %-6lld %10.3f ms  (residual %.2g)\n", op, nd_dtype_name(t),
           (long long)(batch ? batch : 1), (long long)n, 1e3 * bench_median(times, R), res);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc > 1) N = atoll(argv[1]);
    if (argc > 2) B = atoll(argv[2]);
    if (argc > 3) R = atoi(argv[3]);
    const char *ops = argc > 4 ? argv[4] : "cholesky,solve,eigh,svd,batched";
    if (N < 1 || B < 1 || R < 1 || R > 64) {
        fprintf(stderr, "usage: linalg_bench [N] [B] [R <= 64] [ops]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "linalg_bench: %s\n", nd_last_error());
        return 1;
    }
    printf("linalg_bench on %s: median of %d runs\n", getenv("ND_BACKEND") ? getenv("ND_BACKEND") : "auto", R);
    const char *names[4] = {"cholesky", "solve", "eigh", "svd"};
    for (int k = 0; k < 4; k++) {
        if (!strstr(ops, names[k])) continue;
        run(names[k], ND_FLOAT32, 0, N);
        run(names[k], ND_FLOAT64, 0, N);
    }
    if (strstr(ops, "batched")) run("batched", ND_FLOAT32, B, 8);
    nd_shutdown();
    return 0;
}
