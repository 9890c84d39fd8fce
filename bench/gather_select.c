/*
 * gather_select.c — indexing with arrays and masks (nd/indexing.h):
 *
 *     gather + map   y = x[idx] * 2 + 1     x float32 (G), idx int64 (G) random in [0, G)
 *     gather2 + map  y = x[i, j] * 2 + 1    x float32 (R, G/R), i, j int64 (G) random in their axes
 *                                           (R = 8192 when it divides G, else 1): one fused kernel
 *                                           with two index arrays (i + j + x + y bytes)
 *     mask select    y = x[x > 0.5]         x float32 (S) uniform [0, 1): about half kept
 *     select + map   y = x[x > t] * 2 + 1   x float32 (S), t from 0.05 to 0.95 over the runs:
 *                                           a length that depends on data, different every run
 *
 * Defaults G = 2^26, S = 2^28 (the GPU targets). The gather's bytes are
 * idx (8 G) + x (4 G) + y (4 G); the select's x (4 S, read for the mask
 * and for the copy) + y (about 2 S). Each timed run gets fresh random
 * inputs made and synced outside the timed part; the time covers
 * recording, running and waiting (nd_sync; the select synchronises at the
 * call). Median of RUNS (>= 7) after a warm-up run whose answer is checked
 * against the host: every gathered element, and the selection's count and
 * elements. The two selections also print their fastest and slowest run
 * and the kernels compiled during the timed runs (nd_stats): with kernels
 * compiled per length (before shape-generic kernels) every run whose count
 * was new paid a compile (about 70 ms with NVRTC); now a length never
 * compiles. Point ND_CACHE_DIR at an empty directory to see every compile;
 * ND_CUDA_GENERIC=0 gives CUDA kernels literal extents again, to compare.
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

/* x[i, j] * 2 + 1 against the host, every element. */
static int check_gather2(nd_array *x, nd_array *i, nd_array *j, nd_array *y, int64_t n, int64_t cols)
{
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    int64_t *hi = malloc((size_t)n * 8), *hj = malloc((size_t)n * 8);
    int ok = hx && hy && hi && hj && nd_to_host(x, hx, (size_t)n * 4) == ND_OK &&
             nd_to_host(i, hi, (size_t)n * 8) == ND_OK && nd_to_host(j, hj, (size_t)n * 8) == ND_OK &&
             nd_to_host(y, hy, (size_t)n * 4) == ND_OK;
    for (int64_t p = 0; ok && p < n; p++)
        if (hy[p] != hx[hi[p] * cols + hj[p]] * 2.0f + 1.0f) {
            fprintf(stderr, "gather_select: gather2: element %" PRId64 " is %g\n", p, hy[p]);
            ok = 0;
        }
    free(hx);
    free(hy);
    free(hi);
    free(hj);
    return ok;
}

/* two: x (rows, n / rows) gathered through two index arrays. */
static double time_gather(int64_t n, int runs, int *ok, int two)
{
    double times[64];
    const int64_t rows = two && n % 8192 == 0 ? 8192 : 1, cols = n / rows;
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = two ? nd_random_uniform(ND_FLOAT32, ND_SHAPE(rows, cols), -1.0, 1.0)
                          : nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -1.0, 1.0);
        nd_array *idx = nd_random_integers(ND_INT64, ND_SHAPE(n), 0, two ? rows : n);
        nd_array *jdx = two ? nd_random_integers(ND_INT64, ND_SHAPE(n), 0, cols) : NULL;
        if (!x || !idx || (two && !jdx) || nd_sync() != ND_OK) {
            *ok = fail("making the inputs");
            break;
        }
        double t0 = bench_now();
        nd_array *g = two ? nd_index(x, "$0, $1", 2, (nd_array *[]){idx, jdx}) : nd_take(x, idx, 0);
        nd_array *m = nd_mul(g, nd_scalar(2.0));
        nd_array *y = nd_add(m, nd_scalar(1.0));
        nd_free(g);
        nd_free(m);
        nd_status st = nd_sync();
        double t = bench_now() - t0;
        if (!y || st != ND_OK) *ok = fail("gather");
        else if (r < 0) *ok = two ? check_gather2(x, idx, jdx, y, n, cols) : check_gather(x, idx, y, n);
        else times[r] = t;
        nd_free(y);
        nd_free(x);
        nd_free(idx);
        nd_free(jdx);
    }
    return *ok ? bench_median(times, runs) : NAN;
}

static int check_select_map(nd_array *x, nd_array *y, int64_t n, float t)
{
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    int ok = hx && hy && nd_to_host(x, hx, (size_t)n * 4) == ND_OK && nd_ndim(y) == 1;
    int64_t k = 0, count = ok ? nd_shape(y)[0] : 0;
    ok = ok && nd_to_host(y, hy, (size_t)count * 4) == ND_OK;
    for (int64_t i = 0; ok && i < n; i++)
        if (hx[i] > t && (k >= count || hy[k++] != hx[i] * 2.0f + 1.0f)) ok = 0;
    if (ok && k != count) ok = 0;
    if (!ok) fprintf(stderr, "gather_select: select + map: wrong result (%" PRId64 " elements)\n", count);
    free(hx);
    free(hy);
    return ok;
}

