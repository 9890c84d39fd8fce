/*
 * nd/indexing.h — Indexing with integer arrays and boolean masks: gather, scatter, select.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_INDEXING_H
#define ND_INDEXING_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Integer-array indexing follows NumPy 2. Index arrays may have any
 * integer dtype (other dtypes: ND_ERR_DTYPE; a bool array is a mask, see
 * below); a negative index counts from the end of its axis once; an index
 * still outside its axis is NumPy's IndexError: the step that uses it
 * fails with ND_ERR_INDEX and "nd_take: index 7 is out of bounds for axis
 * 0 with size 5" (the first such index in C order), reported by nd_sync
 * and by every read of the result and of what is computed from it (a
 * scatter's target included) on both backends; values not computed from it
 * keep theirs. The CPU backend checks while it gathers; the CUDA backend
 * checks on the device (never reading or writing outside the array). A
 * gather with any number of index arrays (nd_take, nd_take_along_axis,
 * nd_choose, nd_index with "$k" or ints beside them on up to every axis) fuses
 * like an elementwise op: nd_take(a, i) * 2 + 1 or nd_index(a, "$0, $1",
 * ..) * 2 is one kernel that never writes the gathered values (a's own
 * value is written first when it is computed in the same flush), which
 * may share its pass with unrelated work of the flush; a bad index is
 * filed on the device and read back once after the flush's plan, which
 * runs whole (and as a CUDA graph) like any other; the flush then fails
 * what was computed from the bad index only. The scatters (and gathers
 * under ND_FUSED_GATHER=0) are one library step each, which files a bad index on the
 * device in the same way: the flush runs whole (a CUDA graph from its
 * second run), and a bad index fails that step's output (a scatter's
 * target, which it leaves unwritten, as NumPy raises before it writes) and
 * what is computed from it, every other value of the flush keeping its
 * own. None of these calls synchronises: a flush that gathers or scatters
 * on CUDA waits for the device once, at its end (the read back of the
 * fail records), not at the call. Shapes and
 * dtypes are checked when the call is made (ND_ERR_ARG for NULL,
 * ND_ERR_SHAPE for shapes that do not broadcast, with both shapes).
 * Gathers return a new array of a's dtype and are lazy. Inputs may be
 * views, broadcasts or 0-d. */

/* a.take(indices, axis): the result has shape a.shape[:axis] +
 * indices.shape + a.shape[axis+1:]; ND_ALL_AXES takes from a flattened
 * (NumPy's axis=None), shape indices.shape. */
ND_API nd_array *nd_take(nd_array *a, nd_array *indices, int axis);
/* np.take_along_axis(a, indices, axis): indices has a's number of axes
 * and broadcasts against a on every axis but `axis`; result[..., i, ...] =
 * a[..., indices[..., i, ...], ...]. ND_ALL_AXES: a flattened, 1-d indices. */
ND_API nd_array *nd_take_along_axis(nd_array *a, nd_array *indices, int axis);
/* np.choose(a, choices) (mode "raise"): a (integers) and the n choices
 * broadcast together; result[p] = choices[a[p]][p], in the choices'
 * promoted dtype. An entry outside 0..n-1 (negative ones too) fails the
 * step with ND_ERR_INDEX. At most 32 choices. */
ND_API nd_array *nd_choose(nd_array *a, int n, nd_array *const *choices);

/* NumPy's advanced indexing a[...] with index arrays: `index` is nd_view's
 * index string in which "$k" stands for arrays[k], e.g. "$0, :, $1" for
 * a[i, :, j] or "..., $0" for a[..., idx]. The index arrays (and the
 * integers of the string, which then count as 0-d index arrays, as in
 * NumPy) broadcast together; their broadcast shape replaces the indexed
 * axes where those are adjacent in the string, and goes first otherwise
 * (a[i, :, j] with i, j of shape (2,) on a (3,4,5) array: (2,4)). Slices,
 * None and "..." act as in nd_view. A 1-d bool array stands for its
 * nonzero positions (this synchronises); other bool arrays are refused
 * (use nd_mask_select). Without "$k" the result is nd_view's view;
 * otherwise a new array (lazy). Errors: ND_ERR_INDEX for "$k" naming no
 * array or a bad index string, as nd_view; ND_ERR_SHAPE when more than
 * ND_MAX_DIMS axes would be needed. */
ND_API nd_array *nd_index(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays);

/* Scatters write in place: a new version of a's buffer, seen by every
 * later op (a may be a view; a read-only array is ND_ERR_ARG). values are
 * cast to a's dtype and broadcast to the indexed shape (ND_ERR_SHAPE
 * otherwise). Where several indices name one element, the updates apply
 * in C order of the index arrays on every backend: the last write wins,
 * and nd_add_at accumulates in that order (the same bits on every run).
 * Lazy, like nd_assign. */

/* a[index] = values with nd_index's index strings (without "$k": nd_assign
 * into the view). Lazy, but a 1-d bool array in the index synchronises (its
 * nonzero positions are read, as in nd_index). */
ND_API nd_status nd_index_assign(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays,
                                 nd_array *values);
