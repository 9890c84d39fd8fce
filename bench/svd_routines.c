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
 * made by nd and copied to the device once. Each run restores the input
 * (gesvd* overwrite it) untimed, then times the call and the info word's
 * read back (nd reads it too) with the wall clock after a synchronised
 * start; the median of R runs. Each routine's singular values are checked
 * against gesvd's (largest relative difference to S[0]), and its U and V
 * are not (the reconstruction is linalg_bench's and the suite's job).
 *
 * Usage: bench_svd_routines [N[,N...]] [R] [routines] [random]
 *   (defaults 4096 3 gesvdj,gesvd,xgesvd,xgesvdp; N one size or a comma
 *   list, e.g. 512,1024,2048 for where Xgesvdp starts to pay)
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

/* The matrix (suite's or random) as host values of dtype t (malloc'd). */
static void *host_input(nd_dtype t, int64_t n, int random) {
    size_t es = t == ND_FLOAT64 ? 8 : 4, bytes = (size_t)(n * n) * es;
    void *h = malloc(bytes);
    nd_scope_begin();
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

#define OK(x) ((x) == 0)

/* One routine on the device copy of the input: median seconds (-1 on
 * failure), S (n values, float64) into s_out. */
static double time_routine(const char *name, int f64, int64_t n, const void *host, double *s_out) {
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
    for (int r = 0; ok && r < R; r++) {
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
    return ok ? bench_median(times, R) : -1;
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
    for (const char *p = sizes; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        bad |= atoll(p) < 1 || atoll(p) > INT32_MAX;
    if (bad) {
        fprintf(stderr, "usage: bench_svd_routines [N[,N...]] [R <= 64] [routines] [random]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "bench_svd_routines: %s\n", nd_last_error());
        return 1;
    }
    int rc = 0;
    for (const char *p = sizes; p && !rc; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        rc = one_size(atoll(p), list, random);
    nd_shutdown();
    return rc;
}

/* Every listed routine on one n x n matrix, float32 then float64. */
static int one_size(int64_t n, const char *list, int random) {
    printf("bench_svd_routines: %lld x %lld %s matrix, median of %d runs, vectors (reduced)\n", (long long)n,
           (long long)n, random ? "uniform random" : "SPD (the suite's)", R);
    static const char *const names[4] = {"gesvd", "gesvdj", "xgesvd", "xgesvdp"}; /* gesvd first: the reference */
    double *ref = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    for (int f64 = 0; f64 < 2; f64++) {
        nd_dtype t = f64 ? ND_FLOAT64 : ND_FLOAT32;
        void *host = host_input(t, n, random);
        if (!host) {
            fprintf(stderr, "bench_svd_routines: making the input failed: %s\n", nd_last_error());
            return 1;
        }
        int have_ref = 0;
        for (int k = 0; k < 4; k++) {
            if (!listed(list, names[k])) continue;
            double med = time_routine(names[k], f64, n, host, k == 0 ? ref : s);
            if (med < 0) {
                printf("%-8s %-7s %6lld  FAILED\n", names[k], nd_dtype_name(t), (long long)n);
                continue;
            }
            double diff = 0;
            if (k == 0) have_ref = 1;
            else if (have_ref)
                for (int64_t i = 0; i < n; i++) diff = fmax(diff, fabs(s[i] - ref[i]) / ref[0]);
            printf("%-8s %-7s %6lld %10.1f ms", names[k], nd_dtype_name(t), (long long)n, 1e3 * med);
            if (k && have_ref) printf("  max|S - S_gesvd| / S[0] %.2g", diff);
            if (k == 3) printf("  h_err_sigma %.2g", last_err_sigma);
            printf("\n");
            fflush(stdout);
        }
        free(host);
    }
    free(ref), free(s);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "bench_svd_routines: built without cuSOLVER (a CUDA build is needed)\n");
    return 1;
}
#endif
