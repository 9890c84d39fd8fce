/* Small view helpers shared by the shaping functions that make new arrays
 * (shaping_copies.c, shaping_joins.c, products.c). Results are untracked
 * (nd_fe_* convention); the caller releases them. */
#ifndef ND_FRONTEND_SHAPING_INTERNAL_H
#define ND_FRONTEND_SHAPING_INTERNAL_H

#include "frontend/frontend.h"

/* x[..., start : start + len * step : step, ...] on axis ax: a view whose
 * axis ax has length len and stride step * x's stride (step 0 repeats the
 * element at start, step -1 walks backwards). The caller keeps the indices
 * inside x. */
static inline nd_array *nd_fe_axis_slice(nd_array *x, int ax, int64_t start, int64_t len,
                                         int64_t step) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    memcpy(sh, x->shape, sizeof sh);
    memcpy(st, x->strides, sizeof st);
    sh[ax] = len;
    st[ax] = x->strides[ax] * step;
    return nd_fe_view(x, x->ndim, sh, st, x->offset + start * x->strides[ax]);
}

/* A view of x with new length-1 axes: output axis k is x's axis map[k], or
 * a new axis where map[k] < 0. */
static inline nd_array *nd_fe_with_axes(nd_array *x, int ndim, const int *map) {
    int64_t sh[ND_MAX_DIMS], st[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++) {
        sh[k] = map[k] < 0 ? 1 : x->shape[map[k]];
        st[k] = map[k] < 0 ? 0 : x->strides[map[k]];
    }
    return nd_fe_view(x, ndim, sh, st, x->offset);
}

/* x flattened in C order: a view when x is contiguous, else a lazy copy. */
static inline nd_array *nd_fe_flat(const char *fn, nd_array *x) {
    int64_t m1 = -1;
    return nd_fe_reshape(fn, x, 1, &m1);
}

#endif
