/*
 * nd_suite_lib.c — the suite's sorting, scan and indexing workloads through
 * nd (bench/peers/suite_common.py's LIB_WORKLOADS, run when named: bench/
 * suite.sh run --workloads lib): sort of 2^28 float32, argsort of 2^26
 * float64, sort along the last axis of 4096 x 65536 float32, cumsum of 2^28
 * float32, a gather of 2^26 random indices feeding a map, a mask selecting
 * half of 2^28 float32 and a 1024-bin histogram of 2^28 float32, each
 * checked as the peers check it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"

static nd_status uniform_input(suite_state *s, nd_dtype t, int ndim, const int64_t *shape, double lo, double hi)
{
    suite_replace(&s->in[0], NULL);
    suite_replace(&s->in[1], NULL);
    s->in[0] = nd_random_uniform(t, ndim, shape, lo, hi);
    return suite_settle(s->in, 1);
}

/* ---------------------------------------------------------------- sorts */

static void sort_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->sort_n;
    m->bytes = -1; /* not bandwidth-bound: no floor */
    m->flops = 0;
}

static void argsort_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->argsort_n;
    m->bytes = -1;
    m->flops = 0;
}

static void rows_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->rows_r * sz->rows_c;
    m->bytes = -1;
    m->flops = 0;
}

static nd_status sort_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT32, ND_SHAPE(s->sz->sort_n), 0, 1);
}

static nd_status argsort_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT64, ND_SHAPE(s->sz->argsort_n), 0, 1);
}

static nd_status rows_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT32, ND_SHAPE(s->sz->rows_r, s->sz->rows_c), 0, 1);
}

static nd_status sort_run(suite_state *s)
{
    s->out[0] = nd_sort(s->in[0], 0);
    return suite_settle(s->out, 1);
}

static nd_status argsort_run(suite_state *s)
{
    s->out[0] = nd_argsort(s->in[0], 0);
    return suite_settle(s->out, 1);
}

static nd_status rows_run(suite_state *s)
{
    s->out[0] = nd_sort(s->in[0], -1);
    return suite_settle(s->out, 1);
}

/* Rows of `cols` sorted, and each row's float64 sum that of the input's
 * row: the worst relative difference (infinity when not sorted). */
static double sorted_and_sums(suite_state *s, int64_t rows, int64_t cols)
{
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the sorted values"))
        return INFINITY;
    float *x = suite_host_copy(s->in[0], 4), *y = suite_host_copy(s->out[0], 4);
    double worst = NAN;
    if (x && y) {
        worst = 0;
        for (int64_t r = 0; r < rows; r++) {
            double sx = 0, sy = 0;
            const float *xr = x + r * cols, *yr = y + r * cols;
            for (int64_t i = 0; i < cols; i++) {
                sx += xr[i];
                sy += yr[i];
                if (i && !(yr[i - 1] <= yr[i])) {
                    fprintf(stderr, "nd_suite: row %lld is not sorted at %lld\n", (long long)r, (long long)i);
                    worst = INFINITY;
                    break;
                }
            }
            double e = fabs(sx - sy) / fmax(fabs(sx), 1e-300);
            if (!(e <= worst))
                worst = e;
        }
    }
    free(x);
    free(y);
    return worst;
}

static double sort_check(suite_state *s) { return sorted_and_sums(s, 1, s->sz->sort_n); }
static double rows_check(suite_state *s) { return sorted_and_sums(s, s->sz->rows_r, s->sz->rows_c); }

static double argsort_check(suite_state *s)
{
    int64_t n = s->sz->argsort_n;
    if (!suite_dtype_is(s->out[0], ND_INT64, "the indices"))
        return INFINITY;
    double *x = suite_host_copy(s->in[0], 8);
    int64_t *idx = suite_host_copy(s->out[0], 8);
    unsigned char *seen = calloc((size_t)n, 1);
    double err = NAN;
    if (x && idx && seen) {
        err = 0;
        for (int64_t i = 0; i < n && err == 0; i++) {
            if (idx[i] < 0 || idx[i] >= n || seen[idx[i]]++)
                err = INFINITY;
            else if (i && !(x[idx[i - 1]] <= x[idx[i]]))
                err = INFINITY;
        }
        if (err != 0)
            fprintf(stderr, "nd_suite: argsort's indices are not a sorting permutation\n");
    }
    free(x);
    free(idx);
    free(seen);
    return err;
}

