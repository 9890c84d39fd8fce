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
/* A complex array filled with re + im*1j (np.full(shape, complex(re, im),
 * dtype)); nd_full, nd_zeros and nd_ones of a complex dtype give an
 * imaginary part of 0. Errors: ND_ERR_DTYPE for a real dtype, ND_ERR_SHAPE,
 * ND_ERR_OOM. */
ND_API nd_array *nd_full_complex(nd_dtype dtype, int ndim, const int64_t *shape, double re,
                                 double im);
ND_API nd_array *nd_arange(nd_dtype dtype, double start, double stop, double step);
/* num values from start to stop inclusive, as NumPy 2: computed in float64
 * (start + i * step), the last one exactly stop, then floored (toward
 * -inf) into an integer dtype and cast. Errors: ND_ERR_ARG (num < 0,
 * non-finite start or stop), ND_ERR_DTYPE. */
ND_API nd_array *nd_linspace(nd_dtype dtype, double start, double stop, int64_t num);
/* Copies `data` (row-major, dtype elements) at once; the caller keeps it. */
ND_API nd_array *nd_from_host(const void *data, nd_dtype dtype, int ndim, const int64_t *shape);
/* Copies a's elements row-major into dst (runs pending work first). Errors:
 * ND_ERR_ARG for NULL dst or dst_bytes < size*itemsize; the error (ND_ERR_OOM,
 * ND_ERR_COMPILE, ND_ERR_BACKEND) that kept a's value from being computed,
 * in this read's flush or an earlier one, naming a's shape, dtype, size,
 * the function that computed it and the cause; or the error of copying it
 * to the host (then a keeps its value: read it again). An error of another
 * array in the same flush does not fail this read. A view of at most half
 * of an array of 1 MiB or more that is not on the host (a GPU array, a
 * split array's pieces) copies only the bytes the view spans; a larger
 * read copies the whole array to the host, and later reads of it find that
 * copy until the array is written again. */
ND_API nd_status nd_to_host(nd_array *a, void *dst, size_t dst_bytes);
/* A size-1 array's value as double; NaN and an error otherwise (ND_ERR_SHAPE
 * for another size, or nd_to_host's errors, naming nd_item). */
ND_API double nd_item(nd_array *a);
/* The one element of a (any dtype; a real one gives im = 0) as its two
 * parts, NumPy's complex(a.item()). nd_item of a complex array is
 * ND_ERR_DTYPE. Errors as nd_item's; ND_ERR_ARG for a NULL re or im. */
ND_API nd_status nd_item_complex(nd_array *a, double *re, double *im);
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

/* ---- Matrices, ranges and grids (NumPy 2 semantics; every result lazy) */

/* NumPy's eye(N, M, k, dtype): an (n, m) array with ones on diagonal k (0
 * the main one, > 0 above, < 0 below) and zeros elsewhere; m = -1 means
 * m = n (NumPy's M=None). A k beyond the matrix gives all zeros. Errors:
 * ND_ERR_ARG for n < 0 or m < -1 (naming the value), ND_ERR_DTYPE for an
 * invalid dtype. */
ND_API nd_array *nd_eye(nd_dtype dtype, int64_t n, int64_t m, int64_t k);
/* nd_eye(dtype, n, n, 0). */
ND_API nd_array *nd_identity(nd_dtype dtype, int64_t n);
/* NumPy's tri(N, M, k, dtype): (n, m), one where column <= row + k, else
 * zero; m = -1 means n. Errors as nd_eye. */
ND_API nd_array *nd_tri(nd_dtype dtype, int64_t n, int64_t m, int64_t k);
/* NumPy's tril/triu: a copy of a with the elements above (tril) or below
 * (triu) diagonal k of its last two axes set to zero; same dtype as a. As
 * NumPy, a 1-d a of length n counts as both axes: the result is (n, n),
 * each row a copy of a, masked. Errors: ND_ERR_SHAPE for a 0-d a. */
ND_API nd_array *nd_tril(nd_array *a, int64_t k);
ND_API nd_array *nd_triu(nd_array *a, int64_t k);
/* NumPy's diag(v, k). v 1-d of length n: a new (n+|k|, n+|k|) array of v's
 * dtype, zero but for v on diagonal k. v 2-d: its diagonal k as a 1-d view
 * (nd_diagonal(v, k, 0, 1); empty when k lies beyond the matrix). Errors:
 * ND_ERR_SHAPE for another ndim (use nd_diagonal). */
