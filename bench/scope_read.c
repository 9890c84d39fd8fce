/*
 * scope_read.c — a read inside the scope that owns the temporaries, against
 * the same read after nd_keep + nd_scope_end.
 *
 *     nd_scope_begin();
 *     xy = x*y; z = sin(xy) + cos(x); w = exp(-y*y) * sqrt(abs(xy));
 *     in_scope:  v = nd_item(nd_sum(z + w));  nd_scope_end();
 *     kept:      s = nd_keep(nd_sum(z + w));  nd_scope_end();  v = nd_item(s);
 *
 * (bench/suite_patterns.c records it; x, y float32 uniform in [-2, 2).)
 * Every value is a named handle of the scope in the first variant, so a
 * read that ran the whole pending graph wrote all twelve of them to memory
 * "in case"; the kept variant's read writes the sum alone. The two
 * variants alternate run by run on fresh inputs (made and synced outside
 * the timed part); reported per variant: the median time, the values
 * written to memory and the kernels run per read (nd_stats), and the peak
 * of nd's memory, inputs included (nd_reset_peak before each run). Target:
 * in_scope within 1.1x of kept in time and memory. The first run of each is
 * checked against a float64 host reference.
 *
 * Usage: scope_read [N] [RUNS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

#include "suite_patterns.h"

typedef struct {
    double t[64], peak[64];
    uint64_t values, kernels;
    double v;
} variant;

static double reference(nd_array *x, nd_array *y, int64_t n)
{
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    double s = NAN;
    if (hx && hy && nd_to_host(x, hx, (size_t)n * 4) == ND_OK && nd_to_host(y, hy, (size_t)n * 4) == ND_OK) {
        s = 0;
        for (int64_t i = 0; i < n; i++)
            s += suite_scope_term(hx[i], hy[i]);
    }
    free(hx);
    free(hy);
    return s;
}

/* One timed read; returns 0 on an nd error. */
static int one(variant *V, int r, int in_scope, nd_array *x, nd_array *y)
{
    nd_stats a, b;
    nd_get_stats(&a);
    nd_reset_peak();
    double t0 = bench_now();
    nd_scope_begin();
    nd_array *s = suite_scope_sum_record(x, y);
    double v;
    nd_get_stats(&b); /* (no flush: recording only) */
    if (in_scope) {
        v = nd_item(s);
        nd_get_stats(&b);
        nd_scope_end();
    } else {
        nd_keep(s);
        nd_scope_end();
        v = nd_item(s);
        nd_get_stats(&b);
        nd_free(s);
    }
    double t = bench_now() - t0;
    if (r >= 0) {
        V->t[r] = t;
        V->peak[r] = (double)(b.bytes_peak[0] + b.bytes_peak[1]);
    }
    V->values = b.values_materialised - a.values_materialised;
    V->kernels = b.kernels_run - a.kernels_run;
    V->v = v;
    return !isnan(v);
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 22);
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    if (n < 1)
        n = (int64_t)1 << 22;
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "scope_read: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2611);
    variant V[2];
    memset(V, 0, sizeof V);
    int ok = 1;
    for (int r = -1; r < runs && ok; r++) {
        for (int k = 0; k < 2 && ok; k++) {
            int in_scope = (r + k) % 2 == 0 ? 0 : 1; /* alternate which goes first */
            nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
            nd_array *y = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
            ok = nd_sync() == ND_OK;
            ok = ok && one(&V[in_scope], r, in_scope, x, y);
            if (ok && r < 0) {
                double ref = reference(x, y, n);
                /* float32 terms of O(1) summed: nd's pairwise sum is well
                 * within 1e-5 of the float64 sum's magnitude. */
                if (!(fabs(V[in_scope].v - ref) <= 1e-5 * ((double)n + fabs(ref)))) {
                    fprintf(stderr, "scope_read: wrong answer (%s): %.9g, reference %.9g\n",
                            in_scope ? "in_scope" : "kept", V[in_scope].v, ref);
                    ok = 0;
                }
            }
            nd_free(x);
            nd_free(y);
        }
    }
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    if (!ok) {
        fprintf(stderr, "scope_read: failed: %s\n", nd_last_error());
        return 1;
    }
    const char *names[2] = {"kept", "in_scope"};
    double med[2], peak[2];
    printf("scope_read: sum(z + w) of twelve named values, %" PRId64 " float32, median of %d, backend %s\n", n, runs,
           backend);
    for (int k = 0; k < 2; k++) {
        med[k] = bench_median(V[k].t, runs);
        peak[k] = bench_median(V[k].peak, runs);
        printf("  %-9s %9.3f ms  %2" PRIu64 " values written, %2" PRIu64 " kernels, peak %8.1f MiB (inputs %.1f)\n",
               names[k], 1e3 * med[k], V[k].values, V[k].kernels, peak[k] / 1048576.0,
               2.0 * (double)n * 4 / 1048576.0);
    }
    printf("  in_scope / kept: time %.3fx, peak memory %.3fx (target <= 1.10 each)\n", med[1] / med[0],
           peak[0] > 0 ? peak[1] / peak[0] : NAN);
    printf("JSON {\"bench\":\"scope_read\",\"impl\":\"nd\",\"n\":%" PRId64 ",\"runs\":%d,\"kept_ms\":%.4f,"
           "\"in_scope_ms\":%.4f,\"kept_values\":%" PRIu64 ",\"in_scope_values\":%" PRIu64
           ",\"kept_peak_bytes\":%.0f,\"in_scope_peak_bytes\":%.0f,\"checked\":true,\"backend\":\"%s\"}\n",
           n, runs, 1e3 * med[0], 1e3 * med[1], V[0].values, V[1].values, peak[0], peak[1], backend);
    return 0;
}
