/* ND_LIB_FFT on CUDA through cuFFT (lib_fft.c), as a row of lib_calls.c's
 * table. Both return a cudaError_t, or ND_CUDA_LIB_ND_ERROR when they set
 * nd's error themselves (a cuFFT status). */
#ifndef ND_BACKENDS_CUDA_LIB_FFT_H
#define ND_BACKENDS_CUDA_LIB_FFT_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cuda/lib_linalg.h"

int nd_cuda_fft_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes);
int nd_cuda_fft_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s);

/* The same with an LTO load callback (fft_callback.h; C2C and R2C only):
 * its LTO-IR and a hash of its source, which keys the plan. The run hands
 * cb_data (device memory: the words the callback reads) to cuFFT as the
 * input; args[0].data is not read. */
typedef struct {
    const void *ir;
    size_t len;
    uint64_t hash;
} nd_cuda_fft_cb;
int nd_cuda_fft_workspace_cb(const nd_user_desc *u, const nd_kernel_arg *args, const nd_cuda_fft_cb *cb,
                             size_t *bytes);
int nd_cuda_fft_run_cb(const nd_user_desc *u, const nd_kernel_arg *args, const nd_cuda_fft_cb *cb,
                       const void *cb_data, void *ws, size_t ws_bytes, cudaStream_t s);

#endif
