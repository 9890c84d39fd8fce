/* complex64 and complex128 through the public API: NumPy 2's promotion
 * table, creation, host round trips (interleaved real/imaginary as NumPy),
 * casts both ways, printing and .npy against what NumPy 2.4.6 printed and
 * wrote (the strings and bytes below were produced with it), the complex
 * ops in fused chains against NumPy's formulas evaluated here in double,
 * weak scalars, the real-array forms of conj/real/imag/angle, and the
 * errors (NumPy's TypeErrors, what nd does not have yet). Each op's edge
 * values on every backend are test_ops' complex rows. */
#include "common.h"

#include <complex.h>
#include <unistd.h>

static nd_array *c128(int n, const double *v) { return nd_from_host(v, ND_COMPLEX128, 1, (int64_t[]){n}); }

static void get_c128(nd_array *a, double *out, int n) {
    cr_assert(a, "%s", nd_last_error());
    cr_assert_eq(nd_dtype_of(a), ND_COMPLEX128);
    cr_assert_eq(nd_size(a), n);
    cr_assert_eq(nd_to_host(a, out, (size_t)n * 16), ND_OK, "%s", nd_last_error());
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

NDT_TEST(complex, promotion_matches_numpy) {
    /* np.result_type(complex64 / complex128, t) for t in bool .. complex128 (NumPy 2.4.6) */
    nd_scope_begin();
    static const nd_dtype order[14] = {ND_BOOL, ND_INT8, ND_INT16, ND_INT32, ND_INT64, ND_UINT8, ND_UINT16,
                                       ND_UINT32, ND_UINT64, ND_FLOAT16, ND_FLOAT32, ND_FLOAT64,
                                       ND_COMPLEX64, ND_COMPLEX128};
    static const nd_dtype want64[14] = {ND_COMPLEX64,  ND_COMPLEX64,  ND_COMPLEX64,  ND_COMPLEX128,
                                        ND_COMPLEX128, ND_COMPLEX64,  ND_COMPLEX64,  ND_COMPLEX128,
                                        ND_COMPLEX128, ND_COMPLEX64,  ND_COMPLEX64,  ND_COMPLEX128,
                                        ND_COMPLEX64,  ND_COMPLEX128};
    for (int k = 0; k < 14; k++) {
        nd_array *a = nd_zeros(ND_COMPLEX64, ND_SHAPE(2)), *b = nd_zeros(order[k], ND_SHAPE(2));
        nd_array *s = nd_add(a, b), *r = nd_add(b, a);
        cr_assert(s && r, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(s), want64[k], "complex64 + %s: %s", nd_dtype_name(order[k]),
                     nd_dtype_name(nd_dtype_of(s)));
        cr_expect_eq(nd_dtype_of(r), want64[k], "%s + complex64", nd_dtype_name(order[k]));
        nd_array *c = nd_zeros(ND_COMPLEX128, ND_SHAPE(2)), *u = nd_mul(c, b);
        cr_expect_eq(nd_dtype_of(u), ND_COMPLEX128, "complex128 * %s", nd_dtype_name(order[k]));
        nd_free(a); nd_free(b); nd_free(s); nd_free(r); nd_free(c); nd_free(u);
    }
    /* bfloat16 (ml_dtypes: its parts fit float32) */
    nd_array *a = nd_zeros(ND_COMPLEX64, ND_SHAPE(1)), *b = nd_zeros(ND_BFLOAT16, ND_SHAPE(1)), *s = nd_add(a, b);
    cr_expect_eq(nd_dtype_of(s), ND_COMPLEX64);
    /* a Python float keeps the complex dtype (NEP 50) */
    nd_array *w = nd_mul(a, nd_scalar(2.5));
    cr_expect_eq(nd_dtype_of(w), ND_COMPLEX64);
    cr_expect_str_eq(nd_dtype_name(ND_COMPLEX64), "complex64");
    cr_expect_str_eq(nd_dtype_name(ND_COMPLEX128), "complex128");
    cr_expect_eq(nd_dtype_size(ND_COMPLEX64), 8);
    cr_expect_eq(nd_dtype_size(ND_COMPLEX128), 16);
    nd_free(a); nd_free(b); nd_free(s); nd_free(w);
    nd_scope_end();
}

NDT_TEST(complex, creation_and_host_round_trip) {
    double got[8];
    nd_array *z = nd_zeros(ND_COMPLEX128, ND_SHAPE(2)), *o = nd_ones(ND_COMPLEX128, ND_SHAPE(2));
    nd_array *f = nd_full(ND_COMPLEX128, ND_SHAPE(2), -2.5), *fc = nd_full_complex(ND_COMPLEX128, ND_SHAPE(2), 1.5, -0.0);
    get_c128(z, got, 2);
    for (int i = 0; i < 4; i++) cr_expect(same(got[i], 0.0), "zeros[%d] = %g", i, got[i]);
    get_c128(o, got, 2);
    cr_expect(got[0] == 1 && same(got[1], 0.0) && got[2] == 1 && same(got[3], 0.0));
    get_c128(f, got, 2);
    cr_expect(got[0] == -2.5 && same(got[1], 0.0));
    get_c128(fc, got, 2);
    cr_expect(got[0] == 1.5 && same(got[1], -0.0) && got[2] == 1.5 && same(got[3], -0.0));
    /* complex64: interleaved float32 parts; NaN, inf and -0 kept */
    const float in[6] = {1.0f, -2.0f, NAN, INFINITY, -0.0f, 3.5e-42f};
    nd_array *a = nd_from_host(in, ND_COMPLEX64, 1, (int64_t[]){3});
    cr_assert(a, "%s", nd_last_error());
    float back[6];
    cr_assert_eq(nd_to_host(a, back, sizeof back), ND_OK, "%s", nd_last_error());
    cr_expect_eq(memcmp(in, back, sizeof in), 0, "complex64 round trip changed bits");
    nd_array *fc64 = nd_full_complex(ND_COMPLEX64, ND_SCALAR_SHAPE, 0.1, 1e39);
    float one[2];
    cr_assert_eq(nd_to_host(fc64, one, sizeof one), ND_OK);
    cr_expect(one[0] == 0.1f && isinf(one[1]), "full_complex float32 parts rounded: %g %g", one[0], one[1]);
    double re = 0, im = 0;
    cr_expect_eq(nd_item_complex(fc64, &re, &im), ND_OK, "%s", nd_last_error());
    cr_expect(re == (double)0.1f && isinf(im));
    cr_expect(isnan(nd_item(fc64)));
    cr_expect_eq(nd_last_status(), ND_ERR_DTYPE);
    nd_array *w = nd_scalar(2.5);
    cr_expect_eq(nd_item_complex(w, &re, &im), ND_OK);
    cr_expect(re == 2.5 && im == 0);
    nd_free(w);
    cr_expect_null(nd_full_complex(ND_FLOAT64, ND_SHAPE(2), 1, 1));
    cr_expect_eq(nd_last_status(), ND_ERR_DTYPE);
    nd_free(z); nd_free(o); nd_free(f); nd_free(fc); nd_free(a); nd_free(fc64);
}

NDT_TEST(complex, astype_both_ways) {
    const double v[8] = {1.75, -2.0, -3.9, 0.0, 0.0, 0.5, NAN, 1.0};
    nd_array *a = c128(4, v);
    nd_array *f = nd_astype(a, ND_FLOAT32), *b = nd_astype(a, ND_BOOL), *i = nd_astype(a, ND_INT16);
    nd_array *c = nd_astype(a, ND_COMPLEX64), *h = nd_astype(a, ND_FLOAT16);
    float fv[4];
    uint8_t bv[4];
    int16_t iv[4];
    float cv[8];
    cr_assert_eq(nd_to_host(f, fv, sizeof fv), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(b, bv, sizeof bv), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(i, iv, sizeof iv), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(c, cv, sizeof cv), ND_OK, "%s", nd_last_error());
    /* np.array(v).astype(float32) drops the imaginary part (NumPy warns) */
    cr_expect(fv[0] == 1.75f && fv[1] == -3.9f && fv[2] == 0.0f && isnan(fv[3]));
    /* to bool: either part nonzero (np.array([0.5j]).astype(bool) is True) */
    cr_expect(bv[0] == 1 && bv[1] == 1 && bv[2] == 1 && bv[3] == 1);
    cr_expect(iv[0] == 1 && iv[1] == -3 && iv[2] == 0);
    cr_expect(cv[0] == 1.75f && cv[1] == -2.0f && cv[2] == (float)-3.9 && cv[5] == 0.5f && isnan(cv[6]));
    uint16_t hv[4];
    cr_assert_eq(nd_to_host(h, hv, sizeof hv), ND_OK, "%s", nd_last_error());
    cr_expect_eq(hv[0], 0x3f00); /* 1.75 in float16 */
    /* real -> complex: (x, 0); int64 rounds once into complex64's float32 */
    const int64_t big[2] = {(1ll << 62) + (1ll << 38) + 1, -7};
    nd_array *ib = nd_from_host(big, ND_INT64, 1, (int64_t[]){2}), *ic = nd_astype(ib, ND_COMPLEX64);
    cr_assert_eq(nd_to_host(ic, cv, 16), ND_OK, "%s", nd_last_error());
    cr_expect(cv[0] == (float)big[0] && cv[1] == 0 && cv[2] == -7 && cv[3] == 0, "int64 -> complex64: %.9g", cv[0]);
    nd_free(a); nd_free(f); nd_free(b); nd_free(i); nd_free(c); nd_free(h); nd_free(ib); nd_free(ic);
}

static void expect_repr(nd_array *a, const char *want) {
    char buf[512];
    cr_assert(nd_to_string(a, buf, sizeof buf) >= 0, "%s", nd_last_error());
    cr_expect_str_eq(buf, want);
}

NDT_TEST(complex, printing_matches_numpy) {
    const float v64[6] = {1, 2, -0.5f, -1.25f, NAN, INFINITY};
    nd_array *a = nd_from_host(v64, ND_COMPLEX64, 1, (int64_t[]){3});
    expect_repr(a, "array([ 1. +2.j  , -0.5-1.25j,  nan +infj], dtype=complex64)");
    const double e[4] = {1e10, 1, 0, -1e-5};
    nd_array *b = c128(2, e);
    expect_repr(b, "array([1.e+10+1.e+00j, 0.e+00-1.e-05j])");
    const float s[2] = {1.5f, -2};
    nd_array *c = nd_from_host(s, ND_COMPLEX64, 0, NULL);
    expect_repr(c, "array(1.5-2.j, dtype=complex64)");
    const double m[8] = {1, 1, 2, -3, 0, 0, -0.0, -1};
    nd_array *d = nd_from_host(m, ND_COMPLEX128, 2, (int64_t[]){2, 2});
    expect_repr(d, "array([[ 1.+1.j,  2.-3.j],\n       [ 0.+0.j, -0.-1.j]])");
    const double n[4] = {INFINITY, -INFINITY, 1, NAN};
    nd_array *f = c128(2, n);
    expect_repr(f, "array([inf-infj,  1.+nanj])");
    nd_free(a); nd_free(b); nd_free(c); nd_free(d); nd_free(f);
}

NDT_TEST(complex, npy_both_ways) {
    char dir[] = "/tmp/nd_test_complex_XXXXXX", path[96];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c.npy", dir);
    /* np.save of np.array([1+2j, complex(-0.0, inf)], '>c16'): big-endian parts */
    static const unsigned char be[] =
        "\x93NUMPY\x01\x00\x76\x00{'descr': '>c16', 'fortran_order': False, 'shape': (2,), }"
        "                                                           \n"
        "\x3f\xf0\x00\x00\x00\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x00"
        "\x80\x00\x00\x00\x00\x00\x00\x00\x7f\xf0\x00\x00\x00\x00\x00\x00";
    FILE *fp = fopen(path, "wb");
    cr_assert(fp);
    cr_assert_eq(fwrite(be, 1, 160, fp), 160);
    fclose(fp);
    nd_array *a = nd_load_npy(path);
    double got[4];
    get_c128(a, got, 2);
    cr_expect(got[0] == 1 && got[1] == 2 && same(got[2], -0.0) && isinf(got[3]) && got[3] > 0,
              "'>c16' read as %g %g %g %g", got[0], got[1], got[2], got[3]);
    /* written as NumPy writes complex64: '<c8' and the parts in order */
    nd_array *c = nd_astype(a, ND_COMPLEX64);
    cr_assert_eq(nd_save_npy(path, c), ND_OK, "%s", nd_last_error());
    unsigned char buf[256];
    fp = fopen(path, "rb");
    size_t len = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    cr_assert_eq(len, 144);
    cr_expect(memmem(buf, 128, "'descr': '<c8'", 14) != NULL);
    cr_expect_eq(memcmp(buf + 128, "\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x00\x80\x00\x00\x80\x7f", 16), 0);
    nd_array *back = nd_load_npy(path);
    cr_assert(back, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(back), ND_COMPLEX64);
    unlink(path);
    rmdir(dir);
    nd_free(a); nd_free(c); nd_free(back);
}

/* NumPy's complex formulas in double, for the chain below */
static double complex np_mul(double complex x, double complex y) {
    return CMPLX(creal(x) * creal(y) - cimag(x) * cimag(y), creal(x) * cimag(y) + cimag(x) * creal(y));
}
static double complex np_div(double complex a, double complex b) {
    double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    if (fabs(br) >= fabs(bi)) {
        double rat = bi / br, scl = 1.0 / (br + bi * rat);
        return CMPLX((ar + ai * rat) * scl, (ai - ar * rat) * scl);
    }
    double rat = br / bi, scl = 1.0 / (bi + br * rat);
    return CMPLX((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}

NDT_TEST(complex, fused_chain_against_numpy_formulas) {
    NDT_RNG(r);
    enum { n = 3000 };
    double *x = malloc(2 * n * sizeof *x), *y = malloc(2 * n * sizeof *y), *got = malloc(2 * n * sizeof *got);
    double *ab = malloc(n * sizeof *ab), *an = malloc(n * sizeof *an);
    for (int i = 0; i < 2 * n; i++) x[i] = ndt_uniform(&r, -4, 4), y[i] = ndt_uniform(&r, -4, 4);
    nd_scope_begin();
    nd_array *a = c128(n, x), *b = c128(n, y);
    /* (a * conj(b) + 1.5) / (b - a), then |.| and angle of it */
    nd_array *q = nd_keep(nd_div(nd_add(nd_mul(a, nd_conj(b)), nd_scalar(1.5)), nd_sub(b, a)));
    nd_array *m = nd_keep(nd_abs(q)), *g = nd_keep(nd_angle(q));
    nd_scope_end();
    get_c128(q, got, n);
    cr_assert_eq(nd_dtype_of(m), ND_FLOAT64);
    cr_assert_eq(nd_to_host(m, ab, n * sizeof *ab), ND_OK);
    cr_assert_eq(nd_to_host(g, an, n * sizeof *an), ND_OK);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double complex xa = CMPLX(x[2 * i], x[2 * i + 1]), yb = CMPLX(y[2 * i], y[2 * i + 1]);
        double complex w = np_div(np_mul(xa, conj(yb)) + 1.5, yb - xa);
        double sc = cabs(w) * 1e-13;
        if (fabs(got[2 * i] - creal(w)) > sc || fabs(got[2 * i + 1] - cimag(w)) > sc ||
            fabs(ab[i] - cabs(w)) > sc || fabs(an[i] - carg(w)) > 1e-12 * fmax(1, fabs(carg(w))))
            if (bad++ < 3)
                cr_log_error("element %d: got %.17g%+.17gj |%.17g| arg %.17g, want %.17g%+.17gj", i, got[2 * i],
                             got[2 * i + 1], ab[i], an[i], creal(w), cimag(w));
    }
    cr_expect_eq(bad, 0, "%d of %d differ", bad, n);
    /* parts, exp/log/sqrt, comparisons and isnan on the same values */
    nd_scope_begin();
    nd_array *a2 = c128(n, x);
    nd_array *re = nd_keep(nd_real(a2)), *im = nd_keep(nd_imag(a2));
    /* z / 0 is (+-inf, +-inf) by NumPy's division (each part over +0) */
    nd_array *lt = nd_keep(nd_lt(a2, nd_conj(a2))), *nan = nd_keep(nd_isinf(nd_div(a2, nd_scalar(0.0))));
    nd_array *el = nd_keep(nd_exp(nd_log(nd_sqrt(a2))));
    nd_scope_end();
    double *rv = malloc(n * sizeof *rv), *iv = malloc(n * sizeof *iv);
    uint8_t *lv = malloc(n), *nv = malloc(n);
    cr_assert_eq(nd_to_host(re, rv, n * 8), ND_OK);
    cr_assert_eq(nd_to_host(im, iv, n * 8), ND_OK);
    cr_assert_eq(nd_to_host(lt, lv, n), ND_OK);
    cr_assert_eq(nd_to_host(nan, nv, n), ND_OK);
    get_c128(el, got, n);
    bad = 0;
    for (int i = 0; i < n; i++) {
        double complex s = csqrt(CMPLX(x[2 * i], x[2 * i + 1]));
        /* z < conj(z): same real part, so im < -im */
        int want_lt = x[2 * i + 1] < -x[2 * i + 1];
        if (rv[i] != x[2 * i] || iv[i] != x[2 * i + 1] || lv[i] != want_lt || nv[i] != 1 ||
            cabs(CMPLX(got[2 * i], got[2 * i + 1]) - s) > 1e-14 * cabs(s))
            bad++;
    }
    cr_expect_eq(bad, 0, "%d of %d differ", bad, n);
    nd_free(q); nd_free(m); nd_free(g); nd_free(re); nd_free(im); nd_free(lt); nd_free(nan); nd_free(el);
    free(x); free(y); free(got); free(ab); free(an); free(rv); free(iv); free(lv); free(nv);
}

NDT_TEST(complex, real_array_forms) {
    const double v[3] = {-2.0, 0.0, NAN};
    nd_array *a = nd_from_host(v, ND_FLOAT64, 1, (int64_t[]){3});
    nd_array *re = nd_real(a), *im = nd_imag(a), *cj = nd_conj(a), *an = nd_angle(a);
    double r[3], i[3], c[3], g[3];
    cr_assert_eq(nd_to_host(re, r, sizeof r), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(im, i, sizeof i), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(cj, c, sizeof c), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(an, g, sizeof g), ND_OK, "%s", nd_last_error());
    cr_expect(r[0] == -2 && r[1] == 0 && isnan(r[2]));
    cr_expect(i[0] == 0 && i[1] == 0 && i[2] == 0);
    cr_expect(c[0] == -2 && isnan(c[2]));
    cr_expect(g[0] == M_PI && g[1] == 0 && isnan(g[2]), "angle: %g %g %g", g[0], g[1], g[2]);
    cr_expect_eq(nd_dtype_of(re), ND_FLOAT64);
    nd_array *b = nd_ones(ND_BOOL, ND_SHAPE(2));
    cr_expect_null(nd_conj(b));
    cr_expect_eq(nd_last_status(), ND_ERR_DTYPE);
    nd_free(a); nd_free(re); nd_free(im); nd_free(cj); nd_free(an); nd_free(b);
}

NDT_TEST(complex, errors_at_record_time) {
    nd_array *z = nd_ones(ND_COMPLEX64, ND_SHAPE(3));
    /* NumPy's TypeErrors */
    nd_array *(*const type_errors_un[])(nd_array *) = {nd_floor, nd_ceil, nd_trunc, nd_signbit,
                                                        nd_isposinf, nd_invert, nd_cbrt, nd_deg2rad};
    for (size_t k = 0; k < sizeof type_errors_un / sizeof *type_errors_un; k++) {
        cr_expect_null(type_errors_un[k](z));
        cr_expect_eq(nd_last_status(), ND_ERR_DTYPE, "unary %zu: %s", k, nd_last_error());
    }
    nd_array *(*const type_errors_bin[])(nd_array *, nd_array *) = {nd_floor_divide, nd_remainder, nd_fmod,
                                                                     nd_arctan2, nd_hypot, nd_copysign,
                                                                     nd_bitwise_and, nd_logaddexp};
    for (size_t k = 0; k < sizeof type_errors_bin / sizeof *type_errors_bin; k++) {
        cr_expect_null(type_errors_bin[k](z, z));
        cr_expect_eq(nd_last_status(), ND_ERR_DTYPE, "binary %zu: %s", k, nd_last_error());
    }
    cr_expect(strstr(nd_last_error(), "complex64") != NULL, "%s", nd_last_error());
    /* NumPy has these for complex, nd not yet */
    cr_expect_null(nd_round(z, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_nan_to_num(z));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_sort(z, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED, "%s", nd_last_error());
    /* an empty extent of an order has no identity, complex too */
    nd_array *e = nd_zeros(ND_COMPLEX64, ND_SHAPE(0));
    cr_expect_null(nd_max(e, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "%s", nd_last_error());
    cr_expect_null(nd_argmin(e, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE, "%s", nd_last_error());
    nd_free(e);
    /* the array still works */
    nd_array *s = nd_add(z, z);
    float v[6];
    cr_assert_eq(nd_to_host(s, v, sizeof v), ND_OK, "%s", nd_last_error());
    cr_expect(v[0] == 2 && v[1] == 0);
    nd_free(z); nd_free(s);
}

NDT_TEST(complex, sum_and_mean_over_axes) {
    NDT_RNG(r);
    enum { R = 37, C = 300 };
    double *x = malloc(2 * R * C * sizeof *x);
    for (int i = 0; i < 2 * R * C; i++) x[i] = ndt_uniform(&r, -100, 100);
    x[2 * (5 * C + 7) + 1] = INFINITY; /* row 5 sums to an infinite imaginary part */
    nd_array *a = nd_from_host(x, ND_COMPLEX128, ND_SHAPE(R, C));
    nd_array *s1 = nd_sum(a, 1), *s0 = nd_sum(a, 0), *m = nd_mean(a, ND_ALL_AXES);
    nd_array *a64 = nd_astype(a, ND_COMPLEX64), *m64 = nd_mean(a64, 1);
    cr_assert(s1 && s0 && m && m64, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(m64), ND_COMPLEX64);
    double g1[2 * R], g0[2 * C], gm[2];
    float g64[2 * R];
    get_c128(s1, g1, R);
    get_c128(s0, g0, C);
    get_c128(m, gm, 1);
    cr_assert_eq(nd_to_host(m64, g64, sizeof g64), ND_OK, "%s", nd_last_error());
    /* references: long double sums of the parts; the mean divides the sum by
     * (n + 0j) as NumPy does (Smith's method: times 1/n) */
    int bad = 0;
    long double tr = 0, ti = 0;
    for (int i = 0; i < R; i++) {
        long double sr = 0, si = 0;
        for (int j = 0; j < C; j++) sr += x[2 * (i * C + j)], si += x[2 * (i * C + j) + 1];
        tr += sr, ti += si;
        if (fabs(g1[2 * i] - (double)sr) > 1e-10 || (i == 5 ? !(isinf(g1[2 * i + 1]) && g1[2 * i + 1] > 0)
                                                             : fabs(g1[2 * i + 1] - (double)si) > 1e-10))
            bad++;
        /* row 5: NumPy's (s + inf j) / (n + 0j) is nan+infj (inf * 0 in Smith's method) */
        float mr = (float)(sr / C), mi = (float)(si / C);
        if (i == 5 ? !(isnan(g64[2 * i]) && isinf(g64[2 * i + 1]))
                   : (fabsf(g64[2 * i] - mr) > 1e-5f * fmaxf(1, fabsf(mr)) ||
                      fabsf(g64[2 * i + 1] - mi) > 1e-5f * fmaxf(1, fabsf(mi))))
            bad++;
    }
    for (int j = 0; j < C; j++) {
        long double sr = 0, si = 0;
        for (int i = 0; i < R; i++) sr += x[2 * (i * C + j)], si += x[2 * (i * C + j) + 1];
        if (fabs(g0[2 * j] - (double)sr) > 1e-10 || (j != 7 && fabs(g0[2 * j + 1] - (double)si) > 1e-10)) bad++;
    }
    cr_expect_eq(bad, 0, "%d sums differ", bad);
    (void)tr, (void)ti;
    cr_expect(isnan(gm[0]) && isinf(gm[1]), "mean %g%+gj (NumPy: nan+infj)", gm[0], gm[1]);
    /* a finite mean: the sum times 1/n, as NumPy's complex division by n */
    nd_array *fin = nd_view(a, "6:, :"), *mf = nd_mean(fin, ND_ALL_AXES);
    get_c128(mf, gm, 1);
    long double fr = 0, fi = 0;
    for (int i = 6 * C; i < R * C; i++) fr += x[2 * i], fi += x[2 * i + 1];
    double inv = 1.0 / ((R - 6) * C);
    cr_expect(fabs(gm[0] - (double)fr * inv) < 1e-12 && fabs(gm[1] - (double)fi * inv) < 1e-12,
              "mean %.17g%+.17gj", gm[0], gm[1]);
    nd_free(fin); nd_free(mf);
    nd_free(a); nd_free(s1); nd_free(s0); nd_free(m); nd_free(a64); nd_free(m64);
    free(x);
}

/* ------------------------------------------------------------ matmul */

/* C (m x n) = A (m x k) B (k x n), naive, in long double complex */
static void naive_mm(const double *a, const double *b, long double complex *c, int m, int n, int k, int a_t,
                     int conj_a) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            long double complex s = 0;
            for (int p = 0; p < k; p++) {
                int ai = a_t ? p * m + i : i * k + p;
                long double complex x = CMPLXL(a[2 * ai], a[2 * ai + 1]);
                if (conj_a) x = conjl(x);
                s += x * CMPLXL(b[2 * (p * n + j)], b[2 * (p * n + j) + 1]);
            }
            c[i * n + j] = s;
        }
}

/* normwise: |got - want| <= tol * sum_p |a_ip| |b_pj| (the bound of any
 * summation order) */
static int mm_bad(const double *got, const long double complex *want, const double *a, const double *b, int m,
                  int n, int k, int a_t, double tol) {
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            long double bound = 0;
            for (int p = 0; p < k; p++) {
                int ai = a_t ? p * m + i : i * k + p;
                bound += hypotl(a[2 * ai], a[2 * ai + 1]) * hypotl(b[2 * (p * n + j)], b[2 * (p * n + j) + 1]);
            }
            long double complex w = want[i * n + j];
            long double e = hypotl(got[2 * (i * n + j)] - creall(w), got[2 * (i * n + j) + 1] - cimagl(w));
            if (!(e <= tol * bound + 1e-300)) {
                if (bad++ < 3)
                    cr_log_error("C[%d,%d] = %.17g%+.17gj, want %.17Lg%+.17Lgj", i, j, got[2 * (i * n + j)],
                                 got[2 * (i * n + j) + 1], creall(w), cimagl(w));
            }
        }
    return bad;
}

NDT_TEST(complex, matmul_against_naive_triple_loop) {
    nd_scope_begin();
    NDT_RNG(r);
    enum { M = 37, K = 53, N = 29 };
    double *a = malloc(2 * M * K * sizeof *a), *b = malloc(2 * K * N * sizeof *b);
    double *got = malloc(2 * M * N * sizeof *got);
    long double complex *want = malloc(M * N * sizeof *want);
    for (int i = 0; i < 2 * M * K; i++) a[i] = ndt_uniform(&r, -2, 2);
    for (int i = 0; i < 2 * K * N; i++) b[i] = ndt_uniform(&r, -2, 2);
    for (int dt = 0; dt < 2; dt++) {
        const nd_dtype t = dt ? ND_COMPLEX64 : ND_COMPLEX128;
        const double tol = dt ? 1e-6 : 1e-15;
        nd_array *A = nd_astype(nd_from_host(a, ND_COMPLEX128, ND_SHAPE(M, K)), t);
        nd_array *AT = nd_astype(nd_from_host(a, ND_COMPLEX128, ND_SHAPE(K, M)), t); /* read as A^T */
        nd_array *B = nd_astype(nd_from_host(b, ND_COMPLEX128, ND_SHAPE(K, N)), t);
        nd_array *C = nd_matmul(A, B), *CT = nd_matmul(nd_transpose(AT, NULL), B);
        cr_assert(C && CT, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(C), t);
        nd_array *C128 = nd_astype(C, ND_COMPLEX128), *CT128 = nd_astype(CT, ND_COMPLEX128);
        for (int i = 0; i < 2 * M * N; i++) got[i] = NAN; /* poisoned */
        get_c128(C128, got, M * N);
        naive_mm(a, b, want, M, N, K, 0, 0);
        cr_expect_eq(mm_bad(got, want, a, b, M, N, K, 0, tol), 0, "%s matmul", nd_dtype_name(t));
        for (int i = 0; i < 2 * M * N; i++) got[i] = NAN;
        get_c128(CT128, got, M * N);
        naive_mm(a, b, want, M, N, K, 1, 0);
        cr_expect_eq(mm_bad(got, want, a, b, M, N, K, 1, tol), 0, "%s matmul of a transposed view",
                     nd_dtype_name(t));
        nd_free(A); nd_free(AT); nd_free(B); nd_free(C); nd_free(CT); nd_free(C128); nd_free(CT128);
    }
    /* batched, broadcast batch: (2, M, K) @ (K, N) */
    nd_array *A1 = nd_from_host(a, ND_COMPLEX128, ND_SHAPE(M, K));
    nd_array *A2 = nd_stack(2, (nd_array *[]){A1, nd_conj(A1)}, 0);
    nd_array *B = nd_from_host(b, ND_COMPLEX128, ND_SHAPE(K, N));
    nd_array *C = nd_matmul(A2, B);
    cr_assert(C, "%s", nd_last_error());
    double *g2 = malloc(4 * M * N * sizeof *g2);
    get_c128(C, g2, 2 * M * N);
    naive_mm(a, b, want, M, N, K, 0, 0);
    cr_expect_eq(mm_bad(g2, want, a, b, M, N, K, 0, 1e-15), 0, "batch 0");
    naive_mm(a, b, want, M, N, K, 0, 1);
    cr_expect_eq(mm_bad(g2 + 2 * M * N, want, a, b, M, N, K, 0, 1e-15), 0, "batch 1 (conj)");
    /* mixed real/complex operands promote first: float64 @ complex64 is
     * complex128 (NumPy 2) */
    double *ra = malloc(2 * M * K * sizeof *ra);
    for (int i = 0; i < M * K; i++) ra[2 * i] = a[2 * i], ra[2 * i + 1] = 0;
    nd_array *R = nd_from_host(ra, ND_COMPLEX128, ND_SHAPE(M, K));
    nd_array *Rf = nd_real(R), *B64 = nd_astype(B, ND_COMPLEX64);
    nd_array *Bq = nd_astype(B64, ND_COMPLEX128), *CM = nd_matmul(Rf, B64);
    cr_assert(CM, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(CM), ND_COMPLEX128);
    double *bq = malloc(2 * K * N * sizeof *bq);
    get_c128(Bq, bq, K * N);
    get_c128(CM, got, M * N);
    naive_mm(ra, bq, want, M, N, K, 0, 0);
    cr_expect_eq(mm_bad(got, want, ra, bq, M, N, K, 0, 1e-15), 0, "float64 @ complex64");
    nd_free(A1); nd_free(A2); nd_free(B); nd_free(C); nd_free(R); nd_free(Rf); nd_free(B64); nd_free(Bq);
    nd_free(CM);
    free(a); free(b); free(got); free(want); free(g2); free(ra); free(bq);
    nd_scope_end();
}

NDT_TEST(complex, vdot_inner_outer_dot) {
    /* vdot conjugates its first argument: vdot(a, b) = sum(conj(a) * b);
     * np.vdot([1+2j, 3-1j], [2-1j, 1j]) = (1-2j)(2-1j) + (3+1j)(1j) = -1-2j */
    nd_scope_begin();
    const double av[4] = {1, 2, 3, -1}, bv[4] = {2, -1, 0, 1};
    nd_array *a = c128(2, av), *b = c128(2, bv);
    nd_array *v = nd_vdot(a, b), *in = nd_inner(a, b), *d = nd_dot(a, b), *o = nd_outer(a, b);
    cr_assert(v && in && d && o, "%s", nd_last_error());
    double g[8] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    get_c128(v, g, 1);
    cr_expect(g[0] == -1 && g[1] == -2, "vdot %g%+gj, want -1-2j", g[0], g[1]);
    /* inner and dot do not conjugate: (1+2j)(2-1j) + (3-1j)(1j) = 5+3j + 1+3j = 5+6j */
    get_c128(in, g, 1);
    cr_expect(g[0] == 5 && g[1] == 6, "inner %g%+gj, want 5+6j", g[0], g[1]);
    get_c128(d, g, 1);
    cr_expect(g[0] == 5 && g[1] == 6, "dot %g%+gj, want 5+6j", g[0], g[1]);
    get_c128(o, g, 4);
    /* outer[1][0] = (3-1j)(2-1j) = 5-5j */
    cr_expect(g[4] == 5 && g[5] == -5, "outer[1,0] %g%+gj", g[4], g[5]);
    /* a 2-d complex vdot flattens; a real first argument is not conjugated */
    nd_array *m = nd_reshape(c128(2, av), ND_SHAPE(2, 1)), *rv = nd_vdot(m, nd_real(b));
    cr_assert(rv, "%s", nd_last_error());
    get_c128(rv, g, 1); /* conj(1+2j)*2 + conj(3-1j)*0 = 2-4j */
    cr_expect(g[0] == 2 && g[1] == -4, "vdot(complex, real) %g%+gj", g[0], g[1]);
    nd_free(a); nd_free(b); nd_free(v); nd_free(in); nd_free(d); nd_free(o); nd_free(m); nd_free(rv);
    nd_scope_end();
}

/* ------------------------------------------------------------ reductions */

/* NumPy's argmax/argmin of a complex run (arraytypes' CDOUBLE_argmax): the
 * first value with a NaN part, else the first lexicographic extreme */
static int np_arg(const double *z, int n, int stride, int mx, int skip_nan) {
    int best = -1;
    for (int i = 0; i < n; i++) {
        double re = z[2 * i * stride], im = z[2 * i * stride + 1];
        int nan = isnan(re) || isnan(im);
        if (nan) {
            if (!skip_nan) return i;
            continue;
        }
        if (best < 0) { best = i; continue; }
        double br = z[2 * best * stride], bi = z[2 * best * stride + 1];
        int better = mx ? (re > br || (re == br && im > bi)) : (re < br || (re == br && im < bi));
        if (better) best = i;
    }
    return best;
}

NDT_TEST(complex, orders_and_nan_reductions) {
    NDT_RNG(r);
    enum { R = 23, C = 41 };
    double *x = malloc(2 * R * C * sizeof *x);
    for (int i = 0; i < 2 * R * C; i++) x[i] = (double)(int)ndt_uniform(&r, -3, 3); /* many ties */
    x[2 * (3 * C + 5) + 1] = NAN;      /* row 3: a NaN imaginary part */
    x[2 * (3 * C + 9)] = NAN;          /* and a later NaN real part */
    for (int j = 0; j < C; j++) x[2 * (7 * C + j)] = NAN; /* row 7: all NaN */
    x[2 * (11 * C + 2)] = INFINITY;    /* row 11: +inf real parts, imag decides */
    x[2 * (11 * C + 4)] = INFINITY, x[2 * (11 * C + 4) + 1] = 5;
    x[2 * (12 * C + 0)] = -0.0, x[2 * (12 * C + 0) + 1] = 0; /* -0 and 0 tie: the first wins */
    nd_array *a = nd_from_host(x, ND_COMPLEX128, ND_SHAPE(R, C));
    nd_array *res[8] = {nd_argmax(a, 1), nd_argmin(a, 1), nd_nanargmax(a, 1), nd_nanargmin(a, 1),
                        nd_max(a, 1), nd_min(a, 1), nd_nanmax(a, 1), nd_nanmin(a, 1)};
    for (int k = 0; k < 8; k++) cr_assert(res[k], "%d: %s", k, nd_last_error());
    int64_t idx[4][R];
    double val[4][2 * R];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < R; i++) idx[k][i] = -77; /* poisoned */
        cr_expect_eq(nd_dtype_of(res[k]), ND_INT64);
        cr_assert_eq(nd_to_host(res[k], idx[k], sizeof idx[k]), ND_OK, "%s", nd_last_error());
        get_c128(res[4 + k], val[k], R);
    }
    int bad = 0;
    for (int i = 0; i < R; i++) {
        const double *row = x + 2 * i * C;
        for (int k = 0; k < 4; k++) {
            int mx = !(k & 1), skip = k >= 2;
            int w = np_arg(row, C, 1, mx, skip);
            int wi = w < 0 ? -1 : w;
            if (idx[k][i] != wi) {
                if (bad++ < 5) cr_log_error("row %d kind %d: index %lld, want %d", i, k, (long long)idx[k][i], wi);
            }
            /* the value: at that index (an all-NaN row's first value for nanmax) */
            int vi = w < 0 ? 0 : w;
            if (!same(val[k][2 * i], row[2 * vi]) || !same(val[k][2 * i + 1], row[2 * vi + 1]))
                if (bad++ < 5)
                    cr_log_error("row %d kind %d: value %g%+gj, want %g%+gj", i, k, val[k][2 * i], val[k][2 * i + 1],
                                 row[2 * vi], row[2 * vi + 1]);
        }
    }
    cr_expect_eq(bad, 0, "%d differ", bad);
    /* over both axes (row-major index) and along axis 0, complex64 */
    nd_array *a64 = nd_astype(a, ND_COMPLEX64), *all = nd_argmin(a64, ND_ALL_AXES), *col = nd_argmax(a64, 0);
    int64_t ia, ic[C];
    cr_assert_eq(nd_to_host(all, &ia, 8), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(col, ic, sizeof ic), ND_OK, "%s", nd_last_error());
    cr_expect_eq(ia, np_arg(x, R * C, 1, 0, 0));
    bad = 0;
    for (int j = 0; j < C; j++) bad += ic[j] != np_arg(x + 2 * j, R, C, 1, 0);
    cr_expect_eq(bad, 0, "%d columns differ", bad);
    /* var/std: mean of |x - mean|^2 (real), ddof; nansum/nanmean; any/all */
    nd_array *fin = nd_view(a, "13:, :");
    nd_array *v = nd_var_ddof(fin, 1, 1.0), *sd = nd_std(fin, ND_ALL_AXES);
    nd_array *ns = nd_nansum(a, 1), *nm = nd_nanmean(a64, 1), *an = nd_any(a, 1), *al = nd_all(a, 1);
    cr_assert(v && sd && ns && nm && an && al, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(v), ND_FLOAT64);
    cr_expect_eq(nd_dtype_of(nm), ND_COMPLEX64);
    double gv[R - 13], gs, gns[2 * R];
    float gnm[2 * R];
    uint8_t gan[R], gal[R];
    cr_assert_eq(nd_to_host(v, gv, sizeof gv), ND_OK);
    cr_assert_eq(nd_to_host(sd, &gs, 8), ND_OK);
    get_c128(ns, gns, R);
    cr_assert_eq(nd_to_host(nm, gnm, sizeof gnm), ND_OK);
    cr_assert_eq(nd_to_host(an, gan, R), ND_OK);
    cr_assert_eq(nd_to_host(al, gal, R), ND_OK);
    bad = 0;
    long double tr = 0, ti = 0, tn = (R - 13) * C;
    for (int i = 13; i < R; i++)
        for (int j = 0; j < C; j++) tr += x[2 * (i * C + j)], ti += x[2 * (i * C + j) + 1];
    long double tq = 0;
    for (int i = 13; i < R; i++) {
        long double mr = 0, mi = 0, q = 0;
        for (int j = 0; j < C; j++) mr += x[2 * (i * C + j)], mi += x[2 * (i * C + j) + 1];
        mr /= C, mi /= C;
        for (int j = 0; j < C; j++) {
            long double dr = x[2 * (i * C + j)] - mr, di = x[2 * (i * C + j) + 1] - mi;
            q += dr * dr + di * di;
            long double er = x[2 * (i * C + j)] - tr / tn, ei = x[2 * (i * C + j) + 1] - ti / tn;
            tq += er * er + ei * ei;
        }
        if (fabsl(gv[i - 13] - q / (C - 1)) > 1e-12L * (q / (C - 1))) bad++;
    }
    cr_expect(fabsl(gs - sqrtl(tq / tn)) < 1e-12L * sqrtl(tq / tn), "std %.17g want %.17Lg", gs, sqrtl(tq / tn));
    for (int i = 0; i < R; i++) {
        long double sr = 0, si = 0;
        int cnt = 0, any = 0, all = 1;
        for (int j = 0; j < C; j++) {
            double re = x[2 * (i * C + j)], im = x[2 * (i * C + j) + 1];
            any |= re != 0 || im != 0;
            all &= re != 0 || im != 0;
            if (isnan(re) || isnan(im)) continue;
            sr += re, si += im, cnt++;
        }
        if (gns[2 * i] != (double)sr || gns[2 * i + 1] != (double)si) bad++;
        if (cnt == 0 ? !(isnan(gnm[2 * i]) && isnan(gnm[2 * i + 1]))
                     : (fabsf(gnm[2 * i] - (float)(sr / cnt)) > 1e-6f || fabsf(gnm[2 * i + 1] - (float)(si / cnt)) > 1e-6f))
            if (bad++ < 8) cr_log_error("nanmean row %d: %g%+gj", i, gnm[2 * i], gnm[2 * i + 1]);
        if (gan[i] != any || gal[i] != all) bad++;
    }
    cr_expect_eq(bad, 0, "%d differ", bad);
    for (int k = 0; k < 8; k++) nd_free(res[k]);
    nd_free(a); nd_free(a64); nd_free(all); nd_free(col); nd_free(fin); nd_free(v); nd_free(sd);
    nd_free(ns); nd_free(nm); nd_free(an); nd_free(al);
    free(x);
}

