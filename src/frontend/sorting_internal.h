/* The sorting routines' frontend pieces (sorting.c), shared with the order
 * statistics (order_stats.c) and the random orderings (random_perm.c).
 * Results are untracked (nd_fe_* convention); errors name fn. */
#ifndef ND_FRONTEND_SORTING_INTERNAL_H
#define ND_FRONTEND_SORTING_INTERNAL_H

#include "frontend/frontend.h"

/* ND_LIB_SORT along the last axis of the view x (at least 1-d): its sorted
 * values (mode ND_SORT_VALUES, x's dtype) or stable sorting indices (int64),
 * x's shape. */
nd_array *nd_fe_sort_last(const char *fn, nd_array *x, nd_lib_sort_mode mode);
/* The same along `axis` of a (negative counts from the end) or of the
 * flattened a (ND_ALL_AXES); the result has a's layout (1-d for
 * ND_ALL_AXES). */
nd_array *nd_fe_sort_along(const char *fn, nd_array *a, int axis, nd_lib_sort_mode mode);
/* out[..., j] = x[..., ix[..., j]] along the last axis (ND_LIB_TAKE_ROWS): x
 * and ix (int64, indices in range) have the same leading shape. */
nd_array *nd_fe_take_last(const char *fn, nd_array *x, nd_array *ix);
/* NumPy's searchsorted of v in the sorted 1-d a (side 0 left, 1 right). */
nd_array *nd_fe_searchsorted(const char *fn, nd_array *a, nd_array *v, int right);
/* Moves axis ax of an ndim-d array last (to_last) and back (back). */
void nd_fe_axis_last_maps(int ndim, int ax, int *to_last, int *back);

#endif
