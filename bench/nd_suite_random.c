/*
 * nd_suite_random.c — random draws summed where they are drawn: 2^28
 * uniform float32 draws against 2^28 int32 integers (nd_random_integers,
 * Lemire's multiply-shift with rejection) in a fused sum. The target: the
 * integers at least as fast as the uniforms (both read one Philox word per
 * element; nothing goes to memory but the sum).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nd_suite.h"

#define INT_LO (-1000)
#define INT_HI 1001 /* 2001 values: not a power of two, so some draws are rejected */

static uint64_t next_seed = 0x1e3100;

static void draw_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->pi_n;
    m->bytes = -1; /* drawn inside the kernel: nothing must move */
    m->flops = (double)m->n;
}

static nd_status draw_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    s->seed = next_seed++;
    nd_random_seed(s->seed);
    return ND_OK;
}

static nd_array *draw(int64_t n, int integers)
{
    return integers ? nd_random_integers(ND_INT32, ND_SHAPE(n), INT_LO, INT_HI)
                    : nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
}

static nd_status run(suite_state *s, int integers)
{
    nd_scope_begin();
    s->out[0] = nd_keep(nd_sum(draw(s->sz->pi_n, integers), ND_ALL_AXES));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static nd_status uniform_run(suite_state *s) { return run(s, 0); }
static nd_status integers_run(suite_state *s) { return run(s, 1); }

/* The sum against the same draws made again from the run's seed, read back
 * and summed on the host in float64 (int64 for the integers: exact), after
 * a statistical check of the value itself. */
static double check(suite_state *s, int integers)
{
    int64_t n = s->sz->pi_n;
    if (!suite_dtype_is(s->out[0], integers ? ND_INT64 : ND_FLOAT32, "the sum"))
        return INFINITY;
    double got = nd_item(s->out[0]);
    double width = integers ? INT_HI - INT_LO : 1.0, mean = integers ? (INT_LO + INT_HI - 1) / 2.0 : 0.5;
    double var = integers ? (width * width - 1) / 12.0 : 1.0 / 12.0;
    if (!(fabs(got - mean * (double)n) <= 6.0 * sqrt(var * (double)n))) {
        fprintf(stderr, "nd_suite: sum %.9g of %lld draws is statistically implausible\n", got, (long long)n);
        return INFINITY;
    }
    nd_random_seed(s->seed);
    nd_array *d = draw(n, integers);
    void *h = suite_settle(&d, 1) == ND_OK ? suite_host_copy(d, 4) : NULL;
    nd_free(d);
    if (!h)
        return NAN;
    double err;
    if (integers) {
        const int32_t *x = h;
        int64_t ref = 0;
        for (int64_t i = 0; i < n; i++)
            ref += x[i];
        err = got == (double)ref ? 0.0 : fabs(got - (double)ref) / fmax(1.0, fabs((double)ref));
    } else {
        const float *x = h;
        double ref = 0;
        for (int64_t i = 0; i < n; i++)
            ref += x[i];
        err = fabs(got - ref) / ref;
    }
    free(h);
    return err;
}

static double uniform_check(suite_state *s) { return check(s, 0); }
static double integers_check(suite_state *s) { return check(s, 1); }

const suite_workload suite_uniform_sum = {
    .name = "uniform_sum",
    .dtype = "float32",
    .check_kind = "scalar",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = draw_measure,
    .prepare = draw_prepare,
    .run = uniform_run,
    .check = uniform_check,
};

const suite_workload suite_integers_sum = {
    .name = "integers_sum",
    .dtype = "int32",
    .check_kind = "scalar",
    .tol = 0.0,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = draw_measure,
    .prepare = draw_prepare,
    .run = integers_run,
    .check = integers_check,
};
