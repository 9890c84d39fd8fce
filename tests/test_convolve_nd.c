/* nd_convolve_nd against a brute-force reference written here: the full
 * convolution out[p] = sum over q of a[p - q] * v[q] on every axis, in
 * float64 (floats), wrapping 64-bit integers (ints) or OR of ANDs (bool),
 * then cut as scipy.signal.convolve / cuPyNumeric cut it ('same': a's
 * shape starting at (m - 1) / 2; 'valid': the larger input's interior;
 * 1-d inputs swapped as NumPy when v is longer). Random shapes of 1 to 4
 * dimensions, every mode, small filters (the fused shifted sum) and large
 * ones (the window reduction, and the shifted sum past 4-d), NaN inputs,
 * integer wrapping, 0-d inputs and every error. */
#include "common.h"

#include <complex.h>

/* The reference, for the (possibly swapped) signal a and filter v. */
static ref_arr *ref_convolve(const ref_arr *a, const ref_arr *v, nd_conv_mode mode, double **scale) {
    const int nd = a->ndim;
    int swap = 0;
    if (nd == 1 && v->shape[0] > a->shape[0]) swap = 1;
    if (mode == ND_CONV_VALID) {
        int a_covers = 1;
        for (int d = 0; d < nd; d++) a_covers &= a->shape[d] >= v->shape[d];
        swap = !a_covers;
    }
    if (swap) {
        const ref_arr *t = a;
        a = v, v = t;
    }
    const nd_dtype rt = ref_promote(a->dt, v->dt);
    int64_t full[ND_MAX_DIMS], start[ND_MAX_DIMS], oshape[ND_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        const int64_t n = a->shape[d], m = v->shape[d];
        full[d] = n + m - 1;
        start[d] = mode == ND_CONV_FULL ? 0 : mode == ND_CONV_SAME ? (m - 1) / 2 : m - 1;
        oshape[d] = mode == ND_CONV_FULL ? n + m - 1 : mode == ND_CONV_SAME ? n : n - m + 1;
    }
    ref_arr *out = ref_new(rt, nd, oshape);
    double *acc = calloc((size_t)out->size + 1, sizeof(double));
    uint64_t *iacc = calloc((size_t)out->size + 1, sizeof(uint64_t));
    *scale = calloc((size_t)out->size + 1, sizeof(double));
    int64_t ia[ND_MAX_DIMS], iv[ND_MAX_DIMS], io[ND_MAX_DIMS];
    for (int64_t fa = 0; fa < a->size; fa++) {
        ref_unravel(fa, nd, a->shape, ia);
        for (int64_t fv = 0; fv < v->size; fv++) {
            ref_unravel(fv, nd, v->shape, iv);
            int inside = 1;
            for (int d = 0; d < nd; d++) {
                io[d] = ia[d] + iv[d] - start[d];
                inside &= io[d] >= 0 && io[d] < oshape[d];
            }
            (void)full;
            if (!inside) continue;
            const int64_t fo = ref_ravel(io, nd, oshape);
            const double p = ref_getd(a, fa) * ref_getd(v, fv);
            acc[fo] += p;
            (*scale)[fo] += isnan(p) ? 0 : fabs(p);
            if (rt == ND_BOOL) iacc[fo] |= ref_getu(a, fa) && ref_getu(v, fv);
            else iacc[fo] += ref_getu(a, fa) * ref_getu(v, fv);
        }
    }
    for (int64_t i = 0; i < out->size; i++) {
        if (ref_is_float(rt)) ref_setd(out, i, acc[i]);
        else ref_setu(out, i, iacc[i]);
    }
    free(acc);
    free(iacc);
    return out;
}

/* Every method against the reference: AUTO and DIRECT to the reference's
 * own tolerance, FFT to a tolerance relative to the largest output's scale
 * (its rounding spreads over the whole result, not per element). Integer
 * results through the FFT are rounded and must be exact, except int8 and
 * uint8, whose direct sums wrap where the FFT's do not (documented). */
