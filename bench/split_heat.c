/*
 * split_heat.c — the heat stencil (5-point Jacobi sweep in place, float32)
 * on one device and split in row blocks over several (ND_DEVICES), with
 * SWEEPS sweeps recorded per nd_sync: the split grid's pieces outlive each
 * flush, so a sync costs its sweeps and their halo copies only (no scatter,
 * no gather; docs/internals.md "Several devices").
 *
 * For each device list: a first sync (split, compile, plan), then SYNCS
 * timed syncs: median and best ms per sync and per sweep, and what the
 * timed syncs moved (arrays scattered and gathered: 0 when pieces persist;
 * halo copies). The grid is then read once (one gather) and sampled
 * points must be bitwise equal for every device list (a wrong halo or a
 * stale piece would differ).
 *
 * A sync's sweeps are not always one flush: early flushes (ND_EARLY_FLUSH,
 * on by default) cut the first sweeps recorded after a sync into flushes
 * of 12, 24, 48... nodes while the grid is at most 64 MiB (N <= 4096);
 * the line says how many flushes the timed syncs ran. ND_LOG=2 prints one
 * line per flush, and "partition: slot ... stays whole" where the pass
 * kept a large array whole (then halo copies are 0).
 *
 * Usage: bench_split_heat [N [SWEEPS [SYNCS [DEVICES...]]]]
 *   defaults: 16384 20 5 cpu:1 cpu:2   (the size: 16384^2 float32,
 *   1 GiB per grid; use N=4096 on a small machine)
 *   on a GPU: ND_BACKEND=cuda bench_split_heat 16384 20 5 0 0,0
 */
#include "bench_util.h"

#include <nd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SYNCS 64
#define SAMPLES 257

static nd_status sweep(nd_array *u) {
    nd_scope_begin();
    nd_array *sum = nd_add(nd_add(nd_add(nd_add(nd_view(u, ":-2, 1:-1"), nd_view(u, "2:, 1:-1")),
                                         nd_view(u, "1:-1, :-2")),
                                  nd_view(u, "1:-1, 2:")),
                           nd_view(u, "1:-1, 1:-1"));
    nd_status st = nd_assign(nd_view(u, "1:-1, 1:-1"), nd_mul(nd_scalar(0.2), sum));
    nd_scope_end();
    return st;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 16384;
    int sweeps = argc > 2 ? atoi(argv[2]) : 20;
    int syncs = argc > 3 ? atoi(argv[3]) : 5;
    const char *def[] = {"cpu:1", "cpu:2"};
    const char **lists = argc > 4 ? (const char **)argv + 4 : def;
    int n_lists = argc > 4 ? argc - 4 : 2;
    if (n < 3 || sweeps < 1 || syncs < 1 || syncs > MAX_SYNCS) {
        fprintf(stderr, "usage: %s [N>=3 [SWEEPS>=1 [SYNCS 1..%d [DEVICES...]]]]\n", argv[0], MAX_SYNCS);
        return 2;
    }
    float *host = malloc((size_t)(n * n) * sizeof *host);
    float ref[SAMPLES];
    double base_ms = 0;
    if (!host) return 1;
    printf("heat stencil %lldx%lld float32, %d sweeps per nd_sync, %d timed syncs\n", (long long)n, (long long)n,
           sweeps, syncs);
    for (int l = 0; l < n_lists; l++) {
        nd_config cfg = ND_CONFIG_INIT;
        cfg.devices = lists[l];
        if (nd_init(&cfg) != ND_OK) {
            fprintf(stderr, "%s: nd_init: %s\n", lists[l], nd_last_error());
            return 1;
        }
        /* The same start for every list: host values, split by the first sync. */
        uint64_t x = 12345;
        for (int64_t i = 0; i < n * n; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            host[i] = (float)(x >> 40) / (float)(1 << 24);
        }
        nd_array *u = nd_from_host(host, ND_FLOAT32, ND_SHAPE(n, n));
        int ok = u != NULL;
        for (int i = 0; i < sweeps && ok; i++) ok = sweep(u) == ND_OK;
        ok = ok && nd_sync() == ND_OK;
        double ms[MAX_SYNCS];
        nd_stats s0, s1;
        nd_get_stats(&s0);
        for (int k = 0; k < syncs && ok; k++) {
            double t0 = bench_now();
            for (int i = 0; i < sweeps && ok; i++) ok = sweep(u) == ND_OK;
            ok = ok && nd_sync() == ND_OK;
            ms[k] = (bench_now() - t0) * 1e3;
        }
        nd_get_stats(&s1);
        ok = ok && nd_to_host(u, host, (size_t)(n * n) * sizeof *host) == ND_OK;
        if (!ok) {
            fprintf(stderr, "%s: %s\n", lists[l], nd_last_error());
            return 1;
        }
        int same = 1;
        for (int k = 0; k < SAMPLES; k++) {
            float v = host[((int64_t)k * 7919 * n + (int64_t)k * 104729) % (n * n)];
            if (l == 0) ref[k] = v;
            else same &= memcmp(&v, &ref[k], sizeof v) == 0;
        }
        double best = ms[0];
        for (int k = 1; k < syncs; k++) best = ms[k] < best ? ms[k] : best;
        double med = bench_median(ms, syncs);
        if (l == 0) base_ms = med;
        printf("%-8s %9.1f ms/sync (best %9.1f) %8.2f ms/sweep  %.2fx of %s  scattered %llu gathered %llu "
               "halo copies %llu  flushes %llu  %s\n",
               lists[l], med, best, med / sweeps, med / base_ms, lists[0],
               (unsigned long long)(s1.arrays_scattered - s0.arrays_scattered),
               (unsigned long long)(s1.arrays_gathered - s0.arrays_gathered),
               (unsigned long long)(s1.halo_copies - s0.halo_copies), (unsigned long long)(s1.flushes - s0.flushes),
               l == 0 ? "(reference)" : same ? "bitwise equal" : "DIFFERS");
        nd_free(u);
        nd_shutdown();
        if (!same) return 1;
    }
    free(host);
    return 0;
}
