/* Every elementwise op for every dtype NumPy defines it for, compared with
 * the float64 / wrapping-int reference; result dtypes as NumPy 2. */
#include "common.h"

static const int64_t SHAPE[2] = {5, 13};

/* An input valid for op: positive for sqrt/log, small for exp, ... */
static ref_arr *unary_input(ndt_rng *r, ref_op op, nd_dtype t) {
    int fl = ref_is_float(t);
    switch (op) {
    case R_SQRT: case R_LOG: return ndt_rand(r, t, 2, SHAPE, fl ? 0.1 : 1, 100);
    case R_EXP: return ndt_rand(r, t, 2, SHAPE, -4, 4);
    case R_SIN: case R_COS: case R_TANH: return ndt_rand(r, t, 2, SHAPE, fl ? -3 : -10, fl ? 3 : 10);
    /* away from the poles at +-pi/2, where a relative tolerance means little */
    case R_TAN: return ndt_rand(r, t, 2, SHAPE, fl ? -1.4 : -1, fl ? 1.4 : 1);
    case R_FLOOR: case R_CEIL: case R_TRUNC: case R_RINT: return ndt_rand(r, t, 2, SHAPE, -50, 50);
    /* inside the domains (integers: -1, 0, 1) */
    case R_ARCSIN: case R_ARCCOS: case R_ARCTANH:
        return ndt_rand(r, t, 2, SHAPE, fl ? -0.99 : -1, fl ? 0.99 : 1);
    case R_ARCCOSH: return ndt_rand(r, t, 2, SHAPE, 1, 50);
    case R_LOG2: case R_LOG10: return ndt_rand(r, t, 2, SHAPE, fl ? 0.1 : 1, 100);
    case R_LOG1P: return ndt_rand(r, t, 2, SHAPE, fl ? -0.9 : 0, 100);
    case R_SINH: case R_COSH: case R_EXPM1: return ndt_rand(r, t, 2, SHAPE, -5, 5);
    case R_EXP2: return ndt_rand(r, t, 2, SHAPE, -10, 10);
    case R_RECIPROCAL: return fl ? ndt_rand(r, t, 2, SHAPE, 0.1, 10) : ndt_rand(r, t, 2, SHAPE, -3, 3);
    case R_SIGN: {
        ref_arr *a = fl ? ndt_rand(r, t, 2, SHAPE, -3, 3) : ndt_rand_bits(r, t, 2, SHAPE);
        for (int64_t i = 0; i < a->size; i += 4) ref_setd(a, i, 0);
        return a;
    }
    case R_ISNAN: case R_ISINF: case R_ISFINITE: case R_SIGNBIT: case R_ISPOSINF: case R_ISNEGINF: {
        ref_arr *a = fl ? ndt_rand(r, t, 2, SHAPE, -3, 3) : ndt_rand_bits(r, t, 2, SHAPE);
        const double sp[4] = {NAN, INFINITY, -INFINITY, -0.0};
        for (int64_t i = 0; fl && i < a->size; i += 3) ref_setd(a, i, sp[(i / 3) % 4]);
        return a;
    }
    case R_NOT: {
        ref_arr *a = fl ? ndt_rand(r, t, 2, SHAPE, -3, 3) : ndt_rand_bits(r, t, 2, SHAPE);
        for (int64_t i = 0; i < a->size; i += 3) ref_setd(a, i, 0); /* some zeros */
        return a;
    }
    default: return fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand_bits(r, t, 2, SHAPE);
    }
}

