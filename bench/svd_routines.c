/*
 * svd_routines.c — cuSOLVER's SVD routines alone, side by side, for the
 * choice nd_linalg_svd makes on CUDA (src/backends/cuda/lib_linalg.c,
 * svd_routine): gesvdj (Jacobi, economy, default tolerance: what PyTorch
 * uses by default, and JAX up to 1024), gesvd (QR iteration on the
 * bidiagonal form: CuPy's, and JAX's above 1024), the 64-bit Xgesvd (the
 * same algorithm) and Xgesvdp (polar decomposition, economy), each with
 * the singular vectors (reduced), on one N x N matrix in float32 and
 * float64.
 *
 * Inputs: the suite's svd matrix (bench/nd_suite_la.c: A = (G + G^T)/2 + I,
 * G = P P^T / n, P uniform [-1, 1): SPD, condition number ~5) and, with
 * "random", P itself (uniform, a spread of singular values down to ~0),
 * made by nd in float64 and copied to the device once; the float32 runs
 * take it rounded to float32. Each run restores the input (gesvd*
 * overwrite it) untimed, then times the call and the info word's read back
 * (nd reads it too) with the wall clock after a synchronised start; the
 * median of R runs. Each routine's singular values are checked against a
 * float64 gesvd's of the same values (the float32 input widened for the
 * float32 runs: their own error, not the rounding of the input), the
 * largest difference relative to S[0]; U and V are not (the
 * reconstruction is linalg_bench's and the suite's job).
 *
 * A size written BxN is a batch of B uniform random N x N float32
 * matrices (N <= 32), for nd's batched path (lib_linalg.c, svd_batched):
 * nd_linalg_svd on the (B, N, N) array (reduced, with vectors, waited for
 * with nd_sync; one call untimed first), gesvdjBatched alone (one call, the
 * B info words read back) and gesvdj alone matrix by matrix (B calls, what
 * nd did before, the info words read back once), each S against float64
 * gesvdjBatched's of the same values (Jacobi: accurate to float64's
 * rounding on matrices this small).
 *
 * Usage: bench_svd_routines [N[,N...]] [R] [routines] [random]
 *   (defaults 4096 3 gesvdj,gesvd,xgesvd,xgesvdp; N one size or a comma
 *   list, e.g. 512,1024,2048 for where Xgesvdp starts to pay, BxN items
 *   among them, e.g. 10000x8,1000x32)
 * e.g. ND_BACKEND=cuda bench_svd_routines 8192 3
 * Prints: routine dtype N median_ms S-difference (and Xgesvdp's
 * h_err_sigma: the perturbation it added, 0 when none).
 */
#include <nd.h>

#include <float.h>
#include <math.h>

#include "bench_util.h"

#ifdef BENCH_HAVE_CUSOLVER
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

static int R = 3;
static double last_err_sigma = NAN; /* Xgesvdp's h_err_sigma, last call */

/* The matrix (suite's or random) as float64 host values (malloc'd). */
static double *host_input(int64_t n, int random) {
    size_t bytes = (size_t)(n * n) * sizeof(double);
    double *h = malloc(bytes);
    nd_scope_begin();
    nd_dtype t = ND_FLOAT64;
    nd_array *p = nd_random_uniform(t, ND_SHAPE(n, n), -1, 1), *a = p;
    if (!random) {
        nd_array *g = nd_div(nd_matmul(p, nd_swapaxes(p, -1, -2)), nd_scalar((double)n));
        a = nd_add(nd_mul(nd_add(g, nd_swapaxes(g, -1, -2)), nd_scalar(0.5)), nd_eye(t, n, n, 0));
    }
    if (!h || nd_to_host(a, h, bytes) != ND_OK) {
        free(h);
        h = NULL;
    }
    nd_scope_end();
    return h;
}

/* count float64 values rounded to float32 (malloc'd), and back widened
 * into w when w is not NULL. */
static float *rounded(const double *h, int64_t count, double *w) {
    float *f = malloc(sizeof(float) * (size_t)count);
    for (int64_t i = 0; f && i < count; i++) {
        f[i] = (float)h[i];
        if (w) w[i] = f[i];
    }
    return f;
}

#define OK(x) ((x) == 0)

/* One routine on the device copy of the input: median seconds (-1 on
 * failure), S (n values, float64) into s_out. */
