/*
 * reduce_axes.c — a reduction over several axes against a copy of the same
 * bytes.
 *
 *     y = sum(x, axis=(0, 2))     x: 512 x 1024 x 512 float32 (1 GiB)
 *
 * One pass must read x once (the 1024 outputs are negligible). The copy is
 * nd_copy(x) of the same array, timed the same way, so its bandwidth counts
 * read + write bytes. Reported: each reduction's bandwidth (bytes read /
 * time) as a fraction of the copy's. Target for (0, 2): >= 0.90.
 *
 * For comparison, in the same run: the same sum as two chained one-axis
 * reductions (sum(sum(x, 2), 0), through a temporary), the sum over
 * axes (0, 1) (the kept axis innermost) and over every axis.
 *
 * Each timed run gets fresh random inputs (uniform [0, 1), made and synced
 * outside the timed part); the time covers recording, running and waiting
 * (nd_sync). Median of RUNS (>= 7) after a warm-up run; the warm-up's answer
 * of every variant is checked against a float64 host sum of the same input.
 *
 * Usage: bench_reduce_axes [D0 D1 D2] [RUNS]     (ND_BACKEND picks the backend)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

typedef enum { V_AXES_0_2, V_CHAINED, V_AXES_0_1, V_ALL, V_COPY, V_NUM } variant;

static const char *const names[V_NUM] = {"sum_axes_0_2", "sum_chained_2_then_0", "sum_axes_0_1",
                                         "sum_all", "copy"};

static int64_t D[3];

static nd_array *run_variant(variant v, nd_array *x)
{
    static const int a02[2] = {0, 2}, a01[2] = {0, 1};
    switch (v) {
    case V_AXES_0_2: return nd_sum_axes(x, 2, a02, false);
    case V_CHAINED: {
        nd_array *t = nd_sum(x, 2);
        nd_array *y = nd_sum(t, 0);
        nd_free(t);
        return y;
    }
    case V_AXES_0_1: return nd_sum_axes(x, 2, a01, false);
    case V_ALL: return nd_sum(x, ND_ALL_AXES);
    case V_COPY: return nd_copy(x);
    case V_NUM: break;
    }
    return NULL;
}

/* The float64 reference of variant v from the host copy h of x. */
static int check(variant v, const float *h, nd_array *y)
{
    int64_t n_out = v == V_AXES_0_2 || v == V_CHAINED ? D[1] : v == V_AXES_0_1 ? D[2] : 1;
    if (v == V_COPY)
        n_out = D[0] * D[1] * D[2];
    double *ref = calloc((size_t)n_out, sizeof *ref);
    float *got = malloc((size_t)n_out * sizeof *got);
    if (!ref || !got || nd_to_host(y, got, (size_t)n_out * sizeof *got) != ND_OK) {
        fprintf(stderr, "reduce_axes: %s: could not read the result: %s\n", names[v],
                nd_last_error());
        free(ref);
        free(got);
        return 0;
    }
    double worst = 0;
    if (v == V_COPY) {
        for (int64_t i = 0; i < n_out; i++)
            worst = got[i] != h[i] ? 1.0 : worst;
    } else {
        for (int64_t i = 0; i < D[0]; i++)
            for (int64_t j = 0; j < D[1]; j++)
                for (int64_t k = 0; k < D[2]; k++) {
                    double x = h[(i * D[1] + j) * D[2] + k];
                    ref[v == V_AXES_0_2 || v == V_CHAINED ? j : v == V_AXES_0_1 ? k : 0] += x;
                }
        /* values in [0, 1): no cancellation; float32 accumulation of 2^18
         * terms per output stays well inside 1e-4 */
        for (int64_t o = 0; o < n_out; o++) {
            double e = fabs((double)got[o] - ref[o]) / ref[o];
            worst = e > worst ? e : worst;
        }
    }
    free(ref);
    free(got);
    if (!(worst <= 1e-4)) {
        fprintf(stderr, "reduce_axes: %s: wrong answer (worst relative error %.3e)\n", names[v],
                worst);
        return 0;
    }
    return 1;
}