static void check_unary(ref_op op) {
    NDT_RNG(r);
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        ref_arr *a = unary_input(&r, op, t);
        nd_array *x = ndt_upload(a);
        nd_array *y = ndt_unary_fn(op)(x);
        if (((op == R_NEG || op == R_SIGN || op == R_POSITIVE) && t == ND_BOOL) ||
            (op == R_INVERT && ref_is_float(t))) { /* NumPy: TypeError */
            char fn[32];
            snprintf(fn, sizeof fn, "nd_%s", op == R_NEG ? "neg" : ref_op_name(op));
            cr_expect_null(y, "%s(bool) should fail as in NumPy", ref_op_name(op));
            NDT_EXPECT_ERR(ND_ERR_DTYPE, fn);
            nd_free(x);
            ref_free(a);
            continue;
        }
        nd_dtype ct = t, rt = t;
        switch (op) {
        case R_SQRT: case R_EXP: case R_LOG: case R_SIN: case R_COS: case R_TANH: case R_TAN:
        case R_ARCSIN: case R_ARCCOS: case R_ARCTAN: case R_SINH: case R_COSH: case R_ARCSINH:
        case R_ARCCOSH: case R_ARCTANH: case R_EXP2: case R_EXPM1: case R_LOG2: case R_LOG10:
        case R_LOG1P: case R_CBRT: case R_RINT: /* NumPy 2.4: rint(int8) is float16 */
        case R_DEG2RAD: case R_RAD2DEG:
            ct = rt = ref_float_result(t);
            break;
        case R_TRUNC: /* NumPy 2.4 keeps every dtype, bool included */
            if (y) cr_expect_eq(nd_dtype_of(y), t, "trunc(%s) keeps the dtype", ref_dtype_name(t));
            break;
        case R_RECIPROCAL: /* NumPy 2.4: reciprocal(bool) is int8 */
            if (t == ND_BOOL) ct = rt = ND_INT8;
            break;
        case R_FLOOR: case R_CEIL:
            /* NumPy < 2.3 gives floats for integer input, newer keeps the
             * dtype; both are accepted, the values must be exact either way. */
            if (!ref_is_float(t) && y && nd_dtype_of(y) == ref_float_result(t)) ct = rt = nd_dtype_of(y);
            break;
        case R_SQUARE:
            if (t == ND_BOOL) ct = rt = ND_INT8;
            break;
        case R_NOT: rt = ND_BOOL; break;
        default:
            if (ref_op_is_cmp(op)) rt = ND_BOOL; /* predicates */
            break;
        }
        ref_arr *want = ref_unary(op, a, ct, rt);
        double tol = ndt_rtol(rt);
        ndt_check(y, want, tol, tol, NULL, "%s(%s)", ref_op_name(op), ref_dtype_name(t));
        nd_free(y);
        nd_free(x);
        ref_free(want);
        ref_free(a);
    }
}

