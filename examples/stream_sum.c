/*
 * stream_sum.c — an elementwise + reduction pipeline over a host array that
 * may be larger than the GPU's memory.
 *
 * The data lives in host memory (nd_from_host); sum(sqrt(|x|)) and max(x)
 * are recorded and synced. On a GPU, the scheduler streams the array
 * through the device in chunks (64 MiB by default, ND_CHUNK_BYTES, at most
 * an eighth of ND_DEVICE_MEMORY_LIMIT): chunk k+1 is copied while chunk k
 * is reduced, and the chunks' partial results are combined at the end, so
 * the device never holds the whole array. In NumPy:
 *
 *     s, m = np.sum(np.sqrt(np.abs(x))), np.max(x)
 *
 * The answers are checked against a float64 sum computed here.
 *
 * Usage: stream_sum [GiB]   (default 0.25; e.g. ND_DEVICE_MEMORY_LIMIT=1G
 *                            stream_sum 16 streams 16 GiB through 1 GiB)
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    double gib = argc > 1 ? atof(argv[1]) : 0.25;
    int64_t n = (int64_t)(gib * (double)(1 << 30) / sizeof(float));
    if (n < 1) {
        fprintf(stderr, "usage: stream_sum [GiB > 0]\n");
        return 2;
    }
    float *x = malloc((size_t)n * sizeof *x);
    if (!x) {
        fprintf(stderr, "stream_sum: cannot allocate %.2f GiB of host memory\n", gib);
        return 1;
    }
    /* A cheap generator (the array may be tens of GiB), values in [-4, 4). */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double want_sum = 0, want_max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (float)((double)(s >> 11) * 0x1.0p-53 * 8.0 - 4.0);
        want_sum += sqrt(fabs((double)x[i]));
        if (x[i] > want_max) want_max = x[i];
    }

    nd_array *a = nd_from_host(x, ND_FLOAT32, ND_SHAPE(n));
    free(x); /* nd_from_host copied it */
    double t0 = now_seconds();
    nd_scope_begin();
    nd_array *sum = nd_keep(nd_sum(nd_sqrt(nd_abs(a)), ND_ALL_AXES));
    nd_scope_end();
    /* One reduction per flush: a flush streams a host array when one
     * kernel reads it (two reductions are two kernels). */
    nd_status st = nd_sync();
    nd_array *mx = nd_max(a, ND_ALL_AXES);
    if (st == ND_OK) st = nd_sync();
    double t1 = now_seconds();
    double got_sum = nd_item(sum), got_max = nd_item(mx);
    if (st != ND_OK || nd_last_status() != ND_OK) {
        fprintf(stderr, "stream_sum: %s\n", nd_last_error());
        return 1;
    }
    double err = fabs(got_sum - want_sum) / want_sum;
    printf("stream_sum: %.2f GiB of float32 in host memory on %s\n", gib, nd_backend_name());
    printf("  sum(sqrt|x|) %.6e (float64 %.6e, relative error %.1e)  max %.6f (want %.6f)\n", got_sum, want_sum,
           err, got_max, want_max);
    printf("  time %.3f s (%.1f GB/s of host data: two passes, one per flush)\n", t1 - t0,
           2.0 * (double)n * 4 / (t1 - t0) * 1e-9);
    nd_free(sum);
    nd_free(mx);
    nd_free(a);
    nd_shutdown();
    if (err > 1e-4 || got_max != want_max) {
        fprintf(stderr, "stream_sum: wrong answer\n");
        return 1;
    }
    return 0;
}
