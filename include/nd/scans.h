/*
 * nd/scans.h — Cumulative sums and products along an axis.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_SCANS_H
#define ND_SCANS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scans follow NumPy 2: nd_NAME(a, axis) along one axis (negative counts
 * from the end) or ND_ALL_AXES for the flattened array (NumPy's
 * axis=None, a 1-d result). The result dtype is NumPy's: bool and signed
 * integers narrower than 64 bits accumulate in int64, unsigned ones in
 * uint64, floats in their own dtype. Each element is the scan of the
 * elements before it in order (the same bits on every backend and thread
 * count). Lazy: one library step of the plan. Errors: ND_ERR_ARG (NULL a,
 * an axis out of range, naming the valid range). */
ND_API nd_array *nd_cumsum(nd_array *a, int axis);
ND_API nd_array *nd_cumprod(nd_array *a, int axis);
/* As nd_cumsum / nd_cumprod with NaN counted as 0 / 1 (NumPy's nancumsum,
 * nancumprod); integers as there. */
ND_API nd_array *nd_nancumsum(nd_array *a, int axis);
ND_API nd_array *nd_nancumprod(nd_array *a, int axis);

#ifdef __cplusplus
}
#endif

#endif