static void check_conv_methods(const ref_arr *a, const ref_arr *v, nd_conv_mode mode, const char *what, int fft) {
    nd_array *x = ndt_upload(a), *y = ndt_upload(v);
    double *scale;
    ref_arr *want = ref_convolve(a, v, mode, &scale);
    double top = 0;
    for (int64_t i = 0; i < want->size; i++) top = scale[i] > top ? scale[i] : top;
    if (want->dt == ND_INT8 || want->dt == ND_UINT8) fft = 0;
    static const nd_conv_method methods[3] = {ND_CONV_AUTO, ND_CONV_DIRECT, ND_CONV_FFT};
    for (int k = 0; k < 2 + fft; k++) {
        nd_array *got = nd_convolve_nd(x, y, mode, methods[k]);
        cr_assert(got, "%s mode %d: %s", what, (int)mode, nd_last_error());
        const double rtol = want->dt == ND_FLOAT32 ? 1e-5 : want->dt == ND_FLOAT64 ? 1e-12 : 0;
        /* AUTO may take either method: the FFT's tolerance on top of direct's */
        const double atol = methods[k] == ND_CONV_DIRECT ? 0 : 4 * rtol * top;
        ndt_check(got, want, methods[k] == ND_CONV_FFT ? 0 : rtol, atol, methods[k] == ND_CONV_FFT ? NULL : scale,
                  "%s mode %d method %d", what, (int)mode, k);
        nd_free(got);
    }
    nd_free(x), nd_free(y);
    ref_free(want);
    free(scale);
}

static void check_conv(const ref_arr *a, const ref_arr *v, nd_conv_mode mode, const char *what) {
    check_conv_methods(a, v, mode, what, 1);
}

static ref_arr *rnd(ndt_rng *r, nd_dtype t, int nd, const int64_t *shape) {
    if (t == ND_INT8 || t == ND_UINT8) return ndt_rand_bits(r, t, nd, shape);
    if (ref_is_float(t)) return ndt_rand(r, t, nd, shape, -2, 2);
    return ndt_rand_small(r, t, nd, shape);
}

NDT_TEST(convolve_nd, scipy_examples) {
    /* scipy.signal.convolve(a, v, mode) printed by SciPy for
     * a = [[1, 2, 3], [4, 5, 6]], v = [[1, 0], [0, -1]]. */
    double av[6] = {1, 2, 3, 4, 5, 6}, vv[4] = {1, 0, 0, -1};
    nd_array *a = nd_from_host(av, ND_FLOAT64, 2, (int64_t[]){2, 3});
    nd_array *v = nd_from_host(vv, ND_FLOAT64, 2, (int64_t[]){2, 2});
    struct {
        nd_conv_mode mode;
        int64_t rows, cols;
        double want[12];
    } cases[] = {
        {ND_CONV_FULL, 3, 4, {1, 2, 3, 0, 4, 4, 4, -3, 0, -4, -5, -6}},
        {ND_CONV_SAME, 2, 3, {1, 2, 3, 4, 4, 4}},
        {ND_CONV_VALID, 1, 2, {4, 4}},
    };
    for (int k = 0; k < 3; k++) {
        nd_array *z = nd_convolve_nd(a, v, cases[k].mode, ND_CONV_AUTO);
        cr_assert(z, "%s", nd_last_error());
        cr_assert_eq(nd_ndim(z), 2);
        cr_expect(nd_shape(z)[0] == cases[k].rows && nd_shape(z)[1] == cases[k].cols, "mode %d shape", k);
        double got[12];
        cr_assert_eq(nd_to_host(z, got, sizeof(double) * (size_t)(cases[k].rows * cases[k].cols)), ND_OK);
        for (int i = 0; i < cases[k].rows * cases[k].cols; i++)
            cr_expect_eq(got[i], cases[k].want[i], "mode %d [%d]: %g, want %g", k, i, got[i], cases[k].want[i]);
        nd_free(z);
    }
    nd_free(a), nd_free(v);
}

NDT_TEST(convolve_nd, random_every_mode_and_dtype) {
    NDT_RNG(r);
    const nd_dtype dts[] = {ND_FLOAT64, ND_FLOAT32, ND_INT32, ND_INT8, ND_UINT8, ND_BOOL, ND_INT16};
    for (int c = 0; c < 84; c++) {
        const int nd = (int)ndt_int(&r, 1, 3);
        const nd_conv_mode mode = (nd_conv_mode)(c % 3);
        const nd_dtype t = dts[(c / 3) % 7];
        int64_t sa[ND_MAX_DIMS], sv[ND_MAX_DIMS];
        const int v_larger = mode == ND_CONV_VALID && ndt_int(&r, 0, 3) == 0;
        for (int d = 0; d < nd; d++) {
            sa[d] = ndt_int(&r, 1, 7);
            sv[d] = ndt_int(&r, 1, 5);
            if (mode == ND_CONV_VALID) { /* one must contain the other */
                if (v_larger && sv[d] < sa[d]) sv[d] = sa[d] + ndt_int(&r, 0, 2);
                if (!v_larger && sv[d] > sa[d]) sv[d] = sa[d];
            }
        }
        ref_arr *a = rnd(&r, t, nd, sa), *v = rnd(&r, t, nd, sv);
        char what[64];
        snprintf(what, sizeof what, "case %d %s %d-d", c, ref_dtype_name(t), nd);
        check_conv(a, v, mode, what);
        ref_free(a), ref_free(v);
    }
}

