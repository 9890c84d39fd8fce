/*
 * pi.c — Monte Carlo estimate of pi.
 *
 * Draw N points (x, y) uniformly in the unit square (default N = 2^24) and
 * count the fraction that falls inside the quarter circle x^2 + y^2 <= 1;
 * that fraction tends to pi/4. In NumPy:
 *
 *     x, y = rng.random(n), rng.random(n)
 *     pi = 4 * np.mean(x*x + y*y <= 1)
 *
 * Lazily recorded, the draws, the test and the mean fuse into one kernel:
 * x and y are generated inside it and never stored.
 *
 * Usage: pi [N]
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

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 24);
    if (n < 1) {
        fprintf(stderr, "usage: pi [N >= 1]\n");
        return 2;
    }

    double t0 = now_seconds();
    nd_random_seed(2024);
    nd_scope_begin_named("monte carlo");
    nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
    nd_array *y = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
    nd_array *inside = nd_le(nd_add(nd_mul(x, x), nd_mul(y, y)), nd_scalar(1.0));
    /* Count in float64: a float32 mean of 2^24 ones and zeros would round. */
    nd_array *frac = nd_keep(nd_mean(nd_astype(inside, ND_FLOAT64), ND_ALL_AXES));
    nd_scope_end();
    double pi = 4.0 * nd_item(frac);
    double t1 = now_seconds();
    nd_free(frac);

    if (nd_last_status() != ND_OK) {
        fprintf(stderr, "pi: %s\n", nd_last_error());
        nd_shutdown();
        return 1;
    }
    /* The standard error of the estimate is about 1.64/sqrt(N). */
    double tol = 6.0 * 1.64 / sqrt((double)n);
    double err = fabs(pi - 3.14159265358979323846);
    printf("pi: %lld samples on %s\n", (long long)n, nd_backend_name());
    printf("  estimate %.8f  error %.2e (6 sigma: %.2e)\n", pi, err, tol);
    printf("  time %.3f s\n", t1 - t0);
    nd_shutdown();
    return err <= tol ? 0 : 1;
}
