/*
 * suite_patterns.h — the recording of suite workloads, shared by the suite
 * (nd_suite_elementwise.c, nd_suite_stencil.c, nd_suite_patterns.c),
 * host_overhead.c and sync_breakdown.c, which time the host side of exactly
 * these calls, and scope_read.c / shared_operand.c.
 */
#ifndef ND_BENCH_SUITE_PATTERNS_H
#define ND_BENCH_SUITE_PATTERNS_H

#include <nd.h>

/* One Jacobi sweep of u's interior, NumPy semantics: the right-hand side is
 * computed in full before the interior is overwritten (nd_assign guarantees
 * it). */
nd_status suite_jacobi_step(nd_array *u);
/* Its float64 reference: `iters` sweeps over g (rows x cols, row-major) in
 * suite_jacobi_step's order of adds, in place, the border fixed; tmp holds
 * rows * cols doubles. */
void suite_jacobi_ref(double *g, double *tmp, int64_t rows, int64_t cols, int iters);
/* `iters` steps of x = x*0.99 + 0.01*sin(x) from x0, recorded; only the
 * newest x stays alive. NULL (with nd's error) on failure. */
nd_array *suite_small_ops_record(nd_array *x0, int iters);
/* The same steps as one traced body (include/nd/body.h): traced once per
 * run (a few microseconds), then one node per step. Same bits. */
nd_array *suite_small_ops_body_record(nd_array *x0, int iters);
/* That body: small_ops' step traced for inputs like x0 (nd_body_free it). */
nd_body *suite_small_ops_step_body(nd_array *x0);
/* The chain sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a), recorded; the result
 * is kept (nd_keep), its temporaries are not. NULL on failure. */
nd_array *suite_chain_record(nd_array *a, nd_array *b);

/* The scope-read pattern's values, recorded in the caller's scope (every
 * one a named handle there): z = sin(x*y) + cos(x) and
 * w = exp(-y*y) * sqrt(abs(x*y)); returns sum(z + w) over every axis (a
 * 0-d array). The float64 value of one element is suite_scope_term. */
nd_array *suite_scope_sum_record(nd_array *x, nd_array *y);
double suite_scope_term(double x, double y);
/* The shared-operand pattern: z = (x - mean(x, 0)) / std(x, 0) (keepdims),
 * out[0] = z @ w1, out[1] = z @ w2, out[2] = z.T @ z; the outputs are kept
 * (nd_keep), z and the statistics are freed with the scope this opens. */
nd_status suite_normalise_matmul_record(nd_array *x, nd_array *w1, nd_array *w2, nd_array **out);
/* Its float64 reference: z of the n x n row-major x, and element (i, j) of
 * product p (0: z @ w1, 1: z @ w2, 2: z.T @ z; w: w1 or w2 for p < 2). */
void suite_normalise_ref(const float *x, int64_t n, double *z);
double suite_product_ref(const double *z, const float *w, int p, int64_t i, int64_t j, int64_t n);

#endif
