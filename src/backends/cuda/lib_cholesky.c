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
 * ND_CUDA_CHOL_SIDE_ZEROS=1 takes the zeros out of pack (read half, write
 * half) and writes them with a kernel of their own on a stream of the
 * lowest priority, ordered after pack by an event, beside potrf: potrf
 * leaves SMs idle in its panel factorisations, which the zero blocks can
 * fill, while at the highest priority pending potrf blocks go first (a
 * resident zero block delays one by its own few microseconds). The step
 * waits for it before the status words are read back (nd_cuda_chol_join).
 * potrf never touches that triangle, so the two never meet (the host
 * check runs the zeros before and after a stand-in potrf). Whether the
 * side stream beats the zeros in pack (0.07 ms of float64 8192's 7.3 ms
 * potrf on the H200) is to be measured: `bench_linalg_bench 8192 1 7
 * cholesky` with and without the variable.
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

/* The source's entries (chol_source.c), by their index in chol_kernels. */
enum { CHOL_PACK, CHOL_ZEROS, CHOL_PACK1 };
static const char *const entry_names[] = {"pack", "zeros", "pack1"};
_Static_assert(sizeof entry_names / sizeof *entry_names ==
                   sizeof(((nd_cuda *)0)->chol_kernels[0]) / sizeof(((nd_cuda *)0)->chol_kernels[0][0]),
               "one kernel slot per entry");

/* Kernel `which` of dtype t, compiled on first use. */
static int kernel(nd_cuda *cu, nd_dtype t, int which, cudaKernel_t *out) {
    int k = slot(t);
    if (k < 0) return (int)cudaErrorNotSupported;
    cudaKernel_t *kern = &cu->chol_kernels[k][which];
    if (!*kern) {
        if (!cu->chol_lib && nd_cuda_kcache_get_source(cu->cache, 0x63686f6c747269ull, "nd_chol_triangles", nd_cuda_chol_source(),
                                                       &cu->chol_lib) != ND_OK)
            return ND_CUDA_LIB_ND_ERROR;
        char name[48];
        snprintf(name, sizeof name, "nd_chol_%s_%s", entry_names[which], nd_dtype_name(t));
        cudaError_t e = cudaLibraryGetKernel(kern, cu->chol_lib, name);
        if (e != cudaSuccess) return (int)e;
    }
    *out = *kern;
    return 0;
}

/* The grid over the tile pairs of an n x n matrix, the batch along y
 * (0 where it does not fit). */
static int grid_of(int64_t n, int64_t batch, dim3 *grid) {
    if (n > INT32_MAX) return 0;
    int64_t nt = (n + TILE - 1) / TILE, ng = (nt + GROUP - 1) / GROUP, pairs = ng * (ng + 1) / 2 * GROUP * GROUP;
    if (pairs > INT32_MAX) return 0;
    *grid = (dim3){(unsigned)pairs, (unsigned)(batch < 65535 ? batch : 65535), 1};
    return 1;
}

/* The zeros on the side stream, made on first use with the lowest
 * priority (its blocks take the SMs potrf's kernels leave idle, and never
 * go before them), ordered after pack (events[0] recorded on s) and before
 * the rest of the step (events[1], which s waits for: chol_join). */
static int side_zeros(nd_cuda *cu, nd_dtype t, void *c, int64_t n, int64_t batch, cudaStream_t s) {
    if (!cu->chol_side) {
        int least = 0, greatest = 0;
        cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&cu->chol_side, cudaStreamNonBlocking, least);
        for (int i = 0; i < 2 && e == cudaSuccess; i++)
            e = cudaEventCreateWithFlags(&cu->chol_events[i], cudaEventDisableTiming);
        if (e != cudaSuccess) {
            nd_cuda_chol_release(cu);
            return (int)e;
        }
    }
    cudaKernel_t kern;
    dim3 grid, block = {TILE, ROWS, 1};
    int e = kernel(cu, t, CHOL_ZEROS, &kern);
    if (e) return e;
    if (!grid_of(n, batch, &grid)) return (int)cudaErrorNotSupported;
    int ni = (int)n;
    long long nb = (long long)batch;
    void *args[3] = {&c, &ni, &nb};
    e = (int)cudaEventRecord(cu->chol_events[0], s);
    if (!e) e = (int)cudaStreamWaitEvent(cu->chol_side, cu->chol_events[0], 0);
    if (!e) e = (int)cudaLaunchKernel((const void *)kern, grid, block, args, 0, cu->chol_side);
    if (!e) e = (int)cudaEventRecord(cu->chol_events[1], cu->chol_side);
    return e;
}

int nd_cuda_chol_pack(nd_cuda *cu, nd_dtype t, const void *a, void *c, int64_t n, int64_t batch, int *info,
                      int64_t ninfo, cudaStream_t s) {
    if (n == 0 || batch == 0) /* no matrix to walk: the status words alone */
        return ninfo ? (int)cudaMemsetAsync(info, 0, (size_t)ninfo * sizeof *info, s) : 0;
    cudaKernel_t kern;
    dim3 grid, block = {TILE, ROWS, 1};
    if (!grid_of(n, batch, &grid)) return (int)cudaErrorNotSupported;
    int ni = (int)n, zeros = !cu->chol_side_zeros;
    long long nb = (long long)batch, ni64 = (long long)ninfo;
    /* One matrix with its zeros: the entry without the batch loop and the
     * flag (chol_source.c says why). */
    int one = batch == 1 && zeros;
    int e = kernel(cu, t, one ? CHOL_PACK1 : CHOL_PACK, &kern);
    if (e) return e;
    void *args[7] = {(void *)&a, &c, &ni, &nb, &info, &ni64, &zeros};
    void *args1[5] = {(void *)&a, &c, &ni, &info, &ni64};
    e = (int)cudaLaunchKernel((const void *)kern, grid, block, one ? args1 : args, 0, s);
    return e || zeros ? e : side_zeros(cu, t, c, n, batch, s);
}

int nd_cuda_chol_join(nd_cuda *cu, int64_t n, int64_t batch, cudaStream_t s) {
    if (!cu->chol_side_zeros || n == 0 || batch == 0) return 0;
    return (int)cudaStreamWaitEvent(s, cu->chol_events[1], 0);
}

void nd_cuda_chol_release(nd_cuda *cu) {
    for (int i = 0; i < 2; i++)
        if (cu->chol_events[i]) cudaEventDestroy(cu->chol_events[i]), cu->chol_events[i] = NULL;
    if (cu->chol_side) cudaStreamDestroy(cu->chol_side), cu->chol_side = NULL;
}
