/* The dense linear algebra routines (common/lib_linalg.h) on CUDA, through
 * cuSOLVER's dense API (loaded on first use: nd_cuda_load_cusolver).
 *
 * Every call goes on the step's stream (cusolverDnSetStream before each);
 * the library's device workspace, the per-matrix status words (`info`)
 * and any copy cuSOLVER overwrites come from the routine's workspace,
 * sized here at prepare time, so the run function allocates no device
 * memory. The matrices of a batch are factored one after another on that
 * stream, each writing its own info word, except where a batched routine
 * takes a batch of small matrices in one call (potrfBatched, syevjBatched,
 * gesvdjBatched: batched(), eigh_batched(), svd_batched()). Cholesky
 * factors in its output, which lib_cholesky.c's pass fills before potrf
 * (one launch for the batch, which also zeroes the status words); SVD
 * picks Xgesvdp, gesvd or gesvdj by svd_routine's rule.
 *
 * cuSOLVER reports a singular or non positive definite matrix, or an SVD
 * or eigensolver that did not converge, only in device memory. The run
 * function therefore copies the info words back and waits for the stream
 * before it returns, so that a failure fails this step (ND_ERR_LINALG,
 * naming the matrix) like LAPACK's does on the CPU. That synchronisation
 * cannot be captured: nd_lib_reads_back keeps plans with these routines
 * out of CUDA graphs (plan_runner.c's capturable). LA_LU has no error to
 * report and is captured like any other step.
 *
 * The four types go through one code path: DT4 picks cuSOLVER's S, D, C or
 * Z function (their arguments agree; the Hermitian names, ungqr, heevd,
 * heevjBatched, stand in for the symmetric ones for C and Z). LA_EIG uses
 * the 64-bit cusolverDnXgeev (CUDA 12.6 and later); where the loaded
 * cuSOLVER lacks it, the matrices are copied to the host, factored by
 * LAPACK there and copied back, which ND_LOG=2 reports. */
#include <lapacke.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
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

static int solver_failed(cusolverStatus_t st, const char *what) {
    nd_error_set(ND_ERR_BACKEND, "cuda: cuSOLVER %s failed (status %d)", what, (int)st);
    return ND_CUDA_LIB_ND_ERROR;
}
#define SOLVER_TRY(call, what)                           \
    do {                                                 \
        cusolverStatus_t st_ = (call);                   \
        if (st_ != CUSOLVER_STATUS_SUCCESS) return solver_failed(st_, what); \
    } while (0)

/* A cuBLAS handle of the same kind, for geam (the transpose after gesvd):
 * nd's own (backend.c's) is bound to the backend's stream and workspace. */
static cublasHandle_t blas_handles[MAX_DEVICES];

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
    *out = handles[dev];
    return 0;
}

/* The geometry every routine shares. */
enum { K_S, K_D, K_C, K_Z };
typedef struct {
    int f64, kind;       /* double precision; K_S .. K_Z */
    int64_t batch, m, n; /* per routine, as in common/lib_linalg.h */
    size_t es, rs;       /* bytes of an element, of its real part */
} geom;

