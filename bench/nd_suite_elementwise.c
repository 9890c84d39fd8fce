/*
 * nd_suite_elementwise.c — the suite's elementwise workloads through nd (the
 * seed chain, Black-Scholes, small ops), each with its float64 host
 * reference. bench/peers/suite_common.py has the same formulas, sizes, input
 * ranges and checks for the Python libraries: keep the two in step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"
#include "suite_patterns.h"

/* -------------------------------------------------------------- chain */

static void chain_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->chain_n;
    m->bytes = 3.0 * 4 * (double)m->n; /* read a, b; write y */
    m->flops = 11.0 * (double)m->n;    /* every op counts one, sin and exp too */
}

static nd_status chain_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = s->sz->chain_n;
    suite_replace(&s->in[0], NULL);
    suite_replace(&s->in[1], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
    s->in[1] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
    return suite_settle(s->in, 2);
}

static nd_status chain_run(suite_state *s)
{
    s->out[0] = suite_chain_record(s->in[0], s->in[1]);
    return suite_settle(s->out, 1);
}

static double chain_check(suite_state *s)
{
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "chain's output"))
        return INFINITY;
    float *a = suite_host_copy(s->in[0], 4), *b = suite_host_copy(s->in[1], 4), *y = suite_host_copy(s->out[0], 4);
    double err = NAN;
    if (a && b && y) {
        suite_norm_err e = {0, 0};
        uint64_t st = 1;
        for (int i = 0; i < SUITE_SAMPLES; i++) {
            int64_t k = suite_next_index(&st, s->sz->chain_n);
            double x = a[k], z = b[k];
            suite_norm_add(&e, y[k], sin(x) * cos(z) + sqrt(fabs(x * z)) * exp(-x * x));
        }
        err = suite_norm_value(&e);
    }
    free(a);
    free(b);
    free(y);
    return err;
}

/* ------------------------------------------------------ Black-Scholes */

/* The formula of bench/gpu_suite.c: Abramowitz-Stegun CND with
 * CND(d) = 1 - w for d > 0 and w otherwise, put through 1 - CND. */
#define BS_RATE 0.02
#define BS_VOL 0.30
static const double CND_A[5] = {0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429};
#define RSQRT2PI 0.39894228040143267794

static void bs_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->bs_n;
    m->bytes = 5.0 * 4 * (double)m->n; /* read S, X, T; write call, put */
    m->flops = 58.0 * (double)m->n;    /* ops as recorded below, each one */
}

static nd_status bs_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = s->sz->bs_n;
    for (int i = 0; i < 3; i++)
        suite_replace(&s->in[i], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 5.0, 30.0);   /* S */
    s->in[1] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 1.0, 100.0);  /* X */
    s->in[2] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.25, 10.0);  /* T */
    return suite_settle(s->in, 3);
}

static nd_array *bs_cnd(nd_array *d)
{
    nd_array *k = nd_div(nd_scalar(1.0),
                         nd_add(nd_scalar(1.0), nd_mul(nd_scalar(0.2316419), nd_abs(d))));
    nd_array *poly = nd_scalar(CND_A[4]);
    for (int i = 3; i >= 0; i--)
        poly = nd_add(nd_scalar(CND_A[i]), nd_mul(k, poly));
    poly = nd_mul(k, poly);
    nd_array *w = nd_mul(nd_mul(nd_scalar(RSQRT2PI), nd_exp(nd_mul(nd_scalar(-0.5), nd_square(d)))),
                         poly);
    return nd_where(nd_gt(d, nd_scalar(0.0)), nd_sub(nd_scalar(1.0), w), w);
}

static nd_status bs_run(suite_state *s)
{
    nd_array *S = s->in[0], *X = s->in[1], *T = s->in[2];
    nd_scope_begin();
    nd_array *vsqrt_t = nd_mul(nd_scalar(BS_VOL), nd_sqrt(T));
    nd_array *d1 = nd_div(nd_add(nd_log(nd_div(S, X)),
                                 nd_mul(nd_scalar(BS_RATE + 0.5 * BS_VOL * BS_VOL), T)),
                          vsqrt_t);
    nd_array *d2 = nd_sub(d1, vsqrt_t);
    nd_array *c1 = bs_cnd(d1), *c2 = bs_cnd(d2);
    nd_array *x_disc = nd_mul(X, nd_exp(nd_mul(nd_scalar(-BS_RATE), T)));
    s->out[0] = nd_keep(nd_sub(nd_mul(S, c1), nd_mul(x_disc, c2)));
    s->out[1] = nd_keep(nd_sub(nd_mul(x_disc, nd_sub(nd_scalar(1.0), c2)),
                               nd_mul(S, nd_sub(nd_scalar(1.0), c1))));
    nd_scope_end();
    return suite_settle(s->out, 2);
}

