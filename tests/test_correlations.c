/* cov, corrcoef, correlate and convolve against references written here
 * (float64 sums of NumPy's definitions) on random inputs, and NumPy 2.4's
 * printed results for small cases (modes, swapped lengths, int8 wrapping,
 * a constant variable's NaN correlations). */
#include "common.h"

static void expect_values(nd_array *got, const double *want, int64_t n, double tol, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq((int64_t)nd_size(got), n, "%s: %lld values, want %lld", what, (long long)nd_size(got),
                 (long long)n);
    ref_arr *g = ndt_download(got);
    for (int64_t i = 0; i < n; i++) {
        double x = ref_getd(g, i);
        cr_expect((isnan(x) && isnan(want[i])) || fabs(x - want[i]) <= tol * (1 + fabs(want[i])),
                  "%s[%lld]: got %.17g, want %.17g", what, (long long)i, x, want[i]);
    }
    ref_free(g);
}

NDT_TEST(correlations, numpy_cases) {
    int64_t n3 = 3, n2 = 2, n4 = 4;
    nd_array *a = nd_from_host((double[]){1, 2, 3}, ND_FLOAT64, 1, &n3);
    nd_array *v = nd_from_host((double[]){0, 1, 0.5}, ND_FLOAT64, 1, &n3);
    nd_array *s = nd_from_host((int64_t[]){1, 2}, ND_INT64, 1, &n2);
    nd_array *l = nd_from_host((int64_t[]){1, 2, 3, 4}, ND_INT64, 1, &n4);
    nd_array *i8a = nd_from_host((int8_t[]){1, 2}, ND_INT8, 1, &n2);
    nd_array *i8v = nd_from_host((int8_t[]){100, 100, 3}, ND_INT8, 1, &n3);
    struct {
        int conv;
        nd_array *x, *y;
        nd_conv_mode mode;
        int64_t n;
        double want[5];
        nd_dtype dt;
    } cases[] = {
        {1, a, v, ND_CONV_FULL, 5, {0, 1, 2.5, 4, 1.5}, ND_FLOAT64},
        {1, a, v, ND_CONV_SAME, 3, {1, 2.5, 4}, ND_FLOAT64},
        {1, a, v, ND_CONV_VALID, 1, {2.5}, ND_FLOAT64},
        {0, a, v, ND_CONV_FULL, 5, {0.5, 2, 3.5, 3, 0}, ND_FLOAT64},
        {0, a, v, ND_CONV_SAME, 3, {2, 3.5, 3}, ND_FLOAT64},
        {0, a, v, ND_CONV_VALID, 1, {3.5}, ND_FLOAT64},
        {0, s, l, ND_CONV_FULL, 5, {4, 11, 8, 5, 2}, ND_INT64},
        {0, s, l, ND_CONV_SAME, 4, {11, 8, 5, 2}, ND_INT64},
        {0, s, l, ND_CONV_VALID, 3, {11, 8, 5}, ND_INT64},
        {1, s, l, ND_CONV_FULL, 5, {1, 4, 7, 10, 8}, ND_INT64},
        {1, s, l, ND_CONV_SAME, 4, {1, 4, 7, 10}, ND_INT64},
        {1, s, l, ND_CONV_VALID, 3, {4, 7, 10}, ND_INT64},
        {0, i8a, i8v, ND_CONV_FULL, 4, {3, 106, 44, -56}, ND_INT8},
        {0, i8a, i8v, ND_CONV_VALID, 2, {106, 44}, ND_INT8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        nd_array *z = (cases[c].conv ? nd_convolve : nd_correlate)(cases[c].x, cases[c].y, cases[c].mode);
        char what[64];
        snprintf(what, sizeof what, "case %zu (%s mode %d)", c, cases[c].conv ? "convolve" : "correlate",
                 (int)cases[c].mode);
        expect_values(z, cases[c].want, cases[c].n, 0, what);
        cr_expect_eq(nd_dtype_of(z), cases[c].dt, "%s: dtype", what);
        nd_free(z);
    }
    /* np.cov([[1,2,4],[2,1,0]]) and with rowvar=False, bias=True; the 1-d
     * form is 0-d; corrcoef with a constant row is NaN there. */
    int64_t sh[2] = {2, 3}, sh3[2] = {3, 3};
    nd_array *m = nd_from_host((double[]){1, 2, 4, 2, 1, 0}, ND_FLOAT64, 2, sh);
    nd_array *c = nd_cov(m, 1, 0, -1);
    expect_values(c, (double[]){7.0 / 3, -1.5, -1.5, 1}, 4, 1e-15, "cov");
    nd_free(c);
    c = nd_cov(m, 0, 1, -1);
    expect_values(c, (double[]){0.25, -0.25, -1, -0.25, 0.25, 1, -1, 1, 4}, 9, 1e-15, "cov rowvar=False bias");
    nd_free(c);
    c = nd_cov(a, 1, 0, -1);
    cr_expect_eq(nd_ndim(c), 0);
    expect_values(c, (double[]){1}, 1, 1e-15, "cov of 1-d");
    nd_free(c);
    nd_array *m3 = nd_from_host((double[]){1, 2, 4, 2, 1, 0, 1, 1, 1}, ND_FLOAT64, 2, sh3);
    c = nd_corrcoef(m3, 1);
    double r = -0.98198050606196574;
    expect_values(c, (double[]){1, r, NAN, r, 1, NAN, NAN, NAN, NAN}, 9, 1e-15, "corrcoef");
    nd_free(c);
    nd_free(m3);
    nd_free(m);
    nd_array *all[] = {a, v, s, l, i8a, i8v};
    for (int i = 0; i < 6; i++) nd_free(all[i]);
}

/* Random signals of every length relation against a direct float64 sum. */
NDT_TEST(correlations, random_signals) {
    NDT_RNG(r);
    for (int trial = 0; trial < 12; trial++) {
        int64_t n = ndt_int(&r, 1, 300), m = ndt_int(&r, 1, trial < 6 ? 9 : 400);
        nd_dtype dt = trial % 2 ? ND_FLOAT32 : ND_FLOAT64;
        ref_arr *ra = ndt_rand(&r, dt, 1, &n, -1, 1), *rv = ndt_rand(&r, dt, 1, &m, -1, 1);
        nd_array *a = ndt_upload(ra), *v = ndt_upload(rv);
        for (int conv = 0; conv < 2; conv++)
            for (int mode = 0; mode < 3; mode++) {
                /* NumPy's definition: the longer signal x, the shorter y
                 * (reversed for convolve); correlate of a shorter a
                 * reverses. */
                int swap = conv ? m > n : n < m;
                const ref_arr *x = swap ? rv : ra, *y = swap ? ra : rv;
                int64_t nx = x->size, ny = y->size;
                int64_t left = mode == ND_CONV_FULL ? ny - 1 : mode == ND_CONV_SAME ? ny / 2 : 0;
                int64_t outs = mode == ND_CONV_FULL ? nx + ny - 1 : mode == ND_CONV_SAME ? nx : nx - ny + 1;
                double *want = calloc((size_t)outs, sizeof(double));
                for (int64_t k = 0; k < outs; k++)
                    for (int64_t j = 0; j < ny; j++) {
                        int64_t i = k - left + j;
                        double tap = ref_getd(y, conv ? ny - 1 - j : j);
                        if (i >= 0 && i < nx) want[k] += ref_getd(x, i) * tap;
                    }
                if (!conv && swap)
                    for (int64_t k = 0; k < outs / 2; k++) {
                        double t = want[k];
                        want[k] = want[outs - 1 - k];
                        want[outs - 1 - k] = t;
                    }
                nd_array *z = (conv ? nd_convolve : nd_correlate)(a, v, (nd_conv_mode)mode);
                char what[96];
                snprintf(what, sizeof what, "%s n=%lld m=%lld mode %d %s", conv ? "convolve" : "correlate",
                         (long long)n, (long long)m, mode, ref_dtype_name(dt));
                expect_values(z, want, outs, dt == ND_FLOAT32 ? 1e-4 : 1e-12, what);
                nd_free(z);
                free(want);
            }
        nd_free(a);
        nd_free(v);
        ref_free(ra);
        ref_free(rv);
    }
}

/* cov and corrcoef of random (vars, obs) data, as rows and as columns, from
 * a transposed view, against float64 sums. */
NDT_TEST(correlations, random_cov) {
    NDT_RNG(r);
    int64_t sh[2] = {4, 50};
    ref_arr *rm = ndt_rand(&r, ND_FLOAT32, 2, sh, -3, 3);
    double mean[4] = {0}, cov[16] = {0}, corr[16];
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 50; k++) mean[i] += ref_getd(rm, i * 50 + k);
        mean[i] /= 50;
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            for (int k = 0; k < 50; k++)
                cov[i * 4 + j] += (ref_getd(rm, i * 50 + k) - mean[i]) * (ref_getd(rm, j * 50 + k) - mean[j]);
            cov[i * 4 + j] /= 49;
        }
    for (int i = 0; i < 16; i++) corr[i] = cov[i] / sqrt(cov[(i / 4) * 5]) / sqrt(cov[(i % 4) * 5]);
    nd_array *m = ndt_upload(rm), *mt = nd_transpose(m, NULL);
    nd_array *c = nd_cov(m, 1, 0, -1);
    cr_expect_eq(nd_dtype_of(c), ND_FLOAT64);
    expect_values(c, cov, 16, 1e-12, "cov");
    nd_free(c);
    c = nd_cov(mt, 0, 0, 1);
    expect_values(c, cov, 16, 1e-12, "cov of the transpose, rowvar=0");
    nd_free(c);
    c = nd_corrcoef(m, 1);
    expect_values(c, corr, 16, 1e-12, "corrcoef");
    nd_free(c);
    nd_free(mt);
    nd_free(m);
    ref_free(rm);
}

NDT_TEST(correlations, bad_arguments) {
    int64_t n3 = 3, zero = 0, sh3[3] = {2, 2, 2};
    nd_array *a = nd_zeros(ND_FLOAT64, 1, &n3), *e = nd_zeros(ND_FLOAT64, 1, &zero), *t = nd_zeros(ND_FLOAT64, 3, sh3);
    cr_expect_null(nd_convolve(a, e, ND_CONV_FULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve");
    cr_expect_null(nd_correlate(t, a, ND_CONV_FULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_correlate");
    cr_expect_null(nd_correlate(a, a, (nd_conv_mode)7));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_correlate");
    cr_expect_null(nd_convolve(NULL, a, ND_CONV_FULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_convolve");
    cr_expect_null(nd_cov(t, 1, 0, -1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_cov");
    cr_expect_null(nd_corrcoef(NULL, 1));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_corrcoef");
    nd_free(a);
    nd_free(e);
    nd_free(t);
}
