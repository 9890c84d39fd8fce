/*
 * richardson_lucy.c — Richardson-Lucy deconvolution of a synthetic blurred
 * image, float32, with nd_convolve_nd:
 *
 *     d = convolve(x_true, psf, 'same')                 (the observed image)
 *     u = 0.5 everywhere
 *     repeat: u = u * convolve(d / convolve(u, psf, 'same'), psf[::-1, ::-1], 'same')
 *
 * The same iterations run on the host in float64 with plain loops; the
 * program exits 1 if nd's float32 answer differs from them by more than
 * 1e-3 of the image's peak, or if deconvolution did not bring u closer to
 * the true image than the blurred one is.
 *
 * ND_CONV_AUTO picks the method per size: a small PSF (the default 9 x 9
 * on 512 x 512) is the direct method's one fused kernel per convolution, a
 * large one (K >= 11 on 512 x 512, K = 25 on 64 x 64) goes through
 * the FFT (rfft2 of both, a fused product, irfft2), with nothing to change
 * here.
 *
 * Usage: richardson_lucy [N] [ITERS] [K]   (defaults 512 30 9: an N x N
 * image, a K x K Gaussian point-spread function)
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
    fprintf(stderr, "richardson_lucy: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* out = convolve(a, v, 'same') for an n x n a and a k x k v, in float64. */
static void conv_same(const double *a, const double *v, double *out, int n, int k) {
    const int s = (k - 1) / 2;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int p = 0; p < k; p++) {
                const int y = i + s - p;
                if (y < 0 || y >= n) continue;
                for (int q = 0; q < k; q++) {
                    const int x = j + s - q;
                    if (x >= 0 && x < n) acc += a[y * n + x] * v[p * k + q];
                }
            }
            out[i * n + j] = acc;
        }
}

static double rms_diff(const double *x, const double *y, int64_t count) {
    double s = 0;
    for (int64_t i = 0; i < count; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
    return sqrt(s / (double)count);
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 512, iters = argc > 2 ? atoi(argv[2]) : 30;
    const int k = argc > 3 ? atoi(argv[3]) : 9;
    if (n < 8 || iters < 1 || k < 1 || k > n) {
        fprintf(stderr, "usage: richardson_lucy [N >= 8] [ITERS >= 1] [1 <= K <= N]\n");
        return 2;
    }
    const int64_t count = (int64_t)n * n;
    double *truth = malloc(sizeof(double) * (size_t)count), *psf = malloc(sizeof(double) * (size_t)(k * k));
    double *obs = malloc(sizeof(double) * (size_t)count), *u = malloc(sizeof(double) * (size_t)count);
    double *tmp = malloc(sizeof(double) * (size_t)count), *psf_flip = malloc(sizeof(double) * (size_t)(k * k));
    float *f = malloc(sizeof(float) * (size_t)count);
    if (!truth || !psf || !obs || !u || !tmp || !psf_flip || !f) return 1;
    /* A dim background, a few bright discs and a bar. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = 0.1;
            const double cy[3] = {0.3, 0.6, 0.7}, cx[3] = {0.3, 0.7, 0.25}, rad[3] = {0.08, 0.12, 0.05};
            for (int b = 0; b < 3; b++) {
                const double dy = (double)i / n - cy[b], dx = (double)j / n - cx[b];
                if (dy * dy + dx * dx < rad[b] * rad[b]) v += 1.0 + b * 0.5;
            }
            if (i > n / 8 && i < n / 8 + n / 32 + 1 && j > n / 2) v += 2.0;
            truth[i * n + j] = v;
        }
    /* A normalised Gaussian point-spread function. */
    double total = 0;
    const double sigma = k / 4.0;
    for (int p = 0; p < k; p++)
        for (int q = 0; q < k; q++) {
            const double dy = p - (k - 1) / 2.0, dx = q - (k - 1) / 2.0;
            total += psf[p * k + q] = exp(-(dy * dy + dx * dx) / (2 * sigma * sigma));
        }
    for (int i = 0; i < k * k; i++) psf[i] /= total;
    for (int i = 0; i < k * k; i++) psf_flip[i] = psf[k * k - 1 - i];
    /* The observed image, rounded to float32 as nd will see it. */
    conv_same(truth, psf, obs, n, k);
    for (int64_t i = 0; i < count; i++) obs[i] = (float)obs[i];

    if (nd_init(NULL) != ND_OK) return fail("nd_init");
    for (int64_t i = 0; i < count; i++) f[i] = (float)obs[i];
    nd_array *d = nd_from_host(f, ND_FLOAT32, 2, (int64_t[]){n, n});
    float fpsf[k * k];
    for (int i = 0; i < k * k; i++) fpsf[i] = (float)psf[i];
    nd_array *h = nd_from_host(fpsf, ND_FLOAT32, 2, (int64_t[]){k, k});
    nd_array *h_flip = nd_flip(h, ND_ALL_AXES); /* a view */
    nd_array *est = nd_full(ND_FLOAT32, 2, (int64_t[]){n, n}, 0.5);
    nd_array *tiny = nd_scalar(1e-12);
    for (int t = 0; t < iters; t++) {
        nd_scope_begin();
        nd_array *blurred = nd_convolve_nd(est, h, ND_CONV_SAME, ND_CONV_AUTO);
        nd_array *ratio = nd_div(d, nd_maximum(blurred, tiny));
        nd_array *next = nd_keep(nd_mul(est, nd_convolve_nd(ratio, h_flip, ND_CONV_SAME, ND_CONV_AUTO)));
        nd_scope_end();
        nd_free(est);
        est = next;
        if (!est) return fail("an iteration");
        nd_flush(); /* let the device run while the next iteration is recorded */
    }
    if (nd_to_host(est, f, sizeof(float) * (size_t)count) != ND_OK) return fail("reading the estimate");

    /* The float64 reference iterations. */
    for (int64_t i = 0; i < count; i++) u[i] = 0.5;
    double *ratio = malloc(sizeof(double) * (size_t)count);
    for (int t = 0; t < iters; t++) {
        conv_same(u, psf, tmp, n, k);
        for (int64_t i = 0; i < count; i++) ratio[i] = obs[i] / (tmp[i] > 1e-12 ? tmp[i] : 1e-12);
        conv_same(ratio, psf_flip, tmp, n, k);
        for (int64_t i = 0; i < count; i++) u[i] *= tmp[i];
    }
    double peak = 0, worst = 0;
    for (int64_t i = 0; i < count; i++) {
        peak = fmax(peak, fabs(u[i]));
        worst = fmax(worst, fabs((double)f[i] - u[i]));
        tmp[i] = f[i];
    }
    const double before = rms_diff(obs, truth, count), after = rms_diff(tmp, truth, count);
    printf("richardson_lucy %dx%d, %d iterations, %dx%d psf: rms error to the true image %.4f (blurred) -> %.4f; "
           "max |nd float32 - float64 reference| = %.3g (peak %.3g)\n", n, n, iters, k, k, before, after, worst,
           peak);
    const int bad = !(worst <= 1e-3 * peak) || !(after < before);
    if (bad) fprintf(stderr, "richardson_lucy: FAILED (%s)\n", after < before ? "differs from the reference"
                                                                             : "no sharper than the blurred image");
    nd_free(d), nd_free(h), nd_free(h_flip), nd_free(est), nd_free(tiny);
    nd_shutdown();
    free(truth), free(psf), free(obs), free(u), free(tmp), free(psf_flip), free(f), free(ratio);
    return bad;
}
