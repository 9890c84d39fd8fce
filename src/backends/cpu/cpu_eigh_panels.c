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
 * block of ND_EIGH_NB reflectors, in dormqr's order, to its own panel,
 * which stays in its core's cache; the blocks' triangular factors are
 * formed first, over the pool too. Panels and blocks are fixed sizes, so
 * this phase's arithmetic, and its bits, do not depend on the thread count
 * (dstedc is nd_cpu_stedc, over the pool: cpu_stedc.c). Against dormtr the
 * eigenvectors differ by rounding only (the block size: a few units in the
 * last place).
 *
 * dsytrd reduces the lower triangle (the caller's column-major upper one,
 * transposed into place): with OpenBLAS 0.3.21's SkylakeX kernels on the
 * H200's host its 'L' took 10-25% less than its 'U' at every n from 256 to
 * 1024, and it runs on sytrd_threads(n) of the BLAS's threads, not all
 * (bench/results/2026-12-01-session20-eigh-sytrd.md): its BLAS-2 half is a
 * dsymv a column, whose threads' start costs more than they save on small
 * matrices. dsytrd's bits depend on that thread count.
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

/* Reflectors [i, i + ib) of Q (dormqr on rows 2..n: reflector i's vector
 * in column i, its unit element in row i + 1), as a block of rows
 * [i + 1, n): returns that row count. */
static lapack_int block_rows(const back_job *b, int64_t i, int64_t *ib) {
    int64_t k = b->n - 1;
    *ib = k - i < ND_EIGH_NB ? k - i : ND_EIGH_NB;
    return (lapack_int)(b->n - 1 - i);
}

static char *block_v(const back_job *b, int64_t i) { return b->q + (size_t)(i * b->n + i + 1) * b->es; }
static char *block_t(const back_job *b, int64_t blk) { return b->t + (size_t)(blk * ND_EIGH_NB * ND_EIGH_NB) * b->es; }

static void form_factor(void *arg, int blk) {
    back_job *b = arg;
    int64_t i = (int64_t)blk * ND_EIGH_NB, ib;
    lapack_int mi = block_rows(b, i, &ib);
    SD(b->f64, larft, 'F', 'C', mi, (lapack_int)ib, (void *)block_v(b, i), (lapack_int)b->n,
       (void *)(b->tau + (size_t)i * b->es), (void *)block_t(b, blk), ND_EIGH_NB);
}

/* Q = H(1) H(2) ... H(n - 1) applied to panel p of Z: the last block
 * first, as dormqr('L', 'N') does. */
static void apply_panel(void *arg, int p) {
    back_job *b = arg;
    double work[ND_EIGH_PANEL * ND_EIGH_NB]; /* dlarfb's, ld = the panel's width */
    int64_t c0 = (int64_t)p * ND_EIGH_PANEL, pw = b->n - c0 < ND_EIGH_PANEL ? b->n - c0 : ND_EIGH_PANEL;
    char *zp = b->z + (size_t)(c0 * b->n) * b->es;
    for (int64_t blk = (b->n - 2) / ND_EIGH_NB; blk >= 0; blk--) {
        int64_t i = blk * ND_EIGH_NB, ib;
        lapack_int mi = block_rows(b, i, &ib);
        SD(b->f64, larfb, 'L', 'N', 'F', 'C', mi, (lapack_int)pw, (lapack_int)ib, (void *)block_v(b, i),
           (lapack_int)b->n, (void *)block_t(b, blk), ND_EIGH_NB, (void *)(zp + (size_t)(i + 1) * b->es),
           (lapack_int)b->n, (void *)work, (lapack_int)pw);
    }
}

/* dst = src transposed (n x n), in tiles that stay in cache. */
#define TRANSPOSE(T, dst, src, n)                                                           \
    for (int64_t j0 = 0; j0 < (n); j0 += 32)                                                \
        for (int64_t i0 = 0; i0 < (n); i0 += 32)                                            \
            for (int64_t j = j0; j < j0 + 32 && j < (n); j++)                               \
                for (int64_t i = i0; i < i0 + 32 && i < (n); i++) ((T *)(dst))[i + j * (n)] = ((const T *)(src))[j + i * (n)]

/* The BLAS threads dsytrd runs on for an n x n matrix, of `now`: on the
 * H200's host (16 cores, OpenBLAS 0.3.21 SkylakeX, 'L') one thread was
 * quickest up to n = 256 (1.4-1.6 ms against 2.1-2.2 on 16), 4 at 384,
 * 6-8 at 512 and 768, 8-12 at 1024, never 16 (the session-20 results file
 * above); n / 96 follows that. */
static int sytrd_threads(int64_t n, int now) {
    int64_t t = n < 320 ? 1 : n / 96;
    return now > 0 && t > now ? now : (int)t;
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
        SD(f64, sytrd, 'L', nn, NULL, nn, NULL, NULL, NULL, f64 ? (void *)qd : (void *)qs, -1);
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

    /* a's upper triangle (the one dsyevd 'U' reads) as q's lower */
    if (f64) TRANSPOSE(double, b.q, a, n);
    else TRANSPOSE(float, b.q, a, n);
    /* nd_cpu_blas_threads_set changes nothing when the count is already
     * right, and returns -1 where the BLAS has no thread control */
    int blas_before = nd_cpu_blas_threads_set(sytrd_threads(n, nd_cpu_blas_threads_get()));
    lapack_int info = SD(f64, sytrd, 'L', nn, (void *)b.q, nn, w, (void *)e, (void *)tau, (void *)work, (lapack_int)lwork);
    if (blas_before > 0) nd_cpu_blas_threads_set(blas_before);
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
