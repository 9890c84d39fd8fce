/* The dense linear algebra routines (common/lib_linalg.h) on the CPU:
 * LAPACK through LAPACKE's column-major *_work functions (no row-major
 * transposes inside LAPACKE, no allocation but nd's: workspaces are sized
 * by LAPACK's own query and taken with nd_malloc). A batch is split over
 * nd's pool, one matrix per LAPACK call, each range with its own
 * workspace; a single matrix runs on the calling thread, where OpenBLAS
 * uses its own threads (eigh of a large real one spreads its last phase
 * over the pool as well: cpu_eigh_panels.c). A batch over the pool gives
 * the same bits for any thread count (each matrix is factored alone, the
 * BLAS single-threaded); a matrix in the BLAS's threads gives the same
 * bits from run to run, but they depend on the thread count (OpenBLAS
 * splits its sums by it). A failure names the lowest failing matrix.
 *
 * Every routine takes the four LAPACK types (s, d, c, z): LA_CALL picks the
 * function by the job's kind where their signatures agree; where they
 * differ (orgqr/ungqr, syevd/heevd, gesdd and geev with their real
 * workspaces) the routine says so.
 */
#include <assert.h>
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_linalg.h"

static_assert(sizeof(lapack_int) == sizeof(int32_t), "LU pivots are int32 arrays: nd needs LAPACKE's 32-bit ints");

typedef struct la_job la_job;
typedef int64_t (*la_matrix_fn)(la_job *j, int64_t b, void *ws); /* LAPACK's info */

/* The LAPACK type of a job: its letter's position in "sdcz". */
enum { LA_S, LA_D, LA_C, LA_Z };

/* One LAPACKE_*_work call for the job's type (pointer arguments are void *
 * here and convert to each variant's element type). */
