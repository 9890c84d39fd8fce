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
    ND_CONV_AUTO = 0, /* the faster of the two by an estimate; today always DIRECT (see below) */
    ND_CONV_DIRECT,   /* sums of products, the definition */
    ND_CONV_FFT       /* through the FFT: not in this build yet (ND_ERR_UNSUPPORTED) */
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
 * scipy. AUTO is DIRECT: the FFT method is not wired to nd_fft yet; it
 * will take large filters (docs/internals.md, "Convolution along several
 * axes").
 * Errors: ND_ERR_SHAPE for a and v of different ndim, an empty a or v, a
 * 'valid' pair neither of which contains the other; ND_ERR_ARG for another
 * mode or method; ND_ERR_DTYPE for non-numeric input; ND_ERR_UNSUPPORTED
 * for ND_CONV_FFT. */
ND_API nd_array *nd_convolve_nd(nd_array *a, nd_array *v, nd_conv_mode mode, nd_conv_method method);

#ifdef __cplusplus
}
#endif
#endif /* ND_CONVOLUTION_H */
