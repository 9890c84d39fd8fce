/* Reductions over every axis (positive, negative) and ND_ALL_AXES, 1-d..4-d,
 * contiguous and non-contiguous, every dtype; NaN propagation, first-
 * occurrence ties, empty extents. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

static nd_array *reduce(ref_red k, nd_array *a, int axis) {
    switch (k) {
    case RR_SUM: return nd_sum(a, axis);
    case RR_PROD: return nd_prod(a, axis);
    case RR_MEAN: return nd_mean(a, axis);
    case RR_MIN: return nd_min(a, axis);
    case RR_MAX: return nd_max(a, axis);
    case RR_ARGMIN: return nd_argmin(a, axis);
    case RR_ARGMAX: return nd_argmax(a, axis);
    case RR_STD: return nd_std(a, axis);
    case RR_VAR: return nd_var(a, axis);
    case RR_ANY: return nd_any(a, axis);
    default: return nd_all(a, axis);
    }
}

static ref_arr *input_for(ndt_rng *r, ref_red k, nd_dtype t, int ndim, const int64_t *shape) {
    int fl = ref_is_float(t);
    ref_arr *a;
    switch (k) {
    case RR_PROD:
        a = fl ? ndt_rand(r, t, ndim, shape, 0.7, 1.4) : ndt_rand(r, t, ndim, shape, -3, 3);
        break;
    case RR_MEAN: case RR_STD: case RR_VAR:
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 3) : ndt_rand_small(r, t, ndim, shape);
        break;
    case RR_ANY: case RR_ALL:
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 1) : ndt_rand_bits(r, t, ndim, shape);
        for (int64_t i = 0; i < a->size; i += 7) ref_setd(a, i, 0);
        break;
    case RR_SUM:
        a = fl ? ndt_rand(r, t, ndim, shape, -1, 1) : ndt_rand_bits(r, t, ndim, shape);
        break;
    default: /* min/max/arg*: ints over their whole range, float ties */
        a = fl ? ndt_rand(r, t, ndim, shape, -50, 50) : ndt_rand_bits(r, t, ndim, shape);
        if (a->size > 4) ref_cast_elem(a, a->size - 1, a, 1);
        break;
    }
    return a;
}

static void check_one(ref_red k, const ref_arr *ra, nd_array *x, int axis, const char *how) {
    nd_array *y = reduce(k, x, axis);
    double *scale = NULL;
    ref_arr *want = ref_reduce(k, ra, axis, &scale);
    double rtol = ndt_rtol(want->dt);
    char ax[16];
    if (axis == ND_ALL_AXES) snprintf(ax, sizeof ax, "ALL");
    else snprintf(ax, sizeof ax, "%d", axis);
    ndt_check(y, want, rtol, 1e-300, scale, "%s(%s %dd %s, axis=%s)", ref_red_name(k),
              ref_dtype_name(ra->dt), ra->ndim, how, ax);
    nd_free(y);
    ref_free(want);
    free(scale);
}

static void all_axes(ref_red k, const ref_arr *ra, nd_array *x, const char *how) {
    for (int ax = -ra->ndim; ax < ra->ndim; ax++) check_one(k, ra, x, ax, how);
    check_one(k, ra, x, ND_ALL_AXES, how);
}

static void check_kind(ref_red k) {
    NDT_RNG(r);
    /* every dtype on a 3-d array, every axis */
    for (int i = 0; i < NDT_NUM_DTYPES; i++) {
        ref_arr *ra = input_for(&r, k, ndt_all_dtypes[i], ND_SHAPE(3, 4, 5));
        nd_array *x = ndt_upload(ra);
        all_axes(k, ra, x, "contiguous");
        nd_free(x);
        ref_free(ra);
    }
    /* 1-d, 2-d, 4-d for a float and an int dtype */
    const nd_dtype two[2] = {ND_FLOAT32, ND_INT32};
    for (int i = 0; i < 2; i++) {
        const int64_t s1[1] = {37}, s2[2] = {5, 7}, s4[4] = {2, 3, 4, 5};
        const int64_t *shapes[3] = {s1, s2, s4};
        const int nd[3] = {1, 2, 4};
        for (int s = 0; s < 3; s++) {
            ref_arr *ra = input_for(&r, k, two[i], nd[s], shapes[s]);
            nd_array *x = ndt_upload(ra);
            all_axes(k, ra, x, "contiguous");
            nd_free(x);
            ref_free(ra);
        }
    }
    /* non-contiguous: a transpose and a strided negative-step view */
    const nd_dtype nc[2] = {ND_FLOAT64, ND_INT16};
    for (int i = 0; i < 2; i++) {
        ref_arr *ra = input_for(&r, k, nc[i], ND_SHAPE(3, 4, 5));
        nd_array *x = ndt_upload(ra);
        const int perm[3] = {2, 0, 1};
        nd_array *t = nd_transpose(x, perm);
        ref_arr *rt = ref_transpose(ra, perm);
        all_axes(k, rt, t, "transposed");
        nd_array *v = nd_view(x, "::-1, 1:, ::2");
        ref_arr *rv = ref_strided(ra, 3, (int64_t[]){3, 3, 3}, (int64_t[]){-20, 5, 2}, 45);
        all_axes(k, rv, v, "strided view");
        nd_free(t); nd_free(v); nd_free(x);
        ref_free(ra); ref_free(rt); ref_free(rv);
    }
}