/* cuSOLVER's function of the geometry's type. */
#define DT4(g, name, ...)                                                                     \
    ((g)->kind == K_S   ? cusolverDnS##name(__VA_ARGS__)                                      \
     : (g)->kind == K_D ? cusolverDnD##name(__VA_ARGS__)                                      \
     : (g)->kind == K_C ? cusolverDnC##name(__VA_ARGS__)                                      \
                        : cusolverDnZ##name(__VA_ARGS__))
/* The same where the complex types have the Hermitian name. */
#define DT4H(g, real_name, herm_name, ...)                                                    \
    ((g)->kind == K_S   ? cusolverDnS##real_name(__VA_ARGS__)                                 \
     : (g)->kind == K_D ? cusolverDnD##real_name(__VA_ARGS__)                                 \
     : (g)->kind == K_C ? cusolverDnC##herm_name(__VA_ARGS__)                                 \
                        : cusolverDnZ##herm_name(__VA_ARGS__))

static int64_t dim(const nd_kernel_arg *a, int k) { return a->ndim >= k ? a->shape[a->ndim - k] : 1; }

static void geometry(const nd_user_desc *u, const nd_kernel_arg *args, geom *g) {
    const nd_kernel_arg *a = &args[0];
    g->f64 = a->dtype == ND_FLOAT64 || a->dtype == ND_COMPLEX128;
    g->kind = a->dtype == ND_FLOAT32 ? K_S : a->dtype == ND_FLOAT64 ? K_D : a->dtype == ND_COMPLEX64 ? K_C : K_Z;
    g->rs = g->f64 ? sizeof(double) : sizeof(float);
    g->es = g->rs * (g->kind >= K_C ? 2 : 1);
    g->batch = 1;
    for (int d = 0; d < a->ndim - 2; d++) g->batch *= a->shape[d];
    g->n = dim(a, 1);
    g->m = dim(a, 2);
    if (u->lib == ND_LIB_LA_SOLVE) g->m = dim(&args[1], 2); /* right-hand sides */
}

static size_t up(size_t b) { return (b + 255) & ~(size_t)255; }

/* Batches of small matrices go through the batched APIs in one call:
 * cuSOLVER potrfBatched for cholesky takes an array of matrix pointers,
 * built on the host and copied into the workspace at run time (these
 * routines are not captured anyway: they read their status back). Solve's
 * small systems, batched or not, never come here: lib_small_solve.c. */
#define BATCHED_MAX_N 32
static int batched(const nd_user_desc *u, const geom *g) {
    return u->lib == ND_LIB_LA_CHOLESKY && g->batch >= 2 && g->n >= 1 &&
           g->n <= BATCHED_MAX_N && g->m >= 1;
}
/* eigh of such a batch: syevjBatched, strided (no pointer arrays), one call. */
static int eigh_batched(const nd_user_desc *u, const geom *g) {
    return u->lib == ND_LIB_LA_EIGH && g->batch >= 2 && g->n >= 1 && g->n <= BATCHED_MAX_N;
}
static int lda(int64_t n) { return n > 0 ? (int)n : 1; }
/* svd of such a batch (both sides at most 32, gesvdjBatched's limit):
 * gesvdjBatched, strided, one call (svd_batched_run). */
static int svd_batched(const nd_user_desc *u, const geom *g) {
    return u->lib == ND_LIB_LA_SVD && g->batch >= 2 && g->m >= 1 && g->n >= 1 && g->m <= BATCHED_MAX_N &&
           g->n <= BATCHED_MAX_N;
}

/* Which routine factors LA_SVD's matrices, the one rule (cuSOLVER sees
 * A^T, the buffer read column-major: n rows, m columns; k = min(m, n)):
 *
 *  Xgesvdp   (polar decomposition, then an eigensolver) for every dtype
 *            when k >= SVD_XGESVDP_MIN_K, unless full U and V of a non-square
 *            matrix are asked for (its econ = 0 form, the columns past k,
 *            is not checked against a unitary completion anywhere yet:
 *            those keep the routines below).
 *            A wide A^T (n < m) is factored as conj(A) (m x n, a transposed
 *            copy), so Xgesvdp always sees rows >= columns.
 *  gesvd     (QR iteration on the bidiagonal form) for float64 and
 *            complex128 otherwise, when k > SVD_BIG_K and A^T is not wide
 *            (cuSOLVER's gesvd takes rows >= columns only);
 *  gesvdj    (Jacobi) everywhere else: one call per matrix, except for a
 *            batch of two or more matrices with both sides at most 32,
 *            which gesvdjBatched (the same Jacobi method, one thread block
 *            per matrix) factors in one call (svd_batched_run).
 *
 * Measured on the H200, the routines alone (bench/svd_routines.c, the
 * suite's SPD matrix, reduced, with vectors; max |S - S_gesvd| / S[0]
 * against the same dtype's gesvd): at 4096, float64 gesvd 1691.6 ms,
 * gesvdj 1742.1, Xgesvd 1674.5, Xgesvdp 254.0 ms (2.9e-14); float32 gesvd
 * 1173.9, gesvdj 1025.4, Xgesvdp 248.6 ms. At 1024 and 2048 (2026-11-29):
 * float32 gesvdj 56.7 / 215.3 ms (1.6e-4 / 3.2e-4), Xgesvdp 49.9 / 65.5 ms
 * (1.8e-5 / 3.8e-5): in float32 Xgesvdp is both faster and closer to gesvd
 * than gesvdj; float64 gesvdj 95.0 / 389.5 ms (3.2e-13 / 7.3e-13), Xgesvdp
 * 39.9 / 74.2 ms (1.3e-14 / 1.8e-14). Whole calls in the side-by-side suite
 * before Xgesvdp: float64 1.64 s through gesvd (CuPy; JAX above 1024)
 * against 1.77 s through gesvdj (PyTorch's default 1.79 s). SVD_BIG_K
 * follows JAX's switch to gesvd. Smaller single matrices (2026-11-29,
 * `bench_svd_routines 64,256,512,1024 3`, float32 / float64, error against
 * a float64 gesvd): n = 64 gesvdj 1.0 / 1.4 ms, Xgesvdp 2.4 / 2.3 ms; 256
 * gesvdj 6.5 / 10.3 ms (3.3e-5 / 6.4e-14), Xgesvdp 4.9 / 5.2 ms (2.1e-7 /
 * 6.1e-15); 512 gesvdj 18.0 / 30.6, Xgesvdp 11.2 / 11.5 ms; 1024 gesvdj
 * 53.8 / 94.2, Xgesvdp 26.7 / 29.8 ms: from 256 on Xgesvdp is faster and
 * closer to gesvd (SVD_XGESVDP_MIN_K; 128 was not measured), and
 * complex types go with their real ones as the same algorithms.
 *
 * Xgesvdp may perturb A to make the polar iteration converge when A is
 * (nearly) rank deficient, shifting the singular values by what it
 * reports as h_err_sigma. A matrix whose h_err_sigma exceeds
 * SVD_XGESVDP_MAX_ERR * k * S[0] (the error bound of a backward stable SVD,
 * p(n) eps ||A||, with p = k and eps the dtype's), or whose call reports info != 0 or a NaN,
 * is factored again by the routine the rule gives without Xgesvdp
 * (svd_exact), which also decides the NaN and non-convergence errors as
 * before. */
#define SVD_BIG_K 1024
#define SVD_XGESVDP_MIN_K 256
#define SVD_XGESVDP_MAX_ERR(g) ((g)->f64 ? DBL_EPSILON : (double)FLT_EPSILON)
typedef enum { SVD_GESVDJ, SVD_GESVD, SVD_XGESVDP } svd_kind;
static svd_kind svd_exact(const geom *g) {
    int64_t k = g->m < g->n ? g->m : g->n;
    return (g->kind == K_D || g->kind == K_Z) && k > SVD_BIG_K && g->n >= g->m ? SVD_GESVD : SVD_GESVDJ;
}
static svd_kind svd_routine(const nd_user_desc *u, const geom *g) {
    int64_t k = g->m < g->n ? g->m : g->n;
    int full = u->lib_args.v[0].i && u->lib_args.v[1].i;
    if (k >= SVD_XGESVDP_MIN_K && (!full || g->m == g->n)) return SVD_XGESVDP;
    return svd_exact(g);
}
static int svd_gesvd(const nd_user_desc *u, const geom *g) {
    return u->lib == ND_LIB_LA_SVD && svd_exact(g) == SVD_GESVD;
}

/* out (rows x cols, column-major) = in^H (in: cols x rows, column-major),
 * through cuBLAS geam on the step's stream. */
static int conj_transpose(const geom *g, const void *in, void *out, int64_t rows, int64_t cols, cudaStream_t s) {
    int dev = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess) return (int)ce;
    if (dev < 0 || dev >= MAX_DEVICES) return (int)cudaErrorInvalidDevice;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (!blas_handles[dev]) st = cublasCreate(&blas_handles[dev]);
    cublasHandle_t b = blas_handles[dev];
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b, s);
    int r = (int)rows, c = (int)cols;
    static const float f1 = 1, f0 = 0;
    static const double d1 = 1, d0 = 0;
    static const cuComplex c1 = {1, 0}, c0 = {0, 0};
    static const cuDoubleComplex z1 = {1, 0}, z0 = {0, 0};
    if (st == CUBLAS_STATUS_SUCCESS) switch (g->kind) {
        case K_S: st = cublasSgeam(b, CUBLAS_OP_C, CUBLAS_OP_N, r, c, &f1, in, c, &f0, out, r, out, r); break;
        case K_D: st = cublasDgeam(b, CUBLAS_OP_C, CUBLAS_OP_N, r, c, &d1, in, c, &d0, out, r, out, r); break;
        case K_C: st = cublasCgeam(b, CUBLAS_OP_C, CUBLAS_OP_N, r, c, &c1, in, c, &c0, out, r, out, r); break;
        default: st = cublasZgeam(b, CUBLAS_OP_C, CUBLAS_OP_N, r, c, &z1, in, c, &z0, out, r, out, r); break;
        }
    if (st != CUBLAS_STATUS_SUCCESS) {
        nd_error_set(ND_ERR_BACKEND, "cuda: cuBLAS geam (the transpose after gesvd) failed: %s",
                     cublasGetStatusString(st));
        return ND_CUDA_LIB_ND_ERROR;
    }
    return 0;
}

/* The workspace, in this order: info words (one per matrix), the library's
 * workspace (lwork elements), then the routine's own arrays. */
typedef struct {
    int lwork;       /* elements */
    size_t extra;    /* bytes after the library's workspace */
} ws_need;

static size_t ws_total(const geom *g, const ws_need *w) {
    return up((size_t)(g->batch + 1) * sizeof(int)) + up((size_t)w->lwork * g->es) + w->extra;
}

/* ------------------------------------------------------------ geev */

static cudaError_t copy(void *dst, const void *src, size_t bytes, cudaStream_t s) {
    return bytes ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s) : cudaSuccess;
}
#define CUDA_TRY_INT(call)                  \
    do {                                    \
        cudaError_t e_ = (call);            \
        if (e_ != cudaSuccess) return (int)e_; \
    } while (0)


static cudaDataType cuda_type(const geom *g) {
    return g->kind == K_S ? CUDA_R_32F : g->kind == K_D ? CUDA_R_64F : g->kind == K_C ? CUDA_C_32F : CUDA_C_64F;
}

/* The 64-bit API's parameters object (geev, gesvdp), one per device like
 * the handles, left at its defaults. */
static cusolverDnParams_t x_params[MAX_DEVICES];
static int params_for(cusolverDnParams_t *out) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return (int)e;
    if (dev < 0 || dev >= MAX_DEVICES) return (int)cudaErrorInvalidDevice;
    if (!x_params[dev]) SOLVER_TRY(cusolverDnCreateParams(&x_params[dev]), "cusolverDnCreateParams");
    *out = x_params[dev];
    return 0;
}

