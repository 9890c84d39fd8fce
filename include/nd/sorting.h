/*
 * nd/sorting.h — Sorting, searching and counting.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_SORTING_H
#define ND_SORTING_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sorting follows NumPy 2's order for every dtype: integers and bool by
 * value; floats with -0.0 equal to +0.0 and every NaN (either sign) after
 * +inf, all NaNs equal. `axis` names one axis (negative counts from the
 * end) or is ND_ALL_AXES for the flattened array (NumPy's axis=None, a 1-d
 * result). Sorts are stable and deterministic: the same input gives the
 * same bits on every backend and thread count. Lazy unless stated: each
 * is one or a few library steps of the plan (a radix sort on the CPU's
 * pool; CUB's DeviceRadixSort or DeviceSegmentedSort on CUDA).
 * Errors: ND_ERR_ARG for a NULL array, an axis out of range (naming the
 * valid range) and the other bad arguments named below. */

/* NumPy's sort(a, axis, kind='stable'): a's dtype and shape. Values are
 * a's own bits moved (-0.0 stays -0.0, in its place among the zeros),
 * except that every NaN comes out as the dtype's default NaN, as NumPy's
 * sort returns it. */
ND_API nd_array *nd_sort(nd_array *a, int axis);
/* NumPy's argsort(a, axis, kind='stable'): int64 indices, a's shape (1-d
 * for ND_ALL_AXES); equal elements keep their order. */
ND_API nd_array *nd_argsort(nd_array *a, int axis);

/* NumPy's partition / argpartition: element kth (negative counts from the
 * end of the axis) is where a sort would put it, no larger one (in the
 * order above) before it, no smaller one after it; that is all NumPy
 * promises, and all a program may rely on. nd computes them with a full
 * stable sort, so today the result is nd_sort's / nd_argsort's (a valid
 * partition for every kth at once), at a sort's cost rather than a
 * selection's. The plural forms take NumPy's sequence of kth (nkth >= 0
 * values read at the call; every one of them is placed; nkth 0 promises
 * nothing but a permutation). Lazy. Errors: ND_ERR_ARG for a kth outside
 * -n..n-1 of the axis's length n (unless the array is empty, where NumPy
 * checks nothing), for nkth < 0 or a NULL kth with nkth > 0. */
ND_API nd_array *nd_partition(nd_array *a, int64_t kth, int axis);
ND_API nd_array *nd_argpartition(nd_array *a, int64_t kth, int axis);
ND_API nd_array *nd_partitions(nd_array *a, int64_t nkth, const int64_t *kth, int axis);
ND_API nd_array *nd_argpartitions(nd_array *a, int64_t nkth, const int64_t *kth, int axis);

/* NumPy's lexsort(keys): the int64 indices that sort along the last axis
 * by keys[k - 1] first, then keys[k - 2], ..., keys[0] (the last key is the
 * primary one), stable. The k >= 1 keys are arrays of one shape (at least
 * 1-d), of any dtypes. Errors: ND_ERR_ARG (k < 1, NULL keys), ND_ERR_SHAPE
 * (keys of different shapes, 0-d keys). */
ND_API nd_array *nd_lexsort(int k, nd_array *const *keys);

typedef enum { ND_SIDE_LEFT, ND_SIDE_RIGHT } nd_side;

/* NumPy's searchsorted(a, v, side): for each element of v the index where
 * it would be inserted into the sorted 1-d a to keep it sorted, before
 * equal elements (ND_SIDE_LEFT) or after them (ND_SIDE_RIGHT), in the sort
 * order above (NaN after everything). a and v are compared in their
 * promoted dtype (NEP 50; v may be a weak scalar). int64, v's shape. a must
 * be sorted (as NumPy, not checked). Errors: ND_ERR_SHAPE (a not 1-d),
 * ND_ERR_ARG (side not a nd_side). */
ND_API nd_array *nd_searchsorted(nd_array *a, nd_array *v, nd_side side);

/* NumPy's isin(element, test_elements): a bool array of element's shape,
 * true where the element equals some element of test_elements (any shape),
 * compared in their promoted dtype; NaN is in nothing, -0.0 == +0.0.
 * Lazy: a sort of test_elements and two searches. */
ND_API nd_array *nd_isin(nd_array *element, nd_array *test_elements);

/* NumPy's digitize(x, bins, right): the int64 index of the bin of each
 * element of x, bins a monotonically increasing or decreasing 1-d array
 * (right != 0: bins include their right edge). x's shape.
 * SYNCHRONISES: reads bins to check their monotonicity (NumPy raises when
 * they are neither increasing nor decreasing); x stays lazy. Errors:
 * ND_ERR_SHAPE (bins not 1-d), ND_ERR_ARG (bins not monotonic). */
ND_API nd_array *nd_digitize(nd_array *x, nd_array *bins, int right);

/* NumPy's unique(a) (axis=None, equal_nan=True): the sorted distinct
 * values of the flattened a, a's dtype, with -0.0 and +0.0 one value (the
 * first in sorted order is kept) and all NaNs one value at the end.
 * What ND_UNIQUE_* flags ask for is filled in too (NULL otherwise):
 *   index:   int64, the index in the flattened a of each value's first
 *            occurrence (return_index);
 *   inverse: int64 of a's shape, the index in values of each element of a
 *            (return_inverse; values[inverse] rebuilds a);
 *   counts:  int64, how often each value occurs (return_counts).
 * SYNCHRONISES: the number of distinct values depends on the data, so
 * the call sorts a and reads the sorted values (and their sorting indices
 * for index and inverse) to the host; the results are new arrays of known
 * shape. nd_unique is nd_unique_all(a, 0, ...)'s values. Errors: ND_ERR_ARG
 * (NULL a or out, unknown flags), ND_ERR_OOM. On error every field of
 * *out is NULL. */
enum { ND_UNIQUE_INDEX = 1, ND_UNIQUE_INVERSE = 2, ND_UNIQUE_COUNTS = 4 };
typedef struct {
    nd_array *values, *index, *inverse, *counts;
} nd_unique_result;
ND_API nd_status nd_unique_all(nd_array *a, int flags, nd_unique_result *out);
ND_API nd_array *nd_unique(nd_array *a);


#ifdef __cplusplus
}
#endif

#endif
