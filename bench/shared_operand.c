/*
 * shared_operand.c — a value feeding several library calls.
 *
 *     z = (x - mean(x, axis=0)) / std(x, axis=0)
 *     a = z @ w1;  b = z @ w2;  c = z.T @ z          (float32, n x n)
 *
 * (bench/suite_patterns.c records it.) z is read by three matmuls, none of
 * which can fuse it: computed inside each operand's kernel, it was computed
 * and written four times. Two variants alternate run by run on fresh
 * inputs: `shared`, the program as written (one flush), and `z_first`, the
 * same with z kept and synced before the products (z written once by
 * construction: the floor for the work, with one flush more). Reported per
 * variant: median time, kernels and values written per run (nd_stats).
 * Target: shared no slower than z_first, with no more kernels. The first run
 * of `shared` is checked against a float64 host reference (rows of a, b, c).
 *
 * --reductions: z = exp(sin(x))*cos(x) + 1 read by sum(z, 0) and sum(z, 1),
 * two kernels that cannot share it: the planner's cost model decides
 * whether z is written once (ND_LOG=3 says which; the CPU writes it, a
 * device computes it in both reductions). `shared` is that decision,
 * `z_first` is z written once; their ratio says whether the decision
 * was right on this machine.
 *
 * Usage: shared_operand [N] [RUNS] [--reductions]
 */
#include "bench_util.h"

#include <nd.h>

#include <inttypes.h>
#include <math.h>

#include "suite_patterns.h"

#define ROWS 4 /* rows of each product checked */

static nd_status z_first(nd_array *x, nd_array *w1, nd_array *w2, nd_array **out)
{
    nd_scope_begin();
    int ax0[] = {0};
    nd_array *z = nd_keep(nd_div(nd_sub(x, nd_mean_axes(x, 1, ax0, true)), nd_std_axes(x, 1, ax0, 0.0, true)));
    nd_scope_end();
    nd_status st = nd_sync();
    nd_scope_begin();
    out[0] = nd_keep(nd_matmul(z, w1));
    out[1] = nd_keep(nd_matmul(z, w2));
    out[2] = nd_keep(nd_matmul(nd_transpose(z, NULL), z));
    nd_scope_end();
    nd_free(z);
    return st;
}

/* The --reductions pattern; z_first: z written by a flush of its own. */
static nd_array *expensive_z(nd_array *x)
{
    return nd_add(nd_mul(nd_exp(nd_sin(x)), nd_cos(x)), nd_scalar(1.0));
}

static nd_status reductions(nd_array *x, nd_array **out, int z_first_)
{
    nd_scope_begin();
    nd_array *z;
    nd_status st = ND_OK;
    if (z_first_) {
        nd_scope_begin(); /* z alone is written: its temporaries go first */
        z = nd_keep(expensive_z(x));
        nd_scope_end();
        st = nd_sync();
    } else {
        z = expensive_z(x);
    }
    out[0] = nd_keep(nd_sum(z, 0));
    out[1] = nd_keep(nd_sum(z, 1));
    nd_scope_end();
    return st != ND_OK ? st : out[0] && out[1] ? ND_OK : nd_last_status();
}

static double reductions_check(nd_array *x, nd_array **out, int64_t n)
{
    float *h[3] = {malloc((size_t)(n * n) * 4), malloc((size_t)n * 4), malloc((size_t)n * 4)};
    int ok = h[0] && h[1] && h[2] && nd_to_host(x, h[0], (size_t)(n * n) * 4) == ND_OK &&
             nd_to_host(out[0], h[1], (size_t)n * 4) == ND_OK && nd_to_host(out[1], h[2], (size_t)n * 4) == ND_OK;
    double worst = ok ? 0 : INFINITY;
    for (int r = 0; ok && r < ROWS; r++) {
        int64_t c = (r * 7919) % n;
        double s0 = 0, s1 = 0;
        for (int64_t i = 0; i < n; i++) {
            double a = h[0][i * n + c], b = h[0][c * n + i];
            s0 += exp(sin(a)) * cos(a) + 1.0;
            s1 += exp(sin(b)) * cos(b) + 1.0;
        }
        double e0 = fabs(h[1][c] - s0) / (fabs(s0) + (double)n), e1 = fabs(h[2][c] - s1) / (fabs(s1) + (double)n);
        worst = e0 > worst ? e0 : worst;
        worst = e1 > worst ? e1 : worst;
    }
    for (int i = 0; i < 3; i++)
        free(h[i]);
    return worst;
}