#if CUDART_VERSION >= 12060
static int geev_on_device(void) { return nd_cuda_api.p_cusolverDnXgeev != NULL; }

/* Real types: W holds 2n reals (the real parts, then the imaginary ones)
 * and VR LAPACK's real layout, as common/lib_linalg.h's LA_EIG. */
static int geev_query(cusolverDnHandle_t h, const nd_user_desc *u, const geom *g, size_t *dev, size_t *host) {
    cusolverDnParams_t p;
    int e = params_for(&p);
    if (e) return e;
    int64_t n = g->n;
    cudaDataType t = cuda_type(g);
    cusolverEigMode_t jobvr = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    SOLVER_TRY(cusolverDnXgeev_bufferSize(h, p, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, t, NULL, lda(n), t, NULL, t, NULL,
                                          lda(n), t, NULL, lda(n), t, dev, host),
               "Xgeev_bufferSize");
    return 0;
}

/* Matrix b: the input copied to scratch (extra, or VT without vectors),
 * geev's device workspace after it; its host workspace is taken here and
 * given back once the stream has passed the call. */
static int geev_one(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, int64_t b,
                    int *info, char *extra, cudaStream_t s) {
    int64_t n = g->n;
    if (n == 0) return 0;
    int vectors = (int)u->lib_args.v[0].i;
    size_t es = g->es, dev = 0, host = 0;
    int e = geev_query(h, u, g, &dev, &host);
    if (e) return e;
    cusolverDnParams_t p;
    if ((e = params_for(&p))) return e;
    const char *in = (const char *)args[0].data + (size_t)(b * n * n) * es;
    char *vt = (char *)args[2].data + (size_t)(b * n * n) * es, *w = (char *)args[1].data + (size_t)(b * 2 * n) * g->rs;
    char *a = vectors ? extra : vt, *dwork = extra + up((size_t)(n * n) * es);
    CUDA_TRY_INT(copy(a, in, (size_t)(n * n) * es, s));
    void *hwork = host ? nd_malloc(host) : NULL;
    if (host && !hwork) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for geev's workspace of %zu bytes", host);
        return ND_CUDA_LIB_ND_ERROR;
    }
    cudaDataType t = cuda_type(g);
    cusolverStatus_t st = cusolverDnXgeev(
        h, p, CUSOLVER_EIG_MODE_NOVECTOR, vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR, n, t, a,
        lda(n), t, w, t, NULL, lda(n), t, vectors ? vt : NULL, lda(n), t, dwork, dev, hwork, host, info);
    cudaError_t se = cudaStreamSynchronize(s); /* before the host workspace goes */
    free(hwork);
    if (st != CUSOLVER_STATUS_SUCCESS) return solver_failed(st, "Xgeev");
    return (int)se;
}
#else
static int geev_on_device(void) { return 0; }
static int geev_query(cusolverDnHandle_t h, const nd_user_desc *u, const geom *g, size_t *dev, size_t *host) {
    (void)h, (void)u, (void)g, (void)dev, (void)host;
    return (int)cudaErrorNotSupported;
}
static int geev_one(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, int64_t b,
                    int *info, char *extra, cudaStream_t s) {
    (void)h, (void)u, (void)args, (void)g, (void)b, (void)info, (void)extra, (void)s;
    return (int)cudaErrorNotSupported;
}
#endif

/* LAPACK's geev on the host, for the matrices of a batch the loaded
 * cuSOLVER cannot take (no Xgeev): the whole batch is copied to the host
 * and back. Returns 0, a cudaError_t, or ND_CUDA_LIB_ND_ERROR. */
static int geev_on_host(const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, cudaStream_t s) {
    int64_t n = g->n, nb = g->batch;
    int vectors = (int)u->lib_args.v[0].i, cx = g->kind >= K_C;
    size_t es = g->es, mat_bytes = (size_t)(n * n) * es, w_bytes = (size_t)(2 * n) * g->rs;
    nd_logf(2, "cuda: cuSOLVER has no geev here (CUDA < 12.6): %lld eigenproblem(s) of %lld x %lld run on the host "
            "(LAPACK), copied there and back", (long long)nb, (long long)n, (long long)n);
    if (n == 0 || nb == 0) return 0;
    lapack_int nn = (lapack_int)n, lwork = (lapack_int)(8 * n + 64);
    char *hin = nd_malloc(mat_bytes * (size_t)nb), *hw = nd_malloc(w_bytes * (size_t)nb);
    char *hvt = nd_malloc(mat_bytes * (size_t)nb), *scratch = nd_malloc(mat_bytes + (size_t)(lwork + 2 * n) * es);
    int rc = 0;
    if (!hin || !hw || !hvt || !scratch) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for geev of %lld matrices on the host", (long long)nb);
        rc = ND_CUDA_LIB_ND_ERROR;
    }
    if (!rc) rc = (int)cudaMemcpyAsync(hin, args[0].data, mat_bytes * (size_t)nb, cudaMemcpyDeviceToHost, s);
    if (!rc) rc = (int)cudaStreamSynchronize(s);
    for (int64_t b = 0; b < nb && !rc; b++) {
        char *a = scratch, *work = scratch + mat_bytes, *rwork = work + (size_t)lwork * es;
        char *w = hw + (size_t)b * w_bytes, *vr = vectors ? hvt + (size_t)b * mat_bytes : NULL;
        memcpy(a, hin + (size_t)b * mat_bytes, mat_bytes);
        int bad = 0;
        for (int64_t i = 0; i < n * n * (cx ? 2 : 1); i++)
            bad |= !isfinite(g->f64 ? ((const double *)a)[i] : (double)((const float *)a)[i]);
        lapack_int info = 0;
        if (!bad) switch (g->kind) {
            case K_S: info = LAPACKE_sgeev_work(LAPACK_COL_MAJOR, 'N', vectors ? 'V' : 'N', nn, (float *)a, nn, (float *)w,
                                                (float *)w + n, NULL, 1, (float *)vr, nn, (float *)work, lwork); break;
            case K_D: info = LAPACKE_dgeev_work(LAPACK_COL_MAJOR, 'N', vectors ? 'V' : 'N', nn, (double *)a, nn, (double *)w,
                                                (double *)w + n, NULL, 1, (double *)vr, nn, (double *)work, lwork); break;
            case K_C: info = LAPACKE_cgeev_work(LAPACK_COL_MAJOR, 'N', vectors ? 'V' : 'N', nn, (void *)a, nn, (void *)w,
                                                NULL, 1, (void *)vr, nn, (void *)work, lwork, (float *)rwork); break;
            default: info = LAPACKE_zgeev_work(LAPACK_COL_MAJOR, 'N', vectors ? 'V' : 'N', nn, (void *)a, nn, (void *)w,
                                               NULL, 1, (void *)vr, nn, (void *)work, lwork, (double *)rwork); break;
            }
        if (bad || info > 0) {
            nd_lib_la_error((int)u->lib_args.v[ND_LA_FN_ARG].i, b, nb, bad ? ND_LA_INFO_NAN : info);
            rc = ND_CUDA_LIB_ND_ERROR;
        } else if (info < 0) {
            nd_error_set(ND_ERR_BACKEND, "cuda: LAPACK rejected argument %d of geev (an nd bug)", (int)-info);
            rc = ND_CUDA_LIB_ND_ERROR;
        }
    }
    if (!rc) rc = (int)cudaMemcpyAsync(args[1].data, hw, w_bytes * (size_t)nb, cudaMemcpyHostToDevice, s);
    if (!rc && vectors) rc = (int)cudaMemcpyAsync(args[2].data, hvt, mat_bytes * (size_t)nb, cudaMemcpyHostToDevice, s);
    if (!rc) rc = (int)cudaStreamSynchronize(s); /* before the host copies go */
    free(hin), free(hw), free(hvt), free(scratch);
    return rc;
}

