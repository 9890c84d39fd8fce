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
    cr_expect_null(nd_arcsin(z));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_pow(z, z));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_round(z, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_nan_to_num(z));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_prod(z, ND_ALL_AXES));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_var(z, ND_ALL_AXES));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_sort(z, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED, "%s", nd_last_error());
    cr_expect_null(nd_max(z, 0));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED);
    cr_expect_null(nd_matmul(z, z));
    cr_expect_eq(nd_last_status(), ND_ERR_UNSUPPORTED, "%s", nd_last_error());
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
