/*
 * loop_read.c — a loop that reads its value every few iterations (a
 * convergence check), with and without loop calls.
 *
 *     for (i = 0; i < ITERS; i++) {
 *         nd_scope_begin(); y = nd_keep(x*0.99 + 0.01*sin(x)); nd_scope_end();
 *         nd_free(x); x = y;
 *         if (i % EVERY == EVERY - 1) err = nd_item(nd_sum(x));
 *     }
 *
 * The scope is replayed and its calls join into loop calls (README, "Loops:
 * loop calls"); each read must write the loop's value and go on from it,
 * not keep the loop's recipe and compute every round again at the next
 * read (which made this loop quadratic in its reads). Runs the loop with
 * nd_config.body_loops on and off, alternating, in one process (an
 * nd_init each time, then an untimed run that makes the plans and
 * kernels, then the timed one); prints the median ms of each and checks
 * that both
 * give the same reads (float32 sums of 1000 elements: within 1e-4
 * relative, bit for bit on the CPU).
 *
 * Usage: loop_read [ITERS] [EVERY] [RUNS]   (default 2000 10 11)
 */
#include "bench_util.h"

#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000
#define MAX_RUNS 101

static double run(int iters, int every, double *sum_of_reads)
{
    int64_t n = N;
    float h[N];
    for (int i = 0; i < N; i++) h[i] = (float)(3.0 * sin(0.37 * i));
    nd_array *x = nd_from_host(h, ND_FLOAT32, 1, &n);
    nd_sync();
    double t0 = bench_now(), acc = 0;
    for (int i = 0; i < iters && x; i++) {
        nd_scope_begin();
        nd_array *y = nd_keep(nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x))));
        nd_scope_end();
        nd_free(x);
        x = y;
        if (i % every == every - 1) {
            nd_array *s = nd_sum(x, ND_ALL_AXES);
            acc += nd_item(s);
            nd_free(s);
        }
    }
    double t = bench_now() - t0;
    nd_free(x);
    *sum_of_reads = acc;
    return t;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000, every = argc > 2 ? atoi(argv[2]) : 10;
    int runs = argc > 3 ? atoi(argv[3]) : 11;
    if (iters < 1 || every < 1 || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: loop_read [ITERS] [EVERY] [RUNS <= %d]\n", MAX_RUNS);
        return 2;
    }
    double t[2][MAX_RUNS], reads[2] = {0, 0};
    for (int r = 0; r < runs; r++) {
        for (int on = 0; on < 2; on++) {
            nd_config cfg = ND_CONFIG_INIT;
            cfg.body_loops = on ? 1 : -1;
            if (nd_init(&cfg) != ND_OK) {
                fprintf(stderr, "loop_read: %s\n", nd_last_error());
                return 1;
            }
            double v = 0;
            (void)run(iters, every, &v); /* plans and kernels made: the timed run finds them */
            t[on][r] = run(iters, every, &v);
            reads[on] = v;
            nd_shutdown();
        }
    }
    const double rel = fabs(reads[1] - reads[0]) / (1 + fabs(reads[0]));
    printf("loop_read: %d iterations on %d float32, a read every %d, %d runs (ms)\n", iters, N, every, runs);
    printf("  loop calls off  median %.3f\n", bench_median(t[0], runs) * 1e3);
    printf("  loop calls on   median %.3f\n", bench_median(t[1], runs) * 1e3);
    printf("  sum of the reads %.9g / %.9g (relative difference %.2g)\n", reads[0], reads[1], rel);
    return rel <= 1e-4 ? 0 : 1;
}
