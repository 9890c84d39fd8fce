/* The public reductions (include/nd/reductions.h): argument checks, the axis
 * argument turned into a mask, then one reducer of reduction.c or
 * reduction_nan.c. The one-axis, _axes and _keepdims forms of a reduction
 * share its reducer, so they cannot disagree. */
#include "frontend/reduction.h"

/* Checks a and the axis argument: one != 0: `n` is one axis (or
 * ND_ALL_AXES) and axes is unused; else n and axes are an axes tuple
 * (reductions.h). Returns a as a strong array (a weak scalar, nd_scalar,
 * reduces as the 0-d array it stands for), a reference to release. */
static nd_array *prepare(const char *fn, nd_array *a, int one, int n, const int *axes,
                         uint32_t *mask) {
    if (nd_fe_arg(fn, "a", a) || nd_runtime_ensure() != ND_OK) return NULL;
    if (one ? nd_fe_axis_mask(fn, a->ndim, n, mask)
            : nd_fe_axes_mask(fn, a->ndim, n, axes, mask))
        return NULL;
    return nd_fe_strong(fn, a);
}

static nd_array *run(const char *fn, nd_fe_reducer f, nd_array *a, int one, int n,
                     const int *axes, int keepdims, double ddof) {
    uint32_t mask;
    nd_array *s = prepare(fn, a, one, n, axes, &mask);
    if (!s) return NULL;
    nd_array *r = f(fn, s, mask, keepdims, ddof);
    nd_fe_release(s);
    return nd_runtime_track(r);
}

#define ONE_AXIS(name, f)                                                                  \
    nd_array *name(nd_array *a, int axis) {                                                \
        ND_API_GUARD();                                                                    \
        return run(#name, f, a, 1, axis, NULL, 0, 0.0);                                    \
    }
#define AXES(name, f)                                                                      \
    nd_array *name(nd_array *a, int naxes, const int *axes, bool keepdims) {               \
        ND_API_GUARD();                                                                    \
        return run(#name, f, a, 0, naxes, axes, keepdims, 0.0);                            \
    }
#define KEEPDIMS(name, f)                                                                  \
    nd_array *name(nd_array *a, int axis, bool keepdims) {                                 \
        ND_API_GUARD();                                                                    \
        return run(#name, f, a, 1, axis, NULL, keepdims, 0.0);                             \
    }
#define DDOF(name, f)                                                                      \
    nd_array *name(nd_array *a, int axis, double ddof) {                                   \
        ND_API_GUARD();                                                                    \
        return run(#name, f, a, 1, axis, NULL, 0, ddof);                                   \
    }
#define AXES_DDOF(name, f)                                                                 \
    nd_array *name(nd_array *a, int naxes, const int *axes, double ddof, bool keepdims) {  \
        ND_API_GUARD();                                                                    \
        return run(#name, f, a, 0, naxes, axes, keepdims, ddof);                           \
    }

ONE_AXIS(nd_sum, nd_fe_sum_r)
ONE_AXIS(nd_prod, nd_fe_prod_r)
ONE_AXIS(nd_mean, nd_fe_mean_r)
ONE_AXIS(nd_min, nd_fe_min_r)
ONE_AXIS(nd_max, nd_fe_max_r)
ONE_AXIS(nd_any, nd_fe_any_r)
ONE_AXIS(nd_all, nd_fe_all_r)
ONE_AXIS(nd_argmin, nd_fe_argmin_r)
ONE_AXIS(nd_argmax, nd_fe_argmax_r)
ONE_AXIS(nd_var, nd_fe_var_r)
ONE_AXIS(nd_std, nd_fe_std_r)
ONE_AXIS(nd_nansum, nd_fe_nansum_r)
ONE_AXIS(nd_nanprod, nd_fe_nanprod_r)
ONE_AXIS(nd_nanmean, nd_fe_nanmean_r)
ONE_AXIS(nd_nanmin, nd_fe_nanmin_r)
ONE_AXIS(nd_nanmax, nd_fe_nanmax_r)
ONE_AXIS(nd_nanvar, nd_fe_nanvar_r)
ONE_AXIS(nd_nanstd, nd_fe_nanstd_r)
ONE_AXIS(nd_nanargmin, nd_fe_nanargmin_r)
ONE_AXIS(nd_nanargmax, nd_fe_nanargmax_r)
ONE_AXIS(nd_count_nonzero, nd_fe_count_nonzero_r)
ONE_AXIS(nd_ptp, nd_fe_ptp_r)

AXES(nd_sum_axes, nd_fe_sum_r)
AXES(nd_prod_axes, nd_fe_prod_r)
AXES(nd_mean_axes, nd_fe_mean_r)
AXES(nd_min_axes, nd_fe_min_r)
AXES(nd_max_axes, nd_fe_max_r)
AXES(nd_any_axes, nd_fe_any_r)
AXES(nd_all_axes, nd_fe_all_r)
AXES(nd_nansum_axes, nd_fe_nansum_r)
AXES(nd_nanprod_axes, nd_fe_nanprod_r)
AXES(nd_nanmean_axes, nd_fe_nanmean_r)
AXES(nd_nanmin_axes, nd_fe_nanmin_r)
AXES(nd_nanmax_axes, nd_fe_nanmax_r)
AXES(nd_count_nonzero_axes, nd_fe_count_nonzero_r)
AXES(nd_ptp_axes, nd_fe_ptp_r)

KEEPDIMS(nd_argmin_keepdims, nd_fe_argmin_r)
KEEPDIMS(nd_argmax_keepdims, nd_fe_argmax_r)
KEEPDIMS(nd_nanargmin_keepdims, nd_fe_nanargmin_r)
KEEPDIMS(nd_nanargmax_keepdims, nd_fe_nanargmax_r)

DDOF(nd_var_ddof, nd_fe_var_r)
DDOF(nd_std_ddof, nd_fe_std_r)
DDOF(nd_nanvar_ddof, nd_fe_nanvar_r)
DDOF(nd_nanstd_ddof, nd_fe_nanstd_r)

AXES_DDOF(nd_var_axes, nd_fe_var_r)
AXES_DDOF(nd_std_axes, nd_fe_std_r)
AXES_DDOF(nd_nanvar_axes, nd_fe_nanvar_r)
AXES_DDOF(nd_nanstd_axes, nd_fe_nanstd_r)

/* np.average: weights are checked in nd_fe_average. */
static nd_array *average(const char *fn, nd_array *a, int one, int n, const int *axes,
                         nd_array *weights, int keepdims) {
    uint32_t mask;
    nd_array *s = prepare(fn, a, one, n, axes, &mask);
    if (!s) return NULL;
    nd_array *r = weights && nd_fe_arg(fn, "weights", weights)
                      ? NULL
                      : nd_fe_average(fn, s, mask, weights, keepdims);
    nd_fe_release(s);
    return nd_runtime_track(r);
}

nd_array *nd_average(nd_array *a, int axis, nd_array *weights) {
    ND_API_GUARD();
    return average("nd_average", a, 1, axis, NULL, weights, 0);
}

nd_array *nd_average_axes(nd_array *a, int naxes, const int *axes, nd_array *weights,
                          bool keepdims) {
    ND_API_GUARD();
    return average("nd_average_axes", a, 0, naxes, axes, weights, keepdims);
}
