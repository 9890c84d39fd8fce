/* bincount, histogram (bin count and range; explicit edges),
 * histogram_bin_edges and histogram2d against references written here:
 * bins found by a binary search over np.linspace's edges (computed as
 * NumPy does, i * step + lo in float64 rounded to the bin dtype) with the
 * last bin closed, counts in int64 and weights summed in float64; and
 * NumPy 2.4's printed results for the edge cases. */
#include "common.h"

/* Bin of x among ne sorted edges, NumPy's searchsorted rules; -1 outside. */
static int64_t ref_bin(double x, const double *e, int64_t ne) {
    if (x == e[ne - 1]) return ne - 2;
    int64_t k = 0;
    while (k < ne && !(x < e[k])) k++;
    return k >= 1 && k <= ne - 1 ? k - 1 : -1;
}

/* np.linspace(lo, hi, bins + 1) rounded to t. */
static double *ref_edges(double lo, double hi, int64_t bins, nd_dtype t) {
    double *e = malloc(sizeof(double) * (size_t)(bins + 1));
    for (int64_t i = 0; i <= bins; i++) e[i] = ref_round_to(t, i == bins ? hi : (double)i * ((hi - lo) / bins) + lo);
    return e;
}

static void expect_counts(nd_array *h, const double *want, int64_t n, double tol, const char *what) {
    cr_assert(h, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_ndim(h), 1, "%s", what);
    cr_assert_eq(nd_shape(h)[0], n, "%s: %lld bins, want %lld", what, (long long)nd_shape(h)[0], (long long)n);
    ref_arr *got = ndt_download(h);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++) {
        double g = ref_getd(got, i);
        if (fabs(g - want[i]) > tol) {
            cr_expect(0, "%s: bin %lld: got %.17g, want %.17g", what, (long long)i, g, want[i]);
            bad++;
        }
    }
    ref_free(got);
}

NDT_TEST(histograms, bincount) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_INT64, ND_INT32, ND_UINT8, ND_INT8, ND_BOOL, ND_UINT32};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        int64_t n = ndt_int(&r, 1, 5000);
        ref_arr *rx = ndt_rand(&r, dts[d], 1, &n, 0, dts[d] == ND_BOOL ? 1 : 100);
        ref_arr *rw = ndt_rand(&r, ND_FLOAT32, 1, &n, -2, 2);
        int64_t mx = 0;
        for (int64_t i = 0; i < n; i++) mx = ref_getd(rx, i) > mx ? (int64_t)ref_getd(rx, i) : mx;
        for (int variant = 0; variant < 3; variant++) {
            int64_t minlength = variant == 2 ? mx + 7 : variant;
            int64_t len = mx + 1 > minlength ? mx + 1 : minlength;
            double *want = calloc((size_t)len, sizeof(double)), *mag = calloc((size_t)len, sizeof(double));
            for (int64_t i = 0; i < n; i++) {
                int64_t b = (int64_t)ref_getd(rx, i);
                want[b] += variant == 1 ? ref_getd(rw, i) : 1;
                mag[b] += fabs(ref_getd(rw, i));
            }
            nd_array *x = ndt_upload(rx), *w = variant == 1 ? ndt_upload(rw) : NULL;
            nd_array *h = nd_bincount(x, w, minlength);
            cr_assert(h, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(h), variant == 1 ? ND_FLOAT64 : ND_INT64);
            double tol = 0;
            for (int64_t b = 0; b < len && variant == 1; b++) tol = fmax(tol, mag[b] * 1e-14);
            expect_counts(h, want, len, tol, ref_dtype_name(dts[d]));
            nd_free(h);
            nd_free(x);
            nd_free(w);
            free(want);
            free(mag);
        }
        ref_free(rx);
        ref_free(rw);
    }
    /* Empty: minlength bins of 0. */
    int64_t zero = 0;
    nd_array *e = nd_zeros(ND_INT64, 1, &zero), *h = nd_bincount(e, NULL, 3);
    double z[3] = {0};
    expect_counts(h, z, 3, 0, "empty");
    nd_free(h);
    h = nd_bincount(e, NULL, 0);
    expect_counts(h, z, 0, 0, "empty, minlength 0");
    nd_free(h);
    nd_free(e);
}