NDT_TEST(reductions, sum) { check_kind(RR_SUM); }
NDT_TEST(reductions, prod) { check_kind(RR_PROD); }
NDT_TEST(reductions, mean) { check_kind(RR_MEAN); }
NDT_TEST(reductions, min) { check_kind(RR_MIN); }
NDT_TEST(reductions, max) { check_kind(RR_MAX); }
NDT_TEST(reductions, argmin) { check_kind(RR_ARGMIN); }
NDT_TEST(reductions, argmax) { check_kind(RR_ARGMAX); }
NDT_TEST(reductions, std) { check_kind(RR_STD); }
NDT_TEST(reductions, var) { check_kind(RR_VAR); }
NDT_TEST(reductions, any) { check_kind(RR_ANY); }
NDT_TEST(reductions, all) { check_kind(RR_ALL); }

NDT_TEST(reductions, nan_propagates_and_first_nan_wins) {
    const nd_dtype fts[3] = {ND_FLOAT16, ND_FLOAT32, ND_FLOAT64};
    const ref_red ks[4] = {RR_MIN, RR_MAX, RR_ARGMIN, RR_ARGMAX};
    NDT_RNG(r);
    for (int i = 0; i < 3; i++) {
        ref_arr *ra = ndt_rand(&r, fts[i], ND_SHAPE(4, 6), -5, 5);
        ref_setd(ra, 3, NAN);  /* row 0 */
        ref_setd(ra, 5, NAN);  /* row 0, a second NaN later */
        ref_setd(ra, 14, NAN); /* row 2, column 2 */
        nd_array *x = ndt_upload(ra);
        for (int k = 0; k < 4; k++) {
            check_one(ks[k], ra, x, 1, "with NaN");
            check_one(ks[k], ra, x, 0, "with NaN");
            check_one(ks[k], ra, x, ND_ALL_AXES, "with NaN");
        }
        /* sum/mean propagate NaN too */
        check_one(RR_SUM, ra, x, 1, "with NaN");
        check_one(RR_MEAN, ra, x, 0, "with NaN");
        nd_free(x);
        ref_free(ra);
    }
}

NDT_TEST(reductions, arg_ties_first_occurrence) {
    int32_t v[5] = {3, 7, 7, 1, 7};
    nd_array *x = nd_from_host(v, ND_INT32, ND_SHAPE(5));
    nd_array *am = nd_argmax(x, 0), *an = nd_argmin(x, ND_ALL_AXES);
    cr_expect_eq(nd_dtype_of(am), ND_INT64);
    cr_expect_eq(nd_item(am), 1.0, "argmax of [3,7,7,1,7] is 1, got %g", nd_item(am));
    cr_expect_eq(nd_item(an), 3.0, "argmin is 3, got %g", nd_item(an));
    float m[2][3] = {{2, 5, 5}, {2, 1, 5}};
    nd_array *y = nd_from_host(m, ND_FLOAT32, ND_SHAPE(2, 3));
    nd_array *a0 = nd_argmax(y, 0), *a1 = nd_argmax(y, -1);
    int64_t g0[3], g1[2];
    cr_assert_eq(nd_to_host(a0, g0, sizeof g0), ND_OK, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(a1, g1, sizeof g1), ND_OK, "%s", nd_last_error());
    cr_expect(g0[0] == 0 && g0[1] == 0 && g0[2] == 0, "axis 0 ties: %lld %lld %lld",
              (long long)g0[0], (long long)g0[1], (long long)g0[2]);
    cr_expect(g1[0] == 1 && g1[1] == 2, "axis 1: %lld %lld", (long long)g1[0], (long long)g1[1]);
    nd_free(x); nd_free(am); nd_free(an); nd_free(y); nd_free(a0); nd_free(a1);
}

