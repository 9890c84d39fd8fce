/*
 * host_overhead.c — what recording and flushing cost on the host, for the
 * two GPU workloads whose time is mostly host time.
 *
 * - small_ops: 1000 iterations of `x = x*0.99 + 0.01*sin(x)` (4 nodes each)
 *   recorded, then one nd_sync: the suite's own recording (suite_patterns.c).
 * - small_ops_body: the same loop through a traced body (include/nd/body.h),
 *   one node per iteration (suite_small_ops_body_record).
 * - small_stencil: 50 in-place Jacobi sweeps (5 views, 4 adds, a mul and an
 *   assign each) recorded, then one nd_sync: suite_jacobi_step, as the suite.
 *
 * Arrays are tiny (8 floats, a 6x6 grid) so the compute is negligible and
 * what is timed is the host path: recording the ops, then in nd_sync the
 * walk, the plan-cache lookup (every timed flush must hit: checked) and the
 * executor binding and launching the cached plan. Reports the median over
 * RUNS runs of the record time and of the nd_sync time, and both per
 * recorded node; then the flushes and kernels of one small_ops run.
 *
 * Usage: host_overhead [RUNS]   (default 31; run with ND_BACKEND=cpu, and
 * ND_EXECUTOR_THREAD=0 to keep flushes on the caller's thread)
 */
#include "bench_util.h"
#include "suite_patterns.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

#define OPS_ITERS 1000
#define STENCIL_ITERS 50

typedef struct {
    const char *name;
    double record[256], sync[256];
    uint64_t nodes; /* per run */
} pattern_times;

static uint64_t recorded_nodes(void)
{
    nd_stats s;
    nd_get_stats(&s);
    return s.nodes_recorded;
}

/* One timed run of a pattern: record (timed), nd_sync (timed). */
enum { P_OPS, P_STENCIL, P_OPS_BODY, N_PATTERNS };

static int run_once(int pattern, nd_array *x0, nd_array *u, double *t_rec, double *t_sync,
                    uint64_t *nodes)
{
    uint64_t n0 = recorded_nodes();
    nd_array *x = NULL;
    double t0 = bench_now();
    if (pattern == P_STENCIL)
        for (int it = 0; it < STENCIL_ITERS; it++)
            suite_jacobi_step(u);
    else if (pattern == P_OPS_BODY)
        x = suite_small_ops_body_record(x0, OPS_ITERS);
    else
        x = suite_small_ops_record(x0, OPS_ITERS);
    double t1 = bench_now();
    nd_status st = nd_sync();
    double t2 = bench_now();
    nd_free(x);
    *t_rec = t1 - t0;
    *t_sync = t2 - t1;
    *nodes = recorded_nodes() - n0;
    return st == ND_OK ? 0 : -1;
}

/* small_ops' answer: the same recurrence on the host, in float32. */
static int check_small_ops(nd_array *x0, int body)
{
    float in[8], got[8];
    nd_array *x = body ? suite_small_ops_body_record(x0, OPS_ITERS) : suite_small_ops_record(x0, OPS_ITERS);
    if (nd_to_host(x0, in, sizeof in) != ND_OK || nd_to_host(x, got, sizeof got) != ND_OK) {
        nd_free(x);
        return -1;
    }
    nd_free(x);
    for (int i = 0; i < 8; i++) {
        float v = in[i];
        for (int it = 0; it < OPS_ITERS; it++)
            v = v * 0.99f + 0.01f * sinf(v);
        if (fabsf(v - got[i]) > 1e-4f * (1.0f + fabsf(v)))
            return -1;
    }
    return 0;
}

