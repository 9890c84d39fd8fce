/*
 * nd_suite_reduce.c — the suite's reductions through nd: Monte Carlo pi and
 * the dot product (inputs drawn inside the timed part), the matmul chain and
 * the plain sum, with their float64 host references.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"

#define MATMUL_ROWS 16 /* rows of the matmul chain checked */
#define PI 3.14159265358979323846

/* ----------------------------------------------------------------- pi */

static uint64_t next_seed = 0x5eed0000;

static void pi_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->pi_n;
    m->bytes = -1; /* draws made inside the kernel: nothing must move */
    m->flops = 4.0 * (double)m->n;
}

/* The draws are part of the timed work; seeding is not. */
static nd_status reseed_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    s->seed = next_seed++;
    nd_random_seed(s->seed);
    return ND_OK;
}

static nd_status pi_run(suite_state *s)
{
    int64_t n = s->sz->pi_n;
    nd_scope_begin();
    nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
    nd_array *y = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
    nd_array *inside = nd_le(nd_add(nd_mul(x, x), nd_mul(y, y)), nd_scalar(1.0));
    /* the fraction counted in float64, as examples/pi.c */
    s->out[0] = nd_keep(nd_mean(nd_astype(inside, ND_FLOAT64), ND_ALL_AXES));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

/* Draws `count` arrays again from the run's seed (same seed, same order of
 * random calls: the same values) and reads them back. */
static bool redraw(suite_state *s, nd_dtype t, int64_t n, int count, void **host)
{
    nd_random_seed(s->seed);
    nd_array *d[2] = {NULL, NULL};
    for (int i = 0; i < count; i++)
        d[i] = nd_random_uniform(t, ND_SHAPE(n), 0.0, 1.0);
    bool ok = suite_settle(d, count) == ND_OK;
    for (int i = 0; i < count; i++) {
        host[i] = ok ? suite_host_copy(d[i], nd_dtype_size(t)) : NULL;
        ok = ok && host[i];
        nd_free(d[i]);
    }
    return ok;
}

static double pi_check(suite_state *s)
{
    int64_t n = s->sz->pi_n;
    double got = nd_item(s->out[0]);
    /* An estimate off by more than 6 standard errors means the draws are not
     * uniform (zeros, say), whatever the exact comparison below says. */
    if (!(fabs(4.0 * got - PI) <= 6.0 * 1.64 / sqrt((double)n))) {
        fprintf(stderr, "nd_suite: pi estimate %.8f is statistically implausible\n", 4.0 * got);
        return INFINITY;
    }
    void *h[2] = {NULL, NULL};
    double err = NAN;
    if (redraw(s, ND_FLOAT32, n, 2, h)) {
        const float *x = h[0], *y = h[1];
        int64_t inside = 0;
        for (int64_t i = 0; i < n; i++)
            inside += (double)x[i] * x[i] + (double)y[i] * y[i] <= 1.0;
        double ref = (double)inside / (double)n;
        err = fabs(got - ref) / ref;
    }
    free(h[0]);
    free(h[1]);
    return err;
}

/* ------------------------------------------------------- matmul chain */

static void matmul_measure(const suite_sizes *sz, suite_measure *m)
{
    double n = (double)sz->matmul_n;
    m->n = sz->matmul_n;
    m->bytes = 3.0 * 4 * n * n + 4 * n;
    m->flops = 2.0 * n * n * n + 5.0 * n * n;
}

static nd_status matmul_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = s->sz->matmul_n;
    for (int i = 0; i < 3; i++)
        suite_replace(&s->in[i], NULL);
    for (int i = 0; i < 3; i++)
        s->in[i] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
    return suite_settle(s->in, 3);
}

