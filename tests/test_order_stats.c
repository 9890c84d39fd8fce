/* Order statistics (include/nd/statistics.h: median, quantile, percentile
 * and their nan forms): values from NumPy 2.4 written in, and random
 * arrays against a reference in C (the sorted row by plain comparisons and
 * NumPy's linear interpolation formula, in float64 or float32 as NumPy
 * computes). NaN rows, all-NaN rows, empty axes, every dtype kind, axes
 * including negative ones and the flattened array, views, bad arguments. */
#include "sort_ref.h"

/* Checks got and frees it (callers pass the call that makes it). */
static void expect_doubles(nd_array *got, nd_dtype dt, int ndim, const int64_t *shape, const double *want,
                           double rtol, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_expect_eq(nd_dtype_of(got), dt, "%s: dtype %s", what, nd_dtype_name(nd_dtype_of(got)));
    cr_assert_eq(nd_ndim(got), ndim, "%s: ndim %d", what, nd_ndim(got));
    for (int d = 0; d < ndim; d++) cr_assert_eq(nd_shape(got)[d], shape[d], "%s: shape[%d]", what, d);
    ref_arr *g = ndt_download(got);
    for (int64_t i = 0; i < g->size; i++) {
        double v = ref_getd(g, i);
        int ok = isnan(want[i]) ? isnan(v) : v == want[i] || fabs(v - want[i]) <= rtol * (1 + fabs(want[i]));
        cr_expect(ok, "%s [%lld]: %.17g, NumPy %.17g", what, (long long)i, v, want[i]);
    }
    ref_free(g);
    nd_free(got);
}

NDT_TEST(order_stats, known_values_from_numpy) {
    double v[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, NAN, 2, 7, 1, 8, 2};
    int64_t s[2] = {3, 5}, three[1] = {3}, five[1] = {5}, q3[2] = {3, 5};
    nd_array *a = nd_from_host(v, ND_FLOAT64, 2, s);
    expect_doubles(nd_median(a, 1), ND_FLOAT64, 1, three, (double[]){3, NAN, 2}, 0, "median axis 1");
    expect_doubles(nd_nanmedian(a, -1), ND_FLOAT64, 1, three, (double[]){3, 5.5, 2}, 0, "nanmedian");
    expect_doubles(nd_quantile(a, 0.3, 1), ND_FLOAT64, 1, three, (double[]){1.4, NAN, 2}, 1e-15, "quantile");
    expect_doubles(nd_nanquantile(a, 0.3, 1), ND_FLOAT64, 1, three, (double[]){1.4, 4.7, 2}, 1e-15, "nanquantile");
    const double p[] = {10, 50, 99};
    expect_doubles(nd_percentiles(a, 3, p, 0), ND_FLOAT64, 2, q3,
                   (double[]){2.2, 1.2, 1.6, 1.8, NAN, 3, 2, 4, 5, NAN, 8.88, 6.9, 5.96, 7.94, NAN}, 1e-15,
                   "percentiles axis 0");
    expect_doubles(nd_nanpercentiles(a, 3, p, -2), ND_FLOAT64, 2, q3,
                   (double[]){2.2, 1.2, 1.6, 1.8, 2.3, 3, 2, 4, 5, 3.5, 8.88, 6.9, 5.96, 7.94, 4.97}, 1e-15,
                   "nanpercentiles");
    expect_doubles(nd_median(a, ND_ALL_AXES), ND_FLOAT64, 0, NULL, (double[]){NAN}, 0, "median flat");
    expect_doubles(nd_nanmedian(a, ND_ALL_AXES), ND_FLOAT64, 0, NULL, (double[]){3.5}, 0, "nanmedian flat");
    expect_doubles(nd_nanquantile(a, 0.77, ND_ALL_AXES), ND_FLOAT64, 0, NULL, (double[]){6.01}, 1e-15, "nanquantile flat");
    (void)five;
    /* float32 computes in float32 (NumPy: 0.21100001, bits 1045958755) */
    float f[] = {0.1f, 0.7f, 0.3f, 0.2f};
    int64_t four = 4;
    nd_array *fa = nd_from_host(f, ND_FLOAT32, 1, &four), *fq = nd_quantile(fa, 0.37, 0);
    cr_assert(fq && nd_dtype_of(fq) == ND_FLOAT32);
    float got;
    nd_to_host(fq, &got, sizeof got);
    uint32_t bits;
    memcpy(&bits, &got, 4);
    cr_expect_eq(bits, 1045958755u, "float32 quantile bits %u (%.9g)", bits, got);
    expect_doubles(nd_median(fa, 0), ND_FLOAT32, 0, NULL, (double[]){0.25}, 1e-7, "float32 median");
    /* integers give float64 */
    int32_t iv[] = {1, 2, 3, 4, 10, -3, 7, 7};
    int64_t s24[2] = {2, 4}, two[1] = {2};
    nd_array *ia = nd_from_host(iv, ND_INT32, 2, s24);
    expect_doubles(nd_median(ia, -1), ND_FLOAT64, 1, two, (double[]){2.5, 7}, 0, "int median");
    expect_doubles(nd_quantile(ia, 0.5, 0), ND_FLOAT64, 1, &four, (double[]){5.5, -0.5, 5, 5.5}, 0, "int quantile");
    /* float16 stays float16 */
    double hv[] = {1, 2, 3, 4};
    nd_array *h64 = nd_from_host(hv, ND_FLOAT64, 1, &four), *h = nd_astype(h64, ND_FLOAT16);
    expect_doubles(nd_median(h, 0), ND_FLOAT16, 0, NULL, (double[]){2.5}, 0, "float16 median");
    expect_doubles(nd_quantile(h, 0.1, 0), ND_FLOAT16, 0, NULL, (double[]){1.2998046875}, 0, "float16 quantile");
    /* infinities: NumPy's interpolation gives NaN where it subtracts them */
    double inf2[] = {1, INFINITY};
    int64_t n2 = 2;
    nd_array *ia2 = nd_from_host(inf2, ND_FLOAT64, 1, &n2);
    expect_doubles(nd_quantile(ia2, 1.0, 0), ND_FLOAT64, 0, NULL, (double[]){NAN}, 0, "quantile [1, inf] q=1");
    expect_doubles(nd_median(ia2, 0), ND_FLOAT64, 0, NULL, (double[]){INFINITY}, 0, "median [1, inf]");
    nd_free(a); nd_free(fa); nd_free(fq); nd_free(ia); nd_free(h64); nd_free(h); nd_free(ia2);
}