static double time_routine(const char *name, int f64, int64_t n, const void *host, double *s_out, int runs) {
    cusolverDnHandle_t h = NULL;
    cusolverDnParams_t params = NULL;
    gesvdjInfo_t jinfo = NULL;
    size_t es = f64 ? 8 : 4, mat = (size_t)(n * n) * es;
    int ni = (int)n, ok = OK(cusolverDnCreate(&h)) && OK(cusolverDnCreateParams(&params));
    void *a0 = NULL, *a = NULL, *s = NULL, *u = NULL, *v = NULL, *work = NULL, *hwork = NULL;
    int *info = NULL, lwork = 0;
    size_t dbytes = 0, hbytes = 0;
    cudaDataType t = f64 ? CUDA_R_64F : CUDA_R_32F;
    cusolverEigMode_t V = CUSOLVER_EIG_MODE_VECTOR;
    ok = ok && OK(cudaMalloc(&a0, mat)) && OK(cudaMalloc(&a, mat)) && OK(cudaMalloc(&s, (size_t)n * es)) &&
         OK(cudaMalloc(&u, mat)) && OK(cudaMalloc(&v, mat)) && OK(cudaMalloc((void **)&info, sizeof(int))) &&
         OK(cudaMemcpy(a0, host, mat, cudaMemcpyHostToDevice));
    int which = !strcmp(name, "gesvdj") ? 0 : !strcmp(name, "gesvd") ? 1 : !strcmp(name, "xgesvd") ? 2
                : !strcmp(name, "xgesvdp") ? 3 : -1;
    ok = ok && which >= 0;
    if (ok && which == 0) {
        ok = OK(cusolverDnCreateGesvdjInfo(&jinfo)) &&
             OK(f64 ? cusolverDnDgesvdj_bufferSize(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo)
                    : cusolverDnSgesvdj_bufferSize(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo));
        dbytes = (size_t)lwork * es;
    } else if (ok && which == 1) {
        ok = OK(f64 ? cusolverDnDgesvd_bufferSize(h, ni, ni, &lwork) : cusolverDnSgesvd_bufferSize(h, ni, ni, &lwork));
        dbytes = (size_t)lwork * es + (size_t)n * es; /* and rwork */
    } else if (ok && which == 2) {
        ok = OK(cusolverDnXgesvd_bufferSize(h, params, 'S', 'S', n, n, t, a, n, t, s, t, u, n, t, v, n, t, &dbytes,
                                            &hbytes));
    } else if (ok) {
        ok = OK(cusolverDnXgesvdp_bufferSize(h, params, V, 1, n, n, t, a, n, t, s, t, u, n, t, v, n, t, &dbytes,
                                             &hbytes));
    }
    ok = ok && OK(cudaMalloc(&work, dbytes + 256));
    if (ok && hbytes) ok = (hwork = malloc(hbytes)) != NULL;
    double times[64];
    for (int r = 0; ok && r < runs; r++) {
        ok = OK(cudaMemcpy(a, a0, mat, cudaMemcpyDeviceToDevice)) && OK(cudaDeviceSynchronize());
        int hinfo = 0;
        double err_sigma = 0, t0 = bench_now();
        cusolverStatus_t st;
        if (which == 0)
            st = f64 ? cusolverDnDgesvdj(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, work, lwork, info, jinfo)
                     : cusolverDnSgesvdj(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, work, lwork, info, jinfo);
        else if (which == 1)
            st = f64 ? cusolverDnDgesvd(h, 'S', 'S', ni, ni, a, ni, s, u, ni, v, ni, work, lwork,
                                        (double *)((char *)work + (size_t)lwork * es), info)
                     : cusolverDnSgesvd(h, 'S', 'S', ni, ni, a, ni, s, u, ni, v, ni, work, lwork,
                                        (float *)((char *)work + (size_t)lwork * es), info);
        else if (which == 2)
            st = cusolverDnXgesvd(h, params, 'S', 'S', n, n, t, a, n, t, s, t, u, n, t, v, n, t, work, dbytes, hwork,
                                  hbytes, info);
        else
            st = cusolverDnXgesvdp(h, params, V, 1, n, n, t, a, n, t, s, t, u, n, t, v, n, t, work, dbytes, hwork,
                                   hbytes, info, &err_sigma);
        ok = st == CUSOLVER_STATUS_SUCCESS && OK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost)) &&
             hinfo == 0;
        times[r] = bench_now() - t0;
        if (which == 3) last_err_sigma = err_sigma;
        if (!ok) fprintf(stderr, "%s: status %d, info %d\n", name, (int)st, hinfo);
    }
    if (ok) { /* S as float64 */
        void *hs = malloc((size_t)n * es);
        ok = hs && OK(cudaMemcpy(hs, s, (size_t)n * es, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; ok && i < n; i++) s_out[i] = f64 ? ((double *)hs)[i] : ((float *)hs)[i];
        free(hs);
    }
    if (jinfo) cusolverDnDestroyGesvdjInfo(jinfo);
    if (params) cusolverDnDestroyParams(params);
    if (h) cusolverDnDestroy(h);
    cudaFree(a0), cudaFree(a), cudaFree(s), cudaFree(u), cudaFree(v), cudaFree(work), cudaFree(info);
    free(hwork);
    return ok ? bench_median(times, runs) : -1;
}

