/*
 * gather_select.c — indexing with arrays and masks (nd/indexing.h):
 *
 *     gather + map   y = x[idx] * 2 + 1     x float32 (G), idx int64 (G) random in [0, G)
 *     mask select    y = x[x > 0.5]         x float32 (S) uniform [0, 1): about half kept
 *
 * Defaults G = 2^26, S = 2^28 (the GPU targets). The gather's bytes are
 * idx (8 G) + x (4 G) + y (4 G); the select's x (4 S, read for the mask
 * and for the copy) + y (about 2 S). Each timed run gets fresh random
 * inputs made and synced outside the timed part; the time covers
 * recording, running and waiting (nd_sync; the select synchronises at the
 * call). Median of RUNS (>= 7) after a warm-up run whose answer is checked
 * against the host: every gathered element, and the selection's count and
 * elements.
 *
 * Usage: bench_gather_select [G [S [RUNS]]]     (ND_BACKEND picks the backend)
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

static int fail(const char *what)
{
    fprintf(stderr, "gather_select: %s: %s\n", what, nd_last_error());
    return 0;
}

static int check_gather(nd_array *x, nd_array *idx, nd_array *y, int64_t n)
{
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    int64_t *hi = malloc((size_t)n * 8);
    int ok = hx && hy && hi && nd_to_host(x, hx, (size_t)n * 4) == ND_OK &&
             nd_to_host(idx, hi, (size_t)n * 8) == ND_OK && nd_to_host(y, hy, (size_t)n * 4) == ND_OK;
    for (int64_t i = 0; ok && i < n; i++)
        if (hy[i] != hx[hi[i]] * 2.0f + 1.0f) {
            fprintf(stderr, "gather_select: gather: element %" PRId64 " is %g, want %g\n", i, hy[i],
                    hx[hi[i]] * 2.0f + 1.0f);
            ok = 0;
        }
    free(hx);
    free(hy);
    free(hi);
    return ok;
}

static int check_select(nd_array *x, nd_array *y, int64_t n)
{
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    int ok = hx && hy && nd_to_host(x, hx, (size_t)n * 4) == ND_OK && nd_ndim(y) == 1;
    int64_t k = 0, count = ok ? nd_shape(y)[0] : 0;
    ok = ok && nd_to_host(y, hy, (size_t)count * 4) == ND_OK;
    for (int64_t i = 0; ok && i < n; i++)
        if (hx[i] > 0.5f && (k >= count || hy[k++] != hx[i])) ok = 0;
    if (ok && k != count) ok = 0;
    if (!ok) fprintf(stderr, "gather_select: select: wrong selection (%" PRId64 " elements)\n", count);
    free(hx);
    free(hy);
    return ok;
}

static double time_gather(int64_t n, int runs, int *ok)
{
    double times[64];
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -1.0, 1.0);
        nd_array *idx = nd_random_integers(ND_INT64, ND_SHAPE(n), 0, n);
        if (!x || !idx || nd_sync() != ND_OK) {
            *ok = fail("making the inputs");
            break;
        }
        double t0 = bench_now();
        nd_array *g = nd_take(x, idx, 0);
        nd_array *m = nd_mul(g, nd_scalar(2.0));
        nd_array *y = nd_add(m, nd_scalar(1.0));
        nd_free(g);
        nd_free(m);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (!y || st != ND_OK) *ok = fail("gather");
        else if (r < 0) *ok = check_gather(x, idx, y, n);
        else times[r] = t;
        nd_free(y);
        nd_free(x);
        nd_free(idx);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

static double time_select(int64_t n, int runs, int *ok, int64_t *kept)
{
    double times[64];
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
        if (!x || nd_sync() != ND_OK) {
            *ok = fail("making the input");
            break;
        }
        double t0 = bench_now();
        nd_array *mask = nd_gt(x, nd_scalar(0.5));
        nd_array *y = nd_mask_select(x, mask);
        nd_free(mask);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (!y || st != ND_OK) *ok = fail("select");
        else if (r < 0) *ok = check_select(x, y, n);
        else times[r] = t;
        if (y) *kept = nd_shape(y)[0];
        nd_free(y);
        nd_free(x);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

int main(int argc, char **argv)
{
    int64_t g = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 26, s = argc > 2 ? atoll(argv[2]) : (int64_t)1 << 28;
    int runs = argc > 3 ? atoi(argv[3]) : 9;
    if (g < 1 || s < 1) {
        fprintf(stderr, "usage: bench_gather_select [G [S [RUNS]]]\n");
        return 2;
    }
    if (runs < 7) runs = 7;
    if (runs > 64) runs = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "gather_select: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2026);
    int ok = 1;
    int64_t kept = 0;
    double tg = time_gather(g, runs, &ok);
    double ts = ok ? time_select(s, runs, &ok, &kept) : NAN;
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    double gbytes = 16.0 * (double)g, sbytes = 4.0 * (double)s + 4.0 * (double)kept;
    printf("gather_select: median of %d, backend %s\n", runs, backend);
    printf("  gather+map  x[idx]*2+1, %" PRId64 " float32   %9.3f ms  %7.1f GB/s (idx + x + y)\n", g, 1e3 * tg,
           1e-9 * gbytes / tg);
    printf("  mask select x[x>0.5], %" PRId64 " float32     %9.3f ms  %7.1f GB/s (x + selected), %" PRId64
           " kept\n", s, 1e3 * ts, 1e-9 * sbytes / ts, kept);
    if (!ok) printf("  ERROR: a run failed or gave a wrong answer\n");
    printf("JSON {\"bench\":\"gather_select\",\"gather_n\":%" PRId64 ",\"select_n\":%" PRId64 ",\"runs\":%d,"
           "\"gather_map_ms\":%.4f,\"select_ms\":%.4f,\"selected\":%" PRId64 ",\"checked\":%s,\"backend\":\"%s\"}\n",
           g, s, runs, 1e3 * tg, 1e3 * ts, kept, ok ? "true" : "false", backend);
    return ok ? 0 : 1;
}
