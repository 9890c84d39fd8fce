/*
 * nd/shaping.h — Views, reshapes and joins.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_SHAPING_H
#define ND_SHAPING_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A view by a NumPy index string: comma-separated items, each a slice
 * "start:stop:step" (any part may be omitted; negative values count from the
 * end), an integer (drops the axis), "..." (at most once) or "None" (new axis
 * of length 1). Example: nd_view(a, "1:-1, ::2, ..., None"). Errors:
 * ND_ERR_INDEX for malformed strings, a zero step, too many indices or an
 * integer out of range. */
ND_API nd_array *nd_view(nd_array *a, const char *index);
/* Reshape to `shape` (one entry may be -1). As NumPy: a view when the
 * strides allow it (writes through either are visible in both; a reshape of
 * a broadcast that keeps its layout stays a read-only view), otherwise a
 * copy (lazy, fused into its consumers like nd_copy). */
ND_API nd_array *nd_reshape(nd_array *a, int ndim, const int64_t *shape);
/* Permute axes; perm NULL reverses them. Always a view. */
ND_API nd_array *nd_transpose(nd_array *a, const int *perm);
/* A read-only broadcast view. */
ND_API nd_array *nd_broadcast_to(nd_array *a, int ndim, const int64_t *shape);
/* Join along an existing axis; dtypes promote. */
ND_API nd_array *nd_concatenate(int n, nd_array *const *arrays, int axis);
/* Join along a new axis; every input must have the same shape. */
ND_API nd_array *nd_stack(int n, nd_array *const *arrays, int axis);
/* a as 1-d. As NumPy: a view when a is C-contiguous, otherwise a copy (a
 * strided view such as x[::2], a transpose or a broadcast gives a new,
 * writable array that later writes to a do not change). */
ND_API nd_array *nd_ravel(nd_array *a);

#ifdef __cplusplus
}
#endif
#endif /* ND_SHAPING_H */