#define LA_CALL(j, fn, ...)                                                          \
    ((j)->kind == LA_S   ? LAPACKE_s##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__)       \
     : (j)->kind == LA_D ? LAPACKE_d##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__)       \
     : (j)->kind == LA_C ? LAPACKE_c##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__)       \
                         : LAPACKE_z##fn##_work(LAPACK_COL_MAJOR, __VA_ARGS__))

struct la_job {
    const nd_user_desc *u;
    const nd_kernel_arg *args;
    int f64;                 /* double precision (d, z) */
    int kind;                /* LA_S .. LA_Z */
    int64_t m, n, batch;     /* the matrices' geometry (per routine) */
    int64_t aux;             /* a routine's own count (eigh: lrwork) */
    size_t ws_bytes;         /* per range */
    la_matrix_fn one;        /* one matrix */
    pthread_mutex_t lock;
    int64_t bad, bad_info;   /* the lowest failing matrix and its info */
    int oom;
};

/* The size of an element of the job's type, and of its real part. */
static size_t esize(const la_job *j) { return (j->f64 ? sizeof(double) : sizeof(float)) * (j->kind >= LA_C ? 2 : 1); }
static size_t rsize(const la_job *j) { return j->f64 ? sizeof(double) : sizeof(float); }
static int cplx(const la_job *j) { return j->kind >= LA_C; }
/* Matrix b of argument a (of elems elements of a's own dtype). */
static char *mat(const la_job *j, int a, int64_t b, int64_t elems) {
    return (char *)j->args[a].data + (size_t)(b * elems) * nd_dtype_itemsize((nd_dtype)j->args[a].dtype);
}
/* A workspace query's answer (the real part of work[0]). */
static double ws_answer(const la_job *j, const void *w) {
    return j->f64 ? *(const double *)w : (double)*(const float *)w;
}
/* 1 unless element i of the job's type is 0 (for identities). */
static void set_one(const la_job *j, void *base, int64_t i) {
    if (j->f64) ((double *)base)[i * (cplx(j) ? 2 : 1)] = 1;
    else ((float *)base)[i * (cplx(j) ? 2 : 1)] = 1;
}
static lapack_int ld(int64_t n) { return n > 0 ? (lapack_int)n : 1; }

static void run_range(void *varg, int64_t begin, int64_t end) {
    la_job *j = varg;
    void *ws = j->ws_bytes ? nd_malloc(j->ws_bytes) : NULL;
    if (j->ws_bytes && !ws) {
        pthread_mutex_lock(&j->lock);
        j->oom = 1;
        pthread_mutex_unlock(&j->lock);
        return;
    }
    for (int64_t b = begin; b < end; b++) {
        int64_t info = j->one(j, b, ws);
        if (info == 0) continue;
        pthread_mutex_lock(&j->lock);
        if (j->bad < 0 || b < j->bad) {
            j->bad = b;
            j->bad_info = info;
        }
        pthread_mutex_unlock(&j->lock);
        break; /* later matrices of this range cannot be the lowest */
    }
    free(ws);
}

/* Matrices of about n^3 flops: ranges of at least ~2^18 flops each.
 * LAPACK calls the BLAS, which is threaded itself: one BLAS call per pool
 * worker at the BLAS's full thread count would put workers x BLAS threads
 * on the cores, and a BLAS that splits its work statically then waits for
 * its descheduled threads. So a batch spread over the pool runs with the
 * BLAS single-threaded (one matrix per core), and a batch of large
 * matrices too short to fill the pool runs one matrix at a time on the
 * BLAS's threads instead. */
#define LA_BIG_FLOPS ((double)(1 << 24)) /* ~256^3: the BLAS's threads pay off */
static int64_t batch_grain(const nd_cpu_state *st, const la_job *j, int64_t cost_n) {
    double flops = (double)cost_n * (double)cost_n * (double)cost_n + 1;
    int64_t grain = flops >= (1 << 18) ? 1 : (int64_t)((1 << 18) / flops);
    if (flops >= LA_BIG_FLOPS && j->batch < st->num_threads) grain = j->batch;
    return grain;
}
/* Whether the batch goes over the pool (else one matrix at a time on the
 * calling thread, the BLAS threaded). */
static int batch_spreads(const nd_cpu_state *st, const la_job *j, int64_t cost_n) {
    return st->num_threads > 1 && j->batch / batch_grain(st, j, cost_n) >= 2;
}
static nd_status batch_result(la_job *j);

static nd_status run_batch(nd_cpu_state *st, la_job *j, int64_t cost_n) {
    j->bad = -1;
    pthread_mutex_init(&j->lock, NULL);
    int64_t grain = batch_grain(st, j, cost_n);
    int spread = batch_spreads(st, j, cost_n);
    int blas_before = spread ? nd_cpu_blas_threads_set(1) : -1;
    nd_cpu_parallel_for(st, j->batch, grain, run_range, j);
    if (blas_before > 0) nd_cpu_blas_threads_set(blas_before);
    pthread_mutex_destroy(&j->lock);
    return batch_result(j);
}

/* The batch's outcome: out of memory, an argument LAPACK rejected, or the
 * lowest failing matrix (j->bad) with its info. */
static nd_status batch_result(la_job *j) {
    if (j->oom)
        return nd_error_set(ND_ERR_OOM, "cpu backend: out of host memory for a %s workspace of %zu bytes",
                            nd_lib_calls[j->u->lib].name, j->ws_bytes);
    if (j->bad_info < 0)
        return nd_error_set(ND_ERR_BACKEND, "cpu backend: LAPACK rejected argument %lld of %s (an nd bug)",
                            (long long)-j->bad_info, nd_lib_calls[j->u->lib].name);
    if (j->bad >= 0) return nd_lib_la_error((int)j->u->lib_args.v[ND_LA_FN_ARG].i, j->bad, j->batch, j->bad_info);
    return ND_OK;
}

static nd_status la_setup(la_job *j, const nd_user_desc *u, const nd_kernel_arg *args, int64_t m, int64_t n) {
    memset(j, 0, sizeof *j);
    j->u = u;
    j->args = args;
    nd_dtype t = (nd_dtype)args[0].dtype;
    j->f64 = t == ND_FLOAT64 || t == ND_COMPLEX128;
    j->kind = t == ND_FLOAT32 ? LA_S : t == ND_FLOAT64 ? LA_D : t == ND_COMPLEX64 ? LA_C : LA_Z;
    j->m = m;
    j->n = n;
    j->batch = 1; /* the leading axes (empty matrices count too) */
    for (int d = 0; d < args[0].ndim - 2; d++) j->batch *= args[0].shape[d];
    if (t != ND_FLOAT64 && t != ND_FLOAT32 && t != ND_COMPLEX64 && t != ND_COMPLEX128)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: %s of %s (float32, float64, complex64, complex128)",
                            nd_lib_calls[u->lib].name, nd_dtype_name((nd_dtype)args[0].dtype));
    return ND_OK;
}

