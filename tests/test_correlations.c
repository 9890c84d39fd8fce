/* cov, corrcoef, correlate and convolve against references written here
 * (float64 sums of NumPy's definitions) on random inputs, and NumPy 2.4's
 * printed results for small cases (modes, swapped lengths, int8 wrapping,
 * a constant variable's NaN correlations); complex correlate (v
 * conjugated) and convolve in every mode, direct and through the FFT. */
#include "common.h"

#include <complex.h>

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

/* ---- complex correlate and convolve, against NumPy's definitions summed
 * here in complex128: correlate conjugates v first (np.correlate(a, v)[k]
 * = sum_n a[n + k] conj(v[n])), then a shorter a swaps with it and the
 * result is reversed; convolve conjugates nothing. */

typedef double complex cd;

static int is_cplx(nd_dtype t) { return t == ND_COMPLEX64 || t == ND_COMPLEX128; }

/* n values of dtype t (complex: interleaved) from the complex128 x. */
static nd_array *upload_c(nd_dtype t, const cd *x, int64_t n) {
    nd_array *d = nd_from_host(x, ND_COMPLEX128, 1, &n), *r = NULL;
    cr_assert(d, "%s", nd_last_error());
    if (t == ND_COMPLEX128) return d;
    if (t == ND_COMPLEX64) r = nd_astype(d, t);
    else {
        nd_array *re = nd_real(d);
        r = re ? nd_astype(re, t) : NULL;
        nd_free(re);
    }
    nd_free(d);
    cr_assert(r, "%s", nd_last_error());
    return r;
}

static cd *download_c(nd_array *z, int64_t n) {
    cr_assert(z, "%s", nd_last_error());
    cr_assert_eq(nd_size(z), n, "%lld values, want %lld", (long long)nd_size(z), (long long)n);
    nd_array *d = nd_astype(z, ND_COMPLEX128);
    cd *v = malloc(sizeof(cd) * (size_t)(n + 1));
    memset(v, 0xAB, sizeof(cd) * (size_t)(n + 1));
    cr_assert(d && nd_to_host(d, v, sizeof(cd) * (size_t)n) == ND_OK, "%s", nd_last_error());
    nd_free(d);
    return v;
}

/* NumPy's raw correlation (nothing conjugated) of x (nx) with y (ny <= nx). */
static cd *raw_correlate(const cd *x, int64_t nx, const cd *y, int64_t ny, int mode, int64_t *outs) {
    int64_t left = mode == ND_CONV_FULL ? ny - 1 : mode == ND_CONV_SAME ? ny / 2 : 0;
    *outs = mode == ND_CONV_FULL ? nx + ny - 1 : mode == ND_CONV_SAME ? nx : nx - ny + 1;
    cd *z = calloc((size_t)*outs, sizeof(cd));
    for (int64_t k = 0; k < *outs; k++)
        for (int64_t j = 0; j < ny; j++) {
            int64_t i = k - left + j;
            if (i >= 0 && i < nx) z[k] += x[i] * y[j];
        }
    return z;
}

static cd *numpy_conv(int conv, const cd *a, int64_t n, const cd *v, int64_t m, int mode, int64_t *outs) {
    cd *y = malloc(sizeof(cd) * (size_t)m);
    for (int64_t j = 0; j < m; j++) y[j] = conv ? v[j] : conj(v[j]);
    cd *z;
    if (conv) { /* the longer is the signal, the other reversed */
        const cd *x = n >= m ? a : y, *f = n >= m ? y : a;
        int64_t nx = n >= m ? n : m, nf = n >= m ? m : n;
        cd *r = malloc(sizeof(cd) * (size_t)nf);
        for (int64_t j = 0; j < nf; j++) r[j] = f[nf - 1 - j];
        z = raw_correlate(x, nx, r, nf, mode, outs);
        free(r);
    } else if (n >= m) {
        z = raw_correlate(a, n, y, m, mode, outs);
    } else {
        z = raw_correlate(y, m, a, n, mode, outs);
        for (int64_t k = 0; k < *outs / 2; k++) {
            cd t = z[k];
            z[k] = z[*outs - 1 - k];
            z[*outs - 1 - k] = t;
        }
    }
    free(y);
    return z;
}

