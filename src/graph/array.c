#include "graph/array.h"

#include <stdlib.h>
#include <string.h>

#include "common/api_guard.h"
#include "common/callsite.h"
#include "common/error.h"
#include "common/freelist.h"

/* Every handle is made and freed under the API lock (by a public call, or
 * by a thread's scope closing), so the list needs no lock of its own. */
static nd_array *live_head;

nd_array *nd_array_live_first(void) { return live_head; }

void nd_array_unlist_all(void) {
    for (nd_array *a = live_head, *next; a; a = next) {
        next = a->live_next;
        a->live_prev = a->live_next = NULL;
        a->listed = 0;
    }
    live_head = NULL;
}

int64_t nd_shape_size(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

void nd_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
}

int nd_array_is_contiguous(const nd_array *a) {
    int64_t s = 1;
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] != 1 && a->strides[i] != s) return 0;
        s *= a->shape[i];
    }
    return 1;
}

/* A handle of buf with every field but its shape and strides set. */
static nd_array *handle_new(nd_buffer *buf, nd_dtype dtype, int ndim, int64_t offset) {
    nd_array *a = nd_freelist_take(nd_buffer_hooks_arrays(), sizeof *a);
    if (!a) {
        nd_error_set(ND_ERR_OOM, "out of host memory for an array handle");
        return NULL;
    }
    a->refs = 1;
    a->buf = buf;
    a->dtype = dtype;
    a->ndim = (uint8_t)ndim;
    a->weak = ND_STRONG;
    a->readonly = 0;
    a->state = ND_ARRAY_LIVE;
    a->scope_slot = -1;
    a->scope_owner = NULL;
    a->origin = nd_site_label(nd_api_current());
    a->listed = 1;
    a->live_prev = NULL;
    a->live_next = live_head;
    if (live_head) live_head->live_prev = a;
    live_head = a;
    a->offset = offset;
    a->weak_value.u = 0;
    /* The unused axes read as extent 1, stride 0. Whole arrays of fixed
     * size are a few vector stores; the loop from ndim became a memset
     * call on every handle made. */
    static const int64_t ones[ND_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    _Static_assert(ND_MAX_DIMS == 8, "ones lists one 1 per axis");
    memcpy(a->shape, ones, sizeof a->shape);
    memset(a->strides, 0, sizeof a->strides);
    nd_buffer_ref(buf);
    buf->handles++;
    return a;
}

nd_array *nd_array_new_view(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset) {
    nd_array *a = handle_new(buf, dtype, ndim, offset);
    if (!a) return NULL;
    for (int i = 0; i < ndim; i++) {
        a->shape[i] = shape[i];
        a->strides[i] = strides[i];
    }
    return a;
}

nd_array *nd_array_new_contiguous(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape) {
    /* Every op's result: the strides are written into the handle, not
     * copied from a temporary. */
    nd_array *a = handle_new(buf, dtype, ndim, 0);
    if (!a) return NULL;
    for (int i = 0; i < ndim; i++) a->shape[i] = shape[i];
    nd_contiguous_strides(ndim, shape, a->strides);
    return a;
}

void nd_array_destroy(nd_array *a) {
    if (!a) return;
    a->state = ND_ARRAY_FREED;
    if (a->listed) {
        if (a->live_prev) a->live_prev->live_next = a->live_next;
        else live_head = a->live_next;
        if (a->live_next) a->live_next->live_prev = a->live_prev;
        a->listed = 0;
    }
    a->buf->handles--;
    nd_buffer_unref(a->buf);
    a->buf = NULL;
    nd_freelist_give_delayed(nd_buffer_hooks_arrays(), a);
}
