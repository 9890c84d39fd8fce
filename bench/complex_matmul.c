/*
 * complex_matmul.c — complex64/complex128 matmul of two N x N matrices on
 * the backend ND_BACKEND picks (cgemm/zgemm: OpenBLAS on the CPU,
 * cublasGemmEx on CUDA) and, in a build with CUDA and a device, cuBLAS's
 * cublasCgemm/cublasZgemm alone on the same sizes: the floor nd's step
 * should sit on.
 *
 * Rules (bench/README.md): fresh random inputs made and synced outside the
 * timed part; one checked warm-up ((A B) x against A (B x) for a random
 * vector x, relative to |A| |B| |x| N and the dtype's epsilon); the median
 * of R timed runs, each from nd_matmul to the nd_sync that waits for it.
 *
 * Usage: complex_matmul [N] [R]   (defaults 4096 7)
 * Prints one line per case: name dtype N median_ms GFLOP/s (8 N^3 flops).
 */
#include <nd.h>

#include <float.h>
#include <math.h>

#include "bench_util.h"

#if defined(BENCH_HAVE_CUDA)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

static int64_t N = 4096;
static int R = 7;

static nd_array *random_complex(nd_dtype t, int ndim, const int64_t *shape) {
    nd_dtype pt = t == ND_COMPLEX64 ? ND_FLOAT32 : ND_FLOAT64;
    nd_scope_begin();
    nd_array *re = nd_astype(nd_random_uniform(pt, ndim, shape, -1, 1), t);
    nd_array *im = nd_astype(nd_random_uniform(pt, ndim, shape, -1, 1), t);
    nd_array *j = nd_full_complex(t, 0, NULL, 0.0, 1.0);
    nd_array *z = nd_keep(nd_add(re, nd_mul(im, j)));
    nd_scope_end();
    return z;
}

static double max_abs(nd_array *x) { return nd_item(nd_max(nd_abs(x), ND_ALL_AXES)); }

static int check(nd_dtype t, nd_array *a, nd_array *b) {
    nd_scope_begin();
    nd_array *x = random_complex(t, 1, (int64_t[]){N});
    nd_array *lhs = nd_matmul(nd_matmul(a, b), x), *rhs = nd_matmul(a, nd_matmul(b, x));
    double err = max_abs(nd_sub(lhs, rhs)), scale = max_abs(a) * max_abs(b) * max_abs(x) * (double)N;
    double eps = t == ND_COMPLEX64 ? FLT_EPSILON : DBL_EPSILON;
    nd_scope_end();
    int ok = err <= 16 * eps * scale * sqrt((double)N);
    if (!ok) fprintf(stderr, "complex_matmul: %s check failed: %g (scale %g)\n", nd_dtype_name(t), err, scale);
    return ok;
}

static double time_nd(nd_dtype t) {
    double ms[64];
    int64_t sh[2] = {N, N};
    nd_array *a = random_complex(t, 2, sh), *b = random_complex(t, 2, sh);
    nd_sync();
    if (!check(t, a, b)) exit(1);
    for (int r = 0; r < R; r++) {
        nd_free(a), nd_free(b);
        a = random_complex(t, 2, sh), b = random_complex(t, 2, sh);
        nd_sync();
        double t0 = bench_now();
        nd_array *c = nd_matmul(a, b);
        if (nd_sync() != ND_OK || !c) {
            fprintf(stderr, "complex_matmul: %s\n", nd_last_error());
            exit(1);
        }
        ms[r] = (bench_now() - t0) * 1e3;
        nd_free(c);
    }
    nd_free(a), nd_free(b);
    return bench_median(ms, R);
}

#if defined(BENCH_HAVE_CUDA)
/* cuBLAS alone: C = A B on device buffers of random parts, timed with
 * events around each call. */
static double time_cublas(nd_dtype t) {
    size_t es = t == ND_COMPLEX64 ? 8 : 16, bytes = es * (size_t)N * (size_t)N;
    void *h = malloc(bytes), *d[3] = {NULL, NULL, NULL};
    if (!h) return NAN;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < bytes / (es / 2); i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double v = (double)(s >> 11) * 0x1p-53 * 2 - 1;
        if (es == 8) ((float *)h)[i] = (float)v;
        else ((double *)h)[i] = v;
    }
    cublasHandle_t hb;
    if (cublasCreate(&hb) != CUBLAS_STATUS_SUCCESS) return NAN;
    for (int k = 0; k < 3; k++)
        if (cudaMalloc(&d[k], bytes) != cudaSuccess) return NAN;
    cudaMemcpy(d[0], h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d[1], h, bytes, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    const cuComplex one_c = {1, 0}, zero_c = {0, 0};
    const cuDoubleComplex one_z = {1, 0}, zero_z = {0, 0};
    double ms[64];
    int n = (int)N;
    for (int r = -1; r < R; r++) { /* r = -1: warm-up */
        cudaEventRecord(e0, 0);
        if (es == 8)
            cublasCgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one_c, d[0], n, d[1], n, &zero_c, d[2], n);
        else
            cublasZgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one_z, d[0], n, d[1], n, &zero_z, d[2], n);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float m = 0;
        cudaEventElapsedTime(&m, e0, e1);
        if (r >= 0) ms[r] = m;
    }
    for (int k = 0; k < 3; k++) cudaFree(d[k]);
    cublasDestroy(hb);
    free(h);
    return bench_median(ms, R);
}
#endif

int main(int argc, char **argv) {
    if (argc > 1) N = atoll(argv[1]);
    if (argc > 2) R = atoi(argv[2]);
    if (R < 1 || R > 64 || N < 1) {
        fprintf(stderr, "usage: complex_matmul [N] [R<=64]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "complex_matmul: %s\n", nd_last_error());
        return 1;
    }
    const nd_dtype ts[2] = {ND_COMPLEX64, ND_COMPLEX128};
    const double flops = 8.0 * (double)N * (double)N * (double)N;
    for (int k = 0; k < 2; k++) {
        double m = time_nd(ts[k]);
        printf("matmul %s %lld %.3f %.1f\n", nd_dtype_name(ts[k]), (long long)N, m, flops / (m * 1e6));
#if defined(BENCH_HAVE_CUDA)
        if (!strcmp(nd_backend_name(), "cuda")) {
            double c = time_cublas(ts[k]);
            printf("cublas_gemm %s %lld %.3f %.1f\n", nd_dtype_name(ts[k]), (long long)N, c, flops / (c * 1e6));
        }
#endif
        fflush(stdout);
    }
    nd_shutdown();
    return 0;
}
