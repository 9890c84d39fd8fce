/*
 * record_cost.c — what recording one elementwise op costs on the host.
 *
 * Two loops of OPS `nd_add(a, b)` on small arrays, every result freed, so
 * no node ever runs:
 *
 * - freed at once: `nd_free(nd_add(a, b))`. The node is the newest pending
 *   one and nothing reads it, so it leaves the graph at that nd_free
 *   (graph.h, nd_graph_drop_dead_tail): the time is recording the op and
 *   freeing it, API lock included. Target: <= 100 ns per op.
 * - left to the flush: results freed a batch later, oldest first, while a
 *   newer node still lives, so no node is the newest pending one when its
 *   last handle goes. Until 2026-11-29 every such node stayed pending
 *   until a flush (ND_MAX_PENDING, the final nd_sync) walked it, hashed
 *   it, found the cached plan and dropped it as dead; now it leaves the
 *   graph at that nd_free too (graph.h, nd_graph_drop_dead: marked gone,
 *   its buffer released at once, the graph compacted at the next flush).
 *   The time is recording plus dropping a node from the middle of the
 *   graph (reported, no target of its own; the live loop body with
 *   kernels is host_overhead's small_ops). The batch's survivor alive at
 *   an ND_MAX_PENDING flush runs: about one 16-element kernel per 10^4
 *   ops.
 *
 * Usage: record_cost [OPS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>

#define TARGET_NS 100.0
#define BATCH 64

/* One timed run of `ops` ops; left_to_flush chooses the second loop. */
static double run_once(nd_array *a, nd_array *b, int64_t ops, int left_to_flush)
{
    nd_array *batch[BATCH], *survivor = NULL;
    double t0 = bench_now();
    if (!left_to_flush) {
        for (int64_t i = 0; i < ops; i++)
            nd_free(nd_add(a, b));
    } else {
        for (int64_t i = 0; i < ops; i += BATCH) {
            for (int k = 0; k < BATCH; k++)
                batch[k] = nd_add(a, b);
            /* Oldest first, the newest kept past the next batch: none of
             * them is the newest node when its last handle goes. */
            for (int k = 0; k < BATCH - 1; k++)
                nd_free(batch[k]);
            nd_free(survivor);
            survivor = batch[BATCH - 1];
        }
        nd_free(survivor);
    }
    nd_sync();
    return bench_now() - t0;
}

typedef struct {
    double median_ns, best_ns;
    uint64_t recorded, dropped, kernels;
} loop_result;

static int measure(nd_array *a, nd_array *b, int64_t ops, int left_to_flush, loop_result *out)
{
    const int runs = 7;
    double times[16];
    /* Warm-up: arenas, free lists and the scheduler reach steady state. */
    run_once(a, b, ops / 10, left_to_flush);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    for (int r = 0; r < runs; r++)
        times[r] = run_once(a, b, ops, left_to_flush);
    nd_get_stats(&s1);
    if (nd_last_status() != ND_OK) {
        fprintf(stderr, "record_cost: %s\n", nd_last_error());
        return -1;
    }
    double best = times[0];
    for (int r = 1; r < runs; r++)
        best = times[r] < best ? times[r] : best;
    out->median_ns = 1e9 * bench_median(times, runs) / (double)ops;
    out->best_ns = 1e9 * best / (double)ops;
    out->recorded = s1.nodes_recorded - s0.nodes_recorded;
    out->dropped = s1.nodes_dropped - s0.nodes_dropped;
    out->kernels = s1.kernels_run - s0.kernels_run;
    return 0;
}

int main(int argc, char **argv)
{
    int64_t ops = argc > 1 ? atoll(argv[1]) : 1000000;
    if (ops < BATCH)
        ops = 1000000;
    ops -= ops % BATCH;

    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(16));
    nd_array *b = nd_full(ND_FLOAT32, ND_SHAPE(16), 2.0);
    if (!a || !b || nd_sync() != ND_OK) {
        fprintf(stderr, "record_cost: setup failed: %s\n", nd_last_error());
        return 1;
    }
    loop_result at_once, flushed;
    if (measure(a, b, ops, 0, &at_once) || measure(a, b, ops, 1, &flushed))
        return 1;

    printf("record_cost: %" PRId64 " x nd_add + nd_free, median of 7 runs, backend %s\n", ops,
           nd_backend_name());
    printf("  freed at once:     %6.1f ns per op (best %6.1f ns); target <= %.0f ns: %s\n",
           at_once.median_ns, at_once.best_ns, TARGET_NS,
           at_once.median_ns <= TARGET_NS ? "met" : "MISSED");
    printf("  left to the flush: %6.1f ns per op (best %6.1f ns)\n", flushed.median_ns,
           flushed.best_ns);
    printf("  nodes recorded %" PRIu64 " + %" PRIu64 ", dropped as dead %" PRIu64 " + %" PRIu64
           ", kernels run %" PRIu64 " + %" PRIu64 "\n",
           at_once.recorded, flushed.recorded, at_once.dropped, flushed.dropped, at_once.kernels,
           flushed.kernels);
    printf("JSON {\"bench\":\"record_cost\",\"ops\":%" PRId64 ",\"runs\":7,"
           "\"median_ns_per_op\":%.2f,\"best_ns_per_op\":%.2f,\"target_ns\":%.0f,"
           "\"flushed_median_ns_per_op\":%.2f,\"flushed_best_ns_per_op\":%.2f,"
           "\"nodes_recorded\":%" PRIu64 ",\"nodes_dropped\":%" PRIu64 ",\"backend\":\"%s\"}\n",
           ops, at_once.median_ns, at_once.best_ns, TARGET_NS, flushed.median_ns, flushed.best_ns,
           at_once.recorded, at_once.dropped, nd_backend_name());

    nd_free(a);
    nd_free(b);
    nd_shutdown();
    return 0;
}
