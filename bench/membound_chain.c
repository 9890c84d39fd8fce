/*
 * membound_chain.c — a memory-bound elementwise chain against the copy floor,
 * and what fusion buys.
 *
 *     y = a*b + c*d - 0.5*a          (float32, n = 2^24 by default)
 *
 * Fused, one pass reads a, b, c, d and writes y: 4 reads + 1 write of 64 MiB.
 * The floor is the time those 320 MiB take at the machine's copy bandwidth,
 * measured in the same run as (read + write) bytes / time of a memcpy (best
 * of 1 thread and all threads). We report time / floor (1.0 = as fast as
 * memory allows). Unfused (ND_FUSION=0: the runtime is restarted with
 * nd_config.fusion = -1), every intermediate goes through memory; we report
 * unfused / fused (target >= 2.5x).
 *
 * Each timed run uses fresh random inputs made (and synced) outside the timed
 * part; the time covers recording, running and waiting for y. Two variants:
 * "new" makes y as a new array (y = expr), "into" stores into a preallocated
 * array (nd_assign(y, expr), NumPy's out=). Median of RUNS (>= 7) after a
 * warm-up run whose answer is checked against a float64 host computation.
 *
 * Usage: membound_chain [N] [RUNS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

typedef enum { MODE_NEW, MODE_INTO } mode_t_;

static nd_array *chain(nd_array *a, nd_array *b, nd_array *c, nd_array *d)
{
    nd_scope_begin();
    nd_array *y = nd_sub(nd_add(nd_mul(a, b), nd_mul(c, d)), nd_mul(nd_scalar(0.5), a));
    nd_keep(y);
    nd_scope_end();
    return y;
}

/* Compares y with the float64 formula on the host. */
static int check(nd_array *in[4], nd_array *y, int64_t n)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *h[5];
    int ok = 1;
    for (int i = 0; i < 5; i++) {
        h[i] = malloc(bytes);
        ok = ok && h[i] && nd_to_host(i < 4 ? in[i] : y, h[i], bytes) == ND_OK;
    }
    double worst = 0.0;
    for (int64_t i = 0; ok && i < n; i++) {
        double a = h[0][i], b = h[1][i], c = h[2][i], d = h[3][i];
        double ref = a * b + c * d - 0.5 * a;
        double scale = fabs(a * b) + fabs(c * d) + fabs(0.5 * a);
        double err = fabs((double)h[4][i] - ref) / (1e-30 + scale);
        worst = err > worst ? err : worst;
    }
    for (int i = 0; i < 5; i++)
        free(h[i]);
    if (!ok || worst > 1e-6) {
        fprintf(stderr, "membound_chain: wrong answer (worst relative error %.3e): %s\n", worst,
                nd_last_error());
        return 0;
    }
    return 1;
}

/* Median seconds of `runs` timed evaluations (after one checked warm-up). */
static double time_chain(int64_t n, int runs, mode_t_ mode, int *ok)
{
    double times[64];
    nd_array *out = mode == MODE_INTO ? nd_empty(ND_FLOAT32, ND_SHAPE(n)) : NULL;
    *ok = 1;
    for (int r = -1; r < runs; r++) {
        nd_array *in[4];
        for (int i = 0; i < 4; i++)
            in[i] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
        if (nd_sync() != ND_OK) {
            *ok = 0;
            break;
        }
        double t0 = bench_now();
        nd_array *y;
        if (mode == MODE_INTO) {
            nd_scope_begin();
            nd_assign(out, nd_sub(nd_add(nd_mul(in[0], in[1]), nd_mul(in[2], in[3])),
                                  nd_mul(nd_scalar(0.5), in[0])));
            nd_scope_end();
            y = nd_retain(out);
        } else {
            y = chain(in[0], in[1], in[2], in[3]);
        }
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (st != ND_OK || !y || (r < 0 && !check(in, y, n)))
            *ok = 0;
        if (r >= 0)
            times[r] = t;
        nd_free(y);
        for (int i = 0; i < 4; i++)
            nd_free(in[i]);
        if (!*ok)
            break;
    }
    nd_free(out);
    return *ok ? bench_median(times, runs) : NAN;
}

static int restart(int fusion)
{
    nd_shutdown();
    nd_config cfg = {0};
    cfg.fusion = fusion;
    if (nd_init(&cfg) != ND_OK) {
        fprintf(stderr, "membound_chain: nd_init failed: %s\n", nd_last_error());
        return 0;
    }
    nd_random_seed(12345);
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 24);
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    if (n < 1)
        n = (int64_t)1 << 24;
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;

    size_t bytes = (size_t)n * sizeof(float);
    int copy_threads = 1;
    double bw = bench_copy_bandwidth(bytes, runs, &copy_threads);
    double floor_s = 5.0 * (double)bytes / bw;

    int ok_new, ok_into, ok_unfused, ok_unfused_into;
    if (!restart(1))
        return 1;
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    double fused = time_chain(n, runs, MODE_NEW, &ok_new);
    double fused_into = time_chain(n, runs, MODE_INTO, &ok_into);
    if (!restart(-1))
        return 1;
    double unfused = time_chain(n, runs, MODE_NEW, &ok_unfused);
    double unfused_into = time_chain(n, runs, MODE_INTO, &ok_unfused_into);
    nd_shutdown();
    int ok = ok_new && ok_into && ok_unfused && ok_unfused_into;

    printf("membound_chain: y = a*b + c*d - 0.5*a, %" PRId64 " float32, median of %d, backend %s\n",
           n, runs, backend);
    printf("  copy bandwidth %.2f GB/s (read+write, %d thread%s) -> floor %.3f ms (5 x %.0f MiB)\n",
           1e-9 * bw, copy_threads, copy_threads == 1 ? "" : "s", 1e3 * floor_s,
           (double)bytes / 1048576.0);
    printf("  fused   new  %8.3f ms  (%.2f x floor)\n", 1e3 * fused, fused / floor_s);
    printf("  fused   into %8.3f ms  (%.2f x floor)\n", 1e3 * fused_into, fused_into / floor_s);
    printf("  unfused new  %8.3f ms  (%.2f x floor)\n", 1e3 * unfused, unfused / floor_s);
    printf("  unfused into %8.3f ms  (%.2f x floor)\n", 1e3 * unfused_into, unfused_into / floor_s);
    printf("  fusion speed-up %.2fx (into: %.2fx); target >= 2.5x: %s\n", unfused / fused,
           unfused_into / fused_into, unfused / fused >= 2.5 ? "met" : "MISSED");
    if (!ok)
        printf("  ERROR: a run failed or gave a wrong answer\n");
    printf("JSON {\"bench\":\"membound_chain\",\"n\":%" PRId64 ",\"runs\":%d,"
           "\"copy_GBps\":%.3f,\"copy_threads\":%d,\"floor_ms\":%.4f,"
           "\"fused_ms\":%.4f,\"fused_into_ms\":%.4f,\"unfused_ms\":%.4f,\"unfused_into_ms\":%.4f,"
           "\"ratio_to_floor\":%.3f,\"ratio_to_floor_into\":%.3f,\"fusion_speedup\":%.3f,"
           "\"fusion_speedup_into\":%.3f,\"target_speedup\":2.5,\"checked\":%s,\"backend\":\"%s\"}\n",
           n, runs, 1e-9 * bw, copy_threads, 1e3 * floor_s, 1e3 * fused, 1e3 * fused_into,
           1e3 * unfused, 1e3 * unfused_into, fused / floor_s, fused_into / floor_s,
           unfused / fused, unfused_into / fused_into, ok ? "true" : "false", backend);
    return ok ? 0 : 1;
}