/* Random data in float32 and float64 over ranges that cut it, with values
 * on the edges, outside the range, NaN and inf. */
NDT_TEST(histograms, uniform_bins) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT32, ND_FLOAT64, ND_INT32, ND_FLOAT16};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int trial = 0; trial < 3; trial++) {
            int64_t n = ndt_int(&r, 100, 20000), bins = ndt_int(&r, 1, 300);
            double lo = ndt_uniform(&r, -4, 0), hi = lo + ndt_uniform(&r, 0.5, 6);
            ref_arr *ra = ndt_rand(&r, dts[d], 1, &n, -5, 5);
            nd_dtype bt = dts[d] == ND_FLOAT64 || dts[d] == ND_INT32 ? ND_FLOAT64 : ND_FLOAT32;
            double *e = ref_edges(lo, hi, bins, bt);
            /* Some values exactly on edges, at hi, and special ones. */
            for (int k = 0; k < 40; k++) ref_setd(ra, ndt_int(&r, 0, n - 1), e[ndt_int(&r, 0, bins)]);
            if (ref_is_float(dts[d])) {
                ref_setd(ra, 0, NAN);
                ref_setd(ra, 1, INFINITY);
                ref_setd(ra, 2, -INFINITY);
            }
            ref_arr *rw = ndt_rand(&r, ND_FLOAT64, 1, &n, 0, 1);
            double *want = calloc((size_t)bins, sizeof(double)), *wsum = calloc((size_t)bins, sizeof(double));
            for (int64_t i = 0; i < n; i++) {
                double x = ref_round_to(bt, ref_getd(ra, i)); /* the value in the bin dtype */
                int64_t b = isnan(x) ? -1 : ref_bin(x, e, bins + 1);
                if (b < 0) continue;
                want[b] += 1;
                wsum[b] += ref_getd(rw, i);
            }
            nd_array *a = ndt_upload(ra), *w = ndt_upload(rw);
            nd_array *h = nd_histogram(a, bins, lo, hi, NULL);
            cr_assert(h, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(h), ND_INT64);
            expect_counts(h, want, bins, 0, ref_dtype_name(dts[d]));
            nd_free(h);
            h = nd_histogram(a, bins, lo, hi, w);
            cr_expect_eq(nd_dtype_of(h), ND_FLOAT64);
            expect_counts(h, wsum, bins, 1e-9, "weighted");
            nd_free(h);
            /* The edges nd returns are the ones binned against. */
            nd_array *be = nd_histogram_bin_edges(a, bins, lo, hi);
            cr_assert(be, "%s", nd_last_error());
            cr_expect_eq(nd_dtype_of(be), bt);
            expect_counts(be, e, bins + 1, 0, "bin edges");
            nd_free(be);
            /* The same edges given explicitly bin the same way. */
            ref_arr *re = ref_from_doubles(bt, 1, (int64_t[]){bins + 1}, e);
            nd_array *ea = ndt_upload(re);
            h = nd_histogram_by_edges(a, ea, NULL);
            expect_counts(h, want, bins, 0, "explicit edges");
            nd_free(h);
            nd_free(ea);
            ref_free(re);
            nd_free(a);
            nd_free(w);
            free(want);
            free(wsum);
            free(e);
            ref_free(ra);
            ref_free(rw);
        }
}

