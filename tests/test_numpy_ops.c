/* NumPy's ufuncs through the public API against values NumPy 2.4 printed
 * (hex floats from float.hex, integers as printed): result dtypes, edge
 * values, broadcasting with weak Python scalars and fused chains. The
 * cross-backend op test (test_ops.c) covers every dtype and edge pair of
 * each op's element functions; this suite checks what a user sees. */
#include "common.h"

/* Distance in float32 ulps (-0 and +0 are 0 apart; NaN matches NaN only). */
static int64_t f32_ulps(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? -(int64_t)(ia & 0x7fffffff) : ia;
    int64_t ob = ib < 0 ? -(int64_t)(ib & 0x7fffffff) : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* got (a float32 array of n elements) against want: bits where exact (the
 * sign of a zero included), else within ulps (infinities, zeros and NaN
 * exactly). */
/* What a recorded chain cost between two nd_get_stats: `kernels` kernels
 * run and only `values` results written to memory (fusion kept every
 * intermediate in registers). */
static void expect_fused(const nd_stats *before, const nd_stats *after, uint64_t kernels, uint64_t values) {
    cr_expect_eq(NDT_KERNELS(*after) - NDT_KERNELS(*before), kernels, "the chain took %llu kernels, want %llu",
                 (unsigned long long)(NDT_KERNELS(*after) - NDT_KERNELS(*before)), (unsigned long long)kernels);
    cr_expect_eq(after->values_materialised - before->values_materialised, values,
                 "%llu values went to memory, want only the %llu results",
                 (unsigned long long)(after->values_materialised - before->values_materialised),
                 (unsigned long long)values);
}

static void expect_f32(nd_array *got, const float *want, int64_t n, int ulps, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), ND_FLOAT32, "%s: dtype %d, NumPy gives float32", what,
                 nd_dtype_of(got));
    cr_assert_eq(nd_size(got), n, "%s: size", what);
    float g[64];
    cr_assert_eq(nd_to_host(got, g, sizeof g), ND_OK, "%s: %s", what, nd_last_error());
    for (int64_t i = 0; i < n; i++) {
        int special = isnan(want[i]) || isinf(want[i]) || want[i] == 0;
        int ok = special ? (isnan(want[i]) ? isnan(g[i]) : memcmp(&g[i], &want[i], 4) == 0)
                         : f32_ulps(g[i], want[i]) <= ulps;
        cr_expect(ok, "%s: element %lld is %a, NumPy 2.4 gives %a", what, (long long)i, g[i],
                  want[i]);
    }
}

static void expect_i8(nd_array *got, nd_dtype dt, const int8_t *want, int64_t n, const char *what) {
    cr_assert(got, "%s: %s", what, nd_last_error());
    cr_assert_eq(nd_dtype_of(got), dt, "%s: dtype %d, want %d", what, nd_dtype_of(got), dt);
    int8_t g[64];
    cr_assert_eq(nd_to_host(got, g, sizeof g), ND_OK, "%s: %s", what, nd_last_error());
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(g[i], want[i], "%s: element %lld is %d, NumPy 2.4 gives %d", what,
                     (long long)i, g[i], want[i]);
}

/* ------------------------------------------------ unary float math */

/* x and np.<op>(x) for float32 x: NaN, +-inf, +-0, +-1 (domain edges and
 * poles), a float32 subnormal (1e-40), values out of each domain. */