/* --------------------------------------------------------------- cumsum */

static void cumsum_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->cumsum_n;
    m->bytes = 8.0 * (double)m->n; /* read and write */
    m->flops = (double)m->n;
}

static nd_status cumsum_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT32, ND_SHAPE(s->sz->cumsum_n), -1, 1);
}

static nd_status cumsum_run(suite_state *s)
{
    s->out[0] = nd_cumsum(s->in[0], 0);
    return suite_settle(s->out, 1);
}

static double cumsum_check(suite_state *s)
{
    int64_t n = s->sz->cumsum_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the cumulative sum"))
        return INFINITY;
    float *x = suite_host_copy(s->in[0], 4), *y = suite_host_copy(s->out[0], 4);
    double err = NAN;
    if (x && y) {
        /* every element against the float64 running sum */
        suite_norm_err e = {0, 0};
        double acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += x[i];
            suite_norm_add(&e, y[i], acc);
        }
        err = suite_norm_value(&e);
    }
    free(x);
    free(y);
    return err;
}

/* ------------------------------------------------------- gather and map */

static void gather_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->gather_n;
    m->bytes = 16.0 * (double)m->n; /* idx, the gathered x, the output */
    m->flops = 3.0 * (double)m->n;
}

static nd_status gather_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    int64_t n = s->sz->gather_n;
    suite_replace(&s->in[0], nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0, 1));
    suite_replace(&s->in[1], nd_random_integers(ND_INT64, ND_SHAPE(n), 0, n));
    return suite_settle(s->in, 2);
}

static nd_status gather_run(suite_state *s)
{
    nd_scope_begin();
    nd_array *g = nd_take(s->in[0], s->in[1], 0);
    s->out[0] = nd_keep(nd_add(nd_mul(nd_sin(g), nd_scalar(2.0)), nd_scalar(1.0)));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static double gather_check(suite_state *s)
{
    int64_t n = s->sz->gather_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the gathered map"))
        return INFINITY;
    float *x = suite_host_copy(s->in[0], 4), *y = suite_host_copy(s->out[0], 4);
    int64_t *idx = suite_host_copy(s->in[1], 8);
    double err = NAN;
    if (x && y && idx) {
        suite_norm_err e = {0, 0};
        uint64_t st = 6;
        for (int k = 0; k < SUITE_SAMPLES; k++) {
            int64_t i = suite_next_index(&st, n);
            suite_norm_add(&e, y[i], sin((double)x[idx[i]]) * 2.0 + 1.0);
        }
        err = suite_norm_value(&e);
    }
    free(x);
    free(y);
    free(idx);
    return err;
}

/* ---------------------------------------------------------- mask select */

static void mask_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->mask_n;
    m->bytes = 6.0 * (double)m->n; /* read all, write the half kept */
    m->flops = (double)m->n;
}

static nd_status mask_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT32, ND_SHAPE(s->sz->mask_n), 0, 1);
}

static nd_status mask_run(suite_state *s)
{
    nd_scope_begin();
    s->out[0] = nd_keep(nd_mask_select(s->in[0], nd_gt(s->in[0], nd_scalar(0.5))));
    nd_scope_end();
    return suite_settle(s->out, 1);
}

