/* NumPy 2 type promotion (NEP 50): the strong-dtype table, weak Python-like
 * scalars, true division, and values computed in the promoted dtype. */
#include "common.h"

static int bf16_pair_known(nd_dtype a, nd_dtype b) {
    /* bfloat16 follows ml_dtypes; only the pairs whose answer is not in doubt */
    nd_dtype o = a == ND_BFLOAT16 ? b : a;
    return o == ND_BOOL || o == ND_INT8 || o == ND_UINT8 || o == ND_FLOAT16 ||
           o == ND_BFLOAT16 || o == ND_FLOAT32 || o == ND_FLOAT64;
}

NDT_TEST(promotion, strong_table_for_add_and_mul) {
    for (int i = 0; i < ND_NUM_DTYPES; i++)
        for (int j = 0; j < ND_NUM_DTYPES; j++) {
            nd_dtype a = ndt_all_dtypes[i], b = ndt_all_dtypes[j];
            if ((a == ND_BFLOAT16 || b == ND_BFLOAT16) && !bf16_pair_known(a, b)) continue;
            nd_array *x = nd_ones(a, ND_SHAPE(4)), *y = nd_ones(b, ND_SHAPE(4));
            nd_array *s = nd_add(x, y), *m = nd_mul(x, y);
            cr_expect(s, "add(%s, %s) failed: %s", ref_dtype_name(a), ref_dtype_name(b), nd_last_error());
            cr_expect_eq(nd_dtype_of(s), ref_promote(a, b), "add(%s, %s) -> %s, NumPy says %s",
                         ref_dtype_name(a), ref_dtype_name(b), nd_dtype_name(nd_dtype_of(s)),
                         ref_dtype_name(ref_promote(a, b)));
            cr_expect_eq(nd_dtype_of(m), ref_promote(a, b), "mul(%s, %s) -> %s, NumPy says %s",
                         ref_dtype_name(a), ref_dtype_name(b), nd_dtype_name(nd_dtype_of(m)),
                         ref_dtype_name(ref_promote(a, b)));
            nd_free(s);
            nd_free(m);
            nd_free(x);
            nd_free(y);
        }
}

/* Values of mixed-dtype ops are computed in the promoted dtype. */
NDT_TEST(promotion, mixed_values) {
    static const nd_dtype pairs[][2] = {
        {ND_INT8, ND_UINT8},    {ND_INT64, ND_UINT64}, {ND_INT16, ND_FLOAT16},
        {ND_UINT16, ND_INT32},  {ND_UINT32, ND_INT32}, {ND_INT8, ND_FLOAT16},
        {ND_UINT64, ND_INT8},   {ND_BOOL, ND_INT8},    {ND_FLOAT16, ND_FLOAT32},
        {ND_INT32, ND_FLOAT32}, {ND_BFLOAT16, ND_FLOAT16}, {ND_BOOL, ND_FLOAT64},
        {ND_UINT8, ND_BFLOAT16}, {ND_INT64, ND_FLOAT32}};
    static const ref_op ops[] = {R_ADD, R_SUB, R_MUL, R_MAX, R_LT};
    NDT_RNG(r);
    int64_t sh[2] = {3, 7};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        nd_dtype a = pairs[p][0], b = pairs[p][1], ct = ref_promote(a, b);
        ref_arr *ra = ndt_rand(&r, a, 2, sh, 0, 100), *rb = ndt_rand(&r, b, 2, sh, 0, 100);
        nd_array *x = ndt_upload(ra), *y = ndt_upload(rb);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            if (ops[o] == R_SUB && (a == ND_BOOL && b == ND_BOOL)) continue;
            nd_array *z = ops[o] == R_ADD ? nd_add(x, y) : ops[o] == R_SUB ? nd_sub(x, y)
                        : ops[o] == R_MUL ? nd_mul(x, y) : ops[o] == R_MAX ? nd_maximum(x, y)
                        : nd_lt(x, y);
            nd_dtype rt = ref_op_is_cmp(ops[o]) ? ND_BOOL : ct;
            ref_arr *want = ref_binary(ops[o], ra, rb, ct, rt);
            double tol = ndt_rtol(rt);
            ndt_check(z, want, tol, tol, NULL, "%s(%s, %s)", ref_op_name(ops[o]),
                      ref_dtype_name(a), ref_dtype_name(b));
            ref_free(want);
            nd_free(z);
        }
        nd_free(x);
        nd_free(y);
        ref_free(ra);
        ref_free(rb);
    }
}

