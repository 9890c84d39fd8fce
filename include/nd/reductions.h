/*
 * nd/reductions.h — Reductions over an axis or the whole array.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_REDUCTIONS_H
#define ND_REDUCTIONS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reduce over one axis (negative counts from the end) or ND_ALL_AXES. Result
 * dtypes as NumPy: sum/prod of bool and signed ints -> int64, unsigned ->
 * uint64; mean/std/var of bool and ints -> float64, accumulated in float64
 * as NumPy (so int64 timestamps near 1.7e18 or uint64 values near 2^64 do
 * not wrap); argmin/argmax -> int64; any/all -> bool. std/var use ddof = 0. min/max/argmin/argmax of an empty
 * extent are ND_ERR_SHAPE. */
ND_API nd_array *nd_sum(nd_array *a, int axis);
ND_API nd_array *nd_prod(nd_array *a, int axis);
ND_API nd_array *nd_mean(nd_array *a, int axis);
ND_API nd_array *nd_min(nd_array *a, int axis);
ND_API nd_array *nd_max(nd_array *a, int axis);
ND_API nd_array *nd_argmin(nd_array *a, int axis);
ND_API nd_array *nd_argmax(nd_array *a, int axis);
ND_API nd_array *nd_std(nd_array *a, int axis);
ND_API nd_array *nd_var(nd_array *a, int axis);
ND_API nd_array *nd_any(nd_array *a, int axis);
ND_API nd_array *nd_all(nd_array *a, int axis);

#ifdef __cplusplus
}
#endif
#endif /* ND_REDUCTIONS_H */
