/*
 * kmeans.c — Lloyd's k-means on N points in D dimensions with nd: each
 * iteration assigns every point to its nearest centroid (argmin over the
 * (N, K) squared distances) and moves each centroid to the mean of its
 * points, summed with nd_add_at (np.add.at: a bincount with weights, in
 * point order) instead of a one-hot matmul; the final inertia reads the
 * centroids back per point with nd_take. A float64 host reference runs the
 * same iterations on the same points and the program checks labels,
 * centroids and inertia against it.
 *
 * Usage: kmeans [N [K [D [ITERS]]]]   (default 1000000 16 4 20)
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "kmeans: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* splitmix64: the same points on every run and backend. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

/* N points around K well-separated blob centres (uniform noise of width 1
 * around centres 10 apart). */
static void make_points(double *x, int64_t n, int k, int d)
{
    uint64_t s = 42;
    double *centre = malloc(sizeof *centre * (size_t)(k * d));
    for (int c = 0; c < k * d; c++) centre[c] = 10.0 * (double)(next_u64(&s) % 16);
    for (int64_t i = 0; i < n; i++) {
        int c = (int)(next_u64(&s) % (uint64_t)k);
        for (int j = 0; j < d; j++) x[i * d + j] = centre[c * d + j] + next_unit(&s) - 0.5;
    }
    free(centre);
}

