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

/* ---- Histograms. Counts are int64; with weights (any real dtype, the
 * data's shape) each bin is the sum of its values' weights, summed in
 * float64 in one fixed order (the same bits on every run and thread count;
 * NumPy sums 65536-element blocks, so the last bits may differ from it)
 * and returned in the weights' dtype as NumPy. weights may be NULL. */

/* NumPy's bincount: x 1-d of bool or integers (not uint64; ND_ERR_DTYPE),
 * none negative (ND_ERR_ARG naming the value); the result has
 * max(max(x) + 1, minlength) bins (minlength >= 0, else ND_ERR_ARG). Result
 * int64, or float64 with weights (NumPy's bincount always sums weights in
 * float64). Synchronises: x's min and max are computed and read at the
 * call (the length depends on them); the count itself is lazy. */
ND_API nd_array *nd_bincount(nd_array *x, nd_array *weights, int64_t minlength);

/* NumPy's histogram(a, bins, range=(lo, hi), weights): `bins` equal bins
 * over [lo, hi] of the flattened a; every bin is half-open [e_i, e_i+1)
 * except the last, which also holds hi; values outside the range and NaN
 * are dropped. Values are binned as NumPy does: in a's dtype for float32
 * (float16 and bfloat16 are binned in float32), in float64 otherwise,
 * against the edges nd_histogram_bin_edges returns. lo == hi widens the
 * range to [lo - 0.5, hi + 0.5]. lo and hi both NaN take a's min and max
 * (NumPy's range=None): that synchronises, reading them at the call, and
 * NaN or inf in a is then an ND_ERR_ARG error; otherwise lazy. Errors:
 * ND_ERR_ARG for bins <= 0, a range with lo > hi or a non-finite end;
 * ND_ERR_SHAPE for weights of another shape; ND_ERR_DTYPE for a
 * non-numeric a. */
ND_API nd_array *nd_histogram(nd_array *a, int64_t bins, double lo, double hi, nd_array *weights);
/* NumPy's histogram_bin_edges for the same arguments: bins + 1 edges,
 * np.linspace(lo, hi, bins + 1) in the bin dtype (float32 for float32
 * data, float64 otherwise). Synchronises only when lo and hi are NaN. */
ND_API nd_array *nd_histogram_bin_edges(nd_array *a, int64_t bins, double lo, double hi);
/* NumPy's histogram(a, bins=edges, weights): edges 1-d, at least 2,
 * increasing (equal neighbours make an empty bin); bin i holds
 * edges[i] <= x < edges[i + 1], the last one also x == edges[-1]; others
 * and NaN are dropped. Compared in float32 when a and edges are both
 * float32, else float64. Synchronises: the edges are read at the call to
 * check their order (ND_ERR_ARG naming the first pair out of order). */
ND_API nd_array *nd_histogram_by_edges(nd_array *a, nd_array *edges, nd_array *weights);
/* NumPy's histogram2d(x, y, bins=(nx, ny), range, weights): x and y 1-d of
 * one length; range {xlo, xhi, ylo, yhi} or NULL (each pair NaN, or NULL,
 * takes the data's min and max: synchronises); the result is (nx, ny)
 * float64 (NumPy's histogramdd always returns floats). Bins follow
 * histogramdd: np.linspace edges in float64, values compared in float64,
 * the last bin of each axis closed, values outside or NaN dropped. The
 * edges are nd_linspace(ND_FLOAT64, lo, hi, n + 1). Errors as
 * nd_histogram, and ND_ERR_SHAPE for x and y of other shapes. */
ND_API nd_array *nd_histogram2d(nd_array *x, nd_array *y, int64_t nx, int64_t ny, const double *range,
                                nd_array *weights);

/* ---- Correlations (lazy, composed of mean, subtract and matmul, unless
 * weights are given). */

/* NumPy's cov(m, rowvar=rowvar, bias=bias, ddof=ddof): m 1-d (one
 * variable) or 2-d, rows are variables when rowvar is nonzero (NumPy's
 * default) else columns; ddof < 0 is NumPy's ddof=None (1, or 0 with
 * bias). Result float64, variables x variables, squeezed as NumPy (one
 * variable gives a 0-d array; no variables a (0, 0) array); N - ddof <= 0
 * divides by 0 (inf/NaN, where NumPy also warns). Errors: ND_ERR_SHAPE for
 * m of more than 2 dims, ND_ERR_DTYPE for a non-numeric m. The full form
 * (y, weights, negative ddof) is nd_cov_ex. */
ND_API nd_array *nd_cov(nd_array *m, int rowvar, int bias, int ddof);

/* NumPy's ddof=None for nd_cov_options.ddof. */
#define ND_DDOF_NONE (-2147483647 - 1)
/* The keyword arguments of NumPy's cov; start from ND_COV_OPTIONS_INIT
 * (NumPy's defaults) and set what differs. */
