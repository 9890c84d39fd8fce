/* The dense linear algebra routines (common/lib_linalg.h) on CUDA, through
 * cuSOLVER's dense API (loaded on first use: nd_cuda_load_cusolver).
 *
 * Every call goes on the step's stream (cusolverDnSetStream before each);
 * the library's device workspace, the per-matrix status words (`info`)
 * and any copy cuSOLVER overwrites come from the routine's workspace,
 * sized here at prepare time, so the run function allocates no device
 * memory. The matrices of a batch are factored one after another on that
 * stream; each writes its own info word.
 *
 * cuSOLVER reports a singular or non positive definite matrix, or an SVD
 * or eigensolver that did not converge, only in device memory. The run
 * function therefore copies the info words back and waits for the stream
 * before it returns, so that a failure fails this step (ND_ERR_LINALG,
 * naming the matrix) like LAPACK's does on the CPU. That synchronisation
 * cannot be captured: nd_lib_reads_back keeps plans with these routines
 * out of CUDA graphs (plan_runner.c's capturable). LA_LU has no error to
 * report and is captured like any other step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/lib_linalg.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_linalg.h"

/* One handle per device, made at prepare time (outside any capture) and
 * kept until the process ends, like the libraries. */
#define MAX_DEVICES 64
static cusolverDnHandle_t handles[MAX_DEVICES];
static cublasHandle_t blas_handles[MAX_DEVICES]; /* the batched LU (cuBLAS) */

static int solver_failed(cusolverStatus_t st, const char *what) {
    nd_error_set(ND_ERR_BACKEND, "cuda: cuSOLVER %s failed (status %d)", what, (int)st);
    return ND_CUDA_LIB_ND_ERROR;
}
#define SOLVER_TRY(call, what)                           \
    do {                                                 \
        cusolverStatus_t st_ = (call);                   \
        if (st_ != CUSOLVER_STATUS_SUCCESS) return solver_failed(st_, what); \
    } while (0)

static int handle_for(cusolverDnHandle_t *out) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return (int)e;
    if (dev < 0 || dev >= MAX_DEVICES) {
        nd_error_set(ND_ERR_UNSUPPORTED, "cuda: linear algebra on device %d (nd keeps handles for %d)", dev,
                     MAX_DEVICES);
        return ND_CUDA_LIB_ND_ERROR;
    }
    if (!handles[dev]) SOLVER_TRY(cusolverDnCreate(&handles[dev]), "cusolverDnCreate");
    if (!blas_handles[dev]) {
        cublasStatus_t b = cublasCreate(&blas_handles[dev]);
        if (b != CUBLAS_STATUS_SUCCESS) {
            nd_error_set(ND_ERR_BACKEND, "cuda: cublasCreate for the batched solve failed (status %d)", (int)b);
            return ND_CUDA_LIB_ND_ERROR;
        }
    }
    *out = handles[dev];
    return 0;
}

static cublasHandle_t blas_handle(void) {
    int dev = 0;
    return cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < MAX_DEVICES ? blas_handles[dev] : NULL;
}

/* The geometry every routine shares. */
typedef struct {
    int f64;
    int64_t batch, m, n; /* per routine, as in common/lib_linalg.h */
    size_t es;
} geom;

static int64_t dim(const nd_kernel_arg *a, int k) { return a->ndim >= k ? a->shape[a->ndim - k] : 1; }

static void geometry(const nd_user_desc *u, const nd_kernel_arg *args, geom *g) {
    const nd_kernel_arg *a = &args[0];
    g->f64 = a->dtype == ND_FLOAT64;
    g->es = g->f64 ? sizeof(double) : sizeof(float);
    g->batch = 1;
    for (int d = 0; d < a->ndim - 2; d++) g->batch *= a->shape[d];
    g->n = dim(a, 1);
    g->m = dim(a, 2);
    if (u->lib == ND_LIB_LA_SOLVE) g->m = dim(&args[1], 2); /* right-hand sides */
}

static size_t up(size_t b) { return (b + 255) & ~(size_t)255; }

/* Batches of small matrices go through the batched APIs in one call
 * (cuBLAS getrfBatched/getrsBatched for solve, cuSOLVER potrfBatched for
 * cholesky), which take arrays of matrix pointers: those are built on the
 * host and copied into the workspace at run time (these routines are not
 * captured anyway: they read their status back). */
