/* The dense linear algebra routines on CUDA (lib_linalg.c), as rows of
 * lib_calls.c's table: one workspace and one run function for every
 * ND_LIB_LA_* routine. Both return a cudaError_t, or ND_CUDA_LIB_ND_ERROR
 * when they set nd's error themselves (a cuSOLVER status, ND_ERR_LINALG). */
#ifndef ND_BACKENDS_CUDA_LIB_LINALG_H
#define ND_BACKENDS_CUDA_LIB_LINALG_H

#include <stddef.h>

#include "backends/cuda/cuda_loader.h"
#include "backends/plan.h"

#define ND_CUDA_LIB_ND_ERROR (-1)

int nd_cuda_la_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes);
int nd_cuda_la_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s);

typedef struct nd_cuda nd_cuda;
/* LA_CHOLESKY's run: as nd_cuda_la_run (which refuses it), with the
 * backend for the pack pass before potrf (lib_cholesky.c). */
int nd_cuda_la_cholesky_run(nd_cuda *cu, const nd_user_desc *u, const nd_kernel_arg *args, void *ws,
                            size_t ws_bytes, cudaStream_t s);
/* lib_cholesky.c, before potrf: C's upper triangle = A's lower one
 * transposed (what potrf's column-major lower form reads; a and c may be
 * the same buffer), C's strict lower triangle zero, for every n x n matrix
 * of a batch, and info[0 .. ninfo) zero; after potrf C is L^T. One launch
 * (a cudaMemsetAsync of info alone where there is no matrix); returns a
 * cudaError_t or ND_CUDA_LIB_ND_ERROR. */
int nd_cuda_chol_pack(nd_cuda *cu, nd_dtype t, const void *a, void *c, int64_t n, int64_t batch, int *info,
                      int64_t ninfo, cudaStream_t s);
/* Under ND_CUDA_CHOL_SIDE_ZEROS=1 pack leaves the zeros to a kernel on a
 * low-priority stream beside potrf: s waits for it here, after potrf and
 * before the status words are read back (a cudaError_t; 0 otherwise). */
int nd_cuda_chol_join(nd_cuda *cu, int64_t n, int64_t batch, cudaStream_t s);
/* The kernel's CUDA C (all four dtypes), for src/backends/cuda/tests/chol_check.sh. */
const char *nd_cuda_chol_source(void);

/* Batches of small systems (lib_small_solve.c): solve with n <= 
 * ND_CUDA_SMALL_SOLVE_MAX_N runs one generated kernel, one thread per
 * system, instead of the library; it needs ND_CUDA_SMALL_SOLVE_WS bytes of
 * workspace (the lowest singular matrix's word). */
#define ND_CUDA_SMALL_SOLVE_WS 256
int nd_cuda_small_solve_applies(const nd_user_desc *u, const nd_kernel_arg *args);
int nd_cuda_small_solve_run(nd_cuda *cu, const nd_user_desc *u, const nd_kernel_arg *args, void *ws,
                            size_t ws_bytes, cudaStream_t s);
/* small_solve_source.c: the kernel's CUDA C for n x n systems of dtype t
 * (malloc'd; NULL for an n or dtype it does not take, or out of memory),
 * its entry named as nd_cuda_small_solve_name writes; and one source with
 * every n and dtype and no unrolling pragmas, for tests/small_solve_check.sh
 * to compile as C++ on the host. */
#define ND_CUDA_SMALL_SOLVE_MAX_N 32
#define ND_CUDA_SMALL_SOLVE_BLOCK 128
char *nd_cuda_small_solve_source(int n, nd_dtype t);
char *nd_cuda_small_solve_host_source(void);
int nd_cuda_small_solve_name(char *buf, size_t cap, int n, nd_dtype t);

#endif