NDT_TEST(complex, cumsum_of_the_parts) {
    const double v[10] = {1, 2, NAN, 1, 0.5, -4, 3, 0, -1, 1e300};
    nd_array *a = c128(5, v), *cs = nd_cumsum(a, 0), *ncs = nd_nancumsum(a, 0);
    cr_assert(cs && ncs, "%s", nd_last_error());
    double g[10], h[10];
    get_c128(cs, g, 5);
    get_c128(ncs, h, 5);
    /* cumsum: NaN in the real part from element 1 on; the imaginary parts add */
    cr_expect(g[0] == 1 && g[1] == 2 && isnan(g[2]) && g[3] == 3 && isnan(g[4]) && g[5] == -1);
    /* nancumsum: element 1 (a NaN part) counts as 0 + 0j */
    cr_expect(h[2] == 1 && h[3] == 2 && h[4] == 1.5 && h[5] == -2 && h[6] == 4.5 && h[7] == -2 &&
                  h[8] == 3.5 && h[9] == 1e300,
              "%g%+gj %g%+gj", h[4], h[5], h[8], h[9]);
    nd_free(a); nd_free(cs); nd_free(ncs);
}

/* ------------------------------------------------------------ elementwise */

NDT_TEST(complex, power_and_inverse_functions_through_the_api) {
    nd_scope_begin();
    NDT_RNG(r);
    enum { n = 500 };
    double *x = malloc(2 * n * sizeof *x), *y = malloc(2 * n * sizeof *y), *g = malloc(2 * n * sizeof *g);
    for (int i = 0; i < 2 * n; i++) x[i] = ndt_uniform(&r, -3, 3), y[i] = ndt_uniform(&r, -2, 2);
    nd_scope_begin();
    nd_array *a = c128(n, x), *b = c128(n, y);
    nd_array *p = nd_keep(nd_pow(a, b)), *p3 = nd_keep(nd_pow(a, nd_scalar(-3)));
    nd_array *as = nd_keep(nd_arcsin(nd_arctanh(a))), *sg = nd_keep(nd_sign(a));
    nd_array *l1 = nd_keep(nd_log1p(nd_expm1(nd_mul(a, nd_scalar(1e-9)))));
    /* dtypes: complex64 ** Python int stays complex64, ** float64 array is complex128 */
    nd_array *a64 = nd_keep(nd_astype(a, ND_COMPLEX64));
    nd_array *pw = nd_keep(nd_pow(a64, nd_scalar(2))), *pr = nd_keep(nd_pow(a64, nd_real(a)));
    nd_scope_end();
    cr_expect_eq(nd_dtype_of(pw), ND_COMPLEX64);
    cr_expect_eq(nd_dtype_of(pr), ND_COMPLEX128);
    int bad = 0;
    get_c128(p, g, n);
    for (int i = 0; i < n; i++) {
        long double complex w = cpowl(CMPLXL(x[2 * i], x[2 * i + 1]), CMPLXL(y[2 * i], y[2 * i + 1]));
        if (cabsl(CMPLXL(g[2 * i], g[2 * i + 1]) - w) > 1e-13 * cabsl(w)) bad++;
    }
    cr_expect_eq(bad, 0, "pow: %d differ", bad);
    get_c128(p3, g, n);
    bad = 0;
    for (int i = 0; i < n; i++) {
        long double complex z = CMPLXL(x[2 * i], x[2 * i + 1]), w = 1.0L / (z * z * z);
        if (cabsl(CMPLXL(g[2 * i], g[2 * i + 1]) - w) > 1e-14 * cabsl(w)) bad++;
    }
    cr_expect_eq(bad, 0, "z ** -3: %d differ", bad);
    get_c128(as, g, n);
    bad = 0;
    for (int i = 0; i < n; i++) {
        long double complex w = casinl(catanhl(CMPLXL(x[2 * i], x[2 * i + 1])));
        if (cabsl(CMPLXL(g[2 * i], g[2 * i + 1]) - w) > 1e-13 * cabsl(w)) bad++;
    }
    cr_expect_eq(bad, 0, "arcsin(arctanh(z)): %d differ", bad);
    get_c128(sg, g, n);
    bad = 0;
    for (int i = 0; i < n; i++) {
        long double h = hypotl(x[2 * i], x[2 * i + 1]);
        if (fabsl(g[2 * i] - x[2 * i] / h) > 1e-15L || fabsl(g[2 * i + 1] - x[2 * i + 1] / h) > 1e-15L) bad++;
    }
    cr_expect_eq(bad, 0, "sign: %d differ", bad);
    /* log1p(expm1(z)) = z for tiny z, to the last digits (no 1 + z rounding) */
    get_c128(l1, g, n);
    bad = 0;
    for (int i = 0; i < n; i++) {
        double zr = x[2 * i] * 1e-9, zi = x[2 * i + 1] * 1e-9;
        if (fabs(g[2 * i] - zr) > 1e-15 * hypot(zr, zi) || fabs(g[2 * i + 1] - zi) > 1e-15 * hypot(zr, zi)) bad++;
    }
    cr_expect_eq(bad, 0, "log1p(expm1(z)): %d differ", bad);
    /* NumPy's special cases: z ** 0 = 1 (0 ** 0 too), 0 ** w = 0 for Re w > 0,
     * NaN + NaNj otherwise; sign(0) = 0 */
    const double zs[6] = {0, 0, 0, 0, 0, 0}, ws[6] = {0, 0, 2.5, 1, -1, 0};
    nd_array *za = c128(3, zs), *wa = c128(3, ws), *zp = nd_pow(za, wa), *s0 = nd_sign(za);
    get_c128(zp, g, 3);
    cr_expect(g[0] == 1 && g[1] == 0 && g[2] == 0 && g[3] == 0 && isnan(g[4]) && isnan(g[5]),
              "0**w: %g%+gj %g%+gj %g%+gj", g[0], g[1], g[2], g[3], g[4], g[5]);
    get_c128(s0, g, 3);
    cr_expect(g[0] == 0 && g[1] == 0);
    nd_free(za); nd_free(wa); nd_free(zp); nd_free(s0);
    /* float_power of a complex64 computes in complex128 (NumPy's DD->D
     * loop); isclose compares complex values, both parts */
    const double fb[4] = {0, 1, 1, 1e-3};
    nd_array *zb = c128(2, fb), *z64 = nd_astype(zb, ND_COMPLEX64), *fp = nd_float_power(z64, nd_scalar(2));
    nd_array *cl = nd_isclose(zb, nd_conj(zb), 1e-5, 1e-8, false), *cs = nd_isclose(zb, zb, 1e-5, 1e-8, false);
    cr_assert(fp && cl && cs, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(fp), ND_COMPLEX128);
    get_c128(fp, g, 2); /* (1j)**2 = -1, (1+1e-3j)**2 = 1 - 1e-6 + 2e-3j (the float32 part) */
    cr_expect(g[0] == -1 && g[1] == 0 && fabs(g[3] - 2 * (double)1e-3f) < 1e-15, "%g%+gj %g%+gj", g[0], g[1], g[2], g[3]);
    uint8_t cv[2];
    cr_assert_eq(nd_to_host(cl, cv, 2), ND_OK, "%s", nd_last_error());
    cr_expect(cv[0] == 0 && cv[1] == 0, "isclose(z, conj z): %d %d", cv[0], cv[1]);
    cr_assert_eq(nd_to_host(cs, cv, 2), ND_OK, "%s", nd_last_error());
    cr_expect(cv[0] == 1 && cv[1] == 1, "isclose(z, z): %d %d", cv[0], cv[1]);
    nd_free(zb); nd_free(z64); nd_free(fp); nd_free(cl); nd_free(cs);
    nd_free(p); nd_free(p3); nd_free(as); nd_free(sg); nd_free(l1); nd_free(a64); nd_free(pw); nd_free(pr);
    free(x); free(y); free(g);
    nd_scope_end();
}

