/*
 * sync_breakdown.c — where the wall time of a GPU workload goes between
 * recording and nd_sync, at the suite's sizes:
 *
 * - chain (2^27 float32, one fused kernel): median time to record the
 *   expression and median time of the nd_sync that plans, allocates the
 *   output, launches and waits. Compare with the kernel's own time
 *   (ND_PROFILE=1, or bench/elementwise_variants.cu) to get the host's share.
 * - small stencil (1000^2 float64) with k = 1, 5, 10, 25, 50, 100 sweeps
 *   recorded before one nd_sync: the slope over k is the device's cost per
 *   sweep as nd runs it, the intercept the fixed cost of a run.
 * - the same grid swept 50 times with an nd_sync every 1, 2, 5 or 10
 *   sweeps (a loop that checks convergence): the whole loop's wall time.
 *
 * Fresh random inputs per run, each answer checked (chain against float64 at
 * sampled points, the stencil for finiteness and its untouched border)
 * before anything is timed.
 *
 * Usage: bench_sync_breakdown [RUNS]   (default 15; ND_BACKEND=cuda on a GPU)
 */
#include "bench_util.h"
#include "suite_patterns.h"

#include <nd.h>

#include <math.h>

#define CHAIN_N ((int64_t)1 << 27)
#define GRID_N 1000
#define MAX_SWEEPS 100

static int chain_ok(nd_array *a, nd_array *b, nd_array *y)
{
    float *ha = malloc((size_t)CHAIN_N * 4), *hb = malloc((size_t)CHAIN_N * 4), *hy = malloc((size_t)CHAIN_N * 4);
    int ok = ha && hb && hy && nd_to_host(a, ha, (size_t)CHAIN_N * 4) == ND_OK &&
             nd_to_host(b, hb, (size_t)CHAIN_N * 4) == ND_OK && nd_to_host(y, hy, (size_t)CHAIN_N * 4) == ND_OK;
    for (int64_t k = 0; ok && k < CHAIN_N; k += 4099) {
        double x = ha[k], z = hb[k], want = sin(x) * cos(z) + sqrt(fabs(x * z)) * exp(-x * x);
        if (!(fabs(hy[k] - want) <= 1e-5 * (1 + fabs(want)))) {
            fprintf(stderr, "chain: wrong at %lld: %g, want %g\n", (long long)k, hy[k], want);
            ok = 0;
        }
    }
    free(ha);
    free(hb);
    free(hy);
    return ok;
}

static int chain(int runs)
{
    double rec[256], sync[256];
    nd_array *y = NULL;
    for (int r = -3; r < runs; r++) {
        nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(CHAIN_N), -2.0, 2.0);
        nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(CHAIN_N), -2.0, 2.0);
        nd_free(y); /* the last output goes before the run, as in the suite */
        if (nd_sync() != ND_OK)
            return 1;
        double t0 = bench_now();
        y = suite_chain_record(a, b);
        double t1 = bench_now();
        nd_status st = nd_sync();
        double t2 = bench_now();
        if (st != ND_OK || !y) {
            fprintf(stderr, "chain: %s\n", nd_last_error());
            return 1;
        }
        if (r == -3 && !chain_ok(a, b, y))
            return 1;
        if (r >= 0) {
            rec[r] = (t1 - t0) * 1e6;
            sync[r] = (t2 - t1) * 1e6;
        }
        nd_free(a);
        nd_free(b);
    }
    nd_free(y);
    double tot[256];
    for (int r = 0; r < runs; r++)
        tot[r] = rec[r] + sync[r];
    printf("chain 2^27 f32: record %.1f us, nd_sync %.1f us, total %.1f us (medians of %d)\n", bench_median(rec, runs),
           bench_median(sync, runs), bench_median(tot, runs), runs);
    return 0;
}

static int stencil_ok(nd_array *u, const double *start)
{
    double *h = malloc(sizeof(double) * GRID_N * GRID_N);
    int ok = h && nd_to_host(u, h, sizeof(double) * GRID_N * GRID_N) == ND_OK;
    for (int64_t i = 0; ok && i < GRID_N * GRID_N; i++) {
        int64_t row = i / GRID_N, col = i % GRID_N;
        int border = row == 0 || col == 0 || row == GRID_N - 1 || col == GRID_N - 1;
        if (!isfinite(h[i]) || (border && h[i] != start[i])) {
            fprintf(stderr, "small stencil: wrong at (%lld, %lld): %g\n", (long long)row, (long long)col, h[i]);
            ok = 0;
        }
    }
    free(h);
    return ok;
}

