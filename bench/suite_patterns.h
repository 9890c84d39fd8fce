/*
 * suite_patterns.h — the recording of two suite workloads, shared by the
 * suite (nd_suite_elementwise.c, nd_suite_stencil.c) and host_overhead.c,
 * which times the host side of exactly these calls.
 */
#ifndef ND_BENCH_SUITE_PATTERNS_H
#define ND_BENCH_SUITE_PATTERNS_H

#include <nd.h>

/* One Jacobi sweep of u's interior, NumPy semantics: the right-hand side is
 * computed in full before the interior is overwritten (nd_assign guarantees
 * it). */
nd_status suite_jacobi_step(nd_array *u);
/* `iters` steps of x = x*0.99 + 0.01*sin(x) from x0, recorded; only the
 * newest x stays alive. NULL (with nd's error) on failure. */
nd_array *suite_small_ops_record(nd_array *x0, int iters);

#endif