NDT_TEST(complex, prod_against_long_double) {
    nd_scope_begin();
    NDT_RNG(r);
    enum { R = 7, C = 45 };
    double *x = malloc(2 * R * C * sizeof *x);
    for (int i = 0; i < 2 * R * C; i++) x[i] = ndt_uniform(&r, 0.5, 1.5) * (ndt_next(&r) & 1 ? 1 : -1);
    x[2 * (2 * C + 3) + 1] = NAN; /* row 2, column 3 */
    nd_array *a = nd_from_host(x, ND_COMPLEX128, ND_SHAPE(R, C));
    nd_array *p1 = nd_prod(a, 1), *p0 = nd_prod(a, 0), *pa = nd_prod(a, ND_ALL_AXES), *pn = nd_nanprod(a, 1);
    nd_array *pk = nd_prod_axes(a, 1, (int[]){0}, true), *pe = nd_prod(nd_view(a, ":, 0:0"), 1);
    nd_array *a64 = nd_astype(a, ND_COMPLEX64), *p64 = nd_prod(a64, 1);
    cr_assert(p1 && p0 && pa && pn && pk && pe && p64, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(p64), ND_COMPLEX64);
    cr_expect(nd_ndim(pk) == 2 && nd_shape(pk)[0] == 1 && nd_shape(pk)[1] == C);
    double g1[2 * R], g0[2 * C], ga[2], gn[2 * R], ge[2 * R];
    float g64[2 * R];
    for (int i = 0; i < 2 * R; i++) g1[i] = gn[i] = ge[i] = -7; /* poisoned */
    get_c128(p1, g1, R);
    get_c128(p0, g0, C);
    get_c128(pa, ga, 1);
    get_c128(pn, gn, R);
    get_c128(pe, ge, R);
    cr_assert_eq(nd_to_host(p64, g64, sizeof g64), ND_OK, "%s", nd_last_error());
    int bad = 0;
    for (int i = 0; i < R; i++) {
        long double complex s = 1, sn = 1;
        for (int j = 0; j < C; j++) {
            long double complex z = CMPLXL(x[2 * (i * C + j)], x[2 * (i * C + j) + 1]);
            s *= z;
            if (!isnan(x[2 * (i * C + j) + 1])) sn *= z;
        }
        /* C products each within a few ulp: a C-ulp normwise bound */
        if (i == 2 ? !(isnan(g1[4]) || isnan(g1[5])) : cabsl(CMPLXL(g1[2 * i], g1[2 * i + 1]) - s) > 1e-16L * C * cabsl(s))
            bad++;
        if (cabsl(CMPLXL(gn[2 * i], gn[2 * i + 1]) - sn) > 1e-16L * C * cabsl(sn)) bad++;
        if (i != 2 && cabsl(CMPLXL(g64[2 * i], g64[2 * i + 1]) - s) > 1e-7L * C * cabsl(s)) bad++;
        if (ge[2 * i] != 1 || !same(ge[2 * i + 1], 0.0)) bad++; /* empty: 1 + 0j */
    }
    for (int j = 0; j < C; j++) {
        long double complex s = 1;
        for (int i = 0; i < R; i++) s *= CMPLXL(x[2 * (i * C + j)], x[2 * (i * C + j) + 1]);
        if (j != 3 && cabsl(CMPLXL(g0[2 * j], g0[2 * j + 1]) - s) > 1e-16L * R * cabsl(s)) bad++;
    }
    cr_expect_eq(bad, 0, "%d products differ", bad);
    cr_expect(isnan(ga[0]) || isnan(ga[1]));
    /* exact where NumPy's is: (1j)**4 = 1, (1+1j)**2 * (1-1j) = 2+2j */
    const double e[8] = {0, 1, 0, 1, 0, 1, 0, 1}, f[6] = {1, 1, 1, 1, 1, -1};
    nd_array *pi4 = nd_prod(c128(4, e), 0), *pf = nd_prod(c128(3, f), 0);
    get_c128(pi4, ga, 1);
    cr_expect(ga[0] == 1 && ga[1] == 0, "(1j)**4 = %g%+gj", ga[0], ga[1]);
    get_c128(pf, ga, 1);
    cr_expect(ga[0] == 2 && ga[1] == 2, "%g%+gj", ga[0], ga[1]);
    nd_free(a); nd_free(p1); nd_free(p0); nd_free(pa); nd_free(pn); nd_free(pk); nd_free(pe); nd_free(a64);
    nd_free(p64); nd_free(pi4); nd_free(pf);
    free(x);
    nd_scope_end();
}