/* ------------------------------------------------------------ gesvdp */

/* Xgesvdp takes rows >= columns (svd_routine): A^T as it is (n x m) when
 * n >= m, else conj(A) (m x n) from a transposed copy. */
typedef struct {
    int64_t rows, cols;
    int wide; /* A^T is wide: Xgesvdp factors conj(A) */
} xsvd_shape;
static xsvd_shape xsvd_of(const geom *g) {
    xsvd_shape x = {g->n, g->m, g->n < g->m};
    if (x.wide) x.rows = g->m, x.cols = g->n;
    return x;
}

/* Its device workspace (bytes) and host workspace (bytes, taken per call). */
static int xgesvdp_query(cusolverDnHandle_t h, const nd_user_desc *u, const geom *g, size_t *dev, size_t *host) {
    cusolverDnParams_t p;
    int e = params_for(&p);
    if (e) return e;
    xsvd_shape x = xsvd_of(g);
    cudaDataType t = cuda_type(g), rt = g->f64 ? CUDA_R_64F : CUDA_R_32F;
    cusolverEigMode_t jobz = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    SOLVER_TRY(cusolverDnXgesvdp_bufferSize(h, p, jobz, 1, x.rows, x.cols, t, NULL, x.rows, rt, NULL, t, NULL, x.rows,
                                            t, NULL, x.cols, t, dev, host),
               "Xgesvdp_bufferSize");
    return 0;
}

/* The routine's `extra` space for Xgesvdp: the input copy it overwrites,
 * without vectors stand-ins for U (rows x k) and V (cols x k), then its
 * device workspace. *bytes is the total; at[0..2] (when not NULL) the
 * offsets of the stand-ins and of the workspace. */
static void xgesvdp_layout(const geom *g, int uv, size_t dev, size_t *bytes, size_t *at) {
    xsvd_shape x = xsvd_of(g);
    size_t es = g->es, o0 = up((size_t)(g->m * g->n) * es);
    size_t o1 = o0 + (uv ? 0 : up((size_t)(x.rows * x.cols) * es));
    size_t o2 = o1 + (uv ? 0 : up((size_t)(x.cols * x.cols) * es));
    if (at) at[0] = o0, at[1] = o1, at[2] = o2;
    *bytes = o2 + up(dev);
}

/* Matrix b through Xgesvdp (reduced: the rule keeps full U and V of a
 * non-square matrix away). Waits for the stream (its host workspace, and
 * the info word and S[0] it reads back): *redo is set when the result is
 * not to be kept (svd_routine's comment), and the caller factors the
 * matrix again from its input. */
static int xgesvdp_one(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g,
                       int64_t b, int *info, char *extra, cudaStream_t s, int *redo) {
    int64_t m = g->m, n = g->n, k = m < n ? m : n;
    int uv = (int)u->lib_args.v[0].i;
    size_t es = g->es, dev = 0, host = 0, bytes = 0, at[3];
    xsvd_shape x = xsvd_of(g);
    int e = xgesvdp_query(h, u, g, &dev, &host);
    cusolverDnParams_t p;
    if (!e) e = params_for(&p);
    if (e) return e;
    xgesvdp_layout(g, uv, dev, &bytes, at);
    const char *in = (const char *)args[0].data + (size_t)(b * m * n) * es;
    char *a = extra, *sv = (char *)args[1].data + (size_t)(b * k) * g->rs;
    /* cu = cv = k here: reduced, or square */
    char *ut = uv ? (char *)args[2].data + (size_t)(b * k * m) * es : NULL;
    char *vh = uv ? (char *)args[3].data + (size_t)(b * k * n) * es : NULL;
    /* Tall: A^T = W S V'^H, W into VH, V' into UT (as gesvdj). Wide:
     * conj(A) = U' S V''^H, so U = conj(U'), V = conj(V''), and U^H, V^H
     * read row-major are U' and V'' column-major: U' into UT, V'' into VH.
     * Without vectors, the stand-ins (rows x k, then k x k). */
    char *pu = !uv ? extra + at[0] : x.wide ? ut : vh, *pv = !uv ? extra + at[1] : x.wide ? vh : ut;
    if (x.wide) e = conj_transpose(g, in, a, m, n, s);
    else e = (int)copy(a, in, (size_t)(m * n) * es, s);
    if (e) return e;
    void *hwork = host ? nd_malloc(host) : NULL;
    if (host && !hwork) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for gesvdp's workspace of %zu bytes", host);
        return ND_CUDA_LIB_ND_ERROR;
    }
    cudaDataType t = cuda_type(g), rt = g->f64 ? CUDA_R_64F : CUDA_R_32F;
    cusolverEigMode_t jobz = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    double err_sigma = 0, s0 = NAN; /* a NaN S[0] redoes the matrix whatever err_sigma says */
    int hinfo = 0;
    union {
        double d;
        float f;
    } s0_raw;
    cusolverStatus_t st = cusolverDnXgesvdp(h, p, jobz, 1, x.rows, x.cols, t, a, x.rows, rt, sv, t, pu, x.rows, t, pv,
                                            x.cols, t, extra + at[2], dev, hwork, host, info, &err_sigma);
    cudaError_t ce = cudaSuccess;
    if (st == CUSOLVER_STATUS_SUCCESS) ce = cudaMemcpyAsync(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost, s);
    if (st == CUSOLVER_STATUS_SUCCESS && ce == cudaSuccess)
        ce = cudaMemcpyAsync(&s0_raw, sv, g->rs, cudaMemcpyDeviceToHost, s);
    cudaError_t se = cudaStreamSynchronize(s); /* before the host workspace goes */
    free(hwork);
    if (st != CUSOLVER_STATUS_SUCCESS) return solver_failed(st, "Xgesvdp");
    if (ce != cudaSuccess) return (int)ce;
    if (se != cudaSuccess) return (int)se;
    if (hinfo < 0) {
        nd_error_set(ND_ERR_BACKEND, "cuda: cuSOLVER rejected argument %d of Xgesvdp (an nd bug)", -hinfo);
        return ND_CUDA_LIB_ND_ERROR;
    }
    s0 = g->f64 ? s0_raw.d : (double)s0_raw.f;
    /* written so that a NaN redoes the matrix */
    *redo = !(hinfo == 0 && err_sigma <= SVD_XGESVDP_MAX_ERR(g) * (double)k * s0);
    if (*redo)
        nd_logf(2, "cuda: Xgesvdp of matrix %lld of %lld (%lld x %lld): info %d, h_err_sigma %g against S[0] %g; "
                "factored again by %s", (long long)b, (long long)g->batch, (long long)m, (long long)n, hinfo, err_sigma,
                s0, svd_exact(g) == SVD_GESVD ? "gesvd" : "gesvdj");
    return 0;
}

/* ------------------------------------------------------------ gesvdjBatched */