NDT_TEST(correlations, complex_numpy_case) {
    /* np.correlate([1+1j, 2, 3-1j], [0.5j, 1]) = [2.5-0.5j, 3-2j];
     * np.correlate([0.5j, 1], [1+1j, 2, 3-1j]) = [3+2j, 2.5+0.5j];
     * np.convolve([1+1j, 2, 3-1j], [0.5j, 1]) = [-0.5+0.5j, 1+2j, 2.5+1.5j, 3-1j] */
    cd a[3] = {1 + 1 * I, 2, 3 - 1 * I}, v[2] = {0.5 * I, 1};
    cd w1[2] = {2.5 - 0.5 * I, 3 - 2 * I}, w2[2] = {3 + 2 * I, 2.5 + 0.5 * I},
       w3[4] = {-0.5 + 0.5 * I, 1 + 2 * I, 2.5 + 1.5 * I, 3 - 1 * I};
    nd_array *xa = upload_c(ND_COMPLEX128, a, 3), *xv = upload_c(ND_COMPLEX128, v, 2);
    nd_array *z[3] = {nd_correlate(xa, xv, ND_CONV_VALID), nd_correlate(xv, xa, ND_CONV_VALID),
                      nd_convolve(xa, xv, ND_CONV_FULL)};
    const cd *want[3] = {w1, w2, w3};
    int64_t len[3] = {2, 2, 4};
    for (int c = 0; c < 3; c++) {
        cr_expect_eq(nd_dtype_of(z[c]), ND_COMPLEX128);
        cd *g = download_c(z[c], len[c]);
        for (int64_t k = 0; k < len[c]; k++)
            cr_expect(cabs(g[k] - want[c][k]) <= 1e-15, "case %d [%lld]: %g%+gi, want %g%+gi", c, (long long)k,
                      creal(g[k]), cimag(g[k]), creal(want[c][k]), cimag(want[c][k]));
        free(g);
        nd_free(z[c]);
    }
    nd_free(xa), nd_free(xv);
}