static int stencil(int runs, int sweeps)
{
    static double per_sweep[MAX_SWEEPS][256]; /* recording time of each sweep, per run */
    double rec[256], sync[256], tot[256];
    double *start = malloc(sizeof(double) * GRID_N * GRID_N);
    if (!start)
        return 1;
    for (int r = -3; r < runs; r++) {
        nd_array *u = nd_random_uniform(ND_FLOAT64, ND_SHAPE(GRID_N, GRID_N), 0.0, 1.0);
        if (nd_sync() != ND_OK)
            return 1;
        if (r == -3 && nd_to_host(u, start, sizeof(double) * GRID_N * GRID_N) != ND_OK)
            return 1;
        double t0 = bench_now(), tk = t0;
        for (int k = 0; k < sweeps; k++) {
            if (suite_jacobi_step(u) != ND_OK)
                return 1;
            double now = bench_now();
            if (r >= 0 && k < MAX_SWEEPS)
                per_sweep[k][r] = (now - tk) * 1e6;
            tk = now;
        }
        double t1 = bench_now();
        nd_status st = nd_sync();
        double t2 = bench_now();
        if (st != ND_OK) {
            fprintf(stderr, "small stencil: %s\n", nd_last_error());
            return 1;
        }
        if (r == -3 && !stencil_ok(u, start))
            return 1;
        if (r >= 0) {
            rec[r] = (t1 - t0) * 1e6;
            sync[r] = (t2 - t1) * 1e6;
            tot[r] = rec[r] + sync[r];
        }
        nd_free(u);
    }
    free(start);
    printf("small stencil 1000^2 f64 x %3d sweeps: record %7.1f us, nd_sync %7.1f us, total %7.1f us "
           "(%.2f us per sweep; medians of %d)\n",
           sweeps, bench_median(rec, runs), bench_median(sync, runs), bench_median(tot, runs),
           bench_median(tot, runs) / sweeps, runs);
    /* Sweeps whose recording stalled (an early flush planned on this
     * thread, or a wait for the executor): median over the runs > 3 us. */
    for (int k = 0; k < sweeps && k < MAX_SWEEPS; k++) {
        double m = bench_median(per_sweep[k], runs);
        if (m > 3.0)
            printf("    sweep %d recorded in %.1f us\n", k, m);
    }
    return 0;
}

/* A loop that syncs every `per_sync` sweeps (checking convergence, say),
 * `total` sweeps on one grid: the wall time of the whole loop. The first
 * run's grid is compared whole with the float64 reference. */
static int stencil_every(int runs, int per_sync, int total)
{
    double tot[256];
    const size_t bytes = sizeof(double) * GRID_N * GRID_N;
    double *start = malloc(bytes), *got = malloc(bytes), *tmp = malloc(bytes);
    int ok = start && got && tmp;
    for (int r = -3; ok && r < runs; r++) {
        nd_array *u = nd_random_uniform(ND_FLOAT64, ND_SHAPE(GRID_N, GRID_N), 0.0, 1.0);
        ok = nd_sync() == ND_OK && (r != -3 || nd_to_host(u, start, bytes) == ND_OK);
        double t0 = bench_now();
        for (int k = 0; ok && k < total; k++) {
            ok = suite_jacobi_step(u) == ND_OK;
            if (ok && (k + 1) % per_sync == 0)
                ok = nd_sync() == ND_OK;
        }
        ok = ok && nd_sync() == ND_OK;
        double t1 = bench_now();
        if (ok && r == -3) {
            suite_jacobi_ref(start, tmp, GRID_N, GRID_N, total);
            ok = nd_to_host(u, got, bytes) == ND_OK;
            for (int64_t i = 0; ok && i < GRID_N * GRID_N; i++)
                if (!(fabs(got[i] - start[i]) <= 1e-12 * (1 + fabs(start[i])))) {
                    fprintf(stderr, "small stencil, sync every %d: wrong at %lld: %.17g, want %.17g\n", per_sync,
                            (long long)i, got[i], start[i]);
                    ok = 0;
                }
        }
        if (r >= 0)
            tot[r] = (t1 - t0) * 1e6;
        nd_free(u);
    }
    if (!ok)
        fprintf(stderr, "small stencil, sync every %d: %s\n", per_sync, nd_last_error());
    else
        printf("small stencil 1000^2 f64, %d sweeps, nd_sync every %2d: total %7.1f us (%.2f us per sweep; "
               "medians of %d)\n",
               total, per_sync, bench_median(tot, runs), bench_median(tot, runs) / total, runs);
    free(start);
    free(got);
    free(tmp);
    return !ok;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    if (runs < 1 || runs > 256) {
        fprintf(stderr, "usage: bench_sync_breakdown [RUNS 1..256]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "nd_init: %s\n", nd_last_error());
        return 1;
    }
    printf("backend %s\n", nd_backend_name());
    if (chain(runs))
        return 1;
    const int sweeps[] = {1, 5, 10, 25, 50, 100};
    for (size_t i = 0; i < sizeof sweeps / sizeof sweeps[0]; i++)
        if (stencil(runs, sweeps[i]))
            return 1;
    const int every[] = {1, 2, 5, 10};
    for (size_t i = 0; i < sizeof every / sizeof every[0]; i++)
        if (stencil_every(runs, every[i], 50))
            return 1;
    nd_shutdown();
    return 0;
}
