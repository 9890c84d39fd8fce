/* The dense linear algebra routines (common/lib_linalg.h) on the CPU:
 * LAPACK through LAPACKE's column-major *_work functions (no row-major
 * transposes inside LAPACKE, no allocation but nd's: workspaces are sized
 * by LAPACK's own query and taken with nd_malloc). A batch is split over
 * nd's pool, one matrix per LAPACK call, each range with its own
 * workspace; a single matrix runs on the calling thread, where OpenBLAS
 * uses its own threads. The result is the same for any thread count (each
 * matrix is factored alone), and a failure names the lowest failing matrix.
 */
#include <assert.h>
#include <lapacke.h>
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

struct la_job {
    const nd_user_desc *u;
    const nd_kernel_arg *args;
    int f64;
    int64_t m, n, batch;     /* the matrices' geometry (per routine) */
    size_t ws_bytes;         /* per range */
    la_matrix_fn one;        /* one matrix */
    pthread_mutex_t lock;
    int64_t bad, bad_info;   /* the lowest failing matrix and its info */
    int oom;
};

static size_t esize(const la_job *j) { return j->f64 ? sizeof(double) : sizeof(float); }
static char *mat(const la_job *j, int a, int64_t b, int64_t elems) {
    return (char *)j->args[a].data + (size_t)(b * elems) * esize(j);
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

/* Matrices of about n^3 flops: ranges of at least ~2^18 flops each. */
static nd_status run_batch(nd_cpu_state *st, la_job *j, int64_t cost_n) {
    j->bad = -1;
    pthread_mutex_init(&j->lock, NULL);
    double flops = (double)cost_n * (double)cost_n * (double)cost_n + 1;
    int64_t grain = flops >= (1 << 18) ? 1 : (int64_t)((1 << 18) / flops);
    nd_cpu_parallel_for(st, j->batch, grain, run_range, j);
    pthread_mutex_destroy(&j->lock);
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
    j->f64 = args[0].dtype == ND_FLOAT64;
    j->m = m;
    j->n = n;
    j->batch = 1; /* the leading axes (empty matrices count too) */
    for (int d = 0; d < args[0].ndim - 2; d++) j->batch *= args[0].shape[d];
    if (args[0].dtype != ND_FLOAT64 && args[0].dtype != ND_FLOAT32)
        return nd_error_set(ND_ERR_UNSUPPORTED, "cpu backend: %s of %s (float32 and float64 only)",
                            nd_lib_calls[u->lib].name, nd_dtype_name((nd_dtype)args[0].dtype));
    return ND_OK;
}

static int64_t last(const nd_kernel_arg *a, int k) { return a->ndim >= k ? a->shape[a->ndim - k] : 1; }

/* ------------------------------------------------------------ cholesky */

static int64_t cholesky_one(la_job *j, int64_t b, void *ws) {
    (void)ws;
    int64_t n = j->n;
    char *c = mat(j, 1, b, n * n);
    memcpy(c, mat(j, 0, b, n * n), (size_t)(n * n) * esize(j));
    /* Row-major lower = column-major upper. */
    return j->f64 ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', (lapack_int)n, (double *)c, ld(n))
                  : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'U', (lapack_int)n, (float *)c, ld(n));
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
    lapack_int info = j->f64 ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, (double *)lu,
                                                   ld(n), piv)
                             : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, (float *)lu,
                                                   ld(n), piv);
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
 * does) in the matrix's own dtype, on a copy in ws. */
