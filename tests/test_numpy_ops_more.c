/* NumPy's shifts, gcd/lcm, nextafter, ldexp, logaddexp(2), float_power,
 * round, nan_to_num, isclose, allclose and array_equal through the public
 * API, against values NumPy 2.4 printed (hex floats from float.hex): result
 * dtypes, edge values (INT_MIN, shift counts beyond the width, NaN, +-inf,
 * +-0, subnormals), weak Python scalars, fusion and every error. The
 * cross-backend op test (test_ops.c) covers the element functions over
 * every dtype and edge pair. */
#include "common.h"

#include <float.h>

/* got (any dtype) against want as float64 values: the dtype, then the
 * value of each element, bit for bit (the sign of a zero too); NaN matches
 * any NaN. Every want here is exact in float64. */
static void expect_vals(nd_array *got, nd_dtype dt, const double *want, int64_t n,
                        const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), dt, "%s: dtype %s, NumPy 2.4 gives %s", what,
                 nd_dtype_name(nd_dtype_of(got)), nd_dtype_name(dt));
    cr_assert_eq(nd_size(got), n, "%s: size", what);
    nd_array *d = nd_astype(got, ND_FLOAT64);
    double g[64];
    cr_assert(n <= 64);
    cr_assert_eq(nd_to_host(d, g, sizeof g), ND_OK, "%s: %s", what, nd_last_error());
    nd_free(d);
    for (int64_t i = 0; i < n; i++) {
        int ok = isnan(want[i]) ? isnan(g[i]) : memcmp(&g[i], &want[i], sizeof(double)) == 0;
        cr_expect(ok, "%s: element %lld is %a, NumPy 2.4 gives %a", what, (long long)i, g[i],
                  want[i]);
    }
}

/* The same within `ulps` float32 ulps (0: bits). */
static void expect_f32_near(nd_array *got, const float *want, int64_t n, int ulps,
                            const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), ND_FLOAT32, "%s: dtype %s", what, nd_dtype_name(nd_dtype_of(got)));
    float g[64];
    cr_assert_eq(nd_to_host(got, g, sizeof g), ND_OK, "%s: %s", what, nd_last_error());
    for (int64_t i = 0; i < n; i++) {
        int ok;
        if (isnan(want[i]) || isinf(want[i])) ok = isnan(want[i]) ? isnan(g[i]) : g[i] == want[i];
        else ok = fabsf(g[i] - want[i]) <= ulps * (nextafterf(fabsf(want[i]), INFINITY) - fabsf(want[i])) ||
                  memcmp(&g[i], &want[i], 4) == 0;
        cr_expect(ok, "%s: element %lld is %a, NumPy 2.4 gives %a", what, (long long)i, g[i],
                  want[i]);
    }
}

static void expect_bool0(nd_array *got, int want, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_expect_eq(nd_dtype_of(got), ND_BOOL, "%s: dtype", what);
    cr_expect_eq(nd_ndim(got), 0, "%s: a 0-d array, as NumPy's", what);
    uint8_t v = 2;
    cr_assert_eq(nd_to_host(got, &v, 1), ND_OK, "%s: %s", what, nd_last_error());
    cr_expect_eq(v, want, "%s is %d, NumPy 2.4 gives %d", what, v, want);
}

#define N_OF(a) ((int64_t)(sizeof(a) / sizeof *(a)))

/* ------------------------------------------------------------- shifts */

