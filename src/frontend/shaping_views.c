/* Shaping functions that return views (no node, no copy): flip, squeeze,
 * expand_dims, swapaxes, moveaxis, atleast_Nd, broadcast_arrays and
 * nd_viewf; and trace, a sum over the diagonal view. Writes through a view
 * reach its base; views of read-only arrays (broadcasts) stay read-only. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frontend/compose.h"

nd_array *nd_fe_restride(const char *fn, nd_array *a, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset) {
    if (!a->weak) return nd_fe_view(a, ndim, shape, strides, offset);
    nd_array *s = nd_fe_strong(fn, a);
    if (!s) return NULL;
    nd_array *v = nd_fe_view(s, ndim, shape, strides, offset - a->offset + s->offset);
    nd_fe_release(s);
    return v;
}

int nd_fe_axis_named(const char *fn, const char *what, int axis, int ndim, int *out) {
    int ax = axis < 0 ? axis + ndim : axis;
    if (ax >= 0 && ax < ndim) {
        *out = ax;
        return 0;
    }
    if (ndim == 0)
        nd_error_set(ND_ERR_ARG, "%s: %s %d is out of range for a 0-d array (it has no axes)", fn,
                     what, axis);
    else
        nd_error_set(ND_ERR_ARG, "%s: %s %d is out of range for a %d-d array (use %d..%d)", fn,
                     what, axis, ndim, -ndim, ndim - 1);
    return -1;
}

static int view_arg(const char *fn, nd_array *a) {
    if (nd_fe_arg(fn, "a", a)) return -1;
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- flip */

/* Reverses the axes in mask: a negative stride starting at the last
 * element (an empty axis has none, and stays as it is). */
static nd_array *flip_axes(const char *fn, nd_array *a, uint32_t mask) {
    int64_t strides[ND_MAX_DIMS], off = a->offset;
    for (int d = 0; d < a->ndim; d++) {
        strides[d] = a->strides[d];
        if (!(mask >> d & 1u) || a->shape[d] == 0) continue;
        off += (a->shape[d] - 1) * a->strides[d];
        strides[d] = -a->strides[d];
    }
    return nd_fe_restride(fn, a, a->ndim, a->shape, strides, off);
}

nd_array *nd_flip(nd_array *a, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_flip";
    if (view_arg(fn, a)) return NULL;
    uint32_t mask = (1u << a->ndim) - 1u;
    int ax;
    if (axis != ND_ALL_AXES) {
        if (nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
        mask = 1u << ax;
    }
    return nd_runtime_track(flip_axes(fn, a, mask));
}

/* fliplr (axis 1, needs 2-d) and flipud (axis 0, needs 1-d). */
static nd_array *flip_fixed(const char *fn, nd_array *a, int axis) {
    if (view_arg(fn, a)) return NULL;
    if (a->ndim <= axis) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d; it needs at least %d dimension%s (axis %d is "
                     "flipped; use nd_flip for other axes)", fn, a->ndim, axis + 1,
                     axis ? "s" : "", axis);
        return NULL;
    }
    return flip_axes(fn, a, 1u << axis);
}

nd_array *nd_fliplr(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(flip_fixed("nd_fliplr", a, 1));
}

nd_array *nd_flipud(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(flip_fixed("nd_flipud", a, 0));
}

/* ---------------------------------------------- adding and removing axes */

nd_array *nd_squeeze(nd_array *a, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_squeeze";
    if (view_arg(fn, a)) return NULL;
    int ax = -1;
    if (axis != ND_ALL_AXES) {
        if (nd_fe_axis(fn, axis, a->ndim, &ax)) return NULL;
        if (a->shape[ax] != 1) {
            char s[200];
            nd_error_set(ND_ERR_SHAPE, "%s: axis %d of an array of shape %s has length %lld, not "
                         "1 (only length-1 axes can be squeezed; pass ND_ALL_AXES to squeeze "
                         "every length-1 axis)", fn, axis,
                         nd_format_shape(s, sizeof s, a->ndim, a->shape),
                         (long long)a->shape[ax]);
            return NULL;
        }
    }
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (ax >= 0 ? d == ax : a->shape[d] == 1) continue;
        shape[nd] = a->shape[d];
        strides[nd++] = a->strides[d];
    }
    return nd_runtime_track(nd_fe_restride(fn, a, nd, shape, strides, a->offset));
}