static double cnd_ref(double d)
{
    double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double poly = CND_A[4];
    for (int i = 3; i >= 0; i--)
        poly = CND_A[i] + k * poly;
    double w = RSQRT2PI * exp(-0.5 * d * d) * k * poly;
    return d > 0 ? 1.0 - w : w;
}

static double bs_check(suite_state *s)
{
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "call") || !suite_dtype_is(s->out[1], ND_FLOAT32, "put"))
        return INFINITY;
    float *S = suite_host_copy(s->in[0], 4), *X = suite_host_copy(s->in[1], 4), *T = suite_host_copy(s->in[2], 4);
    float *call = suite_host_copy(s->out[0], 4), *put = suite_host_copy(s->out[1], 4);
    double err = NAN;
    if (S && X && T && call && put) {
        suite_norm_err e = {0, 0};
        uint64_t st = 2;
        for (int i = 0; i < SUITE_SAMPLES; i++) {
            int64_t k = suite_next_index(&st, s->sz->bs_n);
            double sp = S[k], x = X[k], t = T[k], vst = BS_VOL * sqrt(t);
            double d1 = (log(sp / x) + (BS_RATE + 0.5 * BS_VOL * BS_VOL) * t) / vst;
            double d2 = d1 - vst, xd = x * exp(-BS_RATE * t);
            suite_norm_add(&e, call[k], sp * cnd_ref(d1) - xd * cnd_ref(d2));
            suite_norm_add(&e, put[k], xd * (1.0 - cnd_ref(d2)) - sp * (1.0 - cnd_ref(d1)));
        }
        err = suite_norm_value(&e);
    }
    free(S);
    free(X);
    free(T);
    free(call);
    free(put);
    return err;
}

/* ---------------------------------------------------------- small ops */

static void ops_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->ops_n;
    m->bytes = sz->ops_iters * 2.0 * 4 * (double)m->n; /* x read and written per step */
    m->flops = sz->ops_iters * 4.0 * (double)m->n;
}

static nd_status ops_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    suite_replace(&s->in[0], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(s->sz->ops_n), -1.0, 1.0);
    return suite_settle(s->in, 1);
}

static nd_status ops_run(suite_state *s)
{
    s->out[0] = suite_small_ops_record(s->in[0], s->sz->ops_iters);
    return suite_settle(s->out, 1);
}

static nd_status ops_body_run(suite_state *s)
{
    s->out[0] = suite_small_ops_body_record(s->in[0], s->sz->ops_iters);
    return suite_settle(s->out, 1);
}

static double ops_check(suite_state *s)
{
    int64_t n = s->sz->ops_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "x"))
        return INFINITY;
    float *x0 = suite_host_copy(s->in[0], 4), *got = suite_host_copy(s->out[0], 4);
    double err = NAN;
    if (x0 && got) {
        suite_norm_err e = {0, 0};
        for (int64_t i = 0; i < n; i++) {
            double x = x0[i];
            for (int it = 0; it < s->sz->ops_iters; it++)
                x = x * 0.99 + 0.01 * sin(x);
            suite_norm_add(&e, got[i], x);
        }
        err = suite_norm_value(&e);
    }
    free(x0);
    free(got);
    return err;
}

const suite_workload suite_chain = {
    .name = "chain",
    .dtype = "float32",
    .check_kind = "sampled",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = chain_measure,
    .prepare = chain_prepare,
    .run = chain_run,
    .check = chain_check,
};

const suite_workload suite_black_scholes = {
    .name = "black_scholes",
    .dtype = "float32",
    .check_kind = "sampled",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = bs_measure,
    .prepare = bs_prepare,
    .run = bs_run,
    .check = bs_check,
};

const suite_workload suite_small_ops = {
    .name = "small_ops",
    .dtype = "float32",
    .check_kind = "full",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = ops_measure,
    .prepare = ops_prepare,
    .run = ops_run,
    .check = ops_check,
};

/* small_ops recorded through a traced body: one node per iteration. */
const suite_workload suite_small_ops_body = {
    .name = "small_ops_body",
    .dtype = "float32",
    .check_kind = "full",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = ops_measure,
    .prepare = ops_prepare,
    .run = ops_body_run,
    .check = ops_check,
};
