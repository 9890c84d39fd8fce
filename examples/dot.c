/*
 * dot.c — dot product of two random float64 vectors (default 10^7 elements),
 * computed by nd (nd_dot -> one library/reduction step) and by a plain host
 * loop over the same data, with both results and times printed.
 *
 * Usage: dot [N]
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
    fprintf(stderr, "dot: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 10000000;
    if (n < 1) {
        fprintf(stderr, "usage: dot [N >= 1]\n");
        return 2;
    }

    nd_random_seed(7);
    nd_array *a = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1.0, 1.0);
    nd_array *b = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), -1.0, 1.0);
    if (nd_sync() != ND_OK) /* make the inputs, outside the timed part */
        return fail("generating the inputs");

    double t0 = now_seconds();
    nd_array *d = nd_dot(a, b);
    double nd_result = nd_item(d);
    double t1 = now_seconds();
    if (nd_last_status() != ND_OK)
        return fail("nd_dot");

    double *ha = malloc((size_t)n * sizeof *ha);
    double *hb = malloc((size_t)n * sizeof *hb);
    if (!ha || !hb) {
        fprintf(stderr, "dot: out of host memory\n");
        return 1;
    }
    if (nd_to_host(a, ha, (size_t)n * sizeof *ha) != ND_OK ||
        nd_to_host(b, hb, (size_t)n * sizeof *hb) != ND_OK)
        return fail("nd_to_host");

    double t2 = now_seconds();
    double host = 0.0, abs_sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        host += ha[i] * hb[i];
        abs_sum += fabs(ha[i] * hb[i]);
    }
    double t3 = now_seconds();

    /* Summation order differs (tree vs serial), so allow a few ulps of the
     * sum of magnitudes per term. */
    double diff = fabs(nd_result - host);
    double tol = 1e-12 * abs_sum + 1e-300;
    printf("dot: %lld float64 elements on %s\n", (long long)n, nd_backend_name());
    printf("  nd   %.12g  time %.4f s\n", nd_result, t1 - t0);
    printf("  host %.12g  time %.4f s (serial loop)\n", host, t3 - t2);
    printf("  |difference| %.3e (tolerance %.3e)\n", diff, tol);

    free(ha);
    free(hb);
    nd_free(d);
    nd_free(a);
    nd_free(b);
    nd_shutdown();
    return diff <= tol ? 0 : 1;
}