/* gesvdjBatched's `extra` space: the input copy it overwrites, then
 * scratch for its full U (n x n per matrix, A^T's: V^H of A) and V (m x m:
 * U^H of A) where they cannot go straight into VH and UT, whose matrices
 * are then k x n or k x m (reduced vectors of a non-square matrix) or
 * absent (values only). Returns the bytes; at[0], at[1] (when not NULL)
 * the offsets of the two scratch arrays, 0 for one the output takes (the
 * input copy is at 0). */
static size_t svd_batched_layout(const nd_user_desc *u, const geom *g, size_t at[2]) {
    int uv = (int)u->lib_args.v[0].i, full = (int)u->lib_args.v[1].i;
    int64_t m = g->m, n = g->n, k = m < n ? m : n, nb = g->batch;
    int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
    size_t es = g->es, o = up((size_t)(nb * m * n) * es), wu = 0, wv = 0;
    if (cv != n) wu = o, o += up((size_t)(nb * n * n) * es);
    if (cu != m) wv = o, o += up((size_t)(nb * m * m) * es);
    if (at) at[0] = wu, at[1] = wv;
    return o;
}

/* The lwork of potrf (lower) or getrf (square) for the geometry's dtype
 * and n, asked of cuSOLVER once per (routine, device, dtype, n) in a row:
 * a step that runs again (nd_linalg_cholesky or nd_linalg_solve on
 * same-sized matrices) sizes its workspace, at prepare and at run, without
 * the library call. One word per routine, device and dtype, (n + 1) << 32
 * | lwork (0: empty), so that threads racing on it read a whole entry or
 * none. */
enum { MEMO_POTRF, MEMO_GETRF };
static _Atomic uint64_t lwork_memo[2][MAX_DEVICES][4];
static int memo_lwork(cusolverDnHandle_t h, const geom *g, int which, int *lw) {
    int dev = -1;
    _Atomic uint64_t *memo = NULL;
    if (cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < MAX_DEVICES && g->n < INT_MAX)
        memo = &lwork_memo[which][dev][g->kind];
    uint64_t key = (uint64_t)(g->n + 1) << 32, v = memo ? atomic_load_explicit(memo, memory_order_relaxed) : 0;
    if (v && (v & ~(uint64_t)UINT32_MAX) == key) {
        *lw = (int)(uint32_t)v;
        return 0;
    }
    int n = (int)g->n;
    if (which == MEMO_POTRF)
        SOLVER_TRY(DT4(g, potrf_bufferSize, h, CUBLAS_FILL_MODE_LOWER, n, NULL, lda(n), lw), "potrf_bufferSize");
    else
        SOLVER_TRY(DT4(g, getrf_bufferSize, h, n, n, NULL, lda(n), lw), "getrf_bufferSize");
    if (memo && *lw >= 0) atomic_store_explicit(memo, key | (uint32_t)*lw, memory_order_relaxed);
    return 0;
}

/* cuSOLVER's workspace queries for the routine (pointers may be NULL). */
static int query(cusolverDnHandle_t h, const nd_user_desc *u, const geom *g, ws_need *w, gesvdjInfo_t svd_params,
                 syevjInfo_t eig_params) {
    int64_t m = g->m, n = g->n, k = m < n ? m : n;
    int lw = 0, lw2 = 0;
    w->extra = 0;
    if (batched(u, g)) { /* the pointer array */
        w->lwork = 0;
        w->extra = up((size_t)g->batch * sizeof(void *));
        return 0;
    }
    switch (u->lib) {
    case ND_LIB_LA_CHOLESKY: {
        int e = memo_lwork(h, g, MEMO_POTRF, &lw);
        if (e) return e;
        break;
    }
    case ND_LIB_LA_LU:
    case ND_LIB_LA_SOLVE: {
        int e = memo_lwork(h, g, MEMO_GETRF, &lw);
        if (e) return e;
        if (u->lib == ND_LIB_LA_SOLVE) w->extra = up((size_t)(n * n) * g->es) + up((size_t)(n + 1) * sizeof(int));
        break;
    }
    case ND_LIB_LA_QR: { /* input AT (n, m): A column-major m x n */
        int64_t mm = g->n, nn = g->m, kk = mm < nn ? mm : nn, qc = u->lib_args.v[0].i;
        if (kk > 0) {
            SOLVER_TRY(DT4(g, geqrf_bufferSize, h, (int)mm, (int)nn, NULL, lda(mm), &lw), "geqrf_bufferSize");
            if (qc > 0)
                SOLVER_TRY(DT4H(g, orgqr_bufferSize, ungqr_bufferSize, h, (int)mm, (int)qc, (int)kk, NULL, lda(mm), NULL, &lw2),
                           "orgqr_bufferSize");
        }
        if (lw2 > lw) lw = lw2;
        w->extra = up((size_t)(kk + 1) * g->es); /* tau */
        break;
    }
    case ND_LIB_LA_SVD: { /* cuSOLVER sees A^T: n x m column-major */
        int uv = (int)u->lib_args.v[0].i, econ = !u->lib_args.v[1].i;
        cusolverEigMode_t mode = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (svd_gesvd(u, g)) { /* the input copy, rwork (k reals) and gesvd's VT (m x m) */
            SOLVER_TRY(DT4(g, gesvd_bufferSize, h, (int)n, (int)m, &lw), "gesvd_bufferSize");
            w->extra = up((size_t)(m * n) * g->es) + up((size_t)k * g->rs) + up((size_t)(m * m) * g->es);
        } else {
            if (k > 0) {
                SOLVER_TRY(DT4(g, gesvdj_bufferSize, h, mode, econ, (int)n, (int)m, NULL, lda(n), NULL, NULL, lda(n), NULL, lda(m), &lw, svd_params),
                           "gesvdj_bufferSize");
            }
            /* the input copy (gesvdj overwrites it) and, without vectors,
             * stand-ins for U and V */
            w->extra = up((size_t)(m * n) * g->es) + (uv ? 0 : up((size_t)(n * n + m * m + 1) * g->es));
        }
        if (svd_routine(u, g) == SVD_XGESVDP) { /* and Xgesvdp's, in the same space (xgesvdp_one) */
            size_t dev = 0, host = 0, need = 0;
            int e = xgesvdp_query(h, u, g, &dev, &host);
            if (e) return e;
            xgesvdp_layout(g, uv, dev, &need, NULL);
            if (need > w->extra) w->extra = need;
        }
        if (svd_batched(u, g)) { /* gesvdjBatched's, with room for gesvdj's above (a matrix factored again) */
            int lwb = 0;
            SOLVER_TRY(DT4(g, gesvdjBatched_bufferSize, h, mode, (int)n, (int)m, NULL, lda(n), NULL, NULL, lda(n), NULL,
                           lda(m), &lwb, svd_params, (int)g->batch),
                       "gesvdjBatched_bufferSize");
            if (lwb > lw) lw = lwb;
            size_t need = svd_batched_layout(u, g, NULL);
            if (need > w->extra) w->extra = need;
        }
        break;
    }
    case ND_LIB_LA_EIGH: {
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        if (eigh_batched(u, g)) {
            SOLVER_TRY(DT4H(g, syevjBatched_bufferSize, heevjBatched_bufferSize, h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw,
                            eig_params, (int)g->batch),
                       "syevjBatched_bufferSize");
            break;
        }
        SOLVER_TRY(DT4H(g, syevd_bufferSize, heevd_bufferSize, h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, NULL, lda(n), NULL, &lw),
                   "syevd_bufferSize");
        break;
    }
    case ND_LIB_LA_EIG: { /* the input copy geev overwrites (with vectors: without, VT is the copy) */
        w->extra = up((size_t)(n * n) * g->es);
        w->lwork = 0;
        if (!geev_on_device() || n == 0) return 0;
        size_t dev = 0, host = 0;
        int e = geev_query(h, u, g, &dev, &host);
        if (e) return e;
        w->extra += up(dev);
        return 0;
    }
    default:
        return (int)cudaErrorNotSupported;
    }
    w->lwork = lw;
    return 0;
}

