/*
 * suite_patterns.c — see suite_patterns.h.
 */
#include "suite_patterns.h"

#include <math.h>
#include <string.h>

nd_status suite_jacobi_step(nd_array *u)
{
    nd_scope_begin();
    nd_array *c = nd_view(u, "1:-1, 1:-1");
    nd_array *sum = nd_add(nd_add(nd_add(nd_add(c, nd_view(u, ":-2, 1:-1")), nd_view(u, "2:, 1:-1")),
                                  nd_view(u, "1:-1, :-2")),
                           nd_view(u, "1:-1, 2:"));
    nd_status st = c ? nd_assign(c, nd_mul(nd_scalar(0.2), sum)) : nd_last_status();
    nd_scope_end();
    return st;
}

void suite_jacobi_ref(double *g, double *tmp, int64_t rows, int64_t cols, int iters)
{
    memcpy(tmp, g, (size_t)(rows * cols) * sizeof *g);
    for (int it = 0; it < iters; it++) {
        for (int64_t i = 1; i < rows - 1; i++)
            for (int64_t j = 1; j < cols - 1; j++) {
                const double *r = g + i * cols + j;
                tmp[i * cols + j] = 0.2 * ((((r[0] + r[-cols]) + r[cols]) + r[-1]) + r[1]);
            }
        memcpy(g, tmp, (size_t)(rows * cols) * sizeof *g);
    }
}

nd_array *suite_small_ops_record(nd_array *x0, int iters)
{
    nd_array *x = nd_retain(x0);
    for (int it = 0; it < iters && x; it++) {
        nd_scope_begin();
        nd_array *y = nd_keep(nd_add(nd_mul(x, nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(x))));
        nd_scope_end();
        nd_free(x); /* only the newest x stays alive: the rest need not be stored */
        x = y;
    }
    return x;
}

static nd_array *small_ops_step(nd_array *const *in, void *ctx)
{
    (void)ctx;
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(in[0], nd_scalar(0.99)), nd_mul(nd_scalar(0.01), nd_sin(in[0]))));
    nd_scope_end();
    return y;
}

nd_body *suite_small_ops_step_body(nd_array *x0)
{
    return nd_body_trace("small_ops_step", 1, &x0, small_ops_step, NULL);
}

nd_array *suite_small_ops_body_record(nd_array *x0, int iters)
{
    nd_body *b = suite_small_ops_step_body(x0);
    if (!b)
        return NULL;
    nd_array *x = nd_retain(x0);
    for (int it = 0; it < iters && x; it++) {
        nd_array *y = nd_body_call(b, &x);
        nd_free(x);
        x = y;
    }
    nd_body_free(b); /* the pending calls keep it */
    return x;
}

nd_array *suite_chain_record(nd_array *a, nd_array *b)
{
    nd_scope_begin();
    nd_array *y = nd_keep(nd_add(nd_mul(nd_sin(a), nd_cos(b)),
                                 nd_mul(nd_sqrt(nd_abs(nd_mul(a, b))), nd_exp(nd_neg(nd_mul(a, a))))));
    nd_scope_end();
    return y;
}

nd_array *suite_scope_sum_record(nd_array *x, nd_array *y)
{
    nd_array *xy = nd_mul(x, y);
    nd_array *z = nd_add(nd_sin(xy), nd_cos(x));
    nd_array *w = nd_mul(nd_exp(nd_neg(nd_square(y))), nd_sqrt(nd_abs(xy)));
    return nd_sum(nd_add(z, w), ND_ALL_AXES);
}

double suite_scope_term(double x, double y)
{
    return sin(x * y) + cos(x) + exp(-(y * y)) * sqrt(fabs(x * y));
}

nd_status suite_normalise_matmul_record(nd_array *x, nd_array *w1, nd_array *w2, nd_array **out)
{
    nd_scope_begin();
    int ax0[] = {0};
    nd_array *mean = nd_mean_axes(x, 1, ax0, true);
    nd_array *sd = nd_std_axes(x, 1, ax0, 0.0, true);
    nd_array *z = nd_div(nd_sub(x, mean), sd);
    out[0] = nd_keep(nd_matmul(z, w1));
    out[1] = nd_keep(nd_matmul(z, w2));
    out[2] = nd_keep(nd_matmul(nd_transpose(z, NULL), z));
    nd_scope_end();
    return out[0] && out[1] && out[2] ? ND_OK : nd_last_status();
}

void suite_normalise_ref(const float *x, int64_t n, double *z)
{
    for (int64_t j = 0; j < n; j++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; i++)
            m += x[i * n + j];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++)
            v += (x[i * n + j] - m) * (x[i * n + j] - m);
        double sd = sqrt(v / (double)n);
        for (int64_t i = 0; i < n; i++)
            z[i * n + j] = (x[i * n + j] - m) / sd;
    }
}

double suite_product_ref(const double *z, const float *w, int p, int64_t i, int64_t j, int64_t n)
{
    double acc = 0;
    for (int64_t k = 0; k < n; k++)
        acc += (p == 2 ? z[k * n + i] : z[i * n + k]) * (p == 2 ? z[k * n + j] : (double)w[k * n + j]);
    return acc;
}
