/*
 * black_scholes.c — European call and put prices for N options (float32,
 * default N = 2^22), the classic GPU benchmark:
 *
 *     S in [5, 30], X in [1, 100], T in [0.25, 10] years, r = 0.02, v = 0.30
 *     d1 = (log(S/X) + (r + v^2/2) T) / (v sqrt(T)),  d2 = d1 - v sqrt(T)
 *     call = S CND(d1) - X exp(-rT) CND(d2)
 *     put  = X exp(-rT) CND(-d2) - S CND(-d1)
 *
 * CND is the Abramowitz–Stegun polynomial approximation of the normal CDF
 * (26.2.17, error < 7.5e-8). The whole computation is one elementwise graph:
 * the scheduler fuses it, and call and put share one pass over S, X, T. The
 * program prints a few prices, checks them against a float64 host formula and
 * checks put-call parity (call - put = S - X exp(-rT)) for every option.
 *
 * Usage: black_scholes [N]
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RISKFREE 0.02
#define VOLATILITY 0.30

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "black_scholes: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

static const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978,
                    A5 = 1.330274429, RSQRT2PI = 0.39894228040143267794;

/* Abramowitz–Stegun CND, recorded with nd ops (call inside a scope). */
static nd_array *cnd(nd_array *d)
{
    nd_array *k = nd_div(nd_scalar(1.0), nd_add(nd_scalar(1.0), nd_mul(nd_scalar(0.2316419), nd_abs(d))));
    /* Horner: k*(A1 + k*(A2 + k*(A3 + k*(A4 + k*A5)))) */
    nd_array *poly = nd_mul(k, nd_scalar(A5));
    poly = nd_mul(k, nd_add(nd_scalar(A4), poly));
    poly = nd_mul(k, nd_add(nd_scalar(A3), poly));
    poly = nd_mul(k, nd_add(nd_scalar(A2), poly));
    poly = nd_mul(k, nd_add(nd_scalar(A1), poly));
    nd_array *pdf = nd_mul(nd_scalar(RSQRT2PI), nd_exp(nd_mul(nd_scalar(-0.5), nd_square(d))));
    nd_array *w = nd_sub(nd_scalar(1.0), nd_mul(pdf, poly));
    return nd_where(nd_lt(d, nd_scalar(0.0)), nd_sub(nd_scalar(1.0), w), w);
}

static double host_cnd(double d)
{
    double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double poly = k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5))));
    double w = 1.0 - RSQRT2PI * exp(-0.5 * d * d) * poly;
    return d < 0 ? 1.0 - w : w;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : ((int64_t)1 << 22);
    if (n < 1) {
        fprintf(stderr, "usage: black_scholes [N >= 1]\n");
        return 2;
    }

    nd_random_seed(1973);
    nd_array *s = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 5.0, 30.0);
    nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 1.0, 100.0);
    nd_array *t = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.25, 10.0);
    if (nd_sync() != ND_OK)
        return fail("generating the inputs");

    /* Names label the arrays and the work in Graphviz dumps, ND_PROFILE,
     * ND_TRACE, NVTX ranges and messages (they cost nothing otherwise). */
    nd_set_name(s, "spot");
    nd_set_name(x, "strike");
    nd_set_name(t, "expiry");
    double t0 = now_seconds();
    nd_scope_begin_named("pricing");
    nd_array *sqrt_t = nd_sqrt(t);
    nd_array *vsqrt_t = nd_mul(nd_scalar(VOLATILITY), sqrt_t);
    nd_array *d1 = nd_div(nd_add(nd_log(nd_div(s, x)),
                                 nd_mul(nd_scalar(RISKFREE + 0.5 * VOLATILITY * VOLATILITY), t)),
                          vsqrt_t);
    nd_array *d2 = nd_sub(d1, vsqrt_t);
    nd_array *x_disc = nd_mul(x, nd_exp(nd_mul(nd_scalar(-RISKFREE), t)));
    nd_array *call = nd_keep(nd_sub(nd_mul(s, cnd(d1)), nd_mul(x_disc, cnd(d2))));
    nd_array *put = nd_keep(nd_sub(nd_mul(x_disc, cnd(nd_neg(d2))), nd_mul(s, cnd(nd_neg(d1)))));
    nd_scope_end();
    nd_set_name(call, "call");
    nd_set_name(put, "put");
    nd_status st = nd_sync();
    double t1 = now_seconds();
    if (st != ND_OK || !call || !put)
        return fail("pricing");

    size_t bytes = (size_t)n * sizeof(float);
    float *hs = malloc(bytes), *hx = malloc(bytes), *ht = malloc(bytes);
    float *hc = malloc(bytes), *hp = malloc(bytes);
    if (!hs || !hx || !ht || !hc || !hp) {
        fprintf(stderr, "black_scholes: out of host memory\n");
        return 1;
    }
    if (nd_to_host(s, hs, bytes) != ND_OK || nd_to_host(x, hx, bytes) != ND_OK ||
        nd_to_host(t, ht, bytes) != ND_OK || nd_to_host(call, hc, bytes) != ND_OK ||
        nd_to_host(put, hp, bytes) != ND_OK)
        return fail("nd_to_host");

    printf("black_scholes: %lld options, float32, on %s\n", (long long)n, nd_backend_name());
    printf("  %8s %8s %8s %10s %10s\n", "S", "X", "T", "call", "put");
    for (int64_t i = 0; i < n && i < 4; i++)
        printf("  %8.3f %8.3f %8.3f %10.5f %10.5f\n", hs[i], hx[i], ht[i], hc[i], hp[i]);
    printf("  time %.4f s (%.1f M options/s)\n", t1 - t0, 1e-6 * (double)n / (t1 - t0));

    /* Every option: float32 parity and agreement with the float64 formula
     * on the same (float32) inputs. Prices reach ~100, so an absolute
     * tolerance scaled to that is what float32 can promise. */
    double worst_parity = 0.0, worst_ref = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double S = hs[i], X = hx[i], T = ht[i];
        double xd = X * exp(-RISKFREE * T);
        double parity = fabs(((double)hc[i] - (double)hp[i]) - (S - xd));
        if (parity > worst_parity)
            worst_parity = parity;
        double vst = VOLATILITY * sqrt(T);
        double e1 = (log(S / X) + (RISKFREE + 0.5 * VOLATILITY * VOLATILITY) * T) / vst;
        double e2 = e1 - vst;
        double rc = S * host_cnd(e1) - xd * host_cnd(e2);
        double rp = xd * host_cnd(-e2) - S * host_cnd(-e1);
        double err = fmax(fabs(rc - hc[i]), fabs(rp - hp[i]));
        if (err > worst_ref)
            worst_ref = err;
    }
    const double tol = 1e-3;
    printf("  put-call parity: worst |C - P - (S - X e^-rT)| = %.2e (tolerance %.0e)\n",
           worst_parity, tol);
    printf("  float64 reference: worst |difference| = %.2e (tolerance %.0e)\n", worst_ref, tol);

    free(hs);
    free(hx);
    free(ht);
    free(hc);
    free(hp);
    nd_free(call);
    nd_free(put);
    nd_free(s);
    nd_free(x);
    nd_free(t);
    nd_shutdown();
    return worst_parity <= tol && worst_ref <= tol ? 0 : 1;
}