static int64_t last(const nd_kernel_arg *a, int k) { return a->ndim >= k ? a->shape[a->ndim - k] : 1; }

/* ------------------------------------------------------------ cholesky */

static int64_t cholesky_one(la_job *j, int64_t b, void *ws) {
    (void)ws;
    int64_t n = j->n;
    size_t es = esize(j);
    char *c = mat(j, 1, b, n * n), *in = mat(j, 0, b, n * n);
    /* potrf's column-major upper form on the row-major lower triangle
     * (read column-major it is the upper triangle of A^T = conj(A), whose
     * factor U^H U leaves U^T = L, A = L L^H, in place): no transposes
     * here, unlike the CUDA backend, whose potrf is much slower in that
     * form (lib_cholesky.c). Only the lower triangle is copied (all that
     * is read, as NumPy reads A), and the strict upper triangle is zeroed,
     * so every element of C is written. */
    if (c != in)
        for (int64_t i = 0; i < n; i++) memcpy(c + (size_t)(i * n) * es, in + (size_t)(i * n) * es, (size_t)(i + 1) * es);
    lapack_int info = LA_CALL(j, potrf, 'U', (lapack_int)n, (void *)c, ld(n));
    for (int64_t i = 0; i + 1 < n; i++) memset(c + (size_t)(i * n + i + 1) * es, 0, (size_t)(n - i - 1) * es);
    return info;
}

nd_status nd_cpu_lib_la_cholesky(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    nd_status s = la_setup(&j, u, args, last(&args[0], 1), last(&args[0], 1));
    if (s != ND_OK) return s;
    j.one = cholesky_one;
    return run_batch(st, &j, j.n);
}

/* ------------------------------------------------------------ lu */

static int64_t lu_one(la_job *j, int64_t b, void *ws) {
    (void)ws;
    int64_t n = j->n;
    char *lu = mat(j, 1, b, n * n);
    lapack_int *piv = (lapack_int *)j->args[2].data + b * n;
    memcpy(lu, mat(j, 0, b, n * n), (size_t)(n * n) * esize(j));
    lapack_int info = LA_CALL(j, getrf, (lapack_int)n, (lapack_int)n, (void *)lu, ld(n), piv);
    return info > 0 ? 0 : info; /* singular: det 0, not an error */
}

nd_status nd_cpu_lib_la_lu(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    nd_status s = la_setup(&j, u, args, last(&args[0], 1), last(&args[0], 1));
    if (s != ND_OK) return s;
    j.one = lu_one;
    return run_batch(st, &j, j.n);
}

/* ------------------------------------------------------------ solve */

/* Small systems (n <= SMALL_N, a batch of 8x8 say) skip LAPACK, whose
 * per-call cost is most of the work there: Gaussian elimination with
 * partial pivoting (getrf's choice of pivot, on A's rows as NumPy's gesv
 * does: the largest |re| + |im|, LAPACK's cabs1 for complex) in the
 * matrix's own dtype, on a copy in ws. */