/* NumPy 2.4's printed results. */
NDT_TEST(histograms, numpy_cases) {
    int64_t n6 = 6, n2 = 2, n4 = 4;
    nd_array *a = nd_from_host((double[]){0, 1, NAN, 3, 3.5, -1}, ND_FLOAT64, 1, &n6);
    nd_array *h = nd_histogram(a, 3, 0, 3, NULL); /* [1 1 1] */
    expect_counts(h, (double[]){1, 1, 1}, 3, 0, "hist with nan and outside");
    nd_free(h);
    nd_free(a);
    a = nd_from_host((double[]){1, 1}, ND_FLOAT64, 1, &n2);
    h = nd_histogram(a, 2, 1, 1, NULL); /* [0 2], edges [0.5 1 1.5] */
    expect_counts(h, (double[]){0, 2}, 2, 0, "equal range ends");
    nd_free(h);
    h = nd_histogram_bin_edges(a, 2, 1, 1);
    expect_counts(h, (double[]){0.5, 1, 1.5}, 3, 0, "equal range ends: edges");
    nd_free(h);
    h = nd_histogram(a, 2, NAN, NAN, NULL); /* range from the data: [0 2] */
    expect_counts(h, (double[]){0, 2}, 2, 0, "range from the data");
    nd_free(h);
    nd_free(a);
    a = nd_from_host((double[]){0, 1, 1, 2}, ND_FLOAT64, 1, &n4);
    nd_array *e = nd_from_host((double[]){0, 1, 1, 2}, ND_FLOAT64, 1, &n4);
    h = nd_histogram_by_edges(a, e, NULL); /* [1 0 3] */
    expect_counts(h, (double[]){1, 0, 3}, 3, 0, "repeated edge");
    nd_free(h);
    nd_free(e);
    nd_free(a);
    /* np.histogram2d([0,1,2,nan], [0,1,3,1], bins=(2,3), range=((0,2),(0,3)))
     * = [[1 0 0] [0 1 1]] */
    nd_array *x = nd_from_host((double[]){0, 1, 2, NAN}, ND_FLOAT64, 1, &n4);
    nd_array *y = nd_from_host((float[]){0, 1, 3, 1}, ND_FLOAT32, 1, &n4);
    h = nd_histogram2d(x, y, 2, 3, (double[]){0, 2, 0, 3}, NULL);
    cr_assert(h, "%s", nd_last_error());
    cr_expect(nd_ndim(h) == 2 && nd_shape(h)[0] == 2 && nd_shape(h)[1] == 3 && nd_dtype_of(h) == ND_FLOAT64);
    double got[6] = {0}, want[6] = {1, 0, 0, 0, 1, 1};
    cr_assert_eq(nd_to_host(h, got, sizeof got), ND_OK);
    for (int i = 0; i < 6; i++) cr_expect_eq(got[i], want[i], "histogram2d[%d]: %g, NumPy %g", i, got[i], want[i]);
    nd_free(h);
    nd_free(x);
    nd_free(y);
}

NDT_TEST(histograms, histogram2d_random) {
    NDT_RNG(r);
    int64_t n = 10000, nx = 7, ny = 13;
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, 1, &n, -1, 3), *ry = ndt_rand(&r, ND_FLOAT32, 1, &n, 0, 5);
    ref_arr *rw = ndt_rand(&r, ND_FLOAT64, 1, &n, -1, 1);
    double *ex = ref_edges(0, 2, nx, ND_FLOAT64), *ey = ref_edges(1, 4, ny, ND_FLOAT64);
    double *want = calloc((size_t)(nx * ny), sizeof(double)), *wsum = calloc((size_t)(nx * ny), sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t bx = ref_bin(ref_getd(rx, i), ex, nx + 1), by = ref_bin(ref_getd(ry, i), ey, ny + 1);
        if (bx < 0 || by < 0) continue;
        want[bx * ny + by] += 1;
        wsum[bx * ny + by] += ref_getd(rw, i);
    }
    nd_array *x = ndt_upload(rx), *y = ndt_upload(ry), *w = ndt_upload(rw);
    const double range[4] = {0, 2, 1, 4};
    nd_array *h = nd_histogram2d(x, y, nx, ny, range, NULL), *hw = nd_histogram2d(x, y, nx, ny, range, w);
    cr_assert(h && hw, "%s", nd_last_error());
    nd_array *hf = nd_reshape(h, 1, (int64_t[]){-1}), *hwf = nd_reshape(hw, 1, (int64_t[]){-1});
    expect_counts(hf, want, nx * ny, 0, "histogram2d");
    expect_counts(hwf, wsum, nx * ny, 1e-9, "histogram2d weighted");
    nd_free(hf);
    nd_free(hwf);
    nd_free(h);
    nd_free(hw);
    nd_free(x);
    nd_free(y);
    nd_free(w);
    free(want);
    free(wsum);
    free(ex);
    free(ey);
    ref_free(rx);
    ref_free(ry);
    ref_free(rw);
}