static const float g1_x[14] = {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p-1f, -0x1.0000000000000p-1f, 0x1.4000000000000p+1f, 0x1.16c2000000000p-133f, -0x1.8000000000000p+1f, 0x1.9000000000000p+6f, 0x1.fae1480000000p-1f};
static const float g1_want[19][14] = {
    /* arcsin */ {NAN, NAN, NAN, 0x0.0p+0f, -0x0.0p+0f, 0x1.921fb60000000p+0f, -0x1.921fb60000000p+0f, 0x1.0c15240000000p-1f, -0x1.0c15240000000p-1f, NAN, 0x1.16c2000000000p-133f, NAN, NAN, 0x1.6de3c80000000p+0f},
    /* arccos */ {NAN, NAN, NAN, 0x1.921fb60000000p+0f, 0x1.921fb60000000p+0f, 0x0.0p+0f, 0x1.921fb60000000p+1f, 0x1.0c15240000000p+0f, 0x1.0c15240000000p+1f, NAN, 0x1.921fb60000000p+0f, NAN, NAN, 0x1.21df6a0000000p-3f},
    /* arctan */ {NAN, 0x1.921fb60000000p+0f, -0x1.921fb60000000p+0f, 0x0.0p+0f, -0x0.0p+0f, 0x1.921fb60000000p-1f, -0x1.921fb60000000p-1f, 0x1.dac6700000000p-2f, -0x1.dac6700000000p-2f, 0x1.30b6d80000000p+0f, 0x1.16c2000000000p-133f, -0x1.3fc1760000000p+0f, 0x1.8f90600000000p+0f, 0x1.8f8d100000000p-1f},
    /* sinh */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.2cd9fc0000000p+0f, -0x1.2cd9fc0000000p+0f, 0x1.0acd000000000p-1f, -0x1.0acd000000000p-1f, 0x1.83368c0000000p+2f, 0x1.16c2000000000p-133f, -0x1.40926e0000000p+3f, INFINITY, 0x1.28ea8c0000000p+0f},
    /* cosh */ {NAN, INFINITY, INFINITY, 0x1.0000000000000p+0f, 0x1.0000000000000p+0f, 0x1.8b07560000000p+0f, 0x1.8b07560000000p+0f, 0x1.20ac1a0000000p+0f, 0x1.20ac1a0000000p+0f, 0x1.8877700000000p+2f, 0x1.0000000000000p+0f, 0x1.422a480000000p+3f, INFINITY, 0x1.880a340000000p+0f},
    /* arcsinh */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.c343660000000p-1f, -0x1.c343660000000p-1f, 0x1.ecc2ca0000000p-2f, -0x1.ecc2ca0000000p-2f, 0x1.a5b0f00000000p+0f, 0x1.16c2000000000p-133f, -0x1.d185b60000000p+0f, 0x1.53180a0000000p+2f, 0x1.bfa2420000000p-1f},
    /* arccosh */ {NAN, INFINITY, NAN, NAN, NAN, 0x0.0p+0f, NAN, NAN, NAN, 0x1.9119c20000000p+0f, NAN, NAN, 0x1.5317380000000p+2f, NAN},
    /* arctanh */ {NAN, NAN, NAN, 0x0.0p+0f, -0x0.0p+0f, INFINITY, -INFINITY, 0x1.193ea80000000p-1f, -0x1.193ea80000000p-1f, NAN, 0x1.16c2000000000p-133f, NAN, NAN, 0x1.52c5860000000p+1f},
    /* exp2 */ {NAN, INFINITY, 0x0.0p+0f, 0x1.0000000000000p+0f, 0x1.0000000000000p+0f, 0x1.0000000000000p+1f, 0x1.0000000000000p-1f, 0x1.6a09e60000000p+0f, 0x1.6a09e60000000p-1f, 0x1.6a09e60000000p+2f, 0x1.0000000000000p+0f, 0x1.0000000000000p-3f, 0x1.0000000000000p+100f, 0x1.fc769e0000000p+0f},
    /* expm1 */ {NAN, INFINITY, -0x1.0000000000000p+0f, 0x0.0p+0f, -0x0.0p+0f, 0x1.b7e1520000000p+0f, -0x1.43a54e0000000p-1f, 0x1.4c25320000000p-1f, -0x1.92e9a00000000p-2f, 0x1.65d6fe0000000p+3f, 0x1.16c2000000000p-133f, -0x1.e6824e0000000p-1f, INFINITY, 0x1.b0f4be0000000p+0f},
    /* log2 */ {NAN, INFINITY, NAN, -INFINITY, -INFINITY, 0x0.0p+0f, NAN, -0x1.0000000000000p+0f, NAN, 0x1.5269e00000000p+0f, -0x1.09c1180000000p+7f, NAN, 0x1.a934f00000000p+2f, -0x1.db1f160000000p-7f},
    /* log10 */ {NAN, INFINITY, NAN, -INFINITY, -INFINITY, 0x0.0p+0f, NAN, -0x1.3441360000000p-2f, NAN, 0x1.977d980000000p-2f, -0x1.4000020000000p+5f, NAN, 0x1.0000020000000p+1f, -0x1.1e0d380000000p-8f},
    /* log1p */ {NAN, INFINITY, NAN, 0x0.0p+0f, -0x0.0p+0f, 0x1.62e4300000000p-1f, -INFINITY, 0x1.9f32400000000p-2f, -0x1.62e4300000000p-1f, 0x1.40b5140000000p+0f, 0x1.16c2000000000p-133f, NAN, 0x1.275e220000000p+2f, 0x1.6053300000000p-1f},
    /* cbrt */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.965fea0000000p-1f, -0x1.965fea0000000p-1f, 0x1.5b72080000000p+0f, 0x1.a2138e0000000p-45f, -0x1.7137460000000p+0f, 0x1.290fca0000000p+2f, 0x1.fe49a00000000p-1f},
    /* rint */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+1f, 0x0.0p+0f, -0x1.8000000000000p+1f, 0x1.9000000000000p+6f, 0x1.0000000000000p+0f},
    /* reciprocal */ {NAN, 0x0.0p+0f, -0x0.0p+0f, INFINITY, -INFINITY, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p+1f, -0x1.0000000000000p+1f, 0x1.99999a0000000p-2f, INFINITY, -0x1.5555560000000p-2f, 0x1.47ae140000000p-7f, 0x1.0295fa0000000p+0f},
    /* trunc */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+1f, 0x0.0p+0f, -0x1.8000000000000p+1f, 0x1.9000000000000p+6f, 0x0.0p+0f},
    /* sign */ {NAN, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x0.0p+0f, 0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p+0f, 0x1.0000000000000p+0f},
    /* positive */ {NAN, INFINITY, -INFINITY, 0x0.0p+0f, -0x0.0p+0f, 0x1.0000000000000p+0f, -0x1.0000000000000p+0f, 0x1.0000000000000p-1f, -0x1.0000000000000p-1f, 0x1.4000000000000p+1f, 0x1.16c2000000000p-133f, -0x1.8000000000000p+1f, 0x1.9000000000000p+6f, 0x1.fae1480000000p-1f},
};


NDT_TEST(numpy_ops, unary_math_float32) {
    static nd_array *(*const fns[19])(nd_array *) = {
        nd_arcsin, nd_arccos, nd_arctan, nd_sinh,  nd_cosh,       nd_arcsinh, nd_arccosh,
        nd_arctanh, nd_exp2, nd_expm1, nd_log2,  nd_log10,      nd_log1p,   nd_cbrt,
        nd_rint,   nd_reciprocal, nd_trunc, nd_sign, nd_positive};
    static const char *const names[19] = {
        "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "exp2",
        "expm1", "log2", "log10", "log1p", "cbrt", "rint", "reciprocal", "trunc", "sign",
        "positive"};
    const int64_t n = sizeof g1_x / sizeof *g1_x;
    nd_array *x = nd_from_host(g1_x, ND_FLOAT32, ND_SHAPE(n));
    cr_assert(x, "%s", nd_last_error());
    for (int o = 0; o < 19; o++) {
        nd_array *y = fns[o](x);
        char what[64];
        snprintf(what, sizeof what, "%s(float32)", names[o]);
        /* transcendentals within the op table's 4 ulp, the rest exact */
        expect_f32(y, g1_want[o], n, o < 14 ? 4 : 0, what);
        nd_free(y);
    }
    nd_free(x);
}