#define SMALL_N 16
#define SMALL_SOLVE(NAME, T, MAG)                                                            \
    static int64_t NAME(const T *a_in, const T *b_in, T *x, int64_t n, int64_t k, T *lu) {   \
        memcpy(lu, a_in, (size_t)(n * n) * sizeof(T));                                       \
        memcpy(x, b_in, (size_t)(n * k) * sizeof(T)); /* x[c * n + i]: column c, row i */    \
        for (int64_t c = 0; c < n; c++) {                                                    \
            int64_t p = c;                                                                   \
            double best = MAG(lu[c * n + c]);                                                \
            for (int64_t r = c + 1; r < n; r++) {                                            \
                double v = MAG(lu[r * n + c]);                                               \
                if (v > best) best = v, p = r;                                               \
            }                                                                                \
            if (lu[p * n + c] == 0) return c + 1;                                            \
            if (p != c) {                                                                    \
                for (int64_t q = 0; q < n; q++) {                                            \
                    T t = lu[c * n + q];                                                     \
                    lu[c * n + q] = lu[p * n + q], lu[p * n + q] = t;                        \
                }                                                                            \
                for (int64_t q = 0; q < k; q++) {                                            \
                    T t = x[q * n + c];                                                      \
                    x[q * n + c] = x[q * n + p], x[q * n + p] = t;                           \
                }                                                                            \
            }                                                                                \
            T inv = (T)1 / lu[c * n + c];                                                    \
            for (int64_t r = c + 1; r < n; r++) {                                            \
                T f = lu[r * n + c] * inv;                                                   \
                for (int64_t q = c + 1; q < n; q++) lu[r * n + q] -= f * lu[c * n + q];      \
                for (int64_t q = 0; q < k; q++) x[q * n + r] -= f * x[q * n + c];            \
            }                                                                                \
        }                                                                                    \
        for (int64_t q = 0; q < k; q++) /* back substitution */                              \
            for (int64_t r = n - 1; r >= 0; r--) {                                           \
                T acc = x[q * n + r];                                                        \
                for (int64_t c = r + 1; c < n; c++) acc -= lu[r * n + c] * x[q * n + c];     \
                x[q * n + r] = acc / lu[r * n + r];                                          \
            }                                                                                \
        return 0;                                                                            \
    }
#define MAG_REAL(v) fabs((double)(v))
#define MAG_CPLX(v) (fabs((double)creal(v)) + fabs((double)cimag(v)))
SMALL_SOLVE(small_solve_d, double, MAG_REAL)
SMALL_SOLVE(small_solve_s, float, MAG_REAL)
SMALL_SOLVE(small_solve_z, double complex, MAG_CPLX)
SMALL_SOLVE(small_solve_c, float complex, MAG_CPLX)

static int64_t solve_one(la_job *j, int64_t b, void *ws) {
    int64_t n = j->n, k = j->m;
    if (n <= SMALL_N) {
        const void *a = mat(j, 0, b, n * n), *rhs = mat(j, 1, b, k * n);
        void *x = mat(j, 2, b, k * n);
        switch (j->kind) {
        case LA_S: return small_solve_s(a, rhs, x, n, k, ws);
        case LA_D: return small_solve_d(a, rhs, x, n, k, ws);
        case LA_C: return small_solve_c(a, rhs, x, n, k, ws);
        default: return small_solve_z(a, rhs, x, n, k, ws);
        }
    }
    char *lu = ws;
    lapack_int *piv = (lapack_int *)(lu + (size_t)(n * n) * esize(j));
    char *x = mat(j, 2, b, k * n);
    memcpy(lu, mat(j, 0, b, n * n), (size_t)(n * n) * esize(j));
    memcpy(x, mat(j, 1, b, k * n), (size_t)(k * n) * esize(j));
    /* The buffer is A^T column-major: factor it, then solve with its
     * transpose (not the conjugate one), A. */
    lapack_int info = LA_CALL(j, getrf, (lapack_int)n, (lapack_int)n, (void *)lu, ld(n), piv);
    if (info != 0 || k == 0) return info;
    return LA_CALL(j, getrs, 'T', (lapack_int)n, (lapack_int)k, (const void *)lu, ld(n), piv, (void *)x, ld(n));
}

nd_status nd_cpu_lib_la_solve(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    nd_status s = la_setup(&j, u, args, last(&args[1], 2), last(&args[0], 1));
    if (s != ND_OK) return s;
    j.one = solve_one;
    j.ws_bytes = (size_t)(j.n * j.n) * esize(&j) + (size_t)j.n * sizeof(lapack_int) + 16;
    return run_batch(st, &j, j.n);
}

/* ------------------------------------------------------------ qr */

/* args: AT (n, m) = A column-major (m x n); QT (qc, m); RAW (n, m). */
static lapack_int qr_geqrf(la_job *j, int64_t m, int64_t n, void *a, void *tau, void *work, lapack_int lwork) {
    return LA_CALL(j, geqrf, (lapack_int)m, (lapack_int)n, a, ld(m), tau, work, lwork);
}
/* Q from the reflectors: orgqr for real types, ungqr for complex ones
 * (the same arguments). */
