/*
 * linalg_bench.c — dense linear algebra (include/nd/linalg_decomp.h) on the
 * backend ND_BACKEND picks: cholesky, solve (one right-hand side), eigh and
 * svd (full U and Vh off: reduced) of one N x N matrix in float32 and
 * float64, and B batched 8x8 float32 solves.
 *
 * Rules (bench/README.md): fresh random inputs per run, made and synced
 * outside the timed part; one checked warm-up (a reconstruction residual
 * against the input: L L^T, A x - b, A V - V diag(w), U diag(S) Vh, scaled
 * by N and the dtype's epsilon); the median of R timed runs, each from the
 * first call to the nd_sync that waits for it.
 *
 * Usage: linalg_bench [N[,N...]] [B] [R] [ops]   (defaults 1024 100000 7
 * all; N one size or a comma list of up to 8, each run in turn; ops a comma
 * list of cholesky,solve,eigh,svd,batched)
 * Prints one line per case: name dtype size median_ms.
 *
 * Built with cuSOLVER (BENCH_HAVE_CUSOLVER, a CUDA build) and run on the
 * CUDA backend, each case also times the library call alone in the same
 * run, on a device copy of the same input, restored untimed before each
 * run: potrf; getrf + getrs; syevd with vectors; for svd the routine nd's
 * rule picks (src/backends/cuda/lib_linalg.c, svd_routine): Xgesvdp
 * (economy, vectors) past 1024, gesvdj (economy, vectors,
 * default tolerance) otherwise; cuBLAS getrfBatched + getrsBatched for the
 * batch -- the calls nd makes -- each followed by the info word's read back
 * (nd reads it too), and prints nd's median over the library's (the target
 * is <= 1.05).
 *
 * svd on CUDA also prints how far nd's S and the routine's are from a
 * reference: float64 gesvd, values only, of the same values (for float32,
 * widened): max |S - S_ref| / S_ref[0], and Xgesvdp's h_err_sigma.
 *
 * cholesky on CUDA also prints where the time goes (BENCH_HAVE_NVRTC):
 * nd's pack pass, compiled here from nd's own source
 * (src/backends/cuda/chol_source.c) as nd compiles it, before potrf on
 * the same matrix, each timed with cudaEvents (median of R): pack (A's
 * lower triangle transposed, zeros below the diagonal, the status word
 * zeroed: nd's output is L^T, handed out as the transposed view), potrf,
 * their sum, and nd's whole call minus that sum (the host's part:
 * recording, planning, launching, the info read back); pack's rate
 * (bytes read and written) against a device-to-device copy of the
 * matrix; and pack again with the blocks walking the tiles in groups of 1
 * (along tile rows, the order before tile groups), 4 and 16 tiles a side
 * (NDK_GROUP).
 */
#include <nd.h>

#include <float.h>
#include <math.h>

#include "bench_util.h"

#ifdef BENCH_HAVE_CUSOLVER
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#endif

static int64_t N = 1024, B = 100000;
static int R = 7;

/* An SPD matrix (P P^T / n + I) and a random right-hand side, synced. */
static void inputs(nd_dtype t, int64_t batch, int64_t n, nd_array **a, nd_array **b) {
    nd_scope_begin();
    int nd = batch ? 3 : 2;
    int64_t sa[3] = {batch, n, n}, sb[3] = {batch, n, 1};
    const int64_t *pa = batch ? sa : sa + 1, *pb = batch ? sb : sb + 1;
    nd_array *p = nd_random_uniform(t, nd, pa, -1, 1);
    nd_array *g = nd_matmul(p, nd_swapaxes(p, -1, -2));
    *a = nd_add(nd_div(g, nd_scalar((double)n)), nd_eye(t, n, n, 0));
    *b = nd_random_uniform(t, nd, pb, -1, 1);
    nd_retain(*a);
    nd_retain(*b);
    nd_scope_end();
    nd_sync();
}

static double max_abs(nd_array *x) { return nd_item(nd_max(nd_abs(x), ND_ALL_AXES)); }

