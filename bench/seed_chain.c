/*
 * seed_chain.c — the seed elementwise chain, for comparison with NumPy.
 *
 *     y = sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a)     (float32, n = 2^24)
 *
 * Fused, this is one pass: read a and b, write y, with five transcendental
 * calls per element in between, so it measures the generated kernel's
 * arithmetic as much as memory. bench/peers/numpy_chain.py runs the same
 * expression in NumPy under the same rules: fresh random inputs in [-2, 2)
 * per run (made outside the timed part), one checked warm-up run (float64
 * reference on the host), median of RUNS >= 7. The copy floor for 2 reads +
 * 1 write is printed for scale.
 *
 * Usage: seed_chain [N] [RUNS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

static nd_array *chain(nd_array *a, nd_array *b)
{
    nd_scope_begin();
    nd_array *left = nd_mul(nd_sin(a), nd_cos(b));
    nd_array *right = nd_mul(nd_sqrt(nd_abs(nd_mul(a, b))), nd_exp(nd_neg(nd_mul(a, a))));
    nd_array *y = nd_keep(nd_add(left, right));
    nd_scope_end();
    return y;
}

static int check(nd_array *a, nd_array *b, nd_array *y, int64_t n)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *ha = malloc(bytes), *hb = malloc(bytes), *hy = malloc(bytes);
    int ok = ha && hb && hy && nd_to_host(a, ha, bytes) == ND_OK &&
             nd_to_host(b, hb, bytes) == ND_OK && nd_to_host(y, hy, bytes) == ND_OK;
    double worst = 0.0;
    for (int64_t i = 0; ok && i < n; i++) {
        double x = ha[i], z = hb[i];
        double ref = sin(x) * cos(z) + sqrt(fabs(x * z)) * exp(-x * x);
        /* Terms are O(1): a few float32 ulps of 1 each. */
        double err = fabs((double)hy[i] - ref) / (1.0 + fabs(ref));
        worst = err > worst ? err : worst;
    }
    free(ha);
    free(hb);
    free(hy);
    if (!ok || worst > 4e-6) {
        fprintf(stderr, "seed_chain: wrong answer (worst error %.3e): %s\n", worst,
                nd_last_error());
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 24);
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    if (n < 1)
        n = (int64_t)1 << 24;
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;

    size_t bytes = (size_t)n * sizeof(float);
    int copy_threads = 1;
    double bw = bench_copy_bandwidth(bytes, runs, &copy_threads);
    double floor_s = 3.0 * (double)bytes / bw;

    nd_random_seed(2718);
    double times[64];
    int ok = 1;
    for (int r = -1; r < runs && ok; r++) {
        nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
        nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
        ok = nd_sync() == ND_OK;
        double t0 = bench_now();
        nd_array *y = chain(a, b);
        ok = ok && nd_sync() == ND_OK && y;
        double t = bench_now() - t0;
        if (ok && r < 0)
            ok = check(a, b, y, n);
        if (r >= 0)
            times[r] = t;
        nd_free(y);
        nd_free(a);
        nd_free(b);
    }
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    if (!ok) {
        fprintf(stderr, "seed_chain: failed: %s\n", nd_last_error());
        printf("JSON {\"bench\":\"seed_chain\",\"impl\":\"nd\",\"n\":%" PRId64
               ",\"checked\":false,\"backend\":\"%s\"}\n", n, backend);
        return 1;
    }
    double med = bench_median(times, runs);
    printf("seed_chain: sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a), %" PRId64
           " float32, median of %d, backend %s\n", n, runs, backend);
    printf("  nd %.3f ms (%.1f M elements/s); copy floor for 2 reads + 1 write %.3f ms "
           "(%.2f x floor)\n", 1e3 * med, 1e-6 * (double)n / med, 1e3 * floor_s, med / floor_s);
    printf("JSON {\"bench\":\"seed_chain\",\"impl\":\"nd\",\"n\":%" PRId64 ",\"runs\":%d,"
           "\"median_ms\":%.4f,\"floor_ms\":%.4f,\"ratio_to_floor\":%.3f,\"copy_GBps\":%.3f,"
           "\"checked\":true,\"backend\":\"%s\"}\n",
           n, runs, 1e3 * med, 1e3 * floor_s, med / floor_s, 1e-9 * bw, backend);
    return 0;
}
