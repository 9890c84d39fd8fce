/*
 * nd/statistics.h — Statistics: histograms, order statistics, correlations.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_STATISTICS_H
#define ND_STATISTICS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Order statistics: median, quantiles, percentiles ----
 * NumPy 2's median, nanmedian, quantile, nanquantile, percentile and
 * nanpercentile with the default method ('linear': the value at virtual
 * index (n - 1) q of the sorted values, interpolated between its two
 * neighbours with NumPy's own formula, so infinities give NumPy's NaNs).
 * Along `axis` (negative counts from the end) or ND_ALL_AXES for the
 * flattened array, which the result loses (keepdims=False).
 * Result dtype: a's float dtype (float16 and bfloat16 computed in float32
 * and rounded), float64 for integer and bool arrays. A row holding a NaN
 * gives NaN; the nan* forms leave NaNs out (an all-NaN row gives NaN).
 * median is the mean of the two middle values, as NumPy's. Lazy: a sort
 * and one step; the same bits on every backend and thread count.
 *   nd_quantile(a, q, axis): one q in [0, 1] (percentile: q in [0, 100]);
 *     the reduced shape.
 *   nd_quantiles(a, nq, q, axis): nq >= 1 values of q from a host array
 *     (read at the call); shape (nq, reduced shape...), as NumPy's 1-d q.
 * With a float32 array and an array of q NumPy computes in float64; nd
 * keeps a's dtype there too (its scalar-q rule).
 * Errors: ND_ERR_ARG (NULL a or q, nq < 1, q outside its range or NaN, an
 * axis out of range), ND_ERR_SHAPE (quantile or percentile along an axis of
 * length 0: NumPy raises; median and nanmedian give NaN there). */
ND_API nd_array *nd_median(nd_array *a, int axis);
ND_API nd_array *nd_nanmedian(nd_array *a, int axis);
ND_API nd_array *nd_quantile(nd_array *a, double q, int axis);
ND_API nd_array *nd_nanquantile(nd_array *a, double q, int axis);
ND_API nd_array *nd_percentile(nd_array *a, double q, int axis);
ND_API nd_array *nd_nanpercentile(nd_array *a, double q, int axis);
ND_API nd_array *nd_quantiles(nd_array *a, int64_t nq, const double *q, int axis);
ND_API nd_array *nd_nanquantiles(nd_array *a, int64_t nq, const double *q, int axis);
ND_API nd_array *nd_percentiles(nd_array *a, int64_t nq, const double *q, int axis);
ND_API nd_array *nd_nanpercentiles(nd_array *a, int64_t nq, const double *q, int axis);
/* ---- end of order statistics ---- */


#ifdef __cplusplus
}
#endif

#endif
