/*
 * breadth_targets.c — the speed target of the new unary float ops, on
 * whichever backend nd starts (ND_BACKEND=cuda on the GPU machine); the
 * reduction and random targets are bench/reduce_axes.c and the suite's
 * uniform_sum/integers_sum (bench/nd_suite_random.c):
 *
 *   transcendental_chain  12 of the unary float ops in one chain over
 *                         N float32 (default 2^26):
 *                           y = tan(arctan(cbrt(log2(exp2(log1p(expm1(
 *                               arccosh(cosh(arcsinh(sinh(arcsin(x))))))))))))
 *                         One read and one write per element, so its floor
 *                         is the time nd takes to copy x (y = nd_copy(x),
 *                         the same bytes, timed the same way). Reported:
 *                         time / floor (target <= 1.10 when memory-bound)
 *                         and the kernels it ran (target 1).
 *
 * Each timed run records the expression on a fresh input drawn and synced
 * outside the timed part, then syncs: the time covers recording, running and
 * waiting. Median of RUNS (>= 5) after a warm-up whose answer is checked
 * against the same chain in float64 on the host: 1e-4 relative, since each
 * op is within 4 ulp of float32 (2.4e-7) and arccosh after cosh amplifies
 * the error carried to it up to 25 times for these inputs.
 *
 * Usage: breadth_targets [N] [RUNS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

static nd_array *transcendental_chain(nd_array *x)
{
    nd_scope_begin();
    nd_array *t = nd_arcsin(x);
    t = nd_sinh(t);
    t = nd_arcsinh(t);
    t = nd_cosh(t);
    t = nd_arccosh(t);
    t = nd_expm1(t);
    t = nd_log1p(t);
    t = nd_exp2(t);
    t = nd_log2(t);
    t = nd_cbrt(t);
    t = nd_arctan(t);
    t = nd_tan(t);
    nd_keep(t);
    nd_scope_end();
    return t;
}

static double chain_ref(double x)
{
    return tan(atan(cbrt(log2(exp2(log1p(expm1(acosh(cosh(asinh(sinh(asin(x))))))))))));
}

/* Worst relative error of y against the float64 chain of x (NaN: unreadable). */
static double chain_error(nd_array *x, nd_array *y, int64_t n)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *hx = malloc(bytes), *hy = malloc(bytes);
    double worst = NAN;
    if (hx && hy && nd_to_host(x, hx, bytes) == ND_OK && nd_to_host(y, hy, bytes) == ND_OK) {
        worst = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double ref = chain_ref((double)hx[i]);
            double err = fabs((double)hy[i] - ref) / fmax(fabs(ref), 1e-30);
            worst = err > worst || isnan(err) ? err : worst;
        }
    }
    free(hx);
    free(hy);
    return worst;
}

typedef enum { RUN_COPY, RUN_CHAIN } run_kind;

/* Median seconds over `runs`; kernels of the last run in *kernels. */
static double time_runs(run_kind kind, int64_t n, int runs, uint64_t *kernels, int *ok)
{
    double times[64];
    for (int r = -1; r < runs && *ok; r++) {
        /* arcsin's domain, away from 0: arccosh near 1 multiplies its input's
         * relative error by about 1/t^2 at t = arcsin(x) (25 at x = 0.2). */
        nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.2, 0.95);
        if (nd_sync() != ND_OK) {
            *ok = 0;
            nd_free(x);
            break;
        }
        nd_stats before, after;
        nd_get_stats(&before);
        double t0 = bench_now();
        nd_array *y = kind == RUN_CHAIN ? transcendental_chain(x) : nd_copy(x);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        nd_get_stats(&after);
        *kernels = after.kernels_run - before.kernels_run;
        if (st != ND_OK || !y)
            *ok = 0;
        if (*ok && r < 0 && kind == RUN_CHAIN) {
            double err = chain_error(x, y, n);
            if (!(err <= 1e-4)) {
                fprintf(stderr, "breadth_targets: chain wrong (worst relative error %.3e) %s\n",
                        err, nd_last_error());
                *ok = 0;
            }
        }
        if (r >= 0)
            times[r] = t;
        nd_free(y);
        nd_free(x);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 26);
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    if (n < 1)
        n = (int64_t)1 << 26;
    runs = runs < 5 ? 5 : runs > 64 ? 64 : runs;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "breadth_targets: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2026);
    int ok = 1;
    uint64_t copy_kernels = 0, chain_kernels = 0;
    double copy_s = time_runs(RUN_COPY, n, runs, &copy_kernels, &ok);
    double chain_s = time_runs(RUN_CHAIN, n, runs, &chain_kernels, &ok);
    printf("breadth_targets: backend %s, median of %d\n", nd_backend_name(), runs);
    printf("  copy floor            %" PRId64 " float32: %9.3f ms (%.1f GB/s read+write, %" PRIu64
           " kernel)\n",
           n, 1e3 * copy_s, 8.0 * (double)n / copy_s * 1e-9, copy_kernels);
    printf("  transcendental chain  %" PRId64 " float32: %9.3f ms = %.2f x floor (target <= 1.10 "
           "when memory-bound), %" PRIu64 " kernel(s) (target 1)\n",
           n, 1e3 * chain_s, chain_s / copy_s, chain_kernels);
    printf("JSON {\"bench\":\"transcendental_chain\",\"backend\":\"%s\",\"n\":%" PRId64
           ",\"runs\":%d,\"copy_ms\":%.4f,\"chain_ms\":%.4f,\"ratio_to_floor\":%.3f,"
           "\"chain_kernels\":%" PRIu64 ",\"checked\":%s}\n",
           nd_backend_name(), n, runs, 1e3 * copy_s, 1e3 * chain_s, chain_s / copy_s,
           chain_kernels, ok ? "true" : "false");
    if (!ok)
        printf("  ERROR: a run failed or gave a wrong answer: %s\n", nd_last_error());
    nd_shutdown();
    return ok ? 0 : 1;
}
