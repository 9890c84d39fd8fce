// eigh_variants.cu — cuSOLVER's symmetric eigensolver called four ways on
// the side-by-side suite's eigh input, to see whether the way nd calls it
// (src/backends/cuda/lib_linalg.c: syevd's upper form on a plain copy of
// the row-major matrix, whose column-major upper triangle is NumPy's lower
// one) is what keeps nd 1% behind PyTorch (bench/results/
// 2026-11-30-h200-la-side-by-side.md). No nd in it.
//
//   syevd U    cusolverDn<t>syevd, upper form (nd's call)
//   syevd L    the same, lower form (CuPy's: a Fortran-order copy, 'L')
//   Xsyevd U   the 64-bit cusolverDnXsyevd, upper form
//   Xsyevd L   the same, lower form (PyTorch's call)
//
// The matrix is symmetric, so the plain copy holds both triangles and every
// variant solves the same problem. Each timed run is the copy into the
// work buffer and the call (cudaEvent), median and best of R after one
// warm-up. Checks per variant: NaNs in w and V, eigenvalues not ascending
// (NumPy's order; the suite fails a result that breaks it), the largest
// difference of w from the first variant's (relative to max |w|), and
// A v = w v on 4 sampled eigenpairs in float64 on the host.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o eigh_variants bench/eigh_variants.cu -lcusolver -lcublas
//   ./eigh_variants [n] [R]          (default 8192 5)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <vector>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                                \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
#define CS(x)                                                                                                          \
    do {                                                                                                               \
        int s_ = (int)(x);                                                                                             \
        if (s_ != 0) {                                                                                                 \
            fprintf(stderr, "%s:%d: library status %d\n", __FILE__, __LINE__, s_);                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

template <typename T> __global__ void fill_uniform(T *p, long long n, unsigned long long seed) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long z = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = (T)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

// a = (g + g^T) / 2 + I
template <typename T> __global__ void symmetrise(const T *g, T *a, int n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= (long long)n * n) return;
    int r = (int)(i / n), c = (int)(i % n);
    a[i] = (g[(long long)r * n + c] + g[(long long)c * n + r]) * (T)0.5 + (r == c ? (T)1 : (T)0);
}

template <typename T> struct Ty;
template <> struct Ty<float> {
    static constexpr cudaDataType dt = CUDA_R_32F;
    static const char *name() { return "float32"; }
    static cusolverStatus_t buf(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, float *a,
                                float *w, int *lw) {
        return cusolverDnSsyevd_bufferSize(h, j, u, n, a, n, w, lw);
    }
    static cusolverStatus_t run(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, float *a,
                                float *w, float *wk, int lw, int *info) {
        return cusolverDnSsyevd(h, j, u, n, a, n, w, wk, lw, info);
    }
    static cublasStatus_t gemm(cublasHandle_t h, int n, const float *p, float *g) {
        float al = 1.0f / n, be = 0;
        return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &al, p, n, p, n, &be, g, n);
    }
};
template <> struct Ty<double> {
    static constexpr cudaDataType dt = CUDA_R_64F;
    static const char *name() { return "float64"; }
    static cusolverStatus_t buf(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, double *a,
                                double *w, int *lw) {
        return cusolverDnDsyevd_bufferSize(h, j, u, n, a, n, w, lw);
    }
    static cusolverStatus_t run(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, double *a,
                                double *w, double *wk, int lw, int *info) {
        return cusolverDnDsyevd(h, j, u, n, a, n, w, wk, lw, info);
    }
    static cublasStatus_t gemm(cublasHandle_t h, int n, const double *p, double *g) {
        double al = 1.0 / n, be = 0;
        return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &al, p, n, p, n, &be, g, n);
    }
};

