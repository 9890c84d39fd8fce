/*
 * nd_suite_patterns.c — two patterns of ordinary programs through nd, with
 * their float64 host references: a read inside the scope that owns the
 * temporaries (scope_read) and a normalised matrix feeding three products
 * (shared_matmul). bench/scope_read.c and bench/shared_operand.c time each
 * against its variant; suite_patterns.c records both.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nd_suite.h"
#include "suite_patterns.h"

#define SHARED_ROWS 8 /* rows of each product checked */

/* --------------------------------------------------------- scope_read */

static void scope_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->scope_n;
    m->bytes = 8.0 * (double)m->n; /* x and y read once */
    m->flops = 12.0 * (double)m->n;
}

static nd_status two_uniform(suite_state *s, int64_t rows, int64_t cols, int count, double lo, double hi)
{
    for (int i = 0; i < count; i++) {
        suite_replace(&s->in[i], NULL);
        s->in[i] = rows ? nd_random_uniform(ND_FLOAT32, ND_SHAPE(rows, cols), lo, hi)
                        : nd_random_uniform(ND_FLOAT32, ND_SHAPE(cols), lo, hi);
    }
    return suite_settle(s->in, count);
}

static nd_status scope_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return two_uniform(s, 0, s->sz->scope_n, 2, -2.0, 2.0);
}

/* The read happens inside the scope: every named value is still held. */
static nd_status scope_run(suite_state *s)
{
    nd_scope_begin();
    s->ref = nd_item(suite_scope_sum_record(s->in[0], s->in[1]));
    nd_scope_end();
    return isnan(s->ref) ? nd_last_status() : ND_OK;
}

static double scope_check(suite_state *s)
{
    int64_t n = s->sz->scope_n;
    float *x = suite_host_copy(s->in[0], 4), *y = suite_host_copy(s->in[1], 4);
    double err = NAN;
    if (x && y) {
        double ref = 0;
        for (int64_t i = 0; i < n; i++)
            ref += suite_scope_term(x[i], y[i]);
        err = fabs(s->ref - ref) / fabs(ref);
    }
    free(x);
    free(y);
    return err;
}

/* ------------------------------------------------------- shared_matmul */

static void shared_measure(const suite_sizes *sz, suite_measure *m)
{
    double n = (double)sz->norm_n;
    m->n = sz->norm_n;
    m->bytes = 3.0 * 4 * n * n + 3.0 * 4 * n * n; /* x, w1, w2 in; a, b, c out */
    m->flops = 3.0 * 2 * n * n * n + 8.0 * n * n;
}

static nd_status shared_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return two_uniform(s, s->sz->norm_n, s->sz->norm_n, 3, -1.0, 1.0);
}

static nd_status shared_run(suite_state *s)
{
    nd_status st = suite_normalise_matmul_record(s->in[0], s->in[1], s->in[2], s->out);
    return st != ND_OK ? st : suite_settle(s->out, 3);
}

static double shared_check(suite_state *s)
{
    int64_t n = s->sz->norm_n;
    float *h[6] = {NULL};
    nd_array *src[6] = {s->in[0], s->in[1], s->in[2], s->out[0], s->out[1], s->out[2]};
    bool ok = true;
    for (int i = 0; i < 6; i++) {
        ok = ok && suite_dtype_is(src[i], ND_FLOAT32, "an input or product");
        h[i] = ok ? suite_host_copy(src[i], 4) : NULL;
        ok = ok && h[i];
    }
    double *z = ok ? malloc((size_t)(n * n) * sizeof *z) : NULL;
    double err = ok ? NAN : INFINITY;
    if (z) {
        suite_normalise_ref(h[0], n, z);
        suite_norm_err e = {0, 0};
        uint64_t st = 5;
        for (int r = 0; r < SHARED_ROWS; r++) {
            int64_t i = suite_next_index(&st, n);
            for (int p = 0; p < 3; p++)
                for (int64_t j = 0; j < n; j++)
                    suite_norm_add(&e, h[3 + p][i * n + j], suite_product_ref(z, h[1 + p % 2], p, i, j, n));
        }
        err = suite_norm_value(&e);
    }
    for (int i = 0; i < 6; i++)
        free(h[i]);
    free(z);
    return err;
}

const suite_workload suite_scope_read = {
    .name = "scope_read",
    .dtype = "float32",
    .check_kind = "scalar",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = scope_measure,
    .prepare = scope_prepare,
    .run = scope_run,
    .check = scope_check,
};

const suite_workload suite_shared_matmul = {
    .name = "shared_matmul",
    .dtype = "float32",
    .check_kind = "sampled",
    .tol = 1e-3,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = shared_measure,
    .prepare = shared_prepare,
    .run = shared_run,
    .check = shared_check,
};
