/* Splits (views of the input, as NumPy's) and the stack family of joins
 * (views with added length-1 axes, then one nd_fe_concatenate). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/shaping_internal.h"

/* ---- splits */

/* Shared checks; on success *x is a and *ax the normalised axis. */
static int split_args(const char *fn, nd_array *a, int axis, nd_array **out, int nout, int *ax) {
    if (!out) {
        nd_error_set(ND_ERR_ARG, "%s: out is NULL (pass an array of %d nd_array pointers)", fn,
                     nout);
        return -1;
    }
    for (int i = 0; i < nout; i++) out[i] = NULL;
    if (nd_fe_arg(fn, "a", a)) return -1;
    if (nd_runtime_ensure() != ND_OK) return -1;
    return nd_fe_axis(fn, axis, a->ndim, ax);
}

/* out[i] = a[bounds[i] : bounds[i+1]] along ax, for i < nout. */
static nd_status split_views(nd_array *a, int ax, int nout,
                             const int64_t *bounds, nd_array **out) {
    for (int i = 0; i < nout; i++) {
        out[i] = nd_runtime_track(nd_fe_axis_slice(a, ax, bounds[i], bounds[i + 1] - bounds[i], 1));
        if (!out[i]) {
            for (int j = 0; j < i; j++) {
                nd_free(out[j]);
                out[j] = NULL;
            }
            return nd_last_status();
        }
    }
    return ND_OK;
}

static nd_status split_sections(const char *fn, nd_array *a, int sections, int axis,
                                nd_array **out, int equal) {
    if (sections <= 0) {
        return nd_error_set(ND_ERR_ARG, "%s: sections = %d (use a number of parts >= 1)", fn,
                            sections);
    }
    int ax;
    if (split_args(fn, a, axis, out, sections, &ax)) return nd_last_status();
    int64_t n = a->shape[ax], each = n / sections, extra = n % sections;
    if (equal && extra) {
        char s[200];
        return nd_error_set(ND_ERR_SHAPE, "%s: axis %d of an array of shape %s has length %lld, "
                            "which %d sections do not divide equally (use nd_array_split for "
                            "unequal parts)", fn, ax,
                            nd_format_shape(s, sizeof s, a->ndim, a->shape), (long long)n,
                            sections);
    }
    int64_t *bounds = nd_malloc(((size_t)sections + 1) * sizeof *bounds);
    if (!bounds) return nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
    bounds[0] = 0;
    for (int i = 0; i < sections; i++) bounds[i + 1] = bounds[i] + each + (i < extra);
    nd_status st = split_views(a, ax, sections, bounds, out);
    free(bounds);
    return st;
}

nd_status nd_split(nd_array *a, int sections, int axis, nd_array **out) {
    ND_API_GUARD();
    return split_sections("nd_split", a, sections, axis, out, 1);
}

nd_status nd_array_split(nd_array *a, int sections, int axis, nd_array **out) {
    ND_API_GUARD();
    return split_sections("nd_array_split", a, sections, axis, out, 0);
}

nd_status nd_split_at(nd_array *a, int n, const int64_t *indices, int axis, nd_array **out) {
    ND_API_GUARD();
    static const char fn[] = "nd_split_at";
    if (n < 0 || (n > 0 && !indices)) {
        if (out && n >= 0)
            for (int i = 0; i <= n; i++) out[i] = NULL;
        return nd_error_set(ND_ERR_ARG, "%s: n = %d with indices %s (pass n >= 0 split points)",
                            fn, n, indices ? "given" : "NULL");
    }
    int ax;
    if (split_args(fn, a, axis, out, n + 1, &ax)) return nd_last_status();
    int64_t len = a->shape[ax];
    /* Python slices a[prev:idx]: an index counts from the end when
     * negative and clips to the axis; a part never runs backwards. */
    nd_status st = ND_OK;
    int64_t prev = 0;
    for (int i = 0; i <= n && st == ND_OK; i++) {
        int64_t idx = i < n ? indices[i] : len;
        if (idx < 0) idx = idx < -len ? 0 : idx + len;
        if (idx > len) idx = len;
        int64_t start = prev, stop = idx < prev ? prev : idx;
        out[i] = nd_runtime_track(nd_fe_axis_slice(a, ax, start, stop - start, 1));
        if (!out[i]) st = nd_last_status();
        prev = idx;
    }
    if (st != ND_OK)
        for (int i = 0; i <= n; i++) {
            nd_free(out[i]);
            out[i] = NULL;
        }
    return st;
}

/* ---- stack family */

typedef enum { AT_1D, AT_2D, AT_3D, AS_COLUMN } stack_kind;

/* x viewed as NumPy's atleast_1d/2d/3d, or as a column for column_stack. */
static nd_array *stack_view(nd_array *x, stack_kind k) {
    int map[ND_MAX_DIMS], nd = x->ndim, on = nd;
    for (int i = 0; i < nd; i++) map[i] = i;
    if (k == AT_1D && nd == 0) {
        on = 1;
        map[0] = -1;
    } else if ((k == AT_2D || k == AS_COLUMN) && nd < 2) {
        on = 2;
        map[0] = map[1] = -1;
        if (nd == 1) map[k == AT_2D ? 1 : 0] = 0; /* (n) -> (1, n) or (n, 1) */
    } else if (k == AT_3D && nd < 3) {
        on = 3;
        map[0] = map[1] = map[2] = -1;
        if (nd == 1) map[1] = 0;                  /* (n) -> (1, n, 1) */
        if (nd == 2) map[0] = 0, map[1] = 1;      /* (m, n) -> (m, n, 1) */
    }
    return nd_fe_with_axes(x, on, map);
}

static nd_array *stack_join(const char *fn, int n, nd_array *const *arrays, stack_kind k) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (n <= 0 || !arrays) {
        nd_error_set(ND_ERR_ARG, "%s: needs at least one array (got n = %d%s)", fn, n,
                     arrays ? "" : " and a NULL list");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "arrays[%d]", i);
        if (nd_fe_arg(fn, name, arrays[i])) return NULL;
    }
    nd_array **views = nd_calloc((size_t)n, sizeof *views), *out = NULL;
    if (!views) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory", fn);
        return NULL;
    }
    int made = 0;
    for (; made < n; made++) {
        nd_array *s = nd_fe_strong(fn, arrays[made]);
        views[made] = s ? stack_view(s, k) : NULL;
        nd_fe_release(s);
        if (!views[made]) goto done;
    }
    /* hstack joins 1-d inputs end to end, others on axis 1 (NumPy looks at
     * the first input only). */
    int axis = k == AT_1D ? (views[0]->ndim == 1 ? 0 : 1) : k == AT_3D ? 2 : k == AT_2D ? 0 : 1;
    out = nd_fe_concatenate(fn, n, views, axis);
done:
    for (int i = 0; i < made; i++) nd_fe_release(views[i]);
    free(views);
    return nd_runtime_track(out);
}

nd_array *nd_hstack(int n, nd_array *const *arrays) {
    ND_API_GUARD();
    return stack_join("nd_hstack", n, arrays, AT_1D);
}

nd_array *nd_vstack(int n, nd_array *const *arrays) {
    ND_API_GUARD();
    return stack_join("nd_vstack", n, arrays, AT_2D);
}

nd_array *nd_dstack(int n, nd_array *const *arrays) {
    ND_API_GUARD();
    return stack_join("nd_dstack", n, arrays, AT_3D);
}

nd_array *nd_column_stack(int n, nd_array *const *arrays) {
    ND_API_GUARD();
    return stack_join("nd_column_stack", n, arrays, AS_COLUMN);
}
