/*
 * plan_miss.c — the host cost of planning a flush whose plan is not cached.
 *
 * A recorded loop of K iterations, synced once, on 8-element float32
 * arrays (so the time is the library's own): each flush records a K not
 * seen before, so its plan misses the cache and runs every scheduler pass
 * (checked through nd_get_stats). Two bodies:
 *   chain:  x = sin(x) * 1.01 + w          (a chain: every value read once)
 *   shared: x = x*0.99 + 0.01*sin(x)       (small_ops: x read twice)
 * Reported: nd_sync's wall time per node, the same loop's nd_sync on a
 * cached plan beside it (its K repeated), and their difference, the
 * planning a miss adds. Executor thread off and no early flush: one flush
 * of every node, planned and run in nd_sync.
 *
 * Usage: plan_miss [K] [ROUNDS]   (defaults 1000 and 9; K iterations are
 * 3K nodes for chain and 4K for shared)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static nd_array *step(int shared, nd_array *x, nd_array *w)
{
    if (shared) return nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x)));
    return nd_add(nd_mul(nd_sin(x), nd_scalar(1.01)), w);
}

/* Records k iterations from x (taken) and syncs: the sync's seconds, and
 * whether its one flush hit the plan cache (-1: it failed). */
static double run_loop(int shared, nd_array **x, nd_array *w, int k, int *hit)
{
    for (int i = 0; i < k; i++) {
        nd_scope_begin();
        nd_array *y = nd_keep(step(shared, *x, w));
        nd_scope_end();
        nd_free(*x);
        *x = y;
    }
    nd_stats s0, s1;
    nd_get_stats(&s0);
    double t0 = bench_now();
    nd_status st = nd_sync();
    double t = bench_now() - t0;
    nd_get_stats(&s1);
    *hit = st != ND_OK || !*x ? -1 : (s1.plan_cache_hits > s0.plan_cache_hits && s1.flushes == s0.flushes + 1);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (k < 1 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "usage: plan_miss [K >= 1] [1 <= ROUNDS <= 99]\n");
        return 2;
    }
    setenv("ND_EXECUTOR_THREAD", "0", 0);
    setenv("ND_EARLY_FLUSH", "0", 0);
    nd_array *w = nd_full(ND_FLOAT32, ND_SHAPE(8), 0.25);
    if (!w || nd_sync() != ND_OK) {
        fprintf(stderr, "plan_miss: setup failed: %s\n", nd_last_error());
        return 1;
    }
    int ok = 1;
    for (int shared = 0; shared < 2; shared++) {
        const char *name = shared ? "shared" : "chain";
        const int nodes_per = shared ? 4 : 3;
        double miss[99], hit[99];
        nd_array *x = nd_full(ND_FLOAT32, ND_SHAPE(8), 0.5);
        int h;
        run_loop(shared, &x, w, k, &h); /* compiles the kernels of k */
        for (int r = 0; r < rounds; r++) {
            /* k + r + 1 iterations: a loop length not planned before */
            miss[r] = run_loop(shared, &x, w, k + r + 1, &h);
            if (h != 0) {
                fprintf(stderr, "plan_miss: %s round %d: %s\n", name, r,
                        h < 0 ? nd_last_error() : "the flush hit the plan cache");
                ok = 0;
            }
            hit[r] = run_loop(shared, &x, w, k + r + 1, &h);
            if (h != 1) {
                fprintf(stderr, "plan_miss: %s round %d: %s\n", name, r,
                        h < 0 ? nd_last_error() : "the repeated loop missed the plan cache");
                ok = 0;
            }
        }
        qsort(miss, (size_t)rounds, sizeof *miss, cmp_double);
        qsort(hit, (size_t)rounds, sizeof *hit, cmp_double);
        const double nodes = (double)nodes_per * (k + rounds / 2 + 1);
        const double m = miss[rounds / 2], c = hit[rounds / 2];
        printf("plan_miss %-6s %6.0f nodes: nd_sync %8.1f us missed, %7.1f us cached: %.2f us a node to plan\n",
               name, nodes, 1e6 * m, 1e6 * c, 1e6 * (m - c) / nodes);
        printf("JSON {\"bench\":\"plan_miss\",\"body\":\"%s\",\"nodes\":%.0f,\"miss_us\":%.1f,\"hit_us\":%.1f,"
               "\"plan_us_per_node\":%.3f,\"backend\":\"%s\"}\n",
               name, nodes, 1e6 * m, 1e6 * c, 1e6 * (m - c) / nodes, nd_backend_name());
        nd_free(x);
    }
    nd_free(w);
    nd_shutdown();
    return ok ? 0 : 1;
}
