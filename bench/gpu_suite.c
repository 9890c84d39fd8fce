/*
 * gpu_suite.c — the CUDA backend's speed targets, each against its floor
 * measured in the same run on the same device:
 *   copy     device-to-device cudaMemcpy of 1 GiB: bytes (read + write) / time
 *   chain    sin(a)*cos(b) + sqrt(abs(a*b))*exp(-a*a), 2^27 float32: 3 arrays
 *   bs       Black-Scholes call + put, 2^26 float32: 3 inputs + 2 outputs
 *   sum      sum of 2^28 float32: reads only, as a fraction of copy bandwidth
 *   matmul   8192^2 float32 through nd vs cublasSgemm called directly
 * Timing: inputs are generated on the device and materialised first; each
 * timed run records the expression and calls nd_sync (host clock around
 * both, so recording, planning and launch are included); warm-up runs
 * first; median of RUNS. Every result is checked against a float64 host
 * reference on sampled elements before timing. Prints a table and one JSON
 * line per workload.
 */

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nd.h"

#define RUNS 9
#define SAMPLES 4096

static int failures;

#define CHECK_ND(x)                                                                         \
    do {                                                                                    \
        if (!(x)) {                                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, nd_last_error()); \
            exit(2);                                                                        \
        }                                                                                   \
    } while (0)

static double copy_bandwidth(void) {
    size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        exit(2);
    }
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double t[RUNS];
    for (int r = -2; r < RUNS; r++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 0) t[r] = ms * 1e-3;
    }
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / bench_median(t, RUNS);
}

/* Reads n_samples elements at fixed pseudo-random positions of a float32
 * array into out (and their indices into idx). */
static void sample(nd_array *a, int64_t n, float *out, int64_t *idx) {
    float *host = malloc((size_t)n * sizeof(float));
    CHECK_ND(host && nd_to_host(a, host, (size_t)n * sizeof(float)) == ND_OK);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < SAMPLES; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        idx[i] = (int64_t)((s >> 11) % (uint64_t)n);
        out[i] = host[idx[i]];
    }
    free(host);
}

static void verdict(const char *name, double err, double tol) {
    printf("  check %-14s relative error %.2e (limit %.0e) %s\n", name, err, tol,
           err <= tol ? "ok" : "FAILED");
    if (!(err <= tol)) failures++;
}

static nd_array *chain(nd_array *a, nd_array *b) {
    nd_scope_begin();
    nd_array *y = nd_add(nd_mul(nd_sin(a), nd_cos(b)),
                         nd_mul(nd_sqrt(nd_abs(nd_mul(a, b))), nd_exp(nd_neg(nd_mul(a, a)))));
    nd_keep(y);
    nd_scope_end();
    return y;
}

static double time_chain(nd_array *a, nd_array *b) {
    double t[RUNS];
    for (int r = -3; r < RUNS; r++) {
        double t0 = bench_now();
        nd_array *y = chain(a, b);
        CHECK_ND(nd_sync() == ND_OK);
        if (r >= 0) t[r] = bench_now() - t0;
        nd_free(y);
    }
    return bench_median(t, RUNS);
}

/* Abramowitz-Stegun cumulative normal, NumPy style on arrays. */
static nd_array *cnd(nd_array *d) {
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
                 a5 = 1.330274429, rsqrt2pi = 0.39894228040143267794;
    nd_array *k = nd_div(nd_scalar(1.0), nd_add(nd_scalar(1.0), nd_mul(nd_scalar(0.2316419), nd_abs(d))));
    nd_array *poly = nd_mul(k, nd_add(nd_scalar(a1), nd_mul(k, nd_add(nd_scalar(a2), nd_mul(k, nd_add(nd_scalar(a3), nd_mul(k, nd_add(nd_scalar(a4), nd_mul(k, nd_scalar(a5))))))))));
    nd_array *w = nd_mul(nd_mul(nd_scalar(rsqrt2pi), nd_exp(nd_mul(nd_scalar(-0.5), nd_square(d)))), poly);
    return nd_where(nd_gt(d, nd_scalar(0.0)), nd_sub(nd_scalar(1.0), w), w);
}

static void black_scholes(nd_array *S, nd_array *X, nd_array *T, nd_array **call, nd_array **put) {
    const double r = 0.02, v = 0.30;
    nd_scope_begin();
    nd_array *sqrtT = nd_sqrt(T);
    nd_array *d1 = nd_div(nd_add(nd_log(nd_div(S, X)), nd_mul(nd_scalar(r + 0.5 * v * v), T)),
                          nd_mul(nd_scalar(v), sqrtT));
    nd_array *d2 = nd_sub(d1, nd_mul(nd_scalar(v), sqrtT));
    nd_array *cnd1 = cnd(d1), *cnd2 = cnd(d2);
    nd_array *xexp = nd_mul(X, nd_exp(nd_mul(nd_scalar(-r), T)));
    *call = nd_keep(nd_sub(nd_mul(S, cnd1), nd_mul(xexp, cnd2)));
    *put = nd_keep(nd_sub(nd_mul(xexp, nd_sub(nd_scalar(1.0), cnd2)),
                          nd_mul(S, nd_sub(nd_scalar(1.0), cnd1))));
    nd_scope_end();
}