NDT_TEST(convolve_nd, mixed_dtypes_and_nan) {
    NDT_RNG(r);
    ref_arr *a = rnd(&r, ND_INT8, 2, (int64_t[]){6, 5}), *v = rnd(&r, ND_FLOAT32, 2, (int64_t[]){3, 2});
    check_conv(a, v, ND_CONV_FULL, "int8 * float32");
    ref_free(a), ref_free(v);
    a = rnd(&r, ND_FLOAT64, 2, (int64_t[]){7, 6});
    v = rnd(&r, ND_FLOAT64, 2, (int64_t[]){3, 3});
    ref_setd(a, 17, NAN); /* NaN reaches exactly the outputs whose window holds it */
    for (int m = 0; m < 3; m++) check_conv_methods(a, v, (nd_conv_mode)m, "NaN", 0);
    ref_free(a), ref_free(v);
}

NDT_TEST(convolve_nd, large_filters_and_many_axes) {
    NDT_RNG(r);
    struct {
        int nd;
        int64_t sa[5], sv[5];
    } cases[] = {
        {2, {20, 18}, {9, 9}},          /* 81 taps: the window reduction */
        {3, {6, 7, 5}, {5, 5, 3}},      /* 75 taps, 3-d */
        {1, {150}, {100}},              /* 1-d */
        {2, {5, 6}, {12, 11}},          /* a filter larger than the signal ('same' keeps a's shape) */
        {4, {4, 3, 4, 3}, {2, 2, 2, 2}}, /* 4-d, 16 taps */
        {5, {3, 3, 3, 2, 3}, {3, 3, 2, 2, 2}}, /* 72 taps past 4-d: the shifted sum */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int m = 0; m < 3; m++) {
            int contains = 1;
            for (int d = 0; d < cases[k].nd; d++) contains &= cases[k].sa[d] >= cases[k].sv[d];
            if (m == ND_CONV_VALID && !contains && cases[k].nd > 1) continue;
            const nd_dtype t = k % 2 ? ND_FLOAT32 : ND_FLOAT64;
            ref_arr *a = rnd(&r, t, cases[k].nd, cases[k].sa), *v = rnd(&r, t, cases[k].nd, cases[k].sv);
            char what[48];
            snprintf(what, sizeof what, "case %zu", k);
            check_conv(a, v, (nd_conv_mode)m, what);
            ref_free(a), ref_free(v);
        }
}

NDT_TEST(convolve_nd, one_d_follows_numpy) {
    NDT_RNG(r);
    for (int c = 0; c < 12; c++) {
        const int64_t n = ndt_int(&r, 1, 9), m = ndt_int(&r, 1, 9);
        ref_arr *a = rnd(&r, ND_INT32, 1, &n), *v = rnd(&r, ND_INT32, 1, &m);
        nd_array *x = ndt_upload(a), *y = ndt_upload(v);
        for (int mode = 0; mode < 3; mode++) {
            nd_array *want = nd_convolve(x, y, (nd_conv_mode)mode);
            nd_array *got = nd_convolve_nd(x, y, (nd_conv_mode)mode, ND_CONV_AUTO);
            cr_assert(want && got, "%s", nd_last_error());
            ref_arr *w = ndt_download(want);
            ndt_check(got, w, 0, 0, NULL, "n %lld m %lld mode %d", (long long)n, (long long)m, mode);
            ref_free(w);
            nd_free(want), nd_free(got);
        }
        nd_free(x), nd_free(y);
        ref_free(a), ref_free(v);
    }
}