ND_API nd_array *nd_diag(nd_array *v, int64_t k);
/* NumPy's diagonal(a, offset, axis1, axis2): a view that drops axis1 and
 * axis2 and appends the diagonal (elements [i, i + offset] of those two
 * axes; offset < 0 starts below the main diagonal) as the last axis.
 * Unlike NumPy, whose diagonal view is read-only (its docs announce a
 * writable one), writes through it reach a, so nd_fill(nd_diagonal(m, 0, 0,
 * 1), 1) sets the main diagonal; a read-only a gives a read-only view.
 * Negative axes count from the end. Errors: ND_ERR_SHAPE for a of fewer
 * than 2 dimensions, ND_ERR_ARG for an axis out of range or axis1 and
 * axis2 naming the same axis. */
ND_API nd_array *nd_diagonal(nd_array *a, int64_t offset, int axis1, int axis2);

/* NumPy's empty_like/zeros_like/ones_like/full_like: a new C-contiguous
 * array of a's dtype and shape (a may be any view, broadcast or weak
 * scalar: nd_scalar gives float64, nd_scalar_int int64). For another dtype
 * use nd_full(dtype, nd_ndim(a), nd_shape(a), value). full_like's value
 * follows nd_full: into an integer dtype it must fit once truncated
 * (ND_ERR_DTYPE otherwise, where NumPy would wrap a Python float). */
ND_API nd_array *nd_empty_like(nd_array *a);
ND_API nd_array *nd_zeros_like(nd_array *a);
ND_API nd_array *nd_ones_like(nd_array *a);
ND_API nd_array *nd_full_like(nd_array *a, double value);

/* NumPy's logspace(start, stop, num, base=base, dtype=dtype): base **
 * linspace(start, stop, num) computed in float64 (the last exponent exactly
 * stop), then cast to dtype (truncating into an integer dtype, as NumPy).
 * Errors: ND_ERR_ARG for num < 0 or a non-finite start or stop. */
ND_API nd_array *nd_logspace(nd_dtype dtype, double start, double stop, int64_t num,
                             double base);
/* NumPy's geomspace(start, stop, num, dtype=dtype): num numbers from start
 * to stop, evenly spaced on a log scale, computed in float64 and cast to
 * dtype. The first and last elements are exactly start and stop. Both
 * negative gives negative values; endpoints of opposite signs give NaN
 * between them, as NumPy (which warns). Errors: ND_ERR_ARG for a zero or
 * non-finite start or stop, or num < 0. */
ND_API nd_array *nd_geomspace(nd_dtype dtype, double start, double stop, int64_t num);
/* NumPy's meshgrid(*xi, indexing=indexing): n coordinate arrays (each
 * flattened, of any dtype) give n arrays of the grid's shape in out[0..n-1],
 * out[k] holding xi[k]'s values along its axis. indexing "ij" (matrix):
 * shape (len(xi[0]), len(xi[1]), ...); "xy" (Cartesian, NumPy's default;
 * NULL means "xy"): the first two lengths swapped. Each output is a new
 * writable array in xi[k]'s dtype (NumPy's copy=True; for read-only
 * broadcast views instead, nd_broadcast_arrays the inputs reshaped to
 * (1, n), (m, 1)). n = 0 is ND_OK and writes nothing. On any error every
 * out[k] is NULL. Errors: ND_ERR_ARG for n outside 0..ND_MAX_DIMS, a NULL
 * xi or out, another indexing string, or a bad handle xi[k]. */
ND_API nd_status nd_meshgrid(int n, nd_array *const *xi, const char *indexing, nd_array **out);
/* NumPy's indices(shape, dtype): an array of shape (ndim, *shape) whose
 * [d] slice holds each element's index along axis d (NumPy's default dtype
 * is int64; narrower dtypes wrap, as NumPy). ndim = 0 gives shape (0,).
 * Usage: nd_indices(ND_INT64, ND_SHAPE(2, 3)). Errors: ND_ERR_ARG for ndim
 * outside 0..ND_MAX_DIMS-1 or a negative dimension. */
ND_API nd_array *nd_indices(nd_dtype dtype, int ndim, const int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif /* ND_CREATION_H */