NDT_TEST(reductions, empty_extents) {
    nd_array *e = nd_ones(ND_FLOAT32, ND_SHAPE(0, 3));
    float f3[3];
    nd_array *s = nd_sum(e, 0), *p = nd_prod(e, 0), *m = nd_mean(e, 0);
    cr_assert(s && p && m, "%s", nd_last_error());
    cr_assert_eq(nd_to_host(s, f3, sizeof f3), ND_OK, "%s", nd_last_error());
    cr_expect(f3[0] == 0 && f3[1] == 0 && f3[2] == 0, "sum over an empty axis is 0");
    cr_assert_eq(nd_to_host(p, f3, sizeof f3), ND_OK, "%s", nd_last_error());
    cr_expect(f3[0] == 1 && f3[1] == 1 && f3[2] == 1, "prod over an empty axis is 1");
    cr_assert_eq(nd_to_host(m, f3, sizeof f3), ND_OK, "%s", nd_last_error());
    cr_expect(isnan(f3[0]) && isnan(f3[2]), "mean over an empty axis is NaN");
    nd_array *an = nd_any(e, 0), *al = nd_all(e, 0);
    bool b3[3];
    cr_assert_eq(nd_to_host(an, b3, sizeof b3), ND_OK, "%s", nd_last_error());
    cr_expect(!b3[0] && !b3[1] && !b3[2], "any over an empty axis is false");
    cr_assert_eq(nd_to_host(al, b3, sizeof b3), ND_OK, "%s", nd_last_error());
    cr_expect(b3[0] && b3[1] && b3[2], "all over an empty axis is true");
    nd_array *s1 = nd_sum(e, 1), *mn1 = nd_min(e, 1), *sa = nd_sum(e, ND_ALL_AXES);
    cr_assert(s1 && mn1 && sa, "%s", nd_last_error());
    cr_expect(nd_ndim(s1) == 1 && nd_shape(s1)[0] == 0, "sum over a full axis of (0,3) is (0,)");
    cr_expect(nd_ndim(mn1) == 1 && nd_shape(mn1)[0] == 0);
    cr_expect_eq(nd_item(sa), 0.0);
    nd_clear_error();
    cr_expect_null(nd_min(e, 0), "min over an empty axis is an error");
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_min");
    cr_expect_null(nd_argmax(e, ND_ALL_AXES), "argmax of an empty array is an error");
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_argmax");
    cr_expect_null(nd_max(e, 0), "max over an empty axis is an error");
    NDT_EXPECT_ERR(ND_ERR_SHAPE, "nd_max");
    nd_free(e); nd_free(s); nd_free(p); nd_free(m); nd_free(an); nd_free(al);
    nd_free(s1); nd_free(mn1); nd_free(sa);
}

NDT_TEST(reductions, large_sum_is_accurate) {
    NDT_RNG(r);
    int64_t n = 1 << 20;
    ref_arr *ra = ndt_rand(&r, ND_FLOAT32, 1, &n, 0, 1);
    nd_array *x = ndt_upload(ra);
    nd_array *s = nd_sum(x, 0), *m = nd_mean(x, ND_ALL_AXES), *mx = nd_max(x, 0);
    double *sc;
    ref_arr *ws = ref_reduce(RR_SUM, ra, 0, &sc);
    /* NumPy sums float32 pairwise; a naive float32 loop is off by ~1e-2 here */
    ndt_check(s, ws, 1e-5, 0, NULL, "sum of 2^20 float32");
    ref_arr *wm = ref_reduce(RR_MEAN, ra, ND_ALL_AXES, NULL);
    ndt_check(m, wm, 1e-5, 0, NULL, "mean of 2^20 float32");
    ref_arr *wx = ref_reduce(RR_MAX, ra, 0, NULL);
    ndt_check(mx, wx, 0, 0, NULL, "max of 2^20 float32");
    nd_free(x); nd_free(s); nd_free(m); nd_free(mx);
    ref_free(ra); ref_free(ws); ref_free(wm); ref_free(wx);
    free(sc);
}