/* The host reference: the same algorithm in float64, sums in point order. */
static void reference(const double *x, int64_t n, int k, int d, int iters, double *c, int64_t *label,
                      double *inertia)
{
    double *sum = malloc(sizeof *sum * (size_t)(k * d)), *cnt = malloc(sizeof *cnt * (size_t)k);
    for (int c0 = 0; c0 < k; c0++)
        memcpy(c + c0 * d, x + (n * c0 / k) * d, sizeof *c * (size_t)d);
    for (int it = 0; it < iters; it++) {
        for (int64_t i = 0; i < n; i++) {
            double best = INFINITY;
            for (int c0 = 0; c0 < k; c0++) {
                double s = 0;
                for (int j = 0; j < d; j++) {
                    double t = x[i * d + j] - c[c0 * d + j];
                    s += t * t;
                }
                if (s < best) best = s, label[i] = c0;
            }
        }
        memset(sum, 0, sizeof *sum * (size_t)(k * d));
        memset(cnt, 0, sizeof *cnt * (size_t)k);
        for (int64_t i = 0; i < n; i++) {
            cnt[label[i]] += 1;
            for (int j = 0; j < d; j++) sum[label[i] * d + j] += x[i * d + j];
        }
        for (int c0 = 0; c0 < k; c0++)
            if (cnt[c0] > 0)
                for (int j = 0; j < d; j++) c[c0 * d + j] = sum[c0 * d + j] / cnt[c0];
    }
    *inertia = 0;
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < d; j++) {
            double t = x[i * d + j] - c[label[i] * d + j];
            *inertia += t * t;
        }
    free(sum);
    free(cnt);
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    int k = argc > 2 ? atoi(argv[2]) : 16, d = argc > 3 ? atoi(argv[3]) : 4;
    int iters = argc > 4 ? atoi(argv[4]) : 20;
    if (n < 1 || k < 1 || k > n || d < 1 || iters < 1) {
        fprintf(stderr, "usage: kmeans [N >= 1 [1 <= K <= N [D >= 1 [ITERS >= 1]]]]\n");
        return 2;
    }
    double *hx = malloc(sizeof *hx * (size_t)(n * d));
    double *rc = malloc(sizeof *rc * (size_t)(k * d)), *gc = malloc(sizeof *gc * (size_t)(k * d));
    int64_t *rl = malloc(sizeof *rl * (size_t)n), *gl = malloc(sizeof *gl * (size_t)n);
    if (!hx || !rc || !gc || !rl || !gl) {
        fprintf(stderr, "kmeans: out of host memory\n");
        return 1;
    }
    make_points(hx, n, k, d);

    nd_array *x = nd_from_host(hx, ND_FLOAT64, ND_SHAPE(n, d));
    if (!x || nd_sync() != ND_OK) return fail("uploading the points");
    double t0 = now_seconds();
    /* Initial centroids: points n*c/k, gathered. */
    nd_scope_begin();
    nd_array *pick = nd_floor_divide(nd_mul(nd_arange(ND_INT64, 0, (double)k, 1), nd_scalar_int(n)), nd_scalar_int(k));
    nd_array *c = nd_keep(nd_take(x, pick, 0));
    nd_scope_end();
    nd_array *labels = NULL;
    nd_array *xs = nd_reshape(x, 3, (int64_t[]){n, 1, d}); /* (N, 1, D) */
    for (int it = 0; it < iters; it++) {
        nd_scope_begin();
        nd_array *cs = nd_reshape(c, 3, (int64_t[]){1, k, d});             /* (1, K, D) */
        nd_array *dist = nd_sum(nd_square(nd_sub(xs, cs)), 2);            /* (N, K) */
        nd_array *lab = nd_keep(nd_argmin(dist, 1));                       /* (N,) int64 */
        nd_array *sums = nd_keep(nd_zeros(ND_FLOAT64, ND_SHAPE(k, d)));
        nd_array *counts = nd_keep(nd_zeros(ND_FLOAT64, ND_SHAPE(k, 1)));
        nd_status st = nd_add_at(sums, lab, x);
        if (st == ND_OK) st = nd_add_at(counts, lab, nd_scalar(1.0));
        /* An empty cluster keeps its centroid. Stored into c (a new
         * version of its buffer): a lazy centroid expression would be
         * recomputed inside the next iteration's distance kernel. */
        if (st == ND_OK) st = nd_assign(c, nd_where(nd_gt(counts, nd_scalar(0)), nd_div(sums, counts), c));
        nd_scope_end();
        if (st != ND_OK) return fail("an iteration");
        nd_free(sums);
        nd_free(counts);
        nd_free(labels);
        labels = lab;
    }
    nd_scope_begin();
    nd_array *err = nd_sub(x, nd_take(c, labels, 0));
    double inertia = nd_item(nd_sum(nd_square(err), ND_ALL_AXES));
    nd_scope_end();
    double t1 = now_seconds();
    if (nd_last_status() != ND_OK) return fail("k-means");
    if (nd_to_host(c, gc, sizeof *gc * (size_t)(k * d)) != ND_OK ||
        nd_to_host(labels, gl, sizeof *gl * (size_t)n) != ND_OK)
        return fail("reading the result");

    double r_inertia;
    double t2 = now_seconds();
    reference(hx, n, k, d, iters, rc, rl, &r_inertia);
    double t3 = now_seconds();
    int64_t moved_labels = 0;
    double cerr = 0;
    for (int64_t i = 0; i < n; i++) moved_labels += gl[i] != rl[i];
    for (int j = 0; j < k * d; j++) cerr = fmax(cerr, fabs(gc[j] - rc[j]) / (fabs(rc[j]) + 1));
    double ierr = fabs(inertia - r_inertia) / r_inertia;
    printf("kmeans: N=%lld K=%d D=%d, %d iterations on %s: %.3f s (host reference %.3f s)\n", (long long)n, k, d,
           iters, nd_backend_name(), t1 - t0, t3 - t2);
    printf("inertia %.10g (reference %.10g, rel. error %.2g); labels differing: %lld; max centroid error %.2g\n",
           inertia, r_inertia, ierr, (long long)moved_labels, cerr);
    int ok = moved_labels == 0 && cerr <= 1e-9 && ierr <= 1e-9;
    nd_free(x);
    nd_free(xs);
    nd_free(c);
    nd_free(labels);
    nd_shutdown();
    free(hx);
    free(rc);
    free(gc);
    free(rl);
    free(gl);
    if (!ok) {
        fprintf(stderr, "kmeans: result does not match the float64 reference\n");
        return 1;
    }
    return 0;
}
