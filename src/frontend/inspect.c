/* Inspection: plain field reads, valid on any live handle (no runtime
 * needed), also on one that outlived nd_shutdown. Under the API lock all
 * the same: another thread may be freeing a handle. A scope replay's
 * placeholders hold their arrays' shape, dtype and (contiguous) strides,
 * so these reads go on with the replay (scope_replay.h). */
#include "frontend/frontend.h"

/* Whether a can be read: NULL quietly gives the documented value; a freed
 * handle gives it with an error. */
static int readable(const char *fn, const nd_array *a) {
    return a && nd_fe_arg_handle(fn, "a", a) == 0;
}

int nd_ndim(const nd_array *a) {
    ND_API_GUARD_REPLAY(__func__);
    return readable(__func__, a) ? a->ndim : -1;
}

const int64_t *nd_shape(const nd_array *a) {
    ND_API_GUARD_REPLAY(__func__);
    return readable(__func__, a) ? a->shape : NULL;
}

int64_t nd_size(const nd_array *a) {
    ND_API_GUARD_REPLAY(__func__);
    return readable(__func__, a) ? nd_shape_size(a->ndim, a->shape) : -1;
}

nd_dtype nd_dtype_of(const nd_array *a) {
    ND_API_GUARD_REPLAY(__func__);
    return readable(__func__, a) ? a->dtype : ND_NUM_DTYPES;
}

const int64_t *nd_strides(const nd_array *a) {
    ND_API_GUARD_REPLAY(__func__);
    return readable(__func__, a) ? a->strides : NULL;
}
