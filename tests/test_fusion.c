/* Fusion and plan-cache edge cases: views of unmaterialised values, shared
 * intermediates, random draws seen through views and broadcasts, writes into
 * lazy arrays, and plans that must not be reused for other shapes, offsets
 * or dtypes. */
#include "common.h"

NDT_TEST(fusion, views_of_lazy_values) {
    nd_scope_begin();
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT64, ND_SHAPE(6, 7), -2, 2);
    nd_array *x = ndt_upload(rx);
    nd_array *e = nd_exp(x);
    nd_array *v = nd_view(e, "::-2, 1::3");        /* (3,2) view of a lazy value */
    nd_array *t = nd_transpose(e, NULL);           /* (7,6) */
    nd_array *a = nd_add(v, nd_scalar(1.0));
    nd_array *m = nd_matmul(t, nd_view(x, ":, :2")); /* (7,6)@(6,2) */
    nd_free(e);                                     /* only views keep it alive */
    ref_arr *re = ref_unary(R_EXP, rx, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rv = ref_strided(re, 2, (int64_t[]){3, 2}, (int64_t[]){-14, 3}, 36);
    ref_arr *one = ref_new(ND_FLOAT64, 0, NULL);
    ref_setd(one, 0, 1);
    ref_arr *ra = ref_binary(R_ADD, rv, one, ND_FLOAT64, ND_FLOAT64);
    ref_arr *rt = ref_transpose(re, NULL);
    ref_arr *rx2 = ref_strided(rx, 2, (int64_t[]){6, 2}, (int64_t[]){7, 1}, 0);
    double *sc;
    ref_arr *rm = ref_matmul(rt, rx2, ND_FLOAT64, &sc);
    ndt_check(v, rv, 1e-12, 0, NULL, "view of exp(x)");
    ndt_check(a, ra, 1e-12, 0, NULL, "view of exp(x) + 1");
    ndt_check(m, rm, 1e-12, 1e-300, sc, "exp(x).T @ x[:, :2]");
    nd_free(x); nd_free(v); nd_free(t); nd_free(a); nd_free(m);
    ref_free(rx); ref_free(re); ref_free(rv); ref_free(one); ref_free(ra); ref_free(rt);
    ref_free(rx2); ref_free(rm);
    free(sc);
    nd_scope_end();
}

NDT_TEST(fusion, shared_intermediate_two_consumers) {
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(40, 33), -1, 1);
    nd_array *x = ndt_upload(rx);
    nd_array *s = nd_square(x);                 /* shared */
    nd_array *a = nd_sum(s, 0), *b = nd_add(s, x), *c = nd_max(s, ND_ALL_AXES);
    nd_free(s);
    ref_arr *rs = ref_unary(R_SQUARE, rx, ND_FLOAT32, ND_FLOAT32);
    double *sc;
    ref_arr *wa = ref_reduce(RR_SUM, rs, 0, &sc);
    ref_arr *wb = ref_binary(R_ADD, rs, rx, ND_FLOAT32, ND_FLOAT32);
    ref_arr *wc = ref_reduce(RR_MAX, rs, ND_ALL_AXES, NULL);
    ndt_check(a, wa, 1e-5, 1e-300, sc, "sum(x^2, 0)");
    ndt_check(b, wb, 1e-6, 1e-7, NULL, "x^2 + x");
    ndt_check(c, wc, 0, 0, NULL, "max(x^2)");
    nd_free(x); nd_free(a); nd_free(b); nd_free(c);
    ref_free(rx); ref_free(rs); ref_free(wa); ref_free(wb); ref_free(wc);
    free(sc);
}