/* The reference: NumPy's linear quantile of the sorted non-NaN-or-all
 * values of one row, in float64 (T double) or float32 (T float). */
static double ref_quantile(const ref_arr *x, const int64_t *pos, int64_t n, double q, int skip_nan, int median,
                           int f32) {
    int64_t *s = malloc(sizeof(int64_t) * (size_t)(n + 1));
    memcpy(s, pos, sizeof(int64_t) * (size_t)n);
    sref_sort(x, s, n);
    int64_t m = n;
    if (skip_nan)
        while (m > 0 && isnan(ref_getd(x, s[m - 1]))) m--;
    double r;
    if (m == 0 || isnan(ref_getd(x, s[m - 1]))) r = NAN;
    else if (median) {
        double a = ref_getd(x, s[(m - 1) / 2]), b = ref_getd(x, s[m / 2]);
        r = f32 ? (double)(((float)a + (float)b) / 2.0f) : (a + b) / 2;
        if (m % 2) r = b;
    } else {
        double vi = (double)(m - 1) * q, prev = floor(vi);
        int64_t lo = (int64_t)prev, hi = lo + 1;
        if (vi >= (double)(m - 1)) {
            lo = hi = m - 1;
            prev = -1;
        }
        double g = vi - prev, a = ref_getd(x, s[lo]), b = ref_getd(x, s[hi]);
        if (f32) {
            float fa = (float)a, fb = (float)b, d = fb - fa;
            r = g >= 0.5 ? (double)(fb - d * (float)(1.0 - g)) : (double)(fa + d * (float)g);
        } else {
            double d = b - a;
            r = g >= 0.5 ? b - d * (1 - g) : a + d * g;
        }
    }
    free(s);
    return r;
}