/* A batch of nb n x n matrices (host, float32 or float64 as f64) through
 * gesvdjBatched (loop 0) or gesvdj matrix by matrix (loop 1), reduced,
 * with vectors: median seconds of runs (-1 on failure), S (nb * n values,
 * float64) into s_out. */
static double time_batch(int loop, int f64, int64_t nb, int64_t n, const void *host, double *s_out, int runs) {
    cusolverDnHandle_t h = NULL;
    gesvdjInfo_t jinfo = NULL;
    size_t es = f64 ? 8 : 4, mat = (size_t)(n * n) * es, all = mat * (size_t)nb;
    int ni = (int)n, nbi = (int)nb, lwork = 0;
    int ok = OK(cusolverDnCreate(&h)) && OK(cusolverDnCreateGesvdjInfo(&jinfo));
    void *a0 = NULL, *a = NULL, *s = NULL, *u = NULL, *v = NULL, *work = NULL;
    int *info = NULL, *hinfo = malloc(sizeof(int) * (size_t)nb);
    cusolverEigMode_t V = CUSOLVER_EIG_MODE_VECTOR;
    ok = ok && hinfo && OK(cudaMalloc(&a0, all)) && OK(cudaMalloc(&a, all)) &&
         OK(cudaMalloc(&s, (size_t)(nb * n) * es)) && OK(cudaMalloc(&u, all)) && OK(cudaMalloc(&v, all)) &&
         OK(cudaMalloc((void **)&info, sizeof(int) * (size_t)nb)) && OK(cudaMemcpy(a0, host, all, cudaMemcpyHostToDevice));
    if (ok && !loop)
        ok = OK(f64 ? cusolverDnDgesvdjBatched_bufferSize(h, V, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo, nbi)
                    : cusolverDnSgesvdjBatched_bufferSize(h, V, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo, nbi));
    else if (ok)
        ok = OK(f64 ? cusolverDnDgesvdj_bufferSize(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo)
                    : cusolverDnSgesvdj_bufferSize(h, V, 1, ni, ni, a, ni, s, u, ni, v, ni, &lwork, jinfo));
    ok = ok && OK(cudaMalloc(&work, (size_t)lwork * es + 256));
    double times[64];
    for (int r = 0; ok && r < runs; r++) {
        ok = OK(cudaMemcpy(a, a0, all, cudaMemcpyDeviceToDevice)) && OK(cudaDeviceSynchronize());
        double t0 = bench_now();
        cusolverStatus_t st = CUSOLVER_STATUS_SUCCESS;
        if (!loop)
            st = f64 ? cusolverDnDgesvdjBatched(h, V, ni, ni, a, ni, s, u, ni, v, ni, work, lwork, info, jinfo, nbi)
                     : cusolverDnSgesvdjBatched(h, V, ni, ni, a, ni, s, u, ni, v, ni, work, lwork, info, jinfo, nbi);
        for (int64_t b = 0; loop && b < nb && st == CUSOLVER_STATUS_SUCCESS; b++) {
            char *ab = (char *)a + (size_t)b * mat, *sb = (char *)s + (size_t)(b * n) * es;
            char *ub = (char *)u + (size_t)b * mat, *vb = (char *)v + (size_t)b * mat;
            st = f64 ? cusolverDnDgesvdj(h, V, 1, ni, ni, (double *)ab, ni, (double *)sb, (double *)ub, ni,
                                         (double *)vb, ni, work, lwork, info + b, jinfo)
                     : cusolverDnSgesvdj(h, V, 1, ni, ni, (float *)ab, ni, (float *)sb, (float *)ub, ni, (float *)vb,
                                         ni, work, lwork, info + b, jinfo);
        }
        ok = st == CUSOLVER_STATUS_SUCCESS &&
             OK(cudaMemcpy(hinfo, info, sizeof(int) * (size_t)nb, cudaMemcpyDeviceToHost));
        times[r] = bench_now() - t0;
        for (int64_t b = 0; ok && b < nb; b++) ok = hinfo[b] == 0;
        if (!ok) fprintf(stderr, "%s: status %d\n", loop ? "gesvdj loop" : "gesvdjBatched", (int)st);
    }
    if (ok) {
        void *hs = malloc((size_t)(nb * n) * es);
        ok = hs && OK(cudaMemcpy(hs, s, (size_t)(nb * n) * es, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; ok && i < nb * n; i++) s_out[i] = f64 ? ((double *)hs)[i] : ((float *)hs)[i];
        free(hs);
    }
    if (jinfo) cusolverDnDestroyGesvdjInfo(jinfo);
    if (h) cusolverDnDestroy(h);
    cudaFree(a0), cudaFree(a), cudaFree(s), cudaFree(u), cudaFree(v), cudaFree(work), cudaFree(info);
    free(hinfo);
    return ok ? bench_median(times, runs) : -1;
}

/* nd_linalg_svd on the (nb, n, n) float32 batch, reduced, with vectors,
 * waited for with nd_sync: median seconds (-1 on failure), S into s_out. */
static double time_nd_batch(int64_t nb, int64_t n, const float *host, double *s_out) {
    nd_array *x = nd_from_host(host, ND_FLOAT32, ND_SHAPE(nb, n, n));
    double times[64];
    int ok = x != NULL;
    for (int r = -1; ok && r < R; r++) { /* r = -1: once untimed (cuSOLVER's loading, the plan) */
        nd_array *u = NULL, *s = NULL, *vh = NULL;
        double t0 = bench_now();
        ok = nd_linalg_svd(x, false, true, &u, &s, &vh) == ND_OK && nd_sync() == ND_OK;
        if (r >= 0) times[r] = bench_now() - t0;
        if (ok && r == R - 1) {
            nd_array *sd = nd_astype(s, ND_FLOAT64);
            ok = sd && nd_to_host(sd, s_out, sizeof(double) * (size_t)(nb * n)) == ND_OK;
            nd_free(sd);
        }
        nd_free(u), nd_free(s), nd_free(vh);
    }
    if (!ok) fprintf(stderr, "nd_linalg_svd: %s\n", nd_last_error());
    nd_free(x);
    return ok ? bench_median(times, R) : -1;
}

/* max over the matrices of max |S - ref| / ref[0] (n values each). */
static double batch_diff(const double *s, const double *ref, int64_t nb, int64_t n) {
    double d = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(s[b * n + i] - ref[b * n + i]) / ref[b * n]);
    return d;
}