NDT_TEST(convolve_nd, zero_d_and_complex) {
    nd_array *a = nd_full(ND_FLOAT32, 0, NULL, 3), *b = nd_full(ND_INT16, 0, NULL, -2);
    nd_array *z = nd_convolve_nd(a, b, ND_CONV_SAME, ND_CONV_AUTO);
    cr_assert(z, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(z), 0);
    cr_expect_eq(nd_dtype_of(z), ND_FLOAT32);
    cr_expect_eq(nd_item(z), -6.0);
    nd_free(a), nd_free(b), nd_free(z);
    /* complex: not conjugated (convolution, as NumPy and scipy) */
    double av[8] = {1, 1, 2, -1, 0, 3, -2, 0.5}, vv[4] = {0.5, -1, 2, 0};
    double complex ac[4], vc[2], want[5] = {0};
    for (int i = 0; i < 4; i++) ac[i] = av[2 * i] + I * av[2 * i + 1];
    for (int i = 0; i < 2; i++) vc[i] = vv[2 * i] + I * vv[2 * i + 1];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) want[i + j] += ac[i] * vc[j];
    nd_array *x = nd_from_host(av, ND_COMPLEX128, 1, (int64_t[]){4});
    nd_array *y = nd_from_host(vv, ND_COMPLEX128, 1, (int64_t[]){2});
    nd_array *c = nd_convolve_nd(x, y, ND_CONV_FULL, ND_CONV_DIRECT);
    cr_assert(c, "%s", nd_last_error());
    double got[10];
    cr_assert_eq(nd_to_host(c, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 5; i++)
        cr_expect(fabs(got[2 * i] - creal(want[i])) < 1e-12 && fabs(got[2 * i + 1] - cimag(want[i])) < 1e-12,
                  "[%d]: %g%+gi, want %g%+gi", i, got[2 * i], got[2 * i + 1], creal(want[i]), cimag(want[i]));
    nd_free(x), nd_free(y), nd_free(c);
}

NDT_TEST(convolve_nd, errors) {
    nd_array *a = nd_zeros(ND_FLOAT32, 2, (int64_t[]){4, 5}), *v1 = nd_zeros(ND_FLOAT32, 1, (int64_t[]){3});
    nd_array *e = nd_zeros(ND_FLOAT32, 2, (int64_t[]){0, 3}), *odd = nd_zeros(ND_FLOAT32, 2, (int64_t[]){2, 7});
    cr_expect_null(nd_convolve_nd(a, v1, ND_CONV_FULL, ND_CONV_AUTO));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, e, ND_CONV_FULL, ND_CONV_AUTO));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, odd, ND_CONV_VALID, ND_CONV_AUTO));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, a, (nd_conv_mode)7, ND_CONV_AUTO));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, a, ND_CONV_FULL, (nd_conv_method)9));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, e, ND_CONV_SAME, ND_CONV_FFT)); /* the FFT method checks the same */
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(a, odd, ND_CONV_VALID, ND_CONV_FFT));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_convolve_nd");
    cr_expect_null(nd_convolve_nd(NULL, a, ND_CONV_SAME, ND_CONV_AUTO));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_convolve_nd");
    /* 'same' with odd shapes still works, and the inputs are intact */
    nd_array *ok = nd_convolve_nd(a, odd, ND_CONV_SAME, ND_CONV_AUTO);
    cr_assert(ok, "%s", nd_last_error());
    cr_expect(nd_shape(ok)[0] == 4 && nd_shape(ok)[1] == 5);
    nd_array *total = nd_sum(ok, ND_ALL_AXES);
    cr_expect_eq(nd_item(total), 0.0);
    nd_free(total), nd_free(ok), nd_free(a), nd_free(v1), nd_free(e), nd_free(odd);
}

/* The direct method's shifted sum of 25 taps is one generated kernel
 * (after the padded copy). */
NDT_TEST(convolve_nd, small_filter_is_one_kernel) {
    NDT_RNG(r);
    ref_arr *a = rnd(&r, ND_FLOAT32, 2, (int64_t[]){64, 48}), *v = rnd(&r, ND_FLOAT32, 2, (int64_t[]){5, 5});
    nd_array *x = ndt_upload(a), *y = ndt_upload(v);
    for (int m = 0; m < 3; m++) {
        cr_assert_eq(nd_sync(), ND_OK);
        nd_stats before, after;
        nd_get_stats(&before);
        nd_array *z = nd_convolve_nd(x, y, (nd_conv_mode)m, ND_CONV_DIRECT);
        cr_assert(z, "%s", nd_last_error());
        cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
        nd_get_stats(&after);
        /* valid reads a in place; full and same first fill a zero array
         * and store a into its interior (two kernels) */
        const unsigned long long k = NDT_KERNELS(after) - NDT_KERNELS(before);
        cr_expect_eq(k, m == ND_CONV_VALID ? 1 : 3, "mode %d: %llu kernels", m, k);
        nd_free(z);
    }
    nd_free(x), nd_free(y);
    ref_free(a), ref_free(v);
}

