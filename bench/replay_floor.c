/*
 * replay_floor.c — how fast the plain small_ops loop could get if nd
 * recognised its scope as a body it had seen before and replayed it (an
 * idea for #22's 0.3 ms target, not something nd does).
 *
 * Such a replay would still hand the caller a handle for every op and
 * nd_scalar of the loop body (the API returns one), tracked by the scope
 * and released at its end, and would record the iteration as one body
 * call. This program times that floor directly: each iteration opens a
 * scope, makes six handles (weak scalars, as cheap as nd makes a handle:
 * from the free list, tracked, no node), records one nd_body_call of the
 * step and closes the scope. Beside it, in the same process and
 * interleaved: the plain loop (suite_small_ops_record) and the body loop
 * (suite_small_ops_body_record). Each run is 1000 iterations on 1000
 * float32 and ends with a read of the sum, so the device work is included.
 * The floor's answer is the body loop's (checked).
 *
 * Usage: replay_floor [RUNS]   (default 31; median and minimum, ms)
 */
#include "bench_util.h"
#include "suite_patterns.h"

#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 1000
#define N 1000
#define MAX_RUNS 1000

/* The floor: the handles a replayed iteration would still hand out, and
 * its one body call. */
static nd_array *floor_record(nd_body *b, nd_array *x0)
{
    nd_array *x = nd_retain(x0);
    for (int it = 0; it < ITERS && x; it++) {
        nd_scope_begin();
        for (int h = 0; h < 6; h++)
            (void)nd_scalar(h);
        nd_array *y = nd_keep(nd_body_call(b, &x));
        nd_scope_end();
        nd_free(x);
        x = y;
    }
    return x;
}

static double read_sum(nd_array *x)
{
    nd_array *s = nd_sum(x, ND_ALL_AXES);
    double v = nd_item(s);
    nd_free(s);
    nd_free(x);
    return v;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 31;
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: replay_floor [RUNS 1..%d]\n", MAX_RUNS);
        return 2;
    }
    if (nd_init(NULL) != ND_OK)
        return 1;
    nd_array *x0 = nd_random_uniform(ND_FLOAT32, 1, (int64_t[]){N}, -1.0, 1.0);
    nd_body *b = x0 ? suite_small_ops_step_body(x0) : NULL;
    static double t[3][MAX_RUNS];
    const char *names[3] = {"plain loop", "body loop", "replay floor"};
    int rc = !b;
    for (int r = -3; r < runs && !rc; r++) {
        double sums[3];
        for (int k = 0; k < 3; k++) {
            double t0 = bench_now();
            nd_array *x = k == 0 ? suite_small_ops_record(x0, ITERS)
                        : k == 1 ? suite_small_ops_body_record(x0, ITERS)
                                 : floor_record(b, x0);
            sums[k] = x ? read_sum(x) : NAN;
            double dt = bench_now() - t0;
            if (r >= 0)
                t[k][r] = dt;
        }
        /* The floor computes what the body loop does, bit for bit; the
         * plain loop the same up to fusion's rounding. */
        if (!(sums[2] == sums[1]) || !(fabs(sums[0] - sums[1]) <= 1e-3 * (1 + fabs(sums[1])))) {
            fprintf(stderr, "replay_floor: sums differ: plain %.9g body %.9g floor %.9g (%s)\n", sums[0],
                    sums[1], sums[2], nd_last_error());
            rc = 1;
        }
    }
    if (!rc) {
        printf("replay_floor: %d iterations on %d float32, %d runs, backend %s (ms)\n", ITERS, N, runs,
               getenv("ND_BACKEND") ? getenv("ND_BACKEND") : "default");
        for (int k = 0; k < 3; k++) {
            double med = bench_median(t[k], runs); /* sorts t[k] */
            printf("  %-14s median %.3f  min %.3f\n", names[k], med * 1e3, t[k][0] * 1e3);
            printf("JSON {\"bench\":\"replay_floor\",\"loop\":\"%s\",\"runs\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f}\n",
                   names[k], runs, med * 1e3, t[k][0] * 1e3);
        }
    }
    if (b)
        nd_body_free(b);
    nd_free(x0);
    nd_shutdown();
    return rc;
}
