/* Batches of small systems (n <= ND_CUDA_SMALL_SOLVE_MAX_N) for
 * nd_linalg_solve and nd_linalg_inv: one NVRTC kernel, one thread per
 * system, instead of the cuBLAS batched LU.
 *
 * The library path cost 3.8x the two cuBLAS calls alone for 10^5 8x8
 * float32 systems (0.668 against 0.175 ms on the H200): it copied A and B
 * (getrf and getrs overwrite them), built and uploaded 2 x 10^5 matrix
 * pointers, launched getrfBatched and getrsBatched and read 10^5 + 1 info
 * words back. Here the thread of system b reads A (row-major, as the
 * frontend packs it) and its right-hand sides straight from the step's
 * inputs, factors in registers (the loops are unrolled for n <= 16, so the
 * matrix never leaves them; larger n runs the same loops rolled, on local
 * memory) with partial pivoting -- the CPU backend's choice of pivot
 * (cpu_linalg.c, SMALL_SOLVE): the first largest |a| (|re| + |im| for
 * complex, LAPACK's cabs1) -- and writes X. A zero pivot folds into one
 * 64-bit word with atomicMin: (matrix << 8) | (column + 1), so the lowest
 * singular matrix and its column come back in one 8-byte read, which the
 * error names exactly as LAPACK's info would (nd_lib_la_error).
 *
 * The source (small_solve_source.c) is made per (n, dtype) -- n a
 * compile-time constant, the dtype a typedef -- compiled by NVRTC on first
 * use and cached like the generated kernels (kernel_cache.c). */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/lib_linalg.h"
#include "common/error.h"
#include "common/lib_linalg.h"

static_assert(sizeof(((nd_cuda *)0)->small_solve[0]) / sizeof(cudaKernel_t) == ND_CUDA_SMALL_SOLVE_MAX_N + 1,
              "nd_cuda's small_solve table holds a kernel per n");

static int slot(nd_dtype t) {
    return t == ND_FLOAT32 ? 0 : t == ND_FLOAT64 ? 1 : t == ND_COMPLEX64 ? 2 : t == ND_COMPLEX128 ? 3 : -1;
}

int nd_cuda_small_solve_applies(const nd_user_desc *u, const nd_kernel_arg *args) {
    if (u->lib != ND_LIB_LA_SOLVE || slot((nd_dtype)args[0].dtype) < 0 || args[0].ndim < 2) return 0;
    int64_t n = args[0].shape[args[0].ndim - 1];
    return n >= 1 && n <= ND_CUDA_SMALL_SOLVE_MAX_N;
}

int nd_cuda_small_solve_run(nd_cuda *cu, const nd_user_desc *u, const nd_kernel_arg *args, void *ws,
                            size_t ws_bytes, cudaStream_t s) {
    const nd_kernel_arg *a = &args[0], *rhs = &args[1];
    nd_dtype t = (nd_dtype)a->dtype;
    int n = (int)a->shape[a->ndim - 1];
    int64_t batch = 1, m = rhs->shape[rhs->ndim - 2];
    for (int d = 0; d < a->ndim - 2; d++) batch *= a->shape[d];
    if (batch == 0) return 0;
    if (ws_bytes < sizeof(unsigned long long)) return (int)cudaErrorInvalidValue; /* sized at prepare */
    if (m > INT32_MAX) return (int)cudaErrorNotSupported;
    cudaKernel_t *kern = &cu->small_solve[slot(t)][n];
    char name[64];
    nd_cuda_small_solve_name(name, sizeof name, n, t);
    if (!*kern) {
        char *src = nd_cuda_small_solve_source(n, t);
        if (!src) {
            nd_error_set(ND_ERR_OOM, "cuda: out of host memory building %s", name);
            return ND_CUDA_LIB_ND_ERROR;
        }
        cudaLibrary_t lib;
        nd_status st = nd_cuda_kcache_get_source(cu->cache, 0x736d736f6c7665ull, name, src, &lib);
        free(src);
        if (st != ND_OK) return ND_CUDA_LIB_ND_ERROR;
        cudaError_t e = cudaLibraryGetKernel(kern, lib, name);
        if (e != cudaSuccess) return (int)e;
    }
    unsigned long long *bad = ws, host_bad = 0;
    cudaError_t e = cudaMemsetAsync(bad, 0xff, sizeof *bad, s);
    const void *pa = a->data, *pb = rhs->data;
    void *px = args[2].data;
    long long nb = (long long)batch;
    int mm = (int)m;
    void *kargs[6] = {&pa, &pb, &px, &nb, &mm, &bad};
    dim3 grid = {(unsigned)((batch + ND_CUDA_SMALL_SOLVE_BLOCK - 1) / ND_CUDA_SMALL_SOLVE_BLOCK), 1, 1};
    dim3 block = {ND_CUDA_SMALL_SOLVE_BLOCK, 1, 1};
    if (e == cudaSuccess) e = cudaLaunchKernel((const void *)*kern, grid, block, kargs, 0, s);
    /* The verdict, read at the step (nd_lib_reads_back): a singular matrix
     * fails this step's outputs, as LAPACK's info does on the CPU. */
    if (e == cudaSuccess) e = cudaMemcpyAsync(&host_bad, bad, sizeof host_bad, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return (int)e;
    if (host_bad != ~0ull) {
        nd_lib_la_error((int)u->lib_args.v[ND_LA_FN_ARG].i, (int64_t)(host_bad >> 8), batch,
                        (int64_t)(host_bad & 0xff));
        return ND_CUDA_LIB_ND_ERROR;
    }
    return 0;
}