NDT_TEST(numpy_ops, unary_math_integers) {
    const int8_t v[7] = {-128, -2, -1, 0, 1, 2, 127};
    nd_array *x = nd_from_host(v, ND_INT8, ND_SHAPE(7));
    /* NumPy 2.4: integer reciprocal is integer 1/x (truncating, 1/0 gives
     * 0); sign, trunc and positive keep int8 */
    const int8_t recip[7] = {0, 0, -1, 0, 1, 0, 0}, sign[7] = {-1, -1, -1, 0, 1, 1, 1};
    nd_array *r;
    expect_i8(r = nd_reciprocal(x), ND_INT8, recip, 7, "reciprocal(int8)"); nd_free(r);
    expect_i8(r = nd_sign(x), ND_INT8, sign, 7, "sign(int8)"); nd_free(r);
    expect_i8(r = nd_trunc(x), ND_INT8, v, 7, "trunc(int8)"); nd_free(r);
    expect_i8(r = nd_positive(x), ND_INT8, v, 7, "positive(int8)"); nd_free(r);
    /* rint, cbrt, arctan of int8 are float16 (NumPy 2.4) */
    const double rint_w[7] = {-0x1p+7, -0x1p+1, -1, 0, 1, 0x1p+1, 0x1.fcp+6};
    const double cbrt_w[7] = {-0x1.428p+2, -0x1.428p+0, -1, 0, 1, 0x1.428p+0, 0x1.41cp+2};
    const double atan_w[7] = {-0x1.9p+0, -0x1.1b8p+0, -0x1.92p-1, 0, 0x1.92p-1, 0x1.1b8p+0, 0x1.9p+0};
    const double *ws[3] = {rint_w, cbrt_w, atan_w};
    nd_array *(*const fs[3])(nd_array *) = {nd_rint, nd_cbrt, nd_arctan};
    for (int k = 0; k < 3; k++) {
        r = fs[k](x);
        cr_assert(r, "%s", nd_last_error());
        cr_expect_eq(nd_dtype_of(r), ND_FLOAT16, "op %d of int8: float16", k);
        ref_arr *want = ref_from_doubles(ND_FLOAT16, 1, (int64_t[]){7}, ws[k]);
        ndt_check(r, want, 0, 0, NULL, "op %d of int8 against NumPy's float16 bits", k);
        ref_free(want);
        nd_free(r);
    }
    /* uint8: sign is 0 or 1, reciprocal 1 only for 1 */
    const uint8_t u[4] = {0, 1, 2, 255};
    nd_array *xu = nd_from_host(u, ND_UINT8, ND_SHAPE(4));
    const int8_t usign[4] = {0, 1, 1, 1}, urecip[4] = {0, 1, 0, 0};
    expect_i8(r = nd_sign(xu), ND_UINT8, usign, 4, "sign(uint8)"); nd_free(r);
    expect_i8(r = nd_reciprocal(xu), ND_UINT8, urecip, 4, "reciprocal(uint8)"); nd_free(r);
    /* bool: reciprocal gives int8, trunc bool; sign and positive refuse */
    const uint8_t bv[2] = {0, 1};
    nd_array *xb = nd_from_host(bv, ND_BOOL, ND_SHAPE(2));
    const int8_t brecip[2] = {0, 1};
    expect_i8(r = nd_reciprocal(xb), ND_INT8, brecip, 2, "reciprocal(bool)"); nd_free(r);
    expect_i8(r = nd_trunc(xb), ND_BOOL, (const int8_t *)bv, 2, "trunc(bool)"); nd_free(r);
    cr_expect_null(nd_sign(xb));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_sign");
    cr_expect_null(nd_positive(xb));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_positive");
    cr_expect_null(nd_cbrt(NULL));
    NDT_EXPECT_ERR(ND_ERR_ARG, "nd_cbrt");
    nd_free(x);
    nd_free(xu);
    nd_free(xb);
}

NDT_TEST(numpy_ops, unary_math_broadcast_weak_scalar_fused) {
    /* a int16 (2,1), b float32 (3,):
     *   np.cbrt(a) + np.expm1(b) * 2.0                      -> float32 (2,3)
     *   np.sign(np.trunc(np.log10(np.reciprocal(b) * 1000))) - 1 -> float32
     *   1.0 - np.reciprocal(int8 (3,1))                     -> float64
     *   np.reciprocal(int8) + 3                             -> int8 */
    const int16_t av[2] = {-1, 8};
    const float bv[3] = {0.5f, -1.0f, 2.0f};
    nd_array *a = nd_from_host(av, ND_INT16, ND_SHAPE(2, 1));
    nd_array *b = nd_from_host(bv, ND_FLOAT32, ND_SHAPE(3));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    nd_array *c = nd_keep(nd_add(nd_cbrt(a), nd_mul(nd_expm1(b), nd_scalar(2.0))));
    nd_array *d = nd_keep(nd_sub(nd_sign(nd_trunc(nd_log10(nd_mul(nd_reciprocal(b), nd_scalar_int(1000))))),
                                 nd_scalar_int(1)));
    nd_scope_end();
    cr_assert(c && d, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    /* c and d have different shapes: one fused kernel each, nothing else
     * written to memory */
    expect_fused(&before, &after, 2, 2);
    cr_expect_eq(nd_ndim(c), 2);
    cr_expect(nd_shape(c)[0] == 2 && nd_shape(c)[1] == 3);
    const float cw[6] = {0x1.3094c8p-2f, -0x1.21d2a8p+1f, 0x1.78e64cp+3f,
                         0x1.a61298p+1f, 0x1.78b564p-1f, 0x1.d8e64cp+3f};
    expect_f32(c, cw, 6, 8, "cbrt(int16 (2,1)) + expm1(float32 (3,)) * 2.0");
    const float dw[3] = {0.0f, NAN, 0.0f};
    expect_f32(d, dw, 3, 0, "sign(trunc(log10(reciprocal(b) * 1000))) - 1");
    const int8_t iv[3] = {1, -1, 2};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(3, 1));
    nd_scope_begin();
    nd_array *e = nd_keep(nd_sub(nd_scalar(1.0), nd_reciprocal(i)));
    nd_array *f = nd_keep(nd_add(nd_reciprocal(i), nd_scalar_int(3)));
    nd_scope_end();
    cr_assert(e, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(e), ND_FLOAT64, "1.0 - reciprocal(int8): float64 as NumPy 2.4");
    double ev[3];
    cr_assert_eq(nd_to_host(e, ev, sizeof ev), ND_OK);
    cr_expect(ev[0] == 0.0 && ev[1] == 2.0 && ev[2] == 1.0, "1.0 - reciprocal: %g %g %g", ev[0],
              ev[1], ev[2]);
    const int8_t fw[3] = {4, 2, 3};
    expect_i8(f, ND_INT8, fw, 3, "reciprocal(int8) + 3");
    nd_free(a); nd_free(b); nd_free(c); nd_free(d); nd_free(i); nd_free(e); nd_free(f);
}

/* ------------------------------------------- predicates and invert */