/* ---------------------------------------------------- the FFT method */

typedef double complex cplx;

/* The convolution of host arrays as scipy.signal.convolve / cuPyNumeric
 * cut it (1-d swapped as NumPy), in complex128; *top: the largest output's
 * sum of |products| (the FFT's error scales with it). */
static cplx *host_conv(int nd, const int64_t *sa, const cplx *a, const int64_t *sv, const cplx *v, nd_conv_mode mode,
                       int64_t *os, int64_t *osize, double *top) {
    int a_covers = 1;
    for (int d = 0; d < nd; d++) a_covers &= sa[d] >= sv[d];
    if ((nd == 1 && sv[0] > sa[0]) || (mode == ND_CONV_VALID && !a_covers))
        return host_conv(nd, sv, v, sa, a, mode, os, osize, top);
    int64_t start[ND_MAX_DIMS], na = 1, nv = 1;
    *osize = 1;
    for (int d = 0; d < nd; d++) {
        start[d] = mode == ND_CONV_FULL ? 0 : mode == ND_CONV_SAME ? (sv[d] - 1) / 2 : sv[d] - 1;
        os[d] = mode == ND_CONV_FULL ? sa[d] + sv[d] - 1 : mode == ND_CONV_SAME ? sa[d] : sa[d] - sv[d] + 1;
        *osize *= os[d], na *= sa[d], nv *= sv[d];
    }
    cplx *out = calloc((size_t)*osize + 1, sizeof *out);
    double *sc = calloc((size_t)*osize + 1, sizeof *sc);
    int64_t ia[ND_MAX_DIMS], iv[ND_MAX_DIMS], io[ND_MAX_DIMS];
    for (int64_t fa = 0; fa < na; fa++) {
        ref_unravel(fa, nd, sa, ia);
        for (int64_t fv = 0; fv < nv; fv++) {
            ref_unravel(fv, nd, sv, iv);
            int inside = 1;
            for (int d = 0; d < nd; d++) {
                io[d] = ia[d] + iv[d] - start[d];
                inside &= io[d] >= 0 && io[d] < os[d];
            }
            if (!inside) continue;
            const int64_t fo = ref_ravel(io, nd, os);
            out[fo] += a[fa] * v[fv];
            sc[fo] += cabs(a[fa]) * cabs(v[fv]);
        }
    }
    *top = 0;
    for (int64_t i = 0; i < *osize; i++) *top = sc[i] > *top ? sc[i] : *top;
    free(sc);
    return out;
}

/* Random values in [-2, 2) (imaginary parts for complex dtypes), rounded
 * to the dtype, uploaded; x receives them in complex128. */
static nd_array *upload_c(ndt_rng *r, nd_dtype t, int nd, const int64_t *shape, cplx *x) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    const int c = t == ND_COMPLEX64 || t == ND_COMPLEX128, single = t == ND_FLOAT32 || t == ND_COMPLEX64;
    double *buf = malloc((size_t)(2 * n + 1) * sizeof *buf);
    float *fbuf = malloc((size_t)(2 * n + 1) * sizeof *fbuf);
    for (int64_t i = 0; i < n; i++) {
        double re = ndt_uniform(r, -2, 2), im = c ? ndt_uniform(r, -2, 2) : 0;
        if (single) re = (float)re, im = (float)im;
        x[i] = re + I * im;
        if (c) buf[2 * i] = re, buf[2 * i + 1] = im, fbuf[2 * i] = (float)re, fbuf[2 * i + 1] = (float)im;
        else buf[i] = re, fbuf[i] = (float)re;
    }
    nd_array *a = nd_from_host(single ? (void *)fbuf : (void *)buf, t, nd, shape);
    free(buf), free(fbuf);
    return a;
}

/* got (any numeric dtype) against want within tol (absolute). */
static void expect_close_c(nd_array *got, const cplx *want, int64_t n, double tol, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    nd_array *g = nd_astype(got, ND_COMPLEX128);
    double *h = malloc((size_t)(2 * n + 1) * sizeof *h);
    cr_assert_eq(nd_to_host(g, h, (size_t)(2 * n) * sizeof *h), ND_OK, "%s: %s", what, nd_last_error());
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++) {
        const double err = cabs((h[2 * i] + I * h[2 * i + 1]) - want[i]);
        if (!(err <= tol)) {
            bad++;
            cr_expect_fail("%s: [%lld] is %.17g%+.17gi, want %.17g%+.17gi (tol %.3g)", what, (long long)i, h[2 * i],
                           h[2 * i + 1], creal(want[i]), cimag(want[i]), tol);
        }
    }
    free(h);
    nd_free(g);
}