/* a with length-1 axes inserted where `at` is set (at has nd entries). */
static nd_array *insert_axes(const char *fn, nd_array *a, int nd, const int *at) {
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++) {
        shape[d] = at[d] ? 1 : a->shape[j];
        strides[d] = at[d] ? 0 : a->strides[j++];
    }
    return nd_fe_restride(fn, a, nd, shape, strides, a->offset);
}

nd_array *nd_expand_dims(nd_array *a, int axis) {
    ND_API_GUARD();
    static const char fn[] = "nd_expand_dims";
    if (view_arg(fn, a)) return NULL;
    const int nd = a->ndim + 1;
    if (nd > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: a is %d-d already; one more axis would exceed %d "
                     "dimensions (squeeze or reshape it first)", fn, a->ndim, ND_MAX_DIMS);
        return NULL;
    }
    int ax;
    if (nd_fe_axis(fn, axis, nd, &ax)) return NULL;
    int at[ND_MAX_DIMS] = {0};
    at[ax] = 1;
    return nd_runtime_track(insert_axes(fn, a, nd, at));
}

/* NumPy's atleast_1d/2d/3d: 0-d -> (1,), (1,1), (1,1,1); 1-d (n,) ->
 * (1,n) and (1,n,1); 2-d (m,n) -> (m,n,1); larger arrays as they are. */
static nd_array *atleast(const char *fn, nd_array *a, int n) {
    if (view_arg(fn, a)) return NULL;
    if (a->ndim >= n) return nd_fe_restride(fn, a, a->ndim, a->shape, a->strides, a->offset);
    int at[3] = {1, 1, 1};
    if (a->ndim == 1) {
        at[1] = 0; /* (n,) sits at axis 1 of both (1,n) and (1,n,1) */
    } else if (a->ndim == 2) {
        at[0] = at[1] = 0;
    }
    return insert_axes(fn, a, n, at);
}

nd_array *nd_atleast_1d(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(atleast("nd_atleast_1d", a, 1));
}

nd_array *nd_atleast_2d(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(atleast("nd_atleast_2d", a, 2));
}

nd_array *nd_atleast_3d(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(atleast("nd_atleast_3d", a, 3));
}

/* ---------------------------------------------------- permuting axes */

static nd_array *permuted(const char *fn, nd_array *a, const int *perm) {
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        shape[d] = a->shape[perm[d]];
        strides[d] = a->strides[perm[d]];
    }
    return nd_fe_restride(fn, a, a->ndim, shape, strides, a->offset);
}

nd_array *nd_swapaxes(nd_array *a, int axis1, int axis2) {
    ND_API_GUARD();
    static const char fn[] = "nd_swapaxes";
    if (view_arg(fn, a)) return NULL;
    int a1, a2, perm[ND_MAX_DIMS];
    if (nd_fe_axis_named(fn, "axis1", axis1, a->ndim, &a1) ||
        nd_fe_axis_named(fn, "axis2", axis2, a->ndim, &a2))
        return NULL;
    for (int d = 0; d < a->ndim; d++) perm[d] = d == a1 ? a2 : d == a2 ? a1 : d;
    return nd_runtime_track(permuted(fn, a, perm));
}

nd_array *nd_moveaxis(nd_array *a, int source, int destination) {
    ND_API_GUARD();
    static const char fn[] = "nd_moveaxis";
    if (view_arg(fn, a)) return NULL;
    int src, dst, perm[ND_MAX_DIMS];
    if (nd_fe_axis_named(fn, "source", source, a->ndim, &src) ||
        nd_fe_axis_named(fn, "destination", destination, a->ndim, &dst))
        return NULL;
    /* The other axes in order, with src inserted at position dst. */
    for (int d = 0, k = 0; d < a->ndim; d++) {
        if (d == dst) {
            perm[d] = src;
            continue;
        }
        if (k == src) k++;
        perm[d] = k++;
    }
    return nd_runtime_track(permuted(fn, a, perm));
}

