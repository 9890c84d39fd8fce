/* ND_LIB_FFT on CUDA through cuFFT (lib_fft.c), as a row of lib_calls.c's
 * table. Both return a cudaError_t, or ND_CUDA_LIB_ND_ERROR when they set
 * nd's error themselves (a cuFFT status). */
#ifndef ND_BACKENDS_CUDA_LIB_FFT_H
#define ND_BACKENDS_CUDA_LIB_FFT_H

#include <stddef.h>

#include "backends/cuda/lib_linalg.h"

int nd_cuda_fft_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes);
int nd_cuda_fft_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s);

#endif
