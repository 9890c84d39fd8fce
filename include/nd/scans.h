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
 * axis=None, a 1-d result); a 0-d a is scanned as its 1-element ravel
 * (axis 0 or -1, a 1-d result, as NumPy). The result dtype is NumPy's:
 * bool and signed integers narrower than 64 bits accumulate in int64,
 * unsigned ones in uint64 (wrapping as NumPy), floats in their own dtype;
 * float16 and bfloat16 round to their format after every step as NumPy's
 * float16 loop does (a long float16 sum stalls where NumPy's does). Each
 * element is the scan of the elements before it, in order from the first:
 * NumPy's bits on the CPU backend for rows of up to 65536 elements (and
 * always for integers and float16/bfloat16); longer float rows on the CPU,
 * and float rows on CUDA, are scanned in fixed blocks, which rounds
 * differently from NumPy's single running sum (within the rounding of the
 * running sum of |terms|). Deterministic: the same bits on every run and
 * for any number of CPU threads. Empty arrays give empty results. Lazy:
 * one library step of the plan, reading a packed copy of a (made only when
 * a is not already a packed row of the result dtype; that copy is fused
 * with whatever computes a). Errors: ND_ERR_ARG (NULL a, an axis out of
 * range, naming the valid range). */
/* Complex arrays: cumsum and nancumsum scan the parts (a value with a NaN
 * part counts as 0 in nancumsum); cumprod and nancumprod multiply with
 * NumPy's textbook complex product (no C99 recovery of infinities), a
 * value with a NaN part counting as 1 in nancumprod. Rows that are
 * scanned in blocks (long rows on the CPU, every row on CUDA) associate
 * the products differently from NumPy's single running product, as for
 * real floats. On CUDA the scans need the CUB plugin (-Dprims=enabled). */
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