NDT_TEST(numpy_ops_more, shifts) {
    nd_scope_begin(); /* releases the inline temporaries */
    const int8_t a[8] = {1, -128, -7, 5, 127, -1, 64, -3}, b[8] = {7, 10, -1, 8, 1, 3, 1, -128};
    nd_array *x = nd_from_host(a, ND_INT8, ND_SHAPE(8)), *y = nd_from_host(b, ND_INT8, ND_SHAPE(8));
    /* counts beyond the width and negative counts: 0, or -1 for >> of a
     * negative value */
    const double lsh[8] = {-128, 0, 0, 0, -2, -8, -128, 0}, rsh[8] = {0, -1, -1, 0, 63, -1, 32, -1};
    nd_array *r;
    expect_vals(r = nd_left_shift(x, y), ND_INT8, lsh, 8, "left_shift(int8, int8)"); nd_free(r);
    expect_vals(r = nd_right_shift(x, y), ND_INT8, rsh, 8, "right_shift(int8, int8)"); nd_free(r);
    const uint8_t ua[4] = {1, 255, 128, 3}, ub[4] = {7, 8, 200, 1};
    nd_array *u = nd_from_host(ua, ND_UINT8, ND_SHAPE(4)), *v = nd_from_host(ub, ND_UINT8, ND_SHAPE(4));
    const double ulsh[4] = {128, 0, 0, 6}, ursh[4] = {0, 0, 0, 1};
    expect_vals(r = nd_left_shift(u, v), ND_UINT8, ulsh, 4, "left_shift(uint8, uint8)"); nd_free(r);
    expect_vals(r = nd_right_shift(u, v), ND_UINT8, ursh, 4, "right_shift(uint8, uint8)"); nd_free(r);
    /* np.left_shift(np.int32(1), 40) is 0; a weak count */
    const int32_t i32[2] = {1, -1};
    nd_array *w = nd_from_host(i32, ND_INT32, ND_SHAPE(2));
    const double zero2[2] = {0, 0};
    expect_vals(r = nd_left_shift(w, nd_scalar_int(40)), ND_INT32, zero2, 2, "left_shift(int32, 40)");
    nd_free(r);
    const int64_t i64[2] = {INT64_MIN, 1ll << 62};
    nd_array *l = nd_from_host(i64, ND_INT64, ND_SHAPE(2));
    const double r63[2] = {-1, 0}, r64[2] = {-1, 0};
    expect_vals(r = nd_right_shift(l, nd_scalar_int(63)), ND_INT64, r63, 2, "right_shift(int64, 63)"); nd_free(r);
    expect_vals(r = nd_right_shift(l, nd_scalar_int(64)), ND_INT64, r64, 2, "right_shift(int64, 64)"); nd_free(r);
    /* bool << bool is int8 */
    const uint8_t ba[3] = {1, 0, 1}, bb[3] = {1, 1, 0};
    nd_array *p = nd_from_host(ba, ND_BOOL, ND_SHAPE(3)), *q = nd_from_host(bb, ND_BOOL, ND_SHAPE(3));
    const double bl[3] = {2, 0, 1};
    expect_vals(r = nd_left_shift(p, q), ND_INT8, bl, 3, "left_shift(bool, bool)"); nd_free(r);
    /* errors: floats, int64 with uint64 (float64 in NumPy), an out-of-range
     * Python int, NULL */
    nd_array *f = nd_astype(x, ND_FLOAT32), *uu = nd_astype(u, ND_UINT64);
    cr_expect_null(nd_left_shift(f, y));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_left_shift");
    cr_expect_null(nd_right_shift(l, uu));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_right_shift");
    cr_expect_null(nd_left_shift(x, nd_scalar_int(300)));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_left_shift");
    cr_expect_null(nd_right_shift(NULL, y));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_right_shift");
    nd_free(x); nd_free(y); nd_free(u); nd_free(v); nd_free(w); nd_free(l); nd_free(p);
    nd_free(q); nd_free(f); nd_free(uu);
    nd_scope_end();
}

/* ------------------------------------------------------------ gcd, lcm */