NDT_TEST(fusion, random_values_belong_to_the_random_array) {
    /* a draw seen through a view or broadcast keeps the random array's own
     * element indices (not the consumer's) */
    nd_scope_begin();
    nd_random_seed(99);
    nd_array *u = nd_random_uniform(ND_FLOAT64, ND_SHAPE(10, 12), 0, 1);
    nd_array *v = nd_view(u, "::-1, 2");
    nd_array *w = nd_add(nd_view(u, "3:5, ::4"), nd_scalar(0.0));
    nd_array *row = nd_random_uniform(ND_FLOAT32, ND_SHAPE(1, 5), 0, 1);
    nd_array *bc = nd_add(row, nd_zeros(ND_FLOAT32, ND_SHAPE(4, 5)));
    ref_arr *gv = ndt_download(v), *gw = ndt_download(w), *gbc = ndt_download(bc);
    ref_arr *gu = ndt_download(u), *grow = ndt_download(row);
    ref_arr *wv = ref_strided(gu, 1, (int64_t[]){10}, (int64_t[]){-12}, 110);
    ref_arr *ww = ref_strided(gu, 2, (int64_t[]){2, 3}, (int64_t[]){12, 4}, 36);
    for (int64_t i = 0; i < 10; i++) cr_expect_eq(ref_getd(gv, i), ref_getd(wv, i), "u[::-1, 2][%lld]", (long long)i);
    for (int64_t i = 0; i < 6; i++) cr_expect_eq(ref_getd(gw, i), ref_getd(ww, i), "u[3:5, ::4][%lld]", (long long)i);
    for (int64_t i = 0; i < 20; i++) cr_expect_eq(ref_getd(gbc, i), ref_getd(grow, i % 5), "broadcast row [%lld]", (long long)i);
    /* drawn again with the same seed but read only through a view */
    nd_random_seed(99);
    nd_array *u2 = nd_random_uniform(ND_FLOAT64, ND_SHAPE(10, 12), 0, 1);
    nd_array *v2 = nd_view(u2, "::-1, 2");
    nd_free(u2);
    ref_arr *gv2 = ndt_download(v2);
    for (int64_t i = 0; i < 10; i++) cr_expect_eq(ref_getd(gv2, i), ref_getd(wv, i), "view-only draw [%lld]", (long long)i);
    nd_free(u); nd_free(v); nd_free(w); nd_free(row); nd_free(bc); nd_free(v2);
    ref_free(gv); ref_free(gw); ref_free(gbc); ref_free(gu); ref_free(grow); ref_free(wv);
    ref_free(ww); ref_free(gv2);
    nd_scope_end();
}

NDT_TEST(fusion, writes_into_lazy_arrays) {
    nd_scope_begin();
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_INT32, ND_SHAPE(4, 6), -50, 50);
    nd_array *x = ndt_upload(rx);
    nd_array *y = nd_mul(x, nd_scalar_int(2));                  /* lazy */
    nd_array *y0 = nd_view(y, "1");
    cr_assert_eq(nd_fill(y0, 7), ND_OK, "%s", nd_last_error());  /* write into it */
    nd_array *z = nd_add(y, x);                                  /* reads the written y */
    cr_assert_eq(nd_assign(nd_view(x, ":, 0"), nd_view(y, ":, 5")), ND_OK, "%s", nd_last_error());
    ref_arr *wy = ref_new(ND_INT32, 2, rx->shape), *wz = ref_new(ND_INT32, 2, rx->shape), *wx = ref_astype(rx, ND_INT32);
    for (int64_t i = 0; i < 24; i++) {
        int64_t yv = i / 6 == 1 ? 7 : 2 * (int64_t)ref_getd(rx, i);
        ref_setd(wy, i, (double)yv);
        ref_setd(wz, i, (double)(yv + (int64_t)ref_getd(rx, i)));
    }
    for (int i = 0; i < 4; i++) ref_setd(wx, i * 6, ref_getd(wy, i * 6 + 5));
    ndt_check(y, wy, 0, 0, NULL, "y after y[1] = 7");
    ndt_check(z, wz, 0, 0, NULL, "y + x recorded after the write");
    ndt_check(x, wx, 0, 0, NULL, "x[:, 0] = y[:, 5]");
    nd_free(x); nd_free(y); nd_free(y0); nd_free(z);
    ref_free(rx); ref_free(wy); ref_free(wz); ref_free(wx);
    nd_scope_end();
}

