/*
 * plan_cache.c — the host cost of a flush whose plan is cached.
 *
 * A loop body of 10 nodes (nine elementwise ops on 64-element float32
 * arrays and a store into a persistent output) is recorded and synced
 * 10^5 times after a warm-up. The structure repeats, so every flush after the
 * first must hit the plan cache (checked through nd_get_stats) and skip every
 * scheduler pass; a scalar that changes each iteration shows that parameter
 * values do not enter the key. The arrays are tiny, so the time is the
 * library's own overhead: host microseconds per flush. Target: <= 5 us.
 *
 * Usage: plan_cache [FLUSHES]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>

/* Records the 10-node body: nine ops and the store into out. */
static nd_status record_body(nd_array *out, nd_array *a, nd_array *b, double scale)
{
    nd_scope_begin();
    nd_array *t1 = nd_add(a, b);
    nd_array *t = nd_mul(t1, a);
    t = nd_sub(t, b);
    t = nd_sin(t);
    t = nd_mul(t, nd_scalar(scale));
    t = nd_cos(t);
    t = nd_add(t, t1);
    t = nd_abs(t);
    t = nd_sqrt(t);
    nd_status st = nd_assign(out, t);
    nd_scope_end();
    return st;
}

int main(int argc, char **argv)
{
    int64_t flushes = argc > 1 ? atoll(argv[1]) : 100000;
    if (flushes < 1)
        flushes = 100000;

    nd_random_seed(11);
    nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(64), 0.5, 1.5);
    nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(64), 0.5, 1.5);
    nd_array *out = nd_zeros(ND_FLOAT32, ND_SHAPE(64));
    if (!a || !b || !out || nd_sync() != ND_OK) {
        fprintf(stderr, "plan_cache: setup failed: %s\n", nd_last_error());
        return 1;
    }

    for (int i = 0; i < 1000; i++) {
        record_body(out, a, b, 1.0 + 1e-6 * i);
        nd_sync();
    }

    nd_stats s0, s1;
    nd_get_stats(&s0);
    double sync_total = 0.0;
    double t0 = bench_now();
    for (int64_t i = 0; i < flushes; i++) {
        record_body(out, a, b, 1.0 + 1e-9 * (double)i);
        double ts = bench_now();
        nd_sync();
        sync_total += bench_now() - ts;
    }
    double total = bench_now() - t0;
    nd_get_stats(&s1);
    if (nd_last_status() != ND_OK) {
        fprintf(stderr, "plan_cache: %s\n", nd_last_error());
        return 1;
    }

    uint64_t hits = s1.plan_cache_hits - s0.plan_cache_hits;
    uint64_t misses = s1.plan_cache_misses - s0.plan_cache_misses;
    uint64_t ran = s1.flushes - s0.flushes;
    double us_flush = 1e6 * sync_total / (double)flushes;
    double us_iter = 1e6 * total / (double)flushes;
    printf("plan_cache: %" PRId64 " flushes of a 10-node body on 64 elements, backend %s\n",
           flushes, nd_backend_name());
    printf("  %.2f us per flush (nd_sync alone); %.2f us per iteration (record + flush)\n",
           us_flush, us_iter);
    printf("  target <= 5 us per flush: %s\n", us_flush <= 5.0 ? "met" : "MISSED");
    printf("  flushes %" PRIu64 ", plan cache hits %" PRIu64 ", misses %" PRIu64 "\n", ran, hits,
           misses);
    int cached = ran == (uint64_t)flushes && hits == ran && misses == 0;
    if (!cached)
        printf("  ERROR: every timed flush should run and hit the plan cache\n");
    printf("JSON {\"bench\":\"plan_cache\",\"flushes\":%" PRId64 ",\"us_per_flush\":%.3f,"
           "\"us_per_iteration\":%.3f,\"target_us\":5,\"cache_hits\":%" PRIu64
           ",\"cache_misses\":%" PRIu64 ",\"all_hits\":%s,\"backend\":\"%s\"}\n",
           flushes, us_flush, us_iter, hits, misses, cached ? "true" : "false",
           nd_backend_name());

    nd_free(a);
    nd_free(b);
    nd_free(out);
    nd_shutdown();
    return cached ? 0 : 1;
}
