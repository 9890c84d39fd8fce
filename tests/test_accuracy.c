/* The CPU backend's accuracy where it departs from plain loops: the SLEEF
 * transcendentals (within 1 ulp of the exact value, signed zeros and the
 * far ends of each domain as libm gives them) and float sums (pairwise
 * within a tile, compensated across tiles and work items: at least as
 * accurate as NumPy's pairwise sum). References are long double libm. */
#include "common.h"

typedef nd_array *(*unary_fn)(nd_array *);
typedef struct {
    const char *name;
    unary_fn fn;
    long double (*ref)(long double);
    double lo, hi; /* where the random inputs are drawn (log-uniform in |x|) */
} unary_case;

static const unary_case cases[] = {
    {"sin", nd_sin, sinl, 1e-30, 1e5},       {"cos", nd_cos, cosl, 1e-30, 1e5},
    {"tan", nd_tan, tanl, 1e-30, 1e5},       {"arcsin", nd_arcsin, asinl, 1e-30, 1},
    {"arccos", nd_arccos, acosl, 1e-30, 1},  {"arctan", nd_arctan, atanl, 1e-30, 1e30},
    {"sinh", nd_sinh, sinhl, 1e-30, 700},    {"cosh", nd_cosh, coshl, 1e-30, 700},
    {"tanh", nd_tanh, tanhl, 1e-30, 30},     {"arcsinh", nd_arcsinh, asinhl, 1e-30, 1e300},
    {"arccosh", nd_arccosh, acoshl, 1, 1e300}, {"arctanh", nd_arctanh, atanhl, 1e-30, 1},
    {"exp", nd_exp, expl, 1e-30, 700},       {"exp2", nd_exp2, exp2l, 1e-30, 1000},
    {"expm1", nd_expm1, expm1l, 1e-30, 700}, {"log", nd_log, logl, 1e-300, 1e300},
    {"log2", nd_log2, log2l, 1e-300, 1e300}, {"log10", nd_log10, log10l, 1e-300, 1e300},
    {"log1p", nd_log1p, log1pl, 1e-30, 1e300}, {"cbrt", nd_cbrt, cbrtl, 1e-300, 1e300},
};

/* Inputs where SLEEF alone would differ from libm: the ends of the 1-ulp
 * domains of sinh/cosh (float 88.5, double 709), arcsinh/arccosh (beyond
 * 1e18 / 1e150) and log1p (1e38 / 1e307); and signed zeros and subnormals,
 * where an odd function must keep the sign and the tiny value. */
static const double edges[] = {0.0,    -0.0,   88.6,  -88.9,  89.3,   709.5,  -710.2,
                               1e19,   -3e37,  1e151, -1e200, 3.3e38, 1.1e307, 1e308,
                               INFINITY, -INFINITY, NAN, 1.0,  -1.0,  0.5,    -0.99999,
                               0x1p-149, -0x1p-149, -1e-40, 3e-39,  -1e-310, 0x1p-1074,
                               -0x1p-1074, -1e-300, 1e-20,  -1e-20};

/* Distance from the exact value want in ulps of dtype t at want; classes
 * (NaN, infinities, the sign of a zero) must match exactly. */
static double ulps(long double want, double got, nd_dtype t) {
    double w = t == ND_FLOAT32 ? (double)(float)want : (double)want;
    if (isnan(w) || isnan(got)) return isnan(w) && isnan(got) ? 0 : INFINITY;
    if (isinf(w) || isinf(got)) return w == got ? 0 : INFINITY;
    if (w == 0 && got == 0) return signbit(w) == signbit(got) ? 0 : INFINITY;
    int mant = t == ND_FLOAT32 ? 24 : 53, emin = t == ND_FLOAT32 ? -126 : -1022;
    int e = want == 0 ? emin : ilogbl(want);
    if (e < emin) e = emin;
    return (double)(fabsl((long double)got - want) / ldexpl(1.0L, e - mant + 1));
}