NDT_TEST(numpy_ops_more, gcd_lcm) {
    const int8_t a[8] = {-128, -128, 127, 0, -4, 12, -128, 100}, b[8] = {0, -128, 126, 0, 6, -18, 3, -3};
    nd_array *x = nd_from_host(a, ND_INT8, ND_SHAPE(8)), *y = nd_from_host(b, ND_INT8, ND_SHAPE(8));
    /* |MIN| does not fit: gcd(MIN, 0) is MIN; lcm wraps */
    const double g[8] = {-128, -128, 1, 0, 2, 6, 1, 1}, l[8] = {0, -128, -126, 0, 12, 36, -128, 44};
    nd_array *r;
    expect_vals(r = nd_gcd(x, y), ND_INT8, g, 8, "gcd(int8, int8)"); nd_free(r);
    expect_vals(r = nd_lcm(x, y), ND_INT8, l, 8, "lcm(int8, int8)"); nd_free(r);
    const int64_t c[3] = {INT64_MIN, INT64_MIN, 1ll << 62}, d[3] = {0, 6, 3ll << 40};
    nd_array *p = nd_from_host(c, ND_INT64, ND_SHAPE(3)), *q = nd_from_host(d, ND_INT64, ND_SHAPE(3));
    const double g64[3] = {-0x1p63, 2, 0x1p40};
    expect_vals(r = nd_gcd(p, q), ND_INT64, g64, 3, "gcd(int64, int64)"); nd_free(r);
    /* with a uint8 operand, int8 promotes to int16 */
    const uint8_t e[1] = {18};
    nd_array *u = nd_from_host(e, ND_UINT8, ND_SHAPE(1));
    nd_array *s = nd_view(x, "5:6");
    const double g16[1] = {6};
    expect_vals(r = nd_gcd(u, s), ND_INT16, g16, 1, "gcd(uint8, int8)"); nd_free(r);
    nd_array *bo = nd_astype(x, ND_BOOL), *fl = nd_astype(x, ND_FLOAT64);
    cr_expect_null(nd_gcd(bo, bo));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_gcd");
    cr_expect_null(nd_lcm(fl, x));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_lcm");
    cr_expect_null(nd_lcm(x, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_lcm");
    nd_free(x); nd_free(y); nd_free(p); nd_free(q); nd_free(u); nd_free(s); nd_free(bo); nd_free(fl);
}

/* ----------------------------------------------------------- nextafter */

NDT_TEST(numpy_ops_more, nextafter) {
    nd_scope_begin(); /* releases the inline temporaries */
    /* float16 steps in float16 (a float32 step would round back) */
    const float hx[10] = {1, 0, 65504, INFINITY, 1, 0, -0.0f, NAN, -65504, 0x1p-24f};
    const float hy[10] = {2, -1, INFINITY, 0, 0, -0.0f, 0, 1, -INFINITY, 0};
    nd_array *fx = nd_from_host(hx, ND_FLOAT32, ND_SHAPE(10)), *fy = nd_from_host(hy, ND_FLOAT32, ND_SHAPE(10));
    nd_array *x = nd_astype(fx, ND_FLOAT16), *y = nd_astype(fy, ND_FLOAT16), *r;
    /* equal operands give x in NumPy's half loop: nextafter(0, -0) is 0 */
    const double h[10] = {0x1.004p+0, -0x1p-24, INFINITY, 0x1.ffcp+15, 0x1.ffcp-1, 0.0, -0.0, NAN,
                          -INFINITY, 0.0};
    expect_vals(r = nd_nextafter(x, y), ND_FLOAT16, h, 10, "nextafter(float16, float16)"); nd_free(r);
    const float sx[9] = {1, 0, FLT_MAX, INFINITY, 1, 0, -0.0f, 0x1p-149f, FLT_MIN};
    const float sy[9] = {2, -1, INFINITY, 0, 0, -0.0f, 0, 0, 0};
    nd_array *a = nd_from_host(sx, ND_FLOAT32, ND_SHAPE(9)), *b = nd_from_host(sy, ND_FLOAT32, ND_SHAPE(9));
    /* float32 (C's nextafterf): equal operands give y */
    const double s[9] = {0x1.000002p+0, -0x1p-149, INFINITY, 0x1.fffffep+127, 0x1.fffffep-1, -0.0, 0.0,
                         0.0, 0x1.fffffcp-127};
    expect_vals(r = nd_nextafter(a, b), ND_FLOAT32, s, 9, "nextafter(float32, float32)"); nd_free(r);
    /* integers: NumPy's float dtype (int8 -> float16), a weak int */
    const int8_t iv[2] = {1, -3};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(2));
    const double iw[2] = {0x1.004p+0, -0x1.7fcp+1};
    expect_vals(r = nd_nextafter(i, nd_scalar_int(2)), ND_FLOAT16, iw, 2, "nextafter(int8, 2)"); nd_free(r);
    nd_array *bf = nd_astype(fx, ND_BFLOAT16);
    const double bw[1] = {0x1.02p+0};
    nd_array *bv = nd_view(bf, "0:1");
    expect_vals(r = nd_nextafter(bv, nd_scalar(2.0)), ND_BFLOAT16, bw, 1, "nextafter(bfloat16 1, 2)");
    nd_free(r);
    cr_expect_null(nd_nextafter(NULL, a));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nextafter");
    nd_free(fx); nd_free(fy); nd_free(x); nd_free(y); nd_free(a); nd_free(b); nd_free(i);
    nd_free(bf); nd_free(bv);
    nd_scope_end();
}

/* --------------------------------------------------------------- ldexp */

NDT_TEST(numpy_ops_more, ldexp) {
    nd_scope_begin(); /* releases the inline temporaries */
    const float xv[9] = {1.5f, 3.0f, NAN, -INFINITY, 0.0f, -0.0f, 1.0f, 3.0f, 1.5f};
    const int64_t ev[9] = {2, -150, 5, -(1ll << 62), 1ll << 62, 3, 127, 126, -149};
    nd_array *x = nd_from_host(xv, ND_FLOAT32, ND_SHAPE(9)), *e = nd_from_host(ev, ND_INT64, ND_SHAPE(9)), *r;
    /* subnormal results round once; exponents far beyond the range */
    const double w[9] = {6.0, 0x1p-148, NAN, -INFINITY, 0.0, -0.0, 0x1p127, 0x1.8p127, 0x1p-148};
    expect_vals(r = nd_ldexp(x, e), ND_FLOAT32, w, 9, "ldexp(float32, int64)"); nd_free(r);
    /* float16: NumPy computes in float32 and rounds once (1.5 * 2^-25
     * rounds up to 2^-24, 2^-25 ties to 0) */
    const float hv[6] = {1, 1, 1.5f, 1.5f, 1, 65504};
    const int32_t he[6] = {15, 16, -25, -24, -25, -40};
    nd_array *hf = nd_from_host(hv, ND_FLOAT32, ND_SHAPE(6));
    nd_array *h = nd_astype(hf, ND_FLOAT16), *he_ = nd_from_host(he, ND_INT32, ND_SHAPE(6));
    const double hw[6] = {0x1p15, INFINITY, 0x1p-24, 0x1p-23, 0.0, 0x1p-24};
    expect_vals(r = nd_ldexp(h, he_), ND_FLOAT16, hw, 6, "ldexp(float16, int32)"); nd_free(r);
    /* type rules: int8 -> float16, int32 -> float64, a Python float a ->
     * float64, a Python int a -> float16 (NumPy 2.4) */
    const int8_t iv[1] = {3};
    nd_array *i8 = nd_from_host(iv, ND_INT8, ND_SHAPE(1)), *i32 = nd_astype(i8, ND_INT32);
    const double twelve[1] = {12}, six[1] = {6};
    expect_vals(r = nd_ldexp(i8, nd_scalar_int(2)), ND_FLOAT16, twelve, 1, "ldexp(int8, 2)"); nd_free(r);
    expect_vals(r = nd_ldexp(i32, i8), ND_FLOAT64, (const double[]){24}, 1, "ldexp(int32, int8)"); nd_free(r);
    expect_vals(r = nd_ldexp(nd_scalar(1.5), nd_astype(nd_scalar_int(2), ND_INT8)), ND_FLOAT64,
                six, 1, "ldexp(1.5, int8)");
    nd_free(r);
    expect_vals(r = nd_ldexp(nd_scalar_int(3), i8), ND_FLOAT16, (const double[]){24}, 1, "ldexp(3, int8)");
    nd_free(r);
    /* errors: a float or uint64 exponent, a Python int beyond int32, NULL */
    cr_expect_null(nd_ldexp(x, x));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ldexp");
    cr_expect_null(nd_ldexp(x, nd_scalar(2.0)));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ldexp");
    nd_array *u64 = nd_astype(e, ND_UINT64);
    cr_expect_null(nd_ldexp(x, u64));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ldexp");
    cr_expect_null(nd_ldexp(x, nd_scalar_int(1ll << 40)));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_ldexp");
    cr_expect_null(nd_ldexp(NULL, e));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_ldexp");
    nd_free(x); nd_free(e); nd_free(hf); nd_free(h); nd_free(he_); nd_free(i8); nd_free(i32);
    nd_free(u64);
    nd_scope_end();
}

/* --------------------------------------------- logaddexp, float_power */

NDT_TEST(numpy_ops_more, logaddexp_float_power) {
    nd_scope_begin(); /* releases the inline temporaries */
    const float xv[10] = {0, 1, INFINITY, -INFINITY, INFINITY, NAN, -0.5f, 100, -0.69314718f, 1e-3f};
    const float yv[10] = {0, 2, INFINITY, -INFINITY, -INFINITY, 1, -0.5f, -100, -3, 1e-3f};
    nd_array *x = nd_from_host(xv, ND_FLOAT32, ND_SHAPE(10)), *y = nd_from_host(yv, ND_FLOAT32, ND_SHAPE(10)), *r;
    const float w[10] = {0x1.62e43p-1f, 0x1.2818f6p+1f, INFINITY, -INFINITY, INFINITY, NAN,
                         0x1.8b90cp-3f, 0x1.9p+6f, -0x1.324a72p-1f, 0x1.636742p-1f};
    const float w2[10] = {0x1p+0f, 0x1.4ae00cp+1f, INFINITY, -INFINITY, INFINITY, NAN, 0x1p-1f,
                          0x1.9p+6f, -0x1.b5d9f6p-2f, 0x1.00418ap+0f};
    /* within the op table's 4 ulp (of max(|result|, 1): these are of the
     * result) */
    expect_f32_near(r = nd_logaddexp(x, y), w, 10, 4, "logaddexp(float32)"); nd_free(r);
    expect_f32_near(r = nd_logaddexp2(x, y), w2, 10, 4, "logaddexp2(float32)"); nd_free(r);
    const int8_t iv[2] = {1, -3};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(2));
    r = nd_logaddexp(i, nd_scalar_int(1));
    cr_assert(r, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(r), ND_FLOAT16, "logaddexp(int8, 1) is float16 as NumPy");
    nd_free(r);
    /* float_power: float64 whatever the inputs; a negative base to a
     * fractional power is NaN */
    const double fw[3] = {0x1.6a09e667f3bcdp+0, NAN, 8.0};
    const float fb[3] = {2.0f, -8.0f, 2.0f}, fe[3] = {0.5f, 1.0f / 3.0f, 3.0f};
    nd_array *b = nd_from_host(fb, ND_FLOAT32, ND_SHAPE(3)), *e = nd_from_host(fe, ND_FLOAT32, ND_SHAPE(3));
    r = nd_float_power(b, e);
    cr_assert(r, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(r), ND_FLOAT64);
    double g[3];
    cr_assert_eq(nd_to_host(r, g, sizeof g), ND_OK);
    cr_expect(fabs(g[0] - fw[0]) <= 2 * DBL_EPSILON && isnan(g[1]) && fabs(g[2] - 8.0) <= 16 * DBL_EPSILON,
              "float_power: %a %a %a, NumPy 2.4 gives %a nan 8", g[0], g[1], g[2], fw[0]);
    nd_free(r);
    expect_vals(r = nd_float_power(i, nd_scalar_int(2)), ND_FLOAT64, (const double[]){1, 9}, 2,
                "float_power(int8, 2)");
    nd_free(r);
    cr_expect_null(nd_float_power(x, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_float_power");
    nd_free(x); nd_free(y); nd_free(i); nd_free(b); nd_free(e);
    nd_scope_end();
}

/* --------------------------------------------------------------- round */

NDT_TEST(numpy_ops_more, round) {
    const float v[10] = {2.5f, 0.125f, 1.005f, -0.5f, 12345.678f, -0.0f, INFINITY, NAN, 1.5e10f, 0.285f};
    nd_array *x = nd_from_host(v, ND_FLOAT32, ND_SHAPE(10)), *r;
    static const struct { int d; double w[10]; } f32[] = {
        {2, {0x1.4p+1, 0x1.eb851ep-4, 1.0, -0.5, 0x1.81cd7p+13, -0.0, INFINITY, NAN, 0x1.bf08ecp+33, 0x1.1eb852p-2}},
        {0, {2.0, 0.0, 1.0, -0.0, 0x1.81dp+13, -0.0, INFINITY, NAN, 0x1.bf08ecp+33, 0.0}},
        {-1, {0.0, 0.0, 0.0, -0.0, 0x1.81fp+13, -0.0, INFINITY, NAN, 0x1.bf08ecp+33, 0.0}},
        {-2, {0.0, 0.0, 0.0, -0.0, 0x1.806p+13, -0.0, INFINITY, NAN, 0x1.bf08ecp+33, 0.0}},
        {3, {0x1.4p+1, 0x1p-3, 0x1.0147aep+0, -0.5, 0x1.81cd6cp+13, -0.0, INFINITY, NAN, 0x1.bf08ecp+33, 0x1.23d70ap-2}},
        /* 10^30 is inf in float32: x * inf / inf */
        {30, {0x1.4p+1, 0x1p-3, 0x1.0147aep+0, -0.5, 0x1.81cd6cp+13, -0.0, INFINITY, NAN, INFINITY, 0x1.23d70ap-2}},
        {-40, {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
    };
    for (size_t k = 0; k < sizeof f32 / sizeof *f32; k++) {
        char what[64];
        snprintf(what, sizeof what, "round(float32, %d)", f32[k].d);
        expect_vals(r = nd_round(x, f32[k].d), ND_FLOAT32, f32[k].w, 10, what);
        nd_free(r);
    }
    nd_array *d = nd_astype(x, ND_FLOAT64);
    const double d2[10] = {0x1.4p+1, 0x1.eb851eb851eb8p-4, 1.0, -0.5, 0x1.81cd70a3d70a4p+13, -0.0,
                           INFINITY, NAN, 0x1.bf08ecp+33, 0x1.1eb851eb851ecp-2};
    const double dm1[10] = {0.0, 0.0, 0.0, -0.0, 0x1.81fp+13, -0.0, INFINITY, NAN, 0x1.bf08ebffp+33, 0.0};
    const double nan10[10] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    expect_vals(r = nd_round(d, 2), ND_FLOAT64, d2, 10, "round(float64, 2)"); nd_free(r);
    expect_vals(r = nd_round(d, -1), ND_FLOAT64, dm1, 10, "round(float64, -1)"); nd_free(r);
    expect_vals(r = nd_round(d, 400), ND_FLOAT64, nan10, 10, "round(float64, 400)"); nd_free(r);
    expect_vals(r = nd_round(d, INT32_MIN), ND_FLOAT64, nan10, 10, "round(float64, INT_MIN)"); nd_free(r);
    /* integers keep their dtype: through float64 for d < 0, wrapping back */
    const int8_t iv[7] = {15, 25, -15, 127, -128, 35, -5};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(7));
    const double iw[7] = {20, 20, -20, -126, 126, 40, 0}, same[7] = {15, 25, -15, 127, -128, 35, -5};
    expect_vals(r = nd_round(i, -1), ND_INT8, iw, 7, "round(int8, -1)"); nd_free(r);
    expect_vals(r = nd_round(i, 3), ND_INT8, same, 7, "round(int8, 3)"); nd_free(r);
    const int64_t big[1] = {(1ll << 62) + 1};
    nd_array *l = nd_from_host(big, ND_INT64, ND_SHAPE(1));
    expect_vals(r = nd_round(l, -1), ND_INT64, (const double[]){0x1p62}, 1, "round(int64 2^62 + 1, -1)");
    nd_free(r);
    /* float16: the multiply rounds in float16 (65504 * 1000 is inf) */
    const float hv[3] = {1.2345f, 2.5f, 65504};
    nd_array *hf = nd_from_host(hv, ND_FLOAT32, ND_SHAPE(3)), *h = nd_astype(hf, ND_FLOAT16);
    expect_vals(r = nd_round(h, 3), ND_FLOAT16, (const double[]){0x1.3cp+0, 2.5, INFINITY}, 3, "round(float16, 3)");
    nd_free(r);
    expect_vals(r = nd_round(h, -2), ND_FLOAT16, (const double[]){0.0, 0.0, 65504}, 3, "round(float16, -2)");
    nd_free(r);
    /* bool: decimals 0 is rint (float16), other decimals NumPy refuses */
    nd_array *b = nd_astype(i, ND_BOOL);
    expect_vals(r = nd_round(b, 0), ND_FLOAT16, (const double[]){1, 1, 1, 1, 1, 1, 1}, 7, "round(bool, 0)");
    nd_free(r);
    cr_expect_null(nd_round(b, 1));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_round");
    cr_expect_null(nd_round(NULL, 0));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_round");
    nd_free(x); nd_free(d); nd_free(i); nd_free(l); nd_free(hf); nd_free(h); nd_free(b);
}

/* ---------------------------------------------------------- nan_to_num */

NDT_TEST(numpy_ops_more, nan_to_num) {
    const float v[5] = {NAN, INFINITY, -INFINITY, 1.5f, -0.0f};
    nd_array *x = nd_from_host(v, ND_FLOAT32, ND_SHAPE(5)), *r;
    const double dflt[5] = {0.0, FLT_MAX, -FLT_MAX, 1.5, -0.0};
    expect_vals(r = nd_nan_to_num(x), ND_FLOAT32, dflt, 5, "nan_to_num(float32)"); nd_free(r);
    /* replacements convert to the dtype (1e300 is inf in float32); NAN
     * asks for the default */
    const double big[5] = {INFINITY, INFINITY, -INFINITY, 1.5, -0.0};
    expect_vals(r = nd_nan_to_num_ex(x, 1e300, 1e300, -1e300), ND_FLOAT32, big, 5, "nan_to_num(float32, 1e300)");
    nd_free(r);
    const double mixed[5] = {-1.0, FLT_MAX, 7.0, 1.5, -0.0};
    expect_vals(r = nd_nan_to_num_ex(x, -1.0, NAN, 7.0), ND_FLOAT32, mixed, 5, "nan_to_num(float32, -1, None, 7)");
    nd_free(r);
    nd_array *h = nd_astype(x, ND_FLOAT16), *d = nd_astype(x, ND_FLOAT64);
    const double hw[5] = {0.0, 65504, -65504, 1.5, -0.0}, dw[5] = {0.0, DBL_MAX, -DBL_MAX, 1.5, -0.0};
    expect_vals(r = nd_nan_to_num(h), ND_FLOAT16, hw, 5, "nan_to_num(float16)"); nd_free(r);
    expect_vals(r = nd_nan_to_num(d), ND_FLOAT64, dw, 5, "nan_to_num(float64)"); nd_free(r);
    const int8_t iv[2] = {1, -128};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(2));
    expect_vals(r = nd_nan_to_num_ex(i, 5, 6, 7), ND_INT8, (const double[]){1, -128}, 2, "nan_to_num(int8)");
    nd_free(r);
    cr_expect_null(nd_nan_to_num(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_nan_to_num");
    nd_free(x); nd_free(h); nd_free(d); nd_free(i);
}

/* ------------------------------------------- isclose, allclose, equal */


NDT_TEST(numpy_ops_more, isclose_allclose) {
    nd_scope_begin(); /* releases the inline temporaries */
    const float av[8] = {1, 1.00001f, INFINITY, INFINITY, NAN, 0, 1e-9f, 1.0001f};
    const float bv[8] = {1, 1, INFINITY, -INFINITY, NAN, 1e-8f, 0, 1};
    nd_array *a = nd_from_host(av, ND_FLOAT32, ND_SHAPE(8)), *b = nd_from_host(bv, ND_FLOAT32, ND_SHAPE(8));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_array *r = nd_isclose(a, b, 1e-5, 1e-8, false);
    /* float32 1.00001 - 1 is 1.001358e-05 > 1e-8 + 1e-5 * 1 */
    ndt_expect_bools(r, "10100110", "isclose(float32, float32)");
    nd_get_stats(&after);
    /* one fused kernel, only the result written */
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "isclose took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    cr_expect_eq(after.values_materialised - before.values_materialised, 1);
    nd_free(r);
    ndt_expect_bools(r = nd_isclose(a, b, 1e-5, 1e-8, true), "10101110", "isclose(equal_nan)"); nd_free(r);
    /* asymmetric (rtol scales |b|), atol 0 */
    ndt_expect_bools(r = nd_isclose(b, a, 1e-5, 0.0, false), "10100000", "isclose(b, a, atol 0)"); nd_free(r);
    /* integers compare in float64; a Python int b; broadcasting */
    const int32_t iv[3] = {1, 2, 2147483647};
    nd_array *i = nd_from_host(iv, ND_INT32, ND_SHAPE(3));
    ndt_expect_bools(r = nd_isclose(i, nd_scalar_int(2), 1e-5, 1e-8, false), "010", "isclose(int32, 2)"); nd_free(r);
    ndt_expect_bools(r = nd_isclose(i, nd_scalar_int(2147483647), 0.5, 0.0, false), "001", "isclose(int32, MAX, rtol .5)");
    nd_free(r);
    nd_array *col = nd_reshape(i, ND_SHAPE(3, 1));
    ndt_expect_bools(r = nd_isclose(col, i, 1e-5, 1e-8, false), "100010001", "isclose((3,1), (3,))"); nd_free(r);
    /* allclose: 0-d bool, all of isclose, true for empty */
    nd_get_stats(&before);
    nd_array *s = nd_allclose(a, b, 1e-5, 1e-8, false);
    expect_bool0(s, 0, "allclose(a, b)");
    nd_get_stats(&after);
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "allclose took %llu kernels (want one fused reduction)",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    nd_free(s);
    nd_array *a3 = nd_view(a, "5:7"), *b3 = nd_view(b, "5:7");
    expect_bool0(s = nd_allclose(a3, b3, 1e-5, 1e-8, false), 1, "allclose(a[5:7], b[5:7])"); nd_free(s);
    nd_array *e = nd_view(a, "0:0");
    expect_bool0(s = nd_allclose(e, e, 1e-5, 1e-8, false), 1, "allclose of empty arrays"); nd_free(s);
    expect_bool0(s = nd_allclose(nd_scalar(NAN), nd_scalar(NAN), 1e-5, 1e-8, true), 1, "allclose(nan, nan, equal_nan)");
    nd_free(s);
    nd_array *two = nd_view(a, ":2");
    cr_expect_null(nd_allclose(a, two, 1e-5, 1e-8, false));
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_allclose");
    cr_expect_null(nd_isclose(NULL, b, 1e-5, 1e-8, false));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_isclose");
    nd_free(a); nd_free(b); nd_free(i); nd_free(col); nd_free(a3); nd_free(b3); nd_free(e); nd_free(two);
    nd_scope_end();
}

NDT_TEST(numpy_ops_more, array_equal) {
    nd_scope_begin(); /* releases the inline temporaries */
    const float av[3] = {1, 2, NAN};
    nd_array *a = nd_from_host(av, ND_FLOAT32, ND_SHAPE(3)), *s;
    nd_array *a2 = nd_view(a, ":2"), *row = nd_reshape(a, ND_SHAPE(1, 3));
    expect_bool0(s = nd_array_equal(a2, a2), 1, "array_equal(x, x)"); nd_free(s);
    /* NaN != NaN */
    expect_bool0(s = nd_array_equal(a, a), 0, "array_equal with NaN"); nd_free(s);
    /* different shapes, broadcastable or not: false, no error */
    expect_bool0(s = nd_array_equal(a, row), 0, "array_equal((3,), (1,3))"); nd_free(s);
    expect_bool0(s = nd_array_equal(a, a2), 0, "array_equal((3,), (2,))"); nd_free(s);
    /* values compare after promotion: int8 [1, 2] equals float32 [1, 2] */
    const int8_t iv[2] = {1, 2};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(2));
    expect_bool0(s = nd_array_equal(i, a2), 1, "array_equal(int8, float32)"); nd_free(s);
    expect_bool0(s = nd_array_equal(nd_scalar_int(3), nd_scalar(3.0)), 1, "array_equal(3, 3.0)"); nd_free(s);
    cr_expect_null(nd_array_equal(a, NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_array_equal");
    nd_free(a); nd_free(a2); nd_free(row); nd_free(i);
    nd_scope_end();
}