NDT_TEST(correlations, complex_random_signals) {
    NDT_RNG(r);
    /* dtypes of a and v and NumPy 2's result */
    static const nd_dtype types[][3] = {{ND_COMPLEX128, ND_COMPLEX128, ND_COMPLEX128},
                                        {ND_COMPLEX64, ND_COMPLEX64, ND_COMPLEX64},
                                        {ND_FLOAT64, ND_COMPLEX64, ND_COMPLEX128},
                                        {ND_COMPLEX64, ND_FLOAT32, ND_COMPLEX64},
                                        {ND_COMPLEX128, ND_FLOAT32, ND_COMPLEX128},
                                        {ND_FLOAT32, ND_COMPLEX128, ND_COMPLEX128}};
    for (int trial = 0; trial < 12; trial++) {
        /* short filters (direct) and long ones (AUTO takes the FFT), either one the longer */
        int64_t n = ndt_int(&r, 1, trial < 6 ? 60 : 600), m = ndt_int(&r, 1, trial < 6 ? 9 : 500);
        if (trial % 3 == 2) {
            int64_t t = n;
            n = m, m = t;
        }
        const nd_dtype *ty = types[trial % 6];
        cd *a = malloc(sizeof(cd) * (size_t)n), *v = malloc(sizeof(cd) * (size_t)m);
        for (int64_t i = 0; i < n; i++)
            a[i] = ndt_uniform(&r, -1, 1) + (is_cplx(ty[0]) ? ndt_uniform(&r, -1, 1) * I : 0);
        for (int64_t i = 0; i < m; i++)
            v[i] = ndt_uniform(&r, -1, 1) + (is_cplx(ty[1]) ? ndt_uniform(&r, -1, 1) * I : 0);
        nd_array *xa = upload_c(ty[0], a, n), *xv = upload_c(ty[1], v, m);
        /* the reference from the values as stored (complex64 rounds) */
        cd *ah = download_c(xa, n), *vh = download_c(xv, m);
        double tol = ty[2] == ND_COMPLEX64 ? 2e-5 : 1e-12;
        for (int conv = 0; conv < 2; conv++)
            for (int mode = 0; mode < 3; mode++) {
                int64_t outs;
                cd *want = numpy_conv(conv, ah, n, vh, m, mode, &outs);
                double big = 0;
                for (int64_t k = 0; k < outs; k++) big = fmax(big, cabs(want[k]));
                nd_array *z = (conv ? nd_convolve : nd_correlate)(xa, xv, (nd_conv_mode)mode);
                cr_assert(z, "%s", nd_last_error());
                cr_expect_eq(nd_dtype_of(z), ty[2], "%s of %s and %s is %s, want %s", conv ? "convolve" : "correlate",
                             nd_dtype_name(ty[0]), nd_dtype_name(ty[1]), nd_dtype_name(nd_dtype_of(z)),
                             nd_dtype_name(ty[2]));
                cd *g = download_c(z, outs);
                int64_t bad = -1;
                for (int64_t k = 0; k < outs && bad < 0; k++)
                    if (!(cabs(g[k] - want[k]) <= tol * (1 + big) * (double)(m < n ? m : n))) bad = k;
                cr_expect(bad < 0, "%s n=%lld m=%lld mode %d (%s, %s): [%lld] %g%+gi, want %g%+gi",
                          conv ? "convolve" : "correlate", (long long)n, (long long)m, mode, nd_dtype_name(ty[0]),
                          nd_dtype_name(ty[1]), (long long)bad, bad < 0 ? 0 : creal(g[bad]),
                          bad < 0 ? 0 : cimag(g[bad]), bad < 0 ? 0 : creal(want[bad]), bad < 0 ? 0 : cimag(want[bad]));
                free(g);
                free(want);
                nd_free(z);
            }
        free(a), free(v), free(ah), free(vh);
        nd_free(xa), nd_free(xv);
    }
    /* empty operands fail as NumPy's ("cannot be empty"), complex or not */
    int64_t zero = 0, three = 3;
    nd_array *e = nd_zeros(ND_COMPLEX64, 1, &zero), *c3 = nd_zeros(ND_COMPLEX128, 1, &three);
    cr_expect_null(nd_correlate(c3, e, ND_CONV_VALID));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_correlate");
    cr_expect_null(nd_convolve(e, c3, ND_CONV_FULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve");
    nd_free(e), nd_free(c3);
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

/* nd_cov_ex and nd_corrcoef_ex against NumPy 2.4's printed results
 * (np.cov(m, y, rowvar, bias, ddof, fweights, aweights) and
 * np.corrcoef(m, y)) for m, y, fw, aw below. */
NDT_TEST(correlations, cov_ex_numpy_cases) {
    nd_scope_begin(); /* releases the inputs and the inline temporaries */
    const double mv[15] = {1.5, 2, 4, -1, 0.25, 2, 1, 0, 3, -2, 0.5, -1, 2, 2, 7};
    nd_array *m = nd_from_host(mv, ND_FLOAT64, ND_SHAPE(3, 5));
    nd_array *y = nd_from_host((int32_t[]){3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, ND_INT32, ND_SHAPE(2, 5));
    nd_array *y1 = nd_from_host((int32_t[]){3, 1, 4, 1, 5}, ND_INT32, ND_SHAPE(5));
    nd_array *y1r = nd_reshape(y1, ND_SHAPE(1, 5));
    nd_array *mt = nd_transpose(m, NULL), *yt = nd_transpose(y, NULL);
    nd_array *fw = nd_from_host((int64_t[]){1, 2, 0, 3, 1}, ND_INT64, ND_SHAPE(5));
    nd_array *fwf = nd_astype(fw, ND_FLOAT64); /* integer-valued floats are frequencies too */
    nd_array *aw = nd_from_host((double[]){0.5, 1, 2, 0.25, 1}, ND_FLOAT64, ND_SHAPE(5));
    const double my[25] = {3.5500000000000003, -0.97500000000000031, -1.91875, 0.96250000000000002, 0.875,
                           -0.97500000000000031, 3.7000000000000002, -4.0999999999999996, -2.7999999999999998, 2.25,
                           -1.91875, -4.0999999999999996, 9.0500000000000007, 4.0250000000000004, -1.7500000000000002,
                           0.96250000000000002, -2.7999999999999998, 4.0250000000000004, 3.2000000000000002, 0.75,
                           0.875, 2.25, -1.7500000000000002, 0.75, 7.5};
    double my4[16];
    for (int i = 0; i < 16; i++) my4[i] = my[(i / 4) * 5 + i % 4];
    nd_cov_options o = ND_COV_OPTIONS_INIT;
    nd_array *c = nd_cov_ex(m, y, &o);
    expect_values(c, my, 25, 1e-13, "cov(m, y)");
    cr_expect(nd_ndim(c) == 2 && nd_shape(c)[0] == 5, "shape (5, 5)");
    nd_free(c);
    c = nd_cov_ex(m, y, NULL);
    expect_values(c, my, 25, 1e-13, "cov(m, y), opt NULL");
    nd_free(c);
    o.rowvar = 0;
    c = nd_cov_ex(mt, yt, &o);
    expect_values(c, my, 25, 1e-13, "cov(m.T, y.T, rowvar=False)");
    nd_free(c);
    c = nd_cov_ex(mt, y1, &o);
    expect_values(c, my4, 16, 1e-13, "cov(m.T, 1-d y, rowvar=False)");
    nd_free(c);
    /* NumPy does not transpose a y of one row, even with rowvar=False. */
    c = nd_cov_ex(mt, y1r, &o);
    expect_values(c, my4, 16, 1e-13, "cov(m.T, y of one row, rowvar=False)");
    nd_free(c);
    o = (nd_cov_options)ND_COV_OPTIONS_INIT;
    const double wfw[9] = {2.0386904761904763, -1.1369047619047616, -2.0029761904761902, -1.1369047619047619,
                           3.2857142857142851, -2.5119047619047619, -2.0029761904761902, -2.5119047619047619,
                           7.3928571428571432};
    o.fweights = fw;
    expect_values(c = nd_cov_ex(m, NULL, &o), wfw, 9, 1e-13, "fweights");
    nd_free(c);
    o.fweights = fwf;
    expect_values(c = nd_cov_ex(m, NULL, &o), wfw, 9, 1e-13, "float fweights");
    nd_free(c);
    o.fweights = NULL;
    o.aweights = aw;
    expect_values(c = nd_cov_ex(m, NULL, &o),
                  (double[]){3.8317307692307692, 0.1615384615384616, -2.5442307692307691, 0.1615384615384616,
                             2.6692307692307695, -4.296153846153846, -2.5442307692307691, -4.296153846153846,
                             10.171153846153846},
                  9, 1e-13, "aweights");
    nd_free(c);
    o.fweights = fw;
    expect_values(c = nd_cov_ex(m, NULL, &o),
                  (double[]){1.6527777777777777, -0.14529914529914523, -2.9423076923076921, -0.14529914529914523,
                             3.5641025641025639, -4.6965811965811968, -2.9423076923076921, -4.6965811965811968,
                             12.613247863247862},
                  9, 1e-13, "both weights");
    nd_free(c);
    const double wb[9] = {1.338235294117647, -0.11764705882352935, -2.3823529411764706, -0.11764705882352935,
                          2.8858131487889276, -3.8027681660899657, -2.3823529411764706, -3.8027681660899657,
                          10.212802768166091};
    o.bias = 1;
    expect_values(c = nd_cov_ex(m, NULL, &o), wb, 9, 1e-13, "both weights, bias");
    nd_free(c);
    o.bias = 0;
    o.ddof = 0;
    c = nd_cov_ex(m, y, &o);
    cr_assert(c, "%s", nd_last_error());
    ref_arr *g = ndt_download(c);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            cr_expect(fabs(ref_getd(g, i * 5 + j) - wb[i * 3 + j]) <= 1e-13 * (1 + fabs(wb[i * 3 + j])),
                      "with y, ddof 0: [%d, %d]", i, j);
    cr_expect(fabs(ref_getd(g, 24) - 5.0657439446366785) <= 1e-12, "with y, ddof 0: y's variance");
    ref_free(g);
    nd_free(c);
    o.ddof = 2;
    expect_values(c = nd_cov_ex(m, NULL, &o),
                  (double[]){2.1606145251396649, -0.1899441340782122, -3.8463687150837989, -0.1899441340782122,
                             4.6592178770949726, -6.1396648044692741, -3.8463687150837989, -6.1396648044692741,
                             16.488826815642458},
                  9, 1e-13, "both weights, ddof 2");
    nd_free(c);
    o = (nd_cov_options)ND_COV_OPTIONS_INIT;
    o.ddof = -1; /* a negative ddof is a ddof here (nd_cov reads it as None) */
    expect_values(c = nd_cov_ex(m, NULL, &o),
                  (double[]){2.3666666666666667, -0.65000000000000013, -1.2791666666666666, -0.65000000000000013,
                             2.4666666666666668, -2.7333333333333329, -1.2791666666666666, -2.7333333333333329,
                             6.0333333333333332},
                  9, 1e-13, "ddof -1");
    nd_free(c);
    /* A NaN aweight: NaN everywhere; weights leaving fact 0: 0 * inf. */
    o = (nd_cov_options)ND_COV_OPTIONS_INIT;
    o.aweights = nd_from_host((double[]){0.5, NAN, 2, 0.25, 1}, ND_FLOAT64, ND_SHAPE(5));
    double nans[9] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    expect_values(c = nd_cov_ex(m, NULL, &o), nans, 9, 0, "NaN aweight");
    nd_free(c);
    o.aweights = NULL;
    o.fweights = nd_from_host((int64_t[]){0, 0, 1, 0, 0}, ND_INT64, ND_SHAPE(5));
    expect_values(c = nd_cov_ex(m, NULL, &o), nans, 9, 0, "fact 0");
    nd_free(c);
    /* 1-d m with fweights: 0-d. */
    o.fweights = nd_from_host((int64_t[]){3, 0, 1}, ND_INT64, ND_SHAPE(3));
    c = nd_cov_ex(nd_from_host((double[]){1, 2, 4}, ND_FLOAT64, ND_SHAPE(3)), NULL, &o);
    cr_expect_eq(nd_ndim(c), 0);
    expect_values(c, (double[]){2.25}, 1, 1e-15, "1-d m, fweights");
    nd_free(c);
    /* No variables: (0, 0) before y or the weights are looked at. */
    o.fweights = nd_from_host((double[]){1.5}, ND_FLOAT64, ND_SHAPE(1));
    c = nd_cov_ex(nd_zeros(ND_FLOAT64, ND_SHAPE(0, 5)), y, &o);
    cr_assert(c, "%s", nd_last_error());
    cr_expect(nd_ndim(c) == 2 && nd_shape(c)[0] == 0 && nd_shape(c)[1] == 0, "shape (0, 0)");
    nd_free(c);
    /* corrcoef with y. */
    expect_values(c = nd_corrcoef_ex(m, y, 1),
                  (double[]){1, -0.26902310266554436, -0.33851656604820246, 0.28556933650289601,
                             0.16957555408902822, -0.2690231026655443, 1, -0.70853075302535651,
                             -0.81373347120673489, 0.42712109808862453, -0.33851656604820246, -0.7085307530253564,
                             1, 0.74793973466121111, -0.21241399516204157, 0.28556933650289595,
                             -0.81373347120673489, 0.74793973466121111, 1, 0.15309310892394865,
                             0.16957555408902822, 0.42712109808862447, -0.21241399516204157, 0.15309310892394862, 1},
                  25, 1e-13, "corrcoef(m, y)");
    nd_free(c);
    expect_values(c = nd_corrcoef_ex(nd_from_host((double[]){1, 2, 4}, ND_FLOAT64, ND_SHAPE(3)),
                                     nd_from_host((double[]){2, 1, 0}, ND_FLOAT64, ND_SHAPE(3)), 1),
                  (double[]){1, -0.98198050606196563, -0.98198050606196563, 1}, 4, 1e-15, "corrcoef of two 1-d");
    nd_free(c);
    cr_expect_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_scope_end();
}

/* NumPy's checks of the weights (its TypeError, ValueError, RuntimeError
 * and ZeroDivisionError), y's shape, and the unchanged nd_cov. */
NDT_TEST(correlations, cov_ex_bad_arguments) {
    nd_scope_begin(); /* releases the inputs and the inline temporaries */
    nd_array *m = nd_arange(ND_FLOAT64, 0, 15, 1), *m2 = nd_reshape(m, ND_SHAPE(3, 5));
    struct {
        double w[5];
        int fweights;
        nd_status st;
        const char *msg;
    } cases[] = {
        {{1, 1.5, 1, 1, 1}, 1, ND_ERR_ARG, "nd_cov_ex: fweights must be integers, fweights[1] is 1.5"},
        {{1, NAN, 1, 1, 1}, 1, ND_ERR_ARG, "fweights must be integers"},
        {{1, -1, 1, 1, 1}, 1, ND_ERR_ARG, "nd_cov_ex: fweights cannot be negative, fweights[1] is -1"},
        {{1, 1, 1, 1, -0.5}, 0, ND_ERR_ARG, "nd_cov_ex: aweights cannot be negative, aweights[4] is -0.5"},
        {{0, 0, 0, 0, 0}, 1, ND_ERR_ARG, "nd_cov_ex: the weights sum to zero"},
        {{0, 0, 0, 0, 0}, 0, ND_ERR_ARG, "nd_cov_ex: the weights sum to zero"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        nd_cov_options o = ND_COV_OPTIONS_INIT;
        nd_array *w = nd_from_host(cases[i].w, ND_FLOAT64, ND_SHAPE(5));
        *(cases[i].fweights ? &o.fweights : &o.aweights) = w;
        cr_expect_null(nd_cov_ex(m2, NULL, &o), "case %zu", i);
        NDT_EXPECT_ERR(cases[i].st, cases[i].msg);
        nd_free(w);
    }
    nd_cov_options o = ND_COV_OPTIONS_INIT;
    o.fweights = nd_ones(ND_INT64, ND_SHAPE(4));
    cr_expect_null(nd_cov_ex(m2, NULL, &o));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_cov_ex: 4 fweights for 5 observations");
    o.fweights = NULL;
    o.aweights = nd_ones(ND_FLOAT64, ND_SHAPE(1, 5));
    cr_expect_null(nd_cov_ex(m2, NULL, &o));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_cov_ex: aweights must be 1-d");
    cr_expect_null(nd_cov_ex(m2, nd_ones(ND_FLOAT64, ND_SHAPE(2, 4)), NULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_cov_ex: m has 5 observations and y 4");
    cr_expect_null(nd_cov_ex(m2, nd_ones(ND_FLOAT64, ND_SHAPE(1, 1, 5)), NULL));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_cov_ex: y must be 1-d or 2-d");
    cr_expect_null(nd_cov_ex(NULL, NULL, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_cov_ex");
    cr_expect_null(nd_corrcoef_ex(m2, nd_ones(ND_FLOAT64, ND_SHAPE(3)), 1));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_corrcoef_ex: m has 5 observations and y 3");
    nd_scope_end();
}
