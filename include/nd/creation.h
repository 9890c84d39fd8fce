/*
 * nd/creation.h — Making arrays: filled, ranges, from host memory, scalars, casts, copies.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_CREATION_H
#define ND_CREATION_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

ND_API nd_array *nd_empty(nd_dtype dtype, int ndim, const int64_t *shape);
ND_API nd_array *nd_zeros(nd_dtype dtype, int ndim, const int64_t *shape);
ND_API nd_array *nd_ones(nd_dtype dtype, int ndim, const int64_t *shape);
/* value into an integer dtype must be finite and fit once truncated toward
 * zero (as NumPy's np.full with a Python int, a.fill and a[...] = v; np.full
 * with a Python float would wrap instead, but a C double often means an
 * int): nd_full(ND_UINT8, ..., 300) or (..., -1) is ND_ERR_DTYPE, never 44
 * or 255. Bool and float dtypes take any value. */
ND_API nd_array *nd_full(nd_dtype dtype, int ndim, const int64_t *shape, double value);
ND_API nd_array *nd_arange(nd_dtype dtype, double start, double stop, double step);
ND_API nd_array *nd_linspace(nd_dtype dtype, double start, double stop, int64_t num);
/* Copies `data` (row-major, dtype elements) at once; the caller keeps it. */
ND_API nd_array *nd_from_host(const void *data, nd_dtype dtype, int ndim, const int64_t *shape);
/* Copies a's elements row-major into dst (runs pending work first). Errors:
 * ND_ERR_ARG for NULL dst or dst_bytes < size*itemsize; the error (ND_ERR_OOM,
 * ND_ERR_COMPILE, ND_ERR_BACKEND) that kept a's value from being computed,
 * in this read's flush or an earlier one, naming a's shape, dtype, size,
 * the function that computed it and the cause; or the error of copying it
 * to the host (then a keeps its value: read it again). An error of another
 * array in the same flush does not fail this read. */
ND_API nd_status nd_to_host(nd_array *a, void *dst, size_t dst_bytes);
/* A size-1 array's value as double; NaN and an error otherwise (ND_ERR_SHAPE
 * for another size, or nd_to_host's errors, naming nd_item). */
ND_API double nd_item(nd_array *a);
/* Weakly typed 0-d arrays (NEP 50): nd_scalar behaves like a Python float
 * (float32 arrays stay float32, integer arrays become float64); nd_scalar_int
 * like a Python int (int8 arrays stay int8; a value that does not fit the
 * array's dtype is an ND_ERR_DTYPE error). A weak scalar and every view of
 * it are read-only: nd_assign/nd_fill into one is ND_ERR_ARG (make a
 * writable 0-d array with nd_full, or nd_copy the scalar). */
ND_API nd_array *nd_scalar(double v);
ND_API nd_array *nd_scalar_int(int64_t v);
ND_API nd_array *nd_astype(nd_array *a, nd_dtype dtype);
ND_API nd_array *nd_copy(nd_array *a);

#ifdef __cplusplus
}
#endif
#endif /* ND_CREATION_H */