static lapack_int qr_orgqr(la_job *j, int64_t m, int64_t qc, int64_t k, void *q, const void *tau, void *work,
                           lapack_int lwork) {
    lapack_int mm = (lapack_int)m, nq = (lapack_int)qc, kk = (lapack_int)k;
    switch (j->kind) {
    case LA_S: return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, mm, nq, kk, q, ld(m), tau, work, lwork);
    case LA_D: return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, mm, nq, kk, q, ld(m), tau, work, lwork);
    case LA_C: return LAPACKE_cungqr_work(LAPACK_COL_MAJOR, mm, nq, kk, q, ld(m), tau, work, lwork);
    default: return LAPACKE_zungqr_work(LAPACK_COL_MAJOR, mm, nq, kk, q, ld(m), tau, work, lwork);
    }
}

static int64_t qr_one(la_job *j, int64_t b, void *ws) {
    int64_t m = j->m, n = j->n, k = m < n ? m : n, qc = j->u->lib_args.v[0].i;
    size_t es = esize(j);
    int64_t lwork = (int64_t)(j->ws_bytes / es) - k - 2;
    char *tau = ws, *work = tau + (size_t)(k + 1) * es;
    char *raw = mat(j, 2, b, n * m), *q = mat(j, 1, b, qc * m);
    memcpy(raw, mat(j, 0, b, n * m), (size_t)(n * m) * es);
    if (k == 0) { /* no reflectors: Q is the identity */
        memset(q, 0, (size_t)(qc * m) * es);
        for (int64_t i = 0; i < qc && i < m; i++) set_one(j, q, i * m + i);
        return 0;
    }
    lapack_int info = qr_geqrf(j, m, n, raw, tau, work, (lapack_int)lwork);
    if (info != 0 || qc == 0) return info;
    int64_t copy = qc < n ? qc : n; /* Q's first columns hold the reflectors */
    memcpy(q, raw, (size_t)(copy * m) * es);
    return qr_orgqr(j, m, qc, k, q, tau, work, (lapack_int)lwork);
}

nd_status nd_cpu_lib_la_qr(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    nd_status s = la_setup(&j, u, args, last(&args[0], 1), last(&args[0], 2));
    if (s != ND_OK) return s;
    j.one = qr_one;
    int64_t m = j.m, n = j.n, k = m < n ? m : n, qc = u->lib_args.v[0].i;
    double w1 = 0, w2 = 0;
    if (k > 0) { /* LAPACK's workspace queries */
        double q1[2] = {0, 0}, q2[2] = {0, 0};
        qr_geqrf(&j, m, n, NULL, NULL, q1, -1);
        if (qc) qr_orgqr(&j, m, qc, k, NULL, NULL, q2, -1);
        w1 = ws_answer(&j, q1);
        w2 = ws_answer(&j, q2);
    }
    int64_t lwork = (int64_t)(w1 > w2 ? w1 : w2) + 1;
    if (lwork < n + 1) lwork = n + 1;
    if (lwork < qc + 1) lwork = qc + 1;
    j.ws_bytes = (size_t)(lwork + k + 2) * esize(&j);
    return run_batch(st, &j, k ? k : 1);
}

/* ------------------------------------------------------------ svd */

/* gesdd for the job's type: the complex ones take a real workspace more. */
static lapack_int svd_call(la_job *j, char jobz, int64_t n, int64_t m, void *a, void *s, void *u, void *vt,
                           lapack_int ldvt, void *work, lapack_int lwork, void *rwork, lapack_int *iwork) {
    lapack_int nn = (lapack_int)n, mm = (lapack_int)m;
    switch (j->kind) {
    case LA_S: return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, nn, mm, a, ld(n), s, u, ld(n), vt, ldvt, work, lwork, iwork);
    case LA_D: return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, nn, mm, a, ld(n), s, u, ld(n), vt, ldvt, work, lwork, iwork);
    case LA_C:
        return LAPACKE_cgesdd_work(LAPACK_COL_MAJOR, jobz, nn, mm, a, ld(n), s, u, ld(n), vt, ldvt, work, lwork, rwork, iwork);
    default:
        return LAPACKE_zgesdd_work(LAPACK_COL_MAJOR, jobz, nn, mm, a, ld(n), s, u, ld(n), vt, ldvt, work, lwork, rwork, iwork);
    }
}