NDT_TEST(reductions, of_lazy_expression) {
    /* a reduction consuming a fused elementwise chain */
    NDT_RNG(r);
    ref_arr *ra = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 9), -2, 2);
    nd_array *x = ndt_upload(ra);
    nd_array *sq = nd_square(x), *e = nd_add(sq, x), *s = nd_sum(e, 1), *mx = nd_max(e, 0);
    ref_arr *rs = ref_unary(R_SQUARE, ra, ND_FLOAT64, ND_FLOAT64);
    ref_arr *re = ref_binary(R_ADD, rs, ra, ND_FLOAT64, ND_FLOAT64);
    double *sc;
    ref_arr *ws = ref_reduce(RR_SUM, re, 1, &sc), *wx = ref_reduce(RR_MAX, re, 0, NULL);
    ndt_check(s, ws, 1e-12, 0, sc, "sum(x^2 + x, 1)");
    /* x*x + x may run as one fused multiply-add on CUDA (one rounding fewer,
     * the code generator's choice for fused chains): within 2 ulp. */
    ndt_check(mx, wx, 5e-16, 0, NULL, "max(x^2 + x, 0)");
    nd_free(x); nd_free(sq); nd_free(e); nd_free(s); nd_free(mx);
    ref_free(ra); ref_free(rs); ref_free(re); ref_free(ws); ref_free(wx);
    free(sc);
}

/* A sum of a mask cast to a number, the Monte Carlo count (CUDA counts the
 * bools in integers: codegen_reduce.c): exact counts along rows, columns
 * and all axes, for float64, float32 and int64 casts. */
NDT_TEST(reductions, counts_of_a_cast_mask_are_exact) {
    NDT_RNG(r);
    static const int64_t shapes[3][2] = {{3, 70001}, {70001, 3}, {301, 1001}};
    static const nd_dtype casts[3] = {ND_FLOAT64, ND_FLOAT32, ND_INT64};
    for (int s = 0; s < 3; s++) {
        const int64_t R = shapes[s][0], C = shapes[s][1];
        ref_arr *ra = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(R, C), -1, 1);
        const double t = ndt_uniform(&r, -0.5, 0.5);
        nd_array *x = ndt_upload(ra);
        for (int c = 0; c < 3; c++)
            for (int axis = -1; axis < 2; axis++) {
                const int ax = axis < 0 ? ND_ALL_AXES : axis;
                nd_scope_begin();
                nd_array *n = nd_keep(nd_sum(nd_astype(nd_lt(x, nd_scalar(t)), casts[c]), ax));
                nd_scope_end();
                const int64_t out_len = axis < 0 ? 1 : axis == 0 ? C : R;
                ref_arr *want = axis < 0 ? ref_new(casts[c], 0, NULL) : ref_new(casts[c], 1, &out_len);
                for (int64_t i = 0; i < R; i++)
                    for (int64_t j = 0; j < C; j++)
                        if (ref_getd(ra, i * C + j) < t) {
                            int64_t o = axis < 0 ? 0 : axis == 0 ? j : i;
                            ref_setd(want, o, ref_getd(want, o) + 1);
                        }
                ndt_check(n, want, 0, 0, NULL, "sum(astype(x < t, %s), axis=%d) over %lldx%lld",
                          ref_dtype_name(casts[c]), axis, (long long)R, (long long)C);
                nd_free(n);
                ref_free(want);
            }
        nd_free(x);
        ref_free(ra);
    }
}

/* Integer and bool mean/var/std accumulate in float64 as NumPy (np.mean's
 * dtype='f8'), so values near the dtype limits do not wrap: int64
 * nanosecond timestamps (~1.7e18: an int64 sum of five wraps),
 * [UINT64_MAX, 1] (an int sum wraps to 0), INT64_MIN/MAX and every bit
 * random. Reference: exact values summed in long double. */
static long double elem_ld(const ref_arr *a, int64_t i) {
    uint64_t u = ref_getu(a, i);
    if (a->dt == ND_BOOL) return u != 0;
    return ref_is_signed(a->dt) ? (long double)(int64_t)u : (long double)u;
}

/* mean, var and std of a (rows x cols) along axis (0, 1 or ND_ALL_AXES),
 * with scales for the tolerance: mean |x|, mean x^2 and its root. */