NDT_TEST(numpy_ops, predicates) {
    /* NaN, -NaN, +-inf, +-0, +-1e-40 (float32 subnormals), 3.4e38 (inf in
     * float16), -1 */
    const float v[10] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 3.4e38f, -1.0f};
    nd_array *x = nd_from_host(v, ND_FLOAT32, ND_SHAPE(10));
    nd_array *h = nd_astype(x, ND_FLOAT16);
    nd_array *(*const fns[6])(nd_array *) = {nd_isnan, nd_isinf, nd_isfinite,
                                              nd_signbit, nd_isposinf, nd_isneginf};
    const char *names[6] = {"isnan", "isinf", "isfinite", "signbit", "isposinf", "isneginf"};
    /* as NumPy 2.4 printed them for the float32 values */
    const char *want[6] = {"1100000000", "0011000000", "0000111111",
                           "0101010101", "0010000000", "0001000000"};
    for (int o = 0; o < 6; o++) {
        nd_array *r = fns[o](x);
        char what[64];
        snprintf(what, sizeof what, "%s(float32)", names[o]);
        ndt_expect_bools(r, want[o], what);
        nd_free(r);
    }
    nd_array *r;
    ndt_expect_bools(r = nd_signbit(h), "0101010101", "signbit(float16)"); nd_free(r);
    ndt_expect_bools(r = nd_isinf(h), "0011000010", "isinf(float16): 3.4e38 overflows"); nd_free(r);
    /* integers and bool: finite, never NaN; signbit is x < 0 */
    const int8_t iv[4] = {-128, -1, 0, 127};
    nd_array *i = nd_from_host(iv, ND_INT8, ND_SHAPE(4));
    ndt_expect_bools(r = nd_signbit(i), "1100", "signbit(int8)"); nd_free(r);
    ndt_expect_bools(r = nd_isfinite(i), "1111", "isfinite(int8)"); nd_free(r);
    ndt_expect_bools(r = nd_isnan(i), "0000", "isnan(int8)"); nd_free(r);
    const uint8_t bv[2] = {1, 0};
    nd_array *b = nd_from_host(bv, ND_BOOL, ND_SHAPE(2));
    ndt_expect_bools(r = nd_isinf(b), "00", "isinf(bool)"); nd_free(r);
    /* invert: int8 [127 0 -1 -128], uint64 max, bool is logical not */
    const int8_t inv[4] = {127, 0, -1, -128};
    expect_i8(r = nd_invert(i), ND_INT8, inv, 4, "invert(int8)"); nd_free(r);
    ndt_expect_bools(r = nd_bitwise_not(b), "01", "bitwise_not(bool)"); nd_free(r);
    const uint64_t uv[3] = {0, 1, UINT64_MAX};
    nd_array *u = nd_from_host(uv, ND_UINT64, ND_SHAPE(3));
    uint64_t ug[3];
    r = nd_invert(u);
    cr_assert(r && nd_dtype_of(r) == ND_UINT64, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(r, ug, sizeof ug), ND_OK);
    cr_expect(ug[0] == UINT64_MAX && ug[1] == UINT64_MAX - 1 && ug[2] == 0, "invert(uint64)");
    nd_free(r);
    cr_expect_null(nd_invert(x));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_invert");
    nd_free(x); nd_free(h); nd_free(i); nd_free(b); nd_free(u);
}

