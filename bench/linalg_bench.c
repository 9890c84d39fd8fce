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
 * Usage: linalg_bench [N] [B] [R] [ops]   (defaults 1024 100000 7 all;
 * ops a comma list of cholesky,solve,eigh,svd,batched)
 * Prints one line per case: name dtype size median_ms.
 *
 * Built with cuSOLVER (BENCH_HAVE_CUSOLVER, a CUDA build) and run on the
 * CUDA backend, each case also times the library call alone in the same
 * run, on a device copy of the same input, restored untimed before each
 * run: potrf; getrf + getrs; syevd with vectors; gesvdj (economy, vectors,
 * default tolerance), or gesvd for float64 past 1024 (nd's rule); cuBLAS
 * getrfBatched + getrsBatched for the batch -- the calls nd makes -- each followed by the info word's read back (nd
 * reads it too), and prints nd's median over the library's (the target is
 * <= 1.05).
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
    /* nd's rule (src/backends/cuda/lib_linalg.c, svd_gesvd): gesvd for
     * float64 past 1024, gesvdj otherwise */
    int svd_gesvd = f64 && n > 1024;
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
    } else if (ok && !strcmp(op, "svd")) { /* S, U, V (and gesvd's rwork) after each other in extra */
        ok = CU_OK(cusolverDnCreateGesvdjInfo(&sv)) && CU_OK(cudaMalloc(&extra, (size_t)(2 * n + 2 * n * n) * es));
        char *s_ = extra, *u_ = s_ + (size_t)n * es, *v_ = u_ + (size_t)(n * n) * es;
        if (ok && svd_gesvd)
            ok = CU_OK(f64 ? cusolverDnDgesvd_bufferSize(h, ni, ni, &lwork) : cusolverDnSgesvd_bufferSize(h, ni, ni, &lwork));
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
    ok = ok && CU_OK(cudaMalloc(&work, (size_t)(lwork + 1) * es));
    double times[64];
    for (int r = 0; ok && r < R; r++) {
        ok = CU_OK(cudaMemcpy(da, da0, abytes, cudaMemcpyDeviceToDevice)) &&
             CU_OK(cudaMemcpy(db, db0, bbytes, cudaMemcpyDeviceToDevice)) && CU_OK(cudaDeviceSynchronize());
        int hinfo = 0, st = 0;
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
            char *s_ = extra, *u_ = s_ + (size_t)n * es, *v_ = u_ + (size_t)(n * n) * es, *rw = v_ + (size_t)(n * n) * es;
            if (svd_gesvd)
                st = f64 ? cusolverDnDgesvd(h, 'S', 'S', ni, ni, da, ni, (double *)s_, (double *)u_, ni, (double *)v_, ni,
                                            work, lwork, (double *)rw, dinfo)
                         : cusolverDnSgesvd(h, 'S', 'S', ni, ni, da, ni, (float *)s_, (float *)u_, ni, (float *)v_, ni,
                                            work, lwork, (float *)rw, dinfo);
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
    if (sv) cusolverDnDestroyGesvdjInfo(sv);
    cudaFree(da0), cudaFree(da), cudaFree(db0), cudaFree(db), cudaFree(dinfo), cudaFree(piv), cudaFree(work);
    cudaFree(ptrs), cudaFree(extra);
    free(ha), free(hb);
    return ok ? bench_median(times, R) : -1;
}
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
    double lib = alone(op, t, batch, n, a, b);
    nd_free(a);
    nd_free(b);
    printf("%-9s %-7s %8lld x %-6lld %10.3f ms  (residual %.2g)", op, nd_dtype_name(t),
           (long long)(batch ? batch : 1), (long long)n, 1e3 * med, res);
    if (lib > 0) printf("  library alone %10.3f ms  nd/library %.3f", 1e3 * lib, med / lib);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc > 1) N = atoll(argv[1]);
    if (argc > 2) B = atoll(argv[2]);
    if (argc > 3) R = atoi(argv[3]);
    const char *ops = argc > 4 ? argv[4] : "cholesky,solve,eigh,svd,batched";
    if (N < 1 || B < 1 || R < 1 || R > 64) {
        fprintf(stderr, "usage: linalg_bench [N] [B] [R <= 64] [ops]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "linalg_bench: %s\n", nd_last_error());
        return 1;
    }
    printf("linalg_bench on %s: median of %d runs\n", getenv("ND_BACKEND") ? getenv("ND_BACKEND") : "auto", R);
    const char *names[4] = {"cholesky", "solve", "eigh", "svd"};
    for (int k = 0; k < 4; k++) {
        if (!strstr(ops, names[k])) continue;
        run(names[k], ND_FLOAT32, 0, N);
        run(names[k], ND_FLOAT64, 0, N);
    }
    if (strstr(ops, "batched")) run("batched", ND_FLOAT32, B, 8);
    nd_shutdown();
    return 0;
}