/* gesdd's real workspace (complex types), in elements. */
static int64_t svd_rwork(const la_job *j, int64_t m, int64_t n, int uv) {
    if (!cplx(j)) return 0;
    int64_t mn = m < n ? m : n, mx = m < n ? n : m;
    if (!uv) return 7 * mn + 8;
    int64_t a = 5 * mn * mn + 5 * mn, b = 2 * mx * mn + 2 * mn * mn + mn;
    return (a > b ? a : b) + 8;
}

/* LAPACK sees A^T (n x m column-major): A^T = W S Z^H, so A = conj(Z) S
 * W^T: its U, W, written straight into VH (whose row-major rows are W's
 * columns), is V^H; its VT, Z^H column-major, becomes UT = U^H = Z^T, the
 * conjugate of its elements in transposed order (real types: no
 * conjugation). */
static int64_t svd_one(la_job *j, int64_t b, void *ws) {
    int64_t m = j->m, n = j->n, k = m < n ? m : n;
    int uv = (int)j->u->lib_args.v[0].i, full = (int)j->u->lib_args.v[1].i;
    int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
    size_t es = esize(j);
    char *a = ws, *vt = a + (size_t)(m * n) * es;
    lapack_int *iwork = (lapack_int *)(vt + (size_t)(cu * m) * es);
    char *rwork = (char *)(iwork + 8 * k + 8);
    char *work = rwork + (size_t)svd_rwork(j, m, n, uv) * rsize(j);
    int64_t lwork = (int64_t)((j->ws_bytes - (size_t)(work - a)) / es);
    char *s = mat(j, 1, b, k), *ut = mat(j, 2, b, cu * m), *vh = mat(j, 3, b, cv * n);
    if (k == 0) { /* no singular values: full U and V are identities */
        memset(ut, 0, (size_t)(cu * m) * es);
        memset(vh, 0, (size_t)(cv * n) * es);
        for (int64_t i = 0; i < cu; i++) set_one(j, ut, i * m + i);
        for (int64_t i = 0; i < cv; i++) set_one(j, vh, i * n + i);
        return 0;
    }
    memcpy(a, mat(j, 0, b, m * n), (size_t)(m * n) * es);
    char jobz = !uv ? 'N' : full ? 'A' : 'S';
    lapack_int info = svd_call(j, jobz, n, m, a, s, vh, vt, ld(cu), work, (lapack_int)lwork, rwork, iwork);
    if (info == -5) return ND_LA_INFO_NAN; /* LAPACK refuses a NaN in A (argument 4, LAPACKE's 5) */
    if (info != 0 || !uv) return info;
    for (int64_t r = 0; r < cu; r++) /* UT[r][c] = conj(vt column-major (r, c)) */
        for (int64_t c = 0; c < m; c++) {
            switch (j->kind) {
            case LA_S: ((float *)ut)[r * m + c] = ((const float *)vt)[c * cu + r]; break;
            case LA_D: ((double *)ut)[r * m + c] = ((const double *)vt)[c * cu + r]; break;
            case LA_C: ((float complex *)ut)[r * m + c] = conjf(((const float complex *)vt)[c * cu + r]); break;
            default: ((double complex *)ut)[r * m + c] = conj(((const double complex *)vt)[c * cu + r]); break;
            }
        }
    return 0;
}

nd_status nd_cpu_lib_la_svd(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    nd_status s = la_setup(&j, u, args, last(&args[0], 2), last(&args[0], 1));
    if (s != ND_OK) return s;
    j.one = svd_one;
    int64_t m = j.m, n = j.n, k = m < n ? m : n;
    int uv = (int)u->lib_args.v[0].i, full = (int)u->lib_args.v[1].i;
    int64_t cu = uv ? (full ? m : k) : 0;
    char jobz = !uv ? 'N' : full ? 'A' : 'S';
    double w = 0;
    if (k > 0) {
        double q[2] = {0, 0};
        lapack_int iw = 0;
        svd_call(&j, jobz, n, m, NULL, NULL, NULL, NULL, ld(cu), q, -1, NULL, &iw);
        w = ws_answer(&j, q);
    }
    size_t es = esize(&j);
    j.ws_bytes = (size_t)(m * n + cu * m) * es + (size_t)(8 * k + 8) * sizeof(lapack_int) +
                 (size_t)svd_rwork(&j, m, n, uv) * rsize(&j) + ((size_t)w + 16) * es;
    return run_batch(st, &j, k ? (m > n ? m : n) : 1);
}