static void report(const pattern_times *p, int runs)
{
    double rec[256], syn[256];
    memcpy(rec, p->record, sizeof(double) * (size_t)runs);
    memcpy(syn, p->sync, sizeof(double) * (size_t)runs);
    double r = bench_median(rec, runs), s = bench_median(syn, runs);
    double per = 1e9 / (double)p->nodes;
    /* The best run too: on a shared machine it moves less than the median. */
    printf("  %-14s %5" PRIu64 " nodes: record %8.1f us (%6.1f ns/node, best %7.1f us)  "
           "nd_sync %8.1f us (%6.1f ns/node, best %7.1f us)\n",
           p->name, p->nodes, 1e6 * r, per * r, 1e6 * rec[0], 1e6 * s, per * s, 1e6 * syn[0]);
    printf("JSON {\"bench\":\"host_overhead\",\"pattern\":\"%s\",\"runs\":%d,\"nodes\":%" PRIu64
           ",\"record_us\":%.2f,\"sync_us\":%.2f,\"record_ns_per_node\":%.2f,"
           "\"sync_ns_per_node\":%.2f,\"best_record_us\":%.2f,\"best_sync_us\":%.2f,"
           "\"backend\":\"%s\"}\n",
           p->name, runs, p->nodes, 1e6 * r, 1e6 * s, per * r, per * s, 1e6 * rec[0], 1e6 * syn[0],
           nd_backend_name());
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 31;
    if (runs < 1 || runs > 256)
        runs = 31;
    nd_random_seed(1);
    nd_array *x0 = nd_random_uniform(ND_FLOAT32, ND_SHAPE(8), 0.0, 1.0);
    nd_array *u = nd_random_uniform(ND_FLOAT64, ND_SHAPE(6, 6), 0.0, 1.0);
    if (!x0 || !u || nd_sync() != ND_OK || check_small_ops(x0, 0) != 0 ||
        check_small_ops(x0, 1) != 0) {
        fprintf(stderr, "host_overhead: setup or check failed: %s\n", nd_last_error());
        return 1;
    }
    pattern_times pt[N_PATTERNS] = {{.name = "small_ops"}, {.name = "small_stencil"}, {.name = "small_ops_body"}};
    double dummy_r, dummy_s;
    uint64_t dummy_n;
    /* Warm-up: plans cached, arenas and pools at their steady size. */
    for (int w = 0; w < 3; w++)
        for (int k = 0; k < N_PATTERNS; k++)
            run_once(k, x0, u, &dummy_r, &dummy_s, &dummy_n);

    nd_stats s0, s1;
    nd_get_stats(&s0);
    /* Interleaved, so a noisy spell on the machine hits both patterns. */
    for (int r = 0; r < runs; r++)
        for (int k = 0; k < N_PATTERNS; k++)
            if (run_once(k, x0, u, &pt[k].record[r], &pt[k].sync[r], &pt[k].nodes) != 0) {
                fprintf(stderr, "host_overhead: %s failed: %s\n", pt[k].name, nd_last_error());
                return 1;
            }
    nd_get_stats(&s1);
    if (s1.plan_cache_misses != s0.plan_cache_misses) {
        fprintf(stderr, "host_overhead: %" PRIu64 " timed flushes missed the plan cache\n",
                s1.plan_cache_misses - s0.plan_cache_misses);
        return 1;
    }
    const char *thread = getenv("ND_EXECUTOR_THREAD");
    printf("host_overhead: median of %d runs, backend %s, executor thread %s\n", runs,
           nd_backend_name(), thread && !strcmp(thread, "0") ? "off" : "on");
    for (int k = 0; k < N_PATTERNS; k++)
        report(&pt[k], runs);
    /* What one small_ops run launches: each kernel is a launch (a graph
     * node on CUDA) the device runs in turn, so a body split into many
     * kernels bounds the time too. */
    for (int k = P_OPS; k < N_PATTERNS; k += P_OPS_BODY - P_OPS) {
        nd_get_stats(&s0);
        if (run_once(k, x0, u, &dummy_r, &dummy_s, &dummy_n) == 0) {
            nd_get_stats(&s1);
            printf("  %s per run: %" PRIu64 " flushes, %" PRIu64 " kernels run, %" PRIu64
                   " compiled\n", pt[k].name, s1.flushes - s0.flushes, s1.kernels_run - s0.kernels_run,
                   s1.kernels_compiled - s0.kernels_compiled);
        }
    }
    nd_free(x0);
    nd_free(u);
    nd_shutdown();
    return 0;
}
