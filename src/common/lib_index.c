/* Names and messages of the gather and scatter routines (common/lib_calls.h):
 * shared by the backends, which report an index outside its axis. */
#include "common/error.h"
#include "common/lib_calls.h"

static const char *const index_fn_names[ND_INDEX_FN_COUNT] = {
    [ND_INDEX_FN_TAKE] = "nd_take",
    [ND_INDEX_FN_TAKE_ALONG_AXIS] = "nd_take_along_axis",
    [ND_INDEX_FN_INDEX] = "nd_index",
    [ND_INDEX_FN_CHOOSE] = "nd_choose",
    [ND_INDEX_FN_COMPRESS] = "nd_compress",
    [ND_INDEX_FN_EXTRACT] = "nd_extract",
    [ND_INDEX_FN_PUT] = "nd_put",
    [ND_INDEX_FN_PUT_ALONG_AXIS] = "nd_put_along_axis",
    [ND_INDEX_FN_INDEX_ASSIGN] = "nd_index_assign",
    [ND_INDEX_FN_ADD_AT] = "nd_add_at",
    [ND_INDEX_FN_MASK_SELECT] = "nd_mask_select",
    [ND_INDEX_FN_ADD_AT_INDEX] = "nd_add_at_index",
};

const char *nd_lib_index_fn_name(int fn) {
    fn &= ND_INDEX_FN_MASK;
    return fn < ND_INDEX_FN_COUNT && index_fn_names[fn] ? index_fn_names[fn] : "nd_take";
}

int nd_lib_index_error(int64_t fn_flags, int64_t axes, int k, int64_t index, int64_t size) {
    const char *fn = nd_lib_index_fn_name((int)fn_flags);
    if ((fn_flags & ND_INDEX_FN_MASK) == ND_INDEX_FN_CHOOSE)
        return nd_error_set(ND_ERR_INDEX, "%s: invalid entry %lld in the choice array: there are %lld choices (use 0..%lld)",
                            fn, (long long)index, (long long)size, (long long)size - 1);
    int axis = (int)((axes >> (4 * k)) & 15);
    return nd_error_set(ND_ERR_INDEX, "%s: index %lld is out of bounds for axis %d with size %lld", fn,
                        (long long)index, axis, (long long)size);
}
