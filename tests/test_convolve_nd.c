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

static void check_conv(const ref_arr *a, const ref_arr *v, nd_conv_mode mode, const char *what) {
    nd_array *x = ndt_upload(a), *y = ndt_upload(v);
    double *scale;
    ref_arr *want = ref_convolve(a, v, mode, &scale);
    for (int method = 0; method < 2; method++) {
        nd_array *got = nd_convolve_nd(x, y, mode, method ? ND_CONV_DIRECT : ND_CONV_AUTO);
        cr_assert(got, "%s mode %d: %s", what, (int)mode, nd_last_error());
        const double rtol = want->dt == ND_FLOAT32 ? 1e-5 : want->dt == ND_FLOAT64 ? 1e-12 : 0;
        ndt_check(got, want, rtol, 0, scale, "%s mode %d method %d", what, (int)mode, method);
        nd_free(got);
    }
    nd_free(x), nd_free(y);
    ref_free(want);
    free(scale);
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
    for (int m = 0; m < 3; m++) check_conv(a, v, (nd_conv_mode)m, "NaN");
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
    cr_expect_null(nd_convolve_nd(a, a, ND_CONV_SAME, ND_CONV_FFT));
    cr_expect(strstr(nd_last_error(), "ND_CONV_DIRECT") != NULL, "%s", nd_last_error());
    NDT_EXPECT_ERR(ND_ERR_UNSUPPORTED, "nd_convolve_nd");
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
