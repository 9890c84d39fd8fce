/*
 * matmul_chain.c — a matrix product feeding an elementwise chain and a
 * reduction, float32:
 *
 *     D = A @ B + C
 *     s = (np.sin(D) + np.cos(D)).sum(axis=1)
 *
 * A, B, C are N x N uniform in [-1, 1) (default N = 1024). The matmul is a
 * library call (BLAS on the CPU, cuBLAS on the GPU); the add, sin, cos, add
 * and row sum fuse into one kernel that reads the product once. Prints the
 * checksum sum(s); for N <= 256 it also checks s against a float64 host
 * computation.
 *
 * Usage: matmul_chain [N]
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "matmul_chain: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* Row sums of sin(A@B + C) + cos(A@B + C) in float64, for the check. */
static int host_check(const float *a, const float *b, const float *c, const float *s,
                      int64_t n)
{
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double row = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double d = c[i * n + j];
            for (int64_t k = 0; k < n; k++)
                d += (double)a[i * n + k] * (double)b[k * n + j];
            row += sin(d) + cos(d);
        }
        double err = fabs(row - (double)s[i]) / (1.0 + fabs(row));
        if (err > worst)
            worst = err;
    }
    /* float32 products of length n and a float32 row sum of n terms. */
    double tol = 2e-6 * (double)n;
    printf("  host check: worst relative row error %.2e (tolerance %.2e)\n", worst, tol);
    return worst <= tol;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1024;
    if (n < 1) {
        fprintf(stderr, "usage: matmul_chain [N >= 1]\n");
        return 2;
    }

    nd_random_seed(42);
    nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
    nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
    nd_array *c = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
    if (nd_sync() != ND_OK)
        return fail("generating the inputs");

    double t0 = now_seconds();
    nd_scope_begin_named("chain");
    nd_array *d = nd_add(nd_matmul(a, b), c);
    nd_array *s = nd_keep(nd_sum(nd_add(nd_sin(d), nd_cos(d)), 1));
    nd_scope_end();
    nd_array *total = nd_sum(s, ND_ALL_AXES);
    double checksum = nd_item(total);
    double t1 = now_seconds();
    if (nd_last_status() != ND_OK)
        return fail("the chain");

    printf("matmul_chain: N = %lld float32 on %s\n", (long long)n, nd_backend_name());
    printf("  checksum sum(s) = %.6f\n", checksum);
    printf("  time %.4f s\n", t1 - t0);

    int ok = isfinite(checksum);
    if (ok && n <= 256) {
        size_t bytes = (size_t)(n * n) * sizeof(float);
        float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
        float *hs = malloc((size_t)n * sizeof(float));
        if (!ha || !hb || !hc || !hs) {
            fprintf(stderr, "matmul_chain: out of host memory\n");
            return 1;
        }
        if (nd_to_host(a, ha, bytes) != ND_OK || nd_to_host(b, hb, bytes) != ND_OK ||
            nd_to_host(c, hc, bytes) != ND_OK ||
            nd_to_host(s, hs, (size_t)n * sizeof(float)) != ND_OK)
            return fail("nd_to_host");
        ok = host_check(ha, hb, hc, hs, n);
        free(ha);
        free(hb);
        free(hc);
        free(hs);
    }

    nd_free(total);
    nd_free(s);
    nd_free(a);
    nd_free(b);
    nd_free(c);
    nd_shutdown();
    return ok ? 0 : 1;
}
