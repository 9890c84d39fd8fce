/*
 * record_cost.c — what recording one elementwise op costs on the host.
 *
 * Records 10^6 `nd_add(a, b)` on small arrays and frees each result at once,
 * so every node is dead: the automatic flushes that ND_MAX_PENDING triggers
 * find nothing to run and drop them. The time covers recording, freeing and
 * those flushes (and the final sync): the steady-state price of an op a
 * program records but never needs. Target: <= 500 ns per op.
 *
 * Usage: record_cost [OPS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>

int main(int argc, char **argv)
{
    int64_t ops = argc > 1 ? atoll(argv[1]) : 1000000;
    if (ops < 1)
        ops = 1000000;
    const int runs = 7;

    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(16));
    nd_array *b = nd_full(ND_FLOAT32, ND_SHAPE(16), 2.0);
    if (!a || !b || nd_sync() != ND_OK) {
        fprintf(stderr, "record_cost: setup failed: %s\n", nd_last_error());
        return 1;
    }

    /* Warm-up: arenas, free lists and the scheduler reach steady state. */
    for (int64_t i = 0; i < ops / 10; i++)
        nd_free(nd_add(a, b));
    nd_sync();

    nd_stats s0, s1;
    nd_get_stats(&s0);
    double times[16];
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        for (int64_t i = 0; i < ops; i++)
            nd_free(nd_add(a, b));
        nd_sync();
        times[r] = bench_now() - t0;
    }
    nd_get_stats(&s1);
    if (nd_last_status() != ND_OK) {
        fprintf(stderr, "record_cost: %s\n", nd_last_error());
        return 1;
    }
    double best = times[0];
    for (int r = 1; r < runs; r++)
        best = times[r] < best ? times[r] : best;
    double med = bench_median(times, runs);
    double ns = 1e9 * med / (double)ops;
    uint64_t recorded = s1.nodes_recorded - s0.nodes_recorded;
    uint64_t dropped = s1.nodes_dropped - s0.nodes_dropped;

    printf("record_cost: %" PRId64 " x nd_add + nd_free, median of %d runs, backend %s\n", ops,
           runs, nd_backend_name());
    printf("  %.1f ns per op (best %.1f ns); target <= 500 ns: %s\n", ns,
           1e9 * best / (double)ops, ns <= 500.0 ? "met" : "MISSED");
    printf("  nodes recorded %" PRIu64 ", dropped as dead %" PRIu64 ", kernels run %" PRIu64 "\n",
           recorded, dropped, s1.kernels_run - s0.kernels_run);
    printf("JSON {\"bench\":\"record_cost\",\"ops\":%" PRId64 ",\"runs\":%d,"
           "\"median_ns_per_op\":%.2f,\"best_ns_per_op\":%.2f,\"target_ns\":500,"
           "\"nodes_recorded\":%" PRIu64 ",\"nodes_dropped\":%" PRIu64 ",\"backend\":\"%s\"}\n",
           ops, runs, ns, 1e9 * best / (double)ops, recorded, dropped, nd_backend_name());

    nd_free(a);
    nd_free(b);
    nd_shutdown();
    return 0;
}