static void int_moments_ref(const ref_arr *a, int axis, ref_arr *mean, ref_arr *var, ref_arr *sd,
                            double *s_mean, double *s_var, double *s_sd) {
    const int64_t R = a->shape[0], C = a->shape[1];
    const int64_t nout = axis == ND_ALL_AXES ? 1 : axis == 0 ? C : R;
    const int64_t n = axis == ND_ALL_AXES ? R * C : axis == 0 ? R : C;
    for (int64_t o = 0; o < nout; o++) {
        long double s = 0, sa = 0, s2 = 0, d2 = 0;
        for (int64_t k = 0; k < n; k++) {
            int64_t i = axis == ND_ALL_AXES ? k : axis == 0 ? k * C + o : o * C + k;
            long double x = elem_ld(a, i);
            s += x;
            sa += fabsl(x);
            s2 += x * x;
        }
        long double mu = s / n;
        for (int64_t k = 0; k < n; k++) {
            int64_t i = axis == ND_ALL_AXES ? k : axis == 0 ? k * C + o : o * C + k;
            long double d = elem_ld(a, i) - mu;
            d2 += d * d;
        }
        ref_setd(mean, o, (double)mu);
        ref_setd(var, o, (double)(d2 / n));
        ref_setd(sd, o, (double)sqrtl(d2 / n));
        s_mean[o] = (double)(sa / n);
        s_var[o] = (double)(s2 / n);
        s_sd[o] = (double)sqrtl(s2 / n);
    }
}

NDT_TEST(reductions, integer_moments_accumulate_in_float64) {
    NDT_RNG(r);
    static const nd_dtype ints[] = {ND_BOOL, ND_INT8, ND_INT16, ND_INT32, ND_INT64,
                                    ND_UINT8, ND_UINT16, ND_UINT32, ND_UINT64};
    for (size_t d = 0; d < sizeof ints / sizeof ints[0]; d++) {
        const nd_dtype t = ints[d];
        for (int kind = 0; kind < 3; kind++) {
            /* 0: every bit random; 1: the dtype's limits; 2: timestamps */
            if (kind == 2 && t != ND_INT64 && t != ND_UINT64) continue;
            ref_arr *a = ndt_rand_bits(&r, t, ND_SHAPE(5, 7));
            for (int64_t i = 0; kind > 0 && i < a->size; i++) {
                uint64_t v;
                if (kind == 2) {
                    v = 1700000000000000000ull + (uint64_t)ndt_int(&r, 0, 1000000000000000ll);
                } else {
                    /* lo or hi of the range, or one inside it */
                    const int pick = (int)ndt_int(&r, 0, 2);
                    const int bits = (int)ref_itemsize(t) * 8;
                    const uint64_t umax = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
                    if (t == ND_BOOL) v = (uint64_t)pick & 1u;
                    else if (ref_is_unsigned(t)) v = pick == 0 ? umax : pick == 1 ? umax - 1 : 1;
                    else v = pick == 0 ? (uint64_t)1 << (bits - 1) /* min */
                                       : pick == 1 ? (umax >> 1) /* max */ : (uint64_t)-1;
                }
                ref_setu(a, i, v);
            }
            nd_array *x = ndt_upload(a);
            const int axes[3] = {0, 1, ND_ALL_AXES};
            for (int k = 0; k < 3; k++) {
                const int ax = axes[k];
                const int64_t len = ax == 0 ? 7 : 5;
                const int ond = ax == ND_ALL_AXES ? 0 : 1;
                ref_arr *wm = ref_new(ND_FLOAT64, ond, &len), *wv = ref_new(ND_FLOAT64, ond, &len),
                        *ws = ref_new(ND_FLOAT64, ond, &len);
                double sm[8], sv[8], ss[8];
                int_moments_ref(a, ax, wm, wv, ws, sm, sv, ss);
                nd_array *m = nd_mean(x, ax), *v = nd_var(x, ax), *s = nd_std(x, ax);
                ndt_check(m, wm, 1e-13, 0, sm, "mean(%s kind %d, axis %d)", ref_dtype_name(t), kind, ax);
                ndt_check(v, wv, 1e-12, 0, sv, "var(%s kind %d, axis %d)", ref_dtype_name(t), kind, ax);
                ndt_check(s, ws, 1e-12, 0, ss, "std(%s kind %d, axis %d)", ref_dtype_name(t), kind, ax);
                nd_free(m); nd_free(v); nd_free(s);
                ref_free(wm); ref_free(wv); ref_free(ws);
            }
            nd_free(x);
            ref_free(a);
        }
    }
}

