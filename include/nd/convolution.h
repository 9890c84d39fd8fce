/*
 * nd/convolution.h — Convolution along every axis (cuPyNumeric's and
 * scipy.signal's N-d convolve).
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_CONVOLUTION_H
#define ND_CONVOLUTION_H

#include "types.h"
#include "statistics.h" /* nd_conv_mode */

#ifdef __cplusplus
extern "C" {
#endif

/* How nd_convolve_nd computes (scipy.signal.convolve's `method`). */
typedef enum {
    ND_CONV_AUTO = 0, /* the cheaper of the two by a cost estimate from shapes and dtypes (below) */
    ND_CONV_DIRECT,   /* sums of products, the definition */
    ND_CONV_FFT       /* through nd_fft: zero-padded transforms, their product, the inverse */
} nd_conv_method;

/* cuPyNumeric's convolve(a, v, mode, method), which is scipy.signal's
 * convolve for N-d arrays and NumPy's for 1-d ones: out[i] = sum over j of
 * a[i - j] * v[j] on every axis, a and v of the same ndim (0-d: a * v).
 *   ND_CONV_FULL   every overlap: n + m - 1 per axis;
 *   ND_CONV_SAME   a's shape, centred on the full result (it starts at
 *                  (m - 1) / 2 per axis, as scipy and cuPyNumeric);
 *   ND_CONV_VALID  no zero padding: |n - m| + 1 per axis, which needs
 *                  one of a, v at least as large as the other on every
 *                  axis (the larger is then the signal).
 * 1-d inputs follow NumPy: a v longer than a swaps with it first, so
 * 'same' has max(n, m) values; N-d inputs never swap (cuPyNumeric), so
 * 'same' always has a's shape. Result dtype: NumPy's promotion of a and v
 * (integers wrap, bool is OR of ANDs; complex is not conjugated). Lazy.
 * DIRECT: a zero-padded copy of a (full and same only; a fill and a
 * store), then for filters
 * of up to 64 elements the sum of its shifted views times each of v's
 * values (v read as a small operand), which the scheduler fuses into one
 * generated kernel; larger filters are one reduction over a strided
 * window view of the padded copy (up to 4-d; beyond, the shifted sum).
 * Float sums run in the filter's order, so the last bits may differ from
 * scipy.
 * FFT (scipy.signal.fftconvolve's cut): rfftn of both (fftn for a complex
 * result) zero-padded per axis to a 2,3,5,7-smooth length that the mode's
 * window does not alias (about n + m for full, n + m / 2 for same, n for
 * valid), the spectra's product (one fused kernel), the inverse, and the
 * mode's window as a view. Precision: float32 transforms for float16,
 * bfloat16, float32 and complex64 results, float64 otherwise; the error is
 * relative to the whole result's scale (about eps * log2(size) * the
 * largest |output| magnitude sum), not to each element, so small outputs
 * next to large ones lose digits that DIRECT keeps. A NaN or inf anywhere
 * in a or v makes every output NaN (the transform mixes all values), where
 * DIRECT spoils only the windows that hold it. Integer and bool results
 * are computed in float64, rounded to the nearest integer and cast: exact
 * while the transform's error (about 2^-53 * log2(L) * sum|a| * max|v|)
 * stays below 1/2, so for moderate values (tested: int32 values up to
 * 1000, 200 taps); a result outside the dtype's range is not wrapped as
 * DIRECT (NumPy) wraps it. Use DIRECT (AUTO's choice) for exact integers.
 * AUTO: DIRECT for integer and bool results (exact, wrapping as NumPy);
 * for floats and complex, FFT when out_size * prod(m) (DIRECT's
 * multiply-adds) > 6 * L * log2(L), L the product of the padded lengths,
 * else DIRECT. Small filters stay direct and fused: 'same' switches at 133
 * taps on a 2^22 signal, at 13 x 13 on a 2048 x 2048 image. The rule reads
 * shapes and dtypes only, so a loop's plan stays cached.
 * Errors: ND_ERR_SHAPE for a and v of different ndim, an empty a or v, a
 * 'valid' pair neither of which contains the other; ND_ERR_ARG for another
 * mode or method; ND_ERR_DTYPE for non-numeric input. */
ND_API nd_array *nd_convolve_nd(nd_array *a, nd_array *v, nd_conv_mode mode, nd_conv_method method);

#ifdef __cplusplus
}
#endif
#endif /* ND_CONVOLUTION_H */
