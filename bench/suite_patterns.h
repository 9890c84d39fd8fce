/*
 * suite_patterns.h — the recording of suite workloads, shared by the suite
 * (nd_suite_elementwise.c, nd_suite_stencil.c), host_overhead.c and
 * sync_breakdown.c, which time the host side of exactly these calls.
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
/* The chain sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a), recorded; the result
 * is kept (nd_keep), its temporaries are not. NULL on failure. */
nd_array *suite_chain_record(nd_array *a, nd_array *b);

#endif