/* np.put(a, indices, values): a.flat[indices] = values for a C-contiguous
 * a (other layouts: ND_ERR_ARG); values are flattened and repeated or cut
 * to the number of indices (NumPy's rule; empty values with indices:
 * ND_ERR_ARG). */
ND_API nd_status nd_put(nd_array *a, nd_array *indices, nd_array *values);
/* np.put_along_axis(a, indices, values, axis): indices as in
 * nd_take_along_axis, values broadcast to its result's shape. */
ND_API nd_status nd_put_along_axis(nd_array *a, nd_array *indices, nd_array *values, int axis);
/* np.add.at(a, indices, values): a[indices[i], ...] += values[i, ...] for
 * each i in order; repeated indices accumulate (unbuffered). indices index
 * a's first axis; values broadcast to indices.shape + a.shape[1:] (other
 * axes and several index arrays: nd_add_at_index). Every dtype: integers
 * wrap, bool adds as "or", float16 and bfloat16 round after each add. The
 * values are cast to a's dtype and added in it (NumPy adds in the promoted
 * dtype of a and values and casts each sum back, which can round
 * differently when values are wider than a). For float sums the order is
 * the indices' order on every backend (on CUDA: a stable sort by target,
 * then each target's run summed in that order). */
ND_API nd_status nd_add_at(nd_array *a, nd_array *indices, nd_array *values);
/* np.add.at(a, index, values) with NumPy's full index: nd_index's index
 * strings, "$k" naming arrays[k], e.g. ":, $0" for np.add.at(a, (slice(None),
 * idx), v) (any axis), "$0, :, $1" for (i, slice(None), j), "..., $0" for
 * the last axis, "$0, 1:3" or "2, $0" mixing basic and array indices (the
 * result axes placed as nd_index places them). values broadcast to the
 * shape nd_index would return. Repeated elements accumulate in C order of
 * the broadcast index arrays, as nd_add_at (the same bits on every run and
 * backend); dtypes as nd_add_at. Without "$k" the index is basic (no
 * element twice): a[index] += values, lazy and fused like nd_assign. A 1-d
 * bool array stands for its nonzero positions (this synchronises, as in
 * nd_index). Errors as nd_index_assign, named "nd_add_at_index". */
ND_API nd_status nd_add_at_index(nd_array *a, const char *index, int n_arrays, nd_array *const *arrays,
                                 nd_array *values);

/* Boolean masks. The functions whose result length is a count of nonzero
 * elements synchronise: they run what they need at the call (the pending
 * work that computes their input, then one selection pass that writes the
 * selected elements and their count) and return an array of that length
 * (ND_ERR_* of a failed step is returned at the call, as a read would).
 * A result that keeps less than half of its input is a compact copy made
 * lazily; otherwise a view of the selection buffer. */

/* a[mask] for a bool mask of a's leading axes' shape (mask.shape ==
 * a.shape[:mask.ndim]): shape (count,) + a.shape[mask.ndim:], elements in
 * C order. A 0-d mask gives a[None] or an empty one. Synchronises. Errors:
 * ND_ERR_DTYPE for a non-bool mask, ND_ERR_INDEX for a mask whose shape
 * does not match (naming the axis and both sizes). */
ND_API nd_array *nd_mask_select(nd_array *a, nd_array *mask);
/* a[mask] = values: lazy, it is nd_where(mask, values, a) stored into a, so
 * it fuses with what computes mask and values. values broadcast to the
 * shape of one selected element, a.shape[mask.ndim:] (a scalar for a mask
 * of a's shape); NumPy's one value per selected element is nd_put at
 * nd_flatnonzero(mask). */
ND_API nd_status nd_mask_assign(nd_array *a, nd_array *mask, nd_array *values);
/* np.nonzero(a): out[0 .. nd_ndim(a)) receive one int64 array per axis,
 * the indices of the nonzero elements (NaN is nonzero) in C order. NumPy's
 * where(condition) with one argument is this function. A 0-d a is ND_ERR_ARG
 * (as NumPy 2). Synchronises. */
ND_API nd_status nd_nonzero(nd_array *a, nd_array **out);
/* np.flatnonzero(a): int64 positions of the nonzero elements of a
 * flattened. Synchronises. */
ND_API nd_array *nd_flatnonzero(nd_array *a);
/* np.argwhere(a): int64 of shape (count, a.ndim), one row per nonzero
 * element ((1, 0) or (0, 0) for 0-d a). Synchronises. */
ND_API nd_array *nd_argwhere(nd_array *a);
/* np.extract(condition, a): a flattened at the positions where condition
 * flattened is nonzero; a nonzero condition element beyond a's size is
 * ND_ERR_INDEX at the read. Synchronises. */
ND_API nd_array *nd_extract(nd_array *condition, nd_array *a);
/* np.compress(condition, a, axis): the slices of a along axis where the
 * 1-d condition is nonzero (ND_ALL_AXES: a flattened). A condition longer
 * than the axis may only be zero beyond it (else ND_ERR_INDEX at the
 * read). Synchronises. nd_count_nonzero counts without selecting. */
ND_API nd_array *nd_compress(nd_array *condition, nd_array *a, int axis);

#ifdef __cplusplus
}
#endif

#endif