#define SMALL_N 16
#define SMALL_SOLVE(NAME, T)                                                                 \
    static int64_t NAME(const T *a_in, const T *b_in, T *x, int64_t n, int64_t k, T *lu) {   \
        memcpy(lu, a_in, (size_t)(n * n) * sizeof(T));                                       \
        memcpy(x, b_in, (size_t)(n * k) * sizeof(T)); /* x[c * n + i]: column c, row i */    \
        for (int64_t c = 0; c < n; c++) {                                                    \
            int64_t p = c;                                                                   \
            T best = lu[c * n + c] < 0 ? -lu[c * n + c] : lu[c * n + c];                     \
            for (int64_t r = c + 1; r < n; r++) {                                            \
                T v = lu[r * n + c] < 0 ? -lu[r * n + c] : lu[r * n + c];                    \
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
SMALL_SOLVE(small_solve_d, double)
SMALL_SOLVE(small_solve_s, float)

static int64_t solve_one(la_job *j, int64_t b, void *ws) {
    int64_t n = j->n, k = j->m;
    if (n <= SMALL_N)
        return j->f64 ? small_solve_d((const double *)mat(j, 0, b, n * n), (const double *)mat(j, 1, b, k * n),
                                      (double *)mat(j, 2, b, k * n), n, k, ws)
                      : small_solve_s((const float *)mat(j, 0, b, n * n), (const float *)mat(j, 1, b, k * n),
                                      (float *)mat(j, 2, b, k * n), n, k, ws);
    char *lu = ws;
    lapack_int *piv = (lapack_int *)(lu + (size_t)(n * n) * esize(j));
    char *x = mat(j, 2, b, k * n);
    memcpy(lu, mat(j, 0, b, n * n), (size_t)(n * n) * esize(j));
    memcpy(x, mat(j, 1, b, k * n), (size_t)(k * n) * esize(j));
    /* The buffer is A^T column-major: factor it, then solve with its
     * transpose, A. */
    lapack_int info = j->f64 ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, (double *)lu,
                                                   ld(n), piv)
                             : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, (float *)lu,
                                                   ld(n), piv);
    if (info != 0 || k == 0) return info;
    return j->f64 ? LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', (lapack_int)n, (lapack_int)k, (const double *)lu,
                                        ld(n), piv, (double *)x, ld(n))
                  : LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, 'T', (lapack_int)n, (lapack_int)k, (const float *)lu,
                                        ld(n), piv, (float *)x, ld(n));
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
    return j->f64 ? LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, a, ld(m), tau, work, lwork)
                  : LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, a, ld(m), tau, work, lwork);
}
static lapack_int qr_orgqr(la_job *j, int64_t m, int64_t qc, int64_t k, void *q, const void *tau, void *work,
                           lapack_int lwork) {
    return j->f64 ? LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)qc, (lapack_int)k, q, ld(m), tau,
                                        work, lwork)
                  : LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)qc, (lapack_int)k, q, ld(m), tau,
                                        work, lwork);
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
        for (int64_t i = 0; i < qc && i < m; i++) {
            if (j->f64) ((double *)q)[i * m + i] = 1;
            else ((float *)q)[i * m + i] = 1;
        }
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
        float f1 = 0, f2 = 0;
        if (j.f64) {
            LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, NULL, ld(m), NULL, &w1, -1);
            if (qc) LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)qc, (lapack_int)k, NULL, ld(m),
                                        NULL, &w2, -1);
        } else {
            LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)n, NULL, ld(m), NULL, &f1, -1);
            if (qc) LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, (lapack_int)m, (lapack_int)qc, (lapack_int)k, NULL, ld(m),
                                        NULL, &f2, -1);
            w1 = f1;
            w2 = f2;
        }
    }
    int64_t lwork = (int64_t)(w1 > w2 ? w1 : w2) + 1;
    if (lwork < n + 1) lwork = n + 1;
    if (lwork < qc + 1) lwork = qc + 1;
    j.ws_bytes = (size_t)(lwork + k + 2) * esize(&j);
    return run_batch(st, &j, k ? k : 1);
}

/* ------------------------------------------------------------ svd */

/* LAPACK sees A^T (n x m column-major): A^T = V S U^T, so its U is our V
 * (written straight into VH, whose row-major rows are V's columns) and its
 * VT is our U^T column-major, transposed into UT row-major. */