static double check(nd_array *x, nd_array *w1, nd_array *w2, nd_array **out, int64_t n)
{
    size_t bytes = (size_t)(n * n) * 4;
    float *h[6] = {malloc(bytes), malloc(bytes), malloc(bytes), malloc(bytes), malloc(bytes), malloc(bytes)};
    double *z = malloc((size_t)(n * n) * sizeof *z);
    nd_array *src[6] = {x, w1, w2, out[0], out[1], out[2]};
    int ok = z != NULL;
    for (int i = 0; i < 6; i++)
        ok = ok && h[i] && nd_to_host(src[i], h[i], bytes) == ND_OK;
    double worst = ok ? 0 : INFINITY;
    if (ok)
        suite_normalise_ref(h[0], n, z);
    for (int p = 0; ok && p < 3; p++) {
        for (int r = 0; r < ROWS; r++) {
            int64_t i = (r * 7919) % n;
            for (int64_t j = 0; j < n; j++) {
                double s = suite_product_ref(z, h[1 + p % 2], p, i, j, n);
                /* float32 products of n terms of O(1): relative to sqrt(n) */
                double e = fabs((double)h[3 + p][i * n + j] - s) / sqrt((double)n);
                worst = e > worst ? e : worst;
            }
        }
    }
    for (int i = 0; i < 6; i++)
        free(h[i]);
    free(z);
    return worst;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 512;
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    int red = argc > 3 && strcmp(argv[3], "--reductions") == 0;
    if (n < 2)
        n = 512;
    if (runs < 7)
        runs = 7;
    if (runs > 64)
        runs = 64;
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "shared_operand: nd_init failed: %s\n", nd_last_error());
        return 1;
    }
    nd_random_seed(2612);
    const char *names[2] = {"shared", "z_first"};
    double t[2][64];
    uint64_t kernels[2] = {0, 0}, values[2] = {0, 0};
    int ok = 1;
    for (int r = -1; r < runs && ok; r++) {
        for (int k = 0; k < 2 && ok; k++) {
            int v = (r + k) % 2 == 0 ? 0 : 1;
            nd_array *in[3];
            for (int i = 0; i < 3; i++)
                in[i] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
            ok = nd_sync() == ND_OK;
            nd_stats a, b;
            nd_get_stats(&a);
            nd_array *out[3] = {NULL, NULL, NULL};
            double t0 = bench_now();
            nd_status st = red      ? reductions(in[0], out, v)
                           : v == 0 ? suite_normalise_matmul_record(in[0], in[1], in[2], out)
                                    : z_first(in[0], in[1], in[2], out);
            ok = ok && st == ND_OK && nd_sync() == ND_OK;
            double dt = bench_now() - t0;
            nd_get_stats(&b);
            kernels[v] = b.kernels_run - a.kernels_run;
            values[v] = b.values_materialised - a.values_materialised;
            if (r >= 0)
                t[v][r] = dt;
            if (ok && r < 0 && v == 0) {
                double err = red ? reductions_check(in[0], out, n) : check(in[0], in[1], in[2], out, n);
                if (!(err <= 1e-4)) {
                    fprintf(stderr, "shared_operand: wrong answer: worst error %.3g\n", err);
                    ok = 0;
                }
            }
            for (int i = 0; i < 3; i++) {
                nd_free(out[i]);
                nd_free(in[i]);
            }
        }
    }
    char backend[32];
    snprintf(backend, sizeof backend, "%s", nd_backend_name());
    nd_shutdown();
    if (!ok) {
        fprintf(stderr, "shared_operand: failed: %s\n", nd_last_error());
        return 1;
    }
    double med[2];
    printf("shared_operand: %s, %" PRId64 "x%" PRId64 " float32, median of %d, backend %s\n",
           red ? "z = exp(sin(x))*cos(x) + 1; sum(z, 0), sum(z, 1)" : "z = (x - mean)/std; z@w1, z@w2, z.T@z", n,
           n, runs, backend);
    for (int k = 0; k < 2; k++) {
        med[k] = bench_median(t[k], runs);
        printf("  %-8s %9.3f ms  %2" PRIu64 " kernels, %2" PRIu64 " values written\n", names[k], 1e3 * med[k],
               kernels[k], values[k]);
    }
    printf("  shared / z_first: %.3fx\n", med[0] / med[1]);
    printf("JSON {\"bench\":\"shared_operand%s\",\"impl\":\"nd\",\"n\":%" PRId64 ",\"runs\":%d,\"shared_ms\":%.4f,"
           "\"z_first_ms\":%.4f,\"shared_kernels\":%" PRIu64 ",\"z_first_kernels\":%" PRIu64
           ",\"checked\":true,\"backend\":\"%s\"}\n",
           red ? "_reductions" : "", n, runs, 1e3 * med[0], 1e3 * med[1], kernels[0], kernels[1], backend);
    return 0;
}
