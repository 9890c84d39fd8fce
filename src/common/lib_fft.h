/* The FFT routine of common/lib_calls.h (ND_LIB_FFT), shared by the CPU
 * implementation (nd's own FFT: src/backends/cpu/cpu_fft.c), the CUDA one
 * (cuFFT: src/backends/cuda/lib_fft.c) and the frontend
 * (src/frontend/fft.c).
 *
 * One call transforms the last `rank` axes (1 to 3, cuFFT's limit) of its
 * input into its output, unnormalised, over a batch of the leading axes:
 *
 *   C2C  in complex (..., n1, .., nr), out the same shape and dtype;
 *        X[k] = sum_j x[j] exp(sign 2 pi i j.k / n) over the rank axes.
 *   R2C  in float32/float64 (..., n), out complex64/complex128
 *        (..., n / 2 + 1): the forward real transform of the last axis,
 *        then (rank > 1) forward complex ones of the other rank - 1 axes,
 *        as numpy.fft.rfftn. sign is -1.
 *   C2R  rank 1 only: in complex (..., n / 2 + 1), out real (..., n): the
 *        backward transform of the Hermitian sequence the input is half
 *        of, the imaginary parts of element 0 and (even n) element n / 2
 *        ignored, as numpy.fft.irfft (the frontend runs irfftn's other
 *        axes as a C2C call first, so any input gives NumPy's answer).
 *        sign is +1.
 *
 * Both operands are packed (contiguous, row-major); the frontend copies
 * (and crops, zero-pads, converts) into that layout, a copy that fuses
 * with whatever computes the input. Normalisation (norm=) is a lazy
 * multiply the frontend adds after the call, fused with what reads it. */
#ifndef ND_COMMON_LIB_FFT_H
#define ND_COMMON_LIB_FFT_H

typedef enum { ND_LIB_FFT_C2C, ND_LIB_FFT_R2C, ND_LIB_FFT_C2R } nd_lib_fft_kind;

/* The arguments' positions in nd_lib_args. */
enum { ND_LIB_FFT_KIND = 0, ND_LIB_FFT_SIGN = 1, ND_LIB_FFT_RANK = 2 };

#define ND_LIB_FFT_MAX_RANK 3

#endif