template <typename T> static void run_dtype(int n, int runs) {
    const size_t nn = (size_t)n * n;
    T *p, *g, *a, *v, *w;
    int *info;
    CK(cudaMalloc(&p, nn * sizeof(T)));
    CK(cudaMalloc(&g, nn * sizeof(T)));
    CK(cudaMalloc(&a, nn * sizeof(T)));
    CK(cudaMalloc(&v, nn * sizeof(T)));
    CK(cudaMalloc(&w, (size_t)n * sizeof(T)));
    CK(cudaMalloc(&info, sizeof(int)));
    cublasHandle_t bh;
    cusolverDnHandle_t h;
    CS(cublasCreate(&bh));
    CS(cusolverDnCreate(&h));
    cusolverDnParams_t params;
    CS(cusolverDnCreateParams(&params));
    const unsigned blocks = (unsigned)((nn + 255) / 256);
    fill_uniform<T><<<blocks, 256>>>(p, (long long)nn, 12345);
    CS(Ty<T>::gemm(bh, n, p, g));
    symmetrise<T><<<blocks, 256>>>(g, a, n);
    CK(cudaDeviceSynchronize());
    std::vector<T> ha(nn);
    CK(cudaMemcpy(ha.data(), a, nn * sizeof(T), cudaMemcpyDeviceToHost));

    const cusolverEigMode_t jobz = CUSOLVER_EIG_MODE_VECTOR;
    const cublasFillMode_t fills[2] = {CUBLAS_FILL_MODE_UPPER, CUBLAS_FILL_MODE_LOWER};
    // workspaces: the largest of the four
    size_t dev_bytes = 0, host_bytes = 0;
    for (int f = 0; f < 2; f++) {
        int lw = 0;
        CS(Ty<T>::buf(h, jobz, fills[f], n, v, w, &lw));
        dev_bytes = std::max(dev_bytes, (size_t)lw * sizeof(T));
        size_t d = 0, hb = 0;
        CS(cusolverDnXsyevd_bufferSize(h, params, jobz, fills[f], n, Ty<T>::dt, v, n, Ty<T>::dt, w, Ty<T>::dt, &d, &hb));
        dev_bytes = std::max(dev_bytes, d);
        host_bytes = std::max(host_bytes, hb);
    }
    void *dwork, *hwork = NULL;
    CK(cudaMalloc(&dwork, dev_bytes));
    if (host_bytes) hwork = malloc(host_bytes);
    printf("\neigh of %d x %d %s, vectors: workspace %.1f MiB on the device, %zu bytes on the host; median / best of %d\n",
           n, n, Ty<T>::name(), dev_bytes / 1048576.0, host_bytes, runs);

    std::vector<double> w_ref;
    const char *names[4] = {"syevd U (nd)", "syevd L (cupy)", "Xsyevd U", "Xsyevd L (torch)"};
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int var = 0; var < 4; var++) {
        const cublasFillMode_t fill = fills[var & 1];
        const bool x = var >= 2;
        auto call = [&]() {
            CK(cudaMemcpyAsync(v, a, nn * sizeof(T), cudaMemcpyDeviceToDevice, 0));
            if (x)
                CS(cusolverDnXsyevd(h, params, jobz, fill, n, Ty<T>::dt, v, n, Ty<T>::dt, w, Ty<T>::dt, dwork,
                                    dev_bytes, hwork, host_bytes, info));
            else
                CS(Ty<T>::run(h, jobz, fill, n, v, w, (T *)dwork, (int)(dev_bytes / sizeof(T)), info));
        };
        call();
        CK(cudaDeviceSynchronize());
        std::vector<float> ms;
        for (int r = 0; r < runs; r++) {
            CK(cudaEventRecord(e0, 0));
            call();
            CK(cudaEventRecord(e1, 0));
            CK(cudaEventSynchronize(e1));
            float t;
            CK(cudaEventElapsedTime(&t, e0, e1));
            ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        int hinfo = 0;
        CK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
        std::vector<T> hw(n), hv(nn);
        CK(cudaMemcpy(hw.data(), w, n * sizeof(T), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hv.data(), v, nn * sizeof(T), cudaMemcpyDeviceToHost));
        long nans = 0, unsorted = 0;
        for (int i = 0; i < n; i++) nans += hw[i] != hw[i];
        for (size_t i = 0; i < nn; i++) nans += hv[i] != hv[i];
        for (int i = 1; i < n; i++) unsorted += !(hw[i - 1] <= hw[i]);
        double wmax = 0, wdiff = 0;
        for (int i = 0; i < n; i++) wmax = std::max(wmax, std::fabs((double)hw[i]));
        if (var == 0) w_ref.assign(hw.begin(), hw.end());
        for (int i = 0; i < n; i++) wdiff = std::max(wdiff, std::fabs((double)hw[i] - w_ref[i]));
        // A v_c = w_c v_c; V column-major: v_c[i] = hv[c * n + i]
        double res = 0;
        unsigned long long s = 99;
        for (int q = 0; q < 4; q++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            int c = (int)((s >> 33) % (unsigned long long)n);
            for (int i = 0; i < n; i += 97) {
                double acc = 0;
                for (int k = 0; k < n; k++) acc += (double)ha[(size_t)i * n + k] * hv[(size_t)c * n + k];
                res = std::max(res, std::fabs(acc - (double)hw[c] * hv[(size_t)c * n + i]) / (wmax > 0 ? wmax : 1));
            }
        }
        printf("  %-18s %9.2f / %9.2f ms  info %d  NaNs %ld  not ascending %ld  |w - w0|/max|w| %.2e  residual %.2e\n",
               names[var], ms[ms.size() / 2], ms[0], hinfo, nans, unsorted, wdiff / (wmax > 0 ? wmax : 1), res);
        fflush(stdout);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    free(hwork);
    CK(cudaFree(dwork));
    cusolverDnDestroyParams(params);
    cusolverDnDestroy(h);
    cublasDestroy(bh);
    for (void *q : {(void *)p, (void *)g, (void *)a, (void *)v, (void *)w, (void *)info}) CK(cudaFree(q));
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 8192, runs = argc > 2 ? atoi(argv[2]) : 5;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("eigh_variants: %s, n %d\n", prop.name, n);
    run_dtype<float>(n, runs);
    run_dtype<double>(n, runs);
    return 0;
}
