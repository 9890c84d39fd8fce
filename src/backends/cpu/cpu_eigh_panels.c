/* eigh of one large real symmetric matrix with its vectors: dsyevd's three
 * phases, the last two spread over nd's pool.
 *
 * LAPACK's dsyevd is dsytrd (A = Q T Q^T, T tridiagonal), dstedc (T's
 * eigenvectors Z by divide and conquer) and dormtr (V = Q Z), the first
 * two threaded inside the BLAS. dormtr applies Q's n - 1 reflectors in
 * blocks of ILAENV's 32, each block one dlarfb over the whole of Z: BLAS
 * calls with an inner dimension of 32 that the BLAS's threads split
 * poorly (on the H200's 16-core host it took 34 ms of dsyevd's 108 at
 * n = 1024, about 60 GFLOP/s; bench/results/2026-11-30-session18-cpu-eigh.md).
 * Here Z's columns are cut into panels of ND_EIGH_PANEL, one part of the
 * pool each with the BLAS single-threaded, and each part applies every
 * block of ND_EIGH_NB reflectors, in dormql's order, to its own panel,
 * which stays in its core's cache; the blocks' triangular factors are
 * formed first, over the pool too. Panels and blocks are fixed sizes, so
 * this phase's arithmetic, and its bits, do not depend on the thread count
 * (dsytrd runs in the threaded BLAS, as inside dsyevd; dstedc is
 * nd_cpu_stedc, over the pool: cpu_stedc.c). Against
 * dormtr the eigenvectors differ by rounding only (the block size: a few
 * units in the last place).
 *
 * Only dsyevd's common case is taken: a matrix whose largest entry needs
 * none of its scaling against under- and overflow, and is not NaN. The
 * caller runs dsyevd for the rest. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"

#define ND_EIGH_NB 64    /* reflectors a block (dormtr: 32) */
#define ND_EIGH_PANEL 64 /* columns of Z a part */

/* The s or d LAPACKE_*_work function (void * arguments convert). */
#define SD(f64, fn, ...) ((f64) ? LAPACKE_d##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__) : LAPACKE_s##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__))

typedef struct {
    int f64;
    int64_t n;
    size_t es;      /* element size */
    char *q;        /* dsytrd's reflectors (column-major n x n) */
    const char *tau;
    char *t;        /* the blocks' factors, ND_EIGH_NB x ND_EIGH_NB each */
    char *z;        /* Z, then V (column-major n x n) */
} back_job;

/* Reflectors [i, i + ib) of Q (dormql on Q's columns 2..n: reflector i's
 * vector in column i + 1, its unit element in row i), as a block of
 * rows [0, i + ib). */
static lapack_int block_rows(const back_job *b, int64_t i, int64_t *ib) {
    int64_t k = b->n - 1;
    *ib = k - i < ND_EIGH_NB ? k - i : ND_EIGH_NB;
    return (lapack_int)(i + *ib);
}

static char *block_v(const back_job *b, int64_t i) { return b->q + (size_t)((i + 1) * b->n) * b->es; }
static char *block_t(const back_job *b, int64_t blk) { return b->t + (size_t)(blk * ND_EIGH_NB * ND_EIGH_NB) * b->es; }

static void form_factor(void *arg, int blk) {
    back_job *b = arg;
    int64_t i = (int64_t)blk * ND_EIGH_NB, ib;
    lapack_int mi = block_rows(b, i, &ib);
    SD(b->f64, larft, 'B', 'C', mi, (lapack_int)ib, (void *)block_v(b, i), (lapack_int)b->n,
       (void *)(b->tau + (size_t)i * b->es), (void *)block_t(b, blk), ND_EIGH_NB);
}

