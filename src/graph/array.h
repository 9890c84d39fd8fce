/* nd_array: a reference-counted view (dtype, shape, strides, offset) of a
 * buffer. Weak scalars (nd_scalar/nd_scalar_int) carry their value so type
 * promotion (NEP 50) and constant fusion can use it without a buffer read. */
#ifndef ND_GRAPH_ARRAY_H
#define ND_GRAPH_ARRAY_H

#include <string.h>

#include "common/callsite.h"
#include "common/dtype.h"
#include "graph/buffer.h"

typedef enum { ND_STRONG = 0, ND_WEAK_FLOAT, ND_WEAK_INT } nd_weakness;

/* Why an array refuses writes (views inherit it from their base). */
typedef enum {
    ND_WRITABLE = 0,
    ND_READONLY_BROADCAST, /* nd_broadcast_to: elements may alias */
    ND_READONLY_WEAK,      /* a weak scalar or a view of one: ops read its value
                              from the handle, so a write to its buffer would
                              make nd_to_host disagree with every op */
    ND_READONLY_IMPORTED,  /* a DLPack tensor its producer flagged read-only */
    ND_READONLY_IMAG_OF_REAL /* nd_imag of a real array: zeros that belong to
                                no array (NumPy's read-only imag) */
} nd_readonly;

/* A handle's state byte: set live when it is made, freed when its last
 * reference goes. A freed handle waits in a quarantine before its memory
 * is reused (nd_freelist's delay), so a second nd_free, or an op on it,
 * soon after finds ND_ARRAY_FREED and reports it instead of corrupting the
 * free list. Unlikely byte values, so stray memory rarely looks live. */
enum { ND_ARRAY_LIVE = 0xA5, ND_ARRAY_FREED = 0xF7 };

struct nd_scope_stack; /* frontend/scope.c: a thread's scopes */

/* An array's dtype is its buffer's, or (nd_real/nd_imag of a complex
 * array) the dtype of the buffer's parts: a component view. offset and
 * strides always count elements of the array's own dtype, so a component
 * view addresses the buffer as pairs of parts (docs/internals.md,
 * "Component views"). */
struct nd_array {
    int64_t refs;
    nd_buffer *buf;
    nd_dtype dtype;
    uint8_t ndim;
    uint8_t weak;     /* nd_weakness */
    uint8_t readonly; /* nd_readonly */
    uint8_t state;    /* ND_ARRAY_LIVE or ND_ARRAY_FREED */
    int32_t scope_slot; /* position in its thread's scope stack, -1 if none,
                           ND_SCOPE_OVERFLOW on the stack's overflow list */
    uint8_t listed;     /* on the list of live handles (nd_array_live_first) */
    uint8_t pooled;     /* a replayed scope's placeholder that its call site keeps
                           for reuse (frontend/scope_replay.c), refs 0 between uses */
    struct nd_scope_stack *scope_owner; /* that stack (valid while scope_slot >= 0) */
    /* On the overflow list (frontend/scope.c): its neighbours there and the
     * depth of the scope that owns it. */
    struct nd_array *scope_prev, *scope_next;
    int32_t scope_depth;
    int64_t offset;   /* elements from the buffer start */
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS]; /* in elements; 0 on broadcast axes */
    nd_scalar_bits weak_value;    /* for weak scalars: f or i per `weak` */
    /* The public call that made it ("nd_add", or "nd_add (heat.c:42)" with
     * call sites; NULL if none), for nd_shutdown's report of handles still
     * alive; and that list (every handle made since nd_init). */
    const char *origin;
    struct nd_array *live_prev, *live_next;
};

/* A view of `buf` (takes a buffer reference and a handle). refs = 1. */
nd_array *nd_array_new_view(nd_buffer *buf, nd_dtype dtype, int ndim, const int64_t *shape,
                            const int64_t *strides, int64_t offset);
/* The handles alive, newest first (array.c; every handle is made and
 * freed under the API lock), read by the inline constructor below. */
extern nd_array *nd_array_live_head __attribute__((visibility("hidden")));
/* A handle could not be allocated: NULL + ND_ERR_OOM. */
nd_array *nd_array_oom(void) __attribute__((visibility("hidden")));

/* Puts a (listed = 0) handle on the list of live handles. */
static inline void nd_array_list(nd_array *a) {
    a->listed = 1;
    a->live_prev = NULL;
    a->live_next = nd_array_live_head;
    if (nd_array_live_head) nd_array_live_head->live_prev = a;
    nd_array_live_head = a;
}

/* A handle of buf with every field but its shape and strides set. */
static inline nd_array *nd_array_handle_new(nd_buffer *buf, nd_dtype dtype, int ndim,
                                            int64_t offset) {
    nd_array *a = nd_freelist_take(nd_buffer_hooks_arrays(), sizeof *a);
    if (__builtin_expect(!a, 0)) return nd_array_oom();
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
    a->pooled = 0;
    a->live_prev = NULL;
    nd_array *head = nd_array_live_head;
    a->live_next = head;
    if (head) head->live_prev = a;
    nd_array_live_head = a;
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

/* A contiguous row-major view of all of `buf`. Inline: every op's result
 * is one. */
static inline nd_array *nd_array_new_contiguous(nd_buffer *buf, nd_dtype dtype, int ndim,
                                                const int64_t *shape) {
    nd_array *a = nd_array_handle_new(buf, dtype, ndim, 0);
    if (!a) return NULL;
    /* The extents and strides written into the handle in one pass, last
     * axis first. */
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        a->shape[i] = shape[i];
        a->strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
    return a;
}
/* Releases handle + buffer reference and the struct (called when refs = 0). */
void nd_array_destroy(nd_array *a);
/* The handle goes (off the live list, to the free list) but its buffer
 * reference and handle count are passed on to another handle: the
 * caller's (frontend/scope_replay.c: a placeholder becoming the array). */
void nd_array_retire(nd_array *a);

/* The handles alive, newest first (next: a->live_next); nd_shutdown
 * reports them, then nd_array_unlist_all empties the list (handles that
 * outlive the runtime are no longer on it). */
nd_array *nd_array_live_first(void);
/* How many handles are on that list (nd_stats.handles_alive). */
int64_t nd_array_live_count(void);
void nd_array_unlist_all(void);

int64_t nd_shape_size(int ndim, const int64_t *shape);
void nd_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
int nd_array_is_contiguous(const nd_array *a);

#endif