int nd_cuda_la_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    if (nd_cuda_small_solve_applies(u, args)) { /* no library call: lib_small_solve.c */
        *bytes = ND_CUDA_SMALL_SOLVE_WS;
        return 0;
    }
    if (nd_cuda_load_cusolver() != ND_OK) return ND_CUDA_LIB_ND_ERROR;
    if (args[0].dtype != ND_FLOAT32 && args[0].dtype != ND_FLOAT64 && args[0].dtype != ND_COMPLEX64 &&
        args[0].dtype != ND_COMPLEX128)
        return (int)cudaErrorNotSupported;
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


/* One matrix b of the batch. */
static int run_one(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, int64_t b,
                   int *info, void *work, int lwork, char *extra, gesvdjInfo_t svd_params, cudaStream_t s) {
    int64_t m = g->m, n = g->n;
    size_t es = g->es;
    const char *in = (const char *)args[0].data;
    switch (u->lib) {
    case ND_LIB_LA_CHOLESKY: { /* on C as packed by nd_cuda_chol_pack (la_run) */
        char *c = (char *)args[1].data + (size_t)(b * n * n) * es;
        SOLVER_TRY(DT4(g, potrf, h, CUBLAS_FILL_MODE_LOWER, (int)n, (void *)c, lda(n), work, lwork, info), "potrf");
        return 0;
    }
    case ND_LIB_LA_LU: {
        char *lu = (char *)args[1].data + (size_t)(b * n * n) * es;
        int *piv = (int *)args[2].data + b * n;
        CUDA_TRY_INT(copy(lu, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        SOLVER_TRY(DT4(g, getrf, h, (int)n, (int)n, (void *)lu, lda(n), work, piv, info), "getrf");
        return 0;
    }
    case ND_LIB_LA_SOLVE: { /* A^T column-major factored, then solved transposed: A X = B */
        char *lu = extra;
        int *piv = (int *)(extra + up((size_t)(n * n) * es));
        char *x = (char *)args[2].data + (size_t)(b * m * n) * es;
        CUDA_TRY_INT(copy(lu, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        CUDA_TRY_INT(copy(x, (const char *)args[1].data + (size_t)(b * m * n) * es, (size_t)(m * n) * es, s));
        SOLVER_TRY(DT4(g, getrf, h, (int)n, (int)n, (void *)lu, lda(n), work, piv, info), "getrf");
        if (m == 0) return 0;
        /* getrs's own info reports only bad arguments: it shares the
         * matrix's word after getrf's (a singular matrix is what getrf
         * wrote). */
        int *rs_info = info + g->batch - b; /* the spare word past the batch */
        SOLVER_TRY(DT4(g, getrs, h, CUBLAS_OP_T, (int)n, (int)m, (const void *)lu, lda(n), piv, (void *)x, lda(n), rs_info), "getrs");
        return 0;
    }
    case ND_LIB_LA_QR: { /* AT (n, m) row-major = A column-major mm x nn */
        int64_t mm = n, nn = m, kk = mm < nn ? mm : nn, qc = u->lib_args.v[0].i;
        char *raw = (char *)args[2].data + (size_t)(b * mm * nn) * es;
        char *q = (char *)args[1].data + (size_t)(b * qc * mm) * es;
        CUDA_TRY_INT(copy(raw, in + (size_t)(b * mm * nn) * es, (size_t)(mm * nn) * es, s));
        if (kk == 0) return 0; /* the frontend does not call it for empty matrices */
        SOLVER_TRY(DT4(g, geqrf, h, (int)mm, (int)nn, (void *)raw, lda(mm), (void *)extra, work, lwork, info), "geqrf");
        if (qc == 0) return 0;
        int64_t cols = qc < nn ? qc : nn; /* Q's first columns hold the reflectors */
        CUDA_TRY_INT(copy(q, raw, (size_t)(cols * mm) * es, s));
        SOLVER_TRY(DT4H(g, orgqr, ungqr, h, (int)mm, (int)qc, (int)kk, (void *)q, lda(mm), (const void *)extra, work, lwork, info),
                   "orgqr");
        return 0;
    }
    case ND_LIB_LA_SVD: { /* gesvdj on A^T (n x m column-major): its U is V, its V is U */
        int64_t k = m < n ? m : n;
        int uv = (int)u->lib_args.v[0].i, full = (int)u->lib_args.v[1].i;
        int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
        if (k == 0) return 0; /* the frontend does not call it for empty matrices */
        svd_kind r = svd_routine(u, g);
        if (r == SVD_XGESVDP) {
            int redo = 0, e = xgesvdp_one(h, u, args, g, b, info, extra, s, &redo);
            if (e || !redo) return e;
            r = svd_exact(g);
        }
        char *a = extra;
        CUDA_TRY_INT(copy(a, in + (size_t)(b * m * n) * es, (size_t)(m * n) * es, s));
        char *sv = (char *)args[1].data + (size_t)(b * k) * g->rs; /* real */
        char *ut = uv ? (char *)args[2].data + (size_t)(b * cu * m) * es : a + up((size_t)(m * n) * es);
        char *vh = uv ? (char *)args[3].data + (size_t)(b * cv * n) * es : ut + (size_t)(m * m) * es;
        if (r == SVD_GESVD) {
            /* gesvd on A^T (n x m, n >= m, so k = m = cu): A^T = W S V'^H,
             * W (n x cv) straight into VH; V'^H (m x m) into scratch, which
             * read row-major is U, and UT = U^H is its conjugate transpose. */
            char *rwork = a + up((size_t)(m * n) * es), *vts = rwork + up((size_t)k * g->rs);
            signed char job = !uv ? 'N' : full ? 'A' : 'S';
            SOLVER_TRY(DT4(g, gesvd, h, job, job, (int)n, (int)m, (void *)a, lda(n), (void *)sv, uv ? (void *)vh : (void *)vts,
                           lda(n), (void *)vts, lda(m), work, lwork, (void *)rwork, info),
                       "gesvd");
            return uv ? conj_transpose(g, vts, ut, m, m, s) : 0;
        }
        cusolverEigMode_t mode = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        /* A^T = W S V'^H: W into VH (= V^H of A), V' into UT, which is
         * U^H of A = conj(V') S W^T read row-major (common/lib_linalg.h). */
        SOLVER_TRY(DT4(g, gesvdj, h, mode, !full, (int)n, (int)m, (void *)a, lda(n), (void *)sv, (void *)vh, lda(n), (void *)ut, lda(m), work, lwork,
                       info, svd_params),
                   "gesvdj");
        return 0;
    }
    case ND_LIB_LA_EIGH: {
        char *vt = (char *)args[2].data + (size_t)(b * n * n) * es, *w = (char *)args[1].data + (size_t)(b * n) * g->rs;
        CUDA_TRY_INT(copy(vt, in + (size_t)(b * n * n) * es, (size_t)(n * n) * es, s));
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        SOLVER_TRY(DT4H(g, syevd, heevd, h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (void *)vt, lda(n), (void *)w, work, lwork, info), "syevd");
        return 0;
    }
    case ND_LIB_LA_EIG:
        return geev_one(h, u, args, g, b, info, extra, s);
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

/* eigh's eigenvalues ascending, as NumPy gives them (nd_lib_eigh_order:
 * cuSOLVER's syevd put adjacent float32 ones 1 ulp out of order). After
 * the step's stream was waited for (check_infos), every matrix's W is read
 * back; where it is out of order, its sorted W is copied in and the rows of
 * its VT (the eigenvectors, VT holding V^H) follow, cycle by cycle of the
 * permutation through one row of scratch: the start of the routine's
 * workspace, which nothing reads any more (or a row of its own where the
 * workspace is smaller). Rare, and a few rows when it happens. */
static int eigh_in_order(const nd_user_desc *u, const nd_kernel_arg *args, const geom *g, char *scratch,
                         size_t scratch_bytes, cudaStream_t s) {
    const int64_t n = g->n, batch = g->batch;
    const int vectors = (int)u->lib_args.v[0].i;
    const size_t row = (size_t)n * g->es;
    if (n < 2 || batch == 0) return 0;
    void *own = NULL; /* a row of scratch of its own where the workspace is smaller (syevjBatched's may be) */
    char *w = nd_malloc((size_t)(batch * n) * g->rs);
    int64_t *perm = nd_malloc((size_t)n * sizeof *perm);
    void *sorted = nd_malloc((size_t)n * g->rs);
    int e = !w || !perm || !sorted ? ND_CUDA_LIB_ND_ERROR : 0, moved = 0;
    if (!e) e = (int)cudaMemcpyAsync(w, args[1].data, (size_t)(batch * n) * g->rs, cudaMemcpyDeviceToHost, s);
    if (!e) e = (int)cudaStreamSynchronize(s);
    for (int64_t b = 0; b < batch && !e; b++) {
        const char *wb = w + (size_t)(b * n) * g->rs;
        const int order = nd_lib_eigh_order(wb, g->f64, n, perm);
        if (order < 0) e = ND_CUDA_LIB_ND_ERROR;
        if (order <= 0) continue;
        moved = 1;
        for (int64_t k = 0; k < n; k++) memcpy((char *)sorted + (size_t)k * g->rs, wb + (size_t)perm[k] * g->rs, g->rs);
        /* pageable memory: the copy has taken the bytes when it returns */
        e = (int)cudaMemcpyAsync((char *)args[1].data + (size_t)(b * n) * g->rs, sorted, (size_t)n * g->rs,
                                 cudaMemcpyHostToDevice, s);
        char *vt = (char *)args[2].data + (size_t)(b * n) * row;
        if (!e && vectors && scratch_bytes < row && !own && !(e = (int)cudaMalloc(&own, row)))
            scratch = own;
        for (int64_t k0 = 0; k0 < n && vectors && !e; k0++) {
            if (perm[k0] < 0 || perm[k0] == k0) continue;
            /* the cycle through k0: row k takes row perm[k]; k0's old row last */
            e = (int)cudaMemcpyAsync(scratch, vt + (size_t)k0 * row, row, cudaMemcpyDeviceToDevice, s);
            int64_t k = k0;
            while (!e) {
                const int64_t j = perm[k];
                perm[k] = -1;
                e = (int)cudaMemcpyAsync(vt + (size_t)k * row, j == k0 ? scratch : vt + (size_t)j * row, row,
                                         cudaMemcpyDeviceToDevice, s);
                if (j == k0) break;
                k = j;
            }
        }
    }
    if (e == ND_CUDA_LIB_ND_ERROR) /* the host buffers, here or in nd_lib_eigh_order */
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory putting %s's eigenvalues in order",
                     nd_lib_calls[u->lib].name);
    if (!e && moved) e = (int)cudaStreamSynchronize(s); /* the scratch row is the next step's workspace */
    if (own) {
        if (e) (void)cudaStreamSynchronize(s); /* nothing still copies through it */
        const int f = (int)cudaFree(own);
        if (!e) e = f;
    }
    free(w);
    free(perm);
    free(sorted);
    return e;
}

/* The whole batch in one call (see batched()). *host_ptrs is freed by the
 * caller after the stream has been waited for. */
static int run_batched(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g,
                       int *info, char *extra, void ***host_ptrs, cudaStream_t s) {
    (void)u;
    int64_t n = g->n, nb = g->batch;
    size_t es = g->es;
    void **dptrs = (void **)extra, **hp = nd_malloc((size_t)nb * sizeof *hp);
    if (!hp) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for %lld matrix pointers", (long long)nb);
        return ND_CUDA_LIB_ND_ERROR;
    }
    *host_ptrs = hp;
    char *a_base = (char *)args[1].data; /* packed by nd_cuda_chol_pack (la_run) */
    for (int64_t b = 0; b < nb; b++) hp[b] = a_base + (size_t)(b * n * n) * es;
    CUDA_TRY_INT(cudaMemcpyAsync(dptrs, hp, (size_t)nb * sizeof *hp, cudaMemcpyHostToDevice, s));
    SOLVER_TRY(DT4(g, potrfBatched, h, CUBLAS_FILL_MODE_LOWER, (int)n, (void *)dptrs, lda(n), info, (int)nb), "potrfBatched");
    return 0;
}

/* The batch through gesvdjBatched (svd_batched), as gesvdj on A^T
 * (run_one) for every matrix at once: A^T = W S V'^H, W (its full U,
 * n x n) read row-major is V^H of A and goes into VH, V' (its full V,
 * m x m) is U^H of A and goes into UT; the reduced forms are the first k
 * columns of each, which one strided copy per output gathers from
 * scratch (svd_batched_layout). Then the info words come back to the host
 * (a wait for the stream): a matrix whose call did not converge is
 * factored again by gesvdj alone, which decides its outcome and error as
 * for a matrix outside a batch. A matrix holding NaN or inf is not an
 * error here, whatever S the routine gives it: the frontend's s + 0 *
 * max|a| makes its S NaN, as on the CPU and for a matrix outside a batch
 * (nd_linalg_svd). */
static int svd_batched_run(cusolverDnHandle_t h, const nd_user_desc *u, const nd_kernel_arg *args, const geom *g,
                           int *info, void *work, int lwork, char *extra, gesvdjInfo_t params, cudaStream_t s) {
    int uv = (int)u->lib_args.v[0].i, full = (int)u->lib_args.v[1].i;
    int64_t m = g->m, n = g->n, k = m < n ? m : n, nb = g->batch;
    int64_t cu = uv ? (full ? m : k) : 0, cv = uv ? (full ? n : k) : 0;
    size_t es = g->es, at[2];
    svd_batched_layout(u, g, at);
    char *a = extra, *sv = (char *)args[1].data;
    char *ut = uv ? (char *)args[2].data : NULL, *vh = uv ? (char *)args[3].data : NULL;
    char *pw = at[0] ? extra + at[0] : vh, *pv = at[1] ? extra + at[1] : ut;
    CUDA_TRY_INT(copy(a, args[0].data, (size_t)(nb * m * n) * es, s));
    cusolverEigMode_t mode = uv ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    SOLVER_TRY(DT4(g, gesvdjBatched, h, mode, (int)n, (int)m, (void *)a, lda(n), (void *)sv, (void *)pw, lda(n),
                   (void *)pv, lda(m), work, lwork, info, params, (int)nb),
               "gesvdjBatched");
    if (uv && at[0])
        CUDA_TRY_INT(cudaMemcpy2DAsync(vh, (size_t)(cv * n) * es, pw, (size_t)(n * n) * es, (size_t)(cv * n) * es,
                                       (size_t)nb, cudaMemcpyDeviceToDevice, s));
    if (uv && at[1])
        CUDA_TRY_INT(cudaMemcpy2DAsync(ut, (size_t)(cu * m) * es, pv, (size_t)(m * m) * es, (size_t)(cu * m) * es,
                                       (size_t)nb, cudaMemcpyDeviceToDevice, s));
    int *hinfo = nd_malloc((size_t)nb * sizeof *hinfo);
    if (!hinfo) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory reading back gesvdjBatched's status");
        return ND_CUDA_LIB_ND_ERROR;
    }
    int e = (int)cudaMemcpyAsync(hinfo, info, (size_t)nb * sizeof *hinfo, cudaMemcpyDeviceToHost, s);
    if (!e) e = (int)cudaStreamSynchronize(s);
    for (int64_t b = 0; b < nb && !e; b++) {
        if (hinfo[b] <= 0) continue; /* converged, or a bad argument: check_infos says so */
        nd_logf(2, "cuda: gesvdjBatched, matrix %lld of %lld (%lld x %lld): info %d; factored again by gesvdj",
                (long long)b, (long long)nb, (long long)m, (long long)n, hinfo[b]);
        e = run_one(h, u, args, g, b, info + b, work, lwork, extra, params, s);
    }
    free(hinfo);
    return e;
}

/* Whether the routine factors the whole batch in one call. */
static int one_call(const nd_user_desc *u, const geom *g) {
    return batched(u, g) || eigh_batched(u, g) || svd_batched(u, g);
}

/* Cholesky's library workspace without asking cuSOLVER again: all of the
 * workspace past the status words, which prepare sized (query) as those
 * words and potrf's lwork, so lwork is at least what potrf asked for. */
static int chol_lwork(const geom *g, size_t ws_bytes, ws_need *w) {
    size_t head = up((size_t)(g->batch + 1) * sizeof(int));
    if (ws_bytes < head) return (int)cudaErrorInvalidValue; /* sized at prepare: cannot happen */
    size_t el = ((ws_bytes - head) & ~(size_t)255) / g->es;
    w->lwork = el > INT_MAX ? INT_MAX : (int)el;
    w->extra = 0;
    return 0;
}

/* Every routine; cu is needed by (and only by) LA_CHOLESKY's pack pass.
 * Cholesky's pack (which also zeroes the status words) is launched before
 * anything else: the GPU has nothing to do until then, so the host calls
 * after it (the handle, its stream, the parameters) overlap the pass. */
static int la_run(nd_cuda *cu, const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes,
                  cudaStream_t s) {
    int chol = u->lib == ND_LIB_LA_CHOLESKY;
    if (chol && !cu) return (int)cudaErrorNotSupported; /* nd_cuda_la_cholesky_run's */
    geom g;
    geometry(u, args, &g);
    int *info = ws;
    nd_dtype t = (nd_dtype)args[0].dtype;
    int e = 0;
    if (chol && ws_bytes < up((size_t)(g.batch + 1) * sizeof(int))) return (int)cudaErrorInvalidValue;
    if (chol && (e = nd_cuda_chol_pack(cu, t, args[0].data, args[1].data, g.n, g.batch, info, g.batch + 1, s)))
        return e;
    cusolverDnHandle_t h;
    if ((e = handle_for(&h))) return e;
    SOLVER_TRY(cusolverDnSetStream(h, s), "cusolverDnSetStream");
    gesvdjInfo_t params = NULL;
    syevjInfo_t eig_params = NULL;
    if (u->lib == ND_LIB_LA_SVD) SOLVER_TRY(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
    if (eigh_batched(u, &g) && cusolverDnCreateSyevjInfo(&eig_params) != CUSOLVER_STATUS_SUCCESS)
        e = solver_failed(CUSOLVER_STATUS_ALLOC_FAILED, "cusolverDnCreateSyevjInfo");
    ws_need w;
    if (!e) e = chol && !batched(u, &g) ? chol_lwork(&g, ws_bytes, &w) : query(h, u, &g, &w, params, eig_params);
    if (!e && ws_total(&g, &w) > ws_bytes) e = (int)cudaErrorInvalidValue; /* sized at prepare: cannot happen */
    char *work = (char *)ws + up((size_t)(g.batch + 1) * sizeof(int));
    char *extra = e ? NULL : work + up((size_t)w.lwork * g.es);
    if (!e && !chol) e = (int)cudaMemsetAsync(info, 0, (size_t)(g.batch + 1) * sizeof(int), s);
    void **host_ptrs = NULL;
    if (!e && batched(u, &g)) e = run_batched(h, u, args, &g, info, extra, &host_ptrs, s);
    if (!e && eigh_batched(u, &g)) { /* the whole batch, strided, in one call */
        int64_t n = g.n;
        char *vt = (char *)args[2].data, *wv = (char *)args[1].data;
        cusolverEigMode_t mode = u->lib_args.v[0].i ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
        e = (int)copy(vt, args[0].data, (size_t)(g.batch * n * n) * g.es, s);
        cusolverStatus_t st = CUSOLVER_STATUS_SUCCESS;
        if (!e)
            st = DT4H(&g, syevjBatched, heevjBatched, h, mode, CUBLAS_FILL_MODE_UPPER, (int)n, (void *)vt, lda(n), (void *)wv,
                      (void *)work, w.lwork, info, eig_params, (int)g.batch);
        if (st != CUSOLVER_STATUS_SUCCESS) e = solver_failed(st, "syevjBatched");
    }
    if (!e && svd_batched(u, &g)) e = svd_batched_run(h, u, args, &g, info, work, w.lwork, extra, params, s);
    int host_geev = u->lib == ND_LIB_LA_EIG && !geev_on_device();
    if (!e && host_geev) e = geev_on_host(u, args, &g, s);
    for (int64_t b = 0; b < g.batch && !e && !host_geev && !one_call(u, &g); b++)
        e = run_one(h, u, args, &g, b, info + b, work, w.lwork, extra, params, s);
    if (!e && chol) e = nd_cuda_chol_join(cu, g.n, g.batch, s);
    if (!e && nd_lib_reads_back(u->lib)) e = check_infos(u, &g, info, s); /* waits for the stream */
    if (!e && u->lib == ND_LIB_LA_EIGH) e = eigh_in_order(u, args, &g, work, ws_bytes - (size_t)(work - (char *)ws), s);
    if (e && (host_ptrs || params || eig_params)) (void)cudaStreamSynchronize(s); /* nothing still reads them */
    /* The parameter objects and the host pointers outlive the calls that
     * read them: check_infos (or the line above) waited for the stream. */
    if (params) cusolverDnDestroyGesvdjInfo(params);
    if (eig_params) cusolverDnDestroySyevjInfo(eig_params);
    free(host_ptrs);
    return e;
}

int nd_cuda_la_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    return la_run(NULL, u, args, ws, ws_bytes, s);
}

int nd_cuda_la_cholesky_run(nd_cuda *cu, const nd_user_desc *u, const nd_kernel_arg *args, void *ws,
                            size_t ws_bytes, cudaStream_t s) {
    return la_run(cu, u, args, ws, ws_bytes, s);
}
