/* Convolution shared by nd_convolve_nd (convolve_nd.c) and the 1-d
 * nd_convolve / nd_correlate (correlations.c): the FFT method
 * (convolve_fft.c) and the size rule that picks it. */
#ifndef ND_FRONTEND_CONVOLVE_H
#define ND_FRONTEND_CONVOLVE_H

#include "frontend/frontend.h"
#include "nd/convolution.h"

/* Which whole-array transform nd_fe_fft_all_axes runs (frontend/fft.c). */
typedef enum { ND_FE_RFFTN, ND_FE_IRFFTN, ND_FE_FFTN, ND_FE_IFFTN } nd_fe_fft_which;
nd_array *nd_fe_fft_all_axes(const char *fn, nd_fe_fft_which which, nd_array *a, const int64_t *len);

/* The smallest 2^a 3^b 5^c 7^d >= n (n >= 1): a length cuFFT and nd's own
 * FFT transform without a Bluestein pass. */
int64_t nd_conv_fast_len(int64_t n);

/* ND_CONV_AUTO's choice for signal shape n and filter shape m (the filter
 * the smaller on every axis it is not; after any swap) in mode, result
 * dtype rt: 1 for the FFT method. Shapes and dtype only, so a plan that
 * records it stays cacheable. */
int nd_conv_auto_fft(int nd, const int64_t *n, const int64_t *m, nd_conv_mode mode, nd_dtype rt);

/* The convolution of a with v (same ndim >= 1, non-empty) in mode, of
 * result dtype rt, through the FFT; untracked. a is the signal: 'same'
 * keeps its shape, 'valid' needs it at least as large as v on every axis. */
nd_array *nd_fe_convolve_fft(const char *fn, nd_array *a, nd_array *v, nd_conv_mode mode, nd_dtype rt);

#endif
