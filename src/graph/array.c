#include "graph/array.h"

#include <stdlib.h>
#include <string.h>

#include "common/api_guard.h"
#include "common/callsite.h"
#include "common/error.h"
#include "common/freelist.h"

/* Every handle is made and freed under the API lock (by a public call, or
 * by a thread's scope closing), so the list needs no lock of its own. */
nd_array *nd_array_live_head;

nd_array *nd_array_live_first(void) { return nd_array_live_head; }

int64_t nd_array_live_count(void) {
    int64_t n = 0;
    for (const nd_array *a = nd_array_live_head; a; a = a->live_next) n++;
    return n;
}

void nd_array_unlist_all(void) {
    for (nd_array *a = nd_array_live_head, *next; a; a = next) {
        next = a->live_next;
        a->live_prev = a->live_next = NULL;
        a->listed = 0;
    }
    nd_array_live_head = NULL;
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

nd_array *nd_array_oom(void) {
    nd_error_set(ND_ERR_OOM, "out of host memory for an array handle");
    return NULL;
}

nd_array *nd_array_new_view(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset) {
    nd_array *a = nd_array_handle_new(buf, dtype, ndim, offset);
    if (!a) return NULL;
    for (int i = 0; i < ndim; i++) {
        a->shape[i] = shape[i];
        a->strides[i] = strides[i];
    }
    return a;
}

void nd_array_retire(nd_array *a) {
    a->state = ND_ARRAY_FREED;
    if (a->listed) {
        if (a->live_prev) a->live_prev->live_next = a->live_next;
        else nd_array_live_head = a->live_next;
        if (a->live_next) a->live_next->live_prev = a->live_prev;
        a->listed = 0;
    }
    a->buf = NULL;
    nd_freelist_give_delayed(nd_buffer_hooks_arrays(), a);
}

void nd_array_destroy(nd_array *a) {
    if (!a) return;
    nd_buffer *b = a->buf;
    b->handles--;
    nd_array_retire(a);
    nd_buffer_unref(b);
}