static nd_status matmul_run(suite_state *s)
{
    nd_scope_begin();
    nd_array *d = nd_add(nd_matmul(s->in[0], s->in[1]), s->in[2]);
    s->out[0] = nd_keep(nd_sum(nd_add(nd_sin(d), nd_cos(d)), 1));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static double matmul_check(suite_state *s)
{
    int64_t n = s->sz->matmul_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the row sums"))
        return INFINITY;
    float *A = suite_host_copy(s->in[0], 4), *B = suite_host_copy(s->in[1], 4), *C = suite_host_copy(s->in[2], 4);
    float *got = suite_host_copy(s->out[0], 4);
    double *row = malloc((size_t)n * sizeof *row);
    double err = NAN;
    if (A && B && C && got && row) {
        suite_norm_err e = {0, 0};
        uint64_t st = 4;
        for (int r = 0; r < MATMUL_ROWS; r++) {
            int64_t i = suite_next_index(&st, n);
            for (int64_t j = 0; j < n; j++)
                row[j] = C[i * n + j];
            for (int64_t k = 0; k < n; k++) { /* row i of A @ B, B read row by row */
                double a = A[i * n + k];
                for (int64_t j = 0; j < n; j++)
                    row[j] += a * B[k * n + j];
            }
            double ref = 0;
            for (int64_t j = 0; j < n; j++)
                ref += sin(row[j]) + cos(row[j]);
            suite_norm_add(&e, got[i], ref);
        }
        err = suite_norm_value(&e);
    }
    free(A);
    free(B);
    free(C);
    free(got);
    free(row);
    return err;
}

/* ---------------------------------------------------------------- dot */

static void dot_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->dot_n;
    m->bytes = -1; /* generated inside the timed part, like pi */
    m->flops = 2.0 * (double)m->n;
}

static nd_status dot_run(suite_state *s)
{
    int64_t n = s->sz->dot_n;
    nd_scope_begin();
    nd_array *a = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), 0.0, 1.0);
    nd_array *b = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n), 0.0, 1.0);
    s->out[0] = nd_keep(nd_dot(a, b));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static double dot_check(suite_state *s)
{
    int64_t n = s->sz->dot_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT64, "the dot product"))
        return INFINITY;
    double got = nd_item(s->out[0]);
    /* a.b of uniform [0, 1) vectors: mean n/4, standard deviation
     * sqrt(7n/144); further off than 6 of those, the draws are wrong. */
    if (!(fabs(got - 0.25 * (double)n) <= 6.0 * sqrt(7.0 * (double)n / 144.0))) {
        fprintf(stderr, "nd_suite: dot %.6g is statistically implausible for n = %lld\n", got,
                (long long)n);
        return INFINITY;
    }
    void *h[2] = {NULL, NULL};
    double err = NAN;
    if (redraw(s, ND_FLOAT64, n, 2, h)) {
        const double *a = h[0], *b = h[1];
        double ref = 0;
        for (int64_t i = 0; i < n; i++)
            ref += a[i] * b[i]; /* every term >= 0: no cancellation to scale for */
        err = fabs(got - ref) / ref;
    }
    free(h[0]);
    free(h[1]);
    return err;
}

/* ---------------------------------------------------------------- sum */

static void sum_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->sum_n;
    m->bytes = 4.0 * (double)m->n;
    m->flops = (double)m->n;
}

static nd_status sum_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    suite_replace(&s->in[0], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(s->sz->sum_n), 0.0, 1.0);
    return suite_settle(s->in, 1);
}

static nd_status sum_run(suite_state *s)
{
    s->out[0] = nd_sum(s->in[0], ND_ALL_AXES);
    return suite_settle(s->out, 1);
}

static double sum_check(suite_state *s)
{
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the sum"))
        return INFINITY;
    float *x = suite_host_copy(s->in[0], 4);
    if (!x)
        return NAN;
    double ref = 0;
    for (int64_t i = 0; i < s->sz->sum_n; i++)
        ref += x[i];
    free(x);
    return fabs(nd_item(s->out[0]) - ref) / ref;
}

const suite_workload suite_pi = {
    .name = "pi",
    .dtype = "float32",
    .check_kind = "scalar",
    .tol = 1e-6,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = pi_measure,
    .prepare = reseed_prepare,
    .run = pi_run,
    .check = pi_check,
};

const suite_workload suite_matmul_chain = {
    .name = "matmul_chain",
    .dtype = "float32",
    .check_kind = "sampled",
    .tol = 1e-3,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = matmul_measure,
    .prepare = matmul_prepare,
    .run = matmul_run,
    .check = matmul_check,
};

const suite_workload suite_dot = {
    .name = "dot",
    .dtype = "float64",
    .check_kind = "scalar",
    .tol = 1e-12,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = dot_measure,
    .prepare = reseed_prepare,
    .run = dot_run,
    .check = dot_check,
};

const suite_workload suite_sum = {
    .name = "sum",
    .dtype = "float32",
    .check_kind = "scalar",
    .tol = 1e-4, /* NumPy's pairwise float32 sum of 2^28 values is off by ~4e-6 */
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = sum_measure,
    .prepare = sum_prepare,
    .run = sum_run,
    .check = sum_check,
};
