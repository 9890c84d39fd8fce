/*
 * nd/reductions.h — Reductions over one axis, several axes or the whole array.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_REDUCTIONS_H
#define ND_REDUCTIONS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reductions follow NumPy 2. Each comes in two forms:
 *
 *   nd_NAME(a, axis)                           one axis (negative counts
 *                                              from the end) or ND_ALL_AXES
 *   nd_NAME_axes(a, naxes, axes, keepdims)     NumPy's axis=tuple and
 *                                              keepdims=
 *
 * In the _axes form, axes[0..naxes) are the reduced axes in any order,
 * negative ones counting from the end; naxes == ND_ALL_AXES (axes may be
 * NULL) reduces every axis (NumPy's axis=None); naxes == 0 (axes may be
 * NULL) reduces none (NumPy's axis=(): the values converted to the result
 * dtype, same shape). keepdims keeps each reduced axis as length 1, so the
 * result broadcasts against a. Errors (ND_ERR_ARG, naming the function, the
 * axis and the valid range): an axis out of range ("nd_sum_axes: axis 3 is
 * out of range for an array of ndim 3 (use -3..2)"), an axis given twice
 * (also as -1 and ndim-1), naxes < 0 other than ND_ALL_AXES, axes NULL
 * with naxes > 0. Every result is lazy; each reduction runs as one kernel
 * over all its axes (not one per axis), fused with the elementwise work
 * that produced its input (mean/var/std and the nan forms are composed of
 * such reductions and elementwise ops).
 *
 * Result dtypes as NumPy: sum/prod of bool and signed ints -> int64,
 * unsigned -> uint64, floats keep theirs; mean/std/var of bool and ints ->
 * float64, accumulated in float64 as NumPy (int64 timestamps near 1.7e18 or
 * uint64 values near 2^64 do not wrap), float16 means sum in float32;
 * min/max keep the dtype; argmin/argmax -> int64; any/all -> bool.
 * min/max/argmin/argmax (and their nan forms, and ptp) of an empty reduced
 * extent are ND_ERR_SHAPE (NumPy: no identity); sum of one is 0, prod 1,
 * any false, all true, mean/std/var NaN. min/max propagate NaN, argmin/
 * argmax give the first NaN's index, ties the first index. */
/* Complex arrays (NumPy 2): sum and mean add the parts; min, max, argmin,
 * argmax (and ptp, the nan forms) order lexicographically, a value with a
 * NaN part wins (the first one), ties give the first; any/all test either
 * part; var/std are real (the mean of |x - mean|^2); prod and nanprod
 * multiply pairwise (a tree of complex products, as accurate as NumPy's
 * running product or more). */
ND_API nd_array *nd_sum(nd_array *a, int axis);
ND_API nd_array *nd_prod(nd_array *a, int axis);
ND_API nd_array *nd_mean(nd_array *a, int axis);
ND_API nd_array *nd_min(nd_array *a, int axis);
ND_API nd_array *nd_max(nd_array *a, int axis);
ND_API nd_array *nd_any(nd_array *a, int axis);
ND_API nd_array *nd_all(nd_array *a, int axis);
ND_API nd_array *nd_sum_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_prod_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_mean_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_min_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_max_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_any_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_all_axes(nd_array *a, int naxes, const int *axes, bool keepdims);

/* Index (int64) of the first minimum/maximum along one axis, or in the
 * flattened array for ND_ALL_AXES (NumPy takes one axis only). The
 * _keepdims forms keep the reduced axis (every axis for ND_ALL_AXES) as
 * length 1, as np.argmin(a, axis, keepdims=True). A 0-d input gives 0. */
ND_API nd_array *nd_argmin(nd_array *a, int axis);
ND_API nd_array *nd_argmax(nd_array *a, int axis);
ND_API nd_array *nd_argmin_keepdims(nd_array *a, int axis, bool keepdims);
ND_API nd_array *nd_argmax_keepdims(nd_array *a, int axis, bool keepdims);

/* Variance and standard deviation: the mean of squared deviations from the
 * mean, divided by max(N - ddof, 0) where N counts the reduced elements
 * (NumPy's ddof, delta degrees of freedom; nd_std/nd_var use 0, ddof = 1
 * gives the unbiased sample variance). N - ddof <= 0 divides by 0 as NumPy:
 * inf, or NaN where every deviation is 0 (an empty extent: NaN). ddof may
 * be fractional or negative, as in NumPy. Float results keep the float
 * dtype; bool and ints give float64. */
