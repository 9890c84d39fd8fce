/* The pass before cuSOLVER's potrf for LA_CHOLESKY (common/lib_linalg.h):
 * an NVRTC kernel, one source for the four dtypes, compiled on first use
 * and cached like the generated kernels.
 *
 * potrf factors in place, column-major, and its lower form is the fast
 * one (8.7 against 13.0 ms for 8192 float32 on the H200). A row-major
 * buffer read column-major is the transpose, so the column-major lower
 * triangle is the row-major upper one, while NumPy reads A's lower
 * triangle. So the step makes its own input, and its output is L^T (the
 * backend's cholesky_transposed: the frontend hands out the transposed
 * view, L, column-major as PyTorch's is):
 *
 *  pack    C's upper triangle = A's lower triangle transposed (no
 *          conjugation), C's strict lower triangle zero, and the status
 *          words potrf writes (and check_infos reads) zero. Read
 *          column-major, C's lower triangle is A's: potrf reads the
 *          Hermitian matrix A (nothing else) and factors A = L L^H.
 *  potrf   writes L column-major over its lower triangle, which read
 *          row-major is L^T over C's upper triangle; it neither reads nor
 *          writes the other one (LAPACK's contract: "not referenced"), so
 *          the zeros written by pack stay. C is then L^T, every element
 *          written: no pass after potrf.
 *
 * So the step is one pass over A (read half, write all of C) and potrf.
 * The pass took the place of a cudaMemsetAsync of the status words, and of
 * a second kernel after potrf (the zeros, and for complex dtypes a
 * conjugation of the factor: potrf factored conj(A) when the pack
 * conjugated); a row-major L would need a transposing pass after potrf
 * (0.26 ms for 8192 float64 on the H200, where pack + that pass + potrf
 * could not come within 1.05x of potrf alone). A consumer that needs L
 * row-major pays one transpose there instead; matmul and the solvers take
 * the transposed view as it is.
 *
 * pack is a tiled transpose: a block takes one pair of mirrored 32 x 32
 * tiles (i, j), i >= j, reads one through shared memory and writes the
 * other, both along rows (coalesced), and writes zeros over what it read
 * below the diagonal (each thread over the elements it read itself, after
 * reading them); only the lower triangle is read. The blocks walk the
 * pairs in groups of 8 x 8 tiles, so that the blocks resident at once
 * (~1000 on the H200) read and write two compact squares of the matrix
 * rather than one band of 32 rows and one band of 32 columns spread over
 * every row (groups of 1, 4, 8 and 16 measured within 0.02 ms of each
 * other for 8192 float64 by bench_linalg_bench). A block reads its source
 * tile before it writes it or its mirror, and no block reads a tile
 * another writes, so pack is also right with A and C the same buffer. One
 * launch covers a whole batch (blocks walk the matrices along grid y). */
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

/* The pack kernel of dtype t, compiled on first use. */
static int kernel(nd_cuda *cu, nd_dtype t, cudaKernel_t *out) {
    int k = slot(t);
    if (k < 0) return (int)cudaErrorNotSupported;
    cudaKernel_t *kern = &cu->chol_kernels[k];
    if (!*kern) {
        if (!cu->chol_lib && nd_cuda_kcache_get_source(cu->cache, 0x63686f6c747269ull, "nd_chol_triangles", nd_cuda_chol_source(),
                                                       &cu->chol_lib) != ND_OK)
            return ND_CUDA_LIB_ND_ERROR;
        char name[48];
        snprintf(name, sizeof name, "nd_chol_pack_%s", nd_dtype_name(t));
        cudaError_t e = cudaLibraryGetKernel(kern, cu->chol_lib, name);
        if (e != cudaSuccess) return (int)e;
    }
    *out = *kern;
    return 0;
}

int nd_cuda_chol_pack(nd_cuda *cu, nd_dtype t, const void *a, void *c, int64_t n, int64_t batch, int *info,
                      int64_t ninfo, cudaStream_t s) {
    if (n == 0 || batch == 0) /* no matrix to walk: the status words alone */
        return ninfo ? (int)cudaMemsetAsync(info, 0, (size_t)ninfo * sizeof *info, s) : 0;
    if (n > INT32_MAX) return (int)cudaErrorNotSupported;
    cudaKernel_t kern;
    int e = kernel(cu, t, &kern);
    if (e) return e;
    int64_t nt = (n + TILE - 1) / TILE, ng = (nt + GROUP - 1) / GROUP, pairs = ng * (ng + 1) / 2 * GROUP * GROUP;
    if (pairs > INT32_MAX) return (int)cudaErrorNotSupported;
    int ni = (int)n;
    long long nb = (long long)batch, ni64 = (long long)ninfo;
    dim3 grid = {(unsigned)pairs, (unsigned)(batch < 65535 ? batch : 65535), 1};
    dim3 block = {TILE, ROWS, 1};
    void *args[6] = {(void *)&a, &c, &ni, &nb, &info, &ni64};
    return (int)cudaLaunchKernel((const void *)kern, grid, block, args, 0, s);
}