NDT_TEST(elementwise, neg) { check_unary(R_NEG); }
NDT_TEST(elementwise, abs) { check_unary(R_ABS); }
NDT_TEST(elementwise, sqrt) { check_unary(R_SQRT); }
NDT_TEST(elementwise, exp) { check_unary(R_EXP); }
NDT_TEST(elementwise, log) { check_unary(R_LOG); }
NDT_TEST(elementwise, sin) { check_unary(R_SIN); }
NDT_TEST(elementwise, cos) { check_unary(R_COS); }
NDT_TEST(elementwise, tanh) { check_unary(R_TANH); }
NDT_TEST(elementwise, tan) { check_unary(R_TAN); }
NDT_TEST(elementwise, floor) { check_unary(R_FLOOR); }
NDT_TEST(elementwise, ceil) { check_unary(R_CEIL); }
NDT_TEST(elementwise, square) { check_unary(R_SQUARE); }
NDT_TEST(elementwise, logical_not) { check_unary(R_NOT); }
NDT_TEST(elementwise, arcsin) { check_unary(R_ARCSIN); }
NDT_TEST(elementwise, arccos) { check_unary(R_ARCCOS); }
NDT_TEST(elementwise, arctan) { check_unary(R_ARCTAN); }
NDT_TEST(elementwise, sinh) { check_unary(R_SINH); }
NDT_TEST(elementwise, cosh) { check_unary(R_COSH); }
NDT_TEST(elementwise, arcsinh) { check_unary(R_ARCSINH); }
NDT_TEST(elementwise, arccosh) { check_unary(R_ARCCOSH); }
NDT_TEST(elementwise, arctanh) { check_unary(R_ARCTANH); }
NDT_TEST(elementwise, exp2) { check_unary(R_EXP2); }
NDT_TEST(elementwise, expm1) { check_unary(R_EXPM1); }
NDT_TEST(elementwise, log2) { check_unary(R_LOG2); }
NDT_TEST(elementwise, log10) { check_unary(R_LOG10); }
NDT_TEST(elementwise, log1p) { check_unary(R_LOG1P); }
NDT_TEST(elementwise, cbrt) { check_unary(R_CBRT); }
NDT_TEST(elementwise, rint) { check_unary(R_RINT); }
NDT_TEST(elementwise, reciprocal) { check_unary(R_RECIPROCAL); }
NDT_TEST(elementwise, trunc) { check_unary(R_TRUNC); }
NDT_TEST(elementwise, sign) { check_unary(R_SIGN); }
NDT_TEST(elementwise, positive) { check_unary(R_POSITIVE); }
NDT_TEST(elementwise, deg2rad) { check_unary(R_DEG2RAD); }
NDT_TEST(elementwise, rad2deg) { check_unary(R_RAD2DEG); }
NDT_TEST(elementwise, isnan) { check_unary(R_ISNAN); }
NDT_TEST(elementwise, isinf) { check_unary(R_ISINF); }
NDT_TEST(elementwise, isfinite) { check_unary(R_ISFINITE); }
NDT_TEST(elementwise, signbit) { check_unary(R_SIGNBIT); }
NDT_TEST(elementwise, isposinf) { check_unary(R_ISPOSINF); }
NDT_TEST(elementwise, isneginf) { check_unary(R_ISNEGINF); }
NDT_TEST(elementwise, invert) { check_unary(R_INVERT); }

static void binary_inputs(ndt_rng *r, ref_op op, nd_dtype t, ref_arr **a, ref_arr **b) {
    int fl = ref_is_float(t);
    switch (op) {
    case R_DIV:
        *a = fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand_small(r, t, 2, SHAPE);
        *b = fl ? ndt_rand(r, t, 2, SHAPE, 0.5, 10) : ndt_rand(r, t, 2, SHAPE, 1, 100);
        if (ref_is_signed(t) || fl)
            for (int64_t i = 0; i < (*b)->size; i += 2) ref_setd(*b, i, -ref_getd(*b, i));
        return;
    case R_FLOOR_DIVIDE: case R_REMAINDER: case R_FMOD:
        /* signed divisors, some zero, and the INT_MIN // -1 pair */
        *a = fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand_bits(r, t, 2, SHAPE);
        *b = fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand(r, t, 2, SHAPE, -5, 5);
        for (int64_t i = 0; i < (*b)->size; i += 7) ref_setd(*b, i, 0);
        if (ref_is_signed(t)) {
            ref_setu(*a, 1, (uint64_t)1 << (8 * ref_itemsize(t) - 1)); /* MIN */
            ref_setd(*b, 1, -1);
        }
        return;
    case R_POW:
        *a = fl ? ndt_rand(r, t, 2, SHAPE, 0.5, 3) : ndt_rand(r, t, 2, SHAPE, -9, 9);
        *b = fl ? ndt_rand(r, t, 2, SHAPE, -2, 2) : ndt_rand(r, t, 2, SHAPE, 0, 5);
        return;
    default:
        *a = fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand_bits(r, t, 2, SHAPE);
        *b = fl ? ndt_rand(r, t, 2, SHAPE, -10, 10) : ndt_rand_bits(r, t, 2, SHAPE);
        /* equal elements, so comparisons and maximum see ties */
        for (int64_t i = 0; i < (*a)->size; i += 3) ref_cast_elem(*b, i, *a, i);
        return;
    }
}

