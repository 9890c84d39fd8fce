/*
 * nd_suite.h — the workloads of the side-by-side suite (bench/README.md,
 * "Side-by-side suite") as seen by its runner: each one prepares fresh
 * inputs (untimed), records and syncs its work (timed), and checks the
 * result against a float64 host reference (before anything is timed).
 */
#ifndef ND_SUITE_H
#define ND_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nd.h"

/* Problem sizes; suite_sizes_full/suite_sizes_small fill them. The Python
 * peers (bench/peers/suite_common.py) use the same numbers. */
typedef struct {
    int64_t chain_n, bs_n, stencil_n, small_n, pi_n, matmul_n, dot_n, ops_n, sum_n;
    int64_t scope_n, norm_n; /* scope_read's vectors, shared_matmul's n x n */
    /* the sorting, scan and indexing workloads (nd_suite_lib.c) */
    int64_t sort_n, argsort_n, rows_r, rows_c, cumsum_n, gather_n, mask_n, hist_n;
    /* the linear algebra and FFT workloads (nd_suite_la.c): cholesky, solve
     * and eigh n x n, svd n x n, batched 8x8 solves, batched 32x32 svds,
     * fft length, rfft2 n x n, einsum n x n */
    int64_t la_n, svd_n, bsolve_b, bsvd_b, fft_n, rfft2_n, einsum_n;
    int stencil_iters, small_iters, ops_iters;
    double h2d_gib;
} suite_sizes;

/* What one workload holds between its calls. Inputs stay until the next
 * prepare replaces them; outputs are freed by the runner after every run. */
typedef struct {
    const suite_sizes *sz;
    nd_array *in[3];
    nd_array *out[3];
    void *host;     /* stencils: the grid before the checked run; h2d: the source */
    double ref;     /* h2d_sum: float64 sum of the source as it is now;
                       scope_read: the value read inside the scope */
    uint64_t seed;  /* pi, dot: the seed of this run's draws */
} suite_state;

/* What the JSON line reports about a workload's size. bytes < 0 means "no
 * meaningful count" (printed as null): pi and dot draw their inputs inside
 * the kernel, so nothing has to move. */
typedef struct {
    int64_t n;
    double bytes, flops;
} suite_measure;

typedef struct {
    const char *name;
    const char *dtype;
    const char *check_kind; /* "sampled", "full", "scalar" */
    double tol;
    bool check_every_run;   /* cheap checks run after every timed run too */
    bool gpu_only;          /* left out of the default list on the CPU backend */
    bool big;               /* left out of --small runs unless named */
    bool named_only;        /* run only when named (bench/suite.sh --workloads lib) */
    int max_runs;           /* > 0: at most this many timed runs (svd: a run takes seconds) */
    bool tol_per_n_eps;     /* tol is -c: the tolerance is c n eps (suite_tolerance) */
    void (*measure)(const suite_sizes *sz, suite_measure *m);
    /* Fresh inputs, made and synced before the clock starts. for_check:
     * keep whatever the check needs that the run overwrites. */
    nd_status (*prepare)(suite_state *s, bool for_check);
    /* Records the work and waits for it: the timed part. */
    nd_status (*run)(suite_state *s);
    /* Error of the last run against the float64 reference (NaN or infinity
     * for a wrong dtype, an implausible value or a failed read; a line on
     * stderr says which). */
    double (*check)(suite_state *s);
} suite_workload;

/* The workloads, one object each (nd_suite_elementwise.c, nd_suite_stencil.c,
 * nd_suite_reduce.c, nd_suite_h2d.c). */
extern const suite_workload suite_chain, suite_black_scholes, suite_small_ops, suite_small_ops_body;
extern const suite_workload suite_stencil, suite_small_stencil;
extern const suite_workload suite_pi, suite_matmul_chain, suite_dot, suite_sum;
extern const suite_workload suite_h2d_sum;
extern const suite_workload suite_uniform_sum, suite_integers_sum; /* nd_suite_random.c */
extern const suite_workload suite_sort, suite_argsort, suite_sort_rows, suite_cumsum, suite_gather_map,
    suite_mask_select, suite_histogram; /* nd_suite_lib.c */
extern const suite_workload suite_scope_read, suite_shared_matmul; /* nd_suite_patterns.c */
extern const suite_workload suite_cholesky_f32, suite_cholesky_f64, suite_solve_f32, suite_solve_f64,
    suite_eigh_f32, suite_eigh_f64, suite_svd_f32, suite_svd_f64, suite_batched_solve, suite_batched_svd, suite_fft,
    suite_rfft2, suite_fft_window, suite_einsum3; /* nd_suite_la.c */

/* w's tolerance at these sizes (tol, or c n eps; nd_suite_la.c). */
double suite_tolerance(const suite_workload *w, const suite_sizes *sz);

/* ----------------------------------------- shared by the workloads (nd_suite_check.c) */

#define SUITE_SAMPLES 4096 /* elements checked of a large elementwise output */

/* nd_free(*slot), then *slot = value. */
void suite_replace(nd_array **slot, nd_array *value);
/* Syncs after a prepare or run that filled `count` slots of `arr`; a NULL
 * slot means an op failed (its error is set) and is returned as such. */
nd_status suite_settle(nd_array **arr, int count);
/* a's elements in a new malloc'd buffer (`item` bytes each); NULL, with a
 * line on stderr, if reading back failed. */
void *suite_host_copy(nd_array *a, size_t item);
/* false, with a line on stderr, unless a has dtype `want`. */
bool suite_dtype_is(nd_array *a, nd_dtype want, const char *what);
/* Positions spread pseudo-randomly over [0, n): the same every check. */
int64_t suite_next_index(uint64_t *state, int64_t n);

/* ||got - ref|| / ||ref||, accumulated term by term. */
typedef struct {
    double num, den;
} suite_norm_err;
void suite_norm_add(suite_norm_err *e, double got, double ref);
double suite_norm_value(const suite_norm_err *e); /* NaN for a NaN output */

#endif