/* ------------------------------------------------------------ eigh */

/* syevd (real) or heevd (complex: a real workspace more, lrwork elements
 * after liwork's ints). Row-major lower = column-major upper. */
static lapack_int eigh_call(la_job *j, char jobz, int64_t n, void *a, void *w, void *work, lapack_int lwork,
                            void *rwork, lapack_int lrwork, lapack_int *iwork, lapack_int liwork) {
    lapack_int nn = (lapack_int)n;
    switch (j->kind) {
    case LA_S: return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, 'U', nn, a, ld(n), w, work, lwork, iwork, liwork);
    case LA_D: return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'U', nn, a, ld(n), w, work, lwork, iwork, liwork);
    case LA_C:
        return LAPACKE_cheevd_work(LAPACK_COL_MAJOR, jobz, 'U', nn, a, ld(n), w, work, lwork, rwork, lrwork, iwork,
                                   liwork);
    default:
        return LAPACKE_zheevd_work(LAPACK_COL_MAJOR, jobz, 'U', nn, a, ld(n), w, work, lwork, rwork, lrwork, iwork,
                                   liwork);
    }
}

/* The workspace: liwork ints (j->m), lrwork reals (j->aux), then work. */
static int64_t eigh_one(la_job *j, int64_t b, void *ws) {
    int64_t n = j->n;
    size_t es = esize(j);
    char *vt = mat(j, 2, b, n * n);
    memcpy(vt, mat(j, 0, b, n * n), (size_t)(n * n) * es);
    lapack_int liwork = (lapack_int)j->m, lrwork = (lapack_int)j->aux;
    lapack_int *iwork = ws;
    char *rwork = (char *)(iwork + ((liwork + 1) & ~1)); /* 8-byte aligned */
    char *work = rwork + (size_t)lrwork * rsize(j);
    lapack_int lwork = (lapack_int)((j->ws_bytes - (size_t)(work - (char *)ws)) / es);
    return eigh_call(j, j->u->lib_args.v[0].i ? 'V' : 'N', n, vt, mat(j, 1, b, n), work, lwork, rwork, lrwork, iwork,
                     liwork);
}

/* Large real matrices one at a time (the batch does not go over the pool):
 * dsyevd's phases with the back-transformation spread over the pool
 * (cpu_eigh_panels.c); a matrix it does not take runs dsyevd. */
#define EIGH_PANELS_MIN 256
static nd_status eigh_panels(nd_cpu_state *st, la_job *j) {
    int64_t n = j->n;
    j->bad = -1;
    for (int64_t b = 0; b < j->batch && j->bad < 0 && !j->oom; b++) {
        int64_t info = nd_cpu_eigh_panels(st, j->f64, n, mat(j, 0, b, n * n), mat(j, 1, b, n), mat(j, 2, b, n * n));
        if (info == ND_EIGH_PANELS_NOT_TAKEN) {
            void *ws = nd_malloc(j->ws_bytes);
            if (!ws) {
                j->oom = 1;
                break;
            }
            info = eigh_one(j, b, ws);
            free(ws);
        } else if (info == ND_EIGH_PANELS_OOM) {
            j->oom = 1;
            break;
        }
        if (info != 0) {
            j->bad = b;
            j->bad_info = info;
        }
    }
    return batch_result(j);
}

nd_status nd_cpu_lib_la_eigh(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    int64_t n = last(&args[0], 1);
    nd_status s = la_setup(&j, u, args, n, n);
    if (s != ND_OK) return s;
    j.one = eigh_one;
    double w = 0, rw = 0;
    lapack_int iw = 0;
    char jobz = u->lib_args.v[0].i ? 'V' : 'N';
    if (n > 0) {
        double q[2] = {0, 0}, rq = 0;
        eigh_call(&j, jobz, n, NULL, NULL, q, -1, &rq, -1, &iw, -1);
        w = ws_answer(&j, q);
        rw = cplx(&j) ? ws_answer(&j, &rq) : 0;
    }
    j.m = iw + 1; /* liwork */
    j.aux = cplx(&j) ? (int64_t)rw + 1 : 0;
    j.ws_bytes = (size_t)((j.m + 1) & ~1) * sizeof(lapack_int) + (size_t)j.aux * rsize(&j) +
                 ((size_t)w + 16) * esize(&j);
    if (jobz == 'V' && !cplx(&j) && n >= EIGH_PANELS_MIN && !batch_spreads(st, &j, n)) return eigh_panels(st, &j);
    return run_batch(st, &j, n);
}