static void check_unary(const unary_case *c, nd_dtype t) {
    NDT_RNG(r);
    enum { N = 4099 }; /* not a multiple of any vector width: the tail too */
    static double in[N], out[N];
    static float in32[N], out32[N];
    int ne = (int)(sizeof edges / sizeof *edges);
    for (int i = 0; i < N; i++) {
        double x;
        if (i < ne) x = edges[i];
        else {
            double m = exp(ndt_uniform(&r, log(c->lo), log(c->hi)));
            x = (ndt_next(&r) & 1) && c->lo < 1 ? -m : m;
        }
        if (t == ND_FLOAT32) in32[i] = (float)x, in[i] = in32[i];
        else in[i] = x;
    }
    nd_array *a = nd_from_host(t == ND_FLOAT32 ? (void *)in32 : (void *)in, t, 1, (int64_t[]){N});
    nd_array *y = c->fn(a);
    cr_assert(y, "%s: %s", c->name, nd_last_error());
    for (int i = 0; i < N; i++) out[i] = out32[i] = -12345.0f; /* poison */
    cr_assert_eq(nd_to_host(y, t == ND_FLOAT32 ? (void *)out32 : (void *)out,
                            (t == ND_FLOAT32 ? 4 : 8) * (size_t)N),
                 ND_OK, "%s", nd_last_error());
    for (int i = 0; i < N; i++) {
        double got = t == ND_FLOAT32 ? out32[i] : out[i];
        long double want = c->ref((long double)in[i]);
        double e = ulps(want, got, t);
        cr_assert(e < 1.01, "nd_%s(%.17g) in %s = %.17g, exact %.20Lg: %.9g ulp (at most 1; seed %llu)",
                  c->name, in[i], t == ND_FLOAT32 ? "float32" : "float64", got, want, e,
                  (unsigned long long)ndt_current_seed());
    }
    nd_free(y);
    nd_free(a);
}

NDT_TEST(accuracy, transcendentals_within_one_ulp) {
    if (ndt_backend_is_cuda()) cr_skip_test("CUDA's own bounds are checked by test_ops");
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        check_unary(&cases[k], ND_FLOAT32);
        check_unary(&cases[k], ND_FLOAT64);
    }
}

/* 2^22 copies of 0.1: the exact sum is 0.1 * 2^22 (a power of two scales
 * exactly). NumPy's pairwise sum is 1 ulp off; a sum that added its tile
 * or item partials one after the other is several ulps off. */
NDT_TEST(accuracy, float64_sum_as_accurate_as_pairwise) {
    const int64_t n = (int64_t)1 << 22;
    nd_array *x = nd_full(ND_FLOAT64, ND_SHAPE(n), 0.1);
    nd_array *s = nd_sum(x, 0);
    double got = nd_item(s);
    cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(s);
    double want = 0.1 * (double)n;
    cr_assert(fabs(got - want) <= nextafter(want, INFINITY) - want, "sum = %.17g, exact %.17g",
              got, want);
    nd_free(x);
}

/* Alternating huge and tiny terms across many work items: each item's
 * partial is exact, the compensated combination keeps what a plain
 * running sum would drop. */
NDT_TEST(accuracy, float64_sum_compensates_across_items) {
    const int64_t n = (int64_t)1 << 21; /* 64 work items of 32768 */
    static double v[(int64_t)1 << 21];
    for (int64_t i = 0; i < n; i++) v[i] = (i / 32768) % 2 ? 1e-3 : 0.0;
    v[0] = 1e17; /* first item's partial: 1e17, the others' 32.768 or 0 */
    nd_array *x = nd_from_host(v, ND_FLOAT64, 1, (int64_t[]){n});
    nd_array *s = nd_sum(x, 0);
    double got = nd_item(s);
    cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_free(s);
    long double exact = 0; /* the small terms first: long double keeps them */
    for (int64_t i = 1; i < n; i++) exact += v[i];
    exact += 1e17L;
    cr_assert(fabs(got - (double)exact) <= 16.0, "sum = %.17g, exact %.20Lg", got, exact);
    nd_free(x);
}