static void check_binary(ref_op op) {
    NDT_RNG(r);
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        ref_arr *a, *b;
        binary_inputs(&r, op, t, &a, &b);
        nd_array *x = ndt_upload(a), *y = ndt_upload(b);
        nd_array *z = ndt_binary_fn(op)(x, y);
        int bitwise = op == R_BITWISE_AND || op == R_BITWISE_OR || op == R_BITWISE_XOR;
        if ((op == R_SUB && t == ND_BOOL) || (bitwise && ref_is_float(t))) { /* NumPy: TypeError */
            char fn[32];
            snprintf(fn, sizeof fn, "nd_%s", ref_op_name(op));
            cr_expect_null(z, "%s(%s) should fail as in NumPy", ref_op_name(op), ref_dtype_name(t));
            NDT_EXPECT_ERR(ND_ERR_DTYPE, fn);
        } else {
            nd_dtype ct = t, rt = t;
            if (op == R_DIV && !ref_is_float(t)) ct = rt = ND_FLOAT64;
            if (op == R_ARCTAN2 || op == R_HYPOT || op == R_COPYSIGN || op == R_HEAVISIDE)
                ct = rt = ref_float_result(t);
            if ((op == R_POW || op == R_FLOOR_DIVIDE || op == R_REMAINDER || op == R_FMOD) &&
                t == ND_BOOL)
                ct = rt = ND_INT8;
            if (ref_op_is_cmp(op)) rt = ND_BOOL;
            ref_arr *want = ref_binary(op, a, b, ct, rt);
            double tol = ndt_rtol(rt);
            ndt_check(z, want, tol, tol, NULL, "%s(%s, %s)", ref_op_name(op), ref_dtype_name(t),
                      ref_dtype_name(t));
            ref_free(want);
        }
        nd_free(z);
        nd_free(x);
        nd_free(y);
        ref_free(a);
        ref_free(b);
    }
}

NDT_TEST(elementwise, add) { check_binary(R_ADD); }
NDT_TEST(elementwise, sub) { check_binary(R_SUB); }
NDT_TEST(elementwise, mul) { check_binary(R_MUL); }
NDT_TEST(elementwise, div) { check_binary(R_DIV); }
NDT_TEST(elementwise, pow) { check_binary(R_POW); }
NDT_TEST(elementwise, maximum) { check_binary(R_MAX); }
NDT_TEST(elementwise, minimum) { check_binary(R_MIN); }
NDT_TEST(elementwise, arctan2) { check_binary(R_ARCTAN2); }
NDT_TEST(elementwise, hypot) { check_binary(R_HYPOT); }
NDT_TEST(elementwise, copysign) { check_binary(R_COPYSIGN); }
NDT_TEST(elementwise, fmax) { check_binary(R_FMAX); }
NDT_TEST(elementwise, fmin) { check_binary(R_FMIN); }
NDT_TEST(elementwise, floor_divide) { check_binary(R_FLOOR_DIVIDE); }
NDT_TEST(elementwise, remainder) { check_binary(R_REMAINDER); }
NDT_TEST(elementwise, fmod) { check_binary(R_FMOD); }
NDT_TEST(elementwise, logical_and) { check_binary(R_LOGICAL_AND); }
NDT_TEST(elementwise, logical_or) { check_binary(R_LOGICAL_OR); }
NDT_TEST(elementwise, logical_xor) { check_binary(R_LOGICAL_XOR); }
NDT_TEST(elementwise, bitwise_and) { check_binary(R_BITWISE_AND); }
NDT_TEST(elementwise, bitwise_or) { check_binary(R_BITWISE_OR); }
NDT_TEST(elementwise, bitwise_xor) { check_binary(R_BITWISE_XOR); }
NDT_TEST(elementwise, heaviside) { check_binary(R_HEAVISIDE); }
NDT_TEST(elementwise, eq) { check_binary(R_EQ); }
NDT_TEST(elementwise, ne) { check_binary(R_NE); }
NDT_TEST(elementwise, lt) { check_binary(R_LT); }
NDT_TEST(elementwise, le) { check_binary(R_LE); }
NDT_TEST(elementwise, gt) { check_binary(R_GT); }
NDT_TEST(elementwise, ge) { check_binary(R_GE); }

