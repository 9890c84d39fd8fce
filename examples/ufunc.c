/*
 * ufunc.c — a user-defined elementwise function that fuses with nd's ops.
 *
 * A spectrum is a sum of Gaussian peaks: with centres x0[k] and widths
 * s[k], the model at sample x is sum_k gaussian(x, x0[k], s[k]). The
 * scalar function is written once, as C source, and nd compiles it for the
 * active backend (NVRTC on CUDA, the system C compiler on the CPU):
 *
 *     g = nd_ufunc_define("gaussian", "float(float x, float x0, float s)",
 *                         "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);")
 *
 * Called on x of shape (n,) and x0, s of shape (K, 1), it broadcasts to
 * (K, n) like any NumPy ufunc, and gaussian, the scaling by the peak
 * heights and the sum over the peaks are one kernel: no (K, n) array is
 * ever stored. A second loop for double inputs is added with the same
 * body (NumPy's ufunc.types), and nd picks it for float64 arrays.
 *
 * The program checks every sample against the same model computed here in
 * double, and that the chain ran as one kernel.
 *
 * Usage: ufunc [N]   (N samples, default 2^20)
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define K 3

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 20);
    if (n < 2) {
        fprintf(stderr, "usage: ufunc [N >= 2]\n");
        return 2;
    }
    const float centre[K] = {-2.0f, 0.5f, 3.0f}, width[K] = {0.3f, 1.0f, 0.6f};
    const float height[K] = {1.0f, 0.25f, 2.0f};

    nd_ufunc *g = nd_ufunc_define("gaussian", "float(float x, float x0, float s)",
                                  "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);");
    /* the same body for float64 inputs: the C math functions take double too */
    if (g && nd_ufunc_add_loop(g, "double(double x, double x0, double s)",
                               "return exp(-0.5*(x-x0)*(x-x0)/(s*s)) / (2.5066282746310002*s);") != ND_OK) {
        nd_ufunc_free(g);
        g = NULL;
    }
    if (!g) {
        fprintf(stderr, "ufunc: %s\n", nd_last_error());
        nd_shutdown();
        return 1;
    }

    nd_stats before, after;
    nd_scope_begin();
    nd_array *x = nd_linspace(ND_FLOAT32, -5.0, 5.0, n);
    nd_array *x0 = nd_from_host(centre, ND_FLOAT32, ND_SHAPE(K, 1));
    nd_array *s = nd_from_host(width, ND_FLOAT32, ND_SHAPE(K, 1));
    nd_array *h = nd_from_host(height, ND_FLOAT32, ND_SHAPE(K, 1));
    nd_sync(); /* inputs made: the count below is the model's kernels */
    nd_get_stats(&before);
    /* model[i] = sum_k h[k] * gaussian(x[i], x0[k], s[k]) */
    nd_array *peaks = nd_ufunc_call(g, 3, (nd_array *[]){x, x0, s});
    nd_array *model = nd_keep(nd_sum(nd_mul(h, peaks), 0));
    nd_scope_end();
    float *got = malloc((size_t)n * sizeof *got);
    double *got64 = malloc((size_t)n * sizeof *got64);
    nd_status st = got && got64 ? nd_to_host(model, got, (size_t)n * sizeof *got) : ND_ERR_OOM;
    nd_get_stats(&after);
    /* float64 inputs pick the double loop; Python floats fit either loop */
    nd_scope_begin();
    nd_array *wide = nd_keep(nd_ufunc_call(g, 3, (nd_array *[]){nd_linspace(ND_FLOAT64, -5.0, 5.0, n),
                                                                nd_scalar(0.0), nd_scalar(1.0)}));
    nd_scope_end();
    if (st == ND_OK) st = nd_to_host(wide, got64, (size_t)n * sizeof *got64);
    if (st != ND_OK) {
        fprintf(stderr, "ufunc: %s\n", nd_last_error());
        free(got);
        free(got64);
        nd_free(model);
        nd_free(wide);
        nd_ufunc_free(g);
        nd_shutdown();
        return 1;
    }

    double worst = 0, worst64 = 0;
    for (int64_t i = 0; i < n; i++) {
        double xi = -5.0 + 10.0 * (double)i / (double)(n - 1), want = 0;
        for (int k = 0; k < K; k++) {
            double d = (xi - centre[k]) / width[k];
            want += height[k] * exp(-0.5 * d * d) / (sqrt(2 * M_PI) * width[k]);
        }
        double err = fabs((double)got[i] - want) / (fabs(want) + 1e-3);
        if (err > worst) worst = err;
        double w64 = exp(-0.5 * xi * xi) / sqrt(2 * M_PI);
        double err64 = fabs(got64[i] - w64) / (fabs(w64) + 1e-300);
        if (err64 > worst64) worst64 = err64;
    }
    unsigned long long kernels = (unsigned long long)(after.kernels_run - before.kernels_run);
    printf("ufunc: %lld samples, %d gaussian peaks on %s\n", (long long)n, K, nd_backend_name());
    printf("  model[n/2] = %.6f, worst relative error %.2e (float32), %.2e (float64 loop)\n",
           (double)got[n / 2], worst, worst64);
    printf("  gaussian * heights, summed over the peaks: %llu kernel(s)\n", kernels);
    free(got);
    free(got64);
    nd_free(model);
    nd_free(wide);
    nd_ufunc_free(g);
    nd_shutdown();
    return worst <= 1e-5 && worst64 <= 1e-12 && kernels == 1 ? 0 : 1;
}