/* The residual of op's answer on (a, b), relative to |a| (checked once). */
static double residual(const char *op, nd_array *a, nd_array *b) {
    nd_scope_begin();
    double r = INFINITY;
    if (!strcmp(op, "cholesky")) {
        nd_array *l = nd_linalg_cholesky(a);
        r = max_abs(nd_sub(nd_matmul(l, nd_swapaxes(l, -1, -2)), a));
    } else if (!strcmp(op, "solve") || !strcmp(op, "batched")) {
        nd_array *x = nd_linalg_solve(a, b);
        r = max_abs(nd_sub(nd_matmul(a, x), b));
    } else if (!strcmp(op, "eigh")) {
        nd_array *w, *v;
        nd_linalg_eigh(a, &w, &v);
        r = max_abs(nd_sub(nd_matmul(a, v), nd_mul(v, w)));
    } else if (!strcmp(op, "svd")) {
        nd_array *u, *s, *vh;
        nd_linalg_svd(a, false, true, &u, &s, &vh);
        r = max_abs(nd_sub(nd_matmul(nd_mul(u, s), vh), a));
    }
    nd_scope_end();
    return r / (max_abs(a) + 1e-300);
}

#ifdef BENCH_HAVE_CUSOLVER
/* The library call alone on the values of a and b (see the top): the
 * median in seconds, or -1 when it cannot run (not on CUDA, a failure). */
#define CU_OK(x) ((x) == 0)
/* The last Xgesvdp call's h_err_sigma (NAN: none), and the routine's S. */
static double lib_err_sigma = NAN;
static double *lib_s;