static double cnd_ref(double d) {
    const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978,
                 a5 = 1.330274429;
    double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double w = 0.39894228040143267794 * exp(-0.5 * d * d) *
               (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0 ? 1.0 - w : w;
}

static void report(const char *name, double ms, double floor_ms, const char *extra) {
    printf("  %-8s %10.3f ms   floor %8.3f ms   ratio %.3f %s\n", name, ms, floor_ms,
           ms / floor_ms, extra);
    printf("JSON {\"bench\":\"gpu_%s\",\"median_ms\":%.4f,\"floor_ms\":%.4f,\"ratio_to_floor\":%.4f}\n",
           name, ms, floor_ms, ms / floor_ms);
}

int main(int argc, char **argv) {
    int scale_down = argc > 1 ? atoi(argv[1]) : 0; /* for quick checks: shrink sizes by 2^k */
    CHECK_ND(nd_init(NULL) == ND_OK);
    if (strcmp(nd_backend_name(), "cuda") != 0) {
        printf("gpu_suite: backend is %s, not cuda: nothing to measure\n", nd_backend_name());
        return 77;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    double bw = copy_bandwidth();
    printf("gpu_suite on %s: device-to-device copy %.1f GB/s (read+write), median of %d\n",
           prop.name, bw * 1e-9, RUNS);
    printf("JSON {\"bench\":\"gpu_copy\",\"device\":\"%s\",\"copy_GBps\":%.1f}\n", prop.name, bw * 1e-9);
    nd_random_seed(20261122);
    float got[SAMPLES];
    int64_t idx[SAMPLES];

    /* ---- chain, 2^27 float32 ---- */
    {
        int64_t n = (int64_t)1 << (27 - scale_down);
        nd_array *a = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
        nd_array *b = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), -2.0, 2.0);
        CHECK_ND(a && b && nd_sync() == ND_OK);
        nd_array *y = chain(a, b);
        CHECK_ND(y);
        sample(y, n, got, idx);
        float *ha = malloc((size_t)n * 4), *hb = malloc((size_t)n * 4);
        CHECK_ND(nd_to_host(a, ha, (size_t)n * 4) == ND_OK && nd_to_host(b, hb, (size_t)n * 4) == ND_OK);
        double num = 0, den = 0;
        for (int i = 0; i < SAMPLES; i++) {
            double x = ha[idx[i]], z = hb[idx[i]];
            double ref = sin(x) * cos(z) + sqrt(fabs(x * z)) * exp(-x * x);
            num += (got[i] - ref) * (got[i] - ref);
            den += ref * ref;
        }
        double err = sqrt(num / den); /* ||out - ref|| / ||ref||; NaN fails */
        free(ha);
        free(hb);
        nd_free(y);
        verdict("chain", err, 1e-5);
        double t = time_chain(a, b);
        report("chain", t * 1e3, 3.0 * (double)n * 4 / bw * 1e3, "");
        nd_free(a);
        nd_free(b);
    }

    /* ---- Black-Scholes, 2^26 options ---- */
    {
        int64_t n = (int64_t)1 << (26 - scale_down);
        nd_array *S = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 5.0, 30.0);
        nd_array *X = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 1.0, 100.0);
        nd_array *T = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.25, 10.0);
        CHECK_ND(S && X && T && nd_sync() == ND_OK);
        nd_array *call, *put;
        black_scholes(S, X, T, &call, &put);
        CHECK_ND(call && put && nd_sync() == ND_OK);
        float gput[SAMPLES];
        sample(call, n, got, idx);
        sample(put, n, gput, idx);
        float *hs = malloc((size_t)n * 4), *hx = malloc((size_t)n * 4), *ht = malloc((size_t)n * 4);
        CHECK_ND(nd_to_host(S, hs, (size_t)n * 4) == ND_OK && nd_to_host(X, hx, (size_t)n * 4) == ND_OK &&
                 nd_to_host(T, ht, (size_t)n * 4) == ND_OK);
        double num = 0, den = 0;
        for (int i = 0; i < SAMPLES; i++) {
            double s = hs[idx[i]], x = hx[idx[i]], t = ht[idx[i]], r = 0.02, v = 0.30;
            double d1 = (log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt(t)), d2 = d1 - v * sqrt(t);
            double c = s * cnd_ref(d1) - x * exp(-r * t) * cnd_ref(d2);
            double p = x * exp(-r * t) * (1 - cnd_ref(d2)) - s * (1 - cnd_ref(d1));
            num += (got[i] - c) * (got[i] - c) + (gput[i] - p) * (gput[i] - p);
            den += c * c + p * p;
        }
        double err = sqrt(num / den);
        free(hs);
        free(hx);
        free(ht);
        nd_free(call);
        nd_free(put);
        verdict("black_scholes", err, 1e-5);
        double t[RUNS];
        for (int r = -3; r < RUNS; r++) {
            double t0 = bench_now();
            black_scholes(S, X, T, &call, &put);
            CHECK_ND(nd_sync() == ND_OK);
            if (r >= 0) t[r] = bench_now() - t0;
            nd_free(call);
            nd_free(put);
        }
        report("bs", bench_median(t, RUNS) * 1e3, 5.0 * (double)n * 4 / bw * 1e3, "");
        nd_free(S);
        nd_free(X);
        nd_free(T);
    }

    /* ---- sum, 2^28 float32 ---- */
    {
        int64_t n = (int64_t)1 << (28 - scale_down);
        nd_array *x = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n), 0.0, 1.0);
        CHECK_ND(x && nd_sync() == ND_OK);
        float *hx = malloc((size_t)n * 4);
        CHECK_ND(nd_to_host(x, hx, (size_t)n * 4) == ND_OK);
        double ref = 0;
        for (int64_t i = 0; i < n; i++) ref += hx[i];
        free(hx);
        nd_array *s = nd_sum(x, ND_ALL_AXES);
        double got_sum = nd_item(s);
        nd_free(s);
        verdict("sum", fabs(got_sum - ref) / ref, 1e-5);
        double t[RUNS];
        for (int r = -3; r < RUNS; r++) {
            double t0 = bench_now();
            s = nd_sum(x, ND_ALL_AXES);
            CHECK_ND(nd_sync() == ND_OK);
            if (r >= 0) t[r] = bench_now() - t0;
            nd_free(s);
        }
        double ms = bench_median(t, RUNS) * 1e3;
        double read_bw = (double)n * 4 / (ms * 1e-3);
        char extra[96];
        snprintf(extra, sizeof extra, "(reads %.1f GB/s = %.1f%% of copy bandwidth)", read_bw * 1e-9,
                 100.0 * read_bw / bw);
        /* the floor of a read-only pass: bytes read at the copy bandwidth */
        report("sum", ms, (double)n * 4 / bw * 1e3, extra);
        nd_free(x);
    }

    /* ---- matmul 8192 float32 vs cuBLAS directly ---- */
    {
        int64_t n = (int64_t)8192 >> scale_down;
        nd_array *A = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
        nd_array *B = nd_random_uniform(ND_FLOAT32, ND_SHAPE(n, n), -1.0, 1.0);
        CHECK_ND(A && B && nd_sync() == ND_OK);
        nd_array *C = nd_matmul(A, B);
        CHECK_ND(C && nd_sync() == ND_OK);
        size_t bytes = (size_t)(n * n) * 4;
        float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
        CHECK_ND(nd_to_host(A, ha, bytes) == ND_OK && nd_to_host(B, hb, bytes) == ND_OK &&
                 nd_to_host(C, hc, bytes) == ND_OK);
        double err = 0;
        for (int i = 0; i < 64; i++) {
            int64_t r = (i * 977) % n, c = (i * 131 + 7) % n;
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < n; k++) {
                ref += (double)ha[r * n + k] * hb[k * n + c];
                mag += fabs((double)ha[r * n + k] * hb[k * n + c]);
            }
            double e = fabs(hc[r * n + c] - ref) / mag;
            if (!(e <= err)) err = e;
        }
        nd_free(C);
        verdict("matmul", err, 1e-5);
        double t[RUNS];
        for (int r = -2; r < RUNS; r++) {
            double t0 = bench_now();
            C = nd_matmul(A, B);
            CHECK_ND(nd_sync() == ND_OK);
            if (r >= 0) t[r] = bench_now() - t0;
            nd_free(C);
        }
        double nd_ms = bench_median(t, RUNS) * 1e3;
        /* cuBLAS directly on its own copies of the same operands. */
        float *da, *db, *dc;
        cudaMalloc((void **)&da, bytes);
        cudaMalloc((void **)&db, bytes);
        cudaMalloc((void **)&dc, bytes);
        cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
        cublasHandle_t h;
        cublasCreate(&h);
        const float one = 1.0f, zero = 0.0f;
        for (int r = -2; r < RUNS; r++) {
            double t0 = bench_now();
            /* row-major C = A B is column-major C^T = B^T A^T */
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, db, (int)n, da,
                        (int)n, &zero, dc, (int)n);
            cudaDeviceSynchronize();
            if (r >= 0) t[r] = bench_now() - t0;
        }
        double blas_ms = bench_median(t, RUNS) * 1e3;
        cublasDestroy(h);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc);
        free(ha);
        free(hb);
        free(hc);
        double flops = 2.0 * (double)n * n * n;
        char extra[96];
        snprintf(extra, sizeof extra, "(nd %.1f TFLOP/s, cuBLAS %.1f TFLOP/s)", flops / nd_ms * 1e-9,
                 flops / blas_ms * 1e-9);
        report("matmul", nd_ms, blas_ms, extra);
        nd_free(A);
        nd_free(B);
    }
    nd_shutdown();
    if (failures) printf("gpu_suite: %d check(s) FAILED\n", failures);
    return failures ? 1 : 0;
}