NDT_TEST(elementwise, where_every_dtype) {
    NDT_RNG(r);
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        ref_arr *c = ndt_rand(&r, ND_BOOL, 2, SHAPE, 0, 1);
        ref_arr *a = ndt_rand_bits(&r, t, 2, SHAPE), *b = ndt_rand_bits(&r, t, 2, SHAPE);
        nd_array *xc = ndt_upload(c), *xa = ndt_upload(a), *xb = ndt_upload(b);
        nd_array *z = nd_where(xc, xa, xb);
        ref_arr *want = ref_where(c, a, b, t);
        ndt_check(z, want, 0, 0, NULL, "where(bool, %s, %s)", ref_dtype_name(t), ref_dtype_name(t));
        nd_free(z);
        nd_free(xc);
        nd_free(xa);
        nd_free(xb);
        ref_free(want);
        ref_free(c);
        ref_free(a);
        ref_free(b);
    }
}

NDT_TEST(elementwise, where_mixed_and_nonbool_condition) {
    NDT_RNG(r);
    /* cond is float32 (read as != 0), a int8 (5,13), b float32 broadcast (13,) */
    ref_arr *c = ndt_rand(&r, ND_FLOAT32, 2, SHAPE, -2, 2);
    for (int64_t i = 0; i < c->size; i += 2) ref_setd(c, i, 0);
    ref_arr *a = ndt_rand_small(&r, ND_INT8, 2, SHAPE);
    ref_arr *b = ndt_rand(&r, ND_FLOAT32, 1, SHAPE + 1, -5, 5);
    nd_array *xc = ndt_upload(c), *xa = ndt_upload(a), *xb = ndt_upload(b);
    nd_array *z = nd_where(xc, xa, xb);
    ref_arr *want = ref_where(c, a, b, ND_FLOAT32);
    ndt_check(z, want, 0, 0, NULL, "where(float32, int8, float32[13])");
    nd_free(z);
    nd_free(xc);
    nd_free(xa);
    nd_free(xb);
    ref_free(want);
    ref_free(c);
    ref_free(a);
    ref_free(b);
}

NDT_TEST(elementwise, clip_every_dtype) {
    NDT_RNG(r);
    for (int k = 0; k < NDT_NUM_DTYPES; k++) {
        nd_dtype t = ndt_all_dtypes[k];
        if (t == ND_BOOL) continue;
        int u = ref_is_unsigned(t);
        ref_arr *a = ndt_rand(&r, t, 2, SHAPE, u ? 0 : -100, 100);
        ref_arr *lo = ndt_rand(&r, t, 1, SHAPE + 1, u ? 10 : -50, u ? 40 : -10); /* broadcast row */
        int64_t one = 1;
        ref_arr *hi = ndt_rand(&r, t, 1, &one, 50, 80);
        nd_array *xa = ndt_upload(a), *xl = ndt_upload(lo), *xh = ndt_upload(hi);
        nd_array *z = nd_clip(xa, xl, xh);
        ref_arr *m = ref_binary(R_MAX, a, lo, t, t);
        ref_arr *want = ref_binary(R_MIN, m, hi, t, t);
        ndt_check(z, want, 0, 0, NULL, "clip(%s)", ref_dtype_name(t));
        nd_free(z);
        nd_free(xa);
        nd_free(xl);
        nd_free(xh);
        ref_free(m);
        ref_free(want);
        ref_free(a);
        ref_free(lo);
        ref_free(hi);
    }
}