/* Float weights are summed in one fixed order: the same bits on every run
 * and for any number of CPU threads. */
NDT_TEST(histograms, weighted_deterministic) {
    NDT_RNG(r);
    int64_t n = 400000;
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, 1, &n, 0, 1), *rw = ndt_rand(&r, ND_FLOAT64, 1, &n, -1e3, 1e3);
    double first[64];
    const int threads[] = {0, 1, 3};
    for (int run = 0; run < 3; run++) {
        if (!ndt_backend_is_cuda()) {
            nd_config cfg = {0};
            cfg.num_threads = threads[run];
            ndt_restart(&cfg);
        }
        nd_array *a = ndt_upload(ra), *w = ndt_upload(rw), *h = nd_histogram(a, 64, 0, 1, w);
        double got[64];
        cr_assert_eq(nd_to_host(h, got, sizeof got), ND_OK, "%s", nd_last_error());
        if (run == 0) memcpy(first, got, sizeof got);
        else cr_expect(memcmp(first, got, sizeof got) == 0, "run %d differs from run 0", run);
        nd_free(h);
        nd_free(a);
        nd_free(w);
    }
    ref_free(ra);
    ref_free(rw);
}

NDT_TEST(histograms, bad_arguments) {
    int64_t n3 = 3, sh2[2] = {2, 2};
    nd_array *a = nd_from_host((double[]){0, 1, 2}, ND_FLOAT64, 1, &n3);
    nd_array *ints = nd_from_host((int64_t[]){0, -4, 2}, ND_INT64, 1, &n3);
    nd_array *m = nd_zeros(ND_INT64, 2, sh2), *w2 = nd_zeros(ND_FLOAT64, 2, sh2);
    cr_expect_null(nd_histogram(a, 0, 0, 1, NULL));
    cr_expect(strstr(nd_last_error(), "bins must be positive, got 0"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram");
    cr_expect_null(nd_histogram(a, 3, 2, 1, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram");
    cr_expect_null(nd_histogram(a, 3, 0, INFINITY, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram");
    cr_expect_null(nd_histogram(NULL, 3, 0, 1, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram");
    cr_expect_null(nd_histogram(a, 3, 0, 1, w2));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_histogram");
    nd_array *nan = nd_from_host((double[]){0, NAN, 2}, ND_FLOAT64, 1, &n3);
    cr_expect_null(nd_histogram(nan, 3, NAN, NAN, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram");
    cr_expect_null(nd_bincount(ints, NULL, 0));
    cr_expect(strstr(nd_last_error(), "-4"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_bincount");
    cr_expect_null(nd_bincount(a, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_bincount");
    cr_expect_null(nd_bincount(m, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_bincount");
    cr_expect_null(nd_bincount(NULL, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_bincount");
    nd_array *pos = nd_from_host((int64_t[]){0, 4, 2}, ND_INT64, 1, &n3);
    cr_expect_null(nd_bincount(pos, NULL, -1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_bincount");
    nd_array *down = nd_from_host((double[]){0, 2, 1}, ND_FLOAT64, 1, &n3);
    cr_expect_null(nd_histogram_by_edges(a, down, NULL));
    cr_expect(strstr(nd_last_error(), "edge 1 (2) is above edge 2 (1)"), "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram_by_edges");
    cr_expect_null(nd_histogram2d(a, m, 2, 2, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_histogram2d");
    cr_expect_null(nd_histogram2d(a, a, 2, -1, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_histogram2d");
    nd_free(down);
    nd_free(pos);
    nd_free(nan);
    nd_free(a);
    nd_free(ints);
    nd_free(m);
    nd_free(w2);
}