NDT_TEST(promotion, true_division_of_integers_is_float64) {
    int32_t a[4] = {7, -7, 1, 9};
    int32_t b[4] = {2, 2, 3, -4};
    nd_array *x = nd_from_host(a, ND_INT32, ND_SHAPE(4)), *y = nd_from_host(b, ND_INT32, ND_SHAPE(4));
    nd_array *z = nd_div(x, y);
    cr_assert(z, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(z), ND_FLOAT64, "int32/int32 -> %s", nd_dtype_name(nd_dtype_of(z)));
    double got[4], want[4] = {3.5, -3.5, 1.0 / 3.0, -2.25};
    cr_assert_eq(nd_to_host(z, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 4; i++) cr_expect(fabs(got[i] - want[i]) < 1e-15, "%d: %g vs %g", i, got[i], want[i]);
    nd_array *u = nd_ones(ND_UINT8, ND_SHAPE(2)), *i8 = nd_ones(ND_INT8, ND_SHAPE(2));
    nd_array *q = nd_div(u, i8);
    cr_expect_eq(nd_dtype_of(q), ND_FLOAT64, "uint8/int8 -> %s", nd_dtype_name(nd_dtype_of(q)));
    nd_free(q); nd_free(u); nd_free(i8); nd_free(z); nd_free(x); nd_free(y);
}

static void expect_weak(nd_dtype arr, nd_array *scalar, nd_dtype want, const char *what) {
    nd_array *x = nd_full(arr, ND_SHAPE(3), 2);
    nd_array *z = nd_add(x, scalar), *z2 = nd_mul(scalar, x);
    cr_expect(z && z2, "%s failed: %s", what, nd_last_error());
    cr_expect_eq(nd_dtype_of(z), want, "%s: %s + scalar -> %s, NumPy 2 says %s", what,
                 ref_dtype_name(arr), nd_dtype_name(nd_dtype_of(z)), ref_dtype_name(want));
    cr_expect_eq(nd_dtype_of(z2), want, "%s: scalar * %s -> %s, NumPy 2 says %s", what,
                 ref_dtype_name(arr), nd_dtype_name(nd_dtype_of(z2)), ref_dtype_name(want));
    nd_free(z);
    nd_free(z2);
    nd_free(x);
}

NDT_TEST(promotion, weak_scalars) {
    nd_array *f = nd_scalar(2.5), *i = nd_scalar_int(3);
    cr_assert(f && i, "%s", nd_last_error());
    cr_expect_eq(nd_ndim(f), 0);
    expect_weak(ND_FLOAT32, f, ND_FLOAT32, "float scalar");
    expect_weak(ND_FLOAT16, f, ND_FLOAT16, "float scalar");
    expect_weak(ND_BFLOAT16, f, ND_BFLOAT16, "float scalar");
    expect_weak(ND_FLOAT64, f, ND_FLOAT64, "float scalar");
    expect_weak(ND_INT32, f, ND_FLOAT64, "float scalar");
    expect_weak(ND_UINT8, f, ND_FLOAT64, "float scalar");
    expect_weak(ND_BOOL, f, ND_FLOAT64, "float scalar");
    expect_weak(ND_UINT8, i, ND_UINT8, "int scalar");
    expect_weak(ND_INT8, i, ND_INT8, "int scalar");
    expect_weak(ND_INT16, i, ND_INT16, "int scalar");
    expect_weak(ND_UINT64, i, ND_UINT64, "int scalar");
    expect_weak(ND_FLOAT16, i, ND_FLOAT16, "int scalar");
    expect_weak(ND_FLOAT32, i, ND_FLOAT32, "int scalar");
    expect_weak(ND_BOOL, i, ND_INT64, "int scalar");
    /* two weak scalars: Python float / int defaults */
    nd_array *ff = nd_add(f, f), *ii = nd_add(i, i), *fi = nd_add(f, i);
    cr_expect_eq(nd_dtype_of(ff), ND_FLOAT64);
    cr_expect_eq(nd_dtype_of(ii), ND_INT64);
    cr_expect_eq(nd_dtype_of(fi), ND_FLOAT64);
    cr_expect(fabs(nd_item(fi) - 5.5) < 1e-12, "2.5 + 3 = %g", nd_item(fi));
    nd_free(ff); nd_free(ii); nd_free(fi);
    nd_free(f);
    nd_free(i);
}

NDT_TEST(promotion, weak_scalar_values) {
    /* float32 * 0.1 stays float32 and is computed in float32 */
    NDT_RNG(r);
    int64_t n = 40;
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, 1, &n, -10, 10);
    nd_array *x = ndt_upload(a), *s = nd_scalar(0.1);
    nd_array *z = nd_mul(x, s);
    ref_arr *want = ref_new(ND_FLOAT32, 1, &n);
    for (int64_t k = 0; k < n; k++) ref_setd(want, k, (double)((float)ref_getd(a, k) * 0.1f));
    ndt_check(z, want, 1e-6, 0, NULL, "float32 * weak 0.1");
    /* uint8 + weak 250 wraps in uint8 */
    uint8_t u[3] = {1, 5, 10}, got[3];
    nd_array *xu = nd_from_host(u, ND_UINT8, ND_SHAPE(3)), *k250 = nd_scalar_int(250);
    nd_array *zu = nd_add(xu, k250);
    cr_assert(zu, "%s", nd_last_error());
    cr_expect_eq(nd_dtype_of(zu), ND_UINT8);
    cr_assert_eq(nd_to_host(zu, got, 3), ND_OK, "%s", nd_last_error());
    cr_expect(got[0] == 251 && got[1] == 255 && got[2] == 4, "%u %u %u", got[0], got[1], got[2]);
    nd_free(z); nd_free(x); nd_free(s); nd_free(xu); nd_free(k250); nd_free(zu);
    ref_free(a); ref_free(want);
}