static double alone(const char *op, nd_dtype t, int64_t batch, int64_t n, nd_array *a, nd_array *b) {
    const char *be = getenv("ND_BACKEND");
    if (!be || strcmp(be, "cuda") != 0) return -1;
    int f64 = t == ND_FLOAT64, nb = (int)(batch ? batch : 1), ni = (int)n;
    size_t es = f64 ? sizeof(double) : sizeof(float), abytes = (size_t)nb * (size_t)(n * n) * es,
           bbytes = (size_t)nb * (size_t)n * es;
    void *ha = malloc(abytes), *hb = malloc(bbytes);
    void *da0 = NULL, *da = NULL, *db0 = NULL, *db = NULL, *work = NULL, *ptrs = NULL, *extra = NULL;
    int *dinfo = NULL, *piv = NULL, lwork = 0, ok = ha && hb && nd_to_host(a, ha, abytes) == ND_OK &&
                                                 nd_to_host(b, hb, bbytes) == ND_OK;
    static cusolverDnHandle_t h;
    static cublasHandle_t bh;
    if (ok && !h) ok = CU_OK(cusolverDnCreate(&h)) && CU_OK(cublasCreate(&bh));
    ok = ok && CU_OK(cudaMalloc(&da0, abytes)) && CU_OK(cudaMalloc(&da, abytes)) && CU_OK(cudaMalloc(&db0, bbytes)) &&
         CU_OK(cudaMalloc(&db, bbytes)) && CU_OK(cudaMalloc((void **)&dinfo, sizeof(int) * (size_t)(nb + 1))) &&
         CU_OK(cudaMalloc((void **)&piv, sizeof(int) * (size_t)nb * (size_t)n)) &&
         CU_OK(cudaMemcpy(da0, ha, abytes, cudaMemcpyHostToDevice)) &&
         CU_OK(cudaMemcpy(db0, hb, bbytes, cudaMemcpyHostToDevice));
    gesvdjInfo_t sv = NULL;
    /* nd's rule for a square matrix, reduced (src/backends/cuda/lib_linalg.c,
     * svd_routine): Xgesvdp from 256 on, gesvdj otherwise */
    int svd_x = n >= 256;
    const cudaDataType xt = f64 ? CUDA_R_64F : CUDA_R_32F;
    static cusolverDnParams_t xp;
    size_t xdev = 0, xhost = 0;
    void *xh = NULL;
    if (ok && !xp) ok = CU_OK(cusolverDnCreateParams(&xp));
    cusolverEigMode_t V = CUSOLVER_EIG_MODE_VECTOR;
    cublasFillMode_t U = CUBLAS_FILL_MODE_LOWER; /* nd's call (the faster of the two) */
    if (ok && !strcmp(op, "cholesky")) {
        ok = CU_OK(f64 ? cusolverDnDpotrf_bufferSize(h, U, ni, da, ni, &lwork)
                       : cusolverDnSpotrf_bufferSize(h, U, ni, da, ni, &lwork));
    } else if (ok && !strcmp(op, "solve")) {
        ok = CU_OK(f64 ? cusolverDnDgetrf_bufferSize(h, ni, ni, da, ni, &lwork)
                       : cusolverDnSgetrf_bufferSize(h, ni, ni, da, ni, &lwork));
    } else if (ok && !strcmp(op, "eigh")) {
        ok = CU_OK(cudaMalloc(&extra, (size_t)n * es)) &&
             CU_OK(f64 ? cusolverDnDsyevd_bufferSize(h, V, U, ni, da, ni, extra, &lwork)
                       : cusolverDnSsyevd_bufferSize(h, V, U, ni, da, ni, extra, &lwork));
    } else if (ok && !strcmp(op, "svd")) { /* S, U, V after each other in extra */
        ok = CU_OK(cusolverDnCreateGesvdjInfo(&sv)) && CU_OK(cudaMalloc(&extra, (size_t)(2 * n + 2 * n * n) * es));
        char *s_ = extra, *u_ = s_ + (size_t)n * es, *v_ = u_ + (size_t)(n * n) * es;
        if (ok && svd_x)
            ok = CU_OK(cusolverDnXgesvdp_bufferSize(h, xp, V, 1, n, n, xt, da, n, xt, s_, xt, u_, n,
                                                    xt, v_, n, xt, &xdev, &xhost)) &&
                 (!xhost || (xh = malloc(xhost)) != NULL);
        else ok = ok && CU_OK(f64 ? cusolverDnDgesvdj_bufferSize(h, V, 1, ni, ni, da, ni, (double *)s_, (double *)u_, ni,
                                                             (double *)v_, ni, &lwork, sv)
                             : cusolverDnSgesvdj_bufferSize(h, V, 1, ni, ni, da, ni, (float *)s_, (float *)u_, ni,
                                                             (float *)v_, ni, &lwork, sv));
    } else if (ok) { /* batched: pointer arrays to the matrices and right-hand sides */
        void **hp = malloc(sizeof(void *) * 2 * (size_t)nb);
        ok = hp && CU_OK(cudaMalloc(&ptrs, sizeof(void *) * 2 * (size_t)nb));
        for (int i = 0; ok && i < nb; i++) {
            hp[i] = (char *)da + (size_t)i * (size_t)(n * n) * es;
            hp[nb + i] = (char *)db + (size_t)i * (size_t)n * es;
        }
        ok = ok && CU_OK(cudaMemcpy(ptrs, hp, sizeof(void *) * 2 * (size_t)nb, cudaMemcpyHostToDevice));
        free(hp);
    }
    ok = ok && CU_OK(cudaMalloc(&work, (size_t)(lwork + 1) * es + xdev));
    double times[64];
    for (int r = 0; ok && r < R; r++) {
        ok = CU_OK(cudaMemcpy(da, da0, abytes, cudaMemcpyDeviceToDevice)) &&
             CU_OK(cudaMemcpy(db, db0, bbytes, cudaMemcpyDeviceToDevice)) && CU_OK(cudaDeviceSynchronize());
        int hinfo = 0, st = 0;
        bench_settle();
        double t0 = bench_now();
        if (!strcmp(op, "cholesky")) {
            st = f64 ? cusolverDnDpotrf(h, U, ni, da, ni, work, lwork, dinfo)
                     : cusolverDnSpotrf(h, U, ni, da, ni, work, lwork, dinfo);
        } else if (!strcmp(op, "solve")) {
            st = f64 ? cusolverDnDgetrf(h, ni, ni, da, ni, work, piv, dinfo)
                     : cusolverDnSgetrf(h, ni, ni, da, ni, work, piv, dinfo);
            if (!st) st = f64 ? cusolverDnDgetrs(h, CUBLAS_OP_N, ni, 1, da, ni, piv, db, ni, dinfo + 1)
                              : cusolverDnSgetrs(h, CUBLAS_OP_N, ni, 1, da, ni, piv, db, ni, dinfo + 1);
        } else if (!strcmp(op, "eigh")) {
            st = f64 ? cusolverDnDsyevd(h, V, U, ni, da, ni, extra, work, lwork, dinfo)
                     : cusolverDnSsyevd(h, V, U, ni, da, ni, extra, work, lwork, dinfo);
        } else if (!strcmp(op, "svd")) {
            char *s_ = extra, *u_ = s_ + (size_t)n * es, *v_ = u_ + (size_t)(n * n) * es;
            if (svd_x)
                st = cusolverDnXgesvdp(h, xp, V, 1, n, n, xt, da, n, xt, s_, xt, u_, n, xt,
                                       v_, n, xt, work, xdev, xh, xhost, dinfo, &lib_err_sigma);
            else
                st = f64 ? cusolverDnDgesvdj(h, V, 1, ni, ni, da, ni, (double *)s_, (double *)u_, ni, (double *)v_, ni,
                                             work, lwork, dinfo, sv)
                         : cusolverDnSgesvdj(h, V, 1, ni, ni, da, ni, (float *)s_, (float *)u_, ni, (float *)v_, ni,
                                             work, lwork, dinfo, sv);
        } else {
            void **dp = ptrs;
            st = cublasSgetrfBatched(bh, ni, (float *const *)dp, ni, piv, dinfo, nb);
            if (!st) st = cublasSgetrsBatched(bh, CUBLAS_OP_N, ni, 1, (const float *const *)dp, ni, piv,
                                              (float *const *)(dp + nb), ni, &hinfo, nb);
        }
        ok = ok && st == 0 && CU_OK(cudaMemcpy(&hinfo, dinfo, sizeof hinfo, cudaMemcpyDeviceToHost));
        times[r] = bench_now() - t0;
    }
    if (ok && lib_s && !strcmp(op, "svd")) { /* the routine's S, as float64 */
        void *hs = malloc((size_t)n * es);
        ok = hs && CU_OK(cudaMemcpy(hs, extra, (size_t)n * es, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; ok && i < n; i++) lib_s[i] = f64 ? ((double *)hs)[i] : ((float *)hs)[i];
        free(hs);
    }
    if (sv) cusolverDnDestroyGesvdjInfo(sv);
    free(xh);
    cudaFree(da0), cudaFree(da), cudaFree(db0), cudaFree(db), cudaFree(dinfo), cudaFree(piv), cudaFree(work);
    cudaFree(ptrs), cudaFree(extra);
    free(ha), free(hb);
    return ok ? bench_median(times, R) : -1;
}
/* Float64 gesvd's singular values, values only, of the n x n values ha
 * (dtype t; read column-major: the transpose, same values): 0 or -1. */
static int ref_svd(nd_dtype t, int64_t n, const void *ha, double *out) {
    static cusolverDnHandle_t h;
    size_t bytes = (size_t)(n * n) * sizeof(double);
    double *hd = malloc(bytes), *da = NULL, *ds = NULL, *work = NULL, *rwork = NULL;
    int *dinfo = NULL, lwork = 0, hinfo = -1, ni = (int)n;
    int ok = hd && (h || CU_OK(cusolverDnCreate(&h)));
    for (int64_t i = 0; ok && i < n * n; i++) hd[i] = t == ND_FLOAT64 ? ((const double *)ha)[i] : ((const float *)ha)[i];
    ok = ok && CU_OK(cudaMalloc((void **)&da, bytes)) && CU_OK(cudaMalloc((void **)&ds, (size_t)n * sizeof(double))) &&
         CU_OK(cudaMalloc((void **)&rwork, (size_t)n * sizeof(double))) && CU_OK(cudaMalloc((void **)&dinfo, sizeof(int))) &&
         CU_OK(cudaMemcpy(da, hd, bytes, cudaMemcpyHostToDevice)) && CU_OK(cusolverDnDgesvd_bufferSize(h, ni, ni, &lwork)) &&
         CU_OK(cudaMalloc((void **)&work, (size_t)(lwork + 1) * sizeof(double)));
    ok = ok && CU_OK(cusolverDnDgesvd(h, 'N', 'N', ni, ni, da, ni, ds, work, ni, work, ni, work, lwork, rwork, dinfo)) &&
         CU_OK(cudaMemcpy(&hinfo, dinfo, sizeof hinfo, cudaMemcpyDeviceToHost)) && hinfo == 0 &&
         CU_OK(cudaMemcpy(out, ds, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(da), cudaFree(ds), cudaFree(work), cudaFree(rwork), cudaFree(dinfo);
    free(hd);
    return ok ? 0 : -1;
}

/* max |s - ref| / ref[0] over n values (NAN without s). */
static double s_err(const double *s, const double *ref, int64_t n) {
    if (!s || !ref) return NAN;
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(s[i] - ref[i]) / ref[0]);
    return e;
}

/* nd's S (the timed call, once more) and the routine's (alone) against
 * ref_svd's, for a. */
static void svd_errors(nd_dtype t, int64_t n, nd_array *a, double *e_nd, double *e_lib) {
    size_t bytes = (size_t)(n * n) * (t == ND_FLOAT64 ? 8 : 4);
    void *ha = malloc(bytes);
    double *ref = malloc(sizeof(double) * (size_t)n), *s_nd = malloc(sizeof(double) * (size_t)n);
    if (ha && ref && s_nd && nd_to_host(a, ha, bytes) == ND_OK && ref_svd(t, n, ha, ref) == 0) {
        *e_lib = s_err(lib_s, ref, n);
        nd_scope_begin();
        nd_array *u, *s, *vh;
        nd_linalg_svd(a, false, true, &u, &s, &vh);
        nd_array *s64 = s ? nd_astype(s, ND_FLOAT64) : NULL;
        if (s64 && nd_to_host(s64, s_nd, sizeof(double) * (size_t)n) == ND_OK) *e_nd = s_err(s_nd, ref, n);
        nd_scope_end();
        nd_clear_error();
    }
    free(ha), free(ref), free(s_nd);
}

#ifdef BENCH_HAVE_NVRTC
#include <nvrtc.h>

/* src/backends/cuda/chol_source.c, built into this program. */
const char *nd_cuda_chol_source(void);
#define CHOL_TILE 32 /* lib_cholesky.c's TILE, ROWS and GROUP */
#define CHOL_ROWS 8
#define CHOL_GROUP 8

/* nd's pack of dtype t, compiled as nd compiles it (kernel_cache.c's
 * options), with NDK_GROUP = group: 0 or -1. */
static int chol_pass(int group, nd_dtype t, cudaKernel_t *k) {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev))
        return -1;
    char arch[48], def[32];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    snprintf(def, sizeof def, "-DNDK_GROUP=%d", group);
    const char *opts[] = {arch, "--std=c++17", "-lineinfo", "--device-as-default-execution-space", def};
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, nd_cuda_chol_source(), "nd_chol_triangles.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return -1;
    size_t len = 0;
    char *bin = NULL;
    int ok = nvrtcCompileProgram(prog, 5, opts) == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &len) == NVRTC_SUCCESS &&
             (bin = malloc(len)) != NULL && nvrtcGetCUBIN(prog, bin) == NVRTC_SUCCESS;
    nvrtcDestroyProgram(&prog);
    cudaLibrary_t lib;
    ok = ok && CU_OK(cudaLibraryLoadData(&lib, bin, NULL, NULL, 0, NULL, NULL, 0));
    free(bin);
    char name[48];
    /* the entry lib_cholesky.c launches for one matrix with its zeros */
    snprintf(name, sizeof name, "nd_chol_pack1_%s", nd_dtype_name(t));
    ok = ok && CU_OK(cudaLibraryGetKernel(k, lib, name));
    return ok ? 0 : -1;
}