#define BATCHED_MAX_N 32
static int batched(const nd_user_desc *u, const geom *g) {
    return (u->lib == ND_LIB_LA_SOLVE || u->lib == ND_LIB_LA_CHOLESKY) && g->batch >= 2 && g->n >= 1 &&
           g->n <= BATCHED_MAX_N && g->m >= 1;
}
/* eigh of such a batch: syevjBatched, strided (no pointer arrays), one call. */
static int eigh_batched(const nd_user_desc *u, const geom *g) {
    return u->lib == ND_LIB_LA_EIGH && g->batch >= 2 && g->n >= 1 && g->n <= BATCHED_MAX_N;
}
static int lda(int64_t n) { return n > 0 ? (int)n : 1; }

/* The workspace, in this order: info words (one per matrix), the library's
 * workspace (lwork elements), then the routine's own arrays. */
typedef struct {
    int lwork;       /* elements */
    size_t extra;    /* bytes after the library's workspace */
} ws_need;

static size_t ws_total(const geom *g, const ws_need *w) {
    return up((size_t)(g->batch + 1) * sizeof(int)) + up((size_t)w->lwork * g->es) + w->extra;
}

/* cuSOLVER's workspace queries for the routine (pointers may be NULL). */
static int query(cusolverDnHandle_t h, const nd_user_desc *u, const geom *g, ws_need *w, gesvdjInfo_t svd_params,
                 syevjInfo_t eig_params) {
    int64_t m = g->m, n = g->n, k = m < n ? m : n;
    int lw = 0, lw2 = 0;
    w->extra = 0;
    if (batched(u, g)) { /* pointer arrays, and for solve the LU copies and pivots */
        w->lwork = 0;
        w->extra = up((size_t)(2 * g->batch) * sizeof(void *));
        if (u->lib == ND_LIB_LA_SOLVE)
            w->extra += up((size_t)(g->batch * n * n) * g->es) + up((size_t)(g->batch * n) * sizeof(int));
        return 0;
    }
    switch (u->lib) {
    case ND_LIB_LA_CHOLESKY:
        if (g->f64) SOLVER_TRY(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), &lw), "potrf_bufferSize");
        else SOLVER_TRY(cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), &lw), "potrf_bufferSize");
        break;
    case ND_LIB_LA_LU:
    case ND_LIB_LA_SOLVE:
        if (g->f64) SOLVER_TRY(cusolverDnDgetrf_bufferSize(h, (int)n, (int)n, NULL, lda(n), &lw), "getrf_bufferSize");
        else SOLVER_TRY(cusolverDnSgetrf_bufferSize(h, (int)n, (int)n, NULL, lda(n), &lw), "getrf_bufferSize");
        if (u->lib == ND_LIB_LA_SOLVE) w->extra = up((size_t)(n * n) * g->es) + up((size_t)(n + 1) * sizeof(int));
        break;
    case ND_LIB_LA_QR: { /* input AT (n, m): A column-major m x n */
        int64_t mm = g->n, nn = g->m, kk = mm < nn ? mm : nn, qc = u->lib_args.v[0].i;
        if (kk > 0) {
            if (g->f64) SOLVER_TRY(cusolverDnDgeqrf_bufferSize(h, (int)mm, (int)nn, NULL, lda(mm), &lw), "geqrf_bufferSize");
            else SOLVER_TRY(cusolverDnSgeqrf_bufferSize(h, (int)mm, (int)nn, NULL, lda(mm), &lw), "geqrf_bufferSize");
            if (qc > 0) {
                if (g->f64) SOLVER_TRY(cusolverDnDorgqr_bufferSize(h, (int)mm, (int)qc, (int)kk, NULL, lda(mm), NULL, &lw2), "orgqr_bufferSize");
                else SOLVER_TRY(cusolverDnSorgqr_bufferSize(h, (int)mm, (int)qc, (int)kk, NULL, lda(mm), NULL, &lw2), "orgqr_bufferSize");
            }
        }
        if (lw2 > lw) lw = lw2;
        w->extra = up((size_t)(kk + 1) * g->es); /* tau */
        break;
    }
    case ND_LIB_LA_SVD: { /* cuSOLVER sees A^T: n x m column-major */
        int uv = (int)u->lib_args.v[0].i, econ = !u->lib_args.v[1].i;
        cusolverEigMode_t mode = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (k > 0) {
            if (g->f64) SOLVER_TRY(cusolverDnDgesvdj_bufferSize(h, mode, econ, (int)n, (int)m, NULL, lda(n), NULL, NULL, lda(n), NULL, lda(m), &lw, svd_params), "gesvdj_bufferSize");
            else SOLVER_TRY(cusolverDnSgesvdj_bufferSize(h, mode, econ, (int)n, (int)m, NULL, lda(n), NULL, NULL, lda(n), NULL, lda(m), &lw, svd_params), "gesvdj_bufferSize");
        }
        /* the input copy (gesvdj overwrites it) and, without vectors,
         * stand-ins for U and V */
        w->extra = up((size_t)(m * n) * g->es) + (uv ? 0 : up((size_t)(n * n + m * m + 1) * g->es));
        break;
    }
    case ND_LIB_LA_EIGH: {
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (eigh_batched(u, g)) {
            if (g->f64) SOLVER_TRY(cusolverDnDsyevjBatched_bufferSize(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw, eig_params, (int)g->batch), "syevjBatched_bufferSize");
            else SOLVER_TRY(cusolverDnSsyevjBatched_bufferSize(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw, eig_params, (int)g->batch), "syevjBatched_bufferSize");
            break;
        }
        if (g->f64) SOLVER_TRY(cusolverDnDsyevd_bufferSize(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw), "syevd_bufferSize");
        else SOLVER_TRY(cusolverDnSsyevd_bufferSize(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw), "syevd_bufferSize");
        break;
    }
    default:
        return (int)cudaErrorNotSupported;
    }
    w->lwork = lw;
    return 0;
}