NDT_TEST(convolve_nd, fft_random_real_and_complex) {
    NDT_RNG(r);
    const nd_dtype dts[4] = {ND_FLOAT64, ND_COMPLEX128, ND_FLOAT32, ND_COMPLEX64};
    for (int c = 0; c < 72; c++) {
        const int nd = 1 + (c / 3) % 3;
        const nd_conv_mode mode = (nd_conv_mode)(c % 3);
        const nd_dtype t = dts[(c / 9) % 4];
        int64_t sa[ND_MAX_DIMS], sv[ND_MAX_DIMS], na = 1, nv = 1;
        const int v_larger = ndt_int(&r, 0, 3) == 0; /* a filter larger than the signal */
        for (int d = 0; d < nd; d++) {
            sa[d] = ndt_int(&r, 1, 10); /* odd and even */
            sv[d] = v_larger ? sa[d] + ndt_int(&r, 0, 4) : ndt_int(&r, 1, sa[d]);
            na *= sa[d], nv *= sv[d];
        }
        cplx *ah = malloc((size_t)na * sizeof *ah), *vh = malloc((size_t)nv * sizeof *vh);
        nd_array *a = upload_c(&r, t, nd, sa, ah), *v = upload_c(&r, t, nd, sv, vh);
        int64_t os[ND_MAX_DIMS], on;
        double top;
        cplx *want = host_conv(nd, sa, ah, sv, vh, mode, os, &on, &top);
        const int single = t == ND_FLOAT32 || t == ND_COMPLEX64;
        const nd_conv_method ms[3] = {ND_CONV_FFT, ND_CONV_AUTO, ND_CONV_DIRECT};
        for (int k = 0; k < 3; k++) {
            nd_array *got = nd_convolve_nd(a, v, mode, ms[k]);
            char what[96];
            snprintf(what, sizeof what, "case %d %s %d-d mode %d method %d", c, nd_dtype_name(t), nd, (int)mode,
                     (int)ms[k]);
            cr_assert(got, "%s: %s", what, nd_last_error());
            cr_expect_eq(nd_dtype_of(got), t, "%s: dtype %s", what, nd_dtype_name(nd_dtype_of(got)));
            cr_assert_eq(nd_ndim(got), nd, "%s", what);
            for (int d = 0; d < nd; d++)
                cr_assert_eq(nd_shape(got)[d], os[d], "%s: axis %d is %lld, want %lld", what, d,
                             (long long)nd_shape(got)[d], (long long)os[d]);
            expect_close_c(got, want, on, (single ? 1e-5 : 1e-13) * (top + 1e-300) * 4, what);
            nd_free(got);
        }
        free(ah), free(vh), free(want);
        nd_free(a), nd_free(v);
    }
}

/* Integer and bool results through the FFT: rounded to the exact sums
 * (float64 holds them); AUTO keeps them direct whatever the size. */
NDT_TEST(convolve_nd, fft_integers_round_exactly) {
    NDT_RNG(r);
    const int64_t na = 300, nv = 200;
    int32_t *a = malloc(na * sizeof *a), *v = malloc(nv * sizeof *v);
    for (int64_t i = 0; i < na; i++) a[i] = (int32_t)ndt_int(&r, -1000, 1000);
    for (int64_t i = 0; i < nv; i++) v[i] = (int32_t)ndt_int(&r, -1000, 1000);
    a[0] = 1000, v[0] = 1000, v[1] = -1000; /* large partial sums */
    nd_array *x = nd_from_host(a, ND_INT32, 1, &na), *y = nd_from_host(v, ND_INT32, 1, &nv);
    for (int m = 0; m < 3; m++) {
        nd_array *f = nd_convolve_nd(x, y, (nd_conv_mode)m, ND_CONV_FFT);
        nd_array *d = nd_convolve_nd(x, y, (nd_conv_mode)m, ND_CONV_DIRECT);
        cr_assert(f && d, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(f), ND_INT32);
        ref_arr *w = ndt_download(d);
        ndt_check(f, w, 0, 0, NULL, "int32 mode %d", m);
        ref_free(w);
        nd_free(f), nd_free(d);
    }
    nd_array *k300 = nd_scalar(300), *km500 = nd_scalar(-500);
    nd_array *bx = nd_gt(x, k300), *by = nd_lt(y, km500);
    nd_free(k300), nd_free(km500);
    nd_array *bf = nd_convolve_nd(bx, by, ND_CONV_FULL, ND_CONV_FFT);
    nd_array *bd = nd_convolve_nd(bx, by, ND_CONV_FULL, ND_CONV_DIRECT);
    cr_assert(bf && bd, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(bf), ND_BOOL);
    ref_arr *w = ndt_download(bd);
    ndt_check(bf, w, 0, 0, NULL, "bool");
    ref_free(w);
    nd_free(bx), nd_free(by), nd_free(bf), nd_free(bd);
    nd_free(x), nd_free(y);
    free(a), free(v);
}