NDT_TEST(elementwise, maximum_minimum_propagate_nan) {
    const nd_dtype fts[] = {ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};
    NDT_RNG(r);
    for (int k = 0; k < 4; k++) {
        ref_arr *a = ndt_rand(&r, fts[k], 2, SHAPE, -5, 5), *b = ndt_rand(&r, fts[k], 2, SHAPE, -5, 5);
        for (int64_t i = 0; i < a->size; i += 4) ref_setd(a, i, NAN);
        for (int64_t i = 1; i < b->size; i += 5) ref_setd(b, i, NAN);
        nd_array *x = ndt_upload(a), *y = ndt_upload(b);
        nd_array *mx = nd_maximum(x, y), *mn = nd_minimum(x, y), *lt = nd_lt(x, y), *ne = nd_ne(x, y);
        ref_arr *wmx = ref_binary(R_MAX, a, b, fts[k], fts[k]);
        ref_arr *wmn = ref_binary(R_MIN, a, b, fts[k], fts[k]);
        ref_arr *wlt = ref_binary(R_LT, a, b, fts[k], ND_BOOL);
        ref_arr *wne = ref_binary(R_NE, a, b, fts[k], ND_BOOL);
        ndt_check(mx, wmx, 0, 0, NULL, "maximum with NaN (%s)", ref_dtype_name(fts[k]));
        ndt_check(mn, wmn, 0, 0, NULL, "minimum with NaN (%s)", ref_dtype_name(fts[k]));
        ndt_check(lt, wlt, 0, 0, NULL, "lt with NaN (%s)", ref_dtype_name(fts[k]));
        ndt_check(ne, wne, 0, 0, NULL, "ne with NaN (%s)", ref_dtype_name(fts[k]));
        nd_free(mx);
        nd_free(mn);
        nd_free(lt);
        nd_free(ne);
        nd_free(x);
        nd_free(y);
        ref_free(wmx);
        ref_free(wmn);
        ref_free(wlt);
        ref_free(wne);
        ref_free(a);
        ref_free(b);
    }
}

NDT_TEST(elementwise, integer_overflow_wraps) {
    nd_scope_begin();
    int8_t a8[3] = {100, -100, 127}, b8[3] = {100, -100, 1};
    uint8_t ua[2] = {3, 0}, ub[2] = {5, 1};
    nd_array *x = nd_from_host(a8, ND_INT8, ND_SHAPE(3)), *y = nd_from_host(b8, ND_INT8, ND_SHAPE(3));
    nd_array *s = nd_add(x, y);
    nd_array *u = nd_sub(nd_from_host(ua, ND_UINT8, ND_SHAPE(2)), nd_from_host(ub, ND_UINT8, ND_SHAPE(2)));
    int8_t got8[3];
    uint8_t gotu[2];
    cr_assert_eq(nd_to_host(s, got8, sizeof got8), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(u, gotu, sizeof gotu), ND_OK, "%s", nd_last_error());
    cr_expect(got8[0] == -56 && got8[1] == 56 && got8[2] == -128, "int8 add wraps: %d %d %d",
              got8[0], got8[1], got8[2]);
    cr_expect(gotu[0] == 254 && gotu[1] == 255, "uint8 sub wraps: %u %u", gotu[0], gotu[1]);
    nd_free(s);
    nd_free(u);
    nd_free(x);
    nd_free(y);
    nd_scope_end();
}