int nd_cuda_la_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    if (nd_cuda_load_cusolver() != ND_OK) return ND_CUDA_LIB_ND_ERROR;
    if (args[0].dtype != ND_FLOAT32 && args[0].dtype != ND_FLOAT64) return (int)cudaErrorNotSupported;
    cusolverDnHandle_t h;
    int e = handle_for(&h);
    if (e) return e;
    geom g;
    geometry(u, args, &g);
    gesvdjInfo_t params = NULL;
    syevjInfo_t eig_params = NULL;
    if (u->lib == ND_LIB_LA_SVD) SOLVER_TRY(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
    if (eigh_batched(u, &g) && cusolverDnCreateSyevjInfo(&eig_params) != CUSOLVER_STATUS_SUCCESS)
        e = solver_failed(CUSOLVER_STATUS_ALLOC_FAILED, "cusolverDnCreateSyevjInfo");
    ws_need w;
    if (!e) e = query(h, u, &g, &w, params, eig_params);
    if (params) cusolverDnDestroyGesvdjInfo(params);
    if (eig_params) cusolverDnDestroySyevjInfo(eig_params);
    if (e) return e;
    *bytes = ws_total(&g, &w);
    return 0;
}

/* ------------------------------------------------------------ running */

static cudaError_t copy(void *dst, const void *src, size_t bytes, cudaStream_t s) {
    return bytes ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s) : cudaSuccess;
}
#define CUDA_TRY_INT(call)                  \
    do {                                    \
        cudaError_t e_ = (call);            \
        if (e_ != cudaSuccess) return (int)e_; \
    } while (0)