/* nd, gesvdjBatched and the gesvdj loop on one batch of nb n x n float32
 * matrices. */
static int one_batch(int64_t nb, int64_t n) {
    printf("bench_svd_routines: batch of %lld uniform random %lld x %lld float32 matrices, median of %d runs, "
           "vectors (reduced); S against float64 gesvdjBatched\n", (long long)nb, (long long)n, (long long)n, R);
    size_t count = (size_t)(nb * n * n);
    double *h64 = NULL, *w = malloc(sizeof(double) * count), *ref = malloc(sizeof(double) * (size_t)(nb * n));
    double *sv = malloc(sizeof(double) * (size_t)(nb * n));
    nd_scope_begin();
    nd_array *p = nd_random_uniform(ND_FLOAT64, ND_SHAPE(nb, n, n), -1, 1);
    h64 = malloc(sizeof(double) * count);
    int ok = p && h64 && w && ref && sv && nd_to_host(p, h64, sizeof(double) * count) == ND_OK;
    nd_scope_end();
    float *h32 = ok ? rounded(h64, (int64_t)count, w) : NULL;
    ok = ok && h32 && time_batch(0, 1, nb, n, w, ref, 1) >= 0;
    if (!ok) fprintf(stderr, "bench_svd_routines: the batch's input or reference failed: %s\n", nd_last_error());
    static const char *const names[3] = {"nd", "gesvdjBatched", "gesvdj-loop"};
    for (int k = 0; ok && k < 3; k++) {
        double med = k == 0 ? time_nd_batch(nb, n, h32, sv) : time_batch(k == 2, 0, nb, n, h32, sv, R);
        if (med < 0) {
            printf("%-14s float32 %6lldx%-3lld  FAILED\n", names[k], (long long)nb, (long long)n);
            continue;
        }
        printf("%-14s float32 %6lldx%-3lld %10.3f ms  max|S - S_ref| / S[0] %.2g\n", names[k], (long long)nb,
               (long long)n, 1e3 * med, batch_diff(sv, ref, nb, n));
        fflush(stdout);
    }
    free(h64), free(w), free(ref), free(sv), free(h32);
    return ok ? 0 : 1;
}

