/*
 * scan_hist.c — cumsum and histogram of a large float32 vector against
 * their bandwidth floors.
 *
 *     y = cumsum(x)                  x: N float32 (default 2^28)
 *     h = histogram(x, 1024, 0, 1)   int64 counts
 *
 * The floor is the time the same backend takes to move the bytes each must
 * move, measured in the same run as nd_copy(x) (read N + write N): cumsum
 * moves as much as the copy (floor = the copy's time), histogram only reads
 * x (floor = half the copy's time). Reported: each time, its bandwidth and
 * the ratio time / floor (issue target on the H100: cumsum <= 1.15).
 *
 * Each timed run gets fresh uniform [0, 1) inputs (made and synced outside
 * the timed part); the time covers recording, running and waiting
 * (nd_sync). Median of RUNS (>= 7) after a warm-up run whose answer is
 * checked: the cumsum against a float64 host scan (relative 1e-4: float32
 * accumulation of up to 2^28 terms in blocks), the histogram exactly (the
 * edges i / 1024 are exact in float32, so the bin is floor(1024 x)).
 *
 * Usage: bench_scan_hist [N] [RUNS]     (ND_BACKEND picks the backend)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

enum { BINS = 1024 };
typedef enum { V_COPY, V_CUMSUM, V_HIST, V_NUM } variant;
static const char *const names[V_NUM] = {"copy", "cumsum", "histogram_1024"};
static int64_t N;

static nd_array *run_variant(variant v, nd_array *x) {
    switch (v) {
    case V_COPY: return nd_copy(x);
    case V_CUMSUM: return nd_cumsum(x, 0);
    case V_HIST: return nd_histogram(x, BINS, 0.0, 1.0, NULL);
    case V_NUM: break;
    }
    return NULL;
}

static int check(variant v, const float *h, nd_array *y) {
    int64_t n_out = v == V_HIST ? BINS : N;
    size_t item = v == V_HIST ? sizeof(int64_t) : sizeof(float);
    void *got = malloc((size_t)n_out * item);
    if (!got || nd_to_host(y, got, (size_t)n_out * item) != ND_OK) {
        fprintf(stderr, "scan_hist: %s: could not read the result: %s\n", names[v], nd_last_error());
        free(got);
        return 0;
    }
    int ok = 1;
    if (v == V_COPY) {
        ok = memcmp(got, h, (size_t)N * sizeof(float)) == 0;
    } else if (v == V_CUMSUM) {
        double acc = 0, worst = 0;
        const float *g = got;
        for (int64_t i = 0; i < N; i++) {
            acc += h[i];
            double e = fabs((double)g[i] - acc) / (acc > 1 ? acc : 1);
            worst = e > worst ? e : worst;
        }
        ok = worst <= 1e-4;
        if (!ok) fprintf(stderr, "scan_hist: cumsum: worst relative error %.3e\n", worst);
    } else {
        int64_t *want = calloc(BINS, sizeof *want);
        for (int64_t i = 0; i < N; i++) want[(int64_t)(h[i] * BINS)]++;
        ok = memcmp(want, got, BINS * sizeof *want) == 0;
        free(want);
    }
    if (!ok) fprintf(stderr, "scan_hist: %s: wrong answer\n", names[v]);
    free(got);
    return ok;
}

static double time_variant(variant v, int runs, int *ok) {
    double times[64];
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = nd_random_uniform(ND_FLOAT32, 1, &N, 0.0, 1.0);
        if (!x || nd_sync() != ND_OK) {
            fprintf(stderr, "scan_hist: input: %s\n", nd_last_error());
            *ok = 0;
            nd_free(x);
            break;
        }
        double t0 = bench_now();
        nd_array *y = run_variant(v, x);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (!y || st != ND_OK) {
            fprintf(stderr, "scan_hist: %s: %s\n", names[v], nd_last_error());
            *ok = 0;
        } else if (r < 0) {
            float *h = malloc((size_t)N * sizeof(float));
            *ok = h && nd_to_host(x, h, (size_t)N * sizeof(float)) == ND_OK && check(v, h, y);
            free(h);
        } else {
            times[r] = t;
        }
        nd_free(y);
        nd_free(x);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

int main(int argc, char **argv) {
    N = (int64_t)1 << 28;
    int runs = 9;
    if (argc >= 2) N = atoll(argv[1]);
    if (argc >= 3) runs = atoi(argv[2]);
    if (N < 1) {
        fprintf(stderr, "usage: bench_scan_hist [N] [RUNS]\n");
        return 2;
    }
    runs = runs < 7 ? 7 : runs > 64 ? 64 : runs;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "scan_hist: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2026);
    double t[V_NUM];
    int ok = 1;
    for (int v = 0; v < V_NUM; v++) t[v] = time_variant((variant)v, runs, &ok);
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    double bytes = (double)N * sizeof(float), copy_bw = 2 * bytes / t[V_COPY];
    double floor_scan = t[V_COPY], floor_hist = t[V_COPY] / 2;
    printf("scan_hist: %" PRId64 " float32 (%.0f MiB), median of %d, backend %s\n", N, bytes / 1048576.0, runs,
           backend);
    printf("  %-16s %9.3f ms  %8.1f GB/s (read + write): the floor\n", names[V_COPY], 1e3 * t[V_COPY],
           1e-9 * copy_bw);
    printf("  %-16s %9.3f ms  %8.1f GB/s (read + write)  %.2fx its floor (%.3f ms); target <= 1.15x\n",
           names[V_CUMSUM], 1e3 * t[V_CUMSUM], 1e-9 * 2 * bytes / t[V_CUMSUM], t[V_CUMSUM] / floor_scan,
           1e3 * floor_scan);
    printf("  %-16s %9.3f ms  %8.1f GB/s (read)          %.2fx its floor (%.3f ms)\n", names[V_HIST],
           1e3 * t[V_HIST], 1e-9 * bytes / t[V_HIST], t[V_HIST] / floor_hist, 1e3 * floor_hist);
    if (!ok) printf("  ERROR: a run failed or gave a wrong answer\n");
    printf("JSON {\"bench\":\"scan_hist\",\"n\":%" PRId64 ",\"runs\":%d,\"copy_ms\":%.4f,\"cumsum_ms\":%.4f,"
           "\"histogram_ms\":%.4f,\"cumsum_over_floor\":%.3f,\"histogram_over_floor\":%.3f,\"checked\":%s,"
           "\"backend\":\"%s\"}\n",
           N, runs, 1e3 * t[V_COPY], 1e3 * t[V_CUMSUM], 1e3 * t[V_HIST], t[V_CUMSUM] / floor_scan,
           t[V_HIST] / floor_hist, ok ? "true" : "false", backend);
    return ok ? 0 : 1;
}