/* One matrix b of the batch. */
static int run_one(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, int64_t b,
                   int *info, void *work, int lwork, char *extra, gesvdjInfo_t svd_params, cudaStream_t s) {
    int64_t m = g->m, n = g->n;
    size_t es = g->es;
    const char *in = (const char *)args[0].data;
    switch (u->lib) {
    case ND_LIB_LA_CHOLESKY: {
        char *c = (char *)args[1].data + (size_t)(b * n * n) * es;
        CUDA_TRY_INT(copy(c, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        if (g->f64) SOLVER_TRY(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, (int)n, (double *)c, lda(n), work, lwork, info), "potrf");
        else SOLVER_TRY(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_UPPER, (int)n, (float *)c, lda(n), work, lwork, info), "potrf");
        return 0;
    }
    case ND_LIB_LA_LU: {
        char *lu = (char *)args[1].data + (size_t)(b * n * n) * es;
        int *piv = (int *)args[2].data + b * n;
        CUDA_TRY_INT(copy(lu, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        if (g->f64) SOLVER_TRY(cusolverDnDgetrf(h, (int)n, (int)n, (double *)lu, lda(n), work, piv, info), "getrf");
        else SOLVER_TRY(cusolverDnSgetrf(h, (int)n, (int)n, (float *)lu, lda(n), work, piv, info), "getrf");
        return 0;
    }
    case ND_LIB_LA_SOLVE: { /* A^T column-major factored, then solved transposed: A X = B */
        char *lu = extra;
        int *piv = (int *)(extra + up((size_t)(n * n) * es));
        char *x = (char *)args[2].data + (size_t)(b * m * n) * es;
        CUDA_TRY_INT(copy(lu, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        CUDA_TRY_INT(copy(x, (const char *)args[1].data + (size_t)(b * m * n) * es, (size_t)(m * n) * es, s));
        if (g->f64) SOLVER_TRY(cusolverDnDgetrf(h, (int)n, (int)n, (double *)lu, lda(n), work, piv, info), "getrf");
        else SOLVER_TRY(cusolverDnSgetrf(h, (int)n, (int)n, (float *)lu, lda(n), work, piv, info), "getrf");
        if (m == 0) return 0;
        /* getrs's own info reports only bad arguments: it shares the
         * matrix's word after getrf's (a singular matrix is what getrf
         * wrote). */
        int *rs_info = info + g->batch - b; /* the spare word past the batch */
        if (g->f64) SOLVER_TRY(cusolverDnDgetrs(h, CUBLAS_OP_T, (int)n, (int)m, (const double *)lu, lda(n), piv, (double *)x, lda(n), rs_info), "getrs");
        else SOLVER_TRY(cusolverDnSgetrs(h, CUBLAS_OP_T, (int)n, (int)m, (const float *)lu, lda(n), piv, (float *)x, lda(n), rs_info), "getrs");
        return 0;
    }
    case ND_LIB_LA_QR: { /* AT (n, m) row-major = A column-major mm x nn */
        int64_t mm = n, nn = m, kk = mm < nn ? mm : nn, qc = u->lib_args.v[0].i;
        char *raw = (char *)args[2].data + (size_t)(b * mm * nn) * es;
        char *q = (char *)args[1].data + (size_t)(b * qc * mm) * es;
        CUDA_TRY_INT(copy(raw, in + (size_t)(b * mm * nn) * es, (size_t)(mm * nn) * es, s));
        if (kk == 0) return 0; /* the frontend does not call it for empty matrices */
        if (g->f64) SOLVER_TRY(cusolverDnDgeqrf(h, (int)mm, (int)nn, (double *)raw, lda(mm), (double *)extra, work, lwork, info), "geqrf");
        else SOLVER_TRY(cusolverDnSgeqrf(h, (int)mm, (int)nn, (float *)raw, lda(mm), (float *)extra, work, lwork, info), "geqrf");
        if (qc == 0) return 0;
        int64_t cols = qc < nn ? qc : nn; /* Q's first columns hold the reflectors */
        CUDA_TRY_INT(copy(q, raw, (size_t)(cols * mm) * es, s));
        if (g->f64) SOLVER_TRY(cusolverDnDorgqr(h, (int)mm, (int)qc, (int)kk, (double *)q, lda(mm), (const double *)extra, work, lwork, info), "orgqr");
        else SOLVER_TRY(cusolverDnSorgqr(h, (int)mm, (int)qc, (int)kk, (float *)q, lda(mm), (const float *)extra, work, lwork, info), "orgqr");
        return 0;
    }
    case ND_LIB_LA_SVD: { /* gesvdj on A^T (n x m column-major): its U is V, its V is U */
        int64_t k = m < n ? m : n;
        int uv = (int)u->lib_args.v[0].i, full = (int)u->lib_args.v[1].i;
        int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
        if (k == 0) return 0; /* the frontend does not call it for empty matrices */
        char *a = extra;
        CUDA_TRY_INT(copy(a, in + (size_t)(b * m * n) * es, (size_t)(m * n) * es, s));
        char *sv = (char *)args[1].data + (size_t)(b * k) * es;
        char *ut = uv ? (char *)args[2].data + (size_t)(b * cu * m) * es : a + up((size_t)(m * n) * es);
        char *vh = uv ? (char *)args[3].data + (size_t)(b * cv * n) * es : ut + (size_t)(m * m) * es;
        cusolverEigMode_t mode = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (g->f64) SOLVER_TRY(cusolverDnDgesvdj(h, mode, !full, (int)n, (int)m, (double *)a, lda(n), (double *)sv, (double *)vh, lda(n), (double *)ut, lda(m), work, lwork, info, svd_params), "gesvdj");
        else SOLVER_TRY(cusolverDnSgesvdj(h, mode, !full, (int)n, (int)m, (float *)a, lda(n), (float *)sv, (float *)vh, lda(n), (float *)ut, lda(m), work, lwork, info, svd_params), "gesvdj");
        return 0;
    }
    case ND_LIB_LA_EIGH: {
        char *vt = (char *)args[2].data + (size_t)(b * n * n) * es, *w = (char *)args[1].data + (size_t)(b * n) * es;
        CUDA_TRY_INT(copy(vt, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (g->f64) SOLVER_TRY(cusolverDnDsyevd(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (double *)vt, lda(n), (double *)w, work, lwork, info), "syevd");
        else SOLVER_TRY(cusolverDnSsyevd(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (float *)vt, lda(n), (float *)w, work, lwork, info), "syevd");
        return 0;
    }
    default:
        return (int)cudaErrorNotSupported;
    }
}

/* The info words back on the host: the first failing matrix fails the
 * step. */
static int check_infos(const nd_user_desc *u, const geom *g, const int *dinfo, cudaStream_t s) {
    int64_t n = g->batch + 1;
    int *host = nd_malloc((size_t)n * sizeof *host);
    if (!host) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory reading back %s's status", nd_lib_calls[u->lib].name);
        return ND_CUDA_LIB_ND_ERROR;
    }
    cudaError_t e = cudaMemcpyAsync(host, dinfo, (size_t)n * sizeof *host, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    int rc = (int)e;
    for (int64_t b = 0; b < n && rc == 0; b++) {
        if (host[b] > 0 && b < g->batch) {
            nd_lib_la_error((int)u->lib_args.v[ND_LA_FN_ARG].i, b, g->batch, host[b]);
            rc = ND_CUDA_LIB_ND_ERROR;
        } else if (host[b] < 0) {
            nd_error_set(ND_ERR_BACKEND, "cuda: cuSOLVER rejected argument %d of %s (an nd bug)", -host[b],
                         nd_lib_calls[u->lib].name);
            rc = ND_CUDA_LIB_ND_ERROR;
        }
    }
    free(host);
    return rc;
}

/* The whole batch in one or two calls (see batched()). *host_ptrs is freed
 * by the caller after the stream has been waited for. */
static int run_batched(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g,
                       int *info, char *extra, void ***host_ptrs, cudaStream_t s) {
    int64_t n = g->n, m = g->m, nb = g->batch;
    size_t es = g->es;
    void **dptrs = (void **)extra, **hp = nd_malloc((size_t)(2 * nb) * sizeof *hp);
    if (!hp) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for %lld matrix pointers", (long long)(2 * nb));
        return ND_CUDA_LIB_ND_ERROR;
    }
    *host_ptrs = hp;
    char *a_base, *b_base = NULL;
    if (u->lib == ND_LIB_LA_CHOLESKY) {
        a_base = (char *)args[1].data;
        CUDA_TRY_INT(copy(a_base, args[0].data, (size_t)(nb * n * n) * es, s));
    } else {
        a_base = extra + up((size_t)(2 * nb) * sizeof(void *));
        b_base = (char *)args[2].data;
        CUDA_TRY_INT(copy(a_base, args[0].data, (size_t)(nb * n * n) * es, s));
        CUDA_TRY_INT(copy(b_base, args[1].data, (size_t)(nb * m * n) * es, s));
    }
    for (int64_t b = 0; b < nb; b++) {
        hp[b] = a_base + (size_t)(b * n * n) * es;
        hp[nb + b] = b_base ? b_base + (size_t)(b * m * n) * es : NULL;
    }
    CUDA_TRY_INT(cudaMemcpyAsync(dptrs, hp, (size_t)(2 * nb) * sizeof *hp, cudaMemcpyHostToDevice, s));
    if (u->lib == ND_LIB_LA_CHOLESKY) {
        if (g->f64) SOLVER_TRY(cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, (int)n, (double **)dptrs, lda(n), info, (int)nb), "potrfBatched");
        else SOLVER_TRY(cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_UPPER, (int)n, (float **)dptrs, lda(n), info, (int)nb), "potrfBatched");
        return 0;
    }
    cublasHandle_t bh = blas_handle();
    int *piv = (int *)(a_base + up((size_t)(nb * n * n) * es));
    cublasStatus_t st = bh ? cublasSetStream(bh, s) : CUBLAS_STATUS_NOT_INITIALIZED;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = g->f64 ? cublasDgetrfBatched(bh, (int)n, (double *const *)dptrs, lda(n), piv, info, (int)nb)
                    : cublasSgetrfBatched(bh, (int)n, (float *const *)dptrs, lda(n), piv, info, (int)nb);
    int host_info = 0; /* getrsBatched checks its arguments on the host */
    if (st == CUBLAS_STATUS_SUCCESS)
        st = g->f64 ? cublasDgetrsBatched(bh, CUBLAS_OP_T, (int)n, (int)m, (const double *const *)dptrs, lda(n), piv,
                                          (double *const *)(dptrs + nb), lda(n), &host_info, (int)nb)
                    : cublasSgetrsBatched(bh, CUBLAS_OP_T, (int)n, (int)m, (const float *const *)dptrs, lda(n), piv,
                                          (float *const *)(dptrs + nb), lda(n), &host_info, (int)nb);
    if (st != CUBLAS_STATUS_SUCCESS || host_info != 0) {
        nd_error_set(ND_ERR_BACKEND, "cuda: cuBLAS batched LU of %lld %lldx%lld matrices failed (status %d, info %d)",
                     (long long)nb, (long long)n, (long long)n, (int)st, host_info);
        return ND_CUDA_LIB_ND_ERROR;
    }
    return 0;
}

int nd_cuda_la_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    cusolverDnHandle_t h;
    int e = handle_for(&h);
    if (e) return e;
    SOLVER_TRY(cusolverDnSetStream(h, s), "cusolverDnSetStream");
    geom g;
    geometry(u, args, &g);
    gesvdjInfo_t params = NULL;
    syevjInfo_t eig_params = NULL;
    if (u->lib == ND_LIB_LA_SVD) SOLVER_TRY(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
    if (eigh_batched(u, &g) && cusolverDnCreateSyevjInfo(&eig_params) != CUSOLVER_STATUS_SUCCESS)
        e = solver_failed(CUSOLVER_STATUS_ALLOC_FAILED, "cusolverDnCreateSyevjInfo");
    ws_need w;
    if (!e) e = query(h, u, &g, &w, params, eig_params);
    if (!e && ws_total(&g, &w) > ws_bytes) e = (int)cudaErrorInvalidValue; /* sized at prepare: cannot happen */
    int *info = ws;
    char *work = (char *)ws + up((size_t)(g.batch + 1) * sizeof(int));
    char *extra = e ? NULL : work + up((size_t)w.lwork * g.es);
    if (!e) e = (int)cudaMemsetAsync(info, 0, (size_t)(g.batch + 1) * sizeof(int), s);
    void **host_ptrs = NULL;
    if (!e && batched(u, &g)) e = run_batched(h, u, args, &g, info, extra, &host_ptrs, s);
    if (!e && eigh_batched(u, &g)) { /* the whole batch, strided, in one call */
        int64_t n = g.n;
        char *vt = (char *)args[2].data, *wv = (char *)args[1].data;
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        e = (int)copy(vt, args[0].data, (size_t)(g.batch * n * n) * g.es, s);
        cusolverStatus_t st = CUSOLVER_STATUS_SUCCESS;
        if (!e)
            st = g.f64 ? cusolverDnDsyevjBatched(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (double *)vt, lda(n), (double *)wv,
                                                 (double *)(void *)work, w.lwork, info, eig_params, (int)g.batch)
                       : cusolverDnSsyevjBatched(h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (float *)vt, lda(n), (float *)wv,
                                                 (float *)(void *)work, w.lwork, info, eig_params, (int)g.batch);
        if (st != CUSOLVER_STATUS_SUCCESS) e = solver_failed(st, "syevjBatched");
    }
    for (int64_t b = 0; b < g.batch && !e && !batched(u, &g) && !eigh_batched(u, &g); b++)
        e = run_one(h, u, args, &g, b, info + b, work, w.lwork, extra, params, s);
    if (!e && nd_lib_reads_back(u->lib)) e = check_infos(u, &g, info, s); /* waits for the stream */
    if (e && (host_ptrs || params || eig_params)) (void)cudaStreamSynchronize(s); /* nothing still reads them */
    /* The parameter objects and the host pointers outlive the calls that
     * read them: check_infos (or the line above) waited for the stream. */
    if (params) cusolverDnDestroyGesvdjInfo(params);
    if (eig_params) cusolverDnDestroySyevjInfo(eig_params);
    free(host_ptrs);
    return e;
}
