/*
 * ufunc_chain.c — a user-defined function in a chain against the same
 * expression written with built-in ops (target: <= 1.05x on the H100).
 *
 *     y = 3 * gaussian(x, x0, s) + x          (float32, n = 2^26 by default)
 *     gaussian(x, x0, s) = expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s)
 *
 * "ufunc": gaussian is nd_ufunc_define'd C source (include/nd/ufunc.h),
 * inlined into the fused kernel. "builtin": the same arithmetic as nd_sub,
 * nd_mul, nd_div, nd_exp, ... Both are one kernel that reads x, x0, s and
 * writes y; the ratio ufunc / builtin is what the user function costs.
 *
 * Timing rules of bench/README.md: fresh random inputs per run (s in
 * [0.5, 2), never zero), made and synced outside the timed part; a timed
 * run covers recording, running and the nd_sync that waits for y; the two
 * variants alternate run by run (so drift hits both); one checked warm-up
 * each (against a float64 host computation), then the median of RUNS.
 * The kernels alone are not separated: the host part is the same for both.
 *
 * Usage: ufunc_chain [N] [RUNS]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

static nd_ufunc *g_gauss;

static nd_array *chain(int ufunc, nd_array *x, nd_array *x0, nd_array *s)
{
    nd_scope_begin();
    nd_array *g;
    if (ufunc) {
        g = nd_ufunc_call(g_gauss, 3, (nd_array *[]){x, x0, s});
    } else {
        nd_array *d = nd_sub(x, x0);
        nd_array *arg = nd_div(nd_mul(nd_mul(nd_scalar(-0.5), d), d), nd_mul(s, s));
        g = nd_div(nd_exp(arg), nd_mul(nd_scalar(2.5066283), s));
    }
    nd_array *y = nd_keep(nd_add(nd_mul(nd_scalar(3.0), g), x));
    nd_scope_end();
    return y;
}

static int check(nd_array *x, nd_array *x0, nd_array *s, nd_array *y, int64_t n, const char *what)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *h[4];
    nd_array *arr[4] = {x, x0, s, y};
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        h[i] = malloc(bytes);
        ok = ok && h[i] && nd_to_host(arr[i], h[i], bytes) == ND_OK;
    }
    double worst = 0.0;
    for (int64_t i = 0; ok && i < n; i++) {
        double xv = h[0][i], c = h[1][i], sv = h[2][i];
        double arg = -0.5 * (xv - c) * (xv - c) / (sv * sv);
        double ref = 3.0 * exp(arg) / (2.5066282746310002 * sv) + xv;
        double scale = 3.0 * exp(arg) / (2.5066282746310002 * sv) * (4 + fabs(arg)) + fabs(xv);
        double err = fabs((double)h[3][i] - ref) / (1e-30 + scale);
        worst = err > worst ? err : worst;
    }
    for (int i = 0; i < 4; i++)
        free(h[i]);
    if (!ok || worst > 1e-6) {
        fprintf(stderr, "ufunc_chain: %s: wrong answer (worst relative error %.3e): %s\n", what, worst,
                nd_last_error());
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 26);
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    if (n < 1)
        n = (int64_t)1 << 26;
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "ufunc_chain: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    g_gauss = nd_ufunc_define("gaussian", "float(float x, float x0, float s)",
                              "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);");
    if (!g_gauss) {
        fprintf(stderr, "ufunc_chain: %s\n", nd_last_error());
        nd_shutdown();
        return 1;
    }
    nd_random_seed(4242);
    double t_ufunc[64], t_builtin[64];
    uint64_t kernels[2] = {0, 0};
    int ok = 1;
    for (int r = -1; r < runs && ok; r++) {
        for (int v = 0; v < 2 && ok; v++) {
            /* alternate which goes first */
            int ufunc = (r + v) % 2 == 0;
            nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -4.0, 4.0);
            nd_array *x0 = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -1.0, 1.0);
            nd_array *s = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.5, 2.0);
            if (nd_sync() != ND_OK) {
                ok = 0;
                break;
            }
            nd_stats before, after;
            nd_get_stats(&before);
            double t0 = bench_now();
            nd_array *y = chain(ufunc, x, x0, s);
            nd_status st = nd_sync();
            double t = bench_now() - t0;
            nd_get_stats(&after);
            if (st != ND_OK || !y)
                ok = 0;
            if (r < 0) {
                ok = ok && check(x, x0, s, y, n, ufunc ? "ufunc" : "builtin");
                kernels[ufunc] = after.kernels_run - before.kernels_run;
            } else {
                (ufunc ? t_ufunc : t_builtin)[r] = t;
            }
            nd_free(y);
            nd_free(x);
            nd_free(x0);
            nd_free(s);
        }
    }
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_ufunc_free(g_gauss);
    nd_shutdown();
    if (!ok) {
        printf("ufunc_chain: ERROR: a run failed or gave a wrong answer\n");
        return 1;
    }
    double mu = bench_median(t_ufunc, runs), mb = bench_median(t_builtin, runs);
    double ratio = mu / mb;
    printf("ufunc_chain: y = 3*gaussian(x, x0, s) + x, %" PRId64 " float32, median of %d, backend %s\n",
           n, runs, backend);
    printf("  builtin ops  %8.3f ms  (%llu kernel(s))\n", 1e3 * mb, (unsigned long long)kernels[0]);
    printf("  user ufunc   %8.3f ms  (%llu kernel(s))\n", 1e3 * mu, (unsigned long long)kernels[1]);
    printf("  ufunc / builtin %.3fx; target <= 1.05x (H100): %s\n", ratio, ratio <= 1.05 ? "met" : "MISSED");
    printf("JSON {\"bench\":\"ufunc_chain\",\"n\":%" PRId64 ",\"runs\":%d,\"builtin_ms\":%.4f,"
           "\"ufunc_ms\":%.4f,\"ratio\":%.4f,\"target_ratio\":1.05,\"kernels_builtin\":%llu,"
           "\"kernels_ufunc\":%llu,\"checked\":true,\"backend\":\"%s\"}\n",
           n, runs, 1e3 * mb, 1e3 * mu, ratio, (unsigned long long)kernels[0], (unsigned long long)kernels[1],
           backend);
    return kernels[0] == 1 && kernels[1] == 1 ? 0 : 1;
}