NDT_TEST(fusion, shifted_read_inside_expression) {
    /* c[1:] = c[:-1] * 2 + c[1:]: the right-hand side reads the old c */
    nd_scope_begin();
    double h[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    nd_array *c = nd_from_host(h, ND_FLOAT64, ND_SHAPE(9));
    nd_array *lo = nd_view(c, ":-1"), *hi = nd_view(c, "1:");
    nd_array *rhs = nd_add(nd_mul(lo, nd_scalar(2.0)), hi);
    cr_assert_eq(nd_assign(hi, rhs), ND_OK, "%s", nd_last_error());
    nd_array *same = nd_mul(c, nd_scalar(3.0));
    cr_assert_eq(nd_assign(c, same), ND_OK, "%s", nd_last_error()); /* x[:] = 3x */
    double got[9], want[9];
    want[0] = h[0];
    for (int i = 1; i < 9; i++) want[i] = 2 * h[i - 1] + h[i];
    for (int i = 0; i < 9; i++) want[i] *= 3;
    cr_assert_eq(nd_to_host(c, got, sizeof got), ND_OK, "%s", nd_last_error());
    for (int i = 0; i < 9; i++) cr_expect_eq(got[i], want[i], "c[%d] = %g, want %g", i, got[i], want[i]);
    nd_free(c); nd_free(lo); nd_free(hi); nd_free(rhs); nd_free(same);
    nd_scope_end();
}

/* One structure, run over different shapes, offsets and dtypes: a plan reused
 * for the wrong one would give wrong values. */
static void graph_over(ndt_rng *r, nd_dtype t, int64_t n, const char *index) {
    ref_arr *rx = ndt_rand(r, t, 2, (int64_t[]){4, n}, -3, 3);
    nd_scope_begin();
    nd_array *x = ndt_upload(rx);
    nd_array *v = nd_view(x, index);
    nd_array *y = nd_sum(nd_mul(nd_add(v, v), v), 1);
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error());
    int64_t off = 0, len = n - 1;
    if (strstr(index, "1:")) off = 1; /* ":, 1:" starts at column 1 */
    ref_arr *rv = ref_strided(rx, 2, (int64_t[]){4, len}, (int64_t[]){n, 1}, off);
    ref_arr *s = ref_binary(R_ADD, rv, rv, t, t), *p = ref_binary(R_MUL, s, rv, t, t);
    double *sc;
    ref_arr *want = ref_reduce(RR_SUM, p, 1, &sc);
    ndt_check(y, want, ndt_rtol(want->dt), 1e-300, sc, "sum((v+v)*v, 1) over x[%s], n=%lld, %s", index,
              (long long)n, ref_dtype_name(t));
    nd_free(x); nd_free(v); nd_free(y);
    nd_scope_end();
    ref_free(rx); ref_free(rv); ref_free(s); ref_free(p); ref_free(want);
    free(sc);
}

NDT_TEST(fusion, plans_are_not_reused_for_other_shapes_offsets_dtypes) {
    NDT_RNG(r);
    graph_over(&r, ND_FLOAT32, 16, ":, 1:");
    graph_over(&r, ND_FLOAT32, 16, ":, 1:");
    graph_over(&r, ND_FLOAT32, 16, ":, :-1");
    graph_over(&r, ND_FLOAT32, 17, ":, :-1");
    graph_over(&r, ND_FLOAT64, 17, ":, :-1");
    graph_over(&r, ND_INT16, 17, ":, :-1");
    graph_over(&r, ND_FLOAT32, 1000, ":, 1:");
}

NDT_TEST(fusion, large_noncontiguous_reductions) {
    /* big enough for several tiles / thread blocks along each axis */
    NDT_RNG(r);
    ref_arr *rx = ndt_rand(&r, ND_FLOAT32, ND_SHAPE(301, 517), -1, 1);
    ref_setd(rx, 300 * 517 + 516, 7);   /* the max, in the last tile */
    ref_setd(rx, 5 * 517 + 3, 7);       /* and a tie earlier: argmax is the first */
    nd_array *x = ndt_upload(rx);
    nd_array *t = nd_transpose(x, NULL);
    nd_array *s0 = nd_sum(t, 0), *s1 = nd_sum(t, 1), *am = nd_argmax(t, ND_ALL_AXES), *mn = nd_min(x, 0);
    ref_arr *rt = ref_transpose(rx, NULL);
    double *c0, *c1;
    ref_arr *w0 = ref_reduce(RR_SUM, rt, 0, &c0), *w1 = ref_reduce(RR_SUM, rt, 1, &c1);
    ref_arr *wam = ref_reduce(RR_ARGMAX, rt, ND_ALL_AXES, NULL), *wmn = ref_reduce(RR_MIN, rx, 0, NULL);
    ndt_check(s0, w0, 1e-5, 1e-300, c0, "sum(x.T, 0) of (517,301)");
    ndt_check(s1, w1, 1e-5, 1e-300, c1, "sum(x.T, 1) of (517,301)");
    ndt_check(am, wam, 0, 0, NULL, "argmax(x.T) with a tie");
    ndt_check(mn, wmn, 0, 0, NULL, "min(x, 0)");
    nd_free(x); nd_free(t); nd_free(s0); nd_free(s1); nd_free(am); nd_free(mn);
    ref_free(rx); ref_free(rt); ref_free(w0); ref_free(w1); ref_free(wam); ref_free(wmn);
    free(c0); free(c1);
}