NDT_TEST(promotion, weak_int_out_of_range_is_dtype_error) {
    nd_array *x = nd_ones(ND_UINT8, ND_SHAPE(3));
    nd_array *big = nd_scalar_int(300), *neg = nd_scalar_int(-1);
    nd_array *z = nd_add(x, big);
    cr_expect_null(z, "uint8 + 300 must fail as in NumPy 2");
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_add");
    z = nd_mul(neg, x);
    cr_expect_null(z, "-1 * uint8 must fail as in NumPy 2");
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_mul");
    nd_array *i8 = nd_ones(ND_INT8, ND_SHAPE(2)), *k200 = nd_scalar_int(200);
    cr_expect_null(nd_add(i8, k200), "int8 + 200 must fail");
    NDT_EXPECT_ERR(ND_ERR_DTYPE, "nd_add");
    /* the array made before the error keeps its value */
    uint8_t got[3];
    cr_assert_eq(nd_to_host(x, got, 3), ND_OK, "%s", nd_last_error());
    cr_expect(got[0] == 1 && got[1] == 1 && got[2] == 1);
    nd_free(x); nd_free(big); nd_free(neg); nd_free(i8); nd_free(k200);
}

NDT_TEST(promotion, unary_float_results) {
    for (int k = 0; k < ND_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        nd_array *x = nd_ones(t, ND_SHAPE(2));
        nd_array *s = nd_sqrt(x), *e = nd_exp(x), *n = nd_logical_not(x), *c = nd_eq(x, x);
        cr_expect_eq(nd_dtype_of(s), ref_float_result(t), "sqrt(%s) -> %s", ref_dtype_name(t), nd_dtype_name(nd_dtype_of(s)));
        cr_expect_eq(nd_dtype_of(e), ref_float_result(t), "exp(%s) -> %s", ref_dtype_name(t), nd_dtype_name(nd_dtype_of(e)));
        cr_expect_eq(nd_dtype_of(n), ND_BOOL);
        cr_expect_eq(nd_dtype_of(c), ND_BOOL);
        nd_free(s); nd_free(e); nd_free(n); nd_free(c); nd_free(x);
    }
}