typedef struct {
    int rowvar;         /* nonzero (default): each row of m and y is a variable, each column an observation */
    int bias;           /* nonzero: normalise by N (the weights' sum) rather than N - 1; only with ddof None */
    int ddof;           /* ND_DDOF_NONE (default): 1, or 0 with bias; any other value (negative too) is used */
    nd_array *fweights; /* NULL, or 1-d, one per observation: integer-valued frequencies >= 0 */
    nd_array *aweights; /* NULL, or 1-d, one per observation: observation weights >= 0 */
} nd_cov_options;
#define ND_COV_OPTIONS_INIT {1, 0, ND_DDOF_NONE, NULL, NULL}

/* NumPy 2's full cov(m, y, rowvar, bias, ddof, fweights, aweights)
 * (opt NULL: the defaults). y (NULL for none) adds variables: it is made
 * 2-d as m is and stacked below m's variables; with rowvar 0 a 2-d y is
 * transposed unless it has one row (NumPy's own rule, which differs from
 * m's). With weights w = fweights * aweights, the means are weighted
 * averages and the normalisation is NumPy's: sum(w) for ddof 0,
 * sum(w) - ddof without aweights, sum(w) - ddof * sum(w * aweights) /
 * sum(w) otherwise; <= 0 divides by zero (inf/NaN). Result float64,
 * squeezed as nd_cov; m with no variables gives a (0, 0) array before y
 * and the weights are looked at (as NumPy). Lazy without weights.
 * SYNCHRONISES when weights are given: they are read at the call to check
 * them (NumPy raises) and to compute their sums on the host in float64.
 * Errors: ND_ERR_SHAPE (m or y of more than 2 dims, y with another number
 * of observations, weights not 1-d or of another length), ND_ERR_DTYPE
 * (non-numeric m, y or weights), ND_ERR_ARG (a non-integer or NaN
 * fweight, a negative weight, weights that sum to zero: each named). */
ND_API nd_array *nd_cov_ex(nd_array *m, nd_array *y, const nd_cov_options *opt);

/* NumPy's corrcoef(x, rowvar): cov / (d_i d_j) with d = sqrt(diag(cov)),
 * clipped to [-1, 1] (NaN stays NaN); float64; one variable gives c / c
 * (1.0, or NaN). Lazy. Errors as nd_cov. nd_corrcoef_ex is NumPy's
 * corrcoef(x, y, rowvar): y (NULL for none) adds variables as in
 * nd_cov_ex. */
ND_API nd_array *nd_corrcoef(nd_array *x, int rowvar);
ND_API nd_array *nd_corrcoef_ex(nd_array *x, nd_array *y, int rowvar);

/* ---- Convolution of 1-d signals (NumPy's modes). */
typedef enum {
    ND_CONV_FULL,  /* every overlap: len(a) + len(v) - 1 (convolve's default) */
    ND_CONV_SAME,  /* max(len(a), len(v)), centred as NumPy */
    ND_CONV_VALID, /* full overlaps only: |len(a) - len(v)| + 1 (correlate's default) */
} nd_conv_mode;
/* NumPy's correlate(a, v, mode): z[k] = sum_j a[k + j - s] * v[j] over the
 * zero-padded a (s = len(v) - 1 for full, len(v) / 2 for same, 0 for
 * valid); when a is shorter than v the two swap and the result is
 * reversed, as NumPy. A complex v is conjugated first (NumPy's
 * correlate: z[k] = sum_n a[n + k] * conj(v[n]), before any swap).
 * convolve(a, v, mode) is correlate of the longer with the shorter
 * reversed, nothing conjugated. Result dtype: NumPy's promotion of a and
 * v (integers stay integers; complex64 and complex128 as NumPy 2). Lazy: the sum of each window's products is one reduction of
 * a strided window view of the padded signal, fused with the products
 * (no window is stored); floats are summed in the reduction's order, not
 * NumPy's dot order (the last bits may differ). Long float filters go
 * through the FFT instead, by nd_convolve_nd's ND_CONV_AUTO rule (about
 * 100+ taps on long signals; include/nd/convolution.h): the error is then
 * relative to the result's largest magnitudes and a NaN spreads over
 * every output. Integer and bool inputs always take the exact sum.
 * Errors: ND_ERR_SHAPE for a
 * non-1-d or empty a or v, ND_ERR_ARG for another mode, ND_ERR_DTYPE for
 * non-numeric input (bool, integers, floats and complex are numbers). */
ND_API nd_array *nd_correlate(nd_array *a, nd_array *v, nd_conv_mode mode);
ND_API nd_array *nd_convolve(nd_array *a, nd_array *v, nd_conv_mode mode);

#ifdef __cplusplus
}
#endif

#endif
