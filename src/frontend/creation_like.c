/* empty_like, zeros_like, ones_like, full_like: a's dtype and shape, a new
 * C-contiguous array (the layout of a view or a broadcast is not kept: nd's
 * arrays are row-major, and the values are the same). */
#include "frontend/frontend.h"

static int like_arg(const char *fn, nd_array *a) {
    if (nd_fe_arg(fn, "a", a)) return -1;
    return nd_runtime_ensure() == ND_OK ? 0 : -1;
}

static nd_array *full_like(const char *fn, nd_array *a, double v) {
    if (like_arg(fn, a)) return NULL;
    if (nd_fe_value_fits(fn, "value", v, a->dtype) != ND_OK) return NULL;
    return nd_fe_full(fn, a->dtype, a->ndim, a->shape, nd_fe_double_bits(v, a->dtype));
}

nd_array *nd_empty_like(nd_array *a) {
    ND_API_GUARD();
    if (like_arg("nd_empty_like", a)) return NULL;
    return nd_runtime_track(nd_fe_empty("nd_empty_like", a->dtype, a->ndim, a->shape));
}

nd_array *nd_zeros_like(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(full_like("nd_zeros_like", a, 0.0));
}

nd_array *nd_ones_like(nd_array *a) {
    ND_API_GUARD();
    return nd_runtime_track(full_like("nd_ones_like", a, 1.0));
}

nd_array *nd_full_like(nd_array *a, double value) {
    ND_API_GUARD();
    return nd_runtime_track(full_like("nd_full_like", a, value));
}