static int64_t svd_one(la_job *j, int64_t b, void *ws) {
    int64_t m = j->m, n = j->n, k = m < n ? m : n;
    int uv = (int)j->u->lib_args.v[0].i, full = (int)j->u->lib_args.v[1].i;
    int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
    size_t es = esize(j);
    char *a = ws, *vt = a + (size_t)(m * n) * es;
    lapack_int *iwork = (lapack_int *)(vt + (size_t)(cu * m) * es);
    char *work = (char *)(iwork + 8 * k + 8);
    int64_t lwork = (int64_t)((j->ws_bytes - (size_t)(work - a)) / es);
    char *s = mat(j, 1, b, k), *ut = mat(j, 2, b, cu * m), *vh = mat(j, 3, b, cv * n);
    if (k == 0) { /* no singular values: full U and V are identities */
        memset(ut, 0, (size_t)(cu * m) * es);
        memset(vh, 0, (size_t)(cv * n) * es);
        for (int64_t i = 0; i < cu; i++) j->f64 ? (void)(((double *)ut)[i * m + i] = 1) : (void)(((float *)ut)[i * m + i] = 1);
        for (int64_t i = 0; i < cv; i++) j->f64 ? (void)(((double *)vh)[i * n + i] = 1) : (void)(((float *)vh)[i * n + i] = 1);
        return 0;
    }
    memcpy(a, mat(j, 0, b, m * n), (size_t)(m * n) * es);
    char jobz = !uv ? 'N' : full ? 'A' : 'S';
    lapack_int ldvt = ld(cu);
    lapack_int info = j->f64 ? LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, (lapack_int)n, (lapack_int)m, (double *)a,
                                                   ld(n), (double *)s, (double *)vh, ld(n), (double *)vt, ldvt,
                                                   (double *)work, (lapack_int)lwork, iwork)
                             : LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, (lapack_int)n, (lapack_int)m, (float *)a,
                                                   ld(n), (float *)s, (float *)vh, ld(n), (float *)vt, ldvt,
                                                   (float *)work, (lapack_int)lwork, iwork);
    if (info == -5) return ND_LA_INFO_NAN; /* LAPACK refuses a NaN in A (argument 4, LAPACKE's 5) */
    if (info != 0 || !uv) return info;
    for (int64_t r = 0; r < cu; r++) /* UT[r][c] = U^T(r, c) = vt column-major (r, c) */
        for (int64_t c = 0; c < m; c++) {
            if (j->f64) ((double *)ut)[r * m + c] = ((const double *)vt)[c * cu + r];
            else ((float *)ut)[r * m + c] = ((const float *)vt)[c * cu + r];
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
        lapack_int iw = 0;
        if (j.f64) {
            LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, (lapack_int)n, (lapack_int)m, NULL, ld(n), NULL, NULL, ld(n),
                                NULL, ld(cu), &w, -1, &iw);
        } else {
            float f = 0;
            LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, (lapack_int)n, (lapack_int)m, NULL, ld(n), NULL, NULL, ld(n),
                                NULL, ld(cu), &f, -1, &iw);
            w = f;
        }
    }
    size_t es = esize(&j);
    j.ws_bytes = (size_t)(m * n + cu * m) * es + (size_t)(8 * k + 8) * sizeof(lapack_int) + ((size_t)w + 16) * es;
    return run_batch(st, &j, k ? (m > n ? m : n) : 1);
}

/* ------------------------------------------------------------ eigh */

static lapack_int eigh_call(la_job *j, char jobz, int64_t n, void *a, void *w, void *work, lapack_int lwork,
                            lapack_int *iwork, lapack_int liwork) {
    /* Row-major lower = column-major upper. */
    return j->f64 ? LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'U', (lapack_int)n, a, ld(n), w, work, lwork, iwork,
                                        liwork)
                  : LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, 'U', (lapack_int)n, a, ld(n), w, work, lwork, iwork,
                                        liwork);
}

static int64_t eigh_one(la_job *j, int64_t b, void *ws) {
    int64_t n = j->n;
    size_t es = esize(j);
    char *vt = mat(j, 2, b, n * n);
    memcpy(vt, mat(j, 0, b, n * n), (size_t)(n * n) * es);
    lapack_int liwork = (lapack_int)j->m; /* j->m carries liwork for eigh */
    lapack_int *iwork = ws;
    char *work = (char *)(iwork + ((liwork + 1) & ~1)); /* 8-byte aligned */
    lapack_int lwork = (lapack_int)((j->ws_bytes - (size_t)(work - (char *)ws)) / es);
    return eigh_call(j, j->u->lib_args.v[0].i ? 'V' : 'N', n, vt, mat(j, 1, b, n), work, lwork, iwork, liwork);
}

nd_status nd_cpu_lib_la_eigh(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args) {
    la_job j;
    int64_t n = last(&args[0], 1);
    nd_status s = la_setup(&j, u, args, n, n);
    if (s != ND_OK) return s;
    j.one = eigh_one;
    double w = 0;
    lapack_int iw = 0;
    char jobz = u->lib_args.v[0].i ? 'V' : 'N';
    if (n > 0) {
        if (j.f64) {
            eigh_call(&j, jobz, n, NULL, NULL, &w, -1, &iw, -1);
        } else {
            float f = 0;
            eigh_call(&j, jobz, n, NULL, NULL, &f, -1, &iw, -1);
            w = f;
        }
    }
    j.m = iw + 1; /* liwork */
    j.ws_bytes = (size_t)((j.m + 1) & ~1) * sizeof(lapack_int) + ((size_t)w + 16) * esize(&j);
    return run_batch(st, &j, n);
}