/* Q applied to panel p of Z: H(1) first, as dormql('L', 'N') does. */
static void apply_panel(void *arg, int p) {
    back_job *b = arg;
    double work[ND_EIGH_PANEL * ND_EIGH_NB]; /* dlarfb's, ld = the panel's width */
    int64_t c0 = (int64_t)p * ND_EIGH_PANEL, pw = b->n - c0 < ND_EIGH_PANEL ? b->n - c0 : ND_EIGH_PANEL;
    char *zp = b->z + (size_t)(c0 * b->n) * b->es;
    for (int64_t i = 0, blk = 0; i < b->n - 1; i += ND_EIGH_NB, blk++) {
        int64_t ib;
        lapack_int mi = block_rows(b, i, &ib);
        SD(b->f64, larfb, 'L', 'N', 'B', 'C', mi, (lapack_int)pw, (lapack_int)ib, (void *)block_v(b, i),
           (lapack_int)b->n, (void *)block_t(b, blk), ND_EIGH_NB, (void *)zp, (lapack_int)b->n, (void *)work,
           (lapack_int)pw);
    }
}

int nd_cpu_eigh_panels(nd_cpu_state *st, int f64, int64_t n, const void *a, void *w, void *v) {
    size_t es = f64 ? sizeof(double) : sizeof(float);
    lapack_int nn = (lapack_int)n;
    /* dsyevd scales A when its largest entry is outside [rmin, rmax]
     * (eps: dlamch's 'Precision', eps * base; safmin its 'Safe minimum'). */
    double anrm = f64 ? LAPACKE_dlansy_work(LAPACK_COL_MAJOR, 'M', 'U', nn, a, nn, NULL)
                      : LAPACKE_slansy_work(LAPACK_COL_MAJOR, 'M', 'U', nn, a, nn, NULL);
    double eps = f64 ? DBL_EPSILON : FLT_EPSILON, safmin = f64 ? DBL_MIN : FLT_MIN;
    double smlnum = safmin / eps, rmin = sqrt(smlnum), rmax = sqrt(1 / smlnum);
    if (!(anrm == 0 || (anrm >= rmin && anrm <= rmax))) return ND_EIGH_PANELS_NOT_TAKEN;

    /* dsytrd's workspace: LAPACK's own query. */
    double q_trd = 0;
    {
        double qd[2] = {0, 0};
        float qs[2] = {0, 0};
        SD(f64, sytrd, 'U', nn, NULL, nn, NULL, NULL, NULL, f64 ? (void *)qd : (void *)qs, -1);
        q_trd = f64 ? qd[0] : qs[0];
    }
    int64_t lwork = (int64_t)q_trd;
    int64_t blocks = (n - 1 + ND_EIGH_NB - 1) / ND_EIGH_NB;
    size_t bytes = (size_t)(n * n + 2 * n + lwork + 16 + blocks * ND_EIGH_NB * ND_EIGH_NB) * es;
    char *ws = NULL; /* from the backend's cache of freed blocks: no fresh pages every call */
    if (nd_cpu_host_alloc(st->blocks, bytes, (void **)&ws) != ND_OK) return ND_EIGH_PANELS_OOM;
    back_job b = {f64, n, es, ws, NULL, NULL, v};
    char *e = b.q + (size_t)(n * n) * es, *tau = e + (size_t)n * es, *work = tau + (size_t)n * es;
    b.tau = tau;
    b.t = work + (size_t)(lwork + 16) * es;

    memcpy(b.q, a, (size_t)(n * n) * es);
    lapack_int info = SD(f64, sytrd, 'U', nn, (void *)b.q, nn, w, (void *)e, (void *)tau, (void *)work, (lapack_int)lwork);
    if (info == 0) info = nd_cpu_stedc(st, f64, n, w, e, v); /* ND_EIGH_PANELS_OOM passes through */
    if (info == 0 && n > 1) {
        int before = nd_cpu_blas_threads_set(1); /* one BLAS thread a part */
        nd_cpu_run_parts(st, (int)blocks, form_factor, &b);
        nd_cpu_run_parts(st, (int)((n + ND_EIGH_PANEL - 1) / ND_EIGH_PANEL), apply_panel, &b);
        if (before > 0) nd_cpu_blas_threads_set(before);
    }
    nd_cpu_host_release(st->blocks, ws, bytes);
    return info;
}
