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

/* ---- views: each returns a view of a (no copy, no node); writes through
 * it reach a, and a view of a read-only array (a broadcast) is read-only.
 * A weak scalar (nd_scalar) input is first made a 0-d array of its own.
 * Negative axes count from the end; an axis out of range is ND_ERR_ARG
 * naming the function, the axis and the valid range. */

/* NumPy's flip(a, axis): reverses axis (a negative stride); ND_ALL_AXES
 * reverses every axis (NumPy's axis=None). */
ND_API nd_array *nd_flip(nd_array *a, int axis);
/* flip along axis 1 (ND_ERR_SHAPE for a of fewer than 2 dimensions) and
 * along axis 0 (ND_ERR_SHAPE for a 0-d a). */
ND_API nd_array *nd_fliplr(nd_array *a);
ND_API nd_array *nd_flipud(nd_array *a);
/* NumPy's squeeze: removes axis, which must have length 1 (ND_ERR_SHAPE
 * otherwise, as NumPy); ND_ALL_AXES removes every length-1 axis. */
ND_API nd_array *nd_squeeze(nd_array *a, int axis);
/* NumPy's expand_dims: a length-1 axis at position axis of the result
 * (-1 appends; valid axes -(ndim+1)..ndim). ND_ERR_SHAPE when the result
 * would have more than ND_MAX_DIMS dimensions. */
ND_API nd_array *nd_expand_dims(nd_array *a, int axis);
/* NumPy's swapaxes: axis1 and axis2 exchanged (the same axis twice is a
 * plain view). */
ND_API nd_array *nd_swapaxes(nd_array *a, int axis1, int axis2);
/* NumPy's moveaxis: axis source moved to position destination, the others
 * keeping their order. */
ND_API nd_array *nd_moveaxis(nd_array *a, int source, int destination);
/* NumPy's atleast_1d/2d/3d of one array: 0-d -> (1,), (1,1), (1,1,1);
 * 1-d (n,) -> (1,n) for 2d and (1,n,1) for 3d; 2-d (m,n) -> (m,n,1) for 3d;
 * an array with enough dimensions comes back as a view of itself. */
ND_API nd_array *nd_atleast_1d(nd_array *a);
ND_API nd_array *nd_atleast_2d(nd_array *a);
ND_API nd_array *nd_atleast_3d(nd_array *a);
/* NumPy's broadcast_arrays: out[k] is in[k] seen with the broadcast shape
 * of all n inputs. An input that already has that shape comes back as a
 * plain view; the others are read-only broadcast views, as nd_broadcast_to
 * (NumPy 2 still lets one write to them, with a warning that they will
 * become read-only). n = 0 is ND_OK. On any error every out[k] is NULL.
 * Errors: ND_ERR_ARG for n < 0, a NULL in or out, a bad handle in[k];
 * ND_ERR_SHAPE when the shapes do not broadcast. */
ND_API nd_status nd_broadcast_arrays(int n, nd_array *const *in, nd_array **out);
/* NumPy's trace(a) (offset 0, axes 0 and 1): the sum of the main diagonal,
 * lazy; for more than 2 dimensions an array of shape a.shape[2:]. Result
 * dtype as nd_sum: bool and signed ints give int64, unsigned uint64, floats
 * their own dtype. For another offset or other axes: nd_sum(nd_diagonal(a,
 * offset, axis1, axis2), -1). Errors: ND_ERR_SHAPE for fewer than 2
 * dimensions. */
ND_API nd_array *nd_trace(nd_array *a);

#if defined(__GNUC__)
#define ND_PRINTF_FORMAT(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define ND_PRINTF_FORMAT(fmt_index, first_arg)
#endif
/* nd_view with an index built printf-style: nd_viewf(a, "%d:, :%lld", i,
 * (long long)n) is nd_view(a, "3:, :10") for i = 3, n = 10, without a
 * buffer in the caller. The compiler checks the arguments against the
 * format (GCC, Clang). Errors: nd_view's (naming nd_viewf and the formatted
 * index), ND_ERR_ARG for a NULL fmt or a format that fails, ND_ERR_INDEX
 * for a formatted index of 512 characters or more. */
ND_API nd_array *nd_viewf(nd_array *a, const char *fmt, ...) ND_PRINTF_FORMAT(2, 3);
/* ---- new arrays: shaping functions that copy (NumPy 2 semantics; every
 * result is a new, writable, lazy array unless it says "view"). Errors
 * name the function: ND_ERR_ARG for NULL or freed inputs, out-of-range
 * axes and bad counts; ND_ERR_SHAPE for shapes that do not fit. */

/* np.roll: elements shifted by `shift` along axis (negative shifts go left,
 * any int64 value, taken modulo the axis length); ND_ALL_AXES rolls the
 * flattened array and keeps the shape (NumPy's axis=None). Same dtype. */
ND_API nd_array *nd_roll(nd_array *a, int64_t shift, int axis);
/* np.rot90(a, k): a rotated k quarter turns (any int; k > 0 turns from
 * axis 1 toward axis 0) in the plane of axes 0 and 1. A view, as NumPy's.
 * Errors: ND_ERR_ARG for an array of fewer than 2 dimensions. */