/* ------------------------------------------------------------ eig */

/* geev for the job's type: real ones write WR and WI (the two rows of W),
 * complex ones W and take a real workspace of 2n. */
static lapack_int eig_call(la_job *j, char jobvr, int64_t n, void *a, void *w, void *vr, void *work, lapack_int lwork,
                           void *rwork) {
    lapack_int nn = (lapack_int)n;
    size_t half = (size_t)n * rsize(j);
    switch (j->kind) {
    case LA_S:
        return LAPACKE_sgeev_work(LAPACK_COL_MAJOR, 'N', jobvr, nn, a, ld(n), w, w ? (void *)((char *)w + half) : NULL, NULL, 1,
                                  vr, ld(n), work, lwork);
    case LA_D:
        return LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', jobvr, nn, a, ld(n), w, w ? (void *)((char *)w + half) : NULL, NULL, 1,
                                  vr, ld(n), work, lwork);
    case LA_C: return LAPACKE_cgeev_work(LAPACK_COL_MAJOR, 'N', jobvr, nn, a, ld(n), w, NULL, 1, vr, ld(n), work, lwork, rwork);
    default: return LAPACKE_zgeev_work(LAPACK_COL_MAJOR, 'N', jobvr, nn, a, ld(n), w, NULL, 1, vr, ld(n), work, lwork, rwork);
    }
}

/* Any NaN or inf among the matrix's count reals. */
static int non_finite(const la_job *j, const void *a, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        double v = j->f64 ? ((const double *)a)[i] : (double)((const float *)a)[i];
        if (!isfinite(v)) return 1;
    }
    return 0;
}

/* args: AC (n, n) = A column-major; W; VT (n, n). The workspace: A's copy
 * (with vectors; without, VT is the copy), 2n reals, then work. */
static int64_t eig_one(la_job *j, int64_t b, void *ws) {
    int64_t n = j->n;
    int vectors = (int)j->u->lib_args.v[0].i;
    size_t es = esize(j);
    const char *in = mat(j, 0, b, n * n);
    char *vt = mat(j, 2, b, n * n), *w = mat(j, 1, b, (cplx(j) ? 1 : 2) * n);
    if (n == 0) return 0;
    if (non_finite(j, in, n * n * (cplx(j) ? 2 : 1))) return ND_LA_INFO_NAN;
    char *a = vectors ? (char *)ws : vt, *rwork = (char *)ws + (size_t)(n * n) * es;
    char *work = rwork + (size_t)(2 * n + 2) * rsize(j);
    lapack_int lwork = (lapack_int)((j->ws_bytes - (size_t)(work - (char *)ws)) / es);
    memcpy(a, in, (size_t)(n * n) * es);
    return eig_call(j, vectors ? 'V' : 'N', n, a, w, vectors ? vt : NULL, work, lwork, rwork);
}

nd_status nd_cpu_lib_la_eig(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    int64_t n = last(&args[0], 1);
    nd_status s = la_setup(&j, u, args, n, n);
    if (s != ND_OK) return s;
    j.one = eig_one;
    double w = 0;
    if (n > 0) {
        double q[2] = {0, 0}, rq[2] = {0, 0}; /* the query of trevc3 inside writes rwork[0] */
        eig_call(&j, u->lib_args.v[0].i ? 'V' : 'N', n, NULL, NULL, NULL, q, -1, rq);
        w = ws_answer(&j, q);
    }
    j.ws_bytes = (size_t)(n * n) * esize(&j) + (size_t)(2 * n + 2) * rsize(&j) + ((size_t)w + 4 * n + 16) * esize(&j);
    return run_batch(st, &j, n);
}