/* The issue's repros, exactly: int64 timestamps and uint64 [2^64-1, 1]. */
NDT_TEST(reductions, integer_mean_issue_repros) {
    nd_scope_begin();
    const int64_t ts[5] = {1700000000000000000, 1700000000000000000, 1700000000000000000,
                           1700000000000000000, 1700000000000000001};
    nd_array *x = nd_from_host(ts, ND_INT64, ND_SHAPE(5));
    nd_array *m = nd_mean(x, ND_ALL_AXES);
    cr_expect_eq(nd_dtype_of(m), ND_FLOAT64);
    double got = nd_item(m);
    cr_expect(fabs(got - 1.7e18) <= 1e3, "mean of timestamps %.17g, NumPy 1.7e18", got);
    const uint64_t u[2] = {UINT64_MAX, 1};
    nd_array *y = nd_from_host(u, ND_UINT64, ND_SHAPE(2));
    double gu = nd_item(nd_mean(y, 0));
    cr_expect_eq(gu, 9223372036854775808.0, "mean([2^64-1, 1]) = %.17g, NumPy 9.223372036854776e18", gu);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    /* The float64 cast fuses into the reduction's kernel: an int64 mean runs
     * as many kernels as a float64 one. */
    unsigned long long kernels[2];
    for (int f = 0; f < 2; f++) {
        nd_array *in = f ? nd_astype(x, ND_FLOAT64) : x;
        cr_assert_eq(nd_sync(), ND_OK);
        nd_stats s0, s1;
        nd_get_stats(&s0);
        nd_array *mx = nd_mean(in, 0);
        cr_assert_eq(nd_sync(), ND_OK);
        nd_get_stats(&s1);
        kernels[f] = (unsigned long long)(NDT_KERNELS(s1) - NDT_KERNELS(s0));
        nd_free(mx);
        if (f) nd_free(in);
    }
    cr_expect_eq(kernels[0], kernels[1], "mean of int64 ran %llu kernels, of float64 %llu",
                 kernels[0], kernels[1]);
    nd_scope_end();
}

/* Result dtypes of NumPy 2 for every integer dtype and bool, along an axis
 * and over all axes: sum/prod widen to int64/uint64, mean/var/std are
 * float64, min/max keep the dtype. */
NDT_TEST(reductions, integer_result_dtypes_as_numpy) {
    static const nd_dtype ints[] = {ND_BOOL, ND_INT8, ND_INT16, ND_INT32, ND_INT64,
                                    ND_UINT8, ND_UINT16, ND_UINT32, ND_UINT64};
    for (size_t d = 0; d < sizeof ints / sizeof ints[0]; d++) {
        const nd_dtype t = ints[d];
        const nd_dtype wide = ref_is_unsigned(t) ? ND_UINT64 : ND_INT64;
        nd_array *x = nd_ones(t, ND_SHAPE(2, 3));
        for (int k = 0; k < 2; k++) {
            const int ax = k ? ND_ALL_AXES : 1;
            nd_array *got[6] = {nd_sum(x, ax), nd_prod(x, ax), nd_mean(x, ax),
                                nd_var(x, ax), nd_std(x, ax), nd_max(x, ax)};
            const nd_dtype want[6] = {wide, wide, ND_FLOAT64, ND_FLOAT64, ND_FLOAT64, t};
            for (int i = 0; i < 6; i++) {
                cr_expect_eq(nd_dtype_of(got[i]), want[i], "op %d of %s axis %d: %s, NumPy %s", i,
                             nd_dtype_name(t), ax, nd_dtype_name(nd_dtype_of(got[i])),
                             nd_dtype_name(want[i]));
                nd_free(got[i]);
            }
        }
        nd_free(x);
    }
}

/* The CPU pool hands out work items to whichever worker asks first; each
 * item's partial result lands in its own slot and the slots are combined in
 * item order, so the bits cannot depend on how many workers there are or
 * which one ran what. Checked for 1, 2, 3 and 7 workers on sizes no worker
 * count divides (several work items each, so the pool takes part), over
 * every axis, for sums of floats (compensated), means, variances, extrema
 * and their indices, and a sum of a fused expression (-x); each result is also
 * checked against the float64 reference, so the first run is not merely
 * compared with itself. */