NDT_TEST(numpy_ops, predicates_broadcast_weak_scalar_fused) {
    /* a float32 (2,1), b float32 (3,), q = a / b:
     *   np.where(np.isfinite(q), q, 0.5), np.signbit(q), np.isneginf(q)
     * c int16 (2,1), d int16 (3,): np.invert(c + d * 2) -> int16;
     * np.invert(uint8 + 200) stays uint8 (a weak Python int) */
    const float av[2] = {1.0f, -2.0f}, bv[3] = {0.0f, -0.0f, 3.0f};
    nd_array *a = nd_from_host(av, ND_FLOAT32, ND_SHAPE(2, 1));
    nd_array *b = nd_from_host(bv, ND_FLOAT32, ND_SHAPE(3));
    const int16_t cv[2] = {5, -6}, dv[3] = {1, 2, 3};
    nd_array *c = nd_from_host(cv, ND_INT16, ND_SHAPE(2, 1));
    nd_array *d = nd_from_host(dv, ND_INT16, ND_SHAPE(3));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    nd_array *q = nd_div(a, b);
    nd_array *w = nd_keep(nd_where(nd_isfinite(q), q, nd_scalar(0.5)));
    nd_array *s = nd_keep(nd_signbit(q));
    nd_array *ni = nd_keep(nd_isneginf(q));
    nd_array *iv = nd_keep(nd_invert(nd_add(c, nd_mul(d, nd_scalar_int(2)))));
    nd_scope_end();
    cr_assert(w && s && ni && iv, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    /* everything of shape (2,3) in one fused kernel, q never in memory */
    expect_fused(&before, &after, 1, 4);
    const float ww[6] = {0.5f, 0.5f, 0x1.555556p-2f, 0.5f, 0.5f, -0x1.555556p-1f};
    expect_f32(w, ww, 6, 0, "where(isfinite(a / b), a / b, 0.5)");
    ndt_expect_bools(s, "010101", "signbit(a / b)");
    ndt_expect_bools(ni, "010100", "isneginf(a / b)");
    cr_expect_eq(nd_dtype_of(iv), ND_INT16);
    int16_t ig[6];
    cr_assert_eq(nd_to_host(iv, ig, sizeof ig), ND_OK);
    const int16_t iw[6] = {-8, -10, -12, 3, 1, -1};
    for (int k = 0; k < 6; k++) cr_expect_eq(ig[k], iw[k], "invert(c + d * 2)[%d] = %d", k, ig[k]);
    const uint8_t u8[2] = {1, 2};
    nd_array *u = nd_from_host(u8, ND_UINT8, ND_SHAPE(2));
    nd_scope_begin();
    nd_array *ui = nd_keep(nd_invert(nd_add(u, nd_scalar_int(200))));
    nd_scope_end();
    const int8_t uw[2] = {54, 53};
    expect_i8(ui, ND_UINT8, uw, 2, "invert(uint8 + 200)");
    nd_free(a); nd_free(b); nd_free(c); nd_free(d); nd_free(w); nd_free(s); nd_free(ni);
    nd_free(iv); nd_free(u); nd_free(ui);
}

/* ------------------------------------------------------ binary ops */

/* float64 pairs: signed zeros, zero divisors, infinities, NaN, a
 * subnormal divisor, and np.<op>(a, b) as NumPy 2.4 printed it */
static const double g3_a[20] = {0x1.c000000000000p+2, -0x1.c000000000000p+2, 0x1.c000000000000p+2, -0x1.c000000000000p+2, 0x0.0p+0, -0x0.0p+0, 0x1.0000000000000p+0, -0x1.0000000000000p+0, 0x0.0p+0, INFINITY, 0x1.4000000000000p+2, NAN, 0x1.1ccf385ebc8a0p+1023, 0x1.0000000000000p-1, -0x1.0000000000000p-1, -0x0.0p+0, 0x1.8000000000000p+1, NAN, -INFINITY, 0x1.4000000000000p+1};
static const double g3_b[20] = {0x1.0000000000000p+1, 0x1.0000000000000p+1, -0x1.0000000000000p+1, -0x1.0000000000000p+1, 0x0.0p+0, 0x1.0000000000000p+0, 0x0.0p+0, 0x0.0p+0, -0x1.0000000000000p+0, 0x1.0000000000000p+1, INFINITY, 0x1.0000000000000p+0, 0x0.730d67819e8d2p-1022, INFINITY, INFINITY, 0x0.0p+0, NAN, NAN, -0x1.0000000000000p+0, -0x0.0p+0};
static const double g3_want[8][20] = {
    /* arctan2 */ {0x1.4ae10fc6589a5p+0, -0x1.4ae10fc6589a5p+0, 0x1.d95e5ac22d08cp+0, -0x1.d95e5ac22d08cp+0, 0x0.0p+0, -0x0.0p+0, 0x1.921fb54442d18p+0, -0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1, 0x1.921fb54442d18p+0, 0x0.0p+0, NAN, 0x1.921fb54442d18p+0, 0x0.0p+0, -0x0.0p+0, -0x0.0p+0, NAN, NAN, -0x1.921fb54442d18p+0, 0x1.921fb54442d18p+0},
    /* hypot */ {0x1.d1ed52076fbe9p+2, 0x1.d1ed52076fbe9p+2, 0x1.d1ed52076fbe9p+2, 0x1.d1ed52076fbe9p+2, 0x0.0p+0, 0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p+0, INFINITY, INFINITY, NAN, 0x1.1ccf385ebc8a0p+1023, INFINITY, INFINITY, 0x0.0p+0, NAN, NAN, INFINITY, 0x1.4000000000000p+1},
    /* copysign */ {0x1.c000000000000p+2, 0x1.c000000000000p+2, -0x1.c000000000000p+2, -0x1.c000000000000p+2, 0x0.0p+0, 0x0.0p+0, 0x1.0000000000000p+0, 0x1.0000000000000p+0, -0x0.0p+0, INFINITY, 0x1.4000000000000p+2, NAN, 0x1.1ccf385ebc8a0p+1023, 0x1.0000000000000p-1, 0x1.0000000000000p-1, 0x0.0p+0, 0x1.8000000000000p+1, NAN, -INFINITY, -0x1.4000000000000p+1},
    /* fmax */ {0x1.c000000000000p+2, 0x1.0000000000000p+1, 0x1.c000000000000p+2, -0x1.0000000000000p+1, 0x0.0p+0, 0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x0.0p+0, 0x0.0p+0, INFINITY, INFINITY, 0x1.0000000000000p+0, 0x1.1ccf385ebc8a0p+1023, INFINITY, INFINITY, 0x0.0p+0, 0x1.8000000000000p+1, NAN, -0x1.0000000000000p+0, 0x1.4000000000000p+1},
    /* fmin */ {0x1.0000000000000p+1, -0x1.c000000000000p+2, -0x1.0000000000000p+1, -0x1.c000000000000p+2, 0x0.0p+0, -0x0.0p+0, 0x0.0p+0, -0x1.0000000000000p+0, -0x1.0000000000000p+0, 0x1.0000000000000p+1, 0x1.4000000000000p+2, 0x1.0000000000000p+0, 0x0.730d67819e8d2p-1022, 0x1.0000000000000p-1, -0x1.0000000000000p-1, 0x0.0p+0, 0x1.8000000000000p+1, NAN, -INFINITY, -0x0.0p+0},
    /* floor_divide */ {0x1.8000000000000p+1, -0x1.0000000000000p+2, -0x1.0000000000000p+2, 0x1.8000000000000p+1, NAN, -0x0.0p+0, INFINITY, -INFINITY, -0x0.0p+0, NAN, 0x0.0p+0, NAN, INFINITY, 0x0.0p+0, -0x1.0000000000000p+0, NAN, NAN, NAN, NAN, -INFINITY},
    /* remainder */ {0x1.0000000000000p+0, 0x1.0000000000000p+0, -0x1.0000000000000p+0, -0x1.0000000000000p+0, NAN, 0x0.0p+0, NAN, NAN, -0x0.0p+0, NAN, 0x1.4000000000000p+2, NAN, 0x0.28401cf53d610p-1022, 0x1.0000000000000p-1, INFINITY, NAN, NAN, NAN, NAN, NAN},
    /* fmod */ {0x1.0000000000000p+0, -0x1.0000000000000p+0, 0x1.0000000000000p+0, -0x1.0000000000000p+0, NAN, -0x0.0p+0, NAN, NAN, 0x0.0p+0, NAN, 0x1.4000000000000p+2, NAN, 0x0.28401cf53d610p-1022, 0x1.0000000000000p-1, -0x1.0000000000000p-1, NAN, NAN, NAN, NAN, NAN},
};

static int64_t f64_ulps(double a, double b) {
    int64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    int64_t oa = ia < 0 ? -(ia & INT64_MAX) : ia, ob = ib < 0 ? -(ib & INT64_MAX) : ib;
    return oa > ob ? oa - ob : ob - oa;
}

NDT_TEST(numpy_ops, binary_float64) {
    const int64_t n = sizeof g3_a / sizeof *g3_a;
    nd_array *a = nd_from_host(g3_a, ND_FLOAT64, ND_SHAPE(n));
    nd_array *b = nd_from_host(g3_b, ND_FLOAT64, ND_SHAPE(n));
    nd_array *(*const fns[8])(nd_array *, nd_array *) = {
        nd_arctan2, nd_hypot, nd_copysign, nd_fmax, nd_fmin, nd_floor_divide, nd_remainder, nd_fmod};
    const char *names[8] = {"arctan2", "hypot", "copysign", "fmax", "fmin", "floor_divide",
                            "remainder", "fmod"};
    for (int o = 0; o < 8; o++) {
        nd_array *r = fns[o](a, b);
        cr_assert(r && nd_dtype_of(r) == ND_FLOAT64, "%s: %s", names[o], nd_last_error());
        double g[32];
        cr_assert_eq(nd_to_host(r, g, sizeof g), ND_OK);
        for (int64_t i = 0; i < n; i++) {
            double w = g3_want[o][i];
            int ok;
            if (isnan(w)) ok = isnan(g[i]);
            /* fmax/fmin(-0.0, +0.0): NumPy 2.4 gives +0.0 from its SIMD loop
             * (this 20-element array) and -0.0, the first operand, from its
             * scalar loop (short arrays); nd gives the first operand always */
            else if ((o == 3 || o == 4) && i == 15) ok = g[i] == 0 && signbit(g[i]);
            else if (w == 0 || isinf(w) || o >= 2) ok = memcmp(&g[i], &w, 8) == 0; /* exact */
            else ok = f64_ulps(g[i], w) <= 2; /* arctan2, hypot: CUDA's 2 ulp */
            cr_expect(ok, "%s(%a, %a) is %a, NumPy 2.4 gives %a", names[o], g3_a[i], g3_b[i], g[i], w);
        }
        nd_free(r);
    }
    /* mod is remainder under NumPy's other name */
    nd_scope_begin();
    nd_array *m = nd_mod(a, b), *rm = nd_remainder(a, b);
    nd_array *same = nd_logical_or(nd_eq(m, rm), nd_logical_and(nd_isnan(m), nd_isnan(rm)));
    cr_expect_eq(nd_item(nd_all(same, ND_ALL_AXES)), 1.0, "nd_mod == nd_remainder");
    nd_scope_end();
    /* logical ops of floats: != 0, NaN is true */
    nd_array *r;
    r = nd_logical_and(a, b); ndt_expect_bools(r, "11110000011111101110", "logical_and(f64)"); nd_free(r);
    r = nd_logical_or(a, b); ndt_expect_bools(r, "11110111111111101111", "logical_or(f64)"); nd_free(r);
    r = nd_logical_xor(a, b); ndt_expect_bools(r, "00000111100000000001", "logical_xor(f64)"); nd_free(r);
    nd_free(a); nd_free(b);
}

NDT_TEST(numpy_ops, binary_integers) {
    const int8_t av[10] = {7, -7, 7, -7, 0, -128, -128, 5, 127, -1};
    const int8_t bv[10] = {2, 2, -2, -2, 0, -1, 0, 0, -128, 3};
    nd_array *a = nd_from_host(av, ND_INT8, ND_SHAPE(10)), *b = nd_from_host(bv, ND_INT8, ND_SHAPE(10));
    /* NumPy 2.4's int8 results; no traps: -128 // -1 is -128, x // 0 and
     * x % 0 are 0 */
    const int8_t want[8][10] = {
        {3, -4, -4, 3, 0, -128, 0, 0, -1, -1},       /* floor_divide */
        {1, 1, -1, -1, 0, 0, 0, 0, -1, 2},           /* remainder */
        {1, -1, 1, -1, 0, 0, 0, 0, 127, -1},         /* fmod */
        {2, 0, 6, -8, 0, -128, 0, 0, 0, 3},          /* bitwise_and */
        {7, -5, -1, -1, 0, -1, -128, 5, -1, -1},     /* bitwise_or */
        {5, -5, -7, 7, 0, 127, -128, 5, -1, -4},     /* bitwise_xor */
        {7, 2, 7, -2, 0, -1, 0, 5, 127, 3},          /* fmax */
        {2, -7, -2, -7, 0, -128, -128, 0, -128, -1}, /* fmin */
    };
    nd_array *(*const fns[8])(nd_array *, nd_array *) = {
        nd_floor_divide, nd_remainder, nd_fmod, nd_bitwise_and, nd_bitwise_or, nd_bitwise_xor,
        nd_fmax, nd_fmin};
    const char *names[8] = {"floor_divide", "remainder", "fmod", "bitwise_and", "bitwise_or",
                            "bitwise_xor", "fmax", "fmin"};
    for (int o = 0; o < 8; o++) {
        nd_array *r = fns[o](a, b);
        expect_i8(r, ND_INT8, want[o], 10, names[o]);
        nd_free(r);
    }
    /* int64 MIN // -1, MIN % 3, fmod(MIN, 3), x // 0 */
    const int64_t la[4] = {INT64_MIN, INT64_MIN, INT64_MIN, 5}, lb[4] = {-1, 3, 0, -3};
    nd_array *x = nd_from_host(la, ND_INT64, ND_SHAPE(4)), *y = nd_from_host(lb, ND_INT64, ND_SHAPE(4));
    const int64_t fd[4] = {INT64_MIN, -3074457345618258603, 0, -2}, rm[4] = {0, 1, 0, -1},
                  fm[4] = {0, -2, 0, 2};
    const int64_t *lw[3] = {fd, rm, fm};
    nd_array *(*const lf[3])(nd_array *, nd_array *) = {nd_floor_divide, nd_remainder, nd_fmod};
    for (int o = 0; o < 3; o++) {
        nd_array *r = lf[o](x, y);
        int64_t g[4];
        cr_assert(r && nd_dtype_of(r) == ND_INT64, "%s", nd_last_error());
        cr_assert_eq(nd_to_host(r, g, sizeof g), ND_OK);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(g[i], lw[o][i], "%s(int64)[%d] is %lld, NumPy 2.4 gives %lld", names[o], i,
                         (long long)g[i], (long long)lw[o][i]);
        nd_free(r);
    }
    /* uint8: 7 // 0, 255 // 16, 200 % 7 */
    const uint8_t ua[4] = {7, 0, 255, 200}, ub[4] = {0, 3, 16, 7};
    nd_array *u = nd_from_host(ua, ND_UINT8, ND_SHAPE(4)), *v = nd_from_host(ub, ND_UINT8, ND_SHAPE(4));
    const int8_t ufd[4] = {0, 0, 15, 28}, urm[4] = {0, 0, 15, 4};
    nd_array *r;
    expect_i8(r = nd_floor_divide(u, v), ND_UINT8, ufd, 4, "floor_divide(uint8)"); nd_free(r);
    expect_i8(r = nd_remainder(u, v), ND_UINT8, urm, 4, "remainder(uint8)"); nd_free(r);
    expect_i8(r = nd_fmod(u, v), ND_UINT8, urm, 4, "fmod(uint8)"); nd_free(r);
    /* bool: // % fmod give int8, bitwise ops are logical, fmax is or */
    const uint8_t ba[2] = {1, 0}, bb[2] = {1, 1};
    nd_array *p = nd_from_host(ba, ND_BOOL, ND_SHAPE(2)), *q = nd_from_host(bb, ND_BOOL, ND_SHAPE(2));
    const int8_t bfd[2] = {1, 0};
    expect_i8(r = nd_floor_divide(p, q), ND_INT8, bfd, 2, "floor_divide(bool)"); nd_free(r);
    ndt_expect_bools(r = nd_bitwise_xor(p, q), "01", "bitwise_xor(bool)"); nd_free(r);
    ndt_expect_bools(r = nd_fmax(p, q), "11", "fmax(bool)"); nd_free(r);
    /* NumPy 2.4 errors: bitwise ops of floats, a Python int out of range */
    nd_array *f = nd_from_host((float[]){1.0f}, ND_FLOAT32, ND_SHAPE(1));
    cr_expect_null(nd_bitwise_and(f, f));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_bitwise_and");
    nd_array *s300 = nd_scalar_int(300);
    cr_expect_null(nd_floor_divide(a, s300));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_floor_divide");
    cr_expect_null(nd_bitwise_and(a, s300));
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_bitwise_and");
    nd_free(a); nd_free(b); nd_free(x); nd_free(y); nd_free(u); nd_free(v); nd_free(p);
    nd_free(q); nd_free(f); nd_free(s300);
}

NDT_TEST(numpy_ops, binary_broadcast_weak_scalar_fused) {
    const int16_t xv[2] = {-7, 7}, yv[3] = {3, -3, 0};
    nd_array *x = nd_from_host(xv, ND_INT16, ND_SHAPE(2, 1)), *y = nd_from_host(yv, ND_INT16, ND_SHAPE(3));
    const float fv[2] = {1.0f, -2.5f}, gv[3] = {0.5f, -3.0f, NAN};
    nd_array *f = nd_from_host(fv, ND_FLOAT32, ND_SHAPE(2, 1)), *g = nd_from_host(gv, ND_FLOAT32, ND_SHAPE(3));
    const int8_t iv[2] = {1, -1};
    nd_array *i8 = nd_from_host(iv, ND_INT8, ND_SHAPE(2));
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    /* np.remainder(x, y) + np.floor_divide(x, 2)           -> int16 (2,3)
     * np.bitwise_xor(np.bitwise_and(x, 0x0F), y)           -> int16
     * np.hypot(np.fmod(f, 0.75), np.copysign(g, -1))       -> float32
     * np.arctan2(f, g), np.fmax(f, g), np.logical_xor(f > 0, g) */
    nd_array *c1 = nd_keep(nd_add(nd_remainder(x, y), nd_floor_divide(x, nd_scalar_int(2))));
    nd_array *c2 = nd_keep(nd_bitwise_xor(nd_bitwise_and(x, nd_scalar_int(0x0F)), y));
    nd_array *c3 = nd_keep(nd_hypot(nd_fmod(f, nd_scalar(0.75)), nd_copysign(g, nd_scalar_int(-1))));
    nd_array *c4 = nd_keep(nd_arctan2(f, g));
    nd_array *c5 = nd_keep(nd_fmax(f, g));
    nd_array *c6 = nd_keep(nd_logical_xor(nd_gt(f, nd_scalar_int(0)), g));
    nd_scope_end();
    cr_assert(c1 && c2 && c3 && c4 && c5 && c6, "%s", nd_last_error());
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    /* all of shape (2,3): one fused kernel, only the six results stored */
    expect_fused(&before, &after, 1, 6);
    int16_t h[6];
    const int16_t w1[6] = {-2, -5, -4, 4, 1, 3}, w2[6] = {10, -12, 9, 4, -6, 7};
    cr_expect_eq(nd_dtype_of(c1), ND_INT16);
    cr_assert_eq(nd_to_host(c1, h, sizeof h), ND_OK);
    for (int k = 0; k < 6; k++) cr_expect_eq(h[k], w1[k], "remainder + floor_divide [%d] = %d", k, h[k]);
    cr_expect_eq(nd_dtype_of(c2), ND_INT16);
    cr_assert_eq(nd_to_host(c2, h, sizeof h), ND_OK);
    for (int k = 0; k < 6; k++) cr_expect_eq(h[k], w2[k], "bitwise chain [%d] = %d", k, h[k]);
    const float w3[6] = {0x1.1e377ap-1f, 0x1.8154bep+1f, NAN, 0x1.1e377ap-1f, 0x1.8154bep+1f, NAN};
    const float w4[6] = {0x1.1b6e1ap+0f, 0x1.68f096p+1f, NAN, -0x1.5f9732p+0f, -0x1.393288p+1f, NAN};
    const float w5[6] = {1.0f, 1.0f, 1.0f, 0.5f, -2.5f, -2.5f};
    expect_f32(c3, w3, 6, 3, "hypot(fmod(f, 0.75), copysign(g, -1))");
    expect_f32(c4, w4, 6, 3, "arctan2(f, g)");
    expect_f32(c5, w5, 6, 0, "fmax(f, g)");
    ndt_expect_bools(c6, "000111", "logical_xor(f > 0, g)");
    /* weak scalars: arctan2(int8, 300) is float16 (any Python int), and
     * logical_and(float32, 1e-50) is true (the scalar's own value) */
    nd_scope_begin();
    nd_array *a1 = nd_keep(nd_arctan2(i8, nd_scalar_int(300)));
    nd_array *a2 = nd_keep(nd_logical_and(f, nd_scalar(1e-50)));
    nd_array *a3 = nd_keep(nd_remainder(i8, nd_scalar_int(3)));
    nd_array *a4 = nd_keep(nd_copysign(i8, nd_scalar_int(-1)));
    nd_scope_end();
    cr_assert(a1 && a2 && a3 && a4, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(a1), ND_FLOAT16);
    ref_arr *wa1 = ref_from_doubles(ND_FLOAT16, 1, (int64_t[]){2}, (double[]){0x1.b5p-9, -0x1.b5p-9});
    ndt_check(a1, wa1, 0, 0, NULL, "arctan2(int8, 300) against NumPy's float16");
    ref_free(wa1);
    ndt_expect_bools(a2, "11", "logical_and(float32, 1e-50)");
    const int8_t w6[2] = {1, 2};
    expect_i8(a3, ND_INT8, w6, 2, "remainder(int8 [1, -1], 3)");
    cr_expect_eq(nd_dtype_of(a4), ND_FLOAT16, "copysign(int8, -1) is float16");
    nd_free(x); nd_free(y); nd_free(f); nd_free(g); nd_free(i8);
    nd_free(c1); nd_free(c2); nd_free(c3); nd_free(c4); nd_free(c5); nd_free(c6);
    nd_free(a1); nd_free(a2); nd_free(a3); nd_free(a4);
}

/* ------------------------------------------- deg2rad, rad2deg, heaviside */

NDT_TEST(numpy_ops, angles_and_heaviside) {
    /* float32 and float64 inputs and NumPy 2.4's bits: one multiply by the
     * dtype's constant, so exact (3e38 * 180/pi overflows float32) */
    const float x[12] = {0x0.0p+0f, -0x0.0p+0f, 0x1p+0f, -0x1p+0f, 0x1.68p+7f, 0x1.68p+6f,
                         0x1.6cp+5f, 0x1.93e594p+99f, INFINITY, NAN, 0x1.c363ccp+127f,
                         0x1.16c2p-133f};
    const float d2r[12] = {0x0.0p+0f, -0x0.0p+0f, 0x1.1df46ap-6f, -0x1.1df46ap-6f, 0x1.921fb6p+1f,
                           0x1.921fb6p+0f, 0x1.969786p-1f, 0x1.c32834p+93f, INFINITY, NAN,
                           0x1.f83510p+121f, 0x1.378p-139f};
    const float r2d[12] = {0x0.0p+0f, -0x0.0p+0f, 0x1.ca5dcp+5f, -0x1.ca5dcp+5f, 0x1.4249ecp+13f,
                           0x1.4249ecp+12f, 0x1.45dea6p+11f, 0x1.699652p+105f, INFINITY, NAN,
                           INFINITY, 0x1.f31d28p-128f};
    const double xd[12] = {0x0.0p+0, -0x0.0p+0, 0x1.199999999999ap+0, -0x1.199999999999ap+0,
                           0x1.8c00000000001p+7, 0x1.8c00000000001p+6, 0x1.9066666666667p+5,
                           0x1.bc49560000001p+99, INFINITY, NAN, 0x1.f087606666667p+127,
                           0x1.32a2333333334p-133};
    const double d2rd[12] = {0x0.0p+0, -0x0.0p+0, 0x1.3a8cdb28e1359p-6, -0x1.3a8cdb28e1359p-6,
                             0x1.ba5614317cb35p+1, 0x1.ba5614317cb35p+0, 0x1.bf40479e20382p-1,
                             0x1.f045d2dad4cc7p+93, INFINITY, NAN, 0x1.1550629d021a8p+122,
                             0x1.568354bc798adp-139};
    const double r2dd[12] = {0x0.0p+0, -0x0.0p+0, 0x1.f833ee9d4222bp+5, -0x1.f833ee9d4222bp+5,
                             0x1.628483c692807p+13, 0x1.628483c692807p+12, 0x1.6674eba3cd04bp+11,
                             0x1.8dbef54a03ddep+105, INFINITY, NAN, 0x1.bc84059eda3c8p+133,
                             0x1.12833e3ccc7efp-127};
    nd_array *a = nd_from_host(x, ND_FLOAT32, ND_SHAPE(12));
    nd_array *r;
    expect_f32(r = nd_deg2rad(a), d2r, 12, 0, "deg2rad(float32)"); nd_free(r);
    expect_f32(r = nd_rad2deg(a), r2d, 12, 0, "rad2deg(float32)"); nd_free(r);
    nd_array *ad = nd_from_host(xd, ND_FLOAT64, ND_SHAPE(12));
    const double *wd[2] = {d2rd, r2dd};
    nd_array *(*const fd[2])(nd_array *) = {nd_deg2rad, nd_rad2deg};
    for (int o = 0; o < 2; o++) {
        double g[12];
        r = fd[o](ad);
        cr_assert(r && nd_dtype_of(r) == ND_FLOAT64, "%s", nd_last_error());
        cr_assert_eq(nd_to_host(r, g, sizeof g), ND_OK);
        for (int i = 0; i < 12; i++)
            cr_expect(isnan(wd[o][i]) ? isnan(g[i]) : memcmp(&g[i], &wd[o][i], 8) == 0,
                      "%s(%a) is %a, NumPy 2.4 gives %a", o ? "rad2deg" : "deg2rad", xd[i], g[i],
                      wd[o][i]);
        nd_free(r);
    }
    /* int8 -> float16 */
    const int8_t iv[3] = {1, -90, 127};
    nd_array *i8 = nd_from_host(iv, ND_INT8, ND_SHAPE(3));
    r = nd_deg2rad(i8);
    cr_assert(r, "%s", nd_last_error());
    ref_arr *w16 = ref_from_doubles(ND_FLOAT16, 1, (int64_t[]){3}, (double[]){0x1.1ep-6, -0x1.92p+0, 0x1.1bcp+1});
    ndt_check(r, w16, 0, 0, NULL, "deg2rad(int8) against NumPy's float16");
    ref_free(w16);
    nd_free(r);
    /* heaviside(float32 (5,1), float32 (2,)): -1.5, 0, -0, NaN, 2 against
     * h0 = 0.5 and NaN; heaviside(int16, 7) is float32 */
    const float hx[5] = {-1.5f, 0.0f, -0.0f, NAN, 2.0f}, h0[2] = {0.5f, NAN};
    nd_array *p = nd_from_host(hx, ND_FLOAT32, ND_SHAPE(5, 1)), *q = nd_from_host(h0, ND_FLOAT32, ND_SHAPE(2));
    const float hw[10] = {0, 0, 0.5f, NAN, 0.5f, NAN, NAN, NAN, 1, 1};
    expect_f32(r = nd_heaviside(p, q), hw, 10, 0, "heaviside(float32 (5,1), float32 (2,))"); nd_free(r);
    const int16_t sv[3] = {-3, 0, 4};
    nd_array *s = nd_from_host(sv, ND_INT16, ND_SHAPE(3));
    nd_scope_begin();
    nd_array *hs = nd_keep(nd_heaviside(s, nd_scalar_int(7)));
    /* a fused chain: rad2deg(deg2rad(x)) of float32 stays float32 */
    nd_array *rt = nd_keep(nd_rad2deg(nd_deg2rad(nd_mul(a, nd_scalar(2.0)))));
    nd_scope_end();
    const float hsw[3] = {0, 7, 1};
    expect_f32(hs, hsw, 3, 0, "heaviside(int16, 7)");
    cr_assert(rt && nd_dtype_of(rt) == ND_FLOAT32, "%s", nd_last_error());
    float g[12];
    cr_assert_eq(nd_to_host(rt, g, sizeof g), ND_OK);
    for (int i = 0; i < 8; i++) /* finite, no overflow: within an ulp or two of 2x */
        cr_expect(fabsf(g[i] - 2 * x[i]) <= 4e-7f * fabsf(2 * x[i]), "rad2deg(deg2rad(2x))[%d] = %a", i, g[i]);
    nd_free(a); nd_free(ad); nd_free(i8); nd_free(p); nd_free(q); nd_free(s); nd_free(hs); nd_free(rt);
}