typedef struct {
    double median, min, max; /* seconds */
    uint64_t compiled;       /* kernels compiled during the timed runs */
    int64_t kept_min, kept_max;
} select_times;

/* map: y = x[x > t] * 2 + 1 with t changing every run; else y = x[x > 0.5]. */
static select_times time_select(int64_t n, int runs, int *ok, int map)
{
    double times[64];
    select_times st = {NAN, NAN, NAN, 0, INT64_MAX, -1};
    nd_stats s0, s1;
    for (int r = -1; r < runs && *ok; r++) {
        nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
        if (!x || nd_sync() != ND_OK) {
            *ok = fail("making the input");
            break;
        }
        float t = map ? 0.05f + 0.9f * (float)(r + 1) / (float)runs : 0.5f;
        if (r == 0) nd_get_stats(&s0);
        double t0 = bench_now();
        nd_array *mask = nd_gt(x, nd_scalar(t));
        nd_array *y = nd_mask_select(x, mask);
        nd_free(mask);
        if (map && y) {
            nd_array *m = nd_mul(y, nd_scalar(2.0));
            nd_free(y);
            y = nd_add(m, nd_scalar(1.0));
            nd_free(m);
        }
        nd_status s = nd_sync();
        double dt = bench_now() - t0;
        if (!y || s != ND_OK) *ok = fail(map ? "select + map" : "select");
        else if (r < 0) *ok = map ? check_select_map(x, y, n, t) : check_select(x, y, n);
        else times[r] = dt;
        if (y && r >= 0) {
            int64_t kept = nd_shape(y)[0];
            if (kept < st.kept_min) st.kept_min = kept;
            if (kept > st.kept_max) st.kept_max = kept;
        }
        nd_free(y);
        nd_free(x);
    }
    if (!*ok) return st;
    nd_get_stats(&s1);
    st.compiled = s1.kernels_compiled - s0.kernels_compiled;
    st.median = bench_median(times, runs); /* sorts */
    st.min = times[0];
    st.max = times[runs - 1];
    return st;
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
    double tg = time_gather(g, runs, &ok, 0);
    double tg2 = ok ? time_gather(g, runs, &ok, 1) : NAN;
    select_times ts = {NAN, NAN, NAN, 0, 0, 0}, tm = ts;
    if (ok) ts = time_select(s, runs, &ok, 0);
    if (ok) tm = time_select(s, runs, &ok, 1);
    int64_t kept = ts.kept_max;
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    double gbytes = 16.0 * (double)g, sbytes = 4.0 * (double)s + 4.0 * (double)kept;
    printf("gather_select: median of %d, backend %s\n", runs, backend);
    printf("  gather+map  x[idx]*2+1, %" PRId64 " float32   %9.3f ms  %7.1f GB/s (idx + x + y)\n", g, 1e3 * tg,
           1e-9 * gbytes / tg);
    printf("  gather2+map x[i,j]*2+1, %" PRId64 " float32  %9.3f ms  %7.1f GB/s (i + j + x + y)\n", g, 1e3 * tg2,
           1e-9 * 24.0 * (double)g / tg2);
    printf("  mask select x[x>0.5], %" PRId64 " float32     %9.3f ms  %7.1f GB/s (x + selected), %" PRId64
           " kept; min %.3f max %.3f ms, %llu kernels compiled in the timed runs\n",
           s, 1e3 * ts.median, 1e-9 * sbytes / ts.median, kept, 1e3 * ts.min, 1e3 * ts.max,
           (unsigned long long)ts.compiled);
    printf("  select+map x[x>t]*2+1, %" PRId64 " float32    %9.3f ms  (%" PRId64 "..%" PRId64
           " kept); min %.3f max %.3f ms, %llu kernels compiled in the timed runs\n",
           s, 1e3 * tm.median, tm.kept_min, tm.kept_max, 1e3 * tm.min, 1e3 * tm.max,
           (unsigned long long)tm.compiled);
    if (!ok) printf("  ERROR: a run failed or gave a wrong answer\n");
    printf("JSON {\"bench\":\"gather_select\",\"gather_n\":%" PRId64 ",\"select_n\":%" PRId64 ",\"runs\":%d,"
           "\"gather_map_ms\":%.4f,\"select_ms\":%.4f,\"select_min_ms\":%.4f,\"select_max_ms\":%.4f,"
           "\"select_compiled\":%llu,\"select_map_ms\":%.4f,\"select_map_min_ms\":%.4f,\"select_map_max_ms\":%.4f,"
           "\"select_map_compiled\":%llu,\"selected\":%" PRId64 ",\"gather2_map_ms\":%.4f,\"checked\":%s,"
           "\"backend\":\"%s\"}\n",
           g, s, runs, 1e3 * tg, 1e3 * ts.median, 1e3 * ts.min, 1e3 * ts.max, (unsigned long long)ts.compiled,
           1e3 * tm.median, 1e3 * tm.min, 1e3 * tm.max, (unsigned long long)tm.compiled, kept, 1e3 * tg2,
           ok ? "true" : "false", backend);
    return ok ? 0 : 1;
}