/* Abramowitz-Stegun normal CDF: d is used three times inside it. */
static nd_array *as_cnd(nd_array *d) {
    nd_array *k = nd_div(nd_scalar(1.0), nd_add(nd_scalar(1.0), nd_mul(nd_scalar(0.2316419), nd_abs(d))));
    nd_array *poly = nd_mul(k, nd_add(nd_scalar(0.31938153), nd_mul(k, nd_add(nd_scalar(-0.356563782),
                     nd_mul(k, nd_add(nd_scalar(1.781477937), nd_mul(k, nd_add(nd_scalar(-1.821255978),
                     nd_mul(k, nd_scalar(1.330274429))))))))));
    nd_array *w = nd_mul(nd_mul(nd_scalar(0.3989422804014327), nd_exp(nd_mul(nd_scalar(-0.5), nd_square(d)))), poly);
    return nd_where(nd_gt(d, nd_scalar(0.0)), nd_sub(nd_scalar(1.0), w), w);
}

static double as_cnd_ref(double d) {
    double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double w = 0.3989422804014327 * exp(-0.5 * d * d) *
               (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
    return d > 0 ? 1.0 - w : w;
}

/* Values reused inside larger expressions (d1 feeds both CNDs and d2) are
 * computed once per element, not written to memory: Black-Scholes call and
 * put must be one kernel with nothing but its two outputs stored. */
NDT_TEST(fusion, reused_values_stay_in_one_kernel) {
    const int64_t n = 1000;
    float hs[1000], hx[1000], ht[1000], call[1000], put[1000];
    NDT_RNG(r);
    for (int64_t i = 0; i < n; i++) {
        hs[i] = (float)ndt_uniform(&r, 5, 30);
        hx[i] = (float)ndt_uniform(&r, 1, 100);
        ht[i] = (float)ndt_uniform(&r, 0.25, 10);
    }
    nd_array *S = nd_from_host(hs, ND_FLOAT32, ND_SHAPE(n)), *X = nd_from_host(hx, ND_FLOAT32, ND_SHAPE(n)),
             *T = nd_from_host(ht, ND_FLOAT32, ND_SHAPE(n));
    cr_assert(nd_sync() == ND_OK, "%s", nd_last_error());
    nd_stats before, after;
    nd_get_stats(&before);
    nd_scope_begin();
    nd_array *sqrtT = nd_sqrt(T);
    nd_array *d1 = nd_div(nd_add(nd_log(nd_div(S, X)), nd_mul(nd_scalar(0.02 + 0.5 * 0.09), T)),
                          nd_mul(nd_scalar(0.3), sqrtT));
    nd_array *d2 = nd_sub(d1, nd_mul(nd_scalar(0.3), sqrtT));
    nd_array *c1 = as_cnd(d1), *c2 = as_cnd(d2);
    nd_array *xexp = nd_mul(X, nd_exp(nd_mul(nd_scalar(-0.02), T)));
    nd_array *c = nd_keep(nd_sub(nd_mul(S, c1), nd_mul(xexp, c2)));
    nd_array *p = nd_keep(nd_sub(nd_mul(xexp, nd_sub(nd_scalar(1.0), c2)), nd_mul(S, nd_sub(nd_scalar(1.0), c1))));
    nd_scope_end();
    cr_assert(nd_sync() == ND_OK, "%s", nd_last_error());
    nd_get_stats(&after);
    cr_expect_eq(NDT_KERNELS(after) - NDT_KERNELS(before), 1, "call and put took %llu kernels",
                 (unsigned long long)(NDT_KERNELS(after) - NDT_KERNELS(before)));
    cr_expect_eq(NDT_TEMPS(after) - NDT_TEMPS(before), 0, "temporaries were allocated");
    cr_expect_eq(after.values_materialised - before.values_materialised, 2,
                 "%llu values went to memory; only call and put should",
                 (unsigned long long)(after.values_materialised - before.values_materialised));
    memset(call, 0xAB, sizeof call);
    memset(put, 0xAB, sizeof put);
    cr_assert(nd_to_host(c, call, sizeof call) == ND_OK && nd_to_host(p, put, sizeof put) == ND_OK);
    for (int64_t i = 0; i < n; i++) {
        double s = hs[i], x = hx[i], t = ht[i];
        double e1 = (log(s / x) + 0.065 * t) / (0.3 * sqrt(t)), e2 = e1 - 0.3 * sqrt(t);
        double wc = s * as_cnd_ref(e1) - x * exp(-0.02 * t) * as_cnd_ref(e2);
        double wp = x * exp(-0.02 * t) * (1 - as_cnd_ref(e2)) - s * (1 - as_cnd_ref(e1));
        cr_assert(fabs(call[i] - wc) <= 1e-4 * s && fabs(put[i] - wp) <= 1e-4 * s,
                  "element %lld: call %g (want %g), put %g (want %g)", (long long)i, call[i], wc, put[i], wp);
    }
    nd_free(S); nd_free(X); nd_free(T); nd_free(c); nd_free(p);
}