NDT_TEST(order_stats, random_against_reference) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT64, ND_FLOAT32, ND_INT16, ND_UINT8, ND_BOOL, ND_INT64};
    for (int t = 0; t < 6; t++) {
        int64_t shape[3] = {3, 17, 4};
        ref_arr *x = ndt_rand_small(&r, dts[t], 3, shape);
        if (ref_is_float(x->dt))
            for (int k = 0; k < 6; k++) ref_setd(x, ndt_int(&r, 0, x->size - 1), NAN);
        nd_array *a = ndt_upload(x);
        int f32 = dts[t] == ND_FLOAT32;
        const int axes[] = {0, 1, -1, ND_ALL_AXES};
        for (int k = 0; k < 4; k++) {
            for (int mode = 0; mode < 4; mode++) { /* median, nanmedian, quantile, nanquantile */
                double q = ndt_uniform(&r, 0, 1);
                nd_array *got = mode == 0   ? nd_median(a, axes[k])
                                : mode == 1 ? nd_nanmedian(a, axes[k])
                                : mode == 2 ? nd_quantile(a, q, axes[k])
                                            : nd_nanquantile(a, q, axes[k]);
                cr_assert(got, "%s", nd_last_error());
                cr_expect_eq(nd_dtype_of(got), ref_is_float(x->dt) ? x->dt : ND_FLOAT64);
                ref_arr *g = ndt_download(got);
                const ref_arr *src = x;
                ref_arr *flat = NULL;
                int ax = axes[k] < 0 && axes[k] != ND_ALL_AXES ? axes[k] + 3 : axes[k];
                if (axes[k] == ND_ALL_AXES) {
                    int64_t n = x->size;
                    src = flat = ref_reshape(x, 1, &n);
                    ax = 0;
                }
                int64_t n = src->shape[ax], pos[256];
                cr_assert_eq(g->size, src->size / n);
                for (int64_t row = 0; row < g->size; row++) {
                    sref_row(src, ax, row, pos);
                    double want = ref_quantile(src, pos, n, q, mode % 2, mode < 2, f32);
                    double v = ref_getd(g, row);
                    cr_expect(isnan(want) ? isnan(v) : v == want, "%s axis %d mode %d row %lld: %.17g, want %.17g",
                              ref_dtype_name(x->dt), axes[k], mode, (long long)row, v, want);
                }
                if (flat) ref_free(flat);
                ref_free(g);
                nd_free(got);
            }
        }
        nd_free(a);
        ref_free(x);
    }
}

NDT_TEST(order_stats, views_empty_and_0d) {
    /* a transposed view gives the transpose's statistics */
    double v[] = {1, 5, 2, 8, 3, 9};
    int64_t s[2] = {2, 3}, two[1] = {2};
    nd_array *a = nd_from_host(v, ND_FLOAT64, 2, s), *t = nd_transpose(a, NULL);
    expect_doubles(nd_median(t, 0), ND_FLOAT64, 1, two, (double[]){2, 8}, 0, "median of a transpose");
    /* an empty axis: median NaN, quantile an error (NumPy raises) */
    int64_t e[2] = {3, 0}, three[1] = {3};
    nd_array *ea = nd_zeros(ND_FLOAT32, 2, e);
    expect_doubles(nd_median(ea, 1), ND_FLOAT32, 1, three, (double[]){NAN, NAN, NAN}, 0, "median of empty rows");
    cr_expect_null(nd_quantile(ea, 0.5, 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_quantile");
    nd_array *em = nd_median(ea, 0);
    cr_expect(em && nd_size(em) == 0 && nd_sync() == ND_OK, "median over rows of an empty array");
    /* 0-d */
    nd_array *z = nd_full(ND_FLOAT64, 0, NULL, 4.5);
    expect_doubles(nd_median(z, ND_ALL_AXES), ND_FLOAT64, 0, NULL, (double[]){4.5}, 0, "median of 0-d");
    cr_expect_null(nd_median(z, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_median");
    nd_free(a); nd_free(t); nd_free(ea); nd_free(em); nd_free(z);
}

NDT_TEST(order_stats, bad_arguments) {
    int64_t s[1] = {4};
    nd_array *a = nd_ones(ND_FLOAT64, 1, s);
    cr_expect_null(nd_quantile(a, 1.5, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_quantile");
    cr_expect_null(nd_percentile(a, -1, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_percentile");
    cr_expect_null(nd_nanquantile(a, NAN, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nanquantile");
    cr_expect_null(nd_quantiles(a, 0, (double[]){0.5}, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_quantiles");
    cr_expect_null(nd_percentiles(a, 2, NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_percentiles");
    cr_expect_null(nd_nanpercentile(a, 50, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nanpercentile");
    cr_expect_null(nd_median(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_median");
    cr_expect_null(nd_nanmedian(a, -2));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nanmedian");
    nd_free(a);
}