static double mask_check(suite_state *s)
{
    int64_t n = s->sz->mask_n;
    if (!suite_dtype_is(s->out[0], ND_FLOAT32, "the selected values"))
        return INFINITY;
    float *x = suite_host_copy(s->in[0], 4);
    int64_t kept = 0;
    for (int64_t i = 0; x && i < n; i++)
        kept += x[i] > 0.5f;
    if (x && nd_size(s->out[0]) != kept) {
        fprintf(stderr, "nd_suite: %lld values selected, expected %lld\n", (long long)nd_size(s->out[0]),
                (long long)kept);
        free(x);
        return INFINITY;
    }
    float *y = x ? suite_host_copy(s->out[0], 4) : NULL;
    double err = NAN;
    if (x && y) {
        int64_t j = 0, wrong = 0;
        for (int64_t i = 0; i < n; i++)
            if (x[i] > 0.5f)
                wrong += y[j++] != x[i];
        err = (double)wrong;
    }
    free(x);
    free(y);
    return err;
}

/* ------------------------------------------------------------ histogram */

#define HIST_BINS 1024

static void hist_measure(const suite_sizes *sz, suite_measure *m)
{
    m->n = sz->hist_n;
    m->bytes = 4.0 * (double)m->n;
    m->flops = 2.0 * (double)m->n;
}

static nd_status hist_prepare(suite_state *s, bool for_check)
{
    (void)for_check;
    return uniform_input(s, ND_FLOAT32, ND_SHAPE(s->sz->hist_n), 0, 1);
}

static nd_status hist_run(suite_state *s)
{
    s->out[0] = nd_histogram(s->in[0], HIST_BINS, 0.0, 1.0, NULL);
    return suite_settle(s->out, 1);
}

/* Against counts made here in float64 (NumPy's rule: bin floor((x - lo) *
 * bins / (hi - lo)), the last bin closed): the worst difference over the
 * mean count. */
static double hist_check(suite_state *s)
{
    int64_t n = s->sz->hist_n;
    if (nd_size(s->out[0]) != HIST_BINS) {
        fprintf(stderr, "nd_suite: %lld bins, expected %d\n", (long long)nd_size(s->out[0]), HIST_BINS);
        return INFINITY;
    }
    nd_array *as64 = nd_astype(s->out[0], ND_FLOAT64);
    double *h = as64 ? suite_host_copy(as64, 8) : NULL;
    nd_free(as64);
    float *x = suite_host_copy(s->in[0], 4);
    double err = NAN;
    if (x && h) {
        static double ref[HIST_BINS];
        memset(ref, 0, sizeof ref);
        for (int64_t i = 0; i < n; i++) {
            double v = x[i];
            if (!(v >= 0.0 && v <= 1.0))
                continue;
            int64_t b = (int64_t)(v * HIST_BINS);
            ref[b < HIST_BINS ? b : HIST_BINS - 1] += 1;
        }
        double worst = 0;
        for (int b = 0; b < HIST_BINS; b++)
            worst = fmax(worst, fabs(h[b] - ref[b]));
        err = worst / ((double)n / HIST_BINS);
    }
    free(x);
    free(h);
    return err;
}

#define LIB_WORKLOAD(NAME, DTYPE, KIND, TOL, PFX)                                                            \
    const suite_workload suite_##NAME = {                                                                    \
        .name = #NAME, .dtype = DTYPE, .check_kind = KIND, .tol = TOL, .named_only = true,                  \
        .measure = PFX##_measure, .prepare = PFX##_prepare, .run = PFX##_run, .check = PFX##_check,         \
    };

LIB_WORKLOAD(sort, "float32", "sorted+sum", 1e-9, sort)
LIB_WORKLOAD(argsort, "int64", "permutation", 0.0, argsort)
LIB_WORKLOAD(sort_rows, "float32", "sorted+sums", 1e-9, rows)
LIB_WORKLOAD(cumsum, "float32", "full", 1e-2, cumsum)
LIB_WORKLOAD(gather_map, "float32", "sampled", 1e-5, gather)
LIB_WORKLOAD(mask_select, "float32", "full", 0.0, mask)
LIB_WORKLOAD(histogram, "counts", "full", 1e-4, hist)