NDT_TEST(elementwise, large_arrays_float32_chain) {
    /* big enough to be split into tiles and spread over threads */
    NDT_RNG(r);
    int64_t n = 100003;
    ref_arr *a = ndt_rand(&r, ND_FLOAT32, 1, &n, -3, 3), *b = ndt_rand(&r, ND_FLOAT32, 1, &n, 0.5, 2);
    nd_array *x = ndt_upload(a), *y = ndt_upload(b);
    nd_array *e = nd_exp(x), *d = nd_div(e, y), *s = nd_sin(x), *z = nd_add(d, s);
    ref_arr *re = ref_unary(R_EXP, a, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rd = ref_binary(R_DIV, re, b, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rs = ref_unary(R_SIN, a, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rz = ref_binary(R_ADD, rd, rs, ND_FLOAT64, ND_FLOAT32);
    ndt_check(z, rz, 1e-5, 1e-5, NULL, "exp(x)/y + sin(x), n=%lld", (long long)n);
    nd_free(x); nd_free(y); nd_free(e); nd_free(d); nd_free(s); nd_free(z);
    ref_free(a); ref_free(b); ref_free(re); ref_free(rd); ref_free(rs); ref_free(rz);
}

NDT_TEST(elementwise, special_values) {
    /* NaN, infinities, signed zeros, domain errors and overflow, as C99/IEEE
     * (and so NumPy) define them */
    const double sv[12] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, -1.0, -0.5, 0.5, 1e-30, 300, -300, 12};
    const nd_dtype fts[4] = {ND_FLOAT16, ND_BFLOAT16, ND_FLOAT32, ND_FLOAT64};
    const ref_op ops[] = {R_NEG, R_ABS, R_SQRT, R_EXP, R_LOG, R_SIN, R_COS, R_TANH, R_TAN, R_FLOOR,
                          R_CEIL, R_SQUARE, R_ARCSIN, R_ARCCOS, R_ARCTAN, R_SINH, R_COSH,
                          R_ARCSINH, R_ARCCOSH, R_ARCTANH, R_EXP2, R_EXPM1, R_LOG2, R_LOG10,
                          R_LOG1P, R_CBRT, R_RINT, R_RECIPROCAL, R_TRUNC, R_SIGN, R_POSITIVE,
                          R_ISNAN, R_ISINF, R_ISFINITE, R_SIGNBIT, R_ISPOSINF, R_ISNEGINF, R_NOT};
    for (int k = 0; k < 4; k++) {
        ref_arr *a = ref_from_doubles(fts[k], 1, (int64_t[]){12}, sv);
        nd_array *x = ndt_upload(a);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            nd_array *y = ndt_unary_fn(ops[o])(x);
            nd_dtype rt = ops[o] == R_NOT || ref_op_is_cmp(ops[o]) ? ND_BOOL : fts[k];
            ref_arr *want = ref_unary(ops[o], a, fts[k], rt);
            /* sin/cos of +-inf is NaN, of 300 fine; tolerance per dtype */
            double tol = ndt_rtol(rt);
            ndt_check(y, want, tol, tol, NULL, "%s(special values, %s)", ref_op_name(ops[o]), ref_dtype_name(fts[k]));
            nd_free(y);
            ref_free(want);
        }
        /* binary: pow of negative bases, division by zero, NaN compares */
        const double bv[12] = {1, 2, 0.5, 0.0, 1, 3, 0.5, -0.0, 2, 2, 3, -2};
        ref_arr *b = ref_from_doubles(fts[k], 1, (int64_t[]){12}, bv);
        nd_array *y = ndt_upload(b);
        const ref_op bops[] = {R_POW, R_DIV, R_MAX, R_MIN, R_EQ, R_NE, R_LT, R_GE, R_MUL};
        for (size_t o = 0; o < sizeof bops / sizeof bops[0]; o++) {
            ndt_bin_fn f = ndt_binary_fn(bops[o]);
            nd_array *z = f(x, y);
            nd_dtype rt = ref_op_is_cmp(bops[o]) ? ND_BOOL : fts[k];
            ref_arr *want = ref_binary(bops[o], a, b, fts[k], rt);
            double tol = ndt_rtol(rt);
            ndt_check(z, want, tol, tol, NULL, "%s(special values, %s)", ref_op_name(bops[o]), ref_dtype_name(fts[k]));
            nd_free(z);
            ref_free(want);
        }
        nd_free(x);
        nd_free(y);
        ref_free(a);
        ref_free(b);
    }
}

NDT_TEST(elementwise, integer_true_division_by_zero) {
    int32_t a[4] = {5, 0, -5, 7}, b[4] = {0, 0, 0, -2};
    nd_array *x = nd_from_host(a, ND_INT32, ND_SHAPE(4)), *y = nd_from_host(b, ND_INT32, ND_SHAPE(4));
    nd_array *z = nd_div(x, y);
    double g[4];
    cr_assert_eq(nd_to_host(z, g, sizeof g), ND_OK, "%s", nd_last_error());
    cr_expect(isinf(g[0]) && g[0] > 0, "5/0 = inf, got %g", g[0]);
    cr_expect(isnan(g[1]), "0/0 = nan, got %g", g[1]);
    cr_expect(isinf(g[2]) && g[2] < 0, "-5/0 = -inf, got %g", g[2]);
    cr_expect_eq(g[3], -3.5);
    nd_free(x); nd_free(y); nd_free(z);
}

NDT_TEST(elementwise, clip_with_weak_scalars_keeps_dtype) {
    NDT_RNG(r);
    ref_arr *a = ndt_rand(&r, ND_FLOAT16, ND_SHAPE(50), -3, 3);
    nd_array *x = ndt_upload(a), *lo = nd_scalar(-1.0), *hi = nd_scalar(1.5);
    nd_array *c = nd_clip(x, lo, hi);
    ref_arr *want = ref_new(ND_FLOAT16, 1, (int64_t[]){50});
    for (int64_t i = 0; i < 50; i++) {
        double v = ref_getd(a, i);
        ref_setd(want, i, v < -1 ? -1 : v > 1.5 ? 1.5 : v);
    }
    ndt_check(c, want, 0, 0, NULL, "clip(float16, -1.0, 1.5)");
    nd_free(x); nd_free(lo); nd_free(hi); nd_free(c);
    ref_free(a); ref_free(want);
}

/* A light kernel over a large 2-d space of shifted views: on the GPU, the
 * kernel that takes several rows per thread with all loads first (2^23
 * points or more; 4099 rows leave a partial block of rows). Every output
 * point against the same sums in float64. */
NDT_TEST(elementwise, large_2d_neighbour_sum) {
    nd_scope_begin();
    NDT_RNG(r);
    const int64_t R = 4099 + 2, C = 2050 + 2;
    ref_arr *g = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(R, C), 0, 1);
    nd_array *u = ndt_upload(g);
    nd_array *s = nd_mul(nd_scalar(0.2),
                         nd_add(nd_add(nd_add(nd_add(nd_view(u, "1:-1, 1:-1"), nd_view(u, ":-2, 1:-1")),
                                              nd_view(u, "2:, 1:-1")),
                                       nd_view(u, "1:-1, :-2")),
                                nd_view(u, "1:-1, 2:")));
    cr_assert(s, "%s", nd_last_error());
    ref_arr *want = ref_new(ND_FLOAT32, 2, (int64_t[]){R - 2, C - 2});
    for (int64_t i = 1; i < R - 1; i++)
        for (int64_t j = 1; j < C - 1; j++) {
            double v = ref_getd(g, i * C + j) + ref_getd(g, (i - 1) * C + j) + ref_getd(g, (i + 1) * C + j) +
                       ref_getd(g, i * C + j - 1) + ref_getd(g, i * C + j + 1);
            ref_setd(want, (i - 1) * (C - 2) + (j - 1), 0.2 * v);
        }
    ndt_check_default(s, want, "0.2 * (5 neighbours) over 4099 x 2050");
    nd_free(u);
    nd_free(s);
    ref_free(g);
    ref_free(want);
    nd_scope_end();
}