NDT_TEST(reductions, same_bits_for_every_thread_count) {
    if (ndt_backend_is_cuda()) cr_skip_test("worker counts are the CPU backend's");
    NDT_RNG(r);
#ifdef NDT_TSAN
    /* Under ThreadSanitizer, 1 and 7 threads only: the four counts took 88 s
     * there, the longest test of the CI stage; the release and sanitised
     * builds run all four. */
    static const int threads[] = {1, 7};
    /* and two shapes, a row and a matrix reduced along either axis (60 s
     * with the row of a million on the 2-core VM; 46 s with all four
     * smaller ones) */
    static const int64_t shapes[][2] = {{1, 98321}, {331, 997}};
#elif defined(NDT_ASAN)
    /* Under AddressSanitizer every count but without the row of a million
     * (most of this test's 25 s in CI's ASan stage): it is 31 work items of
     * ND_CPU_WORK against the 98321 row's 4, whose partials the same code
     * sizes and indexes. */
    static const int threads[] = {1, 2, 3, 7};
    static const int64_t shapes[][2] = {{1, 98321}, {5, 65539}, {65539, 5}, {331, 997}};
#else
    static const int threads[] = {1, 2, 3, 7};
    static const int64_t shapes[][2] = {{1, 98321}, {1, 1000003}, {5, 65539}, {65539, 5}, {331, 997}};
#endif
    enum { N_RUNS = sizeof threads / sizeof threads[0] };
    static const nd_dtype dtypes[] = {ND_FLOAT32, ND_FLOAT64, ND_INT32};
    static const ref_red kinds[] = {RR_SUM, RR_MEAN, RR_VAR, RR_MIN, RR_ARGMAX};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++) {
            int ndim = shapes[si][0] == 1 ? 1 : 2;
            const int64_t *shape = ndim == 1 ? &shapes[si][1] : shapes[si];
            ref_arr *ra = ndt_rand(&r, dtypes[di], ndim, shape, -3, 5);
            ref_arr *rneg = ref_unary(R_NEG, ra, dtypes[di], dtypes[di]);
            /* kinds, then a sum of a fused producer: sum(-x) */
            for (size_t ki = 0; ki <= sizeof kinds / sizeof kinds[0]; ki++)
                for (int axis = -1; axis < ndim; axis++) {
                    int ax = axis < 0 ? ND_ALL_AXES : axis;
                    int fused = ki == sizeof kinds / sizeof kinds[0];
                    ref_red kind = fused ? RR_SUM : kinds[ki];
                    ref_arr *got[N_RUNS] = {NULL};
                    for (int t = 0; t < N_RUNS; t++) {
                        ndt_restart(&(nd_config){.num_threads = threads[t]});
                        nd_array *x = ndt_upload(ra);
                        nd_array *nx = fused ? nd_neg(x) : NULL;
                        nd_array *y = reduce(kind, fused ? nx : x, ax);
                        nd_free(nx);
                        cr_assert(y, "%s", nd_last_error());
                        char what[160];
                        snprintf(what, sizeof what, "%s%s of %s %lldx%lld, axis %d, %d threads",
                                 ref_red_name(kind), fused ? " (of -x, fused)" : "", nd_dtype_name(dtypes[di]),
                                 (long long)shapes[si][0], (long long)shapes[si][1], axis, threads[t]);
                        if (t == 0) {
                            double *sc = NULL;
                            ref_arr *want = ref_reduce(kind, fused ? rneg : ra, ax, &sc);
                            /* the reference sums in plain double: over a million
                             * elements its own error passes ndt_rtol */
                            int64_t count = ax == ND_ALL_AXES ? ra->size : shape[ax];
                            double rtol = ndt_rtol(want->dt) * (count > 65536 ? 64 : 1);
                            ndt_check(y, want, rtol, 1e-300, sc, "%s", what);
                            ref_free(want);
                            free(sc);
                        }
                        got[t] = ndt_download(y);
                        nd_free(y);
                        nd_free(x);
                        if (t == 0) continue;
                        size_t bytes = (size_t)got[0]->size * nd_dtype_size(got[0]->dt);
                        cr_assert_eq(got[t]->size, got[0]->size, "%s: size", what);
                        cr_expect(memcmp(got[t]->data, got[0]->data, bytes) == 0,
                                  "%s: not the bits of 1 thread", what);
                    }
                    for (int t = 0; t < N_RUNS; t++) ref_free(got[t]);
                }
            ref_free(rneg);
            ref_free(ra);
        }
}
