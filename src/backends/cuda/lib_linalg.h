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

#endif
