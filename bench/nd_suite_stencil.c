/*
 * nd_suite_stencil.c — the suite's heat stencils through nd (16384^2 float32
 * x 20 sweeps, 1000^2 float64 x 50, each recorded in full before one
 * nd_sync), with their float64 host references.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"
#include "suite_patterns.h"

#define STENCIL_SAMPLES 64 /* grid points checked of the large stencil */

/* ------------------------------------------------------------ stencils */

/* A point after `iters` sweeps depends only on the start values within
 * `iters` steps of it. Sweeping a window of radius iters + 1 with its own
 * border held fixed gives the point exactly: a wrong border value reaches one
 * step further inwards per sweep, so it never gets there. Where the window
 * meets the grid's edge, its border is the grid's fixed border. */
static double stencil_point_ref(const float *u0, int64_t n, int64_t pi, int64_t pj, int iters,
                                double *win, double *tmp)
{
    int64_t r = iters + 1;
    int64_t i0 = pi - r < 0 ? 0 : pi - r, i1 = pi + r > n - 1 ? n - 1 : pi + r;
    int64_t j0 = pj - r < 0 ? 0 : pj - r, j1 = pj + r > n - 1 ? n - 1 : pj + r;
    int64_t rows = i1 - i0 + 1, cols = j1 - j0 + 1;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            win[i * cols + j] = u0[(i0 + i) * n + (j0 + j)];
    suite_jacobi_ref(win, tmp, rows, cols, iters);
    return win[(pi - i0) * cols + (pj - j0)];
}

static void stencil_measure(const suite_sizes *sz, suite_measure *m)
{
    double n = (double)sz->stencil_n;
    m->n = sz->stencil_n;
    m->bytes = sz->stencil_iters * 2.0 * 4 * n * n; /* read + write the grid per sweep */
    m->flops = sz->stencil_iters * 5.0 * (n - 2) * (n - 2);
}

static nd_status stencil_prepare(suite_state *s, bool for_check)
{
    int64_t n = s->sz->stencil_n;
    suite_replace(&s->in[0], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), 0.0, 1.0);
    nd_status st = suite_settle(s->in, 1);
    if (st == ND_OK && for_check) {
        free(s->host);
        s->host = suite_host_copy(s->in[0], 4);
        if (!s->host)
            return ND_ERR_OOM;
    }
    return st;
}

/* `iters` sweeps recorded, then one nd_sync. */
static nd_status sweeps(nd_array *u, int iters)
{
    for (int it = 0; it < iters; it++) {
        nd_status st = suite_jacobi_step(u);
        if (st != ND_OK)
            return st;
    }
    return nd_sync();
}

static nd_status stencil_run(suite_state *s)
{
    return sweeps(s->in[0], s->sz->stencil_iters);
}

static double stencil_check(suite_state *s)
{
    int64_t n = s->sz->stencil_n;
    int iters = s->sz->stencil_iters;
    if (!suite_dtype_is(s->in[0], ND_FLOAT32, "the grid"))
        return INFINITY;
    float *u = suite_host_copy(s->in[0], 4);
    int64_t side = 2 * (iters + 1) + 1;
    double *win = malloc((size_t)(side * side) * sizeof *win);
    double *tmp = malloc((size_t)(side * side) * sizeof *tmp);
    double err = NAN;
    if (u && win && tmp && s->host) {
        /* Corners, edges and their neighbours first, then random points. */
        const int64_t fixed[][2] = {{0, 0}, {1, 1}, {n - 2, n - 2}, {0, n / 2}, {n / 2, 0},
                                    {1, n / 2}, {n / 2, n - 2}, {n - 1, n - 1}};
        int nfixed = (int)(sizeof fixed / sizeof fixed[0]);
        suite_norm_err e = {0, 0};
        uint64_t st = 3;
        for (int p = 0; p < STENCIL_SAMPLES; p++) {
            int64_t i = p < nfixed ? fixed[p][0] : suite_next_index(&st, n);
            int64_t j = p < nfixed ? fixed[p][1] : suite_next_index(&st, n);
            suite_norm_add(&e, u[i * n + j], stencil_point_ref(s->host, n, i, j, iters, win, tmp));
        }
        err = suite_norm_value(&e);
    }
    free(u);
    free(win);
    free(tmp);
    return err;
}

static void small_stencil_measure(const suite_sizes *sz, suite_measure *m)
{
    double n = (double)sz->small_n;
    m->n = sz->small_n;
    m->bytes = sz->small_iters * 2.0 * 8 * n * n;
    m->flops = sz->small_iters * 5.0 * (n - 2) * (n - 2);
}

static nd_status small_stencil_prepare(suite_state *s, bool for_check)
{
    int64_t n = s->sz->small_n;
    suite_replace(&s->in[0], NULL);
    s->in[0] = nd_random_uniform(ND_FLOAT64, ND_SHAPE(n, n), 0.0, 1.0);
    nd_status st = suite_settle(s->in, 1);
    if (st == ND_OK && for_check) {
        free(s->host);
        s->host = suite_host_copy(s->in[0], 8);
        if (!s->host)
            return ND_ERR_OOM;
    }
    return st;
}

static nd_status small_stencil_run(suite_state *s)
{
    return sweeps(s->in[0], s->sz->small_iters);
}

static double small_stencil_check(suite_state *s)
{
    int64_t n = s->sz->small_n;
    if (!suite_dtype_is(s->in[0], ND_FLOAT64, "the grid"))
        return INFINITY;
    double *u = suite_host_copy(s->in[0], 8);
    double *tmp = malloc((size_t)(n * n) * sizeof *tmp);
    double err = NAN;
    if (u && tmp && s->host) {
        double *ref = s->host; /* swept in place: the start values are not needed again */
        suite_jacobi_ref(ref, tmp, n, n, s->sz->small_iters);
        suite_norm_err e = {0, 0};
        for (int64_t k = 0; k < n * n; k++)
            suite_norm_add(&e, u[k], ref[k]);
        err = suite_norm_value(&e);
    }
    free(u);
    free(tmp);
    return err;
}

const suite_workload suite_stencil = {
    .name = "stencil",
    .dtype = "float32",
    .check_kind = "sampled",
    .tol = 1e-4,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = stencil_measure,
    .prepare = stencil_prepare,
    .run = stencil_run,
    .check = stencil_check,
};

const suite_workload suite_small_stencil = {
    .name = "small_stencil",
    .dtype = "float64",
    .check_kind = "full",
    .tol = 1e-10,
    .check_every_run = false,
    .gpu_only = false,
    .big = false,
    .measure = small_stencil_measure,
    .prepare = small_stencil_prepare,
    .run = small_stencil_run,
    .check = small_stencil_check,
};