ND_API nd_array *nd_std(nd_array *a, int axis);
ND_API nd_array *nd_var(nd_array *a, int axis);
ND_API nd_array *nd_std_ddof(nd_array *a, int axis, double ddof);
ND_API nd_array *nd_var_ddof(nd_array *a, int axis, double ddof);
ND_API nd_array *nd_std_axes(nd_array *a, int naxes, const int *axes, double ddof, bool keepdims);
ND_API nd_array *nd_var_axes(nd_array *a, int naxes, const int *axes, double ddof, bool keepdims);

/* NaN-ignoring reductions (np.nansum, ...): NaN elements count as absent.
 * Of bool and integer inputs (which hold no NaN) each is its plain form,
 * with the same dtype. Float results:
 *   nansum, nanprod   NaN counts as 0 / 1; an all-NaN slice gives 0 / 1
 *   nanmin, nanmax    an all-NaN slice gives NaN (NumPy 2, which warns)
 *   nanmean           sum over count of non-NaN; all-NaN gives NaN
 *   nanvar, nanstd    as var/std over the non-NaN elements, divisor
 *                     max(count - ddof, 0); all-NaN gives NaN
 *   nanargmin/max     NumPy's rule: NaN is replaced by +inf (argmin) or
 *                     -inf (argmax) and the first extreme index is taken
 *                     (so [NaN, inf] gives 0, as NumPy). A slice of only NaN,
 *                     where NumPy raises ValueError, gives -1: a value no
 *                     valid index has, computed lazily like every result
 *                     (test `r < 0` where all-NaN slices are possible).
 * Empty extents as the plain forms (nanmin/nanmax/nanargmin/nanargmax:
 * ND_ERR_SHAPE). */
ND_API nd_array *nd_nansum(nd_array *a, int axis);
ND_API nd_array *nd_nanprod(nd_array *a, int axis);
ND_API nd_array *nd_nanmean(nd_array *a, int axis);
ND_API nd_array *nd_nanmin(nd_array *a, int axis);
ND_API nd_array *nd_nanmax(nd_array *a, int axis);
ND_API nd_array *nd_nanstd(nd_array *a, int axis);
ND_API nd_array *nd_nanvar(nd_array *a, int axis);
ND_API nd_array *nd_nanstd_ddof(nd_array *a, int axis, double ddof);
ND_API nd_array *nd_nanvar_ddof(nd_array *a, int axis, double ddof);
ND_API nd_array *nd_nanargmin(nd_array *a, int axis);
ND_API nd_array *nd_nanargmax(nd_array *a, int axis);
ND_API nd_array *nd_nanargmin_keepdims(nd_array *a, int axis, bool keepdims);
ND_API nd_array *nd_nanargmax_keepdims(nd_array *a, int axis, bool keepdims);
ND_API nd_array *nd_nansum_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_nanprod_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_nanmean_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_nanmin_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_nanmax_axes(nd_array *a, int naxes, const int *axes, bool keepdims);
ND_API nd_array *nd_nanstd_axes(nd_array *a, int naxes, const int *axes, double ddof,
                                bool keepdims);
ND_API nd_array *nd_nanvar_axes(nd_array *a, int naxes, const int *axes, double ddof,
                                bool keepdims);

/* np.count_nonzero: the number of elements != 0 (NaN counts, -0.0 does
 * not), int64, of any dtype. */
ND_API nd_array *nd_count_nonzero(nd_array *a, int axis);
ND_API nd_array *nd_count_nonzero_axes(nd_array *a, int naxes, const int *axes, bool keepdims);

/* np.ptp: max - min in a's dtype (integers wrap as NumPy: int8 [127, -128]
 * gives -1; NaN propagates). bool is ND_ERR_DTYPE (NumPy has no boolean
 * subtract); an empty extent is ND_ERR_SHAPE. */
ND_API nd_array *nd_ptp(nd_array *a, int axis);
ND_API nd_array *nd_ptp_axes(nd_array *a, int naxes, const int *axes, bool keepdims);

/* np.average: sum(a * w) / sum(w) over the axes; weights NULL is nd_mean.
 * weights has a's shape, or (one reduced axis only) is 1-d with the length
 * of that axis, as NumPy; anything else is ND_ERR_SHAPE. Result dtype: the
 * promotion of a's and the weights' dtypes, with float64 where a is bool or
 * an integer (int32 a, float32 weights -> float64), as NumPy. Weights that
 * sum to zero (NumPy raises ZeroDivisionError) give the float division's
 * value: inf, or NaN for 0/0, computed lazily like every result. */
ND_API nd_array *nd_average(nd_array *a, int axis, nd_array *weights);
ND_API nd_array *nd_average_axes(nd_array *a, int naxes, const int *axes, nd_array *weights,
                                 bool keepdims);

#ifdef __cplusplus
}
#endif
#endif /* ND_REDUCTIONS_H */