static int one_size(int64_t n, const char *list, int random);

/* name is one of the comma list's items. */
static int listed(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == 0)) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *sizes = argc > 1 ? argv[1] : "4096";
    if (argc > 2) R = atoi(argv[2]);
    const char *list = argc > 3 ? argv[3] : "gesvdj,gesvd,xgesvd,xgesvdp";
    int random = argc > 4 && !strcmp(argv[4], "random");
    int bad = R < 1 || R > 64;
    for (const char *p = sizes; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        const char *x = strpbrk(p, "x,");
        bad |= atoll(p) < 1 || atoll(p) > INT32_MAX ||
               (x && *x == 'x' && (atoll(x + 1) < 1 || atoll(x + 1) > 32 || atoll(p) * atoll(x + 1) * atoll(x + 1) > INT32_MAX));
    }
    if (bad) {
        fprintf(stderr, "usage: bench_svd_routines [N|BxN[,...]] [R <= 64] [routines] [random] (BxN: N <= 32)\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "bench_svd_routines: %s\n", nd_last_error());
        return 1;
    }
    int rc = 0;
    for (const char *p = sizes; p && !rc; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        const char *x = strpbrk(p, "x,");
        rc = x && *x == 'x' ? one_batch(atoll(p), atoll(x + 1)) : one_size(atoll(p), list, random);
    }
    nd_shutdown();
    return rc;
}

/* Every listed routine on one n x n matrix, float32 then float64. */
static int one_size(int64_t n, const char *list, int random) {
    printf("bench_svd_routines: %lld x %lld %s matrix, median of %d runs, vectors (reduced)\n", (long long)n,
           (long long)n, random ? "uniform random" : "SPD (the suite's)", R);
    static const char *const names[4] = {"gesvd", "gesvdj", "xgesvd", "xgesvdp"};
    double *ref = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    double *h64 = host_input(n, random), *w = malloc(sizeof(double) * (size_t)(n * n));
    float *h32 = h64 && w ? rounded(h64, n * n, w) : NULL;
    if (!h32 || !ref || !s) {
        fprintf(stderr, "bench_svd_routines: making the input failed: %s\n", nd_last_error());
        return 1;
    }
    for (int f64 = 0; f64 < 2; f64++) {
        nd_dtype t = f64 ? ND_FLOAT64 : ND_FLOAT32;
        const void *host = f64 ? (const void *)h64 : (const void *)h32;
        /* the reference: float64 gesvd of these very values, once */
        int have_ref = time_routine("gesvd", 1, n, f64 ? h64 : w, ref, 1) >= 0;
        for (int k = 0; k < 4; k++) {
            if (!listed(list, names[k])) continue;
            double med = time_routine(names[k], f64, n, host, s, R);
            if (med < 0) {
                printf("%-8s %-7s %6lld  FAILED\n", names[k], nd_dtype_name(t), (long long)n);
                continue;
            }
            double diff = 0;
            for (int64_t i = 0; have_ref && i < n; i++) diff = fmax(diff, fabs(s[i] - ref[i]) / ref[0]);
            printf("%-8s %-7s %6lld %10.1f ms", names[k], nd_dtype_name(t), (long long)n, 1e3 * med);
            if (have_ref) printf("  max|S - S_gesvd64| / S[0] %.2g", diff);
            if (k == 3) printf("  h_err_sigma %.2g", last_err_sigma);
            printf("\n");
            fflush(stdout);
        }
    }
    free(ref), free(s), free(h64), free(w), free(h32);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "bench_svd_routines: built without cuSOLVER (a CUDA build is needed)\n");
    return 1;
}
#endif
