/*
 * row_loop.c — a loop over a matrix's rows, one flush a row: what the first
 * pass over the rows costs (its compiles included) against a second pass.
 *
 * For each row i of a ROWS x 3001 float32 matrix: y = x[i] * 2 + x[i] and
 * one element of y read back (a flush a row). Every row's kernel is the
 * same code at another address, so the first pass compiles one kernel and
 * the rest reuse it (src/scheduler/kernel_rebase.h); before that pass the
 * offset of x[i] was part of each kernel, and every row compiled its own
 * (NVRTC on CUDA, the C compiler with ND_CPU_JIT=sync ND_CPU_JIT_MIN=1 on
 * the CPU). The rows share one plan too (where views start is not in the
 * plan's key: src/scheduler/flush_walk.h), so a pass misses the plan cache
 * once at most: the plan misses are printed too. Run with an empty
 * ND_CACHE_DIR for the compile count to mean anything.
 *
 * Usage: row_loop [ROWS]          (default 64)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <stdlib.h>

static double pass(nd_array *x, int rows, nd_stats *delta) {
    nd_stats s0, s1;
    nd_get_stats(&s0);
    double t0 = bench_now(), acc = 0;
    for (int i = 0; i < rows; i++) {
        /* a scope frees the row's handles (the view, x[i] * 2, y) */
        nd_scope_begin();
        nd_array *r = nd_viewf(x, "%d", i);
        nd_array *y = nd_add(nd_mul(r, nd_scalar(2.0)), r);
        acc += nd_item(nd_viewf(y, "%d", i % 3001));
        nd_scope_end();
    }
    double t = bench_now() - t0;
    nd_get_stats(&s1);
    delta->kernels_compiled = s1.kernels_compiled - s0.kernels_compiled;
    delta->plan_cache_misses = s1.plan_cache_misses - s0.plan_cache_misses;
    if (acc != acc) fprintf(stderr, "row_loop: NaN sum\n");
    return t;
}

int main(int argc, char **argv) {
    int rows = argc > 1 ? atoi(argv[1]) : 64;
    if (rows < 1) rows = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "row_loop: nd_init: %s\n", nd_last_error());
        return 1;
    }
    nd_array *x = nd_random_uniform(ND_FLOAT32, 2, (int64_t[]){rows, 3001}, 0, 1);
    nd_sync();
    for (int p = 0; p < 2; p++) {
        nd_stats d;
        double t = pass(x, rows, &d);
        printf("row_loop pass %d: %d rows, %.3f ms a row, %" PRIu64 " kernels compiled, %" PRIu64 " plan misses\n",
               p + 1, rows, t / rows * 1e3, d.kernels_compiled, d.plan_cache_misses);
    }
    nd_free(x);
    nd_shutdown();
    return 0;
}
