/*
 * nd/fft.h — Discrete Fourier transforms (numpy.fft, NumPy 2 semantics).
 * Part of nd.h: include <nd.h>, not this file.
 *
 * Every transform is lazy: one library step per group of up to three axes
 * (nd's own mixed-radix and Bluestein FFT on the CPU, cuFFT on CUDA),
 * recorded and ordered like any other op; its input is produced by a
 * fused kernel (fft(x * window) computes x * window on the way into the
 * transform) and the normalisation is a lazy multiply fused with what
 * reads the result.
 *
 * Sizes: n (1-d functions) or s[k] (n-d) of -1 is NumPy's None (the
 * input's length along the axis; for irfft/hfft 2 * (m - 1)); a size
 * shorter than the input crops it, a longer one zero-pads it at the end.
 * Axes may be negative (counted from the end).
 *
 * Dtypes (NumPy 2): float16, bfloat16, float32 and complex64 inputs are
 * transformed in single precision (complex64 results; irfft/hfft: float32,
 * float16 and bfloat16 inputs giving their own dtype back), everything
 * else (bool, integers, float64, complex128) in double precision
 * (complex128 / float64 results). rfft, rfft2, rfftn and ihfft take real
 * inputs only (a complex one is ND_ERR_DTYPE, as NumPy 2's TypeError).
 *
 * Errors, at the call, naming the function: ND_ERR_ARG for a size < 1
 * ("Invalid number of FFT data points (0) specified", as NumPy), an axis
 * out of range, a repeated axis (NumPy would transform that axis twice;
 * SciPy and nd refuse), s and axes of different lengths, a bad norm; a
 * 0-d input is ND_ERR_SHAPE (there is no axis to transform).
 */
#ifndef ND_FFT_H
#define ND_FFT_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* numpy.fft's norm: which direction is scaled. BACKWARD (NumPy's default)
 * scales the inverse transforms by 1/n, FORWARD the forward ones by 1/n,
 * ORTHO both by 1/sqrt(n) (n: the product of the transformed lengths). */
typedef enum { ND_FFT_BACKWARD = 0, ND_FFT_ORTHO, ND_FFT_FORWARD } nd_fft_norm;

/* ---- one axis. n = -1: the input's length (irfft, hfft: 2 * (m - 1)). */

/* np.fft.fft / ifft: the complex transform of length n along axis. */
ND_API nd_array *nd_fft_fft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);
ND_API nd_array *nd_fft_ifft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);
/* np.fft.rfft: the n / 2 + 1 non-negative frequencies of the transform of
 * a real input. irfft: its inverse, n real outputs from the first
 * n / 2 + 1 inputs (the imaginary parts of the first and, for even n, the
 * last of those are ignored, as NumPy). */
ND_API nd_array *nd_fft_rfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);
ND_API nd_array *nd_fft_irfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);
/* np.fft.hfft: the real transform of a Hermitian signal given by its first
 * half (irfft(conj(a)) scaled as a forward transform); ihfft its inverse
 * (conj(rfft(a)) scaled as an inverse transform), a real input. */
ND_API nd_array *nd_fft_hfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);
ND_API nd_array *nd_fft_ihfft(nd_array *a, int64_t n, int axis, nd_fft_norm norm);

/* ---- several axes. s: s_len sizes (NULL: the input's lengths; for
 * irfftn/irfft2 the last one 2 * (m - 1)); axes: axes_len axes (NULL: the
 * last s_len axes when s is given, else every axis; for the *2 functions
 * (-2, -1)). The real axis of rfftn/irfftn is the last of axes. */
ND_API nd_array *nd_fft_fftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                             nd_fft_norm norm);
ND_API nd_array *nd_fft_ifftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                              nd_fft_norm norm);
ND_API nd_array *nd_fft_rfftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                              nd_fft_norm norm);
ND_API nd_array *nd_fft_irfftn(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                               nd_fft_norm norm);
ND_API nd_array *nd_fft_fft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                             nd_fft_norm norm);
ND_API nd_array *nd_fft_ifft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                              nd_fft_norm norm);
ND_API nd_array *nd_fft_rfft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                              nd_fft_norm norm);
ND_API nd_array *nd_fft_irfft2(nd_array *a, int s_len, const int64_t *s, int axes_len, const int *axes,
                               nd_fft_norm norm);

/* ---- helpers (float64 results, lazy) */

/* np.fft.fftfreq(n, d): [0, 1, ..., (n-1)/2, -(n/2), ..., -1] / (n * d);
 * rfftfreq: [0, 1, ..., n/2] / (n * d). Errors: ND_ERR_ARG for n < 1 or
 * d == 0 (NumPy divides by zero). */
ND_API nd_array *nd_fft_fftfreq(int64_t n, double d);
ND_API nd_array *nd_fft_rfftfreq(int64_t n, double d);
/* np.fft.fftshift: the zero frequency moved to the middle (a roll by
 * len / 2 along each axis); ifftshift undoes it (a roll by -(len / 2)).
 * axes NULL: every axis; a repeated axis rolls twice, as np.roll. Same
 * dtype, a new array. */
ND_API nd_array *nd_fft_fftshift(nd_array *x, int axes_len, const int *axes);
ND_API nd_array *nd_fft_ifftshift(nd_array *x, int axes_len, const int *axes);

#ifdef __cplusplus
}
#endif
#endif /* ND_FFT_H */