/* Number of NaN values in a float64 result. */
static int64_t nan_count(nd_array *z) {
    nd_array *isn = nd_isnan(z), *c = nd_count_nonzero(isn, ND_ALL_AXES);
    const int64_t k = (int64_t)nd_item(c);
    nd_free(c), nd_free(isn);
    return k;
}

/* A NaN reaches every output through the FFT (the transform mixes all
 * values) and only its window's outputs directly: which one AUTO took is
 * visible, and it must take the FFT for long filters only. */
NDT_TEST(convolve_nd, auto_choice_and_nan_spread) {
    struct {
        int nd;
        int64_t sa[2], sv[2];
        int fft; /* AUTO's expected choice */
    } cases[] = {
        {1, {4096}, {1024}, 1}, {1, {4096}, {8}, 0}, {1, {100000}, {64}, 0},
        {2, {40, 40}, {31, 31}, 1}, {2, {64, 64}, {3, 3}, 0}, {2, {256, 256}, {25, 25}, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        nd_array *a = nd_zeros(ND_FLOAT64, cases[k].nd, cases[k].sa), *v = nd_ones(ND_FLOAT64, cases[k].nd, cases[k].sv);
        nd_array *corner = nd_view(a, cases[k].nd == 1 ? "0" : "0, 0"), *nan = nd_scalar(NAN);
        cr_assert_eq(nd_assign(corner, nan), ND_OK, "%s", nd_last_error());
        nd_free(corner), nd_free(nan);
        nd_array *au = nd_convolve_nd(a, v, ND_CONV_FULL, ND_CONV_AUTO);
        nd_array *ff = nd_convolve_nd(a, v, ND_CONV_FULL, ND_CONV_FFT);
        nd_array *di = nd_convolve_nd(a, v, ND_CONV_FULL, ND_CONV_DIRECT);
        cr_assert(au && ff && di, "%s", nd_last_error());
        const int64_t taps = nd_size(v), all = nd_size(di);
        cr_expect_eq(nan_count(ff), all, "case %zu: FFT spreads the NaN", k);
        cr_expect_eq(nan_count(di), taps, "case %zu: direct keeps it in its window", k);
        cr_expect_eq(nan_count(au), cases[k].fft ? all : taps, "case %zu: AUTO took %s", k,
                     cases[k].fft ? "direct, want FFT" : "FFT, want direct");
        nd_free(au), nd_free(ff), nd_free(di), nd_free(a), nd_free(v);
    }
    /* integers stay direct under AUTO however long the filter */
    nd_array *a = nd_ones(ND_INT64, 1, (int64_t[]){5000}), *v = nd_ones(ND_INT64, 1, (int64_t[]){3000});
    nd_array *z = nd_convolve_nd(a, v, ND_CONV_VALID, ND_CONV_AUTO);
    cr_assert(z, "%s", nd_last_error());
    nd_array *s = nd_sum(z, ND_ALL_AXES);
    cr_expect_eq(nd_item(s), 2001.0 * 3000.0);
    nd_free(s), nd_free(z), nd_free(a), nd_free(v);
}

/* NumPy's 1-d correlate(a, v, mode): z[k] = sum_j a[k + j - s] v[j]; a
 * shorter a swaps with v and the result is reversed. */
static double *host_correlate(const double *a, int64_t n, const double *v, int64_t m, nd_conv_mode mode, int64_t *len) {
    if (n < m) {
        double *z = host_correlate(v, m, a, n, mode, len);
        for (int64_t i = 0; i < *len / 2; i++) {
            double t = z[i];
            z[i] = z[*len - 1 - i], z[*len - 1 - i] = t;
        }
        return z;
    }
    const int64_t s = mode == ND_CONV_FULL ? m - 1 : mode == ND_CONV_SAME ? m / 2 : 0;
    *len = mode == ND_CONV_FULL ? n + m - 1 : mode == ND_CONV_SAME ? n : n - m + 1;
    double *z = calloc((size_t)*len, sizeof *z);
    for (int64_t k = 0; k < *len; k++)
        for (int64_t j = 0; j < m; j++) {
            const int64_t i = k + j - s;
            if (i >= 0 && i < n) z[k] += a[i] * v[j];
        }
    return z;
}

/* The 1-d nd_convolve and nd_correlate take the FFT for long filters
 * (AUTO's rule) with NumPy's modes, swaps and reversal. */
NDT_TEST(convolve_nd, one_d_long_filters_through_fft) {
    NDT_RNG(r);
    const int64_t sizes[3][2] = {{3000, 501}, {777, 2048}, {1500, 1500}};
    for (int c = 0; c < 3; c++) {
        const int64_t n = sizes[c][0], m = sizes[c][1];
        double *a = malloc(n * sizeof *a), *v = malloc(m * sizeof *v), *rv = malloc(m * sizeof *rv);
        double norm = 0;
        for (int64_t i = 0; i < n; i++) a[i] = ndt_uniform(&r, -1, 1), norm += fabs(a[i]);
        for (int64_t i = 0; i < m; i++) v[i] = ndt_uniform(&r, -1, 1);
        for (int64_t i = 0; i < m; i++) rv[i] = v[m - 1 - i];
        nd_array *x = nd_from_host(a, ND_FLOAT64, 1, &n), *y = nd_from_host(v, ND_FLOAT64, 1, &m);
        for (int mode = 0; mode < 3; mode++) {
            int64_t lc, lv;
            double *wc = host_correlate(a, n, v, m, (nd_conv_mode)mode, &lc);
            /* convolve(a, v) = correlate(longer, shorter reversed) */
            double *wv = n >= m ? host_correlate(a, n, rv, m, (nd_conv_mode)mode, &lv)
                                : NULL;
            if (!wv) {
                double *ra = malloc(n * sizeof *ra);
                for (int64_t i = 0; i < n; i++) ra[i] = a[n - 1 - i];
                wv = host_correlate(v, m, ra, n, (nd_conv_mode)mode, &lv);
                free(ra);
            }
            nd_array *zc = nd_correlate(x, y, (nd_conv_mode)mode), *zv = nd_convolve(x, y, (nd_conv_mode)mode);
            cr_assert(zc && zv, "%s", nd_last_error());
            cr_assert_eq(nd_size(zc), lc, "correlate n %lld m %lld mode %d", (long long)n, (long long)m, mode);
            cr_assert_eq(nd_size(zv), lv, "convolve n %lld m %lld mode %d", (long long)n, (long long)m, mode);
            cplx *cc = malloc((size_t)lc * sizeof *cc), *cv = malloc((size_t)lv * sizeof *cv);
            for (int64_t i = 0; i < lc; i++) cc[i] = wc[i];
            for (int64_t i = 0; i < lv; i++) cv[i] = wv[i];
            char what[96];
            snprintf(what, sizeof what, "correlate n %lld m %lld mode %d", (long long)n, (long long)m, mode);
            expect_close_c(zc, cc, lc, 1e-12 * norm, what);
            snprintf(what, sizeof what, "convolve n %lld m %lld mode %d", (long long)n, (long long)m, mode);
            expect_close_c(zv, cv, lv, 1e-12 * norm, what);
            free(cc), free(cv), free(wc), free(wv);
            nd_free(zc), nd_free(zv);
        }
        /* the route is the FFT: a NaN reaches every output */
        nd_array *first = nd_view(x, "0"), *nan = nd_scalar(NAN);
        cr_assert_eq(nd_assign(first, nan), ND_OK, "%s", nd_last_error());
        nd_free(first), nd_free(nan);
        nd_array *z = nd_convolve(x, y, ND_CONV_FULL);
        cr_expect_eq(nan_count(z), n + m - 1, "n %lld m %lld: the long filter went direct", (long long)n,
                     (long long)m);
        nd_free(z), nd_free(x), nd_free(y);
        free(a), free(v), free(rv);
    }
}