ND_API nd_array *nd_rot90(nd_array *a, int k);
/* np.tile(a, reps): n repetition counts (>= 0); a's shape and reps are
 * padded with leading 1s to the same length, and the result has
 * max(n, ndim) dims, axis i of length shape[i] * reps[i]. n = 0 copies a. */
ND_API nd_array *nd_tile(nd_array *a, int n, const int64_t *reps);
/* np.repeat(a, repeats, axis) with one count (>= 0): every element repeated
 * in place along axis; ND_ALL_AXES repeats the flattened array (1-d). */
ND_API nd_array *nd_repeat(nd_array *a, int64_t repeats, int axis);

/* np.pad's modes. Beyond the axis, reflect, symmetric and wrap continue
 * periodically, as NumPy's repeated application does. */
typedef enum {
    ND_PAD_CONSTANT,  /* `constant`, cast to a's dtype as NumPy (unsafe cast) */
    ND_PAD_EDGE,      /* the edge value repeated */
    ND_PAD_REFLECT,   /* mirrored, edge not repeated: 3 2 | 1 2 3 4 | 3 2 */
    ND_PAD_SYMMETRIC, /* mirrored, edge repeated:     2 1 | 1 2 3 4 | 4 3 */
    ND_PAD_WRAP       /* the other end:                3 4 | 1 2 3 4 | 1 2 */
} nd_pad_mode;
/* np.pad(a, widths, mode, constant_values=constant): widths holds n
 * (before, after) pairs, n = ndim (one per axis) or 1 (the same for every
 * axis; a 0-d array takes n = 0 or 1 and is copied). Same dtype. Errors:
 * ND_ERR_ARG for negative widths, a bad n or mode; ND_ERR_SHAPE for a
 * length-0 axis padded in a mode other than constant (NumPy: "can't extend
 * empty axis"). */
ND_API nd_array *nd_pad(nd_array *a, int n, const int64_t (*widths)[2], nd_pad_mode mode,
                        double constant);

/* np.split(a, sections, axis): `sections` equal parts, views of a, written
 * to out[0 .. sections-1] (each a new handle to free). Errors: ND_ERR_ARG
 * for sections <= 0, a NULL out or a bad axis; ND_ERR_SHAPE when the axis
 * length is not a multiple of sections. On error every out[i] is NULL. */
ND_API nd_status nd_split(nd_array *a, int sections, int axis, nd_array **out);
/* np.array_split: as nd_split, but the length need not divide: the first
 * len % sections parts are one longer. */
ND_API nd_status nd_array_split(nd_array *a, int sections, int axis, nd_array **out);
/* np.split(a, indices, axis): n indices give n + 1 views a[:i0], a[i0:i1],
 * ..., a[i(n-1):] along axis (Python slice rules: negative indices count
 * from the end, out-of-range ones clip, a decreasing pair gives an empty
 * part), written to out[0 .. n]. */
ND_API nd_status nd_split_at(nd_array *a, int n, const int64_t *indices, int axis,
                             nd_array **out);

/* Joins of n arrays (dtypes promote as nd_concatenate; a weak scalar is a
 * 0-d array of its Python type's dtype). np.hstack: 1-d (and 0-d) inputs
 * join end to end, others along axis 1. */
ND_API nd_array *nd_hstack(int n, nd_array *const *arrays);
/* np.vstack: inputs as at least 2-d ((k,) becomes (1, k)), joined on axis 0. */
ND_API nd_array *nd_vstack(int n, nd_array *const *arrays);
/* np.dstack: inputs as at least 3-d ((k,) becomes (1, k, 1), (m, k) becomes
 * (m, k, 1)), joined on axis 2. */
ND_API nd_array *nd_dstack(int n, nd_array *const *arrays);
/* np.column_stack: 0-d and 1-d inputs become columns ((k,) -> (k, 1)),
 * others stay; joined on axis 1. */
ND_API nd_array *nd_column_stack(int n, nd_array *const *arrays);

/* np.diff(a, n, axis): the n-th difference along axis (a[1:] - a[:-1],
 * n times; the axis shrinks by n, to 0 at most). Result dtype as nd_sub;
 * bool uses != (NumPy's xor). n = 0 returns a view of a. Errors: ND_ERR_ARG
 * for n < 0, a 0-d array or a bad axis. */
ND_API nd_array *nd_diff(nd_array *a, int n, int axis);
/* np.ediff1d(a, to_end, to_begin): the differences of a flattened, with the
 * flattened to_begin in front and to_end behind (either may be NULL), in
 * a's dtype. Errors: ND_ERR_DTYPE for bool a (NumPy has no bool subtract)
 * and for to_begin/to_end that do not cast to a's dtype under NumPy's
 * same_kind rule (float into int, signed into unsigned, ... ). */
ND_API nd_array *nd_ediff1d(nd_array *a, nd_array *to_end, nd_array *to_begin);

#ifdef __cplusplus
}
#endif
#endif /* ND_SHAPING_H */
