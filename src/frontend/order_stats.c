/* Order statistics (include/nd/statistics.h): median, quantiles and
 * percentiles with NumPy's linear method, as a sort of the rows (the axis
 * moved last, converted to the float dtype computed in) and one
 * ND_LIB_QUANTILE step that reads the sorted rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "frontend/shaping_internal.h"
#include "frontend/sorting_internal.h"

/* The dtype the routine computes in (float32 or float64) and the result's. */
static nd_dtype compute_dtype(nd_dtype t) {
    return t == ND_FLOAT32 || t == ND_FLOAT16 || t == ND_BFLOAT16 ? ND_FLOAT32 : ND_FLOAT64;
}
static nd_dtype result_dtype(nd_dtype t) { return nd_dtype_is_float(t) ? t : ND_FLOAT64; }

/* nq values q (already in [0, 1]; one ignored value for the medians) along
 * axis; `prepend`: the q axis comes first (an array of q), else it is
 * dropped (one q). */
static nd_array *order_stat(const char *fn, nd_lib_quantile_mode mode, nd_array *a, int64_t nq, const double *q,
                            int prepend, int axis) {
    nd_array *x = a, *held[6] = {0}, *result = NULL;
    int n_held = 0, ax = 0;
    if (axis == ND_ALL_AXES) {
        x = held[n_held++] = nd_fe_flat(fn, a);
        if (!x) return NULL;
    } else if (nd_fe_axis(fn, axis, a->ndim, &ax)) {
        return NULL;
    }
    int median = mode == ND_MEDIAN || mode == ND_NANMEDIAN;
    if (!median && x->shape[ax] == 0) {
        nd_error_set(ND_ERR_SHAPE, "%s: the axis has length 0: there is no quantile of no values (NumPy raises "
                     "IndexError; nd_median gives NaN)", fn);
        goto done;
    }
    int n = x->ndim, to_last[ND_MAX_DIMS], back[ND_MAX_DIMS];
    nd_fe_axis_last_maps(n, ax, to_last, back);
    nd_dtype cd = compute_dtype(a->dtype), rd = result_dtype(a->dtype);
    nd_array *moved = held[n_held++] = nd_fe_with_axes(x, n, to_last);
    nd_array *conv = moved ? (held[n_held++] = nd_fe_astype(fn, moved, cd)) : NULL;
    nd_array *sorted = conv ? (held[n_held++] = nd_fe_sort_last(fn, conv, ND_SORT_VALUES)) : NULL;
    if (!sorted) goto done;
    void *qdata = NULL;
    nd_array *qa = held[n_held++] = nd_fe_host_array(fn, ND_FLOAT64, 1, &nq, &qdata);
    if (!qa) goto done;
    memcpy(qdata, q, (size_t)nq * sizeof *q);
    int64_t shape[ND_MAX_DIMS];
    memcpy(shape, sorted->shape, sizeof(int64_t) * (size_t)n);
    shape[n - 1] = nq;
    nd_lib_args args = {{{.i = mode}}};
    nd_kernel_output out = {NULL, cd, n, shape};
    nd_array *in[2] = {sorted, qa}, *qs = NULL;
    if (nd_fe_lib_call(fn, ND_LIB_QUANTILE, &args, 2, in, 1, &out, &qs) != ND_OK) goto done;
    held[n_held++] = qs;
    if (prepend) { /* (rest..., nq) -> (nq, rest...) */
        int first[ND_MAX_DIMS];
        first[0] = n - 1;
        for (int k = 1; k < n; k++) first[k] = k - 1;
        result = nd_fe_with_axes(qs, n, first);
    } else { /* drop the length-1 q axis */
        result = nd_fe_view(qs, n - 1, qs->shape, qs->strides, qs->offset);
    }
    if (result && rd != cd) {
        nd_array *r = nd_fe_astype(fn, result, rd);
        nd_fe_release(result);
        result = r;
    }
done:
    for (int i = 0; i < n_held; i++)
        if (held[i]) nd_fe_release(held[i]);
    return result;
}

/* Checks a, q (scaled by 1/scale into [0, 1]) and runs order_stat. */
static nd_array *quantiles(const char *fn, nd_lib_quantile_mode mode, nd_array *a, int64_t nq, const double *q,
                           int prepend, double scale, int axis) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (!q || nq < 1) {
        nd_error_set(ND_ERR_ARG, "%s: %s with nq = %lld (pass nq >= 1 values)", fn, q ? "q" : "q is NULL",
                     (long long)nq);
        return NULL;
    }
    double *u = nd_malloc((size_t)nq * sizeof *u);
    if (!u) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for %lld q values", fn, (long long)nq);
        return NULL;
    }
    for (int64_t i = 0; i < nq; i++) {
        if (!(q[i] >= 0 && q[i] <= scale)) {
            nd_error_set(ND_ERR_ARG, "%s: q[%lld] = %g is outside [0, %g] (NumPy: %s must be in the range [0, %g])",
                         fn, (long long)i, q[i], scale, scale == 1 ? "quantiles" : "percentiles", scale);
            free(u);
            return NULL;
        }
        u[i] = scale == 1 ? q[i] : q[i] / scale;
    }
    nd_array *r = order_stat(fn, mode, a, nq, u, prepend, axis);
    free(u);
    return r;
}

static nd_array *median(const char *fn, nd_lib_quantile_mode mode, nd_array *a, int axis) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    const double half = 0.5;
    return order_stat(fn, mode, a, 1, &half, 0, axis);
}

nd_array *nd_median(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(median("nd_median", ND_MEDIAN, a, axis));
}

nd_array *nd_nanmedian(nd_array *a, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(median("nd_nanmedian", ND_NANMEDIAN, a, axis));
}

nd_array *nd_quantile(nd_array *a, double q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_quantile", ND_QUANTILE, a, 1, &q, 0, 1, axis));
}

nd_array *nd_nanquantile(nd_array *a, double q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_nanquantile", ND_NANQUANTILE, a, 1, &q, 0, 1, axis));
}

nd_array *nd_percentile(nd_array *a, double q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_percentile", ND_QUANTILE, a, 1, &q, 0, 100, axis));
}

nd_array *nd_nanpercentile(nd_array *a, double q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_nanpercentile", ND_NANQUANTILE, a, 1, &q, 0, 100, axis));
}

nd_array *nd_quantiles(nd_array *a, int64_t nq, const double *q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_quantiles", ND_QUANTILE, a, nq, q, 1, 1, axis));
}

nd_array *nd_nanquantiles(nd_array *a, int64_t nq, const double *q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_nanquantiles", ND_NANQUANTILE, a, nq, q, 1, 1, axis));
}

nd_array *nd_percentiles(nd_array *a, int64_t nq, const double *q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_percentiles", ND_QUANTILE, a, nq, q, 1, 100, axis));
}

nd_array *nd_nanpercentiles(nd_array *a, int64_t nq, const double *q, int axis) {
    ND_API_GUARD();
    return nd_runtime_track(quantiles("nd_nanpercentiles", ND_NANQUANTILE, a, nq, q, 1, 100, axis));
}
