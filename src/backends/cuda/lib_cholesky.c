/* The two triangle passes around cuSOLVER's potrf for LA_CHOLESKY
 * (common/lib_linalg.h): NVRTC kernels, one source for the four dtypes,
 * compiled on first use and cached like the generated kernels.
 *
 * potrf factors in place, column-major, and its lower form is the fast
 * one (8.7 against 13.0 ms for 8192 float32 on the H200). A row-major
 * buffer read column-major is the transpose, so the column-major lower
 * triangle is the row-major upper one: the factor lands there, as L^H,
 * while NumPy reads A's lower triangle. So the step makes its own input,
 * and its output is L^T (the backend's cholesky_transposed: the frontend
 * hands out the transposed view, L, column-major as PyTorch's is):
 *
 *  pack    C's upper triangle = A's lower triangle conjugate-transposed
 *          (potrf reads nothing else; C's lower triangle is not touched).
 *          Column-major, C's lower triangle is then conj(A)'s: potrf
 *          factors conj(A) = Lc Lc^H, and A = conj(Lc) conj(Lc)^H.
 *  potrf   writes Lc^T (= L^H, L = conj(Lc)) over C's upper triangle.
 *  finish  C's strict lower triangle zero; for complex dtypes the upper
 *          one conjugated in place (L^H -> L^T). Real dtypes: zeros
 *          written, nothing read.
 *
 * A row-major L would need a transposing pass after potrf (read the upper
 * triangle, write the whole matrix): for 8192 float64 on the H200 it took
 * 0.26 ms where the zeros take a quarter of the bytes, and pack + that pass
 * + potrf could not come within 1.05x of potrf alone. A consumer that
 * needs L row-major pays one transpose there instead; matmul and the
 * solvers take the transposed view as it is.
 *
 * pack is a tiled transpose: a block takes one pair of mirrored 32 x 32
 * tiles (i, j), i >= j, reads one through shared memory and writes the
 * other, both along rows (coalesced); only the lower triangle is read.
 * The blocks walk the pairs in groups of 8 x 8 tiles, so that the blocks
 * resident at once (~1000 on the H200) read and write two compact squares
 * of the matrix rather than one band of 32 rows and one band of 32 columns
 * spread over every row (groups of 1, 4, 8 and 16 measured within 0.02 ms
 * of each other for 8192 float64 by bench_linalg_bench). A block reads
 * its source tile before it writes, and no block reads a tile another
 * writes, so pack is also right with A and C the same buffer. One launch
 * covers a whole batch (blocks walk the matrices along grid y). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/lib_linalg.h"
#include "common/error.h"

#define TILE 32 /* the source's TD, TR and NDK_GROUP (chol_source.c) */
#define ROWS 8  /* threads down a tile: each moves TILE / ROWS elements */
#define GROUP 8 /* tiles along a side of the groups the blocks walk */

static int slot(nd_dtype t) {
    return t == ND_FLOAT32 ? 0 : t == ND_FLOAT64 ? 1 : t == ND_COMPLEX64 ? 2 : t == ND_COMPLEX128 ? 3 : -1;
}

/* The kernel (0 pack, 1 finish) of dtype t, compiled on first use. */
static int kernel(nd_cuda *cu, nd_dtype t, int which, cudaKernel_t *out) {
    int k = slot(t);
    if (k < 0) return (int)cudaErrorNotSupported;
    cudaKernel_t *kern = &cu->chol_kernels[k][which];
    if (!*kern) {
        if (!cu->chol_lib && nd_cuda_kcache_get_source(cu->cache, 0x63686f6c747269ull, "nd_chol_triangles", nd_cuda_chol_source(),
                                                       &cu->chol_lib) != ND_OK)
            return ND_CUDA_LIB_ND_ERROR;
        char name[48];
        snprintf(name, sizeof name, "nd_chol_%s_%s", which ? "finish" : "pack", nd_dtype_name(t));
        cudaError_t e = cudaLibraryGetKernel(kern, cu->chol_lib, name);
        if (e != cudaSuccess) return (int)e;
    }
    *out = *kern;
    return 0;
}

/* One launch of kernel `which` over the batch (a is NULL for finish). */
static int launch(nd_cuda *cu, nd_dtype t, int which, const void *a, void *c, int64_t n, int64_t batch,
                  cudaStream_t s) {
    if (n == 0 || batch == 0) return 0;
    if (n > INT32_MAX) return (int)cudaErrorNotSupported;
    cudaKernel_t kern;
    int e = kernel(cu, t, which, &kern);
    if (e) return e;
    int64_t nt = (n + TILE - 1) / TILE, ng = (nt + GROUP - 1) / GROUP, pairs = ng * (ng + 1) / 2 * GROUP * GROUP;
    if (pairs > INT32_MAX) return (int)cudaErrorNotSupported;
    int ni = (int)n;
    long long nb = (long long)batch;
    dim3 grid = {(unsigned)pairs, (unsigned)(batch < 65535 ? batch : 65535), 1};
    dim3 block = {TILE, ROWS, 1};
    void *pack_args[4] = {(void *)&a, &c, &ni, &nb}, *finish_args[3] = {&c, &ni, &nb};
    return (int)cudaLaunchKernel((const void *)kern, grid, block, which ? finish_args : pack_args, 0, s);
}

int nd_cuda_chol_pack(nd_cuda *cu, nd_dtype t, const void *a, void *c, int64_t n, int64_t batch, cudaStream_t s) {
    return launch(cu, t, 0, a, c, n, batch, s);
}

int nd_cuda_chol_finish(nd_cuda *cu, nd_dtype t, void *c, int64_t n, int64_t batch, cudaStream_t s) {
    return launch(cu, t, 1, NULL, c, n, batch, s);
}