/* One launch of pack k over one n x n matrix and its status word, as
 * lib_cholesky.c launches it for one matrix. */
static int chol_launch(cudaKernel_t k, int group, const void *a, void *c, int64_t n, int *info) {
    int64_t nt = (n + CHOL_TILE - 1) / CHOL_TILE, ng = (nt + group - 1) / group;
    dim3 grid = {(unsigned)(ng * (ng + 1) / 2 * group * group), 1, 1}, block = {CHOL_TILE, CHOL_ROWS, 1};
    int ni = (int)n;
    long long ninfo = 1;
    /* pack1: one matrix, the zeros written (ND_CUDA_CHOL_SIDE_ZEROS unset) */
    void *args[5] = {(void *)&a, &c, &ni, &info, &ninfo};
    return CU_OK(cudaLaunchKernel((const void *)k, grid, block, args, 0, 0)) ? 0 : -1;
}

/* Where nd's Cholesky time goes (the top comment), nd_ms its whole call. */
#define CHOL_WALKS 3
static void chol_phases(nd_dtype t, int64_t n, nd_array *a, double nd_ms) {
    static const int walks[CHOL_WALKS] = {1, 4, 16}; /* NDK_GROUP values beside nd's CHOL_GROUP */
    int f64 = t == ND_FLOAT64, ni = (int)n, lwork = 0;
    size_t es = f64 ? 8 : 4, bytes = (size_t)(n * n) * es;
    void *ha = malloc(bytes), *da = NULL, *dc = NULL, *work = NULL;
    int *dinfo = NULL;
    cudaKernel_t k, kw[CHOL_WALKS];
    cudaEvent_t ev[3] = {0};
    static cusolverDnHandle_t h;
    cublasFillMode_t L = CUBLAS_FILL_MODE_LOWER;
    int ok = ha && nd_to_host(a, ha, bytes) == ND_OK && (h || CU_OK(cusolverDnCreate(&h))) &&
             chol_pass(CHOL_GROUP, t, &k) == 0 && CU_OK(cudaMalloc(&da, bytes)) && CU_OK(cudaMalloc(&dc, bytes)) &&
             CU_OK(cudaMalloc((void **)&dinfo, sizeof(int))) && CU_OK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice)) &&
             CU_OK(f64 ? cusolverDnDpotrf_bufferSize(h, L, ni, dc, ni, &lwork)
                       : cusolverDnSpotrf_bufferSize(h, L, ni, dc, ni, &lwork)) &&
             CU_OK(cudaMalloc(&work, (size_t)(lwork + 1) * es)) && CU_OK(cusolverDnSetStream(h, 0));
    for (int i = 0; ok && i < CHOL_WALKS; i++) ok = chol_pass(walks[i], t, &kw[i]) == 0;
    for (int i = 0; ok && i < 3; i++) ok = CU_OK(cudaEventCreate(&ev[i]));
    double tp[64], tf[64], tc[64], twp[CHOL_WALKS][64];
    float ms = 0;
    for (int r = 0; ok && r < R; r++) { /* nd's step: pack, potrf */
        int hinfo = -1;
        ok = CU_OK(cudaDeviceSynchronize()) && CU_OK(cudaEventRecord(ev[0], 0)) &&
             chol_launch(k, CHOL_GROUP, da, dc, n, dinfo) == 0 && CU_OK(cudaEventRecord(ev[1], 0)) &&
             CU_OK(f64 ? cusolverDnDpotrf(h, L, ni, dc, ni, work, lwork, dinfo)
                       : cusolverDnSpotrf(h, L, ni, dc, ni, work, lwork, dinfo)) &&
             CU_OK(cudaEventRecord(ev[2], 0)) && CU_OK(cudaMemcpy(&hinfo, dinfo, sizeof hinfo, cudaMemcpyDeviceToHost)) &&
             hinfo == 0;
        ok = ok && CU_OK(cudaEventElapsedTime(&ms, ev[0], ev[1])) && ((tp[r] = ms), 1) &&
             CU_OK(cudaEventElapsedTime(&ms, ev[1], ev[2])) && ((tf[r] = ms), 1);
        /* the floor: a copy of the matrix */
        ok = ok && CU_OK(cudaEventRecord(ev[0], 0)) &&
             CU_OK(cudaMemcpyAsync(dc, da, bytes, cudaMemcpyDeviceToDevice, 0)) && CU_OK(cudaEventRecord(ev[1], 0)) &&
             CU_OK(cudaEventSynchronize(ev[1])) && CU_OK(cudaEventElapsedTime(&ms, ev[0], ev[1])) && ((tc[r] = ms), 1);
        for (int i = 0; ok && i < CHOL_WALKS; i++) { /* pack walking the tiles otherwise */
            ok = CU_OK(cudaEventRecord(ev[0], 0)) && chol_launch(kw[i], walks[i], da, dc, n, dinfo) == 0 &&
                 CU_OK(cudaEventRecord(ev[1], 0)) && CU_OK(cudaEventSynchronize(ev[1]));
            ok = ok && CU_OK(cudaEventElapsedTime(&ms, ev[0], ev[1])) && ((twp[i][r] = ms), 1);
        }
    }
    if (ok) {
        double p = bench_median(tp, R), f = bench_median(tf, R), c = bench_median(tc, R);
        /* pack reads the lower triangle and writes the whole matrix: 1.5 x bytes
         * (bytes per ms / 1e6: GB/s) */
        double gb = (double)bytes / 1e6, pack_gb = 1.5 * gb;
        printf("  phases (cudaEvent, median of %d; NDK_GROUP %d): pack %.3f ms (%.0f GB/s)  potrf %.3f ms"
               "  sum %.3f ms; nd's call - sum %.3f ms\n",
               R, CHOL_GROUP, p, pack_gb / p, f, p + f, nd_ms - (p + f));
        printf("  floor: device copy of A %.3f ms (%.0f GB/s); pack with NDK_GROUP", c, 2 * gb / c);
        for (int i = 0; i < CHOL_WALKS; i++) {
            double wp = bench_median(twp[i], R);
            printf("%s %d: %.3f ms (%.0f GB/s)", i ? "," : "", walks[i], wp, pack_gb / wp);
        }
        printf("\n");
    } else {
        printf("  phases: FAILED (%s)\n", cudaGetErrorString(cudaGetLastError()));
    }
    for (int i = 0; i < 3; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    cudaFree(da), cudaFree(dc), cudaFree(work), cudaFree(dinfo);
    free(ha);
}
#endif
#else
static double alone(const char *op, nd_dtype t, int64_t batch, int64_t n, nd_array *a, nd_array *b) {
    (void)op, (void)t, (void)batch, (void)n, (void)a, (void)b;
    return -1;
}
#endif

