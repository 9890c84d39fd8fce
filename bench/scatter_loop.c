/*
 * scatter_loop.c — a loop of small flushes that scatter (nd/indexing.h):
 *
 *     per step   h = zeros(B); add_at(h, bins, 1)         a histogram of N labels
 *                put(w, idx, w[idx] * 0.5 + h[idx % B])    a scatter of computed values
 *                s = sum(w)                                read back every step (nd_item)
 *
 * N labels in [0, B), idx N distinct positions of w (length 4 N). Each step
 * is one flush of a few kernels and two scatter routines (the add_at and
 * the put), the shape of a training or simulation loop that updates a
 * table every step. The scatters file a bad index in a fail record read
 * once after the plan (docs/internals.md, "Gathers, scatters and mask
 * selection"), so on CUDA the plan is captured as a graph from its second
 * run and replayed: the time per step is one graph launch and one read
 * back, not one stream synchronisation per scatter. Prints the median time
 * per step over STEPS steps after a warm-up, and from nd_stats the kernels
 * and routines run per step and the flushes that read back (0 expected). The answer
 * of the last step is checked against the host.
 *
 * Usage: bench_scatter_loop [N [B [STEPS]]]   (defaults 4096, 64, 200; ND_BACKEND picks)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

int main(int argc, char **argv)
{
    int64_t N = argc > 1 ? atoll(argv[1]) : 4096, B = argc > 2 ? atoll(argv[2]) : 64;
    int steps = argc > 3 ? atoi(argv[3]) : 200;
    if (N < 1 || B < 1 || steps < 3) {
        fprintf(stderr, "usage: bench_scatter_loop [N [B [STEPS]]]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "scatter_loop: nd_init: %s\n", nd_last_error());
        return 1;
    }
    int64_t *bins = malloc(sizeof *bins * (size_t)N), *idx = malloc(sizeof *idx * (size_t)N);
    int64_t *mod = malloc(sizeof *mod * (size_t)N);
    double *w0 = malloc(sizeof *w0 * (size_t)(4 * N)), *hw = malloc(sizeof *hw * (size_t)(4 * N));
    double *t = malloc(sizeof *t * (size_t)steps), *hh = calloc((size_t)B, sizeof *hh);
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < N; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        bins[i] = (int64_t)((r >> 33) % (uint64_t)B);
        idx[i] = 4 * i + (int64_t)((r >> 20) % 4); /* distinct */
        mod[i] = idx[i] % B;
    }
    for (int64_t i = 0; i < 4 * N; i++) w0[i] = hw[i] = (double)(i % 7) - 3;
    for (int64_t i = 0; i < N; i++) hh[bins[i]] += 1;
    nd_array *nb = nd_from_host(bins, ND_INT64, ND_SHAPE(N)), *ni = nd_from_host(idx, ND_INT64, ND_SHAPE(N));
    nd_array *nm = nd_from_host(mod, ND_INT64, ND_SHAPE(N)), *w = nd_from_host(w0, ND_FLOAT64, ND_SHAPE(4 * N));
    if (!nb || !ni || !nm || !w || nd_sync() != ND_OK) {
        fprintf(stderr, "scatter_loop: setup: %s\n", nd_last_error());
        return 1;
    }
    nd_stats s0, s1;
    double sum = 0;
    for (int k = -1; k < steps; k++) {
        if (k == 0) nd_get_stats(&s0);
        double t0 = bench_now();
        nd_scope_begin();
        nd_array *h = nd_zeros(ND_FLOAT64, ND_SHAPE(B));
        nd_status st = nd_add_at(h, nb, nd_scalar(1.0));
        nd_array *v = nd_add(nd_mul(nd_take(w, ni, 0), nd_scalar(0.5)), nd_take(h, nm, 0));
        if (st == ND_OK) st = nd_put(w, ni, v);
        sum = nd_item(nd_sum(w, ND_ALL_AXES));
        nd_scope_end();
        if (st != ND_OK || sum != sum) {
            fprintf(stderr, "scatter_loop: step %d: %s\n", k, nd_last_error());
            return 1;
        }
        if (k >= 0) t[k] = bench_now() - t0;
        for (int64_t i = 0; i < N; i++) hw[idx[i]] = hw[idx[i]] * 0.5 + hh[mod[i]];
    }
    nd_get_stats(&s1);
    double want = 0;
    for (int64_t i = 0; i < 4 * N; i++) want += hw[i];
    int ok = fabs(sum - want) <= 1e-9 * (fabs(want) + 1);
    printf("scatter_loop N=%" PRId64 " B=%" PRId64 " steps=%d: median %.1f us/step, kernels and routines %.2f/step, "
           "flushes that read back %" PRIu64 ", answer %s\n",
           N, B, steps, bench_median(t, steps) * 1e6, (double)(s1.kernels_run + s1.library_calls - s0.kernels_run - s0.library_calls) / steps,
           s1.plans_read_back - s0.plans_read_back, ok ? "ok" : "WRONG");
    nd_free(nb);
    nd_free(ni);
    nd_free(nm);
    nd_free(w);
    nd_shutdown();
    free(bins);
    free(idx);
    free(mod);
    free(w0);
    free(hw);
    free(t);
    free(hh);
    return ok ? 0 : 1;
}
