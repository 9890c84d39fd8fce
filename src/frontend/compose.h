/* Helpers of functions composed from lazy primitives (matrix creation,
 * grids, view shaping): temporaries released together, views of any input
 * (a weak scalar included), named axis checks and the diagonal view. */
#ifndef ND_FRONTEND_COMPOSE_H
#define ND_FRONTEND_COMPOSE_H

#include <assert.h>

#include "frontend/frontend.h"

/* The intermediate arrays of one composed op: each helper result goes
 * through nd_fe_tmp, and nd_fe_temps_release drops them all at the end, so
 * an early failure leaks nothing. NULL results are not kept. */
#define ND_FE_MAX_TEMPS 24
typedef struct {
    nd_array *a[ND_FE_MAX_TEMPS];
    int n;
} nd_fe_temps;

static inline nd_array *nd_fe_tmp(nd_fe_temps *t, nd_array *a) {
    assert(t->n < ND_FE_MAX_TEMPS);
    if (a) t->a[t->n++] = a;
    return a;
}

static inline void nd_fe_temps_release(nd_fe_temps *t) {
    for (int i = 0; i < t->n; i++) nd_fe_release(t->a[i]);
    t->n = 0;
}

/* A view of a with the given geometry (computed from a's own shape,
 * strides and offset). A weak scalar is made a strong 0-d array first (its
 * geometry is that of any 0-d array), so the view is writable like
 * NumPy's view of a new array. Read-only inputs give read-only views. */
nd_array *nd_fe_restride(const char *fn, nd_array *a, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset);

/* nd_fe_axis with the argument named in the message ("source 3 is out of
 * range for a 2-d array (use -2..1)"). */
int nd_fe_axis_named(const char *fn, const char *what, int axis, int ndim, int *out);

/* NumPy's a.diagonal(offset, axis1, axis2) as a writable view (read-only
 * when a is): axis1 and axis2 removed, the diagonal appended last. */
nd_array *nd_fe_diagonal(const char *fn, nd_array *a, int64_t offset, int axis1, int axis2);

#endif
