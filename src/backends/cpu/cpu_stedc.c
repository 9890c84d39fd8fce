/* The eigenvectors of a symmetric tridiagonal matrix by divide and
 * conquer (LAPACK's dstedc with compz = 'I'), spread over nd's pool.
 *
 * dstedc cuts T into subproblems of at most 25 rows by rank-one changes,
 * solves them with dsteqr, and merges neighbours level by level (dlaed1:
 * deflation in dlaed2, the secular equation's roots in dlaed4, the new
 * vectors, two products with the halves' vectors). Inside dsyevd all of
 * that runs in one thread but for the BLAS's products: on the H200's
 * 16-core host it took 39 ms of dsyevd's ~105 at n = 1024 float64
 * (bench/results/2026-11-30-session18-cpu-eigh.md), and on one core dlaed4
 * and dlaed3's loops were a third of it. Here the leaves are solved side by
 * side; a level with at least as many merges as workers, or with merges of
 * fewer than STEDC_SPREAD_ROWS rows, runs its merges side by side, and the
 * few large merges at the top spread their roots,
 * vectors and products (panels of STEDC_PANEL columns) over the pool. The
 * BLAS runs single-threaded throughout. Each root, row and panel is
 * computed in LAPACK's order whichever thread takes it, so the bits do not
 * depend on the thread count; against dstedc they differ by rounding only
 * (the products' blocking). LAPACK's dsteqr, dlaed2, dlaed4 and dlamrg do
 * the work they do in dstedc. */
#include <float.h>
#include <lapacke.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"

#define STEDC_LEAF 25  /* ILAENV's subproblem size for dlaed0 in reference LAPACK */
#define STEDC_ROOTS 8  /* roots (and vectors) a part */
#define STEDC_ROWS 64  /* rows of the updated z a part */
#define STEDC_PANEL 64 /* columns of the products a part */
/* merges of fewer rows run whole in one thread, side by side: a pool job
 * costs tens of microseconds to start on a 16-core host, and a merge of
 * 128 rows is a few times that */
#define STEDC_SPREAD_ROWS 256

/* Part p of [0, total) cut in steps of `step`, and how many parts there are
 * (both types' steps share them). */
static void stedc_span(lapack_int total, int step, int p, lapack_int *b, lapack_int *e) {
    *b = (lapack_int)p * step;
    *e = *b + step < total ? *b + step : total;
}

static int stedc_parts(lapack_int total, int step) { return (int)((total + step - 1) / step); }

#define R double
#define FN(name) name##_d
#define LA(name) d##name
#define LAE(name) LAPACKE_d##name##_work
#define CB(name) cblas_d##name
#define EPS_HALF (DBL_EPSILON / 2)
#define RSQRT sqrt
#define RABS fabs
#define RSIGN copysign
#include "backends/cpu/cpu_stedc_impl.h"
#undef R
#undef FN
#undef LA
#undef LAE
#undef CB
#undef EPS_HALF
#undef RSQRT
#undef RABS
#undef RSIGN

#define R float
#define FN(name) name##_s
#define LA(name) s##name
#define LAE(name) LAPACKE_s##name##_work
#define CB(name) cblas_s##name
#define EPS_HALF (FLT_EPSILON / 2)
#define RSQRT sqrtf
#define RABS fabsf
#define RSIGN copysignf
#include "backends/cpu/cpu_stedc_impl.h"

int nd_cpu_stedc(nd_cpu_state *st, int f64, int64_t n, void *d, void *e, void *z) {
    int before = nd_cpu_blas_threads_set(1); /* the pool's parts call the BLAS */
    lapack_int info = f64 ? stedc_d(st, (lapack_int)n, d, e, z) : stedc_s(st, (lapack_int)n, d, e, z);
    if (before > 0) nd_cpu_blas_threads_set(before);
    return (int)info;
}