/* ---------------------------------------------------- broadcast_arrays */

nd_status nd_broadcast_arrays(int n, nd_array *const *in, nd_array **out) {
    ND_API_GUARD();
    static const char fn[] = "nd_broadcast_arrays";
    if (n < 0) return nd_error_set(ND_ERR_ARG, "%s: n = %d is negative (use n >= 0)", fn, n);
    if (n > 0 && (!in || !out))
        return nd_error_set(ND_ERR_ARG, "%s: %s is NULL (pass %d arrays in `in` and room for %d "
                            "handles in out)", fn, !in ? "in" : "out", n, n);
    for (int k = 0; k < n; k++) out[k] = NULL;
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "in[%d]", k);
        if (nd_fe_arg(fn, name, in[k])) return nd_last_status();
    }
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK || n == 0) return st;
    int nd;
    int64_t shape[ND_MAX_DIMS];
    if (nd_fe_broadcast(fn, n, in, &nd, shape)) return nd_last_status();
    for (int k = 0; k < n; k++) {
        nd_array *a = in[k];
        /* An input that already has the shape comes back as a plain view
         * (writable if it was); the others are read-only broadcast views,
         * as nd_broadcast_to (NumPy 2 warns on writes to them and announces
         * read-only ones). */
        const int same = a->ndim == nd && !memcmp(a->shape, shape, (size_t)nd * sizeof *shape);
        int64_t strides[ND_MAX_DIMS];
        nd_fe_broadcast_strides(a, nd, shape, strides);
        out[k] = nd_fe_restride(fn, a, nd, shape, strides, a->offset);
        if (!out[k]) {
            for (int j = 0; j < k; j++) {
                nd_fe_release(out[j]);
                out[j] = NULL;
            }
            return nd_last_status();
        }
        if (!same) out[k]->readonly = ND_READONLY_BROADCAST;
    }
    for (int k = 0; k < n; k++) out[k] = nd_runtime_track(out[k]);
    return ND_OK;
}

/* ---------------------------------------------------------------- trace */

nd_array *nd_trace(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_trace";
    if (view_arg(fn, a)) return NULL;
    nd_array *d = nd_fe_diagonal(fn, a, 0, 0, 1);
    if (!d) return NULL;
    nd_array *s = nd_fe_reduce(fn, ND_REDUCE_SUM, d, -1, 0);
    nd_fe_release(d);
    return nd_runtime_track(s);
}

/* ---------------------------------------------------------------- viewf */

#define VIEWF_MAX 512

nd_array *nd_viewf(nd_array *a, const char *fmt, ...) {
    ND_API_GUARD();
    static const char fn[] = "nd_viewf";
    if (view_arg(fn, a)) return NULL;
    if (!fmt) {
        nd_error_set(ND_ERR_ARG, "%s: fmt is NULL (pass a printf format such as \"%%d:, :%%lld\" "
                     "followed by its values)", fn);
        return NULL;
    }
    char index[VIEWF_MAX];
    va_list ap;
    va_start(ap, fmt);
    const int len = vsnprintf(index, sizeof index, fmt, ap);
    va_end(ap);
    if (len < 0) {
        nd_error_set(ND_ERR_ARG, "%s: format \"%s\" could not be formatted (check its %% "
                     "conversions against the values passed)", fn, fmt);
        return NULL;
    }
    if (len >= VIEWF_MAX) {
        nd_error_set(ND_ERR_INDEX, "%s: format \"%s\" gives an index of %d characters, more than "
                     "%d (check the format and its values; an index string needs far fewer)",
                     fn, fmt, len, VIEWF_MAX - 1);
        return NULL;
    }
    return nd_runtime_track(nd_fe_view_index(fn, a, index));
}