static void run(const char *op, nd_dtype t, int64_t batch, int64_t n) {
    nd_array *a, *b;
    inputs(t, batch, n, &a, &b);
    double res = residual(op, a, b), eps = t == ND_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    int ok = nd_last_status() == ND_OK && res < eps * (double)n * 1e3;
    nd_clear_error();
    nd_free(a);
    nd_free(b);
    double times[64];
    for (int i = 0; i < R && ok; i++) {
        inputs(t, batch, n, &a, &b);
        nd_scope_begin();
        bench_settle();
        double t0 = bench_now();
        if (!strcmp(op, "cholesky")) {
            nd_linalg_cholesky(a);
        } else if (!strcmp(op, "solve") || !strcmp(op, "batched")) {
            nd_linalg_solve(a, b);
        } else if (!strcmp(op, "eigh")) {
            nd_array *w, *v;
            nd_linalg_eigh(a, &w, &v);
        } else {
            nd_array *u, *s, *vh;
            nd_linalg_svd(a, false, true, &u, &s, &vh);
        }
        ok = nd_sync() == ND_OK;
        times[i] = bench_now() - t0;
        nd_scope_end();
        nd_free(a);
        nd_free(b);
    }
    if (!ok) {
        printf("%-9s %-7s %8lld x %-6lld FAILED (residual %.3g: %s)\n", op, nd_dtype_name(t), (long long)(batch ? batch : 1),
               (long long)n, res, nd_last_error());
        nd_clear_error();
        return;
    }
    double med = bench_median(times, R);
    inputs(t, batch, n, &a, &b);
    int svd = !strcmp(op, "svd");
#ifdef BENCH_HAVE_CUSOLVER
    lib_err_sigma = NAN;
    if (svd) lib_s = malloc(sizeof(double) * (size_t)n);
#endif
    double lib = alone(op, t, batch, n, a, b), e_nd = NAN, e_lib = NAN;
#ifdef BENCH_HAVE_CUSOLVER
    if (lib > 0 && svd) svd_errors(t, n, a, &e_nd, &e_lib);
    free(lib_s);
    lib_s = NULL;
#endif
    printf("%-9s %-7s %8lld x %-6lld %10.3f ms  (residual %.2g)", op, nd_dtype_name(t),
           (long long)(batch ? batch : 1), (long long)n, 1e3 * med, res);
    if (lib > 0) printf("  library alone %10.3f ms  nd/library %.3f", 1e3 * lib, med / lib);
    printf("\n");
#ifdef BENCH_HAVE_CUSOLVER
    if (lib > 0 && svd)
        printf("  max|S - S_ref|/S_ref[0] (S_ref: float64 gesvd, values only): nd %.2g, library alone %.2g;"
               " h_err_sigma %.2g\n", e_nd, e_lib, lib_err_sigma);
#endif
#ifdef BENCH_HAVE_NVRTC
    if (lib > 0 && !strcmp(op, "cholesky") && !batch) chol_phases(t, n, a, 1e3 * med);
#endif
    nd_free(a);
    nd_free(b);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int64_t sizes[8] = {N};
    int nsizes = argc > 1 ? 0 : 1;
    for (const char *p = argc > 1 ? argv[1] : NULL; p && nsizes <= 8; p = strchr(p + (p != argv[1]), ',')) { /* N or N,N,... */
        if (nsizes < 8) sizes[nsizes] = atoll(p + (p != argv[1]));
        nsizes++; /* a ninth size marks too many */
    }
    if (argc > 2) B = atoll(argv[2]);
    if (argc > 3) R = atoi(argv[3]);
    const char *ops = argc > 4 ? argv[4] : "cholesky,solve,eigh,svd,batched";
    int bad = nsizes > 8 || B < 1 || R < 1 || R > 64;
    for (int i = 0; i < nsizes && i < 8; i++) bad |= sizes[i] < 1;
    if (bad) {
        fprintf(stderr, "usage: linalg_bench [N[,N...] (8 at most)] [B] [R <= 64] [ops]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "linalg_bench: %s\n", nd_last_error());
        return 1;
    }
    printf("linalg_bench on %s: median of %d runs\n", getenv("ND_BACKEND") ? getenv("ND_BACKEND") : "auto", R);
    const char *names[4] = {"cholesky", "solve", "eigh", "svd"};
    for (int i = 0; i < nsizes; i++)
        for (int k = 0; k < 4; k++) {
            if (!strstr(ops, names[k])) continue;
            N = sizes[i];
            run(names[k], ND_FLOAT32, 0, N);
            run(names[k], ND_FLOAT64, 0, N);
        }
    if (strstr(ops, "batched")) run("batched", ND_FLOAT32, B, 8);
    nd_shutdown();
    return 0;
}