/* Median seconds of `runs` timed runs of v after a checked warm-up. */
static double time_variant(variant v, int runs, int *ok)
{
    double times[64];
    size_t bytes = (size_t)(D[0] * D[1] * D[2]) * sizeof(float);
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = nd_random_uniform(ND_FLOAT32, 3, D, 0.0, 1.0);
        if (!x || nd_sync() != ND_OK) {
            fprintf(stderr, "reduce_axes: input: %s\n", nd_last_error());
            *ok = 0;
            nd_free(x);
            break;
        }
        double t0 = bench_now();
        nd_array *y = run_variant(v, x);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (!y || st != ND_OK) {
            fprintf(stderr, "reduce_axes: %s: %s\n", names[v], nd_last_error());
            *ok = 0;
        } else if (r < 0) {
            float *h = malloc(bytes);
            *ok = h && nd_to_host(x, h, bytes) == ND_OK && check(v, h, y);
            free(h);
        } else {
            times[r] = t;
        }
        nd_free(y);
        nd_free(x);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

int main(int argc, char **argv)
{
    D[0] = 512, D[1] = 1024, D[2] = 512;
    int runs = 9;
    if (argc >= 4)
        for (int i = 0; i < 3; i++)
            D[i] = atoll(argv[1 + i]);
    if (argc == 2 || argc == 5)
        runs = atoi(argv[argc - 1]);
    if (D[0] < 1 || D[1] < 1 || D[2] < 1) {
        fprintf(stderr, "usage: bench_reduce_axes [D0 D1 D2] [RUNS]\n");
        return 2;
    }
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "reduce_axes: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2024);
    double bytes = (double)(D[0] * D[1] * D[2]) * sizeof(float), t[V_NUM];
    int ok = 1;
    for (int v = 0; v < V_NUM; v++)
        t[v] = time_variant((variant)v, runs, &ok);
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();

    double copy_bw = 2.0 * bytes / t[V_COPY];
    printf("reduce_axes: sum of a %" PRId64 "x%" PRId64 "x%" PRId64 " float32 array (%.0f MiB), "
           "median of %d, backend %s\n",
           D[0], D[1], D[2], bytes / 1048576.0, runs, backend);
    printf("  %-22s %9.3f ms  %8.1f GB/s (read + write)\n", names[V_COPY], 1e3 * t[V_COPY],
           1e-9 * copy_bw);
    for (int v = 0; v < V_COPY; v++)
        printf("  %-22s %9.3f ms  %8.1f GB/s  %.2f of copy bandwidth\n", names[v], 1e3 * t[v],
               1e-9 * bytes / t[v], bytes / t[v] / copy_bw);
    double frac = bytes / t[V_AXES_0_2] / copy_bw;
    printf("  axes (0, 2): %.2f of copy bandwidth; target >= 0.90: %s\n", frac,
           frac >= 0.90 ? "met" : "MISSED");
    if (!ok)
        printf("  ERROR: a run failed or gave a wrong answer\n");
    printf("JSON {\"bench\":\"reduce_axes\",\"shape\":[%" PRId64 ",%" PRId64 ",%" PRId64 "],"
           "\"runs\":%d,\"copy_ms\":%.4f,\"copy_GBps\":%.3f,\"axes_0_2_ms\":%.4f,"
           "\"chained_ms\":%.4f,\"axes_0_1_ms\":%.4f,\"all_ms\":%.4f,"
           "\"axes_0_2_fraction_of_copy\":%.3f,\"target_fraction\":0.9,\"checked\":%s,"
           "\"backend\":\"%s\"}\n",
           D[0], D[1], D[2], runs, 1e3 * t[V_COPY], 1e-9 * copy_bw, 1e3 * t[V_AXES_0_2],
           1e3 * t[V_CHAINED], 1e3 * t[V_AXES_0_1], 1e3 * t[V_ALL], frac, ok ? "true" : "false",
           backend);
    return ok ? 0 : 1;
}
